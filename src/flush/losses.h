/*
 * src/flush/losses.h — what the flusher could not write, counted for the next
 * segment: the losses of the rings (each slot's, and those of the kinds' own
 * rings the flusher counts, lost.<ring reason>), the records that reached no
 * writer (lost.thread_gone, lost.no_chunk, lost.no_memory; a kind marked
 * RP_KIND_LOST_APART has its own, lost.<kind>_<reason>), the records whose
 * length was wrong (lost.bad_record), and the segments that could not be
 * written, which are reported on stderr, sparingly.
 *
 * A ring belongs to its slot, whoever occupies it, and its counts only grow:
 * the losses already counted are kept per slot (slottab.h). A count the chunk
 * could not take stays pending for the next segment.
 *
 * Threads: the flusher thread only.
 */
#ifndef RINGPROF_SRC_LOSSES_H
#define RINGPROF_SRC_LOSSES_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/ring.h"
#include "core/counters.h"
#include "flush/kind.h"
#include "threads/threads.h"

/* Why a record reached no writer, or its writer could not write it. */
enum rp_loss { RP_LOSS_GONE, RP_LOSS_NO_CHUNK, RP_LOSS_NO_MEMORY, RP_LOSSES };

/* One record of the kind at `index` in the kind list (`k`) lost for `why`. */
void rp_losses_record(const struct rp_kind *k, size_t index, enum rp_loss why);

/* `n` records of a ring unreadable (a scribbled length word, ring.h). */
void rp_losses_bad(uint64_t n);

/* The losses of ring `ring` since those in seen[RP_RING_DROP_REASONS] were
 * counted, through emit (the chunk); seen takes what emit took. */
void rp_losses_ring(const struct rp_ring *ring, uint64_t *seen, rp_counters_emit_fn emit,
                    void *ctx);

/* The losses of slot `s`'s ring since they were last counted. */
void rp_losses_slot(struct rp_slot *s, rp_counters_emit_fn emit, void *ctx);

/* The records lost and the bad records since the last call: the shared
 * counters, then each apart kind's in list order, then lost.bad_record. */
void rp_losses_write(rp_counters_emit_fn emit, void *ctx);

/* A segment was written to `dir` (ok), or not (errno `e`), at `now`: the
 * first failure is reported at once, the next ones at most once a minute and
 * once more when writing works again, each with the count it stands for (all
 * are counted in lost.write by the recording). */
void rp_losses_segment(const char *dir, int ok, int e, uint64_t now);

#endif
