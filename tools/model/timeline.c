/*
 * tools/model/timeline.c — reading the inputs into the timeline model (timeline.h)
 * and cutting it into columns for the writers (out_timeline.c).
 *
 * One pass over every chunk, through the recording stream (stream.h), which
 * says what each kind id is and where its extras are, the chunk's clock and
 * its recording. Chunk ids are per chunk, so each chunk also gets a small table
 * from its thread ids to the model's threads, filled when an id is first used
 * and reset at every chunk. A THREAD record
 * (a rename) forgets the thread's entry, so the --thread filter sees the name
 * each sample was taken under, as in profile_build.c.
 *
 * Threads across chunks are one row when they share recording and os tid: a
 * hash table on that pair. Spans are appended in file order and merged on the
 * fly when a sample continues its thread's last span in the same state, which
 * is the common case (an idle thread repeats one state); rp_tl_load sorts and
 * merges again at the end for inputs that arrive out of order.
 */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "ringprof/hash.h"
#include "stream.h"
#include "xalloc.h"

const struct rp_tl_gauge_def rp_tl_gauges[RP_TL_G_COUNT] = {
    [RP_TL_G_CPU_USER] = {RP_GAUGE_CPU_USER, "cpu user", "% of a CPU", "cpu_user%", 1e-7, 1},
    [RP_TL_G_CPU_SYS] = {RP_GAUGE_CPU_SYS, "cpu sys", "% of a CPU", "cpu_sys%", 1e-7, 1},
    [RP_TL_G_RSS] = {RP_GAUGE_RSS, "rss", "MiB", "rss_MiB", 1.0 / 1048576, 0},
    [RP_TL_G_HEAP_USED] = {RP_GAUGE_HEAP_USED, "heap used", "MiB", "heap_used_MiB", 1.0 / 1048576, 0},
    [RP_TL_G_HEAP_COMMITTED] = {RP_GAUGE_HEAP_COMMITTED, "heap committed", "MiB",
                                "heap_committed_MiB", 1.0 / 1048576, 0},
    [RP_TL_G_GC_COUNT] = {RP_GAUGE_GC_COUNT, "gc count", "per s", "gc_per_s", 1, 1},
    [RP_TL_G_GC_TIME] = {RP_GAUGE_GC_TIME, "gc time", "% of time", "gc_time%", 1e-7, 1},
    [RP_TL_G_THREADS] = {RP_GAUGE_THREADS, "os threads", "", "os_threads", 1, 0},
    [RP_TL_G_THREADS_RUNNABLE] = {RP_GAUGE_THREADS_RUNNABLE, "os runnable", "", "os_runnable", 1, 0},
    [RP_TL_G_CLASSES] = {RP_GAUGE_CLASSES, "classes", "", "classes", 1, 0},
    [RP_TL_G_AGENT_CPU] = {RP_GAUGE_AGENT_CPU, "agent cpu", "% of a CPU", "agent_cpu%", 1e-7, 1},
};

char rp_tl_letter(unsigned state)
{
    static const char letters[RP_TS_COUNT + 1] = "?RrNIBWPS ";
    return letters[state <= RP_TS_COUNT ? state : RP_TS_UNKNOWN];
}

/* ------------------------------------------------------ building state -- */

#define T_UNSEEN 0u
#define T_FILTERED UINT32_MAX

struct build {
    const struct rp_prof_options *po;
    struct rp_stream st;
    uint32_t *thr;            size_t nthr;   /* chunk id -> thread index + 1 */
    uint32_t *hash;           size_t hmask;  /* thread index + 1, 0: empty   */
};

static char *xstrdup(const char *s)
{
    return rp_xstrdup(s ? s : "");
}

/* The model's recordings follow the stream's (first appearance first). */
static void sources_follow(struct rp_tl *tl, const struct rp_stream *st)
{
    for (; tl->nsources < st->nrecs; tl->nsources++) {
        tl->sources = rp_xreallocarray(tl->sources, tl->nsources + 1, sizeof *tl->sources);
        tl->sources[tl->nsources] = xstrdup(st->recs[tl->nsources]);
    }
}

/* Thread t is now called `name`: its shown name follows rp_thread_display. */
static void thread_named(struct rp_tl_thread *t, const char *name)
{
    if (rp_thread_names_see(&t->names, name) == RP_RENAME_NONE)
        return;
    char shown[1024];
    rp_thread_names_show(&t->names, shown, sizeof shown);
    free((char *)t->name);
    t->name = xstrdup(shown);
}

static size_t thread_hash(uint64_t tid, uint32_t source)
{
    return rp_mix64(tid ^ rp_mix64(source + 1));
}

/* The model's thread for (source, os tid), created on first use. */
static uint32_t thread_row(struct rp_tl *tl, struct build *b, uint64_t tid,
                           const char *name)
{
    uint32_t source = b->st.rec;
    if (tl->nthreads * 2 >= b->hmask) {   /* keep the table at most half full */
        size_t n = b->hmask ? (b->hmask + 1) * 2 : 256;
        free(b->hash);
        b->hash = rp_xcalloc(n, sizeof *b->hash);
        b->hmask = n - 1;
        for (size_t i = 0; i < tl->nthreads; i++) {
            size_t h = thread_hash(tl->threads[i].os_tid, tl->threads[i].source) & b->hmask;
            while (b->hash[h])
                h = (h + 1) & b->hmask;
            b->hash[h] = (uint32_t)i + 1;
        }
    }
    size_t h = thread_hash(tid, source) & b->hmask;
    for (; b->hash[h]; h = (h + 1) & b->hmask) {
        struct rp_tl_thread *t = &tl->threads[b->hash[h] - 1];
        if (t->os_tid == tid && t->source == source) {
            thread_named(t, name);
            return b->hash[h] - 1;
        }
    }
    rp_xgrow((void **)&tl->threads, &tl->cap_threads, tl->nthreads, sizeof *tl->threads, 64);
    struct rp_tl_thread *t = &tl->threads[tl->nthreads];
    memset(t, 0, sizeof *t);
    t->name = xstrdup(name);
    rp_thread_names_init(&t->names, name);
    t->os_tid = tid;
    t->source = source;
    b->hash[h] = (uint32_t)tl->nthreads + 1;
    return (uint32_t)tl->nthreads++;
}

/* A THREAD record for chunk thread `id`: a thread already in the model takes its
 * new name now, sampled again or not (main becomes DestroyJavaVM after its last
 * sample); the next sample re-reads it and re-applies --thread. */
static void thread_redefined(struct rp_tl *tl, struct build *b, uint32_t id)
{
    uint32_t row = b->thr[id];
    const struct rp_thread_info *ti = rp_stream_thread(&b->st, id);
    if (row != T_UNSEEN && row != T_FILTERED && ti)
        thread_named(&tl->threads[row - 1], ti->name);
    b->thr[id] = T_UNSEEN;
}

/* Chunk thread id -> model index, or T_FILTERED (no such thread, or --thread). */
static uint32_t chunk_thread(struct rp_tl *tl, struct build *b, uint32_t id)
{
    if (id < b->nthr && b->thr[id] != T_UNSEEN)
        return b->thr[id] == T_FILTERED ? T_FILTERED : b->thr[id] - 1;
    const struct rp_thread_info *ti = rp_stream_thread(&b->st, id);
    if (!ti)   /* none, or never defined: the table grows for defined ids only */
        return T_FILTERED;
    rp_xgrow_map((void **)&b->thr, &b->nthr, id, sizeof *b->thr, 64, 0);
    const char *name = ti->name ? ti->name : "";
    if (b->po->thread_re && regexec(b->po->thread_re, name, 0, NULL, 0)) {
        b->thr[id] = T_FILTERED;
        return T_FILTERED;
    }
    uint32_t row = thread_row(tl, b, ti->os_tid, name);
    b->thr[id] = row + 1;
    return row;
}

/* Chunk time to the model's (wall-clock when the chunk says how). */
static uint64_t wall_of(const struct build *b, uint64_t mono)
{
    return rp_clock_time(&b->st.clock, mono);
}

/* Cut [*t0, *t1) to the --from/--to range. @return 0 when nothing is left:
 * a span that only touches the range is out; a mark without duration (a 0 ns
 * wait, a gauge reading) is in when its instant is. */
static int clip(const struct build *b, uint64_t *t0, uint64_t *t1)
{
    if (!b->st.clock.ok)
        return 1;   /* monotonic times: the range cannot be placed */
    uint64_t from = b->po->from_wall, to = b->po->to_wall;
    if (*t0 == *t1)
        return (!from || *t0 >= from) && (!to || *t0 < to);
    if (from && *t0 < from)
        *t0 = from;
    if (to && *t1 > to)
        *t1 = to;
    return *t0 < *t1;
}

static void add_span(struct rp_tl_thread *t, uint64_t t0, uint64_t t1, unsigned state)
{
    struct rp_tl_span *last = t->nspans ? &t->spans[t->nspans - 1] : NULL;
    if (last && last->state == state && t0 >= last->t0 && t0 <= last->t1) {
        if (t1 > last->t1)
            last->t1 = t1;
        return;
    }
    rp_xgrow((void **)&t->spans, &t->cap, t->nspans, sizeof *t->spans, 64);
    t->spans[t->nspans++] = (struct rp_tl_span){t0, t1, (uint8_t)state};
}

static void on_sample(struct rp_tl *tl, struct build *b, const struct rp_event *ev)
{
    const struct rp_stream_kind *k = rp_stream_kind(&b->st, ev->u.sample.kind);
    if (k->kind != RP_SK_WALL && k->kind != RP_SK_LOCK && k->kind != RP_SK_GC)
        return;
    int wall = k->kind == RP_SK_WALL;
    if (wall)
        tl->have_wall_kind = 1;
    uint64_t w = ev->u.sample.weight, at = wall_of(b, ev->u.sample.time);
    /* wall: [time - weight, time]; lock and gc: [time, time + weight] */
    uint64_t t0 = wall ? (at > w ? at - w : 0) : at;
    uint64_t t1 = wall ? at : at + w;
    if (!clip(b, &t0, &t1)) {
        tl->samples_time_filtered++;
        return;
    }
    if (k->kind == RP_SK_GC) {
        rp_xgrow((void **)&tl->gcs, &tl->cap_gcs, tl->ngcs, sizeof *tl->gcs, 64);
        tl->gcs[tl->ngcs++] = (struct rp_tl_gc){t0, t1, rp_sx_value(k, ev, RP_SX_ID, 0),
                                                rp_sx_value(k, ev, RP_SX_HEAP_USED, 0)};
        tl->gc_samples++;
        return;
    }
    uint32_t row = chunk_thread(tl, b, ev->u.sample.thread);
    if (row == T_FILTERED) {
        tl->samples_thread_filtered++;
        return;
    }
    if (wall) {
        add_span(&tl->threads[row], t0, t1, rp_sx_state(k, ev));
        tl->wall_samples++;
        return;
    }
    const char *klass = rp_stream_x_class(&b->st, k, ev, RP_SX_CLASS);
    const struct rp_thread_info *oi = rp_stream_x_thread(&b->st, k, ev, RP_SX_OWNER);
    rp_xgrow((void **)&tl->locks, &tl->cap_locks, tl->nlocks, sizeof *tl->locks, 64);
    tl->locks[tl->nlocks++] = (struct rp_tl_lock){t0, t1, row, xstrdup(klass),
                                                  xstrdup(oi ? oi->name : NULL)};
    tl->lock_samples++;
}

static void on_gauge(struct rp_tl *tl, struct build *b, const struct rp_event *ev)
{
    if (b->st.rec != 0 || !ev->u.gauge.name)   /* one process's telemetry: the first */
        return;
    for (int g = 0; g < RP_TL_G_COUNT; g++) {
        if (strcmp(ev->u.gauge.name, rp_tl_gauges[g].name))
            continue;
        /* Every reading is kept for now: the rates at the edges of a --from/--to
         * range need the readings just outside it (trim_series). */
        struct rp_tl_series *s = &tl->gauges[g];
        rp_xgrow((void **)&s->p, &s->cap, s->n, sizeof *s->p, 64);
        s->p[s->n++] = (struct rp_tl_point){wall_of(b, ev->u.gauge.time), ev->u.gauge.value};
        s->total = rp_tl_gauges[g].total;
        return;
    }
}

static void load_file(struct rp_tl *tl, struct build *b, const char *path)
{
    struct rp_reader *r = rp_reader_open(path, b->po->diag, b->po->diag_arg);
    if (!r)
        return;
    tl->files_read++;
    rp_stream_begin(&b->st, r);
    sources_follow(tl, &b->st);
    if (b->thr)
        memset(b->thr, 0, b->nthr * sizeof *b->thr);
    struct rp_event ev;
    while (rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_SAMPLE)
            on_sample(tl, b, &ev);
        else if (ev.type == RP_EV_GAUGE)
            on_gauge(tl, b, &ev);
        else if (ev.type == RP_EV_THREAD && ev.u.thread.id < b->nthr)
            thread_redefined(tl, b, ev.u.thread.id);
    }
    rp_stream_end(&b->st);
    rp_reader_close(r);
}

/* ------------------------------------------------------------ finishing -- */

static int cmp_span(const void *a, const void *b)
{
    const struct rp_tl_span *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0 ? 1 : (x->t1 > y->t1) - (x->t1 < y->t1);
}

static int cmp_point(const void *a, const void *b)
{
    const struct rp_tl_point *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

static int cmp_gc(const void *a, const void *b)
{
    const struct rp_tl_gc *x = a, *y = b;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static int cmp_lock(const void *a, const void *b)
{
    const struct rp_tl_lock *x = a, *y = b;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Keep the readings in [from, to) and one on each side of that (a column at an
 * edge of the range interpolates between them); count the ones inside. */
static void trim_series(struct rp_tl *tl, struct rp_tl_series *s,
                        const struct rp_prof_options *po)
{
    size_t i0 = 0, i1 = s->n;   /* the readings inside: [i0, i1) */
    while (po->from_wall && i0 < s->n && s->p[i0].t < po->from_wall)
        i0++;
    while (po->to_wall && i1 > i0 && s->p[i1 - 1].t >= po->to_wall)
        i1--;
    tl->gauge_readings += i1 - i0;
    if (i1 == i0) {   /* none inside: nothing to draw */
        s->n = 0;
        return;
    }
    size_t a = i0 ? i0 - 1 : 0, z = i1 < s->n ? i1 + 1 : s->n;
    memmove(s->p, s->p + a, (z - a) * sizeof *s->p);
    s->n = z - a;
}

static void extend(struct rp_tl *tl, uint64_t t0, uint64_t t1)
{
    if (tl->t0 == tl->t1 && !tl->t0) {
        tl->t0 = t0;
        tl->t1 = t1;
        return;
    }
    tl->t0 = t0 < tl->t0 ? t0 : tl->t0;
    tl->t1 = t1 > tl->t1 ? t1 : tl->t1;
}

static void finish_thread(struct rp_tl *tl, struct rp_tl_thread *t)
{
    if (t->nspans)
        qsort(t->spans, t->nspans, sizeof *t->spans, cmp_span);
    size_t n = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        struct rp_tl_span *s = &t->spans[i];
        if (n && t->spans[n - 1].state == s->state && s->t0 <= t->spans[n - 1].t1) {
            if (s->t1 > t->spans[n - 1].t1)
                t->spans[n - 1].t1 = s->t1;
            continue;
        }
        t->spans[n++] = *s;
    }
    t->nspans = n;
    for (size_t i = 0; i < n; i++) {
        t->state_ns[t->spans[i].state] += t->spans[i].t1 - t->spans[i].t0;
        extend(tl, t->spans[i].t0, t->spans[i].t1);
    }
    if (n) {
        t->first = t->spans[0].t0;
        t->last = t->spans[n - 1].t1;
    }
}

void rp_tl_load(struct rp_tl *tl, const struct rp_inputs *in,
                const struct rp_prof_options *po)
{
    struct build b;
    memset(&b, 0, sizeof b);
    b.po = po;
    for (size_t i = 0; i < in->n; i++) {
        rp_progress(i + 1, in->n, in->paths[i]);
        load_file(tl, &b, in->paths[i]);
    }
    rp_progress_done();
    rp_stream_free(&b.st);
    free(b.thr);
    free(b.hash);

    for (size_t i = 0; i < tl->nthreads; i++)
        finish_thread(tl, &tl->threads[i]);
    if (tl->ngcs)   /* qsort wants a real pointer even for 0 elements */
        qsort(tl->gcs, tl->ngcs, sizeof *tl->gcs, cmp_gc);
    if (tl->nlocks)
        qsort(tl->locks, tl->nlocks, sizeof *tl->locks, cmp_lock);
    for (size_t i = 0; i < tl->ngcs; i++)
        extend(tl, tl->gcs[i].t0, tl->gcs[i].t1);
    for (size_t i = 0; i < tl->nlocks; i++)
        extend(tl, tl->locks[i].t0, tl->locks[i].t1);
    for (int g = 0; g < RP_TL_G_COUNT; g++) {
        struct rp_tl_series *s = &tl->gauges[g];
        if (s->n)
            qsort(s->p, s->n, sizeof *s->p, cmp_point);
        trim_series(tl, s, po);
        if (s->n)
            extend(tl, s->p[0].t, s->p[s->n - 1].t);
    }
    tl->data_t1 = tl->t1;
    /* An explicit --from/--to is the axis, so that two ranges of one recording
     * line up column for column. */
    if (tl->t1 > tl->t0 || tl->t0) {
        if (po->from_wall)
            tl->t0 = po->from_wall;
        if (po->to_wall)
            tl->t1 = po->to_wall;
    }
}

void rp_tl_free(struct rp_tl *tl)
{
    for (size_t i = 0; i < tl->nthreads; i++) {
        free((char *)tl->threads[i].name);
        rp_thread_names_free(&tl->threads[i].names);
        free(tl->threads[i].spans);
    }
    free(tl->threads);
    for (size_t i = 0; i < tl->nlocks; i++) {
        free((char *)tl->locks[i].klass);
        free((char *)tl->locks[i].owner);
    }
    free(tl->locks);
    free(tl->gcs);
    for (int g = 0; g < RP_TL_G_COUNT; g++)
        free(tl->gauges[g].p);
    for (size_t i = 0; i < tl->nsources; i++)
        free(tl->sources[i]);
    free(tl->sources);
    memset(tl, 0, sizeof *tl);
}

/* -------------------------------------------------------------- columns -- */

/* The start of column i of w over the axis (exact: 128-bit product). */
static uint64_t col_start(const struct rp_tl *tl, unsigned w, unsigned i)
{
    unsigned __int128 d = (unsigned __int128)(tl->t1 - tl->t0) * i;
    return tl->t0 + (uint64_t)(d / w);
}

/* The first column that ends after time t. */
static unsigned col_of(const struct rp_tl *tl, unsigned w, uint64_t t)
{
    if (t <= tl->t0 || tl->t1 <= tl->t0)
        return 0;
    unsigned __int128 d = (unsigned __int128)(t - tl->t0) * w / (tl->t1 - tl->t0);
    unsigned i = d >= w ? w - 1 : (unsigned)d;
    while (i > 0 && col_start(tl, w, i) > t)   /* rounding: step back */
        i--;
    while (i + 1 < w && col_start(tl, w, i + 1) <= t)
        i++;
    return i;
}

void rp_tl_columns(const struct rp_tl *tl, const struct rp_tl_thread *th, unsigned w,
                   uint8_t *col)
{
    uint64_t *cov = rp_xmalloc((size_t)w * RP_TS_COUNT * sizeof *cov);
    memset(cov, 0, (size_t)w * RP_TS_COUNT * sizeof *cov);
    for (size_t k = 0; k < th->nspans; k++) {
        const struct rp_tl_span *s = &th->spans[k];
        uint64_t a = s->t0 > tl->t0 ? s->t0 : tl->t0, z = s->t1 < tl->t1 ? s->t1 : tl->t1;
        for (unsigned i = col_of(tl, w, a); a < z && i < w; i++) {
            uint64_t ce = i + 1 < w ? col_start(tl, w, i + 1) : tl->t1;
            uint64_t e = z < ce ? z : ce;
            if (e > a)
                cov[(size_t)i * RP_TS_COUNT + s->state] += e - a;
            a = e > a ? e : a;
        }
    }
    for (unsigned i = 0; i < w; i++) {
        uint64_t width = (i + 1 < w ? col_start(tl, w, i + 1) : tl->t1) -
                         col_start(tl, w, i);
        uint64_t covered = 0, best = 0;
        unsigned st = RP_TL_NONE;
        for (unsigned s = 0; s < RP_TS_COUNT; s++) {
            uint64_t c = cov[(size_t)i * RP_TS_COUNT + s];
            covered += c;
            if (c > best) {
                best = c;
                st = s;
            }
        }
        /* Overlapping samples can cover more than the column: no gap then. */
        uint64_t none = covered < width ? width - covered : 0;
        col[i] = (uint8_t)(best && best >= none ? st : RP_TL_NONE);
    }
    free(cov);
}

/* The counter's value at t >= first.t, linearly interpolated; past the last
 * reading, at the last interval's rate (s->n >= 2). */
static double interp(const struct rp_tl_series *s, size_t *hint, uint64_t t)
{
    size_t i = *hint;
    while (i + 1 < s->n && s->p[i + 1].t <= t)
        i++;
    *hint = i;
    if (i + 1 >= s->n)
        i = s->n - 2;   /* past the last reading: its interval goes on */
    if (s->p[i + 1].t == s->p[i].t)
        return (double)s->p[i + 1].v;
    double f = (double)(t - s->p[i].t) / (double)(s->p[i + 1].t - s->p[i].t);
    return (double)s->p[i].v + f * ((double)s->p[i + 1].v - (double)s->p[i].v);
}

/* Time-weighted mean of the step function (each reading holds until the next)
 * over [a, z), first.t <= a < z <= last.t. */
static double step_mean(const struct rp_tl_series *s, size_t *hint, uint64_t a, uint64_t z)
{
    size_t i = *hint;
    while (i + 1 < s->n && s->p[i + 1].t <= a)
        i++;
    *hint = i;
    double sum = 0;
    for (uint64_t t = a; t < z; i++) {
        uint64_t e = i + 1 < s->n && s->p[i + 1].t < z ? s->p[i + 1].t : z;
        sum += (double)s->p[i].v * (double)(e - t);
        t = e;
    }
    return sum / (double)(z - a);
}

void rp_tl_gauge_columns(const struct rp_tl *tl, int g, unsigned w, double *out)
{
    const struct rp_tl_series *s = &tl->gauges[g];
    size_t hint = 0, hint2 = 0;
    for (unsigned i = 0; i < w; i++) {
        out[i] = NAN;
        if (s->n < 2 && !(s->n == 1 && !s->total))
            continue;
        uint64_t a = col_start(tl, w, i), z = i + 1 < w ? col_start(tl, w, i + 1) : tl->t1;
        uint64_t first = s->p[0].t, last = s->p[s->n - 1].t;
        if (s->n == 1) {   /* a single level: its column only */
            if (first >= a && (first < z || (i + 1 == w && first == z)))
                out[i] = (double)s->p[0].v * rp_tl_gauges[g].scale;
            continue;
        }
        uint64_t end = tl->data_t1 > last ? tl->data_t1 : last;
        a = a > first ? a : first;
        z = z < end ? z : end;
        if (a >= z)
            continue;
        if (s->total)
            out[i] = (interp(s, &hint, z) - interp(s, &hint2, a)) / (double)(z - a) * 1e9 *
                     rp_tl_gauges[g].scale;
        else
            out[i] = step_mean(s, &hint, a, z) * rp_tl_gauges[g].scale;
    }
}

/* ---------------------------------------------------------------- order -- */

static const struct rp_tl *sort_tl;
static enum rp_tl_sort sort_by;

/* Names compared with digit runs as numbers: worker-2 before worker-10. */
static int natcmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = strncmp(a, b, na);
            if (c)
                return c;
            a += na;
            b += nb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return (*a != 0) - (*b != 0);
}

static uint64_t busy_ns(const struct rp_tl_thread *t)
{
    return t->state_ns[RP_TS_RUNNING] + t->state_ns[RP_TS_RUNNABLE];
}

static int cmp_row(const void *x, const void *y)
{
    const struct rp_tl_thread *a = &sort_tl->threads[*(const uint32_t *)x];
    const struct rp_tl_thread *b = &sort_tl->threads[*(const uint32_t *)y];
    int c = 0;
    if (sort_by == RP_TL_SORT_BUSY)
        c = busy_ns(a) > busy_ns(b) ? -1 : busy_ns(a) < busy_ns(b);
    else if (sort_by == RP_TL_SORT_START)
        c = a->first < b->first ? -1 : a->first > b->first;
    if (!c)
        c = natcmp(a->name, b->name);
    if (!c)
        c = a->source != b->source ? (a->source < b->source ? -1 : 1)
                                   : (a->os_tid > b->os_tid) - (a->os_tid < b->os_tid);
    return c;
}

size_t rp_tl_order(const struct rp_tl *tl, const struct rp_tl_options *o,
                   uint32_t **order)
{
    uint32_t *ord = rp_xmalloc((tl->nthreads ? tl->nthreads : 1) * sizeof *ord);
    for (size_t i = 0; i < tl->nthreads; i++)
        ord[i] = (uint32_t)i;
    sort_tl = tl;
    sort_by = o->sort;
    qsort(ord, tl->nthreads, sizeof *ord, cmp_row);
    *order = ord;
    size_t rows = o->rows_set ? o->rows : RP_TL_DEFAULT_ROWS;
    return rows && rows < tl->nthreads ? rows : tl->nthreads;
}
