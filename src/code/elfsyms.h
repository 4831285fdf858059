/*
 * src/code/elfsyms.h — the function symbols of an ELF file and of its separate debug
 * file, read with bounded reads, for the code map (codemap.c).
 *
 * A shared library as distributions ship it is stripped: its .dynsym names the
 * exported functions only, and its static functions (glibc's start_thread, most
 * of a C library's internals) are named in a separate debug file, found by the
 * library's build id (/usr/lib/debug/.build-id/xx/yyyy.debug) or by its
 * .gnu_debuglink section (a file name and the CRC32 of that file). A debug file
 * made by `objcopy --only-keep-debug` keeps the section table but empties most
 * sections (SHT_NOBITS); its .symtab and .strtab are whole, and its symbol values
 * are the same link-time addresses as the library's.
 *
 * Which table: the file's own .symtab if it has one (an unstripped libjvm.so);
 * else the debug file's .symtab merged with the file's .dynsym; else the .dynsym.
 * Kept: the FUNC and IFUNC symbols with a size, sorted by address; where several
 * names share an address (clone3 and __GI___clone3) the best comes last (see
 * rp_elfsyms_load), so a backward search meets it first.
 *
 * Bounds. The file is read with pread, never mapped (a file truncated under a
 * mapping would fault the reader), and nothing is trusted: every offset and size
 * is checked against the file, a section table, symbol table or string table
 * over RP_ELFSYMS_TABLE_MAX is not read, a debug file is checksummed only up to
 * RP_ELFSYMS_CRC_MAX, and what is kept (symbols and their names, copied out of
 * the file) is at most the caller's budget. The read buffers are freed before
 * return; the kept names live until rp_elfsyms_free.
 *
 * Threads: any thread but a signal handler (it allocates and reads files). No
 * shared state: calls on different structures may run at once.
 */
#ifndef RINGPROF_SRC_ELFSYMS_H
#define RINGPROF_SRC_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

/* A symbol or string table larger than this is not read: 64 MiB is about 2.8
 * million symbols, twenty times the .symtab of libjvm.so (JDK 25: 1.6 MiB, 70 000
 * symbols, 3.2 MiB of names). */
#define RP_ELFSYMS_TABLE_MAX (64u << 20)

/* A debug file found through .gnu_debuglink without a build id to compare is
 * checked by the CRC32 of the whole file; one larger than this is not read (the
 * flusher would stall on it) and so not used. libc's is 4 MiB. */
#define RP_ELFSYMS_CRC_MAX (256u << 20)

/* Where distributions install debug files. */
#define RP_ELFSYMS_DEBUG_ROOT "/usr/lib/debug"

/* One function: [start, start + size) in link-time addresses (the run-time pc
 * minus the object's load bias). */
struct rp_elfsym {
    uint64_t start, size;
    const char *name;
};

/* Where the kept symbols came from. */
enum rp_elfsyms_source {
    RP_ELFSYMS_NONE = 0,      /* no usable table (or over the budget)            */
    RP_ELFSYMS_SYMTAB,        /* the file's own .symtab                          */
    RP_ELFSYMS_DEBUG_BUILD_ID,/* a debug file by build id, plus the .dynsym      */
    RP_ELFSYMS_DEBUG_LINK,    /* a debug file by .gnu_debuglink, plus the .dynsym */
    RP_ELFSYMS_DYNSYM         /* the .dynsym alone                               */
};

struct rp_elfsyms {
    struct rp_elfsym *syms;   /* sorted by start; NULL when n is 0               */
    size_t n;
    char *names;              /* the names, one allocation                       */
    size_t bytes;             /* memory kept: syms and names                     */
    enum rp_elfsyms_source source;
    int over_budget;          /* a table was found but kept nothing: too large   */
    char debug_path[4096];    /* the debug file used, "" if none                 */
};

/*
 * rp_elfsyms_load: the function symbols of the ELF file at `path` (an absolute
 * path) and of its separate debug file, looked for under `debug_root` (NULL:
 * RP_ELFSYMS_DEBUG_ROOT) by build id, then next to the file and under the root by
 * .gnu_debuglink. A debug file is used only if its build id equals the file's
 * or, when either has none, its CRC32 equals the debug link's.
 * `budget`: the most bytes the result may keep; a larger table keeps nothing
 * (out->over_budget). Never fails: a missing, unreadable or malformed file gives
 * n == 0 and source RP_ELFSYMS_NONE. Free with rp_elfsyms_free.
 */
void rp_elfsyms_load(const char *path, const char *debug_root, size_t budget,
                     struct rp_elfsyms *out);

void rp_elfsyms_free(struct rp_elfsyms *s);

/*
 * rp_elfsyms_value: the value (link-time address) of the symbol called `name`,
 * of any type, local ones included, in the file's .symtab, then its .dynsym,
 * then its debug file's .symtab (looked for as rp_elfsyms_load does, under
 * RP_ELFSYMS_DEBUG_ROOT); 0 if none has it. Allocates only while it runs.
 */
uint64_t rp_elfsyms_value(const char *path, const char *name);

/* The CRC32 that .gnu_debuglink uses (zlib's: reflected 0xedb88320, starting
 * from `crc`, 0 for a new one) of len bytes. For the tests. */
uint32_t rp_elfsyms_crc32(uint32_t crc, const void *buf, size_t len);

#endif
