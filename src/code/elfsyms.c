/*
 * src/code/elfsyms.c — function symbols from an ELF file and its separate debug file
 * (see elfsyms.h).
 *
 * Everything is read with pread into buffers of checked size: the section table,
 * a symbol table and its string table, the notes (for the build id) and the
 * .gnu_debuglink section. The symbols to keep are collected from up to two
 * tables (a debug file's .symtab and the file's .dynsym), sorted, stripped of the
 * entries both tables have, and copied with their names into two allocations, so
 * that nothing points into a buffer or a file after the call.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "code/elfsyms.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "elfsyms.c reads little-endian ELF files only"
#endif

/* Notes and the debug link are small; a larger section is not what it claims. */
#define NOTE_MAX       (64u << 10)
#define DEBUGLINK_MAX  4096u
#define SHSTRTAB_MAX   (1u << 20)
/* Aliases compared when two tables are merged: names at one address are few
 * (glibc has up to 5); past this many, a duplicate is kept, which is harmless. */
#define ALIAS_WINDOW   16

/* --------------------------------------------------------------- reading -- */

struct elf_file {
    int fd;
    uint64_t size;
    dev_t dev;
    ino_t ino;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;             /* the section table, eh.e_shnum entries        */
};

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

static int in_file(const struct elf_file *e, uint64_t off, uint64_t len)
{
    return off <= e->size && len <= e->size - off;
}

static void elf_close(struct elf_file *e)
{
    if (e->fd >= 0)
        close(e->fd);
    free(e->sh);
    e->fd = -1;
    e->sh = NULL;
}

/* Open `path` as a little-endian 64-bit ELF file with a section table and read
 * the table. @return 0, or -1 (nothing to close). */
static int elf_open(struct elf_file *e, const char *path)
{
    memset(e, 0, sizeof *e);
    e->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (e->fd < 0)
        return -1;
    struct stat st;
    const Elf64_Ehdr *h = &e->eh;
    if (fstat(e->fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size < (off_t)sizeof(Elf64_Ehdr))
        goto fail;
    e->size = (uint64_t)st.st_size;
    e->dev = st.st_dev;
    e->ino = st.st_ino;
    if (read_at(e->fd, &e->eh, sizeof e->eh, 0) != 0 ||
        memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_ident[EI_DATA] != ELFDATA2LSB || h->e_shentsize != sizeof(Elf64_Shdr) ||
        h->e_shnum == 0 || h->e_shoff == 0 ||
        !in_file(e, h->e_shoff, (uint64_t)h->e_shnum * sizeof(Elf64_Shdr)))
        goto fail;
    /* e_shnum is 16 bits: the table is at most 4 MiB. */
    e->sh = malloc((size_t)h->e_shnum * sizeof(Elf64_Shdr));
    if (!e->sh || read_at(e->fd, e->sh, (size_t)h->e_shnum * sizeof(Elf64_Shdr),
                          h->e_shoff) != 0)
        goto fail;
    return 0;
fail:
    elf_close(e);
    return -1;
}

/* The contents of section `s` (malloc'd), or NULL: it has none in the file
 * (SHT_NOBITS, as most of a debug file's sections), is compressed, is empty or
 * over `max` bytes, or lies outside the file. */
static void *elf_section(const struct elf_file *e, const Elf64_Shdr *s, uint64_t max)
{
    if (s->sh_type == SHT_NOBITS || (s->sh_flags & SHF_COMPRESSED) || s->sh_size == 0 ||
        s->sh_size > max || !in_file(e, s->sh_offset, s->sh_size))
        return NULL;
    void *buf = malloc((size_t)s->sh_size);
    if (buf && read_at(e->fd, buf, (size_t)s->sh_size, s->sh_offset) != 0) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

/* The section called `name`, or NULL. */
static const Elf64_Shdr *elf_section_named(const struct elf_file *e, const char *name)
{
    if (e->eh.e_shstrndx == SHN_UNDEF || e->eh.e_shstrndx >= e->eh.e_shnum)
        return NULL;
    const Elf64_Shdr *strs = &e->sh[e->eh.e_shstrndx];
    char *names = elf_section(e, strs, SHSTRTAB_MAX);
    if (!names)
        return NULL;
    names[strs->sh_size - 1] = '\0';
    const Elf64_Shdr *found = NULL;
    for (unsigned i = 0; i < e->eh.e_shnum && !found; i++)
        if (e->sh[i].sh_name < strs->sh_size && !strcmp(names + e->sh[i].sh_name, name))
            found = &e->sh[i];
    free(names);
    return found;
}

/* The file's GNU build id (NT_GNU_BUILD_ID in a SHT_NOTE section) into id[64].
 * @return its length, 0 if it has none. */
static size_t elf_build_id(const struct elf_file *e, uint8_t id[64])
{
    for (unsigned i = 0; i < e->eh.e_shnum; i++) {
        const Elf64_Shdr *s = &e->sh[i];
        if (s->sh_type != SHT_NOTE)
            continue;
        uint8_t *buf = elf_section(e, s, NOTE_MAX);
        if (!buf)
            continue;
        uint64_t align = s->sh_addralign == 8 ? 8 : 4, off = 0, size = s->sh_size;
        size_t found = 0;
        while (!found && off + 12 <= size) {
            Elf64_Nhdr nh;
            memcpy(&nh, buf + off, sizeof nh);
            uint64_t name = off + 12;
            uint64_t desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
            uint64_t next = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
            if (desc > size || nh.n_descsz > size - desc)
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                !memcmp(buf + name, "GNU", 4) && nh.n_descsz > 0 && nh.n_descsz <= 64) {
                memcpy(id, buf + desc, nh.n_descsz);
                found = nh.n_descsz;
            }
            off = next;
        }
        free(buf);
        if (found)
            return found;
    }
    return 0;
}

/* The .gnu_debuglink section: a file name (no '/': it names a file in a known
 * directory), NUL, padding to 4 bytes, the CRC32 of that file. @return 0 or -1. */
static int elf_debuglink(const struct elf_file *e, char *name, size_t cap, uint32_t *crc)
{
    const Elf64_Shdr *s = elf_section_named(e, ".gnu_debuglink");
    char *buf = s ? elf_section(e, s, DEBUGLINK_MAX) : NULL;
    if (!buf)
        return -1;
    size_t len = strnlen(buf, (size_t)s->sh_size), at = (len + 4) & ~(size_t)3;
    int ok = len > 0 && len < cap && at + 4 <= s->sh_size && !memchr(buf, '/', len);
    if (ok) {
        memcpy(name, buf, len + 1);
        memcpy(crc, buf + at, 4);
    }
    free(buf);
    return ok ? 0 : -1;
}

/* ----------------------------------------------------------------- CRC32 -- */

static void crc_table(uint32_t table[256])
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
}

static uint32_t crc_update(const uint32_t table[256], uint32_t crc, const uint8_t *p,
                           size_t len)
{
    crc = ~crc;
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t rp_elfsyms_crc32(uint32_t crc, const void *buf, size_t len)
{
    uint32_t table[256];
    crc_table(table);
    return crc_update(table, crc, buf, len);
}

/* The CRC32 of the whole file into *crc. @return 0, or -1 (too large, or a read
 * failed). */
static int file_crc(const struct elf_file *e, uint32_t *crc)
{
    if (e->size > RP_ELFSYMS_CRC_MAX)
        return -1;
    uint32_t table[256];
    crc_table(table);
    enum { BLOCK = 64 << 10 };
    uint8_t *buf = malloc(BLOCK);
    if (!buf)
        return -1;
    uint32_t c = 0;
    int rc = 0;
    for (uint64_t off = 0; off < e->size && rc == 0; off += BLOCK) {
        size_t n = e->size - off < BLOCK ? (size_t)(e->size - off) : BLOCK;
        rc = read_at(e->fd, buf, n, off);
        c = crc_update(table, c, buf, n);
    }
    free(buf);
    *crc = c;
    return rc;
}

/* ------------------------------------------------------ the debug file -- */

/* Does `cand` (open) belong to `f`? Not the file itself, the same machine, and
 * the same build id when both have one; else the CRC32 the debug link names;
 * else (reached through a build-id path) yes. */
static int debug_matches(const struct elf_file *f, const uint8_t *id, size_t idlen,
                         const struct elf_file *cand, const uint32_t *crc)
{
    if ((cand->dev == f->dev && cand->ino == f->ino) ||
        cand->eh.e_machine != f->eh.e_machine)
        return 0;
    uint8_t cid[64];
    size_t clen = elf_build_id(cand, cid);
    if (idlen && clen)
        return idlen == clen && !memcmp(id, cid, idlen);
    if (crc) {
        uint32_t c;
        return file_crc(cand, &c) == 0 && c == *crc;
    }
    return 1;
}

static int debug_try(const struct elf_file *f, const uint8_t *id, size_t idlen,
                     const char *path, const uint32_t *crc, struct elf_file *d)
{
    if (elf_open(d, path) != 0)
        return 0;
    if (debug_matches(f, id, idlen, d, crc))
        return 1;
    elf_close(d);
    return 0;
}

/* Open the debug file of `f` (found at `path`) into *d: by build id under
 * `root`, then by debug link in ROOT/DIR, DIR/.debug and DIR, where DIR is the
 * file's directory as named and as resolved (merged /usr: /lib is /usr/lib).
 * @return how it was found, RP_ELFSYMS_NONE if it was not. */
static enum rp_elfsyms_source debug_open(const struct elf_file *f, const char *path,
                                         const char *root, struct elf_file *d,
                                         char *found, size_t cap)
{
    uint8_t id[64];
    size_t idlen = elf_build_id(f, id);
    if (idlen >= 2) {
        char hex[2 * 64 + 1];
        for (size_t i = 0; i < idlen; i++)
            snprintf(hex + 2 * i, 3, "%02x", id[i]);
        int n = snprintf(found, cap, "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
        if (n > 0 && (size_t)n < cap && debug_try(f, id, idlen, found, NULL, d))
            return RP_ELFSYMS_DEBUG_BUILD_ID;
    }
    char name[256], real[PATH_MAX];
    uint32_t crc;
    if (elf_debuglink(f, name, sizeof name, &crc) != 0)
        return RP_ELFSYMS_NONE;
    const char *dirs[2] = {path, realpath(path, real) ? real : NULL};
    int dlen[2] = {0, 0};
    for (int k = 0; k < 2 && dirs[k]; k++) {
        const char *slash = strrchr(dirs[k], '/');
        dlen[k] = slash ? (int)(slash - dirs[k]) : 0;
        if (k == 1 && dlen[1] == dlen[0] && !strncmp(dirs[0], dirs[1], (size_t)dlen[0]))
            break;                              /* the same directory */
        const char *const fmts[3] = {"%s%.*s/%s", "%s%.*s/.debug/%s", "%s%.*s/%s"};
        for (int i = 0; i < 3; i++) {
            int n = snprintf(found, cap, fmts[i], i == 0 ? root : "", dlen[k], dirs[k],
                             name);
            if (n > 0 && (size_t)n < cap && debug_try(f, id, idlen, found, &crc, d))
                return RP_ELFSYMS_DEBUG_LINK;
        }
    }
    return RP_ELFSYMS_NONE;
}

/* ------------------------------------------------------- symbol tables -- */

struct table {
    Elf64_Sym *syms;
    size_t n;
    char *strs;                 /* NUL-terminated at strsize - 1                */
    size_t strsize;
};

static void table_free(struct table *t)
{
    free(t->syms);
    free(t->strs);
    memset(t, 0, sizeof *t);
}

/* The first section of `type` (SHT_SYMTAB, SHT_DYNSYM) and its string table.
 * @return 0, or -1 (none, malformed, or too large). */
static int table_read(const struct elf_file *e, uint32_t type, struct table *t)
{
    memset(t, 0, sizeof *t);
    for (unsigned i = 0; i < e->eh.e_shnum; i++) {
        const Elf64_Shdr *s = &e->sh[i];
        if (s->sh_type != type)
            continue;
        if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link == 0 ||
            s->sh_link >= e->eh.e_shnum || e->sh[s->sh_link].sh_type != SHT_STRTAB)
            return -1;
        t->syms = elf_section(e, s, RP_ELFSYMS_TABLE_MAX);
        t->strs = elf_section(e, &e->sh[s->sh_link], RP_ELFSYMS_TABLE_MAX);
        if (!t->syms || !t->strs) {
            table_free(t);
            return -1;
        }
        t->n = (size_t)(s->sh_size / sizeof(Elf64_Sym));
        t->strsize = (size_t)e->sh[s->sh_link].sh_size;
        t->strs[t->strsize - 1] = '\0';        /* every name ends in the table */
        return 0;
    }
    return -1;
}

static int is_function(const Elf64_Sym *s, size_t strsize)
{
    unsigned type = ELF64_ST_TYPE(s->st_info);
    return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_value != 0 &&
           s->st_size != 0 && s->st_shndx != SHN_UNDEF && s->st_name != 0 &&
           s->st_name < strsize;
}

struct cand {
    uint64_t start, size;
    const char *name;
    unsigned rank;              /* lower is better among aliases                 */
};

/* Among names at one address, prefer what a reader knows: global over weak over
 * local (memcpy, not __memcpy_chk_internal), then fewer leading underscores
 * (clone3, not __GI___clone3), then alphabetical order: deterministic. */
static unsigned alias_rank(const Elf64_Sym *s, const char *name)
{
    unsigned bind = ELF64_ST_BIND(s->st_info);
    unsigned b = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2, u = 0;
    while (name[u] == '_' && u < 255)
        u++;
    return b << 8 | u;
}

/* By start; at one start the worst alias first, so a search that walks back from
 * the end of a run meets the best one first. */
static int cand_order(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank > y->rank ? -1 : 1;
    return -strcmp(x->name, y->name);
}

/* Keep the functions of the tables in out, within `budget` bytes. */
static void collect(const struct table *t, int nt, size_t budget, struct rp_elfsyms *out)
{
    size_t n = 0;
    for (int k = 0; k < nt; k++)
        for (size_t i = 0; i < t[k].n; i++)
            n += is_function(&t[k].syms[i], t[k].strsize);
    if (n == 0)
        return;
    if (n > budget / sizeof(struct rp_elfsym)) {
        out->over_budget = 1;
        return;
    }
    struct cand *c = malloc(n * sizeof *c);
    if (!c)
        return;
    size_t m = 0;
    for (int k = 0; k < nt; k++)
        for (size_t i = 0; i < t[k].n; i++) {
            const Elf64_Sym *s = &t[k].syms[i];
            if (!is_function(s, t[k].strsize))
                continue;
            const char *name = t[k].strs + s->st_name;
            c[m++] = (struct cand){s->st_value, s->st_size, name, alias_rank(s, name)};
        }
    qsort(c, m, sizeof *c, cand_order);
    /* Drop what both tables have (the same name at the same address). */
    size_t kept = 0, run = 0, bytes = 0;
    for (size_t i = 0; i < m; i++) {
        if (kept && c[kept - 1].start != c[i].start)
            run = kept;
        int dup = 0;
        for (size_t j = kept; j > run && kept - j < ALIAS_WINDOW && !dup; j--)
            dup = !strcmp(c[j - 1].name, c[i].name);
        if (dup)
            continue;
        bytes += strlen(c[i].name) + 1;
        c[kept++] = c[i];
    }
    if (bytes > budget - kept * sizeof(struct rp_elfsym)) {
        out->over_budget = 1;
        free(c);
        return;
    }
    out->syms = malloc(kept * sizeof *out->syms);
    out->names = malloc(bytes);
    if (!out->syms || !out->names) {
        free(out->syms);
        free(out->names);
        out->syms = NULL;
        out->names = NULL;
        free(c);
        return;
    }
    char *p = out->names;
    for (size_t i = 0; i < kept; i++) {
        size_t len = strlen(c[i].name) + 1;
        memcpy(p, c[i].name, len);
        out->syms[i] = (struct rp_elfsym){c[i].start, c[i].size, p};
        p += len;
    }
    out->n = kept;
    out->bytes = kept * sizeof(struct rp_elfsym) + bytes;
    free(c);
}

void rp_elfsyms_load(const char *path, const char *debug_root, size_t budget,
                     struct rp_elfsyms *out)
{
    memset(out, 0, sizeof *out);
    struct elf_file f, d;
    if (elf_open(&f, path) != 0)
        return;
    struct table t[2];
    int nt = 0;
    enum rp_elfsyms_source source = RP_ELFSYMS_NONE;
    if (table_read(&f, SHT_SYMTAB, &t[0]) == 0) {
        nt = 1;
        source = RP_ELFSYMS_SYMTAB;
    } else {
        enum rp_elfsyms_source how = debug_open(&f, path,
                                                debug_root ? debug_root : RP_ELFSYMS_DEBUG_ROOT,
                                                &d, out->debug_path, sizeof out->debug_path);
        if (how != RP_ELFSYMS_NONE) {
            if (table_read(&d, SHT_SYMTAB, &t[nt]) == 0) {
                nt++;
                source = how;
            }
            elf_close(&d);
        }
        if (source == RP_ELFSYMS_NONE)
            out->debug_path[0] = '\0';
        if (table_read(&f, SHT_DYNSYM, &t[nt]) == 0) {
            nt++;
            if (source == RP_ELFSYMS_NONE)
                source = RP_ELFSYMS_DYNSYM;
        }
    }
    elf_close(&f);
    collect(t, nt, budget, out);
    if (out->n)
        out->source = source;
    for (int k = 0; k < nt; k++)
        table_free(&t[k]);
}

void rp_elfsyms_free(struct rp_elfsyms *s)
{
    free(s->syms);
    free(s->names);
    s->syms = NULL;
    s->names = NULL;
    s->n = s->bytes = 0;
}

/* ------------------------------------------------------ symbol by name -- */

static uint64_t table_value(const struct elf_file *e, uint32_t type, const char *name)
{
    struct table t;
    uint64_t v = 0;
    if (table_read(e, type, &t) != 0)
        return 0;
    for (size_t i = 0; i < t.n && !v; i++)
        if (t.syms[i].st_value && t.syms[i].st_name < t.strsize &&
            !strcmp(t.strs + t.syms[i].st_name, name))
            v = t.syms[i].st_value;
    table_free(&t);
    return v;
}

uint64_t rp_elfsyms_value(const char *path, const char *name)
{
    struct elf_file f, d;
    if (elf_open(&f, path) != 0)
        return 0;
    uint64_t v = table_value(&f, SHT_SYMTAB, name);
    if (!v)
        v = table_value(&f, SHT_DYNSYM, name);
    char found[PATH_MAX];
    if (!v && debug_open(&f, path, RP_ELFSYMS_DEBUG_ROOT, &d, found, sizeof found) !=
                  RP_ELFSYMS_NONE) {
        v = table_value(&d, SHT_SYMTAB, name);
        elf_close(&d);
    }
    elf_close(&f);
    return v;
}
