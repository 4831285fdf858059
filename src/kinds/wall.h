/*
 * src/kinds/wall.h — the wall-clock sampler: every thread, whatever it is doing.
 *
 * A JVMTI agent thread ("ringprof-wall") wakes every `wall=` interval and visits
 * the next `wallthreads=` live Java threads in turn (round robin over the thread
 * registry, agent threads excluded), so one tick costs the same with 20 threads
 * or 20 000; with more threads than that, each is visited less often and each of
 * its samples weighs more. A visit reads the thread's JVMTI state
 * (GetThreadState) and its CPU clock, and, for a thread JVMTI calls RUNNABLE,
 * its /proc task state and schedstat, to tell running, runnable, native (asleep
 * in a system call) and io apart (include/ringprof/events.h defines each state).
 *
 * The repeat rule: a thread whose CPU clock has not moved since its previous
 * sample, and which was not running or runnable then, cannot have changed its
 * stack (a stack changes only by running). Its stack is not walked again: the
 * sample repeats the previous one's frames (extra `repeat` = 1). So an idle
 * thread costs a state read and a clock read, never a safepoint handshake.
 *
 * A walk of a parked thread also reads what it parked on (park.h: the class of
 * Thread.parkBlocker and, for a lock, its exclusive owner, whose slot is found
 * as a monitor owner's is, rp_lock_thread_slot): the extras blocker_class and
 * blocker_owner. A repeat keeps them with the stack.
 *
 * Weight: the wall-clock ns since that thread's previous sample; the first
 * sample of a thread covers the time since it started or since sampling
 * (re)started, whichever is later. A thread's samples therefore tile its life.
 *
 * Records (sample.h, RP_SAMPLE_WALL with a struct rp_wall_tail) go into the
 * sampler's own ring, drained by the flusher; a full ring drops and counts
 * (lost.wall_ring_full), and the sampler wakes the flusher when the ring is half
 * full. The sampler keeps, per thread slot, the state of that slot's occupant
 * (last time, CPU, schedstat, state and frames); it is reset when the slot gets a
 * new occupant and its frames are freed once the slot is seen without a live
 * thread, so memory follows the live threads, not the threads ever started.
 *
 * Threads: rp_wall_init and rp_wall_launch from the agent's lifecycle or (for a
 * launch at run time) the flusher; the rest from any thread (the control server).
 * Nothing here runs on application threads.
 */
#ifndef RINGPROF_SRC_ENGINE_WALL_H
#define RINGPROF_SRC_ENGINE_WALL_H

#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

#include "ringprof/ring.h"
#include "flush/sink.h"

/* The interval `ctl start wall` uses when wall= was off and no `set wall=` came. */
#define RP_WALL_DEFAULT_NS 10000000ull

struct rp_wall_config {
    uint64_t interval_ns;          /* 0: wall=off (no thread until started by ctl) */
    uint32_t threads;              /* wallthreads: most threads visited per tick    */
    uint32_t depth;
    size_t ring_bytes;             /* ring=: the ring is at least this big          */
};

/* Remember the JVM and the configuration. Lifecycle thread, before anything else
 * here; starts nothing. */
void rp_wall_init(JavaVM *vm, jvmtiEnv *jvmti, const struct rp_wall_config *cfg);

/*
 * rp_wall_launch: create the ring and start the sampler thread, sampling at once
 * at the interval in force. `jni`: the caller's (a thread attached to the JVM; NULL
 * looks it up through the JavaVM). A second call does nothing. @return 0, or -1
 * with the reason in err (out of memory, the thread could not start, shutting
 * down).
 */
int rp_wall_launch(JNIEnv *jni, char *err, size_t errlen);

/* Whether the sampler thread was launched; whether it samples now. Any thread. */
int rp_wall_launched(void);
int rp_wall_on(void);

/* The ring the flusher drains (NULL before the launch). */
struct rp_ring *rp_wall_ring(void);

/* The sampler's kernel tid (0 before it runs), for the agent CPU figures. */
int rp_wall_sampler_tid(void);

/* The control socket: pause (0) or resume (1) sampling, change the interval
 * (1ms..10s) and the threads per tick (1..65536). After a pause, each thread's
 * first sample covers only the time since the resume. Any thread. */
void rp_wall_switch(int on);
void rp_wall_set_interval(uint64_t interval_ns);
void rp_wall_set_threads(uint32_t threads);
uint64_t rp_wall_interval(void);
uint32_t rp_wall_threads(void);

/* Counts since start, for the flusher's counters and status. */
struct rp_wall_stats {
    uint64_t ticks;            /* sampler wake-ups that visited threads          */
    uint64_t visits;           /* thread visits (= samples taken)                */
    uint64_t walks;            /* of those, stacks walked (GetStackTrace)        */
    uint64_t repeats;          /* of those, repeats of the previous stack        */
    uint64_t proc_failed;      /* /proc task state unreadable: state unknown     */
    uint64_t tracked;          /* threads with sampler state now                 */
    uint64_t last_round_ns;    /* wall time of the last full round of threads    */
};
void rp_wall_stats(struct rp_wall_stats *out);

/* Ask the sampler to stop and wait up to `wait_ms` for it to leave its loop. */
void rp_wall_stop(unsigned wait_ms);

/* What a wall-clock record (RP_SAMPLE_WALL) carries after its frames: the
 * extras of kind `wall` (include/ringprof/events.h), the owner as a slot and
 * generation that the flusher turns into a THREAD id (rp_sink_slot_thread). */
struct rp_wall_tail {
    uint32_t state;         /* enum rp_thread_state                                */
    uint32_t jvmti_state;   /* GetThreadState's bits                               */
    uint32_t os_state;      /* /proc task state letter, 0: not read                */
    uint32_t repeat;        /* 1: frames copied from the previous sample, no walk  */
    uint64_t cpu_ns;        /* the thread's CPU over the sample's weight           */
    uint32_t blocker_class; /* parked: class id of the parkBlocker's class, 0      */
    uint32_t owner_slot;    /* parked: the blocker's owner's thread slot + 1, 0:
                             * none or unknown                                    */
    uint32_t owner_gen;     /* that slot's generation                              */
    uint32_t pad;
};

/*
 * rp_wall_flush: the wall kind's writer (sink.h's rp_sink_flush_fn): record `h`
 * of slot `s` (`flen` bytes of header and frames, then its struct rp_wall_tail)
 * as a sample of kind `wall`, its tail as the extras. RP_SINK_IDLE when the
 * sample repeats the thread's previous one (it has not run since). Flusher
 * thread only.
 */
enum rp_sink_result rp_wall_flush(const struct rp_sink *sk, struct rp_slot *s,
                                  const struct rp_sample_hdr *h, size_t flen);

/* The wall kind: its descriptor (flush/kind.h), which agent.c lists. */
struct rp_kind;
extern const struct rp_kind rp_kind_wall;

#endif
