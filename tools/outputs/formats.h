/*
 * tools/outputs/formats.h — the output formats of `ringprof convert`.
 *
 * Every format is one writer function with the rp_out_fn signature, listed in the
 * table rp_formats[] (tools/outputs/formats.c) with its name and the -o file extensions that
 * select it. A writer reads a finished profile (tools/model/profile.h) and writes to `out`;
 * it must not close `out`. It returns 0, or -1 after a write error (errno set;
 * the caller reports it) or when the profile cannot be written in this format
 * (it prints the reason on stderr first, "ringprof: convert: ...").
 *
 * Adding a format: write `int rp_out_NAME(...)` in its own file, declare it here,
 * add a row to rp_formats[] in formats.c and the file to tools/meson.build.
 */
#ifndef RINGPROF_TOOLS_FORMATS_H
#define RINGPROF_TOOLS_FORMATS_H

#include <regex.h>
#include <stddef.h>
#include <stdio.h>

#include "model/profile.h"

struct rp_live_view;
struct rp_tl;
struct rp_tl_options;

/* What the command line asked of the writers (each uses what applies to it). */
struct rp_out_options {
    double cutoff_pct;        /* tree, backtrace: hide nodes under this % of the    */
                              /* profile's total weight (0: show all)               */
    size_t top;               /* flat: rows (0: all); backtrace: roots (0: 10)      */
    const regex_t *method_re; /* backtrace: roots are methods matching this         */
    int value_samples;        /* collapsed (and others that can): counts, not       */
                              /* weights (--value samples)                          */
    const char *title;        /* a one-line description of the inputs               */
    const char *out_path;     /* the -o file, NULL for stdout                       */
    int argc;                 /* the convert command line, for headers             */
    char **argv;
    const struct rp_live_view *live; /* live objects (tools/model/live.h): for the live  */
                              /* kind, its snapshot; for alloc, the live profile   */
                              /* that flat joins; NULL when neither applies        */
    /* Added by the timeline work: the model the timeline format draws (read by
     * cmd_convert through rp_tl_load, since it needs more than a profile) and
     * its options; NULL for the other formats. */
    const struct rp_tl *timeline;
    const struct rp_tl_options *timeline_opts;
};

typedef int (*rp_out_fn)(FILE *out, const struct rp_profile *p,
                         const struct rp_out_options *o);

struct rp_format {
    const char *name;         /* --format NAME                                      */
    const char *exts;         /* -o extensions selecting it, space-separated,       */
                              /* with the dot: ".collapsed .folded"                 */
    rp_out_fn fn;
    int binary;               /* refuse to write it to a terminal                   */
    const char *summary;      /* one line for the usage message                    */
    /* Added by the pprof/html work: how the profile must be built for this format
     * (RP_FMT_*), whatever the command line asked. 0 for the text formats. */
    unsigned needs;
};

/* rp_format.needs: pprof carries threads as sample labels and lines as
 * Line.line natively, so it is always built per thread and at line granularity
 * (or finer, with --bci); its consumers aggregate them away as they are asked. */
enum {
    RP_FMT_THREADS = 1u << 0,   /* build per thread (rp_prof_options.per_thread)   */
    RP_FMT_LINES   = 1u << 1,   /* at least RP_GRAN_LINE                           */
    /* Added by the timeline work: the format draws samples of several kinds and
     * gauges in time (tools/model/timeline.h), not a profile: the command loads the
     * timeline instead of building a profile, and the writer gets p == NULL. */
    RP_FMT_TIMELINE = 1u << 2
};

extern const struct rp_format rp_formats[];
extern const size_t rp_nformats;

/* Text formats (tools/out_text.c and friends). */
int rp_out_tree(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);
int rp_out_backtrace(FILE *out, const struct rp_profile *p,
                     const struct rp_out_options *o);
int rp_out_flat(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);
int rp_out_collapsed(FILE *out, const struct rp_profile *p,
                     const struct rp_out_options *o);

/* Written by the pprof / html work (tools/outputs/out_pprof.c, tools/outputs/out_html.c). */
int rp_out_pprof(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);
int rp_out_html(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);

/* Written by the timeline work (tools/outputs/out_timeline.c). */
int rp_out_timeline(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);

/* Shared helpers for writers. */

/* Write `s` as one collapsed-stack frame: ';' becomes ':', newline, CR and other
 * control characters become '?', so a frame never splits a line or a stack; an
 * empty name is written as "?". */
void rp_out_folded_name(FILE *out, const char *s);

#endif
