/*
 * src/flush/telemetry.c — the telemetry gauges (see telemetry.h).
 *
 * Runnable threads. The kernel keeps no per-process count of runnable threads:
 * each task's state is in /proc/self/task/<tid>/stat, and reading those costs
 * 10-30 us a task on a busy two-core machine (about 55 ms for 2 000 threads,
 * docs/agent.md). So a reading spends at most TASK_BUDGET_NS on them: it goes on
 * from where the previous reading stopped in the task directory (kept open, and
 * rewound at its end) and, if it could not look at every thread, reports
 * threads.runnable as the share of runnable tasks among those it saw times
 * threads.os. The reading thread counts as runnable without a read (it is
 * running). Up to a few dozen threads the count is exact each reading;
 * beyond, it is an estimate whose sample moves on every period, so every thread
 * is seen over consecutive readings. threads.os is exact: /proc/self/stat's
 * num_threads.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ringprof/clock.h"
#include "ringprof/events.h"
#include "core/counters.h"
#include "core/log.h"
#include "flush/telemetry.h"
#include "threads/threads.h"

#define TASK_BUDGET_NS 1000000ull       /* /proc/self/task per reading              */
#define GC_BEANS_MAX 16

static struct {
    jvmtiEnv *jvmti;
    uint64_t period, next;
    /* MXBeans and methods, once looked up (looked == 1: tried). */
    int looked, warned;
    jobject memory, classes, threads;   /* global refs                              */
    jobject gcs[GC_BEANS_MAX];
    int ngcs;
    jmethodID heap_usage, usage_used, usage_committed, gc_count, gc_time, class_count;
    jmethodID thread_count, daemon_count, started_count, peak_count;
    /* The task directory, kept open between readings. */
    DIR *tasks;
    /* Last values of cumulative gauges: a .total never decreases. */
    uint64_t last_gc_count, last_gc_time, last_agent_cpu;
    _Atomic uint64_t readings, failed, scan_max;
} T;

void rp_telemetry_init(jvmtiEnv *jvmti, uint64_t period_ns)
{
    T.jvmti = jvmti;
    T.period = period_ns;
    T.next = 0;
}

void rp_telemetry_stats(struct rp_telemetry_stats *out)
{
    out->readings = atomic_load(&T.readings);
    out->failed = atomic_load(&T.failed);
    out->task_scan_ns_max = atomic_load(&T.scan_max);
}

static void failed(void)
{
    atomic_fetch_add_explicit(&T.failed, 1, memory_order_relaxed);
}

/* Read a small /proc file into buf (NUL-terminated). @return bytes, or -1. */
static ssize_t read_small(int dirfd, const char *path, char *buf, size_t cap)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* The state letter of a /proc .../stat line: the field after the last ')'
 * (the command name may hold spaces and parentheses). 0 if unreadable. */
static char stat_state(const char *buf)
{
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

/* ----------------------------------------------------------------- /proc -- */

static uint64_t num_threads(void)
{
    char buf[1024];
    if (read_small(AT_FDCWD, "/proc/self/stat", buf, sizeof buf) <= 0)
        return 0;
    const char *p = strrchr(buf, ')');
    /* After ')': state is field 3; num_threads is field 20, 17 fields on. */
    for (int field = 2; p && field < 20; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Runnable tasks (estimated beyond the budget, see the top of the file). */
static int runnable(uint64_t total, uint64_t *out)
{
    /* The reading thread itself is running: counted without a read, so that a
     * scan cut short by its budget (a busy machine) still counts it. */
    uint64_t t0 = rp_mono_ns(), seen = 1, r = 1;
    char self[16];
    snprintf(self, sizeof self, "%ld", (long)syscall(SYS_gettid));
    if (!T.tasks && !(T.tasks = opendir("/proc/self/task")))
        return -1;
    int fd = dirfd(T.tasks);
    int rewound = 0;
    while (seen < total) {
        struct dirent *e = readdir(T.tasks);
        if (!e) {
            if (rewound)
                break;               /* fewer tasks than num_threads said */
            rewinddir(T.tasks);
            rewound = 1;
            continue;
        }
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || !strcmp(e->d_name, self))
            continue;
        char path[sizeof e->d_name + 8], buf[512];
        snprintf(path, sizeof path, "%s/stat", e->d_name);
        if (read_small(fd, path, buf, sizeof buf) > 0) {
            seen++;
            r += stat_state(buf) == 'R';
        }
        if ((seen & 7) == 0 && rp_mono_ns() - t0 > TASK_BUDGET_NS)
            break;
    }
    uint64_t took = rp_mono_ns() - t0;
    if (took > atomic_load(&T.scan_max))
        atomic_store(&T.scan_max, took);
    *out = seen >= total ? r : (r * total + seen / 2) / seen;
    return 0;
}

/* ---------------------------------------------------------------- MXBeans -- */

static jobject global_of(JNIEnv *jni, jobject local)
{
    jobject g = local ? (*jni)->NewGlobalRef(jni, local) : NULL;
    if (local)
        (*jni)->DeleteLocalRef(jni, local);
    return g;
}

/* Look the MXBeans up, once. A failure leaves what it could not find NULL; the
 * gauges that need it are counted failed at each reading. */
static void look_up(JNIEnv *jni)
{
    T.looked = 1;
    jclass mf = (*jni)->FindClass(jni, "java/lang/management/ManagementFactory");
    jclass mu = (*jni)->FindClass(jni, "java/lang/management/MemoryUsage");
    jclass mm = (*jni)->FindClass(jni, "java/lang/management/MemoryMXBean");
    jclass gc = (*jni)->FindClass(jni, "java/lang/management/GarbageCollectorMXBean");
    jclass cl = (*jni)->FindClass(jni, "java/lang/management/ClassLoadingMXBean");
    jclass th = (*jni)->FindClass(jni, "java/lang/management/ThreadMXBean");
    jclass list = (*jni)->FindClass(jni, "java/util/List");
    if (!mf || !mu || !mm || !gc || !cl || !th || !list)
        goto out;
    jmethodID get_mem = (*jni)->GetStaticMethodID(jni, mf, "getMemoryMXBean",
                                                  "()Ljava/lang/management/MemoryMXBean;");
    jmethodID get_cl = (*jni)->GetStaticMethodID(jni, mf, "getClassLoadingMXBean",
                                                 "()Ljava/lang/management/ClassLoadingMXBean;");
    jmethodID get_gcs = (*jni)->GetStaticMethodID(jni, mf, "getGarbageCollectorMXBeans",
                                                  "()Ljava/util/List;");
    jmethodID get_th = (*jni)->GetStaticMethodID(jni, mf, "getThreadMXBean",
                                                 "()Ljava/lang/management/ThreadMXBean;");
    T.heap_usage = (*jni)->GetMethodID(jni, mm, "getHeapMemoryUsage",
                                       "()Ljava/lang/management/MemoryUsage;");
    T.usage_used = (*jni)->GetMethodID(jni, mu, "getUsed", "()J");
    T.usage_committed = (*jni)->GetMethodID(jni, mu, "getCommitted", "()J");
    T.gc_count = (*jni)->GetMethodID(jni, gc, "getCollectionCount", "()J");
    T.gc_time = (*jni)->GetMethodID(jni, gc, "getCollectionTime", "()J");
    T.class_count = (*jni)->GetMethodID(jni, cl, "getLoadedClassCount", "()I");
    T.thread_count = (*jni)->GetMethodID(jni, th, "getThreadCount", "()I");
    T.daemon_count = (*jni)->GetMethodID(jni, th, "getDaemonThreadCount", "()I");
    T.started_count = (*jni)->GetMethodID(jni, th, "getTotalStartedThreadCount", "()J");
    T.peak_count = (*jni)->GetMethodID(jni, th, "getPeakThreadCount", "()I");
    jmethodID size = (*jni)->GetMethodID(jni, list, "size", "()I");
    jmethodID get = (*jni)->GetMethodID(jni, list, "get", "(I)Ljava/lang/Object;");
    if (!get_mem || !get_cl || !get_gcs || !get_th || !size || !get ||
        (*jni)->ExceptionCheck(jni))
        goto out;
    if (T.heap_usage && T.usage_used && T.usage_committed)
        T.memory = global_of(jni, (*jni)->CallStaticObjectMethod(jni, mf, get_mem));
    (*jni)->ExceptionClear(jni);
    if (T.class_count)
        T.classes = global_of(jni, (*jni)->CallStaticObjectMethod(jni, mf, get_cl));
    (*jni)->ExceptionClear(jni);
    if (T.thread_count && T.daemon_count && T.started_count && T.peak_count)
        T.threads = global_of(jni, (*jni)->CallStaticObjectMethod(jni, mf, get_th));
    (*jni)->ExceptionClear(jni);
    jobject beans = T.gc_count && T.gc_time
                  ? (*jni)->CallStaticObjectMethod(jni, mf, get_gcs) : NULL;
    if (beans && !(*jni)->ExceptionCheck(jni)) {
        jint n = (*jni)->CallIntMethod(jni, beans, size);
        for (jint i = 0; i < n && i < GC_BEANS_MAX && !(*jni)->ExceptionCheck(jni); i++) {
            jobject b = global_of(jni, (*jni)->CallObjectMethod(jni, beans, get, i));
            if (b)
                T.gcs[T.ngcs++] = b;
        }
    }
    if (beans)
        (*jni)->DeleteLocalRef(jni, beans);
out:
    (*jni)->ExceptionClear(jni);
    jclass all[] = {mf, mu, mm, gc, cl, th, list};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i])
            (*jni)->DeleteLocalRef(jni, all[i]);
    if (!T.memory || !T.classes || !T.threads || !T.ngcs)
        rp_log_once(&T.warned, "telemetry: some java.lang.management MXBeans are not "
                    "available; their gauges are left out (counted as telemetry.failed)");
}

static int heap(JNIEnv *jni, uint64_t *used, uint64_t *committed)
{
    if (!T.memory)
        return -1;
    jobject u = (*jni)->CallObjectMethod(jni, T.memory, T.heap_usage);
    if (!u || (*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    jlong a = (*jni)->CallLongMethod(jni, u, T.usage_used);
    jlong b = (*jni)->ExceptionCheck(jni) ? -1 : (*jni)->CallLongMethod(jni, u, T.usage_committed);
    (*jni)->DeleteLocalRef(jni, u);
    if ((*jni)->ExceptionCheck(jni) || a < 0 || b < 0) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    *used = (uint64_t)a;
    *committed = (uint64_t)b;
    return 0;
}

/* Collections and their time (ms → ns), summed over every collector; a
 * collector that answers -1 (undefined) adds nothing. */
static int gcs(JNIEnv *jni, uint64_t *count, uint64_t *time_ns)
{
    if (!T.ngcs)
        return -1;
    uint64_t c = 0, t = 0;
    for (int i = 0; i < T.ngcs; i++) {
        jlong n = (*jni)->CallLongMethod(jni, T.gcs[i], T.gc_count);
        jlong ms = (*jni)->ExceptionCheck(jni) ? -1 : (*jni)->CallLongMethod(jni, T.gcs[i], T.gc_time);
        if ((*jni)->ExceptionCheck(jni)) {
            (*jni)->ExceptionClear(jni);
            return -1;
        }
        c += n > 0 ? (uint64_t)n : 0;
        t += ms > 0 ? (uint64_t)ms * 1000000u : 0;
    }
    *count = c;
    *time_ns = t;
    return 0;
}

static int loaded_classes(JNIEnv *jni, uint64_t *out)
{
    if (!T.classes)
        return -1;
    jint n = (*jni)->CallIntMethod(jni, T.classes, T.class_count);
    if ((*jni)->ExceptionCheck(jni) || n < 0) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    *out = (uint64_t)n;
    return 0;
}

/* The ThreadMXBean's Java thread counts, in the order of RP_GAUGE_THREADS_JAVA,
 * _DAEMON, _STARTED and _PEAK (events.h). */
static int java_threads(JNIEnv *jni, uint64_t out[4])
{
    if (!T.threads)
        return -1;
    jobject t = T.threads;
    jlong v[4];
    v[0] = (*jni)->CallIntMethod(jni, t, T.thread_count);
    v[1] = (*jni)->ExceptionCheck(jni) ? -1 : (*jni)->CallIntMethod(jni, t, T.daemon_count);
    v[2] = (*jni)->ExceptionCheck(jni) ? -1 : (*jni)->CallLongMethod(jni, t, T.started_count);
    v[3] = (*jni)->ExceptionCheck(jni) ? -1 : (*jni)->CallIntMethod(jni, t, T.peak_count);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    for (int i = 0; i < 4; i++) {
        if (v[i] < 0)
            return -1;
        out[i] = (uint64_t)v[i];
    }
    return 0;
}

/* ------------------------------------------------------------- a reading -- */

/* A cumulative gauge: never below its previous value (a collector or an agent
 * thread that went away must not make the total go back). */
static uint64_t monotone(uint64_t *last, uint64_t v)
{
    if (v < *last)
        v = *last;
    *last = v;
    return v;
}

static void gauge(struct rp_chunk_writer *w, const char *name, uint64_t now, int ok,
                  uint64_t v)
{
    if (!ok || rp_chunk_gauge(w, name, now, v) != 0)
        failed();
}

void rp_telemetry_pass(JNIEnv *jni, struct rp_chunk_writer *w, uint64_t now)
{
    if (!T.period || now < T.next)
        return;
    /* The next reading one period after this one was due, not after it ran, so
     * the rate stays the period's; a late pass does not make up missed ones. */
    T.next = T.next && now - T.next < T.period ? T.next + T.period : now + T.period;
    if (!T.looked)
        look_up(jni);
    struct rusage ru;
    int ok = getrusage(RUSAGE_SELF, &ru) == 0;
    gauge(w, RP_GAUGE_CPU_USER, now, ok,
          ok ? (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u : 0);
    gauge(w, RP_GAUGE_CPU_SYS, now, ok,
          ok ? (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u : 0);
    char buf[256];
    unsigned long long pages = 0, resident = 0;
    ok = read_small(AT_FDCWD, "/proc/self/statm", buf, sizeof buf) > 0 &&
         sscanf(buf, "%llu %llu", &pages, &resident) == 2;
    gauge(w, RP_GAUGE_RSS, now, ok, resident * (uint64_t)sysconf(_SC_PAGESIZE));
    uint64_t used = 0, committed = 0;
    ok = heap(jni, &used, &committed) == 0;
    gauge(w, RP_GAUGE_HEAP_USED, now, ok, used);
    gauge(w, RP_GAUGE_HEAP_COMMITTED, now, ok, committed);
    uint64_t count = 0, time_ns = 0;
    ok = gcs(jni, &count, &time_ns) == 0;
    gauge(w, RP_GAUGE_GC_COUNT, now, ok, ok ? monotone(&T.last_gc_count, count) : 0);
    gauge(w, RP_GAUGE_GC_TIME, now, ok, ok ? monotone(&T.last_gc_time, time_ns) : 0);
    uint64_t total = num_threads(), run = 0;
    gauge(w, RP_GAUGE_THREADS, now, total > 0, total);
    ok = total > 0 && runnable(total, &run) == 0;     /* before `run` is read */
    gauge(w, RP_GAUGE_THREADS_RUNNABLE, now, ok, run);
    uint64_t jt[4] = {0};
    ok = java_threads(jni, jt) == 0;
    gauge(w, RP_GAUGE_THREADS_JAVA, now, ok, jt[0]);
    gauge(w, RP_GAUGE_THREADS_DAEMON, now, ok, jt[1]);
    gauge(w, RP_GAUGE_THREADS_STARTED, now, ok, jt[2]);
    gauge(w, RP_GAUGE_THREADS_PEAK, now, ok, jt[3]);
    uint64_t classes = 0;
    ok = loaded_classes(jni, &classes) == 0;
    gauge(w, RP_GAUGE_CLASSES, now, ok, classes);
    gauge(w, RP_GAUGE_AGENT_CPU, now, 1,
          monotone(&T.last_agent_cpu, rp_threads_agent_cpu_ns()));
    atomic_fetch_add_explicit(&T.readings, 1, memory_order_relaxed);
}

static const char *const TELEMETRY_COUNTERS[] = {"telemetry.failed"};

static void telemetry_counters_read(uint64_t *v)
{
    struct rp_telemetry_stats s;
    rp_telemetry_stats(&s);
    v[0] = s.failed;
}

void rp_telemetry_counters_register(void)
{
    rp_counters_register(RP_COUNTERS_TELEMETRY, TELEMETRY_COUNTERS, 1,
                         telemetry_counters_read);
}
