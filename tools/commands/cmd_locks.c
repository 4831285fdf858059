/*
 * tools/commands/cmd_locks.c — `ringprof locks [options] INPUT...`: where threads
 * wait for locks.
 *
 * The options, the inputs and the sequence: the look-ahead (the waits written in
 * progress, and the time span for a relative --from/--to), the lock pass, the
 * parked wall pass and, when the inputs have no lock samples, the blocked one
 * (model/locks.h says what each finds), then the text or the JSON
 * (outputs/out_locks.h). The profiles are built as every query builds them
 * (query.h), with the common filters.
 */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "model/locks.h"
#include "outputs/out_locks.h"
#include "query.h"

struct locks {
    struct out_locks_options o;   /* --top, --stacks                             */
    int json;                     /* --json                                      */
    struct rp_query q;            /* the common options, the inputs, look-ahead  */
    struct rp_locks m;            /* the model                                   */
};

/* ------------------------------------------------------------------ usage -- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof locks [options] INPUT...\n"
        "\n"
        "Where threads wait for locks: monitors (synchronized) ranked by the time\n"
        "threads waited to enter them, from the lock samples (the agent's lock=),\n"
        "with each monitor's waiting stacks and the owners that made them wait, and\n"
        "the waits that never ended (a deadlock, a hang) by their wait so far;\n"
        "without lock samples, the wall-clock samples in state blocked; then\n"
        "java.util.concurrent waits, from the wall-clock samples (wall=) in state\n"
        "parked, by the code that asked for the lock or condition, with the classes\n"
        "of the objects parked on and the owners of those that are locks. INPUT is\n"
        "a chunk file, a recording directory or a glob.\n"
        "\n"
        "  --top N             monitors and parked sites shown (default 10)\n"
        "  --stacks N          stacks and owners shown per monitor, blocker classes\n"
        "                      and owners per parked site (default 5)\n"
        "  --from T, --to T    only waits that began in [T_from, T_to) (as for\n"
        "                      convert: UTC, +DUR, -DUR)\n"
        "  --thread REGEX      only waiting threads whose name matches\n"
        "  --include REGEX     only stacks with a frame matching REGEX (the monitor's\n"
        "                      class is the leaf frame of a lock sample)\n"
        "  --exclude REGEX     drop stacks with a frame matching REGEX\n"
        "  --demangle STYLE    native C++/Rust names: short (default), full or none\n"
        "  --json              one JSON object instead of text\n"
        "  --strict            exit 1 if any input was missing or damaged\n"
        "  --quiet             do not print each problem found in the inputs\n"
        "\n"
        "Exit status: 0 done; 1 nothing could be read, or the inputs have neither\n"
        "lock nor wall samples; 2 usage error. See docs/profiles.md (\"Lock\n"
        "contention\").\n");
}

enum { OPT_TOP = RP_QOPT_END, OPT_STACKS, OPT_JSON };

/* One of locks' own options (rp_query_own_fn). */
static int parse_one(void *cmd, int opt, const char *arg)
{
    struct locks *l = cmd;
    switch (opt) {
    case OPT_TOP:
    case OPT_STACKS:
        if (rp_parse_positive(arg, opt == OPT_TOP ? &l->o.top : &l->o.nstacks) < 0)
            return rp_query_bad_usage(&l->q, opt == OPT_TOP
                                      ? "--top '%s': a positive integer"
                                      : "--stacks '%s': a positive integer", arg);
        return 0;
    default: l->json = 1; return 0;   /* OPT_JSON */
    }
}

/* The options of `locks`, its own and the common ones. */
static const struct option longopts[] = {
    {"top", 1, 0, OPT_TOP},         {"stacks", 1, 0, OPT_STACKS},
    {"json", 0, 0, OPT_JSON},       RP_QUERY_LONGOPTS,
    {0, 0, 0, 0}};

/* ------------------------------------------------------------------- main -- */

/* The wall pass of thread state `state`, with the lock pass's options `po`. */
static void build_sites(struct locks *l, struct rp_prof_options po, unsigned state)
{
    rp_locks_sites_pass(&l->m, &po, state);
    rp_locks_sites_rank(&l->m, state, rp_query_build(&l->q, &po, NULL));
}

static int run(void *cmd, int argc, char **argv)
{
    struct locks *l = cmd;
    if (rp_query_inputs(&l->q, argc, argv))
        return 1;
    /* The look-ahead: the waits written in progress (one record stands for each),
     * and the time span when --from/--to is relative to it. */
    rp_query_scan(&l->q, RP_SCAN_WAITS | (rp_query_need_range(&l->q) ? RP_SCAN_RANGE : 0));
    rp_scan_finish(&l->q.sc);
    struct rp_prof_options po = {0};
    po.event = RP_KIND_LOCK;
    rp_query_apply(&l->q, &po);
    rp_locks_lock_pass(&l->m, &po, &l->q.sc);
    l->m.p = rp_query_build(&l->q, &po, NULL);
    if (l->m.p->stats.files == l->m.p->stats.files_unreadable) {
        fprintf(stderr, "ringprof locks: no input could be read\n");
        return 1;
    }
    rp_locks_rank(&l->m);
    build_sites(l, po, RP_TS_PARKED);
    /* Without lock samples the monitor waits are still in the wall samples, as
     * state blocked: by the code that blocked, without monitor or owner. */
    int have_locks = rp_locks_have_locks(&l->m);
    if (!have_locks && l->m.wall_samples)
        build_sites(l, po, RP_TS_BLOCKED);

    rp_query_problems(&l->q, NULL, "the figures hold");
    if (!have_locks)
        fprintf(stderr, "ringprof locks: the inputs have no lock samples; the agent "
                        "records them with lock=DURATION (e.g. lock=10ms)%s\n",
                l->m.blocked.samples ? "; showing the wall-clock samples in state blocked "
                                       "instead" : "");
    (l->json ? out_locks_json : out_locks_text)(stdout, &l->m, &l->o);
    if (rp_query_flush_stdout(&l->q) || (!have_locks && !l->m.wall_samples))
        return 1;
    return rp_query_status(&l->q);
}

int rp_cmd_locks(int argc, char **argv)
{
    struct locks l = {.o = {.top = 10, .nstacks = 5},
                      .q = {.cmd = "locks", .usage = usage}};
    int rc = rp_query_main(&l.q, argc, argv, longopts, parse_one, run, &l);
    rp_locks_free(&l.m);
    return rc;
}
