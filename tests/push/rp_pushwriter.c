/*
 * tests/push/rp_pushwriter.c — chunks for the `ringprof push` tests, written as
 * the agent writes them: into DIR as "<name>.rpc.part", then renamed to the
 * finished name (ringprof/recording.h), one chunk per call.
 *
 * usage: rp_pushwriter DIR SEQ [--recording ID] [--pid PID] [--kinds LIST]
 *                      [--part] [--seconds N] [--service S] [--labels L]
 *                      [--main M] [--at SECONDS]
 *
 *   SEQ          chunk.seq; the chunk covers N seconds (default 60) starting at
 *                2026-11-21T06:00:00Z + SEQ * N s (wall) and 1000 s + SEQ * N s
 *                (monotonic), so the chunks of one recording follow each other
 *   --recording  recording.id (default "4242-20261121T060000Z-00000000000000f1")
 *   --pid        the pid in the name and header (default 4242)
 *   --kinds      what it holds, from cpu, alloc, wall, live (default cpu,alloc)
 *   --part       leave it as .rpc.part (a chunk still being written); print its
 *                finished name, so the test can rename it later
 *   --at         the chunk starts SECONDS after 06:00:00Z (and 1000 s + SECONDS
 *                monotonic) instead of SEQ * N s: a later JVM's chunk under a
 *                recording id it reuses (the agent's recording=)
 *   --service, --labels, --main  the header's service.name, labels (the
 *                agent's "KEY:VALUE;..." text) and jvm.main, as the agent's
 *                service=, labels= and the JVM's main class set them
 *
 * Content (every figure depends on SEQ, so the chunks of a recording differ and
 * a test can tell which one a backend got): two threads, main and worker;
 *   - cpu (ns, period 10 ms): a sample every 0.5 s, on three stacks under the
 *     root frame push.Chunk<SEQ>.run, weight 10 ms x (1 + i % 3) + SEQ us;
 *   - alloc (bytes): a sample every 5 s, two classes;
 *   - wall (ns): a sample a second per thread, states running and parked;
 *   - live: two snapshots (at 20 s and 50 s), the second with more objects.
 * `ringprof convert` of the chunk is the test's truth; nothing here is read
 * back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"
#include "ringprof/recording.h"

#define WALL0 1795240800000000000ull   /* 2026-11-21T06:00:00Z */
#define MONO0 1000000000000ull
#define SEC   1000000000ull
#define MS    1000000ull

static void die(const char *what)
{
    fprintf(stderr, "rp_pushwriter: %s: %s\n", what, strerror(errno));
    exit(1);
}

struct w {
    struct rp_chunk_writer *cw;
    uint64_t mono0;
    unsigned seq;
    uint32_t tmain, tworker;
};

static uint32_t frame(struct w *w, const char *klass, const char *name, int type,
                      uint32_t line)
{
    uint32_t k = rp_chunk_class(w->cw, rp_chunk_cstring(w->cw, klass));
    uint32_t m = rp_chunk_method(w->cw, k, rp_chunk_cstring(w->cw, name),
                                 rp_chunk_cstring(w->cw, "()V"),
                                 rp_chunk_cstring(w->cw, "Push.java"), 0);
    uint32_t f = rp_chunk_frame(w->cw, m, (enum rp_frame_type)type, 7, line);
    if (!f)
        die("frame");
    return f;
}

/* Stack `s` of three, leaf first, under push.Chunk<seq>.run. */
static uint32_t stack(struct w *w, int s)
{
    char root[64];
    snprintf(root, sizeof root, "push.Chunk%u", w->seq);
    static const char *const leaves[] = {"parse", "hash", "write"};
    uint32_t ids[3];
    ids[0] = frame(w, "push.Work", leaves[s], s == 1 ? RP_FRAME_INLINED : RP_FRAME_JIT,
                   10 + (uint32_t)s);
    ids[1] = frame(w, "push.Work", "handle", RP_FRAME_JIT, 5);
    ids[2] = frame(w, root, "run", RP_FRAME_INTERPRETED, 1);
    uint32_t id = rp_chunk_stack(w->cw, ids, 3, 0);
    if (!id)
        die("stack");
    return id;
}

static void threads(struct w *w, uint64_t t)
{
    w->tmain = rp_chunk_thread(w->cw, 1, 101, 1, "main", RP_THREAD_JAVA, t);
    w->tworker = rp_chunk_thread(w->cw, 2, 102, 12, "worker", RP_THREAD_JAVA, t);
    if (!w->tmain || !w->tworker)
        die("thread");
}

static void cpu(struct w *w, unsigned seconds)
{
    uint32_t k = rp_chunk_kind(w->cw, "cpu", "ns", 10 * MS, NULL, 0);
    for (unsigned i = 0; i < 2 * seconds; i++) {
        uint64_t t = w->mono0 + SEC / 4 + i * (SEC / 2);
        threads(w, t);
        uint64_t weight = 10 * MS * (1 + i % 3) + w->seq * 1000;
        if (rp_chunk_sample(w->cw, k, i % 2 ? w->tworker : w->tmain, t,
                            stack(w, (int)(i % 3)), weight, NULL) != 0)
            die("cpu sample");
        if (i % 20 == 19 && rp_chunk_flush(w->cw) != 0)
            die("flush");
    }
}

static void alloc(struct w *w, unsigned seconds)
{
    static const char *const ax[] = {"class", "size", "objects"};
    uint32_t k = rp_chunk_kind(w->cw, "alloc", "bytes", 524288, ax, 3);
    for (unsigned i = 0; i < seconds / 5; i++) {
        uint64_t t = w->mono0 + SEC / 3 + i * 5 * SEC;
        threads(w, t);
        const char *cls = i % 2 ? "byte[]" : "java.lang.String";
        uint64_t x[3] = {rp_chunk_class(w->cw, rp_chunk_cstring(w->cw, cls)), 4096,
                         128 + w->seq};
        if (rp_chunk_sample(w->cw, k, w->tmain, t, stack(w, 2), 524288 + w->seq, x) != 0)
            die("alloc sample");
    }
}

static void wall(struct w *w, unsigned seconds)
{
    static const char *const wx[] = RP_WALL_EXTRA_NAMES;
    uint32_t k = rp_chunk_kind(w->cw, RP_KIND_WALL, "ns", SEC, wx, RP_WALL_NEXTRA);
    for (unsigned i = 0; i < seconds; i++) {
        uint64_t t = w->mono0 + SEC / 5 + i * SEC;
        threads(w, t);
        uint64_t run[RP_WALL_NEXTRA] = {RP_TS_RUNNING, 5, 'R', 0, SEC, 0, 0};
        uint64_t park[RP_WALL_NEXTRA] = {RP_TS_PARKED, 0x291, 'S', 1, 0, 0, 0};
        if (rp_chunk_sample(w->cw, k, w->tmain, t, stack(w, 0), SEC, run) != 0 ||
            rp_chunk_sample(w->cw, k, w->tworker, t, stack(w, 1), SEC, park) != 0)
            die("wall sample");
    }
}

static void live(struct w *w, unsigned seconds)
{
    static const char *const lx[] = {"class", "size", "objects", "length", "age_gcs",
                                     "age_ms"};
    uint32_t k = rp_chunk_kind(w->cw, "live", "bytes", 0, lx, 6);
    unsigned at[2] = {seconds / 3, seconds * 5 / 6};
    for (int s = 0; s < 2; s++) {
        uint64_t t = w->mono0 + at[s] * SEC;
        threads(w, t);
        unsigned objects = 2 + 3 * (unsigned)s + w->seq;
        for (unsigned i = 0; i < objects; i++) {
            uint64_t x[6] = {rp_chunk_class(w->cw, rp_chunk_cstring(w->cw, "byte[]")),
                             4096, 1, 4080, i % 3, 1000 * i};
            if (rp_chunk_sample(w->cw, k, w->tmain, t, stack(w, (int)(i % 3)), 524288,
                                x) != 0)
                die("live sample");
        }
        if (rp_chunk_gauge(w->cw, "live.objects", t, objects) != 0 ||
            rp_chunk_gauge(w->cw, "live.bytes", t, objects * 524288ull) != 0 ||
            rp_chunk_flush(w->cw) != 0)
            die("snapshot");
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rp_pushwriter DIR SEQ [--recording ID] [--pid PID] "
                        "[--kinds LIST] [--part] [--seconds N]\n");
        return 2;
    }
    const char *dir = argv[1], *rec = "4242-20261121T060000Z-00000000000000f1";
    const char *kinds = "cpu,alloc", *service = NULL, *labels = NULL, *jmain = NULL;
    unsigned seq = (unsigned)strtoul(argv[2], NULL, 10), seconds = 60;
    long pid = 4242, at = -1;
    int part = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--recording") && i + 1 < argc)
            rec = argv[++i];
        else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
            pid = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--kinds") && i + 1 < argc)
            kinds = argv[++i];
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--service") && i + 1 < argc)
            service = argv[++i];
        else if (!strcmp(argv[i], "--labels") && i + 1 < argc)
            labels = argv[++i];
        else if (!strcmp(argv[i], "--main") && i + 1 < argc)
            jmain = argv[++i];
        else if (!strcmp(argv[i], "--at") && i + 1 < argc)
            at = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--part"))
            part = 1;
        else {
            fprintf(stderr, "rp_pushwriter: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    uint64_t offset = at >= 0 ? (uint64_t)at * SEC : (uint64_t)seq * seconds * SEC;
    struct w w = {.seq = seq, .mono0 = MONO0 + offset};
    uint64_t wall0 = WALL0 + offset;
    char name[64], path[4200], final[4096], sw[32], sm[32], ss[16], sp[16];
    if (rp_recording_chunk_name(name, sizeof name, pid, wall0, seq) != 0)
        die("name");
    snprintf(final, sizeof final, "%s/%s" RP_CHUNK_SUFFIX, dir, name);
    snprintf(path, sizeof path, "%s" RP_CHUNK_PART_SUFFIX, final);
    snprintf(sw, sizeof sw, "%llu", (unsigned long long)wall0);
    snprintf(sm, sizeof sm, "%llu", (unsigned long long)w.mono0);
    snprintf(ss, sizeof ss, "%u", seq);
    snprintf(sp, sizeof sp, "%ld", pid);
    struct rp_kv meta[16] = {
        {RP_META_PID, sp}, {RP_META_HOST, "hostF"}, {RP_META_RECORDING, rec},
        {RP_META_CHUNK_SEQ, ss}, {RP_META_START_WALL, sw}, {RP_META_START_MONO, sm},
        {RP_META_JVM_NAME, "TestVM"}, {RP_META_OPTIONS, "interval=10ms"},
        {"agent.interval_ns", "10000000"}, {RP_META_PRODUCER, "rp_pushwriter"},
    };
    size_t n = 10;
    if (service)
        meta[n++] = (struct rp_kv){RP_META_SERVICE, service};
    if (labels)
        meta[n++] = (struct rp_kv){RP_META_LABELS, labels};
    if (jmain)
        meta[n++] = (struct rp_kv){RP_META_JVM_MAIN, jmain};
    char err[512];
    w.cw = rp_chunk_writer_open(path, meta, n, err, sizeof err);
    if (!w.cw) {
        fprintf(stderr, "rp_pushwriter: %s\n", err);
        return 1;
    }
    if (strstr(kinds, "cpu"))
        cpu(&w, seconds);
    if (strstr(kinds, "alloc"))
        alloc(&w, seconds);
    if (strstr(kinds, "wall"))
        wall(&w, seconds);
    if (strstr(kinds, "live"))
        live(&w, seconds);
    if (rp_chunk_close(w.cw) != 0)
        die("close");
    if (!part && rename(path, final) != 0)
        die("rename");
    printf("%s\n", final);
    return 0;
}
