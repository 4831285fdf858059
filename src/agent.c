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
 *
 * Start (VMInit, or straight away on attach, once the JVM's own signal handlers
 * are in place): crash guard and timer handler, jmethodIDs for the classes loaded
 * so far, compiled methods replayed (attach), threads that already run adopted
 * (vmstructs.h), the flusher (and, for engine=jvmti, the sampler) started.
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
 * the start to finish before it stops what was started. An attach that comes
 * when VMDeath has already been sent (its callbacks ran before our events were
 * enabled) is refused, or, when that is only seen once started, stopped at once:
 * no VMDeath would come to close the chunk and remove the socket.
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
#include <unistd.h>
#include <jvmti.h>

#include "ringprof/recording.h"
#include "agent.h"
#include "alloc.h"
#include "control.h"
#include "control_ops.h"
#include "engine_async.h"
#include "engine_jvmti.h"
#include "flusher.h"
#include "log.h"
#include "methods.h"
#include "options.h"
#include "threads.h"
#include "unwind.h"
#include "vmstructs.h"

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
    struct rp_recording *rec;
    _Atomic int state;
    pthread_mutex_t agent_threads_lock;
    jobject agent_threads[4];         /* global refs, for ThreadStart to skip       */
    int nagent_threads;
    jfieldID thread_tid;              /* java.lang.Thread.tid, or NULL              */
    jvmtiCapabilities got;            /* what AddCapabilities granted               */
    struct rp_alloc_config alloc;
    pthread_mutex_t lifecycle_lock;   /* held through start() and stop()            */
} A = {.agent_threads_lock = PTHREAD_MUTEX_INITIALIZER,
       .lifecycle_lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------- helpers -- */

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

int rp_agent_run_thread(jvmtiEnv *jvmti, JNIEnv *jni, const char *name,
                        jvmtiStartFunction proc, void *arg, jint priority,
                        char *err, size_t errlen)
{
    jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = k ? (*jni)->GetMethodID(jni, k, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring jname = init ? (*jni)->NewStringUTF(jni, name) : NULL;
    jobject t = jname ? (*jni)->NewObject(jni, k, init, jname) : NULL;
    jobject g = t ? (*jni)->NewGlobalRef(jni, t) : NULL;
    if (!g) {
        (*jni)->ExceptionClear(jni);
        snprintf(err, errlen, "cannot create the %s thread object", name);
        return -1;
    }
    pthread_mutex_lock(&A.agent_threads_lock);
    if (A.nagent_threads < (int)(sizeof A.agent_threads / sizeof A.agent_threads[0]))
        A.agent_threads[A.nagent_threads++] = g;
    pthread_mutex_unlock(&A.agent_threads_lock);
    jvmtiError e = (*jvmti)->RunAgentThread(jvmti, g, proc, arg, priority);
    (*jni)->DeleteLocalRef(jni, t);
    (*jni)->DeleteLocalRef(jni, jname);
    (*jni)->DeleteLocalRef(jni, k);
    if (e != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "cannot start the %s thread (JVMTI error %d)", name, (int)e);
        return -1;
    }
    return 0;
}

static int is_agent_thread(JNIEnv *jni, jthread t)
{
    int yes = 0;
    pthread_mutex_lock(&A.agent_threads_lock);
    for (int i = 0; i < A.nagent_threads && !yes; i++)
        yes = (*jni)->IsSameObject(jni, A.agent_threads[i], t);
    pthread_mutex_unlock(&A.agent_threads_lock);
    return yes;
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
    if (atomic_load(&A.state) != AGENT_RUNNING || is_agent_thread(jni, thread))
        return;
    int daemon;
    char *name = thread_info(jni, thread, &daemon);
    jweak ref = (*jni)->NewWeakGlobalRef(jni, thread);
    rp_threads_attach_current(jni, ref, name, daemon, java_tid(jni, thread));
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
    rp_methods_prepare_class(k);
}

static void JNICALL on_compiled_load(jvmtiEnv *jvmti, jmethodID m, jint size,
                                     const void *addr, jint map_len,
                                     const jvmtiAddrLocationMap *map, const void *info)
{
    (void)jvmti; (void)size; (void)map_len; (void)map;
    rp_methods_compiled_load(m, addr, info);
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

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti; (void)jni;
    stop();
}

/* ------------------------------------------------------------------ load -- */

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
    jvmtiCapabilities base = want;
    rp_alloc_want(&A.alloc, &pot, &want);
    /* Allocation sampling is never worth refusing the load for: if its
     * capabilities cannot be had (another agent holds one), go on without. */
    if ((*A.jvmti)->AddCapabilities(A.jvmti, &want) != JVMTI_ERROR_NONE) {
        want = base;
        if ((*A.jvmti)->AddCapabilities(A.jvmti, &want) != JVMTI_ERROR_NONE) {
            snprintf(err, errlen, "JVMTI AddCapabilities failed");
            return -1;
        }
    }
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
    rp_alloc_init(A.jvmti, &A.alloc, &A.got, &cb);
    if ((*A.jvmti)->SetEventCallbacks(A.jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "JVMTI SetEventCallbacks failed");
        return -1;
    }
    static const jvmtiEvent events[] = {
        JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START,
        JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE,
        JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        jvmtiError e = (*A.jvmti)->SetEventNotificationMode(A.jvmti, JVMTI_ENABLE,
                                                            events[i], NULL);
        if (e != JVMTI_ERROR_NONE && events[i] != JVMTI_EVENT_COMPILED_METHOD_LOAD &&
            events[i] != JVMTI_EVENT_COMPILED_METHOD_UNLOAD) {
            snprintf(err, errlen, "JVMTI cannot enable event %d (error %d)",
                     (int)events[i], (int)e);
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
    char interval[32], engine[16];
    snprintf(interval, sizeof interval, "%llu", (unsigned long long)A.opt.interval_ns);
    snprintf(engine, sizeof engine, "%s", A.async ? "async" : "jvmti");
    struct rp_kv meta[] = {
        {RP_META_JVM_NAME, vm_name},
        {RP_META_JVM_VERSION, vm_version},
        {RP_META_OPTIONS, A.opt.raw},
        {RP_META_PRODUCER, "ringprof " RINGPROF_VERSION},
        {"agent.engine", engine},
        {"agent.interval_ns", interval},
        {"agent.native", A.async && A.opt.native ? "on" : "off"},
    };
    struct rp_recording_limits lim = {A.opt.maxsize, A.opt.maxage_ns, A.opt.chunksize,
                                      A.opt.chunktime_ns};
    char why[1024];
    A.rec = rp_recording_open(dir, &lim, meta, sizeof meta / sizeof meta[0], why,
                              sizeof why);
    free(vm_name);
    free(vm_version);
    if (!A.rec) {
        snprintf(err, errlen, "dir=%.400s: %.500s", dir, why);
        return -1;
    }
    return 0;
}

/* Everything Agent_OnLoad and Agent_OnAttach share. @return 0, or -1 with err. */
static int load(JavaVM *vm, const char *options, char *err, size_t errlen)
{
    if (rp_options_parse(options, &A.opt, err, errlen) != 0)
        return -1;
    if (A.opt.help) {
        rp_options_print_help(help_line, NULL);
        snprintf(err, errlen, "help printed; not profiling");
        return -1;
    }
    A.vm = vm;
    if ((*vm)->GetEnv(vm, (void **)&A.jvmti, JVMTI_VERSION_11) != JNI_OK &&
        (*vm)->GetEnv(vm, (void **)&A.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        snprintf(err, errlen, "this JVM offers no JVMTI environment");
        return -1;
    }
    int agct = rp_async_available();
    if (A.opt.engine == RP_ENGINE_ASYNC && !agct) {
        snprintf(err, errlen, "engine=async: this JVM does not export "
                 "AsyncGetCallTrace; use engine=jvmti");
        return -1;
    }
    A.async = A.opt.engine == RP_ENGINE_ASYNC || (A.opt.engine == RP_ENGINE_AUTO && agct);
    if (!A.async && A.opt.engine == RP_ENGINE_AUTO)
        rp_log("AsyncGetCallTrace not found: using engine=jvmti (safepoint-biased)");
    if (A.async && rp_async_check_signal(A.opt.signal, err, errlen) != 0)
        return -1;
    /* Allocation records go to the allocating thread's ring: with engine=jvmti,
     * threads have rings only for them (alloc=off at start: none, so `ctl start
     * alloc` is refused). */
    int rings = A.async || A.opt.alloc_bytes;
    A.alloc = (struct rp_alloc_config){A.opt.alloc_bytes, A.opt.live,
                                       (uint32_t)A.opt.live_max, A.opt.depth,
                                       A.async ? A.opt.signal : 0, rings,
                                       A.opt.alloc_rate};
    struct rp_threads_config tc = {
        A.opt.depth, rings ? A.opt.ring_bytes : 0, A.async ? A.opt.interval_ns : 0,
        A.opt.signal};
    if (rp_threads_init(&tc, err, errlen) != 0 || add_capabilities(err, errlen) != 0 ||
        open_recording(err, errlen) != 0)
        return -1;
    return set_events(err, errlen);
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
        if (!is_agent_thread(jni, t)) {
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
    rp_unwind_refresh();
    if (A.async) {
        /* The handler must be in place before the first timer can fire (the
         * default action of SIGPROF kills the process). */
        struct rp_async_config ac = {A.opt.interval_ns, A.opt.depth, A.opt.native,
                                     A.opt.signal};
        if (rp_async_start(&ac, err, sizeof err) != 0)
            goto fail;
    }
    /* From here threads register themselves at ThreadStart; adoption below and
     * the flusher's first scan cover the ones already running. */
    atomic_store(&A.state, AGENT_RUNNING);
    if (!A.attached) {
        int daemon;
        char *name = thread_info(jni, self, &daemon);
        rp_threads_attach_current(jni, (*jni)->NewWeakGlobalRef(jni, self), name, daemon,
                                  java_tid(jni, self));
        free(name);
    }
    rp_methods_prepare_loaded(jni);
    if (A.attached)
        (*A.jvmti)->GenerateEvents(A.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
    if (!A.async) {
        struct rp_jvmti_config jc = {A.opt.interval_ns, A.opt.depth, A.opt.ring_bytes};
        if (rp_jvmti_start(A.jvmti, jni, &jc, err, sizeof err) != 0)
            goto fail;
    }
    struct rp_flusher_config fc = {A.rec, A.async, A.opt.interval_ns, A.opt.flush_ns,
                                   A.opt.depth, A.opt.ring_bytes};
    if (rp_flusher_start(A.jvmti, jni, &fc, err, sizeof err) != 0)
        goto fail;
    adopt_threads(jni, vmstructs);
    rp_alloc_start();
    char *main_class = sysprop("sun.java.command");
    struct rp_control_ops_config cc = {&A.opt, A.async, rp_recording_dir(A.rec), main_class};
    rp_control_ops_start(&cc);        /* a failure is logged; profiling goes on */
    free(main_class);
    return;
fail:
    rp_log("cannot start: %s; not profiling", err);
    if (A.attached)
        rp_discovery_attach_error(err);
    rp_threads_disarm_all();
    if (A.async)
        rp_async_stop(1000);
    else
        rp_jvmti_stop(1000);
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
            atomic_store(&A.state, AGENT_STOPPED);
        }
        return;
    }
    rp_control_ops_stop();            /* no request may race the last close */
    rp_alloc_stop(2000);
    rp_threads_disarm_all();
    if (A.async)
        rp_async_stop(2000);
    else
        rp_jvmti_stop(2000);
    if (rp_flusher_stop(20000) != 0)
        rp_log("the last chunk in %s could not be closed cleanly",
               rp_recording_dir(A.rec));
    atomic_store(&A.state, AGENT_STOPPED);
}

/* A load that failed for want of memory (errno ENOMEM when load() gave up) is
 * neither the user's mistake nor a reason to keep the application from starting:
 * the JVM runs on unprofiled, with the one line that says so. A bad option or an
 * unusable directory still refuses the load, since the same command line would
 * fail the same way every time. The callbacks are cleared (JVMTI sends no event
 * without one) and the capabilities handed back, so nothing of ours runs later. */
static void decline(void)
{
    if (A.jvmti) {
        jvmtiEventCallbacks none;
        memset(&none, 0, sizeof none);
        (*A.jvmti)->SetEventCallbacks(A.jvmti, &none, sizeof none);
        (*A.jvmti)->RelinquishCapabilities(A.jvmti, &A.got);
    }
    rp_recording_close(A.rec);
    A.rec = NULL;
    atomic_store(&A.state, AGENT_STOPPED);
}

/* An attach that fails after load(): the JVM unloads the library of a failed
 * Agent_OnAttach (JDK 21, and Debian's 17.0.x), so no callback of ours may stay
 * registered. Our signal handlers (the timer's, the crash guard), once
 * installed, cannot be taken back safely: then the library must stay, and the
 * attach is reported as loaded (the agent is inert; the log says why). */
static jint attach_failed(void)
{
    jvmtiEventCallbacks none;
    memset(&none, 0, sizeof none);
    (*A.jvmti)->SetEventCallbacks(A.jvmti, &none, sizeof none);
    if (A.async && (rp_async_handler_intact() || rp_async_guard_intact()))
        return JNI_OK;
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
    errno = 0;
    if (load(vm, options, err, sizeof err) != 0) {
        if (errno == ENOMEM) {
            rp_log("%s; not profiling (out of memory at load: the JVM runs on)", err);
            decline();
            return JNI_OK;
        }
        rp_log("%s", err);
        return JNI_ERR;
    }
    atomic_store(&A.state, AGENT_LOADED);
    return JNI_OK;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    char err[1024] = "";
    if (atomic_load(&A.state) != AGENT_IDLE) {
        rp_log("already running in this JVM; attach refused");
        rp_discovery_attach_error("ringprof is already running in this JVM; attach refused");
        return JNI_ERR;
    }
    A.attached = 1;
    if (load(vm, options, err, sizeof err) != 0) {
        rp_log("%s", err);
        rp_discovery_attach_error(err);
        return JNI_ERR;
    }
    if (!vm_live()) {
        /* Nothing of ours runs yet (no handler, no thread): close the recording
         * that load opened, and refuse. */
        const char *why = "the JVM is shutting down; attach refused";
        rp_log("%s", why);
        rp_discovery_attach_error(why);
        atomic_store(&A.state, AGENT_LOADED);
        stop();
        return attach_failed();
    }
    JNIEnv *jni;
    jthread self;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK ||
        (*A.jvmti)->GetCurrentThread(A.jvmti, &self) != JVMTI_ERROR_NONE) {
        rp_log("attach: no JNI environment on the attaching thread");
        rp_discovery_attach_error("attach: no JNI environment on the attaching thread");
        return attach_failed();
    }
    atomic_store(&A.state, AGENT_LOADED);
    start(jni, self);
    (*jni)->DeleteLocalRef(jni, self);
    /* VMDeath may have been sent while we started, before our events were on:
     * then none will come (the phase turns dead after the callbacks, so a VMDeath
     * of ours still waiting for the lifecycle lock leaves it live). And a VMDeath
     * that came between load and start stopped us before we ran (state LOADED). */
    pthread_mutex_lock(&A.lifecycle_lock);
    int running = atomic_load(&A.state) == AGENT_RUNNING;
    if (running && !vm_live()) {
        rp_log("the JVM is shutting down; the attach is undone");
        stop_locked();
        running = 0;
    } else if (!running && atomic_load(&A.state) == AGENT_STOPPED && !vm_live()) {
        rp_log("the JVM is shutting down; attach refused");
    }
    pthread_mutex_unlock(&A.lifecycle_lock);
    return running ? JNI_OK : attach_failed();
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
        if (A.async)
            rp_async_stop(1000);
        atomic_store(&A.state, AGENT_STOPPED);
    } else if (s == AGENT_LOADED) {
        stop();
    }
}
