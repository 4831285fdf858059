/*
 * src/code/frametab.h — the frame table of one executable segment: how to find each
 * pc's caller, computed once from the object's .eh_frame, read by the signal
 * handler's walk (unwind.h) without DWARF decoding.
 *
 * The builder (rp_frametab_get) decodes the object's .eh_frame through its
 * .eh_frame_hdr search table, runs every FDE's CFI program to its end and writes
 * rows in address order, each (offset, 32-bit rule), merging neighbours with the
 * same rule, then indexes them by 256-byte page. What a rule cannot express — a
 * CFA expression other than the PLT form (signal trampolines), a return address
 * not at CFA - 8, a pc no FDE covers — is a row that ends the walk at that frame.
 * docs/engines.md has the table's layout, memory and build time.
 *
 * Lifetime. A table is immutable once built and never freed (a handler may be
 * reading it). Every table built is kept, so a segment that comes back (a
 * library unloaded and loaded again at the same place) reuses its table: the
 * tables grow only with the distinct (object, address) pairs ever loaded.
 *
 * Threads. rp_frametab_get: the code map's refresh only (codemap.c, under its
 * lock and inside dl_iterate_phdr); allocates. The rule format and
 * rp_frametab_rule: async-signal-safe, they read memory and compute.
 */
#ifndef RINGPROF_SRC_FRAMETAB_H
#define RINGPROF_SRC_FRAMETAB_H

#include <stdint.h>

/*
 * A rule: how to get from a frame to its caller, packed in 32 bits.
 *
 *   bits  0-1   the CFA: 0 none (the walk ends at this frame), 1 rsp + off,
 *               2 rbp + off, 3 a PLT stub: rsp + off + ((rip & 15) >= thr ? 8 : 0)
 *   bits  2-3   rbp in the caller: 0 unchanged, 1 saved at CFA + bpoff, 2 unknown (0)
 *   bits  4-11  bpoff / 8, signed (±1 KiB); for a PLT stub, thr
 *   bits 12-31  off / 8, signed (±4 MiB)
 *
 * The return address is always at CFA - 8: a row that puts it elsewhere, or that
 * needs more range than the fields have, is built as RP_RULE_STOP (and counted in
 * rp_unwind_stats.stop_fdes). So is a pc that no FDE covers, except in the short
 * holes between functions. A zero word is RP_RULE_STOP.
 */
enum { RP_CFA_NONE = 0, RP_CFA_RSP = 1, RP_CFA_RBP = 2, RP_CFA_PLT = 3 };
enum { RP_BP_SAME = 0, RP_BP_AT = 1, RP_BP_LOST = 2 };
#define RP_RULE_STOP 0u

static inline unsigned rp_rule_cfa(uint32_t w) { return w & 3; }
static inline unsigned rp_rule_bp(uint32_t w) { return (w >> 2) & 3; }
static inline int rp_rule_bpfield(uint32_t w) { return (int8_t)(uint8_t)(w >> 4); }
static inline int64_t rp_rule_cfa_off(uint32_t w)
{
    return (int64_t)((int32_t)w >> 12) * 8;
}

/*
 * The page index. A lookup in the handler runs on cold caches (a thread is
 * sampled every 10 ms of its CPU time, in between it works through megabytes), so
 * what it costs is the number of cache lines it must wait for, one after another.
 * The index has one 64-bit entry per 256 bytes of code:
 *
 *   bits  0-31  the rule in force at the page's first byte
 *   bits 32-39  where in the page the first row starting inside it starts (1-255),
 *               or 0 if none does
 *   bits 40-63  that row's index (the first row that starts after the page's
 *               first byte)
 *
 * A pc before the page's first row boundary (two thirds of libjvm's code bytes,
 * in JDK 17 and 25) has its rule in the entry: one cache line. Any other pc has
 * its row among those that start inside the page, found by a binary search of a
 * few rows (the next entry bounds them): two lines. The index costs 8 bytes per
 * 256 of code, about a third of what the rows take.
 */
#define RP_FRAMETAB_PAGE_SHIFT 8
#define RP_FRAMETAB_PAGE_BYTES (1u << RP_FRAMETAB_PAGE_SHIFT)

/* A row: where it starts, as an offset from the segment's start, and its rule,
 * which holds up to the next row's start. */
struct rp_frow {
    uint32_t off, rule;
};

/* One executable segment's rows. Immutable once built; never freed. */
struct rp_frametab {
    /* What the handler reads (through its copy in the code map's segment). */
    const uint64_t *page;     /* npages + 1 index entries                           */
    const struct rp_frow *row;/* nrows rows, ascending offsets                      */
    uint32_t nrows, npages;
    /* Off the hot path: what the table was built from, and what it cost. */
    struct rp_frametab *next; /* every table built, newest first                    */
    uint64_t start, end;      /* the segment [start, end)                           */
    uint64_t hdr, name_hash;  /* its .eh_frame_hdr, a hash of its object's name     */
    uint64_t fdes, stop_fdes, bytes, build_ns;
};

/* The rule for the pc at `off` (< the segment's size) in the table whose index
 * and rows are `page` (NULL: no table) and `row`. Async-signal-safe. */
static inline uint32_t rp_frametab_rule(const uint64_t *page, const struct rp_frow *row,
                                        uint64_t npages, uint64_t off)
{
    uint64_t p = off >> RP_FRAMETAB_PAGE_SHIFT;
    if (!page || p >= npages)
        return RP_RULE_STOP;
    uint64_t e = page[p];
    uint64_t inside = (e >> 32) & 0xff;
    if (inside == 0 || (off & (RP_FRAMETAB_PAGE_BYTES - 1)) < inside)
        return (uint32_t)e;
    /* The last row at or before `off`: one of those that start inside this page,
     * rows [lo, hi] (the next entry's row is the first that starts after it). */
    uint32_t lo = (uint32_t)(e >> 40), hi = (uint32_t)(page[p + 1] >> 40) - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (row[mid].off <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return row[lo].rule;
}

/*
 * rp_frametab_get: the table of segment [start, end) of the object called `name`,
 * whose .eh_frame_hdr is at `hdr` inside the PT_LOAD segment [lo, hi) (the only
 * memory the builder reads): the one built before for the same segment, header
 * and object, or one built now. @return the table (one with no rows if the
 * header is not the layout every linker writes), or NULL if memory ran out.
 * Called inside dl_iterate_phdr, whose lock keeps the object loaded while its
 * .eh_frame is read; calls are serialised by the caller (codemap.c).
 */
const struct rp_frametab *rp_frametab_get(uint64_t start, uint64_t end, const uint8_t *hdr,
                                          const uint8_t *lo, const uint8_t *hi,
                                          const char *name);

#endif
