/*
 * src/threads/threadtimer.h — arming the registry's slots with their CPU timers (the
 * async engine). The timers themselves, perf_event or POSIX, are cputimer.h's;
 * this part decides when a slot has one: armed when the slot becomes LIVE,
 * deleted when it ends, all re-armed or parked by the control socket, all
 * deleted at shutdown. With a period of 0 (the jvmti engine) no timer is ever
 * made and every call here is a no-op.
 *
 * A timer's tag carries its slot's (generation, index) (threads.h), so a signal
 * from a previous occupant's timer is recognised and ignored. A timer that
 * another thread made (scan, adoption: RP_SLOT_REMOTE_TIMER) may outlive its
 * thread; it then reads disarmed (rp_threadtimer_alive_locked), which is how the
 * scan finds the threads that are gone.
 *
 * Threads: any thread but a signal handler. The public calls take the registry
 * lock; the *_locked calls are made by the registry's files with it held
 * (threads_locked.h).
 */
#ifndef RINGPROF_SRC_THREADTIMER_H
#define RINGPROF_SRC_THREADTIMER_H

#include <stdint.h>

struct rp_slot;

/* rp_threads_disarm_all: delete every timer (shutdown). After it returns no new
 * timer signal is generated; one already pending may still be delivered, which is
 * why the handler checks the engine's "on" flag first. */
void rp_threads_disarm_all(void);

/* rp_threads_set_timers: the control socket's "set interval" and "start/stop cpu"
 * (async engine). Re-arms every armed timer with `interval_ns`, or parks it when
 * `parked` (rp_cputimer_set: it never fires, yet its thread still reads as alive,
 * which the scan uses to tell a live scanned thread from a dead one). Timers made
 * later follow the same setting. @return 0, or -1 if there are no timers (jvmti
 * engine) or shutdown began. Takes the registry lock. */
int rp_threads_set_timers(uint64_t interval_ns, int parked);

/* ------------------------------------------- for the registry, lock held -- */

/* The period timers are made with (rp_threads_config.interval_ns); 0: no timers.
 * Called by rp_threads_init. */
void rp_threadtimer_config_locked(uint64_t interval_ns);

/* Are timers in use (a period was configured)? */
int rp_threadtimer_enabled_locked(void);

/* Has rp_threads_disarm_all run (no new timers)? */
int rp_threadtimer_closed_locked(void);

/* Create and arm the timer of a LIVE slot whose tid and cpu_clock are set: on
 * that thread, tagged with the slot, with a liveness probe if the slot is
 * RP_SLOT_REMOTE_TIMER. @return 0 (also when timers are not in use), or -1
 * (counted in timer_failures, logged once unless the thread is gone). */
int rp_threadtimer_arm_locked(struct rp_slot *s);

/* Delete the slot's timer if it has one; no signal of it arrives afterwards. */
void rp_threadtimer_delete_locked(struct rp_slot *s);

/* Is the slot's timer still counting, i.e. does its thread live? (A POSIX CPU
 * timer, or a perf counter's probe, of a dead thread reads disarmed.) Only
 * meaningful for RP_SLOT_REMOTE_TIMER slots; 0 for a slot with no timer. */
int rp_threadtimer_alive_locked(struct rp_slot *s);

#endif
