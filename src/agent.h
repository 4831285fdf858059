/*
 * src/agent.h — what the agent's modules share with its lifecycle (agent.c).
 *
 * agent.c owns the JVMTI environment, the parsed options and the start/stop
 * sequence. The engines and the flusher need one service from it: starting a
 * JVMTI agent thread (a daemon java.lang.Thread running C code, attached to the
 * JVM so that it may call JVMTI and JNI).
 */
#ifndef RINGPROF_SRC_AGENT_H
#define RINGPROF_SRC_AGENT_H

#include <stddef.h>
#include <jvmti.h>

/*
 * rp_agent_run_thread: start `proc(arg)` on a new agent thread named `name`.
 * Agent threads are never sampled and are not reported as application threads.
 * Caller: a thread attached to the JVM (live phase). @return 0, or -1 with the
 * reason in err.
 */
int rp_agent_run_thread(jvmtiEnv *jvmti, JNIEnv *jni, const char *name,
                        jvmtiStartFunction proc, void *arg, jint priority,
                        char *err, size_t errlen);

#endif
