/*
 * src/threads/cputimer.h — per-thread CPU timers: what sends a sampled thread the timer
 * signal each time it has used about `interval` of CPU. Two sources:
 *
 *   perf   a perf_event task-clock counter on the thread (PERF_TYPE_SOFTWARE,
 *          PERF_COUNT_SW_TASK_CLOCK) with a sampling period, whose overflows
 *          signal through its file descriptor (O_ASYNC, F_SETSIG to the agent's
 *          signal, F_SETOWN_EX F_OWNER_TID to the thread). The kernel runs the
 *          period on an hrtimer while the thread is on a CPU, so a sample falls
 *          where the thread's CPU time reached it, to the microsecond.
 *   posix  a POSIX timer on the thread's CPU clock (timer_create,
 *          SIGEV_THREAD_ID). The kernel checks those on the scheduler tick (4 ms
 *          at HZ=250), so every sample falls on a tick.
 *
 * Why perf is preferred: work that repeats with a period near a multiple or a
 * simple fraction of the tick aliases with tick-bound samples (they keep landing
 * on the same few points of the period; docs/engines.md, "Periodic work"). And a
 * fixed sampling period aliases the same way with work whose period divides it.
 * So with perf the handler draws each next period at random, uniformly from
 * [interval/2, 3·interval/2) (mean: the interval), and no periodic work can
 * stay in step with the samples. Each perf sample weighs the thread's CPU time
 * since its previous sample (its CPU clock, read in the handler): exact, whatever
 * the period drawn, a coalesced signal, or an overflow the kernel skipped. The
 * counter's own task clock bounds that: it stops while the counter is parked
 * (stop cpu), so CPU used then is not charged to the next sample. (The thread's
 * CPU clock, not the task clock, is the weight because in a virtual machine the
 * task clock also counts the time the host took the CPU away, steal time, which
 * the thread's CPU clock, its THREAD_CPU records and the POSIX timers leave
 * out.) A POSIX sample weighs interval × (1 + overruns), as the kernel counts
 * them.
 *
 * A thread's first sample: its first period is drawn so that a thread using less
 * than one period of CPU is sampled with a probability proportional to its CPU,
 * and the first sample weighs a whole period (POSIX: the first expiry is uniform
 * in the first interval; perf: the stationary start of the random periods), so
 * short threads are neither invisible nor overweighted.
 *
 * Which source: rp_cputimer_init decides once, from the `timer=` option: `auto`
 * takes perf if perf_event_open works for the calling thread with kernel-mode
 * samples allowed (perf_event_paranoid <= 1, or CAP_PERFMON/CAP_SYS_ADMIN), and
 * POSIX timers otherwise (containers often forbid perf_event_open); `perf`
 * insists (user-mode samples only if that is all it may have); `posix` never
 * tries perf. A perf counter that cannot be opened for one thread (EMFILE,
 * ENOMEM) gives that thread a POSIX timer instead, counted in
 * rp_cputimer_stats.
 *
 * A thread whose timer another thread made (the /proc scan, adoption) may die
 * unseen; a POSIX CPU timer of a dead thread reads disarmed, and that is how the
 * registry finds them (threads.h). A perf counter of a dead thread cannot be told
 * from an idle one, so such a thread also gets a probe: a POSIX timer on its CPU
 * clock that is armed 100 years away and never fires.
 *
 * Threads: rp_cputimer_init once, before the others. Create, set, delete and
 * alive are called under the thread registry's lock (threadtimer.c), from any thread
 * but a signal handler. rp_cputimer_tag, rp_cputimer_is_timer and
 * rp_cputimer_sample are async-signal-safe: no allocation, no locks, no TLS; three system calls
 * (clock_gettime, read, ioctl) for a perf sample, none for a POSIX one.
 */
#ifndef RINGPROF_SRC_CPUTIMER_H
#define RINGPROF_SRC_CPUTIMER_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "ringprof/options.h"            /* enum rp_timer_source */

struct rp_cputimer {
    _Atomic int kind;    /* RP_TIMER_PERF or RP_TIMER_POSIX; 0: none (deleted:
                          * a handler may read it while shutdown deletes)      */
    int has_probe;       /* perf: `timer` is the liveness probe                 */
    _Atomic int fd;      /* perf: the counter; -1 once closing (cputimer.c)     */
    _Atomic int busy;    /* perf: the handler is using fd                       */
    timer_t timer;       /* posix: the timer; perf: the probe (has_probe)       */
    uint64_t id;         /* perf: PERF_EVENT_IOC_ID, checked before the close   */
    int parked;          /* perf: disabled by rp_cputimer_set (registry lock)   */
    /* The thread's own handler (perf): its task clock and CPU clock at its
     * previous sample (modulo 2^64; at first set so that the first sample weighs
     * the whole period it ends), and its random state for the next period. */
    uint64_t last_task, last_cpu;
    uint64_t rng;
};

/*
 * rp_cputimer_init: choose the source for `want` (RP_TIMER_AUTO: see above) and
 * set up the descriptor table the handler reads. `interval_ns` is the period the
 * probe opens a counter with. With RP_TIMER_AUTO it never fails: whatever stops
 * perf (a refused counter, no memory for the table) leaves POSIX timers. @return
 * 0, or -1 with the reason in err and errno set (ENOMEM: out of memory) for
 * RP_TIMER_PERF. Not signal-safe; once, before any timer is made (a test may call
 * it again: the timers made after follow the new source).
 */
int rp_cputimer_init(enum rp_timer_source want, int signo, uint64_t interval_ns,
                     char *err, size_t errlen);

/* The source chosen by rp_cputimer_init (RP_TIMER_PERF or RP_TIMER_POSIX), and
 * its name for status and metadata: "perf", "perf-user" (user-mode samples only:
 * kernel-mode CPU is charged to the thread's next user-mode sample) or "posix".
 * Any thread. */
enum rp_timer_source rp_cputimer_source(void);
const char *rp_cputimer_source_name(void);

/*
 * rp_cputimer_create: make `t` a timer on thread `tid` (its CPU clock `clock`),
 * signalling `tag` (returned by rp_cputimer_tag in the handler; never 0), with
 * `interval_ns` as the mean period, and arm it: parked (it never fires, but reads
 * as armed) if `parked`. `probe`: the thread may die unseen (rp_cputimer_alive
 * must work). The caller makes everything the handler reads ready before. @return
 * 0, or -1 with errno (ESRCH or EINVAL: the thread is gone or going).
 */
int rp_cputimer_create(struct rp_cputimer *t, pid_t tid, clockid_t clock, uint64_t tag,
                       int probe, uint64_t interval_ns, int parked);

/* rp_cputimer_set: a new mean period, or parked / unparked. A POSIX timer is
 * re-armed with a first expiry at a random point of the new period. A perf
 * counter is disabled while parked (its task clock stops counting, so the weights
 * cover only the CPU time sampled), and on unparking resumes the period it was
 * in; otherwise the period in progress restarts with one drawn from the new
 * interval (the handler draws from the interval in force at each sample anyway).
 * Errors (a thread that just died) are ignored. */
void rp_cputimer_set(struct rp_cputimer *t, uint64_t interval_ns, int parked);

/* rp_cputimer_delete: no signal is sent after it returns (one already pending
 * may still be delivered; its tag then finds no live slot). */
void rp_cputimer_delete(struct rp_cputimer *t);

/* rp_cputimer_alive: does the timer still count, i.e. does its thread live?
 * Only for timers made with `probe` (or POSIX ones). */
int rp_cputimer_alive(struct rp_cputimer *t);

/* --------------------------------------------------- async-signal-safe -- */

/* The tag of the timer that sent this signal (si_value of a POSIX timer, the
 * descriptor table's entry for si_fd of a perf counter), or 0 if it came from
 * no timer of ours. */
uint64_t rp_cputimer_tag(const siginfo_t *si);

/* Did this signal come from a CPU timer at all (a POSIX timer, or a perf counter
 * while the perf source is in use), even one deleted since (rp_cputimer_tag is
 * then 0, or a stale tag)? If not, someone else sent it. */
int rp_cputimer_is_timer(const siginfo_t *si);

/* In the signal handler, on the thread `t` belongs to: the CPU time this sample
 * stands for, and (perf) the next period drawn and set. `interval_ns`: the mean
 * period in force now. */
uint64_t rp_cputimer_sample(struct rp_cputimer *t, const siginfo_t *si,
                            uint64_t interval_ns);

/* Counts since start: perf counters made, threads that got a POSIX timer because
 * their perf counter could not be opened, and why the last one failed (errno). */
struct rp_cputimer_stats {
    uint64_t perf, posix, perf_failed;
    int last_errno;
};
void rp_cputimer_stats(struct rp_cputimer_stats *out);

#endif
