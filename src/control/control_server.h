/*
 * src/control/control_server.h — the control server's state and what its files
 * call of each other. For the server's own files only: control.c (the thread,
 * its loop, start and stop), control_path.c (the socket's path, its trust, bind
 * and the check that remakes it), control_conn.c (a connection's reads, writes,
 * deadlines and eviction) and control_reply.c (a request line to its reply);
 * every other caller uses control.h.
 *
 * Everything here runs on the server thread, one call at a time, except what
 * rp_control_start and rp_control_stop do before the thread starts and after it
 * has been joined (control.c); nothing is async-signal-safe or locked.
 */
#ifndef RINGPROF_SRC_CONTROL_SERVER_H
#define RINGPROF_SRC_CONTROL_SERVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "control/control.h"

/* One client connection: a fixed request buffer and at most one reply. */
struct rp_control_conn {
    int fd;
    uid_t uid;
    pid_t pid;
    size_t inlen;
    uint64_t conn_ms;        /* when it was accepted                            */
    uint64_t req_start_ms;   /* first byte of the request now in `in`          */
    uint64_t out_ms;         /* when the pending reply was made                */
    uint64_t idle_ms;        /* last activity of any kind                      */
    char *out;               /* the unsent rest of a reply, or NULL            */
    size_t outlen, outoff;
    int answered;            /* a request has been answered                    */
    int eof;                 /* the client shut its side: answer, then close   */
    int close_after;         /* close once `out` has gone                      */
    int leaving;             /* a client waits for its slot: close once `out`
                                has gone, answering nothing more              */
    char in[RP_CONTROL_REQUEST_MAX];
};

/* Why the server closed a connection: control_conn.c logs each kind at most
 * once a second, and counts the lines it leaves out (struct rp_control_rate). */
enum rp_control_drop {
    RP_CONTROL_DROP_UNREAD, RP_CONTROL_DROP_INCOMPLETE, RP_CONTROL_DROP_SILENT,
    RP_CONTROL_DROP_EVICTED, RP_CONTROL_DROP_REFUSED, RP_CONTROL_DROP_KINDS
};

struct rp_control_rate {
    uint64_t logged_ms;      /* the last line of the kind went out             */
    uint64_t unlogged;       /* lines left out since                           */
};

struct rp_control {
    char path[RP_CONTROL_PATH_MAX + 1];   /* resolved: bound and advertised    */
    char dir[RP_CONTROL_PATH_MAX + 1];    /* its directory, resolved           */
    const char *name;                     /* its last component, in `path`     */
    int dirfd;                            /* `dir`, held open                  */
    struct rp_control_ops ops;
    void *ctx;
    int lfd;
    int wake[2];
    pthread_t thread;
    clockid_t cpu_clock;
    int have_cpu_clock;
    dev_t dev;               /* of the socket file we bound                    */
    ino_t ino;
    uid_t uid;               /* our effective uid                              */
    struct rp_control_conn *conns[RP_CONTROL_CLIENTS_MAX];
    size_t nconns;
    size_t held;             /* bytes of the replies the connections hold      */
    uint64_t accept_after_ms;
    uint64_t check_ms;       /* the next look at the socket file               */
    char remake_why[512];    /* why it could not be made again, logged once    */
    struct rp_control_rate drops[RP_CONTROL_DROP_KINDS];
    struct {                 /* since start, for status ("control")            */
        uint64_t busy, dropped, evicted, remade;
    } st;
    struct rp_json reply;    /* the reply being made                           */
};

/* ------------------------------------------------------------ control.c -- */

/* One line to ops.log (cut at 512 bytes); nothing without it. */
__attribute__((format(printf, 2, 3)))
void rp_control_logf(struct rp_control *ctl, const char *fmt, ...);

/* ------------------------------------------------------- control_path.c -- */

/* Resolve and check `path`'s directory, hold it open, clear the name (a stale
 * socket is removed; anything else refused) and bind there: ctl->path, dir,
 * name, dirfd, dev, ino and lfd set. @return 0, or -1 with err (the sentences
 * of rp_control_start). */
int rp_control_bind(struct rp_control *ctl, const char *path, char *err, size_t errlen);

/* Every RP_CONTROL_CHECK_MS: make the socket again if its file has gone
 * (control.h, "Recovery"). */
void rp_control_check_socket(struct rp_control *ctl);

/* Remove the socket file if it is still the one we bound. */
void rp_control_unlink_ours(const struct rp_control *ctl);

/* ------------------------------------------------------- control_conn.c -- */

/* Accept the clients waiting, as long as there is a slot: a refused peer gets
 * its error reply and is closed. */
void rp_control_accept(struct rp_control *ctl, uint64_t now);

/* Readable, or writable with a reply out: read or send, then answer what is
 * complete. @return 0, or -1 when the connection must be closed. */
int rp_control_conn_ready(struct rp_control *ctl, struct rp_control_conn *c,
                          uint64_t now);

/* Close connection i (the last one takes its slot) and free its reply. */
void rp_control_conn_close(struct rp_control *ctl, size_t i);

/* When connection c's time is up (ms, rp_mono_ms), for poll's timeout. */
uint64_t rp_control_conn_due(const struct rp_control_conn *c);

/* Every slot is taken: could rp_control_make_room free one? And free one (or
 * set connections leaving) for a client that waits. */
int rp_control_room_to_make(const struct rp_control *ctl);
void rp_control_make_room(struct rp_control *ctl, uint64_t now);

/* Close the connections whose time is up, and log why. */
void rp_control_drop_late(struct rp_control *ctl, uint64_t now);

/* ------------------------------------------------------ control_reply.c -- */

/* Answer one request line (without "\n") into ctl->reply, "\n" included: the
 * command's reply, or an error reply. */
void rp_control_answer(struct rp_control *ctl, const char *line, size_t len);

/* An error reply with `msg` (cmd RP_CTL_NONE: no "command"), finished, in j. */
void rp_control_error_reply(struct rp_json *j, enum rp_ctl_cmd cmd, const char *msg);

#endif
