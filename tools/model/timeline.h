/*
 * tools/model/timeline.h — the model behind `ringprof convert --format timeline`: what
 * each thread was doing over time, from the wall-clock samples, with the lock
 * waits, GC pauses and telemetry gauges of the same recordings.
 *
 * Unlike the other formats this one does not aggregate into a calling context
 * tree: it needs samples of several kinds (wall, lock, gc) and the gauges, in
 * time. So it reads its inputs itself, in one pass (rp_tl_load), keeping:
 *   - per thread (recording, os tid), its state spans: a wall sample covers
 *     [time - weight, time] of its thread (docs/format.md), and consecutive
 *     samples in one state that touch are merged, so an idle thread costs one
 *     span however long it sleeps: memory follows state changes, not samples;
 *   - the lock waits ([time, time + weight], thread, monitor class, owner) and
 *     GC pauses ([time, time + weight]);
 *   - the readings of the telemetry gauges of include/ringprof/events.h.
 * Times are CLOCK_REALTIME ns (start.wall_ns + time - start.mono_ns); a chunk
 * without that mapping keeps its monotonic times, which only line up with
 * other chunks of the same boot.
 *
 * The writers (out_timeline.c) then cut the time axis into columns
 * (rp_tl_columns): in each column a thread shows the state that covered most of
 * it, "no sample" competing like a state, so a column is blank only when the
 * thread was unseen for most of it.
 *
 * Not thread-safe; allocation failure exits (xalloc.h), as elsewhere in tools/.
 */
#ifndef RINGPROF_TOOLS_TIMELINE_H
#define RINGPROF_TOOLS_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "inputs.h"
#include "profile.h"
#include "ringprof/events.h"

/* A state index in columns: RP_TS_* (0..RP_TS_COUNT-1), or this for no sample. */
#define RP_TL_NONE RP_TS_COUNT

/* --sort */
enum rp_tl_sort { RP_TL_SORT_NAME = 0, RP_TL_SORT_BUSY, RP_TL_SORT_START };

/* What the command line asked of the timeline. */
struct rp_tl_options {
    unsigned width;        /* text: columns (--width; 0: 100)                      */
    size_t rows;           /* threads shown (--rows; 0: all), the rest summarised  */
    int rows_set;
    enum rp_tl_sort sort;
    int html;              /* --html: the page even on stdout or another extension */
};
#define RP_TL_DEFAULT_WIDTH 100
#define RP_TL_DEFAULT_ROWS 200

struct rp_tl_span {
    uint64_t t0, t1;       /* [t0, t1), ns                                          */
    uint8_t state;         /* RP_TS_*                                               */
};

struct rp_tl_thread {
    const char *name;      /* as every command shows it (rp_thread_display): the   */
                           /* first name, then a later one, "main (renamed        */
                           /* DestroyJavaVM)"; "" if never named (owned)          */
    struct rp_thread_names names;   /* its first and newest names (stream.h)    */
    uint64_t os_tid;
    uint32_t source;       /* index into rp_tl.sources                             */
    struct rp_tl_span *spans;
    size_t nspans, cap;
    uint64_t state_ns[RP_TS_COUNT];   /* time in each state, inside the range      */
    uint64_t first, last;  /* covered time, 0 when no span                          */
};

struct rp_tl_lock {
    uint64_t t0, t1;
    uint32_t thread;       /* index into rp_tl.threads                             */
    const char *klass;     /* monitor class (owned), "" unknown                    */
    const char *owner;     /* owner thread's name (owned), "" unknown               */
};

struct rp_tl_gc {
    uint64_t t0, t1;
    uint64_t id, heap_used;  /* 0: unknown                                          */
};

/* The telemetry shown, in order. */
enum {
    RP_TL_G_CPU_USER, RP_TL_G_CPU_SYS, RP_TL_G_RSS, RP_TL_G_HEAP_USED,
    RP_TL_G_HEAP_COMMITTED, RP_TL_G_GC_COUNT, RP_TL_G_GC_TIME, RP_TL_G_THREADS,
    RP_TL_G_THREADS_RUNNABLE, RP_TL_G_CLASSES, RP_TL_G_AGENT_CPU, RP_TL_G_COUNT
};

/* How a gauge is shown: its name in the chunk, a label, and the factor from
 * its value (a level) or its rate per second of wall time (a .total) to what
 * is printed in `unit`: CPU and GC time as % of one CPU (of wall time), sizes
 * in MiB, GC count per second, counts as they are. */
struct rp_tl_gauge_def {
    const char *name, *label, *unit;
    const char *col;        /* the text table's column heading                   */
    double scale;
    int total;              /* cumulative: its rate is shown (as the gauge's     */
                            /* name says: rp_gauge_is_total())                   */
};
extern const struct rp_tl_gauge_def rp_tl_gauges[RP_TL_G_COUNT];

struct rp_tl_point {
    uint64_t t;
    uint64_t v;
};

struct rp_tl_series {
    struct rp_tl_point *p;  /* sorted by t after rp_tl_load                          */
    size_t n, cap;
    int total;              /* cumulative: show the rate (rp_tl_gauge_def.total)    */
};

struct rp_tl {
    struct rp_tl_thread *threads;  size_t nthreads, cap_threads;
    struct rp_tl_lock *locks;      size_t nlocks, cap_locks;
    struct rp_tl_gc *gcs;          size_t ngcs, cap_gcs;
    struct rp_tl_series gauges[RP_TL_G_COUNT];
    char **sources;                size_t nsources;   /* recording keys         */
    uint64_t wall_samples, lock_samples, gc_samples, gauge_readings;
    uint64_t samples_time_filtered, samples_thread_filtered;
    uint64_t t0, t1;               /* the axis: everything kept, clipped to the  */
                                   /* --from/--to range; t0 == t1: empty         */
    uint64_t data_t1;              /* the end of what was kept (the axis's end    */
                                   /* but for an explicit --to)                   */
    int have_wall_kind;            /* a chunk defined kind wall (even if no sample */
                                   /* was kept)                                  */
    size_t files_read;
    void *b;                       /* private: building state                     */
};

/*
 * rp_tl_load: read every input into `tl` (zeroed by the caller). Samples and
 * readings outside [po->from_wall, po->to_wall) are dropped, wall samples and
 * lock waits cut to it; po->thread_re drops the threads whose name does not
 * match; reader problems go to po->diag. Every span, lock and pause is then
 * sorted, the spans merged and the axis set.
 */
void rp_tl_load(struct rp_tl *tl, const struct rp_inputs *in,
                const struct rp_prof_options *po);
void rp_tl_free(struct rp_tl *tl);

/*
 * rp_tl_columns: thread `th`'s state in each of `w` columns splitting the
 * axis [tl->t0, tl->t1) evenly: col[i] is the state (RP_TS_*) that covered
 * most of column i, or RP_TL_NONE when no sample did more than every state
 * (ties go to the lower state number, and a state beats "none").
 */
void rp_tl_columns(const struct rp_tl *tl, const struct rp_tl_thread *th, unsigned w,
                   uint8_t *col);

/*
 * rp_tl_gauge_columns: gauge g in each of `w` columns, in its unit (scale
 * applied): for a level, the time-weighted mean of the readings, each holding
 * until the next one; for a .total, its rate: the difference of the counter
 * (linearly interpolated between readings) across the column over the column's
 * time. Only the part of a column between the first reading and the end of the
 * data (tl->data_t1) counts: after the last reading, a level holds its value and
 * a rate its last interval's, since the agent's last reading comes up to one
 * telemetry period before the recording's last sample; a column with none of it
 * gets NAN.
 */
void rp_tl_gauge_columns(const struct rp_tl *tl, int g, unsigned w, double *out);

/* The rows to show, in --sort order: indexes into tl->threads. @return their
 * number (at most o->rows unless that is 0); *order is allocated (caller frees)
 * and holds every thread, the shown ones first. */
size_t rp_tl_order(const struct rp_tl *tl, const struct rp_tl_options *o,
                   uint32_t **order);

/* One letter a state for the text format ("RrNIBWPS?", ' ' for none). */
char rp_tl_letter(unsigned state);

#endif
