/*
 * src/kinds/cpu_async.c — the CPU-timer signal handler, AsyncGetCallTrace, the crash
 * guard and the handler-cost histogram (see cpu_async.h).
 *
 * Everything reachable from on_timer and on_fault is async-signal-safe: atomics,
 * clock_gettime, syscall(gettid), sigsetjmp/siglongjmp, pthread_sigmask, the
 * ring push, the unwinder, and AsyncGetCallTrace.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jni.h>

#include "ringprof/clock.h"
#include "ringprof/events.h"
#include "ringprof/format.h"
#include "core/counters.h"
#include "core/engine.h"
#include "flush/kind.h"
#include "kinds/cpu.h"
#include "walk/callstack.h"
#include "kinds/cpu_async.h"
#include "core/sample.h"
#include "code/codecache.h"
#include "threads/cputimer.h"
#include "core/histogram.h"
#include "core/log.h"
#include "walk/stackwalk.h"
#include "code/symbols.h"
#include "threads/threads.h"
#include "threads/threadtimer.h"
#include "walk/unwind.h"
#include "flush/vthreads.h"

static void *g_agct;
static struct rp_async_config g_cfg;
/* The period a sample weighs; rp_async_set_interval changes it at run time. A
 * signal from a timer still on the old period weighs the new one: one sample per
 * thread, at the change only. Lock-free, so the handler may load it. */
static _Atomic uint64_t g_interval_ns;
static _Atomic int g_on;
static _Atomic int g_inflight;           /* handlers between entry and exit       */
static _Atomic int g_walks;              /* walks in progress, any thread         */
static _Atomic uint64_t g_stray, g_foreign, g_crashed;
static struct rp_hist g_hist;
static struct sigaction g_old_segv, g_old_bus;
static int g_installed;
/* Sticky: set as soon as any one of our handlers is in place, even when a later
 * sigaction of rp_async_start fails (g_installed is set only once all are). From
 * then on the library must never be unloaded. */
static _Atomic int g_ever_installed;
static char g_signame[32] = "the timer signal";
/* HotSpot's SafeFetch fault pcs (libjvm.so's .symtab; JDK 19+, JDK-8283326, and
 * backports such as Debian's 17.0.x): 0 if not found. */
static uint64_t g_safefetch[2];

#ifdef RP_TEST_HOOKS
/* Test builds only (tests/agent): RINGPROF_TESTFAULT makes the handler misbehave
 * on purpose, so the tests can show that their checks catch it. */
static int g_fault_malloc, g_fault_crash;
static volatile uintptr_t g_fault_addr = 16;    /* unmapped: page 0 */
__attribute__((visibility("default"))) int ringprof_test_in_handler(pid_t tid);
#endif

int rp_async_available(void)
{
    if (!g_agct)
        g_agct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    return g_agct != NULL;
}

static const char *signame(int signo, char *buf, size_t cap)
{
    const char *d = sigabbrev_np(signo);
    if (d)
        snprintf(buf, cap, "SIG%s", d);
    else
        snprintf(buf, cap, "signal %d", signo);
    return buf;
}

int rp_async_check_signal(int signo, char *err, size_t errlen)
{
    struct sigaction old;
    char nm[32];
    if (sigaction(signo, NULL, &old) != 0) {
        snprintf(err, errlen, "signal=%d: not a signal this system has", signo);
        return -1;
    }
    int ours = (old.sa_flags & SA_SIGINFO) && g_installed;
    if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && !ours) {
        snprintf(err, errlen, "%s already has a handler in this process (another "
                 "profiler, or the application uses it); choose a free one with "
                 "signal=, e.g. signal=VTALRM, or use engine=jvmti",
                 signame(signo, nm, sizeof nm));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ crash guard -- */

static void chain(const struct sigaction *old, int sig, siginfo_t *si, void *uc)
{
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, si, uc);
        return;
    }
    if (old->sa_handler == SIG_IGN && si->si_code <= 0)
        return;                          /* a sent signal that was being ignored */
    if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
        /* A fault cannot be ignored: restore the default action; returning
         * re-executes the faulting instruction, which then dumps core as it would
         * have without us. A sent signal is sent again. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        if (si->si_code <= 0)
            raise(sig);
        return;
    }
    old->sa_handler(sig);
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
    if (atomic_load_explicit(&g_walks, memory_order_relaxed) > 0) {
        int saved_errno = errno;
        struct rp_slot *s = rp_threads_by_tid(rp_gettid());
        errno = saved_errno;
        const ucontext_t *uc = ucv;
        uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
        /* A SafeFetch fault is HotSpot's own, expected one (AGCT probes memory
         * with it): HotSpot's handler resumes SafeFetch with its error value. */
        if (s && (s->in_walk || s->in_cb_walk) && rp_unwind_is_native(pc) &&
            pc != g_safefetch[0] && pc != g_safefetch[1]) {
            /* The signal handler's walk first: it may run inside a callback's. */
            if (s->in_walk) {
                s->in_walk = 0;
                siglongjmp(s->walk_env, 1);
            }
            s->in_cb_walk = 0;
            siglongjmp(s->cb_env, 1);
        }
    }
    chain(sig == SIGSEGV ? &g_old_segv : &g_old_bus, sig, si, ucv);
}

static int install_guard(int sig, struct sigaction *saved)
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0)
        return -1;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_fault)
        return 0;
    /* Keep the previous handler's mask and flags, so that when we pass a signal on
     * it runs as it would have been run by the kernel. */
    sa = old;
    sa.sa_sigaction = on_fault;
    sa.sa_flags = (old.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
    if (sigaction(sig, &sa, saved) != 0)
        return -1;
    atomic_store(&g_ever_installed, 1);
    return 0;
}

/* -------------------------------------------------------------- the sample -- */

static void take_sample(struct rp_slot *s, siginfo_t *si, ucontext_t *uc)
{
    uint64_t t0 = rp_mono_ns();
    s->in_handler = 1;
    struct rp_sample_hdr h;
    h.type = RP_SAMPLE_CPU;
    h.flags = 0;
    h.time = t0;
    h.weight = rp_cputimer_sample(&s->timer, si,
                                  atomic_load_explicit(&g_interval_ns, memory_order_relaxed));
    h.slot = s->index;
    h.gen = atomic_load_explicit(&s->gen, memory_order_relaxed);
    h.agent = (uint32_t)s->in_agent;
    h.vthread = rp_vthreads_current(s);

    volatile int nn = 0, nj = 0, status = RP_WALK_OK, trunc = 0;
    struct rp_stackwalk_result w;
    w.in_codecache = 0;
    w.anchor_moved = 0;
    atomic_fetch_add_explicit(&g_walks, 1, memory_order_relaxed);
    if (sigsetjmp(s->walk_env, 0) == 0) {
        /* Only now is walk_env valid: a fault before this line must not jump. */
        s->in_walk = 1;
        atomic_signal_fence(memory_order_seq_cst);
#ifdef RP_TEST_HOOKS
        if (g_fault_crash && (h.time / 1000) % 8 == 0)
            status = *(volatile int *)g_fault_addr;     /* a fault inside the walk */
#endif
        struct rp_walk_agent agent = {(int)h.agent, s->cb_java, (int)s->cb_njava,
                                      (int)s->cb_kept, s->cb_anchor_sp};
        rp_stackwalk(uc, atomic_load_explicit(&s->env, memory_order_acquire), g_cfg.native,
                     &agent, (int)g_cfg.depth, s->pcs, s->java, &w);
        nn = w.nnative;
        nj = w.njava;
        h.agent = (uint32_t)w.agent;
        status = w.status;
        trunc = w.truncated;
    } else {
        /* Back from on_fault: SIGSEGV/SIGBUS are still blocked (we left their
         * handler by siglongjmp without restoring the mask). */
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, SIGSEGV);
        sigaddset(&m, SIGBUS);
        pthread_sigmask(SIG_UNBLOCK, &m, NULL);
        rp_stackwalk_abandon(&w);
        status = RP_WALK_CRASHED;
        nn = 0;
        nj = 0;
        atomic_fetch_add_explicit(&g_crashed, 1, memory_order_relaxed);
    }
    s->in_walk = 0;
    atomic_signal_fence(memory_order_seq_cst);
    atomic_fetch_sub_explicit(&g_walks, 1, memory_order_relaxed);

#ifdef RP_TEST_HOOKS
    if (g_fault_malloc) {
        void *p = malloc(32);
        free(p);
    }
#endif
    h.status = status;
    h.flags = trunc ? RP_SAMPLE_TRUNCATED : 0;
    h.nnative = (uint32_t)nn;
    h.njava = (uint32_t)nj;
    uint64_t t1 = rp_mono_ns();
    h.handler_ns = t1 - t0 > UINT32_MAX ? UINT32_MAX : (uint32_t)(t1 - t0);
    rp_hist_add(&g_hist, t1 - t0);
    /* In one of the agent's callbacks that takes its thread's Java stack
     * (allocation, monitor) and has not yet, with no Java frames of our own:
     * hold the sample back; the callback pushes it with its stack
     * (rp_async_callback_stack). A second such sample only adds its weight to
     * the held one. Only those callbacks: they alone push what is held. */
    int takes = rp_agent_work_takes_stack((uint32_t)s->in_agent);
    if (takes && nj == 0 && status != RP_WALK_CRASHED && !s->cb_njava) {
        if (s->held == 0) {
            s->held_hdr = h;
            atomic_signal_fence(memory_order_seq_cst);
            s->held = 1;
        } else {
            s->held_hdr.weight += h.weight;
        }
        s->in_handler = 0;
        return;
    }
    struct iovec iov[3] = {
        {&h, sizeof h},
        {s->pcs, (size_t)nn * sizeof(uint64_t)},
        {s->java, (size_t)nj * sizeof(struct rp_java_frame)},
    };
    rp_ring_pushv(s->ring, iov, 3);
    s->in_handler = 0;
}

static void on_timer(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved_errno = errno;
    atomic_fetch_add_explicit(&g_inflight, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&g_on, memory_order_seq_cst)) {
        uint64_t tag = rp_cputimer_tag(si);
        struct rp_slot *s = tag ? rp_threads_from_tag(tag) : NULL;
        /* A stale signal queued for a slot's previous occupant, or a slot that was
         * reused for another thread, must not be sampled here: two producers on
         * one SPSC ring, and this thread's sigsetjmp in the other's jmp_buf. */
        if (s && s->ring && s->pcs && s->tid == rp_gettid() && s->held != 2)
            take_sample(s, si, uc);
        else if (s && s->ring && s->held == 2)
            rp_ring_drop_nested(s->ring, sizeof(struct rp_sample_hdr));  /* the callback
                                           * is pushing `pcs`: counted (lost.nested) */
        else
            atomic_fetch_add_explicit(&g_stray, 1, memory_order_relaxed);
        if (!rp_cputimer_is_timer(si))
            atomic_fetch_add_explicit(&g_foreign, 1, memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&g_inflight, 1, memory_order_release);
    errno = saved_errno;
}

/* ------------------------------------------------------------- lifecycle -- */

int rp_async_start(const struct rp_async_config *cfg, char *err, size_t errlen)
{
    g_cfg = *cfg;
    atomic_store(&g_interval_ns, cfg->interval_ns);
    rp_async_available();
    rp_stackwalk_init(g_agct);
#ifdef RP_TEST_HOOKS
    const char *f = getenv("RINGPROF_TESTFAULT");
    g_fault_malloc = f && strstr(f, "malloc_in_handler");
    g_fault_crash = f && strstr(f, "crash_in_walk");
    /* The malloc/lock shim (an LD_PRELOAD library) asks us whether a thread is in
     * the handler; hand it the question's function. */
    void (*reg)(int (*)(pid_t)) = (void (*)(int (*)(pid_t)))dlsym(RTLD_DEFAULT,
                                                                  "ringprof_shim_register");
    if (reg)
        reg(ringprof_test_in_handler);
#endif
    if (rp_async_check_signal(cfg->signo, err, errlen) < 0)
        return -1;
    g_safefetch[0] = rp_symbols_find("libjvm.so", "_SafeFetch32_fault");
    g_safefetch[1] = rp_symbols_find("libjvm.so", "_SafeFetchN_fault");
    if (install_guard(SIGSEGV, &g_old_segv) < 0 || install_guard(SIGBUS, &g_old_bus) < 0) {
        snprintf(err, errlen, "cannot install the crash guard: %s", strerror(errno));
        return -1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_timer;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    /* Nothing else runs on this thread while it samples (no other handler can
     * reach the slot, the ring or errno mid-way), except the synchronous faults,
     * which the crash guard must see: blocked, they would kill the process. */
    sigfillset(&sa.sa_mask);
    sigdelset(&sa.sa_mask, SIGSEGV);
    sigdelset(&sa.sa_mask, SIGBUS);
    sigdelset(&sa.sa_mask, SIGILL);
    sigdelset(&sa.sa_mask, SIGFPE);
    sigdelset(&sa.sa_mask, SIGTRAP);
    if (sigaction(cfg->signo, &sa, NULL) != 0) {
        snprintf(err, errlen, "cannot install the handler for signal %d: %s",
                 cfg->signo, strerror(errno));
        return -1;
    }
    atomic_store(&g_ever_installed, 1);
    signame(cfg->signo, g_signame, sizeof g_signame);
    g_installed = 1;
    /* Before sampling is on: a sample held back in a callback is pushed by the
     * callback (callstack.h). */
    static const struct rp_callstack_async callbacks = {rp_async_callback_walk,
                                                        rp_async_callback_stack};
    rp_callstack_set_async(&callbacks);
    atomic_store(&g_on, 1);
    return 0;
}

void rp_async_stop(unsigned wait_ms)
{
    atomic_store_explicit(&g_on, 0, memory_order_seq_cst);
    for (unsigned i = 0; i < wait_ms * 10 &&
                         atomic_load_explicit(&g_inflight, memory_order_seq_cst) > 0; i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

const char *rp_async_signal_name(void)
{
    return g_signame;
}

int rp_async_handler_intact(void)
{
    struct sigaction cur;
    if (!g_installed || sigaction(g_cfg.signo, NULL, &cur) != 0)
        return 0;
    return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_timer;
}

int rp_async_ever_installed(void)
{
    return atomic_load(&g_ever_installed);
}

int rp_async_guard_intact(void)
{
    struct sigaction segv, bus;
    if (!g_installed || sigaction(SIGSEGV, NULL, &segv) != 0 ||
        sigaction(SIGBUS, NULL, &bus) != 0)
        return 0;
    return (segv.sa_flags & SA_SIGINFO) && segv.sa_sigaction == on_fault &&
           (bus.sa_flags & SA_SIGINFO) && bus.sa_sigaction == on_fault;
}

int rp_async_callback_walk(struct rp_slot *s, JNIEnv *jni, struct rp_java_frame *out,
                           int depth)
{
    if (!g_installed || !g_agct || !s)
        return 0;
    volatile int n = 0;
    atomic_fetch_add_explicit(&g_walks, 1, memory_order_relaxed);
    /* savemask 1: a fault leaves through the SIGSEGV handler, whose mask must
     * not stay on this thread. */
    if (sigsetjmp(s->cb_env, 1) == 0) {
        s->in_cb_walk = 1;
        atomic_signal_fence(memory_order_seq_cst);
        n = rp_stackwalk_anchor(jni, out, depth);
    } else {
        n = 0;
        atomic_fetch_add_explicit(&g_crashed, 1, memory_order_relaxed);
    }
    s->in_cb_walk = 0;
    atomic_signal_fence(memory_order_seq_cst);
    atomic_fetch_sub_explicit(&g_walks, 1, memory_order_relaxed);
    return n;
}

void rp_async_callback_stack(struct rp_slot *s, const struct rp_java_frame *frames,
                             uint32_t n)
{
    if (s->held != 1)
        return;
    s->held = 2;
    atomic_signal_fence(memory_order_seq_cst);
    struct rp_sample_hdr h = s->held_hdr;
    uint32_t nj = n;
    if (nj > g_cfg.depth - h.nnative)
        nj = g_cfg.depth - h.nnative;
    if (nj) {
        h.njava = nj;
        h.status = RP_WALK_OK;
        if (nj < n)
            h.flags |= RP_SAMPLE_TRUNCATED;
    }
    struct iovec iov[3] = {
        {&h, sizeof h},
        {s->pcs, (size_t)h.nnative * sizeof(uint64_t)},
        {(void *)(uintptr_t)frames, (size_t)nj * sizeof *frames},
    };
    rp_ring_pushv(s->ring, iov, 3);
    atomic_signal_fence(memory_order_seq_cst);
    s->held = 0;
}

void rp_async_stats(struct rp_async_stats *out)
{
    out->stray = atomic_load(&g_stray);
    out->foreign = atomic_load(&g_foreign);
    out->crashed = atomic_load(&g_crashed);
}

void rp_async_hist(struct rp_hist_snap *out)
{
    rp_hist_snapshot(&g_hist, out);
}

#ifdef RP_TEST_HOOKS
/* For the LD_PRELOAD shim of tests/agent: is thread `tid` inside the handler? The
 * shim calls it from malloc/free/pthread_mutex_lock; it is async-signal-safe. */
int ringprof_test_in_handler(pid_t tid)
{
    struct rp_slot *s = rp_threads_by_tid(tid);
    return s && s->in_handler;
}
#endif

void rp_async_set_interval(uint64_t interval_ns)
{
    atomic_store(&g_interval_ns, interval_ns);
}

/* ------------------------------------------------- the flusher's watch -- */

static uint64_t g_handler_replaced;     /* 1 once the handler was found replaced */
static int g_warned_guard, g_warned_foreign;

/* Someone replaced the timer signal's handler (the application, another
 * profiler, or SIG_DFL, which would kill the JVM at our next timer): every timer
 * is deleted and sampling stops, so our signals go nowhere. */
/* The descriptor's pass hook: a replaced timer handler stops sampling (every
 * timer deleted; counted once as agent.handler_replaced), and a foreign signal
 * or a crash guard pushed aside is said once. */
static void kind_watch(const struct rp_sink *sk)
{
    (void)sk;
    if (!g_handler_replaced && !rp_async_handler_intact()) {
        rp_threads_disarm_all();
        rp_async_stop(100);
        g_handler_replaced = 1;
        rp_log("the CPU-timer signal handler was replaced by someone else: CPU sampling "
               "stopped (its timers are deleted)");
    }
    /* Someone else sends our signal (the application's setitimer(ITIMER_PROF),
     * kill, a profiler in a native library): each one is ignored, but its sender
     * is probably expecting a handler of its own. Say so once. */
    struct rp_async_stats st;
    rp_async_stats(&st);
    if (st.foreign)
        rp_log_once(&g_warned_foreign, "%s signals that are not from ringprof's timers "
                    "reach its handler (setitimer(ITIMER_PROF), kill, or another profiler "
                    "in this process?): they are ignored and counted as lost.no_slot; if "
                    "the application needs %s, give ringprof another signal with signal=, "
                    "e.g. signal=VTALRM", rp_async_signal_name(), rp_async_signal_name());
    if (!rp_async_guard_intact())
        rp_log_once(&g_warned_guard, "a SIGSEGV/SIGBUS handler was installed after "
                    "ringprof's: a fault in a stack walk is no longer contained");
}

static const char *const ASYNC_COUNTERS[] = {
    RP_COUNTER_LOST_PREFIX "no_slot", "agent.handler_replaced",
};

static void async_counters_read(uint64_t *v)
{
    struct rp_async_stats st;
    rp_async_stats(&st);
    v[0] = st.stray;
    v[1] = g_handler_replaced;
}

/* The handler's cost since the last flush (median, 99th percentile), and its
 * total. */
static size_t async_gauges_read(struct rp_gauge_value *out, size_t max)
{
    static struct rp_hist_snap prev, now, delta;
    size_t n = 0;
    if (max < 3)
        return 0;
    rp_async_hist(&now);
    rp_hist_delta(&now, &prev, &delta);
    if (rp_hist_total(&delta)) {
        out[n++] = (struct rp_gauge_value){RP_GAUGE_AGENT_HANDLER_P50,
                                           rp_hist_quantile(&delta, 0.50)};
        out[n++] = (struct rp_gauge_value){RP_GAUGE_AGENT_HANDLER_P99,
                                           rp_hist_quantile(&delta, 0.99)};
    }
    out[n++] = (struct rp_gauge_value){RP_GAUGE_AGENT_HANDLER, now.sum};
    prev = now;
    return n;
}

/* lost.no_slot, agent.handler_replaced, the handler's cost. */
static void kind_counters(enum rp_counter_group g)
{
    rp_counters_register(g, ASYNC_COUNTERS, sizeof ASYNC_COUNTERS / sizeof ASYNC_COUNTERS[0],
                         async_counters_read);
    rp_gauges_register(g, async_gauges_read);
}

/* ---------------------------------------------------------- the cpu kind -- */

/* The cpu kind with this engine (kind.h). "stop cpu" parks every thread's
 * timer (threadtimer.h, rp_threads_set_timers), so no signal is sent at all; "set
 * interval" re-arms them with the new period. */
static _Atomic int g_kind_on;

static int kind_start(const struct rp_engine_env *env, char *err, size_t errlen)
{
    const struct rp_options *o = env->opt;
    struct rp_async_config ac = {o->interval_ns, o->depth, o->native, o->signal};
    rp_cpu_set_period(o->interval_ns);
    if (rp_async_start(&ac, err, errlen) != 0)
        return -1;
    atomic_store(&g_kind_on, 1);
    return 0;
}

static int kind_on(void)
{
    return atomic_load(&g_kind_on);
}

/* Apply the kind's state and period to the timers. */
static int kind_apply(int on, uint64_t interval_ns, char *err, size_t errlen)
{
    rp_async_set_interval(interval_ns);
    if (rp_threads_set_timers(interval_ns, !on) != 0) {
        snprintf(err, errlen, "the agent is shutting down; its timers are gone");
        return -1;
    }
    return 0;
}

static int kind_switch(int on, char *err, size_t errlen)
{
    if (kind_apply(on, atomic_load(&g_interval_ns), err, errlen) != 0)
        return -1;
    atomic_store(&g_kind_on, on);
    return 0;
}

static uint64_t kind_period(void)
{
    return atomic_load(&g_interval_ns);
}

/* Every `set` re-applies the period (the one given, else the present one): the
 * setting is `always`. */
static int set_interval(uint64_t ns, char *err, size_t errlen)
{
    if (kind_apply(atomic_load(&g_kind_on), ns, err, errlen) != 0)
        return -1;
    rp_cpu_set_period(ns);
    return 0;
}

static void kind_effective(struct rp_json *j)
{
    rp_json_kv_string(j, "engine", "async");
    rp_json_kv_string(j, "timer", rp_cputimer_source_name());
    rp_json_kv_u64(j, "interval_ns", atomic_load(&g_interval_ns));
    rp_json_kv_bool(j, "native", g_cfg.native);
    rp_json_kv_string(j, "vthreads_cpu", rp_vthreads_cpu_source_name());
}

/* The CPU timers: their source, and how many of each kind were made since
 * start (a thread whose perf counter could not be opened gets a POSIX timer:
 * perf_failed, with the last reason). */
static void kind_status(struct rp_json *j)
{
    struct rp_cputimer_stats st;
    rp_cputimer_stats(&st);
    rp_json_key(j, "timers");
    rp_json_object_begin(j);
    rp_json_kv_string(j, "source", rp_cputimer_source_name());
    rp_json_kv_u64(j, "perf", st.perf);
    rp_json_kv_u64(j, "posix", st.posix);
    rp_json_kv_u64(j, "perf_failed", st.perf_failed);
    if (st.perf_failed)
        rp_json_kv_string(j, "perf_error", strerror(st.last_errno));
    rp_json_object_end(j);
}

/* The handler's time per sample since start. */
static void kind_status_agent(struct rp_json *j)
{
    static struct rp_hist_snap h;         /* 2.5 KiB; status requests never overlap */
    rp_async_hist(&h);
    rp_json_kv_u64(j, "handler_samples", rp_hist_total(&h));
    rp_json_kv_u64(j, "handler_ns_median", rp_hist_quantile(&h, 0.50));
    rp_json_kv_u64(j, "handler_ns_p99", rp_hist_quantile(&h, 0.99));
}

/* The descriptor's rings_wanted (flush/kind.h): the handler pushes into the
 * sampled thread's own ring, so with engine=async every thread has one. */
static int kind_rings_wanted(const struct rp_options *opt)
{
    (void)opt;
    return 1;
}

const struct rp_kind rp_kind_cpu_async = {
    .engine = {
        .name = RP_KIND_CPU, .kind = RP_CTL_KIND_CPU, .phase = RP_ENGINE_PHASE_SIGNAL,
        .flags = RP_ENGINE_LAST,
        .start = kind_start, .stop = rp_async_stop, .on = kind_on, .switch_kind = kind_switch,
        .settings = {{RP_CTL_KEY_INTERVAL, 1, kind_period, set_interval}},
        .period = kind_period, .effective = kind_effective, .status = kind_status,
        .status_agent = kind_status_agent,
    },
    .records = {{RP_SAMPLE_CPU, rp_cpu_flush, NULL, "agct"}},
    .place = 4,
    .thread_samples = rp_cpu_written,
    .chunk = rp_cpu_chunk,
    .pass = kind_watch,
    .counters = kind_counters,
    .rings_wanted = kind_rings_wanted,
};
