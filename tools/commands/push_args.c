/*
 * tools/commands/push_args.c — `ringprof push`'s options: the usage text, the
 * defaults, each option into struct push (push_cmd.h), and what goes together.
 *
 * A bad option, a bad value or a combination that cannot work (--follow with
 * INPUT, --per-thread for OTLP, --event for a body that holds every kind) is a
 * usage error: one line and where the help is (usage.h), exit status 2, before
 * anything is read or sent. Durations take ringprof/units.h's grammar.
 *
 * The tool's one thread; allocation failure exits (model/xalloc.h).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/units.h"
#include "usage.h"
#include "model/xalloc.h"
#include "push_cmd.h"

/* Defaults (docs/fleet.md says why each). */
#define DEF_CONNECT_NS   (10ull * 1000000000ull)
#define DEF_TIMEOUT_NS   (60ull * 1000000000ull)
#define DEF_BACKOFF_MIN  (1ull * 1000000000ull)
#define DEF_BACKOFF_MAX  (60ull * 1000000000ull)
#define DEF_RETRY_FOR    (300ull * 1000000000ull)
#define DEF_RESCAN_NS    (10ull * 1000000000ull)
#define DEF_DRAIN_NS     (10ull * 1000000000ull)
#define MIN_PERIOD_NS    (1000000000ull)

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

void rp_push_args_defaults(struct push *x)
{
    x->connect = DEF_CONNECT_NS;
    x->timeout = DEF_TIMEOUT_NS;
    x->backoff_min = DEF_BACKOFF_MIN;
    x->backoff_max = DEF_BACKOFF_MAX;
    x->retry_for = DEF_RETRY_FOR;
    x->rescan = DEF_RESCAN_NS;
    x->drain = DEF_DRAIN_NS;
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

int rp_push_args_parse(struct push *x, int argc, char **argv)
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
