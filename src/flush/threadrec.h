/*
 * src/flush/threadrec.h — the chunk's THREAD records: one per slot occupant and
 * chunk, made the first time a pass names the thread (its name, ids and flags
 * as the registry has them then), with the thread's CPU time at every flush;
 * and the names of Java threads that took samples, polled once a flush
 * (GetThreadInfo), so that renames (Thread.setName) reach the next records.
 *
 * A slot's chunk id is cached for the pass: rp_threadrec_reset drops the cache
 * (each pass, and a new chunk), so that a renamed or ended thread gets a new
 * record. A thread whose own CPU clock cannot be read (no tid) has the CPU time
 * a kind read for it (struct rp_kind's thread_cpu: the jvmti sampler's).
 *
 * Threads: the flusher thread only.
 */
#ifndef RINGPROF_SRC_THREADREC_H
#define RINGPROF_SRC_THREADREC_H

#include <stdint.h>
#include <jvmti.h>

#include "ringprof/chunk.h"
#include "threads/threads.h"

/* Drop every cached chunk id. */
void rp_threadrec_reset(void);

/* The chunk thread id of slot `s`'s present occupant in `w`, made at `now` if
 * this pass has not; 0 if it cannot be written (no memory). */
uint32_t rp_threadrec_id(struct rp_chunk_writer *w, struct rp_slot *s, uint64_t now);

/* New names of the Java threads that took samples since the last call. */
void rp_threadrec_poll_names(jvmtiEnv *jvmti, JNIEnv *jni);

/* Live slot `s`'s CPU time now into `w` at `now`. */
void rp_threadrec_cpu(struct rp_chunk_writer *w, struct rp_slot *s, uint64_t now);

/* Slot `s`'s thread ended: its last record (flag ended) and CPU time into `w`
 * (NULL: none), and its cached id dropped, for the slot's next occupant. */
void rp_threadrec_end(struct rp_chunk_writer *w, struct rp_slot *s, uint64_t now);

#endif
