/*
 * src/threads/vmnames.c — the names of the JVM's hidden Java threads, read through
 * VMStructs (vmnames.h).
 *
 * A name is four references away from its JavaThread: the OopHandle's slot, the
 * java.lang.Thread in it, its `name` String, the String's byte[] (then the
 * String's coder, and the array's length and bytes). Object fields hold
 * compressed references where the JVM uses them (an Object[] element is 4 bytes,
 * Unsafe says), decoded as base + (n << shift); the handle's slot holds a full
 * one.
 */
#include <stdint.h>
#include <string.h>

#include "threads/vmnames.h"
#include "code/vmstructs.h"

static struct {
    int ok;
    uint64_t list;                 /* &ThreadsSMRSupport::_java_thread_list        */
    long list_len, list_threads;   /* ThreadsList::_length, ::_threads             */
    long thread_obj, handle_obj;   /* JavaThread::_threadObj, OopHandle::_obj      */
    int narrow;                    /* 4-byte references in objects                 */
    uint64_t base;                 /* and their decoding                           */
    int shift;
    long name, value, coder;       /* Thread.name, String.value, String.coder      */
    long bytes, length;            /* a byte[]'s first element and its length      */
} V;

/* A String of at most this many characters is read (a thread's name). */
#define NAME_CHARS_MAX 200

/* ------------------------------------------------------------- reading -- */

static int read_u64(uint64_t addr, uint64_t *v)
{
    return rp_vmstructs_read(addr, v, sizeof *v);
}

/* The object a reference field at `addr` points to, 0 if none or unreadable. */
static uint64_t read_ref(uint64_t addr)
{
    if (!V.narrow) {
        uint64_t v = 0;
        return read_u64(addr, &v) == 0 ? v : 0;
    }
    uint32_t n = 0;
    if (rp_vmstructs_read(addr, &n, sizeof n) != 0 || !n)
        return 0;
    return V.base + ((uint64_t)n << V.shift);
}

/* Append code point `c` to out[*k..cap-1) as UTF-8; 0 if it does not fit. */
static int put_utf8(char *out, size_t cap, size_t *k, uint32_t c)
{
    char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (char)c, n = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xc0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3f)), n = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xe0 | c >> 12), b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f)), n = 3;
    } else {
        b[0] = (char)(0xf0 | c >> 18), b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3f)), b[3] = (char)(0x80 | (c & 0x3f)), n = 4;
    }
    if (*k + n >= cap)
        return 0;
    memcpy(out + *k, b, n);
    *k += n;
    return 1;
}

/* The String at `str` as UTF-8 into out (cap bytes), its byte[]'s length read at
 * `length_off`. @return 0, or -1 (unreadable, implausible, too long). */
static int read_string(uint64_t str, long length_off, char *out, size_t cap)
{
    uint64_t arr = str ? read_ref(str + (uint64_t)V.value) : 0;
    int8_t coder = 0;
    int32_t len = 0;
    uint8_t raw[2 * NAME_CHARS_MAX];
    if (!arr || rp_vmstructs_read(str + (uint64_t)V.coder, &coder, 1) ||
        (coder != 0 && coder != 1) ||
        rp_vmstructs_read(arr + (uint64_t)length_off, &len, sizeof len) ||
        len < 0 || len > (int32_t)sizeof raw || (coder && len % 2) ||
        rp_vmstructs_read(arr + (uint64_t)V.bytes, raw, (size_t)len))
        return -1;
    size_t k = 0;
    for (int32_t i = 0; i < len; i += coder ? 2 : 1) {
        uint32_t c = coder ? (uint32_t)raw[i] | (uint32_t)raw[i + 1] << 8 : raw[i];
        if (coder && c >= 0xd800 && c < 0xdc00 && i + 3 < len) {   /* a surrogate pair */
            uint32_t lo = (uint32_t)raw[i + 2] | (uint32_t)raw[i + 3] << 8;
            if (lo >= 0xdc00 && lo < 0xe000) {
                c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
                i += 2;
            }
        }
        if (!c || !put_utf8(out, cap, &k, c))
            return -1;
    }
    out[k] = '\0';
    return 0;
}

/* The name of the JavaThread at `jt`, read with the array length at `length_off`. */
static int thread_name(uint64_t jt, long length_off, char *out, size_t cap)
{
    uint64_t slot = 0, thread = 0;
    if (read_u64(jt + (uint64_t)V.thread_obj + (uint64_t)V.handle_obj, &slot) || !slot ||
        read_u64(slot, &thread) || !thread)
        return -1;
    return read_string(read_ref(thread + (uint64_t)V.name), length_off, out, cap);
}

/* ------------------------------------------------------------ learning -- */

/* VMStructs' part: the list, the handle, the reference decoding. */
static int learn_tables(void)
{
    struct rp_vm_field list, base, shift;
    if (rp_vmstructs_field("ThreadsSMRSupport", "_java_thread_list", &list) || !list.address)
        return -1;
    V.list = list.address;
    struct rp_vm_field f;
    V.list_len = rp_vmstructs_field("ThreadsList", "_length", &f) == 0 ? f.offset : -1;
    V.list_threads = rp_vmstructs_field("ThreadsList", "_threads", &f) == 0 ? f.offset : -1;
    V.thread_obj = rp_vmstructs_field("JavaThread", "_threadObj", &f) == 0 ? f.offset : -1;
    V.handle_obj = rp_vmstructs_field("OopHandle", "_obj", &f) == 0 ? f.offset : -1;
    if (V.list_len < 0 || V.list_threads < 0 || V.thread_obj < 0 || V.handle_obj < 0)
        return -1;
    if (!V.narrow)
        return 0;
    /* The fields' names moved out of a struct in later JDKs. */
    int32_t sh = 0;
    if ((rp_vmstructs_field("CompressedOops", "_narrow_oop._base", &base) &&
         rp_vmstructs_field("CompressedOops", "_base", &base)) ||
        (rp_vmstructs_field("CompressedOops", "_narrow_oop._shift", &shift) &&
         rp_vmstructs_field("CompressedOops", "_shift", &shift)) ||
        !base.address || !shift.address || read_u64(base.address, &V.base) ||
        rp_vmstructs_read(shift.address, &sh, sizeof sh) || sh < 0 || sh > 8)
        return -1;
    V.shift = sh;
    return 0;
}

struct unsafe {
    jobject u;
    jmethodID field_offset, base_offset, index_scale;
    int base_long;               /* arrayBaseOffset returns a long (JDK 25), not an int */
};

/* The offset of instance field `name` (`sig`) of class `cls`, -1 if unknown. */
static long field_offset(JNIEnv *jni, const struct unsafe *us, const char *cls,
                         const char *name, const char *sig)
{
    jclass k = (*jni)->FindClass(jni, cls);
    jfieldID id = k ? (*jni)->GetFieldID(jni, k, name, sig) : NULL;
    jobject f = id ? (*jni)->ToReflectedField(jni, k, id, JNI_FALSE) : NULL;
    jlong off = f ? (*jni)->CallLongMethod(jni, us->u, us->field_offset, f) : -1;
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        off = -1;
    }
    if (f)
        (*jni)->DeleteLocalRef(jni, f);
    if (k)
        (*jni)->DeleteLocalRef(jni, k);
    return off >= 0 && off < 65536 ? (long)off : -1;
}

/* Unsafe's answer `m` for the array class `cls` (a long if `is_long`), -1 if
 * unknown. */
static long array_int(JNIEnv *jni, const struct unsafe *us, jmethodID m, int is_long,
                      const char *cls)
{
    jclass k = (*jni)->FindClass(jni, cls);
    jlong v = !k ? -1 : is_long ? (*jni)->CallLongMethod(jni, us->u, m, k)
                                : (*jni)->CallIntMethod(jni, us->u, m, k);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        v = -1;
    }
    if (k)
        (*jni)->DeleteLocalRef(jni, k);
    return v;
}

/* The JDK's Unsafe's part: the fields and the arrays. The internal class
 * (jdk.internal.misc.Unsafe, which JNI may call), not sun.misc.Unsafe, whose
 * offset methods warn on the application's stderr from JDK 24 on. */
static int learn_layout(JNIEnv *jni)
{
    struct unsafe us = {0};
    jclass k = (*jni)->FindClass(jni, "jdk/internal/misc/Unsafe");
    jfieldID the = k ? (*jni)->GetStaticFieldID(jni, k, "theUnsafe",
                                                "Ljdk/internal/misc/Unsafe;") : NULL;
    us.u = the ? (*jni)->GetStaticObjectField(jni, k, the) : NULL;
    if (us.u) {
        us.field_offset = (*jni)->GetMethodID(jni, k, "objectFieldOffset",
                                              "(Ljava/lang/reflect/Field;)J");
        us.index_scale = (*jni)->GetMethodID(jni, k, "arrayIndexScale", "(Ljava/lang/Class;)I");
        us.base_offset = (*jni)->GetMethodID(jni, k, "arrayBaseOffset", "(Ljava/lang/Class;)I");
        if (!us.base_offset) {
            (*jni)->ExceptionClear(jni);
            us.base_offset = (*jni)->GetMethodID(jni, k, "arrayBaseOffset",
                                                 "(Ljava/lang/Class;)J");
            us.base_long = 1;
        }
    }
    (*jni)->ExceptionClear(jni);
    int rc = -1;
    if (us.field_offset && us.base_offset && us.index_scale) {
        long scale = array_int(jni, &us, us.index_scale, 0, "[Ljava/lang/Object;");
        V.narrow = scale == 4;
        V.bytes = array_int(jni, &us, us.base_offset, us.base_long, "[B");
        V.name = field_offset(jni, &us, "java/lang/Thread", "name", "Ljava/lang/String;");
        V.value = field_offset(jni, &us, "java/lang/String", "value", "[B");
        V.coder = field_offset(jni, &us, "java/lang/String", "coder", "B");
        rc = (scale == 4 || scale == 8) && V.bytes > 8 && V.bytes < 4096 && V.name >= 0 &&
             V.value >= 0 && V.coder >= 0 ? 0 : -1;
    }
    if (us.u)
        (*jni)->DeleteLocalRef(jni, us.u);
    if (k)
        (*jni)->DeleteLocalRef(jni, k);
    return rc;
}

/* The calling thread's name as JNI gives it (modified UTF-8, which is UTF-8 for
 * every name without NUL or characters beyond the BMP), or -1. */
static int jni_name(JNIEnv *jni, jobject self, char *out, size_t cap)
{
    jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID get = k ? (*jni)->GetMethodID(jni, k, "getName", "()Ljava/lang/String;") : NULL;
    jstring s = get ? (*jni)->CallObjectMethod(jni, self, get) : NULL;
    const char *c = s ? (*jni)->GetStringUTFChars(jni, s, NULL) : NULL;
    int rc = c && strlen(c) < cap ? 0 : -1;
    if (!rc)
        memcpy(out, c, strlen(c) + 1);
    if (c)
        (*jni)->ReleaseStringUTFChars(jni, s, c);
    (*jni)->ExceptionClear(jni);
    if (s)
        (*jni)->DeleteLocalRef(jni, s);
    if (k)
        (*jni)->DeleteLocalRef(jni, k);
    return rc;
}

int rp_vmnames_learn(JNIEnv *jni, jobject self)
{
    V.ok = 0;
    char want[4 * NAME_CHARS_MAX], got[4 * NAME_CHARS_MAX];
    uint64_t jt = rp_vmstructs_java_thread(jni, self);
    if (!jt || learn_layout(jni) || learn_tables() || jni_name(jni, self, want, sizeof want))
        return -1;
    /* The array's length is the int just before its elements, or just before a
     * 4-byte gap that aligns them: read the known name both ways. */
    for (long gap = 4; gap <= 8 && !V.ok; gap += 4)
        if (thread_name(jt, V.bytes - gap, got, sizeof got) == 0 && !strcmp(got, want)) {
            V.length = V.bytes - gap;
            V.ok = 1;
        }
    return V.ok ? 0 : -1;
}

/* ------------------------------------------------------------ the list -- */

long rp_vmnames_each(int (*want)(void *arg, pid_t tid),
                     void (*fn)(void *arg, pid_t tid, const char *name), void *arg)
{
    uint64_t list = 0, threads = 0;
    uint32_t n = 0;
    if (!V.ok || read_u64(V.list, &list) || !list ||
        rp_vmstructs_read(list + (uint64_t)V.list_len, &n, sizeof n) ||
        read_u64(list + (uint64_t)V.list_threads, &threads) || !threads)
        return -1;
    long named = 0;
    char name[4 * NAME_CHARS_MAX];
    for (uint32_t i = 0; i < n && i < RP_VMNAMES_MAX; i++) {
        uint64_t jt = 0;
        if (read_u64(threads + (uint64_t)i * sizeof jt, &jt) || !jt)
            continue;
        pid_t tid = rp_vmstructs_tid(jt);
        if (tid && (!want || want(arg, tid)) &&
            thread_name(jt, V.length, name, sizeof name) == 0 &&
            strlen(name) > RP_COMM_MAX) {
            fn(arg, tid, name);
            named++;
        }
    }
    return named;
}
