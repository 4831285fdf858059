/*
 * recorder/metanum.h — header metadata numbers (internal to the recorder).
 *
 * Metadata values are text (format.h); the numeric ones (start.mono_ns, ...) are
 * plain decimal. The writer checks the ones a caller passes in, the reader the ones
 * it finds, with the same strict rule: digits only, no sign, no overflow.
 */
#ifndef RINGPROF_METANUM_H
#define RINGPROF_METANUM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* @return 0 with *out set, or -1 if `s` is NULL or not a plain decimal u64. */
static inline int rp_meta_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

#endif
