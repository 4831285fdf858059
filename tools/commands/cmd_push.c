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
 *
 * This file holds rp_cmd_push, the signals, sending the current chunk's
 * requests and the files given as INPUT; the options are push_args.c, what is
 * said push_status.c, --follow push_follow.c, and their shared state push_cmd.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "commands.h"
#include "model/inputs.h"
#include "model/timespec.h"
#include "model/xalloc.h"
#include "push_cmd.h"

/* SIGTERM, SIGINT and SIGHUP received: the first stops push (after --drain, in
 * --follow), the second at once. */
static volatile sig_atomic_t signals;

static void on_stop(int sig)
{
    (void)sig;
    if (signals < 2)
        signals++;
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

/* ------------------------------------------------------------ clock -- */

uint64_t rp_push_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int rp_push_signals(void)
{
    return signals;
}

int rp_push_stopping(struct push *x)
{
    if (!signals)
        return 0;
    if (signals > 1 || !x->may_drain)
        return 1;
    if (!x->drain_until)
        x->drain_until = rp_push_now() + x->drain;
    return rp_push_now() >= x->drain_until;
}

static int http_stop(void *arg)
{
    return rp_push_stopping(arg);
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
            rp_push_say(x, "--dry-run %s/%s: %s", x->dry_run, name, strerror(errno));
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
            rp_push_say(x, "--dry-run %s/%s: %s", x->dry_run, name, strerror(errno));
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
    for (uint64_t t = rp_push_now(); !rp_push_stopping(x) && t < until; t = rp_push_now()) {
        uint64_t left = (until - t) / 1000000 + 1;
        int ms = left > 1000 ? 1000 : (int)left;
        if (x->follow && rp_push_dir_wait(&x->dir, ms) && on_change)
            on_change(x);
        else if (!x->follow)
            poll(NULL, 0, ms);
    }
}

int rp_push_cur_deliver(struct push *x, uint32_t *done, int *rejected,
                        void (*answered)(struct push *), void (*on_change)(struct push *))
{
    uint64_t deadline = x->follow && !x->once ? 0 : rp_push_now() + x->retry_for;
    while (*done < x->cur.nparts) {
        if (rp_push_stopping(x))
            return 1;
        char why[1000], desc[256];
        uint64_t after;
        enum rp_push_verdict v = send_part(x, *done, why, sizeof why, &after);
        part_desc(&x->cur, *done, desc, sizeof desc);
        if (v == RP_PUSH_RETRY) {
            if (rp_push_stopping(x))
                return 1;
            x->failures++;
            x->n.retries++;
            if (x->failures == 1)
                x->failing_since = rp_push_now();
            uint64_t wait = backoff_wait(x, after);
            snprintf(x->last_error, sizeof x->last_error, "%s", why);
            if (deadline && rp_push_now() + wait > deadline) {
                rp_push_say(x, "%s, %s: %s; giving up after %u tries (--retry-for)",
                            base_name(x->cur.path), desc, why, x->failures);
                return EXIT_GAVE_UP;
            }
            rp_push_say(x, "%s, %s: %s; retry %u in %.1f s", base_name(x->cur.path), desc,
                        why, x->failures, (double)wait / 1e9);
            wait_until(x, rp_push_now() + wait, on_change);
            continue;
        }
        if (x->failures)
            rp_push_say(x, "%s delivered after %u %s (%.0f s)", base_name(x->cur.path),
                        x->failures, x->failures == 1 ? "retry" : "retries",
                        (double)(rp_push_now() - x->failing_since) / 1e9);
        x->failures = 0;
        if (v == RP_PUSH_REJECTED) {
            *rejected = 1;
            snprintf(x->last_error, sizeof x->last_error, "%s", why);
            rp_push_say(x, "%s (recording %s, chunk %" PRIu32 "), %s: rejected: %s; not "
                        "sent again", x->cur.path, x->cur.id.recording, x->cur.id.seq, desc,
                        why);
        }
        (*done)++;
        if (answered)
            answered(x);
        rp_push_status_show(x);
    }
    return 0;
}

void rp_push_cur_done(struct push *x, int rejected)
{
    if (rejected) {
        x->n.rejected++;
    } else if (!x->cur.nparts) {
        x->n.empty++;
        if (x->verbose)
            rp_push_say(x, "%s: no samples of the kinds sent; nothing to send",
                        x->cur.path);
    } else {
        x->n.chunks++;
        if (x->verbose)
            rp_push_say(x, "%s: sent (%zu request%s)", x->cur.path, x->cur.nparts,
                        x->cur.nparts == 1 ? "" : "s");
    }
    if (x->cur.problems)
        rp_push_say(x, "%s: %" PRIu64 " problem%s in the file; what could be read was sent",
                    x->cur.path, x->cur.problems, x->cur.problems == 1 ? "" : "s");
}

int rp_push_cur_load(struct push *x, const char *path, char *err, size_t errlen)
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
            rp_push_say(x, "%s: still being written (or its writer died): not sent", path);
            x->n.writing++;
            continue;
        }
        x->n.pending = in.n - i;
        char err[1024];
        if (rp_push_cur_load(x, path, err, sizeof err) < 0) {
            x->n.unreadable++;
            rp_push_say(x, "%s; not sent", err);
            continue;
        }
        if (sent_before(x, &x->cur.id)) {
            rp_push_say(x, "%s: recording %s, chunk %" PRIu32 " was sent already in this "
                        "run: not sent again", path, x->cur.id.recording, x->cur.id.seq);
            continue;
        }
        uint32_t done = 0;
        int rejected = 0;
        rc = rp_push_cur_deliver(x, &done, &rejected, NULL, NULL);
        if (!rc)
            rp_push_cur_done(x, rejected);
    }
    x->n.pending = rc ? x->n.pending : 0;
    rp_inputs_free(&in);
    return rc == 1 ? EXIT_GAVE_UP : rc;   /* stopped: not all was delivered */
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
    rp_push_args_defaults(&x);
    signals = 0;
    int rc = rp_push_args_parse(&x, argc, argv);
    if (!rc) {
        x.bo.fmt = x.t.fmt;
        x.bo.period_ns = x.period;
        x.bo.merge_threads = x.t.proto == RP_PUSH_PYROSCOPE && !x.per_thread;
        x.may_drain = x.follow && !x.once && x.drain > 0;
        x.tty = isatty(STDERR_FILENO);
        if (getrandom(&x.rng, sizeof x.rng, 0) != (ssize_t)sizeof x.rng || !x.rng)
            x.rng = rp_push_now() | 1;
        on_signals();
        rc = open_http(&x);
        if (!rc)
            rc = x.follow ? rp_push_follow(&x) : run_inputs(&x, argc, argv);
        if (rc != 1 || x.n.requests || x.follow) {
            char s[512];
            rp_push_summary(&x, s, sizeof s);
            rp_push_status_clear(&x);
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
