/*
 * tests/agent/alloc_taken.c — a JVMTI agent that takes the JVM's one
 * can_generate_sampled_object_alloc_events capability (HotSpot grants it to a
 * single environment), loaded before libringprof.so in the alloc_taken test: the
 * profiler must say so clearly and go on sampling CPU.
 */
#include <stdio.h>
#include <string.h>
#include <jvmti.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved);

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    jvmtiEnv *jvmti;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities c;
    memset(&c, 0, sizeof c);
    c.can_generate_sampled_object_alloc_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &c) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "alloc_taken: the capability was not granted\n");
        return JNI_ERR;
    }
    return JNI_OK;
}
