/*
 * tests/agent/test_unwind.c — the handler's native walker against libunwind.
 *
 * src/unwind.c walks native stacks inside the CPU-timer signal handler with its own
 * lock-free CFI interpreter (libunwind takes locks; see unwind.h). This test takes
 * libunwind as the oracle: worker threads run C call chains through code with
 * every kind of CFI the walker meets in practice (leaf functions, frames with and
 * without rbp, remember/restore_state epilogues in libc's qsort, memmove and
 * strlen), a CPU timer interrupts them, and in the handler both walkers unwind the
 * same ucontext. Every frame of every sample must agree, and most samples must be
 * deeper than the chain. libunwind's locks are harmless here: nothing else in this
 * process unwinds.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <errno.h>
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

#include "../../src/unwind.h"

#define MAXF 128
#define THREADS 3

static _Atomic long samples, mismatches, deep, ours_total;
static _Atomic int stop;
static char report[4096];
static _Atomic int reported;

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
    if (n >= 6)
        deep++;
    /* libunwind may take one more step than we do at the outermost frame (it
     * reports clone3's caller as 0 or stops a frame later): compare what we have. */
    int bad = n == 0 || n > m;
    for (int i = 0; !bad && i < n; i++)
        if (ours[i] != theirs[i])
            bad = 1;
    if (bad) {
        mismatches++;
        if (!atomic_exchange(&reported, 1)) {
            int off = snprintf(report, sizeof report, "ours %d frames, libunwind %d:\n", n, m);
            for (int i = 0; i < (n > m ? n : m) && off < (int)sizeof report - 64; i++)
                off += snprintf(report + off, sizeof report - (size_t)off,
                                "  %2d  %016llx  %016llx\n", i,
                                i < n ? (unsigned long long)ours[i] : 0ull,
                                i < m ? (unsigned long long)theirs[i] : 0ull);
        }
    }
    errno = saved;
}

static int cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
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
    qsort(arr, 4096, sizeof *arr, cmp);
    memmove(buf + 1, buf, 65536);
    memset(buf, 'a' + (int)(x & 7), 65535);
    buf[65535] = 0;
    return x + strlen(buf);
}

static __attribute__((noinline)) uint64_t chain(int depth, uint64_t x, char *buf, uint32_t *arr)
{
    if (depth == 0)
        return (x & 1) ? leaf_spin(x) : libc_work(x, buf, arr);
    volatile uint64_t keep = chain(depth - 1, x + (uint64_t)depth, buf, arr);
    return keep;
}

static void *worker(void *arg)
{
    (void)arg;
    static __thread char buf[65537];
    static __thread uint32_t arr[4096];
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
    uint64_t x = 1;
    while (!stop)
        x = chain(5 + (int)(x % 4), x, buf, arr);
    timer_delete(t);
    return (void *)(uintptr_t)(x & 0);
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

/* Patch the three placeholder lengths in this executable's .eh_frame (in the
 * read-only PT_LOAD segment that holds PT_GNU_EH_FRAME). @return patches made. */
static int patch_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    int *patched = arg;
    if (info->dlpi_name && info->dlpi_name[0])
        return 0;                                   /* the executable only */
    uint64_t hdr = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    for (int i = 0; i < info->dlpi_phnum && hdr; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (ph->p_type != PT_LOAD || hdr < start || hdr >= end)
            continue;
        long pg = sysconf(_SC_PAGESIZE);
        uint64_t a = start & ~(uint64_t)(pg - 1);
        if (mprotect((void *)(uintptr_t)a, end - a, PROT_READ | PROT_WRITE) != 0)
            return 1;
        for (uint8_t *p = (uint8_t *)(uintptr_t)start + 2; p + 10 <= (uint8_t *)(uintptr_t)end;
             p++)
            if (memcmp(p, wrap_zero, 10) == 0 &&
                (p[-1] == 0x0f || (p[-1] == 0x06 && (p[-2] == 0x10 || p[-2] == 0x16)))) {
                memcpy(p, wrap_huge[p[-1] == 0x0f ? 0 : 1], 10);
                ++*patched;
            }
        mprotect((void *)(uintptr_t)a, end - a, PROT_READ);
        return 1;
    }
    return 0;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: the walker loops on a wrapping CFI length\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

/* Each crafted function's frame is recorded, then the walk stops there. */
static int test_wrapping_lengths(void)
{
    int patched = 0;
    dl_iterate_phdr(patch_segment, &patched);
    if (patched != 3) {
        printf("FAIL: %d of the 3 crafted CFI lengths patched\n", patched);
        return 1;
    }
    signal(SIGALRM, on_alarm);
    alarm(5);
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

int main(void)
{
    if (rp_unwind_refresh() != 1) {
        fprintf(stderr, "test_unwind: no module table\n");
        return 1;
    }
    if (test_wrapping_lengths())
        return 1;
    struct sigaction sa = {0};
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    struct timespec ts = {2, 0};
    nanosleep(&ts, NULL);
    stop = 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    printf("test_unwind: %ld samples, %ld mismatches, %ld with >= 6 frames, "
           "%.1f frames on average\n", (long)samples, (long)mismatches, (long)deep,
           samples ? (double)ours_total / (double)samples : 0.0);
    if (mismatches)
        fputs(report, stdout);
    if (samples < 50) {
        printf("FAIL: too few samples\n");
        return 1;
    }
    if (mismatches) {
        printf("FAIL: the walker disagrees with libunwind\n");
        return 1;
    }
    if (deep * 10 < samples * 9) {
        printf("FAIL: fewer than 90%% of the samples are deeper than the call chain\n");
        return 1;
    }
    return 0;
}
