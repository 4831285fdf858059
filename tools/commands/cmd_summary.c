/*
 * tools/commands/cmd_summary.c — `ringprof summary INPUT...`: what a recording holds.
 *
 * Like `jfr summary`, it reads every chunk once, streaming, into the model
 * (model/summary.h: per recording, its processes and time range, samples and
 * weight per kind, losses, counters, threads, the integrity of every chunk and
 * the figures of allocations, GC, live snapshots, waits and telemetry) and
 * prints each recording (outputs/out_summary.h). This file holds the options,
 * the inputs and that sequence; the exit status says whether anything could be
 * read and, under --strict, whether anything was damaged.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "model/inputs.h"
#include "model/summary.h"
#include "outputs/out_summary.h"
#include "usage.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof summary [options] INPUT...\n"
        "  INPUT          a chunk file (*.rpc), a recording directory, or a glob\n"
        "  --chunks       list every chunk, not only those with problems\n"
        "  --counters     list every counter, not only their groups\n"
        "  --threads N    list the N busiest threads of each recording (default 20)\n"
        "  --strict       exit 1 if any chunk or segment was damaged\n"
        "  --quiet        do not print each problem as it is found\n");
}

struct summary {
    struct out_summary_options o;   /* --chunks, --counters, --threads          */
    int strict;                     /* --strict                                 */
    struct rp_diag_counts diag;     /* the reader's problems; --quiet           */
};

/* @return 0, 2 (usage error, printed) or 3 (--help, printed). */
static int parse_args(struct summary *c, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"chunks", 0, 0, 'c'}, {"counters", 0, 0, 'C'}, {"threads", 1, 0, 't'},
        {"strict", 0, 0, 's'},
        {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    char *end;
    /* From argv[1] again: an earlier call in this process leaves optind behind. */
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': c->o.all_chunks = 1; break;
        case 'C': c->o.each_counter = 1; break;
        case 't':
            errno = 0;
            long top = strtol(optarg, &end, 10);
            if (end == optarg || *end || errno || top < 0)
                return rp_usage_error("summary", "--threads '%s': a number of threads",
                                      optarg);
            c->o.threads = (size_t)top;
            break;
        case 's': c->strict = 1; break;
        case 'q': c->diag.quiet = 1; break;
        case 'h': usage(stdout); return 3;
        default: return rp_usage_getopt("summary", ch, argv, longopts, NULL);
        }
    }
    if (optind == argc)
        return rp_usage_error("summary", "no INPUT given");
    return 0;
}

/* Every recording, one after the other. @return the chunks with a problem. */
static int print_all(const struct summary *c, const struct rp_summary *sum)
{
    int problems = 0;
    for (size_t i = 0; i < sum->nrecs; i++) {
        if (i)
            putchar('\n');
        problems += out_summary_text(stdout, &sum->recs[i], &c->o);
    }
    return problems;
}

int rp_cmd_summary(int argc, char **argv)
{
    struct summary c = {.o = {.threads = 20}};
    int rc = parse_args(&c, argc, argv);
    if (rc)
        return rc == 3 ? 0 : rc;
    struct rp_diag_counts *diag = &c.diag;
    struct rp_inputs in = {.cmd = "summary", .quiet = diag->quiet};
    int missing = rp_inputs_expand(&in, argc - optind, argv + optind);
    struct rp_summary sum = {0};
    for (size_t i = 0; i < in.n; i++) {
        rp_progress(i + 1, in.n, in.paths[i]);
        rp_summary_read(&sum, in.paths[i], diag);
    }
    rp_progress_done();
    rp_summary_rank(&sum);
    int problems = print_all(&c, &sum);
    if (sum.nrecs == 0)
        fprintf(stderr, "ringprof summary: nothing could be read\n");
    if (diag->fatal || diag->warnings || problems || missing)
        fprintf(stderr, "ringprof summary: %llu unreadable file%s, %llu problem%s "
                        "reported, %d input%s with no chunk file (said above)\n",
                (unsigned long long)diag->fatal, diag->fatal == 1 ? "" : "s",
                (unsigned long long)diag->warnings, diag->warnings == 1 ? "" : "s",
                missing, missing == 1 ? "" : "s");
    rp_inputs_free(&in);
    int read_any = sum.nrecs > 0;
    rp_summary_free(&sum);
    if (!read_any)
        return 1;
    return c.strict && (problems || diag->fatal || diag->warnings || missing) ? 1 : 0;
}
