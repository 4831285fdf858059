/*
 * tools/model/profile_intern.c — what the profile keeps, interned by content
 * (profile_impl.h): strings, methods, frames, threads and stacks, each in a hash
 * table that lives as long as the profile is being built.
 *
 * Strings go to one arena that outlives the tables (the profile's names point
 * into it) and are compared by address once interned, so a method is keyed by
 * its interned parts and a frame by (method, type, bci, line). A thread is
 * (recording, os tid, virtual thread). A stack is a frame sequence below a
 * root, keyed by two independent 64-bit hashes of the sequence (struct
 * stk_entry): the first sample of a stack new to the profile walks the tree
 * (profile_tree.c), every later one, in any chunk, finds its leaf at once.
 */
#include "profile_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/hash.h"
#include "xalloc.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void prof_tab_init(struct idx_table *t, size_t cap)
{
    t->slot = rp_xrealloc(NULL, cap * sizeof *t->slot);
    memset(t->slot, 0xff, cap * sizeof *t->slot);
    t->mask = cap - 1;
    t->used = 0;
}

/* ------------------------------------------------------------- strings -- */

/* The index of `s` in the string table, interning it. */
uint32_t prof_str_id(struct rp_profile *p, const char *s)
{
    struct rp_prof_build *b = p->b;
    if (!s)
        s = "";
    if (b->strs.used * 2 >= b->strs.mask) {
        struct idx_table old = b->strs;
        prof_tab_init(&b->strs, (old.mask + 1) * 2);
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
    rp_xgrow((void **)&b->str_list, &b->cap_str, b->nstr, sizeof *b->str_list, 64);
    b->str_list[b->nstr] = copy;
    b->strs.slot[j] = (uint32_t)b->nstr++;
    b->strs.used++;
    return b->strs.slot[j];
}

const char *prof_str(struct rp_profile *p, const char *s)
{
    uint32_t id = prof_str_id(p, s);   /* first: it may move str_list */
    return p->b->str_list[id];
}

/* A native symbol as the profile shows it (options.demangle), interned. The
 * demangler runs once per distinct name: its answer is kept per string index. */
const char *prof_name_shown(struct rp_profile *p, const char *name)
{
    struct rp_prof_build *b = p->b;
    if (!name || b->o.demangle == RP_DEMANGLE_NONE || name[0] != '_' ||
        (name[1] != 'Z' && name[1] != 'R'))
        return prof_str(p, name);
    uint32_t id = prof_str_id(p, name);
    rp_xgrow_map((void **)&b->shown, &b->cap_shown, id, sizeof *b->shown, 256, 0);
    if (!b->shown[id]) {
        char *d = rp_demangle(name, b->o.demangle);
        const char *shown = d ? prof_str(p, d) : b->str_list[id];
        b->shown[id] = shown;
        free(d);
    }
    return b->shown[id];
}

const char *prof_strf(struct rp_profile *p, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return prof_str(p, "");
    if ((size_t)n < sizeof small)
        return prof_str(p, small);
    char *big = rp_xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    const char *s = prof_str(p, big);
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
    prof_tab_init(t, (old.mask + 1) * 2);
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
        return prof_strf(p, "%s.%s%s", klass, name, params);
    return prof_strf(p, "%s.%s", klass, name);
}

/* `plain`: a native, C++, kernel, marker or class frame, displayed by name only.
 * `raw`: the name as recorded when `name` is its demangled form (NULL: `name`).
 * A Java method merged with its overloads keeps the first one's signature,
 * file and flags. */
uint32_t prof_method(struct rp_profile *p, const char *klass, const char *name,
                              const char *sig, const char *file, uint32_t flags,
                              int plain, const char *raw)
{
    struct rp_prof_build *b = p->b;
    klass = prof_str(p, klass);
    name = prof_str(p, name);
    sig = prof_str(p, sig);
    file = prof_str(p, file);
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
    rp_xgrow((void **)&p->methods, &b->cap_methods, p->nmethods, sizeof *p->methods, 64);
    struct rp_prof_method *m = &p->methods[p->nmethods];
    m->klass = klass;
    m->name = name;
    m->signature = sig;
    m->file = file;
    m->raw = raw ? prof_str(p, raw) : name;
    m->flags = flags;
    m->plain = native;
    m->display = (plain || !klass[0]) ? name : java_display(p, klass, name, sig);
    b->meths.slot[j] = (uint32_t)p->nmethods;
    b->meths.used++;
    return (uint32_t)p->nmethods++;
}

/* --------------------------------------------------------------- frames -- */

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

uint32_t prof_frame(struct rp_profile *p, uint32_t method, int type,
                             int32_t bci, uint32_t line)
{
    struct rp_prof_build *b = p->b;
    if (!prof_frame_is_java(type) || (p->granularity != RP_GRAN_BCI &&
                                 p->granularity != RP_GRAN_FULL))
        bci = -1;
    if (!prof_frame_is_java(type) || p->granularity == RP_GRAN_METHOD)
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
    rp_xgrow((void **)&p->frames, &b->cap_frames, p->nframes, sizeof *p->frames, 64);
    rp_xgrow((void **)&b->ffilt, &b->cap_ffilt, p->nframes, sizeof *b->ffilt, 64);
    struct rp_prof_frame *f = &p->frames[p->nframes];
    f->method = method;
    f->type = type;
    f->bci = bci;
    f->line = line;
    const char *md = p->methods[method].display;
    if (p->methods[method].plain)   /* a group (class, package) has no lines */
        f->display = md;
    else if (prof_frame_is_java(type) && p->granularity == RP_GRAN_LINE)
        f->display = line ? prof_strf(p, "%s:%u", md, line) : prof_strf(p, "%s:?", md);
    else if (prof_frame_is_java(type) && p->granularity == RP_GRAN_BCI)
        f->display = bci >= 0 ? prof_strf(p, "%s@%d", md, bci) : prof_strf(p, "%s@?", md);
    else
        f->display = md;
    memset(&b->ffilt[p->nframes], 0, sizeof *b->ffilt);
    b->frms.slot[j] = (uint32_t)p->nframes;
    b->frms.used++;
    return (uint32_t)p->nframes++;
}

/* A converter-made frame: "[truncated]", "[no stack]", ... */
uint32_t prof_marker(struct rp_profile *p, const char *text)
{
    return prof_frame(p, prof_method(p, "", text, "", "", 0, 1, NULL), RP_FRAME_MARKER,
                        -1, 0);
}

/* A Java class name as the profile shows it: without a hidden class's address
 * when options.norm asks (frame_norm.h). */
const char *prof_class_shown(struct rp_profile *p, const char *klass)
{
    if (!klass || !p->b->o.norm.hidden_classes)
        return klass;
    size_t n = rp_norm_hidden_class(klass);
    return klass[n] ? prof_strf(p, "%.*s", (int)n, klass) : klass;
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

/* Where the current source's thread `tid` (with virtual thread `vthread` on it,
 * 0: its own) is in the thread table: @return j with b->thrs.slot[j] its index,
 * or RP_PROF_NONE (the free slot it would take). The table must exist
 * (tab_grow). */
size_t prof_thread_slot(const struct rp_profile *p, uint64_t tid, uint64_t vthread)
{
    const struct rp_prof_build *b = p->b;
    size_t j = thread_hash_parts(prof_source(p), tid, vthread) & b->thrs.mask;
    for (; b->thrs.slot[j] != RP_PROF_NONE; j = (j + 1) & b->thrs.mask) {
        const struct rp_prof_thread *t = &p->threads[b->thrs.slot[j]];
        if (t->source == prof_source(p) && t->os_tid == tid && t->vthread == vthread)
            break;
    }
    return j;
}

uint32_t prof_thread(struct rp_profile *p, uint64_t tid, uint64_t vthread)
{
    struct rp_prof_build *b = p->b;
    tab_grow(p, &b->thrs, thread_hash);
    size_t j = prof_thread_slot(p, tid, vthread);
    if (b->thrs.slot[j] != RP_PROF_NONE)
        return b->thrs.slot[j];
    rp_xgrow((void **)&p->threads, &b->cap_threads, p->nthreads, sizeof *p->threads, 64);
    struct rp_prof_thread *t = &p->threads[p->nthreads];
    memset(t, 0, sizeof *t);
    t->source = prof_source(p);
    t->os_tid = tid;
    t->vthread = vthread;
    t->name = prof_str(p, "");
    t->renamed = t->name;
    t->carrier = t->name;
    t->label = prof_strf(p, "[tid %llu]", (unsigned long long)tid);
    t->node = RP_PROF_NONE;
    b->thrs.slot[j] = (uint32_t)p->nthreads;
    b->thrs.used++;
    uint32_t idx = (uint32_t)p->nthreads++;
    if (p->per_thread)
        p->threads[idx].node = prof_node_new(p, 0, RP_PNODE_THREAD, idx);
    return idx;
}

/* A virtual thread's label: "[name (virtual #ID) on CARRIER]", or, unnamed,
 * "[virtual #ID on CARRIER]" ("on tid N" for an unnamed carrier). */
void prof_vthread_label(struct rp_profile *p, struct rp_prof_thread *t)
{
    char shown[1024], carrier[600];
    rp_thread_display(shown, sizeof shown, t->name, t->renamed);
    if (t->carrier[0])
        snprintf(carrier, sizeof carrier, "%s", t->carrier);
    else
        snprintf(carrier, sizeof carrier, "tid %llu", (unsigned long long)t->os_tid);
    if (t->name[0])
        t->label = prof_strf(p, "[%s (virtual #%llu) on %s]", shown,
                              (unsigned long long)t->vthread, carrier);
    else
        t->label = prof_strf(p, "[virtual #%llu on %s]", (unsigned long long)t->vthread,
                              carrier);
}

/* Thread t was (re)named `name`: the first name stays; a later one is `renamed`
 * (rp_thread_rename). */
void prof_thread_named(struct rp_profile *p, struct rp_prof_thread *t, const char *name)
{
    enum rp_rename c = rp_thread_rename(t->name, name);
    if (c == RP_RENAME_NONE)
        return;
    if (c == RP_RENAME_FIRST)
        t->name = prof_str(p, name);
    else
        t->renamed = prof_str(p, c == RP_RENAME_NEWEST ? name : "");
    if (t->vthread) {
        prof_vthread_label(p, t);
        return;
    }
    char shown[1024];
    rp_thread_display(shown, sizeof shown, t->name, t->renamed);
    t->label = prof_strf(p, "[%s]", shown);
}

void rp_prof_thread_name(char *buf, size_t cap, const struct rp_prof_thread *t)
{
    if (t->vthread && !t->name[0])
        snprintf(buf, cap, "virtual #%llu", (unsigned long long)t->vthread);
    else
        rp_thread_display(buf, cap, t->name, t->renamed);
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

void prof_stk_grow(struct rp_prof_build *b)
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
    if (!prof_frame_is_java(fr->type) || m->plain || !m->klass[0])
        return f;
    const char *name = m->klass;
    if (p->b->o.norm.group == RP_GROUP_PACKAGE) {
        size_t n = rp_norm_package_len(m->klass);
        name = n ? prof_strf(p, "%.*s", (int)n, m->klass) : "[default package]";
    }
    return prof_frame(p, prof_method(p, "", name, "", "", 0, 1, NULL), RP_FRAME_JIT,
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


uint32_t prof_path_leaf(struct rp_profile *p, uint32_t root, uint32_t *path, size_t len)
{
    struct rp_prof_build *b = p->b;
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
        node = prof_node_child(p, node, path[i]);
    prof_stk_grow(b);
    e = stk_find(b, h1, h2);
    *e = (struct stk_entry){h1, h2, node, 0};
    b->stk_used++;
    return node;
}
