/*
 * src/threads/threads_locked.h — the thread registry's lock and what its parts may do
 * while they hold it. For the registry's own files only: threads.c (slots, tid
 * table), threadtimer.c (arming the slots' CPU timers), threadscan.c (the
 * /proc/self/task scan) and threadadopt.c (adoption); every other caller uses
 * threads.h and the public headers of those parts.
 *
 * Every function named *_locked is called with the registry lock held
 * (rp_threads_lock) and never takes it. None is async-signal-safe: they may
 * allocate and make timer system calls. The lock is never held across I/O,
 * JVMTI or JNI calls, or stderr: a line to log is kept by
 * rp_threads_log_once_locked and printed by rp_threads_log_pending once the lock
 * is released.
 */
#ifndef RINGPROF_SRC_THREADS_LOCKED_H
#define RINGPROF_SRC_THREADS_LOCKED_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <jni.h>

#include "threads/threads.h"

/* Tids at or above this have no entry in the tid table (PID_MAX_LIMIT on 64-bit
 * Linux): such a thread is never registered. */
#define RP_THREADS_TID_LIMIT (4u << 20)

/* The registry lock (threads.c). */
void rp_threads_lock(void);
void rp_threads_unlock(void);

/* The counters of rp_threads_stats, to update. Lock held. */
struct rp_threads_stats *rp_threads_stats_locked(void);

/* rp_log_once, deferred: the line is kept, and printed by rp_threads_log_pending
 * (lock not held) after the lock is released. Lock held. */
__attribute__((format(printf, 2, 3)))
void rp_threads_log_once_locked(int *once, const char *fmt, ...);
void rp_threads_log_pending(void);

/* The CPU clock of thread `tid` (any thread of this process), as the kernel
 * encodes it: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), see threads.h. */
clockid_t rp_threads_clock(pid_t tid);

/* A slot's timer tag (cputimer.h): what rp_threads_from_tag maps back to it. */
uint64_t rp_threads_tag(const struct rp_slot *s);

/* A new LIVE slot for `tid` (0: none known) with its timer armed (when timers are
 * in use and tid is known). Everything the handler reads, the JNIEnv included, is
 * in place before the timer can fire. @return NULL if out of memory or timers. */
struct rp_slot *rp_threads_add_locked(pid_t tid, clockid_t clock, uint32_t flags,
                                      const char *name, JNIEnv *env);

/* Retire a LIVE slot: delete its timer, record `cpu_ns` as its end, leave the
 * tid table, mark it ENDED (the flusher drains and releases it). */
void rp_threads_end_locked(struct rp_slot *s, uint64_t cpu_ns);

/* The LIVE slot of `tid`, or NULL. */
struct rp_slot *rp_threads_live_by_tid_locked(pid_t tid);

/* The LIVE slot a starting or adopted thread with `tid` may take over, or NULL.
 * A slot whose timer another thread made (scan, adoption) for an earlier thread
 * with the same tid has a dead timer: that slot is ended (counted as retired by
 * the scan) and NULL returned, so the caller makes a new one. */
struct rp_slot *rp_threads_takeover_locked(pid_t tid);

/* Set a slot's name; bumps name_version if it changed. */
void rp_threads_set_name_locked(struct rp_slot *s, const char *name);

/* Adoption's part of a ThreadEnd that found no live slot for its tid
 * (threadadopt.c): between rp_threads_adopt_begin and _end the tid is recorded,
 * otherwise nothing happens. */
void rp_threads_adopt_note_end_locked(pid_t tid);

#endif
