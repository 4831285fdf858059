/*
 * src/threads/jthread.c — starting the agent's own Java threads (see jthread.h).
 *
 * The Thread objects are kept as global references in a small array under a
 * mutex: they are added a handful of times in a run and looked up once per
 * ThreadStart, so nothing faster is needed.
 */
#include <pthread.h>
#include <stdio.h>

#include "threads/jthread.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static jobject g_threads[RP_JTHREAD_MAX];     /* global refs                    */
static int g_n;

int rp_jthread_run(jvmtiEnv *jvmti, JNIEnv *jni, const char *name,
                   jvmtiStartFunction proc, void *arg, jint priority,
                   char *err, size_t errlen)
{
    jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = k ? (*jni)->GetMethodID(jni, k, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring jname = init ? (*jni)->NewStringUTF(jni, name) : NULL;
    jobject t = jname ? (*jni)->NewObject(jni, k, init, jname) : NULL;
    jobject g = t ? (*jni)->NewGlobalRef(jni, t) : NULL;
    if (!g) {
        (*jni)->ExceptionClear(jni);
        snprintf(err, errlen, "cannot create the %s thread object", name);
        return -1;
    }
    pthread_mutex_lock(&g_lock);
    if (g_n < RP_JTHREAD_MAX)
        g_threads[g_n++] = g;
    pthread_mutex_unlock(&g_lock);
    jvmtiError e = (*jvmti)->RunAgentThread(jvmti, g, proc, arg, priority);
    (*jni)->DeleteLocalRef(jni, t);
    (*jni)->DeleteLocalRef(jni, jname);
    (*jni)->DeleteLocalRef(jni, k);
    if (e != JVMTI_ERROR_NONE) {
        snprintf(err, errlen, "cannot start the %s thread (JVMTI error %d)", name, (int)e);
        return -1;
    }
    return 0;
}

int rp_jthread_is_agent(JNIEnv *jni, jthread t)
{
    int yes = 0;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_n && !yes; i++)
        yes = (*jni)->IsSameObject(jni, g_threads[i], t);
    pthread_mutex_unlock(&g_lock);
    return yes;
}
