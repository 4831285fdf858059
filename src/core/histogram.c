/*
 * src/core/histogram.c — log-linear duration histogram (see histogram.h).
 */
#include "core/histogram.h"

unsigned rp_hist_bucket(uint64_t ns)
{
    if (ns < 16)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    if (e > RP_HIST_MAX_EXP)
        return RP_HIST_BUCKETS - 1;
    unsigned m = (unsigned)(ns >> (e - RP_HIST_SUB_BITS)) & ((1u << RP_HIST_SUB_BITS) - 1);
    return 16 + (e - 4) * (1u << RP_HIST_SUB_BITS) + m;
}

void rp_hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
    if (b < 16) {
        *lo = *hi = b;
        return;
    }
    unsigned e = (b - 16) / (1u << RP_HIST_SUB_BITS) + 4;
    unsigned m = (b - 16) % (1u << RP_HIST_SUB_BITS);
    uint64_t step = 1ull << (e - RP_HIST_SUB_BITS);
    *lo = ((uint64_t)(1u << RP_HIST_SUB_BITS) + m) * step;
    *hi = *lo + step - 1;
}

void rp_hist_add(struct rp_hist *h, uint64_t ns)
{
    atomic_fetch_add_explicit(&h->count[rp_hist_bucket(ns)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum, ns, memory_order_relaxed);
}

void rp_hist_snapshot(const struct rp_hist *h, struct rp_hist_snap *out)
{
    for (unsigned i = 0; i < RP_HIST_BUCKETS; i++)
        out->count[i] = atomic_load_explicit(&h->count[i], memory_order_relaxed);
    out->sum = atomic_load_explicit(&h->sum, memory_order_relaxed);
}

void rp_hist_delta(const struct rp_hist_snap *a, const struct rp_hist_snap *b,
                   struct rp_hist_snap *out)
{
    for (unsigned i = 0; i < RP_HIST_BUCKETS; i++)
        out->count[i] = a->count[i] - b->count[i];
    out->sum = a->sum - b->sum;
}

uint64_t rp_hist_total(const struct rp_hist_snap *s)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < RP_HIST_BUCKETS; i++)
        n += s->count[i];
    return n;
}

uint64_t rp_hist_quantile(const struct rp_hist_snap *s, double q)
{
    uint64_t n = rp_hist_total(s);
    if (n == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    /* The rank of the sample at quantile q, 1-based: ceil(q * n), at least 1. */
    uint64_t rank = (uint64_t)(q * (double)n);
    if ((double)rank < q * (double)n)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < RP_HIST_BUCKETS; i++) {
        seen += s->count[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            rp_hist_bucket_range(i, &lo, &hi);
            return lo + (hi - lo) / 2;
        }
    }
    return 0;
}
