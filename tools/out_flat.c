/*
 * tools/out_flat.c — the `flat` format: one row per method, or per allocation site.
 *
 * CPU and other time-like kinds get HPROF's CPU SAMPLES table (rank, self%, accum%,
 * count, method) with the self weight and the total (inclusive) weight added: a
 * method's total counts every sample with the method on the stack once, however
 * often it recurs there. Rows with self weight come first, by self weight; methods
 * that only call others follow, by total, so accum reaches 100% before them.
 *
 * Kinds measured in bytes, or carrying the allocated class (alloc), get HPROF's
 * SITES table instead: one row per (stack trace, allocated class) with the
 * estimated bytes and objects, ranked by bytes; then the traces it refers to
 * (TRACE n: frames, leaf first), then the allocating methods in the CPU SAMPLES
 * layout (self: allocated in the method itself; total: in it or its callees).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "out_common.h"

#define TRACE_BASE 300000u   /* HPROF numbers traces from 300001 */

static const struct out_method_row *sort_rows;
static const struct rp_profile *sort_p;

static int cmp_methods(const void *a, const void *b)
{
    const struct out_method_row *x = &sort_rows[*(const uint32_t *)a];
    const struct out_method_row *y = &sort_rows[*(const uint32_t *)b];
    if (x->self[RP_PV_WEIGHT] != y->self[RP_PV_WEIGHT])
        return x->self[RP_PV_WEIGHT] > y->self[RP_PV_WEIGHT] ? -1 : 1;
    if (x->self[RP_PV_SAMPLES] != y->self[RP_PV_SAMPLES])
        return x->self[RP_PV_SAMPLES] > y->self[RP_PV_SAMPLES] ? -1 : 1;
    if (x->total[RP_PV_WEIGHT] != y->total[RP_PV_WEIGHT])
        return x->total[RP_PV_WEIGHT] > y->total[RP_PV_WEIGHT] ? -1 : 1;
    if (x->total[RP_PV_SAMPLES] != y->total[RP_PV_SAMPLES])
        return x->total[RP_PV_SAMPLES] > y->total[RP_PV_SAMPLES] ? -1 : 1;
    int c = strcmp(sort_p->methods[x->method].display, sort_p->methods[y->method].display);
    return c ? c : (x->method < y->method ? -1 : 1);
}

static void method_table(FILE *out, const struct rp_profile *p,
                         const struct rp_out_options *o, const char *title,
                         int skip_classes)
{
    struct out_method_row *rows = out_method_rows(p);
    uint32_t *order = out_alloc((p->nmethods + 1) * sizeof *order);
    size_t n = 0;
    uint8_t *is_class = out_alloc(p->nmethods + 1);
    memset(is_class, 0, p->nmethods + 1);
    for (size_t f = 0; f < p->nframes; f++)
        if (p->frames[f].type == RP_PFRAME_CLASS)
            is_class[p->frames[f].method] = 1;
    for (size_t m = 0; m < p->nmethods; m++)
        if (rows[m].total[RP_PV_SAMPLES] > 0 && !(skip_classes && is_class[m]))
            order[n++] = (uint32_t)m;
    sort_rows = rows;
    sort_p = p;
    qsort(order, n, sizeof *order, cmp_methods);

    const struct rp_prof_node *root = &p->nodes[0];
    uint64_t whole = root->total[RP_PV_WEIGHT];
    fprintf(out, "%s BEGIN (total = %llu samples, weight = %llu %s)\n", title,
            (unsigned long long)root->total[RP_PV_SAMPLES], (unsigned long long)whole,
            p->unit[0] ? p->unit : "-");
    fprintf(out, "rank    self   accum   count %14s   total %14s method\n", "self-weight",
            "total-weight");
    double accum = 0;
    size_t shown = o->top && o->top < n ? o->top : n;
    for (size_t i = 0; i < shown; i++) {
        const struct out_method_row *r = &rows[order[i]];
        double self = out_pct(r->self[RP_PV_WEIGHT], whole);
        accum += self;
        fprintf(out, "%4zu %6.2f%% %6.2f%% %7llu %14llu %6.2f%% %14llu ", i + 1, self,
                accum, (unsigned long long)r->self[RP_PV_SAMPLES],
                (unsigned long long)r->self[RP_PV_WEIGHT],
                out_pct(r->total[RP_PV_WEIGHT], whole),
                (unsigned long long)r->total[RP_PV_WEIGHT]);
        out_text(out, p->methods[r->method].display);
        fputc('\n', out);
    }
    fprintf(out, "%s END\n", title);
    if (shown < n)
        fprintf(out, "# %zu more methods not shown (--top %zu)\n", n - shown, o->top);
    free(is_class);
    free(order);
    free(rows);
}

/* ------------------------------------------------------------------ SITES -- */

struct site {
    uint32_t node;    /* the sample's leaf: the class frame, if any          */
    uint32_t trace;   /* the node whose path is the stack trace               */
};

static int cmp_sites(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    const struct rp_prof_node *nx = &sort_p->nodes[x->node], *ny = &sort_p->nodes[y->node];
    for (int v = RP_PV_WEIGHT; v >= RP_PV_SAMPLES; v--)
        if (nx->self[v] != ny->self[v])
            return nx->self[v] > ny->self[v] ? -1 : 1;
    return x->node < y->node ? -1 : 1;   /* walk order: deterministic */
}

struct site_list {
    struct site *s;
    size_t n, cap;
};

static int collect_site(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                        size_t depth, void *arg)
{
    (void)path;
    (void)depth;
    struct site_list *l = arg;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->s = out_realloc(l->s, l->cap * sizeof *l->s);
    }
    const struct rp_prof_frame *f = rp_prof_node_frame(p, leaf);
    l->s[l->n].node = leaf;
    l->s[l->n].trace = f && f->type == RP_PFRAME_CLASS ? p->nodes[leaf].parent : leaf;
    l->n++;
    return 0;
}

static const char *site_class(const struct rp_profile *p, const struct site *s)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, s->node);
    return f && f->type == RP_PFRAME_CLASS ? f->display : "?";
}

/* One TRACE frame, HPROF style: "name(File.java:123)". */
static void trace_frame(FILE *out, const struct rp_profile *p, const struct rp_prof_frame *f)
{
    const struct rp_prof_method *m = &p->methods[f->method];
    fputc('\t', out);
    out_text(out, f->display);
    switch (f->type) {
    case RP_FRAME_INTERPRETED:
    case RP_FRAME_JIT:
    case RP_FRAME_INLINED:
        if (!m->file[0])
            fputs("(Unknown Source)", out);
        else if (f->line)
            fprintf(out, "(%s:%u)", m->file, f->line);
        else
            fprintf(out, "(%s)", m->file);
        break;
    case RP_FRAME_NATIVE:
    case RP_FRAME_CPP:
    case RP_FRAME_KERNEL:
        fputs("(Native Method)", out);
        break;
    default:
        break;
    }
    /* How it ran, as the tree shows it (HPROF has no such tag; without it two
     * traces that differ only there would read alike). */
    static const char *const tags[RP_FRAME_TYPES] = {
        [RP_FRAME_INTERPRETED] = " [interpreted]", [RP_FRAME_INLINED] = " [inlined]",
    };
    if (f->type >= 0 && f->type < RP_FRAME_TYPES && tags[f->type])
        fputs(tags[f->type], out);
    fputc('\n', out);
}

static void sites(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    struct site_list l = {0};
    rp_prof_foreach_stack(p, collect_site, &l);
    sort_p = p;
    qsort(l.s, l.n, sizeof *l.s, cmp_sites);
    size_t shown = o->top && o->top < l.n ? o->top : l.n;

    /* Trace numbers in order of first use by a shown site. */
    uint32_t *trace_no = out_alloc(p->nnodes * sizeof *trace_no);
    memset(trace_no, 0, p->nnodes * sizeof *trace_no);
    uint32_t *traces = out_alloc((shown + 1) * sizeof *traces);
    size_t ntraces = 0;
    for (size_t i = 0; i < shown; i++)
        if (!trace_no[l.s[i].trace]) {
            traces[ntraces++] = l.s[i].trace;
            trace_no[l.s[i].trace] = TRACE_BASE + (uint32_t)ntraces;
        }

    const struct rp_prof_node *root = &p->nodes[0];
    uint64_t whole = root->total[RP_PV_WEIGHT];
    int objs = p->nvalues > RP_PV_OBJECTS;
    fprintf(out, "SITES BEGIN (ordered by allocated %s, estimated from %llu samples)\n",
            p->unit[0] ? p->unit : "weight", (unsigned long long)root->total[RP_PV_SAMPLES]);
    fprintf(out, "           percent           allocated              stack class\n");
    fprintf(out, " rank    self   accum          bytes       objs samples  trace name\n");
    double accum = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct rp_prof_node *n = &p->nodes[l.s[i].node];
        double self = out_pct(n->self[RP_PV_WEIGHT], whole);
        accum += self;
        char ob[32];
        if (objs)
            snprintf(ob, sizeof ob, "%llu", (unsigned long long)n->self[RP_PV_OBJECTS]);
        else
            snprintf(ob, sizeof ob, "-");
        fprintf(out, "%5zu %6.2f%% %6.2f%% %14llu %10s %7llu %6u ", i + 1, self, accum,
                (unsigned long long)n->self[RP_PV_WEIGHT], ob,
                (unsigned long long)n->self[RP_PV_SAMPLES], trace_no[l.s[i].trace]);
        out_text(out, site_class(p, &l.s[i]));
        fputc('\n', out);
    }
    fprintf(out, "SITES END\n");
    if (shown < l.n)
        fprintf(out, "# %zu more sites not shown (--top %zu)\n", l.n - shown, o->top);

    for (size_t t = 0; t < ntraces; t++) {
        uint32_t n = traces[t];
        uint32_t thread = RP_PROF_NONE;
        for (uint32_t x = n; x != 0; x = p->nodes[x].parent)
            if (p->nodes[x].kind == RP_PNODE_THREAD)
                thread = p->nodes[x].ref;
        fprintf(out, "TRACE %u:", TRACE_BASE + (uint32_t)t + 1);
        if (thread != RP_PROF_NONE) {
            fputs(" (thread=", out);
            out_text(out, p->threads[thread].label);
            fputc(')', out);
        }
        fputc('\n', out);
        for (uint32_t x = n; x != 0; x = p->nodes[x].parent) {
            const struct rp_prof_frame *f = rp_prof_node_frame(p, x);
            if (f)
                trace_frame(out, p, f);
        }
    }
    free(traces);
    free(trace_no);
    free(l.s);
}

static int is_alloc_profile(const struct rp_profile *p)
{
    if (!strcmp(p->unit, "bytes"))
        return 1;
    for (size_t f = 0; f < p->nframes; f++)
        if (p->frames[f].type == RP_PFRAME_CLASS)
            return 1;
    return 0;
}

int rp_out_flat(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    out_header(out, p, o, "flat");
    if (is_alloc_profile(p)) {
        sites(out, p, o);
        fputc('\n', out);
        method_table(out, p, o, "ALLOCATING METHODS", 1);
    } else {
        char title[64];
        snprintf(title, sizeof title, "%s SAMPLES", p->kind[0] ? p->kind : "-");
        for (char *c = title; *c; c++)
            *c = (char)toupper((unsigned char)*c);
        method_table(out, p, o, title, 0);
    }
    return ferror(out) ? -1 : 0;
}
