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
 * The jfr format (tools/outputs/out_jfr.c) writes with `-o` into a memfd ("%"
 * below), which is then read back: when convert exits 0 the file must be one
 * JFR chunk as tools/outputs/jfr.h describes it. The header's magic, version
 * 2.0 and size (the file's), events framed end to end from byte 68 to that size
 * (each "varint size, varint type", the size counting itself and fitting), the
 * checkpoint and metadata offsets at event starts of types 1 and 0, the
 * metadata last. A reader that met a wrong size or offset would stop there.
 *
 * Besides what ASan and UBSan catch, the tool must answer every input with exit
 * status 0 or 1 (docs: 1 is "nothing could be read" or damage under --strict).
 * The argv here is always valid, so a 2 (usage error) means the tool mistook
 * bad input for bad usage. A tool that exited or aborted on bad input would end
 * the fuzzer's process: libFuzzer reports that as a crash too ("fuzz target
 * exited").
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "../../tools/commands/commands.h"
#include "fuzz_common.h"

#define MAXARGS 16

/* One command line per row; "@" is replaced by the input's path, "%" by the
 * JFR output's (checked after the run). */
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
    /* issue 17: the JFR writer, every kind; and with the filters */
    {"convert", "--quiet", "--format", "jfr", "-o", "%", "@"},
    {"convert", "--quiet", "--format", "jfr", "--from", "+0.1s", "--thread", ".",
     "--exclude", "Z", "-o", "%", "@"},
};

static const char *jfr_path;   /* "%": a memfd of its own, /proc/self/fd/N */
static int jfr_fd = -1;

static int run(const char *const *row, const char *path)
{
    char *argv[MAXARGS + 1];
    int argc = 0;
    for (; argc < MAXARGS && row[argc]; argc++)
        argv[argc] = (char *)(!strcmp(row[argc], "@")   ? path
                              : !strcmp(row[argc], "%") ? jfr_path
                                                        : row[argc]);
    argv[argc] = NULL;
    rp_cmd_fn fn = !strcmp(row[0], "convert") ? rp_cmd_convert
                 : !strcmp(row[0], "summary") ? rp_cmd_summary
                 : !strcmp(row[0], "locks") ? rp_cmd_locks
                 : !strcmp(row[0], "diff") ? rp_cmd_diff : rp_cmd_leaks;
    return fn(argc, argv);
}

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* A JFR varint at p[*at..end): its value, *at moved past it; -1 if cut short. */
static int varint(const uint8_t *p, size_t end, size_t *at, uint64_t *v)
{
    *v = 0;
    for (int i = 0; i < 9; i++) {
        if (*at >= end)
            return -1;
        uint8_t b = p[(*at)++];
        if (i == 8) {
            *v |= (uint64_t)b << 56;
            return 0;
        }
        *v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            return 0;
    }
    return 0;
}

/* The JFR file the last row wrote into jfr_fd: see the top. */
static void check_jfr(size_t row)
{
    struct stat st;
    FUZZ_CHECK(fstat(jfr_fd, &st) == 0, "fstat: %s", strerror(errno));
    size_t len = (size_t)st.st_size;
    uint8_t *p = malloc(len ? len : 1);
    FUZZ_CHECK(p && pread(jfr_fd, p, len, 0) == (ssize_t)len, "reading the jfr output");
    FUZZ_CHECK(len >= 68 && !memcmp(p, "FLR", 4) && be(p + 4, 2) == 2 && be(p + 6, 2) == 0,
               "jfr row %zu: %zu bytes, no JFR 2.0 header", row, len);
    uint64_t size = be(p + 8, 8), cp = be(p + 16, 8), meta = be(p + 24, 8);
    FUZZ_CHECK(size == len, "jfr row %zu: header size %llu, file %zu bytes", row,
               (unsigned long long)size, len);
    int seen_cp = 0, seen_meta = 0;
    size_t at = 68, last = 0;
    while (at < len) {
        size_t start = at;
        uint64_t n, type;
        FUZZ_CHECK(varint(p, len, &at, &n) == 0 && n >= 2 && n <= len - start,
                   "jfr row %zu: event at %zu: bad size %llu (file %zu bytes)", row, start,
                   (unsigned long long)n, len);
        FUZZ_CHECK(varint(p, start + n, &at, &type) == 0,
                   "jfr row %zu: event at %zu: no type within its %llu bytes", row, start,
                   (unsigned long long)n);
        seen_cp |= start == cp && type == 1;
        seen_meta |= start == meta && type == 0;
        last = start;
        at = start + n;
    }
    FUZZ_CHECK(seen_cp && seen_meta && last == meta,
               "jfr row %zu: checkpoint offset %llu (found: %d), metadata offset %llu (found: %d, "
               "last event at %zu)", row, (unsigned long long)cp, seen_cp,
               (unsigned long long)meta, seen_meta, last);
    free(p);
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
    static char path[64];
    jfr_fd = memfd_create("ringprof-fuzz.jfr", 0);
    if (jfr_fd < 0) {
        perror("fuzz_convert: memfd_create");
        exit(1);
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", jfr_fd);
    jfr_path = path;
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
        if (rc == 0 && !strcmp(runs[i][0], "convert") && !strcmp(runs[i][3], "jfr"))
            check_jfr(i);
    }
    return 0;
}
