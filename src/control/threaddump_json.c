/*
 * src/control/threaddump_json.c — a thread dump written as the members of the
 * `threads` reply (threaddump_dump.h; the reply is docs/control.md's).
 *
 * The deadlocks come first (each cycle's threads, and the lock each waits
 * for), then the platform threads: those in a deadlock in the order of the
 * cycles, the others in the JVM's order, each written whole and taken back if
 * it passed the reply's limit (rp_json_mark), so a big JVM's dump is cut, not
 * refused. A lock is named by its identity hash and class, with its owner.
 * Virtual threads are written in groups of those that are alike (same state,
 * same frames, same lock waited for, no lock held), so two thousand threads
 * parked in one place are one stack and two thousand ids: they are sorted by a
 * hash of what makes them alike and compared within each hash. When the groups
 * do not fit after the platform threads, only their count is written.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ringprof/hash.h"
#include "code/classes.h"
#include "code/methods.h"
#include "control/threaddump.h"
#include "control/threaddump_dump.h"

/* ---------------------------------------------------------------- threads -- */

/* The JVMTI state as Thread.State names it. */
static const char *state_name(jint s)
{
    if (!(s & JVMTI_THREAD_STATE_ALIVE))
        return (s & JVMTI_THREAD_STATE_TERMINATED) ? "TERMINATED" : "NEW";
    if (s & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        return "BLOCKED";
    if (s & JVMTI_THREAD_STATE_WAITING_INDEFINITELY)
        return "WAITING";
    if (s & JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT)
        return "TIMED_WAITING";
    return "RUNNABLE";
}

static void state_details(struct rp_json *j, jint s)
{
    static const struct { jint bit; const char *name; } detail[] = {
        {JVMTI_THREAD_STATE_IN_NATIVE, "in native"},
        {JVMTI_THREAD_STATE_SUSPENDED, "suspended"},
        {JVMTI_THREAD_STATE_INTERRUPTED, "interrupted"},
        {JVMTI_THREAD_STATE_SLEEPING, "sleeping"},
        {JVMTI_THREAD_STATE_IN_OBJECT_WAIT, "in Object.wait"},
        {JVMTI_THREAD_STATE_PARKED, "parked"},
    };
    rp_json_key(j, "state_details");
    rp_json_array_begin(j);
    for (size_t i = 0; i < sizeof detail / sizeof detail[0]; i++)
        if (s & detail[i].bit)
            rp_json_string(j, detail[i].name);
    rp_json_array_end(j);
}

static void lock_json(struct rp_json *j, const struct td_dump *d, const char *key, int k)
{
    char id[16];
    const struct td_lock *l = &d->l[k];
    snprintf(id, sizeof id, "0x%08x", l->hash);
    rp_json_key(j, key);
    rp_json_object_begin(j);
    rp_json_kv_string(j, "id", id);
    rp_json_kv_string(j, "class", l->klass ? rp_class_name(l->klass) : NULL);
    rp_json_kv_bool(j, "ownable", l->ownable);
    if (l->owner >= 0) {
        rp_json_kv_string(j, "owner", d->t[l->owner].name);
        rp_json_kv_i64(j, "owner_id", d->t[l->owner].id);
    } else {
        rp_json_kv_string(j, "owner", NULL);
    }
    rp_json_object_end(j);
}

/* A monitor known only by its holder (pending_owner): no id; its class from
 * the lock module's wait in progress, if it keeps one. */
static void unknown_monitor_json(struct rp_json *j, const struct td_dump *d, const char *key,
                                 const struct td_thread *t)
{
    const struct td_thread *o = &d->t[t->waits_for];
    rp_json_key(j, key);
    rp_json_object_begin(j);
    rp_json_kv_string(j, "id", NULL);
    rp_json_kv_string(j, "class", t->wait && t->wait->klass ? rp_class_name(t->wait->klass)
                                                            : NULL);
    rp_json_kv_bool(j, "ownable", 0);
    rp_json_kv_string(j, "owner", o->name);
    rp_json_kv_i64(j, "owner_id", o->id);
    rp_json_object_end(j);
}

static void frames_json(struct rp_json *j, const struct td_dump *d, const struct td_thread *t)
{
    rp_json_kv_i64(j, "frames_total", t->total);
    rp_json_key(j, "frames");
    rp_json_array_begin(j);
    for (jint f = 0; f < t->nframes; f++) {
        const struct rp_method *m = rp_methods_get(d->jni, t->frames[f].method);
        jlocation bci = t->frames[f].location;
        rp_json_object_begin(j);
        rp_json_kv_string(j, "class", m->klass);
        rp_json_kv_string(j, "method", m->name);
        rp_json_kv_string(j, "file", m->file[0] ? m->file : NULL);
        rp_json_kv_u64(j, "line", bci >= 0 ? rp_method_line(m, (int32_t)bci) : 0);
        rp_json_kv_bool(j, "native", (m->flags & RP_METHOD_NATIVE) || bci < 0);
        rp_json_object_end(j);
    }
    rp_json_array_end(j);
}

/* What the thread holds: its monitors (with the frame that locked each, -1 if
 * not locked by a frame, e.g. JNI MonitorEnter) and the ownable synchronizers
 * other threads are parked on. */
static void held_json(struct rp_json *j, const struct td_dump *d, int i)
{
    const struct td_thread *t = &d->t[i];
    rp_json_key(j, "held");
    rp_json_array_begin(j);
    for (jint h = 0; h < t->nheld; h++) {
        rp_json_object_begin(j);
        lock_json(j, d, "lock", t->held[h]);
        rp_json_kv_i64(j, "depth", t->held_depth[h]);
        rp_json_object_end(j);
    }
    for (size_t k = 0; k < d->nl; k++)
        if (d->l[k].ownable && d->l[k].owner == i) {
            rp_json_object_begin(j);
            lock_json(j, d, "lock", (int)k);
            rp_json_kv_i64(j, "depth", -1);
            rp_json_object_end(j);
        }
    rp_json_array_end(j);
}

/* A thread's state, locks and frames: the members of its object after its
 * name and id (a platform thread's; a group of virtual threads'). */
static void thread_body_json(struct rp_json *j, const struct td_dump *d, int i)
{
    const struct td_thread *t = &d->t[i];
    rp_json_kv_string(j, "state", state_name(t->state));
    state_details(j, t->state);
    if (t->contended >= 0)
        lock_json(j, d, (t->state & JVMTI_THREAD_STATE_IN_OBJECT_WAIT) &&
                        !(t->state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
                        ? "waiting_on" : "blocked_on", t->contended);
    if (t->parked >= 0)
        lock_json(j, d, "parked_on", t->parked);
    if (t->pending_owner >= 0 && t->waits_for >= 0)
        unknown_monitor_json(j, d, "blocked_on", t);
    if (t->wait) {
        rp_json_key(j, "lock_wait");
        rp_lock_wait_json(j, t->wait, 0);
    }
    rp_json_kv_bool(j, "deadlocked", t->in_cycle);
    held_json(j, d, i);
    frames_json(j, d, t);
}

static void thread_json(struct rp_json *j, const struct td_dump *d, int i)
{
    const struct td_thread *t = &d->t[i];
    rp_json_object_begin(j);
    rp_json_kv_string(j, "name", t->name);
    rp_json_kv_i64(j, "id", t->id);
    rp_json_kv_bool(j, "daemon", t->daemon);
    rp_json_kv_i64(j, "priority", t->priority);
    thread_body_json(j, d, i);
    rp_json_object_end(j);
}

/* ------------------------------------------------- virtual thread groups -- */

/* Whether thread i holds a lock: such a thread is listed alone. */
static int holds_lock(const struct td_dump *d, int i)
{
    if (d->t[i].nheld)
        return 1;
    for (size_t k = 0; k < d->nl; k++)
        if (d->l[k].ownable && d->l[k].owner == i)
            return 1;
    return 0;
}

/* What makes two virtual threads alike (alike() compares it all): state,
 * what they wait for, their frames. */
static uint64_t group_hash(const struct td_dump *d, int i)
{
    const struct td_thread *t = &d->t[i];
    uint64_t h = rp_mix64((uint64_t)(uint32_t)t->state << 32 | (uint32_t)t->nframes);
    h = rp_mix64(h ^ (uint64_t)(uint32_t)t->contended ^ (uint64_t)(uint32_t)t->parked << 32);
    h = rp_mix64(h ^ (uint64_t)(uint32_t)t->waits_for ^ (uint64_t)(uint32_t)t->total << 32);
    for (jint f = 0; f < t->nframes; f++)
        h = rp_mix64(h ^ (uint64_t)(uintptr_t)t->frames[f].method ^
                     (uint64_t)t->frames[f].location << 40);
    return h;
}

static int alike(const struct td_dump *d, int a, int b)
{
    const struct td_thread *x = &d->t[a], *y = &d->t[b];
    if (x->state != y->state || x->nframes != y->nframes || x->total != y->total ||
        x->contended != y->contended || x->parked != y->parked ||
        x->waits_for != y->waits_for || x->wait_lock != y->wait_lock ||
        x->pending_owner != y->pending_owner || x->in_cycle != y->in_cycle)
        return 0;
    for (jint f = 0; f < x->nframes; f++)
        if (x->frames[f].method != y->frames[f].method ||
            x->frames[f].location != y->frames[f].location)
            return 0;
    return 1;
}

struct vt_key {
    uint64_t hash;
    int i;
};

static int vt_key_cmp(const void *a, const void *b)
{
    const struct vt_key *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

struct vt_group {
    int rep, count, at;        /* first member; members; offset in the list  */
};

static int vt_group_cmp(const void *a, const void *b)
{
    const struct vt_group *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->rep > y->rep) - (x->rep < y->rep);
}

/* The virtual threads in groups of alike ones, the largest first; members[]
 * holds each group's threads from group.at, in the walk's order. @return the
 * number of groups (0 when out of memory: *groups NULL). */
static size_t group_vthreads(const struct td_dump *d, struct vt_group **groups, int **members)
{
    size_t nv = (size_t)(d->n - d->nplat), ng = 0;
    struct vt_key *k = malloc(nv * sizeof *k + 1);
    int *of = malloc(nv * sizeof *of + 1);
    struct vt_group *g = malloc(nv * sizeof *g + 1);
    int *m = malloc(nv * sizeof *m + 1);
    if (!k || !of || !g || !m) {
        free(k), free(of), free(g), free(m);
        *groups = NULL;
        *members = NULL;
        return 0;
    }
    for (size_t v = 0; v < nv; v++) {
        int i = d->nplat + (int)v;
        /* A lock holder is alone: a hash no other thread has. */
        k[v] = (struct vt_key){holds_lock(d, i) ? UINT64_MAX - v : group_hash(d, i), i};
    }
    qsort(k, nv, sizeof *k, vt_key_cmp);
    for (size_t a = 0, run = 0; a < nv; a++) {
        if (a && k[a].hash != k[a - 1].hash)
            run = ng;                          /* this hash's groups start here */
        size_t gi = run;
        while (gi < ng && !alike(d, g[gi].rep, k[a].i))
            gi++;
        if (gi == ng)
            g[ng++] = (struct vt_group){k[a].i, 0, 0};
        g[gi].count++;
        of[k[a].i - d->nplat] = (int)gi;
    }
    for (size_t gi = 0, at = 0; gi < ng; gi++) {
        g[gi].at = (int)at;
        at += (size_t)g[gi].count;
        g[gi].count = 0;
    }
    for (size_t v = 0; v < nv; v++) {
        struct vt_group *x = &g[of[v]];
        m[x->at + x->count++] = d->nplat + (int)v;
    }
    for (size_t gi = 0; gi < ng; gi++)
        g[gi].rep = m[g[gi].at];
    qsort(g, ng, sizeof *g, vt_group_cmp);
    free(k);
    free(of);
    *groups = g;
    *members = m;
    return ng;
}

/* "virtual_threads": how many the containers held and how many were read,
 * then the groups: each with its count, what its threads have in common, and
 * their ids, names and carriers. Absent where the JVM has no virtual threads. */
static void vthreads_json(struct rp_json *j, const struct td_dump *d)
{
    if (!d->vt_walked)
        return;
    struct vt_group *g;
    int *m;
    size_t ng = group_vthreads(d, &g, &m);
    rp_json_key(j, "virtual_threads");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "total", d->vt.total);
    rp_json_kv_u64(j, "listed", g ? (uint64_t)(d->n - d->nplat) : 0);
    rp_json_kv_u64(j, "max", RP_THREADDUMP_VTHREADS_MAX);
    if (d->vt_walked < 0)
        rp_json_kv_bool(j, "incomplete", 1);
    rp_json_key(j, "groups");
    rp_json_array_begin(j);
    for (size_t gi = 0; gi < ng; gi++) {
        rp_json_object_begin(j);
        rp_json_kv_u64(j, "count", (uint64_t)g[gi].count);
        thread_body_json(j, d, g[gi].rep);
        rp_json_key(j, "threads");
        rp_json_array_begin(j);
        for (int k = 0; k < g[gi].count; k++) {
            const struct td_thread *t = &d->t[m[g[gi].at + k]];
            rp_json_object_begin(j);
            rp_json_kv_i64(j, "id", t->id);
            rp_json_kv_string(j, "name", t->name);
            if (t->carrier >= 0)
                rp_json_kv_string(j, "carrier", d->t[t->carrier].name);
            rp_json_object_end(j);
        }
        rp_json_array_end(j);
        rp_json_object_end(j);
    }
    rp_json_array_end(j);
    rp_json_object_end(j);
    free(g);
    free(m);
}

static void deadlocks_json(struct rp_json *j, const struct td_dump *d)
{
    rp_json_key(j, "deadlocks");
    rp_json_array_begin(j);
    for (size_t c = 0; c < d->ncycles; c++) {
        rp_json_array_begin(j);
        for (const int *i = d->cycles[c]; *i >= 0; i++) {
            const struct td_thread *t = &d->t[*i];
            rp_json_object_begin(j);
            rp_json_kv_string(j, "thread", t->name);
            rp_json_kv_i64(j, "id", t->id);
            if (t->virtual)
                rp_json_kv_bool(j, "virtual", 1);
            if (t->wait_lock >= 0)
                lock_json(j, d, "waits_for", t->wait_lock);
            else
                unknown_monitor_json(j, d, "waits_for", t);
            rp_json_object_end(j);
        }
        rp_json_array_end(j);
    }
    rp_json_array_end(j);
}

/* Add thread i to the array open in j if it fits. @return 1, or 0 (nothing
 * written) when it would take the text past the writer's max. */
static int thread_fits(struct rp_json *j, const struct td_dump *d, int i)
{
    struct rp_json_mark m;
    rp_json_mark(j, &m);
    thread_json(j, d, i);
    if (rp_json_error(j) != RP_JSON_TOO_LONG)
        return 1;
    rp_json_rewind(j, &m);
    return 0;
}

/* The platform threads, those in a deadlock first (in the order of the cycles),
 * then the others in the JVM's order, as many as fit in the reply: the dump of a
 * big JVM (10,000 threads of deep stacks) is cut rather than refused, and the
 * threads that matter most come first. @return how many were written. */
static jint threads_json(struct rp_json *j, const struct td_dump *d)
{
    jint written = 0;
    int room = 1;
    rp_json_key(j, "threads");
    rp_json_array_begin(j);
    for (size_t c = 0; c < d->ncycles && room; c++)
        for (const int *i = d->cycles[c]; *i >= 0 && room; i++) {
            if (*i >= d->nplat)
                continue;                     /* a virtual one: in its group */
            room = thread_fits(j, d, *i);
            written += room;
        }
    for (jint i = 0; i < d->nplat && room; i++)
        if (!d->t[i].in_cycle) {
            room = thread_fits(j, d, (int)i);
            written += room;
        }
    rp_json_array_end(j);
    return written;
}

/* The virtual threads' groups, if they fit after the platform threads; else
 * their count alone, with "omitted": the groups the reply had no room for. The
 * count is written with the writer's max raised to `most` (the tail's room). */
static void vthreads_fit(struct rp_json *j, const struct td_dump *d, size_t most)
{
    struct rp_json_mark m;
    rp_json_mark(j, &m);
    vthreads_json(j, d);
    if (rp_json_error(j) != RP_JSON_TOO_LONG)
        return;
    rp_json_rewind(j, &m);
    rp_json_set_max(j, most);
    rp_json_key(j, "virtual_threads");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "total", d->vt.total);
    rp_json_kv_u64(j, "listed", 0);
    rp_json_kv_u64(j, "max", RP_THREADDUMP_VTHREADS_MAX);
    rp_json_kv_bool(j, "omitted", 1);
    rp_json_object_end(j);
}


void rp_threaddump_write(struct rp_json *j, const struct td_dump *d, size_t most)
{
    deadlocks_json(j, d);
    jint written = rp_json_error(j) ? 0 : threads_json(j, d);
    vthreads_fit(j, d, most);
    rp_json_set_max(j, most);
    rp_json_kv_i64(j, "threads_total", d->nplat);
    rp_json_kv_i64(j, "threads_omitted", d->nplat - written);
}
