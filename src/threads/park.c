/*
 * src/threads/park.c — a parked thread's blocker and its owner (park.h).
 *
 * The three ids are looked up once and kept: two field ids (valid while the
 * classes are loaded: java.lang.Thread and the AbstractOwnableSynchronizer
 * class are boot classes, never unloaded) and a global ref to the
 * synchronizer class for IsInstanceOf. `ready` publishes them (release) after
 * the lookup that the mutex serialises.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "threads/park.h"

static struct {
    pthread_mutex_t lock;          /* the lookup                                   */
    _Atomic int ready;             /* 0: not looked up; 1: looked up               */
    jfieldID blocker, owner;       /* Thread.parkBlocker, AOS.exclusiveOwnerThread */
    jclass aos;                    /* global ref                                   */
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void lookup(JNIEnv *jni)
{
    jclass thread = (*jni)->FindClass(jni, "java/lang/Thread");
    (*jni)->ExceptionClear(jni);
    if (thread) {
        P.blocker = (*jni)->GetFieldID(jni, thread, "parkBlocker", "Ljava/lang/Object;");
        (*jni)->ExceptionClear(jni);
        (*jni)->DeleteLocalRef(jni, thread);
    }
    jclass aos = (*jni)->FindClass(jni,
                                   "java/util/concurrent/locks/AbstractOwnableSynchronizer");
    (*jni)->ExceptionClear(jni);
    if (aos) {
        P.owner = (*jni)->GetFieldID(jni, aos, "exclusiveOwnerThread", "Ljava/lang/Thread;");
        (*jni)->ExceptionClear(jni);
        P.aos = P.owner ? (*jni)->NewGlobalRef(jni, aos) : NULL;
        if (!P.aos)
            P.owner = NULL;
        (*jni)->DeleteLocalRef(jni, aos);
    }
}

int rp_park_available(JNIEnv *jni)
{
    if (!atomic_load_explicit(&P.ready, memory_order_acquire)) {
        pthread_mutex_lock(&P.lock);
        if (!atomic_load_explicit(&P.ready, memory_order_relaxed)) {
            lookup(jni);
            atomic_store_explicit(&P.ready, 1, memory_order_release);
        }
        pthread_mutex_unlock(&P.lock);
    }
    return P.blocker && P.owner;
}

/* Object field `f` of `obj`: a new local ref, or NULL (null, or an exception,
 * cleared). */
static jobject object_field(JNIEnv *jni, jobject obj, jfieldID f)
{
    jobject v = (*jni)->GetObjectField(jni, obj, f);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return NULL;
    }
    return v;
}

jobject rp_park_blocker(JNIEnv *jni, jobject thread)
{
    return thread && rp_park_available(jni) ? object_field(jni, thread, P.blocker) : NULL;
}

int rp_park_ownable(JNIEnv *jni, jobject obj)
{
    return obj && rp_park_available(jni) && (*jni)->IsInstanceOf(jni, obj, P.aos);
}

jobject rp_park_owner(JNIEnv *jni, jobject obj)
{
    return rp_park_ownable(jni, obj) ? object_field(jni, obj, P.owner) : NULL;
}
