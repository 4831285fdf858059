/*
 * src/core/u64map.h — an open-addressing hash map from 64-bit keys to 64-bit values.
 *
 * The flusher's caches are all of this shape: jmethodID → resolved method, native
 * pc → symbol, (method, bci, type) hash → chunk frame id, stack hash → chunk stack
 * id, compiled code address → method. Linear probing, power-of-two capacity, grown
 * at 70% load, backward-shift deletion (no tombstones, so a map that churns stays
 * fast). Any key is allowed, 0 included.
 *
 * Threads: not thread-safe; each map has one owner (or a lock held by the caller).
 * Not async-signal-safe (it allocates).
 */
#ifndef RINGPROF_SRC_U64MAP_H
#define RINGPROF_SRC_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/hash.h"   /* rp_mix64, for callers that hash composite keys */

struct rp_u64map {
    uint64_t *keys;
    uint64_t *vals;
    unsigned char *used;
    size_t cap;      /* power of two, or 0 before the first put */
    size_t len;
};

/* A zeroed struct is an empty map; rp_u64map_free releases it (and leaves it empty). */
void rp_u64map_free(struct rp_u64map *m);
void rp_u64map_clear(struct rp_u64map *m);      /* keeps the capacity */

/* @return 1 and *val if present, else 0. */
int rp_u64map_get(const struct rp_u64map *m, uint64_t key, uint64_t *val);

/* Insert or replace. @return 0, or -1 if memory ran out (the map is unchanged). */
int rp_u64map_put(struct rp_u64map *m, uint64_t key, uint64_t val);

/* Remove. @return 1 if it was present. */
int rp_u64map_del(struct rp_u64map *m, uint64_t key);

#endif
