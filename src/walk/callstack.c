/*
 * src/walk/callstack.c — Java stacks outside the signal handler (see callstack.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "walk/callstack.h"
#include "threads/threads.h"
#include "code/vmstructs.h"

static jvmtiEnv *g_jvmti;
static _Atomic uint64_t g_agct, g_jvmti_count;
static const struct rp_callstack_async *_Atomic g_async;

void rp_callstack_set_async(const struct rp_callstack_async *a)
{
    atomic_store_explicit(&g_async, a, memory_order_release);
}

static const struct rp_callstack_async *async_part(void)
{
    return atomic_load_explicit(&g_async, memory_order_acquire);
}

/* A CPU sample the handler held back for want of this callback's stack, now
 * pushed with `frames` (n of them; 0: none). */
static void push_held(struct rp_slot *s, const struct rp_java_frame *frames, uint32_t n)
{
    const struct rp_callstack_async *a = async_part();
    if (a)
        a->push_held(s, frames, n);
}

void rp_callstack_init(jvmtiEnv *jvmti)
{
    g_jvmti = jvmti;
}

/* jvmtiFrameInfo {method, location} → rp_java_frame {bci, pad, method}, in
 * place: both are 16 bytes, and frame i is read before it is written. */
static void convert(struct rp_java_frame *out, jint count)
{
    _Static_assert(sizeof(jvmtiFrameInfo) == sizeof(struct rp_java_frame),
                   "frame layouts differ in size");
    jvmtiFrameInfo *fi = (jvmtiFrameInfo *)(void *)out;
    for (jint i = 0; i < count; i++) {
        jmethodID m = fi[i].method;
        jlocation loc = fi[i].location;
        out[i].bci = loc < 0 ? RP_BCI_NATIVE : (int32_t)loc;
        out[i].pad = 0;
        out[i].method = (uint64_t)(uintptr_t)m;
    }
}

static int32_t by_jvmti(jthread t, struct rp_java_frame *out, uint32_t depth,
                        uint32_t *n, uint16_t *flags)
{
    jint count = 0;
    *n = 0;
    if ((*g_jvmti)->GetStackTrace(g_jvmti, t, 0, (jint)depth,
                                  (jvmtiFrameInfo *)(void *)out, &count) !=
        JVMTI_ERROR_NONE)
        return RP_WALK_JVMTI_ERROR;
    convert(out, count);
    *n = (uint32_t)count;
    if ((uint32_t)count >= depth)
        *flags |= RP_SAMPLE_TRUNCATED;
    return count ? RP_WALK_OK : RP_WALK_NO_JAVA_FRAMES;
}

struct rp_java_frame *rp_callstack_buffer(struct rp_slot *s, uint32_t depth)
{
    if (!s->cb_java)
        s->cb_java = calloc(depth, sizeof *s->cb_java);
    return s->cb_java;
}

int rp_callstack_enter(struct rp_slot *s, int work)
{
    int outer = s->in_agent;
    s->in_agent = work;
    return outer;
}

void rp_callstack_leave(struct rp_slot *s, int outer)
{
    s->cb_njava = 0;
    atomic_signal_fence(memory_order_seq_cst);
    push_held(s, NULL, 0);
    s->in_agent = outer;
}

static int32_t take(struct rp_slot *s, JNIEnv *jni, struct rp_java_frame *out,
                    uint32_t depth, uint32_t *n, uint16_t *flags)
{
    const struct rp_callstack_async *a = async_part();
    int k = a ? a->walk(s, jni, out, (int)depth) : 0;
    if (k > 0) {
        atomic_fetch_add_explicit(&g_agct, 1, memory_order_relaxed);
        *n = (uint32_t)k;
        if ((uint32_t)k >= depth)
            *flags |= RP_SAMPLE_TRUNCATED;
        return RP_WALK_OK;
    }
    atomic_fetch_add_explicit(&g_jvmti_count, 1, memory_order_relaxed);
    return by_jvmti(NULL, out, depth, n, flags);
}

int32_t rp_callstack_here(struct rp_slot *s, JNIEnv *jni, struct rp_java_frame *out,
                          uint32_t depth, uint32_t *n, uint16_t *flags)
{
    /* The buffer is rewritten: the handler must not take the last callback's
     * frames from it meanwhile. */
    s->cb_kept = 0;
    atomic_signal_fence(memory_order_seq_cst);
    int32_t status = take(s, jni, out, depth, n, flags);
    struct rp_vm_anchor a;
    s->cb_anchor_sp = rp_vmstructs_anchor(jni, &a) == 0 ? *a.sp_slot : 0;
    atomic_signal_fence(memory_order_seq_cst);
    s->cb_njava = (sig_atomic_t)*n;
    s->cb_kept = (sig_atomic_t)*n;
    push_held(s, out, *n);
    return status;
}

int32_t rp_callstack_of(jthread t, struct rp_java_frame *out, uint32_t depth,
                        uint32_t *n, uint16_t *flags)
{
    return by_jvmti(t, out, depth, n, flags);
}

void rp_callstack_stats(struct rp_callstack_stats *out)
{
    out->agct = atomic_load(&g_agct);
    out->jvmti = atomic_load(&g_jvmti_count);
}
