/*
 * src/flush/flusher.h — the flusher: rings to chunk files.
 *
 * One JVMTI agent thread (it must be attached to call JVMTI) that, every 100 ms,
 * drains every ring (so rings stay small) and hands each record to the writer
 * its kind registered (kind.h, sink.h), which appends it to the chunk with
 * stack and class ids from stacks.h. The flusher owns the loop and the chunk
 * writer, and names no kind: it loops over the kinds agent.c listed
 * (rp_kinds_set). Every flush interval it writes each thread's cumulative CPU
 * time (threadrec.h), the rings' and its own losses (losses.h, lost.<reason>),
 * the shared groups' and each kind's registered counters and gauges in the
 * segment's order (counters.h, kind.h: with each kind's flush hook, a snapshot
 * or the waits in progress), the walk-status counters (stacks.h), its own
 * gauges (agent.cpu_ns.total without telemetry, threads, slots), and ends the
 * segment (rp_recording_flush). Every pass it also runs each kind's pass hook
 * (GC pauses, the allocation rate limit, the signal handler's check); every
 * 500 ms it rescans /proc/self/task (async engine), and every pass it checks
 * whether objects were loaded (for the native walker). Threads that ended are
 * drained one last time and their slots released for reuse.
 *
 * Names of Java threads come from ThreadStart and are polled with GetThreadInfo,
 * once per flush, for threads that took samples, so renames show up.
 *
 * Threads: start/stop from the agent's lifecycle; everything else on the flusher
 * thread; the control requests' side is requests.c's. Never blocks an
 * application thread: producers never wait for it.
 */
#ifndef RINGPROF_SRC_FLUSHER_H
#define RINGPROF_SRC_FLUSHER_H

#include <stddef.h>
#include <stdint.h>
#include <jvmti.h>

#include "ringprof/recording.h"

struct rp_flusher_config {
    struct rp_recording *rec;      /* owned by the flusher from start on            */
    int async;                     /* 1: async engine (per-thread rings, scans)     */
    uint64_t flush_ns;             /* segment interval                              */
    uint32_t depth;
    size_t ring_bytes;             /* the largest record a ring can hold            */
    uint64_t telemetry_ns;         /* telemetry.h period; 0: off                    */
};

/* Start the flusher thread. @return 0, or -1 with the reason in err. */
int rp_flusher_start(jvmtiEnv *jvmti, JNIEnv *jni, const struct rp_flusher_config *cfg,
                     char *err, size_t errlen);

/* The flusher's kernel tid (0 before it runs). */
int rp_flusher_tid(void);

/* ------------------------------------------------- the control socket's side -- */

/*
 * rp_flusher_request: "flush" and "rotate" (control_ops.c). The request is posted
 * to the flusher thread, the only owner of the recording, which drains every ring,
 * writes the counters and CPU times, and closes the current chunk (the pending
 * records are its last segment). Waits up to `wait_ms`. @return 0 with the
 * finished file's path in `path` ("" if there was no chunk), or -1 with one
 * sentence in `err`: the close failed, the agent is stopping, or the wait timed
 * out (the flusher still finishes the request; the next one waits for it).
 * Caller: one thread at a time (the control server's); never the flusher.
 */
int rp_flusher_request(char *path, size_t pathlen, unsigned wait_ms, char *err,
                       size_t errlen);

/*
 * rp_flusher_rotate_meta: the same request, and every chunk opened after it has
 * `key` = `value` in its header (rp_recording_set_meta: a value of at most
 * RP_FLUSHER_META_MAX - 1 bytes, "" removes the key), so the chunk the change
 * ends was written under its own header's settings and the next under the new
 * ones (`ctl set`, RP_META_OPTIONS_SET). A request that timed out still changes
 * the header when the flusher gets to it. Same caller rules and results as
 * rp_flusher_request.
 */
#define RP_FLUSHER_META_MAX 512
int rp_flusher_rotate_meta(const char *key, const char *value, char *path,
                           size_t pathlen, unsigned wait_ms, char *err, size_t errlen);

/*
 * rp_flusher_call: run `fn(arg, err, errlen)` on the flusher thread, which is
 * attached to the JVM (JVMTI refuses most calls from the control server's
 * thread with JVMTI_ERROR_UNATTACHED_THREAD), and wait up to `wait_ms` for it.
 * @return fn's result (0, or -1 with its sentence in err), or -1 if the agent is
 * stopping or the wait timed out. A call that timed out still runs later, so
 * `arg` must outlive the caller (a value cast to a pointer, or static data).
 * Same caller rules as rp_flusher_request.
 */
typedef int (*rp_flusher_fn)(void *arg, char *err, size_t errlen);
int rp_flusher_call(rp_flusher_fn fn, void *arg, unsigned wait_ms, char *err,
                    size_t errlen);

/* The recording as of the flusher's last pass (every 100 ms, and after a
 * request, so a status after a flush is exact), for status. The counters' and
 * samples' totals are the registry's (counters.h, rp_counters_totals). Any
 * thread. */
struct rp_flusher_recording {
    struct rp_recording_stats rec;
    char current[4096];                 /* the chunk being written, "" if none    */
};
void rp_flusher_recording(struct rp_flusher_recording *out);

/* Wake the flusher for a pass now (the GC-finish callback: the heap is read
 * right after a pause). pthread_cond_signal only: no lock, never blocks. */
void rp_flusher_wake(void);

/* Final drain, flush and close; wait up to `wait_ms`. Call after sampling has
 * stopped. @return 0 if the recording was closed cleanly, -1 otherwise. */
int rp_flusher_stop(unsigned wait_ms);

#endif
