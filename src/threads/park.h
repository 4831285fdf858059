/*
 * src/threads/park.h — what a parked thread waits for: java.lang.Thread.parkBlocker (the
 * object LockSupport.park was given: a ReentrantLock's sync, a Condition, a
 * queue) and, where that object is an AbstractOwnableSynchronizer
 * (ReentrantLock, ReentrantReadWriteLock's write side), its exclusive owner.
 *
 * Both are plain field reads through JNI: no Java code runs, nothing waits for
 * the parked thread or the owner. A field read while the thread unparks may see
 * the next blocker or none; callers take what they read as of that moment. The
 * thread dump (threaddump.c) and the wall sampler (wall.c) read them.
 *
 * Threads: any thread attached to the JVM (`jni` is its env). The ids are looked
 * up by the first call, under a mutex that only agent threads take.
 */
#ifndef RINGPROF_SRC_PARK_H
#define RINGPROF_SRC_PARK_H

#include <jni.h>

/* Look up Thread.parkBlocker and AbstractOwnableSynchronizer.exclusiveOwnerThread
 * (once). @return 1 if this JVM has both, 0 if not (the functions below then
 * return NULL and 0). Leaves no exception pending. */
int rp_park_available(JNIEnv *jni);

/* The parkBlocker of `thread` now: a new local ref, or NULL (none, or the field
 * is missing). */
jobject rp_park_blocker(JNIEnv *jni, jobject thread);

/* Is `obj` an AbstractOwnableSynchronizer? 0 for NULL. */
int rp_park_ownable(JNIEnv *jni, jobject obj);

/* The exclusiveOwnerThread of `obj` now if it is an AbstractOwnableSynchronizer:
 * a new local ref, or NULL (not ownable, not owned, or shared). */
jobject rp_park_owner(JNIEnv *jni, jobject obj);

#endif
