/*
 * src/core/counters.h — the counter registry: the counters each module keeps, written
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
 * Gauges work the same way without baselines: a module registers a function
 * that reads its gauges' present values (a variable number: a gauge may be
 * left out while it means nothing, e.g. the allocation gauges without the
 * capability), and rp_gauges_write hands them to an emit function.
 *
 * The totals. Every counter that reaches a chunk, registered or not (the
 * flusher's losses, the walk statuses), is also added to a table of totals by
 * name (rp_counters_tally), and the samples written to another, by chunk
 * kind (rp_counters_written): the status reply reads both (rp_counters_totals), so
 * status and files agree.
 *
 * Threads: rp_counters_register and rp_gauges_register at agent start, before
 * the flusher runs (not concurrently with the writes); rp_counters_write and
 * rp_gauges_write on the flusher thread only, and the read functions run there.
 * rp_counters_tally and rp_counters_written from the flusher thread,
 * rp_counters_totals from any thread (a mutex). Nothing here allocates.
 */
#ifndef RINGPROF_SRC_COUNTERS_H
#define RINGPROF_SRC_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

/* Where in a segment a group's counters go (the flusher's order): the shared
 * no-memory counters, then each kind's at its place (flush/kind.h: group
 * RP_COUNTERS_KINDS + the kind's place), then telemetry's and the walk's. */
#define RP_COUNTER_KIND_PLACES 8
enum rp_counter_group {
    RP_COUNTERS_NOMEM,      /* threads.no_memory, methods.*                      */
    RP_COUNTERS_KINDS,      /* + a kind's place: that kind's                     */
    RP_COUNTERS_TELEMETRY = RP_COUNTERS_KINDS + RP_COUNTER_KIND_PLACES,
    RP_COUNTERS_WALK,       /* walk.* (stackwalk.h)                              */
    RP_COUNTER_GROUPS
};

/* Fill values[0..n) with the set's present cumulative values, in the order of
 * its names. Called on the flusher thread. */
typedef void (*rp_counters_read_fn)(uint64_t *values);

/* The most counters the registry holds, all sets together. */
#define RP_COUNTERS_MAX 96

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

/* ------------------------------------------------------------------ gauges -- */

struct rp_gauge_value {
    const char *name;               /* static storage                              */
    uint64_t value;
};

/* Fill out[0..max) with the module's gauges now. @return how many. */
typedef size_t (*rp_gauges_read_fn)(struct rp_gauge_value *out, size_t max);

/* The most gauges one read function may return. */
#define RP_GAUGES_READ_MAX 8

/* rp_gauges_register: add a read function to `group` (the same group order as
 * the counters': a group's gauges follow its counters). Registering the same
 * function again is a no-op. @return 0, or -1 if the registry is full. */
int rp_gauges_register(enum rp_counter_group group, rp_gauges_read_fn read);

/* rp_gauges_write: emit(ctx, name, value) for each gauge of `group`'s
 * functions, in registration order. Flusher thread only. */
void rp_gauges_write(enum rp_counter_group group, rp_counters_emit_fn emit, void *ctx);

/* ------------------------------------------------------------------ totals -- */

/* Add `v` to the total of counter `name` (it reached a chunk). Names are kept
 * up to RP_COUNTERS_TOTALS_MAX distinct ones; a name beyond is left out of the
 * totals (never out of the chunks). */
#define RP_COUNTERS_TOTALS_MAX 64
void rp_counters_tally(const char *name, uint64_t v);

/* Add `n` to the samples written of chunk kind `kind` (events.h: RP_KIND_*),
 * for status' "samples". At most RP_COUNTERS_WRITTEN_MAX kinds. */
#define RP_COUNTERS_WRITTEN_MAX 16
void rp_counters_written(const char *kind, uint64_t n);

struct rp_counter_total {
    char name[48];
    uint64_t total;
};
struct rp_counter_totals {
    uint32_t nwritten;
    struct rp_counter_total written[RP_COUNTERS_WRITTEN_MAX];  /* by chunk kind    */
    uint32_t n;
    struct rp_counter_total counters[RP_COUNTERS_TOTALS_MAX];  /* by counter name  */
};
/* The samples of chunk kind `kind` among the totals `t` (0: none written). */
uint64_t rp_counter_totals_written(const struct rp_counter_totals *t, const char *kind);
/* A copy of the totals. Any thread. */
void rp_counters_totals(struct rp_counter_totals *out);

#endif
