/*
 * tools/outputs/out_summary.c — `ringprof summary`'s text (out_summary.h): one
 * recording of the model (model/summary.h), block by block.
 *
 * The blocks, in order: the process and its options, the time range, samples
 * per kind, then the lines of the kinds that have them (allocation, GC, heap and
 * live snapshots; wall-clock states and lock waits; telemetry), losses by
 * reason, counters by group with the page of docs/ that explains them, the
 * threads table and the chunks' integrity. Weights read in their unit (ns as
 * seconds, bytes as MiB), instants in UTC to the millisecond.
 */
#include "out_summary.h"

#include <string.h>
#include <time.h>

#include "model/inputs.h"

#include "ringprof/format.h"

/* The counter of live objects the agent could not track (its table was full). */
#define LIVE_UNTRACKED "live.untracked"

static void fmt_wall(char *buf, size_t cap, uint64_t ns)
{
    time_t s = (time_t)(ns / 1000000000u);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t k = strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf + k, cap - k, ".%03u UTC", (unsigned)(ns / 1000000u % 1000u));
}

/* A weight in its unit, made readable: ns as seconds, bytes as MiB. */
static void fmt_weight(char *buf, size_t cap, uint64_t v, const char *unit)
{
    if (!strcmp(unit, RP_UNIT_NS))
        snprintf(buf, cap, "%.3f s", (double)v / 1e9);
    else if (!strcmp(unit, RP_UNIT_BYTES))
        snprintf(buf, cap, "%.1f MiB", (double)v / (1024.0 * 1024.0));
    else
        snprintf(buf, cap, "%llu %s", (unsigned long long)v, unit);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Whether a chunk was closed, and if not, who may still write it: only a ".part"
 * whose writer holds its lock is being written. */
static const char *chunk_state(const struct rp_sum_chunk *c)
{
    if (c->st.clean_close)
        return "closed";
    if (c->being_written)
        return "being written (its writer holds it)";
    if (rp_is_part_name(c->path))
        return "unfinished: its writer stopped before closing it";
    return "unfinished, and no writer holds it: its writer was killed, or the file "
           "was cut short after";
}

/* @return the number of chunks with any problem. */
static int print_chunks(FILE *out, const struct rp_sum_recording *rec, int all)
{
    int problems = 0;
    uint64_t ok = 0, bad = 0, partial = 0, bytes = 0;
    for (size_t i = 0; i < rec->nchunks; i++) {
        const struct rp_sum_chunk *c = &rec->chunks[i];
        ok += c->st.segments_ok;
        bad += c->st.segments_bad;
        partial += c->st.segments_partial;
        bytes += c->bytes;
        int trouble = c->st.segments_bad || c->st.segments_partial ||
                      c->st.records_bad || c->st.unresolved_refs;
        problems += trouble;
        if (!all && !trouble && c->st.clean_close)
            continue;
        /* The reader's pools over the chunk's bytes: what RP_READER_POOL_FACTOR
         * bounds (docs/format.md, "Reading"). */
        fprintf(out,
                "    %-44s %5llu ok %3llu bad %3llu cut  %s%s; pools %.2f x its bytes\n",
                base_name(c->path), (unsigned long long)c->st.segments_ok,
                (unsigned long long)c->st.segments_bad,
                (unsigned long long)c->st.segments_partial, chunk_state(c),
                c->st.unresolved_refs ? ", unresolved references" : "",
                c->bytes ? (double)c->st.pool_bytes / (double)c->bytes : 0.0);
    }
    fprintf(out, "  chunks      %zu (%llu bytes): %llu segments whole, %llu damaged, "
            "%llu cut off\n", rec->nchunks, (unsigned long long)bytes,
            (unsigned long long)ok, (unsigned long long)bad, (unsigned long long)partial);
    return problems;
}

static void print_losses(FILE *out, const struct rp_sum_recording *rec)
{
    uint64_t lost = 0;
    size_t plen = strlen(RP_COUNTER_LOST_PREFIX);
    for (size_t i = 0; i < rec->counters.n; i++)
        if (rp_sum_is_loss(rec->counters.t[i].name))
            lost += rec->counters.t[i].sum;
    fprintf(out, "  lost        %llu record%s\n", (unsigned long long)lost,
            lost == 1 ? "" : "s");
    for (size_t i = 0; i < rec->counters.n; i++)
        if (rp_sum_is_loss(rec->counters.t[i].name) && rec->counters.t[i].sum)
            fprintf(out, "    %-22s %12llu\n", rec->counters.t[i].name + plen,
                    (unsigned long long)rec->counters.t[i].sum);
}

/* The counters that are not losses, by what they are about: a group is named
 * with the page that explains its counters (docs/). A counter belongs to the
 * first group one of whose prefixes (or, for "*.x", suffixes) its name has. */
struct counter_group {
    const char *name, *about, *doc;
    const char *match[5];
};

static const struct counter_group counter_groups[] = {
    {"walk", "stack walks: recoveries, and stacks left incomplete (not losses)",
     "docs/engines.md#failed-walks-markers-and-counters",
     {"walk.", "agct.", "jvmti.", "*.no_java_frames", "*.get_stack_trace_failed"}},
    {"wall", "wall-clock sampling: visits, walks, repeats",
     "docs/engines.md#wall-clock-sampling", {"wall."}},
    {"lock", "lock contention: waits under the threshold, owners unknown",
     "docs/agent.md#lock-contention", {"lock."}},
    {"alloc", "allocation sampling and live objects",
     "docs/agent.md#allocation-sampling", {"alloc.", "live."}},
    {"telemetry", "telemetry readings that failed", "docs/agent.md#telemetry",
     {"telemetry."}},
    {"agent", "the agent's own trouble: memory, method names, its signal",
     "docs/format.md#event-kinds-written-by-the-agent",
     {"threads.", "methods.", "agent."}},
    {"other", "counters of another writer", "docs/format.md#counters-and-losses", {0}},
};
#define N_COUNTER_GROUPS (sizeof counter_groups / sizeof counter_groups[0])

static size_t counter_group_of(const char *name)
{
    size_t len = strlen(name);
    for (size_t g = 0; g + 1 < N_COUNTER_GROUPS; g++)
        for (size_t k = 0; k < 5 && counter_groups[g].match[k]; k++) {
            const char *m = counter_groups[g].match[k];
            size_t n = strlen(m);
            if (m[0] == '*' ? len >= n - 1 && !strcmp(name + len - (n - 1), m + 1)
                            : !strncmp(name, m, n))
                return g;
        }
    return N_COUNTER_GROUPS - 1;
}

/* One line per group of counters with its page; with --counters, each counter
 * under its group. */
static void print_counters(FILE *out, const struct rp_sum_recording *rec, int each)
{
    size_t in_group[N_COUNTER_GROUPS] = {0}, total = 0, groups = 0;
    for (size_t i = 0; i < rec->counters.n; i++)
        if (!rp_sum_is_loss(rec->counters.t[i].name)) {
            groups += !in_group[counter_group_of(rec->counters.t[i].name)]++;
            total++;
        }
    if (!total)
        return;
    fprintf(out, "  counters    %zu in %zu group%s%s\n", total, groups,
            groups == 1 ? "" : "s",
            each ? "" : " (--counters lists each with its total)");
    for (size_t g = 0; g < N_COUNTER_GROUPS; g++) {
        if (!in_group[g])
            continue;
        fprintf(out, "    %-9s %4zu counter%-2s %s (%s)\n", counter_groups[g].name,
                in_group[g], in_group[g] == 1 ? "" : "s", counter_groups[g].about,
                counter_groups[g].doc);
        for (size_t i = 0; each && i < rec->counters.n; i++)
            if (!rp_sum_is_loss(rec->counters.t[i].name) &&
                counter_group_of(rec->counters.t[i].name) == g)
                fprintf(out, "      %-34s %12llu\n", rec->counters.t[i].name,
                        (unsigned long long)rec->counters.t[i].sum);
    }
}

/* The allocation rate, over the recording's time range (all its events). */
static void print_allocated(FILE *out, const struct rp_sum_recording *rec)
{
    const struct rp_sum_heap *h = &rec->heap;
    char a[64];
    double secs = (double)(rec->wall_last - rec->wall_first) / 1e9;
    fmt_weight(a, sizeof a, h->alloc_bytes, RP_UNIT_BYTES);
    fprintf(out, "  allocated   %s, %llu objects (estimated from %llu samples)", a,
            (unsigned long long)h->alloc_objects, (unsigned long long)h->alloc_samples);
    if (secs > 0)
        fprintf(out, ": %.2f MiB/s, %.0f objects/s over %.3f s",
                (double)h->alloc_bytes / (1024.0 * 1024.0) / secs,
                (double)h->alloc_objects / secs, secs);
    fputc('\n', out);
}

/* GC pauses, and the records missing between the first and last id. */
static void print_pauses(FILE *out, const struct rp_sum_heap *h)
{
    fprintf(out, "  gc          %llu pause%s, %.3f ms in all, the longest %.3f ms",
            (unsigned long long)h->gcs, h->gcs == 1 ? "" : "s",
            (double)h->pause_total / 1e6, (double)h->pause_max / 1e6);
    if (h->gc_id_min) {
        uint64_t span = h->gc_id_max - h->gc_id_min + 1;
        fprintf(out, " (ids %llu..%llu", (unsigned long long)h->gc_id_min,
                (unsigned long long)h->gc_id_max);
        if (span > h->gcs)
            fprintf(out, ": %llu record%s missing", (unsigned long long)(span - h->gcs),
                    span - h->gcs == 1 ? "" : "s");
        fputc(')', out);
    }
    fputc('\n', out);
}

/* The heap after the last GC and the most after any. */
static void print_heap_after(FILE *out, const struct rp_sum_heap *h)
{
    char a[64], b[64];
    fmt_weight(a, sizeof a, h->heap_used_last, RP_UNIT_BYTES);
    fmt_weight(b, sizeof b, h->heap_used_max, RP_UNIT_BYTES);
    fprintf(out, "  heap        %s used after the last GC (the most after any: %s)", a, b);
    if (h->heap_committed_last) {
        fmt_weight(a, sizeof a, h->heap_committed_last, RP_UNIT_BYTES);
        fprintf(out, ", %s committed", a);
    }
    fputc('\n', out);
}

/* The live snapshots: the last one's objects, by age when the samples say it. */
static void print_live(FILE *out, const struct rp_sum_recording *rec)
{
    const struct rp_sum_heap *h = &rec->heap;
    char a[64], b[64], c[48];
    fmt_wall(a, sizeof a, h->last_snap_wall);
    fprintf(out, "  live        %llu snapshot%s; the last, %s: ",
            (unsigned long long)h->snapshots, h->snapshots == 1 ? "" : "s", a);
    if (h->live_aged && h->live_wall == h->last_snap_wall) {
        fmt_weight(b, sizeof b, h->live_old_bytes, RP_UNIT_BYTES);
        fmt_weight(c, sizeof c, h->live_young_bytes, RP_UNIT_BYTES);
        fprintf(out, "%s in %llu sampled objects that survived a GC; not yet collected, "
                     "younger than the last GC: %s in %llu",
                b, (unsigned long long)h->live_old, c, (unsigned long long)h->live_young);
    } else {
        fmt_weight(b, sizeof b, h->last_snap_bytes, RP_UNIT_BYTES);
        fprintf(out, "%llu objects sampled, %s", (unsigned long long)h->last_snap_objects,
                b);
    }
    uint64_t untracked = rp_sum_counter(rec, LIVE_UNTRACKED);
    if (untracked)
        fprintf(out, " (%llu sampled objects not tracked: the live table was full; "
                     "raise livemax)", (unsigned long long)untracked);
    fputc('\n', out);
}

/* Allocation rate, GC pauses, heap and live snapshots, for those the recording
 * has. */
static void print_heap(FILE *out, const struct rp_sum_recording *rec)
{
    const struct rp_sum_heap *h = &rec->heap;
    if (h->alloc_samples)
        print_allocated(out, rec);
    if (h->gcs)
        print_pauses(out, h);
    if (h->heap_used_last)
        print_heap_after(out, h);
    if (h->snapshots)
        print_live(out, rec);
}

/* Wall-clock samples (time per thread state) and lock samples (waits, the
 * monitor class waited for most). Nothing when the recording has neither. */
static void print_waits(FILE *out, const struct rp_sum_recording *rec)
{
    const struct rp_sum_waits *wf = &rec->waits;
    if (wf->wall_samples) {
        size_t threads = 0;
        for (size_t i = 0; i < rec->nthreads; i++)
            threads += rec->threads[i].samples[RP_SUM_WALL] != 0;
        fprintf(out, "  wall        %llu samples of %zu thread%s, %.3f s:",
                (unsigned long long)wf->wall_samples, threads, threads == 1 ? "" : "s",
                (double)wf->wall_ns / 1e9);
        const char *sep = " ";
        for (int s = 0; s < RP_TS_COUNT; s++) {
            if (!wf->state_samples[s])
                continue;
            fprintf(out, "%s%s %.3f s (%.1f%%)", sep, rp_thread_state_name((unsigned)s),
                    (double)wf->state_ns[s] / 1e9,
                    wf->wall_ns ? 100.0 * (double)wf->state_ns[s] / (double)wf->wall_ns
                                : 0);
            sep = ", ";
        }
        fprintf(out, "; %llu repeat%s of an idle thread's stack\n",
                (unsigned long long)wf->repeats, wf->repeats == 1 ? "" : "s");
    }
    if (wf->lock_samples) {
        const struct rp_sum_total *top = &wf->monitors.t[0];
        fprintf(out, "  lock        %llu contended wait%s, %.3f s waited; the most on %s "
                "(%.3f s, %llu wait%s, %.1f%%)%s\n",
                (unsigned long long)wf->lock_samples, wf->lock_samples == 1 ? "" : "s",
                (double)wf->lock_ns / 1e9, top->name, (double)top->sum / 1e9,
                (unsigned long long)top->count, top->count == 1 ? "" : "s",
                wf->lock_ns ? 100.0 * (double)top->sum / (double)wf->lock_ns : 0,
                wf->monitors.n > 1 ? "; ringprof locks ranks them all" : "");
    }
}

static double mib(double v)
{
    return v / (1024.0 * 1024.0);
}

/* The telemetry line: how many readings, over how long. @return 0 when the
 * recording has none. */
static int print_readings(FILE *out, const struct rp_sum_gauge *g)
{
    uint64_t readings = 0, t0 = 0, t1 = 0;
    for (int i = 0; i < RP_SUM_GAUGES; i++) {
        if (!g[i].n)
            continue;
        readings = g[i].n > readings ? g[i].n : readings;
        t0 = !t0 || g[i].t_first < t0 ? g[i].t_first : t0;
        t1 = g[i].t_last > t1 ? g[i].t_last : t1;
    }
    if (readings)
        fprintf(out, "  telemetry   %llu reading%s over %.3f s\n",
                (unsigned long long)readings, readings == 1 ? "" : "s",
                (double)(t1 - t0) / 1e9);
    return readings != 0;
}

/* The process's memory: resident set and heap. */
static void print_memory(FILE *out, const struct rp_sum_gauge *g)
{
    const struct rp_sum_gauge *rss = &g[RP_SUM_G_RSS], *used = &g[RP_SUM_G_HEAP_USED];
    const struct rp_sum_gauge *committed = &g[RP_SUM_G_HEAP_COMMITTED];
    if (rss->n)
        fprintf(out, "    rss       max %.1f MiB, average %.1f MiB\n",
                mib((double)rss->max), mib(rp_sum_gauge_mean(rss)));
    if (!used->n && !committed->n)
        return;
    fprintf(out, "    heap      ");
    if (used->n)
        fprintf(out, "used max %.1f MiB, average %.1f MiB", mib((double)used->max),
                mib(rp_sum_gauge_mean(used)));
    if (committed->n)
        fprintf(out, "%scommitted max %.1f MiB", used->n ? "; " : "",
                mib((double)committed->max));
    fputc('\n', out);
}

/* Collections and their time between the first and the last reading. */
static void print_collections(FILE *out, const struct rp_sum_gauge *g)
{
    const struct rp_sum_gauge *gc = &g[RP_SUM_G_GC_COUNT], *gct = &g[RP_SUM_G_GC_TIME];
    if (gc->n < 2 || gc->v_last < gc->v_first)
        return;
    uint64_t n = gc->v_last - gc->v_first;
    fprintf(out, "    gc        %llu collection%s", (unsigned long long)n,
            n == 1 ? "" : "s");
    if (gct->n >= 2 && gct->v_last >= gct->v_first)
        fprintf(out, ", %.3f ms (%.2f%% of the time)",
                (double)(gct->v_last - gct->v_first) / 1e6, rp_sum_gauge_rate(gct) / 1e7);
    fprintf(out, " over the readings\n");
}

/* Threads (all, runnable) and classes loaded. */
static void print_jvm_counts(FILE *out, const struct rp_sum_gauge *g)
{
    const struct rp_sum_gauge *all = &g[RP_SUM_G_THREADS];
    const struct rp_sum_gauge *run = &g[RP_SUM_G_THREADS_RUNNABLE];
    if (all->n || run->n) {
        fprintf(out, "    threads   ");
        if (all->n)
            fprintf(out, "total max %llu, average %.1f", (unsigned long long)all->max,
                    rp_sum_gauge_mean(all));
        if (run->n)
            fprintf(out, "%srunnable max %llu, average %.1f", all->n ? "; " : "",
                    (unsigned long long)run->max, rp_sum_gauge_mean(run));
        fputc('\n', out);
    }
    if (g[RP_SUM_G_CLASSES].n)
        fprintf(out, "    classes   %llu loaded at most\n",
                (unsigned long long)g[RP_SUM_G_CLASSES].max);
}

/* The telemetry gauges (telemetry=), where the recording has them. CPU rates
 * are in percent of one CPU, as top shows them. */
static void print_telemetry(FILE *out, const struct rp_sum_recording *rec)
{
    const struct rp_sum_gauge *g = rec->gauges;
    if (!print_readings(out, g))
        return;
    double user = rp_sum_gauge_rate(&g[RP_SUM_G_CPU_USER]);
    double sys = rp_sum_gauge_rate(&g[RP_SUM_G_CPU_SYS]);
    if (user >= 0 || sys >= 0) {
        fprintf(out, "    cpu       ");
        if (user >= 0)
            fprintf(out, "user %.1f%%", user / 1e7);
        if (sys >= 0)
            fprintf(out, "%ssys %.1f%%", user >= 0 ? ", " : "", sys / 1e7);
        fprintf(out, " of one CPU (average)\n");
    }
    print_memory(out, g);
    print_collections(out, g);
    print_jvm_counts(out, g);
    double agent = rp_sum_gauge_rate(&g[RP_SUM_G_AGENT_CPU]);
    if (agent >= 0) {
        fprintf(out, "    agent     CPU %.3f ms/s (%.2f%% of one CPU", agent / 1e6,
                agent / 1e7);
        if (user >= 0 && sys >= 0 && user + sys > 0)
            fprintf(out, ", %.2f%% of the process's CPU", 100.0 * agent / (user + sys));
        fprintf(out, ")\n");
    }
}

/* One row per thread with a column of samples per kind the threads have (the
 * live column: objects in the last snapshot), ranked by them in column order. */
static void print_threads(FILE *out, const struct rp_sum_recording *rec, size_t top)
{
    int shown[RP_SUM_COLUMNS] = {0}, any = 0;
    for (size_t i = 0; i < rec->nthreads; i++)
        for (int c = 0; c < RP_SUM_COLUMNS; c++)
            any |= shown[c] |= rp_sum_thread_samples(rec, &rec->threads[i], c) != 0;
    shown[RP_SUM_CPU] |= !any;   /* a table with no column of samples reads oddly */
    fprintf(out, "  threads     %zu\n", rec->nthreads);
    fprintf(out, "    %8s  %-28s", "tid", "name");
    for (int c = 0; c < RP_SUM_COLUMNS; c++)
        if (shown[c])
            fprintf(out, " %9s", rp_sum_column_names[c]);
    fprintf(out, " %12s %12s\n", "sampled", "cpu time");
    for (size_t i = 0; i < rec->nthreads && i < top; i++) {
        const struct rp_sum_thread *t = &rec->threads[i];
        char name[1024];
        rp_thread_names_show(&t->names, name, sizeof name);
        fprintf(out, "    %8llu  %-28s", (unsigned long long)t->os_tid, name);
        for (int c = 0; c < RP_SUM_COLUMNS; c++)
            if (shown[c])
                fprintf(out, " %9llu",
                        (unsigned long long)rp_sum_thread_samples(rec, t, c));
        fprintf(out, " %10.3f s %10.3f s%s\n", (double)t->weight_ns / 1e9,
                (double)t->cpu_ns / 1e9, t->ended ? "  (ended)" : "");
    }
    if (rec->nthreads > top)
        fprintf(out, "    ... %zu more (--threads N shows more)\n", rec->nthreads - top);
}

/* The options of each run of chunks that share them (chunk_options), in the
 * order read; one run prints as one line without its chunks. */
#define OPTION_RUNS_SHOWN 20
static void print_options(FILE *out, const struct rp_sum_recording *rec)
{
    size_t runs = 0;
    for (size_t i = 0; i < rec->nchunks; i++)
        runs += !i || rec->chunks[i].options != rec->chunks[i - 1].options;
    if (runs == 1 && !*rec->options_seen.s[rec->chunks[0].options])
        return;
    if (runs == 1) {
        fprintf(out, "  options     %s\n", rec->options_seen.s[rec->chunks[0].options]);
        return;
    }
    size_t shown = 0;
    for (size_t i = 0, j; i < rec->nchunks && shown < OPTION_RUNS_SHOWN; i = j, shown++) {
        j = i + 1;
        while (j < rec->nchunks && rec->chunks[j].options == rec->chunks[i].options)
            j++;
        const struct rp_sum_chunk *a = &rec->chunks[i], *b = &rec->chunks[j - 1];
        char from[32], to[32];
        snprintf(from, sizeof from, "%s", a->seq ? a->seq : "?");
        snprintf(to, sizeof to, "%s", b->seq ? b->seq : "?");
        fprintf(out, "  %-11s chunk%s %s%s%s: %s\n", shown ? "" : "options",
                i + 1 < j ? "s" : "", from, i + 1 < j ? "-" : "", i + 1 < j ? to : "",
                rec->options_seen.s[a->options]);
    }
    if (runs > shown)
        fprintf(out, "              ... %zu more changes of options\n", runs - shown);
}

/* A line per kind: its samples and weight (a level's snapshots, a reading's
 * meaning, instead of a weight that must not be added up). */
static void print_kinds(FILE *out, const struct rp_sum_recording *rec)
{
    char w[64];
    for (size_t i = 0; i < rec->kinds.n; i++) {
        const struct rp_sum_total *t = &rec->kinds.t[i];
        fmt_weight(w, sizeof w, t->sum, t->unit);
        if (!strcmp(t->name, RP_KIND_LIVE))   /* levels: never add them up */
            fprintf(out, "  samples     %-8s %12llu   in %llu snapshots\n", t->name,
                    (unsigned long long)t->count, (unsigned long long)rec->heap.snapshots);
        else if (!strcmp(t->name, RP_KIND_LOCK_WAITING))   /* readings too */
            fprintf(out, "  samples     %-8s %12llu   readings of waits in progress "
                         "(ringprof locks counts each wait once)\n",
                    t->name, (unsigned long long)t->count);
        else
            fprintf(out, "  samples     %-8s %12llu   weight %s\n", t->name,
                    (unsigned long long)t->count, w);
    }
}

int out_summary_text(FILE *out, const struct rp_sum_recording *rec,
                     const struct out_summary_options *o)
{
    char a[64], b[64];
    fprintf(out, "recording %s\n", rec->id);
    fprintf(out, "  process     pid %s on %s\n", rec->pid, rec->host);
    fprintf(out, "  jvm         %s\n", rec->jvm);
    fprintf(out, "  producer    %s\n", rec->producer);
    print_options(out, rec);
    if (rec->wall_first) {
        fmt_wall(a, sizeof a, rec->wall_first);
        fmt_wall(b, sizeof b, rec->wall_last);
        fprintf(out, "  time        %s .. %s (%.3f s)\n", a, b,
                (double)(rec->wall_last - rec->wall_first) / 1e9);
    } else {
        fprintf(out, "  time        no events\n");
    }
    print_kinds(out, rec);
    print_heap(out, rec);
    print_waits(out, rec);
    print_telemetry(out, rec);
    print_losses(out, rec);
    print_counters(out, rec, o->each_counter);
    print_threads(out, rec, o->threads);
    return print_chunks(out, rec, o->all_chunks);
}