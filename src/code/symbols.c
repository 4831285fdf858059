/*
 * src/code/symbols.c — native pc → symbol and library (see symbols.h).
 *
 * The object that holds a pc, and its sorted function symbols (read from its
 * file and debug file once), come from the code map (codemap.h). A lookup is a
 * binary search of those symbols; results are cached per pc.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "code/codemap.h"
#include "code/symbols.h"
#include "core/u64map.h"

struct cached {
    const char *lib, *name;
    int is_jvm;
};

static struct rp_u64map g_pcs;           /* pc → struct cached*                   */

/* The function of `syms` (an object's, loaded at `base`) that holds `pc`, or NULL. */
static const char *lookup(const struct rp_elfsyms *s, uint64_t base, uint64_t pc)
{
    uint64_t off = pc - base;
    const struct rp_elfsym *syms = s->syms;
    size_t lo = 0, hi = s->n;
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

/* No file symbols (the vDSO): dladdr's name, trusted only inside the symbol's
 * extent. @return a copy, or NULL. */
static const char *dladdr_name(uint64_t pc)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (dladdr1((void *)(uintptr_t)pc, &info, (void **)&sym, RTLD_DL_SYMENT) &&
        info.dli_sname && sym && info.dli_saddr &&
        pc - (uint64_t)(uintptr_t)info.dli_saddr < sym->st_size)
        return strdup(info.dli_sname);
    return NULL;
}

void rp_symbols_resolve(uint64_t pc, struct rp_native_sym *out)
{
    uint64_t v;
    const struct cached *c = NULL;
    if (rp_u64map_get(&g_pcs, pc, &v)) {
        c = (const struct cached *)(uintptr_t)v;
    } else {
        struct cached *n = malloc(sizeof *n);
        struct rp_code_object *o = rp_codemap_object_at(pc);
        if (n && o) {
            const struct rp_elfsyms *syms = rp_codemap_symbols(o);
            const char *name = lookup(syms, o->base, pc);
            if (!name && !syms->n)
                name = dladdr_name(pc);
            *n = (struct cached){o->lib, name ? name : o->unknown, o->is_jvm};
        } else if (n) {
            *n = (struct cached){"[unknown]", "[unknown]", 0};
        }
        if (n) {
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
    out->lib = c->lib;
    out->name = c->name;
    out->is_jvm = c->is_jvm;
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
