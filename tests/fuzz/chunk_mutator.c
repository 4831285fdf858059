/*
 * tests/fuzz/chunk_mutator.c — a structure-aware libFuzzer mutator for chunk files.
 *
 * A chunk's header and every segment header carry a crc32c, and every segment's
 * records sit inside an LZ4 frame with a content checksum (format.h). Byte-level
 * mutation of such a file almost always ends at the first check, so the record
 * decoders, the pools and everything the tool builds on them would go unexplored.
 * This mutator (LLVMFuzzerCustomMutator, libFuzzer builds only) keeps the inputs
 * real chunk files, so every crash input reproduces with `ringprof summary FILE`,
 * and picks one of:
 *   - plain byte mutation (1 in 4): the framing itself — magic, lengths, crcs,
 *     truncation, resynchronisation after damage;
 *   - byte mutation, then every header crc made valid again (1 in 8): lengths and
 *     fields that pass their crc but lie;
 *   - one segment's records, decompressed, mutated and compressed again into a
 *     valid frame with valid lengths and crc (the rest): the record decoders;
 *     the file header's metadata is one of the candidates.
 * A mutation that does not fit in max_size falls back to plain byte mutation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"
#include "ringprof/format.h"
#include "../../recorder/crc32c.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);

/* Payloads mutated this way stay small: the seeds are a few KB, and a large
 * payload only slows every execution down. */
#define RAW_CAP (256u << 10)
#define MAX_SEGS 256

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

struct seg {
    size_t off, comp;   /* header offset; LZ4 frame bytes after the 48-byte header */
};

/* The file header's length, or 0 if the input does not start like a chunk. */
static size_t header_len(const uint8_t *d, size_t n)
{
    if (n < RP_FILE_HEADER_FIXED + 4 || memcmp(d, RP_FILE_MAGIC, RP_FILE_MAGIC_LEN))
        return 0;
    size_t h = le32(d + 12);
    return h >= RP_FILE_HEADER_FIXED + 4 && h <= n ? h : 0;
}

/* Segments whose header (magic and a length that fits) can be found, in order. */
static size_t find_segments(const uint8_t *d, size_t n, size_t from, struct seg *s)
{
    size_t k = 0;
    for (size_t off = from; off + RP_SEG_HEADER_LEN <= n && k < MAX_SEGS;) {
        size_t comp = le32(d + off + 16);
        if (memcmp(d + off, RP_SEG_MAGIC, 4) || comp > n - off - RP_SEG_HEADER_LEN) {
            off++;
            continue;
        }
        s[k].off = off;
        s[k++].comp = comp;
        off += RP_SEG_HEADER_LEN + comp;
    }
    return k;
}

/* Make the file header's crc and every found segment header's crc valid. */
static void fix_crcs(uint8_t *d, size_t n)
{
    size_t h = header_len(d, n);
    if (!h)
        return;
    put_le32(d + h - 4, rp_crc32c(0, d, h - 4));
    static struct seg s[MAX_SEGS];
    size_t k = find_segments(d, n, h, s);
    for (size_t i = 0; i < k; i++)
        put_le32(d + s[i].off + 44, rp_crc32c(0, d + s[i].off, 44));
}

/* Replace d[at, at+old) by rep[0, len). @return the new size, or 0 if over max. */
static size_t splice(uint8_t *d, size_t n, size_t max, size_t at, size_t old,
                     const uint8_t *rep, size_t len)
{
    if (n - old + len > max)
        return 0;
    memmove(d + at + len, d + at + old, n - at - old);
    memcpy(d + at, rep, len);
    return n - old + len;
}

/* Mutate the metadata between the fixed header and the crc. */
static size_t mutate_meta(uint8_t *d, size_t n, size_t max, size_t h)
{
    size_t len = h - RP_FILE_HEADER_FIXED - 4, cap = len * 2 + 64;
    uint8_t *m = malloc(RP_FILE_HEADER_FIXED + cap + 4);
    if (!m)
        return 0;
    memcpy(m, d, RP_FILE_HEADER_FIXED);
    memcpy(m + RP_FILE_HEADER_FIXED, d + RP_FILE_HEADER_FIXED, len);
    len = LLVMFuzzerMutate(m + RP_FILE_HEADER_FIXED, len, cap);
    size_t nh = RP_FILE_HEADER_FIXED + len + 4;
    put_le32(m + 12, (uint32_t)nh);
    put_le32(m + nh - 4, rp_crc32c(0, m, nh - 4));
    size_t r = splice(d, n, max, 0, h, m, nh);
    free(m);
    return r;
}

/* Decompress one segment's frame, mutate the records, compress them again. */
static size_t mutate_segment(uint8_t *d, size_t n, size_t max, const struct seg *s)
{
    uint8_t *hdr = d + s->off;
    size_t raw_len = le32(hdr + 12), cap = RAW_CAP;
    if (raw_len > cap / 2)
        return 0;
    uint8_t *raw = malloc(cap), *out = NULL;
    LZ4F_dctx *dctx = NULL;
    size_t r = 0;
    if (!raw || LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        goto done;
    size_t dsz = cap, ssz = s->comp;
    size_t ret = LZ4F_decompress(dctx, raw, &dsz, hdr + RP_SEG_HEADER_LEN, &ssz, NULL);
    if (LZ4F_isError(ret) || ret != 0)
        goto done;   /* not a whole, valid frame: leave it to byte mutation */
    size_t len = LLVMFuzzerMutate(raw, dsz, cap);
    size_t bound = rp_chunk_segment_bound(len);   /* as the writer compresses */
    if (!(out = malloc(RP_SEG_HEADER_LEN + bound)))
        goto done;
    size_t c = rp_chunk_segment_compress(out + RP_SEG_HEADER_LEN, bound, raw, len);
    if (c == 0)
        goto done;
    memcpy(out, hdr, RP_SEG_HEADER_LEN);
    put_le32(out + 12, (uint32_t)len);
    put_le32(out + 16, (uint32_t)c);
    put_le32(out + 44, rp_crc32c(0, out, 44));
    r = splice(d, n, max, s->off, RP_SEG_HEADER_LEN + s->comp, out,
               RP_SEG_HEADER_LEN + c);
done:
    LZ4F_freeDecompressionContext(dctx);
    free(raw);
    free(out);
    return r;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed)
{
    static struct seg s[MAX_SEGS];
    size_t h = header_len(data, size);
    unsigned how = seed % 8;
    if (h && how >= 3) {
        size_t k = find_segments(data, size, h, s);
        size_t pick = (seed / 8) % (k + 1);
        size_t r = pick == k ? mutate_meta(data, size, max_size, h)
                             : mutate_segment(data, size, max_size, &s[pick]);
        if (r)
            return r;
    }
    size_t r = LLVMFuzzerMutate(data, size, max_size);
    if (how == 2)
        fix_crcs(data, r);
    return r;
}
