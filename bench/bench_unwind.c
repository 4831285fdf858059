/*
 * bench/bench_unwind.c — what the native walker's frame tables cost: their size
 * and build time for given libraries (libjvm.so above all), and the time of a
 * lookup and of a walk, with warm and with cold caches. Prints figures; asserts
 * nothing.
 *
 *   build/bench/bench_unwind [LIBRARY.so ...]
 *
 * Default: the libjvm.so of the `java` on PATH. For each LIBRARY (loaded with
 * dlopen, RTLD_LAZY: nothing of it runs but its initialisers) it prints its
 * table's FDEs, rows, bytes (rows, page index and header), bytes per row, the FDEs
 * with a pc the table cannot unwind ("stop") and the CPU time of its build; then
 * the same for every segment of the process, and the CPU and wall time of the
 * whole rp_codemap_refresh (what the agent's start waits for). Each figure comes
 * from a fresh child process, as a table is built once per process; times are the
 * median of 5 children. Then, in this process:
 *   one frame   rp_unwind_native from a made-up frame at a random pc of the first
 *               library (its segment, its row, one step, and the caller found in
 *               no object): median of 4001, warm, and with L1 and L2 cold (16 MiB
 *               read in between, four times this machine's L2: the tables stay in
 *               L3, as between two samples 10 ms of CPU apart); p90 of the cold
 *   walk        rp_unwind_walk from inside a qsort callback 32 calls deep in this
 *               program (about 40 frames, this program's and libc's), warm and
 *               cold, median of 1001
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "ringprof/clock.h"
#include "../src/code/codemap.h"
#include "../src/walk/unwind.h"

#define ROUNDS 5

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct find {
    const char *path;
    uint64_t pc, end;
};

/* The start of the first executable segment of the object loaded from f->path. */
static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find *f = arg;
    /* dlopen records a name with a slash as given; one without, as found. */
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (strchr(f->path, '/')) {
        if (strcmp(name, f->path) != 0)
            return 0;
    } else {
        const char *base = strrchr(name, '/');
        if (strcmp(base ? base + 1 : name, f->path) != 0)
            return 0;
    }
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            f->pc = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            f->end = f->pc + info->dlpi_phdr[i].p_memsz;
            return 1;
        }
    return 0;
}

/* In a child: load the libraries, build, and write to fd `out` each one's stats,
 * the process's, and the refresh's wall time (in build_ns). */
static void child(int n, char **libs, int out)
{
    for (int i = 0; i < n; i++)
        if (!dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL)) {
            fprintf(stderr, "bench_unwind: %s\n", dlerror());
            _exit(1);
        }
    struct timespec c0, c1;
    uint64_t t0 = rp_mono_ns();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    if (rp_codemap_refresh() != 1)
        _exit(1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    uint64_t wall = rp_mono_ns() - t0;
    struct rp_unwind_stats s[65];
    for (int i = 0; i < n && i < 63; i++) {
        struct find f = {libs[i], 0, 0};
        dl_iterate_phdr(find_segment, &f);
        if (!f.pc || rp_unwind_stats_at(f.pc, &s[i]) < 0)
            _exit(1);
    }
    rp_unwind_stats(&s[n]);
    /* The whole refresh, dl_iterate_phdr included: its CPU time in the last row,
     * and its wall time after it. */
    s[n].build_ns = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000u +
                    (uint64_t)c1.tv_nsec - (uint64_t)c0.tv_nsec;
    memset(&s[n + 1], 0, sizeof s[0]);
    s[n + 1].build_ns = wall;
    size_t len = (size_t)(n + 2) * sizeof s[0];
    if (write(out, s, len) != (ssize_t)len)
        _exit(1);
    _exit(0);
}

static int run_child(int n, char **libs, struct rp_unwind_stats *s)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        child(n, libs, fd[1]);
    }
    close(fd[1]);
    size_t want = (size_t)(n + 2) * sizeof s[0], got = 0;
    ssize_t k;
    while (got < want && (k = read(fd[0], (char *)s + got, want - got)) > 0)
        got += (size_t)k;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    return got == want && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ walk timing -- */

#define WALKS 1001
static uint64_t walk_ns[WALKS], walk_cold_ns[WALKS];
static int walk_frames;
static volatile uint8_t *evict;
static size_t evict_bytes = 16u << 20;

/* Read 16 MiB: L1 and L2 (4 MiB here) hold none of what came before. */
static uint64_t evict_caches(void)
{
    uint64_t sink = 0;
    for (size_t k = 0; k < evict_bytes; k += 64)
        sink += evict[k];
    return sink;
}

static uint64_t time_walk(void)
{
    ucontext_t uc;
    uint64_t pcs[128];
    int trunc;
    getcontext(&uc);
    uint64_t t0 = rp_mono_ns();
    walk_frames = rp_unwind_walk(&uc, pcs, 128, &trunc);
    return rp_mono_ns() - t0;
}

static int by_value(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (walk_frames == 0) {
        /* Time walks from here: inside qsort, 32 frames of chain() below. */
        for (int i = 0; i < WALKS; i++)
            walk_ns[i] = time_walk();
        for (int i = 0; i < WALKS; i++) {
            walk_cold_ns[i] = evict_caches();
            walk_cold_ns[i] = time_walk() + (walk_cold_ns[i] == 1);
        }
    }
    return x < y ? -1 : x > y;
}

static __attribute__((noinline)) int chain(int depth)
{
    if (depth == 0) {
        int v[4] = {4, 3, 2, 1};
        qsort(v, 4, sizeof v[0], by_value);
        return v[0];
    }
    volatile int r = chain(depth - 1) + 1;
    return r;
}

/* --------------------------------------------------------- lookup timing -- */

/* One frame's lookup-and-step at pc, from a made-up stack whose words are no
 * object's addresses: the walk takes the frame, finds its row, steps, and stops at
 * the caller (RP_UNWIND_NOT_NATIVE). The stack reads are the same for any table
 * layout; the segment and row searches are what this times. */
static uint64_t fake[1024];

static uint64_t one_frame(uint64_t pc)
{
    struct rp_frame_regs r = {pc, (uint64_t)(uintptr_t)&fake[64],
                              (uint64_t)(uintptr_t)&fake[512], 0};
    uint64_t pcs[4];
    enum rp_unwind_end end;
    uint64_t t0 = rp_mono_ns();
    rp_unwind_native(&r, pcs, 4, &end);
    return rp_mono_ns() - t0;
}

/* Median ns of a one-frame walk at random pcs of [lo, hi), with warm caches and
 * with L1 and L2 cold (16 MiB read in between: 4 times this machine's L2; the
 * tables stay in L3, as they would between two samples 10 ms apart). */
static void time_lookups(uint64_t lo, uint64_t hi)
{
    enum { N = 4001 };
    static uint64_t warm[N], cold[N];
    for (int i = 0; i < 1024; i++)
        fake[i] = 0x100000 + 8 * (uint64_t)i;
    uint64_t x = 88172645463325252ull, sink = 0;
    for (int i = 0; i < N; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint64_t pc = lo + x % (hi - lo);
        sink += evict_caches();
        cold[i] = one_frame(pc);
        warm[i] = one_frame(pc);
    }
    qsort(warm, N, sizeof warm[0], cmp_u64);
    qsort(cold, N, sizeof cold[0], cmp_u64);
    printf("one frame at a random pc of the first library: median %llu ns warm, "
           "%llu ns with L1/L2 cold (p90 %llu ns)%s\n", (unsigned long long)warm[N / 2],
           (unsigned long long)cold[N / 2], (unsigned long long)cold[N * 9 / 10],
           sink == 1 ? " " : "");
}

int main(int argc, char **argv)
{
    char deflt[4096];
    char *def[1] = {deflt};
    char **libs = argv + 1;
    int n = argc - 1;
    if (n == 0) {
        FILE *p = popen("readlink -f \"$(command -v java)\"", "r");
        if (!p || !fgets(deflt, sizeof deflt, p)) {
            fprintf(stderr, "bench_unwind: no java on PATH; name the libraries\n");
            return 2;
        }
        pclose(p);
        deflt[strcspn(deflt, "\n")] = 0;
        char *bin = strstr(deflt, "/bin/java");
        if (!bin) {
            fprintf(stderr, "bench_unwind: cannot place %s\n", deflt);
            return 2;
        }
        strcpy(bin, "/lib/server/libjvm.so");
        libs = def;
        n = 1;
    }
    if (n > 63) {
        fprintf(stderr, "bench_unwind: at most 63 libraries\n");
        return 2;
    }
    struct rp_unwind_stats runs[ROUNDS][65];
    for (int r = 0; r < ROUNDS; r++)
        if (run_child(n, libs, runs[r]) < 0) {
            fprintf(stderr, "bench_unwind: a child failed\n");
            return 1;
        }
    printf("%-60s %7s %8s %10s %6s %6s %8s\n", "object", "FDEs", "rows", "bytes",
           "B/row", "stop", "CPU ms");
    for (int i = 0; i <= n; i++) {
        uint64_t t[ROUNDS], w[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            t[r] = runs[r][i].build_ns;
            w[r] = runs[r][n + 1].build_ns;
        }
        qsort(t, ROUNDS, sizeof t[0], cmp_u64);
        qsort(w, ROUNDS, sizeof w[0], cmp_u64);
        const struct rp_unwind_stats *s = &runs[0][i];
        printf("%-60s %7llu %8llu %10llu %6.2f %6llu %8.1f\n",
               i < n ? libs[i] : "(whole process: every segment, one refresh)",
               (unsigned long long)s->fdes, (unsigned long long)s->rows,
               (unsigned long long)s->bytes, s->rows ? (double)s->bytes / (double)s->rows : 0,
               (unsigned long long)s->stop_fdes, (double)t[ROUNDS / 2] / 1e6);
        if (i == n)
            printf("the whole refresh: %.1f ms CPU, %.1f ms wall (medians of %d processes)\n",
                   (double)t[ROUNDS / 2] / 1e6, (double)w[ROUNDS / 2] / 1e6, ROUNDS);
    }
    evict = malloc(evict_bytes);
    if (!evict || !dlopen(libs[0], RTLD_LAZY | RTLD_LOCAL))
        return 1;
    for (size_t i = 0; i < evict_bytes; i += 64)
        evict[i] = (uint8_t)i;
    rp_codemap_refresh();
    struct find f = {libs[0], 0, 0};
    dl_iterate_phdr(find_segment, &f);
    struct rp_unwind_stats s0;
    if (f.pc && rp_unwind_stats_at(f.pc, &s0) == 0)
        time_lookups(f.pc, f.end);
    chain(32);
    qsort(walk_ns, WALKS, sizeof walk_ns[0], cmp_u64);
    qsort(walk_cold_ns, WALKS, sizeof walk_cold_ns[0], cmp_u64);
    printf("walk of %d frames (this program and libc): median %llu ns warm (%.1f ns a "
           "frame), %llu ns with L1/L2 cold (%.1f ns a frame)\n", walk_frames,
           (unsigned long long)walk_ns[WALKS / 2],
           walk_frames ? (double)walk_ns[WALKS / 2] / walk_frames : 0.0,
           (unsigned long long)walk_cold_ns[WALKS / 2],
           walk_frames ? (double)walk_cold_ns[WALKS / 2] / walk_frames : 0.0);
    return 0;
}
