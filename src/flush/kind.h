/*
 * src/flush/kind.h — an event kind as one registration: everything the flusher,
 * the counters and the control socket need of a kind, in one descriptor.
 *
 * Each module of src/kinds/ defines one `const struct rp_kind` (rp_kind_alloc,
 * rp_kind_lock, rp_kind_wall, and for the cpu kind rp_kind_cpu_async or
 * rp_kind_cpu_jvmti, whichever engine= resolved to). It holds the kind's engine
 * entry (engine.h: its name, control bit, lifecycle, switch, settings and status
 * sections) and its flusher side: the record types it pushes and their writers
 * (sink.h), what it writes once a pass and once a flush, its counters and
 * gauges, the ring of its own if it has one. The agent's lifecycle lists the
 * kinds at load (rp_kinds_set, which also sets the engine table); from then on
 * the flusher, the counter registration, `status` and `set` loop over the list
 * and include no kind's header.
 *
 * The list's order is the engine table's (cpu first: the order of the control
 * protocol's kind bits and of the status reply) and the order in which the
 * flusher drains the kinds' own rings and runs their pass hooks. Within a
 * segment, each kind's part (its flush hook, then its counters and gauges) sits
 * at its `place` (below): the places are the segment's layout, fixed so that a
 * chunk's bytes do not depend on the list.
 *
 * Threads: rp_kinds_set at load, before the flusher starts; the rest from any
 * thread once set (the list does not change). The hooks run on the flusher
 * thread, with a sink valid for the call.
 */
#ifndef RINGPROF_SRC_KIND_H
#define RINGPROF_SRC_KIND_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/ring.h"
#include "core/counters.h"
#include "core/engine.h"
#include "flush/sink.h"

/* One record type a kind pushes into a ring (sample.h), and its writer. */
struct rp_kind_record {
    uint32_t type;                  /* enum rp_sample_type; 0 ends the list         */
    rp_sink_flush_fn flush;         /* its writer (sink.h)                          */
    /* Called for every record of the type drained, before the writer, also when
     * it cannot be written (`s` NULL: its thread has gone; sk->w NULL: no chunk).
     * NULL: none. */
    void (*seen)(const struct rp_sink *sk, struct rp_slot *s, const struct rp_sample_hdr *h,
                 size_t flen);
    /* Who took the stack, for the walk-status counters (stacks.h):
     * <walk>.no_java_frames, <walk>.get_stack_trace_failed. */
    const char *walk;
};

#define RP_KIND_RECORDS_MAX 2

enum rp_kind_flags {
    /* Its records that reach no writer are counted apart from the others', as
     * lost.<name>_<reason> (the wall sampler's visits are not CPU samples). */
    RP_KIND_LOST_APART = 1u << 0,
    /* The flusher counts the losses of its own ring as the threads' rings' are
     * (lost.<reason>); without it the kind registers counters of its own. */
    RP_KIND_RING_LOSSES = 1u << 1,
    /* Its own ring is drained once more before the slots of threads that ended
     * are released: its sampler runs on while the threads' rings are drained. */
    RP_KIND_RING_AGAIN = 1u << 2
};

/* The places of the kinds' parts in a segment, after the thread records, the
 * losses and the shared no-memory counters: alloc 1, wall 2, then the
 * walk-status counters (RP_KIND_PLACE_WALK_STATUS), cpu 4, lock 5. A new kind
 * takes the next free place. */
#define RP_KIND_PLACE_WALK_STATUS 3
#define RP_KIND_PLACES RP_COUNTER_KIND_PLACES

struct rp_kind {
    struct rp_engine_entry engine;  /* engine.h: its name is the kind's           */
    struct rp_kind_record records[RP_KIND_RECORDS_MAX];
    unsigned flags;                 /* enum rp_kind_flags                          */
    unsigned place;                 /* 0 .. RP_KIND_PLACES - 1, see above          */
    /* A ring of its own (a sampler thread's), drained before the threads' rings;
     * NULL, or NULL returned: none (now). */
    struct rp_ring *(*ring)(void);
    /* The CPU time of a thread whose own clock cannot be read (no tid), as the
     * kind last read it; 0: unknown. NULL: none. Flusher thread. */
    uint64_t (*thread_cpu)(const struct rp_slot *s);
    /* The samples written for slot `s`'s present occupant, which status ranks
     * its threads by (the cpu kind's). NULL: not counted. Any thread. */
    uint64_t (*thread_samples)(const struct rp_slot *s);
    /* A new chunk: what must come first in it (the cpu kind's KIND record).
     * @return 0, or -1 (no memory: the pass writes nothing). */
    int (*chunk)(const struct rp_sink *sk);
    /* Every pass, after the rings are drained (sk->w may be NULL). */
    void (*pass)(const struct rp_sink *sk);
    /* Every flush, at its place, before its counters: what is written once per
     * segment (a snapshot, the waits in progress). */
    void (*flush)(const struct rp_sink *sk);
    /* Register its counters and gauges in group `g` (counters.h), at the
     * flusher's start. */
    void (*counters)(enum rp_counter_group g);
};

/* The counter group of a kind's place (counters.h). */
static inline enum rp_counter_group rp_kind_group(const struct rp_kind *k)
{
    return (enum rp_counter_group)(RP_COUNTERS_KINDS + k->place);
}

/* Set the list (copied; at most RP_ENGINES_MAX kinds) and the engine table from
 * it. Lifecycle thread, at load. */
void rp_kinds_set(const struct rp_kind *const *k, size_t n);

/* The list, in order; *n gets its length. Before rp_kinds_set: empty. */
const struct rp_kind *const *rp_kinds(size_t *n);

/* The record entry of record type `type`, its kind in *kind and the kind's
 * index in the list in *index; NULL for a type no kind pushes. */
const struct rp_kind_record *rp_kind_record(uint32_t type, const struct rp_kind **kind,
                                            size_t *index);

#endif
