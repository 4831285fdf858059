/*
 * src/symbols.c — native pc → symbol and library (see symbols.h).
 *
 * One `struct object` per loaded object, keyed by its load address, holding a
 * sorted array of (start, size, name) read from the file's symbol table. Lookups
 * are a binary search; results are cached per pc.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "symbols.h"
#include "u64map.h"

struct sym {
    uint64_t start, size;
    const char *name;
};

struct object {
    uint64_t base;              /* link_map l_addr                                  */
    char *lib;                  /* basename                                         */
    int is_jvm;
    char *unknown;              /* "[lib]": a pc in no symbol of this object        */
    struct sym *syms;           /* sorted by start; NULL if the file had none       */
    size_t nsyms;
};

struct cached {
    const struct object *obj;
    const char *name;
};

static struct rp_u64map g_objects;       /* l_addr → struct object*               */
static struct rp_u64map g_pcs;           /* pc → struct cached*                   */
static struct object g_none = {0, "[unknown]", 0, "[unknown]", NULL, 0};

static int by_start(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Read the FUNC symbols of the ELF file at `path`: .symtab if present, else
 * .dynsym. The file stays mapped (names point into it). */
static void load_symbols(struct object *o, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    size_t size = (size_t)st.st_size;
    const uint8_t *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED)
        return;
    const Elf64_Ehdr *eh = (const void *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        goto unmap;
    const Elf64_Shdr *sh = (const void *)(f + eh->e_shoff);
    const Elf64_Shdr *tab = NULL;
    for (int pass = 0; pass < 2 && !tab; pass++)
        for (unsigned i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) {
                tab = &sh[i];
                break;
            }
    if (!tab || tab->sh_link >= eh->e_shnum || tab->sh_entsize != sizeof(Elf64_Sym) ||
        tab->sh_offset + tab->sh_size > size)
        goto unmap;
    const Elf64_Shdr *strs = &sh[tab->sh_link];
    if (strs->sh_offset + strs->sh_size > size)
        goto unmap;
    const Elf64_Sym *syms = (const void *)(f + tab->sh_offset);
    size_t n = tab->sh_size / sizeof(Elf64_Sym), k = 0;
    struct sym *out = malloc((n ? n : 1) * sizeof *out);
    if (!out)
        goto unmap;
    for (size_t i = 0; i < n; i++) {
        unsigned type = ELF64_ST_TYPE(syms[i].st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || syms[i].st_value == 0 ||
            syms[i].st_size == 0 || syms[i].st_name >= strs->sh_size)
            continue;
        out[k].start = syms[i].st_value;
        out[k].size = syms[i].st_size;
        out[k].name = (const char *)f + strs->sh_offset + syms[i].st_name;
        k++;
    }
    qsort(out, k, sizeof *out, by_start);
    o->syms = out;
    o->nsyms = k;
    return;                       /* the mapping is kept: names point into it */
unmap:
    munmap((void *)f, size);
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
    size_t lo = 0, hi = o->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->syms[mid].start <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* lo is the first symbol after off; look back over overlapping aliases. */
    for (size_t i = lo; i-- > 0 && lo - i <= 8;)
        if (off >= o->syms[i].start && off < o->syms[i].start + o->syms[i].size)
            return o->syms[i].name;
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
            if (!name && !o->nsyms && info.dli_sname) {
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

/* The value of symbol `name` in the ELF file at `path` (any type, .symtab then
 * .dynsym), or 0. */
static uint64_t file_symbol(const char *path, const char *name)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return 0;
    }
    size_t size = (size_t)st.st_size;
    const uint8_t *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED)
        return 0;
    uint64_t found = 0;
    const Elf64_Ehdr *eh = (const void *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        goto out;
    const Elf64_Shdr *sh = (const void *)(f + eh->e_shoff);
    for (int pass = 0; pass < 2 && !found; pass++)
        for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
            const Elf64_Shdr *tab = &sh[i];
            if (tab->sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) ||
                tab->sh_link >= eh->e_shnum || tab->sh_entsize != sizeof(Elf64_Sym) ||
                tab->sh_offset + tab->sh_size > size)
                continue;
            const Elf64_Shdr *strs = &sh[tab->sh_link];
            if (strs->sh_offset + strs->sh_size > size)
                continue;
            const Elf64_Sym *syms = (const void *)(f + tab->sh_offset);
            const char *str = (const char *)f + strs->sh_offset;
            size_t n = tab->sh_size / sizeof(Elf64_Sym), nlen = strlen(name);
            for (size_t k = 0; k < n; k++)
                if (syms[k].st_value && syms[k].st_name + nlen < strs->sh_size &&
                    memcmp(str + syms[k].st_name, name, nlen + 1) == 0) {
                    found = syms[k].st_value;
                    break;
                }
        }
out:
    munmap((void *)f, size);
    return found;
}

uint64_t rp_symbols_find(const char *lib, const char *name)
{
    struct find_arg a = {lib, NULL, 0};
    if (!dl_iterate_phdr(find_object, &a) || !a.path)
        return 0;
    uint64_t v = file_symbol(a.path, name);
    return v ? a.base + v : 0;
}
