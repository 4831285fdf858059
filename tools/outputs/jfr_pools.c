/*
 * tools/outputs/jfr_pools.c — the body and the constant pools of
 * `convert --format jfr` (jfr_writer.h): threads, stack traces, methods, classes,
 * packages, symbols, live objects and the fixed ones (frame types, thread
 * states, GC "when"), each id handed out when an event first names it and the
 * whole pool written once, in the checkpoint after the last event.
 *
 * Threads are the output's own (recording, os tid) or (recording, virtual
 * thread), in order of first use; their names at the end are the profile's,
 * which has seen every THREAD record of the inputs. A stack trace is a CCT node
 * (the sample's leaf frame); its marker frames are not frames of the file
 * (struct stack_note). Pools are written through j->buf and drained as they
 * go, so a pool of any size takes bounded memory.
 */
#include "jfr_writer.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/xalloc.h"

/* ---------------------------------------------------------------- output -- */

void jfr_put(struct jfr *j, const void *p, size_t n)
{
    if (j->failed || !n)
        return;
    if (fwrite(p, 1, n, j->body) != n) {
        j->failed = 1;
        j->err = errno ? errno : EIO;
    }
    j->written += n;
}

void jfr_drain(struct jfr *j)
{
    jfr_put(j, j->buf.p, j->buf.n);
    j->buf.n = 0;
}

int64_t jfr_ticks(const struct jfr *j, uint64_t wall)
{
    return (int64_t)(wall - j->base);
}

/* Begin an event of `type` at `wall`: its type id and start time. */
void jfr_ev_begin(struct jfr *j, int type, uint64_t wall)
{
    j->ev.n = 0;
    rp_jfr_varint(&j->ev, (uint64_t)type);
    rp_jfr_long(&j->ev, jfr_ticks(j, wall));
    if (wall && (!j->tmin || wall < j->tmin))
        j->tmin = wall;
    if (wall > j->tmax)
        j->tmax = wall;
}

void jfr_ev_end(struct jfr *j, int type)
{
    rp_jfr_event(&j->buf, &j->ev);
    j->counts[type]++;
    if (j->buf.n >= FLUSH_AT)
        jfr_drain(j);
}

/* ------------------------------------------------------------- the pools -- */

static uint32_t symbol(struct jfr *j, const char *s)
{
    return rp_strtab_cstr(&j->sym, s) + 1;
}

/* A Java type name as the profile shows it ("java.lang.String", "byte[]",
 * "app.Json$Node[][]") in the JVM's internal form, which JFR files hold
 * ("java/lang/String", "[B", "[[Lapp/Json$Node;"). Written to buf (cap bytes). */
static const char *internal_name(const char *name, char *buf, size_t cap)
{
    size_t len = strlen(name), dims = 0;
    while (len >= 2 && name[len - 2] == '[' && name[len - 1] == ']') {
        len -= 2;
        dims++;
    }
    static const char *const prim[][2] = {
        {"byte", "B"}, {"char", "C"}, {"double", "D"}, {"float", "F"}, {"int", "I"},
        {"long", "J"}, {"short", "S"}, {"boolean", "Z"}};
    size_t o = 0;
    for (size_t d = 0; d < dims && o + 1 < cap; d++)
        buf[o++] = '[';
    if (dims) {
        for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
            if (strlen(prim[i][0]) == len && !memcmp(name, prim[i][0], len)) {
                snprintf(buf + o, cap - o, "%s", prim[i][1]);
                return buf;
            }
        if (o + 1 < cap)
            buf[o++] = 'L';
    }
    for (size_t i = 0; i < len && o + 2 < cap; i++)
        buf[o++] = name[i] == '.' ? '/' : name[i];
    if (dims && o + 1 < cap)
        buf[o++] = ';';
    buf[o] = '\0';
    return buf;
}

/* The class named `iname` (internal form, or a library for native frames):
 * its pool id. The package is what precedes the last '/' of a plain class. */
static uint32_t class_id(struct jfr *j, const char *iname, int java)
{
    size_t before = j->cls.n;
    uint32_t idx = rp_strtab_cstr(&j->cls, iname);
    if (j->cls.n != before) {
        rp_xgrow_map((void **)&j->cls_pkg, &j->cap_cls_pkg, idx, sizeof *j->cls_pkg, 256, 0);
        const char *slash = java && iname[0] != '[' ? strrchr(iname, '/') : NULL;
        j->cls_pkg[idx] = slash ? rp_strtab_add(&j->pkg, iname, (size_t)(slash - iname)) + 1
                                : 0;
    }
    return idx + 1;
}

/* A class as the profile names it (rp_prof_chunk_class): its pool id, 0 for
 * none. */
uint32_t jfr_java_class(struct jfr *j, const char *shown)
{
    if (!shown || !*shown)
        return 0;
    char buf[1024];
    return class_id(j, internal_name(shown, buf, sizeof buf), 1);
}

struct source *jfr_source(struct jfr *j, uint32_t i)
{
    rp_xgrow_map((void **)&j->sources, &j->cap_sources, i, sizeof *j->sources, 8, 0);
    return &j->sources[i];
}

/* The output thread of the chunk's THREAD record `id`; 0 for none. A name that
 * differs from the first one seen is kept as the newest (shown as "renamed"). */
uint32_t jfr_thread(struct jfr *j, const struct rp_profile *p, uint32_t id)
{
    const struct rp_thread_info *ti = id ? rp_prof_chunk_thread(p, id) : NULL;
    if (!ti)
        return 0;
    if (id < j->n_thr_map && j->thr_map[id].out && j->thr_map[id].seen == ti->time)
        return j->thr_map[id].out;
    uint32_t out = id < j->n_thr_map ? j->thr_map[id].out : 0;
    if (!out) {
        char key[48];
        snprintf(key, sizeof key, "%u:%llu", j->st->rec, (unsigned long long)ti->os_tid);
        size_t before = j->thread_keys.n;
        uint32_t idx = rp_strtab_cstr(&j->thread_keys, key);
        if (j->thread_keys.n != before) {
            rp_xgrow_map((void **)&j->threads, &j->cap_threads, idx, sizeof *j->threads,
                         64, 0);
            struct jthread *t = &j->threads[idx];
            memset(t, 0, sizeof *t);
            t->os_tid = ti->os_tid;
            t->src = j->st->rec;
            rp_thread_names_init(&t->names, ti->name);
        }
        out = idx + 1;
        rp_xgrow_map((void **)&j->thr_map, &j->n_thr_map, id, sizeof *j->thr_map, 64, 0);
        j->thr_map[id].out = out;
    }
    j->thr_map[id].seen = ti->time;
    struct jthread *t = &j->threads[out - 1];
    if (ti->java_tid)
        t->java_tid = ti->java_tid;
    if (ti->flags & RP_THREAD_JAVA)
        t->java = 1;
    rp_thread_names_see(&t->names, ti->name);
    return out;
}

/* The output thread of the chunk's VTHREAD record `id`: the virtual thread,
 * marked virtual as the JDK's own recordings mark it; 0 for none. */
uint32_t jfr_vthread(struct jfr *j, const struct rp_profile *p, uint32_t id)
{
    const struct rp_vthread_info *vi = rp_prof_chunk_vthread(p, id);
    if (!vi)
        return 0;
    char key[48];
    snprintf(key, sizeof key, "%u:v%llu", j->st->rec, (unsigned long long)vi->java_tid);
    size_t before = j->thread_keys.n;
    uint32_t idx = rp_strtab_cstr(&j->thread_keys, key);
    rp_xgrow_map((void **)&j->threads, &j->cap_threads, idx, sizeof *j->threads, 64, 0);
    struct jthread *t = &j->threads[idx];
    if (j->thread_keys.n != before) {
        memset(t, 0, sizeof *t);
        t->java_tid = vi->java_tid;
        t->src = j->st->rec;
        t->java = t->virtual = 1;
        rp_thread_names_init(&t->names, vi->name);
    } else {
        rp_thread_names_see(&t->names, vi->name);
    }
    return idx + 1;
}

/* The stack trace id of a sample whose CCT leaf is `leaf`: the node of its
 * leaf frame (an alloc or live sample's class leaf is not a frame). 0: none. */
uint32_t jfr_stack(struct jfr *j, const struct rp_profile *p, uint32_t leaf)
{
    const struct rp_prof_node *n = &p->nodes[leaf];
    if (n->kind == RP_PNODE_FRAME && p->frames[n->ref].type == RP_PFRAME_CLASS)
        leaf = n->parent;
    if (!leaf || leaf == RP_PROF_NONE)
        return 0;
    rp_xgrow_map((void **)&j->notes, &j->n_notes, leaf, sizeof *j->notes, 4096, 0);
    j->notes[leaf].used = 1;
    return leaf;
}

/* The note of stack trace `stack` (stack_id; 0: none), made on first use from
 * the path to the root: ringprof's markers leaf first, ';' between them, but
 * "[truncated]" (the stack's flag). */
struct stack_note jfr_stack_note(struct jfr *j, const struct rp_profile *p, uint32_t stack)
{
    struct stack_note none = {0};
    if (!stack)
        return none;
    struct stack_note *n = &j->notes[stack];
    if (n->known)
        return *n;
    char buf[512];
    size_t len = 0;
    for (uint32_t k = stack; k && k != RP_PROF_NONE; k = p->nodes[k].parent) {
        const struct rp_prof_node *nd = &p->nodes[k];
        if (nd->kind != RP_PNODE_FRAME)
            continue;
        const struct rp_prof_frame *f = &p->frames[nd->ref];
        const char *name = p->methods[f->method].name;
        if (f->type != RP_FRAME_MARKER)
            n->frames = 1;
        else if (strcmp(name, "[truncated]") && len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? ";" : "", name);
    }
    n->known = 1;
    if (len)
        n->markers = rp_strtab_cstr(&j->marks, buf) + 1;
    return *n;
}

/* The markers of a note as a String field's value (NULL: none). */
const char *jfr_markers(const struct jfr *j, struct stack_note n)
{
    return n.markers ? j->marks.s[n.markers - 1] : NULL;
}

/* A live object of class `cls` (0: unknown): its jdk.types.OldObject pool id,
 * the class's own (pool_old_objects), 0 for none. */
uint32_t jfr_old_object(struct jfr *j, uint32_t cls)
{
    if (!cls)
        return 0;
    rp_xgrow_map((void **)&j->old_used, &j->n_old_used, cls, 1, 256, 0);
    j->old_used[cls] = 1;
    return cls;
}

/* ------------------------------------------------------------ checkpoint -- */

/* A pool of simple values, ids first, first + 1, ... */
static void pool_fixed(struct rp_jfr_buf *b, int type, uint64_t first,
                       const char *const *names, size_t n)
{
    rp_jfr_varint(b, (uint64_t)type);
    rp_jfr_varint(b, n);
    for (size_t i = 0; i < n; i++) {
        rp_jfr_varint(b, first + i);
        rp_jfr_string(b, names[i]);
    }
}

/* Pools are written through j->buf like events: drained now and then, so a
 * pool of any size takes bounded memory. */
static void maybe_drain(struct jfr *j)
{
    if (j->buf.n >= FLUSH_AT)
        jfr_drain(j);
}

/* Threads are named as every other format names them: by the profile's thread
 * of the same recording and tid, whose name has seen every thread record of
 * the inputs, also those that come after the thread's last event (main is
 * renamed DestroyJavaVM after its last sample). The writer's own names, from
 * the records its events saw, are for threads the profile does not have (one
 * with thread CPU readings only). */
/* Each pool_* function below writes its pool(s) unless empty (the JDK's reader
 * refuses a pool of no entries: "Pool java.lang.Thread must contain at least
 * one element"); @return the pools written. */
static int pool_threads(struct jfr *j, const struct rp_profile *p)
{
    if (!j->thread_keys.n)
        return 0;
    struct rp_strtab prof_keys;                        /* "recording tid" -> index */
    rp_strtab_init(&prof_keys);
    char key[640];
    for (size_t k = 0; k < p->nthreads; k++) {         /* one key per thread */
        const struct rp_prof_thread *pt = &p->threads[k];
        snprintf(key, sizeof key, "%s %llu %llu", p->sources[pt->source].recording,
                 (unsigned long long)pt->os_tid, (unsigned long long)pt->vthread);
        rp_strtab_cstr(&prof_keys, key);
    }
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_THREAD);
    rp_jfr_varint(b, j->thread_keys.n);
    for (size_t i = 0; i < j->thread_keys.n; i++) {
        const struct jthread *t = &j->threads[i];
        if (t->virtual) {
            char name[1024];
            rp_thread_names_show(&t->names, name, sizeof name);
            rp_jfr_varint(b, i + 1);
            rp_jfr_string(b, NULL);                    /* osName: none          */
            rp_jfr_varint(b, 0);                       /* osThreadId            */
            rp_jfr_string(b, name);                    /* javaName ("" unnamed) */
            rp_jfr_varint(b, t->java_tid);
            rp_jfr_varint(b, 0);                       /* group                 */
            rp_jfr_bool(b, 1);                         /* virtual               */
            maybe_drain(j);
            continue;
        }
        snprintf(key, sizeof key, "%s %llu 0", p->sources[t->src].recording,
                 (unsigned long long)t->os_tid);
        uint32_t k = rp_strtab_cstr(&prof_keys, key);
        const char *first = t->names.first, *renamed = t->names.renamed;
        if (k < p->nthreads && p->threads[k].name[0]) {
            first = p->threads[k].name;
            renamed = p->threads[k].renamed;
        }
        char name[1024];
        if (first[0])
            rp_thread_display(name, sizeof name, first, renamed);
        else
            snprintf(name, sizeof name, "[tid %llu]", (unsigned long long)t->os_tid);
        rp_jfr_varint(b, i + 1);
        rp_jfr_string(b, name);                        /* osName                */
        rp_jfr_varint(b, t->os_tid);
        rp_jfr_string(b, t->java ? name : NULL);       /* javaName              */
        rp_jfr_varint(b, t->java ? t->java_tid : 0);
        rp_jfr_varint(b, 0);                           /* group                 */
        rp_jfr_bool(b, 0);                             /* virtual               */
        maybe_drain(j);
    }
    rp_strtab_free(&prof_keys);
    return 1;
}

/* Whether the stack stays whole when marker `name` is left out of it: a
 * sample without frames ("[no stack]"), a thread with no Java frames
 * ("[no_java_frames]") or none the native walk found ("[not_java]"), the
 * agent's own work above its Java caller ("[ringprof:alloc]"). Every other
 * marker ("[truncated]", a failed walk's "[agct:gc_active]", a damaged file's
 * "[unknown frame]") stands for frames that are missing: the stack's
 * `truncated` flag says so, as JFR says it of a stack cut at its depth. */
static int marker_keeps_whole(const char *name)
{
    return !strcmp(name, "[no stack]") || !strcmp(name, "[no_java_frames]") ||
           !strcmp(name, "[not_java]") || !strncmp(name, "[ringprof", 9);
}

/* Every stack trace used: the path from its node to the root, leaf first,
 * without the profile's markers (struct stack_note). */
static int pool_stacks(struct jfr *j, const struct rp_profile *p, uint8_t *method_used)
{
    struct rp_jfr_buf *b = &j->buf;
    size_t n = 0;
    for (size_t i = 0; i < j->n_notes; i++)
        n += j->notes[i].used;
    if (!n)
        return 0;
    rp_jfr_varint(b, JFR_STACK_TRACE);
    rp_jfr_varint(b, n);
    struct rp_jfr_buf frames = {0};
    for (size_t i = 0; i < j->n_notes; i++) {
        if (!j->notes[i].used)
            continue;
        frames.n = 0;
        int truncated = 0;
        uint64_t nframes = 0;
        for (uint32_t k = (uint32_t)i; k && k != RP_PROF_NONE; k = p->nodes[k].parent) {
            const struct rp_prof_node *nd = &p->nodes[k];
            if (nd->kind != RP_PNODE_FRAME)
                continue;
            const struct rp_prof_frame *f = &p->frames[nd->ref];
            if (f->type == RP_FRAME_MARKER) {
                truncated |= !marker_keeps_whole(p->methods[f->method].name);
                continue;
            }
            method_used[f->method] = 1;
            int type = f->type < RP_FRAME_MARKER ? f->type : RP_FRAME_NATIVE;
            rp_jfr_varint(&frames, (uint64_t)f->method + 1);
            rp_jfr_int(&frames, f->line && f->line <= INT32_MAX ? (int32_t)f->line : -1);
            rp_jfr_int(&frames, f->bci);
            rp_jfr_varint(&frames, (uint64_t)type);
            nframes++;
        }
        rp_jfr_varint(b, i);
        rp_jfr_bool(b, truncated);
        rp_jfr_varint(b, nframes);
        rp_jfr_bytes(b, frames.p, frames.n);
        maybe_drain(j);
    }
    rp_jfr_buf_free(&frames);
    return 1;
}

/* The "class" of a native, C++ or kernel frame: its library as recorded, but
 * never with a leading '[' ("[vm stub]" is "vm stub"): readers take a class
 * name that starts so for an array's descriptor, and JMC's parser throws on
 * "[vm stub]". */
static const char *plain_class(const char *lib, char *buf, size_t cap)
{
    if (lib[0] != '[')
        return lib;
    size_t len = strlen(lib + 1);
    if (len && lib[len] == ']')
        len--;
    snprintf(buf, cap, "%.*s", (int)len, lib + 1);
    return buf;
}

/* Every method a stack names. A Java method's class is its JVM name; a native,
 * C++ or kernel frame's is its library (plain_class); a marker's is "". */
static int pool_methods(struct jfr *j, const struct rp_profile *p,
                        const uint8_t *method_used)
{
    struct rp_jfr_buf *b = &j->buf;
    size_t n = 0;
    for (size_t m = 0; m < p->nmethods; m++)
        n += method_used[m];
    if (!n)
        return 0;
    rp_jfr_varint(b, JFR_METHOD);
    rp_jfr_varint(b, n);
    char buf[1024];
    for (size_t m = 0; m < p->nmethods; m++) {
        if (!method_used[m])
            continue;
        const struct rp_prof_method *me = &p->methods[m];
        uint32_t cls = me->plain ? class_id(j, plain_class(me->klass, buf, sizeof buf), 0)
                                 : class_id(j, internal_name(me->klass, buf, sizeof buf), 1);
        rp_jfr_varint(b, m + 1);
        rp_jfr_varint(b, cls);
        rp_jfr_varint(b, symbol(j, me->name));
        /* Readers parse the descriptor ("(" params ")" return): a frame with
         * none (native, C++, kernel, markers) gets an empty one, "()V". */
        rp_jfr_varint(b, symbol(j, me->signature[0] == '(' ? me->signature : "()V"));
        rp_jfr_int(b, 0);                              /* modifiers             */
        rp_jfr_bool(b, 0);                             /* hidden                */
        maybe_drain(j);
    }
    return 1;
}

/* The live objects' pool: one entry a class, address and description unknown
 * (the JDK's OldObjectSample refers to its object through the pool). */
static int pool_old_objects(struct jfr *j)
{
    size_t n = 0;
    for (size_t i = 0; i < j->n_old_used; i++)
        n += j->old_used[i];
    if (!n)
        return 0;
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_OLD_OBJECT);
    rp_jfr_varint(b, n);
    for (size_t i = 0; i < j->n_old_used; i++) {
        if (!j->old_used[i])
            continue;
        rp_jfr_varint(b, i);                           /* id: the class's       */
        rp_jfr_varint(b, 0);                           /* address               */
        rp_jfr_varint(b, i);                           /* type                  */
        rp_jfr_string(b, NULL);                        /* description           */
        maybe_drain(j);
    }
    return 1;
}

static int pool_classes(struct jfr *j)
{
    if (!j->cls.n)
        return 0;   /* no class, no package */
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_CLASS);
    rp_jfr_varint(b, j->cls.n);
    for (size_t i = 0; i < j->cls.n; i++) {
        rp_jfr_varint(b, i + 1);
        rp_jfr_varint(b, 0);                           /* classLoader           */
        rp_jfr_varint(b, symbol(j, j->cls.s[i]));
        rp_jfr_varint(b, j->cls_pkg[i]);
        rp_jfr_int(b, 0);                              /* modifiers             */
        rp_jfr_bool(b, 0);                             /* hidden                */
        maybe_drain(j);
    }
    if (!j->pkg.n)
        return 1;
    rp_jfr_varint(b, JFR_PACKAGE);
    rp_jfr_varint(b, j->pkg.n);
    for (size_t i = 0; i < j->pkg.n; i++) {
        rp_jfr_varint(b, i + 1);
        rp_jfr_varint(b, symbol(j, j->pkg.s[i]));
        maybe_drain(j);
    }
    return 2;
}

static int pool_symbols(struct jfr *j)
{
    if (!j->sym.n)
        return 0;
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_SYMBOL);
    rp_jfr_varint(b, j->sym.n);
    for (size_t i = 0; i < j->sym.n; i++) {
        rp_jfr_varint(b, i + 1);
        rp_jfr_utf8(b, j->sym.s[i]);
        maybe_drain(j);
    }
    return 1;
}

/* Overwrite body bytes [at, at+n) (the checkpoint's size, the header). */
void jfr_patch(struct jfr *j, uint64_t at, const void *p, size_t n)
{
    jfr_drain(j);
    if (j->failed)
        return;
    if (fflush(j->body) || fseeko(j->body, (off_t)(j->body_start + at), SEEK_SET) ||
        fwrite(p, 1, n, j->body) != n || fflush(j->body) ||
        fseeko(j->body, 0, SEEK_END)) {
        j->failed = 1;
        j->err = errno ? errno : EIO;
    }
}

/* The checkpoint event: every pool. Its size comes first but the pools are
 * streamed, so it is a 5-byte varint (padded with continuation bits, which
 * readers accept) patched at the end: checkpoints up to 32 GiB. So is the
 * number of pools (one byte: at most 10), as empty ones are left out. @return
 * its offset in the chunk. */
#define SIZE_PAD 5
uint64_t jfr_checkpoint(struct jfr *j, const struct rp_profile *p)
{
    jfr_drain(j);
    uint64_t start = j->written;
    uint8_t size[SIZE_PAD] = {0x80, 0x80, 0x80, 0x80, 0};
    rp_jfr_bytes(&j->buf, size, sizeof size);
    rp_jfr_varint(&j->buf, JFR_CHECKPOINT);
    rp_jfr_long(&j->buf, jfr_ticks(j, j->tmax));
    rp_jfr_varint(&j->buf, 0);                         /* duration              */
    rp_jfr_varint(&j->buf, 0);                         /* delta to previous: none */
    rp_jfr_u8(&j->buf, 1);                             /* type: flush           */
    uint64_t pools_at = start + j->buf.n;
    rp_jfr_u8(&j->buf, 0);                             /* pools, below          */

    static const char *const frame_types[RP_FRAME_MARKER] = {
        "Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel"};
    pool_fixed(&j->buf, JFR_FRAME_TYPE, 0, frame_types, RP_FRAME_MARKER);
    static const char *const states[JFR_STATE_COUNT] = {
        "STATE_RUNNABLE", "STATE_SLEEPING", "STATE_IN_OBJECT_WAIT", "STATE_PARKED",
        "STATE_BLOCKED_ON_MONITOR_ENTER", "STATE_UNKNOWN"};
    pool_fixed(&j->buf, JFR_THREAD_STATE, 1, states, JFR_STATE_COUNT);
    static const char *const when[] = {"After GC"};
    pool_fixed(&j->buf, JFR_GC_WHEN, JFR_GC_WHEN_AFTER, when, 1);
    uint8_t pools = 3 + (uint8_t)pool_threads(j, p);
    /* Stacks name methods, methods classes, classes packages, and all of them
     * symbols: written in that order, each pool is complete when written. */
    uint8_t *method_used = rp_xcalloc(p->nmethods ? p->nmethods : 1, 1);
    pools += (uint8_t)pool_stacks(j, p, method_used);
    pools += (uint8_t)pool_methods(j, p, method_used);
    free(method_used);
    pools += (uint8_t)pool_old_objects(j);
    pools += (uint8_t)pool_classes(j);
    pools += (uint8_t)pool_symbols(j);
    jfr_drain(j);
    jfr_patch(j, pools_at, &pools, 1);

    uint64_t n = j->written - start;
    for (int i = 0; i < SIZE_PAD; i++)
        size[i] = (uint8_t)(((n >> (7 * i)) & 0x7f) | (i < SIZE_PAD - 1 ? 0x80 : 0));
    jfr_patch(j, start, size, sizeof size);
    return start;
}

