/*
 * tools/outputs/out_leaks.c — `ringprof leaks`' text and JSON (out_leaks.h), from
 * the model (model/leaks.h), analysed and ranked already.
 *
 * The text: a header (the recording, its snapshots and their span, the test's
 * thresholds, the young samples left out), the LEAKS table (growing sites, or
 * with --all every site with its verdict), then each row's allocation trace
 * numbered as in the flat SITES table, and the legend of the markers those
 * traces show. The JSON holds the same rows, each site's frames (leaf first)
 * and their lines.
 */
#include "out_leaks.h"

#include <string.h>

#include "legend.h"
#include "out_common.h"
#include "model/timespec.h"

#define TRACE_BASE 300000u   /* trace numbers as in the flat SITES table */

static const char *site_class(const struct rp_profile *p, const struct rp_leak_site *s)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, s->leaf);
    return f && f->type == RP_PFRAME_CLASS ? f->display : "?";
}

static uint32_t site_trace(const struct rp_profile *p, const struct rp_leak_site *s)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, s->leaf);
    return f && f->type == RP_PFRAME_CLASS ? p->nodes[s->leaf].parent : s->leaf;
}

static const char *site_method(const struct rp_profile *p, const struct rp_leak_site *s)
{
    return s->method != RP_PROF_NONE ? p->methods[s->method].display : "?";
}

static void print_header(FILE *out, const struct rp_leaks *l)
{
    const struct rp_profile *p = l->p;
    char a[48], b[48];
    fputs("# ringprof leaks: recording ", out);
    out_text(out, l->recording);
    for (size_t i = 0; i < p->nsources; i++) {
        if (strcmp(p->sources[i].recording, l->recording))
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
                     "samples left out as younger\n",
                l->min_gcs, l->min_gcs == 1 ? "" : "s", (unsigned long long)l->young,
                (unsigned long long)(l->young + l->kept));
}

static void print_row(FILE *out, const struct rp_leaks *l, const struct rp_leak_site *s,
                      size_t rank, uint32_t trace)
{
    fprintf(out, "%5zu %13.0f %14llu %14llu %11llu %6.3f %9.1e ", rank, s->slope * 60,
            (unsigned long long)s->first, (unsigned long long)s->last,
            (unsigned long long)s->objs_last, s->t.tau, s->t.p_up);
    if (l->all)
        fprintf(out, "%-9s ", rp_leak_verdict_names[s->v]);
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

void out_leaks_text(FILE *out, const struct rp_leaks *l, size_t top)
{
    size_t growing = l->growing;
    print_header(out, l);
    size_t rows = l->all ? l->nsites : growing;
    size_t shown = top < rows ? top : rows;
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
        fprintf(out, "# %zu more not shown (--top %zu)\n", rows - shown, top);
    if (!growing) {
        fprintf(out, "no growing allocation site");
        const struct rp_leak_site *s = l->nsites ? &l->sites[0] : NULL;
        if (s && s->v != RP_LEAK_FLAT) {
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

static void json_site(FILE *out, const struct rp_leaks *l, const struct rp_leak_site *s)
{
    fprintf(out, "{\"verdict\":\"%s\",\"bytes_per_min\":%.0f,\"growth_bytes\":%.0f,"
                 "\"live_first\":%llu,\"live_last\":%llu,\"objects_last\":%llu,"
                 "\"tau\":%.6f,\"p\":%.6g,\"class\":", rp_leak_verdict_names[s->v],
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

void out_leaks_json(FILE *out, const struct rp_leaks *l, size_t top)
{
    size_t growing = l->growing;
    size_t rows = l->all ? l->nsites : growing;
    size_t shown = top < rows ? top : rows;
    fputs("{\"recording\":", out);
    out_json_cstring(out, l->recording);
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
