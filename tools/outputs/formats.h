/*
 * tools/outputs/formats.h — the output formats of `ringprof convert`.
 *
 * Every format is one row of rp_formats[] (tools/outputs/formats.c): its name, the
 * -o file extensions that select it, the model it draws (enum rp_model) and the
 * writer for that model. The command builds the model the row names and calls
 * the matching writer; it never looks at which writer a row holds. A writer
 * writes to `out` and must not close it. It returns 0, or -1 after a write error
 * (errno set; the caller reports it) or when the model cannot be written in this
 * format (it prints the reason on stderr first, "ringprof: convert: ..."). Writers
 * run on the command's one thread and exit on out of memory (model/xalloc.h).
 *
 * Adding a format: write its writer in its own file, declare it here, add a row
 * to rp_formats[] in formats.c and the file to tools/outputs/meson.build.
 */
#ifndef RINGPROF_TOOLS_FORMATS_H
#define RINGPROF_TOOLS_FORMATS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
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
    int state_frames;         /* --state-frames: "[state:NAME]" leaf frames asked   */
    int quiet;                /* --quiet: no notes on stderr (jfr: the events count) */
    const struct rp_live_view *live; /* live objects (tools/model/live.h): for the */
                              /* live kind, its snapshot; for alloc, the live       */
                              /* profile that a RP_FMT_LIVE_JOIN format joins;      */
                              /* NULL when neither applies                          */
    /* otlp, pprof (and `ringprof push`): the service every recording is filed
     * under, NULL for each recording's own (its header's service.name, else
     * its main class or jar: rp_out_service_name); labels "KEY=VALUE" added
     * to every recording's own (RP_META_LABELS), a key given here winning. */
    const char *service;
    const char *const *labels;
    size_t nlabels;
    uint64_t resolution_ns;   /* heatmap: the finest time bucket (--resolution; 0:  */
                              /* the model's default, model/heatmap.h)              */
};

/* The model a format draws; the command builds that one and nothing else. */
enum rp_model {
    RP_MODEL_PROFILE,         /* a calling context tree (model/profile.h), built    */
                              /* for one event kind: rp_format.write_profile        */
    RP_MODEL_TIMELINE,        /* wall, lock and gc samples and the gauges in time   */
                              /* (model/timeline.h): rp_format.write_timeline       */
    RP_MODEL_EVENTS           /* every sample and reading as it is read, streamed   */
                              /* while the profile of all kinds is built:           */
                              /* rp_format.write_events                             */
};

typedef int (*rp_out_profile_fn)(FILE *out, const struct rp_profile *p,
                                 const struct rp_out_options *o);
typedef int (*rp_out_timeline_fn)(FILE *out, const struct rp_tl *tl,
                                  const struct rp_tl_options *to,
                                  const struct rp_out_options *o);
/* An events writer sets its callbacks in *po (on_sample, on_event, on_chunk and
 * what they need) and calls build(build_arg, po), which reads every input into
 * a profile (with progress) and returns it finished; the writer leaves it in
 * *built for the caller to report on and free, whatever it returns. */
typedef struct rp_profile *(*rp_jfr_build_fn)(void *build_arg,
                                              const struct rp_prof_options *po);
typedef int (*rp_out_events_fn)(FILE *out, rp_jfr_build_fn build, void *build_arg,
                                struct rp_prof_options *po,
                                const struct rp_out_options *o,
                                struct rp_profile **built);

struct rp_format {
    const char *name;         /* --format NAME                                      */
    const char *exts;         /* -o extensions selecting it, space-separated,       */
                              /* with the dot: ".collapsed .folded"                 */
    enum rp_model model;      /* which of the writers below is set                  */
    rp_out_profile_fn write_profile;
    rp_out_timeline_fn write_timeline;
    rp_out_events_fn write_events;
    int binary;               /* refuse to write it to a terminal                   */
    const char *summary;      /* one line for the usage message                    */
    unsigned needs;           /* RP_FMT_*: what it needs of the model beyond what   */
                              /* the command line asked; 0 for most                 */
    double cutoff;            /* rp_out_options.cutoff_pct when --cutoff is not     */
                              /* given; 0 for most                                  */
};

/* The tree's default --cutoff, in percent of the profile: nodes under 1% are
 * summed into one "[N more below 1.00% hidden]" line per parent, so a tree
 * reads on a few screens (a 10 s run of the quick start: 183 lines, where all
 * its nodes are 6,775; docs/profiles.md, "tree"); --cutoff 0 shows them all.
 * pprof's text tree hides nodes under 0.5% and keeps 80 of them. */
#define RP_OUT_TREE_CUTOFF 1.0

/* rp_format.needs, for RP_MODEL_PROFILE formats. */
enum {
    /* pprof carries threads as sample labels and lines as Line.line natively, so
     * it is always built per thread and at line granularity (or finer, with --bci);
     * its consumers aggregate them away as they are asked. */
    RP_FMT_THREADS   = 1u << 0,  /* build per thread (rp_prof_options.per_thread)   */
    RP_FMT_LINES     = 1u << 1,  /* at least RP_GRAN_LINE                           */
    /* With --event alloc the format shows which allocations are still live: the
     * command finds the live snapshots and builds the live profile for
     * rp_out_options.live (flat's SITES table). */
    RP_FMT_LIVE_JOIN = 1u << 2,
    /* With a kind that records thread states (wall), the state as each stack's
     * leaf (rp_prof_options.state_frames); pprof turns it into the sample label
     * "state" and keeps the frame only when rp_out_options.state_frames asks. */
    RP_FMT_STATES    = 1u << 3,
    /* The format is about allocated classes: without --event it shows alloc,
     * and a kind other than alloc or live is a usage error. */
    RP_FMT_CLASSES   = 1u << 4,
    /* With --event alloc or live the format lists allocation sites with their
     * stack traces, HPROF's way, with line numbers: built at RP_GRAN_SITE (a
     * site is a stack with its lines) unless --lines or --bci asked for more. */
    RP_FMT_SITE_LINES = 1u << 5
};

extern const struct rp_format rp_formats[];
extern const size_t rp_nformats;

/* The row of format `name` (--format NAME), or NULL. */
const struct rp_format *rp_format_by_name(const char *name);

/* Profile writers: text (out_tree.c, out_backtrace.c, out_flat.c,
 * out_histogram.c, out_collapsed.c) and the pprof and html files (out_pprof.c, out_html.c). */
int rp_out_tree(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);
int rp_out_backtrace(FILE *out, const struct rp_profile *p,
                     const struct rp_out_options *o);
int rp_out_flat(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);
int rp_out_histogram(FILE *out, const struct rp_profile *p,
                     const struct rp_out_options *o);
int rp_out_collapsed(FILE *out, const struct rp_profile *p,
                     const struct rp_out_options *o);
int rp_out_pprof(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);
int rp_out_html(FILE *out, const struct rp_profile *p, const struct rp_out_options *o);

/* The writers of `ringprof diff` (out_diff.c, out_html.c), from the join of
 * two profiles (diff.h): the flat table (json: as one JSON object), the
 * two-column collapsed stacks, the differential flame graph. */
struct rp_diff;
int rp_out_diff_flat(FILE *out, const struct rp_diff *d, const struct rp_out_options *o,
                     int json);
int rp_out_diff_collapsed(FILE *out, const struct rp_diff *d);
int rp_out_diff_html(FILE *out, const struct rp_diff *d, const struct rp_out_options *o);

/* The JFR writer (out_jfr.c, jfr.c): a JDK Flight Recorder file of every
 * kind's samples, the telemetry and the recordings' metadata. */
int rp_out_jfr(FILE *out, rp_jfr_build_fn build, void *build_arg,
               struct rp_prof_options *po, const struct rp_out_options *o,
               struct rp_profile **built);

/* The OpenTelemetry profiles writer (out_otlp.c): an ExportProfilesServiceRequest
 * of opentelemetry-proto's profiles/v1development (v1.10.0 and v1.11.0, which
 * the Collector v0.165.0 reads), one resource per recording and one profile
 * per sample type of each kind. Any set of chunk files into any FILE (a file,
 * a pipe, open_memstream): what build reads is what it writes. */
/* The incident view (out_heatmap.c): a heatmap of every kind over time, the
 * telemetry, and the flame graph of a window selected on it, one page. */
int rp_out_heatmap(FILE *out, rp_jfr_build_fn build, void *build_arg,
                   struct rp_prof_options *po, const struct rp_out_options *o,
                   struct rp_profile **built);
int rp_out_otlp(FILE *out, rp_jfr_build_fn build, void *build_arg,
                struct rp_prof_options *po, const struct rp_out_options *o,
                struct rp_profile **built);

/* The service name a recording is filed under (docs/profiles.md, "otlp"):
 * `given` (--service) if not NULL; else the header's service.name; else from
 * its main class or jar, "com.example.Main" or "checkout" for
 * /opt/checkout.jar; else "unknown_service:java", OpenTelemetry's default for
 * a Java process. Written to buf (cap bytes). @return buf. */
const char *rp_out_service_name(const char *given, const struct rp_prof_source *s,
                                char *buf, size_t cap);

/* The timeline writer (out_timeline.c): text, or an HTML page or SVG picture
 * when -o ends in .html/.htm or .svg, or with --html. */
int rp_out_timeline(FILE *out, const struct rp_tl *tl, const struct rp_tl_options *to,
                    const struct rp_out_options *o);

/* Shared helpers for writers. */

/* Write `s` as one collapsed-stack frame: ';' becomes ':', newline, CR and other
 * control characters become '?', so a frame never splits a line or a stack; an
 * empty name is written as "?". */
void rp_out_folded_name(FILE *out, const char *s);

#endif
