/*
 * recorder/chunk_reader_segment.c — the chunk reader's segments (format:
 * ringprof/format.h).
 *
 * rp_rd_next_segment reads the 48-byte header at the reader's offset with pread,
 * checks its crc and bounds, then feeds the LZ4 frame through a 64 KiB window into
 * a raw buffer of exactly raw_len bytes (<= RP_SEG_MAX_RAW), which the records
 * (chunk_reader_records.c) are decoded from. A bad segment header is skipped by
 * scanning on for the next "RSEG" whose crc holds, a bad payload by jumping over it
 * (its header is trustworthy); both are reported with their file offset. The file
 * size is asked for as reading goes, so a chunk that is still being written reads
 * as far as it has been written; a segment cut short by the end of the file counts
 * as partial, not as damage, and the report says which of the three it is: a
 * ".part" a live writer holds (its flock, ringprof/recording.h), a ".part" nobody
 * holds (its writer died), or a finished name.
 *
 * One thread uses a reader (chunk_reader.h). Not async-signal-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"
#include "chunk_reader.h"
#include "crc32c.h"
#include "varint.h"

ssize_t rp_rd_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return got ? (ssize_t)got : -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static uint64_t file_size(struct rp_reader *r)
{
    struct stat sb;
    if (fstat(r->fd, &sb) < 0)
        return 0;
    return (uint64_t)sb.st_size;
}

struct seghdr {
    uint32_t flags, seq, raw_len, comp_len, records;
    uint64_t t_first, t_last;
};

/* The largest LZ4 frame a genuine payload of raw_len bytes can need: LZ4 expands
 * incompressible input by under 0.5%, plus block and frame headers. */
static uint64_t comp_bound(uint32_t raw_len)
{
    return (uint64_t)raw_len + raw_len / 16 + 4096;
}

/* The other way: one byte of an LZ4 sequence lengthens a match by at most 255
 * bytes, so no frame decodes to more than 256 times its size (headers aside, which
 * only make it less). A header claiming more was forged, and the reader does not
 * allocate its raw_len. */
#define RD_LZ4_MAX_RATIO 256u

/* @return NULL if `h` is a sound segment header (fields in *s), else the reason. */
static const char *check_header(const uint8_t *h, struct seghdr *s)
{
    if (memcmp(h, RP_SEG_MAGIC, 4))
        return "no segment header here (bad magic)";
    if (rp_crc32c(0, h, 44) != rp_get_le32(h + 44))
        return "segment header checksum mismatch";
    s->flags = rp_get_le32(h + 4);
    s->seq = rp_get_le32(h + 8);
    s->raw_len = rp_get_le32(h + 12);
    s->comp_len = rp_get_le32(h + 16);
    s->records = rp_get_le32(h + 20);
    s->t_first = rp_get_le64(h + 24);
    s->t_last = rp_get_le64(h + 32);
    if (s->raw_len > RP_SEG_MAX_RAW)
        return "segment raw_len exceeds RP_SEG_MAX_RAW";
    if (s->comp_len > comp_bound(s->raw_len))
        return "segment comp_len too large for its raw_len";
    if (s->raw_len > (uint64_t)RD_LZ4_MAX_RATIO * s->comp_len)
        return "segment raw_len too large for its comp_len (LZ4 decodes to at most 256 "
               "times its size)";
    return NULL;
}

/*
 * Scan forward from `from` for the next sound segment header. Bytes from `bad` (the
 * damaged spot) to what is found are counted as skipped. Sets r->off, or r->done at
 * the end of the file.
 */
static void resync(struct rp_reader *r, uint64_t bad, uint64_t from)
{
    uint64_t size = file_size(r), pos = from;
    while (pos + RP_SEG_HEADER_LEN <= size) {
        size_t want = size - pos < RD_IO_SIZE ? (size_t)(size - pos) : RD_IO_SIZE;
        ssize_t n = rp_rd_pread_full(r->fd, r->io, want, pos);
        if (n < RP_SEG_HEADER_LEN)
            break;
        const uint8_t *p = r->io, *last = r->io + n - RP_SEG_HEADER_LEN;
        while (p <= last && (p = memchr(p, 'R', (size_t)(last - p) + 1)) != NULL) {
            struct seghdr s;
            if (!check_header(p, &s)) {
                uint64_t at = pos + (uint64_t)(p - r->io);
                r->st.bytes_skipped += at - bad;
                rp_rd_report(r, at, 0, "found the next segment header after skipping "
                             "%llu damaged bytes", (unsigned long long)(at - bad));
                r->off = at;
                return;
            }
            p++;
        }
        pos += (uint64_t)n - (RP_SEG_HEADER_LEN - 1);
    }
    if (size > bad) {
        r->st.bytes_skipped += size - bad;
        rp_rd_report(r, bad, 0, "no segment header follows: %llu bytes skipped to the "
                     "end of the file", (unsigned long long)(size - bad));
    }
    r->done = 1;
}

enum { DZ_OK = 0, DZ_BAD = -1, DZ_SHORT = -2 };

/* Decompress the frame at `at` (comp_len bytes) into r->raw (exactly raw_len). */
static int decompress(struct rp_reader *r, uint64_t at, const struct seghdr *s,
                      const char **why)
{
    size_t need = s->raw_len ? s->raw_len : 1;
    if (need > r->rawcap) {
        uint8_t *p = realloc(r->raw, need);
        if (!p) {
            *why = "out of memory for the segment payload";
            return DZ_BAD;
        }
        r->raw = p;
        r->rawcap = need;
    }
    LZ4F_resetDecompressionContext(r->dctx);
    LZ4F_decompressOptions_t opt;
    memset(&opt, 0, sizeof opt);
    opt.stableDst = 1;
    uint64_t left = s->comp_len;
    size_t out = 0, ret = 1;
    int started = 0;
    while (left > 0 && ret != 0) {
        size_t want = left < RD_IO_SIZE ? (size_t)left : RD_IO_SIZE;
        ssize_t n = rp_rd_pread_full(r->fd, r->io, want, at);
        if (n < (ssize_t)want)
            return DZ_SHORT;
        const uint8_t *src = r->io;
        size_t srcleft = want;
        if (!started) {
            LZ4F_frameInfo_t fi;
            size_t hs = srcleft;
            ret = LZ4F_getFrameInfo(r->dctx, &fi, src, &hs);
            if (LZ4F_isError(ret)) {
                *why = "bad LZ4 frame header";
                return DZ_BAD;
            }
            if (fi.contentChecksumFlag != LZ4F_contentChecksumEnabled) {
                *why = "LZ4 frame has no content checksum";
                return DZ_BAD;
            }
            if (fi.contentSize != s->raw_len || fi.dictID != 0) {
                *why = "LZ4 frame content size differs from raw_len";
                return DZ_BAD;
            }
            src += hs;
            srcleft -= hs;
            started = 1;
        }
        while (srcleft > 0 && ret != 0) {
            size_t dsz = s->raw_len - out, ssz = srcleft;
            ret = LZ4F_decompress(r->dctx, r->raw + out, &dsz, src, &ssz, &opt);
            if (LZ4F_isError(ret)) {
                *why = LZ4F_getErrorName(ret);   /* "ERROR_contentChecksum_invalid" */
                return DZ_BAD;
            }
            if (ssz == 0 && dsz == 0) {
                *why = "LZ4 frame holds more than raw_len bytes";
                return DZ_BAD;
            }
            out += dsz;
            src += ssz;
            srcleft -= ssz;
        }
        at += want;
        left -= want;
        if (ret == 0 && (srcleft || left)) {
            *why = "bytes after the end of the LZ4 frame";
            return DZ_BAD;
        }
    }
    if (ret != 0) {
        *why = "LZ4 frame ends early";
        return DZ_BAD;
    }
    if (out != s->raw_len) {
        *why = "LZ4 frame content size differs from raw_len";
        return DZ_BAD;
    }
    return DZ_OK;
}

static int is_part(const char *path)
{
    static const char suffix[] = RP_CHUNK_SUFFIX RP_CHUNK_PART_SUFFIX;
    size_t n = strlen(path), k = sizeof suffix - 1;
    return n >= k && !strcmp(path + n - k, suffix);
}

int rp_reader_being_written(const struct rp_reader *r)
{
    if (!is_part(r->path))
        return 0;
    if (flock(r->fd, LOCK_SH | LOCK_NB) == 0) {
        flock(r->fd, LOCK_UN);
        return 0;
    }
    return errno == EWOULDBLOCK;
}

/* Why the file ends inside a segment, for the report. */
static const char *cut_reason(const struct rp_reader *r)
{
    if (rp_reader_being_written(r))
        return "a writer is still writing it";
    if (is_part(r->path))
        return "its writer stopped before finishing it (no process holds its lock: "
               "killed, or it crashed)";
    return "no writer is writing it (its writer was killed, or the file was cut short "
           "after it was written)";
}

static void partial(struct rp_reader *r, const char *what, uint64_t have, uint64_t need)
{
    r->st.segments_partial++;
    rp_rd_report(r, r->off, 0, "%s cut short by the end of the file (%llu of %llu "
                 "bytes): %s", what, (unsigned long long)have, (unsigned long long)need,
                 cut_reason(r));
    r->done = 1;
}

int rp_rd_next_segment(struct rp_reader *r, struct rp_event *ev)
{
    while (!r->done) {
        uint64_t size = file_size(r);
        if (r->after_last) {
            if (size > r->off) {
                r->st.bytes_skipped += size - r->off;
                rp_rd_report(r, r->off, 0, "%llu bytes after the last segment ignored",
                             (unsigned long long)(size - r->off));
            }
            r->done = 1;
            break;
        }
        if (r->off >= size) {
            r->done = 1;
            break;
        }
        uint8_t h[RP_SEG_HEADER_LEN];
        ssize_t n = rp_rd_pread_full(r->fd, h, sizeof h, r->off);
        if (n < (ssize_t)sizeof h) {
            partial(r, "segment header", n < 0 ? 0 : (uint64_t)n, RP_SEG_HEADER_LEN);
            break;
        }
        struct seghdr s;
        const char *why = check_header(h, &s);
        if (why) {
            r->st.segments_bad++;
            rp_rd_report(r, r->off, 0, "%s", why);
            resync(r, r->off, r->off + 1);
            continue;
        }
        uint64_t total = RP_SEG_HEADER_LEN + (uint64_t)s.comp_len;
        if (r->off + total > size) {
            partial(r, "segment", size - r->off, total);
            break;
        }
        int rc = decompress(r, r->off + RP_SEG_HEADER_LEN, &s, &why);
        if (rc == DZ_SHORT) {
            partial(r, "segment", file_size(r) - r->off, total);
            break;
        }
        if (rc == DZ_BAD) {
            r->st.segments_bad++;
            r->st.bytes_skipped += total;
            rp_rd_report(r, r->off, 0, "segment %u payload damaged: %s%s", s.seq,
                         strncmp(why, "ERROR_", 6) ? "" : "LZ4 ", why);
            r->off += total;
            continue;
        }
        r->st.segments_ok++;
        r->in_seg = 1;
        r->pos = r->raw;
        r->end = r->raw + s.raw_len;
        r->seg_off = r->off;
        r->seg_seq = s.seq;
        r->seg_records = s.records;
        r->recs_seen = 0;
        r->seg_bad = 0;
        r->seg_unresolved = 0;
        r->off += total;
        if (s.flags & RP_SEG_LAST) {
            r->st.clean_close = 1;
            r->after_last = 1;
        }
        ev->type = RP_EV_SEGMENT;
        ev->u.seg.offset = r->seg_off;
        ev->u.seg.seq = s.seq;
        ev->u.seg.flags = s.flags;
        ev->u.seg.raw_len = s.raw_len;
        ev->u.seg.comp_len = s.comp_len;
        ev->u.seg.records = s.records;
        ev->u.seg.t_first = s.t_first;
        ev->u.seg.t_last = s.t_last;
        return 1;
    }
    return 0;
}
