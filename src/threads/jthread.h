/*
 * src/threads/jthread.h — the agent's own Java threads: starting them and knowing them.
 *
 * The flusher and the samplers (jvmti, wall) are JVMTI agent threads: daemon
 * java.lang.Thread objects running C code, attached to the JVM so that they may
 * call JVMTI and JNI. This module starts them (RunAgentThread) and remembers
 * each one's Thread object, so that ThreadStart and adoption (agent.c) can tell
 * them from the application's threads: agent threads are never sampled and
 * never reported as application threads. It depends on nothing but JVMTI, so
 * every module that runs a thread can use it without knowing the agent's
 * lifecycle.
 *
 * Threads: any thread attached to the JVM (live phase). Not async-signal-safe.
 */
#ifndef RINGPROF_SRC_JTHREAD_H
#define RINGPROF_SRC_JTHREAD_H

#include <stddef.h>
#include <jvmti.h>

/*
 * rp_jthread_run: start `proc(arg)` on a new agent thread named `name`, at
 * `priority`. Creates a global reference to its Thread object that is kept for
 * the process's life (at most RP_JTHREAD_MAX are remembered). @return 0, or -1
 * with the reason in err.
 */
int rp_jthread_run(jvmtiEnv *jvmti, JNIEnv *jni, const char *name,
                   jvmtiStartFunction proc, void *arg, jint priority,
                   char *err, size_t errlen);

/* Whether `t` is one of the threads rp_jthread_run started. */
int rp_jthread_is_agent(JNIEnv *jni, jthread t);

/* How many agent threads are remembered (the flusher, the jvmti sampler, the
 * wall sampler, and room to spare). */
#define RP_JTHREAD_MAX 4

#endif
