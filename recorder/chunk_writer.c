/*
 * recorder/chunk_writer.c — writes one chunk file (format: ringprof/format.h).
 *
 * The writer owns one growable segment buffer. Interning looks the content up in a
 * per-pool hash table and, the first time it is seen, appends the pool record to
 * the segment buffer at once, so a definition always precedes its first use.
 * Samples of the same kind and thread are gathered in a separate batch buffer and
 * become one SAMPLES record when the batch is closed (another kind or thread, time
 * going backwards, the batch reaching RP_CHUNK_BATCH_MAX, any non-sample record, or
 * a flush). A batch that takes a sample of a virtual thread keeps every sample's
 * VTHREAD id in a second buffer from then on (the samples before it get 0), which
 * closes the record after its samples (format.h). Counters are summed per segment
 * and written at flush.
 *
 * This file holds the writer's life (open, the file header, close and what a
 * close carries over), the record encoder and the per-sample path. Interning is
 * chunk_writer_pools.c, ending and writing a segment chunk_writer_segment.c; their
 * shared state is chunk_writer.h.
 *
 * One thread owns a writer. Not async-signal-safe: it allocates and does I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ringprof/chunk.h"
#include "chunk_writer.h"
#include "crc32c.h"
#include "varint.h"
#include "metanum.h"

/* ----------------------------------------------------------- small tools -- */

int rp_wr_buf_grow(struct buf *b, size_t need)
{
    if (b->cap - b->len >= need)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < need) {
        if (cap > SIZE_MAX / 2) {
            errno = ENOMEM;
            return -1;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

int rp_wr_array_grow(void **arr, uint32_t *cap, size_t esz, uint32_t need)
{
    if (need < *cap)
        return 0;
    uint64_t ncap = *cap ? *cap : 64;
    while (ncap <= need)
        ncap *= 2;
    if (ncap > UINT32_MAX || ncap > SIZE_MAX / esz) {
        errno = ENOMEM;
        return -1;
    }
    void *p = realloc(*arr, (size_t)ncap * esz);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    *arr = p;
    *cap = (uint32_t)ncap;
    return 0;
}

/* ----------------------------------------------------------- the encoder -- */

int rp_wr_emit(struct rp_chunk_writer *w, uint8_t type, const uint64_t *f, unsigned nf,
               const void *tail, size_t tlen)
{
    size_t blen = tlen;
    for (unsigned i = 0; i < nf; i++)
        blen += rp_varint_len(f[i]);
    if (rp_wr_buf_grow(&w->seg, 1 + RP_VARINT_MAX + blen) < 0)
        return -1;
    uint8_t *p = w->seg.p + w->seg.len;
    *p++ = type;
    p += rp_varint_put(p, blen);
    for (unsigned i = 0; i < nf; i++)
        p += rp_varint_put(p, f[i]);
    if (tlen)
        memcpy(p, tail, tlen);
    w->seg.len = (size_t)(p - w->seg.p) + tlen;
    w->seg_records++;
    return 0;
}

int rp_wr_close_batch(struct rp_chunk_writer *w)
{
    if (!w->b.open)
        return 0;
    if (w->b.count) {
        uint64_t f[6] = {w->b.kind, w->b.thread, w->b.count, rel_time(w, w->b.t0),
                         w->b.wunit, w->b.nextra};
        size_t samples_len = w->batch.len;
        if (w->b.vt) {          /* the VTHREAD ids follow the samples            */
            if (rp_wr_buf_grow(&w->batch, w->vbatch.len) < 0)
                return -1;
            memcpy(w->batch.p + w->batch.len, w->vbatch.p, w->vbatch.len);
            w->batch.len += w->vbatch.len;
        }
        int rc = rp_wr_emit(w, RP_REC_SAMPLES, f, 6, w->batch.p, w->batch.len);
        w->batch.len = samples_len;
        if (rc < 0)
            return -1;          /* the batch stays open and intact               */
        w->seg_samples += w->b.count;
    }
    w->b.open = 0;
    w->b.vt = 0;
    w->batch.len = 0;
    w->vbatch.len = 0;
    return 0;
}

/* ---------------------------------------------------------------- events -- */

/* Start a SAMPLES record for this kind and thread at `time`. */
static int open_batch(struct rp_chunk_writer *w, const struct wkind *k, uint32_t kind,
                      uint32_t thread, uint64_t time)
{
    if (rp_wr_close_batch(w) < 0)
        return -1;
    w->b.open = 1;
    w->b.kind = kind;
    w->b.thread = thread;
    w->b.count = 0;
    w->b.nextra = k->nextra;
    w->b.t0 = w->b.prev_time = time;
    w->b.wunit = w->b.prev_weight = k->period;
    return 0;
}

/* A weight other than the previous one: as a multiple of the unit, or literal. */
static __attribute__((noinline)) uint8_t *put_weight(struct rp_chunk_writer *w,
                                                     uint8_t *p, uint64_t head,
                                                     uint64_t weight)
{
    uint64_t u = w->b.wunit, m = 0, r = 1;
    if (u && ((weight | u) >> 32) == 0) {   /* 32-bit division: a third the latency */
        m = (uint32_t)weight / (uint32_t)u;
        r = (uint32_t)weight % (uint32_t)u;
    } else if (u) {
        m = weight / u;
        r = weight % u;
    }
    if (r == 0) {
        p += rp_varint_put_fast(p, head | 1);
        p += rp_varint_put(p, m);
    } else {
        p += rp_varint_put_fast(p, head | 2);
        p += rp_varint_put(p, weight);
    }
    return p;
}

/* The checks and the batch switch the fast path leaves to the first sample of a
 * batch. @return 0, or -1 with errno. */
static __attribute__((noinline)) int sample_slow(struct rp_chunk_writer *w, uint32_t kind,
                                                 uint32_t thread, uint64_t time,
                                                 uint32_t stack, const uint64_t *extra)
{
    if (!w || kind - 1 >= w->nkind || thread > w->nthread || stack > w->nstack ||
        (w->kind[kind - 1].nextra && !extra)) {
        errno = EINVAL;
        return -1;
    }
    uint64_t dt = time - w->b.prev_time;
    if (!w->b.open || w->b.kind != kind || w->b.thread != thread || dt >> 62 ||
        w->batch.len >= RP_CHUNK_BATCH_MAX)
        return open_batch(w, &w->kind[kind - 1], kind, thread, time);
    return 0;
}

/* Append the VTHREAD id of the batch's next sample. @return 0, or -1 (ENOMEM). */
static int vt_put(struct rp_chunk_writer *w, uint32_t vthread)
{
    if (rp_wr_buf_grow(&w->vbatch, RP_VARINT_MAX) < 0)
        return -1;
    w->vbatch.len += rp_varint_put(w->vbatch.p + w->vbatch.len, vthread);
    return 0;
}

/* Begin the batch's VTHREAD ids: 0 for each sample it holds. @return 0, or -1
 * (ENOMEM) with the batch as it was. */
static __attribute__((noinline)) int vt_begin(struct rp_chunk_writer *w)
{
    if (rp_wr_buf_grow(&w->vbatch, w->b.count + RP_VARINT_MAX) < 0)
        return -1;
    memset(w->vbatch.p, 0, w->b.count);
    w->vbatch.len = w->b.count;
    w->b.vt = 1;
    return 0;
}

/*
 * The per-sample path: the flusher calls it for every sample, so the common case
 * (same batch as the previous sample, same weight, room in the buffer, no virtual
 * thread) runs straight through with branch-free varints; everything else goes
 * to sample_slow. A time before the previous sample's wraps dt past 2^62, which
 * also opens a batch.
 */
static inline int sample_put(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                             uint32_t vthread, uint64_t time, uint32_t stack,
                             uint64_t weight, const uint64_t *extra)
{
    if (__builtin_expect(!w || !w->b.open | (w->b.kind != kind) | (w->b.thread != thread) |
                         ((time - w->b.prev_time) >> 62 != 0) | (stack > w->nstack) |
                         (w->batch.len >= RP_CHUNK_BATCH_MAX) | (w->b.nextra && !extra),
                         0) &&
        sample_slow(w, kind, thread, time, stack, extra) < 0)
        return -1;
    if (__builtin_expect(vthread != 0, 0)) {
        if (vthread > w->nvthread) {
            errno = EINVAL;
            return -1;
        }
        if (!w->b.vt && vt_begin(w) < 0)
            return -1;
    }
    uint32_t nextra = w->b.nextra;
    size_t need = (size_t)(3 + nextra) * RP_VARINT_MAX;
    if (__builtin_expect(w->batch.cap - w->batch.len < need, 0) &&
        rp_wr_buf_grow(&w->batch, need) < 0)
        return -1;
    if (__builtin_expect(w->b.vt, 0) && vt_put(w, vthread) < 0)
        return -1;
    uint64_t head = (time - w->b.prev_time) << 2;
    uint8_t *p = w->batch.p + w->batch.len;
    if (__builtin_expect(weight == w->b.prev_weight, 1))
        p += rp_varint_put_fast(p, head);
    else
        p = put_weight(w, p, head, weight);
    p += rp_varint_put_fast(p, stack);
    for (uint32_t i = 0; i < nextra; i++)
        p += rp_varint_put(p, extra[i]);
    w->batch.len = (size_t)(p - w->batch.p);
    w->b.count++;
    w->b.prev_time = time;
    w->b.prev_weight = weight;
    note_time(w, time);
    if (__builtin_expect(w->seg.len + w->batch.len >= w->autoflush_at, 0))
        maybe_autoflush(w);
    return 0;
}

int rp_chunk_sample(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                    uint64_t time, uint32_t stack, uint64_t weight,
                    const uint64_t *extra)
{
    return sample_put(w, kind, thread, 0, time, stack, weight, extra);
}

int rp_chunk_sample_vt(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                       uint32_t vthread, uint64_t time, uint32_t stack, uint64_t weight,
                       const uint64_t *extra)
{
    return sample_put(w, kind, thread, vthread, time, stack, weight, extra);
}

int rp_wr_counter_add(struct rp_chunk_writer *w, uint32_t name, uint64_t delta)
{
    for (uint32_t i = 0; i < w->nctr; i++)
        if (w->ctr[i].name == name) {
            w->ctr[i].value += delta;
            return 0;
        }
    if (rp_wr_array_grow((void **)&w->ctr, &w->capctr, sizeof *w->ctr, w->nctr) < 0)
        return -1;
    w->ctr[w->nctr++] = (struct wcounter){name, delta};
    return 0;
}

int rp_chunk_counter(struct rp_chunk_writer *w, const char *name, uint64_t delta)
{
    if (!w || !name) {
        errno = EINVAL;
        return -1;
    }
    if (delta == 0)
        return 0;
    uint32_t nid = rp_chunk_cstring(w, name);
    if (!nid)
        return -1;
    return rp_wr_counter_add(w, nid, delta);
}

int rp_chunk_thread_cpu(struct rp_chunk_writer *w, uint32_t thread, uint64_t time,
                        uint64_t cpu_ns)
{
    if (!w || thread > w->nthread) {
        errno = EINVAL;
        return -1;
    }
    if (rp_wr_close_batch(w) < 0)
        return -1;
    uint64_t f[3] = {thread, rel_time(w, time), cpu_ns};
    if (rp_wr_emit(w, RP_REC_THREAD_CPU, f, 3, NULL, 0) < 0)
        return -1;
    note_time(w, time);
    maybe_autoflush(w);
    return 0;
}

int rp_chunk_gauge(struct rp_chunk_writer *w, const char *name, uint64_t time,
                   uint64_t value)
{
    if (!w || !name) {
        errno = EINVAL;
        return -1;
    }
    uint32_t nid = rp_chunk_cstring(w, name);
    if (!nid || rp_wr_close_batch(w) < 0)
        return -1;
    uint64_t f[3] = {nid, rel_time(w, time), value};
    if (rp_wr_emit(w, RP_REC_GAUGE, f, 3, NULL, 0) < 0)
        return -1;
    note_time(w, time);
    maybe_autoflush(w);
    return 0;
}

/* -------------------------------------------------------- open and close -- */

static void writer_free(struct rp_chunk_writer *w)
{
    free(w->path);
    free(w->seg.p);
    free(w->batch.p);
    free(w->out.p);
    free(w->scratch.p);
    free(w->sarena.p);
    free(w->str);
    free(w->tstr.slot);
    free(w->class_of);
    free(w->meth);
    free(w->tmeth.slot);
    free(w->frame);
    free(w->tframe.slot);
    free(w->farena.p);
    free(w->stack);
    free(w->tstack.slot);
    free(w->thread);
    free(w->tthread.slot);
    free(w->vthread);
    free(w->tvthread.slot);
    free(w->vbatch.p);
    free(w->kind);
    free(w->ctr);
    free(w);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int put_kv(struct buf *b, const char *k, const char *v)
{
    size_t kl = strlen(k), vl = strlen(v);
    if (rp_wr_buf_grow(b, 2 * RP_VARINT_MAX + kl + vl) < 0)
        return -1;
    b->len += rp_varint_put(b->p + b->len, kl);
    memcpy(b->p + b->len, k, kl);
    b->len += kl;
    b->len += rp_varint_put(b->p + b->len, vl);
    memcpy(b->p + b->len, v, vl);
    b->len += vl;
    return 0;
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct rp_chunk_writer *rp_chunk_writer_open(const char *path,
                                             const struct rp_kv *meta, size_t n,
                                             char *err, size_t errlen)
{
    return rp_chunk_writer_openat(AT_FDCWD, path, path, meta, n, err, errlen);
}

struct rp_chunk_writer *rp_chunk_writer_openat(int dfd, const char *name,
                                               const char *path,
                                               const struct rp_kv *meta, size_t n,
                                               char *err, size_t errlen)
{
    if (!name || !path || (n && !meta)) {
        set_err(err, errlen, "chunk writer: no path or metadata");
        errno = EINVAL;
        return NULL;
    }
    const char *given_wall = NULL, *given_mono = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!meta[i].key || !meta[i].value) {
            set_err(err, errlen, "%s: metadata entry %zu has no key or value", path, i);
            errno = EINVAL;
            return NULL;
        }
        if (!given_wall && strcmp(meta[i].key, RP_META_START_WALL) == 0)
            given_wall = meta[i].value;
        if (!given_mono && strcmp(meta[i].key, RP_META_START_MONO) == 0)
            given_mono = meta[i].value;
    }
    /* Both clocks now; a given value keeps the pair consistent with it. */
    uint64_t now_mono = clock_ns(CLOCK_MONOTONIC), now_wall = clock_ns(CLOCK_REALTIME);
    uint64_t mono = now_mono, wall = now_wall;
    if ((given_mono && rp_meta_parse_u64(given_mono, &mono) < 0) ||
        (given_wall && rp_meta_parse_u64(given_wall, &wall) < 0)) {
        set_err(err, errlen, "%s: %s and %s must be decimal integers", path,
                RP_META_START_MONO, RP_META_START_WALL);
        errno = EINVAL;
        return NULL;
    }
    if (given_mono && !given_wall)
        wall = now_wall - (now_mono - mono);
    else if (given_wall && !given_mono)
        mono = now_mono - (now_wall - wall);

    struct rp_chunk_writer *w = calloc(1, sizeof *w);
    struct buf h = {0};
    if (!w || !(w->path = strdup(path)) || rp_wr_buf_grow(&h, RP_FILE_HEADER_FIXED) < 0)
        goto nomem;
    w->fd = -1;
    w->start_mono = mono;
    w->autoflush_at = RP_CHUNK_SEGMENT_SOFT_MAX;
    reset_time(w);
    memcpy(h.p, RP_FILE_MAGIC, RP_FILE_MAGIC_LEN);
    rp_put_le16(h.p + 8, RP_FORMAT_MAJOR);
    rp_put_le16(h.p + 10, RP_FORMAT_MINOR);
    h.len = RP_FILE_HEADER_FIXED;
    for (size_t i = 0; i < n; i++)
        if (put_kv(&h, meta[i].key, meta[i].value) < 0)
            goto nomem;
    char num[24];
    if (!given_wall) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)wall);
        if (put_kv(&h, RP_META_START_WALL, num) < 0)
            goto nomem;
    }
    if (!given_mono) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)mono);
        if (put_kv(&h, RP_META_START_MONO, num) < 0)
            goto nomem;
    }
    if (rp_wr_buf_grow(&h, 4) < 0)
        goto nomem;
    h.len += 4;
    if (h.len > RP_FILE_HEADER_MAX) {
        set_err(err, errlen, "%s: metadata too large (%zu bytes, limit %u)", path, h.len,
                RP_FILE_HEADER_MAX);
        free(h.p);
        writer_free(w);
        errno = EINVAL;
        return NULL;
    }
    rp_put_le32(h.p + 12, (uint32_t)h.len);
    rp_put_le32(h.p + h.len - 4, rp_crc32c(0, h.p, h.len - 4));

    w->fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        int e = errno;
        set_err(err, errlen, "%s: cannot create: %s", path, strerror(e));
        free(h.p);
        writer_free(w);
        errno = e;
        return NULL;
    }
    if (rp_wr_pwrite_all(w->fd, h.p, h.len, 0) < 0) {
        int e = errno;
        set_err(err, errlen, "%s: cannot write the header: %s", path, strerror(e));
        unlinkat(dfd, name, 0);
        close(w->fd);
        free(h.p);
        writer_free(w);
        errno = e;
        return NULL;
    }
    w->good_len = h.len;
    free(h.p);
    return w;

nomem:
    set_err(err, errlen, "%s: out of memory", path);
    free(h.p);
    if (w)
        writer_free(w);
    errno = ENOMEM;
    return NULL;
}

/* Hand every counter still held to `fn`: they were not written anywhere. */
static void carry_counters(const struct rp_chunk_writer *w, rp_chunk_counter_fn fn,
                           void *arg)
{
    for (uint32_t i = 0; i < w->nctr; i++) {
        uint32_t id = w->ctr[i].name;
        if (!w->ctr[i].value || id == 0 || id > w->nstr)
            continue;
        const struct wstr *e = &w->str[id - 1];
        char name[256];
        size_t n = e->len < sizeof name - 1 ? e->len : sizeof name - 1;
        memcpy(name, w->sarena.p + e->off, n);
        name[n] = '\0';
        fn(arg, name, w->ctr[i].value);
    }
}

int rp_chunk_close(struct rp_chunk_writer *w)
{
    return rp_chunk_close_carry(w, NULL, NULL);
}

int rp_chunk_close_carry(struct rp_chunk_writer *w, rp_chunk_counter_fn fn, void *arg)
{
    return rp_chunk_close_stats(w, fn, arg, NULL);
}

int rp_chunk_close_stats(struct rp_chunk_writer *w, rp_chunk_counter_fn fn, void *arg,
                         struct rp_chunk_writer_stats *out)
{
    if (!w)
        return 0;
    int rc = rp_wr_flush_segment(w, RP_SEG_LAST), e = rc < 0 ? errno : 0;
    /* Samples that never reached a write (no memory for the batch or the
     * COUNTER records of the last segment) are lost to this close as well. */
    if (rc < 0)
        w->st.samples_failed += w->seg_samples + (w->b.open ? w->b.count : 0);
    if ((rc < 0 || w->lost_write_pending) && fn) {
        carry_counters(w, fn, arg);
        /* A write failure has already moved its samples to lost.write (carried
         * above) unless there was no memory for that counter (lost_write_pending,
         * which a successful last write leaves too); a failure before the write
         * (no memory for the COUNTER records or the batch) has not, and they go
         * with this writer now. */
        uint64_t pending = w->seg_samples + (w->b.open ? w->b.count : 0) +
                           w->lost_write_pending;
        if (pending)
            fn(arg, RP_COUNTER_LOST_WRITE, pending);
    }
    if (fsync(w->fd) < 0 && !e) {
        rc = -1;
        e = errno;
    }
    if (close(w->fd) < 0 && !e) {
        rc = -1;
        e = errno;
    }
    if (out)
        rp_chunk_writer_stats(w, out);
    writer_free(w);
    if (rc < 0)
        errno = e;
    return rc;
}

void rp_chunk_abandon(struct rp_chunk_writer *w)
{
    if (!w)
        return;
    close(w->fd);
    writer_free(w);
}

void rp_chunk_writer_stats(const struct rp_chunk_writer *w,
                           struct rp_chunk_writer_stats *out)
{
    *out = w->st;
    out->bytes_written = w->good_len;
    out->pending_samples = w->seg_samples + (w->b.open ? w->b.count : 0);
    out->pending_raw_bytes = w->seg.len + w->batch.len;
}

const char *rp_chunk_writer_path(const struct rp_chunk_writer *w)
{
    return w->path;
}

uint64_t rp_chunk_writer_start_mono(const struct rp_chunk_writer *w)
{
    return w->start_mono;
}
