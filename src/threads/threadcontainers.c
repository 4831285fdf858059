/*
 * src/threads/threadcontainers.c — walking jdk.internal.vm.ThreadContainers through JNI
 * (see threadcontainers.h).
 *
 * The containers are the root (ThreadContainers.root()) and the referents of the
 * weak references in ThreadContainers.CONTAINER_REGISTRY; each is walked with
 * threads().iterator(), as the JDK's dumper walks them, and every local
 * reference is deleted as soon as it is read, so the walk holds a few at a time
 * whatever the number of threads.
 */
#include <string.h>

#include "threads/threadcontainers.h"

static struct {
    int looked, ok;
    jclass tcs, vthread;               /* global refs                              */
    jmethodID root, container, threads, count;
    jfieldID registry;
    jmethodID stream_iterator, iterable_iterator, has_next, next, ref_get;
} T;

/* Look a class up and keep it (a global reference), or NULL. */
static jclass keep_class(JNIEnv *jni, const char *name)
{
    jclass k = (*jni)->FindClass(jni, name);
    if (!k) {
        (*jni)->ExceptionClear(jni);
        return NULL;
    }
    jclass g = (*jni)->NewGlobalRef(jni, k);
    (*jni)->DeleteLocalRef(jni, k);
    return g;
}

static jmethodID method(JNIEnv *jni, const char *klass, const char *name, const char *sig)
{
    jclass k = (*jni)->FindClass(jni, klass);
    jmethodID m = k ? (*jni)->GetMethodID(jni, k, name, sig) : NULL;
    (*jni)->ExceptionClear(jni);
    if (k)
        (*jni)->DeleteLocalRef(jni, k);
    return m;
}

/* The JNI ids, once. @return 1 if every one is there. */
static int lookup(JNIEnv *jni)
{
    if (T.looked)
        return T.ok;
    T.looked = 1;
    T.tcs = keep_class(jni, "jdk/internal/vm/ThreadContainers");
    T.vthread = keep_class(jni, "java/lang/BaseVirtualThread");
    if (!T.vthread)
        T.vthread = keep_class(jni, "java/lang/VirtualThread");
    if (!T.tcs || !T.vthread)
        return 0;
    T.root = (*jni)->GetStaticMethodID(jni, T.tcs, "root",
                                       "()Ljdk/internal/vm/ThreadContainer;");
    T.container = (*jni)->GetStaticMethodID(jni, T.tcs, "container",
                                            "(Ljava/lang/Thread;)"
                                            "Ljdk/internal/vm/ThreadContainer;");
    T.registry = (*jni)->GetStaticFieldID(jni, T.tcs, "CONTAINER_REGISTRY",
                                          "Ljava/util/Set;");
    (*jni)->ExceptionClear(jni);
    T.threads = method(jni, "jdk/internal/vm/ThreadContainer", "threads",
                       "()Ljava/util/stream/Stream;");
    T.count = method(jni, "jdk/internal/vm/ThreadContainer", "threadCount", "()J");
    T.stream_iterator = method(jni, "java/util/stream/BaseStream", "iterator",
                               "()Ljava/util/Iterator;");
    T.iterable_iterator = method(jni, "java/lang/Iterable", "iterator",
                                 "()Ljava/util/Iterator;");
    T.has_next = method(jni, "java/util/Iterator", "hasNext", "()Z");
    T.next = method(jni, "java/util/Iterator", "next", "()Ljava/lang/Object;");
    T.ref_get = method(jni, "java/lang/ref/Reference", "get", "()Ljava/lang/Object;");
    T.ok = T.root && T.container && T.registry && T.threads && T.count &&
           T.stream_iterator && T.iterable_iterator && T.has_next && T.next && T.ref_get;
    return T.ok;
}

int rp_tc_available(void)
{
    return T.ok;
}

/* An exception from the Java code the walk ran: cleared. @return 1 if there
 * was one. */
static int failed(JNIEnv *jni)
{
    if (!(*jni)->ExceptionCheck(jni))
        return 0;
    (*jni)->ExceptionClear(jni);
    return 1;
}

/* The next element of iterator `it` into *out (a local reference, or NULL).
 * @return 1, 0 at the end, -1 on an exception. */
static int next_of(JNIEnv *jni, jobject it, jobject *out)
{
    *out = NULL;
    jboolean more = (*jni)->CallBooleanMethod(jni, it, T.has_next);
    if (failed(jni))
        return -1;
    if (!more)
        return 0;
    *out = (*jni)->CallObjectMethod(jni, it, T.next);
    return failed(jni) ? -1 : 1;
}

struct walk {
    JNIEnv *jni;
    size_t max;
    const jobject *platform;
    size_t nplatform;
    void (*fn)(void *, jobject);
    void *arg;
    struct rp_tc_walk *out;
};

/* The platform threads in container `c`. */
static uint64_t platform_in(struct walk *w, jobject c)
{
    JNIEnv *jni = w->jni;
    uint64_t n = 0;
    for (size_t i = 0; i < w->nplatform; i++) {
        jobject pc = (*jni)->CallStaticObjectMethod(jni, T.tcs, T.container, w->platform[i]);
        if (failed(jni))          /* a thread not started (or gone): in none */
            continue;
        n += pc && (*jni)->IsSameObject(jni, pc, c);
        if (pc)
            (*jni)->DeleteLocalRef(jni, pc);
    }
    return n;
}

/* The rest of container `c` that was not visited, `seen` of its threads (of
 * every kind) iterated already: its count then, less what was seen, or, when
 * none was, less its platform threads. */
static void count_rest(struct walk *w, jobject c, uint64_t seen)
{
    JNIEnv *jni = w->jni;
    jlong n = (*jni)->CallLongMethod(jni, c, T.count);
    if (failed(jni) || n <= 0)
        return;
    uint64_t skip = seen ? seen : platform_in(w, c);
    if ((uint64_t)n > skip)
        w->out->total += (uint64_t)n - skip;
}

/* Visit container `c`'s virtual threads. @return 0, or -1 on an exception. */
static int walk_container(struct walk *w, jobject c)
{
    JNIEnv *jni = w->jni;
    w->out->containers++;
    if (w->out->visited >= w->max) {
        count_rest(w, c, 0);
        return 0;
    }
    jobject s = (*jni)->CallObjectMethod(jni, c, T.threads);
    jobject it = s && !failed(jni) ? (*jni)->CallObjectMethod(jni, s, T.stream_iterator) : NULL;
    int rc = it && !failed(jni) ? 0 : -1;
    uint64_t seen = 0;
    jobject t;
    while (rc == 0 && w->out->visited < w->max && (rc = next_of(jni, it, &t)) > 0) {
        rc = 0;
        seen++;
        if (t && (*jni)->IsInstanceOf(jni, t, T.vthread)) {
            w->out->visited++;
            w->out->total++;
            w->fn(w->arg, t);
        }
        if (t)
            (*jni)->DeleteLocalRef(jni, t);
    }
    if (rc == 0 && w->out->visited >= w->max) {
        jboolean more = (*jni)->CallBooleanMethod(jni, it, T.has_next);
        if (!failed(jni) && more)
            count_rest(w, c, seen);
    }
    if (it)
        (*jni)->DeleteLocalRef(jni, it);
    if (s)
        (*jni)->DeleteLocalRef(jni, s);
    return rc;
}

/* Every registered container's (the registry holds weak references). */
static int walk_registry(struct walk *w)
{
    JNIEnv *jni = w->jni;
    jobject set = (*jni)->GetStaticObjectField(jni, T.tcs, T.registry);
    jobject it = set ? (*jni)->CallObjectMethod(jni, set, T.iterable_iterator) : NULL;
    int rc = it && !failed(jni) ? 0 : -1;
    jobject ref;
    while (rc == 0 && (rc = next_of(jni, it, &ref)) > 0) {
        rc = 0;
        jobject c = ref ? (*jni)->CallObjectMethod(jni, ref, T.ref_get) : NULL;
        if (failed(jni))
            rc = -1;
        else if (c)
            rc = walk_container(w, c);
        if (c)
            (*jni)->DeleteLocalRef(jni, c);
        if (ref)
            (*jni)->DeleteLocalRef(jni, ref);
    }
    if (it)
        (*jni)->DeleteLocalRef(jni, it);
    if (set)
        (*jni)->DeleteLocalRef(jni, set);
    return rc;
}

int rp_tc_each(JNIEnv *jni, size_t max, const jobject *platform, size_t nplatform,
               void (*fn)(void *arg, jobject thread), void *arg, struct rp_tc_walk *out)
{
    memset(out, 0, sizeof *out);
    if (!lookup(jni))
        return -1;
    struct walk w = {jni, max, platform, nplatform, fn, arg, out};
    jobject root = (*jni)->CallStaticObjectMethod(jni, T.tcs, T.root);
    if (!root || failed(jni))
        return -1;
    int rc = walk_container(&w, root);
    (*jni)->DeleteLocalRef(jni, root);
    return rc == 0 ? walk_registry(&w) : -1;
}
