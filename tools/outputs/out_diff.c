/*
 * tools/outputs/out_diff.c — the text writers of `ringprof diff` (formats.h): the
 * flat table ranked by change, its JSON, and the two-column collapsed stacks.
 *
 * flat: one row per method (diff.h's rows), ranked by the absolute change of
 * self weight, then of total weight, then by name. Columns: self weight in
 * base and new and its change (in the kind's unit; base scaled when
 * normalised), the change relative to base, the self shares of each profile's
 * total and their change in percentage points (shares never depend on
 * normalisation), then total weight in base and new and its change.
 *
 * collapsed: "stack BASE NEW" for every stack of either profile, the layout
 * Brendan Gregg's difffolded.pl writes and flamegraph.pl reads (a stack absent
 * from one side has 0 there). Normalised, BASE is scaled as `difffolded.pl -n`
 * scales it: truncated to an integer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "legend.h"
#include "model/timespec.h"
#include "out_common.h"

static int64_t delta(const struct rp_diff *d, const uint64_t *v)
{
    return (int64_t)llround((double)v[1] - rp_diff_base(d, v[0]));
}

static const struct rp_diff *sort_d;

static int cmp_rows(const void *a, const void *b)
{
    const struct rp_diff_row *x = &sort_d->rows[*(const uint32_t *)a];
    const struct rp_diff_row *y = &sort_d->rows[*(const uint32_t *)b];
    int64_t dx = llabs(delta(sort_d, x->self)), dy = llabs(delta(sort_d, y->self));
    if (dx != dy)
        return dx > dy ? -1 : 1;
    dx = llabs(delta(sort_d, x->total));
    dy = llabs(delta(sort_d, y->total));
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return strcmp(sort_d->names.s[x->name], sort_d->names.s[y->name]);
}

/* The rows with weight on either side, ranked. Caller frees; *n their count. */
static uint32_t *ranked_rows(const struct rp_diff *d, size_t *n)
{
    uint32_t *order = rp_xmalloc((d->nrows ? d->nrows : 1) * sizeof *order);
    *n = 0;
    for (size_t i = 0; i < d->nrows; i++) {
        const struct rp_diff_row *r = &d->rows[i];
        if (r->total[0] || r->total[1] || r->self[0] || r->self[1])
            order[(*n)++] = (uint32_t)i;
    }
    sort_d = d;
    qsort(order, *n, sizeof *order, cmp_rows);
    return order;
}

/* The change relative to base, as text: "+12.5%", "new" (base 0), "0.0%". */
static const char *rel_text(const struct rp_diff *d, const uint64_t *v, char *buf,
                            size_t cap)
{
    double b = rp_diff_base(d, v[0]);
    if (b <= 0)
        snprintf(buf, cap, "%s", v[1] ? "new" : "-");
    else
        snprintf(buf, cap, "%+.1f%%", 100.0 * ((double)v[1] - b) / b);
    return buf;
}

static void side_line(FILE *out, const struct rp_diff *d, int s, const char *label)
{
    const struct rp_profile *p = d->p[s];
    char t[32];
    fprintf(out, "# %s: %llu sample%s, weight %llu", label,
            (unsigned long long)p->nodes[0].total[RP_PV_SAMPLES],
            OUT_S(p->nodes[0].total[RP_PV_SAMPLES]),
            (unsigned long long)d->whole[s]);
    if (p->ns_per_unit > 0)
        fprintf(out, " (%s)", rp_prof_fmt_time(p, d->whole[s], t, sizeof t));
    if (p->wall_first) {
        char a[40], b[40];
        rp_fmt_wall(a, sizeof a, p->wall_first);
        rp_fmt_wall(b, sizeof b, p->wall_last);
        fprintf(out, ", %s .. %s", a, b);
    }
    fputc('\n', out);
}

static void flat_header(FILE *out, const struct rp_diff *d)
{
    const struct rp_profile *p = d->p[1];
    fprintf(out, "# ringprof diff: kind %s (unit %s)\n", p->kind, p->unit);
    side_line(out, d, 0, "base");
    side_line(out, d, 1, "new ");
    if (d->scale != 1.0)
        fprintf(out, "# normalised: base weights x %.6f (new total / base total), so "
                     "equal shares compare equal\n", d->scale);
    fputs("# ranked by the change of self weight; rel: change / base; %: share of its "
          "profile's total; pts: change of share in percentage points\n", out);
}

/* The frame type of each row's name (the first node named so), for the
 * legend: rows are names, nodes have types. Caller frees. */
static int *row_types(const struct rp_diff *d)
{
    int *type = rp_xmalloc((d->nrows ? d->nrows : 1) * sizeof *type);
    for (size_t i = 0; i < d->nrows; i++)
        type[i] = RP_FRAME_MARKER;
    uint8_t *seen = rp_xmalloc(d->names.n + 1);
    memset(seen, 0, d->names.n + 1);
    for (size_t i = 1; i < d->nnodes; i++) {
        uint32_t name = d->nodes[i].name;
        if (name < d->nrows && !seen[name]++)
            type[name] = d->nodes[i].type;
    }
    free(seen);
    return type;
}

/* The three weight columns of one figure (self or total): base (scaled), new,
 * change, in the kind's unit made readable (out_fmt_weight). */
static void weights(FILE *out, const struct rp_diff *d, const uint64_t *v)
{
    const struct rp_profile *p = d->p[1];
    char a[48], b[48], c[48];
    fprintf(out, " %14s %14s %14s", out_fmt_weight(p, 1, rp_diff_base(d, v[0]), 0, a, sizeof a),
            out_fmt_weight(p, 1, (double)v[1], 0, b, sizeof b),
            out_fmt_weight(p, 1, (double)delta(d, v), 1, c, sizeof c));
}

static int write_flat_text(FILE *out, const struct rp_diff *d,
                           const struct rp_out_options *o)
{
    flat_header(out, d);
    size_t n;
    uint32_t *order = ranked_rows(d, &n);
    int *type = row_types(d);
    struct out_legend legend;
    out_legend_init(&legend);
    size_t top = o->top ? o->top : 20;
    enum rp_prof_group g = d->p[1]->group;
    fprintf(out, "%4s %14s %14s %14s %8s %7s %7s %7s %14s %14s %14s  %s\n", "rank",
            "base self", "new self", "change", "rel", "base%", "new%", "pts",
            "base total", "new total", "change", rp_norm_group_noun(g));
    for (size_t i = 0; i < n && i < top; i++) {
        const struct rp_diff_row *r = &d->rows[order[i]];
        double s0 = out_pct(r->self[0], d->whole[0]), s1 = out_pct(r->self[1], d->whole[1]);
        char rel[32];
        fprintf(out, "%4zu", i + 1);
        weights(out, d, r->self);
        fprintf(out, " %8s %6.2f%% %6.2f%% %+7.2f", rel_text(d, r->self, rel, sizeof rel),
                s0, s1, s1 - s0);
        weights(out, d, r->total);
        fputs("  ", out);
        out_text(out, d->names.s[r->name]);
        fputc('\n', out);
        out_legend_add(&legend, d->names.s[r->name], type[order[i]]);
    }
    if (n > top)
        fprintf(out, "# %zu more %s not shown (--top %zu)\n", n - top,
                rp_norm_group_nouns(g), top);
    out_legend_print(out, &legend, "# ");
    free(type);
    free(order);
    return ferror(out) ? -1 : 0;
}

static void json_side(FILE *out, const struct rp_diff *d, int s)
{
    fprintf(out, "{\"samples\":%llu,\"weight\":%llu}",
            (unsigned long long)d->p[s]->nodes[0].total[RP_PV_SAMPLES],
            (unsigned long long)d->whole[s]);
}

static void json_pair(FILE *out, const struct rp_diff *d, const char *what,
                      const uint64_t *v)
{
    fprintf(out, ",\"base_%s\":%.17g,\"new_%s\":%llu,\"change_%s\":%lld,"
                 "\"base_%s_share\":%.17g,\"new_%s_share\":%.17g",
            what, rp_diff_base(d, v[0]), what, (unsigned long long)v[1], what,
            (long long)delta(d, v), what, out_pct(v[0], d->whole[0]) / 100.0, what,
            out_pct(v[1], d->whole[1]) / 100.0);
}

static int write_flat_json(FILE *out, const struct rp_diff *d,
                           const struct rp_out_options *o)
{
    fputs("{\"kind\":", out);
    out_json_cstring(out, d->p[1]->kind);
    fputs(",\"unit\":", out);
    out_json_cstring(out, d->p[1]->unit);
    fprintf(out, ",\"scale\":%.17g,\"base\":", d->scale);
    json_side(out, d, 0);
    fputs(",\"new\":", out);
    json_side(out, d, 1);
    fputs(",\"rows\":[", out);
    size_t n;
    uint32_t *order = ranked_rows(d, &n);
    for (size_t i = 0; i < n && (!o->top || i < o->top); i++) {
        const struct rp_diff_row *r = &d->rows[order[i]];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        out_json_cstring(out, d->names.s[r->name]);
        json_pair(out, d, "self", r->self);
        json_pair(out, d, "total", r->total);
        fputc('}', out);
    }
    fputs("]}\n", out);
    free(order);
    return ferror(out) ? -1 : 0;
}

int rp_out_diff_flat(FILE *out, const struct rp_diff *d, const struct rp_out_options *o,
                     int json)
{
    return json ? write_flat_json(out, d, o) : write_flat_text(out, d, o);
}

/* difffolded.pl -n: int(count1 * total2 / total1), in doubles as Perl computes it. */
static uint64_t folded_base(const struct rp_diff *d, uint64_t w)
{
    if (d->scale == 1.0 || !d->whole[0])
        return w;
    return (uint64_t)((double)w * (double)d->whole[1] / (double)d->whole[0]);
}

int rp_out_diff_collapsed(FILE *out, const struct rp_diff *d)
{
    uint32_t *path = NULL;
    size_t cap = 0;
    for (size_t i = 1; i < d->nnodes; i++) {
        const struct rp_diff_node *n = &d->nodes[i];
        if (!n->self[0] && !n->self[1])
            continue;
        size_t len = rp_diff_path(d, (uint32_t)i, path, cap);
        if (len > cap) {
            cap = len * 2;
            path = rp_xreallocarray(path, cap, sizeof *path);
            rp_diff_path(d, (uint32_t)i, path, cap);
        }
        for (size_t k = 0; k < len; k++) {
            const struct rp_diff_node *f = &d->nodes[path[k]];
            if (k)
                fputc(';', out);
            rp_out_folded_name(out, d->names.s[f->name]);
            fputs(rp_prof_frame_suffix(f->type), out);
        }
        fprintf(out, " %llu %llu\n", (unsigned long long)folded_base(d, n->self[0]),
                (unsigned long long)n->self[1]);
    }
    free(path);
    return ferror(out) ? -1 : 0;
}
