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
 * gauges, the ring of its own if it has one; and its load-time side: whether
 * its records need the threads' rings, the JVMTI capabilities it asks for and
 * how soon it gives them up when the JVM refuses, its event callbacks, what it
 * learns of each thread that registers. The agent's lifecycle lists the kinds
 * at load (rp_kinds_set, which also sets the engine table) and asks them through
 * the rp_kinds_* calls below; from then on the flusher, the counter
 * registration, `status` and `set` loop over the list and include no kind's
 * header.
 *
 * The list's order is the engine table's (cpu first: the order of the control
 * protocol's kind bits and of the status reply) and the order in which the
 * flusher drains the kinds' own rings and runs their pass hooks. Within a
 * segment, each kind's part (its flush hook, then its counters and gauges) sits
 * at its `place` (below): the places are the segment's layout, fixed so that a
 * chunk's bytes do not depend on the list.
 *
 * Threads: rp_kinds_set and the load-time calls at load, before the flusher
 * starts; the rest from any thread once set (the list does not change). The
 * flusher's hooks run on the flusher thread, with a sink valid for the call;
 * the thread hook on the thread that registers (or adopts) a Java thread.
 */
#ifndef RINGPROF_SRC_KIND_H
#define RINGPROF_SRC_KIND_H

#include <stddef.h>
#include <stdint.h>
#include <jvmti.h>

#include "ringprof/ring.h"
#include "core/counters.h"
#include "core/engine.h"
#include "core/sample.h"
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
    /* Bytes its records carry after their frames (the kind's tail struct,
     * declared in its header); 0: none. */
    uint32_t tail;
};

/* Bytes of a whole record of entry `r` with these frame counts. */
static inline uint64_t rp_kind_record_size(const struct rp_kind_record *r, uint64_t nnative,
                                           uint64_t njava)
{
    return rp_sample_size(nnative, njava) + r->tail;
}

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

/* What the kinds' load-time hooks get: agent.c's load, before anything of ours
 * runs on another thread. */
struct rp_kind_load {
    jvmtiEnv *jvmti;
    const struct rp_options *opt;   /* the parsed options                         */
    int rings;                      /* the threads have rings (rp_kinds_rings)    */
};

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

    /* Load: whether, with these options, its records go to the threads' own
     * rings. The threads get rings when any kind says so; without, a kind that
     * pushes into them cannot be started later. NULL: no. */
    int (*rings_wanted)(const struct rp_options *opt);
    /* Load, before AddCapabilities: the JVMTI capabilities it asks for, from
     * those the JVM offers (`pot`), set in `want` (each field it asks for gets
     * pot's value; the others are left as they are). NULL: none. */
    void (*capabilities)(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                         jvmtiCapabilities *want);
    /* How long it keeps its capabilities when the JVM refuses what was asked
     * (another agent holds one): the kinds' are given up one kind at a time, the
     * lowest first (on a tie, the later in the list first), until the JVM grants
     * the rest (rp_kinds_capabilities); a capability two kinds ask for stays
     * while either is kept. Load never fails for a kind's. */
    unsigned caps_keep;
    /* Load, after AddCapabilities (`got`: what the environment now holds): take
     * its configuration, say once what cannot be had, add its JVMTI callbacks to
     * `cb`. Never fails the load. NULL: none. */
    void (*init)(const struct rp_kind_load *ld, const jvmtiCapabilities *got,
                 jvmtiEventCallbacks *cb);
    /* A Java thread was registered in slot `s` (ThreadStart, adoption, the
     * VMInit thread): `jni` is the caller's env, `thread` the
     * java.lang.Thread. NULL: none. Any Java thread; never blocks. */
    void (*thread_start)(struct rp_slot *s, JNIEnv *jni, jobject thread);
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

/* ------------------------------------------- load time (agent.c's load) -- */

/* Whether the threads get rings: some kind's rings_wanted says so. */
int rp_kinds_rings(const struct rp_options *opt);

/* The capability sets load asks AddCapabilities for, in turn until one is
 * granted: tries[0] is `base` with every kind's capabilities, each next one
 * gives up one more kind's (caps_keep), the last is `base` alone. Each kind's
 * capabilities hook is called once. `tries` holds RP_ENGINES_MAX + 1 sets.
 * @return how many sets (1 + the kinds that ask for capabilities). */
size_t rp_kinds_capabilities(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                             const jvmtiCapabilities *base, jvmtiCapabilities *tries);

/* Every kind's init hook, in list order. */
void rp_kinds_init(const struct rp_kind_load *ld, const jvmtiCapabilities *got,
                   jvmtiEventCallbacks *cb);

/* Every kind's thread_start hook, in list order (`s` NULL: none is called). */
void rp_kinds_thread_start(struct rp_slot *s, JNIEnv *jni, jobject thread);

#endif
