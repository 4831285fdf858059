/*
 * src/flusher.c — the flusher thread (see flusher.h).
 *
 * Layout of a pass (every DRAIN_NS): make sure there is a chunk writer (a new
 * generation drops the chunk-id caches), drain the jvmti sampler's ring, then each
 * slot's ring, finishing slots whose thread ended; then, when due, the flush step
 * and the rescan. Records are copied out of the ring into an aligned buffer
 * before they are read (ring payloads are only 4-byte aligned).
 *
 * Stack ids. A sample's raw frames (status, flags, pcs, jmethodIDs, bcis) are
 * hashed; the hash maps to a cached copy of those bytes and the chunk stack id
 * made from them. A hit costs one hash and one compare. The cache is dropped when
 * the chunk changes, when it reaches CACHE_MAX_BYTES, and at the first flush after
 * the compiled-code map changed (frame types may differ now).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringprof/clock.h"
#include "ringprof/events.h"
#include "alloc.h"
#include "classes.h"
#include "codecache.h"
#include "codemap.h"
#include "counters.h"
#include "engine_async.h"
#include "engine_jvmti.h"
#include "engine_wall.h"
#include "flusher.h"
#include "jthread.h"
#include "lock.h"
#include "log.h"
#include "methods.h"
#include "sink.h"
#include "sample.h"
#include "stackwalk.h"
#include "symbols.h"
#include "telemetry.h"
#include "threads.h"
#include "threadscan.h"
#include "threadtimer.h"
#include "u64map.h"
#include "ringprof/events.h"

#define DRAIN_NS   100000000ull         /* rings are drained every 100 ms         */
#define SCAN_NS    500000000ull         /* /proc/self/task, every 500 ms          */
#define CACHE_MAX_BYTES (32u << 20)

struct raw_stack {
    uint32_t stack;
    uint32_t len;
    uint8_t bytes[];
};

/* A live object's allocation stack (alloc.h), kept beyond the chunk it was
 * first written to: the record's header and frames, shared by every tracked
 * object allocated there, with the chunk's stack id once built. */
struct live_stack {
    uint32_t refs;
    uint32_t stack;                 /* in chunk `generation`; 0: not built yet      */
    uint64_t generation;
    uint64_t hash;
    int in_map;                     /* reachable from flusher.live_stacks           */
    size_t len;
    uint64_t rec[];                 /* struct rp_sample_hdr + frames                */
};

struct flusher {
    struct rp_flusher_config cfg;
    jvmtiEnv *jvmti;
    JNIEnv *jni;
    struct rp_chunk_writer *w;
    uint64_t generation;
    uint32_t kind;
    uint32_t kind_alloc, kind_live, kind_gc;   /* 0 until first used in a chunk   */
    uint32_t kind_lock;
    struct rp_u64map classes;       /* classes.h class id → chunk class id          */
    struct rp_u64map live_stacks;   /* raw-frames hash → struct live_stack*         */
    uint64_t lock_owner_gone;         /* owners dropped here: slot released first  */
    jclass runtime_class;           /* java.lang.Runtime (global ref), for the heap */
    jmethodID runtime_get, runtime_total, runtime_free;
    /* Per-generation caches of chunk ids. */
    struct rp_u64map methods;       /* jmethodID → chunk method id                  */
    struct rp_u64map natives;       /* pc → chunk frame id                          */
    struct rp_u64map markers;       /* status → chunk frame id                      */
    struct rp_u64map raw;           /* raw-frames hash → struct raw_stack*          */
    size_t raw_bytes;
    struct rp_u64map tids;          /* slot index → chunk thread id, this pass      */
    uint64_t epoch;                 /* compiled-code epoch the raw cache matches    */
    /* Buffers. */
    uint64_t *rec;                  /* aligned copy of the record being read        */
    size_t rec_cap;
    void *scratch;                  /* for rp_ring_drain                            */
    uint32_t *frames;               /* depth + 2 (two markers)                    */
    struct rp_slot *cur;            /* the slot whose ring is drained, or NULL      */
    uint64_t now;
    /* Counts for the next segment. */
    struct rp_u64map status;        /* status → samples                             */
    uint64_t lost_gone, lost_no_chunk, lost_memory, bad_records, lost_gc, lost_live;
    /* The same three losses for wall records, named lost.wall_<reason>: the wall
     * sampler's visits are accounted for apart from the CPU samples. */
    uint64_t wall_lost_gone, wall_lost_no_chunk, wall_lost_memory;
    uint64_t live_no_stack;         /* live objects written without their stack     */
    uint64_t jvmti_seen_dropped[RP_RING_DROP_REASONS];
    uint64_t stray_seen;
    struct rp_hist_snap hist_prev, hist_now, hist_delta;
    int warned_handler, warned_guard, warned_chunk, warned_foreign;
    uint64_t segfail_logged_ns;       /* last "a segment could not be written"      */
    uint64_t segfail_unlogged;        /* failures since, not yet reported           */
    uint64_t handler_replaced;      /* 1 when found, until a segment carries it     */
    /* Wall-clock samples (engine_wall.h). */
    void *wall_scratch;             /* rp_ring_drain's, for the wall ring's size    */
    uint64_t wall_seen_dropped[RP_RING_DROP_REASONS];
};

static struct flusher g_f;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake, g_done_cond;
static int g_stop, g_done, g_close_ok = -1;
static _Atomic int g_tid;

/* Control requests (rp_flusher_request), under g_lock: one at a time. */
static pthread_cond_t g_req_cond;
static int g_req_pending, g_req_done, g_req_rc, g_req_errno;
static char g_req_path[PATH_MAX];
static char *g_rotate_path;          /* flusher-private: flush_step rotates into it */
/* A call request (rp_flusher_call) instead of a flush: the function, its
 * argument and its error sentence. */
static rp_flusher_fn g_req_fn;
static void *g_req_arg;
static char g_req_err[512];

/* Totals for status (rp_flusher_totals), published under g_tot_lock. */
static pthread_mutex_t g_tot_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_flusher_totals g_tot;
static uint64_t g_samples_written;   /* flusher-private running totals          */
static uint64_t g_alloc_written, g_gc_written, g_live_written, g_lock_written;
static uint64_t g_wall_written;
static _Atomic uint64_t g_period_ns; /* the "cpu" kind's period for new chunks   */
/* rp_flusher_wake's request: a signal sent while the flusher is busy in a pass
 * (not waiting) would be lost without it; checked before each wait. */
static _Atomic int g_wake_pending;

/* Add a counter that reached a chunk to the running totals. */
static void tally(const char *name, uint64_t v)
{
    pthread_mutex_lock(&g_tot_lock);
    uint32_t i = 0;
    while (i < g_tot.ncounters && strcmp(g_tot.counters[i].name, name) != 0)
        i++;
    if (i == g_tot.ncounters && i < RP_FLUSHER_COUNTERS_MAX) {
        snprintf(g_tot.counters[i].name, sizeof g_tot.counters[i].name, "%s", name);
        g_tot.ncounters++;
    }
    if (i < g_tot.ncounters)
        g_tot.counters[i].total += v;
    pthread_mutex_unlock(&g_tot_lock);
}

static int chunk_counter(struct rp_chunk_writer *w, const char *name, uint64_t v)
{
    int rc = rp_chunk_counter(w, name, v);
    if (rc == 0)
        tally(name, v);
    return rc;
}

/* rp_counters_write's emit: into the chunk being written. */
static int emit_counter(void *ctx, const char *name, uint64_t delta)
{
    return chunk_counter(ctx, name, delta);
}

int rp_flusher_tid(void)
{
    return atomic_load(&g_tid);
}

/* ------------------------------------------------------------- chunk ids -- */

static void drop_raw_cache(struct flusher *f)
{
    for (size_t i = 0; i < f->raw.cap; i++)
        if (f->raw.used[i])
            free((void *)(uintptr_t)f->raw.vals[i]);
    rp_u64map_clear(&f->raw);
    f->raw_bytes = 0;
}

static void drop_caches(struct flusher *f)
{
    rp_u64map_clear(&f->methods);
    rp_u64map_clear(&f->natives);
    rp_u64map_clear(&f->markers);
    rp_u64map_clear(&f->tids);
    rp_u64map_clear(&f->classes);
    f->kind_alloc = f->kind_live = f->kind_gc = f->kind_lock = 0;
    drop_raw_cache(f);
}

/* A full disk fails every segment, one per flush interval: the first failure is
 * reported at once, the next ones at most once a minute and once more when
 * writing works again, each line with the count it stands for. Every one of them
 * is counted in lost.write whatever is printed. */
#define SEGFAIL_LOG_NS (60 * 1000000000ull)

static void segment_written(struct flusher *f, int ok, int e)
{
    const char *dir = rp_recording_dir(f->cfg.rec);
    if (ok) {
        if (f->segfail_unlogged)
            rp_log("writing to %s works again; %" PRIu64 " more segment%s could not be "
                   "written since the last report (counted in lost.write)", dir,
                   f->segfail_unlogged, f->segfail_unlogged == 1 ? "" : "s");
        f->segfail_unlogged = 0;
        f->segfail_logged_ns = 0;
        return;
    }
    if (f->segfail_logged_ns && f->now - f->segfail_logged_ns < SEGFAIL_LOG_NS) {
        f->segfail_unlogged++;
        return;
    }
    if (f->segfail_unlogged)
        rp_log("a segment could not be written to %s: %s, and %" PRIu64 " more since "
               "the last report (counted in lost.write; writing goes on)", dir,
               strerror(e), f->segfail_unlogged);
    else
        rp_log("a segment could not be written to %s: %s (counted in lost.write; "
               "writing goes on; further failures are reported at most once a minute)",
               dir, strerror(e));
    f->segfail_logged_ns = f->now ? f->now : 1;
    f->segfail_unlogged = 0;
}

/* The current chunk writer; a new chunk drops every cached id. */
static int ensure_writer(struct flusher *f)
{
    f->w = rp_recording_writer(f->cfg.rec);
    if (!f->w) {
        struct rp_recording_stats rs;
        rp_recording_stats(f->cfg.rec, &rs);
        rp_log_once(&f->warned_chunk, "cannot open a chunk in %s: %s; samples are "
                    "dropped and counted until it works again",
                    rp_recording_dir(f->cfg.rec), strerror(rs.last_errno));
        return 0;
    }
    f->warned_chunk = 0;
    uint64_t g = rp_recording_generation(f->cfg.rec);
    if (g != f->generation || !f->kind) {
        drop_caches(f);
        f->generation = g;
        f->kind = rp_chunk_kind(f->w, "cpu", "ns", atomic_load(&g_period_ns), NULL, 0);
    }
    return f->kind != 0;
}

static uint32_t str(struct flusher *f, const char *s)
{
    return rp_chunk_cstring(f->w, s);
}

/* The chunk's method id of m (resolved by the caller as jm). The id of the
 * [unknown java method] placeholder is not cached: that lookup failed for a
 * passing cause, and the next sample's lookup may name the method. */
static uint32_t java_method_id(struct flusher *f, jmethodID jm, const struct rp_method *m)
{
    uint64_t v;
    if (rp_u64map_get(&f->methods, (uint64_t)(uintptr_t)jm, &v))
        return (uint32_t)v;
    uint32_t k = rp_chunk_class(f->w, str(f, m->klass));
    uint32_t id = rp_chunk_method(f->w, k, str(f, m->name), str(f, m->signature),
                                  str(f, m->file), m->flags);
    if (id && !rp_method_is_unknown(m))
        rp_u64map_put(&f->methods, (uint64_t)(uintptr_t)jm, id);
    return id;
}

static uint32_t java_frame_id(struct flusher *f, const struct rp_java_frame *fr,
                              const struct rp_java_frame *caller)
{
    jmethodID jm = (jmethodID)(uintptr_t)fr->method;
    /* Resolved once per frame: its line comes from the same answer (a second
     * lookup would count a failure twice under memory pressure). */
    const struct rp_method *m = rp_methods_get(f->jni, jm);
    uint32_t method = java_method_id(f, jm, m);
    if (!method)
        return 0;
    if (fr->bci == RP_BCI_NATIVE)
        return rp_chunk_frame(f->w, method, RP_FRAME_NATIVE, -1, 0);
    enum rp_frame_type t = rp_methods_frame_type(
        jm, caller ? (jmethodID)(uintptr_t)caller->method : NULL, caller ? caller->bci : 0);
    uint32_t line = rp_method_line(m, fr->bci);
    return rp_chunk_frame(f->w, method, t, fr->bci < 0 ? -1 : fr->bci, line);
}

static uint32_t native_frame_id(struct flusher *f, uint64_t pc)
{
    uint64_t v;
    if (rp_u64map_get(&f->natives, pc, &v))
        return (uint32_t)v;
    struct rp_native_sym sym;
    const char *stub = rp_codecache_name(pc);
    if (stub) {
        /* HotSpot's generated code: a stub, named as the JVM names it. */
        sym.lib = RP_STUB_LIB;
        sym.name = stub;
        sym.is_jvm = 1;
    } else {
        rp_symbols_resolve(pc, &sym);
    }
    uint32_t k = rp_chunk_class(f->w, str(f, sym.lib));
    uint32_t m = rp_chunk_method(f->w, k, str(f, sym.name), str(f, ""), str(f, ""), 0);
    uint32_t id = m ? rp_chunk_frame(f->w, m, sym.is_jvm ? RP_FRAME_CPP : RP_FRAME_NATIVE,
                                     -1, 0) : 0;
    if (id)
        rp_u64map_put(&f->natives, pc, id);
    return id;
}

/* ----------------------------------------------------------- walk status -- */

/* What a walk status means: its counter, its marker frame, and whether the stack
 * is an error (RP_STACK_ERROR) or only lacks Java frames. */
struct status_info {
    char counter[48];
    char marker[48];
    int error;
    int marker_if_empty_only;
};

/* Who took the stack, for the counters' names: the signal handler (AGCT), the
 * jvmti sampler, the allocation callback, the monitor callback or the wall
 * sampler (GetStackTrace). */
enum walk_source { SRC_AGCT = 0, SRC_JVMTI = 1, SRC_ALLOC = 2, SRC_LOCK = 3, SRC_WALL = 4 };
static const char *const SRC_NAME[] = {"agct", "jvmti", "alloc", "lock", "wall"};

static enum walk_source walk_source(const struct rp_sample_hdr *h)
{
    return h->type == RP_SAMPLE_CPU ? SRC_AGCT
         : h->type == RP_SAMPLE_CPU_JVMTI ? SRC_JVMTI
         : h->type == RP_SAMPLE_LOCK ? SRC_LOCK
         : h->type == RP_SAMPLE_WALL ? SRC_WALL : SRC_ALLOC;
}

static void status_describe(int status, enum walk_source src, struct status_info *o)
{
    static const char *const agct[] = {
        "no_class_load", "gc_active", "unknown_not_java", "not_walkable_not_java",
        "unknown_java", "not_walkable_java", "unknown_state", "thread_exit",
        "deopt", "safepoint"};
    o->error = 1;
    o->marker_if_empty_only = 0;
    if (status <= -1 && status >= -10) {
        snprintf(o->counter, sizeof o->counter, "agct.%s", agct[-status - 1]);
        snprintf(o->marker, sizeof o->marker, "[agct:%s]", agct[-status - 1]);
        return;
    }
    switch (status) {
    case RP_WALK_CRASHED:
        snprintf(o->counter, sizeof o->counter, "walk.crashed");
        snprintf(o->marker, sizeof o->marker, "[walk:crashed]");
        return;
    case RP_WALK_NO_AGCT:
        snprintf(o->counter, sizeof o->counter, "walk.no_agct");
        snprintf(o->marker, sizeof o->marker, "[no_agct]");
        return;
    case RP_WALK_NOT_JAVA:
        snprintf(o->counter, sizeof o->counter, "walk.not_java");
        snprintf(o->marker, sizeof o->marker, "[not_java]");
        o->error = 0;
        o->marker_if_empty_only = 1;
        return;
    case RP_WALK_NO_JAVA_FRAMES:
        snprintf(o->counter, sizeof o->counter, "%s.no_java_frames", SRC_NAME[src]);
        snprintf(o->marker, sizeof o->marker, "[no_java_frames]");
        o->error = 0;
        o->marker_if_empty_only = 1;
        return;
    case RP_WALK_JVMTI_ERROR:
        snprintf(o->counter, sizeof o->counter, "%s.get_stack_trace_failed",
                 SRC_NAME[src == SRC_AGCT ? SRC_JVMTI : src]);
        snprintf(o->marker, sizeof o->marker, "[jvmti:error]");
        return;
    default:
        snprintf(o->counter, sizeof o->counter, "agct.error_%d", -status);
        snprintf(o->marker, sizeof o->marker, "[agct:error_%d]", -status);
    }
}

static uint32_t marker_frame_id(struct flusher *f, int status, enum walk_source src,
                                const struct status_info *si)
{
    uint64_t key = (uint64_t)(uint32_t)status | (uint64_t)src << 32, v;
    if (rp_u64map_get(&f->markers, key, &v))
        return (uint32_t)v;
    uint32_t k = rp_chunk_class(f->w, str(f, ""));
    uint32_t m = rp_chunk_method(f->w, k, str(f, si->marker), str(f, ""), str(f, ""), 0);
    uint32_t id = m ? rp_chunk_frame(f->w, m, RP_FRAME_MARKER, -1, 0) : 0;
    if (id)
        rp_u64map_put(&f->markers, key, id);
    return id;
}

/* The marker frame of the agent's own work on an application thread
 * ("[ringprof:alloc]", sample.h): the leaf of a CPU sample taken there. */
static uint32_t agent_frame_id(struct flusher *f, uint32_t work)
{
    uint64_t key = 1ull << 63 | work, v;
    if (rp_u64map_get(&f->markers, key, &v))
        return (uint32_t)v;
    uint32_t k = rp_chunk_class(f->w, str(f, ""));
    uint32_t m = rp_chunk_method(f->w, k, str(f, rp_agent_work_name(work)), str(f, ""),
                                 str(f, ""), 0);
    uint32_t id = m ? rp_chunk_frame(f->w, m, RP_FRAME_MARKER, -1, 0) : 0;
    if (id)
        rp_u64map_put(&f->markers, key, id);
    return id;
}

/* ------------------------------------------------------------------ stacks -- */

static uint64_t raw_hash(const uint8_t *p, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = rp_mix64(h ^ w);
    }
    uint64_t tail = 0;
    memcpy(&tail, p + i, len - i);
    return rp_mix64(h ^ tail);
}

/* Build the chunk stack of a record (cache miss). */
static uint32_t build_stack(struct flusher *f, const struct rp_sample_hdr *h)
{
    uint32_t n = 0;
    const uint64_t *pcs = rp_sample_pcs(h);
    const struct rp_java_frame *java = rp_sample_java(h);
    if (h->type == RP_SAMPLE_CPU && h->agent && !(f->frames[n++] = agent_frame_id(f, h->agent)))
        return 0;
    for (uint32_t i = 0; i < h->nnative; i++)
        if (!(f->frames[n++] = native_frame_id(f, pcs[i])))
            return 0;
    for (uint32_t i = 0; i < h->njava; i++)
        if (!(f->frames[n++] = java_frame_id(f, &java[i],
                                             i + 1 < h->njava ? &java[i + 1] : NULL)))
            return 0;
    uint32_t flags = (h->flags & RP_SAMPLE_TRUNCATED) ? RP_STACK_TRUNCATED : 0;
    if (h->status != RP_WALK_OK) {
        struct status_info si;
        enum walk_source src = walk_source(h);
        status_describe(h->status, src, &si);
        if (!si.marker_if_empty_only || n == 0) {
            if (!(f->frames[n++] = marker_frame_id(f, h->status, src, &si)))
                return 0;
        }
        if (si.error)
            flags |= RP_STACK_ERROR;
    }
    return rp_chunk_stack(f->w, f->frames, n, flags);
}

/* The hash of what makes a record's stack: type, flags, status and the frames
 * (time, weight and slot excluded). `len`: the header and frames. */
static uint64_t stack_hash(const struct rp_sample_hdr *h, size_t len)
{
    uint64_t hash = raw_hash((const uint8_t *)(h + 1), len - sizeof *h) ^
                    rp_mix64((uint64_t)h->type << 48 | (uint64_t)h->flags << 32 |
                             (uint32_t)h->status);
    return hash ^ rp_mix64((uint64_t)h->nnative << 32 | h->njava) ^
           rp_mix64(0x5a17u ^ (uint64_t)h->agent << 40);
}

static uint32_t stack_id(struct flusher *f, const struct rp_sample_hdr *h, size_t len)
{
    const uint8_t *key = (const uint8_t *)(h + 1);
    size_t klen = len - sizeof *h;
    uint64_t hash = stack_hash(h, len);
    uint64_t v;
    if (rp_u64map_get(&f->raw, hash, &v)) {
        const struct raw_stack *r = (const void *)(uintptr_t)v;
        if (r->len == klen && memcmp(r->bytes, key, klen) == 0)
            return r->stack;
        return build_stack(f, h);         /* a hash collision: do not cache */
    }
    uint32_t id = build_stack(f, h);
    if (!id)
        return 0;
    if (f->raw_bytes + klen > CACHE_MAX_BYTES)
        drop_raw_cache(f);
    struct raw_stack *r = malloc(sizeof *r + klen);
    if (r) {
        r->stack = id;
        r->len = (uint32_t)klen;
        memcpy(r->bytes, key, klen);
        if (rp_u64map_put(&f->raw, hash, (uint64_t)(uintptr_t)r) == 0)
            f->raw_bytes += sizeof *r + klen;
        else
            free(r);
    }
    return id;
}

/* ----------------------------------------------------------------- threads -- */

static uint32_t thread_id(struct flusher *f, struct rp_slot *s)
{
    uint64_t v;
    if (rp_u64map_get(&f->tids, s->index, &v))
        return (uint32_t)v;
    struct rp_slot_meta m;
    rp_threads_meta(s, &m);
    uint32_t flags = 0;
    if (m.flags & RP_SLOT_JAVA)
        flags |= RP_THREAD_JAVA;
    if (m.flags & RP_SLOT_DAEMON)
        flags |= RP_THREAD_DAEMON;
    if (atomic_load(&s->state) == RP_SLOT_ENDED)
        flags |= RP_THREAD_ENDED;
    uint64_t key = (uint64_t)atomic_load(&s->gen) << 32 | s->index;
    uint32_t id = rp_chunk_thread(f->w, key, (uint64_t)(m.tid > 0 ? m.tid : 0),
                                  (uint64_t)(m.java_tid > 0 ? m.java_tid : 0),
                                  m.name[0] ? m.name : "[unnamed]", flags, f->now);
    if (id)
        rp_u64map_put(&f->tids, s->index, id);
    return id;
}

static uint64_t slot_cpu(struct rp_slot *s)
{
    struct timespec ts;
    if (s->tid && clock_gettime(s->cpu_clock, &ts) == 0)
        s->last_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    else if (!s->tid && rp_jvmti_cpu_ns(s))
        s->last_cpu_ns = rp_jvmti_cpu_ns(s);     /* jvmti engine, tid unknown */
    return s->last_cpu_ns;
}

/* New names of Java threads that took samples (Thread.setName). */
static void poll_names(struct flusher *f)
{
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (atomic_load(&s->state) != RP_SLOT_LIVE || !(s->flags & RP_SLOT_JAVA) ||
            !s->sampled)
            continue;
        s->sampled = 0;
        jobject t = rp_threads_local_ref(f->jni, s);
        if (!t)
            continue;
        jvmtiThreadInfo info;
        memset(&info, 0, sizeof info);
        if ((*f->jvmti)->GetThreadInfo(f->jvmti, t, &info) == JVMTI_ERROR_NONE) {
            if (info.name) {
                rp_threads_set_name(s, info.name);
                (*f->jvmti)->Deallocate(f->jvmti, (unsigned char *)info.name);
            }
            if (info.thread_group)
                (*f->jni)->DeleteLocalRef(f->jni, info.thread_group);
            if (info.context_class_loader)
                (*f->jni)->DeleteLocalRef(f->jni, info.context_class_loader);
        }
        (*f->jni)->DeleteLocalRef(f->jni, t);
    }
}

static void count_losses(struct flusher *f, const struct rp_ring *ring, uint64_t *seen)
{
    struct rp_ring_stats st;
    rp_ring_stats(ring, &st);
    for (int r = 0; r < RP_RING_DROP_REASONS; r++) {
        uint64_t d = st.dropped[r] - seen[r];
        if (d) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", RP_COUNTER_LOST_PREFIX,
                     rp_ring_drop_name((enum rp_ring_drop)r));
            if (chunk_counter(f->w, name, d) == 0)
                seen[r] = st.dropped[r];
        }
    }
}

/* A slot whose thread ended: its last thread record and CPU time, then release. */
static void finish_slot(struct flusher *f, struct rp_slot *s)
{
    rp_u64map_del(&f->tids, s->index);    /* so that the ENDED record is written */
    if (f->w) {
        uint32_t id = thread_id(f, s);
        struct rp_slot_meta m;
        rp_threads_meta(s, &m);
        uint64_t cpu = m.end_cpu_ns ? m.end_cpu_ns : s->last_cpu_ns;
        if (id && cpu)
            rp_chunk_thread_cpu(f->w, id, f->now, cpu);
        if (s->ring)
            count_losses(f, s->ring, s->seen_dropped);
    }
    rp_u64map_del(&f->tids, s->index);    /* the slot's next thread is another key */
    atomic_store(&s->written, 0);
    rp_threads_release(f->jni, s);
}

/* ------------------------------------------------------------- allocations -- */

static uint32_t kind_of(struct flusher *f, uint32_t *id, const char *name,
                        const char *unit, uint64_t period, const char *const *extra,
                        uint32_t nextra)
{
    if (!*id)
        *id = rp_chunk_kind(f->w, name, unit, period, extra, nextra);
    return *id;
}

static const char *const ALLOC_EXTRA[] = {"class", "size", "objects", "length"};
static const char *const LIVE_EXTRA[] = {"class", "size", "objects", "length",
                                         "age_gcs", "age_ms"};
static const char *const GC_EXTRA[] = {"heap_used", "heap_committed", "id"};

static uint32_t alloc_kind(struct flusher *f)
{
    struct rp_alloc_state st;
    rp_alloc_state(&st);
    return kind_of(f, &f->kind_alloc, "alloc", "bytes", st.interval, ALLOC_EXTRA, 4);
}

/* The chunk's CLASS id of an alloc.h class id. */
static uint32_t alloc_class_id(struct flusher *f, uint32_t klass)
{
    uint64_t v;
    if (rp_u64map_get(&f->classes, klass, &v))
        return (uint32_t)v;
    const char *name = rp_class_name(klass);
    uint32_t id = rp_chunk_class(f->w, str(f, name ? name : "[unknown class]"));
    if (id)
        rp_u64map_put(&f->classes, klass, id);
    return id;
}

/* A counted reference to the stack of record `h` (header and frames: `len`
 * bytes), shared with the objects allocated at the same place. NULL: no memory. */
static struct live_stack *live_stack_ref(struct flusher *f, const struct rp_sample_hdr *h,
                                         size_t len)
{
    uint64_t hash = stack_hash(h, len), v;
    if (rp_u64map_get(&f->live_stacks, hash, &v)) {
        struct live_stack *ls = (void *)(uintptr_t)v;
        if (ls->len == len && memcmp((const uint8_t *)ls->rec + sizeof *h,
                                     (const uint8_t *)h + sizeof *h, len - sizeof *h) == 0 &&
            memcmp(ls->rec, h, 8) == 0) {          /* type, flags, status */
            ls->refs++;
            return ls;
        }
    }
    struct live_stack *ls = malloc(sizeof *ls + len);
    if (!ls)
        return NULL;
    *ls = (struct live_stack){.refs = 1, .hash = hash, .len = len};
    memcpy(ls->rec, h, len);
    if (!rp_u64map_get(&f->live_stacks, hash, &v))
        ls->in_map = rp_u64map_put(&f->live_stacks, hash, (uint64_t)(uintptr_t)ls) == 0;
    return ls;
}

static void live_stack_unref(struct flusher *f, struct live_stack *ls)
{
    if (!ls || --ls->refs)
        return;
    if (ls->in_map)
        rp_u64map_del(&f->live_stacks, ls->hash);
    free(ls);
}

static uint32_t live_stack_id(struct flusher *f, struct live_stack *ls)
{
    if (ls->generation != f->generation || !ls->stack) {
        ls->stack = build_stack(f, (const struct rp_sample_hdr *)(void *)ls->rec);
        ls->generation = f->generation;
    }
    return ls->stack;
}

/* An allocation record of slot `s`: `len` bytes of header and frames, then its
 * struct rp_alloc_tail. @return 0, or -1 if it could not be written. */
/* A tracked object's record (live=on): its entry becomes LIVE with this stack,
 * whether or not the sample itself can be written (no chunk, thread gone), so
 * that the object is in the snapshots for as long as it lives. `s` may be NULL
 * (the slot has a new occupant). */
static void adopt_live(struct flusher *f, struct rp_slot *s, const struct rp_sample_hdr *h,
                       size_t len)
{
    struct rp_alloc_tail t;
    memcpy(&t, (const uint8_t *)h + len, sizeof t);
    if (!t.live)
        return;
    uint32_t thread = s && f->w ? thread_id(f, s) : 0;
    struct live_stack *ls = live_stack_ref(f, h, len);  /* NULL: no memory; the
                                                           snapshots count it */
    if (rp_alloc_live_adopt(t.live, t.live_gen, ls, thread,
                            thread ? f->generation : UINT64_MAX) != 0)
        live_stack_unref(f, ls);
}

static int write_alloc(struct flusher *f, struct rp_slot *s, const struct rp_sample_hdr *h,
                       size_t len)
{
    struct rp_alloc_tail t;
    memcpy(&t, (const uint8_t *)h + len, sizeof t);
    uint32_t thread = thread_id(f, s);
    uint32_t stack = thread ? stack_id(f, h, len) : 0;
    uint64_t extra[4] = {alloc_class_id(f, t.klass), t.size, t.objects, t.length1};
    if (!stack || !extra[0] || !alloc_kind(f))
        return -1;
    return rp_chunk_sample(f->w, f->kind_alloc, thread, h->time, stack, h->weight, extra);
}

/* ------------------------------------------------------------------- locks -- */

static const char *const LOCK_EXTRA[] = RP_LOCK_EXTRA_NAMES;

/* A lock record (lock.h) of slot `s`: `len` bytes of header and frames, then its
 * struct rp_lock_tail. The owner is named only while its slot still holds the
 * thread it held when the wait began. @return 0, or -1 if not written. */
static int write_lock(struct flusher *f, struct rp_slot *s, const struct rp_sample_hdr *h,
                      size_t len)
{
    struct rp_lock_tail t;
    memcpy(&t, (const uint8_t *)h + len, sizeof t);
    uint32_t thread = thread_id(f, s);
    uint32_t stack = thread ? stack_id(f, h, len) : 0;
    struct rp_slot *o = t.owner_slot ? rp_threads_slot(t.owner_slot - 1) : NULL;
    uint32_t owner = o && atomic_load(&o->gen) == t.owner_gen &&
                     atomic_load(&o->state) != RP_SLOT_FREE ? thread_id(f, o) : 0;
    if (t.owner_slot && !owner)
        f->lock_owner_gone++;           /* known at the wait, its slot gone since */
    uint64_t extra[RP_LOCK_NEXTRA] = {alloc_class_id(f, t.klass), owner, t.threshold_ns};
    if (!stack || !extra[RP_LOCK_X_CLASS] ||
        !kind_of(f, &f->kind_lock, RP_KIND_LOCK, "ns", 0, LOCK_EXTRA, RP_LOCK_NEXTRA))
        return -1;
    return rp_chunk_sample(f->w, f->kind_lock, thread, h->time, stack, h->weight, extra);
}

static void counter(struct flusher *f, const char *name, uint64_t *value);

/* The lock counters' growth since the last segment that carried them, and the
 * callbacks' time. */
static void lock_counters(struct flusher *f)
{
    struct rp_lock_state st;
    struct rp_lock_stats now;
    rp_lock_state(&st);
    rp_counters_write(RP_COUNTERS_LOCK, emit_counter, f->w);
    rp_lock_stats(&now);
    counter(f, "lock.owner_gone", &f->lock_owner_gone);
    if (st.available && (st.on || now.callback_ns))
        rp_chunk_gauge(f->w, RP_GAUGE_AGENT_LOCK, f->now, now.callback_ns);
}

/* The heap's use and size now (Runtime.totalMemory - freeMemory), 0s if unknown. */
static void heap_now(struct flusher *f, uint64_t *used, uint64_t *committed)
{
    JNIEnv *jni = f->jni;
    *used = *committed = 0;
    if (!f->runtime_class) {
        jclass k = (*jni)->FindClass(jni, "java/lang/Runtime");
        if (k) {
            f->runtime_get = (*jni)->GetStaticMethodID(jni, k, "getRuntime",
                                                       "()Ljava/lang/Runtime;");
            f->runtime_total = (*jni)->GetMethodID(jni, k, "totalMemory", "()J");
            f->runtime_free = (*jni)->GetMethodID(jni, k, "freeMemory", "()J");
            if (f->runtime_get && f->runtime_total && f->runtime_free)
                f->runtime_class = (*jni)->NewGlobalRef(jni, k);
            (*jni)->DeleteLocalRef(jni, k);
        }
        (*jni)->ExceptionClear(jni);
        if (!f->runtime_class)
            return;
    }
    jobject rt = (*jni)->CallStaticObjectMethod(jni, f->runtime_class, f->runtime_get);
    if (rt) {
        jlong total = (*jni)->CallLongMethod(jni, rt, f->runtime_total);
        jlong freeb = (*jni)->ExceptionCheck(jni) ? -1
                    : (*jni)->CallLongMethod(jni, rt, f->runtime_free);
        if (!(*jni)->ExceptionCheck(jni) && total >= freeb && freeb >= 0) {
            *used = (uint64_t)(total - freeb);
            *committed = (uint64_t)total;
        }
        (*jni)->DeleteLocalRef(jni, rt);
    }
    (*jni)->ExceptionClear(jni);
}

/* The GC pauses queued since the last pass. The heap is read once, right after
 * the newest pause; older ones in the same batch get 0 (unknown) rather than a
 * figure that belongs to a later GC. */
static void write_gcs(struct flusher *f)
{
    struct rp_gc_pause batch[32];
    int n;
    do {
        n = 0;
        while (n < 32 && rp_alloc_gc_pop(&batch[n]))
            n++;
        if (!n)
            return;
        uint64_t used, committed;
        heap_now(f, &used, &committed);
        for (int i = 0; i < n; i++) {
            int last = i == n - 1;
            uint64_t extra[3] = {last ? used : 0, last ? committed : 0, batch[i].id};
            if (!f->w || !kind_of(f, &f->kind_gc, "gc", "ns", 0, GC_EXTRA, 3) ||
                rp_chunk_sample(f->w, f->kind_gc, 0, batch[i].start, 0,
                                batch[i].end - batch[i].start, extra) != 0)
                f->lost_gc++;
            else
                g_gc_written++;
        }
    } while (n == 32);
}

/* The live snapshot (live=on): every tracked object still alive, at one time,
 * marked by the live.objects and live.bytes gauges; dead entries are recycled. */
struct snapshot {
    struct flusher *f;
    uint32_t kind;
    uint64_t gcs, objects, bytes, failed;
};

static void snapshot_live(void *arg, const struct rp_live_obj *o)
{
    struct snapshot *sn = arg;
    struct flusher *f = sn->f;
    /* The allocating thread: still running (or ended but not yet released), or
     * ended with its THREAD record in this chunk; else none. */
    struct rp_slot *s = rp_threads_slot(o->slot);
    uint32_t thread = s && atomic_load(&s->gen) == o->slot_gen &&
                      atomic_load(&s->state) != RP_SLOT_FREE ? thread_id(f, s) : 0;
    if (!thread && o->thread_chunk == f->generation)
        thread = o->thread;
    if (!sn->kind) {                    /* no kind, so no snapshot: counted */
        sn->failed++;
        return;
    }
    uint32_t stack = o->stack ? live_stack_id(f, o->stack) : 0;
    uint64_t extra[6] = {alloc_class_id(f, o->klass), o->size, o->objects, o->length1,
                         sn->gcs - o->gcs, f->now > o->time ? (f->now - o->time) / 1000000u : 0};
    if (!extra[0] || rp_chunk_sample(f->w, sn->kind, thread, f->now, stack, o->weight,
                                     extra) != 0) {
        sn->failed++;
        return;
    }
    if (!stack)
        f->live_no_stack++;
    sn->objects++;
    sn->bytes += o->weight;
    g_live_written++;
}

static void snapshot_dead(void *arg, void *stack)
{
    struct snapshot *sn = arg;
    live_stack_unref(sn->f, stack);
}

static void write_live(struct flusher *f)
{
    struct rp_alloc_state st;
    rp_alloc_state(&st);
    if (!st.live)
        return;
    /* Without its kind (no memory) the sweep still runs: dead entries must be
     * recycled, and the objects that could not be written are counted. */
    struct snapshot sn = {f, kind_of(f, &f->kind_live, "live", "bytes", 0, LIVE_EXTRA, 6),
                          rp_alloc_gc_count(), 0, 0, 0};
    rp_alloc_live_sweep(snapshot_live, snapshot_dead, &sn);
    if (sn.kind) {
        rp_chunk_gauge(f->w, "live.objects", f->now, sn.objects);
        rp_chunk_gauge(f->w, "live.bytes", f->now, sn.bytes);
    }
    f->lost_live += sn.failed;
}

/* -------------------------------------------------------------- wall clock -- */

/* The sink's functions (sink.h), on the flusher's state. */
static uint32_t sink_thread_id(void *ctx, struct rp_slot *s)
{
    return thread_id(ctx, s);
}

static uint32_t sink_stack_id(void *ctx, const struct rp_sample_hdr *h, size_t len)
{
    return stack_id(ctx, h, len);
}

static struct rp_sink sink_of(struct flusher *f)
{
    return (struct rp_sink){f->w, f->generation, f, sink_thread_id, sink_stack_id};
}

/* The wall sampler's counters (docs/format.md) and its ring's losses, named
 * lost.wall_<reason> so that they are not mistaken for CPU samples' losses. */
static void wall_counters(struct flusher *f)
{
    struct rp_ring *ring = rp_wall_ring();
    if (!ring)
        return;
    rp_counters_write(RP_COUNTERS_WALL, emit_counter, f->w);
    struct rp_wall_stats now;
    rp_wall_stats(&now);
    struct rp_ring_stats st;
    rp_ring_stats(ring, &st);
    for (int r = 0; r < RP_RING_DROP_REASONS; r++) {
        uint64_t d = st.dropped[r] - f->wall_seen_dropped[r];
        char name[64];
        snprintf(name, sizeof name, "%swall_%s", RP_COUNTER_LOST_PREFIX,
                 rp_ring_drop_name((enum rp_ring_drop)r));
        if (d && chunk_counter(f->w, name, d) == 0)
            f->wall_seen_dropped[r] = st.dropped[r];
    }
    rp_chunk_gauge(f->w, "wall.threads", f->now, now.tracked);
    rp_chunk_gauge(f->w, "wall.round_ns", f->now, now.last_round_ns);
}

/* ------------------------------------------------------------------- drain -- */

static int on_record(void *arg, const void *p, size_t len)
{
    struct flusher *f = arg;
    if (len < sizeof(struct rp_sample_hdr) || len > f->rec_cap) {
        f->bad_records++;
        return 0;
    }
    memcpy(f->rec, p, len);
    const struct rp_sample_hdr *h = (const void *)f->rec;
    if ((uint64_t)h->nnative + h->njava > f->cfg.depth ||
        rp_record_size(h->type, h->nnative, h->njava) != len) {
        f->bad_records++;
        return 0;
    }
    size_t flen = rp_sample_size(h->nnative, h->njava);
    /* Every record names its slot and generation; one that does not match the
     * slot's present occupant (never expected in a thread's own ring, possible in
     * the jvmti sampler's) is dropped, not given to the wrong thread. */
    struct rp_slot *s = f->cur ? f->cur : rp_threads_slot(h->slot);
    int gone = !s || h->slot != s->index || atomic_load(&s->gen) != h->gen ||
               atomic_load(&s->state) == RP_SLOT_FREE;
    if (h->type == RP_SAMPLE_ALLOC)
        adopt_live(f, gone ? NULL : s, h, flen);
    int wall = h->type == RP_SAMPLE_WALL;
    if (gone) {
        (*(wall ? &f->wall_lost_gone : &f->lost_gone))++;
        return 0;
    }
    if (!f->w) {
        (*(wall ? &f->wall_lost_no_chunk : &f->lost_no_chunk))++;
        return 0;
    }
    int ran = 1;                      /* the thread ran since its previous sample */
    if (h->type == RP_SAMPLE_ALLOC) {
        if (write_alloc(f, s, h, flen) != 0) {
            f->lost_memory++;
            return 0;
        }
        g_alloc_written++;
    } else if (h->type == RP_SAMPLE_LOCK) {
        if (write_lock(f, s, h, flen) != 0) {
            f->lost_memory++;
            return 0;
        }
        g_lock_written++;
    } else if (h->type == RP_SAMPLE_WALL) {
        struct rp_sink sk = sink_of(f);
        if (rp_wall_flush(&sk, s, h, flen) != 0) {
            f->wall_lost_memory++;
            return 0;
        }
        g_wall_written++;
        /* Names are polled for threads that took samples (poll_names); a repeat
         * means the thread did not run, so it cannot have renamed itself, and
         * 2000 idle threads would cost 2000 GetThreadInfo calls a second. */
        struct rp_wall_tail tail;
        memcpy(&tail, (const uint8_t *)h + flen, sizeof tail);
        ran = !tail.repeat;
    } else {
        uint32_t thread = thread_id(f, s);
        uint32_t stack = thread ? stack_id(f, h, flen) : 0;
        if (!stack || rp_chunk_sample(f->w, f->kind, thread, h->time, stack, h->weight,
                                      NULL) != 0) {
            f->lost_memory++;
            return 0;
        }
        g_samples_written++;
        atomic_fetch_add_explicit(&s->written, 1, memory_order_relaxed);
    }
    if (ran)
        s->sampled++;
    uint64_t key = (uint64_t)(uint32_t)h->status | (uint64_t)walk_source(h) << 32;
    if (h->status != RP_WALK_OK) {
        uint64_t c = 0;
        rp_u64map_get(&f->status, key, &c);
        rp_u64map_put(&f->status, key, c + 1);
    }
    return 0;
}

/* Drain one ring; a scribbled length word in it (never expected: ring.h) cost
 * the rest of the ring's records, counted as lost.bad_record. */
static void drain_ring(struct flusher *f, struct rp_ring *ring)
{
    uint64_t before = atomic_load_explicit(&ring->corrupt, memory_order_relaxed);
    rp_ring_drain(ring, on_record, f, f->scratch);
    f->bad_records += atomic_load_explicit(&ring->corrupt, memory_order_relaxed) - before;
}

/* --------------------------------------------------------------- the flush -- */

static void counter(struct flusher *f, const char *name, uint64_t *value)
{
    if (*value && chunk_counter(f->w, name, *value) == 0)
        *value = 0;
}

/* rp_recording_flush, which may rotate: then the writer is gone, and f->w
 * must not be used again before the next pass's ensure_writer. */
static int flush_segment(struct flusher *f)
{
    int rotated;
    int rc = rp_recording_flush(f->cfg.rec, &rotated);
    if (rotated)
        f->w = NULL;
    return rc;
}

static void flush_step(struct flusher *f)
{
    poll_names(f);
    rp_u64map_clear(&f->tids);        /* new names must reach thread records */
    uint32_t n = rp_threads_count(), live = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (s->ring)
            count_losses(f, s->ring, s->seen_dropped);
        if (atomic_load(&s->state) != RP_SLOT_LIVE)
            continue;
        live++;
        uint32_t id = thread_id(f, s);
        uint64_t cpu = slot_cpu(s);
        if (id && cpu)
            rp_chunk_thread_cpu(f->w, id, f->now, cpu);
    }
    if (!f->cfg.async && rp_jvmti_ring())
        count_losses(f, rp_jvmti_ring(), f->jvmti_seen_dropped);
    counter(f, RP_COUNTER_LOST_PREFIX "thread_gone", &f->lost_gone);
    counter(f, RP_COUNTER_LOST_PREFIX "wall_thread_gone", &f->wall_lost_gone);
    counter(f, RP_COUNTER_LOST_PREFIX "wall_no_chunk", &f->wall_lost_no_chunk);
    counter(f, RP_COUNTER_LOST_PREFIX "wall_no_memory", &f->wall_lost_memory);
    counter(f, RP_COUNTER_LOST_PREFIX "no_chunk", &f->lost_no_chunk);
    counter(f, RP_COUNTER_LOST_PREFIX "no_memory", &f->lost_memory);
    counter(f, RP_COUNTER_LOST_PREFIX "bad_record", &f->bad_records);
    /* What failed allocations cost besides samples (docs/format.md): threads left
     * unsampled, frames named [unknown java method]. */
    rp_counters_write(RP_COUNTERS_NOMEM, emit_counter, f->w);
    write_live(f);
    rp_counters_write(RP_COUNTERS_ALLOC, emit_counter, f->w);
    struct rp_alloc_state ast;
    rp_alloc_state(&ast);
    if (ast.available) {
        struct rp_alloc_stats as;
        rp_alloc_stats(&as);
        rp_chunk_gauge(f->w, "alloc.interval", f->now, ast.effective);
        rp_chunk_gauge(f->w, RP_GAUGE_AGENT_ALLOC, f->now, as.callback_ns);
    }
    counter(f, RP_COUNTER_LOST_PREFIX "gc_pause", &f->lost_gc);
    counter(f, RP_COUNTER_LOST_PREFIX "live_snapshot", &f->lost_live);
    counter(f, "live.no_stack", &f->live_no_stack);
    wall_counters(f);
    for (size_t i = 0; i < f->status.cap; i++) {
        if (!f->status.used[i] || !f->status.vals[i])
            continue;
        struct status_info si;
        status_describe((int)(int32_t)(uint32_t)f->status.keys[i],
                        (enum walk_source)(f->status.keys[i] >> 32), &si);
        if (chunk_counter(f->w, si.counter, f->status.vals[i]) == 0)
            f->status.vals[i] = 0;
    }
    if (f->cfg.async) {
        struct rp_async_stats st;
        rp_async_stats(&st);
        uint64_t stray = st.stray - f->stray_seen;
        if (stray && chunk_counter(f->w, RP_COUNTER_LOST_PREFIX "no_slot", stray) == 0)
            f->stray_seen = st.stray;
        /* Someone else sends our signal (the application's setitimer(ITIMER_PROF),
         * kill, a profiler in a native library): each one is ignored, but its
         * sender is probably expecting a handler of its own. Say so once. */
        if (st.foreign)
            rp_log_once(&f->warned_foreign, "%s signals that are not from ringprof's "
                        "timers reach its handler (setitimer(ITIMER_PROF), kill, or "
                        "another profiler in this process?): they are ignored and "
                        "counted as lost.no_slot; if the application needs %s, give "
                        "ringprof another signal with signal=, e.g. signal=VTALRM",
                        rp_async_signal_name(), rp_async_signal_name());
        rp_async_hist(&f->hist_now);
        rp_hist_delta(&f->hist_now, &f->hist_prev, &f->hist_delta);
        if (rp_hist_total(&f->hist_delta)) {
            rp_chunk_gauge(f->w, "agent.handler_ns.p50", f->now,
                           rp_hist_quantile(&f->hist_delta, 0.50));
            rp_chunk_gauge(f->w, "agent.handler_ns.p99", f->now,
                           rp_hist_quantile(&f->hist_delta, 0.99));
        }
        rp_chunk_gauge(f->w, RP_GAUGE_AGENT_HANDLER, f->now, f->hist_now.sum);
        f->hist_prev = f->hist_now;
        counter(f, "agent.handler_replaced", &f->handler_replaced);
        if (!rp_async_guard_intact())
            rp_log_once(&f->warned_guard, "a SIGSEGV/SIGBUS handler was installed after "
                        "ringprof's: a fault in a stack walk is no longer contained");
    }
    lock_counters(f);
    rp_counters_write(RP_COUNTERS_TELEMETRY, emit_counter, f->w);
    rp_counters_write(RP_COUNTERS_WALK, emit_counter, f->w);
    /* With telemetry on, the agent's CPU is one of its gauges (telemetry.h). */
    if (!f->cfg.telemetry_ns)
        rp_chunk_gauge(f->w, RP_GAUGE_AGENT_CPU, f->now, rp_threads_agent_cpu_ns());
    rp_chunk_gauge(f->w, "agent.threads", f->now, live);
    rp_chunk_gauge(f->w, "agent.slots", f->now, n);
    if (g_rotate_path) {
        /* A control request: the pending records end the chunk. */
        if (rp_recording_rotate(f->cfg.rec, g_rotate_path, PATH_MAX) != 0)
            g_req_rc = -1, g_req_errno = errno;
        g_rotate_path = NULL;         /* done; the writer is gone */
        f->w = NULL;
    } else if (f->w) {
        int ok = flush_segment(f) == 0;
        segment_written(f, ok, errno);
    }
    if (rp_methods_compiled_epoch() != f->epoch) {
        f->epoch = rp_methods_compiled_epoch();
        drop_raw_cache(f);
    }
}

/* Totals for status, once per pass. */
static void publish(struct flusher *f)
{
    struct rp_recording_stats rs;
    rp_recording_stats(f->cfg.rec, &rs);
    pthread_mutex_lock(&g_tot_lock);
    g_tot.samples = g_samples_written;
    g_tot.alloc_samples = g_alloc_written;
    g_tot.gc_samples = g_gc_written;
    g_tot.live_samples = g_live_written;
    g_tot.lock_samples = g_lock_written;
    g_tot.wall_samples = g_wall_written;
    g_tot.rec = rs;
    snprintf(g_tot.current, sizeof g_tot.current, "%s",
             f->w ? rp_chunk_writer_path(f->w) : "");
    pthread_mutex_unlock(&g_tot_lock);
}

/* Someone replaced the CPU-timer signal's handler (the application, another
 * profiler, or SIG_DFL, which would kill the JVM at our next timer): delete every
 * timer and stop the engine, so our signals go nowhere. Checked every pass. */
static void check_handler(struct flusher *f)
{
    if (!f->cfg.async || f->warned_handler || rp_async_handler_intact())
        return;
    rp_threads_disarm_all();
    rp_async_stop(100);
    f->warned_handler = 1;
    f->handler_replaced = 1;
    rp_log("the CPU-timer signal handler was replaced by someone else: CPU sampling "
           "stopped (its timers are deleted)");
}

/* The wall sampler's ring, with a scratch buffer of its own size (it may be
 * larger than ring=, engine_wall.c). */
static void drain_wall(struct flusher *f)
{
    struct rp_ring *ring = rp_wall_ring();
    if (!ring)
        return;
    if (!f->wall_scratch && !(f->wall_scratch = malloc(rp_ring_max_record(ring))))
        return;                        /* (no memory: the ring fills, and counts) */
    f->cur = NULL;
    void *keep = f->scratch;
    f->scratch = f->wall_scratch;
    drain_ring(f, ring);
    f->scratch = keep;
}

static void pass(struct flusher *f, int flush_now)
{
    check_handler(f);
    f->now = rp_mono_ns();
    if (!ensure_writer(f))
        f->w = NULL;
    rp_u64map_clear(&f->tids);
    if (!f->cfg.async && rp_jvmti_ring()) {
        f->cur = NULL;
        drain_ring(f, rp_jvmti_ring());
    }
    /* Every ring first, then the slots whose thread ended (drained once more,
     * after it ended): a lock record names its owner's slot, which must not be
     * released before the records that name it are written. */
    drain_wall(f);
    uint32_t n = rp_threads_count();
    for (int ending = 0; ending < 2; ending++) {
        /* The wall sampler runs on while the slots are drained: take what it
         * pushed meanwhile before any ended slot is released, so that only a
         * sample pushed in the moment between this drain and the release is
         * lost (lost.wall_thread_gone). */
        if (ending)
            drain_wall(f);
        for (uint32_t i = 0; i < n; i++) {
            struct rp_slot *s = rp_threads_slot(i);
            int st = atomic_load(&s->state);
            if (st == RP_SLOT_FREE || (ending && st != RP_SLOT_ENDED))
                continue;
            if (s->ring) {
                f->cur = s;
                drain_ring(f, s->ring);
                f->cur = NULL;
            }
            if (ending)
                finish_slot(f, s);
        }
    }
    write_gcs(f);
    rp_alloc_adapt(f->now);
    if (flush_now && f->w)
        flush_step(f);
    publish(f);
}

/* A control request (flush, rotate): drain every ring, write the counters, and
 * close the chunk. Flusher thread, g_lock not held. */
static void serve_request(struct flusher *f)
{
    char path[PATH_MAX] = "";
    g_req_rc = 0;
    g_req_errno = 0;
    g_rotate_path = path;
    pass(f, 1);                       /* its flush_step rotates, if it has a chunk */
    if (g_rotate_path && rp_recording_rotate(f->cfg.rec, path, sizeof path) != 0)
        g_req_rc = -1, g_req_errno = errno;
    g_rotate_path = NULL;
    f->w = NULL;                      /* the next pass opens the next chunk */
    publish(f);
    pthread_mutex_lock(&g_lock);
    snprintf(g_req_path, sizeof g_req_path, "%s", path);
    g_req_pending = 0;
    g_req_done = 1;
    pthread_cond_broadcast(&g_req_cond);
    pthread_mutex_unlock(&g_lock);
}

/* A call request: run it here, on a thread attached to the JVM. */
static void serve_call(void)
{
    g_req_err[0] = '\0';
    int rc = g_req_fn(g_req_arg, g_req_err, sizeof g_req_err);
    pthread_mutex_lock(&g_lock);
    g_req_rc = rc;
    g_req_errno = 0;
    g_req_path[0] = '\0';
    g_req_pending = 0;
    g_req_done = 1;
    pthread_cond_broadcast(&g_req_cond);
    pthread_mutex_unlock(&g_lock);
}

#ifdef RP_TEST_HOOKS
/* Test builds only (tests/agent): bugs on the flusher thread, once, after its
 * first pass, so the ASan build's JVM tests can show that such a bug fails them
 * (agent_asan_catches, docs/sanitizers.md). RINGPROF_TESTFAULT=flusher_overflow
 * writes one byte past a heap block (harmless without ASan: malloc's chunk has
 * room for it); flusher_leak drops the only pointer to a block. */
static void *volatile g_fault_block;

static void test_fault(void)
{
    static int done;
    const char *f = getenv("RINGPROF_TESTFAULT");
    if (done || !f)
        return;
    done = 1;
    if (strcmp(f, "flusher_overflow") == 0) {
        volatile size_t n = 16;      /* volatile: no compile-time bounds warning */
        char *p = malloc(n);
        if (p) {
            p[n] = 1;
            free(p);
        }
    } else if (strcmp(f, "flusher_leak") == 0) {
        g_fault_block = malloc(100);
        g_fault_block = NULL;
    }
}
#endif

/* ------------------------------------------------------------ the thread -- */

static void JNICALL flusher_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    struct flusher *f = &g_f;
    f->jvmti = jvmti;
    f->jni = jni;
    atomic_store(&g_tid, rp_gettid());
    rp_threads_add_agent(atomic_load(&g_tid));
    if (f->cfg.async) {
        rp_codemap_refresh();
        rp_threads_scan();
    }
    uint64_t start = rp_mono_ns();
    uint64_t next_flush = start + f->cfg.flush_ns, next_scan = start + SCAN_NS;
    pthread_mutex_lock(&g_lock);
    while (!g_stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + DRAIN_NS;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        if (!g_req_pending && !atomic_exchange(&g_wake_pending, 0))
            pthread_cond_timedwait(&g_wake, &g_lock, &until);
        atomic_store(&g_wake_pending, 0);
        if (g_stop)
            break;
        int request = g_req_pending;
        pthread_mutex_unlock(&g_lock);
        if (request) {
            if (g_req_fn)
                serve_call();
            else
                serve_request(f);
            pthread_mutex_lock(&g_lock);
            continue;
        }
        uint64_t now = rp_mono_ns();
        int flush_now = now >= next_flush;
        if (flush_now)
            next_flush = now + f->cfg.flush_ns;
        /* A library loaded since the last pass is unknown to the native walker
         * until this runs; the check is O(1) when nothing changed. */
        if (f->cfg.async) {
            rp_codemap_refresh();
            rp_codecache_publish();
        }
        pass(f, flush_now);
        /* Not in the final pass: Java calls while the JVM dies could hang. */
        if (f->w)
            rp_telemetry_pass(f->jni, f->w, rp_mono_ns());
#ifdef RP_TEST_HOOKS
        test_fault();
#endif
        if (f->cfg.async && now >= next_scan) {
            next_scan = now + SCAN_NS;
            rp_threads_scan();
        }
        pthread_mutex_lock(&g_lock);
    }
    pthread_mutex_unlock(&g_lock);
    /* Sampling has stopped: drain everything, write the last segment, close. */
    pass(f, 1);
    int ok = rp_recording_close(f->cfg.rec);
    pthread_mutex_lock(&g_lock);
    g_close_ok = ok;
    g_done = 1;
    pthread_cond_broadcast(&g_done_cond);
    pthread_mutex_unlock(&g_lock);
}

/* The condition variables wait on CLOCK_MONOTONIC deadlines, so they need their
 * attribute; initialised once, by whichever of start, stop and request comes
 * first (stop and a control request can come before start got that far). */
static pthread_once_t g_conds_once = PTHREAD_ONCE_INIT;

static void init_conds(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_wake, &ca);
    pthread_cond_init(&g_done_cond, &ca);
    pthread_cond_init(&g_req_cond, &ca);
    pthread_condattr_destroy(&ca);
}

int rp_flusher_start(jvmtiEnv *jvmti, JNIEnv *jni, const struct rp_flusher_config *cfg,
                     char *err, size_t errlen)
{
    struct flusher *f = &g_f;
    f->cfg = *cfg;
    f->rec_cap = cfg->ring_bytes;
    f->rec = malloc(f->rec_cap + 8);
    f->scratch = malloc(cfg->ring_bytes);
    f->frames = malloc(((size_t)cfg->depth + 2) * sizeof *f->frames);
    if (!f->rec || !f->scratch || !f->frames) {
        snprintf(err, errlen, "out of memory for the flusher");
        return -1;
    }
    pthread_once(&g_conds_once, init_conds);
    atomic_store(&g_period_ns, cfg->interval_ns);
    /* The counter groups' order in a segment is flush_step's; within a group,
     * registration order is the chunk's. */
    rp_threads_counters_register();
    rp_methods_counters_register();
    rp_alloc_counters_register();
    rp_wall_counters_register();
    rp_lock_counters_register();
    rp_telemetry_counters_register();
    rp_stackwalk_counters_register();
    rp_telemetry_init(jvmti, cfg->telemetry_ns);
    return rp_jthread_run(jvmti, jni, "ringprof-flusher", flusher_main, NULL,
                               JVMTI_THREAD_NORM_PRIORITY, err, errlen);
}

int rp_flusher_stop(unsigned wait_ms)
{
    pthread_once(&g_conds_once, init_conds);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)wait_ms * 1000000u;
    until.tv_sec += (time_t)(ns / 1000000000u);
    until.tv_nsec = (long)(ns % 1000000000u);
    pthread_mutex_lock(&g_lock);
    g_stop = 1;
    pthread_cond_broadcast(&g_wake);
    pthread_cond_broadcast(&g_req_cond);
    while (!g_done) {
        if (pthread_cond_timedwait(&g_done_cond, &g_lock, &until) == ETIMEDOUT)
            break;
    }
    int ok = g_done ? g_close_ok : -1;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

/* ------------------------------------------------------- control requests -- */

static int post(rp_flusher_fn fn, void *arg, char *path, size_t pathlen,
                unsigned wait_ms, char *err, size_t errlen);

int rp_flusher_request(char *path, size_t pathlen, unsigned wait_ms, char *err,
                       size_t errlen)
{
    return post(NULL, NULL, path, pathlen, wait_ms, err, errlen);
}

int rp_flusher_call(rp_flusher_fn fn, void *arg, unsigned wait_ms, char *err,
                    size_t errlen)
{
    char path[8];
    return post(fn, arg, path, sizeof path, wait_ms, err, errlen);
}

/* Post a request (a flush if fn is NULL) and wait for its answer. */
static int post(rp_flusher_fn fn, void *arg, char *path, size_t pathlen,
                unsigned wait_ms, char *err, size_t errlen)
{
    pthread_once(&g_conds_once, init_conds);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)wait_ms * 1000000u;
    until.tv_sec += (time_t)(ns / 1000000000u);
    until.tv_nsec = (long)(ns % 1000000000u);
    int rc = -1, timed_out = 0;
    pthread_mutex_lock(&g_lock);
    /* A request that timed out earlier may still be in progress: wait for it. */
    while (g_req_pending && !g_stop && !timed_out)
        timed_out = pthread_cond_timedwait(&g_req_cond, &g_lock, &until) == ETIMEDOUT;
    if (g_stop || g_done) {
        snprintf(err, errlen, "the agent is shutting down; its last chunk is being "
                 "closed");
    } else if (!timed_out) {
        g_req_fn = fn;
        g_req_arg = arg;
        g_req_pending = 1;
        g_req_done = 0;
        pthread_cond_broadcast(&g_wake);
        while (!g_req_done && !g_stop && !timed_out)
            timed_out = pthread_cond_timedwait(&g_req_cond, &g_lock, &until) == ETIMEDOUT;
        if (g_req_done) {
            g_req_done = 0;
            if (g_req_rc == 0) {
                snprintf(path, pathlen, "%s", g_req_path);
                rc = 0;
            } else if (fn) {
                snprintf(err, errlen, "%s", g_req_err);
            } else {
                snprintf(err, errlen, "the chunk could not be finished in %s: %s",
                         rp_recording_dir(g_f.cfg.rec), strerror(g_req_errno));
            }
        } else if (g_stop) {
            snprintf(err, errlen, "the agent is shutting down; its last chunk is being "
                     "closed");
        }
    }
    if (rc != 0 && timed_out && fn)
        snprintf(err, errlen, "the flusher did not get to the request within %u ms (a "
                 "slow disk?); it will still carry it out when it can", wait_ms);
    else if (rc != 0 && timed_out)
        snprintf(err, errlen, "the flusher did not finish the chunk within %u ms (a "
                 "slow disk?); it will when it can, and a later flush will wait for it",
                 wait_ms);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void rp_flusher_totals(struct rp_flusher_totals *out)
{
    pthread_mutex_lock(&g_tot_lock);
    *out = g_tot;
    pthread_mutex_unlock(&g_tot_lock);
}

void rp_flusher_wake(void)
{
    atomic_store_explicit(&g_wake_pending, 1, memory_order_release);
    pthread_cond_signal(&g_wake);
}

void rp_flusher_set_interval(uint64_t interval_ns)
{
    atomic_store(&g_period_ns, interval_ns);
}
