/*
 * tools/commands/push_cmd.h — one run of `ringprof push`: the options it was
 * given, what it is sending and has sent, what it says. Shared by its files:
 *
 *   cmd_push.c     rp_cmd_push, the signals, sending the current chunk's requests
 *                  (retries, backoff, the dry run), the files given as INPUT
 *   push_args.c    the options, their defaults and checks, the usage text
 *   push_status.c  what is said: the status line, news above it, the summary
 *   push_follow.c  --follow: the directory loop, which chunk is next, gaps and a
 *                  recording id reused, the state after every answer
 *
 * The rest of push is in the modules these use (push_body.h, push_dir.h,
 * push_http.h, push_state.h, push_target.h). The tool's one thread; allocation
 * failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_PUSH_CMD_H
#define RINGPROF_TOOLS_PUSH_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "push_body.h"
#include "push_dir.h"
#include "push_http.h"
#include "push_state.h"
#include "push_target.h"

/* Exit status 3: retries given up (or stopped) with chunks not delivered. */
enum { EXIT_GAVE_UP = 3 };

/* What the run has done so far: the status line and the summary say it. */
struct counts {
    uint64_t chunks, empty, requests, bytes, retries, rejected, missing, unreadable,
             skipped, pending, writing;
};

/* One run: the options as parsed (push_args.c), then what is under way. */
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

/* --------------------------------------------------------- push_args.c -- */

/* The defaults of the durations (docs/fleet.md says why each). */
void rp_push_args_defaults(struct push *x);

/* The command line into x. @return 0, 2 (usage error, said) or 3 (--help,
 * printed). */
int rp_push_args_parse(struct push *x, int argc, char **argv);

/* ------------------------------------------------------- push_status.c -- */

/* Take the status line off the terminal (before other output). */
void rp_push_status_clear(struct push *x);

/* The status line, on a terminal only and without --quiet. */
void rp_push_status_show(struct push *x);

/* "12 chunks sent (34 requests, 1.2 MB), 3 pending, ..." into buf. */
void rp_push_summary(const struct push *x, char *buf, size_t cap);

/* One line of news on stderr, above the status line. */
__attribute__((format(printf, 2, 3)))
void rp_push_say(struct push *x, const char *fmt, ...);

/* ---------------------------------------------------------- cmd_push.c -- */

/* CLOCK_MONOTONIC in ns. */
uint64_t rp_push_now(void);

/* The stop signals received so far: 0, 1 or 2 (SIGTERM, SIGINT, SIGHUP). */
int rp_push_signals(void);

/* Whether to stop now: at a second signal; at the first, unless a --follow
 * drains, which stops once its --drain has passed. */
int rp_push_stopping(struct push *x);

/* Build x->cur, the current chunk's parts, from the file at path. @return 0,
 * or -1 with the reason in err. */
int rp_push_cur_load(struct push *x, const char *path, char *err, size_t errlen);

/*
 * Deliver parts [*done, nparts) of the current chunk: each until it is answered
 * (delivered or rejected; *rejected is set by a rejection), retrying the rest;
 * after each answer `answered` is called (to save the state), and on_change when
 * the followed directory changes during a wait. @return 0 when every part was
 * answered, 1 when stopped, EXIT_GAVE_UP when --retry-for ran out.
 */
int rp_push_cur_deliver(struct push *x, uint32_t *done, int *rejected,
                        void (*answered)(struct push *),
                        void (*on_change)(struct push *));

/* After the current chunk: the count and, with -v, a line. */
void rp_push_cur_done(struct push *x, int rejected);

/* -------------------------------------------------------- push_follow.c -- */

/* --follow DIR until a signal (after its drain) or, with --once, until DIR holds
 * nothing more to send. @return 0, 1 (a fatal error, said) or EXIT_GAVE_UP. */
int rp_push_follow(struct push *x);

#endif
