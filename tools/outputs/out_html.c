/*
 * tools/outputs/out_html.c — `ringprof convert --format html`: one self-contained,
 * interactive flame graph page.
 *
 * The page (tools/outputs/flamegraph.html: HTML, CSS and a canvas renderer in one file)
 * is compiled into the binary by tools/outputs/embed.py. This writer copies it, putting
 * the profile as JSON where the template has its data marker:
 *
 *   {"v":1,"title":..,"kind":..,"unit":..,"ns_per_unit":..,"info":..,
 *    "nodes":[name,type,weight,samples,nchildren, ...],"strings":[..]}
 *
 * Nodes are flat, in pre-order (children in the model's sorted order), each five
 * integers: an index into "strings", the page's frame type (see page_type), total
 * weight, total samples, and the number of children that follow. Names are
 * interned, so a method that appears in many stacks costs one string. The nodes
 * stream out of rp_prof_walk, so memory is the string table only, and nothing
 * recurses, however deep the stacks. A --cutoff drops nodes under that share of
 * the total weight (their weight stays in the parent's total, as the parent's
 * self), which keeps the page small for profiles with millions of nodes.
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
#include "out_common.h"

/* From the build (tools/outputs/embed.py over tools/outputs/flamegraph.html). */
extern const char rp_flamegraph_html[];
extern const unsigned long rp_flamegraph_html_len;

#define DATA_MARKER "@RINGPROF_DATA@"

/* The page's frame types: rp_frame_type values 0..6, then its own. */
enum { PT_CLASS = 7, PT_THREAD = 8, PT_ROOT = 9 };

static int page_type(const struct rp_profile *p, uint32_t node)
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
            page_type(p, node), (unsigned long long)n->total[RP_PV_WEIGHT],
            (unsigned long long)n->total[RP_PV_SAMPLES], kids);
    w->count++;
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
    int n = snprintf(info, sizeof info, "%s: %llu samples", p->kind[0] ? p->kind : "?",
                     (unsigned long long)root->total[RP_PV_SAMPLES]);
    if (p->ns_per_unit > 0)
        n += snprintf(info + n, sizeof info - (size_t)n, ", %s",
                      rp_prof_fmt_time(p, root->total[RP_PV_WEIGHT], t, sizeof t));
    else if (!strcmp(p->unit, "bytes"))
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
    if (lv && !strcmp(p->kind, RP_LIVE_KIND) && (size_t)n < sizeof info)
        snprintf(info + n, sizeof info - (size_t)n, "; snapshot %s", lv->note);
    out_json_cstring(out, info);
}

int rp_out_html(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    const char *page = rp_flamegraph_html;
    const char *mark = strstr(page, DATA_MARKER);
    if (!mark || !p->nnodes) {
        fprintf(stderr, "ringprof: convert: html: %s\n",
                mark ? "empty profile" : "page template has no data marker (build bug)");
        return -1;
    }
    fwrite(page, 1, (size_t)(mark - page), out);

    struct walk w = {.out = out};
    rp_strtab_init(&w.names);
    if (o->cutoff_pct > 0)
        w.min_weight = (uint64_t)((double)p->nodes[0].total[RP_PV_WEIGHT] *
                                  o->cutoff_pct / 100.0);
    fputs("{\"v\":1,\"title\":", out);
    out_json_cstring(out, o->title);
    fputs(",\"kind\":", out);
    out_json_cstring(out, p->kind);
    fputs(",\"unit\":", out);
    out_json_cstring(out, p->unit);
    /* For count-like units the page shows an estimated time beside the count. */
    fprintf(out, ",\"ns_per_unit\":%.17g",
            strcmp(p->unit, "ns") && p->ns_per_unit > 0 ? p->ns_per_unit : 0.0);
    fputs(",\"info\":", out);
    write_info(out, p, o->live);
    fputs(",\n\"nodes\":[\n", out);
    rp_prof_walk(p, 0, visit, &w);
    fputs("],\n\"strings\":[", out);
    for (size_t i = 0; i < w.names.n; i++) {
        if (i)
            fputs(",\n", out);
        out_json_string(out, w.names.s[i], w.names.len[i]);
    }
    fputs("]}", out);
    rp_strtab_free(&w.names);

    const char *rest = mark + strlen(DATA_MARKER);
    fwrite(rest, 1, rp_flamegraph_html_len - (size_t)(rest - page), out);
    return ferror(out) ? -1 : 0;
}

int rp_out_diff_html(FILE *out, const struct rp_diff *d, const struct rp_out_options *o)
{
    (void)out; (void)d; (void)o;
    return -1;
}
