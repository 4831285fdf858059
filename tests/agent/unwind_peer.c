/*
 * tests/agent/unwind_peer.c — the second object of test_unwind's call chains.
 *
 * test_unwind's chain alternates between its executable and this library (each
 * call into here goes through the executable's PLT, each call back through a
 * function pointer), so a walk crosses object boundaries at every other frame.
 * Built with frame pointers, unlike the executable: the chain's frames alternate
 * between rbp-based and rsp-based CFAs. The leaf work here runs in libm and libz.
 */
#include <math.h>
#include <stdint.h>
#include <zlib.h>

#include "unwind_peer.h"

uint64_t rp_peer_chain(int depth, uint64_t x, uint64_t (*back)(int, uint64_t))
{
    volatile uint64_t keep = back(depth - 1, x + (uint64_t)depth);
    return keep;
}

uint64_t rp_peer_math(uint64_t x)
{
    double acc = (double)(x & 1023);
    for (int i = 0; i < 20000; i++)
        acc = sin(acc) + exp(fmod(acc, 3.0)) + pow(1.0001, acc) + log1p(fabs(acc));
    return (uint64_t)acc + x;
}

uint64_t rp_peer_zlib(uint64_t x, unsigned char *in, unsigned char *out, unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        in[i] = (unsigned char)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 59);
    uLongf len = compressBound(n);
    compress2(out, &len, in, n, 9);
    return x + len;
}

uint64_t rp_peer_tiny(uint64_t x)
{
    return x * 3 + 1;
}
