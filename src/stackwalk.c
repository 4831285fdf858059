/*
 * src/stackwalk.c — native frames, stubs, then Java frames by AsyncGetCallTrace,
 * with the recoveries of stackwalk.h. Everything here runs in the signal
 * handler: it reads memory and computes, and calls AsyncGetCallTrace.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "codecache.h"
#include "stackwalk.h"
#include "unwind.h"
#include "vmstructs.h"

/* AsyncGetCallTrace's interface, from HotSpot's forte.cpp (no public header). */
typedef struct {
    jint lineno;              /* bci, or -3 for a native method                   */
    jmethodID method_id;
} ASGCT_CallFrame;
typedef struct {
    JNIEnv *env_id;
    jint num_frames;          /* frames written, or an error code (< 0)           */
    ASGCT_CallFrame *frames;
} ASGCT_CallTrace;
typedef void (*agct_fn)(ASGCT_CallTrace *trace, jint depth, void *ucontext);

/* AGCT writes straight into the record's Java frames: the layouts must agree. */
_Static_assert(sizeof(ASGCT_CallFrame) == sizeof(struct rp_java_frame), "frame size");
_Static_assert(offsetof(ASGCT_CallFrame, lineno) == offsetof(struct rp_java_frame, bci),
               "bci offset");
_Static_assert(offsetof(ASGCT_CallFrame, method_id) ==
               offsetof(struct rp_java_frame, method), "method offset");

/* AGCT's error codes (forte.cpp) that the walk reacts to. */
enum { AGCT_UNKNOWN_NOT_JAVA = -3 };

/* A frame bigger than this is not believed. */
#define MAX_STEP_BYTES (1u << 20)

static agct_fn g_agct;
static _Atomic uint64_t g_stub_frames, g_stub_stuck, g_from_frame, g_from_context,
    g_anchor_fixed;
static uint64_t g_self_lo, g_self_hi;    /* the agent's executable segment */

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uint64_t base = *(const uint64_t *)arg;
    if (info->dlpi_addr != base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            g_self_lo = info->dlpi_addr + ph->p_vaddr;
            g_self_hi = g_self_lo + ph->p_memsz;
        }
    }
    return 1;
}

void rp_stackwalk_init(void *agct)
{
    g_agct = (agct_fn)agct;
    Dl_info info;
    if (!g_self_hi && dladdr((void *)(uintptr_t)rp_stackwalk_init, &info) && info.dli_fbase) {
        uint64_t base = (uint64_t)(uintptr_t)info.dli_fbase;
        dl_iterate_phdr(find_self, &base);
    }
}

static int is_self(uint64_t pc)
{
    return pc >= g_self_lo && pc < g_self_hi;
}

/* Drop pcs[0..k], k the outermost frame in the agent's own code: what the agent
 * did, and what it called, becomes one marker frame (the flusher's). */
static int drop_agent_frames(uint64_t *pcs, int n)
{
    int k = -1;
    for (int i = 0; i < n; i++)
        if (is_self(pcs[i]))
            k = i;
    if (k < 0)
        return n;
    memmove(pcs, pcs + k + 1, (size_t)(n - k - 1) * sizeof *pcs);
    return n - k - 1;
}

static void bump(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static int code_or_native(uint64_t pc)
{
    return rp_codecache_contains(pc) || rp_unwind_is_native(pc);
}

/* Is `ra` a return address: code, right after a call instruction? The forms
 * compilers and HotSpot emit on x86-64: call rel32 (e8), call reg (ff d0+r,
 * with a REX prefix for r8-r15), call [rip+disp32] (ff 15), call [reg+disp8]
 * and [reg+disp32] (ff 50+r, ff 90+r; REX and SIB forms too). Reading the
 * bytes before `ra` is safe: they are in the same executable mapping, except
 * at its first bytes, which hold no call that returns here anyway. */
static int after_call(uint64_t ra)
{
    if (!code_or_native(ra) || !code_or_native(ra - 7))
        return 0;
    const uint8_t *p = (const uint8_t *)(uintptr_t)ra;
    if (p[-5] == 0xe8)
        return 1;
    if (p[-2] == 0xff && (p[-1] & 0xf8) == 0xd0)
        return 1;
    if (p[-6] == 0xff && p[-5] == 0x15)
        return 1;
    if (p[-3] == 0xff && (p[-2] & 0xf8) == 0x50)
        return 1;
    if (p[-4] == 0xff && p[-3] == 0x54)                 /* [reg+index+disp8] */
        return 1;
    if (p[-6] == 0xff && (p[-5] & 0xf8) == 0x90)
        return 1;
    if (p[-7] == 0xff && p[-6] == 0x94)                 /* [reg+index+disp32] */
        return 1;
    return 0;
}

static int take_step(struct rp_frame_regs *r, uint64_t ra, uint64_t sp, uint64_t bp)
{
    if (sp <= r->sp || sp - r->sp > MAX_STEP_BYTES || (sp & 7) || !after_call(ra))
        return 0;
    r->pc = ra;
    r->sp = sp;
    r->bp = bp;
    r->is_return = 1;
    return 1;
}

/* Step out of the stub `c` that frame *r is in. @return 1 stepped, 0 not. */
static int step_stub(const struct rp_code *c, struct rp_frame_regs *r)
{
    const uint64_t *sp = (const uint64_t *)(uintptr_t)r->sp;
    int enter = c->enter_at != RP_STUB_NO_ENTER;
    uint64_t enter_pc = c->start + c->enter_at;
    if (!r->is_return) {
        const uint8_t *ip = (const uint8_t *)(uintptr_t)r->pc;
        /* No frame yet, or none any more: the return address is on top. */
        if (r->pc == c->start || *ip == 0xc3 || (enter && r->pc <= enter_pc))
            return take_step(r, sp[0], r->sp + 8, r->bp);
        if (enter && r->pc == enter_pc + 1)             /* rbp pushed, not yet set */
            return take_step(r, sp[1], r->sp + 16, sp[0]);
    }
    if (enter && r->bp >= r->sp && r->bp - r->sp < MAX_STEP_BYTES && !(r->bp & 7)) {
        const uint64_t *fp = (const uint64_t *)(uintptr_t)r->bp;
        return take_step(r, fp[1], r->bp + 16, fp[0]);
    }
    /* A stub with no frame of its own (vtable and itable stubs, many small
     * StubRoutines): the return address is on top if anything is. */
    if (!r->is_return)
        return take_step(r, sp[0], r->sp + 8, r->bp);
    return 0;
}

static int agct(JNIEnv *env, struct rp_java_frame *java, int max, void *ctx)
{
    ASGCT_CallTrace tr = {env, 0, (ASGCT_CallFrame *)(void *)java};
    g_agct(&tr, max, ctx);
    return tr.num_frames;
}

/* AGCT from the frame *r: a copy of the context with that frame's registers. */
static int agct_from(JNIEnv *env, struct rp_java_frame *java, int max,
                     const ucontext_t *uc, const struct rp_frame_regs *r)
{
    ucontext_t ctx = *uc;
    ctx.uc_mcontext.gregs[REG_RIP] = (greg_t)r->pc;
    ctx.uc_mcontext.gregs[REG_RSP] = (greg_t)r->sp;
    ctx.uc_mcontext.gregs[REG_RBP] = (greg_t)r->bp;
    return agct(env, java, max, &ctx);
}

/* The Java frames, with the recoveries of stackwalk.h (steps 3 and 4). */
static int java_frames(JNIEnv *env, struct rp_java_frame *java, int max,
                       const ucontext_t *uc, const struct rp_frame_regs *r, int moved)
{
    int n;
    if (moved) {
        n = agct_from(env, java, max, uc, r);
        if (n > 0) {
            bump(&g_from_frame);
            return n;
        }
    }
    n = agct(env, java, max, (void *)uc);
    if (n > 0) {
        if (moved)
            bump(&g_from_context);
        return n;
    }
    struct rp_vm_anchor a;
    if (n == AGCT_UNKNOWN_NOT_JAVA && rp_vmstructs_anchor(env, &a) == 0 && a.in_vm &&
        a.sp && *a.pc_slot == 0) {
        uint64_t pc = *(const uint64_t *)(uintptr_t)(a.sp - 8);
        if (code_or_native(pc)) {
            *a.pc_slot = pc;
            int m = agct(env, java, max, (void *)uc);
            if (m > 0) {
                bump(&g_anchor_fixed);
                return m;
            }
        }
    }
    return n;
}

void rp_stackwalk(const ucontext_t *uc, JNIEnv *env, int native, int agent, int depth,
                  uint64_t *pcs, struct rp_java_frame *java,
                  struct rp_stackwalk_result *out)
{
    struct rp_frame_regs r;
    rp_frame_regs_from_uc(uc, &r);
    int n = 0, java_frame = 0, moved = 0;
    out->truncated = 0;
    rp_codecache_enter();
    out->in_codecache = 1;
    for (;;) {
        enum rp_unwind_end end;
        int k = rp_unwind_native(&r, pcs + n, depth - n, &end);
        n += k;
        moved |= k > 0;
        if (end == RP_UNWIND_FULL) {
            out->truncated = 1;
            break;
        }
        if (end == RP_UNWIND_STOPPED || !rp_codecache_contains(r.pc))
            break;
        const struct rp_code *c = rp_codecache_find(rp_frame_lookup_pc(&r));
        if (!c || c->kind != RP_CODE_STUB) {
            java_frame = 1;               /* compiled Java or the interpreter */
            break;
        }
        if (n == depth) {
            out->truncated = 1;
            break;
        }
        pcs[n++] = rp_frame_lookup_pc(&r);
        if (!step_stub(c, &r)) {
            bump(&g_stub_stuck);
            break;
        }
        bump(&g_stub_frames);
        moved = 1;
    }
    out->in_codecache = 0;
    rp_codecache_leave();
    if (agent && native)
        n = drop_agent_frames(pcs, n);
    out->nnative = native ? n : 0;
    out->njava = 0;
    out->status = RP_WALK_OK;
    if (native && out->truncated)
        return;                   /* native frames filled the stack: no room */
    if (!env) {
        out->status = RP_WALK_NOT_JAVA;
        return;
    }
    if (!g_agct) {
        out->status = RP_WALK_NO_AGCT;
        return;
    }
    int max = depth - out->nnative;
    out->truncated = 0;
    int nj = java_frames(env, java, max, uc, &r, java_frame && moved);
    if (nj > 0) {
        out->njava = nj;
        out->truncated = nj == max;
    } else {
        out->status = nj == 0 ? RP_WALK_NO_JAVA_FRAMES : nj;
        /* Where the Java walk could not start is worth showing: the compiled
         * method's code or the interpreter, named by the flusher. */
        if (java_frame && native && out->nnative < depth)
            pcs[out->nnative++] = rp_frame_lookup_pc(&r);
    }
}

int rp_stackwalk_anchor(JNIEnv *env, struct rp_java_frame *java, int depth)
{
    if (!g_agct)
        return RP_WALK_NO_AGCT;
    /* The thread is in native: AGCT takes its frame from the anchor, not from
     * the context, which only has to be there. */
    ucontext_t ctx;
    memset(&ctx, 0, sizeof ctx);
    return agct(env, java, depth, &ctx);
}

void rp_stackwalk_stats(struct rp_stackwalk_stats *out)
{
    out->stub_frames = atomic_load(&g_stub_frames);
    out->stub_stuck = atomic_load(&g_stub_stuck);
    out->from_frame = atomic_load(&g_from_frame);
    out->from_context = atomic_load(&g_from_context);
    out->anchor_fixed = atomic_load(&g_anchor_fixed);
}
