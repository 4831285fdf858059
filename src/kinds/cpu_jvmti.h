/*
 * src/kinds/cpu_jvmti.h — the portable engine: a sampler thread and JVMTI calls.
 *
 * A JVMTI agent thread wakes every interval, reads each live Java thread's CPU
 * time (GetThreadCpuTime), and for every thread whose CPU time moved calls
 * GetStackTrace and pushes one record (sample.h) weighted by the CPU time spent
 * since that thread's previous reading — so the weights add up to the CPU the
 * threads used, whatever the interval. Records go into the sampler's own ring
 * (the sampler is its only producer; the flusher its consumer); each names its
 * slot and generation.
 *
 * It needs nothing but JVMTI (can_get_thread_cpu_time), so it runs on any JVM. The
 * price: GetStackTrace on another thread waits for that thread to reach a
 * safepoint or handshake poll, so stacks are biased towards poll locations (loop
 * back-edges, method returns), and hot code between polls is attributed to the
 * nearest poll. Only Java threads are sampled, and only Java frames are recorded.
 * docs/engines.md says so plainly.
 *
 * Threads: start and stop from the agent's lifecycle; the sampler is its own
 * agent thread.
 */
#ifndef RINGPROF_SRC_ENGINE_JVMTI_H
#define RINGPROF_SRC_ENGINE_JVMTI_H

#include <stddef.h>
#include <stdint.h>
#include <jvmti.h>

#include "ringprof/ring.h"

struct rp_jvmti_config {
    uint64_t interval_ns;
    uint32_t depth;
    size_t ring_bytes;
};

/* Create the ring and start the sampler thread (RunAgentThread). @return 0, or -1
 * with the reason in err. */
int rp_jvmti_start(jvmtiEnv *jvmti, JNIEnv *jni, const struct rp_jvmti_config *cfg,
                   char *err, size_t errlen);

/* The ring the flusher drains (NULL before start). */
struct rp_ring *rp_jvmti_ring(void);

/* The CPU clock the sampler last read for the thread in slot `s` (0: not yet
 * looked at), for threads whose own clock cannot be read (no tid). Any thread;
 * the value may be one look old. */
struct rp_slot;
uint64_t rp_jvmti_cpu_ns(const struct rp_slot *s);

/* The sampler thread's kernel tid (0 before it runs), for the agent CPU gauge. */
int rp_jvmti_sampler_tid(void);

/* The control socket: pause (1) or resume (0) sampling, and change the period.
 * While paused the sampler still reads CPU clocks (so the first sample after
 * resuming weighs only CPU used since) but takes no stacks. Any thread. */
void rp_jvmti_pause(int paused);
void rp_jvmti_set_interval(uint64_t interval_ns);

/* Ask the sampler to stop and wait up to `wait_ms` for it to leave its loop. */
void rp_jvmti_stop(unsigned wait_ms);

/* The cpu kind with this engine: its descriptor (flush/kind.h), which agent.c lists. */
struct rp_kind;
extern const struct rp_kind rp_kind_cpu_jvmti;

#endif
