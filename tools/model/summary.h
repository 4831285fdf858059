/*
 * tools/model/summary.h — the model of `ringprof summary`: what a recording holds,
 * read from its chunks in one streaming pass, with no output in it
 * (outputs/out_summary.h prints it).
 *
 * A recording is the chunks that share a recording.id (without one: a pid and a
 * host); several JVMs may be merged on one command line, so the model is a list
 * of recordings in the order their first chunk was read. Each holds its
 * processes' metadata, its time range, samples and weight per event kind, the
 * counters summed over segments (lost.* among them), the threads with their
 * samples per kind and CPU time, every chunk's integrity (reader statistics,
 * whether a writer still holds it, its options), and the figures of the kinds
 * that have their own lines: allocation, GC and live objects, wall-clock and
 * lock samples, telemetry gauges.
 *
 * Every chunk is read through the recording stream (stream.h): its clock, its
 * recording, its kinds and their extras, its threads and the rule of their
 * names. Memory is proportional to threads, chunks, kinds, counters and monitor
 * classes, never to samples; each is found through a hash table (idmap.h,
 * strtab.h), as a file decides how many it holds. Single-threaded; allocation
 * failure exits (xalloc.h).
 */
#ifndef RINGPROF_TOOLS_SUMMARY_H
#define RINGPROF_TOOLS_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "inputs.h"
#include "stream.h"
#include "strtab.h"

#include "ringprof/events.h"
#include "ringprof/recorder.h"

/* A count and a sum under a name (a kind with its unit, a counter, a monitor
 * class). */
struct rp_sum_total {
    char *name, *unit;
    uint64_t count, sum;
};

/* Totals by name, in first-seen order (until rp_summary_rank sorts the monitors). */
struct rp_sum_totals {
    struct rp_sum_total *t;
    size_t n, cap;
    struct rp_strtab names;   /* name -> row, while the rows are in first-seen order */
};

/* The thread table's sample columns, in their order: the agent's kinds with a
 * thread (docs/format.md), then every other kind together. A thread's live
 * column counts its objects in the recording's last snapshot, never the sum over
 * snapshots (each holds the objects alive at its instant). */
enum { RP_SUM_CPU, RP_SUM_ALLOC, RP_SUM_LIVE, RP_SUM_WALL, RP_SUM_LOCK, RP_SUM_OTHER,
       RP_SUM_COLUMNS };

/* The columns' names, as the table heads them ("other" for RP_SUM_OTHER). */
extern const char *const rp_sum_column_names[RP_SUM_COLUMNS];

struct rp_sum_thread {
    uint64_t os_tid;
    /* Its name at its first sample (before it: the newest; "?" when no record
     * named it), then the stream's rule (rp_thread_names_see). */
    struct rp_thread_names names;
    int sampled;
    uint64_t samples[RP_SUM_COLUMNS];
    uint64_t live_time;       /* the snapshot instant samples[RP_SUM_LIVE] counts */
    uint64_t weight_ns, cpu_ns;
    int java, ended;
};

struct rp_sum_chunk {
    char *path;
    struct rp_reader_stats st;
    uint64_t samples, bytes;
    int being_written;        /* a live writer holds it (rp_reader_being_written) */
    char *seq;                /* its chunk.seq, or NULL                           */
    uint32_t options;         /* its options as shown, in options_seen            */
};

/* Allocation, GC and live-object figures (kinds alloc, gc, live; the live.*
 * gauges): sums and extremes only, so memory stays independent of samples. */
struct rp_sum_heap {
    uint64_t alloc_samples, alloc_bytes, alloc_objects;
    uint64_t gcs, pause_total, pause_max, gc_id_min, gc_id_max;
    uint64_t last_gc_wall, heap_used_last, heap_used_max, heap_committed_last;
    uint64_t snapshots, last_snap_wall, last_snap_objects, last_snap_bytes;
    /* The live samples of the latest snapshot instant, split by age_gcs: the
     * objects that survived a GC, and those younger than the last one. */
    uint64_t live_wall, live_old, live_old_bytes, live_young, live_young_bytes;
    int live_aged;
};

/* Wall-clock and lock samples (kinds wall and lock, include/ringprof/events.h). */
struct rp_sum_waits {
    uint64_t wall_samples, wall_ns, repeats;
    uint64_t state_samples[RP_TS_COUNT], state_ns[RP_TS_COUNT];
    uint64_t lock_samples, lock_ns;
    struct rp_sum_totals monitors;   /* by class: count, ns; ranked by ns */
};

/* The telemetry gauges summary reads (events.h, RP_GAUGE_*), in this order. */
enum {
    RP_SUM_G_CPU_USER, RP_SUM_G_CPU_SYS, RP_SUM_G_RSS, RP_SUM_G_HEAP_USED,
    RP_SUM_G_HEAP_COMMITTED, RP_SUM_G_GC_COUNT, RP_SUM_G_GC_TIME, RP_SUM_G_THREADS,
    RP_SUM_G_THREADS_RUNNABLE, RP_SUM_G_CLASSES, RP_SUM_G_AGENT_CPU, RP_SUM_GAUGES
};

/* One telemetry gauge: its readings' extremes in time (for the rate of a
 * ".total") and their sum and maximum (for a level). Times are wall-clock ns when
 * the chunk maps its clock, else monotonic. */
struct rp_sum_gauge {
    uint64_t n, sum, max;
    uint64_t t_first, v_first, t_last, v_last;
};

struct rp_sum_recording {
    char *id, *pid, *host, *jvm, *producer;   /* "?" where the chunks do not say */
    struct rp_strtab options_seen;   /* the chunks' options as shown              */
    uint64_t live_time;              /* the latest live snapshot's instant         */
    uint64_t wall_first, wall_last;  /* of events, CLOCK_REALTIME ns; 0: none      */
    struct rp_sum_heap heap;
    struct rp_sum_waits waits;
    struct rp_sum_gauge gauges[RP_SUM_GAUGES];
    struct rp_sum_totals kinds, counters;
    struct rp_sum_thread *threads;
    size_t nthreads, cap_threads;
    struct rp_idmap thread_of_tid;   /* os tid -> index into threads, until ranked */
    struct rp_sum_chunk *chunks;
    size_t nchunks, cap_chunks;
};

/* The recordings read so far, in the order of the stream's recordings (a
 * recording is the stream's recording key, stream.h). A zeroed struct is
 * empty. */
struct rp_summary {
    struct rp_sum_recording *recs;
    size_t nrecs, cap;
    struct rp_stream st;      /* the chunk's clock, recording, kinds, threads   */
};

/* Read the chunk file at `path` into s (its recording's figures, a row for the
 * chunk); the reader's problems go to rp_diag_print with `diag`. A file that is
 * not a readable chunk adds nothing. */
void rp_summary_read(struct rp_summary *s, const char *path, struct rp_diag_counts *diag);

/* After the last chunk: each recording's threads ranked by their columns in
 * column order (cpu first), then CPU time; its monitors by wait, then name.
 * thread_of_tid no longer applies: read nothing after this. */
void rp_summary_rank(struct rp_summary *s);

/* Thread th's figure in column c as the table shows it: the live column counts
 * only when it is of the recording's latest snapshot. */
uint64_t rp_sum_thread_samples(const struct rp_sum_recording *rec,
                               const struct rp_sum_thread *th, int c);

/* Whether counter `name` counts records lost (RP_COUNTER_LOST_PREFIX). */
int rp_sum_is_loss(const char *name);

/* The sum of counter `name` over the recording's segments; 0 when it has none. */
uint64_t rp_sum_counter(const struct rp_sum_recording *rec, const char *name);

/* The rate of a cumulative gauge per second of its time span; -1 when it has
 * fewer than two readings or went backwards. */
double rp_sum_gauge_rate(const struct rp_sum_gauge *g);

/* The mean of a gauge's readings; 0 without any. */
double rp_sum_gauge_mean(const struct rp_sum_gauge *g);

/* Release everything s holds and empty it. */
void rp_summary_free(struct rp_summary *s);

#endif
