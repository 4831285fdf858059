/*
 * tools/outputs/formats.c — the table of `ringprof convert` output formats (see formats.h).
 *
 * The first row is the default when neither --format nor a known -o extension says
 * otherwise. Extensions are matched case-sensitively against the end of the -o path;
 * a ".txt" file gets the tree, the text format that shows the most.
 */
#include "formats.h"

#include <string.h>

#define PROFILE(w) .model = RP_MODEL_PROFILE, .write_profile = (w)

const struct rp_format rp_formats[] = {
    {"tree", ".txt .tree", PROFILE(rp_out_tree), .cutoff = RP_OUT_TREE_CUTOFF,
     .summary = "calling context tree, indented, with self/total, percent and time"},
    {"backtrace", ".backtrace", PROFILE(rp_out_backtrace),
     .summary = "method back-traces: the top methods, each with its callers below it"},
    {"flat", ".flat", PROFILE(rp_out_flat),
     .summary = "method table (HPROF CPU SAMPLES), or allocation SITES for alloc",
     .needs = RP_FMT_LIVE_JOIN | RP_FMT_SITE_LINES},
    {"histogram", ".histo", PROFILE(rp_out_histogram),
     .summary = "allocated (or live) bytes and objects by class, like jmap -histo",
     .needs = RP_FMT_LIVE_JOIN | RP_FMT_CLASSES},
    {"collapsed", ".collapsed .folded", PROFILE(rp_out_collapsed),
     .summary = "folded stacks 'a;b;c N' for flamegraph.pl, inferno, speedscope"},
    {"pprof", ".pb.gz .pprof", PROFILE(rp_out_pprof), .binary = 1,
     .summary = "gzipped profile.proto for go tool pprof, Pyroscope, Grafana",
     .needs = RP_FMT_THREADS | RP_FMT_LINES | RP_FMT_STATES},
    /* Before html, whose ".html" would take "x.heatmap.html". */
    {"heatmap", ".heatmap.html", .model = RP_MODEL_EVENTS, .write_events = rp_out_heatmap,
     .summary = "the incident view: heatmaps over time, telemetry, flame graph of a window"},
    {"html", ".html .htm", PROFILE(rp_out_html),
     .summary = "self-contained interactive flame graph page (works offline)"},
    {"jfr", ".jfr", .model = RP_MODEL_EVENTS, .write_events = rp_out_jfr, .binary = 1,
     .summary = "JDK Flight Recorder file of every kind for JMC, IntelliJ, jfr, Pyroscope"},
    {"otlp", ".otlp", .model = RP_MODEL_EVENTS, .write_events = rp_out_otlp, .binary = 1,
     .summary = "OpenTelemetry profiles (OTLP protobuf) of every kind, for a Collector"},
    /* No extension selects it: .html and .txt already mean html and tree; with
     * --format timeline, -o x.html or x.svg draws it as a picture. */
    {"timeline", "", .model = RP_MODEL_TIMELINE, .write_timeline = rp_out_timeline,
     .summary = "thread states over time, thread count and telemetry: text, or HTML/SVG"},
};

const size_t rp_nformats = sizeof rp_formats / sizeof rp_formats[0];

const struct rp_format *rp_format_by_name(const char *name)
{
    for (size_t i = 0; i < rp_nformats; i++)
        if (!strcmp(rp_formats[i].name, name))
            return &rp_formats[i];
    return NULL;
}
