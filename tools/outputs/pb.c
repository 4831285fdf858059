/*
 * tools/outputs/pb.c — protocol-buffers encoding into growable buffers, and a gzip stream
 * over a FILE (see pb.h for the contract).
 *
 * The wire format is small enough to write by hand: a field is a key (field
 * number << 3 | wire type) in a varint, then a varint (type 0) or a length varint
 * and that many bytes (type 2), or eight bytes (type 1, fixed64: OTLP's times).
 * Nothing here needs type 5 (fixed32).
 * Gzip is zlib's deflate with a gzip wrapper (windowBits 15 + 16), fed in pieces
 * and drained through a fixed 64 KiB buffer, so the output side uses constant
 * memory however large the profile is.
 */
#include "pb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ringprof/utf8.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

void rp_pb_init(struct rp_pb *b)
{
    memset(b, 0, sizeof *b);
}

void rp_pb_free(struct rp_pb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void rp_pb_reset(struct rp_pb *b)
{
    b->len = 0;
}

/* Make room for `more` bytes. @return 0, or -1 (and b->oom set). */
static int reserve(struct rp_pb *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->cap - b->len >= more)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void rp_pb_varint(struct rp_pb *b, uint64_t v)
{
    if (reserve(b, 10))
        return;
    while (v >= 0x80) {
        b->p[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (uint8_t)v;
}

static void key(struct rp_pb *b, uint32_t field, unsigned wire_type)
{
    rp_pb_varint(b, (uint64_t)field << 3 | wire_type);
}

void rp_pb_uint64(struct rp_pb *b, uint32_t field, uint64_t v)
{
    if (!v)
        return;
    key(b, field, WT_VARINT);
    rp_pb_varint(b, v);
}

void rp_pb_int64(struct rp_pb *b, uint32_t field, int64_t v)
{
    rp_pb_uint64(b, field, (uint64_t)v);
}

void rp_pb_bytes(struct rp_pb *b, uint32_t field, const void *data, size_t len)
{
    key(b, field, WT_LEN);
    rp_pb_varint(b, len);
    if (len && !reserve(b, len)) {
        memcpy(b->p + b->len, data, len);
        b->len += len;
    }
}

void rp_pb_string(struct rp_pb *b, uint32_t field, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0, j, out = 0;
    uint32_t cp;
    while (k < len && (j = rp_utf8_seq(u + k, len - k, &cp)) != 0)
        k += j;
    if (k == len) {                    /* the common case: valid as it is        */
        rp_pb_bytes(b, field, s, len);
        return;
    }
    for (k = 0; k < len; k += j ? j : 1) {
        j = rp_utf8_seq(u + k, len - k, &cp);
        out += j ? j : sizeof RP_UTF8_REPLACEMENT - 1;
    }
    key(b, field, WT_LEN);
    rp_pb_varint(b, out);
    if (reserve(b, out))
        return;
    for (k = 0; k < len; k += j ? j : 1) {
        j = rp_utf8_seq(u + k, len - k, &cp);
        if (j)
            memcpy(b->p + b->len, u + k, j);
        else
            memcpy(b->p + b->len, RP_UTF8_REPLACEMENT, sizeof RP_UTF8_REPLACEMENT - 1);
        b->len += j ? j : sizeof RP_UTF8_REPLACEMENT - 1;
    }
}

void rp_pb_fixed64(struct rp_pb *b, uint32_t field, uint64_t v)
{
    if (!v)
        return;
    key(b, field, WT_I64);
    if (reserve(b, 8))
        return;
    for (int i = 0; i < 8; i++)
        b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

void rp_pb_msg(struct rp_pb *b, uint32_t field, const struct rp_pb *sub)
{
    if (sub->oom) {
        b->oom = 1;
        return;
    }
    rp_pb_bytes(b, field, sub->p, sub->len);
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void rp_pb_packed(struct rp_pb *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (!n)
        return;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += varint_len(v[i]);
    key(b, field, WT_LEN);
    rp_pb_varint(b, len);
    if (reserve(b, len))
        return;
    for (size_t i = 0; i < n; i++)
        rp_pb_varint(b, v[i]);
}

/* ------------------------------------------------------------------- gzip -- */

#define GZ_CHUNK (64u * 1024)

struct rp_gz {
    z_stream zs;
    FILE *out;
    uint64_t bytes_in;
    int err;                  /* first errno seen; 0: none                       */
    unsigned char buf[GZ_CHUNK];
};

struct rp_gz *rp_gz_open(FILE *out, int level)
{
    struct rp_gz *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    z->out = out;
    /* windowBits 15 + 16: a gzip header and trailer instead of zlib's. memLevel 8
     * is zlib's default (about 256 KiB of state). */
    if (deflateInit2(&z->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(z);
        return NULL;
    }
    return z;
}

/* Run deflate with `flush` until it has consumed its input (and, for Z_FINISH,
 * written the trailer), writing every full or final buffer to the file. */
static void pump(struct rp_gz *z, int flush)
{
    for (;;) {
        z->zs.next_out = z->buf;
        z->zs.avail_out = GZ_CHUNK;
        int rc = deflate(&z->zs, flush);
        if (rc == Z_STREAM_ERROR) {
            z->err = z->err ? z->err : EIO;
            return;
        }
        size_t have = GZ_CHUNK - z->zs.avail_out;
        if (have && fwrite(z->buf, 1, have, z->out) != have) {
            z->err = z->err ? z->err : (errno ? errno : EIO);
            return;
        }
        if (flush == Z_FINISH ? rc == Z_STREAM_END
                              : (z->zs.avail_in == 0 && z->zs.avail_out != 0))
            return;
    }
}

void rp_gz_write(struct rp_gz *z, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len && !z->err) {
        /* avail_in is a uInt: feed at most 1 GiB at a time. */
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        z->zs.next_in = (unsigned char *)p;   /* zlib's API is not const        */
        z->zs.avail_in = n;
        pump(z, Z_NO_FLUSH);
        z->bytes_in += n;
        p += n;
        len -= n;
    }
}

void rp_gz_write_pb(struct rp_gz *z, const struct rp_pb *b)
{
    if (b->oom) {
        z->err = z->err ? z->err : ENOMEM;
        return;
    }
    rp_gz_write(z, b->p, b->len);
}

uint64_t rp_gz_bytes_in(const struct rp_gz *z)
{
    return z->bytes_in;
}

int rp_gz_finish(struct rp_gz *z)
{
    if (!z) {
        errno = ENOMEM;
        return -1;
    }
    if (!z->err) {
        z->zs.next_in = NULL;
        z->zs.avail_in = 0;
        pump(z, Z_FINISH);
    }
    if (!z->err && fflush(z->out) != 0)
        z->err = errno ? errno : EIO;
    deflateEnd(&z->zs);
    int err = z->err;
    free(z);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}
