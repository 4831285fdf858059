/*
 * tools/outputs/legend.h — what the marker frames of a profile mean, said where
 * they appear. A marker is a frame that is not code the program ran: the agent's
 * own cost ([ringprof:alloc]), a walk that failed ([agct:gc_active]), what the
 * converter adds ([truncated], [no stack]), native code without a symbol
 * ([libz.so.1]). The outputs that show frames to a reader end with a short
 * legend of the markers they showed, one line each, with the page of docs/
 * that says more: the text formats as a footer ("# [truncated]  ..."), the
 * HTML page in its legend and its tooltip, pprof as the profile's comments
 * (`go tool pprof -comments`). An output that shows no marker has no legend.
 * docs/profiles.md, "Markers", lists them.
 *
 * A legend collects the markers of the frames its output writes (out_legend_add),
 * then hands them out in the table's order (out_legend_each). It allocates
 * nothing; one thread.
 */
#ifndef RINGPROF_TOOLS_LEGEND_H
#define RINGPROF_TOOLS_LEGEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

/* Native code without a symbol, named after its library: the first few names are
 * kept for the legend's line, the rest counted. */
#define OUT_LEGEND_LIBS 4

struct out_legend {
    uint64_t seen;                        /* bit i: the table's entry i was shown */
    const char *libs[OUT_LEGEND_LIBS];    /* "[libz.so.1]", borrowed from the      */
    size_t nlibs;                         /* profile; nlibs counts them all        */
};

void out_legend_init(struct out_legend *l);

/* A frame the output wrote: its name and frame type (rp_prof_frame.type). The
 * name must outlive the legend (a profile's or a diff's string). Frames that
 * are no marker are ignored. */
void out_legend_add(struct out_legend *l, const char *name, int type);

/* A profile node the output wrote (frame nodes only; others are ignored). */
void out_legend_add_node(struct out_legend *l, const struct rp_profile *p, uint32_t node);

/* A method the output wrote as a row (the flat table, a back-trace's root),
 * with the frame type of one of its frames. */
void out_legend_add_method(struct out_legend *l, const struct rp_profile *p, uint32_t m);

/* fn(label, meaning, doc, match, arg) for each marker shown, in the table's
 * order: label "[agct:gc_active]" (or "[libz.so.1], [libjvm.so]" for native
 * code without symbols), meaning one sentence without a full stop, doc the
 * page and section ("docs/engines.md, \"Failed walks\""), and which frames it
 * explains, for a reader that looks a frame up (the HTML page's tooltip): the
 * marker's name, a family's prefix ("[agct:error_"), or "" for every native
 * frame named in brackets. @return how many. */
typedef void (*out_legend_fn)(const char *label, const char *meaning, const char *doc,
                              const char *match, void *arg);
size_t out_legend_each(const struct out_legend *l, out_legend_fn fn, void *arg);

/* The text footer: "PREFIX LABEL  MEANING (DOC)" a marker, under a line
 * "PREFIXmarkers:"; nothing when no marker was shown. prefix: "# ". */
void out_legend_print(FILE *out, const struct out_legend *l, const char *prefix);

#endif
