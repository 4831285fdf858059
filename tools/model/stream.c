/*
 * tools/model/stream.c — the recording stream under every model (stream.h).
 *
 * A kind id is resolved on first use in its chunk: its events.h kind by name,
 * and each extra the tool reads by name (RP_SX_COUNT names against the KIND
 * record's at most RP_MAX_EXTRA), so a sample then costs an array look-up.
 * Recording keys are kept for the stream's life, so that a recording has the
 * same index in every chunk of it; a search over them per chunk is enough
 * (inputs hold a few recordings, however many chunks).
 */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* ---------------------------------------------------------------- clock -- */

static uint64_t meta_u64(const struct rp_reader *r, const char *key, int *present)
{
    const char *v = rp_reader_meta(r, key);
    *present = v != NULL;
    return v ? strtoull(v, NULL, 10) : 0;
}

struct rp_chunk_clock rp_chunk_clock_of(const struct rp_reader *r)
{
    struct rp_chunk_clock c;
    int w, m;
    c.wall0 = meta_u64(r, RP_META_START_WALL, &w);
    c.mono0 = meta_u64(r, RP_META_START_MONO, &m);
    c.ok = w && m;
    return c;
}

const char *rp_recording_key(const struct rp_reader *r, char *buf, size_t cap)
{
    const char *id = rp_reader_meta(r, RP_META_RECORDING);
    if (id) {
        snprintf(buf, cap, "%s", id);
    } else {
        const char *pid = rp_reader_meta(r, RP_META_PID);
        const char *host = rp_reader_meta(r, RP_META_HOST);
        snprintf(buf, cap, "pid %s on %s", pid ? pid : "?", host ? host : "?");
    }
    return buf;
}

/* ---------------------------------------------------------------- kinds -- */

const char *rp_sx_name(enum rp_sx x)
{
    switch (x) {
    case RP_SX_CLASS:          return RP_X_CLASS;
    case RP_SX_SIZE:           return RP_X_SIZE;
    case RP_SX_OBJECTS:        return RP_X_OBJECTS;
    case RP_SX_LENGTH:         return RP_X_LENGTH;
    case RP_SX_AGE_GCS:        return RP_X_AGE_GCS;
    case RP_SX_AGE_MS:         return RP_X_AGE_MS;
    case RP_SX_STATE:          return RP_X_STATE;
    case RP_SX_REPEAT:         return RP_VOCAB_WALL_X_[RP_WALL_X_REPEAT];
    case RP_SX_CPU_NS:         return RP_VOCAB_WALL_X_[RP_WALL_X_CPU_NS];
    case RP_SX_BLOCKER_CLASS:  return RP_VOCAB_WALL_X_[RP_WALL_X_BLOCKER_CLASS];
    case RP_SX_BLOCKER_OWNER:  return RP_VOCAB_WALL_X_[RP_WALL_X_BLOCKER_OWNER];
    case RP_SX_OWNER:          return RP_X_OWNER;
    case RP_SX_REPORTED:       return RP_VOCAB_LOCK_X_[RP_LOCK_X_REPORTED];
    case RP_SX_HEAP_USED:      return RP_X_HEAP_USED;
    case RP_SX_HEAP_COMMITTED: return RP_X_HEAP_COMMITTED;
    case RP_SX_ID:             return RP_X_ID;
    default:                   return "";
    }
}

enum rp_skind rp_skind_of(const char *name)
{
    static const struct { const char *name; enum rp_skind k; } K[] = {
        {RP_KIND_CPU, RP_SK_CPU}, {RP_KIND_WALL, RP_SK_WALL}, {RP_KIND_ALLOC, RP_SK_ALLOC},
        {RP_KIND_LIVE, RP_SK_LIVE}, {RP_KIND_GC, RP_SK_GC}, {RP_KIND_LOCK, RP_SK_LOCK},
        {RP_KIND_LOCK_WAITING, RP_SK_LOCK_WAITING}};
    for (size_t i = 0; name && i < sizeof K / sizeof K[0]; i++)
        if (!strcmp(name, K[i].name))
            return K[i].k;
    return RP_SK_OTHER;
}

static void kind_fill(struct rp_stream_kind *k, const struct rp_kind_info *ki)
{
    k->info = ki;
    k->kind = rp_skind_of(ki->name);
    k->name = ki->name ? ki->name : "";
    k->unit = ki->unit ? ki->unit : "";
    k->period = ki->period;
    unsigned n = ki->nextra < RP_MAX_EXTRA ? ki->nextra : RP_MAX_EXTRA;
    for (int x = 0; x < RP_SX_COUNT; x++)
        k->x[x] = (int8_t)rp_extra_index(ki->extra, n, rp_sx_name((enum rp_sx)x));
}

const struct rp_stream_kind *rp_stream_kind(struct rp_stream *s, uint32_t id)
{
    static struct rp_stream_kind undefined;
    if (id < s->nkinds && s->kinds[id].info)
        return &s->kinds[id];
    const struct rp_kind_info *ki = s->r ? rp_reader_kind(s->r, id) : NULL;
    if (!ki) {   /* never defined: the map grows for defined ids only */
        if (!undefined.name) {
            undefined.name = undefined.unit = "";
            memset(undefined.x, -1, sizeof undefined.x);
        }
        return &undefined;
    }
    rp_xgrow_map((void **)&s->kinds, &s->nkinds, id, sizeof *s->kinds, 16, 0);
    kind_fill(&s->kinds[id], ki);
    return &s->kinds[id];
}

/* -------------------------------------------------------------- threads -- */

enum rp_rename rp_thread_rename(const char *first, const char *name)
{
    if (!name || !name[0])
        return RP_RENAME_NONE;
    if (!first || !first[0])
        return RP_RENAME_FIRST;
    return strcmp(name, first) ? RP_RENAME_NEWEST : RP_RENAME_BACK;
}

void rp_thread_display(char *buf, size_t cap, const char *name, const char *renamed)
{
    if (renamed && renamed[0])
        snprintf(buf, cap, "%s (renamed %s)", name, renamed);
    else
        snprintf(buf, cap, "%s", name);
}

void rp_thread_names_init(struct rp_thread_names *n, const char *name)
{
    n->first = rp_xstrdup(name ? name : "");
    n->renamed = NULL;
}

enum rp_rename rp_thread_names_see(struct rp_thread_names *n, const char *name)
{
    enum rp_rename c = rp_thread_rename(n->first, name);
    if (c == RP_RENAME_FIRST) {
        free(n->first);
        n->first = rp_xstrdup(name);
    } else if (c == RP_RENAME_NEWEST || c == RP_RENAME_BACK) {
        free(n->renamed);
        n->renamed = c == RP_RENAME_NEWEST ? rp_xstrdup(name) : NULL;
    }
    return c;
}

void rp_thread_names_show(const struct rp_thread_names *n, char *buf, size_t cap)
{
    rp_thread_display(buf, cap, n->first, n->renamed);
}

void rp_thread_names_free(struct rp_thread_names *n)
{
    free(n->first);
    free(n->renamed);
    n->first = n->renamed = NULL;
}

const struct rp_thread_info *rp_stream_thread(const struct rp_stream *s, uint32_t id)
{
    return id && s->r ? rp_reader_thread(s->r, id) : NULL;
}

const struct rp_thread_info *rp_stream_x_thread(const struct rp_stream *s,
                                                const struct rp_stream_kind *k,
                                                const struct rp_event *ev, enum rp_sx x)
{
    return rp_stream_thread(s, rp_sx_id(k, ev, x));
}

const char *rp_stream_x_class(const struct rp_stream *s, const struct rp_stream_kind *k,
                              const struct rp_event *ev, enum rp_sx x)
{
    uint32_t id = rp_sx_id(k, ev, x);
    return id && s->r ? rp_reader_class(s->r, id) : NULL;
}

/* --------------------------------------------------------------- stream -- */

void rp_stream_init(struct rp_stream *s)
{
    memset(s, 0, sizeof *s);
}

size_t rp_stream_rec(const struct rp_stream *s, const char *key)
{
    for (size_t i = 0; i < s->nrecs; i++)
        if (!strcmp(s->recs[i], key))
            return i;
    return SIZE_MAX;
}

void rp_stream_begin(struct rp_stream *s, struct rp_reader *r)
{
    char key[512];
    s->r = r;
    s->clock = rp_chunk_clock_of(r);
    rp_recording_key(r, key, sizeof key);
    size_t i = rp_stream_rec(s, key);
    if (i == SIZE_MAX) {
        s->recs = rp_xreallocarray(s->recs, s->nrecs + 1, sizeof *s->recs);
        s->recs[s->nrecs] = rp_xstrdup(key);
        i = s->nrecs++;
    }
    s->rec = (uint32_t)i;
    if (s->kinds)
        memset(s->kinds, 0, s->nkinds * sizeof *s->kinds);
}

void rp_stream_end(struct rp_stream *s)
{
    s->r = NULL;
}

void rp_stream_free(struct rp_stream *s)
{
    for (size_t i = 0; i < s->nrecs; i++)
        free(s->recs[i]);
    free(s->recs);
    free(s->kinds);
    memset(s, 0, sizeof *s);
}
