/*
 * src/control/threaddump_dump.h — one thread dump as it is read and written:
 * for threaddump.c, which reads the threads, their locks and the deadlocks into
 * a struct td_dump on the flusher, and threaddump_json.c, which writes it as the
 * reply's members. Every other caller uses threaddump.h.
 *
 * Threads and locks refer to each other by index: a thread's lock fields index
 * d->l, a lock's owner and a thread's waits_for index d->t; -1 is none. The
 * platform threads are d->t[0 .. nplat), the virtual ones follow up to d->n.
 * The references in it are global ones, owned by the dump and deleted when it
 * is freed (threaddump.c); the writer only reads it, on the same thread.
 */
#ifndef RINGPROF_SRC_THREADDUMP_DUMP_H
#define RINGPROF_SRC_THREADDUMP_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <jvmti.h>

#include "core/json.h"
#include "core/u64map.h"
#include "kinds/lock.h"
#include "threads/threadcontainers.h"

/* A lock object seen in the dump. */
struct td_lock {
    jobject ref;               /* a global reference                             */
    uint32_t hash, klass;
    int owner;                 /* index of the thread holding it, -1: none known */
    int ownable;               /* an AbstractOwnableSynchronizer                 */
};

/* A thread, as read. Lock fields are indexes into the lock table, -1: none. */
struct td_thread {
    jthread ref;
    char *name;
    int64_t id;
    int daemon, priority;
    jint state, nframes, total;
    jvmtiFrameInfo *frames;
    jint nheld;
    int *held, *held_depth;    /* owned monitors, and the depth that locked them */
    int contended;             /* the monitor it is blocked on or waiting on     */
    int parked;                /* the object it is parked on                     */
    int waits_for;             /* the thread that holds what it waits for       */
    int pending_owner;         /* without can_get_current_contended_monitor:
                                * the holder of the monitor it is blocked on,
                                * read through VMStructs (lock.h), or -1      */
    int wait_lock;             /* and that lock                                  */
    int in_cycle;
    const struct rp_lock_wait *wait;   /* lock.h's wait in progress, or NULL      */
    int virtual;               /* a virtual thread (after the platform ones)    */
    int carrier;               /* a mounted virtual thread's carrier, or -1     */
};

struct td_dump {
    JNIEnv *jni;
    jthread *refs;             /* GetAllThreads' array, made global references   */
    jint n;                    /* threads in t: nplat platform, then virtual     */
    jint nplat;
    size_t capt;
    struct td_thread *t;
    struct rp_u64map by_tid;   /* Java thread id -> index in t                   */
    struct rp_tc_walk vt;      /* what the virtual-thread walk saw               */
    int vt_walked;             /* 1: the containers were walked, -1: the walk
                                * failed part way, 0: no containers (JDK 17)   */
    struct td_lock *l;
    size_t nl, capl;
    int **cycles;              /* each: thread indexes, -1 ended                 */
    size_t ncycles;
};

/*
 * rp_threaddump_write: the dump's members after "unavailable" into the object
 * open in `j`: "deadlocks", "threads" (those in a deadlock first, then the
 * others while they fit), "virtual_threads" (its groups, or their count alone
 * when they do not fit), "threads_total" and "threads_omitted". The writer's
 * max must leave RP_THREADDUMP_TAIL_ROOM below `most`, room the last members
 * take once the max is raised to `most`; what does not fit is left out, never
 * cut. Allocates (the virtual-thread groups); the flusher.
 */
#define RP_THREADDUMP_TAIL_ROOM 256
void rp_threaddump_write(struct rp_json *j, const struct td_dump *d, size_t most);

#endif
