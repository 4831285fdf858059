/*
 * src/kinds/alloc.c — allocation sampling, live-object tracking and GC pauses (see
 * alloc.h for the design, the weight formula and the live entries' states).
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "ringprof/clock.h"
#include "ringprof/events.h"
#include "ringprof/format.h"
#include "ringprof/ring.h"
#include "core/counters.h"
#include "kinds/alloc.h"
#include "walk/callstack.h"
#include "code/classes.h"
#include "core/engine.h"
#include "flush/kind.h"
#include "core/log.h"
#include "core/sample.h"
#include "threads/slottab.h"
#include "threads/threads.h"
#include "core/u64map.h"
#include "flush/vthreads.h"

/* Tags: a class object's tag is RP_CLASS_TAG | class id (classes.h); a sampled
 * object's is generation << 32 | (entry + 1). Generations stay below 2^31, so
 * the two never meet. */
#define GEN_MASK       0x7fffffffu

/* Pauses between two flusher passes; beyond this they are counted and lost. */
#define GC_QUEUE       256u

enum live_state { LIVE_FREE = 0, LIVE_PENDING, LIVE_LIVE, LIVE_DEAD };

struct live_entry {
    _Atomic uint64_t word;              /* generation << 8 | enum live_state      */
    struct rp_live_obj obj;
};

/* The configuration, from the options at load. */
struct rp_alloc_config {
    uint64_t interval;      /* mean bytes between samples; 0: off at start        */
    int live;               /* live=on                                            */
    uint32_t live_max;      /* live-table entries                                 */
    uint32_t depth;         /* frames per stack                                   */
    int rings;              /* 1: threads have rings (else nothing can be pushed) */
    uint64_t rate_max;      /* allocrate: most samples a second; 0: no limit       */
};

static struct {
    jvmtiEnv *jvmti;
    struct rp_alloc_config cfg;
    int available;                      /* can_generate_sampled_object_alloc_events */
    int can_tag, can_free, can_gc;
    int live;                           /* live tracking really on                */
    char why[200];                      /* why !available, for control replies    */
    _Atomic int on;
    _Atomic int inflight;
    pthread_mutex_t switch_lock;        /* switch/interval calls vs. stop          */
    int stopping;                       /* under switch_lock: stop has begun       */
    _Atomic uint64_t interval;          /* in force                               */
    _Atomic uint64_t base;              /* asked for (alloc=, ctl set alloc)      */
    uint64_t adapt_t, adapt_n;          /* rate limit: window start, samples then */

    /* Live table and its free list (Treiber stack, ABA count in the high half). */
    struct live_entry *entries;
    _Atomic uint32_t *next;
    _Atomic uint64_t free_head;

    /* GC pauses: one producer (the thread that ends a pause), one consumer. */
    uint64_t gc_start;
    _Atomic uint64_t gc_count;
    struct rp_gc_pause gcq[GC_QUEUE];
    _Atomic uint64_t gcq_head, gcq_tail;

    /* Counts. */
    _Atomic uint64_t callback_ns, adaptations, first_skipped;
    _Atomic uint64_t samples, no_thread, agent_thread, ring_dropped, untracked, tag_failed, gc_lost,
                     freed, no_memory;
} G = {.switch_lock = PTHREAD_MUTEX_INITIALIZER};

/* env->wake of the engine table's start (the alloc kind's entry, below). */

static void bump(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* -------------------------------------------------------------- live table -- */

static uint64_t word(uint32_t gen, enum live_state st)
{
    return (uint64_t)gen << 8 | st;
}

static void free_push(uint32_t idx)
{
    uint64_t h = atomic_load_explicit(&G.free_head, memory_order_relaxed), n;
    do {
        atomic_store_explicit(&G.next[idx], (uint32_t)h, memory_order_relaxed);
        n = ((h >> 32) + 1) << 32 | (idx + 1);
    } while (!atomic_compare_exchange_weak_explicit(&G.free_head, &h, n,
                                                    memory_order_release,
                                                    memory_order_relaxed));
}

/* A free entry's index, or -1. */
static int64_t free_pop(void)
{
    uint64_t h = atomic_load_explicit(&G.free_head, memory_order_acquire), n;
    do {
        uint32_t top = (uint32_t)h;
        if (!top)
            return -1;
        uint32_t after = atomic_load_explicit(&G.next[top - 1], memory_order_relaxed);
        n = ((h >> 32) + 1) << 32 | after;
    } while (!atomic_compare_exchange_weak_explicit(&G.free_head, &h, n,
                                                    memory_order_acquire,
                                                    memory_order_acquire));
    return (int64_t)(uint32_t)h - 1;
}

/* Move entry `idx` from `gen`/`from` to `to`. @return 1 if it was in `from`. */
static int live_cas(uint32_t idx, uint32_t gen, enum live_state from, enum live_state to)
{
    uint64_t expect = word(gen, from);
    return atomic_compare_exchange_strong_explicit(&G.entries[idx].word, &expect,
                                                   word(gen, to), memory_order_acq_rel,
                                                   memory_order_acquire);
}

static void live_release(uint32_t idx, uint32_t gen, enum live_state from)
{
    if (live_cas(idx, gen, from, LIVE_FREE))
        free_push(idx);
}

/* Start tracking `object`: an entry filled from `o`, and its tag. @return the
 * entry + 1 and its generation, or 0 if not tracked. */
static uint32_t live_track(jobject object, const struct rp_live_obj *o, uint32_t *gen)
{
    int64_t idx = free_pop();
    if (idx < 0) {
        bump(&G.untracked);
        return 0;
    }
    struct live_entry *e = &G.entries[idx];
    uint32_t g = ((uint32_t)(atomic_load_explicit(&e->word, memory_order_relaxed) >> 8) +
                  1) & GEN_MASK;
    e->obj = *o;
    e->obj.stack = NULL;
    atomic_store_explicit(&e->word, word(g, LIVE_PENDING), memory_order_release);
    jlong tag = (jlong)((uint64_t)g << 32 | (uint64_t)(idx + 1));
    if ((*G.jvmti)->SetTag(G.jvmti, object, tag) != JVMTI_ERROR_NONE) {
        bump(&G.tag_failed);
        live_release((uint32_t)idx, g, LIVE_PENDING);
        return 0;
    }
    *gen = g;
    return (uint32_t)idx + 1;
}

int rp_alloc_live_adopt(uint32_t live, uint32_t gen, void *stack, uint32_t thread,
                        uint64_t thread_chunk)
{
    if (!G.entries || !live || live > G.cfg.live_max)
        return -1;
    uint32_t idx = live - 1;
    /* The CAS first: a stale record (its entry freed by a sweep and taken by
     * another object since) must not touch the entry's fields. Once LIVE, only
     * this thread (the flusher) reads or frees the entry, so the writes after it
     * race with nothing; an ObjectFree meanwhile only changes the state. */
    if (!live_cas(idx, gen, LIVE_PENDING, LIVE_LIVE)) {
        live_release(idx, gen, LIVE_DEAD);  /* died before we saw it; else stale */
        return -1;
    }
    G.entries[idx].obj.stack = stack;
    G.entries[idx].obj.thread = thread;
    G.entries[idx].obj.thread_chunk = thread_chunk;
    return 0;
}

void rp_alloc_live_sweep(void (*live_fn)(void *arg, const struct rp_live_obj *o),
                         void (*dead_fn)(void *arg, void *stack), void *arg)
{
    for (uint32_t i = 0; G.entries && i < G.cfg.live_max; i++) {
        struct live_entry *e = &G.entries[i];
        uint64_t w = atomic_load_explicit(&e->word, memory_order_acquire);
        uint32_t gen = (uint32_t)(w >> 8);
        if ((w & 0xff) == LIVE_LIVE) {
            live_fn(arg, &e->obj);
        } else if ((w & 0xff) == LIVE_DEAD) {
            void *stack = e->obj.stack;     /* set only by adopt, on this thread */
            e->obj.stack = NULL;
            dead_fn(arg, stack);
            live_release(i, gen, LIVE_DEAD);
        }
    }
}

/* -------------------------------------------------------------- callbacks -- */

/* The objects a sample stands for, 1/p, as an integer without bias: rounded up
 * or down at random in proportion to its fraction (rounding to nearest would be
 * off by up to 30% for every object of sizes near the interval, always the same
 * way). `seed` only needs to differ between samples. */
static uint64_t objects_estimate(double inv_p, uint64_t seed)
{
    double whole = floor(inv_p);
    double u = (double)(rp_mix64(seed) >> 11) * 0x1.0p-53;   /* [0, 1) */
    uint64_t n = (uint64_t)whole + (u < inv_p - whole);
    return n ? n : 1;
}

/* Per thread (slottab.h): the sampling interval in force at its previous
 * sample, i.e. when HotSpot drew the distance to the next one, and the occupant
 * (the slot's generation + 1) it belongs to. Only the thread touches its own. */
struct thread_iv {
    uint64_t iv;
    uint32_t gen1;
};
static struct rp_slottab g_ivs = RP_SLOTTAB(struct thread_iv);

static void sample(struct rp_slot *s, JNIEnv *jni, jobject object, jclass klass,
                   jlong size, uint64_t vthread)
{
    pid_t tid = s->tid;
    struct rp_java_frame *frames = rp_callstack_buffer(s, G.cfg.depth);
    if (!frames) {
        bump(&G.no_memory);
        return;
    }
    struct rp_sample_hdr h = {.type = RP_SAMPLE_ALLOC, .time = rp_mono_ns(), .slot = s->index,
                              .gen = atomic_load(&s->gen), .vthread = vthread};
    struct rp_alloc_tail t = {.size = (uint64_t)(size > 0 ? size : 0)};
    /* p = 1 - exp(-s/I) (alloc.h); expm1 keeps it exact for s << I. I is the
     * interval this sample's distance was drawn with: HotSpot draws the next
     * distance when it takes a sample, so it is the interval in force at this
     * thread's previous sample (the current one for a thread's first). */
    uint64_t now_iv = atomic_load(&G.interval);
    struct thread_iv *ti = rp_slottab_get(&g_ivs, s->index, 1);
    int first = !ti || ti->gen1 != h.gen + 1;
    double interval = (double)(first ? now_iv : ti->iv);
    if (ti) {
        ti->iv = now_iv;
        ti->gen1 = h.gen + 1;
    }
    /* A thread's first sample is not a Poisson point: HotSpot starts every
     * thread with no distance drawn (_bytes_until_sample 0), so its first
     * allocation slow path is always sampled. Weighing it would add about one
     * interval of phantom bytes per thread (per thread start, in a program that
     * churns threads). It only starts the thread's process: counted, not kept. */
    if (first) {
        bump(&G.first_skipped);
        return;
    }
    /* The stack first: a CPU sample taken in this callback before it is here
     * has no Java frames (cpu_async.h). */
    h.status = rp_callstack_here(s, jni, frames, G.cfg.depth, &h.njava, &h.flags);
    double p = size > 0 && interval > 0 ? -expm1(-(double)size / interval) : 1.0;
    if (!(p > 0))
        p = 1.0;
    h.weight = (uint64_t)llround((double)t.size / p);
    t.objects = objects_estimate(1.0 / p, h.time ^ (uint64_t)tid << 32 ^ t.size);
    t.klass = rp_class_id(G.jvmti, klass);
    const char *name = rp_class_name(t.klass);
    if (name && strchr(name, '['))
        t.length1 = (uint32_t)(*jni)->GetArrayLength(jni, (jarray)object) + 1;
    /* A sampled java.lang.Class (a class being defined) is not tracked: class
     * objects carry rp_class_id's tag, which would overwrite the live one. */
    if (G.live && !(name && !strcmp(name, "java.lang.Class"))) {
        struct rp_live_obj o = {h.time, atomic_load(&G.gc_count), t.size, h.weight,
                                t.objects, t.klass, t.length1, s->index, h.gen, NULL};
        t.live = live_track(object, &o, &t.live_gen);
    }
    struct iovec iov[3] = {
        {&h, sizeof h},
        {frames, h.njava * sizeof *frames},
        {&t, sizeof t}};
    if (rp_ring_pushv(s->ring, iov, 3) != RP_RING_OK) {
        bump(&G.ring_dropped);
        if (t.live) {
            live_release(t.live - 1, t.live_gen, LIVE_PENDING);
            (*G.jvmti)->SetTag(G.jvmti, object, 0);
        }
        return;
    }
    bump(&G.samples);
    /* A burst of allocation can fill a ring between two drains (100 ms): past
     * half full, ask for a drain now. Cheap when the flusher is already up. */
    if (rp_ring_fill(s->ring) > s->ring->capacity / 2)
        rp_engine_wake();
}

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                     jobject object, jclass klass, jlong size)
{
    (void)jvmti;
    atomic_fetch_add(&G.inflight, 1);
    if (atomic_load(&G.on)) {
        uint64_t t0 = rp_mono_ns();
        pid_t tid = rp_gettid();
        struct rp_slot *s = rp_threads_by_tid(tid);
        if (!s || !s->ring || atomic_load(&s->state) != RP_SLOT_LIVE) {
            bump(rp_threads_is_agent(tid) ? &G.agent_thread : &G.no_thread);
        } else {
            /* A CPU sample taken from here on shows [ringprof:alloc] under the
             * allocating Java code (sample.h): the timer signal stays open. */
            int outer = rp_callstack_enter(s, RP_AGENT_ALLOC);
            sample(s, jni, object, klass, size, rp_vthreads_of(jni, thread));
            rp_callstack_leave(s, outer);
        }
        atomic_fetch_add_explicit(&G.callback_ns, rp_mono_ns() - t0, memory_order_relaxed);
    }
    atomic_fetch_sub(&G.inflight, 1);
}

/* No JNI, no JVMTI, no locks: this may run while a GC holds the world. */
static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    uint64_t t = (uint64_t)tag;
    uint32_t live = (uint32_t)t, gen = (uint32_t)(t >> 32);
    if ((t & RP_CLASS_TAG) || !G.entries || !live || live > G.cfg.live_max)
        return;
    /* One loop, not two CASes (LIVE, then PENDING): the flusher's PENDING → LIVE
     * between them would make both fail, and ObjectFree comes only once. */
    struct live_entry *e = &G.entries[live - 1];
    uint64_t w = atomic_load_explicit(&e->word, memory_order_acquire);
    while ((uint32_t)(w >> 8) == gen && ((w & 0xff) == LIVE_PENDING || (w & 0xff) == LIVE_LIVE)) {
        if (atomic_compare_exchange_weak_explicit(&e->word, &w, word(gen, LIVE_DEAD),
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            bump(&G.freed);
            return;
        }
    }
}

static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
    (void)jvmti;
    G.gc_start = rp_mono_ns();
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
    (void)jvmti;
    uint64_t end = rp_mono_ns();
    uint64_t id = atomic_fetch_add(&G.gc_count, 1) + 1;
    uint64_t head = atomic_load_explicit(&G.gcq_head, memory_order_relaxed);
    if (head - atomic_load_explicit(&G.gcq_tail, memory_order_acquire) >= GC_QUEUE) {
        bump(&G.gc_lost);
        return;
    }
    G.gcq[head % GC_QUEUE] = (struct rp_gc_pause){G.gc_start ? G.gc_start : end, end, id};
    atomic_store_explicit(&G.gcq_head, head + 1, memory_order_release);
    rp_engine_wake();
}

int rp_alloc_gc_pop(struct rp_gc_pause *out)
{
    uint64_t tail = atomic_load_explicit(&G.gcq_tail, memory_order_relaxed);
    if (tail == atomic_load_explicit(&G.gcq_head, memory_order_acquire))
        return 0;
    *out = G.gcq[tail % GC_QUEUE];
    atomic_store_explicit(&G.gcq_tail, tail + 1, memory_order_release);
    return 1;
}

uint64_t rp_alloc_gc_count(void)
{
    return atomic_load(&G.gc_count);
}

/* ---------------------------------------------------------------- lifecycle -- */

/* live=on: the live table of `n` entries, all free; without the memory, no
 * live profile (said once). */
static void live_table_init(uint32_t n)
{
    G.entries = calloc(n, sizeof *G.entries);
    G.next = calloc(n, sizeof *G.next);
    if (!G.entries || !G.next) {
        free(G.entries);
        free((void *)G.next);
        G.entries = NULL;
        G.next = NULL;
        rp_log("live=on: no memory for %u live entries; no live profile", n);
        return;
    }
    for (uint32_t i = n; i-- > 0;)
        free_push(i);
    G.live = 1;
}

/* The descriptor's rings_wanted (flush/kind.h): alloc= asks for them. */
static int kind_rings_wanted(const struct rp_options *opt)
{
    return opt->alloc_bytes != 0;
}

/* The descriptor's capabilities: sampled allocations, tags (class ids, live
 * entries), GC pauses, ObjectFree for live=on. */
static void kind_capabilities(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                              jvmtiCapabilities *want)
{
    want->can_generate_sampled_object_alloc_events =
        pot->can_generate_sampled_object_alloc_events;
    want->can_tag_objects = pot->can_tag_objects;
    want->can_generate_garbage_collection_events =
        pot->can_generate_garbage_collection_events;
    if (ld->opt->live)
        want->can_generate_object_free_events = pot->can_generate_object_free_events;
}

/* The descriptor's init: the configuration, the live table, the callbacks. */
static void kind_init(const struct rp_kind_load *ld, const jvmtiCapabilities *got,
                      jvmtiEventCallbacks *cb)
{
    const struct rp_options *o = ld->opt;
    const struct rp_alloc_config *cfg = &G.cfg;
    G.jvmti = ld->jvmti;
    G.cfg = (struct rp_alloc_config){o->alloc_bytes, o->live, (uint32_t)o->live_max, o->depth,
                                     ld->rings, o->alloc_rate};
    G.available = got->can_generate_sampled_object_alloc_events && cfg->rings;
    G.can_tag = got->can_tag_objects;
    G.can_free = got->can_generate_object_free_events;
    G.can_gc = got->can_generate_garbage_collection_events;
    atomic_store(&G.interval, cfg->interval ? cfg->interval : 512u * 1024);
    atomic_store(&G.base, atomic_load(&G.interval));
    if (!got->can_generate_sampled_object_alloc_events)
        snprintf(G.why, sizeof G.why, "allocation sampling is unavailable: this JVM does "
                 "not grant can_generate_sampled_object_alloc_events (another agent may "
                 "hold it, or the JVM is older than 11)");
    else if (!cfg->rings)
        snprintf(G.why, sizeof G.why, "allocation sampling is unavailable: engine=jvmti "
                 "was started with alloc=off, so threads have no rings; restart with "
                 "alloc=SIZE");
    if (!got->can_generate_sampled_object_alloc_events && cfg->interval)
        rp_log("%s; CPU sampling goes on", G.why);
    if (cfg->live && G.available && !(G.can_tag && G.can_free))
        rp_log("live=on is unavailable: this JVM does not grant object tagging and "
               "ObjectFree events; allocations are sampled without the live profile");
    if (cfg->live && G.available && G.can_tag && G.can_free && cfg->live_max)
        live_table_init(cfg->live_max);
    if (G.available)
        cb->SampledObjectAlloc = on_sampled_alloc;
    if (G.live)
        cb->ObjectFree = on_object_free;
    if (G.can_gc) {
        cb->GarbageCollectionStart = on_gc_start;
        cb->GarbageCollectionFinish = on_gc_finish;
    }
}

static jvmtiError enable(jvmtiEvent ev, int on)
{
    return (*G.jvmti)->SetEventNotificationMode(G.jvmti, on ? JVMTI_ENABLE : JVMTI_DISABLE,
                                                ev, NULL);
}

/* The engine entry's start (engine.h), in the live phase (VMInit or attach):
 * set the interval, enable the events. It cannot fail: what cannot be had is
 * said on stderr and the rest goes on. */
static int kind_start(const struct rp_engine_env *env, char *err, size_t errlen)
{
    (void)env;
    if (G.can_gc && (enable(JVMTI_EVENT_GARBAGE_COLLECTION_START, 1) != JVMTI_ERROR_NONE ||
                     enable(JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, 1) != JVMTI_ERROR_NONE))
        rp_log("GC pause events could not be enabled; pauses are not recorded");
    if (G.live && enable(JVMTI_EVENT_OBJECT_FREE, 1) != JVMTI_ERROR_NONE) {
        rp_log("ObjectFree events could not be enabled; no live profile");
        G.live = 0;
    }
    if (G.cfg.interval && G.available && rp_alloc_switch(1, err, errlen) != 0)
        rp_log("%s", err);
    return 0;
}

/* Both under switch_lock, so that a control call that was queued on the
 * flusher before shutdown cannot switch sampling back on after rp_alloc_stop. */
static int set_interval_locked(uint64_t bytes, char *err, size_t errlen)
{
    if (!G.available) {
        snprintf(err, errlen, "%s", G.why);
        return -1;
    }
    if (G.stopping) {
        snprintf(err, errlen, "the agent is shutting down");
        return -1;
    }
    jvmtiError e = (*G.jvmti)->SetHeapSamplingInterval(G.jvmti, (jint)bytes);
    if (e != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "SetHeapSamplingInterval(%llu) failed (JVMTI error %d)",
                 (unsigned long long)bytes, (int)e);
        return -1;
    }
    atomic_store(&G.interval, bytes);
    return 0;
}

int rp_alloc_set_interval(uint64_t bytes, char *err, size_t errlen)
{
    pthread_mutex_lock(&G.switch_lock);
    int rc = set_interval_locked(bytes, err, errlen);
    if (rc == 0) {
        atomic_store(&G.base, bytes);
        G.adapt_t = 0;                  /* the rate limit starts a new window */
    }
    pthread_mutex_unlock(&G.switch_lock);
    return rc;
}

void rp_alloc_adapt(uint64_t now)
{
    uint64_t n = atomic_load(&G.samples);
    if (!G.cfg.rate_max || !atomic_load(&G.on) || !G.adapt_t) {
        G.adapt_t = now;
        G.adapt_n = n;
        return;
    }
    /* Once a second; but a rate four times over the limit is acted on after
     * 100 ms, before a burst fills the rings. */
    uint64_t dt = now - G.adapt_t;
    double rate = dt ? (double)(n - G.adapt_n) * 1e9 / (double)dt : 0;
    if (dt < 100000000u || (dt < 1000000000u && rate < 4.0 * (double)G.cfg.rate_max))
        return;
    G.adapt_t = now;
    G.adapt_n = n;
    uint64_t cur = atomic_load(&G.interval), base = atomic_load(&G.base);
    double max = (double)G.cfg.rate_max;
    if (!(rate > 1.25 * max || (rate < 0.5 * max && cur > base)))
        return;
    double want = (double)cur * rate / max;
    uint64_t next = want < (double)base ? base
                  : want > (double)(1u << 30) ? (1u << 30) : (uint64_t)want;
    if (next == cur)
        return;
    char err[256];
    pthread_mutex_lock(&G.switch_lock);
    if (set_interval_locked(next, err, sizeof err) == 0)
        bump(&G.adaptations);
    pthread_mutex_unlock(&G.switch_lock);
}

int rp_alloc_switch(int on, char *err, size_t errlen)
{
    pthread_mutex_lock(&G.switch_lock);
    int rc = -1;
    if (on && set_interval_locked(atomic_load(&G.base), err, errlen) != 0)
        goto out;
    if (!G.available || G.stopping) {
        snprintf(err, errlen, "%s", G.stopping ? "the agent is shutting down" : G.why);
        goto out;
    }
    atomic_store(&G.on, on);
    jvmtiError e = enable(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, on);
    if (e != JVMTI_ERROR_NONE) {
        atomic_store(&G.on, 0);
        snprintf(err, errlen, "SampledObjectAlloc events could not be %s (JVMTI error "
                 "%d)", on ? "enabled" : "disabled", (int)e);
        goto out;
    }
    rc = 0;
out:
    pthread_mutex_unlock(&G.switch_lock);
    return rc;
}

void rp_alloc_live_settle(void)
{
    if (G.live)
        enable(JVMTI_EVENT_OBJECT_FREE, 1);
}

void rp_alloc_stop(unsigned wait_ms)
{
    pthread_mutex_lock(&G.switch_lock);
    G.stopping = 1;
    atomic_store(&G.on, 0);
    if (G.available)
        enable(JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, 0);
    pthread_mutex_unlock(&G.switch_lock);
    for (unsigned i = 0; i < wait_ms * 10 && atomic_load(&G.inflight) > 0; i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

void rp_alloc_state(struct rp_alloc_state *out)
{
    out->available = G.available;
    out->on = atomic_load(&G.on);
    out->live = G.live;
    out->interval = atomic_load(&G.base);
    out->effective = atomic_load(&G.interval);
    out->rate_max = G.cfg.rate_max;
}

void rp_alloc_stats(struct rp_alloc_stats *out)
{
    out->samples = atomic_load(&G.samples);
    out->no_thread = atomic_load(&G.no_thread);
    out->agent_thread = atomic_load(&G.agent_thread);
    out->ring_dropped = atomic_load(&G.ring_dropped);
    out->untracked = atomic_load(&G.untracked);
    out->tag_failed = atomic_load(&G.tag_failed);
    out->gc_lost = atomic_load(&G.gc_lost);
    out->freed = atomic_load(&G.freed);
    out->callback_ns = atomic_load(&G.callback_ns);
    out->adaptations = atomic_load(&G.adaptations);
    out->first_skipped = atomic_load(&G.first_skipped);
    out->no_memory = atomic_load(&G.no_memory);
}

/* -------------------------------------------------------- the alloc kind -- */

/* The alloc kind (kind.h). Its switch and interval are JVMTI calls, which the
 * control server's thread may not make: they run through rp_engine_call (the
 * interval as a value in the pointer: a call that times out still runs later). */
static int kind_on(void)
{
    return atomic_load(&G.on);
}

/* "all" switches allocation sampling only where it is available. */
static int kind_in_all(int on)
{
    (void)on;
    return G.available;
}

static int call_interval(void *arg, char *err, size_t errlen)
{
    return rp_alloc_set_interval((uint64_t)(uintptr_t)arg, err, errlen);
}

static int set_interval(uint64_t bytes, char *err, size_t errlen)
{
    return rp_engine_call(call_interval, (void *)(uintptr_t)bytes, err, errlen);
}

static uint64_t kind_period(void)
{
    return atomic_load(&G.base);
}

static void kind_effective(struct rp_json *j)
{
    rp_json_kv_u64(j, RP_KIND_ALLOC "_bytes", atomic_load(&G.base));
    rp_json_kv_bool(j, RP_KIND_LIVE, G.live);
}

/* Its state, and what the callbacks counted (samples pushed; those then written
 * are in the reply's "samples"). */
static void kind_status(struct rp_json *j)
{
    struct rp_alloc_state a;
    struct rp_alloc_stats st;
    rp_alloc_state(&a);
    rp_alloc_stats(&st);
    rp_json_key(j, RP_KIND_ALLOC);
    rp_json_object_begin(j);
    rp_json_kv_bool(j, "available", a.available);
    rp_json_kv_bool(j, "on", a.on);
    rp_json_kv_u64(j, "interval_bytes", a.interval);
    rp_json_kv_u64(j, "effective_bytes", a.effective);
    rp_json_kv_u64(j, "rate_max", a.rate_max);
    rp_json_kv_u64(j, "interval_changes", st.adaptations);
    rp_json_kv_u64(j, "callback_ns", st.callback_ns);
    rp_json_kv_bool(j, RP_KIND_LIVE, a.live);
    rp_json_kv_u64(j, "sampled", st.samples);
    rp_json_kv_u64(j, "ring_dropped", st.ring_dropped);
    rp_json_kv_u64(j, "no_thread", st.no_thread);
    rp_json_kv_u64(j, RP_KIND_LIVE "_untracked", st.untracked);
    rp_json_kv_u64(j, "freed", st.freed);
    rp_json_kv_u64(j, "gcs", rp_alloc_gc_count());
    rp_json_object_end(j);
}

/* Every pass: the GC pauses queued since the last, and the rate limit. */
static void kind_pass(const struct rp_sink *sk)
{
    rp_gc_flush(sk);
    rp_alloc_adapt(sk->now);
}

/* The allocation counters, in the chunk's order (docs/format.md). */
static const char *const ALLOC_COUNTERS[] = {
    RP_COUNTER_LOST_PREFIX RP_KIND_ALLOC "_no_thread", RP_COUNTER_LOST_PREFIX RP_KIND_GC "_pause",
    RP_KIND_LIVE ".untracked", RP_KIND_LIVE ".tag_failed", RP_KIND_ALLOC ".agent_thread",
    RP_KIND_ALLOC ".interval_changes", RP_KIND_ALLOC ".first_sample",
    RP_COUNTER_LOST_PREFIX RP_KIND_ALLOC "_no_memory",
};

static void alloc_counters_read(uint64_t *v)
{
    struct rp_alloc_stats s;
    rp_alloc_stats(&s);
    const uint64_t now[] = {s.no_thread, s.gc_lost, s.untracked, s.tag_failed,
                            s.agent_thread, s.adaptations, s.first_skipped, s.no_memory};
    _Static_assert(sizeof now / sizeof now[0] ==
                   sizeof ALLOC_COUNTERS / sizeof ALLOC_COUNTERS[0], "ALLOC_COUNTERS");
    memcpy(v, now, sizeof now);
}

/* The gauges after the counters: the interval in force and the callbacks'
 * time, while the capability is held. */
static size_t alloc_gauges_read(struct rp_gauge_value *out, size_t max)
{
    struct rp_alloc_state st;
    rp_alloc_state(&st);
    if (!st.available || max < 2)
        return 0;
    struct rp_alloc_stats as;
    rp_alloc_stats(&as);
    out[0] = (struct rp_gauge_value){RP_KIND_ALLOC ".interval", st.effective};
    out[1] = (struct rp_gauge_value){RP_GAUGE_AGENT_ALLOC, as.callback_ns};
    return 2;
}

static void kind_counters(enum rp_counter_group g)
{
    rp_counters_register(g, ALLOC_COUNTERS, sizeof ALLOC_COUNTERS / sizeof ALLOC_COUNTERS[0],
                         alloc_counters_read);
    rp_alloc_write_register(g);
    rp_gauges_register(g, alloc_gauges_read);
}

const struct rp_kind rp_kind_alloc = {
    .engine = {
        .name = RP_KIND_ALLOC, .kind = RP_CTL_KIND_ALLOC, .phase = RP_ENGINE_PHASE_EVENTS,
        .flags = RP_ENGINE_SWITCH_ATTACHED,
        .start = kind_start, .stop = rp_alloc_stop, .on = kind_on, .in_all = kind_in_all,
        .switch_kind = rp_alloc_switch,
        .settings = {{RP_CTL_KEY_ALLOC, 0, kind_period, set_interval}},
        .period = kind_period, .effective = kind_effective, .status = kind_status,
        .samples = {RP_KIND_ALLOC, RP_KIND_GC, RP_KIND_LIVE},
    },
    /* A tracked object is seen whether or not its record can be written. */
    .records = {{RP_SAMPLE_ALLOC, rp_alloc_flush, rp_alloc_seen, RP_KIND_ALLOC,
                 sizeof(struct rp_alloc_tail)}},
    .place = 1,
    .pass = kind_pass,
    .flush = rp_live_flush,
    .counters = kind_counters,
    .rings_wanted = kind_rings_wanted,
    /* Never worth refusing the load for, and given up before lock contention's
     * (monitor events, and the class tags it shares). */
    .capabilities = kind_capabilities,
    .caps_keep = 1,
    .init = kind_init,
};
