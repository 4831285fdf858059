/*
 * src/flush/sink.h — what an event kind's writer gets from the flusher to put its
 * records, counters and gauges into the chunk being written.
 *
 * The flusher owns the loop: it drains the rings, keeps the chunk writer and the
 * thread ids (slot → THREAD record), and hands each record to the writer of its
 * kind, rp_<kind>_flush (cpu.h, alloc.h, lock.h, wall.h), with a sink.
 * The kind's module owns the rest: decoding its record's tail, its chunk kind and
 * extra fields, its losses. Stack and class ids come from stacks.h. A module that
 * caches its chunk kind id keys it by `generation` (rp_sink_kind): ids are valid
 * in one chunk only.
 *
 * Counters and gauges that belong to no record (a snapshot's totals, a queue's
 * losses) go through `counter` and rp_sink_gauge; counters that a module keeps
 * as running totals are better registered once (counters.h), and the flusher
 * writes them at every flush.
 *
 * Threads: the flusher thread only, during a pass; a sink is valid for the call
 * it is passed to. Not async-signal-safe.
 */
#ifndef RINGPROF_SRC_SINK_H
#define RINGPROF_SRC_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <jni.h>

#include "ringprof/chunk.h"
#include "core/sample.h"
#include "flush/stacks.h"
#include "threads/threads.h"

struct rp_sink {
    struct rp_chunk_writer *w;  /* the chunk being written; NULL: none could be
                                   opened (a writer counts what it loses)       */
    uint64_t generation;        /* rp_recording_generation of w                  */
    uint64_t now;               /* CLOCK_MONOTONIC ns of this pass               */
    JNIEnv *jni;                /* the flusher's: it is attached to the JVM      */
    void *ctx;                  /* the flusher's, for the functions below        */
    /* The chunk thread id of slot `s`'s present occupant; 0 if it cannot be
     * written (no memory). w must not be NULL. */
    uint32_t (*thread_id)(void *ctx, struct rp_slot *s);
    /* Add `delta` to counter `name` in the chunk (and to the totals that status
     * reports). @return 0, or -1 if the chunk could not take it (keep it for the
     * next flush). w must not be NULL. */
    int (*counter)(void *ctx, const char *name, uint64_t delta);
};

/* What a kind's writer did with one record. */
enum rp_sink_result {
    RP_SINK_LOST = -1,          /* not written (no memory): the flusher counts it */
    RP_SINK_WRITTEN = 0,        /* written; the thread ran since its last record  */
    RP_SINK_IDLE = 1            /* written; the thread has not run since (a wall
                                   sample's repeat): its name cannot have changed */
};

/* A kind's writer: put record `h` of slot `s` (`flen` bytes of header and
 * frames, then the kind's tail) into the chunk. Called only with a chunk
 * (sk->w) and with `s` the record's own thread. */
typedef enum rp_sink_result (*rp_sink_flush_fn)(const struct rp_sink *sk, struct rp_slot *s,
                                                const struct rp_sample_hdr *h, size_t flen);

/* A chunk kind id, as a writer keeps it: valid in the chunk of `gen`. */
struct rp_sink_kind {
    uint32_t id;
    uint64_t gen;
};

/* The chunk kind id `k` caches, made with rp_chunk_kind when the chunk changed
 * or it is not made yet. @return the id, 0 on failure (tried again at the next
 * call). */
static inline uint32_t rp_sink_kind(const struct rp_sink *sk, struct rp_sink_kind *k,
                                    const char *name, const char *unit, uint64_t period,
                                    const char *const *extra, uint32_t nextra)
{
    if (k->gen != sk->generation)
        k->id = 0, k->gen = sk->generation;
    if (!k->id)
        k->id = rp_chunk_kind(sk->w, name, unit, period, extra, nextra);
    return k->id;
}

/* The chunk thread id of slot `s` and stack id of record `h` (`flen` bytes of
 * header and frames), the two ids every sample names. @return 1, or 0 if
 * either could not be made (no memory). */
static inline int rp_sink_ids(const struct rp_sink *sk, struct rp_slot *s,
                              const struct rp_sample_hdr *h, size_t flen, uint32_t *thread,
                              uint32_t *stack)
{
    *thread = sk->thread_id(sk->ctx, s);
    *stack = *thread ? rp_stacks_id(h, flen) : 0;
    return *stack != 0;
}

/* The chunk thread id of the thread a record names by slot (`slot1` = its slot
 * index + 1, 0: none) and that slot's generation when the record was taken (a
 * lock's owner, a parked-on lock's owner): 0 if none, or if the slot has been
 * freed or taken by another thread since, or no memory. */
static inline uint32_t rp_sink_slot_thread(const struct rp_sink *sk, uint32_t slot1,
                                           uint32_t gen)
{
    struct rp_slot *o = slot1 ? rp_threads_slot(slot1 - 1) : NULL;
    return o && atomic_load(&o->gen) == gen && atomic_load(&o->state) != RP_SLOT_FREE
           ? sk->thread_id(sk->ctx, o) : 0;
}

/* Gauge `name` = value at this pass's time. */
static inline void rp_sink_gauge(const struct rp_sink *sk, const char *name, uint64_t value)
{
    rp_chunk_gauge(sk->w, name, sk->now, value);
}

#endif
