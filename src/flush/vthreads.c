/*
 * src/flush/vthreads.c — the virtual thread a sample ran on (see vthreads.h).
 *
 * The name cache is direct-mapped: entry hash(id) & (NAMES - 1) holds the last
 * virtual thread noted there, under a sequence lock of its own (odd while a
 * writer fills it). Writers are application threads in callbacks and the
 * flusher; one that finds the entry being written, or loses the race for it,
 * gives up (the name is noted again at the thread's next callback). The name
 * is kept as atomic words, so a reader copying while a writer writes reads a
 * torn copy that its sequence check throws away, never a data race.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/hash.h"
#include "core/log.h"
#include "threads/slottab.h"
#include "code/vmstructs.h"
#include "flush/vthreads.h"

#define NAMES 1024u                       /* a power of two                        */
#define NAME_WORDS (RP_THREAD_NAME_MAX / 8)

struct name_entry {
    _Atomic uint32_t seq;
    _Atomic uint64_t id;
    _Atomic uint64_t word[NAME_WORDS];    /* the name, NUL-terminated              */
};

static struct {
    jvmtiEnv *jvmti;
    enum rp_vthreads_mode mode;
    _Atomic int cpu;                      /* enum rp_vthreads_cpu                  */
    jclass klass;                         /* java.lang.BaseVirtualThread, global   */
    jfieldID tid, name;                   /* java.lang.Thread.tid, .name           */
    /* com.sun.hotspot.functions.GetVirtualThread(env, carrier, &vthread) */
    jvmtiError (JNICALL *get_virtual)(jvmtiEnv *, jthread, jthread *);
    jint mount_ev, unmount_ev;            /* extension event indexes, 0: none      */
    int events_on;
    struct name_entry *names;             /* NAMES entries, or NULL                */
} V;

/* What the mount events keep for each carrier (slottab.h): the virtual thread
 * mounted on it now, and the occupant it belongs to (the slot's gen + 1). The
 * carrier's own callbacks write it; its signal handler reads it. */
struct mounted {
    _Atomic uint64_t id;
    _Atomic uint32_t gen1;
};
static struct rp_slottab g_mounted = RP_SLOTTAB(struct mounted);

/* The flusher's: the id whose name it last failed to learn from each carrier,
 * so a virtual thread that has left its carrier costs one GetVirtualThread per
 * carrier, not one a sample. */
struct tried {
    uint64_t id;
    uint32_t gen1;
};
static struct rp_slottab g_tried = RP_SLOTTAB(struct tried);

/* ------------------------------------------------------------ capability -- */

/* can_support_virtual_threads is the bit after
 * can_generate_sampled_object_alloc_events in jvmtiCapabilities (JDK 21's
 * jvmti.h); JDK 17's headers, which the agent is built with, leave it unnamed.
 * Its index, found from the named neighbour's. */
static size_t vt_bit(void)
{
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    c.can_generate_sampled_object_alloc_events = 1;
    const unsigned char *b = (const unsigned char *)&c;
    for (size_t i = 0; i < sizeof c * 8; i++)
        if (b[i / 8] & (1u << (i % 8)))
            return i + 1;
    return 0;
}

static int cap_has(const jvmtiCapabilities *c, size_t bit)
{
    return bit && (((const unsigned char *)c)[bit / 8] >> (bit % 8) & 1u);
}

void rp_vthreads_want(enum rp_vthreads_mode mode, const jvmtiCapabilities *pot,
                      jvmtiCapabilities *want)
{
    size_t bit = vt_bit();
    if (mode != RP_VTHREADS_OFF && cap_has(pot, bit))
        ((unsigned char *)want)[bit / 8] |= (unsigned char)(1u << (bit % 8));
}

/* ------------------------------------------------------------ name cache -- */

static struct name_entry *name_slot(uint64_t id)
{
    return V.names ? &V.names[rp_mix64(id) & (NAMES - 1)] : NULL;
}

/* Whether the cache holds a name for `id` (without copying it). */
static int name_known(uint64_t id)
{
    struct name_entry *e = name_slot(id);
    return e && !(atomic_load_explicit(&e->seq, memory_order_acquire) & 1) &&
           atomic_load_explicit(&e->id, memory_order_relaxed) == id;
}

static void name_put(uint64_t id, const char *name)
{
    struct name_entry *e = name_slot(id);
    if (!e)
        return;
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
    if ((s & 1) || !atomic_compare_exchange_strong_explicit(&e->seq, &s, s + 1,
                                                            memory_order_acquire,
                                                            memory_order_relaxed))
        return;
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&e->id, id, memory_order_relaxed);
    uint64_t w[NAME_WORDS];
    memset(w, 0, sizeof w);
    size_t n = strlen(name);
    memcpy(w, name, n < sizeof w - 1 ? n : sizeof w - 1);
    for (size_t i = 0; i < NAME_WORDS; i++)
        atomic_store_explicit(&e->word[i], w[i], memory_order_relaxed);
    atomic_store_explicit(&e->seq, s + 2, memory_order_release);
}

int rp_vthreads_name(uint64_t id, char *buf, size_t cap)
{
    struct name_entry *e = name_slot(id);
    if (!e || !cap)
        return 0;
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
    if ((s & 1) || atomic_load_explicit(&e->id, memory_order_relaxed) != id)
        return 0;
    uint64_t w[NAME_WORDS];
    for (size_t i = 0; i < NAME_WORDS; i++)
        w[i] = atomic_load_explicit(&e->word[i], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&e->seq, memory_order_relaxed) != s)
        return 0;
    ((char *)w)[sizeof w - 1] = '\0';
    snprintf(buf, cap, "%s", (const char *)w);
    return 1;
}

void rp_vthreads_note(JNIEnv *jni, jthread thread, uint64_t id)
{
    if (!V.name || !id || name_known(id))
        return;
    jstring s = (jstring)(*jni)->GetObjectField(jni, thread, V.name);
    const char *c = s ? (*jni)->GetStringUTFChars(jni, s, NULL) : NULL;
    if (c) {
        name_put(id, c);
        (*jni)->ReleaseStringUTFChars(jni, s, c);
    } else {
        (*jni)->ExceptionClear(jni);
        name_put(id, "");
    }
    if (s)
        (*jni)->DeleteLocalRef(jni, s);
}

/* ----------------------------------------------------------------- ids -- */

int rp_vthreads_is_virtual(JNIEnv *jni, jobject thread)
{
    return V.klass && thread && (*jni)->IsInstanceOf(jni, thread, V.klass);
}

uint64_t rp_vthreads_of(JNIEnv *jni, jthread thread)
{
    if (V.mode == RP_VTHREADS_OFF || !rp_vthreads_is_virtual(jni, thread))
        return 0;
    uint64_t id = (uint64_t)(*jni)->GetLongField(jni, thread, V.tid);
    rp_vthreads_note(jni, thread, id);
    return id;
}

uint64_t rp_vthreads_current(const struct rp_slot *s)
{
    switch (atomic_load_explicit(&V.cpu, memory_order_relaxed)) {
    case RP_VTHREADS_CPU_OWNER_ID: {
        /* The carrier's own id when nothing is mounted; ids 0 to 2 are an
         * owner field's "none", "anonymous" and "deflating", never a thread. */
        int64_t own = s->java_tid;
        int64_t id = rp_vmstructs_self_owner_id(atomic_load_explicit(&s->env,
                                                                     memory_order_acquire));
        return own && id > 2 && id != own ? (uint64_t)id : 0;
    }
    case RP_VTHREADS_CPU_MOUNT: {
        struct mounted *m = rp_slottab_get(&g_mounted, s->index, 0);
        uint32_t gen1 = atomic_load_explicit(&s->gen, memory_order_relaxed) + 1;
        return m && atomic_load_explicit(&m->gen1, memory_order_relaxed) == gen1
               ? atomic_load_explicit(&m->id, memory_order_relaxed) : 0;
    }
    default:
        return 0;
    }
}

/* --------------------------------------------------------- mount events -- */

/* The carrier's own entry, found once per carrier: a mount and an unmount come
 * with every park, so the events keep the entry in the carrier's thread-local
 * storage (the callbacks are no signal handler) rather than look its slot up
 * by tid, a system call, each time. `gen1` tells a slot taken over since. */
static __thread struct mounted *t_mounted;
static __thread const struct rp_slot *t_slot;
static __thread uint32_t t_gen1;

static void set_mounted(uint64_t id)
{
    const struct rp_slot *s = t_slot;
    if (!s || atomic_load_explicit(&s->gen, memory_order_relaxed) + 1 != t_gen1) {
        struct rp_slot *found = rp_threads_by_tid(rp_gettid());
        t_mounted = found ? rp_slottab_get(&g_mounted, found->index, 1) : NULL;
        t_slot = found;
        t_gen1 = found ? atomic_load(&found->gen) + 1 : 0;
    }
    struct mounted *m = t_mounted;
    if (!m)
        return;
    atomic_store_explicit(&m->id, id, memory_order_relaxed);
    atomic_store_explicit(&m->gen1, t_gen1, memory_order_release);
}

/* Extension events are called as jvmtiExtensionEvent, (jvmtiEnv *, ...): here
 * with the JNIEnv and the virtual thread, on the carrier. */
static void JNICALL on_mount(jvmtiEnv *jvmti, ...)
{
    (void)jvmti;
    va_list ap;
    va_start(ap, jvmti);
    JNIEnv *jni = va_arg(ap, JNIEnv *);
    jthread vthread = va_arg(ap, jthread);
    va_end(ap);
    uint64_t id = (uint64_t)(*jni)->GetLongField(jni, vthread, V.tid);
    rp_vthreads_note(jni, vthread, id);
    set_mounted(id);
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, ...)
{
    (void)jvmti;
    set_mounted(0);
}

/* The extension events' indexes and the GetVirtualThread function. */
static void find_extensions(void)
{
    jint n = 0;
    jvmtiExtensionFunctionInfo *fi = NULL;
    if ((*V.jvmti)->GetExtensionFunctions(V.jvmti, &n, &fi) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            if (!strcmp(fi[i].id, "com.sun.hotspot.functions.GetVirtualThread"))
                V.get_virtual = (jvmtiError (JNICALL *)(jvmtiEnv *, jthread,
                                                        jthread *))(void *)fi[i].func;
            for (jint p = 0; p < fi[i].param_count; p++)
                (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)fi[i].params[p].name);
            (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)fi[i].id);
            (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)fi[i].short_description);
            (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)fi[i].params);
            (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)fi[i].errors);
        }
        (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)fi);
    }
    jvmtiExtensionEventInfo *ei = NULL;
    if ((*V.jvmti)->GetExtensionEvents(V.jvmti, &n, &ei) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            if (!strcmp(ei[i].id, "com.sun.hotspot.events.VirtualThreadMount"))
                V.mount_ev = ei[i].extension_event_index;
            if (!strcmp(ei[i].id, "com.sun.hotspot.events.VirtualThreadUnmount"))
                V.unmount_ev = ei[i].extension_event_index;
            for (jint p = 0; p < ei[i].param_count; p++)
                (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)ei[i].params[p].name);
            (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)ei[i].id);
            (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)ei[i].short_description);
            (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)ei[i].params);
        }
        (*V.jvmti)->Deallocate(V.jvmti, (unsigned char *)ei);
    }
}

/* Both callbacks set, and both events enabled. @return 0, or -1 (none is). */
static int enable_mount_events(void)
{
    jvmtiEnv *e = V.jvmti;
    if (!V.mount_ev || !V.unmount_ev ||
        (*e)->SetExtensionEventCallback(e, V.mount_ev, (jvmtiExtensionEvent)on_mount) ||
        (*e)->SetExtensionEventCallback(e, V.unmount_ev, (jvmtiExtensionEvent)on_unmount) ||
        (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, (jvmtiEvent)V.mount_ev, NULL) ||
        (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, (jvmtiEvent)V.unmount_ev, NULL)) {
        rp_vthreads_stop();
        return -1;
    }
    V.events_on = 1;
    return 0;
}

void rp_vthreads_stop(void)
{
    jvmtiEnv *e = V.jvmti;
    if (!e || !V.mount_ev || !V.unmount_ev)
        return;
    (*e)->SetEventNotificationMode(e, JVMTI_DISABLE, (jvmtiEvent)V.mount_ev, NULL);
    (*e)->SetEventNotificationMode(e, JVMTI_DISABLE, (jvmtiEvent)V.unmount_ev, NULL);
    (*e)->SetExtensionEventCallback(e, V.mount_ev, NULL);
    (*e)->SetExtensionEventCallback(e, V.unmount_ev, NULL);
    if (V.events_on)
        atomic_store(&V.cpu, RP_VTHREADS_CPU_NONE);
    V.events_on = 0;
}

/* --------------------------------------------------------------- start -- */

void rp_vthreads_start(jvmtiEnv *jvmti, JNIEnv *jni, enum rp_vthreads_mode mode,
                       const jvmtiCapabilities *got)
{
    V.jvmti = jvmti;
    V.mode = mode;
    /* BaseVirtualThread is the super class of both kinds of virtual thread
     * (VirtualThread, and BoundVirtualThread where continuations are off). */
    jclass k = (*jni)->FindClass(jni, "java/lang/BaseVirtualThread");
    if (!k) {
        (*jni)->ExceptionClear(jni);
        k = (*jni)->FindClass(jni, "java/lang/VirtualThread");
    }
    jclass t = (*jni)->FindClass(jni, "java/lang/Thread");
    (*jni)->ExceptionClear(jni);
    if (!k || !t) {                       /* JDK 17 and earlier: nothing to do */
        if (k)
            (*jni)->DeleteLocalRef(jni, k);
        if (t)
            (*jni)->DeleteLocalRef(jni, t);
        return;
    }
    V.tid = (*jni)->GetFieldID(jni, t, "tid", "J");
    (*jni)->ExceptionClear(jni);
    V.name = (*jni)->GetFieldID(jni, t, "name", "Ljava/lang/String;");
    (*jni)->ExceptionClear(jni);
    /* The class even with vthreads=off: the lock callbacks tell virtual threads
     * by it (lock.c). */
    V.klass = V.tid ? (*jni)->NewGlobalRef(jni, k) : NULL;
    (*jni)->DeleteLocalRef(jni, k);
    (*jni)->DeleteLocalRef(jni, t);
    if (!V.klass || mode == RP_VTHREADS_OFF) {
        V.name = NULL;
        return;
    }
    V.names = calloc(NAMES, sizeof *V.names);
    if (cap_has(got, vt_bit()))
        find_extensions();
    if (rp_vmstructs_owner_ids() && rp_vmstructs_have_self_owner_id())
        atomic_store(&V.cpu, RP_VTHREADS_CPU_OWNER_ID);
    else if (mode == RP_VTHREADS_MOUNT && enable_mount_events() == 0)
        atomic_store(&V.cpu, RP_VTHREADS_CPU_MOUNT);
    else if (mode == RP_VTHREADS_MOUNT)
        rp_log("vthreads=mount: this JVM offers no virtual-thread mount events; CPU "
               "samples name their carrier only");
}

enum rp_vthreads_cpu rp_vthreads_cpu_source(void)
{
    return (enum rp_vthreads_cpu)atomic_load(&V.cpu);
}

const char *rp_vthreads_cpu_source_name(void)
{
    static const char *const names[] = {"none", "owner_id", "mount"};
    return names[rp_vthreads_cpu_source()];
}

/* ------------------------------------------------------------- flusher -- */

jthread rp_vthreads_mounted(JNIEnv *jni, jthread carrier)
{
    (void)jni;
    jthread vt = NULL;
    if (V.mode == RP_VTHREADS_OFF || !V.get_virtual || !carrier ||
        V.get_virtual(V.jvmti, carrier, &vt) != JVMTI_ERROR_NONE)
        return NULL;
    return vt;
}

/* The name of the virtual thread `carrier` has mounted now, if it is `id`:
 * into buf. @return 1 if learned. */
static int learn_mounted(JNIEnv *jni, struct rp_slot *carrier, uint64_t id, char *buf,
                         size_t cap)
{
    struct tried *tr = rp_slottab_get(&g_tried, carrier->index, 1);
    uint32_t gen1 = atomic_load(&carrier->gen) + 1;
    if (!V.get_virtual || !tr || (tr->id == id && tr->gen1 == gen1))
        return 0;
    tr->id = id;
    tr->gen1 = gen1;
    jobject c = rp_threads_local_ref(jni, carrier);
    jthread vt = NULL;
    if (c && V.get_virtual(V.jvmti, c, &vt) == JVMTI_ERROR_NONE && vt &&
        (uint64_t)(*jni)->GetLongField(jni, vt, V.tid) == id)
        rp_vthreads_note(jni, vt, id);
    if (vt)
        (*jni)->DeleteLocalRef(jni, vt);
    if (c)
        (*jni)->DeleteLocalRef(jni, c);
    return rp_vthreads_name(id, buf, cap);
}

uint32_t rp_vthreads_chunk_id(const struct rp_sink *sk, struct rp_slot *carrier,
                              uint64_t id)
{
    if (!id || !sk->w)
        return 0;
    char name[RP_THREAD_NAME_MAX];
    int known = rp_vthreads_name(id, name, sizeof name) ||
                (sk->jni && carrier && learn_mounted(sk->jni, carrier, id, name, sizeof name));
    return rp_chunk_vthread(sk->w, id, known ? name : NULL, sk->now);
}
