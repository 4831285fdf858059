/*
 * src/kinds/lock.c — lock contention: MonitorContendedEnter/Entered (see lock.h for
 * the design and what the owner means).
 *
 * Cost per contended entry, on the waiting thread: Enter reads the clock, the
 * owner field (two process_vm_readv) and the monitor's class, and publishes
 * them as the wait in progress (rp_lock_waits); Entered reads the clock and,
 * for a wait at or above the threshold, takes the stack, resolves the owner
 * (one or two more reads, a tid lookup, and only for a stack-locked owner a pass
 * over the slots), and pushes one record. Entered runs while the thread owns the
 * monitor, so its time adds to the monitor's hold time; it is in the gauge
 * agent.lock_ns.total with Enter's (docs/agent.md gives figures). The waits in
 * progress cost the waiting thread nothing more: the flusher reads what Enter
 * published and walks the blocked thread's stack itself (GetStackTrace), once
 * per wait; Entered's only addition is an exchange and a read (struct wait).
 *
 * A virtual thread's wait is kept with the thread (struct vwait), not with the
 * carrier it waited on: from JDK 24 it may be mounted on another one by the
 * time it gets the monitor. Such waits are not among the waits in progress.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "ringprof/clock.h"
#include "ringprof/format.h"
#include "ringprof/events.h"
#include "ringprof/ring.h"
#include "core/counters.h"
#include "walk/callstack.h"
#include "code/classes.h"
#include "core/engine.h"
#include "flush/kind.h"
#include "kinds/lock.h"
#include "core/log.h"
#include "core/sample.h"
#include "threads/slottab.h"
#include "code/vmstructs.h"
#include "flush/vthreads.h"

/* The configuration, from the options at load. */
struct rp_lock_config {
    int on;                 /* lock= given at start                               */
    uint64_t threshold_ns;  /* its threshold (0: every contended entry)            */
    uint32_t depth;         /* frames per stack                                   */
    int rings;              /* 1: threads have rings (else nothing can be pushed) */
};

static struct {
    jvmtiEnv *jvmti;
    struct rp_lock_config cfg;
    int potential;                      /* the JVM offers can_generate_monitor_events */
    int have_cap;                       /* and this environment holds it           */
    int have_tags;                      /* can_tag_objects: a known class's id is
                                         * one GetTag (classes.h)                 */
    _Atomic int on;
    _Atomic int configured;
    _Atomic uint64_t threshold;
    _Atomic uint64_t on_since;          /* mono ns of the last switch on: a wait
                                         * start noted before it is stale         */
    _Atomic uint64_t off_at;            /* mono ns of the last switch off or stop  */
    _Atomic int final_due;              /* the waits in progress at off_at are yet
                                         * to be written (rp_lock_flush_waiting)  */
    _Atomic int inflight;
    pthread_mutex_t switch_lock;        /* switch calls vs. each other and stop    */
    int stopping;
    _Atomic uint64_t samples, below, owner_unknown, no_thread, agent_thread, ring_dropped,
                     callback_ns, waiting_written;
} L = {.switch_lock = PTHREAD_MUTEX_INITIALIZER};

/* env->wake of the engine table's start (the lock kind's entry, below). */

static void bump(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------------ owners -- */

void rp_lock_learn_thread(struct rp_slot *s, JNIEnv *jni, jobject thread)
{
    if (!s || !thread)
        return;
    uint64_t jt = rp_vmstructs_java_thread(jni, thread), lo = 0, hi = 0;
    if (!jt)
        return;
    if (rp_vmstructs_stack(jt, &lo, &hi) == 0) {
        atomic_store(&s->stack_lo, lo);
        atomic_store(&s->stack_hi, hi);
    }
    atomic_store(&s->java_thread, jt);
    if (rp_vmstructs_owner_ids())
        atomic_store(&s->owner_id, rp_vmstructs_owner_id(jt));
}

/* The first ids a JDK 24+ monitor's owner field takes that name no thread:
 * none, anonymous (a fast lock being inflated), the deflater's marker. */
#define OWNER_ID_FIRST_THREAD 3

/* The slot of the thread whose monitor owner id (rp_vmstructs_owner_ids) is
 * `id`, or NULL: a pass over the slots, whose ids were read when they
 * registered (read now where that found none yet). */
static struct rp_slot *owner_id_slot(uint64_t id)
{
    if (id < OWNER_ID_FIRST_THREAD)
        return NULL;
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (atomic_load(&s->state) != RP_SLOT_LIVE)
            continue;
        uint64_t mine = atomic_load(&s->owner_id);
        if (!mine && (mine = rp_vmstructs_owner_id(atomic_load(&s->java_thread))) != 0)
            atomic_store(&s->owner_id, mine);
        if (mine == id)
            return s;
    }
    return NULL;
}

/* The slot of the thread whose JavaThread* is `jt`, or NULL. Its tid, read
 * through it, names the slot, which must have learned the same JavaThread* (a
 * wrong pointer reads a wrong tid). */
static struct rp_slot *java_thread_slot(uint64_t jt)
{
    pid_t tid = jt ? rp_vmstructs_tid(jt) : 0;
    struct rp_slot *o = tid ? rp_threads_by_tid(tid) : NULL;
    return o && atomic_load(&o->java_thread) == jt ? o : NULL;
}

/* The slot of the thread whose JavaThread* (or BasicLock*, on its stack) is
 * `owner`, or, on a JVM whose monitors hold owner ids, whose id it is; NULL if
 * none. */
static struct rp_slot *owner_slot(uint64_t owner)
{
    if (!owner)
        return NULL;
    if (rp_vmstructs_owner_ids())
        return owner_id_slot(owner);
    struct rp_slot *o = java_thread_slot(owner);
    if (o)
        return o;
    /* A BasicLock* on the owner's stack: rare (the first contention after a
     * stack lock is inflated), so a pass over the slots is affordable. */
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        /* lo 0: a range not (yet, or no longer) published, which must not
         * match [0, hi) for a torn read of the two fields. */
        uint64_t lo = atomic_load(&s->stack_lo);
        if (atomic_load(&s->state) == RP_SLOT_LIVE && lo && owner >= lo &&
            owner < atomic_load(&s->stack_hi))
            return s;
    }
    return NULL;
}

/* -------------------------------------------------------------- callbacks -- */

/* The current thread's slot if it can take a record, else NULL (counted when
 * `count`: once per contended entry, at Enter). */
static struct rp_slot *current_slot(int count)
{
    pid_t tid = rp_gettid();
    struct rp_slot *s = rp_threads_by_tid(tid);
    if (!s || !s->ring || atomic_load(&s->state) != RP_SLOT_LIVE) {
        if (count)
            bump(rp_threads_is_agent(tid) ? &L.agent_thread : &L.no_thread);
        return NULL;
    }
    return s;
}

/* The contended wait in progress on a thread (slottab.h): its start (0: none),
 * the monitor's owner field and class then. Only the waiting thread writes its
 * own entry; rp_lock_waits reads it from other threads as a sequence lock whose
 * sequence is t0 itself: the writer clears t0, fills the fields, then publishes
 * t0 (release); a reader takes t0 (acquire), the fields, and t0 again after an
 * acquire fence, and keeps the copy only if t0 is non-zero and unchanged (a
 * new wait has a new start). `gen1`: the occupant it belongs to (the slot's
 * generation + 1).
 *
 * `reported`: the start of the wait the flusher last wrote in progress (kind
 * lock.waiting), so that the wait's finished record can say so and a reader
 * drops the in-progress ones. A Dekker pair, all sequentially consistent: the
 * flusher stores reported = t0, then reads t0 again and writes the record only
 * if t0 is unchanged; Entered exchanges t0 for 0, then reads reported. Of the
 * two, whichever comes second sees the other's write: either the flusher finds
 * t0 gone and writes nothing, or Entered finds reported == its t0. */
struct wait {
    _Atomic uint64_t t0, owner, reported;
    _Atomic uint32_t gen1, klass;
};
static struct rp_slottab g_waits = RP_SLOTTAB(struct wait);

/* The class id of `object` (classes.h), 0 if unknown. */
static uint32_t class_of(JNIEnv *jni, jobject object)
{
    uint32_t id = 0;
    jclass k = (*jni)->GetObjectClass(jni, object);
    if (k) {
        id = rp_class_id(L.jvmti, k);
        (*jni)->DeleteLocalRef(jni, k);
    }
    return id;
}

/* The slot of the monitor's owner read at a wait's start `t0`, or NULL. A slot
 * whose thread started after the wait began holds another thread, which got
 * the ended owner's JavaThread block or stack from the allocator: not the
 * owner. */
static struct rp_slot *owner_at(uint64_t owner, uint64_t t0)
{
    struct rp_slot *o = owner_slot(owner);
    if (o && (o->flags & RP_SLOT_FROM_START) && o->start_ns > t0)
        return NULL;
    return o;
}

static void record(struct rp_slot *s, JNIEnv *jni, uint64_t t0, uint64_t owner,
                   uint32_t klass, uint64_t waited, uint64_t threshold, int reported,
                   uint64_t vthread)
{
    struct rp_sample_hdr h = {.type = RP_SAMPLE_LOCK, .time = t0, .weight = waited,
                              .slot = s->index, .gen = atomic_load(&s->gen),
                              .vthread = vthread};
    struct rp_lock_tail t = {.threshold_ns = threshold, .klass = klass,
                             .reported = (uint32_t)reported};
    struct rp_slot *o = owner_at(owner, t0);
    if (o) {
        t.owner_slot = o->index + 1;
        t.owner_gen = atomic_load(&o->gen);
    } else {
        bump(&L.owner_unknown);
    }
    struct rp_java_frame *frames = rp_callstack_buffer(s, L.cfg.depth);
    if (frames) {
        h.status = rp_callstack_here(s, jni, frames, L.cfg.depth, &h.njava, &h.flags);
    } else {
        h.status = RP_WALK_JVMTI_ERROR;        /* no memory for the frames */
    }
    struct iovec iov[3] = {
        {&h, sizeof h},
        {frames, h.njava * sizeof *frames},
        {&t, sizeof t}};
    if (rp_ring_pushv(s->ring, iov, 3) != RP_RING_OK) {
        bump(&L.ring_dropped);
        return;
    }
    bump(&L.samples);
    if (rp_ring_fill(s->ring) > s->ring->capacity / 2)
        rp_engine_wake();
}

/* A virtual thread's wait. On JDK 24 and later a virtual thread blocked on a
 * monitor unmounts, and its Entered comes on whatever carrier it is mounted on
 * then: its wait cannot be its carrier's (g_waits), so it goes with the thread,
 * in the thread's JVMTI thread-local storage, made at Enter and freed at
 * Entered: one per virtual thread waiting now (and one left on a thread whose
 * Entered did not come because recording was switched off meanwhile, until its
 * next Entered). These waits are not listed as waits in progress. */
struct vwait {
    uint64_t t0, owner;
    uint32_t klass;
};

/* Note the start of a virtual thread's wait. */
static void vwait_begin(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, struct rp_slot *s,
                        jobject object, uint64_t t0)
{
    struct vwait *v = NULL;
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, (void **)&v) != JVMTI_ERROR_NONE)
        return;
    if (!v && (v = malloc(sizeof *v)) &&
        (*jvmti)->SetThreadLocalStorage(jvmti, thread, v) != JVMTI_ERROR_NONE) {
        free(v);
        v = NULL;
    }
    if (v)
        *v = (struct vwait){t0, s ? rp_vmstructs_pending_owner(atomic_load(&s->java_thread)) : 0,
                            L.have_tags ? class_of(jni, object) : 0};
}

/* Take a virtual thread's wait (t0 0: none). */
static struct vwait vwait_end(jvmtiEnv *jvmti, jthread thread)
{
    struct vwait *v = NULL, got = {0, 0, 0};
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, (void **)&v) == JVMTI_ERROR_NONE && v) {
        got = *v;
        (*jvmti)->SetThreadLocalStorage(jvmti, thread, NULL);
        free(v);
    }
    return got;
}

static void JNICALL on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                       jobject object)
{
    atomic_fetch_add(&L.inflight, 1);
    if (atomic_load(&L.on)) {
        uint64_t t0 = rp_mono_ns();
        struct rp_slot *s = current_slot(1);
        int virtual = rp_vthreads_is_virtual(jni, thread);
        struct wait *w = s && !virtual ? rp_slottab_get(&g_waits, s->index, 1) : NULL;
        if (s && virtual)
            vwait_begin(jvmti, jni, thread, s, object, t0);
        if (w) {
            /* The owner field now, resolved only if the wait turns out long;
             * the class now, so that a wait in progress can be named and
             * Entered (which runs holding the monitor) need not look it up;
             * but only where that is one GetTag once the class is known:
             * without tags every lookup reads the class's name, which only a
             * wait over the threshold pays (in Entered). */
            atomic_store_explicit(&w->t0, 0, memory_order_relaxed);
            atomic_thread_fence(memory_order_release);
            atomic_store_explicit(&w->owner,
                                  rp_vmstructs_pending_owner(atomic_load(&s->java_thread)),
                                  memory_order_relaxed);
            atomic_store_explicit(&w->klass, L.have_tags ? class_of(jni, object) : 0,
                                  memory_order_relaxed);
            atomic_store_explicit(&w->gen1, atomic_load(&s->gen) + 1, memory_order_relaxed);
            atomic_store_explicit(&w->t0, t0, memory_order_release);
        }
        atomic_fetch_add_explicit(&L.callback_ns, rp_mono_ns() - t0, memory_order_relaxed);
    }
    atomic_fetch_sub(&L.inflight, 1);
}

static void JNICALL on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         jobject object)
{
    atomic_fetch_add(&L.inflight, 1);
    if (atomic_load(&L.on)) {
        uint64_t t1 = rp_mono_ns();
        struct rp_slot *s = current_slot(0);
        /* t0 0: the wait began before recording was switched on. A t0 from
         * before the last switch on is stale: noted in an earlier period of
         * recording whose Entered never came (stop lock disabled the event),
         * it would make this wait look as long as the pause. */
        int virtual = rp_vthreads_is_virtual(jni, thread);
        struct wait *w = s && !virtual ? rp_slottab_get(&g_waits, s->index, 0) : NULL;
        uint64_t t0 = 0, owner = 0;
        uint32_t klass = 0;
        int reported = 0;
        if (virtual) {
            struct vwait v = vwait_end(jvmti, thread);
            if (s)
                t0 = v.t0, owner = v.owner, klass = v.klass;
        } else if (w && atomic_load_explicit(&w->gen1, memory_order_relaxed) ==
                     atomic_load(&s->gen) + 1) {
            owner = atomic_load_explicit(&w->owner, memory_order_relaxed);
            klass = atomic_load_explicit(&w->klass, memory_order_relaxed);
            t0 = atomic_exchange(&w->t0, 0);          /* the Dekker pair (struct wait) */
            reported = t0 && atomic_load(&w->reported) == t0;
        }
        if (t0 < atomic_load(&L.on_since))
            t0 = 0;
        uint64_t threshold = atomic_load(&L.threshold);
        if (t0 && t1 - t0 < threshold) {
            bump(&L.below);
        } else if (t0) {
            /* A CPU sample taken from here on shows [ringprof:lock] under the
             * waiting Java code (sample.h): the timer signal stays open. */
            int outer = rp_callstack_enter(s, RP_AGENT_LOCK);
            record(s, jni, t0, owner, klass ? klass : class_of(jni, object), t1 - t0,
                   threshold, reported, rp_vthreads_of(jni, thread));
            rp_callstack_leave(s, outer);
        }
        atomic_fetch_add_explicit(&L.callback_ns, rp_mono_ns() - t1, memory_order_relaxed);
    }
    atomic_fetch_sub(&L.inflight, 1);
}

/* ------------------------------------------------------ waits in progress -- */

struct rp_slot *rp_lock_thread_slot(JNIEnv *jni, jobject thread)
{
    return thread ? java_thread_slot(rp_vmstructs_java_thread(jni, thread)) : NULL;
}

struct rp_slot *rp_lock_pending_owner(JNIEnv *jni, jobject thread)
{
    uint64_t jt = rp_vmstructs_java_thread(jni, thread);
    return jt ? owner_slot(rp_vmstructs_pending_owner(jt)) : NULL;
}

void rp_lock_wait_json(struct rp_json *j, const struct rp_lock_wait *w, int thread)
{
    struct rp_slot_meta m;
    const char *klass = w->klass ? rp_class_name(w->klass) : NULL;
    rp_json_object_begin(j);
    if (thread) {
        rp_threads_meta(w->slot, &m);
        rp_json_kv_string(j, "thread", m.name[0] ? m.name : "[unnamed]");
        rp_json_kv_u64(j, "tid", m.tid > 0 ? (uint64_t)m.tid : 0);
    }
    rp_json_kv_u64(j, "age_ns", w->age_ns);
    rp_json_kv_string(j, "lock", klass);
    if (w->owner) {
        rp_threads_meta(w->owner, &m);
        rp_json_kv_string(j, "owner", m.name[0] ? m.name : "[unnamed]");
        rp_json_kv_u64(j, "owner_tid", m.tid > 0 ? (uint64_t)m.tid : 0);
    } else {
        rp_json_kv_string(j, "owner", NULL);
    }
    rp_json_object_end(j);
}

/* The wait in progress on slot `i` as of `now`, begun at or after `since` and at
 * least `min_age_ns` before `now`, into *out (a consistent copy: the sequence
 * lock of struct wait). @return its entry, or NULL (none, torn, another
 * occupant's, stale, too young). */
static struct wait *wait_at(uint32_t i, uint64_t since, uint64_t now, uint64_t min_age_ns,
                            struct rp_lock_wait *out)
{
    struct rp_slot *s = rp_threads_slot(i);
    struct wait *w = rp_slottab_get(&g_waits, i, 0);
    if (!w || atomic_load(&s->state) != RP_SLOT_LIVE)
        return NULL;
    uint64_t t0 = atomic_load_explicit(&w->t0, memory_order_acquire);
    uint64_t owner = atomic_load_explicit(&w->owner, memory_order_relaxed);
    uint32_t klass = atomic_load_explicit(&w->klass, memory_order_relaxed);
    uint32_t gen1 = atomic_load_explicit(&w->gen1, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (!t0 || atomic_load_explicit(&w->t0, memory_order_relaxed) != t0 ||
        gen1 != atomic_load(&s->gen) + 1 || t0 < since || now < t0 ||
        now - t0 < min_age_ns)
        return NULL;
    *out = (struct rp_lock_wait){.slot = s, .start_ns = t0, .age_ns = now - t0,
                                 .klass = klass, .owner = owner_at(owner, t0)};
    return w;
}

size_t rp_lock_waits(struct rp_lock_wait *out, size_t max, uint64_t min_age_ns)
{
    size_t k = 0;
    if (!atomic_load(&L.on))
        return 0;                       /* entries are not kept up to date */
    uint64_t since = atomic_load(&L.on_since), now = rp_mono_ns();
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n && k < max; i++)
        if (wait_at(i, since, now, min_age_ns, &out[k]))
            k++;
    return k;
}

/* -------------------------------------------------------------- lifecycle -- */

/* The descriptor's rings_wanted (flush/kind.h): lock= asks for them. */
static int kind_rings_wanted(const struct rp_options *opt)
{
    return opt->lock != 0;
}

/* The descriptor's capabilities: notes what the JVM offers and, if lock= is on,
 * asks for monitor events and tags. */
static void kind_capabilities(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                              jvmtiCapabilities *want)
{
    L.potential = pot->can_generate_monitor_events;
    if (ld->opt->lock) {
        want->can_generate_monitor_events = pot->can_generate_monitor_events;
        want->can_tag_objects = pot->can_tag_objects;       /* class ids (classes.h) */
    }
}

/* The descriptor's init: the configuration and the callbacks. */
static void kind_init(const struct rp_kind_load *ld, const jvmtiCapabilities *got,
                      jvmtiEventCallbacks *cb)
{
    const struct rp_options *o = ld->opt;
    L.jvmti = ld->jvmti;
    L.cfg = (struct rp_lock_config){o->lock, o->lock_ns, o->depth, ld->rings};
    L.have_cap = got->can_generate_monitor_events;
    L.have_tags = got->can_tag_objects;
    atomic_store(&L.threshold, L.cfg.on ? L.cfg.threshold_ns : RP_LOCK_DEFAULT_THRESHOLD_NS);
    atomic_store(&L.configured, L.cfg.on);
    cb->MonitorContendedEnter = on_contended_enter;
    cb->MonitorContendedEntered = on_contended_entered;
}

/* Recording stops (switch_lock held): the waits in progress now are the last
 * ones the callbacks kept, to be written once more as of now. */
static void note_off(void)
{
    if (!atomic_load(&L.on))
        return;
    atomic_store(&L.off_at, rp_mono_ns());
    atomic_store(&L.final_due, 1);
}

static jvmtiError enable(jvmtiEvent ev, int on)
{
    return (*L.jvmti)->SetEventNotificationMode(L.jvmti, on ? JVMTI_ENABLE : JVMTI_DISABLE,
                                                ev, NULL);
}

/* The engine entry's start (engine.h), in the live phase (VMInit or attach):
 * enable the events if lock= is on. It cannot fail: a refusal is said on
 * stderr and the rest of the profile goes on. */
static int kind_start(const struct rp_engine_env *env, char *err, size_t errlen)
{
    (void)env;
    if (L.cfg.on && rp_lock_switch(1, err, errlen) != 0)
        rp_log("lock=: %s; the rest of the profile goes on", err);
    return 0;
}

/* Why recording cannot be switched on, or NULL. switch_lock held. */
static const char *unavailable_locked(void)
{
    if (L.stopping)
        return "the agent is shutting down";
    if (!L.cfg.rings)
        return "lock contention is unavailable: engine=jvmti was started with alloc=off "
               "and lock=off, so threads have no rings; restart with lock=DURATION";
    if (!L.potential)
        return "lock contention is unavailable: this JVM does not offer "
               "can_generate_monitor_events";
    return NULL;
}

int rp_lock_switch(int on, char *err, size_t errlen)
{
    pthread_mutex_lock(&L.switch_lock);
    int rc = -1;
    const char *why = on ? unavailable_locked() : NULL;
    if (why) {
        snprintf(err, errlen, "%s", why);
        goto out;
    }
    if (on && !L.have_cap) {
        /* An "always" capability in HotSpot: it can be had in the live phase,
         * so a JVM started with lock=off pays nothing until it is asked for. */
        jvmtiCapabilities c;
        memset(&c, 0, sizeof c);
        c.can_generate_monitor_events = 1;
        jvmtiError e = (*L.jvmti)->AddCapabilities(L.jvmti, &c);
        if (e != JVMTI_ERROR_NONE) {
            snprintf(err, errlen, "lock contention is unavailable: the JVM refused "
                     "can_generate_monitor_events (JVMTI error %d)", (int)e);
            goto out;
        }
        L.have_cap = 1;
    }
    if (!L.have_cap) {                  /* off, and never on: nothing to disable */
        atomic_store(&L.on, 0);
        rc = 0;
        goto out;
    }
    if (on) {
        atomic_store(&L.configured, 1);
        atomic_store(&L.on_since, rp_mono_ns());
    } else {
        note_off();
    }
    atomic_store(&L.on, on);
    jvmtiError e1 = enable(JVMTI_EVENT_MONITOR_CONTENDED_ENTER, on);
    jvmtiError e2 = enable(JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, on);
    if (e1 != JVMTI_ERROR_NONE || e2 != JVMTI_ERROR_NONE) {
        atomic_store(&L.on, 0);
        enable(JVMTI_EVENT_MONITOR_CONTENDED_ENTER, 0);
        enable(JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, 0);
        snprintf(err, errlen, "MonitorContendedEnter/Entered events could not be %s "
                 "(JVMTI error %d)", on ? "enabled" : "disabled",
                 (int)(e1 != JVMTI_ERROR_NONE ? e1 : e2));
        goto out;
    }
    rc = 0;
out:
    pthread_mutex_unlock(&L.switch_lock);
    return rc;
}

int rp_lock_set_threshold(uint64_t ns, char *err, size_t errlen)
{
    pthread_mutex_lock(&L.switch_lock);
    const char *why = unavailable_locked();
    if (why)
        snprintf(err, errlen, "%s", why);
    else {
        atomic_store(&L.threshold, ns);
        atomic_store(&L.configured, 1);
    }
    pthread_mutex_unlock(&L.switch_lock);
    return why ? -1 : 0;
}

void rp_lock_stop(unsigned wait_ms)
{
    pthread_mutex_lock(&L.switch_lock);
    L.stopping = 1;
    note_off();
    atomic_store(&L.on, 0);
    if (L.have_cap) {
        enable(JVMTI_EVENT_MONITOR_CONTENDED_ENTER, 0);
        enable(JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, 0);
    }
    pthread_mutex_unlock(&L.switch_lock);
    for (unsigned i = 0; i < wait_ms * 10 && atomic_load(&L.inflight) > 0; i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

void rp_lock_state(struct rp_lock_state *out)
{
    out->available = L.cfg.rings && L.potential;
    out->on = atomic_load(&L.on);
    out->configured = atomic_load(&L.configured);
    out->threshold_ns = atomic_load(&L.threshold);
}

void rp_lock_stats(struct rp_lock_stats *out)
{
    out->samples = atomic_load(&L.samples);
    out->below_threshold = atomic_load(&L.below);
    out->owner_unknown = atomic_load(&L.owner_unknown);
    out->no_thread = atomic_load(&L.no_thread);
    out->agent_thread = atomic_load(&L.agent_thread);
    out->ring_dropped = atomic_load(&L.ring_dropped);
    out->callback_ns = atomic_load(&L.callback_ns);
    out->waiting_written = atomic_load(&L.waiting_written);
}

/* --------------------------------------------------------- the lock kind -- */

/* The lock kind (kind.h). Its switch makes JVMTI calls (the events, and the
 * capability the first time), which run through rp_engine_call; the threshold is
 * only stored, so `set lock=` is answered on the caller's thread. */
static int kind_on(void)
{
    return atomic_load(&L.on);
}

/* "all" starts lock contention only where it was configured (lock= or set
 * lock=): it has no threshold otherwise; "start lock" uses the last one given,
 * else RP_LOCK_DEFAULT_THRESHOLD_NS. */
static int kind_in_all(int on)
{
    struct rp_lock_state l;
    rp_lock_state(&l);
    return l.available && (l.configured || !on);
}

static uint64_t kind_period(void)
{
    return atomic_load(&L.threshold);
}

static void kind_effective(struct rp_json *j)
{
    int on = atomic_load(&L.on);
    rp_json_kv_u64(j, RP_KIND_LOCK "_ns", on ? atomic_load(&L.threshold) : 0);
    rp_json_kv_bool(j, RP_KIND_LOCK, on);
}

/* Its state, what the callbacks counted, and the waits in progress that are
 * already over the threshold (at most STATUS_WAITS_MAX, the oldest threads
 * first in slot order: enough to see a hang, bounded for the reply). */
#define STATUS_WAITS_MAX 64

static void kind_status(struct rp_json *j)
{
    struct rp_lock_state a;
    struct rp_lock_stats st;
    rp_lock_state(&a);
    rp_lock_stats(&st);
    rp_json_key(j, RP_KIND_LOCK);
    rp_json_object_begin(j);
    rp_json_kv_bool(j, "available", a.available);
    rp_json_kv_bool(j, "on", a.on);
    rp_json_kv_u64(j, "threshold_ns", a.threshold_ns);
    rp_json_kv_u64(j, "recorded", st.samples);
    rp_json_kv_u64(j, "below_threshold", st.below_threshold);
    rp_json_kv_u64(j, "owner_unknown", st.owner_unknown);
    rp_json_kv_u64(j, "ring_dropped", st.ring_dropped);
    rp_json_kv_u64(j, "no_thread", st.no_thread);
    rp_json_kv_u64(j, "callback_ns", st.callback_ns);
    rp_json_kv_u64(j, "waiting_written", st.waiting_written);
    static struct rp_lock_wait w[STATUS_WAITS_MAX];     /* callbacks never overlap */
    size_t n = rp_lock_waits(w, STATUS_WAITS_MAX, a.threshold_ns);
    rp_json_key(j, "waiting");
    rp_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        rp_lock_wait_json(j, &w[i], 1);
    rp_json_array_end(j);
    rp_json_object_end(j);
}

/* The lock counters, in the chunk's order (docs/format.md). */
/* ---------------------------------------------------- the kind's writer -- */

static const char *const LOCK_EXTRA[] = RP_LOCK_EXTRA_NAMES;
static uint64_t g_owner_gone;         /* owners named at the wait, slot gone since  */

/* The owner is named only while its slot still holds the thread it held when
 * the wait began. */
enum rp_sink_result rp_lock_flush(const struct rp_sink *sk, struct rp_slot *s,
                                  const struct rp_sample_hdr *h, size_t flen)
{
    static struct rp_sink_kind kind;
    struct rp_lock_tail t;
    memcpy(&t, (const uint8_t *)h + flen, sizeof t);
    uint32_t thread, stack;
    int ids = rp_sink_ids(sk, s, h, flen, &thread, &stack);
    uint32_t owner = rp_sink_slot_thread(sk, t.owner_slot, t.owner_gen);
    if (t.owner_slot && !owner)
        g_owner_gone++;
    uint64_t extra[RP_LOCK_NEXTRA] = {rp_stacks_class(t.klass), owner, t.threshold_ns,
                                      t.reported};
    if (!ids || !extra[RP_LOCK_X_CLASS] ||
        !rp_sink_kind(sk, &kind, RP_KIND_LOCK, RP_UNIT_NS, 0, LOCK_EXTRA, RP_LOCK_NEXTRA) ||
        rp_chunk_sample_vt(sk->w, kind.id, thread, rp_vthreads_chunk_id(sk, s, h->vthread),
                           h->time, stack, h->weight, extra) != 0)
        return RP_SINK_LOST;
    return RP_SINK_WRITTEN;
}

/* ------------------------------------------------- waits in progress -- */

/* What the flusher keeps of the wait it last wrote in progress on a slot: the
 * record (header and frames, `cap` frames' room) made for it, so that a wait
 * that lasts over many flushes is walked once (GetStackTrace, a handshake with
 * the blocked thread). Flusher only. */
struct held {
    uint64_t t0;
    uint32_t gen1, cap;
    struct rp_sample_hdr *rec;
};
static struct rp_slottab g_held = RP_SLOTTAB(struct held);
static struct rp_java_frame *g_walk;      /* depth frames, for the walk          */
static uint64_t g_waiting_unwritten;      /* waits in progress not written       */

/* The record of wait `lw` (its stack, walked at its first writing), or NULL if
 * there is no memory for it. */
static struct rp_sample_hdr *held_record(JNIEnv *jni, const struct rp_lock_wait *lw)
{
    struct rp_slot *s = lw->slot;
    uint32_t gen = atomic_load(&s->gen);
    struct held *e = rp_slottab_get(&g_held, s->index, 1);
    if (!e || (!g_walk && !(g_walk = malloc((size_t)L.cfg.depth * sizeof *g_walk))))
        return NULL;
    if (e->rec && e->t0 == lw->start_ns && e->gen1 == gen + 1)
        return e->rec;
    uint32_t n = 0;
    uint16_t flags = 0;
    jthread t = rp_threads_local_ref(jni, s);
    int32_t status = t ? rp_callstack_of(t, g_walk, L.cfg.depth, &n, &flags)
                       : RP_WALK_JVMTI_ERROR;
    if (t)
        (*jni)->DeleteLocalRef(jni, t);
    if (!e->rec || e->cap < n) {
        struct rp_sample_hdr *r = realloc(e->rec, rp_sample_size(0, n));
        if (!r)
            return NULL;
        e->rec = r;
        e->cap = n;
    }
    *e->rec = (struct rp_sample_hdr){.type = RP_SAMPLE_LOCK, .flags = flags,
                                     .status = status, .slot = s->index, .gen = gen,
                                     .njava = n};
    memcpy((void *)rp_sample_java(e->rec), g_walk, (size_t)n * sizeof *g_walk);
    e->t0 = lw->start_ns;
    e->gen1 = gen + 1;
    return e->rec;
}

/* Write wait `lw` (entry `w`) in progress, if it still is: the Dekker pair of
 * struct wait. @return 1 written, 0 ended meanwhile, -1 not written (no
 * memory). */
static int write_waiting(const struct rp_sink *sk, struct wait *w,
                         const struct rp_lock_wait *lw, uint64_t threshold)
{
    static struct rp_sink_kind kind;
    atomic_store(&w->reported, lw->start_ns);
    if (atomic_load(&w->t0) != lw->start_ns)
        return 0;                        /* its finished record follows, reported */
    struct rp_sample_hdr *h = held_record(sk->jni, lw);
    if (!h)
        return -1;
    h->time = lw->start_ns;
    h->weight = lw->age_ns;
    uint32_t thread = sk->thread_id(sk->ctx, lw->slot);
    uint32_t stack = thread ? rp_stacks_id(h, rp_sample_size(0, h->njava)) : 0;
    uint64_t extra[RP_LOCK_WAITING_NEXTRA] = {
        lw->klass ? rp_stacks_class(lw->klass) : 0,
        lw->owner ? sk->thread_id(sk->ctx, lw->owner) : 0, threshold};
    if (!stack ||
        !rp_sink_kind(sk, &kind, RP_KIND_LOCK_WAITING, RP_UNIT_NS, 0, LOCK_EXTRA,
                      RP_LOCK_WAITING_NEXTRA) ||
        rp_chunk_sample(sk->w, kind.id, thread, lw->start_ns, stack, lw->age_ns, extra) != 0)
        return -1;
    return 1;
}

void rp_lock_flush_waiting(const struct rp_sink *sk)
{
    uint64_t as_of;
    if (atomic_load(&L.on))
        as_of = sk->now;
    else if (atomic_exchange(&L.final_due, 0))
        as_of = atomic_load(&L.off_at);
    else
        return;
    uint64_t since = atomic_load(&L.on_since), threshold = atomic_load(&L.threshold);
    uint32_t n = rp_threads_count(), written = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rp_lock_wait lw;
        struct wait *w = wait_at(i, since, as_of, threshold, &lw);
        int rc = w ? write_waiting(sk, w, &lw, threshold) : 0;
        written += rc > 0;
        g_waiting_unwritten += rc < 0;
    }
    atomic_fetch_add(&L.waiting_written, written);
    rp_sink_gauge(sk, RP_GAUGE_LOCK_WAITING, written);
}

/* ------------------------------------------------- counters and gauges -- */

static const char *const LOCK_COUNTERS[] = {
    RP_COUNTER_LOST_PREFIX RP_KIND_LOCK "_no_thread", RP_KIND_LOCK ".below_threshold",
    RP_KIND_LOCK ".owner_unknown", RP_KIND_LOCK ".agent_thread", RP_KIND_LOCK ".owner_gone",
    RP_KIND_LOCK ".waiting_unwritten",
};

static void lock_counters_read(uint64_t *v)
{
    struct rp_lock_stats s;
    rp_lock_stats(&s);
    const uint64_t now[] = {s.no_thread, s.below_threshold, s.owner_unknown, s.agent_thread,
                            g_owner_gone, g_waiting_unwritten};
    _Static_assert(sizeof now / sizeof now[0] ==
                   sizeof LOCK_COUNTERS / sizeof LOCK_COUNTERS[0], "LOCK_COUNTERS");
    memcpy(v, now, sizeof now);
}

/* The callbacks' time, once they are available and have run or are on. */
static size_t lock_gauges_read(struct rp_gauge_value *out, size_t max)
{
    struct rp_lock_state st;
    struct rp_lock_stats now;
    rp_lock_state(&st);
    rp_lock_stats(&now);
    if (!max || !st.available || !(st.on || now.callback_ns))
        return 0;
    out[0] = (struct rp_gauge_value){RP_GAUGE_AGENT_LOCK, now.callback_ns};
    return 1;
}

static void kind_counters(enum rp_counter_group g)
{
    rp_counters_register(g, LOCK_COUNTERS, sizeof LOCK_COUNTERS / sizeof LOCK_COUNTERS[0],
                         lock_counters_read);
    rp_gauges_register(g, lock_gauges_read);
}

const struct rp_kind rp_kind_lock = {
    .engine = {
        .name = RP_KIND_LOCK, .kind = RP_CTL_KIND_LOCK, .phase = RP_ENGINE_PHASE_EVENTS,
        .flags = RP_ENGINE_SWITCH_ATTACHED,
        .start = kind_start, .stop = rp_lock_stop, .on = kind_on, .in_all = kind_in_all,
        .switch_kind = rp_lock_switch,
        .settings = {{RP_CTL_KEY_LOCK, 0, kind_period, rp_lock_set_threshold}},
        .period = kind_period, .effective = kind_effective, .status = kind_status,
    },
    .records = {{RP_SAMPLE_LOCK, rp_lock_flush, NULL, RP_KIND_LOCK,
                 sizeof(struct rp_lock_tail)}},
    .place = 5,
    /* The waits still in progress, before the kind's counters. */
    .flush = rp_lock_flush_waiting,
    .counters = kind_counters,
    .rings_wanted = kind_rings_wanted,
    /* Kept when allocation sampling's are given up (alloc's caps_keep 1). */
    .capabilities = kind_capabilities,
    .caps_keep = 2,
    .init = kind_init,
    .thread_start = rp_lock_learn_thread,
};
