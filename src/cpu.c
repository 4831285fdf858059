/*
 * src/cpu.c — the cpu kind's chunk side (see cpu.h).
 */
#include <stdatomic.h>

#include "cpu.h"
#include "threads.h"

static _Atomic uint64_t g_period_ns;
static struct rp_sink_kind g_kind;

void rp_cpu_set_period(uint64_t period_ns)
{
    atomic_store(&g_period_ns, period_ns);
}

uint32_t rp_cpu_kind(const struct rp_sink *sk)
{
    return rp_sink_kind(sk, &g_kind, "cpu", "ns", atomic_load(&g_period_ns),
                        NULL, 0);
}

enum rp_sink_result rp_cpu_flush(const struct rp_sink *sk, struct rp_slot *s,
                                 const struct rp_sample_hdr *h, size_t flen)
{
    uint32_t thread, stack, kind;
    if (!rp_sink_ids(sk, s, h, flen, &thread, &stack) || !(kind = rp_cpu_kind(sk)) ||
        rp_chunk_sample(sk->w, kind, thread, h->time, stack, h->weight, NULL) != 0)
        return RP_SINK_LOST;
    atomic_fetch_add_explicit(&s->written, 1, memory_order_relaxed);
    return RP_SINK_WRITTEN;
}
