/*
 * src/agent.c — the JVMTI agent's lifecycle: load, start, events, stop.
 *
 * Load (Agent_OnLoad at start-up, Agent_OnAttach into a running JVM) checks
 * everything that can be wrong before anything runs: the options, the engine
 * (async needs AsyncGetCallTrace), the timer signal (refused if someone already
 * handles it), the recording directory (created and checked now, not later).
 * Any failure prints one "ringprof: ..." line and refuses the load, so a JVM
 * never runs half-profiled; on attach the error code goes back to jcmd. The one
 * exception is a failed allocation: then the JVM starts unprofiled (decline()).
 * A refused load hands back what it took (capabilities, the recording). On
 * attach, JNI_ERR makes the JVM unload the library, so it is returned only while
 * nothing of ours can have run on another thread (before the first event is
 * enabled); a refusal after that leaves the agent loaded but inert, returns
 * JNI_OK, and tells `ringprof attach` why (attach_refused()).
 *
 * Start (VMInit, or straight away on attach, once the JVM's own signal handlers
 * are in place): crash guard and timer handler, jmethodIDs for the classes loaded
 * so far, compiled methods replayed (attach), threads that already run adopted
 * (vmstructs.h), the flusher (and, for engine=jvmti, the sampler) started.
 *
 * The event kinds are a list of descriptors (flush/kind.h), one line each in
 * load(). What load asks of them (whether threads get rings, their JVMTI
 * capabilities, given up kind by kind when the JVM refuses, their callbacks)
 * and each thread registered reach them through that list (rp_kinds_*), so a
 * new kind needs nothing here but its line. Only the cpu kind is named, where
 * the engine is resolved (AsyncGetCallTrace, the timer signal).
 *
 * Events: ThreadStart/ThreadEnd register and retire threads (threads.h);
 * ClassPrepare creates jmethodIDs; ClassLoad is enabled only because
 * AsyncGetCallTrace refuses to walk without it; CompiledMethodLoad/Unload feed the
 * frame-type map (methods.h) and switch HotSpot's DebugNonSafepoints on.
 *
 * Stop (VMDeath; Agent_OnUnload if VMDeath never came): delete every timer, switch
 * the handler off and wait for running handlers, stop the sampler, then let the
 * flusher drain, write and close the last chunk (bounded waits throughout). Slot
 * memory is never freed, so no late signal can touch freed state.
 *
 * Start and stop never overlap (the lifecycle lock): an attach can start the
 * agent while another thread is in the JVM's exit, and VMDeath then waits for
 * the start to finish before it stops what was started, for a few seconds at
 * most (the start makes JNI and JVMTI calls that can block; the exit must not
 * hang on them). An attach that comes when VMDeath has already been sent (its
 * callbacks ran before our events were enabled, or ours gave up waiting, or came
 * before the start) is refused, or, when that is only seen once started, stopped
 * at once: no VMDeath would come to close the chunk and remove the socket.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jvmti.h>

#include "ringprof/recording.h"
#include "ringprof/options.h"
#include "kinds/alloc.h"
#include "walk/callstack.h"
#include "walk/stackwalk.h"
#include "code/codecache.h"
#include "code/codemap.h"
#include "control/control.h"
#include "control/control_ops.h"
#include "threads/cputimer.h"
#include "core/engine.h"
#include "kinds/cpu_async.h"
#include "flush/flusher.h"
#include "flush/kind.h"
#include "kinds/cpu_jvmti.h"
#include "kinds/wall.h"
#include "threads/jthread.h"
#include "kinds/lock.h"
#include "core/log.h"
#include "code/methods.h"
#include "threads/threadadopt.h"
#include "control/threaddump.h"
#include "threads/threads.h"
#include "threads/threadtimer.h"
#include "threads/vmnames.h"
#include "code/vmstructs.h"
#include "flush/vthreads.h"

#define EXPORT __attribute__((visibility("default")))

enum agent_state {
    AGENT_IDLE = 0,       /* not loaded (or the load was refused)                */
    AGENT_LOADED,         /* Agent_OnLoad done, waiting for VMInit               */
    AGENT_RUNNING,
    AGENT_STOPPING,
    AGENT_STOPPED
};

static struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    struct rp_options opt;
    int async;                        /* the resolved engine                       */
    int attached;
    int have_cpu_time;
    struct rp_recording *rec;         /* the flusher's once started: it frees it   */
    char dir[PATH_MAX];               /* rec's directory, for messages after that  */
    _Atomic int state;
    jfieldID thread_tid;              /* java.lang.Thread.tid, or NULL              */
    jvmtiCapabilities got;            /* what AddCapabilities granted               */
    struct rp_kind_load kinds;        /* what the kinds' load-time hooks get       */
    pthread_mutex_t lifecycle_lock;   /* held through start() and stop()            */
    int code_may_run;                 /* an event was enabled: our code may run on
                                       * other threads from then on                */
    int start_failed;                 /* start_locked logged why it failed           */
    _Atomic int vm_dead;              /* our VMDeath callback was called             */
    struct rp_engine_env env;         /* what the engines get at start               */
    int phases_begun;                 /* engine phases whose start was entered       */
} A = {.lifecycle_lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------- helpers -- */

/* An engine's JVMTI call waits this long for the flusher: a pass takes
 * milliseconds, an fsync on a sick disk may take seconds; beyond this the
 * control client gets a clear error. */
#define ENGINE_CALL_WAIT_MS 10000

/* env.call of the engines: the flusher is the agent's thread attached to the
 * JVM that takes work from others (rp_flusher_call). */
static int call_on_flusher(rp_engine_jvm_fn fn, void *arg, char *err, size_t errlen)
{
    return rp_flusher_call(fn, arg, ENGINE_CALL_WAIT_MS, err, errlen);
}

/* Start every engine of `phase`, in table order. @return 0, or -1 with err. */
static int start_engines(enum rp_engine_phase phase, char *err, size_t errlen)
{
    size_t n;
    const struct rp_engine_entry *const *e = rp_engines(&n);
    A.phases_begun = (int)phase + 1;
    for (size_t i = 0; i < n; i++)
        if (e[i]->phase == phase && e[i]->start(&A.env, err, errlen) != 0)
            return -1;
    return 0;
}

/* Stop every engine of `phase` (each stop is safe on an engine not started). */
static void stop_engines(enum rp_engine_phase phase, unsigned wait_ms)
{
    size_t n;
    const struct rp_engine_entry *const *e = rp_engines(&n);
    for (size_t i = 0; i < n; i++)
        if (e[i]->phase == phase)
            e[i]->stop(wait_ms);
}

/* Stop the engines of every phase begun, the last phase first. */
static void stop_engines_begun(unsigned wait_ms)
{
    for (int p = A.phases_begun - 1; p >= 0; p--) {
        if (p == RP_ENGINE_PHASE_SIGNAL)
            rp_threads_disarm_all();      /* no timer fires once the handler is off */
        stop_engines((enum rp_engine_phase)p, wait_ms);
    }
}

static void help_line(void *arg, const char *line)
{
    (void)arg;
    char buf[600];
    int n = snprintf(buf, sizeof buf, "%s\n", line);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
        (void)w;
    }
}

static int64_t java_tid(JNIEnv *jni, jthread t)
{
    if (!A.thread_tid) {
        jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
        A.thread_tid = k ? (*jni)->GetFieldID(jni, k, "tid", "J") : NULL;
        if (!A.thread_tid)
            (*jni)->ExceptionClear(jni);
        if (k)
            (*jni)->DeleteLocalRef(jni, k);
        if (!A.thread_tid)
            return 0;
    }
    return (int64_t)(*jni)->GetLongField(jni, t, A.thread_tid);
}

/* Name and daemon flag of a thread (name malloc'ed, or NULL). */
static char *thread_info(JNIEnv *jni, jthread t, int *daemon)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    *daemon = 0;
    if ((*A.jvmti)->GetThreadInfo(A.jvmti, t, &info) != JVMTI_ERROR_NONE)
        return NULL;
    char *name = info.name ? strdup(info.name) : NULL;
    *daemon = info.is_daemon;
    if (info.name)
        (*A.jvmti)->Deallocate(A.jvmti, (unsigned char *)info.name);
    if (info.thread_group)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    return name;
}

/* --------------------------------------------------------------- events -- */

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    if (atomic_load(&A.state) != AGENT_RUNNING || rp_jthread_is_agent(jni, thread))
        return;
    int daemon;
    char *name = thread_info(jni, thread, &daemon);
    jweak ref = (*jni)->NewWeakGlobalRef(jni, thread);
    struct rp_slot *s = rp_threads_attach_current(jni, ref, name, daemon,
                                                  java_tid(jni, thread));
    rp_kinds_thread_start(s, jni, thread);
    free(name);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti; (void)jni; (void)thread;
    if (atomic_load(&A.state) >= AGENT_RUNNING)
        rp_threads_detach_current();
}

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jclass k)
{
    (void)jvmti; (void)jni; (void)t; (void)k;
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jclass k)
{
    (void)jvmti; (void)jni; (void)t;
    /* The jmethodIDs of a new class: CPU samples taken meanwhile show
     * [ringprof:class] under the code that loaded it. */
    struct rp_slot *s = rp_threads_by_tid(rp_gettid());
    int outer = s ? rp_callstack_enter(s, RP_AGENT_CLASS) : 0;
    rp_methods_prepare_class(k);
    if (s)
        rp_callstack_leave(s, outer);
}

static void JNICALL on_compiled_load(jvmtiEnv *jvmti, jmethodID m, jint size,
                                     const void *addr, jint map_len,
                                     const jvmtiAddrLocationMap *map, const void *info)
{
    (void)jvmti; (void)size; (void)map_len; (void)map;
    rp_methods_compiled_load(m, addr, info);
    rp_codecache_learn_compiled(addr);
}

static void JNICALL on_code_generated(jvmtiEnv *jvmti, const char *name,
                                      const void *addr, jint length)
{
    (void)jvmti;
    rp_codecache_add(name, addr, length);
}

static void JNICALL on_compiled_unload(jvmtiEnv *jvmti, jmethodID m, const void *addr)
{
    (void)jvmti;
    rp_methods_compiled_unload(m, addr);
}

static void start(JNIEnv *jni, jthread self);
static void stop(void);
static void stop_locked(void);

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    start(jni, thread);
}

/* How long VMDeath waits for a start in progress (an attach racing the exit). */
#define VM_DEATH_WAIT_S 5

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti; (void)jni;
    /* First, so that a start that is still running, or has yet to begin, stops
     * itself when it sees it (start(), Agent_OnAttach). */
    atomic_store(&A.vm_dead, 1);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += VM_DEATH_WAIT_S;
    if (pthread_mutex_timedlock(&A.lifecycle_lock, &until) != 0) {
        rp_log("the JVM exits while an attach is still starting the agent (waited %d s): "
               "not waiting longer; the start stops the agent when it ends, if the JVM "
               "is still there", VM_DEATH_WAIT_S);
        return;
    }
    stop_locked();
    pthread_mutex_unlock(&A.lifecycle_lock);
}

/* ------------------------------------------------------------------ load -- */

/* What load() returns. */
enum { LOAD_OK = 0, LOAD_REFUSED = -1, LOAD_NO_MEMORY = -2 };

/* The events load() enables (and attach_refused() disables again). */
static const jvmtiEvent g_events[] = {
    JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START,
    JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE,
    JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
    JVMTI_EVENT_DYNAMIC_CODE_GENERATED};
#define NEVENTS (sizeof g_events / sizeof g_events[0])

static int add_capabilities(char *err, size_t errlen)
{
    jvmtiCapabilities pot, want;
    memset(&want, 0, sizeof want);
    if ((*A.jvmti)->GetPotentialCapabilities(A.jvmti, &pot) != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "JVMTI GetPotentialCapabilities failed");
        return -1;
    }
    want.can_generate_compiled_method_load_events = pot.can_generate_compiled_method_load_events;
    want.can_get_line_numbers = pot.can_get_line_numbers;
    want.can_get_source_file_name = pot.can_get_source_file_name;
    want.can_get_thread_cpu_time = pot.can_get_thread_cpu_time;
    rp_vthreads_want(A.opt.vthreads, &pot, &want);
    /* No kind's capabilities are worth refusing the load for: when the JVM
     * refuses (another agent holds one), the kinds give theirs up one at a
     * time (kind.h's caps_keep), and only the agent's own are required. */
    jvmtiCapabilities tries[RP_ENGINES_MAX + 1];
    size_t n = rp_kinds_capabilities(&A.kinds, &pot, &want, tries), t = 0;
    while (t < n && (*A.jvmti)->AddCapabilities(A.jvmti, &tries[t]) != JVMTI_ERROR_NONE)
        t++;
    if (t == n) {
        snprintf(err, errlen, "JVMTI AddCapabilities failed");
        return -1;
    }
    want = tries[t];
    A.got = want;
    A.have_cpu_time = want.can_get_thread_cpu_time;
    if (!A.async && !A.have_cpu_time) {
        snprintf(err, errlen, "engine=jvmti needs can_get_thread_cpu_time, which this "
                 "JVM does not offer");
        return -1;
    }
    if (!want.can_generate_compiled_method_load_events)
        rp_log("this JVM has no CompiledMethodLoad events: every Java frame will be "
               "reported as interpreted");
    rp_methods_init(A.jvmti, want.can_get_line_numbers, want.can_get_source_file_name);
    rp_callstack_init(A.jvmti);
    rp_threaddump_init(A.vm, A.jvmti);
    return 0;
}

static int set_events(char *err, size_t errlen)
{
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    cb.CompiledMethodLoad = on_compiled_load;
    cb.CompiledMethodUnload = on_compiled_unload;
    cb.DynamicCodeGenerated = on_code_generated;
    rp_kinds_init(&A.kinds, &A.got, &cb);
    if ((*A.jvmti)->SetEventCallbacks(A.jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "JVMTI SetEventCallbacks failed");
        return -1;
    }
    /* From the first one on, other threads may be in our callbacks. */
    A.code_may_run = 1;
    for (size_t i = 0; i < NEVENTS; i++) {
        jvmtiError e = (*A.jvmti)->SetEventNotificationMode(A.jvmti, JVMTI_ENABLE,
                                                            g_events[i], NULL);
        if (e != JVMTI_ERROR_NONE && g_events[i] != JVMTI_EVENT_COMPILED_METHOD_LOAD &&
            g_events[i] != JVMTI_EVENT_COMPILED_METHOD_UNLOAD &&
            g_events[i] != JVMTI_EVENT_DYNAMIC_CODE_GENERATED) {
            snprintf(err, errlen, "JVMTI cannot enable event %d (error %d)",
                     (int)g_events[i], (int)e);
            return -1;
        }
    }
    return 0;
}

static char *sysprop(const char *name)
{
    char *v = NULL;
    if ((*A.jvmti)->GetSystemProperty(A.jvmti, name, &v) != JVMTI_ERROR_NONE || !v)
        return strdup("");
    char *copy = strdup(v);
    (*A.jvmti)->Deallocate(A.jvmti, (unsigned char *)v);
    return copy;
}

static int open_recording(char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if (A.opt.dir[0])
        snprintf(dir, sizeof dir, "%s", A.opt.dir);
    else
        snprintf(dir, sizeof dir, "ringprof-%ld", (long)getpid());
    char *vm_name = sysprop("java.vm.name");
    char *vm_version = sysprop("java.vm.version");
    char *vendor = sysprop("java.vm.vendor");
    char *rt_name = sysprop("java.runtime.name");
    char *rt_version = sysprop("java.runtime.version");
    /* The main class or jar: sun.java.command's first word (its arguments may
     * hold anything, secrets included, and are never kept). */
    char *main_cmd = sysprop("sun.java.command");
    if (main_cmd)
        main_cmd[strcspn(main_cmd, " ")] = '\0';
    char interval[32], engine[16], cpus[16];
    snprintf(interval, sizeof interval, "%llu", (unsigned long long)A.opt.interval_ns);
    /* CPUs online: what a reader divides the process's CPU rate by for a share
     * of the host (the JFR writer's jdk.CPULoad). */
    snprintf(cpus, sizeof cpus, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    snprintf(engine, sizeof engine, "%s", A.async ? "async" : "jvmti");
    struct rp_kv meta[] = {
        {RP_META_JVM_NAME, vm_name},
        {RP_META_JVM_VERSION, vm_version},
        {RP_META_OPTIONS, A.opt.raw},
        {RP_META_PRODUCER, "ringprof " RINGPROF_VERSION},
        {"agent.engine", engine},
        {"agent.interval_ns", interval},
        {"agent.native", A.async && A.opt.native ? "on" : "off"},
        {"agent.timer", A.async ? rp_cputimer_source_name() : "none"},
        {RP_META_HOST_CPUS, cpus},
        {RP_META_JVM_VENDOR, vendor},
        {RP_META_RUNTIME_NAME, rt_name},
        {RP_META_RUNTIME_VERSION, rt_version},
        {RP_META_JVM_MAIN, main_cmd},
        {RP_META_SERVICE, A.opt.service},
        {RP_META_LABELS, A.opt.labels},
        /* recording=: the recording takes it instead of its own (NULL: none) */
        {RP_META_RECORDING, A.opt.recording[0] ? A.opt.recording : NULL},
    };
    /* Only what is known: an empty value is no value. */
    size_t nmeta = 0;
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (meta[i].value && meta[i].value[0])
            meta[nmeta++] = meta[i];
    struct rp_recording_limits lim = {A.opt.maxsize, A.opt.maxage_ns, A.opt.chunksize,
                                      A.opt.chunktime_ns};
    char why[1024];
    A.rec = rp_recording_open(dir, &lim, meta, nmeta, why, sizeof why);
    free(vm_name);
    free(vm_version);
    free(vendor);
    free(rt_name);
    free(rt_version);
    free(main_cmd);
    if (A.rec)
        snprintf(A.dir, sizeof A.dir, "%s", rp_recording_dir(A.rec));
    if (A.rec && rp_recording_in_subdir(A.rec))
        rp_log("dir=%s may be written by every user: recording into its private "
               "subdirectory %s instead", dir, A.dir);
    if (!A.rec) {
        /* rp_recording_open sets errno: ENOMEM is our lack of memory, not the
         * directory's fault. */
        int nomem = errno == ENOMEM;
        snprintf(err, errlen, "dir=%.400s: %.500s", dir, why);
        return nomem ? LOAD_NO_MEMORY : LOAD_REFUSED;
    }
    return 0;
}

/* Everything Agent_OnLoad and Agent_OnAttach share. @return LOAD_OK, or
 * LOAD_NO_MEMORY or LOAD_REFUSED with err; the caller undoes what was done
 * (unload()). */
static int load(JavaVM *vm, const char *options, char *err, size_t errlen)
{
    if (rp_options_parse(options, &A.opt, err, errlen) != 0)
        return LOAD_REFUSED;
    if (A.opt.help) {
        rp_options_print_help(help_line, NULL);
        snprintf(err, errlen, "help printed; not profiling");
        return LOAD_REFUSED;
    }
    A.vm = vm;
    if ((*vm)->GetEnv(vm, (void **)&A.jvmti, JVMTI_VERSION_11) != JNI_OK &&
        (*vm)->GetEnv(vm, (void **)&A.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        A.jvmti = NULL;
        snprintf(err, errlen, "this JVM offers no JVMTI environment");
        return LOAD_REFUSED;
    }
    int agct = rp_async_available();
    if (A.opt.engine == RP_ENGINE_ASYNC && !agct) {
        snprintf(err, errlen, "engine=async: this JVM does not export "
                 "AsyncGetCallTrace; use engine=jvmti");
        return LOAD_REFUSED;
    }
    A.async = A.opt.engine == RP_ENGINE_ASYNC || (A.opt.engine == RP_ENGINE_AUTO && agct);
    if (!A.async && A.opt.engine == RP_ENGINE_AUTO)
        rp_log("AsyncGetCallTrace not found: using engine=jvmti (safepoint-biased)");
    /* The event kinds (flush/kind.h), one line each: the cpu kind of the
     * engine resolved, then the others, in the order of the control bits. */
    const struct rp_kind *kinds[] = {
        A.async ? &rp_kind_cpu_async : &rp_kind_cpu_jvmti,
        &rp_kind_alloc,
        &rp_kind_lock,
        &rp_kind_wall,
    };
    rp_kinds_set(kinds, sizeof kinds / sizeof kinds[0]);
    if (A.async && rp_async_check_signal(A.opt.signal, err, errlen) != 0)
        return LOAD_REFUSED;
    /* Before the recording, whose metadata names the source. */
    if (A.async && rp_cputimer_init(A.opt.timer, A.opt.signal, A.opt.interval_ns, err,
                                    errlen) != 0)
        return errno == ENOMEM ? LOAD_NO_MEMORY : LOAD_REFUSED;
    /* Threads have rings only if some kind's records go to them (kind.h). */
    int rings = rp_kinds_rings(&A.opt);
    A.kinds = (struct rp_kind_load){A.jvmti, &A.opt, rings};
    struct rp_threads_config tc = {
        A.opt.depth, rings ? A.opt.ring_bytes : 0, A.async ? A.opt.interval_ns : 0};
    if (add_capabilities(err, errlen) != 0)
        return LOAD_REFUSED;
    int rc = open_recording(err, errlen);
    if (rc != 0)
        return rc;
    /* After the checks that can refuse: the thread table's mapping is never
     * unmapped (a late signal may read it). Its one failure is the mapping. */
    if (rp_threads_init(&tc, err, errlen) != 0)
        return LOAD_NO_MEMORY;
    return set_events(err, errlen) == 0 ? LOAD_OK : LOAD_REFUSED;
}

/* Java threads that were running before start. */
static void adopt_threads(JNIEnv *jni, int vmstructs)
{
    jint n = 0;
    jthread *threads = NULL;
    /* From before the list is taken: a thread that ends while we look at it must
     * not be left with a timer (threads.h). */
    rp_threads_adopt_begin();
    if ((*A.jvmti)->GetAllThreads(A.jvmti, &n, &threads) != JVMTI_ERROR_NONE) {
        rp_threads_adopt_end();
        return;
    }
    for (jint i = 0; i < n; i++) {
        jthread t = threads[i];
        if (!rp_jthread_is_agent(jni, t)) {
            int daemon;
            char *name = thread_info(jni, t, &daemon);
            uint64_t jt = vmstructs ? rp_vmstructs_java_thread(jni, t) : 0;
            pid_t tid = rp_vmstructs_tid(jt);
            JNIEnv *env = tid ? rp_vmstructs_env(jt) : NULL;
            /* Re-read: a thread that ended meanwhile has eetop 0 now. */
            if (jt && rp_vmstructs_java_thread(jni, t) != jt)
                tid = 0, env = NULL;
            if (tid || !A.async)
                rp_threads_adopt(jni, tid, env, (*jni)->NewWeakGlobalRef(jni, t), name,
                                 daemon, java_tid(jni, t));
            if (tid)
                rp_kinds_thread_start(rp_threads_by_tid(tid), jni, t);
            free(name);
        }
        (*jni)->DeleteLocalRef(jni, t);
    }
    (*A.jvmti)->Deallocate(A.jvmti, (unsigned char *)threads);
    rp_threads_adopt_end();
}

/* Start sampling. On failure print why and stay inert (the JVM runs on). */
static void start_locked(JNIEnv *jni, jthread self);

static void start(JNIEnv *jni, jthread self)
{
    pthread_mutex_lock(&A.lifecycle_lock);
    start_locked(jni, self);
    /* Our VMDeath came while we started and gave up waiting, or came before the
     * start (its stop found nothing to stop): none will follow. */
    if (atomic_load(&A.state) == AGENT_RUNNING && atomic_load(&A.vm_dead)) {
        if (!A.attached)                  /* (Agent_OnAttach says it) */
            rp_log("the JVM is shutting down; the agent is stopped again");
        stop_locked();
    }
    pthread_mutex_unlock(&A.lifecycle_lock);
}

static void start_locked(JNIEnv *jni, jthread self)
{
    char err[1024] = "";
    if (atomic_load(&A.state) != AGENT_LOADED)
        return;
    int vmstructs = rp_vmstructs_init() == 0 && rp_vmstructs_learn_env(jni, self) == 0;
    if (A.async && !vmstructs)
        rp_log("HotSpot VMStructs not usable: Java threads started before the agent "
               "are sampled without Java frames");
    /* Without it, the JVM's hidden threads keep the kernel's 15-byte names. */
    if (vmstructs)
        rp_vmnames_learn(jni, self);
    rp_vthreads_start(A.jvmti, jni, A.opt.vthreads, &A.got);
    rp_codemap_refresh();
    /* The stubs and the interpreter: the events since load, or, on attach, all of
     * them replayed (a range reported twice is kept once). */
    uint64_t code_low, code_high;
    if (vmstructs && rp_vmstructs_code_bounds(&code_low, &code_high) == 0)
        rp_codecache_set_bounds(code_low, code_high);
    if (A.attached)
        (*A.jvmti)->GenerateEvents(A.jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    rp_codecache_publish();
    /* The code heaps (VMStructs), checked on the interpreter's blob: without them
     * stubs are stepped out of by their shape only, and compiled frames that
     * AsyncGetCallTrace refuses stay unrecovered (engines.md). */
    if (A.async && vmstructs && rp_codecache_init_blobs() != 0)
        rp_log("HotSpot's code heaps are not readable through VMStructs: some stacks "
               "through runtime stubs and method prologues stay incomplete");
#ifdef RP_TEST_HOOKS
    /* Test builds only: RINGPROF_TESTFAULT=slow_start=MS makes the start take MS
     * longer, so that the JVM can be made to exit during it (tests/fault). */
    const char *tf = getenv("RINGPROF_TESTFAULT");
    const char *slow = tf ? strstr(tf, "slow_start=") : NULL;
    if (slow) {
        long ms = atol(slow + strlen("slow_start="));
        rp_log("test: the start is slowed down by %ld ms", ms);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
#endif
    A.env = (struct rp_engine_env){A.vm, A.jvmti, jni, &A.opt, rp_flusher_wake,
                                   call_on_flusher};
    rp_engines_set_env(&A.env);
    /* The handler must be in place before the first timer can fire (the
     * default action of SIGPROF kills the process). */
    if (start_engines(RP_ENGINE_PHASE_SIGNAL, err, sizeof err) != 0)
        goto fail;
    /* From here threads register themselves at ThreadStart; adoption below and
     * the flusher's first scan cover the ones already running. */
    atomic_store(&A.state, AGENT_RUNNING);
    if (!A.attached) {
        int daemon;
        char *name = thread_info(jni, self, &daemon);
        struct rp_slot *s = rp_threads_attach_current(jni, (*jni)->NewWeakGlobalRef(jni, self),
                                                      name, daemon, java_tid(jni, self));
        rp_kinds_thread_start(s, jni, self);
        free(name);
    }
    rp_methods_prepare_loaded(jni);
    if (A.attached)
        (*A.jvmti)->GenerateEvents(A.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
    /* The samplers' threads (jvmti engine, wall): before the flusher, so that a
     * failure leaves the recording ours to close. */
    if (start_engines(RP_ENGINE_PHASE_THREAD, err, sizeof err) != 0)
        goto fail;
    rp_stackwalk_counters_register();     /* group RP_COUNTERS_WALK, counters.h */
    struct rp_flusher_config fc = {A.rec, A.async, A.opt.flush_ns,
                                   A.opt.depth, A.opt.ring_bytes, A.opt.telemetry_ns};
    if (rp_flusher_start(A.jvmti, jni, &fc, err, sizeof err) != 0)
        goto fail;
    adopt_threads(jni, vmstructs);
    start_engines(RP_ENGINE_PHASE_EVENTS, err, sizeof err);    /* cannot fail */
    A.env.jni = NULL;                 /* the starting thread's, valid only here */
    char *main_class = sysprop("sun.java.command");
    struct rp_control_ops_config cc = {&A.opt, A.dir, main_class};
    rp_control_ops_start(&cc);        /* a failure is logged; profiling goes on */
    free(main_class);
    /* Without dir= the files land in the JVM's working directory, which the
     * user may not know: say where, as an absolute path. */
    if (!A.opt.quiet)
        rp_log("recording to %s", A.dir);
    return;
fail:
    rp_log("cannot start: %s; not profiling", err);
    A.start_failed = 1;
    rp_vthreads_stop();
    if (A.attached)
        rp_discovery_attach_error(err);
    stop_engines_begun(1000);
    A.env.jni = NULL;
    rp_recording_close(A.rec);        /* the flusher never took it */
    A.rec = NULL;
    atomic_store(&A.state, AGENT_STOPPED);
}

static void stop(void)
{
    pthread_mutex_lock(&A.lifecycle_lock);
    stop_locked();
    pthread_mutex_unlock(&A.lifecycle_lock);
}

static void stop_locked(void)
{
    int expected = AGENT_RUNNING;
    if (!atomic_compare_exchange_strong(&A.state, &expected, AGENT_STOPPING)) {
        if (expected == AGENT_LOADED) {
            rp_recording_close(A.rec);          /* the JVM died before VMInit */
            A.rec = NULL;
            atomic_store(&A.state, AGENT_STOPPED);
        }
        return;
    }
    rp_control_ops_stop();            /* no request may race the last close */
    rp_discovery_attach_dir(NULL);
    rp_vthreads_stop();
    stop_engines_begun(2000);
    /* The flusher freed A.rec in rp_recording_close (or, when it did not finish
     * in time, may still be using it): only the copy of its name is ours. */
    if (rp_flusher_stop(20000) != 0)
        rp_log("the last chunk in %s could not be closed cleanly", A.dir);
    A.rec = NULL;
    atomic_store(&A.state, AGENT_STOPPED);
}

/* Take back what load() did: no callback (JVMTI sends no event without one), no
 * event, no capability (allocation sampling's is one per JVM, and our JVMTI
 * environment outlives the library: one kept by a refused attach would leave
 * every later attach without allocation samples), and the recording closed if
 * the flusher never took it. Callbacks already running on other threads are not
 * waited for. */
static void unload(void)
{
    if (A.jvmti) {
        jvmtiEventCallbacks none;
        memset(&none, 0, sizeof none);
        (*A.jvmti)->SetEventCallbacks(A.jvmti, &none, sizeof none);
        for (size_t i = 0; i < NEVENTS; i++)
            (*A.jvmti)->SetEventNotificationMode(A.jvmti, JVMTI_DISABLE, g_events[i], NULL);
        (*A.jvmti)->RelinquishCapabilities(A.jvmti, &A.got);
    }
    if (atomic_load(&A.state) <= AGENT_LOADED) {
        rp_recording_close(A.rec);
        A.rec = NULL;
    }
}

/* A load that failed for want of memory (LOAD_NO_MEMORY) is neither the user's
 * mistake nor a reason to keep the application from starting: the JVM runs on
 * unprofiled, with the one line that says so. A bad option or an unusable
 * directory still refuses the load, since the same command line would fail the
 * same way every time. */
static void decline(void)
{
    unload();
    atomic_store(&A.state, AGENT_STOPPED);
}

/* An attach that does not go on: refused, failed to start, or stopped again at
 * once because the JVM is exiting. `why` (NULL: already said) is logged and left
 * for `ringprof attach`. The JVM unloads the library of a failed Agent_OnAttach
 * (JDK 21, and Debian's 17.0.x), so JNI_ERR is returned only while nothing of
 * ours can have run on another thread: no event enabled yet, no signal handler
 * ever installed. After that, another thread may still be inside one of our
 * callbacks or handlers (clearing the callbacks does not wait for those, and a
 * signal handler cannot be taken back safely): the library must stay, so the
 * attach is reported as loaded, with the agent inert. */
static jint attach_refused(const char *why)
{
    if (why) {
        rp_log("%s", why);
        rp_discovery_attach_error(why);
    }
    unload();
    if (A.code_may_run || rp_async_ever_installed()) {
        atomic_store(&A.state, AGENT_STOPPED);
        return JNI_OK;
    }
    /* Gone with the library; a JVM that keeps it may see a new attach. */
    if (A.jvmti)
        (*A.jvmti)->DisposeEnvironment(A.jvmti);
    A.jvmti = NULL;
    A.attached = 0;
    atomic_store(&A.state, AGENT_IDLE);
    return JNI_ERR;
}

/* Is the JVM still in its live phase (VMDeath not yet sent)? */
static int vm_live(void)
{
    jvmtiPhase phase = JVMTI_PHASE_LIVE;
    return (*A.jvmti)->GetPhase(A.jvmti, &phase) != JVMTI_ERROR_NONE ||
           phase == JVMTI_PHASE_LIVE;
}

/* ------------------------------------------------------------ entry points -- */

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    char err[1024] = "";
    if (atomic_load(&A.state) != AGENT_IDLE) {
        rp_log("loaded twice; the second -agentpath is ignored");
        return JNI_OK;
    }
    int rc = load(vm, options, err, sizeof err);
    if (rc == LOAD_NO_MEMORY) {
        rp_log("%s; not profiling (out of memory at load: the JVM runs on)", err);
        decline();
        return JNI_OK;
    }
    if (rc != LOAD_OK) {
        /* The JVM does not start: no other thread runs yet. */
        rp_log("%s", err);
        unload();
        return JNI_ERR;
    }
    atomic_store(&A.state, AGENT_LOADED);
    return JNI_OK;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    char err[1024] = "";
    int s = atomic_load(&A.state);
    if (s != AGENT_IDLE) {
        /* (JNI_ERR is safe here: the library was already loaded, so the JVM's
         * unload only drops the reference this attach took.) */
        const char *why = s == AGENT_STOPPED ?
            "ringprof was loaded into this JVM before and is inert now (an earlier "
            "message in the JVM's log says why); attach refused: restart the JVM to "
            "profile it" :
            "ringprof is already running in this JVM; attach refused";
        rp_log("%s", why);
        rp_discovery_attach_error(why);
        return JNI_ERR;
    }
    A.attached = 1;
    if (load(vm, options, err, sizeof err) != LOAD_OK)
        return attach_refused(err);
    if (!vm_live() || atomic_load(&A.vm_dead))
        return attach_refused("the JVM is shutting down; attach refused");
    JNIEnv *jni;
    jthread self;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK ||
        (*A.jvmti)->GetCurrentThread(A.jvmti, &self) != JVMTI_ERROR_NONE)
        return attach_refused("attach: no JNI environment on the attaching thread");
    atomic_store(&A.state, AGENT_LOADED);
    start(jni, self);
    (*jni)->DeleteLocalRef(jni, self);
    /* VMDeath may have been sent while we started, before our events were on:
     * then none will come (the phase turns dead after the callbacks; our own
     * VMDeath is handled by start()). */
    pthread_mutex_lock(&A.lifecycle_lock);
    if (atomic_load(&A.state) == AGENT_RUNNING && !vm_live())
        stop_locked();
    int running = atomic_load(&A.state) == AGENT_RUNNING;
    if (running)
        rp_discovery_attach_dir(A.dir);   /* for `ringprof attach`'s reply */
    pthread_mutex_unlock(&A.lifecycle_lock);
    if (running)
        return JNI_OK;
    /* Stopped: the start failed (it said why), or the JVM is exiting (stopped by
     * VMDeath, by start() or just above). */
    return attach_refused(A.start_failed ? NULL :
                          "the JVM is shutting down; the attach is undone");
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
    int s = atomic_load(&A.state);
    if (s == AGENT_RUNNING) {
        /* No VMDeath (the JVM is going away in an unusual way): JVMTI may no
         * longer be used, so only make sure no signal finds us working. */
        rp_control_ops_stop();
        rp_threads_disarm_all();
        stop_engines(RP_ENGINE_PHASE_SIGNAL, 1000);
        atomic_store(&A.state, AGENT_STOPPED);
    } else if (s == AGENT_LOADED) {
        stop();
    }
}
