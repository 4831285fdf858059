/*
 * src/threads/threadtimer.c — when a slot's CPU timer is made, re-armed and deleted
 * (threadtimer.h). The period and the parked/closed state live here, under the
 * registry lock; every timer made follows them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "threads/cputimer.h"
#include "threads/threads_locked.h"
#include "threads/threadtimer.h"

static uint64_t g_interval_ns;                /* 0: no timers (jvmti engine)      */
static int g_closed;                          /* disarm_all ran: no new timers    */
static int g_parked;                          /* "stop cpu": timers never fire     */
static int g_logged_timer;

void rp_threadtimer_config_locked(uint64_t interval_ns)
{
    g_interval_ns = interval_ns;
}

int rp_threadtimer_enabled_locked(void)
{
    return g_interval_ns != 0;
}

int rp_threadtimer_closed_locked(void)
{
    return g_closed;
}

int rp_threadtimer_arm_locked(struct rp_slot *s)
{
    if (!g_interval_ns)
        return 0;
    if (g_closed) {
        errno = ESHUTDOWN;
        return -1;
    }
    if (rp_cputimer_create(&s->timer, s->tid, s->cpu_clock, rp_threads_tag(s),
                           (s->flags & RP_SLOT_REMOTE_TIMER) != 0, g_interval_ns,
                           g_parked) != 0)
        goto fail;
    atomic_store_explicit(&s->armed, 1, memory_order_release);
    return 0;
fail:
    rp_threads_stats_locked()->timer_failures++;
    /* EINVAL, ESRCH: the thread died or is exiting; not worth a line. */
    if (errno != EINVAL && errno != ESRCH && errno != ESHUTDOWN)
        rp_threads_log_once_locked(&g_logged_timer, "cannot create a CPU timer for "
                                   "thread %d: %s (threads without one are not "
                                   "sampled)", (int)s->tid, strerror(errno));
    return -1;
}

void rp_threadtimer_delete_locked(struct rp_slot *s)
{
    if (atomic_load(&s->armed)) {
        rp_cputimer_delete(&s->timer);
        atomic_store(&s->armed, 0);
    }
}

int rp_threadtimer_alive_locked(struct rp_slot *s)
{
    return atomic_load(&s->armed) && rp_cputimer_alive(&s->timer);
}

void rp_threads_disarm_all(void)
{
    rp_threads_lock();
    g_closed = 1;
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++)
        rp_threadtimer_delete_locked(rp_threads_slot(i));
    rp_threads_unlock();
}

int rp_threads_set_timers(uint64_t interval_ns, int parked)
{
    rp_threads_lock();
    if (!g_interval_ns || g_closed || !interval_ns) {
        rp_threads_unlock();
        return -1;
    }
    g_interval_ns = interval_ns;
    g_parked = parked;
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (atomic_load(&s->state) != RP_SLOT_LIVE || !atomic_load(&s->armed))
            continue;
        /* A timer whose thread just died may refuse: it reads disarmed and
         * the scan retires it as before. */
        rp_cputimer_set(&s->timer, interval_ns, parked);
    }
    rp_threads_unlock();
    return 0;
}
