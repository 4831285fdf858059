/*
 * tools/model/live.c — finding a node of one profile by the path of a node of another
 * (live.h): an open-addressing table of node indexes keyed by a hash of the
 * path, with each candidate compared frame by frame, so a hash collision can
 * never join two different sites.
 */
#include "live.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct rp_path_index {
    const struct rp_profile *p;
    uint32_t *slot;           /* node index, RP_PROF_NONE: empty               */
    size_t mask;
};

static uint64_t hash_step(uint64_t h, const char *s, uint64_t extra)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;   /* FNV-1a */
    return (h ^ extra) * 1099511628211ull;
}

/* The node's identity at one level: a frame by its display and type, a thread
 * by its recording, tid and name. */
static uint64_t node_hash(const struct rp_profile *p, uint32_t n, uint64_t h)
{
    const struct rp_prof_node *nd = &p->nodes[n];
    if (nd->kind == RP_PNODE_THREAD) {
        const struct rp_prof_thread *t = &p->threads[nd->ref];
        h = hash_step(h, p->sources[t->source].recording, t->os_tid);
        return hash_step(h, t->label, 1);
    }
    const struct rp_prof_frame *f = rp_prof_node_frame(p, n);
    return f ? hash_step(h, f->display, (uint64_t)f->type + 2) : hash_step(h, "", 0);
}

static uint64_t path_hash(const struct rp_profile *p, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (; n != 0 && n != RP_PROF_NONE; n = p->nodes[n].parent)
        h = node_hash(p, n, h);
    return h;
}

static int node_same(const struct rp_profile *p, uint32_t a, const struct rp_profile *q,
                     uint32_t b)
{
    const struct rp_prof_node *x = &p->nodes[a], *y = &q->nodes[b];
    if (x->kind != y->kind)
        return 0;
    if (x->kind == RP_PNODE_THREAD) {
        const struct rp_prof_thread *s = &p->threads[x->ref], *t = &q->threads[y->ref];
        return s->os_tid == t->os_tid && !strcmp(s->label, t->label) &&
               !strcmp(p->sources[s->source].recording, q->sources[t->source].recording);
    }
    const struct rp_prof_frame *f = rp_prof_node_frame(p, a), *g = rp_prof_node_frame(q, b);
    return f && g && f->type == g->type && !strcmp(f->display, g->display);
}

static int path_same(const struct rp_profile *p, uint32_t a, const struct rp_profile *q,
                     uint32_t b)
{
    while (a != 0 && b != 0) {
        if (!node_same(p, a, q, b))
            return 0;
        a = p->nodes[a].parent;
        b = q->nodes[b].parent;
    }
    return a == b;   /* both at the root */
}

struct rp_path_index *rp_path_index_new(const struct rp_profile *p, const uint32_t *nodes,
                                        size_t n)
{
    struct rp_path_index *x = rp_xmalloc(sizeof *x);
    size_t cap = 16;
    while (cap < n * 2)
        cap *= 2;
    x->slot = rp_xmalloc(cap * sizeof *x->slot);
    memset(x->slot, 0xff, cap * sizeof *x->slot);
    x->p = p;
    x->mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        if (rp_path_index_find(x, p, nodes[i]) != RP_PROF_NONE)
            continue;   /* listed twice */
        size_t j = path_hash(p, nodes[i]) & x->mask;
        while (x->slot[j] != RP_PROF_NONE)
            j = (j + 1) & x->mask;
        x->slot[j] = nodes[i];
    }
    return x;
}

uint32_t rp_path_index_find(const struct rp_path_index *x, const struct rp_profile *q,
                            uint32_t node)
{
    for (size_t j = path_hash(q, node) & x->mask; x->slot[j] != RP_PROF_NONE;
         j = (j + 1) & x->mask)
        if (path_same(x->p, x->slot[j], q, node))
            return x->slot[j];
    return RP_PROF_NONE;
}

void rp_path_index_free(struct rp_path_index *x)
{
    if (!x)
        return;
    free(x->slot);
    free(x);
}
