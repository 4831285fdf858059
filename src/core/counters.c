/*
 * src/core/counters.c — the counter registry (see counters.h): a fixed table of
 * registered sets, each with the baseline of its counters.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/counters.h"

struct set {
    enum rp_counter_group group;
    const char *const *names;
    size_t n;
    rp_counters_read_fn read;
    uint64_t *seen;                 /* n baselines in g_seen                        */
};

static struct set g_sets[RP_COUNTERS_MAX];
static size_t g_nsets;
static uint64_t g_seen[RP_COUNTERS_MAX];
static size_t g_nseen;

int rp_counters_register(enum rp_counter_group group, const char *const *names, size_t n,
                         rp_counters_read_fn read)
{
    for (size_t i = 0; i < g_nsets; i++)
        if (g_sets[i].names == names)
            return 0;
    if (g_nsets == RP_COUNTERS_MAX || n > RP_COUNTERS_MAX - g_nseen)
        return -1;
    g_sets[g_nsets++] = (struct set){group, names, n, read, &g_seen[g_nseen]};
    g_nseen += n;
    return 0;
}

void rp_counters_write(enum rp_counter_group group, rp_counters_emit_fn emit, void *ctx)
{
    uint64_t now[RP_COUNTERS_MAX];
    for (size_t i = 0; i < g_nsets; i++) {
        struct set *s = &g_sets[i];
        if (s->group != group)
            continue;
        s->read(now);
        for (size_t c = 0; c < s->n; c++) {
            uint64_t d = now[c] - s->seen[c];
            if (d && emit(ctx, s->names[c], d) == 0)
                s->seen[c] = now[c];
        }
    }
}

/* ------------------------------------------------------------------ gauges -- */

#define GAUGE_FNS_MAX 16

static struct {
    enum rp_counter_group group;
    rp_gauges_read_fn read;
} g_gauges[GAUGE_FNS_MAX];
static size_t g_ngauges;

int rp_gauges_register(enum rp_counter_group group, rp_gauges_read_fn read)
{
    for (size_t i = 0; i < g_ngauges; i++)
        if (g_gauges[i].read == read)
            return 0;
    if (g_ngauges == GAUGE_FNS_MAX)
        return -1;
    g_gauges[g_ngauges].group = group;
    g_gauges[g_ngauges++].read = read;
    return 0;
}

void rp_gauges_write(enum rp_counter_group group, rp_counters_emit_fn emit, void *ctx)
{
    struct rp_gauge_value v[RP_GAUGES_READ_MAX];
    for (size_t i = 0; i < g_ngauges; i++) {
        if (g_gauges[i].group != group)
            continue;
        size_t n = g_gauges[i].read(v, RP_GAUGES_READ_MAX);
        for (size_t k = 0; k < n && k < RP_GAUGES_READ_MAX; k++)
            emit(ctx, v[k].name, v[k].value);
    }
}

/* ------------------------------------------------------------------ totals -- */

static pthread_mutex_t g_tot_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_counter_totals g_tot;

/* Add `v` to the entry `name` of table `tab` (*n entries of at most `max`),
 * made if there is room. */
static void add_total(struct rp_counter_total *tab, uint32_t *n, uint32_t max,
                      const char *name, uint64_t v)
{
    pthread_mutex_lock(&g_tot_lock);
    uint32_t i = 0;
    while (i < *n && strcmp(tab[i].name, name) != 0)
        i++;
    if (i == *n && i < max) {
        snprintf(tab[i].name, sizeof tab[i].name, "%s", name);
        (*n)++;
    }
    if (i < *n)
        tab[i].total += v;
    pthread_mutex_unlock(&g_tot_lock);
}

void rp_counters_tally(const char *name, uint64_t v)
{
    add_total(g_tot.counters, &g_tot.n, RP_COUNTERS_TOTALS_MAX, name, v);
}

void rp_counters_written(const char *kind, uint64_t n)
{
    add_total(g_tot.written, &g_tot.nwritten, RP_COUNTERS_WRITTEN_MAX, kind, n);
}

uint64_t rp_counter_totals_written(const struct rp_counter_totals *t, const char *kind)
{
    for (uint32_t i = 0; i < t->nwritten; i++)
        if (!strcmp(t->written[i].name, kind))
            return t->written[i].total;
    return 0;
}

void rp_counters_totals(struct rp_counter_totals *out)
{
    pthread_mutex_lock(&g_tot_lock);
    *out = g_tot;
    pthread_mutex_unlock(&g_tot_lock);
}
