/*
 * tools/outputs/out_timeline.c — `ringprof convert --format timeline`: what every
 * thread was doing over time, with the thread count and the telemetry on the
 * same time axis (the model: timeline.h; how to read it: docs/profiles.md).
 *
 * Two renderings of the same columns:
 *   - text (stdout, or -o with any other extension): a chart with one line per
 *     thread and one letter per column (--width columns), rows for GC pauses,
 *     lock waits, the thread count and each gauge as a sparkline, then a table
 *     with one line per column and every figure as a number;
 *   - SVG (-o x.svg), or an HTML page around the same SVG (-o x.html, or
 *     --html): one pixel column per column, a state run per <rect>; every
 *     mark has a <title>, which browsers show on hover, so the picture needs no
 *     script and opens offline. Exact lock waits and GC pauses are drawn from
 *     their own times, not the columns.
 *
 * Rows beyond --rows are not drawn; a line says how many and in which state
 * they spent most of their time. The thread count always counts every thread.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "model/timeline.h"
#include "model/timespec.h"
#include "out_common.h"

/* ---------------------------------------------------------------- shared -- */

/* Everything the two renderings share, computed once. */
struct view {
    const struct rp_tl *tl;
    const struct rp_tl_options *o;
    unsigned w;                 /* columns                                       */
    uint32_t *order;            /* threads in --sort order                       */
    size_t shown;               /* the first `shown` of order are drawn           */
    uint8_t *cols;              /* shown x w states                               */
    uint32_t *count;            /* w x (RP_TS_COUNT + 1): per state, then alive   */
    double *gauge[RP_TL_G_COUNT];   /* w values, NULL when the gauge has no reading */
    double *gc_ms;              /* per column: GC pause time inside it            */
    uint32_t *locks;            /* per column: lock waits overlapping it          */
};

#define NCOUNT (RP_TS_COUNT + 1)
#define ALIVE RP_TS_COUNT

static double secs(const struct rp_tl *tl, uint64_t t)
{
    return ((double)t - (double)tl->t0) / 1e9;
}

static uint64_t col_t(const struct view *v, unsigned i)
{
    unsigned __int128 d = (unsigned __int128)(v->tl->t1 - v->tl->t0) * i;
    return v->tl->t0 + (uint64_t)(d / v->w);
}

/* Columns [first, last] that [t0, t1) overlaps (a zero-length mark: its column). */
static void col_range(const struct view *v, uint64_t t0, uint64_t t1, unsigned *a,
                      unsigned *z)
{
    *a = 0;
    while (*a + 1 < v->w && col_t(v, *a + 1) <= t0)
        (*a)++;
    *z = *a;
    while (*z + 1 < v->w && col_t(v, *z + 1) < t1)
        (*z)++;
}

static void view_build(struct view *v, const struct rp_tl *tl,
                       const struct rp_tl_options *o, unsigned w)
{
    memset(v, 0, sizeof *v);
    v->tl = tl;
    v->o = o;
    v->w = w;
    v->shown = rp_tl_order(tl, o, &v->order);
    v->cols = rp_xmalloc((v->shown ? v->shown : 1) * w);
    v->count = rp_xmalloc((size_t)w * NCOUNT * sizeof *v->count);
    memset(v->count, 0, (size_t)w * NCOUNT * sizeof *v->count);
    uint8_t *scratch = rp_xmalloc(w);
    for (size_t r = 0; r < tl->nthreads; r++) {   /* every thread counts */
        uint8_t *c = r < v->shown ? v->cols + r * w : scratch;
        rp_tl_columns(tl, &tl->threads[v->order[r]], w, c);
        for (unsigned i = 0; i < w; i++)
            if (c[i] != RP_TL_NONE) {
                v->count[(size_t)i * NCOUNT + c[i]]++;
                v->count[(size_t)i * NCOUNT + ALIVE]++;
            }
    }
    free(scratch);
    for (int g = 0; g < RP_TL_G_COUNT; g++) {
        if (!tl->gauges[g].n)
            continue;
        v->gauge[g] = rp_xmalloc(w * sizeof(double));
        rp_tl_gauge_columns(tl, g, w, v->gauge[g]);
    }
    v->gc_ms = rp_xmalloc(w * sizeof *v->gc_ms);
    v->locks = rp_xmalloc(w * sizeof *v->locks);
    memset(v->locks, 0, w * sizeof *v->locks);
    for (unsigned i = 0; i < w; i++)
        v->gc_ms[i] = 0;
    for (size_t k = 0; k < tl->ngcs; k++) {
        unsigned a, z;
        col_range(v, tl->gcs[k].t0, tl->gcs[k].t1, &a, &z);
        for (unsigned i = a; i <= z; i++) {
            uint64_t s = col_t(v, i), e = i + 1 < w ? col_t(v, i + 1) : tl->t1;
            uint64_t x0 = tl->gcs[k].t0 > s ? tl->gcs[k].t0 : s;
            uint64_t x1 = tl->gcs[k].t1 < e ? tl->gcs[k].t1 : e;
            if (x1 > x0)
                v->gc_ms[i] += (double)(x1 - x0) / 1e6;
        }
    }
    for (size_t k = 0; k < tl->nlocks; k++) {
        unsigned a, z;
        col_range(v, tl->locks[k].t0, tl->locks[k].t1, &a, &z);
        for (unsigned i = a; i <= z; i++)
            v->locks[i]++;
    }
}

static void view_free(struct view *v)
{
    free(v->order);
    free(v->cols);
    free(v->count);
    for (int g = 0; g < RP_TL_G_COUNT; g++)
        free(v->gauge[g]);
    free(v->gc_ms);
    free(v->locks);
}

/* The state a hidden thread spent most of its time in. */
static unsigned main_state(const struct rp_tl_thread *t)
{
    unsigned best = RP_TS_UNKNOWN;
    for (unsigned s = 0; s < RP_TS_COUNT; s++)
        if (t->state_ns[s] > t->state_ns[best])
            best = s;
    return best;
}

/* "N more threads not shown (--rows N): 1900 mostly sleeping, 50 mostly parked" */
static void hidden_note(FILE *out, const struct view *v, const char *pre)
{
    size_t hidden = v->tl->nthreads - v->shown, by[RP_TS_COUNT] = {0};
    if (!hidden)
        return;
    for (size_t r = v->shown; r < v->tl->nthreads; r++)
        by[main_state(&v->tl->threads[v->order[r]])]++;
    fprintf(out, "%s%zu more thread%s not shown (--rows %zu; they are in the counts):",
            pre, hidden, hidden == 1 ? "" : "s", v->shown);
    const char *sep = " ";
    for (unsigned s = 0; s < RP_TS_COUNT; s++)
        if (by[s]) {
            fprintf(out, "%s%zu mostly %s", sep, by[s], rp_thread_state_name(s));
            sep = ", ";
        }
}

static const char *sort_name(enum rp_tl_sort s)
{
    return s == RP_TL_SORT_BUSY ? "busy" : s == RP_TL_SORT_START ? "start" : "name";
}

/* ------------------------------------------------------------------ text -- */

#define NAME_W 36

/* The thread's label, cut to fit: name, then " (tid N)". */
static void row_label(char *buf, size_t cap, const struct rp_tl *tl,
                      const struct rp_tl_thread *t)
{
    char tid[64];
    if (tl->nsources > 1)
        snprintf(tid, sizeof tid, " (tid %llu, %s)", (unsigned long long)t->os_tid,
                 tl->sources[t->source]);
    else
        snprintf(tid, sizeof tid, " (tid %llu)", (unsigned long long)t->os_tid);
    const char *name = t->name[0] ? t->name : "?";
    size_t nt = strlen(tid), nn = strlen(name);
    if (nt >= cap)
        nt = cap - 1;
    size_t room = cap - 1 - nt;
    if (nn > room) {   /* cut the name, mark the cut with '~' */
        nn = room ? room - 1 : 0;
        memcpy(buf, name, nn);
        if (room)
            buf[nn++] = '~';
    } else {
        memcpy(buf, name, nn);
    }
    memcpy(buf + nn, tid, nt);
    buf[nn + nt] = 0;
    for (char *p = buf; *p; p++)   /* one line a thread */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

static const char RAMP[] = "_.:-=+*#%@";

static void spark(FILE *out, const char *label, const double *val, unsigned w,
                  const char *unit)
{
    double lo = INFINITY, hi = -INFINITY;
    for (unsigned i = 0; i < w; i++)
        if (!isnan(val[i])) {
            lo = val[i] < lo ? val[i] : lo;
            hi = val[i] > hi ? val[i] : hi;
        }
    fprintf(out, "%-*s |", NAME_W, label);
    for (unsigned i = 0; i < w; i++) {
        int k = isnan(val[i]) ? -1 : hi > lo ? (int)lround((val[i] - lo) / (hi - lo) * 9) : 0;
        fputc(k < 0 ? ' ' : RAMP[k], out);
    }
    if (lo <= hi)
        fprintf(out, "| %.4g..%.4g%s%s\n", lo, hi, unit[0] ? " " : "", unit);
    else
        fputs("|\n", out);
}

static void text_axis(FILE *out, const struct view *v)
{
    /* "+0s" under the first column, the end's offset under the last */
    char end[32];
    snprintf(end, sizeof end, "+%.3gs", secs(v->tl, v->tl->t1));
    fprintf(out, "%-*s  +0s", NAME_W, "");
    int pad = (int)v->w - 3 - (int)strlen(end);
    fprintf(out, "%*s%s\n", pad > 1 ? pad : 1, "", end);
}

static void text_table(FILE *out, const struct view *v)
{
    const struct rp_tl *tl = v->tl;
    fputs("\n# per column: its start (s after the axis start), threads seen, threads in "
          "each state,\n# GC pause ms and lock waits in it, then the telemetry "
          "('-': no reading)\ncol t_s alive", out);
    for (unsigned s = 0; s < RP_TS_COUNT; s++)
        fprintf(out, " %s", rp_thread_state_name(s));
    fputs(" gc_ms lock_waits", out);
    for (int g = 0; g < RP_TL_G_COUNT; g++)
        if (v->gauge[g])
            fprintf(out, " %s", rp_tl_gauges[g].col);
    fputc('\n', out);
    for (unsigned i = 0; i < v->w; i++) {
        const uint32_t *c = &v->count[(size_t)i * NCOUNT];
        fprintf(out, "%u %.3f %u", i, secs(tl, col_t(v, i)), c[ALIVE]);
        for (unsigned s = 0; s < RP_TS_COUNT; s++)
            fprintf(out, " %u", c[s]);
        fprintf(out, " %.3f %u", v->gc_ms[i], v->locks[i]);
        for (int g = 0; g < RP_TL_G_COUNT; g++) {
            if (!v->gauge[g])
                continue;
            if (isnan(v->gauge[g][i]))
                fputs(" -", out);
            else
                fprintf(out, " %.6g", v->gauge[g][i]);
        }
        fputc('\n', out);
    }
}

static void text_header(FILE *out, const struct view *v, const struct rp_out_options *o)
{
    const struct rp_tl *tl = v->tl;
    char a[48], z[48];
    rp_fmt_wall(a, sizeof a, tl->t0);
    rp_fmt_wall(z, sizeof z, tl->t1);
    double span = secs(tl, tl->t1);
    fprintf(out, "# ringprof timeline: %s\n", o->title ? o->title : "");
    fprintf(out, "# %s .. %s (%.3f s), %u columns of %.4g s\n", a, z, span, v->w,
            span / v->w);
    fprintf(out, "# %zu thread%s (%zu shown, sorted by %s); wall samples %llu, lock "
                 "waits %llu, GC pauses %llu, gauge readings %llu\n",
            tl->nthreads, tl->nthreads == 1 ? "" : "s", v->shown, sort_name(v->o->sort),
            (unsigned long long)tl->wall_samples, (unsigned long long)tl->lock_samples,
            (unsigned long long)tl->gc_samples, (unsigned long long)tl->gauge_readings);
    fputs("# letters:", out);
    for (unsigned s = 1; s <= RP_TS_COUNT; s++) {   /* unknown last */
        unsigned st = s % RP_TS_COUNT;
        fprintf(out, " %c %s", rp_tl_letter(st), rp_thread_state_name(st));
    }
    fputs(", blank: no sample (the column shows the state that covered most of it)\n",
          out);
    fputs("# rows GC and locks: G a GC pause, digits the lock waits in the column "
          "(+ for 10 or more); sparklines " "_.:-=+*#%@" " low to high\n", out);
    if (!tl->wall_samples)
        fputs("# no wall samples (record them with wall=INTERVAL): telemetry only\n",
              out);
    if (tl->nsources > 1)
        fprintf(out, "# %zu recordings: the telemetry is the first one's (%s)\n",
                tl->nsources, tl->sources[0]);
}

static int write_text(FILE *out, const struct view *v, const struct rp_out_options *o)
{
    const struct rp_tl *tl = v->tl;
    text_header(out, v, o);
    text_axis(out, v);
    char label[NAME_W + 1];
    for (size_t r = 0; r < v->shown; r++) {
        row_label(label, sizeof label, tl, &tl->threads[v->order[r]]);
        fprintf(out, "%-*s |", NAME_W, label);
        for (unsigned i = 0; i < v->w; i++)
            fputc(rp_tl_letter(v->cols[r * v->w + i]), out);
        fputs("|\n", out);
    }
    hidden_note(out, v, "# ");
    if (tl->nthreads > v->shown)
        fputc('\n', out);
    if (tl->ngcs) {
        fprintf(out, "%-*s |", NAME_W, "GC pauses");
        for (unsigned i = 0; i < v->w; i++)
            fputc(v->gc_ms[i] > 0 ? 'G' : ' ', out);
        fputs("|\n", out);
    }
    if (tl->nlocks) {
        fprintf(out, "%-*s |", NAME_W, "lock waits");
        for (unsigned i = 0; i < v->w; i++)
            fputc(!v->locks[i] ? ' ' : v->locks[i] > 9 ? '+' : (char)('0' + v->locks[i]),
                  out);
        fputs("|\n", out);
    }
    double *alive = rp_xmalloc(v->w * sizeof *alive);
    if (tl->wall_samples) {
        for (unsigned i = 0; i < v->w; i++)
            alive[i] = v->count[(size_t)i * NCOUNT + ALIVE];
        spark(out, "threads seen", alive, v->w, "");
    }
    free(alive);
    for (int g = 0; g < RP_TL_G_COUNT; g++)
        if (v->gauge[g])
            spark(out, rp_tl_gauges[g].label, v->gauge[g], v->w, rp_tl_gauges[g].unit);
    text_table(out, v);
    return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------------- svg -- */

#define SVG_W 1200
#define PLOT_X 260
#define PLOT_W 900
#define ROW_H 12
#define ROW_GAP 2
#define CHART_H 48               /* the thread count   */
#define GAUGE_H 30               /* each gauge         */

static const char *const COLOR[RP_TS_COUNT + 1] = {
    "#c7c7c7", "#2ca02c", "#bcbd22", "#17becf", "#8c564b",
    "#d62728", "#ff7f0e", "#9467bd", "#aec7e8", "none"};

/* Text for XML content or attributes: markup characters as entities, control
 * characters as '?', bytes that are not UTF-8 as U+FFFD. */
static void xml(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned c = *p;
        if (c == '&')
            fputs("&amp;", out);
        else if (c == '<')
            fputs("&lt;", out);
        else if (c == '>')
            fputs("&gt;", out);
        else if (c == '"')
            fputs("&quot;", out);
        else if (c < 0x20 || c == 0x7f)
            fputc('?', out);
        if (c < 0x80) {
            if (c >= 0x20 && c != 0x7f && c != '&' && c != '<' && c != '>' && c != '"')
                fputc((int)c, out);
            p++;
            continue;
        }
        /* a UTF-8 sequence: copy it whole if well-formed */
        int n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        int ok = n > 0;
        for (int k = 1; ok && k < n; k++)
            ok = (p[k] & 0xc0) == 0x80;
        if (ok && n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
            ok = 0;   /* overlong, or a surrogate */
        if (ok && n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
            ok = 0;
        if (ok) {
            fwrite(p, 1, (size_t)n, out);
            p += n;
        } else {
            fputs("\xef\xbf\xbd", out);
            p++;
        }
    }
}

static double px(const struct view *v, uint64_t t)
{
    double span = (double)(v->tl->t1 - v->tl->t0);
    return PLOT_X + (span > 0 ? ((double)t - (double)v->tl->t0) / span * PLOT_W : 0);
}

static void fmt_dur(char *buf, size_t cap, double s)
{
    if (s >= 1)
        snprintf(buf, cap, "%.3f s", s);
    else
        snprintf(buf, cap, "%.1f ms", s * 1e3);
}

static void svg_legend(FILE *out, int y)
{
    int x = PLOT_X;
    for (unsigned s = 1; s <= RP_TS_COUNT; s++) {
        unsigned st = s % RP_TS_COUNT;
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                     "<text x=\"%d\" y=\"%d\">%s</text>\n", x, y, COLOR[st], x + 13, y + 9,
                rp_thread_state_name(st));
        x += 13 + 8 * (int)strlen(rp_thread_state_name(st)) + 14;
    }
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#000\"/>"
                 "<text x=\"%d\" y=\"%d\">lock wait / GC pause</text>\n",
            x, y + 3, x + 13, y + 9);
}

/* Ticks at 1, 2 or 5 x 10^k seconds, about 10 across. */
static void svg_axis(FILE *out, const struct view *v, int y, int h)
{
    double span = secs(v->tl, v->tl->t1);
    double step = span > 0 ? pow(10, floor(log10(span / 10))) : 1;
    if (span / step > 50)
        step *= 5;
    else if (span / step > 20)
        step *= 2;
    for (double s = 0; span > 0 && s <= span + step / 1e6; s += step) {
        double x = PLOT_X + s / span * PLOT_W;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>"
                     "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">+%gs</text>\n",
                x, y + 4, x, y + h, x, y, s);
    }
}

/* A hover target over columns [a, z] with a <title>. */
static void hover_open(FILE *out, const struct view *v, unsigned a, unsigned z, int y,
                       int h)
{
    double x0 = PLOT_X + (double)a * PLOT_W / v->w, x1 = PLOT_X + (double)(z + 1) * PLOT_W / v->w;
    fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"hit\">"
                 "<title>", x0, y, x1 - x0, h);
}

static void title_range(FILE *out, const struct view *v, unsigned a, unsigned z)
{
    uint64_t t0 = col_t(v, a), t1 = z + 1 < v->w ? col_t(v, z + 1) : v->tl->t1;
    char d[32];
    fmt_dur(d, sizeof d, (double)(t1 - t0) / 1e9);
    fprintf(out, "+%.3f s .. +%.3f s (%s)", secs(v->tl, t0), secs(v->tl, t1), d);
}

/* Thread count: one stacked area per state, hover per run of equal counts. */
static int svg_counts(FILE *out, const struct view *v, int y)
{
    uint32_t hi = 1;
    for (unsigned i = 0; i < v->w; i++)
        hi = v->count[(size_t)i * NCOUNT + ALIVE] > hi ? v->count[(size_t)i * NCOUNT + ALIVE]
                                                       : hi;
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">threads seen (max %u)</text>\n",
            PLOT_X - 8, y + CHART_H / 2, hi);
    double cw = (double)PLOT_W / v->w, sc = (double)CHART_H / hi;
    for (unsigned s = 1; s <= RP_TS_COUNT; s++) {
        unsigned st = s % RP_TS_COUNT;
        fprintf(out, "<path class=\"count\" data-state=\"%s\" fill=\"%s\" d=\"",
                rp_thread_state_name(st), COLOR[st]);
        for (unsigned i = 0; i < v->w; i++) {
            const uint32_t *c = &v->count[(size_t)i * NCOUNT];
            uint32_t below = 0;   /* states drawn before st, in legend order */
            for (unsigned k = 1; k < s; k++)
                below += c[k % RP_TS_COUNT];
            if (!c[st])
                continue;
            fprintf(out, "M%.2f %.2fh%.2fv%.2fh%.2fz", PLOT_X + i * cw,
                    y + CHART_H - (below + c[st]) * sc, cw, c[st] * sc, -cw);
        }
        fputs("\"/>\n", out);
    }
    for (unsigned a = 0; a < v->w;) {
        unsigned z = a;
        while (z + 1 < v->w && !memcmp(&v->count[(size_t)(z + 1) * NCOUNT],
                                       &v->count[(size_t)a * NCOUNT], NCOUNT * sizeof(uint32_t)))
            z++;
        const uint32_t *c = &v->count[(size_t)a * NCOUNT];
        hover_open(out, v, a, z, y, CHART_H);
        title_range(out, v, a, z);
        fprintf(out, ": %u thread%s", c[ALIVE], c[ALIVE] == 1 ? "" : "s");
        for (unsigned s = 0; s < RP_TS_COUNT; s++)
            if (c[s])
                fprintf(out, ", %u %s", c[s], rp_thread_state_name(s));
        fputs("</title></rect>\n", out);
        a = z + 1;
    }
    return y + CHART_H + 10;
}

static int svg_gauge(FILE *out, const struct view *v, int g, int y)
{
    const double *val = v->gauge[g];
    const struct rp_tl_gauge_def *d = &rp_tl_gauges[g];
    double lo = INFINITY, hi = -INFINITY;
    for (unsigned i = 0; i < v->w; i++)
        if (!isnan(val[i])) {
            lo = val[i] < lo ? val[i] : lo;
            hi = val[i] > hi ? val[i] : hi;
        }
    if (lo > hi)
        return y;
    double base = lo > 0 ? 0 : lo, top = hi > base ? hi : base + 1;
    fprintf(out, "<g class=\"gauge\" data-gauge=\"%s\"><text x=\"%d\" y=\"%d\" "
                 "text-anchor=\"end\">%s%s%s%s (max %.4g)</text>\n", d->name, PLOT_X - 8,
            y + GAUGE_H / 2, d->label, d->unit[0] ? ", " : "", d->unit, "", hi);
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n",
            PLOT_X, y, PLOT_W, GAUGE_H);
    fputs("<path class=\"line\" d=\"", out);
    double cw = (double)PLOT_W / v->w;
    int pen = 0;
    for (unsigned i = 0; i < v->w; i++) {
        if (isnan(val[i])) {
            pen = 0;
            continue;
        }
        fprintf(out, "%c%.2f %.2f", pen ? 'L' : 'M', PLOT_X + (i + 0.5) * cw,
                y + GAUGE_H - (val[i] - base) / (top - base) * GAUGE_H);
        pen = 1;
    }
    fputs("\"/>\n", out);
    for (unsigned a = 0; a < v->w;) {   /* hover: runs of the same printed value */
        char cur[32], next[32];
        snprintf(cur, sizeof cur, "%.4g", val[a]);
        unsigned z = a;
        while (z + 1 < v->w && (snprintf(next, sizeof next, "%.4g", val[z + 1]),
                                !strcmp(next, cur)))
            z++;
        if (!isnan(val[a])) {
            hover_open(out, v, a, z, y, GAUGE_H);
            xml(out, d->label);
            fprintf(out, " %s%s%s, ", cur, d->unit[0] ? " " : "", d->unit);
            title_range(out, v, a, z);
            fputs("</title></rect>\n", out);
        }
        a = z + 1;
    }
    fputs("</g>\n", out);
    return y + GAUGE_H + 8;
}

static int svg_gcs(FILE *out, const struct view *v, int y)
{
    const struct rp_tl *tl = v->tl;
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">GC pauses (%zu)</text>\n",
            PLOT_X - 8, y + ROW_H - 2, tl->ngcs);
    for (size_t k = 0; k < tl->ngcs; k++) {
        const struct rp_tl_gc *gc = &tl->gcs[k];
        double x0 = px(v, gc->t0), x1 = px(v, gc->t1);
        char d[32];
        fmt_dur(d, sizeof d, (double)(gc->t1 - gc->t0) / 1e9);
        fprintf(out, "<rect class=\"gc\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\">"
                     "<title>GC", x0, y, x1 - x0 > 1 ? x1 - x0 : 1, ROW_H);
        if (gc->id)
            fprintf(out, " #%llu", (unsigned long long)gc->id);
        fprintf(out, ": %s pause at +%.3f s", d, secs(tl, gc->t0));
        if (gc->heap_used)
            fprintf(out, ", heap %.1f MiB after", (double)gc->heap_used / 1048576);
        fputs("</title></rect>\n", out);
    }
    return y + ROW_H + 8;
}

static void svg_locks(FILE *out, const struct view *v, uint32_t thread, int y)
{
    /* Lock waits are few next to samples: a linear scan per shown row is cheap. */
    const struct rp_tl *tl = v->tl;
    for (size_t k = 0; k < tl->nlocks; k++) {
        const struct rp_tl_lock *l = &tl->locks[k];
        if (l->thread != thread)
            continue;
        double x0 = px(v, l->t0), x1 = px(v, l->t1);
        char d[32];
        fmt_dur(d, sizeof d, (double)(l->t1 - l->t0) / 1e9);
        fprintf(out, "<rect class=\"lock\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"3\">"
                     "<title>lock wait %s at +%.3f s on ", x0, y + ROW_H - 3,
                x1 - x0 > 1 ? x1 - x0 : 1, d, secs(tl, l->t0));
        xml(out, l->klass[0] ? l->klass : "an unknown class");
        fputs(", owner ", out);
        xml(out, l->owner[0] ? l->owner : "unknown");
        fputs("</title></rect>\n", out);
    }
}

static int svg_rows(FILE *out, const struct view *v, int y)
{
    const struct rp_tl *tl = v->tl;
    char label[NAME_W + 1];
    for (size_t r = 0; r < v->shown; r++, y += ROW_H + ROW_GAP) {
        const struct rp_tl_thread *t = &tl->threads[v->order[r]];
        const uint8_t *c = v->cols + r * v->w;
        row_label(label, sizeof label, tl, t);
        fputs("<g class=\"thread\" data-name=\"", out);
        xml(out, t->name);
        fprintf(out, "\" data-tid=\"%llu\"><text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
                (unsigned long long)t->os_tid, PLOT_X - 8, y + ROW_H - 2);
        xml(out, label);
        fputs("<title>", out);
        xml(out, t->name);
        fprintf(out, " (tid %llu):", (unsigned long long)t->os_tid);
        for (unsigned s = 0; s < RP_TS_COUNT; s++)
            if (t->state_ns[s]) {
                char d[32];
                fmt_dur(d, sizeof d, (double)t->state_ns[s] / 1e9);
                fprintf(out, " %s %s", rp_thread_state_name(s), d);
            }
        fputs("</title></text>\n", out);
        for (unsigned a = 0; a < v->w;) {
            unsigned z = a;
            while (z + 1 < v->w && c[z + 1] == c[a])
                z++;
            if (c[a] != RP_TL_NONE) {
                uint64_t t0 = col_t(v, a), t1 = z + 1 < v->w ? col_t(v, z + 1) : tl->t1;
                double x0 = PLOT_X + (double)a * PLOT_W / v->w;
                double x1 = PLOT_X + (double)(z + 1) * PLOT_W / v->w;
                fprintf(out, "<rect class=\"span\" data-state=\"%s\" data-t0=\"%.6f\" "
                             "data-t1=\"%.6f\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
                             "height=\"%d\" fill=\"%s\"><title>",
                        rp_thread_state_name(c[a]), secs(tl, t0), secs(tl, t1), x0, y,
                        x1 - x0, ROW_H, COLOR[c[a]]);
                xml(out, t->name);
                fprintf(out, ": %s, ", rp_thread_state_name(c[a]));
                title_range(out, v, a, z);
                fputs("</title></rect>\n", out);
            }
            a = z + 1;
        }
        svg_locks(out, v, v->order[r], y);
        fputs("</g>\n", out);
    }
    return y;
}

static const char SVG_STYLE[] =
    "text{font:11px sans-serif;fill:#222}"
    ".grid{stroke:#ddd;stroke-width:1}"
    ".hit{fill:transparent}.hit:hover{fill:rgba(0,0,0,.08)}"
    ".span:hover{stroke:#000;stroke-width:1}"
    ".frame{fill:none;stroke:#ccc}.line{fill:none;stroke:#1f77b4;stroke-width:1.5}"
    ".gc{fill:#000}.lock{fill:#000}.lock:hover,.gc:hover{fill:#d62728}";

static int svg_height(const struct view *v)
{
    const struct rp_tl *tl = v->tl;
    int h = 90 + (tl->ngcs ? ROW_H + 8 : 0) + (tl->wall_samples ? CHART_H + 10 : 0);
    for (int g = 0; g < RP_TL_G_COUNT; g++)
        h += v->gauge[g] ? GAUGE_H + 8 : 0;
    return h + (int)v->shown * (ROW_H + ROW_GAP) + 40;
}

/* `standalone`: an .svg file, which needs its namespace; inside HTML the
 * parser puts <svg> in it by itself, so the page holds no URL at all. */
static void write_svg(FILE *out, const struct view *v, const struct rp_out_options *o,
                      int standalone)
{
    const struct rp_tl *tl = v->tl;
    int h = svg_height(v);
    fprintf(out, "<svg%s width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "class=\"timeline\">\n<style>%s</style>\n",
            standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "", SVG_W, h, SVG_W, h,
            SVG_STYLE);
    char a[48];
    rp_fmt_wall(a, sizeof a, tl->t0);
    fputs("<text x=\"10\" y=\"18\" style=\"font-size:14px;font-weight:bold\">"
          "ringprof timeline: ", out);
    xml(out, o->title);
    fprintf(out, "</text>\n<text x=\"10\" y=\"34\">from %s, %.3f s; %zu thread%s (%zu shown, "
                 "sorted by %s); wall samples %llu, lock waits %llu, GC pauses %llu; hover "
                 "for details</text>\n", a, secs(tl, tl->t1), tl->nthreads,
            tl->nthreads == 1 ? "" : "s", v->shown,
            sort_name(v->o->sort), (unsigned long long)tl->wall_samples,
            (unsigned long long)tl->lock_samples, (unsigned long long)tl->gc_samples);
    svg_legend(out, 44);
    int y = 76;
    svg_axis(out, v, y, h - 40 - y);
    y += 8;
    if (tl->ngcs)
        y = svg_gcs(out, v, y);
    if (tl->wall_samples)
        y = svg_counts(out, v, y);
    for (int g = 0; g < RP_TL_G_COUNT; g++)
        if (v->gauge[g])
            y = svg_gauge(out, v, g, y);
    y = svg_rows(out, v, y + 4);
    fprintf(out, "<text x=\"10\" y=\"%d\">", y + 16);
    if (!tl->wall_samples)
        fputs("No wall samples (record them with wall=INTERVAL): telemetry only. ", out);
    hidden_note(out, v, "");
    fputs("</text>\n</svg>\n", out);
}

static void write_html(FILE *out, const struct view *v, const struct rp_out_options *o)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
          "ringprof timeline: ", out);
    xml(out, o->title);
    fputs("</title>\n<style>body{margin:8px;font:13px sans-serif}</style></head>\n<body>\n",
          out);
    write_svg(out, v, o, 0);
    fputs("<p>Each row is a thread; each column shows the state that covered most of it "
          "in the thread's wall-clock samples (blank: no sample). Black marks: lock waits "
          "(bottom of a row) and GC pauses. See docs/profiles.md, \"Timeline\".</p>\n"
          "</body></html>\n", out);
}

/* ------------------------------------------------------------ the writer -- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = s ? strlen(s) : 0, k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int rp_out_timeline(FILE *out, const struct rp_tl *tl, const struct rp_tl_options *to,
                    const struct rp_out_options *o)
{
    int svg = ends_with(o->out_path, ".svg");
    int html = !svg && (to->html || ends_with(o->out_path, ".html") ||
                        ends_with(o->out_path, ".htm"));
    struct view v;
    view_build(&v, tl, to, svg || html ? PLOT_W : to->width ? to->width
                                                            : RP_TL_DEFAULT_WIDTH);
    int rc = 0;
    if (svg) {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
        write_svg(out, &v, o, 1);
    }
    else if (html)
        write_html(out, &v, o);
    else
        rc = write_text(out, &v, o);
    view_free(&v);
    return rc || ferror(out) ? -1 : 0;
}
