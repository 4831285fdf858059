/*
 * recorder/chunk_writer.h — the chunk writer's inside, shared by its three files.
 * Not installed: callers use ringprof/chunk.h.
 *
 *   chunk_writer.c          open and close, the file header, the record encoder,
 *                           the SAMPLES batch and the per-sample path, counters,
 *                           gauges and THREAD_CPU records
 *   chunk_writer_pools.c    interning: a hash table per pool, and a definition
 *                           appended to the segment the first time it is seen
 *   chunk_writer_segment.c  ending a segment: compress, write, and after a failed
 *                           write cut the file back and keep only the pool records
 *
 * struct rp_chunk_writer is one writer's whole state; one thread owns it. The
 * functions below report errors as the public calls do: 0, or -1 with errno
 * (ENOMEM when memory ran out). Not async-signal-safe: they allocate.
 */
#ifndef RINGPROF_RECORDER_CHUNK_WRITER_H
#define RINGPROF_RECORDER_CHUNK_WRITER_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "ringprof/chunk.h"
#include "varint.h"

/* A growable byte buffer. */
struct buf {
    uint8_t *p;
    size_t len, cap;
};

/* One pool's interning table (chunk_writer_pools.c): open addressing, linear
 * probing, load <= 1/2. A slot holds hash << 32 | id (id >= 1, so 0 is empty); the
 * pool's own array holds the content. */
struct itab {
    uint64_t *slot;
    uint32_t cap, n;
};

struct wstr    { uint64_t off; uint32_t len; };
struct wmethod { uint32_t klass, name, sig, file, flags; };
struct wframe  { uint32_t method, type, bci1, line; };
struct wstack  { uint64_t off; uint32_t n, flags; };
struct wthread { uint64_t key, os_tid, java_tid; uint32_t name, flags; };
struct wvthread { uint64_t java_tid; uint32_t name; };
struct wkind   { uint32_t name, nextra; uint64_t period; };
struct wcounter { uint32_t name; uint64_t value; };

/* Pool arrays are indexed by id - 1. */
struct rp_chunk_writer {
    int fd;
    char *path;
    uint64_t start_mono;
    uint64_t good_len;          /* end of the last segment that reached the file  */
    int need_truncate;          /* a cut back failed: retry before the next write */
    uint32_t seq;

    struct buf seg;             /* encoded records of the open segment            */
    size_t autoflush_at;        /* pending bytes that trigger a flush             */
    uint32_t seg_records;
    uint64_t seg_samples;       /* in closed SAMPLES records of `seg`             */
    uint64_t t_first, t_last;   /* event times in the open segment (MAX,0: none)  */

    struct buf batch;           /* encoded samples of the open SAMPLES record     */
    struct buf vbatch;          /* their VTHREAD ids, once b.vt                    */
    struct {
        int open;
        int vt;                 /* a sample of the record ran on a virtual thread */
        uint32_t kind, thread, count, nextra;
        uint64_t t0, prev_time, prev_weight, wunit;
    } b;

    struct buf out;             /* segment header + LZ4 frame                     */
    struct buf scratch;

    struct buf sarena;          /* string bytes                                   */
    struct wstr *str;       uint32_t nstr, capstr;     struct itab tstr;
    uint32_t *class_of;     uint32_t capclass_of;      /* string id -> class id   */
    uint32_t nclass;
    struct wmethod *meth;   uint32_t nmeth, capmeth;   struct itab tmeth;
    struct wframe *frame;   uint32_t nframe, capframe; struct itab tframe;
    struct buf farena;          /* stack frame ids (uint32_t)                     */
    struct wstack *stack;   uint32_t nstack, capstack; struct itab tstack;
    struct wthread *thread; uint32_t nthread, capthread; struct itab tthread;
    struct wvthread *vthread; uint32_t nvthread, capvthread; struct itab tvthread;
    struct wkind *kind;     uint32_t nkind, capkind;
    struct wcounter *ctr;   uint32_t nctr, capctr;
    /* Samples lost to failed writes whose lost.write counter could not be added
     * (no memory for its name or slot): kept here until a flush or close can. */
    uint64_t lost_write_pending;

    struct rp_chunk_writer_stats st;
};

/* ------------------------------------------- chunk_writer.c: the encoder -- */

/* Make room for `need` more bytes. @return 0, or -1 with errno ENOMEM. */
int rp_wr_buf_grow(struct buf *b, size_t need);

/* Grow a pool array so that index `need` exists. @return 0 or -1 (ENOMEM). */
int rp_wr_array_grow(void **arr, uint32_t *cap, size_t esz, uint32_t need);

/* Append one record: type, body_len, the varint fields `f`, then `tail` bytes. */
int rp_wr_emit(struct rp_chunk_writer *w, uint8_t type, const uint64_t *f, unsigned nf,
               const void *tail, size_t tlen);

/* Turn the open batch into a SAMPLES record. @return 0, or -1 with the batch still
 * open and intact. */
int rp_wr_close_batch(struct rp_chunk_writer *w);

/* Add `delta` to the segment's counter `name` (a string id). @return 0 or -1. */
int rp_wr_counter_add(struct rp_chunk_writer *w, uint32_t name, uint64_t delta);

/* ---------------------------------- chunk_writer_segment.c: the segments -- */

/* End the open segment (flags: RP_SEG_LAST on close) and write it. @return 0, or
 * -1 with errno; the pool records then stay for the next segment. */
int rp_wr_flush_segment(struct rp_chunk_writer *w, uint32_t flags);

/* pwrite all `len` bytes at `off`, through EINTR and short writes. @return 0 or -1. */
int rp_wr_pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off);

/* -------------------------------------- event times, the automatic flush -- */

/* An event time as the records carry it: from the chunk start, zigzag-encoded. */
static inline uint64_t rel_time(const struct rp_chunk_writer *w, uint64_t t)
{
    return rp_zigzag_enc((int64_t)(t - w->start_mono));
}

/* The segment's time range: t_first starts at UINT64_MAX and t_last at 0, so this
 * is two conditional moves and no branch. */
static inline void note_time(struct rp_chunk_writer *w, uint64_t t)
{
    w->t_first = t < w->t_first ? t : w->t_first;
    w->t_last = t > w->t_last ? t : w->t_last;
}

static inline void reset_time(struct rp_chunk_writer *w)
{
    w->t_first = UINT64_MAX;
    w->t_last = 0;
}

/*
 * Flush when the open segment crossed its soft maximum. A failure is counted in the
 * stats and does not concern the call that happened to cross the mark. After a
 * failure (disk full) the pool records stay in the buffer, so the next attempt
 * waits until another RP_CHUNK_SEGMENT_SOFT_MAX has piled up (or for the caller's
 * own flush): retrying on every call would compress the whole buffer each time.
 */
static inline void maybe_autoflush(struct rp_chunk_writer *w)
{
    if (w->seg.len + w->batch.len >= w->autoflush_at) {
        int e = errno;
        (void)rp_wr_flush_segment(w, 0);
        errno = e;
    }
}

#endif
