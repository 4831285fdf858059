/*
 * tests/agent/test_unwind.c — the handler's native walker against libunwind.
 *
 * src/walk/unwind.c walks native stacks inside the CPU-timer signal handler from frame
 * tables it builds off the hot path (libunwind takes locks; see unwind.h). This
 * test takes libunwind as the oracle, in two parts:
 *
 * - Crafted CFI. Functions written in assembly with the CFI directives compilers
 *   and hand-written code use (def_cfa_offset, def_cfa_register, remember/restore
 *   state, nested; advance_loc, advance_loc1, 2 and 4; an undefined return
 *   address; lengths that would wrap a reader's pointer) and every stub of this
 *   executable's PLT at every byte offset are walked from made-up registers over a
 *   made-up stack; the caller's rip, rsp and rbp must be what the CFI says (worked
 *   out here by hand) and what libunwind finds. A library loaded and unloaded
 *   meanwhile must get its own table without any other being rebuilt.
 * - Sampling. Worker threads run call chains 16 to 40 frames deep that alternate
 *   between this executable and a second object (unwind_peer.c: each call through
 *   the PLT, each call back through a pointer), ending in leaf work in libc
 *   (qsort with a callback, memmove, strlen), libm, libz, a PLT-heavy loop or a
 *   plain loop. A CPU timer interrupts them and, in the handler, both walkers
 *   unwind the same ucontext. Every frame of every sample must agree; the walk
 *   must not end in these objects more than one frame before libunwind's (at the
 *   thread's outermost frame libunwind may take one more step); nearly every
 *   sample must be deeper than the shortest chain; and each of libc, libm, libz
 *   and the peer must be the leaf of some samples, so that their tables are known
 *   to be walked.
 *
 * libunwind's locks are harmless here: nothing else in this process unwinds.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../../src/code/codemap.h"
#include "../../src/walk/unwind.h"
#include "unwind_peer.h"

#define MAXF 128
#define THREADS 3
#define MIN_CHAIN 16

/* ------------------------------------------------------------ the objects -- */

/* The executable segments of the objects whose frames are counted. */
enum { OBJ_EXE, OBJ_PEER, OBJ_LIBC, OBJ_LIBM, OBJ_LIBZ, NOBJ };
static const char *const obj_names[NOBJ] = {"test_unwind", "librp_unwind_peer", "libc",
                                            "libm", "libz"};
static uint64_t obj_lo[NOBJ], obj_hi[NOBJ];

static int find_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size; (void)arg;
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    int k = -1;
    if (!base)
        k = OBJ_EXE;
    for (int i = OBJ_PEER; i < NOBJ && k < 0; i++) {
        size_t len = strlen(obj_names[i]);
        if (strncmp(base, obj_names[i], len) == 0 && base[len] == '.')
            k = i;
    }
    for (int i = 0; k >= 0 && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            obj_lo[k] = info->dlpi_addr + ph->p_vaddr;
            obj_hi[k] = obj_lo[k] + ph->p_memsz;
        }
    }
    return 0;
}

static int object_of(uint64_t pc)
{
    for (int i = 0; i < NOBJ; i++)
        if (pc >= obj_lo[i] && pc < obj_hi[i])
            return i;
    return -1;
}

/* ------------------------------------------------------------ the handler -- */

static _Atomic long samples, mismatches, short_walks, deep, ours_total, leaf_in[NOBJ];
static _Atomic int stop;
/* The first bad walk, kept by the handler and printed (with symbols) by main. */
static _Atomic int reported;
static const char *report_what;
static uint64_t report_ours[MAXF], report_theirs[MAXF];
static int report_n, report_m;

static void report_walk(const char *what, const uint64_t *ours, int n, const uint64_t *theirs,
                        int m)
{
    if (atomic_exchange(&reported, 1))
        return;
    report_what = what;
    memcpy(report_ours, ours, (size_t)n * sizeof ours[0]);
    memcpy(report_theirs, theirs, (size_t)m * sizeof theirs[0]);
    report_n = n;
    report_m = m;
}

static const char *symbol(uint64_t pc, char *buf, size_t cap)
{
    Dl_info di;
    if (!pc || !dladdr((void *)(uintptr_t)pc, &di))
        return "";
    const char *obj = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
    snprintf(buf, cap, "%s!%s", obj ? obj + 1 : "?", di.dli_sname ? di.dli_sname : "?");
    return buf;
}

static void print_report(void)
{
    printf("%s: ours %d frames, libunwind %d:\n", report_what, report_n, report_m);
    for (int i = 0; i < (report_n > report_m ? report_n : report_m); i++) {
        char a[256], b[256];
        uint64_t o = i < report_n ? report_ours[i] : 0, t = i < report_m ? report_theirs[i] : 0;
        printf("  %2d  %016llx %-40s  %016llx %s\n", i, (unsigned long long)o,
               symbol(o, a, sizeof a), (unsigned long long)t, symbol(t, b, sizeof b));
    }
}

static void on_prof(int sig, siginfo_t *si, void *ctx)
{
    (void)sig; (void)si;
    int saved = errno;
    ucontext_t *uc = ctx;
    uint64_t ours[MAXF], theirs[MAXF];
    int trunc;
    int n = rp_unwind_walk(uc, ours, MAXF, &trunc);

    unw_cursor_t cur;
    int m = 0;
    if (unw_init_local2(&cur, uc, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip;
            unw_get_reg(&cur, UNW_REG_IP, &ip);
            if (ip == 0)
                break;
            theirs[m] = m == 0 ? ip : ip - 1;
            m++;
        } while (m < MAXF && unw_step(&cur) > 0);
    }
    samples++;
    ours_total += n;
    if (n >= MIN_CHAIN)
        deep++;
    if (n > 0 && object_of(ours[0]) >= 0)
        leaf_in[object_of(ours[0])]++;
    /* libunwind may take one more step than we do at the outermost frame (it
     * reports clone3's caller as 0 or stops a frame later): compare what we have. */
    int bad = n == 0 || n > m;
    for (int i = 0; !bad && i < n; i++)
        if (ours[i] != theirs[i])
            bad = 1;
    if (bad) {
        mismatches++;
        report_walk("mismatch", ours, n, theirs, m);
    } else if (n < m - 1 && object_of(ours[n - 1]) >= 0) {
        /* Ended early in an object whose every function has an FDE. (libunwind
         * walks on through code without one by following rbp: ASan's runtime,
         * preloaded in sanitizer builds, has some.) */
        short_walks++;
        report_walk("short walk", ours, n, theirs, m);
    }
    errno = saved;
}

/* ------------------------------------------------------------- the chains -- */

static __thread int spin_cmp;

static int cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    /* Some work in the callback, so that samples land in it, under qsort. */
    for (volatile int i = 0; i < spin_cmp; i++)
        ;
    return x < y ? -1 : x > y;
}

static __attribute__((noinline)) uint64_t leaf_spin(uint64_t x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ull + 1;
    return x;
}

static __attribute__((noinline)) uint64_t libc_work(uint64_t x, char *buf, uint32_t *arr)
{
    for (int i = 0; i < 4096; i++)
        arr[i] = (uint32_t)(x = x * 6364136223846793005ull + 1442695040888963407ull);
    spin_cmp = (int)(x >> 62);
    qsort(arr, 4096, sizeof *arr, cmp);
    memmove(buf + 1, buf, 65536);
    memset(buf, 'a' + (int)(x & 7), 65535);
    buf[65535] = 0;
    return x + strlen(buf);
}

static __attribute__((noinline)) uint64_t plt_loop(uint64_t x)
{
    for (int i = 0; i < 100000; i++)
        x = rp_peer_tiny(x);
    return x;
}

static __thread struct work {
    char buf[65537];
    uint32_t arr[4096];
    unsigned char zin[32768], zout[40000];
} tw;

static uint64_t chain(int depth, uint64_t x);

static __attribute__((noinline)) uint64_t leaf(uint64_t x)
{
    switch (x % 6) {
    case 0: return leaf_spin(x);
    case 1: return libc_work(x, tw.buf, tw.arr);
    case 2: return rp_peer_math(x);
    case 3: return rp_peer_zlib(x, tw.zin, tw.zout, sizeof tw.zin);
    case 4: return plt_loop(x);
    default: return libc_work(x, tw.buf, tw.arr) + rp_peer_math(x);
    }
}

/* Even depths here, odd ones in the peer, which calls back. */
static __attribute__((noinline)) uint64_t chain(int depth, uint64_t x)
{
    if (depth == 0)
        return leaf(x);
    if (depth & 1)
        return rp_peer_chain(depth, x, chain) + 1;
    volatile uint64_t keep = chain(depth - 1, x + (uint64_t)depth);
    return keep;
}

static void *worker(void *arg)
{
    timer_t t;
    struct sigevent sev = {0};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    clockid_t clk;
    pthread_getcpuclockid(pthread_self(), &clk);
    if (timer_create(clk, &sev, &t) != 0) {
        perror("timer_create");
        exit(1);
    }
    struct itimerspec its = {{0, 1000000}, {0, 1000000}};
    timer_settime(t, 0, &its, NULL);
    uint64_t x = (uint64_t)(uintptr_t)arg * 7919 + 1;
    while (!stop) {
        uint64_t r = x * 6364136223846793005ull + 1442695040888963407ull;
        x = chain(MIN_CHAIN + (int)((r >> 33) % (40 - MIN_CHAIN + 1)), r);
    }
    timer_delete(t);
    return (void *)(uintptr_t)(x & 0);
}

/* -------------------------------------------------------- this executable -- */

static int exe_base(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(uint64_t *)arg = info->dlpi_addr;
    return 1;                       /* the first entry is the executable */
}

/* The address and size of section `name` of this executable, from its section
 * headers (the address as loaded). @return 0, or -1. */
static int find_section(const char *name, uint64_t *addr, uint64_t *size)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    ElfW(Ehdr) eh;
    ElfW(Shdr) sh[128], strs;
    char names[4096];
    int rc = -1;
    if (fd < 0)
        return -1;
    if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_shnum <= 128 &&
        pread(fd, sh, eh.e_shnum * sizeof sh[0], (off_t)eh.e_shoff) ==
            (ssize_t)(eh.e_shnum * sizeof sh[0])) {
        strs = sh[eh.e_shstrndx];
        ssize_t k = pread(fd, names, sizeof names - 1, (off_t)strs.sh_offset);
        names[k > 0 ? k : 0] = 0;
        for (int i = 0; k > 0 && i < eh.e_shnum; i++)
            if (sh[i].sh_name < (size_t)k && strcmp(names + sh[i].sh_name, name) == 0) {
                uint64_t base = 0;
                dl_iterate_phdr(exe_base, &base);
                *addr = base + sh[i].sh_addr;
                *size = sh[i].sh_size;
                rc = 0;
            }
    }
    close(fd);
    return rc;
}

/* ----------------------------------------------------------- crafted CFI -- */

/* rp_test_cfi: one FDE whose rows change in every way the table builder must
 * follow. Its code is never run: only its pcs are walked from. Row by row (offsets
 * from the start; the advance each row needs in brackets):
 *   A   0      CFA rsp+8 (the CIE's rule), rbp unchanged
 *   B   1      CFA rsp+16, rbp saved at CFA-16           [advance_loc 1]
 *   C   4      CFA rbp+16, rbp at CFA-16                 [advance_loc 3]
 *   D   104    remember; CFA rsp+8, rbp restored (same)  [advance_loc1 100]
 *   D2  144    remember again; CFA rsp+24                [advance_loc 40]
 *   D3  444    restore: D again                          [advance_loc2 300]
 *   E   452    restore: C again                          [advance_loc 8]
 *   F   70452  CFA rsp+48, rbp at CFA-24                 [advance_loc4 70000]
 *   G   70460  CFA rsp+4104 (def_cfa_offset only)        [advance_loc 8]
 *   H   70468  return address undefined: outermost       [advance_loc 8]
 * and the function ends at 70476. rp_test_outer is an outermost frame (return
 * address undefined), the caller of the made-up frames of the PLT test; the
 * ordinary function right after it must not change that (the builder gives short
 * holes between FDEs the next function's entry rule, but not an FDE's own rows). */
__asm__(".text\n"
        "rp_test_cfi:\n"
        ".cfi_startproc\n"
        ".Lcfi_a: nop\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        ".Lcfi_b: .skip 3, 0x90\n"
        ".cfi_def_cfa_register %rbp\n"
        ".Lcfi_c: .skip 100, 0x90\n"
        ".cfi_remember_state\n"
        ".cfi_def_cfa %rsp, 8\n"
        ".cfi_restore %rbp\n"
        ".Lcfi_d: .skip 40, 0x90\n"
        ".cfi_remember_state\n"
        ".cfi_def_cfa_offset 24\n"
        ".Lcfi_d2: .skip 300, 0x90\n"
        ".cfi_restore_state\n"
        ".Lcfi_d3: .skip 8, 0x90\n"
        ".cfi_restore_state\n"
        ".Lcfi_e: .skip 70000, 0x90\n"
        ".cfi_def_cfa %rsp, 48\n"
        ".cfi_offset %rbp, -24\n"
        ".Lcfi_f: .skip 8, 0x90\n"
        ".cfi_def_cfa_offset 4104\n"
        ".Lcfi_g: .skip 8, 0x90\n"
        ".cfi_undefined %rip\n"
        ".Lcfi_h: .skip 7, 0x90\n"
        "ret\n"
        ".Lcfi_end:\n"
        ".cfi_endproc\n"
        "rp_test_outer:\n"
        ".cfi_startproc\n"
        ".cfi_undefined %rip\n"
        "nop\n nop\n nop\n ret\n"
        ".cfi_endproc\n"
        "rp_test_after:\n"
        ".cfi_startproc\n"
        "nop\n ret\n"
        ".cfi_endproc\n"
        ".section .data.rel.ro,\"aw\"\n"
        ".balign 8\n"
        "rp_test_cfi_rows:\n"
        ".quad .Lcfi_a, .Lcfi_b, .Lcfi_c, .Lcfi_d, .Lcfi_d2, .Lcfi_d3, .Lcfi_e\n"
        ".quad .Lcfi_f, .Lcfi_g, .Lcfi_h, .Lcfi_end, rp_test_outer\n"
        ".text\n");
extern const uint64_t rp_test_cfi_rows[12];

enum { ROW_A, ROW_B, ROW_C, ROW_D, ROW_D2, ROW_D3, ROW_E, ROW_F, ROW_G, ROW_H, NROWS };
static const char row_names[NROWS][3] = {"A", "B", "C", "D", "D2", "D3", "E", "F", "G", "H"};

/* The made-up stack: word i holds FAKE + 8 i, an address in no object, so a walk
 * that takes it as a return address stops there with RP_UNWIND_NOT_NATIVE, the
 * caller's registers in hand. */
#define FAKE 0x100000ull
static uint64_t fake[1024];

/* What the CFI says the caller's registers are, from a frame in row `row` with
 * sp = &fake[8] and bp = &fake[512]. @return 0 if the row ends the walk. */
static int expected(int row, uint64_t sp, uint64_t bp, uint64_t *cfa, uint64_t *rbp)
{
    static const int64_t cfa_sp[NROWS] = {8, 16, 0, 8, 24, 8, 0, 48, 4104, 0};
    static const int64_t bp_at[NROWS] = {0, -16, -16, 0, 0, 0, -16, -24, -24, 0};
    if (row == ROW_H)
        return 0;
    *cfa = row == ROW_C || row == ROW_E ? bp + 16 : sp + (uint64_t)cfa_sp[row];
    *rbp = bp_at[row] ? *(const uint64_t *)(uintptr_t)(*cfa + (uint64_t)bp_at[row]) : bp;
    return 1;
}

/* libunwind's view of the caller of the frame at pc/sp/bp: @return 1 and its
 * registers, or 0 if libunwind takes no step. */
static int oracle_step(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *ip, uint64_t *osp,
                       uint64_t *obp)
{
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)bp;
    unw_cursor_t cur;
    unw_word_t v;
    if (unw_init_local2(&cur, &uc, UNW_INIT_SIGNAL_FRAME) != 0 || unw_step(&cur) <= 0)
        return 0;
    unw_get_reg(&cur, UNW_REG_IP, &v);
    *ip = v;
    unw_get_reg(&cur, UNW_X86_64_RSP, &v);
    *osp = v;
    unw_get_reg(&cur, UNW_X86_64_RBP, &v);
    *obp = v;
    return 1;
}

/* Walk from pc (in row `row`) and check the registers it leaves against the CFI
 * and against libunwind. @return 1 if they disagree. */
static int check_row(int row, uint64_t pc)
{
    uint64_t sp = (uint64_t)(uintptr_t)&fake[8], bp = (uint64_t)(uintptr_t)&fake[512];
    struct rp_frame_regs r = {pc, sp, bp, 0};
    uint64_t pcs[4];
    enum rp_unwind_end end;
    int n = rp_unwind_native(&r, pcs, 4, &end);
    uint64_t cfa = 0, rbp = 0, ip, osp, obp;
    int steps = expected(row, sp, bp, &cfa, &rbp);
    int theirs = oracle_step(pc, sp, bp, &ip, &osp, &obp);
    if (n != 1 || pcs[0] != pc) {
        printf("FAIL: crafted CFI row %s at +%llu: %d frames\n", row_names[row],
               (unsigned long long)(pc - rp_test_cfi_rows[0]), n);
        return 1;
    }
    if (!steps) {
        if (end != RP_UNWIND_STOPPED || r.pc != pc || r.sp != sp || r.bp != bp ||
            r.is_return || theirs) {
            printf("FAIL: crafted CFI row %s at +%llu: the walk should end there "
                   "(end %d, libunwind %s)\n", row_names[row],
                   (unsigned long long)(pc - rp_test_cfi_rows[0]), (int)end,
                   theirs ? "steps" : "stops");
            return 1;
        }
        return 0;
    }
    uint64_t ra = *(const uint64_t *)(uintptr_t)(cfa - 8);
    if (end != RP_UNWIND_NOT_NATIVE || r.pc != ra || r.sp != cfa || r.bp != rbp ||
        !r.is_return || !theirs || ip != ra || osp != cfa || obp != rbp) {
        printf("FAIL: crafted CFI row %s at +%llu: caller pc %#llx sp %#llx bp %#llx "
               "(end %d); the CFI says %#llx %#llx %#llx; libunwind %s %#llx %#llx %#llx\n",
               row_names[row], (unsigned long long)(pc - rp_test_cfi_rows[0]),
               (unsigned long long)r.pc, (unsigned long long)r.sp, (unsigned long long)r.bp,
               (int)end, (unsigned long long)ra, (unsigned long long)cfa,
               (unsigned long long)rbp, theirs ? "" : "(no step)", (unsigned long long)ip,
               (unsigned long long)osp, (unsigned long long)obp);
        return 1;
    }
    return 0;
}

/* Every row at its first and last byte, and a byte in the middle. */
static int test_crafted_rows(void)
{
    for (int i = 0; i < 1024; i++)
        fake[i] = FAKE + 8 * (uint64_t)i;
    int bad = 0;
    for (int row = 0; row < NROWS; row++) {
        uint64_t lo = rp_test_cfi_rows[row], hi = rp_test_cfi_rows[row + 1] - 1;
        bad |= check_row(row, lo);
        bad |= check_row(row, lo + (hi - lo) / 2);
        bad |= check_row(row, hi);
    }
    return bad;
}

/* ------------------------------------------------------------------- PLT -- */

/* A frame at every byte of every stub of this executable's lazy PLT (PLT0 too),
 * called from rp_test_outer: the walk must take two frames, leaving the CFA the
 * PLT's CFI gives (rsp+16, then rsp+24 from PLT0's byte 6; rsp+8 in a stub, then
 * rsp+16 from byte 11, after its push), as libunwind does. */
static int test_plt(void)
{
    uint64_t plt, size;
    if (find_section(".plt", &plt, &size) < 0 || size < 32) {
        printf("FAIL: this executable has no .plt section\n");
        return 1;
    }
    uint64_t ra = rp_test_cfi_rows[11] + 2;
    for (int i = 0; i < 1024; i++)
        fake[i] = ra;
    uint64_t sp = (uint64_t)(uintptr_t)&fake[8], bp = (uint64_t)(uintptr_t)&fake[512];
    int bad = 0;
    for (uint64_t pc = plt; pc < plt + size && !bad; pc++) {
        uint64_t o = (pc - plt) & 15;
        uint64_t cfa = sp + (pc - plt < 16 ? (o < 6 ? 16 : 24) : (o < 11 ? 8 : 16));
        struct rp_frame_regs r = {pc, sp, bp, 0};
        uint64_t pcs[4], ip = 0, osp = 0, obp = 0;
        enum rp_unwind_end end;
        int n = rp_unwind_native(&r, pcs, 4, &end);
        int theirs = oracle_step(pc, sp, bp, &ip, &osp, &obp);
        if (n != 2 || pcs[0] != pc || pcs[1] != ra - 1 || end != RP_UNWIND_STOPPED ||
            r.sp != cfa || r.pc != ra || !theirs || ip != ra || osp != cfa) {
            printf("FAIL: PLT +%llu: %d frames, caller sp %#llx; the CFI says %#llx, "
                   "libunwind %#llx\n", (unsigned long long)(pc - plt), n,
                   (unsigned long long)r.sp, (unsigned long long)cfa, (unsigned long long)osp);
            bad = 1;
        }
    }
    return bad;
}

/* Functions whose CFI gives a length that would wrap the reader's pointer: a
 * DW_CFA_def_cfa_expression, a DW_CFA_expression and a DW_CFA_val_expression of
 * minus the instruction's own size, first thing in the FDE (so every pc of the
 * function runs it). A walker that adds the length without checking it wraps
 * back to the start of the same instruction and runs it again, forever. The linker refuses such CFI (it parses .eh_frame to
 * build .eh_frame_hdr), so the lengths are assembled as a 10-byte zero
 * (0x80 x 9, 0x00) and patched in at run time by wrap_patch. */
__asm__(".text\n"
        "rp_test_wrap_cfa:\n"
        ".cfi_startproc\n"
        ".cfi_escape 0x0f,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x00\n"
        "nop\n nop\n ret\n"
        ".cfi_endproc\n"
        "rp_test_wrap_expr:\n"
        ".cfi_startproc\n"
        ".cfi_escape 0x10,0x06,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x00\n"
        "nop\n nop\n ret\n"
        ".cfi_endproc\n"
        "rp_test_wrap_val_expr:\n"
        ".cfi_startproc\n"
        ".cfi_escape 0x16,0x06,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x00\n"
        "nop\n nop\n ret\n"
        ".cfi_endproc\n"
        ".globl rp_test_wrap_ptrs\n"
        ".section .data.rel.ro,\"aw\"\n"
        ".balign 8\n"
        "rp_test_wrap_ptrs:\n"
        ".quad rp_test_wrap_cfa, rp_test_wrap_expr, rp_test_wrap_val_expr\n"
        ".text\n");
extern const uint64_t rp_test_wrap_ptrs[3];

static const uint8_t wrap_zero[10] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                       0x80, 0x00};
/* -11 and -12 as 64-bit ulebs: back over the 11-byte def_cfa_expression or the
 * 12-byte (val_)expression that holds them. */
static const uint8_t wrap_huge[2][10] = {
    {0xf5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
    {0xf4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}};

/* Patch the three placeholder lengths in this executable's .eh_frame (which is
 * read-only: made writable for the while). Only .eh_frame is searched: the rest of
 * its segment holds read-only data, under ASan with redzones between variables.
 * @return patches made. */
static int patch_eh_frame(void)
{
    uint64_t start, size;
    if (find_section(".eh_frame", &start, &size) < 0)
        return 0;
    uint64_t end = start + size, pg = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t a = start & ~(pg - 1), len = end - a;
    if (mprotect((void *)(uintptr_t)a, len, PROT_READ | PROT_WRITE) != 0)
        return 0;
    int patched = 0;
    for (uint8_t *p = (uint8_t *)(uintptr_t)start + 2; p + 10 <= (uint8_t *)(uintptr_t)end; p++)
        if (memcmp(p, wrap_zero, 10) == 0 &&
            (p[-1] == 0x0f || (p[-1] == 0x06 && (p[-2] == 0x10 || p[-2] == 0x16)))) {
            memcpy(p, wrap_huge[p[-1] == 0x0f ? 0 : 1], 10);
            patched++;
        }
    mprotect((void *)(uintptr_t)a, len, PROT_READ);
    return patched;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: the walker or the table builder loops on a "
                              "wrapping CFI length\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

/* Each crafted function's frame is recorded, then the walk stops there. The CFI is
 * patched before the first rp_codemap_refresh, which builds the tables: the table
 * builder is what must not loop. */
static int test_wrapping_lengths(void)
{
    int patched = patch_eh_frame();
    if (patched != 3) {
        printf("FAIL: %d of the 3 crafted CFI lengths patched\n", patched);
        return 1;
    }
    signal(SIGALRM, on_alarm);
    alarm(5);
    if (rp_codemap_refresh() != 1) {
        printf("FAIL: no module table\n");
        return 1;
    }
    int bad = 0;
    uint64_t stack[64] = {0};
    for (int i = 0; i < 3; i++) {
        ucontext_t uc;
        memset(&uc, 0, sizeof uc);
        uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(rp_test_wrap_ptrs[i] + 1);
        uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)&stack[8];
        uc.uc_mcontext.gregs[REG_RBP] = (greg_t)(uintptr_t)&stack[16];
        uint64_t pcs[8];
        int trunc = 0;
        int n = rp_unwind_walk(&uc, pcs, 8, &trunc);
        if (n != 1 || pcs[0] != rp_test_wrap_ptrs[i] + 1) {
            printf("FAIL: crafted CFI %d: %d frames\n", i, n);
            bad = 1;
        }
    }
    alarm(0);
    return bad;
}

/* ------------------------------------------------------- table reuse -- */

struct late {
    const char *path;
    uint64_t pc;
};

static int find_late(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct late *l = arg;
    if (!info->dlpi_name || strcmp(info->dlpi_name, l->path) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X))
            l->pc = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    return 1;
}

/* A dlopen builds the new library's table and keeps every other one; a dlclose
 * drops the library's segment and keeps the rest. The tables' build times are
 * nanosecond clock readings, so the totals match only if no table was rebuilt. */
static int test_refresh_keeps_tables(const char *path)
{
    struct rp_unwind_stats before, after, late, closed;
    rp_unwind_stats(&before);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    struct late l = {path, 0};
    if (!h || (dl_iterate_phdr(find_late, &l), !l.pc)) {
        printf("FAIL: cannot load %s\n", path);
        return 1;
    }
    int rc = rp_codemap_refresh();
    rp_unwind_stats(&after);
    if (rc != 1 || rp_unwind_stats_at(l.pc, &late) < 0 || late.fdes == 0 ||
        after.segments != before.segments + 1 || after.fdes != before.fdes + late.fdes ||
        after.build_ns != before.build_ns + late.build_ns) {
        printf("FAIL: after dlopen: refresh %d, %llu segments (%llu before), build time "
               "%llu ns (%llu before, %llu for the new table)\n", rc,
               (unsigned long long)after.segments, (unsigned long long)before.segments,
               (unsigned long long)after.build_ns, (unsigned long long)before.build_ns,
               (unsigned long long)late.build_ns);
        return 1;
    }
    dlclose(h);
    rc = rp_codemap_refresh();
    rp_unwind_stats(&closed);
    if (rc != 1 || rp_unwind_is_native(l.pc) || closed.segments != before.segments ||
        closed.build_ns != before.build_ns) {
        printf("FAIL: after dlclose: refresh %d, %llu segments (%llu before), build time "
               "%llu ns (%llu before)\n", rc, (unsigned long long)closed.segments,
               (unsigned long long)before.segments, (unsigned long long)closed.build_ns,
               (unsigned long long)before.build_ns);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_unwind LIBRARY.so (tests/agent/unwind_late.c)\n");
        return 2;
    }
    if (test_wrapping_lengths())
        return 1;
    dl_iterate_phdr(find_objects, NULL);
    for (int i = 0; i < NOBJ; i++)
        if (!obj_lo[i]) {
            printf("FAIL: %s is not loaded\n", obj_names[i]);
            return 1;
        }
    if (test_crafted_rows() | test_plt() | test_refresh_keeps_tables(argv[1]))
        return 1;
    struct rp_unwind_stats st;
    rp_unwind_stats(&st);
    printf("test_unwind: tables of %llu segments: %llu FDEs, %llu rows, %llu bytes\n",
           (unsigned long long)st.segments, (unsigned long long)st.fdes,
           (unsigned long long)st.rows, (unsigned long long)st.bytes);

    struct sigaction sa = {0};
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
    /* At least 2 s, and until every object has been the leaf of 5 samples (at
     * most 20 s: a loaded machine gives the workers little CPU). */
    for (int t = 0; t < 200; t++) {
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
        int all = 1;
        for (int i = 0; i < NOBJ; i++)
            all &= leaf_in[i] >= 5;
        if (t >= 20 && all)
            break;
    }
    stop = 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    printf("test_unwind: %ld samples, %ld mismatches, %ld shorter than libunwind's, "
           "%ld with >= %d frames, %.1f frames on average\n", (long)samples,
           (long)mismatches, (long)short_walks, (long)deep, MIN_CHAIN,
           samples ? (double)ours_total / (double)samples : 0.0);
    printf("test_unwind: leaf frame in");
    for (int i = 0; i < NOBJ; i++)
        printf(" %s %ld%s", obj_names[i], (long)leaf_in[i], i + 1 < NOBJ ? "," : "\n");
    if (mismatches || short_walks)
        print_report();
    int bad = 0;
    if (samples < 50) {
        printf("FAIL: too few samples\n");
        bad = 1;
    }
    if (mismatches) {
        printf("FAIL: the walker disagrees with libunwind\n");
        bad = 1;
    }
    if (short_walks) {
        printf("FAIL: the walker stopped before libunwind did\n");
        bad = 1;
    }
    if (deep * 10 < samples * 9) {
        printf("FAIL: fewer than 90%% of the samples are deeper than the call chain\n");
        bad = 1;
    }
    for (int i = 0; i < NOBJ; i++)
        if (leaf_in[i] < 5) {
            printf("FAIL: only %ld samples with the leaf in %s\n", (long)leaf_in[i],
                   obj_names[i]);
            bad = 1;
        }
    return bad;
}
