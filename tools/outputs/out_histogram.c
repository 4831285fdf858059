/*
 * tools/outputs/out_histogram.c — the `histogram` format: allocated objects by class,
 * the first memory view of HPROF's heap dump and of JMC (`jmap -histo`'s table).
 *
 * Every alloc and live sample ends in a frame of type RP_PFRAME_CLASS, the
 * allocated class, so each (stack, class) site is a leaf node of the profile. This
 * table sums the leaves' own figures by class name, whatever the stack: samples,
 * estimated bytes (the weight) and estimated objects (RP_PV_OBJECTS). A sample
 * without a class frame counts under "?".
 *
 * For alloc the rows are ranked by allocated bytes and carry the live bytes and
 * objects of the same class in one live snapshot (the caller's rp_live_view, as
 * flat's SITES table); a class alive in the snapshot but with no allocation in
 * the profile gets a row of its own, so the live columns add up to the snapshot.
 * For live (one snapshot) the rows are ranked by live bytes. Ties: more objects,
 * more samples, then the name, so the output is deterministic.
 */
#include <stdlib.h>
#include <string.h>

#include "model/live.h"
#include "model/scan.h"
#include "model/strtab.h"
#include "out_common.h"

struct class_row {
    uint32_t name;                /* index into the table's strtab              */
    uint64_t v[RP_PV_MAX];        /* the profile's samples, bytes, objects      */
    uint64_t live[RP_PV_MAX];     /* alloc: the live snapshot's                 */
};

struct histogram {
    struct rp_strtab names;       /* class names; row i has name i              */
    struct class_row *rows;
    size_t cap;
    int which;                    /* 0: add to v, 1: add to live               */
};

static struct class_row *row_of(struct histogram *h, const char *name)
{
    uint32_t i = rp_strtab_cstr(&h->names, name);
    rp_xgrow_map((void **)&h->rows, &h->cap, i, sizeof *h->rows, 64, 0);
    h->rows[i].name = i;
    return &h->rows[i];
}

static int add_leaf(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                    size_t depth, void *arg)
{
    (void)path;
    (void)depth;
    struct histogram *h = arg;
    const struct rp_prof_frame *f = rp_prof_node_frame(p, leaf);
    const char *name = f && f->type == RP_PFRAME_CLASS ? p->methods[f->method].display : "?";
    struct class_row *r = row_of(h, name);
    uint64_t *v = h->which ? r->live : r->v;
    for (size_t k = 0; k < p->nvalues && k < RP_PV_MAX; k++)
        v[k] += p->nodes[leaf].self[k];
    return 0;
}

static const struct histogram *sort_h;

/* By the profile's own bytes (live for a live profile, allocated for alloc),
 * then objects, samples, the live columns' bytes, name. */
static int cmp_rows(const void *a, const void *b)
{
    const struct class_row *x = a, *y = b;
    static const int keys[][2] = {{0, RP_PV_WEIGHT}, {0, RP_PV_OBJECTS},
                                  {0, RP_PV_SAMPLES}, {1, RP_PV_WEIGHT}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        uint64_t vx = (keys[i][0] ? x->live : x->v)[keys[i][1]];
        uint64_t vy = (keys[i][0] ? y->live : y->v)[keys[i][1]];
        if (vx != vy)
            return vx > vy ? -1 : 1;
    }
    return strcmp(sort_h->names.s[x->name], sort_h->names.s[y->name]);
}

static void print_rows(FILE *out, const struct rp_profile *p, const struct histogram *h,
                       size_t shown, const struct rp_profile *live)
{
    uint64_t whole = p->nodes[0].total[RP_PV_WEIGHT];
    int objs = p->nvalues > RP_PV_OBJECTS;
    static const char *const alloc_groups[] = {"", "percent", "live", "allocated", "",
                                               "class", NULL};
    static const int alloc_widths[] = {5, 15, 25, 25, 7, 5};
    static const char *const live_groups[] = {"", "percent", "live", "", "class", NULL};
    static const int live_widths[] = {5, 15, 25, 7, 5};
    int is_live = !strcmp(p->kind, RP_KIND_LIVE);
    if (is_live) {
        out_group_heading(out, live_groups, live_widths);
        fprintf(out, "%5s %7s %7s %14s %10s %7s %s\n", "rank", "self", "accum", "bytes",
                "objs", "samples", "name");
    } else {
        out_group_heading(out, alloc_groups, alloc_widths);
        fprintf(out, "%5s %7s %7s %14s %10s %14s %10s %7s %s\n", "rank", "self", "accum",
                "bytes", "objs", "bytes", "objs", "samples", "name");
    }
    int live_objs = live && live->nvalues > RP_PV_OBJECTS;
    double accum = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct class_row *r = &h->rows[i];
        double self = out_pct(r->v[RP_PV_WEIGHT], whole);
        accum += self;
        char ob[32], lb[48], lo[32], b[48];
        out_fmt_u64(ob, sizeof ob, objs, r->v[RP_PV_OBJECTS]);
        fprintf(out, "%5zu %6.2f%% %6.2f%% ", i + 1, self, accum);
        if (!is_live) {
            out_fmt_weight(p, live != NULL, (double)r->live[RP_PV_WEIGHT], 0, lb, sizeof lb);
            out_fmt_u64(lo, sizeof lo, live_objs, r->live[RP_PV_OBJECTS]);
            fprintf(out, "%14s %10s ", lb, lo);
        }
        fprintf(out, "%14s %10s %7llu ",
                out_fmt_weight(p, 1, (double)r->v[RP_PV_WEIGHT], 0, b, sizeof b), ob,
                (unsigned long long)r->v[RP_PV_SAMPLES]);
        out_text(out, h->names.s[r->name]);
        fputc('\n', out);
    }
}

int rp_out_histogram(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    int is_live = !strcmp(p->kind, RP_KIND_LIVE);
    const struct rp_live_view *lv = o->live;
    const struct rp_profile *live = !is_live && lv ? lv->live : NULL;
    struct histogram h = {0};
    rp_strtab_init(&h.names);
    rp_prof_foreach_stack(p, add_leaf, &h);
    if (live) {
        h.which = 1;
        rp_prof_foreach_stack(live, add_leaf, &h);
    }
    size_t n = h.names.n;
    sort_h = &h;
    if (n)
        qsort(h.rows, n, sizeof *h.rows, cmp_rows);
    size_t shown = o->top && o->top < n ? o->top : n;

    out_header(out, p, o, "histogram");
    if (!is_live && lv) {
        fputs(live ? "# live columns: snapshot " : "# live columns: none; ", out);
        out_text(out, lv->note);
        fputc('\n', out);
    }
    const char *unit = p->unit[0] ? p->unit : "weight";
    uint64_t ns = p->nodes[0].total[RP_PV_SAMPLES];
    fprintf(out, "CLASS HISTOGRAM BEGIN (ordered by %s %s, estimated from %llu sample%s; "
                 "%zu class%s)\n", is_live ? "live" : "allocated", unit,
            (unsigned long long)ns, OUT_S(ns), n, n == 1 ? "" : "es");
    print_rows(out, p, &h, shown, live);
    fprintf(out, "CLASS HISTOGRAM END\n");
    if (shown < n)
        fprintf(out, "# %zu more class%s not shown (--top %zu)\n", n - shown,
                n - shown == 1 ? "" : "es", o->top);
    free(h.rows);
    rp_strtab_free(&h.names);
    return ferror(out) ? -1 : 0;
}
