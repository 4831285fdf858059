/*
 * tools/outputs/out_flat.c — the `flat` format: one row per method, or per allocation site.
 *
 * CPU and other time-like kinds get HPROF's CPU SAMPLES table (rank, self%, accum%,
 * count, method) with the self weight and the total (inclusive) weight added: a
 * method's total counts every sample with the method on the stack once, however
 * often it recurs there. Rows with self weight come first, by self weight; methods
 * that only call others follow, by total, so accum reaches 100% before them.
 *
 * Kinds measured in bytes, or carrying the allocated class (alloc, live), get
 * HPROF's SITES table instead: one row per (stack trace, allocated class), then
 * the traces it refers to (TRACE n: frames, leaf first), then the allocating
 * methods in the CPU SAMPLES layout (self: allocated in the method itself;
 * total: in it or its callees). For alloc the rows are ranked by allocated bytes
 * and carry HPROF's live columns, taken from one live snapshot (the caller's
 * rp_live_view) and joined by site; a site alive in the snapshot but with no
 * allocation in the profile gets a row of its own, so no live byte is left out.
 * For live (one snapshot) the rows are ranked by live bytes and carry the
 * objects' ages. A site's trace has its line numbers: the command builds these
 * kinds at line granularity (RP_FMT_SITE_LINES). The markers of the rows and
 * traces printed are explained at the end (legend.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "legend.h"
#include "model/live.h"
#include "model/scan.h"
#include "out_common.h"

#define TRACE_BASE 300000u   /* HPROF numbers traces from 300001 */

static const struct rp_prof_method_row *sort_rows;
static const struct rp_profile *sort_p;

static int cmp_methods(const void *a, const void *b)
{
    const struct rp_prof_method_row *x = &sort_rows[*(const uint32_t *)a];
    const struct rp_prof_method_row *y = &sort_rows[*(const uint32_t *)b];
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

/* skip_classes: 0 every method, 1 all but class frames, 2 only class frames
 * (the monitors of a lock profile). */
static void method_table(FILE *out, const struct rp_profile *p,
                         const struct rp_out_options *o, const char *title,
                         int skip_classes, struct out_legend *legend)
{
    struct rp_prof_method_row *rows = rp_prof_method_rows(p);
    uint32_t *order = rp_xmalloc((p->nmethods + 1) * sizeof *order);
    size_t n = 0;
    uint8_t *is_class = rp_xmalloc(p->nmethods + 1);
    memset(is_class, 0, p->nmethods + 1);
    for (size_t f = 0; f < p->nframes; f++)
        if (p->frames[f].type == RP_PFRAME_CLASS)
            is_class[p->frames[f].method] = 1;
    for (size_t m = 0; m < p->nmethods; m++)
        if (rows[m].total[RP_PV_SAMPLES] > 0 &&
            (skip_classes == 2 ? is_class[m] : !(skip_classes && is_class[m])))
            order[n++] = (uint32_t)m;
    sort_rows = rows;
    sort_p = p;
    qsort(order, n, sizeof *order, cmp_methods);

    const struct rp_prof_node *root = &p->nodes[0];
    uint64_t whole = root->total[RP_PV_WEIGHT];
    fprintf(out, "%s BEGIN (total = %llu sample%s, weight = %llu %s)\n", title,
            (unsigned long long)root->total[RP_PV_SAMPLES],
            OUT_S(root->total[RP_PV_SAMPLES]), (unsigned long long)whole,
            p->unit[0] ? p->unit : "-");
    fprintf(out, "rank    self   accum   count %14s   total %14s %s\n", "self-weight",
            "total-weight", rp_norm_group_noun(p->group));
    double accum = 0;
    size_t shown = o->top && o->top < n ? o->top : n;
    for (size_t i = 0; i < shown; i++) {
        const struct rp_prof_method_row *r = &rows[order[i]];
        double self = out_pct(r->self[RP_PV_WEIGHT], whole);
        accum += self;
        fprintf(out, "%4zu %6.2f%% %6.2f%% %7llu %14llu %6.2f%% %14llu ", i + 1, self,
                accum, (unsigned long long)r->self[RP_PV_SAMPLES],
                (unsigned long long)r->self[RP_PV_WEIGHT],
                out_pct(r->total[RP_PV_WEIGHT], whole),
                (unsigned long long)r->total[RP_PV_WEIGHT]);
        out_text(out, p->methods[r->method].display);
        fputc('\n', out);
        out_legend_add_method(legend, p, r->method);
    }
    fprintf(out, "%s END\n", title);
    if (shown < n)
        fprintf(out, "# %zu more %s not shown (--top %zu)\n", n - shown,
                skip_classes == 2 ? "classes" : rp_norm_group_nouns(p->group), o->top);
    free(is_class);
    free(order);
    free(rows);
}

/* ------------------------------------------------------------------ SITES -- */

/* A row of a SITES table. Most rows are nodes of the profile being written; an
 * alloc table with live columns also lists the live profile's sites that had no
 * allocation in the profile (objects allocated before --from, or in chunks no
 * longer kept), with their nodes in that profile. */
struct site {
    const struct rp_profile *p;  /* the profile holding `node` and `trace`         */
    uint32_t node;               /* the sample's leaf: the class frame, if any      */
    uint32_t trace;              /* the node whose path is the stack trace          */
    uint32_t live;               /* alloc with live columns: the same site's node   */
                                 /* in the live profile (RP_PROF_NONE: none alive)  */
    uint64_t key, key2, samples; /* ordering: primary weight, then secondary        */
    uint32_t trace_no;
};

static int cmp_sites(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    if (x->key2 != y->key2)
        return x->key2 > y->key2 ? -1 : 1;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    if (x->p != y->p)
        return x->p == sort_p ? -1 : 1;   /* the profile's own rows first */
    return x->node < y->node ? -1 : 1;    /* walk order: deterministic     */
}

struct site_list {
    struct site *s;
    size_t n, cap;
};

static struct site *site_add(struct site_list *l, const struct rp_profile *p, uint32_t leaf)
{
    rp_xgrow((void **)&l->s, &l->cap, l->n, sizeof *l->s, 64);
    const struct rp_prof_frame *f = rp_prof_node_frame(p, leaf);
    struct site *s = &l->s[l->n++];
    memset(s, 0, sizeof *s);
    s->p = p;
    s->node = leaf;
    s->trace = f && f->type == RP_PFRAME_CLASS ? p->nodes[leaf].parent : leaf;
    s->live = RP_PROF_NONE;
    s->key = p->nodes[leaf].self[RP_PV_WEIGHT];
    s->samples = p->nodes[leaf].self[RP_PV_SAMPLES];
    return s;
}

static int collect_site(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                        size_t depth, void *arg)
{
    (void)path;
    (void)depth;
    site_add(arg, p, leaf);
    return 0;
}

static const char *site_class(const struct site *s)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(s->p, s->node);
    return f && f->type == RP_PFRAME_CLASS ? f->display : "?";
}

/* Join the alloc sites with the live profile's: each site's live node, then the
 * live sites no alloc site has, as rows of their own. @return how many. */
static size_t join_live(struct site_list *l, const struct rp_profile *live)
{
    struct site_list ls = {0};
    rp_prof_foreach_stack(live, collect_site, &ls);
    uint32_t *nodes = rp_xmalloc((ls.n + 1) * sizeof *nodes);
    for (size_t i = 0; i < ls.n; i++)
        nodes[i] = ls.s[i].node;
    struct rp_path_index *ix = rp_path_index_new(live, nodes, ls.n);
    uint8_t *matched = rp_xmalloc(live->nnodes);
    memset(matched, 0, live->nnodes);
    for (size_t i = 0; i < l->n; i++) {
        struct site *s = &l->s[i];
        s->live = rp_path_index_find(ix, s->p, s->node);
        if (s->live != RP_PROF_NONE) {
            s->key2 = live->nodes[s->live].self[RP_PV_WEIGHT];
            matched[s->live] = 1;
        }
    }
    size_t extra = 0;
    for (size_t i = 0; i < ls.n; i++) {
        if (matched[ls.s[i].node])
            continue;
        struct site *s = site_add(l, live, ls.s[i].node);
        s->live = s->node;
        s->key2 = s->key;
        s->key = s->samples = 0;   /* nothing allocated in the profile */
        extra++;
    }
    free(matched);
    rp_path_index_free(ix);
    free(nodes);
    free(ls.s);
    return extra;
}

/* Number the traces of the first `shown` sites in order of first use, as HPROF
 * does (from 300001); a live-only site whose stack an alloc site also has gets
 * that site's number. @return how many traces, their sites' indexes in *first. */
static size_t number_traces(struct site_list *l, size_t shown, const struct rp_profile *p,
                            size_t **first)
{
    uint32_t *no = rp_xmalloc((p->nnodes + 1) * sizeof *no);
    memset(no, 0, (p->nnodes + 1) * sizeof *no);
    uint32_t *mine = rp_xmalloc((shown + 1) * sizeof *mine);
    size_t nmine = 0;
    for (size_t i = 0; i < shown; i++)
        if (l->s[i].p == p)
            mine[nmine++] = l->s[i].trace;
    struct rp_path_index *ix = rp_path_index_new(p, mine, nmine);
    *first = rp_xmalloc((shown + 1) * sizeof **first);
    size_t n = 0;
    const struct rp_profile *other = NULL;
    uint32_t *other_no = NULL;
    for (size_t i = 0; i < shown; i++) {
        struct site *s = &l->s[i];
        uint32_t *slot;
        if (s->p == p) {
            slot = &no[s->trace];
        } else {
            uint32_t m = rp_path_index_find(ix, s->p, s->trace);
            if (m != RP_PROF_NONE) {
                slot = &no[m];
            } else {
                if (!other) {
                    other = s->p;
                    other_no = rp_xmalloc((other->nnodes + 1) * sizeof *other_no);
                    memset(other_no, 0, (other->nnodes + 1) * sizeof *other_no);
                }
                slot = &other_no[s->trace];
            }
        }
        if (!*slot) {
            (*first)[n++] = i;
            *slot = TRACE_BASE + (uint32_t)n;
        }
        s->trace_no = *slot;
    }
    free(other_no);
    rp_path_index_free(ix);
    free(mine);
    free(no);
    return n;
}

static void print_traces(FILE *out, const struct site_list *l, const size_t *first, size_t n,
                         struct out_legend *legend)
{
    for (size_t t = 0; t < n; t++) {
        const struct site *s = &l->s[first[t]];
        out_print_trace(out, s->p, s->trace, s->trace_no, legend);
    }
}

/* Ages of the live samples of a site: median and max GCs survived, oldest. */
struct age_figures {
    int have;
    double median_gcs;
    uint32_t max_gcs;
    uint64_t max_ms;
};

static int cmp_ages(const void *a, const void *b)
{
    const struct rp_live_age *x = a, *y = b;
    if (x->leaf != y->leaf)
        return x->leaf < y->leaf ? -1 : 1;
    return x->gcs < y->gcs ? -1 : x->gcs > y->gcs;
}

/* `ages` sorted by cmp_ages. */
static struct age_figures site_ages(const struct rp_live_age *ages, size_t n, uint32_t leaf)
{
    struct age_figures a = {0};
    size_t lo = 0, hi = n;
    while (lo < hi) {   /* the first entry of the leaf */
        size_t mid = lo + (hi - lo) / 2;
        if (ages[mid].leaf < leaf)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < n && ages[end].leaf == leaf) {
        if (ages[end].ms > a.max_ms)
            a.max_ms = ages[end].ms;
        end++;
    }
    size_t k = end - lo;
    if (!k)
        return a;
    a.have = 1;
    a.max_gcs = ages[end - 1].gcs;
    a.median_gcs = k % 2 ? ages[lo + k / 2].gcs
                         : (ages[lo + k / 2 - 1].gcs + (double)ages[lo + k / 2].gcs) / 2;
    return a;
}

static void live_sites_rows(FILE *out, const struct rp_profile *p, const struct site_list *l,
                            size_t shown, const struct rp_live_view *lv)
{
    struct rp_live_age *ages = NULL;
    size_t nages = lv && lv->ages ? lv->nages : 0;
    if (nages) {
        ages = rp_xmalloc(nages * sizeof *ages);
        memcpy(ages, lv->ages, nages * sizeof *ages);
        qsort(ages, nages, sizeof *ages, cmp_ages);
    }
    uint64_t whole = p->nodes[0].total[RP_PV_WEIGHT];
    int objs = p->nvalues > RP_PV_OBJECTS;
    static const char *const groups[] = {"", "percent", "live", "", "stack", "age (GCs)",
                                         "oldest", "class", NULL};
    static const int widths[] = {5, 15, 25, 7, 6, 13, 9, 5};
    out_group_heading(out, groups, widths);
    fprintf(out, "%5s %7s %7s %14s %10s %7s %6s %6s %6s %9s %s\n", "rank", "self", "accum",
            "bytes", "objs", "samples", "trace", "median", "max", "age", "name");
    double accum = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct site *s = &l->s[i];
        const struct rp_prof_node *n = &p->nodes[s->node];
        double self = out_pct(n->self[RP_PV_WEIGHT], whole);
        accum += self;
        struct age_figures a = site_ages(ages, nages, s->node);
        char ob[32], med[32], mx[32], old[32], b[48];
        out_fmt_u64(ob, sizeof ob, objs, n->self[RP_PV_OBJECTS]);
        snprintf(med, sizeof med, a.have ? "%.1f" : "-", a.median_gcs);
        out_fmt_u64(mx, sizeof mx, a.have, a.max_gcs);
        snprintf(old, sizeof old, a.have ? "%.1fs" : "-", (double)a.max_ms / 1e3);
        fprintf(out, "%5zu %6.2f%% %6.2f%% %14s %10s %7llu %6u %6s %6s %9s ", i + 1, self,
                accum, out_fmt_weight(p, 1, (double)n->self[RP_PV_WEIGHT], 0, b, sizeof b),
                ob, (unsigned long long)n->self[RP_PV_SAMPLES], s->trace_no, med, mx, old);
        out_text(out, site_class(s));
        fputc('\n', out);
    }
    free(ages);
}

static void alloc_sites_rows(FILE *out, const struct rp_profile *p, const struct site_list *l,
                             size_t shown, const struct rp_profile *live)
{
    uint64_t whole = p->nodes[0].total[RP_PV_WEIGHT];
    int objs = p->nvalues > RP_PV_OBJECTS;
    int live_objs = live && live->nvalues > RP_PV_OBJECTS;
    static const char *const groups[] = {"", "percent", "live", "allocated", "", "stack",
                                         "class", NULL};
    static const int widths[] = {5, 15, 25, 25, 7, 6, 5};
    out_group_heading(out, groups, widths);
    fprintf(out, "%5s %7s %7s %14s %10s %14s %10s %7s %6s %s\n", "rank", "self", "accum",
            "bytes", "objs", "bytes", "objs", "samples", "trace", "name");
    double accum = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct site *s = &l->s[i];
        const struct rp_prof_node *n = s->p == p ? &p->nodes[s->node] : NULL;
        const struct rp_prof_node *ln = s->live != RP_PROF_NONE ? &live->nodes[s->live] : NULL;
        uint64_t bytes = n ? n->self[RP_PV_WEIGHT] : 0;
        double self = out_pct(bytes, whole);
        accum += self;
        char lb[48], lo[32], ob[32], ab[48];
        out_fmt_weight(p, live != NULL, ln ? (double)ln->self[RP_PV_WEIGHT] : 0, 0, lb,
                       sizeof lb);
        out_fmt_u64(lo, sizeof lo, live_objs, ln ? ln->self[RP_PV_OBJECTS] : 0);
        out_fmt_u64(ob, sizeof ob, objs, n ? n->self[RP_PV_OBJECTS] : 0);
        fprintf(out, "%5zu %6.2f%% %6.2f%% %14s %10s %14s %10s %7llu %6u ", i + 1, self,
                accum, lb, lo, out_fmt_weight(p, 1, (double)bytes, 0, ab, sizeof ab), ob,
                (unsigned long long)(n ? n->self[RP_PV_SAMPLES] : 0), s->trace_no);
        out_text(out, site_class(s));
        fputc('\n', out);
    }
}

/* HPROF's SITES. For alloc: ordered by allocated bytes, with the live bytes and
 * objects of the same site in the view's live snapshot beside them. For live:
 * ordered by live bytes, with the objects' ages. */
static void sites(FILE *out, const struct rp_profile *p, const struct rp_out_options *o,
                  struct out_legend *legend)
{
    int is_live = !strcmp(p->kind, RP_KIND_LIVE);
    const struct rp_live_view *lv = o->live;
    const struct rp_profile *live = !is_live && lv ? lv->live : NULL;
    struct site_list l = {0};
    rp_prof_foreach_stack(p, collect_site, &l);
    size_t live_only = live ? join_live(&l, live) : 0;
    sort_p = p;
    if (l.n)   /* an empty profile has no sites, and l.s is NULL */
        qsort(l.s, l.n, sizeof *l.s, cmp_sites);
    size_t shown = o->top && o->top < l.n ? o->top : l.n;
    size_t *first;
    size_t ntraces = number_traces(&l, shown, p, &first);

    const char *unit = p->unit[0] ? p->unit : "weight";
    unsigned long long nsamples = p->nodes[0].total[RP_PV_SAMPLES];
    if (is_live) {
        fprintf(out, "LIVE SITES BEGIN (ordered by live %s, %llu object%s sampled)\n", unit,
                nsamples, OUT_S(nsamples));
        live_sites_rows(out, p, &l, shown, lv);
        fprintf(out, "LIVE SITES END\n");
    } else {
        if (lv) {
            fputs(live ? "# live columns: snapshot " : "# live columns: none; ", out);
            out_text(out, lv->note);
            fputc('\n', out);
        }
        fprintf(out, "SITES BEGIN (ordered by allocated %s, estimated from %llu sample%s)\n",
                unit, nsamples, OUT_S(nsamples));
        alloc_sites_rows(out, p, &l, shown, live);
        fprintf(out, "SITES END\n");
        if (live_only)
            fprintf(out, "# %zu site%s with live objects but no allocation sample here "
                         "(allocated before --from, or in chunks no longer kept): "
                         "allocated 0\n", live_only, live_only == 1 ? "" : "s");
    }
    if (shown < l.n)
        fprintf(out, "# %zu more sites not shown (--top %zu)\n", l.n - shown, o->top);
    print_traces(out, &l, first, ntraces, legend);
    free(first);
    free(l.s);
}

static int is_alloc_profile(const struct rp_profile *p)
{
    /* A lock profile's class frames are monitors, not allocations. */
    if (!strcmp(p->kind, RP_KIND_LOCK))
        return 0;
    if (!strcmp(p->unit, RP_UNIT_BYTES))
        return 1;
    for (size_t f = 0; f < p->nframes; f++)
        if (p->frames[f].type == RP_PFRAME_CLASS)
            return 1;
    return 0;
}

int rp_out_flat(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    struct out_legend legend;
    out_legend_init(&legend);
    out_header(out, p, o, "flat");
    if (is_alloc_profile(p)) {
        sites(out, p, o, &legend);
        fputc('\n', out);
        method_table(out, p, o, "ALLOCATING METHODS", 1, &legend);
    } else if (!strcmp(p->kind, RP_KIND_LOCK)) {
        /* Methods that waited (self: the method entering the monitor), then the
         * monitors' classes; `ringprof locks` ranks monitors with their owners. */
        method_table(out, p, o, "LOCK SAMPLES", 1, &legend);
        fputc('\n', out);
        method_table(out, p, o, "MONITOR CLASSES", 2, &legend);
    } else {
        char title[64];
        snprintf(title, sizeof title, "%s SAMPLES", p->kind[0] ? p->kind : "-");
        for (char *c = title; *c; c++)
            *c = (char)toupper((unsigned char)*c);
        method_table(out, p, o, title, 0, &legend);
    }
    out_legend_print(out, &legend, "# ");
    return ferror(out) ? -1 : 0;
}
