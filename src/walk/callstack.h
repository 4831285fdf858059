/*
 * src/walk/callstack.h — Java stacks taken outside the signal handler: the calling
 * thread's, inside a JVMTI callback (an allocation sample, a contended monitor),
 * and another thread's (the jvmti and wall samplers).
 *
 * The calling thread's stack. Inside a JVMTI callback the thread is "in native"
 * and HotSpot has made its last Java frame walkable, so AsyncGetCallTrace can
 * start from that frame as it does for a thread in a JNI method. It costs about
 * a microsecond where GetStackTrace, which goes through the VM's frame streams
 * and transitions the thread into the VM and back, costs several
 * (bench/README.md has both). rp_callstack_here takes the AGCT path when it is
 * there and falls back to GetStackTrace when AGCT is missing or fails, so a
 * stack is never lost to it. The frames are the same: both read the compiled
 * code's debug information for the same pc (the call into the VM), and the
 * agent turns DebugNonSafepoints on, which AGCT needs for exact inlining.
 *
 * Another thread's stack needs GetStackTrace (a handshake): rp_callstack_of.
 *
 * Both write struct rp_java_frame (sample.h) and return an enum rp_walk_status.
 * Threads: any thread that may call JVMTI; not a signal handler.
 */
#ifndef RINGPROF_SRC_CALLSTACK_H
#define RINGPROF_SRC_CALLSTACK_H

#include <stdint.h>
#include <jvmti.h>

#include "core/sample.h"

/* The JVMTI environment GetStackTrace uses. Agent start. */
void rp_callstack_init(jvmtiEnv *jvmti);

/* The signal handler's part in a callback's stack (cpu_async.h), which its
 * engine hands here when it starts (the pointer is kept): `walk` takes the
 * calling thread's Java frames by AsyncGetCallTrace under the crash guard
 * (@return their count, <= 0 if not taken), `push_held` pushes a CPU sample the
 * handler held back for want of them. Unset (engine=jvmti, or before the
 * start): every stack by GetStackTrace, nothing held. */
struct rp_slot;
struct rp_callstack_async {
    int (*walk)(struct rp_slot *s, JNIEnv *jni, struct rp_java_frame *out, int depth);
    void (*push_held)(struct rp_slot *s, const struct rp_java_frame *frames, uint32_t n);
};
void rp_callstack_set_async(const struct rp_callstack_async *a);

/*
 * rp_callstack_here: the calling thread's Java frames, leaf first, into
 * out[0..depth), from inside a JVMTI callback (`jni` is its JNIEnv, `s` its
 * slot: the AGCT path runs under the crash guard there). Sets *n and,
 * when the stack did not fit, RP_SAMPLE_TRUNCATED in *flags. @return RP_WALK_OK,
 * RP_WALK_NO_JAVA_FRAMES or RP_WALK_JVMTI_ERROR. The frames stay the thread's
 * stack for the signal handler (threads.h: cb_njava, cb_kept) until the next
 * call, and a CPU sample held back for want of them is pushed with them.
 */
int32_t rp_callstack_here(struct rp_slot *s, JNIEnv *jni, struct rp_java_frame *out,
                          uint32_t depth, uint32_t *n, uint16_t *flags);

/* The calling thread's buffer for rp_callstack_here (the slot's cb_java, made at
 * its first use: depth frames, kept with the slot), or NULL if out of memory. */
struct rp_java_frame *rp_callstack_buffer(struct rp_slot *s, uint32_t depth);

/*
 * rp_callstack_enter / rp_callstack_leave: bracket a JVMTI callback of the
 * thread's own in which the agent works (`work`, enum rp_agent_work): CPU
 * samples taken in between show [ringprof:<work>] above the Java caller, which
 * rp_callstack_here provides (rp_callstack_async's push_held). enter returns the work it
 * replaces, for leave.
 */
int rp_callstack_enter(struct rp_slot *s, int work);
void rp_callstack_leave(struct rp_slot *s, int outer);

/*
 * rp_callstack_of: thread `t`'s Java frames by GetStackTrace, converted in place
 * (jvmtiFrameInfo and rp_java_frame are both 16 bytes). As above otherwise.
 */
int32_t rp_callstack_of(jthread t, struct rp_java_frame *out, uint32_t depth,
                        uint32_t *n, uint16_t *flags);

/* How rp_callstack_here got its stacks, cumulative. */
struct rp_callstack_stats {
    uint64_t agct;               /* by AsyncGetCallTrace                           */
    uint64_t jvmti;              /* by GetStackTrace (AGCT missing or failed)      */
};
void rp_callstack_stats(struct rp_callstack_stats *out);

#endif
