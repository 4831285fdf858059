/*
 * tests/fault/failalloc.c — LD_PRELOAD library that makes the agent's own
 * allocations fail, and no one else's (tests/fault/inject_tests.sh).
 *
 * It wraps malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign,
 * strdup, strndup, mmap/mmap64, and the libc calls the agent makes that allocate
 * inside libc (opendir, fdopendir, realpath with a NULL buffer, pthread_create): a
 * call made from inside libc has libc, not the agent, as its caller, so the only
 * way to fail the agent's opendir is to fail opendir itself. A call is the agent's when its
 * return address (__builtin_return_address(0)) lies in the agent library's
 * executable segments; the recorder is linked statically into it, so its
 * allocations count too. The JVM's own allocations, and those made through JVMTI
 * Allocate, are never failed: the JVM's reaction to a failed malloc is its own
 * business, and we want to see the agent's.
 *
 * The range is learnt by wrapping dlopen: the JVM loads -agentpath libraries with
 * dlopen, and when the name contains RP_FAILALLOC_TARGET (default "libringprof") the
 * library's PT_LOAD segments with PF_X are recorded, before Agent_OnLoad runs.
 * Before that every call only forwards, at the cost of one relaxed load.
 *
 * RP_FAILALLOC selects what fails (comma-separated; the nth agent allocation is
 * counted from 1, over every thread, in the order the calls arrive):
 *   nth=N        the Nth agent allocation fails, and no other
 *   every=K      every Kth agent allocation fails (K, 2K, 3K, ...)
 *   after=N      every agent allocation after the Nth fails
 *   prob=P       each agent allocation after start=N (default 0) fails with
 *                probability P; seed=S (default 1) makes the choice a function of
 *                (S, the call's number), so a run is reproducible up to the order
 *                in which threads' calls interleave
 *   (none)       nothing fails: the run only counts, to size a sweep
 *   off=PATH     with any mode: once the file PATH exists, nothing fails any more
 *                (looked for at most every 20 ms, at an agent call), so that a
 *                test can end the faults and then check that the agent has
 *                recovered; "rp_failalloc: faults off" on stderr says when
 * A failed call returns what the real one returns when memory is short: NULL (or
 * MAP_FAILED, or an error number) with errno ENOMEM (EAGAIN for pthread_create).
 *
 * At exit it prints "rp_failalloc: N agent calls, F failed" on stderr, so the test
 * can tell that the library was in the path, and the first 16 failures as they
 * happen: "rp_failalloc: fail #N malloc(32) at libringprof_test.so+0x1234"
 * (addr2line -e the library 0x1234 gives the line).
 */
/* mmap and mmap64 are both defined here: without this, meson's
 * -D_FILE_OFFSET_BITS=64 would turn the definition of mmap into one of mmap64. */
#undef _FILE_OFFSET_BITS
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define MAX_RANGES 4
#define MAX_REPORTED 16

static struct {
    _Atomic int nranges;                 /* published after lo/hi are written  */
    uintptr_t lo[MAX_RANGES], hi[MAX_RANGES];
    uintptr_t base;
    char lib[128];
    enum { MODE_COUNT, MODE_NTH, MODE_EVERY, MODE_AFTER, MODE_PROB } mode;
    uint64_t n;
    uint64_t start;
    double p;
    uint64_t seed;
    _Atomic uint64_t calls, failed;
    char off[256];
    _Atomic int ended;
    _Atomic int64_t off_checked_ms;
    void *(*dlopen)(const char *, int);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    DIR *(*opendir)(const char *);
    DIR *(*fdopendir)(int);
    char *(*realpath)(const char *, char *);
    int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
} F;

static int in_agent(const void *ret)
{
    int n = atomic_load_explicit(&F.nranges, memory_order_acquire);
    uintptr_t a = (uintptr_t)ret;
    for (int i = 0; i < n; i++)
        if (a >= F.lo[i] && a < F.hi[i])
            return 1;
    return 0;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Writes with write(2) only: a failure may be reported from any thread, at any
 * point, with malloc unusable for all we know. */
static void report(uint64_t k, const char *what, size_t size, const void *ret)
{
    char buf[160];
    int n = snprintf(buf, sizeof buf, "rp_failalloc: fail #%llu %s(%zu) at %s+0x%lx\n",
                     (unsigned long long)k, what, size, F.lib,
                     (unsigned long)((uintptr_t)ret - F.base));
    if (n > 0) {
        ssize_t w = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
        (void)w;
    }
}

/* Whether this agent call (caller's return address ret) fails. */
static int should_fail(const void *ret, const char *what, size_t size)
{
    if (!in_agent(ret))
        return 0;
    uint64_t k = atomic_fetch_add_explicit(&F.calls, 1, memory_order_relaxed) + 1;
    int fail = 0;
    if (F.off[0] && !atomic_load_explicit(&F.ended, memory_order_relaxed)) {
        /* At most every 20 ms, by the coarse clock (a vDSO read, no syscall). */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        int64_t last = atomic_load_explicit(&F.off_checked_ms, memory_order_relaxed);
        if (now - last >= 20 &&
            atomic_compare_exchange_strong(&F.off_checked_ms, &last, now) &&
            access(F.off, F_OK) == 0 && atomic_exchange(&F.ended, 1) == 0) {
            static const char m[] = "rp_failalloc: faults off\n";
            ssize_t w = write(2, m, sizeof m - 1);
            (void)w;
        }
    }
    if (atomic_load_explicit(&F.ended, memory_order_relaxed))
        return 0;
    switch (F.mode) {
    case MODE_COUNT: break;
    case MODE_NTH:   fail = k == F.n; break;
    case MODE_EVERY: fail = F.n && k % F.n == 0; break;
    case MODE_AFTER: fail = k > F.n; break;
    case MODE_PROB:
        fail = k > F.start &&
               (double)(mix64(F.seed * 0x9e3779b97f4a7c15ull + k) >> 11) * 0x1p-53 < F.p;
        break;
    }
    if (fail && atomic_fetch_add_explicit(&F.failed, 1, memory_order_relaxed) < MAX_REPORTED)
        report(k, what, size, ret);
    return fail;
}

#define CALLER __builtin_return_address(0)

void *malloc(size_t n)
{
    if (should_fail(CALLER, "malloc", n)) { errno = ENOMEM; return NULL; }
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (should_fail(CALLER, "calloc", a * b)) { errno = ENOMEM; return NULL; }
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    /* realloc(p, 0) frees: not an allocation. */
    if (n && should_fail(CALLER, "realloc", n)) { errno = ENOMEM; return NULL; }
    return __libc_realloc(p, n);
}

void *memalign(size_t a, size_t n)
{
    if (should_fail(CALLER, "memalign", n)) { errno = ENOMEM; return NULL; }
    return __libc_memalign(a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
    if (should_fail(CALLER, "aligned_alloc", n)) { errno = ENOMEM; return NULL; }
    return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
    if (should_fail(CALLER, "posix_memalign", n))
        return ENOMEM;
    if (a < sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    void *p = __libc_memalign(a, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    if (should_fail(CALLER, "strdup", n)) { errno = ENOMEM; return NULL; }
    char *d = __libc_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

char *strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    if (should_fail(CALLER, "strndup", n + 1)) { errno = ENOMEM; return NULL; }
    char *d = __libc_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (should_fail(CALLER, "mmap", len)) { errno = ENOMEM; return MAP_FAILED; }
    return F.mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

DIR *opendir(const char *path)
{
    if (should_fail(CALLER, "opendir", 0)) { errno = ENOMEM; return NULL; }
    return F.opendir(path);
}

DIR *fdopendir(int fd)
{
    if (should_fail(CALLER, "fdopendir", 0)) { errno = ENOMEM; return NULL; }
    return F.fdopendir(fd);
}

char *realpath(const char *path, char *resolved)
{
    if (!resolved && should_fail(CALLER, "realpath", 0)) { errno = ENOMEM; return NULL; }
    return F.realpath(path, resolved);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (should_fail(CALLER, "pthread_create", 0))
        return EAGAIN;
    return F.pthread_create(t, attr, fn, arg);
}

/* ------------------------------------------------------ the agent's range -- */

static int find_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size; (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, F.lib))
        return 0;
    int n = 0;
    for (int i = 0; i < info->dlpi_phnum && n < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            F.lo[n] = info->dlpi_addr + ph->p_vaddr;
            F.hi[n] = F.lo[n] + ph->p_memsz;
            n++;
        }
    }
    F.base = info->dlpi_addr;
    const char *slash = strrchr(info->dlpi_name, '/');
    snprintf(F.lib, sizeof F.lib, "%s", slash ? slash + 1 : info->dlpi_name);
    atomic_store_explicit(&F.nranges, n, memory_order_release);
    return 1;
}

void *dlopen(const char *name, int flags)
{
    void *h = F.dlopen(name, flags);
    if (h && name && !atomic_load(&F.nranges) && strstr(name, F.lib))
        dl_iterate_phdr(find_segments, NULL);
    return h;
}

static uint64_t num(const char *spec, const char *key, uint64_t dflt)
{
    const char *p = strstr(spec, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : dflt;
}

__attribute__((constructor)) static void init(void)
{
    F.dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    F.mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    F.opendir = (DIR *(*)(const char *))dlsym(RTLD_NEXT, "opendir");
    F.fdopendir = (DIR *(*)(int))dlsym(RTLD_NEXT, "fdopendir");
    F.realpath = (char *(*)(const char *, char *))dlsym(RTLD_NEXT, "realpath");
    F.pthread_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *))dlsym(RTLD_NEXT, "pthread_create");
    const char *lib = getenv("RP_FAILALLOC_TARGET");
    snprintf(F.lib, sizeof F.lib, "%s", lib && *lib ? lib : "libringprof");
    const char *spec = getenv("RP_FAILALLOC");
    if (!spec)
        spec = "";
    const char *off = strstr(spec, "off=");
    if (off)
        snprintf(F.off, sizeof F.off, "%.*s", (int)strcspn(off + 4, ","), off + 4);
    F.seed = num(spec, "seed=", 1);
    F.start = num(spec, "start=", 0);
    if (strstr(spec, "nth="))
        F.mode = MODE_NTH, F.n = num(spec, "nth=", 0);
    else if (strstr(spec, "every="))
        F.mode = MODE_EVERY, F.n = num(spec, "every=", 0);
    else if (strstr(spec, "after="))
        F.mode = MODE_AFTER, F.n = num(spec, "after=", 0);
    else if (strstr(spec, "prob=")) {
        F.mode = MODE_PROB;
        F.p = strtod(strstr(spec, "prob=") + 5, NULL);
    }
    /* The agent may already be loaded (an LD_PRELOAD order we do not control). */
    dl_iterate_phdr(find_segments, NULL);
}

__attribute__((destructor)) static void fini(void)
{
    char msg[128];
    int n = snprintf(msg, sizeof msg, "rp_failalloc: %llu agent calls, %llu failed\n",
                     (unsigned long long)atomic_load(&F.calls),
                     (unsigned long long)atomic_load(&F.failed));
    if (n > 0) {
        ssize_t w = write(2, msg, (size_t)n);
        (void)w;
    }
}
