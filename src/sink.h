/*
 * src/sink.h — what an event kind's writer needs from the flusher to put one of
 * its records into the chunk being written.
 *
 * The flusher owns the chunk writer and the per-chunk id caches (threads, stacks);
 * a kind's module owns the decoding of its record tail and the chunk kind it
 * writes. For each record of that kind the flusher calls the module's
 * rp_<kind>_flush with a sink. Chunk ids (thread, stack, kind) are valid only in
 * the chunk of `generation`: a module that caches its kind id compares the
 * generation it was made in.
 *
 * Threads: the flusher thread only, during a pass; a sink is valid for the one
 * call it is passed to. Not async-signal-safe.
 */
#ifndef RINGPROF_SRC_SINK_H
#define RINGPROF_SRC_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/chunk.h"
#include "sample.h"

struct rp_slot;

struct rp_sink {
    struct rp_chunk_writer *w;  /* the chunk being written (not NULL)              */
    uint64_t generation;        /* rp_recording_generation of w                     */
    void *ctx;                  /* the flusher's, for the functions below           */
    /* The chunk thread id of slot `s`'s present occupant; 0 if it cannot be
     * written (no memory). */
    uint32_t (*thread_id)(void *ctx, struct rp_slot *s);
    /* The chunk stack id of the frames of record `h` (`len` bytes of header and
     * frames); 0 if it cannot be written. */
    uint32_t (*stack_id)(void *ctx, const struct rp_sample_hdr *h, size_t len);
};

/* The chunk kind id `*id` caches for `gen`, made with rp_chunk_kind when the
 * chunk changed or it is not made yet. @return the id, 0 on failure (tried again
 * at the next call). */
static inline uint32_t rp_sink_kind(const struct rp_sink *sk, uint32_t *id, uint64_t *gen,
                                    const char *name, const char *unit, uint64_t period,
                                    const char *const *extra, uint32_t nextra)
{
    if (*gen != sk->generation)
        *id = 0, *gen = sk->generation;
    if (!*id)
        *id = rp_chunk_kind(sk->w, name, unit, period, extra, nextra);
    return *id;
}

#endif
