/*
 * tools/model/idmap.h — an open-addressing hash map from 64-bit keys to the 32-bit
 * index of an element in the caller's own array: how the tool finds a thread by
 * its os tid, a monitor by its class, a site by its methods, without scanning.
 *
 * A file decides how many distinct threads, classes and names it holds, so a
 * look-up by scan costs what the file wants it to: 300 000 threads in a 9 MB
 * chunk made `ringprof summary` quadratic and ran past two minutes. With the map a
 * look-up is O(1) whatever the file says. Any key is allowed (0 and UINT64_MAX
 * included: the key is an os tid, an id pair, anything a file wrote); a
 * composite key must be packed into 64 bits exactly (two 32-bit indexes), never
 * hashed into them, or two elements could share a slot. Linear probing,
 * power-of-two capacity, grown at half full; no deletion (the tool only adds).
 *
 * Allocation failure is fatal, as everywhere in the tool (model/xalloc.h). The
 * agent has its own map (src/core/u64map.h), which reports ENOMEM instead: a JVM must
 * not exit. Single-threaded; not async-signal-safe.
 */
#ifndef RINGPROF_TOOLS_IDMAP_H
#define RINGPROF_TOOLS_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define RP_IDMAP_NONE UINT32_MAX   /* no element: an empty slot, a key not found */

/* A zeroed struct is an empty map; rp_idmap_free releases it (and empties it). */
struct rp_idmap {
    uint64_t *key;
    uint32_t *val;        /* RP_IDMAP_NONE in an empty slot                      */
    size_t mask, used;    /* capacity - 1 (0 before the first put), entries     */
};

/* The value stored for `key`, or RP_IDMAP_NONE. */
uint32_t rp_idmap_get(const struct rp_idmap *m, uint64_t key);

/* The value stored for `key`; if there is none, `val` (not RP_IDMAP_NONE) is
 * stored and returned. So `rp_idmap_put(m, key, n) == n` says the caller's n-th
 * element is new. */
uint32_t rp_idmap_put(struct rp_idmap *m, uint64_t key, uint32_t val);

void rp_idmap_free(struct rp_idmap *m);

#endif
