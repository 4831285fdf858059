/*
 * src/flush/threadrec.c — the chunk's THREAD records and thread names (see
 * threadrec.h).
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/u64map.h"
#include "flush/kind.h"
#include "flush/threadrec.h"

static struct rp_u64map g_tids;         /* slot index → chunk thread id, this pass   */

void rp_threadrec_reset(void)
{
    rp_u64map_clear(&g_tids);
}

uint32_t rp_threadrec_id(struct rp_chunk_writer *w, struct rp_slot *s, uint64_t now)
{
    uint64_t v;
    if (rp_u64map_get(&g_tids, s->index, &v))
        return (uint32_t)v;
    struct rp_slot_meta m;
    rp_threads_meta(s, &m);
    uint32_t flags = 0;
    if (m.flags & RP_SLOT_JAVA)
        flags |= RP_THREAD_JAVA;
    if (m.flags & RP_SLOT_DAEMON)
        flags |= RP_THREAD_DAEMON;
    if (atomic_load(&s->state) == RP_SLOT_ENDED)
        flags |= RP_THREAD_ENDED;
    uint64_t key = (uint64_t)atomic_load(&s->gen) << 32 | s->index;
    uint32_t id = rp_chunk_thread(w, key, (uint64_t)(m.tid > 0 ? m.tid : 0),
                                  (uint64_t)(m.java_tid > 0 ? m.java_tid : 0),
                                  m.name[0] ? m.name : "[unnamed]", flags, now);
    if (id)
        rp_u64map_put(&g_tids, s->index, id);
    return id;
}

/* The CPU time a kind read for a thread with no tid, or 0. */
static uint64_t kind_cpu(const struct rp_slot *s)
{
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    for (size_t i = 0; i < n; i++) {
        uint64_t ns = k[i]->thread_cpu ? k[i]->thread_cpu(s) : 0;
        if (ns)
            return ns;
    }
    return 0;
}

static uint64_t slot_cpu(struct rp_slot *s)
{
    struct timespec ts;
    uint64_t ns;
    if (s->tid && clock_gettime(s->cpu_clock, &ts) == 0)
        s->last_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    else if (!s->tid && (ns = kind_cpu(s)))
        s->last_cpu_ns = ns;
    return s->last_cpu_ns;
}

/* Thread `t`'s name now into its slot. */
static void poll_name(jvmtiEnv *jvmti, JNIEnv *jni, struct rp_slot *s, jobject t)
{
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    if ((*jvmti)->GetThreadInfo(jvmti, t, &info) != JVMTI_ERROR_NONE)
        return;
    if (info.name) {
        rp_threads_set_name(s, info.name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    }
    if (info.thread_group)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

void rp_threadrec_poll_names(jvmtiEnv *jvmti, JNIEnv *jni)
{
    uint32_t n = rp_threads_count();
    for (uint32_t i = 0; i < n; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (atomic_load(&s->state) != RP_SLOT_LIVE || !(s->flags & RP_SLOT_JAVA) ||
            !s->sampled)
            continue;
        s->sampled = 0;
        jobject t = rp_threads_local_ref(jni, s);
        if (!t)
            continue;
        poll_name(jvmti, jni, s, t);
        (*jni)->DeleteLocalRef(jni, t);
    }
}

void rp_threadrec_cpu(struct rp_chunk_writer *w, struct rp_slot *s, uint64_t now)
{
    uint32_t id = rp_threadrec_id(w, s, now);
    uint64_t cpu = slot_cpu(s);
    if (id && cpu)
        rp_chunk_thread_cpu(w, id, now, cpu);
}

void rp_threadrec_end(struct rp_chunk_writer *w, struct rp_slot *s, uint64_t now)
{
    rp_u64map_del(&g_tids, s->index);     /* so that the ENDED record is written */
    if (w) {
        uint32_t id = rp_threadrec_id(w, s, now);
        struct rp_slot_meta m;
        rp_threads_meta(s, &m);
        uint64_t cpu = m.end_cpu_ns ? m.end_cpu_ns : s->last_cpu_ns;
        if (id && cpu)
            rp_chunk_thread_cpu(w, id, now, cpu);
    }
    rp_u64map_del(&g_tids, s->index);     /* the slot's next thread is another key */
}
