/*
 * tools/model/idmap.c — the tool's 64-bit key to index map (idmap.h).
 *
 * Keys are mixed with rp_mix64 (ringprof/hash.h), so that os tids, which are
 * dense, and packed id pairs, whose low halves repeat, spread over the table.
 */
#include "idmap.h"

#include <stdlib.h>
#include <string.h>

#include "ringprof/hash.h"
#include "xalloc.h"

static size_t slot_of(const struct rp_idmap *m, uint64_t key)
{
    size_t j = rp_mix64(key) & m->mask;
    while (m->val[j] != RP_IDMAP_NONE && m->key[j] != key)
        j = (j + 1) & m->mask;
    return j;
}

uint32_t rp_idmap_get(const struct rp_idmap *m, uint64_t key)
{
    return m->val ? m->val[slot_of(m, key)] : RP_IDMAP_NONE;
}

static void grow(struct rp_idmap *m)
{
    struct rp_idmap old = *m;
    size_t cap = old.val ? (old.mask + 1) * 2 : 64;
    m->key = rp_xreallocarray(NULL, cap, sizeof *m->key);
    m->val = rp_xreallocarray(NULL, cap, sizeof *m->val);
    memset(m->val, 0xff, cap * sizeof *m->val);
    m->mask = cap - 1;
    for (size_t i = 0; old.val && i <= old.mask; i++) {
        if (old.val[i] == RP_IDMAP_NONE)
            continue;
        size_t j = slot_of(m, old.key[i]);
        m->key[j] = old.key[i];
        m->val[j] = old.val[i];
    }
    free(old.key);
    free(old.val);
}

uint32_t rp_idmap_put(struct rp_idmap *m, uint64_t key, uint32_t val)
{
    if (!m->val || (m->used + 1) * 2 > m->mask + 1)
        grow(m);
    size_t j = slot_of(m, key);
    if (m->val[j] != RP_IDMAP_NONE)
        return m->val[j];
    m->key[j] = key;
    m->val[j] = val;
    m->used++;
    return val;
}

void rp_idmap_free(struct rp_idmap *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}
