/*
 * tools/model/duration.h — a duration as a reader reads it, in the one format the
 * tool's reports share: "1.234 s", "12.345 ms", "456.789 us", "789 ns" (three
 * decimals in the largest unit it reaches; whole ns below a microsecond). Pure,
 * no allocation.
 */
#ifndef RINGPROF_TOOLS_DURATION_H
#define RINGPROF_TOOLS_DURATION_H

#include <stddef.h>

/* Write `ns` nanoseconds into buf (at most cap bytes, terminated). @return buf. */
const char *rp_fmt_duration(double ns, char *buf, size_t cap);

#endif
