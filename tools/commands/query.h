/*
 * tools/commands/query.h — what the commands that query chunk files (`convert`,
 * `leaks`, `locks`) share: their common options and the sequence inputs →
 * look-ahead → build → problem summary → exit status. Each command keeps only its
 * own options and what it does with the profiles.
 *
 * The common options are --from, --to, --thread, --include, --exclude,
 * --demangle, --strict and --quiet (RP_QUERY_LONGOPTS), and --method for a
 * command that lists it itself. Their meaning is the same in every command
 * (docs/tool.md); their errors print "ringprof CMD: ..." and the line that
 * says where the help is (usage.h), and make the command exit 2.
 *
 * One command runs at a time on the tool's one thread; getopt's state (optind)
 * is reset by rp_query_parse, so a command can be called again in one process
 * (tests/fuzz does). Allocation failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_QUERY_H
#define RINGPROF_TOOLS_QUERY_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "model/filters.h"
#include "model/inputs.h"
#include "model/profile.h"
#include "model/scan.h"
#include "model/timespec.h"

struct rp_query {
    const char *cmd;              /* "convert": the prefix of every message        */
    void (*usage)(FILE *f);       /* the command's usage text                      */
    struct rp_time_spec from, to; /* --from, --to as given (resolved by _apply)    */
    struct rp_filters fx;         /* --thread, --include, --exclude, --method,     */
                                  /* --demangle                                    */
    int strict;                   /* --strict                                      */
    struct rp_diag_counts diag;   /* problems the reader reported; --quiet         */
    const char *recording;        /* --recording ID (convert): only its chunks     */
    struct rp_inputs in;          /* the chunk files INPUT... named                */
    int missing;                  /* INPUTs that matched nothing                   */
    struct rp_scan sc;            /* the look-ahead (rp_query_scan)                */
    struct rp_frame_norm norm;    /* --group, --merge-frame-types,                 */
                                  /* --hidden-classes (the command sets defaults)  */
};

/* The common options' getopt_long values; a command numbers its own from
 * RP_QOPT_END. */
enum {
    RP_QOPT_FROM = 256, RP_QOPT_TO, RP_QOPT_THREAD, RP_QOPT_INCLUDE, RP_QOPT_EXCLUDE,
    RP_QOPT_METHOD, RP_QOPT_DEMANGLE, RP_QOPT_STRICT, RP_QOPT_QUIET,
    RP_QOPT_GROUP, RP_QOPT_MERGE_TYPES, RP_QOPT_HIDDEN, RP_QOPT_SIGNATURES,
    RP_QOPT_END
};

/* The common options' rows of a command's getopt_long table (without --method). */
#define RP_QUERY_LONGOPTS                                                          \
    {"from", 1, 0, RP_QOPT_FROM},       {"to", 1, 0, RP_QOPT_TO},                  \
    {"thread", 1, 0, RP_QOPT_THREAD},   {"include", 1, 0, RP_QOPT_INCLUDE},        \
    {"exclude", 1, 0, RP_QOPT_EXCLUDE}, {"demangle", 1, 0, RP_QOPT_DEMANGLE},      \
    {"strict", 0, 0, RP_QOPT_STRICT},   {"quiet", 0, 0, RP_QOPT_QUIET},            \
    {"help", 0, 0, 'h'}

/* The frame normalisation options (model/frame_norm.h), for the commands that
 * show stacks (convert, diff): --group method|class|package,
 * --merge-frame-types, --hidden-classes keep|strip, --signatures. Into
 * rp_query.norm. */
#define RP_QUERY_NORM_LONGOPTS                                                     \
    {"group", 1, 0, RP_QOPT_GROUP}, {"merge-frame-types", 0, 0, RP_QOPT_MERGE_TYPES}, \
    {"hidden-classes", 1, 0, RP_QOPT_HIDDEN}, {"signatures", 0, 0, RP_QOPT_SIGNATURES}

/* Their lines of a usage text; DEFAULT_HIDDEN is the command's --hidden-classes
 * default, "keep" or "strip". */
#define RP_NORM_USAGE(DEFAULT_HIDDEN)                                              \
    "  --group G           frames are methods (default), or Java frames are their\n" \
    "                      class or package (consecutive equal ones merge;\n"     \
    "                      native, kernel and marker frames stay)\n"              \
    "  --merge-frame-types a method's interpreted, JIT and inlined frames are one\n" \
    "  --signatures        overloads apart, named with their parameter lists\n"   \
    "                      (default: one method per class and name)\n"           \
    "  --hidden-classes H  strip lambda and hidden-class addresses\n"             \
    "                      (Foo$$Lambda$14/0x... -> Foo$$Lambda) or keep them\n"  \
    "                      (default: " DEFAULT_HIDDEN ")\n"

/* Print "ringprof CMD: " and fmt with `arg`, then the help line (usage.h), on
 * stderr. @return 2, the exit status of a usage error. */
int rp_query_bad_usage(const struct rp_query *q, const char *fmt, const char *arg);

/* --min-gcs N (leaks, convert): a number of GCs from 0 to 1000000 into *out.
 * @return 0, or 2 after printing the usage error. */
int rp_query_parse_min_gcs(const struct rp_query *q, const char *arg, unsigned *out);

/* A command's own option: @return 0, or 2 after printing the usage error
 * (rp_query_bad_usage). */
typedef int (*rp_query_own_fn)(void *cmd, int opt, const char *arg);

/*
 * rp_query_parse: read argv with getopt_long(shortopts, longopts), the common
 * options into q and every other into own(cmd, opt, optarg); then require at
 * least one INPUT (argv[optind...]). --help prints the usage on stdout.
 * @return 0, 2 (usage error, printed) or 3 (--help given: exit 0).
 */
int rp_query_parse(struct rp_query *q, int argc, char **argv, const char *shortopts,
                   const struct option *longopts, rp_query_own_fn own, void *cmd);

/* A query command's run once its options are parsed: @return its exit status. */
typedef int (*rp_query_run_fn)(void *cmd, int argc, char **argv);

/* A query command from argv to its exit status: rp_query_parse with shortopts
 * ":h", `longopts` and `own`, then run(cmd, argc, argv) when they parse; q is
 * released (rp_query_free) before it returns. @return run's status, 0 after
 * --help, 2 after a usage error (printed). */
int rp_query_main(struct rp_query *q, int argc, char **argv, const struct option *longopts,
                  rp_query_own_fn own, rp_query_run_fn run, void *cmd);

/* Expand INPUT... (argv[optind...]) into q->in, each chunk once (model/inputs.h:
 * copies are left out with one line, "ringprof CMD: left out ...", unless
 * --quiet), and with q->recording keep only that recording's chunks, saying in
 * one line (unless --quiet) how many others were left out. @return 0, or 1 after
 * printing "no input could be read" when no file is left. */
int rp_query_inputs(struct rp_query *q, int argc, char **argv);

/* Whether --from or --to is relative to the inputs' time span (+DUR, -DUR), so
 * the look-ahead must find it (RP_SCAN_RANGE). */
int rp_query_need_range(const struct rp_query *q);

/* One look-ahead pass over every input for what `what` asks (RP_SCAN_*), with
 * progress on a terminal. Call rp_scan_finish(&q->sc) after the last pass. */
void rp_query_scan(struct rp_query *q, unsigned what);

/* After a look-ahead: when it could open no input, print each file's reason (as
 * the real pass does: "not a ringprof chunk", ...) and "ringprof CMD: no input
 * could be read", so that a command does not blame the recording's options for
 * what is not a recording. @return 1 then, else 0. */
int rp_query_none_readable(struct rp_query *q);

/* Set the time range (resolved against the look-ahead's span), the filters, the
 * frame normalisation and the problem reporting (into q->diag) in `po`. */
void rp_query_apply(struct rp_query *q, struct rp_prof_options *po);

/* Stream every input into a new, finished profile built as `po` says, with
 * progress on a terminal. @return it (the caller frees it with rp_prof_free);
 * *readable (may be NULL) counts the files that could be opened. */
struct rp_profile *rp_query_build(const struct rp_query *q,
                                  const struct rp_prof_options *po, size_t *readable);

/* When the reader reported problems: "ringprof CMD: N problem(s) in the inputs
 * (S segments skipped, F files unreadable); HOLDER the rest", the parenthesis
 * only with a profile `p` to count them in; holder: "the profile holds". */
void rp_query_problems(const struct rp_query *q, const struct rp_profile *p,
                       const char *holder);

/* fflush(stdout). @return 0, or 1 after printing why writing stdout failed. */
int rp_query_flush_stdout(const struct rp_query *q);

/* The exit status of a query that ran: 1 under --strict when an INPUT matched
 * nothing or the reader reported problems, else 0. */
int rp_query_status(const struct rp_query *q);

void rp_query_free(struct rp_query *q);

/*
 * rp_event_check: whether `event` (--event) names a kind: one the agent writes
 * (cpu, alloc, live, gc, wall, lock, lock.waiting; docs/format.md) or, since the format fixes
 * no kinds, one the profile `p` holds (p may be NULL: before anything is read).
 * @return 0, or 2 after printing "ringprof CMD: unknown event 'E'" and the valid
 * names on stderr: a typo is a usage error, not an empty profile.
 */
int rp_event_check(const char *cmd, const char *event, const struct rp_profile *p);

/*
 * rp_print_kinds: for a one-line message on `f`, the kinds `p` holds after
 * `intro`: " cpu 120, alloc 7" with their samples (`counts`), or ", name" each
 * without. At most RP_KINDS_SHOWN, then " and N more": a file may define
 * hundreds of thousands of kinds, and the line must stay one to read. `skip`, if
 * not NULL, leaves out the kinds it returns 1 for. Prints nothing (not even
 * `intro`) when no kind is left; @return how many were left.
 */
#define RP_KINDS_SHOWN 20
size_t rp_print_kinds(FILE *f, const struct rp_profile *p, const char *intro, int counts,
                      int (*skip)(const char *kind));

#endif
