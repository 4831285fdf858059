/* tests/agent/unwind_peer.h — test_unwind's second object (unwind_peer.c). */
#ifndef RINGPROF_TESTS_UNWIND_PEER_H
#define RINGPROF_TESTS_UNWIND_PEER_H

#include <stdint.h>

/* back(depth - 1, ...): one frame of the chain in this object. */
uint64_t rp_peer_chain(int depth, uint64_t x, uint64_t (*back)(int, uint64_t));
/* Leaf work in libm (sin, exp, pow, log1p) and in libz (compress2 of n bytes). */
uint64_t rp_peer_math(uint64_t x);
uint64_t rp_peer_zlib(uint64_t x, unsigned char *in, unsigned char *out, unsigned long n);
/* A few instructions, for a loop that spends much of its time in PLT stubs. */
uint64_t rp_peer_tiny(uint64_t x);

#endif
