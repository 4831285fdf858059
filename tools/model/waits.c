/*
 * tools/model/waits.c — one record per lock wait (waits.h).
 *
 * Entries are appended as records are read (a wait written at ten flushes gives
 * ten), then sorted by (recording, thread, start) and merged by rp_waits_finish;
 * a look-up is a binary search.
 */
#include "waits.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static void add(struct rp_waits *ws, uint32_t rec, uint64_t os_tid, uint64_t start,
                uint64_t latest, int finished)
{
    rp_xgrow((void **)&ws->w, &ws->cap, ws->n, sizeof *ws->w, 64);
    ws->w[ws->n++] = (struct rp_wait){rec, os_tid, start, latest, (uint8_t)finished, 0};
}

void rp_waits_sample(struct rp_waits *ws, struct rp_stream *st, const struct rp_event *ev)
{
    const struct rp_stream_kind *k = rp_stream_kind(st, ev->u.sample.kind);
    int waiting = k->kind == RP_SK_LOCK_WAITING;
    if (!waiting && !(k->kind == RP_SK_LOCK && rp_sx_value(k, ev, RP_SX_REPORTED, 0)))
        return;
    const struct rp_thread_info *ti = rp_stream_thread(st, ev->u.sample.thread);
    add(ws, st->rec, ti ? ti->os_tid : 0, ev->u.sample.time, waiting ? ev->u.sample.weight : 0,
        !waiting);
}

static int cmp_key(const struct rp_wait *x, uint32_t rec, uint64_t os_tid, uint64_t start)
{
    if (x->rec != rec)
        return x->rec < rec ? -1 : 1;
    if (x->os_tid != os_tid)
        return x->os_tid < os_tid ? -1 : 1;
    return x->start < start ? -1 : x->start > start;
}

static int cmp_waits(const void *a, const void *b)
{
    const struct rp_wait *y = b;
    return cmp_key(a, y->rec, y->os_tid, y->start);
}

void rp_waits_finish(struct rp_waits *ws)
{
    if (!ws->n)
        return;
    qsort(ws->w, ws->n, sizeof *ws->w, cmp_waits);
    size_t out = 0;
    for (size_t i = 1; i < ws->n; i++) {
        struct rp_wait *d = &ws->w[out], *s = &ws->w[i];
        if (cmp_key(d, s->rec, s->os_tid, s->start)) {
            ws->w[++out] = *s;
            continue;
        }
        if (s->latest > d->latest)
            d->latest = s->latest;
        d->finished |= s->finished;
    }
    ws->n = out + 1;
}

int rp_waits_take(struct rp_waits *ws, uint32_t rec, uint64_t os_tid, uint64_t start,
                  uint64_t weight)
{
    size_t lo = 0, hi = ws->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_key(&ws->w[mid], rec, os_tid, start);
        if (!c) {
            struct rp_wait *w = &ws->w[mid];
            if (w->finished || w->kept || weight != w->latest)
                return 0;
            w->kept = 1;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

void rp_waits_free(struct rp_waits *ws)
{
    free(ws->w);
    memset(ws, 0, sizeof *ws);
}
