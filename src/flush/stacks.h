/*
 * src/flush/stacks.h — the chunk ids of what samples name: stacks, frames, methods,
 * native pcs, markers and classes, made from a record's raw frames and cached
 * for the chunk being written; and the walk-status counters.
 *
 * A record (sample.h) carries raw frames: native pcs and Java frames (jmethodID,
 * bci), with the walk's status and flags. rp_stacks_id turns them into a chunk
 * stack id. The raw bytes are hashed; the hash maps to a cached copy of those
 * bytes and the stack id made from them, so a hit costs one hash and one compare.
 * A miss names every frame: a jmethodID through methods.h (cached per chunk, the
 * [unknown java method] placeholder excepted, so that the next sample may name
 * it), a pc through codecache.h (HotSpot's stubs) or symbols.h (cached per chunk),
 * and a walk status other than OK as a marker frame ("[agct:gc_active]",
 * stacks.c lists them) at the leaf. A CPU sample taken in the agent's own work on
 * an application thread gets "[ringprof:<work>]" (sample.h) as its leaf.
 *
 * Every id is valid in one chunk only: rp_stacks_use with a new generation drops
 * them all. The raw-stack cache is also dropped when it holds CACHE_MAX_BYTES,
 * and by rp_stacks_code_changed once the compiled-code map changed (a frame's
 * type, interpreted or compiled or inlined, may differ now).
 *
 * Walk statuses: rp_stacks_count_status counts every record's status by who took
 * the stack (the prefix the record type's kind registered, kind.h: the signal
 * handler's AGCT, the jvmti sampler, the alloc and lock callbacks, the wall
 * sampler); rp_stacks_write_status hands the counts to the
 * counter registry's emit (their names are in docs/format.md: agct.<reason>,
 * walk.crashed, <source>.no_java_frames, <source>.get_stack_trace_failed, ...).
 *
 * Threads: the flusher thread only. Not async-signal-safe (allocates, calls JVMTI
 * through methods.h).
 */
#ifndef RINGPROF_SRC_STACKS_H
#define RINGPROF_SRC_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <jni.h>

#include "ringprof/chunk.h"
#include "core/counters.h"
#include "core/sample.h"

/* Buffers for stacks of up to `depth` frames. @return 0, or -1 (no memory).
 * Once, before the first rp_stacks_use. */
int rp_stacks_init(uint32_t depth);

/* Make ids in `w`, the chunk of `generation` (a new generation drops every
 * cached id); names are looked up with `jni` (the flusher's). */
void rp_stacks_use(struct rp_chunk_writer *w, uint64_t generation, JNIEnv *jni);

/* The chunk stack id of record `h` (`len`: its header and frames), cached.
 * @return 0 if it cannot be written (no memory). */
uint32_t rp_stacks_id(const struct rp_sample_hdr *h, size_t len);

/* The same, never cached: for a stack kept beyond its chunk (a live object's),
 * whose holder caches the id itself. */
uint32_t rp_stacks_build(const struct rp_sample_hdr *h);

/* The hash of what makes a record's stack (type, flags, status, the frames; not
 * time, weight or slot): equal stacks, equal hashes. */
uint64_t rp_stacks_hash(const struct rp_sample_hdr *h, size_t len);

/* The chunk's class id of a classes.h class id ("[unknown class]" if it has no
 * name). @return 0 on failure. */
uint32_t rp_stacks_class(uint32_t klass);

/* At the end of a flush: drop the raw-stack cache if the compiled-code map
 * changed since the last call. */
void rp_stacks_code_changed(void);

/* Count record `h`'s walk status (nothing if it is RP_WALK_OK). */
void rp_stacks_count_status(const struct rp_sample_hdr *h);

/* Emit the counts made since the last call; a count the emit refused is kept
 * for the next. */
void rp_stacks_write_status(rp_counters_emit_fn emit, void *ctx);

#endif
