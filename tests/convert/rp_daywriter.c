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
 * (default 3000) distinct stacks, 15 to 40 frames deep below a pool's own entry
 * frames, sharing root-side chains, drawn Zipf(1.1) within each pool; 10% of them
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
 * where "frame" names the method every incident stack holds and nothing else
 * does, so a test can find the incident's samples without this program's help.
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

#define WALL0      1795219200000000000ull   /* 2026-11-21T00:00:00Z */
#define MONO0      1000000000000ull
#define MS         1000000ull
#define SEC        1000000000ull
#define DRAIN      (100 * MS)               /* the flusher's pass                */
#define SLOT       (10 * MS)                /* interval=10ms                     */
#define ALLOC_I    524288.0                 /* alloc=512k                        */
#define CHUNK_TIME (3600 * SEC)             /* chunktime=1h                      */
#define PID        4242
#define MAXDEPTH   64
#define IDLE       16

static void die(const char *what)
{
    fprintf(stderr, "rp_daywriter: %s: %s\n", what, strerror(errno ? errno : EINVAL));
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die("calloc");
    return p;
}

/* ------------------------------------------------------------ randomness -- */

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Uniform in [0, 1). */
static double unit(void)
{
    return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
}

static uint32_t below(uint32_t n)
{
    return (uint32_t)(((rnd() >> 32) * n) >> 32);
}

/* A value in [0, 1) fixed by (seed, a, b): the minute-to-minute noise. */
static double hash_unit(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ a * 0xbf58476d1ce4e5b9ull ^ b;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* ----------------------------------------------------------------- frames -- */

struct frame {
    char *klass, *name;
    enum rp_frame_type type;
    uint32_t line;
};

static struct frame *frames;
static uint32_t nframes, frames_cap;

static uint32_t add_frame(const char *klass, const char *name, enum rp_frame_type type,
                          uint32_t line)
{
    if (nframes == frames_cap) {
        frames_cap = frames_cap ? frames_cap * 2 : 1024;
        frames = realloc(frames, frames_cap * sizeof *frames);
        if (!frames)
            die("realloc");
    }
    frames[nframes] = (struct frame){strdup(klass), strdup(name), type, line};
    if (!frames[nframes].klass || !frames[nframes].name)
        die("strdup");
    return nframes++;
}

/* "Class.method" pairs, written as one string each. */
static uint32_t add_java(const char *qualified, enum rp_frame_type type, uint32_t line)
{
    const char *dot = strrchr(qualified, '.');
    char klass[160];
    snprintf(klass, sizeof klass, "%.*s", (int)(dot - qualified), qualified);
    return add_frame(klass, dot + 1, type, line);
}

static uint32_t add_list(const char *const *names, size_t n, enum rp_frame_type type,
                         uint32_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = add_java(names[i], type, 40 + 13 * (uint32_t)i);
    return (uint32_t)n;
}

/* Native frames are "library|symbol" (C++ symbols mangled, as recorded). */
static uint32_t add_native(const char *spec, enum rp_frame_type type)
{
    const char *bar = strchr(spec, '|');
    char lib[64];
    snprintf(lib, sizeof lib, "%.*s", (int)(bar - spec), spec);
    return add_frame(lib, bar + 1, type, 0);
}

static const char *const ROOT_HTTP[] = {
    "java.lang.Thread.run", "org.apache.tomcat.util.threads.TaskThread$WrappingRunnable.run",
    "java.util.concurrent.ThreadPoolExecutor$Worker.run",
    "java.util.concurrent.ThreadPoolExecutor.runWorker",
    "org.apache.tomcat.util.net.SocketProcessorBase.run",
    "org.apache.tomcat.util.net.NioEndpoint$SocketProcessor.doRun",
    "org.apache.coyote.AbstractProtocol$ConnectionHandler.process",
    "org.apache.coyote.http11.Http11Processor.service",
    "org.apache.catalina.connector.CoyoteAdapter.service",
    "org.apache.catalina.core.StandardEngineValve.invoke",
    "org.apache.catalina.core.ApplicationFilterChain.doFilter",
    "org.springframework.web.servlet.FrameworkServlet.service",
    "org.springframework.web.servlet.DispatcherServlet.doDispatch",
    "org.springframework.web.method.support.InvocableHandlerMethod.invokeForRequest"};
static const char *const ROOT_KAFKA[] = {
    "java.lang.Thread.run",
    "org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.run",
    "org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.pollAndInvoke",
    "org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.doInvokeRecordListener",
    "org.springframework.kafka.listener.adapter.RecordMessagingMessageListenerAdapter.onMessage",
    "org.springframework.messaging.handler.invocation.InvocableHandlerMethod.invoke"};
static const char *const ROOT_BATCH[] = {
    "java.lang.Thread.run", "java.util.concurrent.ThreadPoolExecutor$Worker.run",
    "java.util.concurrent.ThreadPoolExecutor.runWorker",
    "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask.run",
    "org.springframework.scheduling.support.DelegatingErrorHandlingRunnable.run",
    "org.springframework.scheduling.support.ScheduledMethodRunnable.run"};
static const char *const LIBRARY[] = {
    "java.util.HashMap.getNode", "java.util.HashMap.putVal", "java.util.HashMap.resize",
    "java.util.ArrayList.forEach", "java.util.ArrayList.grow",
    "java.util.stream.ReferencePipeline$3$1.accept",
    "java.util.stream.AbstractPipeline.copyInto", "java.util.stream.AbstractPipeline.evaluate",
    "java.lang.String.hashCode", "java.lang.String.equals", "java.lang.String.format",
    "java.lang.StringBuilder.append", "java.lang.StringBuilder.toString",
    "com.fasterxml.jackson.databind.ObjectMapper.writeValueAsString",
    "com.fasterxml.jackson.databind.ObjectMapper.readValue",
    "com.fasterxml.jackson.databind.ser.BeanSerializer.serialize",
    "com.fasterxml.jackson.databind.ser.std.BeanSerializerBase.serializeFields",
    "com.fasterxml.jackson.core.json.UTF8JsonGenerator.writeString",
    "com.fasterxml.jackson.databind.deser.BeanDeserializer.deserialize",
    "org.hibernate.internal.SessionImpl.find", "org.hibernate.internal.SessionImpl.flush",
    "org.hibernate.loader.ast.internal.SingleIdLoadPlan.load",
    "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeQuery",
    "org.postgresql.jdbc.PgPreparedStatement.executeQuery",
    "org.postgresql.core.v3.QueryExecutorImpl.execute",
    "org.postgresql.core.v3.QueryExecutorImpl.processResults",
    "org.postgresql.core.PGStream.receiveTupleV3",
    "org.springframework.aop.framework.CglibAopProxy$DynamicAdvisedInterceptor.intercept",
    "org.springframework.aop.framework.ReflectiveMethodInvocation.proceed",
    "org.springframework.transaction.interceptor.TransactionInterceptor.invoke",
    "org.springframework.cache.interceptor.CacheInterceptor.invoke",
    "io.micrometer.core.instrument.AbstractTimer.record",
    "ch.qos.logback.classic.Logger.info", "ch.qos.logback.core.OutputStreamAppender.writeBytes",
    "java.time.format.DateTimeFormatter.format", "java.math.BigDecimal.multiply",
    "java.math.BigDecimal.setScale", "java.util.UUID.randomUUID",
    "java.security.MessageDigest.digest", "sun.security.provider.SHA2.implCompress",
    "java.util.concurrent.ConcurrentHashMap.get",
    "java.util.concurrent.ConcurrentHashMap.computeIfAbsent",
    "io.netty.buffer.AbstractByteBuf.writeBytes",
    "org.apache.kafka.clients.producer.KafkaProducer.send"};
static const char *const LEAVES[] = {
    "libc.so.6|__memmove_avx_unaligned_erms", "[vm stub]|jbyte_disjoint_arraycopy",
    "[vm stub]|updateBytesCRC32C", "libjvm.so|_ZN13ObjectMonitor6EnterIEP10JavaThread",
    "libz.so.1|deflate", "libc.so.6|__memset_avx2_unaligned_erms"};
static const char *const ROOT_NATIVE[] = {
    "libc.so.6|clone3", "libc.so.6|start_thread", "libjvm.so|thread_native_entry",
    "libjvm.so|_ZN6Thread8call_runEv"};
static const char *const JIT_ROOT[] = {
    "libjvm.so|_ZN10JavaThread3runEv", "libjvm.so|_ZN13CompileBroker20compiler_thread_loopEv",
    "libjvm.so|_ZN13CompileBroker25invoke_compiler_on_methodEP11CompileTask"};
static const char *const JIT_BODY[] = {
    "libjvm.so|_ZN7Compile8OptimizeEv", "libjvm.so|_ZN7Compile8Code_GenEv",
    "libjvm.so|_ZN14PhaseIdealLoop18build_and_optimizeEv", "libjvm.so|_ZN9PhaseIGVN8optimizeEv",
    "libjvm.so|_ZN7Matcher5matchEv", "libjvm.so|_ZN12PhaseChaitin17Register_AllocateEv",
    "libjvm.so|_ZN12PhaseIterGVN13transform_oldEP4Node",
    "libjvm.so|_ZN8PhaseCFG21do_global_code_motionEv",
    "libjvm.so|_ZN14PhaseIdealLoop20split_if_with_blocksEv"};
static const char *const GC_ROOT[] = {
    "libjvm.so|_ZN12WorkerThread3runEv", "libjvm.so|_ZN21G1EvacuateRegionsTask4workEj"};
static const char *const GC_BODY[] = {
    "libjvm.so|_ZN29G1ParEvacuateFollowersClosure7do_voidEv",
    "libjvm.so|_ZN20G1ParScanThreadState18trim_queue_to_sizeEv",
    "libjvm.so|_ZN20G1ParScanThreadState25do_copy_to_survivor_spaceEv",
    "libjvm.so|_ZN8G1RemSet15scan_heap_rootsEv"};
static const char *const MODULES[] = {"orders", "catalog", "pricing", "payments", "search",
                                      "inventory", "users", "cart", "shipping", "reviews"};
static const struct { const char *layer, *methods[6]; } LAYERS[] = {
    {"Controller", {"get", "list", "create", "update", "handle"}},
    {"Service", {"find", "save", "validate", "compute", "apply", "process"}},
    {"Repository", {"findById", "findAll", "save", "query", "load"}},
    {"Mapper", {"toDto", "fromDto", "map"}}, {"Validator", {"validate", "check"}},
    {"Client", {"call", "fetch", "send"}}, {"Cache", {"get", "put", "load"}},
    {"Events", {"publish", "onEvent"}}};
/* The incident's stack below the http entry frames: catastrophic backtracking. */
static const char *const INCIDENT[] = {
    "com.example.shop.pricing.PricingController.quote",
    "com.example.shop.pricing.PricingService.price",
    "com.example.shop.pricing.PromotionRules.evaluate",
    "com.example.shop.pricing.PromotionRules.matchCoupon", "java.util.regex.Matcher.matches",
    "java.util.regex.Matcher.match", "java.util.regex.Pattern$Start.match"};
#define INCIDENT_FRAME "com.example.shop.pricing.PromotionRules.matchCoupon"

#define N(a) (sizeof a / sizeof a[0])

static struct {
    uint32_t http[N(ROOT_HTTP)], kafka[N(ROOT_KAFKA)], batch[N(ROOT_BATCH)];
    uint32_t lib[N(LIBRARY)], leaf[N(LEAVES)], nroot[N(ROOT_NATIVE)];
    uint32_t jit_root[N(JIT_ROOT)], jit[N(JIT_BODY)], gc_root[N(GC_ROOT)], gc[N(GC_BODY)];
    uint32_t incident[N(INCIDENT)], loop, group, leaf_match, matcher_new, pattern_matcher;
    uint32_t *service;               /* [module][k]: a module's frames */
    uint32_t nservice;               /* per module */
} F;

static void make_frames(void)
{
    add_list(ROOT_HTTP, N(ROOT_HTTP), RP_FRAME_JIT, F.http);
    add_list(ROOT_KAFKA, N(ROOT_KAFKA), RP_FRAME_JIT, F.kafka);
    add_list(ROOT_BATCH, N(ROOT_BATCH), RP_FRAME_JIT, F.batch);
    frames[F.http[0]].type = frames[F.kafka[0]].type = frames[F.batch[0]].type =
        RP_FRAME_INTERPRETED;
    add_list(LIBRARY, N(LIBRARY), RP_FRAME_JIT, F.lib);
    for (size_t i = 0; i < N(LIBRARY); i += 3)
        frames[F.lib[i]].type = RP_FRAME_INLINED;
    for (size_t i = 0; i < N(LEAVES); i++)
        F.leaf[i] = add_native(LEAVES[i], LEAVES[i][0] == 'l' && strncmp(LEAVES[i], "libjvm", 6)
                                              ? RP_FRAME_NATIVE : RP_FRAME_CPP);
    for (size_t i = 0; i < N(ROOT_NATIVE); i++)
        F.nroot[i] = add_native(ROOT_NATIVE[i], i < 2 ? RP_FRAME_NATIVE : RP_FRAME_CPP);
    for (size_t i = 0; i < N(JIT_ROOT); i++)
        F.jit_root[i] = add_native(JIT_ROOT[i], RP_FRAME_CPP);
    for (size_t i = 0; i < N(JIT_BODY); i++)
        F.jit[i] = add_native(JIT_BODY[i], RP_FRAME_CPP);
    for (size_t i = 0; i < N(GC_ROOT); i++)
        F.gc_root[i] = add_native(GC_ROOT[i], RP_FRAME_CPP);
    for (size_t i = 0; i < N(GC_BODY); i++)
        F.gc[i] = add_native(GC_BODY[i], RP_FRAME_CPP);
    add_list(INCIDENT, N(INCIDENT), RP_FRAME_JIT, F.incident);
    F.loop = add_java("java.util.regex.Pattern$Loop.match", RP_FRAME_JIT, 4785);
    F.group = add_java("java.util.regex.Pattern$GroupHead.match", RP_FRAME_JIT, 4712);
    F.leaf_match = add_java("java.util.regex.Pattern$CharPropertyGreedy.match",
                            RP_FRAME_JIT, 4374);
    F.pattern_matcher = add_java("java.util.regex.Pattern.matcher", RP_FRAME_JIT, 1134);
    F.matcher_new = add_java("java.util.regex.Matcher.<init>", RP_FRAME_JIT, 252);
    /* Two lines of every method of every layer of every module. */
    uint32_t per = 0;
    for (size_t l = 0; l < N(LAYERS); l++)
        for (size_t m = 0; m < 6 && LAYERS[l].methods[m]; m++)
            per += 2;
    F.nservice = per;
    F.service = xcalloc(N(MODULES) * per, sizeof *F.service);
    for (size_t mod = 0; mod < N(MODULES); mod++) {
        uint32_t k = 0;
        for (size_t l = 0; l < N(LAYERS); l++)
            for (size_t m = 0; m < 6 && LAYERS[l].methods[m]; m++)
                for (uint32_t line = 0; line < 2; line++) {
                    char klass[96];
                    snprintf(klass, sizeof klass, "com.example.shop.%s.%c%s%s", MODULES[mod],
                             MODULES[mod][0] - 32, MODULES[mod] + 1, LAYERS[l].layer);
                    F.service[mod * per + k++] =
                        add_frame(klass, LAYERS[l].methods[m], RP_FRAME_JIT,
                                  30 + 17 * (uint32_t)m + 9 * line + 100 * (uint32_t)l);
                }
    }
}

/* ----------------------------------------------------------------- stacks -- */

/* Allocation sites: a class and how big its objects are (an array's length
 * picked among four). */
static const struct { const char *name; uint32_t elem, base; uint32_t len[4]; } CLASSES[] = {
    {"byte[]", 1, 16, {32, 128, 1024, 8192}},     {"java.lang.String", 0, 24, {0}},
    {"java.lang.Object[]", 4, 16, {10, 16, 64, 256}}, {"java.util.HashMap$Node", 0, 32, {0}},
    {"java.util.HashMap$Node[]", 4, 16, {16, 64, 256, 1024}},
    {"java.util.ArrayList", 0, 24, {0}},          {"java.lang.StringBuilder", 0, 24, {0}},
    {"com.example.shop.orders.OrderLine", 0, 40, {0}},
    {"com.example.shop.catalog.ProductDto", 0, 48, {0}}, {"java.math.BigDecimal", 0, 40, {0}},
    {"int[]", 4, 16, {8, 64, 512, 4096}},         {"java.time.LocalDateTime", 0, 24, {0}},
    {"org.hibernate.engine.spi.EntityKey", 0, 32, {0}},
    {"byte[]", 1, 16, {262144, 1048576, 1048576, 4194304}}};
#define NCLASSES N(CLASSES)
#define CLASS_INT_ARRAY 10

struct site {
    uint64_t size, weight, length1;   /* length1: array length + 1, 0: not an array */
    uint32_t objects;                 /* 1/p rounded down                           */
    double frac;                      /* its fraction, rounded up at that rate      */
};
static struct site sites[NCLASSES][4];

static void make_sites(void)
{
    for (size_t c = 0; c < NCLASSES; c++)
        for (int v = 0; v < 4; v++) {
            uint64_t len = CLASSES[c].len[v], size = CLASSES[c].base + CLASSES[c].elem * len;
            size = (size + 7) & ~7ull;
            double inv = -1 / expm1(-(double)size / ALLOC_I);
            sites[c][v] = (struct site){size, (uint64_t)llround((double)size * inv),
                                        CLASSES[c].elem ? len + 1 : 0, (uint32_t)inv,
                                        inv - floor(inv)};
        }
}

struct stack {
    uint8_t n;                        /* frames, root first            */
    uint8_t klass;                    /* its allocation class           */
    uint32_t f[MAXDEPTH];
};
/* What a sample needs of its stack, apart from the frames (cache lines). */
struct stack_info {
    uint32_t java;                    /* the stack its allocations use  */
    uint8_t klass;
    uint8_t native;                   /* its leaf is a native frame     */
};
static struct stack *stacks;
static struct stack_info *info;
static uint32_t nstacks, stacks_cap;

static uint32_t add_stack(const struct stack *s)
{
    if (nstacks == stacks_cap) {
        stacks_cap = stacks_cap ? stacks_cap * 2 : 1024;
        stacks = realloc(stacks, stacks_cap * sizeof *stacks);
        info = realloc(info, stacks_cap * sizeof *info);
        if (!stacks || !info)
            die("realloc");
    }
    stacks[nstacks] = *s;
    info[nstacks] = (struct stack_info){nstacks, s->klass,
                                        frames[s->f[s->n - 1]].type > RP_FRAME_INLINED};
    return nstacks++;
}

/* A pool's stacks and its Zipf(1.1) draw (Vose's alias table). */
struct pool {
    const char *name;
    uint32_t first, n;                /* stacks [first, first + n)     */
    uint32_t *alias, *cut;            /* cut: probability, 2^32 scale  */
};

enum { P_HTTP, P_KAFKA, P_BATCH, P_JIT, P_GC, P_INCIDENT, P_ALLOC_INCIDENT, P_COUNT };
static struct pool pools[P_COUNT];

static void make_alias(struct pool *p)
{
    uint32_t n = p->n;
    double *q = xcalloc(n, sizeof *q), sum = 0;
    uint32_t *small = xcalloc(n, sizeof *small), *large = xcalloc(n, sizeof *large);
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += q[i] = 1 / pow(i + 1, 1.1);
    for (uint32_t i = 0; i < n; i++)
        if ((q[i] *= n / sum) < 1)
            small[ns++] = i;
        else
            large[nl++] = i;
    p->alias = xcalloc(n, sizeof *p->alias);
    p->cut = xcalloc(n, sizeof *p->cut);
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[nl - 1];
        p->cut[s] = (uint32_t)(q[s] * 4294967295.0);
        p->alias[s] = l;
        if ((q[l] -= 1 - q[s]) < 1)
            nl--, small[ns++] = l;
    }
    while (nl)
        p->cut[large[--nl]] = UINT32_MAX, p->alias[large[nl]] = large[nl];
    while (ns)
        p->cut[small[--ns]] = UINT32_MAX, p->alias[small[ns]] = small[ns];
    free(q), free(small), free(large);
}

static uint32_t draw(const struct pool *p)
{
    uint64_t r = rnd();
    uint32_t i = (uint32_t)(((r >> 32) * p->n) >> 32);
    return p->first + ((uint32_t)r <= p->cut[i] ? i : p->alias[i]);
}

/* The Java part of stack i (leaf side cut to its first Java frame). */
static void java_part(uint32_t i)
{
    struct stack s = stacks[i];
    while (s.n && frames[s.f[s.n - 1]].type > RP_FRAME_INLINED)
        s.n--;
    info[i].java = add_stack(&s);
}

/* A service stack: the pool's entry frames, then a walk through one module's
 * frames and the libraries, sharing a root-side chain with an earlier stack. */
static void service_stacks(struct pool *p, const uint32_t *root, uint32_t nroot, uint32_t n)
{
    p->first = nstacks;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t klass = below(50) ? below(NCLASSES - 1) : NCLASSES - 1;
        struct stack s = {.n = (uint8_t)nroot, .klass = (uint8_t)klass};
        memcpy(s.f, root, nroot * sizeof *root);
        uint32_t depth = 15 + below(26);
        depth = depth > nroot ? depth : nroot + 1;
        if (i) {   /* a prefix of an earlier stack, its native leaf left out */
            const struct stack *o = &stacks[p->first + below(i)];
            uint32_t keep = nroot + below(o->n - nroot);
            keep = keep < depth ? keep : depth - 1;
            memcpy(s.f, o->f, keep * sizeof *o->f);
            s.n = (uint8_t)keep;
        }
        uint32_t mod = below(N(MODULES)) < 4 ? below(3) : below(N(MODULES));
        while (s.n < depth)
            s.f[s.n++] = below(10) < 7 ? F.service[mod * F.nservice + below(F.nservice)]
                                       : F.lib[below(N(LIBRARY))];
        if (below(10) == 0)
            s.f[s.n++] = F.leaf[below(N(LEAVES))];
        add_stack(&s);
    }
    p->n = n;
    for (uint32_t i = 0; i < n; i++)
        if (info[p->first + i].native)
            java_part(p->first + i);
    make_alias(p);
}

/* The JIT's and GC's stacks: a native entry, then C++ frames. */
static void native_stacks(struct pool *p, const uint32_t *root, uint32_t nroot,
                          const uint32_t *body, uint32_t nbody, uint32_t n, uint32_t lo,
                          uint32_t span)
{
    p->first = nstacks;
    for (uint32_t i = 0; i < n; i++) {
        struct stack s = {.n = 0};
        for (uint32_t k = 0; k < N(ROOT_NATIVE); k++)
            s.f[s.n++] = F.nroot[k];
        for (uint32_t k = 0; k < nroot; k++)
            s.f[s.n++] = root[k];
        uint32_t depth = lo + below(span);
        while (s.n < depth)
            s.f[s.n++] = body[below(nbody)];
        add_stack(&s);
    }
    p->n = n;
    make_alias(p);
}

/* The incident's stacks: backtracking 8 to 20 levels deep, and its allocation. */
static void incident_stacks(void)
{
    struct pool *p = &pools[P_INCIDENT];
    p->first = nstacks;
    for (uint32_t i = 0; i < 6; i++) {
        struct stack s = {.n = 0, .klass = CLASS_INT_ARRAY};
        memcpy(s.f, F.http, sizeof F.http);
        s.n = N(ROOT_HTTP);
        for (uint32_t k = 0; k < N(INCIDENT); k++)
            s.f[s.n++] = F.incident[k];
        for (uint32_t k = 0; k < 3 + i; k++) {
            s.f[s.n++] = F.loop;
            s.f[s.n++] = F.group;
        }
        s.f[s.n++] = F.leaf_match;
        add_stack(&s);
    }
    p->n = 6;
    make_alias(p);
    struct pool *a = &pools[P_ALLOC_INCIDENT];
    struct stack s = {.n = N(ROOT_HTTP), .klass = CLASS_INT_ARRAY};
    memcpy(s.f, F.http, sizeof F.http);
    for (uint32_t k = 0; k < 4; k++)
        s.f[s.n++] = F.incident[k];
    s.f[s.n++] = F.pattern_matcher;
    s.f[s.n++] = F.matcher_new;
    a->first = add_stack(&s);
    a->n = 1;
    make_alias(a);
}

static void make_stacks(uint32_t total)
{
    uint32_t h = total / 2, k = total / 5, b = total / 8, j = total / 15;
    service_stacks(&pools[P_HTTP], F.http, N(ROOT_HTTP), h);
    service_stacks(&pools[P_KAFKA], F.kafka, N(ROOT_KAFKA), k);
    service_stacks(&pools[P_BATCH], F.batch, N(ROOT_BATCH), b);
    native_stacks(&pools[P_JIT], F.jit_root, N(JIT_ROOT), F.jit, N(JIT_BODY), j, 15, 26);
    native_stacks(&pools[P_GC], F.gc_root, N(GC_ROOT), F.gc, N(GC_BODY),
                  total > h + k + b + j ? total - h - k - b - j : 1, 7, 5);
    incident_stacks();
}

/* ---------------------------------------------------------------- threads -- */

struct thread {
    char name[48];
    uint64_t tid, jtid;
    uint32_t flags;
    int pool;                         /* P_*, or -1: idle                 */
    uint64_t cpu_ns;                  /* its samples' weights, and a start */
    uint64_t cpu_samples;
    uint32_t id;                      /* in the current chunk; 0: none yet */
};
static struct thread *threads;
static uint32_t nthreads;

static void add_thread(const char *name, int pool, uint32_t flags)
{
    struct thread *t = &threads[nthreads];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->tid = PID + 10 + nthreads;
    t->jtid = flags & RP_THREAD_JAVA ? 20 + nthreads : 0;
    t->flags = flags;
    t->pool = pool;
    t->cpu_ns = 50 * MS + 3 * MS * nthreads;
    nthreads++;
}

static void make_threads(uint32_t busy)
{
    threads = xcalloc(busy + IDLE + 8, sizeof *threads);
    uint32_t kafka = busy / 4, batch = busy / 4, http = busy - kafka - batch;
    char name[48];
    const uint32_t java = RP_THREAD_JAVA | RP_THREAD_DAEMON;
    for (uint32_t i = 0; i < http + IDLE / 2; i++) {
        snprintf(name, sizeof name, "http-nio-8080-exec-%u", i + 1);
        add_thread(name, i < http ? P_HTTP : -1, java);
    }
    for (uint32_t i = 0; i < kafka + IDLE / 4; i++) {
        snprintf(name, sizeof name, "kafka-consumer-%u", i + 1);
        add_thread(name, i < kafka ? P_KAFKA : -1, java);
    }
    for (uint32_t i = 0; i < batch + IDLE / 4; i++) {
        snprintf(name, sizeof name, "scheduling-%u", i + 1);
        add_thread(name, i < batch ? P_BATCH : -1, java);
    }
    add_thread("C2 CompilerThread0", P_JIT, RP_THREAD_DAEMON);
    add_thread("GC Thread#0", P_GC, 0);
    add_thread("GC Thread#1", P_GC, 0);
    add_thread("main", -1, RP_THREAD_JAVA);
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
    uint32_t *fid, *sid, cid[NCLASSES];
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
    if (rp_recording_chunk_name(name, sizeof name, PID, WALL0 + now, C.seq) != 0)
        die("chunk name");
    snprintf(path, sizeof path, "%s/%s.rpc", opt.dir, name);
    char err[512];
    C.w = rp_chunk_writer_open(path, meta, N(meta), err, sizeof err);
    if (!C.w) {
        fprintf(stderr, "rp_daywriter: %s\n", err);
        exit(1);
    }
    C.opened = now;
    C.seq++;
    memset(C.fid, 0, nframes * sizeof *C.fid);
    memset(C.sid, 0, nstacks * sizeof *C.sid);
    memset(C.cid, 0, sizeof C.cid);
    for (uint32_t i = 0; i < nthreads; i++)
        threads[i].id = 0;
    static const char *const ax[] = RP_ALLOC_EXTRA_NAMES, *const gx[] = RP_GC_EXTRA_NAMES;
    C.kcpu = rp_chunk_kind(C.w, RP_KIND_CPU, RP_UNIT_NS, SLOT, NULL, 0);
    C.kalloc = rp_chunk_kind(C.w, RP_KIND_ALLOC, RP_UNIT_BYTES, (uint64_t)ALLOC_I, ax,
                             RP_ALLOC_NEXTRA);
    C.kgc = rp_chunk_kind(C.w, RP_KIND_GC, RP_UNIT_NS, 0, gx, RP_GC_NEXTRA);
    if (!C.kcpu || !C.kalloc || !C.kgc)
        die("kind");
}

static void close_chunk(void)
{
    struct rp_chunk_writer_stats st;
    if (rp_chunk_close_stats(C.w, NULL, NULL, &st) != 0)
        die("close");
    C.files++;
    C.bytes += st.bytes_written;
    C.w = NULL;
}

static uint32_t thread_id(struct thread *t, uint64_t now)
{
    if (!t->id && !(t->id = rp_chunk_thread(C.w, (uint64_t)(t - threads), t->tid, t->jtid,
                                            t->name, t->flags, MONO0 + now)))
        die("thread");
    return t->id;
}

static uint32_t frame_id(uint32_t f)
{
    if (C.fid[f])
        return C.fid[f];
    const struct frame *d = &frames[f];
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
        die("frame");
    return C.fid[f];
}

static uint32_t stack_id(uint32_t s)
{
    if (C.sid[s])
        return C.sid[s];
    const struct stack *st = &stacks[s];
    uint32_t leaf_first[MAXDEPTH];
    for (uint32_t i = 0; i < st->n; i++)
        leaf_first[i] = frame_id(st->f[st->n - 1 - i]);
    if (!(C.sid[s] = rp_chunk_stack(C.w, leaf_first, st->n, 0)))
        die("stack");
    return C.sid[s];
}

static uint32_t class_id(uint32_t c)
{
    if (!C.cid[c] && !(C.cid[c] = rp_chunk_class(C.w, rp_chunk_cstring(C.w, CLASSES[c].name))))
        die("class");
    return C.cid[c];
}

/* ---------------------------------------------------------------- samples -- */

static struct {
    uint64_t since_gc;                /* bytes allocated since the last pause */
    uint64_t start, end;              /* the latest pause, ns from the start  */
    uint64_t count, time_ns, old_gen;
    int pending;                      /* started in this pass, not yet written */
} G = {0, 0, 0, 0, 0, 400ull << 20, 0};

static void cpu_sample(struct thread *t, uint64_t when, uint32_t s)
{
    uint64_t weight = below(100) < 3 ? 2 * SLOT : SLOT;   /* timer overruns */
    if (rp_chunk_sample(C.w, C.kcpu, thread_id(t, when), MONO0 + when, stack_id(s), weight,
                        NULL) != 0)
        die("cpu sample");
    t->cpu_ns += weight;
    t->cpu_samples++;
    C.cpu.samples++, C.cpu.weight += weight;
    C.stub_leaves += info[s].native;
    if (s >= pools[P_INCIDENT].first && s < pools[P_INCIDENT].first + pools[P_INCIDENT].n)
        C.inc_cpu.samples++, C.inc_cpu.weight += weight;
}

static void alloc_sample(struct thread *t, uint64_t when, uint32_t s)
{
    const struct stack_info *st = &info[s];
    const struct site *x = &sites[st->klass][below(4)];
    uint64_t extra[RP_ALLOC_NEXTRA] = {class_id(st->klass), x->size,
                                       x->objects + (unit() < x->frac), x->length1};
    if (rp_chunk_sample(C.w, C.kalloc, thread_id(t, when), MONO0 + when, stack_id(st->java),
                        x->weight, extra) != 0)
        die("alloc sample");
    C.alloc.samples++, C.alloc.weight += x->weight;
    G.since_gc += x->weight;
    if (s == pools[P_ALLOC_INCIDENT].first)
        C.inc_alloc.samples++, C.inc_alloc.weight += x->weight;
}

/* Allocation samples in a 10 ms slot on CPU: Poisson, of 40 MB a CPU second
 * (cdf[0]) or twice that (cdf[1], the incident's http threads). */
#define ALLOC_MEAN (40e6 * 0.01 / ALLOC_I)
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
    double u = unit();
    uint32_t n = 0;
    while (u > alloc_cdf[burst][n])
        n++;
    return n;
}

/* A busy Java thread's slots in [t, t + DRAIN): on CPU at the pool's load,
 * stopped while a pause runs; the cpu sample at the slot's end, the slot's
 * allocations before it, in time order. */
static void java_window(struct thread *t, uint64_t t0, double load)
{
    int burst = t->pool == P_HTTP && in_burst(t0);
    for (uint64_t s = t0; s < t0 + DRAIN; s += SLOT) {
        if ((s + SLOT > G.start && s < G.end) || unit() >= load)
            continue;
        uint32_t n = allocs_in_slot(burst);
        uint64_t at = s;
        for (uint32_t i = 0; i < n; i++) {
            at += 1 + below((uint32_t)((s + SLOT - 200000 - at) / (n - i + 1)));
            int inc = burst && below(2);
            alloc_sample(t, at, inc ? pools[P_ALLOC_INCIDENT].first : draw(&pools[t->pool]));
        }
        int inc = burst && below(100) < 45;
        cpu_sample(t, s + SLOT - below(200000), draw(&pools[inc ? P_INCIDENT : t->pool]));
    }
}

/* The JIT's slots at its load; the GC threads' inside pauses. */
static void vm_window(struct thread *t, uint64_t t0, double load)
{
    for (uint64_t s = t0; s < t0 + DRAIN; s += SLOT) {
        int on = t->pool == P_GC ? s + SLOT > G.start && s < G.end && below(20) != 0
                                 : unit() < load;
        if (on)
            cpu_sample(t, s + SLOT - below(200000), draw(&pools[t->pool]));
    }
}

/* A young pause once the allocations since the last one fill eden. */
static void maybe_gc(uint64_t t0)
{
    int burst = in_burst(t0);
    uint64_t eden = (burst ? 384ull : 768ull) << 20;
    if (G.since_gc < eden || t0 < G.end)
        return;
    uint64_t pause = burst ? (80 + below(141)) * MS
                   : G.count % 30 == 29 ? (40 + below(41)) * MS
                   : 4 * MS + (uint64_t)(14e6 * unit() * unit());
    G.start = t0 + rnd() % (DRAIN / 2);
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
        die("gc sample");
    C.gc.samples++, C.gc.weight += pause;
    G.pending = 0;
}

/* ------------------------------------------------------------------ flush -- */

static void gauge(const char *name, uint64_t now, uint64_t v)
{
    if (rp_chunk_gauge(C.w, name, MONO0 + now, v) != 0)
        die("gauge");
}

/* The telemetry pass: the process as the agent reads it, made from the samples. */
static void telemetry(uint64_t now)
{
    uint64_t cpu = 0;
    for (uint32_t i = 0; i < nthreads; i++)
        cpu += threads[i].cpu_ns;
    double s = (double)now / SEC;
    uint64_t rss = (1600ull << 20) + (uint64_t)(s * 900) + (in_burst(now) ? 200ull << 20 : 0);
    gauge(RP_GAUGE_CPU_USER, now, cpu / 100 * 92 + now / 400);
    gauge(RP_GAUGE_CPU_SYS, now, cpu / 100 * 8 + now / 1000);
    gauge(RP_GAUGE_RSS, now, rss & ~4095ull);
    gauge(RP_GAUGE_HEAP_USED, now, G.old_gen + G.since_gc);
    gauge(RP_GAUGE_HEAP_COMMITTED, now, 4ull << 30);
    gauge(RP_GAUGE_GC_COUNT, now, G.count);
    gauge(RP_GAUGE_GC_TIME, now, G.time_ns);
    gauge(RP_GAUGE_THREADS, now, nthreads + 24);
    gauge(RP_GAUGE_THREADS_RUNNABLE, now, 1 + (uint64_t)(opt.busy * pool_load(P_HTTP, now)));
    gauge(RP_GAUGE_THREADS_JAVA, now, nthreads + 6);
    gauge(RP_GAUGE_THREADS_DAEMON, now, nthreads + 4);
    gauge(RP_GAUGE_THREADS_STARTED, now, nthreads + 9);
    gauge(RP_GAUGE_THREADS_PEAK, now, nthreads + 7);
    gauge(RP_GAUGE_CLASSES, now, 14000 + (uint64_t)(2600 * (1 - exp(-s / 900))));
    gauge(RP_GAUGE_AGENT_CPU, now, now / 330);
}

/* The flush step: thread CPU times, the agent's gauges and counters, the
 * segment; then rotation at 16 MiB or 1 h. */
static void flush_step(uint64_t now)
{
    for (uint32_t i = 0; i < nthreads; i++)
        if (rp_chunk_thread_cpu(C.w, thread_id(&threads[i], now), MONO0 + now,
                                threads[i].cpu_ns) != 0)
            die("thread cpu");
    if (C.stub_leaves && rp_chunk_counter(C.w, "walk.stub_frames", C.stub_leaves) != 0)
        die("counter");
    C.stub_leaves = 0;
    gauge("alloc.interval", now, (uint64_t)ALLOC_I);
    gauge(RP_GAUGE_AGENT_ALLOC, now, C.alloc.samples * 4200);
    gauge(RP_GAUGE_AGENT_HANDLER, now, C.cpu.samples * 17400);
    gauge("agent.threads", now, nthreads);
    gauge("agent.slots", now, nthreads + 2);
    if (rp_chunk_flush(C.w) != 0)
        die("flush");
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
    for (uint32_t i = 0; i < nthreads; i++) {
        struct thread *t = &threads[i];
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
        die(opt.manifest);
    fprintf(m, "{\"hours\": %.6g, \"seed\": %llu, \"start_wall_ns\": %llu, "
            "\"end_wall_ns\": %llu, \"files\": %llu, \"bytes\": %llu, \"stacks\": %u,\n",
            opt.hours, (unsigned long long)opt.seed, WALL0, WALL0 + opt.duration,
            (unsigned long long)C.files, (unsigned long long)C.bytes, nstacks);
    const struct { const char *name; struct totals *t; } k[] = {
        {RP_KIND_CPU, &C.cpu}, {RP_KIND_ALLOC, &C.alloc}, {RP_KIND_GC, &C.gc}};
    fputs(" \"kinds\": {", m);
    for (size_t i = 0; i < N(k); i++)
        fprintf(m, "%s\"%s\": {\"samples\": %llu, \"weight\": %llu}", i ? ", " : "", k[i].name,
                (unsigned long long)k[i].t->samples, (unsigned long long)k[i].t->weight);
    fprintf(m, "},\n \"incident\": {\"from_wall_ns\": %llu, \"to_wall_ns\": %llu, "
            "\"frame\": \"%s\", \"cpu_samples\": %llu, \"cpu_weight\": %llu, "
            "\"alloc_samples\": %llu, \"alloc_weight\": %llu},\n \"threads\": [",
            WALL0 + opt.burst_from, WALL0 + opt.burst_to, INCIDENT_FRAME,
            (unsigned long long)C.inc_cpu.samples, (unsigned long long)C.inc_cpu.weight,
            (unsigned long long)C.inc_alloc.samples, (unsigned long long)C.inc_alloc.weight);
    static const char *const names[P_COUNT] = {"http", "kafka", "scheduling", "jit", "gc"};
    for (uint32_t i = 0; i < nthreads; i++)
        fprintf(m, "%s\n  {\"name\": \"%s\", \"tid\": %llu, \"pool\": \"%s\", "
                "\"cpu_samples\": %llu}", i ? "," : "", threads[i].name,
                (unsigned long long)threads[i].tid,
                threads[i].pool >= 0 ? names[threads[i].pool] : "idle",
                (unsigned long long)threads[i].cpu_samples);
    fputs("]}\n", m);
    if (fclose(m) != 0)
        die(opt.manifest);
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
        die(opt.dir);
    double started = now_s();
    rng = opt.seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    make_frames();
    make_sites();
    make_alloc_cdf();
    make_stacks(opt.stacks);
    make_threads(opt.busy);
    C.fid = xcalloc(nframes, sizeof *C.fid);
    C.sid = xcalloc(nstacks, sizeof *C.sid);
    for (uint64_t now = DRAIN; now <= opt.duration; now += DRAIN)
        pass(now);
    if (C.w)
        close_chunk();
    write_manifest();
    double took = now_s() - started, n = (double)(C.cpu.samples + C.alloc.samples);
    printf("rp_daywriter: %.6g h, %u busy threads, %u stacks, seed %llu: %llu files, "
           "%.1f MB in %s\n", opt.hours, opt.busy, nstacks, (unsigned long long)opt.seed,
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
