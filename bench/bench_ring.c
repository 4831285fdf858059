/*
 * bench/bench_ring.c — what a push costs, and how fast the flusher can drain.
 *
 * push_ns.N   cost of one rp_ring_push of an N-byte record, single thread. Timed in
 *             batches of BATCH pushes (one clock_gettime pair a batch, so the clock's
 *             own cost is spread over BATCH records); median and p99 over batches.
 *             The ring is drained between batches, untimed, so no push finds it full.
 * drain.N     rp_ring_drain of a ring filled with N-byte records, with a callback
 *             that appends each record to a buffer (the least a flusher does).
 * concurrent.N  one producer pushing flat out and one consumer draining (and
 *             appending), on two threads: records and bytes delivered per second and
 *             the share of pushes that found the ring full, medians of several runs.
 *
 * The project target is push_ns.128 median <= 20 ns. This program prints figures and
 * never fails on them. --quick runs fewer batches and shorter concurrent phases.
 */
#include "ringprof/ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH      1000
#define RING_BYTES ((size_t)1 << 20)   /* holds a batch of the largest size */

static const size_t sizes[] = { 32, 128, 512 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Value at quantile q of v[0..n), sorting v. */
static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof(*v), cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i];
}

/* Where drained records go: appended to a buffer, as the flusher appends them to a
 * segment before compressing it. Copying is the least work a real consumer does. */
static unsigned char out_buf[RING_BYTES];
static size_t out_len;

static int append(void *arg, const void *rec, size_t len)
{
    (void)arg;
    if (out_len + len > sizeof(out_buf))
        out_len = 0;
    memcpy(out_buf + out_len, rec, len);
    out_len += len;
    return 0;
}

struct push_fig {
    double median, p99;
    unsigned long refused;
};

static struct push_fig bench_push(struct rp_ring *r, size_t size, int batches, void *scratch)
{
    static unsigned char rec[512];
    double *per = malloc(sizeof(double) * (size_t)batches);
    struct push_fig f = { 0, 0, 0 };
    for (int b = -batches / 10; b < batches; b++) {   /* the first tenth warms up */
        double t0 = now_ns();
        for (int i = 0; i < BATCH; i++)
            f.refused += rp_ring_push(r, rec, size) != RP_RING_OK;
        double t1 = now_ns();
        if (b >= 0)
            per[b] = (t1 - t0) / BATCH;
        rp_ring_drain(r, append, NULL, scratch);
    }
    f.median = quantile(per, (size_t)batches, 0.5);
    f.p99 = quantile(per, (size_t)batches, 0.99);
    free(per);
    return f;
}

struct drain_fig {
    double rec_per_s, mb_per_s;
};

static struct drain_fig bench_drain(struct rp_ring *r, size_t size, int rounds, void *scratch)
{
    static unsigned char rec[512];
    double *rate = malloc(sizeof(double) * (size_t)rounds);
    size_t n = 0;
    for (int k = 0; k < rounds; k++) {
        for (n = 0; rp_ring_push(r, rec, size) == RP_RING_OK; n++)
            ;
        double t0 = now_ns();
        size_t got = rp_ring_drain(r, append, NULL, scratch);
        double t1 = now_ns();
        rate[k] = (double)got / ((t1 - t0) / 1e9);
    }
    struct drain_fig f;
    f.rec_per_s = quantile(rate, (size_t)rounds, 0.5);
    f.mb_per_s = f.rec_per_s * (double)size / 1e6;
    free(rate);
    return f;
}

/* ---- producer and consumer on two threads ------------------------------------ */

struct duo {
    struct rp_ring *ring;
    size_t size;
    double seconds;
    _Atomic int stop;
    unsigned long pushed, full, received;
    void *scratch;
};

static int count_rec(void *arg, const void *rec, size_t len)
{
    struct duo *d = arg;
    append(NULL, rec, len);
    d->received++;
    return 0;
}

static void *consumer(void *arg)
{
    struct duo *d = arg;
    while (!atomic_load_explicit(&d->stop, memory_order_acquire))
        rp_ring_drain(d->ring, count_rec, d, d->scratch);
    rp_ring_drain(d->ring, count_rec, d, d->scratch);
    return NULL;
}

static double bench_concurrent(struct duo *d)
{
    static unsigned char rec[512];
    pthread_t t;
    if (pthread_create(&t, NULL, consumer, d) != 0)
        return 0;
    double t0 = now_ns(), end = t0 + d->seconds * 1e9, t1;
    do {
        for (int i = 0; i < BATCH; i++) {
            int rc = rp_ring_push(d->ring, rec, d->size);
            d->pushed += rc == RP_RING_OK;
            d->full += rc == RP_RING_FULL;
        }
    } while ((t1 = now_ns()) < end);
    atomic_store_explicit(&d->stop, 1, memory_order_release);
    pthread_join(t, NULL);
    return (t1 - t0) / 1e9;
}

/* Median over `runs` short runs: one run is at the mercy of whatever else the two
 * cores are doing, and a flat-out producer makes that swing the figure widely. */
static void concurrent_median(struct rp_ring *r, size_t size, int runs, double seconds,
                              void *scratch, double *rec_per_s, double *full_pct)
{
    double rate[64], full[64];
    for (int k = 0; k < runs; k++) {
        struct duo d = { .ring = r, .size = size, .seconds = seconds, .scratch = scratch };
        double secs = bench_concurrent(&d);
        rate[k] = (double)d.received / secs;
        full[k] = 100.0 * (double)d.full / (double)(d.pushed + d.full);
        if (d.received != d.pushed)
            printf("warning: concurrent.%zu delivered %lu of %lu\n", size, d.received,
                   d.pushed);
    }
    *rec_per_s = quantile(rate, (size_t)runs, 0.5);
    *full_pct = quantile(full, (size_t)runs, 0.5);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int batches = quick ? 300 : 5000, rounds = quick ? 20 : 200;
    int conc_runs = quick ? 3 : 11;
    double conc_s = quick ? 0.05 : 0.2;
    struct rp_ring *r = rp_ring_create(RING_BYTES);
    void *scratch = malloc(RING_BYTES);
    if (r == NULL || scratch == NULL) {
        perror("bench_ring");
        return 1;
    }
    struct push_fig push[NSIZES];
    struct drain_fig drain[NSIZES];
    double conc_rec[NSIZES], conc_full[NSIZES];
    for (size_t s = 0; s < NSIZES; s++) {
        push[s] = bench_push(r, sizes[s], batches, scratch);
        drain[s] = bench_drain(r, sizes[s], rounds, scratch);
        concurrent_median(r, sizes[s], conc_runs, conc_s, scratch, &conc_rec[s],
                          &conc_full[s]);
    }

    printf("%-6s %12s %12s %14s %10s %14s %10s %8s\n", "bytes", "push_med_ns", "push_p99_ns",
           "drain_rec/s", "drain_MB/s", "concur_rec/s", "concur_MB/s", "full_%");
    for (size_t s = 0; s < NSIZES; s++)
        printf("%-6zu %12.2f %12.2f %14.3g %10.0f %14.3g %10.0f %8.1f\n", sizes[s],
               push[s].median, push[s].p99, drain[s].rec_per_s, drain[s].mb_per_s,
               conc_rec[s], conc_rec[s] * (double)sizes[s] / 1e6, conc_full[s]);
    for (size_t s = 0; s < NSIZES; s++) {
        printf("push_ns.%zu median=%.2f p99=%.2f\n", sizes[s], push[s].median, push[s].p99);
        if (push[s].refused)
            printf("warning: push_ns.%zu: %lu pushes refused\n", sizes[s], push[s].refused);
    }
    for (size_t s = 0; s < NSIZES; s++)
        printf("drain.%zu rec_per_s=%.3g mb_per_s=%.0f\n", sizes[s], drain[s].rec_per_s,
               drain[s].mb_per_s);
    for (size_t s = 0; s < NSIZES; s++)
        printf("concurrent.%zu rec_per_s=%.3g mb_per_s=%.0f full_pct=%.1f\n", sizes[s],
               conc_rec[s], conc_rec[s] * (double)sizes[s] / 1e6, conc_full[s]);
    printf("target: push_ns.128 median <= 20 ns: %s\n",
           push[1].median <= 20.0 ? "met" : "NOT met");
    rp_ring_destroy(r);
    free(scratch);
    return 0;
}
