/*
 * src/walk/unwind.h — native stack walking that is safe inside a signal handler.
 *
 * The handler needs the native frames of the thread it interrupted (libc, libz,
 * the JVM's C++) down to the first frame that is not native code (JIT code, the
 * interpreter, stubs), below which AsyncGetCallTrace takes over. It walks them with
 * the DWARF call-frame information (.eh_frame) that every x86-64 object carries.
 *
 * Why not libunwind in the handler. libunwind 1.6.2 (Debian 12) cannot be configured
 * to take no locks: UNW_CACHE_GLOBAL takes a pthread mutex on every step;
 * UNW_CACHE_PER_THREAD is silently mapped to GLOBAL because the library was built
 * without __thread support; UNW_CACHE_NONE calls dl_iterate_phdr (glibc's loader
 * lock) on every step. And in every mode a DW_CFA_remember_state instruction (more
 * than half of libjvm's FDEs use one) allocates its state from a mempool guarded
 * by a pthread mutex. Design invariant 1 forbids locks in the handler, and the test
 * shim (tests/agent) aborts on them. So the walk is done here (src/walk/unwind.c),
 * with libunwind kept as the oracle that tests/agent/test_unwind.c compares it to.
 * docs/engines.md has the details.
 *
 * How. Off the hot path (rp_codemap_refresh, on the flusher) the code map
 * (codemap.h) lists the loaded objects' executable segments, and each segment not
 * seen before gets a frame table (frametab.h): sorted rows of (offset, 32-bit
 * rule), each rule saying where the CFA is (rsp or rbp plus an offset, or the
 * x86-64 PLT stub form) and where the caller's rbp is. The handler looks a pc up
 * in the map's current snapshot (binary search), then in the segment's rows (a
 * page index and a short binary search), and computes the caller's rip/rsp/rbp
 * from the rule: no DWARF decoding at sampling time. What the table cannot
 * express ends the walk at that frame. No allocation, no locks, no syscalls in
 * the handler. docs/engines.md has the table's layout, memory and build time.
 *
 * Memory safety. The walk reads the interrupted thread's stack and the frame
 * tables, which are never freed (it does not read the objects' .eh_frame, so an
 * object unloaded meanwhile cannot fault it), through a code map snapshot, which
 * is never freed either. A corrupt stack can fault: callers run the walk under
 * the crash guard (cpu_async.c), which turns the fault into a lost sample.
 * Sanity checks (the stack must grow towards higher addresses, by less than
 * 16 MiB a frame) stop walks that go astray first.
 */
#ifndef RINGPROF_SRC_UNWIND_H
#define RINGPROF_SRC_UNWIND_H

#include <stdint.h>
#include <ucontext.h>

/* The frame tables' figures. */
struct rp_unwind_stats {
    uint64_t segments;   /* executable segments                                   */
    uint64_t fdes;       /* FDEs read into their tables                           */
    uint64_t stop_fdes;  /* of which some pc ends the walk for want of a rule the
                          * table can express (not counting the outermost frame) */
    uint64_t rows;       /* rows, after merging                                   */
    uint64_t bytes;      /* memory of the tables: rows, page indexes, headers     */
    uint64_t build_ns;   /* CPU time it took to build them (the building thread's) */
};

/* rp_unwind_stats: the figures of every segment in the code map's current
 * snapshot (codemap.h).
 * rp_unwind_stats_at: those of the one segment that holds `pc`; @return 0, or -1
 * if no loaded object's executable segment holds it (*out zeroed). Not
 * async-signal-safe (they are for the flusher, the tests and the bench). */
void rp_unwind_stats(struct rp_unwind_stats *out);
int rp_unwind_stats_at(uint64_t pc, struct rp_unwind_stats *out);

/* rp_unwind_is_native: is `pc` inside an executable segment of a loaded object?
 * Async-signal-safe. */
int rp_unwind_is_native(uint64_t pc);

/* The registers of one frame, as a walk sees them. `pc` is where the frame is
 * executing: the interrupted pc for the first frame of a signal (is_return 0), a
 * return address for every caller (is_return 1), whose call instruction is at
 * pc - 1 (rp_frame_lookup_pc). */
struct rp_frame_regs {
    uint64_t pc, sp, bp;
    int is_return;
};

static inline uint64_t rp_frame_lookup_pc(const struct rp_frame_regs *r)
{
    return r->is_return ? r->pc - 1 : r->pc;
}

/* One step up: the caller's frame, entered at return address `ra`. Returns 1.
 * Async-signal-safe. */
static inline int rp_frame_return_to(struct rp_frame_regs *r, uint64_t ra, uint64_t sp,
                                     uint64_t bp)
{
    r->pc = ra;
    r->sp = sp;
    r->bp = bp;
    r->is_return = 1;
    return 1;
}

/* The interrupted frame of a signal's context. Async-signal-safe. */
void rp_frame_regs_from_uc(const ucontext_t *uc, struct rp_frame_regs *r);

/* Why rp_unwind_native stopped. */
enum rp_unwind_end {
    RP_UNWIND_NOT_NATIVE = 0,   /* *r is the first frame whose pc is in no loaded
                                 * object (JIT code, the interpreter, a stub)      */
    RP_UNWIND_STOPPED,          /* the outermost frame, or one it cannot unwind    */
    RP_UNWIND_FULL              /* `max` frames taken and the next one is native   */
};

/*
 * rp_unwind_native: the native frames from *r, leaf first, into pcs[0..max), each
 * as its lookup pc (rp_frame_lookup_pc: the interrupted pc, or a return address
 * minus one, so it symbolises to the caller). Stops at the first pc that is not
 * native code (then *r holds that frame's registers, pc its exact return address,
 * ready for a Java walk), at a frame it cannot unwind, or at `max` frames.
 * @return the number of frames; *end says why it stopped. Async-signal-safe; may
 * fault on corrupt memory (run it under a guard).
 */
int rp_unwind_native(struct rp_frame_regs *r, uint64_t *pcs, int max,
                     enum rp_unwind_end *end);

/*
 * rp_unwind_walk: rp_unwind_native from the interrupted frame of `uc`.
 * *truncated is set if it stopped at `max` with a native frame next.
 */
int rp_unwind_walk(const ucontext_t *uc, uint64_t *pcs, int max, int *truncated);

#endif
