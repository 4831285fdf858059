/*
 * tests/convert/rp_bigwriter.c — recordings that stress the pprof and html writers
 * where rp_testwriter does not: hostile names and sheer size.
 *
 * usage: rp_bigwriter names OUT     OUT is a chunk file whose method names hold
 *                                   "</script>", quotes, "<!--", '&', U+2028,
 *                                   bytes that are not UTF-8 (in a native frame of
 *                                   library "[vm stub]"), and one stack 3000
 *                                   frames deep.
 *        rp_bigwriter wide OUT N    OUT is a chunk file with N distinct call paths
 *                                   (a tree four levels deep, so about 1.06 N
 *                                   nodes), one sample each.
 *        rp_bigwriter jit OUT      OUT is a chunk file shaped like the quick start's
 *                                   profile: shallow Java stacks hold most of the
 *                                   weight, a JIT compiler thread's C++ stack is
 *                                   JIT_DEPTH (150) frames deep.
 *        rp_bigwriter weights OUT  OUT is a chunk file of 1000 cpu samples at a
 *                                   10 ms interval whose weights are anything from
 *                                   a tenth of an interval to 25 intervals, as the
 *                                   jvmti engine's and timer overruns are.
 *
 * Everything is fixed (times, ids, weights), so the converters' outputs are too.
 * "names" weighs: 40 samples of 10 ms on the script-name stack, 30 on the quote
 * stack, 20 on the invalid-UTF-8 stack, 10 on the deep stack (100 in all). Every
 * sample of "wide" weighs 1 ms. "jit" weighs: 50 samples of 10 ms on
 * Thread.run > app.Billing.handle > app.Parse.parse, 30 on ... > app.Hash.sha,
 * 20 on the compiler stack (100 in all; root-most frame "thread_native_entry",
 * leaf "Compile::Code_Gen"). "weights": sample k (0..999) is at k ms, on thread
 * k / 4 % 3 (tids 301..303, "w0".."w2"), on stack k % 4 (app.Root.run >
 * app.Work.sN, N = k % 4), and weighs 100 us * (1 + k * 7919 % 250).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/chunk.h"

#define WALL0 1795240923000000000ull   /* 2026-11-21T06:02:03Z */
#define MONO0 1000000000000ull
#define MS    1000000ull

static void die(const char *what)
{
    fprintf(stderr, "rp_bigwriter: %s: %s\n", what, strerror(errno ? errno : EINVAL));
    exit(1);
}

static struct rp_chunk_writer *open_chunk(const char *path)
{
    const struct rp_kv meta[] = {
        {RP_META_PID, "300"},           {RP_META_HOST, "hostC"},
        {RP_META_RECORDING, "rec-C"},   {RP_META_START_WALL, "1795240923000000000"},
        {RP_META_START_MONO, "1000000000000"}, {RP_META_JVM_NAME, "TestVM"},
        {RP_META_PRODUCER, "rp_bigwriter"},
    };
    char err[256];
    struct rp_chunk_writer *w =
        rp_chunk_writer_open(path, meta, sizeof meta / sizeof meta[0], err, sizeof err);
    if (!w) {
        fprintf(stderr, "rp_bigwriter: %s\n", err);
        exit(1);
    }
    return w;
}

static uint32_t frame(struct rp_chunk_writer *w, const char *klass, const char *name,
                      enum rp_frame_type type, uint32_t line)
{
    uint32_t k = rp_chunk_class(w, rp_chunk_cstring(w, klass));
    uint32_t m = rp_chunk_method(w, k, rp_chunk_cstring(w, name),
                                 rp_chunk_cstring(w, "()V"),
                                 rp_chunk_cstring(w, "X.java"), 0);
    uint32_t f = rp_chunk_frame(w, m, type, -1, line);
    if (!f)
        die("frame");
    return f;
}

/* n samples of `weight` on `stack`, one every 10 ms from *t. */
static void samples(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                    uint32_t stack, int n, uint64_t weight, uint64_t *t)
{
    for (int i = 0; i < n; i++, *t += 10 * MS)
        if (rp_chunk_sample(w, kind, thread, *t, stack, weight, NULL) != 0)
            die("sample");
}

static void write_names(const char *path)
{
    struct rp_chunk_writer *w = open_chunk(path);
    uint32_t kind = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t thr = rp_chunk_thread(w, 1, 301, 1, "</script><b>\"thread\"", RP_THREAD_JAVA,
                                   MONO0);
    uint32_t root = frame(w, "app.Root", "run", RP_FRAME_INTERPRETED, 1);
    uint32_t f[3];
    f[0] = frame(w, "app.Evil", "</script><script>alert(1)</script>", RP_FRAME_JIT, 2);
    f[1] = frame(w, "app.Evil", "say\"hi\"'<!--&amp;\xe2\x80\xa8", RP_FRAME_INLINED, 3);
    /* A native frame's class is its library; HotSpot's stubs' is "[vm stub]"
     * (src/code/codecache.h), which a JFR reader could take for an array. */
    f[2] = frame(w, "[vm stub]", "bad\xff\xfeutf8\xc3", RP_FRAME_NATIVE, 0);
    static const int n[3] = {40, 30, 20};
    uint64_t t = MONO0;
    for (int i = 0; i < 3; i++) {
        uint32_t frames[2] = {f[i], root};            /* leaf first */
        samples(w, kind, thr, rp_chunk_stack(w, frames, 2, 0), n[i], 10 * MS, &t);
    }
    /* A deep recursion: 3000 frames, leaf "app.Deep.bottom". */
    enum { DEEP = 3000 };
    static uint32_t deep[DEEP];
    deep[0] = frame(w, "app.Deep", "bottom", RP_FRAME_JIT, 9);
    for (int i = 1; i < DEEP - 1; i++)
        deep[i] = frame(w, "app.Deep", "recurse", RP_FRAME_JIT, 8);
    deep[DEEP - 1] = root;
    samples(w, kind, thr, rp_chunk_stack(w, deep, DEEP, 0), 10, 10 * MS, &t);
    if (rp_chunk_close(w) != 0)
        die("close");
}

static void write_wide(const char *path, long n)
{
    struct rp_chunk_writer *w = open_chunk(path);
    uint32_t kind = rp_chunk_kind(w, "cpu", "ns", MS, NULL, 0);
    uint32_t thr = rp_chunk_thread(w, 1, 301, 1, "main", RP_THREAD_JAVA, MONO0);
    /* Four levels with branching b, b^4 >= n: path i is its digits in base b. */
    long b = 2;
    while (b * b * b * b < n)
        b++;
    uint64_t t = MONO0;
    char klass[32], name[32];
    for (long i = 0; i < n; i++) {
        uint32_t frames[4];
        long x = i;
        for (int level = 3; level >= 0; level--, x /= b) {
            snprintf(klass, sizeof klass, "pkg.L%d", level);
            snprintf(name, sizeof name, "m%ld", x % b);
            frames[level] = frame(w, klass, name, (enum rp_frame_type)(level % 3),
                                  (uint32_t)(x % b) + 1);
        }
        /* frames[0] is the root-most level: the chunk wants the leaf first. */
        uint32_t leaf_first[4] = {frames[3], frames[2], frames[1], frames[0]};
        samples(w, kind, thr, rp_chunk_stack(w, leaf_first, 4, 0), 1, MS, &t);
    }
    if (rp_chunk_close(w) != 0)
        die("close");
}

static void write_jit(const char *path)
{
    struct rp_chunk_writer *w = open_chunk(path);
    uint32_t kind = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t thr = rp_chunk_thread(w, 1, 301, 1, "main", RP_THREAD_JAVA, MONO0);
    uint32_t run = frame(w, "java.lang.Thread", "run", RP_FRAME_INTERPRETED, 1);
    uint32_t handle = frame(w, "app.Billing", "handle", RP_FRAME_JIT, 2);
    uint32_t parse = frame(w, "app.Parse", "parse", RP_FRAME_JIT, 3);
    uint32_t sha = frame(w, "app.Hash", "sha", RP_FRAME_INLINED, 4);
    uint64_t t = MONO0;
    uint32_t p[3] = {parse, handle, run}, h[3] = {sha, handle, run};   /* leaf first */
    samples(w, kind, thr, rp_chunk_stack(w, p, 3, 0), 50, 10 * MS, &t);
    samples(w, kind, thr, rp_chunk_stack(w, h, 3, 0), 30, 10 * MS, &t);
    /* C2 optimising a method: phase after phase, each a C++ frame. */
    enum { JIT_DEPTH = 150 };
    uint32_t deep[JIT_DEPTH];
    char name[48];
    deep[0] = frame(w, "", "Compile::Code_Gen", RP_FRAME_CPP, 0);
    for (int i = 1; i < JIT_DEPTH - 1; i++) {
        snprintf(name, sizeof name, "PhaseIdealLoop::phase%d", i);
        deep[i] = frame(w, "", name, RP_FRAME_CPP, 0);
    }
    deep[JIT_DEPTH - 1] = frame(w, "", "thread_native_entry", RP_FRAME_NATIVE, 0);
    uint32_t cthr = rp_chunk_thread(w, 2, 302, 0, "C2 CompilerThread0", RP_THREAD_DAEMON, MONO0);
    samples(w, kind, cthr, rp_chunk_stack(w, deep, JIT_DEPTH, 0), 20, 10 * MS, &t);
    if (rp_chunk_close(w) != 0)
        die("close");
}

static void write_weights(const char *path)
{
    struct rp_chunk_writer *w = open_chunk(path);
    uint32_t kind = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t thr[3], stack[4];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "w%d", i);
        thr[i] = rp_chunk_thread(w, (uint32_t)i + 1, 301 + (uint64_t)i, 1 + (uint64_t)i, name,
                                 RP_THREAD_JAVA, MONO0);
    }
    uint32_t root = frame(w, "app.Root", "run", RP_FRAME_INTERPRETED, 1);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", i);
        uint32_t frames[2] = {frame(w, "app.Work", name, RP_FRAME_JIT, 2 + (uint32_t)i), root};
        stack[i] = rp_chunk_stack(w, frames, 2, 0);
    }
    for (uint64_t k = 0; k < 1000; k++)
        if (rp_chunk_sample(w, kind, thr[k / 4 % 3], MONO0 + k * MS, stack[k % 4],
                            100000u * (1 + k * 7919 % 250), NULL) != 0)
            die("sample");
    if (rp_chunk_close(w) != 0)
        die("close");
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "weights")) {
        write_weights(argv[2]);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "names")) {
        write_names(argv[2]);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "jit")) {
        write_jit(argv[2]);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "wide")) {
        long n = strtol(argv[3], NULL, 10);
        if (n < 1 || n > 10000000)
            die("N out of range");
        write_wide(argv[2], n);
        return 0;
    }
    fprintf(stderr, "usage: rp_bigwriter names OUT | rp_bigwriter jit OUT | "
                    "rp_bigwriter weights OUT | rp_bigwriter wide OUT N\n");
    return 2;
}
