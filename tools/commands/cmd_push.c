/*
 * tools/commands/cmd_push.c — `ringprof push`: finished chunk files to an
 * OpenTelemetry (OTLP/HTTP) or Grafana Pyroscope backend, once, or as a
 * sidecar that follows a recording directory (docs/fleet.md).
 *
 * The JVM never waits for this: the agent writes chunk files and push, a
 * process of its own, reads them. A chunk is the unit of delivery. Each is cut
 * into requests (push_body.h: per kind and --period window, bodies from the
 * same writers as `convert`), shaped for the backend (push_target.h) and sent
 * one at a time over libcurl (push_http.h). With --follow, the directory is
 * watched (push_dir.h), chunks go in the order the agent finished them, and
 * what was answered is remembered after every answer (push_state.h), so a
 * restart neither sends a chunk again nor skips one.
 *
 * Failures: no answer, 408, 429 and 5xx are retried with capped exponential
 * backoff and jitter (Retry-After is honoured up to the cap), until answered
 * (--follow: the chunk's bodies are in memory, so its file may go meanwhile) or
 * for as long as --retry-for allows (--once, or files given); push deletes
 * nothing. Any other answer is a rejection: said once, with the chunk and the
 * server's words, counted, never sent again. A chunk deleted by retention
 * before push could read it shows as a gap in its recording's seqs: counted as
 * missing and said. At SIGTERM a --follow sends the chunks finished by then
 * first, for at most --drain.
 *
 * Secrets (--token-file, --basic-auth-file, or the environment) go to
 * push_http and nowhere else: no message, status line, state or dry-run file
 * holds them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "commands.h"
#include "usage.h"
#include "model/inputs.h"
#include "model/timespec.h"
#include "model/xalloc.h"
#include "push_body.h"
#include "push_dir.h"
#include "push_http.h"
#include "push_state.h"
#include "push_target.h"

/* Defaults (docs/fleet.md says why each). */
#define DEF_CONNECT_NS   (10ull * 1000000000ull)
#define DEF_TIMEOUT_NS   (60ull * 1000000000ull)
#define DEF_BACKOFF_MIN  (1ull * 1000000000ull)
#define DEF_BACKOFF_MAX  (60ull * 1000000000ull)
#define DEF_RETRY_FOR    (300ull * 1000000000ull)
#define DEF_RESCAN_NS    (10ull * 1000000000ull)
#define DEF_DRAIN_NS     (10ull * 1000000000ull)
#define MIN_PERIOD_NS    (1000000000ull)

enum { EXIT_GAVE_UP = 3 };

/* SIGTERM, SIGINT and SIGHUP received: the first stops push (after --drain, in
 * --follow), the second at once. */
static volatile sig_atomic_t signals;

static void on_stop(int sig)
{
    (void)sig;
    if (signals < 2)
        signals++;
}

struct counts {
    uint64_t chunks, empty, requests, bytes, retries, rejected, missing, unreadable,
             skipped, pending, writing;
};

struct push {
    /* options */
    const char *follow, *state_path, *proto, *format, *dry_run, *url;
    const char *token_file, *basic_file, *cacert;
    int once, verbose, quiet, per_thread;
    uint64_t period, connect, timeout, backoff_min, backoff_max, retry_for, rescan, drain;
    char *events_arg;
    struct rp_push_target t;
    struct rp_push_body_options bo;
    /* running */
    struct rp_http *http;
    struct rp_push_state st;
    struct rp_push_dir dir;
    int dry_fd;
    uint64_t dry_seq;
    struct rp_push_chunk cur;        /* the chunk being sent                  */
    struct counts n;
    char last_error[1024];
    uint64_t delay;                  /* the backoff's current step            */
    unsigned failures;               /* in a row                              */
    uint64_t failing_since;
    uint64_t rng;
    int tty, status_shown;
    int auth;                        /* 1 a bearer token, 2 basic: which, only */
    int may_drain;                   /* --follow without --once, --drain > 0   */
    uint64_t drain_until;            /* when a drain ends (0: none begun)       */
    int drain_said;
    const char **labels;             /* --label as given, for the writers      */
    char **done;                     /* INPUT: "recording/seq" sent this run   */
    size_t ndone;
};

/* ---------------------------------------------------------------- usage -- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof push [options] URL INPUT...\n"
        "       ringprof push --follow DIR [options] URL\n"
        "\n"
        "Send finished chunk files to an OpenTelemetry (OTLP/HTTP) or Grafana\n"
        "Pyroscope backend. With INPUT (files, directories, globs) each chunk is sent\n"
        "once; with --follow, every chunk the agent finishes in DIR is sent once, and\n"
        "what was sent is remembered across restarts (docs/fleet.md).\n"
        "\n"
        "  URL                 http:// or https://: OTLP's base (its path ends in\n"
        "                      " RP_PUSH_OTLP_PATH " or its port is 4318) or\n"
        "                      Pyroscope's (" RP_PUSH_PYROSCOPE_PATH ", or port 4040)\n"
        "  --protocol P        otlp or pyroscope, where the URL does not tell\n"
        "  --format F          Pyroscope: pprof (default) or jfr\n"
        "  --follow DIR        follow the recording directory DIR (a sidecar)\n"
        "  --once              with --follow: send what DIR holds, then exit\n"
        "  --state FILE        with --follow: what was sent (default\n"
        "                      DIR/" RP_PUSH_STATE_NAME ")\n"
        "  --period DUR        one profile per DUR of each chunk, each with its own\n"
        "                      time range (default: one per chunk; at least 1s)\n"
        "  --event LIST        kinds to send, comma-separated (default\n"
        "                      " RP_PUSH_DEFAULT_EVENTS "; a jfr body holds every kind)\n"
        "  --service NAME      the service the profiles are of (default: the agent's\n"
        "                      service=, else the JVM's main class or jar)\n"
        "  --label K=V         a label on every profile (repeatable; wins over the\n"
        "                      agent's labels= of the same key)\n"
        "  --per-thread        Pyroscope pprof: keep each sample's thread label\n"
        "                      (Pyroscope makes each thread a series of its own)\n"
        "  --tenant ID         X-Scope-OrgID, for a multi-tenant backend\n"
        "  --header 'K: V'     one more header (repeatable; no credentials)\n"
        "  --token-file FILE   a bearer token (else $" RP_PUSH_ENV_TOKEN ")\n"
        "  --basic-auth-file FILE  user:password for basic authentication (else\n"
        "                      $" RP_PUSH_ENV_BASIC_AUTH ")\n"
        "  --cacert FILE       trust these CA certificates (PEM), not the system's\n"
        "  --connect-timeout DUR  for the connection, TLS included (default 10s)\n"
        "  --timeout DUR       for a whole request (default 60s)\n"
        "  --backoff-min DUR   the first retry's delay (default 1s); it doubles up\n"
        "  --backoff-max DUR   to this (default 1m), with jitter\n"
        "  --retry-for DUR     INPUT and --once: give up retrying after DUR\n"
        "                      (default 5m); --follow retries until it is answered\n"
        "  --rescan DUR        --follow: list DIR at least this often (default 10s)\n"
        "  --drain DUR         --follow: at SIGTERM, send the chunks finished by then\n"
        "                      for at most DUR first (default 10s; 0: stop at once)\n"
        "  --dry-run OUTDIR    write each request to OUTDIR instead of sending it\n"
        "  -v, --verbose       a line for every chunk sent\n"
        "  --quiet             no status line\n"
        "\n"
        "Exit status: 0 all delivered (--follow: stopped by a signal); 1 a chunk was\n"
        "rejected, unreadable or deleted before it was sent, or a fatal error;\n"
        "2 usage error; 3 retries given up (or stopped) with chunks not delivered.\n");
}

/* One line and the help line (usage.h). @return 2. */
__attribute__((format(printf, 2, 3)))
static int bad_usage(const struct push *x, const char *fmt, ...)
{
    (void)x;
    va_list ap;
    va_start(ap, fmt);
    int rc = rp_usage_verror("push", fmt, ap);
    va_end(ap);
    return rc;
}

/* ---------------------------------------------------------------- clock -- */

static uint64_t now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_wall_s(void)
{
    return (uint64_t)time(NULL);
}

/* Whether to stop now: at a second signal; at the first, unless a --follow
 * drains, which stops once its --drain has passed. */
static int stopping(struct push *x)
{
    if (!signals)
        return 0;
    if (signals > 1 || !x->may_drain)
        return 1;
    if (!x->drain_until)
        x->drain_until = now_mono() + x->drain;
    return now_mono() >= x->drain_until;
}

static int http_stop(void *arg)
{
    return stopping(arg);
}

/* ----------------------------------------------------- what is said -- */

static void clear_status(struct push *x)
{
    if (x->status_shown) {
        fputs("\r\033[K", stderr);
        x->status_shown = 0;
    }
}

static void fmt_bytes(char *buf, size_t cap, uint64_t b)
{
    if (b >= 10ull << 20)
        snprintf(buf, cap, "%.1f MB", (double)b / 1e6);
    else if (b >= 10ull << 10)
        snprintf(buf, cap, "%.1f kB", (double)b / 1e3);
    else
        snprintf(buf, cap, "%" PRIu64 " B", b);
}

/* "12 sent (34 requests, 1.2 MB), 3 pending, ..." */
static void summary(const struct push *x, char *buf, size_t cap)
{
    char bytes[32];
    fmt_bytes(bytes, sizeof bytes, x->n.bytes);
    int k = snprintf(buf, cap, "%" PRIu64 " chunk%s sent (%" PRIu64 " request%s, %s)",
                     x->n.chunks, x->n.chunks == 1 ? "" : "s", x->n.requests,
                     x->n.requests == 1 ? "" : "s", bytes);
    const struct { const char *what; uint64_t v; } more[] = {
        {"without samples", x->n.empty}, {"pending", x->n.pending},
        {"retries", x->n.retries}, {"rejected", x->n.rejected},
        {"missing", x->n.missing}, {"unreadable", x->n.unreadable},
        {"not sent", x->n.skipped}, {"being written", x->n.writing}};
    for (size_t i = 0; i < sizeof more / sizeof more[0] && k > 0 && (size_t)k < cap; i++)
        if (more[i].v || i == 1)
            k += snprintf(buf + k, cap - (size_t)k, ", %" PRIu64 " %s", more[i].v,
                          more[i].what);
}

/* The status line, on a terminal only. */
static void show_status(struct push *x)
{
    if (!x->tty || x->quiet)
        return;
    char s[512];
    summary(x, s, sizeof s);
    clear_status(x);
    fprintf(stderr, "ringprof push: %s%s%.120s", s, x->last_error[0] ? "; last: " : "",
            x->last_error);
    x->status_shown = 1;
}

/* One line of news, above the status line. */
__attribute__((format(printf, 2, 3)))
static void say(struct push *x, const char *fmt, ...)
{
    clear_status(x);
    va_list ap;
    va_start(ap, fmt);
    fputs("ringprof push: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    show_status(x);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* "cpu, 06:02:03Z to 06:03:03Z" for a part. */
static void part_desc(const struct rp_push_chunk *c, size_t i, char *buf, size_t cap)
{
    const struct rp_push_part *p = &c->parts[i];
    char a[40], b[40];
    rp_fmt_wall(a, sizeof a, p->from);
    rp_fmt_wall(b, sizeof b, p->until);
    snprintf(buf, cap, "request %zu of %zu (%s, %s to %s)", i + 1, c->nparts,
             p->kind[0] ? p->kind : "every kind", a, b);
}

/* ------------------------------------------------------------ options -- */

enum {
    OPT_FOLLOW = 256, OPT_ONCE, OPT_STATE, OPT_PROTOCOL, OPT_FORMAT, OPT_PERIOD,
    OPT_EVENT, OPT_SERVICE, OPT_LABEL, OPT_PER_THREAD, OPT_TENANT, OPT_HEADER,
    OPT_TOKEN_FILE, OPT_BASIC_FILE, OPT_CACERT, OPT_CONNECT_TIMEOUT, OPT_TIMEOUT,
    OPT_BACKOFF_MIN, OPT_BACKOFF_MAX, OPT_RETRY_FOR, OPT_RESCAN, OPT_DRAIN, OPT_DRY_RUN,
    OPT_QUIET
};

static int duration(const struct push *x, const char *opt, const char *arg, uint64_t min,
                    uint64_t *out)
{
    uint64_t v;
    if (rp_parse_duration(arg, &v) < 0 || v < min)
        return bad_usage(x, "%s '%s': a duration%s (10s, 1.5m, 500ms)", opt, arg,
                         min >= 1000000000ull ? " of at least 1s" : "");
    *out = v;
    return 0;
}

/* A header or a label into the target, or a usage error. */
static int target_add(struct push *x, int opt, const char *arg)
{
    char err[512], line[1024];
    int rc;
    if (opt == OPT_LABEL) {
        rc = rp_push_target_label(&x->t, arg, err, sizeof err);
    } else if (opt == OPT_TENANT) {
        snprintf(line, sizeof line, "X-Scope-OrgID: %s", arg);
        rc = !*arg ? -1 : rp_push_target_header(&x->t, line, err, sizeof err);
        if (!*arg)
            snprintf(err, sizeof err, "--tenant: an empty tenant");
    } else {
        rc = rp_push_target_header(&x->t, arg, err, sizeof err);
    }
    return rc < 0 ? bad_usage(x, "%s", err) : 0;
}

static int parse_one(struct push *x, int opt, const char *arg, char **argv)
{
    switch (opt) {
    case OPT_FOLLOW: x->follow = arg; return 0;
    case OPT_ONCE: x->once = 1; return 0;
    case OPT_STATE: x->state_path = arg; return 0;
    case OPT_PROTOCOL: x->proto = arg; return 0;
    case OPT_FORMAT: x->format = arg; return 0;
    case OPT_PERIOD: return duration(x, "--period", arg, MIN_PERIOD_NS, &x->period);
    case OPT_EVENT: free(x->events_arg); x->events_arg = rp_xstrdup(arg); return 0;
    case OPT_SERVICE:
        free(x->t.service);
        x->t.service = rp_xstrdup(arg);
        return 0;
    case OPT_PER_THREAD: x->per_thread = 1; return 0;
    case OPT_LABEL:
    case OPT_TENANT:
    case OPT_HEADER: return target_add(x, opt, arg);
    case OPT_TOKEN_FILE: x->token_file = arg; return 0;
    case OPT_BASIC_FILE: x->basic_file = arg; return 0;
    case OPT_CACERT: x->cacert = arg; return 0;
    case OPT_CONNECT_TIMEOUT: return duration(x, "--connect-timeout", arg, 1000000, &x->connect);
    case OPT_TIMEOUT: return duration(x, "--timeout", arg, 1000000, &x->timeout);
    case OPT_BACKOFF_MIN: return duration(x, "--backoff-min", arg, 1000000, &x->backoff_min);
    case OPT_BACKOFF_MAX: return duration(x, "--backoff-max", arg, 1000000, &x->backoff_max);
    case OPT_RETRY_FOR: return duration(x, "--retry-for", arg, 0, &x->retry_for);
    case OPT_RESCAN: return duration(x, "--rescan", arg, 10000000, &x->rescan);
    case OPT_DRAIN: return duration(x, "--drain", arg, 0, &x->drain);
    case OPT_DRY_RUN: x->dry_run = arg; return 0;
    case 'v': x->verbose = 1; return 0;
    case OPT_QUIET: x->quiet = 1; return 0;
    case 'h': usage(stdout); return 3;
    default: return bad_usage(x, "unknown option '%s'", argv[optind - 1]);
    }
}

/* --event LIST into the body options. @return 0 or 2. */
static int parse_events(struct push *x)
{
    const char *list = x->events_arg ? x->events_arg : RP_PUSH_DEFAULT_EVENTS;
    char *copy = rp_xstrdup(list), *save = NULL;
    for (char *k = strtok_r(copy, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        if (x->bo.nevents == 32) {
            free(copy);
            return bad_usage(x, "--event: at most 32 kinds");
        }
        x->bo.events = rp_xreallocarray(x->bo.events, x->bo.nevents + 1,
                                        sizeof *x->bo.events);
        x->bo.events[x->bo.nevents++] = rp_xstrdup(k);
    }
    free(copy);
    if (!x->bo.nevents)
        return bad_usage(x, "--event '%s': no kind named", list);
    return 0;
}

/* What goes together, and what does not. @return 0 or 2. */
static int check_args(struct push *x, int nin)
{
    if (x->follow && nin)
        return bad_usage(x, "--follow DIR takes no INPUT: it sends what DIR holds");
    if (!x->follow && !nin)
        return bad_usage(x, "no INPUT given (or --follow DIR)");
    if (!x->follow && (x->once || x->state_path))
        return bad_usage(x, "%s applies to --follow", x->once ? "--once" : "--state");
    char err[512];
    if (rp_push_target_parse(&x->t, x->url, x->proto, x->format, err, sizeof err) < 0)
        return bad_usage(x, "%s", err);
    if (x->per_thread && (x->t.proto != RP_PUSH_PYROSCOPE || x->t.fmt->model != RP_MODEL_PROFILE))
        return bad_usage(x, "--per-thread applies to Pyroscope's pprof");
    if (x->events_arg && x->t.fmt->model == RP_MODEL_EVENTS)
        return bad_usage(x, "--event: a %s body holds every kind", x->t.fmt->name);
    if (x->backoff_max < x->backoff_min)
        return bad_usage(x, "--backoff-max is shorter than --backoff-min");
    const char *svc = x->t.service;
    if (svc && (!*svc || strlen(svc) > 255))
        return bad_usage(x, "--service '%s': a name of 1 to 255 bytes", svc);
    for (const char *p = svc; p && *p; p++)
        if (x->t.proto == RP_PUSH_PYROSCOPE && !(*p == '-' || *p == '.' || *p == '/' ||
            *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9')))
            return bad_usage(x, "--service '%s': Pyroscope takes letters, digits and "
                             "- . / _ only", svc);
    /* What the writers are told: the OTLP resource gets them. */
    x->bo.oo.service = svc;
    x->labels = rp_xreallocarray(NULL, x->t.nlabels + 1, sizeof *x->labels);
    for (size_t i = 0; i < x->t.nlabels; i++)
        x->labels[i] = x->t.labels[i].arg;
    x->bo.oo.labels = x->labels;
    x->bo.oo.nlabels = x->t.nlabels;
    return parse_events(x);
}

/* @return 0, 2 (usage error) or 3 (--help). */
static int parse_args(struct push *x, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"follow", 1, 0, OPT_FOLLOW}, {"once", 0, 0, OPT_ONCE},
        {"state", 1, 0, OPT_STATE}, {"protocol", 1, 0, OPT_PROTOCOL},
        {"format", 1, 0, OPT_FORMAT}, {"period", 1, 0, OPT_PERIOD},
        {"event", 1, 0, OPT_EVENT}, {"service", 1, 0, OPT_SERVICE},
        {"label", 1, 0, OPT_LABEL}, {"per-thread", 0, 0, OPT_PER_THREAD},
        {"tenant", 1, 0, OPT_TENANT}, {"header", 1, 0, OPT_HEADER},
        {"token-file", 1, 0, OPT_TOKEN_FILE}, {"basic-auth-file", 1, 0, OPT_BASIC_FILE},
        {"cacert", 1, 0, OPT_CACERT}, {"connect-timeout", 1, 0, OPT_CONNECT_TIMEOUT},
        {"timeout", 1, 0, OPT_TIMEOUT}, {"backoff-min", 1, 0, OPT_BACKOFF_MIN},
        {"backoff-max", 1, 0, OPT_BACKOFF_MAX}, {"retry-for", 1, 0, OPT_RETRY_FOR},
        {"rescan", 1, 0, OPT_RESCAN}, {"drain", 1, 0, OPT_DRAIN},
        {"dry-run", 1, 0, OPT_DRY_RUN},
        {"verbose", 0, 0, 'v'}, {"quiet", 0, 0, OPT_QUIET}, {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    opterr = 0;
    optind = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
        if (opt == '?' || opt == ':')
            return rp_usage_getopt("push", opt, argv, longopts, NULL);
        int rc = parse_one(x, opt, optarg, argv);
        if (rc)
            return rc;
    }
    if (optind >= argc)
        return bad_usage(x, "no URL given");
    x->url = argv[optind++];
    return check_args(x, argc - optind);
}

/* ------------------------------------------------------------ sending -- */

/* The next wait of the backoff: the step doubles up to the cap, and the wait is
 * between half of it and all of it (so many pushes that failed together do not
 * come back together), or what Retry-After asks, within the cap. */
static uint64_t backoff_wait(struct push *x, uint64_t retry_after_s)
{
    x->delay = x->failures <= 1 ? x->backoff_min
             : x->delay > x->backoff_max / 2 ? x->backoff_max : x->delay * 2;
    x->rng ^= x->rng << 13, x->rng ^= x->rng >> 7, x->rng ^= x->rng << 17;
    uint64_t wait = x->delay / 2 + (x->delay / 2 ? x->rng % (x->delay / 2 + 1) : 0);
    uint64_t asked = retry_after_s * 1000000000ull;
    if (asked > wait)
        wait = asked < x->backoff_max ? asked : x->backoff_max;
    return wait;
}

/* The dry run's "send": the request into OUTDIR, as NNNNNN-CHUNK-K.body and
 * .request (method, URL, headers; credentials named, never written). */
static int dry_send(struct push *x, const struct rp_push_chunk *c, size_t k,
                    const struct rp_push_request *rq)
{
    char name[512];
    for (int pass = 0; pass < 2; pass++) {
        snprintf(name, sizeof name, "%06" PRIu64 "-%s-%zu.%s", x->dry_seq,
                 base_name(c->path), k, pass ? "request" : "body");
        int fd = openat(x->dry_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
                        O_CLOEXEC, 0600);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            if (fd >= 0)
                close(fd);
            say(x, "--dry-run %s/%s: %s", x->dry_run, name, strerror(errno));
            return -1;
        }
        if (pass) {
            fprintf(f, "POST %s\n", rq->url);
            for (size_t i = 0; i < rq->nheaders; i++)
                fprintf(f, "%s\n", rq->headers[i]);
            if (x->auth)
                fprintf(f, "Authorization: %s\n", x->auth == 1 ? "Bearer (the token)"
                                                     : "Basic (the user and password)");
        } else {
            fwrite(rq->body, 1, rq->len, f);
        }
        if (fclose(f) != 0) {
            say(x, "--dry-run %s/%s: %s", x->dry_run, name, strerror(errno));
            return -1;
        }
    }
    x->dry_seq++;
    return 0;
}

/* Send part k of the current chunk once. @return the verdict; why says it. */
static enum rp_push_verdict send_part(struct push *x, size_t k, char *why, size_t whylen,
                                      uint64_t *retry_after)
{
    struct rp_push_request rq;
    rp_push_request_make(&x->t, &x->cur, &x->cur.parts[k], &rq);
    *retry_after = 0;
    enum rp_push_verdict v;
    if (x->dry_run) {
        v = dry_send(x, &x->cur, k, &rq) == 0 ? RP_PUSH_DELIVERED : RP_PUSH_RETRY;
        snprintf(why, whylen, v == RP_PUSH_DELIVERED ? "written" : "not written");
    } else {
        struct rp_http_reply r;
        int rc = rp_http_post(x->http, rq.url, (const char *const *)rq.headers,
                              rq.nheaders, rq.body, rq.len, &r);
        v = rp_push_verdict(&x->t, rc, &r, why, whylen);
        *retry_after = r.retry_after_s;
        if (r.aborted)
            snprintf(why, whylen, "stopped");
    }
    if (v != RP_PUSH_RETRY) {
        x->n.requests++;
        x->n.bytes += rq.len;
    }
    rp_push_request_free(&rq);
    return v;
}

/* Wait until `until` (monotonic ns) or a stop; in --follow, watching the
 * directory meanwhile (for the status line). */
static void wait_until(struct push *x, uint64_t until, void (*on_change)(struct push *))
{
    for (uint64_t t = now_mono(); !stopping(x) && t < until; t = now_mono()) {
        uint64_t left = (until - t) / 1000000 + 1;
        int ms = left > 1000 ? 1000 : (int)left;
        if (x->follow && rp_push_dir_wait(&x->dir, ms) && on_change)
            on_change(x);
        else if (!x->follow)
            poll(NULL, 0, ms);
    }
}

/*
 * Deliver parts [*done, nparts) of the current chunk: each until it is answered
 * (delivered or rejected), retrying the rest; after each answer `answered` is
 * called (to save the state). @return 0 when every part was answered, 1 when
 * stopped, EXIT_GAVE_UP when --retry-for ran out.
 */
static int deliver(struct push *x, uint32_t *done, int *rejected,
                   void (*answered)(struct push *), void (*on_change)(struct push *))
{
    uint64_t deadline = x->follow && !x->once ? 0 : now_mono() + x->retry_for;
    while (*done < x->cur.nparts) {
        if (stopping(x))
            return 1;
        char why[1000], desc[256];
        uint64_t after;
        enum rp_push_verdict v = send_part(x, *done, why, sizeof why, &after);
        part_desc(&x->cur, *done, desc, sizeof desc);
        if (v == RP_PUSH_RETRY) {
            if (stopping(x))
                return 1;
            x->failures++;
            x->n.retries++;
            if (x->failures == 1)
                x->failing_since = now_mono();
            uint64_t wait = backoff_wait(x, after);
            snprintf(x->last_error, sizeof x->last_error, "%s", why);
            if (deadline && now_mono() + wait > deadline) {
                say(x, "%s, %s: %s; giving up after %u tries (--retry-for)",
                    base_name(x->cur.path), desc, why, x->failures);
                return EXIT_GAVE_UP;
            }
            say(x, "%s, %s: %s; retry %u in %.1f s", base_name(x->cur.path), desc, why,
                x->failures, (double)wait / 1e9);
            wait_until(x, now_mono() + wait, on_change);
            continue;
        }
        if (x->failures)
            say(x, "%s delivered after %u %s (%.0f s)", base_name(x->cur.path),
                x->failures, x->failures == 1 ? "retry" : "retries",
                (double)(now_mono() - x->failing_since) / 1e9);
        x->failures = 0;
        if (v == RP_PUSH_REJECTED) {
            *rejected = 1;
            snprintf(x->last_error, sizeof x->last_error, "%s", why);
            say(x, "%s (recording %s, chunk %" PRIu32 "), %s: rejected: %s; not sent "
                "again", x->cur.path, x->cur.id.recording, x->cur.id.seq, desc, why);
        }
        (*done)++;
        if (answered)
            answered(x);
        show_status(x);
    }
    return 0;
}

/* After a chunk: the count and, with -v, a line. */
static void chunk_done(struct push *x, int rejected)
{
    if (rejected) {
        x->n.rejected++;
    } else if (!x->cur.nparts) {
        x->n.empty++;
        if (x->verbose)
            say(x, "%s: no samples of the kinds sent; nothing to send", x->cur.path);
    } else {
        x->n.chunks++;
        if (x->verbose)
            say(x, "%s: sent (%zu request%s)", x->cur.path, x->cur.nparts,
                x->cur.nparts == 1 ? "" : "s");
    }
    if (x->cur.problems)
        say(x, "%s: %" PRIu64 " problem%s in the file; what could be read was sent",
            x->cur.path, x->cur.problems, x->cur.problems == 1 ? "" : "s");
}

/* Build the current chunk's parts. @return 0, or -1 with the reason in err. */
static int build(struct push *x, const char *path, char *err, size_t errlen)
{
    rp_push_chunk_free(&x->cur);
    if (rp_push_chunk_build(&x->cur, path, &x->bo, err, errlen) < 0) {
        rp_push_chunk_free(&x->cur);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------- files given -- */

/* Whether this run sent the chunk `id` already (the same file given twice, or a
 * copy of it): it is not sent again. Else it is remembered. */
static int sent_before(struct push *x, const struct rp_push_ident *id)
{
    if (!id->recording[0] || !id->has_seq)
        return 0;
    char key[RP_PUSH_ID_MAX + 16];
    snprintf(key, sizeof key, "%s/%" PRIu32, id->recording, id->seq);
    for (size_t i = 0; i < x->ndone; i++)
        if (!strcmp(x->done[i], key))
            return 1;
    x->done = rp_xreallocarray(x->done, x->ndone + 1, sizeof *x->done);
    x->done[x->ndone++] = rp_xstrdup(key);
    return 0;
}

static int run_inputs(struct push *x, int argc, char **argv)
{
    /* Each chunk once (model/inputs.h says which copy is read, in one line);
     * sent_before also holds across the copies of a chunk push builds itself. */
    struct rp_inputs in = {.cmd = "push"};
    int missing = rp_inputs_expand(&in, argc - optind, argv + optind);
    x->n.skipped += (uint64_t)missing;
    int rc = 0;
    for (size_t i = 0; i < in.n && !rc; i++) {
        const char *path = in.paths[i];
        size_t len = strlen(path);
        if (len > 5 && !strcmp(path + len - 5, ".part")) {
            /* Not finished: sent once it is (--follow), not a failure. */
            say(x, "%s: still being written (or its writer died): not sent", path);
            x->n.writing++;
            continue;
        }
        x->n.pending = in.n - i;
        char err[1024];
        if (build(x, path, err, sizeof err) < 0) {
            x->n.unreadable++;
            say(x, "%s; not sent", err);
            continue;
        }
        if (sent_before(x, &x->cur.id)) {
            say(x, "%s: recording %s, chunk %" PRIu32 " was sent already in this run: "
                "not sent again", path, x->cur.id.recording, x->cur.id.seq);
            continue;
        }
        uint32_t done = 0;
        int rejected = 0;
        rc = deliver(x, &done, &rejected, NULL, NULL);
        if (!rc)
            chunk_done(x, rejected);
    }
    x->n.pending = rc ? x->n.pending : 0;
    rp_inputs_free(&in);
    return rc == 1 ? EXIT_GAVE_UP : rc;   /* stopped: not all was delivered */
}

/* ------------------------------------------------------------ follow -- */

static void save_state(struct push *x)
{
    char err[1024];
    if (rp_push_state_save(&x->st, err, sizeof err) < 0)
        say(x, "%s", err);
}

static void rescan(struct push *x)
{
    char err[1024];
    if (rp_push_dir_scan(&x->dir, err, sizeof err) < 0) {
        if (!x->dir.missing_reported)
            say(x, "%s; waiting for it", err);
        x->dir.missing_reported = 1;
        return;
    }
    if (x->dir.missing_reported)
        say(x, "%s is back", x->dir.path);
    x->dir.missing_reported = 0;
    x->n.writing = x->dir.parts_open;
    uint64_t now = now_wall_s();
    for (size_t i = 0; i < x->st.n; i++)
        x->st.recs[i].present = 0;
    for (size_t i = 0; i < x->dir.n; i++) {
        struct rp_push_file *f = &x->dir.files[i];
        if (!f->ident_ok) {
            if (!f->reported) {
                say(x, "%s; not sent", f->ident_err);
                x->n.unreadable++;
            }
            f->reported = 1;
            continue;
        }
        struct rp_push_rec *r = rp_push_state_rec(&x->st, f->id.recording, 1);
        r->present = 1;
        r->seen = now;
    }
    rp_push_state_prune(&x->st, RP_PUSH_STATE_RECS);
}

static void rescan_cb(struct push *x)
{
    rescan(x);
    show_status(x);
}

/* Whether a comes before b: the order the agents finished them. */
static int before(const struct rp_push_file *a, const struct rp_push_file *b)
{
    if (a->id.start_wall != b->id.start_wall)
        return a->id.start_wall < b->id.start_wall;
    int c = strcmp(a->id.recording, b->id.recording);
    return c ? c < 0 : a->id.seq < b->id.seq;
}

/* Whether chunk f, of a seq that r says is done, is a later JVM's under the same
 * recording id (the agent's recording=), which counts its chunks from 0 again:
 * it was opened after the newest chunk answered. */
static int reused(const struct rp_push_rec *r, const struct rp_push_file *f)
{
    return f->id.seq < r->next && r->last_start && f->id.start_wall > r->last_start;
}

/* Whether chunk f is done: an earlier JVM's under a reused id, or of a seq
 * below the watermark and not a later JVM's. */
static int done_chunk(const struct rp_push_rec *r, const struct rp_push_file *f)
{
    return (r->since && f->id.start_wall < r->since) || (f->id.seq < r->next && !reused(r, f));
}

/* The next chunk to send, and the pending count; a gap before it in its
 * recording is counted missing (and the state moved past it). NULL: none. */
static struct rp_push_file *next_chunk(struct push *x)
{
    struct rp_push_file *best = NULL;
    x->n.pending = 0;
    for (size_t i = 0; i < x->dir.n; i++) {
        struct rp_push_file *f = &x->dir.files[i];
        if (!f->ident_ok)
            continue;
        struct rp_push_rec *r = rp_push_state_rec(&x->st, f->id.recording, 1);
        if (done_chunk(r, f))
            continue;
        x->n.pending++;
        if (!best || before(f, best))
            best = f;
    }
    if (!best)
        return NULL;
    struct rp_push_rec *r = rp_push_state_rec(&x->st, best->id.recording, 1);
    if (reused(r, best)) {
        say(x, "recording %s: chunk %" PRIu32 " was opened after the last one sent (chunk "
            "%" PRIu32 "): a later JVM with the same recording id; its chunks are sent "
            "from %" PRIu32 " on", best->id.recording, best->id.seq, r->next - 1,
            best->id.seq);
        r->next = best->id.seq;
        r->since = best->id.start_wall;
        r->parts = 0;
        r->part_rejected = 0;
        save_state(x);
    }
    if (best->id.seq > r->next) {
        uint32_t gap = best->id.seq - r->next;
        say(x, "recording %s: chunk%s %" PRIu32 "%s%.0" PRIu32 " %s not in %s when push "
            "came to %s: deleted before %s sent (retention), or never finished; "
            "counted missing", best->id.recording, gap == 1 ? "" : "s", r->next,
            gap == 1 ? "" : " to ", gap == 1 ? 0 : best->id.seq - 1,
            gap == 1 ? "was" : "were", x->dir.path,
            r->next == 0 && !r->sent && !r->rejected ? "the recording" : "them",
            r->next == 0 && !r->sent && !r->rejected ? "push" : "they were");
        r->missing += gap;
        x->n.missing += gap;
        r->next = best->id.seq;
        r->parts = 0;
        r->part_rejected = 0;
        save_state(x);
    }
    return best;
}

/* After each answered request of the current chunk. */
static void part_answered(struct push *x)
{
    struct rp_push_rec *r = rp_push_state_rec(&x->st, x->cur.id.recording, 1);
    r->parts++;
    save_state(x);
}

/* Send chunk f (its parts not yet answered); @return 0, 1 (stopped) or
 * EXIT_GAVE_UP. */
static int follow_one(struct push *x, struct rp_push_file *f)
{
    char recording[RP_PUSH_ID_MAX + 1];
    snprintf(recording, sizeof recording, "%s", f->id.recording);
    uint32_t seq = f->id.seq;
    char err[1024];
    if (build(x, f->path, err, sizeof err) < 0) {
        if (access(f->path, F_OK) != 0) {   /* gone meanwhile: the gap counts it */
            rescan(x);
            return 0;
        }
        say(x, "%s; not sent", err);
        x->n.unreadable++;
        f->ident_ok = 0;
        f->reported = 1;
        return 0;
    }
    if (strcmp(x->cur.id.recording, recording) || x->cur.id.seq != seq) {
        rescan(x);                          /* another file took the name */
        return 0;
    }
    struct rp_push_rec *r = rp_push_state_rec(&x->st, recording, 1);
    uint32_t done = r->parts;
    int rejected = r->part_rejected;
    if (done > x->cur.nparts)
        done = (uint32_t)x->cur.nparts;
    int rc = deliver(x, &done, &rejected, part_answered, rescan_cb);
    r = rp_push_state_rec(&x->st, recording, 1);
    r->part_rejected = rejected;
    if (rc)
        return rc;
    chunk_done(x, rejected);
    if (rejected)
        r->rejected++;
    else
        r->sent++;
    if (x->cur.id.start_wall > r->last_start)
        r->last_start = x->cur.id.start_wall;
    r->next = seq + 1;
    r->parts = 0;
    r->part_rejected = 0;
    save_state(x);
    rp_push_chunk_free(&x->cur);
    return 0;
}

/* The plan: what shapes a chunk's parts; a state written with another plan has
 * its half-sent chunks sent whole again. */
static void make_plan(const struct push *x, char *buf, size_t cap)
{
    int k = snprintf(buf, cap, "%s %s period=%" PRIu64 " threads=%d events=",
                     rp_push_proto_name(x->t.proto), x->t.fmt->name, x->period,
                     !x->bo.merge_threads);
    for (size_t i = 0; i < x->bo.nevents && k > 0 && (size_t)k < cap; i++)
        k += snprintf(buf + k, cap - (size_t)k, "%s%s", i ? "," : "", x->bo.events[i]);
}

/* Compare the state with this run's target and plan; adopt them. */
static void adopt_state(struct push *x)
{
    char target[4200], plan[1024];
    snprintf(target, sizeof target, "%s %s", rp_push_proto_name(x->t.proto), x->t.endpoint);
    make_plan(x, plan, sizeof plan);
    if (x->st.target && strcmp(x->st.target, target))
        say(x, "state file %s was written for %s: what was delivered there is not sent "
            "to %s (give a new --state to send it)", x->st.shown, x->st.target, target);
    if (x->st.plan && strcmp(x->st.plan, plan))
        for (size_t i = 0; i < x->st.n; i++)
            if (x->st.recs[i].parts) {
                say(x, "recording %s: chunk %" PRIu32 " was half sent with other "
                    "options (%s); it is sent whole", x->st.recs[i].id,
                    x->st.recs[i].next, x->st.plan);
                x->st.recs[i].parts = 0;
                x->st.recs[i].part_rejected = 0;
            }
    rp_push_state_set(&x->st, target, plan);
}

static int run_follow(struct push *x)
{
    char err[1024], state_path[4200];
    if (rp_push_dir_open(&x->dir, x->follow, err, sizeof err) < 0) {
        fprintf(stderr, "ringprof push: --follow %s\n", err);
        return 1;
    }
    const char *sp = x->state_path;
    if (!sp) {
        snprintf(state_path, sizeof state_path, "%s/%s", x->dir.path, RP_PUSH_STATE_NAME);
        sp = state_path;
    }
    if (rp_push_state_open(&x->st, x->dry_run ? NULL : sp, err, sizeof err) < 0) {
        fprintf(stderr, "ringprof push: %s\n", err);
        return 1;
    }
    adopt_state(x);
    uint64_t next_scan = 0;
    while (!stopping(x)) {
        if (signals && !x->drain_said) {
            x->drain_said = 1;
            next_scan = 0;
            say(x, "stopping: the chunks finished by now are sent first, for at most "
                "%.0f s (--drain); a second signal stops at once",
                (double)x->drain / 1e9);
        }
        if (now_mono() >= next_scan) {
            rescan(x);
            next_scan = now_mono() + x->rescan;
        }
        struct rp_push_file *f = next_chunk(x);
        show_status(x);
        if (f) {
            int rc = follow_one(x, f);
            if (rc)
                return rc == 1 && !x->once ? 0 : EXIT_GAVE_UP;
            continue;
        }
        if (x->once || signals)
            break;                          /* nothing (left) to drain */
        uint64_t left = next_scan > now_mono() ? (next_scan - now_mono()) / 1000000 + 1 : 0;
        if (rp_push_dir_wait(&x->dir, left > 60000 ? 60000 : (int)left))
            next_scan = 0;
    }
    return signals && x->once && x->n.pending ? EXIT_GAVE_UP : 0;
}

/* ---------------------------------------------------------------- main -- */

/* The secrets and the HTTP client. @return 0 or 1 (said). */
static int open_http(struct push *x)
{
    char token[RP_HTTP_SECRET_MAX + 2], basic[RP_HTTP_SECRET_MAX + 2], err[1024];
    int ht = rp_http_secret_load(x->token_file, RP_PUSH_ENV_TOKEN, 0, token, sizeof token,
                                 err, sizeof err);
    int hb = ht < 0 ? 0 : rp_http_secret_load(x->basic_file, RP_PUSH_ENV_BASIC_AUTH, 1,
                                              basic, sizeof basic, err, sizeof err);
    if (ht < 0 || hb < 0) {
        fprintf(stderr, "ringprof push: %s\n", err);
        return 1;
    }
    if (ht > 0 && hb > 0) {
        fprintf(stderr, "ringprof push: a bearer token and basic authentication were "
                        "both given; give one\n");
        explicit_bzero(token, sizeof token);
        explicit_bzero(basic, sizeof basic);
        return 1;
    }
    x->auth = ht > 0 ? 1 : hb > 0 ? 2 : 0;
    if ((ht > 0 || hb > 0) && !rp_http_url_private(x->t.endpoint))
        fprintf(stderr, "ringprof push: warning: the credentials go in clear over plain "
                        "http to another host; use https\n");
    if (x->dry_run) {
        explicit_bzero(token, sizeof token);
        explicit_bzero(basic, sizeof basic);
        x->dry_fd = open(x->dry_run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (x->dry_fd < 0) {
            fprintf(stderr, "ringprof push: --dry-run %s: %s\n", x->dry_run, strerror(errno));
            return 1;
        }
        return 0;
    }
    struct rp_http_options ho = {
        .connect_ms = (long)(x->connect / 1000000), .total_ms = (long)(x->timeout / 1000000),
        .cacert = x->cacert, .bearer = ht > 0 ? token : NULL, .basic = hb > 0 ? basic : NULL,
        .stop = http_stop, .stop_arg = x};
    x->http = rp_http_open(&ho, err, sizeof err);
    explicit_bzero(token, sizeof token);
    explicit_bzero(basic, sizeof basic);
    if (!x->http) {
        fprintf(stderr, "ringprof push: %s\n", err);
        return 1;
    }
    return 0;
}

static void on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;           /* no SA_RESTART: waits end at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);          /* a connection the server closed */
}

static int exit_status(const struct push *x, int rc)
{
    if (rc)
        return rc;
    return x->n.rejected || x->n.missing || x->n.unreadable || x->n.skipped ? 1 : 0;
}

int rp_cmd_push(int argc, char **argv)
{
    struct push x;
    memset(&x, 0, sizeof x);
    x.dry_fd = -1;
    x.connect = DEF_CONNECT_NS;
    x.timeout = DEF_TIMEOUT_NS;
    x.backoff_min = DEF_BACKOFF_MIN;
    x.backoff_max = DEF_BACKOFF_MAX;
    x.retry_for = DEF_RETRY_FOR;
    x.rescan = DEF_RESCAN_NS;
    x.drain = DEF_DRAIN_NS;
    signals = 0;
    int rc = parse_args(&x, argc, argv);
    if (!rc) {
        x.bo.fmt = x.t.fmt;
        x.bo.period_ns = x.period;
        x.bo.merge_threads = x.t.proto == RP_PUSH_PYROSCOPE && !x.per_thread;
        x.may_drain = x.follow && !x.once && x.drain > 0;
        x.tty = isatty(STDERR_FILENO);
        if (getrandom(&x.rng, sizeof x.rng, 0) != (ssize_t)sizeof x.rng || !x.rng)
            x.rng = now_mono() | 1;
        on_signals();
        rc = open_http(&x);
        if (!rc)
            rc = x.follow ? run_follow(&x) : run_inputs(&x, argc, argv);
        if (rc != 1 || x.n.requests || x.follow) {
            char s[512];
            summary(&x, s, sizeof s);
            clear_status(&x);
            fprintf(stderr, "ringprof push: %s%s\n", s,
                    signals ? " (stopped)" : rc == EXIT_GAVE_UP ? " (gave up)" : "");
        }
        rc = exit_status(&x, rc);
    } else if (rc == 3) {
        rc = 0;
    }
    rp_push_chunk_free(&x.cur);
    rp_http_close(x.http);
    rp_push_state_close(&x.st);
    rp_push_dir_close(&x.dir);
    rp_push_target_free(&x.t);
    for (size_t i = 0; i < x.bo.nevents; i++)
        free(x.bo.events[i]);
    free(x.bo.events);
    free(x.events_arg);
    free(x.labels);
    for (size_t i = 0; i < x.ndone; i++)
        free(x.done[i]);
    free(x.done);
    if (x.dry_fd >= 0)
        close(x.dry_fd);
    return rc;
}
