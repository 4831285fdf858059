/*
 * include/ringprof/events.h — the vocabulary the agent writes and the tool reads
 * on top of the chunk format: the six event kinds (cpu, wall, alloc, live, gc,
 * lock, and lock's waits in progress), their units and extra fields, the thread
 * states of wall-clock samples, and the telemetry gauges. A kind name, unit or
 * extra-field name is spelled here and nowhere else: the agent writes these
 * macros, the tool looks them up (rp_kind_vocab, rp_extra_index).
 *
 * The format itself (format.h) fixes no kinds; docs/format.md, "Event kinds
 * written by the agent" and "Telemetry", is the prose version of this file. Both
 * sides include it so that a name cannot drift between writer and reader.
 */
#ifndef RINGPROF_EVENTS_H
#define RINGPROF_EVENTS_H

#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------- thread states -- */

/* The state of a thread in a wall-clock sample: the `state` extra of kind
 * `wall`. Derived from JVMTI GetThreadState (the `jvmti_state` extra keeps the
 * raw bits) and, for a thread JVMTI calls RUNNABLE, from the OS (/proc task
 * state and schedstat; the `os_state` extra keeps the state letter):
 *
 *   running   RUNNABLE, and on a CPU (or it used more CPU than it waited for
 *             one since its previous sample); in Java or in native code
 *   runnable  RUNNABLE and wants a CPU, but waited for one longer than it ran
 *   native    RUNNABLE in JVMTI's eyes but asleep in the kernel (OS state S):
 *             a blocking system call, socket read, epoll, accept
 *   io        asleep in the kernel uninterruptibly (OS state D): disk I/O, page
 *             faults on a slow device
 *   blocked   waiting to enter a monitor (synchronized), BLOCKED_ON_MONITOR_ENTER
 *   waiting   Object.wait, Thread.join (IN_OBJECT_WAIT), with or without timeout
 *   parked    LockSupport.park: java.util.concurrent locks, conditions, queues,
 *             thread pools waiting for work
 *   sleeping  Thread.sleep
 *   unknown   the state could not be read
 *
 * The values are part of the recording format: never renumber, only append. */
enum rp_thread_state {
    RP_TS_UNKNOWN = 0,
    RP_TS_RUNNING = 1,
    RP_TS_RUNNABLE = 2,
    RP_TS_NATIVE = 3,
    RP_TS_IO = 4,
    RP_TS_BLOCKED = 5,
    RP_TS_WAITING = 6,
    RP_TS_PARKED = 7,
    RP_TS_SLEEPING = 8,
    RP_TS_COUNT
};

static const char *const RP_THREAD_STATE_NAMES[RP_TS_COUNT] = {
    "unknown", "running", "runnable", "native", "io",
    "blocked", "waiting", "parked", "sleeping"};

/* The name of state `s`, or "unknown" for a value this build does not know. */
static inline const char *rp_thread_state_name(unsigned s)
{
    return s < RP_TS_COUNT ? RP_THREAD_STATE_NAMES[s] : "unknown";
}

/* The state named `name` (exactly `len` bytes), or -1. */
static inline int rp_thread_state_parse(const char *name, size_t len)
{
    for (int i = 0; i < RP_TS_COUNT; i++)
        if (strlen(RP_THREAD_STATE_NAMES[i]) == len &&
            !memcmp(RP_THREAD_STATE_NAMES[i], name, len))
            return i;
    return -1;
}

/* --------------------------------------------------------------- kinds -- */

/* Units of a kind's weight (a KIND record's unit). */
#define RP_UNIT_NS "ns"
#define RP_UNIT_BYTES "bytes"

/* Extra-field names that several kinds share. */
#define RP_X_CLASS "class"       /* CLASS id                                      */
#define RP_X_SIZE "size"         /* bytes of one object                           */
#define RP_X_OBJECTS "objects"   /* how many objects the sample stands for        */
#define RP_X_LENGTH "length"     /* array length + 1; 0: not an array             */
#define RP_X_STATE "state"       /* enum rp_thread_state                          */
#define RP_X_OWNER "owner"       /* THREAD id                                     */

/* Kind `cpu` (unit ns, period = the CPU interval): one sample of a thread's CPU
 * time, from its CPU timer (or the jvmti sampler). Weight: the CPU ns it stands
 * for. No extras. */
#define RP_KIND_CPU "cpu"
#define RP_CPU_NEXTRA 0

/* Kind `alloc` (unit bytes, period = the sampling interval): one sampled
 * allocation. Weight: the bytes it stands for. Extras, in this order: */
#define RP_KIND_ALLOC "alloc"
#define RP_ALLOC_X_CLASS 0       /* CLASS id of the object's class                */
#define RP_ALLOC_X_SIZE 1        /* the sampled object's size, bytes              */
#define RP_ALLOC_X_OBJECTS 2     /* objects the weight stands for                 */
#define RP_ALLOC_X_LENGTH 3      /* array length + 1, 0: not an array             */
#define RP_ALLOC_NEXTRA 4
#define RP_ALLOC_EXTRA_NAMES {RP_X_CLASS, RP_X_SIZE, RP_X_OBJECTS, RP_X_LENGTH}

/* Kind `live` (unit bytes, period 0): in a live snapshot, one sampled object
 * still reachable, weighted as its `alloc` sample was. Time: the snapshot's.
 * Extras: alloc's four, then: */
#define RP_KIND_LIVE "live"
#define RP_X_AGE_GCS "age_gcs"   /* GC pauses since the allocation                */
#define RP_X_AGE_MS "age_ms"     /* ms since the allocation                       */
#define RP_LIVE_X_AGE_GCS 4
#define RP_LIVE_X_AGE_MS 5
#define RP_LIVE_NEXTRA 6
#define RP_LIVE_EXTRA_NAMES {RP_X_CLASS, RP_X_SIZE, RP_X_OBJECTS, RP_X_LENGTH, \
                             RP_X_AGE_GCS, RP_X_AGE_MS}
/* The snapshot's gauges, written with it. */
#define RP_GAUGE_LIVE_OBJECTS "live.objects"
#define RP_GAUGE_LIVE_BYTES "live.bytes"

/* Kind `gc` (unit ns, period 0): one garbage-collection pause. Time: its start.
 * Weight: its length. Thread and stack: none. Extras, in this order: */
#define RP_KIND_GC "gc"
#define RP_X_HEAP_USED "heap_used"
#define RP_X_HEAP_COMMITTED "heap_committed"
#define RP_X_ID "id"
#define RP_GC_X_HEAP_USED 0      /* heap in use after the pause; 0: not read      */
#define RP_GC_X_HEAP_COMMITTED 1 /* heap committed then; 0: not read              */
#define RP_GC_X_ID 2             /* the pause's number since the agent started    */
#define RP_GC_NEXTRA 3
#define RP_GC_EXTRA_NAMES {RP_X_HEAP_USED, RP_X_HEAP_COMMITTED, RP_X_ID}

/* Kind `wall` (unit ns, period = the wall interval): one sample of one thread,
 * whatever it was doing. Weight: the wall-clock ns it stands for, the time since
 * that thread's previous wall sample (the first: the time since it was first
 * seen, or one round of the sampler). Extras, in this order: */
#define RP_KIND_WALL "wall"
#define RP_WALL_X_STATE 0        /* enum rp_thread_state                          */
#define RP_WALL_X_JVMTI_STATE 1  /* GetThreadState's bits, as returned            */
#define RP_WALL_X_OS_STATE 2     /* /proc task state letter (ASCII), 0: not read  */
#define RP_WALL_X_REPEAT 3       /* 1: the thread had not run since its previous
                                  * sample, so its stack was not walked again and
                                  * this sample repeats it; 0: walked            */
#define RP_WALL_X_CPU_NS 4       /* the thread's CPU ns over the sample's weight  */
#define RP_WALL_X_BLOCKER_CLASS 5 /* state parked: CLASS id of the class of the
                                  * object it parked on (Thread.parkBlocker),
                                  * 0: none or another state                     */
#define RP_WALL_X_BLOCKER_OWNER 6 /* state parked on an AbstractOwnableSynchronizer
                                  * (ReentrantLock, a write lock): THREAD id of
                                  * its exclusive owner, 0: none or unknown      */
#define RP_WALL_NEXTRA 7
#define RP_WALL_EXTRA_NAMES {RP_X_STATE, "jvmti_state", "os_state", "repeat", "cpu_ns", \
                             "blocker_class", "blocker_owner"}

/* Kind `lock` (unit ns, period 0): one contended monitor entry that waited at
 * least the `lock=` threshold. Time: when the wait began. Weight: the ns waited.
 * Thread and stack: the waiting thread and its stack (leaf: the method whose
 * synchronized block or method was entered). Extras, in this order: */
#define RP_KIND_LOCK "lock"
#define RP_LOCK_X_CLASS 0        /* CLASS id of the monitor object's class        */
#define RP_LOCK_X_OWNER 1        /* THREAD id of the owner when the wait began,
                                  * 0: unknown                                   */
#define RP_LOCK_X_THRESHOLD 2    /* the threshold in force, ns                    */
#define RP_LOCK_X_REPORTED 3     /* 1: the wait may have been written in progress
                                  * (kind lock.waiting) before it ended, so its
                                  * in-progress records must give way to this one;
                                  * 0 (or absent, in older recordings): it was not */
#define RP_LOCK_NEXTRA 4
#define RP_LOCK_EXTRA_NAMES {RP_X_CLASS, RP_X_OWNER, "threshold_ns", "reported"}

/* Kind `lock.waiting` (unit ns, period 0): a contended monitor wait still in
 * progress when a segment was written (each flush) or when lock recording
 * stopped (at exit, or `ctl stop lock`), already at least the threshold long.
 * Time: when the wait began, as for `lock`. Weight: how long it had lasted then.
 * Thread, stack and extras as for `lock`, its first three extras, in the same
 * order. A wait that lasts over several flushes is written at each: these
 * records are readings of one wait, never to be added up. The rule a reader
 * applies (docs/format.md): a wait is (recording, the waiting thread's os_tid,
 * the time it began); its finished `lock` record counts if the inputs hold one,
 * else its `lock.waiting` record of the greatest weight (the latest), once; every
 * other record of that wait is dropped. A reader that does not know this kind
 * skips it and sees only finished waits, as before it existed. */
#define RP_KIND_LOCK_WAITING "lock.waiting"
#define RP_LOCK_WAITING_NEXTRA 3

/* The kinds this build writes, with their units and extra fields: the tool's
 * one table of what each kind means (a recording may hold kinds this build does
 * not know; a reader takes their units and extras from the KIND record). */
struct rp_kind_vocab {
    const char *name, *unit;
    unsigned nextra;
    const char *const *extra;
};

static const char *const RP_VOCAB_ALLOC_X_[] = RP_ALLOC_EXTRA_NAMES;
static const char *const RP_VOCAB_LIVE_X_[] = RP_LIVE_EXTRA_NAMES;
static const char *const RP_VOCAB_GC_X_[] = RP_GC_EXTRA_NAMES;
static const char *const RP_VOCAB_WALL_X_[] = RP_WALL_EXTRA_NAMES;
static const char *const RP_VOCAB_LOCK_X_[] = RP_LOCK_EXTRA_NAMES;

static const struct rp_kind_vocab RP_KIND_VOCAB[] = {
    {RP_KIND_CPU, RP_UNIT_NS, RP_CPU_NEXTRA, NULL},
    {RP_KIND_WALL, RP_UNIT_NS, RP_WALL_NEXTRA, RP_VOCAB_WALL_X_},
    {RP_KIND_ALLOC, RP_UNIT_BYTES, RP_ALLOC_NEXTRA, RP_VOCAB_ALLOC_X_},
    {RP_KIND_LIVE, RP_UNIT_BYTES, RP_LIVE_NEXTRA, RP_VOCAB_LIVE_X_},
    {RP_KIND_GC, RP_UNIT_NS, RP_GC_NEXTRA, RP_VOCAB_GC_X_},
    {RP_KIND_LOCK, RP_UNIT_NS, RP_LOCK_NEXTRA, RP_VOCAB_LOCK_X_},
    {RP_KIND_LOCK_WAITING, RP_UNIT_NS, RP_LOCK_WAITING_NEXTRA, RP_VOCAB_LOCK_X_},
};
#define RP_KIND_VOCAB_COUNT (sizeof RP_KIND_VOCAB / sizeof RP_KIND_VOCAB[0])

/* The vocabulary entry of kind `name`, or NULL for a kind this build does not
 * write. */
static inline const struct rp_kind_vocab *rp_kind_vocab(const char *name)
{
    for (size_t i = 0; i < RP_KIND_VOCAB_COUNT; i++)
        if (!strcmp(RP_KIND_VOCAB[i].name, name))
            return &RP_KIND_VOCAB[i];
    return NULL;
}

/* The index of the extra field `name` among `extra[0..n)` (a KIND record's
 * names, which a reader must look up rather than assume: older recordings have
 * fewer), or -1. The one lookup of an extra field by name. */
static inline int rp_extra_index(const char *const *extra, unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (extra[i] && !strcmp(extra[i], name))
            return (int)i;
    return -1;
}

/* Whether samples of kind `kind` belong to the profile of event `event`: its
 * own, and for lock also its waits in progress. */
static inline int rp_kind_in_event(const char *event, const char *kind)
{
    return !strcmp(event, kind) ||
           (!strcmp(event, RP_KIND_LOCK) && !strcmp(kind, RP_KIND_LOCK_WAITING));
}

/* ----------------------------------------------------------- telemetry -- */

/* Gauges written once a `telemetry=` period (1 s by default) by the flusher.
 * A name ending in ".total" is cumulative since the agent started (a reader
 * shows its rate: the difference of two readings over their time apart); the
 * others are levels. */
#define RP_GAUGE_CPU_USER "proc.cpu_user_ns.total"   /* process user CPU          */
#define RP_GAUGE_CPU_SYS "proc.cpu_sys_ns.total"     /* process system CPU        */
#define RP_GAUGE_RSS "proc.rss_bytes"                /* resident set size         */
#define RP_GAUGE_HEAP_USED "heap.used_bytes"         /* Java heap in use          */
#define RP_GAUGE_HEAP_COMMITTED "heap.committed_bytes"
#define RP_GAUGE_GC_COUNT "gc.count.total"           /* collections, all collectors */
#define RP_GAUGE_GC_TIME "gc.time_ns.total"          /* their time (MXBean figures) */
#define RP_GAUGE_THREADS "threads.os"             /* OS threads of the process */
#define RP_GAUGE_THREADS_RUNNABLE "threads.runnable" /* of those, in state R      */
/* The JVM's Java threads as java.lang.management.ThreadMXBean counts them (the
 * figures of JDK Flight Recorder's jdk.JavaThreadStatistics): live ones, the
 * daemons among them, and since the JVM started, the threads started and the
 * most live at once. */
#define RP_GAUGE_THREADS_JAVA "threads.java"
#define RP_GAUGE_THREADS_DAEMON "threads.daemon"
#define RP_GAUGE_THREADS_STARTED "threads.started.total"
#define RP_GAUGE_THREADS_PEAK "threads.peak"
#define RP_GAUGE_CLASSES "classes.loaded"            /* loaded classes            */
#define RP_GAUGE_AGENT_CPU "agent.cpu_ns.total"      /* CPU of the agent's own
                                                      * threads (flusher, samplers,
                                                      * control); older recordings
                                                      * call it "agent.cpu_ns"   */
/* Time the agent spends on application threads, cumulative wall ns (the
 * agent's cost there is this, since the thread is on a CPU throughout): */
#define RP_GAUGE_AGENT_HANDLER "agent.handler_ns.total" /* CPU-timer signal handler */
#define RP_GAUGE_AGENT_ALLOC "agent.alloc_ns.total"     /* SampledObjectAlloc      */
#define RP_GAUGE_AGENT_LOCK "agent.lock_ns.total"       /* MonitorContended*       */
/* Lock contention, every flush while lock= is on (and once after it stops): how
 * many waits in progress the segment's lock.waiting records hold (a level). */
#define RP_GAUGE_LOCK_WAITING "lock.waiting"
/* The signal handler's cost per sample over the samples since the previous
 * flush, ns (levels; written only when there were samples): */
#define RP_GAUGE_AGENT_HANDLER_P50 "agent.handler_ns.p50"
#define RP_GAUGE_AGENT_HANDLER_P99 "agent.handler_ns.p99"

/* Whether gauge `name` is cumulative (its rate is what to show). */
static inline int rp_gauge_is_total(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && !strcmp(name + n - 6, ".total");
}

#endif
