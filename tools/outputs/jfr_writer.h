/*
 * tools/outputs/jfr_writer.h — the state of `convert --format jfr` (out_jfr.c)
 * and the constant pools it fills (jfr_pools.c); for those two files only.
 *
 * out_jfr.c turns each sample, gauge, counter and chunk the profile builder
 * reads into events (as the comment at its top maps them) through
 * jfr_ev_begin/jfr_ev_end; the events name threads, stacks, classes and live
 * objects by pool ids, which jfr_pools.c hands out as they are first used and
 * writes once, in the checkpoint (jfr_checkpoint), after the last event. Both
 * write through struct jfr's buffer, drained to the body every FLUSH_AT bytes,
 * so memory is the pools, never the events.
 */
#ifndef RINGPROF_TOOLS_JFR_WRITER_H
#define RINGPROF_TOOLS_JFR_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include "jfr.h"
#include "model/profile.h"
#include "model/stream.h"
#include "model/strtab.h"
#include "ringprof/events.h"

#define FLUSH_AT (1u << 20)    /* write pending events out at this many bytes */

/* A chunk's THREAD id: its output thread (0: not yet) and the time of the
 * record it was last refreshed from (the reader's rp_thread_info.time), so the
 * name is compared again only after a new record. */
struct thr_map {
    uint32_t out;
    uint64_t seen;
};

/* A thread of the output: (recording, os_tid), or a virtual thread:
 * (recording, its Java id), whatever carriers it ran on (JFR has no carrier). */
struct jthread {
    uint64_t os_tid, java_tid;
    uint32_t src;               /* its recording: index in rp_profile.sources    */
    struct rp_thread_names names;   /* first name seen; the newest (stream.h)    */
    int java;
    int virtual;
    uint64_t cpu, cpu_t;        /* its newest CPU reading and when (wall ns)     */
};

/* The Java thread gauges jdk.JavaThreadStatistics is made of, in its order. */
static const char *const JAVA_THREAD_GAUGES[] = {
    RP_GAUGE_THREADS_JAVA, RP_GAUGE_THREADS_DAEMON, RP_GAUGE_THREADS_STARTED,
    RP_GAUGE_THREADS_PEAK};
#define N_JAVA_THREAD_GAUGES (sizeof JAVA_THREAD_GAUGES / sizeof JAVA_THREAD_GAUGES[0])

/* Per recording: what the gauge-derived events need. */
struct source {
    int seen;                   /* a chunk of it was read                        */
    int cpus;                   /* host.cpus, 0: unknown                         */
    uint64_t rss_peak, heap_used;
    uint64_t user, sys, user_t, sys_t;     /* newest readings (wall ns)           */
    uint64_t p_user, p_sys, p_t;           /* the previous complete pair          */
    uint64_t jt[N_JAVA_THREAD_GAUGES], jt_t[N_JAVA_THREAD_GAUGES];
};

/* What the file keeps of the stack that ends at a CCT node (pool_stacks): the
 * profile's marker frames are not frames of the file, as every reader takes a
 * frame for a method. Whether a frame is left, and the markers by name for
 * ringprof's events. */
struct stack_note {
    uint32_t markers;           /* 1 + index in jfr.marks; 0: none               */
    uint8_t used, known, frames;
};

struct jfr {
    FILE *out, *body;           /* body: out, or the spool file                 */
    uint64_t body_start;        /* out's offset of the chunk header             */
    struct rp_jfr_buf ev, buf;  /* one event's body; pending output             */
    uint64_t written;           /* bytes of the chunk written to body           */
    int failed;                 /* a write failed (errno kept in err)           */
    int err;

    const struct rp_prof_options *po;
    uint64_t base;              /* wall ns of tick 0                             */
    int have_base;
    uint64_t tmin, tmax;        /* wall span of the events                       */

    /* the chunk being read */
    struct rp_stream *st;       /* the builder's (rp_prof_stream)               */
    uint64_t seg_wall;
    struct thr_map *thr_map; size_t n_thr_map;

    /* pools */
    struct rp_strtab thread_keys;        /* "src:tid" -> index                     */
    struct jthread *threads; size_t cap_threads;
    struct source *sources;  size_t cap_sources;
    struct rp_strtab sym, cls, pkg;       /* id = index + 1                         */
    uint32_t *cls_pkg;       size_t cap_cls_pkg;   /* package id, 0: none          */
    struct stack_note *notes; size_t n_notes;      /* by CCT node                  */
    struct rp_strtab marks;               /* stack_note.markers                     */
    uint8_t *old_used;       size_t n_old_used;    /* classes of live objects     */

    /* CPU read minus CPU the jdk.ExecutionSample events stand for, in ns of
     * carry_period: in [-period/2, period - period/2) (cpu_events). */
    int64_t carry;
    uint64_t carry_period;

    uint64_t counts[JFR_EVENT_MAX];
};

/* ------------------------------------------------------------ the body -- */

/* Append n bytes to the body (a failure is kept in j->failed, j->err). */
void jfr_put(struct jfr *j, const void *p, size_t n);
/* Write the pending output (j->buf) to the body. */
void jfr_drain(struct jfr *j);
/* Overwrite body bytes [at, at+n) (the checkpoint's size, the header). */
void jfr_patch(struct jfr *j, uint64_t at, const void *p, size_t n);
/* Wall ns as the file's ticks (ns since j->base). */
int64_t jfr_ticks(const struct jfr *j, uint64_t wall);
/* Begin an event of `type` at `wall` in j->ev: its type id and start time. */
void jfr_ev_begin(struct jfr *j, int type, uint64_t wall);
/* End it: framed into j->buf, counted, drained at FLUSH_AT. */
void jfr_ev_end(struct jfr *j, int type);

/* ----------------------------------------------------------- the pools -- */

/* A class as the profile names it (rp_prof_chunk_class): its pool id, 0 for
 * none. */
uint32_t jfr_java_class(struct jfr *j, const char *shown);
/* Recording i's gauge state, made on first use. */
struct source *jfr_source(struct jfr *j, uint32_t i);
/* The output thread of the chunk's THREAD record `id`; 0 for none. */
uint32_t jfr_thread(struct jfr *j, const struct rp_profile *p, uint32_t id);
/* The output thread of the chunk's VTHREAD record `id`; 0 for none. */
uint32_t jfr_vthread(struct jfr *j, const struct rp_profile *p, uint32_t id);
/* The stack trace id of a sample whose CCT leaf is `leaf`; 0: none. */
uint32_t jfr_stack(struct jfr *j, const struct rp_profile *p, uint32_t leaf);
/* What the file keeps of stack trace `stack` (jfr_stack; 0: none). */
struct stack_note jfr_stack_note(struct jfr *j, const struct rp_profile *p, uint32_t stack);
/* The markers of a note as a String field's value (NULL: none). */
const char *jfr_markers(const struct jfr *j, struct stack_note n);
/* A live object of class `cls` (0: unknown): its pool id, 0 for none. */
uint32_t jfr_old_object(struct jfr *j, uint32_t cls);

/* Write the checkpoint event (every pool). @return its offset in the chunk. */
uint64_t jfr_checkpoint(struct jfr *j, const struct rp_profile *p);

#endif
