/*
 * recorder/chunk_reader.h — the chunk reader's inside, shared by its four files.
 * Not installed: callers use ringprof/chunk.h.
 *
 *   chunk_reader.c          open and close, the file header and its metadata, the
 *                           diagnostics callback
 *   chunk_reader_pools.c    the pools: an arena, a table of entries by id for each
 *                           pool, their memory budget, the look-ups by id
 *   chunk_reader_segment.c  finding, checking and decompressing the next segment;
 *                           damage skipped, a file cut short reported as partial
 *   chunk_reader_records.c  decoding a segment's records into pools and events,
 *                           and rp_reader_next
 *
 * struct rp_reader is one reader's whole state; one thread uses it. Nothing here
 * is async-signal-safe: the pools allocate, the segments read the file.
 */
#ifndef RINGPROF_RECORDER_CHUNK_READER_H
#define RINGPROF_RECORDER_CHUNK_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"

#define RD_IO_SIZE (64u * 1024)   /* read window: decompression and resync scans */

/* A table of pointers indexed by id (slot 0 unused, NULL: undefined) to entries in
 * the arena. Pointers rather than the entries themselves, so that the id slack a
 * hostile file may claim costs 8 bytes a slot, not the size of an entry. */
struct pool {
    void **slot;
    uint32_t cap;     /* slots allocated                                         */
    uint32_t hi;      /* highest id defined                                      */
    uint32_t ndef;    /* ids defined                                             */
    size_t esz;
    const char *name;
};

struct rstr   { const char *s; size_t len; };
struct rclass { const char *name; };
struct rstack { const uint32_t *frames; uint32_t n, flags; };

enum { P_STR, P_CLASS, P_METHOD, P_FRAME, P_STACK, P_THREAD, P_KIND, P_VTHREAD, P_COUNT };

static inline const void *pool_get(const struct pool *p, uint32_t id)
{
    return id < p->cap ? p->slot[id] : NULL;
}

struct ablock;

struct rp_reader {
    int fd;
    char *path;
    rp_reader_diag_fn diag;
    void *arg;
    char msg[320];
    char why[160];            /* a reason pool_def formats                      */

    uint32_t minor;
    struct rp_kv *meta;
    size_t nmeta;
    uint64_t start_mono;

    uint64_t off;             /* where the next segment header should be         */
    int done, after_last;
    LZ4F_dctx *dctx;
    uint8_t *io;
    uint8_t *raw;
    size_t rawcap;

    int in_seg;               /* decoding a segment's records                   */
    const uint8_t *pos, *end;
    uint64_t seg_off;
    uint32_t seg_seq, seg_records, recs_seen, seg_bad;
    uint64_t seg_unresolved;  /* references to undefined ids in this segment    */
    int seg_ref_pool;         /* the first of them                              */
    uint32_t seg_ref_id;

    struct {                  /* the SAMPLES record being delivered             */
        uint64_t left;
        const uint8_t *p, *end;
        const uint8_t *vt;    /* its samples' VTHREAD ids, NULL: none           */
        uint32_t kind, thread;
        uint64_t nextra, wunit, time, weight;
    } b;

    struct ablock *arena;
    uint64_t pool_bytes;      /* the arena's blocks and the id tables: the budget */
    struct pool pool[P_COUNT];
    struct rp_reader_stats st;
};

/* Format a diagnostic (fatal: the reader cannot go on) about file offset `off`
 * and hand it to the caller's callback, if any. */
void rp_rd_report(struct rp_reader *r, uint64_t off, int fatal, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ------------------------------------------- chunk_reader_pools.c: pools -- */

/* Set each pool's entry size and name (the reader is zeroed). */
void rp_rd_pools_init(struct rp_reader *r);

/* Free every pool's table and the arena. */
void rp_rd_pools_free(struct rp_reader *r);

/* Arena memory for the pools, counted against their budget. NULL: no memory. */
void *rp_rd_pool_alloc(struct rp_reader *r, size_t n);

/* Copy n bytes as a NUL-terminated string into the arena. NULL: no memory. */
char *rp_rd_arena_str(struct rp_reader *r, const uint8_t *s, size_t n);

/*
 * Make room for a definition of `id` in pool `p` and return its slot, or NULL with
 * *why set: id 0, an id beyond the density rule (format.h, RP_POOL_ID_SLACK), a
 * new entry whose table growth, entry and `extra` bytes (its string or frames,
 * which the caller allocates next) would take the pools past their budget, or no
 * memory. `*fresh` says whether the id was undefined until now.
 */
void *rp_rd_pool_def(struct rp_reader *r, struct pool *p, uint64_t id, size_t extra,
                     int *fresh, const char **why);

/* -------------------------------------- chunk_reader_segment.c: segments -- */

/* pread up to `len` bytes at `off`, through EINTR and short reads. @return the
 * bytes read (fewer at the end of the file), or -1 if none could be. */
ssize_t rp_rd_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* Find and load the next good segment into r->raw. @return 1 with a SEGMENT
 * event in *ev, 0 at the end of the file. */
int rp_rd_next_segment(struct rp_reader *r, struct rp_event *ev);

#endif
