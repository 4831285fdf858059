/*
 * tools/model/heatmap.h — the model behind `ringprof convert --format heatmap`: how
 * many samples of each kind, on which stack, fell into each time bucket of the
 * recording, and the telemetry over the same time.
 *
 * The stacks are the nodes of one calling context tree of every kind, threads
 * merged, with the wall kind's state as a leaf frame (profile.h: all_kinds,
 * state_frames), so a stack is one node id: its leaf. The heatmap keeps, per
 * (kind, bucket, leaf, thread), the samples and their summed weight (rp_hm_add,
 * from the build's on_sample); the thread is the writer's index (a thread is
 * not a level of the tree: the tree of 12 threads doing the same work would be
 * 12 times larger, and the page puts a thread level back when asked). A sample
 * counts in the bucket of its
 * time stamp (CLOCK_REALTIME ns; a chunk without the mapping keeps its own
 * monotonic axis, as everywhere in the tool). Buckets are aligned to the epoch,
 * bucket b covering [b * width, (b + 1) * width).
 *
 * Memory follows distinct (kind, bucket, leaf, thread) entries, never samples,
 * and is bounded: when the entries pass max_entries, or the buckets between the first
 * and the last pass max_buckets, the bucket width steps up the ladder of
 * rp_hm_widths (each a multiple of the one before) and the entries of the
 * buckets that merge are added together. So a long recording gets coarser
 * buckets, never a larger page; what width was chosen and why is in `why`.
 *
 * Telemetry: every reading of the gauges the timeline shows (rp_tl_gauges) is
 * kept per (gauge, recording), and rp_hm_series bins them at the end: a level
 * by the mean of its readings in the bin, a cumulative counter (".total") by its
 * rate over the readings that end in the bin.
 *
 * Not thread-safe; allocation failure exits (xalloc.h).
 */
#ifndef RINGPROF_TOOLS_HEATMAP_H
#define RINGPROF_TOOLS_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

/* Defaults: the finest bucket, and the bounds that make it coarser. A day of
 * eight busy threads at 10 ms fits 2 M entries in buckets of a few seconds;
 * the page then weighs about 10 MB (docs/profiles.md, "heatmap"). */
#define RP_HM_FINEST_NS      20000000ull     /* 20 ms: FlameScope's row        */
#define RP_HM_MAX_ENTRIES    4000000u
#define RP_HM_MAX_BUCKETS    500000u
#define RP_HM_MAX_DENSITY    1000000u        /* per (kind, bucket, thread) alone */
#define RP_HM_MAX_BINS       20000u          /* telemetry bins per series      */

/* The bucket widths, ns, finest first; each divides the next. */
extern const uint64_t rp_hm_widths[];
extern const size_t rp_hm_nwidths;

/* A kind as the heatmap keeps it: events.h's kinds by name, lock.waiting
 * counted as lock (a wait still in progress is a wait). */
struct rp_hm_kind {
    char *name, *unit;
    uint64_t period;
    enum rp_skind skind;
    uint64_t samples, weight;      /* every sample added                            */
};

/* One (kind, bucket, leaf, thread): bucket relative to rp_heatmap.base. */
struct rp_hm_entry {
    uint64_t weight;
    uint32_t leaf;
    int32_t bucket;
    uint32_t samples;
    uint32_t thread;
    uint32_t kind;
};

struct rp_hm_reading {
    uint64_t t, v;                 /* wall ns, raw value                            */
};

struct rp_hm_series {
    int gauge;                     /* index into rp_tl_gauges                       */
    uint32_t rec;                  /* recording index (the stream's)                */
    struct rp_hm_reading *r;
    size_t n, cap;
};

struct rp_heatmap {
    uint64_t width;                /* bucket width, ns                              */
    int64_t base;                  /* absolute bucket (time / width) of relative 0  */
    int have_base;
    int32_t lo, hi;                /* relative buckets seen, [lo, hi]               */
    size_t max_entries, max_buckets;
    struct rp_hm_kind *kinds;      size_t nkinds;
    struct rp_hm_entry *e;         size_t n, cap;
    uint32_t *slot;                size_t nslots;   /* hash: entry index + 1, 0 free */
    uint32_t last;                 /* the entry added to last, + 1; 0: none        */
    struct rp_hm_series *series;   size_t nseries;
    uint64_t coarsened;            /* how many times the width stepped up           */
    char why[256];                 /* the width chosen, in words                    */
};

/* Begin with the finest width `finest_ns` (0: RP_HM_FINEST_NS, rounded up to a
 * width of the ladder) and the bounds (0: the defaults). */
void rp_hm_init(struct rp_heatmap *h, uint64_t finest_ns, size_t max_entries,
                size_t max_buckets);
void rp_hm_free(struct rp_heatmap *h);

/* The index of kind `name` (created on first sight), or -1 for a kind the
 * heatmap does not show (live: a snapshot is an instant, not a rate). */
int rp_hm_kind(struct rp_heatmap *h, const char *name, const char *unit, uint64_t period);

/* One sample: kind index, wall ns, its leaf node, its thread (the caller's
 * index), its weight. */
void rp_hm_add(struct rp_heatmap *h, int kind, uint64_t t, uint32_t leaf, uint32_t thread,
               uint64_t weight);

/* One gauge reading of recording `rec`; gauges the timeline does not show are
 * ignored. */
void rp_hm_gauge(struct rp_heatmap *h, uint32_t rec, const char *name, uint64_t t,
                 uint64_t v);

/* Sort the entries by (kind, bucket, leaf, thread) and each series by time, and set
 * `why`. Call once, after the last add. */
void rp_hm_finish(struct rp_heatmap *h);

/*
 * rp_hm_bin: series s in `nbins` bins of `bin_ns` from `t0` (wall ns): out[i] is
 * the bin's value in the gauge's unit (rp_tl_gauges scale), NAN when the bin
 * has no reading (a level) or no interval ending in it (a rate). After finish.
 */
void rp_hm_bin(const struct rp_hm_series *s, uint64_t t0, uint64_t bin_ns, size_t nbins,
               double *out);

#endif
