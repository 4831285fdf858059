/*
 * tools/commands/cmd_summary.c — `ringprof summary INPUT...`: what a recording holds.
 *
 * Like `jfr summary`, it reads every chunk once, streaming, and prints per recording
 * (a recording is the chunks that share a recording.id; several JVMs may be merged
 * on one command line): the processes and their time range, samples and weight per
 * event kind, losses by reason (the lost.* counters summed over segments), the
 * threads with their samples and CPU time, and the integrity of every chunk (how
 * many segments were whole, damaged or cut off, and whether it was closed cleanly).
 * For recordings with allocations: the allocation rate, GC pauses, the heap after
 * the last GC, and the live snapshots (docs/profiles.md). For wall-clock and lock
 * samples (kinds wall, lock): the time per thread state, the contended waits and
 * the monitor waited for most; and the telemetry gauges (averages, maxima, and
 * the rates of the cumulative ".total" ones). Memory is proportional to threads,
 * chunks and monitor classes, never to samples; threads, kinds, counters and
 * monitor classes are found through hash tables (model/idmap.h, model/strtab.h),
 * as a file decides how many it holds.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "model/idmap.h"
#include "model/inputs.h"
#include "model/profile.h"
#include "model/scan.h"
#include "model/strtab.h"
#include "model/xalloc.h"
#include "usage.h"

#include "ringprof/events.h"

struct name_total {
    char *name, *unit;
    uint64_t count, sum;
};

/* Totals by name, in first-seen order; `names` finds a name's row (its number
 * there is the row's index until the rows are sorted, for printing). */
struct totals {
    struct name_total *t;
    size_t n;
    struct rp_strtab names;
};

/* The thread table's sample columns, in their order: the agent's kinds with a
 * thread (docs/format.md), then every other kind together. A thread's live
 * column counts its objects in the recording's last snapshot, never the sum
 * over snapshots (each holds the objects alive at its instant). */
enum { TC_CPU, TC_ALLOC, TC_LIVE, TC_WALL, TC_LOCK, TC_OTHER, TC_COUNT };
static const char *const tc_names[TC_COUNT] = {"cpu", "alloc", RP_KIND_LIVE,
                                               RP_KIND_WALL, RP_KIND_LOCK, "other"};

struct thread_row {
    uint64_t os_tid;
    char *name;               /* at its first sample (before it: the newest)      */
    char *renamed;            /* the newest name since, when it differs; or NULL  */
    int sampled;
    uint64_t samples[TC_COUNT];
    uint64_t live_time;       /* the snapshot instant samples[TC_LIVE] counts at  */
    uint64_t weight_ns, cpu_ns;
    int java, ended;
};

struct chunk_row {
    char *path;
    struct rp_reader_stats st;
    uint64_t samples, bytes;
    int being_written;        /* a live writer holds it (rp_reader_being_written) */
    char *seq;                /* its chunk.seq, or NULL                           */
    uint32_t options;         /* its options as shown, in recording.options_seen  */
};

/* Allocation, GC and live-object figures (kinds alloc, gc, live; the live.*
 * gauges): sums and extremes only, so memory stays independent of samples. */
struct heap_figures {
    uint64_t alloc_samples, alloc_bytes, alloc_objects;
    uint64_t gcs, pause_total, pause_max, gc_id_min, gc_id_max;
    uint64_t last_gc_wall, heap_used_last, heap_used_max, heap_committed_last;
    uint64_t snapshots, last_snap_wall, last_snap_objects, last_snap_bytes;
    /* The live samples of the latest snapshot instant, split by age_gcs: the
     * objects that survived a GC, and those younger than the last one. */
    uint64_t live_wall, live_old, live_old_bytes, live_young, live_young_bytes;
    int live_aged;
};

/* Wall-clock and lock samples (kinds wall and lock, include/ringprof/events.h). */
struct wait_figures {
    uint64_t wall_samples, wall_ns, repeats;
    uint64_t state_samples[RP_TS_COUNT], state_ns[RP_TS_COUNT];
    uint64_t lock_samples, lock_ns;
    struct totals monitors;   /* by class: count, ns */
};

/* One telemetry gauge (events.h, RP_GAUGE_*): its readings' extremes in time
 * (for the rate of a ".total") and their sum and maximum (for a level). Times
 * are wall-clock ns when the chunk maps its clock, else monotonic. */
struct gauge_fig {
    uint64_t n, sum, max;
    uint64_t t_first, v_first, t_last, v_last;
};

static const char *const telemetry_names[] = {
    RP_GAUGE_CPU_USER, RP_GAUGE_CPU_SYS, RP_GAUGE_RSS, RP_GAUGE_HEAP_USED,
    RP_GAUGE_HEAP_COMMITTED, RP_GAUGE_GC_COUNT, RP_GAUGE_GC_TIME, RP_GAUGE_THREADS,
    RP_GAUGE_THREADS_RUNNABLE, RP_GAUGE_CLASSES, RP_GAUGE_AGENT_CPU};
enum {
    G_CPU_USER, G_CPU_SYS, G_RSS, G_HEAP_USED, G_HEAP_COMMITTED, G_GC_COUNT, G_GC_TIME,
    G_THREADS, G_THREADS_RUNNABLE, G_CLASSES, G_AGENT_CPU, G_COUNT
};

struct recording {
    char *id, *pid, *host, *jvm, *producer;
    struct rp_strtab options_seen;   /* the chunks' options as shown (chunk_options) */
    uint64_t live_time;              /* the latest live snapshot's instant            */
    uint64_t wall_first, wall_last;   /* of events, CLOCK_REALTIME ns; 0: none   */
    struct heap_figures heap;
    struct wait_figures waits;
    struct gauge_fig gauges[G_COUNT];
    struct totals kinds, counters;
    struct thread_row *threads; size_t nthreads;
    struct rp_idmap thread_of_tid;   /* os tid -> index into threads */
    struct chunk_row *chunks;   size_t nchunks;
};

/* The recordings of one rp_cmd_summary call: emptied (free_recordings) before it
 * returns, so the command can be called again in the same process (tests/fuzz
 * calls every subcommand in-process, input after input). */
static struct recording *recs;
static size_t nrecs;

static void *grow(void *p, size_t n, size_t size)
{
    /* Arrays here grow one element at a time but double their storage. */
    if (n & (n - 1))
        return p;
    return rp_xreallocarray(p, n ? n * 2 : 1, size);
}

static char *dup_or(const char *s, const char *fallback)
{
    return strdup(s ? s : fallback);
}

static struct recording *recording_for(struct rp_reader *r)
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
    for (size_t i = 0; i < nrecs; i++)
        if (!strcmp(recs[i].id, id))
            return &recs[i];
    recs = grow(recs, nrecs, sizeof *recs);
    struct recording *rec = &recs[nrecs++];
    memset(rec, 0, sizeof *rec);
    rec->id = strdup(id);
    rec->pid = dup_or(pid, "?");
    rec->host = dup_or(rp_reader_meta(r, RP_META_HOST), "?");
    rec->jvm = dup_or(rp_reader_meta(r, RP_META_JVM_NAME), "?");
    rec->producer = dup_or(rp_reader_meta(r, RP_META_PRODUCER), "?");
    return rec;
}

static struct name_total *total_for(struct totals *tot, const char *name,
                                    const char *unit)
{
    uint32_t i = rp_strtab_cstr(&tot->names, name);
    if (i < tot->n)
        return &tot->t[i];
    tot->t = grow(tot->t, tot->n, sizeof *tot->t);
    struct name_total *t = &tot->t[tot->n++];
    t->name = strdup(name);
    t->unit = strdup(unit ? unit : "");
    t->count = t->sum = 0;
    return t;
}

static struct thread_row *thread_for(struct recording *rec, uint64_t os_tid,
                                     const char *name)
{
    uint32_t i = rp_idmap_put(&rec->thread_of_tid, os_tid, (uint32_t)rec->nthreads);
    if (i < rec->nthreads)
        return &rec->threads[i];
    rec->threads = grow(rec->threads, rec->nthreads, sizeof *rec->threads);
    struct thread_row *t = &rec->threads[rec->nthreads++];
    memset(t, 0, sizeof *t);
    t->os_tid = os_tid;
    t->name = dup_or(name, "?");
    return t;
}

/* Thread th is now called `name` (rp_thread_display's rule): before its first
 * sample the newest name is its name; after it, the newest is `renamed`. */
static void thread_renamed(struct thread_row *th, const char *name)
{
    if (!name)
        return;
    if (!th->sampled) {
        free(th->name);
        th->name = strdup(name);
        return;
    }
    free(th->renamed);
    th->renamed = strcmp(name, th->name) ? strdup(name) : NULL;
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

static void note_time(struct recording *rec, const struct clock_map *m, uint64_t mono)
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

static int extra_index(const struct rp_kind_info *k, const char *name)
{
    for (uint32_t i = 0; i < k->nextra; i++)
        if (k->extra[i] && !strcmp(k->extra[i], name))
            return (int)i;
    return -1;
}

static uint64_t extra_of(const struct rp_event *ev, int x)
{
    return x >= 0 && (uint32_t)x < ev->u.sample.nextra ? ev->u.sample.extra[x] : 0;
}

/* A live sample at `wall`: the figures of the latest snapshot instant. */
static void on_live_sample(struct heap_figures *h, uint64_t wall, uint64_t age_gcs,
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

static void on_heap_sample(struct heap_figures *h, struct kind_fields *kf,
                           const struct rp_kind_info *k, const struct clock_map *m,
                           const struct rp_event *ev)
{
    if (k != kf->kind) {
        memset(kf, 0, sizeof *kf);
        kf->kind = k;
        kf->is_alloc = k && k->name && !strcmp(k->name, "alloc");
        kf->is_gc = k && k->name && !strcmp(k->name, "gc");
        kf->objects = k ? extra_index(k, "objects") : -1;
        kf->heap_used = k ? extra_index(k, "heap_used") : -1;
        kf->heap_committed = k ? extra_index(k, "heap_committed") : -1;
        kf->id = k ? extra_index(k, "id") : -1;
        kf->is_live = k && k->name && !strcmp(k->name, RP_KIND_LIVE);
        kf->age_gcs = k ? extra_index(k, RP_X_AGE_GCS) : -1;
        kf->is_wall = k && k->name && !strcmp(k->name, RP_KIND_WALL);
        kf->is_lock = k && k->name && !strcmp(k->name, RP_KIND_LOCK);
        kf->state = k ? extra_index(k, "state") : -1;
        kf->repeat = k ? extra_index(k, "repeat") : -1;
        kf->klass = k ? extra_index(k, "class") : -1;
    }
    uint64_t w = ev->u.sample.weight;
    if (kf->is_alloc) {
        h->alloc_samples++;
        h->alloc_bytes += w;
        h->alloc_objects += kf->objects >= 0 ? extra_of(ev, kf->objects) : 1;
    } else if (kf->is_gc) {
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
    } else if (kf->is_live && kf->age_gcs >= 0 && m->valid) {
        on_live_sample(h, m->wall0 + (ev->u.sample.time - m->mono0),
                       extra_of(ev, kf->age_gcs), w);
    }
}

/* A wall or lock sample (kf is on_heap_sample's, already set for this kind). */
static void on_wait_sample(struct wait_figures *wf, const struct kind_fields *kf,
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
        struct name_total *t = total_for(&wf->monitors,
                                         name ? name : "[no class recorded]", "ns");
        t->count++;
        t->sum += w;
    }
}

/* A telemetry gauge: extremes in time, sum and maximum. */
static void on_telemetry(struct gauge_fig *g, const struct clock_map *m,
                         const struct rp_event *ev)
{
    const char *name = ev->u.gauge.name;
    for (int i = 0; name && i < G_COUNT; i++) {
        if (strcmp(name, telemetry_names[i]))
            continue;
        struct gauge_fig *f = &g[i];
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
static void on_gauge(struct heap_figures *h, const struct clock_map *m,
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

/* The thread table's column of a kind (TC_*). */
static int thread_column(const char *kind)
{
    for (int c = 0; kind && c < TC_OTHER; c++)
        if (!strcmp(kind, tc_names[c]))
            return c;
    return TC_OTHER;
}

/* A live sample of thread th at `t` (the snapshot's instant): its column counts
 * the objects of the latest snapshot the thread has any in; the table shows it
 * only if that is the recording's latest (rec->live_time). */
static void thread_live(struct recording *rec, struct thread_row *th, uint64_t t)
{
    if (t > rec->live_time)
        rec->live_time = t;
    if (t < th->live_time)
        return;
    if (t > th->live_time) {
        th->live_time = t;
        th->samples[TC_LIVE] = 0;
    }
    th->samples[TC_LIVE]++;
}

static void on_sample(struct recording *rec, struct rp_reader *r, struct chunk_row *ch,
                      const struct clock_map *m, const struct rp_event *ev)
{
    const struct rp_kind_info *k = rp_reader_kind(r, ev->u.sample.kind);
    /* A KIND record whose name or unit string was lost to damage leaves those
     * NULL (chunk.h); strcmp must not see them (found by tests/fuzz:
     * kind-without-name.rpc). */
    const char *kname = k && k->name ? k->name : "(unknown)";
    const char *kunit = k && k->unit ? k->unit : "";
    struct name_total *t = total_for(&rec->kinds, kname, kunit);
    t->count++;
    t->sum += ev->u.sample.weight;
    ch->samples++;
    if (!ev->u.sample.thread && k && k->name && !strcmp(k->name, "gc"))
        return;   /* a GC pause is the JVM's, not a thread's: no thread row */
    const struct rp_thread_info *ti = rp_reader_thread(r, ev->u.sample.thread);
    struct thread_row *th = thread_for(rec, ti ? ti->os_tid : 0, ti ? ti->name : NULL);
    if (!th->sampled && ti)
        thread_renamed(th, ti->name);
    th->sampled = 1;
    /* Readings of lock waits in progress (lock.waiting) are not samples of the
     * thread: `ringprof locks` counts each wait once, by the rule of events.h. */
    if (k && k->name && !strcmp(k->name, RP_KIND_LOCK_WAITING))
        return;
    int col = thread_column(k ? k->name : NULL);
    if (col == TC_LIVE)
        thread_live(rec, th, m->valid ? m->wall0 + (ev->u.sample.time - m->mono0)
                                      : ev->u.sample.time);
    else
        th->samples[col]++;
    /* Wall and lock samples weigh time spent waiting as well as running: in
     * "sampled" they would pass for CPU. */
    if (col != TC_WALL && col != TC_LOCK && !strcmp(kunit, "ns"))
        th->weight_ns += ev->u.sample.weight;
}

static void on_thread(struct recording *rec, struct rp_reader *r, uint32_t id)
{
    const struct rp_thread_info *ti = rp_reader_thread(r, id);
    if (!ti)
        return;
    struct thread_row *th = thread_for(rec, ti->os_tid, ti->name);
    thread_renamed(th, ti->name);
    th->java = !!(ti->flags & RP_THREAD_JAVA);
    th->ended = !!(ti->flags & RP_THREAD_ENDED);
}

/* A chunk's options as summary shows them: the agent's option string as given
 * (agent.options), then what `ctl set` changed before the chunk opened
 * (agent.options.set), which is what was in force while it was written. */
static uint32_t chunk_options(struct recording *rec, struct rp_reader *r)
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

static void read_chunk(const char *path, struct rp_diag_counts *diag)
{
    struct rp_reader *r = rp_reader_open(path, rp_diag_print, diag);
    if (!r)
        return;
    struct recording *rec = recording_for(r);
    rec->chunks = grow(rec->chunks, rec->nchunks, sizeof *rec->chunks);
    struct chunk_row *ch = &rec->chunks[rec->nchunks++];
    memset(ch, 0, sizeof *ch);
    ch->path = strdup(path);
    const char *seq = rp_reader_meta(r, RP_META_CHUNK_SEQ);
    ch->seq = seq ? strdup(seq) : NULL;
    ch->options = chunk_options(rec, r);
    struct clock_map m = clock_map_of(r);
    struct kind_fields kf = {0};
    struct rp_event ev;
    while (rp_reader_next(r, &ev) == 1) {
        switch (ev.type) {
        case RP_EV_SEGMENT:
            ch->bytes = ev.u.seg.offset + RP_SEG_HEADER_LEN + ev.u.seg.comp_len;
            break;
        case RP_EV_SAMPLE:
            on_sample(rec, r, ch, &m, &ev);
            on_heap_sample(&rec->heap, &kf, rp_reader_kind(r, ev.u.sample.kind), &m, &ev);
            on_wait_sample(&rec->waits, &kf, r, &ev);
            note_time(rec, &m, ev.u.sample.time);
            break;
        case RP_EV_COUNTER:
            /* The name is NULL when its string was lost to damage. */
            total_for(&rec->counters,
                      ev.u.counter.name ? ev.u.counter.name : "(unresolved)", "")->sum +=
                ev.u.counter.value;
            break;
        case RP_EV_THREAD:
            on_thread(rec, r, ev.u.thread.id);
            break;
        case RP_EV_THREAD_CPU: {
            const struct rp_thread_info *ti = rp_reader_thread(r, ev.u.thread_cpu.thread);
            struct thread_row *th = thread_for(rec, ti ? ti->os_tid : 0,
                                               ti ? ti->name : NULL);
            if (ev.u.thread_cpu.cpu_ns > th->cpu_ns)
                th->cpu_ns = ev.u.thread_cpu.cpu_ns;
            break;
        }
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

/* ------------------------------------------------------------------ printing -- */

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
    if (!strcmp(unit, "ns"))
        snprintf(buf, cap, "%.3f s", (double)v / 1e9);
    else if (!strcmp(unit, "bytes"))
        snprintf(buf, cap, "%.1f MiB", (double)v / (1024.0 * 1024.0));
    else
        snprintf(buf, cap, "%llu %s", (unsigned long long)v, unit);
}

/* The recording whose threads are being sorted: a thread's live column counts
 * only when it is of the recording's latest snapshot. */
static const struct recording *sorting;

/* Thread th's figure in column c, as the table shows it. */
static uint64_t thread_samples(const struct recording *rec, const struct thread_row *th,
                               int c)
{
    if (c == TC_LIVE && th->live_time != rec->live_time)
        return 0;
    return th->samples[c];
}

/* By the columns in their order (cpu samples first), then CPU time. */
static int cmp_threads(const void *a, const void *b)
{
    const struct thread_row *x = a, *y = b;
    for (int c = 0; c < TC_COUNT; c++) {
        uint64_t u = thread_samples(sorting, x, c), v = thread_samples(sorting, y, c);
        if (u != v)
            return u < v ? 1 : -1;
    }
    return x->cpu_ns < y->cpu_ns ? 1 : x->cpu_ns > y->cpu_ns ? -1 : 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Whether a chunk was closed, and if not, who may still write it: only a ".part"
 * whose writer holds its lock is being written. */
static const char *chunk_state(const struct chunk_row *c)
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
static int print_chunks(const struct recording *rec, int all)
{
    int problems = 0;
    uint64_t ok = 0, bad = 0, partial = 0, bytes = 0;
    for (size_t i = 0; i < rec->nchunks; i++) {
        const struct chunk_row *c = &rec->chunks[i];
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
        printf("    %-44s %5llu ok %3llu bad %3llu cut  %s%s; pools %.2f x its bytes\n",
               base_name(c->path), (unsigned long long)c->st.segments_ok,
               (unsigned long long)c->st.segments_bad,
               (unsigned long long)c->st.segments_partial, chunk_state(c),
               c->st.unresolved_refs ? ", unresolved references" : "",
               c->bytes ? (double)c->st.pool_bytes / (double)c->bytes : 0.0);
    }
    printf("  chunks      %zu (%llu bytes): %llu segments whole, %llu damaged, "
           "%llu cut off\n", rec->nchunks, (unsigned long long)bytes,
           (unsigned long long)ok, (unsigned long long)bad, (unsigned long long)partial);
    return problems;
}

static int is_loss(const char *name)
{
    return !strncmp(name, RP_COUNTER_LOST_PREFIX, strlen(RP_COUNTER_LOST_PREFIX));
}

static void print_losses(const struct recording *rec)
{
    uint64_t lost = 0;
    size_t plen = strlen(RP_COUNTER_LOST_PREFIX);
    for (size_t i = 0; i < rec->counters.n; i++)
        if (is_loss(rec->counters.t[i].name))
            lost += rec->counters.t[i].sum;
    printf("  lost        %llu record%s\n", (unsigned long long)lost, lost == 1 ? "" : "s");
    for (size_t i = 0; i < rec->counters.n; i++)
        if (is_loss(rec->counters.t[i].name) && rec->counters.t[i].sum)
            printf("    %-22s %12llu\n", rec->counters.t[i].name + plen,
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
static void print_counters(const struct recording *rec, int each)
{
    size_t in_group[N_COUNTER_GROUPS] = {0}, total = 0, groups = 0;
    for (size_t i = 0; i < rec->counters.n; i++)
        if (!is_loss(rec->counters.t[i].name)) {
            groups += !in_group[counter_group_of(rec->counters.t[i].name)]++;
            total++;
        }
    if (!total)
        return;
    printf("  counters    %zu in %zu group%s%s\n", total, groups, groups == 1 ? "" : "s",
           each ? "" : " (--counters lists each with its total)");
    for (size_t g = 0; g < N_COUNTER_GROUPS; g++) {
        if (!in_group[g])
            continue;
        printf("    %-9s %4zu counter%-2s %s (%s)\n", counter_groups[g].name, in_group[g],
               in_group[g] == 1 ? "" : "s", counter_groups[g].about,
               counter_groups[g].doc);
        for (size_t i = 0; each && i < rec->counters.n; i++)
            if (!is_loss(rec->counters.t[i].name) &&
                counter_group_of(rec->counters.t[i].name) == g)
                printf("      %-34s %12llu\n", rec->counters.t[i].name,
                       (unsigned long long)rec->counters.t[i].sum);
    }
}

static uint64_t counter_sum(const struct recording *rec, const char *name)
{
    for (size_t i = 0; i < rec->counters.n; i++)
        if (!strcmp(rec->counters.t[i].name, name))
            return rec->counters.t[i].sum;
    return 0;
}

/* Allocation rate, GC pauses, heap and live snapshots, for those the recording
 * has. The rate is over the recording's time range (all its events). */
static void print_heap(const struct recording *rec)
{
    const struct heap_figures *h = &rec->heap;
    char a[64], b[64];
    double secs = (double)(rec->wall_last - rec->wall_first) / 1e9;
    if (h->alloc_samples) {
        fmt_weight(a, sizeof a, h->alloc_bytes, "bytes");
        printf("  allocated   %s, %llu objects (estimated from %llu samples)", a,
               (unsigned long long)h->alloc_objects, (unsigned long long)h->alloc_samples);
        if (secs > 0)
            printf(": %.2f MiB/s, %.0f objects/s over %.3f s",
                   (double)h->alloc_bytes / (1024.0 * 1024.0) / secs,
                   (double)h->alloc_objects / secs, secs);
        putchar('\n');
    }
    if (h->gcs) {
        printf("  gc          %llu pause%s, %.3f ms in all, the longest %.3f ms",
               (unsigned long long)h->gcs, h->gcs == 1 ? "" : "s",
               (double)h->pause_total / 1e6, (double)h->pause_max / 1e6);
        if (h->gc_id_min) {
            uint64_t span = h->gc_id_max - h->gc_id_min + 1;
            printf(" (ids %llu..%llu", (unsigned long long)h->gc_id_min,
                   (unsigned long long)h->gc_id_max);
            if (span > h->gcs)
                printf(": %llu record%s missing", (unsigned long long)(span - h->gcs),
                       span - h->gcs == 1 ? "" : "s");
            putchar(')');
        }
        putchar('\n');
    }
    if (h->heap_used_last) {
        fmt_weight(a, sizeof a, h->heap_used_last, "bytes");
        fmt_weight(b, sizeof b, h->heap_used_max, "bytes");
        printf("  heap        %s used after the last GC (the most after any: %s)", a, b);
        if (h->heap_committed_last) {
            fmt_weight(a, sizeof a, h->heap_committed_last, "bytes");
            printf(", %s committed", a);
        }
        putchar('\n');
    }
    if (h->snapshots) {
        fmt_wall(a, sizeof a, h->last_snap_wall);
        printf("  live        %llu snapshot%s; the last, %s: ",
               (unsigned long long)h->snapshots, h->snapshots == 1 ? "" : "s", a);
        if (h->live_aged && h->live_wall == h->last_snap_wall) {
            char c[48];
            fmt_weight(b, sizeof b, h->live_old_bytes, "bytes");
            fmt_weight(c, sizeof c, h->live_young_bytes, "bytes");
            printf("%s in %llu sampled objects that survived a GC; not yet collected, "
                   "younger than the last GC: %s in %llu", b,
                   (unsigned long long)h->live_old, c, (unsigned long long)h->live_young);
        } else {
            fmt_weight(b, sizeof b, h->last_snap_bytes, "bytes");
            printf("%llu objects sampled, %s", (unsigned long long)h->last_snap_objects, b);
        }
        uint64_t untracked = counter_sum(rec, "live.untracked");
        if (untracked)
            printf(" (%llu sampled objects not tracked: the live table was full; raise livemax)",
                   (unsigned long long)untracked);
        putchar('\n');
    }
}

static int cmp_totals(const void *a, const void *b)
{
    const struct name_total *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Wall-clock samples (time per thread state) and lock samples (waits, the
 * monitor class waited for most). Nothing when the recording has neither. */
static void print_waits(struct recording *rec)
{
    struct wait_figures *wf = &rec->waits;
    if (wf->wall_samples) {
        size_t threads = 0;
        for (size_t i = 0; i < rec->nthreads; i++)
            threads += rec->threads[i].samples[TC_WALL] != 0;
        printf("  wall        %llu samples of %zu thread%s, %.3f s:",
               (unsigned long long)wf->wall_samples, threads, threads == 1 ? "" : "s",
               (double)wf->wall_ns / 1e9);
        const char *sep = " ";
        for (int s = 0; s < RP_TS_COUNT; s++) {
            if (!wf->state_samples[s])
                continue;
            printf("%s%s %.3f s (%.1f%%)", sep, rp_thread_state_name((unsigned)s),
                   (double)wf->state_ns[s] / 1e9,
                   wf->wall_ns ? 100.0 * (double)wf->state_ns[s] / (double)wf->wall_ns : 0);
            sep = ", ";
        }
        printf("; %llu repeat%s of an idle thread's stack\n",
               (unsigned long long)wf->repeats, wf->repeats == 1 ? "" : "s");
    }
    if (wf->lock_samples) {
        qsort(wf->monitors.t, wf->monitors.n, sizeof *wf->monitors.t, cmp_totals);
        const struct name_total *top = &wf->monitors.t[0];
        printf("  lock        %llu contended wait%s, %.3f s waited; the most on %s "
               "(%.3f s, %llu wait%s, %.1f%%)%s\n",
               (unsigned long long)wf->lock_samples, wf->lock_samples == 1 ? "" : "s",
               (double)wf->lock_ns / 1e9, top->name, (double)top->sum / 1e9,
               (unsigned long long)top->count, top->count == 1 ? "" : "s",
               wf->lock_ns ? 100.0 * (double)top->sum / (double)wf->lock_ns : 0,
               wf->monitors.n > 1 ? "; ringprof locks ranks them all" : "");
    }
}

/* The rate of a cumulative gauge per second of its time span; -1 when it has
 * fewer than two readings or went backwards. */
static double gauge_rate(const struct gauge_fig *g)
{
    if (g->n < 2 || g->t_last <= g->t_first || g->v_last < g->v_first)
        return -1;
    return (double)(g->v_last - g->v_first) * 1e9 / (double)(g->t_last - g->t_first);
}

static double gauge_mean(const struct gauge_fig *g)
{
    return g->n ? (double)g->sum / (double)g->n : 0;
}

static double mib(double v)
{
    return v / (1024.0 * 1024.0);
}

/* The telemetry gauges (telemetry=), where the recording has them. CPU rates
 * are in percent of one CPU, as top shows them. */
static void print_telemetry(const struct recording *rec)
{
    const struct gauge_fig *g = rec->gauges;
    uint64_t readings = 0, t0 = 0, t1 = 0;
    for (int i = 0; i < G_COUNT; i++) {
        if (!g[i].n)
            continue;
        readings = g[i].n > readings ? g[i].n : readings;
        t0 = !t0 || g[i].t_first < t0 ? g[i].t_first : t0;
        t1 = g[i].t_last > t1 ? g[i].t_last : t1;
    }
    if (!readings)
        return;
    printf("  telemetry   %llu reading%s over %.3f s\n", (unsigned long long)readings,
           readings == 1 ? "" : "s", (double)(t1 - t0) / 1e9);
    double user = gauge_rate(&g[G_CPU_USER]), sys = gauge_rate(&g[G_CPU_SYS]);
    if (user >= 0 || sys >= 0) {
        printf("    cpu       ");
        if (user >= 0)
            printf("user %.1f%%", user / 1e7);
        if (sys >= 0)
            printf("%ssys %.1f%%", user >= 0 ? ", " : "", sys / 1e7);
        printf(" of one CPU (average)\n");
    }
    if (g[G_RSS].n)
        printf("    rss       max %.1f MiB, average %.1f MiB\n", mib((double)g[G_RSS].max),
               mib(gauge_mean(&g[G_RSS])));
    if (g[G_HEAP_USED].n || g[G_HEAP_COMMITTED].n) {
        printf("    heap      ");
        if (g[G_HEAP_USED].n)
            printf("used max %.1f MiB, average %.1f MiB", mib((double)g[G_HEAP_USED].max),
                   mib(gauge_mean(&g[G_HEAP_USED])));
        if (g[G_HEAP_COMMITTED].n)
            printf("%scommitted max %.1f MiB", g[G_HEAP_USED].n ? "; " : "",
                   mib((double)g[G_HEAP_COMMITTED].max));
        putchar('\n');
    }
    const struct gauge_fig *gc = &g[G_GC_COUNT], *gct = &g[G_GC_TIME];
    if (gc->n >= 2 && gc->v_last >= gc->v_first) {
        printf("    gc        %llu collection%s", (unsigned long long)(gc->v_last - gc->v_first),
               gc->v_last - gc->v_first == 1 ? "" : "s");
        if (gct->n >= 2 && gct->v_last >= gct->v_first)
            printf(", %.3f ms (%.2f%% of the time)", (double)(gct->v_last - gct->v_first) / 1e6,
                   gauge_rate(gct) / 1e7);
        printf(" over the readings\n");
    }
    if (g[G_THREADS].n || g[G_THREADS_RUNNABLE].n) {
        printf("    threads   ");
        if (g[G_THREADS].n)
            printf("total max %llu, average %.1f", (unsigned long long)g[G_THREADS].max,
                   gauge_mean(&g[G_THREADS]));
        if (g[G_THREADS_RUNNABLE].n)
            printf("%srunnable max %llu, average %.1f", g[G_THREADS].n ? "; " : "",
                   (unsigned long long)g[G_THREADS_RUNNABLE].max,
                   gauge_mean(&g[G_THREADS_RUNNABLE]));
        putchar('\n');
    }
    if (g[G_CLASSES].n)
        printf("    classes   %llu loaded at most\n", (unsigned long long)g[G_CLASSES].max);
    double agent = gauge_rate(&g[G_AGENT_CPU]);
    if (agent >= 0) {
        printf("    agent     CPU %.3f ms/s (%.2f%% of one CPU", agent / 1e6, agent / 1e7);
        if (user >= 0 && sys >= 0 && user + sys > 0)
            printf(", %.2f%% of the process's CPU", 100.0 * agent / (user + sys));
        printf(")\n");
    }
}

/* One row per thread with a column of samples per kind the threads have (the
 * live column: objects in the last snapshot), ranked by them in column order. */
static void print_threads(struct recording *rec, size_t top)
{
    /* A chunk with no THREAD record leaves threads NULL, and qsort's base must
     * not be NULL even for 0 elements (found by tests/fuzz: no-threads.rpc). */
    sorting = rec;
    if (rec->nthreads)
        qsort(rec->threads, rec->nthreads, sizeof *rec->threads, cmp_threads);
    int shown[TC_COUNT] = {0}, any = 0;
    for (size_t i = 0; i < rec->nthreads; i++)
        for (int c = 0; c < TC_COUNT; c++)
            any |= shown[c] |= thread_samples(rec, &rec->threads[i], c) != 0;
    shown[TC_CPU] |= !any;   /* a table with no column of samples reads oddly */
    printf("  threads     %zu\n", rec->nthreads);
    printf("    %8s  %-28s", "tid", "name");
    for (int c = 0; c < TC_COUNT; c++)
        if (shown[c])
            printf(" %9s", tc_names[c]);
    printf(" %12s %12s\n", "sampled", "cpu time");
    for (size_t i = 0; i < rec->nthreads && i < top; i++) {
        const struct thread_row *t = &rec->threads[i];
        char name[1024];
        rp_thread_display(name, sizeof name, t->name, t->renamed);
        printf("    %8llu  %-28s", (unsigned long long)t->os_tid, name);
        for (int c = 0; c < TC_COUNT; c++)
            if (shown[c])
                printf(" %9llu", (unsigned long long)thread_samples(rec, t, c));
        printf(" %10.3f s %10.3f s%s\n", (double)t->weight_ns / 1e9,
               (double)t->cpu_ns / 1e9, t->ended ? "  (ended)" : "");
    }
    if (rec->nthreads > top)
        printf("    ... %zu more (--threads N shows more)\n", rec->nthreads - top);
}

/* The options of each run of chunks that share them (chunk_options), in the
 * order read; one run prints as one line without its chunks. */
#define OPTION_RUNS_SHOWN 20
static void print_options(const struct recording *rec)
{
    size_t runs = 0;
    for (size_t i = 0; i < rec->nchunks; i++)
        runs += !i || rec->chunks[i].options != rec->chunks[i - 1].options;
    if (runs == 1 && !*rec->options_seen.s[rec->chunks[0].options])
        return;
    if (runs == 1) {
        printf("  options     %s\n", rec->options_seen.s[rec->chunks[0].options]);
        return;
    }
    size_t shown = 0;
    for (size_t i = 0, j; i < rec->nchunks && shown < OPTION_RUNS_SHOWN; i = j, shown++) {
        for (j = i + 1; j < rec->nchunks && rec->chunks[j].options == rec->chunks[i].options;)
            j++;
        const struct chunk_row *a = &rec->chunks[i], *b = &rec->chunks[j - 1];
        char from[32], to[32];
        snprintf(from, sizeof from, "%s", a->seq ? a->seq : "?");
        snprintf(to, sizeof to, "%s", b->seq ? b->seq : "?");
        printf("  %-11s chunk%s %s%s%s: %s\n", shown ? "" : "options", i + 1 < j ? "s" : "",
               from, i + 1 < j ? "-" : "", i + 1 < j ? to : "",
               rec->options_seen.s[a->options]);
    }
    if (runs > shown)
        printf("              ... %zu more changes of options\n", runs - shown);
}

static int print_recording(struct recording *rec, int all_chunks, int each_counter,
                           size_t top)
{
    char a[64], b[64], w[64];
    printf("recording %s\n", rec->id);
    printf("  process     pid %s on %s\n", rec->pid, rec->host);
    printf("  jvm         %s\n", rec->jvm);
    printf("  producer    %s\n", rec->producer);
    print_options(rec);
    if (rec->wall_first) {
        fmt_wall(a, sizeof a, rec->wall_first);
        fmt_wall(b, sizeof b, rec->wall_last);
        printf("  time        %s .. %s (%.3f s)\n", a, b,
               (double)(rec->wall_last - rec->wall_first) / 1e9);
    } else {
        printf("  time        no events\n");
    }
    for (size_t i = 0; i < rec->kinds.n; i++) {
        fmt_weight(w, sizeof w, rec->kinds.t[i].sum, rec->kinds.t[i].unit);
        if (!strcmp(rec->kinds.t[i].name, RP_KIND_LIVE))   /* levels: never add them up */
            printf("  samples     %-8s %12llu   in %llu snapshots\n",
                   rec->kinds.t[i].name,
                   (unsigned long long)rec->kinds.t[i].count,
                   (unsigned long long)rec->heap.snapshots);
        else if (!strcmp(rec->kinds.t[i].name, RP_KIND_LOCK_WAITING))   /* readings too */
            printf("  samples     %-8s %12llu   readings of waits in progress (ringprof "
                   "locks counts each wait once)\n", rec->kinds.t[i].name,
                   (unsigned long long)rec->kinds.t[i].count);
        else
            printf("  samples     %-8s %12llu   weight %s\n", rec->kinds.t[i].name,
                   (unsigned long long)rec->kinds.t[i].count, w);
    }
    print_heap(rec);
    print_waits(rec);
    print_telemetry(rec);
    print_losses(rec);
    print_counters(rec, each_counter);
    print_threads(rec, top);
    return print_chunks(rec, all_chunks);
}

static void free_totals(struct totals *tot)
{
    for (size_t i = 0; i < tot->n; i++) {
        free(tot->t[i].name);
        free(tot->t[i].unit);
    }
    free(tot->t);
    rp_strtab_free(&tot->names);
}

static void free_recordings(void)
{
    for (size_t i = 0; i < nrecs; i++) {
        struct recording *rec = &recs[i];
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
    free(recs);
    recs = NULL;
    nrecs = 0;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof summary [options] INPUT...\n"
        "  INPUT          a chunk file (*.rpc), a recording directory, or a glob\n"
        "  --chunks       list every chunk, not only those with problems\n"
        "  --counters     list every counter, not only their groups\n"
        "  --threads N    list the N busiest threads of each recording (default 20)\n"
        "  --strict       exit 1 if any chunk or segment was damaged\n"
        "  --quiet        do not print each problem as it is found\n");
}

int rp_cmd_summary(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"chunks", 0, 0, 'c'}, {"counters", 0, 0, 'C'}, {"threads", 1, 0, 't'},
        {"strict", 0, 0, 's'},
        {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int all_chunks = 0, each_counter = 0, strict = 0, ch;
    long top = 20;
    struct rp_diag_counts diag = {0, 0, 0};
    /* From argv[1] again: an earlier call in this process leaves optind behind. */
    optind = 1;
    opterr = 0;
    char *end;
    while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': all_chunks = 1; break;
        case 'C': each_counter = 1; break;
        case 't':
            errno = 0;
            top = strtol(optarg, &end, 10);
            if (end == optarg || *end || errno || top < 0)
                return rp_usage_error("summary", "--threads '%s': a number of threads",
                                      optarg);
            break;
        case 's': strict = 1; break;
        case 'q': diag.quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: return rp_usage_getopt("summary", ch, argv, longopts, NULL);
        }
    }
    if (optind == argc)
        return rp_usage_error("summary", "no INPUT given");
    struct rp_inputs in = {.cmd = "summary", .quiet = diag.quiet};
    int missing = rp_inputs_expand(&in, argc - optind, argv + optind);
    for (size_t i = 0; i < in.n; i++) {
        rp_progress(i + 1, in.n, in.paths[i]);
        read_chunk(in.paths[i], &diag);
    }
    rp_progress_done();
    int problems = 0;
    for (size_t i = 0; i < nrecs; i++) {
        if (i)
            putchar('\n');
        problems += print_recording(&recs[i], all_chunks, each_counter, (size_t)top);
    }
    if (nrecs == 0)
        fprintf(stderr, "ringprof summary: nothing could be read\n");
    if (diag.fatal || diag.warnings || problems || missing)
        fprintf(stderr, "ringprof summary: %llu unreadable file%s, %llu problem%s "
                        "reported, %d input%s with no chunk file (said above)\n",
                (unsigned long long)diag.fatal, diag.fatal == 1 ? "" : "s",
                (unsigned long long)diag.warnings, diag.warnings == 1 ? "" : "s",
                missing, missing == 1 ? "" : "s");
    rp_inputs_free(&in);
    int read_any = nrecs > 0;
    free_recordings();
    if (!read_any)
        return 1;
    return strict && (problems || diag.fatal || diag.warnings || missing) ? 1 : 0;
}
