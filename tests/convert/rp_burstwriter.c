/*
 * tests/convert/rp_burstwriter.c — a recording with a known burst, for the heatmap's
 * tests: one stack is hot only from t = 30 s to t = 40 s.
 *
 * usage: rp_burstwriter OUT MANIFEST
 *
 * OUT is one chunk file, recording "rec-H", 60 s from 2026-11-21T06:02:00Z
 * (wall), a segment a second:
 *   - threads worker-1 (tid 501) and worker-2 (502) each take a cpu sample every
 *     10 ms (unit ns, period 10 ms, weight 10 ms): worker-2 always on the four
 *     background stacks in turn (sample k on stack k % 4); worker-1 on the same
 *     background stacks, except for 30 s <= t < 40 s, where every one of its
 *     samples is on the burst stack (Thread.run > Worker.run > app.Report.render
 *     > app.Report.layout), which appears nowhere else;
 *   - worker-2 takes an alloc sample (byte[], 512 KiB) every 100 ms on stack 0;
 *   - a GC pause (kind gc) of 5 ms every 5 s, and 40 ms at 35 s;
 *   - gauges every second: proc.rss_bytes (100 MiB, 300 MiB from 30 s to 40 s)
 *     and proc.cpu_user_ns.total (1 CPU, 2 in the burst).
 * MANIFEST is JSON in rp_testwriter's manifest shape (consumers.py reads it):
 * "samples" [{t (wall ns), tid, thread, kind, weight, objects, class, stack}],
 * "stacks" [{truncated, frames [{class, name, type, ...}] root first}],
 * "recording", and "burst": {"from": wall ns, "to": wall ns, "stack": index}.
 * Everything is fixed, so the test's truth is too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"

#define WALL0 1795240920000000000ull   /* 2026-11-21T06:02:00Z */
#define MONO0 1000000000000ull
#define MS    1000000ull
#define SEC   1000000000ull
#define SECONDS 60
#define BURST_FROM (30 * SEC)
#define BURST_TO   (40 * SEC)

struct fdef {
    const char *klass, *name, *file;
    enum rp_frame_type type;
};

static const struct fdef frames[] = {
    {"java.lang.Thread", "run", "Thread.java", RP_FRAME_INTERPRETED},   /* 0 */
    {"app.Worker", "run", "Worker.java", RP_FRAME_JIT},                 /* 1 */
    {"app.Server", "handle", "Server.java", RP_FRAME_JIT},              /* 2 */
    {"app.Json", "parse", "Json.java", RP_FRAME_JIT},                   /* 3 */
    {"app.Crypto", "hash", "Crypto.java", RP_FRAME_JIT},                /* 4 */
    {"app.Db", "query", "Db.java", RP_FRAME_JIT},                       /* 5 */
    {"app.Cache", "get", "Cache.java", RP_FRAME_INLINED},               /* 6 */
    {"app.Report", "render", "Report.java", RP_FRAME_JIT},              /* 7 */
    {"app.Report", "layout", "Report.java", RP_FRAME_JIT},              /* 8 */
};

#define MAXF 5
static const struct {
    int n, f[MAXF];                     /* root first */
} stacks[] = {
    {4, {0, 1, 2, 3}},
    {4, {0, 1, 2, 4}},
    {4, {0, 1, 5, 6}},
    {3, {0, 1, 5}},
    {4, {0, 1, 7, 8}},                  /* the burst's */
};
#define NBACKGROUND 4
#define BURST_STACK 4
#define NSTACKS (int)(sizeof stacks / sizeof stacks[0])

static const struct {
    const char *name;
    uint64_t tid;
} threads[2] = {{"worker-1", 501}, {"worker-2", 502}};

static FILE *manifest;
static int first = 1;

static void die(const char *what)
{
    fprintf(stderr, "rp_burstwriter: %s: %s\n", what, strerror(errno ? errno : EINVAL));
    exit(1);
}

static void manifest_sample(uint64_t t, int th, const char *kind, uint64_t weight,
                            const char *klass, int stack)
{
    fprintf(manifest, "%s\n  {\"t\": %llu, \"tid\": %llu, \"thread\": \"%s\", \"kind\": "
            "\"%s\", \"weight\": %llu, \"objects\": %d, \"class\": %s%s%s, \"stack\": %d}",
            first ? "" : ",", (unsigned long long)(WALL0 + t),
            (unsigned long long)threads[th].tid, threads[th].name, kind,
            (unsigned long long)weight, klass ? 1 : 0, klass ? "\"" : "",
            klass ? klass : "null", klass ? "\"" : "", stack);
    first = 0;
}

static void manifest_end(void)
{
    fputs("\n], \"recording\": \"rec-H\", \"stacks\": [", manifest);
    for (int s = 0; s < NSTACKS; s++) {
        fprintf(manifest, "%s\n  {\"truncated\": 0, \"frames\": [", s ? "," : "");
        for (int i = 0; i < stacks[s].n; i++) {
            const struct fdef *d = &frames[stacks[s].f[i]];
            fprintf(manifest, "%s{\"class\": \"%s\", \"name\": \"%s\", \"file\": \"%s\", "
                    "\"type\": %d, \"line\": 0, \"bci\": -1}", i ? ", " : "", d->klass,
                    d->name, d->file, (int)d->type);
        }
        fputs("]}", manifest);
    }
    fprintf(manifest, "\n], \"burst\": {\"from\": %llu, \"to\": %llu, \"stack\": %d}}\n",
            (unsigned long long)(WALL0 + BURST_FROM), (unsigned long long)(WALL0 + BURST_TO),
            BURST_STACK);
    if (fclose(manifest) != 0)
        die("manifest");
}

static uint32_t put_stack(struct rp_chunk_writer *w, int s)
{
    uint32_t ids[MAXF];
    int n = stacks[s].n;
    for (int i = 0; i < n; i++) {
        const struct fdef *d = &frames[stacks[s].f[i]];
        uint32_t k = rp_chunk_class(w, rp_chunk_cstring(w, d->klass));
        uint32_t m = rp_chunk_method(w, k, rp_chunk_cstring(w, d->name),
                                     rp_chunk_cstring(w, "()V"), rp_chunk_cstring(w, d->file),
                                     0);
        ids[n - 1 - i] = rp_chunk_frame(w, m, d->type, -1, 0);   /* leaf first */
    }
    uint32_t id = rp_chunk_stack(w, ids, (uint32_t)n, 0);
    if (!id)
        die("stack");
    return id;
}

struct kinds {
    uint32_t cpu, alloc, gc;
};

static void one_ms_step(struct rp_chunk_writer *w, const struct kinds *k, const uint32_t *th,
                        uint64_t ms)
{
    uint64_t t = ms * MS, mono = MONO0 + t;
    uint64_t n = ms / 10;
    if (ms % 10 == 0)
        for (int i = 0; i < 2; i++) {
            int s = i == 0 && t >= BURST_FROM && t < BURST_TO ? BURST_STACK
                                                             : (int)(n % NBACKGROUND);
            if (rp_chunk_sample(w, k->cpu, th[i], mono, put_stack(w, s), 10 * MS, NULL))
                die("cpu sample");
            manifest_sample(t, i, "cpu", 10 * MS, NULL, s);
        }
    if (ms % 100 == 0) {
        uint64_t x[3] = {rp_chunk_class(w, rp_chunk_cstring(w, "byte[]")), 4096, 128};
        if (rp_chunk_sample(w, k->alloc, th[1], mono, put_stack(w, 0), 524288, x))
            die("alloc sample");
        manifest_sample(t, 1, "alloc", 524288, "byte[]", 0);
    }
    if (ms % 5000 == 2500 || ms == 35000) {
        uint64_t pause = ms == 35000 ? 40 * MS : 5 * MS, x[3] = {0, 0, ms / 2500};
        if (rp_chunk_sample(w, k->gc, 0, mono, 0, pause, x))
            die("gc sample");
    }
}

static void gauges(struct rp_chunk_writer *w, uint64_t s)
{
    int burst = s * SEC >= BURST_FROM && s * SEC < BURST_TO;
    static uint64_t cpu;
    if (rp_chunk_gauge(w, RP_GAUGE_RSS, MONO0 + s * SEC, (burst ? 300ull : 100ull) << 20) ||
        rp_chunk_gauge(w, RP_GAUGE_CPU_USER, MONO0 + s * SEC, cpu))
        die("gauge");
    cpu += (burst ? 2 : 1) * SEC;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rp_burstwriter OUT MANIFEST\n");
        return 2;
    }
    if (!(manifest = fopen(argv[2], "w")))
        die(argv[2]);
    fputs("{\"samples\": [", manifest);
    char wall[32], mono[32], err[256];
    snprintf(wall, sizeof wall, "%llu", WALL0);
    snprintf(mono, sizeof mono, "%llu", MONO0);
    const struct rp_kv meta[] = {
        {RP_META_PID, "500"},          {RP_META_HOST, "hostH"},
        {RP_META_RECORDING, "rec-H"},  {RP_META_START_WALL, wall},
        {RP_META_START_MONO, mono},    {RP_META_JVM_NAME, "TestVM"},
        {RP_META_JVM_MAIN, "app.BurstMain"},
        {RP_META_OPTIONS, "interval=10ms,alloc=512k,telemetry=1s"},
        {RP_META_PRODUCER, "rp_burstwriter"},
    };
    struct rp_chunk_writer *w = rp_chunk_writer_open(argv[1], meta, sizeof meta / sizeof meta[0],
                                                     err, sizeof err);
    if (!w) {
        fprintf(stderr, "rp_burstwriter: %s\n", err);
        return 1;
    }
    static const char *const alloc_x[] = {RP_X_CLASS, RP_X_SIZE, RP_X_OBJECTS};
    static const char *const gc_x[] = RP_GC_EXTRA_NAMES;
    struct kinds k = {rp_chunk_kind(w, RP_KIND_CPU, RP_UNIT_NS, 10 * MS, NULL, 0),
                      rp_chunk_kind(w, RP_KIND_ALLOC, RP_UNIT_BYTES, 524288, alloc_x, 3),
                      rp_chunk_kind(w, RP_KIND_GC, RP_UNIT_NS, 0, gc_x, 3)};
    uint32_t th[2];
    for (int i = 0; i < 2; i++)
        th[i] = rp_chunk_thread(w, (uint64_t)i + 1, threads[i].tid, (uint64_t)i + 20,
                                threads[i].name, RP_THREAD_JAVA, MONO0);
    if (!k.cpu || !k.alloc || !k.gc || !th[0] || !th[1])
        die("records");
    for (uint64_t ms = 0; ms < SECONDS * 1000; ms++) {
        if (ms % 1000 == 0)
            gauges(w, ms / 1000);
        one_ms_step(w, &k, th, ms);
        if (ms % 1000 == 999 && rp_chunk_flush(w) != 0)
            die("flush");
    }
    if (rp_chunk_close(w) != 0)
        die("close");
    manifest_end();
    return 0;
}
