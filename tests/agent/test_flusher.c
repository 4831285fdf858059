/*
 * tests/agent/test_flusher.c — the flusher (src/flush/flusher.c) under concurrency, with
 * no JVM: built in every configuration so that TSan checks it (docs/sanitizers.md
 * says why a JVM cannot run under TSan usefully).
 *
 * The real flusher, thread registry, method cache, rings and chunk writer run
 * against a fake JVMTI/JNI: function tables with stubs for the few calls the
 * flusher's path makes (method, class and source names, line tables, Deallocate,
 * local references); every other entry is NULL, so an unexpected call crashes
 * the test instead of passing. The seam is rp_jthread_run (jthread.h), which this
 * file supplies: jthread.c, which needs a JVM, is not linked.
 *
 * While the flusher runs, four lanes start thread after thread (churn: slots are
 * ended, finished and reused); each thread attaches, pushes records into its own
 * ring as fast as it can (rings overflow, on purpose) and detaches. A control
 * thread issues flush requests (each rotates the chunk) and rp_flusher_call's; a
 * waker calls rp_flusher_wake and reads the totals. The flusher is stopped while
 * the control thread is still posting, which must not hang or lose anything.
 *
 * Then the chunk files are read back. Every record carries its producer and
 * sequence number in its weight, and its frames follow from them, so each sample
 * is checked for its thread's name and every frame's name, type and line; no
 * record may appear twice; and the pushed records, minus those the rings refused,
 * equal the samples in the files plus the lost.* counters there, exactly.
 *
 * Before all that, test_method_faults checks the method cache against failing
 * JVMTI calls (out of memory, wrong phase, unloaded classes).
 *
 *   test_flusher [SECONDS]     default 3 (or RINGPROF_STRESS_SECONDS)
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "ringprof/chunk.h"
#include "ringprof/events.h"
#include "ringprof/recording.h"
#include "ringprof/ring.h"
#include "../../src/core/counters.h"
#include "../../src/flush/flusher.h"
#include "../../src/flush/kind.h"
#include "../../src/threads/jthread.h"
#include "../../src/code/methods.h"
#include "../../src/core/sample.h"
#include "../../src/threads/threads.h"

#define DEPTH      8
#define NMETHODS   64
#define LANES      4
#define PER_THREAD 3000           /* records each producer thread pushes          */
#define MAX_PRODUCERS 65536

/* ------------------------------------------------------ the fake JVMTI/JNI -- */

/* jmethodID k is (jmethodID)(METHOD_BASE + 16 * k); its class is Fake<k % 8>,
 * its name m<k>, its one line-table entry says line 100 + k from bci 0. */
#define METHOD_BASE 0x10000u
static jmethodID method_of(unsigned k) { return (jmethodID)(uintptr_t)(METHOD_BASE + 16u * k); }
static unsigned index_of(jmethodID m) { return (unsigned)(((uintptr_t)m - METHOD_BASE) / 16u); }
static _Atomic unsigned g_jvmti_calls;

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        abort();
    return p;
}

/* A failure to inject (test_method_faults): JVMTI call `call` answers `err` for
 * method `method` (for the class calls: for its class). Set only while no other
 * thread runs. */
enum fake_call { C_NONE, C_NAME, C_CLASS, C_CLASS_SIG, C_SOURCE, C_MODIFIERS, C_LINES };
static struct {
    enum fake_call call;
    unsigned method;
    jvmtiError err;
} g_fail;

static int fail_method(enum fake_call c, jmethodID m)
{
    return g_fail.call == c && index_of(m) == g_fail.method;
}

static int fail_class(enum fake_call c, jclass k)
{
    return g_fail.call == c && (uintptr_t)k == 0x100 + g_fail.method % 8;
}

static jvmtiError JNICALL f_get_method_name(jvmtiEnv *e, jmethodID m, char **name, char **sig,
                                            char **gen)
{
    (void)e;
    if (fail_method(C_NAME, m))
        return g_fail.err;
    char buf[32];
    snprintf(buf, sizeof buf, "m%u", index_of(m));
    *name = xstrdup(buf);
    *sig = xstrdup("()V");
    if (gen)
        *gen = NULL;
    atomic_fetch_add(&g_jvmti_calls, 1);
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL f_get_declaring_class(jvmtiEnv *e, jmethodID m, jclass *k)
{
    (void)e;
    if (fail_method(C_CLASS, m))
        return g_fail.err;
    *k = (jclass)(uintptr_t)(0x100 + index_of(m) % 8);
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL f_get_class_signature(jvmtiEnv *e, jclass k, char **sig, char **gen)
{
    (void)e;
    if (fail_class(C_CLASS_SIG, k))
        return g_fail.err;
    char buf[32];
    snprintf(buf, sizeof buf, "Lfake/Fake%u;", (unsigned)((uintptr_t)k - 0x100));
    *sig = xstrdup(buf);
    if (gen)
        *gen = NULL;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL f_get_source_file_name(jvmtiEnv *e, jclass k, char **name)
{
    (void)e;
    if (fail_class(C_SOURCE, k))
        return g_fail.err;
    *name = xstrdup("Fake.java");
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL f_get_method_modifiers(jvmtiEnv *e, jmethodID m, jint *mods)
{
    (void)e;
    if (fail_method(C_MODIFIERS, m))
        return g_fail.err;
    *mods = 1;      /* public */
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL f_get_line_number_table(jvmtiEnv *e, jmethodID m, jint *n,
                                                  jvmtiLineNumberEntry **t)
{
    (void)e;
    if (fail_method(C_LINES, m))
        return g_fail.err;
    *t = malloc(sizeof **t);
    if (!*t)
        abort();
    (*t)->start_location = 0;
    (*t)->line_number = (jint)(100 + index_of(m));
    *n = 1;
    return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL f_deallocate(jvmtiEnv *e, unsigned char *p)
{
    (void)e;
    free(p);
    return JVMTI_ERROR_NONE;
}

static void JNICALL f_delete_local_ref(JNIEnv *e, jobject o) { (void)e, (void)o; }
static void JNICALL f_delete_weak_global_ref(JNIEnv *e, jweak o) { (void)e, (void)o; }

static struct jvmtiInterface_1_ g_jvmti_fns;
static struct JNINativeInterface_ g_jni_fns;
static jvmtiEnv g_jvmti_obj = &g_jvmti_fns;
static JNIEnv g_jni_obj = &g_jni_fns;

static void fake_init(void)
{
    g_jvmti_fns.GetMethodName = f_get_method_name;
    g_jvmti_fns.GetMethodDeclaringClass = f_get_declaring_class;
    g_jvmti_fns.GetClassSignature = f_get_class_signature;
    g_jvmti_fns.GetSourceFileName = f_get_source_file_name;
    g_jvmti_fns.GetMethodModifiers = f_get_method_modifiers;
    g_jvmti_fns.GetLineNumberTable = f_get_line_number_table;
    g_jvmti_fns.Deallocate = f_deallocate;
    g_jni_fns.DeleteLocalRef = f_delete_local_ref;
    g_jni_fns.DeleteWeakGlobalRef = f_delete_weak_global_ref;
}

/* The seam (jthread.h): jthread.c would start a JVMTI agent thread. */
struct run_arg {
    jvmtiStartFunction proc;
    void *arg;
};

static void *run_thread(void *p)
{
    struct run_arg a = *(struct run_arg *)p;
    free(p);
    a.proc(&g_jvmti_obj, &g_jni_obj, a.arg);
    return NULL;
}

int rp_jthread_run(jvmtiEnv *jvmti, JNIEnv *jni, const char *name,
                   jvmtiStartFunction proc, void *arg, jint priority,
                   char *err, size_t errlen)
{
    (void)jvmti, (void)jni, (void)name, (void)priority;
    struct run_arg *a = malloc(sizeof *a);
    pthread_t th;
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->proc = proc;
    a->arg = arg;
    if (pthread_create(&th, NULL, run_thread, a) != 0) {
        free(a);
        snprintf(err, errlen, "pthread_create failed");
        return -1;
    }
    pthread_detach(th);
    return 0;
}

/* ------------------------------------------------------ the test's kind -- */

/* The one event kind the flusher is given (src/flush/kind.h): its records are
 * RP_SAMPLE_CPU, its writer this file's, its chunk hook makes its KIND first in
 * every chunk (at the period the waker keeps setting), and its pass, flush and
 * counter hooks count that they ran. So the flusher is tested through the
 * registration alone, and links none of src/kinds/. */
#define TEST_KIND "test"
static _Atomic uint64_t g_test_period = 1000000;
static _Atomic unsigned g_test_passes;
static unsigned g_test_flushes;              /* the flusher's only                 */
static struct rp_sink_kind g_test_sink_kind;
static uint64_t g_test_flush_count;

static uint32_t test_kind_id(const struct rp_sink *sk)
{
    return rp_sink_kind(sk, &g_test_sink_kind, TEST_KIND, RP_UNIT_NS, atomic_load(&g_test_period),
                        NULL, 0);
}

static int test_chunk(const struct rp_sink *sk)
{
    return test_kind_id(sk) ? 0 : -1;
}

static enum rp_sink_result test_write(const struct rp_sink *sk, struct rp_slot *s,
                                      const struct rp_sample_hdr *h, size_t flen)
{
    uint32_t thread, stack, kind;
    if (!rp_sink_ids(sk, s, h, flen, &thread, &stack) || !(kind = test_kind_id(sk)) ||
        rp_chunk_sample(sk->w, kind, thread, h->time, stack, h->weight, NULL) != 0)
        return RP_SINK_LOST;
    return RP_SINK_WRITTEN;
}

static void test_pass(const struct rp_sink *sk)
{
    (void)sk;
    atomic_fetch_add(&g_test_passes, 1);
}

static void test_flush(const struct rp_sink *sk)
{
    (void)sk;
    g_test_flushes++;
    g_test_flush_count++;
}

static const char *const TEST_COUNTERS[] = {"test.flushes"};

static void test_counters_read(uint64_t *v)
{
    v[0] = g_test_flush_count;
}

static void test_counters(enum rp_counter_group g)
{
    rp_counters_register(g, TEST_COUNTERS, 1, test_counters_read);
}

static const struct rp_kind g_test_kind = {
    .engine = {.name = TEST_KIND},
    .records = {{RP_SAMPLE_CPU, test_write, NULL, "agct"}},
    .place = 4,
    .chunk = test_chunk,
    .pass = test_pass,
    .flush = test_flush,
    .counters = test_counters,
};

/* -------------------------------------------------------------- producers -- */

/* Record q of producer p: weight (p << 32 | q) names it; the frames follow. */
static uint32_t nnative_of(uint32_t q) { return q % 3; }
static uint32_t njava_of(uint32_t q) { return 1 + q % 5; }
static unsigned method_at(uint32_t p, uint32_t q, uint32_t j) { return (p * 7 + q + j) % NMETHODS; }
static void native_pc_anchor(void) {}

static _Atomic uint32_t g_next_producer;
static _Atomic uint64_t g_pushed, g_refused;
static _Atomic int g_run = 1;
static uint32_t g_count[MAX_PRODUCERS];          /* records pushed, by producer    */

static void *producer(void *arg)
{
    (void)arg;
    uint32_t p = atomic_fetch_add(&g_next_producer, 1);
    char name[32];
    snprintf(name, sizeof name, "producer-%u", p);
    struct rp_slot *s = rp_threads_attach_current(NULL, NULL, name, 0, p + 1);
    if (!s || !s->ring)
        return (void *)1;
    uint64_t buf[64];
    uint32_t q = 0, refused = 0;
    for (; q < PER_THREAD && atomic_load_explicit(&g_run, memory_order_relaxed); q++) {
        struct rp_sample_hdr *h = (void *)buf;
        memset(h, 0, sizeof *h);
        h->type = RP_SAMPLE_CPU;
        h->status = RP_WALK_OK;
        h->time = q;
        h->weight = (uint64_t)p << 32 | q;
        h->slot = s->index;
        h->gen = atomic_load(&s->gen);
        h->nnative = nnative_of(q);
        h->njava = njava_of(q);
        uint64_t *pcs = (uint64_t *)(h + 1);
        for (uint32_t i = 0; i < h->nnative; i++)
            pcs[i] = (uint64_t)(uintptr_t)native_pc_anchor + i;
        struct rp_java_frame *jf = (void *)(pcs + h->nnative);
        for (uint32_t j = 0; j < h->njava; j++) {
            jf[j].bci = (int32_t)j;
            jf[j].pad = 0;
            jf[j].method = (uint64_t)(uintptr_t)method_of(method_at(p, q, j));
        }
        if (rp_ring_push(s->ring, buf, rp_sample_size(h->nnative, h->njava)) != RP_RING_OK)
            refused++;
        if (q % 256 == 255) {
            /* Let the flusher in now and then, and keep the files small enough
             * to read back quickly under ASan. */
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    g_count[p] = q;
    atomic_fetch_add(&g_pushed, q);
    atomic_fetch_add(&g_refused, refused);
    rp_threads_detach_current();
    return NULL;
}

static void *lane(void *arg)
{
    (void)arg;
    while (atomic_load(&g_run) && atomic_load(&g_next_producer) < MAX_PRODUCERS - LANES) {
        pthread_t th;
        void *rc = NULL;
        if (pthread_create(&th, NULL, producer, NULL) != 0)
            return (void *)1;
        pthread_join(th, &rc);
        if (rc)
            return rc;
        struct timespec ts = {0, 5000000};   /* bounds the files to read back */
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* ---------------------------------------------------------------- control -- */

static _Atomic int g_control_run = 1, g_stopped;
static _Atomic unsigned g_requests_ok, g_calls_ok, g_refusals, g_wrong_thread;

static int on_flusher(void *arg, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (rp_gettid() != rp_flusher_tid())
        atomic_fetch_add(&g_wrong_thread, 1);
    atomic_fetch_add((_Atomic unsigned *)arg, 1);
    return 0;
}

static _Atomic unsigned g_call_runs;

static void *control(void *arg)
{
    (void)arg;
    for (unsigned i = 0; atomic_load(&g_control_run); i++) {
        char path[4096], err[256];
        int rc = (i % 2 == 0)
            ? rp_flusher_request(path, sizeof path, 20000, err, sizeof err)
            : rp_flusher_call(on_flusher, (void *)&g_call_runs, 20000, err, sizeof err);
        if (rc == 0)
            atomic_fetch_add(i % 2 == 0 ? &g_requests_ok : &g_calls_ok, 1);
        else if (atomic_load(&g_stopped) && strstr(err, "shutting down"))
            atomic_fetch_add(&g_refusals, 1);
        else {
            fprintf(stderr, "test_flusher: request %u failed: %s\n", i, err);
            return (void *)1;
        }
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *waker(void *arg)
{
    (void)arg;
    while (atomic_load(&g_control_run)) {
        struct rp_counter_totals t;
        struct rp_flusher_recording r;
        rp_flusher_wake();
        rp_counters_totals(&t);
        rp_flusher_recording(&r);
        atomic_store(&g_test_period, 1000000);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* -------------------------------------------------------------- read back -- */

struct readback {
    uint64_t samples, lost, bad_samples, bad_files, bad_kinds, test_counter;
    uint8_t *seen[MAX_PRODUCERS];
    uint64_t duplicates;
};

static int check_sample(struct rp_reader *r, const struct rp_event *ev, uint32_t p, uint32_t q)
{
    const struct rp_thread_info *ti = rp_reader_thread(r, ev->u.sample.thread);
    char want[32];
    snprintf(want, sizeof want, "producer-%u", p);
    if (!ti || !ti->name || strcmp(ti->name, want) != 0)
        return 0;
    uint32_t n = 0, flags = 0;
    const uint32_t *fr = rp_reader_stack(r, ev->u.sample.stack, &n, &flags);
    if (!fr || n != nnative_of(q) + njava_of(q) || flags)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct rp_frame_info *fi = rp_reader_frame(r, fr[i]);
        const struct rp_method_info *mi = fi ? rp_reader_method(r, fi->method) : NULL;
        if (!mi || !mi->name || !mi->klass)
            return 0;
        if (i < nnative_of(q)) {
            if (fi->type != RP_FRAME_NATIVE)
                return 0;
            continue;
        }
        uint32_t j = i - nnative_of(q);
        unsigned k = method_at(p, q, j);
        char name[16], klass[32];
        snprintf(name, sizeof name, "m%u", k);
        snprintf(klass, sizeof klass, "fake.Fake%u", k % 8);
        if (strcmp(mi->name, name) != 0 || strcmp(mi->klass, klass) != 0 ||
            fi->bci != (int32_t)j || fi->line != 100 + k)
            return 0;
    }
    return 1;
}

static void read_file(const char *path, struct readback *b)
{
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    if (!r) {
        b->bad_files++;
        return;
    }
    struct rp_event ev;
    while (rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_COUNTER && ev.u.counter.name &&
            strncmp(ev.u.counter.name, "lost.", 5) == 0) {
            b->lost += ev.u.counter.value;
        } else if (ev.type == RP_EV_COUNTER && ev.u.counter.name &&
                   strcmp(ev.u.counter.name, TEST_COUNTERS[0]) == 0) {
            b->test_counter += ev.u.counter.value;
        } else if (ev.type == RP_EV_SAMPLE) {
            b->samples++;
            const struct rp_kind_info *k = rp_reader_kind(r, ev.u.sample.kind);
            if (ev.u.sample.kind != 1 || !k || !k->name || strcmp(k->name, TEST_KIND) != 0)
                b->bad_kinds++;
            uint32_t p = (uint32_t)(ev.u.sample.weight >> 32);
            uint32_t q = (uint32_t)ev.u.sample.weight;
            if (p >= MAX_PRODUCERS || q >= g_count[p] || !check_sample(r, &ev, p, q)) {
                b->bad_samples++;
                continue;
            }
            if (!b->seen[p] && !(b->seen[p] = calloc(PER_THREAD, 1)))
                abort();
            if (b->seen[p][q]++)
                b->duplicates++;
        }
    }
    struct rp_reader_stats st;
    rp_reader_stats(r, &st);
    if (st.segments_bad || st.records_bad || st.unresolved_refs || !st.clean_close)
        b->bad_files++;
    rp_reader_close(r);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* ------------------------------------------------- method resolution -- */

/* rp_methods_get when a JVMTI call fails (methods.c): only INVALID_METHODID or
 * INVALID_CLASS make a method [unloaded], for good. Out of memory or a wrong
 * phase answer [unknown java method] for now, counted, and cache nothing: once
 * the call works, the method is named, with its class, file and lines. Methods
 * from index 1000 up, which the producers never use. */
static void test_method_faults(void)
{
    static const struct {
        enum fake_call call;
        jvmtiError err;
        int unloaded;          /* else transient (or, for ABSENT_INFORMATION, kept) */
    } cases[] = {
        {C_NAME, JVMTI_ERROR_OUT_OF_MEMORY, 0},
        {C_NAME, JVMTI_ERROR_WRONG_PHASE, 0},
        {C_CLASS, JVMTI_ERROR_OUT_OF_MEMORY, 0},
        {C_CLASS_SIG, JVMTI_ERROR_OUT_OF_MEMORY, 0},
        {C_CLASS_SIG, JVMTI_ERROR_WRONG_PHASE, 0},
        {C_SOURCE, JVMTI_ERROR_OUT_OF_MEMORY, 0},
        {C_MODIFIERS, JVMTI_ERROR_OUT_OF_MEMORY, 0},
        {C_LINES, JVMTI_ERROR_OUT_OF_MEMORY, 0},
        {C_NAME, JVMTI_ERROR_INVALID_METHODID, 1},
        {C_CLASS, JVMTI_ERROR_INVALID_METHODID, 1},
        {C_CLASS_SIG, JVMTI_ERROR_INVALID_CLASS, 1},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned k = 1000 + i;
        struct rp_methods_stats before, after;
        rp_methods_stats(&before);
        g_fail.call = cases[i].call;
        g_fail.method = k;
        g_fail.err = cases[i].err;
        const struct rp_method *m = rp_methods_get(&g_jni_obj, method_of(k));
        g_fail.call = C_NONE;
        rp_methods_stats(&after);
        int unloaded = (m->flags & RP_METHOD_UNLOADED) != 0;
        CHECK(unloaded == cases[i].unloaded, "case %u (error %d): %s", i, cases[i].err,
              unloaded ? "a live method answered [unloaded]" : "not [unloaded]");
        if (!cases[i].unloaded) {
            CHECK(strcmp(m->name, "[unknown java method]") == 0, "case %u: answered %s.%s",
                  i, m->klass, m->name);
            uint64_t counted = cases[i].err == JVMTI_ERROR_OUT_OF_MEMORY
                                   ? after.no_memory - before.no_memory
                                   : after.unresolved - before.unresolved;
            CHECK(counted == 1, "case %u: counted %llu times", i, (unsigned long long)counted);
        }
        /* The call works again. */
        m = rp_methods_get(&g_jni_obj, method_of(k));
        char name[32], klass[32];
        snprintf(name, sizeof name, "m%u", k);
        snprintf(klass, sizeof klass, "fake.Fake%u", k % 8);
        if (cases[i].unloaded) {
            CHECK(strcmp(m->name, "[unloaded]") == 0, "case %u: unloaded, then %s", i,
                  m->name);
        } else {
            CHECK(strcmp(m->name, name) == 0 && strcmp(m->klass, klass) == 0 &&
                  strcmp(m->file, "Fake.java") == 0 && rp_method_line(m, 0) == 100 + k,
                  "case %u: named %s.%s (%s:%u) once the call works", i, m->klass,
                  m->name, m->file, rp_method_line(m, 0));
        }
    }
}

int main(int argc, char **argv)
{
    double seconds = 3;
    const char *env = getenv("RINGPROF_STRESS_SECONDS");
    if (argc > 1)
        seconds = atof(argv[1]);
    else if (env)
        seconds = atof(env);

    char dir[] = "/tmp/rp-flusher-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    char err[512] = "";
    fake_init();
    rp_methods_init(&g_jvmti_obj, 1, 1);
    test_method_faults();
    /* Rings of 16 KiB (about a hundred records) overflow under these producers:
     * the refusals are part of what must balance. No timers (interval 0). */
    struct rp_threads_config tc = {DEPTH, 16384, 0};
    REQUIRE(rp_threads_init(&tc, err, sizeof err) == 0, "threads: %s", err);
    /* The flusher knows only the kinds it is given: this file's own. */
    const struct rp_kind *kinds[] = {&g_test_kind};
    rp_kinds_set(kinds, 1);
    struct rp_recording_limits lim = {0, 0, 256 << 10, 0};   /* rotate at 256 KiB too */
    struct rp_recording *rec = rp_recording_open(dir, &lim, NULL, 0, err, sizeof err);
    REQUIRE(rec != NULL, "recording: %s", err);
    struct rp_flusher_config fc = {rec, 1, 50 * 1000000ull, DEPTH, 16384};
    REQUIRE(rp_flusher_start(&g_jvmti_obj, &g_jni_obj, &fc, err, sizeof err) == 0,
            "flusher: %s", err);

    pthread_t lanes[LANES], ctl, wk;
    for (int i = 0; i < LANES; i++)
        REQUIRE(pthread_create(&lanes[i], NULL, lane, NULL) == 0, "lane %d", i);
    REQUIRE(pthread_create(&ctl, NULL, control, NULL) == 0, "control thread");
    REQUIRE(pthread_create(&wk, NULL, waker, NULL) == 0, "waker thread");

    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    atomic_store(&g_run, 0);
    int lanes_ok = 1;
    for (int i = 0; i < LANES; i++) {
        void *rc = NULL;
        pthread_join(lanes[i], &rc);
        lanes_ok &= rc == NULL;
    }
    CHECK(lanes_ok, "a producer could not start or got no slot with a ring");
    /* The agent's order: sampling stops, then the flusher's final drain. The
     * control thread goes on posting through and after the stop. */
    atomic_store(&g_stopped, 1);
    CHECK(rp_flusher_stop(20000) == 0, "the flusher did not close the recording cleanly");
    struct timespec pause = {0, 100 * 1000000};
    nanosleep(&pause, NULL);
    atomic_store(&g_control_run, 0);
    void *crc = NULL;
    pthread_join(ctl, &crc);
    pthread_join(wk, NULL);
    CHECK(crc == NULL, "a request or call failed before the stop (see above)");

    static struct readback b;           /* 512 KiB of pointers: not on the stack */
    DIR *d = opendir(dir);
    REQUIRE(d != NULL, "opendir %s", dir);
    struct dirent *e;
    unsigned files = 0, parts = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".rpc") == 0) {
            read_file(path, &b);
            files++;
        } else if (len > 5 && strcmp(e->d_name + len - 5, ".part") == 0) {
            parts++;
        }
    }
    closedir(d);

    uint64_t pushed = atomic_load(&g_pushed), refused = atomic_load(&g_refused);
    struct rp_counter_totals tot;
    rp_counters_totals(&tot);
    printf("# %.1f s: %u producer threads pushed %llu records, rings refused %llu; "
           "%u files hold %llu samples and %llu lost; %u requests, %u calls (%u ran), "
           "%u refused at stop\n", seconds, atomic_load(&g_next_producer),
           (unsigned long long)pushed, (unsigned long long)refused, files,
           (unsigned long long)b.samples, (unsigned long long)b.lost,
           atomic_load(&g_requests_ok), atomic_load(&g_calls_ok),
           atomic_load(&g_call_runs), atomic_load(&g_refusals));
    CHECK(atomic_load(&g_next_producer) > LANES, "no thread churn: %u producers",
          atomic_load(&g_next_producer));
    CHECK(refused > 0, "the rings never overflowed: the losses went untested");
    CHECK(b.samples > 0, "no samples in the files");
    CHECK(b.bad_samples == 0, "%llu samples with a wrong thread, stack, name or line",
          (unsigned long long)b.bad_samples);
    CHECK(b.duplicates == 0, "%llu records written twice", (unsigned long long)b.duplicates);
    CHECK(b.bad_files == 0, "%llu files damaged or not closed cleanly",
          (unsigned long long)b.bad_files);
    CHECK(parts == 0, "%u .part files left", parts);
    CHECK(files >= 2, "%u files: the flush requests did not rotate", files);
    /* Every record: in a file, or counted lost (the rings' refusals included). */
    CHECK(b.samples + b.lost == pushed, "pushed %llu, in files %llu + lost %llu",
          (unsigned long long)pushed, (unsigned long long)b.samples,
          (unsigned long long)b.lost);
    uint64_t written = rp_counter_totals_written(&tot, TEST_KIND);
    CHECK(written == b.samples, "totals say %llu samples, files %llu",
          (unsigned long long)written, (unsigned long long)b.samples);
    CHECK(b.bad_kinds == 0, "%llu samples not of the kind its chunk hook made first",
          (unsigned long long)b.bad_kinds);
    CHECK(atomic_load(&g_test_passes) > 0 && g_test_flushes > 0 && b.test_counter > 0,
          "the kind's hooks: %u passes, %u flushes, counter %llu in the files",
          atomic_load(&g_test_passes), g_test_flushes, (unsigned long long)b.test_counter);
    CHECK(atomic_load(&g_requests_ok) > 0 && atomic_load(&g_calls_ok) > 0,
          "no request or no call succeeded");
    CHECK(atomic_load(&g_call_runs) == atomic_load(&g_calls_ok), "calls ran %u times, %u succeeded",
          atomic_load(&g_call_runs), atomic_load(&g_calls_ok));
    CHECK(atomic_load(&g_wrong_thread) == 0, "a call ran off the flusher thread");
    CHECK(atomic_load(&g_jvmti_calls) >= NMETHODS, "only %u GetMethodName calls",
          atomic_load(&g_jvmti_calls));
    for (uint32_t p = 0; p < MAX_PRODUCERS; p++)
        free(b.seen[p]);
    if (!check_failed)
        remove_dir(dir);
    else
        fprintf(stderr, "test_flusher: recording kept in %s\n", dir);
    return check_exit("test_flusher");
}
