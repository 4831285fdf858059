/*
 * src/walk/unwind.c — lock-free stack walking for the signal handler, from the frame
 * tables (frametab.h) of the code map's segments (codemap.h).
 *
 * See unwind.h for why this exists and what it supports. Per frame the walk does
 * a binary search of the code map's segments (skipped when the frame is in its
 * callee's segment), one page-index entry, for a third of pcs a search of a few
 * rows, and the stack loads. Everything from rp_unwind_is_native down is
 * async-signal-safe: it reads memory and computes, nothing else.
 */
#include <stddef.h>
#include <string.h>

#include "code/codemap.h"
#include "code/frametab.h"
#include "walk/unwind.h"

/* ------------------------------------------------------------------ figures -- */

static void stats_add(struct rp_unwind_stats *s, const struct rp_frametab *t)
{
    s->rows += t->nrows;
    s->bytes += t->bytes;
    s->fdes += t->fdes;
    s->stop_fdes += t->stop_fdes;
    s->build_ns += t->build_ns;
}

void rp_unwind_stats(struct rp_unwind_stats *out)
{
    memset(out, 0, sizeof *out);
    const struct rp_codemap *a = rp_codemap_current();
    for (size_t i = 0; a && i < a->n; i++) {
        out->segments++;
        if (a->seg[i].table)
            stats_add(out, a->seg[i].table);
    }
}

int rp_unwind_stats_at(uint64_t pc, struct rp_unwind_stats *out)
{
    memset(out, 0, sizeof *out);
    const struct rp_code_segment *m = rp_codemap_find(rp_codemap_current(), pc);
    if (!m)
        return -1;
    out->segments = 1;
    if (m->table)
        stats_add(out, m->table);
    return 0;
}

int rp_unwind_is_native(uint64_t pc)
{
    return rp_codemap_find(rp_codemap_current(), pc) != NULL;
}

/* ------------------------------------------------------------------- walk -- */

#define MAX_FRAME_BYTES (16u << 20)
#define STACK_AHEAD 1024

/* One step from frame *r to its caller by `rule`. @return 1 stepped (*r is the
 * caller), 0 the walk ends here (*r unchanged). */
static int step(uint32_t rule, struct rp_frame_regs *r)
{
    int64_t off = rp_rule_cfa_off(rule);
    uint64_t cfa;
    switch (rp_rule_cfa(rule)) {
    case RP_CFA_RSP: cfa = r->sp + (uint64_t)off; break;
    case RP_CFA_RBP: cfa = r->bp + (uint64_t)off; break;
    case RP_CFA_PLT:
        cfa = r->sp + (uint64_t)off + ((int)(r->pc & 15) >= rp_rule_bpfield(rule) ? 8 : 0);
        break;
    default: return 0;
    }
    if (cfa <= r->sp || cfa - r->sp > MAX_FRAME_BYTES || (cfa & 7))
        return 0;
    uint64_t ra = *(const uint64_t *)(uintptr_t)(cfa - 8);
    uint64_t bp = r->bp;
    if (rp_rule_bp(rule) == RP_BP_AT)
        bp = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)
                                                  (rp_rule_bpfield(rule) * 8));
    else if (rp_rule_bp(rule) == RP_BP_LOST)
        bp = 0;
    if (ra == 0)
        return 0;
    return rp_frame_return_to(r, ra, cfa, bp);
}

void rp_frame_regs_from_uc(const ucontext_t *uc, struct rp_frame_regs *r)
{
    r->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    r->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    r->bp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
    r->is_return = 0;
}

int rp_unwind_native(struct rp_frame_regs *r, uint64_t *pcs, int max,
                     enum rp_unwind_end *end)
{
    /* One snapshot for the whole walk: a refresh meanwhile publishes a new one,
     * and this one stays valid (never freed). */
    const struct rp_codemap *a = rp_codemap_current();
    const struct rp_code_segment *m = NULL;
    int n = 0;
    /* The frames to come are above sp: ask for the first lines now, while the
     * lookups wait for theirs, and keep STACK_AHEAD bytes ahead of the walk. */
    for (uint64_t k = 0; k < STACK_AHEAD; k += 64)
        __builtin_prefetch((const void *)(uintptr_t)(r->sp + k));
    for (;;) {
        uint64_t lookup = rp_frame_lookup_pc(r);
        /* Callers are often in the caller's object: try it before searching. */
        if (!m || lookup < m->start || lookup >= m->end)
            m = rp_codemap_find(a, lookup);
        if (!m) {
            *end = RP_UNWIND_NOT_NATIVE;
            return n;
        }
        if (n == max) {
            *end = RP_UNWIND_FULL;
            return n;
        }
        pcs[n++] = lookup;
        uint32_t rule = rp_frametab_rule(m->page, m->row, m->npages, lookup - m->start);
        if (!step(rule, r)) {
            *end = RP_UNWIND_STOPPED;
            return n;
        }
        __builtin_prefetch((const void *)(uintptr_t)(r->sp + STACK_AHEAD));
    }
}

int rp_unwind_walk(const ucontext_t *uc, uint64_t *pcs, int max, int *truncated)
{
    struct rp_frame_regs r;
    enum rp_unwind_end end;
    rp_frame_regs_from_uc(uc, &r);
    int n = rp_unwind_native(&r, pcs, max, &end);
    *truncated = end == RP_UNWIND_FULL;
    return n;
}
