/*
 * tests/convert/test_heatmap_model.c — the heatmap's model (tools/model/heatmap.h)
 * under budgets small enough to force its bucket width up the ladder.
 *
 * Each case adds a known series of samples, then recomputes on its own what the
 * entries must be at the width the model ended with (every sample's bucket is
 * its time / width, whatever widths came before), and compares entry by entry:
 *   - too many (bucket, leaf) entries: the width steps up, the entries stay
 *     within the budget after every add, and nothing is lost or moved;
 *   - too many buckets between the first and the last sample: the same;
 *   - samples out of time order and before the first one;
 *   - the kinds: lock.waiting is lock, live is not shown;
 *   - telemetry bins: a level's mean, a counter's rate, an empty bin NAN.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"
#include "timeline.h"
#include "ringprof/events.h"

static int failed, passed;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond)                                                                 \
            passed++;                                                             \
        else {                                                                    \
            failed++;                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                           \
            printf(__VA_ARGS__);                                                  \
            printf("\n");                                                         \
        }                                                                         \
    } while (0)

#define MS 1000000ull
#define S  1000000000ull
#define T0 (1795240920ull * S)

struct sample {
    uint64_t t;
    uint32_t leaf;
    uint64_t w;
};

/* Whether h's entries are exactly those of samples[0..n) at h's width. */
static int entries_match(const struct rp_heatmap *h, const struct sample *s, size_t n)
{
    uint64_t samples = 0, weight = 0;
    for (size_t i = 0; i < h->n; i++) {
        samples += h->e[i].samples;
        weight += h->e[i].weight;
    }
    uint64_t want_w = 0;
    for (size_t i = 0; i < n; i++)
        want_w += s[i].w;
    if (samples != n || weight != want_w) {
        printf("  totals: %llu samples %llu weight, want %zu, %llu\n",
               (unsigned long long)samples, (unsigned long long)weight, n,
               (unsigned long long)want_w);
        return 0;
    }
    for (size_t i = 0; i < h->n; i++) {
        const struct rp_hm_entry *e = &h->e[i];
        uint64_t ns = 0, nw = 0;
        for (size_t k = 0; k < n; k++)
            if ((int64_t)(s[k].t / h->width) - h->base == e->bucket && s[k].leaf == e->leaf &&
                s[k].leaf % 2 == e->thread) {
                ns++;
                nw += s[k].w;
            }
        if (ns != e->samples || nw != e->weight) {
            printf("  entry bucket %d leaf %u: %u samples, want %llu\n", e->bucket, e->leaf,
                   e->samples, (unsigned long long)ns);
            return 0;
        }
    }
    return 1;
}

static void many_entries(void)
{
    struct rp_heatmap h;
    rp_hm_init(&h, 10 * MS, 50, 1000000);
    int k = rp_hm_kind(&h, RP_KIND_CPU, RP_UNIT_NS, 10 * MS);
    size_t n = 4000;
    struct sample *s = calloc(n, sizeof *s);
    int within = 1;
    for (size_t i = 0; i < n; i++) {
        s[i] = (struct sample){T0 + i * 3 * MS, (uint32_t)(i % 7), 1000 + i};
        rp_hm_add(&h, k, s[i].t, s[i].leaf, s[i].leaf % 2, s[i].w);
        within &= h.n <= 50;
    }
    rp_hm_finish(&h);
    CHECK(within, "the entries stayed within the budget after every add");
    CHECK(h.width > 10 * MS && h.coarsened > 0, "the width stepped up: %llu ns",
          (unsigned long long)h.width);
    CHECK(entries_match(&h, s, n), "every sample in its bucket at the final width");
    CHECK(strstr(h.why, "the finest that keeps the page") != NULL, "why: %s", h.why);
    CHECK(h.kinds[k].samples == n, "the kind counts every sample");
    free(s);
    rp_hm_free(&h);
}

static void many_buckets(void)
{
    struct rp_heatmap h;
    rp_hm_init(&h, 10 * MS, 1000000, 1000);
    int k = rp_hm_kind(&h, RP_KIND_ALLOC, RP_UNIT_BYTES, 524288);
    size_t n = 2000;
    struct sample *s = calloc(n, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        /* a second apart, in a shuffled order, some before the first */
        size_t j = (i * 7919) % n;
        s[i] = (struct sample){T0 + j * S, (uint32_t)(j % 3), 524288};
        rp_hm_add(&h, k, s[i].t, s[i].leaf, s[i].leaf % 2, s[i].w);
    }
    rp_hm_finish(&h);
    CHECK((uint64_t)(h.hi - h.lo) < 1000, "buckets within the bound: %d..%d", h.lo, h.hi);
    CHECK(h.width >= 2 * S, "2000 s in under 1000 buckets: %llu ns", (unsigned long long)h.width);
    CHECK(entries_match(&h, s, n), "every sample in its bucket at the final width");
    int sorted = 1;
    for (size_t i = 1; i < h.n; i++)
        sorted &= h.e[i - 1].bucket < h.e[i].bucket ||
                  (h.e[i - 1].bucket == h.e[i].bucket && h.e[i - 1].leaf < h.e[i].leaf);
    CHECK(sorted, "entries sorted by bucket, then leaf, each once (one thread a leaf)");
    free(s);
    rp_hm_free(&h);
}

static void kinds(void)
{
    struct rp_heatmap h;
    rp_hm_init(&h, 0, 0, 0);
    CHECK(h.width == RP_HM_FINEST_NS, "the default width");
    int lock = rp_hm_kind(&h, RP_KIND_LOCK, RP_UNIT_NS, 0);
    CHECK(rp_hm_kind(&h, RP_KIND_LOCK_WAITING, RP_UNIT_NS, 0) == lock,
          "lock.waiting counts as lock");
    CHECK(rp_hm_kind(&h, RP_KIND_LIVE, RP_UNIT_BYTES, 0) == -1, "live is not shown");
    CHECK(rp_hm_kind(&h, "custom.kind", "count", 1) == 1, "another kind by its name");
    rp_hm_free(&h);
    rp_hm_init(&h, 15 * MS, 0, 0);
    CHECK(h.width == 20 * MS, "a width between rungs rounds up: %llu",
          (unsigned long long)h.width);
    rp_hm_free(&h);
}

static void telemetry(void)
{
    struct rp_heatmap h;
    rp_hm_init(&h, 0, 0, 0);
    /* a level: 10, 20 in bin 0, nothing in bin 1, 40 in bin 2 */
    rp_hm_gauge(&h, 0, RP_GAUGE_RSS, T0 + 100 * MS, 10 << 20);
    rp_hm_gauge(&h, 0, RP_GAUGE_RSS, T0 + 900 * MS, 20 << 20);
    rp_hm_gauge(&h, 0, RP_GAUGE_RSS, T0 + 2500 * MS, 40 << 20);
    /* a counter: 1 CPU over the first second, 3 over the next two */
    rp_hm_gauge(&h, 0, RP_GAUGE_CPU_USER, T0 + 1 * S, 0);
    rp_hm_gauge(&h, 0, RP_GAUGE_CPU_USER, T0 + 2 * S - 1, S);
    rp_hm_gauge(&h, 0, RP_GAUGE_CPU_USER, T0 + 3 * S - 1, 4 * S);
    rp_hm_gauge(&h, 0, "not.a.gauge", T0, 1);
    rp_hm_finish(&h);
    CHECK(h.nseries == 2, "two series: %zu", h.nseries);
    double v[3];
    const struct rp_hm_series *rss = &h.series[0], *cpu = &h.series[1];
    if (rss->gauge != RP_TL_G_RSS) {
        rss = &h.series[1];
        cpu = &h.series[0];
    }
    rp_hm_bin(rss, T0, S, 3, v);
    CHECK(fabs(v[0] - 15) < 1e-9 && isnan(v[1]) && fabs(v[2] - 40) < 1e-9,
          "rss bins: %g %g %g (MiB)", v[0], v[1], v[2]);
    rp_hm_bin(cpu, T0, S, 3, v);
    CHECK(isnan(v[0]) && fabs(v[1] - 100) < 0.01 && fabs(v[2] - 300) < 0.01,
          "cpu bins: %g %g %g (%% of a CPU)", v[0], v[1], v[2]);
    rp_hm_free(&h);
}

int main(void)
{
    many_entries();
    many_buckets();
    kinds();
    telemetry();
    printf("heatmap_model: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
