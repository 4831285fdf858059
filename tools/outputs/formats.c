/*
 * tools/outputs/formats.c — the table of `ringprof convert` output formats (see formats.h).
 *
 * The first row is the default when neither --format nor a known -o extension says
 * otherwise. Extensions are matched case-sensitively against the end of the -o path;
 * a ".txt" file gets the tree, the text format that shows the most.
 */
#include "formats.h"

const struct rp_format rp_formats[] = {
    {"tree", ".txt .tree", rp_out_tree, 0,
     "calling context tree, indented, with self/total, percent and time"},
    {"backtrace", ".backtrace", rp_out_backtrace, 0,
     "method back-traces: the top methods, each with its callers below it"},
    {"flat", ".flat", rp_out_flat, 0,
     "method table (HPROF CPU SAMPLES), or allocation SITES for alloc"},
    {"collapsed", ".collapsed .folded", rp_out_collapsed, 0,
     "folded stacks 'a;b;c N' for flamegraph.pl, inferno, speedscope"},
    {"pprof", ".pb.gz .pprof", rp_out_pprof, 1,
     "gzipped profile.proto for go tool pprof, Pyroscope, Grafana",
     RP_FMT_THREADS | RP_FMT_LINES},
    {"html", ".html .htm", rp_out_html, 0,
     "self-contained interactive flame graph page (works offline)"},
    /* No extension selects it: .html and .txt already mean html and tree; with
     * --format timeline, -o x.html or x.svg draws it as a picture. */
    {"timeline", "", rp_out_timeline, 0,
     "thread states over time, thread count and telemetry: text, or HTML/SVG",
     RP_FMT_TIMELINE},
};

const size_t rp_nformats = sizeof rp_formats / sizeof rp_formats[0];
