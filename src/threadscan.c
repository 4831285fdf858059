/*
 * src/threadscan.c — the /proc/self/task scan (threadscan.h): the registry's
 * view of the threads that never register themselves.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "threads_locked.h"
#include "threadscan.h"
#include "threadtimer.h"

static void read_comm(pid_t tid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0) {
        out[0] = '\0';
        return;
    }
    out[n] = '\0';
    if (out[n - 1] == '\n')
        out[n - 1] = '\0';
}

/* Threads whose timer another thread made (scanned or adopted: no ThreadEnd of
 * ours is sure to end them) that died since the last scan: their CPU timer
 * reads disarmed. */
static void retire_dead(void)
{
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (atomic_load(&s->state) != RP_SLOT_LIVE || !(s->flags & RP_SLOT_REMOTE_TIMER))
            continue;
        rp_threads_lock();
        if (atomic_load(&s->state) == RP_SLOT_LIVE && (s->flags & RP_SLOT_REMOTE_TIMER) &&
            atomic_load(&s->armed) && !rp_threadtimer_alive_locked(s)) {
            rp_threads_end_locked(s, s->last_cpu_ns);
            rp_threads_stats_locked()->retired_by_scan++;
        }
        rp_threads_unlock();
    }
}

/* New names of scanned threads that took samples (they may rename themselves). */
static void refresh_scanned_names(void)
{
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (atomic_load(&s->state) != RP_SLOT_LIVE || !(s->flags & RP_SLOT_SCANNED) ||
            !s->sampled)
            continue;
        s->sampled = 0;
        char name[RP_THREAD_NAME_MAX];
        read_comm(s->tid, name, sizeof name);
        if (name[0])
            rp_threads_set_name(s, name);
    }
}

int rp_threads_scan(void)
{
    retire_dead();
    refresh_scanned_names();
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    int added = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0 || tid >= (long)RP_THREADS_TID_LIMIT)
            continue;
        if (rp_threads_by_tid((pid_t)tid) || rp_threads_is_agent((pid_t)tid))
            continue;
        char name[RP_THREAD_NAME_MAX];
        read_comm((pid_t)tid, name, sizeof name);
        rp_threads_lock();
        if (!rp_threads_by_tid((pid_t)tid) &&
            rp_threads_add_locked((pid_t)tid, rp_threads_clock((pid_t)tid),
                                  RP_SLOT_SCANNED | RP_SLOT_REMOTE_TIMER, name, NULL))
            added++;
        rp_threads_unlock();
    }
    closedir(d);
    rp_threads_log_pending();
    return added;
}
