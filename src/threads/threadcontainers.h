/*
 * src/threads/threadcontainers.h — the virtual threads of a running JVM, for the thread
 * dump (threaddump.h).
 *
 * JVMTI's GetAllThreads returns platform threads only. The JDK's own dumper
 * (jcmd Thread.dump_to_file, jdk.internal.vm.ThreadDumper) finds the virtual
 * threads in jdk.internal.vm.ThreadContainers: the root container (virtual
 * threads started with the Thread API, while jdk.trackAllThreads is true, the
 * default) and every registered container (an ExecutorService of virtual
 * threads, a StructuredTaskScope), kept in ThreadContainers.CONTAINER_REGISTRY
 * as weak references. This walks the same containers through JNI, which no
 * module boundary stops: ThreadContainer.threads() streams each container's
 * live threads, and threadCount() says how many it holds.
 *
 * Cost. The walk runs Java code (the containers' streams) on the calling thread
 * and a few JNI calls per thread; it visits at most `max` virtual threads, and
 * counts the rest with each container's threadCount() (minus the platform
 * threads in it), so a JVM with a million virtual threads costs a dump `max`
 * visits, not a million. The count is the containers' own at the moment each is
 * asked: threads that start or end meanwhile may or may not be in it. A JVM
 * started with -Djdk.trackAllThreads=false counts, but does not track, the
 * virtual threads started with the Thread API: those are neither visited nor
 * counted (the JDK's dumper cannot list them either).
 *
 * Threads: a thread attached to the JVM (the flusher). Not async-signal-safe.
 */
#ifndef RINGPROF_SRC_THREADCONTAINERS_H
#define RINGPROF_SRC_THREADCONTAINERS_H

#include <stddef.h>
#include <stdint.h>
#include <jni.h>

/* What one walk saw. */
struct rp_tc_walk {
    uint64_t visited;            /* virtual threads handed to fn                 */
    uint64_t total;              /* visited, plus those counted but not visited  */
    uint64_t containers;         /* containers looked at, the root included      */
};

/*
 * rp_tc_each: call fn(arg, thread) for the live virtual threads the JVM's
 * thread containers hold, at most `max` of them; `thread` is a local reference
 * the walk deletes when fn returns. `platform`/`nplatform` are the JVM's
 * platform threads (GetAllThreads), whose containers are subtracted from the
 * counts of containers not walked to their end. @return 0 with *out filled, or
 * -1 when this JVM has no thread containers (JDK 18 and earlier), or one could
 * not be read (an exception, no memory): *out then says what was visited.
 */
int rp_tc_each(JNIEnv *jni, size_t max, const jobject *platform, size_t nplatform,
               void (*fn)(void *arg, jobject thread), void *arg, struct rp_tc_walk *out);

/* Whether this JVM has thread containers (after a first rp_tc_each). */
int rp_tc_available(void);

#endif
