/*
 * tests/agent/test_threads.c — the thread registry (src/threads/threads.c) on its own, with
 * real CPU timers on real threads but no JVM: the races around adoption and tid
 * reuse that leave a slot with a timer nobody deletes, or a thread with a timer
 * that never fires.
 *
 * The timer signal is SIGPROF, ignored here: only the timers' state matters.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "../../src/threads/threadadopt.h"
#include "../../src/threads/threads.h"
#include "../../src/threads/threadscan.h"

/* A thread that does what the main thread tells it, one step at a time. */
enum { CMD_NONE, CMD_DETACH, CMD_ATTACH, CMD_EXIT };
struct worker {
    pthread_t th;
    _Atomic pid_t tid;
    _Atomic int cmd, done;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    atomic_store(&w->tid, rp_gettid());
    for (;;) {
        int c = atomic_load(&w->cmd);
        if (c == CMD_EXIT)
            return NULL;
        if (c != CMD_NONE && atomic_load(&w->done) != c) {
            if (c == CMD_DETACH)
                rp_threads_detach_current();
            else if (c == CMD_ATTACH)
                rp_threads_attach_current(NULL, NULL, "worker", 0, 7);
            atomic_store(&w->done, c);
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

static pid_t worker_start(struct worker *w)
{
    memset(w, 0, sizeof *w);
    pthread_create(&w->th, NULL, worker_main, w);
    while (!atomic_load(&w->tid))
        sched_yield();
    return atomic_load(&w->tid);
}

static void worker_do(struct worker *w, int cmd)
{
    atomic_store(&w->cmd, cmd);
    if (cmd == CMD_EXIT) {
        pthread_join(w->th, NULL);
        return;
    }
    while (atomic_load(&w->done) != cmd)
        sched_yield();
}

static struct rp_slot *live(pid_t tid)
{
    struct rp_slot *s = rp_threads_by_tid(tid);
    return s && atomic_load(&s->state) == RP_SLOT_LIVE ? s : NULL;
}

/* Is the slot's timer armed and counting its thread's CPU? A POSIX timer reads
 * a non-zero it_value; a perf counter's task clock moves (the worker uses a
 * little CPU every 200 us). */
static int timer_counts(struct rp_slot *s)
{
    if (!atomic_load(&s->armed))
        return 0;
    if (s->timer.kind == RP_TIMER_POSIX) {
        struct itimerspec cur;
        return timer_gettime(s->timer.timer, &cur) == 0 &&
               (cur.it_value.tv_sec || cur.it_value.tv_nsec);
    }
    uint64_t c0 = 0, c = 0;
    int fd = atomic_load(&s->timer.fd);
    if (s->timer.kind != RP_TIMER_PERF || fd < 0 || read(fd, &c0, sizeof c0) != sizeof c0)
        return 0;
    for (int i = 0; i < 100; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        if (read(fd, &c, sizeof c) == sizeof c && c > c0)
            return 1;
    }
    return 0;
}

/* ThreadEnd runs (finding no slot) after adoption read the tid and before it
 * armed the timer: the thread must not be adopted. */
static void test_end_during_adoption(void)
{
    struct worker w;
    pid_t tid = worker_start(&w);
    rp_threads_adopt_begin();
    worker_do(&w, CMD_DETACH);            /* its ThreadEnd: the thread still runs */
    rp_threads_adopt(NULL, tid, NULL, NULL, "late", 0, 1);
    rp_threads_adopt_end();
    CHECK(live(tid) == NULL, "a thread that ended during adoption got a live slot");
    worker_do(&w, CMD_EXIT);
}

/* An adopted thread that dies without a ThreadEnd of ours: the scan retires it,
 * as it does scanned threads. */
static void test_adopted_retired(void)
{
    struct worker w;
    pid_t tid = worker_start(&w);
    rp_threads_adopt(NULL, tid, NULL, NULL, "adopted", 0, 2);
    struct rp_slot *s = live(tid);
    REQUIRE(s != NULL, "adopted");
    CHECK(s->flags & RP_SLOT_REMOTE_TIMER, "adopted slot flagged remote");
    worker_do(&w, CMD_EXIT);
    /* pthread_join returns when the kernel clears the tid, a little before it
     * releases the task and disarms its CPU timers: scan until then. */
    for (int i = 0; i < 200 && atomic_load(&s->state) == RP_SLOT_LIVE; i++) {
        rp_threads_scan();
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    CHECK(atomic_load(&s->state) != RP_SLOT_LIVE, "dead adopted thread not retired");
}

/* A Java thread starting on a tid whose scanned slot has a dead timer (the
 * earlier thread with this tid died between two scans) gets a working timer. */
static void test_takeover_dead_timer(void)
{
    struct worker w;
    pid_t tid = worker_start(&w);
    rp_threads_scan();
    struct rp_slot *old = live(tid);
    REQUIRE(old != NULL, "scanned");
    uint32_t gen = atomic_load(&old->gen);
    /* What a timer made for a previous thread with this tid reads like (a perf
     * counter's probe timer is the one that tells). */
    REQUIRE(old->timer.kind == RP_TIMER_POSIX || old->timer.has_probe,
            "a scanned thread's perf counter has no probe");
    struct itimerspec zero;
    memset(&zero, 0, sizeof zero);
    timer_settime(old->timer.timer, 0, &zero, NULL);
    worker_do(&w, CMD_ATTACH);
    struct rp_slot *s = live(tid);
    REQUIRE(s != NULL, "attached");
    CHECK(s != old || atomic_load(&s->gen) != gen, "the dead slot was taken over");
    CHECK(timer_counts(s), "the started thread's timer does not count");
    worker_do(&w, CMD_DETACH);
    worker_do(&w, CMD_EXIT);
}

/* The kind of timer each slot made from now on has. */
static void check_kinds(enum rp_timer_source want)
{
    struct worker w;
    pid_t tid = worker_start(&w);
    rp_threads_adopt(NULL, tid, NULL, NULL, "kind", 0, 3);
    struct rp_slot *s = live(tid);
    REQUIRE(s != NULL, "adopted");
    CHECK(s->timer.kind == (int)want, "timer kind %d, not %d", s->timer.kind, (int)want);
    CHECK(timer_counts(s), "the adopted thread's timer does not count");
    worker_do(&w, CMD_EXIT);
}

int main(void)
{
    signal(SIGPROF, SIG_IGN);
    struct rp_threads_config cfg = {16, 4096, 1000000000u};
    char err[256];
    REQUIRE(rp_cputimer_init(RP_TIMER_POSIX, SIGPROF, cfg.interval_ns, err, sizeof err) == 0,
            "timer init: %s", err);
    REQUIRE(rp_threads_init(&cfg, err, sizeof err) == 0, "init: %s", err);
    check_kinds(RP_TIMER_POSIX);
    test_end_during_adoption();
    test_adopted_retired();
    test_takeover_dead_timer();
    /* The same with perf_event counters, where this machine allows them. */
    if (rp_cputimer_init(RP_TIMER_PERF, SIGPROF, cfg.interval_ns, err, sizeof err) == 0) {
        check_kinds(RP_TIMER_PERF);
        test_end_during_adoption();
        test_adopted_retired();
        test_takeover_dead_timer();
    } else {
        printf("# perf_event counters not available here, tested POSIX timers only: %s\n",
               err);
    }
    return check_exit("test_threads");
}
