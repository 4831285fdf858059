/*
 * src/code/vmstructs.h — the native tid and JNIEnv of a Java thread that the agent did
 * not see start.
 *
 * AsyncGetCallTrace needs the interrupted thread's own JNIEnv, and the CPU timer
 * needs its kernel tid. A thread that starts after the agent gives both in its
 * ThreadStart event. Threads that were already running (every thread, when the
 * agent is attached; JVM threads started before VMInit at start-up) do not, and
 * JVMTI has no call that returns them. HotSpot does publish them, to the
 * Serviceability Agent, through its VMStructs tables (the exported symbols
 * gHotSpotVMStructs and friends): the offsets of JavaThread::_osthread and
 * OSThread::_thread_id. java.lang.Thread's private field `eetop` holds the
 * JavaThread*. The JNIEnv lives inside the JavaThread at a fixed offset that is
 * not in VMStructs; it is learned from a thread whose JNIEnv and java.lang.Thread
 * are both known (the thread running VMInit or Agent_OnAttach). That thread also
 * checks the offsets: the tid read through them must be its own gettid. If it is
 * not (or a read fails), rp_vmstructs_learn_env fails and the agent adopts no
 * thread through VMStructs: threads that were already running are found by the
 * /proc scan and sampled without Java frames (engines.md). Nothing is checked at
 * ThreadStart: by then adoption is over, and new threads give their own tid.
 *
 * Reads of JavaThread memory use process_vm_readv, so a thread that exits while
 * it is being looked at costs a failed read, not a fault. On a JVM without these
 * symbols (not HotSpot), rp_vmstructs_init fails and pre-existing Java threads are
 * sampled as native threads (no Java frames) by the async engine; the jvmti engine
 * does not need any of this.
 *
 * The same tables give what lock.c needs to name a contended monitor's owner:
 * JavaThread::_current_pending_monitor, ObjectMonitor::_owner and the threads'
 * stack bounds (rp_vmstructs_pending_owner, rp_vmstructs_stack). They are
 * optional: where they are missing, owners are unknown.
 *
 * Threads: any thread that may make JNI calls (not the signal handler).
 */
#ifndef RINGPROF_SRC_VMSTRUCTS_H
#define RINGPROF_SRC_VMSTRUCTS_H

#include <stdint.h>
#include <sys/types.h>
#include <jni.h>

/* Find the offsets. @return 0 if usable, -1 if not (not HotSpot, or changed). */
int rp_vmstructs_init(void);

/* Learn the JNIEnv offset from the calling thread: `jni` is its JNIEnv, `self` its
 * java.lang.Thread; check that the tid read through the offsets is the caller's.
 * Later calls check the offset too. @return 0, or -1 if unusable. */
int rp_vmstructs_learn_env(JNIEnv *jni, jobject self);

/* The JavaThread* of `thread` (its eetop field), 0 if it has none (not started,
 * or ended). */
uint64_t rp_vmstructs_java_thread(JNIEnv *jni, jobject thread);

/* The kernel tid of a JavaThread*, or 0. */
pid_t rp_vmstructs_tid(uint64_t java_thread);

/* The JNIEnv of a JavaThread*, or NULL if the offset is not known. */
JNIEnv *rp_vmstructs_env(uint64_t java_thread);

/* ---------------------------------------------------- lock owners (lock.c) -- */

/* The stack of a JavaThread*: [lo, hi) (JavaThread::_stack_base and _stack_size).
 * @return 0, or -1 if unknown. */
int rp_vmstructs_stack(uint64_t java_thread, uint64_t *lo, uint64_t *hi);

/* The owner field of the monitor a JavaThread* is blocked entering
 * (JavaThread::_current_pending_monitor, then ObjectMonitor::_owner), or 0 if
 * unknown. HotSpot sets the pending monitor before it posts
 * MonitorContendedEnter, so on that event's thread this is the monitor's owner
 * when the wait began: a JavaThread*, or, for a monitor inflated from a stack
 * lock whose owner has not noticed yet, the address of a BasicLock on the
 * owner's stack. Reads are safe (process_vm_readv): a wrong pointer costs a
 * failed read, never a fault. Needs rp_vmstructs_init. */
uint64_t rp_vmstructs_pending_owner(uint64_t java_thread);

/* Whether ObjectMonitor::_owner holds its owner's id (JavaThread::
 * _monitor_owner_id, the java.lang.Thread id; JDK 24 and later, told by that
 * field being in the VM's tables) rather than a JavaThread* or BasicLock*.
 * Ids 0, 1 and 2 then mean no owner, an anonymous owner (a fast lock not yet
 * claimed) and a monitor being deflated. */
int rp_vmstructs_owner_ids(void);

/* JavaThread::_monitor_owner_id of a JavaThread*, 0 if unknown. */
uint64_t rp_vmstructs_owner_id(uint64_t java_thread);

/* The calling thread's own JavaThread::_monitor_owner_id, through the JNIEnv
 * that lives inside its JavaThread (`env`, NULL: 0): on a carrier, the id of
 * the virtual thread mounted on it (HotSpot sets it at each mount and back at
 * the unmount), else its own. The calling thread only. Async-signal-safe (one
 * load). rp_vmstructs_have_self_owner_id says whether it can answer. */
int64_t rp_vmstructs_self_owner_id(JNIEnv *env);
int rp_vmstructs_have_self_owner_id(void);

/* ------------------------------------- the async engine's walk (stackwalk.c) -- */

/* HotSpot's code cache, [low, high) (CodeCache::_low_bound, _high_bound).
 * @return 0, or -1 if unknown. After rp_vmstructs_init. */
int rp_vmstructs_code_bounds(uint64_t *low, uint64_t *high);

/* The calling thread's last Java frame anchor (JavaThread::_anchor) and whether
 * it is in the VM (_thread_in_vm), read through the JNIEnv that lives inside its
 * JavaThread. HotSpot leaves the anchor's pc 0 when it calls into the VM from a
 * stub or the interpreter (x86 finds it at sp[-1] when it needs it:
 * JavaFrameAnchor::make_walkable); the slots let the walk do what make_walkable
 * does, and, for a thread in the VM, which no other thread walks, point the
 * anchor at a frame of its own choosing for a moment (stackwalk.c). */
struct rp_vm_anchor {
    volatile uint64_t *sp_slot;      /* &_last_Java_sp (0 in it: no Java frame)  */
    volatile uint64_t *pc_slot;      /* &_last_Java_pc                           */
    volatile uint64_t *fp_slot;      /* &_last_Java_fp, NULL if unknown          */
    int in_vm;                       /* _thread_state == _thread_in_vm           */
    int in_java;                     /* _thread_state == _thread_in_Java (with an
                                      * anchor: a runtime routine entered from a
                                      * stub that has not moved to the VM, or is
                                      * back from it: JRT_BLOCK_ENTRY)          */
};
/* Are the offsets known (rp_vmstructs_init and rp_vmstructs_learn_env done)? */
int rp_vmstructs_have_anchor(void);
/* The anchor of the thread whose JNIEnv is `env`: the calling thread only.
 * Async-signal-safe. @return 0, or -1 if the offsets are unknown. */
int rp_vmstructs_anchor(JNIEnv *env, struct rp_vm_anchor *out);

/* ------------------------------------------------------------ the tables -- */

/* A field of HotSpot's VMStructs table. */
struct rp_vm_field {
    long offset;                     /* non-static: offset in its type, else -1  */
    uint64_t address;                /* static: its address, else 0              */
    int size;                        /* bytes of its type, 0 if unknown          */
};
/* Look `type::field` up. @return 0 if found, -1 if not. Any thread but a signal
 * handler; reads libjvm's exported tables (no JVM call). */
int rp_vmstructs_field(const char *type, const char *field, struct rp_vm_field *out);
/* sizeof(type) from the types table, or -1. */
long rp_vmstructs_type_size(const char *type);
/* An integer constant (gHotSpotVMIntConstants). @return 0, or -1 if absent. */
int rp_vmstructs_int(const char *name, int *out);

/* Read `len` bytes of this process at `addr` without risking a fault
 * (process_vm_readv). @return 0, or -1 if any byte could not be read. Any
 * thread but a signal handler. */
int rp_vmstructs_read(uint64_t addr, void *out, size_t len);

#endif
