/*
 * src/code/codemap.c — the code map (codemap.h): objects and executable segments from
 * dl_iterate_phdr, published as immutable snapshots.
 *
 * A refresh walks the loader's list once to read its change counters and, when
 * they moved, once more to collect the executable segments: each object is
 * found among those seen before (same name, same load address) or made, each
 * segment gets its frame table from frametab.c (reused when it is known). The
 * segments are sorted and copied into a new snapshot, published with a release
 * store. Symbols are not read here: rp_codemap_symbols reads an object's the
 * first time the flusher names a pc in it.
 */
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code/codemap.h"

/* What the symbol tables of all objects may keep. A JVM process maps about a
 * hundred objects; libjvm.so's functions take 3.5 to 4.5 MiB (JDK 17, 25),
 * libc's (from its debug file) 0.3 MiB. An object whose table would pass the
 * budget keeps none: its pcs are named "[lib]". */
#define SYMBOLS_BUDGET ((size_t)256 << 20)

static _Atomic(struct rp_codemap *) g_map;
static unsigned long long g_adds = ~0ull, g_subs = ~0ull;
/* Serialises refreshes (agent start, the flusher); guards g_objects and the
 * frame tables' cache. */
static pthread_mutex_t g_refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_code_object *g_objects;    /* every object ever seen            */
static size_t g_kept;                       /* bytes of all objects' symbols (the
                                               flusher's)                        */

const struct rp_codemap *rp_codemap_current(void)
{
    return atomic_load_explicit(&g_map, memory_order_acquire);
}

/* ------------------------------------------------------------------ objects -- */

/* The object loaded as `name` at `base`: the one seen before, or a new one.
 * NULL if memory ran out. Refresh lock held. */
static struct rp_code_object *object_get(const char *name, uint64_t base)
{
    if (!name)
        name = "";
    for (struct rp_code_object *o = g_objects; o; o = o->next)
        if (o->base == base && strcmp(o->name, name) == 0)
            return o;
    struct rp_code_object *o = calloc(1, sizeof *o);
    char *nm = strdup(name), *path = NULL, *unknown = NULL;
    if (name[0]) {
        path = strdup(name);
    } else {
        /* The program: its file, so that its debug link is looked for next to
         * it. */
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        path = strdup(exe);
    }
    const char *slash = path ? strrchr(path, '/') : NULL;
    /* A pc in no symbol (a stripped static function, e.g. inside libz) is named
     * after its object: one name per object, so such stacks still aggregate. */
    size_t ul = path ? strlen(slash ? slash + 1 : path) + 3 : 0;
    if (path && (unknown = malloc(ul)) != NULL)
        snprintf(unknown, ul, "[%s]", slash ? slash + 1 : path);
    if (!o || !nm || !path || !unknown) {
        free(o);
        free(nm);
        free(path);
        free(unknown);
        return NULL;
    }
    o->base = base;
    o->name = nm;
    o->path = path;
    o->lib = slash ? slash + 1 : path;
    o->unknown = unknown;
    o->is_jvm = strcmp(o->lib, "libjvm.so") == 0;
    o->next = g_objects;
    g_objects = o;
    return o;
}

const struct rp_elfsyms *rp_codemap_symbols(struct rp_code_object *o)
{
    if (!o->syms_loaded) {
        o->syms_loaded = 1;
        if (o->path[0] == '/') {
            rp_elfsyms_load(o->path, NULL, SYMBOLS_BUDGET - g_kept, &o->syms);
            g_kept += o->syms.bytes;
        }
    }
    return &o->syms;
}

/* ----------------------------------------------------------------- refresh -- */

struct build {
    struct rp_code_segment *seg;
    size_t n, cap;
    int failed;
};

static int add_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct build *b = arg;
    const uint8_t *hdr = NULL, *lo = NULL, *hi = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (int i = 0; i < info->dlpi_phnum && hdr; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const uint8_t *s = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_LOAD && hdr >= s && hdr < s + ph->p_memsz) {
            lo = s;
            hi = s + ph->p_memsz;
        }
    }
    if (!lo)
        hdr = NULL;
    struct rp_code_object *obj = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
            continue;
        if (!obj && !(obj = object_get(info->dlpi_name, info->dlpi_addr))) {
            b->failed = 1;
            return 1;
        }
        if (b->n == b->cap) {
            size_t ncap = b->cap ? b->cap * 2 : 64;
            struct rp_code_segment *ns = realloc(b->seg, ncap * sizeof *ns);
            if (!ns) {
                b->failed = 1;
                return 1;
            }
            b->seg = ns;
            b->cap = ncap;
        }
        struct rp_code_segment *m = &b->seg[b->n++];
        m->start = info->dlpi_addr + ph->p_vaddr;
        m->end = m->start + ph->p_memsz;
        m->object = obj;
        m->table = hdr ? rp_frametab_get(m->start, m->end, hdr, lo, hi, info->dlpi_name)
                       : NULL;
        if (hdr && !m->table) {
            b->failed = 1;
            return 1;
        }
        m->page = m->table ? m->table->page : NULL;
        m->row = m->table ? m->table->row : NULL;
        m->npages = m->table ? m->table->npages : 0;
    }
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct rp_code_segment *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int count_changes(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *v = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        v[0] = info->dlpi_adds;
        v[1] = info->dlpi_subs;
    }
    return 1;   /* the counters are the same in every entry: one is enough */
}

static int refresh_locked(void)
{
    unsigned long long v[2] = {0, 0};
    dl_iterate_phdr(count_changes, v);
    if (v[0] == g_adds && v[1] == g_subs && atomic_load(&g_map))
        return 0;
    struct build b = {0};
    dl_iterate_phdr(add_segments, &b);
    if (b.failed) {
        free(b.seg);
        return -1;
    }
    qsort(b.seg, b.n, sizeof *b.seg, by_start);
    struct rp_codemap *map = malloc(sizeof *map + b.n * sizeof(struct rp_code_segment));
    if (!map) {
        free(b.seg);
        return -1;
    }
    map->n = b.n;
    map->retired = atomic_load_explicit(&g_map, memory_order_relaxed);
    if (b.n)
        memcpy(map->seg, b.seg, b.n * sizeof(struct rp_code_segment));
    free(b.seg);
    /* The previous snapshot is never freed (map->retired), nor any table or
     * object: a handler may be reading them. The release store publishes the
     * tables' and objects' contents with the snapshot. */
    atomic_store_explicit(&g_map, map, memory_order_release);
    g_adds = v[0];
    g_subs = v[1];
    return 1;
}

int rp_codemap_refresh(void)
{
    pthread_mutex_lock(&g_refresh_lock);
    int rc = refresh_locked();
    pthread_mutex_unlock(&g_refresh_lock);
    return rc;
}

struct rp_code_object *rp_codemap_object_at(uint64_t pc)
{
    rp_codemap_refresh();
    const struct rp_code_segment *s = rp_codemap_find(rp_codemap_current(), pc);
    return s ? s->object : NULL;
}
