/*
 * tools/model/diff.c — joining two profiles for `ringprof diff` (diff.h).
 *
 * Rows: each profile's per-method figures, with methods keyed by display name
 * (rp_prof_method_rows_keyed), so methods match by what the user reads, and
 * overloads or one symbol in two libraries are one row, counted once a stack.
 * Tree: each profile is walked in pre-order with a map from its nodes to merged nodes; a node's merged node is
 * the child of its parent's merged node with the same name and frame type,
 * found in an open-addressing table of (parent, name, type). Then totals come
 * from selfs in one backward pass (a merged node is created after its parent)
 * and children are sorted.
 */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static uint64_t kid_hash(uint32_t parent, uint32_t name, int type)
{
    uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;
    return (h ^ (h >> 29) ^ (uint64_t)(unsigned)type) * 0xbf58476d1ce4e5b9ull;
}

static void kids_insert(struct rp_diff *d, uint32_t node)
{
    const struct rp_diff_node *n = &d->nodes[node];
    size_t j = kid_hash(n->parent, n->name, n->type) & d->kid_mask;
    while (d->kid_slot[j] != RP_PROF_NONE)
        j = (j + 1) & d->kid_mask;
    d->kid_slot[j] = node;
}

static void kids_grow(struct rp_diff *d)
{
    if (d->kid_slot && (d->nnodes + 1) * 2 <= d->kid_mask)
        return;
    size_t cap = d->kid_slot ? (d->kid_mask + 1) * 2 : 1024;
    free(d->kid_slot);
    d->kid_slot = rp_xmalloc(cap * sizeof *d->kid_slot);
    memset(d->kid_slot, 0xff, cap * sizeof *d->kid_slot);
    d->kid_mask = cap - 1;
    for (size_t i = 1; i < d->nnodes; i++)
        kids_insert(d, (uint32_t)i);
}

static uint32_t node_new(struct rp_diff *d, uint32_t parent, uint32_t name, int type)
{
    if (d->nnodes % 1024 == 0)
        d->nodes = rp_xreallocarray(d->nodes, d->nnodes + 1024, sizeof *d->nodes);
    d->nodes[d->nnodes] = (struct rp_diff_node){.name = name, .type = type,
        .parent = parent, .first_child = RP_PROF_NONE, .next_sibling = RP_PROF_NONE};
    return (uint32_t)d->nnodes++;
}

/* The child of `parent` named `name` with frame type `type`, made if new. */
static uint32_t node_child(struct rp_diff *d, uint32_t parent, uint32_t name, int type)
{
    kids_grow(d);
    size_t j = kid_hash(parent, name, type) & d->kid_mask;
    for (; d->kid_slot[j] != RP_PROF_NONE; j = (j + 1) & d->kid_mask) {
        const struct rp_diff_node *n = &d->nodes[d->kid_slot[j]];
        if (n->parent == parent && n->name == name && n->type == type)
            return d->kid_slot[j];
    }
    uint32_t c = node_new(d, parent, name, type);
    d->kid_slot[j] = c;
    return c;
}

struct add_walk {
    struct rp_diff *d;
    int side;
    uint32_t *map;               /* profile node -> merged node                 */
};

static int add_node(const struct rp_profile *p, uint32_t node, size_t depth, void *arg)
{
    struct add_walk *w = arg;
    const struct rp_prof_node *pn = &p->nodes[node];
    if (depth == 0) {
        w->map[node] = 0;
    } else {
        const struct rp_prof_frame *f = rp_prof_node_frame(p, node);
        uint32_t name = rp_strtab_cstr(&w->d->names, rp_prof_node_name(p, node));
        w->map[node] = node_child(w->d, w->map[pn->parent], name, f ? f->type : -2);
    }
    w->d->nodes[w->map[node]].self[w->side] += pn->self[RP_PV_WEIGHT];
    return 0;
}

/* Grow the rows to hold one per name the table has. */
static void rows_grow(struct rp_diff *d)
{
    size_t n = d->names.n;
    if (n <= d->nrows)
        return;
    d->rows = rp_xreallocarray(d->rows, n, sizeof *d->rows);
    memset(d->rows + d->nrows, 0, (n - d->nrows) * sizeof *d->rows);
    for (size_t k = d->nrows; k < n; k++)
        d->rows[k].name = (uint32_t)k;
    d->nrows = n;
}

/* The per-method figures of side `side`, by display name: methods that display
 * alike are one row, each sample in its total once. */
static void add_rows(struct rp_diff *d, int side, const struct rp_profile *p)
{
    uint32_t *key = rp_xmalloc((p->nmethods + 1) * sizeof *key);
    for (size_t i = 0; i < p->nmethods; i++)
        key[i] = rp_strtab_cstr(&d->names, p->methods[i].display);
    rows_grow(d);
    struct rp_prof_method_row *mr = rp_prof_method_rows_keyed(p, key, d->nrows);
    for (size_t i = 0; i < d->nrows; i++) {
        d->rows[i].self[side] += mr[i].self[RP_PV_WEIGHT];
        d->rows[i].total[side] += mr[i].total[RP_PV_WEIGHT];
    }
    free(mr);
    free(key);
}

static const struct rp_diff *sort_d;

static int cmp_kids(const void *a, const void *b)
{
    const struct rp_diff_node *x = &sort_d->nodes[*(const uint32_t *)a];
    const struct rp_diff_node *y = &sort_d->nodes[*(const uint32_t *)b];
    for (int s = 1; s >= 0; s--)
        if (x->total[s] != y->total[s])
            return x->total[s] > y->total[s] ? -1 : 1;
    int c = strcmp(sort_d->names.s[x->name], sort_d->names.s[y->name]);
    if (c)
        return c;
    return x->type < y->type ? -1 : x->type > y->type;
}

/* Totals from selfs, then each node's children linked in sorted order. */
static void finish_tree(struct rp_diff *d)
{
    for (size_t i = 0; i < d->nnodes; i++)
        memcpy(d->nodes[i].total, d->nodes[i].self, sizeof d->nodes[i].total);
    for (size_t i = d->nnodes; i-- > 1;)
        for (int s = 0; s < 2; s++)
            d->nodes[d->nodes[i].parent].total[s] += d->nodes[i].total[s];
    uint32_t *order = rp_xmalloc((d->nnodes ? d->nnodes : 1) * sizeof *order);
    for (size_t i = 0; i < d->nnodes; i++)
        order[i] = (uint32_t)i;
    sort_d = d;
    /* Sorted as siblings, then linked from the last: each parent's list comes out
     * in order. Nodes of one parent compare among themselves only through the
     * keys, so one sort of all nodes orders every sibling list. */
    qsort(order + 1, d->nnodes ? d->nnodes - 1 : 0, sizeof *order, cmp_kids);
    for (size_t i = d->nnodes; i-- > 1;) {
        struct rp_diff_node *n = &d->nodes[order[i]];
        n->next_sibling = d->nodes[n->parent].first_child;
        d->nodes[n->parent].first_child = order[i];
    }
    free(order);
}

void rp_diff_build(struct rp_diff *d, const struct rp_profile *base,
                   const struct rp_profile *newp, int normalize)
{
    memset(d, 0, sizeof *d);
    d->p[0] = base;
    d->p[1] = newp;
    rp_strtab_init(&d->names);
    node_new(d, RP_PROF_NONE, rp_strtab_cstr(&d->names, ""), -1);
    for (int s = 0; s < 2; s++) {
        const struct rp_profile *p = d->p[s];
        d->whole[s] = p->nodes[0].total[RP_PV_WEIGHT];
        struct add_walk w = {d, s, rp_xmalloc(p->nnodes * sizeof *w.map)};
        rp_prof_walk(p, 0, add_node, &w);
        free(w.map);
        add_rows(d, s, p);
    }
    d->scale = normalize && d->whole[0] ? (double)d->whole[1] / (double)d->whole[0] : 1.0;
    finish_tree(d);
}

double rp_diff_base(const struct rp_diff *d, uint64_t w)
{
    return (double)w * d->scale;
}

size_t rp_diff_path(const struct rp_diff *d, uint32_t n, uint32_t *path, size_t cap)
{
    size_t len = 0;
    for (uint32_t x = n; x != 0 && x != RP_PROF_NONE; x = d->nodes[x].parent)
        len++;
    size_t i = len;
    for (uint32_t x = n; x != 0 && x != RP_PROF_NONE; x = d->nodes[x].parent)
        if (--i < cap)
            path[i] = x;
    return len;
}

void rp_diff_free(struct rp_diff *d)
{
    rp_strtab_free(&d->names);
    free(d->rows);
    free(d->nodes);
    free(d->kid_slot);
    memset(d, 0, sizeof *d);
}
