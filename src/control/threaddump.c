/*
 * src/control/threaddump.c — the thread dump and its deadlocks (threaddump.h):
 * reading them on the flusher.
 *
 * One dump is four steps on the flusher: read every thread (struct td_thread)
 * and the locks they hold or wait for (struct td_lock, one per distinct
 * object, matched with IsSameObject); give each waiting thread the thread it
 * waits for; find the cycles of that relation (each thread waits for at most
 * one, so a walk from every thread finds each cycle once) and read their
 * threads again; write the JSON (threaddump_json.c: the deadlocked threads
 * first and then the others for as long as they fit in the reply). The threads
 * are the platform threads (GetAllThreads) and then the virtual threads the
 * JVM's thread containers hold (threadcontainers.h), at most
 * RP_THREADDUMP_VTHREADS_MAX; both kinds wait for and hold locks of each other,
 * so the cycles run through both. Threads are found by their Java id (by_tid),
 * not by comparing references with every thread. The JSON goes to a writer of
 * this module's own (a call that timed out still runs later, so it must not
 * touch the caller's reply); the control thread copies its members into the
 * reply once the call has returned, when no dump is running.
 *
 * The threads and locks the dump keeps are global references, and every other
 * reference is deleted once read, so the dump needs a constant number of local
 * references (LOCAL_REFS) whatever the number of threads: HotSpot refuses to
 * promise more than -XX:MaxJNILocalCapacity (65536) of them, which one
 * reference per thread and lock would pass at about 8,000 threads.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/control.h"
#include "code/classes.h"
#include "core/engine.h"
#include "kinds/lock.h"
#include "threads/park.h"
#include "threads/threadcontainers.h"
#include "control/threaddump.h"
#include "control/threaddump_dump.h"
#include "threads/threads.h"
#include "core/u64map.h"

/* The local references a dump holds at once (a thread's transient ones). */
#define LOCAL_REFS 64

/* Contended monitor waits in progress matched to the dump's threads. */
#define WAITS_MAX 4096

/* What the reply holds beside the dump's members ("protocol", "ok", "command",
 * the closing brace and newline): room kept free of threads so that a dump cut
 * at the limit still makes a whole reply (and RP_THREADDUMP_TAIL_ROOM for the
 * members after the threads). */
#define REPLY_HEAD_ROOM 256

static struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    jvmtiCapabilities got;             /* the dump's capabilities held            */
    jfieldID tid;                      /* Thread.tid                              */
    jfieldID carrier;                  /* VirtualThread.carrierThread, or NULL    */
    int park;                          /* park.h's fields are available           */
    jclass system;                     /* global ref                              */
    jmethodID ihash;
    struct rp_json out;                /* the dump's members, as one object       */
    jvmtiFrameInfo frames[RP_THREADDUMP_FRAMES_MAX];   /* one stack as read       */
    struct rp_lock_wait waits[WAITS_MAX];
} D;


/* ------------------------------------------------------------- capabilities -- */

/* Ask for the dump's capabilities the JVM offers and this environment lacks. */
static void add_capabilities(void)
{
    jvmtiCapabilities pot, want;
    memset(&want, 0, sizeof want);
    if ((*D.jvmti)->GetPotentialCapabilities(D.jvmti, &pot) != JVMTI_ERROR_NONE)
        return;
    want.can_get_owned_monitor_info = pot.can_get_owned_monitor_info &&
                                      !D.got.can_get_owned_monitor_info;
    want.can_get_owned_monitor_stack_depth_info =
        pot.can_get_owned_monitor_stack_depth_info &&
        !D.got.can_get_owned_monitor_stack_depth_info;
    want.can_get_current_contended_monitor = pot.can_get_current_contended_monitor &&
                                             !D.got.can_get_current_contended_monitor;
    if (!want.can_get_owned_monitor_info && !want.can_get_owned_monitor_stack_depth_info &&
        !want.can_get_current_contended_monitor)
        return;
    if ((*D.jvmti)->AddCapabilities(D.jvmti, &want) != JVMTI_ERROR_NONE)
        return;
    D.got.can_get_owned_monitor_info |= want.can_get_owned_monitor_info;
    D.got.can_get_owned_monitor_stack_depth_info |= want.can_get_owned_monitor_stack_depth_info;
    D.got.can_get_current_contended_monitor |= want.can_get_current_contended_monitor;
}

void rp_threaddump_init(JavaVM *vm, jvmtiEnv *jvmti)
{
    D.vm = vm;
    D.jvmti = jvmti;
    rp_json_init(&D.out, RP_CONTROL_THREADS_REPLY_MAX);
    add_capabilities();
}

/* The JNI ids the dump reads; once. @return 0, or -1 if java.lang.Thread's tid
 * or System.identityHashCode is missing (parkBlocker and the AOS are optional,
 * park.h: a JDK without them has no park owners). */
static int lookup_ids(JNIEnv *jni)
{
    D.park = rp_park_available(jni);
    if (D.ihash)
        return 0;
    jclass thread = (*jni)->FindClass(jni, "java/lang/Thread");
    jclass system = (*jni)->FindClass(jni, "java/lang/System");
    (*jni)->ExceptionClear(jni);
    if (thread) {
        D.tid = (*jni)->GetFieldID(jni, thread, "tid", "J");
        (*jni)->ExceptionClear(jni);
    }
    jclass vt = (*jni)->FindClass(jni, "java/lang/VirtualThread");
    (*jni)->ExceptionClear(jni);
    if (vt) {                           /* JDK 21+; optional: carriers unnamed */
        D.carrier = (*jni)->GetFieldID(jni, vt, "carrierThread", "Ljava/lang/Thread;");
        (*jni)->ExceptionClear(jni);
        (*jni)->DeleteLocalRef(jni, vt);
    }
    if (system) {
        D.ihash = (*jni)->GetStaticMethodID(jni, system, "identityHashCode",
                                            "(Ljava/lang/Object;)I");
        (*jni)->ExceptionClear(jni);
        D.system = D.ihash ? (*jni)->NewGlobalRef(jni, system) : NULL;
        if (!D.system)
            D.ihash = NULL;
    }
    return D.tid && D.ihash ? 0 : -1;
}

/* --------------------------------------------------------------- reading -- */

/* The lock table's index of `obj`, added if new; -1 for NULL or no memory.
 * `obj` is a local reference, deleted here (the table keeps a global one). Locks
 * are compared by identity hash first, so a dump of many threads holding many
 * locks does not compare every pair. */
static int lock_index(struct td_dump *d, jobject obj)
{
    JNIEnv *jni = d->jni;
    if (!obj)
        return -1;
    uint32_t hash = (uint32_t)(*jni)->CallStaticIntMethod(jni, D.system, D.ihash, obj);
    (*jni)->ExceptionClear(jni);
    int found = -1;
    for (size_t i = 0; i < d->nl && found < 0; i++)
        if (d->l[i].hash == hash && (*jni)->IsSameObject(jni, d->l[i].ref, obj))
            found = (int)i;
    if (found < 0 && d->nl == d->capl) {
        size_t cap = d->capl ? d->capl * 2 : 64;
        struct td_lock *l = realloc(d->l, cap * sizeof *l);
        if (l) {
            d->l = l;
            d->capl = cap;
        }
    }
    jobject ref = found < 0 && d->nl < d->capl ? (*jni)->NewGlobalRef(jni, obj) : NULL;
    if (!ref) {
        (*jni)->DeleteLocalRef(jni, obj);
        return found;
    }
    struct td_lock *k = &d->l[d->nl];
    *k = (struct td_lock){.ref = ref, .hash = hash, .owner = -1};
    jclass c = (*jni)->GetObjectClass(jni, obj);
    if (c) {
        k->klass = rp_class_id(D.jvmti, c);
        (*jni)->DeleteLocalRef(jni, c);
    }
    k->ownable = rp_park_ownable(jni, obj);
    (*jni)->DeleteLocalRef(jni, obj);
    return (int)d->nl++;
}

/* The thread index of the thread whose Java id is `id`, or -1. */
static int id_index(const struct td_dump *d, int64_t id)
{
    uint64_t v;
    return id && rp_u64map_get(&d->by_tid, (uint64_t)id, &v) ? (int)v : -1;
}

/* The thread index of `thread` in the dump, or -1. */
static int thread_index(const struct td_dump *d, jobject thread)
{
    if (!thread)
        return -1;
    int i = id_index(d, (int64_t)(*d->jni)->GetLongField(d->jni, thread, D.tid));
    return i >= 0 && (*d->jni)->IsSameObject(d->jni, d->t[i].ref, thread) ? i : -1;
}

/* The thread index of the thread in `slot`, by its Java thread id, or -1. */
static int slot_index(const struct td_dump *d, struct rp_slot *slot)
{
    struct rp_slot_meta m;
    if (!slot)
        return -1;
    rp_threads_meta(slot, &m);
    return id_index(d, m.java_tid);
}

/* The object `t` waits for now: the monitor it is blocked on, else the object it
 * is parked on. A new local ref, or NULL. */
static jobject waited_object(struct td_dump *d, jthread t, jint state)
{
    jobject o = NULL;
    if ((state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) ||
        (state & JVMTI_THREAD_STATE_IN_OBJECT_WAIT)) {
        if (D.got.can_get_current_contended_monitor)
            (*D.jvmti)->GetCurrentContendedMonitor(D.jvmti, t, &o);
    } else if (state & JVMTI_THREAD_STATE_PARKED) {
        o = rp_park_blocker(d->jni, t);
    }
    return o;
}

static void read_monitors(struct td_dump *d, struct td_thread *t)
{
    jint n = 0;
    jvmtiMonitorStackDepthInfo *info = NULL;
    if (D.got.can_get_owned_monitor_stack_depth_info &&
        (*D.jvmti)->GetOwnedMonitorStackDepthInfo(D.jvmti, t->ref, &n, &info) ==
            JVMTI_ERROR_NONE && n > 0) {
        t->held = malloc((size_t)n * sizeof *t->held);
        t->held_depth = malloc((size_t)n * sizeof *t->held_depth);
        for (jint i = 0; t->held && t->held_depth && i < n; i++) {
            int k = lock_index(d, info[i].monitor);
            if (k < 0)
                continue;
            d->l[k].owner = (int)(t - d->t);
            t->held[t->nheld] = k;
            t->held_depth[t->nheld++] = info[i].stack_depth;
        }
    }
    if (info)
        (*D.jvmti)->Deallocate(D.jvmti, (unsigned char *)info);
    if (!D.got.can_get_current_contended_monitor &&
        (t->state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)) {
        t->pending_owner = -2;          /* resolved once every thread is read */
    } else if (!(t->state & JVMTI_THREAD_STATE_PARKED)) {
        t->contended = lock_index(d, waited_object(d, t->ref, t->state));
    } else {
        t->parked = lock_index(d, waited_object(d, t->ref, t->state));
    }
}

static void read_thread(struct td_dump *d, struct td_thread *t)
{
    JNIEnv *jni = d->jni;
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    t->contended = t->parked = t->waits_for = t->wait_lock = t->pending_owner = -1;
    if ((*D.jvmti)->GetThreadInfo(D.jvmti, t->ref, &info) == JVMTI_ERROR_NONE) {
        t->name = info.name ? strdup(info.name) : NULL;
        t->daemon = info.is_daemon;
        t->priority = info.priority;
        (*D.jvmti)->Deallocate(D.jvmti, (unsigned char *)info.name);
        if (info.thread_group)
            (*jni)->DeleteLocalRef(jni, info.thread_group);
        if (info.context_class_loader)
            (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    }
    t->id = (int64_t)(*jni)->GetLongField(jni, t->ref, D.tid);
    t->carrier = -1;
    if (t->id)
        rp_u64map_put(&d->by_tid, (uint64_t)t->id, (uint64_t)(t - d->t));
    if ((*D.jvmti)->GetThreadState(D.jvmti, t->ref, &t->state) != JVMTI_ERROR_NONE)
        t->state = 0;
    /* Read into one buffer, kept at its size: 2000 threads of a few frames
     * must not cost 2000 full buffers. */
    if ((*D.jvmti)->GetStackTrace(D.jvmti, t->ref, 0, RP_THREADDUMP_FRAMES_MAX, D.frames,
                                  &t->nframes) != JVMTI_ERROR_NONE)
        t->nframes = 0;
    t->frames = t->nframes ? malloc((size_t)t->nframes * sizeof *t->frames) : NULL;
    if (t->frames)
        memcpy(t->frames, D.frames, (size_t)t->nframes * sizeof *t->frames);
    else
        t->nframes = 0;
    t->total = t->nframes;
    if (t->nframes == RP_THREADDUMP_FRAMES_MAX &&
        (*D.jvmti)->GetFrameCount(D.jvmti, t->ref, &t->total) != JVMTI_ERROR_NONE)
        t->total = t->nframes;
    read_monitors(d, t);
}

/* One virtual thread of the walk (threadcontainers.h), read as a platform
 * thread is, with its carrier while it is mounted. One that finds no memory is
 * counted by the walk but not listed. */
static void add_vthread(void *arg, jobject thread)
{
    struct td_dump *d = arg;
    JNIEnv *jni = d->jni;
    if ((size_t)d->n == d->capt) {
        struct td_thread *t = realloc(d->t, d->capt * 2 * sizeof *t);
        if (!t)
            return;
        memset(t + d->capt, 0, d->capt * sizeof *t);
        d->t = t;
        d->capt *= 2;
    }
    jobject ref = (*jni)->NewGlobalRef(jni, thread);
    if (!ref)
        return;
    struct td_thread *t = &d->t[d->n++];
    t->ref = ref;
    t->virtual = 1;
    read_thread(d, t);
    jobject c = D.carrier ? (*jni)->GetObjectField(jni, ref, D.carrier) : NULL;
    int ci = thread_index(d, c);
    t->carrier = ci >= 0 && ci < d->nplat ? ci : -1;
    if (c)
        (*jni)->DeleteLocalRef(jni, c);
}

/* The virtual threads, after the platform ones (their carriers among them). */
static void read_vthreads(struct td_dump *d)
{
    int rc = rp_tc_each(d->jni, RP_THREADDUMP_VTHREADS_MAX, d->refs, (size_t)d->nplat,
                        add_vthread, d, &d->vt);
    d->vt_walked = rc == 0 ? 1 : d->vt.containers ? -1 : 0;
}

/* ------------------------------------------------------------- deadlocks -- */

/* Who each waiting thread waits for: a monitor's holder (BLOCKED only: a thread
 * in Object.wait waits for a notify, not a lock), or a parked-on ownable
 * synchronizer's exclusive owner. */
static void link_waits(struct td_dump *d)
{
    JNIEnv *jni = d->jni;
    for (size_t k = 0; k < d->nl; k++) {
        struct td_lock *l = &d->l[k];
        if (!l->ownable || l->owner >= 0)
            continue;
        jobject o = rp_park_owner(jni, l->ref);
        l->owner = thread_index(d, o);
        if (o)
            (*jni)->DeleteLocalRef(jni, o);
    }
    for (jint i = 0; i < d->n; i++) {
        struct td_thread *t = &d->t[i];
        if (t->pending_owner == -2)
            t->pending_owner = slot_index(d, rp_lock_pending_owner(jni, t->ref));
        if (t->pending_owner >= 0 && t->pending_owner != (int)i) {
            t->waits_for = t->pending_owner;        /* the monitor is not known */
            continue;
        }
        int k = (t->state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) ? t->contended
              : t->parked >= 0 && d->l[t->parked].ownable ? t->parked : -1;
        if (k >= 0 && d->l[k].owner >= 0 && d->l[k].owner != (int)i) {
            t->waits_for = d->l[k].owner;
            t->wait_lock = k;
        }
    }
}

/* Is thread i still waiting for the same lock (a second read)? */
static int still_waiting(struct td_dump *d, int i)
{
    struct td_thread *t = &d->t[i];
    jint state = 0;
    if ((*D.jvmti)->GetThreadState(D.jvmti, t->ref, &state) != JVMTI_ERROR_NONE)
        return 0;
    if (t->wait_lock < 0)
        return (state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) &&
               slot_index(d, rp_lock_pending_owner(d->jni, t->ref)) == t->waits_for;
    jobject o = waited_object(d, t->ref, state);
    int same = o && (*d->jni)->IsSameObject(d->jni, o, d->l[t->wait_lock].ref);
    if (o)
        (*d->jni)->DeleteLocalRef(d->jni, o);
    return same;
}

/* Keep the cycle that enters at thread `start` if every thread in it still
 * waits for its lock. */
static void add_cycle(struct td_dump *d, int start)
{
    size_t len = 1;
    for (int i = d->t[start].waits_for; i != start; i = d->t[i].waits_for)
        len++;
    int *c = malloc((len + 1) * sizeof *c);
    int **cs = realloc(d->cycles, (d->ncycles + 1) * sizeof *cs);
    if (!c || !cs) {
        free(c);
        if (cs)
            d->cycles = cs;
        return;
    }
    d->cycles = cs;
    size_t k = 0;
    int i = start, confirmed = 1;
    do {
        c[k++] = i;
        confirmed &= still_waiting(d, i);
        i = d->t[i].waits_for;
    } while (i != start);
    c[k] = -1;
    if (!confirmed) {
        free(c);
        return;
    }
    for (k = 0; c[k] >= 0; k++)
        d->t[c[k]].in_cycle = 1;
    d->cycles[d->ncycles++] = c;
}

/* Walk from each thread not yet visited; a walk that comes back to a thread it
 * visited itself has closed a cycle. */
static void find_cycles(struct td_dump *d)
{
    int *walk = malloc((size_t)d->n * sizeof *walk);
    if (!walk)
        return;
    for (jint i = 0; i < d->n; i++)
        walk[i] = -1;
    for (jint i = 0; i < d->n; i++) {
        int j = (int)i;
        while (j >= 0 && walk[j] < 0) {
            walk[j] = (int)i;
            j = d->t[j].waits_for;
        }
        if (j >= 0 && walk[j] == (int)i)
            add_cycle(d, j);
    }
    free(walk);
}

/* Give each thread the contended monitor wait in progress lock.c keeps for it
 * (matched by Java thread id), if it is over the lock threshold. */
static void match_waits(struct td_dump *d)
{
    struct rp_lock_state st;
    rp_lock_state(&st);
    size_t n = rp_lock_waits(D.waits, WAITS_MAX, st.threshold_ns);
    for (size_t k = 0; k < n; k++) {
        int i = slot_index(d, D.waits[k].slot);
        if (i >= 0)
            d->t[i].wait = &D.waits[k];
    }
}

/* What the reply leaves out for want of a capability or a field. */
static void unavailable_json(struct rp_json *j)
{
    rp_json_key(j, "unavailable");
    rp_json_array_begin(j);
    if (!D.got.can_get_owned_monitor_stack_depth_info)
        rp_json_string(j, "can_get_owned_monitor_stack_depth_info: held monitors");
    if (!D.got.can_get_current_contended_monitor)
        rp_json_string(j, "can_get_current_contended_monitor: monitors waited for");
    if (!D.park)
        rp_json_string(j, "Thread.parkBlocker or AbstractOwnableSynchronizer: "
                       "parked-on objects and their owners");
    rp_json_array_end(j);
}

/* ------------------------------------------------------------- the call -- */

static void dump_free(struct td_dump *d)
{
    for (jint i = 0; d->t && i < d->n; i++) {
        free(d->t[i].name);
        free(d->t[i].frames);
        free(d->t[i].held);
        free(d->t[i].held_depth);
    }
    for (size_t c = 0; c < d->ncycles; c++)
        free(d->cycles[c]);
    free(d->cycles);
    for (jint i = d->nplat; d->t && i < d->n; i++)
        (*d->jni)->DeleteGlobalRef(d->jni, d->t[i].ref);
    free(d->t);
    for (size_t k = 0; k < d->nl; k++)
        (*d->jni)->DeleteGlobalRef(d->jni, d->l[k].ref);
    free(d->l);
    rp_u64map_free(&d->by_tid);
    for (jint i = 0; d->refs && i < d->nplat; i++)
        if (d->refs[i])
            (*d->jni)->DeleteGlobalRef(d->jni, d->refs[i]);
    if (d->refs)
        (*D.jvmti)->Deallocate(D.jvmti, (unsigned char *)d->refs);
}

/* On the flusher (rp_engine_call): the dump into D.out. */
static int take(void *arg, char *err, size_t errlen)
{
    (void)arg;
    struct td_dump d = {0};
    rp_json_reset(&D.out);
    if ((*D.vm)->GetEnv(D.vm, (void **)&d.jni, JNI_VERSION_1_6) != JNI_OK) {
        snprintf(err, errlen, "the thread dump needs a thread attached to the JVM");
        return -1;
    }
    JNIEnv *jni = d.jni;
    add_capabilities();
    if (lookup_ids(jni) != 0) {
        snprintf(err, errlen, "this JVM has no java.lang.Thread.tid or "
                 "System.identityHashCode: no thread dump");
        return -1;
    }
    if ((*jni)->PushLocalFrame(jni, LOCAL_REFS) != 0) {
        (*jni)->ExceptionClear(jni);
        snprintf(err, errlen, "out of memory for the thread dump");
        return -1;
    }
    int rc = -1;
    jvmtiError e = (*D.jvmti)->GetAllThreads(D.jvmti, &d.n, &d.refs);
    if (e != JVMTI_ERROR_NONE) {
        d.refs = NULL, d.n = 0;
        snprintf(err, errlen, "the threads could not be listed (JVMTI error %d)", (int)e);
        goto out;
    }
    d.nplat = d.n;
    /* GetAllThreads' local references, global ones from here on. */
    int refs_ok = 1;
    for (jint i = 0; i < d.n; i++) {
        jthread local = d.refs[i];
        d.refs[i] = (*jni)->NewGlobalRef(jni, local);
        (*jni)->DeleteLocalRef(jni, local);
        refs_ok &= d.refs[i] != NULL;   /* a NULL jthread would be the flusher */
    }
    d.capt = (size_t)d.n + 1;
    if (!refs_ok || !(d.t = calloc(d.capt, sizeof *d.t))) {
        snprintf(err, errlen, "out of memory for the thread dump of %d threads", (int)d.n);
        goto out;
    }
    for (jint i = 0; i < d.n; i++) {
        d.t[i].ref = d.refs[i];
        read_thread(&d, &d.t[i]);
    }
    read_vthreads(&d);
    link_waits(&d);
    find_cycles(&d);
    match_waits(&d);
    const size_t most = RP_CONTROL_THREADS_REPLY_MAX - REPLY_HEAD_ROOM;
    rp_json_set_max(&D.out, most - RP_THREADDUMP_TAIL_ROOM);
    rp_json_object_begin(&D.out);
    unavailable_json(&D.out);
    rp_threaddump_write(&D.out, &d, most);
    rp_json_object_end(&D.out);
    if (rp_json_error(&D.out) == RP_JSON_OK) {
        rc = 0;
    } else {
        snprintf(err, errlen, "the thread dump of %d threads is %s", (int)d.n,
                 rp_json_error(&D.out) == RP_JSON_TOO_LONG
                 ? "larger than the reply limit (RP_CONTROL_THREADS_REPLY_MAX) with "
                   "its deadlocks alone"
                 : "incomplete (out of memory)");
    }
out:
    dump_free(&d);
    (*jni)->PopLocalFrame(jni, NULL);
    return rc;
}

int rp_threaddump_reply(struct rp_json *out, char *err, size_t errlen)
{
    if (!D.vm) {
        snprintf(err, errlen, "the agent has not started");
        return -1;
    }
    if (rp_engine_call(take, NULL, err, errlen) != 0)
        return -1;
    size_t len;
    const char *text = rp_json_text(&D.out, &len);
    rp_json_members(out, text, len);
    rp_json_free(&D.out);
    return 0;
}

