/*
 * tools/outputs/out_common.c — helpers shared by the text writers (see out_common.h).
 */
#include "out_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "legend.h"
#include "model/live.h"
#include "model/scan.h"
#include "model/timespec.h"
#include "ringprof/json_escape.h"
#include "ringprof/labels.h"

double out_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void out_figures(FILE *out, const struct rp_profile *p, const uint64_t *total,
                 const uint64_t *self, uint64_t whole, int times)
{
    char a[32], b[32];
    fprintf(out, "%14llu %14llu %7.2f%% %7.2f%% %9llu",
            (unsigned long long)total[RP_PV_WEIGHT], (unsigned long long)self[RP_PV_WEIGHT],
            out_pct(total[RP_PV_WEIGHT], whole), out_pct(self[RP_PV_WEIGHT], whole),
            (unsigned long long)total[RP_PV_SAMPLES]);
    if (times)
        fprintf(out, " %12s %12s", rp_prof_fmt_time(p, total[RP_PV_WEIGHT], a, sizeof a),
                rp_prof_fmt_time(p, self[RP_PV_WEIGHT], b, sizeof b));
}

/* What a frame is: "method", "method:line", ..., or with --group "class" or
 * "package" (a group has no lines). */
static const char *gran_name(const struct rp_profile *p)
{
    enum rp_prof_granularity g = p->granularity;
    if (p->group != RP_GROUP_METHOD)
        return rp_norm_group_noun(p->group);
    return g == RP_GRAN_LINE ? "method:line" : g == RP_GRAN_BCI ? "method@bci"
         : g == RP_GRAN_FULL ? "method (with line and bci)"
         : g == RP_GRAN_SITE ? "method (traces with lines)" : "method";
}

/* What the weight of the wall and lock kinds is (include/ringprof/events.h), and
 * for wall the time in each thread state: a wall profile mixes running and
 * waiting, and the states are what tells them apart. Nothing for other kinds. */
static void out_kind_notes(FILE *out, const struct rp_profile *p)
{
    char t[64];
    if (!strcmp(p->kind, RP_KIND_LOCK))
        fputs("# weight: ns waited to enter a contended monitor (synchronized), per "
              "wait longer than the agent's lock= threshold; the leaf frame is the "
              "monitor's class\n", out);
    if (!strcmp(p->kind, RP_KIND_WALL))
        fputs("# weight: wall-clock ns the sampled threads spent, in whatever state "
              "(running, waiting, blocked, ...); a sample stands for the time since "
              "its thread's previous one\n", out);
    if (!p->has_states)
        return;
    uint64_t whole = 0;
    for (int s = 0; s < RP_TS_COUNT; s++)
        whole += p->state_weight[s];
    fputs("# states:", out);
    const char *sep = " ";
    for (int s = 0; s < RP_TS_COUNT; s++) {
        if (!p->state_samples[s])
            continue;
        fprintf(out, "%s%s %s (%.2f%%, %llu sample%s)", sep,
                rp_thread_state_name((unsigned)s),
                rp_prof_fmt_time(p, p->state_weight[s], t, sizeof t),
                out_pct(p->state_weight[s], whole),
                (unsigned long long)p->state_samples[s], OUT_S(p->state_samples[s]));
        sep = ", ";
    }
    fputs(whole ? "\n" : " none kept\n", out);
}

void out_header(FILE *out, const struct rp_profile *p, const struct rp_out_options *o,
                const char *format)
{
    const struct rp_prof_node *root = &p->nodes[0];
    char t[64];
    fprintf(out, "# ringprof %s: kind ", format);
    out_text(out, p->kind[0] ? p->kind : "-");
    fputs(" (unit ", out);
    out_text(out, p->unit[0] ? p->unit : "-");
    fprintf(out, "), %llu sample%s, weight %llu",
            (unsigned long long)root->total[RP_PV_SAMPLES], OUT_S(root->total[RP_PV_SAMPLES]),
            (unsigned long long)root->total[RP_PV_WEIGHT]);
    if (p->ns_per_unit > 0)
        fprintf(out, " (%s)", rp_prof_fmt_time(p, root->total[RP_PV_WEIGHT], t, sizeof t));
    fputc('\n', out);
    if (p->wall_first) {
        char a[64], b[64];
        rp_fmt_wall(a, sizeof a, p->wall_first);
        rp_fmt_wall(b, sizeof b, p->wall_last);
        fprintf(out, "# time %s .. %s\n", a, b);
    }
    for (size_t i = 0; i < p->nsources; i++) {
        const struct rp_prof_source *s = &p->sources[i];
        fputs("# recording ", out);
        out_text(out, s->recording);
        fputs(": pid ", out);
        out_text(out, s->pid[0] ? s->pid : "?");
        fputs(" on ", out);
        out_text(out, s->host[0] ? s->host : "?");
        if (s->jvm[0]) {
            fputs(", jvm ", out);
            out_text(out, s->jvm);
        }
        fputc('\n', out);
    }
    fprintf(out, "# frames %s, threads %s", gran_name(p),
            p->per_thread ? "separate" : "merged");
    if (o && o->cutoff_pct > 0)
        fprintf(out, ", cutoff %.2f%%", o->cutoff_pct);
    fputc('\n', out);
    if (o && o->live && !strcmp(p->kind, RP_KIND_LIVE)) {
        fputs("# snapshot ", out);
        out_text(out, o->live->note);
        fputc('\n', out);
    }
    out_kind_notes(out, p);
    const struct rp_prof_stats *st = &p->stats;
    if (st->samples_other_kind || st->samples_thread_filtered || st->samples_time_filtered
        || st->samples_frame_filtered || st->samples_unresolved ||
        st->samples_instant_filtered || st->samples_state_filtered) {
        fprintf(out, "# samples not shown: %llu of other kinds, %llu by --thread, "
                     "%llu by --from/--to, %llu by --include/--exclude, "
                     "%llu of unknown kind",
                (unsigned long long)st->samples_other_kind,
                (unsigned long long)st->samples_thread_filtered,
                (unsigned long long)st->samples_time_filtered,
                (unsigned long long)st->samples_frame_filtered,
                (unsigned long long)st->samples_unresolved);
        if (st->samples_instant_filtered)
            fprintf(out, ", %llu of other snapshots",
                    (unsigned long long)st->samples_instant_filtered);
        if (st->samples_young_filtered)
            fprintf(out, ", %llu younger than --min-gcs",
                    (unsigned long long)st->samples_young_filtered);
        if (st->samples_state_filtered)
            fprintf(out, ", %llu by --state",
                    (unsigned long long)st->samples_state_filtered);
        fputc('\n', out);
    }
}

void out_indent(FILE *out, size_t depth)
{
    static const char spaces[2 * OUT_INDENT_MAX] = {[0 ... 2 * OUT_INDENT_MAX - 1] = ' '};
    fwrite(spaces, 1, 2 * (depth < OUT_INDENT_MAX ? depth : OUT_INDENT_MAX), out);
    if (depth > OUT_INDENT_MAX)
        fprintf(out, "[depth %zu] ", depth);
}

void out_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
    }
}

void out_frame_text(FILE *out, const struct rp_profile *p, const struct rp_prof_frame *f)
{
    (void)p;
    static const char *const tags[RP_FRAME_TYPES] = {
        [RP_FRAME_INTERPRETED] = " [interpreted]", [RP_FRAME_INLINED] = " [inlined]",
        [RP_FRAME_NATIVE] = " [native]", [RP_FRAME_CPP] = " [c++]",
        [RP_FRAME_KERNEL] = " [kernel]",
    };
    out_text(out, f->display);
    if (f->type >= 0 && f->type < RP_FRAME_TYPES && tags[f->type])
        fputs(tags[f->type], out);
}

void out_node_text(FILE *out, const struct rp_profile *p, uint32_t node)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, node);
    if (f) {
        out_frame_text(out, p, f);
        return;
    }
    out_text(out, rp_prof_node_name(p, node));
    if (p->nodes[node].kind == RP_PNODE_THREAD) {
        /* Name the thread fully: names repeat across JVMs and thread pools. */
        const struct rp_prof_thread *t = &p->threads[p->nodes[node].ref];
        fprintf(out, " (tid %llu", (unsigned long long)t->os_tid);
        if (p->nsources > 1) {
            fputs(", ", out);
            out_text(out, p->sources[t->source].recording);
        }
        fputc(')', out);
    }
}

/* One TRACE frame, HPROF style: "name(File.java:123)", the line in the
 * parenthesis only (the display of a line-granularity frame has it too), a bci
 * as the frame's display shows it. */
static void trace_frame(FILE *out, const struct rp_profile *p, const struct rp_prof_frame *f)
{
    const struct rp_prof_method *m = &p->methods[f->method];
    fputc('\t', out);
    out_text(out, p->granularity == RP_GRAN_BCI ? f->display : m->display);
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

void out_print_trace(FILE *out, const struct rp_profile *p, uint32_t node, uint32_t number,
                     struct out_legend *legend)
{
    uint32_t thread = RP_PROF_NONE;
    for (uint32_t x = node; x != 0; x = p->nodes[x].parent)
        if (p->nodes[x].kind == RP_PNODE_THREAD)
            thread = p->nodes[x].ref;
    fprintf(out, "TRACE %u:", number);
    if (thread != RP_PROF_NONE) {
        fputs(" (thread=", out);
        out_text(out, p->threads[thread].label);
        fputc(')', out);
    }
    fputc('\n', out);
    for (uint32_t x = node; x != 0; x = p->nodes[x].parent) {
        const struct rp_prof_frame *f = rp_prof_node_frame(p, x);
        if (f)
            trace_frame(out, p, f);
        if (f && legend)
            out_legend_add(legend, f->display, f->type);
    }
}

static void emit_file(void *ctx, const char *bytes, size_t n)
{
    fwrite(bytes, 1, n, ctx);
}

/* Write s (len bytes) as a JSON string that is safe inside a <script> element. */
void out_json_string(FILE *out, const char *str, size_t len)
{
    putc('"', out);
    rp_json_escape(str, len, RP_JSON_ESC_HTML | RP_JSON_ESC_CONTROLS, emit_file, out);
    putc('"', out);
}

void out_json_cstring(FILE *out, const char *s)
{
    out_json_string(out, s ? s : "", s ? strlen(s) : 0);
}

/* `s` centred in `width` columns, then a space. */
static void centred(FILE *out, const char *s, int width)
{
    int n = (int)strlen(s), left = n < width ? (width - n) / 2 : 0;
    fprintf(out, "%*s%-*s ", left, "", width - left, s);
}

void out_group_heading(FILE *out, const char *const *names, const int *widths)
{
    size_t i = 0;
    for (; names[i + 1]; i++)
        centred(out, names[i], widths[i]);
    fprintf(out, "%s\n", names[i]);   /* the last, over the names: left-aligned */
}

void out_fmt_u64(char *buf, size_t cap, int have, uint64_t v)
{
    if (have)
        snprintf(buf, cap, "%llu", (unsigned long long)v);
    else
        snprintf(buf, cap, "-");
}

const char *out_fmt_bytes(double v, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double a = fabs(v);
    size_t u = 0;
    while (a >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        a /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0f B", v);
    else
        snprintf(buf, cap, "%s%.2f %s", v < 0 ? "-" : "", a, units[u]);
    return buf;
}

const char *out_fmt_weight(const struct rp_profile *p, int have, double w, int sign,
                           char *buf, size_t cap)
{
    if (!have) {
        snprintf(buf, cap, "-");
        return buf;
    }
    const char *s = sign && w > 0 ? "+" : w < 0 ? "-" : "";
    double a = fabs(w);
    char t[48];
    if (p->ns_per_unit > 0)
        rp_prof_fmt_time(p, (uint64_t)llround(a), t, sizeof t);
    else if (!strcmp(p->unit, RP_UNIT_BYTES))
        out_fmt_bytes(a, t, sizeof t);
    else
        snprintf(t, sizeof t, "%.0f", a);
    snprintf(buf, cap, "%s%s", s, t);
    return buf;
}

const char *out_title(const struct rp_profile *p, const char *fallback, char *buf,
                      size_t cap)
{
    char shown[3][256];
    size_t len = 0, nshown = 0, rest = 0;
    buf[0] = 0;
    for (size_t i = 0; i < p->nsources; i++) {
        const struct rp_prof_source *s = &p->sources[i];
        if (!s->service[0] && !s->main[0])
            continue;
        char name[256];
        rp_out_service_name(NULL, s, name, sizeof name);
        size_t k = 0;   /* a name an earlier recording gave: said once */
        while (k < nshown && strcmp(shown[k], name))
            k++;
        if (k < nshown)
            continue;
        if (nshown == 3) {
            rest++;
            continue;
        }
        snprintf(shown[nshown++], sizeof shown[0], "%s", name);
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", name);
    }
    if (rest && len < cap)
        snprintf(buf + len, cap - len, " and %zu more recording%s", rest, rest == 1 ? "" : "s");
    return nshown ? buf : fallback;
}

char *out_system_name(const struct rp_prof_method *m)
{
    if (m->plain)
        return rp_xstrdup(m->raw);
    size_t len = strlen(m->klass) + strlen(m->name) + strlen(m->signature) + 2;
    char *sys = rp_xmalloc(len);
    snprintf(sys, len, "%s%s%s%s", m->klass, m->klass[0] ? "." : "", m->name, m->signature);
    return sys;
}

/* Whether --label gave key k (klen bytes). */
static int label_given(const struct rp_out_options *o, const char *k, size_t klen)
{
    for (size_t i = 0; i < o->nlabels; i++)
        if (!strncmp(o->labels[i], k, klen) && o->labels[i][klen] == '=')
            return 1;
    return 0;
}

void out_each_label(const struct rp_prof_source *s, const struct rp_out_options *o,
                    void (*fn)(const char *key, const char *value, void *arg), void *arg)
{
    struct rp_label l;
    char k[RP_LABEL_KEY_MAX + 1], v[RP_LABEL_VALUE_MAX + 1];
    for (size_t pos = 0; s && rp_labels_next(s->labels, &pos, &l);) {
        if (label_given(o, l.key, l.klen))
            continue;
        snprintf(k, sizeof k, "%.*s", (int)l.klen, l.key);
        snprintf(v, sizeof v, "%.*s", (int)l.vlen, l.value);
        fn(k, v, arg);
    }
    for (size_t i = 0; i < o->nlabels; i++) {
        size_t klen = strcspn(o->labels[i], "=");
        snprintf(k, sizeof k, "%.*s", (int)klen, o->labels[i]);
        fn(k, o->labels[i] + klen + (o->labels[i][klen] == '='), arg);
    }
}

void out_events_hooks(struct rp_prof_options *po, void *arg, rp_prof_sample_fn *on_sample,
                      rp_prof_event_fn *on_event, rp_prof_chunk_fn *on_chunk)
{
    po->granularity = RP_GRAN_FULL;
    po->state_frames = 0;
    po->on_sample = on_sample;
    po->on_event = on_event;
    po->on_chunk = on_chunk;
    po->on_sample_arg = arg;
}

int out_page(FILE *out, const char *tpl, size_t len, const struct out_slot *slots,
             size_t nslots)
{
    for (size_t i = 0; i < nslots; i++) {
        size_t mlen = strlen(slots[i].marker);
        const char *m = memmem(tpl, len, slots[i].marker, mlen);
        const char *again = m ? memmem(m + mlen, len - (size_t)(m + mlen - tpl),
                                       slots[i].marker, mlen) : NULL;
        if (!m || again) {
            fprintf(stderr, "ringprof: the page template has %s %s (build bug)\n",
                    m ? "more than one" : "no", slots[i].marker);
            return -1;
        }
    }
    const char *at = tpl, *end = tpl + len;
    while (at < end) {
        const char *next = end;
        const struct out_slot *which = NULL;
        for (size_t i = 0; i < nslots; i++) {
            const char *m = memmem(at, (size_t)(end - at), slots[i].marker,
                                   strlen(slots[i].marker));
            if (m && m < next) {
                next = m;
                which = &slots[i];
            }
        }
        fwrite(at, 1, (size_t)(next - at), out);
        if (!which)
            break;
        which->write(out, which->arg);
        at = next + strlen(which->marker);
    }
    return ferror(out) ? -1 : 0;
}
