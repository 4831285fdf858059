/*
 * src/symbols.c — native pc → symbol and library (see symbols.h).
 *
 * One `struct object` per loaded object, keyed by its load address, holding the
 * sorted function symbols src/elfsyms.c read from its file and debug file. Lookups
 * are a binary search; results are cached per pc. The tables of all objects
 * together are kept under SYMBOLS_BUDGET bytes.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "symbols.h"
#include "u64map.h"

/* What the symbol tables of all objects may keep. A JVM process maps about a
 * hundred objects; libjvm.so's functions take 3.5 to 4.5 MiB (JDK 17, 25),
 * libc's (from its debug file) 0.3 MiB. An object whose table would pass the budget keeps none: its pcs
 * are named "[lib]". */
#define SYMBOLS_BUDGET ((size_t)256 << 20)

struct object {
    uint64_t base;              /* link_map l_addr                                  */
    char *lib;                  /* basename                                         */
    int is_jvm;
    char *unknown;              /* "[lib]": a pc in no symbol of this object        */
    struct rp_elfsyms syms;     /* sorted by start; n == 0 if the file had none     */
};

struct cached {
    const struct object *obj;
    const char *name;
};

static struct rp_u64map g_objects;       /* l_addr → struct object*               */
static struct rp_u64map g_pcs;           /* pc → struct cached*                   */
static struct object g_none = {.lib = "[unknown]", .unknown = "[unknown]"};
static size_t g_kept;                    /* bytes of all objects' tables          */

static void load_symbols(struct object *o, const char *path)
{
    rp_elfsyms_load(path, NULL, SYMBOLS_BUDGET - g_kept, &o->syms);
    g_kept += o->syms.bytes;
}

static const struct object *object_for(const struct link_map *lm)
{
    uint64_t v;
    if (rp_u64map_get(&g_objects, lm->l_addr, &v))
        return (const struct object *)(uintptr_t)v;
    struct object *o = calloc(1, sizeof *o);
    if (!o)
        return &g_none;
    const char *path = lm->l_name && lm->l_name[0] ? lm->l_name : "/proc/self/exe";
    const char *slash = strrchr(path, '/');
    char exe[4096];
    if (!lm->l_name || !lm->l_name[0]) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        slash = strrchr(exe, '/');
        o->lib = strdup(slash ? slash + 1 : exe);
        path = exe;              /* its debug link is looked for next to it */
    } else {
        o->lib = strdup(slash ? slash + 1 : path);
    }
    if (!o->lib)
        o->lib = "[unknown]";
    o->base = lm->l_addr;
    o->is_jvm = strcmp(o->lib, "libjvm.so") == 0;
    /* A pc in no symbol (a stripped static function, e.g. inside libz) is named
     * after its object: one name per object, so such stacks still aggregate. */
    size_t ul = strlen(o->lib) + 3;
    o->unknown = malloc(ul);
    if (o->unknown)
        snprintf(o->unknown, ul, "[%s]", o->lib);
    else
        o->unknown = "[unknown]";
    if (path[0] == '/')
        load_symbols(o, path);
    rp_u64map_put(&g_objects, lm->l_addr, (uint64_t)(uintptr_t)o);
    return o;
}

static const char *lookup(const struct object *o, uint64_t pc)
{
    uint64_t off = pc - o->base;
    const struct rp_elfsym *syms = o->syms.syms;
    size_t lo = 0, hi = o->syms.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (syms[mid].start <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* lo is the first symbol after off; look back over overlapping aliases (the
     * best of a run of aliases is its last: elfsyms.h). */
    for (size_t i = lo; i-- > 0 && lo - i <= 8;)
        if (off >= syms[i].start && off < syms[i].start + syms[i].size)
            return syms[i].name;
    return NULL;
}

void rp_symbols_resolve(uint64_t pc, struct rp_native_sym *out)
{
    uint64_t v;
    const struct cached *c = NULL;
    if (rp_u64map_get(&g_pcs, pc, &v)) {
        c = (const struct cached *)(uintptr_t)v;
    } else {
        Dl_info info;
        struct link_map *lm = NULL;
        const struct object *o = &g_none;
        const char *name = NULL;
        if (dladdr1((void *)(uintptr_t)pc, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm) {
            o = object_for(lm);
            name = lookup(o, pc);
            if (!name && !o->syms.n && info.dli_sname) {
                /* No file symbols (the vDSO): trust dladdr only inside the
                 * symbol's extent. */
                const ElfW(Sym) *sym = NULL;
                if (dladdr1((void *)(uintptr_t)pc, &info, (void **)&sym,
                            RTLD_DL_SYMENT) && sym && info.dli_saddr &&
                    pc - (uint64_t)(uintptr_t)info.dli_saddr < sym->st_size)
                    name = strdup(info.dli_sname);
            }
        }
        struct cached *n = malloc(sizeof *n);
        if (n) {
            n->obj = o;
            n->name = name ? name : o->unknown;
            rp_u64map_put(&g_pcs, pc, (uint64_t)(uintptr_t)n);
            c = n;
        }
    }
    if (!c) {
        out->lib = "[unknown]";
        out->name = "[unknown]";
        out->is_jvm = 0;
        return;
    }
    out->lib = c->obj->lib;
    out->name = c->name;
    out->is_jvm = c->obj->is_jvm;
}

/* ----------------------------------------------------- symbol → address -- */

struct find_arg {
    const char *lib;
    const char *path;
    uint64_t base;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *argp)
{
    (void)size;
    struct find_arg *a = argp;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (slash && strcmp(slash + 1, a->lib) == 0) {
        a->path = info->dlpi_name;
        a->base = info->dlpi_addr;
        return 1;
    }
    return 0;
}

uint64_t rp_symbols_find(const char *lib, const char *name)
{
    struct find_arg a = {lib, NULL, 0};
    if (!dl_iterate_phdr(find_object, &a) || !a.path)
        return 0;
    uint64_t v = rp_elfsyms_value(a.path, name);
    return v ? a.base + v : 0;
}
