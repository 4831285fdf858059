/*
 * recorder/units.c — durations and sizes (ringprof/units.h has the grammar).
 *
 * The number is read exactly, as integer and fraction digits, and multiplied in
 * 128-bit arithmetic, so "0.1s" is 100000000 ns and not what a double makes of it.
 */
#include "ringprof/units.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

typedef unsigned __int128 u128;

#define U64_LIMIT ((u128)UINT64_MAX)

/*
 * The value of the number at *sp times `mul`, into *out; *sp is left after the
 * number. @return 0, or -1 when there is no number, the value is not whole, or
 * it is above UINT64_MAX.
 */
static int scaled(const char **sp, uint64_t mul, uint64_t *out)
{
    const char *s = *sp;
    if (*s < '0' || *s > '9')
        return -1;
    u128 whole = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        whole = whole * 10 + (unsigned)(*s - '0');
        if (whole > U64_LIMIT)
            return -1;
    }
    u128 frac = 0, scale = 1;   /* the fraction is frac / scale */
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return -1;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (scale > U64_LIMIT) {   /* digits past 10^-19: only zeros keep it whole */
                if (*s != '0')
                    return -1;
                continue;
            }
            frac = frac * 10 + (unsigned)(*s - '0');
            scale *= 10;
        }
    }
    u128 v = whole * mul;
    if (v > U64_LIMIT || (frac * mul) % scale != 0)
        return -1;
    v += frac * mul / scale;
    if (v > U64_LIMIT)
        return -1;
    *out = (uint64_t)v;
    *sp = s;
    return 0;
}

int rp_parse_duration(const char *s, uint64_t *ns)
{
    static const struct { const char *unit; uint64_t ns; } units[] = {
        {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ull},
        {"m", 60000000000ull}, {"min", 60000000000ull}, {"h", 3600000000000ull},
        {"d", 86400000000000ull},
    };
    if (!s)
        return -1;
    /* The unit follows the number; find where the number ends to read it. */
    const char *u = s;
    while ((*u >= '0' && *u <= '9') || *u == '.')
        u++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(u, units[i].unit) != 0)
            continue;
        const char *p = s;
        uint64_t v;
        if (scaled(&p, units[i].ns, &v) != 0 || p != u)
            return -1;
        *ns = v;
        return 0;
    }
    return -1;
}

int rp_parse_size(const char *s, uint64_t *bytes)
{
    if (!s)
        return -1;
    const char *u = s;
    while ((*u >= '0' && *u <= '9') || *u == '.')
        u++;
    uint64_t mul = 1;
    const char *rest = u;
    switch (*rest) {
    case 'k': case 'K': mul = 1ull << 10; rest++; break;
    case 'm': case 'M': mul = 1ull << 20; rest++; break;
    case 'g': case 'G': mul = 1ull << 30; rest++; break;
    case 't': case 'T': mul = 1ull << 40; rest++; break;
    default: break;
    }
    if (mul > 1 && *rest == 'i')   /* "KiB" reads as "K" */
        rest++;
    if (*rest && strcasecmp(rest, "b") != 0 && strcasecmp(rest, "bytes") != 0)
        return -1;
    const char *p = s;
    uint64_t v;
    if (scaled(&p, mul, &v) != 0 || p != u)
        return -1;
    *bytes = v;
    return 0;
}
