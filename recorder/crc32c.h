/*
 * recorder/crc32c.h — CRC-32C (Castagnoli), internal to the recorder and its tests.
 *
 * The chunk format checks its file header and every segment header with CRC-32C
 * (polynomial 0x1EDC6F41, reflected 0x82F63B78, initial value and final xor
 * 0xFFFFFFFF): the CRC of "123456789" is 0xE3069283. Castagnoli rather than the zlib
 * polynomial because its Hamming distance is better at the short lengths checked
 * here (48-byte segment headers), and because CPUs that matter have an instruction
 * for it should the table ever show up in a profile. It does not: it covers only
 * headers, a few hundred bytes per flush, so one 1 KiB table and a byte loop will do.
 *
 * Pure function, no state: callable from any thread, async-signal-safe.
 */
#ifndef RINGPROF_CRC32C_H
#define RINGPROF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * rp_crc32c: extend `crc` (the value returned for the preceding bytes, 0 to start)
 * over `len` bytes at `buf`. rp_crc32c(0, "123456789", 9) == 0xE3069283, and
 * rp_crc32c(rp_crc32c(0, a, n), b, m) equals the CRC of a followed by b.
 */
uint32_t rp_crc32c(uint32_t crc, const void *buf, size_t len);

#endif /* RINGPROF_CRC32C_H */
