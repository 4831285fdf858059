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
 *                  For main and split, RP_TESTWRITER_RECORDING in the environment
 *                  replaces the id "rec-A" (what `ringprof record` gives its agent).
 *                  For every variant, RP_TESTWRITER_NO_IDS=1 leaves recording.id
 *                  and chunk.seq out of the headers, as another writer may.
 *           heap   OUT is a directory: recording "rec-L", allocations, live
 *                  snapshots and GC pauses with one leaking site (see "heap
 *                  recordings" below for its content).
 *           churn  OUT is a directory: recording "rec-C", the same kinds, sites
 *                  that only churn.
 *           waits  OUT is a chunk file: recording "rec-W", kinds wall and lock,
 *                  telemetry gauges (see "waits recording" below).
 *       waits-old  the same, its wall kind with the five extras written before
 *                  blocker_class and blocker_owner.
 *        timeline  OUT is a chunk file: recording "rec-T", wall, lock and gc
 *                  samples and telemetry gauges (see write_timeline).
 *  timeline-short  the same without the gauges' last two readings.
 *   timeline-many  OUT is a chunk file: 2000 threads, mostly parked
 *                  (write_timeline_many).
 *           fleet  rec-A as main writes it, its header also naming the service
 *                  ("checkout"), labels ("env:prod;team:payments;url:http://x:1"),
 *                  the main jar and the runtime, as the agent writes them for
 *                  service= and labels= (the OTLP tests' resource attributes).
 *      fleet-main  rec-A with only the main jar (/opt/app/billing.jar) in its
 *                  header: the service is named after it.
 *           stuck  OUT is a directory: recording "rec-S", lock waits in
 *                  progress and ended, over two chunks (see write_stuck).
 *        vthreads  OUT is a chunk file: recording "rec-V", cpu and alloc samples
 *                  of virtual threads on two carriers, and of the carriers and
 *                  main themselves (write_vthreads).
 *           views  OUT is a chunk file: recording "rec-V", what the JDK's
 *                  `jfr view`s of its JFR read: cpu and wall samples with
 *                  markers, GC pauses, thread CPU readings and the Java thread
 *                  gauges (see write_views).
 *          rename  OUT is a chunk file: recording "rec-R", threads renamed
 *                  (write_rename): main -> DestroyJavaVM after its last
 *                  sample, pool-1-thread-1 -> worker before its first, a -> b
 *                  between two samples.
 *             cpp  OUT is a chunk file: recording "rec-X", native frames with
 *                  C++ and Rust symbols as the agent records them (mangled),
 *                  in cpu, lock and live samples (see write_cpp).
 *  diff-base, diff-new, diff-one  two recordings where one method's share
 *                  changes by a known amount, and one holding both in two
 *                  time windows (see "diff recordings" below).
 *  overloads, overloads-new  Java overloads, one calling another, and the
 *                  agent's [ringprof:alloc] marker (see "overloads recordings").
 *   --manifest FILE  also write, as JSON, every sample written (wall-clock time,
 *                  thread tid and name, kind, weight, objects, class, stack index;
 *                  for live samples their snapshot and ages, for gc samples the
 *                  heap and id; the heap recordings add the snapshots' times) and
 *                  every stack (truncated flag, frames root first with class,
 *                  name as a converter shows it by default, file, type, line,
 *                  bci, and "symbol", the name recorded, where that differs),
 *                  so a test can compute what a correct converter must print
 *                  without trusting the converter. cpp's and rename's list
 *                  their samples the same way (rename's adds every name each
 *                  thread had, in order, and its one stack as display names).
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
 *     (libjvm, recorded mangled as the agent records it), kernel, inlined,
 *     interpreted and JIT frames, the same method at two lines, frames with and
 *     without line and bci, and a method name holding ';' and a newline;
 *   - counters lost.ring_full 3 and lost.nested 1, per-thread CPU times, a gauge.
 * The tables below are the truth the tests check against.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"

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
    const char *symbol; /* what the chunk holds, when not `name`: a mangled      */
                        /* symbol, which a converter shows as `name`            */
    const char *sig;    /* the JVM descriptor; NULL: "()V"                      */
};

enum {
    F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_42, F_HANDLE_57, F_PARSE_7, F_PARSE_INL,
    F_MAIN, F_FIB_5, F_FIB_6, F_HASH, F_ARRAYCOPY, F_MEMCPY, F_WRITE0, F_SYSWRITE,
    F_GC_MARKER, F_CALLHELPER, F_ODD, F_BONLY,
    F_CACHE_PUT, F_BUF_TAKE, F_TEMP_MAKE, F_SESSION_NEW,
    F_D_LOOP, F_D_HOT, F_D_HOT_I, F_D_HELPER, F_D_COLD, F_D_LAMBDA_A, F_D_LAMBDA_B,
    F_NO_JAVA, F_AGENT_ALLOC,
    F_O_MAIN, F_O_QUERY_S, F_O_QUERY_SI, F_O_FILL_J, F_O_FILL_I, F_O_AGENT,
    F_COUNT
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
    [F_CALLHELPER] = {"libjvm.so", "JavaCalls::call_helper", "", RP_FRAME_CPP, -1, 0, 0,
                      "_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandle"
                      "P17JavaCallArgumentsP10JavaThread"},
    [F_ODD]        = {"app.Odd", "weird;name\nx", "Odd.java", RP_FRAME_INTERPRETED, 1, 2, 0},
    [F_BONLY]      = {"app.B", "only", "B.java", RP_FRAME_JIT, 0, 3, 0},
    /* the heap recordings' allocating methods */
    [F_CACHE_PUT]  = {"app.Cache", "put", "Cache.java", RP_FRAME_JIT, 8, 31, 0},
    [F_BUF_TAKE]   = {"app.Buffers", "take", "Buffers.java", RP_FRAME_JIT, 4, 12, 0},
    [F_TEMP_MAKE]  = {"app.Temp", "make", "Temp.java", RP_FRAME_INTERPRETED, 2, 5, 0},
    [F_SESSION_NEW] = {"app.Session", "open", "Session.java", RP_FRAME_JIT, 1, 9, 0},
    /* the diff recordings': one method (app.core.Hot.work) seen JIT-compiled and
     * interpreted, a lambda named as JDK 17 and as JDK 21 name it */
    [F_D_LOOP]     = {"app.core.Loop", "run", "Loop.java", RP_FRAME_JIT, 3, 20, 0},
    [F_D_HOT]      = {"app.core.Hot", "work", "Hot.java", RP_FRAME_JIT, 5, 30, 0},
    [F_D_HOT_I]    = {"app.core.Hot", "work", "Hot.java", RP_FRAME_INTERPRETED, 5, 30, 0},
    [F_D_HELPER]   = {"app.core.Hot", "helper", "Hot.java", RP_FRAME_INLINED, 2, 41, 0},
    [F_D_COLD]     = {"app.io.Cold", "read", "Cold.java", RP_FRAME_JIT, 1, 12, 0},
    [F_D_LAMBDA_A] = {"app.core.Loop$$Lambda$14/0x0000000800c03000", "apply", "",
                      RP_FRAME_JIT, 0, 0, 0},
    [F_D_LAMBDA_B] = {"app.core.Loop$$Lambda.0x00007f26d0000a08", "apply", "",
                      RP_FRAME_JIT, 0, 0, 0},
    /* the views recording's markers: a thread without Java frames, the agent's
     * allocation callback above its Java caller */
    [F_NO_JAVA]    = {"", "[no_java_frames]", "", RP_FRAME_MARKER, -1, 0, 0},
    [F_AGENT_ALLOC] = {"", "[ringprof:alloc]", "", RP_FRAME_MARKER, -1, 0, 0},
    /* the overloads recordings': one overload calling the other, two overloads
     * of a JDK method, and the agent's own allocation-sampling marker */
    [F_O_MAIN]     = {"app.db.Main", "main", "Main.java", RP_FRAME_JIT, 0, 5, 0, NULL,
                      "([Ljava/lang/String;)V"},
    [F_O_QUERY_S]  = {"app.db.Query", "query", "Query.java", RP_FRAME_JIT, 3, 20, 0, NULL,
                      "(Ljava/lang/String;)Ljava/util/List;"},
    [F_O_QUERY_SI] = {"app.db.Query", "query", "Query.java", RP_FRAME_JIT, 9, 31, 0, NULL,
                      "(Ljava/lang/String;I)Ljava/util/List;"},
    [F_O_FILL_J]   = {"java.util.Arrays", "fill", "Arrays.java", RP_FRAME_JIT, 4, 3287, 0,
                      NULL, "([JJ)V"},
    [F_O_FILL_I]   = {"java.util.Arrays", "fill", "Arrays.java", RP_FRAME_JIT, 4, 3209, 0,
                      NULL, "([II)V"},
    [F_O_AGENT]    = {"", "[ringprof:alloc]", "", RP_FRAME_MARKER, -1, 0, 0},
};

/* ------------------------------------------------------------- stacks -- */

#define MAXF 8
struct sdef {
    int truncated, error;
    int n;
    int f[MAXF];        /* root first */
};

enum { S1, S2, S3, S4, S5, S6, S7, S8, S9, S10, S_LEAK, S_STEADY, S_YOUNG, S_SMALL,
       S_D_HOT, S_D_HOT_I, S_D_HELPER, S_D_LAM_A, S_D_LAM_B, S_D_COLD, S_D_NATIVE,
       S_NO_JAVA, S_AGENT, S_PARTIAL, S_WRITE, S_COPY,
       S_O_LONGS, S_O_INTS, S_O_AGENT, S_COUNT };

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
    [S_LEAK] = {0, 0, 4, {F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_42, F_CACHE_PUT}},
    [S_STEADY] = {0, 0, 3, {F_THREAD_RUN, F_WORKER_RUN, F_BUF_TAKE}},
    [S_YOUNG] = {0, 0, 2, {F_MAIN, F_TEMP_MAKE}},
    [S_SMALL] = {0, 0, 4, {F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_57, F_SESSION_NEW}},
    [S_D_HOT] = {0, 0, 3, {F_MAIN, F_D_LOOP, F_D_HOT}},
    [S_D_HOT_I] = {0, 0, 3, {F_MAIN, F_D_LOOP, F_D_HOT_I}},
    [S_D_HELPER] = {0, 0, 4, {F_MAIN, F_D_LOOP, F_D_HOT, F_D_HELPER}},
    [S_D_LAM_A] = {0, 0, 4, {F_MAIN, F_D_LOOP, F_D_LAMBDA_A, F_D_COLD}},
    [S_D_LAM_B] = {0, 0, 4, {F_MAIN, F_D_LOOP, F_D_LAMBDA_B, F_D_COLD}},
    [S_D_COLD] = {0, 0, 3, {F_MAIN, F_D_LOOP, F_D_COLD}},
    [S_D_NATIVE] = {0, 0, 4, {F_MAIN, F_D_LOOP, F_D_COLD, F_MEMCPY}},
    /* the views recording's */
    [S_NO_JAVA] = {0, 0, 1, {F_NO_JAVA}},
    [S_AGENT] = {0, 0, 4, {F_THREAD_RUN, F_WORKER_RUN, F_CACHE_PUT, F_AGENT_ALLOC}},
    [S_PARTIAL] = {0, 1, 2, {F_GC_MARKER, F_PARSE_7}},
    [S_WRITE] = {0, 0, 4, {F_THREAD_RUN, F_WORKER_RUN, F_HANDLE_42, F_WRITE0}},
    [S_COPY] = {0, 0, 2, {F_MAIN, F_ARRAYCOPY}},
    [S_O_LONGS] = {0, 0, 4, {F_O_MAIN, F_O_QUERY_S, F_O_QUERY_SI, F_O_FILL_J}},
    [S_O_INTS] = {0, 0, 3, {F_O_MAIN, F_O_QUERY_SI, F_O_FILL_I}},
    [S_O_AGENT] = {0, 0, 3, {F_O_MAIN, F_O_QUERY_S, F_O_AGENT}},
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

/* host.cpus for the next open_writer (NULL: none in the header). */
static const char *host_cpus;
/* More header entries for every open_writer (the fleet variants). */
static const struct rp_kv *extra_meta;
static size_t n_extra_meta;

static struct rp_chunk_writer *open_writer(const char *path, const char *rec,
                                           const char *pid, const char *host,
                                           uint64_t wall, uint64_t mono, int seq,
                                           const char *options)
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
        {RP_META_OPTIONS, options},
        {RP_META_PRODUCER, "rp_testwriter"},
        {RP_META_HOST_CPUS, host_cpus},
    };
    char err[256];
    struct rp_kv all[sizeof meta / sizeof meta[0] + 8];
    size_t n = 0;
    const char *no_ids = getenv("RP_TESTWRITER_NO_IDS");
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (meta[i].value && !(no_ids && !strcmp(no_ids, "1") &&
                               (!strcmp(meta[i].key, RP_META_RECORDING) ||
                                !strcmp(meta[i].key, RP_META_CHUNK_SEQ))))
            all[n++] = meta[i];
    for (size_t i = 0; i < n_extra_meta && i < 8; i++)
        all[n++] = extra_meta[i];
    struct rp_chunk_writer *cw = rp_chunk_writer_open(path, all, n, err, sizeof err);
    if (!cw) {
        fprintf(stderr, "rp_testwriter: %s\n", err);
        exit(1);
    }
    return cw;
}

static struct out open_chunk(const char *path, const char *rec, const char *pid,
                             const char *host, uint64_t wall, uint64_t mono, int seq)
{
    struct out o;
    o.w = open_writer(path, rec, pid, host, wall, mono, seq, "interval=10ms,alloc=512k");
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
    uint32_t m = rp_chunk_method(w, k, rp_chunk_cstring(w, d->symbol ? d->symbol : d->name),
                                 rp_chunk_cstring(w, d->sig ? d->sig : "()V"),
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

/* Open a sample's entry in the manifest (its extras and '}' follow). */
static void manifest_open(uint64_t wall, uint64_t tid, const char *thread, const char *kind,
                          uint64_t weight, uint64_t objects, const char *klass, int stack)
{
    fprintf(manifest, "%s\n  {\"t\": %llu, \"tid\": %llu, \"thread\": ",
            first_sample ? "" : ",", (unsigned long long)wall, (unsigned long long)tid);
    json_str(manifest, thread);
    fprintf(manifest, ", \"kind\": \"%s\", \"weight\": %llu, \"objects\": %llu, \"class\": ",
            kind, (unsigned long long)weight, (unsigned long long)objects);
    if (klass)
        json_str(manifest, klass);
    else
        fputs("null", manifest);
    fprintf(manifest, ", \"stack\": %d", stack);
    first_sample = 0;
}

static void manifest_sample(uint64_t wall, const char *thread, uint64_t tid,
                            const struct group *g)
{
    if (!manifest)
        return;
    manifest_open(wall, tid, thread, g->alloc ? "alloc" : "cpu", g->weight, g->objects,
                  g->klass, g->stack);
    if (g->alloc)
        fprintf(manifest, ", \"size\": %llu", (unsigned long long)g->size);
    fputc('}', manifest);
}

/* One stack of the manifest's "stacks": frames f[0..n) of table tab, root first. */
static void manifest_stack(const struct fdef *tab, const int *f, int n, int truncated)
{
    fprintf(manifest, "\n  {\"truncated\": %d, \"frames\": [", truncated);
    for (int i = 0; i < n; i++) {
        const struct fdef *d = &tab[f[i]];
        fputs(i ? ", {\"class\": " : "{\"class\": ", manifest);
        json_str(manifest, d->klass);
        fputs(", \"name\": ", manifest);
        json_str(manifest, d->name);
        if (d->symbol) {
            fputs(", \"symbol\": ", manifest);
            json_str(manifest, d->symbol);
        }
        if (d->sig) {
            fputs(", \"signature\": ", manifest);
            json_str(manifest, d->sig);
        }
        fputs(", \"file\": ", manifest);
        json_str(manifest, d->file);
        fprintf(manifest, ", \"type\": %d, \"line\": %u, \"bci\": %d}", (int)d->type,
                d->line, d->bci);
    }
    fputs("]}", manifest);
}

/* Close the manifest; `extra` (or NULL) adds fields after "stacks". */
static void manifest_end(const char *rec, void (*extra)(FILE *))
{
    if (!manifest)
        return;
    fprintf(manifest, "\n], \"recording\": \"%s\", \"stacks\": [", rec);
    for (int s = 0; s < S_COUNT; s++) {
        fputs(s ? "," : "", manifest);
        manifest_stack(frames, stacks[s].f, stacks[s].n, stacks[s].truncated);
    }
    fputs("\n]", manifest);
    if (extra)
        extra(manifest);
    fputs("}\n", manifest);
    if (fclose(manifest) != 0)
        die("manifest");
}

/* rec-A's recording id: RP_TESTWRITER_RECORDING if set, so that a stand-in for
 * java can write what `ringprof record` asks of its agent (recording=). */
static const char *rec_a_id(void)
{
    const char *id = getenv("RP_TESTWRITER_RECORDING");
    return id && *id ? id : "rec-A";
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
    struct out o = open_chunk(path, rec_a_id(), "100", "hostA", WALL0, MONO0, 0);
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
                o = open_chunk(path, rec_a_id(), "100", "hostA", WALL0 + 5000 * MS,
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
    manifest_end("rec-A", NULL);
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
    manifest_end("rec-B", NULL);
}

/* ------------------------------------------------------- diff recordings -- */

/*
 * diff-base  OUT is a chunk file: recording "rec-DB", 100 cpu samples of 10 ms on
 *            thread main; app.core.Hot.work holds 40 of them as self (30 JIT,
 *            10 interpreted), a lambda (JDK 17 name) calls app.io.Cold.read.
 * diff-new   OUT is a chunk file: recording "rec-DN", 200 samples: Hot.work 110
 *            (90 JIT, 20 interpreted) plus 10 in Hot.helper inlined into it, the
 *            lambda under its JDK 21 name, and Cold.read calling memcpy.
 *            Hot.work's self share goes from 40% to 55%.
 * diff-one   OUT is a chunk file: recording "rec-D1", diff-base's samples from
 *            its start, then diff-new's from 20 s later: one recording whose two
 *            windows (before and after +15s) are the two above.
 */
static const struct group dgroups_base[] = {
    {0, T_MAIN, S_D_HOT, 30, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_HOT_I, 10, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_LAM_A, 40, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_COLD, 20, 10 * MS, NULL, 0, 0},
};
static const struct group dgroups_new[] = {
    {0, T_MAIN, S_D_HOT, 90, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_HOT_I, 20, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_HELPER, 10, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_LAM_B, 40, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_COLD, 20, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_D_NATIVE, 20, 10 * MS, NULL, 0, 0},
};

/* Samples of `g`, one every STEP from sample *k on, on thread main. */
static void dgroups_write(struct out *o, const struct group *g, size_t n, uint64_t *k)
{
    for (size_t gi = 0; gi < n; gi++)
        for (int i = 0; i < g[gi].count; i++, (*k)++) {
            uint64_t mono = MONO0 + *k * STEP;
            uint32_t t = rp_chunk_thread(o->w, 1, threads_a[T_MAIN].tid,
                                         threads_a[T_MAIN].java_tid, threads_a[T_MAIN].name,
                                         threads_a[T_MAIN].flags, mono);
            uint32_t s = put_stack(o->w, g[gi].stack);
            if (!t || rp_chunk_sample(o->w, o->kcpu, t, mono, s, g[gi].weight, NULL) != 0)
                die("sample");
            manifest_sample(WALL0 + *k * STEP, threads_a[T_MAIN].name,
                            threads_a[T_MAIN].tid, &g[gi]);
        }
}

static void write_diff(const char *out, const char *variant)
{
    const char *rec = !strcmp(variant, "diff-base") ? "rec-DB"
                      : !strcmp(variant, "diff-new") ? "rec-DN" : "rec-D1";
    struct out o = open_chunk(out, rec, "600", "hostD", WALL0, MONO0, 0);
    uint64_t k = 0;
    if (strcmp(variant, "diff-new"))
        dgroups_write(&o, dgroups_base, sizeof dgroups_base / sizeof dgroups_base[0], &k);
    if (!strcmp(variant, "diff-one"))
        k = 200;   /* 20 s: the new window starts there */
    if (strcmp(variant, "diff-base"))
        dgroups_write(&o, dgroups_new, sizeof dgroups_new / sizeof dgroups_new[0], &k);
    if (rp_chunk_close(o.w) != 0)
        die("close");
    manifest_end(rec, NULL);
}

/* ------------------------------------------------- overloads recordings -- */

/*
 * overloads      OUT is a chunk file: recording "rec-O" (pid 700, host hostO, main
 *                class app.db.Main in its header), 60 cpu samples of 10 ms on
 *                thread main: app.db.Query.query(String) calls its overload
 *                query(String, int), which fills a long[] (30 samples in
 *                Arrays.fill(long[], long)); query(String, int) called from main
 *                fills an int[] (20, Arrays.fill(int[], int)); query(String)
 *                allocates under the agent's sampling callback (10 in the marker
 *                [ringprof:alloc]).
 * overloads-new  the same stacks as "rec-ON": 10, 40 and 10 samples.
 */
static const struct group ogroups_base[] = {
    {0, T_MAIN, S_O_LONGS, 30, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_O_INTS, 20, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_O_AGENT, 10, 10 * MS, NULL, 0, 0},
};
static const struct group ogroups_new[] = {
    {0, T_MAIN, S_O_LONGS, 10, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_O_INTS, 40, 10 * MS, NULL, 0, 0},
    {0, T_MAIN, S_O_AGENT, 10, 10 * MS, NULL, 0, 0},
};

static void write_overloads(const char *out, int new_side)
{
    static const struct rp_kv main_class[] = {{RP_META_JVM_MAIN, "app.db.Main"}};
    extra_meta = main_class;
    n_extra_meta = 1;
    const char *rec = new_side ? "rec-ON" : "rec-O";
    struct out o = open_chunk(out, rec, "700", "hostO", WALL0, MONO0, 0);
    uint64_t k = 0;
    if (new_side)
        dgroups_write(&o, ogroups_new, sizeof ogroups_new / sizeof ogroups_new[0], &k);
    else
        dgroups_write(&o, ogroups_base, sizeof ogroups_base / sizeof ogroups_base[0], &k);
    if (rp_chunk_close(o.w) != 0)
        die("close");
    manifest_end(rec, NULL);
}

/* ------------------------------------------------------- heap recordings -- */

/*
 * heap  OUT is a directory (created): recording "rec-L" (pid 300, host hostL)
 *       with kinds alloc (4 extras), live (6) and gc (3), in two chunks. 12 live
 *       snapshots a second apart, the first empty; a GC 500 ms after each
 *       snapshot but the last (ids 1..11, the record of GC 4 lost). Sites:
 *         LEAK   byte[] from app.Cache.put: two objects a second, never freed
 *                (grows by about 1 MiB/s: the leak);
 *         STEADY char[] from app.Buffers.take: 4 to 8 objects, each alive for
 *                one snapshot (no trend);
 *         YOUNG  java.lang.String from app.Temp.make: 1, 2, ... 11 objects, each
 *                dead before the next GC (grows, but only garbage: age 0);
 *         SMALL  app.Session from app.Session.open: one object from second 5 on
 *                (a significant step, but one sample: below 1 MiB).
 * churn OUT is a directory: recording "rec-C" (pid 400, host hostC), 20
 *       snapshots, sites that only churn: STEADY and LEAK's stack with a live
 *       set that is replaced but does not grow, YOUNG garbage in a sawtooth, and
 *       a burst of SMALL objects in one snapshot near the end.
 * Weights and object counts follow the agent's formula (docs/profiles.md):
 * p = 1 - exp(-size/interval), weight = round(size/p), objects = round(1/p).
 */

#define HEAP_INTERVAL 524288.0         /* alloc=512k */
#define SEC           1000000000ull
#define NEVER         UINT64_MAX

struct hsite {
    int stack, thread;
    const char *klass;
    uint64_t size, length;
};

enum { H_LEAK, H_STEADY, H_YOUNG, H_SMALL, H_COUNT };

static const struct hsite hsites[H_COUNT] = {
    [H_LEAK]   = {S_LEAK, T_W1, "byte[]", 4112, 4097},
    [H_STEADY] = {S_STEADY, T_W2, "char[]", 2064, 1025},
    [H_YOUNG]  = {S_YOUNG, T_MAIN, "java.lang.String", 24, 0},
    [H_SMALL]  = {S_SMALL, T_W1, "app.Session", 48, 0},
};

struct hobj {
    int site;
    uint64_t born, dies;               /* ns after the recording's t0; NEVER */
};

struct heap {
    const char *rec, *pid, *host, *dir;
    uint64_t wall0, mono0;             /* the recording's t0                   */
    int nsnaps, split_at;              /* a new chunk before snapshot split_at */
    uint64_t snap0;                    /* the first snapshot, ns after t0      */
    struct hobj obj[1024];
    int nobj;
    uint64_t gc_at[64];                /* GC starts, ns after t0               */
    int ngc, lost_gc;                  /* lost_gc: the GC whose record is lost */
    /* writing */
    struct rp_chunk_writer *w;
    uint32_t kalloc, klive, kgc;
    int chunk;
};

static uint64_t est_weight(uint64_t size)
{
    return (uint64_t)llround((double)size / (1 - exp(-(double)size / HEAP_INTERVAL)));
}

static uint64_t est_objects(uint64_t size)
{
    double v = 1 / (1 - exp(-(double)size / HEAP_INTERVAL));
    return v < 1.5 ? 1 : (uint64_t)llround(v);
}

static void add_obj(struct heap *h, int site, uint64_t born, uint64_t dies)
{
    if (h->nobj == (int)(sizeof h->obj / sizeof h->obj[0])) {
        fprintf(stderr, "rp_testwriter: too many heap objects\n");
        exit(1);
    }
    h->obj[h->nobj++] = (struct hobj){site, born, dies};
}

static uint64_t snap_time(const struct heap *h, int k)
{
    return h->snap0 + (uint64_t)k * SEC;
}

static void heap_open(struct heap *h)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%d.rpc", h->dir, h->rec, h->chunk);
    uint64_t at = h->chunk ? snap_time(h, h->split_at) - 100 * MS : 0;
    h->w = open_writer(path, h->rec, h->pid, h->host, h->wall0 + at, h->mono0 + at,
                       h->chunk, "interval=10ms,alloc=512k,live=on");
    static const char *const ax[] = {"class", "size", "objects", "length"};
    static const char *const lx[] = {"class", "size", "objects", "length", "age_gcs",
                                     "age_ms"};
    static const char *const gx[] = {"heap_used", "heap_committed", "id"};
    h->kalloc = rp_chunk_kind(h->w, "alloc", "bytes", 524288, ax, 4);
    h->klive = rp_chunk_kind(h->w, "live", "bytes", 0, lx, 6);
    h->kgc = rp_chunk_kind(h->w, "gc", "ns", 0, gx, 3);
    if (!h->kalloc || !h->klive || !h->kgc)
        die("heap kind");
}

static void heap_manifest(const struct heap *h, uint64_t t, const struct hsite *s,
                          const char *kind, uint64_t weight, uint64_t objects)
{
    if (!manifest)
        return;
    manifest_open(h->wall0 + t, s ? threads_a[s->thread].tid : 0,
                  s ? threads_a[s->thread].name : "", kind, weight, objects,
                  s ? s->klass : NULL, s ? s->stack : -1);
    if (s)
        fprintf(manifest, ", \"size\": %llu, \"length\": %llu", (unsigned long long)s->size,
                (unsigned long long)s->length);
}

/* One sample of site `site` (alloc or live) at t, with the kind's extras. */
static void heap_sample(struct heap *h, uint32_t kind, int site, uint64_t t,
                        const uint64_t *ages)
{
    const struct hsite *s = &hsites[site];
    uint32_t th = rp_chunk_thread(h->w, (uint64_t)s->thread, threads_a[s->thread].tid,
                                  threads_a[s->thread].java_tid, threads_a[s->thread].name,
                                  threads_a[s->thread].flags, h->mono0 + t);
    uint32_t st = put_stack(h->w, s->stack);
    uint64_t x[6] = {rp_chunk_class(h->w, rp_chunk_cstring(h->w, s->klass)), s->size,
                     est_objects(s->size), s->length, ages ? ages[0] : 0,
                     ages ? ages[1] : 0};
    uint64_t weight = est_weight(s->size);
    if (!th || rp_chunk_sample(h->w, kind, th, h->mono0 + t, st, weight, x) != 0)
        die("heap sample");
    heap_manifest(h, t, s, kind == h->kalloc ? "alloc" : "live", weight, x[2]);
}

static void heap_gc(struct heap *h, int i)
{
    uint64_t pause = (5 + 3 * (uint64_t)(i % 4)) * MS;
    /* Heap used after the GC grows by 4 MiB a GC, but falls to 20 MiB after the
     * last one: the summary's "last" and "most" differ. */
    uint64_t used = i == h->ngc - 1 ? 20 : 10 + 4 * (uint64_t)i;
    uint64_t x[3] = {used << 20, 64u << 20, (uint64_t)i + 1};
    if (i == h->lost_gc)
        return;   /* its record was lost: a gap in the ids */
    if (rp_chunk_sample(h->w, h->kgc, 0, h->mono0 + h->gc_at[i], 0, pause, x) != 0)
        die("gc sample");
    heap_manifest(h, h->gc_at[i], NULL, "gc", pause, 0);
    fprintf(manifest, ", \"heap_used\": %llu, \"heap_committed\": %llu, \"id\": %llu}",
            (unsigned long long)x[0], (unsigned long long)x[1], (unsigned long long)x[2]);
}

/* GCs in (born, t]: the age in GCs of an object born at `born`, seen at t. */
static uint64_t gcs_between(const struct heap *h, uint64_t born, uint64_t t)
{
    uint64_t n = 0;
    for (int i = 0; i < h->ngc; i++)
        n += h->gc_at[i] > born && h->gc_at[i] <= t;
    return n;
}

static void heap_snapshot(struct heap *h, int k)
{
    uint64_t t = snap_time(h, k), objects = 0, bytes = 0;
    for (int i = 0; i < h->nobj; i++) {
        const struct hobj *o = &h->obj[i];
        if (o->born >= t || o->dies <= t)
            continue;
        uint64_t ages[2] = {gcs_between(h, o->born, t), (t - o->born) / MS};
        heap_sample(h, h->klive, o->site, t, ages);
        fprintf(manifest, ", \"snap\": %d, \"age_gcs\": %llu, \"age_ms\": %llu}", k,
                (unsigned long long)ages[0], (unsigned long long)ages[1]);
        objects++;
        bytes += est_weight(hsites[o->site].size);
    }
    if (rp_chunk_gauge(h->w, "live.objects", h->mono0 + t, objects) != 0 ||
        rp_chunk_gauge(h->w, "live.bytes", h->mono0 + t, bytes) != 0 ||
        rp_chunk_flush(h->w) != 0)
        die("snapshot");
}

static int cmp_born(const void *a, const void *b)
{
    const struct hobj *x = a, *y = b;
    return x->born < y->born ? -1 : x->born > y->born;
}

/* Everything in time order: allocations, GCs and snapshots. */
static void heap_write(struct heap *h)
{
    if (mkdir(h->dir, 0755) != 0 && errno != EEXIST)
        die(h->dir);
    qsort(h->obj, (size_t)h->nobj, sizeof h->obj[0], cmp_born);
    heap_open(h);
    int a = 0, g = 0;
    for (int k = 0; k <= h->nsnaps; k++) {
        uint64_t until = k < h->nsnaps ? snap_time(h, k) : NEVER;
        for (;;) {
            uint64_t ta = a < h->nobj ? h->obj[a].born : NEVER;
            uint64_t tg = g < h->ngc ? h->gc_at[g] : NEVER;
            if (ta >= until && tg >= until)
                break;
            if (ta <= tg) {
                heap_sample(h, h->kalloc, h->obj[a++].site, ta, NULL);
                fputc('}', manifest);
            } else {
                heap_gc(h, g++);
            }
        }
        if (k == h->nsnaps)
            break;
        if (k == h->split_at) {
            rp_chunk_counter(h->w, "lost.ring_full", 1);
            if (rp_chunk_close(h->w) != 0)
                die("close");
            h->chunk++;
            heap_open(h);
        }
        heap_snapshot(h, k);
    }
    rp_chunk_counter(h->w, "live.untracked", 2);
    if (rp_chunk_close(h->w) != 0)
        die("close");
}

static const struct heap *manifest_heap;

static void heap_manifest_snapshots(FILE *f)
{
    const struct heap *h = manifest_heap;
    fputs(", \"snapshots\": [", f);
    for (int k = 0; k < h->nsnaps; k++)
        fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)(h->wall0 + snap_time(h, k)));
    fputs("]", f);
}

static void heap_leak(struct heap *h)
{
    static const int steady[] = {6, 4, 7, 5, 6, 8, 5, 6, 4, 7, 6};
    for (int k = 0; k < 11; k++) {
        uint64_t t = snap_time(h, k);
        h->gc_at[h->ngc++] = t + 500 * MS;
        add_obj(h, H_LEAK, t + 300 * MS, NEVER);
        add_obj(h, H_LEAK, t + 600 * MS, NEVER);
        for (int i = 0; i < steady[k]; i++)
            add_obj(h, H_STEADY, t + 100 * MS + (uint64_t)i * 10 * MS, t + SEC + 400 * MS);
        for (int i = 0; i <= k; i++)
            add_obj(h, H_YOUNG, t + 700 * MS + (uint64_t)i * 5 * MS, t + SEC + 400 * MS);
    }
    add_obj(h, H_SMALL, snap_time(h, 5) + 200 * MS, NEVER);
}

/* A deterministic 0..n-1, so the churn is noisy but the same every run. */
static int noise(uint32_t *state, int n)
{
    *state = *state * 1103515245u + 12345u;
    return (int)((*state >> 16) % (uint32_t)n);
}

static void heap_churn(struct heap *h)
{
    uint32_t seed = 7;
    for (int k = -1; k < h->nsnaps; k++) {
        uint64_t t = snap_time(h, k + 1) - SEC;   /* the second before snapshot k+1 */
        h->gc_at[h->ngc++] = t + 500 * MS;
        int n = 4 + noise(&seed, 5);
        for (int i = 0; i < n; i++)   /* alive for one snapshot */
            add_obj(h, H_STEADY, t + 100 * MS + (uint64_t)i * 10 * MS, t + SEC + 400 * MS);
        for (int i = 0; i < 5; i++)   /* a cache: replaced every 2 s, never more */
            add_obj(h, H_LEAK, t + 150 * MS + (uint64_t)i * 10 * MS, t + 2 * SEC + 300 * MS);
        int y = 1 + noise(&seed, 8);
        for (int i = 0; i < y; i++)   /* garbage, gone at the next GC */
            add_obj(h, H_YOUNG, t + 600 * MS + (uint64_t)i * 5 * MS, t + SEC + 500 * MS);
        int b = k == 16 ? 30 : noise(&seed, 2);
        for (int i = 0; i < b; i++)   /* a burst near the end */
            add_obj(h, H_SMALL, t + 200 * MS + (uint64_t)i * MS, t + SEC + 600 * MS);
    }
    h->ngc--;   /* none after the last snapshot */
}

static void write_heap(const char *out, int churn)
{
    static struct heap h;
    memset(&h, 0, sizeof h);
    if (!manifest && !(manifest = fopen("/dev/null", "w")))   /* written as it goes */
        die("/dev/null");
    h.dir = out;
    h.rec = churn ? "rec-C" : "rec-L";
    h.pid = churn ? "400" : "300";
    h.host = churn ? "hostC" : "hostL";
    h.wall0 = WALL0 + 3600 * SEC * (churn ? 2 : 1);
    h.mono0 = MONO0 + 3600 * SEC * (churn ? 2 : 1);
    h.snap0 = churn ? 2 * SEC : SEC;
    h.nsnaps = churn ? 20 : 12;
    h.split_at = churn ? 10 : 6;
    h.lost_gc = churn ? -1 : 3;
    if (churn)
        heap_churn(&h);
    else
        heap_leak(&h);
    heap_write(&h);
    manifest_heap = &h;
    manifest_end(h.rec, heap_manifest_snapshots);
}

/* ------------------------------------------------------ waits recording -- */

/*
 * waits  OUT is a chunk file: recording "rec-W" (pid 500, host hostW), made as
 *        with interval=10ms,wall=50ms,lock=10ms,telemetry=1s: kinds wall and
 *        lock exactly as include/ringprof/events.h defines them, a few cpu
 *        samples, and the telemetry gauges. Six threads in known states over
 *        5 s (wall samples of 50 ms, some repeats, one of 100 ms):
 *          worker-1  running in Ledger.post, then blocked entering it;
 *          worker-2  blocked entering Ledger.post, running in Ledger.audit;
 *          sleeper   sleeping in Thread.sleep the whole time (repeats);
 *          pool-1-thread-1  parked in LinkedBlockingQueue.take (an idle pool);
 *          locker    parked in ReentrantLock.lock called from app.Billing.charge,
 *                    the lock owned by worker-1, then worker-2, then unknown;
 *          main      waiting in Thread.join, then native in a socket read.
 *        Lock samples on two monitor classes, app.Ledger (by far the most wait,
 *        owners worker-1, worker-2 and one unknown) and app.Cache (owner
 *        worker-1). Telemetry every second: CPU user 600 ms/s and sys 100 ms/s,
 *        RSS, heap, GC count and time, threads, classes, agent CPU 5 ms/s.
 * The manifest lists every sample (with state, repeat, blocker class and owner,
 * monitor class and owner name), the stacks as display names root first, and the gauges.
 */

#define W_THREADS 6
static const struct {
    const char *name;
    uint64_t tid;
} wthreads[W_THREADS] = {
    {"worker-1", 501}, {"worker-2", 502}, {"sleeper", 503},
    {"pool-1-thread-1", 504}, {"locker", 505}, {"main", 506},
};

/* Frames: all JIT-compiled Java, (class, method). */
static const char *const wframes[][2] = {
#define WF_RUN 0
    {"java.lang.Thread", "run"},
#define WF_WORKER 1
    {"app.Worker", "run"},
#define WF_POST 2
    {"app.Ledger", "post"},
#define WF_AUDIT 3
    {"app.Ledger", "audit"},
#define WF_SLEEP 4
    {"java.lang.Thread", "sleep"},
#define WF_GETTASK 5
    {"java.util.concurrent.ThreadPoolExecutor", "getTask"},
#define WF_TAKE 6
    {"java.util.concurrent.LinkedBlockingQueue", "take"},
#define WF_AWAIT 7
    {"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject", "await"},
#define WF_LSPARK 8
    {"java.util.concurrent.locks.LockSupport", "park"},
#define WF_UPARK 9
    {"jdk.internal.misc.Unsafe", "park"},
#define WF_CHARGE 10
    {"app.Billing", "charge"},
#define WF_RLOCK 11
    {"java.util.concurrent.locks.ReentrantLock", "lock"},
#define WF_ACQUIRE 12
    {"java.util.concurrent.locks.AbstractQueuedSynchronizer", "acquire"},
#define WF_MAIN 13
    {"app.Main", "main"},
#define WF_JOIN 14
    {"java.lang.Thread", "join"},
#define WF_WAIT 15
    {"java.lang.Object", "wait"},
#define WF_READ 16
    {"java.net.SocketInputStream", "read"},
#define WF_CACHE 17
    {"app.Cache", "get"},
};

#define WMAXF 8
static const struct {
    int n;
    int f[WMAXF];   /* root first */
} wstacks[] = {
#define WS_POST 0
    {3, {WF_RUN, WF_WORKER, WF_POST}},
#define WS_AUDIT 1
    {3, {WF_RUN, WF_WORKER, WF_AUDIT}},
#define WS_SLEEP 2
    {2, {WF_RUN, WF_SLEEP}},
#define WS_POOL 3
    {7, {WF_RUN, WF_WORKER, WF_GETTASK, WF_TAKE, WF_AWAIT, WF_LSPARK, WF_UPARK}},
#define WS_RLOCK 4
    {6, {WF_RUN, WF_CHARGE, WF_RLOCK, WF_ACQUIRE, WF_LSPARK, WF_UPARK}},
#define WS_JOIN 5
    {3, {WF_MAIN, WF_JOIN, WF_WAIT}},
#define WS_READ 6
    {2, {WF_MAIN, WF_READ}},
#define WS_CACHE 7
    {3, {WF_RUN, WF_WORKER, WF_CACHE}},
};
#define WS_COUNT (sizeof wstacks / sizeof wstacks[0])

#define W_NONFAIR "java.util.concurrent.locks.ReentrantLock$NonfairSync"
#define W_COND "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"

/* A run of wall samples of one thread: `count` samples of `weight` each, back to
 * back from `at` (ms after the recording's start); parked ones with the class
 * of their blocker (NULL: none) and its owner (a thread index + 1, 0: none). */
static const struct wgroup {
    int thread, stack, state, count, repeat;
    uint64_t at_ms, weight_ms, cpu_ms;
    char os_state;
    const char *blocker;
    int owner1;
} wgroups[] = {
    {0, WS_POST, RP_TS_RUNNING, 40, 0, 0, 50, 45, 'R'},
    {0, WS_POST, RP_TS_BLOCKED, 60, 0, 2000, 50, 0, 'S'},
    {1, WS_POST, RP_TS_BLOCKED, 70, 0, 0, 50, 0, 'S'},
    {1, WS_AUDIT, RP_TS_RUNNABLE, 10, 0, 3500, 50, 10, 'R'},
    {1, WS_AUDIT, RP_TS_RUNNING, 20, 0, 4000, 50, 48, 'R'},
    {2, WS_SLEEP, RP_TS_SLEEPING, 1, 0, 0, 50, 0, 'S'},
    {2, WS_SLEEP, RP_TS_SLEEPING, 99, 1, 50, 50, 0, 'S'},
    {3, WS_POOL, RP_TS_PARKED, 1, 0, 0, 100, 0, 'S', W_COND, 0},
    {3, WS_POOL, RP_TS_PARKED, 49, 1, 100, 100, 0, 'S', W_COND, 0},
    {4, WS_RLOCK, RP_TS_PARKED, 12, 0, 0, 50, 0, 'S', W_NONFAIR, 1},
    {4, WS_RLOCK, RP_TS_PARKED, 8, 0, 600, 50, 0, 'S', W_NONFAIR, 2},
    {4, WS_RLOCK, RP_TS_PARKED, 10, 0, 1000, 50, 0, 'S', W_NONFAIR, 0},
    {4, WS_POST, RP_TS_RUNNING, 70, 0, 1500, 50, 40, 'R'},
    {5, WS_JOIN, RP_TS_WAITING, 50, 1, 0, 50, 0, 'S'},
    {5, WS_READ, RP_TS_NATIVE, 50, 0, 2500, 50, 0, 'S'},
};

/* Lock samples: `count` waits of `wait_ms` each, `every_ms` apart from `at_ms`. */
static const struct lgroup {
    int thread, stack, owner;   /* owner: a thread index, -1 unknown */
    const char *monitor;
    int count;
    uint64_t at_ms, every_ms, wait_ms;
} lgroups[] = {
    {1, WS_POST, 0, "app.Ledger", 20, 0, 150, 120},
    {0, WS_POST, 1, "app.Ledger", 10, 2000, 250, 200},
    {0, WS_AUDIT, 4, "app.Ledger", 4, 100, 400, 30},
    {1, WS_POST, -1, "app.Ledger", 2, 4000, 300, 15},
    {4, WS_CACHE, 0, "app.Cache", 5, 1600, 500, 12},
};

static uint32_t wput_stack(struct rp_chunk_writer *w, int s)
{
    uint32_t ids[WMAXF];
    int n = wstacks[s].n;
    for (int i = 0; i < n; i++) {
        const char *const *f = wframes[wstacks[s].f[i]];
        uint32_t k = rp_chunk_class(w, rp_chunk_cstring(w, f[0]));
        uint32_t m = rp_chunk_method(w, k, rp_chunk_cstring(w, f[1]),
                                     rp_chunk_cstring(w, "()V"), 0, 0);
        ids[n - 1 - i] = rp_chunk_frame(w, m, RP_FRAME_JIT, -1, 0);   /* leaf first */
        if (!ids[n - 1 - i])
            die("frame");
    }
    uint32_t id = rp_chunk_stack(w, ids, (uint32_t)n, 0);
    if (!id)
        die("stack");
    return id;
}

static uint32_t wput_thread(struct rp_chunk_writer *w, int t)
{
    uint32_t id = rp_chunk_thread(w, (uint64_t)t + 1, wthreads[t].tid, 40 + (uint64_t)t,
                                  wthreads[t].name, RP_THREAD_JAVA, MONO0);
    if (!id)
        die("thread");
    return id;
}

/* `old`: the wall kind as written before blocker_class and blocker_owner (its
 * first five extras), the samples otherwise the same. */
static void write_waits(const char *out, int old)
{
    const uint64_t wall0 = WALL0 + 7200 * SEC * 3, mono0 = MONO0;
    struct rp_chunk_writer *w = open_writer(out, "rec-W", "500", "hostW", wall0, mono0, 0,
                                            "interval=10ms,wall=50ms,lock=10ms");
    static const char *const wx[] = RP_WALL_EXTRA_NAMES;
    static const char *const lx[] = RP_LOCK_EXTRA_NAMES;
    uint32_t kwall = rp_chunk_kind(w, RP_KIND_WALL, "ns", 50 * MS, wx,
                                   old ? RP_WALL_X_CPU_NS + 1 : RP_WALL_NEXTRA);
    uint32_t klock = rp_chunk_kind(w, RP_KIND_LOCK, "ns", 0, lx, RP_LOCK_NEXTRA);
    uint32_t kcpu = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    if (!kwall || !klock || !kcpu)
        die("kind");
    FILE *m = manifest;
    int first = 1;
    for (size_t gi = 0; gi < sizeof wgroups / sizeof wgroups[0]; gi++) {
        const struct wgroup *g = &wgroups[gi];
        for (int i = 0; i < g->count; i++) {
            /* A sample stands for [time - weight, time]. */
            uint64_t t = (g->at_ms + (uint64_t)(i + 1) * g->weight_ms) * MS;
            uint64_t x[RP_WALL_NEXTRA];
            x[RP_WALL_X_STATE] = (uint64_t)g->state;
            x[RP_WALL_X_JVMTI_STATE] = 0x5;   /* ALIVE|RUNNABLE, not interpreted here */
            x[RP_WALL_X_OS_STATE] = (uint64_t)(unsigned char)g->os_state;
            x[RP_WALL_X_REPEAT] = (uint64_t)g->repeat;
            x[RP_WALL_X_CPU_NS] = g->cpu_ms * MS;
            x[RP_WALL_X_BLOCKER_CLASS] =
                g->blocker ? rp_chunk_class(w, rp_chunk_cstring(w, g->blocker)) : 0;
            x[RP_WALL_X_BLOCKER_OWNER] = g->owner1 ? wput_thread(w, g->owner1 - 1) : 0;
            if (rp_chunk_sample(w, kwall, wput_thread(w, g->thread), mono0 + t,
                                wput_stack(w, g->stack), g->weight_ms * MS, x) != 0)
                die("wall sample");
            if (m)
                fprintf(m, "%s\n  {\"t\": %llu, \"thread\": \"%s\", \"tid\": %llu, "
                           "\"kind\": \"wall\", \"weight\": %llu, \"stack\": %d, "
                           "\"state\": \"%s\", \"repeat\": %d, \"cpu_ns\": %llu, "
                           "\"blocker\": %s%s%s, \"blocker_owner\": %s%s%s}",
                        first ? "" : ",", (unsigned long long)(wall0 + t),
                        wthreads[g->thread].name, (unsigned long long)wthreads[g->thread].tid,
                        (unsigned long long)(g->weight_ms * MS), g->stack,
                        rp_thread_state_name((unsigned)g->state), g->repeat,
                        (unsigned long long)(g->cpu_ms * MS), g->blocker ? "\"" : "",
                        g->blocker ? g->blocker : "null", g->blocker ? "\"" : "",
                        g->owner1 ? "\"" : "",
                        g->owner1 ? wthreads[g->owner1 - 1].name : "null",
                        g->owner1 ? "\"" : "");
            first = 0;
        }
        if (rp_chunk_flush(w) != 0)
            die("flush");
    }
    for (size_t gi = 0; gi < sizeof lgroups / sizeof lgroups[0]; gi++) {
        const struct lgroup *g = &lgroups[gi];
        for (int i = 0; i < g->count; i++) {
            uint64_t t = (g->at_ms + (uint64_t)i * g->every_ms) * MS;
            uint64_t x[RP_LOCK_NEXTRA] = {0};
            x[RP_LOCK_X_CLASS] = rp_chunk_class(w, rp_chunk_cstring(w, g->monitor));
            x[RP_LOCK_X_OWNER] = g->owner >= 0 ? wput_thread(w, g->owner) : 0;
            x[RP_LOCK_X_THRESHOLD] = 10 * MS;
            if (rp_chunk_sample(w, klock, wput_thread(w, g->thread), mono0 + t,
                                wput_stack(w, g->stack), g->wait_ms * MS, x) != 0)
                die("lock sample");
            if (m)
                fprintf(m, ",\n  {\"t\": %llu, \"thread\": \"%s\", \"tid\": %llu, "
                           "\"kind\": \"lock\", \"weight\": %llu, \"stack\": %d, "
                           "\"monitor\": \"%s\", \"owner\": %s%s%s}",
                        (unsigned long long)(wall0 + t), wthreads[g->thread].name,
                        (unsigned long long)wthreads[g->thread].tid,
                        (unsigned long long)(g->wait_ms * MS), g->stack, g->monitor,
                        g->owner >= 0 ? "\"" : "",
                        g->owner >= 0 ? wthreads[g->owner].name : "null",
                        g->owner >= 0 ? "\"" : "");
        }
    }
    /* A few cpu samples, so the recording has more than the two new kinds. */
    for (int i = 0; i < 5; i++) {
        if (rp_chunk_sample(w, kcpu, wput_thread(w, 1), mono0 + (uint64_t)(i + 1) * SEC,
                            wput_stack(w, WS_AUDIT), 10 * MS, NULL) != 0)
            die("cpu sample");
        if (m)
            fprintf(m, ",\n  {\"t\": %llu, \"thread\": \"worker-2\", \"tid\": 502, "
                       "\"kind\": \"cpu\", \"weight\": %llu, \"stack\": %d}",
                    (unsigned long long)(wall0 + (uint64_t)(i + 1) * SEC),
                    (unsigned long long)(10 * MS), WS_AUDIT);
    }
    /* Telemetry, once a second at 0..5 s: totals grow at fixed rates, levels
     * vary so that averages and maxima differ. */
    if (m)
        fputs("\n], \"gauges\": [", m);
    for (int s = 0; s <= 5; s++) {
        const struct {
            const char *name;
            uint64_t v;
        } g[] = {
            {RP_GAUGE_CPU_USER, 1000 * MS + (uint64_t)s * 600 * MS},
            {RP_GAUGE_CPU_SYS, 200 * MS + (uint64_t)s * 100 * MS},
            {RP_GAUGE_RSS, (200 + 10 * (uint64_t)s) << 20},
            {RP_GAUGE_HEAP_USED, (uint64_t)(s % 2 ? 96 : 64) << 20},
            {RP_GAUGE_HEAP_COMMITTED, 256ull << 20},
            {RP_GAUGE_GC_COUNT, 3 + 2 * (uint64_t)s},
            {RP_GAUGE_GC_TIME, 30 * MS + (uint64_t)s * 8 * MS},
            {RP_GAUGE_THREADS, 20 + (uint64_t)(s == 3)},
            {RP_GAUGE_THREADS_RUNNABLE, (uint64_t)(s % 3)},
            {RP_GAUGE_CLASSES, 1500 + 10 * (uint64_t)s},
            {RP_GAUGE_AGENT_CPU, 40 * MS + (uint64_t)s * 5 * MS},
        };
        for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
            if (rp_chunk_gauge(w, g[i].name, mono0 + (uint64_t)s * SEC, g[i].v) != 0)
                die("gauge");
            if (m)
                fprintf(m, "%s\n  {\"t\": %llu, \"name\": \"%s\", \"value\": %llu}",
                        s || i ? "," : "", (unsigned long long)(wall0 + (uint64_t)s * SEC),
                        g[i].name, (unsigned long long)g[i].v);
        }
    }
    rp_chunk_counter(w, "lock.below_threshold", 7);
    if (rp_chunk_close(w) != 0)
        die("close");
    if (!m)
        return;
    fputs("\n], \"recording\": \"rec-W\", \"stacks\": [", m);
    for (size_t s = 0; s < WS_COUNT; s++) {
        fputs(s ? ",\n  [" : "\n  [", m);
        for (int i = 0; i < wstacks[s].n; i++) {
            const char *const *f = wframes[wstacks[s].f[i]];
            fprintf(m, "%s\"%s.%s\"", i ? ", " : "", f[0], f[1]);
        }
        fputc(']', m);
    }
    fputs("\n]}\n", m);
    if (fclose(m) != 0)
        die("manifest");
}

/* ------------------------------------------------- timeline recording -- */

/*
 * Variant "timeline" (OUT is a chunk file): recording "rec-T" (pid 500, host
 * hostT, host.cpus 2), 30 s from WALL0 + 4 h, written as the agent writes wall=, lock= and
 * telemetry= (docs/format.md, "Event kinds written by the agent"): a wall
 * sample covers [time - weight, time] of its thread, a lock sample
 * [time, time + weight]. Times below are seconds after the start:
 *   sleeper (tid 501)  sleeping 0..30, a sample every 500 ms (repeats)
 *   worker  (tid 502)  running 0..10, blocked 10..20, running 20..30, every
 *                      250 ms; one lock sample: waited 10..20 on app.Ledger,
 *                      owner "ender"
 *   late    (tid 503)  parked 15..30, every 500 ms (first seen at 15)
 *   ender   (tid 504)  waiting 0..24, every 400 ms, then gone
 *   reader  (tid 505)  native 0..6, io 6..12, runnable 12..18, every 1 s, gone
 *   one GC pause at 12.000 s, 50 ms (id 1, heap 48 MiB after)
 *   gauges at 0, 1, ..., 30 s: proc.cpu_user_ns.total grows (k % 3 + 1) * 100 ms
 *   over second k; proc.cpu_sys_ns.total 50 ms a second; proc.rss_bytes
 *   (100 + k) MiB; heap.used_bytes (40 + 2k) MiB; heap.committed_bytes 256 MiB;
 *   gc.count.total and gc.time_ns.total 0, then 1 and 50 ms from reading 13;
 *   threads.os 10 + the threads alive at k; threads.runnable 2 (1 while the
 *   worker is blocked); classes.loaded 1000 + 10k; agent.cpu_ns.total 2 ms a
 *   second.
 * The manifest lists every wall sample ({"t" (wall ns, the sample's time),
 * "tid", "thread", "kind": "wall", "weight", "state"}), the lock and gc samples
 * and the gauge readings ({"gauge", "t", "value"}), so a test can recompute the
 * columns itself.
 */
struct tl_thread {
    const char *name;
    uint64_t tid, start_ms, end_ms, step_ms;
};

static const struct tl_thread tl_threads[] = {
    {"sleeper", 501, 0, 30000, 500},
    {"worker", 502, 0, 30000, 250},
    {"late", 503, 15000, 30000, 500},
    {"ender", 504, 0, 24000, 400},
    {"reader", 505, 0, 18000, 1000},
};
#define TL_NTHREADS (sizeof tl_threads / sizeof tl_threads[0])

/* The state of thread i over the sample ending at ms (it covers the step before). */
static unsigned tl_state(size_t i, uint64_t ms)
{
    switch (tl_threads[i].tid) {
    case 501: return RP_TS_SLEEPING;
    case 502: return ms > 10000 && ms <= 20000 ? RP_TS_BLOCKED : RP_TS_RUNNING;
    case 503: return RP_TS_PARKED;
    case 504: return RP_TS_WAITING;
    default: return ms <= 6000 ? RP_TS_NATIVE : ms <= 12000 ? RP_TS_IO : RP_TS_RUNNABLE;
    }
}

/* GetThreadState's bits and the /proc letter an agent would have seen. */
static void tl_raw(unsigned state, uint64_t *jvmti, uint64_t *os)
{
    switch (state) {
    case RP_TS_SLEEPING: *jvmti = 0xe1; *os = 'S'; return;     /* SLEEPING|WAITING.. */
    case RP_TS_BLOCKED: *jvmti = 0x401; *os = 'S'; return;     /* MONITOR_ENTER      */
    case RP_TS_PARKED: *jvmti = 0x291; *os = 'S'; return;      /* PARKED             */
    case RP_TS_WAITING: *jvmti = 0x191; *os = 'S'; return;     /* IN_OBJECT_WAIT     */
    case RP_TS_NATIVE: *jvmti = 0x400005; *os = 'S'; return;   /* IN_NATIVE          */
    case RP_TS_IO: *jvmti = 0x400005; *os = 'D'; return;
    default: *jvmti = 0x5; *os = 'R'; return;                  /* RUNNABLE           */
    }
}

static int tl_alive(uint64_t ms)   /* threads whose life covers [ms, ms+1) */
{
    int n = 0;
    for (size_t i = 0; i < TL_NTHREADS; i++)
        n += ms >= tl_threads[i].start_ms && ms < tl_threads[i].end_ms;
    return n;
}

/* Open the next manifest entry (after a comma unless it is the first). */
static int tl_entry(void)
{
    if (!manifest)
        return 0;
    fputs(first_sample ? "\n  " : ",\n  ", manifest);
    first_sample = 0;
    return 1;
}

static void tl_gauge(struct rp_chunk_writer *w, uint64_t wall0, uint64_t mono0,
                     const char *name, uint64_t ms, uint64_t value)
{
    if (rp_chunk_gauge(w, name, mono0 + ms * MS, value) != 0)
        die("gauge");
    if (tl_entry())
        fprintf(manifest, "{\"gauge\": \"%s\", \"t\": %llu, \"value\": %llu}", name,
                (unsigned long long)(wall0 + ms * MS), (unsigned long long)value);
}

static void tl_gauges(struct rp_chunk_writer *w, uint64_t wall0, uint64_t mono0, int k)
{
    uint64_t user = 0;
    for (int j = 0; j < k; j++)
        user += (uint64_t)(j % 3 + 1) * 100 * MS;
    uint64_t ms = (uint64_t)k * 1000, mib = 1u << 20;
    tl_gauge(w, wall0, mono0, "proc.cpu_user_ns.total", ms, user);
    tl_gauge(w, wall0, mono0, "proc.cpu_sys_ns.total", ms, (uint64_t)k * 50 * MS);
    tl_gauge(w, wall0, mono0, "proc.rss_bytes", ms, (100 + (uint64_t)k) * mib);
    tl_gauge(w, wall0, mono0, "heap.used_bytes", ms, (40 + 2 * (uint64_t)k) * mib);
    tl_gauge(w, wall0, mono0, "heap.committed_bytes", ms, 256 * mib);
    tl_gauge(w, wall0, mono0, "gc.count.total", ms, k >= 13);
    tl_gauge(w, wall0, mono0, "gc.time_ns.total", ms, k >= 13 ? 50 * MS : 0);
    tl_gauge(w, wall0, mono0, "threads.os", ms, 10 + (uint64_t)tl_alive(ms));
    tl_gauge(w, wall0, mono0, "threads.runnable", ms, k >= 10 && k < 20 ? 1 : 2);
    tl_gauge(w, wall0, mono0, "classes.loaded", ms, 1000 + 10 * (uint64_t)k);
    tl_gauge(w, wall0, mono0, "agent.cpu_ns.total", ms, (uint64_t)k * 2 * MS);
}

/* short_telemetry: no gauge reading after +28 s, two seconds before the last
 * wall samples, as the agent's last reading may come before its last sample. */
static void write_timeline(const char *out, int short_telemetry)
{
    const uint64_t wall0 = WALL0 + 4 * 3600 * 1000 * MS, mono0 = MONO0 + 4 * 3600 * 1000 * MS;
    host_cpus = "2";
    struct rp_chunk_writer *w = open_writer(out, "rec-T", "500", "hostT", wall0, mono0, 0,
                                            "wall=250ms,lock=10ms,telemetry=1s");
    static const char *const wall_x[] = RP_WALL_EXTRA_NAMES;
    static const char *const lock_x[] = RP_LOCK_EXTRA_NAMES;
    static const char *const gc_x[] = {"heap_used", "heap_committed", "id"};
    uint32_t kwall = rp_chunk_kind(w, RP_KIND_WALL, "ns", 250 * MS, wall_x, RP_WALL_NEXTRA);
    uint32_t klock = rp_chunk_kind(w, RP_KIND_LOCK, "ns", 0, lock_x, RP_LOCK_NEXTRA);
    uint32_t kgc = rp_chunk_kind(w, "gc", "ns", 0, gc_x, 3);
    uint32_t stack = put_stack(w, S1);
    uint32_t ledger = rp_chunk_class(w, rp_chunk_cstring(w, "app.Ledger"));
    if (!kwall || !klock || !kgc || !ledger)
        die("timeline kinds");
    uint32_t th[TL_NTHREADS];
    uint64_t last[TL_NTHREADS];
    for (size_t i = 0; i < TL_NTHREADS; i++) {
        th[i] = rp_chunk_thread(w, i + 1, tl_threads[i].tid, 10 + i, tl_threads[i].name,
                                RP_THREAD_JAVA, mono0 + tl_threads[i].start_ms * MS);
        last[i] = tl_threads[i].start_ms;
        if (!th[i])
            die("thread");
    }
    for (uint64_t ms = 0; ms <= 30000; ms += 50) {
        if (ms % 1000 == 0 && (!short_telemetry || ms <= 28000))
            tl_gauges(w, wall0, mono0, (int)(ms / 1000));
        if (ms == 10000) {   /* the worker's wait begins; its owner is ender */
            uint64_t x[RP_LOCK_NEXTRA] = {ledger, th[3], 10 * MS};
            if (rp_chunk_sample(w, klock, th[1], mono0 + ms * MS, stack, 10000 * MS, x))
                die("lock sample");
            if (tl_entry())
                fprintf(manifest, "{\"kind\": \"lock\", \"t\": %llu, \"tid\": 502, "
                        "\"thread\": \"worker\", \"monitor\": \"app.Ledger\", "
                        "\"owner\": \"ender\", \"weight\": %llu}",
                        (unsigned long long)(wall0 + ms * MS),
                        (unsigned long long)(10000 * MS));
        }
        if (ms == 12000) {
            uint64_t x[3] = {48u << 20, 256u << 20, 1};
            if (rp_chunk_sample(w, kgc, 0, mono0 + ms * MS, 0, 50 * MS, x))
                die("gc sample");
            if (tl_entry())
                fprintf(manifest, "{\"kind\": \"gc\", \"t\": %llu, \"weight\": %llu, "
                        "\"heap_used\": %llu, \"heap_committed\": %llu, \"id\": %llu}",
                        (unsigned long long)(wall0 + ms * MS), (unsigned long long)(50 * MS),
                        (unsigned long long)x[0], (unsigned long long)x[1],
                        (unsigned long long)x[2]);
        }
        for (size_t i = 0; i < TL_NTHREADS; i++) {
            const struct tl_thread *t = &tl_threads[i];
            if (ms <= t->start_ms || ms > t->end_ms || (ms - t->start_ms) % t->step_ms)
                continue;
            unsigned st = tl_state(i, ms);
            uint64_t x[RP_WALL_NEXTRA] = {st, 0, 0, last[i] != t->start_ms,
                                          st == RP_TS_RUNNING ? (ms - last[i]) * MS : 0};
            tl_raw(st, &x[RP_WALL_X_JVMTI_STATE], &x[RP_WALL_X_OS_STATE]);
            if (st == RP_TS_RUNNING)
                x[RP_WALL_X_REPEAT] = 0;   /* it ran: walked again */
            if (rp_chunk_sample(w, kwall, th[i], mono0 + ms * MS, stack, (ms - last[i]) * MS, x))
                die("wall sample");
            if (tl_entry())
                fprintf(manifest, "{\"kind\": \"wall\", \"t\": %llu, \"tid\": %llu, "
                        "\"thread\": \"%s\", \"weight\": %llu, \"state\": %u}",
                        (unsigned long long)(wall0 + ms * MS), (unsigned long long)t->tid,
                        t->name, (unsigned long long)((ms - last[i]) * MS), st);
            last[i] = ms;
        }
        if (ms % 5000 == 0 && rp_chunk_flush(w) != 0)
            die("flush");
    }
    if (rp_chunk_close(w) != 0)
        die("close");
    if (manifest) {
        fprintf(manifest, "\n], \"recording\": \"rec-T\", \"wall0\": %llu}\n",
                (unsigned long long)wall0);
        if (fclose(manifest) != 0)
            die("manifest");
    }
}

/*
 * Variant "timeline-many" (OUT is a chunk file): recording "rec-M", 60 s of
 * 2000 threads as wall= would see a mostly idle server: pool-1 .. pool-1900
 * parked (a sample a second, repeats), busy-1 .. busy-100 alternating running
 * and blocked every 100 ms (a sample each); busy-100's name holds markup, a
 * quote and a control character. No manifest: the test checks the shape (rows
 * cut to --rows, the counts of all 2000), the escaping and the cost.
 */
static void write_timeline_many(const char *out)
{
    const uint64_t wall0 = WALL0 + 5 * 3600 * 1000 * MS, mono0 = MONO0 + 5 * 3600 * 1000 * MS;
    struct rp_chunk_writer *w = open_writer(out, "rec-M", "600", "hostM", wall0, mono0, 0,
                                            "wall=100ms");
    static const char *const wall_x[] = RP_WALL_EXTRA_NAMES;
    uint32_t kwall = rp_chunk_kind(w, RP_KIND_WALL, "ns", 100 * MS, wall_x, RP_WALL_NEXTRA);
    uint32_t stack = put_stack(w, S1);
    static uint32_t th[2000];
    for (int i = 0; i < 2000; i++) {
        char name[32];
        snprintf(name, sizeof name, i < 1900 ? "pool-%d" : "busy-%d", i < 1900 ? i + 1 : i - 1899);
        if (i == 1999)   /* markup, a quote and a control character in a name */
            snprintf(name, sizeof name, "busy-100 </svg><b>&\"\x01");
        if (!(th[i] = rp_chunk_thread(w, (uint64_t)i + 1, 10000 + (uint64_t)i, 0, name,
                                      RP_THREAD_JAVA, mono0)) || !kwall)
            die("thread");
    }
    for (uint64_t ms = 100; ms <= 60000; ms += 100) {
        for (int i = 0; i < 2000; i++) {
            int busy = i >= 1900;
            if (!busy && ms % 1000)
                continue;
            unsigned st = !busy ? RP_TS_PARKED : (ms / 100) % 2 ? RP_TS_RUNNING : RP_TS_BLOCKED;
            uint64_t x[RP_WALL_NEXTRA] = {st, 0, 0, !busy && ms > 1000, 0};
            tl_raw(st, &x[RP_WALL_X_JVMTI_STATE], &x[RP_WALL_X_OS_STATE]);
            if (rp_chunk_sample(w, kwall, th[i], mono0 + ms * MS, stack,
                                (busy ? 100 : 1000) * MS, x))
                die("wall sample");
        }
        if (ms % 10000 == 0 && rp_chunk_flush(w) != 0)
            die("flush");
    }
    if (rp_chunk_close(w) != 0)
        die("close");
}

/* ------------------------------------------------------- C++ and Rust -- */

/*
 * cpp  OUT is a chunk file: recording "rec-X" (pid 900, host hostX), kinds cpu,
 *      lock and live, whose stacks hold native frames as the agent records them:
 *      C++ (libjvm, libstdc++) and Rust (legacy and v0) symbols, mangled; a C
 *      function; a name that only looks mangled (it does not demangle); and a
 *      Java method whose name looks like a C++ symbol (Java names are never
 *      demangled). Two C++ overloads, Compiler::parse(int) and (long), end two
 *      stacks that the short style merges. tests/convert/test_demangle.py knows
 *      the names; the figures: cpu 6 + 4 samples on the two overload stacks, 5
 *      on the libstdc++ one, 3 Rust, 2 on the one that does not demangle (10 ms
 *      each); 2 lock waits of 50 ms; 6 live snapshots a second apart, snapshot
 *      k holding k + 1 objects of 1 MiB allocated on the overload (int) stack.
 */
static const struct fdef xframes[] = {
#define X_START 0
    {"libc.so.6", "start_thread", "", RP_FRAME_NATIVE, -1, 0, 0, NULL},
#define X_ENTRY 1
    {"libjvm.so", "thread_native_entry", "", RP_FRAME_CPP, -1, 0, 0,
     "_ZL19thread_native_entryP6Thread"},
#define X_INNER 2
    {"libjvm.so", "JavaThread::thread_main_inner", "", RP_FRAME_CPP, -1, 0, 0,
     "_ZN10JavaThread17thread_main_innerEv"},
#define X_LOOP 3
    {"libjvm.so", "CompileBroker::compiler_thread_loop", "", RP_FRAME_CPP, -1, 0, 0,
     "_ZN13CompileBroker20compiler_thread_loopEv"},
#define X_INVOKE 4
    {"libjvm.so", "CompileBroker::invoke_compiler_on_method", "", RP_FRAME_CPP, -1, 0, 0,
     "_ZN13CompileBroker25invoke_compiler_on_methodEP11CompileTask"},
#define X_PARSE_I 5
    {"libjvm.so", "Compiler::parse", "", RP_FRAME_CPP, -1, 0, 0, "_ZN8Compiler5parseEi"},
#define X_PARSE_L 6
    {"libjvm.so", "Compiler::parse", "", RP_FRAME_CPP, -1, 0, 0, "_ZN8Compiler5parseEl"},
#define X_RUN 7
    {"java.lang.Thread", "run", "Thread.java", RP_FRAME_INTERPRETED, 11, 833, 0, NULL},
#define X_GEN 8
    {"app.Gen", "_ZN3Gen3runEv", "Gen.java", RP_FRAME_JIT, 3, 12, 0, NULL},
#define X_PUSH 9
    {"libstdc++.so.6", "std::vector<int, std::allocator<int> >::push_back", "",
     RP_FRAME_NATIVE, -1, 0, 0, "_ZNSt6vectorIiSaIiEE9push_backERKi"},
#define X_DROP 10
    {"librsfoo.so", "core::ptr::drop_in_place", "", RP_FRAME_NATIVE, -1, 0, 0,
     "_ZN4core3ptr13drop_in_place17h1234567890abcdefE"},
#define X_RUST 11
    {"librsfoo.so", "mycrate::example", "", RP_FRAME_NATIVE, -1, 0, 0,
     "_RNvCs15kBYyAo9fc_7mycrate7example"},
#define X_BOGUS 12
    {"libjvm.so", "_Z_not_a_mangled_name", "", RP_FRAME_CPP, -1, 0, 0, NULL},
};

#define XMAXF 8
static const struct {
    int n, f[XMAXF];   /* root first */
    int count;         /* cpu samples */
} xstacks[] = {
#define XS_PARSE_I 0
    {6, {X_START, X_ENTRY, X_INNER, X_LOOP, X_INVOKE, X_PARSE_I}, 6},
    {6, {X_START, X_ENTRY, X_INNER, X_LOOP, X_INVOKE, X_PARSE_L}, 4},
#define XS_PUSH 2
    {5, {X_START, X_ENTRY, X_RUN, X_GEN, X_PUSH}, 5},
    {6, {X_START, X_ENTRY, X_RUN, X_GEN, X_DROP, X_RUST}, 3},
    {4, {X_START, X_ENTRY, X_INNER, X_BOGUS}, 2},
};

static uint32_t xput_stack(struct rp_chunk_writer *w, int s)
{
    uint32_t ids[XMAXF];
    int n = xstacks[s].n;
    for (int i = 0; i < n; i++) {
        const struct fdef *d = &xframes[xstacks[s].f[i]];
        uint32_t k = rp_chunk_class(w, rp_chunk_cstring(w, d->klass));
        uint32_t m = rp_chunk_method(w, k, rp_chunk_cstring(w, d->symbol ? d->symbol : d->name),
                                     rp_chunk_cstring(w, ""), rp_chunk_cstring(w, d->file), 0);
        ids[n - 1 - i] = rp_chunk_frame(w, m, d->type, d->bci, d->line);   /* leaf first */
        if (!ids[n - 1 - i])
            die("frame");
    }
    uint32_t id = rp_chunk_stack(w, ids, (uint32_t)n, 0);
    if (!id)
        die("stack");
    return id;
}

static void write_cpp(const char *out)
{
    const uint64_t wall0 = WALL0 + 7200 * SEC * 4, mono0 = MONO0;
    struct rp_chunk_writer *w = open_writer(out, "rec-X", "900", "hostX", wall0, mono0, 0,
                                            "interval=10ms,lock=10ms,live=on");
    static const char *const lx[] = RP_LOCK_EXTRA_NAMES;
    static const char *const vx[] = {"class", "size", "objects", "length", "age_gcs",
                                     "age_ms"};
    uint32_t kcpu = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t klock = rp_chunk_kind(w, RP_KIND_LOCK, "ns", 0, lx, RP_LOCK_NEXTRA);
    uint32_t klive = rp_chunk_kind(w, "live", "bytes", 0, vx, 6);
    uint32_t tc = rp_chunk_thread(w, 1, 901, 0, "C2 CompilerThread0", 0, mono0);
    uint32_t tm = rp_chunk_thread(w, 2, 902, 1, "main", RP_THREAD_JAVA, mono0);
    if (!kcpu || !klock || !klive || !tc || !tm)
        die("cpp kinds");
    static const char *const tname[2] = {"C2 CompilerThread0", "main"};
    uint64_t t = mono0;
    for (size_t s = 0; s < sizeof xstacks / sizeof xstacks[0]; s++)
        for (int i = 0; i < xstacks[s].count; i++, t += STEP) {
            int java = xstacks[s].f[2] == X_RUN;
            if (rp_chunk_sample(w, kcpu, java ? tm : tc, t,
                                xput_stack(w, (int)s), 10 * MS, NULL) != 0)
                die("cpp cpu sample");
            if (manifest) {
                manifest_open(wall0 + t - mono0, 901 + (uint64_t)java, tname[java], "cpu",
                              10 * MS, 0, NULL, (int)s);
                fputc('}', manifest);
            }
        }
    for (int i = 0; i < 2; i++, t += STEP) {
        uint64_t x[RP_LOCK_NEXTRA] = {0};
        x[RP_LOCK_X_CLASS] = rp_chunk_class(w, rp_chunk_cstring(w, "app.Lock"));
        x[RP_LOCK_X_OWNER] = tc;
        x[RP_LOCK_X_THRESHOLD] = 10 * MS;
        if (rp_chunk_sample(w, klock, tm, t, xput_stack(w, XS_PUSH), 50 * MS, x) != 0)
            die("cpp lock sample");
        if (manifest) {
            manifest_open(wall0 + t - mono0, 902, tname[1], "lock", 50 * MS, 0, NULL, XS_PUSH);
            fprintf(manifest, ", \"monitor\": \"app.Lock\", \"owner\": \"%s\"}", tname[0]);
        }
    }
    for (int k = 0; k < 6; k++) {
        uint64_t at = mono0 + (uint64_t)(k + 1) * SEC;
        for (int i = 0; i <= k; i++) {
            uint64_t x[6] = {rp_chunk_class(w, rp_chunk_cstring(w, "byte[]")), 1u << 20, 1,
                             (1u << 20) - 16, 3, (uint64_t)(k - i) * 1000};
            if (rp_chunk_sample(w, klive, tc, at, xput_stack(w, XS_PARSE_I), 1u << 20, x))
                die("cpp live sample");
            if (manifest) {
                manifest_open(wall0 + at - mono0, 901, tname[0], "live", 1u << 20, 1, "byte[]",
                              XS_PARSE_I);
                fprintf(manifest, ", \"size\": %llu, \"length\": %llu, \"snap\": %d, "
                        "\"age_gcs\": %llu, \"age_ms\": %llu}", (unsigned long long)x[1],
                        (unsigned long long)x[3], k, (unsigned long long)x[4],
                        (unsigned long long)x[5]);
            }
        }
        if (rp_chunk_gauge(w, "live.objects", at, (uint64_t)k + 1) != 0 ||
            rp_chunk_gauge(w, "live.bytes", at, (uint64_t)(k + 1) << 20) != 0 ||
            rp_chunk_flush(w) != 0)
            die("cpp snapshot");
    }
    if (rp_chunk_close(w) != 0)
        die("close");
    if (!manifest)
        return;
    fputs("\n], \"recording\": \"rec-X\", \"stacks\": [", manifest);
    for (size_t s = 0; s < sizeof xstacks / sizeof xstacks[0]; s++) {
        fputs(s ? "," : "", manifest);
        manifest_stack(xframes, xstacks[s].f, xstacks[s].n, 0);
    }
    fputs("\n]}\n", manifest);
    if (fclose(manifest) != 0)
        die("manifest");
}

/* rename: cpu and wall samples of 10 ms on one stack. tid 601 is sampled 5 times
 * as "main" and renamed "DestroyJavaVM" after (as the JVM's launcher does at
 * exit); tid 602 is defined as "pool-1-thread-1" and renamed "worker" before its 3
 * samples; tid 603 has 2 samples as "a", then 2 as "b". */
static void write_rename(const char *out)
{
    const uint64_t mono0 = MONO0, wall0 = WALL0 + 7200 * SEC * 5;
    struct rp_chunk_writer *w = open_writer(out, "rec-R", "600", "hostR", wall0, mono0, 0,
                                            "interval=10ms,wall=10ms");
    static const char *const wx[] = RP_WALL_EXTRA_NAMES;
    uint32_t kcpu = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t kwall = rp_chunk_kind(w, RP_KIND_WALL, "ns", 10 * MS, wx, RP_WALL_NEXTRA);
    if (!kcpu || !kwall)
        die("rename kinds");
    static const struct { uint64_t key, tid; const char *name; int samples; } steps[] = {
        {2, 602, "pool-1-thread-1", 0}, {1, 601, "main", 5}, {2, 602, "worker", 3},
        {3, 603, "a", 2}, {3, 603, "b", 2}, {1, 601, "DestroyJavaVM", 0},
    };
    uint64_t t = mono0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        uint32_t th = rp_chunk_thread(w, steps[i].key, steps[i].tid, steps[i].key,
                                      steps[i].name, RP_THREAD_JAVA, t);
        for (int k = 0; k < steps[i].samples; k++) {
            uint64_t x[RP_WALL_NEXTRA] = {0};
            x[RP_WALL_X_STATE] = RP_TS_RUNNING;
            t += 10 * MS;
            if (!th || rp_chunk_sample(w, kcpu, th, t, wput_stack(w, 0), 10 * MS, NULL) ||
                rp_chunk_sample(w, kwall, th, t, wput_stack(w, 0), 10 * MS, x))
                die("rename sample");
            for (int kind = 0; manifest && kind < 2; kind++) {
                manifest_open(wall0 + t - mono0, steps[i].tid, steps[i].name,
                              kind ? "wall" : "cpu", 10 * MS, 0, NULL, 0);
                fputs(kind ? ", \"state\": \"running\", \"repeat\": 0, \"cpu_ns\": 0, "
                             "\"blocker\": null, \"blocker_owner\": null}" : "}", manifest);
            }
        }
        if (rp_chunk_flush(w) != 0)
            die("rename flush");
    }
    if (rp_chunk_close(w) != 0)
        die("close");
    if (!manifest)
        return;
    /* Every name each thread was given, in order; the stack as display names. */
    fputs("\n], \"recording\": \"rec-R\", \"names\": [", manifest);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        fprintf(manifest, "%s{\"tid\": %llu, \"name\": \"%s\"}", i ? ", " : "",
                (unsigned long long)steps[i].tid, steps[i].name);
    fputs("], \"stacks\": [[", manifest);
    for (int i = 0; i < wstacks[0].n; i++)
        fprintf(manifest, "%s\"%s.%s\"", i ? ", " : "", wframes[wstacks[0].f[i]][0],
                wframes[wstacks[0].f[i]][1]);
    fputs("]]}\n", manifest);
    if (fclose(manifest) != 0)
        die("manifest");
}

/* ------------------------------------------------------ stuck recording -- */

/*
 * stuck  OUT is a directory (created): recording "rec-S" (pid 700, host hostS) in
 *        two chunks, lock waits as the agent writes them while they are in
 *        progress (kind lock.waiting at each flush; include/ringprof/events.h)
 *        and when they end (kind lock, with "reported"); times in ms after the
 *        recording's start, waits on stacks of the waits recording:
 *          A  worker-1 (tid 501) on app.Ledger (Ledger.post), owner worker-2,
 *             from 1000: in progress at 2000 and 3000 (chunk 0), at 4000 and,
 *             as recording stops, 4500 (chunk 1, waited 3500 so far); never ends;
 *          B  worker-2 (502) on app.Cache (Cache.get), owner unknown, from 1500:
 *             in progress at 2000 and 3000 (chunk 0), ends after 2200 (chunk 1,
 *             reported);
 *          C  locker (505) on app.Ledger (Ledger.post), owner worker-1, from
 *             1200, ends after 300 before any flush (chunk 0, not reported).
 *        Chunk files: OUT/0.rpc (chunk.seq 0, opened at 0) and OUT/1.rpc (seq 1,
 *        opened at 3500, with its own ids). tests/convert/test_stuck.py holds the
 *        same table as its truth.
 */
static void write_stuck(const char *out)
{
    static const struct {
        int chunk, thread, stack, owner;   /* owner: a thread index, -1 unknown */
        const char *monitor;
        uint64_t start_ms, weight_ms;
        int waiting, reported;             /* kind lock.waiting; "reported"      */
    } recs[] = {
        {0, 0, WS_POST, 1, "app.Ledger", 1000, 1000, 1, 0},
        {0, 1, WS_CACHE, -1, "app.Cache", 1500, 500, 1, 0},
        {0, 4, WS_POST, 0, "app.Ledger", 1200, 300, 0, 0},
        {0, 0, WS_POST, 1, "app.Ledger", 1000, 2000, 1, 0},
        {0, 1, WS_CACHE, -1, "app.Cache", 1500, 1500, 1, 0},
        {1, 0, WS_POST, 1, "app.Ledger", 1000, 3000, 1, 0},
        {1, 1, WS_CACHE, -1, "app.Cache", 1500, 2200, 0, 1},
        {1, 0, WS_POST, 1, "app.Ledger", 1000, 3500, 1, 0},
    };
    const uint64_t wall0 = WALL0 + 7200 * SEC * 6, mono0 = MONO0;
    static const char *const lx[] = RP_LOCK_EXTRA_NAMES;
    if (mkdir(out, 0755) != 0 && errno != EEXIST)
        die(out);
    for (int c = 0; c < 2; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%d.rpc", out, c);
        uint64_t at = c ? 3500 * MS : 0;
        struct rp_chunk_writer *w = open_writer(path, "rec-S", "700", "hostS", wall0 + at,
                                                mono0 + at, c, "interval=10ms,lock=10ms");
        uint32_t klock = rp_chunk_kind(w, RP_KIND_LOCK, "ns", 0, lx, RP_LOCK_NEXTRA);
        uint32_t kwait = rp_chunk_kind(w, RP_KIND_LOCK_WAITING, "ns", 0, lx,
                                       RP_LOCK_WAITING_NEXTRA);
        if (!klock || !kwait)
            die("stuck kinds");
        for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
            if (recs[i].chunk != c)
                continue;
            uint64_t x[RP_LOCK_NEXTRA] = {
                rp_chunk_class(w, rp_chunk_cstring(w, recs[i].monitor)),
                recs[i].owner >= 0 ? wput_thread(w, recs[i].owner) : 0, 10 * MS,
                (uint64_t)recs[i].reported};
            if (rp_chunk_sample(w, recs[i].waiting ? kwait : klock,
                                wput_thread(w, recs[i].thread), mono0 + recs[i].start_ms * MS,
                                wput_stack(w, recs[i].stack), recs[i].weight_ms * MS, x) ||
                rp_chunk_flush(w))
                die("stuck sample");
        }
        if (rp_chunk_close(w) != 0)
            die("close");
    }
}

/* Virtual threads (format 1.1): "vt-a" (#31) runs on both carriers, an
 * unnamed one (#32) on worker-1, "vt-c" (#33) is written unnamed first and
 * named at its second sample (as the agent writes one whose name it learns
 * late); the carriers and main have samples of their own, and vt-a an
 * allocation. The manifest lists each sample with its carrier ("thread", "tid")
 * and its virtual thread ("vthread": id, "vname": its name at the end, null
 * for none). */
static void write_vthreads(const char *out)
{
    const uint64_t mono0 = MONO0, wall0 = WALL0 + 7200 * SEC * 6;
    struct out o = {open_writer(out, "rec-V", "700", "hostV", wall0, mono0, 0,
                                "interval=10ms,alloc=512k"), 0, 0};
    static const char *const alloc_extra[] = {"class", "size", "objects"};
    o.kcpu = rp_chunk_kind(o.w, "cpu", "ns", 10 * MS, NULL, 0);
    o.kalloc = rp_chunk_kind(o.w, "alloc", "bytes", 524288, alloc_extra, 3);
    static const struct { const char *name; uint64_t tid, java_tid; } th[] = {
        {"main", 701, 1}, {"ForkJoinPool-1-worker-1", 702, 21},
        {"ForkJoinPool-1-worker-2", 703, 22}};
    uint32_t tids[3];
    for (int i = 0; i < 3; i++)
        tids[i] = rp_chunk_thread(o.w, (uint64_t)i, th[i].tid, th[i].java_tid, th[i].name,
                                  RP_THREAD_JAVA | (i ? RP_THREAD_DAEMON : 0), mono0);
    /* thread index, vthread id (0: none), its name now, stack, weight in ms */
    static const struct { int thread; uint64_t vt; const char *vname; int stack, ms; } s[] = {
        {1, 31, "vt-a", S1, 10}, {1, 31, "vt-a", S1, 10}, {1, 32, NULL, S2, 10},
        {1, 0, NULL, S4, 10}, {2, 31, "vt-a", S1, 20}, {2, 31, "vt-a", S3, 10},
        {2, 33, NULL, S1, 10}, {0, 0, NULL, S3, 10}, {2, 0, NULL, S4, 10},
        {2, 33, "vt-c", S1, 10}, {1, 31, "vt-a", S2, 10}, {0, 0, NULL, S3, 30},
    };
    uint64_t t = mono0;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        t += 10 * MS;
        uint32_t vt = s[i].vt ? rp_chunk_vthread(o.w, s[i].vt, s[i].vname, t) : 0;
        if ((s[i].vt && !vt) ||
            rp_chunk_sample_vt(o.w, o.kcpu, tids[s[i].thread], vt, t, put_stack(o.w, s[i].stack),
                               (uint64_t)s[i].ms * MS, NULL))
            die("vthreads sample");
        if (manifest) {
            manifest_open(wall0 + t - mono0, th[s[i].thread].tid, th[s[i].thread].name, "cpu",
                          (uint64_t)s[i].ms * MS, 0, NULL, s[i].stack);
            fprintf(manifest, ", \"vthread\": %llu, \"vname\": ", (unsigned long long)s[i].vt);
            const char *last = s[i].vt == 33 ? "vt-c" : s[i].vname;
            if (last)
                json_str(manifest, last);
            else
                fputs("null", manifest);
            fputc('}', manifest);
        }
        if (i == 5 && rp_chunk_flush(o.w) != 0)
            die("vthreads flush");
    }
    uint64_t x[3] = {rp_chunk_class(o.w, rp_chunk_cstring(o.w, "byte[]")), 1024, 512};
    t += 10 * MS;
    if (rp_chunk_sample_vt(o.w, o.kalloc, tids[2], rp_chunk_vthread(o.w, 31, "vt-a", t), t,
                           put_stack(o.w, S1), 524288, x))
        die("vthreads alloc");
    if (manifest) {
        manifest_open(wall0 + t - mono0, th[2].tid, th[2].name, "alloc", 524288, 512,
                      "byte[]", S1);
        fputs(", \"size\": 1024, \"vthread\": 31, \"vname\": \"vt-a\"}", manifest);
    }
    if (rp_chunk_close(o.w) != 0)
        die("close");
    manifest_end("rec-V", NULL);
}

/* ---------------------------------------------------- views recording -- */

/*
 * Variant "views" (OUT is a chunk file): recording "rec-V" (pid 700, host hostV,
 * host.cpus 2), 5 s from WALL0 + 12 h, made as with interval=10ms,wall=100ms,
 * telemetry=1s, for the JDK's `jfr view`s of its JFR. Threads main (tid 701),
 * worker (702, a daemon), "GC Thread#0" (703, not a Java thread) and attached
 * (704, a Java thread with no Java frames). Times below are ms after the start:
 *   cpu (10 ms each)  worker on S1 at 100, 200, .. 3000; worker in the agent's
 *                     allocation callback (S_AGENT) at 3100, 3200, 3300 and
 *                     with a failed walk under Json.parse (S_PARTIAL) at 3400
 *                     and 3500; GC Thread#0 on a failed walk alone (S7) at
 *                     3600; attached without Java frames (S_NO_JAVA) at 3700
 *                     and 3800; main without a stack (S9) at 3900
 *   wall (100 ms)     worker native in FileOutputStream.writeBytes (S_WRITE)
 *                     at 100 .. 600, io there at 700 and 800; main native in
 *                     System.arraycopy (S_COPY) at 100 .. 300, sleeping (S3)
 *                     at 400 .. 800; attached native without Java frames at
 *                     100 .. 1000 (the most native samples of any stack)
 *   gc                id 1 at 1000, 12 ms, 40 MiB after of 128 MiB; id 2 at
 *                     2000, 30 ms, heap unknown (0); id 3 at 3000, 8 ms, 50 MiB
 *   thread CPU        at 0, 1, .. 5 s: worker 400, 600, 400, 600, 400 ms a
 *                     second; GC Thread#0 100 ms a second, then 1100 ms in the
 *                     last (more than the second: a reader caps it); main 20,
 *                     then 30 ms, then 0.5 ms a second; attached none
 *   gauges            at 0, 1, .. 5 s: threads.java 3 (4 from 2 s),
 *                     threads.daemon 1, threads.started.total 5 + s,
 *                     threads.peak 4 (5 from 3 s)
 * The manifest lists the samples as main's does (wall samples with state,
 * repeat, cpu_ns, blocker, blocker_owner; gc samples with heap and id), the
 * stacks, the gauge readings {"t", "name", "value"} and the thread CPU readings
 * {"t", "tid", "cpu_ns"}.
 */
enum { V_MAIN, V_WORKER, V_GC, V_ATTACHED, V_THREADS };
static const struct {
    const char *name;
    uint64_t tid, java_tid;
    uint32_t flags;
} vthreads[V_THREADS] = {
    [V_MAIN] = {"main", 701, 1, RP_THREAD_JAVA},
    [V_WORKER] = {"worker", 702, 20, RP_THREAD_JAVA | RP_THREAD_DAEMON},
    [V_GC] = {"GC Thread#0", 703, 0, 0},
    [V_ATTACHED] = {"attached", 704, 21, RP_THREAD_JAVA},
};

/* A run of samples of one thread: `count` of them, `every_ms` apart from at_ms. */
static const struct vgroup {
    int wall, thread, stack, state, count;
    uint64_t at_ms, every_ms;
} vgroups[] = {
    {0, V_WORKER, S1, 0, 30, 100, 100},
    {0, V_WORKER, S_AGENT, 0, 3, 3100, 100},
    {0, V_WORKER, S_PARTIAL, 0, 2, 3400, 100},
    {0, V_GC, S7, 0, 1, 3600, 100},
    {0, V_ATTACHED, S_NO_JAVA, 0, 2, 3700, 100},
    {0, V_MAIN, S9, 0, 1, 3900, 100},
    {1, V_WORKER, S_WRITE, RP_TS_NATIVE, 6, 100, 100},
    {1, V_WORKER, S_WRITE, RP_TS_IO, 2, 700, 100},
    {1, V_MAIN, S_COPY, RP_TS_NATIVE, 3, 100, 100},
    {1, V_MAIN, S3, RP_TS_SLEEPING, 5, 400, 100},
    {1, V_ATTACHED, S_NO_JAVA, RP_TS_NATIVE, 10, 100, 100},
};

static const struct {
    uint64_t at_ms, pause_ms, used, committed, id;
} vgcs[] = {
    {1000, 12, 40u << 20, 128u << 20, 1}, {2000, 30, 0, 0, 2}, {3000, 8, 50u << 20, 128u << 20, 3},
};

#define V_SECONDS 5
/* Thread CPU (cumulative, ns) of thread t at second k; UINT64_MAX: no reading. */
static uint64_t views_cpu(int t, int k)
{
    uint64_t c = 0;
    for (int j = 0; j < k; j++) {
        switch (t) {
        case V_WORKER: c += (j % 2 ? 600 : 400) * MS; break;
        case V_GC: c += (j == V_SECONDS - 1 ? 1100 : 100) * MS; break;
        case V_MAIN: c += j == 0 ? 20 * MS : j == 1 ? 30 * MS : MS / 2; break;
        default: break;
        }
    }
    return t == V_ATTACHED ? UINT64_MAX : c;
}

static const char *const VIEWS_GAUGES[] = {
    RP_GAUGE_THREADS_JAVA, RP_GAUGE_THREADS_DAEMON, RP_GAUGE_THREADS_STARTED,
    RP_GAUGE_THREADS_PEAK};

static uint64_t views_gauge(int g, int k)
{
    switch (g) {
    case 0: return 3 + (k >= 2);
    case 1: return 1;
    case 2: return 5 + (uint64_t)k;
    default: return 4 + (k >= 3);
    }
}

static uint64_t views_wall0(void)
{
    return WALL0 + 12 * 3600 * SEC;
}

static void views_manifest_extra(FILE *f)
{
    fputs(", \"gauges\": [", f);
    for (int k = 0, first = 1; k <= V_SECONDS; k++)
        for (int g = 0; g < 4; g++, first = 0)
            fprintf(f, "%s\n  {\"t\": %llu, \"name\": \"%s\", \"value\": %llu}",
                    first ? "" : ",", (unsigned long long)(views_wall0() + (uint64_t)k * SEC),
                    VIEWS_GAUGES[g], (unsigned long long)views_gauge(g, k));
    fputs("\n], \"thread_cpu\": [", f);
    for (int k = 0, first = 1; k <= V_SECONDS; k++)
        for (int t = 0; t < V_THREADS; t++) {
            uint64_t c = views_cpu(t, k);
            if (c == UINT64_MAX)
                continue;
            fprintf(f, "%s\n  {\"t\": %llu, \"tid\": %llu, \"cpu_ns\": %llu}",
                    first ? "" : ",", (unsigned long long)(views_wall0() + (uint64_t)k * SEC),
                    (unsigned long long)vthreads[t].tid, (unsigned long long)c);
            first = 0;
        }
    fputs("\n]", f);
}

static void views_sample(struct rp_chunk_writer *w, const uint32_t kind[2],
                         const uint32_t *th, const struct vgroup *g, uint64_t ms)
{
    const uint64_t mono0 = MONO0, wall0 = views_wall0();
    uint64_t weight = (g->wall ? 100 : 10) * MS;
    uint64_t x[RP_WALL_NEXTRA] = {(uint64_t)g->state, 0x400005, 'S'};
    if (rp_chunk_sample(w, kind[g->wall], th[g->thread], mono0 + ms * MS, put_stack(w, g->stack),
                        weight, g->wall ? x : NULL) != 0)
        die("views sample");
    if (!manifest)
        return;
    manifest_open(wall0 + ms * MS, vthreads[g->thread].tid, vthreads[g->thread].name,
                  g->wall ? "wall" : "cpu", weight, 0, NULL, g->stack);
    if (g->wall)
        fprintf(manifest, ", \"state\": \"%s\", \"repeat\": 0, \"cpu_ns\": 0, "
                "\"blocker\": null, \"blocker_owner\": null",
                rp_thread_state_name((unsigned)g->state));
    fputc('}', manifest);
}

static void views_gc(struct rp_chunk_writer *w, uint32_t kgc, size_t i)
{
    uint64_t x[3] = {vgcs[i].used, vgcs[i].committed, vgcs[i].id};
    if (rp_chunk_sample(w, kgc, 0, MONO0 + vgcs[i].at_ms * MS, 0, vgcs[i].pause_ms * MS, x))
        die("views gc");
    if (tl_entry())
        fprintf(manifest, "{\"kind\": \"gc\", \"t\": %llu, \"weight\": %llu, "
                "\"heap_used\": %llu, \"heap_committed\": %llu, \"id\": %llu}",
                (unsigned long long)(views_wall0() + vgcs[i].at_ms * MS),
                (unsigned long long)(vgcs[i].pause_ms * MS), (unsigned long long)x[0],
                (unsigned long long)x[1], (unsigned long long)x[2]);
}

static void write_views(const char *out)
{
    host_cpus = "2";
    struct rp_chunk_writer *w = open_writer(out, "rec-V", "700", "hostV", views_wall0(), MONO0,
                                            0, "interval=10ms,wall=100ms,telemetry=1s");
    static const char *const wall_x[] = RP_WALL_EXTRA_NAMES;
    static const char *const gc_x[] = {"heap_used", "heap_committed", "id"};
    uint32_t kind[2] = {rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0),
                        rp_chunk_kind(w, RP_KIND_WALL, "ns", 100 * MS, wall_x, RP_WALL_NEXTRA)};
    uint32_t kgc = rp_chunk_kind(w, "gc", "ns", 0, gc_x, 3);
    if (!kind[0] || !kind[1] || !kgc)
        die("views kinds");
    uint32_t th[V_THREADS];
    for (int t = 0; t < V_THREADS; t++)
        if (!(th[t] = rp_chunk_thread(w, (uint64_t)t + 1, vthreads[t].tid, vthreads[t].java_tid,
                                      vthreads[t].name, vthreads[t].flags, MONO0)))
            die("views thread");
    for (uint64_t ms = 0; ms <= V_SECONDS * 1000; ms += 100) {
        if (ms % 1000 == 0) {
            int k = (int)(ms / 1000);
            for (int g = 0; g < 4; g++)
                if (rp_chunk_gauge(w, VIEWS_GAUGES[g], MONO0 + ms * MS, views_gauge(g, k)))
                    die("views gauge");
            for (int t = 0; t < V_THREADS; t++)
                if (views_cpu(t, k) != UINT64_MAX &&
                    rp_chunk_thread_cpu(w, th[t], MONO0 + ms * MS, views_cpu(t, k)))
                    die("views thread cpu");
        }
        for (size_t i = 0; i < sizeof vgcs / sizeof vgcs[0]; i++)
            if (vgcs[i].at_ms == ms)
                views_gc(w, kgc, i);
        for (size_t i = 0; i < sizeof vgroups / sizeof vgroups[0]; i++) {
            const struct vgroup *g = &vgroups[i];
            if (ms >= g->at_ms && ms < g->at_ms + (uint64_t)g->count * g->every_ms &&
                (ms - g->at_ms) % g->every_ms == 0)
                views_sample(w, kind, th, g, ms);
        }
        if (ms % 1000 == 0 && rp_chunk_flush(w) != 0)
            die("views flush");
    }
    if (rp_chunk_close(w) != 0)
        die("close");
    manifest_end("rec-V", views_manifest_extra);
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--manifest"))) {
        fprintf(stderr, "usage: rp_testwriter main|other|split|heap|churn|waits|timeline|fleet|fleet-main|"
                        "timeline-many|timeline-short|cpp|rename|stuck|vthreads|views|"
                        "diff-base|diff-new|diff-one|overloads|overloads-new OUT "
                        "[--manifest FILE]\n");
        return 2;
    }
    if (argc == 5) {
        if (!(manifest = fopen(argv[4], "w")))
            die(argv[4]);
        fputs("{\"samples\": [", manifest);
    }
    static const struct rp_kv fleet[] = {
        {RP_META_SERVICE, "checkout"},
        {RP_META_LABELS, "env:prod;team:payments;url:http://x:1"},
        {RP_META_JVM_MAIN, "/opt/app/checkout.jar"},
        {RP_META_JVM_VENDOR, "Test Vendor"},
        {RP_META_JVM_VERSION, "17.0.99+1"},
        {RP_META_RUNTIME_NAME, "Test Runtime Environment"},
        {RP_META_RUNTIME_VERSION, "17.0.99+1-test"},
    };
    static const struct rp_kv fleet_main[] = {{RP_META_JVM_MAIN, "/opt/app/billing.jar"}};
    if (!strcmp(argv[1], "fleet")) {
        extra_meta = fleet;
        n_extra_meta = sizeof fleet / sizeof fleet[0];
    } else if (!strcmp(argv[1], "fleet-main")) {
        extra_meta = fleet_main;
        n_extra_meta = 1;
    }
    if (!strcmp(argv[1], "main") || !strncmp(argv[1], "fleet", 5))
        write_a(argv[2], 0);
    else if (!strcmp(argv[1], "split"))
        write_a(argv[2], 1);
    else if (!strcmp(argv[1], "other"))
        write_b(argv[2]);
    else if (!strcmp(argv[1], "heap") || !strcmp(argv[1], "churn"))
        write_heap(argv[2], !strcmp(argv[1], "churn"));
    else if (!strcmp(argv[1], "waits") || !strcmp(argv[1], "waits-old"))
        write_waits(argv[2], !strcmp(argv[1], "waits-old"));
    else if (!strcmp(argv[1], "timeline") || !strcmp(argv[1], "timeline-short"))
        write_timeline(argv[2], !strcmp(argv[1], "timeline-short"));
    else if (!strcmp(argv[1], "timeline-many"))
        write_timeline_many(argv[2]);
    else if (!strcmp(argv[1], "cpp"))
        write_cpp(argv[2]);
    else if (!strcmp(argv[1], "rename"))
        write_rename(argv[2]);
    else if (!strcmp(argv[1], "stuck"))
        write_stuck(argv[2]);
    else if (!strcmp(argv[1], "vthreads"))
        write_vthreads(argv[2]);
    else if (!strcmp(argv[1], "views"))
        write_views(argv[2]);
    else if (!strncmp(argv[1], "diff-", 5))
        write_diff(argv[2], argv[1]);
    else if (!strcmp(argv[1], "overloads") || !strcmp(argv[1], "overloads-new"))
        write_overloads(argv[2], !strcmp(argv[1], "overloads-new"));
    else {
        fprintf(stderr, "rp_testwriter: unknown variant '%s'\n", argv[1]);
        return 2;
    }
    return 0;
}
