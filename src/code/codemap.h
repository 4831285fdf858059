/*
 * src/code/codemap.h — the code map: the process's loaded objects and their
 * executable segments, the one view of native code that both the handler's
 * unwinder (unwind.h) and the flusher's symbol lookup (symbols.h) use.
 *
 * What an entry carries. A segment (one executable PT_LOAD [start, end)) carries
 * what the walk needs: a copy of its frame table's index and rows (frametab.h),
 * built when the segment is first seen. Its object (one per loaded file and load
 * address) carries what naming needs: the file's path, its basename, its load
 * bias, and its function symbols (elfsyms.h), read from the file the first time a
 * pc in it is named (rp_codemap_symbols) and kept for the life of the process.
 *
 * Where it comes from. rp_codemap_refresh lists the objects with dl_iterate_phdr
 * and, when the loader's adds/subs counters say the set changed, publishes a new
 * snapshot: an immutable array of segments sorted by address, behind an atomic
 * pointer (release store). A reader takes the current snapshot once (acquire
 * load) and may use it as long as it likes: snapshots, frame tables and objects
 * are never freed (a handler may still hold one; each retired snapshot stays
 * reachable from its successor, so leak checkers see it as kept, not lost). A
 * new snapshot is made only when objects are loaded or unloaded, so the memory
 * grows with the number of dlopen/dlclose events, and the tables and objects
 * with the distinct (object, address) pairs ever loaded.
 *
 * Threads and signal safety:
 *   - rp_codemap_current, rp_codemap_find: async-signal-safe (an atomic load, a
 *     binary search); the signal handler's walk uses them. A segment's `object`
 *     may be read there only for its immutable fields, and the handler has no
 *     need to.
 *   - rp_codemap_refresh: any thread but a signal handler (agent start, the
 *     flusher, the symbol lookup); allocates, takes the loader's lock and a
 *     mutex that serialises refreshes.
 *   - rp_codemap_object_at, rp_codemap_symbols: the flusher (one thread: the
 *     symbol side of an object is not locked); allocate and read files.
 */
#ifndef RINGPROF_SRC_CODEMAP_H
#define RINGPROF_SRC_CODEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "code/elfsyms.h"
#include "code/frametab.h"

/* A loaded object: one file mapped at one load address. Never freed. */
struct rp_code_object {
    /* Set before the object is published, then immutable. */
    uint64_t base;               /* load bias (link_map l_addr, dlpi_addr)       */
    const char *name;            /* the loader's name for it ("" for the program) */
    const char *path;            /* its file: the name, or the program's file
                                    (/proc/self/exe); not absolute for an object
                                    with no file (the vDSO)                      */
    const char *lib;             /* the file's basename, e.g. "libz.so.1"        */
    const char *unknown;         /* "[lib]": the name of a pc in no symbol        */
    int is_jvm;                  /* the object is libjvm.so                       */
    struct rp_code_object *next; /* every object ever seen, newest first         */
    /* The symbol side, the flusher's: rp_codemap_symbols fills it once. */
    int syms_loaded;
    struct rp_elfsyms syms;      /* sorted by start; n == 0 if the file had none */
};

/* One executable segment, with a copy of what the walk reads of its table. */
struct rp_code_segment {
    uint64_t start, end;          /* one executable PT_LOAD segment [start, end)  */
    const uint64_t *page;         /* its table's index, or NULL: no .eh_frame_hdr */
    const struct rp_frow *row;
    uint64_t npages;
    const struct rp_frametab *table;
    struct rp_code_object *object;  /* the handler reads none of it */
};

/* A snapshot: the segments of every loaded object, sorted by start. */
struct rp_codemap {
    size_t n;
    /* The snapshot this one replaced: never freed (a handler may still be
     * reading it), but kept reachable, so leak checkers (LSan in the JVM tests,
     * docs/sanitizers.md) see a retired snapshot, not a lost one. */
    struct rp_codemap *retired;
    struct rp_code_segment seg[];
};

/*
 * rp_codemap_refresh: publish a new snapshot if objects were loaded or unloaded
 * since the last call (dl_iterate_phdr's adds/subs counters), with the frame
 * tables of the segments that are new (libjvm's: about 1.5 MB, built in about
 * 10 ms; docs/engines.md has the figures; segments already known keep theirs).
 * It holds dl_iterate_phdr's lock while it builds, so no object is unloaded
 * under it. @return 1 if a new snapshot was published, 0 if nothing changed, -1
 * if memory ran out (the old snapshot stays).
 */
int rp_codemap_refresh(void);

/* The current snapshot, or NULL before the first refresh. Async-signal-safe. */
const struct rp_codemap *rp_codemap_current(void);

/* The segment of `m` (may be NULL) that holds `pc`, or NULL. Async-signal-safe. */
static inline const struct rp_code_segment *rp_codemap_find(const struct rp_codemap *m,
                                                            uint64_t pc)
{
    if (!m)
        return NULL;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->seg[mid].end <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n && m->seg[lo].start <= pc && pc < m->seg[lo].end)
        return &m->seg[lo];
    return NULL;
}

/* The object whose executable segment holds `pc` now (the map refreshed first,
 * so an object loaded or unloaded since the last refresh counts as it is now),
 * or NULL. The flusher. */
struct rp_code_object *rp_codemap_object_at(uint64_t pc);

/* The object's function symbols, read from its file and debug file the first
 * time (elfsyms.h), within what is left of the budget all objects share
 * (an object whose table would pass it keeps none). The flusher. */
const struct rp_elfsyms *rp_codemap_symbols(struct rp_code_object *o);

#endif
