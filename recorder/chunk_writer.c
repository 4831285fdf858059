/*
 * recorder/chunk_writer.c — writes one chunk file (format: ringprof/format.h).
 *
 * The writer owns one growable segment buffer. Interning looks the content up in a
 * per-pool hash table and, the first time it is seen, appends the pool record to
 * the segment buffer at once, so a definition always precedes its first use.
 * Samples of the same kind and thread are gathered in a separate batch buffer and
 * become one SAMPLES record when the batch is closed (another kind or thread, time
 * going backwards, the batch reaching RP_CHUNK_BATCH_MAX, any non-sample record, or
 * a flush). A batch that takes a sample of a virtual thread keeps every sample's
 * VTHREAD id in a second buffer from then on (the samples before it get 0), which
 * closes the record after its samples (format.h). Counters are summed per segment
 * and written at flush.
 *
 * rp_chunk_flush compresses the buffer into one LZ4 frame and writes the 48-byte
 * segment header and the frame with a single pwrite at the end of the last good
 * segment. If that fails, the file is cut back to that length, and the buffer is
 * filtered in place down to its pool records (STRING..KIND, VTHREAD), which lead the
 * next segment with the same ids: callers' cached ids stay valid and the chunk
 * never refers to a definition that is not in it. The failed segment's counters
 * stay in the counter table, RP_COUNTER_LOST_WRITE is added for its samples, and
 * both go out with the next segment that is written.
 *
 * One thread owns a writer. Not async-signal-safe: it allocates and does I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"
#include "crc32c.h"
#include "varint.h"
#include "metanum.h"
#include "ringprof/hash.h"

/* ------------------------------------------------------------ small tools -- */

struct buf {
    uint8_t *p;
    size_t len, cap;
};

/* Make room for `need` more bytes. @return 0, or -1 with errno ENOMEM. */
static int buf_grow(struct buf *b, size_t need)
{
    if (b->cap - b->len >= need)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < need) {
        if (cap > SIZE_MAX / 2) {
            errno = ENOMEM;
            return -1;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* Grow a pool array so that index `need` exists. @return 0 or -1 (ENOMEM). */
static int array_grow(void **arr, uint32_t *cap, size_t esz, uint32_t need)
{
    if (need < *cap)
        return 0;
    uint64_t ncap = *cap ? *cap : 64;
    while (ncap <= need)
        ncap *= 2;
    if (ncap > UINT32_MAX || ncap > SIZE_MAX / esz) {
        errno = ENOMEM;
        return -1;
    }
    void *p = realloc(*arr, (size_t)ncap * esz);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    *arr = p;
    *cap = (uint32_t)ncap;
    return 0;
}

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

/*
 * Open addressing, linear probing, load <= 1/2. A slot holds hash << 32 | id (id >=
 * 1, so 0 is empty); the pool's own array holds the content, compared by `eq`.
 */
struct rp_chunk_writer;
typedef int (*itab_eq_fn)(const struct rp_chunk_writer *w, uint32_t id, const void *key);

struct itab {
    uint64_t *slot;
    uint32_t cap, n;
};

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

/* ------------------------------------------------------------ the writer -- */

struct wstr    { uint64_t off; uint32_t len; };
struct wmethod { uint32_t klass, name, sig, file, flags; };
struct wframe  { uint32_t method, type, bci1, line; };
struct wstack  { uint64_t off; uint32_t n, flags; };
struct wthread { uint64_t key, os_tid, java_tid; uint32_t name, flags; };
struct wvthread { uint64_t java_tid; uint32_t name; };
struct wkind   { uint32_t name, nextra; uint64_t period; };
struct wcounter { uint32_t name; uint64_t value; };

/* Pool arrays are indexed by id - 1. */
struct rp_chunk_writer {
    int fd;
    char *path;
    uint64_t start_mono;
    uint64_t good_len;          /* end of the last segment that reached the file  */
    int need_truncate;          /* a cut back failed: retry before the next write */
    uint32_t seq;

    struct buf seg;             /* encoded records of the open segment            */
    size_t autoflush_at;        /* pending bytes that trigger a flush             */
    uint32_t seg_records;
    uint64_t seg_samples;       /* in closed SAMPLES records of `seg`             */
    uint64_t t_first, t_last;   /* event times in the open segment (MAX,0: none)  */

    struct buf batch;           /* encoded samples of the open SAMPLES record     */
    struct buf vbatch;          /* their VTHREAD ids, once b.vt                    */
    struct {
        int open;
        int vt;                 /* a sample of the record ran on a virtual thread */
        uint32_t kind, thread, count, nextra;
        uint64_t t0, prev_time, prev_weight, wunit;
    } b;

    struct buf out;             /* segment header + LZ4 frame                     */
    struct buf scratch;

    struct buf sarena;          /* string bytes                                   */
    struct wstr *str;       uint32_t nstr, capstr;     struct itab tstr;
    uint32_t *class_of;     uint32_t capclass_of;      /* string id -> class id   */
    uint32_t nclass;
    struct wmethod *meth;   uint32_t nmeth, capmeth;   struct itab tmeth;
    struct wframe *frame;   uint32_t nframe, capframe; struct itab tframe;
    struct buf farena;          /* stack frame ids (uint32_t)                     */
    struct wstack *stack;   uint32_t nstack, capstack; struct itab tstack;
    struct wthread *thread; uint32_t nthread, capthread; struct itab tthread;
    struct wvthread *vthread; uint32_t nvthread, capvthread; struct itab tvthread;
    struct wkind *kind;     uint32_t nkind, capkind;
    struct wcounter *ctr;   uint32_t nctr, capctr;
    /* Samples lost to failed writes whose lost.write counter could not be added
     * (no memory for its name or slot): kept here until a flush or close can. */
    uint64_t lost_write_pending;

    struct rp_chunk_writer_stats st;
};

static int flush_segment(struct rp_chunk_writer *w, uint32_t flags);

/* Append one record: type, body_len, the varint fields `f`, then `tail` bytes. */
static int emit(struct rp_chunk_writer *w, uint8_t type, const uint64_t *f, unsigned nf,
                const void *tail, size_t tlen)
{
    size_t blen = tlen;
    for (unsigned i = 0; i < nf; i++)
        blen += rp_varint_len(f[i]);
    if (buf_grow(&w->seg, 1 + RP_VARINT_MAX + blen) < 0)
        return -1;
    uint8_t *p = w->seg.p + w->seg.len;
    *p++ = type;
    p += rp_varint_put(p, blen);
    for (unsigned i = 0; i < nf; i++)
        p += rp_varint_put(p, f[i]);
    if (tlen)
        memcpy(p, tail, tlen);
    w->seg.len = (size_t)(p - w->seg.p) + tlen;
    w->seg_records++;
    return 0;
}

static uint64_t rel_time(const struct rp_chunk_writer *w, uint64_t t)
{
    return rp_zigzag_enc((int64_t)(t - w->start_mono));
}

/* The segment's time range: t_first starts at UINT64_MAX and t_last at 0, so this
 * is two conditional moves and no branch. */
static void note_time(struct rp_chunk_writer *w, uint64_t t)
{
    w->t_first = t < w->t_first ? t : w->t_first;
    w->t_last = t > w->t_last ? t : w->t_last;
}

static void reset_time(struct rp_chunk_writer *w)
{
    w->t_first = UINT64_MAX;
    w->t_last = 0;
}

/*
 * Flush when the open segment crossed its soft maximum. A failure is counted in the
 * stats and does not concern the call that happened to cross the mark. After a
 * failure (disk full) the pool records stay in the buffer, so the next attempt
 * waits until another RP_CHUNK_SEGMENT_SOFT_MAX has piled up (or for the caller's
 * own flush): retrying on every call would compress the whole buffer each time.
 */
static void maybe_autoflush(struct rp_chunk_writer *w)
{
    if (w->seg.len + w->batch.len >= w->autoflush_at) {
        int e = errno;
        (void)flush_segment(w, 0);
        errno = e;
    }
}

static int close_batch(struct rp_chunk_writer *w)
{
    if (!w->b.open)
        return 0;
    if (w->b.count) {
        uint64_t f[6] = {w->b.kind, w->b.thread, w->b.count, rel_time(w, w->b.t0),
                         w->b.wunit, w->b.nextra};
        size_t samples_len = w->batch.len;
        if (w->b.vt) {          /* the VTHREAD ids follow the samples            */
            if (buf_grow(&w->batch, w->vbatch.len) < 0)
                return -1;
            memcpy(w->batch.p + w->batch.len, w->vbatch.p, w->vbatch.len);
            w->batch.len += w->vbatch.len;
        }
        int rc = emit(w, RP_REC_SAMPLES, f, 6, w->batch.p, w->batch.len);
        w->batch.len = samples_len;
        if (rc < 0)
            return -1;          /* the batch stays open and intact               */
        w->seg_samples += w->b.count;
    }
    w->b.open = 0;
    w->b.vt = 0;
    w->batch.len = 0;
    w->vbatch.len = 0;
    return 0;
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
    if (array_grow((void **)&w->str, &w->capstr, sizeof *w->str, w->nstr) < 0 ||
        buf_grow(&w->sarena, len + 1) < 0)
        return 0;
    uint64_t f[1] = {id};
    if (emit(w, RP_REC_STRING, f, 1, s, len) < 0)
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
        if (array_grow((void **)&w->class_of, &w->capclass_of, sizeof *w->class_of,
                       name) < 0)
            return 0;
        memset(w->class_of + old, 0, (w->capclass_of - old) * sizeof *w->class_of);
    }
    if (w->class_of[name])
        return w->class_of[name];
    uint32_t id = w->nclass + 1;
    uint64_t f[2] = {id, name};
    if (emit(w, RP_REC_CLASS, f, 2, NULL, 0) < 0)
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
    if (array_grow((void **)&w->meth, &w->capmeth, sizeof *w->meth, w->nmeth) < 0)
        return 0;
    uint64_t f[6] = {id, klass, name, signature, file, flags};
    if (emit(w, RP_REC_METHOD, f, 6, NULL, 0) < 0)
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
    if (array_grow((void **)&w->frame, &w->capframe, sizeof *w->frame, w->nframe) < 0)
        return 0;
    uint64_t f[5] = {id, method, k.type, k.bci1, line};
    if (emit(w, RP_REC_FRAME, f, 5, NULL, 0) < 0)
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
    if (buf_grow(&w->scratch, (size_t)n * 5) < 0)
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
    if (array_grow((void **)&w->stack, &w->capstack, sizeof *w->stack, w->nstack) < 0 ||
        buf_grow(&w->farena, (size_t)n * 4) < 0)
        return 0;
    uint64_t f[3] = {id, flags, n};
    if (emit(w, RP_REC_STACK, f, 3, w->scratch.p, (size_t)(p - w->scratch.p)) < 0)
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
    if (array_grow((void **)&w->kind, &w->capkind, sizeof *w->kind, w->nkind) < 0)
        return 0;
    if (emit(w, RP_REC_KIND, f, 5 + nextra, NULL, 0) < 0)
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
    if (close_batch(w) < 0)
        return -1;
    uint64_t f[6] = {id, t->os_tid, t->java_tid, t->name, t->flags, rel_time(w, time)};
    return emit(w, RP_REC_THREAD, f, 6, NULL, 0);
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
    if (array_grow((void **)&w->thread, &w->capthread, sizeof *w->thread, w->nthread) < 0)
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
    if (close_batch(w) < 0)
        return -1;
    uint64_t f[4] = {id, t->java_tid, t->name, rel_time(w, time)};
    return emit(w, RP_REC_VTHREAD, f, 4, NULL, 0);
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
    if (array_grow((void **)&w->vthread, &w->capvthread, sizeof *w->vthread,
                   w->nvthread) < 0)
        return 0;
    if (emit_vthread(w, id, &t, time) < 0)
        return 0;
    w->vthread[w->nvthread++] = t;
    itab_set(&w->tvthread, pos, h, id);
    maybe_autoflush(w);
    return id;
}

/* ---------------------------------------------------------------- events -- */

/* Start a SAMPLES record for this kind and thread at `time`. */
static int open_batch(struct rp_chunk_writer *w, const struct wkind *k, uint32_t kind,
                      uint32_t thread, uint64_t time)
{
    if (close_batch(w) < 0)
        return -1;
    w->b.open = 1;
    w->b.kind = kind;
    w->b.thread = thread;
    w->b.count = 0;
    w->b.nextra = k->nextra;
    w->b.t0 = w->b.prev_time = time;
    w->b.wunit = w->b.prev_weight = k->period;
    return 0;
}

/* A weight other than the previous one: as a multiple of the unit, or literal. */
static __attribute__((noinline)) uint8_t *put_weight(struct rp_chunk_writer *w,
                                                     uint8_t *p, uint64_t head,
                                                     uint64_t weight)
{
    uint64_t u = w->b.wunit, m = 0, r = 1;
    if (u && ((weight | u) >> 32) == 0) {   /* 32-bit division: a third the latency */
        m = (uint32_t)weight / (uint32_t)u;
        r = (uint32_t)weight % (uint32_t)u;
    } else if (u) {
        m = weight / u;
        r = weight % u;
    }
    if (r == 0) {
        p += rp_varint_put_fast(p, head | 1);
        p += rp_varint_put(p, m);
    } else {
        p += rp_varint_put_fast(p, head | 2);
        p += rp_varint_put(p, weight);
    }
    return p;
}

/* The checks and the batch switch the fast path leaves to the first sample of a
 * batch. @return 0, or -1 with errno. */
static __attribute__((noinline)) int sample_slow(struct rp_chunk_writer *w, uint32_t kind,
                                                 uint32_t thread, uint64_t time,
                                                 uint32_t stack, const uint64_t *extra)
{
    if (!w || kind - 1 >= w->nkind || thread > w->nthread || stack > w->nstack ||
        (w->kind[kind - 1].nextra && !extra)) {
        errno = EINVAL;
        return -1;
    }
    uint64_t dt = time - w->b.prev_time;
    if (!w->b.open || w->b.kind != kind || w->b.thread != thread || dt >> 62 ||
        w->batch.len >= RP_CHUNK_BATCH_MAX)
        return open_batch(w, &w->kind[kind - 1], kind, thread, time);
    return 0;
}

/* Append the VTHREAD id of the batch's next sample. @return 0, or -1 (ENOMEM). */
static int vt_put(struct rp_chunk_writer *w, uint32_t vthread)
{
    if (buf_grow(&w->vbatch, RP_VARINT_MAX) < 0)
        return -1;
    w->vbatch.len += rp_varint_put(w->vbatch.p + w->vbatch.len, vthread);
    return 0;
}

/* Begin the batch's VTHREAD ids: 0 for each sample it holds. @return 0, or -1
 * (ENOMEM) with the batch as it was. */
static __attribute__((noinline)) int vt_begin(struct rp_chunk_writer *w)
{
    if (buf_grow(&w->vbatch, w->b.count + RP_VARINT_MAX) < 0)
        return -1;
    memset(w->vbatch.p, 0, w->b.count);
    w->vbatch.len = w->b.count;
    w->b.vt = 1;
    return 0;
}

/*
 * The per-sample path: the flusher calls it for every sample, so the common case
 * (same batch as the previous sample, same weight, room in the buffer, no virtual
 * thread) runs straight through with branch-free varints; everything else goes
 * to sample_slow. A time before the previous sample's wraps dt past 2^62, which
 * also opens a batch.
 */
static inline int sample_put(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                             uint32_t vthread, uint64_t time, uint32_t stack,
                             uint64_t weight, const uint64_t *extra)
{
    if (__builtin_expect(!w || !w->b.open | (w->b.kind != kind) | (w->b.thread != thread) |
                         ((time - w->b.prev_time) >> 62 != 0) | (stack > w->nstack) |
                         (w->batch.len >= RP_CHUNK_BATCH_MAX) | (w->b.nextra && !extra),
                         0) &&
        sample_slow(w, kind, thread, time, stack, extra) < 0)
        return -1;
    if (__builtin_expect(vthread != 0, 0)) {
        if (vthread > w->nvthread) {
            errno = EINVAL;
            return -1;
        }
        if (!w->b.vt && vt_begin(w) < 0)
            return -1;
    }
    uint32_t nextra = w->b.nextra;
    size_t need = (size_t)(3 + nextra) * RP_VARINT_MAX;
    if (__builtin_expect(w->batch.cap - w->batch.len < need, 0) &&
        buf_grow(&w->batch, need) < 0)
        return -1;
    if (__builtin_expect(w->b.vt, 0) && vt_put(w, vthread) < 0)
        return -1;
    uint64_t head = (time - w->b.prev_time) << 2;
    uint8_t *p = w->batch.p + w->batch.len;
    if (__builtin_expect(weight == w->b.prev_weight, 1))
        p += rp_varint_put_fast(p, head);
    else
        p = put_weight(w, p, head, weight);
    p += rp_varint_put_fast(p, stack);
    for (uint32_t i = 0; i < nextra; i++)
        p += rp_varint_put(p, extra[i]);
    w->batch.len = (size_t)(p - w->batch.p);
    w->b.count++;
    w->b.prev_time = time;
    w->b.prev_weight = weight;
    note_time(w, time);
    if (__builtin_expect(w->seg.len + w->batch.len >= w->autoflush_at, 0))
        maybe_autoflush(w);
    return 0;
}

int rp_chunk_sample(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                    uint64_t time, uint32_t stack, uint64_t weight,
                    const uint64_t *extra)
{
    return sample_put(w, kind, thread, 0, time, stack, weight, extra);
}

int rp_chunk_sample_vt(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                       uint32_t vthread, uint64_t time, uint32_t stack, uint64_t weight,
                       const uint64_t *extra)
{
    return sample_put(w, kind, thread, vthread, time, stack, weight, extra);
}

static int counter_add(struct rp_chunk_writer *w, uint32_t name, uint64_t delta)
{
    for (uint32_t i = 0; i < w->nctr; i++)
        if (w->ctr[i].name == name) {
            w->ctr[i].value += delta;
            return 0;
        }
    if (array_grow((void **)&w->ctr, &w->capctr, sizeof *w->ctr, w->nctr) < 0)
        return -1;
    w->ctr[w->nctr++] = (struct wcounter){name, delta};
    return 0;
}

int rp_chunk_counter(struct rp_chunk_writer *w, const char *name, uint64_t delta)
{
    if (!w || !name) {
        errno = EINVAL;
        return -1;
    }
    if (delta == 0)
        return 0;
    uint32_t nid = rp_chunk_cstring(w, name);
    if (!nid)
        return -1;
    return counter_add(w, nid, delta);
}

int rp_chunk_thread_cpu(struct rp_chunk_writer *w, uint32_t thread, uint64_t time,
                        uint64_t cpu_ns)
{
    if (!w || thread > w->nthread) {
        errno = EINVAL;
        return -1;
    }
    if (close_batch(w) < 0)
        return -1;
    uint64_t f[3] = {thread, rel_time(w, time), cpu_ns};
    if (emit(w, RP_REC_THREAD_CPU, f, 3, NULL, 0) < 0)
        return -1;
    note_time(w, time);
    maybe_autoflush(w);
    return 0;
}

int rp_chunk_gauge(struct rp_chunk_writer *w, const char *name, uint64_t time,
                   uint64_t value)
{
    if (!w || !name) {
        errno = EINVAL;
        return -1;
    }
    uint32_t nid = rp_chunk_cstring(w, name);
    if (!nid || close_batch(w) < 0)
        return -1;
    uint64_t f[3] = {nid, rel_time(w, time), value};
    if (emit(w, RP_REC_GAUGE, f, 3, NULL, 0) < 0)
        return -1;
    note_time(w, time);
    maybe_autoflush(w);
    return 0;
}

/* -------------------------------------------------------------- flushing -- */

static int pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* Walk one well-formed record of our own buffer. */
static size_t record_span(const uint8_t *p, const uint8_t *end, uint8_t *type,
                          const uint8_t **body, uint64_t *blen)
{
    const uint8_t *q = p + 1;
    *type = p[0];
    if (rp_varint_get(&q, end, blen) < 0 || *blen > (uint64_t)(end - q))
        return 0;   /* cannot happen: we wrote it */
    *body = q;
    return (size_t)(q - p) + (size_t)*blen;
}

/* The largest prefix of [p, p+len) made of whole records, at most `max` bytes but
 * at least one record; its record and sample counts. Used only when a segment is
 * too big to go out in one piece (after write failures piled up pool records). */
static size_t split_prefix(const uint8_t *p, size_t len, size_t max, uint32_t *nrec,
                           uint64_t *nsamp)
{
    size_t at = 0;
    *nrec = 0;
    *nsamp = 0;
    while (at < len) {
        uint8_t type;
        const uint8_t *body;
        uint64_t blen;
        size_t span = record_span(p + at, p + len, &type, &body, &blen);
        if (!span || (at && at + span > max))
            break;
        if (type == RP_REC_SAMPLES) {
            const uint8_t *q = body, *e = body + blen;
            uint64_t kind, thread, count;
            if (rp_varint_get(&q, e, &kind) == 0 && rp_varint_get(&q, e, &thread) == 0 &&
                rp_varint_get(&q, e, &count) == 0)
                *nsamp += count;
        }
        at += span;
        (*nrec)++;
    }
    return at;
}

/* The frame preferences of every segment (rp_chunk_segment_compress). */
static void segment_prefs(LZ4F_preferences_t *prefs, size_t len)
{
    memset(prefs, 0, sizeof *prefs);
    prefs->frameInfo.blockSizeID = LZ4F_max256KB;
    prefs->frameInfo.blockMode = LZ4F_blockLinked;
    prefs->frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    prefs->frameInfo.contentSize = len;
}

size_t rp_chunk_segment_bound(size_t len)
{
    LZ4F_preferences_t prefs;
    segment_prefs(&prefs, len);
    return LZ4F_compressFrameBound(len, &prefs);
}

size_t rp_chunk_segment_compress(void *dst, size_t cap, const void *src, size_t len)
{
    LZ4F_preferences_t prefs;
    segment_prefs(&prefs, len);
    size_t c = LZ4F_compressFrame(dst, cap, src, len, &prefs);
    return LZ4F_isError(c) ? 0 : c;
}

/* Compress `len` bytes of records and write them as one segment at good_len. */
static int write_segment(struct rp_chunk_writer *w, const uint8_t *data, size_t len,
                         uint32_t nrec, uint32_t flags)
{
    size_t bound = rp_chunk_segment_bound(len);
    w->out.len = 0;
    if (buf_grow(&w->out, RP_SEG_HEADER_LEN + bound) < 0)
        return -1;
    uint8_t *h = w->out.p;
    size_t c = rp_chunk_segment_compress(h + RP_SEG_HEADER_LEN, bound, data, len);
    if (c == 0) {
        errno = ENOMEM;     /* only a too-small bound could do this              */
        return -1;
    }
    memcpy(h, RP_SEG_MAGIC, 4);
    rp_put_le32(h + 4, flags);
    rp_put_le32(h + 8, w->seq++);
    rp_put_le32(h + 12, (uint32_t)len);
    rp_put_le32(h + 16, (uint32_t)c);
    rp_put_le32(h + 20, nrec);
    int have_time = w->t_first <= w->t_last;
    rp_put_le64(h + 24, have_time ? w->t_first : 0);
    rp_put_le64(h + 32, have_time ? w->t_last : 0);
    rp_put_le32(h + 40, 0);
    rp_put_le32(h + 44, rp_crc32c(0, h, 44));

    if (w->need_truncate && ftruncate(w->fd, (off_t)w->good_len) == 0)
        w->need_truncate = 0;
    if (pwrite_all(w->fd, h, RP_SEG_HEADER_LEN + c, w->good_len) < 0) {
        int e = errno;
        if (ftruncate(w->fd, (off_t)w->good_len) < 0)
            w->need_truncate = 1;
        errno = e;
        return -1;
    }
    w->good_len += RP_SEG_HEADER_LEN + c;
    return 0;
}

/* Keep only the pool records of [from, seg.len), moved to the buffer's start. */
static void keep_pools(struct rp_chunk_writer *w, size_t from)
{
    uint8_t *p = w->seg.p;
    size_t at = from, out = 0;
    uint32_t kept = 0;
    while (at < w->seg.len) {
        uint8_t type;
        const uint8_t *body;
        uint64_t blen;
        size_t span = record_span(p + at, p + w->seg.len, &type, &body, &blen);
        if (!span)
            break;
        if ((type >= RP_REC_STRING && type <= RP_REC_KIND) || type == RP_REC_VTHREAD) {
            memmove(p + out, p + at, span);
            out += span;
            kept++;
        }
        at += span;
    }
    w->seg.len = out;
    w->seg_records = kept;
}

/* Move the samples of failed writes into the lost.write counter, if memory for
 * its name and slot can be had now; else they wait in lost_write_pending. */
static void settle_lost_write(struct rp_chunk_writer *w)
{
    if (!w->lost_write_pending)
        return;
    uint32_t nid = rp_chunk_cstring(w, RP_COUNTER_LOST_WRITE);
    if (nid && counter_add(w, nid, w->lost_write_pending) == 0)
        w->lost_write_pending = 0;
}

/*
 * End the open segment: close the batch, add the counters, write. Normally one
 * segment; if write failures have piled up more than the soft maximum of pool
 * records, the buffer goes out as several segments split at record boundaries.
 * The COUNTER records always go in the last part: if an earlier part were written
 * with some of them and a later part failed, those counters would be on disk and
 * still held (and carried or written again).
 */
static int flush_segment(struct rp_chunk_writer *w, uint32_t flags)
{
    if (close_batch(w) < 0)
        return -1;
    settle_lost_write(w);
    size_t mark = w->seg.len;
    uint32_t mark_records = w->seg_records;
    for (uint32_t i = 0; i < w->nctr; i++) {
        if (!w->ctr[i].value)
            continue;
        uint64_t f[2] = {w->ctr[i].name, w->ctr[i].value};
        if (emit(w, RP_REC_COUNTER, f, 2, NULL, 0) < 0) {
            w->seg.len = mark;
            w->seg_records = mark_records;
            return -1;
        }
    }
    if (w->seg.len == 0 && !(flags & RP_SEG_LAST))
        return 0;

    size_t done = 0;
    uint32_t recs_done = 0;
    uint64_t samples_done = 0;
    for (;;) {
        size_t len = w->seg.len - done, plen = len;
        uint32_t nrec = w->seg_records - recs_done;
        uint64_t nsamp = w->seg_samples - samples_done;
        if (len > RP_CHUNK_SEGMENT_SOFT_MAX && mark > done)
            plen = split_prefix(w->seg.p + done, mark - done, RP_CHUNK_SEGMENT_SOFT_MAX,
                                &nrec, &nsamp);
        int last = plen == len;
        if (write_segment(w, w->seg.p + done, plen, nrec, last ? flags : 0) < 0) {
            int e = errno;
            uint64_t lost = w->seg_samples - samples_done;
            w->st.segments_failed++;
            w->st.samples_failed += lost;
            w->st.last_errno = e;
            keep_pools(w, done);
            w->autoflush_at = w->seg.len + RP_CHUNK_SEGMENT_SOFT_MAX;
            w->seg_samples = 0;
            reset_time(w);
            w->lost_write_pending += lost;
            settle_lost_write(w);
            errno = e;
            return -1;
        }
        w->st.segments_written++;
        w->st.raw_bytes += plen;
        w->st.samples_written += nsamp;
        done += plen;
        recs_done += nrec;
        samples_done += nsamp;
        if (last)
            break;
    }
    w->seg.len = 0;
    w->seg_records = 0;
    w->seg_samples = 0;
    w->autoflush_at = RP_CHUNK_SEGMENT_SOFT_MAX;
    reset_time(w);
    for (uint32_t i = 0; i < w->nctr; i++)
        w->ctr[i].value = 0;
    return 0;
}

int rp_chunk_flush(struct rp_chunk_writer *w)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    return flush_segment(w, 0);
}

/* ------------------------------------------------------- open and close -- */

static void writer_free(struct rp_chunk_writer *w)
{
    free(w->path);
    free(w->seg.p);
    free(w->batch.p);
    free(w->out.p);
    free(w->scratch.p);
    free(w->sarena.p);
    free(w->str);
    free(w->tstr.slot);
    free(w->class_of);
    free(w->meth);
    free(w->tmeth.slot);
    free(w->frame);
    free(w->tframe.slot);
    free(w->farena.p);
    free(w->stack);
    free(w->tstack.slot);
    free(w->thread);
    free(w->tthread.slot);
    free(w->vthread);
    free(w->tvthread.slot);
    free(w->vbatch.p);
    free(w->kind);
    free(w->ctr);
    free(w);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int put_kv(struct buf *b, const char *k, const char *v)
{
    size_t kl = strlen(k), vl = strlen(v);
    if (buf_grow(b, 2 * RP_VARINT_MAX + kl + vl) < 0)
        return -1;
    b->len += rp_varint_put(b->p + b->len, kl);
    memcpy(b->p + b->len, k, kl);
    b->len += kl;
    b->len += rp_varint_put(b->p + b->len, vl);
    memcpy(b->p + b->len, v, vl);
    b->len += vl;
    return 0;
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct rp_chunk_writer *rp_chunk_writer_open(const char *path,
                                             const struct rp_kv *meta, size_t n,
                                             char *err, size_t errlen)
{
    return rp_chunk_writer_openat(AT_FDCWD, path, path, meta, n, err, errlen);
}

struct rp_chunk_writer *rp_chunk_writer_openat(int dfd, const char *name,
                                               const char *path,
                                               const struct rp_kv *meta, size_t n,
                                               char *err, size_t errlen)
{
    if (!name || !path || (n && !meta)) {
        set_err(err, errlen, "chunk writer: no path or metadata");
        errno = EINVAL;
        return NULL;
    }
    const char *given_wall = NULL, *given_mono = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!meta[i].key || !meta[i].value) {
            set_err(err, errlen, "%s: metadata entry %zu has no key or value", path, i);
            errno = EINVAL;
            return NULL;
        }
        if (!given_wall && strcmp(meta[i].key, RP_META_START_WALL) == 0)
            given_wall = meta[i].value;
        if (!given_mono && strcmp(meta[i].key, RP_META_START_MONO) == 0)
            given_mono = meta[i].value;
    }
    /* Both clocks now; a given value keeps the pair consistent with it. */
    uint64_t now_mono = clock_ns(CLOCK_MONOTONIC), now_wall = clock_ns(CLOCK_REALTIME);
    uint64_t mono = now_mono, wall = now_wall;
    if ((given_mono && rp_meta_parse_u64(given_mono, &mono) < 0) ||
        (given_wall && rp_meta_parse_u64(given_wall, &wall) < 0)) {
        set_err(err, errlen, "%s: %s and %s must be decimal integers", path,
                RP_META_START_MONO, RP_META_START_WALL);
        errno = EINVAL;
        return NULL;
    }
    if (given_mono && !given_wall)
        wall = now_wall - (now_mono - mono);
    else if (given_wall && !given_mono)
        mono = now_mono - (now_wall - wall);

    struct rp_chunk_writer *w = calloc(1, sizeof *w);
    struct buf h = {0};
    if (!w || !(w->path = strdup(path)) || buf_grow(&h, RP_FILE_HEADER_FIXED) < 0)
        goto nomem;
    w->fd = -1;
    w->start_mono = mono;
    w->autoflush_at = RP_CHUNK_SEGMENT_SOFT_MAX;
    reset_time(w);
    memcpy(h.p, RP_FILE_MAGIC, RP_FILE_MAGIC_LEN);
    rp_put_le16(h.p + 8, RP_FORMAT_MAJOR);
    rp_put_le16(h.p + 10, RP_FORMAT_MINOR);
    h.len = RP_FILE_HEADER_FIXED;
    for (size_t i = 0; i < n; i++)
        if (put_kv(&h, meta[i].key, meta[i].value) < 0)
            goto nomem;
    char num[24];
    if (!given_wall) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)wall);
        if (put_kv(&h, RP_META_START_WALL, num) < 0)
            goto nomem;
    }
    if (!given_mono) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)mono);
        if (put_kv(&h, RP_META_START_MONO, num) < 0)
            goto nomem;
    }
    if (buf_grow(&h, 4) < 0)
        goto nomem;
    h.len += 4;
    if (h.len > RP_FILE_HEADER_MAX) {
        set_err(err, errlen, "%s: metadata too large (%zu bytes, limit %u)", path, h.len,
                RP_FILE_HEADER_MAX);
        free(h.p);
        writer_free(w);
        errno = EINVAL;
        return NULL;
    }
    rp_put_le32(h.p + 12, (uint32_t)h.len);
    rp_put_le32(h.p + h.len - 4, rp_crc32c(0, h.p, h.len - 4));

    w->fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        int e = errno;
        set_err(err, errlen, "%s: cannot create: %s", path, strerror(e));
        free(h.p);
        writer_free(w);
        errno = e;
        return NULL;
    }
    if (pwrite_all(w->fd, h.p, h.len, 0) < 0) {
        int e = errno;
        set_err(err, errlen, "%s: cannot write the header: %s", path, strerror(e));
        unlinkat(dfd, name, 0);
        close(w->fd);
        free(h.p);
        writer_free(w);
        errno = e;
        return NULL;
    }
    w->good_len = h.len;
    free(h.p);
    return w;

nomem:
    set_err(err, errlen, "%s: out of memory", path);
    free(h.p);
    if (w)
        writer_free(w);
    errno = ENOMEM;
    return NULL;
}

/* Hand every counter still held to `fn`: they were not written anywhere. */
static void carry_counters(const struct rp_chunk_writer *w, rp_chunk_counter_fn fn,
                           void *arg)
{
    for (uint32_t i = 0; i < w->nctr; i++) {
        uint32_t id = w->ctr[i].name;
        if (!w->ctr[i].value || id == 0 || id > w->nstr)
            continue;
        const struct wstr *e = &w->str[id - 1];
        char name[256];
        size_t n = e->len < sizeof name - 1 ? e->len : sizeof name - 1;
        memcpy(name, w->sarena.p + e->off, n);
        name[n] = '\0';
        fn(arg, name, w->ctr[i].value);
    }
}

int rp_chunk_close(struct rp_chunk_writer *w)
{
    return rp_chunk_close_carry(w, NULL, NULL);
}

int rp_chunk_close_carry(struct rp_chunk_writer *w, rp_chunk_counter_fn fn, void *arg)
{
    return rp_chunk_close_stats(w, fn, arg, NULL);
}

int rp_chunk_close_stats(struct rp_chunk_writer *w, rp_chunk_counter_fn fn, void *arg,
                         struct rp_chunk_writer_stats *out)
{
    if (!w)
        return 0;
    int rc = flush_segment(w, RP_SEG_LAST), e = rc < 0 ? errno : 0;
    /* Samples that never reached a write (no memory for the batch or the
     * COUNTER records of the last segment) are lost to this close as well. */
    if (rc < 0)
        w->st.samples_failed += w->seg_samples + (w->b.open ? w->b.count : 0);
    if ((rc < 0 || w->lost_write_pending) && fn) {
        carry_counters(w, fn, arg);
        /* A write failure has already moved its samples to lost.write (carried
         * above) unless there was no memory for that counter (lost_write_pending,
         * which a successful last write leaves too); a failure before the write
         * (no memory for the COUNTER records or the batch) has not, and they go
         * with this writer now. */
        uint64_t pending = w->seg_samples + (w->b.open ? w->b.count : 0) +
                           w->lost_write_pending;
        if (pending)
            fn(arg, RP_COUNTER_LOST_WRITE, pending);
    }
    if (fsync(w->fd) < 0 && !e) {
        rc = -1;
        e = errno;
    }
    if (close(w->fd) < 0 && !e) {
        rc = -1;
        e = errno;
    }
    if (out)
        rp_chunk_writer_stats(w, out);
    writer_free(w);
    if (rc < 0)
        errno = e;
    return rc;
}

void rp_chunk_abandon(struct rp_chunk_writer *w)
{
    if (!w)
        return;
    close(w->fd);
    writer_free(w);
}

void rp_chunk_writer_stats(const struct rp_chunk_writer *w,
                           struct rp_chunk_writer_stats *out)
{
    *out = w->st;
    out->bytes_written = w->good_len;
    out->pending_samples = w->seg_samples + (w->b.open ? w->b.count : 0);
    out->pending_raw_bytes = w->seg.len + w->batch.len;
}

const char *rp_chunk_writer_path(const struct rp_chunk_writer *w)
{
    return w->path;
}

uint64_t rp_chunk_writer_start_mono(const struct rp_chunk_writer *w)
{
    return w->start_mono;
}
