/*
 * ringprof/hash.h — the one 64-bit mixer ringprof's hash tables use.
 *
 * rp_mix64 is MurmurHash3's fmix64 finaliser: every input bit affects every output
 * bit, so a table may index by the low bits of the result. It is a pure function
 * (async-signal-safe). Hash values are never written to a file, so the choice can
 * change without touching the chunk format.
 */
#ifndef RINGPROF_HASH_H
#define RINGPROF_HASH_H

#include <stdint.h>

static inline uint64_t rp_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

#endif
