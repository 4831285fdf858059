/*
 * tools/model/profile.c — building the calling context tree from chunk files (profile.h).
 *
 * Everything the profile keeps is interned by content in hash tables that live as
 * long as the profile: strings (one arena), methods, frames, threads, and the CCT's
 * child links (parent, frame) -> node. What belongs to one chunk — the mapping of
 * its pool ids to profile indexes — is rebuilt per chunk, lazily, because ids are
 * only valid inside the chunk that issued them:
 *
 *   chunk frame id  -> profile frame       (frame_map)
 *   chunk thread id -> profile thread, and whether it passes --thread (thr_map;
 *                      dropped on a THREAD record, as the name may have changed)
 *   (chunk thread, chunk VTHREAD) -> the same for a virtual thread's samples on
 *                      a carrier (vt_tab; also dropped on a THREAD record, and
 *                      an entry whose virtual thread was renamed since)
 *   chunk kind id   -> selected or not, where its extras are (kind_map)
 *   chunk stack id  -> CCT leaf node       (leaf_arr in merged mode without class
 *                      frames, else leaf_tab keyed by root, stack and class)
 *
 * A sample therefore costs a few array look-ups and RP_PV_MAX additions once its
 * stack has been seen in the chunk. In merged mode the additions go to a dense
 * per-chunk array indexed by stack id (acc), added to the leaves when the chunk
 * ends, so the hot loop stays in cache however large the tree. The first sample of
 * a stack in a chunk maps its frames to profile frames and looks the sequence up
 * in a table of every stack seen so far (stk, by 128-bit hash); only a stack new
 * to the profile walks the tree. Nodes are created after their parent, so parent <
 * child and totals come out of one backward pass in rp_prof_finish.
 */
#include "profile.h"

#include "scan.h"
#include "xalloc.h"
#include "ringprof/hash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grow *arr (of `size`-byte elements, capacity *cap) to hold at least n+1. */
static void grow(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return;
    size_t c = *cap ? *cap * 2 : 64;
    *arr = rp_xrealloc(*arr, c * size);
    *cap = c;
}

/* Grow the map *arr, indexed by a chunk's ids (`size`-byte elements, *n of
 * them), to hold index `id`: its length doubles from `first`, and the new
 * elements are filled with the byte `fill` (0, or 0xff for RP_PROF_NONE). */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* ------------------------------------------------------------ the arena -- */

struct sblock {
    struct sblock *next;
    size_t used, cap;
    char data[];
};

/* An open-addressing set of uint32 indexes (RP_PROF_NONE = empty); the caller
 * hashes and compares, so one structure serves every table. */
struct idx_table {
    uint32_t *slot;
    size_t mask, used;
};

static void tab_init(struct idx_table *t, size_t cap)
{
    t->slot = rp_xrealloc(NULL, cap * sizeof *t->slot);
    memset(t->slot, 0xff, cap * sizeof *t->slot);
    t->mask = cap - 1;
    t->used = 0;
}

/* --------------------------------------------------------- build state -- */

struct frame_filter {      /* per profile frame: lazily evaluated regex results */
    uint8_t inc_done : 1, inc : 1, exc_done : 1, exc : 1;
};

struct kind_state {
    int8_t state;          /* 0: not looked at yet, 1: selected, -1: not        */
    int8_t class_x, objects_x;   /* extra indexes, -1: absent                   */
    int8_t state_x, age_x;
    int8_t unfinished;     /* lock.waiting: its records go through options.waiting */
    uint32_t seen;         /* index into p->kinds                               */
};

/* The leaf key's bit that marks a lock wait still in progress: stack_leaf adds
 * "[unfinished]" above its class frame. Class ids from extras are clamped below
 * it (no chunk defines that many: the density rule of docs/format.md). */
#define CLS_UNFINISHED 0x80000000u
#define CLS_MAX (CLS_UNFINISHED - 1)

struct thr_state {
    uint32_t thread;       /* profile thread + 1; 0: not resolved yet           */
    int8_t pass;
};

/* A virtual thread on a carrier, in the chunk being read. */
struct vt_entry {
    uint32_t thread, vthread;  /* chunk ids; vthread 0: empty slot             */
    const char *name;          /* the VTHREAD's name when resolved              */
    struct thr_state st;
};

struct kid_entry {
    uint32_t parent;       /* RP_PROF_NONE: empty slot                          */
    uint32_t ref;          /* frame index, or thread index | KID_THREAD         */
    uint32_t node;
};
#define KID_THREAD 0x80000000u

/* A distinct (root, frame sequence) seen before, in any chunk: its leaf. Keyed by
 * two independent 64-bit hashes of the sequence and not verified frame by frame:
 * a false match needs a 128-bit collision (odds about n^2 / 2^129 for n distinct
 * stacks: 1e-20 at a billion), and saves walking the tree, one cache miss per
 * frame, for every distinct stack of every chunk. */
struct stk_entry {
    uint64_t h1, h2;
    uint32_t leaf;         /* LEAF_NONE: empty slot; LEAF_DROPPED: filtered     */
    uint32_t pad;
};

struct leaf_entry {
    uint32_t root, stack, cls, leaf;
};

#define LEAF_NONE    RP_PROF_NONE         /* not computed                        */
#define LEAF_DROPPED (RP_PROF_NONE - 1)   /* filtered out by --include/--exclude */

struct rp_prof_build {
    int finished;
    struct rp_prof_options o;
    char *event;

    struct sblock *arena;
    struct idx_table strs;      /* -> index into str_list                       */
    const char **str_list;      size_t nstr, cap_str;
    const char **shown;         /* per string index: its demangled form (NULL:  */
    size_t cap_shown;           /* not asked yet), so each name is demangled once */

    struct idx_table meths, frms, thrs;
    struct stk_entry *stk;      size_t stk_mask, stk_used;
    struct kid_entry *kids;     /* (parent, ref) -> child, keys inline: one    */
    size_t kids_mask, kids_used;/* cache line per look-up, not two            */
    size_t cap_nodes, cap_frames, cap_methods, cap_threads, cap_sources, cap_kinds;
    struct frame_filter *ffilt; size_t cap_ffilt;

    /* per chunk */
    struct rp_stream st;        /* the chunk's clock, recording and kinds       */
    struct rp_reader *r;        /* st.r                                         */
    uint32_t source;
    int instant_ok;             /* options.instant: this chunk's instant, if any */
    uint64_t instant_mono;
    double interval_ns;         /* from agent.options, 0: unknown               */
    uint32_t *frame_map;        size_t n_frame_map;
    uint32_t *meth_map[2];      size_t n_meth_map[2];   /* [plain]: chunk method */
    struct thr_state *thr_map;  size_t n_thr_map;
    struct vt_entry *vt_tab;    size_t vt_mask, vt_used;
    struct kind_state *kind_map; size_t n_kind_map;
    struct thr_state thr_undefined;   /* what undefined chunk ids resolve to    */
    struct kind_state kind_undefined;
    uint32_t *leaf_arr;         size_t n_leaf_arr;
    struct acc { uint64_t v[RP_PV_MAX]; } *acc;   /* per chunk stack id, as      */
                                /* leaf_arr: sums added to the leaves at the end */
                                /* of the chunk; a small dense array keeps the   */
                                /* per-sample add in cache                       */
    struct leaf_entry *leaf_tab; size_t leaf_mask, leaf_used;
    uint32_t *pathbuf;          size_t cap_path;
    uint32_t *kind_of_str;      size_t n_kind_of_str;   /* string index -> kinds + 1 */
    uint32_t unknown_frame;     /* the markers of undefined chunk ids, once made */
    uint32_t unknown_method;    /* (RP_PROF_NONE until then)                     */
};

/* ------------------------------------------------------------- strings -- */

/* The index of `s` in the string table, interning it. */
static uint32_t str_id(struct rp_profile *p, const char *s)
{
    struct rp_prof_build *b = p->b;
    if (!s)
        s = "";
    if (b->strs.used * 2 >= b->strs.mask) {
        struct idx_table old = b->strs;
        tab_init(&b->strs, (old.mask + 1) * 2);
        for (size_t i = 0; i <= old.mask; i++) {
            uint32_t k = old.slot[i];
            if (k == RP_PROF_NONE)
                continue;
            size_t j = hash_str(b->str_list[k]) & b->strs.mask;
            while (b->strs.slot[j] != RP_PROF_NONE)
                j = (j + 1) & b->strs.mask;
            b->strs.slot[j] = k;
        }
        b->strs.used = old.used;
        free(old.slot);
    }
    size_t j = hash_str(s) & b->strs.mask;
    for (; b->strs.slot[j] != RP_PROF_NONE; j = (j + 1) & b->strs.mask)
        if (!strcmp(b->str_list[b->strs.slot[j]], s))
            return b->strs.slot[j];
    size_t len = strlen(s) + 1;
    struct sblock *blk = b->arena;
    if (!blk || blk->cap - blk->used < len) {
        size_t cap = len > 65536 ? len : 65536;
        blk = rp_xrealloc(NULL, sizeof *blk + cap);
        blk->used = 0;
        blk->cap = cap;
        blk->next = b->arena;
        b->arena = blk;
    }
    char *copy = blk->data + blk->used;
    memcpy(copy, s, len);
    blk->used += len;
    grow((void **)&b->str_list, &b->cap_str, b->nstr, sizeof *b->str_list);
    b->str_list[b->nstr] = copy;
    b->strs.slot[j] = (uint32_t)b->nstr++;
    b->strs.used++;
    return b->strs.slot[j];
}

static const char *str_intern(struct rp_profile *p, const char *s)
{
    uint32_t id = str_id(p, s);   /* first: it may move str_list */
    return p->b->str_list[id];
}

/* A native symbol as the profile shows it (options.demangle), interned. The
 * demangler runs once per distinct name: its answer is kept per string index. */
static const char *name_shown(struct rp_profile *p, const char *name)
{
    struct rp_prof_build *b = p->b;
    if (!name || b->o.demangle == RP_DEMANGLE_NONE || name[0] != '_' ||
        (name[1] != 'Z' && name[1] != 'R'))
        return str_intern(p, name);
    uint32_t id = str_id(p, name);
    rp_xgrow_map((void **)&b->shown, &b->cap_shown, id, sizeof *b->shown, 256, 0);
    if (!b->shown[id]) {
        char *d = rp_demangle(name, b->o.demangle);
        const char *shown = d ? str_intern(p, d) : b->str_list[id];
        b->shown[id] = shown;
        free(d);
    }
    return b->shown[id];
}

static const char *str_printf(struct rp_profile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static const char *str_printf(struct rp_profile *p, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return str_intern(p, "");
    if ((size_t)n < sizeof small)
        return str_intern(p, small);
    char *big = rp_xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    const char *s = str_intern(p, big);
    free(big);
    return s;
}

/* ---------------------------------------------------- generic rehashing -- */

/* Rehash `t` at double size; key_hash(p, idx) gives each stored index's hash. */
static void tab_grow(struct rp_profile *p, struct idx_table *t,
                     uint64_t (*key_hash)(const struct rp_profile *, uint32_t))
{
    if (t->used * 2 < t->mask)
        return;
    struct idx_table old = *t;
    tab_init(t, (old.mask + 1) * 2);
    for (size_t i = 0; i <= old.mask; i++) {
        uint32_t k = old.slot[i];
        if (k == RP_PROF_NONE)
            continue;
        size_t j = key_hash(p, k) & t->mask;
        while (t->slot[j] != RP_PROF_NONE)
            j = (j + 1) & t->mask;
        t->slot[j] = k;
    }
    t->used = old.used;
    free(old.slot);
}

/* -------------------------------------------------------------- methods -- */

static uint64_t method_hash_parts(const char *k, const char *n, const char *s,
                                  const char *f, int native)
{
    /* Strings are interned: their addresses identify them. */
    uint64_t h = rp_mix64((uintptr_t)f + (uint64_t)native);
    h = rp_mix64((uintptr_t)s ^ h);
    h = rp_mix64((uintptr_t)n ^ h);
    return rp_mix64((uintptr_t)k ^ h);
}

/* Whether methods are told apart by signature and file: native, C++, kernel,
 * marker and class frames always (their names are what --demangle made of
 * them); Java methods only with options.norm.signatures (frame_norm.h: by
 * default an overload is its class and name). */
static int by_signature(const struct rp_profile *p, int plain)
{
    return plain || p->b->o.norm.signatures != RP_SIG_MERGE;
}

static uint64_t method_hash(const struct rp_profile *p, uint32_t i)
{
    const struct rp_prof_method *m = &p->methods[i];
    int sig = by_signature(p, m->plain);
    return method_hash_parts(m->klass, m->name, sig ? m->signature : NULL,
                             sig ? m->file : NULL, m->plain);
}

/* A Java method's display name: "klass.name", with --signatures its parameter
 * list too ("java.util.Arrays.fill(long[], long)"). */
static const char *java_display(struct rp_profile *p, const char *klass, const char *name,
                                const char *sig)
{
    char params[4096];
    if (p->b->o.norm.signatures == RP_SIG_SHOW &&
        rp_norm_java_params(sig, params, sizeof params) >= 0)
        return str_printf(p, "%s.%s%s", klass, name, params);
    return str_printf(p, "%s.%s", klass, name);
}

/* `plain`: a native, C++, kernel, marker or class frame, displayed by name only.
 * `raw`: the name as recorded when `name` is its demangled form (NULL: `name`).
 * A Java method merged with its overloads keeps the first one's signature,
 * file and flags. */
static uint32_t method_intern(struct rp_profile *p, const char *klass, const char *name,
                              const char *sig, const char *file, uint32_t flags,
                              int plain, const char *raw)
{
    struct rp_prof_build *b = p->b;
    klass = str_intern(p, klass);
    name = str_intern(p, name);
    sig = str_intern(p, sig);
    file = str_intern(p, file);
    int native = plain ? 1 : 0;
    int by_sig = by_signature(p, native);
    tab_grow(p, &b->meths, method_hash);
    size_t j = method_hash_parts(klass, name, by_sig ? sig : NULL, by_sig ? file : NULL,
                                 native) & b->meths.mask;
    for (; b->meths.slot[j] != RP_PROF_NONE; j = (j + 1) & b->meths.mask) {
        const struct rp_prof_method *m = &p->methods[b->meths.slot[j]];
        if (m->klass == klass && m->name == name && m->plain == native &&
            (!by_sig || (m->signature == sig && m->file == file)))
            return b->meths.slot[j];
    }
    grow((void **)&p->methods, &b->cap_methods, p->nmethods, sizeof *p->methods);
    struct rp_prof_method *m = &p->methods[p->nmethods];
    m->klass = klass;
    m->name = name;
    m->signature = sig;
    m->file = file;
    m->raw = raw ? str_intern(p, raw) : name;
    m->flags = flags;
    m->plain = native;
    m->display = (plain || !klass[0]) ? name : java_display(p, klass, name, sig);
    b->meths.slot[j] = (uint32_t)p->nmethods;
    b->meths.used++;
    return (uint32_t)p->nmethods++;
}

/* --------------------------------------------------------------- frames -- */

static int frame_is_java(int type)
{
    return type == RP_FRAME_INTERPRETED || type == RP_FRAME_JIT ||
           type == RP_FRAME_INLINED;
}

static uint64_t frame_hash_parts(uint32_t method, int type, int32_t bci, uint32_t line)
{
    return rp_mix64(((uint64_t)method << 32 | (uint32_t)type) ^
                 rp_mix64((uint64_t)(uint32_t)bci << 32 | line));
}

static uint64_t frame_hash(const struct rp_profile *p, uint32_t i)
{
    const struct rp_prof_frame *f = &p->frames[i];
    return frame_hash_parts(f->method, f->type, f->bci, f->line);
}

static uint32_t frame_intern(struct rp_profile *p, uint32_t method, int type,
                             int32_t bci, uint32_t line)
{
    struct rp_prof_build *b = p->b;
    if (!frame_is_java(type) || (p->granularity != RP_GRAN_BCI &&
                                 p->granularity != RP_GRAN_FULL))
        bci = -1;
    if (!frame_is_java(type) || p->granularity == RP_GRAN_METHOD)
        line = 0;   /* RP_GRAN_BCI keeps it too: one bci has one line */
    if (bci < -1)
        bci = -1;
    tab_grow(p, &b->frms, frame_hash);
    size_t j = frame_hash_parts(method, type, bci, line) & b->frms.mask;
    for (; b->frms.slot[j] != RP_PROF_NONE; j = (j + 1) & b->frms.mask) {
        const struct rp_prof_frame *f = &p->frames[b->frms.slot[j]];
        if (f->method == method && f->type == type && f->bci == bci &&
            f->line == line)
            return b->frms.slot[j];
    }
    grow((void **)&p->frames, &b->cap_frames, p->nframes, sizeof *p->frames);
    grow((void **)&b->ffilt, &b->cap_ffilt, p->nframes, sizeof *b->ffilt);
    struct rp_prof_frame *f = &p->frames[p->nframes];
    f->method = method;
    f->type = type;
    f->bci = bci;
    f->line = line;
    const char *md = p->methods[method].display;
    if (p->methods[method].plain)   /* a group (class, package) has no lines */
        f->display = md;
    else if (frame_is_java(type) && p->granularity == RP_GRAN_LINE)
        f->display = line ? str_printf(p, "%s:%u", md, line) : str_printf(p, "%s:?", md);
    else if (frame_is_java(type) && p->granularity == RP_GRAN_BCI)
        f->display = bci >= 0 ? str_printf(p, "%s@%d", md, bci) : str_printf(p, "%s@?", md);
    else
        f->display = md;
    memset(&b->ffilt[p->nframes], 0, sizeof *b->ffilt);
    b->frms.slot[j] = (uint32_t)p->nframes;
    b->frms.used++;
    return (uint32_t)p->nframes++;
}

/* A converter-made frame: "[truncated]", "[no stack]", ... */
static uint32_t marker_frame(struct rp_profile *p, const char *text)
{
    return frame_intern(p, method_intern(p, "", text, "", "", 0, 1, NULL), RP_FRAME_MARKER,
                        -1, 0);
}

/* A Java class name as the profile shows it: without a hidden class's address
 * when options.norm asks (frame_norm.h). */
static const char *class_shown(struct rp_profile *p, const char *klass)
{
    if (!klass || !p->b->o.norm.hidden_classes)
        return klass;
    size_t n = rp_norm_hidden_class(klass);
    return klass[n] ? str_printf(p, "%.*s", (int)n, klass) : klass;
}

/*
 * The per-chunk maps are indexed by chunk ids, and grow only for ids the chunk
 * defined: the reader bounds those by what the file holds (format.h,
 * RP_POOL_ID_SLACK), while a reference may name any id. One stack naming frame
 * 4294967295 made the frame map 16 GiB. An undefined id is damage the reader has
 * counted and reported; it reads as the "[unknown ...]" marker, which the build
 * keeps aside (unknown_frame, unknown_method; thr_undefined and kind_undefined for
 * the thread and kind maps) instead of in the map.
 */

/* The profile method for chunk method `id` seen in a plain (native, ...) frame or
 * a Java one, via the per-chunk maps: most frames of a chunk share their methods.
 * A plain frame's name is a symbol, shown demangled (name_shown). */
static uint32_t chunk_method(struct rp_profile *p, uint32_t id, int plain)
{
    struct rp_prof_build *b = p->b;
    uint32_t **map = &b->meth_map[plain];
    size_t *n = &b->n_meth_map[plain];
    if (id < *n && (*map)[id] != RP_PROF_NONE)
        return (*map)[id];
    const struct rp_method_info *mi = rp_reader_method(b->r, id);
    if (!mi) {
        if (b->unknown_method == RP_PROF_NONE)
            b->unknown_method =
                method_intern(p, "", "[unknown method]", "", "", 0, 1, NULL);
        return b->unknown_method;
    }
    uint32_t m = method_intern(p, plain ? mi->klass : class_shown(p, mi->klass),
                               plain ? name_shown(p, mi->name) : mi->name, mi->signature,
                               mi->file, mi->flags, plain, mi->name);
    rp_xgrow_map((void **)map, n, id, sizeof **map, 256, 0xff);
    (*map)[id] = m;
    return m;
}

/* The profile frame for chunk frame `id`, via the per-chunk map. */
static uint32_t chunk_frame(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    if (id < b->n_frame_map && b->frame_map[id] != RP_PROF_NONE)
        return b->frame_map[id];
    const struct rp_frame_info *fi = rp_reader_frame(b->r, id);
    if (!fi) {
        if (b->unknown_frame == RP_PROF_NONE)
            b->unknown_frame = marker_frame(p, "[unknown frame]");
        return b->unknown_frame;
    }
    /* Native code is named by its bare symbol; a Java method declared native
     * (RP_METHOD_NATIVE, e.g. Deflater.deflateBytesBytes) keeps its class. */
    const struct rp_method_info *mi = rp_reader_method(b->r, fi->method);
    int plain = !frame_is_java(fi->type) && !(mi && (mi->flags & RP_METHOD_NATIVE));
    uint32_t m = chunk_method(p, fi->method, plain);
    int type = (int)fi->type < RP_FRAME_TYPES ? (int)fi->type : RP_FRAME_CPP;
    if (frame_is_java(type) && (b->o.norm.merge_types || b->o.norm.group))
        type = RP_FRAME_JIT;
    uint32_t f = frame_intern(p, m, type, fi->bci, fi->line);
    rp_xgrow_map((void **)&b->frame_map, &b->n_frame_map, id, sizeof *b->frame_map, 256, 0xff);
    b->frame_map[id] = f;
    return f;
}

/* --------------------------------------------------------------- sources -- */

static uint32_t source_for(struct rp_profile *p, struct rp_reader *r)
{
    struct rp_prof_build *b = p->b;
    const char *pid = rp_reader_meta(r, RP_META_PID);
    const char *host = rp_reader_meta(r, RP_META_HOST);
    char buf[512];
    const char *key = str_intern(p, rp_recording_key(r, buf, sizeof buf));
    for (size_t i = 0; i < p->nsources; i++)
        if (p->sources[i].recording == key)
            return (uint32_t)i;
    grow((void **)&p->sources, &b->cap_sources, p->nsources, sizeof *p->sources);
    struct rp_prof_source *s = &p->sources[p->nsources];
    memset(s, 0, sizeof *s);
    s->recording = key;
    s->pid = str_intern(p, pid);
    s->host = str_intern(p, host);
    s->jvm = str_intern(p, rp_reader_meta(r, RP_META_JVM_NAME));
    s->service = str_intern(p, rp_reader_meta(r, RP_META_SERVICE));
    s->labels = str_intern(p, rp_reader_meta(r, RP_META_LABELS));
    s->main = str_intern(p, rp_reader_meta(r, RP_META_JVM_MAIN));
    return (uint32_t)p->nsources++;
}

/* --------------------------------------------------------------- threads -- */

static uint64_t thread_hash_parts(uint32_t source, uint64_t tid, uint64_t vthread)
{
    return rp_mix64(tid ^ rp_mix64(source + 1) ^ rp_mix64(vthread ^ 0x7674ull));
}

static uint64_t thread_hash(const struct rp_profile *p, uint32_t i)
{
    return thread_hash_parts(p->threads[i].source, p->threads[i].os_tid,
                             p->threads[i].vthread);
}

static uint32_t node_new(struct rp_profile *p, uint32_t parent, uint16_t kind,
                         uint32_t ref);

/* Where the current source's thread `tid` (with virtual thread `vthread` on it,
 * 0: its own) is in the thread table: @return j with b->thrs.slot[j] its index,
 * or RP_PROF_NONE (the free slot it would take). The table must exist
 * (tab_grow). */
static size_t thread_slot(const struct rp_profile *p, uint64_t tid, uint64_t vthread)
{
    const struct rp_prof_build *b = p->b;
    size_t j = thread_hash_parts(b->source, tid, vthread) & b->thrs.mask;
    for (; b->thrs.slot[j] != RP_PROF_NONE; j = (j + 1) & b->thrs.mask) {
        const struct rp_prof_thread *t = &p->threads[b->thrs.slot[j]];
        if (t->source == b->source && t->os_tid == tid && t->vthread == vthread)
            break;
    }
    return j;
}

static uint32_t thread_intern(struct rp_profile *p, uint64_t tid, uint64_t vthread)
{
    struct rp_prof_build *b = p->b;
    tab_grow(p, &b->thrs, thread_hash);
    size_t j = thread_slot(p, tid, vthread);
    if (b->thrs.slot[j] != RP_PROF_NONE)
        return b->thrs.slot[j];
    grow((void **)&p->threads, &b->cap_threads, p->nthreads, sizeof *p->threads);
    struct rp_prof_thread *t = &p->threads[p->nthreads];
    memset(t, 0, sizeof *t);
    t->source = b->source;
    t->os_tid = tid;
    t->vthread = vthread;
    t->name = str_intern(p, "");
    t->renamed = t->name;
    t->carrier = t->name;
    t->label = str_printf(p, "[tid %llu]", (unsigned long long)tid);
    t->node = RP_PROF_NONE;
    b->thrs.slot[j] = (uint32_t)p->nthreads;
    b->thrs.used++;
    uint32_t idx = (uint32_t)p->nthreads++;
    if (p->per_thread)
        p->threads[idx].node = node_new(p, 0, RP_PNODE_THREAD, idx);
    return idx;
}

/* A virtual thread's label: "[name (virtual #ID) on CARRIER]", or, unnamed,
 * "[virtual #ID on CARRIER]" ("on tid N" for an unnamed carrier). */
static void vthread_label(struct rp_profile *p, struct rp_prof_thread *t)
{
    char shown[1024], carrier[600];
    rp_thread_display(shown, sizeof shown, t->name, t->renamed);
    if (t->carrier[0])
        snprintf(carrier, sizeof carrier, "%s", t->carrier);
    else
        snprintf(carrier, sizeof carrier, "tid %llu", (unsigned long long)t->os_tid);
    if (t->name[0])
        t->label = str_printf(p, "[%s (virtual #%llu) on %s]", shown,
                              (unsigned long long)t->vthread, carrier);
    else
        t->label = str_printf(p, "[virtual #%llu on %s]", (unsigned long long)t->vthread,
                              carrier);
}

/* Thread t was (re)named `name`: the first name stays; a later one is `renamed`. */
static void thread_named(struct rp_profile *p, struct rp_prof_thread *t, const char *name)
{
    if (!name || !name[0])
        return;
    if (!t->name[0])
        t->name = str_intern(p, name);
    else
        t->renamed = str_intern(p, strcmp(name, t->name) ? name : "");
    if (t->vthread) {
        vthread_label(p, t);
        return;
    }
    char shown[1024];
    rp_thread_display(shown, sizeof shown, t->name, t->renamed);
    t->label = str_printf(p, "[%s]", shown);
}

void rp_prof_thread_name(char *buf, size_t cap, const struct rp_prof_thread *t)
{
    if (t->vthread && !t->name[0])
        snprintf(buf, cap, "virtual #%llu", (unsigned long long)t->vthread);
    else
        rp_thread_display(buf, cap, t->name, t->renamed);
}

/* A chunk's thread definition (RP_EV_THREAD) of a thread the profile already has
 * renames it, sampled in this chunk or not: main becomes DestroyJavaVM after its
 * last sample. */
static void thread_redefined(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    const struct rp_thread_info *ti = rp_reader_thread(b->r, id);
    if (!ti || !b->thrs.slot)
        return;
    uint32_t t = b->thrs.slot[thread_slot(p, ti->os_tid, 0)];
    if (t != RP_PROF_NONE)
        thread_named(p, &p->threads[t], ti->name);
}

/* Resolve chunk thread `id`: its profile thread, and whether it passes --thread. */
static struct thr_state *chunk_thread(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    const struct rp_thread_info *ti = id ? rp_reader_thread(b->r, id) : NULL;
    struct thr_state *ts = &b->thr_undefined;   /* the map holds defined ids only */
    if (ti || !id) {
        rp_xgrow_map((void **)&b->thr_map, &b->n_thr_map, id, sizeof *b->thr_map, 64, 0);
        ts = &b->thr_map[id];
    }
    if (ts->thread)
        return ts;
    uint32_t t = thread_intern(p, ti ? ti->os_tid : 0, 0);
    struct rp_prof_thread *th = &p->threads[t];
    if (ti) {
        th->java_tid = ti->java_tid;
        th->flags = ti->flags;
        thread_named(p, th, ti->name);
    } else if (!th->name[0]) {
        th->label = str_intern(p, id ? "[unknown thread]" : "[no thread]");
    }
    ts->thread = t + 1;
    const char *now = ti && ti->name && ti->name[0] ? ti->name : th->name;
    ts->pass = !b->o.thread_re || regexec(b->o.thread_re, now, 0, NULL, 0) == 0;
    return ts;
}

/* Resolve the samples of chunk VTHREAD `vid` on chunk thread `id`: the profile
 * thread of that virtual thread on that carrier, and whether its name or its
 * carrier's passes --thread. */
static struct thr_state *chunk_vthread(struct rp_profile *p, uint32_t id, uint32_t vid)
{
    struct rp_prof_build *b = p->b;
    const struct rp_vthread_info *vi = rp_reader_vthread(b->r, vid);
    if (!b->vt_tab || (b->vt_used + 1) * 2 > b->vt_mask) {
        struct vt_entry *old = b->vt_tab;
        size_t n = old ? b->vt_mask + 1 : 0;
        b->vt_mask = n ? n * 2 - 1 : 63;
        b->vt_tab = rp_xcalloc(b->vt_mask + 1, sizeof *b->vt_tab);
        b->vt_used = 0;
        for (size_t i = 0; i < n; i++)
            if (old[i].vthread) {
                size_t j = rp_mix64((uint64_t)old[i].thread << 32 | old[i].vthread) &
                           b->vt_mask;
                while (b->vt_tab[j].vthread)
                    j = (j + 1) & b->vt_mask;
                b->vt_tab[j] = old[i];
                b->vt_used++;
            }
        free(old);
    }
    size_t j = rp_mix64((uint64_t)id << 32 | vid) & b->vt_mask;
    while (b->vt_tab[j].vthread && (b->vt_tab[j].thread != id || b->vt_tab[j].vthread != vid))
        j = (j + 1) & b->vt_mask;
    struct vt_entry *e = &b->vt_tab[j];
    if (e->vthread && (!vi || e->name == vi->name))
        return &e->st;
    if (!e->vthread)
        b->vt_used++;
    const struct rp_thread_info *ci = id ? rp_reader_thread(b->r, id) : NULL;
    /* A VTHREAD record lost to damage leaves the id: the samples stay apart. */
    uint64_t java_tid = vi ? vi->java_tid : vid;
    uint32_t t = thread_intern(p, ci ? ci->os_tid : 0, java_tid);
    struct rp_prof_thread *th = &p->threads[t];
    th->java_tid = java_tid;
    th->flags = ci ? ci->flags : 0;
    if (ci && ci->name && !th->carrier[0])
        th->carrier = str_intern(p, ci->name);
    vthread_label(p, th);
    thread_named(p, th, vi ? vi->name : NULL);
    *e = (struct vt_entry){.thread = id, .vthread = vid, .name = vi ? vi->name : NULL,
                           .st = {.thread = t + 1}};
    char id_text[32];
    snprintf(id_text, sizeof id_text, "virtual #%llu", (unsigned long long)java_tid);
    e->st.pass = !b->o.thread_re ||
                 (vi && vi->name[0] && regexec(b->o.thread_re, vi->name, 0, NULL, 0) == 0) ||
                 (ci && ci->name && regexec(b->o.thread_re, ci->name, 0, NULL, 0) == 0) ||
                 regexec(b->o.thread_re, id_text, 0, NULL, 0) == 0;
    return &e->st;
}

/* ----------------------------------------------------------------- nodes -- */

static uint64_t kid_hash(uint32_t parent, uint32_t ref)
{
    return rp_mix64((uint64_t)parent << 32 | ref);
}

static void kids_grow(struct rp_prof_build *b)
{
    if (b->kids && (b->kids_used + 1) * 2 <= b->kids_mask)
        return;
    size_t ocap = b->kids ? b->kids_mask + 1 : 0, cap = ocap ? ocap * 2 : 4096;
    struct kid_entry *old = b->kids;
    b->kids = rp_xrealloc(NULL, cap * sizeof *b->kids);
    memset(b->kids, 0xff, cap * sizeof *b->kids);
    b->kids_mask = cap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].parent == RP_PROF_NONE)
            continue;
        size_t j = kid_hash(old[i].parent, old[i].ref) & b->kids_mask;
        while (b->kids[j].parent != RP_PROF_NONE)
            j = (j + 1) & b->kids_mask;
        b->kids[j] = old[i];
    }
    free(old);
}

static uint32_t node_new(struct rp_profile *p, uint32_t parent, uint16_t kind,
                         uint32_t ref)
{
    struct rp_prof_build *b = p->b;
    if (p->nnodes >= RP_PROF_NONE - 2) {
        fputs("ringprof: convert: more than 4 billion call paths\n", stderr);
        exit(1);
    }
    grow((void **)&p->nodes, &b->cap_nodes, p->nnodes, sizeof *p->nodes);
    uint32_t i = (uint32_t)p->nnodes++;
    struct rp_prof_node *n = &p->nodes[i];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->kind = kind;
    n->ref = ref;
    n->first_child = RP_PROF_NONE;
    n->next_sibling = RP_PROF_NONE;
    if (parent != RP_PROF_NONE) {
        struct rp_prof_node *pn = &p->nodes[parent];
        n->depth = pn->depth == UINT16_MAX ? UINT16_MAX : (uint16_t)(pn->depth + 1);
        n->next_sibling = pn->first_child;
        pn->first_child = i;
        uint32_t key = kind == RP_PNODE_THREAD ? ref | KID_THREAD : ref;
        kids_grow(b);
        size_t j = kid_hash(parent, key) & b->kids_mask;
        while (b->kids[j].parent != RP_PROF_NONE)
            j = (j + 1) & b->kids_mask;
        b->kids[j] = (struct kid_entry){parent, key, i};
        b->kids_used++;
    }
    return i;
}

static uint32_t node_child(struct rp_profile *p, uint32_t parent, uint32_t frame)
{
    struct rp_prof_build *b = p->b;
    size_t j = kid_hash(parent, frame) & b->kids_mask;
    for (; b->kids[j].parent != RP_PROF_NONE; j = (j + 1) & b->kids_mask)
        if (b->kids[j].parent == parent && b->kids[j].ref == frame)
            return b->kids[j].node;
    return node_new(p, parent, RP_PNODE_FRAME, frame);
}

/* ------------------------------------------------------------ the stacks -- */

static int frame_matches(struct rp_profile *p, uint32_t f, int exclude)
{
    struct frame_filter *ff = &p->b->ffilt[f];
    if (exclude) {
        if (!ff->exc_done) {
            ff->exc = regexec(p->b->o.exclude_re, p->frames[f].display, 0, NULL, 0) == 0;
            ff->exc_done = 1;
        }
        return ff->exc;
    }
    if (!ff->inc_done) {
        ff->inc = regexec(p->b->o.include_re, p->frames[f].display, 0, NULL, 0) == 0;
        ff->inc_done = 1;
    }
    return ff->inc;
}

static struct stk_entry *stk_find(struct rp_prof_build *b, uint64_t h1, uint64_t h2)
{
    size_t j = h1 & b->stk_mask;
    while (b->stk[j].leaf != LEAF_NONE && (b->stk[j].h1 != h1 || b->stk[j].h2 != h2))
        j = (j + 1) & b->stk_mask;
    return &b->stk[j];
}

static void stk_grow(struct rp_prof_build *b)
{
    if (b->stk && (b->stk_used + 1) * 2 <= b->stk_mask)
        return;
    size_t ocap = b->stk ? b->stk_mask + 1 : 0, cap = ocap ? ocap * 2 : 1024;
    struct stk_entry *old = b->stk;
    b->stk = rp_xrealloc(NULL, cap * sizeof *b->stk);
    memset(b->stk, 0xff, cap * sizeof *b->stk);
    b->stk_mask = cap - 1;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].leaf != LEAF_NONE)
            *stk_find(b, old[i].h1, old[i].h2) = old[i];
    free(old);
}

/* The frame that Java frame `f` becomes under options.norm.group: its class or
 * package, as a plain method in a JIT frame (frame_norm.h). Other frames stay. */
static uint32_t group_frame(struct rp_profile *p, uint32_t f)
{
    const struct rp_prof_frame *fr = &p->frames[f];
    const struct rp_prof_method *m = &p->methods[fr->method];
    if (!frame_is_java(fr->type) || m->plain || !m->klass[0])
        return f;
    const char *name = m->klass;
    if (p->b->o.norm.group == RP_GROUP_PACKAGE) {
        size_t n = rp_norm_package_len(m->klass);
        name = n ? str_printf(p, "%.*s", (int)n, m->klass) : "[default package]";
    }
    return frame_intern(p, method_intern(p, "", name, "", "", 0, 1, NULL), RP_FRAME_JIT,
                        -1, 0);
}

/* Group the frames of path[0..len) in place, merging consecutive frames that
 * became equal. @return the new length. */
static size_t group_path(struct rp_profile *p, uint32_t *path, size_t len)
{
    size_t out = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t g = group_frame(p, path[i]);
        if (!out || path[out - 1] != g || g == path[i])
            path[out++] = g;
    }
    return out;
}

/* Walk chunk stack `stack` (plus the leaf frame `cls` stands for, if not 0) from
 * `root` down, creating nodes. @return the leaf, or LEAF_DROPPED. `cls` is a
 * chunk class id (the allocated class, the monitor's class), or with
 * options.state_frames a thread state + 1 (a profile holds one kind, and a kind
 * with a "state" extra has no "class" extra, so the two cannot mix), with
 * CLS_UNFINISHED for a lock wait in progress. */
static uint32_t stack_leaf(struct rp_profile *p, uint32_t root, uint32_t stack,
                           uint32_t cls)
{
    struct rp_prof_build *b = p->b;
    uint32_t n = 0, flags = 0;
    const uint32_t *ids = stack ? rp_reader_stack(b->r, stack, &n, &flags) : NULL;
    size_t need = (size_t)n + 3;
    if (need > b->cap_path) {
        b->cap_path = need * 2;
        b->pathbuf = rp_xrealloc(b->pathbuf, b->cap_path * sizeof *b->pathbuf);
    }
    uint32_t *path = b->pathbuf;
    size_t len = 0;
    if (!ids && stack)
        path[len++] = marker_frame(p, "[unknown stack]");
    else if (n == 0)
        path[len++] = marker_frame(p, "[no stack]");
    if (flags & RP_STACK_TRUNCATED)
        path[len++] = marker_frame(p, "[truncated]");
    for (uint32_t i = n; i-- > 0;)
        path[len++] = chunk_frame(p, ids[i]);
    if (cls & CLS_UNFINISHED) {
        path[len++] = marker_frame(p, "[unfinished]");
        cls &= ~CLS_UNFINISHED;
    }
    if (cls && b->o.state_frames && p->has_states) {
        char text[32];
        snprintf(text, sizeof text, "[state:%s]", rp_thread_state_name(cls - 1));
        path[len++] = marker_frame(p, text);
    } else if (cls) {
        const char *name = class_shown(p, rp_reader_class(b->r, cls));
        uint32_t m = method_intern(p, "", name ? name : "[unknown class]", "", "", 0, 1,
                                   NULL);
        path[len++] = frame_intern(p, m, RP_PFRAME_CLASS, -1, 0);
    }
    uint64_t h1 = rp_mix64(root + 0x9e3779b97f4a7c15ull), h2 = rp_mix64(root ^ 0xc2b2ae3d27d4eb4full);
    for (size_t i = 0; i < len; i++) {
        h1 = rp_mix64(h1 ^ path[i]);
        h2 = rp_mix64(h2 + path[i] * 0x9e3779b97f4a7c15ull + len);
    }
    struct stk_entry *e = stk_find(b, h1, h2);
    if (e->leaf != LEAF_NONE)
        return e->leaf;
    uint32_t node = root;
    if (b->o.include_re) {
        size_t i = 0;
        while (i < len && !frame_matches(p, path[i], 0))
            i++;
        if (i == len)
            node = LEAF_DROPPED;
    }
    if (b->o.exclude_re && node != LEAF_DROPPED)
        for (size_t i = 0; i < len; i++)
            if (frame_matches(p, path[i], 1)) {
                node = LEAF_DROPPED;
                break;
            }
    if (b->o.norm.group && node != LEAF_DROPPED)
        len = group_path(p, path, len);
    for (size_t i = 0; i < len && node != LEAF_DROPPED; i++)
        node = node_child(p, node, path[i]);
    stk_grow(b);
    e = stk_find(b, h1, h2);
    *e = (struct stk_entry){h1, h2, node, 0};
    b->stk_used++;
    return node;
}

static uint64_t leaf_hash(uint32_t root, uint32_t stack, uint32_t cls)
{
    return rp_mix64((uint64_t)root << 32 | stack) ^ rp_mix64(cls + 0x9e3779b97f4a7c15ull);
}

/*
 * Whether samples of (root 0, stack, class 0) use the arrays indexed by stack id
 * (leaf_arr, acc) rather than the hash table. Only for ids the chunk has defined:
 * the reader bounds those by what the file holds (format.h, RP_POOL_ID_SLACK),
 * while a sample may name any id, and one sample naming stack 4000000000 made
 * the arrays 4 G entries long (found by tests/fuzz: sample-huge-stack-id.rpc).
 */
static int leaf_dense(const struct rp_prof_build *b, uint32_t root, uint32_t stack,
                      uint32_t cls)
{
    uint32_t n, flags;
    return root == 0 && cls == 0 &&
           (stack < b->n_leaf_arr || rp_reader_stack(b->r, stack, &n, &flags));
}

/* The leaf for (root, stack, cls) in this chunk, computed on first use. */
static uint32_t leaf_for(struct rp_profile *p, uint32_t root, uint32_t stack,
                         uint32_t cls)
{
    struct rp_prof_build *b = p->b;
    if (leaf_dense(b, root, stack, cls)) {
        if (stack < b->n_leaf_arr && b->leaf_arr[stack] != LEAF_NONE)
            return b->leaf_arr[stack];
        uint32_t leaf = stack_leaf(p, 0, stack, 0);
        if (stack >= b->n_leaf_arr) {
            size_t n = b->n_leaf_arr ? b->n_leaf_arr : 1024;
            while (n <= stack)
                n *= 2;
            b->leaf_arr = rp_xrealloc(b->leaf_arr, n * sizeof *b->leaf_arr);
            memset(b->leaf_arr + b->n_leaf_arr, 0xff,
                   (n - b->n_leaf_arr) * sizeof *b->leaf_arr);
            b->acc = rp_xrealloc(b->acc, n * sizeof *b->acc);
            memset(b->acc + b->n_leaf_arr, 0, (n - b->n_leaf_arr) * sizeof *b->acc);
            b->n_leaf_arr = n;
        }
        b->leaf_arr[stack] = leaf;
        return leaf;
    }
    if (b->leaf_used * 2 >= b->leaf_mask) {
        size_t ncap = b->leaf_tab ? (b->leaf_mask + 1) * 2 : 1024;
        struct leaf_entry *nt = rp_xrealloc(NULL, ncap * sizeof *nt);
        memset(nt, 0xff, ncap * sizeof *nt);
        for (size_t i = 0; b->leaf_tab && i <= b->leaf_mask; i++) {
            struct leaf_entry *e = &b->leaf_tab[i];
            if (e->leaf == LEAF_NONE)
                continue;
            size_t j = leaf_hash(e->root, e->stack, e->cls) & (ncap - 1);
            while (nt[j].leaf != LEAF_NONE)
                j = (j + 1) & (ncap - 1);
            nt[j] = *e;
        }
        free(b->leaf_tab);
        b->leaf_tab = nt;
        b->leaf_mask = ncap - 1;
    }
    size_t j = leaf_hash(root, stack, cls) & b->leaf_mask;
    for (; b->leaf_tab[j].leaf != LEAF_NONE; j = (j + 1) & b->leaf_mask) {
        struct leaf_entry *e = &b->leaf_tab[j];
        if (e->root == root && e->stack == stack && e->cls == cls)
            return e->leaf;
    }
    uint32_t leaf = stack_leaf(p, root, stack, cls);
    /* stack_leaf does not touch leaf_tab, so slot j is still free. */
    b->leaf_tab[j] = (struct leaf_entry){root, stack, cls, leaf};
    b->leaf_used++;
    return leaf;
}

/* ----------------------------------------------------------------- kinds -- */

static double parse_interval(const char *opts)
{
    const char *s = opts ? strstr(opts, "interval=") : NULL;
    if (!s)
        return 0;
    char *end;
    double v = strtod(s + 9, &end);
    if (v <= 0)
        return 0;
    if (!strncmp(end, "ns", 2))
        return v;
    if (!strncmp(end, "us", 2))
        return v * 1e3;
    if (!strncmp(end, "ms", 2))
        return v * 1e6;
    if (*end == 's')
        return v * 1e9;
    return v;   /* a bare number: ns, as the agent writes it */
}

static int unit_is_count(const char *unit)
{
    return !unit[0] || !strcmp(unit, "samples") || !strcmp(unit, "count");
}

/* The entry of p->kinds for a chunk's kind, by name: found through the name's
 * string index (kind_of_str), as a file may define kinds by the hundred thousand. */
static uint32_t kind_seen(struct rp_profile *p, const struct rp_kind_info *ki)
{
    struct rp_prof_build *b = p->b;
    uint32_t sid = str_id(p, ki ? ki->name : "[unknown kind]");
    rp_xgrow_map((void **)&b->kind_of_str, &b->n_kind_of_str, sid, sizeof *b->kind_of_str,
                 64, 0);
    if (b->kind_of_str[sid])
        return b->kind_of_str[sid] - 1;
    const char *name = b->str_list[sid];
    grow((void **)&p->kinds, &b->cap_kinds, p->nkinds, sizeof *p->kinds);
    b->kind_of_str[sid] = (uint32_t)p->nkinds + 1;
    struct rp_prof_kind_seen *k = &p->kinds[p->nkinds];
    k->name = name;
    k->unit = str_intern(p, ki ? ki->unit : "");
    k->period = ki ? ki->period : 0;
    k->samples = 0;
    return (uint32_t)p->nkinds++;
}

/* Select the profile's kind from its first matching KIND record (lock.waiting
 * makes the profile's kind lock, whose part it is when `event` is lock). */
static void kind_select(struct rp_profile *p, const struct rp_kind_info *ki, int *class_x,
                        int *objects_x)
{
    struct rp_prof_build *b = p->b;
    *class_x = *objects_x = -1;
    for (uint32_t i = 0; i < ki->nextra && i < RP_MAX_EXTRA; i++) {
        if (ki->extra[i] && !strcmp(ki->extra[i], "class"))
            *class_x = (int)i;
        if (ki->extra[i] && !strcmp(ki->extra[i], "objects"))
            *objects_x = (int)i;
        if (ki->extra[i] && !strcmp(ki->extra[i], "state"))
            p->has_states = 1;
    }
    if (p->kind[0])
        return;
    p->kind = str_intern(p, b->event && rp_kind_in_event(b->event, ki->name) ? b->event
                                                                               : ki->name);
    p->unit = str_intern(p, ki->unit ? ki->unit : "");
    p->period = ki->period;
    if (!b->event)
        b->event = strdup(p->kind);
    p->vtypes[RP_PV_WEIGHT].type = p->kind;
    p->vtypes[RP_PV_WEIGHT].unit = p->unit;
    if (*objects_x >= 0) {
        p->nvalues = 3;
        p->vtypes[RP_PV_OBJECTS].type = str_intern(p, "objects");
        p->vtypes[RP_PV_OBJECTS].unit = str_intern(p, "count");
    }
    if (!strcmp(p->unit, "ns"))
        p->ns_per_unit = 1;
    else if (unit_is_count(p->unit))
        p->ns_per_unit = b->interval_ns;
}

static struct kind_state *chunk_kind(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    const struct rp_kind_info *ki = rp_reader_kind(b->r, id);
    struct kind_state *ks = &b->kind_undefined;   /* the map holds defined ids only */
    if (ki) {
        rp_xgrow_map((void **)&b->kind_map, &b->n_kind_map, id, sizeof *b->kind_map, 8,
                     0);
        ks = &b->kind_map[id];
    }
    if (ks->state)
        return ks;
    ks->seen = kind_seen(p, ki);
    ks->state = -1;
    ks->class_x = ks->objects_x = ks->state_x = ks->age_x = -1;
    ks->unfinished = ki && ki->name && !strcmp(ki->name, RP_KIND_LOCK_WAITING);
    if (ki && ki->name && (b->o.all_kinds || !b->event || rp_kind_in_event(b->event, ki->name))) {
        int cx, ox;
        kind_select(p, ki, &cx, &ox);
        ks->state = 1;
        ks->class_x = (int8_t)cx;
        ks->objects_x = (int8_t)ox;
        for (uint32_t i = 0; i < ki->nextra && i < RP_MAX_EXTRA; i++)
            if (ki->extra[i] && !strcmp(ki->extra[i], "state"))
                ks->state_x = (int8_t)i;
            else if (ki->extra[i] && !strcmp(ki->extra[i], RP_X_AGE_GCS))
                ks->age_x = (int8_t)i;
    }
    return ks;
}

/* --------------------------------------------------------------- samples -- */

/* A lock wait's in-progress record: whether it stands for its wait
 * (options.waiting). */
static int keep_waiting(struct rp_profile *p, const struct rp_event *ev)
{
    struct rp_prof_build *b = p->b;
    const struct rp_thread_info *ti = rp_reader_thread(b->r, ev->u.sample.thread);
    return b->o.waiting &&
           b->o.waiting(b->o.waiting_arg, p->sources[b->source].recording,
                        ti ? ti->os_tid : 0, ev->u.sample.time, ev->u.sample.weight);
}

static void add_sample(struct rp_profile *p, const struct rp_event *ev)
{
    struct rp_prof_build *b = p->b;
    const uint32_t kind = ev->u.sample.kind;
    struct kind_state *ks = (kind < b->n_kind_map && b->kind_map[kind].state)
                                ? &b->kind_map[kind] : chunk_kind(p, kind);
    p->stats.samples_read++;
    p->kinds[ks->seen].samples++;
    if (ks->state < 0) {
        if (!rp_reader_kind(b->r, kind))
            p->stats.samples_unresolved++;
        else
            p->stats.samples_other_kind++;
        return;
    }
    if (ks->unfinished && !keep_waiting(p, ev)) {
        p->stats.samples_superseded++;
        return;
    }
    const uint64_t weight = ev->u.sample.weight;
    p->stats.weight_read_kind += weight;

    uint64_t wall = 0;
    if (b->st.clock.ok) {
        wall = rp_stream_wall(&b->st, ev->u.sample.time);
        if ((b->o.from_wall && wall < b->o.from_wall) ||
            (b->o.to_wall && wall >= b->o.to_wall)) {
            p->stats.samples_time_filtered++;
            return;
        }
    }
    if (b->o.instant && (!b->instant_ok || ev->u.sample.time != b->instant_mono)) {
        p->stats.samples_instant_filtered++;
        return;
    }
    if (b->o.min_age_gcs && ks->age_x >= 0 && (uint32_t)ks->age_x < ev->u.sample.nextra &&
        ev->u.sample.extra[ks->age_x] < b->o.min_age_gcs) {
        p->stats.samples_young_filtered++;
        return;
    }
    const uint32_t tid = ev->u.sample.thread;
    struct thr_state *ts = ev->u.sample.vthread ? chunk_vthread(p, tid, ev->u.sample.vthread)
                         : (tid < b->n_thr_map && b->thr_map[tid].thread)
                               ? &b->thr_map[tid] : chunk_thread(p, tid);
    if (!ts->pass) {
        p->stats.samples_thread_filtered++;
        return;
    }
    unsigned state = RP_TS_UNKNOWN;
    if (ks->state_x >= 0) {
        if ((uint32_t)ks->state_x < ev->u.sample.nextra &&
            ev->u.sample.extra[ks->state_x] < RP_TS_COUNT)
            state = (unsigned)ev->u.sample.extra[ks->state_x];
        if (b->o.state_mask && !(b->o.state_mask & (1u << state))) {
            p->stats.samples_state_filtered++;
            return;
        }
    }
    struct rp_prof_thread *th = &p->threads[ts->thread - 1];
    uint32_t root = p->per_thread ? th->node : 0;
    uint32_t cls = 0;
    if (ks->class_x >= 0 && (uint32_t)ks->class_x < ev->u.sample.nextra)
        cls = ev->u.sample.extra[ks->class_x] > CLS_MAX
                  ? CLS_MAX : (uint32_t)ev->u.sample.extra[ks->class_x];
    else if (ks->state_x >= 0 && b->o.state_frames)
        cls = state + 1;
    if (ks->unfinished)
        cls |= CLS_UNFINISHED;
    uint32_t leaf = leaf_for(p, root, ev->u.sample.stack, cls);
    if (leaf == LEAF_DROPPED) {
        p->stats.samples_frame_filtered++;
        return;
    }
    uint64_t *self = leaf_dense(b, root, ev->u.sample.stack, cls)
                         ? b->acc[ev->u.sample.stack].v : p->nodes[leaf].self;
    self[RP_PV_SAMPLES]++;
    self[RP_PV_WEIGHT] += weight;
    if (ks->objects_x >= 0 && (uint32_t)ks->objects_x < ev->u.sample.nextra)
        self[RP_PV_OBJECTS] += ev->u.sample.extra[ks->objects_x];
    th->samples++;
    p->stats.samples_kept++;
    if (ks->state_x >= 0) {
        p->state_samples[state]++;
        p->state_weight[state] += weight;
    }
    if (b->o.on_sample)
        b->o.on_sample(b->o.on_sample_arg, p, leaf, ev, rp_reader_kind(b->r, kind));
    if (wall) {
        struct rp_prof_source *s = &p->sources[b->source];
        if (!s->wall_first || wall < s->wall_first)
            s->wall_first = wall;
        if (wall > s->wall_last)
            s->wall_last = wall;
        if (!p->wall_first || wall < p->wall_first)
            p->wall_first = wall;
        if (wall > p->wall_last)
            p->wall_last = wall;
    }
}

/* ------------------------------------------------------------ public API -- */

struct rp_profile *rp_prof_new(const struct rp_prof_options *o)
{
    struct rp_profile *p = rp_xcalloc(1, sizeof *p);
    struct rp_prof_build *b = rp_xcalloc(1, sizeof *b);
    p->b = b;
    b->o = *o;
    b->event = o->event ? strdup(o->event) : NULL;
    b->unknown_frame = b->unknown_method = RP_PROF_NONE;
    tab_init(&b->strs, 1024);
    tab_init(&b->meths, 1024);
    tab_init(&b->frms, 1024);
    tab_init(&b->thrs, 64);
    kids_grow(b);
    stk_grow(b);
    p->granularity = o->granularity;
    p->per_thread = o->per_thread;
    p->group = o->norm.group;
    p->kind = str_intern(p, "");
    p->unit = p->kind;
    p->nvalues = 2;
    p->vtypes[RP_PV_SAMPLES].type = str_intern(p, "samples");
    p->vtypes[RP_PV_SAMPLES].unit = str_intern(p, "count");
    p->vtypes[RP_PV_WEIGHT].type = p->kind;
    p->vtypes[RP_PV_WEIGHT].unit = p->unit;
    node_new(p, RP_PROF_NONE, RP_PNODE_ROOT, 0);
    return p;
}

static void chunk_reset(struct rp_prof_build *b)
{
    if (b->frame_map)
        memset(b->frame_map, 0xff, b->n_frame_map * sizeof *b->frame_map);
    for (int k = 0; k < 2; k++)
        if (b->meth_map[k])
            memset(b->meth_map[k], 0xff, b->n_meth_map[k] * sizeof *b->meth_map[k]);
    if (b->thr_map)
        memset(b->thr_map, 0, b->n_thr_map * sizeof *b->thr_map);
    if (b->vt_tab)
        memset(b->vt_tab, 0, (b->vt_mask + 1) * sizeof *b->vt_tab);
    b->vt_used = 0;
    if (b->kind_map)
        memset(b->kind_map, 0, b->n_kind_map * sizeof *b->kind_map);
    memset(&b->thr_undefined, 0, sizeof b->thr_undefined);
    memset(&b->kind_undefined, 0, sizeof b->kind_undefined);
    if (b->leaf_arr)
        memset(b->leaf_arr, 0xff, b->n_leaf_arr * sizeof *b->leaf_arr);
    free(b->leaf_tab);
    b->leaf_tab = NULL;
    b->leaf_mask = b->leaf_used = 0;
}

static void diag_count(void *arg, const char *path, uint64_t offset, const char *reason,
                       int fatal)
{
    struct rp_profile *p = arg;
    if (!fatal)
        p->stats.diag_warnings++;
    if (p->b->o.diag)
        p->b->o.diag(p->b->o.diag_arg, path, offset, reason, fatal);
}

void rp_prof_add_reader(struct rp_profile *p, struct rp_reader *r)
{
    struct rp_prof_build *b = p->b;
    chunk_reset(b);
    rp_stream_begin(&b->st, r);
    b->r = r;
    b->source = source_for(p, r);
    b->interval_ns = parse_interval(rp_reader_meta(r, RP_META_OPTIONS));
    if (b->o.instant)
        b->instant_ok = b->o.instant(b->o.instant_arg, p->sources[b->source].recording,
                                     &b->instant_mono);
    if (p->kind[0] && !p->ns_per_unit && unit_is_count(p->unit))
        p->ns_per_unit = b->interval_ns;

    if (b->o.on_chunk)
        b->o.on_chunk(b->o.on_sample_arg, p, r, 0);
    struct rp_event ev;
    while (rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_SAMPLE)
            add_sample(p, &ev);
        else if (ev.type != RP_EV_THREAD && b->o.on_event)
            b->o.on_event(b->o.on_sample_arg, p, &ev);
        else if (ev.type == RP_EV_THREAD) {
            thread_redefined(p, ev.u.thread.id);
            if (ev.u.thread.id < b->n_thr_map)
                b->thr_map[ev.u.thread.id].thread = 0;   /* re-read flags, re-filter */
            if (b->vt_tab) {                             /* and its virtual threads' */
                memset(b->vt_tab, 0, (b->vt_mask + 1) * sizeof *b->vt_tab);
                b->vt_used = 0;
            }
        }
    }
    for (size_t i = 0; i < b->n_leaf_arr; i++) {   /* the chunk's sums to the leaves */
        if (!b->acc[i].v[RP_PV_SAMPLES])
            continue;
        for (int v = 0; v < RP_PV_MAX; v++)
            p->nodes[b->leaf_arr[i]].self[v] += b->acc[i].v[v];
        memset(&b->acc[i], 0, sizeof b->acc[i]);
    }
    if (b->o.on_chunk)
        b->o.on_chunk(b->o.on_sample_arg, p, r, 1);
    struct rp_reader_stats st;
    rp_reader_stats(r, &st);
    p->stats.segments_ok += st.segments_ok;
    p->stats.segments_bad += st.segments_bad;
    p->stats.segments_partial += st.segments_partial;
    p->stats.records_bad += st.records_bad;
    rp_stream_end(&b->st);
    b->r = NULL;
}

struct rp_stream *rp_prof_stream(const struct rp_profile *p)
{
    return p->b && p->b->r ? &p->b->st : NULL;
}

const struct rp_vthread_info *rp_prof_chunk_vthread(const struct rp_profile *p,
                                                    uint32_t id)
{
    return p->b && p->b->r && id ? rp_reader_vthread(p->b->r, id) : NULL;
}

const struct rp_thread_info *rp_prof_chunk_thread(const struct rp_profile *p,
                                                  uint32_t id)
{
    return p->b && p->b->r && id ? rp_reader_thread(p->b->r, id) : NULL;
}

const char *rp_prof_chunk_class(const struct rp_profile *p, uint32_t id)
{
    if (!p->b || !p->b->r || !id)
        return NULL;
    /* The callback's profile is const to it; a shortened name goes into the
     * arena, as the class frames' names do. */
    return class_shown((struct rp_profile *)p, rp_reader_class(p->b->r, id));
}

int rp_prof_add_file(struct rp_profile *p, const char *path)
{
    p->stats.files++;
    struct rp_reader *r = rp_reader_open(path, diag_count, p);
    if (!r) {
        p->stats.files_unreadable++;
        return -1;
    }
    rp_prof_add_reader(p, r);
    rp_reader_close(r);
    return 0;
}

const char *rp_prof_node_name(const struct rp_profile *p, uint32_t node)
{
    const struct rp_prof_node *n = &p->nodes[node];
    if (n->kind == RP_PNODE_FRAME)
        return p->frames[n->ref].display;
    if (n->kind == RP_PNODE_THREAD)
        return p->threads[n->ref].label;
    return "";
}

const struct rp_prof_frame *rp_prof_node_frame(const struct rp_profile *p,
                                               uint32_t node)
{
    const struct rp_prof_node *n = &p->nodes[node];
    return n->kind == RP_PNODE_FRAME ? &p->frames[n->ref] : NULL;
}

/* Sibling order: total weight, then samples, descending; then name, frame type,
 * and index, so the output never depends on hash order. */
static const struct rp_profile *sort_p;

static int cmp_kids(const void *a, const void *b)
{
    const struct rp_prof_node *x = &sort_p->nodes[*(const uint32_t *)a];
    const struct rp_prof_node *y = &sort_p->nodes[*(const uint32_t *)b];
    for (int v = RP_PV_WEIGHT; v >= RP_PV_SAMPLES; v--)
        if (x->total[v] != y->total[v])
            return x->total[v] > y->total[v] ? -1 : 1;
    int c = strcmp(rp_prof_node_name(sort_p, *(const uint32_t *)a),
                   rp_prof_node_name(sort_p, *(const uint32_t *)b));
    if (c)
        return c;
    const struct rp_prof_frame *fx = rp_prof_node_frame(sort_p, *(const uint32_t *)a);
    const struct rp_prof_frame *fy = rp_prof_node_frame(sort_p, *(const uint32_t *)b);
    if (fx && fy && fx->type != fy->type)
        return fx->type < fy->type ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void rp_prof_finish(struct rp_profile *p)
{
    struct rp_prof_build *b = p->b;
    if (b->finished)
        return;
    if (!p->kind[0] && b->event)   /* named, but never found */
        p->kind = p->vtypes[RP_PV_WEIGHT].type = str_intern(p, b->event);
    for (size_t i = 0; i < p->nnodes; i++)
        memcpy(p->nodes[i].total, p->nodes[i].self, sizeof p->nodes[i].total);
    for (size_t i = p->nnodes; i-- > 1;)
        for (int v = 0; v < RP_PV_MAX; v++)
            p->nodes[p->nodes[i].parent].total[v] += p->nodes[i].total[v];
    uint32_t *kids = NULL;
    size_t cap = 0;
    sort_p = p;
    for (size_t i = 0; i < p->nnodes; i++) {
        size_t k = 0;
        for (uint32_t c = p->nodes[i].first_child; c != RP_PROF_NONE;
             c = p->nodes[c].next_sibling) {
            grow((void **)&kids, &cap, k, sizeof *kids);
            kids[k++] = c;
        }
        if (k < 2)
            continue;
        qsort(kids, k, sizeof *kids, cmp_kids);
        p->nodes[i].first_child = kids[0];
        for (size_t j = 0; j + 1 < k; j++)
            p->nodes[kids[j]].next_sibling = kids[j + 1];
        p->nodes[kids[k - 1]].next_sibling = RP_PROF_NONE;
    }
    free(kids);
    /* Keep the strings (the arena); drop the tables and per-chunk maps. */
    free(b->strs.slot);
    free(b->str_list);
    free(b->shown);
    free(b->meths.slot);
    free(b->frms.slot);
    free(b->thrs.slot);
    free(b->kids);
    free(b->stk);
    free(b->ffilt);
    free(b->frame_map);
    free(b->meth_map[0]);
    free(b->meth_map[1]);
    free(b->thr_map);
    free(b->vt_tab);
    free(b->kind_map);
    free(b->leaf_arr);
    free(b->acc);
    free(b->leaf_tab);
    free(b->pathbuf);
    free(b->kind_of_str);
    free(b->event);
    rp_stream_free(&b->st);
    /* The strings (the arena) live on with the profile. */
    struct sblock *arena = b->arena;
    memset(b, 0, sizeof *b);
    b->arena = arena;
    b->finished = 1;
}

void rp_prof_free(struct rp_profile *p)
{
    if (!p)
        return;
    rp_prof_finish(p);   /* frees the building state if not done yet */
    for (struct sblock *s = p->b->arena, *next; s; s = next) {
        next = s->next;
        free(s);
    }
    free(p->b);
    free(p->nodes);
    free(p->frames);
    free(p->methods);
    free(p->threads);
    free(p->sources);
    free(p->kinds);
    free(p);
}

size_t rp_prof_path(const struct rp_profile *p, uint32_t node, uint32_t *path, size_t cap)
{
    size_t len = 0;
    for (uint32_t n = node; n != 0 && n != RP_PROF_NONE; n = p->nodes[n].parent)
        len++;
    size_t i = len;
    for (uint32_t n = node; n != 0 && n != RP_PROF_NONE; n = p->nodes[n].parent) {
        i--;
        if (i < cap)
            path[i] = n;
    }
    return len;
}

int rp_prof_walk(const struct rp_profile *p, uint32_t start, rp_prof_visit_fn fn,
                 void *arg)
{
    uint32_t n = start;
    size_t depth = 0;
    for (;;) {
        int rc = fn(p, n, depth, arg);
        if (rc && rc != 1)
            return rc;
        if (rc == 0 && p->nodes[n].first_child != RP_PROF_NONE) {
            n = p->nodes[n].first_child;
            depth++;
            continue;
        }
        while (n != start && p->nodes[n].next_sibling == RP_PROF_NONE) {
            n = p->nodes[n].parent;
            depth--;
        }
        if (n == start)
            return 0;
        n = p->nodes[n].next_sibling;
    }
}

struct stack_iter {
    rp_prof_stack_fn fn;
    void *arg;
    uint32_t *path;
    size_t cap;
};

static int stack_visit(const struct rp_profile *p, uint32_t node, size_t depth,
                       void *arg)
{
    struct stack_iter *it = arg;
    if (depth == 0)
        return 0;
    if (depth > it->cap) {
        it->cap = depth * 2;
        it->path = rp_xrealloc(it->path, it->cap * sizeof *it->path);
    }
    it->path[depth - 1] = node;
    if (p->nodes[node].self[RP_PV_SAMPLES] == 0)
        return 0;
    int rc = it->fn(p, node, it->path, depth, it->arg);
    return rc == 1 ? 2 : rc;   /* 1 would mean "skip children" to the walk */
}

int rp_prof_foreach_stack(const struct rp_profile *p, rp_prof_stack_fn fn, void *arg)
{
    struct stack_iter it = {fn, arg, NULL, 0};
    int rc = rp_prof_walk(p, 0, stack_visit, &it);
    free(it.path);
    return rc == 2 ? 1 : rc;
}

const char *rp_prof_fmt_time(const struct rp_profile *p, uint64_t weight, char *buf,
                             size_t cap)
{
    if (p->ns_per_unit <= 0) {
        if (cap)
            buf[0] = 0;
        return buf;
    }
    double ns = (double)weight * p->ns_per_unit;
    if (ns >= 1e9)
        snprintf(buf, cap, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, cap, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, cap, "%.3f us", ns / 1e3);
    else
        snprintf(buf, cap, "%.0f ns", ns);
    return buf;
}

const char *rp_prof_frame_suffix(int type)
{
    switch (type) {
    case RP_FRAME_JIT:         return "_[j]";
    case RP_FRAME_INLINED:     return "_[i]";
    case RP_FRAME_INTERPRETED: return "_[0]";
    case RP_FRAME_KERNEL:      return "_[k]";
    default:                   return "";
    }
}
