/*
 * bench/bench_chunk.c — chunk writer and reader throughput, and bytes per sample.
 *
 * The stream imitates the agent's flusher on a busy JVM: T threads (default 12),
 * each sampled every 10 ms of CPU with +-1 ms jitter; 10% of samples weigh two
 * intervals and 5% three (a coalesced timer), with the gap to match. Stacks are
 * drawn Zipf(1.1) from a few thousand distinct stacks (default 3000) of depth 20 to
 * 60, built from 8000 frames of 4000 methods in 400 classes, sharing entry chains
 * at the root as real stacks do. Each 1 s of stream time is one segment: the
 * flusher drains thread after thread (so a thread's samples are consecutive), adds
 * one THREAD_CPU per thread and a loss counter, and flushes. A chunk is rotated at
 * 16 MiB. Like the agent, the caller caches chunk ids per writer (stack index to
 * chunk stack id) and interns a stack only the first time a chunk sees it.
 *
 * The stream is generated before the clock starts; the timed part is the writer
 * (encode, compress, write to the page cache of --dir) or the reader (decode every
 * chunk, look each sample's stack up). Figures are medians over the runs.
 *
 *   bench_chunk [--quick] [--writer-only] [--dir DIR] [--threads N] [--stacks N]
 *               [--seconds S]
 *
 * Printed figures:
 *   writer_mb_s              raw record bytes (uncompressed payload) per second
 *   writer_compressed_mb_s   bytes reaching the file per second
 *   writer_samples_s         samples per second
 *   compression_ratio        raw payload bytes / file bytes
 *   bytes_per_sample         file bytes / samples: all (every chunk's header, pools
 *                            and counters included), first_chunk, and steady (the
 *                            segments of the second half of each chunk: pools warm)
 *   writer_intern_samples_s  samples/s when rp_chunk_stack is called for every
 *                            sample (a caller without its own id cache)
 *   reader_samples_s         samples per second through rp_reader_next + stack look-up
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ringprof/chunk.h"

#define MS 1000000ull
#define CHUNK_BYTES (16ull << 20)
#define NCLASS 400
#define NMETHOD 4000
#define NFRAME 8000

static int nthreads = 12, nstacks = 3000, seconds = 9000, runs = 5, writer_only;
static char dir[256];

static uint64_t rng = 0x853c49e6748fea9bull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ the stream -- */

struct pframe { uint16_t method, type; uint32_t line; };
static struct pframe frames[NFRAME];
static uint16_t method_class[NMETHOD];
static uint16_t *stack_fr[65536];
static uint8_t stack_depth[65536];

struct psample { uint16_t stack; uint8_t mult; uint8_t thread; uint32_t dt; };
static struct psample *stream;
static uint32_t *seg_count;      /* samples per 1 s segment                      */
static uint64_t nsamples;

static void make_pools(void)
{
    for (int m = 0; m < NMETHOD; m++)
        method_class[m] = (uint16_t)(rnd() % NCLASS);
    for (int f = 0; f < NFRAME; f++) {
        frames[f].method = (uint16_t)(f < NMETHOD ? (uint32_t)f : rnd() % NMETHOD);
        frames[f].type = (uint16_t)(rnd() % 10 < 6 ? 1 : rnd() % 10 < 7 ? 2 : 0);
        frames[f].line = 10 + rnd() % 2000;
    }
    /* 40 entry chains of 12 frames each: the roots real stacks share. */
    uint16_t chains[40][12];
    for (int c = 0; c < 40; c++)
        for (int i = 0; i < 12; i++)
            chains[c][i] = (uint16_t)(rnd() % NFRAME);
    for (int s = 0; s < nstacks; s++) {
        int depth = 20 + (int)(rnd() % 41);
        stack_fr[s] = malloc((size_t)depth * sizeof *stack_fr[s]);
        stack_depth[s] = (uint8_t)depth;
        const uint16_t *chain = chains[rnd() % 40];
        for (int i = 0; i < depth; i++) /* leaf first, root last */
            stack_fr[s][i] = i >= depth - 12 ? chain[i - (depth - 12)]
                                             : (uint16_t)(rnd() % NFRAME);
    }
}

static void make_stream(void)
{
    /* Zipf(1.1) over stack ranks. */
    double *cdf = malloc((size_t)nstacks * sizeof *cdf), sum = 0;
    for (int k = 0; k < nstacks; k++)
        cdf[k] = sum += 1.0 / pow(k + 1, 1.1);
    uint64_t cap = (uint64_t)seconds * (uint64_t)nthreads * 105 + 1024;
    stream = malloc(cap * sizeof *stream);
    seg_count = calloc((size_t)seconds, sizeof *seg_count);
    uint64_t *tnext = calloc((size_t)nthreads, sizeof *tnext);
    for (int t = 0; t < nthreads; t++)
        tnext[t] = rnd() % (10 * MS);
    for (int seg = 0; seg < seconds; seg++) {
        uint64_t end = (uint64_t)(seg + 1) * 1000 * MS;
        for (int t = 0; t < nthreads; t++) {
            uint64_t prev = tnext[t];
            while (tnext[t] < end && nsamples < cap) {
                uint32_t r = rnd() % 100;
                uint8_t mult = r < 85 ? 1 : r < 95 ? 2 : 3;
                double u = (rnd() / 4294967296.0) * sum;
                int lo = 0, hi = nstacks - 1;
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (cdf[mid] < u)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                struct psample *p = &stream[nsamples++];
                p->stack = (uint16_t)lo;
                p->mult = mult;
                p->thread = (uint8_t)t;
                p->dt = (uint32_t)(tnext[t] - prev);
                prev = tnext[t];
                seg_count[seg]++;
                /* next sample: mult intervals later, +-1 ms jitter */
                tnext[t] += mult * 10 * MS - MS + rnd() % (2 * MS);
            }
        }
    }
    free(cdf);
    free(tnext);
}

/* --------------------------------------------------------------- writing -- */

struct cache {          /* chunk ids, valid for one writer                          */
    uint32_t stack[65536], frame[NFRAME], method[NMETHOD], klass[NCLASS];
    uint32_t thread[256], kind;
};
static struct cache cache;

static uint32_t intern_frame(struct rp_chunk_writer *w, int f)
{
    if (cache.frame[f])
        return cache.frame[f];
    int m = frames[f].method, c = method_class[m];
    char name[96];
    if (!cache.klass[c]) {
        snprintf(name, sizeof name, "com.acme.service.module%d.Component%dImpl", c % 17, c);
        cache.klass[c] = rp_chunk_class(w, rp_chunk_cstring(w, name));
    }
    if (!cache.method[m]) {
        static const char *verbs[] = {"process", "handle", "compute", "lambda$run$",
                                      "apply", "get", "visit", "invoke"};
        char file[64], sig[32];
        snprintf(name, sizeof name, "%s%d", verbs[m % 8], m);
        snprintf(file, sizeof file, "Component%dImpl.java", c);
        snprintf(sig, sizeof sig, "(Ljava/lang/Object;I)%c", "VIJZ"[m % 4]);
        cache.method[m] = rp_chunk_method(w, cache.klass[c], rp_chunk_cstring(w, name),
                                          rp_chunk_cstring(w, sig),
                                          rp_chunk_cstring(w, file), 0);
    }
    return cache.frame[f] = rp_chunk_frame(w, cache.method[m],
                                           (enum rp_frame_type)frames[f].type,
                                           (int32_t)(frames[f].line * 3),
                                           frames[f].line);
}

static uint32_t stack_ids(struct rp_chunk_writer *w, int s, uint32_t *ids)
{
    for (int i = 0; i < stack_depth[s]; i++)
        ids[i] = intern_frame(w, stack_fr[s][i]);
    return stack_depth[s];
}

static uint32_t intern_stack(struct rp_chunk_writer *w, int s)
{
    uint32_t ids[64];
    uint32_t n = stack_ids(w, s, ids);
    return rp_chunk_stack(w, ids, n, 0);
}

static struct rp_chunk_writer *new_chunk(int *seq)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/bench-%06d.rpc", dir, (*seq)++);
    unlink(path);
    struct rp_kv meta[] = {{RP_META_START_MONO, "0"}, {RP_META_PRODUCER, "bench_chunk"}};
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, meta, 2, err, sizeof err);
    if (!w) {
        fprintf(stderr, "bench_chunk: %s\n", err);
        exit(1);
    }
    memset(&cache, 0, sizeof cache);
    cache.kind = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    for (int t = 0; t < nthreads; t++) {
        char name[32];
        snprintf(name, sizeof name, "pool-1-thread-%d", t + 1);
        cache.thread[t] = rp_chunk_thread(w, (uint64_t)t, 1000u + (uint64_t)t,
                                          20u + (uint64_t)t, name, RP_THREAD_JAVA, 0);
    }
    return w;
}

struct wres {
    double secs, close_secs;
    uint64_t raw, file, samples, chunks;
    uint64_t steady_bytes, steady_samples, first_bytes, first_samples;
};

/* Write the whole stream. intern_each: call rp_chunk_stack for every sample. */
static struct wres write_stream(int intern_each)
{
    struct wres res = {0};
    int seq = 0;
    uint64_t t = 0, k = 0;
    uint64_t *tthread = calloc((size_t)nthreads, sizeof *tthread);
    uint64_t *seg_bytes = malloc((size_t)seconds * sizeof *seg_bytes);
    uint64_t *seg_samps = malloc((size_t)seconds * sizeof *seg_samps);
    int chunk_first_seg = 0;
    double t0 = now_s();
    struct rp_chunk_writer *w = new_chunk(&seq);
    struct rp_chunk_writer_stats st, prev = {0};
    for (int seg = 0; seg < seconds; seg++) {
        for (uint32_t i = 0; i < seg_count[seg]; i++, k++) {
            const struct psample *p = &stream[k];
            uint64_t time = tthread[p->thread] += p->dt;
            uint32_t id = intern_each ? intern_stack(w, p->stack) : cache.stack[p->stack];
            if (!id)
                id = cache.stack[p->stack] = intern_stack(w, p->stack);
            rp_chunk_sample(w, cache.kind, cache.thread[p->thread], time, id,
                            p->mult * 10 * MS, NULL);
        }
        t = (uint64_t)(seg + 1) * 1000 * MS;
        for (int th = 0; th < nthreads; th++)
            rp_chunk_thread_cpu(w, cache.thread[th], t, tthread[th]);
        rp_chunk_counter(w, RP_COUNTER_LOST_PREFIX "ring_full", seg % 7 == 0);
        if (rp_chunk_flush(w) < 0) {
            fprintf(stderr, "bench_chunk: flush: %s\n", strerror(errno));
            exit(1);
        }
        rp_chunk_writer_stats(w, &st);
        seg_bytes[seg] = st.bytes_written - prev.bytes_written;
        seg_samps[seg] = st.samples_written - prev.samples_written;
        prev = st;
        if (st.bytes_written >= CHUNK_BYTES || seg == seconds - 1) {
            res.raw += st.raw_bytes;
            res.file += st.bytes_written;
            res.samples += st.samples_written;
            res.chunks++;
            double c0 = now_s();
            rp_chunk_close(w);
            res.close_secs += now_s() - c0;
            /* Steady state: the second half of the chunk's segments. */
            if (st.bytes_written >= CHUNK_BYTES) {
                int mid = chunk_first_seg + (seg - chunk_first_seg) / 2;
                for (int s = mid + 1; s <= seg; s++) {
                    res.steady_bytes += seg_bytes[s];
                    res.steady_samples += seg_samps[s];
                }
                if (res.chunks == 1) {
                    res.first_bytes = st.bytes_written;
                    res.first_samples = st.samples_written;
                }
            }
            chunk_first_seg = seg + 1;
            if (seg < seconds - 1) {
                w = new_chunk(&seq);
                memset(&prev, 0, sizeof prev);
                rp_chunk_writer_stats(w, &prev);
            }
        }
    }
    res.secs = now_s() - t0;
    free(tthread);
    free(seg_bytes);
    free(seg_samps);
    return res;
}

/* --------------------------------------------------------------- reading -- */

static void count_diag(void *arg, const char *path, uint64_t off, const char *reason,
                       int fatal)
{
    (void)fatal;
    (*(int *)arg)++;
    fprintf(stderr, "bench_chunk: %s@%llu: %s\n", path, (unsigned long long)off, reason);
}

static double read_all(uint64_t chunks, uint64_t *samples)
{
    double t0 = now_s();
    uint64_t n = 0, frames_seen = 0;
    int diags = 0;
    for (uint64_t c = 0; c < chunks; c++) {
        char path[512];
        snprintf(path, sizeof path, "%s/bench-%06llu.rpc", dir, (unsigned long long)c);
        struct rp_reader *r = rp_reader_open(path, count_diag, &diags);
        if (!r)
            exit(1);
        struct rp_event ev;
        while (rp_reader_next(r, &ev))
            if (ev.type == RP_EV_SAMPLE) {
                uint32_t depth;
                rp_reader_stack(r, ev.u.sample.stack, &depth, NULL);
                frames_seen += depth;
                n++;
            }
        rp_reader_close(r);
    }
    double secs = now_s() - t0;
    if (diags || !frames_seen) {
        fprintf(stderr, "bench_chunk: the reader reported problems\n");
        exit(1);
    }
    *samples = n;
    return secs;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_runs(const char *name, double *v, int n, const char *unit)
{
    printf("%s median=%.1f (runs:", name, median(v, n));
    for (int i = 0; i < n; i++)
        printf(" %.1f", v[i]);
    printf(") %s\n", unit);
}

static void remove_chunks(uint64_t chunks)
{
    for (uint64_t c = 0; c < chunks; c++) {
        char path[512];
        snprintf(path, sizeof path, "%s/bench-%06llu.rpc", dir, (unsigned long long)c);
        unlink(path);
    }
    rmdir(dir);
}

int main(int argc, char **argv)
{
    const char *base = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            seconds = 3000;
            runs = 3;
        } else if (strcmp(argv[i], "--writer-only") == 0) {
            writer_only = 1;    /* for profiling the writer */
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            base = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            nthreads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--stacks") == 0 && i + 1 < argc) {
            nstacks = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_chunk [--quick] [--writer-only] [--dir DIR] "
                    "[--threads N 1-255] "
                    "[--stacks N 1-65535] [--seconds S]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 255 || nstacks < 1 || nstacks > 65535 || seconds < 1) {
        fprintf(stderr, "bench_chunk: argument out of range\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/bench_chunk.XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "bench_chunk: mkdtemp %s: %s\n", dir, strerror(errno));
        return 1;
    }
    make_pools();
    make_stream();
    printf("bench_chunk: %d threads, %d stacks (depth 20-60, Zipf 1.1), 10 ms +-1 ms, "
           "%d s of stream = %llu samples, 1 s segments, 16 MiB chunks, %d runs\n",
           nthreads, nstacks, seconds, (unsigned long long)nsamples, runs);

    double wmb[16], wcmb[16], wss[16], wis[16], rss[16];
    struct wres res = {0};
    for (int i = 0; i < runs; i++) {
        res = write_stream(0);
        wmb[i] = res.raw / res.secs / 1e6;
        wcmb[i] = res.file / res.secs / 1e6;
        wss[i] = res.samples / res.secs;
        if (writer_only)
            printf("run %d: %.3f s, of which close (fsync) %.3f s\n", i, res.secs,
                   res.close_secs);
    }
    if (writer_only) {
        print_runs("writer_mb_s", wmb, runs, "MB/s of raw records in (1 MB = 1e6 bytes)");
        remove_chunks(res.chunks);
        return 0;
    }
    for (int i = 0; i < runs; i++) {
        uint64_t n;
        double s = read_all(res.chunks, &n);
        if (n != res.samples) {
            fprintf(stderr, "bench_chunk: read %llu samples of %llu\n",
                    (unsigned long long)n, (unsigned long long)res.samples);
            return 1;
        }
        rss[i] = n / s;
    }
    for (int i = 0; i < runs; i++) {
        struct wres r2 = write_stream(1);
        wis[i] = r2.samples / r2.secs;
    }
    print_runs("writer_mb_s", wmb, runs, "MB/s of raw records in (1 MB = 1e6 bytes)");
    print_runs("writer_compressed_mb_s", wcmb, runs, "MB/s to the file");
    print_runs("writer_samples_s", wss, runs, "samples/s");
    printf("compression_ratio=%.3f raw %llu bytes, file %llu bytes, %llu chunks\n",
           (double)res.raw / res.file, (unsigned long long)res.raw,
           (unsigned long long)res.file, (unsigned long long)res.chunks);
    printf("bytes_per_sample all=%.3f", (double)res.file / res.samples);
    if (res.first_samples)
        printf(" first_chunk=%.3f", (double)res.first_bytes / res.first_samples);
    if (res.steady_samples)
        printf(" steady=%.3f", (double)res.steady_bytes / res.steady_samples);
    printf(" (steady: second half of each full chunk)\n");
    print_runs("writer_intern_samples_s", wis, runs, "samples/s, rp_chunk_stack per sample");
    print_runs("reader_samples_s", rss, runs, "samples/s, with a stack look-up each");

    remove_chunks(res.chunks);
    return 0;
}
