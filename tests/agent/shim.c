/*
 * tests/agent/shim.c — LD_PRELOAD library for the signal-safety test: malloc,
 * calloc, realloc, free, the memalign family, pthread_mutex_lock and
 * pthread_mutex_trylock abort the process if they are called while the calling
 * thread is inside ringprof's signal handler.
 *
 * The test build of the agent (libringprof_test.so, compiled with RP_TEST_HOOKS)
 * finds ringprof_shim_register with dlsym when it starts and hands over a function
 * that says, from the tid table, whether a thread is inside the handler. That
 * function is async-signal-safe, so the shim may call it from anywhere. Until it is
 * registered the wrappers only forward. The thread's tid is cached in initial-exec
 * TLS (this library is loaded at start-up, so its TLS is static: no allocation).
 *
 * At exit it prints how many calls it checked, so the test can tell that it was
 * really in the path.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

void ringprof_shim_register(int (*fn)(pid_t));

static int (*_Atomic g_in_handler)(pid_t);
static _Atomic unsigned long g_checked;
static __thread pid_t t_tid __attribute__((tls_model("initial-exec")));
static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);

__attribute__((visibility("default"))) void ringprof_shim_register(int (*fn)(pid_t))
{
    atomic_store(&g_in_handler, fn);
    static const char msg[] = "rp_shim: the agent's in-handler hook is registered\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
}

static void check(const char *what)
{
    int (*f)(pid_t) = atomic_load_explicit(&g_in_handler, memory_order_relaxed);
    if (!f)
        return;
    if (!t_tid)
        t_tid = (pid_t)syscall(SYS_gettid);
    atomic_fetch_add_explicit(&g_checked, 1, memory_order_relaxed);
    if (f(t_tid)) {
        char msg[128];
        size_t n = 0;
        const char *parts[] = {"rp_shim: ", what, " called inside the ringprof signal handler\n"};
        for (int i = 0; i < 3; i++)
            for (const char *p = parts[i]; *p && n < sizeof msg; p++)
                msg[n++] = *p;
        ssize_t w = write(2, msg, n);
        (void)w;
        abort();
    }
}

void *malloc(size_t n) { check("malloc"); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { check("calloc"); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { check("realloc"); return __libc_realloc(p, n); }
void free(void *p) { if (p) check("free"); __libc_free(p); }
void *memalign(size_t a, size_t n) { check("memalign"); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { check("aligned_alloc"); return __libc_memalign(a, n); }

int posix_memalign(void **out, size_t a, size_t n)
{
    check("posix_memalign");
    void *p = __libc_memalign(a, n);
    if (!p)
        return 12;     /* ENOMEM */
    *out = p;
    return 0;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    check("pthread_mutex_lock");
    return real_lock(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    check("pthread_mutex_trylock");
    return real_trylock(m);
}

__attribute__((constructor)) static void init(void)
{
    real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
}

__attribute__((destructor)) static void report(void)
{
    char msg[128];
    int n = snprintf(msg, sizeof msg, "rp_shim: %lu calls checked, none inside the handler\n",
                     (unsigned long)atomic_load(&g_checked));
    if (n > 0) {
        ssize_t w = write(2, msg, (size_t)n);
        (void)w;
    }
}
