/*
 * ringprof/clock.h — the clocks the agent, the recorder and the tools read.
 *
 * Every duration ringprof measures (flush intervals, sample times, callback costs,
 * uptime) is CLOCK_MONOTONIC nanoseconds; every time a user sees as a date is
 * CLOCK_REALTIME nanoseconds since the epoch. Both are read with clock_gettime,
 * which POSIX lists as async-signal-safe, so these may be called from the signal
 * handler. Include this header rather than writing a local mono_ns().
 */
#ifndef RINGPROF_CLOCK_H
#define RINGPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on `clock` (CLOCK_MONOTONIC, CLOCK_REALTIME, a thread's CPU clock). */
static inline uint64_t rp_clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC nanoseconds: durations and deadlines. */
static inline uint64_t rp_mono_ns(void)
{
    return rp_clock_ns(CLOCK_MONOTONIC);
}

/* CLOCK_MONOTONIC milliseconds: the control socket's deadlines and timeouts. */
static inline uint64_t rp_mono_ms(void)
{
    return rp_mono_ns() / 1000000u;
}

/* CLOCK_REALTIME nanoseconds since the epoch: times shown as dates. */
static inline uint64_t rp_wall_ns(void)
{
    return rp_clock_ns(CLOCK_REALTIME);
}

#endif
