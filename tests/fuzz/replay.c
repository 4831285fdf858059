/*
 * tests/fuzz/replay.c — feed files to a fuzz target without libFuzzer.
 *
 *   fuzz_TARGET_replay [-rss_limit_mb=N] [-malloc_limit_mb=N] [-timeout=N] FILE|DIR...
 *
 * Every regular file named, and every regular file in every directory named
 * (sorted, not recursive), goes through LLVMFuzzerTestOneInput once. This is how
 * tests/fuzz/regressions/ (and the checked-in seeds) are checked in every build
 * configuration, gcc and sanitizers included, not only in the clang fuzz build:
 * a crash, a sanitizer report or a broken FUZZ_CHECK ends the process abnormally
 * and fails the test. Prints "replayed N inputs" and exits 0 otherwise; 2 if a
 * file or directory cannot be read (a missing regression set is an error, not a
 * pass).
 *
 * The limits are libFuzzer's, under its names, so that an input that blew up
 * memory or time while fuzzing fails its replay too (tests/fuzz/run passes the
 * values it fuzzes with). -rss_limit_mb: the process's peak resident memory
 * while one input runs (VmHWM, reset before each input through
 * /proc/self/clear_refs); over it, the replay names the input and aborts.
 * -malloc_limit_mb: the address space (RLIMIT_AS) in a build without a
 * sanitizer, so that an allocation of gigabytes fails at once instead of
 * filling the machine's memory (the tool then exits "out of memory"); the
 * sanitizers reserve terabytes of address space, so there tests/fuzz/run sets
 * their own max_allocation_size_mb instead. -timeout: CPU seconds for one input
 * (ITIMER_PROF), not wall-clock ones, so that a loaded machine does not make a
 * slow input of a fast one.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "fuzz_common.h"

/* Targets that need no set-up do not define it. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

static long rss_limit_mb, timeout_s;   /* 0: none */
static const char *current;            /* the input being replayed */

static void on_timeout(int sig)
{
    (void)sig;
    static const char m1[] = "replay: timeout: ";
    static const char m2[] = " used more CPU time than -timeout\n";
    if (write(2, m1, sizeof m1 - 1) < 0 || write(2, current, strlen(current)) < 0 ||
        write(2, m2, sizeof m2 - 1) < 0)
        _exit(3);
    abort();
}

/* The process's peak resident memory in MiB (VmHWM); `reset` starts it again
 * from what is resident now. -1 if /proc cannot tell. */
static long peak_rss_mb(int reset)
{
    if (reset) {
        FILE *f = fopen("/proc/self/clear_refs", "w");
        if (!f || fputs("5", f) < 0 || fclose(f) != 0)
            return -1;
        return 0;
    }
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb / 1024;
}

static void run_one(const char *path, const uint8_t *in, size_t len)
{
    current = path;
    int rss = rss_limit_mb && peak_rss_mb(1) == 0;
    if (timeout_s) {
        struct itimerval t = {{0, 0}, {timeout_s, 0}};
        setitimer(ITIMER_PROF, &t, NULL);
    }
    LLVMFuzzerTestOneInput(in, len);
    if (timeout_s) {
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &off, NULL);
    }
    long peak = rss ? peak_rss_mb(0) : -1;
    if (peak > rss_limit_mb) {
        fprintf(stderr, "replay: out of memory: %s took a peak of %ld MiB resident, over "
                        "-rss_limit_mb=%ld\n", path, peak, rss_limit_mb);
        abort();
    }
}

/* -NAME=N: @return 1 and *v set, 0 if arg is not that flag. */
static int flag(const char *arg, const char *name, long *v)
{
    size_t n = strlen(name);
    if (arg[0] != '-' || strncmp(arg + 1, name, n) || arg[n + 1] != '=')
        return 0;
    char *end;
    *v = strtol(arg + n + 2, &end, 10);
    if (*end || *v < 0) {
        fprintf(stderr, "replay: %s: a whole number of %s\n", arg,
                strcmp(name, "timeout") ? "MiB" : "seconds");
        exit(2);
    }
    return 1;
}

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                abort();
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    /* An exact-size copy, so ASan sees a read past the input's end. */
    uint8_t *in = malloc(len ? len : 1);
    if (!in)
        abort();
    memcpy(in, buf, len);
    free(buf);
    run_one(path, in, len);
    free(in);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* @return inputs replayed, or -1. */
static int replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            stat(path, &st) != 0 || !S_ISREG(st.st_mode) || e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        if (!names || !(names[n++] = strdup(path)))
            abort();
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp);
    int done = 0;
    for (size_t i = 0; i < n; i++) {
        if (replay_file(names[i]) < 0)
            done = -1;
        else if (done >= 0)
            done++;
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv)
{
    int first = 1;
    long malloc_limit_mb = 0;
    for (; first < argc; first++)
        if (!flag(argv[first], "rss_limit_mb", &rss_limit_mb) &&
            !flag(argv[first], "malloc_limit_mb", &malloc_limit_mb) &&
            !flag(argv[first], "timeout", &timeout_s))
            break;
    if (first == argc) {
        fprintf(stderr, "usage: %s [-rss_limit_mb=N] [-malloc_limit_mb=N] [-timeout=N] "
                        "FILE|DIR...\n", argv[0]);
        return 2;
    }
#ifndef SANITIZED
    if (malloc_limit_mb) {
        struct rlimit as = {(rlim_t)malloc_limit_mb << 20, (rlim_t)malloc_limit_mb << 20};
        if (setrlimit(RLIMIT_AS, &as) != 0)
            perror("replay: setrlimit(RLIMIT_AS)");
    }
#endif
    if (timeout_s)
        signal(SIGPROF, on_timeout);
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int total = 0, failed = 0;
    for (int i = first; i < argc; i++) {
        struct stat st;
        int k = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                : replay_file(argv[i]) == 0 ? 1 : -1;
        if (k < 0)
            failed = 1;
        else
            total += k;
    }
    fprintf(stderr, "replayed %d input%s\n", total, total == 1 ? "" : "s");
    return failed ? 2 : 0;
}
