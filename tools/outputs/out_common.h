/*
 * tools/outputs/out_common.h — what the text writers share: the comment header that opens
 * every text profile, the per-method figures (self, and total counted once per
 * stack), and a depth-first walk that reports leaving a node as well as entering it.
 * Not thread-safe; everything allocates and exits on out of memory (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_OUT_COMMON_H
#define RINGPROF_TOOLS_OUT_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "formats.h"
#include "model/xalloc.h"
#include "model/profile.h"

/* Print the "# ..." header: format, kind and unit, samples and weight, time range,
 * recordings (labels), threads mode, granularity, filtered samples. */
void out_header(FILE *out, const struct rp_profile *p, const struct rp_out_options *o,
                const char *format);

/* "s" unless n is 1: "%llu sample%s", so no line says "1 samples". */
#define OUT_S(n) ((n) == 1 ? "" : "s")

/* 100 * part / whole, 0 when whole is 0. */
double out_pct(uint64_t part, uint64_t whole);

/* The figure columns that the tree and backtrace formats share, for one node:
 * total and self weight, their percent of `whole`, samples, and (if `times`)
 * total and self as times. No newline. One function, so the two formats' columns
 * cannot drift apart. */
void out_figures(FILE *out, const struct rp_profile *p, const uint64_t *total,
                 const uint64_t *self, uint64_t whole, int times);

/* A function's identity for the formats that carry one beside its name
 * (pprof's and OTLP's Function.system_name): a native, C++ or kernel frame's
 * symbol as recorded; a Java method's class, name and JVM descriptor
 * ("app.Server.handle()V"; of the first overload seen, when they merge);
 * else its display name. Caller frees. */
char *out_system_name(const struct rp_prof_method *m);

/* Calls fn(key, value, arg) for each label of a recording: those of its header
 * (`labels`, the agent option labels=; ringprof/labels.h), then --label's
 * (o->labels, "KEY=VALUE"), a key given by both taken from --label. */
void out_each_label(const struct rp_prof_source *s, const struct rp_out_options *o,
                    void (*fn)(const char *key, const char *value, void *arg), void *arg);

/*
 * out_title: what a page is titled by: the names of the profile's recordings,
 * each its service.name, else its main class or jar (jvm.main, as
 * rp_out_service_name names them), the first three distinct ones joined by
 * ", ", then "and N more recordings" (those of other names); `fallback` (the
 * inputs' path) when no recording has either, or NULL then. Into buf (cap
 * bytes). @return buf, or fallback. Linear in the recordings.
 */
const char *out_title(const struct rp_profile *p, const char *fallback, char *buf,
                      size_t cap);

/* What an events writer (jfr, otlp) asks of the build: every method at its full
 * granularity (lines and bcis kept), states as attributes never frames, and its
 * three callbacks with `arg` (profile.h, on_sample, on_event, on_chunk). */
void out_events_hooks(struct rp_prof_options *po, void *arg, rp_prof_sample_fn *on_sample,
                      rp_prof_event_fn *on_event, rp_prof_chunk_fn *on_chunk);

/* Print a name for a text format: control characters (newline, tab, ...) become
 * '?', so every entry stays on its line. */
void out_text(FILE *out, const char *s);

/* The indentation of a line at `depth` in the tree and backtrace formats: two
 * spaces a level up to OUT_INDENT_MAX levels. A deeper line keeps that
 * indentation and begins with its depth, "[depth 1234] ", so that a line costs the
 * same at any depth: a stack of RP_CHUNK_STACK_MAX frames indented in full would
 * be 10^12 bytes of spaces (docs/profiles.md, "Tree"). */
#define OUT_INDENT_MAX 100
void out_indent(FILE *out, size_t depth);

/* Print a node's name as the text formats show it: out_text of the name, then a
 * tag for how the frame ran, except for the common case (JIT-compiled Java) and
 * for markers and classes: " [interpreted]", " [inlined]", " [native]", " [c++]",
 * " [kernel]". A thread node is its label, then "(tid N)", or "(tid N, RECORDING)"
 * when the profile merges several recordings. */
void out_node_text(FILE *out, const struct rp_profile *p, uint32_t node);
void out_frame_text(FILE *out, const struct rp_profile *p, const struct rp_prof_frame *f);

/* Print the stack trace of `node` HPROF style: "TRACE number:" (with
 * " (thread=[name])" in per-thread profiles), then one tab-indented frame a
 * line, leaf first, as "method(File.java:line)" (the line when the profile has
 * it: RP_GRAN_LINE and finer), "(Unknown Source)" or "(Native Method)". Each
 * frame printed goes into `legend` (legend.h; NULL: none). */
struct out_legend;
void out_print_trace(FILE *out, const struct rp_profile *p, uint32_t node,
                     uint32_t number, struct out_legend *legend);

/* The first heading line of a table with grouped columns (flat's SITES, the
 * class histogram): group names centred over their columns, widths[i] wide for
 * names[i], one space apart; names ends with NULL, and its last entry (over the
 * names column) is left-aligned. */
void out_group_heading(FILE *out, const char *const *names, const int *widths);

/* v in decimal into buf, or "-" when !have (a figure the data does not hold). */
void out_fmt_u64(char *buf, size_t cap, int have, uint64_t v);

/* Bytes as a reader reads them, in binary units: "512 B", "1.50 KiB", "3.00 MiB",
 * "1.25 GiB"; a negative v keeps its sign. @return buf. */
const char *out_fmt_bytes(double v, char *buf, size_t cap);

/* A weight in the profile's unit as the tables show it: a time when the unit is
 * time or a count of ticks of a known interval ("840.000 ms", rp_prof_fmt_time),
 * bytes in binary units (out_fmt_bytes), else the number; "-" when !have.
 * `sign`: a change, "+" before a positive one and "-" before a negative one.
 * At most 14 characters up to 10^15 of the unit. @return buf. */
const char *out_fmt_weight(const struct rp_profile *p, int have, double w, int sign,
                           char *buf, size_t cap);

/* Write s (len bytes; a C string for out_json_cstring, NULL as "") as a JSON
 * string that is also safe inside an HTML <script> element: '<', '>' and '&'
 * as \u escapes, U+2028/U+2029 and control characters escaped, and each byte
 * that is not UTF-8 as U+FFFD. */
void out_json_string(FILE *out, const char *s, size_t len);
void out_json_cstring(FILE *out, const char *s);

/* The flame graph page's frame type of `node` (docs/profiles.md, "html"):
 * rp_frame_type 0..6, then 7 an allocated class, 8 a thread, 9 the root. */
int out_page_type(const struct rp_profile *p, uint32_t node);

/* The markers among those `legend` holds, as the pages' JSON:
 * [[label, meaning, doc, match], ...] (legend.h). */
struct out_legend;
void out_markers_json(FILE *out, const struct out_legend *legend);

/* A page template's marker and what writes in its place. */
struct out_slot {
    const char *marker;       /* "@RINGPROF_...@"                                  */
    void (*write)(FILE *out, void *arg);
    void *arg;
};

/* Write template `tpl` (len bytes) with each slot's marker replaced by what its
 * writer writes. Each marker must be in the template exactly once (a marker
 * named in a comment would write its data twice). @return 0, or -1 on a write
 * error, or when a marker is missing or repeated (after printing that it is a
 * build bug). */
int out_page(FILE *out, const char *tpl, size_t len, const struct out_slot *slots,
             size_t nslots);

/* An out_slot writer: the flame graph's renderer (tools/outputs/flame.js), which
 * the flame graph page and the heatmap page share. */
void out_flame_js_slot(FILE *out, void *arg);

#endif
