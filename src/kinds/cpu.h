/*
 * src/kinds/cpu.h — the cpu kind in the chunk: its kind (made first in every chunk,
 * with the sampling period in force when the chunk opened: a kind's period is
 * fixed per chunk) and its writer, which both engines' descriptors (kind.h)
 * name. Both engines produce its records: the signal handler (RP_SAMPLE_CPU,
 * cpu_async.h) and the jvmti sampler (RP_SAMPLE_CPU_JVMTI, cpu_jvmti.h); a
 * record carries no tail, its weight is the thread's CPU time since its
 * previous sample. The engine in force sets the period (at its start and at
 * each `set interval`).
 *
 * Threads: rp_cpu_set_period and rp_cpu_written from any thread; the rest on
 * the flusher thread.
 */
#ifndef RINGPROF_SRC_CPU_H
#define RINGPROF_SRC_CPU_H

#include <stdint.h>

#include "flush/sink.h"

/* The period (ns) for chunks opened from now on. Any thread. */
void rp_cpu_set_period(uint64_t period_ns);

/* The cpu kind's id in the sink's chunk, made if it is not yet. @return 0 on
 * failure (no memory). */
uint32_t rp_cpu_kind(const struct rp_sink *sk);

/* The descriptors' chunk hook (kind.h): the cpu kind, first in every chunk.
 * @return 0, or -1 (no memory: the pass writes nothing). */
int rp_cpu_chunk(const struct rp_sink *sk);

/* The kind's writer (sink.h). Counts the sample for the slot's occupant (status'
 * busiest threads, rp_cpu_written). */
enum rp_sink_result rp_cpu_flush(const struct rp_sink *sk, struct rp_slot *s,
                                 const struct rp_sample_hdr *h, size_t flen);

/* CPU samples written for slot `s`'s present occupant. Any thread. */
uint64_t rp_cpu_written(const struct rp_slot *s);

#endif
