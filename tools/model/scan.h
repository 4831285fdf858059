/*
 * tools/model/scan.h — a look at the inputs before the real pass: which event kinds
 * they hold, the wall-clock span of their samples (to place --from +10s or
 * --to -30s), their live snapshots (kind `live`, docs/profiles.md), and the lock
 * waits written while in progress (waits.h).
 *
 * A live snapshot is the set of still-live sampled objects the agent writes at a
 * flush: every sample of it carries the same monotonic time, and two GAUGE
 * records at that time, "live.objects" and "live.bytes", mark it even when it is
 * empty. A snapshot is therefore identified by (recording, monotonic time). The
 * scan finds snapshots from both the gauges and the samples, so one whose
 * gauges were lost to damage is still found, and it counts the samples it saw
 * per snapshot, so a snapshot whose samples were lost can be told (its gauge
 * says more objects than the file holds).
 *
 * Memory: the recordings' keys and one entry per snapshot, never per sample.
 * Not thread-safe. Allocation failure exits (as everywhere in the tool).
 */
#ifndef RINGPROF_TOOLS_SCAN_H
#define RINGPROF_TOOLS_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"
#include "stream.h"
#include "waits.h"


struct rp_snapshot {
    uint32_t rec;                 /* index into rp_scan.recs                     */
    uint64_t mono;                /* the snapshot's instant, monotonic ns        */
    uint64_t wall;                /* the same as CLOCK_REALTIME ns; 0: unknown   */
    uint64_t gauge_objects;       /* what the live.* gauges say (valid with      */
    uint64_t gauge_bytes;         /* the matching bit of `gauges`)               */
    unsigned gauges;              /* 1: live.objects seen, 2: live.bytes seen    */
    uint64_t samples, bytes;      /* live samples found at this instant, their   */
                                  /* summed weight                               */
    uint64_t old_samples, old_bytes; /* of them, those that survived a GC         */
                                  /* (age_gcs >= 1): the heap the program keeps  */
    int aged;                     /* the live kind has age_gcs: old_* are known  */
};

struct rp_scan {
    uint64_t first, last;         /* wall ns of the earliest and latest sample   */
                                  /* (RP_SCAN_RANGE); 0: none                    */
    char *kind;                   /* the first kind named in the inputs          */
    int has_cpu, has_alloc;
    size_t opened;                /* files whose header could be read            */
    char **recs;                  /* recording keys (rp_recording_key): the      */
    size_t nrecs;                 /* stream's, first appearance first            */
    struct rp_stream st;          /* the chunk being read                        */
    /* RP_SCAN_SNAPSHOTS: sorted by (rec, mono), one entry each, after
     * rp_scan_finish. */
    struct rp_snapshot *snaps;
    size_t nsnaps, cap;
    /* RP_SCAN_WAITS: the lock waits that have in-progress records (waits.h). */
    struct rp_waits waits;
};

enum {
    RP_SCAN_KINDS     = 1,        /* kind names: the first segment is enough     */
    RP_SCAN_RANGE     = 2,        /* first/last sample: reads every event        */
    RP_SCAN_SNAPSHOTS = 4,        /* live snapshots: reads every event           */
    RP_SCAN_WAITS     = 8         /* lock waits in progress: reads every event   */
};

/* Read `path` for what `what` asks (RP_SCAN_*). An unreadable file is skipped
 * silently: the real pass reports it. */
void rp_scan_file(struct rp_scan *sc, const char *path, unsigned what);

/* Sort and merge the snapshots and waits found. Call once after the last
 * rp_scan_file. */
void rp_scan_finish(struct rp_scan *sc);
void rp_scan_free(struct rp_scan *sc);

/* The index of recording `key` in sc->recs, or SIZE_MAX. */
size_t rp_scan_rec(const struct rp_scan *sc, const char *key);

/* For rp_prof_options.waiting, with the scan (RP_SCAN_WAITS, finished) as `arg`:
 * whether the in-progress record (`start`, `weight`) of thread `os_tid` in
 * recording `recording` is the one that stands for its wait (rp_waits_take). */
int rp_scan_wait_keep(void *arg, const char *recording, uint64_t os_tid, uint64_t start,
                      uint64_t weight);

/*
 * Which snapshot: --snapshot first|last|N|-N. 1 is the first, -1 the last, N the
 * N-th and -N the N-th from the end, counted among the snapshots in the time
 * range. @return 0 and *which, or -1 when `s` is none of these.
 */
int rp_snap_parse(const char *s, long *which);

/*
 * rp_snap_select: for every recording r, chosen[r] = the index in sc->snaps of
 * snapshot `which` among r's snapshots with from <= wall < to (0: unbounded; a
 * snapshot of unknown wall time is always in range), or SIZE_MAX when there is
 * none; in_range[r] = how many of r's snapshots are in the range (either array
 * may be NULL). @return how many recordings have a chosen snapshot.
 */
size_t rp_snap_select(const struct rp_scan *sc, long which, uint64_t from, uint64_t to,
                      size_t *chosen, size_t *in_range);

/* Snapshot s in words. When the live kind has age_gcs, the objects the program
 * keeps first, the rest apart: "2026-11-21T06:02:14.000Z, 9 sampled objects that
 * survived a GC, 4718592 bytes; not yet collected, younger than the last GC: 3,
 * 1572864 bytes" (the samples' figures); without it "2026-11-21T06:02:14.000Z, 12
 * objects sampled, 6291456 bytes" (the gauges' figures when present). 320 bytes
 * always fit. */
void rp_snap_describe(const struct rp_snapshot *s, char *buf, size_t cap);

/* The snapshot a command works on, one per recording, and what to tell the user. */
struct rp_snap_choice {
    const struct rp_scan *sc;
    size_t *chosen;        /* per recording: index into sc->snaps, or SIZE_MAX   */
    size_t *in_range;      /* per recording: its snapshots in the time range     */
    char *note;            /* which snapshot(s), or why there is none             */
    char *warning;         /* NULL, or: a chosen snapshot lost samples to damage  */
};

/*
 * rp_snap_choose: pick snapshot `which` (rp_snap_parse) of every recording among
 * those in [from, to) and describe the choice in c->note: per snapshot its time,
 * objects and bytes, and its place ("the last of 12 in the range"). @return 0,
 * or -1 when no recording has such a snapshot; c->note then says why: the
 * inputs have no snapshot at all (the recording was made without live=on),
 * none in the range, or fewer than `which` asks.
 */
int rp_snap_choose(struct rp_snap_choice *c, const struct rp_scan *sc, long which,
                   uint64_t from, uint64_t to);
void rp_snap_choice_free(struct rp_snap_choice *c);

/* For rp_prof_options.instant, with a chosen rp_snap_choice as `arg`: the time
 * of the chunk's recording's chosen snapshot. */
int rp_snap_instant(void *arg, const char *recording, uint64_t *mono);

#endif
