/*
 * src/core/histogram.h — a lock-free histogram of nanosecond durations.
 *
 * The signal handler records how long each sample took (from its entry to just
 * before the ring push) here, and the flusher reports the median and the 99th
 * percentile of each flush interval as gauges. Buckets are log-linear: exact below
 * 16 ns, then 8 buckets per power of two, so any reported value is within 6.25% of
 * a recorded one (the bucket midpoint is reported) and 312 buckets cover 1 ns to
 * 18 minutes. Recording is two relaxed atomic adds on shared counters: a few
 * nanoseconds, no locks, async-signal-safe. The flusher diffs successive snapshots
 * to get one interval's distribution; a snapshot taken while handlers run may see
 * an add to `count` without its add to `sum` (or the reverse), which only moves a
 * reported figure by one sample.
 */
#ifndef RINGPROF_SRC_HISTOGRAM_H
#define RINGPROF_SRC_HISTOGRAM_H

#include <stdatomic.h>
#include <stdint.h>

#define RP_HIST_SUB_BITS 3
#define RP_HIST_MAX_EXP  40
#define RP_HIST_BUCKETS  (16 + (RP_HIST_MAX_EXP - 4 + 1) * (1 << RP_HIST_SUB_BITS))

struct rp_hist {
    _Atomic uint64_t count[RP_HIST_BUCKETS];
    _Atomic uint64_t sum;              /* ns, all samples                          */
};

/* A plain copy, for the flusher. */
struct rp_hist_snap {
    uint64_t count[RP_HIST_BUCKETS];
    uint64_t sum;
};

/* Record one value. Async-signal-safe, any thread. */
void rp_hist_add(struct rp_hist *h, uint64_t ns);

/* Copy the counters (relaxed loads). Any thread. */
void rp_hist_snapshot(const struct rp_hist *h, struct rp_hist_snap *out);

/* out = a - b, bucket by bucket (b taken earlier than a). */
void rp_hist_delta(const struct rp_hist_snap *a, const struct rp_hist_snap *b,
                   struct rp_hist_snap *out);

/* Total count of a snapshot. */
uint64_t rp_hist_total(const struct rp_hist_snap *s);

/* The value at quantile q (0..1) of a snapshot: the midpoint of the bucket holding
 * it. 0 for an empty snapshot. */
uint64_t rp_hist_quantile(const struct rp_hist_snap *s, double q);

/* Bucket index of a value and the range of a bucket (exposed for the unit test). */
unsigned rp_hist_bucket(uint64_t ns);
void rp_hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);

#endif
