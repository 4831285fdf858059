/*
 * src/kinds/alloc.h — allocation sampling, live-object tracking and GC pauses.
 *
 * Allocation samples. HotSpot samples allocations itself (JEP 331): with
 * SetHeapSamplingInterval(I) each thread draws the distance to its next sample
 * from an exponential distribution of mean I bytes, so sample points form a
 * Poisson process over the bytes a thread allocates, and the object that covers a
 * point is reported through the SampledObjectAlloc event, on the allocating
 * thread, with JNI and JVMTI usable. There the callback takes the stack
 * (GetStackTrace, up to `depth`), the class (classes.h: a per-class id kept in the
 * class object's JVMTI tag, so a class's signature is read once), the array length,
 * and pushes one record (sample.h, RP_SAMPLE_ALLOC) into the thread's own ring.
 * The CPU-timer signal is blocked for the callback's few microseconds: the
 * callback then owns the slot's frame buffer, and its push can never be nested
 * inside (or under) the handler's, so no CPU sample is dropped for nesting; a
 * timer that expires meanwhile is delivered the moment the mask is restored.
 *
 * The weight. An object of s bytes is sampled when at least one point falls in
 * its bytes: p(s) = 1 - exp(-s / I). Each sample therefore stands for s / p(s)
 * bytes and 1 / p(s) objects of its kind (the Horvitz–Thompson estimator, also
 * used by tcmalloc and Go's heap profiles), which is unbiased for every size:
 * small objects (s << I) weigh about I bytes each, and an object larger than
 * several intervals weighs about its own size. docs/agent.md derives it.
 *
 * Live objects (live=on). Each sampled object gets a live-table entry and a
 * JVMTI tag naming that entry (index and generation). A tag is not a reference:
 * the profiler never keeps an object alive. When the object is collected, HotSpot
 * posts ObjectFree with the tag, which marks the entry dead (one CAS, no lock).
 * At every flush the flusher writes the entries still alive (rp_alloc_live_*)
 * and recycles the dead ones. Entries are a fixed array (livemax) with a
 * lock-free free list; when it is empty a sampled object is not tracked, and
 * counted ("live.untracked").
 *
 *   entry states:  FREE --pop (callback)--> PENDING --record seen (flusher)--> LIVE
 *                  PENDING/LIVE --ObjectFree--> DEAD --sweep (flusher)--> FREE
 *                  PENDING --push failed (callback)--> FREE
 *   The state and the generation share one 64-bit word, so ObjectFree for an
 *   entry's previous occupant (a stale tag) can never kill the present one.
 *
 * GC pauses. GarbageCollectionStart/Finish (stop-the-world pauses) timestamp the
 * pause and count GCs (an object's age in GCs); the finish callback may not call
 * JNI or JVMTI, so it queues (start, end, id) for the flusher, wakes it, and the
 * flusher reads the heap's use right away (Runtime.totalMemory/freeMemory).
 *
 * Threads: the callbacks run on application threads, the VM thread or the
 * service thread and never block; everything else is the flusher's or the
 * agent lifecycle's.
 */
#ifndef RINGPROF_SRC_ALLOC_H
#define RINGPROF_SRC_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <jvmti.h>

#include "core/counters.h"
#include "flush/sink.h"

/* What an allocation record (RP_SAMPLE_ALLOC) carries after its frames; the
 * header's weight is the estimated bytes. */
struct rp_alloc_tail {
    uint64_t size;          /* the sampled object's size, bytes                    */
    uint64_t objects;       /* estimated objects the sample stands for             */
    uint32_t klass;         /* classes.h class id (rp_class_name)                  */
    uint32_t length1;       /* array length + 1; 0 for a non-array object          */
    uint32_t live;          /* live-table entry + 1, 0: not tracked                */
    uint32_t live_gen;      /* that entry's generation                             */
};

/* Load time (the descriptor's hooks, flush/kind.h): allocation sampling's
 * capabilities are asked for whatever alloc= says (`ctl start alloc` may come
 * later), and given up first when the JVM refuses; init allocates the live
 * table and warns (once, clearly) about what cannot be had — e.g. another agent
 * holds the sampled-allocation capability. Never fails the load: without the
 * capability the agent samples CPU only. */

/* Shutdown: disable sampling and wait (bounded) for callbacks in progress. */
void rp_alloc_stop(unsigned wait_ms);

/* The control socket: change the interval (bytes > 0), or switch sampling on or
 * off. @return 0, or -1 with one sentence in err. Any thread attached to the JVM
 * or not (JVMTI allows these calls from any thread in the live phase). */
int rp_alloc_set_interval(uint64_t bytes, char *err, size_t errlen);
int rp_alloc_switch(int on, char *err, size_t errlen);

/* What the agent can do and does: available (capability held), on, the
 * interval asked for (option alloc or `ctl set alloc`), the interval in force
 * (raised above it by the rate limit), and the rate limit. */
struct rp_alloc_state {
    int available, on, live;
    uint64_t interval;          /* asked for                                      */
    uint64_t effective;         /* in force                                       */
    uint64_t rate_max;          /* samples a second; 0: no limit                  */
};
void rp_alloc_state(struct rp_alloc_state *out);

/* ------------------------------------------------------ the flusher's side -- */

/*
 * rp_alloc_adapt: the rate limit (allocrate). Called by the flusher every pass;
 * once a second (after 100 ms when the rate is four times the limit) it compares
 * the samples taken with `rate_max` and, when the rate is over 1.25 x the limit
 * (or under half of it while the interval is raised), sets the interval that would have given the limit, never below the
 * interval asked for nor above 1 GiB. Weights stay unbiased across a change:
 * each sample is weighed with the interval its distance was drawn with (the one
 * in force at the thread's previous sample). Flusher only (JVMTI calls).
 */
void rp_alloc_adapt(uint64_t now_ns);

/* GCs finished since start. */
uint64_t rp_alloc_gc_count(void);

struct rp_gc_pause {
    uint64_t start, end;    /* monotonic ns                                       */
    uint64_t id;            /* 1, 2, ...                                          */
};
/* Take the oldest queued pause. @return 1, or 0 if none. Flusher only. */
int rp_alloc_gc_pop(struct rp_gc_pause *out);

/* Counts since start, for counters and status. */
struct rp_alloc_stats {
    uint64_t samples;           /* callbacks that pushed a record                 */
    uint64_t no_thread;         /* sampled on a thread with no slot or ring       */
    uint64_t agent_thread;      /* sampled on one of the agent's own threads      */
    uint64_t ring_dropped;      /* the push failed (counted by the ring too)      */
    uint64_t untracked;         /* live=on: the live table was full               */
    uint64_t tag_failed;        /* SetTag refused                                 */
    uint64_t gc_lost;           /* pauses not queued (queue full)                 */
    uint64_t freed;             /* ObjectFree events for tracked objects          */
    uint64_t callback_ns;       /* time spent in the callback, all threads        */
    uint64_t adaptations;       /* interval changes by the rate limit             */
    uint64_t first_skipped;     /* threads' first samples, not kept (alloc.c)     */
    uint64_t no_memory;         /* lost: no memory for the thread's frame buffer  */
};
void rp_alloc_stats(struct rp_alloc_stats *out);

/* One tracked object, as the flusher sees it. `stack`, `thread` and
 * `thread_chunk` are the flusher's own (set with rp_alloc_live_adopt); the other
 * fields are the callback's. */
struct rp_live_obj {
    uint64_t time;              /* allocation, monotonic ns                       */
    uint64_t gcs;               /* rp_alloc_gc_count() at allocation              */
    uint64_t size, weight, objects;
    uint32_t klass, length1;
    uint32_t slot, slot_gen;    /* the allocating thread's slot                   */
    void *stack;
    uint32_t thread;            /* its chunk thread id, valid in chunk ...        */
    uint64_t thread_chunk;      /* ... generation thread_chunk                    */
};

/* The flusher has read the record of entry `live` (1-based) / `gen`: the entry
 * becomes LIVE with this stack and chunk thread id. @return 0, or -1 if the
 * entry is no longer that object (it died before its record was read, or the tag
 * is stale): the caller keeps its stack. A dead entry is released here. */
int rp_alloc_live_adopt(uint32_t live, uint32_t gen, void *stack, uint32_t thread,
                        uint64_t thread_chunk);

/* Before a snapshot: have the JVM post the ObjectFree events it still holds.
 * HotSpot (JDK 16 and later) posts them lazily, from its service thread, some
 * time after the GC that freed the objects; setting the event's mode posts the
 * pending ones first (on the VM thread, to this module's callback), so that the
 * snapshot that follows holds no object a finished GC freed. ObjectFree stays
 * enabled: it is only ever enabled. No-op without live=on, or outside the live
 * phase. Flusher thread (attached to the JVM), holding no lock of this module. */
void rp_alloc_live_settle(void);

/* The flush's sweep: call `live_fn` for every LIVE entry and `dead_fn` for every
 * DEAD one before it is freed (to drop its stack). Flusher only. */
void rp_alloc_live_sweep(void (*live_fn)(void *arg, const struct rp_live_obj *o),
                         void (*dead_fn)(void *arg, void *stack), void *arg);

/* ------------------------------------- the kinds' writers (alloc_write.c) -- */

/* An allocation record was drained (sink.h; sk->w may be NULL, `s` is NULL when
 * the record's thread has gone): a tracked object (live=on) becomes LIVE with
 * the record's stack whether or not the record can be written, so that it is in
 * the snapshots for as long as it lives. Before rp_alloc_flush. */
void rp_alloc_seen(const struct rp_sink *sk, struct rp_slot *s,
                   const struct rp_sample_hdr *h, size_t flen);
/* The alloc kind's writer (sink.h's rp_sink_flush_fn). */
enum rp_sink_result rp_alloc_flush(const struct rp_sink *sk, struct rp_slot *s,
                                   const struct rp_sample_hdr *h, size_t flen);
/* At every flush (live=on): the snapshot of the tracked objects still alive, in
 * kind live, with the gauges live.objects and live.bytes; recycles dead entries
 * (also without a chunk kind, counting what could not be written). */
void rp_live_flush(const struct rp_sink *sk);
/* Every pass: the GC pauses queued since the last, in kind gc (sk->w may be
 * NULL: they are counted as lost.gc_pause). */
void rp_gc_flush(const struct rp_sink *sk);
/* Register the writers' counters (lost.gc_pause, lost.live_snapshot,
 * live.no_stack) in group `g`, with the kind's others (its descriptor's
 * counters hook). */
void rp_alloc_write_register(enum rp_counter_group g);

/* The alloc kind (and its live and gc chunk kinds): its descriptor (flush/kind.h), which agent.c lists. */
struct rp_kind;
extern const struct rp_kind rp_kind_alloc;

#endif
