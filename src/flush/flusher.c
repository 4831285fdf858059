/*
 * src/flush/flusher.c — the flusher thread (see flusher.h).
 *
 * Layout of a pass (every DRAIN_NS): make sure there is a chunk writer (a new
 * generation drops the chunk-id caches, and each kind's chunk hook writes what
 * must come first), drain the kinds' own rings, then each slot's ring,
 * finishing slots whose thread ended; run the kinds' pass hooks; then, when
 * due, the flush step. Records are copied out of the ring into an aligned
 * buffer before they are read (ring payloads are only 4-byte aligned).
 *
 * Each record goes to the writer its kind registered for its type (kind.h)
 * with a sink (sink.h); stacks.h makes the chunk ids of their frames. The
 * flusher names no kind: it loops over the list agent.c set (rp_kinds). What
 * belongs to no kind is its own or its helpers': the thread records
 * (threadrec.h), the losses (losses.h), the registered counters and gauges of
 * the shared groups (counters.h), and the control requests (requests.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/clock.h"
#include "ringprof/events.h"
#include "code/codecache.h"
#include "code/codemap.h"
#include "code/methods.h"
#include "core/counters.h"
#include "core/log.h"
#include "core/sample.h"
#include "flush/flusher.h"
#include "flush/kind.h"
#include "flush/losses.h"
#include "flush/requests.h"
#include "flush/sink.h"
#include "flush/stacks.h"
#include "flush/telemetry.h"
#include "flush/threadrec.h"
#include "threads/jthread.h"
#include "threads/threads.h"
#include "threads/threadscan.h"

#define DRAIN_NS   100000000ull         /* rings are drained every 100 ms         */
#define SCAN_NS    500000000ull         /* /proc/self/task, every 500 ms          */

struct flusher {
    struct rp_flusher_config cfg;
    jvmtiEnv *jvmti;
    JNIEnv *jni;
    struct rp_chunk_writer *w;
    uint64_t generation;
    uint64_t now;
    /* Buffers. */
    uint64_t *rec;                  /* aligned copy of the record being read        */
    size_t rec_cap;
    void *scratch;                  /* for rp_ring_drain                            */
    struct rp_slot *cur;            /* the slot whose ring is drained, or NULL      */
    /* Each kind's own ring (kind.h): a scratch buffer of its size, and its
     * losses already counted (RP_KIND_RING_LOSSES). */
    void *own_scratch[RP_ENGINES_MAX];
    uint64_t own_seen[RP_ENGINES_MAX][RP_RING_DROP_REASONS];
    uint64_t written[RP_ENGINES_MAX];       /* by kind, since the last publish   */
    int warned_chunk;
    char *rotate_path;              /* a flush request's: flush_step rotates into it */
    int rotate_rc, rotate_errno;
};

static struct flusher g_f;
static _Atomic int g_tid;

/* Every counter reaches the chunk through here, and then the status totals. */
static int chunk_counter(struct rp_chunk_writer *w, const char *name, uint64_t v)
{
    int rc = rp_chunk_counter(w, name, v);
    if (rc == 0)
        rp_counters_tally(name, v);
    return rc;
}

/* The registry's, the losses' and the sink's emit: into the chunk being
 * written. */
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

int rp_flusher_tid(void)
{
    return atomic_load(&g_tid);
}

/* ------------------------------------------------------------- the chunk -- */

static uint32_t sink_thread_id(void *ctx, struct rp_slot *s)
{
    struct flusher *f = ctx;
    return rp_threadrec_id(f->w, s, f->now);
}

/* The sink of this pass (sink.h); w may be NULL (no chunk). */
static struct rp_sink sink_of(struct flusher *f)
{
    return (struct rp_sink){f->w, f->generation, f->now, f->jni, f, sink_thread_id,
                            emit_counter};
}

/* The current chunk writer; a new chunk drops every cached id (stacks.h), and
 * the kinds' chunk hooks write what comes first in it. @return 0 if this pass
 * has no chunk. */
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
        rp_threadrec_reset();
        f->generation = g;
    }
    rp_stacks_use(f->w, g, f->jni);
    struct rp_sink sk = sink_of(f);
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    for (size_t i = 0; i < n; i++)
        if (k[i]->chunk && k[i]->chunk(&sk) != 0)
            return 0;
    return 1;
}

/* ------------------------------------------------------------------- drain -- */

/* The slot record `h` names, or NULL if it is not that slot's present occupant
 * (never expected in a thread's own ring, possible in a sampler's): such a
 * record is dropped, not given to the wrong thread. */
static struct rp_slot *record_slot(struct flusher *f, const struct rp_sample_hdr *h)
{
    struct rp_slot *s = f->cur ? f->cur : rp_threads_slot(h->slot);
    int gone = !s || h->slot != s->index || atomic_load(&s->gen) != h->gen ||
               atomic_load(&s->state) == RP_SLOT_FREE;
    return gone ? NULL : s;
}

static int on_record(void *arg, const void *p, size_t len)
{
    struct flusher *f = arg;
    if (len < sizeof(struct rp_sample_hdr) || len > f->rec_cap) {
        rp_losses_bad(1);
        return 0;
    }
    memcpy(f->rec, p, len);
    const struct rp_sample_hdr *h = (const void *)f->rec;
    const struct rp_kind *k;
    size_t ki;
    const struct rp_kind_record *r = rp_kind_record(h->type, &k, &ki);
    if (!r || (uint64_t)h->nnative + h->njava > f->cfg.depth ||
        rp_kind_record_size(r, h->nnative, h->njava) != len) {
        rp_losses_bad(1);
        return 0;
    }
    size_t flen = rp_sample_size(h->nnative, h->njava);
    struct rp_slot *s = record_slot(f, h);
    struct rp_sink sk = sink_of(f);
    if (r->seen)
        r->seen(&sk, s, h, flen);
    enum rp_sink_result res = !s ? RP_SINK_LOST : !f->w ? RP_SINK_LOST
                                : r->flush(&sk, s, h, flen);
    if (res == RP_SINK_LOST) {
        rp_losses_record(k, ki, !s ? RP_LOSS_GONE : !f->w ? RP_LOSS_NO_CHUNK
                                                         : RP_LOSS_NO_MEMORY);
        return 0;
    }
    f->written[ki]++;
    /* Names are polled for threads that ran since (rp_threadrec_poll_names). */
    if (res == RP_SINK_WRITTEN)
        s->sampled++;
    rp_stacks_count_status(h);
    return 0;
}

/* Drain one ring; a scribbled length word in it (never expected: ring.h) cost
 * the rest of the ring's records, counted as lost.bad_record. */
static void drain_ring(struct flusher *f, struct rp_ring *ring, void *scratch)
{
    uint64_t before = atomic_load_explicit(&ring->corrupt, memory_order_relaxed);
    rp_ring_drain(ring, on_record, f, scratch);
    rp_losses_bad(atomic_load_explicit(&ring->corrupt, memory_order_relaxed) - before);
}

/* The kinds' own rings (all, or those drained `again`), each with a scratch
 * buffer of its own size (a sampler's ring may be larger than ring=). */
static void drain_own(struct flusher *f, int again)
{
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    f->cur = NULL;
    for (size_t i = 0; i < n; i++) {
        struct rp_ring *ring = k[i]->ring ? k[i]->ring() : NULL;
        if (!ring || (again && !(k[i]->flags & RP_KIND_RING_AGAIN)))
            continue;
        if (!f->own_scratch[i] && !(f->own_scratch[i] = malloc(rp_ring_max_record(ring))))
            continue;                  /* (no memory: the ring fills, and counts) */
        drain_ring(f, ring, f->own_scratch[i]);
    }
}

/* Every slot's ring (`ending` 0), or the slots whose thread ended, drained once
 * more and finished: last thread record and CPU time, losses, release. */
static void drain_slots(struct flusher *f, int ending)
{
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        int st = atomic_load(&s->state);
        if (st == RP_SLOT_FREE || (ending && st != RP_SLOT_ENDED))
            continue;
        if (s->ring) {
            f->cur = s;
            drain_ring(f, s->ring, f->scratch);
            f->cur = NULL;
        }
        if (!ending)
            continue;
        rp_threadrec_end(f->w, s, f->now);
        if (f->w)
            rp_losses_slot(s, emit_counter, f);
        rp_threads_release(f->jni, s);
    }
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

/* The threads' CPU times and every ring's losses. @return the live threads;
 * *slots gets the slots. */
static uint32_t flush_threads(struct flusher *f, uint32_t *slots)
{
    rp_threadrec_poll_names(f->jvmti, f->jni);
    rp_threadrec_reset();             /* new names must reach thread records */
    uint32_t n = *slots = rp_threads_count(), live = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        rp_losses_slot(s, emit_counter, f);
        if (atomic_load(&s->state) == RP_SLOT_LIVE) {
            live++;
            rp_threadrec_cpu(f->w, s, f->now);
        }
    }
    size_t nk;
    const struct rp_kind *const *k = rp_kinds(&nk);
    for (size_t i = 0; i < nk; i++) {
        struct rp_ring *ring = k[i]->ring ? k[i]->ring() : NULL;
        if (ring && (k[i]->flags & RP_KIND_RING_LOSSES))
            rp_losses_ring(ring, f->own_seen[i], emit_counter, f);
    }
    return live;
}

/* The kinds' parts of the segment, place by place (kind.h): each kind's flush
 * hook, then its counters and gauges; the walk statuses at theirs. */
static void flush_kinds(struct flusher *f)
{
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    struct rp_sink sk = sink_of(f);
    for (unsigned place = 0; place < RP_KIND_PLACES; place++) {
        if (place == RP_KIND_PLACE_WALK_STATUS)
            rp_stacks_write_status(emit_counter, f);
        for (size_t i = 0; i < n; i++) {
            if (k[i]->place != place)
                continue;
            if (k[i]->flush)
                k[i]->flush(&sk);
            registered(f, rp_kind_group(k[i]));
        }
    }
}

/* The end of the segment: a flush request's rotation, or the segment. */
static void end_segment(struct flusher *f)
{
    if (f->rotate_path) {
        if (rp_recording_rotate(f->cfg.rec, f->rotate_path, PATH_MAX) != 0)
            f->rotate_rc = -1, f->rotate_errno = errno;
        f->rotate_path = NULL;        /* done; the writer is gone */
        f->w = NULL;
    } else if (f->w) {
        int ok = flush_segment(f) == 0;
        rp_losses_segment(rp_recording_dir(f->cfg.rec), ok, errno, f->now);
    }
}

static void flush_step(struct flusher *f)
{
    uint32_t slots, live = flush_threads(f, &slots);
    rp_losses_write(emit_counter, f);
    /* What failed allocations cost besides samples (docs/format.md): threads left
     * unsampled, frames named [unknown java method]. */
    registered(f, RP_COUNTERS_NOMEM);
    flush_kinds(f);
    registered(f, RP_COUNTERS_TELEMETRY);
    registered(f, RP_COUNTERS_WALK);
    /* With telemetry on, the agent's CPU is one of its gauges (telemetry.h). */
    if (!f->cfg.telemetry_ns)
        rp_chunk_gauge(f->w, RP_GAUGE_AGENT_CPU, f->now, rp_threads_agent_cpu_ns());
    rp_chunk_gauge(f->w, "agent.threads", f->now, live);
    rp_chunk_gauge(f->w, "agent.slots", f->now, slots);
    end_segment(f);
    rp_stacks_code_changed();
}

/* The totals and the recording's state for status, once per pass. */
static void publish(struct flusher *f)
{
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    for (size_t i = 0; i < n; i++)
        if (f->written[i]) {
            rp_counters_written(k[i]->engine.name, f->written[i]);
            f->written[i] = 0;
        }
    struct rp_recording_stats rs;
    rp_recording_stats(f->cfg.rec, &rs);
    rp_req_publish(&rs, f->w ? rp_chunk_writer_path(f->w) : "");
}

static void pass(struct flusher *f, int flush_now)
{
    f->now = rp_mono_ns();
    if (!ensure_writer(f))
        f->w = NULL;
    rp_threadrec_reset();
    /* Every ring first, then the slots whose thread ended (drained once more,
     * after it ended): a lock record names its owner's slot, which must not be
     * released before the records that name it are written. A sampler runs on
     * while the slots are drained: its ring is drained again before any ended
     * slot is released, so that only a sample pushed in the moment between
     * that drain and the release is lost (lost.<kind>_thread_gone). */
    drain_own(f, 0);
    drain_slots(f, 0);
    drain_own(f, 1);
    drain_slots(f, 1);
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    struct rp_sink sk = sink_of(f);
    for (size_t i = 0; i < n; i++)
        if (k[i]->pass)
            k[i]->pass(&sk);
    if (flush_now && f->w)
        flush_step(f);
    publish(f);
}

/* A flush request: drain every ring, write the counters, and close the chunk;
 * then the next chunks' header change it asks for. */
static void serve_request(struct flusher *f)
{
    char path[PATH_MAX] = "";
    f->rotate_rc = 0;
    f->rotate_errno = 0;
    f->rotate_path = path;
    pass(f, 1);                       /* its flush_step rotates, if it has a chunk */
    if (f->rotate_path && rp_recording_rotate(f->cfg.rec, path, sizeof path) != 0)
        f->rotate_rc = -1, f->rotate_errno = errno;
    f->rotate_path = NULL;
    f->w = NULL;                      /* the next pass opens the next chunk */
    /* After the rotation, so that what this pass drained, sampled before the
     * change, is in a chunk with the header before it too. */
    const char *key, *value;
    rp_req_meta(&key, &value);
    if (key[0] && rp_recording_set_meta(f->cfg.rec, key, value) != 0)
        rp_log("the next chunks' header could not take %s=%s: %s", key, value,
               strerror(errno));
    publish(f);
    rp_req_answer(f->rotate_rc, f->rotate_errno, path);
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

/* One pass of the loop, with what comes around it when it is not the last. */
static void loop_pass(struct flusher *f, uint64_t *next_flush, uint64_t *next_scan)
{
    uint64_t now = rp_mono_ns();
    int flush_now = now >= *next_flush;
    if (flush_now)
        *next_flush = now + f->cfg.flush_ns;
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
    if (f->cfg.async && now >= *next_scan) {
        *next_scan = now + SCAN_NS;
        rp_threads_scan();
    }
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
    enum rp_req_next next;
    while ((next = rp_req_wait(DRAIN_NS)) != RP_REQ_STOP) {
        if (next == RP_REQ_CALL)
            rp_req_serve_call();
        else if (next == RP_REQ_FLUSH)
            serve_request(f);
        else
            loop_pass(f, &next_flush, &next_scan);
    }
    /* Sampling has stopped: drain everything, write the last segment, close. */
    pass(f, 1);
    rp_req_closed(rp_recording_close(f->cfg.rec));
}

/* The counters and gauges of the flush stage's shared groups and of every kind,
 * in the order of registration within a group (counters.h); the walk's are the
 * lifecycle's to register (they are the signal handler's). */
static void register_counters(void)
{
    rp_threads_counters_register();
    rp_methods_counters_register();
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    for (size_t i = 0; i < n; i++)
        if (k[i]->counters)
            k[i]->counters(rp_kind_group(k[i]));
    rp_telemetry_counters_register();
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
    rp_req_set_dir(rp_recording_dir(cfg->rec));
    register_counters();
    rp_telemetry_init(jvmti, cfg->telemetry_ns);
    return rp_jthread_run(jvmti, jni, "ringprof-flusher", flusher_main, NULL,
                               JVMTI_THREAD_NORM_PRIORITY, err, errlen);
}
