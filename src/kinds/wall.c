/*
 * src/kinds/wall.c — the wall-clock sampler thread (see wall.h).
 *
 * The sampler's private state is one `struct wall_thread` per registry slot
 * index, in an array it alone grows and reads: no lock. A tick walks the slot
 * indexes from where the previous tick stopped, skipping slots without a live
 * Java thread (and freeing what it kept for them), until it has visited
 * `wallthreads` threads or looked at every slot once.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>

#include "ringprof/format.h"
#include "ringprof/events.h"
#include "ringprof/clock.h"
#include "walk/callstack.h"
#include "core/engine.h"
#include "flush/kind.h"
#include "core/counters.h"
#include "kinds/wall.h"
#include "code/classes.h"
#include "threads/jthread.h"
#include "kinds/lock.h"
#include "threads/park.h"
#include "core/sample.h"
#include "flush/sink.h"
#include "threads/threads.h"

/* The ring holds at least this many ticks of samples of up to RING_FRAMES
 * frames each, whatever ring= says: at wall=10ms the flusher drains every ten
 * ticks, and the sampler wakes it when the ring is half full. */
#define RING_TICKS 4u
#define RING_FRAMES 128u

/* What the sampler keeps of one slot's occupant. */
struct wall_thread {
    uint32_t gen1;             /* the slot's generation + 1; 0: nothing kept      */
    uint32_t epoch;            /* g_epoch when kept: a resume starts afresh       */
    uint64_t last_ns;          /* CLOCK_MONOTONIC of its previous sample          */
    uint64_t cpu_ns;           /* its CPU clock then                              */
    uint64_t run_ns, wait_ns;  /* schedstat then (0: not read)                    */
    uint32_t state;            /* enum rp_thread_state of the previous sample     */
    uint32_t jvmti_state;      /* its GetThreadState bits                         */
    int32_t status;            /* that walk's rp_walk_status                      */
    uint16_t flags;            /* its rp_sample_flags                             */
    uint32_t blocker_class;    /* parked: its blocker's class id (classes.h), 0   */
    uint32_t owner_slot1, owner_gen;   /* and that blocker's owner: slot + 1, gen */
    uint32_t njava, cap;
    struct rp_java_frame *frames;
};

static struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    struct rp_wall_config cfg;
    pthread_mutex_t lock;            /* launch and stop; the sleep's condition    */
    pthread_cond_t wake;
    int launched, stopping;
    struct rp_ring *_Atomic ring;
    _Atomic int tid, running, stop, on;
    _Atomic uint64_t interval_ns;
    _Atomic uint32_t threads;
    _Atomic uint32_t epoch;          /* bumped by each resume                     */
    _Atomic uint64_t resume_ns;      /* CLOCK_MONOTONIC of the last (re)start     */
    /* Sampler-private. */
    struct wall_thread *wt;
    uint32_t nwt, cursor;
    struct rp_java_frame *jframes;  /* depth, for rp_callstack_of                  */
    uint64_t round_start;
    /* Statistics, written by the sampler. */
    _Atomic uint64_t ticks, visits, walks, repeats, proc_failed, tracked, last_round_ns;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void add(_Atomic uint64_t *c, uint64_t v)
{
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* ------------------------------------------------------------ the states -- */

/* Read a small /proc file of the thread into buf. @return bytes, or -1. */
static ssize_t read_task(pid_t tid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n > 0)
        buf[n] = '\0';
    return n > 0 ? n : -1;
}

/* The state letter of /proc/self/task/TID/stat (the field after the
 * parenthesised name, which may itself hold spaces and parentheses), or 0. */
static char task_state(pid_t tid)
{
    char buf[512];
    if (read_task(tid, "stat", buf, sizeof buf) < 0)
        return 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] ? p[2] : 0;
}

/* schedstat: ns on a CPU, ns waiting on a run queue (cumulative). */
static int task_schedstat(pid_t tid, uint64_t *run, uint64_t *wait)
{
    char buf[128];
    unsigned long long r, w;
    if (read_task(tid, "schedstat", buf, sizeof buf) < 0 ||
        sscanf(buf, "%llu %llu", &r, &w) != 2)
        return -1;
    *run = r;
    *wait = w;
    return 0;
}

/* A JVMTI RUNNABLE thread, as the OS sees it (events.h). `e` holds the previous
 * sample's schedstat (run_ns 0: none); updated. */
static uint32_t os_state(struct rp_slot *s, struct wall_thread *e, jint jst,
                         uint64_t weight, uint64_t cpu_delta, uint32_t *letter)
{
    *letter = 0;
    if (!s->tid) {
        /* No tid (engine=jvmti without VMStructs, a thread adopted at attach):
         * only the CPU clock can tell. */
        if (cpu_delta * 2 >= weight)
            return RP_TS_RUNNING;
        return (jst & JVMTI_THREAD_STATE_IN_NATIVE) ? RP_TS_NATIVE : RP_TS_RUNNABLE;
    }
    char c = task_state(s->tid);
    *letter = (uint8_t)c;
    switch (c) {
    case 'R': {
        uint64_t run = 0, wait = 0;
        if (task_schedstat(s->tid, &run, &wait) != 0) {
            e->run_ns = 0;
            return RP_TS_RUNNING;
        }
        /* Runnable: it waited for a CPU longer than it ran since the previous
         * sample. Without a previous reading it is on a run queue or a CPU now,
         * and the letter cannot say which: running. */
        int waited = e->run_ns && wait - e->wait_ns > run - e->run_ns;
        e->run_ns = run ? run : 1;
        e->wait_ns = wait;
        return waited ? RP_TS_RUNNABLE : RP_TS_RUNNING;
    }
    case 'S':
        return RP_TS_NATIVE;
    case 'D':
        return RP_TS_IO;
    case 0:
        add(&W.proc_failed, 1);
        return RP_TS_UNKNOWN;
    default:                  /* T, t (stopped, traced), Z, X: not waiting on us */
        return RP_TS_UNKNOWN;
    }
}

/* The state of a thread from its JVMTI bits; RUNNABLE ones go to the OS. */
static uint32_t thread_state(jint jst)
{
    if (jst & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        return RP_TS_BLOCKED;
    if (jst & JVMTI_THREAD_STATE_SLEEPING)
        return RP_TS_SLEEPING;
    if (jst & JVMTI_THREAD_STATE_PARKED)
        return RP_TS_PARKED;
    if (jst & (JVMTI_THREAD_STATE_IN_OBJECT_WAIT | JVMTI_THREAD_STATE_WAITING))
        return RP_TS_WAITING;
    if (jst & JVMTI_THREAD_STATE_RUNNABLE)
        return RP_TS_RUNNING;          /* refined by os_state */
    return RP_TS_UNKNOWN;
}

/* ------------------------------------------------------------ the visits -- */

/* Walk the thread's stack into e's frames. */
static void walk(JNIEnv *jni, jthread t, struct wall_thread *e)
{
    (void)jni;
    uint32_t n = 0;
    uint16_t flags = 0;
    e->status = rp_callstack_of(t, W.jframes, W.cfg.depth, &n, &flags);
    if (n > e->cap) {
        struct rp_java_frame *f = realloc(e->frames, (size_t)n * sizeof *f);
        if (!f) {
            /* Keep the sample, without its stack: marked as a failed walk. */
            e->status = RP_WALK_JVMTI_ERROR;
            n = 0;
            flags = 0;
        } else {
            e->frames = f;
            e->cap = n;
        }
    }
    if (n)                          /* (e->frames may be NULL: no frames yet) */
        memcpy(e->frames, W.jframes, (size_t)n * sizeof *e->frames);
    e->njava = n;
    e->flags = flags;
    add(&W.walks, 1);
}

/* What a parked thread waits for: the class of its parkBlocker and, for an
 * ownable synchronizer, the owner's slot (park.h), into e; zeros if none. */
static void read_blocker(JNIEnv *jni, jthread t, struct wall_thread *e)
{
    e->blocker_class = e->owner_slot1 = e->owner_gen = 0;
    jobject b = rp_park_blocker(jni, t);
    if (!b)
        return;
    jclass k = (*jni)->GetObjectClass(jni, b);
    if (k) {
        e->blocker_class = rp_class_id(W.jvmti, k);
        (*jni)->DeleteLocalRef(jni, k);
    }
    jobject owner = rp_park_owner(jni, b);
    struct rp_slot *o = owner ? rp_lock_thread_slot(jni, owner) : NULL;
    if (o) {
        e->owner_slot1 = o->index + 1;
        e->owner_gen = atomic_load(&o->gen);
    }
    if (owner)
        (*jni)->DeleteLocalRef(jni, owner);
    (*jni)->DeleteLocalRef(jni, b);
}

/* The thread's CPU clock through its clock id (no JVMTI call), or 0. */
static uint64_t cpu_clock(struct rp_slot *s)
{
    struct timespec ts;
    if (s->tid && clock_gettime(s->cpu_clock, &ts) == 0)
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return 0;
}

static uint64_t cpu_now(jthread t, struct rp_slot *s)
{
    uint64_t c = cpu_clock(s);
    if (c)
        return c;
    jlong cpu = 0;
    if ((*W.jvmti)->GetThreadCpuTime(W.jvmti, t, &cpu) != JVMTI_ERROR_NONE || cpu < 0)
        return 0;
    return (uint64_t)cpu;
}

/* Push one sample of slot `s` from what `e` holds now. */
static void push(struct rp_slot *s, uint32_t gen, struct wall_thread *e, uint64_t now,
                 uint64_t weight, uint32_t letter, int repeat, uint64_t cpu_delta)
{
    struct rp_sample_hdr h;
    memset(&h, 0, sizeof h);
    h.type = RP_SAMPLE_WALL;
    h.flags = e->flags;
    h.status = e->status;
    h.time = now;
    h.weight = weight;
    h.slot = s->index;
    h.gen = gen;
    h.njava = e->njava;
    struct rp_wall_tail tail = {e->state, e->jvmti_state, letter, (uint32_t)repeat,
                                cpu_delta, e->blocker_class, e->owner_slot1, e->owner_gen,
                                0};
    struct iovec iov[3] = {{&h, sizeof h},
                           {e->frames, (size_t)e->njava * sizeof *e->frames},
                           {&tail, sizeof tail}};
    /* A full ring drops the sample (the ring counts it: lost.wall_ring_full);
     * the thread's next sample still starts from this one. */
    rp_ring_pushv(atomic_load(&W.ring), iov, 3);
    add(&W.visits, 1);
}

/* Waiting states that only the thread itself can leave, by running: one whose
 * CPU clock has not moved since is still in it, with the same stack (HotSpot's
 * thread state, which GetThreadState reports, is written by the thread). */
static int parked_state(uint32_t state)
{
    return state == RP_TS_BLOCKED || state == RP_TS_WAITING || state == RP_TS_PARKED ||
           state == RP_TS_SLEEPING;
}

/* Visit one live Java thread: one sample. @return 1 if it was visited. */
static int visit(JNIEnv *jni, struct rp_slot *s, struct wall_thread *e)
{
    uint32_t gen = atomic_load(&s->gen);
    uint32_t epoch = atomic_load_explicit(&W.epoch, memory_order_acquire);
    if (e->gen1 == gen + 1 && e->epoch == epoch && parked_state(e->state)) {
        /* The cheapest visit: a clock read. A thread blocked, waiting, parked or
         * sleeping whose clock has not moved is still there: the previous
         * sample repeats, state and stack, with no JVMTI call at all. */
        uint64_t cpu = cpu_clock(s);
        if (cpu && cpu == e->cpu_ns) {
            uint64_t now = rp_mono_ns(), weight = now > e->last_ns ? now - e->last_ns : 0;
            e->last_ns = now;
            add(&W.repeats, 1);
            push(s, gen, e, now, weight, 0, 1, 0);
            return 1;
        }
    }
    jthread t = rp_threads_local_ref(jni, s);
    if (!t)
        return 0;
    jint jst = 0;
    if ((*W.jvmti)->GetThreadState(W.jvmti, t, &jst) != JVMTI_ERROR_NONE)
        jst = 0;
    if (!(jst & JVMTI_THREAD_STATE_ALIVE) && jst != 0) {
        (*jni)->DeleteLocalRef(jni, t);      /* not started yet, or just ended */
        return 0;
    }
    uint64_t now = rp_mono_ns(), cpu = cpu_now(t, s);
    int first = e->gen1 != gen + 1 || e->epoch != epoch;
    uint64_t since, cpu_delta = 0;
    if (first) {
        /* Its first sample covers its life so far, or the time since sampling
         * (re)started if that is later. */
        since = atomic_load(&W.resume_ns);
        if ((s->flags & RP_SLOT_FROM_START) && s->start_ns > since) {
            since = s->start_ns;
            cpu_delta = cpu > s->start_cpu_ns ? cpu - s->start_cpu_ns : 0;
        }
        e->gen1 = gen + 1;
        e->epoch = epoch;
        e->run_ns = e->wait_ns = 0;
        e->njava = 0;
        e->state = RP_TS_UNKNOWN;
        e->status = RP_WALK_NO_JAVA_FRAMES;
        e->flags = 0;
        e->blocker_class = e->owner_slot1 = e->owner_gen = 0;
    } else {
        since = e->last_ns;
        cpu_delta = cpu > e->cpu_ns ? cpu - e->cpu_ns : 0;
    }
    uint64_t weight = now > since ? now - since : 0;
    uint32_t state = thread_state(jst), letter = 0;
    if (state == RP_TS_RUNNING)
        state = os_state(s, e, jst, weight, cpu_delta, &letter);
    /* The repeat rule (wall.h): not running, no CPU used since. */
    int repeat = !first && cpu == e->cpu_ns && e->state != RP_TS_RUNNING &&
                 e->state != RP_TS_RUNNABLE && e->state != RP_TS_UNKNOWN;
    /* A repeat keeps the previous sample's stack and blocker with its state. */
    if (repeat) {
        add(&W.repeats, 1);
    } else {
        walk(jni, t, e);
        if (state == RP_TS_PARKED)
            read_blocker(jni, t, e);
        else
            e->blocker_class = e->owner_slot1 = e->owner_gen = 0;
    }
    (*jni)->DeleteLocalRef(jni, t);
    e->last_ns = now;
    e->cpu_ns = cpu;
    e->state = state;
    e->jvmti_state = (uint32_t)jst;
    push(s, gen, e, now, weight, letter, repeat, cpu_delta);
    return 1;
}

/* Forget what was kept for a slot that has no live Java thread now. */
static void forget(struct wall_thread *e)
{
    if (!e->gen1 && !e->frames)
        return;
    free(e->frames);
    memset(e, 0, sizeof *e);
    atomic_fetch_sub_explicit(&W.tracked, 1, memory_order_relaxed);
}

/* Room for every slot index; new entries are empty. @return 0 or -1. */
static int ensure_entries(uint32_t n)
{
    if (n <= W.nwt)
        return 0;
    uint32_t cap = W.nwt ? W.nwt : 256;
    while (cap < n)
        cap *= 2;
    struct wall_thread *wt = realloc(W.wt, (size_t)cap * sizeof *wt);
    if (!wt)
        return -1;
    memset(wt + W.nwt, 0, (size_t)(cap - W.nwt) * sizeof *wt);
    W.wt = wt;
    W.nwt = cap;
    return 0;
}

/* One tick: the next `wallthreads` live Java threads, from the cursor on. */
static void tick(JNIEnv *jni)
{
    uint32_t n = rp_threads_count();
    if (!n || ensure_entries(n) != 0)
        return;
    uint32_t budget = atomic_load(&W.threads);
    struct rp_ring *ring = atomic_load(&W.ring);
    for (uint32_t looked = 0; looked < n && budget && !atomic_load(&W.stop); looked++) {
        if (W.cursor >= n) {
            uint64_t now = rp_mono_ns();
            if (W.round_start)
                atomic_store(&W.last_round_ns, now - W.round_start);
            W.round_start = now;
            W.cursor = 0;
        }
        uint32_t i = W.cursor++;
        struct rp_slot *s = rp_threads_slot(i);
        struct wall_thread *e = &W.wt[i];
        if (!s || atomic_load(&s->state) != RP_SLOT_LIVE || !(s->flags & RP_SLOT_JAVA)) {
            forget(e);
            continue;
        }
        int kept = e->gen1 != 0;
        if (visit(jni, s, e)) {
            budget--;
            if (!kept)
                add(&W.tracked, 1);
        }
    }
    add(&W.ticks, 1);
    if (rp_ring_fill(ring) > ring->capacity / 2)
        rp_engine_wake();
}

/* Sleep until `next` (CLOCK_MONOTONIC), or until stopped or re-configured. */
static void sleep_until(const struct timespec *next)
{
    pthread_mutex_lock(&W.lock);
    if (!atomic_load(&W.stop))
        pthread_cond_timedwait(&W.wake, &W.lock, next);
    pthread_mutex_unlock(&W.lock);
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti; (void)arg;
    atomic_store(&W.tid, rp_gettid());
    rp_threads_add_agent(atomic_load(&W.tid));
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&W.stop)) {
        uint64_t ns = (uint64_t)next.tv_nsec + atomic_load(&W.interval_ns);
        next.tv_sec += (time_t)(ns / 1000000000u);
        next.tv_nsec = (long)(ns % 1000000000u);
        sleep_until(&next);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec * 1000000000ll + now.tv_nsec <
            next.tv_sec * 1000000000ll + next.tv_nsec) {
            next = now;               /* woken early (a new interval, or stop): */
            continue;                 /* the next tick is one interval from now */
        }
        if (atomic_load(&W.on))
            tick(jni);
        /* A tick that took longer than the interval (a loaded machine, slow
         * handshakes), or a stall, must not make the next ticks run back to
         * back to catch up, which would take a whole CPU: the next period
         * starts now, and the weights carry the time. */
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec * 1000000000ll + now.tv_nsec >
            next.tv_sec * 1000000000ll + next.tv_nsec)
            next = now;
    }
    atomic_store(&W.running, 0);
}

/* ------------------------------------------------------------------ API -- */

void rp_wall_init(JavaVM *vm, jvmtiEnv *jvmti, const struct rp_wall_config *cfg)
{
    W.vm = vm;
    W.jvmti = jvmti;
    W.cfg = *cfg;
    atomic_store(&W.interval_ns, cfg->interval_ns ? cfg->interval_ns : RP_WALL_DEFAULT_NS);
    atomic_store(&W.threads, cfg->threads);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&W.wake, &ca);
    pthread_condattr_destroy(&ca);
}

static size_t ring_size(void)
{
    uint32_t frames = W.cfg.depth < RING_FRAMES ? W.cfg.depth : RING_FRAMES;
    uint64_t need = (uint64_t)RING_TICKS * W.cfg.threads *
                    (rp_sample_size(0, frames) + sizeof(struct rp_wall_tail) + 8);
    size_t size = W.cfg.ring_bytes;
    while (size < need && size < (64u << 20))
        size *= 2;
    return size;
}

int rp_wall_launch(JNIEnv *jni, char *err, size_t errlen)
{
    int rc = -1;
    pthread_mutex_lock(&W.lock);
    if (W.launched) {
        rc = 0;
        goto out;
    }
    if (W.stopping || !W.jvmti) {
        snprintf(err, errlen, "the agent is shutting down");
        goto out;
    }
    if (!jni && (!W.vm || (*W.vm)->GetEnv(W.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)) {
        snprintf(err, errlen, "the wall-clock sampler can only be started from a "
                 "thread attached to the JVM");
        goto out;
    }
    size_t size = ring_size();
    struct rp_ring *ring = rp_ring_create(size);
    W.jframes = calloc(W.cfg.depth, sizeof *W.jframes);
    if (!ring || !W.jframes) {
        rp_ring_destroy(ring);
        free(W.jframes);
        W.jframes = NULL;
        snprintf(err, errlen, "out of memory for the wall-clock sampler (ring of %zu "
                 "bytes)", size);
        goto out;
    }
    atomic_store(&W.ring, ring);
    atomic_store(&W.resume_ns, rp_mono_ns());
    atomic_store(&W.on, 1);
    atomic_store(&W.running, 1);
    if (rp_jthread_run(W.jvmti, jni, "ringprof-wall", sampler_main, NULL,
                            JVMTI_THREAD_MAX_PRIORITY, err, errlen) < 0) {
        /* The ring stays: the flusher may already look at it (it is empty). */
        atomic_store(&W.running, 0);
        atomic_store(&W.on, 0);
        goto out;
    }
    W.launched = 1;
    rc = 0;
out:
    pthread_mutex_unlock(&W.lock);
    return rc;
}

int rp_wall_launched(void)
{
    pthread_mutex_lock(&W.lock);
    int l = W.launched;
    pthread_mutex_unlock(&W.lock);
    return l;
}

int rp_wall_on(void)
{
    return atomic_load(&W.on);
}

struct rp_ring *rp_wall_ring(void)
{
    return atomic_load(&W.ring);
}

int rp_wall_sampler_tid(void)
{
    return atomic_load(&W.tid);
}

void rp_wall_switch(int on)
{
    if (on && !atomic_load(&W.on)) {
        /* Release order: the sampler that sees the new epoch sees its time. */
        atomic_store(&W.resume_ns, rp_mono_ns());
        atomic_fetch_add_explicit(&W.epoch, 1, memory_order_release);
    }
    atomic_store(&W.on, on);
}

void rp_wall_set_interval(uint64_t interval_ns)
{
    atomic_store(&W.interval_ns, interval_ns);
    pthread_mutex_lock(&W.lock);
    pthread_cond_signal(&W.wake);
    pthread_mutex_unlock(&W.lock);
}

void rp_wall_set_threads(uint32_t threads)
{
    atomic_store(&W.threads, threads);
}

uint64_t rp_wall_interval(void)
{
    return atomic_load(&W.interval_ns);
}

uint32_t rp_wall_threads(void)
{
    return atomic_load(&W.threads);
}

void rp_wall_stats(struct rp_wall_stats *out)
{
    out->ticks = atomic_load(&W.ticks);
    out->visits = atomic_load(&W.visits);
    out->walks = atomic_load(&W.walks);
    out->repeats = atomic_load(&W.repeats);
    out->proc_failed = atomic_load(&W.proc_failed);
    out->tracked = atomic_load(&W.tracked);
    out->last_round_ns = atomic_load(&W.last_round_ns);
}

void rp_wall_stop(unsigned wait_ms)
{
    pthread_mutex_lock(&W.lock);
    W.stopping = 1;
    atomic_store(&W.stop, 1);
    pthread_cond_signal(&W.wake);
    pthread_mutex_unlock(&W.lock);
    for (unsigned i = 0; i < wait_ms && atomic_load(&W.running); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* --------------------------------------------------- the wall kind's entry -- */

/* The wall kind (engine.h). With wall=off the start only configures; `start
 * wall` launches the sampler then, on a thread attached to the JVM (rp_engine_call:
 * RunAgentThread needs a JNIEnv), at the interval of the last `set wall=` (or
 * RP_WALL_DEFAULT_NS). */
static int kind_start(const struct rp_engine_env *env, char *err, size_t errlen)
{
    const struct rp_options *o = env->opt;
    struct rp_wall_config wc = {o->wall_ns, (uint32_t)o->wall_threads, o->depth,
                                o->ring_bytes};
    rp_wall_init(env->vm, env->jvmti, &wc);
    return o->wall_ns ? rp_wall_launch(env->jni, err, errlen) : 0;
}

/* "all" switches wall-clock sampling only if its sampler runs (wall= was given,
 * or `start wall` came): starting every kind does not start one that was never
 * asked for. */
static int kind_in_all(int on)
{
    (void)on;
    return rp_wall_launched();
}

static int call_launch(void *arg, char *err, size_t errlen)
{
    (void)arg;
    return rp_wall_launch(NULL, err, errlen);
}

static int kind_switch(int on, char *err, size_t errlen)
{
    if (on && !rp_wall_launched())
        return rp_engine_call(call_launch, NULL, err, errlen);
    rp_wall_switch(on);
    return 0;
}

/* Wall settings cannot be refused; they take effect at the sampler's next tick
 * (and the kind's period with the next chunk). */
static int set_interval(uint64_t ns, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    rp_wall_set_interval(ns);
    return 0;
}

static uint64_t kind_threads(void)
{
    return rp_wall_threads();
}

static int set_threads(uint64_t n, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    rp_wall_set_threads((uint32_t)n);
    return 0;
}

static void kind_effective(struct rp_json *j)
{
    rp_json_kv_u64(j, RP_KIND_WALL "_ns", rp_wall_on() ? rp_wall_interval() : 0);
    rp_json_kv_u64(j, RP_KIND_WALL "threads", rp_wall_threads());
}

/* Its state and what the sampler counted (visits pushed; those then written are
 * in the reply's "samples"). */
static void kind_status(struct rp_json *j)
{
    struct rp_wall_stats st;
    rp_wall_stats(&st);
    rp_json_key(j, RP_KIND_WALL);
    rp_json_object_begin(j);
    rp_json_kv_bool(j, "on", rp_wall_on());
    rp_json_kv_u64(j, "interval_ns", rp_wall_interval());
    rp_json_kv_u64(j, "threads_per_tick", rp_wall_threads());
    rp_json_kv_u64(j, "threads", st.tracked);
    rp_json_kv_u64(j, "round_ns", st.last_round_ns);
    rp_json_kv_u64(j, "ticks", st.ticks);
    rp_json_kv_u64(j, "visits", st.visits);
    rp_json_kv_u64(j, "walks", st.walks);
    rp_json_kv_u64(j, "repeats", st.repeats);
    rp_json_kv_u64(j, "proc_failed", st.proc_failed);
    rp_json_kv_u64(j, "cpu_ns", rp_engine_thread_cpu_ns(rp_wall_sampler_tid()));
    rp_json_object_end(j);
}

/* The wall sampler's counters, in the chunk's order (docs/format.md). */
static const char *const WALL_COUNTERS[] = {
    RP_KIND_WALL ".visits", RP_KIND_WALL ".walks", RP_KIND_WALL ".repeats",
    RP_KIND_WALL ".proc_failed",
};

static void wall_counters_read(uint64_t *v)
{
    struct rp_wall_stats s;
    rp_wall_stats(&s);
    const uint64_t now[] = {s.visits, s.walks, s.repeats, s.proc_failed};
    _Static_assert(sizeof now / sizeof now[0] ==
                   sizeof WALL_COUNTERS / sizeof WALL_COUNTERS[0], "WALL_COUNTERS");
    memcpy(v, now, sizeof now);
}

/* The ring's losses: lost.wall_<reason>, one per rp_ring_drop (ring.h). */
static const char *const WALL_RING_COUNTERS[] = {
    RP_COUNTER_LOST_PREFIX RP_KIND_WALL "_ring_full",
    RP_COUNTER_LOST_PREFIX RP_KIND_WALL "_nested",
    RP_COUNTER_LOST_PREFIX RP_KIND_WALL "_too_big",
};
_Static_assert(sizeof WALL_RING_COUNTERS / sizeof WALL_RING_COUNTERS[0] ==
               RP_RING_DROP_REASONS, "one name per rp_ring_drop");

static void wall_ring_counters_read(uint64_t *v)
{
    struct rp_ring *ring = rp_wall_ring();
    struct rp_ring_stats st = {0};
    if (ring)
        rp_ring_stats(ring, &st);
    for (int r = 0; r < RP_RING_DROP_REASONS; r++)
        v[r] = st.dropped[r];
}

/* While the sampler has a ring: the threads it tracks, its last round's time. */
static size_t wall_gauges_read(struct rp_gauge_value *out, size_t max)
{
    if (!rp_wall_ring() || max < 2)
        return 0;
    struct rp_wall_stats now;
    rp_wall_stats(&now);
    out[0] = (struct rp_gauge_value){RP_KIND_WALL ".threads", now.tracked};
    out[1] = (struct rp_gauge_value){RP_KIND_WALL ".round_ns", now.last_round_ns};
    return 2;
}

static void kind_counters(enum rp_counter_group g)
{
    rp_counters_register(g, WALL_COUNTERS, sizeof WALL_COUNTERS / sizeof WALL_COUNTERS[0],
                         wall_counters_read);
    rp_counters_register(g, WALL_RING_COUNTERS, RP_RING_DROP_REASONS,
                         wall_ring_counters_read);
    rp_gauges_register(g, wall_gauges_read);
}

static const char *const WALL_EXTRA[] = RP_WALL_EXTRA_NAMES;

enum rp_sink_result rp_wall_flush(const struct rp_sink *sk, struct rp_slot *s,
                                  const struct rp_sample_hdr *h, size_t flen)
{
    static struct rp_sink_kind kind;
    struct rp_wall_tail tail;
    memcpy(&tail, (const uint8_t *)h + flen, sizeof tail);
    uint64_t extra[RP_WALL_NEXTRA];
    extra[RP_WALL_X_STATE] = tail.state;
    extra[RP_WALL_X_JVMTI_STATE] = tail.jvmti_state;
    extra[RP_WALL_X_OS_STATE] = tail.os_state;
    extra[RP_WALL_X_REPEAT] = tail.repeat;
    extra[RP_WALL_X_CPU_NS] = tail.cpu_ns;
    extra[RP_WALL_X_BLOCKER_CLASS] = tail.blocker_class ? rp_stacks_class(tail.blocker_class)
                                                        : 0;
    extra[RP_WALL_X_BLOCKER_OWNER] = rp_sink_slot_thread(sk, tail.owner_slot, tail.owner_gen);
    uint32_t thread, stack;
    if (!rp_sink_ids(sk, s, h, flen, &thread, &stack) ||
        !rp_sink_kind(sk, &kind, RP_KIND_WALL, RP_UNIT_NS, rp_wall_interval(), WALL_EXTRA,
                      RP_WALL_NEXTRA) ||
        rp_chunk_sample(sk->w, kind.id, thread, h->time, stack, h->weight, extra) != 0)
        return RP_SINK_LOST;
    /* Names are polled for threads that took samples; a repeat means the thread
     * did not run, so it cannot have renamed itself, and 2000 idle threads would
     * cost 2000 GetThreadInfo calls a second. */
    return tail.repeat ? RP_SINK_IDLE : RP_SINK_WRITTEN;
}

const struct rp_kind rp_kind_wall = {
    .engine = {
        .name = RP_KIND_WALL, .kind = RP_CTL_KIND_WALL, .phase = RP_ENGINE_PHASE_THREAD,
        .start = kind_start, .stop = rp_wall_stop, .on = rp_wall_on, .in_all = kind_in_all,
        .switch_kind = kind_switch,
        .settings = {{RP_CTL_KEY_WALL, 0, rp_wall_interval, set_interval},
                     {RP_CTL_KEY_WALLTHREADS, 0, kind_threads, set_threads}},
        .period = rp_wall_interval, .effective = kind_effective, .status = kind_status,
        .thread_tid = rp_wall_sampler_tid,
    },
    /* The sampler's own ring, drained again before ended threads' slots are
     * released; its losses are its own counters (lost.wall_<reason>), and so
     * are those of its records that reach no writer. */
    .records = {{RP_SAMPLE_WALL, rp_wall_flush, NULL, RP_KIND_WALL,
                 sizeof(struct rp_wall_tail)}},
    .flags = RP_KIND_LOST_APART | RP_KIND_RING_AGAIN,
    .place = 2,
    .ring = rp_wall_ring,
    .counters = kind_counters,
};
