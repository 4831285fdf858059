/*
 * tools/model/waits.h — which record of a lock wait stands for it: the rule of
 * include/ringprof/events.h (kind lock.waiting) applied by the look-ahead, so
 * that a wait still in progress at a flush is counted once, and a wait that
 * ended is counted by its finished record alone.
 *
 * A wait is (recording, the waiting thread's os_tid, the time it began). The
 * agent writes a long wait in progress (kind lock.waiting, weight = its age) at
 * every flush it spans, and once more when recording stops; when it ends, its
 * finished record (kind lock) says "reported" if any in-progress one may have
 * been written. The look-ahead (scan.h, RP_SCAN_WAITS) reads every input once
 * and keeps one entry per wait that has an in-progress record or a reported
 * finished one: the greatest in-progress weight, whether it finished. The real
 * pass then keeps an in-progress record (rp_waits_keep) only if its wait has no
 * finished record in the inputs and it is the latest one (the greatest weight),
 * and only the first such record read, so a chunk given twice does not count
 * it twice. Finished records are never dropped: they are what old readers
 * count, and they count alike here. The rule does not depend on the order of
 * the inputs.
 *
 * Memory: one entry per long wait, never per sample. Not thread-safe.
 * Allocation failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_WAITS_H
#define RINGPROF_TOOLS_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/chunk.h"
#include "stream.h"

struct rp_wait {
    uint32_t rec;                 /* the recording: index into the stream's recs */
    uint64_t os_tid, start;       /* the waiting thread, the wait's start (mono) */
    uint64_t latest;              /* the greatest in-progress weight, 0: none    */
    uint8_t finished;             /* a reported finished record was seen         */
    uint8_t kept;                 /* the real pass kept its in-progress record   */
};

struct rp_waits {
    struct rp_wait *w;
    size_t n, cap;
};

/* A sample of the chunk the stream is reading: noted if it is a wait's
 * in-progress record or a reported finished one. */
void rp_waits_sample(struct rp_waits *ws, struct rp_stream *st, const struct rp_event *ev);

/* Sort and merge the entries. Call once after the last sample. */
void rp_waits_finish(struct rp_waits *ws);

/* Whether the in-progress record (`start`, `weight`) of thread `os_tid` in
 * recording `rec` is the one that stands for its wait, as above; it is then
 * marked kept, so a second such record is not. */
int rp_waits_take(struct rp_waits *ws, uint32_t rec, uint64_t os_tid, uint64_t start,
                  uint64_t weight);

void rp_waits_free(struct rp_waits *ws);

#endif
