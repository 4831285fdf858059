/*
 * tools/outputs/out_jfr.c — `ringprof convert --format jfr`: a JDK Flight Recorder
 * file (tools/outputs/jfr.h) that JDK Mission Control, IntelliJ IDEA, the JDK's
 * `jfr` tool, the jdk.jfr.consumer API, Pyroscope's parser (grafana/jfr-parser)
 * and async-profiler's converter open as they are.
 *
 * Streaming. JFR events carry their own time, thread and stack, so every sample
 * is a few events (below), written as the profile builder reads it
 * (rp_prof_options.on_sample, with all_kinds): the writer keeps no samples.
 * Stacks are the builder's calling context tree: a JFR stack trace id is the id
 * of the CCT node of the sample's leaf frame, so memory is the distinct call
 * paths, frames and methods (as for every other format), the threads and the
 * symbols. After the last sample the checkpoint (the pools of threads, stack
 * traces, methods, classes, packages, symbols and the fixed ones) and the
 * metadata are written, and the header is patched with their offsets; the
 * output must therefore be seekable, or the events are spooled to a temporary
 * file and copied (a pipe).
 *
 * Mapping (docs/profiles.md, "jfr", is the users' version). The JDK's event
 * types have the JDK's fields only (jfr.h); each sample is also one event of a
 * ringprof type with what ringprof knows beyond them:
 *   cpu    jdk.ExecutionSample: viewers count the events, one an interval of
 *          CPU, so after each sample the events written are the CPU read so far
 *          over the period, rounded (cpu_events): a sample of weight w is n
 *          events at its time, n near w / period (0 or more, at most MAX_SPLIT);
 *          and ringprof.CPUSample {weight w, executionSamples n}.
 *   wall   ringprof.WallClockSample with the JDK thread state, ringprof's state
 *          name, weight, CPU time, repeat, the parked-on class and its owner;
 *          in states native and io also jdk.NativeMethodSample, if a frame is
 *          left of the stack (the JDK samples no thread without a Java frame).
 *   alloc  jdk.ObjectAllocationSample {objectClass, weight} and
 *          ringprof.AllocationSample {..., objects, size, arrayLength}.
 *   live   jdk.OldObjectSample at the snapshot's time, allocationTime = snapshot -
 *          age_ms; ringprof.LiveObject {..., weight, objects, ageGcs}.
 *   lock   jdk.JavaMonitorEnter {duration, monitorClass, previousOwner}; a wait
 *          still in progress (kind lock.waiting, the one record that stands for
 *          it) the same, its duration its age then, and beside it a
 *          ringprof.Sample of kind lock.waiting whose markers say
 *          "[unfinished]" (the builder's frame, which no JDK event can carry).
 *   gc     jdk.GarbageCollection and jdk.GCPhasePause (the pause), and
 *          jdk.GCHeapSummary "After GC" when the heap was read.
 *   other  ringprof.Sample {kind, weight, unit}.
 *   gauges ringprof.Gauge each; also jdk.CPULoad (process CPU rates over the
 *          header's host.cpus), jdk.ResidentSetSize, jdk.ClassLoadingStatistics,
 *          jdk.JavaThreadStatistics (the four Java thread gauges of an instant).
 *   thread CPU readings ringprof.ThreadCPUTime, and jdk.ThreadCPULoad from two
 *          consecutive ones (thread_cpu_load); counters ringprof.Counter at
 *          their segment's last time; every chunk ringprof.Recording; every
 *          recording jdk.JVMInformation.
 * The JDK types that views read and ringprof has no data for (jdk.Shutdown, the
 * young and old collections, ...) are declared (jfr.c) and never written.
 * Frames: the builder's, at RP_GRAN_FULL (line and bci both, filters see methods),
 * overloads apart (RP_SIG_KEEP: each method with its own descriptor), but its
 * markers, which every reader would take for methods (struct stack_note):
 * "[truncated]" and the markers of missing frames become the stack's truncated
 * flag, a stack of markers alone has no frames, and the ringprof events name
 * them in `markers`; alloc and live samples' class leaf is the event's class
 * field, not a frame.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "jfr_writer.h"
#include "model/xalloc.h"
#include "out_common.h"

/* The most events one CPU sample becomes: 1000 intervals is 10 s of CPU at the
 * default 10 ms that no timer signal interrupted; only a damaged chunk weighs
 * more, and it would otherwise write gigabytes (its weight still adds up; the
 * CPU beyond 1000 intervals is not carried to the next samples). */
#define MAX_SPLIT 1000u

/* --------------------------------------------------------------- samples -- */

static uint64_t wall_of(const struct jfr *j, uint64_t mono)
{
    return rp_clock_time(&j->st->clock, mono);
}

static int in_range(const struct jfr *j, uint64_t wall)
{
    return (!j->po->from_wall || wall >= j->po->from_wall) &&
           (!j->po->to_wall || wall < j->po->to_wall);
}

/* JFR's name of a ringprof thread state (jfr.h: JFR_STATE_*). */
static uint64_t jdk_state(unsigned st)
{
    switch (st) {
    case RP_TS_RUNNING: case RP_TS_RUNNABLE: case RP_TS_NATIVE: case RP_TS_IO:
        return JFR_STATE_RUNNABLE;
    case RP_TS_BLOCKED: return JFR_STATE_BLOCKED_ON_MONITOR_ENTER;
    case RP_TS_WAITING: return JFR_STATE_IN_OBJECT_WAIT;
    case RP_TS_PARKED: return JFR_STATE_PARKED;
    case RP_TS_SLEEPING: return JFR_STATE_SLEEPING;
    default: return JFR_STATE_UNKNOWN;
    }
}

/* How many jdk.ExecutionSample events the next CPU sample (weight w) is, so that
 * the events written stay round(CPU read / period): with the carry c in [-h,
 * p - h) (h = p/2), the sample adds w = q p + r, and n = q + (c + r + h >= p)
 * leaves c' = c + r - (n - q) p in the same range. Exact integer arithmetic for
 * any w; a sample of more than MAX_SPLIT periods (damaged) resets the carry. A
 * kind without a period is one event a sample. */
static uint64_t cpu_events(struct jfr *j, uint64_t p, uint64_t w)
{
    if (!p || p > (uint64_t)INT64_MAX / 4)
        return 1;
    int64_t h = (int64_t)(p / 2);
    if (p != j->carry_period) {      /* another recording's interval: rescale */
        double c = j->carry_period ? (double)j->carry * (double)p / (double)j->carry_period : 0;
        j->carry = c < (double)-h ? -h : c >= (double)((int64_t)p - h) ? (int64_t)p - h - 1
                                                                      : (int64_t)c;
        j->carry_period = p;
    }
    uint64_t q = w / p;
    if (q >= MAX_SPLIT) {
        j->carry = 0;
        return MAX_SPLIT;
    }
    int64_t y = j->carry + (int64_t)(w % p) + h;     /* in [0, 2p - 1) */
    int up = y >= (int64_t)p;
    j->carry = y - h - (up ? (int64_t)p : 0);
    return q + (uint64_t)up;
}

static void write_cpu(struct jfr *j, uint64_t wall, uint32_t thr, uint32_t stack,
                      const char *markers, const struct rp_stream_kind *k, uint64_t w)
{
    uint64_t n = cpu_events(j, k->period, w);
    for (uint64_t i = 0; i < n; i++) {
        jfr_ev_begin(j, JFR_EXECUTION_SAMPLE, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        rp_jfr_varint(&j->ev, JFR_STATE_RUNNABLE);
        jfr_ev_end(j, JFR_EXECUTION_SAMPLE);
    }
    jfr_ev_begin(j, JFR_RP_CPU_SAMPLE, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, w);
    rp_jfr_varint(&j->ev, n);
    rp_jfr_string(&j->ev, markers);
    jfr_ev_end(j, JFR_RP_CPU_SAMPLE);
}

/* A wall sample: ringprof.WallClockSample, and in states native and io a
 * jdk.NativeMethodSample when a frame is left of its stack: the JDK samples a
 * thread in native code only when it has a Java frame. */
static void write_wall(struct jfr *j, const struct rp_profile *p, uint64_t wall,
                       uint32_t thr, uint32_t stack, struct stack_note note,
                       const struct rp_stream_kind *k, const struct rp_event *ev)
{
    unsigned st = rp_sx_state(k, ev);
    uint32_t blocker =
        jfr_java_class(j, rp_prof_chunk_class(p, rp_sx_id(k, ev, RP_SX_BLOCKER_CLASS)));
    uint32_t owner = jfr_thread(j, p, rp_sx_id(k, ev, RP_SX_BLOCKER_OWNER));
    if ((st == RP_TS_NATIVE || st == RP_TS_IO) && note.frames) {
        jfr_ev_begin(j, JFR_NATIVE_METHOD_SAMPLE, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        rp_jfr_varint(&j->ev, jdk_state(st));
        jfr_ev_end(j, JFR_NATIVE_METHOD_SAMPLE);
    }
    jfr_ev_begin(j, JFR_RP_WALL_SAMPLE, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, jdk_state(st));
    rp_jfr_varint(&j->ev, ev->u.sample.weight);
    rp_jfr_string(&j->ev, rp_thread_state_name(st));
    rp_jfr_varint(&j->ev, rp_sx_value(k, ev, RP_SX_CPU_NS, 0));
    rp_jfr_bool(&j->ev, rp_sx_value(k, ev, RP_SX_REPEAT, 0) != 0);
    rp_jfr_varint(&j->ev, blocker);
    rp_jfr_varint(&j->ev, owner);
    rp_jfr_string(&j->ev, jfr_markers(j, note));
    jfr_ev_end(j, JFR_RP_WALL_SAMPLE);
}

/* An alloc sample: jdk.ObjectAllocationSample and ringprof.AllocationSample; a
 * live one: jdk.OldObjectSample and ringprof.LiveObject. */
static void write_alloc(struct jfr *j, const struct rp_profile *p, uint64_t wall,
                        uint32_t thr, uint32_t stack, const char *markers,
                        const struct rp_stream_kind *k, const struct rp_event *ev)
{
    uint32_t cls = jfr_java_class(j, rp_prof_chunk_class(p, rp_sx_id(k, ev, RP_SX_CLASS)));
    uint64_t length = rp_sx_value(k, ev, RP_SX_LENGTH, 0), weight = ev->u.sample.weight;
    int live = k->kind == RP_SK_LIVE;
    if (live) {
        jfr_ev_begin(j, JFR_OLD_OBJECT_SAMPLE, wall);
        rp_jfr_varint(&j->ev, 0);                               /* duration      */
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        uint64_t age = rp_sx_value(k, ev, RP_SX_AGE_MS, 0) * 1000000u;
        rp_jfr_long(&j->ev, jfr_ticks(j, wall - age));              /* allocationTime */
        rp_jfr_varint(&j->ev, rp_sx_value(k, ev, RP_SX_SIZE, 0)); /* objectSize    */
        rp_jfr_varint(&j->ev, age);                             /* objectAge     */
        rp_jfr_varint(&j->ev, jfr_source(j, j->st->rec)->heap_used); /* last heap     */
        rp_jfr_varint(&j->ev, jfr_old_object(j, cls));              /* object        */
        rp_jfr_int(&j->ev, length ? (int32_t)(length - 1) : INT32_MIN); /* arrayElements */
        rp_jfr_varint(&j->ev, 0);                               /* root: unknown */
        jfr_ev_end(j, JFR_OLD_OBJECT_SAMPLE);
    } else {
        jfr_ev_begin(j, JFR_ALLOCATION_SAMPLE, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        rp_jfr_varint(&j->ev, cls);
        rp_jfr_varint(&j->ev, weight);
        jfr_ev_end(j, JFR_ALLOCATION_SAMPLE);
    }
    int type = live ? JFR_RP_LIVE_OBJECT : JFR_RP_ALLOCATION_SAMPLE;
    jfr_ev_begin(j, type, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, cls);
    rp_jfr_varint(&j->ev, weight);
    rp_jfr_varint(&j->ev, rp_sx_value(k, ev, RP_SX_OBJECTS, 1));
    if (live) {
        rp_jfr_varint(&j->ev, rp_sx_value(k, ev, RP_SX_AGE_GCS, 0));
    } else {
        rp_jfr_varint(&j->ev, rp_sx_value(k, ev, RP_SX_SIZE, 0));
        rp_jfr_long(&j->ev, rp_sx_has(k, ev, RP_SX_LENGTH) ? (int64_t)length - 1 : -1);
    }
    rp_jfr_string(&j->ev, markers);
    jfr_ev_end(j, type);
}

/* ringprof.Sample: a kind without a JFR type, or what a JDK event of the sample
 * cannot say (its markers). */
static void write_sample(struct jfr *j, uint64_t wall, uint32_t thr, uint32_t stack,
                         const char *markers, const struct rp_stream_kind *k,
                         const struct rp_event *ev)
{
    jfr_ev_begin(j, JFR_RP_SAMPLE, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_string(&j->ev, k->name);
    rp_jfr_varint(&j->ev, ev->u.sample.weight);
    rp_jfr_string(&j->ev, k->unit);
    rp_jfr_string(&j->ev, markers);
    jfr_ev_end(j, JFR_RP_SAMPLE);
}

static void write_lock(struct jfr *j, const struct rp_profile *p, uint64_t wall,
                       uint32_t thr, uint32_t stack, const struct rp_stream_kind *k,
                       const struct rp_event *ev)
{
    uint32_t cls = jfr_java_class(j, rp_prof_chunk_class(p, rp_sx_id(k, ev, RP_SX_CLASS)));
    uint32_t owner = jfr_thread(j, p, rp_sx_id(k, ev, RP_SX_OWNER));
    jfr_ev_begin(j, JFR_MONITOR_ENTER, wall);
    rp_jfr_varint(&j->ev, ev->u.sample.weight);                 /* duration      */
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, cls);
    rp_jfr_varint(&j->ev, owner);
    rp_jfr_varint(&j->ev, 0);                                   /* address       */
    jfr_ev_end(j, JFR_MONITOR_ENTER);
}

static void write_gc(struct jfr *j, uint64_t wall, const struct rp_stream_kind *k,
                     const struct rp_event *ev)
{
    uint64_t d = ev->u.sample.weight, id = rp_sx_value(k, ev, RP_SX_ID, 0);
    jfr_ev_begin(j, JFR_GARBAGE_COLLECTION, wall);
    rp_jfr_varint(&j->ev, d);
    rp_jfr_varint(&j->ev, 0);                                   /* eventThread   */
    rp_jfr_int(&j->ev, (int32_t)id);
    rp_jfr_varint(&j->ev, 0);                                   /* name: unknown */
    rp_jfr_varint(&j->ev, 0);                                   /* cause         */
    rp_jfr_varint(&j->ev, d);                                   /* sumOfPauses   */
    rp_jfr_varint(&j->ev, d);                                   /* longestPause  */
    jfr_ev_end(j, JFR_GARBAGE_COLLECTION);

    jfr_ev_begin(j, JFR_GC_PHASE_PAUSE, wall);
    rp_jfr_varint(&j->ev, d);
    rp_jfr_varint(&j->ev, 0);                                   /* eventThread   */
    rp_jfr_int(&j->ev, (int32_t)id);
    rp_jfr_string(&j->ev, "GC Pause");
    jfr_ev_end(j, JFR_GC_PHASE_PAUSE);

    uint64_t used = rp_sx_value(k, ev, RP_SX_HEAP_USED, 0);
    if (!used)
        return;
    jfr_source(j, j->st->rec)->heap_used = used;
    jfr_ev_begin(j, JFR_GC_HEAP_SUMMARY, wall + d);
    rp_jfr_int(&j->ev, (int32_t)id);
    rp_jfr_varint(&j->ev, JFR_GC_WHEN_AFTER);
    rp_jfr_varint(&j->ev, 0);                                   /* start         */
    rp_jfr_varint(&j->ev, 0);                                   /* committedEnd  */
    rp_jfr_varint(&j->ev, rp_sx_value(k, ev, RP_SX_HEAP_COMMITTED, 0));
    rp_jfr_varint(&j->ev, 0);                                   /* reservedEnd   */
    rp_jfr_varint(&j->ev, 0);                                   /* reservedSize  */
    rp_jfr_varint(&j->ev, used);
    jfr_ev_end(j, JFR_GC_HEAP_SUMMARY);
}

static void on_sample(void *arg, const struct rp_profile *p, uint32_t leaf,
                      const struct rp_event *ev, const struct rp_kind_info *ki)
{
    struct jfr *j = arg;
    (void)ki;
    const struct rp_stream_kind *k = rp_stream_kind(j->st, ev->u.sample.kind);
    uint64_t wall = wall_of(j, ev->u.sample.time);
    uint32_t thr = ev->u.sample.vthread ? jfr_vthread(j, p, ev->u.sample.vthread)
                                        : jfr_thread(j, p, ev->u.sample.thread);
    uint32_t stack = k->kind == RP_SK_GC ? 0 : jfr_stack(j, p, leaf);
    struct stack_note note = jfr_stack_note(j, p, stack);
    const char *markers = jfr_markers(j, note);
    switch (k->kind) {
    case RP_SK_CPU: write_cpu(j, wall, thr, stack, markers, k, ev->u.sample.weight); break;
    case RP_SK_WALL: write_wall(j, p, wall, thr, stack, note, k, ev); break;
    case RP_SK_ALLOC: case RP_SK_LIVE:
        write_alloc(j, p, wall, thr, stack, markers, k, ev);
        break;
    case RP_SK_LOCK: case RP_SK_LOCK_WAITING:
        write_lock(j, p, wall, thr, stack, k, ev);
        /* The JDK's event has no field for ringprof's markers: a wait still in
         * progress ("[unfinished]") is said by a ringprof.Sample beside it. */
        if (markers)
            write_sample(j, wall, thr, stack, markers, k, ev);
        break;
    case RP_SK_GC: write_gc(j, wall, k, ev); break;
    default: write_sample(j, wall, thr, stack, markers, k, ev);
    }
}

/* ------------------------------------------------- gauges, counters, ... -- */

static void write_float(struct jfr *j, double v)
{
    rp_jfr_float(&j->ev, (float)(v < 0 ? 0 : v > 1 ? 1 : v));
}

/* jdk.CPULoad from the process's cumulative user and system CPU: once both
 * gauges have a reading at the same instant, the rates since the previous such
 * pair, as shares of the host's CPUs. */
static void cpu_load(struct jfr *j, struct source *s, uint64_t wall)
{
    if (s->user_t != wall || s->sys_t != wall || !s->cpus)
        return;
    if (s->p_t && wall > s->p_t && s->user >= s->p_user && s->sys >= s->p_sys) {
        double span = (double)(wall - s->p_t) * s->cpus;
        double user = (double)(s->user - s->p_user) / span;
        double sys = (double)(s->sys - s->p_sys) / span;
        jfr_ev_begin(j, JFR_CPU_LOAD, wall);
        write_float(j, user);
        write_float(j, sys);
        write_float(j, user + sys);
        jfr_ev_end(j, JFR_CPU_LOAD);
    }
    s->p_user = s->user;
    s->p_sys = s->sys;
    s->p_t = wall;
}

/* jdk.JavaThreadStatistics once the four Java thread gauges have a reading at
 * the same instant (the agent reads them together). */
static void java_threads(struct jfr *j, struct source *s, uint64_t wall)
{
    for (size_t i = 0; i < N_JAVA_THREAD_GAUGES; i++)
        if (s->jt_t[i] != wall)
            return;
    jfr_ev_begin(j, JFR_JAVA_THREAD_STATISTICS, wall);
    for (size_t i = 0; i < N_JAVA_THREAD_GAUGES; i++)
        rp_jfr_varint(&j->ev, s->jt[i]);
    jfr_ev_end(j, JFR_JAVA_THREAD_STATISTICS);
    memset(s->jt_t, 0, sizeof s->jt_t);
}

/* jdk.ThreadCPULoad from a thread's consecutive CPU readings, as the JDK writes
 * it: when the thread used 1 ms or more since its previous reading, that CPU
 * (at most the time between them) over the time between them times the host's
 * CPUs. It goes in `user`; `system` is NaN, unknown, as the thread's CPU clock
 * does not split user from system time. */
#define LOAD_MIN_CPU_NS 1000000u
static void thread_cpu_load(struct jfr *j, uint32_t thr, uint64_t wall, uint64_t cpu)
{
    struct jthread *t = &j->threads[thr - 1];
    int cpus = jfr_source(j, t->src)->cpus;
    if (t->cpu_t && wall > t->cpu_t && cpu >= t->cpu + LOAD_MIN_CPU_NS && cpus > 0) {
        uint64_t span = wall - t->cpu_t, used = cpu - t->cpu;
        jfr_ev_begin(j, JFR_THREAD_CPU_LOAD, wall);
        rp_jfr_varint(&j->ev, thr);
        write_float(j, (double)(used < span ? used : span) / ((double)span * cpus));
        rp_jfr_float(&j->ev, NAN);
        jfr_ev_end(j, JFR_THREAD_CPU_LOAD);
    }
    if (wall >= t->cpu_t) {
        t->cpu = cpu;
        t->cpu_t = wall;
    }
}

/* The index of a Java thread gauge in JAVA_THREAD_GAUGES, or -1. */
static int java_thread_gauge(const char *name)
{
    for (size_t i = 0; i < N_JAVA_THREAD_GAUGES; i++)
        if (!strcmp(name, JAVA_THREAD_GAUGES[i]))
            return (int)i;
    return -1;
}

static void on_gauge(struct jfr *j, const char *name, uint64_t wall, uint64_t value)
{
    struct source *s = jfr_source(j, j->st->rec);
    int jt = java_thread_gauge(name);
    jfr_ev_begin(j, JFR_RP_GAUGE, wall);
    rp_jfr_string(&j->ev, name);
    rp_jfr_varint(&j->ev, value);
    jfr_ev_end(j, JFR_RP_GAUGE);
    if (!strcmp(name, RP_GAUGE_RSS)) {
        if (value > s->rss_peak)
            s->rss_peak = value;
        jfr_ev_begin(j, JFR_RESIDENT_SET_SIZE, wall);
        rp_jfr_varint(&j->ev, value);
        rp_jfr_varint(&j->ev, s->rss_peak);
        jfr_ev_end(j, JFR_RESIDENT_SET_SIZE);
    } else if (!strcmp(name, RP_GAUGE_CLASSES)) {
        jfr_ev_begin(j, JFR_CLASS_LOADING_STATISTICS, wall);
        rp_jfr_varint(&j->ev, value);
        jfr_ev_end(j, JFR_CLASS_LOADING_STATISTICS);
    } else if (!strcmp(name, RP_GAUGE_HEAP_USED)) {
        s->heap_used = value;
    } else if (!strcmp(name, RP_GAUGE_CPU_USER)) {
        s->user = value, s->user_t = wall;
        cpu_load(j, s, wall);
    } else if (!strcmp(name, RP_GAUGE_CPU_SYS)) {
        s->sys = value, s->sys_t = wall;
        cpu_load(j, s, wall);
    } else if (jt >= 0) {
        s->jt[jt] = value, s->jt_t[jt] = wall;
        java_threads(j, s, wall);
    }
}

static void on_event(void *arg, const struct rp_profile *p, const struct rp_event *ev)
{
    struct jfr *j = arg;
    switch (ev->type) {
    case RP_EV_SEGMENT:
        if (ev->u.seg.t_last)
            j->seg_wall = wall_of(j, ev->u.seg.t_last);
        break;
    case RP_EV_GAUGE: {
        uint64_t wall = wall_of(j, ev->u.gauge.time);
        if (ev->u.gauge.name && in_range(j, wall))
            on_gauge(j, ev->u.gauge.name, wall, ev->u.gauge.value);
        break;
    }
    case RP_EV_COUNTER:
        if (!ev->u.counter.name || !in_range(j, j->seg_wall))
            break;
        jfr_ev_begin(j, JFR_RP_COUNTER, j->seg_wall);
        rp_jfr_string(&j->ev, ev->u.counter.name);
        rp_jfr_varint(&j->ev, ev->u.counter.value);
        jfr_ev_end(j, JFR_RP_COUNTER);
        break;
    case RP_EV_THREAD_CPU: {
        uint64_t wall = wall_of(j, ev->u.thread_cpu.time);
        uint32_t thr = jfr_thread(j, p, ev->u.thread_cpu.thread);
        if (!thr || !in_range(j, wall))
            break;
        jfr_ev_begin(j, JFR_RP_THREAD_CPU, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, ev->u.thread_cpu.cpu_ns);
        jfr_ev_end(j, JFR_RP_THREAD_CPU);
        thread_cpu_load(j, thr, wall, ev->u.thread_cpu.cpu_ns);
        break;
    }
    default:
        break;
    }
}

static const char *meta_or(const struct rp_reader *r, const char *key, const char *dflt)
{
    const char *v = rp_reader_meta(r, key);
    return v ? v : dflt;
}

static uint64_t meta_num(const struct rp_reader *r, const char *key)
{
    const char *v = rp_reader_meta(r, key);
    return v ? strtoull(v, NULL, 10) : 0;
}

/* A chunk begins: its clock and recording; the recording's first chunk writes
 * jdk.JVMInformation. A chunk ends: ringprof.Recording with its header and
 * what reading it found. */
static void on_chunk(void *arg, const struct rp_profile *p, const struct rp_reader *r,
                     int end)
{
    struct jfr *j = arg;
    if (end) {
        struct rp_reader_stats st;
        rp_reader_stats(r, &st);
        size_t n;
        const struct rp_kv *kv = rp_reader_meta_all(r, &n);
        struct rp_jfr_buf all = {0};
        for (size_t i = 0; i < n; i++) {
            rp_jfr_bytes(&all, kv[i].key, strlen(kv[i].key));
            rp_jfr_u8(&all, '=');
            rp_jfr_bytes(&all, kv[i].value, strlen(kv[i].value));
            rp_jfr_u8(&all, '\n');
        }
        rp_jfr_u8(&all, '\0');
        jfr_ev_begin(j, JFR_RP_RECORDING, j->st->clock.wall0);
        rp_jfr_string(&j->ev, meta_or(r, RP_META_RECORDING, NULL));
        rp_jfr_varint(&j->ev, meta_num(r, RP_META_CHUNK_SEQ));
        rp_jfr_varint(&j->ev, meta_num(r, RP_META_PID));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_HOST, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_NAME, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_VERSION, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_OPTIONS, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_PRODUCER, NULL));
        rp_jfr_string(&j->ev, rp_reader_path(r));
        rp_jfr_string(&j->ev, (const char *)all.p);
        rp_jfr_varint(&j->ev, st.segments_ok);
        rp_jfr_varint(&j->ev, st.segments_bad);
        rp_jfr_varint(&j->ev, st.segments_partial);
        jfr_ev_end(j, JFR_RP_RECORDING);
        rp_jfr_buf_free(&all);
        return;
    }
    j->st = rp_prof_stream(p);
    uint64_t wall0 = j->st->clock.wall0;
    j->seg_wall = wall0;
    if (!j->have_base) {
        j->base = wall0;
        j->have_base = 1;
    }
    if (j->thr_map)
        memset(j->thr_map, 0, j->n_thr_map * sizeof *j->thr_map);

    struct source *s = jfr_source(j, j->st->rec);
    if (!s->cpus)
        s->cpus = (int)meta_num(r, RP_META_HOST_CPUS);
    if (s->seen)
        return;
    s->seen = 1;
    jfr_ev_begin(j, JFR_JVM_INFORMATION, wall0);
    rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_NAME, NULL));
    rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_VERSION, NULL));
    rp_jfr_string(&j->ev, meta_or(r, RP_META_OPTIONS, NULL));
    rp_jfr_string(&j->ev, "");
    rp_jfr_string(&j->ev, "");
    rp_jfr_varint(&j->ev, wall0 / 1000000u);      /* the chunk's start, in ms    */
    rp_jfr_varint(&j->ev, meta_num(r, RP_META_PID));
    jfr_ev_end(j, JFR_JVM_INFORMATION);
}

/* --------------------------------------------------------------- writer -- */

/* Where the chunk goes: straight to `out` when it can seek (a file), else to a
 * temporary file copied to `out` at the end (a pipe). */
static int open_body(struct jfr *j)
{
    off_t at = ftello(j->out);
    if (at >= 0 && fseeko(j->out, at, SEEK_SET) == 0) {
        j->body = j->out;
        j->body_start = (uint64_t)at;
        return 0;
    }
    j->body = tmpfile();
    if (!j->body)
        return -1;
    return 0;
}

static int copy_spool(struct jfr *j)
{
    char chunk[1 << 16];
    size_t n;
    if (fflush(j->body) || fseeko(j->body, 0, SEEK_SET))
        return -1;
    while ((n = fread(chunk, 1, sizeof chunk, j->body)) > 0)
        if (fwrite(chunk, 1, n, j->out) != n)
            return -1;
    return ferror(j->body) ? -1 : 0;
}

/* What was written, on stderr: the events per type. */
static void report(const struct jfr *j)
{
    static const struct { int type; const char *name; } T[] = {
        {JFR_EXECUTION_SAMPLE, "jdk.ExecutionSample"},
        {JFR_RP_CPU_SAMPLE, "ringprof.CPUSample"},
        {JFR_NATIVE_METHOD_SAMPLE, "jdk.NativeMethodSample"},
        {JFR_RP_WALL_SAMPLE, "ringprof.WallClockSample"},
        {JFR_ALLOCATION_SAMPLE, "jdk.ObjectAllocationSample"},
        {JFR_OLD_OBJECT_SAMPLE, "jdk.OldObjectSample"},
        {JFR_MONITOR_ENTER, "jdk.JavaMonitorEnter"},
        {JFR_GARBAGE_COLLECTION, "jdk.GarbageCollection"},
        {JFR_RP_SAMPLE, "ringprof.Sample"}};
    fprintf(stderr, "ringprof convert: jfr:");
    const char *sep = " ";
    uint64_t other = 0;
    for (int t = 0; t < JFR_EVENT_MAX; t++)
        other += j->counts[t];
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        other -= j->counts[T[i].type];
        if (j->counts[T[i].type]) {
            fprintf(stderr, "%s%llu %s", sep, (unsigned long long)j->counts[T[i].type],
                    T[i].name);
            sep = ", ";
        }
    }
    fprintf(stderr, "%s%llu other events (telemetry, GC details, recording metadata)\n",
            sep, (unsigned long long)other);
}

int rp_out_jfr(FILE *out, rp_jfr_build_fn build, void *build_arg,
               struct rp_prof_options *po, const struct rp_out_options *o,
               struct rp_profile **built)
{
    struct jfr j;
    memset(&j, 0, sizeof j);
    j.out = out;
    j.po = po;
    rp_strtab_init(&j.thread_keys);
    rp_strtab_init(&j.sym);
    rp_strtab_init(&j.cls);
    rp_strtab_init(&j.pkg);
    rp_strtab_init(&j.marks);
    int rc = open_body(&j);
    if (rc == 0) {
        uint8_t header[RP_JFR_HEADER_SIZE] = {0};
        jfr_put(&j, header, sizeof header);                /* patched at the end    */

        /* Frames carry both the line and the bci; --include/--exclude see
         * methods, as by default in the other formats. A method carries its
         * descriptor, as the JDK writes it, so overloads stay apart (their
         * readers show the parameter lists). */
        out_events_hooks(po, &j, on_sample, on_event, on_chunk);
        if (po->norm.signatures == RP_SIG_MERGE)
            po->norm.signatures = RP_SIG_KEEP;
        po->per_thread = 0;
        struct rp_profile *p = build(build_arg, po);
        *built = p;
        jfr_drain(&j);

        uint64_t cp = jfr_checkpoint(&j, p);
        uint64_t meta = j.written;
        rp_jfr_metadata(&j.buf, jfr_ticks(&j, j.tmax));
        jfr_drain(&j);
        if (!j.tmin)
            j.tmin = j.tmax = j.base;
        struct rp_jfr_header h = {
            .size = j.written, .cp_offset = cp, .meta_offset = meta,
            .start_nanos = j.tmin, .duration_nanos = j.tmax - j.tmin,
            .start_ticks = (uint64_t)jfr_ticks(&j, j.tmin), .ticks_per_second = 1000000000u};
        rp_jfr_header(header, &h);
        jfr_patch(&j, 0, header, sizeof header);
        if (!j.failed && j.body != j.out && copy_spool(&j)) {
            j.failed = 1;
            j.err = errno ? errno : EIO;
        }
        rc = j.failed ? -1 : 0;
        if (!j.failed && !o->quiet)
            report(&j);
    }
    int err = j.failed ? j.err : errno;
    if (j.body && j.body != j.out)
        fclose(j.body);
    rp_jfr_buf_free(&j.ev);
    rp_jfr_buf_free(&j.buf);
    for (size_t i = 0; i < j.thread_keys.n; i++)
        rp_thread_names_free(&j.threads[i].names);
    free(j.threads);
    free(j.sources);
    free(j.cls_pkg);
    free(j.notes);
    rp_strtab_free(&j.marks);
    free(j.old_used);
    free(j.thr_map);
    rp_strtab_free(&j.thread_keys);
    rp_strtab_free(&j.sym);
    rp_strtab_free(&j.cls);
    rp_strtab_free(&j.pkg);
    errno = err;
    return rc;
}

