/*
 * src/flush/stacks.c — chunk ids for what samples name (see stacks.h).
 *
 * One set of caches, the flusher's, keyed for the chunk being written: methods
 * by jmethodID, native frames by pc, markers by (status, source), classes by
 * class id, and stacks by the hash of their raw bytes (struct raw_stack keeps the
 * bytes, to tell a collision from a hit; a collision is built and not cached).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "ringprof/hash.h"
#include "code/classes.h"
#include "code/codecache.h"
#include "code/methods.h"
#include "flush/kind.h"
#include "flush/stacks.h"
#include "walk/stackwalk.h"
#include "code/symbols.h"
#include "core/u64map.h"

#define CACHE_MAX_BYTES (32u << 20)     /* raw-stack cache, bytes held            */

struct raw_stack {
    uint32_t stack;
    uint32_t len;
    uint8_t bytes[];
};

static struct {
    struct rp_chunk_writer *w;
    JNIEnv *jni;
    uint64_t generation;
    struct rp_u64map methods;       /* jmethodID → chunk method id                  */
    struct rp_u64map natives;       /* pc → chunk frame id                          */
    struct rp_u64map markers;       /* status → chunk frame id                      */
    struct rp_u64map classes;       /* classes.h class id → chunk class id          */
    struct rp_u64map raw;           /* raw-frames hash → struct raw_stack*          */
    size_t raw_bytes;
    uint64_t epoch;                 /* compiled-code epoch the raw cache matches    */
    uint32_t *frames;               /* depth + 2 (two markers)                      */
    struct rp_u64map status;        /* (source, status) → records since written     */
} S;

static void drop_raw_cache(void)
{
    for (size_t i = 0; i < S.raw.cap; i++)
        if (S.raw.used[i])
            free((void *)(uintptr_t)S.raw.vals[i]);
    rp_u64map_clear(&S.raw);
    S.raw_bytes = 0;
}

int rp_stacks_init(uint32_t depth)
{
    S.frames = malloc(((size_t)depth + 2) * sizeof *S.frames);
    return S.frames ? 0 : -1;
}

void rp_stacks_use(struct rp_chunk_writer *w, uint64_t generation, JNIEnv *jni)
{
    S.jni = jni;
    if (w == S.w && generation == S.generation)
        return;
    S.w = w;
    if (generation != S.generation) {
        rp_u64map_clear(&S.methods);
        rp_u64map_clear(&S.natives);
        rp_u64map_clear(&S.markers);
        rp_u64map_clear(&S.classes);
        drop_raw_cache();
        S.generation = generation;
    }
}

void rp_stacks_code_changed(void)
{
    if (rp_methods_compiled_epoch() != S.epoch) {
        S.epoch = rp_methods_compiled_epoch();
        drop_raw_cache();
    }
}

/* ------------------------------------------------------------- frame ids -- */

static uint32_t str(const char *s)
{
    return rp_chunk_cstring(S.w, s);
}

/* The chunk's method id of m (resolved by the caller as jm). The id of the
 * [unknown java method] placeholder is not cached: that lookup failed for a
 * passing cause, and the next sample's lookup may name the method. */
static uint32_t java_method_id(jmethodID jm, const struct rp_method *m)
{
    uint64_t v;
    if (rp_u64map_get(&S.methods, (uint64_t)(uintptr_t)jm, &v))
        return (uint32_t)v;
    uint32_t k = rp_chunk_class(S.w, str(m->klass));
    uint32_t id = rp_chunk_method(S.w, k, str(m->name), str(m->signature),
                                  str(m->file), m->flags);
    if (id && !rp_method_is_unknown(m))
        rp_u64map_put(&S.methods, (uint64_t)(uintptr_t)jm, id);
    return id;
}

static uint32_t java_frame_id(const struct rp_java_frame *fr,
                              const struct rp_java_frame *caller)
{
    jmethodID jm = (jmethodID)(uintptr_t)fr->method;
    /* Resolved once per frame: its line comes from the same answer (a second
     * lookup would count a failure twice under memory pressure). */
    const struct rp_method *m = rp_methods_get(S.jni, jm);
    uint32_t method = java_method_id(jm, m);
    if (!method)
        return 0;
    if (fr->bci == RP_BCI_NATIVE)
        return rp_chunk_frame(S.w, method, RP_FRAME_NATIVE, -1, 0);
    enum rp_frame_type t = rp_methods_frame_type(
        jm, caller ? (jmethodID)(uintptr_t)caller->method : NULL, caller ? caller->bci : 0);
    uint32_t line = rp_method_line(m, fr->bci);
    return rp_chunk_frame(S.w, method, t, fr->bci < 0 ? -1 : fr->bci, line);
}

static uint32_t native_frame_id(uint64_t pc)
{
    uint64_t v;
    if (rp_u64map_get(&S.natives, pc, &v))
        return (uint32_t)v;
    struct rp_native_sym sym;
    const char *stub = rp_codecache_name(pc);
    if (stub) {
        /* HotSpot's generated code: a stub, named as the JVM names it. */
        sym.lib = RP_STUB_LIB;
        sym.name = stub;
        sym.is_jvm = 1;
    } else {
        rp_symbols_resolve(pc, &sym);
    }
    uint32_t k = rp_chunk_class(S.w, str(sym.lib));
    uint32_t m = rp_chunk_method(S.w, k, str(sym.name), str(""), str(""), 0);
    uint32_t id = m ? rp_chunk_frame(S.w, m, sym.is_jvm ? RP_FRAME_CPP : RP_FRAME_NATIVE,
                                     -1, 0) : 0;
    if (id)
        rp_u64map_put(&S.natives, pc, id);
    return id;
}

/* ----------------------------------------------------------- walk status -- */

/* What a walk status means: its counter, its marker frame, and whether the stack
 * is an error (RP_STACK_ERROR) or only lacks Java frames. */
struct status_info {
    char counter[48];
    char marker[48];
    int error;
    int marker_if_empty_only;
};

/* Who took the stack of a record of type `type`, for the counters' names: the
 * prefix its kind registered (kind.h: the signal handler's "agct", the jvmti
 * sampler's, the allocation and monitor callbacks', the wall sampler's). */
static const char *walk_source(uint32_t type)
{
    const struct rp_kind *k;
    size_t i;
    const struct rp_kind_record *r = rp_kind_record(type, &k, &i);
    return r && r->walk ? r->walk : "unknown";
}

static void status_describe(int status, uint32_t type, struct status_info *o)
{
    static const char *const agct[] = {
        "no_class_load", "gc_active", "unknown_not_java", "not_walkable_not_java",
        "unknown_java", "not_walkable_java", "unknown_state", "thread_exit",
        "deopt", "safepoint"};
    o->error = 1;
    o->marker_if_empty_only = 0;
    if (status <= -1 && status >= -10) {
        snprintf(o->counter, sizeof o->counter, "agct.%s", agct[-status - 1]);
        snprintf(o->marker, sizeof o->marker, "[agct:%s]", agct[-status - 1]);
        return;
    }
    switch (status) {
    case RP_WALK_CRASHED:
        snprintf(o->counter, sizeof o->counter, "walk.crashed");
        snprintf(o->marker, sizeof o->marker, "[walk:crashed]");
        return;
    case RP_WALK_NO_AGCT:
        snprintf(o->counter, sizeof o->counter, "walk.no_agct");
        snprintf(o->marker, sizeof o->marker, "[no_agct]");
        return;
    case RP_WALK_NOT_JAVA:
        snprintf(o->counter, sizeof o->counter, "walk.not_java");
        snprintf(o->marker, sizeof o->marker, "[not_java]");
        o->error = 0;
        o->marker_if_empty_only = 1;
        return;
    case RP_WALK_NO_JAVA_FRAMES:
        snprintf(o->counter, sizeof o->counter, "%s.no_java_frames", walk_source(type));
        snprintf(o->marker, sizeof o->marker, "[no_java_frames]");
        o->error = 0;
        o->marker_if_empty_only = 1;
        return;
    case RP_WALK_JVMTI_ERROR:
        snprintf(o->counter, sizeof o->counter, "%s.get_stack_trace_failed",
                 walk_source(type));
        snprintf(o->marker, sizeof o->marker, "[jvmti:error]");
        return;
    default:
        snprintf(o->counter, sizeof o->counter, "agct.error_%d", -status);
        snprintf(o->marker, sizeof o->marker, "[agct:error_%d]", -status);
    }
}

static uint32_t marker_frame_id(int status, uint32_t type, const struct status_info *si)
{
    uint64_t key = (uint64_t)(uint32_t)status | (uint64_t)type << 32, v;
    if (rp_u64map_get(&S.markers, key, &v))
        return (uint32_t)v;
    uint32_t k = rp_chunk_class(S.w, str(""));
    uint32_t m = rp_chunk_method(S.w, k, str(si->marker), str(""), str(""), 0);
    uint32_t id = m ? rp_chunk_frame(S.w, m, RP_FRAME_MARKER, -1, 0) : 0;
    if (id)
        rp_u64map_put(&S.markers, key, id);
    return id;
}

/* The marker frame of the agent's own work on an application thread
 * ("[ringprof:alloc]", sample.h): the leaf of a CPU sample taken there. */
static uint32_t agent_frame_id(uint32_t work)
{
    uint64_t key = 1ull << 63 | work, v;
    if (rp_u64map_get(&S.markers, key, &v))
        return (uint32_t)v;
    uint32_t k = rp_chunk_class(S.w, str(""));
    uint32_t m = rp_chunk_method(S.w, k, str(rp_agent_work_name(work)), str(""),
                                 str(""), 0);
    uint32_t id = m ? rp_chunk_frame(S.w, m, RP_FRAME_MARKER, -1, 0) : 0;
    if (id)
        rp_u64map_put(&S.markers, key, id);
    return id;
}

/* ---------------------------------------------------------------- stacks -- */

static uint64_t raw_hash(const uint8_t *p, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = rp_mix64(h ^ w);
    }
    uint64_t tail = 0;
    memcpy(&tail, p + i, len - i);
    return rp_mix64(h ^ tail);
}

/* Build the chunk stack of a record (cache miss). */
static uint32_t build_stack(const struct rp_sample_hdr *h)
{
    uint32_t n = 0;
    const uint64_t *pcs = rp_sample_pcs(h);
    const struct rp_java_frame *java = rp_sample_java(h);
    if (h->type == RP_SAMPLE_CPU && h->agent && !(S.frames[n++] = agent_frame_id(h->agent)))
        return 0;
    for (uint32_t i = 0; i < h->nnative; i++)
        if (!(S.frames[n++] = native_frame_id(pcs[i])))
            return 0;
    for (uint32_t i = 0; i < h->njava; i++)
        if (!(S.frames[n++] = java_frame_id(&java[i],
                                             i + 1 < h->njava ? &java[i + 1] : NULL)))
            return 0;
    uint32_t flags = (h->flags & RP_SAMPLE_TRUNCATED) ? RP_STACK_TRUNCATED : 0;
    if (h->status != RP_WALK_OK) {
        struct status_info si;
        status_describe(h->status, h->type, &si);
        if (!si.marker_if_empty_only || n == 0) {
            if (!(S.frames[n++] = marker_frame_id(h->status, h->type, &si)))
                return 0;
        }
        if (si.error)
            flags |= RP_STACK_ERROR;
    }
    return rp_chunk_stack(S.w, S.frames, n, flags);
}

/* The hash of what makes a record's stack: type, flags, status and the frames
 * (time, weight and slot excluded). `len`: the header and frames. */
uint64_t rp_stacks_hash(const struct rp_sample_hdr *h, size_t len)
{
    uint64_t hash = raw_hash((const uint8_t *)(h + 1), len - sizeof *h) ^
                    rp_mix64((uint64_t)h->type << 48 | (uint64_t)h->flags << 32 |
                             (uint32_t)h->status);
    return hash ^ rp_mix64((uint64_t)h->nnative << 32 | h->njava) ^
           rp_mix64(0x5a17u ^ (uint64_t)h->agent << 40);
}

uint32_t rp_stacks_id(const struct rp_sample_hdr *h, size_t len)
{
    const uint8_t *key = (const uint8_t *)(h + 1);
    size_t klen = len - sizeof *h;
    uint64_t hash = rp_stacks_hash(h, len);
    uint64_t v;
    if (rp_u64map_get(&S.raw, hash, &v)) {
        const struct raw_stack *r = (const void *)(uintptr_t)v;
        if (r->len == klen && memcmp(r->bytes, key, klen) == 0)
            return r->stack;
        return build_stack(h);         /* a hash collision: do not cache */
    }
    uint32_t id = build_stack(h);
    if (!id)
        return 0;
    if (S.raw_bytes + klen > CACHE_MAX_BYTES)
        drop_raw_cache();
    struct raw_stack *r = malloc(sizeof *r + klen);
    if (r) {
        r->stack = id;
        r->len = (uint32_t)klen;
        memcpy(r->bytes, key, klen);
        if (rp_u64map_put(&S.raw, hash, (uint64_t)(uintptr_t)r) == 0)
            S.raw_bytes += sizeof *r + klen;
        else
            free(r);
    }
    return id;
}

/* ---------------------------------------------------------------- classes -- */

uint32_t rp_stacks_class(uint32_t klass)
{
    uint64_t v;
    if (rp_u64map_get(&S.classes, klass, &v))
        return (uint32_t)v;
    const char *name = rp_class_name(klass);
    uint32_t id = rp_chunk_class(S.w, str(name ? name : "[unknown class]"));
    if (id)
        rp_u64map_put(&S.classes, klass, id);
    return id;
}

/* ----------------------------------------------------------- status counts -- */

void rp_stacks_count_status(const struct rp_sample_hdr *h)
{
    if (h->status == RP_WALK_OK)
        return;
    uint64_t key = (uint64_t)(uint32_t)h->status | (uint64_t)h->type << 32, c = 0;
    rp_u64map_get(&S.status, key, &c);
    rp_u64map_put(&S.status, key, c + 1);
}

void rp_stacks_write_status(rp_counters_emit_fn emit, void *ctx)
{
    for (size_t i = 0; i < S.status.cap; i++) {
        if (!S.status.used[i] || !S.status.vals[i])
            continue;
        struct status_info si;
        status_describe((int)(int32_t)(uint32_t)S.status.keys[i],
                        (uint32_t)(S.status.keys[i] >> 32), &si);
        if (emit(ctx, si.counter, S.status.vals[i]) == 0)
            S.status.vals[i] = 0;
    }
}

uint32_t rp_stacks_build(const struct rp_sample_hdr *h)
{
    return build_stack(h);
}
