/*
 * tools/commands/push_body.h — what `ringprof push` sends for one chunk: its
 * identity, its real time range, and its requests' bodies, made by the same
 * format writers as `ringprof convert` (outputs/formats.h) into memory.
 *
 * A chunk is cut into windows: one, its whole time range, or with a period the
 * aligned intervals [k*period, (k+1)*period) of the wall clock that it overlaps,
 * each clipped to the chunk's range (so each window says when its samples
 * were taken, not when they were sent). A window's samples are those with
 * from <= time < until, exactly what `convert --from --to` keeps, so the
 * windows of a chunk add up to the chunk. Then one part per window:
 *   - a profile format (pprof) holds one event kind: one part per kind present
 *     in the window, among those asked (--event);
 *   - an events format (jfr) holds every kind: one part per window.
 * Kind `live` is one snapshot of the heap, not a sum: its part is the window's
 * last snapshot, as `convert --event live` takes the last in its range.
 * Windows and kinds without samples make no part. The parts come in a fixed
 * order (windows in time, kinds as asked), so the same chunk and options give
 * the same parts: push_state.h counts the answered ones by their index.
 *
 * Reading a chunk costs one pass to find its range and what each window holds,
 * then one pass per part (model/profile.h builds one kind over one range): with
 * the agent's chunktime equal to the period (docs/fleet.md) that is one pass
 * per kind.
 *
 * The tool's one thread; allocation failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_PUSH_BODY_H
#define RINGPROF_TOOLS_PUSH_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "outputs/formats.h"

/* The kinds sent when --event does not say: every kind the agent writes that
 * has stacks (gc pauses have none). */
#define RP_PUSH_DEFAULT_EVENTS "cpu,alloc,live,wall,lock"

/* A chunk's header, as far as push needs it. Strings are owned ("" if absent). */
struct rp_push_ident {
    char *recording;          /* recording.id; "" when the header has none        */
    uint32_t seq;             /* chunk.seq                                         */
    int has_seq;
    char *host, *pid;
    char *service, *labels;   /* the agent's service= and labels= (format.h)      */
    char *main;               /* jvm.main: the main class or jar                  */
    uint64_t start_wall;      /* start.wall_ns; 0: unknown                        */
    uint64_t interval_ns;     /* agent.interval_ns: the CPU sampling interval;    */
                              /* 0: unknown                                       */
};

struct rp_push_part {
    char kind[64];            /* its kind; "" for an events body (every kind)     */
    uint64_t from, until;     /* its window, wall ns (until: the window's end, or */
                              /* the chunk's last event)                          */
    uint64_t samples;         /* samples in it                                    */
    char *body;               /* the format writer's output                       */
    size_t len;
};

struct rp_push_chunk {
    char *path;
    struct rp_push_ident id;
    uint64_t begin, end;      /* its time range, wall ns: opened .. last event    */
    struct rp_push_part *parts;
    size_t nparts;
    uint64_t problems;        /* what the reader reported (damage): each is also  */
                              /* printed once, as convert prints it               */
};

struct rp_push_body_options {
    const struct rp_format *fmt;   /* the writer                                  */
    char **events;                 /* profile formats: the kinds to send, in      */
    size_t nevents;                /* order                                       */
    uint64_t period_ns;            /* 0: one window per chunk                     */
    int merge_threads;             /* build merged even where the format asks for */
                                   /* threads (RP_FMT_THREADS)                    */
    struct rp_out_options oo;      /* what the writers are told (title: set per   */
                                   /* chunk)                                      */
};

/* rp_push_ident_read: the header of the chunk at `path` (nothing else is read).
 * @return 0, or -1 with the reader's reason in err (the file is not a chunk, or
 * cannot be opened: errno ENOENT when it is gone). */
int rp_push_ident_read(const char *path, struct rp_push_ident *id, char *err,
                       size_t errlen);
void rp_push_ident_free(struct rp_push_ident *id);

/* The identity as the profile model names a chunk's recording (its strings are
 * the identity's), for rp_out_service_name. */
void rp_push_ident_source(const struct rp_push_ident *id, struct rp_prof_source *s);

/*
 * rp_push_chunk_build: read the chunk at `path` and make its parts as `o` says.
 * Damage is reported (file, offset, reason) and skipped, as by convert: the
 * parts hold what could be read. @return 0, or -1 with a reason in err when the
 * file cannot be read as a chunk at all.
 */
int rp_push_chunk_build(struct rp_push_chunk *c, const char *path,
                        const struct rp_push_body_options *o, char *err, size_t errlen);
void rp_push_chunk_free(struct rp_push_chunk *c);

#endif
