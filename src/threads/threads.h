/*
 * src/threads/threads.h — the thread registry: one slot per sampled thread and a tid
 * table. Its other parts have their own headers: threadtimer.h arms each slot's
 * CPU timer (the timers themselves, perf_event or POSIX, are cputimer.h's),
 * threadscan.h finds the threads that never register themselves, threadadopt.h
 * takes in the Java threads that ran before the agent; threads_locked.h is what
 * those parts share under the registry lock.
 *
 * A slot holds everything the signal handler touches for one thread: its ring, its
 * timer, its JNIEnv (for AsyncGetCallTrace), preallocated frame buffers and the
 * crash guard's jump buffer. Slots live in blocks that are never freed, so a
 * pointer to a slot stays valid for the life of the process: a late signal, a
 * racing flusher or a crash handler can never touch freed memory. A thread that
 * ends leaves its slot ENDED; the flusher drains its ring one last time and
 * releases it to a free list, from which the next new thread takes it (its ring and
 * buffers included). So memory follows the peak number of live threads, not the
 * number ever started. Each reuse bumps the slot's generation, and the timer's
 * tag (a POSIX timer's signal value, a perf counter's entry in the descriptor
 * table) carries (generation, index): a signal from a previous occupant's timer
 * is recognised and ignored.
 *
 * Where slots come from:
 *   - ThreadStart (rp_threads_attach_current), on the new Java thread itself: its
 *     own CPU clock, JNIEnv from the event.
 *   - Adoption (rp_threads_adopt, threadadopt.h): Java threads that existed
 *     before the agent started (attach, or JVM threads started before VMInit);
 *     their tid and JNIEnv come from vmstructs.h.
 *   - The /proc/self/task scan (rp_threads_scan, threadscan.h, on the flusher):
 *     every other thread (GC, JIT compilers, VM thread, native threads). These get a timer
 *     created from the flusher, targeting that tid (a POSIX timer on its CPU
 *     clock, id ((~tid) << 3) | 6, i.e. CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED,
 *     or a perf counter with that tid as owner). The scan also retires such
 *     threads once they are gone: a CPU timer whose thread has died reads as
 *     disarmed (timer_gettime gives a zero it_value; a perf counter has such a
 *     timer as its probe, cputimer.h).
 *     The same goes for adopted threads (RP_SLOT_REMOTE_TIMER: every timer made
 *     from another thread), whose ThreadEnd may have run before adoption. A
 *     thread that starts on a tid whose slot has such a dead timer (tid reuse
 *     between two scans) gets a new slot and timer, not the dead one.
 *
 * The tid table maps a kernel tid to its slot. It is an mmap'ed array of pid_max
 * (4 Mi, the 64-bit kernel limit) 32-bit entries, MAP_NORESERVE: only the pages of
 * tids in use are ever touched. The crash handler uses it (with gettid) to find the
 * faulting thread's slot without TLS.
 *
 * Locking: one registry mutex serialises slot allocation, upgrades, metadata
 * (names, refs) and retirement. It is held for list and table updates and a
 * timer syscall, never across I/O or JVMTI calls, and never by the signal handler.
 * The handler reads only fields that are written before the slot's timer is armed
 * (or atomics).
 */
#ifndef RINGPROF_SRC_THREADS_H
#define RINGPROF_SRC_THREADS_H

#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <jni.h>

#include "ringprof/ring.h"
#include "threads/cputimer.h"
#include "core/sample.h"

enum rp_slot_state {
    RP_SLOT_FREE = 0,
    RP_SLOT_LIVE,        /* the thread runs; its timer (if any) is armed         */
    RP_SLOT_ENDED        /* the thread is gone; the flusher drains and releases  */
};

enum rp_slot_flags {
    RP_SLOT_JAVA = 1u << 0,      /* a Java thread (has, or had, a JNIEnv)          */
    RP_SLOT_DAEMON = 1u << 1,
    RP_SLOT_SCANNED = 1u << 2,   /* found by the /proc scan: liveness by timer     */
    RP_SLOT_FROM_START = 1u << 3,/* registered at its ThreadStart: CPU since 0     */
    RP_SLOT_REMOTE_TIMER = 1u << 4 /* timer made from another thread (scan, adoption):
                                    * the thread may die unseen; the scan retires the
                                    * slot when its timer reads disarmed           */
};

#define RP_THREAD_NAME_MAX 128
#define RP_THREADS_MAX 262144u           /* slots the registry makes at most   */

struct rp_slot {
    /* Identity. Written under the registry lock before the slot is LIVE. */
    uint32_t index;
    _Atomic uint32_t gen;
    _Atomic int state;               /* enum rp_slot_state                          */
    pid_t tid;                       /* 0: not known (jvmti engine, no vmstructs)   */
    clockid_t cpu_clock;             /* the thread's CPU clock (valid if tid)       */
    struct rp_cputimer timer;        /* valid while armed (cputimer.h)              */
    _Atomic int armed;
    struct rp_ring *ring;            /* async engine, or alloc sampling (alloc.h)    */
    _Atomic(JNIEnv *) env;           /* for AGCT; NULL: not a Java thread (yet)      */

    /* The handler's own state: only this thread's signal handlers touch it. */
    volatile sig_atomic_t in_handler;
    volatile sig_atomic_t in_walk;
    sigjmp_buf walk_env;
    uint64_t *pcs;                   /* depth entries                                */
    struct rp_java_frame *java;      /* depth entries                                */

    /* The thread's own JVMTI callbacks (alloc.c, lock.c, callstack.h): which
     * one it is in (enum rp_agent_work, 0: none; the handler records it, so a
     * CPU sample taken there shows the agent's work under its Java caller), the
     * frames they capture (depth entries, allocated at the first use; the
     * handler never writes them, and reads them as the sample's Java frames
     * once cb_njava says they are complete) and their own crash guard. */
    volatile sig_atomic_t in_agent;
    struct rp_java_frame *cb_java;
    volatile sig_atomic_t cb_njava;  /* frames in cb_java that are the thread's
                                        stack now (0: none yet): the handler
                                        reuses them for a sample taken there   */
    volatile sig_atomic_t cb_kept;   /* frames in cb_java from the last callback,
                                        and the anchor's sp then: the stack
                                        while the thread is in that excursion
                                        into the VM (stackwalk.h)              */
    volatile uint64_t cb_anchor_sp;
    volatile sig_atomic_t in_cb_walk;
    sigjmp_buf cb_env;
    /* A CPU sample taken in a callback before it had its Java stack, held back
     * until it has (cpu_async.h, rp_async_callback_stack): its header, its
     * native frames left in `pcs`, and the state: 0 none, 1 held, 2 being
     * pushed by the callback (the handler then leaves `pcs` alone). */
    volatile sig_atomic_t held;
    struct rp_sample_hdr held_hdr;

    /* Metadata, under the registry lock. */
    uint32_t flags;                  /* enum rp_slot_flags                           */
    char name[RP_THREAD_NAME_MAX];
    uint32_t name_version;           /* bumped when the name changes                 */
    jweak ref;                       /* the java.lang.Thread, or NULL                */
    int64_t java_tid;
    uint64_t end_cpu_ns;             /* CPU clock read when it ended (0: unknown)    */
    uint64_t start_cpu_ns;           /* its CPU clock at ThreadStart (FROM_START): not
                                        0 when the OS thread ran before, e.g. the
                                        launcher's thread re-attached as
                                        DestroyJavaVM after main returned          */
    uint64_t start_ns;               /* CLOCK_MONOTONIC at ThreadStart; meaningful
                                        only with FROM_START (every path that sets
                                        the flag sets this): the wall sampler's
                                        first weight, the lock owner's check       */

    /* Kept by the flusher and the /proc scan, read by the registry when the
     * thread ends (threads.c, threadscan.c, threadadopt.c): its CPU clock at
     * the last reading, and the samples drained since its name was last
     * checked. */
    uint64_t last_cpu_ns;
    uint32_t sampled;

    /* Lock owners (lock.c): the thread's JavaThread* and stack bounds [lo, hi),
     * learned when it registers (rp_lock_learn_thread; 0: unknown), read by
     * other threads' monitor callbacks; cleared when the slot is released. They
     * stay in the slot because the registry clears them under its lock, before
     * the slot can be found again, which a generation-tagged table of lock.c
     * could not do without the registry calling into it.
     *
     * What else a module keeps for each thread is in its own per-slot table
     * (slottab.h): the flusher's ring losses, the cpu kind's written count,
     * the allocation callback's interval, the monitor callbacks' wait in
     * progress, the jvmti sampler's CPU baseline. owner_id: on a JVM whose
     * monitors hold their owner's id rather than its JavaThread* (JDK 24+,
     * rp_vmstructs_owner_ids), the thread's JavaThread::_monitor_owner_id;
     * 0: unknown or not such a JVM. */
    _Atomic uint64_t java_thread, stack_lo, stack_hi, owner_id;
};

struct rp_threads_config {
    uint32_t depth;                  /* frames per stack (buffer sizes)              */
    size_t ring_bytes;               /* 0: no per-thread rings (jvmti engine)        */
    uint64_t interval_ns;            /* timer period; 0: no timers (jvmti engine).
                                        The timers' source and signal are
                                        rp_cputimer_init's, called before. */
};

/* A copy of a slot's metadata, taken under the lock. */
struct rp_slot_meta {
    pid_t tid;
    uint32_t flags;
    int64_t java_tid;
    uint32_t name_version;
    uint64_t end_cpu_ns;
    char name[RP_THREAD_NAME_MAX];
};

/* Set up the tid table and remember the configuration. @return 0, or -1 with a
 * message in err. Not signal-safe. Called once, before any other function. */
int rp_threads_init(const struct rp_threads_config *cfg, char *err, size_t errlen);

/* Record an agent thread (the flusher, the sampler): never sampled. Called by the
 * agent thread itself first thing. */
void rp_threads_add_agent(pid_t tid);
int rp_threads_is_agent(pid_t tid);

/*
 * rp_threads_attach_current: the calling Java thread starts (ThreadStart). Takes
 * over a slot the scan made for this tid, or makes one, arms the timer (async).
 * `thread_ref` (a weak global ref, owned by the slot from now on) may be NULL.
 * @return the slot, or NULL if out of memory or timers (counted, logged once).
 */
struct rp_slot *rp_threads_attach_current(JNIEnv *env, jweak thread_ref, const char *name,
                                          int daemon, int64_t java_tid);

/* rp_threads_detach_current: the calling thread ends (ThreadEnd). Deletes its
 * timer (after which no signal of it can arrive), records its CPU time, and marks
 * the slot ENDED. */
void rp_threads_detach_current(void);

/* Iteration for the flusher and the sampler: indexes 0 .. rp_threads_count()-1. A
 * slot pointer, once returned, stays valid forever. */
uint32_t rp_threads_count(void);
struct rp_slot *rp_threads_slot(uint32_t index);

/* Copy a slot's metadata (under the lock). */
void rp_threads_meta(struct rp_slot *s, struct rp_slot_meta *out);
/* Update a slot's name (under the lock); bumps name_version if it changed. */
void rp_threads_set_name(struct rp_slot *s, const char *name);
/* A new local reference to the slot's java.lang.Thread, or NULL. */
jobject rp_threads_local_ref(JNIEnv *jni, struct rp_slot *s);

/* rp_threads_release: the flusher has drained an ENDED slot for the last time:
 * back to the free list. Deletes its weak ref with `jni` (may be NULL). */
void rp_threads_release(JNIEnv *jni, struct rp_slot *s);

/* Counts since start: slots made, slots reused, threads retired by the scan,
 * timers that could not be created. */
struct rp_threads_stats {
    uint64_t created, reused, retired_by_scan, timer_failures, live;
    uint64_t no_memory;        /* failures to allocate a thread's slot buffers: the
                                  thread is unsampled; a thread the scan retries
                                  counts once per attempt, so not a thread count */
};
void rp_threads_stats(struct rp_threads_stats *out);

/* The CPU time of the agent's own threads (rp_threads_add_agent: flusher,
 * samplers, control server), summed over their CPU clocks; a thread that has
 * ended no longer counts. Any thread. */
uint64_t rp_threads_agent_cpu_ns(void);

/* ------------------------------------------------ async-signal-safe lookups -- */

/* The slot a timer signal belongs to, from its timer's tag (rp_cputimer_tag):
 * NULL if the tag is not one of ours or the slot has since been reused or is not
 * LIVE. */
struct rp_slot *rp_threads_from_tag(uint64_t tag);
/* The slot of a tid, or NULL. */
struct rp_slot *rp_threads_by_tid(pid_t tid);
/* gettid(2) without libc's wrapper (glibc 2.30+ has one; this works everywhere). */
pid_t rp_gettid(void);

/* Register threads.no_memory (counters.h), group RP_COUNTERS_NOMEM. Agent
 * start, before the flusher runs. */
void rp_threads_counters_register(void);

#endif
