/*
 * tools/commands/cmd_diff.c — `ringprof diff [options] BASE NEW` and
 * `ringprof diff [options] --base-from T --base-to T --from T --to T INPUT`:
 * what changed between two profiles of one event kind.
 *
 * Each side is a query of its own (query.h): its inputs, its look-ahead and its
 * time range, with the same event kind, filters and frame normalisation, so the
 * two profiles are built alike and their names compare. With one INPUT the two
 * sides read the same files through two windows: BASE through --base-from and
 * --base-to, NEW through --from and --to. With two, --from and --to apply to
 * both unless --base-from or --base-to give BASE a window of its own (one of
 * them alone leaves BASE unbounded on the other side). A live profile
 * is each side's last snapshot in its window. Each side reads each chunk once
 * (model/inputs.h); two INPUTs that share a chunk are refused unless --overlap
 * allows it, since a profile compared with itself shows no change.
 *
 * The two profiles are joined by name (tools/model/diff.h) and written as a
 * flat table (or JSON), two-column collapsed stacks, or a differential flame
 * graph; pprof writes the two profiles side by side for go tool pprof's own
 * -diff_base. Both -o forms are written through model/outfile.h (pprof's
 * directory held, each file a temporary renamed into place). Exit status as
 * convert's.
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
#include "model/diff.h"
#include "outputs/formats.h"
#include "query.h"
#include "usage.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof diff [options] BASE NEW\n"
        "       ringprof diff [options] --base-from T --base-to T [--from T --to T] INPUT\n"
        "\n"
        "Compare two profiles of one event kind: what NEW spends more or less on than\n"
        "BASE. BASE and NEW are each a chunk file, a recording directory or a glob (quote\n"
        "it); with one INPUT, BASE and NEW are two time windows of it.\n"
        "\n"
        "  --event KIND        cpu, alloc, live, wall, lock, ... (default: cpu, else\n"
        "                      alloc, else the first kind NEW has)\n"
        "  --format F          flat (default), collapsed, html or pprof\n"
        "  -o, --output PATH   write to PATH instead of stdout (pprof: a directory,\n"
        "                      where base.pb.gz and new.pb.gz are written)\n"
        "  --json              flat: one JSON object instead of the table\n"
        "  --top N             flat: rows shown (default 20; --json: all)\n"
        "  --normalize         scale BASE's weights by NEW's total / BASE's, so that\n"
        "                      equal shares compare equal (for recordings of\n"
        "                      different lengths); shares are shown either way\n"
        "  --from T, --to T    NEW's time window, and BASE's unless given below. T is\n"
        "                      UTC (2026-11-21T06:02:03Z), +DUR from the first sample\n"
        "                      or -DUR before the last (+10s, -1.5m)\n"
        "  --base-from T, --base-to T  BASE's time window\n"
        "  --overlap           let BASE and NEW share chunks (refused by default: a\n"
        "                      chunk on both sides shows no change)\n"
        "  --thread REGEX      only threads whose name matches (POSIX ERE)\n"
        "  --include REGEX     only stacks with a frame matching REGEX\n"
        "  --exclude REGEX     drop stacks with a frame matching REGEX\n"
        "  --demangle STYLE    short (default), full or none\n"
        "  --lines             frames are method:line\n"
        RP_NORM_USAGE("strip")
        "  --strict            exit 1 if any input was missing or damaged\n"
        "  --quiet             do not print each problem found in the inputs\n"
        "\n"
        "pprof: go tool pprof -diff_base=DIR/base.pb.gz DIR/new.pb.gz (add -normalize\n"
        "for shares). See docs/tool.md, \"ringprof diff\".\n"
        "\n"
        "Exit status: 0 done; 1 nothing could be read on a side, a side has no\n"
        "sample of the kind, the output could not be written, or --strict and a\n"
        "problem was found; 2 usage error.\n");
}

enum { F_FLAT, F_COLLAPSED, F_HTML, F_PPROF };

struct side {
    const char *label;           /* "base", "new"                                */
    struct rp_query q;           /* inputs, look-ahead, window; NEW's also holds */
                                 /* the options the two share                   */
    struct rp_prof_options po;
    struct rp_snap_choice choice;
    struct rp_profile *p;
};

struct diff {
    struct side s[2];            /* [0] base, [1] new                            */
    const char *event, *outpath;
    int event_found;             /* event is NEW's first kind, not asked for     */
    int format, json, normalize, lines, overlap;
    struct rp_time_spec base_from, base_to;
    struct rp_out_options oo;
    char title[512];             /* "BASE vs NEW", the html page's title          */
};

enum {
    OPT_EVENT = RP_QOPT_END, OPT_FORMAT, OPT_JSON, OPT_TOP, OPT_NORMALIZE,
    OPT_BASE_FROM, OPT_BASE_TO, OPT_LINES, OPT_OVERLAP
};

static int parse_format(struct diff *d, const char *arg)
{
    static const char *const names[] = {"flat", "collapsed", "html", "pprof"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(arg, names[i])) {
            d->format = i;
            return 0;
        }
    return rp_usage_choice("diff", "--format", "format", arg, names, 4);
}

/* One of diff's own options (rp_query_own_fn). */
static int parse_one(void *cmd, int opt, const char *arg)
{
    struct diff *d = cmd;
    switch (opt) {
    case OPT_EVENT: d->event = arg; return 0;
    case OPT_FORMAT: return parse_format(d, arg);
    case 'o': d->outpath = arg; return 0;
    case OPT_JSON: d->json = 1; return 0;
    case OPT_NORMALIZE: d->normalize = 1; return 0;
    case OPT_LINES: d->lines = 1; return 0;
    case OPT_OVERLAP: d->overlap = 1; return 0;
    case OPT_TOP:
        if (rp_parse_positive(arg, &d->oo.top) < 0)
            return rp_query_bad_usage(&d->s[1].q, "--top '%s': a positive integer", arg);
        return 0;
    default:   /* OPT_BASE_FROM, OPT_BASE_TO */
        if (rp_parse_time(arg, opt == OPT_BASE_FROM ? &d->base_from : &d->base_to) < 0)
            return rp_query_bad_usage(&d->s[1].q, opt == OPT_BASE_FROM
                                      ? "--base-from '%s': not a time "
                                        "(2026-11-21T06:02:03Z, +10s, -30s)"
                                      : "--base-to '%s': not a time "
                                        "(2026-11-21T06:02:03Z, +10s, -30s)", arg);
        return 0;
    }
}

/* @return 0, 2 (usage error) or 3 (--help). */
static int parse_args(struct diff *d, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"event", 1, 0, OPT_EVENT},       {"format", 1, 0, OPT_FORMAT},
        {"output", 1, 0, 'o'},            {"json", 0, 0, OPT_JSON},
        {"top", 1, 0, OPT_TOP},           {"normalize", 0, 0, OPT_NORMALIZE},
        {"base-from", 1, 0, OPT_BASE_FROM}, {"base-to", 1, 0, OPT_BASE_TO},
        {"lines", 0, 0, OPT_LINES},       {"overlap", 0, 0, OPT_OVERLAP},
        RP_QUERY_NORM_LONGOPTS,           RP_QUERY_LONGOPTS,
        {0, 0, 0, 0}};
    struct rp_query *q = &d->s[1].q;
    int rc = rp_query_parse(q, argc, argv, ":o:h", longopts, parse_one, d);
    if (rc)
        return rc;
    int ninputs = argc - optind;
    int windows = d->base_from.set || d->base_to.set;
    if (ninputs > 2)
        return rp_query_bad_usage(q, "%s", "too many INPUTs: give BASE and NEW (quote a "
                                  "glob so that the shell does not expand it)");
    if (ninputs == 1 && !windows)
        return rp_query_bad_usage(q, "one INPUT (%s): give BASE and NEW, or --base-from "
                                  "and --base-to for BASE's window of it", argv[optind]);
    if (d->json && d->format != F_FLAT)
        return rp_query_bad_usage(q, "%s", "--json applies to --format flat");
    if (d->format == F_PPROF && !d->outpath)
        return rp_query_bad_usage(q, "%s", "--format pprof writes two files: give -o DIR");
    if (d->format == F_HTML && !d->outpath && isatty(STDOUT_FILENO))
        return rp_query_bad_usage(q, "%s", "--format html: use -o FILE.html or redirect "
                                  "stdout");
    return 0;
}

/* ------------------------------------------------------------- the sides -- */

/* BASE and NEW given apart must not share a chunk, unless --overlap.
 * @return 0, or 2 after printing the usage error. */
static int sides_apart(struct diff *d)
{
    size_t ib = 0, in = 0;
    size_t n = rp_inputs_shared(&d->s[0].q.in, &d->s[1].q.in, &ib, &in);
    if (!n || d->overlap)
        return 0;
    char line[9000];
    snprintf(line, sizeof line, "BASE and NEW share %zu chunk%s, the first %s (in BASE) "
             "and %s (in NEW): compare two recordings, or two windows of one (one INPUT "
             "with --base-from/--base-to), or let them share with --overlap", n,
             n == 1 ? "" : "s", d->s[0].q.in.paths[ib], d->s[1].q.in.paths[in]);
    return rp_query_bad_usage(&d->s[1].q, "%s", line);
}

/* Expand each side's inputs, each chunk once: BASE NEW, or INPUT for both (its
 * duplicates said once, by NEW). @return 0, 1 or 2 (sides_apart). */
static int side_inputs(struct diff *d, int argc, char **argv)
{
    static const char *const cmd[2] = {"diff: base", "diff: new"};
    int two = argc - optind == 2;
    if (two)
        snprintf(d->title, sizeof d->title, "%s vs %s", argv[optind], argv[optind + 1]);
    else
        snprintf(d->title, sizeof d->title, "%s: two windows", argv[optind]);
    for (int i = 0; i < 2; i++) {
        struct side *s = &d->s[i];
        s->q.in.cmd = two ? cmd[i] : "diff";
        s->q.in.quiet = d->s[1].q.diag.quiet || (!two && i == 0);
        s->q.missing = rp_inputs_expand(&s->q.in, 1, argv + optind + (two ? i : 0));
        if (!s->q.in.n) {
            fprintf(stderr, "ringprof diff: %s: no input could be read\n", s->label);
            return 1;
        }
    }
    return two ? sides_apart(d) : 0;
}

static int is_live(const struct diff *d)
{
    return d->event && !strcmp(d->event, RP_KIND_LIVE);
}

/* Each side's look-ahead (time span, snapshots; NEW's also the default kind),
 * then its options: NEW's from the command line, BASE's the same but for the
 * time window. */
static void side_setup(struct diff *d)
{
    struct side *b = &d->s[0], *n = &d->s[1];
    if (!d->event) {
        rp_query_scan(&n->q, RP_SCAN_KINDS);
        d->event = n->q.sc.has_cpu ? "cpu" : n->q.sc.has_alloc ? "alloc" : n->q.sc.kind;
        d->event_found = 1;
    }
    int own = d->base_from.set || d->base_to.set;   /* BASE's window, whole */
    b->q.from = own ? d->base_from : n->q.from;
    b->q.to = own ? d->base_to : n->q.to;
    for (int i = 0; i < 2; i++) {
        struct side *s = &d->s[i];
        unsigned what = (rp_query_need_range(&s->q) ? RP_SCAN_RANGE : 0) |
                        (is_live(d) ? RP_SCAN_SNAPSHOTS : 0);
        if (what)
            rp_query_scan(&s->q, what);
        rp_scan_finish(&s->q.sc);
    }
    n->po.event = d->event;
    n->po.granularity = d->lines ? RP_GRAN_LINE : RP_GRAN_METHOD;
    if (d->format == F_PPROF) {   /* as convert builds pprof (formats.h) */
        n->po.per_thread = 1;
        n->po.granularity = RP_GRAN_LINE;
    }
    rp_query_apply(&n->q, &n->po);
    b->po = n->po;
    b->po.from_wall = rp_resolve_time(&b->q.from, b->q.sc.first, b->q.sc.last);
    b->po.to_wall = rp_resolve_time(&b->q.to, b->q.sc.first, b->q.sc.last);
}

/* Build one side's profile. @return 0, or 1 after printing why there is none,
 * or 2 for an --event that names no kind (a typo: rp_event_check). */
static int side_build(struct diff *d, struct side *s)
{
    if (is_live(d)) {
        if (rp_snap_choose(&s->choice, &s->q.sc, -1, s->po.from_wall, s->po.to_wall) < 0) {
            fprintf(stderr, "ringprof diff: %s: %s\n", s->label, s->choice.note);
            return 1;
        }
        if (!d->s[1].q.diag.quiet)
            fprintf(stderr, "ringprof diff: %s: live snapshot %s\n", s->label,
                    s->choice.note);
        s->po.instant = rp_snap_instant;
        s->po.instant_arg = &s->choice;
    }
    size_t readable;
    s->p = rp_query_build(&s->q, &s->po, &readable);
    if (!readable) {
        fprintf(stderr, "ringprof diff: %s: no input could be read\n", s->label);
        return 1;
    }
    if (s->p->nodes[0].total[RP_PV_SAMPLES])
        return 0;
    const struct rp_profile *p = s->p;
    int seen = 0;
    for (size_t k = 0; k < p->nkinds; k++)
        seen |= d->event && !strcmp(p->kinds[k].name, d->event) && p->kinds[k].samples;
    /* A kind the inputs named is no usage error, even one damage garbled. */
    if (!seen && d->event && !d->event_found && rp_event_check("diff", d->event, p))
        return 2;
    fprintf(stderr, "ringprof diff: %s: %s '%s'", s->label,
            seen ? "no sample left after the filters, of kind" : "the inputs have no kind",
            d->event ? d->event : "?");
    fputs(!seen && rp_print_kinds(stderr, p, " (they hold:", 1, NULL) ? ")\n" : "\n",
          stderr);
    return !seen;   /* a kind that is not there is no profile to compare */
}

/* ---------------------------------------------------------------- output -- */

/* pprof: DIR/base.pb.gz and DIR/new.pb.gz, both in the one directory held
 * (made if missing). @return 0 or 1 (printed). */
static int write_pprof(struct diff *d)
{
    char why[512];
    int dfd = rp_outdir_open(d->outpath, 0777, why, sizeof why);
    if (dfd < 0) {
        fprintf(stderr, "ringprof diff: %s: %s\n", d->outpath, why);
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        char name[32];
        struct rp_outfile o;
        snprintf(name, sizeof name, "%s.pb.gz", d->s[i].label);
        int rc = rp_outfile_openat(&o, dfd, name, why, sizeof why);
        if (rc == 0 && rp_out_pprof(o.f, d->s[i].p, &d->oo) != 0) {
            snprintf(why, sizeof why, "%s", strerror(errno ? errno : EIO));
            rp_outfile_discard(&o);
            rc = -1;
        }
        if (rc == 0)
            rc = rp_outfile_commit(&o, why, sizeof why);
        if (rc) {
            fprintf(stderr, "ringprof diff: %s/%s: %s\n", d->outpath, name, why);
            close(dfd);
            return 1;
        }
    }
    close(dfd);
    if (!d->s[1].q.diag.quiet)
        fprintf(stderr, "ringprof diff: wrote %s/base.pb.gz and %s/new.pb.gz: go tool "
                        "pprof -diff_base=%s/base.pb.gz%s %s/new.pb.gz\n", d->outpath,
                d->outpath, d->outpath, d->normalize ? " -normalize" : "", d->outpath);
    return 0;
}

static int write_output(struct diff *d, int argc, char **argv)
{
    d->oo.argc = argc;
    d->oo.argv = argv;
    d->oo.out_path = d->outpath;
    d->oo.title = d->title;
    if (d->format == F_PPROF)
        return write_pprof(d);
    char why[512];
    struct rp_outfile o = {.f = NULL};
    if (d->outpath && rp_outfile_open(&o, d->outpath, why, sizeof why) != 0) {
        fprintf(stderr, "ringprof diff: %s: %s\n", d->outpath, why);
        return 1;
    }
    FILE *out = d->outpath ? o.f : stdout;
    struct rp_diff j;
    rp_diff_build(&j, d->s[0].p, d->s[1].p, d->normalize);
    int rc = d->format == F_COLLAPSED ? rp_out_diff_collapsed(out, &j)
             : d->format == F_HTML    ? rp_out_diff_html(out, &j, &d->oo)
                                      : rp_out_diff_flat(out, &j, &d->oo, d->json);
    rp_diff_free(&j);
    if (fflush(out) != 0 || ferror(out))
        rc = -1;
    if (rc) {
        fprintf(stderr, "ringprof diff: writing %s: %s\n", d->outpath ? d->outpath : "stdout",
                strerror(errno ? errno : EIO));
        rp_outfile_discard(&o);
        return 1;
    }
    if (d->outpath && rp_outfile_commit(&o, why, sizeof why) != 0) {
        fprintf(stderr, "ringprof diff: %s: %s\n", d->outpath, why);
        return 1;
    }
    return 0;
}

static int run(struct diff *d, int argc, char **argv)
{
    int rc = side_inputs(d, argc, argv);
    if (rc)
        return rc;
    side_setup(d);
    for (int i = 0; i < 2 && !rc; i++)
        rc = side_build(d, &d->s[i]);
    if (rc)
        return rc;
    rp_query_problems(&d->s[1].q, NULL, "the profiles hold");
    if (write_output(d, argc, argv))
        return 1;
    int st = rp_query_status(&d->s[1].q);
    return st ? st : rp_query_status(&d->s[0].q);
}

int rp_cmd_diff(int argc, char **argv)
{
    struct diff d;
    memset(&d, 0, sizeof d);
    d.s[0].label = "base";
    d.s[1].label = "new";
    for (int i = 0; i < 2; i++) {
        d.s[i].q.cmd = "diff";
        d.s[i].q.usage = usage;
    }
    d.s[1].q.norm.hidden_classes = 1;   /* two runs name their lambdas apart */
    int rc = parse_args(&d, argc, argv);
    if (!rc) {
        d.s[0].q.strict = d.s[1].q.strict;
        rc = run(&d, argc, argv);
    } else if (rc == 3) {
        rc = 0;
    }
    for (int i = 0; i < 2; i++) {
        rp_prof_free(d.s[i].p);
        rp_snap_choice_free(&d.s[i].choice);
        rp_query_free(&d.s[i].q);
    }
    return rc;
}
