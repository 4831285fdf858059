/*
 * src/code/vmstructs.c — HotSpot's VMStructs: tid and JNIEnv of a running Java thread
 * (see vmstructs.h).
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "code/vmstructs.h"

static long g_osthread_off = -1;      /* (Java)Thread::_osthread               */
static long g_tid_off = -1;           /* OSThread::_thread_id                  */
static long g_env_off = -1;           /* JNIEnv* - JavaThread*, learned          */
/* Looked up by the first caller; threads that race store the same id. */
static _Atomic(jfieldID) g_eetop;
/* For lock owners (lock.c); optional: without them owners are unknown. */
static long g_stack_base_off = -1;    /* (Java)Thread::_stack_base             */
static long g_stack_size_off = -1;    /* (Java)Thread::_stack_size             */
static long g_pending_off = -1;       /* JavaThread::_current_pending_monitor  */
static long g_owner_off = -1;         /* ObjectMonitor::_owner                 */
static long g_owner_id_off = -1;      /* JavaThread::_monitor_owner_id (24+)   */
/* For the async engine's stack walk (stackwalk.c); optional. */
static long g_anchor_off = -1;        /* JavaThread::_anchor                   */
static long g_anchor_sp_off = -1;     /* JavaFrameAnchor::_last_Java_sp        */
static long g_anchor_pc_off = -1;     /* JavaFrameAnchor::_last_Java_pc        */
static long g_anchor_fp_off = -1;     /* JavaFrameAnchor::_last_Java_fp (x86)  */
static long g_state_off = -1;         /* JavaThread::_thread_state             */
static int g_state_in_vm = -1;        /* the constant _thread_in_vm            */
static int g_state_in_java = -1;      /* the constant _thread_in_Java          */
static const uint64_t *g_code_low, *g_code_high;  /* CodeCache::_low/_high_bound */

static int sym_u64(const char *name, uint64_t *out)
{
    const uint64_t *p = dlsym(RTLD_DEFAULT, name);
    if (!p)
        return -1;
    *out = *p;
    return 0;
}

/* ------------------------------------------------------------ the tables -- */

/* One of HotSpot's tables (gHotSpotVMStructs, ...Types, ...IntConstants): its
 * first entry and stride. The arrays and their layout are exported data
 * symbols of libjvm, so nothing here depends on the JDK's version. */
struct table {
    const char *base;
    uint64_t stride;
};

static int table(const char *array, const char *stride, struct table *t)
{
    char *const *base = dlsym(RTLD_DEFAULT, array);
    if (!base || !*base || sym_u64(stride, &t->stride))
        return -1;
    t->base = *base;
    return 0;
}

long rp_vmstructs_type_size(const char *type)
{
    struct table t;
    uint64_t name_off, size_off;
    if (table("gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride", &t) ||
        sym_u64("gHotSpotVMTypeEntryTypeNameOffset", &name_off) ||
        sym_u64("gHotSpotVMTypeEntrySizeOffset", &size_off))
        return -1;
    for (const char *e = t.base;; e += t.stride) {
        const char *n = *(const char *const *)(e + name_off);
        if (!n)
            return -1;
        if (!strcmp(n, type))
            return (long)*(const uint64_t *)(e + size_off);
    }
}

int rp_vmstructs_field(const char *type, const char *field, struct rp_vm_field *out)
{
    struct table t;
    uint64_t type_off, field_off, tstr_off, offset_off, static_off, address_off;
    out->offset = -1;
    out->address = 0;
    out->size = 0;
    if (table("gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride", &t) ||
        sym_u64("gHotSpotVMStructEntryTypeNameOffset", &type_off) ||
        sym_u64("gHotSpotVMStructEntryFieldNameOffset", &field_off) ||
        sym_u64("gHotSpotVMStructEntryTypeStringOffset", &tstr_off) ||
        sym_u64("gHotSpotVMStructEntryOffsetOffset", &offset_off) ||
        sym_u64("gHotSpotVMStructEntryIsStaticOffset", &static_off) ||
        sym_u64("gHotSpotVMStructEntryAddressOffset", &address_off))
        return -1;
    for (const char *e = t.base;; e += t.stride) {
        const char *ty = *(const char *const *)(e + type_off);
        const char *fi = *(const char *const *)(e + field_off);
        if (!ty)
            return -1;
        if (!fi || strcmp(ty, type) || strcmp(fi, field))
            continue;
        if (*(const int32_t *)(e + static_off))
            out->address = (uint64_t)(uintptr_t)*(void *const *)(e + address_off);
        else
            out->offset = (long)*(const uint64_t *)(e + offset_off);
        /* The field's type: a pointer is 8 bytes; anything else is looked up in
         * the types table (CodeBlob::_frame_complete_offset is an int on JDK 17
         * and an int16_t on JDK 25). */
        const char *ts = *(const char *const *)(e + tstr_off);
        size_t len = ts ? strlen(ts) : 0;
        if (len && ts[len - 1] == '*') {
            out->size = (int)sizeof(void *);
        } else if (len) {
            long sz = rp_vmstructs_type_size(ts);
            out->size = sz > 0 && sz <= 8 ? (int)sz : 0;
        }
        return 0;
    }
}

int rp_vmstructs_int(const char *name, int *out)
{
    struct table t;
    uint64_t name_off, value_off;
    if (table("gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryArrayStride", &t) ||
        sym_u64("gHotSpotVMIntConstantEntryNameOffset", &name_off) ||
        sym_u64("gHotSpotVMIntConstantEntryValueOffset", &value_off))
        return -1;
    for (const char *e = t.base;; e += t.stride) {
        const char *n = *(const char *const *)(e + name_off);
        if (!n)
            return -1;
        if (!strcmp(n, name)) {
            *out = *(const int32_t *)(e + value_off);
            return 0;
        }
    }
}

/* A non-static field's offset, -1 if it is not there. */
static long offset_of(const char *type, const char *field)
{
    struct rp_vm_field f;
    return rp_vmstructs_field(type, field, &f) == 0 ? f.offset : -1;
}

/* A field that JDKs list under one type or the other (JavaThread in 17,
 * Thread in 25). */
static long offset_of2(const char *type1, const char *type2, const char *field)
{
    long off = offset_of(type1, field);
    return off >= 0 ? off : offset_of(type2, field);
}

int rp_vmstructs_init(void)
{
    struct rp_vm_field f;
    g_osthread_off = offset_of2("JavaThread", "Thread", "_osthread");
    g_tid_off = offset_of("OSThread", "_thread_id");
    g_stack_base_off = offset_of2("JavaThread", "Thread", "_stack_base");
    g_stack_size_off = offset_of2("JavaThread", "Thread", "_stack_size");
    g_pending_off = offset_of("JavaThread", "_current_pending_monitor");
    g_owner_off = offset_of("ObjectMonitor", "_owner");
    g_owner_id_off = offset_of2("JavaThread", "Thread", "_monitor_owner_id");
    g_anchor_off = offset_of("JavaThread", "_anchor");
    g_state_off = offset_of("JavaThread", "_thread_state");
    g_anchor_sp_off = offset_of("JavaFrameAnchor", "_last_Java_sp");
    g_anchor_pc_off = offset_of("JavaFrameAnchor", "_last_Java_pc");
    g_anchor_fp_off = offset_of("JavaFrameAnchor", "_last_Java_fp");
    if (rp_vmstructs_int("_thread_in_vm", &g_state_in_vm) != 0)
        g_state_in_vm = -1;
    if (rp_vmstructs_int("_thread_in_Java", &g_state_in_java) != 0)
        g_state_in_java = -1;
    if (rp_vmstructs_field("CodeCache", "_low_bound", &f) == 0)
        g_code_low = (const uint64_t *)(uintptr_t)f.address;
    if (rp_vmstructs_field("CodeCache", "_high_bound", &f) == 0)
        g_code_high = (const uint64_t *)(uintptr_t)f.address;
    return g_osthread_off >= 0 && g_tid_off >= 0 ? 0 : -1;
}

/* Read `len` bytes at `addr` of this process without risking a fault. */
static int safe_read(uint64_t addr, void *out, size_t len)
{
    struct iovec local = {out, len};
    struct iovec remote = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int rp_vmstructs_read(uint64_t addr, void *out, size_t len)
{
    return safe_read(addr, out, len);
}

uint64_t rp_vmstructs_java_thread(JNIEnv *jni, jobject thread)
{
    jfieldID eetop = atomic_load_explicit(&g_eetop, memory_order_acquire);
    if (!eetop) {
        jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
        if (!k) {
            (*jni)->ExceptionClear(jni);
            return 0;
        }
        eetop = (*jni)->GetFieldID(jni, k, "eetop", "J");
        (*jni)->DeleteLocalRef(jni, k);
        if (!eetop) {
            (*jni)->ExceptionClear(jni);
            return 0;
        }
        atomic_store_explicit(&g_eetop, eetop, memory_order_release);
    }
    return (uint64_t)(*jni)->GetLongField(jni, thread, eetop);
}

pid_t rp_vmstructs_tid(uint64_t java_thread)
{
    uint64_t osthread = 0;
    int32_t tid = 0;
    if (!java_thread || g_osthread_off < 0 ||
        safe_read(java_thread + (uint64_t)g_osthread_off, &osthread, sizeof osthread) ||
        !osthread || safe_read(osthread + (uint64_t)g_tid_off, &tid, sizeof tid))
        return 0;
    return tid > 0 ? (pid_t)tid : 0;
}

int rp_vmstructs_learn_env(JNIEnv *jni, jobject self)
{
    uint64_t jt = rp_vmstructs_java_thread(jni, self);
    if (!jt)
        return -1;
    /* The offsets are HotSpot's word, not checked by anyone: check them on the
     * one thread whose tid we know. A mismatch (or a failed read) means they do
     * not describe this JVM, and no other thread's tid read through them could
     * be trusted with a timer. */
    if (rp_vmstructs_tid(jt) != (pid_t)syscall(SYS_gettid))
        return -1;
    long off = (long)((uint64_t)(uintptr_t)jni - jt);
    if (off <= 0 || off > 65536)           /* it is a member: a small positive offset */
        return -1;
    if (g_env_off >= 0 && g_env_off != off)
        return -1;
    g_env_off = off;
    return 0;
}

JNIEnv *rp_vmstructs_env(uint64_t java_thread)
{
    if (!java_thread || g_env_off < 0)
        return NULL;
    return (JNIEnv *)(uintptr_t)(java_thread + (uint64_t)g_env_off);
}

int rp_vmstructs_stack(uint64_t java_thread, uint64_t *lo, uint64_t *hi)
{
    uint64_t base = 0, size = 0;
    if (!java_thread || g_stack_base_off < 0 || g_stack_size_off < 0 ||
        safe_read(java_thread + (uint64_t)g_stack_base_off, &base, sizeof base) ||
        safe_read(java_thread + (uint64_t)g_stack_size_off, &size, sizeof size) ||
        !base || !size || size > base)
        return -1;
    *lo = base - size;
    *hi = base;
    return 0;
}

uint64_t rp_vmstructs_pending_owner(uint64_t java_thread)
{
    uint64_t monitor = 0, owner = 0;
    if (!java_thread || g_pending_off < 0 || g_owner_off < 0 ||
        safe_read(java_thread + (uint64_t)g_pending_off, &monitor, sizeof monitor) ||
        !monitor || safe_read(monitor + (uint64_t)g_owner_off, &owner, sizeof owner))
        return 0;
    return owner;
}

int rp_vmstructs_owner_ids(void)
{
    return g_owner_id_off >= 0;
}

uint64_t rp_vmstructs_owner_id(uint64_t java_thread)
{
    uint64_t id = 0;
    if (!java_thread || g_owner_id_off < 0 ||
        safe_read(java_thread + (uint64_t)g_owner_id_off, &id, sizeof id))
        return 0;
    return id;
}

int rp_vmstructs_have_self_owner_id(void)
{
    return g_env_off >= 0 && g_owner_id_off >= 0;
}

int64_t rp_vmstructs_self_owner_id(JNIEnv *env)
{
    if (!env || !rp_vmstructs_have_self_owner_id())
        return 0;
    uint64_t jt = (uint64_t)(uintptr_t)env - (uint64_t)g_env_off;
    return *(volatile const int64_t *)(uintptr_t)(jt + (uint64_t)g_owner_id_off);
}

int rp_vmstructs_code_bounds(uint64_t *low, uint64_t *high)
{
    if (!g_code_low || !g_code_high || safe_read((uint64_t)(uintptr_t)g_code_low, low,
                                                 sizeof *low) ||
        safe_read((uint64_t)(uintptr_t)g_code_high, high, sizeof *high) || *low >= *high)
        return -1;
    return 0;
}

int rp_vmstructs_have_anchor(void)
{
    return g_env_off >= 0 && g_anchor_off >= 0 && g_anchor_sp_off >= 0 &&
           g_anchor_pc_off >= 0 && g_state_off >= 0 && g_state_in_vm >= 0;
}

int rp_vmstructs_anchor(JNIEnv *env, struct rp_vm_anchor *out)
{
    if (!env || !rp_vmstructs_have_anchor())
        return -1;
    uint64_t jt = (uint64_t)(uintptr_t)env - (uint64_t)g_env_off;
    uint64_t a = jt + (uint64_t)g_anchor_off;
    out->sp_slot = (volatile uint64_t *)(uintptr_t)(a + (uint64_t)g_anchor_sp_off);
    out->pc_slot = (volatile uint64_t *)(uintptr_t)(a + (uint64_t)g_anchor_pc_off);
    out->fp_slot = g_anchor_fp_off >= 0 ?
                   (volatile uint64_t *)(uintptr_t)(a + (uint64_t)g_anchor_fp_off) : NULL;
    int32_t state = *(volatile const int32_t *)(uintptr_t)(jt + (uint64_t)g_state_off);
    out->in_vm = state == g_state_in_vm;
    out->in_java = g_state_in_java >= 0 && state == g_state_in_java;
    return 0;
}
