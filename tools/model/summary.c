/*
 * tools/model/summary.c — `ringprof summary`'s model (summary.h): every chunk read
 * once, streaming, into the figures of its recording.
 *
 * Each event goes to the few figures it feeds: a sample to its kind's total, its
 * thread's column and, by its kind, the heap, wait or live figures; a counter to
 * its total; a THREAD record to the thread's names and flags; a gauge to the
 * telemetry and live-snapshot figures. The chunk's clock, recording, kinds
 * (which kind a sample is, where its extras are) and threads come from the
 * recording stream (stream.h), derived once per chunk. Nothing here prints.
 */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#include "ringprof/format.h"

const char *const rp_sum_column_names[RP_SUM_COLUMNS] = {
    RP_KIND_CPU, RP_KIND_ALLOC, RP_KIND_LIVE, RP_KIND_WALL, RP_KIND_LOCK, "other"};

static const char *const telemetry_names[RP_SUM_GAUGES] = {
    RP_GAUGE_CPU_USER, RP_GAUGE_CPU_SYS, RP_GAUGE_RSS, RP_GAUGE_HEAP_USED,
    RP_GAUGE_HEAP_COMMITTED, RP_GAUGE_GC_COUNT, RP_GAUGE_GC_TIME, RP_GAUGE_THREADS,
    RP_GAUGE_THREADS_RUNNABLE, RP_GAUGE_CLASSES, RP_GAUGE_AGENT_CPU};

static char *dup_or(const char *s, const char *fallback)
{
    return rp_xstrdup(s ? s : fallback);
}

/* The recording of the chunk the stream has begun: the stream numbers
 * recordings in the order it first sees them, as the summary adds them. */
static struct rp_sum_recording *recording_for(struct rp_summary *s)
{
    struct rp_reader *r = s->st.r;
    if (s->st.rec < s->nrecs)
        return &s->recs[s->st.rec];
    rp_xgrow((void **)&s->recs, &s->cap, s->nrecs, sizeof *s->recs, 1);
    struct rp_sum_recording *rec = &s->recs[s->nrecs++];
    memset(rec, 0, sizeof *rec);
    rec->id = rp_xstrdup(rp_stream_recording(&s->st));
    rec->pid = dup_or(rp_reader_meta(r, RP_META_PID), "?");
    rec->host = dup_or(rp_reader_meta(r, RP_META_HOST), "?");
    rec->jvm = dup_or(rp_reader_meta(r, RP_META_JVM_NAME), "?");
    rec->producer = dup_or(rp_reader_meta(r, RP_META_PRODUCER), "?");
    return rec;
}

static struct rp_sum_total *total_for(struct rp_sum_totals *tot, const char *name,
                                      const char *unit)
{
    uint32_t i = rp_strtab_cstr(&tot->names, name);
    if (i < tot->n)
        return &tot->t[i];
    rp_xgrow((void **)&tot->t, &tot->cap, tot->n, sizeof *tot->t, 1);
    struct rp_sum_total *t = &tot->t[tot->n++];
    t->name = rp_xstrdup(name);
    t->unit = rp_xstrdup(unit ? unit : "");
    t->count = t->sum = 0;
    return t;
}

static struct rp_sum_thread *thread_for(struct rp_sum_recording *rec, uint64_t os_tid,
                                        const char *name)
{
    uint32_t i = rp_idmap_put(&rec->thread_of_tid, os_tid, (uint32_t)rec->nthreads);
    if (i < rec->nthreads)
        return &rec->threads[i];
    rp_xgrow((void **)&rec->threads, &rec->cap_threads, rec->nthreads,
             sizeof *rec->threads, 1);
    struct rp_sum_thread *t = &rec->threads[rec->nthreads++];
    memset(t, 0, sizeof *t);
    t->os_tid = os_tid;
    rp_thread_names_init(&t->names, name ? name : "?");
    return t;
}

/* Thread th is now called `name`: before its first sample the newest name is
 * its name (a rename before it is not shown); after it, the stream's rule. */
static void thread_renamed(struct rp_sum_thread *th, const char *name)
{
    if (!name)
        return;
    if (th->sampled) {
        rp_thread_names_see(&th->names, name);
        return;
    }
    rp_thread_names_free(&th->names);
    rp_thread_names_init(&th->names, name);
}

static void note_time(struct rp_sum_recording *rec, const struct rp_stream *st,
                      uint64_t mono)
{
    if (!st->clock.ok || !mono)
        return;
    uint64_t wall = rp_stream_wall(st, mono);
    if (!rec->wall_first || wall < rec->wall_first)
        rec->wall_first = wall;
    if (wall > rec->wall_last)
        rec->wall_last = wall;
}

/* A live sample at `wall`: the figures of the latest snapshot instant. */
static void on_live_sample(struct rp_sum_heap *h, uint64_t wall, uint64_t age_gcs,
                           uint64_t bytes)
{
    if (wall < h->live_wall)
        return;
    if (wall > h->live_wall) {
        h->live_wall = wall;
        h->live_old = h->live_old_bytes = h->live_young = h->live_young_bytes = 0;
    }
    h->live_aged = 1;
    if (age_gcs >= 1) {
        h->live_old++;
        h->live_old_bytes += bytes;
    } else {
        h->live_young++;
        h->live_young_bytes += bytes;
    }
}

/* A GC pause: its count and length, its id's range, the heap after it. */
static void on_gc_sample(struct rp_sum_heap *h, const struct rp_stream *st,
                         const struct rp_stream_kind *k, const struct rp_event *ev)
{
    uint64_t w = ev->u.sample.weight;
    h->gcs++;
    h->pause_total += w;
    h->pause_max = w > h->pause_max ? w : h->pause_max;
    uint64_t id = rp_sx_value(k, ev, RP_SX_ID, 0);
    uint64_t used = rp_sx_value(k, ev, RP_SX_HEAP_USED, 0);
    if (id && (!h->gc_id_min || id < h->gc_id_min))
        h->gc_id_min = id;
    h->gc_id_max = id > h->gc_id_max ? id : h->gc_id_max;
    h->heap_used_max = used > h->heap_used_max ? used : h->heap_used_max;
    uint64_t wall = rp_stream_wall(st, ev->u.sample.time);
    if (used && wall >= h->last_gc_wall) {   /* 0: the agent could not read it */
        h->last_gc_wall = wall;
        h->heap_used_last = used;
        h->heap_committed_last = rp_sx_value(k, ev, RP_SX_HEAP_COMMITTED, 0);
    }
}

/* An alloc, gc or live sample. */
static void on_heap_sample(struct rp_sum_heap *h, const struct rp_stream *st,
                           const struct rp_stream_kind *k, const struct rp_event *ev)
{
    uint64_t w = ev->u.sample.weight;
    if (k->kind == RP_SK_ALLOC) {
        h->alloc_samples++;
        h->alloc_bytes += w;
        h->alloc_objects += k->x[RP_SX_OBJECTS] >= 0 ? rp_sx_value(k, ev, RP_SX_OBJECTS, 0)
                                                     : 1;
    } else if (k->kind == RP_SK_GC) {
        on_gc_sample(h, st, k, ev);
    } else if (k->kind == RP_SK_LIVE && k->x[RP_SX_AGE_GCS] >= 0 && st->clock.ok) {
        on_live_sample(h, rp_stream_wall(st, ev->u.sample.time),
                       rp_sx_value(k, ev, RP_SX_AGE_GCS, 0), w);
    }
}

/* A wall or lock sample. */
static void on_wait_sample(struct rp_sum_waits *wf, const struct rp_stream *st,
                           const struct rp_stream_kind *k, const struct rp_event *ev)
{
    uint64_t w = ev->u.sample.weight;
    if (k->kind == RP_SK_WALL) {
        uint64_t s = rp_sx_value(k, ev, RP_SX_STATE, 0);   /* 0: RP_TS_UNKNOWN */
        if (s >= RP_TS_COUNT)
            s = RP_TS_UNKNOWN;
        wf->wall_samples++;
        wf->wall_ns += w;
        wf->state_samples[s]++;
        wf->state_ns[s] += w;
        wf->repeats += rp_sx_value(k, ev, RP_SX_REPEAT, 0) != 0;
    } else if (k->kind == RP_SK_LOCK) {
        wf->lock_samples++;
        wf->lock_ns += w;
        const char *name = rp_stream_x_class(st, k, ev, RP_SX_CLASS);
        struct rp_sum_total *t = total_for(&wf->monitors,
                                           name ? name : "[no class recorded]",
                                           RP_UNIT_NS);
        t->count++;
        t->sum += w;
    }
}

/* A telemetry gauge: extremes in time, sum and maximum. */
static void on_telemetry(struct rp_sum_gauge *g, const struct rp_stream *st,
                         const struct rp_event *ev)
{
    const char *name = ev->u.gauge.name;
    for (int i = 0; name && i < RP_SUM_GAUGES; i++) {
        if (strcmp(name, telemetry_names[i]))
            continue;
        struct rp_sum_gauge *f = &g[i];
        uint64_t t = rp_clock_time(&st->clock, ev->u.gauge.time);
        uint64_t v = ev->u.gauge.value;
        if (!f->n || t < f->t_first) {
            f->t_first = t;
            f->v_first = v;
        }
        if (!f->n || t >= f->t_last) {
            f->t_last = t;
            f->v_last = v;
        }
        f->n++;
        f->sum += v;
        if (v > f->max)
            f->max = v;
        return;
    }
}

/* A live snapshot's gauges: count the snapshots, keep the latest's figures. */
static void on_gauge(struct rp_sum_heap *h, const struct rp_stream *st,
                     const struct rp_event *ev)
{
    const char *name = ev->u.gauge.name;
    if (!name || (strcmp(name, RP_GAUGE_LIVE_OBJECTS) && strcmp(name, RP_GAUGE_LIVE_BYTES)))
        return;
    uint64_t wall = rp_stream_wall(st, ev->u.gauge.time);
    if (!strcmp(name, RP_GAUGE_LIVE_OBJECTS)) {
        h->snapshots++;
        if (wall >= h->last_snap_wall) {
            h->last_snap_wall = wall;
            h->last_snap_objects = ev->u.gauge.value;
        }
    } else if (wall >= h->last_snap_wall) {
        h->last_snap_wall = wall;
        h->last_snap_bytes = ev->u.gauge.value;
    }
}

/* The thread table's column of a kind (RP_SUM_*). */
static int thread_column(enum rp_skind kind)
{
    switch (kind) {
    case RP_SK_CPU: return RP_SUM_CPU;
    case RP_SK_ALLOC: return RP_SUM_ALLOC;
    case RP_SK_LIVE: return RP_SUM_LIVE;
    case RP_SK_WALL: return RP_SUM_WALL;
    case RP_SK_LOCK: return RP_SUM_LOCK;
    default: return RP_SUM_OTHER;
    }
}

/* A live sample of thread th at `t` (the snapshot's instant): its column counts
 * the objects of the latest snapshot the thread has any in; the table shows it
 * only if that is the recording's latest (rec->live_time). */
static void thread_live(struct rp_sum_recording *rec, struct rp_sum_thread *th, uint64_t t)
{
    if (t > rec->live_time)
        rec->live_time = t;
    if (t < th->live_time)
        return;
    if (t > th->live_time) {
        th->live_time = t;
        th->samples[RP_SUM_LIVE] = 0;
    }
    th->samples[RP_SUM_LIVE]++;
}

/* A sample's thread: its row, its column, its time that counts as CPU. */
static void on_thread_sample(struct rp_sum_recording *rec, const struct rp_stream *st,
                             const struct rp_stream_kind *k, const struct rp_event *ev)
{
    const struct rp_thread_info *ti = rp_stream_thread(st, ev->u.sample.thread);
    struct rp_sum_thread *th = thread_for(rec, ti ? ti->os_tid : 0, ti ? ti->name : NULL);
    if (!th->sampled && ti)
        thread_renamed(th, ti->name);
    th->sampled = 1;
    /* Readings of lock waits in progress (lock.waiting) are not samples of the
     * thread: `ringprof locks` counts each wait once, by the rule of events.h. */
    if (k->kind == RP_SK_LOCK_WAITING)
        return;
    int col = thread_column(k->kind);
    if (col == RP_SUM_LIVE)
        thread_live(rec, th, rp_clock_time(&st->clock, ev->u.sample.time));
    else
        th->samples[col]++;
    /* Wall and lock samples weigh time spent waiting as well as running: in
     * "sampled" they would pass for CPU. */
    if (col != RP_SUM_WALL && col != RP_SUM_LOCK && !strcmp(k->unit, RP_UNIT_NS))
        th->weight_ns += ev->u.sample.weight;
}

static void on_sample(struct rp_sum_recording *rec, struct rp_stream *st,
                      struct rp_sum_chunk *ch, const struct rp_event *ev)
{
    const struct rp_stream_kind *k = rp_stream_kind(st, ev->u.sample.kind);
    /* A KIND record whose name or unit string was lost to damage leaves those
     * NULL (chunk.h) (found by tests/fuzz: kind-without-name.rpc). */
    struct rp_sum_total *t = total_for(&rec->kinds,
                                       k->info && k->info->name ? k->name : "(unknown)",
                                       k->unit);
    t->count++;
    t->sum += ev->u.sample.weight;
    ch->samples++;
    if (ev->u.sample.thread || k->kind != RP_SK_GC)   /* a GC pause is the JVM's */
        on_thread_sample(rec, st, k, ev);
    on_heap_sample(&rec->heap, st, k, ev);
    on_wait_sample(&rec->waits, st, k, ev);
    note_time(rec, st, ev->u.sample.time);
}

static void on_thread(struct rp_sum_recording *rec, const struct rp_stream *st, uint32_t id)
{
    const struct rp_thread_info *ti = rp_stream_thread(st, id);
    if (!ti)
        return;
    struct rp_sum_thread *th = thread_for(rec, ti->os_tid, ti->name);
    thread_renamed(th, ti->name);
    th->java = !!(ti->flags & RP_THREAD_JAVA);
    th->ended = !!(ti->flags & RP_THREAD_ENDED);
}

static void on_thread_cpu(struct rp_sum_recording *rec, const struct rp_stream *st,
                          const struct rp_event *ev)
{
    const struct rp_thread_info *ti = rp_stream_thread(st, ev->u.thread_cpu.thread);
    struct rp_sum_thread *th = thread_for(rec, ti ? ti->os_tid : 0, ti ? ti->name : NULL);
    if (ev->u.thread_cpu.cpu_ns > th->cpu_ns)
        th->cpu_ns = ev->u.thread_cpu.cpu_ns;
}

/* A chunk's options as summary shows them: the agent's option string as given
 * (agent.options), then what `ctl set` changed before the chunk opened
 * (agent.options.set), which is what was in force while it was written. */
static uint32_t chunk_options(struct rp_sum_recording *rec, struct rp_reader *r)
{
    const char *given = rp_reader_meta(r, RP_META_OPTIONS);
    const char *set = rp_reader_meta(r, RP_META_OPTIONS_SET);
    if (!set)
        return rp_strtab_cstr(&rec->options_seen, given);
    size_t cap = (given ? strlen(given) : 0) + strlen(set) + 16;
    char *both = rp_xmalloc(cap);
    snprintf(both, cap, "%s%sctl set %s", given ? given : "", given ? "; " : "", set);
    uint32_t i = rp_strtab_cstr(&rec->options_seen, both);
    free(both);
    return i;
}

static struct rp_sum_chunk *chunk_new(struct rp_sum_recording *rec, struct rp_reader *r,
                                      const char *path)
{
    rp_xgrow((void **)&rec->chunks, &rec->cap_chunks, rec->nchunks, sizeof *rec->chunks, 1);
    struct rp_sum_chunk *ch = &rec->chunks[rec->nchunks++];
    memset(ch, 0, sizeof *ch);
    ch->path = rp_xstrdup(path);
    const char *seq = rp_reader_meta(r, RP_META_CHUNK_SEQ);
    ch->seq = seq ? rp_xstrdup(seq) : NULL;
    ch->options = chunk_options(rec, r);
    return ch;
}

/* One event of the chunk into its recording's figures. */
static void on_event(struct rp_sum_recording *rec, struct rp_stream *st,
                     struct rp_sum_chunk *ch, const struct rp_event *ev)
{
    switch (ev->type) {
    case RP_EV_SEGMENT:
        ch->bytes = ev->u.seg.offset + RP_SEG_HEADER_LEN + ev->u.seg.comp_len;
        break;
    case RP_EV_SAMPLE:
        on_sample(rec, st, ch, ev);
        break;
    case RP_EV_COUNTER:
        /* The name is NULL when its string was lost to damage. */
        total_for(&rec->counters, ev->u.counter.name ? ev->u.counter.name : "(unresolved)",
                  "")->sum += ev->u.counter.value;
        break;
    case RP_EV_THREAD:
        on_thread(rec, st, ev->u.thread.id);
        break;
    case RP_EV_THREAD_CPU:
        on_thread_cpu(rec, st, ev);
        break;
    case RP_EV_GAUGE:
        on_gauge(&rec->heap, st, ev);
        on_telemetry(rec->gauges, st, ev);
        break;
    }
}

void rp_summary_read(struct rp_summary *s, const char *path, struct rp_diag_counts *diag)
{
    struct rp_reader *r = rp_reader_open(path, rp_diag_print, diag);
    if (!r)
        return;
    rp_stream_begin(&s->st, r);
    struct rp_sum_recording *rec = recording_for(s);
    struct rp_sum_chunk *ch = chunk_new(rec, r, path);
    struct rp_event ev;
    while (rp_reader_next(r, &ev) == 1)
        on_event(rec, &s->st, ch, &ev);
    rp_stream_end(&s->st);
    rp_reader_stats(r, &ch->st);
    ch->being_written = !ch->st.clean_close && rp_reader_being_written(r);
    rp_reader_close(r);
}

/* ---------------------------------------------------------------- ranking -- */

/* The recording whose threads are being sorted: a thread's live column counts
 * only when it is of the recording's latest snapshot. */
static const struct rp_sum_recording *sorting;

uint64_t rp_sum_thread_samples(const struct rp_sum_recording *rec,
                               const struct rp_sum_thread *th, int c)
{
    if (c == RP_SUM_LIVE && th->live_time != rec->live_time)
        return 0;
    return th->samples[c];
}

/* By the columns in their order (cpu samples first), then CPU time. */
static int cmp_threads(const void *a, const void *b)
{
    const struct rp_sum_thread *x = a, *y = b;
    for (int c = 0; c < RP_SUM_COLUMNS; c++) {
        uint64_t u = rp_sum_thread_samples(sorting, x, c);
        uint64_t v = rp_sum_thread_samples(sorting, y, c);
        if (u != v)
            return u < v ? 1 : -1;
    }
    return x->cpu_ns < y->cpu_ns ? 1 : x->cpu_ns > y->cpu_ns ? -1 : 0;
}

static int cmp_totals(const void *a, const void *b)
{
    const struct rp_sum_total *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->name, y->name);
}

void rp_summary_rank(struct rp_summary *s)
{
    for (size_t i = 0; i < s->nrecs; i++) {
        struct rp_sum_recording *rec = &s->recs[i];
        /* A chunk with no THREAD record leaves threads NULL, and qsort's base
         * must not be NULL even for 0 elements (found by tests/fuzz:
         * no-threads.rpc). */
        sorting = rec;
        if (rec->nthreads)
            qsort(rec->threads, rec->nthreads, sizeof *rec->threads, cmp_threads);
        struct rp_sum_totals *mon = &rec->waits.monitors;
        if (mon->n)
            qsort(mon->t, mon->n, sizeof *mon->t, cmp_totals);
    }
}

/* ---------------------------------------------------------------- figures -- */

int rp_sum_is_loss(const char *name)
{
    return !strncmp(name, RP_COUNTER_LOST_PREFIX, strlen(RP_COUNTER_LOST_PREFIX));
}

uint64_t rp_sum_counter(const struct rp_sum_recording *rec, const char *name)
{
    for (size_t i = 0; i < rec->counters.n; i++)
        if (!strcmp(rec->counters.t[i].name, name))
            return rec->counters.t[i].sum;
    return 0;
}

double rp_sum_gauge_rate(const struct rp_sum_gauge *g)
{
    if (g->n < 2 || g->t_last <= g->t_first || g->v_last < g->v_first)
        return -1;
    return (double)(g->v_last - g->v_first) * 1e9 / (double)(g->t_last - g->t_first);
}

double rp_sum_gauge_mean(const struct rp_sum_gauge *g)
{
    return g->n ? (double)g->sum / (double)g->n : 0;
}

/* ----------------------------------------------------------------- memory -- */

static void free_totals(struct rp_sum_totals *tot)
{
    for (size_t i = 0; i < tot->n; i++) {
        free(tot->t[i].name);
        free(tot->t[i].unit);
    }
    free(tot->t);
    rp_strtab_free(&tot->names);
}

static void free_recording(struct rp_sum_recording *rec)
{
    free(rec->id);
    free(rec->pid);
    free(rec->host);
    free(rec->jvm);
    free(rec->producer);
    rp_strtab_free(&rec->options_seen);
    free_totals(&rec->kinds);
    free_totals(&rec->counters);
    free_totals(&rec->waits.monitors);
    rp_idmap_free(&rec->thread_of_tid);
    for (size_t k = 0; k < rec->nthreads; k++)
        rp_thread_names_free(&rec->threads[k].names);
    free(rec->threads);
    for (size_t k = 0; k < rec->nchunks; k++) {
        free(rec->chunks[k].path);
        free(rec->chunks[k].seq);
    }
    free(rec->chunks);
}

void rp_summary_free(struct rp_summary *s)
{
    for (size_t i = 0; i < s->nrecs; i++)
        free_recording(&s->recs[i]);
    free(s->recs);
    rp_stream_free(&s->st);
    memset(s, 0, sizeof *s);
}
