/*
 * src/code/classes.c — class ids and names (see classes.h). Ids index blocks of
 * names that are allocated as classes are first seen and never freed; the count
 * of issued ids is published with release order after the name is stored, so a
 * reader that sees an id sees its name.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "code/classes.h"

#define CLASS_BLOCK    1024u
#define CLASS_BLOCKS   4096u            /* 4 Mi classes */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char **_Atomic g_blocks[CLASS_BLOCKS];
static _Atomic uint32_t g_count;

/* A JVM type signature as Java writes it: "[[I" → "int[][]", "Ljava/lang/Long;"
 * → "java.lang.Long". malloc'ed, or NULL. */
static char *java_type_name(const char *sig)
{
    static const struct { char c; const char *name; } prim[] = {
        {'B', "byte"}, {'C', "char"}, {'D', "double"}, {'F', "float"}, {'I', "int"},
        {'J', "long"}, {'S', "short"}, {'Z', "boolean"}, {'V', "void"}};
    size_t dims = 0;
    while (sig[dims] == '[')
        dims++;
    const char *base = sig + dims;
    size_t blen = strlen(base);
    const char *pname = NULL;
    if (blen == 1)
        for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
            if (prim[i].c == base[0])
                pname = prim[i].name;
    if (!pname && blen >= 2 && base[0] == 'L' && base[blen - 1] == ';') {
        base++;
        blen -= 2;
    }
    if (pname) {
        base = pname;
        blen = strlen(pname);
    }
    char *out = malloc(blen + 2 * dims + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < blen; i++)
        out[i] = base[i] == '/' ? '.' : base[i];
    for (size_t i = 0; i < dims; i++)
        memcpy(out + blen + 2 * i, "[]", 2);
    out[blen + 2 * dims] = '\0';
    return out;
}

/* Issue an id for `name` (taken). With `dedupe`, first look for an id already
 * issued for the same name (then `name` is freed): the path without tags, where
 * a class cannot carry its id, so that each sample does not issue another id
 * and keep another copy of the name. A linear search: it runs only without
 * can_tag_objects (another agent took it), and only on lock samples and the
 * rare allocation sample that finds no tag. @return the id, or 0 if out of room. */
static uint32_t class_add(char *name, int dedupe)
{
    pthread_mutex_lock(&g_lock);
    uint32_t n = atomic_load_explicit(&g_count, memory_order_relaxed);
    for (uint32_t k = 1; dedupe && k <= n; k++) {
        char **bl = atomic_load_explicit(&g_blocks[k / CLASS_BLOCK], memory_order_relaxed);
        if (bl && bl[k % CLASS_BLOCK] && !strcmp(bl[k % CLASS_BLOCK], name)) {
            pthread_mutex_unlock(&g_lock);
            free(name);
            return k;
        }
    }
    uint32_t id = n + 1;
    uint32_t b = id / CLASS_BLOCK, i = id % CLASS_BLOCK;
    char **block = b < CLASS_BLOCKS ? atomic_load(&g_blocks[b]) : NULL;
    if (b < CLASS_BLOCKS && !block && (block = calloc(CLASS_BLOCK, sizeof *block)))
        atomic_store_explicit(&g_blocks[b], block, memory_order_release);
    if (!block) {
        pthread_mutex_unlock(&g_lock);
        free(name);
        return 0;
    }
    block[i] = name;
    atomic_store_explicit(&g_count, id, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    return id;
}

const char *rp_class_name(uint32_t id)
{
    if (!id || id > atomic_load_explicit(&g_count, memory_order_acquire))
        return NULL;
    char **block = atomic_load_explicit(&g_blocks[id / CLASS_BLOCK], memory_order_acquire);
    return block ? block[id % CLASS_BLOCK] : NULL;
}

uint32_t rp_class_id(jvmtiEnv *jvmti, jclass klass)
{
    /* GetTag and SetTag fail (MUST_POSSESS_CAPABILITY) without can_tag_objects:
     * then the id is found by name (class_add). */
    jlong tag = 0;
    int tagged = (*jvmti)->GetTag(jvmti, klass, &tag) == JVMTI_ERROR_NONE;
    if (tagged && ((uint64_t)tag & RP_CLASS_TAG))
        return (uint32_t)((uint64_t)tag & 0xffffffffu);
    char *sig = NULL;
    if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE)
        return 0;
    char *name = java_type_name(sig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    uint32_t id = name ? class_add(name, !tagged) : 0;
    if (id)
        (*jvmti)->SetTag(jvmti, klass, (jlong)(RP_CLASS_TAG | id));
    return id;
}
