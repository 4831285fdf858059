/*
 * src/vmstructs.c — HotSpot's VMStructs: tid and JNIEnv of a running Java thread
 * (see vmstructs.h).
 */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "vmstructs.h"

static long g_osthread_off = -1;      /* (Java)Thread::_osthread               */
static long g_tid_off = -1;           /* OSThread::_thread_id                  */
static long g_env_off = -1;           /* JNIEnv* - JavaThread*, learned          */
static jfieldID g_eetop;
/* For lock owners (lock.c); optional: without them owners are unknown. */
static long g_stack_base_off = -1;    /* (Java)Thread::_stack_base             */
static long g_stack_size_off = -1;    /* (Java)Thread::_stack_size             */
static long g_pending_off = -1;       /* JavaThread::_current_pending_monitor  */
static long g_owner_off = -1;         /* ObjectMonitor::_owner                 */

static int sym_u64(const char *name, uint64_t *out)
{
    const uint64_t *p = dlsym(RTLD_DEFAULT, name);
    if (!p)
        return -1;
    *out = *p;
    return 0;
}

int rp_vmstructs_init(void)
{
    char *const *base = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
    uint64_t stride, type_off, field_off, offset_off, static_off;
    if (!base || !*base || sym_u64("gHotSpotVMStructEntryArrayStride", &stride) ||
        sym_u64("gHotSpotVMStructEntryTypeNameOffset", &type_off) ||
        sym_u64("gHotSpotVMStructEntryFieldNameOffset", &field_off) ||
        sym_u64("gHotSpotVMStructEntryOffsetOffset", &offset_off) ||
        sym_u64("gHotSpotVMStructEntryIsStaticOffset", &static_off))
        return -1;
    for (const char *e = *base;; e += stride) {
        const char *type = *(const char *const *)(e + type_off);
        const char *field = *(const char *const *)(e + field_off);
        if (!type)
            break;
        if (!field || *(const int32_t *)(e + static_off))
            continue;
        long off = (long)*(const uint64_t *)(e + offset_off);
        /* JDK 17 lists it under JavaThread, older ones under Thread. */
        if ((!strcmp(type, "Thread") || !strcmp(type, "JavaThread")) &&
            !strcmp(field, "_osthread"))
            g_osthread_off = off;
        else if (!strcmp(type, "OSThread") && !strcmp(field, "_thread_id"))
            g_tid_off = off;
        else if ((!strcmp(type, "Thread") || !strcmp(type, "JavaThread")) &&
                 !strcmp(field, "_stack_base"))
            g_stack_base_off = off;
        else if ((!strcmp(type, "Thread") || !strcmp(type, "JavaThread")) &&
                 !strcmp(field, "_stack_size"))
            g_stack_size_off = off;
        else if (!strcmp(type, "JavaThread") && !strcmp(field, "_current_pending_monitor"))
            g_pending_off = off;
        else if (!strcmp(type, "ObjectMonitor") && !strcmp(field, "_owner"))
            g_owner_off = off;
    }
    return g_osthread_off >= 0 && g_tid_off >= 0 ? 0 : -1;
}

/* Read `len` bytes at `addr` of this process without risking a fault. */
static int safe_read(uint64_t addr, void *out, size_t len)
{
    struct iovec local = {out, len};
    struct iovec remote = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

uint64_t rp_vmstructs_java_thread(JNIEnv *jni, jobject thread)
{
    if (!g_eetop) {
        jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
        if (!k) {
            (*jni)->ExceptionClear(jni);
            return 0;
        }
        g_eetop = (*jni)->GetFieldID(jni, k, "eetop", "J");
        (*jni)->DeleteLocalRef(jni, k);
        if (!g_eetop) {
            (*jni)->ExceptionClear(jni);
            return 0;
        }
    }
    return (uint64_t)(*jni)->GetLongField(jni, thread, g_eetop);
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
