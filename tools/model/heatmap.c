/*
 * tools/model/heatmap.c — per (kind, time bucket, stack) counts with a bounded
 * number of entries, and the telemetry readings beside them (see heatmap.h).
 *
 * The entries live in one array, found through an open-addressing table of
 * their indexes (linear probing, at most half full). Stepping the width up
 * re-buckets every entry and rebuilds the table, adding together the entries
 * that now share a key: linear in the entries, once per ladder step. They are
 * sorted once, at the end.
 */
#include "heatmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/events.h"
#include "timeline.h"
#include "xalloc.h"

#define MS 1000000ull
#define S  1000000000ull

const uint64_t rp_hm_widths[] = {
    10 * MS, 20 * MS, 100 * MS, 200 * MS, 1 * S, 2 * S, 10 * S, 30 * S, 60 * S,
    300 * S, 600 * S, 1200 * S, 3600 * S, 7200 * S, 86400 * S,
};
const size_t rp_hm_nwidths = sizeof rp_hm_widths / sizeof rp_hm_widths[0];

/* ------------------------------------------------------------ the table -- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static uint64_t key_hash(const struct rp_hm_entry *e)
{
    return mix(mix((uint64_t)(uint32_t)e->bucket << 32 | e->leaf) ^
               ((uint64_t)e->kind << 40 | e->thread));
}

static int same_key(const struct rp_hm_entry *a, const struct rp_hm_entry *b)
{
    return a->bucket == b->bucket && a->leaf == b->leaf && a->thread == b->thread &&
           a->kind == b->kind;
}

/*
 * Rebuild the table over the entries, adding together those whose keys are now
 * the same (after a coarsen re-bucketed them): the first of a key stays, moved
 * down over the ones merged away, so the array stays dense and no sort is needed.
 */
static void table_build(struct rp_heatmap *h)
{
    size_t want = 1024;
    while (want < 2 * (h->n + 1))
        want *= 2;
    if (want != h->nslots) {
        free(h->slot);
        h->slot = rp_xcalloc(want, sizeof *h->slot);
        h->nslots = want;
    } else
        memset(h->slot, 0, want * sizeof *h->slot);
    size_t out = 0;
    for (size_t i = 0; i < h->n; i++) {
        size_t s = key_hash(&h->e[i]) & (h->nslots - 1);
        for (; h->slot[s]; s = (s + 1) & (h->nslots - 1)) {
            struct rp_hm_entry *e = &h->e[h->slot[s] - 1];
            if (same_key(e, &h->e[i])) {
                e->samples += h->e[i].samples;
                e->weight += h->e[i].weight;
                break;
            }
        }
        if (!h->slot[s]) {
            h->e[out] = h->e[i];
            h->slot[s] = (uint32_t)++out;
        }
    }
    h->n = out;
    h->last = 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct rp_hm_entry *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    if (x->leaf != y->leaf)
        return x->leaf < y->leaf ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Sort the entries and add together those with the same key. */
static void sort_merge(struct rp_heatmap *h)
{
    if (h->n)
        qsort(h->e, h->n, sizeof *h->e, cmp_entry);
    size_t out = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (out && !cmp_entry(&h->e[out - 1], &h->e[i])) {
            h->e[out - 1].samples += h->e[i].samples;
            h->e[out - 1].weight += h->e[i].weight;
        } else
            h->e[out++] = h->e[i];
    }
    h->n = out;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The next width of the ladder: every entry's bucket re-based, merged. */
static void coarsen(struct rp_heatmap *h)
{
    size_t i = 0;
    while (i + 1 < rp_hm_nwidths && rp_hm_widths[i] <= h->width)
        i++;
    if (rp_hm_widths[i] <= h->width)
        return;                       /* the ladder's top: a day a bucket */
    int64_t f = (int64_t)(rp_hm_widths[i] / h->width);
    int64_t base = floor_div(h->base, f);
    for (size_t k = 0; k < h->n; k++)
        h->e[k].bucket = (int32_t)(floor_div(h->base + h->e[k].bucket, f) - base);
    h->lo = (int32_t)(floor_div(h->base + h->lo, f) - base);
    h->hi = (int32_t)(floor_div(h->base + h->hi, f) - base);
    h->base = base;
    h->width = rp_hm_widths[i];
    h->coarsened++;
    table_build(h);
}

static int full(const struct rp_heatmap *h)
{
    return h->n > h->max_entries || (uint64_t)((int64_t)h->hi - h->lo) >= h->max_buckets;
}

/* --------------------------------------------------------------- adding -- */

void rp_hm_init(struct rp_heatmap *h, uint64_t finest_ns, size_t max_entries,
                size_t max_buckets)
{
    memset(h, 0, sizeof *h);
    if (!finest_ns)
        finest_ns = RP_HM_FINEST_NS;
    size_t i = 0;
    while (i + 1 < rp_hm_nwidths && rp_hm_widths[i] < finest_ns)
        i++;
    h->width = rp_hm_widths[i];
    h->max_entries = max_entries ? max_entries : RP_HM_MAX_ENTRIES;
    h->max_buckets = max_buckets ? max_buckets : RP_HM_MAX_BUCKETS;
    table_build(h);
}

void rp_hm_free(struct rp_heatmap *h)
{
    for (size_t k = 0; k < h->nkinds; k++) {
        free(h->kinds[k].name);
        free(h->kinds[k].unit);
    }
    free(h->kinds);
    free(h->e);
    free(h->slot);
    for (size_t s = 0; s < h->nseries; s++)
        free(h->series[s].r);
    free(h->series);
    memset(h, 0, sizeof *h);
}

int rp_hm_kind(struct rp_heatmap *h, const char *name, const char *unit, uint64_t period)
{
    enum rp_skind sk = rp_skind_of(name);
    if (sk == RP_SK_LIVE)
        return -1;
    if (sk == RP_SK_LOCK_WAITING) {
        sk = RP_SK_LOCK;
        name = RP_KIND_LOCK;
    }
    for (size_t k = 0; k < h->nkinds; k++)
        if (!strcmp(h->kinds[k].name, name))
            return (int)k;
    h->kinds = rp_xreallocarray(h->kinds, h->nkinds + 1, sizeof *h->kinds);
    h->kinds[h->nkinds] = (struct rp_hm_kind){
        .name = rp_xstrdup(name), .unit = rp_xstrdup(unit ? unit : ""),
        .period = period, .skind = sk};
    return (int)h->nkinds++;
}

void rp_hm_add(struct rp_heatmap *h, int kind, uint64_t t, uint32_t leaf, uint32_t thread,
               uint64_t weight)
{
    if (kind < 0 || (size_t)kind >= h->nkinds)
        return;
    h->kinds[kind].samples++;
    h->kinds[kind].weight += weight;
    int64_t abs = (int64_t)(t / h->width);
    if (!h->have_base) {
        h->base = abs;
        h->have_base = 1;
    }
    int64_t rel = abs - h->base;
    while (rel < INT32_MIN / 2 || rel > INT32_MAX / 2) {   /* far apart: coarser */
        uint64_t was = h->width;
        coarsen(h);
        if (h->width == was)
            return;
        rel = (int64_t)(t / h->width) - h->base;
    }
    int32_t b = (int32_t)rel;
    if (!h->n)
        h->lo = h->hi = b;
    struct rp_hm_entry key = {.weight = weight, .leaf = leaf, .bucket = b, .samples = 1,
                              .thread = thread, .kind = (uint32_t)kind};
    /* A thread's samples come in runs (the agent drains a thread at a time):
     * the entry last added to is the likeliest, and costs no cache miss. */
    if (h->last && same_key(&h->e[h->last - 1], &key)) {
        h->e[h->last - 1].samples++;
        h->e[h->last - 1].weight += weight;
        return;
    }
    size_t s = key_hash(&key) & (h->nslots - 1);
    for (; h->slot[s]; s = (s + 1) & (h->nslots - 1)) {
        struct rp_hm_entry *e = &h->e[h->slot[s] - 1];
        if (same_key(e, &key)) {
            e->samples++;
            e->weight += weight;
            h->last = h->slot[s];
            return;
        }
    }
    rp_xgrow((void **)&h->e, &h->cap, h->n, sizeof *h->e, 4096);
    h->e[h->n] = key;
    h->slot[s] = (uint32_t)++h->n;
    h->last = h->slot[s];
    if (b < h->lo)
        h->lo = b;
    if (b > h->hi)
        h->hi = b;
    if (2 * h->n >= h->nslots)
        table_build(h);
    while (full(h)) {
        uint64_t was = h->width;
        coarsen(h);
        if (h->width == was)
            break;
    }
}

/* ------------------------------------------------------------ telemetry -- */

void rp_hm_gauge(struct rp_heatmap *h, uint32_t rec, const char *name, uint64_t t,
                 uint64_t v)
{
    int g = -1;
    for (int i = 0; i < RP_TL_G_COUNT && name; i++)
        if (!strcmp(name, rp_tl_gauges[i].name))
            g = i;
    if (g < 0)
        return;
    struct rp_hm_series *s = NULL;
    for (size_t i = 0; i < h->nseries && !s; i++)
        if (h->series[i].gauge == g && h->series[i].rec == rec)
            s = &h->series[i];
    if (!s) {
        h->series = rp_xreallocarray(h->series, h->nseries + 1, sizeof *h->series);
        s = &h->series[h->nseries++];
        *s = (struct rp_hm_series){.gauge = g, .rec = rec};
    }
    rp_xgrow((void **)&s->r, &s->cap, s->n, sizeof *s->r, 256);
    s->r[s->n++] = (struct rp_hm_reading){t, v};
}

static int cmp_reading(const void *a, const void *b)
{
    const struct rp_hm_reading *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_series(const void *a, const void *b)
{
    const struct rp_hm_series *x = a, *y = b;
    if (x->gauge != y->gauge)
        return x->gauge - y->gauge;
    return x->rec < y->rec ? -1 : x->rec > y->rec;
}

void rp_hm_bin(const struct rp_hm_series *s, uint64_t t0, uint64_t bin_ns, size_t nbins,
               double *out)
{
    const struct rp_tl_gauge_def *g = &rp_tl_gauges[s->gauge];
    double *num = rp_xcalloc(nbins + 1, sizeof *num), *den = rp_xcalloc(nbins + 1, sizeof *den);
    for (size_t i = 0; i < s->n; i++) {
        const struct rp_hm_reading *r = &s->r[i];
        if (r->t < t0 || (r->t - t0) / bin_ns >= nbins)
            continue;
        size_t b = (size_t)((r->t - t0) / bin_ns);
        if (!g->total) {
            num[b] += (double)r->v;
            den[b] += 1;
        } else if (i > 0 && r->t > s->r[i - 1].t && r->v >= s->r[i - 1].v) {
            /* the rate per second over the interval that ends here */
            num[b] += (double)(r->v - s->r[i - 1].v);
            den[b] += (double)(r->t - s->r[i - 1].t) / 1e9;
        }
    }
    for (size_t b = 0; b < nbins; b++)
        out[b] = den[b] > 0 ? num[b] / den[b] * g->scale : NAN;
    free(num);
    free(den);
}

/* ------------------------------------------------------------ finishing -- */

static void fmt_width(uint64_t ns, char *buf, size_t cap)
{
    if (ns < S)
        snprintf(buf, cap, "%llu ms", (unsigned long long)(ns / MS));
    else if (ns < 60 * S)
        snprintf(buf, cap, "%llu s", (unsigned long long)(ns / S));
    else if (ns < 3600 * S)
        snprintf(buf, cap, "%llu min", (unsigned long long)(ns / (60 * S)));
    else
        snprintf(buf, cap, "%llu h", (unsigned long long)(ns / (3600 * S)));
}

void rp_hm_finish(struct rp_heatmap *h)
{
    sort_merge(h);
    for (size_t i = 0; i < h->nseries; i++)
        if (h->series[i].n)
            qsort(h->series[i].r, h->series[i].n, sizeof *h->series[i].r, cmp_reading);
    if (h->nseries)
        qsort(h->series, h->nseries, sizeof *h->series, cmp_series);
    char w[32];
    fmt_width(h->width, w, sizeof w);
    if (h->coarsened)
        snprintf(h->why, sizeof h->why, "buckets of %s: the finest that keeps the page "
                 "within %zu entries and %zu buckets (convert a shorter --from/--to "
                 "range for finer ones)", w, h->max_entries, h->max_buckets);
    else
        snprintf(h->why, sizeof h->why, "buckets of %s", w);
}
