/*
 * tools/commands/push_body.c — a chunk's identity, windows and request bodies
 * for `ringprof push` (push_body.h).
 */
#include "push_body.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/inputs.h"
#include "model/scan.h"
#include "model/xalloc.h"
#include "ringprof/errbuf.h"

/* The most kinds a survey counts apart (--event names at most this many). */
#define SURVEY_KINDS 32

/* ------------------------------------------------------------ identity -- */

static char *meta_dup(const struct rp_reader *r, const char *key)
{
    const char *v = rp_reader_meta(r, key);
    return rp_xstrdup(v ? v : "");
}

static uint64_t meta_u64(const struct rp_reader *r, const char *key, int *found)
{
    const char *v = rp_reader_meta(r, key);
    char *end;
    errno = 0;
    unsigned long long x = v ? strtoull(v, &end, 10) : 0;
    int ok = v && *v && !*end && !errno;
    if (found)
        *found = ok;
    return ok ? x : 0;
}

/* The reader's first fatal reason, for err. */
struct first_reason {
    char *err;
    size_t errlen;
};

static void keep_reason(void *arg, const char *path, uint64_t offset, const char *reason,
                        int fatal)
{
    (void)offset;
    struct first_reason *f = arg;
    if (fatal && f->errlen && !f->err[0])
        snprintf(f->err, f->errlen, "%s: %s", path, reason);
}

static void ident_from(const struct rp_reader *r, struct rp_push_ident *id)
{
    id->recording = meta_dup(r, RP_META_RECORDING);
    uint64_t seq = meta_u64(r, RP_META_CHUNK_SEQ, &id->has_seq);
    id->has_seq = id->has_seq && seq <= UINT32_MAX;
    id->seq = id->has_seq ? (uint32_t)seq : 0;
    id->host = meta_dup(r, RP_META_HOST);
    id->pid = meta_dup(r, RP_META_PID);
    id->service = meta_dup(r, RP_META_SERVICE);
    id->labels = meta_dup(r, RP_META_LABELS);
    id->main = meta_dup(r, RP_META_JVM_MAIN);
    id->start_wall = meta_u64(r, RP_META_START_WALL, NULL);
    id->interval_ns = meta_u64(r, "agent.interval_ns", NULL);
}

int rp_push_ident_read(const char *path, struct rp_push_ident *id, char *err,
                       size_t errlen)
{
    memset(id, 0, sizeof *id);
    if (errlen)
        err[0] = '\0';
    struct first_reason fr = {err, errlen};
    struct rp_reader *r = rp_reader_open(path, keep_reason, &fr);
    if (!r) {
        int e = errno;
        if (errlen && !err[0])
            snprintf(err, errlen, "%s: not a readable chunk", path);
        errno = e;
        return -1;
    }
    ident_from(r, id);
    rp_reader_close(r);
    return 0;
}

void rp_push_ident_free(struct rp_push_ident *id)
{
    free(id->recording);
    free(id->host);
    free(id->pid);
    free(id->service);
    free(id->labels);
    free(id->main);
    memset(id, 0, sizeof *id);
}

void rp_push_ident_source(const struct rp_push_ident *id, struct rp_prof_source *s)
{
    memset(s, 0, sizeof *s);
    s->recording = id->recording;
    s->pid = id->pid;
    s->host = id->host;
    s->jvm = "";
    s->service = id->service;
    s->labels = id->labels;
    s->main = id->main;
}

/* -------------------------------------------------------------- survey -- */

/* What one window of a chunk holds. */
struct window {
    int64_t idx;                      /* floor(wall / period); 0 without a period */
    uint64_t count[SURVEY_KINDS];     /* samples of each asked kind               */
    uint64_t any;                     /* samples of every kind                    */
    uint64_t live_mono;               /* the last live snapshot's instant         */
    int has_live;
};

struct survey {
    const struct rp_push_body_options *o;
    struct window *w;
    size_t n, cap;
    uint64_t period;
    int live_x;                       /* index of "live" in o->events, or -1      */
};

static struct window *window_for(struct survey *s, uint64_t wall)
{
    int64_t idx = s->period ? (int64_t)(wall / s->period) : 0;
    for (size_t i = s->n; i-- > 0;)           /* times mostly ascend: look back */
        if (s->w[i].idx == idx)
            return &s->w[i];
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->w = rp_xreallocarray(s->w, s->cap, sizeof *s->w);
    }
    size_t at = s->n;                         /* keep them sorted by idx */
    while (at > 0 && s->w[at - 1].idx > idx)
        at--;
    memmove(s->w + at + 1, s->w + at, (s->n - at) * sizeof *s->w);
    s->n++;
    memset(&s->w[at], 0, sizeof s->w[at]);
    s->w[at].idx = idx;
    return &s->w[at];
}

static int event_index(const struct rp_push_body_options *o, const char *kind)
{
    for (size_t i = 0; kind && i < o->nevents && i < SURVEY_KINDS; i++)
        if (!strcmp(o->events[i], kind))
            return (int)i;
    return -1;
}

static void span(struct rp_push_chunk *c, uint64_t wall)
{
    if (!c->begin || wall < c->begin)
        c->begin = wall;
    if (wall > c->end)
        c->end = wall;
}

/* One pass: the chunk's time range and what each window holds; the reader's
 * problems are printed here, once. @return 0 or -1. */
static int survey(struct rp_push_chunk *c, struct survey *s, struct rp_diag_counts *dc,
                  char *err, size_t errlen)
{
    struct rp_reader *r = rp_reader_open(c->path, rp_diag_print, dc);
    if (!r)
        return rp_fail(err, errlen, "%s: not a readable chunk", c->path);
    ident_from(r, &c->id);
    int clock = rp_reader_meta(r, RP_META_START_WALL) && rp_reader_meta(r, RP_META_START_MONO);
    uint64_t wall0 = meta_u64(r, RP_META_START_WALL, NULL);
    uint64_t mono0 = meta_u64(r, RP_META_START_MONO, NULL);
    if (!clock)
        s->period = 0;   /* no clock mapping: the chunk is one window */
    if (wall0)
        span(c, wall0);
    struct rp_event ev;
    while (rp_reader_next(r, &ev)) {
        uint64_t mono = ev.type == RP_EV_SAMPLE ? ev.u.sample.time
                      : ev.type == RP_EV_SEGMENT ? ev.u.seg.t_last
                      : ev.type == RP_EV_GAUGE ? ev.u.gauge.time : 0;
        if (!mono || !clock)
            continue;
        uint64_t wall = wall0 + (mono - mono0);
        span(c, wall);
        if (ev.type == RP_EV_GAUGE && s->live_x >= 0 && ev.u.gauge.name &&
            !strcmp(ev.u.gauge.name, RP_GAUGE_LIVE_OBJECTS)) {
            struct window *w = window_for(s, wall);
            if (!w->has_live || mono >= w->live_mono)
                w->live_mono = mono, w->has_live = 1;
        }
        if (ev.type != RP_EV_SAMPLE)
            continue;
        const struct rp_kind_info *k = rp_reader_kind(r, ev.u.sample.kind);
        struct window *w = window_for(s, wall);
        w->any++;
        int x = event_index(s->o, k ? k->name : NULL);
        if (x >= 0)
            w->count[x]++;
        if (x >= 0 && x == s->live_x && (!w->has_live || mono >= w->live_mono))
            w->live_mono = mono, w->has_live = 1;
    }
    rp_reader_close(r);
    if (!clock && !s->n)
        window_for(s, 0);
    return 0;
}

/* -------------------------------------------------------------- bodies -- */

struct build_ctx {
    const char *path;
    uint64_t live_mono;
};

static int live_instant(void *arg, const char *recording, uint64_t *mono)
{
    (void)recording;
    const struct build_ctx *b = arg;
    *mono = b->live_mono;
    return 1;
}

/* An events writer's build step: the one chunk, as the writer set po. */
static struct rp_profile *build_events(void *arg, const struct rp_prof_options *po)
{
    const struct build_ctx *b = arg;
    struct rp_profile *p = rp_prof_new(po);
    rp_prof_add_file(p, b->path);
    rp_prof_finish(p);
    return p;
}

static uint64_t kept(const struct rp_profile *p)
{
    return p ? p->stats.samples_kept : 0;
}

/* A FILE over a growing buffer that seeks like a file: a writer that goes back
 * to patch its header (jfr) leaves the body as long as the farthest byte
 * written. (open_memstream's size is the position at the last flush, which
 * would cut such a body at its header.) */
struct membuf {
    char *p;
    size_t len, cap, pos;
};

static ssize_t mem_write(void *arg, const char *buf, size_t n)
{
    struct membuf *m = arg;
    if (m->pos + n > m->cap) {
        m->cap = (m->pos + n) * 2;
        m->p = rp_xrealloc(m->p, m->cap);
    }
    memcpy(m->p + m->pos, buf, n);
    m->pos += n;
    if (m->pos > m->len)
        m->len = m->pos;
    return (ssize_t)n;
}

static ssize_t mem_read(void *arg, char *buf, size_t n)
{
    struct membuf *m = arg;
    size_t k = m->pos < m->len ? m->len - m->pos : 0;
    k = k < n ? k : n;
    memcpy(buf, m->p + m->pos, k);
    m->pos += k;
    return (ssize_t)k;
}

static int mem_seek(void *arg, off64_t *off, int whence)
{
    struct membuf *m = arg;
    off64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (off64_t)m->pos
                                                                : (off64_t)m->len;
    if (base + *off < 0)
        return -1;
    m->pos = (size_t)(base + *off);
    *off = (off64_t)m->pos;
    return 0;
}

static FILE *mem_open(struct membuf *m)
{
    cookie_io_functions_t io = {mem_read, mem_write, mem_seek, NULL};
    FILE *f = fopencookie(m, "w+", io);
    if (!f) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
    return f;
}

/* Write one part's body with the format's writer. @return 0 with the part
 * filled (samples 0: nothing to send), or -1 with err. */
static int write_part(struct rp_push_chunk *c, const struct rp_push_body_options *o,
                      struct rp_prof_options *po, struct build_ctx *bx,
                      struct rp_push_part *part, char *err, size_t errlen)
{
    struct membuf mb = {0};
    FILE *m = mem_open(&mb);
    struct rp_out_options oo = o->oo;
    oo.quiet = 1;
    const char *slash = strrchr(c->path, '/');
    oo.title = slash ? slash + 1 : c->path;
    oo.state_frames = 0;
    struct rp_profile *p = NULL;
    int wrc;
    if (o->fmt->model == RP_MODEL_EVENTS) {
        wrc = o->fmt->write_events(m, build_events, bx, po, &oo, &p);
    } else {
        p = rp_prof_new(po);
        rp_prof_add_file(p, c->path);
        rp_prof_finish(p);
        wrc = kept(p) ? o->fmt->write_profile(m, p, &oo) : 0;
    }
    int e = errno;
    part->samples = kept(p);
    rp_prof_free(p);
    if (fclose(m) != 0 && wrc == 0)
        wrc = -1, e = errno;
    part->body = mb.p ? mb.p : rp_xmalloc(1);
    part->len = mb.len;
    if (wrc != 0)
        return rp_fail(err, errlen, "%s: the %s writer failed: %s", c->path,
                       o->fmt->name, strerror(e ? e : EIO));
    return 0;
}

/* Keep a part that has samples; drop an empty one. */
static void add_part(struct rp_push_chunk *c, struct rp_push_part *p, size_t *cap)
{
    if (!p->samples) {
        free(p->body);
        return;
    }
    if (c->nparts == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        c->parts = rp_xreallocarray(c->parts, *cap, sizeof *c->parts);
    }
    c->parts[c->nparts++] = *p;
}

/* The parts of window w. @return 0 or -1. */
static int window_parts(struct rp_push_chunk *c, const struct rp_push_body_options *o,
                        const struct survey *s, const struct window *w, size_t *cap,
                        char *err, size_t errlen)
{
    uint64_t from = s->period ? (uint64_t)w->idx * s->period : 0;
    uint64_t to = s->period ? from + s->period : 0;
    struct rp_push_part part = {.from = from > c->begin ? from : c->begin,
                                .until = to && to < c->end ? to : c->end};
    struct build_ctx bx = {c->path, w->live_mono};
    struct rp_prof_options po = {.from_wall = from, .to_wall = to};
    unsigned needs = o->fmt->needs;
    po.granularity = needs & RP_FMT_LINES ? RP_GRAN_LINE : RP_GRAN_METHOD;
    po.per_thread = (needs & RP_FMT_THREADS) && !o->merge_threads;
    if (o->fmt->model == RP_MODEL_EVENTS) {
        if (!w->any)
            return 0;
        po.all_kinds = 1;
        if (write_part(c, o, &po, &bx, &part, err, errlen) < 0)
            return -1;
        add_part(c, &part, cap);
        return 0;
    }
    for (size_t k = 0; k < o->nevents && k < SURVEY_KINDS; k++) {
        if (!w->count[k])
            continue;
        struct rp_prof_options kpo = po;
        kpo.event = o->events[k];
        int live = (int)k == s->live_x;
        if (live && !w->has_live)
            continue;
        kpo.instant = live ? live_instant : NULL;
        kpo.instant_arg = live ? &bx : NULL;
        kpo.state_frames = !strcmp(o->events[k], RP_KIND_WALL) && (needs & RP_FMT_STATES);
        struct rp_push_part kp = part;
        snprintf(kp.kind, sizeof kp.kind, "%s", o->events[k]);
        if (write_part(c, o, &kpo, &bx, &kp, err, errlen) < 0)
            return -1;
        add_part(c, &kp, cap);
    }
    return 0;
}

int rp_push_chunk_build(struct rp_push_chunk *c, const char *path,
                        const struct rp_push_body_options *o, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->path = rp_xstrdup(path);
    struct survey s = {.o = o, .period = o->period_ns,
                       .live_x = event_index(o, RP_KIND_LIVE)};
    struct rp_diag_counts dc = {0};
    int rc = survey(c, &s, &dc, err, errlen);
    c->problems = dc.warnings + dc.fatal;
    size_t cap = 0;
    for (size_t i = 0; rc == 0 && i < s.n; i++)
        rc = window_parts(c, o, &s, &s.w[i], &cap, err, errlen);
    free(s.w);
    return rc;
}

void rp_push_chunk_free(struct rp_push_chunk *c)
{
    for (size_t i = 0; i < c->nparts; i++)
        free(c->parts[i].body);
    free(c->parts);
    free(c->path);
    rp_push_ident_free(&c->id);
    memset(c, 0, sizeof *c);
}
