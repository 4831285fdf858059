/*
 * tests/convert/rp_testwriter.c — deterministic recordings for the converter tests.
 *
 * usage: rp_testwriter VARIANT OUT [--manifest FILE]
 *
 *   VARIANT main   OUT is a chunk file: recording "rec-A" (pid 100, host hostA),
 *                  100 cpu samples and 16 alloc samples, 4 segments.
 *           other  OUT is a chunk file: recording "rec-B" (pid 200, host hostB),
 *                  13 cpu samples, some on stacks rec-A also has.
 *           split  OUT is a directory (created): rec-A's samples exactly, in two
 *                  chunks (chunk.seq 0 and 1, the second opened 5 s later, with
 *                  its own ids) and a segment every 7 samples.
 *   --manifest FILE  also write, as JSON, every sample written (wall-clock time,
 *                  thread tid and name, kind, weight, objects, class, stack index) and
 *                  every stack (truncated flag, frames root first with class,
 *                  name, file, type, line, bci), so a test can compute what a
 *                  correct converter must print without trusting the converter.
 *
 * Everything is fixed: rec-A's chunk starts at 2026-11-21T06:02:03Z (wall) and
 * 1000 s (monotonic); sample k is at +k*100 ms; rec-B starts 27 s later. Content:
 *   - threads main (tid 101), worker-1 (102), worker-2 (103, first named
 *     "pool-1-thread-2" and renamed before its first sample), "GC Thread#0" (104,
 *     not a Java thread);
 *   - kind cpu (unit ns, period 10 ms): 100 samples, one of them weighing 20 ms;
 *   - kind alloc (unit bytes, period 512 KiB, extras class, size, objects): 16
 *     samples over 4 classes, 8 MiB in all;
 *   - stacks with recursion (fib three deep), a truncated stack, a failed walk
 *     (marker frame "[agct:gc_active]"), an empty stack, native (libc), C++
 *     (libjvm), kernel, inlined, interpreted and JIT frames, the same method at
 *     two lines, frames with and without line and bci, and a method name holding
 *     ';' and a newline;
 *   - counters lost.ring_full 3 and lost.nested 1, per-thread CPU times, a gauge.
 * The tables below are the truth the tests check against.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ringprof/chunk.h"

#define WALL0  1795240923000000000ull   /* 2026-11-21T06:02:03Z */
#define MONO0  1000000000000ull
#define STEP   100000000ull             /* 100 ms between samples */
#define MS     1000000ull

/* ------------------------------------------------------------- frames -- */

struct fdef {
    const char *klass, *name, *file;
    enum rp_frame_type type;
    int32_t bci;        /* -1: none */
    uint32_t line;      /* 0: unknown */
    uint32_t mflags;
};

enum {
    F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_42, F_HANDLE_57, F_PARSE_7, F_PARSE_INL,
    F_MAIN, F_FIB_5, F_FIB_6, F_HASH, F_ARRAYCOPY, F_MEMCPY, F_WRITE0, F_SYSWRITE,
    F_GC_MARKER, F_CALLHELPER, F_ODD, F_BONLY, F_COUNT
};

static const struct fdef frames[F_COUNT] = {
    [F_THREAD_RUN] = {"java.lang.Thread", "run", "Thread.java", RP_FRAME_INTERPRETED, 11, 833, 0},
    [F_WORKER_RUN] = {"app.Worker", "run", "Worker.java", RP_FRAME_JIT, 5, 10, 0},
    [F_HANDLE_42]  = {"app.Server", "handle", "Server.java", RP_FRAME_JIT, 12, 42, 0},
    [F_HANDLE_57]  = {"app.Server", "handle", "Server.java", RP_FRAME_JIT, 20, 57, 0},
    [F_PARSE_7]    = {"app.Json", "parse", "Json.java", RP_FRAME_JIT, 3, 7, 0},
    [F_PARSE_INL]  = {"app.Json", "parse", "Json.java", RP_FRAME_INLINED, 4, 9, 0},
    [F_MAIN]       = {"app.Main", "main", "Main.java", RP_FRAME_INTERPRETED, 0, 3, 0},
    [F_FIB_5]      = {"app.Math", "fib", "Math.java", RP_FRAME_JIT, 2, 5, 0},
    [F_FIB_6]      = {"app.Math", "fib", "Math.java", RP_FRAME_JIT, 9, 6, 0},
    [F_HASH]       = {"app.Crypto", "hash", "Crypto.java", RP_FRAME_JIT, 17, 88, 0},
    [F_ARRAYCOPY]  = {"java.lang.System", "arraycopy", "", RP_FRAME_JIT, -1, 0,
                      RP_METHOD_NATIVE},
    [F_MEMCPY]     = {"libc.so.6", "__memcpy_avx_unaligned", "", RP_FRAME_NATIVE, -1, 0, 0},
    [F_WRITE0]     = {"java.io.FileOutputStream", "writeBytes", "FileOutputStream.java",
                      RP_FRAME_INTERPRETED, 7, 0, RP_METHOD_NATIVE},
    [F_SYSWRITE]   = {"", "ksys_write", "", RP_FRAME_KERNEL, -1, 0, 0},
    [F_GC_MARKER]  = {"", "[agct:gc_active]", "", RP_FRAME_MARKER, -1, 0, 0},
    [F_CALLHELPER] = {"libjvm.so", "JavaCalls::call_helper", "", RP_FRAME_CPP, -1, 0, 0},
    [F_ODD]        = {"app.Odd", "weird;name\nx", "Odd.java", RP_FRAME_INTERPRETED, 1, 2, 0},
    [F_BONLY]      = {"app.B", "only", "B.java", RP_FRAME_JIT, 0, 3, 0},
};

/* ------------------------------------------------------------- stacks -- */

#define MAXF 8
struct sdef {
    int truncated, error;
    int n;
    int f[MAXF];        /* root first */
};

enum { S1, S2, S3, S4, S5, S6, S7, S8, S9, S10, S_COUNT };

static const struct sdef stacks[S_COUNT] = {
    [S1] = {0, 0, 4, {F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_42, F_PARSE_7}},
    [S2] = {0, 0, 4, {F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_57, F_PARSE_INL}},
    [S3] = {0, 0, 4, {F_MAIN, F_FIB_5, F_FIB_6, F_FIB_6}},
    [S4] = {0, 0, 5, {F_THREAD_RUN, F_WORKER_RUN, F_HASH, F_ARRAYCOPY, F_MEMCPY}},
    [S5] = {0, 0, 5, {F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_42, F_WRITE0, F_SYSWRITE}},
    [S6] = {1, 0, 2, {F_HANDLE_42, F_PARSE_7}},
    [S7] = {0, 1, 1, {F_GC_MARKER}},
    [S8] = {0, 0, 3, {F_CALLHELPER, F_MAIN, F_ODD}},
    [S9] = {0, 0, 0, {0}},
    [S10] = {0, 0, 3, {F_THREAD_RUN, F_WORKER_RUN, F_BONLY}},
};

/* ------------------------------------------------------------ samples -- */

enum { T_MAIN, T_W1, T_W2, T_GC, T_COUNT };
static const struct {
    const char *name;
    uint64_t tid, java_tid;
    uint32_t flags;
} threads_a[T_COUNT] = {
    [T_MAIN] = {"main", 101, 1, RP_THREAD_JAVA},
    [T_W1]   = {"worker-1", 102, 12, RP_THREAD_JAVA},
    [T_W2]   = {"worker-2", 103, 13, RP_THREAD_JAVA | RP_THREAD_DAEMON},
    [T_GC]   = {"GC Thread#0", 104, 0, 0},
};

struct group {
    int alloc;          /* 0: cpu, 1: alloc */
    int thread, stack, count;
    uint64_t weight;
    const char *klass;  /* alloc: class, size, objects */
    uint64_t size, objects;
};

static const struct group groups_a[] = {
    {0, T_W1, S1, 30, 10 * MS, NULL, 0, 0},
    {0, T_W2, S1, 20, 10 * MS, NULL, 0, 0},
    {0, T_W1, S2, 10, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S3, 8, 10 * MS, NULL, 0, 0},
    {0, T_W2, S4, 14, 10 * MS, NULL, 0, 0},
    {0, T_W2, S4, 1, 20 * MS, NULL, 0, 0},
    {0, T_W1, S4, 5, 10 * MS, NULL, 0, 0},
    {0, T_W1, S5, 3, 10 * MS, NULL, 0, 0},
    {0, T_W1, S6, 2, 10 * MS, NULL, 0, 0},
    {0, T_GC, S7, 2, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S8, 4, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S9, 1, 10 * MS, NULL, 0, 0},
    {1, T_W1, S1, 6, 524288, "byte[]", 1024, 512},
    {1, T_W2, S4, 3, 524288, "java.lang.String", 24, 21845},
    {1, T_W1, S2, 2, 1048576, "byte[]", 4096, 256},
    {1, T_MAIN, S3, 1, 524288, "int[]", 64, 8192},
    {1, T_W2, S1, 4, 262144, "app.Json$Node", 32, 8192},
};

/* rec-B: main and worker-1 with their own tids. */
static const struct {
    const char *name;
    uint64_t tid, java_tid;
    uint32_t flags;
} threads_b[2] = {
    {"main", 201, 1, RP_THREAD_JAVA},
    {"worker-1", 202, 12, RP_THREAD_JAVA},
};

static const struct group groups_b[] = {
    {0, 0, S3, 2, 10 * MS, NULL, 0, 0},
    {0, 1, S1, 7, 10 * MS, NULL, 0, 0},
    {0, 1, S10, 4, 10 * MS, NULL, 0, 0},
};

/* -------------------------------------------------------------- writer -- */

static void die(const char *what)
{
    fprintf(stderr, "rp_testwriter: %s: %s\n", what, strerror(errno));
    exit(1);
}

struct out {
    struct rp_chunk_writer *w;
    uint32_t kcpu, kalloc;
};

static struct out open_chunk(const char *path, const char *rec, const char *pid,
                             const char *host, uint64_t wall, uint64_t mono, int seq)
{
    char w[32], m[32], s[16];
    snprintf(w, sizeof w, "%llu", (unsigned long long)wall);
    snprintf(m, sizeof m, "%llu", (unsigned long long)mono);
    snprintf(s, sizeof s, "%d", seq);
    const struct rp_kv meta[] = {
        {RP_META_PID, pid},
        {RP_META_HOST, host},
        {RP_META_RECORDING, rec},
        {RP_META_CHUNK_SEQ, s},
        {RP_META_START_WALL, w},
        {RP_META_START_MONO, m},
        {RP_META_JVM_NAME, "TestVM"},
        {RP_META_OPTIONS, "interval=10ms,alloc=512k"},
        {RP_META_PRODUCER, "rp_testwriter"},
    };
    char err[256];
    struct out o;
    o.w = rp_chunk_writer_open(path, meta, sizeof meta / sizeof meta[0], err, sizeof err);
    if (!o.w) {
        fprintf(stderr, "rp_testwriter: %s\n", err);
        exit(1);
    }
    static const char *const alloc_extra[] = {"class", "size", "objects"};
    o.kcpu = rp_chunk_kind(o.w, "cpu", "ns", 10 * MS, NULL, 0);
    o.kalloc = rp_chunk_kind(o.w, "alloc", "bytes", 524288, alloc_extra, 3);
    if (!o.kcpu || !o.kalloc)
        die("kind");
    return o;
}

static uint32_t put_frame(struct rp_chunk_writer *w, int f)
{
    const struct fdef *d = &frames[f];
    uint32_t k = rp_chunk_class(w, rp_chunk_cstring(w, d->klass));
    uint32_t m = rp_chunk_method(w, k, rp_chunk_cstring(w, d->name), rp_chunk_cstring(w, "()V"),
                                 rp_chunk_cstring(w, d->file), d->mflags);
    uint32_t id = rp_chunk_frame(w, m, d->type, d->bci, d->line);
    if (!id)
        die("frame");
    return id;
}

static uint32_t put_stack(struct rp_chunk_writer *w, int s)
{
    const struct sdef *d = &stacks[s];
    uint32_t ids[MAXF];
    for (int i = 0; i < d->n; i++)
        ids[d->n - 1 - i] = put_frame(w, d->f[i]);   /* the chunk wants leaf first */
    uint32_t flags = (d->truncated ? RP_STACK_TRUNCATED : 0) | (d->error ? RP_STACK_ERROR : 0);
    uint32_t id = rp_chunk_stack(w, ids, (uint32_t)d->n, flags);
    if (!id)
        die("stack");
    return id;
}

static FILE *manifest;
static int first_sample = 1;

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void manifest_sample(uint64_t wall, const char *thread, uint64_t tid,
                            const struct group *g)
{
    if (!manifest)
        return;
    fprintf(manifest, "%s\n  {\"t\": %llu, \"tid\": %llu, \"thread\": ",
            first_sample ? "" : ",", (unsigned long long)wall, (unsigned long long)tid);
    json_str(manifest, thread);
    fprintf(manifest, ", \"kind\": \"%s\", \"weight\": %llu, \"objects\": %llu, \"class\": ",
            g->alloc ? "alloc" : "cpu", (unsigned long long)g->weight,
            (unsigned long long)g->objects);
    if (g->klass)
        json_str(manifest, g->klass);
    else
        fputs("null", manifest);
    fprintf(manifest, ", \"stack\": %d}", g->stack);
    first_sample = 0;
}

static void manifest_end(const char *rec)
{
    if (!manifest)
        return;
    fprintf(manifest, "\n], \"recording\": \"%s\", \"stacks\": [", rec);
    for (int s = 0; s < S_COUNT; s++) {
        fprintf(manifest, "%s\n  {\"truncated\": %d, \"frames\": [", s ? "," : "",
                stacks[s].truncated);
        for (int i = 0; i < stacks[s].n; i++) {
            const struct fdef *d = &frames[stacks[s].f[i]];
            fputs(i ? ", {\"class\": " : "{\"class\": ", manifest);
            json_str(manifest, d->klass);
            fputs(", \"name\": ", manifest);
            json_str(manifest, d->name);
            fputs(", \"file\": ", manifest);
            json_str(manifest, d->file);
            fprintf(manifest, ", \"type\": %d, \"line\": %u, \"bci\": %d}", (int)d->type,
                    d->line, d->bci);
        }
        fputs("]}", manifest);
    }
    fputs("\n]}\n", manifest);
    if (fclose(manifest) != 0)
        die("manifest");
}

/* Write rec-A. split: chunk boundary after sample 50, a segment every 7 samples. */
static void write_a(const char *out, int split)
{
    char path[4096];
    if (split) {
        if (mkdir(out, 0755) != 0 && errno != EEXIST)
            die(out);
        snprintf(path, sizeof path, "%s/20261121T060203Z-100-0.rpc", out);
    } else {
        snprintf(path, sizeof path, "%s", out);
    }
    struct out o = open_chunk(path, "rec-A", "100", "hostA", WALL0, MONO0, 0);
    /* worker-2 starts life under the pool's name and is renamed before it runs. */
    uint32_t t2_early = rp_chunk_thread(o.w, T_W2, 103, 13, "pool-1-thread-2",
                                        RP_THREAD_JAVA | RP_THREAD_DAEMON, MONO0);
    (void)t2_early;
    uint64_t k = 0;
    int flush_every = split ? 7 : 30;
    for (size_t gi = 0; gi < sizeof groups_a / sizeof groups_a[0]; gi++) {
        const struct group *g = &groups_a[gi];
        for (int i = 0; i < g->count; i++, k++) {
            if (split && k == 50) {
                rp_chunk_counter(o.w, "lost.ring_full", 3);
                if (rp_chunk_close(o.w) != 0)
                    die("close");
                snprintf(path, sizeof path, "%s/20261121T060208Z-100-1.rpc", out);
                o = open_chunk(path, "rec-A", "100", "hostA", WALL0 + 5000 * MS,
                               MONO0 + 5000 * MS, 1);
            }
            uint64_t mono = MONO0 + k * STEP;
            uint32_t t = rp_chunk_thread(o.w, (uint64_t)g->thread, threads_a[g->thread].tid,
                                         threads_a[g->thread].java_tid,
                                         threads_a[g->thread].name,
                                         threads_a[g->thread].flags, mono);
            uint32_t s = put_stack(o.w, g->stack);
            int rc;
            if (g->alloc) {
                uint64_t extra[3] = {rp_chunk_class(o.w, rp_chunk_cstring(o.w, g->klass)),
                                     g->size, g->objects};
                rc = rp_chunk_sample(o.w, o.kalloc, t, mono, s, g->weight, extra);
            } else {
                rc = rp_chunk_sample(o.w, o.kcpu, t, mono, s, g->weight, NULL);
            }
            if (rc != 0 || !t)
                die("sample");
            manifest_sample(WALL0 + k * STEP, threads_a[g->thread].name,
                            threads_a[g->thread].tid, g);
            if ((k + 1) % (uint64_t)flush_every == 0 && rp_chunk_flush(o.w) != 0)
                die("flush");
        }
    }
    if (!split)
        rp_chunk_counter(o.w, "lost.ring_full", 3);
    rp_chunk_counter(o.w, "lost.nested", 1);
    uint32_t tm = rp_chunk_thread(o.w, T_MAIN, 101, 1, "main", RP_THREAD_JAVA, MONO0 + k * STEP);
    rp_chunk_thread_cpu(o.w, tm, MONO0 + k * STEP, 130 * MS);
    rp_chunk_gauge(o.w, "rss", MONO0 + k * STEP, 123456789);
    if (rp_chunk_close(o.w) != 0)
        die("close");
    manifest_end("rec-A");
}

static void write_b(const char *out)
{
    const uint64_t wall0 = WALL0 + 27000 * MS, mono0 = MONO0 + 500000 * MS;
    struct out o = open_chunk(out, "rec-B", "200", "hostB", wall0, mono0, 0);
    uint64_t k = 0;
    for (size_t gi = 0; gi < sizeof groups_b / sizeof groups_b[0]; gi++) {
        const struct group *g = &groups_b[gi];
        for (int i = 0; i < g->count; i++, k++) {
            uint64_t mono = mono0 + k * STEP;
            uint32_t t = rp_chunk_thread(o.w, (uint64_t)g->thread, threads_b[g->thread].tid,
                                         threads_b[g->thread].java_tid,
                                         threads_b[g->thread].name,
                                         threads_b[g->thread].flags, mono);
            uint32_t s = put_stack(o.w, g->stack);
            if (!t || rp_chunk_sample(o.w, o.kcpu, t, mono, s, g->weight, NULL) != 0)
                die("sample");
            manifest_sample(wall0 + k * STEP, threads_b[g->thread].name,
                            threads_b[g->thread].tid, g);
        }
    }
    if (rp_chunk_close(o.w) != 0)
        die("close");
    manifest_end("rec-B");
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--manifest"))) {
        fprintf(stderr, "usage: rp_testwriter main|other|split OUT [--manifest FILE]\n");
        return 2;
    }
    if (argc == 5) {
        if (!(manifest = fopen(argv[4], "w")))
            die(argv[4]);
        fputs("{\"samples\": [", manifest);
    }
    if (!strcmp(argv[1], "main"))
        write_a(argv[2], 0);
    else if (!strcmp(argv[1], "split"))
        write_a(argv[2], 1);
    else if (!strcmp(argv[1], "other"))
        write_b(argv[2]);
    else {
        fprintf(stderr, "rp_testwriter: unknown variant '%s'\n", argv[1]);
        return 2;
    }
    return 0;
}
