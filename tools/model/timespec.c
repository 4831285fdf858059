/*
 * tools/model/timespec.c — parsing times, durations and sizes for the commands'
 * options (timespec.h).
 */
#include "timespec.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* "2026-11-21T06:02:03Z", "2026-11-21 06:02:03.25", always UTC. */
static int parse_wall(const char *s, uint64_t *ns)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = strptime(s, "%Y-%m-%d", &tm);
    if (!p || (*p != 'T' && *p != ' '))
        return -1;
    p = strptime(p + 1, "%H:%M:%S", &tm);
    if (!p)
        return -1;
    uint64_t frac = 0;
    if (*p == '.') {
        uint64_t scale = 100000000;
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += scale * (uint64_t)(*p - '0');
    }
    if (*p == 'Z')
        p++;
    if (*p)
        return -1;
    time_t t = timegm(&tm);
    if (t < 0)
        return -1;
    *ns = (uint64_t)t * 1000000000u + frac;
    return 0;
}

int rp_parse_time(const char *s, struct rp_time_spec *t)
{
    t->set = 1;
    if (s[0] == '+' || s[0] == '-') {
        t->rel = s[0] == '+' ? 1 : -1;
        return rp_parse_duration(s + 1, &t->dur);
    }
    t->rel = 0;
    return parse_wall(s, &t->wall);
}

uint64_t rp_resolve_time(const struct rp_time_spec *t, uint64_t first, uint64_t last)
{
    if (!t->set)
        return 0;
    if (!t->rel)
        return t->wall;
    if (t->rel > 0)
        return first + t->dur;
    return last > t->dur ? last - t->dur : 1;
}

int rp_parse_positive(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || errno || v == 0 || s[0] == '-' || v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

void rp_fmt_wall(char *buf, size_t cap, uint64_t ns)
{
    time_t s = (time_t)(ns / 1000000000u);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, cap - n, ".%03uZ", (unsigned)(ns % 1000000000u / 1000000u));
}
