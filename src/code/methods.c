/*
 * src/code/methods.c — jmethodID creation and resolution, and the compiled-code map
 * (see methods.h).
 *
 * The resolution cache maps a jmethodID to a malloc'ed struct rp_method whose
 * strings are copied out of JVMTI's buffers; entries live as long as the process
 * (their number is bounded by the methods that ever appear in a sample). The
 * compiled-code map holds, under g_lock: code address → method (for unloads),
 * method → number of live compiled blobs, and the set of inlining pairs, keyed by
 * a 64-bit hash of (callee, caller, bci).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <jvmti.h>
#include <jvmticmlr.h>

#include "core/counters.h"
#include "code/methods.h"
#include "core/u64map.h"

static jvmtiEnv *g_jvmti;
static int g_have_lines, g_have_source;
static struct rp_u64map g_cache;                 /* jmethodID → struct rp_method* */
static struct rp_methods_stats g_stats;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_u64map g_blobs;                 /* code address → jmethodID     */
static struct rp_u64map g_live;                  /* jmethodID → live blob count  */
static struct rp_u64map g_inline;                /* pair hash → 1                */
static _Atomic uint64_t g_epoch;

static const struct rp_method g_unloaded = {
    "", "[unloaded]", "", "", RP_METHOD_UNLOADED, 0, NULL
};
static const struct rp_method g_unknown = {
    "", "[unknown java method]", "", "", 0, 0, NULL
};

void rp_methods_init(jvmtiEnv *jvmti, int have_lines, int have_source)
{
    g_jvmti = jvmti;
    g_have_lines = have_lines;
    g_have_source = have_source;
}

/* ------------------------------------------------------------ jmethodIDs -- */

void rp_methods_prepare_class(jclass klass)
{
    jint n = 0;
    jmethodID *ids = NULL;
    if ((*g_jvmti)->GetClassMethods(g_jvmti, klass, &n, &ids) == JVMTI_ERROR_NONE)
        (*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)ids);
}

void rp_methods_prepare_loaded(JNIEnv *jni)
{
    jint n = 0;
    jclass *classes = NULL;
    if ((*g_jvmti)->GetLoadedClasses(g_jvmti, &n, &classes) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        jint status = 0;
        /* GetClassMethods wants a prepared class; the others get theirs at
         * ClassPrepare. */
        if ((*g_jvmti)->GetClassStatus(g_jvmti, classes[i], &status) == JVMTI_ERROR_NONE &&
            (status & JVMTI_CLASS_STATUS_PREPARED))
            rp_methods_prepare_class(classes[i]);
        (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    (*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)classes);
}

/* ------------------------------------------------------------ resolution -- */

/* "Ljava/util/HashMap;" → "java.util.HashMap" (malloc'ed). */
static char *dotted(const char *sig)
{
    size_t len = strlen(sig);
    if (len >= 2 && sig[0] == 'L' && sig[len - 1] == ';') {
        sig++;
        len -= 2;
    }
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++)
        out[i] = sig[i] == '/' ? '.' : sig[i];
    out[len] = '\0';
    return out;
}

static char *take(char *jvmti_str)
{
    char *s = strdup(jvmti_str ? jvmti_str : "");
    if (jvmti_str)
        (*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)jvmti_str);
    return s;
}

/* What a failed JVMTI call says about the method. Only INVALID_METHODID and
 * INVALID_CLASS mean its class is gone, for good; OUT_OF_MEMORY, and anything
 * else (WRONG_PHASE in a final drain after VMDeath, ...), say nothing about the
 * method, so the lookup is answered for now and not cached. */
enum outcome { KEEP, UNLOADED, NO_MEMORY, TRANSIENT };

static enum outcome failed(jvmtiError e)
{
    if (e == JVMTI_ERROR_INVALID_METHODID || e == JVMTI_ERROR_INVALID_CLASS)
        return UNLOADED;
    return e == JVMTI_ERROR_OUT_OF_MEMORY ? NO_MEMORY : TRANSIENT;
}

static void free_method(struct rp_method *r)
{
    free((char *)r->name);
    free((char *)r->signature);
    free((char *)r->file);
    free((char *)r->klass);
    if (r->lines)
        (*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)r->lines);
    free(r);
}

/* Fill r from JVMTI. @return KEEP, or why not (r is then the caller's to free). */
static enum outcome fill(JNIEnv *jni, jmethodID m, struct rp_method *r)
{
    jclass k = NULL;
    char *ksig = NULL, *file = NULL;
    jvmtiError e = (*g_jvmti)->GetMethodDeclaringClass(g_jvmti, m, &k);
    if (e != JVMTI_ERROR_NONE || !k)
        return e != JVMTI_ERROR_NONE ? failed(e) : UNLOADED;
    /* The local ref keeps the class from being unloaded from here on. */
    jvmtiError fe = JVMTI_ERROR_NONE;
    e = (*g_jvmti)->GetClassSignature(g_jvmti, k, &ksig, NULL);
    if (e == JVMTI_ERROR_NONE) {
        r->klass = dotted(ksig);       /* NULL for want of memory: see resolve */
        (*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)ksig);
        if (g_have_source)
            fe = (*g_jvmti)->GetSourceFileName(g_jvmti, k, &file);
    }
    (*jni)->DeleteLocalRef(jni, k);
    if (e != JVMTI_ERROR_NONE)
        return failed(e);
    if (fe != JVMTI_ERROR_NONE) {
        file = NULL;
        /* ABSENT_INFORMATION: no SourceFile attribute, for good: "". */
        if (fe != JVMTI_ERROR_ABSENT_INFORMATION)
            return failed(fe);
    }
    r->file = take(file);
    jint mods = 0;
    e = (*g_jvmti)->GetMethodModifiers(g_jvmti, m, &mods);
    if (e != JVMTI_ERROR_NONE)
        return failed(e);
    if (mods & 0x0100)
        r->flags |= RP_METHOD_NATIVE;
    if (mods & 0x1000)
        r->flags |= RP_METHOD_SYNTHETIC;
    if (g_have_lines && !(r->flags & RP_METHOD_NATIVE)) {
        e = (*g_jvmti)->GetLineNumberTable(g_jvmti, m, &r->nlines, &r->lines);
        if (e != JVMTI_ERROR_NONE) {
            r->nlines = 0;
            r->lines = NULL;
            /* ABSENT_INFORMATION: compiled without line numbers, for good. */
            if (e != JVMTI_ERROR_ABSENT_INFORMATION)
                return failed(e);
        }
    }
    return KEEP;
}

/* @return the resolved method, &g_unloaded, or NULL when the answer may change
 * (no memory, a JVMTI phase): the caller then answers [unknown java method] and
 * caches nothing. */
static const struct rp_method *resolve(JNIEnv *jni, jmethodID m)
{
    char *name = NULL, *sig = NULL;
    jvmtiError e = (*g_jvmti)->GetMethodName(g_jvmti, m, &name, &sig, NULL);
    enum outcome o = e == JVMTI_ERROR_NONE ? KEEP : failed(e);
    struct rp_method *r = NULL;
    if (o == KEEP) {
        r = calloc(1, sizeof *r);
        if (r) {
            r->name = take(name);
            r->signature = take(sig);
            o = fill(jni, m, r);
        } else {
            (*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)name);
            (*g_jvmti)->Deallocate(g_jvmti, (unsigned char *)sig);
            o = NO_MEMORY;
        }
    }
    /* A string copy that failed (take, dotted) is a JVMTI OUT_OF_MEMORY by
     * another name: nothing is kept, so that the next lookup, when memory may be
     * back, resolves the method properly. */
    if (o == KEEP && (!r->name || !r->signature || !r->file || !r->klass))
        o = NO_MEMORY;
    if (o == KEEP) {
        g_stats.resolved++;
        return r;
    }
    if (r)
        free_method(r);
    if (o == UNLOADED) {
        /* Its class was unloaded (before GetMethodName, or between it and here: a
         * class loader collected meanwhile). Its name alone, with no class, would
         * be a wrong frame. */
        g_stats.unloaded++;
        return &g_unloaded;
    }
    if (o == NO_MEMORY)
        g_stats.no_memory++;
    else
        g_stats.unresolved++;
    return NULL;
}

const struct rp_method *rp_methods_get(JNIEnv *jni, jmethodID m)
{
    if (!m)
        return &g_unknown;
    uint64_t v;
    if (rp_u64map_get(&g_cache, (uint64_t)(uintptr_t)m, &v))
        return (const struct rp_method *)(uintptr_t)v;
    const struct rp_method *r = resolve(jni, m);
    if (!r)
        return &g_unknown;        /* counted, and not cached */
    if (rp_u64map_put(&g_cache, (uint64_t)(uintptr_t)m, (uint64_t)(uintptr_t)r) != 0 &&
        r != &g_unloaded) {
        /* No memory for the cache entry. Returning r uncached would leak it and
         * allocate another at every lookup: it is freed, and the lookup counts
         * as one that failed for want of memory. */
        free_method((struct rp_method *)r);
        g_stats.resolved--;
        g_stats.no_memory++;
        return &g_unknown;
    }
    return r;
}

int rp_method_is_unknown(const struct rp_method *m)
{
    return m == &g_unknown;
}

uint32_t rp_method_line(const struct rp_method *m, int32_t bci)
{
    if (bci < 0 || !m->nlines)
        return 0;
    /* The entry with the largest start_location <= bci (the table is sorted by
     * location in practice; a linear scan does not depend on it). */
    jlocation best = -1;
    uint32_t line = 0;
    for (jint i = 0; i < m->nlines; i++) {
        jlocation loc = m->lines[i].start_location;
        if (loc <= bci && loc > best) {
            best = loc;
            line = (uint32_t)m->lines[i].line_number;
        }
    }
    return line;
}

/* ------------------------------------------------------- compiled methods -- */

static uint64_t pair_key(jmethodID callee, jmethodID caller, int32_t bci)
{
    uint64_t h = rp_mix64((uint64_t)(uintptr_t)callee);
    h = rp_mix64(h ^ (uint64_t)(uintptr_t)caller);
    return rp_mix64(h ^ (uint64_t)(uint32_t)bci);
}

void rp_methods_compiled_load(jmethodID m, const void *code_addr, const void *compile_info)
{
    pthread_mutex_lock(&g_lock);
    uint64_t n = 0, prev;
    if (!rp_u64map_get(&g_blobs, (uint64_t)(uintptr_t)code_addr, &prev)) {
        rp_u64map_get(&g_live, (uint64_t)(uintptr_t)m, &n);
        rp_u64map_put(&g_live, (uint64_t)(uintptr_t)m, n + 1);
        rp_u64map_put(&g_blobs, (uint64_t)(uintptr_t)code_addr, (uint64_t)(uintptr_t)m);
        g_stats.compiled_live++;
    }
    for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next) {
        if (h->kind != JVMTI_CMLR_INLINE_INFO)
            continue;
        const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
        for (jint i = 0; i < r->numpcs; i++) {
            const PCStackInfo *pc = &r->pcinfo[i];
            /* methods[0] is the innermost; methods[k] is inlined into methods[k+1]
             * at bcis[k+1]. */
            for (jint k = 0; k + 1 < pc->numstackframes; k++) {
                uint64_t key = pair_key(pc->methods[k], pc->methods[k + 1], pc->bcis[k + 1]);
                if (!rp_u64map_get(&g_inline, key, NULL)) {
                    rp_u64map_put(&g_inline, key, 1);
                    g_stats.inline_pairs++;
                }
            }
        }
    }
    atomic_fetch_add(&g_epoch, 1);
    pthread_mutex_unlock(&g_lock);
}

void rp_methods_compiled_unload(jmethodID m, const void *code_addr)
{
    pthread_mutex_lock(&g_lock);
    uint64_t owner, n;
    if (rp_u64map_get(&g_blobs, (uint64_t)(uintptr_t)code_addr, &owner)) {
        rp_u64map_del(&g_blobs, (uint64_t)(uintptr_t)code_addr);
        m = (jmethodID)(uintptr_t)owner;
        if (rp_u64map_get(&g_live, owner, &n)) {
            if (n > 1)
                rp_u64map_put(&g_live, owner, n - 1);
            else
                rp_u64map_del(&g_live, owner);
        }
        g_stats.compiled_live--;
    }
    (void)m;
    atomic_fetch_add(&g_epoch, 1);
    pthread_mutex_unlock(&g_lock);
}

uint64_t rp_methods_compiled_epoch(void)
{
    return atomic_load(&g_epoch);
}

enum rp_frame_type rp_methods_frame_type(jmethodID m, jmethodID caller, int32_t caller_bci)
{
    enum rp_frame_type t = RP_FRAME_INTERPRETED;
    pthread_mutex_lock(&g_lock);
    if (caller && rp_u64map_get(&g_inline, pair_key(m, caller, caller_bci), NULL))
        t = RP_FRAME_INLINED;
    else if (rp_u64map_get(&g_live, (uint64_t)(uintptr_t)m, NULL))
        t = RP_FRAME_JIT;
    pthread_mutex_unlock(&g_lock);
    return t;
}

void rp_methods_stats(struct rp_methods_stats *out)
{
    pthread_mutex_lock(&g_lock);
    *out = g_stats;
    pthread_mutex_unlock(&g_lock);
}

static const char *const METHODS_COUNTERS[] = {"methods.no_memory", "methods.unresolved"};

static void methods_counters_read(uint64_t *v)
{
    struct rp_methods_stats s;
    rp_methods_stats(&s);
    v[0] = s.no_memory;
    v[1] = s.unresolved;
}

void rp_methods_counters_register(void)
{
    rp_counters_register(RP_COUNTERS_NOMEM, METHODS_COUNTERS, 2, methods_counters_read);
}
