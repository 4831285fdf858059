/*
 * recorder/chunk_writer_segment.c — ending a chunk segment and writing it
 * (format: ringprof/format.h).
 *
 * rp_chunk_flush compresses the buffer into one LZ4 frame and writes the 48-byte
 * segment header and the frame with a single pwrite at the end of the last good
 * segment. If that fails, the file is cut back to that length, and the buffer is
 * filtered in place down to its pool records (STRING..KIND, VTHREAD), which lead the
 * next segment with the same ids: callers' cached ids stay valid and the chunk
 * never refers to a definition that is not in it. The failed segment's counters
 * stay in the counter table, RP_COUNTER_LOST_WRITE is added for its samples, and
 * both go out with the next segment that is written.
 *
 * One thread owns a writer (chunk_writer.h). Not async-signal-safe: it allocates
 * and does I/O.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"
#include "chunk_writer.h"
#include "crc32c.h"
#include "varint.h"

int rp_wr_pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* Walk one well-formed record of our own buffer. */
static size_t record_span(const uint8_t *p, const uint8_t *end, uint8_t *type,
                          const uint8_t **body, uint64_t *blen)
{
    const uint8_t *q = p + 1;
    *type = p[0];
    if (rp_varint_get(&q, end, blen) < 0 || *blen > (uint64_t)(end - q))
        return 0;   /* cannot happen: we wrote it */
    *body = q;
    return (size_t)(q - p) + (size_t)*blen;
}

/* The largest prefix of [p, p+len) made of whole records, at most `max` bytes but
 * at least one record; its record and sample counts. Used only when a segment is
 * too big to go out in one piece (after write failures piled up pool records). */
static size_t split_prefix(const uint8_t *p, size_t len, size_t max, uint32_t *nrec,
                           uint64_t *nsamp)
{
    size_t at = 0;
    *nrec = 0;
    *nsamp = 0;
    while (at < len) {
        uint8_t type;
        const uint8_t *body;
        uint64_t blen;
        size_t span = record_span(p + at, p + len, &type, &body, &blen);
        if (!span || (at && at + span > max))
            break;
        if (type == RP_REC_SAMPLES) {
            const uint8_t *q = body, *e = body + blen;
            uint64_t kind, thread, count;
            if (rp_varint_get(&q, e, &kind) == 0 && rp_varint_get(&q, e, &thread) == 0 &&
                rp_varint_get(&q, e, &count) == 0)
                *nsamp += count;
        }
        at += span;
        (*nrec)++;
    }
    return at;
}

/* The frame preferences of every segment (rp_chunk_segment_compress). */
static void segment_prefs(LZ4F_preferences_t *prefs, size_t len)
{
    memset(prefs, 0, sizeof *prefs);
    prefs->frameInfo.blockSizeID = LZ4F_max256KB;
    prefs->frameInfo.blockMode = LZ4F_blockLinked;
    prefs->frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    prefs->frameInfo.contentSize = len;
}

size_t rp_chunk_segment_bound(size_t len)
{
    LZ4F_preferences_t prefs;
    segment_prefs(&prefs, len);
    return LZ4F_compressFrameBound(len, &prefs);
}

size_t rp_chunk_segment_compress(void *dst, size_t cap, const void *src, size_t len)
{
    LZ4F_preferences_t prefs;
    segment_prefs(&prefs, len);
    size_t c = LZ4F_compressFrame(dst, cap, src, len, &prefs);
    return LZ4F_isError(c) ? 0 : c;
}

/* Compress `len` bytes of records and write them as one segment at good_len. */
static int write_segment(struct rp_chunk_writer *w, const uint8_t *data, size_t len,
                         uint32_t nrec, uint32_t flags)
{
    size_t bound = rp_chunk_segment_bound(len);
    w->out.len = 0;
    if (rp_wr_buf_grow(&w->out, RP_SEG_HEADER_LEN + bound) < 0)
        return -1;
    uint8_t *h = w->out.p;
    size_t c = rp_chunk_segment_compress(h + RP_SEG_HEADER_LEN, bound, data, len);
    if (c == 0) {
        errno = ENOMEM;     /* only a too-small bound could do this              */
        return -1;
    }
    memcpy(h, RP_SEG_MAGIC, 4);
    rp_put_le32(h + 4, flags);
    rp_put_le32(h + 8, w->seq++);
    rp_put_le32(h + 12, (uint32_t)len);
    rp_put_le32(h + 16, (uint32_t)c);
    rp_put_le32(h + 20, nrec);
    int have_time = w->t_first <= w->t_last;
    rp_put_le64(h + 24, have_time ? w->t_first : 0);
    rp_put_le64(h + 32, have_time ? w->t_last : 0);
    rp_put_le32(h + 40, 0);
    rp_put_le32(h + 44, rp_crc32c(0, h, 44));

    if (w->need_truncate && ftruncate(w->fd, (off_t)w->good_len) == 0)
        w->need_truncate = 0;
    if (rp_wr_pwrite_all(w->fd, h, RP_SEG_HEADER_LEN + c, w->good_len) < 0) {
        int e = errno;
        if (ftruncate(w->fd, (off_t)w->good_len) < 0)
            w->need_truncate = 1;
        errno = e;
        return -1;
    }
    w->good_len += RP_SEG_HEADER_LEN + c;
    return 0;
}

/* Keep only the pool records of [from, seg.len), moved to the buffer's start. */
static void keep_pools(struct rp_chunk_writer *w, size_t from)
{
    uint8_t *p = w->seg.p;
    size_t at = from, out = 0;
    uint32_t kept = 0;
    while (at < w->seg.len) {
        uint8_t type;
        const uint8_t *body;
        uint64_t blen;
        size_t span = record_span(p + at, p + w->seg.len, &type, &body, &blen);
        if (!span)
            break;
        if ((type >= RP_REC_STRING && type <= RP_REC_KIND) || type == RP_REC_VTHREAD) {
            memmove(p + out, p + at, span);
            out += span;
            kept++;
        }
        at += span;
    }
    w->seg.len = out;
    w->seg_records = kept;
}

/* Move the samples of failed writes into the lost.write counter, if memory for
 * its name and slot can be had now; else they wait in lost_write_pending. */
static void settle_lost_write(struct rp_chunk_writer *w)
{
    if (!w->lost_write_pending)
        return;
    uint32_t nid = rp_chunk_cstring(w, RP_COUNTER_LOST_WRITE);
    if (nid && rp_wr_counter_add(w, nid, w->lost_write_pending) == 0)
        w->lost_write_pending = 0;
}

/*
 * End the open segment: close the batch, add the counters, write. Normally one
 * segment; if write failures have piled up more than the soft maximum of pool
 * records, the buffer goes out as several segments split at record boundaries.
 * The COUNTER records always go in the last part: if an earlier part were written
 * with some of them and a later part failed, those counters would be on disk and
 * still held (and carried or written again).
 */
int rp_wr_flush_segment(struct rp_chunk_writer *w, uint32_t flags)
{
    if (rp_wr_close_batch(w) < 0)
        return -1;
    settle_lost_write(w);
    size_t mark = w->seg.len;
    uint32_t mark_records = w->seg_records;
    for (uint32_t i = 0; i < w->nctr; i++) {
        if (!w->ctr[i].value)
            continue;
        uint64_t f[2] = {w->ctr[i].name, w->ctr[i].value};
        if (rp_wr_emit(w, RP_REC_COUNTER, f, 2, NULL, 0) < 0) {
            w->seg.len = mark;
            w->seg_records = mark_records;
            return -1;
        }
    }
    if (w->seg.len == 0 && !(flags & RP_SEG_LAST))
        return 0;

    size_t done = 0;
    uint32_t recs_done = 0;
    uint64_t samples_done = 0;
    for (;;) {
        size_t len = w->seg.len - done, plen = len;
        uint32_t nrec = w->seg_records - recs_done;
        uint64_t nsamp = w->seg_samples - samples_done;
        if (len > RP_CHUNK_SEGMENT_SOFT_MAX && mark > done)
            plen = split_prefix(w->seg.p + done, mark - done, RP_CHUNK_SEGMENT_SOFT_MAX,
                                &nrec, &nsamp);
        int last = plen == len;
        if (write_segment(w, w->seg.p + done, plen, nrec, last ? flags : 0) < 0) {
            int e = errno;
            uint64_t lost = w->seg_samples - samples_done;
            w->st.segments_failed++;
            w->st.samples_failed += lost;
            w->st.last_errno = e;
            keep_pools(w, done);
            w->autoflush_at = w->seg.len + RP_CHUNK_SEGMENT_SOFT_MAX;
            w->seg_samples = 0;
            reset_time(w);
            w->lost_write_pending += lost;
            settle_lost_write(w);
            errno = e;
            return -1;
        }
        w->st.segments_written++;
        w->st.raw_bytes += plen;
        w->st.samples_written += nsamp;
        done += plen;
        recs_done += nrec;
        samples_done += nsamp;
        if (last)
            break;
    }
    w->seg.len = 0;
    w->seg_records = 0;
    w->seg_samples = 0;
    w->autoflush_at = RP_CHUNK_SEGMENT_SOFT_MAX;
    reset_time(w);
    for (uint32_t i = 0; i < w->nctr; i++)
        w->ctr[i].value = 0;
    return 0;
}

int rp_chunk_flush(struct rp_chunk_writer *w)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    return rp_wr_flush_segment(w, 0);
}
