/*
 * tests/agent/test_agent_units.c — the agent's small data structures on their own:
 * the handler-cost histogram (bucket bounds, quantiles against exact ones) and the
 * flusher's u64 map (against a reference array, with deletions that exercise the
 * backward-shift in every probe-run shape).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../../src/core/histogram.h"
#include "../../src/core/u64map.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_histogram(void)
{
    /* Every value falls inside its bucket, and buckets tile the line. */
    uint64_t prev_hi = 0;
    for (unsigned b = 0; b < RP_HIST_BUCKETS; b++) {
        uint64_t lo, hi;
        rp_hist_bucket_range(b, &lo, &hi);
        CHECK(b == 0 || lo == prev_hi + 1, "bucket %u starts at %llu after %llu", b,
              (unsigned long long)lo, (unsigned long long)prev_hi);
        CHECK(rp_hist_bucket(lo) == b && rp_hist_bucket(hi) == b, "bucket %u bounds", b);
        if (b >= 16)
            CHECK((double)(hi - lo + 1) / (double)lo <= 0.125 + 1e-9, "bucket %u too wide", b);
        prev_hi = hi;
    }
    /* Quantiles of random log-uniform data are within 6.25% of the exact ones. */
    static struct rp_hist h;
    enum { N = 100000 };
    static uint64_t v[N];
    srand(7);
    for (int i = 0; i < N; i++) {
        double e = (double)(rand() % 2000) / 100.0;          /* 1 ns .. 0.5 ms */
        v[i] = (uint64_t)__builtin_exp(e) + 1;
        rp_hist_add(&h, v[i]);
    }
    qsort(v, N, sizeof v[0], cmp_u64);
    struct rp_hist_snap s, zero, d;
    rp_hist_snapshot(&h, &s);
    memset(&zero, 0, sizeof zero);
    rp_hist_delta(&s, &zero, &d);
    CHECK(rp_hist_total(&d) == N, "total %llu", (unsigned long long)rp_hist_total(&d));
    const double qs[] = {0.01, 0.5, 0.9, 0.99, 0.999};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        uint64_t exact = v[(size_t)(qs[i] * N + 0.999999) - 1];
        uint64_t got = rp_hist_quantile(&d, qs[i]);
        double err = (double)got / (double)exact - 1;
        CHECK(err > -0.0626 && err < 0.0626, "q%.3f: got %llu, exact %llu", qs[i],
              (unsigned long long)got, (unsigned long long)exact);
    }
    memset(&s, 0, sizeof s);
    CHECK(rp_hist_quantile(&s, 0.5) == 0, "empty histogram");
}

static void test_map(void)
{
    enum { KEYS = 5000 };
    static uint64_t keys[KEYS], vals[KEYS];
    static int present[KEYS];
    struct rp_u64map m = {0};
    srand(11);
    for (int i = 0; i < KEYS; i++) {
        /* Small keys collide into long probe runs; 0 is a legal key. */
        keys[i] = i < 100 ? (uint64_t)i : ((uint64_t)rand() << 32 | (uint64_t)rand());
        vals[i] = (uint64_t)i * 7 + 1;
    }
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 3000; k++) {
            int i = rand() % KEYS;
            if (rand() % 3) {
                vals[i]++;
                REQUIRE(rp_u64map_put(&m, keys[i], vals[i]) == 0, "put");
                present[i] = 1;
            } else {
                CHECK(rp_u64map_del(&m, keys[i]) == present[i], "del %d", i);
                present[i] = 0;
            }
        }
        size_t n = 0;
        for (int i = 0; i < KEYS; i++) {
            uint64_t v = 0;
            int got = rp_u64map_get(&m, keys[i], &v);
            CHECK(got == present[i], "round %d key %d present %d got %d", round, i,
                  present[i], got);
            if (got)
                CHECK(v == vals[i], "key %d value", i);
            n += present[i];
        }
        CHECK(m.len == n, "len %zu, expected %zu", m.len, n);
    }
    rp_u64map_clear(&m);
    CHECK(m.len == 0 && !rp_u64map_get(&m, keys[0], NULL), "clear");
    rp_u64map_free(&m);
}

int main(void)
{
    test_histogram();
    test_map();
    return check_exit("test_agent_units");
}
