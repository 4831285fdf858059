/*
 * tests/convert/rp_dayservice.c — the service rp_daywriter records (see
 * rp_dayservice.h): its frames (Tomcat, Kafka and Spring entry frames, a shop's
 * modules and layers, libraries, native leaves, C2's and G1's C++ frames),
 * allocation sites, stacks per pool and threads, all drawn from day_rng.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp_dayservice.h"

#define N(a) (sizeof a / sizeof a[0])

uint64_t day_rng;

void day_die(const char *what)
{
    fprintf(stderr, "rp_daywriter: %s: %s\n", what, strerror(errno ? errno : EINVAL));
    exit(1);
}

void *day_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        day_die("calloc");
    return p;
}

/* ----------------------------------------------------------------- frames -- */


struct day_frame *day_frames;
uint32_t day_nframes;
static uint32_t frames_cap;

static uint32_t add_frame(const char *klass, const char *name, enum rp_frame_type type,
                          uint32_t line)
{
    if (day_nframes == frames_cap) {
        frames_cap = frames_cap ? frames_cap * 2 : 1024;
        day_frames = realloc(day_frames, frames_cap * sizeof *day_frames);
        if (!day_frames)
            day_die("realloc");
    }
    day_frames[day_nframes] = (struct day_frame){strdup(klass), strdup(name), type, line};
    if (!day_frames[day_nframes].klass || !day_frames[day_nframes].name)
        day_die("strdup");
    return day_nframes++;
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
    "org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer"
    ".pollAndInvoke",
    "org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer"
    ".doInvokeRecordListener",
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
    day_frames[F.http[0]].type = day_frames[F.kafka[0]].type = day_frames[F.batch[0]].type =
        RP_FRAME_INTERPRETED;
    add_list(LIBRARY, N(LIBRARY), RP_FRAME_JIT, F.lib);
    for (size_t i = 0; i < N(LIBRARY); i += 3)
        day_frames[F.lib[i]].type = RP_FRAME_INLINED;
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
    F.service = day_calloc(N(MODULES) * per, sizeof *F.service);
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
const struct day_class day_classes[DAY_NCLASSES] = {
    {"byte[]", 1, 16, {32, 128, 1024, 8192}},     {"java.lang.String", 0, 24, {0}},
    {"java.lang.Object[]", 4, 16, {10, 16, 64, 256}}, {"java.util.HashMap$Node", 0, 32, {0}},
    {"java.util.HashMap$Node[]", 4, 16, {16, 64, 256, 1024}},
    {"java.util.ArrayList", 0, 24, {0}},          {"java.lang.StringBuilder", 0, 24, {0}},
    {"com.example.shop.orders.OrderLine", 0, 40, {0}},
    {"com.example.shop.catalog.ProductDto", 0, 48, {0}}, {"java.math.BigDecimal", 0, 40, {0}},
    {"int[]", 4, 16, {8, 64, 512, 4096}},         {"java.time.LocalDateTime", 0, 24, {0}},
    {"org.hibernate.engine.spi.EntityKey", 0, 32, {0}},
    {"byte[]", 1, 16, {262144, 1048576, 1048576, 4194304}}};
#define CLASS_INT_ARRAY 10

struct day_site day_sites[DAY_NCLASSES][4];

static void make_sites(void)
{
    for (size_t c = 0; c < DAY_NCLASSES; c++)
        for (int v = 0; v < 4; v++) {
            const struct day_class *k = &day_classes[c];
            uint64_t len = k->len[v], size = k->base + k->elem * len;
            size = (size + 7) & ~7ull;
            double inv = -1 / expm1(-(double)size / DAY_ALLOC_INTERVAL);
            day_sites[c][v] = (struct day_site){size, (uint64_t)llround((double)size * inv),
                                                k->elem ? len + 1 : 0, (uint32_t)inv,
                                                inv - floor(inv)};
        }
}

struct day_stack *day_stacks;
struct day_stack_info *day_info;
uint32_t day_nstacks;
static uint32_t stacks_cap;

static uint32_t add_stack(const struct day_stack *s)
{
    if (day_nstacks == stacks_cap) {
        stacks_cap = stacks_cap ? stacks_cap * 2 : 1024;
        day_stacks = realloc(day_stacks, stacks_cap * sizeof *day_stacks);
        day_info = realloc(day_info, stacks_cap * sizeof *day_info);
        if (!day_stacks || !day_info)
            day_die("realloc");
    }
    day_stacks[day_nstacks] = *s;
    day_info[day_nstacks] = (struct day_stack_info){day_nstacks, s->klass,
                                        day_frames[s->f[s->n - 1]].type > RP_FRAME_INLINED};
    return day_nstacks++;
}

struct day_pool day_pools[P_COUNT];

/* The pool's Zipf(1.1) draw: Vose's alias table. */
static void make_alias(struct day_pool *p)
{
    uint32_t n = p->n;
    double *q = day_calloc(n, sizeof *q), sum = 0;
    uint32_t *small = day_calloc(n, sizeof *small), *large = day_calloc(n, sizeof *large);
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += q[i] = 1 / pow(i + 1, 1.1);
    for (uint32_t i = 0; i < n; i++)
        if ((q[i] *= n / sum) < 1)
            small[ns++] = i;
        else
            large[nl++] = i;
    p->alias = day_calloc(n, sizeof *p->alias);
    p->cut = day_calloc(n, sizeof *p->cut);
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

/* The Java part of stack i (leaf side cut to its first Java frame). */
static void java_part(uint32_t i)
{
    struct day_stack s = day_stacks[i];
    while (s.n && day_frames[s.f[s.n - 1]].type > RP_FRAME_INLINED)
        s.n--;
    day_info[i].java = add_stack(&s);
}

/* A service stack: the pool's entry frames, then a walk through one module's
 * frames and the libraries, sharing a root-side chain with an earlier stack. */
static void service_stacks(struct day_pool *p, const uint32_t *root, uint32_t nroot, uint32_t n)
{
    p->first = day_nstacks;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t klass = day_below(50) ? day_below(DAY_NCLASSES - 1) : DAY_NCLASSES - 1;
        struct day_stack s = {.n = (uint8_t)nroot, .klass = (uint8_t)klass};
        memcpy(s.f, root, nroot * sizeof *root);
        uint32_t depth = 15 + day_below(26);
        depth = depth > nroot ? depth : nroot + 1;
        if (i) {   /* a prefix of an earlier stack, its native leaf left out */
            const struct day_stack *o = &day_stacks[p->first + day_below(i)];
            uint32_t keep = nroot + day_below(o->n - nroot);
            keep = keep < depth ? keep : depth - 1;
            memcpy(s.f, o->f, keep * sizeof *o->f);
            s.n = (uint8_t)keep;
        }
        uint32_t mod = day_below(N(MODULES)) < 4 ? day_below(3) : day_below(N(MODULES));
        while (s.n < depth)
            s.f[s.n++] = day_below(10) < 7 ? F.service[mod * F.nservice + day_below(F.nservice)]
                                       : F.lib[day_below(N(LIBRARY))];
        if (day_below(10) == 0)
            s.f[s.n++] = F.leaf[day_below(N(LEAVES))];
        add_stack(&s);
    }
    p->n = n;
    for (uint32_t i = 0; i < n; i++)
        if (day_info[p->first + i].native)
            java_part(p->first + i);
    make_alias(p);
}

/* The JIT's and GC's stacks: a native entry, then C++ frames. */
static void native_stacks(struct day_pool *p, const uint32_t *root, uint32_t nroot,
                          const uint32_t *body, uint32_t nbody, uint32_t n, uint32_t lo,
                          uint32_t span)
{
    p->first = day_nstacks;
    for (uint32_t i = 0; i < n; i++) {
        struct day_stack s = {.n = 0};
        for (uint32_t k = 0; k < N(ROOT_NATIVE); k++)
            s.f[s.n++] = F.nroot[k];
        for (uint32_t k = 0; k < nroot; k++)
            s.f[s.n++] = root[k];
        uint32_t depth = lo + day_below(span);
        while (s.n < depth)
            s.f[s.n++] = body[day_below(nbody)];
        add_stack(&s);
    }
    p->n = n;
    make_alias(p);
}

/* The incident's stacks: backtracking 8 to 20 levels deep, and its allocation. */
static void incident_stacks(void)
{
    struct day_pool *p = &day_pools[P_INCIDENT];
    p->first = day_nstacks;
    for (uint32_t i = 0; i < 6; i++) {
        struct day_stack s = {.n = 0, .klass = CLASS_INT_ARRAY};
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
    struct day_pool *a = &day_pools[P_ALLOC_INCIDENT];
    struct day_stack s = {.n = N(ROOT_HTTP), .klass = CLASS_INT_ARRAY};
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
    service_stacks(&day_pools[P_HTTP], F.http, N(ROOT_HTTP), h);
    service_stacks(&day_pools[P_KAFKA], F.kafka, N(ROOT_KAFKA), k);
    service_stacks(&day_pools[P_BATCH], F.batch, N(ROOT_BATCH), b);
    native_stacks(&day_pools[P_JIT], F.jit_root, N(JIT_ROOT), F.jit, N(JIT_BODY), j, 15, 26);
    native_stacks(&day_pools[P_GC], F.gc_root, N(GC_ROOT), F.gc, N(GC_BODY),
                  total > h + k + b + j ? total - h - k - b - j : 1, 7, 5);
    incident_stacks();
}

/* ---------------------------------------------------------------- threads -- */

struct day_thread *day_threads;
uint32_t day_nthreads;

static void add_thread(const char *name, int pool, uint32_t flags)
{
    struct day_thread *t = &day_threads[day_nthreads];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->tid = DAY_PID + 10 + day_nthreads;
    t->jtid = flags & RP_THREAD_JAVA ? 20 + day_nthreads : 0;
    t->flags = flags;
    t->pool = pool;
    t->cpu_ns = (50 + 3 * (uint64_t)day_nthreads) * 1000000;   /* before the recording */
    day_nthreads++;
}

static void make_threads(uint32_t busy)
{
    day_threads = day_calloc(busy + DAY_IDLE + 8, sizeof *day_threads);
    uint32_t kafka = busy / 4, batch = busy / 4, http = busy - kafka - batch;
    char name[48];
    const uint32_t java = RP_THREAD_JAVA | RP_THREAD_DAEMON;
    for (uint32_t i = 0; i < http + DAY_IDLE / 2; i++) {
        snprintf(name, sizeof name, "http-nio-8080-exec-%u", i + 1);
        add_thread(name, i < http ? P_HTTP : -1, java);
    }
    for (uint32_t i = 0; i < kafka + DAY_IDLE / 4; i++) {
        snprintf(name, sizeof name, "kafka-consumer-%u", i + 1);
        add_thread(name, i < kafka ? P_KAFKA : -1, java);
    }
    for (uint32_t i = 0; i < batch + DAY_IDLE / 4; i++) {
        snprintf(name, sizeof name, "scheduling-%u", i + 1);
        add_thread(name, i < batch ? P_BATCH : -1, java);
    }
    add_thread("C2 CompilerThread0", P_JIT, RP_THREAD_DAEMON);
    add_thread("GC Thread#0", P_GC, 0);
    add_thread("GC Thread#1", P_GC, 0);
    add_thread("main", -1, RP_THREAD_JAVA);
}

void day_service_make(uint32_t stacks, uint32_t busy)
{
    make_frames();
    make_sites();
    make_stacks(stacks);
    make_threads(busy);
}
