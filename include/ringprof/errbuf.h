/*
 * ringprof/errbuf.h — the error-buffer convention of the agent and the tools.
 *
 * A function that can fail takes `char *err, size_t errlen` and, when it fails,
 * returns -1 with one sentence in err (what was wrong and, where it helps, what
 * is accepted), cut to errlen bytes. rp_fail writes that sentence and returns -1,
 * so a check reads `return rp_fail(err, errlen, "...", ...);`. errlen 0 writes
 * nothing. Not async-signal-safe (vsnprintf).
 */
#ifndef RINGPROF_ERRBUF_H
#define RINGPROF_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 3, 4)))
static inline int rp_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif
