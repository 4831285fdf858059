/*
 * src/walk/stackwalk.c — native frames, stubs, then Java frames by AsyncGetCallTrace,
 * with the recoveries of stackwalk.h. Everything from after_call down to
 * rp_stackwalk runs in the signal handler (or in a callback under the crash
 * guard): it reads memory, computes, writes the thread's own anchor for a
 * moment, and calls AsyncGetCallTrace. rp_stackwalk_init is the agent start's.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "core/counters.h"
#include "code/codecache.h"
#include "walk/stackwalk.h"
#include "walk/unwind.h"
#include "code/vmstructs.h"

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
enum {
    AGCT_UNKNOWN_NOT_JAVA = -3, AGCT_NOT_WALKABLE_NOT_JAVA = -4,
    AGCT_UNKNOWN_JAVA = -5, AGCT_NOT_WALKABLE_JAVA = -6
};

/* A frame bigger than this is not believed. */
#define MAX_STEP_BYTES (1u << 20)
/* Words above a compiled frame searched for its return address when registers
 * were pushed below it (step_compiled): 32 general registers and 32 AVX-512
 * registers, with room to spare. */
#define SCAN_WORDS 320
/* Callers of a compiled method tried with AGCT (step_compiled's candidates). */
#define COMPILED_TRIES 3
/* The same for a stub that saves registers without making a frame. */
#define SCAN_STUB_WORDS 32

static agct_fn g_agct;
static _Atomic uint64_t g_stub_frames, g_stub_stuck, g_from_frame, g_from_context,
    g_anchor_fixed, g_anchor_moved, g_compiled_popped, g_from_callback, g_interp_entry,
    g_from_kept;
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
 * did, and what it called, becomes one marker frame (the flusher's). @return the
 * frames left; *found: there was such a frame. */
static int drop_agent_frames(uint64_t *pcs, int n, int *found)
{
    int k = -1;
    for (int i = 0; i < n; i++)
        if (is_self(pcs[i]))
            k = i;
    *found = k >= 0;
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

/* Is `ra` a return address: code, right after a call instruction? (Or in the
 * interpreter, which pushes the address of its return entry for the callee and
 * jumps: AGCT checks an interpreted frame's method and bytecode index itself.) The forms
 * compilers and HotSpot emit on x86-64: call rel32 (e8), call reg (ff d0+r,
 * with a REX prefix for r8-r15), call [rip+disp32] (ff 15), call [reg+disp8]
 * and [reg+disp32] (ff 50+r, ff 90+r; REX and SIB forms too). Reading the
 * bytes before `ra` is safe: they are in the same executable mapping, except
 * at its first bytes, which hold no call that returns here anyway. */
static int after_call(uint64_t ra)
{
    if (!code_or_native(ra) || !code_or_native(ra - 7))
        return 0;
    const struct rp_code *c = rp_codecache_find(ra);
    if (c && c->kind == RP_CODE_INTERPRETER)
        return 1;
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
    return rp_frame_return_to(r, ra, sp, bp);
}

/* The target of the call instruction before `ra` if it is a call rel32, else 0. */
static uint64_t call_target(uint64_t ra)
{
    const uint8_t *p = (const uint8_t *)(uintptr_t)ra;
    if (p[-5] != 0xe8)
        return 0;
    int32_t rel;
    memcpy(&rel, p - 4, 4);
    return ra + (uint64_t)(int64_t)rel;
}

/* Does a call to `target` lead into [lo, hi), the code being stepped out of?
 * Directly; or through a stub (a call site not yet resolved, an inline cache,
 * a vtable stub; InlineCacheBuffer's, a blob the JVM reports to no one);
 * or through the caller's own static-call stub, which loads the Method* into
 * rbx and jumps to the C2I adapter (`mov rbx, imm64; jmp rel32`: the jump must
 * land in [lo, hi)); or through another compiled version of the same method
 * (`method`, 0 if not a compiled method: a call site bound before the method
 * was compiled again jumps on to the new code). */
static int leads_to(uint64_t target, uint64_t lo, uint64_t hi, uint64_t method)
{
    if (target >= lo && target < hi)
        return 1;
    if (!rp_codecache_contains(target))
        return 0;
    const struct rp_code *c = rp_codecache_find(target);
    if (c)
        return c->kind == RP_CODE_STUB;
    struct rp_blob b;
    if (rp_codecache_blob(target, &b) != 0)
        return 0;
    if (!b.compiled && b.name && memcmp(b.name, "InlineCacheBuffer", 18) == 0)
        return 1;
    const uint8_t *p = (const uint8_t *)(uintptr_t)target;
    if (p[0] == 0x48 && p[1] == 0xbb && p[10] == 0xe9) {
        int32_t rel;
        memcpy(&rel, p + 11, 4);
        uint64_t to = target + 15 + (uint64_t)(int64_t)rel;
        return to >= lo && to < hi;
    }
    return method && rp_codecache_method(&b) == method;
}

/* Step to the caller whose return address is at `slot` (sp after the step:
 * slot + 8), when that return address comes from a call that leads to [lo, hi)
 * (leads_to), or from a call whose target the instruction does not say
 * (through a register or memory). */
static int step_from_slot(struct rp_frame_regs *r, uint64_t slot, uint64_t bp,
                          uint64_t lo, uint64_t hi, uint64_t method)
{
    uint64_t ra = *(const uint64_t *)(uintptr_t)slot;
    if (!after_call(ra))
        return 0;
    uint64_t t = call_target(ra);
    if (t && !leads_to(t, lo, hi, method))
        return 0;
    return take_step(r, ra, slot + 8, bp);
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
    /* A blob with a frame size (runtime stubs): exact once the frame is built,
     * which it is wherever the stub has called out (is_return). */
    if (c->frame_words &&
        (r->is_return || (c->frame_complete >= 0 && r->pc >= c->start + c->frame_complete))) {
        uint64_t caller_sp = r->sp + (uint64_t)c->frame_words * 8;
        const uint64_t *top = (const uint64_t *)(uintptr_t)caller_sp;
        return take_step(r, top[-1], caller_sp, top[-2]);
    }
    if (enter && r->bp >= r->sp && r->bp - r->sp < MAX_STEP_BYTES && !(r->bp & 7)) {
        const uint64_t *fp = (const uint64_t *)(uintptr_t)r->bp;
        return take_step(r, fp[1], r->bp + 16, fp[0]);
    }
    /* A stub with no frame of its own (vtable and itable stubs, many small
     * StubRoutines): the return address is on top if anything is, and the call
     * that pushed it went to this stub. */
    if (!r->is_return && step_from_slot(r, r->sp, r->bp, c->start, c->end, 0))
        return 1;
    /* One that pushed registers first (C1's slow_subtype_check): the first word
     * above that a direct call into this stub left. */
    for (uint64_t k = 1; !r->is_return && k < SCAN_STUB_WORDS; k++) {
        uint64_t slot = r->sp + 8 * k;
        uint64_t ra = *(const uint64_t *)(uintptr_t)slot, tgt;
        if (after_call(ra) && (tgt = call_target(ra)) >= c->start && tgt < c->end)
            return take_step(r, ra, slot + 8, r->bp);
    }
    return 0;
}

/* Step out of the compiled method `b` where AGCT could not: its frame is being
 * built or torn down (prologue, epilogue, the return), or is otherwise not one
 * AGCT accepts (an intrinsic that moved sp for scratch space). The return
 * address is at the top of the stack (before `push rbp`, after `pop rbp`, at
 * `ret`), one word above (rbp pushed, the frame not yet allocated, or freed
 * before rbp is popped), at the top of the whole frame (allocated, the entry
 * barrier or stack bang still to come), or above the whole frame by what an
 * out-of-line path or an intrinsic pushed. Candidates come one per call, in
 * that order (where the frame is complete, the whole frame first), *cursor
 * counting them: the caller tries each with AGCT, since a word that looks like
 * a return address may be a stale one. Each is taken only if it holds a return
 * address from a call into this method (or, for the fixed places, from an
 * indirect call). @return 1 with *out set, 0 when there are no more. */
static int step_compiled(const struct rp_blob *b, uint64_t method, const struct rp_frame_regs *r,
                         int *cursor, struct rp_frame_regs *out)
{
    uint64_t complete = b->frame_complete >= 0 ? b->code_begin + (uint64_t)b->frame_complete
                                               : b->end;
    const uint8_t *ip = (const uint8_t *)(uintptr_t)r->pc;
    const uint64_t *sp = (const uint64_t *)(uintptr_t)r->sp;
    uint64_t whole = b->frame_words > 1 ? r->sp + (uint64_t)b->frame_words * 8 : 0;
    int frame_first = r->pc >= complete && *ip != 0xc3;
    for (; *cursor < 4; (*cursor)++) {
        int k = *cursor;
        *out = *r;
        int ok = 0;
        if ((k == 0 && frame_first) || (k == 3 && !frame_first)) {
            if (whole)
                ok = step_from_slot(out, whole - 8, *(const uint64_t *)(uintptr_t)(whole - 16),
                                    b->code_begin, b->end, method);
        } else if (k == 1) {
            ok = step_from_slot(out, r->sp, r->bp, b->code_begin, b->end, method);
        } else if (k == 2) {
            ok = step_from_slot(out, r->sp + 8, sp[0], b->code_begin, b->end, method);
        }
        if (ok) {
            (*cursor)++;
            return 1;
        }
    }
    /* Pushed below the frame (a GC barrier's slow path saving registers before
     * it calls out; an intrinsic's scratch space, as String.indexOf's): the
     * return address is above where the whole frame would end, so the search
     * starts there (words inside the frame may hold stale return addresses of
     * earlier calls). A word passes if it is a return address in compiled code
     * from a direct call into the code cache (into this method, or into an
     * older version of it that sent the call on, or through a stub), or one in
     * the interpreter; AGCT from the caller decides. */
    uint64_t first = b->frame_words > 0 ? (uint64_t)b->frame_words - 1 : 0;
    uint64_t last = first + SCAN_WORDS;
    for (uint64_t k = first + (uint64_t)(*cursor - 4); k < last; k++) {
        (*cursor)++;
        uint64_t slot = r->sp + 8 * k;
        uint64_t ra = *(const uint64_t *)(uintptr_t)slot;
        if (!rp_codecache_contains(ra) || !after_call(ra))
            continue;
        const struct rp_code *rc = rp_codecache_find(ra);
        uint64_t tgt = call_target(ra);
        if (rc ? rc->kind != RP_CODE_INTERPRETER : !(tgt && rp_codecache_contains(tgt)))
            continue;
        *out = *r;
        if (take_step(out, ra, slot + 8, *(const uint64_t *)(uintptr_t)(slot - 8)))
            return 1;
    }
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

/* AGCT once a thread in the VM has its anchor pointed at frame *r, a Java frame
 * the walk reached by stepping out of a stub: HotSpot's anchor names the stub's
 * frame, which AGCT cannot step out of when HotSpot says the stub's frame is
 * never complete (C1's runtime stubs, C2's allocation stubs). The thread is in
 * the VM, so no other thread reads its anchor meanwhile; the old values go back
 * before the walk returns, or, after a fault, in rp_stackwalk_abandon. The sp is
 * written last and cleared first, as HotSpot does. */
static int agct_via_anchor(JNIEnv *env, struct rp_java_frame *java, int max,
                           const ucontext_t *uc, const struct rp_vm_anchor *a,
                           const struct rp_frame_regs *r, struct rp_stackwalk_result *out)
{
    out->saved_sp = *a->sp_slot;
    out->saved_pc = *a->pc_slot;
    out->saved_fp = *a->fp_slot;
    out->anchor = *a;
    atomic_signal_fence(memory_order_seq_cst);
    out->anchor_moved = 1;
    atomic_signal_fence(memory_order_seq_cst);
    *a->sp_slot = 0;
    atomic_signal_fence(memory_order_seq_cst);
    *a->fp_slot = r->bp;
    *a->pc_slot = r->pc;
    atomic_signal_fence(memory_order_seq_cst);
    *a->sp_slot = r->sp;
    atomic_signal_fence(memory_order_seq_cst);
    int n = agct(env, java, max, (void *)uc);
    rp_stackwalk_abandon(out);
    return n;
}

/* The Java frames, with the recoveries of stackwalk.h (steps 3 and 4). r: the
 * frame the native walk stopped at; java_frame: it is compiled Java code or the
 * interpreter; moved: it is not the interrupted frame. */
static int java_frames(JNIEnv *env, struct rp_java_frame *java, int max,
                       const ucontext_t *uc, const struct rp_frame_regs *r, int java_frame,
                       int moved, struct rp_stackwalk_result *out)
{
    int n;
    if (java_frame && moved) {
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
    /* A thread in the VM (or in a runtime routine that a stub entered in the
     * Java state, JRT_BLOCK_ENTRY, where AGCT takes the anchor's frame, the
     * stub's, and cannot step out of it either): no other thread walks its
     * stack meanwhile (a safepoint waits for it; JFR's sampler suspends it with
     * a signal, which this handler holds off). */
    struct rp_vm_anchor a;
    int not_java = n == AGCT_UNKNOWN_NOT_JAVA || n == AGCT_NOT_WALKABLE_NOT_JAVA;
    if ((not_java || n == AGCT_NOT_WALKABLE_JAVA) && rp_vmstructs_anchor(env, &a) == 0 &&
        *a.sp_slot && (not_java ? a.in_vm : a.in_java)) {
        if (*a.pc_slot == 0) {
            uint64_t pc = *(const uint64_t *)(uintptr_t)(*a.sp_slot - 8);
            if (code_or_native(pc)) {
                *a.pc_slot = pc;
                int m = agct(env, java, max, (void *)uc);
                if (m > 0) {
                    bump(&g_anchor_fixed);
                    return m;
                }
            }
        }
        if (java_frame && moved && a.fp_slot && r->sp < *a.sp_slot + MAX_STEP_BYTES &&
            r->sp >= *a.sp_slot) {
            int m = agct_via_anchor(env, java, max, uc, &a, r, out);
            if (m > 0) {
                bump(&g_anchor_moved);
                return m;
            }
        }
    }
    /* In the interpreter where AGCT gives up: entering a method, its frame half
     * built. At a method's entry HotSpot keeps the Method* in rbx (x86's
     * interpreter calling convention); the method is taken only if rbx is one
     * (rp_codecache_jmethod's round trip). Its caller: once the entry has made
     * the frame pointer (enter), the return address is above rbp and the
     * caller's sp below it (HotSpot pushes the sender's sp first); before that,
     * the return address is on top of the stack or, just popped, in rax, and
     * the caller's sp in r13. Each tried by AGCT from the caller's frame. */
    const struct rp_code *ic = java_frame && !moved ? rp_codecache_find(rp_frame_lookup_pc(r))
                                                    : NULL;
    uint64_t im;
    if ((n == AGCT_UNKNOWN_JAVA || n == AGCT_NOT_WALKABLE_JAVA) && ic &&
        ic->kind == RP_CODE_INTERPRETER && max > 1 &&
        (im = rp_codecache_jmethod((uint64_t)uc->uc_mcontext.gregs[REG_RBX])) != 0) {
        struct rp_frame_regs cand[3];
        int nc = 0;
        if (r->bp >= r->sp && r->bp - r->sp < MAX_STEP_BYTES && !(r->bp & 7)) {
            const uint64_t *fp = (const uint64_t *)(uintptr_t)r->bp;
            uint64_t sender = fp[-1];
            cand[nc++] = (struct rp_frame_regs){fp[1], sender > r->bp ? sender : r->bp + 16,
                                                fp[0], 1};
        }
        uint64_t r13 = (uint64_t)uc->uc_mcontext.gregs[REG_R13];
        uint64_t csp = r13 > r->sp && r13 - r->sp < MAX_STEP_BYTES ? r13 : r->sp + 8;
        cand[nc++] = (struct rp_frame_regs){*(const uint64_t *)(uintptr_t)r->sp, csp, r->bp, 1};
        cand[nc++] = (struct rp_frame_regs){(uint64_t)uc->uc_mcontext.gregs[REG_RAX], csp,
                                            r->bp, 1};
        for (int i = 0; i < nc; i++) {
            if (!after_call(cand[i].pc))
                continue;
            int k = agct_from(env, java + 1, max - 1, uc, &cand[i]);
            if (k > 0) {
                java[0].bci = 0;
                java[0].pad = 0;
                java[0].method = im;
                bump(&g_interp_entry);
                return k + 1;
            }
        }
    }
    /* In compiled code where AGCT gives up (a prologue or an epilogue): the
     * method itself, from its code blob, then its callers from the frame below. */
    struct rp_blob b;
    uint64_t m;
    if ((n == AGCT_UNKNOWN_JAVA || n == AGCT_NOT_WALKABLE_JAVA) && java_frame && max > 1 &&
        rp_codecache_blob(rp_frame_lookup_pc(r), &b) == 0 && (m = rp_codecache_method(&b)) != 0) {
        struct rp_frame_regs caller;
        int cursor = 0;
        for (int tries = 0; tries < COMPILED_TRIES && step_compiled(&b, m, r, &cursor, &caller);
             tries++) {
            int k = agct_from(env, java + 1, max - 1, uc, &caller);
#ifdef RP_TEST_HOOKS
            out->tries[tries][0] = (int64_t)(caller.sp - r->sp);
            out->tries[tries][1] = k;
            out->ntries = tries + 1;
#endif
            if (k > 0) {
                java[0].bci = -1;
                java[0].pad = 0;
                java[0].method = m;
                bump(&g_compiled_popped);
                return k + 1;
            }
        }
    }
    return n;
}

void rp_stackwalk_abandon(struct rp_stackwalk_result *out)
{
    if (out->in_codecache) {
        out->in_codecache = 0;
        rp_codecache_leave();
    }
    if (out->anchor_moved) {
        *out->anchor.sp_slot = 0;
        atomic_signal_fence(memory_order_seq_cst);
        *out->anchor.fp_slot = out->saved_fp;
        *out->anchor.pc_slot = out->saved_pc;
        atomic_signal_fence(memory_order_seq_cst);
        *out->anchor.sp_slot = out->saved_sp;
        atomic_signal_fence(memory_order_seq_cst);
        out->anchor_moved = 0;
    }
}

/* The Java frames the thread's last callback took, if the thread is still in
 * the excursion into the VM it took them in (same anchor). */
static int kept_frames(JNIEnv *env, const struct rp_walk_agent *agent,
                       struct rp_java_frame *java, int max)
{
    struct rp_vm_anchor a;
    if (agent->kept_njava <= 0 || !agent->kept_anchor_sp ||
        rp_vmstructs_anchor(env, &a) != 0 || *a.sp_slot != agent->kept_anchor_sp)
        return 0;
    int nj = agent->kept_njava < max ? agent->kept_njava : max;
    memcpy(java, agent->java, (size_t)nj * sizeof *java);
    return nj;
}

#ifdef RP_TEST_HOOKS
/* The test build's record of the walks that found no Java frame, for a person
 * reading why (RINGPROF_WALKLOG=FILE: written at exit, one line each: AGCT's
 * code, the pc's offset in its blob, the blob's frame words and complete
 * offset, the registers, and the words above sp, each marked `c` if it is in
 * the code cache). */
#include <stdio.h>
#include <stdlib.h>
struct walk_failure {
    int code, fw, fc, ntries;
    int64_t tries[3][2];
    uint64_t pc, begin, sp, bp, words[24];
};
static struct walk_failure g_failures[512];
static _Atomic int g_nfailures;

static void failure_log(const struct rp_frame_regs *r, int code, int java_frame,
                        const struct rp_stackwalk_result *out)
{
    if (!java_frame)
        return;
    int i = atomic_fetch_add(&g_nfailures, 1);
    if (i >= (int)(sizeof g_failures / sizeof g_failures[0]))
        return;
    struct walk_failure *f = &g_failures[i];
    struct rp_blob b;
    f->code = code;
    f->ntries = out->ntries;
    memcpy(f->tries, out->tries, sizeof f->tries);
    f->pc = r->pc;
    f->sp = r->sp;
    f->bp = r->bp;
    if (rp_codecache_blob(rp_frame_lookup_pc(r), &b) == 0) {
        f->begin = b.code_begin;
        f->fw = b.frame_words;
        f->fc = b.frame_complete;
    }
    for (int k = 0; k < 24; k++)
        f->words[k] = ((const uint64_t *)(uintptr_t)r->sp)[k];
}

__attribute__((destructor)) static void failure_dump(void)
{
    const char *path = getenv("RINGPROF_WALKLOG");
    int n = atomic_load(&g_nfailures);
    if (!path || n == 0)
        return;
    FILE *o = fopen(path, "w");
    if (!o)
        return;
    n = n < 512 ? n : 512;
    for (int i = 0; i < n; i++) {
        struct walk_failure *f = &g_failures[i];
        fprintf(o, "%d pc=%#lx off=%#lx fw=%d fc=%d sp=%#lx bp=%#lx ip=", f->code,
                (unsigned long)f->pc, (unsigned long)(f->pc - f->begin), f->fw, f->fc,
                (unsigned long)f->sp, (unsigned long)f->bp);
        for (int k = 0; k < 8; k++)
            fprintf(o, "%02x", ((const uint8_t *)(uintptr_t)f->pc)[k]);
        for (int t = 0; t < f->ntries; t++)
            fprintf(o, " try(%ld:%ld)", (long)f->tries[t][0], (long)f->tries[t][1]);
        for (int k = 0; k < 24; k++) {
            int c = rp_codecache_contains(f->words[k]);
            fprintf(o, " %#lx%s", (unsigned long)f->words[k], c ? "c" : "");
            if (c) {
                const uint8_t *q = (const uint8_t *)(uintptr_t)f->words[k];
                fprintf(o, "[");
                for (int j = -7; j < 0; j++)
                    fprintf(o, "%02x", q[j]);
                fprintf(o, "]");
            }
        }
        fputc('\n', o);
    }
    fclose(o);
}
#endif

void rp_stackwalk(const ucontext_t *uc, JNIEnv *env, int native,
                  const struct rp_walk_agent *agent, int depth,
                  uint64_t *pcs, struct rp_java_frame *java,
                  struct rp_stackwalk_result *out)
{
    struct rp_frame_regs r;
    rp_frame_regs_from_uc(uc, &r);
    int n = 0, java_frame = 0, moved = 0;
    out->truncated = 0;
    out->anchor_moved = 0;
#ifdef RP_TEST_HOOKS
    out->ntries = 0;
#endif
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
    /* The agent's own code on the stack is its work even where no callback
     * said so (the first instructions of one, before it knows its slot). */
    int found = 0;
    n = drop_agent_frames(pcs, n, &found);
    out->agent = agent->work ? agent->work : found ? RP_AGENT_OTHER : RP_AGENT_NONE;
    out->nnative = native ? n : 0;
    out->njava = 0;
    out->status = RP_WALK_OK;
    if (!(native && out->truncated)) {        /* else no room for Java frames */
        int max = depth - out->nnative;
        out->truncated = 0;
        int nj;
        if (!env) {
            out->status = RP_WALK_NOT_JAVA;
        } else if (out->agent && agent->njava > 0) {
            /* In the agent's callback, which took its thread's Java stack
             * already: that is this sample's too. */
            nj = agent->njava < max ? agent->njava : max;
            memcpy(java, agent->java, (size_t)nj * sizeof *java);
            out->njava = nj;
            out->truncated = nj == max;
            bump(&g_from_callback);
        } else if (!g_agct) {
            out->status = RP_WALK_NO_AGCT;
        } else if ((nj = java_frames(env, java, max, uc, &r, java_frame, moved, out)) > 0 ||
                   kept_frames(env, agent, java, max) > 0) {
            if (nj <= 0) {
                nj = kept_frames(env, agent, java, max);
                bump(&g_from_kept);
            }
            out->njava = nj;
            out->truncated = nj == max;
        } else {
            out->status = nj == 0 ? RP_WALK_NO_JAVA_FRAMES : nj;
            /* Where the Java walk could not start is worth showing: the
             * compiled method, as a Java frame with no callers where its code
             * blob names it, else its code or the interpreter as a native pc
             * (named by the flusher). The stack keeps its error marker. */
            struct rp_blob b;
            uint64_t m;
#ifdef RP_TEST_HOOKS
            failure_log(&r, nj, java_frame, out);
#endif
            if (java_frame && max > 0 && rp_codecache_blob(rp_frame_lookup_pc(&r), &b) == 0 &&
                (m = rp_codecache_method(&b)) != 0) {
                java[0].bci = -1;
                java[0].pad = 0;
                java[0].method = m;
                out->njava = 1;
            } else if (java_frame && native && out->nnative < depth) {
                pcs[out->nnative++] = rp_frame_lookup_pc(&r);
            }
        }
    }
    rp_stackwalk_abandon(out);
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
    out->anchor_moved = atomic_load(&g_anchor_moved);
    out->compiled_popped = atomic_load(&g_compiled_popped);
    out->from_callback = atomic_load(&g_from_callback);
    out->interp_entry = atomic_load(&g_interp_entry);
    out->from_kept = atomic_load(&g_from_kept);
}

/* The walk counters, in the chunk's order (docs/format.md). */
static const char *const WALK_COUNTERS[] = {
    "walk.stub_frames", "walk.stub_stuck", "walk.from_frame", "walk.from_context",
    "walk.anchor_fixed", "walk.anchor_moved", "walk.compiled_popped",
    "walk.from_callback", "walk.interp_entry", "walk.from_kept",
};

static void walk_counters_read(uint64_t *v)
{
    struct rp_stackwalk_stats s;
    rp_stackwalk_stats(&s);
    const uint64_t now[] = {s.stub_frames, s.stub_stuck, s.from_frame, s.from_context,
                            s.anchor_fixed, s.anchor_moved, s.compiled_popped,
                            s.from_callback, s.interp_entry, s.from_kept};
    _Static_assert(sizeof now / sizeof now[0] ==
                   sizeof WALK_COUNTERS / sizeof WALK_COUNTERS[0], "WALK_COUNTERS");
    memcpy(v, now, sizeof now);
}

void rp_stackwalk_counters_register(void)
{
    rp_counters_register(RP_COUNTERS_WALK, WALK_COUNTERS,
                         sizeof WALK_COUNTERS / sizeof WALK_COUNTERS[0], walk_counters_read);
}
