/*
 * tests/chunkbuild.c — building chunk files by hand (chunkbuild.h).
 */
#include "chunkbuild.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringprof/chunk.h"
#include "../recorder/crc32c.h"
#include "../recorder/varint.h"

static void reserve(struct cb_buf *b, size_t more)
{
    if (b->cap - b->n >= more)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->n < more)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        fprintf(stderr, "chunkbuild: out of memory for %zu bytes\n", cap);
        abort();
    }
    b->p = p;
    b->cap = cap;
}

void cb_free(struct cb_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void cb_u8(struct cb_buf *b, uint8_t v)
{
    reserve(b, 1);
    b->p[b->n++] = v;
}

void cb_v(struct cb_buf *b, uint64_t v)
{
    reserve(b, RP_VARINT_MAX);
    b->n += rp_varint_put(b->p + b->n, v);
}

void cb_raw(struct cb_buf *b, const void *p, size_t n)
{
    reserve(b, n);
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

void cb_fill(struct cb_buf *b, uint8_t byte, size_t n)
{
    reserve(b, n);
    memset(b->p + b->n, byte, n);
    b->n += n;
}

void cb_record(struct cb_buf *b, uint8_t type, const struct cb_buf *body)
{
    cb_u8(b, type);
    cb_v(b, body->n);
    cb_raw(b, body->p, body->n);
    b->nrec++;
}

void cb_rec(struct cb_buf *b, uint8_t type, const uint64_t *f, int nf)
{
    struct cb_buf body = {0};
    for (int i = 0; i < nf; i++)
        cb_v(&body, f[i]);
    cb_record(b, type, &body);
    cb_free(&body);
}

void cb_string(struct cb_buf *b, uint64_t id, const char *s, size_t len, uint8_t fill)
{
    cb_u8(b, RP_REC_STRING);
    cb_v(b, rp_varint_len(id) + len);
    cb_v(b, id);
    if (s)
        cb_raw(b, s, len);
    else
        cb_fill(b, fill, len);
    b->nrec++;
}

static void meta(struct cb_buf *f, const char *key, const char *value)
{
    cb_v(f, strlen(key));
    cb_raw(f, key, strlen(key));
    cb_v(f, strlen(value));
    cb_raw(f, value, strlen(value));
}

void cb_header(struct cb_buf *f, const char *recording)
{
    f->n = 0;
    cb_raw(f, RP_FILE_MAGIC, RP_FILE_MAGIC_LEN);
    uint8_t version[4];
    rp_put_le16(version, RP_FORMAT_MAJOR);
    rp_put_le16(version + 2, RP_FORMAT_MINOR);
    cb_raw(f, version, 4);
    size_t at = f->n;
    cb_fill(f, 0, 4);
    meta(f, RP_META_START_WALL, "1700000000000000000");
    meta(f, RP_META_START_MONO, "1000");
    if (recording)
        meta(f, RP_META_RECORDING, recording);
    rp_put_le32(f->p + at, (uint32_t)f->n + 4);
    uint8_t crc[4];
    rp_put_le32(crc, rp_crc32c(0, f->p, f->n));
    cb_raw(f, crc, 4);
}

void cb_segment(struct cb_buf *f, const struct cb_buf *payload, uint32_t seq,
                uint32_t flags)
{
    size_t bound = rp_chunk_segment_bound(payload->n);
    reserve(f, RP_SEG_HEADER_LEN + bound);
    uint8_t *h = f->p + f->n;
    size_t c = rp_chunk_segment_compress(h + RP_SEG_HEADER_LEN, bound, payload->p,
                                         payload->n);
    if (!c) {
        fprintf(stderr, "chunkbuild: cannot compress %zu bytes\n", payload->n);
        abort();
    }
    memcpy(h, RP_SEG_MAGIC, 4);
    rp_put_le32(h + 4, flags);
    rp_put_le32(h + 8, seq);
    rp_put_le32(h + 12, (uint32_t)payload->n);
    rp_put_le32(h + 16, (uint32_t)c);
    rp_put_le32(h + 20, payload->nrec);
    memset(h + 24, 0, 20);
    rp_put_le32(h + 44, rp_crc32c(0, h, 44));
    f->n += RP_SEG_HEADER_LEN + c;
}

int cb_write(const struct cb_buf *f, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < f->n) {
        ssize_t k = write(fd, f->p + done, f->n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = errno;
            close(fd);
            errno = k < 0 ? e : EIO;
            return -1;
        }
        done += (size_t)k;
    }
    return close(fd);
}
