/*
 * src/core/sample.h — the record an engine pushes into a ring, and the flusher pops.
 * This is the only format shared between the sampling side (the CPU-timer signal
 * handler, the jvmti sampler thread) and the flusher.
 *
 * A record is a fixed header, then `nnative` native pcs (leaf first), then `njava`
 * Java frames (leaf first, below the native ones): one mixed stack, leaf at the
 * top. Frames are raw — pcs, jmethodIDs and bcis — and are resolved to names on the
 * flusher (design invariant 4). The handler pushes a record with rp_ring_pushv
 * straight from its preallocated buffers (header, pc array, AGCT's frame array),
 * so struct rp_java_frame has exactly the layout of AsyncGetCallTrace's
 * ASGCT_CallFrame (cpu_async.c checks this at compile time).
 *
 * The header names the slot (and its generation) the sample belongs to, because
 * the jvmti engine pushes samples of every thread into the sampler's one ring. A
 * record whose generation no longer matches its slot (the thread ended and the
 * slot was reused before the flusher saw the record) is dropped and counted.
 *
 * What a kind's records carry after their frames (its tail) is the kind's own:
 * its struct is declared in the kind's header and its size is in the record
 * entry of the kind's descriptor (flush/kind.h), against which the flusher
 * checks each record's length. A new record type is one enumerator here.
 */
#ifndef RINGPROF_SRC_SAMPLE_H
#define RINGPROF_SRC_SAMPLE_H

#include <stdint.h>

/* What kind of event a record is. */
enum rp_sample_type {
    RP_SAMPLE_CPU = 1,     /* async engine: CPU-timer signal                       */
    RP_SAMPLE_CPU_JVMTI,   /* jvmti engine: GetStackTrace on a thread that ran     */
    RP_SAMPLE_ALLOC,       /* SampledObjectAlloc: frames from GetStackTrace, then
                            * a struct rp_alloc_tail (alloc.h)                   */
    RP_SAMPLE_WALL,        /* wall-clock sampler (wall.c): frames from
                            * GetStackTrace (or the thread's previous ones, for a
                            * repeat), then a struct rp_wall_tail (wall.h);
                            * weight = wall ns                                   */
    RP_SAMPLE_LOCK         /* MonitorContendedEntered after a wait >= lock= (lock.c):
                            * the waiting stack, then a struct rp_lock_tail
                            * (lock.h); time = the wait's start, weight = ns
                            * waited                                             */
};

/* Why a walk produced no (or only part of a) Java stack. 0 is success. The
 * negative AsyncGetCallTrace codes (-1 .. -10 in JDK 17's forte.cpp) are kept as
 * they are, so the flusher can name them ("agct.gc_active", ...); ours start at
 * -100. */
enum rp_walk_status {
    RP_WALK_OK = 0,
    RP_WALK_CRASHED = -100,       /* a fault inside the walk was caught (sigsetjmp) */
    RP_WALK_NO_AGCT = -101,       /* AsyncGetCallTrace not available                */
    RP_WALK_NOT_JAVA = -102,      /* a thread with no JNIEnv: GC, JIT, native       */
    RP_WALK_NO_JAVA_FRAMES = -103,/* AGCT returned 0 frames / GetStackTrace 0       */
    RP_WALK_JVMTI_ERROR = -104    /* jvmti engine: GetStackTrace failed             */
};

enum rp_sample_flags {
    RP_SAMPLE_TRUNCATED = 1u << 0   /* the walk hit the depth limit                */
};

/* One Java frame: exactly ASGCT_CallFrame { jint lineno; jmethodID method_id; }.
 * `bci` is the bytecode index, or -3 for a method declared native (AGCT's
 * convention; the jvmti engine converts its jlocation -1 to -3 too). */
struct rp_java_frame {
    int32_t bci;
    uint32_t pad;
    uint64_t method;        /* jmethodID                                           */
};

#define RP_BCI_NATIVE (-3)

struct rp_sample_hdr {
    uint16_t type;          /* enum rp_sample_type                                 */
    uint16_t flags;         /* enum rp_sample_flags                                */
    int32_t status;         /* enum rp_walk_status, or an AGCT error code (< 0)    */
    uint64_t time;          /* CLOCK_MONOTONIC ns                                  */
    uint64_t weight;        /* CPU ns this sample stands for (overruns included)   */
    uint32_t slot;          /* thread slot index (threads.h)                       */
    uint32_t gen;           /* the slot's generation when the sample was taken     */
    uint32_t nnative;       /* native pcs that follow the header                   */
    uint32_t njava;         /* Java frames that follow the pcs                     */
    uint32_t handler_ns;    /* async: handler time before the push; 0 otherwise    */
    uint32_t agent;         /* async: the agent's work the thread was in (enum
                             * rp_agent_work), 0: none; its frames are dropped and
                             * the flusher writes one marker frame in their place */
    uint64_t vthread;       /* the java.lang.Thread id of the virtual thread the
                             * sample ran on (vthreads.h; `slot` is its carrier),
                             * 0: none, or not known                             */
};

/* Agent work that runs on application threads (their own JVMTI callbacks). A
 * CPU sample that lands in it keeps its Java caller below one marker frame,
 * "[ringprof:<name>]" (rp_agent_work_name): the agent's cost, shown where it
 * is paid. */
enum rp_agent_work {
    RP_AGENT_NONE = 0,
    RP_AGENT_ALLOC,         /* SampledObjectAlloc                                  */
    RP_AGENT_LOCK,          /* MonitorContendedEnter/Entered                       */
    RP_AGENT_CLASS,         /* ClassPrepare: jmethodIDs for a new class            */
    RP_AGENT_THREAD,        /* ThreadStart/ThreadEnd: registration                 */
    RP_AGENT_OTHER,         /* the agent's code found on the stack outside those   */
    RP_AGENT_WORKS
};

static inline const char *rp_agent_work_name(uint32_t w)
{
    static const char *const names[RP_AGENT_WORKS] = {
        "", "[ringprof:alloc]", "[ringprof:lock]", "[ringprof:class]", "[ringprof:thread]",
        "[ringprof]"};
    return w < RP_AGENT_WORKS ? names[w] : "[ringprof]";
}

/* Whether work `w`'s callback takes its thread's Java stack and pushes the CPU
 * sample the handler held back meanwhile (rp_async_callback_stack).
 * Async-signal-safe. */
static inline int rp_agent_work_takes_stack(uint32_t w)
{
    return w == RP_AGENT_ALLOC || w == RP_AGENT_LOCK;
}

static inline const uint64_t *rp_sample_pcs(const struct rp_sample_hdr *h)
{
    return (const uint64_t *)(const void *)(h + 1);
}

static inline const struct rp_java_frame *rp_sample_java(const struct rp_sample_hdr *h)
{
    return (const struct rp_java_frame *)(const void *)(rp_sample_pcs(h) + h->nnative);
}

/* Bytes of a record's header and frames with the given frame counts. */
static inline uint64_t rp_sample_size(uint64_t nnative, uint64_t njava)
{
    return sizeof(struct rp_sample_hdr) + nnative * sizeof(uint64_t) +
           njava * sizeof(struct rp_java_frame);
}

#endif
