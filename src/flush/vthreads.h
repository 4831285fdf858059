/*
 * src/flush/vthreads.h — which virtual thread a sample ran on (JDK 21 and later).
 *
 * A virtual thread runs on a carrier, a platform thread of the JVM's scheduler,
 * and the agent's slots, timers and rings are the carriers' (threads.h). A sample
 * taken on a carrier carries, besides its carrier, the java.lang.Thread id of the
 * virtual thread mounted there (sample.h: rp_sample_hdr.vthread, 0: none), and
 * the flusher names it in the chunk (format.h: VTHREAD). Where the id comes from:
 *
 *   - allocation and lock samples: the JVMTI callback's own `thread` argument,
 *     which is the virtual thread (rp_vthreads_of);
 *   - the jvmti engine's CPU samples: the virtual thread its carrier has
 *     mounted when the sampler reads it (rp_vthreads_mounted: JVMTI's
 *     GetVirtualThread), whose stack it takes;
 *   - the async engine's CPU samples, in the signal handler
 *     (rp_vthreads_current): on a JVM whose monitors are owned by thread ids
 *     (JDK 24 and later, told by JavaThread::_monitor_owner_id being in its
 *     VMStructs), that field of the carrier's own JavaThread, which HotSpot
 *     sets to the mounted virtual thread's id at every mount and back at the
 *     unmount: a plain load, free.
 *     Elsewhere (JDK 21 to 23) only with vthreads=mount: JVMTI's
 *     VirtualThreadMount/Unmount extension events, whose callbacks keep a
 *     per-carrier entry current that the handler loads. They cost every mount and
 *     unmount a JVMTI event (docs/agent.md has the figures), so they are off by
 *     default there; JDK 21's CPU samples then name no virtual thread.
 *
 * Names. A virtual thread's name (often "") is read where the agent holds its
 * java.lang.Thread (the callbacks; the flusher, through JVMTI's GetVirtualThread
 * on the carrier whose sample names an id it has no name for) and kept in a
 * small direct-mapped cache of the most recent ones, lock-free: the flusher
 * reads it when it writes a VTHREAD record, and an id whose name is not known
 * then is written without one and renamed when it is.
 *
 * The lock callbacks also ask rp_vthreads_is_virtual, to keep a virtual
 * thread's wait with the thread rather than its carrier (lock.c).
 *
 * Nothing here runs on JDK 17 (no java.lang.VirtualThread): every id is 0.
 * Threads: as each function says. rp_vthreads_current alone is for the signal
 * handler (async-signal-safe: loads only).
 */
#ifndef RINGPROF_SRC_VTHREADS_H
#define RINGPROF_SRC_VTHREADS_H

#include <stdint.h>
#include <jvmti.h>

#include "ringprof/options.h"
#include "flush/sink.h"
#include "threads/threads.h"

/* How CPU samples learn their virtual thread, as status and the docs name it. */
enum rp_vthreads_cpu {
    RP_VTHREADS_CPU_NONE = 0,   /* not at all (JDK 17, JDK 21 without mount, off)  */
    RP_VTHREADS_CPU_OWNER_ID,   /* JavaThread::_monitor_owner_id                   */
    RP_VTHREADS_CPU_MOUNT       /* the mount/unmount events                        */
};

/* Load time, before AddCapabilities: ask for can_support_virtual_threads where
 * the JVM offers it (GetVirtualThread and the mount events need it; JDK 17's
 * headers do not name the bit, the JVM's offer does). */
void rp_vthreads_want(enum rp_vthreads_mode mode, const jvmtiCapabilities *pot,
                      jvmtiCapabilities *want);

/* Start (VMInit or attach, on a thread with JNI, after rp_vmstructs_init and
 * rp_vmstructs_learn_env): find java.lang.BaseVirtualThread and the fields, and
 * the way CPU samples are labelled; with vthreads=mount on a JVM without owner
 * ids, enable the mount events. `got` is what AddCapabilities granted. */
void rp_vthreads_start(jvmtiEnv *jvmti, JNIEnv *jni, enum rp_vthreads_mode mode,
                       const jvmtiCapabilities *got);

/* Stop: disable the mount events (VMDeath). */
void rp_vthreads_stop(void);

/* How CPU samples are labelled now. Any thread. */
enum rp_vthreads_cpu rp_vthreads_cpu_source(void);
const char *rp_vthreads_cpu_source_name(void);

/* In a JVMTI callback on an application thread: the id of `thread` if it is a
 * virtual thread (noting its name when the cache lacks it), else 0. */
uint64_t rp_vthreads_of(JNIEnv *jni, jthread thread);

/* The virtual thread carrier `carrier` has mounted now (a new local
 * reference), or NULL: none, vthreads=off, or a JVM without GetVirtualThread.
 * A thread with JNI (the jvmti engine's sampler, which takes the virtual
 * thread's stack: GetStackTrace of a carrier stops where its virtual
 * thread's frames begin). */
jthread rp_vthreads_mounted(JNIEnv *jni, jthread carrier);

/* The signal handler: the id of the virtual thread mounted on slot `s`'s thread
 * (the interrupted thread itself) now, or 0. Async-signal-safe. */
uint64_t rp_vthreads_current(const struct rp_slot *s);

/* The flusher: the chunk's VTHREAD id for virtual thread `id` (0 for 0, and
 * when no memory), named from the cache, or, when the cache has no name, from
 * the virtual thread `carrier` has mounted now if it is that one. */
uint32_t rp_vthreads_chunk_id(const struct rp_sink *sk, struct rp_slot *carrier,
                              uint64_t id);

/* The cache's name of virtual thread `id` into buf (cap bytes). @return 1 if
 * known. Any thread. */
int rp_vthreads_name(uint64_t id, char *buf, size_t cap);

/* Note the name of virtual thread `thread` (id `id`) in the cache. Any thread
 * with JNI. */
void rp_vthreads_note(JNIEnv *jni, jthread thread, uint64_t id);

/* Whether `thread` is a virtual thread (0 on JDKs without them; also with
 * vthreads=off). Any thread with JNI. */
int rp_vthreads_is_virtual(JNIEnv *jni, jobject thread);

#endif
