/*
 * src/threads/threads.c — the slot registry and the tid table (threads.h), and the
 * registry lock the other parts (threads_locked.h) work under.
 *
 * Slots are allocated in blocks of 64 that are never freed; a fixed array of block
 * pointers (published with release stores) gives the handler a lock-free index →
 * slot lookup. Everything else happens under one mutex with short critical
 * sections. A slot moves FREE → LIVE (timer armed, threadtimer.h) → ENDED (timer
 * deleted) → FREE (released by the flusher after its final drain).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "ringprof/clock.h"
#include "core/counters.h"
#include "core/log.h"
#include "threads/threadadopt.h"
#include "threads/threads.h"
#include "threads/threads_locked.h"
#include "threads/threadtimer.h"

#define BLOCK_SLOTS 64u
#define MAX_BLOCKS 4096u                      /* 262144 slots at most            */
_Static_assert(MAX_BLOCKS * BLOCK_SLOTS == RP_THREADS_MAX, "RP_THREADS_MAX");
#define TID_TABLE_SIZE RP_THREADS_TID_LIMIT
#define SIGVAL_TAG 0x52ull                    /* 'R' in the top byte of a tag   */
#define GEN_MASK 0xffffffu
#define MAX_AGENTS 8

static struct rp_slot *_Atomic g_blocks[MAX_BLOCKS];
static _Atomic uint32_t g_count;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *g_free;
static size_t g_nfree, g_capfree;
static _Atomic uint32_t *g_tid_table;
static struct rp_threads_config g_cfg;
static _Atomic pid_t g_agents[MAX_AGENTS];
static struct rp_threads_stats g_stats;
static int g_logged_full, g_logged_memory;
/* A line to print once the registry lock is released (stderr can block: never
 * write it under the lock). */
static char g_msg[256];
static _Atomic int g_msg_pending;
/* Held from reading a slot's weak ref to the end of NewLocalRef on it, and around
 * its deletion: the JNI calls run without the registry lock, yet a ref is never
 * deleted while it is being used. */
static pthread_mutex_t g_ref_lock = PTHREAD_MUTEX_INITIALIZER;

pid_t rp_gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

int rp_threads_init(const struct rp_threads_config *cfg, char *err, size_t errlen)
{
    g_cfg = *cfg;
    rp_threads_lock();
    rp_threadtimer_config_locked(cfg->interval_ns);
    rp_threads_unlock();
    if (g_tid_table)
        return 0;
    void *p = mmap(NULL, TID_TABLE_SIZE * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the thread table (%zu MiB of address space): %s",
                 (size_t)(TID_TABLE_SIZE * sizeof(uint32_t)) >> 20, strerror(errno));
        return -1;
    }
    g_tid_table = p;
    return 0;
}

void rp_threads_add_agent(pid_t tid)
{
    for (int i = 0; i < MAX_AGENTS; i++) {
        pid_t z = 0;
        if (atomic_compare_exchange_strong(&g_agents[i], &z, tid))
            return;
    }
}

int rp_threads_is_agent(pid_t tid)
{
    for (int i = 0; i < MAX_AGENTS; i++)
        if (atomic_load_explicit(&g_agents[i], memory_order_relaxed) == tid)
            return 1;
    return 0;
}

/* ------------------------------------------------------- lock-free lookups -- */

uint32_t rp_threads_count(void)
{
    return atomic_load_explicit(&g_count, memory_order_acquire);
}

struct rp_slot *rp_threads_slot(uint32_t index)
{
    if (index >= rp_threads_count())
        return NULL;
    struct rp_slot *b = atomic_load_explicit(&g_blocks[index / BLOCK_SLOTS],
                                             memory_order_acquire);
    return b ? &b[index % BLOCK_SLOTS] : NULL;
}

/* 'R', the slot's generation and its index. */
uint64_t rp_threads_tag(const struct rp_slot *s)
{
    uint64_t gen = atomic_load_explicit(&s->gen, memory_order_relaxed) & GEN_MASK;
    return SIGVAL_TAG << 56 | gen << 32 | s->index;
}

struct rp_slot *rp_threads_from_tag(uint64_t x)
{
    if (x >> 56 != SIGVAL_TAG)
        return NULL;
    struct rp_slot *s = rp_threads_slot((uint32_t)x);
    if (!s)
        return NULL;
    /* gen, state, gen again: a slot released and reused between two separate
     * checks would pass both with the new occupant's state (the caller also
     * checks the tid against gettid). */
    uint32_t want = (uint32_t)((x >> 32) & GEN_MASK);
    if ((atomic_load_explicit(&s->gen, memory_order_acquire) & GEN_MASK) != want)
        return NULL;
    if (atomic_load_explicit(&s->state, memory_order_acquire) != RP_SLOT_LIVE)
        return NULL;
    if ((atomic_load_explicit(&s->gen, memory_order_acquire) & GEN_MASK) != want)
        return NULL;
    return s;
}

struct rp_slot *rp_threads_by_tid(pid_t tid)
{
    if (!g_tid_table || tid <= 0 || (uint32_t)tid >= TID_TABLE_SIZE)
        return NULL;
    uint32_t v = atomic_load_explicit(&g_tid_table[tid], memory_order_acquire);
    return v ? rp_threads_slot(v - 1) : NULL;
}

static void tid_set(pid_t tid, uint32_t v)
{
    if (tid > 0 && (uint32_t)tid < TID_TABLE_SIZE)
        atomic_store_explicit(&g_tid_table[tid], v, memory_order_release);
}

/* ------------------------------------------------------- slots, under lock -- */

void rp_threads_lock(void)
{
    pthread_mutex_lock(&g_lock);
}

void rp_threads_unlock(void)
{
    pthread_mutex_unlock(&g_lock);
}

struct rp_threads_stats *rp_threads_stats_locked(void)
{
    return &g_stats;
}

void rp_threads_log_once_locked(int *once, const char *fmt, ...)
{
    if (*once)
        return;
    *once = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_msg, sizeof g_msg, fmt, ap);
    va_end(ap);
    atomic_store(&g_msg_pending, 1);
}

void rp_threads_log_pending(void)
{
    if (!atomic_load_explicit(&g_msg_pending, memory_order_relaxed))
        return;
    char msg[sizeof g_msg];
    pthread_mutex_lock(&g_lock);
    int pending = atomic_exchange(&g_msg_pending, 0);
    memcpy(msg, g_msg, sizeof msg);
    pthread_mutex_unlock(&g_lock);
    if (pending)
        rp_log("%s", msg);
}

static int prepare_buffers(struct rp_slot *s)
{
    if (g_cfg.depth && !s->pcs) {
        s->pcs = calloc(g_cfg.depth, sizeof *s->pcs);
        s->java = calloc(g_cfg.depth, sizeof *s->java);
        if (!s->pcs || !s->java) {
            free(s->pcs);
            free(s->java);
            s->pcs = NULL;
            s->java = NULL;
            return -1;
        }
    }
    if (g_cfg.ring_bytes && !s->ring) {
        s->ring = rp_ring_create(g_cfg.ring_bytes);
        if (!s->ring)
            return -1;
    }
    return 0;
}

static void push_free(uint32_t index)
{
    if (g_nfree == g_capfree) {
        size_t ncap = g_capfree ? g_capfree * 2 : 256;
        uint32_t *n = realloc(g_free, ncap * sizeof *n);
        if (!n)
            return;          /* the slot is leaked, never reused: memory, not safety */
        g_free = n;
        g_capfree = ncap;
    }
    g_free[g_nfree++] = index;
}

/* A FREE slot with its buffers ready, or NULL. Lock held. */
static struct rp_slot *new_slot_locked(void)
{
    struct rp_slot *s;
    if (g_nfree) {
        s = rp_threads_slot(g_free[--g_nfree]);
        atomic_fetch_add_explicit(&s->gen, 1, memory_order_release);
        g_stats.reused++;
    } else {
        uint32_t idx = atomic_load_explicit(&g_count, memory_order_relaxed);
        if (idx / BLOCK_SLOTS >= MAX_BLOCKS) {
            rp_threads_log_once_locked(&g_logged_full, "more than %u threads at once: "
                                       "the rest are not sampled", MAX_BLOCKS * BLOCK_SLOTS);
            return NULL;
        }
        struct rp_slot *b = atomic_load_explicit(&g_blocks[idx / BLOCK_SLOTS],
                                                 memory_order_relaxed);
        if (!b) {
            b = calloc(BLOCK_SLOTS, sizeof *b);
            if (!b)
                goto no_memory;
            atomic_store_explicit(&g_blocks[idx / BLOCK_SLOTS], b, memory_order_release);
        }
        s = &b[idx % BLOCK_SLOTS];
        s->index = idx;
        atomic_store_explicit(&g_count, idx + 1, memory_order_release);
        g_stats.created++;
    }
    if (prepare_buffers(s) < 0) {
        push_free(s->index);
        goto no_memory;
    }
    s->tid = 0;
    s->cpu_clock = 0;
    atomic_store_explicit(&s->env, NULL, memory_order_relaxed);
    s->flags = 0;
    s->name[0] = '\0';
    s->name_version++;
    s->ref = NULL;
    s->java_tid = 0;
    s->end_cpu_ns = 0;
    s->last_cpu_ns = 0;
    s->sampled = 0;
    return s;
no_memory:
    /* The thread goes unsampled: counted (threads.no_memory in the chunks) and
     * said once, since a failed allocation is otherwise invisible in a profile.
     * The count is of failed attempts: rp_threads_scan retries an unsampled
     * thread at every scan, and each failure counts again. */
    g_stats.no_memory++;
    rp_threads_log_once_locked(&g_logged_memory, "out of memory for a thread's sampling "
                               "buffers: threads without them are not sampled (counted "
                               "as threads.no_memory)");
    return NULL;
}

void rp_threads_set_name_locked(struct rp_slot *s, const char *name)
{
    if (!name || strncmp(s->name, name, sizeof s->name - 1) == 0)
        return;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->name_version++;
}

clockid_t rp_threads_clock(pid_t tid)
{
    /* Linux: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), see threads.h. */
    return (clockid_t)(((unsigned)~tid << 3) | 4u | 2u);
}

struct rp_slot *rp_threads_add_locked(pid_t tid, clockid_t clock, uint32_t flags,
                                      const char *name, JNIEnv *env)
{
    struct rp_slot *s = new_slot_locked();
    if (!s)
        return NULL;
    s->tid = tid;
    s->cpu_clock = clock;
    s->flags = flags;
    rp_threads_set_name_locked(s, name);
    atomic_store_explicit(&s->env, env, memory_order_release);
    atomic_store_explicit(&s->state, RP_SLOT_LIVE, memory_order_release);
    if (tid && rp_threadtimer_arm_locked(s) < 0) {
        atomic_store_explicit(&s->state, RP_SLOT_FREE, memory_order_release);
        push_free(s->index);
        return NULL;
    }
    tid_set(tid, s->index + 1);
    g_stats.live++;
    return s;
}

struct rp_slot *rp_threads_live_by_tid_locked(pid_t tid)
{
    struct rp_slot *s = rp_threads_by_tid(tid);
    if (s && atomic_load(&s->state) == RP_SLOT_LIVE)
        return s;
    return NULL;
}

void rp_threads_end_locked(struct rp_slot *s, uint64_t cpu_ns)
{
    rp_threadtimer_delete_locked(s);
    atomic_store_explicit(&s->env, NULL, memory_order_release);
    s->end_cpu_ns = cpu_ns;
    if (s->tid && rp_threads_by_tid(s->tid) == s)
        tid_set(s->tid, 0);
    atomic_store_explicit(&s->state, RP_SLOT_ENDED, memory_order_release);
    g_stats.live--;
}

/* The new thread would never be sampled through a dead timer. */
struct rp_slot *rp_threads_takeover_locked(pid_t tid)
{
    struct rp_slot *s = rp_threads_live_by_tid_locked(tid);
    if (s && (s->flags & RP_SLOT_REMOTE_TIMER) && rp_threadtimer_enabled_locked() &&
        !rp_threadtimer_closed_locked() && !rp_threadtimer_alive_locked(s)) {
        rp_threads_end_locked(s, s->last_cpu_ns);
        g_stats.retired_by_scan++;
        s = NULL;
    }
    return s;
}

/* ---------------------------------------------------------------- the API -- */

struct rp_slot *rp_threads_attach_current(JNIEnv *env, jweak thread_ref, const char *name,
                                          int daemon, int64_t java_tid)
{
    pid_t tid = rp_gettid();
    clockid_t clock;
    if (pthread_getcpuclockid(pthread_self(), &clock) != 0)
        clock = rp_threads_clock(tid);
    uint32_t flags = RP_SLOT_JAVA | RP_SLOT_FROM_START | (daemon ? RP_SLOT_DAEMON : 0);
    uint64_t start_cpu = rp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t start_ns = rp_mono_ns();
    pthread_mutex_lock(&g_lock);
    struct rp_slot *s = rp_threads_takeover_locked(tid);
    if (s) {
        /* The scan (or adoption) got here first: take the slot over. */
        s->flags = (s->flags & ~RP_SLOT_SCANNED) | flags;
        rp_threads_set_name_locked(s, name);
        if (!s->ref) {
            s->ref = thread_ref;
            thread_ref = NULL;
        }
        s->java_tid = java_tid;
    } else {
        s = rp_threads_add_locked(tid, clock, flags, name, env);
        if (s) {
            s->ref = thread_ref;
            s->java_tid = java_tid;
            thread_ref = NULL;
        }
    }
    if (s) {
        s->start_cpu_ns = start_cpu;
        s->start_ns = start_ns;
        atomic_store_explicit(&s->env, env, memory_order_release);
    }
    pthread_mutex_unlock(&g_lock);
    rp_threads_log_pending();
    if (thread_ref)
        (*env)->DeleteWeakGlobalRef(env, thread_ref);
    return s;
}

void rp_threads_detach_current(void)
{
    pid_t tid = rp_gettid();
    uint64_t cpu = rp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    pthread_mutex_lock(&g_lock);
    struct rp_slot *s = rp_threads_live_by_tid_locked(tid);
    if (s)
        rp_threads_end_locked(s, cpu);
    else
        rp_threads_adopt_note_end_locked(tid);
    pthread_mutex_unlock(&g_lock);
}

void rp_threads_meta(struct rp_slot *s, struct rp_slot_meta *out)
{
    pthread_mutex_lock(&g_lock);
    out->tid = s->tid;
    out->flags = s->flags;
    out->java_tid = s->java_tid;
    out->name_version = s->name_version;
    out->end_cpu_ns = s->end_cpu_ns;
    memcpy(out->name, s->name, sizeof out->name);
    pthread_mutex_unlock(&g_lock);
}

void rp_threads_set_name(struct rp_slot *s, const char *name)
{
    pthread_mutex_lock(&g_lock);
    rp_threads_set_name_locked(s, name);
    pthread_mutex_unlock(&g_lock);
}

jobject rp_threads_local_ref(JNIEnv *jni, struct rp_slot *s)
{
    pthread_mutex_lock(&g_ref_lock);
    pthread_mutex_lock(&g_lock);
    jweak ref = s->ref;
    pthread_mutex_unlock(&g_lock);
    jobject o = ref ? (*jni)->NewLocalRef(jni, ref) : NULL;
    pthread_mutex_unlock(&g_ref_lock);
    return o;
}

void rp_threads_release(JNIEnv *jni, struct rp_slot *s)
{
    pthread_mutex_lock(&g_lock);
    jweak ref = s->ref;
    s->ref = NULL;
    if (atomic_load(&s->state) == RP_SLOT_ENDED) {
        /* The next occupant must not inherit this one's identity as a lock
         * owner (lock.c). */
        atomic_store(&s->java_thread, 0);
        atomic_store(&s->owner_id, 0);
        atomic_store(&s->stack_lo, 0);
        atomic_store(&s->stack_hi, 0);
        atomic_store_explicit(&s->state, RP_SLOT_FREE, memory_order_release);
        push_free(s->index);
    }
    pthread_mutex_unlock(&g_lock);
    if (ref && jni) {
        pthread_mutex_lock(&g_ref_lock);       /* not while local_ref uses it */
        (*jni)->DeleteWeakGlobalRef(jni, ref);
        pthread_mutex_unlock(&g_ref_lock);
    }
}

void rp_threads_stats(struct rp_threads_stats *out)
{
    pthread_mutex_lock(&g_lock);
    *out = g_stats;
    pthread_mutex_unlock(&g_lock);
}

uint64_t rp_threads_agent_cpu_ns(void)
{
    uint64_t sum = 0;
    for (int i = 0; i < MAX_AGENTS; i++) {
        pid_t tid = atomic_load_explicit(&g_agents[i], memory_order_relaxed);
        struct timespec ts;
        if (tid > 0 && clock_gettime(rp_threads_clock(tid), &ts) == 0)
            sum += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    return sum;
}

static const char *const THREADS_COUNTERS[] = {"threads.no_memory"};

static void threads_counters_read(uint64_t *v)
{
    struct rp_threads_stats s;
    rp_threads_stats(&s);
    v[0] = s.no_memory;
}

void rp_threads_counters_register(void)
{
    rp_counters_register(RP_COUNTERS_NOMEM, THREADS_COUNTERS, 1, threads_counters_read);
}
