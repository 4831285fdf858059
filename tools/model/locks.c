/*
 * tools/model/locks.c — `ringprof locks`' model (locks.h): monitors from the lock
 * samples, sites from the wall samples of one state, ranked.
 *
 * The profile builder calls on_lock and on_parked for each sample a pass keeps;
 * they count what the tree cannot (owners, the longest wait, waits in progress,
 * blocker classes) into arrays found through id maps (idmap.h), so a file's
 * hundreds of thousands of monitors, sites and owners stay O(1) each. After the
 * build, the tree's leaves give each monitor its stacks and each site its
 * samples and threads, and everything is sorted: by wait or wall time, then by
 * count, then by name, so the order never depends on the order of the inputs.
 */
#include "locks.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#include "ringprof/events.h"

#define JUC_LOCKS "java.util.concurrent.locks."
#define LOCK_SUPPORT "java.util.concurrent.locks.LockSupport"

/* Room for element n of *a, doubling from one (rp_xgrow): a file may give
 * hundreds of thousands of monitors and sites an owner, a blocker or a stack
 * each, and lists that started at 16 entries took 420 MiB of the 1.4 GB `locks`
 * needed for 300 000 of each. */
#define GROW(a, cap, n) rp_xgrow((void **)&(a), &(cap), (n), sizeof *(a), 1)

/* --------------------------------------------------------------- monitors -- */

/* The monitor class of a lock sample's leaf: the class frame the profile adds
 * below the stack, or RP_PROF_NONE when the sample named no class. */
static uint32_t leaf_monitor(const struct rp_profile *p, uint32_t leaf)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, leaf);
    return f && f->type == RP_PFRAME_CLASS ? f->method : RP_PROF_NONE;
}

static struct rp_lock_monitor *monitor_of(struct rp_locks *l, uint32_t method)
{
    uint32_t i = rp_idmap_put(&l->mon_of, method, (uint32_t)l->nmons);
    if (i < l->nmons)
        return &l->mons[i];
    GROW(l->mons, l->cap_mons, l->nmons);
    struct rp_lock_monitor *m = &l->mons[l->nmons++];
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
                      struct rp_lock_owner **owners, size_t *n, size_t *cap,
                      const struct rp_thread_info *ti, uint64_t ns)
{
    uint64_t tid = ti ? ti->os_tid : 0;
    const char *name = ti ? (ti->name ? ti->name : "") : NULL;
    uint64_t key = (uint64_t)holder << 32 | owner_number(tids, ti);
    uint32_t i = rp_idmap_put(of, key, (uint32_t)*n);
    if (i == *n) {
        GROW(*owners, *cap, *n);
        struct rp_lock_owner *o = &(*owners)[(*n)++];
        memset(o, 0, sizeof *o);
        o->os_tid = tid;
        o->name = name ? rp_xstrdup(name) : NULL;
    }
    struct rp_lock_owner *o = &(*owners)[i];
    if (name && strcmp(o->name, name)) {   /* renamed: the newest wins */
        free(o->name);
        o->name = rp_xstrdup(name);
    }
    o->waits++;
    o->wait_ns += ns;
}


/* A wait still in progress: its thread, owner, monitor class and wait so far. */
static void stuck_add(struct rp_locks *l, const struct rp_thread_info *ti,
                      const struct rp_thread_info *owner, uint32_t method, uint64_t ns)
{
    GROW(l->stuck, l->cap_stuck, l->nstuck);
    struct rp_lock_stuck *st = &l->stuck[l->nstuck++];
    *st = (struct rp_lock_stuck){rp_xstrdup(ti && ti->name ? ti->name : ""),
                                 owner ? rp_xstrdup(owner->name ? owner->name : "") : NULL,
                                 ti ? ti->os_tid : 0, owner ? owner->os_tid : 0, ns,
                                 method};
    l->stuck_ns += ns;
}

/* on_sample of the lock profile: count, longest wait, owner; unfinished waits. */
static void on_lock(void *arg, const struct rp_profile *p, uint32_t leaf,
                    const struct rp_event *ev, const struct rp_kind_info *kind)
{
    (void)kind;   /* the stream's kind says more */
    struct rp_locks *l = arg;
    struct rp_stream *st = rp_prof_stream(p);
    const struct rp_stream_kind *k = rp_stream_kind(st, ev->u.sample.kind);
    struct rp_lock_monitor *m = monitor_of(l, leaf_monitor(p, leaf));
    uint64_t ns = ev->u.sample.weight;
    m->waits++;
    m->wait_ns += ns;
    if (ns > m->max_ns)
        m->max_ns = ns;
    const struct rp_thread_info *owner = rp_stream_x_thread(st, k, ev, RP_SX_OWNER);
    owner_add(&l->tid_number, &l->mon_owner_of, (size_t)(m - l->mons), &m->owners,
              &m->nowners, &m->cap_owners, owner, ns);
    if (k->kind == RP_SK_LOCK_WAITING) {
        m->unfinished++;
        stuck_add(l, rp_stream_thread(st, ev->u.sample.thread), owner, m->method, ns);
    }
}

static const struct rp_profile *sort_p;

static int cmp_monitors(const void *a, const void *b)
{
    const struct rp_lock_monitor *x = a, *y = b;
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
    const struct rp_lock_owner *x = a, *y = b;
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
    struct rp_locks *l = arg;
    struct rp_lock_monitor *m = monitor_of(l, leaf_monitor(p, leaf));
    GROW(m->stacks, m->cap_stacks, m->nstacks);
    m->stacks[m->nstacks++] = leaf;
    return 0;
}

/* After the build: each monitor's stacks from the tree, everything sorted. */
static void rank_monitors(struct rp_locks *l)
{
    rp_prof_foreach_stack(l->p, collect_stack, l);
    sort_p = l->p;
    if (l->nmons)
        qsort(l->mons, l->nmons, sizeof *l->mons, cmp_monitors);
    for (size_t i = 0; i < l->nmons; i++) {
        struct rp_lock_monitor *m = &l->mons[i];
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
static size_t site_of(struct rp_lock_sites *t, const struct rp_profile *p, uint32_t leaf,
                      const uint32_t *path, size_t depth)
{
    if (leaf < t->cap_leaf && t->leaf_site[leaf])
        return t->leaf_site[leaf] - 1;
    uint32_t site, via;
    (t->blocked ? blocked_site : parked_site)(p, path, depth, &site, &via);
    uint32_t i = rp_idmap_put(&t->by_methods, (uint64_t)site << 32 | via, (uint32_t)t->n);
    if (i == t->n) {
        GROW(t->s, t->cap, t->n);
        struct rp_lock_site *s = &t->s[t->n++];
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
static void blocker_add(struct rp_lock_sites *t, size_t si, const char *name, uint64_t ns)
{
    struct rp_lock_site *s = &t->s[si];
    uint64_t number = name ? (uint64_t)rp_strtab_cstr(&t->blocker_names, name) + 1 : 0;
    uint32_t i = rp_idmap_put(&t->blocker_of, (uint64_t)si << 32 | number,
                              (uint32_t)s->nblockers);
    if (i == s->nblockers) {
        GROW(s->blockers, s->cap_blockers, s->nblockers);
        struct rp_lock_owner *b = &s->blockers[s->nblockers++];
        memset(b, 0, sizeof *b);
        b->name = name ? rp_xstrdup(name) : NULL;
    }
    struct rp_lock_owner *b = &s->blockers[i];
    b->waits++;
    b->wait_ns += ns;
}

/* on_sample of the parked (or blocked) profile: the sample's blocker class and
 * owner, for its site. A kind written before the two extras existed has
 * neither: none, unknown; so has a blocked sample. */
static void on_parked(void *arg, const struct rp_profile *p, uint32_t leaf,
                      const struct rp_event *ev, const struct rp_kind_info *kind)
{
    (void)kind;   /* the stream's kind says more */
    struct rp_lock_sites *t = arg;
    struct rp_stream *st = rp_prof_stream(p);
    const struct rp_stream_kind *k = rp_stream_kind(st, ev->u.sample.kind);
    size_t depth = 0;
    if (leaf >= t->cap_leaf || !t->leaf_site[leaf]) {
        while ((depth = rp_prof_path(p, leaf, t->path, t->cap_path)) > t->cap_path) {
            t->cap_path = depth * 2;
            t->path = rp_xrealloc(t->path, t->cap_path * sizeof *t->path);
        }
    }
    size_t i = site_of(t, p, leaf, t->path, depth);   /* may move the sites */
    uint64_t ns = ev->u.sample.weight;
    /* The class as the profile shows class names (rp_prof_chunk_class). */
    blocker_add(t, i, rp_prof_chunk_class(p, rp_sx_id(k, ev, RP_SX_BLOCKER_CLASS)), ns);
    struct rp_lock_site *s = &t->s[i];
    owner_add(t->tids, &t->owner_of, i, &s->owners, &s->nowners, &s->cap_owners,
              rp_stream_x_thread(st, k, ev, RP_SX_BLOCKER_OWNER), ns);
}

static int collect_sites(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                         size_t depth, void *arg)
{
    struct rp_lock_sites *t = arg;
    /* Per-thread profile: path[0] is the thread node. */
    uint32_t thread = p->nodes[path[0]].kind == RP_PNODE_THREAD ? p->nodes[path[0]].ref
                                                                 : RP_PROF_NONE;
    size_t i = site_of(t, p, leaf, path, depth);
    struct rp_lock_site *s = &t->s[i];
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
    const struct rp_lock_site *x = a, *y = b;
    if (x->wall_ns != y->wall_ns)
        return x->wall_ns > y->wall_ns ? -1 : 1;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    const char *sx = x->site != RP_PROF_NONE ? sort_p->methods[x->site].display : "";
    const char *sy = y->site != RP_PROF_NONE ? sort_p->methods[y->site].display : "";
    return strcmp(sx, sy);
}

/* ---------------------------------------------------------------- figures -- */

/* The samples of kind `kind` in profile p, before filters. */
static uint64_t kind_samples(const struct rp_profile *p, const char *kind)
{
    for (size_t k = 0; k < p->nkinds; k++)
        if (!strcmp(p->kinds[k].name, kind))
            return p->kinds[k].samples;
    return 0;
}

int rp_locks_have_locks(const struct rp_locks *l)
{
    return kind_samples(l->p, RP_KIND_LOCK) || kind_samples(l->p, RP_KIND_LOCK_WAITING);
}

static int cmp_stuck(const void *a, const void *b)
{
    const struct rp_lock_stuck *x = a, *y = b;
    if (x->waited_ns != y->waited_ns)
        return x->waited_ns > y->waited_ns ? -1 : 1;
    int c = strcmp(x->thread, y->thread);
    return c ? c : (x->tid < y->tid ? -1 : x->tid > y->tid);
}

/* ----------------------------------------------------------------- passes -- */

void rp_locks_lock_pass(struct rp_locks *l, struct rp_prof_options *po, struct rp_scan *sc)
{
    po->waiting = rp_scan_wait_keep;
    po->waiting_arg = sc;
    po->on_sample = on_lock;
    po->on_sample_arg = l;
}

void rp_locks_rank(struct rp_locks *l)
{
    rank_monitors(l);
    if (l->nstuck)
        qsort(l->stuck, l->nstuck, sizeof *l->stuck, cmp_stuck);
}

static struct rp_lock_sites *sites_of(struct rp_locks *l, unsigned state)
{
    return state == RP_TS_BLOCKED ? &l->blocked : &l->parked;
}

void rp_locks_sites_pass(struct rp_locks *l, struct rp_prof_options *po, unsigned state)
{
    struct rp_lock_sites *t = sites_of(l, state);
    po->event = RP_KIND_WALL;
    po->state_mask = 1u << state;
    po->per_thread = 1;   /* to count a site's threads */
    po->on_sample = on_parked;
    po->on_sample_arg = t;
    po->diag = NULL;
    t->blocked = state == RP_TS_BLOCKED;
    t->tids = &l->tid_number;
}

void rp_locks_sites_rank(struct rp_locks *l, unsigned state, struct rp_profile *w)
{
    struct rp_lock_sites *t = sites_of(l, state);
    *(state == RP_TS_BLOCKED ? &l->b : &l->w) = w;
    free(t->path);
    t->path = NULL;
    t->cap_path = 0;
    t->p = w;
    rp_prof_foreach_stack(w, collect_sites, t);
    sort_p = w;
    if (t->n)
        qsort(t->s, t->n, sizeof *t->s, cmp_sites);
    for (size_t i = 0; i < t->n; i++) {
        struct rp_lock_site *s = &t->s[i];
        if (s->nowners)
            qsort(s->owners, s->nowners, sizeof *s->owners, cmp_owners);
        if (s->nblockers)
            qsort(s->blockers, s->nblockers, sizeof *s->blockers, cmp_owners);
    }
    if (state == RP_TS_PARKED)
        l->wall_samples = kind_samples(w, RP_KIND_WALL);
}

/* ----------------------------------------------------------------- memory -- */

static void owners_free(struct rp_lock_owner *o, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(o[k].name);
    free(o);
}

static void sites_free(struct rp_lock_sites *t)
{
    for (size_t i = 0; i < t->n; i++) {
        owners_free(t->s[i].owners, t->s[i].nowners);
        owners_free(t->s[i].blockers, t->s[i].nblockers);
    }
    free(t->s);
    free(t->leaf_site);
    free(t->path);
    rp_idmap_free(&t->by_methods);
    rp_idmap_free(&t->owner_of);
    rp_idmap_free(&t->blocker_of);
    rp_strtab_free(&t->blocker_names);
}

void rp_locks_free(struct rp_locks *l)
{
    for (size_t i = 0; i < l->nmons; i++) {
        owners_free(l->mons[i].owners, l->mons[i].nowners);
        free(l->mons[i].stacks);
    }
    free(l->mons);
    rp_idmap_free(&l->mon_of);
    rp_idmap_free(&l->tid_number);
    rp_idmap_free(&l->mon_owner_of);
    sites_free(&l->parked);
    sites_free(&l->blocked);
    for (size_t i = 0; i < l->nstuck; i++) {
        free(l->stuck[i].thread);
        free(l->stuck[i].owner);
    }
    free(l->stuck);
    rp_prof_free(l->p);
    rp_prof_free(l->w);
    rp_prof_free(l->b);
    memset(l, 0, sizeof *l);
}
