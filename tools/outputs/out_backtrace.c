/*
 * tools/outputs/out_backtrace.c — the `backtrace` format: method back-trace trees.
 *
 * For each chosen method M (the top --top methods by self weight, or every method
 * whose name matches --method), a tree whose root is M and whose children are M's
 * callers, their callers below them, and so on to the thread entry points (and, in
 * per-thread mode, the thread). The root line carries M's own figures, the same as
 * the flat table: self (samples with M as the leaf, or M just above an allocated
 * class's leaf) and total (samples with M
 * anywhere on the stack, each counted once). A caller line c1 <- c2 <- ... carries
 * the part of those figures whose stacks reach M through exactly that chain of
 * callers, taken from M's outermost occurrence in the stack (so a recursive M is
 * counted once per stack, through the callers of its first call): total = the
 * samples with M on the stack, self = those of them in which M itself was running
 * (M is the leaf, possibly through recursion). The children of a line therefore add
 * up to its total, less the samples whose chain ends there (a thread entry point).
 */
#include <stdlib.h>
#include <string.h>

#include "legend.h"
#include "out_common.h"
#include "ringprof/hash.h"

#define BT_THREAD 0x80000000u

struct bt_node {
    uint32_t key, parent, first_child, next_sibling;
    uint64_t total[RP_PV_MAX], self[RP_PV_MAX];
};

struct bt {
    const struct rp_profile *p;
    uint32_t target;                  /* the method */
    struct bt_node *n; size_t nn, cap;
    uint32_t *slot; size_t mask, used;
    uint32_t *onpath;                 /* depth of M occurrences on the walk's path */
    uint32_t occ_leaf;                /* trie node of the open outermost occurrence */
    uint64_t occ_self[RP_PV_MAX];     /* self of M nodes inside that occurrence */
};

static uint64_t bt_hash(uint32_t parent, uint32_t key)
{
    return rp_mix64((uint64_t)parent << 32 | key);
}

static uint32_t bt_new(struct bt *t, uint32_t parent, uint32_t key)
{
    rp_xgrow((void **)&t->n, &t->cap, t->nn, sizeof *t->n, 64);
    struct bt_node *n = &t->n[t->nn];
    memset(n, 0, sizeof *n);
    n->key = key;
    n->parent = parent;
    n->first_child = n->next_sibling = RP_PROF_NONE;
    if (parent != RP_PROF_NONE) {
        n->next_sibling = t->n[parent].first_child;
        t->n[parent].first_child = (uint32_t)t->nn;
    }
    return (uint32_t)t->nn++;
}

static void bt_rehash(struct bt *t)
{
    size_t cap = t->slot ? (t->mask + 1) * 2 : 256;
    free(t->slot);
    t->slot = rp_xmalloc(cap * sizeof *t->slot);
    memset(t->slot, 0xff, cap * sizeof *t->slot);
    t->mask = cap - 1;
    for (size_t i = 1; i < t->nn; i++) {
        size_t j = bt_hash(t->n[i].parent, t->n[i].key) & t->mask;
        while (t->slot[j] != RP_PROF_NONE)
            j = (j + 1) & t->mask;
        t->slot[j] = (uint32_t)i;
    }
    t->used = t->nn - 1;
}

static uint32_t bt_child(struct bt *t, uint32_t parent, uint32_t key)
{
    if (!t->slot || (t->used + 1) * 2 > t->mask)
        bt_rehash(t);
    size_t j = bt_hash(parent, key) & t->mask;
    for (; t->slot[j] != RP_PROF_NONE; j = (j + 1) & t->mask)
        if (t->n[t->slot[j]].parent == parent && t->n[t->slot[j]].key == key)
            return t->slot[j];
    uint32_t i = bt_new(t, parent, key);
    t->slot[j] = i;
    t->used++;
    return i;
}

static void bt_enter(const struct rp_profile *p, uint32_t node, void *arg)
{
    struct bt *t = arg;
    const struct rp_prof_node *n = &p->nodes[node];
    if (rp_prof_node_method(p, node) != t->target) {
        /* An allocated class below M: M allocated it, so it is M's self (as in
         * the flat table). */
        if (*t->onpath && n->kind == RP_PNODE_FRAME &&
            p->frames[n->ref].type == RP_PFRAME_CLASS &&
            rp_prof_node_method(p, n->parent) == t->target)
            for (int v = 0; v < RP_PV_MAX; v++)
                t->occ_self[v] += n->self[v];
        return;
    }
    if ((*t->onpath)++ == 0) {
        /* The outermost occurrence: file its callers' chain into the trie. */
        uint32_t b = 0;
        for (int v = 0; v < RP_PV_MAX; v++)
            t->n[0].total[v] += n->total[v];
        for (uint32_t c = n->parent; c != 0; c = p->nodes[c].parent) {
            const struct rp_prof_node *cn = &p->nodes[c];
            b = bt_child(t, b, cn->kind == RP_PNODE_THREAD ? cn->ref | BT_THREAD
                                                           : cn->ref);
            for (int v = 0; v < RP_PV_MAX; v++)
                t->n[b].total[v] += n->total[v];
        }
        t->occ_leaf = b;
        memset(t->occ_self, 0, sizeof t->occ_self);
    }
    for (int v = 0; v < RP_PV_MAX; v++)
        t->occ_self[v] += n->self[v];
}

static void bt_leave(const struct rp_profile *p, uint32_t node, void *arg)
{
    struct bt *t = arg;
    if (rp_prof_node_method(p, node) != t->target || --(*t->onpath) != 0)
        return;
    for (uint32_t b = t->occ_leaf; b != RP_PROF_NONE; b = t->n[b].parent)
        for (int v = 0; v < RP_PV_MAX; v++)
            t->n[b].self[v] += t->occ_self[v];
}

static const struct bt *sort_t;

static const char *bt_name(const struct bt *t, uint32_t i)
{
    uint32_t k = t->n[i].key;
    if (i == 0)
        return t->p->methods[t->target].display;
    if (k & BT_THREAD)
        return t->p->threads[k & ~BT_THREAD].label;
    return t->p->frames[k].display;
}

static int cmp_bt(const void *a, const void *b)
{
    const struct bt_node *x = &sort_t->n[*(const uint32_t *)a];
    const struct bt_node *y = &sort_t->n[*(const uint32_t *)b];
    for (int v = RP_PV_WEIGHT; v >= RP_PV_SAMPLES; v--)
        if (x->total[v] != y->total[v])
            return x->total[v] > y->total[v] ? -1 : 1;
    int c = strcmp(bt_name(sort_t, *(const uint32_t *)a), bt_name(sort_t, *(const uint32_t *)b));
    if (c)
        return c;
    return x->key < y->key ? -1 : x->key > y->key;
}

static void bt_sort(struct bt *t)
{
    uint32_t *kids = NULL;
    size_t cap = 0;
    sort_t = t;
    for (size_t i = 0; i < t->nn; i++) {
        size_t k = 0;
        for (uint32_t c = t->n[i].first_child; c != RP_PROF_NONE; c = t->n[c].next_sibling) {
            rp_xgrow((void **)&kids, &cap, k, sizeof *kids, 16);
            kids[k++] = c;
        }
        if (k < 2)
            continue;
        qsort(kids, k, sizeof *kids, cmp_bt);
        t->n[i].first_child = kids[0];
        for (size_t j = 0; j + 1 < k; j++)
            t->n[kids[j]].next_sibling = kids[j + 1];
        t->n[kids[k - 1]].next_sibling = RP_PROF_NONE;
    }
    free(kids);
}

struct bt_print {
    FILE *out;
    const struct rp_out_options *o;
    uint64_t whole;
    int times;
    uint64_t hidden;
    struct out_legend legend;  /* the markers of the lines printed */
};

static void bt_line(struct bt_print *c, const struct bt *t, uint32_t i, size_t depth)
{
    const struct bt_node *n = &t->n[i];
    out_figures(c->out, t->p, n->total, n->self, c->whole, c->times);
    fputs("  ", c->out);
    out_indent(c->out, depth);
    fputs(depth ? "<- " : "", c->out);
    uint32_t k = t->n[i].key;
    if (i == 0) {
        out_text(c->out, bt_name(t, i));
        out_legend_add_method(&c->legend, t->p, t->target);
    } else if (k & BT_THREAD) {
        out_node_text(c->out, t->p, t->p->threads[k & ~BT_THREAD].node);
    } else {
        out_frame_text(c->out, t->p, &t->p->frames[k]);
        out_legend_add(&c->legend, t->p->frames[k].display, t->p->frames[k].type);
    }
    fputc('\n', c->out);
}

static int bt_hidden(const struct bt_print *c, const struct bt_node *n)
{
    return c->o->cutoff_pct > 0 &&
           out_pct(n->total[RP_PV_WEIGHT], c->whole) < c->o->cutoff_pct;
}

static uint64_t count_from(const struct bt *t, uint32_t i)
{
    uint64_t k = 0;
    for (; i != RP_PROF_NONE; i = t->n[i].next_sibling)
        k++;
    return k;
}

/* Print the trie, pre-order, without recursion; hidden siblings are counted. */
static void bt_print_tree(struct bt_print *c, const struct bt *t)
{
    uint32_t i = 0;
    size_t depth = 0;
    bt_line(c, t, 0, 0);
    for (;;) {
        uint32_t next = t->n[i].first_child;
        if (next != RP_PROF_NONE && bt_hidden(c, &t->n[next]))
            c->hidden += count_from(t, next), next = RP_PROF_NONE;   /* sorted: all hidden */
        if (next != RP_PROF_NONE) {
            i = next;
            depth++;
        } else {
            for (;;) {
                if (i == 0)
                    return;
                uint32_t s = t->n[i].next_sibling;
                if (s != RP_PROF_NONE && !bt_hidden(c, &t->n[s])) {
                    i = s;
                    break;
                }
                if (s != RP_PROF_NONE)
                    c->hidden += count_from(t, s);
                i = t->n[i].parent;
                depth--;
            }
        }
        bt_line(c, t, i, depth);
    }
}

struct root_sort {
    const struct rp_profile *p;
    const struct rp_prof_method_row *rows;
    int by_total;
};
static struct root_sort rs;

static int cmp_roots(const void *a, const void *b)
{
    const struct rp_prof_method_row *x = &rs.rows[*(const uint32_t *)a];
    const struct rp_prof_method_row *y = &rs.rows[*(const uint32_t *)b];
    const uint64_t *xa = rs.by_total ? x->total : x->self, *ya = rs.by_total ? y->total : y->self;
    const uint64_t *xb = rs.by_total ? x->self : x->total, *yb = rs.by_total ? y->self : y->total;
    if (xa[RP_PV_WEIGHT] != ya[RP_PV_WEIGHT])
        return xa[RP_PV_WEIGHT] > ya[RP_PV_WEIGHT] ? -1 : 1;
    if (xb[RP_PV_WEIGHT] != yb[RP_PV_WEIGHT])
        return xb[RP_PV_WEIGHT] > yb[RP_PV_WEIGHT] ? -1 : 1;
    if (xa[RP_PV_SAMPLES] != ya[RP_PV_SAMPLES])
        return xa[RP_PV_SAMPLES] > ya[RP_PV_SAMPLES] ? -1 : 1;
    int c = strcmp(rs.p->methods[x->method].display, rs.p->methods[y->method].display);
    return c ? c : (x->method < y->method ? -1 : 1);
}

int rp_out_backtrace(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    struct rp_prof_method_row *rows = rp_prof_method_rows(p);
    uint32_t *pick = rp_xmalloc((p->nmethods + 1) * sizeof *pick);
    size_t n = 0;
    for (size_t m = 0; m < p->nmethods; m++) {
        if (o->method_re ? (rows[m].total[RP_PV_SAMPLES] > 0 &&
                            regexec(o->method_re, p->methods[m].display, 0, NULL, 0) == 0)
                         : rows[m].self[RP_PV_SAMPLES] > 0)
            pick[n++] = (uint32_t)m;
    }
    rs = (struct root_sort){p, rows, o->method_re != NULL};
    qsort(pick, n, sizeof *pick, cmp_roots);
    size_t limit = o->top ? o->top : (o->method_re ? n : 10);
    if (n > limit)
        n = limit;

    struct bt_print c = {out, o, p->nodes[0].total[RP_PV_WEIGHT], p->ns_per_unit > 0, 0,
                         {0}};
    out_legend_init(&c.legend);
    out_header(out, p, o, "backtrace");
    const char *noun = rp_norm_group_noun(p->group);
    fprintf(out, "# %zu %s: %s. Under each %s, its callers (<-), callers' "
                 "callers below them.\n", n, n == 1 ? noun : rp_norm_group_nouns(p->group),
            o->method_re ? "those matching --method, by total" : "the top ones by self weight",
            noun);
    fprintf(out, "# A caller line's figures are the method's samples (total: method on the "
                 "stack;\n# self: method running) whose outermost call of the method came "
                 "through that chain.\n");
    fprintf(out, "%14s %14s %8s %8s %9s", "total", "self", "total%", "self%", "samples");
    if (c.times)
        fprintf(out, " %12s %12s", "total-time", "self-time");
    fputs("  method <- callers\n", out);

    uint32_t *onpath = rp_xmalloc(sizeof *onpath);
    for (size_t k = 0; k < n; k++) {
        struct bt t = {0};
        t.p = p;
        t.target = pick[k];
        *onpath = 0;
        t.onpath = onpath;
        bt_new(&t, RP_PROF_NONE, RP_PROF_NONE);
        rp_prof_walk2(p, 0, bt_enter, bt_leave, &t);
        bt_sort(&t);
        fprintf(out, "\n--- %zu: ", k + 1);
        out_text(out, p->methods[t.target].display);
        fputc('\n', out);
        bt_print_tree(&c, &t);
        free(t.n);
        free(t.slot);
    }
    if (o->cutoff_pct > 0)
        fprintf(out, "\n# cutoff %.2f%%: %llu caller branch%s hidden\n", o->cutoff_pct,
                (unsigned long long)c.hidden, c.hidden == 1 ? "" : "es");
    if (c.legend.seen)
        fputc('\n', out);
    out_legend_print(out, &c.legend, "# ");
    free(onpath);
    free(pick);
    free(rows);
    return ferror(out) ? -1 : 0;
}
