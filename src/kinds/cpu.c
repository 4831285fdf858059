/*
 * src/kinds/cpu.c — the cpu kind's chunk side (see cpu.h).
 */
#include <stdatomic.h>

#include "ringprof/events.h"

#include "kinds/cpu.h"
#include "threads/slottab.h"
#include "threads/threads.h"
#include "flush/vthreads.h"

static _Atomic uint64_t g_period_ns;
static struct rp_sink_kind g_kind;

/* CPU samples written for each slot's occupant (slottab.h), for status' busiest
 * threads. The flusher writes; status reads. */
struct written {
    _Atomic uint64_t n;
    _Atomic uint32_t gen1;              /* whose: the slot's generation + 1        */
};
static struct rp_slottab g_written = RP_SLOTTAB(struct written);

uint64_t rp_cpu_written(const struct rp_slot *s)
{
    struct written *w = rp_slottab_get(&g_written, s->index, 0);
    if (!w || atomic_load_explicit(&w->gen1, memory_order_acquire) != atomic_load(&s->gen) + 1)
        return 0;
    return atomic_load_explicit(&w->n, memory_order_relaxed);
}

void rp_cpu_set_period(uint64_t period_ns)
{
    atomic_store(&g_period_ns, period_ns);
}

uint32_t rp_cpu_kind(const struct rp_sink *sk)
{
    return rp_sink_kind(sk, &g_kind, RP_KIND_CPU, RP_UNIT_NS, atomic_load(&g_period_ns),
                        NULL, 0);
}

int rp_cpu_chunk(const struct rp_sink *sk)
{
    return rp_cpu_kind(sk) ? 0 : -1;
}

enum rp_sink_result rp_cpu_flush(const struct rp_sink *sk, struct rp_slot *s,
                                 const struct rp_sample_hdr *h, size_t flen)
{
    uint32_t thread, stack, kind;
    if (!rp_sink_ids(sk, s, h, flen, &thread, &stack) || !(kind = rp_cpu_kind(sk)) ||
        rp_chunk_sample_vt(sk->w, kind, thread, rp_vthreads_chunk_id(sk, s, h->vthread),
                           h->time, stack, h->weight, NULL) != 0)
        return RP_SINK_LOST;
    struct written *w = rp_slottab_get(&g_written, s->index, 1);
    uint32_t gen1 = atomic_load(&s->gen) + 1;
    if (w && atomic_load_explicit(&w->gen1, memory_order_relaxed) != gen1) {
        atomic_store_explicit(&w->n, 0, memory_order_relaxed);
        atomic_store_explicit(&w->gen1, gen1, memory_order_release);
    }
    if (w)
        atomic_fetch_add_explicit(&w->n, 1, memory_order_relaxed);
    return RP_SINK_WRITTEN;
}
