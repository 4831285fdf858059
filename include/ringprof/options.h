/*
 * ringprof/options.h — the agent's options: "-agentpath:libringprof.so=key=value,...".
 *
 * rp_options_parse turns the option string into a struct rp_options, or refuses it
 * with one line that names the option and what it accepts, so Agent_OnLoad can fail
 * and the JVM does not start half-profiled. Every option is documented in
 * docs/options.md, and `help` prints the same table to stderr.
 *
 * Pure C, no JVM: the parser is unit-tested and fuzzed on its own. Not
 * async-signal-safe (it allocates nothing, but uses snprintf).
 */
#ifndef RINGPROF_OPTIONS_H
#define RINGPROF_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum rp_engine {
    RP_ENGINE_AUTO = 0,   /* async where libjvm exports AsyncGetCallTrace, else jvmti */
    RP_ENGINE_ASYNC,
    RP_ENGINE_JVMTI
};

/* timer=: where the async engine's per-thread CPU timers come from
 * (src/threads/cputimer.h). */
enum rp_timer_source {
    RP_TIMER_AUTO = 0,    /* perf where perf_event_open allows it, else posix         */
    RP_TIMER_PERF,        /* a perf_event task-clock counter per thread               */
    RP_TIMER_POSIX        /* a POSIX timer on each thread's CPU clock (tick-bound)    */
};

/* vthreads=: which virtual thread samples name (src/flush/vthreads.h). */
enum rp_vthreads_mode {
    RP_VTHREADS_ON = 0,   /* where it costs nothing: the callbacks' thread, and CPU
                           * samples where HotSpot has JavaThread::_monitor_owner_id */
    RP_VTHREADS_MOUNT,    /* and CPU samples elsewhere, by the mount/unmount events */
    RP_VTHREADS_OFF       /* none: samples name their carrier only                */
};

#define RP_OPT_PATH_MAX 1024
/* recording=: the longest recording id (letters, digits, '.', '_', '-'). */
#define RP_OPT_RECORDING_MAX 64

struct rp_options {
    char dir[RP_OPT_PATH_MAX];    /* recording directory; "" = ./ringprof-<pid>      */
    uint64_t interval_ns;         /* CPU sampling period                             */
    enum rp_engine engine;
    uint32_t depth;               /* maximum frames per stack                        */
    int native;                   /* 1: native frames via libunwind                  */
    uint64_t flush_ns;            /* flush (segment) interval                        */
    uint64_t maxsize;             /* retention: bytes of finished chunks             */
    uint64_t maxage_ns;           /* retention: age of finished chunks               */
    uint64_t chunksize;           /* rotate chunks at this size                      */
    uint64_t chunktime_ns;        /* rotate chunks at this age                       */
    uint64_t ring_bytes;          /* per-thread ring capacity (power of two)         */
    int signal;                   /* the CPU-timer signal number                     */
    enum rp_timer_source timer;   /* timer=: the CPU timers' source                  */
    uint64_t alloc_bytes;         /* heap sampling interval; 0: alloc=off            */
    int live;                     /* live=on: track sampled objects until they die   */
    uint64_t live_max;            /* live-table entries                              */
    uint64_t alloc_rate;          /* most allocation samples a second; 0: no limit   */
    int lock;                     /* lock=DURATION given: lock contention recorded   */
    uint64_t lock_ns;             /* its threshold (0: every contended entry)         */
    uint64_t telemetry_ns;        /* telemetry gauges period; 0: telemetry=off        */
    char ctl[RP_OPT_PATH_MAX];    /* control socket path; "" = <dir>/ringprof-<pid>.sock */
    int ctl_off;                  /* ctl=off: no control socket                      */
    uint64_t wall_ns;             /* wall-clock sampling interval; 0: wall=off       */
    uint64_t wall_threads;        /* most threads the wall sampler visits per tick   */
    enum rp_vthreads_mode vthreads; /* vthreads=                                     */
    char service[256];            /* service=: the service the recording is filed    */
                                  /* under (chunk header service.name); "" unset     */
    char labels[RP_OPT_PATH_MAX]; /* labels=: "KEY:VALUE;..." (ringprof/labels.h),   */
                                  /* chunk header labels; "" unset                  */
    int quiet;                    /* quiet=on: no start line on stderr (warnings stay) */
    int help;                     /* "help" was given: print the table, do nothing   */
    char recording[RP_OPT_RECORDING_MAX + 1]; /* recording.id; "": a fresh one   */
    char raw[RP_OPT_PATH_MAX * 2];/* the option string as given, for chunk metadata   */
};

/* The defaults, as documented in docs/options.md. */
void rp_options_defaults(struct rp_options *o);

/*
 * rp_options_parse: parse `s` (NULL or "" means all defaults) into `o`.
 * @return 0, or -1 with one line in `err` (errlen bytes) that names the bad option
 * and the accepted values, e.g.
 *   "ringprof: bad value 'fast' for engine: accepted values are async, jvmti"
 *   "ringprof: unknown option 'intervl' (did you mean 'interval'?); 'help' lists all"
 */
int rp_options_parse(const char *s, struct rp_options *o, char *err, size_t errlen);

/* The option table (name, default, meaning) as text, for `help`. */
void rp_options_print_help(void (*out)(void *arg, const char *line), void *arg);

/* Durations and sizes are read with ringprof/units.h (rp_parse_duration,
 * rp_parse_size): one grammar for options, the control protocol and the tool. */

#endif
