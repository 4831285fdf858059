/*
 * tools/commands/cmd_leaks.c — `ringprof leaks [options] INPUT...`: the allocation sites
 * whose live sampled bytes grow across a recording's live snapshots.
 *
 * A leak shows as a site (allocation stack and class) whose objects pile up:
 * snapshot after snapshot, more of them are alive. What must not show:
 *   - garbage not yet collected: young objects come and go with every GC, so
 *     only objects that survived --min-gcs GCs (default 1) are counted;
 *   - sampling noise: a site's live bytes are estimates (a sample stands for
 *     about one sampling interval of bytes), so they jitter from snapshot to
 *     snapshot; a rank test (Mann-Kendall, tools/model/trend.h) asks whether later
 *     snapshots tend to hold more than earlier ones, whatever the jitter, and
 *     the slope is Theil-Sen's, which outliers do not move;
 *   - slow drift that is real but small: the growth over the recording (slope
 *     times duration) must reach --min-growth.
 * A site is growing when the one-sided Mann-Kendall p-value is under --alpha,
 * the slope is positive and the growth reaches --min-growth.
 *
 * The pass: a look-ahead (tools/model/scan.c) lists the snapshots; then one profile of
 * kind live is built over all of them (profile.h, with filters), only to intern
 * the stacks, and its on_sample callback adds each sample's bytes to its site's
 * series, in the bin of its snapshot. Snapshots are binned to at most
 * RP_TREND_MAX_POINTS points (each bin the mean of its snapshots; a site absent
 * from a snapshot is 0 there), so memory is sites x bins and the O(n^2) tests
 * stay cheap whatever the recording's length. One recording at a time: series of
 * two JVMs do not add up to one.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model/trend.h"
#include "outputs/legend.h"
#include "outputs/out_common.h"
#include "query.h"
#include "usage.h"

#define TRACE_BASE 300000u   /* trace numbers as in the flat SITES table */

enum verdict { V_GROWING, V_NO_TREND, V_SMALL, V_FLAT };

static const char *const verdict_names[] = {"growing", "no-trend", "too-small", "flat"};

struct site {
    uint32_t leaf;           /* a profile node of the site: its trace            */
    uint32_t method;         /* --by method: the allocating method, else NONE     */
    uint64_t *bins;          /* live bytes summed per bin                         */
    uint64_t first, last;    /* live bytes at the first and last snapshot         */
    uint64_t objs_last;      /* estimated objects at the last snapshot            */
    double slope;            /* Theil-Sen, bytes per second                       */
    double growth;           /* slope x the recording's span of snapshots         */
    struct rp_trend t;
    enum verdict v;
};

struct leaks {
    /* options */
    unsigned min_gcs;
    double alpha;
    uint64_t min_growth;
    int by_method, all, json;
    size_t top;
    /* the common options, the inputs and their look-ahead */
    struct rp_query q;
    size_t rec;              /* the recording                                     */
    const struct rp_snapshot **snaps;   /* its snapshots in the range, by time   */
    size_t nsnaps;
    uint32_t *bin_of;        /* per snapshot                                      */
    double *bin_x;           /* per bin: mean seconds after the first snapshot    */
    uint32_t *bin_n;         /* per bin: its snapshots                            */
    size_t nbins;
    double span_s;           /* first to last snapshot                            */
    /* sites */
    struct site *sites;
    size_t nsites, cap;
    uint64_t *keys;          /* open addressing: key + 1 (0: empty)               */
    uint32_t *vals;
    size_t mask, used;
    /* per-sample bookkeeping */
    const struct rp_kind_info *kind;
    int gcs_x, objects_x;
    uint64_t young, kept, off_snapshot;
    int no_age;              /* the live kind has no age_gcs: nothing filtered   */
    struct rp_profile *p;
};

/* ------------------------------------------------------------------ usage -- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof leaks [options] INPUT...\n"
        "\n"
        "Rank the allocation sites whose live sampled bytes grow across the live\n"
        "snapshots of one recording (the agent's live=on). INPUT is a chunk file, a\n"
        "recording directory or a glob.\n"
        "\n"
        "  --min-gcs N         count objects that survived at least N GCs (default 1;\n"
        "                      0 counts garbage not yet collected too)\n"
        "  --alpha P           significance of the Mann-Kendall trend test, one-sided\n"
        "                      (default 0.01)\n"
        "  --min-growth SIZE   growth over the recording a site must reach: bytes, or\n"
        "                      with k, M, G (default 1M)\n"
        "  --by site|method    a site is the allocation stack and class (default), or\n"
        "                      the allocating method and class\n"
        "  --from T, --to T    the snapshots to look at (as for convert: UTC, +DUR, -DUR)\n"
        "  --thread REGEX      only objects allocated by threads whose name matches\n"
        "  --include REGEX     only stacks with a frame matching REGEX\n"
        "  --exclude REGEX     drop stacks with a frame matching REGEX\n"
        "  --demangle STYLE    native C++/Rust names: short (default), full or none\n"
        "  --top N             rows shown (default 20)\n"
        "  --all               every site examined, with its verdict, not only growing\n"
        "  --json              one JSON object instead of text\n"
        "  --strict            exit 1 if any input was missing or damaged\n"
        "  --quiet             do not print each problem found in the inputs\n"
        "\n"
        "Exit status: 0 done (growing sites or not); 1 nothing could be read, no live\n"
        "snapshot, fewer than 3, or several recordings; 2 usage error.\n"
        "See docs/profiles.md (\"Leaks\") for the statistics.\n");
}

enum {
    OPT_MIN_GCS = RP_QOPT_END, OPT_ALPHA, OPT_MIN_GROWTH, OPT_BY, OPT_TOP, OPT_ALL,
    OPT_JSON
};

/* One of leaks' own options (rp_query_own_fn). */
static int parse_one(void *cmd, int opt, const char *arg)
{
    struct leaks *l = cmd;
    char *end;
    switch (opt) {
    case OPT_MIN_GCS:
        return rp_query_parse_min_gcs(&l->q, arg, &l->min_gcs);
    case OPT_ALPHA:
        errno = 0;
        l->alpha = strtod(arg, &end);
        if (end == arg || *end || errno || !(l->alpha > 0 && l->alpha < 1))
            return rp_query_bad_usage(&l->q, "--alpha '%s': a probability between 0 "
                                      "and 1 (0.01)", arg);
        return 0;
    case OPT_MIN_GROWTH:
        if (rp_parse_size(arg, &l->min_growth) < 0)
            return rp_query_bad_usage(&l->q, "--min-growth '%s': a size in bytes "
                                      "(1048576, 512k, 1M)", arg);
        return 0;
    case OPT_BY:
        if (strcmp(arg, "site") && strcmp(arg, "method")) {
            static const char *const by[] = {"site", "method"};
            return rp_usage_choice("leaks", "--by", "choice", arg, by, 2);
        }
        l->by_method = !strcmp(arg, "method");
        return 0;
    case OPT_TOP:
        if (rp_parse_positive(arg, &l->top) < 0)
            return rp_query_bad_usage(&l->q, "--top '%s': a positive integer", arg);
        return 0;
    case OPT_ALL: l->all = 1; return 0;
    default: l->json = 1; return 0;   /* OPT_JSON */
    }
}

/* @return 0, 2 (usage error) or 3 (--help). */
static int parse_args(struct leaks *l, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"min-gcs", 1, 0, OPT_MIN_GCS}, {"alpha", 1, 0, OPT_ALPHA},
        {"min-growth", 1, 0, OPT_MIN_GROWTH}, {"by", 1, 0, OPT_BY},
        {"top", 1, 0, OPT_TOP},         {"all", 0, 0, OPT_ALL},
        {"json", 0, 0, OPT_JSON},       RP_QUERY_LONGOPTS,
        {0, 0, 0, 0}};
    return rp_query_parse(&l->q, argc, argv, ":h", longopts, parse_one, l);
}

/* -------------------------------------------------------------- snapshots -- */

/*
 * Find the recording and its snapshots in the range, and bin them. @return 0,
 * or 1 after printing why no trend can be computed.
 */
static int pick_snapshots(struct leaks *l, uint64_t from, uint64_t to)
{
    size_t *n = rp_xrealloc(NULL, (l->q.sc.nrecs + 1) * sizeof *n);
    rp_snap_select(&l->q.sc, -1, from, to, NULL, n);
    size_t recs = 0, total = 0;
    for (size_t r = 0; r < l->q.sc.nrecs; r++)
        if (n[r]) {
            recs++;
            l->rec = r;
            total += n[r];
        }
    int rc = 0;
    if (!l->q.sc.nsnaps) {
        fprintf(stderr, "ringprof leaks: no live snapshot in the inputs: the recording "
                        "was made without live=on\n");
        rc = 1;
    } else if (recs > 1) {
        fprintf(stderr, "ringprof leaks: the inputs hold live snapshots of %zu "
                        "recordings; leaks reads one recording at a time:", recs);
        for (size_t r = 0; r < l->q.sc.nrecs; r++)
            if (n[r])
                fprintf(stderr, " %s (%zu)", l->q.sc.recs[r], n[r]);
        fputc('\n', stderr);
        rc = 1;
    } else if (total < 3) {
        fprintf(stderr, "ringprof leaks: a trend needs at least 3 live snapshots; the "
                        "%s %zu (the agent writes one per flush: record longer, or "
                        "widen --from/--to)\n",
                l->q.from.set || l->q.to.set ? "time range holds" : "inputs hold", total);
        rc = 1;
    }
    free(n);
    if (rc)
        return rc;
    l->snaps = rp_xrealloc(NULL, total * sizeof *l->snaps);
    for (size_t i = 0; i < l->q.sc.nsnaps; i++) {
        const struct rp_snapshot *s = &l->q.sc.snaps[i];
        if (s->rec == l->rec && (!s->wall || ((!from || s->wall >= from) &&
                                              (!to || s->wall < to))))
            l->snaps[l->nsnaps++] = s;
    }
    return 0;
}

/* Bin the snapshots: consecutive ones share a bin, at most RP_TREND_MAX_POINTS. */
static void bin_snapshots(struct leaks *l)
{
    size_t n = l->nsnaps;
    l->nbins = n < RP_TREND_MAX_POINTS ? n : RP_TREND_MAX_POINTS;
    l->bin_of = rp_xrealloc(NULL, n * sizeof *l->bin_of);
    l->bin_x = rp_xrealloc(NULL, l->nbins * sizeof *l->bin_x);
    l->bin_n = rp_xrealloc(NULL, l->nbins * sizeof *l->bin_n);
    memset(l->bin_x, 0, l->nbins * sizeof *l->bin_x);
    memset(l->bin_n, 0, l->nbins * sizeof *l->bin_n);
    uint64_t t0 = l->snaps[0]->mono;
    for (size_t k = 0; k < n; k++) {
        uint32_t b = (uint32_t)(k * l->nbins / n);
        l->bin_of[k] = b;
        l->bin_x[b] += (double)(l->snaps[k]->mono - t0) / 1e9;
        l->bin_n[b]++;
    }
    for (size_t b = 0; b < l->nbins; b++)
        l->bin_x[b] /= l->bin_n[b];
    l->span_s = (double)(l->snaps[n - 1]->mono - t0) / 1e9;
}

/* The index of the snapshot at monotonic `mono`, or SIZE_MAX. */
static size_t snapshot_at(const struct leaks *l, uint64_t mono)
{
    size_t lo = 0, hi = l->nsnaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->snaps[mid]->mono < mono)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->nsnaps && l->snaps[lo]->mono == mono ? lo : SIZE_MAX;
}

/* ------------------------------------------------------------------ sites -- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static void sites_rehash(struct leaks *l)
{
    size_t cap = l->keys ? (l->mask + 1) * 2 : 1024;
    uint64_t *keys = rp_xrealloc(NULL, cap * sizeof *keys);
    uint32_t *vals = rp_xrealloc(NULL, cap * sizeof *vals);
    memset(keys, 0, cap * sizeof *keys);
    for (size_t i = 0; l->keys && i <= l->mask; i++) {
        if (!l->keys[i])
            continue;
        size_t j = mix(l->keys[i]) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = l->keys[i];
        vals[j] = l->vals[i];
    }
    free(l->keys);
    free(l->vals);
    l->keys = keys;
    l->vals = vals;
    l->mask = cap - 1;
}

/* The site of leaf `leaf`: the leaf itself (its path is the stack and class),
 * or with --by method the allocating method and class. */
static struct site *site_of(struct leaks *l, const struct rp_profile *p, uint32_t leaf)
{
    uint64_t key = leaf;
    uint32_t method = RP_PROF_NONE;
    if (l->by_method) {
        const struct rp_prof_frame *f = rp_prof_node_frame(p, leaf);
        uint32_t cls = RP_PROF_NONE, at = leaf;
        if (f && f->type == RP_PFRAME_CLASS) {
            cls = f->method;
            at = p->nodes[leaf].parent;
        }
        const struct rp_prof_frame *m = rp_prof_node_frame(p, at);
        method = m ? m->method : RP_PROF_NONE;
        key = (uint64_t)method << 32 | cls;
    }
    if (key == UINT64_MAX)   /* key + 1 marks a used slot: keep it non-zero */
        key--;
    if ((l->used + 1) * 2 > (l->keys ? l->mask + 1 : 0))
        sites_rehash(l);
    size_t j = mix(key + 1) & l->mask;
    for (; l->keys[j]; j = (j + 1) & l->mask)
        if (l->keys[j] == key + 1)
            return &l->sites[l->vals[j]];
    if (l->nsites == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->sites = rp_xrealloc(l->sites, l->cap * sizeof *l->sites);
    }
    struct site *s = &l->sites[l->nsites];
    memset(s, 0, sizeof *s);
    s->leaf = leaf;
    s->method = method;
    s->bins = rp_xrealloc(NULL, l->nbins * sizeof *s->bins);
    memset(s->bins, 0, l->nbins * sizeof *s->bins);
    l->keys[j] = key + 1;
    l->vals[j] = (uint32_t)l->nsites++;
    l->used++;
    return s;
}

static void find_fields(struct leaks *l, const struct rp_kind_info *kind)
{
    l->kind = kind;
    l->gcs_x = l->objects_x = -1;
    for (uint32_t i = 0; kind && i < kind->nextra; i++) {
        if (kind->extra[i] && !strcmp(kind->extra[i], "age_gcs"))
            l->gcs_x = (int)i;
        if (kind->extra[i] && !strcmp(kind->extra[i], "objects"))
            l->objects_x = (int)i;
    }
    if (l->gcs_x < 0)
        l->no_age = 1;
}

/* on_sample: one live object of one snapshot, into its site's series. */
static void on_live(void *arg, const struct rp_profile *p, uint32_t leaf,
                    const struct rp_event *ev, const struct rp_kind_info *kind)
{
    struct leaks *l = arg;
    if (kind != l->kind)
        find_fields(l, kind);
    const uint64_t *x = ev->u.sample.extra;
    uint32_t nx = ev->u.sample.nextra;
    if (l->gcs_x >= 0 && (uint32_t)l->gcs_x < nx && x[l->gcs_x] < l->min_gcs) {
        l->young++;
        return;
    }
    size_t k = snapshot_at(l, ev->u.sample.time);
    if (k == SIZE_MAX) {
        l->off_snapshot++;
        return;
    }
    struct site *s = site_of(l, p, leaf);
    uint64_t w = ev->u.sample.weight;
    s->bins[l->bin_of[k]] += w;
    if (k == 0)
        s->first += w;
    if (k == l->nsnaps - 1) {
        s->last += w;
        s->objs_last += l->objects_x >= 0 && (uint32_t)l->objects_x < nx ? x[l->objects_x]
                                                                         : 1;
    }
    l->kept++;
}

/* --------------------------------------------------------------- analysis -- */

static void analyse(struct leaks *l, struct site *s, double *y)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t b = 0; b < l->nbins; b++) {
        y[b] = (double)s->bins[b] / l->bin_n[b];
        lo = y[b] < lo ? y[b] : lo;
        hi = y[b] > hi ? y[b] : hi;
    }
    if (hi == lo) {
        s->v = V_FLAT;
        s->t.p_up = 1;
        return;
    }
    rp_mann_kendall(y, l->nbins, &s->t);
    /* Theil-Sen only where it can matter: a site whose live bytes never span
     * the threshold cannot have grown by it. */
    if (hi - lo >= (double)l->min_growth || l->all) {
        s->slope = rp_theil_sen(l->bin_x, y, l->nbins);
        s->growth = s->slope * l->span_s;
    }
    if (!(s->t.p_up < l->alpha && s->slope > 0))
        s->v = V_NO_TREND;
    else if (s->growth < (double)l->min_growth)
        s->v = V_SMALL;
    else
        s->v = V_GROWING;
}

static int cmp_sites(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if ((x->v == V_GROWING) != (y->v == V_GROWING))
        return x->v == V_GROWING ? -1 : 1;
    if (x->v == V_GROWING && x->slope != y->slope)
        return x->slope > y->slope ? -1 : 1;
    if (x->t.p_up != y->t.p_up)
        return x->t.p_up < y->t.p_up ? -1 : 1;
    if (x->slope != y->slope)
        return x->slope > y->slope ? -1 : 1;
    return x->leaf < y->leaf ? -1 : x->leaf > y->leaf;
}

/* @return how many sites are growing; the sites sorted, growing first. */
static size_t analyse_all(struct leaks *l)
{
    double *y = rp_xrealloc(NULL, l->nbins * sizeof *y);
    size_t growing = 0;
    for (size_t i = 0; i < l->nsites; i++) {
        analyse(l, &l->sites[i], y);
        growing += l->sites[i].v == V_GROWING;
    }
    free(y);
    if (l->nsites)
        qsort(l->sites, l->nsites, sizeof *l->sites, cmp_sites);
    return growing;
}

/* ----------------------------------------------------------------- output -- */

static const char *site_class(const struct rp_profile *p, const struct site *s)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, s->leaf);
    return f && f->type == RP_PFRAME_CLASS ? f->display : "?";
}

static uint32_t site_trace(const struct rp_profile *p, const struct site *s)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, s->leaf);
    return f && f->type == RP_PFRAME_CLASS ? p->nodes[s->leaf].parent : s->leaf;
}

static const char *site_method(const struct rp_profile *p, const struct site *s)
{
    return s->method != RP_PROF_NONE ? p->methods[s->method].display : "?";
}

static void print_header(FILE *out, const struct leaks *l)
{
    const struct rp_profile *p = l->p;
    char a[48], b[48];
    fputs("# ringprof leaks: recording ", out);
    out_text(out, l->q.sc.recs[l->rec]);
    for (size_t i = 0; i < p->nsources; i++) {
        if (strcmp(p->sources[i].recording, l->q.sc.recs[l->rec]))
            continue;   /* inputs of other recordings, without snapshots */
        fputs(": pid ", out);
        out_text(out, p->sources[i].pid[0] ? p->sources[i].pid : "?");
        fputs(" on ", out);
        out_text(out, p->sources[i].host[0] ? p->sources[i].host : "?");
        if (p->sources[i].jvm[0]) {
            fputs(", jvm ", out);
            out_text(out, p->sources[i].jvm);
        }
    }
    rp_fmt_wall(a, sizeof a, l->snaps[0]->wall);
    rp_fmt_wall(b, sizeof b, l->snaps[l->nsnaps - 1]->wall);
    fprintf(out, "\n# %zu live snapshots, %s .. %s (%.3f s)", l->nsnaps, a, b, l->span_s);
    if (l->nbins < l->nsnaps)
        fprintf(out, ", binned to %zu points", l->nbins);
    fprintf(out, "; %zu %s examined\n", l->nsites, l->by_method ? "methods" : "sites");
    fprintf(out, "# growing: Mann-Kendall p < %g (one-sided) and Theil-Sen growth over "
                 "%.3f s >= %llu bytes\n", l->alpha, l->span_s,
            (unsigned long long)l->min_growth);
    if (l->no_age)
        fprintf(out, "# the live kind has no age_gcs field: every object counted, "
                     "--min-gcs ignored\n");
    else
        fprintf(out, "# objects counted when they survived >= %u GC%s: %llu of %llu "
                     "samples left out as younger\n", l->min_gcs, l->min_gcs == 1 ? "" : "s",
                (unsigned long long)l->young, (unsigned long long)(l->young + l->kept));
}

static void print_row(FILE *out, const struct leaks *l, const struct site *s, size_t rank,
                      uint32_t trace)
{
    fprintf(out, "%5zu %13.0f %14llu %14llu %11llu %6.3f %9.1e ", rank, s->slope * 60,
            (unsigned long long)s->first, (unsigned long long)s->last,
            (unsigned long long)s->objs_last, s->t.tau, s->t.p_up);
    if (l->all)
        fprintf(out, "%-9s ", verdict_names[s->v]);
    if (l->by_method) {
        fputs("     - ", out);
        out_text(out, site_class(l->p, s));
        fputs(" in ", out);
        out_text(out, site_method(l->p, s));
    } else {
        fprintf(out, "%6u ", trace);
        out_text(out, site_class(l->p, s));
    }
    fputc('\n', out);
}

static void print_text(FILE *out, const struct leaks *l, size_t growing)
{
    print_header(out, l);
    size_t rows = l->all ? l->nsites : growing;
    size_t shown = l->top < rows ? l->top : rows;
    if (growing)
        fprintf(out, "LEAKS BEGIN (%zu growing allocation site%s, by growth)\n", growing,
                growing == 1 ? "" : "s");
    else
        fprintf(out, "LEAKS BEGIN (no growing allocation site)\n");
    if (shown)
        fprintf(out, "%5s %13s %14s %14s %11s %6s %9s %s%s %s\n", "rank", "bytes/min",
                "live-first", "live-last", "objs-last", "tau", "p", l->all ? "verdict   "
                                                                          : "",
                "trace", "class");
    for (size_t i = 0; i < shown; i++)
        print_row(out, l, &l->sites[i], i + 1, TRACE_BASE + (uint32_t)i + 1);
    fprintf(out, "LEAKS END\n");
    if (shown < rows)
        fprintf(out, "# %zu more not shown (--top %zu)\n", rows - shown, l->top);
    if (!growing) {
        fprintf(out, "no growing allocation site");
        const struct site *s = l->nsites ? &l->sites[0] : NULL;
        if (s && s->v != V_FLAT) {
            fprintf(out, " (the strongest trend: tau %.3f, p %.1e, growth %.0f bytes, ",
                    s->t.tau, s->t.p_up, s->growth);
            out_text(out, site_class(l->p, s));
            fputs(l->by_method ? " in " : " from ", out);
            out_text(out, l->by_method ? site_method(l->p, s)
                                       : rp_prof_node_name(l->p, site_trace(l->p, s)));
            fputc(')', out);
        }
        fputc('\n', out);
    }
    struct out_legend legend;
    out_legend_init(&legend);
    for (size_t i = 0; i < shown && !l->by_method; i++)
        out_print_trace(out, l->p, site_trace(l->p, &l->sites[i]),
                        TRACE_BASE + (uint32_t)i + 1, &legend);
    out_legend_print(out, &legend, "# ");
}

static void json_site(FILE *out, const struct leaks *l, const struct site *s)
{
    fprintf(out, "{\"verdict\":\"%s\",\"bytes_per_min\":%.0f,\"growth_bytes\":%.0f,"
                 "\"live_first\":%llu,\"live_last\":%llu,\"objects_last\":%llu,"
                 "\"tau\":%.6f,\"p\":%.6g,\"class\":", verdict_names[s->v],
            s->slope * 60, s->growth, (unsigned long long)s->first,
            (unsigned long long)s->last, (unsigned long long)s->objs_last, s->t.tau,
            s->t.p_up);
    out_json_cstring(out, site_class(l->p, s));
    if (l->by_method) {
        fputs(",\"method\":", out);
        out_json_cstring(out, site_method(l->p, s));
    } else {
        /* The frames by method, leaf first, and their lines beside them. */
        fputs(",\"frames\":[", out);
        for (uint32_t x = site_trace(l->p, s); x != 0; x = l->p->nodes[x].parent) {
            const struct rp_prof_frame *f = rp_prof_node_frame(l->p, x);
            out_json_cstring(out, f ? l->p->methods[f->method].display
                                    : rp_prof_node_name(l->p, x));
            if (l->p->nodes[x].parent != 0)
                fputc(',', out);
        }
        fputs("],\"lines\":[", out);
        for (uint32_t x = site_trace(l->p, s); x != 0; x = l->p->nodes[x].parent) {
            const struct rp_prof_frame *f = rp_prof_node_frame(l->p, x);
            if (f && f->line)
                fprintf(out, "%u", f->line);
            else
                fputs("null", out);
            if (l->p->nodes[x].parent != 0)
                fputc(',', out);
        }
        fputc(']', out);
    }
    fputc('}', out);
}

static void print_json(FILE *out, const struct leaks *l, size_t growing)
{
    size_t rows = l->all ? l->nsites : growing;
    size_t shown = l->top < rows ? l->top : rows;
    fputs("{\"recording\":", out);
    out_json_cstring(out, l->q.sc.recs[l->rec]);
    fprintf(out, ",\"snapshots\":%zu,\"points\":%zu,\"span_s\":%.3f,\"min_gcs\":%u,"
                 "\"age_known\":%s,\"alpha\":%g,\"min_growth\":%llu,\"by\":\"%s\","
                 "\"examined\":%zu,\"young_samples\":%llu,\"samples\":%llu,"
                 "\"growing\":%zu,\"sites\":[",
            l->nsnaps, l->nbins, l->span_s, l->min_gcs, l->no_age ? "false" : "true",
            l->alpha, (unsigned long long)l->min_growth, l->by_method ? "method" : "site",
            l->nsites, (unsigned long long)l->young, (unsigned long long)l->kept, growing);
    for (size_t i = 0; i < shown; i++) {
        if (i)
            fputc(',', out);
        fputs("\n  ", out);
        json_site(out, l, &l->sites[i]);
    }
    fputs("\n]}\n", out);
}

/* ------------------------------------------------------------------- main -- */

static int run(struct leaks *l, int argc, char **argv)
{
    if (rp_query_inputs(&l->q, argc, argv))
        return 1;
    rp_query_scan(&l->q, RP_SCAN_SNAPSHOTS |
                             (rp_query_need_range(&l->q) ? RP_SCAN_RANGE : 0));
    rp_scan_finish(&l->q.sc);
    if (rp_query_none_readable(&l->q))
        return 1;
    struct rp_prof_options po = {0};
    po.event = RP_KIND_LIVE;
    po.granularity = RP_GRAN_SITE;   /* a site's trace is shown with its lines */
    rp_query_apply(&l->q, &po);
    if (pick_snapshots(l, po.from_wall, po.to_wall))
        return 1;
    bin_snapshots(l);

    po.on_sample = on_live;
    po.on_sample_arg = l;
    l->p = rp_query_build(&l->q, &po, NULL);
    if (l->no_age)
        fprintf(stderr, "ringprof leaks: the live kind has no age_gcs field: counting "
                        "every object, garbage not yet collected included\n");
    rp_query_problems(&l->q, NULL, "the figures hold");

    size_t growing = analyse_all(l);
    if (l->json)
        print_json(stdout, l, growing);
    else
        print_text(stdout, l, growing);
    if (rp_query_flush_stdout(&l->q))
        return 1;
    return rp_query_status(&l->q);
}

int rp_cmd_leaks(int argc, char **argv)
{
    struct leaks l;
    memset(&l, 0, sizeof l);
    l.min_gcs = 1;
    l.alpha = 0.01;
    l.min_growth = 1u << 20;
    l.top = 20;
    l.q.cmd = "leaks";
    l.q.usage = usage;
    int rc = parse_args(&l, argc, argv);
    if (!rc)
        rc = run(&l, argc, argv);
    else if (rc == 3)
        rc = 0;
    for (size_t i = 0; i < l.nsites; i++)
        free(l.sites[i].bins);
    free(l.sites);
    free(l.keys);
    free(l.vals);
    free(l.snaps);
    free(l.bin_of);
    free(l.bin_x);
    free(l.bin_n);
    rp_prof_free(l.p);
    rp_query_free(&l.q);
    return rc;
}
