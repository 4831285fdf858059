/*
 * src/code/frametab.c — frame tables from .eh_frame (frametab.h), built off the hot
 * path.
 *
 * Three parts. The DWARF decoding: pointer encodings, CIEs, the CFI interpreter,
 * run over each whole FDE. The builder: the rows of every FDE the segment's
 * .eh_frame_hdr lists, in address order, merged, holes filled, then indexed by
 * page. The cache: every table ever built, found again by segment, header and
 * object.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include "ringprof/clock.h"
#include "code/frametab.h"

/* ------------------------------------------------------------------- rules -- */

/* The fields' ranges (frametab.h). */
#define BPOFF_MAX 127
#define CFAOFF_MAX ((1 << 19) - 1)

static uint32_t rule_pack(unsigned cfa, unsigned bp, int bpfield, int cfa_off8)
{
    return cfa | bp << 2 | ((uint32_t)bpfield & 0xffu) << 4 |
           ((uint32_t)cfa_off8 & 0xfffffu) << 12;
}

/* The rule at a function's first instruction: the CFA is rsp + 8 (the return
 * address on top of the stack), rbp untouched. */
#define RULE_ENTRY (RP_CFA_RSP | 1u << 12)

/* While the table is built: where an FDE ends (a hole, until the next FDE's
 * rows replace it). Not a rule rule_pack makes; rows_fill_holes turns it into one. */
#define RULE_HOLE (1u << 2)

/* ------------------------------------------------------------------ tables -- */

/* More rows than the page index can point to: such a table keeps none. */
#define MAX_ROWS (1u << 24)

/* Every table ever built, so that a segment that comes back (the array is rebuilt
 * at every dlopen and dlclose; a library unloaded and loaded again at the same
 * place) reuses its table, and so that leak checkers see them as reachable.
 * Guarded by the caller's lock (codemap.c). */
static struct rp_frametab *g_tables;

/* ------------------------------------------------------------ DWARF decoding -- */

/* DW_EH_PE_* pointer encodings. */
enum {
    PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03,
    PE_UDATA8 = 0x04, PE_SLEB = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b,
    PE_SDATA8 = 0x0c, PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80,
    PE_OMIT = 0xff
};

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

static int encoded_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case PE_ABSPTR: case PE_UDATA8: case PE_SDATA8: return 8;
    case PE_UDATA4: case PE_SDATA4: return 4;
    case PE_UDATA2: case PE_SDATA2: return 2;
    default: return -1;
    }
}

/* A pointer in encoding `enc`: absolute or pcrel, what .eh_frame uses. Indirect
 * pointers are refused: following one would read memory the bounds checks of the
 * builder do not cover. */
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
        r->bad = 1;
    return v;
}

/* Register numbers of the x86-64 DWARF mapping that the walk tracks. */
enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };

enum rule { RULE_SAME = 0, RULE_OFFSET, RULE_UNDEF, RULE_OTHER };
enum { EXPR_NONE = 0, EXPR_OTHER, EXPR_PLT };

/* One row of the CFI table, as the DWARF program defines it. */
struct row {
    int cfa_reg;          /* DW_RSP or DW_RBP; anything else: cannot unwind     */
    int cfa_expr;         /* EXPR_*: a DW_CFA_def_cfa_expression, known or not  */
    int64_t cfa_off;
    int plt_thr;          /* EXPR_PLT: the (rip & 15) threshold                 */
    uint8_t bp_rule, ra_rule;
    int64_t bp_off, ra_off;
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int has_aug;
    const uint8_t *insns, *end;
};

/* The memory the builder may read: the PT_LOAD segment that holds the object's
 * .eh_frame_hdr (and, as every linker lays them out, its .eh_frame). */
struct bounds {
    const uint8_t *lo, *hi;
};

/* A record (CIE or FDE) at `p` that lies inside `b`: @return its length, or 0. */
static uint32_t record_len(const struct bounds *b, const uint8_t *p)
{
    if (p < b->lo || b->hi - p < 8)
        return 0;
    uint32_t len;
    memcpy(&len, p, 4);
    if (len < 4 || len == 0xffffffffu || (uint64_t)(b->hi - p - 4) < len)
        return 0;
    return len;
}

/* Decode the CIE at `p` (its length field). @return 0, or -1. */
static int parse_cie(const struct bounds *b, const uint8_t *p, struct cie *c)
{
    uint32_t len = record_len(b, p);
    if (!len)
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
    if (r.bad || r.p > r.end || c->ra_reg != DW_RA || (c->fde_enc & PE_INDIRECT))
        return -1;
    c->insns = r.p;
    c->end = r.end;
    return 0;
}

/* -------------------------------------------------------------- the builder -- */

/* Rows under construction, in address order. */
struct rows {
    struct rp_frow *row;
    size_t n, cap;
    int failed;                 /* out of memory */
};

/* Make `rule` hold from `off` on: rows at or after `off` are replaced (a later FDE
 * starting inside an earlier one wins from its start, as a search for the last
 * FDE at or before a pc would find it), and a rule equal to the one in force
 * merges into it. */
static void rows_put(struct rows *t, uint32_t off, uint32_t rule)
{
    while (t->n && t->row[t->n - 1].off >= off)
        t->n--;
    if (t->n ? t->row[t->n - 1].rule == rule : rule == RP_RULE_STOP || rule == RULE_HOLE)
        return;
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 1024;
        struct rp_frow *nr = realloc(t->row, ncap * sizeof *nr);
        if (!nr) {
            t->failed = 1;
            return;
        }
        t->row = nr;
        t->cap = ncap;
    }
    t->row[t->n++] = (struct rp_frow){off, rule};
}

/* Linkers align functions to 16 bytes and fill the holes with nops that no FDE
 * covers. A pc there is never executed, so the rule does not matter, but a hole's
 * RP_RULE_STOP row costs two rows and splits a page. A hole shorter than 16 bytes
 * that ends where a function starts takes that function's entry rule instead (for
 * a pc in a hole that does hold code, a CFI-less stub that small, it is the likely
 * rule anyway), and merges with its neighbours; any other hole is RP_RULE_STOP. */
static void rows_fill_holes(struct rows *t)
{
    size_t n = 0;
    for (size_t k = 0; k < t->n; k++) {
        struct rp_frow w = t->row[k];
        if (w.rule == RULE_HOLE)
            w.rule = k + 1 < t->n && t->row[k + 1].off - w.off < 16 &&
                     t->row[k + 1].rule == RULE_ENTRY ? RULE_ENTRY : RP_RULE_STOP;
        if (n > 0 ? t->row[n - 1].rule == w.rule : w.rule == RP_RULE_STOP)
            continue;
        t->row[n++] = w;
    }
    t->n = n;
}

/* The rule of a CFI row. *unsupported is set if the walker cannot express a row
 * that a full DWARF unwinder could follow (an undefined return address is not
 * that: it marks the outermost frame). */
static uint32_t row_rule(const struct row *w, int *unsupported)
{
    if (w->ra_rule == RULE_UNDEF)
        return RP_RULE_STOP;
    *unsupported = 1;
    if (w->ra_rule != RULE_OFFSET || w->ra_off != -8)
        return RP_RULE_STOP;
    unsigned cfa, bp = RP_BP_SAME;
    int field = 0;
    if (w->cfa_expr == EXPR_PLT) {
        if (w->bp_rule == RULE_OFFSET || w->bp_rule == RULE_OTHER)
            return RP_RULE_STOP;
        cfa = RP_CFA_PLT;
        field = w->plt_thr;
    } else if (w->cfa_expr != EXPR_NONE) {
        return RP_RULE_STOP;
    } else if (w->cfa_reg == DW_RSP || w->cfa_reg == DW_RBP) {
        cfa = w->cfa_reg == DW_RSP ? RP_CFA_RSP : RP_CFA_RBP;
        if (w->bp_rule == RULE_OFFSET) {
            if (w->bp_off % 8 || w->bp_off / 8 > BPOFF_MAX || w->bp_off / 8 < -BPOFF_MAX)
                return RP_RULE_STOP;
            bp = RP_BP_AT;
            field = (int)(w->bp_off / 8);
        } else if (w->bp_rule == RULE_OTHER) {
            bp = RP_BP_LOST;
        }
    } else {
        return RP_RULE_STOP;
    }
    if (w->cfa_off % 8 || w->cfa_off / 8 > CFAOFF_MAX || w->cfa_off / 8 < -CFAOFF_MAX)
        return RP_RULE_STOP;
    *unsupported = 0;
    return rule_pack(cfa, bp, field, (int)(w->cfa_off / 8));
}

#define STATE_STACK 64

/* The CFI interpreter, run over a whole FDE. */
struct interp {
    struct row row, init;
    struct row stack[STATE_STACK];
    int depth;
    const struct cie *cie;
    uint64_t loc, end;        /* the current row's address; the FDE's end          */
    uint64_t seg_start, seg_end;
    struct rows *out;         /* NULL while the CIE's initial instructions run      */
    int unsupported;          /* some row of this FDE cannot be expressed           */
};

/* Everything but the state stack, which is written before it is read (the stack
 * is 3 KiB: clearing it for each of libjvm's 44 000 FDEs took most of the build). */
static void interp_init(struct interp *in, const struct cie *c, const struct row *row,
                        struct rows *out)
{
    in->row = *row;
    in->init = *row;
    in->depth = 0;
    in->cie = c;
    in->loc = 0;
    in->end = 0;
    in->seg_start = 0;
    in->seg_end = 0;
    in->out = out;
    in->unsupported = 0;
}

/* Put the current row at in->loc into the table. */
static void emit(struct interp *in, uint64_t at, uint32_t rule)
{
    if (at >= in->seg_end)
        return;
    rows_put(in->out, at < in->seg_start ? 0 : (uint32_t)(at - in->seg_start), rule);
}

static void emit_row(struct interp *in)
{
    int unsupported = 0;
    emit(in, in->loc, row_rule(&in->row, &unsupported));
    in->unsupported |= unsupported;
}

/* Move to the row at `next`, after putting the current one. @return 1 if the FDE
 * (or the segment) ends there, -1 if `next` goes backwards, else 0. */
static int advance_to(struct interp *in, uint64_t next)
{
    if (!in->out)
        return 0;           /* the CIE's initial instructions hold for the whole FDE */
    if (next < in->loc)
        return -1;
    if (next == in->loc)
        return 0;
    emit_row(in);
    in->loc = next;
    return next >= in->end || next >= in->seg_end;
}

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

/* The CFA expression of x86-64 lazy PLT stubs, as binutils writes it:
 * rsp + N + ((rip & 15) >= T ? 8 : 0), i.e. DW_OP_breg7 N; DW_OP_breg16 0;
 * DW_OP_lit15; DW_OP_and; DW_OP_lit<T>; DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 * DW_OP_plus. (Each 16-byte stub pushes one word at offset 11, or 10 in the IBT
 * layout.) @return 1 and sets the row's CFA if `expr` is that, else 0. */
static int match_plt(const uint8_t *expr, uint64_t len, struct row *w)
{
    struct reader r = {expr, expr + len, 0};
    if (rd_fixed(&r, 1) != 0x77)
        return 0;
    int64_t n = rd_sleb(&r);
    static const uint8_t mid[] = {0x80, 0x00, 0x3f, 0x1a};
    static const uint8_t tail[] = {0x2a, 0x33, 0x24, 0x22};
    if (r.bad || r.end - r.p != (ptrdiff_t)(sizeof mid + 1 + sizeof tail) ||
        memcmp(r.p, mid, sizeof mid) != 0 || r.p[4] < 0x30 || r.p[4] > 0x4f ||
        memcmp(r.p + 5, tail, sizeof tail) != 0)
        return 0;
    w->cfa_expr = EXPR_PLT;
    w->cfa_reg = DW_RSP;
    w->cfa_off = n;
    w->plt_thr = r.p[4] - 0x30;
    return 1;
}

/* Run CFI instructions [p, end). @return 1 if the FDE's end was reached, 0 at the
 * end of the instructions, -1 for an instruction this builder does not know, or
 * bad data. */
static int run_cfi(struct interp *in, const uint8_t *p, const uint8_t *end, uint8_t enc)
{
    struct reader r = {p, end, 0};
    const struct cie *c = in->cie;
    int adv;
    while (r.p < r.end && !r.bad) {
        uint8_t op = *r.p++;
        uint8_t low = op & 0x3f;
        switch (op & 0xc0) {
        case 0x40:
            if ((adv = advance_to(in, in->loc + low * c->code_align)) != 0)
                return adv;
            continue;
        case 0x80:
            set_rule(&in->row, low, RULE_OFFSET, (int64_t)rd_uleb(&r) * c->data_align);
            continue;
        case 0xc0:
            restore_rule(in, low);
            continue;
        }
        uint64_t reg, off;
        adv = 0;
        switch (op) {
        case 0x00: break;                                       /* nop */
        case 0x01: adv = advance_to(in, rd_encoded(&r, enc)); break;  /* set_loc */
        case 0x02: adv = advance_to(in, in->loc + rd_fixed(&r, 1) * c->code_align); break;
        case 0x03: adv = advance_to(in, in->loc + rd_fixed(&r, 2) * c->code_align); break;
        case 0x04: adv = advance_to(in, in->loc + rd_fixed(&r, 4) * c->code_align); break;
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
            in->row.cfa_expr = EXPR_NONE;
            break;
        case 0x0d:                                              /* def_cfa_register */
            in->row.cfa_reg = (int)rd_uleb(&r);
            in->row.cfa_expr = EXPR_NONE;
            break;
        case 0x0e: in->row.cfa_off = (int64_t)rd_uleb(&r); break;
        case 0x0f:                                              /* def_cfa_expression */
            off = rd_uleb(&r);
            if (r.bad || r.p > r.end || off > (uint64_t)(r.end - r.p))
                return -1;
            if (!match_plt(r.p, off, &in->row))
                in->row.cfa_expr = EXPR_OTHER;
            r.p += off;
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
            in->row.cfa_expr = EXPR_NONE;
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
        if (r.bad)
            return -1;
        if (adv)
            return adv;
    }
    return r.bad ? -1 : 0;
}

/* The CIE an FDE points to, decoded and its initial instructions run, cached for
 * the next FDE (consecutive FDEs nearly always share one). */
struct cie_cache {
    const uint8_t *at;
    int ok;
    struct cie cie;
    struct row init;
};

static const struct cie_cache *cie_get(struct cie_cache *cc, const struct bounds *b,
                                       const uint8_t *at)
{
    if (cc->at == at)
        return cc;
    cc->at = at;
    cc->ok = 0;
    if (parse_cie(b, at, &cc->cie) < 0)
        return cc;
    struct row first;
    memset(&first, 0, sizeof first);
    first.cfa_reg = DW_RSP;
    first.cfa_off = 8;
    first.ra_rule = RULE_OFFSET;
    first.ra_off = -8;
    struct interp in;
    interp_init(&in, &cc->cie, &first, NULL);
    if (run_cfi(&in, cc->cie.insns, cc->cie.end, cc->cie.fde_enc) < 0)
        return cc;
    cc->init = in.row;
    cc->ok = 1;
    return cc;
}

/* Put the rows of the FDE at `fde` that fall in [seg_start, seg_end). @return 1
 * if some pc of it became RP_RULE_STOP for want of a supported rule, else 0. */
static int build_fde(struct rows *out, struct cie_cache *cc, const struct bounds *b,
                     const uint8_t *fde, uint64_t seg_start, uint64_t seg_end)
{
    uint32_t len = record_len(b, fde);
    if (!len)
        return 0;
    int32_t cie_off;
    memcpy(&cie_off, fde + 4, 4);
    if (cie_off <= 0 || fde + 4 - b->lo < cie_off)
        return 0;
    /* An FDE that cannot be read puts no rows: its pcs fall in the gap after the
     * FDE before it, which is RP_RULE_STOP. */
    const struct cie_cache *c = cie_get(cc, b, fde + 4 - cie_off);
    if (!c->ok)
        return 1;
    struct reader r = {fde + 8, fde + 4 + len, 0};
    uint64_t begin = rd_encoded(&r, c->cie.fde_enc);
    uint64_t range = rd_encoded(&r, (uint8_t)(c->cie.fde_enc & 0x0f));
    if (r.bad || begin + range < begin)
        return 1;
    if (range == 0 || begin >= seg_end || begin + range <= seg_start)
        return 0;
    struct interp in;
    interp_init(&in, &c->cie, &c->init, out);
    in.loc = begin;
    in.end = begin + range;
    in.seg_start = seg_start;
    in.seg_end = seg_end;
    int rc = -1;
    if (c->cie.has_aug) {
        uint64_t alen = rd_uleb(&r);
        if (r.bad || r.p > r.end || alen > (uint64_t)(r.end - r.p))
            r.bad = 1;
        else
            r.p += alen;
    }
    if (!r.bad && r.p <= r.end)
        rc = run_cfi(&in, r.p, r.end, c->cie.fde_enc);
    if (rc < 0) {
        /* From the instruction it could not run on, the FDE cannot be unwound. */
        emit(&in, in.loc, RP_RULE_STOP);
        in.unsupported = 1;
    } else if (in.loc < in.end) {
        emit_row(&in);
    }
    emit(&in, in.end, RULE_HOLE);
    return in.unsupported;
}

/* Memory for a table's index and rows. A large one (libjvm's) gets 2 MiB-aligned
 * memory that the kernel is asked to back with huge pages: then its whole table
 * needs one TLB entry, where 4 KiB pages would cost a page walk (more cache misses)
 * at nearly every lookup. Never freed. @return NULL if memory ran out. */
static void *table_alloc(size_t bytes)
{
    const size_t huge = 2u << 20;
    if (bytes < huge / 2)
        return malloc(bytes);
    size_t len = (bytes + huge - 1) & ~(huge - 1);
    uint8_t *p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uint8_t *a = (uint8_t *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
    if (a > p)
        munmap(p, (size_t)(a - p));
    if (p + huge > a)
        munmap(a + len, (size_t)(p + huge - a));
    madvise(a, len, MADV_HUGEPAGE);     /* a hint: 4 KiB pages if it is refused */
    return a;
}

/* Build the table of segment [start, end) from the object's .eh_frame_hdr `hdr`,
 * which lies in `b`. @return the table (with no rows if the header is not the
 * layout every linker writes: version 1, a table of datarel sdata4 pairs), or
 * NULL if memory ran out. */
static struct rp_frametab *table_build(uint64_t start, uint64_t end, const uint8_t *hdr,
                                 const struct bounds *b)
{
    uint64_t t0 = rp_clock_ns(CLOCK_THREAD_CPUTIME_ID);  /* the builder's CPU */
    struct rows rows = {0};
    struct cie_cache cc = {0};
    uint64_t fdes = 0, stop_fdes = 0;
    int ptr_size = hdr && b->hi - hdr >= 12 ? encoded_size(hdr[1]) : -1;
    if (ptr_size > 0 && hdr[0] == 1 && hdr[3] == (PE_DATAREL | PE_SDATA4) &&
        encoded_size(hdr[2]) == 4 && (hdr[2] & 0x70) == 0 &&
        b->hi - hdr >= 8 + ptr_size) {
        uint32_t count;
        memcpy(&count, hdr + 4 + ptr_size, 4);
        const uint8_t *tab = hdr + 8 + ptr_size;
        if ((uint64_t)(b->hi - tab) / 8 >= count) {
            for (uint32_t i = 0; i < count && !rows.failed; i++) {
                int32_t e[2];
                memcpy(e, tab + 8 * (size_t)i, 8);
                uint64_t loc = (uint64_t)(uintptr_t)hdr + (uint64_t)(int64_t)e[0];
                if (loc >= end)
                    break;                          /* the table is sorted */
                if (e[1] < b->lo - hdr || e[1] > b->hi - hdr)
                    continue;
                fdes++;
                stop_fdes += (uint64_t)build_fde(&rows, &cc, b, hdr + e[1], start, end);
            }
        }
    }
    rows_fill_holes(&rows);
    if (rows.n >= MAX_ROWS)
        rows.n = 0;             /* more than the index can point to: no rows */
    size_t npages = (size_t)((end - start - 1) >> RP_FRAMETAB_PAGE_SHIFT) + 1;
    size_t data = (npages + 1) * sizeof(uint64_t) + rows.n * sizeof(struct rp_frow);
    struct rp_frametab *t = rows.failed ? NULL : malloc(sizeof *t);
    uint64_t *page = t ? table_alloc(data) : NULL;
    if (!page) {
        free(t);
        free(rows.row);
        return NULL;
    }
    struct rp_frow *row = (struct rp_frow *)(void *)(page + npages + 1);
    if (rows.n)
        memcpy(row, rows.row, rows.n * sizeof *row);
    free(rows.row);
    size_t i = 0;           /* the first row that starts after the page's start */
    for (size_t p = 0; p <= npages; p++) {
        uint64_t at = (uint64_t)p << RP_FRAMETAB_PAGE_SHIFT;
        while (i < rows.n && row[i].off <= at)
            i++;
        uint64_t rule = i > 0 ? row[i - 1].rule : RP_RULE_STOP;
        uint64_t inside = i < rows.n && row[i].off - at < RP_FRAMETAB_PAGE_BYTES
                        ? row[i].off - at : 0;
        page[p] = rule | inside << 32 | (uint64_t)i << 40;
    }
    t->row = row;
    t->page = page;
    t->nrows = (uint32_t)rows.n;
    t->npages = (uint32_t)npages;
    t->start = start;
    t->end = end;
    t->hdr = (uint64_t)(uintptr_t)hdr;
    t->fdes = fdes;
    t->stop_fdes = stop_fdes;
    t->bytes = sizeof *t + data;
    t->build_ns = rp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    return t;
}

/* ------------------------------------------------------------------ cache -- */

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;        /* FNV-1a */
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

const struct rp_frametab *rp_frametab_get(uint64_t start, uint64_t end, const uint8_t *hdr,
                                          const uint8_t *lo, const uint8_t *hi,
                                          const char *name)
{
    uint64_t hash = name_hash(name);
    for (struct rp_frametab *t = g_tables; t; t = t->next)
        if (t->start == start && t->end == end && t->hdr == (uint64_t)(uintptr_t)hdr &&
            t->name_hash == hash)
            return t;
    struct bounds b = {lo, hi};
    struct rp_frametab *t = table_build(start, end, hdr, &b);
    if (!t)
        return NULL;
    t->name_hash = hash;
    t->next = g_tables;
    g_tables = t;
    return t;
}
