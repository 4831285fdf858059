/*
 * bench/bench_convert.c — `ringprof convert` throughput and memory on a large
 * recording.
 *
 * It writes a recording with the chunk writer, the way the agent's flusher would on
 * a busy JVM: T threads (default 12) sampled every 10 ms of CPU with +-1 ms jitter,
 * 10% of samples weighing two intervals; stacks drawn Zipf(1.1) from S distinct
 * stacks (default 20000) of depth 20 to 60, each built by extending a prefix of an
 * earlier stack (so stacks share their root-side chains, as real ones do) with
 * frames of 6000 methods in 600 classes, at varying lines (with --cpp PCT, PCT% of
 * the methods are libjvm C++ frames, recorded mangled as the agent records them,
 * _ZN8Class1234method5678Ev, which the converter demangles). One segment per second
 * of stream time, drained thread after thread; a chunk rotates at 16 MiB. It stops
 * when the chunk files reach --mb megabytes (default 100; --quick: 10).
 *
 * Then it runs the real binary, `ringprof convert --format F -o OUT DIR`, as a
 * child, for collapsed, pprof and jfr (and with --all also tree, flat, collapsed
 * --per-thread and --lines), interleaved: every format once per round (A B C A B
 * C ...), --runs rounds (default 3), so that the machine's drift hits them all
 * alike. OUT is a file in a directory of its own (removed at the end). For each
 * format it prints:
 *   samples_s      samples converted per second of wall time (median run)
 *   mb_s           chunk-file megabytes per second
 *   seconds        the median run's wall time, and its ratio to collapsed's
 *   cpu_s          the median run's CPU time (user + system, from wait4), and its
 *                  ratio to collapsed's: steadier than wall time on a busy machine
 *   peak_rss_mb    the child's peak resident set (ru_maxrss from wait4), maximum
 *                  over runs
 *   out_mb         the output's size, and its ratio to the chunk files'
 * and, for jfr, the events the writer reports (a sample of two intervals' weight
 * is two jdk.ExecutionSample events, out_jfr.c). Figures are printed, never
 * asserted. One core: the converter is single-threaded.
 *
 *   bench_convert [--quick] [--all] [--mb N] [--threads N] [--stacks N] [--runs N]
 *                 [--cpp PCT] [--dir DIR] [--keep] [--ringprof PATH]
 *
 * --ringprof defaults to ../tools/ringprof next to this program (the build tree).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "ringprof/chunk.h"

#define MS 1000000ull
#define CHUNK_BYTES (16ull << 20)
#define NCLASS 600
#define NMETHOD 6000
#define MAXDEPTH 60

static int nthreads = 12, nstacks = 20000, runs = 3, keep, all, cpp_pct;
static double target_mb = 100;
static char dir[PATH_MAX], ringprof[PATH_MAX];

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- stacks -- */

struct stack {
    int n;
    uint32_t method[MAXDEPTH];   /* root first */
    uint32_t line[MAXDEPTH];
};
static struct stack *stacks;
static double *zipf_cdf;

static void make_stacks(void)
{
    stacks = calloc((size_t)nstacks, sizeof *stacks);
    zipf_cdf = calloc((size_t)nstacks, sizeof *zipf_cdf);
    if (!stacks || !zipf_cdf)
        exit(1);
    for (int i = 0; i < nstacks; i++) {
        struct stack *s = &stacks[i];
        int depth = 20 + (int)(rnd() % 41);
        int keep_n = 0;
        if (i > 0) {   /* share a root-side chain with an earlier stack */
            const struct stack *p = &stacks[rnd() % (uint32_t)i];
            keep_n = 5 + (int)(rnd() % (uint32_t)(p->n - 4));
            if (keep_n > depth)
                keep_n = depth;
            memcpy(s->method, p->method, (size_t)keep_n * sizeof s->method[0]);
            memcpy(s->line, p->line, (size_t)keep_n * sizeof s->line[0]);
        }
        for (int d = keep_n; d < depth; d++) {
            s->method[d] = rnd() % NMETHOD;
            s->line[d] = 1 + rnd() % 400;
        }
        s->n = depth;
    }
    double sum = 0;
    for (int i = 0; i < nstacks; i++)
        zipf_cdf[i] = (sum += 1.0 / pow(i + 1, 1.1));
    for (int i = 0; i < nstacks; i++)
        zipf_cdf[i] /= sum;
}

static int pick_stack(void)
{
    double u = (double)rnd() / 4294967296.0;
    int lo = 0, hi = nstacks - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (zipf_cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---------------------------------------------------------------- writer -- */

struct chunk {
    struct rp_chunk_writer *w;
    uint32_t kind, *stack_id, *frame_id;   /* caches per chunk, like the agent */
    uint64_t mono0;
};

static void chunk_open(struct chunk *c, int seq, uint64_t mono)
{
    char path[PATH_MAX + 64], wall[32], m[32], s[16];
    snprintf(path, sizeof path, "%s/20261121T%06dZ-4242-%d.rpc", dir, seq, seq);
    snprintf(wall, sizeof wall, "%llu", 1795240923000000000ull + (unsigned long long)(mono - 1000 * MS * 1000));
    snprintf(m, sizeof m, "%llu", (unsigned long long)mono);
    snprintf(s, sizeof s, "%d", seq);
    const struct rp_kv meta[] = {
        {RP_META_PID, "4242"}, {RP_META_HOST, "bench"}, {RP_META_RECORDING, "bench-1"},
        {RP_META_CHUNK_SEQ, s}, {RP_META_START_WALL, wall}, {RP_META_START_MONO, m},
        {RP_META_OPTIONS, "interval=10ms"},
    };
    char err[256];
    c->w = rp_chunk_writer_open(path, meta, sizeof meta / sizeof meta[0], err, sizeof err);
    if (!c->w) {
        fprintf(stderr, "bench_convert: %s\n", err);
        exit(1);
    }
    c->kind = rp_chunk_kind(c->w, "cpu", "ns", 10 * MS, NULL, 0);
    memset(c->stack_id, 0, (size_t)nstacks * sizeof *c->stack_id);
    memset(c->frame_id, 0, (size_t)NMETHOD * 401 * sizeof *c->frame_id);
    c->mono0 = mono;
}

static uint32_t chunk_stack(struct chunk *c, int si)
{
    if (c->stack_id[si])
        return c->stack_id[si];
    const struct stack *s = &stacks[si];
    uint32_t ids[MAXDEPTH];
    for (int d = 0; d < s->n; d++) {
        int cpp = (int)(s->method[d] % 100) < cpp_pct;
        uint32_t key = s->method[d] * 401 + (cpp ? 0 : s->line[d]);   /* lines: 1..400 */
        if (!c->frame_id[key] && cpp) {
            char cls[24], name[24], sym[64];
            snprintf(cls, sizeof cls, "Class%u", s->method[d] % NCLASS);
            snprintf(name, sizeof name, "method%u", s->method[d]);
            snprintf(sym, sizeof sym, "_ZN%zu%s%zu%sEv", strlen(cls), cls, strlen(name), name);
            uint32_t k = rp_chunk_class(c->w, rp_chunk_cstring(c->w, "libjvm.so"));
            uint32_t m = rp_chunk_method(c->w, k, rp_chunk_cstring(c->w, sym),
                                         rp_chunk_cstring(c->w, ""), rp_chunk_cstring(c->w, ""),
                                         0);
            c->frame_id[key] = rp_chunk_frame(c->w, m, RP_FRAME_CPP, -1, 0);
        } else if (!c->frame_id[key]) {
            char cls[32], name[32];
            snprintf(cls, sizeof cls, "com.example.pkg%u.Class%u", s->method[d] % NCLASS / 20,
                     s->method[d] % NCLASS);
            snprintf(name, sizeof name, "method%u", s->method[d]);
            uint32_t k = rp_chunk_class(c->w, rp_chunk_cstring(c->w, cls));
            uint32_t m = rp_chunk_method(c->w, k, rp_chunk_cstring(c->w, name),
                                         rp_chunk_cstring(c->w, "()V"),
                                         rp_chunk_cstring(c->w, "Class.java"), 0);
            c->frame_id[key] = rp_chunk_frame(c->w, m, RP_FRAME_JIT, (int32_t)s->line[d],
                                              s->line[d]);
        }
        ids[s->n - 1 - d] = c->frame_id[key];
    }
    return c->stack_id[si] = rp_chunk_stack(c->w, ids, (uint32_t)s->n, 0);
}

static uint64_t dir_bytes(void)
{
    uint64_t total = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[PATH_MAX + 300];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    if (d)
        closedir(d);
    return total;
}

/* @return samples written. */
static uint64_t write_recording(void)
{
    struct chunk c;
    c.stack_id = calloc((size_t)nstacks, sizeof *c.stack_id);
    c.frame_id = calloc((size_t)NMETHOD * 401, sizeof *c.frame_id);
    uint64_t *tnext = calloc((size_t)nthreads, sizeof *tnext);
    if (!c.stack_id || !c.frame_id || !tnext)
        exit(1);
    uint64_t mono = 1000 * MS * 1000, samples = 0, done_bytes = 0;
    int seq = 0;
    chunk_open(&c, seq, mono);
    uint64_t target = (uint64_t)(target_mb * 1e6);
    for (uint64_t sec = 0;; sec++) {
        uint64_t seg_end = mono + (sec + 1) * 1000 * MS;
        for (int t = 0; t < nthreads; t++) {
            char name[32];
            snprintf(name, sizeof name, "worker-%d", t);
            uint32_t tid = rp_chunk_thread(c.w, (uint64_t)t, 5000 + (uint64_t)t, 10 + (uint64_t)t,
                                           name, RP_THREAD_JAVA, mono + sec * 1000 * MS);
            if (!tnext[t])
                tnext[t] = mono + (uint64_t)t * MS;
            while (tnext[t] < seg_end) {
                uint64_t w = rnd() % 10 == 0 ? 20 * MS : 10 * MS;
                if (rp_chunk_sample(c.w, c.kind, tid, tnext[t], chunk_stack(&c, pick_stack()),
                                    w, NULL) != 0)
                    exit(1);
                samples++;
                tnext[t] += w + (rnd() % (2 * MS)) - MS;
            }
        }
        rp_chunk_counter(c.w, "lost.ring_full", rnd() % 3);
        rp_chunk_flush(c.w);
        struct rp_chunk_writer_stats st;
        rp_chunk_writer_stats(c.w, &st);
        if (done_bytes + st.bytes_written >= target)
            break;
        if (st.bytes_written >= CHUNK_BYTES) {
            done_bytes += st.bytes_written;
            rp_chunk_close(c.w);
            chunk_open(&c, ++seq, seg_end);
        }
    }
    rp_chunk_close(c.w);
    free(c.stack_id);
    free(c.frame_id);
    free(tnext);
    return samples;
}

/* ------------------------------------------------------------ the runs -- */

/* Run `ringprof convert ARGS... -o OUT DIR`, its stderr into ERR; wall seconds,
 * CPU seconds (user + system), peak RSS in KiB. */
static int run_convert(char *const extra[], const char *out, const char *err,
                       double *secs, double *cpu, long *rss_kb)
{
    char *argv[16];
    int n = 0;
    argv[n++] = ringprof;
    argv[n++] = "convert";
    for (int i = 0; extra[i]; i++)
        argv[n++] = extra[i];
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = dir;
    argv[n] = NULL;
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen(err, "w", stderr))
            _exit(126);
        execv(ringprof, argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    *secs = now() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    *rss_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAXRUNS 15
struct format {
    const char *label;
    char *args[5];
    double t[MAXRUNS], cpu[MAXRUNS];
    long rss_kb;
    uint64_t out_bytes;
    char report[512];           /* the writer's last stderr line, for jfr */
};

/* The last non-empty line of file `path` into out (cap bytes). */
static void last_line(const char *path, char *out, size_t cap)
{
    char line[512];
    FILE *f = fopen(path, "r");
    out[0] = 0;
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '\n')
            snprintf(out, cap, "%s", line);
    if (f)
        fclose(f);
    out[strcspn(out, "\n")] = 0;
}

/* Every format once per round, rounds interleaved; then the figures. */
static void bench_formats(struct format *f, int nf, uint64_t samples, double mb,
                          const char *outdir)
{
    char out[PATH_MAX + 32], err[PATH_MAX + 32];
    snprintf(out, sizeof out, "%s/out", outdir);
    snprintf(err, sizeof err, "%s/stderr", outdir);
    for (int r = 0; r < runs; r++)
        for (int i = 0; i < nf; i++) {
            long k;
            int rc = run_convert(f[i].args, out, err, &f[i].t[r], &f[i].cpu[r], &k);
            if (rc != 0) {
                fprintf(stderr, "bench_convert: %s convert %s exited %d; its stderr is %s\n",
                        ringprof, f[i].label, rc, err);
                exit(1);
            }
            if (k > f[i].rss_kb)
                f[i].rss_kb = k;
            struct stat st;
            f[i].out_bytes = stat(out, &st) == 0 ? (uint64_t)st.st_size : 0;
            if (!strcmp(f[i].args[1], "jfr"))
                last_line(err, f[i].report, sizeof f[i].report);
            unlink(out);
        }
    unlink(err);
    double base = 0, base_cpu = 0;
    for (int i = 0; i < nf; i++) {
        qsort(f[i].t, (size_t)runs, sizeof f[i].t[0], cmp_double);
        qsort(f[i].cpu, (size_t)runs, sizeof f[i].cpu[0], cmp_double);
        double med = f[i].t[runs / 2], cpu = f[i].cpu[runs / 2];
        if (i == 0)
            base = med, base_cpu = cpu;
        printf("%-22s samples_s %10.0f   mb_s %6.1f   seconds %6.2f (x%.2f)   cpu_s %6.2f "
               "(x%.2f)   peak_rss_mb %6.1f   out_mb %6.1f (x%.3f of the input)\n",
               f[i].label, (double)samples / med, mb / med, med, med / base, cpu, cpu / base_cpu,
               (double)f[i].rss_kb / 1024.0, (double)f[i].out_bytes / 1e6,
               (double)f[i].out_bytes / 1e6 / mb);
        if (f[i].report[0])
            printf("%-22s %s\n", "", f[i].report);
    }
}

/* Remove the files of directory d (not its subdirectories), and d if asked. */
static void clean_dir(const char *d, int remove_dir)
{
    DIR *dp = opendir(d);
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        char p[PATH_MAX + 300];
        snprintf(p, sizeof p, "%s/%s", d, e->d_name);
        if (e->d_name[0] != '.')
            unlink(p);
    }
    if (dp)
        closedir(dp);
    if (remove_dir)
        rmdir(d);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_convert [--quick] [--all] [--mb N] [--threads N] "
                    "[--stacks N] [--runs N] [--cpp PCT] [--dir DIR] [--keep] "
                    "[--ringprof PATH]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *userdir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick"))
            target_mb = 10, runs = 1;
        else if (!strcmp(a, "--all"))
            all = 1;
        else if (!strcmp(a, "--keep"))
            keep = 1;
        else if (!strcmp(a, "--mb") && v)
            target_mb = atof(argv[++i]);
        else if (!strcmp(a, "--threads") && v)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(a, "--stacks") && v)
            nstacks = atoi(argv[++i]);
        else if (!strcmp(a, "--runs") && v)
            runs = atoi(argv[++i]);
        else if (!strcmp(a, "--cpp") && v)
            cpp_pct = atoi(argv[++i]);
        else if (!strcmp(a, "--dir") && v)
            userdir = argv[++i];
        else if (!strcmp(a, "--ringprof") && v)
            snprintf(ringprof, sizeof ringprof, "%s", argv[++i]);
        else
            usage();
    }
    if (nthreads < 1 || nstacks < 2 || runs < 1 || runs > MAXRUNS || target_mb <= 0 ||
        cpp_pct < 0 || cpp_pct > 100)
        usage();
    if (!ringprof[0]) {
        char self[PATH_MAX - 32];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            usage();
        self[n] = 0;
        char *slash = strrchr(self, '/');
        *slash = 0;
        snprintf(ringprof, sizeof ringprof, "%s/../tools/ringprof", self);
    }
    if (access(ringprof, X_OK) != 0) {
        fprintf(stderr, "bench_convert: %s: %s (use --ringprof PATH)\n", ringprof,
                strerror(errno));
        return 1;
    }
    if (userdir) {
        snprintf(dir, sizeof dir, "%s", userdir);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            perror(dir);
            return 1;
        }
    } else {
        snprintf(dir, sizeof dir, "/tmp/bench_convert.XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            return 1;
        }
    }

    make_stacks();
    double t0 = now();
    uint64_t samples = write_recording();
    double mb = (double)dir_bytes() / 1e6;
    printf("recording              %.1f MB in %s: %llu samples, %d threads, %d stacks "
           "(Zipf 1.1, depth 20-60), written in %.1f s\n", mb, dir,
           (unsigned long long)samples, nthreads, nstacks, now() - t0);
    printf("convert                %s, median of %d run%s\n", ringprof, runs,
           runs == 1 ? "" : "s");

    struct format f[] = {
        {"collapsed", {"--format", "collapsed", NULL}},
        {"pprof", {"--format", "pprof", NULL}},
        {"jfr", {"--format", "jfr", NULL}},
        {"collapsed --per-thread", {"--format", "collapsed", "--per-thread", NULL}},
        {"collapsed --lines", {"--format", "collapsed", "--lines", NULL}},
        {"tree", {"--format", "tree", NULL}},
        {"flat", {"--format", "flat", NULL}},
    };
    char outdir[] = "/tmp/bench_convert_out.XXXXXX";
    if (!mkdtemp(outdir)) {
        perror("mkdtemp");
        return 1;
    }
    bench_formats(f, all ? (int)(sizeof f / sizeof f[0]) : 3, samples, mb, outdir);
    rmdir(outdir);

    if (!keep)
        clean_dir(dir, !userdir);
    return 0;
}
