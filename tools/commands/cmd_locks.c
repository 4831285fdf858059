/*
 * tools/commands/cmd_locks.c — `ringprof locks [options] INPUT...`: where threads wait for
 * locks.
 *
 * Two sources, two sections:
 *   - monitors (synchronized): the lock samples (kind lock, the agent's lock=
 *     option; include/ringprof/events.h). Each is one contended entry that
 *     waited at least the threshold, weighing the ns waited, with the monitor's
 *     class and the owner thread when the wait began; a wait that never ended
 *     (a deadlock, a hang) is its latest in-progress record (kind lock.waiting,
 *     one per wait by the rule of tools/model/waits.h), weighing its wait so far,
 *     and is also listed on its own ("unfinished"). Monitors are grouped by
 *     class (the agent records the class, not the object) and ranked by total
 *     wait; each gets its top waiting stacks and the owners that made others
 *     wait, by the wait they caused ("unknown" when the agent could not tell).
 *     Inputs without lock samples but with wall-clock ones (lock= was off) get
 *     the wall samples in state blocked instead, by the code that blocked, and
 *     a line that says so;
 *   - java.util.concurrent locks and conditions: the JVM reports no contention
 *     event for them, but a thread waiting for one is parked in LockSupport.park,
 *     which the wall-clock samples (kind wall, wall=) see as state `parked`. Those
 *     samples are grouped by the code that asked to wait: going from
 *     LockSupport.park* towards the root, the first frame whose class is not in
 *     java.util.concurrent.locks (ReentrantLock.lock, AbstractQueuedSynchronizer
 *     and its ConditionObject are all skipped), shown with the last skipped frame
 *     it called ("via"). So app.Billing.charge via ReentrantLock.lock is one
 *     site, and an idle pool's LinkedBlockingQueue.take via
 *     ConditionObject.await another. Ranked by wall time parked. Each site
 *     gets the classes of the objects its threads parked on and, where those
 *     are AbstractOwnableSynchronizers, the owners (the wall kind's
 *     blocker_class and blocker_owner extras; a recording without them shows
 *     none and "unknown").
 *
 * Both are built as profiles (tools/model/profile.h) with the usual filters, so
 * stacks are interned once and memory is proportional to distinct stacks: the
 * lock profile's leaves are (stack, monitor class) pairs already, and only the
 * owners and the longest wait need the per-sample callback.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model/idmap.h"
#include "model/strtab.h"
#include "model/xalloc.h"
#include "outputs/out_common.h"
#include "query.h"

#define JUC_LOCKS "java.util.concurrent.locks."
#define LOCK_SUPPORT "java.util.concurrent.locks.LockSupport"

/* An owner and the waits it caused; also, for a parked site, a blocker class
 * (name: the class, NULL: none recorded; os_tid 0; waits: samples). */
struct owner {
    uint64_t os_tid;             /* 0 with name NULL: unknown                    */
    char *name;
    uint64_t waits, wait_ns;
};

struct monitor {
    uint32_t method;             /* the class frame's method; RP_PROF_NONE: the  */
                                 /* sample had no class                          */
    uint64_t waits, wait_ns, max_ns;
    uint64_t unfinished;         /* of the waits, those still in progress        */
    struct owner *owners;
    size_t nowners, cap_owners;
    uint32_t *stacks;            /* leaf nodes (stack + class), after the build  */
    size_t nstacks, cap_stacks;
};

struct juc_site {
    uint32_t site, via;          /* methods; RP_PROF_NONE: none                  */
    uint64_t samples, wall_ns, threads;
    uint32_t last_thread;        /* to count threads once each                   */
    struct owner *owners;        /* the blockers' owners, by sample: waits are   */
    size_t nowners, cap_owners;  /* samples, wait_ns their wall time             */
    struct owner *blockers;      /* the blockers' classes, by sample              */
    size_t nblockers, cap_blockers;
};

/* The sites of the wall samples of one state: parked (java.util.concurrent
 * waits), or blocked (monitor waits, when the inputs have no lock samples). */
struct sites {
    int blocked;                 /* 1: a site is the blocked stack's leaf frame  */
    const struct rp_profile *p;  /* the wall profile it was made from            */
    struct juc_site *s;
    size_t n, cap;
    uint32_t *leaf_site;         /* wall profile leaf → site index + 1, 0: none  */
    size_t cap_leaf;
    uint64_t ns, samples;        /* all of the state's samples                   */
    /* Sites are found by (site << 32 | via); their owners and blocker classes by
     * (site's index << 32 | number): owners by the owner's number (owner_number),
     * blockers by the class name's number in blocker_names. */
    struct rp_idmap by_methods, owner_of, blocker_of;
    struct rp_strtab blocker_names;
    struct rp_idmap *tids;       /* the locks' tid numbering (owner_number)      */
};

/* A wait still in progress when the recording ends (kind lock.waiting). */
struct stuck {
    char *thread, *owner;        /* owner NULL: unknown                           */
    uint64_t tid, owner_tid, waited_ns;
    uint32_t method;             /* its monitor's class frame, RP_PROF_NONE      */
};

struct locks {
    /* options */
    size_t top, nstacks;
    int json;
    /* the common options, the inputs and their look-ahead */
    struct rp_query q;
    /* lock samples */
    struct rp_profile *p;
    struct monitor *mons;
    size_t nmons, cap_mons;
    struct rp_idmap mon_of;      /* class frame's method -> monitor index        */
    struct rp_idmap tid_number;  /* owners' os tids, numbered (owner_number)     */
    struct rp_idmap mon_owner_of; /* monitor index << 32 | owner number -> owner */
    struct stuck *stuck;
    size_t nstuck, cap_stuck;
    uint64_t stuck_ns;
    /* wall samples: parked; blocked when there is no lock sample */
    struct rp_profile *w, *b;
    uint64_t wall_samples;       /* of kind wall in the inputs, before filters  */
    struct sites parked, blocked;
};

/* Room for element n of `a`, doubling from one: a file may give hundreds of
 * thousands of monitors and sites an owner, a blocker or a stack each, and lists
 * that started at 16 entries took 420 MiB of the 1.4 GB `locks` needed for
 * 300 000 of each. */
static void *xgrow(void *a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return a;
    *cap = *cap ? *cap * 2 : 1;
    return rp_xrealloc(a, *cap * size);
}

/* ------------------------------------------------------------------ usage -- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof locks [options] INPUT...\n"
        "\n"
        "Where threads wait for locks: monitors (synchronized) ranked by the time\n"
        "threads waited to enter them, from the lock samples (the agent's lock=),\n"
        "with each monitor's waiting stacks and the owners that made them wait, and\n"
        "the waits that never ended (a deadlock, a hang) by their wait so far;\n"
        "without lock samples, the wall-clock samples in state blocked; then\n"
        "java.util.concurrent waits, from the wall-clock samples (wall=) in state\n"
        "parked, by the code that asked for the lock or condition, with the classes\n"
        "of the objects parked on and the owners of those that are locks. INPUT is\n"
        "a chunk file, a recording directory or a glob.\n"
        "\n"
        "  --top N             monitors and parked sites shown (default 10)\n"
        "  --stacks N          stacks and owners shown per monitor, blocker classes\n"
        "                      and owners per parked site (default 5)\n"
        "  --from T, --to T    only waits that began in [T_from, T_to) (as for\n"
        "                      convert: UTC, +DUR, -DUR)\n"
        "  --thread REGEX      only waiting threads whose name matches\n"
        "  --include REGEX     only stacks with a frame matching REGEX (the monitor's\n"
        "                      class is the leaf frame of a lock sample)\n"
        "  --exclude REGEX     drop stacks with a frame matching REGEX\n"
        "  --demangle STYLE    native C++/Rust names: short (default), full or none\n"
        "  --json              one JSON object instead of text\n"
        "  --strict            exit 1 if any input was missing or damaged\n"
        "  --quiet             do not print each problem found in the inputs\n"
        "\n"
        "Exit status: 0 done; 1 nothing could be read, or the inputs have neither\n"
        "lock nor wall samples; 2 usage error. See docs/profiles.md (\"Lock\n"
        "contention\").\n");
}

enum { OPT_TOP = RP_QOPT_END, OPT_STACKS, OPT_JSON };

/* One of locks' own options (rp_query_own_fn). */
static int parse_one(void *cmd, int opt, const char *arg)
{
    struct locks *l = cmd;
    switch (opt) {
    case OPT_TOP:
    case OPT_STACKS:
        if (rp_parse_positive(arg, opt == OPT_TOP ? &l->top : &l->nstacks) < 0)
            return rp_query_bad_usage(&l->q, opt == OPT_TOP
                                      ? "--top '%s': a positive integer"
                                      : "--stacks '%s': a positive integer", arg);
        return 0;
    default: l->json = 1; return 0;   /* OPT_JSON */
    }
}

/* @return 0, 2 (usage error) or 3 (--help). */
static int parse_args(struct locks *l, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"top", 1, 0, OPT_TOP},         {"stacks", 1, 0, OPT_STACKS},
        {"json", 0, 0, OPT_JSON},       RP_QUERY_LONGOPTS,
        {0, 0, 0, 0}};
    return rp_query_parse(&l->q, argc, argv, ":h", longopts, parse_one, l);
}

/* --------------------------------------------------------------- monitors -- */

/* The monitor class of a lock sample's leaf: the class frame the profile adds
 * below the stack, or RP_PROF_NONE when the sample named no class. */
static uint32_t leaf_monitor(const struct rp_profile *p, uint32_t leaf)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, leaf);
    return f && f->type == RP_PFRAME_CLASS ? f->method : RP_PROF_NONE;
}

static struct monitor *monitor_of(struct locks *l, uint32_t method)
{
    uint32_t i = rp_idmap_put(&l->mon_of, method, (uint32_t)l->nmons);
    if (i < l->nmons)
        return &l->mons[i];
    l->mons = xgrow(l->mons, &l->cap_mons, l->nmons, sizeof *l->mons);
    struct monitor *m = &l->mons[l->nmons++];
    memset(m, 0, sizeof *m);
    m->method = method;
    return m;
}

/* A number for owner `ti` in the keys of owner maps: 0 for unknown (NULL), else 1
 * + the number of its os tid in `tids` (a file's tids are any 64-bit values, so
 * they are numbered before they are packed into a key with the owners' holder). */
static uint64_t owner_number(struct rp_idmap *tids, const struct rp_thread_info *ti)
{
    return ti ? (uint64_t)rp_idmap_put(tids, ti->os_tid, (uint32_t)tids->used) + 1 : 0;
}

/* Count `ns` of wait against owner `ti` (NULL: unknown) in owners[0..*n), the
 * owners of `holder` (a monitor's or a site's index), found through `of`. */
static void owner_add(struct rp_idmap *tids, struct rp_idmap *of, size_t holder,
                      struct owner **owners, size_t *n, size_t *cap,
                      const struct rp_thread_info *ti, uint64_t ns)
{
    uint64_t tid = ti ? ti->os_tid : 0;
    const char *name = ti ? (ti->name ? ti->name : "") : NULL;
    uint64_t key = (uint64_t)holder << 32 | owner_number(tids, ti);
    uint32_t i = rp_idmap_put(of, key, (uint32_t)*n);
    if (i == *n) {
        *owners = xgrow(*owners, cap, *n, sizeof **owners);
        struct owner *o = &(*owners)[(*n)++];
        memset(o, 0, sizeof *o);
        o->os_tid = tid;
        o->name = name ? rp_xstrdup(name) : NULL;
    }
    struct owner *o = &(*owners)[i];
    if (name && strcmp(o->name, name)) {   /* renamed: the newest wins */
        free(o->name);
        o->name = rp_xstrdup(name);
    }
    o->waits++;
    o->wait_ns += ns;
}

/* The index of extra `name` in `kind`, or -1 (no such extra, no kind). */
static int extra_index(const struct rp_kind_info *kind, const char *name)
{
    for (uint32_t i = 0; kind && i < kind->nextra; i++)
        if (kind->extra[i] && !strcmp(kind->extra[i], name))
            return (int)i;
    return -1;
}

/* Extra `x` of the sample (0 when absent: -1, or an older layout with fewer). */
static uint64_t extra_value(const struct rp_event *ev, int x)
{
    return x >= 0 && (uint32_t)x < ev->u.sample.nextra ? ev->u.sample.extra[x] : 0;
}

/* The thread extra `x` of the sample names, or NULL (0, unknown). */
static const struct rp_thread_info *extra_thread(const struct rp_profile *p,
                                                 const struct rp_event *ev, int x)
{
    uint64_t id = extra_value(ev, x);
    return id && id <= UINT32_MAX ? rp_prof_chunk_thread(p, (uint32_t)id) : NULL;
}

struct lock_fields {
    const struct rp_kind_info *kind;
    int owner_x;
    int waiting;                 /* the kind is lock.waiting                      */
};

struct lock_cb {
    struct locks *l;
    struct lock_fields f;
};

/* A wait still in progress: its thread, owner, monitor class and wait so far. */
static void stuck_add(struct locks *l, const struct rp_thread_info *ti,
                      const struct rp_thread_info *owner, uint32_t method, uint64_t ns)
{
    l->stuck = xgrow(l->stuck, &l->cap_stuck, l->nstuck, sizeof *l->stuck);
    struct stuck *st = &l->stuck[l->nstuck++];
    *st = (struct stuck){rp_xstrdup(ti && ti->name ? ti->name : ""),
                         owner ? rp_xstrdup(owner->name ? owner->name : "") : NULL,
                         ti ? ti->os_tid : 0, owner ? owner->os_tid : 0, ns, method};
    l->stuck_ns += ns;
}

/* on_sample of the lock profile: count, longest wait, owner; unfinished waits. */
static void on_lock(void *arg, const struct rp_profile *p, uint32_t leaf,
                    const struct rp_event *ev, const struct rp_kind_info *kind)
{
    struct lock_cb *cb = arg;
    if (kind != cb->f.kind) {
        cb->f.kind = kind;
        cb->f.owner_x = extra_index(kind, "owner");
        cb->f.waiting = kind && kind->name && !strcmp(kind->name, RP_KIND_LOCK_WAITING);
    }
    struct monitor *m = monitor_of(cb->l, leaf_monitor(p, leaf));
    uint64_t ns = ev->u.sample.weight;
    m->waits++;
    m->wait_ns += ns;
    if (ns > m->max_ns)
        m->max_ns = ns;
    const struct rp_thread_info *owner = extra_thread(p, ev, cb->f.owner_x);
    owner_add(&cb->l->tid_number, &cb->l->mon_owner_of, (size_t)(m - cb->l->mons),
              &m->owners, &m->nowners, &m->cap_owners, owner, ns);
    if (cb->f.waiting) {
        m->unfinished++;
        stuck_add(cb->l, rp_prof_chunk_thread(p, ev->u.sample.thread), owner, m->method, ns);
    }
}

static const struct rp_profile *sort_p;

static int cmp_monitors(const void *a, const void *b)
{
    const struct monitor *x = a, *y = b;
    if (x->wait_ns != y->wait_ns)
        return x->wait_ns > y->wait_ns ? -1 : 1;
    if (x->waits != y->waits)
        return x->waits > y->waits ? -1 : 1;
    if (x->method == RP_PROF_NONE || y->method == RP_PROF_NONE)
        return x->method == RP_PROF_NONE ? 1 : -1;
    return strcmp(sort_p->methods[x->method].display, sort_p->methods[y->method].display);
}

static int cmp_owners(const void *a, const void *b)
{
    const struct owner *x = a, *y = b;
    if (x->wait_ns != y->wait_ns)
        return x->wait_ns > y->wait_ns ? -1 : 1;
    if (x->waits != y->waits)
        return x->waits > y->waits ? -1 : 1;
    if (!x->name || !y->name)
        return !x->name ? (y->name ? 1 : 0) : -1;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->os_tid < y->os_tid ? -1 : x->os_tid > y->os_tid);
}

static int cmp_stacks(const void *a, const void *b)
{
    const struct rp_prof_node *x = &sort_p->nodes[*(const uint32_t *)a];
    const struct rp_prof_node *y = &sort_p->nodes[*(const uint32_t *)b];
    if (x->self[RP_PV_WEIGHT] != y->self[RP_PV_WEIGHT])
        return x->self[RP_PV_WEIGHT] > y->self[RP_PV_WEIGHT] ? -1 : 1;
    if (x->self[RP_PV_SAMPLES] != y->self[RP_PV_SAMPLES])
        return x->self[RP_PV_SAMPLES] > y->self[RP_PV_SAMPLES] ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int collect_stack(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                         size_t depth, void *arg)
{
    (void)path;
    (void)depth;
    struct locks *l = arg;
    struct monitor *m = monitor_of(l, leaf_monitor(p, leaf));
    m->stacks = xgrow(m->stacks, &m->cap_stacks, m->nstacks, sizeof *m->stacks);
    m->stacks[m->nstacks++] = leaf;
    return 0;
}

/* After the build: each monitor's stacks from the tree, everything sorted. */
static void rank_monitors(struct locks *l)
{
    rp_prof_foreach_stack(l->p, collect_stack, l);
    sort_p = l->p;
    if (l->nmons)
        qsort(l->mons, l->nmons, sizeof *l->mons, cmp_monitors);
    for (size_t i = 0; i < l->nmons; i++) {
        struct monitor *m = &l->mons[i];
        if (m->nowners)
            qsort(m->owners, m->nowners, sizeof *m->owners, cmp_owners);
        if (m->nstacks)
            qsort(m->stacks, m->nstacks, sizeof *m->stacks, cmp_stacks);
    }
}

/* ------------------------------------------------------ parked (j.u.c.) -- */

static int starts_with(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/*
 * A parked stack's site: from the leaf towards the root, find LockSupport.park*;
 * then, further towards the root, skip frames of java.util.concurrent.locks:
 * the first other frame is the site, the last skipped one the "via".
 */
static void parked_site(const struct rp_profile *p, const uint32_t *path, size_t depth,
                        uint32_t *site, uint32_t *via)
{
    *site = *via = RP_PROF_NONE;
    size_t i = depth;
    while (i-- > 0) {
        const struct rp_prof_frame *f = rp_prof_node_frame(p, path[i]);
        const struct rp_prof_method *m = f ? &p->methods[f->method] : NULL;
        if (m && !strcmp(m->klass, LOCK_SUPPORT) && starts_with(m->name, "park"))
            break;
    }
    if (i == (size_t)-1)
        return;   /* no LockSupport.park on the stack */
    while (i-- > 0) {
        const struct rp_prof_frame *f = rp_prof_node_frame(p, path[i]);
        if (!f)
            return;   /* the thread node: the whole stack was j.u.c.locks */
        if (starts_with(p->methods[f->method].klass, JUC_LOCKS)) {
            if (strcmp(p->methods[f->method].klass, LOCK_SUPPORT))
                *via = f->method;
            continue;
        }
        *site = f->method;
        return;
    }
}

/* A blocked stack's site: its leaf frame, the method that entered the monitor
 * (NONE for a stack without frames); no via. */
static void blocked_site(const struct rp_profile *p, const uint32_t *path, size_t depth,
                         uint32_t *site, uint32_t *via)
{
    const struct rp_prof_frame *f = depth ? rp_prof_node_frame(p, path[depth - 1]) : NULL;
    *site = f ? f->method : RP_PROF_NONE;
    *via = RP_PROF_NONE;
}

/* The site of a parked or blocked stack (leaf `leaf`, root-most
 * `path[0..depth)`) in t: made when new, and remembered for the leaf. @return
 * its index. */
static size_t site_of(struct sites *t, const struct rp_profile *p, uint32_t leaf,
                      const uint32_t *path, size_t depth)
{
    if (leaf < t->cap_leaf && t->leaf_site[leaf])
        return t->leaf_site[leaf] - 1;
    uint32_t site, via;
    (t->blocked ? blocked_site : parked_site)(p, path, depth, &site, &via);
    uint32_t i = rp_idmap_put(&t->by_methods, (uint64_t)site << 32 | via, (uint32_t)t->n);
    if (i == t->n) {
        t->s = xgrow(t->s, &t->cap, t->n, sizeof *t->s);
        struct juc_site *s = &t->s[t->n++];
        memset(s, 0, sizeof *s);
        s->site = site;
        s->via = via;
        s->last_thread = RP_PROF_NONE;
    }
    rp_xgrow_map((void **)&t->leaf_site, &t->cap_leaf, leaf, sizeof *t->leaf_site, 256, 0);
    t->leaf_site[leaf] = (uint32_t)i + 1;
    return i;
}

/* Count a sample of site `si` of t parked on an object of class `name` (NULL:
 * none recorded). Classes are numbered by name (0: none) for the key. */
static void blocker_add(struct sites *t, size_t si, const char *name, uint64_t ns)
{
    struct juc_site *s = &t->s[si];
    uint64_t number = name ? (uint64_t)rp_strtab_cstr(&t->blocker_names, name) + 1 : 0;
    uint32_t i = rp_idmap_put(&t->blocker_of, (uint64_t)si << 32 | number,
                              (uint32_t)s->nblockers);
    if (i == s->nblockers) {
        s->blockers = xgrow(s->blockers, &s->cap_blockers, s->nblockers, sizeof *s->blockers);
        struct owner *b = &s->blockers[s->nblockers++];
        memset(b, 0, sizeof *b);
        b->name = name ? rp_xstrdup(name) : NULL;
    }
    struct owner *b = &s->blockers[i];
    b->waits++;
    b->wait_ns += ns;
}

struct wall_fields {
    const struct rp_kind_info *kind;
    int class_x, owner_x;
};

struct wall_cb {
    struct sites *t;
    struct wall_fields f;
    uint32_t *path;
    size_t cap;
};

/* on_sample of the parked (or blocked) profile: the sample's blocker class and
 * owner, for its site. A kind written before the two extras existed has
 * neither: none, unknown; so has a blocked sample. */
static void on_parked(void *arg, const struct rp_profile *p, uint32_t leaf,
                      const struct rp_event *ev, const struct rp_kind_info *kind)
{
    struct wall_cb *cb = arg;
    if (kind != cb->f.kind) {
        cb->f.kind = kind;
        cb->f.class_x = extra_index(kind, "blocker_class");
        cb->f.owner_x = extra_index(kind, "blocker_owner");
    }
    size_t depth = 0;
    if (leaf >= cb->t->cap_leaf || !cb->t->leaf_site[leaf]) {
        while ((depth = rp_prof_path(p, leaf, cb->path, cb->cap)) > cb->cap) {
            cb->cap = depth * 2;
            cb->path = rp_xrealloc(cb->path, cb->cap * sizeof *cb->path);
        }
    }
    size_t i = site_of(cb->t, p, leaf, cb->path, depth);   /* may move the sites */
    uint64_t ns = ev->u.sample.weight, klass = extra_value(ev, cb->f.class_x);
    blocker_add(cb->t, i, klass && klass <= UINT32_MAX
                              ? rp_prof_chunk_class(p, (uint32_t)klass) : NULL, ns);
    struct juc_site *s = &cb->t->s[i];
    owner_add(cb->t->tids, &cb->t->owner_of, i, &s->owners, &s->nowners, &s->cap_owners,
              extra_thread(p, ev, cb->f.owner_x), ns);
}

static int collect_sites(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                         size_t depth, void *arg)
{
    struct sites *t = arg;
    /* Per-thread profile: path[0] is the thread node. */
    uint32_t thread = p->nodes[path[0]].kind == RP_PNODE_THREAD ? p->nodes[path[0]].ref
                                                                 : RP_PROF_NONE;
    size_t i = site_of(t, p, leaf, path, depth);
    struct juc_site *s = &t->s[i];
    const struct rp_prof_node *n = &p->nodes[leaf];
    s->samples += n->self[RP_PV_SAMPLES];
    s->wall_ns += n->self[RP_PV_WEIGHT];
    /* The walk visits each thread's subtree whole, so a thread is new to a site
     * exactly when it differs from the last one seen there. */
    if (thread != s->last_thread) {
        s->threads++;
        s->last_thread = thread;
    }
    t->ns += n->self[RP_PV_WEIGHT];
    t->samples += n->self[RP_PV_SAMPLES];
    return 0;
}

static int cmp_sites(const void *a, const void *b)
{
    const struct juc_site *x = a, *y = b;
    if (x->wall_ns != y->wall_ns)
        return x->wall_ns > y->wall_ns ? -1 : 1;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    const char *sx = x->site != RP_PROF_NONE ? sort_p->methods[x->site].display : "";
    const char *sy = y->site != RP_PROF_NONE ? sort_p->methods[y->site].display : "";
    return strcmp(sx, sy);
}

static const char *method_name(const struct rp_profile *p, uint32_t m, const char *none)
{
    return m != RP_PROF_NONE ? p->methods[m].display : none;
}

/* ----------------------------------------------------------------- output -- */

static const char *fmt_ns(uint64_t ns, char *buf, size_t cap)
{
    double v = (double)ns;
    if (v >= 1e9)
        snprintf(buf, cap, "%.3f s", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, cap, "%.3f ms", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, cap, "%.3f us", v / 1e3);
    else
        snprintf(buf, cap, "%.0f ns", v);
    return buf;
}

static uint64_t kind_samples(const struct rp_profile *p, const char *kind)
{
    for (size_t k = 0; k < p->nkinds; k++)
        if (!strcmp(p->kinds[k].name, kind))
            return p->kinds[k].samples;
    return 0;
}

static const char *monitor_name(const struct locks *l, const struct monitor *m)
{
    return method_name(l->p, m->method, "[no class recorded]");
}

static void print_header(FILE *out, const struct locks *l)
{
    const struct rp_profile *p = l->p;
    fputs("# ringprof locks", out);
    for (size_t i = 0; i < p->nsources; i++) {
        fputs(i ? "; " : ": recording ", out);
        if (i)
            fputs("recording ", out);
        out_text(out, p->sources[i].recording);
        fputs(": pid ", out);
        out_text(out, p->sources[i].pid[0] ? p->sources[i].pid : "?");
        fputs(" on ", out);
        out_text(out, p->sources[i].host[0] ? p->sources[i].host : "?");
    }
    fputc('\n', out);
    const struct rp_profile *t = p->wall_first ? p : l->w;
    if (t && t->wall_first) {
        char a[48], b[48];
        rp_fmt_wall(a, sizeof a, t->wall_first);
        rp_fmt_wall(b, sizeof b, t->wall_last);
        fprintf(out, "# time %s .. %s\n", a, b);
    }
    const struct rp_prof_stats *st = &p->stats;
    if (st->samples_thread_filtered || st->samples_time_filtered ||
        st->samples_frame_filtered)
        fprintf(out, "# lock samples left out: %llu by --thread, %llu by --from/--to, "
                     "%llu by --include/--exclude\n",
                (unsigned long long)st->samples_thread_filtered,
                (unsigned long long)st->samples_time_filtered,
                (unsigned long long)st->samples_frame_filtered);
}

/* The owners that made others wait (`all`: the wait they are a share of; `what`:
 * what their count counts), --stacks of them. */
static void print_owners(FILE *out, const struct locks *l, const struct owner *owners,
                         size_t n, uint64_t all, const char *what)
{
    char a[32];
    size_t no = l->nstacks < n ? l->nstacks : n;
    fprintf(out, "  owners (%zu, by the wait they caused):\n", n);
    for (size_t k = 0; k < no; k++) {
        const struct owner *o = &owners[k];
        fprintf(out, "  %7llu %s %14s %6.2f%%  ", (unsigned long long)o->waits, what,
                fmt_ns(o->wait_ns, a, sizeof a), out_pct(o->wait_ns, all));
        if (o->name) {
            out_text(out, o->name[0] ? o->name : "?");
            fprintf(out, " (tid %llu)\n", (unsigned long long)o->os_tid);
        } else {
            fputs("unknown\n", out);
        }
    }
    if (no < n)
        fprintf(out, "    # %zu more owners (--stacks %zu)\n", n - no, l->nstacks);
}

/* Whether the inputs hold lock samples: waits that ended, or in progress. */
static int have_locks(const struct locks *l)
{
    return kind_samples(l->p, RP_KIND_LOCK) || kind_samples(l->p, RP_KIND_LOCK_WAITING);
}

static int cmp_stuck(const void *a, const void *b)
{
    const struct stuck *x = a, *y = b;
    if (x->waited_ns != y->waited_ns)
        return x->waited_ns > y->waited_ns ? -1 : 1;
    int c = strcmp(x->thread, y->thread);
    return c ? c : (x->tid < y->tid ? -1 : x->tid > y->tid);
}

/* The waits still in progress when the recording ends, the longest first. */
static void print_stuck(FILE *out, const struct locks *l)
{
    char a[32];
    if (!l->nstuck)
        return;
    size_t shown = l->top < l->nstuck ? l->top : l->nstuck;
    fprintf(out, "UNFINISHED BEGIN (%zu wait%s still in progress when the recording ends, "
                 "%s so far, longest first)\n", l->nstuck, l->nstuck == 1 ? "" : "s",
            fmt_ns(l->stuck_ns, a, sizeof a));
    fprintf(out, "%4s %14s  %s\n", "rank", "waited so far", "thread, monitor class, owner");
    for (size_t i = 0; i < shown; i++) {
        const struct stuck *st = &l->stuck[i];
        fprintf(out, "%4zu %14s  ", i + 1, fmt_ns(st->waited_ns, a, sizeof a));
        out_text(out, st->thread[0] ? st->thread : "?");
        fprintf(out, " (tid %llu) on ", (unsigned long long)st->tid);
        out_text(out, method_name(l->p, st->method, "[no class recorded]"));
        fputs(", owner ", out);
        if (st->owner) {
            out_text(out, st->owner[0] ? st->owner : "?");
            fprintf(out, " (tid %llu)\n", (unsigned long long)st->owner_tid);
        } else {
            fputs("unknown\n", out);
        }
    }
    fputs("UNFINISHED END\n", out);
    if (shown < l->nstuck)
        fprintf(out, "# %zu more not shown (--top %zu)\n", l->nstuck - shown, l->top);
}

static void print_monitors(FILE *out, const struct locks *l)
{
    const struct rp_prof_node *root = &l->p->nodes[0];
    uint64_t all = root->total[RP_PV_WEIGHT];
    char a[32], b[32], c[32];
    if (!have_locks(l)) {
        if (l->blocked.samples)
            fputs("no lock samples (lock= was off): the monitor waits below are the "
                  "wall-clock samples in state blocked, by the code that blocked; lock="
                  "DURATION records each wait with its monitor's class and owner\n", out);
        else
            fputs("no lock samples: the inputs hold no contended monitor waits; the agent "
                  "records them with lock=DURATION (e.g. lock=10ms: waits to enter a "
                  "synchronized block or method longer than 10 ms)\n", out);
        return;
    }
    fprintf(out, "# %llu contended monitor waits, %s waited in all",
            (unsigned long long)root->total[RP_PV_SAMPLES], fmt_ns(all, a, sizeof a));
    if (l->nstuck)
        fprintf(out, "; %zu of them unfinished (still waiting when the recording ends)",
                l->nstuck);
    fputc('\n', out);
    size_t shown = l->top < l->nmons ? l->top : l->nmons;
    fprintf(out, "MONITORS BEGIN (%zu monitor class%s, by total wait)\n", l->nmons,
            l->nmons == 1 ? "" : "es");
    fprintf(out, "%4s %7s %10s %14s %14s %14s %7s  %s\n", "rank", "waits", "unfinished",
            "total", "mean", "longest", "share", "monitor class");
    for (size_t i = 0; i < shown; i++) {
        const struct monitor *m = &l->mons[i];
        fprintf(out, "%4zu %7llu %10llu %14s %14s %14s %6.2f%%  ", i + 1,
                (unsigned long long)m->waits, (unsigned long long)m->unfinished,
                fmt_ns(m->wait_ns, a, sizeof a),
                fmt_ns(m->waits ? m->wait_ns / m->waits : 0, b, sizeof b),
                fmt_ns(m->max_ns, c, sizeof c), out_pct(m->wait_ns, all));
        out_text(out, monitor_name(l, m));
        fputc('\n', out);
    }
    fputs("MONITORS END\n", out);
    if (shown < l->nmons)
        fprintf(out, "# %zu more not shown (--top %zu)\n", l->nmons - shown, l->top);
    print_stuck(out, l);
    for (size_t i = 0; i < shown; i++) {
        const struct monitor *m = &l->mons[i];
        fprintf(out, "\nMONITOR %zu: ", i + 1);
        out_text(out, monitor_name(l, m));
        fprintf(out, ", %llu waits, %s\n", (unsigned long long)m->waits,
                fmt_ns(m->wait_ns, a, sizeof a));
        size_t ns = l->nstacks < m->nstacks ? l->nstacks : m->nstacks;
        fprintf(out, "  waiting stacks (%zu, by wait time; leaf first):\n", m->nstacks);
        for (size_t k = 0; k < ns; k++) {
            const struct rp_prof_node *n = &l->p->nodes[m->stacks[k]];
            fprintf(out, "    - %llu waits, %s (%.2f%%):\n",
                    (unsigned long long)n->self[RP_PV_SAMPLES],
                    fmt_ns(n->self[RP_PV_WEIGHT], a, sizeof a),
                    out_pct(n->self[RP_PV_WEIGHT], m->wait_ns));
            /* The leaf is the class frame (the monitor): start at its caller. */
            uint32_t x = m->method != RP_PROF_NONE ? n->parent : m->stacks[k];
            for (; x != 0 && x != RP_PROF_NONE; x = l->p->nodes[x].parent) {
                fputs("        ", out);
                out_node_text(out, l->p, x);
                fputc('\n', out);
            }
        }
        if (ns < m->nstacks)
            fprintf(out, "    # %zu more stacks (--stacks %zu)\n", m->nstacks - ns,
                    l->nstacks);
        print_owners(out, l, m->owners, m->nowners, m->wait_ns, "waits");
    }
}

static void print_site_name(FILE *out, const struct sites *t, const struct juc_site *s)
{
    out_text(out, method_name(t->p, s->site, t->blocked ? "[no frame]"
                                                        : "[no LockSupport.park frame]"));
    if (s->via != RP_PROF_NONE) {
        fputs(" (via ", out);
        out_text(out, t->p->methods[s->via].display);
        fputc(')', out);
    }
}

/* A parked site's blocker classes and the owners of its blockers. */
static void print_site(FILE *out, const struct locks *l, const struct juc_site *s,
                       size_t rank)
{
    char a[32];
    fprintf(out, "\nPARKED %zu: ", rank);
    print_site_name(out, &l->parked, s);
    fprintf(out, ", %llu samples, %s\n", (unsigned long long)s->samples,
            fmt_ns(s->wall_ns, a, sizeof a));
    size_t nb = l->nstacks < s->nblockers ? l->nstacks : s->nblockers;
    fprintf(out, "  blocker classes (%zu, by wall time):\n", s->nblockers);
    for (size_t k = 0; k < nb; k++) {
        const struct owner *b = &s->blockers[k];
        fprintf(out, "  %7llu samples %14s %6.2f%%  ", (unsigned long long)b->waits,
                fmt_ns(b->wait_ns, a, sizeof a), out_pct(b->wait_ns, s->wall_ns));
        out_text(out, b->name ? b->name : "[none recorded]");
        fputc('\n', out);
    }
    if (nb < s->nblockers)
        fprintf(out, "    # %zu more classes (--stacks %zu)\n", s->nblockers - nb,
                l->nstacks);
    print_owners(out, l, s->owners, s->nowners, s->wall_ns, "samples");
}

/* The sites table of t: PARKED or BLOCKED, introduced by `what`. */
static void print_sites(FILE *out, const struct locks *l, const struct sites *t,
                        const char *name, const char *what)
{
    char a[32];
    size_t shown = l->top < t->n ? l->top : t->n;
    fprintf(out, "%s BEGIN (%s, %llu samples, %s, by the code that %s)\n", name, what,
            (unsigned long long)t->samples, fmt_ns(t->ns, a, sizeof a),
            t->blocked ? "blocked" : "parked");
    fprintf(out, "%4s %14s %7s %8s %7s  %s\n", "rank", "wall", "share", "samples",
            "threads", t->blocked ? "site" : "site (via)");
    for (size_t i = 0; i < shown; i++) {
        const struct juc_site *s = &t->s[i];
        fprintf(out, "%4zu %14s %6.2f%% %8llu %7llu  ", i + 1,
                fmt_ns(s->wall_ns, a, sizeof a), out_pct(s->wall_ns, t->ns),
                (unsigned long long)s->samples, (unsigned long long)s->threads);
        print_site_name(out, t, s);
        fputc('\n', out);
    }
    fprintf(out, "%s END\n", name);
    if (shown < t->n)
        fprintf(out, "# %zu more not shown (--top %zu)\n", t->n - shown, l->top);
}

static void print_parked(FILE *out, const struct locks *l)
{
    if (l->blocked.samples)
        print_sites(out, l, &l->blocked, "BLOCKED", "monitor waits: wall samples in state "
                    "blocked, lock= was off");
    fputs("\n", out);
    if (!l->wall_samples) {
        fputs("java.util.concurrent waits: not shown: the inputs have no wall-clock "
              "samples, where they appear (as state parked); the agent records them "
              "with wall=INTERVAL (e.g. wall=50ms)\n", out);
        return;
    }
    if (!l->parked.samples) {
        fputs("java.util.concurrent waits: no wall-clock sample in state parked\n", out);
        return;
    }
    print_sites(out, l, &l->parked, "PARKED", "java.util.concurrent waits: wall samples "
                "in state parked");
    size_t shown = l->top < l->parked.n ? l->top : l->parked.n;
    for (size_t i = 0; i < shown; i++)
        print_site(out, l, &l->parked.s[i], i + 1);
}

/* ,"owners":[...]: --stacks of them; "waits" counts what the owners' list
 * counts (waits, or parked samples). */
static void json_owners(FILE *out, const struct locks *l, const struct owner *owners,
                        size_t n)
{
    fputs(",\"owners\":[", out);
    size_t no = l->nstacks < n ? l->nstacks : n;
    for (size_t k = 0; k < no; k++) {
        const struct owner *o = &owners[k];
        fputs(k ? ",{\"thread\":" : "{\"thread\":", out);
        if (o->name)
            out_json_cstring(out, o->name);
        else
            fputs("null", out);
        fprintf(out, ",\"tid\":%llu,\"waits\":%llu,\"wait_ns\":%llu}",
                (unsigned long long)o->os_tid, (unsigned long long)o->waits,
                (unsigned long long)o->wait_ns);
    }
    fputc(']', out);
}

static void json_blockers(FILE *out, const struct locks *l, const struct juc_site *s)
{
    fputs(",\"blockers\":[", out);
    size_t nb = l->nstacks < s->nblockers ? l->nstacks : s->nblockers;
    for (size_t k = 0; k < nb; k++) {
        const struct owner *b = &s->blockers[k];
        fputs(k ? ",{\"class\":" : "{\"class\":", out);
        if (b->name)
            out_json_cstring(out, b->name);
        else
            fputs("null", out);
        fprintf(out, ",\"samples\":%llu,\"wall_ns\":%llu}", (unsigned long long)b->waits,
                (unsigned long long)b->wait_ns);
    }
    fputc(']', out);
}

/* A string, or null. */
static void json_cstring_or_null(FILE *out, const char *s)
{
    if (s)
        out_json_cstring(out, s);
    else
        fputs("null", out);
}

static void json_monitor(FILE *out, const struct locks *l, const struct monitor *m,
                         uint64_t all)
{
    fputs("{\"class\":", out);
    json_cstring_or_null(out, m->method != RP_PROF_NONE ? monitor_name(l, m) : NULL);
    fprintf(out, ",\"waits\":%llu,\"unfinished\":%llu,\"wait_ns\":%llu,\"mean_ns\":%llu,"
                 "\"max_ns\":%llu,\"share\":%.4f,\"stacks\":[",
            (unsigned long long)m->waits, (unsigned long long)m->unfinished,
            (unsigned long long)m->wait_ns,
            (unsigned long long)(m->waits ? m->wait_ns / m->waits : 0),
            (unsigned long long)m->max_ns, out_pct(m->wait_ns, all) / 100);
    size_t ns = l->nstacks < m->nstacks ? l->nstacks : m->nstacks;
    for (size_t k = 0; k < ns; k++) {
        const struct rp_prof_node *n = &l->p->nodes[m->stacks[k]];
        fprintf(out, "%s{\"waits\":%llu,\"wait_ns\":%llu,\"frames\":[", k ? "," : "",
                (unsigned long long)n->self[RP_PV_SAMPLES],
                (unsigned long long)n->self[RP_PV_WEIGHT]);
        uint32_t x = m->method != RP_PROF_NONE ? n->parent : m->stacks[k];
        for (int first = 1; x != 0 && x != RP_PROF_NONE; x = l->p->nodes[x].parent) {
            if (!first)
                fputc(',', out);
            first = 0;
            out_json_cstring(out, rp_prof_node_name(l->p, x));
        }
        fputs("]}", out);
    }
    fputc(']', out);
    json_owners(out, l, m->owners, m->nowners);
    fputc('}', out);
}

/* ,"NAME":[...]: the sites of t, --top of them. */
static void json_sites(FILE *out, const struct locks *l, const struct sites *t,
                       const char *name)
{
    fprintf(out, ",\n\"%s\":[", name);
    size_t shown = l->top < t->n ? l->top : t->n;
    for (size_t i = 0; i < shown; i++) {
        const struct juc_site *s = &t->s[i];
        fputs(i ? ",\n  {\"site\":" : "\n  {\"site\":", out);
        json_cstring_or_null(out, s->site != RP_PROF_NONE ? t->p->methods[s->site].display
                                                         : NULL);
        fputs(",\"via\":", out);
        json_cstring_or_null(out, s->via != RP_PROF_NONE ? t->p->methods[s->via].display
                                                        : NULL);
        fprintf(out, ",\"wall_ns\":%llu,\"samples\":%llu,\"threads\":%llu",
                (unsigned long long)s->wall_ns, (unsigned long long)s->samples,
                (unsigned long long)s->threads);
        json_blockers(out, l, s);
        json_owners(out, l, s->owners, s->nowners);
        fputc('}', out);
    }
    fputc(']', out);
}

/* ,"unfinished":[...]: the waits still in progress, longest first. */
static void json_stuck(FILE *out, const struct locks *l)
{
    fprintf(out, ",\n\"unfinished_ns\":%llu,\"unfinished\":[",
            (unsigned long long)l->stuck_ns);
    for (size_t i = 0; i < l->nstuck; i++) {
        const struct stuck *st = &l->stuck[i];
        fputs(i ? ",\n  {\"thread\":" : "\n  {\"thread\":", out);
        out_json_cstring(out, st->thread);
        fprintf(out, ",\"tid\":%llu,\"waited_ns\":%llu,\"class\":",
                (unsigned long long)st->tid, (unsigned long long)st->waited_ns);
        json_cstring_or_null(out, st->method != RP_PROF_NONE
                                      ? l->p->methods[st->method].display : NULL);
        fputs(",\"owner\":", out);
        json_cstring_or_null(out, st->owner);
        fprintf(out, ",\"owner_tid\":%llu}", (unsigned long long)st->owner_tid);
    }
    fputc(']', out);
}

static void print_json(FILE *out, const struct locks *l)
{
    const struct rp_profile *p = l->p;
    uint64_t all = p->nodes[0].total[RP_PV_WEIGHT];
    fputs("{\"recordings\":[", out);
    for (size_t i = 0; i < p->nsources; i++) {
        if (i)
            fputc(',', out);
        out_json_cstring(out, p->sources[i].recording);
    }
    fprintf(out, "],\"lock_samples\":%llu,\"lock_wait_ns\":%llu,\"monitors\":[",
            (unsigned long long)p->nodes[0].total[RP_PV_SAMPLES], (unsigned long long)all);
    size_t shown = l->top < l->nmons ? l->top : l->nmons;
    for (size_t i = 0; i < shown; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        json_monitor(out, l, &l->mons[i], all);
    }
    fputc(']', out);
    json_stuck(out, l);
    fprintf(out, ",\n\"wall_samples\":%llu,\"parked_samples\":%llu,\"parked_ns\":%llu",
            (unsigned long long)l->wall_samples, (unsigned long long)l->parked.samples,
            (unsigned long long)l->parked.ns);
    json_sites(out, l, &l->parked, "parked");
    fprintf(out, ",\n\"blocked_samples\":%llu,\"blocked_ns\":%llu",
            (unsigned long long)l->blocked.samples, (unsigned long long)l->blocked.ns);
    json_sites(out, l, &l->blocked, "blocked");
    fputs("}\n", out);
}

/* ------------------------------------------------------------------- main -- */

/* Build the wall profile of the samples in state `state` into t (per thread, to
 * count a site's threads), with the lock pass's options; sorted. The reader's
 * problems were reported by the lock pass. */
static struct rp_profile *build_sites(struct locks *l, struct rp_prof_options po,
                                      unsigned state, struct sites *t)
{
    po.event = RP_KIND_WALL;
    po.state_mask = 1u << state;
    po.per_thread = 1;
    struct wall_cb wcb = {t, {NULL, -1, -1}, NULL, 0};
    po.on_sample = on_parked;
    po.on_sample_arg = &wcb;
    po.diag = NULL;
    t->blocked = state == RP_TS_BLOCKED;
    t->tids = &l->tid_number;
    struct rp_profile *w = rp_query_build(&l->q, &po, NULL);
    free(wcb.path);
    t->p = w;
    rp_prof_foreach_stack(w, collect_sites, t);
    sort_p = w;
    if (t->n)
        qsort(t->s, t->n, sizeof *t->s, cmp_sites);
    for (size_t i = 0; i < t->n; i++) {
        struct juc_site *s = &t->s[i];
        if (s->nowners)
            qsort(s->owners, s->nowners, sizeof *s->owners, cmp_owners);
        if (s->nblockers)
            qsort(s->blockers, s->nblockers, sizeof *s->blockers, cmp_owners);
    }
    return w;
}

static int run(struct locks *l, int argc, char **argv)
{
    if (rp_query_inputs(&l->q, argc, argv))
        return 1;
    /* The look-ahead: the waits written in progress (one record stands for each),
     * and the time span when --from/--to is relative to it. */
    rp_query_scan(&l->q, RP_SCAN_WAITS | (rp_query_need_range(&l->q) ? RP_SCAN_RANGE : 0));
    rp_scan_finish(&l->q.sc);
    struct rp_prof_options po = {0};
    po.event = RP_KIND_LOCK;
    rp_query_apply(&l->q, &po);
    po.waiting = rp_scan_wait_keep;
    po.waiting_arg = &l->q.sc;
    struct lock_cb cb = {l, {NULL, -1, 0}};
    po.on_sample = on_lock;
    po.on_sample_arg = &cb;
    l->p = rp_query_build(&l->q, &po, NULL);
    if (l->p->stats.files == l->p->stats.files_unreadable) {
        fprintf(stderr, "ringprof locks: no input could be read\n");
        return 1;
    }
    rank_monitors(l);
    if (l->nstuck)
        qsort(l->stuck, l->nstuck, sizeof *l->stuck, cmp_stuck);

    l->w = build_sites(l, po, RP_TS_PARKED, &l->parked);
    l->wall_samples = kind_samples(l->w, RP_KIND_WALL);
    /* Without lock samples the monitor waits are still in the wall samples, as
     * state blocked: by the code that blocked, without monitor or owner. */
    if (!have_locks(l) && l->wall_samples)
        l->b = build_sites(l, po, RP_TS_BLOCKED, &l->blocked);

    rp_query_problems(&l->q, NULL, "the figures hold");
    if (!have_locks(l))
        fprintf(stderr, "ringprof locks: the inputs have no lock samples; the agent "
                        "records them with lock=DURATION (e.g. lock=10ms)%s\n",
                l->blocked.samples ? "; showing the wall-clock samples in state blocked "
                                     "instead" : "");
    if (l->json) {
        print_json(stdout, l);
    } else {
        print_header(stdout, l);
        print_monitors(stdout, l);
        print_parked(stdout, l);
    }
    if (rp_query_flush_stdout(&l->q))
        return 1;
    if (!have_locks(l) && !l->wall_samples)
        return 1;
    return rp_query_status(&l->q);
}

/* The sites' memory. */
static void sites_free(struct sites *t)
{
    for (size_t i = 0; i < t->n; i++) {
        for (size_t k = 0; k < t->s[i].nowners; k++)
            free(t->s[i].owners[k].name);
        for (size_t k = 0; k < t->s[i].nblockers; k++)
            free(t->s[i].blockers[k].name);
        free(t->s[i].owners);
        free(t->s[i].blockers);
    }
    free(t->s);
    free(t->leaf_site);
    rp_idmap_free(&t->by_methods);
    rp_idmap_free(&t->owner_of);
    rp_idmap_free(&t->blocker_of);
    rp_strtab_free(&t->blocker_names);
}

int rp_cmd_locks(int argc, char **argv)
{
    struct locks l;
    memset(&l, 0, sizeof l);
    l.top = 10;
    l.nstacks = 5;
    l.q.cmd = "locks";
    l.q.usage = usage;
    int rc = parse_args(&l, argc, argv);
    if (!rc)
        rc = run(&l, argc, argv);
    else if (rc == 3)
        rc = 0;
    for (size_t i = 0; i < l.nmons; i++) {
        for (size_t k = 0; k < l.mons[i].nowners; k++)
            free(l.mons[i].owners[k].name);
        free(l.mons[i].owners);
        free(l.mons[i].stacks);
    }
    free(l.mons);
    rp_idmap_free(&l.mon_of);
    rp_idmap_free(&l.tid_number);
    rp_idmap_free(&l.mon_owner_of);
    sites_free(&l.parked);
    sites_free(&l.blocked);
    for (size_t i = 0; i < l.nstuck; i++) {
        free(l.stuck[i].thread);
        free(l.stuck[i].owner);
    }
    free(l.stuck);
    rp_prof_free(l.p);
    rp_prof_free(l.w);
    rp_prof_free(l.b);
    rp_query_free(&l.q);
    return rc;
}
