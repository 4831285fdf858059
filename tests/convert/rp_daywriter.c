/*
 * tests/convert/rp_daywriter.c — a long recording of a busy service, written the
 * way the agent writes one at its defaults, without a JVM: the input of the
 * heatmap's size-and-time test (test_heatmap_day.py) and of bench/heatmap.py.
 *
 * usage: rp_daywriter DIR [--hours H] [--threads N] [--seed N] [--stacks N]
 *                         [--burst FROM_S:TO_S] [--chunksize MIB] [--manifest FILE]
 *
 * DIR (created; it must hold no chunk yet) receives the chunk files of one
 * recording that starts at 2026-11-21T00:00:00Z and lasts H hours (default 24, a
 * decimal number), named and rotated as the agent's are: a pass every 100 ms
 * drains each thread's samples (cpu and alloc interleaved in time order, as in a
 * thread's ring), a segment every second (flush=1s), a new chunk at 16 MiB or 1 h
 * (chunksize, chunktime; --chunksize sets another size, as the agent's option
 * does), the samples drained just after a rotation timed before their chunk's
 * start. The defaults of docs/options.md: interval=10ms (timer=posix:
 * a sample weighs one 10 ms period, 3% of them two), alloc=512k (weights and
 * object counts by docs/agent.md's formula), telemetry=1s (every RP_GAUGE_* of
 * events.h that the agent writes without lock=), wall and lock off. Every flush
 * also writes each live thread's CPU time (the sum of its samples' weights) and
 * the agent's own gauges and counters.
 *
 * The service: N busy threads (default 8) in three pools — Tomcat's
 * "http-nio-8080-exec-K" (the rest), "kafka-consumer-K" (N/4) and "scheduling-K"
 * (N/4) — beside a C2 compiler thread (C++ frames, busy while the JIT warms up),
 * two GC worker threads (not Java threads; on CPU during pauses), and 16 idle
 * pool threads plus main (THREAD records and CPU readings, no samples). --stacks
 * (default 3000) distinct stacks, 15 to 40 frames deep (a pool's entry frames
 * included), sharing root-side chains, drawn Zipf(1.1) within each pool; 10% of them
 * end in a native or stub frame, and their allocation samples use the Java part.
 * Load follows the day: a trough at night, peaks late morning and evening; the
 * kafka pool lags and is flatter; the scheduler runs a 90 s job every 15 minutes
 * and a nightly one at 02:00 for 40 minutes; each pool's load moves minute to
 * minute. A thread on CPU allocates 40 MB per CPU second; a young GC (kind gc)
 * starts when 768 MiB have been allocated since the previous one, 4-18 ms long
 * (every 30th a mixed one of 40-80 ms), and the Java threads take no sample
 * while it runs.
 *
 * The incident (--burst, default 14:32:00 to 14:36:00 in a recording that
 * reaches it, else from 60% of the recording for a tenth of it, at most 240 s):
 * the http pool runs 30 points busier, 45% of its CPU samples and 50% of its
 * allocation samples are on stacks that exist only then (a regular expression's
 * backtracking below com.example.shop.pricing.PromotionRules.matchCoupon), and a
 * GC starts every 384 MiB with pauses of 80-220 ms.
 *
 * Everything follows from the seed (default 1): the same arguments write the
 * same bytes. It prints what it wrote (samples and weight per kind, chunk files,
 * bytes, its own time) and writes a JSON manifest (FILE, default DIR.json):
 * {"hours", "seed", "start_wall_ns", "end_wall_ns", "files", "bytes",
 *  "kinds": {NAME: {"samples", "weight"}}, "incident": {"from_wall_ns",
 *  "to_wall_ns", "frame", "cpu_samples", "cpu_weight", "alloc_samples",
 *  "alloc_weight"}, "threads": [{"name", "tid", "pool", "cpu_samples"}]}
 * (and "stacks", how many it made) where "frame" names the method every
 * incident stack holds and nothing else does, so a test can find the
 * incident's samples without this program's help.
 *
 * The service's shape (frames, allocation sites, stacks and pools, threads) is
 * rp_dayservice.c's; this file is its day: the load, the samples, GC and
 * telemetry, the chunks and the manifest.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"
#include "ringprof/recording.h"
#include "rp_dayservice.h"

#define WALL0      1795219200000000000ull   /* 2026-11-21T00:00:00Z */
#define MONO0      1000000000000ull
#define MS         1000000ull
#define SEC        1000000000ull
#define DRAIN      (100 * MS)               /* the flusher's pass                */
#define SLOT       (10 * MS)                /* interval=10ms                     */
#define CHUNK_TIME (3600 * SEC)             /* chunktime=1h                      */

#define N(a) (sizeof a / sizeof a[0])

/* A value in [0, 1) fixed by (seed, a, b): the minute-to-minute noise. */
static double hash_unit(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ a * 0xbf58476d1ce4e5b9ull ^ b;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------- load -- */

static struct {
    double hours;
    uint64_t seed, duration, burst_from, burst_to;     /* ns from the start */
    uint64_t chunk_size;                               /* chunksize=16m      */
    uint32_t busy, stacks;
    const char *dir, *manifest;
} opt = {24, 1, 0, 0, 0, 16ull << 20, 8, 3000, NULL, NULL};

static double bump(double h, double at, double width)
{
    double d = fabs(h - at);
    d = d > 12 ? 24 - d : d;
    return exp(-d * d / (2 * width * width));
}

/* The service's daily curve, 0..1, at hour of day h. */
static double day_curve(double h)
{
    double v = 0.22 + 0.5 * bump(h, 10.5, 2.5) + 0.35 * bump(h, 14.5, 2.5) +
               0.6 * bump(h, 20.5, 2.0);
    return v > 0.95 ? 0.95 : v;
}

static int in_burst(uint64_t t)
{
    return t >= opt.burst_from && t < opt.burst_to;
}

/* The share of 10 ms slots a thread of pool p is on CPU, at time t. */
static double pool_load(int p, uint64_t t)
{
    double s = (double)t / SEC, h = fmod(s / 3600, 24), v;
    double noise = 0.85 + 0.3 * hash_unit(opt.seed, (uint64_t)(s / 60), (uint64_t)p);
    switch (p) {
    case P_HTTP:
        v = day_curve(h) * noise + (in_burst(t) ? 0.3 : 0);
        break;
    case P_KAFKA:
        v = (0.35 + 0.45 * day_curve(h - 0.5)) * noise;
        break;
    case P_BATCH:
        v = fmod(s, 900) < 90 || (h >= 2 && h < 2 + 40.0 / 60) ? 0.85 : 0.1 * noise;
        break;
    case P_JIT:
        v = 0.6 * exp(-s / 600) + 0.02 + (in_burst(t) ? 0.15 : 0);
        break;
    default:
        v = 0;
    }
    return v > 0.98 ? 0.98 : v;
}

/* ------------------------------------------------------------------ chunk -- */

struct totals {
    uint64_t samples, weight;
};

static struct {
    struct rp_chunk_writer *w;
    uint64_t opened;                  /* ns from the start             */
    uint32_t seq, kcpu, kalloc, kgc;
    uint32_t *fid, *sid, cid[DAY_NCLASSES];
    uint64_t files, bytes;
    struct totals cpu, alloc, gc, inc_cpu, inc_alloc;
    uint64_t stub_leaves;
} C;

static void open_chunk(uint64_t now)
{
    char wall[24], mono[24], seq[16], name[96], path[4096], rec[32];
    snprintf(wall, sizeof wall, "%llu", (unsigned long long)(WALL0 + now));
    snprintf(mono, sizeof mono, "%llu", (unsigned long long)(MONO0 + now));
    snprintf(seq, sizeof seq, "%u", C.seq);
    snprintf(rec, sizeof rec, "4242-day-%llu", (unsigned long long)opt.seed);
    const struct rp_kv meta[] = {
        {RP_META_PID, "4242"}, {RP_META_HOST, "shop-7f9c4"}, {RP_META_CHUNK_SEQ, seq},
        {RP_META_RECORDING, rec}, {RP_META_START_WALL, wall}, {RP_META_START_MONO, mono},
        {RP_META_JVM_NAME, "OpenJDK 64-Bit Server VM"}, {RP_META_JVM_VERSION, "17.0.15+6"},
        {RP_META_OPTIONS, "dir=/srv/shop/ringprof"}, {RP_META_PRODUCER, "rp_daywriter"},
        {RP_META_HOST_CPUS, "8"}, {"agent.engine", "async"},
        {"agent.interval_ns", "10000000"}, {"agent.native", "on"}, {"agent.timer", "posix"},
        {RP_META_JVM_VENDOR, "Debian"}, {RP_META_RUNTIME_NAME, "OpenJDK Runtime Environment"},
        {RP_META_RUNTIME_VERSION, "17.0.15+6-Debian-1deb12u1"},
        {RP_META_JVM_MAIN, "com.example.shop.ShopApplication"}};
    if (rp_recording_chunk_name(name, sizeof name, DAY_PID, WALL0 + now, C.seq) != 0)
        day_die("chunk name");
    snprintf(path, sizeof path, "%s/%s.rpc", opt.dir, name);
    char err[512];
    C.w = rp_chunk_writer_open(path, meta, N(meta), err, sizeof err);
    if (!C.w) {
        fprintf(stderr, "rp_daywriter: %s\n", err);
        exit(1);
    }
    C.opened = now;
    C.seq++;
    memset(C.fid, 0, day_nframes * sizeof *C.fid);
    memset(C.sid, 0, day_nstacks * sizeof *C.sid);
    memset(C.cid, 0, sizeof C.cid);
    for (uint32_t i = 0; i < day_nthreads; i++)
        day_threads[i].id = 0;
    static const char *const ax[] = RP_ALLOC_EXTRA_NAMES, *const gx[] = RP_GC_EXTRA_NAMES;
    C.kcpu = rp_chunk_kind(C.w, RP_KIND_CPU, RP_UNIT_NS, SLOT, NULL, 0);
    C.kalloc = rp_chunk_kind(C.w, RP_KIND_ALLOC, RP_UNIT_BYTES, (uint64_t)DAY_ALLOC_INTERVAL, ax,
                             RP_ALLOC_NEXTRA);
    C.kgc = rp_chunk_kind(C.w, RP_KIND_GC, RP_UNIT_NS, 0, gx, RP_GC_NEXTRA);
    if (!C.kcpu || !C.kalloc || !C.kgc)
        day_die("kind");
}

static void close_chunk(void)
{
    struct rp_chunk_writer_stats st;
    if (rp_chunk_close_stats(C.w, NULL, NULL, &st) != 0)
        day_die("close");
    C.files++;
    C.bytes += st.bytes_written;
    C.w = NULL;
}

static uint32_t thread_id(struct day_thread *t, uint64_t now)
{
    if (!t->id && !(t->id = rp_chunk_thread(C.w, (uint64_t)(t - day_threads), t->tid, t->jtid,
                                            t->name, t->flags, MONO0 + now)))
        day_die("thread");
    return t->id;
}

static uint32_t frame_id(uint32_t f)
{
    if (C.fid[f])
        return C.fid[f];
    const struct day_frame *d = &day_frames[f];
    int java = d->type <= RP_FRAME_INLINED;
    char file[96];
    const char *base = strrchr(d->klass, '.');
    snprintf(file, sizeof file, "%.*s.java", (int)strcspn(base ? base + 1 : d->klass, "$"),
             base ? base + 1 : d->klass);
    uint32_t k = rp_chunk_class(C.w, rp_chunk_cstring(C.w, d->klass));
    uint32_t m = rp_chunk_method(C.w, k, rp_chunk_cstring(C.w, d->name),
                                 rp_chunk_cstring(C.w, java ? "()V" : ""),
                                 java ? rp_chunk_cstring(C.w, file) : 0, 0);
    if (!(C.fid[f] = rp_chunk_frame(C.w, m, d->type, java ? (int32_t)(d->line % 40) : -1,
                                    java ? d->line : 0)))
        day_die("frame");
    return C.fid[f];
}

static uint32_t stack_id(uint32_t s)
{
    if (C.sid[s])
        return C.sid[s];
    const struct day_stack *st = &day_stacks[s];
    uint32_t leaf_first[DAY_MAXDEPTH];
    for (uint32_t i = 0; i < st->n; i++)
        leaf_first[i] = frame_id(st->f[st->n - 1 - i]);
    if (!(C.sid[s] = rp_chunk_stack(C.w, leaf_first, st->n, 0)))
        day_die("stack");
    return C.sid[s];
}

static uint32_t class_id(uint32_t c)
{
    if (!C.cid[c] && !(C.cid[c] = rp_chunk_class(C.w, rp_chunk_cstring(C.w, day_classes[c].name))))
        day_die("class");
    return C.cid[c];
}

/* ---------------------------------------------------------------- samples -- */

static struct {
    uint64_t since_gc;                /* bytes allocated since the last pause */
    uint64_t start, end;              /* the latest pause, ns from the start  */
    uint64_t count, time_ns, old_gen;
    int pending;                      /* started in this pass, not yet written */
} G = {0, 0, 0, 0, 0, 400ull << 20, 0};

static void cpu_sample(struct day_thread *t, uint64_t when, uint32_t s)
{
    uint64_t weight = day_below(100) < 3 ? 2 * SLOT : SLOT;   /* timer overruns */
    if (rp_chunk_sample(C.w, C.kcpu, thread_id(t, when), MONO0 + when, stack_id(s), weight,
                        NULL) != 0)
        day_die("cpu sample");
    t->cpu_ns += weight;
    t->cpu_samples++;
    C.cpu.samples++, C.cpu.weight += weight;
    C.stub_leaves += day_info[s].native;
    const struct day_pool *inc = &day_pools[P_INCIDENT];
    if (s >= inc->first && s < inc->first + inc->n)
        C.inc_cpu.samples++, C.inc_cpu.weight += weight;
}

static void alloc_sample(struct day_thread *t, uint64_t when, uint32_t s)
{
    const struct day_stack_info *st = &day_info[s];
    const struct day_site *x = &day_sites[st->klass][day_below(4)];
    uint64_t extra[RP_ALLOC_NEXTRA] = {class_id(st->klass), x->size,
                                       x->objects + (day_unit() < x->frac), x->length1};
    if (rp_chunk_sample(C.w, C.kalloc, thread_id(t, when), MONO0 + when, stack_id(st->java),
                        x->weight, extra) != 0)
        day_die("alloc sample");
    C.alloc.samples++, C.alloc.weight += x->weight;
    G.since_gc += x->weight;
    if (s == day_pools[P_ALLOC_INCIDENT].first)
        C.inc_alloc.samples++, C.inc_alloc.weight += x->weight;
}

/* Allocation samples in a 10 ms slot on CPU: Poisson, of 40 MB a CPU second
 * (cdf[0]) or twice that (cdf[1], the incident's http threads). */
#define ALLOC_MEAN (40e6 * 0.01 / DAY_ALLOC_INTERVAL)
#define ALLOC_MAX 16
static double alloc_cdf[2][ALLOC_MAX];

static void make_alloc_cdf(void)
{
    for (int k = 0; k < 2; k++) {
        double mean = ALLOC_MEAN * (k + 1), p = exp(-mean), c = p;
        for (int n = 0; n < ALLOC_MAX; n++) {
            alloc_cdf[k][n] = n == ALLOC_MAX - 1 ? 2 : c;
            c += p *= mean / (n + 1);
        }
    }
}

static uint32_t allocs_in_slot(int burst)
{
    double u = day_unit();
    uint32_t n = 0;
    while (u > alloc_cdf[burst][n])
        n++;
    return n;
}

/* A busy Java thread's slots in [t, t + DRAIN): on CPU at the pool's load,
 * stopped while a pause runs; the cpu sample at the slot's end, the slot's
 * allocations before it, in time order. */
static void java_window(struct day_thread *t, uint64_t t0, double load)
{
    int burst = t->pool == P_HTTP && in_burst(t0);
    for (uint64_t s = t0; s < t0 + DRAIN; s += SLOT) {
        if ((s + SLOT > G.start && s < G.end) || day_unit() >= load)
            continue;
        uint32_t n = allocs_in_slot(burst);
        uint64_t at = s;
        for (uint32_t i = 0; i < n; i++) {
            at += 1 + day_below((uint32_t)((s + SLOT - 200000 - at) / (n - i + 1)));
            int inc = burst && day_below(2);
            alloc_sample(t, at, inc ? day_pools[P_ALLOC_INCIDENT].first
                                    : day_draw(&day_pools[t->pool]));
        }
        int inc = burst && day_below(100) < 45;
        cpu_sample(t, s + SLOT - day_below(200000),
                   day_draw(&day_pools[inc ? P_INCIDENT : t->pool]));
    }
}

/* The JIT's slots at its load; the GC threads' inside pauses. */
static void vm_window(struct day_thread *t, uint64_t t0, double load)
{
    for (uint64_t s = t0; s < t0 + DRAIN; s += SLOT) {
        int on = t->pool == P_GC ? s + SLOT > G.start && s < G.end && day_below(20) != 0
                                 : day_unit() < load;
        if (on)
            cpu_sample(t, s + SLOT - day_below(200000), day_draw(&day_pools[t->pool]));
    }
}

/* A young pause once the allocations since the last one fill eden. */
static void maybe_gc(uint64_t t0)
{
    int burst = in_burst(t0);
    uint64_t eden = (burst ? 384ull : 768ull) << 20;
    if (G.since_gc < eden || t0 < G.end)
        return;
    uint64_t pause = burst ? (80 + day_below(141)) * MS
                   : G.count % 30 == 29 ? (40 + day_below(41)) * MS
                   : 4 * MS + (uint64_t)(14e6 * day_unit() * day_unit());
    G.start = t0 + day_rnd() % (DRAIN / 2);
    G.end = G.start + pause;
    G.since_gc = 0;
    G.count++;
    G.time_ns += pause;
    G.old_gen += burst ? 18ull << 20 : 1ull << 20;
    if (G.count % 30 == 0 || G.old_gen > (1800ull << 20))
        G.old_gen = 380ull << 20;
    G.pending = 1;
}

static void write_gc(void)
{
    if (!G.pending)
        return;
    uint64_t x[RP_GC_NEXTRA] = {G.old_gen, 4ull << 30, G.count};
    uint64_t pause = G.end - G.start;
    if (rp_chunk_sample(C.w, C.kgc, 0, MONO0 + G.start, 0, pause, x) != 0)
        day_die("gc sample");
    C.gc.samples++, C.gc.weight += pause;
    G.pending = 0;
}

/* ------------------------------------------------------------------ flush -- */

static void gauge(const char *name, uint64_t now, uint64_t v)
{
    if (rp_chunk_gauge(C.w, name, MONO0 + now, v) != 0)
        day_die("gauge");
}

/* The telemetry pass: the process as the agent reads it, made from the samples. */
static void telemetry(uint64_t now)
{
    uint64_t cpu = 0;
    for (uint32_t i = 0; i < day_nthreads; i++)
        cpu += day_threads[i].cpu_ns;
    double s = (double)now / SEC;
    uint64_t rss = (1600ull << 20) + (uint64_t)(s * 900) + (in_burst(now) ? 200ull << 20 : 0);
    gauge(RP_GAUGE_CPU_USER, now, cpu / 100 * 92 + now / 400);
    gauge(RP_GAUGE_CPU_SYS, now, cpu / 100 * 8 + now / 1000);
    gauge(RP_GAUGE_RSS, now, rss & ~4095ull);
    gauge(RP_GAUGE_HEAP_USED, now, G.old_gen + G.since_gc);
    gauge(RP_GAUGE_HEAP_COMMITTED, now, 4ull << 30);
    gauge(RP_GAUGE_GC_COUNT, now, G.count);
    gauge(RP_GAUGE_GC_TIME, now, G.time_ns);
    gauge(RP_GAUGE_THREADS, now, day_nthreads + 24);
    gauge(RP_GAUGE_THREADS_RUNNABLE, now, 1 + (uint64_t)(opt.busy * pool_load(P_HTTP, now)));
    gauge(RP_GAUGE_THREADS_JAVA, now, day_nthreads + 6);
    gauge(RP_GAUGE_THREADS_DAEMON, now, day_nthreads + 4);
    gauge(RP_GAUGE_THREADS_STARTED, now, day_nthreads + 9);
    gauge(RP_GAUGE_THREADS_PEAK, now, day_nthreads + 7);
    gauge(RP_GAUGE_CLASSES, now, 14000 + (uint64_t)(2600 * (1 - exp(-s / 900))));
    gauge(RP_GAUGE_AGENT_CPU, now, now / 330);
}

/* The flush step: thread CPU times, the agent's gauges and counters, the
 * segment; then rotation at 16 MiB or 1 h. */
static void flush_step(uint64_t now)
{
    for (uint32_t i = 0; i < day_nthreads; i++)
        if (rp_chunk_thread_cpu(C.w, thread_id(&day_threads[i], now), MONO0 + now,
                                day_threads[i].cpu_ns) != 0)
            day_die("thread cpu");
    if (C.stub_leaves && rp_chunk_counter(C.w, "walk.stub_frames", C.stub_leaves) != 0)
        day_die("counter");
    C.stub_leaves = 0;
    gauge("alloc.interval", now, (uint64_t)DAY_ALLOC_INTERVAL);
    gauge(RP_GAUGE_AGENT_ALLOC, now, C.alloc.samples * 4200);
    gauge(RP_GAUGE_AGENT_HANDLER, now, C.cpu.samples * 17400);
    gauge("agent.threads", now, day_nthreads);
    gauge("agent.slots", now, day_nthreads + 2);
    if (rp_chunk_flush(C.w) != 0)
        day_die("flush");
    struct rp_chunk_writer_stats st;
    rp_chunk_writer_stats(C.w, &st);
    if (st.bytes_written >= opt.chunk_size || now - C.opened >= CHUNK_TIME)
        close_chunk();
}

/* One flusher pass at `now`: the threads' samples of the last 100 ms. */
static void pass(uint64_t now)
{
    if (!C.w)
        open_chunk(now);
    uint64_t t0 = now - DRAIN;
    maybe_gc(t0);
    double load[P_COUNT];
    for (int p = 0; p < P_COUNT; p++)
        load[p] = pool_load(p, t0);
    for (uint32_t i = 0; i < day_nthreads; i++) {
        struct day_thread *t = &day_threads[i];
        if (t->pool == P_JIT || t->pool == P_GC)
            vm_window(t, t0, load[t->pool]);
        else if (t->pool >= 0)
            java_window(t, t0, load[t->pool]);
    }
    write_gc();
    if (now % SEC == 0) {
        telemetry(now);
        flush_step(now);
    }
}

/* --------------------------------------------------------------- manifest -- */

static void write_manifest(void)
{
    FILE *m = fopen(opt.manifest, "w");
    if (!m)
        day_die(opt.manifest);
    fprintf(m, "{\"hours\": %.6g, \"seed\": %llu, \"start_wall_ns\": %llu, "
            "\"end_wall_ns\": %llu, \"files\": %llu, \"bytes\": %llu, \"stacks\": %u,\n",
            opt.hours, (unsigned long long)opt.seed, WALL0, WALL0 + opt.duration,
            (unsigned long long)C.files, (unsigned long long)C.bytes, day_nstacks);
    const struct { const char *name; struct totals *t; } k[] = {
        {RP_KIND_CPU, &C.cpu}, {RP_KIND_ALLOC, &C.alloc}, {RP_KIND_GC, &C.gc}};
    fputs(" \"kinds\": {", m);
    for (size_t i = 0; i < N(k); i++)
        fprintf(m, "%s\"%s\": {\"samples\": %llu, \"weight\": %llu}", i ? ", " : "", k[i].name,
                (unsigned long long)k[i].t->samples, (unsigned long long)k[i].t->weight);
    fprintf(m, "},\n \"incident\": {\"from_wall_ns\": %llu, \"to_wall_ns\": %llu, "
            "\"frame\": \"%s\", \"cpu_samples\": %llu, \"cpu_weight\": %llu, "
            "\"alloc_samples\": %llu, \"alloc_weight\": %llu},\n \"threads\": [",
            WALL0 + opt.burst_from, WALL0 + opt.burst_to, DAY_INCIDENT_FRAME,
            (unsigned long long)C.inc_cpu.samples, (unsigned long long)C.inc_cpu.weight,
            (unsigned long long)C.inc_alloc.samples, (unsigned long long)C.inc_alloc.weight);
    static const char *const names[P_COUNT] = {"http", "kafka", "scheduling", "jit", "gc"};
    for (uint32_t i = 0; i < day_nthreads; i++)
        fprintf(m, "%s\n  {\"name\": \"%s\", \"tid\": %llu, \"pool\": \"%s\", "
                "\"cpu_samples\": %llu}", i ? "," : "", day_threads[i].name,
                (unsigned long long)day_threads[i].tid,
                day_threads[i].pool >= 0 ? names[day_threads[i].pool] : "idle",
                (unsigned long long)day_threads[i].cpu_samples);
    fputs("]}\n", m);
    if (fclose(m) != 0)
        day_die(opt.manifest);
}

/* ------------------------------------------------------------------- main -- */

static void usage(void)
{
    fprintf(stderr, "usage: rp_daywriter DIR [--hours H] [--threads N] [--seed N] "
            "[--stacks N] [--burst FROM_S:TO_S] [--chunksize MIB] [--manifest FILE]\n");
    exit(2);
}

static double number(const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || errno || end == s || *end || !(v >= lo && v <= hi))
        usage();
    return v;
}

static void parse(int argc, char **argv)
{
    int burst = 0;
    double from = 0, to = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--hours"))
            opt.hours = number(v, 1.0 / 3600, 24 * 30), i++;
        else if (!strcmp(a, "--threads"))
            opt.busy = (uint32_t)number(v, 1, 256), i++;
        else if (!strcmp(a, "--seed"))
            opt.seed = (uint64_t)number(v, 0, 1e15), i++;
        else if (!strcmp(a, "--stacks"))
            opt.stacks = (uint32_t)number(v, 60, 1e6), i++;
        else if (!strcmp(a, "--chunksize"))
            opt.chunk_size = (uint64_t)(number(v, 0.0625, 1024) * (1 << 20)), i++;
        else if (!strcmp(a, "--manifest") && v)
            opt.manifest = v, i++;
        else if (!strcmp(a, "--burst") && v && sscanf(v, "%lf:%lf", &from, &to) == 2 &&
                 from >= 0 && to > from)
            burst = 1, i++;
        else if (a[0] != '-' && !opt.dir)
            opt.dir = a;
        else
            usage();
    }
    if (!opt.dir)
        usage();
    opt.duration = (uint64_t)llround(opt.hours * 3600) * SEC;
    if (!burst) {
        double d = (double)opt.duration / SEC;
        from = d >= 52560 ? 52320 : floor(0.6 * d);
        to = from + (d >= 52560 ? 240 : fmin(240, ceil(0.1 * d)));
    }
    opt.burst_from = (uint64_t)llround(from * 1e9);
    opt.burst_to = (uint64_t)llround(to * 1e9);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    char manifest[4096];
    if (!opt.manifest) {
        snprintf(manifest, sizeof manifest, "%s.json", opt.dir);
        opt.manifest = manifest;
    }
    if (mkdir(opt.dir, 0700) != 0 && errno != EEXIST)
        day_die(opt.dir);
    double started = now_s();
    day_rng = opt.seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    day_service_make(opt.stacks, opt.busy);
    make_alloc_cdf();
    C.fid = day_calloc(day_nframes, sizeof *C.fid);
    C.sid = day_calloc(day_nstacks, sizeof *C.sid);
    for (uint64_t now = DRAIN; now <= opt.duration; now += DRAIN)
        pass(now);
    if (C.w)
        close_chunk();
    write_manifest();
    double took = now_s() - started, n = (double)(C.cpu.samples + C.alloc.samples);
    printf("rp_daywriter: %.6g h, %u busy threads, %u stacks, seed %llu: %llu files, "
           "%.1f MB in %s\n", opt.hours, opt.busy, day_nstacks, (unsigned long long)opt.seed,
           (unsigned long long)C.files, (double)C.bytes / 1e6, opt.dir);
    printf("  cpu    %llu samples, %.1f s\n  alloc  %llu samples, %.1f GB\n"
           "  gc     %llu pauses, %.1f s\n  incident %.0f-%.0f s: %llu cpu, %llu alloc "
           "samples on its stacks\n", (unsigned long long)C.cpu.samples,
           (double)C.cpu.weight / 1e9, (unsigned long long)C.alloc.samples,
           (double)C.alloc.weight / 1e9, (unsigned long long)C.gc.samples,
           (double)C.gc.weight / 1e9, (double)opt.burst_from / 1e9,
           (double)opt.burst_to / 1e9, (unsigned long long)C.inc_cpu.samples,
           (unsigned long long)C.inc_alloc.samples);
    printf("  %.2f s, %.1f M samples/s, %.2f bytes a sample; manifest %s\n", took,
           n / took / 1e6, (double)C.bytes / n, opt.manifest);
    return 0;
}
