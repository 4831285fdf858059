/*
 * recorder/chunk_writer_pools.c — the chunk writer's pools: strings, classes,
 * methods, frames, stacks, kinds, threads and virtual threads (format: ringprof/
 * format.h; the calls: ringprof/chunk.h).
 *
 * Interning looks the content up in the pool's hash table and, the first time it is
 * seen, appends the pool record to the segment buffer at once, so a definition
 * always precedes its first use, and returns the same id for the same content for
 * the rest of the chunk (a failed write keeps the pool records for the next
 * segment: chunk_writer_segment.c). A thread or virtual thread is keyed by its
 * identity, not its content: a rename writes a new record under the same id.
 * Every call checks the ids it is given against the pools, so a record never
 * refers to a definition the chunk does not hold.
 *
 * One thread owns a writer (chunk_writer.h). Not async-signal-safe: it allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/chunk.h"
#include "ringprof/hash.h"
#include "chunk_writer.h"
#include "varint.h"

/* Word-at-a-time multiplicative hash (FxHash's step) with a full final mix. */
static uint32_t hash_bytes(const void *data, size_t n, uint64_t seed)
{
    const uint8_t *s = data;
    uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull);
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        h = (((h << 5) | (h >> 59)) ^ v) * 0x9e3779b97f4a7c15ull;
        s += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v = 0;
        memcpy(&v, s, n);
        h = (((h << 5) | (h >> 59)) ^ v) * 0x9e3779b97f4a7c15ull;
    }
    return (uint32_t)(rp_mix64(h) >> 32);
}

/* ------------------------------------------------------ interning tables -- */

typedef int (*itab_eq_fn)(const struct rp_chunk_writer *w, uint32_t id, const void *key);

static int itab_reserve(struct itab *t)
{
    if ((uint64_t)(t->n + 1) * 2 <= t->cap)
        return 0;
    uint32_t ncap = t->cap ? t->cap * 2 : 64;
    if (ncap == 0) {
        errno = ENOMEM;
        return -1;
    }
    uint64_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) {
        errno = ENOMEM;
        return -1;
    }
    for (uint32_t i = 0; i < t->cap; i++) {
        uint64_t s = t->slot[i];
        if (!s)
            continue;
        uint32_t j = (uint32_t)(s >> 32) & (ncap - 1);
        while (ns[j])
            j = (j + 1) & (ncap - 1);
        ns[j] = s;
    }
    free(t->slot);
    t->slot = ns;
    t->cap = ncap;
    return 0;
}

/* @return the id with equal content, or 0 and the free slot in *pos. The table
 * must have been reserved (cap > n). */
static uint32_t itab_find(const struct itab *t, uint32_t h, itab_eq_fn eq,
                          const struct rp_chunk_writer *w, const void *key, uint32_t *pos)
{
    uint32_t m = t->cap - 1, i = h & m;
    *pos = 0;
    for (;;) {
        uint64_t s = t->slot[i];
        if (!s) {
            *pos = i;
            return 0;
        }
        if ((uint32_t)(s >> 32) == h && eq(w, (uint32_t)s, key))
            return (uint32_t)s;
        i = (i + 1) & m;
    }
}

static void itab_set(struct itab *t, uint32_t pos, uint32_t h, uint32_t id)
{
    t->slot[pos] = (uint64_t)h << 32 | id;
    t->n++;
}

/* --------------------------------------------------------------- strings -- */

struct str_key { const char *s; size_t len; };

static int str_eq(const struct rp_chunk_writer *w, uint32_t id, const void *key)
{
    const struct str_key *k = key;
    const struct wstr *e = &w->str[id - 1];
    return e->len == k->len && memcmp(w->sarena.p + e->off, k->s, k->len) == 0;
}

uint32_t rp_chunk_string(struct rp_chunk_writer *w, const char *s, size_t len)
{
    if (!w || (!s && len) || len > RP_CHUNK_STRING_MAX) {
        errno = EINVAL;
        return 0;
    }
    if (!s)
        s = "";
    struct str_key k = {s, len};
    uint32_t h = hash_bytes(s, len, 1), pos;
    if (itab_reserve(&w->tstr) < 0)
        return 0;
    uint32_t id = itab_find(&w->tstr, h, str_eq, w, &k, &pos);
    if (id)
        return id;
    id = w->nstr + 1;
    if (rp_wr_array_grow((void **)&w->str, &w->capstr, sizeof *w->str, w->nstr) < 0 ||
        rp_wr_buf_grow(&w->sarena, len + 1) < 0)
        return 0;
    uint64_t f[1] = {id};
    if (rp_wr_emit(w, RP_REC_STRING, f, 1, s, len) < 0)
        return 0;
    w->str[w->nstr] = (struct wstr){w->sarena.len, (uint32_t)len};
    if (len)
        memcpy(w->sarena.p + w->sarena.len, s, len);
    w->sarena.len += len;
    w->nstr++;
    itab_set(&w->tstr, pos, h, id);
    maybe_autoflush(w);
    return id;
}

uint32_t rp_chunk_cstring(struct rp_chunk_writer *w, const char *s)
{
    if (!s) {
        errno = EINVAL;
        return 0;
    }
    return rp_chunk_string(w, s, strlen(s));
}

/* --------------------------------------------------------------- classes -- */

uint32_t rp_chunk_class(struct rp_chunk_writer *w, uint32_t name)
{
    if (!w || name == 0 || name > w->nstr) {
        errno = EINVAL;
        return 0;
    }
    if (name >= w->capclass_of) {
        uint32_t old = w->capclass_of;
        if (rp_wr_array_grow((void **)&w->class_of, &w->capclass_of, sizeof *w->class_of,
                             name) < 0)
            return 0;
        memset(w->class_of + old, 0, (w->capclass_of - old) * sizeof *w->class_of);
    }
    if (w->class_of[name])
        return w->class_of[name];
    uint32_t id = w->nclass + 1;
    uint64_t f[2] = {id, name};
    if (rp_wr_emit(w, RP_REC_CLASS, f, 2, NULL, 0) < 0)
        return 0;
    w->class_of[name] = id;
    w->nclass++;
    maybe_autoflush(w);
    return id;
}

/* --------------------------------------------------------------- methods -- */

static int meth_eq(const struct rp_chunk_writer *w, uint32_t id, const void *key)
{
    return memcmp(&w->meth[id - 1], key, sizeof(struct wmethod)) == 0;
}

uint32_t rp_chunk_method(struct rp_chunk_writer *w, uint32_t klass, uint32_t name,
                         uint32_t signature, uint32_t file, uint32_t flags)
{
    if (!w || klass > w->nclass || name > w->nstr || signature > w->nstr ||
        file > w->nstr) {
        errno = EINVAL;
        return 0;
    }
    struct wmethod k = {klass, name, signature, file, flags};
    uint32_t h = hash_bytes(&k, sizeof k, 3), pos;
    if (itab_reserve(&w->tmeth) < 0)
        return 0;
    uint32_t id = itab_find(&w->tmeth, h, meth_eq, w, &k, &pos);
    if (id)
        return id;
    id = w->nmeth + 1;
    if (rp_wr_array_grow((void **)&w->meth, &w->capmeth, sizeof *w->meth, w->nmeth) < 0)
        return 0;
    uint64_t f[6] = {id, klass, name, signature, file, flags};
    if (rp_wr_emit(w, RP_REC_METHOD, f, 6, NULL, 0) < 0)
        return 0;
    w->meth[w->nmeth++] = k;
    itab_set(&w->tmeth, pos, h, id);
    maybe_autoflush(w);
    return id;
}

/* ---------------------------------------------------------------- frames -- */

static int frame_eq(const struct rp_chunk_writer *w, uint32_t id, const void *key)
{
    return memcmp(&w->frame[id - 1], key, sizeof(struct wframe)) == 0;
}

uint32_t rp_chunk_frame(struct rp_chunk_writer *w, uint32_t method,
                        enum rp_frame_type type, int32_t bci, uint32_t line)
{
    if (!w || method > w->nmeth || (unsigned)type >= RP_FRAME_TYPES) {
        errno = EINVAL;
        return 0;
    }
    struct wframe k = {method, (uint32_t)type, bci < 0 ? 0 : (uint32_t)bci + 1, line};
    uint32_t h = hash_bytes(&k, sizeof k, 4), pos;
    if (itab_reserve(&w->tframe) < 0)
        return 0;
    uint32_t id = itab_find(&w->tframe, h, frame_eq, w, &k, &pos);
    if (id)
        return id;
    id = w->nframe + 1;
    if (rp_wr_array_grow((void **)&w->frame, &w->capframe, sizeof *w->frame,
                         w->nframe) < 0)
        return 0;
    uint64_t f[5] = {id, method, k.type, k.bci1, line};
    if (rp_wr_emit(w, RP_REC_FRAME, f, 5, NULL, 0) < 0)
        return 0;
    w->frame[w->nframe++] = k;
    itab_set(&w->tframe, pos, h, id);
    maybe_autoflush(w);
    return id;
}

/* ---------------------------------------------------------------- stacks -- */

struct stack_key { const uint32_t *frames; uint32_t n, flags; };

static int stack_eq(const struct rp_chunk_writer *w, uint32_t id, const void *key)
{
    const struct stack_key *k = key;
    const struct wstack *e = &w->stack[id - 1];
    return e->n == k->n && e->flags == k->flags &&
           memcmp(w->farena.p + e->off, k->frames, (size_t)k->n * 4) == 0;
}

uint32_t rp_chunk_stack(struct rp_chunk_writer *w, const uint32_t *frames,
                        uint32_t n, uint32_t flags)
{
    if (!w || n > RP_CHUNK_STACK_MAX || (n && !frames)) {
        errno = EINVAL;
        return 0;
    }
    struct stack_key k = {frames, n, flags};
    uint32_t h = hash_bytes(frames, (size_t)n * 4, 5 + (uint64_t)flags), pos;
    if (itab_reserve(&w->tstack) < 0)
        return 0;
    uint32_t id = itab_find(&w->tstack, h, stack_eq, w, &k, &pos);
    if (id)
        return id;
    /* New: check the frames, encode them, then the record. */
    w->scratch.len = 0;
    if (rp_wr_buf_grow(&w->scratch, (size_t)n * 5) < 0)
        return 0;
    uint8_t *p = w->scratch.p;
    for (uint32_t i = 0; i < n; i++) {
        if (frames[i] == 0 || frames[i] > w->nframe) {
            errno = EINVAL;
            return 0;
        }
        p += rp_varint_put(p, frames[i]);
    }
    id = w->nstack + 1;
    if (rp_wr_array_grow((void **)&w->stack, &w->capstack, sizeof *w->stack,
                         w->nstack) < 0 ||
        rp_wr_buf_grow(&w->farena, (size_t)n * 4) < 0)
        return 0;
    uint64_t f[3] = {id, flags, n};
    if (rp_wr_emit(w, RP_REC_STACK, f, 3, w->scratch.p, (size_t)(p - w->scratch.p)) < 0)
        return 0;
    w->stack[w->nstack++] = (struct wstack){w->farena.len, n, flags};
    if (n)
        memcpy(w->farena.p + w->farena.len, frames, (size_t)n * 4);
    w->farena.len += (size_t)n * 4;
    itab_set(&w->tstack, pos, h, id);
    maybe_autoflush(w);
    return id;
}

/* ----------------------------------------------------------------- kinds -- */

uint32_t rp_chunk_kind(struct rp_chunk_writer *w, const char *name, const char *unit,
                       uint64_t period, const char *const *extra_names,
                       uint32_t nextra)
{
    if (!w || !name || nextra > RP_MAX_EXTRA || (nextra && !extra_names)) {
        errno = EINVAL;
        return 0;
    }
    uint32_t nid = rp_chunk_cstring(w, name);
    if (!nid)
        return 0;
    for (uint32_t i = 0; i < w->nkind; i++)
        if (w->kind[i].name == nid)
            return i + 1;
    uint64_t f[5 + RP_MAX_EXTRA];
    f[0] = w->nkind + 1;
    f[1] = nid;
    f[2] = unit ? rp_chunk_cstring(w, unit) : 0;
    if (unit && !f[2])
        return 0;
    f[3] = period;
    f[4] = nextra;
    for (uint32_t i = 0; i < nextra; i++) {
        f[5 + i] = extra_names[i] ? rp_chunk_cstring(w, extra_names[i]) : 0;
        if (extra_names[i] && !f[5 + i])
            return 0;
    }
    if (rp_wr_array_grow((void **)&w->kind, &w->capkind, sizeof *w->kind, w->nkind) < 0)
        return 0;
    if (rp_wr_emit(w, RP_REC_KIND, f, 5 + nextra, NULL, 0) < 0)
        return 0;
    w->kind[w->nkind++] = (struct wkind){nid, nextra, period};
    maybe_autoflush(w);
    return w->nkind;
}

/* --------------------------------------------------------------- threads -- */

static int thread_eq(const struct rp_chunk_writer *w, uint32_t id, const void *key)
{
    return w->thread[id - 1].key == *(const uint64_t *)key;
}

static int emit_thread(struct rp_chunk_writer *w, uint32_t id, const struct wthread *t,
                       uint64_t time)
{
    if (rp_wr_close_batch(w) < 0)
        return -1;
    uint64_t f[6] = {id, t->os_tid, t->java_tid, t->name, t->flags, rel_time(w, time)};
    return rp_wr_emit(w, RP_REC_THREAD, f, 6, NULL, 0);
}

uint32_t rp_chunk_thread(struct rp_chunk_writer *w, uint64_t key, uint64_t os_tid,
                         uint64_t java_tid, const char *name, uint32_t flags,
                         uint64_t time)
{
    if (!w) {
        errno = EINVAL;
        return 0;
    }
    uint32_t nid = 0;
    if (name && !(nid = rp_chunk_cstring(w, name)))
        return 0;
    struct wthread t = {key, os_tid, java_tid, nid, flags};
    uint32_t h = (uint32_t)(rp_mix64(key ^ 0x7468726561640000ull) >> 32), pos;
    if (itab_reserve(&w->tthread) < 0)
        return 0;
    uint32_t id = itab_find(&w->tthread, h, thread_eq, w, &key, &pos);
    if (id) {
        struct wthread *e = &w->thread[id - 1];
        if (e->os_tid == os_tid && e->java_tid == java_tid && e->name == nid &&
            e->flags == flags)
            return id;
        if (emit_thread(w, id, &t, time) < 0)
            return 0;
        *e = t;
        maybe_autoflush(w);
        return id;
    }
    id = w->nthread + 1;
    if (rp_wr_array_grow((void **)&w->thread, &w->capthread, sizeof *w->thread,
                         w->nthread) < 0)
        return 0;
    if (emit_thread(w, id, &t, time) < 0)
        return 0;
    w->thread[w->nthread++] = t;
    itab_set(&w->tthread, pos, h, id);
    maybe_autoflush(w);
    return id;
}

static int vthread_eq(const struct rp_chunk_writer *w, uint32_t id, const void *key)
{
    return w->vthread[id - 1].java_tid == *(const uint64_t *)key;
}

static int emit_vthread(struct rp_chunk_writer *w, uint32_t id, const struct wvthread *t,
                        uint64_t time)
{
    if (rp_wr_close_batch(w) < 0)
        return -1;
    uint64_t f[4] = {id, t->java_tid, t->name, rel_time(w, time)};
    return rp_wr_emit(w, RP_REC_VTHREAD, f, 4, NULL, 0);
}

uint32_t rp_chunk_vthread(struct rp_chunk_writer *w, uint64_t java_tid, const char *name,
                          uint64_t time)
{
    if (!w || !java_tid) {
        errno = EINVAL;
        return 0;
    }
    uint32_t nid = 0;
    if (name && name[0] && !(nid = rp_chunk_cstring(w, name)))
        return 0;
    struct wvthread t = {java_tid, nid};
    uint32_t h = (uint32_t)(rp_mix64(java_tid ^ 0x7674687265616400ull) >> 32), pos;
    if (itab_reserve(&w->tvthread) < 0)
        return 0;
    uint32_t id = itab_find(&w->tvthread, h, vthread_eq, w, &java_tid, &pos);
    if (id) {
        struct wvthread *e = &w->vthread[id - 1];
        if (e->name == nid || !nid)           /* a name unknown now is no rename */
            return id;
        if (emit_vthread(w, id, &t, time) < 0)
            return 0;
        *e = t;
        maybe_autoflush(w);
        return id;
    }
    id = w->nvthread + 1;
    if (rp_wr_array_grow((void **)&w->vthread, &w->capvthread, sizeof *w->vthread,
                         w->nvthread) < 0)
        return 0;
    if (emit_vthread(w, id, &t, time) < 0)
        return 0;
    w->vthread[w->nvthread++] = t;
    itab_set(&w->tvthread, pos, h, id);
    maybe_autoflush(w);
    return id;
}
