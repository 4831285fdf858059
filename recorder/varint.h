/*
 * recorder/varint.h — LEB128 varints, zigzag, and little-endian fixed integers for
 * the chunk format (internal to the recorder and its tests).
 *
 * A varint is unsigned LEB128: 7 bits a byte, low group first, the high bit set on
 * every byte but the last. A 64-bit value takes at most RP_VARINT_MAX (10) bytes,
 * and the tenth byte may only be 0 or 1. A decoder that accepted an eleventh byte, or
 * bits beyond 64, would let a damaged file smuggle values past the bounds checks
 * that follow, so both are errors here. Non-minimal encodings ("0x80 0x00" for 0)
 * are accepted: they are unambiguous and harmless.
 *
 * zigzag maps signed to unsigned so that small magnitudes stay short: 0, -1, 1, -2,
 * 2 ... become 0, 1, 2, 3, 4 ...
 *
 * Encoders write into a buffer the caller has sized (RP_VARINT_MAX bytes per
 * varint is always enough); decoders never read at or past `end` and report
 * truncation and overlong input as -1 without moving the cursor.
 * All functions are pure: any thread, async-signal-safe.
 */
#ifndef RINGPROF_VARINT_H
#define RINGPROF_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RP_VARINT_MAX 10

static inline size_t rp_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Write `v` at `p` (room for RP_VARINT_MAX bytes required). @return bytes written. */
static inline size_t rp_varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/*
 * rp_varint_put_fast: the same encoding without a loop or data-dependent branches
 * for values below 2^35 (larger ones take the loop), for the writer's per-sample path where varint lengths
 * vary at random (stack ids of 1 or 2 bytes) and a mispredicted branch costs more
 * than the arithmetic. It stores 8 bytes at `p` whatever the length (room for
 * RP_VARINT_MAX bytes required, as for rp_varint_put). @return bytes encoded.
 */
static inline size_t rp_varint_put_fast(uint8_t *p, uint64_t v)
{
    if (__builtin_expect(v >> 35 != 0, 0))
        return rp_varint_put(p, v);
    size_t len = (size_t)(64 - __builtin_clzll(v | 1) + 6) / 7;       /* 1..5 */
    uint64_t x = (v & 0x7full) | (v << 1 & 0x7f00ull) | (v << 2 & 0x7f0000ull) |
                 (v << 3 & 0x7f000000ull) | (v << 4 & 0x7f00000000ull);
    x |= 0x80808080ull & ((1ull << (8 * (len - 1))) - 1);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    memcpy(p, &x, 8);
    return len;
}

/* Bounded variant: @return bytes written, or 0 if [p, end) is too small. */
static inline size_t rp_varint_put_checked(uint8_t *p, const uint8_t *end, uint64_t v)
{
    if (end < p || (size_t)(end - p) < rp_varint_len(v))
        return 0;
    return rp_varint_put(p, v);
}

/*
 * rp_varint_get: decode one varint from *pp, never reading at or past `end`.
 * @return 0 and advances *pp, or -1 (truncated, more than 10 bytes, or more than 64
 * bits) leaving *pp where it was.
 */
static inline int rp_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return -1;
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return -1;              /* the tenth byte holds bit 63 only         */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -1;                      /* an eleventh byte would be needed         */
}

/* A varint that must fit in 32 bits (pool ids, lengths): -1 if it does not. */
static inline int rp_varint_get32(const uint8_t **pp, const uint8_t *end, uint32_t *out)
{
    const uint8_t *save = *pp;
    uint64_t v;
    if (rp_varint_get(pp, end, &v) < 0)
        return -1;
    if (v > UINT32_MAX) {
        *pp = save;
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static inline uint64_t rp_zigzag_enc(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t rp_zigzag_dec(uint64_t u)
{
    return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

/* Little-endian fixed-width integers, independent of the host's byte order. */
static inline void rp_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void rp_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void rp_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t rp_get_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t rp_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t rp_get_le64(const uint8_t *p)
{
    return (uint64_t)rp_get_le32(p) | (uint64_t)rp_get_le32(p + 4) << 32;
}

#endif /* RINGPROF_VARINT_H */
