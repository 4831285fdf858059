/*
 * src/threads/threadadopt.h — adoption: slots for the Java threads that were running
 * before the agent started (a late attach, or JVM threads started before
 * VMInit), whose ThreadStart the agent never saw. The agent lists them (their
 * tid and JNIEnv from vmstructs.h) and adopts each one; its timer is made from
 * the adopting thread (RP_SLOT_REMOTE_TIMER), so the scan retires the slot if
 * the thread dies unseen (threadscan.h).
 *
 * The race it closes: a thread may end (ThreadEnd) after the agent read its tid
 * and before it is adopted; HotSpot then frees its JavaThread, and a timer armed
 * on it would never be deleted by a ThreadEnd. So adoption runs between
 * rp_threads_adopt_begin and rp_threads_adopt_end, and a ThreadEnd in between
 * that finds no live slot for its tid records it.
 *
 * Threads: one adopting thread at a time (the agent's start or attach), not a
 * signal handler. Each call takes the registry lock; JNI calls run without it.
 */
#ifndef RINGPROF_SRC_THREADADOPT_H
#define RINGPROF_SRC_THREADADOPT_H

#include <stdint.h>
#include <sys/types.h>
#include <jni.h>

/* rp_threads_adopt_begin / _end bracket the agent's adoption pass. In between,
 * a ThreadEnd (rp_threads_detach_current) that finds no live slot for its tid
 * records the tid: adoption may have read that thread's tid before it ended, and
 * must not arm a timer on a thread whose JavaThread HotSpot is about to free.
 * rp_threads_adopt skips such a tid, and rp_threads_adopt_end ends any adopted
 * slot whose tid is in the set (and forgets the set). */
void rp_threads_adopt_begin(void);
void rp_threads_adopt_end(void);

/* rp_threads_adopt: a Java thread that was running before the agent started.
 * `tid` 0 and `env` NULL are allowed (unknown); with a tid, the timer targets it
 * from the calling thread. `thread_ref` (a weak global ref) is owned by the slot
 * from now on; one that is not kept is deleted with `jni` (the caller's JNIEnv). */
void rp_threads_adopt(JNIEnv *jni, pid_t tid, JNIEnv *env, jweak thread_ref,
                      const char *name, int daemon, int64_t java_tid);

#endif
