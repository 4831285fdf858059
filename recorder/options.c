/*
 * recorder/options.c — parsing and validating the agent's option string.
 *
 * The string is "key=value,key=value,...". Each key is looked up in one table that
 * also holds its default, its help text and its parser, so the parser, `help` and
 * docs/options.md cannot drift apart (tests/test_options.c checks the docs list
 * every key of the table). A bad option stops everything with one line that names
 * the option and the values it accepts: an agent that silently ignored
 * "intervl=1ms" would profile at the wrong rate for weeks.
 *
 * Values: durations need a unit (ns, us, ms, s, m or min, h, d), so "interval=10"
 * is refused rather than guessed; sizes take k, m, g (binary) or plain bytes.
 */
#include "ringprof/options.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/labels.h"
#include "ringprof/recording.h"
#include "ringprof/suggest.h"
#include "ringprof/units.h"

#define NS_PER_S 1000000000ull

/* Per-sample ring record overhead and frame size, for the depth/ring cross-check:
 * src/core/sample.h's header, an allocation record's tail and the ring's own framing
 * (56 + 32 + 8), rounded up generously. */
#define RECORD_HEADER_BYTES 128u
#define RECORD_FRAME_BYTES 16u

/* ------------------------------------------------------------- the table -- */

struct opt_def;
typedef int (*opt_parse_fn)(const struct opt_def *d, const char *v, struct rp_options *o);

struct opt_def {
    const char *name;
    const char *def;        /* default, as text (for help and docs)               */
    const char *accepts;    /* what the error message says is accepted            */
    const char *help;
    opt_parse_fn parse;
    uint64_t min, max;      /* bounds for durations and sizes                     */
    size_t offset;          /* where the value goes in struct rp_options          */
};

#define FIELD(f) offsetof(struct rp_options, f)

static int set_u64(struct rp_options *o, size_t off, uint64_t v)
{
    memcpy((char *)o + off, &v, sizeof v);
    return 0;
}

static int parse_dur(const struct opt_def *d, const char *v, struct rp_options *o)
{
    uint64_t ns;
    if (rp_parse_duration(v, &ns) != 0 || ns < d->min || ns > d->max)
        return -1;
    return set_u64(o, d->offset, ns);
}

static int parse_dur_or_off(const struct opt_def *d, const char *v, struct rp_options *o)
{
    if (!strcmp(v, "off") || !strcmp(v, "0"))
        return set_u64(o, d->offset, 0);
    return parse_dur(d, v, o);
}

static int parse_sz(const struct opt_def *d, const char *v, struct rp_options *o)
{
    uint64_t b;
    if (rp_parse_size(v, &b) != 0 || b < d->min || b > d->max)
        return -1;
    return set_u64(o, d->offset, b);
}

static int parse_sz_or_off(const struct opt_def *d, const char *v, struct rp_options *o)
{
    if (!strcmp(v, "off") || !strcmp(v, "0"))
        return set_u64(o, d->offset, 0);
    return parse_sz(d, v, o);
}

static int parse_count(const struct opt_def *d, const char *v, struct rp_options *o)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!isdigit((unsigned char)*v) || *end || errno || n < d->min || n > d->max)
        return -1;
    return set_u64(o, d->offset, n);
}

static int parse_count_or_off(const struct opt_def *d, const char *v, struct rp_options *o)
{
    if (!strcmp(v, "off"))
        return set_u64(o, d->offset, 0);
    return parse_count(d, v, o);
}

static int parse_ring(const struct opt_def *d, const char *v, struct rp_options *o)
{
    uint64_t b;
    if (rp_parse_size(v, &b) != 0 || b < d->min || b > d->max || (b & (b - 1)))
        return -1;
    o->ring_bytes = b;
    return 0;
}

static int parse_dir(const struct opt_def *d, const char *v, struct rp_options *o)
{
    (void)d;
    if (!*v || strlen(v) >= sizeof o->dir)
        return -1;
    strcpy(o->dir, v);
    return 0;
}

/* recording=: an id compared by name and shown in every output, never parsed;
 * the characters keep it one word in a listing and out of the option syntax. */
static int parse_recording(const struct opt_def *d, const char *v, struct rp_options *o)
{
    static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                             "0123456789._-";
    size_t n = strlen(v);
    if (n < d->min || n > d->max || strspn(v, ok) != n)
        return -1;
    memcpy(o->recording, v, n + 1);
    return 0;
}

static int parse_ctl(const struct opt_def *d, const char *v, struct rp_options *o)
{
    (void)d;
    if (!strcmp(v, "off")) {
        o->ctl_off = 1;
        o->ctl[0] = '\0';
        return 0;
    }
    /* A Unix socket path must fit sun_path (108 bytes with its terminator). */
    if (!*v || strlen(v) >= 108)
        return -1;
    strcpy(o->ctl, v);
    o->ctl_off = 0;
    return 0;
}

/* service=: any text of 1 to 255 bytes without control characters (it names the
 * recording in a backend: OTLP's service.name). */
static int parse_service(const struct opt_def *d, const char *v, struct rp_options *o)
{
    (void)d;
    size_t n = strlen(v);
    if (!n || n >= sizeof o->service)
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return -1;
    memcpy(o->service, v, n + 1);
    return 0;
}

/* labels=: ringprof/labels.h's grammar, the one the tool reads back. */
static int parse_labels(const struct opt_def *d, const char *v, struct rp_options *o)
{
    (void)d;
    if (strlen(v) >= sizeof o->labels || rp_labels_check(v))
        return -1;
    strcpy(o->labels, v);
    return 0;
}

static int parse_engine(const struct opt_def *d, const char *v, struct rp_options *o)
{
    (void)d;
    if (!strcmp(v, "async"))
        o->engine = RP_ENGINE_ASYNC;
    else if (!strcmp(v, "jvmti"))
        o->engine = RP_ENGINE_JVMTI;
    else
        return -1;
    return 0;
}

static int parse_depth(const struct opt_def *d, const char *v, struct rp_options *o)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (!isdigit((unsigned char)*v) || *end || errno || n < d->min || n > d->max)
        return -1;
    o->depth = (uint32_t)n;
    return 0;
}

static int parse_onoff(const struct opt_def *d, const char *v, struct rp_options *o)
{
    int on;
    if (!strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes"))
        on = 1;
    else if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no"))
        on = 0;
    else
        return -1;
    memcpy((char *)o + d->offset, &on, sizeof on);
    return 0;
}

/* Signals the JVM itself relies on, or that report faults, are never accepted:
 * SIGSEGV/SIGBUS/SIGILL/SIGFPE (HotSpot's implicit checks and crash handling),
 * SIGQUIT (thread dumps, attach), SIGUSR2 (HotSpot's suspend/resume on Linux),
 * SIGTRAP, SIGPIPE, SIGCHLD, and the uncatchable ones. */
static int allowed_signal(int sig)
{
    if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        return 1;
    return sig == SIGPROF || sig == SIGVTALRM || sig == SIGALRM || sig == SIGUSR1 ||
           sig == SIGURG || sig == SIGWINCH || sig == SIGPWR;
}

static int parse_signal(const struct opt_def *d, const char *v, struct rp_options *o)
{
    static const struct { const char *name; int sig; } names[] = {
        {"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}, {"ALRM", SIGALRM},
        {"USR1", SIGUSR1}, {"URG", SIGURG}, {"WINCH", SIGWINCH}, {"PWR", SIGPWR},
    };
    (void)d;
    const char *n = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
    int sig = -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(n, names[i].name))
            sig = names[i].sig;
    if (sig < 0 && isdigit((unsigned char)*v)) {
        char *end;
        long k = strtol(v, &end, 10);
        sig = *end ? -1 : (int)k;
    }
    if (sig < 0 && !strncmp(n, "RTMIN+", 6) && isdigit((unsigned char)n[6]))
        sig = SIGRTMIN + atoi(n + 6);
    if (sig <= 0 || sig > SIGRTMAX || !allowed_signal(sig))
        return -1;
    o->signal = sig;
    return 0;
}

/* timer=: the CPU timers' source. */
static int parse_timer(const struct opt_def *d, const char *v, struct rp_options *o)
{
    (void)d;
    if (!strcmp(v, "auto"))
        o->timer = RP_TIMER_AUTO;
    else if (!strcmp(v, "perf"))
        o->timer = RP_TIMER_PERF;
    else if (!strcmp(v, "posix"))
        o->timer = RP_TIMER_POSIX;
    else
        return -1;
    return 0;
}

/* lock=: off, or a threshold. "0" alone is refused: elsewhere it means off,
 * here it could as well mean "every wait", so the unit must say ("0ns"). */
static int parse_lock(const struct opt_def *d, const char *v, struct rp_options *o)
{
    uint64_t ns;
    if (!strcmp(v, "off")) {
        o->lock = 0;
        o->lock_ns = 0;
        return 0;
    }
    if (rp_parse_duration(v, &ns) != 0 || (ns && ns < d->min) || ns > d->max)
        return -1;
    o->lock = 1;
    o->lock_ns = ns;
    return 0;
}

/* vthreads=: on, mount, off. */
static int parse_vthreads(const struct opt_def *d, const char *v, struct rp_options *o)
{
    (void)d;
    if (!strcmp(v, "on"))
        o->vthreads = RP_VTHREADS_ON;
    else if (!strcmp(v, "mount"))
        o->vthreads = RP_VTHREADS_MOUNT;
    else if (!strcmp(v, "off"))
        o->vthreads = RP_VTHREADS_OFF;
    else
        return -1;
    return 0;
}

static const struct opt_def defs[] = {
    {"dir", "./ringprof-<pid>", "a directory path of at most 1023 bytes",
     "recording directory (created, mode 0700; only this user or root may write "
     "it)", parse_dir, 0, 0, FIELD(dir)},
    {"interval", "10ms", "a duration from 100us to 10s, e.g. 10ms, 1ms, 500us",
     "CPU sampling period, in CPU time", parse_dur, 100000, 10 * NS_PER_S,
     FIELD(interval_ns)},
    {"engine", "async", "async, jvmti",
     "async: CPU-timer signals + AsyncGetCallTrace; jvmti: portable, "
     "safepoint-biased", parse_engine, 0, 0, FIELD(engine)},
    {"depth", "1024", "a number of frames from 1 to 8192",
     "maximum frames per stack; deeper stacks are marked truncated", parse_depth, 1,
     8192, FIELD(depth)},
    {"native", "on", "on, off", "native frames (DWARF unwind tables) below the Java frames",
     parse_onoff, 0, 0, FIELD(native)},
    {"flush", "1s", "a duration from 10ms to 1h",
     "segment interval: a kill -9 loses at most this much", parse_dur, 10000000,
     3600 * NS_PER_S, FIELD(flush_ns)},
    {"maxsize", "1g", "a size such as 500m or 2g (at least 1m), or off",
     "retention: total bytes of finished chunks kept", parse_sz_or_off, 1u << 20,
     UINT64_MAX, FIELD(maxsize)},
    {"maxage", "7d", "a duration such as 12h or 7d (at least 1min), or off",
     "retention: finished chunks older than this are deleted", parse_dur_or_off,
     60 * NS_PER_S, UINT64_MAX, FIELD(maxage_ns)},
    {"chunksize", "16m", "a size from 64k to 1g",
     "rotate to a new chunk file at this size", parse_sz, 64u << 10, 1u << 30,
     FIELD(chunksize)},
    {"chunktime", "1h", "a duration from 1s to 7d",
     "rotate to a new chunk file at this age", parse_dur, NS_PER_S, 7 * 86400 * NS_PER_S,
     FIELD(chunktime_ns)},
    {"ring", "64k", "a power of two from 4k to 64m",
     "per-thread ring buffer; a full ring drops samples and counts them", parse_ring,
     4u << 10, 64u << 20, FIELD(ring_bytes)},
    {"recording", "a fresh id", "1 to 64 letters, digits, '.', '_' or '-'",
     "the recording id every chunk carries (recording.id) instead of a fresh one; "
     "ringprof record gives each run its own, to tell its chunks from any other",
     parse_recording, 1, RP_OPT_RECORDING_MAX, FIELD(recording)},
    {"ctl", "<dir>/ringprof-<pid>.sock", "a socket path shorter than 108 bytes, or off",
     "control socket for ringprof ctl (docs/control.md)", parse_ctl, 0, 0, FIELD(ctl)},
    {"alloc", "512k", "a size from 1k to 1g, e.g. 512k, or off",
     "allocation sampling: mean bytes allocated between two samples", parse_sz_or_off,
     1u << 10, 1u << 30, FIELD(alloc_bytes)},
    {"live", "off", "on, off",
     "track sampled objects until they are collected: a live-heap profile at every "
     "flush", parse_onoff, 0, 0, FIELD(live)},
    {"allocrate", "off", "a number from 10 to 1000000, or off",
     "allocation sampling: most samples a second; above it the interval is raised "
     "(weights stay right)", parse_count_or_off, 10, 1000000, FIELD(alloc_rate)},
    {"livemax", "65536", "a number from 1 to 16777216",
     "live=on: most sampled objects tracked at once; more are counted (live.untracked)",
     parse_count, 1, 1u << 24, FIELD(live_max)},
    {"lock", "off", "a duration from 1us to 10s, e.g. 10ms, or 0ns (every contended "
     "entry), or off",
     "lock contention: record contended monitor entries that waited at least this "
     "long", parse_lock, 1000, 10 * NS_PER_S, FIELD(lock_ns)},
    {"telemetry", "1s", "a duration from 100ms to 1h, or off",
     "period of the telemetry gauges (process CPU, RSS, heap, GC, threads, classes)",
     parse_dur_or_off, 100000000, 3600 * NS_PER_S, FIELD(telemetry_ns)},
    {"signal", "PROF", "PROF, VTALRM, ALRM, USR1, URG, WINCH, PWR, RTMIN+N or a number",
     "signal used by the CPU timers", parse_signal, 0, 0, FIELD(signal)},
    {"timer", "auto", "auto, perf, posix",
     "async: CPU timers from perf_event task clocks (exact, no tick aliasing) or "
     "POSIX CPU timers (fire on the scheduler tick); auto: perf where allowed",
     parse_timer, 0, 0, FIELD(timer)},
    {"wall", "off", "a duration from 1ms to 10s, e.g. 10ms, 50ms, or off",
     "wall-clock sampling of every thread in any state (docs/engines.md)",
     parse_dur_or_off, 1000000, 10 * NS_PER_S, FIELD(wall_ns)},
    {"wallthreads", "64", "a number from 1 to 65536",
     "wall=: most threads sampled per wall tick; more are taken in turn",
     parse_count, 1, 65536, FIELD(wall_threads)},
    {"vthreads", "on", "on, mount, off",
     "name the virtual thread each sample ran on (JDK 21+): on, where it costs nothing "
     "(allocation and lock samples; CPU samples on JDK 24+); mount, CPU samples on "
     "JDK 21-23 too, through mount events that cost each mount (docs/agent.md)",
     parse_vthreads, 0, 0, FIELD(vthreads)},
    {"service", "the main class or jar", "a name of 1 to 255 bytes without control "
     "characters or commas",
     "the service a backend files the recording under (OTLP service.name)",
     parse_service, 0, 0, FIELD(service)},
    {"labels", "none", "KEY:VALUE;KEY:VALUE (at most 32, no key twice): KEY 1-64 of "
     "A-Za-z0-9_.- starting with a letter or _, VALUE 1-256 printable, no , or ;",
     "labels the tool adds to the recording's profiles (OTLP resource attributes, pprof "
     "sample labels)", parse_labels, 0, 0, FIELD(labels)},
    {"quiet", "off", "on, off",
     "no line on stderr at start naming the recording directory (warnings and errors "
     "are still printed)", parse_onoff, 0, 0, FIELD(quiet)},
};
#define NDEFS (sizeof defs / sizeof defs[0])

void rp_options_defaults(struct rp_options *o)
{
    memset(o, 0, sizeof *o);
    o->interval_ns = 10000000;
    o->engine = RP_ENGINE_AUTO;
    o->depth = 1024;
    o->native = 1;
    o->flush_ns = NS_PER_S;
    o->maxsize = RP_DEFAULT_MAX_SIZE;
    o->maxage_ns = RP_DEFAULT_MAX_AGE_NS;
    o->chunksize = RP_DEFAULT_CHUNK_SIZE;
    o->chunktime_ns = RP_DEFAULT_CHUNK_DURATION_NS;
    o->ring_bytes = 64u << 10;
    o->signal = SIGPROF;
    o->timer = RP_TIMER_AUTO;
    o->alloc_bytes = 512u << 10;
    o->live_max = 65536;
    o->alloc_rate = 0;
    o->telemetry_ns = NS_PER_S;
    o->wall_ns = 0;
    o->wall_threads = 64;
}

/* -------------------------------------------------------------- the parser -- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(err, errlen, "ringprof: ");
    if (k >= 0 && (size_t)k < errlen)
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static int unknown_key(const char *key, char *err, size_t errlen)
{
    struct rp_suggest s;
    rp_suggest_init(&s, key);
    for (size_t i = 0; i < NDEFS; i++)
        rp_suggest_try(&s, defs[i].name);
    const char *best = rp_suggest_best(&s);
    if (best)
        return fail(err, errlen, "unknown option '%s' (did you mean '%s'?); "
                                 "'help' lists all options", key, best);
    return fail(err, errlen, "unknown option '%s'; 'help' lists all options", key);
}

/* The longest value a path option takes (dir: RP_OPT_PATH_MAX - 1; ctl: a Unix
 * socket path, 107), or 0 for options that are not paths. A longer value gets its
 * own message, which names the option and the limit and shows only the start of
 * the value, so it fits any error buffer. */
static size_t path_limit(const struct opt_def *d)
{
    if (d->parse == parse_dir)
        return RP_OPT_PATH_MAX - 1;
    if (d->parse == parse_ctl)
        return 107;
    return 0;
}

static int parse_item(char *item, struct rp_options *o, unsigned *seen, char *err,
                      size_t errlen)
{
    char *eq = strchr(item, '=');
    if (!strcmp(item, "help")) {
        o->help = 1;
        return 0;
    }
    if (eq)
        *eq = '\0';
    for (size_t i = 0; i < NDEFS; i++) {
        if (strcmp(item, defs[i].name))
            continue;
        if (!eq || !eq[1])
            return fail(err, errlen, "option '%s' needs a value: %s=VALUE, where VALUE "
                                     "is %s", item, item, defs[i].accepts);
        if (*seen & (1u << i))
            return fail(err, errlen, "option '%s' is given twice", item);
        *seen |= 1u << i;
        size_t vlen = strlen(eq + 1), limit = path_limit(&defs[i]);
        if (limit && vlen > limit)
            return fail(err, errlen, "%s is too long (%zu bytes, at most %zu%s): %.64s...",
                        item, vlen, limit, defs[i].parse == parse_ctl ? ": a Unix socket "
                        "path must fit in 108 bytes with its NUL" : "", eq + 1);
        if (defs[i].parse(&defs[i], eq + 1, o) != 0)
            return fail(err, errlen, "bad value '%.200s%s' for %s: accepted values are %s",
                        eq + 1, vlen > 200 ? "..." : "", item, defs[i].accepts);
        return 0;
    }
    return unknown_key(item, err, errlen);
}

/* Options that are each valid but not together. */
static int cross_check(const struct rp_options *o, char *err, size_t errlen)
{
    uint64_t need = RECORD_HEADER_BYTES + (uint64_t)o->depth * RECORD_FRAME_BYTES;
    if (need > o->ring_bytes - 8)
        return fail(err, errlen, "depth=%u needs ring of at least %llu bytes "
                                 "(ring=%llu): raise ring or lower depth", o->depth,
                    (unsigned long long)need + 8, (unsigned long long)o->ring_bytes);
    if (o->maxsize && o->chunksize > o->maxsize)
        return fail(err, errlen, "chunksize (%llu) is larger than maxsize (%llu)",
                    (unsigned long long)o->chunksize, (unsigned long long)o->maxsize);
    return 0;
}

int rp_options_parse(const char *s, struct rp_options *o, char *err, size_t errlen)
{
    rp_options_defaults(o);
    if (err && errlen)
        err[0] = '\0';
    if (!s || !*s)
        return 0;
    if (strlen(s) >= sizeof o->raw)
        return fail(err, errlen, "the option string is too long (%zu bytes, at most %zu)",
                    strlen(s), sizeof o->raw - 1);
    strcpy(o->raw, s);
    char buf[sizeof o->raw];
    strcpy(buf, s);
    unsigned seen = 0;
    char *save = NULL;
    for (char *p = buf;; p = NULL) {
        char *item = strtok_r(p, ",", &save);
        if (!item)
            break;
        if (parse_item(item, o, &seen, err, errlen) != 0)
            return -1;
    }
    if (strstr(s, ",,") || s[0] == ',' || s[strlen(s) - 1] == ',')
        return fail(err, errlen, "empty option in '%s' (options are key=value, "
                                 "separated by single commas)", s);
    return cross_check(o, err, errlen);
}

void rp_options_print_help(void (*out)(void *arg, const char *line), void *arg)
{
    char line[512];
    out(arg, "ringprof agent options: -agentpath:/path/libringprof.so=key=value,...");
    for (size_t i = 0; i < NDEFS; i++) {
        snprintf(line, sizeof line, "  %-11s default %-16s %s", defs[i].name,
                 defs[i].def, defs[i].help);
        out(arg, line);
        snprintf(line, sizeof line, "  %-11s accepts %s", "", defs[i].accepts);
        out(arg, line);
    }
    out(arg, "  help       print this table and exit (the JVM does not start)");
    out(arg, "Durations take a unit (ns, us, ms, s, m, h, d); sizes take k, m, g. "
             "docs/options.md has the details.");
}
