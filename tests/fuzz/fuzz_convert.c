/*
 * tests/fuzz/fuzz_convert.c — the `ringprof` tool on hostile chunk files, in-process.
 *
 * The input is a chunk file. It goes through the subcommands exactly as the
 * command line would call them (tools/commands/commands.h: argv in, exit status out):
 * `convert` in every output format, with the options that switch on the other
 * code paths (per-thread trees, lines and bcis, cutoff, time range, regex
 * filters, the alloc and live kinds with their snapshots, sample counts instead
 * of weights, wall samples by thread state, lock samples, frames grouped by
 * class and package), then `summary`, `leaks`, `locks` (text and JSON) and
 * `diff` (the file against itself, and two windows of it). Output goes to
 * /dev/null (stdout is redirected once, at start-up); --quiet keeps the readers'
 * diagnostics off stderr.
 *
 * Besides what ASan and UBSan catch, the tool must answer every input with exit
 * status 0 or 1 (docs: 1 is "nothing could be read" or damage under --strict).
 * The argv here is always valid, so a 2 (usage error) means the tool mistook
 * bad input for bad usage. A tool that exited or aborted on bad input would end
 * the fuzzer's process: libFuzzer reports that as a crash too ("fuzz target
 * exited").
 */
#include <fcntl.h>
#include <string.h>

#include "../../tools/commands/commands.h"
#include "fuzz_common.h"

#define MAXARGS 16

/* One command line per row; "@" is replaced by the input's path. */
static const char *const runs[][MAXARGS] = {
    {"convert", "--quiet", "--format", "tree", "@"},
    {"convert", "--quiet", "--format", "tree", "--per-thread", "--lines", "--cutoff", "1",
     "@"},
    {"convert", "--quiet", "--format", "tree", "--from", "+0.1s", "--to", "-0.1s", "@"},
    {"convert", "--quiet", "--format", "backtrace", "--top", "3", "@"},
    {"convert", "--quiet", "--format", "backtrace", "--method", "a", "--bci", "@"},
    {"convert", "--quiet", "--format", "flat", "@"},
    {"convert", "--quiet", "--format", "flat", "--event", "alloc", "@"},
    {"convert", "--quiet", "--format", "flat", "--event", "live", "--snapshot", "first",
     "@"},
    {"convert", "--quiet", "--format", "histogram", "@"},
    {"convert", "--quiet", "--format", "collapsed", "--value", "samples", "--include",
     "[a-m]", "--exclude", "Z", "--thread", ".", "@"},
    {"convert", "--quiet", "--format", "collapsed", "--event", "live", "@"},
    {"convert", "--quiet", "--format", "pprof", "@"},
    {"convert", "--quiet", "--format", "pprof", "--event", "alloc", "@"},
    {"convert", "--quiet", "--format", "html", "@"},
    {"summary", "--quiet", "--chunks", "--threads", "5", "@"},
    {"leaks", "--quiet", "--all", "@"},
    {"leaks", "--quiet", "--json", "--by", "method", "--from", "+0s", "@"},
    /* issue 9: wall and lock kinds, thread states, the locks report */
    {"convert", "--quiet", "--format", "collapsed", "--state", "blocked,parked",
     "--state-frames", "@"},
    {"convert", "--quiet", "--format", "flat", "--event", "lock", "@"},
    {"locks", "--quiet", "@"},
    {"locks", "--quiet", "--json", "--stacks", "1", "@"},
    {"convert", "--quiet", "--format", "tree", "--group", "package", "--hidden-classes",
     "strip", "@"},
    {"convert", "--quiet", "--format", "collapsed", "--group", "class", "--lines", "@"},
    {"diff", "--quiet", "--json", "--merge-frame-types", "--base-to", "+0.5s", "--from",
     "+0.5s", "@"},
    {"diff", "--quiet", "--format", "collapsed", "--normalize", "@", "@"},
    {"diff", "--quiet", "--format", "html", "--group", "class", "@", "@"},
};

static int run(const char *const *row, const char *path)
{
    char *argv[MAXARGS + 1];
    int argc = 0;
    for (; argc < MAXARGS && row[argc]; argc++)
        argv[argc] = (char *)(strcmp(row[argc], "@") ? row[argc] : path);
    argv[argc] = NULL;
    rp_cmd_fn fn = !strcmp(row[0], "convert") ? rp_cmd_convert
                 : !strcmp(row[0], "summary") ? rp_cmd_summary
                 : !strcmp(row[0], "locks") ? rp_cmd_locks
                 : !strcmp(row[0], "diff") ? rp_cmd_diff : rp_cmd_leaks;
    return fn(argc, argv);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The profiles are written for real, only not kept. */
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        perror("fuzz_convert: /dev/null");
        exit(1);
    }
    close(fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    if (!path)
        abort();
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int rc = run(runs[i], path);
        fflush(stdout);
        FUZZ_CHECK(rc == 0 || rc == 1, "'ringprof %s ... %s' exited %d", runs[i][0],
                   runs[i][3] ? runs[i][3] : "", rc);
    }
    return 0;
}
