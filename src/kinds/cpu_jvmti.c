/*
 * src/kinds/cpu_jvmti.c — the jvmti engine's sampler thread (see cpu_jvmti.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringprof/clock.h"
#include "walk/callstack.h"
#include "ringprof/events.h"
#include "core/engine.h"
#include "flush/kind.h"
#include "kinds/cpu.h"
#include "kinds/cpu_jvmti.h"
#include "threads/jthread.h"
#include "core/log.h"
#include "core/sample.h"
#include "threads/slottab.h"
#include "threads/threads.h"
#include "flush/vthreads.h"

static struct rp_jvmti_config g_cfg;
static struct rp_ring *g_ring;
static _Atomic int g_stop, g_running, g_tid;
static _Atomic int g_paused;                /* "stop cpu": look, do not sample  */
static _Atomic uint64_t g_interval_ns;      /* g_cfg's, changeable at run time  */
static struct rp_java_frame *g_java;

/* What the sampler keeps of each slot's occupant (slottab.h): its CPU clock at
 * the last look, and whose it is (the slot's generation + 1; 0: nothing kept),
 * so that a reused slot starts afresh. The flusher reads an entry
 * (rp_jvmti_cpu_ns) and takes `cpu_ns` only when `gen1` names the slot's
 * present occupant. */
struct sampler_slot {
    _Atomic uint64_t cpu_ns;
    _Atomic uint32_t gen1;                /* stored after cpu_ns, with release */
};
static struct rp_slottab g_slots = RP_SLOTTAB(struct sampler_slot);

struct rp_ring *rp_jvmti_ring(void)
{
    return g_ring;
}

int rp_jvmti_sampler_tid(void)
{
    return atomic_load(&g_tid);
}

uint64_t rp_jvmti_cpu_ns(const struct rp_slot *s)
{
    struct sampler_slot *k = rp_slottab_get(&g_slots, s->index, 0);
    if (!k || atomic_load_explicit(&k->gen1, memory_order_acquire) != atomic_load(&s->gen) + 1)
        return 0;
    return atomic_load_explicit(&k->cpu_ns, memory_order_relaxed);
}

/* Sample one slot if its thread used CPU since the last look. */
static void sample_slot(jvmtiEnv *jvmti, JNIEnv *jni, struct rp_slot *s)
{
    uint32_t gen = atomic_load(&s->gen);
    struct sampler_slot *k = rp_slottab_get(&g_slots, s->index, 1);
    if (!k)
        return;
    jobject t = rp_threads_local_ref(jni, s);
    if (!t)
        return;
    jlong cpu = 0;
    if ((*jvmti)->GetThreadCpuTime(jvmti, t, &cpu) != JVMTI_ERROR_NONE || cpu < 0)
        goto out;
    uint64_t last = atomic_load_explicit(&k->cpu_ns, memory_order_relaxed);
    if (atomic_load_explicit(&k->gen1, memory_order_relaxed) != gen + 1) {
        /* First look at this occupant: a thread we saw start has used its CPU
         * since its ThreadStart (0 for a new OS thread; more for one that ran
         * before, like the launcher's thread re-attached as DestroyJavaVM,
         * whose earlier CPU was main's and was sampled as main's); one that ran
         * before us starts from now. */
        last = (s->flags & RP_SLOT_FROM_START) ? s->start_cpu_ns : (uint64_t)cpu;
        atomic_store_explicit(&k->cpu_ns, last, memory_order_relaxed);
        atomic_store_explicit(&k->gen1, gen + 1, memory_order_release);
    }
    if ((uint64_t)cpu <= last)
        goto out;
    if (atomic_load_explicit(&g_paused, memory_order_relaxed)) {
        /* Paused: keep the baseline moving, so the first sample after a
         * restart weighs only the CPU used since. */
        atomic_store_explicit(&k->cpu_ns, (uint64_t)cpu, memory_order_relaxed);
        goto out;
    }
    uint64_t weight = (uint64_t)cpu - last;
    atomic_store_explicit(&k->cpu_ns, (uint64_t)cpu, memory_order_relaxed);
    struct rp_sample_hdr h;
    memset(&h, 0, sizeof h);
    h.type = RP_SAMPLE_CPU_JVMTI;
    h.time = rp_mono_ns();
    h.weight = weight;
    h.slot = s->index;
    h.gen = gen;
    /* A carrier's own stack stops where its virtual thread's begins: the
     * stack is the virtual thread's it has mounted now, if any. */
    jthread vt = rp_vthreads_mounted(jni, t);
    h.vthread = vt ? rp_vthreads_of(jni, vt) : 0;
    h.status = rp_callstack_of(vt ? vt : t, g_java, g_cfg.depth, &h.njava, &h.flags);
    if (vt)
        (*jni)->DeleteLocalRef(jni, vt);
    struct iovec iov[2] = {{&h, sizeof h}, {g_java, (size_t)h.njava * sizeof *g_java}};
    rp_ring_pushv(g_ring, iov, 2);
out:
    (*jni)->DeleteLocalRef(jni, t);
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    atomic_store(&g_tid, rp_gettid());
    rp_threads_add_agent(atomic_load(&g_tid));
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&g_stop)) {
        uint64_t ns = (uint64_t)next.tv_nsec + atomic_load(&g_interval_ns);
        next.tv_sec += (time_t)(ns / 1000000000u);
        next.tv_nsec = (long)(ns % 1000000000u);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        /* After a long stall (a pause, a suspended process) do not try to catch
         * up: the CPU deltas already carry the weight. */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec + 1)
            next = now;
        uint32_t n = rp_threads_count();
        for (uint32_t i = 0; i < n && !atomic_load(&g_stop); i++) {
            struct rp_slot *s = rp_threads_slot(i);
            if (atomic_load(&s->state) == RP_SLOT_LIVE && (s->flags & RP_SLOT_JAVA))
                sample_slot(jvmti, jni, s);
        }
    }
    atomic_store(&g_running, 0);
}

int rp_jvmti_start(jvmtiEnv *jvmti, JNIEnv *jni, const struct rp_jvmti_config *cfg,
                   char *err, size_t errlen)
{
    g_cfg = *cfg;
    atomic_store(&g_interval_ns, cfg->interval_ns);
    g_ring = rp_ring_create(cfg->ring_bytes);
    g_java = calloc(cfg->depth, sizeof *g_java);
    if (!g_ring || !g_java) {
        snprintf(err, errlen, "out of memory for the sampler (ring of %zu bytes)",
                 cfg->ring_bytes);
        return -1;
    }
    atomic_store(&g_running, 1);
    if (rp_jthread_run(jvmti, jni, "ringprof-sampler", sampler_main, NULL,
                            JVMTI_THREAD_MAX_PRIORITY, err, errlen) < 0) {
        atomic_store(&g_running, 0);
        return -1;
    }
    return 0;
}

void rp_jvmti_stop(unsigned wait_ms)
{
    atomic_store(&g_stop, 1);
    for (unsigned i = 0; i < wait_ms && atomic_load(&g_running); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

void rp_jvmti_pause(int paused)
{
    atomic_store(&g_paused, paused);
}

void rp_jvmti_set_interval(uint64_t interval_ns)
{
    atomic_store(&g_interval_ns, interval_ns);
}

/* ---------------------------------------------------------- the cpu kind -- */

/* The cpu kind with this engine (kind.h): "stop cpu" pauses the sampler
 * (rp_jvmti_pause), "set interval" changes its period and the next chunks'. */
static int kind_start(const struct rp_engine_env *env, char *err, size_t errlen)
{
    const struct rp_options *o = env->opt;
    struct rp_jvmti_config jc = {o->interval_ns, o->depth, o->ring_bytes};
    rp_cpu_set_period(o->interval_ns);
    return rp_jvmti_start(env->jvmti, env->jni, &jc, err, errlen);
}

static int kind_on(void)
{
    return !atomic_load(&g_paused);
}

static int kind_switch(int on, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    rp_jvmti_pause(!on);
    return 0;
}

static uint64_t kind_period(void)
{
    return atomic_load(&g_interval_ns);
}

static int set_interval(uint64_t ns, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    rp_jvmti_set_interval(ns);
    rp_cpu_set_period(ns);
    return 0;
}

static void kind_effective(struct rp_json *j)
{
    rp_json_kv_string(j, "engine", "jvmti");
    rp_json_kv_string(j, "timer", "none");
    rp_json_kv_u64(j, "interval_ns", atomic_load(&g_interval_ns));
    rp_json_kv_bool(j, "native", 0);
}

const struct rp_kind rp_kind_cpu_jvmti = {
    .engine = {
        .name = RP_KIND_CPU, .kind = RP_CTL_KIND_CPU, .phase = RP_ENGINE_PHASE_THREAD,
        .flags = RP_ENGINE_LAST,
        .start = kind_start, .stop = rp_jvmti_stop, .on = kind_on, .switch_kind = kind_switch,
        .settings = {{RP_CTL_KEY_INTERVAL, 0, kind_period, set_interval}},
        .period = kind_period, .effective = kind_effective,
        .thread_tid = rp_jvmti_sampler_tid,
    },
    /* The sampler's own ring; its losses are counted as the threads' rings'. */
    .records = {{RP_SAMPLE_CPU_JVMTI, rp_cpu_flush, NULL, "jvmti"}},
    .flags = RP_KIND_RING_LOSSES,
    .place = 4,
    .ring = rp_jvmti_ring,
    .thread_cpu = rp_jvmti_cpu_ns,
    .chunk = rp_cpu_chunk,
    .thread_samples = rp_cpu_written,
};
