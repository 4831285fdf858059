/*
 * tools/model/timespec.h — the time, size and count arguments of the commands that read
 * recordings (`convert`, `leaks`): --from/--to times, durations, byte sizes, --top.
 *
 * A time is absolute UTC ("2026-11-21T06:02:03Z"; a space for the T, a fraction
 * of a second and a missing Z are accepted) or relative to the inputs: "+DUR"
 * after their first sample, "-DUR" before their last. Relative times can only be
 * placed once the inputs were scanned (tools/model/scan.h), so parsing and resolving
 * are two steps. Pure functions; nothing allocates.
 */
#ifndef RINGPROF_TOOLS_TIMESPEC_H
#define RINGPROF_TOOLS_TIMESPEC_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/units.h"   /* rp_parse_duration, rp_parse_size: the shared grammar */

struct rp_time_spec {
    int set, rel;        /* rel: +1 from the start, -1 before the end, 0 absolute */
    uint64_t wall;       /* absolute: CLOCK_REALTIME ns                           */
    uint64_t dur;        /* relative: ns                                          */
};

/* An absolute or relative time into *t (t->set = 1). @return 0 or -1. */
int rp_parse_time(const char *s, struct rp_time_spec *t);

/* The wall-clock ns of `t` for inputs whose samples span [first, last]; 0 when
 * t is not set (unbounded). A relative end before the start resolves to 1. */
uint64_t rp_resolve_time(const struct rp_time_spec *t, uint64_t first, uint64_t last);

/* A positive integer that fits a size_t ("20"; not "0", "-1", "1.5", "2x").
 * @return 0, or -1. */
int rp_parse_positive(const char *s, size_t *out);

/* Format CLOCK_REALTIME ns as "2026-11-21T06:02:03.000Z" into buf. */
void rp_fmt_wall(char *buf, size_t cap, uint64_t ns);

#endif
