/*
 * tests/fuzz/replay.c — feed files to a fuzz target without libFuzzer.
 *
 *   fuzz_TARGET_replay FILE|DIR...
 *
 * Every regular file named, and every regular file in every directory named
 * (sorted, not recursive), goes through LLVMFuzzerTestOneInput once. This is how
 * tests/fuzz/regressions/ (and the checked-in seeds) are checked in every build
 * configuration, gcc and sanitizers included, not only in the clang fuzz build:
 * a crash, a sanitizer report or a broken FUZZ_CHECK ends the process abnormally
 * and fails the test. Prints "replayed N inputs" and exits 0 otherwise; 2 if a
 * file or directory cannot be read (a missing regression set is an error, not a
 * pass).
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

/* Targets that need no set-up do not define it. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

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
    LLVMFuzzerTestOneInput(in, len);
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
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int total = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
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
