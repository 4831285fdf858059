/*
 * tools/model/summary.c — `ringprof summary`'s model (summary.h): every chunk read
 * once, streaming, into the figures of its recording.
 *
 * Each event goes to the few figures it feeds: a sample to its kind's total, its
 * thread's column and, by its kind, the heap, wait or live figures; a counter to
 * its total; a THREAD record to the thread's names and flags; a gauge to the
 * telemetry and live-snapshot figures. Where a kind's extras are is looked up
 * once per kind (struct kind_fields), not per sample. Nothing here prints.
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

static void *grow(void *p, size_t n, size_t size)
{
    /* Arrays here grow one element at a time but double their storage. */
    if (n & (n - 1))
        return p;
    return rp_xreallocarray(p, n ? n * 2 : 1, size);
}

static char *dup_or(const char *s, const char *fallback)
{
    return rp_xstrdup(s ? s : fallback);
}

static struct rp_sum_recording *recording_for(struct rp_summary *s, struct rp_reader *r)
{
    const char *id = rp_reader_meta(r, RP_META_RECORDING);
    const char *pid = rp_reader_meta(r, RP_META_PID);
    char fallback[128];
    if (!id) {   /* no id: one recording per (pid, host) */
        snprintf(fallback, sizeof fallback, "pid %s on %s", pid ? pid : "?",
                 rp_reader_meta(r, RP_META_HOST) ? rp_reader_meta(r, RP_META_HOST)
                                                 : "?");
        id = fallback;
    }
    for (size_t i = 0; i < s->nrecs; i++)
        if (!strcmp(s->recs[i].id, id))
            return &s->recs[i];
    s->recs = grow(s->recs, s->nrecs, sizeof *s->recs);
    struct rp_sum_recording *rec = &s->recs[s->nrecs++];
    memset(rec, 0, sizeof *rec);
    rec->id = rp_xstrdup(id);
    rec->pid = dup_or(pid, "?");
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
    tot->t = grow(tot->t, tot->n, sizeof *tot->t);
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
    rec->threads = grow(rec->threads, rec->nthreads, sizeof *rec->threads);
    struct rp_sum_thread *t = &rec->threads[rec->nthreads++];
    memset(t, 0, sizeof *t);
    t->os_tid = os_tid;
    t->name = dup_or(name, "?");
    return t;
}

/* Thread th is now called `name` (rp_thread_display's rule): before its first
 * sample the newest name is its name; after it, the newest is `renamed`. */
static void thread_renamed(struct rp_sum_thread *th, const char *name)
{
    if (!name)
        return;
    if (!th->sampled) {
        free(th->name);
        th->name = rp_xstrdup(name);
        return;
    }
    free(th->renamed);
    th->renamed = strcmp(name, th->name) ? rp_xstrdup(name) : NULL;
}

/* Per-chunk clock mapping: monotonic event times to wall-clock ns. */
struct clock_map {
    uint64_t wall0, mono0;
    int valid;
};

static struct clock_map clock_map_of(struct rp_reader *r)
{
    struct clock_map m = {0, 0, 0};
    const char *w = rp_reader_meta(r, RP_META_START_WALL);
    const char *mo = rp_reader_meta(r, RP_META_START_MONO);
    if (w && mo) {
        m.wall0 = strtoull(w, NULL, 10);
        m.mono0 = strtoull(mo, NULL, 10);
        m.valid = 1;
    }
    return m;
}

static void note_time(struct rp_sum_recording *rec, const struct clock_map *m,
                      uint64_t mono)
{
    if (!m->valid || !mono)
        return;
    uint64_t wall = m->wall0 + (mono - m->mono0);
    if (!rec->wall_first || wall < rec->wall_first)
        rec->wall_first = wall;
    if (wall > rec->wall_last)
        rec->wall_last = wall;
}

/* Where a kind's extra fields are: looked up once per kind, not per sample. */
struct kind_fields {
    const struct rp_kind_info *kind;
    int is_alloc, is_gc, is_wall, is_lock, is_live;
    int objects, heap_used, heap_committed, id, age_gcs;   /* extra indexes, -1: absent */
    int state, repeat, klass;
};

static int is_kind(const struct rp_kind_info *k, const char *name)
{
    return k && k->name && !strcmp(k->name, name);
}

static int extra_of_kind(const struct rp_kind_info *k, const char *name)
{
    return k ? rp_extra_index(k->extra, k->nextra, name) : -1;
}

static void kind_fields_of(struct kind_fields *kf, const struct rp_kind_info *k)
{
    const struct rp_kind_vocab *wall = rp_kind_vocab(RP_KIND_WALL);
    memset(kf, 0, sizeof *kf);
    kf->kind = k;
    kf->is_alloc = is_kind(k, RP_KIND_ALLOC);
    kf->is_gc = is_kind(k, RP_KIND_GC);
    kf->is_live = is_kind(k, RP_KIND_LIVE);
    kf->is_wall = is_kind(k, RP_KIND_WALL);
    kf->is_lock = is_kind(k, RP_KIND_LOCK);
    kf->objects = extra_of_kind(k, RP_X_OBJECTS);
    kf->heap_used = extra_of_kind(k, RP_X_HEAP_USED);
    kf->heap_committed = extra_of_kind(k, RP_X_HEAP_COMMITTED);
    kf->id = extra_of_kind(k, RP_X_ID);
    kf->age_gcs = extra_of_kind(k, RP_X_AGE_GCS);
    kf->state = extra_of_kind(k, RP_X_STATE);
    kf->repeat = extra_of_kind(k, wall->extra[RP_WALL_X_REPEAT]);
    kf->klass = extra_of_kind(k, RP_X_CLASS);
}

static uint64_t extra_of(const struct rp_event *ev, int x)
{
    return x >= 0 && (uint32_t)x < ev->u.sample.nextra ? ev->u.sample.extra[x] : 0;
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
static void on_gc_sample(struct rp_sum_heap *h, const struct kind_fields *kf,
                         const struct clock_map *m, const struct rp_event *ev)
{
    uint64_t w = ev->u.sample.weight;
    h->gcs++;
    h->pause_total += w;
    h->pause_max = w > h->pause_max ? w : h->pause_max;
    uint64_t id = extra_of(ev, kf->id), used = extra_of(ev, kf->heap_used);
    if (id && (!h->gc_id_min || id < h->gc_id_min))
        h->gc_id_min = id;
    h->gc_id_max = id > h->gc_id_max ? id : h->gc_id_max;
    h->heap_used_max = used > h->heap_used_max ? used : h->heap_used_max;
    uint64_t wall = m->valid ? m->wall0 + (ev->u.sample.time - m->mono0) : 0;
    if (used && wall >= h->last_gc_wall) {   /* 0: the agent could not read it */
        h->last_gc_wall = wall;
        h->heap_used_last = used;
        h->heap_committed_last = extra_of(ev, kf->heap_committed);
    }
}

/* An alloc, gc or live sample (kf set for its kind). */
static void on_heap_sample(struct rp_sum_heap *h, const struct kind_fields *kf,
                           const struct clock_map *m, const struct rp_event *ev)
{
    uint64_t w = ev->u.sample.weight;
    if (kf->is_alloc) {
        h->alloc_samples++;
        h->alloc_bytes += w;
        h->alloc_objects += kf->objects >= 0 ? extra_of(ev, kf->objects) : 1;
    } else if (kf->is_gc) {
        on_gc_sample(h, kf, m, ev);
    } else if (kf->is_live && kf->age_gcs >= 0 && m->valid) {
        on_live_sample(h, m->wall0 + (ev->u.sample.time - m->mono0),
                       extra_of(ev, kf->age_gcs), w);
    }
}

/* A wall or lock sample (kf set for its kind). */
static void on_wait_sample(struct rp_sum_waits *wf, const struct kind_fields *kf,
                           struct rp_reader *r, const struct rp_event *ev)
{
    uint64_t w = ev->u.sample.weight;
    if (kf->is_wall) {
        uint64_t st = extra_of(ev, kf->state);
        if (st >= RP_TS_COUNT)
            st = RP_TS_UNKNOWN;
        wf->wall_samples++;
        wf->wall_ns += w;
        wf->state_samples[st]++;
        wf->state_ns[st] += w;
        wf->repeats += extra_of(ev, kf->repeat) != 0;
    } else if (kf->is_lock) {
        wf->lock_samples++;
        wf->lock_ns += w;
        uint64_t cls = extra_of(ev, kf->klass);
        const char *name = cls && cls <= UINT32_MAX ? rp_reader_class(r, (uint32_t)cls)
                                                    : NULL;
        struct rp_sum_total *t = total_for(&wf->monitors,
                                           name ? name : "[no class recorded]",
                                           RP_UNIT_NS);
        t->count++;
        t->sum += w;
    }
}

/* A telemetry gauge: extremes in time, sum and maximum. */
static void on_telemetry(struct rp_sum_gauge *g, const struct clock_map *m,
                         const struct rp_event *ev)
{
    const char *name = ev->u.gauge.name;
    for (int i = 0; name && i < RP_SUM_GAUGES; i++) {
        if (strcmp(name, telemetry_names[i]))
            continue;
        struct rp_sum_gauge *f = &g[i];
        uint64_t t = m->valid ? m->wall0 + (ev->u.gauge.time - m->mono0) : ev->u.gauge.time;
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
static void on_gauge(struct rp_sum_heap *h, const struct clock_map *m,
                     const struct rp_event *ev)
{
    const char *name = ev->u.gauge.name;
    if (!name || (strcmp(name, RP_GAUGE_LIVE_OBJECTS) && strcmp(name, RP_GAUGE_LIVE_BYTES)))
        return;
    uint64_t wall = m->valid ? m->wall0 + (ev->u.gauge.time - m->mono0) : 0;
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
static int thread_column(const char *kind)
{
    for (int c = 0; kind && c < RP_SUM_OTHER; c++)
        if (!strcmp(kind, rp_sum_column_names[c]))
            return c;
    return RP_SUM_OTHER;
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
static void on_thread_sample(struct rp_sum_recording *rec, struct rp_reader *r,
                             const struct clock_map *m, const struct rp_kind_info *k,
                             const struct rp_event *ev)
{
    const struct rp_thread_info *ti = rp_reader_thread(r, ev->u.sample.thread);
    struct rp_sum_thread *th = thread_for(rec, ti ? ti->os_tid : 0, ti ? ti->name : NULL);
    if (!th->sampled && ti)
        thread_renamed(th, ti->name);
    th->sampled = 1;
    /* Readings of lock waits in progress (lock.waiting) are not samples of the
     * thread: `ringprof locks` counts each wait once, by the rule of events.h. */
    if (is_kind(k, RP_KIND_LOCK_WAITING))
        return;
    int col = thread_column(k ? k->name : NULL);
    if (col == RP_SUM_LIVE)
        thread_live(rec, th, m->valid ? m->wall0 + (ev->u.sample.time - m->mono0)
                                      : ev->u.sample.time);
    else
        th->samples[col]++;
    /* Wall and lock samples weigh time spent waiting as well as running: in
     * "sampled" they would pass for CPU. */
    if (col != RP_SUM_WALL && col != RP_SUM_LOCK && k && k->unit &&
        !strcmp(k->unit, RP_UNIT_NS))
        th->weight_ns += ev->u.sample.weight;
}

static void on_sample(struct rp_sum_recording *rec, struct rp_reader *r,
                      struct rp_sum_chunk *ch, const struct clock_map *m,
                      const struct rp_kind_info *k, const struct rp_event *ev)
{
    /* A KIND record whose name or unit string was lost to damage leaves those
     * NULL (chunk.h); strcmp must not see them (found by tests/fuzz:
     * kind-without-name.rpc). */
    struct rp_sum_total *t = total_for(&rec->kinds, k && k->name ? k->name : "(unknown)",
                                       k && k->unit ? k->unit : "");
    t->count++;
    t->sum += ev->u.sample.weight;
    ch->samples++;
    if (!ev->u.sample.thread && is_kind(k, RP_KIND_GC))
        return;   /* a GC pause is the JVM's, not a thread's: no thread row */
    on_thread_sample(rec, r, m, k, ev);
}

static void on_thread(struct rp_sum_recording *rec, struct rp_reader *r, uint32_t id)
{
    const struct rp_thread_info *ti = rp_reader_thread(r, id);
    if (!ti)
        return;
    struct rp_sum_thread *th = thread_for(rec, ti->os_tid, ti->name);
    thread_renamed(th, ti->name);
    th->java = !!(ti->flags & RP_THREAD_JAVA);
    th->ended = !!(ti->flags & RP_THREAD_ENDED);
}

static void on_thread_cpu(struct rp_sum_recording *rec, struct rp_reader *r,
                          const struct rp_event *ev)
{
    const struct rp_thread_info *ti = rp_reader_thread(r, ev->u.thread_cpu.thread);
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
    rec->chunks = grow(rec->chunks, rec->nchunks, sizeof *rec->chunks);
    struct rp_sum_chunk *ch = &rec->chunks[rec->nchunks++];
    memset(ch, 0, sizeof *ch);
    ch->path = rp_xstrdup(path);
    const char *seq = rp_reader_meta(r, RP_META_CHUNK_SEQ);
    ch->seq = seq ? rp_xstrdup(seq) : NULL;
    ch->options = chunk_options(rec, r);
    return ch;
}

void rp_summary_read(struct rp_summary *s, const char *path, struct rp_diag_counts *diag)
{
    struct rp_reader *r = rp_reader_open(path, rp_diag_print, diag);
    if (!r)
        return;
    struct rp_sum_recording *rec = recording_for(s, r);
    struct rp_sum_chunk *ch = chunk_new(rec, r, path);
    struct clock_map m = clock_map_of(r);
    struct kind_fields kf = {0};
    struct rp_event ev;
    while (rp_reader_next(r, &ev) == 1) {
        switch (ev.type) {
        case RP_EV_SEGMENT:
            ch->bytes = ev.u.seg.offset + RP_SEG_HEADER_LEN + ev.u.seg.comp_len;
            break;
        case RP_EV_SAMPLE: {
            const struct rp_kind_info *k = rp_reader_kind(r, ev.u.sample.kind);
            on_sample(rec, r, ch, &m, k, &ev);
            if (k != kf.kind)
                kind_fields_of(&kf, k);
            on_heap_sample(&rec->heap, &kf, &m, &ev);
            on_wait_sample(&rec->waits, &kf, r, &ev);
            note_time(rec, &m, ev.u.sample.time);
            break;
        }
        case RP_EV_COUNTER:
            /* The name is NULL when its string was lost to damage. */
            total_for(&rec->counters,
                      ev.u.counter.name ? ev.u.counter.name : "(unresolved)", "")->sum +=
                ev.u.counter.value;
            break;
        case RP_EV_THREAD:
            on_thread(rec, r, ev.u.thread.id);
            break;
        case RP_EV_THREAD_CPU:
            on_thread_cpu(rec, r, &ev);
            break;
        case RP_EV_GAUGE:
            on_gauge(&rec->heap, &m, &ev);
            on_telemetry(rec->gauges, &m, &ev);
            break;
        }
    }
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
    for (size_t k = 0; k < rec->nthreads; k++) {
        free(rec->threads[k].name);
        free(rec->threads[k].renamed);
    }
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
    s->recs = NULL;
    s->nrecs = 0;
}
