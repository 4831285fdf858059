/*
 * src/control_ops.c — what the agent answers on its control socket (see
 * control_ops.h; the protocol is docs/control.md).
 *
 * Every callback runs on the server thread. None of them touches the recording:
 * flush and rotate post a request to the flusher and wait for its answer (at most
 * FLUSH_WAIT_MS), and status reads what the flusher publishes after each pass. So
 * the only new shared state is the flusher's totals (one mutex, taken once per
 * pass) and a per-slot sample count (one relaxed atomic add per sample written).
 *
 * CPU sampling is switched by its timers, not by the handler: "stop cpu" parks
 * every timer (threadtimer.h, rp_threads_set_timers) so no signal is sent at all, and
 * "set interval" re-arms them with the new period. The jvmti engine's sampler is
 * paused instead. Allocation sampling is switched with its JVMTI event and
 * interval (alloc.h); those JVMTI calls must come from a thread attached to the
 * JVM, which this server's thread is not, so they run on the flusher
 * (rp_flusher_call). So does lock contention's switch (its events, and the
 * capability the first time). "start"/"stop" without a kind, "all", and "cpu
 * alloc lock" are the same request: every kind the agent can sample.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "control_ops.h"
#include "cputimer.h"
#include "engine_async.h"
#include "engine_jvmti.h"
#include "engine_wall.h"
#include "alloc.h"
#include "flusher.h"
#include "histogram.h"
#include "lock.h"
#include "log.h"
#include "threads.h"
#include "threadtimer.h"

/* A flush waits this long for the flusher: a pass takes milliseconds, an fsync
 * on a sick disk may take seconds; beyond this the client gets a clear error. */
#define FLUSH_WAIT_MS 10000
/* Threads listed in status, by samples; "threads_total" counts them all. */
#define STATUS_THREADS_MAX 50

static struct {
    struct rp_control *ctl;
    struct rp_options opt;
    int async;
    _Atomic int cpu_on;
    _Atomic uint64_t interval_ns;
    uint64_t start_mono_ns;
    char discovery[PATH_MAX];
} C;

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(pid_t tid)
{
    struct timespec ts;
    clockid_t c = (clockid_t)(((unsigned)~tid << 3) | 6u);   /* threads.h */
    if (tid <= 0 || clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ status -- */

static void status_options(struct rp_json *j)
{
    const struct rp_options *o = &C.opt;
    rp_json_kv_string(j, "options", o->raw);
    rp_json_key(j, "effective");
    rp_json_object_begin(j);
    rp_json_kv_string(j, "engine", C.async ? "async" : "jvmti");
    rp_json_kv_string(j, "timer", C.async ? rp_cputimer_source_name() : "none");
    rp_json_kv_u64(j, "interval_ns", atomic_load(&C.interval_ns));
    rp_json_kv_u64(j, "depth", o->depth);
    rp_json_kv_u64(j, "flush_ns", o->flush_ns);
    rp_json_kv_bool(j, "native", C.async && o->native);
    struct rp_alloc_state a;
    rp_alloc_state(&a);
    rp_json_kv_u64(j, "alloc_bytes", a.interval);
    rp_json_kv_bool(j, "live", a.live);
    struct rp_lock_state l;
    rp_lock_state(&l);
    rp_json_kv_u64(j, "lock_ns", l.on ? l.threshold_ns : 0);
    rp_json_kv_bool(j, "lock", l.on);
    rp_json_kv_u64(j, "wall_ns", rp_wall_on() ? rp_wall_interval() : 0);
    rp_json_kv_u64(j, "wallthreads", rp_wall_threads());
    rp_json_object_end(j);
}

/* Wall-clock sampling (engine_wall.h): its state and what the sampler counted
 * (visits pushed; those then written are in "samples"). */
static void status_wall(struct rp_json *j)
{
    struct rp_wall_stats st;
    rp_wall_stats(&st);
    rp_json_key(j, "wall");
    rp_json_object_begin(j);
    rp_json_kv_bool(j, "on", rp_wall_on());
    rp_json_kv_u64(j, "interval_ns", rp_wall_interval());
    rp_json_kv_u64(j, "threads_per_tick", rp_wall_threads());
    rp_json_kv_u64(j, "threads", st.tracked);
    rp_json_kv_u64(j, "round_ns", st.last_round_ns);
    rp_json_kv_u64(j, "ticks", st.ticks);
    rp_json_kv_u64(j, "visits", st.visits);
    rp_json_kv_u64(j, "walks", st.walks);
    rp_json_kv_u64(j, "repeats", st.repeats);
    rp_json_kv_u64(j, "proc_failed", st.proc_failed);
    rp_json_kv_u64(j, "cpu_ns", thread_cpu_ns(rp_wall_sampler_tid()));
    rp_json_object_end(j);
}

/* Allocation sampling: its state, and what the callbacks counted (samples
 * pushed; those then written are in "samples"). */
static void status_alloc(struct rp_json *j)
{
    struct rp_alloc_state a;
    struct rp_alloc_stats st;
    rp_alloc_state(&a);
    rp_alloc_stats(&st);
    rp_json_key(j, "alloc");
    rp_json_object_begin(j);
    rp_json_kv_bool(j, "available", a.available);
    rp_json_kv_bool(j, "on", a.on);
    rp_json_kv_u64(j, "interval_bytes", a.interval);
    rp_json_kv_u64(j, "effective_bytes", a.effective);
    rp_json_kv_u64(j, "rate_max", a.rate_max);
    rp_json_kv_u64(j, "interval_changes", st.adaptations);
    rp_json_kv_u64(j, "callback_ns", st.callback_ns);
    rp_json_kv_bool(j, "live", a.live);
    rp_json_kv_u64(j, "sampled", st.samples);
    rp_json_kv_u64(j, "ring_dropped", st.ring_dropped);
    rp_json_kv_u64(j, "no_thread", st.no_thread);
    rp_json_kv_u64(j, "live_untracked", st.untracked);
    rp_json_kv_u64(j, "freed", st.freed);
    rp_json_kv_u64(j, "gcs", rp_alloc_gc_count());
    rp_json_object_end(j);
}

/* Lock contention: its state and what the callbacks counted. */
static void status_lock(struct rp_json *j)
{
    struct rp_lock_state a;
    struct rp_lock_stats st;
    rp_lock_state(&a);
    rp_lock_stats(&st);
    rp_json_key(j, "lock");
    rp_json_object_begin(j);
    rp_json_kv_bool(j, "available", a.available);
    rp_json_kv_bool(j, "on", a.on);
    rp_json_kv_u64(j, "threshold_ns", a.threshold_ns);
    rp_json_kv_u64(j, "recorded", st.samples);
    rp_json_kv_u64(j, "below_threshold", st.below_threshold);
    rp_json_kv_u64(j, "owner_unknown", st.owner_unknown);
    rp_json_kv_u64(j, "ring_dropped", st.ring_dropped);
    rp_json_kv_u64(j, "no_thread", st.no_thread);
    rp_json_kv_u64(j, "callback_ns", st.callback_ns);
    rp_json_object_end(j);
}

/* "lost" (lost.<reason>: the ring's three reasons always, others once seen,
 * write among them) and
 * "walk" (every other counter: agct.*, walk.*, jvmti.*), totals since start. */
static void status_counters(struct rp_json *j, const struct rp_flusher_totals *t)
{
    static const char *const ring[] = {"ring_full", "nested", "too_big"};
    const size_t plen = strlen(RP_COUNTER_LOST_PREFIX);
    rp_json_key(j, "lost");
    rp_json_object_begin(j);
    for (size_t r = 0; r < sizeof ring / sizeof ring[0]; r++) {
        uint64_t v = 0;
        for (uint32_t i = 0; i < t->ncounters; i++)
            if (!strncmp(t->counters[i].name, RP_COUNTER_LOST_PREFIX, plen) &&
                !strcmp(t->counters[i].name + plen, ring[r]))
                v = t->counters[i].total;
        rp_json_kv_u64(j, ring[r], v);
    }
    for (uint32_t i = 0; i < t->ncounters; i++) {
        const char *n = t->counters[i].name;
        if (strncmp(n, RP_COUNTER_LOST_PREFIX, plen) != 0 || !strcmp(n + plen, "ring_full") ||
            !strcmp(n + plen, "nested") || !strcmp(n + plen, "too_big"))
            continue;
        rp_json_kv_u64(j, n + plen, t->counters[i].total);
    }
    /* The chunk writer's own loss: samples handed to it whose segment could not be
     * written. The files count them as lost.write, so status does too. */
    if (t->rec.samples_failed)
        rp_json_kv_u64(j, "write", t->rec.samples_failed);
    rp_json_object_end(j);
    rp_json_key(j, "walk");
    rp_json_object_begin(j);
    for (uint32_t i = 0; i < t->ncounters; i++)
        if (strncmp(t->counters[i].name, RP_COUNTER_LOST_PREFIX, plen) != 0)
            rp_json_kv_u64(j, t->counters[i].name, t->counters[i].total);
    rp_json_object_end(j);
}

struct thread_row {
    uint64_t samples;
    uint32_t index;
};

static int by_samples_desc(const void *a, const void *b)
{
    const struct thread_row *x = a, *y = b;
    return x->samples < y->samples ? 1 : x->samples > y->samples ? -1
         : (x->index > y->index) - (x->index < y->index);
}

/* The live threads with the most samples written, and how many live threads. */
static void status_threads(struct rp_json *j)
{
    uint32_t n = rp_threads_count(), live = 0;
    struct thread_row *rows = n ? malloc(n * sizeof *rows) : NULL;
    for (uint32_t i = 0; i < n && rows; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (s && atomic_load(&s->state) == RP_SLOT_LIVE)
            rows[live++] = (struct thread_row){atomic_load(&s->written), i};
    }
    if (rows)
        qsort(rows, live, sizeof *rows, by_samples_desc);
    rp_json_key(j, "threads");
    rp_json_array_begin(j);
    for (uint32_t k = 0; k < live && k < STATUS_THREADS_MAX; k++) {
        struct rp_slot *s = rp_threads_slot(rows[k].index);
        struct rp_slot_meta m;
        rp_threads_meta(s, &m);
        rp_json_object_begin(j);
        rp_json_kv_u64(j, "tid", m.tid > 0 ? (uint64_t)m.tid : 0);
        rp_json_kv_string(j, "name", m.name[0] ? m.name : "[unnamed]");
        rp_json_kv_u64(j, "samples", rows[k].samples);
        rp_json_kv_u64(j, "cpu_ns", thread_cpu_ns(m.tid));
        rp_json_object_end(j);
    }
    rp_json_array_end(j);
    rp_json_kv_u64(j, "threads_total", live);
    free(rows);
}

/* The agent's own cost: its threads' CPU (flusher, sampler, this one) and the
 * handler's time per sample since start (async engine). */
static void status_agent(struct rp_json *j)
{
    uint64_t cpu = thread_cpu_ns(rp_flusher_tid()) + thread_cpu_ns(rp_jvmti_sampler_tid()) +
                   thread_cpu_ns(rp_wall_sampler_tid()) + rp_control_cpu_ns(C.ctl);
    rp_json_key(j, "agent");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "cpu_ns", cpu);
    if (C.async) {
        static struct rp_hist_snap h;         /* 2.5 KiB; callbacks never overlap */
        rp_async_hist(&h);
        rp_json_kv_u64(j, "handler_samples", rp_hist_total(&h));
        rp_json_kv_u64(j, "handler_ns_median", rp_hist_quantile(&h, 0.50));
        rp_json_kv_u64(j, "handler_ns_p99", rp_hist_quantile(&h, 0.99));
    }
    rp_json_object_end(j);
}

/* The CPU timers (async engine): their source, and how many of each kind were
 * made since start (a thread whose perf counter could not be opened gets a
 * POSIX timer: perf_failed, with the last reason). */
static void status_timers(struct rp_json *j)
{
    struct rp_cputimer_stats st;
    rp_cputimer_stats(&st);
    rp_json_key(j, "timers");
    rp_json_object_begin(j);
    rp_json_kv_string(j, "source", rp_cputimer_source_name());
    rp_json_kv_u64(j, "perf", st.perf);
    rp_json_kv_u64(j, "posix", st.posix);
    rp_json_kv_u64(j, "perf_failed", st.perf_failed);
    if (st.perf_failed)
        rp_json_kv_string(j, "perf_error", strerror(st.last_errno));
    rp_json_object_end(j);
}

static int op_status(void *ctx, struct rp_json *j, char *err, size_t errlen)
{
    (void)ctx; (void)err; (void)errlen;
    static struct rp_flusher_totals t;        /* large; callbacks never overlap */
    rp_flusher_totals(&t);
    int on = atomic_load(&C.cpu_on);
    rp_json_kv_string(j, "state", on ? "running" : "stopped");
    status_options(j);
    rp_json_key(j, "sampling");
    rp_json_array_begin(j);
    if (on)
        rp_json_string(j, "cpu");
    struct rp_alloc_state a;
    rp_alloc_state(&a);
    if (a.on)
        rp_json_string(j, "alloc");
    struct rp_lock_state l;
    rp_lock_state(&l);
    if (l.on)
        rp_json_string(j, "lock");
    if (rp_wall_on())
        rp_json_string(j, "wall");
    rp_json_array_end(j);
    rp_json_kv_u64(j, "interval_ns", atomic_load(&C.interval_ns));
    rp_json_key(j, "samples");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "cpu", t.samples);
    rp_json_kv_u64(j, "alloc", t.alloc_samples);
    rp_json_kv_u64(j, "gc", t.gc_samples);
    rp_json_kv_u64(j, "live", t.live_samples);
    rp_json_kv_u64(j, "lock", t.lock_samples);
    rp_json_kv_u64(j, "wall", t.wall_samples);
    rp_json_object_end(j);
    if (C.async)
        status_timers(j);
    status_alloc(j);
    status_lock(j);
    status_wall(j);
    status_counters(j, &t);
    status_threads(j);
    rp_json_kv_u64(j, "bytes_written", t.rec.bytes_written);
    rp_json_key(j, "chunks");
    rp_json_object_begin(j);
    if (t.current[0])
        rp_json_kv_string(j, "current", t.current);
    else
        rp_json_kv_string(j, "current", NULL);
    rp_json_kv_u64(j, "finished", t.rec.chunks_finished);
    rp_json_kv_u64(j, "failed", t.rec.chunks_failed);
    rp_json_kv_u64(j, "segments_failed", t.rec.segments_failed);
    rp_json_kv_u64(j, "deleted", t.rec.chunks_deleted);
    rp_json_object_end(j);
    status_agent(j);
    rp_json_kv_u64(j, "uptime_ns", now_ns(CLOCK_MONOTONIC) - C.start_mono_ns);
    return 0;
}

/* ------------------------------------------------------------ flush, rotate -- */

/* Both drain every ring first: draining costs one pass, and it means the file
 * holds every sample taken before the request (docs/control.md). */
static int op_flush(void *ctx, char *path, size_t pathlen, char *err, size_t errlen)
{
    (void)ctx;
    return rp_flusher_request(path, pathlen, FLUSH_WAIT_MS, err, errlen);
}

/* ----------------------------------------------------------- start, stop, set -- */

/* Apply the CPU kind's state and period to the engine. */
static int apply_cpu(int on, uint64_t interval_ns, char *err, size_t errlen)
{
    if (!C.async) {
        rp_jvmti_set_interval(interval_ns);
        rp_jvmti_pause(!on);
        return 0;
    }
    rp_async_set_interval(interval_ns);
    if (rp_threads_set_timers(interval_ns, !on) != 0) {
        snprintf(err, errlen, "the agent is shutting down; its timers are gone");
        return -1;
    }
    return 0;
}

/* JVMTI calls for allocation sampling run on the flusher (rp_flusher_call); the
 * argument travels as a value in the pointer, since a call that times out still
 * runs later. */
static int call_alloc_switch(void *arg, char *err, size_t errlen)
{
    return rp_alloc_switch(arg != NULL, err, errlen);
}

static int call_alloc_interval(void *arg, char *err, size_t errlen)
{
    return rp_alloc_set_interval((uint64_t)(uintptr_t)arg, err, errlen);
}

static int alloc_switch(int on, char *err, size_t errlen)
{
    return rp_flusher_call(call_alloc_switch, on ? (void *)1 : NULL, FLUSH_WAIT_MS, err,
                           errlen);
}

static int alloc_interval(uint64_t bytes, char *err, size_t errlen)
{
    return rp_flusher_call(call_alloc_interval, (void *)(uintptr_t)bytes, FLUSH_WAIT_MS,
                           err, errlen);
}

static int call_lock_switch(void *arg, char *err, size_t errlen)
{
    return rp_lock_switch(arg != NULL, err, errlen);
}

static int lock_switch(int on, char *err, size_t errlen)
{
    return rp_flusher_call(call_lock_switch, on ? (void *)1 : NULL, FLUSH_WAIT_MS, err,
                           errlen);
}

/* The wall sampler's thread is made on the flusher, which is attached to the
 * JVM (RunAgentThread needs a JNIEnv). */
static int call_wall_launch(void *arg, char *err, size_t errlen)
{
    (void)arg;
    return rp_wall_launch(NULL, err, errlen);
}

/* Wall-clock sampling on or off. Started at run time when wall=off at start:
 * the sampler is launched then, at the interval of the last `set wall=` (or
 * RP_WALL_DEFAULT_NS). */
static int wall_switch(int on, char *err, size_t errlen)
{
    if (on && !rp_wall_launched())
        return rp_flusher_call(call_wall_launch, NULL, FLUSH_WAIT_MS, err, errlen);
    rp_wall_switch(on);
    return 0;
}

/* "all" (or no kind) means every kind. Naming alloc where allocation sampling
 * is unavailable is an error; "all" then switches cpu alone. Likewise "all"
 * switches wall only if its sampler runs (wall= was given, or `start wall`
 * came): starting every kind does not start a kind that was never asked for. */
static int switch_kinds(unsigned kinds, int on, char *err, size_t errlen)
{
    struct rp_alloc_state a;
    rp_alloc_state(&a);
    if (kinds == 0)
        kinds = RP_CTL_KIND_ALL;
    if ((kinds & RP_CTL_KIND_ALLOC) && (kinds != RP_CTL_KIND_ALL || a.available) &&
        alloc_switch(on, err, errlen) != 0)
        return -1;
    /* "all" starts lock contention only where it was configured (lock= or set
     * lock=): it has no threshold otherwise; "start lock" uses the last one
     * given, else RP_LOCK_DEFAULT_THRESHOLD_NS. */
    struct rp_lock_state l;
    rp_lock_state(&l);
    if ((kinds & RP_CTL_KIND_LOCK) &&
        (kinds != RP_CTL_KIND_ALL || (l.available && (l.configured || !on))) &&
        lock_switch(on, err, errlen) != 0)
        return -1;
    if ((kinds & RP_CTL_KIND_WALL) && (kinds != RP_CTL_KIND_ALL || rp_wall_launched()) &&
        wall_switch(on, err, errlen) != 0)
        return -1;
    if (kinds & RP_CTL_KIND_CPU) {
        if (apply_cpu(on, atomic_load(&C.interval_ns), err, errlen) != 0)
            return -1;
        atomic_store(&C.cpu_on, on);
    }
    return 0;
}

static int op_start(void *ctx, unsigned kinds, char *err, size_t errlen)
{
    (void)ctx;
    return switch_kinds(kinds, 1, err, errlen);
}

static int op_stop(void *ctx, unsigned kinds, char *err, size_t errlen)
{
    (void)ctx;
    return switch_kinds(kinds, 0, err, errlen);
}

static int op_set(void *ctx, const struct rp_ctl_setting *set, size_t n, char *err,
                  size_t errlen)
{
    (void)ctx;
    uint64_t interval = atomic_load(&C.interval_ns), alloc = 0, lock = 0, wall = 0;
    uint64_t wallthreads = 0;
    int set_lock = 0;
    for (size_t i = 0; i < n; i++) {
        if (set[i].key == RP_CTL_KEY_WALL)
            wall = set[i].value;
        if (set[i].key == RP_CTL_KEY_WALLTHREADS)
            wallthreads = set[i].value;
        if (set[i].key == RP_CTL_KEY_ALLOC)
            alloc = set[i].value;
        if (set[i].key == RP_CTL_KEY_LOCK)
            lock = set[i].value, set_lock = 1;
        if (set[i].key == RP_CTL_KEY_INTERVAL)
            interval = set[i].value;
    }
    /* All or none: the allocation interval first, since it is the one that can
     * be refused (unavailable) without anything to undo. */
    struct rp_alloc_state a;
    struct rp_lock_state l;
    rp_alloc_state(&a);
    rp_lock_state(&l);
    char undo_err[256];
    /* The lock threshold first: refused only when lock contention is
     * unavailable, and undone by setting the old one back. */
    if (set_lock && rp_lock_set_threshold(lock, err, errlen) != 0)
        return -1;
    if (alloc && alloc_interval(alloc, err, errlen) != 0) {
        if (set_lock)
            rp_lock_set_threshold(l.threshold_ns, undo_err, sizeof undo_err);
        return -1;
    }
    if (apply_cpu(atomic_load(&C.cpu_on), interval, err, errlen) != 0) {
        if (alloc)
            alloc_interval(a.interval, undo_err, sizeof undo_err);
        if (set_lock)
            rp_lock_set_threshold(l.threshold_ns, undo_err, sizeof undo_err);
        return -1;
    }
    rp_flusher_set_interval(interval);      /* the kind's period, for new chunks */
    atomic_store(&C.interval_ns, interval);
    /* Wall settings cannot fail; they take effect at the sampler's next tick
     * (and the wall kind's period with the next chunk). */
    if (wall)
        rp_wall_set_interval(wall);
    if (wallthreads)
        rp_wall_set_threads((uint32_t)wallthreads);
    return 0;
}

/* ------------------------------------------------------- server housekeeping -- */

static void op_log(void *ctx, const char *line)
{
    (void)ctx;
    rp_log("%s", line);
}

/* The server thread is not a Java thread, so only the /proc scan could find it:
 * mark it as the agent's first, then retire a slot a scan may have made for it
 * in the moment between its creation and this call. */
static void op_thread_start(void *ctx)
{
    (void)ctx;
    rp_threads_add_agent(rp_gettid());
    rp_threads_detach_current();
}

static const struct rp_control_ops OPS = {
    .status = op_status,
    .flush = op_flush,
    .rotate = op_flush,
    .start = op_start,
    .stop = op_stop,
    .set = op_set,
    .log = op_log,
    .thread_start = op_thread_start,
};

/* The socket's path: ctl=PATH (made absolute, so the discovery file is usable
 * from anywhere), or the default in the recording directory. */
static int socket_path(const struct rp_control_ops_config *cfg, char *buf, size_t cap,
                       char *err, size_t errlen)
{
    char cwd[PATH_MAX];
    if (cfg->opt->ctl[0]) {
        if (cfg->opt->ctl[0] == '/' || !getcwd(cwd, sizeof cwd))
            snprintf(buf, cap, "%s", cfg->opt->ctl);
        else if ((size_t)snprintf(buf, cap, "%s/%s", cwd, cfg->opt->ctl) >= cap)
            snprintf(buf, cap, "%s", cfg->opt->ctl);
        return 0;
    }
    char dir[PATH_MAX];
    const char *d = cfg->rec_dir && realpath(cfg->rec_dir, dir) ? dir : cfg->rec_dir;
    return rp_control_default_path(buf, cap, d, (long)getpid(), err, errlen);
}

int rp_control_ops_start(const struct rp_control_ops_config *cfg)
{
    if (cfg->opt->ctl_off || C.ctl)
        return -1;
    C.opt = *cfg->opt;
    C.async = cfg->async;
    atomic_store(&C.cpu_on, 1);
    atomic_store(&C.interval_ns, cfg->opt->interval_ns);
    C.start_mono_ns = now_ns(CLOCK_MONOTONIC);
    char path[PATH_MAX], err[1024];
    if (socket_path(cfg, path, sizeof path, err, sizeof err) != 0 ||
        !(C.ctl = rp_control_start(path, &OPS, NULL, err, sizeof err))) {
        rp_log("no control socket (profiling goes on without one): %s", err);
        return -1;
    }
    struct rp_discovery d = {0, rp_control_path(C.ctl),
                             cfg->main && cfg->main[0] ? cfg->main : NULL, C.opt.raw,
                             now_ns(CLOCK_REALTIME)};
    if (rp_discovery_write(&d, NULL, C.discovery, sizeof C.discovery, err,
                           sizeof err) != 0) {
        C.discovery[0] = '\0';
        rp_log("no discovery file, so `ringprof list` will not show this JVM (the "
               "control socket %s works): %s", rp_control_path(C.ctl), err);
    }
    return 0;
}

void rp_control_ops_stop(void)
{
    rp_discovery_remove(C.discovery);
    C.discovery[0] = '\0';
    rp_control_stop(C.ctl);
    C.ctl = NULL;
}
