/*
 * src/kinds/lock.h — lock contention: contended monitor entries that waited at least
 * the `lock=` threshold (kind `lock`, include/ringprof/events.h).
 *
 * HotSpot posts MonitorContendedEnter on a thread that is about to block on a
 * monitor (synchronized) another thread holds, and MonitorContendedEntered on the
 * same thread once it owns it, both on that thread with JVMTI and JNI usable.
 * Enter notes the time (CLOCK_MONOTONIC) and the monitor's owner field then;
 * Entered measures the wait and, if it reached the threshold, takes the stack
 * (GetStackTrace, up to `depth`), the monitor object's class (classes.h), names
 * the owner's slot, and pushes one record (sample.h, RP_SAMPLE_LOCK; time = the
 * wait's start, weight = ns waited) into the thread's own ring. A shorter wait
 * is only counted (lock.below_threshold). As in alloc.c, the CPU-timer signal is
 * blocked for the callbacks, which use the slot's frame buffer.
 *
 * The owner. JVMTI's GetObjectMonitorUsage is a VM operation (a safepoint) in
 * JDK 17: far too dear per contended entry. HotSpot keeps the monitor the thread
 * waits for in JavaThread::_current_pending_monitor, set before Enter is posted,
 * and its owner in ObjectMonitor::_owner; vmstructs.h reads both (safe reads).
 * The owner is a JavaThread* (each slot learns its own at registration,
 * rp_lock_learn_thread), or, right after a stack lock was inflated, a BasicLock*
 * on the owner's stack (each slot also learns its stack bounds). Where neither
 * matches a slot — VMStructs lacks the fields, the owner released the monitor
 * in between, it is a thread the agent does not know — the owner is unknown
 * (owner 0, counted as lock.owner_unknown).
 *
 * Waits in progress. A record is pushed only when a wait ends, so a deadlock
 * would leave none: at every flush the flusher also writes each wait still in
 * progress that is over the threshold (rp_lock_flush_waiting: kind lock.waiting,
 * one record per wait per flush, and once more when recording stops), from what
 * the Enter callback published; the reader keeps one record per wait (events.h).
 *
 * Capability: can_generate_monitor_events, asked for at load only when lock= is
 * on, else on the first `ctl start lock` (it can be added in the live phase).
 *
 * Threads: the callbacks run on application threads and never block (a full
 * ring drops and counts). Switches and the threshold: the flusher (JVMTI calls
 * need an attached thread) or the agent's lifecycle.
 */
#ifndef RINGPROF_SRC_LOCK_H
#define RINGPROF_SRC_LOCK_H

#include <stdint.h>
#include <jvmti.h>

#include "core/json.h"
#include "flush/sink.h"
#include "threads/threads.h"

/* The default threshold of `ctl start lock` when none was ever given. */
#define RP_LOCK_DEFAULT_THRESHOLD_NS 10000000ull

/* What a lock record (RP_SAMPLE_LOCK) carries after its frames. */
struct rp_lock_tail {
    uint32_t klass;         /* class id of the monitor's class (rp_class_name), 0  */
    uint32_t owner_slot;    /* the owner's thread slot + 1 when the wait began, 0:
                             * unknown                                            */
    uint32_t owner_gen;     /* that slot's generation                              */
    uint32_t reported;      /* 1: the flusher may have written the wait in progress
                             * (kind lock.waiting) before it ended (lock.c)       */
    uint64_t threshold_ns;  /* lock= in force                                      */
};

/* Load time (the descriptor's hooks, flush/kind.h): notes what the JVM offers
 * and, if lock= is on, asks for can_generate_monitor_events (kept when
 * allocation sampling's are given up); init adds the callbacks (always: the
 * capability may come later). Never fails the load. */

/* Shutdown: disable the events and wait (bounded) for callbacks in progress. */
void rp_lock_stop(unsigned wait_ms);

/* A thread registered (ThreadStart, adoption, the VMInit thread; the
 * descriptor's thread_start hook): learn its JavaThread* and stack bounds so
 * that it can be named as a lock owner. `jni` is the caller's JNIEnv, `thread`
 * the java.lang.Thread. Any Java thread. */
void rp_lock_learn_thread(struct rp_slot *s, JNIEnv *jni, jobject thread);

/* The control socket: switch recording on or off, set the threshold. @return 0,
 * or -1 with one sentence in err. A thread attached to the JVM (the flusher). */
int rp_lock_switch(int on, char *err, size_t errlen);
int rp_lock_set_threshold(uint64_t ns, char *err, size_t errlen);

struct rp_lock_state {
    int available;          /* the JVM offers the capability and threads have rings */
    int on;
    int configured;         /* a threshold was given (lock= or ctl set lock=)        */
    uint64_t threshold_ns;
};
void rp_lock_state(struct rp_lock_state *out);

/* Counts since start, for counters and status. */
struct rp_lock_stats {
    uint64_t samples;           /* records pushed                                  */
    uint64_t below_threshold;   /* contended entries that waited less              */
    uint64_t owner_unknown;     /* records pushed with owner 0                      */
    uint64_t no_thread;         /* on a thread with no slot or ring (lost)          */
    uint64_t agent_thread;      /* on one of the agent's own threads                */
    uint64_t ring_dropped;      /* the push failed (counted by the ring too)        */
    uint64_t callback_ns;       /* time in both callbacks, all threads              */
    uint64_t waiting_written;   /* waits written in progress (lock.waiting records) */
};
void rp_lock_stats(struct rp_lock_stats *out);

/* A contended monitor wait in progress: the waiting thread's slot, when the
 * wait began (CLOCK_MONOTONIC) and how long ago, the monitor's class id
 * (classes.h; 0: unknown) and its owner's slot when the wait began (NULL:
 * unknown). */
struct rp_lock_wait {
    struct rp_slot *slot;
    uint64_t start_ns, age_ns;
    uint32_t klass;
    struct rp_slot *owner;
};

/* rp_lock_waits: the contended monitor waits in progress that began at least
 * `min_age_ns` ago, at most `max` of them in `out`, in slot order. Only while
 * lock recording is on (the callbacks note a wait's start only then). Reads
 * what each waiting thread's Enter callback published, lock-free, and the
 * owner's slot as the record of an ended wait does. @return how many. Any
 * thread; allocates nothing. */
size_t rp_lock_waits(struct rp_lock_wait *out, size_t max, uint64_t min_age_ns);

/* rp_lock_thread_slot: the slot of the Java thread `thread` (a java.lang.Thread),
 * found through its JavaThread* as a monitor's owner is (VMStructs), or NULL
 * (not started, ended, not registered, or no VMStructs). For the wall sampler's
 * owners of parked-on locks (park.h). A thread attached to the JVM. */
struct rp_slot *rp_lock_thread_slot(JNIEnv *jni, jobject thread);

/* rp_lock_pending_owner: the slot of the thread that owns the monitor `thread`
 * is blocked on now, read through VMStructs as the Enter callback reads it
 * (JavaThread::_current_pending_monitor), or NULL (not blocked, unknown). For
 * a thread dump without can_get_current_contended_monitor. A thread attached
 * to the JVM (`jni` is its env). */
struct rp_slot *rp_lock_pending_owner(JNIEnv *jni, jobject thread);

/* One wait as a JSON object: "thread" and "tid" (if `thread`), "age_ns",
 * "lock" (the monitor's class, or null), "owner" (its name, or null: unknown)
 * and "owner_tid". Any thread but the signal handler (takes the registry's
 * lock for the names). */
void rp_lock_wait_json(struct rp_json *j, const struct rp_lock_wait *w, int thread);

/* The lock kind's writer (sink.h's rp_sink_flush_fn): record `h` of slot `s`,
 * then its struct rp_lock_tail. Flusher thread. */
enum rp_sink_result rp_lock_flush(const struct rp_sink *sk, struct rp_slot *s,
                                  const struct rp_sample_hdr *h, size_t flen);

/*
 * rp_lock_flush_waiting: once per flush, after the rings are drained, the waits
 * still in progress that are at least the threshold long, one record each of
 * kind lock.waiting (include/ringprof/events.h: time = the wait's start, weight =
 * its age now), and the gauge lock.waiting (how many). While recording is on,
 * as of the pass's time; at the first flush after it stopped (`ctl stop lock`,
 * or the agent's stop before the last flush), once more as of that moment: the
 * waits that never ended are in the recording's last segment. The stack is
 * taken once per wait (GetStackTrace on the waiting thread, through `sk->jni`)
 * and kept for its later records; a wait that ends while it is written is left
 * to its finished record, which then says reported (struct wait's protocol).
 * Waits that cannot be written for want of memory are counted
 * (lock.waiting_unwritten). Flusher thread; calls JVMTI.
 */
void rp_lock_flush_waiting(const struct rp_sink *sk);

/* The lock kind (and lock.waiting): its descriptor (flush/kind.h), which agent.c lists. */
struct rp_kind;
extern const struct rp_kind rp_kind_lock;

#endif
