/*
 * recorder/chunk_reader.c — streams one chunk file (format: ringprof/format.h).
 *
 * The reader holds one segment at a time: it reads the 48-byte header with pread,
 * checks its crc and bounds, then feeds the LZ4 frame through a 64 KiB window into
 * a raw buffer of exactly raw_len bytes (<= RP_SEG_MAX_RAW), and decodes records
 * from it as the caller asks for events. Pools are kept for the whole file (an
 * arena of NUL-terminated copies and per-pool arrays indexed by id); samples are
 * not. Memory is therefore the pools plus one segment, whatever the file says,
 * and the pools are held to a budget in proportion to the bytes read so far
 * (chunk.h, RP_READER_POOL_FACTOR): LZ4 packs up to 255 bytes into one, so a
 * file's definitions alone could otherwise ask for hundreds of times its size.
 *
 * Every length, count and id read from the file is checked against what remains of
 * the enclosing header, record or body before it is used, every limit the writer
 * keeps (RP_CHUNK_STRING_MAX, RP_CHUNK_STACK_MAX) is enforced again, and a SAMPLES
 * record is decoded once to validate it before any of its samples is delivered, so
 * a record yields all its samples or none. Damage is reported through the
 * diagnostic callback with the file offset and skipped: a bad segment header by
 * scanning on for the next "RSEG" whose crc holds, a bad payload by jumping over it
 * (its header is trustworthy), a bad record by its own body_len; references to ids
 * the chunk never defined are counted, and summed up in one line per segment (the
 * callers' tables must not grow to such an id). Reading uses pread at offsets
 * and asks for the file size as it goes, so a chunk that is still being written
 * reads as far as it has been written; a segment cut short by the end of the file
 * counts as partial, not as damage, and its report says which of the three it
 * is: a ".part" a live writer holds (its flock, ringprof/recording.h), a ".part"
 * nobody holds (its writer died), or a finished name (an orphan recovered after
 * its writer was killed, or a file cut short after it was written).
 *
 * This file opens the file and reads its header; the pools are
 * chunk_reader_pools.c, the segments chunk_reader_segment.c, the records and
 * rp_reader_next chunk_reader_records.c; their shared state is chunk_reader.h.
 *
 * Not thread-safe; one thread uses a reader. Not async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"
#include "chunk_reader.h"
#include "crc32c.h"
#include "varint.h"
#include "metanum.h"

void rp_rd_report(struct rp_reader *r, uint64_t off, int fatal, const char *fmt, ...)
{
    if (!r->diag)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->diag(r->arg, r->path, off, r->msg, fatal);
}

/* ------------------------------------------------------------ the header -- */

/* Read and check the fixed part of the file header: magic, major, length.
 * @return 0 with the header's length in *len, or -1 (reported). */
static int read_fixed(struct rp_reader *r, uint32_t *len)
{
    uint8_t fixed[RP_FILE_HEADER_FIXED];
    ssize_t n = rp_rd_pread_full(r->fd, fixed, sizeof fixed, 0);
    if (n < 0) {
        rp_rd_report(r, RP_READER_NO_OFFSET, 1, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (n == 0) {
        rp_rd_report(r, RP_READER_NO_OFFSET, 1, "empty file: not a ringprof chunk");
        return -1;
    }
    if (memcmp(fixed, RP_FILE_MAGIC, (size_t)n < RP_FILE_MAGIC_LEN ? (size_t)n
                                                                 : RP_FILE_MAGIC_LEN)) {
        rp_rd_report(r, 0, 1, "not a ringprof chunk (bad magic)");
        return -1;
    }
    if ((size_t)n < sizeof fixed) {
        rp_rd_report(r, 0, 1, "file header cut short: %zd of at least %u bytes", n,
                     RP_FILE_HEADER_FIXED + 4);
        return -1;
    }
    uint16_t major = rp_get_le16(fixed + 8);
    r->minor = rp_get_le16(fixed + 10);
    *len = rp_get_le32(fixed + 12);
    if (major != RP_FORMAT_MAJOR) {
        rp_rd_report(r, 8, 1, "format major %u not supported (this reader reads %u)",
                     major, RP_FORMAT_MAJOR);
        return -1;
    }
    if (*len < RP_FILE_HEADER_FIXED + 4 || *len > RP_FILE_HEADER_MAX) {
        rp_rd_report(r, 12, 1, "file header length %u out of range [%u, %u]", *len,
                     RP_FILE_HEADER_FIXED + 4, RP_FILE_HEADER_MAX);
        return -1;
    }
    return 0;
}

/* The metadata of the header h (len bytes, crc checked) into r->meta: counted,
 * then copied into the arena. @return 0, or -1 (reported). */
static int read_meta(struct rp_reader *r, const uint8_t *h, uint32_t len)
{
    const uint8_t *p, *end = h + len - 4;
    size_t cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        p = h + RP_FILE_HEADER_FIXED;
        size_t i = 0;
        while (p < end) {
            const uint8_t *kv[2];
            uint32_t l[2];
            for (int j = 0; j < 2; j++) {
                if (rp_varint_get32(&p, end, &l[j]) < 0 || l[j] > (size_t)(end - p)) {
                    rp_rd_report(r, (uint64_t)(p - h), 1,
                                 "file header metadata malformed");
                    return -1;
                }
                kv[j] = p;
                p += l[j];
            }
            if (pass) {
                r->meta[i].key = rp_rd_arena_str(r, kv[0], l[0]);
                r->meta[i].value = rp_rd_arena_str(r, kv[1], l[1]);
                if (!r->meta[i].key || !r->meta[i].value) {
                    rp_rd_report(r, RP_READER_NO_OFFSET, 1, "out of memory");
                    return -1;
                }
            }
            i++;
        }
        if (!pass) {
            cap = i;
            r->meta = calloc(cap ? cap : 1, sizeof *r->meta);
            if (!r->meta) {
                rp_rd_report(r, RP_READER_NO_OFFSET, 1, "out of memory");
                return -1;
            }
        }
    }
    r->nmeta = cap;
    return 0;
}

static int read_file_header(struct rp_reader *r)
{
    uint32_t len;
    if (read_fixed(r, &len) < 0)
        return -1;
    uint8_t *h = malloc(len);
    if (!h) {
        rp_rd_report(r, RP_READER_NO_OFFSET, 1, "out of memory");
        return -1;
    }
    ssize_t n = rp_rd_pread_full(r->fd, h, len, 0);
    if (n < (ssize_t)len) {
        rp_rd_report(r, 12, 1, "file header cut short: its length field says %u bytes, "
                     "the file has %zd", len, n);
        free(h);
        return -1;
    }
    if (rp_crc32c(0, h, len - 4) != rp_get_le32(h + len - 4)) {
        rp_rd_report(r, len - 4, 1, "file header checksum mismatch");
        free(h);
        return -1;
    }
    int rc = read_meta(r, h, len);
    free(h);
    if (rc < 0)
        return -1;
    r->off = len;
    const char *mono = rp_reader_meta(r, RP_META_START_MONO);
    if (rp_meta_parse_u64(mono, &r->start_mono) < 0) {
        r->start_mono = 0;
        rp_rd_report(r, RP_FILE_HEADER_FIXED, 0,
                     "file header has no valid %s: times are relative to the chunk start",
                     RP_META_START_MONO);
    }
    return 0;
}

struct rp_reader *rp_reader_open(const char *path, rp_reader_diag_fn diag, void *arg)
{
    struct rp_reader *r = calloc(1, sizeof *r);
    if (!r) {
        if (diag)
            diag(arg, path, RP_READER_NO_OFFSET, "out of memory", 1);
        return NULL;
    }
    r->fd = -1;
    r->diag = diag;
    r->arg = arg;
    rp_rd_pools_init(r);
    r->path = strdup(path ? path : "");
    if (!r->path) {
        if (diag)
            diag(arg, path, 0, "out of memory", 1);
        free(r);
        return NULL;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        rp_rd_report(r, RP_READER_NO_OFFSET, 1, "cannot open: %s", strerror(errno));
        rp_reader_close(r);
        return NULL;
    }
    if (read_file_header(r) < 0) {
        rp_reader_close(r);
        return NULL;
    }
    r->io = malloc(RD_IO_SIZE);
    if (!r->io || LZ4F_isError(LZ4F_createDecompressionContext(&r->dctx, LZ4F_VERSION))) {
        rp_rd_report(r, RP_READER_NO_OFFSET, 1, "out of memory");
        rp_reader_close(r);
        return NULL;
    }
    return r;
}

void rp_reader_close(struct rp_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    if (r->dctx)
        LZ4F_freeDecompressionContext(r->dctx);
    free(r->io);
    free(r->raw);
    free(r->meta);
    rp_rd_pools_free(r);
    free(r->path);
    free(r);
}

/* -------------------------------------------------------------- look-ups -- */

const char *rp_reader_meta(const struct rp_reader *r, const char *key)
{
    for (size_t i = 0; i < r->nmeta; i++)
        if (strcmp(r->meta[i].key, key) == 0)
            return r->meta[i].value;
    return NULL;
}

const struct rp_kv *rp_reader_meta_all(const struct rp_reader *r, size_t *n)
{
    *n = r->nmeta;
    return r->meta;
}

uint32_t rp_reader_format_minor(const struct rp_reader *r)
{
    return r->minor;
}

void rp_reader_stats(const struct rp_reader *r, struct rp_reader_stats *out)
{
    *out = r->st;
    out->pool_bytes = r->pool_bytes;
}

const char *rp_reader_path(const struct rp_reader *r)
{
    return r->path;
}
