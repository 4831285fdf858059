/*
 * src/core/log.c — "ringprof: ..." lines on stderr, one write(2) each (see log.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

static void vlog(const char *fmt, va_list ap)
{
    static const char prefix[] = "ringprof: ";
    char line[1024];
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    while (len && line[len - 1] == '\n')
        len--;
    line[len++] = '\n';
    char out[sizeof line + sizeof prefix];
    size_t off = 0;
    if (strncmp(line, prefix, sizeof prefix - 1) != 0) {
        memcpy(out, prefix, sizeof prefix - 1);
        off = sizeof prefix - 1;
    }
    memcpy(out + off, line, len);
    ssize_t w = write(STDERR_FILENO, out, off + len);
    (void)w;
}

void rp_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void rp_log_once(int *once, const char *fmt, ...)
{
    if (*once)
        return;
    *once = 1;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}
