/*
 * tools/commands/query.c — the common options and input sequence of convert,
 * leaks and locks (query.h).
 */
#include "query.h"

#include "usage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rp_query_bad_usage(const struct rp_query *q, const char *fmt, const char *arg)
{
    fprintf(stderr, "ringprof %s: ", q->cmd);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return rp_usage_help_line(q->cmd);
}

int rp_query_parse_min_gcs(const struct rp_query *q, const char *arg, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (end == arg || *end || errno || arg[0] == '-' || v > 1000000)
        return rp_query_bad_usage(q, "--min-gcs '%s': a number of GCs from 0 to 1000000",
                                  arg);
    *out = (unsigned)v;
    return 0;
}

static const char *filter_option(int opt)
{
    switch (opt) {
    case RP_QOPT_THREAD: return "--thread";
    case RP_QOPT_INCLUDE: return "--include";
    case RP_QOPT_EXCLUDE: return "--exclude";
    case RP_QOPT_METHOD: return "--method";
    default: return "--demangle";
    }
}

static const char *const groups[] = {"method", "class", "package"};
static const char *const hidden_choices[] = {"keep", "strip"};

/* One common option. @return 0, 2 (usage error, printed) or 3 (--help). */
static int parse_common(struct rp_query *q, int opt, const char *arg, char **argv,
                        const struct option *longopts)
{
    switch (opt) {
    case RP_QOPT_FROM:
    case RP_QOPT_TO:
        if (rp_parse_time(arg, opt == RP_QOPT_FROM ? &q->from : &q->to) < 0)
            return rp_query_bad_usage(q, opt == RP_QOPT_FROM
                                      ? "--from '%s': not a time (2026-11-21T06:02:03Z, "
                                        "+10s, -30s)"
                                      : "--to '%s': not a time (2026-11-21T06:02:03Z, "
                                        "+10s, -30s)", arg);
        return 0;
    case RP_QOPT_THREAD:
    case RP_QOPT_INCLUDE:
    case RP_QOPT_EXCLUDE:
    case RP_QOPT_METHOD:
    case RP_QOPT_DEMANGLE:
        if (rp_filters_set(&q->fx, q->cmd, filter_option(opt), arg) < 0)
            return rp_usage_help_line(q->cmd);
        return 0;
    case RP_QOPT_GROUP:
        if (rp_norm_parse_group(arg, &q->norm.group) < 0)
            return rp_usage_choice(q->cmd, "--group", "group", arg, groups, 3);
        return 0;
    case RP_QOPT_MERGE_TYPES: q->norm.merge_types = 1; return 0;
    case RP_QOPT_SIGNATURES: q->norm.signatures = RP_SIG_SHOW; return 0;
    case RP_QOPT_HIDDEN:
        if (strcmp(arg, "keep") && strcmp(arg, "strip"))
            return rp_usage_choice(q->cmd, "--hidden-classes", "choice", arg,
                                   hidden_choices, 2);
        q->norm.hidden_classes = !strcmp(arg, "strip");
        return 0;
    case RP_QOPT_STRICT: q->strict = 1; return 0;
    case RP_QOPT_QUIET: q->diag.quiet = 1; return 0;
    case 'h': q->usage(stdout); return 3;
    default: return rp_usage_getopt(q->cmd, opt, argv, longopts, NULL);   /* '?', ':' */
    }
}

int rp_query_parse(struct rp_query *q, int argc, char **argv, const char *shortopts,
                   const struct option *longopts, rp_query_own_fn own, void *cmd)
{
    opterr = 0;
    optind = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int common = (opt >= RP_QOPT_FROM && opt < RP_QOPT_END) || opt == 'h' ||
                     opt == ':' || opt == '?';
        int rc = common ? parse_common(q, opt, optarg, argv, longopts)
                        : own(cmd, opt, optarg);
        if (rc)
            return rc;
    }
    if (optind >= argc)
        return rp_query_bad_usage(q, "%s", "no INPUT given");
    return 0;
}

int rp_query_main(struct rp_query *q, int argc, char **argv, const struct option *longopts,
                  rp_query_own_fn own, rp_query_run_fn run, void *cmd)
{
    int rc = rp_query_parse(q, argc, argv, ":h", longopts, own, cmd);
    rc = rc ? (rc == 3 ? 0 : rc) : run(cmd, argc, argv);
    rp_query_free(q);
    return rc;
}

int rp_query_inputs(struct rp_query *q, int argc, char **argv)
{
    q->in.cmd = q->cmd;
    q->in.quiet = q->diag.quiet;
    q->missing = rp_inputs_expand(&q->in, argc - optind, argv + optind);
    char first[4400];
    size_t other = q->recording && q->in.n
                   ? rp_inputs_keep_recording(&q->in, q->recording, first, sizeof first)
                   : 0;
    if (other && !q->diag.quiet)
        fprintf(stderr, "ringprof %s: --recording %s: left out %zu chunk file%s of other "
                        "recordings, the first %s\n", q->cmd, q->recording, other,
                other == 1 ? "" : "s", first);
    if (q->in.n == 0) {
        fprintf(stderr, "ringprof %s: no input could be read%s%s\n", q->cmd,
                other ? ": no chunk is of recording " : "", other ? q->recording : "");
        return 1;
    }
    return 0;
}

int rp_query_need_range(const struct rp_query *q)
{
    return (q->from.set && q->from.rel) || (q->to.set && q->to.rel);
}

void rp_query_scan(struct rp_query *q, unsigned what)
{
    for (size_t i = 0; i < q->in.n; i++) {
        rp_progress(i + 1, q->in.n, q->in.paths[i]);
        rp_scan_file(&q->sc, q->in.paths[i], what);
    }
    rp_progress_done();
}

int rp_query_none_readable(struct rp_query *q)
{
    if (q->sc.opened)
        return 0;
    for (size_t i = 0; i < q->in.n; i++) {
        struct rp_reader *r = rp_reader_open(q->in.paths[i], rp_diag_print, &q->diag);
        if (r)
            rp_reader_close(r);
    }
    fprintf(stderr, "ringprof %s: no input could be read\n", q->cmd);
    return 1;
}

void rp_query_apply(struct rp_query *q, struct rp_prof_options *po)
{
    po->from_wall = rp_resolve_time(&q->from, q->sc.first, q->sc.last);
    po->to_wall = rp_resolve_time(&q->to, q->sc.first, q->sc.last);
    rp_filters_apply(&q->fx, po);
    po->norm = q->norm;
    po->diag = rp_diag_print;
    po->diag_arg = &q->diag;
}

struct rp_profile *rp_query_build(const struct rp_query *q,
                                  const struct rp_prof_options *po, size_t *readable)
{
    struct rp_profile *p = rp_prof_new(po);
    size_t n = 0;
    for (size_t i = 0; i < q->in.n; i++) {
        rp_progress(i + 1, q->in.n, q->in.paths[i]);
        if (rp_prof_add_file(p, q->in.paths[i]) == 0)
            n++;
    }
    rp_progress_done();
    rp_prof_finish(p);
    if (readable)
        *readable = n;
    return p;
}

void rp_query_problems(const struct rp_query *q, const struct rp_profile *p,
                       const char *holder)
{
    uint64_t n = q->diag.warnings + q->diag.fatal;
    if (!n)
        return;
    fprintf(stderr, "ringprof %s: %llu problem%s in the inputs", q->cmd,
            (unsigned long long)n, n == 1 ? "" : "s");
    if (p)
        fprintf(stderr, " (%llu segments skipped, %llu files unreadable)",
                (unsigned long long)p->stats.segments_bad,
                (unsigned long long)p->stats.files_unreadable);
    fprintf(stderr, "; %s the rest\n", holder);
}

int rp_query_flush_stdout(const struct rp_query *q)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ringprof %s: writing stdout: %s\n", q->cmd, strerror(errno));
        return 1;
    }
    return 0;
}

int rp_query_status(const struct rp_query *q)
{
    return q->strict && (q->missing || q->diag.warnings || q->diag.fatal) ? 1 : 0;
}

void rp_query_free(struct rp_query *q)
{
    rp_scan_free(&q->sc);
    rp_inputs_free(&q->in);
    rp_filters_free(&q->fx);
}

/* The kinds the agent writes (docs/format.md, "Event kinds written by the agent"). */
static const char *const agent_kinds[] = {"cpu", "alloc", RP_KIND_LIVE, "gc", "wall",
                                          "lock", RP_KIND_LOCK_WAITING};
#define N_AGENT_KINDS (sizeof agent_kinds / sizeof agent_kinds[0])

static int is_agent_kind(const char *kind)
{
    for (size_t i = 0; i < N_AGENT_KINDS; i++)
        if (!strcmp(kind, agent_kinds[i]))
            return 1;
    return 0;
}

/* " (did you mean 'alloc'?)": the closest of the agent's kinds, then of the
 * profile's (a file may define very many: only the first RP_KINDS_SHOWN). */
static void suggest_kind(const char *event, const struct rp_profile *p)
{
    const char *names[N_AGENT_KINDS + RP_KINDS_SHOWN];
    size_t n = 0;
    for (size_t i = 0; i < N_AGENT_KINDS; i++)
        names[n++] = agent_kinds[i];
    for (size_t k = 0; p && k < p->nkinds && k < RP_KINDS_SHOWN; k++)
        names[n++] = p->kinds[k].name;
    rp_usage_suggest(stderr, event, strlen(event), names, n);
}

int rp_event_check(const char *cmd, const char *event, const struct rp_profile *p)
{
    if (is_agent_kind(event))
        return 0;
    for (size_t k = 0; p && k < p->nkinds; k++)
        if (!strcmp(p->kinds[k].name, event))
            return 0;
    fprintf(stderr, "ringprof %s: unknown event '%s'", cmd, event);
    suggest_kind(event, p);
    fputs("; the valid names are", stderr);
    for (size_t i = 0; i < N_AGENT_KINDS; i++)
        fprintf(stderr, "%s %s", i ? "," : "", agent_kinds[i]);
    if (p)
        rp_print_kinds(stderr, p, "", 0, is_agent_kind);
    fputc('\n', stderr);
    return rp_usage_help_line(cmd);
}

size_t rp_print_kinds(FILE *f, const struct rp_profile *p, const char *intro, int counts,
                      int (*skip)(const char *kind))
{
    size_t left = 0;
    for (size_t k = 0; k < p->nkinds; k++) {
        const struct rp_prof_kind_seen *ks = &p->kinds[k];
        if (skip && skip(ks->name))
            continue;
        if (left < RP_KINDS_SHOWN && counts)
            fprintf(f, "%s %s %llu", left ? "," : intro, ks->name,
                    (unsigned long long)ks->samples);
        else if (left < RP_KINDS_SHOWN)
            fprintf(f, "%s, %s", left ? "" : intro, ks->name);
        left++;
    }
    if (left > RP_KINDS_SHOWN)
        fprintf(f, " and %zu more", left - RP_KINDS_SHOWN);
    return left;
}
