/*
 * src/threads/threadscan.c — the /proc/self/task scan (threadscan.h): the registry's
 * view of the threads that never register themselves.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "threads/slottab.h"
#include "threads/threads_locked.h"
#include "threads/threadscan.h"
#include "threads/threadtimer.h"
#include "threads/vmnames.h"

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

/* ------------------------------------------------------------ full names -- */

/* The full names of the JVM's hidden Java threads (vmnames.h), read at most once
 * per scan, and only when a thread's comm may be one cut short. */
struct full_names {
    int read;
    size_t n, cap;
    pid_t *tid;
    char **name;
};

static void full_names_add(void *arg, pid_t tid, const char *name)
{
    struct full_names *f = arg;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 32;
        pid_t *t = realloc(f->tid, cap * sizeof *t);
        if (t)
            f->tid = t;
        char **nm = t ? realloc(f->name, cap * sizeof *nm) : NULL;
        if (!nm)
            return;                     /* no memory: that thread keeps its comm */
        f->name = nm;
        f->cap = cap;
    }
    if ((f->name[f->n] = strdup(name)) != NULL)
        f->tid[f->n++] = tid;
}

static void full_names_free(struct full_names *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->name[i]);
    free(f->tid);
    free(f->name);
}

/* Whether thread `tid` may be one whose name the JVM must give: not a thread
 * that registered itself (JVMTI gave those their full names), so that the walk
 * reads the names of the few the scan found, not of every Java thread. */
static int unnamed(void *arg, pid_t tid)
{
    (void)arg;
    struct rp_slot *s = rp_threads_by_tid(tid);
    return !s || (s->flags & RP_SLOT_SCANNED);
}

/* Whether `comm` is `name` cut to the kernel's length. */
static int comm_of(const char *comm, const char *name)
{
    return strlen(comm) == RP_COMM_MAX && strlen(name) > RP_COMM_MAX &&
           !strncmp(comm, name, RP_COMM_MAX);
}

/* The JVM's full name of thread `tid`, whose comm is `comm`, or NULL (not a
 * hidden Java thread, or comm is not cut). */
static const char *full_name(struct full_names *f, pid_t tid, const char *comm)
{
    if (strlen(comm) != RP_COMM_MAX)
        return NULL;
    if (!f->read) {
        f->read = 1;
        rp_vmnames_each(unnamed, full_names_add, f);
    }
    for (size_t i = 0; i < f->n; i++)
        if (f->tid[i] == tid && comm_of(comm, f->name[i]))
            return f->name[i];
    return NULL;
}

/* Per slot: how many times its occupant's full name was looked up (a read can
 * fail while a GC moves the objects it follows), so that a thread with a 15-byte
 * comm that is no hidden Java thread ("VM Periodic Task Thread", a GC worker)
 * costs a few look-ups, not one per scan. Each look-up is a walk of the JVM's
 * whole thread list (two reads a thread, rp_vmnames_each). */
#define NAME_TRIES 2
struct looked {
    uint32_t gen1, tries;            /* the occupant (generation + 1)               */
};
static struct rp_slottab g_looked = RP_SLOTTAB(struct looked);

/* Scanned threads still named by a 15-byte comm: their full name, if they are
 * hidden Java threads, up to NAME_TRIES times each. */
static void complete_names(struct full_names *f)
{
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (atomic_load(&s->state) != RP_SLOT_LIVE || !(s->flags & RP_SLOT_SCANNED))
            continue;
        struct rp_slot_meta m;
        rp_threads_meta(s, &m);
        struct looked *e = strlen(m.name) == RP_COMM_MAX
                         ? rp_slottab_get(&g_looked, i, 1) : NULL;
        uint32_t gen1 = atomic_load(&s->gen) + 1;
        if (!e)
            continue;
        if (e->gen1 != gen1)
            *e = (struct looked){gen1, 0};
        if (e->tries >= NAME_TRIES)
            continue;
        e->tries++;
        const char *full = full_name(f, s->tid, m.name);
        if (full)
            rp_threads_set_name(s, full);
    }
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

/* New names of scanned threads that took samples (they may rename themselves);
 * a comm that is the cut of the name the slot has keeps that name. */
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
        struct rp_slot_meta m;
        read_comm(s->tid, name, sizeof name);
        rp_threads_meta(s, &m);
        if (name[0] && !comm_of(name, m.name))
            rp_threads_set_name(s, name);
    }
}

int rp_threads_scan(void)
{
    struct full_names f = {0};
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
        const char *full = full_name(&f, (pid_t)tid, name);
        rp_threads_lock();
        struct rp_slot *s = rp_threads_by_tid((pid_t)tid) ? NULL
            : rp_threads_add_locked((pid_t)tid, rp_threads_clock((pid_t)tid),
                                    RP_SLOT_SCANNED | RP_SLOT_REMOTE_TIMER,
                                    full ? full : name, NULL);
        rp_threads_unlock();
        added += s != NULL;
    }
    closedir(d);
    complete_names(&f);
    full_names_free(&f);
    rp_threads_log_pending();
    return added;
}
