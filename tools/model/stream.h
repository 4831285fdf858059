/*
 * tools/model/stream.h — the recording stream under every model: what a chunk
 * says about its events, derived once. Every model of the tool (the profile
 * builder, the timeline, the look-ahead scan, summary, locks, leaks) and every
 * output that follows the builder's samples (jfr, otlp) reads the same facts of
 * the chunk it is in:
 *
 *   the clock      its header's start.wall_ns and start.mono_ns, which turn an
 *                  event's monotonic time into CLOCK_REALTIME ns (rp_chunk_clock)
 *   the recording  the key that groups chunks into recordings (rp_recording_key)
 *                  and its index among the recordings the stream has seen, in
 *                  order of first appearance
 *   the kinds      per KIND id: which of events.h's kinds it is (enum rp_skind),
 *                  its name, unit and period, and where each extra field the
 *                  tool reads sits among its extras (enum rp_sx), looked up by
 *                  name once per chunk (ids are per chunk)
 *   the threads    the THREAD record a sample or an extra names, and the rule
 *                  by which a thread's names are shown: its first name stays,
 *                  a later different one is "renamed" (rp_thread_rename)
 *
 * A stream is begun on each chunk (rp_stream_begin) and read with the chunk's
 * reader, which the caller keeps: the stream opens and closes nothing. The
 * per-chunk kind map grows for ids the chunk has defined only (the reader bounds
 * those by the file's size), so an id a damaged record names cannot make it
 * large; an undefined id resolves to a kind with `info` NULL.
 *
 * Memory: the recordings' keys and one entry per kind id. Not thread-safe, like
 * the rest of the tool; allocation failure exits (xalloc.h).
 */
#ifndef RINGPROF_TOOLS_STREAM_H
#define RINGPROF_TOOLS_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"

/* ---------------------------------------------------------------- clock -- */

/* A chunk's mapping from monotonic ns to CLOCK_REALTIME ns. wall0 and mono0 are
 * the header's values (0 when absent); `ok` says both are there. */
struct rp_chunk_clock {
    int ok;
    uint64_t wall0, mono0;
};

/* The clock of the chunk `r` is reading. */
struct rp_chunk_clock rp_chunk_clock_of(const struct rp_reader *r);

/* Monotonic `mono` as wall-clock ns; 0 when the chunk cannot say. */
static inline uint64_t rp_clock_wall(const struct rp_chunk_clock *c, uint64_t mono)
{
    return c->ok ? c->wall0 + (mono - c->mono0) : 0;
}

/* The same, but `mono` itself when the chunk cannot say (a time axis of its
 * own, which lines up only with the same chunk's other times). */
static inline uint64_t rp_clock_time(const struct rp_chunk_clock *c, uint64_t mono)
{
    return c->ok ? c->wall0 + (mono - c->mono0) : mono;
}

/* The key that groups chunks into recordings: the recording.id, or "pid P on H"
 * when a chunk has none. Written to buf (512 bytes hold any key). */
const char *rp_recording_key(const struct rp_reader *r, char *buf, size_t cap);

/* ---------------------------------------------------------------- kinds -- */

/* The kinds of events.h the tool treats apart; RP_SK_OTHER is any other name
 * (a recording may hold kinds this build does not know), and a kind id the
 * chunk never defined. */
enum rp_skind {
    RP_SK_OTHER = 0,
    RP_SK_CPU,
    RP_SK_WALL,
    RP_SK_ALLOC,
    RP_SK_LIVE,
    RP_SK_GC,
    RP_SK_LOCK,
    RP_SK_LOCK_WAITING,
    RP_SK_COUNT
};

/* The extra fields the tool reads, by their events.h names (RP_X_* and the
 * RP_<KIND>_EXTRA_NAMES). A kind's extras are looked up by name, never
 * assumed at their events.h position: older recordings have fewer. */
enum rp_sx {
    RP_SX_CLASS,            /* RP_X_CLASS: CLASS id                               */
    RP_SX_SIZE,             /* RP_X_SIZE                                          */
    RP_SX_OBJECTS,          /* RP_X_OBJECTS                                       */
    RP_SX_LENGTH,           /* RP_X_LENGTH: array length + 1                      */
    RP_SX_AGE_GCS,          /* RP_X_AGE_GCS                                       */
    RP_SX_AGE_MS,           /* RP_X_AGE_MS                                        */
    RP_SX_STATE,            /* RP_X_STATE: enum rp_thread_state                   */
    RP_SX_REPEAT,           /* wall's RP_WALL_X_REPEAT                            */
    RP_SX_CPU_NS,           /* wall's RP_WALL_X_CPU_NS                            */
    RP_SX_BLOCKER_CLASS,    /* wall's RP_WALL_X_BLOCKER_CLASS: CLASS id           */
    RP_SX_BLOCKER_OWNER,    /* wall's RP_WALL_X_BLOCKER_OWNER: THREAD id          */
    RP_SX_OWNER,            /* RP_X_OWNER: THREAD id                              */
    RP_SX_REPORTED,         /* lock's RP_LOCK_X_REPORTED                          */
    RP_SX_HEAP_USED,        /* RP_X_HEAP_USED                                     */
    RP_SX_HEAP_COMMITTED,   /* RP_X_HEAP_COMMITTED                                */
    RP_SX_ID,               /* RP_X_ID: the GC pause's number                     */
    RP_SX_COUNT
};

/* The events.h name of extra field `x`. */
const char *rp_sx_name(enum rp_sx x);

/* What a chunk's KIND id is. */
struct rp_stream_kind {
    const struct rp_kind_info *info;  /* the KIND record; NULL: never defined     */
    enum rp_skind kind;
    const char *name, *unit;          /* the record's, "" when absent             */
    uint64_t period;
    int8_t x[RP_SX_COUNT];            /* index of each extra, -1: the kind has none */
};

/* Extra `x` of sample `ev` of kind `k`, or `dflt` when the kind has none or
 * the sample is of an older, shorter layout. */
static inline uint64_t rp_sx_value(const struct rp_stream_kind *k, const struct rp_event *ev,
                                   enum rp_sx x, uint64_t dflt)
{
    int i = k->x[x];
    return i >= 0 && (uint32_t)i < ev->u.sample.nextra ? ev->u.sample.extra[i] : dflt;
}

/* Whether sample `ev` carries extra `x`. */
static inline int rp_sx_has(const struct rp_stream_kind *k, const struct rp_event *ev,
                            enum rp_sx x)
{
    return k->x[x] >= 0 && (uint32_t)k->x[x] < ev->u.sample.nextra;
}

/* An extra that names a chunk id (class, thread): ids are 32 bits, so a value
 * above that names nothing (0), never the id its low half would alias. */
static inline uint32_t rp_sx_id(const struct rp_stream_kind *k, const struct rp_event *ev,
                                enum rp_sx x)
{
    uint64_t v = rp_sx_value(k, ev, x, 0);
    return v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* The thread state of a sample of a kind with a state extra (wall), or
 * RP_TS_UNKNOWN (no such extra, or a value this build does not know). */
static inline unsigned rp_sx_state(const struct rp_stream_kind *k, const struct rp_event *ev)
{
    uint64_t s = rp_sx_value(k, ev, RP_SX_STATE, RP_TS_UNKNOWN);
    return s < RP_TS_COUNT ? (unsigned)s : RP_TS_UNKNOWN;
}

/* The kind named `name` (NULL: none) as enum rp_skind. */
enum rp_skind rp_skind_of(const char *name);

/* -------------------------------------------------------------- threads -- */

/* How a thread's names change when it is seen under `name` (a THREAD record, a
 * sample): the first non-empty name stays its name; a later one that differs
 * is its newest ("renamed"), and its first name again clears that. */
enum rp_rename {
    RP_RENAME_NONE = 0,     /* `name` is empty or NULL: nothing changes           */
    RP_RENAME_FIRST,        /* it had no name: `name` is its name                 */
    RP_RENAME_NEWEST,       /* `name` is its newest, shown as "renamed"           */
    RP_RENAME_BACK          /* `name` is its first: no "renamed" any more         */
};
enum rp_rename rp_thread_rename(const char *first, const char *name);

/*
 * rp_thread_display: the one name a thread is shown by in every command (docs/
 * profiles.md, "Thread names"): the name it had when first sampled, then, when
 * the recording renamed it after that, the newest name:
 * "main (renamed DestroyJavaVM)". `renamed` may be NULL or "". Writes at most
 * cap bytes, always terminated.
 */
void rp_thread_display(char *buf, size_t cap, const char *name, const char *renamed);

/* A thread's names, owned (malloc'd): for a model that keeps names past the
 * chunk that defined them. */
struct rp_thread_names {
    char *first;            /* "" until a name is seen                            */
    char *renamed;          /* NULL: none                                         */
};

/* Set n to `name` as its first name (NULL: none yet). */
void rp_thread_names_init(struct rp_thread_names *n, const char *name);
/* The thread was seen under `name` (rp_thread_rename). @return the change. */
enum rp_rename rp_thread_names_see(struct rp_thread_names *n, const char *name);
/* rp_thread_display of n. */
void rp_thread_names_show(const struct rp_thread_names *n, char *buf, size_t cap);
void rp_thread_names_free(struct rp_thread_names *n);

/* --------------------------------------------------------------- stream -- */

struct rp_stream {
    struct rp_reader *r;              /* the chunk being read; NULL between chunks */
    struct rp_chunk_clock clock;
    uint32_t rec;                     /* its recording: index into recs           */
    char **recs;                      /* recording keys, first appearance first    */
    size_t nrecs;
    struct rp_stream_kind *kinds;     /* by KIND id; info NULL: not looked up yet  */
    size_t nkinds;
};

/* An empty stream (as zeroed memory is). */
void rp_stream_init(struct rp_stream *s);

/* A chunk begins: `r` (open, nothing read yet or its header only) is the
 * reader of the events that follow. Forgets the previous chunk's kinds. */
void rp_stream_begin(struct rp_stream *s, struct rp_reader *r);

/* The chunk ends: s->r is NULL again (the caller closes the reader). */
void rp_stream_end(struct rp_stream *s);

void rp_stream_free(struct rp_stream *s);

/* The recording key of the chunk being read. */
static inline const char *rp_stream_recording(const struct rp_stream *s)
{
    return s->recs[s->rec];
}

/* The index of recording `key` among s->recs, or SIZE_MAX. */
size_t rp_stream_rec(const struct rp_stream *s, const char *key);

/* What KIND id `id` of the chunk is (never NULL; info NULL: undefined). The
 * entry stays valid until the next rp_stream_begin or the first look-up of an
 * id not looked up before in the chunk (the map may move then). */
const struct rp_stream_kind *rp_stream_kind(struct rp_stream *s, uint32_t id);

/* Event time `mono` of the chunk as wall-clock ns (rp_clock_wall: 0 unknown). */
static inline uint64_t rp_stream_wall(const struct rp_stream *s, uint64_t mono)
{
    return rp_clock_wall(&s->clock, mono);
}

/* The THREAD record `id` of the chunk, or NULL (0: none; never defined). */
const struct rp_thread_info *rp_stream_thread(const struct rp_stream *s, uint32_t id);

/* The THREAD record extra `x` of sample `ev` names (RP_SX_OWNER, ...), or NULL. */
const struct rp_thread_info *rp_stream_x_thread(const struct rp_stream *s,
                                                const struct rp_stream_kind *k,
                                                const struct rp_event *ev, enum rp_sx x);

/* The CLASS name extra `x` of sample `ev` names, as recorded, or NULL. */
const char *rp_stream_x_class(const struct rp_stream *s, const struct rp_stream_kind *k,
                              const struct rp_event *ev, enum rp_sx x);

#endif
