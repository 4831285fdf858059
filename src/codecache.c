/*
 * src/codecache.c — the interpreter and stub ranges reported by JVMTI's
 * DynamicCodeGenerated, published for the signal handler (see codecache.h).
 *
 * The reported ranges may nest (a range and a smaller one inside it) and repeat
 * (GenerateEvents replays ranges already seen). Publishing flattens them into
 * disjoint segments, each carrying the innermost range that covers it, so the
 * handler's lookup is one binary search.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "codecache.h"

struct code_array {
    size_t n;
    struct code_array *next_retired;
    struct rp_code e[];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under g_lock: what the events reported, unsorted, and the names. */
static struct rp_code *g_added;
static size_t g_nadded, g_capadded;
static char **g_names;
static size_t g_nnames, g_capnames;
static size_t g_published_upto;          /* g_nadded at the last publish          */
static struct code_array *g_retired;     /* replaced, not yet freed               */
static uint64_t g_events;

static _Atomic(struct code_array *) g_array;
static _Atomic long g_readers;
static uint64_t g_low, g_high;

void rp_codecache_set_bounds(uint64_t low, uint64_t high)
{
    g_low = low;
    g_high = high;
}

int rp_codecache_contains(uint64_t pc)
{
    return pc >= g_low && pc < g_high;
}

/* The index of `name` in the name table, added if new; UINT32_MAX if out of
 * memory. Under g_lock. Names repeat ("vtable stub", one per stub), so the
 * table stays small; a linear search from the newest is enough for the few
 * thousand events of a JVM's life. */
static uint32_t name_index(const char *name)
{
    for (size_t i = g_nnames; i-- > 0;)
        if (strcmp(g_names[i], name) == 0)
            return (uint32_t)i;
    if (g_nnames == g_capnames) {
        size_t cap = g_capnames ? 2 * g_capnames : 256;
        char **n = realloc(g_names, cap * sizeof *n);
        if (!n)
            return UINT32_MAX;
        g_names = n;
        g_capnames = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return UINT32_MAX;
    g_names[g_nnames] = copy;
    return (uint32_t)g_nnames++;
}

/* The offset of enter() (push rbp; mov rbp, rsp, in either encoding of the mov:
 * HotSpot emits 48 8b ec, compilers 48 89 e5) near the start of `code`. */
static uint8_t enter_at(const uint8_t *code, int32_t length)
{
    for (int32_t i = 0; i < RP_STUB_ENTER_WITHIN && i + 4 <= length; i++)
        if (code[i] == 0x55 && code[i + 1] == 0x48 &&
            ((code[i + 2] == 0x8b && code[i + 3] == 0xec) ||
             (code[i + 2] == 0x89 && code[i + 3] == 0xe5)))
            return (uint8_t)i;
    return RP_STUB_NO_ENTER;
}

void rp_codecache_add(const char *name, const void *address, int32_t length)
{
    if (!name || !address || length <= 0)
        return;
    pthread_mutex_lock(&g_lock);
    g_events++;
    uint32_t ni = name_index(name);
    if (ni != UINT32_MAX && g_nadded == g_capadded) {
        size_t cap = g_capadded ? 2 * g_capadded : 1024;
        struct rp_code *n = realloc(g_added, cap * sizeof *n);
        if (n) {
            g_added = n;
            g_capadded = cap;
        }
    }
    if (ni != UINT32_MAX && g_nadded < g_capadded) {
        struct rp_code *c = &g_added[g_nadded++];
        c->start = (uint64_t)(uintptr_t)address;
        c->end = c->start + (uint64_t)length;
        c->name = ni;
        c->kind = strcmp(name, "Interpreter") == 0 ? RP_CODE_INTERPRETER : RP_CODE_STUB;
        c->enter_at = enter_at(address, length);
    }
    pthread_mutex_unlock(&g_lock);
}

/* Outer ranges first where two begin at the same address. */
static int by_start(const void *a, const void *b)
{
    const struct rp_code *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

struct flat {
    struct code_array *out;
    size_t cap;
};

static void emit(struct flat *f, uint64_t start, uint64_t end, const struct rp_code *c)
{
    if (start >= end || f->out->n == f->cap)
        return;
    struct rp_code *o = &f->out->e[f->out->n];
    /* A continuation of the previous segment of the same range merges into it. */
    if (f->out->n > 0 && o[-1].end == start && o[-1].name == c->name &&
        o[-1].kind == c->kind && o[-1].enter_at == c->enter_at) {
        o[-1].end = end;
        return;
    }
    *o = *c;
    o->start = start;
    o->end = end;
    f->out->n++;
}

/* Disjoint segments from sorted, possibly nested ranges: each point gets the
 * innermost range that covers it. A range that overlaps another only in part
 * is cut at the outer one's end. `stack` has room for n entries. */
static void flatten(const struct rp_code *in, size_t n, const struct rp_code **stack,
                    struct flat *f)
{
    size_t depth = 0;
    uint64_t cur = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rp_code *e = &in[i];
        while (depth > 0 && stack[depth - 1]->end <= e->start) {
            emit(f, cur, stack[depth - 1]->end, stack[depth - 1]);
            if (cur < stack[depth - 1]->end)
                cur = stack[depth - 1]->end;
            depth--;
        }
        if (depth > 0) {
            const struct rp_code *top = stack[depth - 1];
            if (e->start == top->start && e->end == top->end)
                continue;                           /* reported twice */
            emit(f, cur, e->start, top);
            if (e->end > top->end) {
                cur = e->start;                     /* partial overlap: drop it */
                continue;
            }
        }
        cur = e->start;
        stack[depth++] = e;
    }
    while (depth > 0) {
        emit(f, cur, stack[depth - 1]->end, stack[depth - 1]);
        if (cur < stack[depth - 1]->end)
            cur = stack[depth - 1]->end;
        depth--;
    }
}

int rp_codecache_publish(void)
{
    pthread_mutex_lock(&g_lock);
    int changed = g_nadded != g_published_upto;
    struct code_array *a = NULL;
    if (changed) {
        /* Each range gives at most two segments of its parent besides its own. */
        size_t cap = 3 * g_nadded + 1;
        struct rp_code *sorted = malloc(g_nadded * sizeof *sorted);
        const struct rp_code **stack = malloc(g_nadded * sizeof *stack);
        a = malloc(sizeof *a + cap * sizeof a->e[0]);
        if (sorted && stack && a) {
            memcpy(sorted, g_added, g_nadded * sizeof *sorted);
            qsort(sorted, g_nadded, sizeof *sorted, by_start);
            a->n = 0;
            a->next_retired = NULL;
            struct flat f = {a, cap};
            flatten(sorted, g_nadded, stack, &f);
            g_published_upto = g_nadded;
        } else {
            free(a);
            a = NULL;
            changed = 0;            /* the old array stays; the next publish retries */
        }
        free(sorted);
        free(stack);
    }
    if (a) {
        struct code_array *old = atomic_exchange(&g_array, a);
        if (old) {
            old->next_retired = g_retired;
            g_retired = old;
        }
    }
    /* After the exchange, a handler that counts itself in loads the new array;
     * one counted in before may hold an old one. At zero, none does. */
    if (g_retired && atomic_load(&g_readers) == 0) {
        while (g_retired) {
            struct code_array *r = g_retired;
            g_retired = r->next_retired;
            free(r);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return a != NULL;
}

void rp_codecache_enter(void)
{
    atomic_fetch_add(&g_readers, 1);
}

void rp_codecache_leave(void)
{
    atomic_fetch_sub(&g_readers, 1);
}

const struct rp_code *rp_codecache_find(uint64_t pc)
{
    const struct code_array *a = atomic_load(&g_array);
    if (!a || a->n == 0)
        return NULL;
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->e[mid].end <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < a->n && a->e[lo].start <= pc)
        return &a->e[lo];
    return NULL;
}

const char *rp_codecache_name(uint64_t pc)
{
    rp_codecache_enter();
    const struct rp_code *c = rp_codecache_find(pc);
    uint32_t ni = c ? c->name : UINT32_MAX;
    rp_codecache_leave();
    if (ni == UINT32_MAX)
        return NULL;
    pthread_mutex_lock(&g_lock);
    const char *name = ni < g_nnames ? g_names[ni] : NULL;
    pthread_mutex_unlock(&g_lock);
    return name;                 /* names are never freed */
}

void rp_codecache_stats(struct rp_codecache_stats *out)
{
    pthread_mutex_lock(&g_lock);
    const struct code_array *a = atomic_load(&g_array);
    out->ranges = g_nadded;
    out->published = a ? a->n : 0;
    out->events = g_events;
    pthread_mutex_unlock(&g_lock);
}
