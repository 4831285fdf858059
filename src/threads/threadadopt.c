/*
 * src/threads/threadadopt.c — adoption of the Java threads that ran before the agent
 * (threadadopt.h). The set of tids that ended during the adoption pass lives
 * here, under the registry lock.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "threads/threadadopt.h"
#include "threads/threads_locked.h"
#include "threads/threadtimer.h"

static int g_adopting;                        /* between adopt_begin and _end      */
static pid_t *g_ended;                        /* tids ended meanwhile with no slot */
static size_t g_nended, g_capended;

static int ended_during_adoption_locked(pid_t tid)
{
    for (size_t i = 0; i < g_nended; i++)
        if (g_ended[i] == tid)
            return 1;
    return 0;
}

void rp_threads_adopt_note_end_locked(pid_t tid)
{
    if (!g_adopting)
        return;
    if (g_nended == g_capended) {
        size_t ncap = g_capended ? g_capended * 2 : 64;
        pid_t *n = realloc(g_ended, ncap * sizeof *n);
        if (!n)
            return;    /* the scan still retires the slot once its timer reads dead */
        g_ended = n;
        g_capended = ncap;
    }
    g_ended[g_nended++] = tid;
}

void rp_threads_adopt(JNIEnv *jni, pid_t tid, JNIEnv *env, jweak thread_ref,
                      const char *name, int daemon, int64_t java_tid)
{
    uint32_t flags = RP_SLOT_JAVA | (daemon ? RP_SLOT_DAEMON : 0);
    rp_threads_lock();
    struct rp_slot *s = tid ? rp_threads_takeover_locked(tid) : NULL;
    if (s) {
        s->flags = (s->flags & ~RP_SLOT_SCANNED) | flags;
    } else if (!tid && !rp_threadtimer_enabled_locked()) {
        /* jvmti engine: no tid needed */
        s = rp_threads_add_locked(0, 0, flags, name, env);
    } else if (tid && !rp_threads_is_agent(tid) && !ended_during_adoption_locked(tid)) {
        s = rp_threads_add_locked(tid, rp_threads_clock(tid),
                                  flags | RP_SLOT_REMOTE_TIMER, name, env);
    }
    if (s) {
        rp_threads_set_name_locked(s, name);
        if (!s->ref) {
            s->ref = thread_ref;
            thread_ref = NULL;
        }
        s->java_tid = java_tid;
        if (env && !atomic_load(&s->env))
            atomic_store_explicit(&s->env, env, memory_order_release);
    }
    rp_threads_unlock();
    rp_threads_log_pending();
    if (thread_ref && jni)
        (*jni)->DeleteWeakGlobalRef(jni, thread_ref);
}

void rp_threads_adopt_begin(void)
{
    rp_threads_lock();
    g_adopting = 1;
    g_nended = 0;
    rp_threads_unlock();
}

void rp_threads_adopt_end(void)
{
    rp_threads_lock();
    /* A thread whose ThreadEnd ran before its adoption: its slot has a timer
     * that nothing else would delete, on a thread that is gone or going. */
    for (size_t i = 0; i < g_nended; i++) {
        struct rp_slot *s = rp_threads_live_by_tid_locked(g_ended[i]);
        if (s && (s->flags & RP_SLOT_REMOTE_TIMER) && !(s->flags & RP_SLOT_FROM_START))
            rp_threads_end_locked(s, s->last_cpu_ns);
    }
    g_adopting = 0;
    g_nended = 0;
    free(g_ended);
    g_ended = NULL;
    g_capended = 0;
    rp_threads_unlock();
}
