/*
 * tools/model/profile_tree.c — the calling context tree of a profile (profile.h):
 * its nodes, the child links (parent, frame) -> node in one open-addressing
 * table with the keys inline (one cache line per look-up), the totals and the
 * sibling order rp_prof_finish gives it, the walks over it, and freeing.
 *
 * Nodes are created after their parent, so parent < child and the totals come
 * out of one backward pass. Sibling order is total weight, then samples,
 * descending; then name, frame type and index, so no output depends on hash
 * order.
 */
#include "duration.h"
#include "profile_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/hash.h"
#include "xalloc.h"

/* ----------------------------------------------------------------- nodes -- */

static uint64_t kid_hash(uint32_t parent, uint32_t ref)
{
    return rp_mix64((uint64_t)parent << 32 | ref);
}

static void kids_rehash(struct rp_prof_build *b)
{
    size_t ocap = b->kids ? b->kids_mask + 1 : 0, cap = ocap ? ocap * 2 : 4096;
    struct kid_entry *old = b->kids;
    b->kids = rp_xrealloc(NULL, cap * sizeof *b->kids);
    memset(b->kids, 0xff, cap * sizeof *b->kids);
    b->kids_mask = cap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].parent == RP_PROF_NONE)
            continue;
        size_t j = kid_hash(old[i].parent, old[i].ref) & b->kids_mask;
        while (b->kids[j].parent != RP_PROF_NONE)
            j = (j + 1) & b->kids_mask;
        b->kids[j] = old[i];
    }
    free(old);
}

void prof_kids_grow(struct rp_prof_build *b)
{
    if (!b->kids || (b->kids_used + 1) * 2 > b->kids_mask)
        kids_rehash(b);
}

uint32_t prof_node_new(struct rp_profile *p, uint32_t parent, uint16_t kind,
                         uint32_t ref)
{
    struct rp_prof_build *b = p->b;
    if (p->nnodes >= RP_PROF_NONE - 2) {
        fputs("ringprof: convert: more than 4 billion call paths\n", stderr);
        exit(1);
    }
    rp_xgrow((void **)&p->nodes, &b->cap_nodes, p->nnodes, sizeof *p->nodes, 64);
    uint32_t i = (uint32_t)p->nnodes++;
    struct rp_prof_node *n = &p->nodes[i];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->kind = kind;
    n->ref = ref;
    n->first_child = RP_PROF_NONE;
    n->next_sibling = RP_PROF_NONE;
    if (parent != RP_PROF_NONE) {
        struct rp_prof_node *pn = &p->nodes[parent];
        n->depth = pn->depth == UINT16_MAX ? UINT16_MAX : (uint16_t)(pn->depth + 1);
        n->next_sibling = pn->first_child;
        pn->first_child = i;
        uint32_t key = kind == RP_PNODE_THREAD ? ref | KID_THREAD : ref;
        if ((b->kids_used + 1) * 2 > b->kids_mask)   /* b->kids exists (rp_prof_new) */
            kids_rehash(b);
        size_t j = kid_hash(parent, key) & b->kids_mask;
        while (b->kids[j].parent != RP_PROF_NONE)
            j = (j + 1) & b->kids_mask;
        b->kids[j] = (struct kid_entry){parent, key, i};
        b->kids_used++;
    }
    return i;
}

uint32_t prof_node_child(struct rp_profile *p, uint32_t parent, uint32_t frame)
{
    struct rp_prof_build *b = p->b;
    size_t j = kid_hash(parent, frame) & b->kids_mask;
    for (; b->kids[j].parent != RP_PROF_NONE; j = (j + 1) & b->kids_mask)
        if (b->kids[j].parent == parent && b->kids[j].ref == frame)
            return b->kids[j].node;
    return prof_node_new(p, parent, RP_PNODE_FRAME, frame);
}

const char *rp_prof_node_name(const struct rp_profile *p, uint32_t node)
{
    const struct rp_prof_node *n = &p->nodes[node];
    if (n->kind == RP_PNODE_FRAME)
        return p->frames[n->ref].display;
    if (n->kind == RP_PNODE_THREAD)
        return p->threads[n->ref].label;
    return "";
}

const struct rp_prof_frame *rp_prof_node_frame(const struct rp_profile *p,
                                               uint32_t node)
{
    const struct rp_prof_node *n = &p->nodes[node];
    return n->kind == RP_PNODE_FRAME ? &p->frames[n->ref] : NULL;
}

static const struct rp_profile *sort_p;   /* the profile cmp_kids orders */

static int cmp_kids(const void *a, const void *b)
{
    const struct rp_prof_node *x = &sort_p->nodes[*(const uint32_t *)a];
    const struct rp_prof_node *y = &sort_p->nodes[*(const uint32_t *)b];
    for (int v = RP_PV_WEIGHT; v >= RP_PV_SAMPLES; v--)
        if (x->total[v] != y->total[v])
            return x->total[v] > y->total[v] ? -1 : 1;
    int c = strcmp(rp_prof_node_name(sort_p, *(const uint32_t *)a),
                   rp_prof_node_name(sort_p, *(const uint32_t *)b));
    if (c)
        return c;
    const struct rp_prof_frame *fx = rp_prof_node_frame(sort_p, *(const uint32_t *)a);
    const struct rp_prof_frame *fy = rp_prof_node_frame(sort_p, *(const uint32_t *)b);
    if (fx && fy && fx->type != fy->type)
        return fx->type < fy->type ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void rp_prof_finish(struct rp_profile *p)
{
    struct rp_prof_build *b = p->b;
    if (b->finished)
        return;
    if (!p->kind[0] && b->event)   /* named, but never found */
        p->kind = p->vtypes[RP_PV_WEIGHT].type = prof_str(p, b->event);
    for (size_t i = 0; i < p->nnodes; i++)
        memcpy(p->nodes[i].total, p->nodes[i].self, sizeof p->nodes[i].total);
    for (size_t i = p->nnodes; i-- > 1;)
        for (int v = 0; v < RP_PV_MAX; v++)
            p->nodes[p->nodes[i].parent].total[v] += p->nodes[i].total[v];
    uint32_t *kids = NULL;
    size_t cap = 0;
    sort_p = p;
    for (size_t i = 0; i < p->nnodes; i++) {
        size_t k = 0;
        for (uint32_t c = p->nodes[i].first_child; c != RP_PROF_NONE;
             c = p->nodes[c].next_sibling) {
            rp_xgrow((void **)&kids, &cap, k, sizeof *kids, 64);
            kids[k++] = c;
        }
        if (k < 2)
            continue;
        qsort(kids, k, sizeof *kids, cmp_kids);
        p->nodes[i].first_child = kids[0];
        for (size_t j = 0; j + 1 < k; j++)
            p->nodes[kids[j]].next_sibling = kids[j + 1];
        p->nodes[kids[k - 1]].next_sibling = RP_PROF_NONE;
    }
    free(kids);
    /* Keep the strings (the arena); drop the tables and per-chunk maps. */
    free(b->strs.slot);
    free(b->str_list);
    free(b->shown);
    free(b->meths.slot);
    free(b->frms.slot);
    free(b->thrs.slot);
    free(b->kids);
    free(b->stk);
    free(b->ffilt);
    free(b->frame_map);
    free(b->meth_map[0]);
    free(b->meth_map[1]);
    free(b->thr_map);
    free(b->vt_tab);
    free(b->kind_map);
    free(b->leaf_arr);
    free(b->acc);
    free(b->leaf_tab);
    free(b->pathbuf);
    free(b->kind_of_str);
    free(b->event);
    rp_stream_free(&b->st);
    /* The strings (the arena) live on with the profile. */
    struct sblock *arena = b->arena;
    memset(b, 0, sizeof *b);
    b->arena = arena;
    b->finished = 1;
}

void rp_prof_free(struct rp_profile *p)
{
    if (!p)
        return;
    rp_prof_finish(p);   /* frees the building state if not done yet */
    for (struct sblock *s = p->b->arena, *next; s; s = next) {
        next = s->next;
        free(s);
    }
    free(p->b);
    free(p->nodes);
    free(p->frames);
    free(p->methods);
    free(p->threads);
    free(p->sources);
    free(p->kinds);
    free(p);
}

size_t rp_prof_path(const struct rp_profile *p, uint32_t node, uint32_t *path, size_t cap)
{
    size_t len = 0;
    for (uint32_t n = node; n != 0 && n != RP_PROF_NONE; n = p->nodes[n].parent)
        len++;
    size_t i = len;
    for (uint32_t n = node; n != 0 && n != RP_PROF_NONE; n = p->nodes[n].parent) {
        i--;
        if (i < cap)
            path[i] = n;
    }
    return len;
}

int rp_prof_walk(const struct rp_profile *p, uint32_t start, rp_prof_visit_fn fn,
                 void *arg)
{
    uint32_t n = start;
    size_t depth = 0;
    for (;;) {
        int rc = fn(p, n, depth, arg);
        if (rc && rc != 1)
            return rc;
        if (rc == 0 && p->nodes[n].first_child != RP_PROF_NONE) {
            n = p->nodes[n].first_child;
            depth++;
            continue;
        }
        while (n != start && p->nodes[n].next_sibling == RP_PROF_NONE) {
            n = p->nodes[n].parent;
            depth--;
        }
        if (n == start)
            return 0;
        n = p->nodes[n].next_sibling;
    }
}

struct stack_iter {
    rp_prof_stack_fn fn;
    void *arg;
    uint32_t *path;
    size_t cap;
};

static int stack_visit(const struct rp_profile *p, uint32_t node, size_t depth,
                       void *arg)
{
    struct stack_iter *it = arg;
    if (depth == 0)
        return 0;
    if (depth > it->cap) {
        it->cap = depth * 2;
        it->path = rp_xrealloc(it->path, it->cap * sizeof *it->path);
    }
    it->path[depth - 1] = node;
    if (p->nodes[node].self[RP_PV_SAMPLES] == 0)
        return 0;
    int rc = it->fn(p, node, it->path, depth, it->arg);
    return rc == 1 ? 2 : rc;   /* 1 would mean "skip children" to the walk */
}

int rp_prof_foreach_stack(const struct rp_profile *p, rp_prof_stack_fn fn, void *arg)
{
    struct stack_iter it = {fn, arg, NULL, 0};
    int rc = rp_prof_walk(p, 0, stack_visit, &it);
    free(it.path);
    return rc == 2 ? 1 : rc;
}

const char *rp_prof_fmt_time(const struct rp_profile *p, uint64_t weight, char *buf,
                             size_t cap)
{
    if (p->ns_per_unit <= 0) {
        if (cap)
            buf[0] = 0;
        return buf;
    }
    return rp_fmt_duration((double)weight * p->ns_per_unit, buf, cap);
}

const char *rp_prof_frame_suffix(int type)
{
    switch (type) {
    case RP_FRAME_JIT:         return "_[j]";
    case RP_FRAME_INLINED:     return "_[i]";
    case RP_FRAME_INTERPRETED: return "_[0]";
    case RP_FRAME_KERNEL:      return "_[k]";
    default:                   return "";
    }
}

/* ------------------------------------------------------ method rows -- */

uint32_t rp_prof_node_method(const struct rp_profile *p, uint32_t node)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, node);
    return f ? f->method : RP_PROF_NONE;
}

void rp_prof_walk2(const struct rp_profile *p, uint32_t start, rp_prof_node_fn enter,
               rp_prof_node_fn leave, void *arg)
{
    uint32_t n = start;
    enter(p, n, arg);
    for (;;) {
        if (p->nodes[n].first_child != RP_PROF_NONE) {
            n = p->nodes[n].first_child;
            enter(p, n, arg);
            continue;
        }
        leave(p, n, arg);
        while (n != start && p->nodes[n].next_sibling == RP_PROF_NONE) {
            n = p->nodes[n].parent;
            leave(p, n, arg);
        }
        if (n == start)
            return;
        n = p->nodes[n].next_sibling;
        enter(p, n, arg);
    }
}

struct mrows {
    struct rp_prof_method_row *rows;
    uint32_t *onpath;          /* per row: occurrences on the current path    */
    const uint32_t *key;       /* method -> row; NULL: the method's own       */
};

/* The row of a node's method, RP_PROF_NONE for root and thread nodes. */
static uint32_t row_of(const struct mrows *m, const struct rp_profile *p, uint32_t node)
{
    uint32_t meth = rp_prof_node_method(p, node);
    return meth == RP_PROF_NONE || !m->key ? meth : m->key[meth];
}

static void rows_enter(const struct rp_profile *p, uint32_t node, void *arg)
{
    struct mrows *m = arg;
    uint32_t row = row_of(m, p, node);
    if (row == RP_PROF_NONE)
        return;
    struct rp_prof_method_row *r = &m->rows[row];
    const struct rp_prof_node *n = &p->nodes[node];
    for (int v = 0; v < RP_PV_MAX; v++)
        r->self[v] += n->self[v];
    /* An allocated class is the leaf below the allocating frame: what it holds is
     * also the allocating method's self. */
    uint32_t caller = row_of(m, p, n->parent);
    if (p->frames[n->ref].type == RP_PFRAME_CLASS && caller != RP_PROF_NONE)
        for (int v = 0; v < RP_PV_MAX; v++)
            m->rows[caller].self[v] += n->self[v];
    if (m->onpath[row]++ == 0)   /* outermost: its total holds every sample once */
        for (int v = 0; v < RP_PV_MAX; v++)
            r->total[v] += n->total[v];
}

static void rows_leave(const struct rp_profile *p, uint32_t node, void *arg)
{
    struct mrows *m = arg;
    uint32_t row = row_of(m, p, node);
    if (row != RP_PROF_NONE)
        m->onpath[row]--;
}

struct rp_prof_method_row *rp_prof_method_rows_keyed(const struct rp_profile *p,
                                             const uint32_t *key, size_t nkeys)
{
    size_t n = key ? nkeys : p->nmethods;
    struct mrows m = {.key = key};
    m.rows = rp_xmalloc((n + 1) * sizeof *m.rows);
    memset(m.rows, 0, (n + 1) * sizeof *m.rows);
    m.onpath = rp_xmalloc((n + 1) * sizeof *m.onpath);
    memset(m.onpath, 0, (n + 1) * sizeof *m.onpath);
    for (size_t i = 0; i < n; i++)
        m.rows[i].method = (uint32_t)i;
    rp_prof_walk2(p, 0, rows_enter, rows_leave, &m);
    free(m.onpath);
    return m.rows;
}

struct rp_prof_method_row *rp_prof_method_rows(const struct rp_profile *p)
{
    return rp_prof_method_rows_keyed(p, NULL, 0);
}
