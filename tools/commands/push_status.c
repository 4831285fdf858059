/*
 * tools/commands/push_status.c — what `ringprof push` says: a status line on a
 * terminal (what was sent, what is pending, the last error), news lines above it,
 * and the summary the run ends with.
 *
 * Everything goes to stderr; stdout stays free. The status line is redrawn in
 * place and only when stderr is a terminal (not with --quiet); a news line
 * takes it off first and puts it back after. No line holds a secret: the
 * credentials never reach this file (push_http.h).
 *
 * The tool's one thread.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "push_cmd.h"

void rp_push_status_clear(struct push *x)
{
    if (x->status_shown) {
        fputs("\r\033[K", stderr);
        x->status_shown = 0;
    }
}

static void fmt_bytes(char *buf, size_t cap, uint64_t b)
{
    if (b >= 10ull << 20)
        snprintf(buf, cap, "%.1f MB", (double)b / 1e6);
    else if (b >= 10ull << 10)
        snprintf(buf, cap, "%.1f kB", (double)b / 1e3);
    else
        snprintf(buf, cap, "%" PRIu64 " B", b);
}

void rp_push_summary(const struct push *x, char *buf, size_t cap)
{
    char bytes[32];
    fmt_bytes(bytes, sizeof bytes, x->n.bytes);
    int k = snprintf(buf, cap, "%" PRIu64 " chunk%s sent (%" PRIu64 " request%s, %s)",
                     x->n.chunks, x->n.chunks == 1 ? "" : "s", x->n.requests,
                     x->n.requests == 1 ? "" : "s", bytes);
    const struct { const char *what; uint64_t v; } more[] = {
        {"without samples", x->n.empty}, {"pending", x->n.pending},
        {"retries", x->n.retries}, {"rejected", x->n.rejected},
        {"missing", x->n.missing}, {"unreadable", x->n.unreadable},
        {"not sent", x->n.skipped}, {"being written", x->n.writing}};
    for (size_t i = 0; i < sizeof more / sizeof more[0] && k > 0 && (size_t)k < cap; i++)
        if (more[i].v || i == 1)
            k += snprintf(buf + k, cap - (size_t)k, ", %" PRIu64 " %s", more[i].v,
                          more[i].what);
}

void rp_push_status_show(struct push *x)
{
    if (!x->tty || x->quiet)
        return;
    char s[512];
    rp_push_summary(x, s, sizeof s);
    rp_push_status_clear(x);
    fprintf(stderr, "ringprof push: %s%s%.120s", s, x->last_error[0] ? "; last: " : "",
            x->last_error);
    x->status_shown = 1;
}

void rp_push_say(struct push *x, const char *fmt, ...)
{
    rp_push_status_clear(x);
    va_list ap;
    va_start(ap, fmt);
    fputs("ringprof push: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    rp_push_status_show(x);
}
