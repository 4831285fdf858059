/*
 * tools/outputs/out_html.c — `ringprof convert --format html`: one self-contained,
 * interactive flame graph page; and `ringprof diff --format html`, the same page
 * in its diff mode (below, "the differential page").
 *
 * The page (tools/outputs/flamegraph.html: HTML, CSS and the page's script) and the
 * canvas renderer it shares with the heatmap page (tools/outputs/flame.js) are
 * compiled into the binary by tools/outputs/embed.py. This writer copies the page,
 * putting the profile as JSON where the template has its data marker, and the
 * renderer where it has the script marker (out_page, out_flame_js_slot):
 *
 *   {"v":1,"title":..,"kind":..,"unit":..,"ns_per_unit":..,"info":..,
 *    "nodes":[name,type,weight,samples,nchildren, ...],"strings":[..],
 *    "markers":[[label,meaning,doc,match], ...]}
 *
 * Nodes are flat, in pre-order (children in the model's sorted order), each five
 * integers: an index into "strings", the page's frame type (see out_page_type), total
 * weight, total samples, and the number of children that follow. Names are
 * interned, so a method that appears in many stacks costs one string. The nodes
 * stream out of rp_prof_walk, so memory is the string table only, and nothing
 * recurses, however deep the stacks. A --cutoff drops nodes under that share of
 * the total weight (their weight stays in the parent's total, as the parent's
 * self), which keeps the page small for profiles with millions of nodes.
 * "markers" explains the marker frames among the nodes written (legend.h), for
 * the page's legend and tooltip.
 *
 * The JSON sits in a <script type="application/json"> element, which the HTML
 * parser ends at the first "</script" (in any case). Every '<', '>' and '&' in a
 * string is therefore written as \u003c, \u003e, \u0026, so no name can end the
 * element or open a comment; control characters are \u00XX, U+2028 and U+2029
 * are escaped too, and bytes that are not valid UTF-8 become U+FFFD, so the page
 * is valid UTF-8 whatever the names held.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "formats.h"
#include "model/live.h"
#include "model/scan.h"
#include "model/strtab.h"
#include "model/diff.h"
#include "legend.h"
#include "out_common.h"

/* From the build (tools/outputs/embed.py over tools/outputs/flamegraph.html and
 * flame.js). */
extern const char rp_flamegraph_html[];
extern const unsigned long rp_flamegraph_html_len;
extern const char rp_flame_js[];
extern const unsigned long rp_flame_js_len;

#define DATA_MARKER "@RINGPROF_DATA@"
#define FLAME_JS_MARKER "@RINGPROF_FLAME_JS@"

/* The page's frame types: rp_frame_type values 0..6, then its own. */
enum { PT_CLASS = 7, PT_THREAD = 8, PT_ROOT = 9 };

int out_page_type(const struct rp_profile *p, uint32_t node)
{
    const struct rp_prof_node *n = &p->nodes[node];
    if (n->kind == RP_PNODE_THREAD)
        return PT_THREAD;
    if (n->kind != RP_PNODE_FRAME)
        return PT_ROOT;
    int t = p->frames[n->ref].type;
    if (t == RP_PFRAME_CLASS)
        return PT_CLASS;
    return t >= 0 && t < RP_FRAME_TYPES ? t : RP_FRAME_MARKER;
}

struct walk {
    FILE *out;
    struct rp_strtab names;
    uint64_t min_weight;       /* nodes below this total weight are dropped     */
    uint64_t count;
    struct out_legend legend;  /* the markers among the nodes written          */
};

static int kept(const struct walk *w, const struct rp_prof_node *n)
{
    return n->total[RP_PV_WEIGHT] >= w->min_weight;
}

static int visit(const struct rp_profile *p, uint32_t node, size_t depth, void *arg)
{
    struct walk *w = arg;
    const struct rp_prof_node *n = &p->nodes[node];
    if (depth > 0 && !kept(w, n))
        return 1;                                   /* skip it and its subtree */
    uint32_t kids = 0;
    for (uint32_t c = n->first_child; c != RP_PROF_NONE; c = p->nodes[c].next_sibling)
        kids += kept(w, &p->nodes[c]) != 0;
    uint32_t name = rp_strtab_cstr(&w->names, rp_prof_node_name(p, node));
    fprintf(w->out, "%s%u,%d,%llu,%llu,%u", w->count ? ",\n" : "", name,
            out_page_type(p, node), (unsigned long long)n->total[RP_PV_WEIGHT],
            (unsigned long long)n->total[RP_PV_SAMPLES], kids);
    w->count++;
    out_legend_add_node(&w->legend, p, node);
    return 0;
}

static void fmt_wall(uint64_t ns, char *buf, size_t cap)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (!ns || !gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, cap, "?");
}

/* The page's subtitle: kind, totals, time range, where the samples came from. */
static void write_info(FILE *out, const struct rp_profile *p, const struct rp_live_view *lv)
{
    const struct rp_prof_node *root = &p->nodes[0];
    char info[1024], t[64], a[32], b[32];
    int n = snprintf(info, sizeof info, "%s: %llu sample%s", p->kind[0] ? p->kind : "?",
                     (unsigned long long)root->total[RP_PV_SAMPLES],
                     OUT_S(root->total[RP_PV_SAMPLES]));
    if (p->ns_per_unit > 0)
        n += snprintf(info + n, sizeof info - (size_t)n, ", %s",
                      rp_prof_fmt_time(p, root->total[RP_PV_WEIGHT], t, sizeof t));
    else if (!strcmp(p->unit, RP_UNIT_BYTES))
        n += snprintf(info + n, sizeof info - (size_t)n, ", %.2f MiB",
                      (double)root->total[RP_PV_WEIGHT] / (1024.0 * 1024.0));
    else
        n += snprintf(info + n, sizeof info - (size_t)n, ", %llu %s",
                      (unsigned long long)root->total[RP_PV_WEIGHT], p->unit);
    if (p->wall_first) {
        fmt_wall(p->wall_first, a, sizeof a);
        fmt_wall(p->wall_last, b, sizeof b);
        n += snprintf(info + n, sizeof info - (size_t)n, "; %s .. %s UTC (%.3f s)", a, b,
                      (double)(p->wall_last - p->wall_first) / 1e9);
    }
    if ((size_t)n >= sizeof info)
        n = (int)sizeof info - 1;   /* cut: nothing more fits */
    if (p->nsources == 1)
        n += snprintf(info + n, sizeof info - (size_t)n, "; pid %s on %s",
                      p->sources[0].pid[0] ? p->sources[0].pid : "?",
                      p->sources[0].host[0] ? p->sources[0].host : "?");
    else if (p->nsources > 1)
        n += snprintf(info + n, sizeof info - (size_t)n, "; %zu recordings merged",
                      p->nsources);
    if (lv && !strcmp(p->kind, RP_KIND_LIVE) && (size_t)n < sizeof info)
        snprintf(info + n, sizeof info - (size_t)n, "; snapshot %s", lv->note);
    out_json_cstring(out, info);
}

/* Whether there is nothing to draw (after printing so). */
static int page_empty(size_t nnodes)
{
    if (!nnodes)
        fputs("ringprof: html: empty profile\n", stderr);
    return !nnodes;
}

/* The page: the template with the data (written by `data`) and the renderer at
 * their markers. @return 0, or -1 on a write error. */
static int write_page(FILE *out, void (*data)(FILE *out, void *arg), void *arg)
{
    const struct out_slot slots[] = {
        {DATA_MARKER, data, arg},
        {FLAME_JS_MARKER, out_flame_js_slot, NULL},
    };
    return out_page(out, rp_flamegraph_html, rp_flamegraph_html_len, slots,
                    sizeof slots / sizeof slots[0]);
}

/* The data's first fields, up to "info" (its value is the caller's). */
static void data_head(FILE *out, const struct rp_profile *p, const char *title)
{
    fputs("{\"v\":1,\"title\":", out);
    out_json_cstring(out, title);
    fputs(",\"kind\":", out);
    out_json_cstring(out, p->kind);
    fputs(",\"unit\":", out);
    out_json_cstring(out, p->unit);
    /* For count-like units the page shows an estimated time beside the count. */
    fprintf(out, ",\"ns_per_unit\":%.17g",
            strcmp(p->unit, RP_UNIT_NS) && p->ns_per_unit > 0 ? p->ns_per_unit : 0.0);
    fputs(",\"info\":", out);
}

struct marker_arg {
    FILE *out;
    size_t n;
};

static void marker_json(const char *label, const char *meaning, const char *doc,
                        const char *match, void *arg)
{
    struct marker_arg *a = arg;
    FILE *out = a->out;
    fputs(a->n++ ? ",\n[" : "[", out);
    out_json_cstring(out, label);
    fputc(',', out);
    out_json_cstring(out, meaning);
    fputc(',', out);
    out_json_cstring(out, doc);
    fputc(',', out);
    out_json_cstring(out, match);
    fputc(']', out);
}

void out_markers_json(FILE *out, const struct out_legend *legend)
{
    fputc('[', out);
    struct marker_arg a = {out, 0};
    out_legend_each(legend, marker_json, &a);
    fputc(']', out);
}

/* The data's end: the string table and the markers' legend. */
static void data_tail(FILE *out, const struct rp_strtab *names, const struct out_legend *legend)
{
    fputs("],\n\"strings\":[", out);
    for (size_t i = 0; i < names->n; i++) {
        if (i)
            fputs(",\n", out);
        out_json_string(out, names->s[i], names->len[i]);
    }
    fputs("],\n\"markers\":", out);
    out_markers_json(out, legend);
    fputc('}', out);
}

/* What a page's data slot writes: a profile (the flame graph) or a diff. */
struct page_arg {
    const struct rp_profile *p;
    const struct rp_diff *d;
    const struct rp_out_options *o;
};

static void html_data(FILE *out, void *arg)
{
    const struct page_arg *a = arg;
    const struct rp_profile *p = a->p;
    struct walk w = {.out = out};
    rp_strtab_init(&w.names);
    out_legend_init(&w.legend);
    if (a->o->cutoff_pct > 0)
        w.min_weight = (uint64_t)((double)p->nodes[0].total[RP_PV_WEIGHT] *
                                  a->o->cutoff_pct / 100.0);
    char title[1024];
    data_head(out, p, out_title(p, a->o->title, title, sizeof title));
    write_info(out, p, a->o->live);
    fputs(",\n\"nodes\":[\n", out);
    rp_prof_walk(p, 0, visit, &w);
    data_tail(out, &w.names, &w.legend);
    rp_strtab_free(&w.names);
}

int rp_out_html(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    if (page_empty(p->nnodes))
        return -1;
    struct page_arg a = {.p = p, .o = o};
    return write_page(out, html_data, &a);
}

/* ------------------------------------------------- the differential page -- */

/*
 * `ringprof diff --format html`: the same page in its diff mode. The nodes are
 * the merged tree's (diff.h) in NEW's shape: those with NEW weight, each with
 * its NEW total weight (samples 0: the join keeps weights only). Beside them,
 *   "base":[total, self, ...]   two figures a node, in the nodes' order: the
 *                               node's BASE total and self weight, unscaled
 *   "diff":{"scale", "base_total", "new_total"}
 * and the page colours each frame by the change of its self weight (NEW self
 * minus BASE self times scale), red up, blue down.
 */
static int diff_page_type(int type)
{
    if (type == RP_PFRAME_CLASS)
        return PT_CLASS;
    if (type < 0)
        return PT_ROOT;
    return type < RP_FRAME_TYPES ? type : RP_FRAME_MARKER;
}

static uint32_t diff_kids(const struct rp_diff *d, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t c = d->nodes[n].first_child; c != RP_PROF_NONE; c = d->nodes[c].next_sibling)
        k += d->nodes[c].total[1] > 0;
    return k;
}

/* Pre-order over the nodes with NEW weight: children come sorted by it, so the
 * first child without any ends a node's list. */
static void diff_nodes(FILE *out, const struct rp_diff *d, struct rp_strtab *names, int base,
                       struct out_legend *legend)
{
    uint32_t n = 0;
    size_t count = 0;
    for (;;) {
        const struct rp_diff_node *x = &d->nodes[n];
        if (base)
            fprintf(out, "%s%llu,%llu", count++ ? ",\n" : "",
                    (unsigned long long)x->total[0], (unsigned long long)x->self[0]);
        else {
            fprintf(out, "%s%u,%d,%llu,0,%u", count++ ? ",\n" : "",
                    rp_strtab_cstr(names, d->names.s[x->name]), diff_page_type(x->type),
                    (unsigned long long)x->total[1], diff_kids(d, n));
            if (n)
                out_legend_add(legend, d->names.s[x->name], x->type);
        }
        uint32_t c = x->first_child;
        if (c != RP_PROF_NONE && d->nodes[c].total[1] > 0) {
            n = c;
            continue;
        }
        for (;;) {
            if (n == 0)
                return;
            c = d->nodes[n].next_sibling;
            if (c != RP_PROF_NONE && d->nodes[c].total[1] > 0) {
                n = c;
                break;
            }
            n = d->nodes[n].parent;
        }
    }
}

static void diff_info(FILE *out, const struct rp_diff *d)
{
    char info[512], t[2][32];
    for (int s = 0; s < 2; s++)
        if (!rp_prof_fmt_time(d->p[s], d->whole[s], t[s], sizeof t[s])[0])
            snprintf(t[s], sizeof t[s], "%llu %s", (unsigned long long)d->whole[s],
                     d->p[s]->unit);
    uint64_t nb = d->p[0]->nodes[0].total[RP_PV_SAMPLES];
    uint64_t nn = d->p[1]->nodes[0].total[RP_PV_SAMPLES];
    snprintf(info, sizeof info, "%s diff: base %llu sample%s, %s; new %llu sample%s, %s%s",
             d->p[1]->kind[0] ? d->p[1]->kind : "?", (unsigned long long)nb, OUT_S(nb), t[0],
             (unsigned long long)nn, OUT_S(nn), t[1],
             d->scale != 1.0 ? "; base normalised to new's total" : "");
    out_json_cstring(out, info);
}

/* The diff page's title: "BASE_NAME vs NEW_NAME" of the recordings' names
 * (out_title), or "NAME: PATHS" when both sides have the same one; `paths`
 * ("BASE vs NEW" as given) without names. */
static const char *diff_title(const struct rp_diff *d, const char *paths, char *buf,
                              size_t cap)
{
    char a[512], b[512];
    const char *na = out_title(d->p[0], NULL, a, sizeof a);
    const char *nb = out_title(d->p[1], NULL, b, sizeof b);
    if (!na || !nb)
        return paths;
    if (!strcmp(na, nb))
        snprintf(buf, cap, "%s: %s", na, paths ? paths : "base vs new");
    else
        snprintf(buf, cap, "%s vs %s", na, nb);
    return buf;
}

static void diff_data(FILE *out, void *arg)
{
    const struct page_arg *a = arg;
    const struct rp_diff *d = a->d;
    struct rp_strtab names;
    rp_strtab_init(&names);
    struct out_legend legend;
    out_legend_init(&legend);
    char title[2048];
    data_head(out, d->p[1], diff_title(d, a->o->title, title, sizeof title));
    diff_info(out, d);
    fprintf(out, ",\n\"diff\":{\"scale\":%.17g,\"base_total\":%llu,\"new_total\":%llu}",
            d->scale, (unsigned long long)d->whole[0], (unsigned long long)d->whole[1]);
    fputs(",\n\"base\":[\n", out);
    diff_nodes(out, d, &names, 1, NULL);
    fputs("],\n\"nodes\":[\n", out);
    diff_nodes(out, d, &names, 0, &legend);
    data_tail(out, &names, &legend);
    rp_strtab_free(&names);
}

int rp_out_diff_html(FILE *out, const struct rp_diff *d, const struct rp_out_options *o)
{
    if (page_empty(d->whole[1] ? d->nnodes : 0))
        return -1;
    struct page_arg a = {.d = d, .o = o};
    return write_page(out, diff_data, &a);
}

void out_flame_js_slot(FILE *out, void *arg)
{
    (void)arg;
    fwrite(rp_flame_js, 1, rp_flame_js_len, out);
}
