/*
 * src/kinds/cpu_async.h — the async engine: the CPU-timer signal handler.
 *
 * Each sampled thread has a CPU timer (threads.h, cputimer.h: a perf_event
 * task-clock counter, or a POSIX CPU-clock timer) that sends it `signo` (SIGPROF
 * by default) each time it has used about `interval` of CPU. The handler, running
 * on that thread, walks its stack (stackwalk.h: native frames, HotSpot's stubs,
 * Java frames by AsyncGetCallTrace with its recoveries) and pushes one record
 * (sample.h) to the thread's ring. A sample taken in one of the agent's own
 * callbacks before the callback has its thread's Java stack is held in the slot
 * and pushed by the callback with that stack (rp_async_callback_stack, which
 * the engine hands callstack.h at its start with rp_async_callback_walk). The
 * record weighs the CPU time the timer says the sample stands for
 * (rp_cputimer_sample: a perf counter's task clock since the thread's previous
 * sample; a POSIX timer's interval × (1 + overruns), since the kernel checks
 * POSIX CPU timers on the scheduler tick).
 *
 * The handler is async-signal-safe (design invariant 1): it allocates nothing,
 * takes no locks, uses no TLS (the slot comes from the timer's tag: si_value, or
 * si_fd through cputimer.c's descriptor table), calls no JVMTI or JNI function
 * except AsyncGetCallTrace, and saves errno. It never blocks signals, and nothing
 * of the agent blocks it (a CPU sample in an agent callback is shown as the
 * agent's work under its Java caller). A fault inside the walk (AGCT reading a
 * half-built frame, the unwinder reading a corrupt
 * stack) is caught: a SIGSEGV/SIGBUS handler, installed in front of HotSpot's,
 * siglongjmps back into the handler when the faulting thread is inside a walk and
 * the fault is in native code, and passes every other fault on to the previous
 * handler exactly (same arguments; SA_SIGINFO or not; SIG_DFL and SIG_IGN handled).
 * HotSpot takes SIGSEGV on purpose (implicit null checks, safepoint polls,
 * SafeFetch); those faults are in generated code or in threads not walking, and
 * reach HotSpot untouched — except SafeFetch inside a walk, which since JDK 19 is
 * code in libjvm: its fault pcs (_SafeFetch32_fault, _SafeFetchN_fault, read
 * from libjvm's .symtab at start) are always passed on.
 *
 * Shutdown: rp_async_stop clears the "on" flag that the handler checks first,
 * then waits until no handler is running (an atomic in-flight count). Timers are
 * deleted by threads.h before; a signal that was already pending finds the flag
 * off and returns. Slot memory is never freed, so even that late signal reads
 * valid memory.
 *
 * Threads: rp_async_* are called from the agent's lifecycle (not signal-safe);
 * the handlers run on any thread.
 */
#ifndef RINGPROF_SRC_ENGINE_ASYNC_H
#define RINGPROF_SRC_ENGINE_ASYNC_H

#include <stddef.h>
#include <stdint.h>

#include <jni.h>

#include "core/histogram.h"

struct rp_async_config {
    uint64_t interval_ns;
    uint32_t depth;
    int native;               /* walk native frames too                           */
    int signo;
};

/* Is AsyncGetCallTrace exported by this JVM? (dlsym RTLD_DEFAULT). */
int rp_async_available(void);

/* Refuse a signal that already has a handler (another profiler, the
 * application). @return 0 if `signo` is at SIG_DFL or SIG_IGN, else -1 with the
 * reason in err. */
int rp_async_check_signal(int signo, char *err, size_t errlen);

/* Install the timer handler and the crash guard, and switch sampling on. Call after
 * the JVM has installed its own signal handlers (VMInit, or attach). @return 0, or
 * -1 with the reason in err. */
int rp_async_start(const struct rp_async_config *cfg, char *err, size_t errlen);

/* Switch sampling off and wait (up to `wait_ms`) for running handlers to leave.
 * Timers should be deleted first (rp_threads_disarm_all). The handlers stay
 * installed: a late signal finds sampling off. */
void rp_async_stop(unsigned wait_ms);

/* The period each sample weighs from now on (the control socket's "set
 * interval"; threads.h re-arms the timers). Any thread. */
void rp_async_set_interval(uint64_t interval_ns);

/* Is our handler still the one installed for the timer signal? (The application
 * may replace it; the flusher checks this every flush and says so once.) */
int rp_async_handler_intact(void);
/* The timer signal's name ("SIGPROF", or "signal 37" for a real-time one), once
 * started; any thread. */
const char *rp_async_signal_name(void);

/* Is the crash guard still in front of the SIGSEGV and SIGBUS handlers? Someone
 * who installs a handler after us takes faults in walks away from it (the flusher
 * checks and says so once). */
int rp_async_guard_intact(void);

/* Has any of our handlers (the timer's, the crash guard's) ever been installed,
 * even by an rp_async_start that then failed? Such a handler may run at any time
 * on any thread, so the library must then never be unloaded. */
int rp_async_ever_installed(void);

struct rp_slot;
struct rp_java_frame;
/* The calling thread's Java frames by AsyncGetCallTrace from its last Java frame
 * (rp_stackwalk_anchor), inside one of its JVMTI callbacks, under the crash
 * guard (its own jump buffer in the slot, so a CPU sample that interrupts it
 * cannot clobber it). @return the frames (> 0), or <= 0 if not taken (the
 * async engine never started, AGCT missing or failed, a fault). Not a signal
 * handler. */
int rp_async_callback_walk(struct rp_slot *s, JNIEnv *jni, struct rp_java_frame *out,
                           int depth);

/* A callback of the thread's own has its Java stack (`frames`, n of them; n 0:
 * it has none and will not): a CPU sample the handler held back meanwhile
 * (taken in the callback, no Java frames of its own) is pushed now with these
 * frames, as the Java caller of the agent's work. Call it once the stack is
 * taken, and again (n 0) before the callback returns. The thread's own
 * callbacks only; not a signal handler. */
void rp_async_callback_stack(struct rp_slot *s, const struct rp_java_frame *frames,
                             uint32_t n);

/* Handler statistics for the flusher. */
struct rp_async_stats {
    uint64_t stray;           /* timer signals that matched no live slot          */
    uint64_t foreign;         /* of those, signals from no CPU timer at all:
                               * setitimer, kill, another profiler                */
    uint64_t crashed;         /* walks ended by the crash guard                   */
};
void rp_async_stats(struct rp_async_stats *out);
/* The handler-duration histogram (ns, entry to just before the push). */
void rp_async_hist(struct rp_hist_snap *out);

/* The cpu kind with this engine: its descriptor (flush/kind.h), which agent.c lists. */
struct rp_kind;
extern const struct rp_kind rp_kind_cpu_async;

#endif
