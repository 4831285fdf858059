/*
 * tests/synth.c — rp_synth: the recorder pipeline end to end, with no JVM.
 *
 * It does what the agent will do, with a stand-in for the Java stack. Worker threads
 * run a small "billing service" whose CPU is split between known methods. Each
 * worker keeps a shadow stack of the methods it is in (written before each call,
 * read only by its own signal handler). Each worker has a CPU-time timer on its own
 * thread CPU clock, delivered to itself with SIGEV_THREAD_ID; the handler copies
 * the shadow stack into the worker's ring. A flusher thread drains the rings every
 * flush interval, interns the frames, writes samples, loss counters and per-thread
 * CPU time through the recording (rotation and retention included).
 *
 * So the profile it writes has a known truth (the CPU split below), and every part
 * of the recorder is exercised the way the agent exercises it: signal-safe pushes
 * that drop when full, a consumer that never blocks producers, segment flushes,
 * chunk rotation, retention, and a clean close.
 *
 * Used by the Quick start (as the demo program until the agent lands), by
 * tests/test_tool_summary.sh, and by anyone wanting a realistic recording.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "ringprof/recorder.h"

/* The synthetic program: method names and the CPU share each leaf should get. */
enum { M_MAIN, M_HANDLE, M_PARSE, M_SCORE, M_HASH, M_RENDER, M_WRITE, M_COUNT };
static const struct {
    const char *klass, *name, *file;
} methods[M_COUNT] = {
    [M_MAIN]   = {"demo.Billing", "main", "Billing.java"},
    [M_HANDLE] = {"demo.Billing", "handle", "Billing.java"},
    [M_PARSE]  = {"demo.Parser", "parse", "Parser.java"},
    [M_SCORE]  = {"demo.Risk", "score", "Risk.java"},
    [M_HASH]   = {"demo.Risk", "hash", "Risk.java"},
    [M_RENDER] = {"demo.Invoice", "render", "Invoice.java"},
    [M_WRITE]  = {"demo.Invoice", "write", "Invoice.java"},
};
/* Spin iterations per request for each leaf: parse 30%, hash 50%, write 20%. */
#define SPIN_UNIT 20000u
#define SPIN_PARSE (3 * SPIN_UNIT)
#define SPIN_HASH  (5 * SPIN_UNIT)
#define SPIN_WRITE (2 * SPIN_UNIT)

#define MAX_DEPTH 16
#define MAX_WORKERS 256

/* What the signal handler pushes: a fixed header then depth method ids, leaf first. */
struct sample_rec {
    uint64_t time;       /* CLOCK_MONOTONIC ns                                  */
    uint64_t weight;     /* CPU ns this sample stands for (overruns included)   */
    uint32_t depth;
    uint16_t ids[MAX_DEPTH];
};

struct worker {
    pthread_t thread;
    struct rp_ring *ring;
    timer_t timer;
    int has_timer;
    clockid_t cpu_clock;
    _Atomic int state;            /* 0 unused, 1 running, 2 ended              */
    _Atomic int armed;            /* cpu_clock and armed_cpu_ns are set        */
    pid_t tid;
    char name[32];
    uint64_t armed_cpu_ns;        /* its CPU clock when its timer was armed     */
    uint64_t final_cpu_ns;        /* written by the worker before it ends      */
    /* Shadow stack: written by the worker, read by its own signal handler. */
    volatile uint32_t depth;
    volatile uint16_t stack[MAX_DEPTH];
    /* Flusher-side bookkeeping. */
    uint64_t seen_dropped[RP_RING_DROP_REASONS];
    uint64_t requests;
    _Atomic uint64_t signals;     /* handler invocations that tried to push     */
};

static struct options {
    int threads;
    double seconds;
    uint64_t interval_ns;
    uint64_t flush_ns;
    size_t ring_bytes;
    const char *dir;
    struct rp_recording_limits limits;
    int slow_flusher;             /* drain only at the end, to force ring drops */
} opt = {
    .threads = 4,
    .seconds = 3,
    .interval_ns = 10000000,
    .flush_ns = 1000000000,
    .ring_bytes = 64 * 1024,
    .dir = "ringprof-synth",
};

static struct worker workers[MAX_WORKERS];
static atomic_int stop_flag;
static _Atomic uint64_t signals_without_worker;

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- sampling -- */

/* The CPU-timer handler: async-signal-safe. It reads only its own thread's
 * worker (passed in si_value, so no TLS), pushes one record, and restores errno. */
static void on_cpu_timer(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    int saved_errno = errno;
    struct worker *w = si->si_value.sival_ptr;
    if (!w || !w->ring) {
        atomic_fetch_add_explicit(&signals_without_worker, 1, memory_order_relaxed);
        errno = saved_errno;
        return;
    }
    struct sample_rec rec;
    int overrun = timer_getoverrun(w->timer);
    rec.time = now_ns(CLOCK_MONOTONIC);
    rec.weight = opt.interval_ns * (uint64_t)(1 + (overrun > 0 ? overrun : 0));
    atomic_signal_fence(memory_order_acquire);
    uint32_t depth = w->depth;
    if (depth > MAX_DEPTH)
        depth = MAX_DEPTH;
    rec.depth = depth;
    for (uint32_t i = 0; i < depth; i++)         /* leaf first */
        rec.ids[i] = w->stack[depth - 1 - i];
    size_t len = offsetof(struct sample_rec, ids) + depth * sizeof(uint16_t);
    rp_ring_push(w->ring, &rec, len);
    atomic_fetch_add_explicit(&w->signals, 1, memory_order_relaxed);
    errno = saved_errno;
}

static int arm_timer(struct worker *w)
{
    struct sigevent sev = {0};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = w;
    sev._sigev_un._tid = w->tid;
    if (pthread_getcpuclockid(pthread_self(), &w->cpu_clock) != 0)
        return -1;
    if (timer_create(w->cpu_clock, &sev, &w->timer) != 0)
        return -1;
    w->has_timer = 1;
    struct itimerspec its = {0};
    its.it_interval.tv_sec = (time_t)(opt.interval_ns / 1000000000u);
    its.it_interval.tv_nsec = (long)(opt.interval_ns % 1000000000u);
    its.it_value = its.it_interval;
    w->armed_cpu_ns = now_ns(w->cpu_clock);
    return timer_settime(w->timer, 0, &its, NULL);
}

/* ----------------------------------------------------------------- workload -- */

static void enter(struct worker *w, int m)
{
    w->stack[w->depth] = (uint16_t)m;
    atomic_signal_fence(memory_order_release);
    w->depth = w->depth + 1;
}

static void leave(struct worker *w)
{
    w->depth = w->depth - 1;
    atomic_signal_fence(memory_order_release);
}

static uint64_t spin(struct worker *w, int m, unsigned iters, uint64_t x)
{
    enter(w, m);
    for (unsigned i = 0; i < iters; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    leave(w);
    return x;
}

static uint64_t handle_request(struct worker *w, uint64_t x)
{
    enter(w, M_HANDLE);
    x = spin(w, M_PARSE, SPIN_PARSE, x);
    enter(w, M_SCORE);
    x = spin(w, M_HASH, SPIN_HASH, x);
    leave(w);
    enter(w, M_RENDER);
    x = spin(w, M_WRITE, SPIN_WRITE, x);
    leave(w);
    leave(w);
    return x;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->tid = (pid_t)syscall(SYS_gettid);
    pthread_setname_np(pthread_self(), w->name);
    /* Everything the handler touches exists before the timer is armed. */
    if (arm_timer(w) != 0) {
        perror("rp_synth: timer");
        atomic_store(&w->state, 2);
        return NULL;
    }
    atomic_store_explicit(&w->armed, 1, memory_order_release);
    uint64_t x = (uint64_t)(uintptr_t)w;
    enter(w, M_MAIN);
    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        x = handle_request(w, x);
        w->requests++;
    }
    leave(w);
    /* Disarm before the state the handler reads can go away. A signal already
     * pending is delivered before timer_delete returns to user code or is discarded
     * with the timer, so nothing arrives after this point. */
    timer_delete(w->timer);
    w->has_timer = 0;
    w->final_cpu_ns = now_ns(w->cpu_clock);
    if (x == 42)
        puts("");     /* keep x alive */
    atomic_store_explicit(&w->state, 2, memory_order_release);
    return NULL;
}

/* ------------------------------------------------------------------ flusher -- */

struct flush_ctx {
    struct rp_recording *rec;
    struct rp_chunk_writer *w;
    uint64_t generation;
    uint32_t kind;
    uint32_t frame[M_COUNT];   /* chunk frame id per method, this generation */
    uint32_t thread;           /* chunk thread id of the worker being drained */
    uint64_t samples, bad_records;
};

static int refresh_ids(struct flush_ctx *c)
{
    c->w = rp_recording_writer(c->rec);
    if (!c->w)
        return -1;
    if (c->generation == rp_recording_generation(c->rec) && c->kind)
        return 0;
    c->generation = rp_recording_generation(c->rec);
    c->kind = rp_chunk_kind(c->w, "cpu", "ns", opt.interval_ns, NULL, 0);
    for (int m = 0; m < M_COUNT; m++) {
        uint32_t k = rp_chunk_class(c->w, rp_chunk_cstring(c->w, methods[m].klass));
        uint32_t meth = rp_chunk_method(c->w, k, rp_chunk_cstring(c->w, methods[m].name),
                                        rp_chunk_cstring(c->w, "()V"),
                                        rp_chunk_cstring(c->w, methods[m].file), 0);
        c->frame[m] = rp_chunk_frame(c->w, meth, RP_FRAME_JIT, -1, 0);
    }
    return 0;
}

static int write_sample(void *arg, const void *p, size_t len)
{
    struct flush_ctx *c = arg;
    struct sample_rec rec;
    size_t fixed = offsetof(struct sample_rec, ids);
    if (len < fixed || len > sizeof rec) {
        c->bad_records++;
        return 0;
    }
    memcpy(&rec, p, len);
    if (rec.depth > MAX_DEPTH || fixed + rec.depth * sizeof(uint16_t) != len) {
        c->bad_records++;
        return 0;
    }
    uint32_t frames[MAX_DEPTH];
    for (uint32_t i = 0; i < rec.depth; i++)
        frames[i] = rec.ids[i] < M_COUNT ? c->frame[rec.ids[i]] : 0;
    uint32_t stack = rp_chunk_stack(c->w, frames, rec.depth, 0);
    if (stack && rp_chunk_sample(c->w, c->kind, c->thread, rec.time, stack,
                                 rec.weight, NULL) == 0)
        c->samples++;
    else
        rp_chunk_counter(c->w, RP_COUNTER_LOST_PREFIX "no_memory", 1);
    return 0;
}

/* Drop counts since the last flush go into the chunk as lost.<reason> counters. */
static void write_losses(struct flush_ctx *c, struct worker *wk)
{
    struct rp_ring_stats st;
    rp_ring_stats(wk->ring, &st);
    for (int r = 0; r < RP_RING_DROP_REASONS; r++) {
        uint64_t d = st.dropped[r] - wk->seen_dropped[r];
        if (d) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", RP_COUNTER_LOST_PREFIX,
                     rp_ring_drop_name((enum rp_ring_drop)r));
            rp_chunk_counter(c->w, name, d);
            wk->seen_dropped[r] = st.dropped[r];
        }
    }
}

static void drain_worker(struct flush_ctx *c, struct worker *wk, void *scratch)
{
    int state = atomic_load_explicit(&wk->state, memory_order_acquire);
    uint64_t t = now_ns(CLOCK_MONOTONIC);
    /* The CPU the thread used while its timer was armed: what its samples can
     * account for (thread start-up before arming is not sampled by design). */
    int armed = atomic_load_explicit(&wk->armed, memory_order_acquire);
    uint64_t cpu = !armed ? 0 : (state == 2 ? wk->final_cpu_ns : now_ns(wk->cpu_clock)) -
                                wk->armed_cpu_ns;
    c->thread = rp_chunk_thread(c->w, (uint64_t)(wk - workers), (uint64_t)wk->tid, 0,
                                wk->name, state == 2 ? RP_THREAD_ENDED : 0, t);
    rp_ring_drain(wk->ring, write_sample, c, scratch);
    write_losses(c, wk);
    if (armed)
        rp_chunk_thread_cpu(c->w, c->thread, t, cpu);
}

static void flush_once(struct flush_ctx *c, void *scratch)
{
    if (refresh_ids(c) != 0) {
        fprintf(stderr, "rp_synth: no chunk could be opened; samples stay in rings\n");
        return;
    }
    for (int i = 0; i < opt.threads; i++)
        if (workers[i].ring && atomic_load(&workers[i].state) != 0)
            drain_worker(c, &workers[i], scratch);
    rp_chunk_gauge(c->w, "synth.rss_kb", now_ns(CLOCK_MONOTONIC), 0);
    if (rp_recording_flush(c->rec, NULL) != 0)
        fprintf(stderr, "rp_synth: a segment could not be written: %s\n",
                strerror(errno));
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* --------------------------------------------------------------------- main -- */

static uint64_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1024, end++;
    else if (*end == 'm' || *end == 'M') mul = 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G') mul = 1024ull * 1024 * 1024, end++;
    if (end == s || *end != '\0' || v < 0) {
        fprintf(stderr, "rp_synth: bad size '%s' (examples: 4096, 64k, 5m)\n", s);
        exit(2);
    }
    return (uint64_t)(v * (double)mul);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: rp_synth [options]\n"
        "  --dir DIR            recording directory (default ringprof-synth)\n"
        "  --threads N          worker threads, 1..%d (default 4)\n"
        "  --seconds S          how long to run (default 3)\n"
        "  --interval-us U      CPU sampling interval in microseconds (default 10000)\n"
        "  --flush-ms M         flush interval in milliseconds (default 1000)\n"
        "  --ring-bytes B       per-thread ring capacity, power of two (default 64k)\n"
        "  --maxsize B          retention: bytes of finished chunks kept (default 1g)\n"
        "  --chunk-size B       rotate chunks at this size (default 16m)\n"
        "  --slow-flusher       drain the rings only at the end, to force ring drops\n"
        "                       (runs past --seconds until a ring has dropped, at most 120 s)\n",
        MAX_WORKERS);
}

static void parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"dir", 1, 0, 'd'}, {"threads", 1, 0, 't'}, {"seconds", 1, 0, 's'},
        {"interval-us", 1, 0, 'i'}, {"flush-ms", 1, 0, 'f'}, {"ring-bytes", 1, 0, 'r'},
        {"maxsize", 1, 0, 'm'}, {"chunk-size", 1, 0, 'c'}, {"slow-flusher", 0, 0, 'S'},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    opt.limits = (struct rp_recording_limits){RP_DEFAULT_MAX_SIZE, RP_DEFAULT_MAX_AGE_NS,
                                              RP_DEFAULT_CHUNK_SIZE,
                                              RP_DEFAULT_CHUNK_DURATION_NS};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'd': opt.dir = optarg; break;
        case 't': opt.threads = atoi(optarg); break;
        case 's': opt.seconds = atof(optarg); break;
        case 'i': opt.interval_ns = (uint64_t)(atof(optarg) * 1000); break;
        case 'f': opt.flush_ns = (uint64_t)(atof(optarg) * 1e6); break;
        case 'r': opt.ring_bytes = parse_size(optarg); break;
        case 'm': opt.limits.max_size = parse_size(optarg); break;
        case 'c': opt.limits.chunk_size = parse_size(optarg); break;
        case 'S': opt.slow_flusher = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind != argc || opt.threads < 1 || opt.threads > MAX_WORKERS ||
        opt.seconds <= 0 || opt.interval_ns < 100000 || opt.flush_ns < 1000000) {
        fprintf(stderr, "rp_synth: bad arguments (threads 1..%d, seconds > 0, "
                        "interval-us >= 100, flush-ms >= 1)\n", MAX_WORKERS);
        usage(stderr);
        exit(2);
    }
}

static int start_workers(void)
{
    for (int i = 0; i < opt.threads; i++) {
        struct worker *w = &workers[i];
        snprintf(w->name, sizeof w->name, "billing-%d", i + 1);
        w->ring = rp_ring_create(opt.ring_bytes);
        if (!w->ring) {
            fprintf(stderr, "rp_synth: ring of %zu bytes: %s (a power of two from 4k "
                            "to 1g)\n", opt.ring_bytes, strerror(errno));
            return -1;
        }
        atomic_store(&w->state, 1);
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            fprintf(stderr, "rp_synth: cannot start thread %d\n", i);
            return -1;
        }
    }
    return 0;
}

/* Whether any ring has dropped a record yet (the flusher's side of the ring). */
static int some_ring_dropped(void)
{
    for (int i = 0; i < opt.threads; i++) {
        struct rp_ring_stats st;
        if (!workers[i].ring)
            continue;
        rp_ring_stats(workers[i].ring, &st);
        for (int r = 0; r < RP_RING_DROP_REASONS; r++)
            if (st.dropped[r])
                return 1;
    }
    return 0;
}

/* Flush every --flush-ms for --seconds. With --slow-flusher, nothing is drained
 * until the end, and the run goes on past --seconds until a ring has overflowed
 * (at most SLOW_FLUSHER_LIMIT_S): on a busy machine the threads may get too little
 * CPU in --seconds to fill a ring, and a run meant to show losses must show them. */
#define SLOW_FLUSHER_LIMIT_S 120
static void run_flusher(struct flush_ctx *c, void *scratch)
{
    uint64_t start = now_ns(CLOCK_MONOTONIC);
    uint64_t end = start + (uint64_t)(opt.seconds * 1e9);
    uint64_t limit = start + (uint64_t)SLOW_FLUSHER_LIMIT_S * 1000000000u;
    for (;;) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (now >= end && (!opt.slow_flusher || some_ring_dropped() || now >= limit))
            break;
        sleep_ns(opt.flush_ns);
        if (!opt.slow_flusher)
            flush_once(c, scratch);
    }
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    struct sigaction sa = {0};
    sa.sa_sigaction = on_cpu_timer;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);

    char opts[256], err[512];
    snprintf(opts, sizeof opts, "synthetic: threads=%d,interval=%lluns,flush=%lluns",
             opt.threads, (unsigned long long)opt.interval_ns,
             (unsigned long long)opt.flush_ns);
    struct rp_kv meta[] = {
        {RP_META_JVM_NAME, "rp_synth (no JVM: synthetic billing workload)"},
        {RP_META_JVM_VERSION, "n/a"},
        {RP_META_OPTIONS, opts},
        {RP_META_PRODUCER, "rp_synth " RINGPROF_VERSION},
    };
    struct flush_ctx c = {0};
    c.rec = rp_recording_open(opt.dir, &opt.limits, meta, 4, err, sizeof err);
    if (!c.rec) {
        fprintf(stderr, "rp_synth: %s\n", err);
        return 1;
    }
    void *scratch = malloc(opt.ring_bytes);
    if (!scratch || start_workers() != 0)
        return 1;
    run_flusher(&c, scratch);
    atomic_store(&stop_flag, 1);
    uint64_t requests = 0, signals = 0;
    for (int i = 0; i < opt.threads; i++) {
        pthread_join(workers[i].thread, NULL);
        requests += workers[i].requests;
        signals += atomic_load(&workers[i].signals);
    }
    flush_once(&c, scratch);     /* what the workers pushed after the last flush */

    char path[4096];
    struct rp_recording_stats rs;
    rp_recording_rotate(c.rec, path, sizeof path);
    rp_recording_stats(c.rec, &rs);
    rp_recording_close(c.rec);
    for (int i = 0; i < opt.threads; i++)
        rp_ring_destroy(workers[i].ring);
    free(scratch);
    printf("rp_synth: %d threads, %llu requests, %llu signals, %llu samples written, "
           "%llu chunks in %s (last: %s)\n",
           opt.threads, (unsigned long long)requests, (unsigned long long)signals,
           (unsigned long long)c.samples,
           (unsigned long long)rs.chunks_finished, opt.dir, path);
    if (c.bad_records || signals_without_worker)
        fprintf(stderr, "rp_synth: %llu malformed ring records, %llu stray signals\n",
                (unsigned long long)c.bad_records,
                (unsigned long long)atomic_load(&signals_without_worker));
    return c.bad_records ? 1 : 0;
}
