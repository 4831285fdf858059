/*
 * src/threads/cputimer.c — per-thread CPU timers, perf_event task-clock or POSIX (see
 * cputimer.h).
 *
 * The handler finds a perf counter's tag through a table indexed by file
 * descriptor: an mmap'ed array (MAP_NORESERVE, one 64-bit entry per possible
 * descriptor up to the hard RLIMIT_NOFILE, at most FD_TABLE_MAX), written before
 * the counter is enabled and cleared before it is closed. A counter whose
 * descriptor does not fit gives its thread a POSIX timer instead.
 *
 * A descriptor closed by another thread (the scan retiring a thread, shutdown)
 * could be reused at once by the application, and a handler still holding the
 * number would read from, or ioctl, someone else's file. So the handler marks the
 * timer busy before it loads the descriptor, and the closer clears the
 * descriptor first and then waits until the timer is not busy (both sequentially
 * consistent): either the handler sees -1, or the closer sees it busy and waits.
 * The wait is a handler's few microseconds; a handler never waits for anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "threads/cputimer.h"

#define FD_TABLE_MAX (1u << 20)               /* fs.nr_open's default           */
/* A parked timer: 100 years of CPU to its first expiry, no period. */
#define PARKED_S (100ll * 365 * 24 * 3600)

static enum rp_timer_source g_source = RP_TIMER_POSIX;
static int g_user_only;                        /* perf: exclude_kernel             */
static int g_signo;
static _Atomic uint64_t *g_fdtab;
static size_t g_fdcap;
static uint64_t g_seed = 0x9e3779b97f4a7c15ull;   /* under the registry's lock      */
static _Atomic uint64_t g_made_perf, g_made_posix, g_perf_failed;
static _Atomic int g_perf_errno;

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* A perf period: uniform in [interval/2, 3·interval/2). Signal-safe. */
static uint64_t draw_period(uint64_t *rng, uint64_t interval_ns)
{
    return interval_ns / 2 + xorshift(rng) % interval_ns;
}

/* ------------------------------------------------------------------ perf -- */

static int perf_open(pid_t tid, uint64_t period, int user_only)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period;
    a.disabled = 1;
    a.exclude_kernel = (unsigned)user_only;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Close a counter's descriptor once no handler can be using it (see above). */
static void perf_close(struct rp_cputimer *t)
{
    int fd = atomic_exchange(&t->fd, -1);
    if (fd < 0)
        return;
    if ((size_t)fd < g_fdcap)
        atomic_store(&g_fdtab[fd], 0);
    while (atomic_load(&t->busy))
        sched_yield();
    /* The application may have closed our descriptor and reused its number:
     * close it only if it is still our counter. */
    uint64_t id = 0;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 && id == t->id)
        close(fd);
}

static int perf_create(struct rp_cputimer *t, pid_t tid, clockid_t clock, uint64_t tag,
                       uint64_t interval_ns, int parked)
{
    /* The stationary start of the random periods: the period the thread's CPU
     * clock is in when it starts, length-biased (rejection), and a uniform
     * point in it. The first sample then weighs that whole period. */
    uint64_t len, most = interval_ns / 2 + interval_ns;
    do
        len = draw_period(&g_seed, interval_ns);
    while (xorshift(&g_seed) % most >= len);
    uint64_t first = 1 + xorshift(&g_seed) % len;

    struct timespec ts;
    uint64_t cpu_ns = clock_gettime(clock, &ts) == 0
                    ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec : 0;
    int fd = perf_open(tid, first, g_user_only);
    if (fd < 0)
        return -1;
    if ((size_t)fd >= g_fdcap) {
        close(fd);
        errno = EMFILE;
        return -1;
    }
    struct f_owner_ex owner = {F_OWNER_TID, tid};
    if (ioctl(fd, PERF_EVENT_IOC_ID, &t->id) != 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, g_signo) != 0 ||
        fcntl(fd, F_SETFL, O_ASYNC) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    /* The first sample, due at `first` of the counter's task clock, then
     * weighs `len` (modulo 2^64). */
    t->last_task = first - len;
    t->last_cpu = cpu_ns + first - len;
    t->rng = xorshift(&g_seed) ^ (uint64_t)tid;
    atomic_store(&t->busy, 0);
    atomic_store(&t->fd, fd);
    atomic_store(&g_fdtab[fd], tag);
    t->parked = parked;
    if (!parked && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        int e = errno;
        perf_close(t);
        errno = e;
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------------- posix -- */

static int posix_arm(timer_t timer, pid_t tid, uint64_t interval_ns, int parked)
{
    /* The first expiry falls at a random point of the first interval: a thread
     * that uses less than one interval of CPU is then sampled with a probability
     * proportional to what it used, and the weights stay unbiased. */
    uint64_t first = 1 + (xorshift(&g_seed) ^ (uint64_t)tid) % interval_ns;
    struct itimerspec its;
    its.it_interval.tv_sec = (time_t)(interval_ns / 1000000000u);
    its.it_interval.tv_nsec = (long)(interval_ns % 1000000000u);
    its.it_value.tv_sec = (time_t)(first / 1000000000u);
    its.it_value.tv_nsec = (long)(first % 1000000000u);
    if (parked)
        its = (struct itimerspec){.it_value = {(time_t)PARKED_S, 0}};
    return timer_settime(timer, 0, &its, NULL);
}

/* A POSIX CPU timer on `clock`: signalling `tag` with g_signo to `tid`, or
 * (probe) never signalling at all. */
static int posix_create(timer_t *timer, pid_t tid, clockid_t clock, uint64_t tag, int probe)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    if (probe) {
        sev.sigev_notify = SIGEV_NONE;
    } else {
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = g_signo;
        sev.sigev_value.sival_ptr = (void *)(uintptr_t)tag;
        sev._sigev_un._tid = tid;
    }
    return timer_create(clock, &sev, timer);
}

/* ---------------------------------------------------------------- the API -- */

int rp_cputimer_init(enum rp_timer_source want, int signo, uint64_t interval_ns,
                     char *err, size_t errlen)
{
    g_signo = signo;
    g_source = RP_TIMER_POSIX;
    if (want == RP_TIMER_POSIX)
        return 0;
    if (!g_fdtab) {
        struct rlimit rl;
        size_t cap = FD_TABLE_MAX;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
            rl.rlim_max < cap)
            cap = (size_t)rl.rlim_max;
        void *p = mmap(NULL, cap * sizeof *g_fdtab, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED && want == RP_TIMER_AUTO)
            return 0;                           /* POSIX timers need no table */
        if (p == MAP_FAILED) {
            int e = errno;
            snprintf(err, errlen, "timer=perf: cannot map the timer table (%zu MiB of "
                     "address space): %s", (cap * sizeof *g_fdtab) >> 20, strerror(e));
            errno = e;
            return -1;
        }
        g_fdtab = p;
        g_fdcap = cap;
    }
    /* A counter on this thread, with kernel-mode samples, then (timer=perf
     * only) without. */
    int fd = perf_open(0, interval_ns, 0), e = errno;
    g_user_only = 0;
    if (fd < 0 && want == RP_TIMER_PERF && (e == EACCES || e == EPERM)) {
        fd = perf_open(0, interval_ns, 1);
        e = errno;
        g_user_only = 1;
    }
    if (fd >= 0) {
        close(fd);
        g_source = RP_TIMER_PERF;
        return 0;
    }
    if (want == RP_TIMER_AUTO)
        return 0;
    char paranoid[16] = "?";
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
    if (f) {
        if (!fgets(paranoid, sizeof paranoid, f))
            snprintf(paranoid, sizeof paranoid, "?");
        paranoid[strcspn(paranoid, "\n")] = '\0';
        fclose(f);
    }
    snprintf(err, errlen, "timer=perf: perf_event_open refused a task-clock counter: %s "
             "(kernel.perf_event_paranoid=%s; a container may forbid the call); use "
             "timer=auto or timer=posix", strerror(e), paranoid);
    errno = e;
    return -1;
}

enum rp_timer_source rp_cputimer_source(void)
{
    return g_source;
}

const char *rp_cputimer_source_name(void)
{
    if (g_source != RP_TIMER_PERF)
        return "posix";
    return g_user_only ? "perf-user" : "perf";
}

int rp_cputimer_create(struct rp_cputimer *t, pid_t tid, clockid_t clock, uint64_t tag,
                       int probe, uint64_t interval_ns, int parked)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    if (g_source == RP_TIMER_PERF) {
        int has_probe = 0;
        if (probe) {
            if (posix_create(&t->timer, tid, clock, 0, 1) != 0)
                return -1;
            if (posix_arm(t->timer, tid, interval_ns, 1) != 0) {
                int e = errno;
                timer_delete(t->timer);
                errno = e;
                return -1;
            }
            has_probe = 1;
        }
        if (perf_create(t, tid, clock, tag, interval_ns, parked) == 0) {
            t->kind = RP_TIMER_PERF;
            t->has_probe = has_probe;
            atomic_fetch_add(&g_made_perf, 1);
            return 0;
        }
        int e = errno;
        if (has_probe)
            timer_delete(t->timer);
        if (e == ESRCH || e == EINVAL) {
            errno = e;
            return -1;
        }
        /* Out of descriptors or memory for this one: a POSIX timer will do. */
        atomic_fetch_add(&g_perf_failed, 1);
        atomic_store(&g_perf_errno, e);
    }
    if (posix_create(&t->timer, tid, clock, tag, 0) != 0)
        return -1;
    if (posix_arm(t->timer, tid, interval_ns, parked) != 0) {
        int e = errno;
        timer_delete(t->timer);
        errno = e;
        return -1;
    }
    t->kind = RP_TIMER_POSIX;
    atomic_fetch_add(&g_made_posix, 1);
    return 0;
}

void rp_cputimer_set(struct rp_cputimer *t, uint64_t interval_ns, int parked)
{
    if (t->kind == RP_TIMER_POSIX) {
        posix_arm(t->timer, 0, interval_ns, parked);
        return;
    }
    int fd = atomic_load(&t->fd);
    if (t->kind != RP_TIMER_PERF || fd < 0)
        return;
    if (parked || t->parked) {
        ioctl(fd, parked ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE, 0);
        t->parked = parked;
        return;
    }
    /* The period in progress restarts; the sample that ends it still weighs
     * all the task clock since the previous one. */
    uint64_t period = draw_period(&g_seed, interval_ns);
    ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
}

void rp_cputimer_delete(struct rp_cputimer *t)
{
    if (t->kind == RP_TIMER_PERF) {
        perf_close(t);
        if (t->has_probe)
            timer_delete(t->timer);
    } else if (t->kind == RP_TIMER_POSIX) {
        timer_delete(t->timer);
    }
    t->kind = 0;
    t->has_probe = 0;
}

int rp_cputimer_alive(struct rp_cputimer *t)
{
    struct itimerspec cur;
    if (t->kind == 0 || (t->kind == RP_TIMER_PERF && !t->has_probe))
        return 0;
    if (timer_gettime(t->timer, &cur) != 0)
        return 0;
    return cur.it_value.tv_sec != 0 || cur.it_value.tv_nsec != 0;
}

void rp_cputimer_stats(struct rp_cputimer_stats *out)
{
    out->perf = atomic_load(&g_made_perf);
    out->posix = atomic_load(&g_made_posix);
    out->perf_failed = atomic_load(&g_perf_failed);
    out->last_errno = atomic_load(&g_perf_errno);
}

/* ------------------------------------------------------- in the handler -- */

uint64_t rp_cputimer_tag(const siginfo_t *si)
{
    if (si->si_code == SI_TIMER)
        return (uint64_t)(uintptr_t)si->si_value.sival_ptr;
    /* A perf counter's overflow: POLL_IN, or POLL_HUP, with the descriptor. */
    if ((si->si_code == POLL_IN || si->si_code == POLL_HUP) && g_fdtab &&
        si->si_fd >= 0 && (size_t)si->si_fd < g_fdcap)
        return atomic_load_explicit(&g_fdtab[si->si_fd], memory_order_acquire);
    return 0;
}

int rp_cputimer_is_timer(const siginfo_t *si)
{
    return si->si_code == SI_TIMER ||
           (g_source == RP_TIMER_PERF && (si->si_code == POLL_IN || si->si_code == POLL_HUP));
}

uint64_t rp_cputimer_sample(struct rp_cputimer *t, const siginfo_t *si, uint64_t interval_ns)
{
    if (atomic_load_explicit(&t->kind, memory_order_relaxed) != RP_TIMER_PERF) {
        int overrun = si->si_code == SI_TIMER && si->si_overrun > 0 ? si->si_overrun : 0;
        return interval_ns * (uint64_t)(1 + overrun);
    }
    /* The CPU clock since the previous sample, unless the task clock moved less:
     * then the counter was parked meanwhile, and only the CPU time it counted
     * was sampled (cputimer.h). */
    uint64_t weight = interval_ns, task, cpu = 0;
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    atomic_store(&t->busy, 1);
    int fd = atomic_load(&t->fd);
    if (fd >= 0) {
        if (read(fd, &task, sizeof task) == (ssize_t)sizeof task && cpu) {
            uint64_t dcpu = cpu - t->last_cpu, dtask = task - t->last_task;
            weight = dtask < dcpu ? dtask : dcpu;
            t->last_task = task;
            t->last_cpu = cpu;
        }
        uint64_t period = draw_period(&t->rng, interval_ns);
        ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
    }
    atomic_store(&t->busy, 0);
    return weight;
}
