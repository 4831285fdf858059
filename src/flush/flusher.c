/*
 * src/flush/flusher.c — the flusher thread (see flusher.h).
 *
 * Layout of a pass (every DRAIN_NS): make sure there is a chunk writer (a new
 * generation drops the chunk-id caches), drain the jvmti sampler's ring, then each
 * slot's ring, finishing slots whose thread ended; then, when due, the flush step
 * and the rescan. Records are copied out of the ring into an aligned buffer
 * before they are read (ring payloads are only 4-byte aligned).
 *
 * Each record goes to the writer of its kind (RECORD_KINDS below: cpu.h,
 * alloc.h, lock.h, wall.h) with a sink (sink.h); stacks.h makes the
 * chunk ids of their frames. The flusher keeps what belongs to no kind: the
 * thread records (one per slot occupant and chunk, with its CPU time at every
 * flush), the rings' losses, the records it could not hand to a writer (thread
 * gone, no chunk, no memory), the registered counters and gauges (counters.h),
 * and the control requests.
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
#include "kinds/alloc.h"
#include "code/codecache.h"
#include "code/codemap.h"
#include "core/counters.h"
#include "kinds/cpu.h"
#include "kinds/cpu_async.h"
#include "kinds/cpu_jvmti.h"
#include "kinds/wall.h"
#include "flush/flusher.h"
#include "threads/jthread.h"
#include "kinds/lock.h"
#include "core/log.h"
#include "code/methods.h"
#include "core/sample.h"
#include "flush/sink.h"
#include "threads/slottab.h"
#include "flush/stacks.h"
#include "walk/stackwalk.h"
#include "flush/telemetry.h"
#include "threads/threads.h"
#include "threads/threadscan.h"
#include "threads/threadtimer.h"
#include "core/u64map.h"

#define DRAIN_NS   100000000ull         /* rings are drained every 100 ms         */
#define SCAN_NS    500000000ull         /* /proc/self/task, every 500 ms          */

/* Why a record reached no writer, or its writer could not write it. */
enum loss { LOSS_GONE, LOSS_NO_CHUNK, LOSS_NO_MEMORY, LOSSES };
static const char *const LOSS_NAMES[2][LOSSES] = {
    {RP_COUNTER_LOST_PREFIX "thread_gone", RP_COUNTER_LOST_PREFIX "no_chunk",
     RP_COUNTER_LOST_PREFIX "no_memory"},
    {RP_COUNTER_LOST_PREFIX "wall_thread_gone", RP_COUNTER_LOST_PREFIX "wall_no_chunk",
     RP_COUNTER_LOST_PREFIX "wall_no_memory"},
};

/* Each record type's writer (sink.h), what status counts it as, and which loss
 * counters it uses (1: the wall sampler's). */
static const struct record_kind {
    uint32_t type;                  /* enum rp_sample_type                          */
    rp_sink_flush_fn flush;
    enum rp_written written;
    int wall;
} RECORD_KINDS[] = {
    {RP_SAMPLE_CPU, rp_cpu_flush, RP_WRITTEN_CPU, 0},
    {RP_SAMPLE_CPU_JVMTI, rp_cpu_flush, RP_WRITTEN_CPU, 0},
    {RP_SAMPLE_ALLOC, rp_alloc_flush, RP_WRITTEN_ALLOC, 0},
    {RP_SAMPLE_WALL, rp_wall_flush, RP_WRITTEN_WALL, 1},
    {RP_SAMPLE_LOCK, rp_lock_flush, RP_WRITTEN_LOCK, 0},
};

static const struct record_kind *record_kind(uint32_t type)
{
    for (size_t i = 0; i < sizeof RECORD_KINDS / sizeof RECORD_KINDS[0]; i++)
        if (RECORD_KINDS[i].type == type)
            return &RECORD_KINDS[i];
    return NULL;
}

struct flusher {
    struct rp_flusher_config cfg;
    jvmtiEnv *jvmti;
    JNIEnv *jni;
    struct rp_chunk_writer *w;
    uint64_t generation;
    uint64_t now;
    struct rp_u64map tids;          /* slot index → chunk thread id, this pass      */
    /* Buffers. */
    uint64_t *rec;                  /* aligned copy of the record being read        */
    size_t rec_cap;
    void *scratch;                  /* for rp_ring_drain                            */
    void *wall_scratch;             /* the same, for the wall ring's size           */
    struct rp_slot *cur;            /* the slot whose ring is drained, or NULL      */
    /* Counts for the next segment: records not handed to a writer (enum loss),
     * CPU-like and wall records apart (lost.<reason>, lost.wall_<reason>: the
     * wall sampler's visits are accounted for apart from the CPU samples). */
    uint64_t lost[2][LOSSES];
    uint64_t bad_records;
    uint64_t jvmti_seen_dropped[RP_RING_DROP_REASONS];
    uint64_t written[RP_WRITTEN_KINDS];     /* since the last publish             */
    int warned_chunk;
    uint64_t segfail_logged_ns;       /* last "a segment could not be written"      */
    uint64_t segfail_unlogged;        /* failures since, not yet reported           */
};

/* The losses already counted of each slot's ring (slottab.h): a ring belongs to
 * its slot, whoever occupies it, and its counts only grow. */
struct ring_seen {
    uint64_t dropped[RP_RING_DROP_REASONS];
};
static struct rp_slottab g_ring_seen = RP_SLOTTAB(struct ring_seen);

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
/* A flush that also changes the next chunks' header (rp_flusher_rotate_meta):
 * the key ("" for none) and its value. */
static char g_req_meta_key[64], g_req_meta_value[RP_FLUSHER_META_MAX];

/* The recording's state for status (rp_flusher_recording), under g_rec_lock. */
static pthread_mutex_t g_rec_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_flusher_recording g_rec;
/* rp_flusher_wake's request: a signal sent while the flusher is busy in a pass
 * (not waiting) would be lost without it; checked before each wait. */
static _Atomic int g_wake_pending;

/* Every counter reaches the chunk through here, and then the status totals. */
static int chunk_counter(struct rp_chunk_writer *w, const char *name, uint64_t v)
{
    int rc = rp_chunk_counter(w, name, v);
    if (rc == 0)
        rp_counters_tally(name, v);
    return rc;
}

/* The registry's and the sink's emit: into the chunk being written. */
static int emit_counter(void *ctx, const char *name, uint64_t delta)
{
    struct flusher *f = ctx;
    return chunk_counter(f->w, name, delta);
}

static int emit_gauge(void *ctx, const char *name, uint64_t value)
{
    struct flusher *f = ctx;
    return rp_chunk_gauge(f->w, name, f->now, value);
}

/* A pending count into the chunk; what it took is no longer pending. */
static void counter(struct flusher *f, const char *name, uint64_t *value)
{
    if (*value && chunk_counter(f->w, name, *value) == 0)
        *value = 0;
}

int rp_flusher_tid(void)
{
    return atomic_load(&g_tid);
}

/* ------------------------------------------------------------- the chunk -- */

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

static uint32_t thread_id(struct flusher *f, struct rp_slot *s);

static uint32_t sink_thread_id(void *ctx, struct rp_slot *s)
{
    return thread_id(ctx, s);
}

/* The sink of this pass (sink.h); w may be NULL (no chunk). */
static struct rp_sink sink_of(struct flusher *f)
{
    return (struct rp_sink){f->w, f->generation, f->now, f->jni, f, sink_thread_id,
                            emit_counter};
}

/* The current chunk writer; a new chunk drops every cached id (stacks.h) and
 * makes the cpu kind first. */
static int ensure_writer(struct flusher *f)
{
    f->w = rp_recording_writer(f->cfg.rec);
    if (!f->w) {
        struct rp_recording_stats rs;
        rp_recording_stats(f->cfg.rec, &rs);
        const char *why = rp_recording_dir_error(f->cfg.rec);
        rp_log_once(&f->warned_chunk, "cannot open a chunk in %s: %s; samples are "
                    "dropped and counted until it works again",
                    rp_recording_dir(f->cfg.rec), why ? why : strerror(rs.last_errno));
        return 0;
    }
    f->warned_chunk = 0;
    uint64_t g = rp_recording_generation(f->cfg.rec);
    if (g != f->generation) {
        rp_u64map_clear(&f->tids);
        f->generation = g;
    }
    rp_stacks_use(f->w, g, f->jni);
    struct rp_sink sk = sink_of(f);
    return rp_cpu_kind(&sk) != 0;
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

/* The losses of slot `s`'s ring since they were last counted. */
static void slot_losses(struct flusher *f, struct rp_slot *s)
{
    struct ring_seen *seen = s->ring ? rp_slottab_get(&g_ring_seen, s->index, 1) : NULL;
    if (seen)
        count_losses(f, s->ring, seen->dropped);
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
        slot_losses(f, s);
    }
    rp_u64map_del(&f->tids, s->index);    /* the slot's next thread is another key */
    rp_threads_release(f->jni, s);
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
    const struct record_kind *k = record_kind(h->type);
    if (!k || (uint64_t)h->nnative + h->njava > f->cfg.depth ||
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
    struct rp_sink sk = sink_of(f);
    if (h->type == RP_SAMPLE_ALLOC)
        rp_alloc_seen(&sk, gone ? NULL : s, h, flen);
    uint64_t *lost = f->lost[k->wall];
    if (gone) {
        lost[LOSS_GONE]++;
        return 0;
    }
    if (!f->w) {
        lost[LOSS_NO_CHUNK]++;
        return 0;
    }
    enum rp_sink_result r = k->flush(&sk, s, h, flen);
    if (r == RP_SINK_LOST) {
        lost[LOSS_NO_MEMORY]++;
        return 0;
    }
    f->written[k->written]++;
    /* Names are polled for threads that ran since (poll_names). */
    if (r == RP_SINK_WRITTEN)
        s->sampled++;
    rp_stacks_count_status(h);
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

/* A group's registered counters, then its gauges (counters.h). */
static void registered(struct flusher *f, enum rp_counter_group g)
{
    rp_counters_write(g, emit_counter, f);
    rp_gauges_write(g, emit_gauge, f);
}

static void flush_step(struct flusher *f)
{
    poll_names(f);
    rp_u64map_clear(&f->tids);        /* new names must reach thread records */
    uint32_t n = rp_threads_count(), live = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        slot_losses(f, s);
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
    for (int wall = 0; wall < 2; wall++)
        for (int l = 0; l < LOSSES; l++)
            counter(f, LOSS_NAMES[wall][l], &f->lost[wall][l]);
    counter(f, RP_COUNTER_LOST_PREFIX "bad_record", &f->bad_records);
    /* What failed allocations cost besides samples (docs/format.md): threads left
     * unsampled, frames named [unknown java method]. */
    registered(f, RP_COUNTERS_NOMEM);
    struct rp_sink sk = sink_of(f);
    rp_live_flush(&sk);
    registered(f, RP_COUNTERS_ALLOC);
    registered(f, RP_COUNTERS_WALL);
    rp_stacks_write_status(emit_counter, f);
    registered(f, RP_COUNTERS_CPU);
    rp_lock_flush_waiting(&sk);
    registered(f, RP_COUNTERS_LOCK);
    registered(f, RP_COUNTERS_TELEMETRY);
    registered(f, RP_COUNTERS_WALK);
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
    rp_stacks_code_changed();
}

/* The totals and the recording's state for status, once per pass. */
static void publish(struct flusher *f)
{
    for (int k = 0; k < RP_WRITTEN_KINDS; k++)
        if (f->written[k]) {
            rp_counters_written((enum rp_written)k, f->written[k]);
            f->written[k] = 0;
        }
    struct rp_recording_stats rs;
    rp_recording_stats(f->cfg.rec, &rs);
    pthread_mutex_lock(&g_rec_lock);
    g_rec.rec = rs;
    snprintf(g_rec.current, sizeof g_rec.current, "%s",
             f->w ? rp_chunk_writer_path(f->w) : "");
    pthread_mutex_unlock(&g_rec_lock);
}

/* The wall sampler's ring, with a scratch buffer of its own size (it may be
 * larger than ring=, wall.c). */
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
    if (f->cfg.async)
        rp_async_watch();
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
    struct rp_sink sk = sink_of(f);
    rp_gc_flush(&sk);
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
    /* After the rotation, so that what this pass drained, sampled before the
     * change, is in a chunk with the header before it too. */
    if (g_req_meta_key[0] &&
        rp_recording_set_meta(f->cfg.rec, g_req_meta_key, g_req_meta_value) != 0)
        rp_log("the next chunks' header could not take %s=%s: %s", g_req_meta_key,
               g_req_meta_value, strerror(errno));
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

/* CLOCK_MONOTONIC `ns` from now, for the condition variables' timed waits. */
static struct timespec deadline_in(uint64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    ns += (uint64_t)t.tv_nsec;
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec = (long)(ns % 1000000000u);
    return t;
}

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
        struct timespec until = deadline_in(DRAIN_NS);
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
    if (!f->rec || !f->scratch || rp_stacks_init(cfg->depth) != 0) {
        snprintf(err, errlen, "out of memory for the flusher");
        return -1;
    }
    pthread_once(&g_conds_once, init_conds);
    rp_cpu_set_period(cfg->interval_ns);
    /* The counter groups' order in a segment is flush_step's; within a group,
     * registration order is the chunk's. */
    rp_threads_counters_register();
    rp_methods_counters_register();
    rp_alloc_counters_register();
    rp_wall_counters_register();
    if (cfg->async)
        rp_async_counters_register();
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
    struct timespec until = deadline_in((uint64_t)wait_ms * 1000000u);
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

static int post(rp_flusher_fn fn, void *arg, const char *key, const char *value,
                char *path, size_t pathlen, unsigned wait_ms, char *err, size_t errlen);

int rp_flusher_request(char *path, size_t pathlen, unsigned wait_ms, char *err,
                       size_t errlen)
{
    return post(NULL, NULL, NULL, NULL, path, pathlen, wait_ms, err, errlen);
}

int rp_flusher_rotate_meta(const char *key, const char *value, char *path,
                           size_t pathlen, unsigned wait_ms, char *err, size_t errlen)
{
    return post(NULL, NULL, key, value, path, pathlen, wait_ms, err, errlen);
}

int rp_flusher_call(rp_flusher_fn fn, void *arg, unsigned wait_ms, char *err,
                    size_t errlen)
{
    char path[8];
    return post(fn, arg, NULL, NULL, path, sizeof path, wait_ms, err, errlen);
}

/* Post a request (a flush if fn is NULL, with a header change if key is not)
 * and wait for its answer. */
static int post(rp_flusher_fn fn, void *arg, const char *key, const char *value,
                char *path, size_t pathlen, unsigned wait_ms, char *err, size_t errlen)
{
    pthread_once(&g_conds_once, init_conds);
    struct timespec until = deadline_in((uint64_t)wait_ms * 1000000u);
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
        snprintf(g_req_meta_key, sizeof g_req_meta_key, "%s", key ? key : "");
        snprintf(g_req_meta_value, sizeof g_req_meta_value, "%s", value ? value : "");
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

void rp_flusher_recording(struct rp_flusher_recording *out)
{
    pthread_mutex_lock(&g_rec_lock);
    *out = g_rec;
    pthread_mutex_unlock(&g_rec_lock);
}

void rp_flusher_wake(void)
{
    atomic_store_explicit(&g_wake_pending, 1, memory_order_release);
    pthread_cond_signal(&g_wake);
}
