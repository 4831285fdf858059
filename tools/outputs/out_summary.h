/*
 * tools/outputs/out_summary.h — the text of `ringprof summary`: one recording of
 * the model (model/summary.h), read and ranked (rp_summary_rank), as docs/tool.md
 * ("summary") shows it. Single-threaded; writes only to `out`.
 */
#ifndef RINGPROF_TOOLS_OUT_SUMMARY_H
#define RINGPROF_TOOLS_OUT_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "model/summary.h"

struct out_summary_options {
    int all_chunks;       /* --chunks: every chunk, not only those with problems  */
    int each_counter;     /* --counters: every counter under its group           */
    size_t threads;       /* --threads N: the rows of the threads table           */
};

/* Print recording `rec` on `out`. @return the number of its chunks with a
 * problem (damaged or cut-off segments, bad records, unresolved references). */
int out_summary_text(FILE *out, const struct rp_sum_recording *rec,
                     const struct out_summary_options *o);

#endif
