/*
 * src/unwind.c — lock-free DWARF CFI stack walking for the signal handler.
 *
 * See unwind.h for why this exists and what it supports. The file has three parts:
 * the module array (built on the flusher, read by the handler), the decoding of
 * .eh_frame_hdr / CIE / FDE, and the CFI interpreter plus the step. Everything
 * from rp_unwind_is_native down is async-signal-safe: it reads memory and
 * computes, nothing else.
 */
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

/* ------------------------------------------------------------ module array -- */

struct module {
    uint64_t start, end;          /* one executable PT_LOAD segment [start, end)  */
    const uint8_t *hdr;           /* the object's .eh_frame_hdr, or NULL          */
    const int32_t *table;         /* its search table: fde_count (loc, fde) pairs  */
    uint32_t fde_count;
};

struct module_array {
    size_t n;
    /* The array this one replaced: never freed (a handler may still be reading
     * it), but kept reachable, so leak checkers (LSan in the JVM tests,
     * docs/sanitizers.md) see a retired array, not a lost one. */
    struct module_array *retired;
    struct module mod[];
};

static _Atomic(struct module_array *) g_modules;
static unsigned long long g_adds = ~0ull, g_subs = ~0ull;

/* DW_EH_PE_* pointer encodings. */
enum {
    PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03,
    PE_UDATA8 = 0x04, PE_SLEB = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b,
    PE_SDATA8 = 0x0c, PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80,
    PE_OMIT = 0xff
};

struct build {
    struct module *mod;
    size_t n, cap;
    int failed;
};

static int encoded_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case PE_ABSPTR: case PE_UDATA8: case PE_SDATA8: return 8;
    case PE_UDATA4: case PE_SDATA4: return 4;
    case PE_UDATA2: case PE_SDATA2: return 2;
    default: return -1;
    }
}

/* The search table of an .eh_frame_hdr, if it has the layout every linker writes
 * (version 1, table of datarel sdata4 pairs). */
static void parse_hdr(struct module *m, const uint8_t *hdr)
{
    m->hdr = NULL;
    m->table = NULL;
    m->fde_count = 0;
    if (!hdr || hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4))
        return;
    int ptr_size = encoded_size(hdr[1]), count_size = encoded_size(hdr[2]);
    if (ptr_size < 0 || count_size != 4 || (hdr[2] & 0x70) != 0)
        return;
    uint32_t count;
    memcpy(&count, hdr + 4 + ptr_size, 4);
    m->hdr = hdr;
    m->table = (const int32_t *)(const void *)(hdr + 4 + ptr_size + 4);
    m->fde_count = count;
}

static int add_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct build *b = arg;
    const uint8_t *hdr = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
            continue;
        if (b->n == b->cap) {
            size_t ncap = b->cap ? b->cap * 2 : 64;
            struct module *nm = realloc(b->mod, ncap * sizeof *nm);
            if (!nm) {
                b->failed = 1;
                return 1;
            }
            b->mod = nm;
            b->cap = ncap;
        }
        struct module *m = &b->mod[b->n++];
        m->start = info->dlpi_addr + ph->p_vaddr;
        m->end = m->start + ph->p_memsz;
        parse_hdr(m, hdr);
    }
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct module *x = a, *y = b;
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

int rp_unwind_refresh(void)
{
    unsigned long long v[2] = {0, 0};
    dl_iterate_phdr(count_changes, v);
    if (v[0] == g_adds && v[1] == g_subs && atomic_load(&g_modules))
        return 0;
    struct build b = {0};
    dl_iterate_phdr(add_segments, &b);
    if (b.failed) {
        free(b.mod);
        return -1;
    }
    qsort(b.mod, b.n, sizeof *b.mod, by_start);
    struct module_array *arr = malloc(sizeof *arr + b.n * sizeof(struct module));
    if (!arr) {
        free(b.mod);
        return -1;
    }
    arr->n = b.n;
    arr->retired = atomic_load_explicit(&g_modules, memory_order_relaxed);
    if (b.n)
        memcpy(arr->mod, b.mod, b.n * sizeof(struct module));
    free(b.mod);
    /* The previous array is never freed (arr->retired): a handler may be
     * reading it. */
    atomic_store_explicit(&g_modules, arr, memory_order_release);
    g_adds = v[0];
    g_subs = v[1];
    return 1;
}

static const struct module *find_module(uint64_t pc)
{
    const struct module_array *a = atomic_load_explicit(&g_modules, memory_order_acquire);
    if (!a)
        return NULL;
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->mod[mid].end <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < a->n && a->mod[lo].start <= pc && pc < a->mod[lo].end)
        return &a->mod[lo];
    return NULL;
}

int rp_unwind_is_native(uint64_t pc)
{
    return find_module(pc) != NULL;
}

/* ------------------------------------------------------------ DWARF decoding -- */

struct reader {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t rd_uleb(struct reader *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (r->p < r->end) {
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

static int64_t rd_sleb(struct reader *r)
{
    int64_t v = 0;
    unsigned shift = 0;
    while (r->p < r->end) {
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                v |= -((int64_t)1 << shift);
            return v;
        }
    }
    r->bad = 1;
    return 0;
}

static uint64_t rd_fixed(struct reader *r, int n)
{
    if (r->end - r->p < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, r->p, (size_t)n);   /* little-endian host */
    r->p += n;
    return v;
}

/* A pointer in encoding `enc` (pcrel and absolute only: what .eh_frame uses). */
static uint64_t rd_encoded(struct reader *r, uint8_t enc)
{
    if (enc == PE_OMIT)
        return 0;
    uint64_t field = (uint64_t)(uintptr_t)r->p, v;
    switch (enc & 0x0f) {
    case PE_ABSPTR: case PE_UDATA8: case PE_SDATA8: v = rd_fixed(r, 8); break;
    case PE_UDATA4: v = rd_fixed(r, 4); break;
    case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break;
    case PE_UDATA2: v = rd_fixed(r, 2); break;
    case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break;
    case PE_ULEB: v = rd_uleb(r); break;
    case PE_SLEB: v = (uint64_t)rd_sleb(r); break;
    default: r->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0: break;
    case PE_PCREL: v += field; break;
    default: r->bad = 1; return 0;
    }
    if (enc & PE_INDIRECT)
        v = *(const uint64_t *)(uintptr_t)v;
    return v;
}

/* Register numbers of the x86-64 DWARF mapping that the walk tracks. */
enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };

enum rule { RULE_SAME = 0, RULE_OFFSET, RULE_UNDEF, RULE_OTHER };

struct row {
    int cfa_reg;          /* DW_RSP or DW_RBP; anything else: cannot unwind     */
    int64_t cfa_off;
    int cfa_expr;         /* DW_CFA_def_cfa_expression: cannot unwind             */
    uint8_t bp_rule, ra_rule;
    int64_t bp_off, ra_off;
};

#define STATE_STACK 16

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int has_aug;
    const uint8_t *insns, *end;
};

/* Decode the CIE at `p` (its length field). @return 0, or -1. */
static int parse_cie(const uint8_t *p, struct cie *c)
{
    uint32_t len;
    memcpy(&len, p, 4);
    if (len == 0 || len == 0xffffffffu)
        return -1;
    struct reader r = {p + 4, p + 4 + len, 0};
    if (rd_fixed(&r, 4) != 0)           /* CIE id: 0 in .eh_frame */
        return -1;
    uint8_t version = (uint8_t)rd_fixed(&r, 1);
    if (version != 1 && version != 3)
        return -1;
    const char *aug = (const char *)r.p;
    while (r.p < r.end && *r.p)
        r.p++;
    if (r.p >= r.end)
        return -1;
    r.p++;
    c->code_align = rd_uleb(&r);
    c->data_align = rd_sleb(&r);
    c->ra_reg = version == 1 ? rd_fixed(&r, 1) : rd_uleb(&r);
    c->fde_enc = PE_ABSPTR;
    c->has_aug = aug[0] == 'z';
    if (c->has_aug) {
        uint64_t alen = rd_uleb(&r);
        /* A length past the end would wrap the pointer (and loop forever). */
        if (r.bad || r.p > r.end || alen > (uint64_t)(r.end - r.p))
            return -1;
        const uint8_t *aend = r.p + alen;
        int known = 1;
        for (const char *a = aug + 1; *a && known && !r.bad && r.p < aend; a++) {
            switch (*a) {
            case 'R': c->fde_enc = (uint8_t)rd_fixed(&r, 1); break;
            case 'L': rd_fixed(&r, 1); break;
            case 'P': { uint8_t e = (uint8_t)rd_fixed(&r, 1);
                        rd_encoded(&r, (uint8_t)(e & ~PE_INDIRECT)); break; }
            case 'S': case 'B': break;
            default: known = 0; break;    /* the rest is skipped by its length */
            }
        }
        r.p = aend;
    } else if (aug[0] != '\0') {
        return -1;      /* old "eh" augmentations: not emitted on x86-64 */
    }
    if (r.bad || r.p > r.end || c->ra_reg != DW_RA)
        return -1;
    c->insns = r.p;
    c->end = r.end;
    return 0;
}

/* ------------------------------------------------------------- interpreter -- */

struct interp {
    struct row row, init;
    struct row stack[STATE_STACK];
    int depth;
    const struct cie *cie;
    uint64_t loc, target;
};

static void set_rule(struct row *w, uint64_t reg, uint8_t rule, int64_t off)
{
    if (reg == DW_RBP) {
        w->bp_rule = rule;
        w->bp_off = off;
    } else if (reg == DW_RA) {
        w->ra_rule = rule;
        w->ra_off = off;
    }
}

static void restore_rule(struct interp *in, uint64_t reg)
{
    if (reg == DW_RBP) {
        in->row.bp_rule = in->init.bp_rule;
        in->row.bp_off = in->init.bp_off;
    } else if (reg == DW_RA) {
        in->row.ra_rule = in->init.ra_rule;
        in->row.ra_off = in->init.ra_off;
    }
}

/* Advance the location; @return 1 if the row for the target is complete. */
static int advance(struct interp *in, uint64_t delta)
{
    uint64_t next = in->loc + delta * in->cie->code_align;
    if (next > in->target)
        return 1;
    in->loc = next;
    return 0;
}

/* Run CFI instructions [p, end) until the row covering in->target is complete.
 * @return 0, or -1 for an instruction this walker does not know. */
static int run_cfi(struct interp *in, const uint8_t *p, const uint8_t *end, uint8_t enc)
{
    struct reader r = {p, end, 0};
    const struct cie *c = in->cie;
    while (r.p < r.end && !r.bad) {
        uint8_t op = *r.p++;
        uint8_t low = op & 0x3f;
        switch (op & 0xc0) {
        case 0x40:
            if (advance(in, low))
                return 0;
            continue;
        case 0x80:
            set_rule(&in->row, low, RULE_OFFSET, (int64_t)rd_uleb(&r) * c->data_align);
            continue;
        case 0xc0:
            restore_rule(in, low);
            continue;
        }
        uint64_t reg, off;
        switch (op) {
        case 0x00: break;                                       /* nop */
        case 0x01: {                                            /* set_loc */
            uint64_t loc = rd_encoded(&r, enc);
            if (loc > in->target)
                return 0;
            in->loc = loc;
            break;
        }
        case 0x02: if (advance(in, rd_fixed(&r, 1))) return 0; break;
        case 0x03: if (advance(in, rd_fixed(&r, 2))) return 0; break;
        case 0x04: if (advance(in, rd_fixed(&r, 4))) return 0; break;
        case 0x05:                                              /* offset_extended */
            reg = rd_uleb(&r);
            set_rule(&in->row, reg, RULE_OFFSET, (int64_t)rd_uleb(&r) * c->data_align);
            break;
        case 0x06: restore_rule(in, rd_uleb(&r)); break;       /* restore_extended */
        case 0x07: set_rule(&in->row, rd_uleb(&r), RULE_UNDEF, 0); break;
        case 0x08: set_rule(&in->row, rd_uleb(&r), RULE_SAME, 0); break;
        case 0x09:                                              /* register */
            reg = rd_uleb(&r);
            rd_uleb(&r);
            set_rule(&in->row, reg, RULE_OTHER, 0);
            break;
        case 0x0a:                                              /* remember_state */
            if (in->depth == STATE_STACK)
                return -1;
            in->stack[in->depth++] = in->row;
            break;
        case 0x0b:                                              /* restore_state */
            if (in->depth == 0)
                return -1;
            in->row = in->stack[--in->depth];
            break;
        case 0x0c:                                              /* def_cfa */
            in->row.cfa_reg = (int)rd_uleb(&r);
            in->row.cfa_off = (int64_t)rd_uleb(&r);
            in->row.cfa_expr = 0;
            break;
        case 0x0d: in->row.cfa_reg = (int)rd_uleb(&r); in->row.cfa_expr = 0; break;
        case 0x0e: in->row.cfa_off = (int64_t)rd_uleb(&r); break;
        case 0x0f:                                              /* def_cfa_expression */
            off = rd_uleb(&r);
            if (r.bad || r.p > r.end || off > (uint64_t)(r.end - r.p))
                return -1;
            r.p += off;
            in->row.cfa_expr = 1;
            break;
        case 0x10: case 0x16:                                   /* (val_)expression */
            reg = rd_uleb(&r);
            off = rd_uleb(&r);
            if (r.bad || r.p > r.end || off > (uint64_t)(r.end - r.p))
                return -1;
            r.p += off;
            set_rule(&in->row, reg, RULE_OTHER, 0);
            break;
        case 0x11:                                              /* offset_extended_sf */
            reg = rd_uleb(&r);
            set_rule(&in->row, reg, RULE_OFFSET, rd_sleb(&r) * c->data_align);
            break;
        case 0x12:                                              /* def_cfa_sf */
            in->row.cfa_reg = (int)rd_uleb(&r);
            in->row.cfa_off = rd_sleb(&r) * c->data_align;
            in->row.cfa_expr = 0;
            break;
        case 0x13: in->row.cfa_off = rd_sleb(&r) * c->data_align; break;
        case 0x14:                                              /* val_offset */
            reg = rd_uleb(&r);
            rd_uleb(&r);
            set_rule(&in->row, reg, RULE_OTHER, 0);
            break;
        case 0x15:                                              /* val_offset_sf */
            reg = rd_uleb(&r);
            rd_sleb(&r);
            set_rule(&in->row, reg, RULE_OTHER, 0);
            break;
        case 0x2e: rd_uleb(&r); break;                          /* GNU_args_size */
        case 0x2f:                                              /* GNU_negative_offset_ext */
            reg = rd_uleb(&r);
            set_rule(&in->row, reg, RULE_OFFSET, -(int64_t)rd_uleb(&r) * c->data_align);
            break;
        default:
            return -1;
        }
    }
    return r.bad ? -1 : 0;
}

/* The FDE covering `pc` in module `m`, via the binary search table. */
static const uint8_t *find_fde(const struct module *m, uint64_t pc)
{
    if (!m->table || m->fde_count == 0)
        return NULL;
    int64_t rel = (int64_t)(pc - (uint64_t)(uintptr_t)m->hdr);
    uint32_t lo = 0, hi = m->fde_count;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((int64_t)m->table[2 * mid] <= rel)
            lo = mid;
        else
            hi = mid;
    }
    if ((int64_t)m->table[2 * lo] > rel)
        return NULL;
    return m->hdr + m->table[2 * lo + 1];
}

/* The CFI row at `pc` (a pc inside the function: the interrupted pc, or a return
 * address minus one). @return 0, or -1 if there is none this walker can use. */
static int row_at(const struct module *m, uint64_t pc, struct row *out)
{
    const uint8_t *fde = find_fde(m, pc);
    if (!fde)
        return -1;
    uint32_t len;
    memcpy(&len, fde, 4);
    if (len == 0 || len == 0xffffffffu)
        return -1;
    int32_t cie_off;
    memcpy(&cie_off, fde + 4, 4);
    if (cie_off <= 0)
        return -1;
    struct cie c;
    if (parse_cie(fde + 4 - cie_off, &c) < 0)
        return -1;
    struct reader r = {fde + 8, fde + 4 + len, 0};
    uint64_t begin = rd_encoded(&r, c.fde_enc);
    uint64_t range = rd_encoded(&r, (uint8_t)(c.fde_enc & 0x0f));
    if (r.bad || pc < begin || pc >= begin + range)
        return -1;
    if (c.has_aug) {
        uint64_t alen = rd_uleb(&r);
        if (r.bad || r.p > r.end || alen > (uint64_t)(r.end - r.p))
            return -1;
        r.p += alen;
    }
    if (r.bad || r.p > r.end)
        return -1;
    struct interp in;
    memset(&in, 0, sizeof in);
    in.cie = &c;
    in.target = pc;
    in.loc = begin;
    in.row.cfa_reg = DW_RSP;
    in.row.cfa_off = 8;
    in.row.ra_rule = RULE_OFFSET;
    in.row.ra_off = -8;
    /* The CIE's initial instructions hold for the whole function. */
    uint64_t save_target = in.target;
    in.target = UINT64_MAX;
    if (run_cfi(&in, c.insns, c.end, c.fde_enc) < 0)
        return -1;
    in.target = save_target;
    in.loc = begin;
    in.init = in.row;
    in.depth = 0;
    if (run_cfi(&in, r.p, r.end, c.fde_enc) < 0)
        return -1;
    *out = in.row;
    return 0;
}

/* ------------------------------------------------------------------- walk -- */

#define MAX_FRAME_BYTES (16u << 20)

struct regs {
    uint64_t pc, sp, bp;
};

/* One step from the frame at `lookup_pc` (inside its function) to its caller.
 * @return 1 stepped, 0 the walk ends here (outermost frame or cannot unwind). */
static int step(const struct module *m, uint64_t lookup_pc, struct regs *rg)
{
    struct row w;
    if (row_at(m, lookup_pc, &w) < 0 || w.cfa_expr)
        return 0;
    uint64_t base;
    if (w.cfa_reg == DW_RSP)
        base = rg->sp;
    else if (w.cfa_reg == DW_RBP)
        base = rg->bp;
    else
        return 0;
    uint64_t cfa = base + (uint64_t)w.cfa_off;
    if (cfa <= rg->sp || cfa - rg->sp > MAX_FRAME_BYTES || (cfa & 7))
        return 0;
    if (w.ra_rule != RULE_OFFSET)
        return 0;                  /* RULE_UNDEF: the outermost frame (thread start) */
    uint64_t ra = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)w.ra_off);
    uint64_t bp = rg->bp;
    if (w.bp_rule == RULE_OFFSET)
        bp = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)w.bp_off);
    else if (w.bp_rule == RULE_OTHER)
        bp = 0;
    if (ra == 0)
        return 0;
    rg->pc = ra;
    rg->sp = cfa;
    rg->bp = bp;
    return 1;
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
    int n = 0;
    for (;;) {
        uint64_t lookup = rp_frame_lookup_pc(r);
        const struct module *m = find_module(lookup);
        if (!m) {
            *end = RP_UNWIND_NOT_NATIVE;
            return n;
        }
        if (n == max) {
            *end = RP_UNWIND_FULL;
            return n;
        }
        pcs[n++] = lookup;
        struct regs rg = {r->pc, r->sp, r->bp};
        if (!step(m, lookup, &rg)) {
            *end = RP_UNWIND_STOPPED;
            return n;
        }
        r->pc = rg.pc;
        r->sp = rg.sp;
        r->bp = rg.bp;
        r->is_return = 1;
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
