/*
 * tests/check.h — the few macros every C test here uses.
 *
 * CHECK(cond, fmt, ...) records a failure with file, line and a message, and goes
 * on, so one run shows every broken expectation. REQUIRE stops the test at once
 * (for preconditions whose failure would only cascade). check_exit() prints one
 * summary line and returns the process exit status meson expects (0 pass, 1 fail).
 * The counters are plain ints: tests call CHECK from one thread only.
 */
#ifndef RINGPROF_TESTS_CHECK_H
#define RINGPROF_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int check_count, check_failed;

/* Both macros evaluate `cond` exactly once, so it may have side effects. */
#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!check_report(!!(cond), #cond, __FILE__, __LINE__))                  \
            check_message(__VA_ARGS__);                                          \
    } while (0)

#define REQUIRE(cond, ...)                                                       \
    do {                                                                         \
        if (!check_report(!!(cond), #cond, __FILE__, __LINE__)) {                \
            check_message(__VA_ARGS__);                                          \
            fprintf(stderr, "stopping: a required condition failed\n");          \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* Count one check; on failure print where. @return the condition. */
static inline int check_report(int ok, const char *expr, const char *file, int line)
{
    check_count++;
    if (!ok) {
        check_failed++;
        fprintf(stderr, "%s:%d: CHECK(%s) failed: ", file, line, expr);
    }
    return ok;
}

__attribute__((format(printf, 1, 2)))
static inline void check_message(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* A forked child that runs checks starts from clean counters: call this first. */
static inline void check_reset_in_child(void)
{
    check_count = check_failed = 0;
}

static inline int check_exit(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failed);
    return check_failed ? 1 : 0;
}

#endif
