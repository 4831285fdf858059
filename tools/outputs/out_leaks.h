/*
 * tools/outputs/out_leaks.h — what `ringprof leaks` prints: the model of
 * model/leaks.h, its snapshots picked and its sites analysed (rp_leaks_analyse),
 * as text (docs/profiles.md, "Leaks") or as one JSON object; `top` rows at most.
 * Single-threaded; writes only to `out`.
 */
#ifndef RINGPROF_TOOLS_OUT_LEAKS_H
#define RINGPROF_TOOLS_OUT_LEAKS_H

#include <stddef.h>
#include <stdio.h>

#include "model/leaks.h"

void out_leaks_text(FILE *out, const struct rp_leaks *l, size_t top);
void out_leaks_json(FILE *out, const struct rp_leaks *l, size_t top);

#endif
