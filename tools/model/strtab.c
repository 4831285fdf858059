/*
 * tools/model/strtab.c — string interning for the pprof and HTML writers (see strtab.h).
 *
 * FNV-1a hashing into a power-of-two table with linear probing; the table doubles
 * when it is half full, so a probe sequence stays short.
 */
#include "strtab.h"

#include "xalloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

void rp_strtab_init(struct rp_strtab *t)
{
    memset(t, 0, sizeof *t);
}

void rp_strtab_free(struct rp_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->len);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

static void rehash(struct rp_strtab *t)
{
    size_t nslots = t->nslots ? t->nslots * 2 : 64;
    uint32_t *slot = rp_xreallocarray(NULL, nslots, sizeof *slot);
    memset(slot, 0, nslots * sizeof *slot);
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash(t->s[i], t->len[i]) & (nslots - 1);
        while (slot[j])
            j = (j + 1) & (nslots - 1);
        slot[j] = (uint32_t)(i + 1);
    }
    free(t->slot);
    t->slot = slot;
    t->nslots = nslots;
}

uint32_t rp_strtab_add(struct rp_strtab *t, const char *s, size_t len)
{
    if ((t->n + 1) * 2 > t->nslots)
        rehash(t);
    size_t j = hash(s, len) & (t->nslots - 1);
    for (; t->slot[j]; j = (j + 1) & (t->nslots - 1)) {
        uint32_t i = t->slot[j] - 1;
        if (t->len[i] == len && !memcmp(t->s[i], s, len))
            return i;
    }
    if (t->n == t->cap) {
        rp_xgrow((void **)&t->s, &t->cap, t->n, sizeof *t->s, 64);
        t->len = rp_xreallocarray(t->len, t->cap, sizeof *t->len);
    }
    char *copy = rp_xreallocarray(NULL, len + 1, 1);
    if (len)
        memcpy(copy, s, len);
    copy[len] = '\0';
    t->s[t->n] = copy;
    t->len[t->n] = len;
    t->slot[j] = (uint32_t)(t->n + 1);
    return (uint32_t)t->n++;
}

uint32_t rp_strtab_cstr(struct rp_strtab *t, const char *s)
{
    if (!s)
        s = "";
    return rp_strtab_add(t, s, strlen(s));
}
