/*
 * src/kinds/alloc_write.c — the alloc module's flusher side (see alloc.h): the
 * writers of the alloc, live and gc kinds, and the stacks of live objects.
 *
 * A live object's allocation stack must outlive the chunk its record was first
 * written to: every snapshot writes it again, in whatever chunk is current.
 * struct live_stack keeps the record's header and frames, shared (counted) by
 * every tracked object allocated at the same place, found by the stack's hash
 * (stacks.h), with the chunk stack id made for the chunk of `generation`.
 *
 * The heap figures of a GC pause are Runtime.totalMemory - freeMemory, read
 * right after the newest pause in a batch (telemetry.c reads the MemoryMXBean,
 * a different source, for its own gauges).
 *
 * Threads: the flusher thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "ringprof/events.h"
#include "ringprof/format.h"
#include "kinds/alloc.h"
#include "core/counters.h"
#include "flush/stacks.h"
#include "threads/threads.h"
#include "core/u64map.h"
#include "flush/vthreads.h"

struct live_stack {
    uint32_t refs;
    uint32_t stack;                 /* in chunk `generation`; 0: not built yet      */
    uint64_t generation;
    uint64_t hash;
    int in_map;                     /* reachable from g_live_stacks                 */
    size_t len;
    uint64_t rec[];                 /* struct rp_sample_hdr + frames                */
};

static const char *const ALLOC_EXTRA[] = RP_ALLOC_EXTRA_NAMES;
static const char *const LIVE_EXTRA[] = RP_LIVE_EXTRA_NAMES;
static const char *const GC_EXTRA[] = RP_GC_EXTRA_NAMES;

static struct rp_u64map g_live_stacks;  /* stack hash → struct live_stack*         */
static struct rp_sink_kind g_alloc_kind, g_live_kind, g_gc_kind;
/* Losses of the writers, running totals (registered counters). */
static uint64_t g_lost_gc, g_lost_live, g_live_no_stack;
static jclass g_runtime;                /* java.lang.Runtime (global ref)          */
static jmethodID g_runtime_get, g_runtime_total, g_runtime_free;

/* ------------------------------------------------------------ live stacks -- */

/* A counted reference to the stack of record `h` (header and frames: `len`
 * bytes), shared with the objects allocated at the same place. NULL: no memory. */
static struct live_stack *live_stack_ref(const struct rp_sample_hdr *h, size_t len)
{
    /* The virtual thread too: a live sample names the allocation's. */
    uint64_t hash = rp_stacks_hash(h, len) ^ rp_mix64(h->vthread), v;
    if (rp_u64map_get(&g_live_stacks, hash, &v)) {
        struct live_stack *ls = (void *)(uintptr_t)v;
        if (ls->len == len && memcmp((const uint8_t *)ls->rec + sizeof *h,
                                     (const uint8_t *)h + sizeof *h, len - sizeof *h) == 0 &&
            ((const struct rp_sample_hdr *)(const void *)ls->rec)->vthread == h->vthread &&
            memcmp(ls->rec, h, 8) == 0) {          /* type, flags, status */
            ls->refs++;
            return ls;
        }
    }
    struct live_stack *ls = malloc(sizeof *ls + len);
    if (!ls)
        return NULL;
    *ls = (struct live_stack){.refs = 1, .hash = hash, .len = len};
    memcpy(ls->rec, h, len);
    if (!rp_u64map_get(&g_live_stacks, hash, &v))
        ls->in_map = rp_u64map_put(&g_live_stacks, hash, (uint64_t)(uintptr_t)ls) == 0;
    return ls;
}

static void live_stack_unref(struct live_stack *ls)
{
    if (!ls || --ls->refs)
        return;
    if (ls->in_map)
        rp_u64map_del(&g_live_stacks, ls->hash);
    free(ls);
}

static uint32_t live_stack_id(const struct rp_sink *sk, struct live_stack *ls)
{
    if (ls->generation != sk->generation || !ls->stack) {
        ls->stack = rp_stacks_build((const struct rp_sample_hdr *)(void *)ls->rec);
        ls->generation = sk->generation;
    }
    return ls->stack;
}

/* ------------------------------------------------------------ alloc kind -- */

void rp_alloc_seen(const struct rp_sink *sk, struct rp_slot *s, const struct rp_sample_hdr *h,
                   size_t flen)
{
    struct rp_alloc_tail t;
    memcpy(&t, (const uint8_t *)h + flen, sizeof t);
    if (!t.live)
        return;
    uint32_t thread = s && sk->w ? sk->thread_id(sk->ctx, s) : 0;
    struct live_stack *ls = live_stack_ref(h, flen);  /* NULL: no memory; the
                                                         snapshots count it */
    if (rp_alloc_live_adopt(t.live, t.live_gen, ls, thread,
                            thread ? sk->generation : UINT64_MAX) != 0)
        live_stack_unref(ls);
}

enum rp_sink_result rp_alloc_flush(const struct rp_sink *sk, struct rp_slot *s,
                                   const struct rp_sample_hdr *h, size_t flen)
{
    struct rp_alloc_tail t;
    memcpy(&t, (const uint8_t *)h + flen, sizeof t);
    uint32_t thread, stack;
    uint64_t extra[RP_ALLOC_NEXTRA] = {0, t.size, t.objects, t.length1};
    if (!rp_sink_ids(sk, s, h, flen, &thread, &stack) ||
        !(extra[RP_ALLOC_X_CLASS] = rp_stacks_class(t.klass)))
        return RP_SINK_LOST;
    struct rp_alloc_state st;
    rp_alloc_state(&st);
    if (!rp_sink_kind(sk, &g_alloc_kind, RP_KIND_ALLOC, RP_UNIT_BYTES, st.interval,
                      ALLOC_EXTRA, RP_ALLOC_NEXTRA) ||
        rp_chunk_sample_vt(sk->w, g_alloc_kind.id, thread,
                           rp_vthreads_chunk_id(sk, s, h->vthread), h->time, stack,
                           h->weight, extra) != 0)
        return RP_SINK_LOST;
    return RP_SINK_WRITTEN;
}

/* ------------------------------------------------------------- live kind -- */

/* The live snapshot (live=on): every tracked object still alive, at one time,
 * marked by the live.objects and live.bytes gauges; dead entries are recycled. */
struct snapshot {
    const struct rp_sink *sk;
    uint32_t kind;
    uint64_t gcs, objects, bytes, failed;
};

static void snapshot_live(void *arg, const struct rp_live_obj *o)
{
    struct snapshot *sn = arg;
    const struct rp_sink *sk = sn->sk;
    /* The allocating thread: still running (or ended but not yet released), or
     * ended with its THREAD record in this chunk; else none. */
    struct rp_slot *s = rp_threads_slot(o->slot);
    uint32_t thread = s && atomic_load(&s->gen) == o->slot_gen &&
                      atomic_load(&s->state) != RP_SLOT_FREE ? sk->thread_id(sk->ctx, s) : 0;
    if (!thread && o->thread_chunk == sk->generation)
        thread = o->thread;
    if (!sn->kind) {                    /* no kind, so no snapshot: counted */
        sn->failed++;
        return;
    }
    uint32_t stack = o->stack ? live_stack_id(sk, o->stack) : 0;
    const struct live_stack *ls = o->stack;
    uint64_t vt = ls ? ((const struct rp_sample_hdr *)(const void *)ls->rec)->vthread : 0;
    uint64_t extra[RP_LIVE_NEXTRA] = {
        rp_stacks_class(o->klass), o->size, o->objects, o->length1, sn->gcs - o->gcs,
        sk->now > o->time ? (sk->now - o->time) / 1000000u : 0};
    if (!extra[RP_ALLOC_X_CLASS] ||
        rp_chunk_sample_vt(sk->w, sn->kind, thread, rp_vthreads_chunk_id(sk, NULL, vt),
                           sk->now, stack, o->weight, extra) != 0) {
        sn->failed++;
        return;
    }
    if (!stack)
        g_live_no_stack++;
    sn->objects++;
    sn->bytes += o->weight;
}

static void snapshot_dead(void *arg, void *stack)
{
    (void)arg;
    live_stack_unref(stack);
}

void rp_live_flush(const struct rp_sink *sk)
{
    struct rp_alloc_state st;
    rp_alloc_state(&st);
    if (!st.live)
        return;
    rp_alloc_live_settle();
    /* Without its kind (no memory) the sweep still runs: dead entries must be
     * recycled, and the objects that could not be written are counted. */
    struct snapshot sn = {sk, rp_sink_kind(sk, &g_live_kind, RP_KIND_LIVE, RP_UNIT_BYTES, 0,
                                           LIVE_EXTRA, RP_LIVE_NEXTRA),
                          rp_alloc_gc_count(), 0, 0, 0};
    rp_alloc_live_sweep(snapshot_live, snapshot_dead, &sn);
    if (sn.kind) {
        rp_sink_gauge(sk, RP_GAUGE_LIVE_OBJECTS, sn.objects);
        rp_sink_gauge(sk, RP_GAUGE_LIVE_BYTES, sn.bytes);
    }
    g_lost_live += sn.failed;
    rp_counters_written(RP_KIND_LIVE, sn.objects);
}

/* --------------------------------------------------------------- gc kind -- */

/* The heap's use and size now (Runtime.totalMemory - freeMemory), 0s if unknown. */
static void heap_now(JNIEnv *jni, uint64_t *used, uint64_t *committed)
{
    *used = *committed = 0;
    if (!g_runtime) {
        jclass k = (*jni)->FindClass(jni, "java/lang/Runtime");
        if (k) {
            g_runtime_get = (*jni)->GetStaticMethodID(jni, k, "getRuntime",
                                                      "()Ljava/lang/Runtime;");
            g_runtime_total = (*jni)->GetMethodID(jni, k, "totalMemory", "()J");
            g_runtime_free = (*jni)->GetMethodID(jni, k, "freeMemory", "()J");
            if (g_runtime_get && g_runtime_total && g_runtime_free)
                g_runtime = (*jni)->NewGlobalRef(jni, k);
            (*jni)->DeleteLocalRef(jni, k);
        }
        (*jni)->ExceptionClear(jni);
        if (!g_runtime)
            return;
    }
    jobject rt = (*jni)->CallStaticObjectMethod(jni, g_runtime, g_runtime_get);
    if (rt) {
        jlong total = (*jni)->CallLongMethod(jni, rt, g_runtime_total);
        jlong freeb = (*jni)->ExceptionCheck(jni) ? -1
                    : (*jni)->CallLongMethod(jni, rt, g_runtime_free);
        if (!(*jni)->ExceptionCheck(jni) && total >= freeb && freeb >= 0) {
            *used = (uint64_t)(total - freeb);
            *committed = (uint64_t)total;
        }
        (*jni)->DeleteLocalRef(jni, rt);
    }
    (*jni)->ExceptionClear(jni);
}

/* The GC pauses queued since the last pass. The heap is read once, right after
 * the newest pause; older ones in the same batch get 0 (unknown) rather than a
 * figure that belongs to a later GC. */
void rp_gc_flush(const struct rp_sink *sk)
{
    struct rp_gc_pause batch[32];
    uint64_t written = 0;
    int n;
    do {
        n = 0;
        while (n < 32 && rp_alloc_gc_pop(&batch[n]))
            n++;
        if (!n)
            break;
        uint64_t used, committed;
        heap_now(sk->jni, &used, &committed);
        for (int i = 0; i < n; i++) {
            int last = i == n - 1;
            uint64_t extra[RP_GC_NEXTRA] = {last ? used : 0, last ? committed : 0,
                                            batch[i].id};
            if (!sk->w ||
                !rp_sink_kind(sk, &g_gc_kind, RP_KIND_GC, RP_UNIT_NS, 0, GC_EXTRA, RP_GC_NEXTRA) ||
                rp_chunk_sample(sk->w, g_gc_kind.id, 0, batch[i].start, 0,
                                batch[i].end - batch[i].start, extra) != 0)
                g_lost_gc++;
            else
                written++;
        }
    } while (n == 32);
    if (written)
        rp_counters_written(RP_KIND_GC, written);
}

/* -------------------------------------------------------------- counters -- */

static const char *const WRITE_COUNTERS[] = {
    RP_COUNTER_LOST_PREFIX RP_KIND_GC "_pause", RP_COUNTER_LOST_PREFIX RP_KIND_LIVE "_snapshot",
    RP_KIND_LIVE ".no_stack",
};

static void write_counters_read(uint64_t *v)
{
    v[0] = g_lost_gc;
    v[1] = g_lost_live;
    v[2] = g_live_no_stack;
}

void rp_alloc_write_register(enum rp_counter_group g)
{
    rp_counters_register(g, WRITE_COUNTERS,
                         sizeof WRITE_COUNTERS / sizeof WRITE_COUNTERS[0],
                         write_counters_read);
}
