/*
 * tools/outputs/out_locks.h — what `ringprof locks` prints: the model of
 * model/locks.h, its passes done and ranked, as text (docs/profiles.md, "Lock
 * contention") or as one JSON object. Single-threaded; writes only to `out`.
 */
#ifndef RINGPROF_TOOLS_OUT_LOCKS_H
#define RINGPROF_TOOLS_OUT_LOCKS_H

#include <stddef.h>
#include <stdio.h>

#include "model/locks.h"

struct out_locks_options {
    size_t top;       /* --top: monitors, waits in progress and sites shown       */
    size_t nstacks;   /* --stacks: stacks and owners per monitor, blocker classes */
                      /* and owners per site                                      */
};

void out_locks_text(FILE *out, const struct rp_locks *l, const struct out_locks_options *o);
void out_locks_json(FILE *out, const struct rp_locks *l, const struct out_locks_options *o);

#endif
