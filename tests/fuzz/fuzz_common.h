/*
 * tests/fuzz/fuzz_common.h — what the fuzz targets share: the libFuzzer entry
 * points, a file the readers can open that holds the current input, and the
 * check that turns a broken promise into a crash the fuzzer records.
 */
#ifndef RINGPROF_TESTS_FUZZ_COMMON_H
#define RINGPROF_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A promise of the code under test was broken: say which, and abort, so that
 * libFuzzer (or the replay driver, under any sanitizer or none) reports it. */
#define FUZZ_CHECK(cond, ...)                                                   \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__,       \
                    __LINE__, #cond);                                           \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/*
 * fuzz_input_file: the input as a file, for code that takes a path. One memfd,
 * rewritten for every input (no disk, no directory to clean up); its name is
 * /proc/self/fd/N, which the reader opens like any file. @return the path (static), or NULL after printing why.
 */
static inline const char *fuzz_input_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("ringprof-fuzz.rpc", 0);
        if (fd < 0) {
            perror("fuzz: memfd_create");
            return NULL;
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 ||
        (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz: writing the input");
        return NULL;
    }
    return path;
}

#endif
