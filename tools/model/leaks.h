/*
 * tools/model/leaks.h — the model of `ringprof leaks`: the allocation sites whose
 * live sampled bytes grow across a recording's live snapshots, with no output in
 * it (outputs/out_leaks.h prints it).
 *
 * A leak shows as a site (allocation stack and class, or with by_method the
 * allocating method and class) whose objects pile up: snapshot after snapshot,
 * more of them are alive. What must not show:
 *   - garbage not yet collected: young objects come and go with every GC, so
 *     only objects that survived min_gcs GCs are counted;
 *   - sampling noise: a site's live bytes are estimates (a sample stands for
 *     about one sampling interval of bytes), so they jitter from snapshot to
 *     snapshot; a rank test (Mann-Kendall, trend.h) asks whether later
 *     snapshots tend to hold more than earlier ones, whatever the jitter, and
 *     the slope is Theil-Sen's, which outliers do not move;
 *   - slow drift that is real but small: the growth over the recording (slope
 *     times duration) must reach min_growth.
 * A site is growing when the one-sided Mann-Kendall p-value is under alpha, the
 * slope is positive and the growth reaches min_growth.
 *
 * The passes: rp_leaks_pick chooses the recording and its snapshots from the
 * look-ahead (scan.h) and bins them; rp_leaks_live_pass sets the options of a
 * profile of kind live over all of them, built by the caller only to intern
 * the stacks, whose per-sample callback adds each sample's bytes to its site's
 * series in the bin of its snapshot; rp_leaks_analyse tests every site and
 * ranks them. Snapshots are binned to at most RP_TREND_MAX_POINTS points (each
 * bin the mean of its snapshots; a site absent from a snapshot is 0 there), so
 * memory is sites x bins and the O(n^2) tests stay cheap whatever the
 * recording's length. One recording at a time: series of two JVMs do not add up
 * to one. Single-threaded; allocation failure exits (xalloc.h).
 */
#ifndef RINGPROF_TOOLS_LEAKS_H
#define RINGPROF_TOOLS_LEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "profile.h"
#include "scan.h"
#include "trend.h"

enum rp_leak_verdict { RP_LEAK_GROWING, RP_LEAK_NO_TREND, RP_LEAK_SMALL, RP_LEAK_FLAT };

/* The verdicts' names: "growing", "no-trend", "too-small", "flat". */
extern const char *const rp_leak_verdict_names[];

struct rp_leak_site {
    uint32_t leaf;           /* a profile node of the site: its trace            */
    uint32_t method;         /* by_method: the allocating method, else NONE       */
    uint64_t *bins;          /* live bytes summed per bin                         */
    uint64_t first, last;    /* live bytes at the first and last snapshot         */
    uint64_t objs_last;      /* estimated objects at the last snapshot            */
    double slope;            /* Theil-Sen, bytes per second                       */
    double growth;           /* slope x the recording's span of snapshots         */
    struct rp_trend t;
    enum rp_leak_verdict v;
};

/* Set the settings, zero the rest; rp_leaks_free releases it. */
struct rp_leaks {
    /* settings */
    unsigned min_gcs;        /* count objects that survived this many GCs         */
    double alpha;            /* the trend test's significance                     */
    uint64_t min_growth;     /* bytes a growing site must have grown by           */
    int by_method;           /* a site is the allocating method and class         */
    int all;                 /* every site's slope, for a table of them all       */
    /* the recording and its snapshots (rp_leaks_pick) */
    size_t rec;              /* index into the look-ahead's recordings            */
    const char *recording;   /* its key (the look-ahead's)                        */
    size_t *in_range;        /* per recording of the look-ahead: its snapshots    */
    size_t in_range_total;   /* in the range, and their sum                       */
    const struct rp_snapshot **snaps;   /* its snapshots in the range, by time   */
    size_t nsnaps;
    uint32_t *bin_of;        /* per snapshot                                      */
    double *bin_x;           /* per bin: mean seconds after the first snapshot    */
    uint32_t *bin_n;         /* per bin: its snapshots                            */
    size_t nbins;
    double span_s;           /* first to last snapshot                            */
    /* sites: after rp_leaks_analyse, growing first, then by trend */
    struct rp_leak_site *sites;
    size_t nsites, cap;
    struct rp_idmap site_of; /* site key -> index into sites                      */
    size_t growing;
    /* the live pass */
    uint64_t young, kept, off_snapshot;   /* samples: too young, counted, at no  */
                                          /* snapshot instant                    */
    int no_age;              /* the live kind has no age_gcs: nothing filtered   */
    struct rp_profile *p;    /* the live profile (the caller builds it)           */
};

/* Why no trend can be computed (rp_leaks_pick). */
enum rp_leaks_pick {
    RP_LEAKS_PICKED = 0,
    RP_LEAKS_NO_SNAPSHOT,    /* the inputs hold no live snapshot at all           */
    RP_LEAKS_RECORDINGS,     /* several recordings have snapshots in the range    */
    RP_LEAKS_TOO_FEW         /* fewer than 3 in the range                         */
};

/* Choose the recording whose snapshots lie in [from, to) (0: unbounded) among
 * the look-ahead's (RP_SCAN_SNAPSHOTS), and bin them. l->in_range says, per
 * recording, how many; l keeps pointers into sc, which must outlive it.
 * @return RP_LEAKS_PICKED, or why not. */
enum rp_leaks_pick rp_leaks_pick(struct rp_leaks *l, const struct rp_scan *sc,
                                 uint64_t from, uint64_t to);

/* The live pass: l's callback on each sample of the profile built with `po`. */
void rp_leaks_live_pass(struct rp_leaks *l, struct rp_prof_options *po);

/* After the live profile l->p is built: every site tested and the sites ranked,
 * growing first (by slope), then by p-value and slope. @return l->growing. */
size_t rp_leaks_analyse(struct rp_leaks *l);

void rp_leaks_free(struct rp_leaks *l);

#endif
