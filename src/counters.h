/*
 * src/counters.h — the counter registry: the counters each module keeps, written
 * into the chunk as deltas by the flusher.
 *
 * A module owns a set of cumulative counters (its stats struct). It registers the
 * set once, before the flusher's first pass: the counters' names (the names the
 * chunk carries, docs/format.md) and a function that reads their present values
 * in the same order. The registry keeps, for each counter, the value last
 * written; rp_counters_write hands each counter's growth since then to an emit
 * function (the flusher's chunk writer) and remembers the new value only when the
 * emit succeeded, so a counter a chunk could not take is tried again next time.
 *
 * Sets are grouped (enum rp_counter_group) so that the flusher writes each group
 * at its place in the segment: the chunk's bytes (string table order) depend on
 * the order in which names first appear. Within a group, sets and counters are
 * written in the order they were registered.
 *
 * Threads: rp_counters_register at agent start, before the flusher runs (not
 * concurrently with rp_counters_write); rp_counters_write on the flusher thread
 * only. The read functions run on the flusher thread. Nothing here allocates.
 */
#ifndef RINGPROF_SRC_COUNTERS_H
#define RINGPROF_SRC_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

/* Where in a segment a group's counters go (the flusher's order). */
enum rp_counter_group {
    RP_COUNTERS_NOMEM,      /* threads.no_memory, methods.*                      */
    RP_COUNTERS_ALLOC,      /* alloc.*, live.* and their losses                  */
    RP_COUNTERS_WALL,       /* wall.*                                            */
    RP_COUNTERS_LOCK,       /* lock.* and its losses                             */
    RP_COUNTERS_TELEMETRY,  /* telemetry.*                                       */
    RP_COUNTERS_WALK,       /* walk.* (stackwalk.h)                              */
    RP_COUNTER_GROUPS
};

/* Fill values[0..n) with the set's present cumulative values, in the order of
 * its names. Called on the flusher thread. */
typedef void (*rp_counters_read_fn)(uint64_t *values);

/* The most counters the registry holds, all sets together. */
#define RP_COUNTERS_MAX 64

/*
 * rp_counters_register: add a set of `n` counters to `group`. `names` (static
 * storage) and `read` are kept. Registering the same `names` again is a no-op.
 * @return 0, or -1 if the registry is full (the set is not written).
 */
int rp_counters_register(enum rp_counter_group group, const char *const *names, size_t n,
                         rp_counters_read_fn read);

/* Emit one counter's growth; @return 0 if it reached the chunk. */
typedef int (*rp_counters_emit_fn)(void *ctx, const char *name, uint64_t delta);

/*
 * rp_counters_write: for each counter of `group` that grew since it was last
 * emitted, emit(ctx, name, growth); when emit returns 0 the counter's present
 * value becomes its baseline. Flusher thread only.
 */
void rp_counters_write(enum rp_counter_group group, rp_counters_emit_fn emit, void *ctx);

#endif
