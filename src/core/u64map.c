/*
 * src/core/u64map.c — linear-probing u64 → u64 map (see u64map.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/u64map.h"

void rp_u64map_free(struct rp_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

void rp_u64map_clear(struct rp_u64map *m)
{
    if (m->cap)
        memset(m->used, 0, m->cap);
    m->len = 0;
}

static size_t find(const struct rp_u64map *m, uint64_t key, int *found)
{
    size_t mask = m->cap - 1, i = (size_t)rp_mix64(key) & mask;
    while (m->used[i]) {
        if (m->keys[i] == key) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
    *found = 0;
    return i;
}

int rp_u64map_get(const struct rp_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->len)
        return 0;
    int found;
    size_t i = find(m, key, &found);
    if (found && val)
        *val = m->vals[i];
    return found;
}

static int grow(struct rp_u64map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    struct rp_u64map n = {
        .keys = malloc(ncap * sizeof(uint64_t)),
        .vals = malloc(ncap * sizeof(uint64_t)),
        .used = calloc(ncap, 1),
        .cap = ncap,
    };
    if (!n.keys || !n.vals || !n.used) {
        rp_u64map_free(&n);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        int found;
        size_t j = find(&n, m->keys[i], &found);
        n.used[j] = 1;
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.len++;
    }
    rp_u64map_free(m);
    *m = n;
    return 0;
}

int rp_u64map_put(struct rp_u64map *m, uint64_t key, uint64_t val)
{
    if ((m->len + 1) * 10 > m->cap * 7 && grow(m) < 0)
        return -1;
    int found;
    size_t i = find(m, key, &found);
    if (!found) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->len++;
    }
    m->vals[i] = val;
    return 0;
}

int rp_u64map_del(struct rp_u64map *m, uint64_t key)
{
    if (!m->len)
        return 0;
    int found;
    size_t mask = m->cap - 1, i = find(m, key, &found);
    if (!found)
        return 0;
    /* Backward-shift: move later members of the probe run into the hole when
     * their home slot does not lie cyclically in (hole, j]. */
    size_t j = i;
    for (;;) {
        m->used[i] = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!m->used[j]) {
                m->len--;
                return 1;
            }
            size_t home = (size_t)rp_mix64(m->keys[j]) & mask;
            int in_range = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!in_range)
                break;
        }
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        m->used[i] = 1;
        i = j;
    }
}
