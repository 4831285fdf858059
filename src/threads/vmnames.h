/*
 * src/threads/vmnames.h — the full names of the JVM's own Java threads that JVMTI does not
 * show: the compiler threads ("C2 CompilerThread0"), "Monitor Deflation Thread",
 * "Notification Thread" and the like.
 *
 * JVMTI hides them (no ThreadStart, not in GetAllThreads), so the /proc scan
 * (threadscan.h) finds them and has only the kernel's comm to name them by, which
 * Linux cuts to 15 bytes ("C2 CompilerThre"). They are JavaThreads all the same:
 * HotSpot lists every JavaThread in ThreadsSMRSupport::_java_thread_list, each
 * with its kernel tid (JavaThread::_osthread) and its java.lang.Thread
 * (JavaThread::_threadObj, an OopHandle), whose `name` is a String. The list,
 * the handle and the compressed-reference decoding (CompressedOops' base and
 * shift) come from the running JVM's VMStructs tables; the offsets of
 * Thread.name, String.value and String.coder and of a byte[]'s elements from
 * the JDK's Unsafe, asked once through JNI; where a byte[]'s
 * length lies is learned by reading the starting thread's own name both ways and
 * keeping the one that gives what JNI says its name is. That reading of a known
 * thread checks the whole path, as rp_vmstructs_learn_env checks the tid's: if it
 * fails, nothing is named this way and such threads keep their comm.
 *
 * Every read of the JVM's memory is a safe read (process_vm_readv): a thread that
 * ends meanwhile, or an object a GC moves between two reads, costs a wrong or
 * failed read, never a fault; a name read so is used only if the thread's comm
 * is its first 15 bytes (the caller checks), and a collector whose references are
 * not plain addresses (ZGC's coloured pointers) gives names that fail the check.
 * Threads that are not JavaThreads (the VM thread, GC workers, "VM Periodic Task
 * Thread") are in no list VMStructs exposes and keep their comm.
 *
 * Threads: rp_vmnames_learn at start, on the thread that starts the agent (before
 * the flusher); rp_vmnames_each on the flusher. Not async-signal-safe.
 */
#ifndef RINGPROF_SRC_VMNAMES_H
#define RINGPROF_SRC_VMNAMES_H

#include <stddef.h>
#include <sys/types.h>
#include <jni.h>

/* The longest name the kernel keeps for a thread (comm, TASK_COMM_LEN - 1). */
#define RP_COMM_MAX 15

/* Learn the offsets (needs rp_vmstructs_init and rp_vmstructs_learn_env) and check
 * them on `self`, the calling thread's java.lang.Thread (`jni` its env).
 * @return 0, or -1 (then rp_vmnames_each names nothing). Leaves no exception
 * pending. */
int rp_vmnames_learn(JNIEnv *jni, jobject self);

/* Every JavaThread of the JVM whose name is longer than RP_COMM_MAX bytes and
 * whose kernel tid `want` accepts (want(arg, tid) != 0; NULL: every one):
 * fn(arg, tid, name) with its name as UTF-8 (valid during the call). Only the
 * wanted threads' names are read: two reads for each other thread (its tid),
 * where a name takes about six, so that a JVM of thousands of threads with one
 * cut comm among them costs thousands of reads, not tens of thousands. Reads at
 * most RP_VMNAMES_MAX threads of the list. @return how many were passed to fn,
 * or -1 if the list itself could not be read (then none was). */
#define RP_VMNAMES_MAX 65536
long rp_vmnames_each(int (*want)(void *arg, pid_t tid),
                     void (*fn)(void *arg, pid_t tid, const char *name), void *arg);

#endif
