/*
 * src/flush/telemetry.h — process telemetry: once a `telemetry=` period (1 s by
 * default) the flusher writes the gauges of include/ringprof/events.h into the
 * chunk: process CPU (user, system), RSS, Java heap used and committed, GC count
 * and time (all collectors), OS threads (total, runnable), Java threads (live,
 * daemon, started, peak), loaded classes, and the agent's own CPU.
 *
 * Sources: getrusage and /proc/self/statm and /proc/self/stat (one read each);
 * the java.lang.management MXBeans through JNI (MemoryMXBean, the
 * GarbageCollectorMXBeans, ClassLoadingMXBean, ThreadMXBean), looked up once and
 * kept as global references; /proc/self/task/<tid>/stat for the runnable count, bounded to
 * about 1 ms a reading (telemetry.c says how); the agent threads' CPU clocks.
 * The MXBeans' first lookup makes the JVM load java.lang.management and
 * sun.management classes (docs/agent.md lists the cost).
 *
 * A reading that fails is left out of that period and counted
 * (rp_telemetry_stats: the flusher writes it as the counter telemetry.failed);
 * nothing here is fatal. Cumulative gauges (".total") never decrease.
 *
 * Threads: the flusher only (JNI calls on an attached agent thread); never an
 * application thread.
 */
#ifndef RINGPROF_SRC_TELEMETRY_H
#define RINGPROF_SRC_TELEMETRY_H

#include <stdint.h>
#include <jvmti.h>

#include "ringprof/chunk.h"

/* Remember the period (0: off). Before the flusher starts. */
void rp_telemetry_init(jvmtiEnv *jvmti, uint64_t period_ns);

/* Write the gauges at `now` (monotonic ns) if a period has passed since the
 * last reading. Flusher only, with its JNIEnv and the chunk writer. */
void rp_telemetry_pass(JNIEnv *jni, struct rp_chunk_writer *w, uint64_t now);

struct rp_telemetry_stats {
    uint64_t readings;          /* periods written                                 */
    uint64_t failed;            /* gauge readings that failed                       */
    uint64_t task_scan_ns_max;  /* longest /proc/self/task pass                     */
};
void rp_telemetry_stats(struct rp_telemetry_stats *out);

/* Register telemetry.failed (counters.h), group RP_COUNTERS_TELEMETRY. Agent
 * start, before the flusher runs. */
void rp_telemetry_counters_register(void);

#endif
