/*
 * recorder/chunk_reader_pools.c — the chunk reader's pools: what a chunk defines
 * (strings, classes, methods, frames, stacks, threads, kinds, virtual threads),
 * kept for the whole file and looked up by id (ringprof/chunk.h).
 *
 * Entries and their strings and frames are carved from an arena of 64 KiB blocks;
 * each pool is a table of pointers indexed by id. The pools are held to a budget
 * in proportion to the bytes read so far (chunk.h, RP_READER_POOL_FACTOR): LZ4
 * packs up to 255 bytes into one, so a file's definitions alone could otherwise ask
 * for hundreds of times its size. A look-up of an id the chunk never defined gives
 * NULL (or 0 frames), never an entry of another id.
 *
 * One thread uses a reader (chunk_reader.h). Not async-signal-safe: it allocates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/chunk.h"
#include "chunk_reader.h"

/* ------------------------------------------------------------- the arena -- */

struct ablock {
    struct ablock *next;
    size_t used, cap;
    max_align_t data[];
};

#define RD_ARENA_BLOCK 65536u   /* what small allocations are carved from */

/* n bytes from the arena at *head; every block it allocates is added to *bytes. */
static void *arena_alloc(struct ablock **head, size_t n, uint64_t *bytes)
{
    n = (n + 7) & ~(size_t)7;
    struct ablock *b = *head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 16384 ? n : RD_ARENA_BLOCK;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        *bytes += sizeof *b + cap;
        b->used = 0;
        b->cap = cap;
        if (n > 16384 && *head) {   /* a big one: keep filling the current block */
            b->next = (*head)->next;
            (*head)->next = b;
        } else {
            b->next = *head;
            *head = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

/* ------------------------------------------------------------- the pools -- */

void rp_rd_pools_init(struct rp_reader *r)
{
    static const size_t esz[P_COUNT] = {
        sizeof(struct rstr), sizeof(struct rclass), sizeof(struct rp_method_info),
        sizeof(struct rp_frame_info), sizeof(struct rstack),
        sizeof(struct rp_thread_info), sizeof(struct rp_kind_info),
        sizeof(struct rp_vthread_info)};
    static const char *const pname[P_COUNT] = {"string", "class", "method", "frame",
                                               "stack", "thread", "kind", "vthread"};
    for (int i = 0; i < P_COUNT; i++) {
        r->pool[i].esz = esz[i];
        r->pool[i].name = pname[i];
    }
}

void rp_rd_pools_free(struct rp_reader *r)
{
    for (int i = 0; i < P_COUNT; i++) {
        free(r->pool[i].slot);
    }
    while (r->arena) {
        struct ablock *n = r->arena->next;
        free(r->arena);
        r->arena = n;
    }
}

void *rp_rd_pool_alloc(struct rp_reader *r, size_t n)
{
    return arena_alloc(&r->arena, n, &r->pool_bytes);
}

/* What the pools may hold now: chunk.h, RP_READER_POOL_FACTOR. r->off is the end
 * of the segment being decoded (0 while the header is read). */
static uint64_t pool_budget(const struct rp_reader *r)
{
    return RP_READER_POOL_FACTOR * r->off + RP_READER_POOL_SLACK;
}

void *rp_rd_pool_def(struct rp_reader *r, struct pool *p, uint64_t id, size_t extra,
                     int *fresh, const char **why)
{
    if (id == 0) {
        *why = "id 0 is reserved";
        return NULL;
    }
    if (id > 2 * (uint64_t)p->ndef + RP_POOL_ID_SLACK) {
        *why = "id too far beyond the ids defined so far";
        return NULL;
    }
    *fresh = id >= p->cap || p->slot[id] == NULL;
    if (!*fresh)
        return p->slot[id];
    uint64_t ncap = p->cap ? p->cap : 256;
    while (ncap <= id)
        ncap *= 2;
    /* The arena may start a block for the entry, which counts in full, and one
     * of its own for a large `extra`: room for both is kept, so the pools never
     * pass the budget. */
    uint64_t cost = (ncap - p->cap) * sizeof *p->slot + p->esz + extra + 2 * 8 +
                    RD_ARENA_BLOCK + 2 * sizeof(struct ablock);
    if (r->pool_bytes + cost > pool_budget(r)) {
        snprintf(r->why, sizeof r->why, "the pools would pass their memory budget of "
                 "%llu bytes (%u x the %llu bytes read so far + %u MiB)",
                 (unsigned long long)pool_budget(r), RP_READER_POOL_FACTOR,
                 (unsigned long long)r->off, RP_READER_POOL_SLACK >> 20);
        *why = r->why;
        return NULL;
    }
    if (id >= p->cap) {
        void **ns = realloc(p->slot, (size_t)ncap * sizeof *ns);
        if (!ns) {
            *why = "out of memory";
            return NULL;
        }
        memset(ns + p->cap, 0, (size_t)(ncap - p->cap) * sizeof *ns);
        r->pool_bytes += (ncap - p->cap) * sizeof *ns;
        p->slot = ns;
        p->cap = (uint32_t)ncap;
    }
    void *e = rp_rd_pool_alloc(r, p->esz);
    if (!e) {
        *why = "out of memory";
        return NULL;
    }
    memset(e, 0, p->esz);
    p->slot[id] = e;
    p->ndef++;
    if (id > p->hi)
        p->hi = (uint32_t)id;
    return e;
}

char *rp_rd_arena_str(struct rp_reader *r, const uint8_t *s, size_t n)
{
    char *c = rp_rd_pool_alloc(r, n + 1);
    if (c) {
        if (n)
            memcpy(c, s, n);
        c[n] = 0;
    }
    return c;
}

/* -------------------------------------------------------------- look-ups -- */

const char *rp_reader_string(const struct rp_reader *r, uint32_t id)
{
    const struct rstr *s = pool_get(&r->pool[P_STR], id);
    return s ? s->s : NULL;
}

const char *rp_reader_string_len(const struct rp_reader *r, uint32_t id, size_t *len)
{
    const struct rstr *s = pool_get(&r->pool[P_STR], id);
    if (len)
        *len = s ? s->len : 0;
    return s ? s->s : NULL;
}

const char *rp_reader_class(const struct rp_reader *r, uint32_t id)
{
    const struct rclass *c = pool_get(&r->pool[P_CLASS], id);
    return c ? c->name : NULL;
}

const struct rp_method_info *rp_reader_method(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_METHOD], id);
}

const struct rp_frame_info *rp_reader_frame(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_FRAME], id);
}

const uint32_t *rp_reader_stack(const struct rp_reader *r, uint32_t id, uint32_t *n,
                                uint32_t *flags)
{
    const struct rstack *s = pool_get(&r->pool[P_STACK], id);
    if (n)
        *n = s ? s->n : 0;
    if (flags)
        *flags = s ? s->flags : 0;
    return s ? s->frames : NULL;
}

const struct rp_thread_info *rp_reader_thread(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_THREAD], id);
}

const struct rp_kind_info *rp_reader_kind(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_KIND], id);
}

uint32_t rp_reader_thread_count(const struct rp_reader *r)
{
    return r->pool[P_THREAD].hi;
}

const struct rp_vthread_info *rp_reader_vthread(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_VTHREAD], id);
}

uint32_t rp_reader_vthread_count(const struct rp_reader *r)
{
    return r->pool[P_VTHREAD].hi;
}

uint32_t rp_reader_kind_count(const struct rp_reader *r)
{
    return r->pool[P_KIND].hi;
}
