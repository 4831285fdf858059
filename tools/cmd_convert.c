/*
 * tools/cmd_convert.c — `ringprof convert [options] INPUT...`: chunk files to a
 * profile in one of the formats of tools/formats.c.
 *
 * The command parses options, expands INPUT (files, directories, globs; several
 * recordings merge), streams every chunk into one profile (tools/profile.c) and
 * hands it to the chosen format's writer. Two things may need a look at the inputs
 * before the real pass: with no --event, which kinds exist (the first segment of
 * each file tells, cheaply); with --from/--to relative to the recording's start or
 * end (+10s, -30s), where those are (a full read of every file, so such a
 * conversion reads its inputs twice). The profile pass reports every problem the
 * reader finds (file, offset, reason) and goes on; the exit status is 1 only when
 * nothing could be read, or with --strict when anything was wrong.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "formats.h"
#include "inputs.h"
#include "profile.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof convert [options] INPUT...\n"
        "\n"
        "Turn chunk files into a profile. INPUT is a chunk file (*.rpc), a recording\n"
        "directory or a glob; several recordings (JVMs, hosts) merge into one profile.\n"
        "\n"
        "  --event KIND        event kind: cpu, alloc, ... (default: cpu, else the\n"
        "                      first kind present)\n"
        "  --format F          output format (default: from the -o extension, else tree)\n"
        "  -o, --output FILE   write to FILE instead of stdout\n"
        "  --from T, --to T    keep samples with T_from <= time < T_to. T is UTC\n"
        "                      (2026-11-21T06:02:03Z, fraction allowed), or +DUR from\n"
        "                      the recording's first sample, or -DUR before its last;\n"
        "                      DUR is a number with ns, us, ms, s, m or h (+10s, -1.5m)\n"
        "  --thread REGEX      only threads whose name matches (POSIX ERE)\n"
        "  --include REGEX     only stacks with a frame matching REGEX\n"
        "  --exclude REGEX     drop stacks with a frame matching REGEX\n"
        "  --lines             frames are method:line\n"
        "  --bci               frames are method@bci\n"
        "  --per-thread        one tree per thread ([thread name] as the root frame)\n"
        "  --cutoff PCT        tree, backtrace: hide branches under PCT%% of the total\n"
        "  --top N             flat: rows shown; backtrace: methods (default 10)\n"
        "  --method REGEX      backtrace: the methods matching REGEX, not the top ones\n"
        "  --value V           collapsed: 'weight' (default, in the kind's unit) or\n"
        "                      'samples' (counts)\n"
        "  --strict            exit 1 if any input was missing or damaged\n"
        "  --quiet             do not print each problem found in the inputs\n"
        "\n"
        "formats:\n");
    for (size_t i = 0; i < rp_nformats; i++)
        fprintf(f, "  %-11s %-22s %s\n", rp_formats[i].name, rp_formats[i].exts,
                rp_formats[i].summary);
    fprintf(f, "\nExit status: 0 done; 1 nothing could be read (or --strict and a problem\n"
               "was found), or the output could not be written; 2 usage error.\n"
               "See docs/profiles.md for how to read each format.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    fputs("ringprof convert: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n\n", stderr);
    usage(stderr);
    return 2;
}

/* ------------------------------------------------------------ time specs -- */

struct time_spec {
    int set, rel;        /* rel: +1 from the start, -1 before the end           */
    uint64_t wall;       /* absolute: CLOCK_REALTIME ns                         */
    uint64_t dur;        /* relative: ns                                        */
};

static int parse_duration(const char *s, uint64_t *ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0 || !isfinite(v))
        return -1;
    double mul;
    if (!strcmp(end, "ns"))
        mul = 1;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "s"))
        mul = 1e9;
    else if (!strcmp(end, "m"))
        mul = 60e9;
    else if (!strcmp(end, "h"))
        mul = 3600e9;
    else
        return -1;
    if (v * mul > 9e18)
        return -1;
    *ns = (uint64_t)llround(v * mul);
    return 0;
}

/* "2026-11-21T06:02:03Z", "2026-11-21 06:02:03.25", always UTC. */
static int parse_wall(const char *s, uint64_t *ns)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = strptime(s, "%Y-%m-%d", &tm);
    if (!p || (*p != 'T' && *p != ' '))
        return -1;
    p = strptime(p + 1, "%H:%M:%S", &tm);
    if (!p)
        return -1;
    uint64_t frac = 0;
    if (*p == '.') {
        uint64_t scale = 100000000;
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += scale * (uint64_t)(*p - '0');
    }
    if (*p == 'Z')
        p++;
    if (*p)
        return -1;
    time_t t = timegm(&tm);
    if (t < 0)
        return -1;
    *ns = (uint64_t)t * 1000000000u + frac;
    return 0;
}

static int parse_time(const char *s, struct time_spec *t)
{
    t->set = 1;
    if (s[0] == '+' || s[0] == '-') {
        t->rel = s[0] == '+' ? 1 : -1;
        return parse_duration(s + 1, &t->dur);
    }
    t->rel = 0;
    return parse_wall(s, &t->wall);
}

/* ------------------------------------------------------------- pre-scans -- */

struct scan {
    uint64_t first, last;      /* wall ns of the earliest and latest sample */
    char *kind;                /* the default kind, if one was found        */
    int has_cpu;
};

static void scan_kinds(struct rp_reader *r, struct scan *sc)
{
    for (uint32_t k = 1; k <= rp_reader_kind_count(r); k++) {
        const struct rp_kind_info *ki = rp_reader_kind(r, k);
        if (!ki || !ki->name)
            continue;
        if (!strcmp(ki->name, "cpu"))
            sc->has_cpu = 1;
        if (!sc->kind)
            sc->kind = strdup(ki->name);
    }
}

/* full: read every event for the time range; else stop at the first sample. */
static void scan_file(const char *path, struct scan *sc, int full)
{
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    if (!r)
        return;
    const char *w = rp_reader_meta(r, RP_META_START_WALL);
    const char *m = rp_reader_meta(r, RP_META_START_MONO);
    uint64_t wall0 = w ? strtoull(w, NULL, 10) : 0, mono0 = m ? strtoull(m, NULL, 10) : 0;
    struct rp_event ev;
    while (rp_reader_next(r, &ev)) {
        if (ev.type != RP_EV_SAMPLE)
            continue;
        if (!full)
            break;
        if (w && m) {
            uint64_t t = wall0 + (ev.u.sample.time - mono0);
            if (!sc->first || t < sc->first)
                sc->first = t;
            if (t > sc->last)
                sc->last = t;
        }
    }
    scan_kinds(r, sc);
    rp_reader_close(r);
}

static uint64_t resolve_time(const struct time_spec *t, const struct scan *sc)
{
    if (!t->set)
        return 0;
    if (!t->rel)
        return t->wall;
    if (t->rel > 0)
        return sc->first + t->dur;
    return sc->last > t->dur ? sc->last - t->dur : 1;
}

/* ---------------------------------------------------------------- output -- */

static const struct rp_format *format_by_name(const char *name)
{
    for (size_t i = 0; i < rp_nformats; i++)
        if (!strcmp(rp_formats[i].name, name))
            return &rp_formats[i];
    return NULL;
}

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

static int compile(regex_t *re, const char *pat, const char *opt)
{
    int rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char msg[256];
        regerror(rc, re, msg, sizeof msg);
        fprintf(stderr, "ringprof convert: %s '%s': %s\n\n", opt, pat, msg);
        usage(stderr);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ main -- */

enum {
    OPT_EVENT = 256, OPT_FORMAT, OPT_FROM, OPT_TO, OPT_THREAD, OPT_INCLUDE, OPT_EXCLUDE,
    OPT_LINES, OPT_BCI, OPT_PER_THREAD, OPT_CUTOFF, OPT_TOP, OPT_METHOD, OPT_VALUE,
    OPT_STRICT, OPT_QUIET
};

struct regexes {
    regex_t thread, include, exclude, method;
    int have_thread, have_include, have_exclude, have_method;
};

static void free_regexes(struct regexes *x)
{
    if (x->have_thread)
        regfree(&x->thread);
    if (x->have_include)
        regfree(&x->include);
    if (x->have_exclude)
        regfree(&x->exclude);
    if (x->have_method)
        regfree(&x->method);
}

int rp_cmd_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"event", 1, 0, OPT_EVENT},     {"format", 1, 0, OPT_FORMAT},
        {"output", 1, 0, 'o'},          {"from", 1, 0, OPT_FROM},
        {"to", 1, 0, OPT_TO},           {"thread", 1, 0, OPT_THREAD},
        {"include", 1, 0, OPT_INCLUDE}, {"exclude", 1, 0, OPT_EXCLUDE},
        {"lines", 0, 0, OPT_LINES},     {"bci", 0, 0, OPT_BCI},
        {"per-thread", 0, 0, OPT_PER_THREAD}, {"cutoff", 1, 0, OPT_CUTOFF},
        {"top", 1, 0, OPT_TOP},         {"method", 1, 0, OPT_METHOD},
        {"value", 1, 0, OPT_VALUE},     {"strict", 0, 0, OPT_STRICT},
        {"quiet", 0, 0, OPT_QUIET},     {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    struct rp_prof_options po = {0};
    struct rp_out_options oo = {0};
    struct time_spec from = {0}, to = {0};
    struct regexes rx = {0};
    const char *format = NULL, *outpath = NULL;
    int strict = 0, rc = 2;
    struct rp_diag_counts diag = {0};
    struct rp_inputs in = {0};
    struct scan sc = {0};
    struct rp_profile *p = NULL;
    char *end;

    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_EVENT: po.event = optarg; break;
        case OPT_FORMAT: format = optarg; break;
        case 'o': outpath = optarg; break;
        case OPT_FROM:
            if (parse_time(optarg, &from) < 0)
                return bad_usage("--from '%s': not a time (2026-11-21T06:02:03Z, +10s, "
                                 "-30s)", optarg);
            break;
        case OPT_TO:
            if (parse_time(optarg, &to) < 0)
                return bad_usage("--to '%s': not a time (2026-11-21T06:02:03Z, +10s, "
                                 "-30s)", optarg);
            break;
        case OPT_THREAD:
            if (rx.have_thread) {
                free_regexes(&rx);
                return bad_usage("%s given twice", "--thread");
            }
            if (compile(&rx.thread, optarg, "--thread") < 0)
                goto usage_fail;
            rx.have_thread = 1;
            break;
        case OPT_INCLUDE:
            if (rx.have_include) {
                free_regexes(&rx);
                return bad_usage("%s given twice", "--include");
            }
            if (compile(&rx.include, optarg, "--include") < 0)
                goto usage_fail;
            rx.have_include = 1;
            break;
        case OPT_EXCLUDE:
            if (rx.have_exclude) {
                free_regexes(&rx);
                return bad_usage("%s given twice", "--exclude");
            }
            if (compile(&rx.exclude, optarg, "--exclude") < 0)
                goto usage_fail;
            rx.have_exclude = 1;
            break;
        case OPT_METHOD:
            if (rx.have_method) {
                free_regexes(&rx);
                return bad_usage("%s given twice", "--method");
            }
            if (compile(&rx.method, optarg, "--method") < 0)
                goto usage_fail;
            rx.have_method = 1;
            break;
        case OPT_LINES: po.granularity = RP_GRAN_LINE; break;
        case OPT_BCI: po.granularity = RP_GRAN_BCI; break;
        case OPT_PER_THREAD: po.per_thread = 1; break;
        case OPT_CUTOFF:
            errno = 0;
            oo.cutoff_pct = strtod(optarg, &end);
            if (end == optarg || *end || errno || !(oo.cutoff_pct >= 0) ||
                oo.cutoff_pct > 100) {
                free_regexes(&rx);
                return bad_usage("--cutoff '%s': a percentage from 0 to 100", optarg);
            }
            break;
        case OPT_TOP: {
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (end == optarg || *end || errno || v == 0 || optarg[0] == '-' ||
                v > SIZE_MAX) {
                free_regexes(&rx);
                return bad_usage("--top '%s': a positive integer", optarg);
            }
            oo.top = (size_t)v;
            break;
        }
        case OPT_VALUE:
            if (!strcmp(optarg, "samples"))
                oo.value_samples = 1;
            else if (strcmp(optarg, "weight")) {
                free_regexes(&rx);
                return bad_usage("--value '%s': 'weight' or 'samples'", optarg);
            }
            break;
        case OPT_STRICT: strict = 1; break;
        case OPT_QUIET: diag.quiet = 1; break;
        case 'h':
            usage(stdout);
            free_regexes(&rx);
            return 0;
        case ':':
            free_regexes(&rx);
            return bad_usage("option '%s' needs an argument", argv[optind - 1]);
        default:
            free_regexes(&rx);
            return bad_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        free_regexes(&rx);
        return bad_usage("%s", "no INPUT given");
    }

    const struct rp_format *fmt = NULL;
    if (format && !(fmt = format_by_name(format))) {
        free_regexes(&rx);
        return bad_usage("unknown format '%s'", format);
    }
    if (!fmt && outpath)
        fmt = format_by_path(outpath);
    if (!fmt)
        fmt = &rp_formats[0];
    if (fmt->binary && !outpath && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "ringprof convert: the %s format is binary: use -o FILE or "
                        "redirect stdout\n", fmt->name);
        free_regexes(&rx);
        return 2;
    }

    int missing = rp_inputs_expand(&in, argc - optind, argv + optind);
    rc = 1;
    if (in.n == 0) {
        fprintf(stderr, "ringprof convert: no input could be read\n");
        goto done_inputs;
    }

    /* Look ahead: the default kind and the recording's time range. */
    int need_range = (from.set && from.rel) || (to.set && to.rel);
    if (!po.event || need_range)
        for (size_t i = 0; i < in.n; i++)
            scan_file(in.paths[i], &sc, need_range);
    if (!po.event && (sc.has_cpu || sc.kind))
        po.event = sc.has_cpu ? "cpu" : sc.kind;
    if (need_range && !sc.first) {
        fprintf(stderr, "ringprof convert: no sample has a wall-clock time, so relative "
                        "--from/--to cannot be placed; ignored\n");
        from.set = from.rel ? 0 : from.set;
        to.set = to.rel ? 0 : to.set;
    }
    po.from_wall = resolve_time(&from, &sc);
    po.to_wall = resolve_time(&to, &sc);

    if (rx.have_thread)
        po.thread_re = &rx.thread;
    if (rx.have_include)
        po.include_re = &rx.include;
    if (rx.have_exclude)
        po.exclude_re = &rx.exclude;
    po.diag = rp_diag_print;
    po.diag_arg = &diag;
    /* What the format needs of the profile (formats.h, RP_FMT_*; pprof work). */
    if (fmt->needs & RP_FMT_THREADS)
        po.per_thread = 1;
    if ((fmt->needs & RP_FMT_LINES) && po.granularity == RP_GRAN_METHOD)
        po.granularity = RP_GRAN_LINE;

    p = rp_prof_new(&po);
    size_t readable = 0;
    for (size_t i = 0; i < in.n; i++) {
        rp_progress(i + 1, in.n, in.paths[i]);
        if (rp_prof_add_file(p, in.paths[i]) == 0)
            readable++;
    }
    rp_progress_done();
    rp_prof_finish(p);

    if (!readable) {
        fprintf(stderr, "ringprof convert: no input could be read\n");
        goto done_prof;
    }
    if (p->nodes[0].total[RP_PV_SAMPLES] == 0) {
        if (p->kind[0])
            fprintf(stderr, "ringprof convert: no samples of kind '%s' kept", p->kind);
        else
            fprintf(stderr, "ringprof convert: no samples kept");
        const char *sep = " (in the inputs:";
        for (size_t k = 0; k < p->nkinds; k++, sep = ",")
            fprintf(stderr, "%s %s %llu", sep, p->kinds[k].name,
                    (unsigned long long)p->kinds[k].samples);
        fprintf(stderr, "%s\n", p->nkinds ? ")" : "");
    }
    if (diag.warnings || diag.fatal)
        fprintf(stderr, "ringprof convert: %llu problem%s in the inputs (%llu segments "
                        "skipped, %llu files unreadable); the profile holds the rest\n",
                (unsigned long long)(diag.warnings + diag.fatal),
                diag.warnings + diag.fatal == 1 ? "" : "s",
                (unsigned long long)p->stats.segments_bad,
                (unsigned long long)p->stats.files_unreadable);

    FILE *out = stdout;
    if (outpath && !(out = fopen(outpath, fmt->binary ? "wb" : "w"))) {
        fprintf(stderr, "ringprof convert: %s: %s\n", outpath, strerror(errno));
        goto done_prof;
    }
    oo.method_re = rx.have_method ? &rx.method : NULL;
    oo.out_path = outpath;
    oo.argc = argc;
    oo.argv = argv;
    oo.title = in.n == 1 ? in.paths[0] : "several inputs";
    int wrc = fmt->fn(out, p, &oo);
    if (fflush(out) != 0 || ferror(out))
        wrc = -1;
    if (wrc != 0)
        fprintf(stderr, "ringprof convert: writing %s: %s\n", outpath ? outpath : "stdout",
                strerror(errno ? errno : EIO));
    if (out != stdout && fclose(out) != 0 && wrc == 0) {
        fprintf(stderr, "ringprof convert: %s: %s\n", outpath, strerror(errno));
        wrc = -1;
    }
    if (wrc != 0)
        rc = 1;
    else if (strict && (missing || diag.warnings || diag.fatal))
        rc = 1;
    else
        rc = 0;

done_prof:
    rp_prof_free(p);
done_inputs:
    free(sc.kind);
    rp_inputs_free(&in);
    free_regexes(&rx);
    return rc;

usage_fail:
    free_regexes(&rx);
    return 2;
}
