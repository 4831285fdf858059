/*
 * tools/model/scan.c — the look-ahead pass over the inputs (scan.h).
 *
 * Snapshots are collected as raw entries, one per run of live events (gauges or
 * samples) at the same instant of the same recording: the agent writes a
 * snapshot's samples and gauges together, so a run is usually a whole snapshot,
 * and rp_scan_finish sorts the entries and merges those of the same instant
 * (a snapshot split over segments or chunks, or its gauges apart from its
 * samples). That keeps the hot path to one comparison per live sample.
 */
#include "scan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timespec.h"
#include "xalloc.h"

size_t rp_scan_rec(const struct rp_scan *sc, const char *key)
{
    return rp_stream_rec(&sc->st, key);
}

/* The first kind named, and whether cpu and alloc are among them. */
static void scan_kinds(struct rp_scan *sc, const struct rp_reader *r)
{
    for (uint32_t k = 1; k <= rp_reader_kind_count(r); k++) {
        const struct rp_kind_info *ki = rp_reader_kind(r, k);
        if (!ki || !ki->name)
            continue;
        enum rp_skind sk = rp_skind_of(ki->name);
        sc->has_cpu |= sk == RP_SK_CPU;
        sc->has_alloc |= sk == RP_SK_ALLOC;
        if (!sc->kind)
            sc->kind = strdup(ki->name);
    }
}

/* The raw entry for a live event at `mono`: the last one if it is the same
 * instant (the common case), else a new one. */
static struct rp_snapshot *snap_at(struct rp_scan *sc, uint32_t rec, uint64_t mono,
                                   uint64_t wall)
{
    if (sc->nsnaps) {
        struct rp_snapshot *s = &sc->snaps[sc->nsnaps - 1];
        if (s->rec == rec && s->mono == mono)
            return s;
    }
    rp_xgrow((void **)&sc->snaps, &sc->cap, sc->nsnaps, sizeof *sc->snaps, 64);
    struct rp_snapshot *s = &sc->snaps[sc->nsnaps++];
    memset(s, 0, sizeof *s);
    s->rec = rec;
    s->mono = mono;
    s->wall = wall;
    return s;
}

static void on_gauge(struct rp_scan *sc, const struct rp_event *ev)
{
    const char *name = ev->u.gauge.name;
    unsigned bit = !name ? 0 : !strcmp(name, RP_GAUGE_LIVE_OBJECTS) ? 1
                             : !strcmp(name, RP_GAUGE_LIVE_BYTES) ? 2 : 0;
    if (!bit)
        return;
    struct rp_snapshot *s = snap_at(sc, sc->st.rec, ev->u.gauge.time,
                                    rp_stream_wall(&sc->st, ev->u.gauge.time));
    s->gauges |= bit;
    if (bit == 1)
        s->gauge_objects = ev->u.gauge.value;
    else
        s->gauge_bytes = ev->u.gauge.value;
}

/* A live sample: its snapshot's figures. */
static void on_live(struct rp_scan *sc, const struct rp_stream_kind *k,
                    const struct rp_event *ev, uint64_t wall)
{
    struct rp_snapshot *s = snap_at(sc, sc->st.rec, ev->u.sample.time, wall);
    s->samples++;
    s->bytes += ev->u.sample.weight;
    if (rp_sx_has(k, ev, RP_SX_AGE_GCS)) {
        s->aged = 1;
        if (rp_sx_value(k, ev, RP_SX_AGE_GCS, 0) >= 1) {
            s->old_samples++;
            s->old_bytes += ev->u.sample.weight;
        }
    }
}

/* A sample: the range, the waits, the snapshots, as `what` asks. */
static void on_sample(struct rp_scan *sc, const struct rp_event *ev, unsigned what)
{
    if (what & RP_SCAN_WAITS)
        rp_waits_sample(&sc->waits, &sc->st, ev);
    uint64_t t = rp_stream_wall(&sc->st, ev->u.sample.time);
    if ((what & RP_SCAN_RANGE) && sc->st.clock.ok) {
        if (!sc->first || t < sc->first)
            sc->first = t;
        if (t > sc->last)
            sc->last = t;
    }
    if (!(what & RP_SCAN_SNAPSHOTS))
        return;
    const struct rp_stream_kind *k = rp_stream_kind(&sc->st, ev->u.sample.kind);
    if (k->kind == RP_SK_LIVE)
        on_live(sc, k, ev, t);
}

void rp_scan_file(struct rp_scan *sc, const char *path, unsigned what)
{
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    if (!r)
        return;
    sc->opened++;
    rp_stream_begin(&sc->st, r);
    sc->recs = sc->st.recs;
    sc->nrecs = sc->st.nrecs;
    struct rp_event ev;
    const unsigned all = RP_SCAN_RANGE | RP_SCAN_SNAPSHOTS | RP_SCAN_WAITS;
    while (what & all && rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_GAUGE && (what & RP_SCAN_SNAPSHOTS))
            on_gauge(sc, &ev);
        else if (ev.type == RP_EV_SAMPLE)
            on_sample(sc, &ev, what);
    }
    if (what & RP_SCAN_KINDS) {
        /* Without a full read: up to the first sample, whose segment defines
         * the kinds. */
        while (!(what & all) && rp_reader_next(r, &ev) &&
               ev.type != RP_EV_SAMPLE)
            ;
        scan_kinds(sc, r);
    }
    rp_stream_end(&sc->st);
    rp_reader_close(r);
}

static int cmp_snaps(const void *a, const void *b)
{
    const struct rp_snapshot *x = a, *y = b;
    if (x->rec != y->rec)
        return x->rec < y->rec ? -1 : 1;
    return x->mono < y->mono ? -1 : x->mono > y->mono;
}

void rp_scan_finish(struct rp_scan *sc)
{
    rp_waits_finish(&sc->waits);
    if (!sc->nsnaps)
        return;
    qsort(sc->snaps, sc->nsnaps, sizeof *sc->snaps, cmp_snaps);
    size_t out = 0;
    for (size_t i = 1; i < sc->nsnaps; i++) {
        struct rp_snapshot *d = &sc->snaps[out], *s = &sc->snaps[i];
        if (s->rec != d->rec || s->mono != d->mono) {
            sc->snaps[++out] = *s;
            continue;
        }
        d->samples += s->samples;
        d->bytes += s->bytes;
        if (s->gauges & 1)
            d->gauge_objects = s->gauge_objects;
        if (s->gauges & 2)
            d->gauge_bytes = s->gauge_bytes;
        d->gauges |= s->gauges;
        if (!d->wall)
            d->wall = s->wall;
    }
    sc->nsnaps = out + 1;
}

void rp_scan_free(struct rp_scan *sc)
{
    rp_stream_free(&sc->st);   /* and with it recs */
    free(sc->snaps);
    free(sc->kind);
    rp_waits_free(&sc->waits);
    memset(sc, 0, sizeof *sc);
}

int rp_scan_wait_keep(void *arg, const char *recording, uint64_t os_tid, uint64_t start,
                      uint64_t weight)
{
    struct rp_scan *sc = arg;
    size_t rec = rp_scan_rec(sc, recording);
    return rec != SIZE_MAX && rp_waits_take(&sc->waits, (uint32_t)rec, os_tid, start, weight);
}

int rp_snap_parse(const char *s, long *which)
{
    if (!strcmp(s, "first")) {
        *which = 1;
        return 0;
    }
    if (!strcmp(s, "last")) {
        *which = -1;
        return 0;
    }
    const char *digits = s + (s[0] == '-' || s[0] == '+');
    if (!*digits || strspn(digits, "0123456789") != strlen(digits))
        return -1;
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno || v == 0)
        return -1;
    *which = v;
    return 0;
}

static int in_range(const struct rp_snapshot *s, uint64_t from, uint64_t to)
{
    if (!s->wall)
        return 1;
    return (!from || s->wall >= from) && (!to || s->wall < to);
}

size_t rp_snap_select(const struct rp_scan *sc, long which, uint64_t from, uint64_t to,
                      size_t *chosen, size_t *nrange)
{
    size_t found = 0;
    for (size_t r = 0; r < sc->nrecs; r++) {
        /* Snapshots are sorted by recording, then time. */
        size_t lo = SIZE_MAX, n = 0;
        for (size_t i = 0; i < sc->nsnaps; i++)
            if (sc->snaps[i].rec == r && in_range(&sc->snaps[i], from, to)) {
                if (lo == SIZE_MAX)
                    lo = i;
                n++;
            }
        size_t k = SIZE_MAX;   /* position among the n in range */
        if (which > 0 && (size_t)which <= n)
            k = (size_t)which - 1;
        else if (which < 0 && (size_t)-which <= n)
            k = n - (size_t)-which;
        size_t pick = SIZE_MAX;
        for (size_t i = lo, seen = 0; k != SIZE_MAX && i < sc->nsnaps; i++)
            if (sc->snaps[i].rec == r && in_range(&sc->snaps[i], from, to) &&
                seen++ == k) {
                pick = i;
                break;
            }
        if (chosen)
            chosen[r] = pick;
        if (nrange)
            nrange[r] = n;
        found += pick != SIZE_MAX;
    }
    return found;
}

void rp_snap_describe(const struct rp_snapshot *s, char *buf, size_t cap)
{
    char t[48];
    if (s->wall)
        rp_fmt_wall(t, sizeof t, s->wall);
    else
        snprintf(t, sizeof t, "monotonic %llu ns", (unsigned long long)s->mono);
    if (s->aged) {
        snprintf(buf, cap, "%s, %llu sampled objects that survived a GC, %llu bytes; "
                 "not yet collected, younger than the last GC: %llu, %llu bytes", t,
                 (unsigned long long)s->old_samples, (unsigned long long)s->old_bytes,
                 (unsigned long long)(s->samples - s->old_samples),
                 (unsigned long long)(s->bytes - s->old_bytes));
        return;
    }
    uint64_t objs = s->gauges & 1 ? s->gauge_objects : s->samples;
    snprintf(buf, cap, "%s, %llu object%s sampled, %llu bytes", t, (unsigned long long)objs,
             objs == 1 ? "" : "s",
             (unsigned long long)(s->gauges & 2 ? s->gauge_bytes : s->bytes));
}

/* Append printf output to a malloc'd string. */
static void appendf(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void appendf(char **s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t old = *s ? strlen(*s) : 0;
    *s = rp_xrealloc(*s, old + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(*s + old, (size_t)n + 1, fmt, ap);
    va_end(ap);
}

static void ordinal(char *buf, size_t cap, long which, size_t n)
{
    if (which == -1)
        snprintf(buf, cap, "the last of %zu", n);
    else if (which == 1)
        snprintf(buf, cap, "the first of %zu", n);
    else
        snprintf(buf, cap, "number %zu of %zu",
                 which > 0 ? (size_t)which : n + 1 - (size_t)-which, n);
}

/* Why no snapshot could be chosen. */
static void explain_none(struct rp_snap_choice *c, long which)
{
    const struct rp_scan *sc = c->sc;
    if (!sc->nsnaps) {
        appendf(&c->note, "no live snapshot in the inputs: the recording was made "
                          "without live=on");
        return;
    }
    size_t most = 0;
    for (size_t r = 0; r < sc->nrecs; r++)
        most = c->in_range[r] > most ? c->in_range[r] : most;
    char a[48], b[48];
    uint64_t lo = 0, hi = 0;
    for (size_t i = 0; i < sc->nsnaps; i++) {
        if (sc->snaps[i].wall && (!lo || sc->snaps[i].wall < lo))
            lo = sc->snaps[i].wall;
        hi = sc->snaps[i].wall > hi ? sc->snaps[i].wall : hi;
    }
    rp_fmt_wall(a, sizeof a, lo);
    rp_fmt_wall(b, sizeof b, hi);
    if (!most)
        appendf(&c->note, "no live snapshot in the time range (the inputs have %zu, "
                          "from %s to %s)", sc->nsnaps, a, b);
    else
        appendf(&c->note, "--snapshot %ld: the time range holds only %zu live "
                          "snapshot%s (the inputs have %zu, from %s to %s)", which, most,
                most == 1 ? "" : "s", sc->nsnaps, a, b);
}

int rp_snap_choose(struct rp_snap_choice *c, const struct rp_scan *sc, long which,
                   uint64_t from, uint64_t to)
{
    memset(c, 0, sizeof *c);
    c->sc = sc;
    c->chosen = rp_xrealloc(NULL, (sc->nrecs + 1) * sizeof *c->chosen);
    c->in_range = rp_xrealloc(NULL, (sc->nrecs + 1) * sizeof *c->in_range);
    if (!rp_snap_select(sc, which, from, to, c->chosen, c->in_range)) {
        explain_none(c, which);
        return -1;
    }
    int several = sc->nrecs > 1;
    for (size_t r = 0; r < sc->nrecs; r++) {
        char d[320], o[64];
        const struct rp_snapshot *s = c->chosen[r] != SIZE_MAX ? &sc->snaps[c->chosen[r]]
                                                               : NULL;
        if (several)
            appendf(&c->note, "%s%s: ", r ? "; " : "", sc->recs[r]);
        if (!s) {
            appendf(&c->note, "none");
            continue;
        }
        rp_snap_describe(s, d, sizeof d);
        ordinal(o, sizeof o, which, c->in_range[r]);
        appendf(&c->note, "%s (%s in the range)", d, o);
        if ((s->gauges & 1) && s->gauge_objects > s->samples)
            appendf(&c->warning, "%slive snapshot %s: its %s gauge counts %llu objects, "
                    "the inputs hold %llu of them (the rest are missing: damaged segments?)",
                    c->warning ? "; " : "", d, RP_GAUGE_LIVE_OBJECTS,
                    (unsigned long long)s->gauge_objects, (unsigned long long)s->samples);
    }
    return 0;
}

void rp_snap_choice_free(struct rp_snap_choice *c)
{
    free(c->chosen);
    free(c->in_range);
    free(c->note);
    free(c->warning);
    memset(c, 0, sizeof *c);
}

int rp_snap_instant(void *arg, const char *recording, uint64_t *mono)
{
    const struct rp_snap_choice *c = arg;
    size_t r = rp_scan_rec(c->sc, recording);
    if (r == SIZE_MAX || c->chosen[r] == SIZE_MAX)
        return 0;
    *mono = c->sc->snaps[c->chosen[r]].mono;
    return 1;
}
