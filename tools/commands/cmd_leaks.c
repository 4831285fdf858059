/*
 * tools/commands/cmd_leaks.c — `ringprof leaks [options] INPUT...`: the allocation
 * sites whose live sampled bytes grow across a recording's live snapshots.
 *
 * The options, the inputs and the sequence: the look-ahead lists the snapshots
 * (tools/model/scan.h), the model picks one recording's and bins them, one
 * profile of kind live over all of them feeds every site's series, and the
 * sites are tested and ranked (model/leaks.h says how and why); then the text
 * or the JSON (outputs/out_leaks.h). When no trend can be computed (no
 * snapshot, several recordings, fewer than 3) it says why and exits 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model/leaks.h"
#include "outputs/out_leaks.h"
#include "query.h"
#include "usage.h"

struct leaks {
    size_t top;              /* --top                                              */
    int json;                /* --json                                             */
    struct rp_query q;       /* the common options, the inputs, the look-ahead     */
    struct rp_leaks m;       /* the model, with its settings (--min-gcs, --alpha,  */
                             /* --min-growth, --by, --all)                         */
};

/* ------------------------------------------------------------------ usage -- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof leaks [options] INPUT...\n"
        "\n"
        "Rank the allocation sites whose live sampled bytes grow across the live\n"
        "snapshots of one recording (the agent's live=on). INPUT is a chunk file, a\n"
        "recording directory or a glob.\n"
        "\n"
        "  --min-gcs N         count objects that survived at least N GCs (default 1;\n"
        "                      0 counts garbage not yet collected too)\n"
        "  --alpha P           significance of the Mann-Kendall trend test, one-sided\n"
        "                      (default 0.01)\n"
        "  --min-growth SIZE   growth over the recording a site must reach: bytes, or\n"
        "                      with k, M, G (default 1M)\n"
        "  --by site|method    a site is the allocation stack and class (default), or\n"
        "                      the allocating method and class\n"
        "  --from T, --to T    the snapshots to look at (as for convert: UTC, +DUR, -DUR)\n"
        "  --thread REGEX      only objects allocated by threads whose name matches\n"
        "  --include REGEX     only stacks with a frame matching REGEX\n"
        "  --exclude REGEX     drop stacks with a frame matching REGEX\n"
        "  --demangle STYLE    native C++/Rust names: short (default), full or none\n"
        "  --top N             rows shown (default 20)\n"
        "  --all               every site examined, with its verdict, not only growing\n"
        "  --json              one JSON object instead of text\n"
        "  --strict            exit 1 if any input was missing or damaged\n"
        "  --quiet             do not print each problem found in the inputs\n"
        "\n"
        "Exit status: 0 done (growing sites or not); 1 nothing could be read, no live\n"
        "snapshot, fewer than 3, or several recordings; 2 usage error.\n"
        "See docs/profiles.md (\"Leaks\") for the statistics.\n");
}

enum {
    OPT_MIN_GCS = RP_QOPT_END, OPT_ALPHA, OPT_MIN_GROWTH, OPT_BY, OPT_TOP, OPT_ALL,
    OPT_JSON
};

/* One of leaks' own options (rp_query_own_fn). */
static int parse_one(void *cmd, int opt, const char *arg)
{
    struct leaks *l = cmd;
    char *end;
    switch (opt) {
    case OPT_MIN_GCS:
        return rp_query_parse_min_gcs(&l->q, arg, &l->m.min_gcs);
    case OPT_ALPHA:
        errno = 0;
        l->m.alpha = strtod(arg, &end);
        if (end == arg || *end || errno || !(l->m.alpha > 0 && l->m.alpha < 1))
            return rp_query_bad_usage(&l->q, "--alpha '%s': a probability between 0 "
                                      "and 1 (0.01)", arg);
        return 0;
    case OPT_MIN_GROWTH:
        if (rp_parse_size(arg, &l->m.min_growth) < 0)
            return rp_query_bad_usage(&l->q, "--min-growth '%s': a size in bytes "
                                      "(1048576, 512k, 1M)", arg);
        return 0;
    case OPT_BY:
        if (strcmp(arg, "site") && strcmp(arg, "method")) {
            static const char *const by[] = {"site", "method"};
            return rp_usage_choice("leaks", "--by", "choice", arg, by, 2);
        }
        l->m.by_method = !strcmp(arg, "method");
        return 0;
    case OPT_TOP:
        if (rp_parse_positive(arg, &l->top) < 0)
            return rp_query_bad_usage(&l->q, "--top '%s': a positive integer", arg);
        return 0;
    case OPT_ALL: l->m.all = 1; return 0;
    default: l->json = 1; return 0;   /* OPT_JSON */
    }
}

/* The options of `leaks`, its own and the common ones. */
static const struct option longopts[] = {
    {"min-gcs", 1, 0, OPT_MIN_GCS}, {"alpha", 1, 0, OPT_ALPHA},
    {"min-growth", 1, 0, OPT_MIN_GROWTH}, {"by", 1, 0, OPT_BY},
    {"top", 1, 0, OPT_TOP},         {"all", 0, 0, OPT_ALL},
    {"json", 0, 0, OPT_JSON},       RP_QUERY_LONGOPTS,
    {0, 0, 0, 0}};

/* ------------------------------------------------------------------- main -- */

/* Why no trend can be computed, on stderr. */
static void say_unpicked(const struct leaks *l, enum rp_leaks_pick why)
{
    const struct rp_scan *sc = &l->q.sc;
    switch (why) {
    case RP_LEAKS_NO_SNAPSHOT:
        fprintf(stderr, "ringprof leaks: no live snapshot in the inputs: the recording "
                        "was made without live=on\n");
        break;
    case RP_LEAKS_RECORDINGS: {
        size_t recs = 0;
        for (size_t r = 0; r < sc->nrecs; r++)
            recs += l->m.in_range[r] != 0;
        fprintf(stderr, "ringprof leaks: the inputs hold live snapshots of %zu "
                        "recordings; leaks reads one recording at a time:", recs);
        for (size_t r = 0; r < sc->nrecs; r++)
            if (l->m.in_range[r])
                fprintf(stderr, " %s (%zu)", sc->recs[r], l->m.in_range[r]);
        fputc('\n', stderr);
        break;
    }
    default:   /* RP_LEAKS_TOO_FEW */
        fprintf(stderr, "ringprof leaks: a trend needs at least 3 live snapshots; the "
                        "%s %zu (the agent writes one per flush: record longer, or "
                        "widen --from/--to)\n",
                l->q.from.set || l->q.to.set ? "time range holds" : "inputs hold",
                l->m.in_range_total);
    }
}

static int run(void *cmd, int argc, char **argv)
{
    struct leaks *l = cmd;
    if (rp_query_inputs(&l->q, argc, argv))
        return 1;
    rp_query_scan(&l->q, RP_SCAN_SNAPSHOTS |
                             (rp_query_need_range(&l->q) ? RP_SCAN_RANGE : 0));
    rp_scan_finish(&l->q.sc);
    if (rp_query_none_readable(&l->q))
        return 1;
    struct rp_prof_options po = {0};
    po.event = RP_KIND_LIVE;
    po.granularity = RP_GRAN_SITE;   /* a site's trace is shown with its lines */
    rp_query_apply(&l->q, &po);
    enum rp_leaks_pick why = rp_leaks_pick(&l->m, &l->q.sc, po.from_wall, po.to_wall);
    if (why != RP_LEAKS_PICKED) {
        say_unpicked(l, why);
        return 1;
    }
    rp_leaks_live_pass(&l->m, &po);
    l->m.p = rp_query_build(&l->q, &po, NULL);
    if (l->m.no_age)
        fprintf(stderr, "ringprof leaks: the live kind has no age_gcs field: counting "
                        "every object, garbage not yet collected included\n");
    rp_query_problems(&l->q, NULL, "the figures hold");
    rp_leaks_analyse(&l->m);
    (l->json ? out_leaks_json : out_leaks_text)(stdout, &l->m, l->top);
    return rp_query_flush_stdout(&l->q) ? 1 : rp_query_status(&l->q);
}

int rp_cmd_leaks(int argc, char **argv)
{
    struct leaks l = {.top = 20, .q = {.cmd = "leaks", .usage = usage},
                      .m = {.min_gcs = 1, .alpha = 0.01, .min_growth = 1u << 20}};
    int rc = rp_query_main(&l.q, argc, argv, longopts, parse_one, run, &l);
    rp_leaks_free(&l.m);
    return rc;
}
