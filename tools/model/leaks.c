/*
 * tools/model/leaks.c — `ringprof leaks`' model (leaks.h): snapshots binned, each
 * live sample into its site's series, every series tested.
 *
 * Sites are found through an id map (idmap.h) by their key: the profile leaf
 * (whose path is the stack and the class), or with by_method the allocating
 * method and the class packed into 64 bits. A sample's snapshot is found by
 * binary search over the recording's snapshots, which the look-ahead listed in
 * time order; its kind and extras come from the builder's recording stream
 * (rp_prof_stream, stream.h). Theil-Sen, the costly estimate, runs only where it
 * can matter.
 */
#include "leaks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#include "ringprof/events.h"

const char *const rp_leak_verdict_names[] = {"growing", "no-trend", "too-small", "flat"};

/* -------------------------------------------------------------- snapshots -- */

/* Count the snapshots in range per recording into l->in_range; set l->rec to
 * the last recording that has any. @return how many recordings do. */
static size_t count_in_range(struct rp_leaks *l, const struct rp_scan *sc, uint64_t from,
                             uint64_t to)
{
    l->in_range = rp_xrealloc(l->in_range, (sc->nrecs + 1) * sizeof *l->in_range);
    rp_snap_select(sc, -1, from, to, NULL, l->in_range);
    size_t recs = 0;
    l->in_range_total = 0;
    for (size_t r = 0; r < sc->nrecs; r++)
        if (l->in_range[r]) {
            recs++;
            l->rec = r;
            l->in_range_total += l->in_range[r];
        }
    return recs;
}

/* Bin the snapshots: consecutive ones share a bin, at most RP_TREND_MAX_POINTS. */
static void bin_snapshots(struct rp_leaks *l)
{
    size_t n = l->nsnaps;
    l->nbins = n < RP_TREND_MAX_POINTS ? n : RP_TREND_MAX_POINTS;
    l->bin_of = rp_xrealloc(NULL, n * sizeof *l->bin_of);
    l->bin_x = rp_xcalloc(l->nbins, sizeof *l->bin_x);
    l->bin_n = rp_xcalloc(l->nbins, sizeof *l->bin_n);
    uint64_t t0 = l->snaps[0]->mono;
    for (size_t k = 0; k < n; k++) {
        uint32_t b = (uint32_t)(k * l->nbins / n);
        l->bin_of[k] = b;
        l->bin_x[b] += (double)(l->snaps[k]->mono - t0) / 1e9;
        l->bin_n[b]++;
    }
    for (size_t b = 0; b < l->nbins; b++)
        l->bin_x[b] /= l->bin_n[b];
    l->span_s = (double)(l->snaps[n - 1]->mono - t0) / 1e9;
}

enum rp_leaks_pick rp_leaks_pick(struct rp_leaks *l, const struct rp_scan *sc,
                                 uint64_t from, uint64_t to)
{
    size_t recs = count_in_range(l, sc, from, to);
    if (!sc->nsnaps)
        return RP_LEAKS_NO_SNAPSHOT;
    if (recs > 1)
        return RP_LEAKS_RECORDINGS;
    if (l->in_range_total < 3)
        return RP_LEAKS_TOO_FEW;
    l->recording = sc->recs[l->rec];
    l->snaps = rp_xrealloc(NULL, l->in_range_total * sizeof *l->snaps);
    for (size_t i = 0; i < sc->nsnaps; i++) {
        const struct rp_snapshot *s = &sc->snaps[i];
        if (s->rec == l->rec && (!s->wall || ((!from || s->wall >= from) &&
                                              (!to || s->wall < to))))
            l->snaps[l->nsnaps++] = s;
    }
    bin_snapshots(l);
    return RP_LEAKS_PICKED;
}

/* The index of the snapshot at monotonic `mono`, or SIZE_MAX. */
static size_t snapshot_at(const struct rp_leaks *l, uint64_t mono)
{
    size_t lo = 0, hi = l->nsnaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->snaps[mid]->mono < mono)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->nsnaps && l->snaps[lo]->mono == mono ? lo : SIZE_MAX;
}

/* ------------------------------------------------------------------ sites -- */

/* The site key of leaf `leaf`: the leaf itself (its path is the stack and
 * class), or with by_method the allocating method and class; *method is the
 * method (RP_PROF_NONE without by_method). */
static uint64_t site_key(const struct rp_leaks *l, const struct rp_profile *p,
                         uint32_t leaf, uint32_t *method)
{
    *method = RP_PROF_NONE;
    if (!l->by_method)
        return leaf;
    const struct rp_prof_frame *f = rp_prof_node_frame(p, leaf);
    uint32_t cls = RP_PROF_NONE, at = leaf;
    if (f && f->type == RP_PFRAME_CLASS) {
        cls = f->method;
        at = p->nodes[leaf].parent;
    }
    const struct rp_prof_frame *m = rp_prof_node_frame(p, at);
    *method = m ? m->method : RP_PROF_NONE;
    return (uint64_t)*method << 32 | cls;
}

static struct rp_leak_site *site_of(struct rp_leaks *l, const struct rp_profile *p,
                                    uint32_t leaf)
{
    uint32_t method;
    uint64_t key = site_key(l, p, leaf, &method);
    uint32_t i = rp_idmap_put(&l->site_of, key, (uint32_t)l->nsites);
    if (i < l->nsites)
        return &l->sites[i];
    rp_xgrow((void **)&l->sites, &l->cap, l->nsites, sizeof *l->sites, 64);
    struct rp_leak_site *s = &l->sites[l->nsites++];
    memset(s, 0, sizeof *s);
    s->leaf = leaf;
    s->method = method;
    s->bins = rp_xcalloc(l->nbins, sizeof *s->bins);
    return s;
}

/* on_sample: one live object of one snapshot, into its site's series. */
static void on_live(void *arg, const struct rp_profile *p, uint32_t leaf,
                    const struct rp_event *ev, const struct rp_kind_info *kind)
{
    (void)kind;   /* the stream's kind says more */
    struct rp_leaks *l = arg;
    const struct rp_stream_kind *kd = rp_stream_kind(rp_prof_stream(p), ev->u.sample.kind);
    if (kd->x[RP_SX_AGE_GCS] < 0)
        l->no_age = 1;
    if (rp_sx_has(kd, ev, RP_SX_AGE_GCS) &&
        rp_sx_value(kd, ev, RP_SX_AGE_GCS, 0) < l->min_gcs) {
        l->young++;
        return;
    }
    size_t k = snapshot_at(l, ev->u.sample.time);
    if (k == SIZE_MAX) {
        l->off_snapshot++;
        return;
    }
    struct rp_leak_site *s = site_of(l, p, leaf);
    uint64_t w = ev->u.sample.weight;
    s->bins[l->bin_of[k]] += w;
    if (k == 0)
        s->first += w;
    if (k == l->nsnaps - 1) {
        s->last += w;
        s->objs_last += rp_sx_value(kd, ev, RP_SX_OBJECTS, 1);
    }
    l->kept++;
}

void rp_leaks_live_pass(struct rp_leaks *l, struct rp_prof_options *po)
{
    po->on_sample = on_live;
    po->on_sample_arg = l;
}

/* --------------------------------------------------------------- analysis -- */

static void analyse(struct rp_leaks *l, struct rp_leak_site *s, double *y)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t b = 0; b < l->nbins; b++) {
        y[b] = (double)s->bins[b] / l->bin_n[b];
        lo = y[b] < lo ? y[b] : lo;
        hi = y[b] > hi ? y[b] : hi;
    }
    if (hi == lo) {
        s->v = RP_LEAK_FLAT;
        s->t.p_up = 1;
        return;
    }
    rp_mann_kendall(y, l->nbins, &s->t);
    /* Theil-Sen only where it can matter: a site whose live bytes never span
     * the threshold cannot have grown by it. */
    if (hi - lo >= (double)l->min_growth || l->all) {
        s->slope = rp_theil_sen(l->bin_x, y, l->nbins);
        s->growth = s->slope * l->span_s;
    }
    if (!(s->t.p_up < l->alpha && s->slope > 0))
        s->v = RP_LEAK_NO_TREND;
    else if (s->growth < (double)l->min_growth)
        s->v = RP_LEAK_SMALL;
    else
        s->v = RP_LEAK_GROWING;
}

static int cmp_sites(const void *a, const void *b)
{
    const struct rp_leak_site *x = a, *y = b;
    if ((x->v == RP_LEAK_GROWING) != (y->v == RP_LEAK_GROWING))
        return x->v == RP_LEAK_GROWING ? -1 : 1;
    if (x->v == RP_LEAK_GROWING && x->slope != y->slope)
        return x->slope > y->slope ? -1 : 1;
    if (x->t.p_up != y->t.p_up)
        return x->t.p_up < y->t.p_up ? -1 : 1;
    if (x->slope != y->slope)
        return x->slope > y->slope ? -1 : 1;
    return x->leaf < y->leaf ? -1 : x->leaf > y->leaf;
}

size_t rp_leaks_analyse(struct rp_leaks *l)
{
    double *y = rp_xrealloc(NULL, l->nbins * sizeof *y);
    l->growing = 0;
    for (size_t i = 0; i < l->nsites; i++) {
        analyse(l, &l->sites[i], y);
        l->growing += l->sites[i].v == RP_LEAK_GROWING;
    }
    free(y);
    if (l->nsites)
        qsort(l->sites, l->nsites, sizeof *l->sites, cmp_sites);
    return l->growing;
}

void rp_leaks_free(struct rp_leaks *l)
{
    for (size_t i = 0; i < l->nsites; i++)
        free(l->sites[i].bins);
    free(l->sites);
    rp_idmap_free(&l->site_of);
    free(l->in_range);
    free(l->snaps);
    free(l->bin_of);
    free(l->bin_x);
    free(l->bin_n);
    rp_prof_free(l->p);
    memset(l, 0, sizeof *l);
}
