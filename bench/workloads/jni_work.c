/*
 * bench/workloads/jni_work.c — the native half of JniWork (librpbench_jni.so): a
 * byte-mixing loop over a Java array held with GetPrimitiveArrayCritical, and a loop
 * that calls back into Java through JNI, so that JniWork's stacks alternate
 * Java -> native -> Java. Built by bench/meson.build; JniWork loads it from the path
 * in the system property rpbench.jni.
 */
#include <stdint.h>
#include <jni.h>

JNIEXPORT jlong JNICALL Java_JniWork_mix(JNIEnv *env, jclass cls, jbyteArray data, jint rounds);
JNIEXPORT jlong JNICALL Java_JniWork_upcall(JNIEnv *env, jclass cls, jint n, jlong x);

/* One round of FNV-1a over LEN bytes, seeded with H; JniWork.mixJava is the same
 * arithmetic in Java, to check this against. */
static uint64_t mix_round(const uint8_t *p, jsize len, uint64_t h)
{
    for (jsize i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* ROUNDS rounds over DATA; returns -1 (and leaves a pending exception, or none if
 * the JVM could not pin the array) on failure. */
JNIEXPORT jlong JNICALL Java_JniWork_mix(JNIEnv *env, jclass cls, jbyteArray data, jint rounds)
{
    (void)cls;
    jsize len = (*env)->GetArrayLength(env, data);
    uint8_t *p = (*env)->GetPrimitiveArrayCritical(env, data, NULL);
    if (p == NULL)
        return -1;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (jint r = 0; r < rounds; r++)
        h = mix_round(p, len, h + (uint64_t)r);
    (*env)->ReleasePrimitiveArrayCritical(env, data, p, JNI_ABORT);
    return (jlong)h;
}

/* Calls the static Java method JniWork.step(long) N times, threading X through;
 * returns the last result, or 0 with the Java exception pending. */
JNIEXPORT jlong JNICALL Java_JniWork_upcall(JNIEnv *env, jclass cls, jint n, jlong x)
{
    jmethodID step = (*env)->GetStaticMethodID(env, cls, "step", "(J)J");
    if (step == NULL)
        return 0;
    for (jint i = 0; i < n; i++) {
        x = (*env)->CallStaticLongMethod(env, cls, step, x);
        if ((*env)->ExceptionCheck(env))
            return 0;
    }
    return x;
}
