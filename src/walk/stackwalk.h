/*
 * src/walk/stackwalk.h — the async engine's stack walk: native frames, HotSpot's
 * stubs, then the Java frames, all from inside the CPU-timer signal handler.
 *
 * AsyncGetCallTrace (AGCT) walks Java frames, but only from a frame it can make
 * sense of. Handed the interrupted context as it is, it gives up whenever the
 * thread is somewhere else: in a stub (Math.sin's `libmSin`, SHA-256's
 * `sha256_implCompressMB`, CRC32's `updateBytesCRC32`, the arraycopy and fill
 * stubs — "unknown_java"), in C code that compiled Java called directly (a
 * leaf call into libjvm or libc), or in the VM with a last-Java-frame anchor
 * that HotSpot has not made walkable yet ("unknown_not_java"). On stub-heavy
 * code that was a third to a half of the CPU. So the walk goes
 * (docs/engines.md, "The stack walk", is the long form):
 *
 *  1. native frames, with the lock-free unwinder (unwind.h), up to the first pc
 *     that is in no loaded object;
 *  2. while that pc is in a stub (codecache.h): the stub becomes a frame of its
 *     own (named on the flusher by the JVM's name for it), and the walk steps
 *     out of it — by the return address on top of the stack, by the frame
 *     pointer after `enter`, by the frame size in its blob's header, or by the
 *     first word above that a call into it left — and goes on with native
 *     frames if it lands in native code. Every return address it steps to must
 *     follow a call instruction whose target, where it says one, leads into
 *     the code stepped out of, or the step is not taken;
 *  3. the Java frames by AGCT, from the frame the walk reached (a copy of the
 *     context with that frame's pc, sp and fp), then from the interrupted
 *     context as it is;
 *  4. a thread in the VM: its anchor made walkable as HotSpot's
 *     JavaFrameAnchor::make_walkable would, or pointed for a moment at the Java
 *     frame below a runtime stub AGCT refuses (no other thread reads the anchor
 *     of a thread in the VM; the old values go back, after a fault too);
 *  5. compiled code or the interpreter where AGCT gives up (prologues,
 *     epilogues, slow paths, a method's entry): the method from its code blob
 *     or from rbx, its callers by AGCT from the frame below;
 *  6. in the agent's own callbacks: the Java stack the callback took (struct
 *     rp_walk_agent).
 *
 * So a sample in `libmSin` reads `libmSin ← MyClass.compute ← …`. What each step
 * found is counted (struct rp_stackwalk_stats).
 *
 * Threads: the signal handler (async-signal-safe; run it under the crash guard,
 * it reads memory that can change under it). rp_stackwalk_init at agent start.
 */
#ifndef RINGPROF_SRC_STACKWALK_H
#define RINGPROF_SRC_STACKWALK_H

#include <stdint.h>
#include <ucontext.h>
#include <jni.h>

#include "core/sample.h"
#include "code/vmstructs.h"

/* AsyncGetCallTrace, found with dlsym (NULL: not exported), and the agent's own
 * code range (for rp_stackwalk's `agent`). Agent start. */
void rp_stackwalk_init(void *agct);

struct rp_stackwalk_result {
    int nnative;            /* pcs written: native frames and stubs, leaf first   */
    int njava;              /* Java frames written (AGCT's layout)                */
    int status;             /* enum rp_walk_status, or AGCT's error code          */
    int truncated;          /* the depth limit was hit                            */
    int agent;              /* the agent's work the sample is in: agent->work, or
                             * RP_AGENT_OTHER if the native walk met the agent's
                             * code outside it (a callback's first instructions) */
    /* What a walk cut short by the crash guard must undo (rp_stackwalk_abandon):
     * it holds the stub table (rp_codecache_enter), it moved the thread's anchor
     * and these were its values. */
    volatile int in_codecache;
    volatile int anchor_moved;
    struct rp_vm_anchor anchor;
    uint64_t saved_sp, saved_pc, saved_fp;
#ifdef RP_TEST_HOOKS
    int ntries;             /* the test build's log: callers tried by AGCT        */
    int64_t tries[3][2];    /* (sp offset of the caller, AGCT's answer)           */
#endif
};

/*
 * rp_stackwalk: the mixed stack of the interrupted context `uc` on the calling
 * thread, whose JNIEnv is `env` (NULL: not a Java thread). Native and stub
 * frames go to pcs (only if `native`; the walk through them happens either
 * way), Java frames to java, depth frames in all. `agent`: the thread was in the
 * agent's own work (enum rp_agent_work, sample.h); the native frames from the
 * leaf down to the outermost one in the agent's code are dropped (the flusher
 * puts one marker frame in their place), and if the agent's callback has taken
 * its thread's Java stack already (agent_java, agent_njava > 0), that stack is
 * this sample's Java frames. Async-signal-safe.
 */
/* What the thread's own agent callbacks know (threads.h): the work it is in
 * (enum rp_agent_work, 0: none), the Java stack its callback took (valid while
 * `njava` > 0), and the one the last callback took with the anchor it had then:
 * while the thread is still in the same excursion into the VM (its anchor's sp
 * unchanged: JVMTI's event posting around the callback), that is its stack. */
struct rp_walk_agent {
    int work;
    const struct rp_java_frame *java;
    int njava;
    int kept_njava;
    uint64_t kept_anchor_sp;
};

void rp_stackwalk(const ucontext_t *uc, JNIEnv *env, int native,
                  const struct rp_walk_agent *agent, int depth,
                  uint64_t *pcs, struct rp_java_frame *java,
                  struct rp_stackwalk_result *out);

/* Undo what a walk that the crash guard cut short left behind (the stub table
 * held, the anchor moved). Async-signal-safe; a no-op after a whole walk. */
void rp_stackwalk_abandon(struct rp_stackwalk_result *out);

/*
 * rp_stackwalk_anchor: the calling thread's Java frames by AsyncGetCallTrace from
 * its last Java frame anchor, for a thread inside a JVMTI callback (in native,
 * its anchor walkable); callstack.h. @return the frames written (> 0), or AGCT's
 * answer (<= 0). Not for signal handlers (it does not need to be one).
 */
int rp_stackwalk_anchor(JNIEnv *env, struct rp_java_frame *java, int depth);

/* What the walks did, cumulative. */
struct rp_stackwalk_stats {
    uint64_t stub_frames;        /* stubs stepped out of                            */
    uint64_t stub_stuck;         /* stubs the walk could not step out of            */
    uint64_t from_frame;         /* AGCT answered from the frame the walk reached   */
    uint64_t from_context;       /* ... from the interrupted context                */
    uint64_t anchor_fixed;       /* AGCT answered once the anchor was made walkable */
    uint64_t anchor_moved;       /* ... once it was pointed below a stub's frame    */
    uint64_t compiled_popped;    /* a compiled method's frame stepped out of        */
    uint64_t from_callback;      /* frames of the agent's callback, reused          */
    uint64_t interp_entry;       /* an interpreted method's entry stepped out of    */
    uint64_t from_kept;          /* the last callback's frames, same VM excursion   */
};
void rp_stackwalk_stats(struct rp_stackwalk_stats *out);

/* Register the walk.* counters (counters.h), group RP_COUNTERS_WALK: what the
 * walk recovered. Agent start, before the flusher runs. */
void rp_stackwalk_counters_register(void);

#endif
