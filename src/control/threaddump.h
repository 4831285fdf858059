/*
 * src/control/threaddump.h — the thread dump behind `ctl threads` (docs/control.md):
 * every Java thread with its state, its stack with line numbers, the monitors
 * it holds (and the frame that locked each), the monitor it is blocked on or
 * waiting on, the java.util.concurrent object it is parked on and that object's
 * exclusive owner, the contended monitor wait in progress the lock module saw
 * (lock.h), and first the deadlocks: cycles of threads each waiting for a lock
 * the next one holds.
 *
 * Virtual threads (JDK 21+), which GetAllThreads does not return, come from the
 * JVM's thread containers (threadcontainers.h), at most
 * RP_THREADDUMP_VTHREADS_MAX of them, and are written in groups of alike ones
 * with their count ("virtual_threads"); they take part in the deadlocks like
 * any thread.
 *
 * The dump is taken on the flusher (rp_engine_call: JVMTI and JNI need a thread
 * attached to the JVM), one thread after another with GetAllThreads,
 * GetThreadState, GetStackTrace, GetOwnedMonitorStackDepthInfo and
 * GetCurrentContendedMonitor; each of those is a handshake with that one thread,
 * never a stop of the whole VM, and no Java code runs (fields are read with JNI;
 * the calls are System.identityHashCode, an intrinsic, and on JDK 21+ the
 * thread containers' streams, threadcontainers.h). Application threads
 * never wait for the agent: the dump waits for them. Because the threads are
 * read one by one, a cycle is reported only after a second read of each of its
 * threads finds it still waiting for the same lock.
 *
 * A lock is named by its identity hash ("0x1b6d3586", stable across dumps of the
 * same JVM) and its class. A monitor's owner is the thread whose owned monitors
 * hold it; a parked-on object's owner is its exclusiveOwnerThread where it is an
 * AbstractOwnableSynchronizer (ReentrantLock's and ReentrantReadWriteLock's write
 * side are). Ownable synchronizers a thread holds are known only through the
 * threads parked on them: no heap walk.
 *
 * Capabilities: can_get_owned_monitor_info, can_get_owned_monitor_stack_depth_info
 * and can_get_current_contended_monitor, asked for at load and again at the
 * first dump if they were not had; the reply names those missing ("unavailable")
 * and leaves out what they would have given. Without
 * can_get_current_contended_monitor (HotSpot grants it at load only, so an
 * attached agent lacks it), a blocked thread's monitor is known by its holder
 * alone, read through VMStructs (rp_lock_pending_owner): enough for the cycles.
 */
#ifndef RINGPROF_SRC_THREADDUMP_H
#define RINGPROF_SRC_THREADDUMP_H

#include <stddef.h>
#include <jvmti.h>

#include "core/json.h"

/* Frames per thread in a dump; a deeper stack says how many were left out
 * ("frames_total"). jstack prints all, but a runaway recursion of 100,000
 * frames would alone fill the reply. */
#define RP_THREADDUMP_FRAMES_MAX 1024

/* Virtual threads read in a dump at most; the rest are counted, not read
 * (threadcontainers.h). Reading one costs a few JVMTI calls (its stack from its
 * continuation when it is not mounted) and keeps its frames until the reply is
 * written: 10,000 of them are well under a second and a few MiB, where a JVM
 * may hold millions. */
#define RP_THREADDUMP_VTHREADS_MAX 10000

/* Load time, after the agent's own capabilities: ask for the dump's (those the
 * JVM offers; a refusal is not an error, the dump asks again). Keeps `vm` and
 * `jvmti` for the dumps. */
void rp_threaddump_init(JavaVM *vm, jvmtiEnv *jvmti);

/*
 * rp_threaddump_reply: take a dump on the flusher and add its members
 * ("unavailable", "deadlocks", "threads", "threads_total", "threads_omitted") to
 * the reply object open in `out`. The threads in a deadlock come first, then the
 * others in the JVM's order while the reply stays within
 * RP_CONTROL_THREADS_REPLY_MAX; those that do not fit are left out and counted
 * ("threads_omitted"). @return 0, or -1 with one sentence in err (the flusher
 * did not answer in time, the agent is shutting down, the deadlocks alone would
 * be larger than the limit). The control server's thread; one call at a time.
 */
int rp_threaddump_reply(struct rp_json *out, char *err, size_t errlen);

#endif
