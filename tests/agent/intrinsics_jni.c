/*
 * tests/agent/intrinsics_jni.c — the C library of tests/java/Intrinsics.java
 * (librp_intrinsics.so): a JNI method that burns CPU in C code of its own, so
 * the stack test sees a Java method whose time is spent below a JNI call, in a
 * library the JVM knows nothing about.
 */
#include <stdint.h>
#include <jni.h>

JNIEXPORT jlong JNICALL Java_Intrinsics_cwork(JNIEnv *env, jclass cls, jint n);

/* A few microseconds of integer mixing; not inlined, so it is a frame. */
__attribute__((noinline)) static uint64_t mix_block(uint64_t h, int k)
{
    for (int i = 0; i < 256; i++)
        h = (h ^ (uint64_t)(i + k)) * 0x100000001b3ULL;
    return h;
}

JNIEXPORT jlong JNICALL Java_Intrinsics_cwork(JNIEnv *env, jclass cls, jint n)
{
    (void)env;
    (void)cls;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (jint i = 0; i < n; i++)
        h = mix_block(h, (int)i);
    return (jlong)h;
}
