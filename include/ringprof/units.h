/*
 * ringprof/units.h — the one grammar for durations and sizes, used by the agent's
 * options (interval=10ms, ring=1m), the control protocol's `set`, and the tool's
 * arguments (--from +1.5s, --min-growth 256k). docs/options.md states it for users.
 *
 *   duration := NUMBER UNIT        UNIT: ns us ms s m min h d   ("m" is minutes)
 *   size     := NUMBER [MULT] [i] [b | B | bytes]
 *                                  MULT: k K m M g G t T, binary (k = 1024)
 *   NUMBER   := DIGITS [ "." DIGITS ]
 *
 * A number starts with a digit (no sign, no space, no exponent). A fraction is
 * accepted when the value it names is a whole number of nanoseconds or bytes
 * ("1.5s", "0.25ms", "1.5M"); one that is not ("1.5ns", "0.3k") is refused, never
 * rounded or truncated. A value above UINT64_MAX is refused.
 *
 * Pure functions: no allocation, no locale, no global state (the agent may call
 * them on any thread; the fuzzers call them directly).
 */
#ifndef RINGPROF_UNITS_H
#define RINGPROF_UNITS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* @return 0 with *ns set, or -1 (and *ns unchanged) when `s` is not a duration. */
int rp_parse_duration(const char *s, uint64_t *ns);

/* @return 0 with *bytes set, or -1 (and *bytes unchanged) when `s` is not a size. */
int rp_parse_size(const char *s, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif
