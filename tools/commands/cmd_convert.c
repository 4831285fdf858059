/*
 * tools/commands/cmd_convert.c — `ringprof convert [options] INPUT...`: chunk files to a
 * profile in one of the formats of tools/outputs/formats.c.
 *
 * The command parses options, expands INPUT (files, directories, globs; several
 * recordings merge), streams every chunk into one profile (tools/model/profile.h) and
 * hands it to the chosen format's writer. Some things need a look at the inputs
 * before the real pass (tools/model/scan.c): with no --event, which kinds exist (the
 * first segment of each file tells, cheaply); with --from/--to relative to the
 * recording's start or end (+10s, -30s), where those are; for live objects,
 * which snapshots there are. The last two read every file in full, so such a
 * conversion reads its inputs twice.
 *
 * Live objects (docs/profiles.md): `--event live` is the profile of ONE
 * snapshot per recording, the last in the time range unless --snapshot says
 * otherwise; adding snapshots up would count every surviving object once per
 * snapshot. The alloc flat table gets the live columns from the same choice of
 * snapshot, through a second profile of kind live built beside the alloc one.
 *
 * -o's file is made through model/outfile.h: a temporary put in place once the
 * conversion has succeeded, so a symlink at the name is replaced, not followed,
 * and a failed conversion leaves no file. --recording ID keeps only that
 * recording's chunks (query.h), as `ringprof record` converts its own run.
 *
 * The profile pass reports every problem the reader finds (file, offset,
 * reason) and goes on; the exit status is 1 only when nothing could be read,
 * when no input holds a sample of any kind (a chunk cut before its first whole
 * segment: no empty profile is written), when a live profile was asked of
 * inputs without a snapshot, or with --strict when anything was wrong.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "model/live.h"
#include "model/outfile.h"
#include "model/timeline.h"
#include "outputs/formats.h"
#include "outputs/out_common.h"
#include "query.h"
#include "ringprof/labels.h"
#include "ringprof/units.h"
#include "usage.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof convert [options] INPUT...\n"
        "\n"
        "Turn chunk files into a profile. INPUT is a chunk file (*.rpc), a recording\n"
        "directory or a glob; several recordings (JVMs, hosts) merge into one profile.\n"
        "\n"
        "  --event KIND        event kind: cpu, alloc, live, wall, lock, ... (default:\n"
        "                      cpu, else alloc, else the first kind present)\n"
        "  --state LIST        wall: only samples in these thread states, comma-\n"
        "                      separated: running, runnable, native, io, blocked,\n"
        "                      waiting, parked, sleeping, unknown (implies --event wall)\n"
        "  --state-frames      wall: add the state as the leaf frame [state:NAME]\n"
        "  --snapshot S        live: which snapshot, among those in --from/--to:\n"
        "                      first, last (default), N (the N-th) or -N (the N-th\n"
        "                      from the end); also picks the live columns of\n"
        "                      alloc's flat and histogram tables\n"
        "  --min-gcs N         live: only objects that survived at least N GCs (1:\n"
        "                      the heap the program keeps; default 0, every object)\n"
        "  --format F          output format (default: from the -o extension, else tree)\n"
        "  -o, --output FILE   write to FILE instead of stdout (a new file renamed\n"
        "                      into place: a symlink at FILE is replaced, not\n"
        "                      followed)\n"
        "  --recording ID      only the chunks of recording ID (their recording.id;\n"
        "                      ringprof summary lists them), the others left out\n"
        "  --from T, --to T    keep samples with T_from <= time < T_to. T is UTC\n"
        "                      (2026-11-21T06:02:03Z, fraction allowed), or +DUR from\n"
        "                      the recording's first sample, or -DUR before its last;\n"
        "                      DUR is a number with ns, us, ms, s, m or h (+10s, -1.5m)\n"
        "  --thread REGEX      only threads whose name matches (POSIX ERE)\n"
        "  --include REGEX     only stacks with a frame matching REGEX\n"
        "  --exclude REGEX     drop stacks with a frame matching REGEX\n"
        "  --demangle STYLE    how native C++ and Rust symbols are named: short\n"
        "                      (default: CompileBroker::compiler_thread_loop, no\n"
        "                      parameters; overloads merge), full (with the\n"
        "                      parameter list) or none (as recorded: _ZN...);\n"
        "                      --include/--exclude see the names so\n"
        "  --lines             frames are method:line\n"
        "  --bci               frames are method@bci\n"
        "  --per-thread        one tree per thread ([thread name] as the root frame)\n"
        RP_NORM_USAGE("keep")
        "  --cutoff PCT        tree, backtrace: hide branches under PCT%% of the total\n"
        "  --top N             flat, histogram: rows shown; backtrace: methods\n"
        "                      (default 10)\n"
        "  --method REGEX      backtrace: the methods matching REGEX, not the top ones\n"
        "  --value V           collapsed: 'weight' (default, in the kind's unit) or\n"
        "                      'samples' (counts)\n"
        "  --width W           timeline, text: columns of the time axis (default 100)\n"
        "  --rows N            timeline: threads drawn (default 200, 0: all); the\n"
        "                      rest are counted and summarised\n"
        "  --sort S            timeline: rows by name (default), busy (running or\n"
        "                      runnable time) or start (first sample)\n"
        "  --service NAME      otlp: the service.name of every recording (default:\n"
        "                      its agent's service=, else its main class or jar)\n"
        "  --label K=V         otlp, pprof: a label on every recording (repeatable;\n"
        "                      wins over the agent's labels= of the same key)\n"
        "  --resolution D      heatmap: the finest time bucket (default 20ms; it\n"
        "                      grows as far as the page's budget needs: the\n"
        "                      converter says which it chose)\n"
        "  --html              timeline: the HTML page whatever -o says (it is\n"
        "                      HTML for -o x.html, SVG for x.svg, else text)\n"
        "  --strict            exit 1 if any input was missing or damaged\n"
        "  --quiet             do not print each problem found in the inputs, nor\n"
        "                      which live snapshot was used, nor jfr's event counts\n"
        "\n"
        "formats:\n");
    for (size_t i = 0; i < rp_nformats; i++)
        fprintf(f, "  %-11s %-22s %s\n", rp_formats[i].name, rp_formats[i].exts,
                rp_formats[i].summary);
    fprintf(f, "\nExit status: 0 done; 1 nothing could be read (or --strict and a problem\n"
               "was found), no input holds a sample, the inputs have no samples of\n"
               "--event wall or lock, or the output could not be written; 2 usage error.\n"
               "See docs/profiles.md for how to read each format.\n");
}

/* ---------------------------------------------------------------- output -- */

static int ext_matches(const char *path, const char *exts)
{
    size_t plen = strlen(path);
    for (const char *e = exts; *e;) {
        size_t n = strcspn(e, " ");
        if (n && plen >= n && !strncmp(path + plen - n, e, n))
            return 1;
        e += n;
        e += strspn(e, " ");
    }
    return 0;
}

static const struct rp_format *format_by_path(const char *path)
{
    for (size_t i = 0; i < rp_nformats; i++)
        if (ext_matches(path, rp_formats[i].exts))
            return &rp_formats[i];
    return NULL;
}


/* ------------------------------------------------------------ the state -- */

struct age_list {
    struct rp_live_age *a;
    size_t n, cap;
    const struct rp_kind_info *kind;   /* the kind the indexes below are for */
    int gcs_x, ms_x;                   /* its age_gcs and age_ms fields, or -1 */
};

struct convert {
    struct rp_prof_options po;
    struct rp_out_options oo;
    struct rp_query q;           /* the common options, inputs and look-ahead    */
    const char *format, *outpath;
    struct rp_outfile out;       /* -o's file until it is put in place            */
    const struct rp_format *fmt;
    long snapshot;               /* --snapshot (rp_snap_parse); -1: the last     */
    int snapshot_set;
    struct rp_snap_choice choice;
    struct rp_live_view lv;
    struct age_list ages;
    struct rp_profile *p, *live;
    int state_set;               /* --state or --state-frames given              */
    struct rp_tl_options tlo;    /* --format timeline (tools/model/timeline.h)         */
    struct rp_tl tl;
    size_t readable;             /* RP_MODEL_EVENTS: inputs read as chunks        */
    int event_found;             /* po.event is the inputs' first kind, not asked */
    int cutoff_set;              /* --cutoff given (else the format's default)    */
    const char *labels[RP_LABELS_MAX];   /* --label K=V                          */
};

/* ------------------------------------------------------------- options -- */

enum {
    OPT_EVENT = RP_QOPT_END, OPT_FORMAT, OPT_LINES, OPT_BCI, OPT_PER_THREAD, OPT_CUTOFF,
    OPT_TOP, OPT_VALUE, OPT_SNAPSHOT, OPT_MIN_GCS, OPT_STATE, OPT_STATE_FRAMES,
    OPT_TL_WIDTH, OPT_TL_ROWS, OPT_TL_SORT, OPT_TL_HTML, OPT_SERVICE, OPT_LABEL, OPT_RECORDING,
    OPT_RESOLUTION
};

/* The kinds that are off unless asked for, and the agent option that records
 * each: what to say when a recording has none. */
static const char *kind_option(const char *kind)
{
    if (!strcmp(kind, RP_KIND_WALL))
        return "wall=INTERVAL (e.g. wall=50ms): wall-clock samples of every thread";
    if (!strcmp(kind, RP_KIND_LOCK))
        return "lock=DURATION (e.g. lock=10ms): contended monitor waits longer than that";
    return NULL;
}

/* --state LIST: names of include/ringprof/events.h, comma-separated, into a mask
 * of 1u << state. @return 0, or 2 after printing the valid names. */
static int parse_states(const char *arg, uint32_t *mask)
{
    *mask = 0;
    for (const char *s = arg;;) {
        size_t n = strcspn(s, ",");
        int st = rp_thread_state_parse(s, n);
        if (st < 0) {
            const char *names[RP_TS_COUNT];
            for (int i = 0; i < RP_TS_COUNT; i++)
                names[i] = rp_thread_state_name((unsigned)i);
            fprintf(stderr, "ringprof convert: --state '%s': unknown state '%.*s'", arg,
                    (int)n, s);
            rp_usage_suggest(stderr, s, n, names, RP_TS_COUNT);
            fputs("; the states are", stderr);
            for (int i = 0; i < RP_TS_COUNT; i++)
                fprintf(stderr, "%s %s", i ? "," : "", names[i]);
            fputc('\n', stderr);
            return rp_usage_help_line("convert");
        }
        *mask |= 1u << st;
        if (!s[n])
            return 0;
        s += n + 1;
    }
}

/* The timeline format's options. @return 0 or 2 (usage error, printed). */
static int parse_timeline_opt(struct convert *c, int opt, const char *arg)
{
    size_t n;
    char *end;
    switch (opt) {
    case OPT_TL_WIDTH:
        if (rp_parse_positive(arg, &n) < 0 || n > 100000)
            return rp_query_bad_usage(&c->q, "--width '%s': columns, from 1 to 100000", arg);
        c->tlo.width = (unsigned)n;
        return 0;
    case OPT_TL_ROWS:
        errno = 0;
        n = strtoul(arg, &end, 10);
        if (end == arg || *end || errno || arg[0] == '-')
            return rp_query_bad_usage(&c->q, "--rows '%s': a number of threads (0: all)", arg);
        c->tlo.rows = n;
        c->tlo.rows_set = 1;
        return 0;
    case OPT_TL_SORT: {
        static const char *const orders[] = {"name", "busy", "start"};
        if (!strcmp(arg, "name"))
            c->tlo.sort = RP_TL_SORT_NAME;
        else if (!strcmp(arg, "busy"))
            c->tlo.sort = RP_TL_SORT_BUSY;
        else if (!strcmp(arg, "start"))
            c->tlo.sort = RP_TL_SORT_START;
        else
            return rp_usage_choice("convert", "--sort", "order", arg, orders, 3);
        return 0;
    }
    default:
        c->tlo.html = 1;
        return 0;
    }
}

/* --label K=V: K and V by the labels' grammar (ringprof/labels.h), each key
 * once. @return 0 or 2 (usage error, printed). */
static int parse_label(struct convert *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t klen = eq ? (size_t)(eq - arg) : 0;
    if (!eq || !rp_label_key_ok(arg, klen) || !rp_label_value_ok(eq + 1, strlen(eq + 1)))
        return rp_query_bad_usage(&c->q, "--label '%s': KEY=VALUE, KEY 1 to 64 of A-Z "
                                  "a-z 0-9 _ . - starting with a letter or _, VALUE 1 to "
                                  "256 printable ASCII characters other than , and ;", arg);
    for (size_t i = 0; i < c->oo.nlabels; i++)
        if (!strncmp(c->labels[i], arg, klen + 1))
            return rp_query_bad_usage(&c->q, "--label '%s': that key is given twice", arg);
    if (c->oo.nlabels == RP_LABELS_MAX)
        return rp_query_bad_usage(&c->q, "--label '%s': at most 32 labels", arg);
    c->labels[c->oo.nlabels++] = arg;
    c->oo.labels = c->labels;
    return 0;
}

/* One of convert's own options (rp_query_own_fn). */
static int parse_one(void *cmd, int opt, const char *arg)
{
    struct convert *c = cmd;
    char *end;
    switch (opt) {
    case OPT_EVENT: c->po.event = arg; return 0;
    case OPT_FORMAT: c->format = arg; return 0;
    case 'o': c->outpath = arg; return 0;
    case OPT_RECORDING: c->q.recording = arg; return 0;
    case OPT_LINES: c->po.granularity = RP_GRAN_LINE; return 0;
    case OPT_BCI: c->po.granularity = RP_GRAN_BCI; return 0;
    case OPT_PER_THREAD: c->po.per_thread = 1; return 0;
    case OPT_CUTOFF:
        errno = 0;
        c->oo.cutoff_pct = strtod(arg, &end);
        if (end == arg || *end || errno || !(c->oo.cutoff_pct >= 0) ||
            c->oo.cutoff_pct > 100)
            return rp_query_bad_usage(&c->q, "--cutoff '%s': a percentage from 0 to 100", arg);
        c->cutoff_set = 1;
        return 0;
    case OPT_TOP:
        if (rp_parse_positive(arg, &c->oo.top) < 0)
            return rp_query_bad_usage(&c->q, "--top '%s': a positive integer", arg);
        return 0;
    case OPT_VALUE: {
        static const char *const values[] = {"weight", "samples"};
        if (!strcmp(arg, "samples"))
            c->oo.value_samples = 1;
        else if (strcmp(arg, "weight"))
            return rp_usage_choice("convert", "--value", "value", arg, values, 2);
        return 0;
    }
    case OPT_SNAPSHOT:
        if (rp_snap_parse(arg, &c->snapshot) < 0)
            return rp_query_bad_usage(&c->q, "--snapshot '%s': first, last, N (the N-th in the time "
                             "range, from 1) or -N (the N-th from the end)", arg);
        c->snapshot_set = 1;
        return 0;
    case OPT_STATE:
        if (c->po.state_mask)
            return rp_query_bad_usage(&c->q, "%s", "--state given twice");
        if (parse_states(arg, &c->po.state_mask))
            return 2;
        c->state_set = 1;
        return 0;
    case OPT_MIN_GCS: return rp_query_parse_min_gcs(&c->q, arg, &c->po.min_age_gcs);
    case OPT_STATE_FRAMES: c->po.state_frames = c->oo.state_frames = c->state_set = 1; return 0;
    case OPT_SERVICE:
        if (!*arg || strlen(arg) > 255)
            return rp_query_bad_usage(&c->q, "--service '%s': a name of 1 to 255 bytes", arg);
        c->oo.service = arg;
        return 0;
    case OPT_LABEL: return parse_label(c, arg);
    case OPT_RESOLUTION:
        if (rp_parse_duration(arg, &c->oo.resolution_ns) < 0 || !c->oo.resolution_ns ||
            c->oo.resolution_ns > 86400ull * 1000000000ull)
            return rp_query_bad_usage(&c->q, "--resolution '%s': a duration from 10ms to "
                                      "1d (10ms, 1s, 5m)", arg);
        return 0;
    case OPT_TL_WIDTH:
    case OPT_TL_ROWS:
    case OPT_TL_SORT:
    default: return parse_timeline_opt(c, opt, arg);   /* OPT_TL_* */
    }
}

/* @return 0, 2 (usage error) or 3 (--help). */
static int parse_args(struct convert *c, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"event", 1, 0, OPT_EVENT},     {"format", 1, 0, OPT_FORMAT},
        {"output", 1, 0, 'o'},          {"method", 1, 0, RP_QOPT_METHOD},
        {"lines", 0, 0, OPT_LINES},     {"bci", 0, 0, OPT_BCI},
        {"per-thread", 0, 0, OPT_PER_THREAD}, {"cutoff", 1, 0, OPT_CUTOFF},
        {"top", 1, 0, OPT_TOP},         {"value", 1, 0, OPT_VALUE},
        {"snapshot", 1, 0, OPT_SNAPSHOT},
        {"state", 1, 0, OPT_STATE},     {"state-frames", 0, 0, OPT_STATE_FRAMES},
        {"min-gcs", 1, 0, OPT_MIN_GCS}, {"recording", 1, 0, OPT_RECORDING},
        {"width", 1, 0, OPT_TL_WIDTH},  {"rows", 1, 0, OPT_TL_ROWS},
        {"sort", 1, 0, OPT_TL_SORT},    {"html", 0, 0, OPT_TL_HTML},
        {"service", 1, 0, OPT_SERVICE}, {"label", 1, 0, OPT_LABEL},
        {"resolution", 1, 0, OPT_RESOLUTION},
        RP_QUERY_NORM_LONGOPTS,         RP_QUERY_LONGOPTS,
        {0, 0, 0, 0}};
    int rc = rp_query_parse(&c->q, argc, argv, ":o:h", longopts, parse_one, c);
    if (rc)
        return rc;
    /* Thread states exist only in wall samples: --state picks the kind. */
    if (c->state_set && !c->po.event)
        c->po.event = RP_KIND_WALL;
    if (c->state_set && strcmp(c->po.event, RP_KIND_WALL))
        return rp_query_bad_usage(&c->q, "--state and --state-frames apply to --event wall (thread "
                         "states are recorded only by wall-clock samples), not to "
                         "--event %s", c->po.event);
    if (c->format && !(c->fmt = rp_format_by_name(c->format))) {
        const char *names[32];
        size_t n = 0;
        for (; n < rp_nformats && n < 32; n++)
            names[n] = rp_formats[n].name;
        return rp_usage_choice("convert", NULL, "format", c->format, names, n);
    }
    if (!c->fmt && c->outpath)
        c->fmt = format_by_path(c->outpath);
    if (!c->fmt)
        c->fmt = &rp_formats[0];
    if (!c->cutoff_set)
        c->oo.cutoff_pct = c->fmt->cutoff;
    /* A table of allocated classes: alloc, unless --event says live. */
    if (c->fmt->needs & RP_FMT_CLASSES) {
        if (!c->po.event)
            c->po.event = "alloc";
        else if (strcmp(c->po.event, "alloc") && strcmp(c->po.event, RP_KIND_LIVE))
            return rp_query_bad_usage(&c->q, "--event %s: the class histogram counts "
                                      "allocated objects, so it takes --event alloc or "
                                      "live", c->po.event);
    }
    /* JFR and OTLP frames are methods with their lines; viewers group them. */
    if (c->oo.resolution_ns && c->fmt->write_events != rp_out_heatmap)
        return rp_query_bad_usage(&c->q, "--resolution is the heatmap's time bucket: it "
                                  "takes --format heatmap (or -o x.heatmap.html), not %s",
                                  c->fmt->name);
    if (c->fmt->model == RP_MODEL_EVENTS && c->fmt->write_events != rp_out_heatmap &&
        c->q.norm.group != RP_GROUP_METHOD)
        return rp_query_bad_usage(&c->q, c->fmt->write_events == rp_out_jfr
                                  ? "--group %s: a JFR file holds methods (with their "
                                    "line and bci); its viewers group them by class or "
                                    "package themselves"
                                  : "--group %s: an OTLP profile holds methods (with "
                                    "their lines); its backends group them by class or "
                                    "package themselves",
                                  c->q.norm.group == RP_GROUP_CLASS ? "class" : "package");
    if (c->fmt->binary && !c->outpath && isatty(STDOUT_FILENO))
        return rp_usage_error("convert", "the %s format is binary: use -o FILE or "
                              "redirect stdout", c->fmt->name);
    return 0;
}

/* ------------------------------------------------------------ look-ahead -- */

static int is_event(const struct convert *c, const char *kind)
{
    return c->po.event && !strcmp(c->po.event, kind);
}

/* Live snapshots matter for a live profile, and for alloc in a format that joins
 * the live profile (RP_FMT_LIVE_JOIN: flat's SITES table, the class histogram). */
static int needs_snapshots(const struct convert *c)
{
    return is_event(c, RP_KIND_LIVE) ||
           (is_event(c, "alloc") && (c->fmt->needs & RP_FMT_LIVE_JOIN));
}

/* Lock waits in progress (tools/model/waits.h) matter wherever kind lock is
 * read: --event lock or lock.waiting, and an events format's every kind. */
static int needs_waits(const struct convert *c)
{
    return is_event(c, RP_KIND_LOCK) || is_event(c, RP_KIND_LOCK_WAITING) ||
           (c->fmt->model == RP_MODEL_EVENTS && !c->po.event);
}

/* The default kind, the inputs' time span, the snapshots and the waits in
 * progress, as far as asked; relative --from/--to are dropped when no sample
 * has a wall-clock time. rp_query_apply then places the time range. */
static void look_ahead(struct convert *c)
{
    int need_range = rp_query_need_range(&c->q), waits = needs_waits(c);
    unsigned what = (c->po.event ? 0 : RP_SCAN_KINDS) | (need_range ? RP_SCAN_RANGE : 0) |
                    (needs_snapshots(c) ? RP_SCAN_SNAPSHOTS : 0) |
                    (waits ? RP_SCAN_WAITS : 0);
    if (what)
        rp_query_scan(&c->q, what);
    if (!c->po.event && (c->q.sc.has_cpu || c->q.sc.has_alloc || c->q.sc.kind)) {
        c->po.event = c->q.sc.has_cpu ? "cpu" : c->q.sc.has_alloc ? "alloc" : c->q.sc.kind;
        c->event_found = 1;
        unsigned more = (needs_snapshots(c) ? RP_SCAN_SNAPSHOTS : 0) |
                        (!waits && needs_waits(c) ? RP_SCAN_WAITS : 0);
        if (more)                 /* known only now: one more pass */
            rp_query_scan(&c->q, more);
        waits |= needs_waits(c);
    }
    rp_scan_finish(&c->q.sc);
    if (waits) {
        c->po.waiting = rp_scan_wait_keep;
        c->po.waiting_arg = &c->q.sc;
    }
    if (need_range && !c->q.sc.first) {
        fprintf(stderr, "ringprof convert: no sample has a wall-clock time, so relative "
                        "--from/--to cannot be placed; ignored\n");
        c->q.from.set = c->q.from.rel ? 0 : c->q.from.set;
        c->q.to.set = c->q.to.rel ? 0 : c->q.to.set;
    }
}

/* -------------------------------------------------------------- profiles -- */

/* on_sample for a live profile: keep each sample's ages for the flat table. */
static void collect_age(void *arg, const struct rp_profile *p, uint32_t leaf,
                        const struct rp_event *ev, const struct rp_kind_info *kind)
{
    (void)p;
    struct age_list *l = arg;
    if (kind != l->kind) {
        l->kind = kind;
        l->gcs_x = l->ms_x = -1;
        for (uint32_t i = 0; kind && i < kind->nextra; i++) {
            if (kind->extra[i] && !strcmp(kind->extra[i], "age_gcs"))
                l->gcs_x = (int)i;
            if (kind->extra[i] && !strcmp(kind->extra[i], "age_ms"))
                l->ms_x = (int)i;
        }
    }
    if (l->gcs_x < 0 || (uint32_t)l->gcs_x >= ev->u.sample.nextra)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->a = rp_xrealloc(l->a, l->cap * sizeof *l->a);
    }
    uint64_t gcs = ev->u.sample.extra[l->gcs_x];
    l->a[l->n].leaf = leaf;
    l->a[l->n].gcs = gcs > UINT32_MAX ? UINT32_MAX : (uint32_t)gcs;
    l->a[l->n].ms = l->ms_x >= 0 && (uint32_t)l->ms_x < ev->u.sample.nextra
                        ? ev->u.sample.extra[l->ms_x] : 0;
    l->n++;
}

/*
 * Set up what the profile needs of live snapshots: for --event live, the
 * instant filter and the ages; for the alloc flat table, the live profile to
 * join (built here). @return 0, or 1 after printing why a live profile cannot
 * be made.
 */
static int setup_live(struct convert *c)
{
    int live = is_event(c, RP_KIND_LIVE);
    if (!needs_snapshots(c)) {
        if (c->snapshot_set)
            fprintf(stderr, "ringprof convert: --snapshot applies to --event live and to "
                            "the live columns of the alloc flat and histogram "
                            "tables; ignored\n");
        return 0;
    }
    if (rp_query_none_readable(&c->q))
        return 1;
    c->oo.live = &c->lv;
    int rc = rp_snap_choose(&c->choice, &c->q.sc, c->snapshot, c->po.from_wall,
                            c->po.to_wall);
    c->lv.note = c->choice.note;
    if (rc < 0) {
        if (!live)
            return 0;   /* alloc: the live columns say "-" and why */
        fprintf(stderr, "ringprof convert: %s\n", c->choice.note);
        return 1;
    }
    if (!c->q.diag.quiet)
        fprintf(stderr, "ringprof convert: %s%s\n", live ? "live snapshot "
                                                          : "live columns from snapshot ",
                c->choice.note);
    if (c->choice.warning)
        fprintf(stderr, "ringprof convert: %s\n", c->choice.warning);
    c->po.instant = rp_snap_instant;
    c->po.instant_arg = &c->choice;
    if (live) {
        c->po.on_sample = collect_age;
        c->po.on_sample_arg = &c->ages;
        return 0;
    }
    struct rp_prof_options lpo = c->po;   /* alloc: the same filters, kind live */
    lpo.event = RP_KIND_LIVE;
    lpo.diag = NULL;                      /* the alloc pass reports problems */
    c->live = rp_query_build(&c->q, &lpo, NULL);
    c->lv.live = c->live;
    c->po.instant = NULL;                 /* not for the alloc samples */
    return 0;
}

/* What stderr says when nothing of the kind was kept. */
static void say_empty(const struct convert *c)
{
    const struct rp_profile *p = c->p;
    const struct rp_prof_stats *st = &p->stats;
    if (is_event(c, RP_KIND_LIVE) && !st->samples_thread_filtered &&
        !st->samples_frame_filtered) {
        fprintf(stderr, "ringprof convert: the live snapshot holds no sampled objects: "
                        "the profile is empty\n");
        return;
    }
    if (p->kind[0])
        fprintf(stderr, "ringprof convert: no samples of kind '%s' kept", p->kind);
    else
        fprintf(stderr, "ringprof convert: no samples kept");
    if (rp_print_kinds(stderr, p, " (in the inputs:", 1, NULL))
        fputc(')', stderr);
    if (st->samples_state_filtered)
        fprintf(stderr, "; %llu left out by --state",
                (unsigned long long)st->samples_state_filtered);
    fputc('\n', stderr);
}

/* With --event wall or lock: whether the inputs have none of that kind at all.
 * Then there is nothing to filter or show, and the likely cause is a recording
 * made without the agent option, which the message names. @return 1 after
 * printing that. */
static int kind_absent(const struct convert *c)
{
    const struct rp_profile *p = c->p;
    const char *opt = c->po.event ? kind_option(c->po.event) : NULL;
    if (!opt)
        return 0;
    for (size_t k = 0; k < p->nkinds; k++)
        if (rp_kind_in_event(c->po.event, p->kinds[k].name) && p->kinds[k].samples)
            return 0;
    fprintf(stderr, "ringprof convert: the inputs have no %s samples", c->po.event);
    size_t held = rp_print_kinds(stderr, p, " (they hold:", 1, NULL);
    fprintf(stderr, "%s; the agent records them with %s\n",
            held ? ")" : " (no samples at all)", opt);
    return 1;
}

/* When the inputs could be read but none holds a sample of any kind, say so
 * (with what was read, after the reader's line on why a file ends early) as for
 * unreadable inputs: an empty profile would pass for an idle program. @return 1
 * then, else 0. */
static int no_sample(const struct convert *c)
{
    const struct rp_prof_stats *st = &c->p->stats;
    if (st->samples_read)
        return 0;
    uint64_t read = st->files - st->files_unreadable;
    fprintf(stderr, "ringprof convert: no input holds a sample (%llu chunk file%s read: "
                    "%llu segment%s whole, %llu cut off, %llu damaged); nothing written\n",
            (unsigned long long)read, read == 1 ? "" : "s",
            (unsigned long long)st->segments_ok, st->segments_ok == 1 ? "" : "s",
            (unsigned long long)st->segments_partial, (unsigned long long)st->segments_bad);
    return 1;
}

/* An events writer's build step (formats.h): the profile pass, its writer's
 * callbacks in po. */
static struct rp_profile *build_events(void *arg, const struct rp_prof_options *po)
{
    struct convert *c = arg;
    return rp_query_build(&c->q, po, &c->readable);
}

/* Write the profile (for RP_MODEL_EVENTS, build it while writing) to stdout, or
 * to -o's file, which close_output then puts in place (model/outfile.h).
 * @return 0, or 1 after printing why it failed (the file is given up). */
static int write_output(struct convert *c, int argc, char **argv)
{
    FILE *out = stdout;
    char why[512];
    if (c->outpath) {
        if (rp_outfile_open(&c->out, c->outpath, why, sizeof why) != 0) {
            fprintf(stderr, "ringprof convert: %s: %s\n", c->outpath, why);
            return 1;
        }
        out = c->out.f;
    }
    c->oo.method_re = c->q.fx.have_method ? &c->q.fx.method : NULL;
    c->oo.quiet = c->q.diag.quiet;
    c->oo.out_path = c->outpath;
    c->oo.argc = argc;
    c->oo.argv = argv;
    c->oo.title = c->q.in.n == 1 ? c->q.in.paths[0] : "several inputs";
    c->lv.ages = c->ages.a;
    c->lv.nages = c->ages.n;
    int wrc = c->fmt->model == RP_MODEL_TIMELINE
                  ? c->fmt->write_timeline(out, &c->tl, &c->tlo, &c->oo)
              : c->fmt->model == RP_MODEL_EVENTS
                  ? c->fmt->write_events(out, build_events, c, &c->po, &c->oo, &c->p)
                  : c->fmt->write_profile(out, c->p, &c->oo);
    if (fflush(out) != 0 || ferror(out))
        wrc = -1;
    if (wrc != 0) {
        fprintf(stderr, "ringprof convert: writing %s: %s\n",
                c->outpath ? c->outpath : "stdout", strerror(errno ? errno : EIO));
        rp_outfile_discard(&c->out);
    }
    return wrc != 0;
}

/* Put -o's file in place (keep), or give it up: a conversion that fails leaves
 * no file, and an earlier one at that name as it was. @return 0, or 1 after
 * printing why it could not be put in place. */
static int close_output(struct convert *c, int keep)
{
    char why[512];
    if (!keep || !c->out.f) {
        rp_outfile_discard(&c->out);
        return 0;
    }
    if (rp_outfile_commit(&c->out, why, sizeof why) != 0) {
        fprintf(stderr, "ringprof convert: %s: %s\n", c->outpath, why);
        return 1;
    }
    return 0;
}

/*
 * The timeline format (tools/model/timeline.h) reads wall, lock and gc samples and
 * the gauges in one pass of its own instead of a profile. It keeps the time
 * range and --thread; the frame filters and --event do not apply to it.
 */
static int run_timeline(struct convert *c, int argc, char **argv)
{
    if (c->po.event || c->q.fx.have_include || c->q.fx.have_exclude)
        fprintf(stderr, "ringprof convert: the timeline shows the wall, lock and gc "
                        "samples and the gauges, whole: --event, --include and --exclude "
                        "are ignored\n");
    c->po.event = RP_KIND_WALL;   /* look_ahead need not look for kinds */
    look_ahead(c);
    rp_query_apply(&c->q, &c->po);
    rp_tl_load(&c->tl, &c->q.in, &c->po);
    if (!c->tl.files_read) {
        fprintf(stderr, "ringprof convert: no input could be read\n");
        return 1;
    }
    if (!c->tl.wall_samples && !c->tl.gauge_readings) {
        fprintf(stderr, "ringprof convert: timeline: no wall samples and no telemetry "
                        "gauges %s; the agent records them with wall=INTERVAL (thread "
                        "states) and telemetry=PERIOD (gauges)\n",
                c->tl.samples_time_filtered || c->tl.samples_thread_filtered
                    ? "left after --from/--to and --thread" : "in the inputs");
        return 1;
    }
    if (!c->tl.wall_samples)
        fprintf(stderr, "ringprof convert: timeline: no wall samples%s (the agent records "
                        "them with wall=INTERVAL): showing the telemetry alone\n",
                c->tl.have_wall_kind ? " left after the filters" : "");
    if (write_output(c, argc, argv) || close_output(c, 1))
        return 1;
    return rp_query_status(&c->q);
}

/*
 * An events format (jfr) writes every kind's samples, as the profile pass reads
 * them, unless --event names one; the telemetry and the recordings' metadata
 * always. The filters apply to the samples as for the other formats.
 */
static int run_events(struct convert *c, int argc, char **argv)
{
    c->po.all_kinds = !c->po.event;
    if (rp_query_need_range(&c->q) || needs_waits(c))
        look_ahead(c);   /* its default kind is not wanted: all_kinds says so */
    rp_query_apply(&c->q, &c->po);
    if (c->po.all_kinds)
        c->po.event = NULL;
    int wrc = write_output(c, argc, argv);
    if (wrc && !c->p)          /* the output failed before the inputs were read */
        return 1;
    if (!c->readable) {
        fprintf(stderr, "ringprof convert: no input could be read\n");
        close_output(c, 0);
        return 1;
    }
    /* The file is written by now: one that holds nothing asked for is not kept. */
    if (c->po.event && rp_event_check("convert", c->po.event, c->p)) {
        close_output(c, 0);
        return 2;
    }
    if (no_sample(c) || kind_absent(c)) {
        close_output(c, 0);
        return 1;
    }
    rp_query_problems(&c->q, c->p, "the file holds");
    return wrc || close_output(c, 1) ? 1 : rp_query_status(&c->q);
}

static int run(struct convert *c, int argc, char **argv)
{
    if (rp_query_inputs(&c->q, argc, argv))
        return 1;
    if (c->fmt->model == RP_MODEL_TIMELINE)
        return run_timeline(c, argc, argv);
    if (c->fmt->model == RP_MODEL_EVENTS)
        return run_events(c, argc, argv);
    look_ahead(c);
    rp_query_apply(&c->q, &c->po);
    /* What the format needs of the profile (formats.h, RP_FMT_*). */
    if (c->fmt->needs & RP_FMT_THREADS)
        c->po.per_thread = 1;
    if ((c->fmt->needs & RP_FMT_LINES) && c->po.granularity == RP_GRAN_METHOD)
        c->po.granularity = RP_GRAN_LINE;
    if ((c->fmt->needs & RP_FMT_SITE_LINES) && c->po.granularity == RP_GRAN_METHOD &&
        (is_event(c, "alloc") || is_event(c, RP_KIND_LIVE)))
        c->po.granularity = RP_GRAN_SITE;
    if (c->fmt->needs & RP_FMT_STATES)
        c->po.state_frames = 1;
    if (setup_live(c))
        return 1;

    size_t readable;
    c->p = rp_query_build(&c->q, &c->po, &readable);
    if (!readable) {
        fprintf(stderr, "ringprof convert: no input could be read\n");
        return 1;
    }
    /* A kind the inputs named is no usage error, even one damage garbled (its
     * samples were lost with it: say_empty tells). */
    if (c->po.event && !c->event_found && rp_event_check("convert", c->po.event, c->p))
        return 2;
    if (no_sample(c) || kind_absent(c))
        return 1;
    if (c->p->nodes[0].total[RP_PV_SAMPLES] == 0)
        say_empty(c);
    rp_query_problems(&c->q, c->p, "the profile holds");
    if (write_output(c, argc, argv) || close_output(c, 1))
        return 1;
    return rp_query_status(&c->q);
}

int rp_cmd_convert(int argc, char **argv)
{
    struct convert c;
    memset(&c, 0, sizeof c);
    c.snapshot = -1;
    c.q.cmd = "convert";
    c.q.usage = usage;
    int rc = parse_args(&c, argc, argv);
    if (!rc)
        rc = run(&c, argc, argv);
    else if (rc == 3)
        rc = 0;
    rp_outfile_discard(&c.out);
    rp_prof_free(c.p);
    rp_prof_free(c.live);
    rp_tl_free(&c.tl);
    free(c.ages.a);
    rp_snap_choice_free(&c.choice);
    rp_query_free(&c.q);
    return rc;
}
