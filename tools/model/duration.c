/*
 * tools/model/duration.c — durations as text (duration.h).
 */
#include "duration.h"

#include <stdio.h>

const char *rp_fmt_duration(double ns, char *buf, size_t cap)
{
    if (ns >= 1e9)
        snprintf(buf, cap, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, cap, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, cap, "%.3f us", ns / 1e3);
    else
        snprintf(buf, cap, "%.0f ns", ns);
    return buf;
}
