/*
 * src/control/control.c — the control socket server and the discovery file (control.h).
 *
 * One thread serves every client with poll(2): the listening socket, a wake-up
 * pipe for rp_control_stop, and up to RP_CONTROL_CLIENTS_MAX connections. Each
 * connection has a fixed request buffer (RP_CONTROL_REQUEST_MAX) and at most one
 * pending reply. A complete line is parsed (control_proto.c), answered through
 * the agent's callbacks, and the reply is sent at once; what the socket does not
 * take is kept and sent as the client reads, and the connection is not read again
 * until it has gone. So a client that never reads costs one reply of memory and is
 * dropped RP_CONTROL_STALL_MS after the reply was made, and one that sends half a
 * line costs its 4 KiB buffer for as long. The replies held for all connections
 * are counted, and a request whose reply could take them past RP_CONTROL_HELD_MAX
 * is answered "busy" without running it. A client that pipelines requests is never
 * idle, so when every slot is taken and a client waits, connections that were
 * served are closed after their reply in progress. The thread blocks every
 * signal: the agent's timer signals and the JVM's own never land here.
 *
 * The socket's directory is resolved and checked once and held open (dirfd); the
 * socket is bound at the resolved path and removed through dirfd. Once a second
 * the thread looks for the socket file and, when it has gone, makes it again.
 *
 * The second half writes the discovery files in "/tmp/ringprof-<uid>/".
 */
#include "ringprof/clock.h"
#include "control/control.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#ifndef RINGPROF_VERSION
#define RINGPROF_VERSION "unknown"
#endif

/* After accept fails for want of file descriptors, wait this long before the next
 * try, rather than spin on a listening socket that stays readable. */
#define ACCEPT_BACKOFF_MS 100
/* At most one refusal, and one dropped or evicted client, is logged per this many
 * ms; the others are counted and reported with the next line. */
#define REFUSAL_LOG_MS 1000

struct conn {
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
    struct conn *conns[RP_CONTROL_CLIENTS_MAX];
    size_t nconns;
    size_t held;             /* bytes of the replies the connections hold      */
    uint64_t accept_after_ms;
    uint64_t check_ms;       /* the next look at the socket file               */
    char remake_why[512];    /* why it could not be made again, logged once    */
    uint64_t refusal_logged_ms, refusals_unlogged;
    struct {                 /* per kind of drop (enum drop): see log_drop     */
        uint64_t logged_ms, unlogged;
    } drops[4];
    struct {                 /* since start, for status ("control")            */
        uint64_t busy, dropped, evicted, remade;
    } st;
    struct rp_json reply;
};

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static void logf_(struct rp_control *ctl, const char *fmt, ...)
{
    if (!ctl->ops.log)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ctl->ops.log(ctl->ctx, line);
}

/* ---------------------------------------------------------------- replies -- */

static void reply_head(struct rp_json *j, int ok, enum rp_ctl_cmd cmd)
{
    rp_json_reset(j);
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "protocol", RP_CONTROL_PROTOCOL);
    rp_json_kv_bool(j, "ok", ok);
    if (rp_ctl_cmd_name(cmd) && cmd != RP_CTL_NONE)
        rp_json_kv_string(j, "command", rp_ctl_cmd_name(cmd));
}

static void reply_error(struct rp_json *j, enum rp_ctl_cmd cmd, const char *msg)
{
    reply_head(j, 0, cmd);
    rp_json_kv_string(j, "error", msg);
}

static void kinds_array(struct rp_json *j, unsigned kinds)
{
    rp_json_array_begin(j);
    for (unsigned bit = 1; bit <= RP_CTL_KIND_ALL; bit <<= 1)
        if (kinds & bit)
            rp_json_string(j, rp_ctl_kind_name(bit));
    rp_json_array_end(j);
}

static void reply_help(struct rp_json *j)
{
    rp_json_key(j, "commands");
    rp_json_array_begin(j);
    for (int c = RP_CTL_STATUS; c <= RP_CTL_HELP; c++)
        rp_json_string(j, rp_ctl_cmd_name((enum rp_ctl_cmd)c));
    rp_json_array_end(j);
    rp_json_key(j, "kinds");
    kinds_array(j, RP_CTL_KIND_ALL);
    rp_json_key(j, "settings");
    rp_json_array_begin(j);
    rp_json_string(j, rp_ctl_key_name(RP_CTL_KEY_INTERVAL));
    rp_json_string(j, rp_ctl_key_name(RP_CTL_KEY_ALLOC));
    rp_json_string(j, rp_ctl_key_name(RP_CTL_KEY_LOCK));
    rp_json_string(j, rp_ctl_key_name(RP_CTL_KEY_WALL));
    rp_json_string(j, rp_ctl_key_name(RP_CTL_KEY_WALLTHREADS));
    rp_json_array_end(j);
}

static void reply_settings(struct rp_json *j, const struct rp_ctl_request *req)
{
    rp_json_key(j, "settings");
    rp_json_object_begin(j);
    for (size_t i = 0; i < req->nsettings; i++) {
        const struct rp_ctl_setting *s = &req->settings[i];
        rp_json_kv_u64(j, s->key == RP_CTL_KEY_INTERVAL ? "interval_ns"
                        : s->key == RP_CTL_KEY_ALLOC ? "alloc_bytes"
                        : s->key == RP_CTL_KEY_LOCK ? "lock_ns"
                        : s->key == RP_CTL_KEY_WALL ? "wall_ns" : "wallthreads",
                       s->value);
    }
    rp_json_object_end(j);
}

/* The server's own part of status: its connections, the reply memory it holds,
 * and the clients it turned away (docs/control.md, "control"). */
static void status_control(const struct rp_control *ctl, struct rp_json *j)
{
    rp_json_key(j, "control");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "clients", ctl->nconns);
    rp_json_kv_u64(j, "clients_max", RP_CONTROL_CLIENTS_MAX);
    rp_json_kv_u64(j, "reply_bytes", ctl->held);
    rp_json_kv_u64(j, "reply_bytes_max", RP_CONTROL_HELD_MAX);
    rp_json_kv_u64(j, "busy", ctl->st.busy);
    rp_json_kv_u64(j, "dropped", ctl->st.dropped);
    rp_json_kv_u64(j, "evicted", ctl->st.evicted);
    rp_json_kv_u64(j, "socket_remade", ctl->st.remade);
    rp_json_object_end(j);
}

/* Run the command. @return 0 with the members added to the open reply, or -1
 * with the reason in err. */
static int run_command(struct rp_control *ctl, const struct rp_ctl_request *req,
                       char *err, size_t errlen)
{
    struct rp_json *j = &ctl->reply;
    const struct rp_control_ops *ops = &ctl->ops;
    char path[4096];
    int rc = 0;
    const char *name = rp_ctl_cmd_name(req->cmd);

#define NEED(fn)                                                                 \
    if (!ops->fn) {                                                              \
        set_err(err, errlen, "'%s' is not supported by this agent", name);      \
        return -1;                                                               \
    }
    switch (req->cmd) {
    case RP_CTL_STATUS:
        NEED(status);
        rc = ops->status(ctl->ctx, j, err, errlen);
        if (rc == 0 && rp_json_depth(j) == 1)
            status_control(ctl, j);
        return rc;
    case RP_CTL_FLUSH:
    case RP_CTL_ROTATE:
        path[0] = '\0';
        if (req->cmd == RP_CTL_FLUSH) {
            NEED(flush);
            rc = ops->flush(ctl->ctx, path, sizeof path, err, errlen);
        } else {
            NEED(rotate);
            rc = ops->rotate(ctl->ctx, path, sizeof path, err, errlen);
        }
        if (rc == 0) {
            path[sizeof path - 1] = '\0';
            rp_json_kv_string(j, "path", path[0] ? path : NULL);
        }
        return rc;
    case RP_CTL_START:
    case RP_CTL_STOP:
        if (req->cmd == RP_CTL_START) {
            NEED(start);
            rc = ops->start(ctl->ctx, req->kinds, err, errlen);
        } else {
            NEED(stop);
            rc = ops->stop(ctl->ctx, req->kinds, err, errlen);
        }
        if (rc == 0) {
            rp_json_key(j, "kinds");
            kinds_array(j, req->kinds);
        }
        return rc;
    case RP_CTL_SET:
        NEED(set);
        rc = ops->set(ctl->ctx, req->settings, req->nsettings, err, errlen);
        if (rc == 0)
            reply_settings(j, req);
        return rc;
    case RP_CTL_THREADS:
        NEED(threads);
        return ops->threads(ctl->ctx, j, err, errlen);
    case RP_CTL_VERSION:
        rp_json_kv_string(j, "ringprof", RINGPROF_VERSION);
        rp_json_kv_i64(j, "pid", (int64_t)getpid());
        return 0;
    case RP_CTL_HELP:
        reply_help(j);
        return 0;
    default:
        set_err(err, errlen, "internal error: command %d has no handler", (int)req->cmd);
        return -1;
    }
#undef NEED
}

/* Close the reply object and end the line. @return 0, or -1 if the writer failed
 * (then the text is not a whole reply). */
static int reply_finish(struct rp_json *j)
{
    rp_json_object_end(j);
    rp_json_raw(j, "\n", 1);
    return rp_json_error(j) == RP_JSON_OK ? 0 : -1;
}

/* Why a reply that the agent filled could not be sent as it is. */
static const char *reply_problem(const struct rp_json *j, char *buf, size_t cap)
{
    switch (rp_json_error(j)) {
    case RP_JSON_TOO_LONG:
        snprintf(buf, cap, "reply too large (over %zu bytes)", rp_json_max(j));
        return buf;
    case RP_JSON_NOMEM:
        return "out of memory while building the reply";
    default:
        return "internal error: the agent wrote a malformed reply";
    }
}

/* Would a reply of up to `most` bytes take the replies held past
 * RP_CONTROL_HELD_MAX? Then answer "busy" into ctl->reply instead of running the
 * command, and @return 1. A dump must also leave room for one other reply
 * (control.h). */
static int busy(struct rp_control *ctl, enum rp_ctl_cmd cmd, size_t most)
{
    size_t room = cmd == RP_CTL_THREADS ? RP_CONTROL_REPLY_MAX : 0;
    if (ctl->held + most + room <= RP_CONTROL_HELD_MAX)
        return 0;
    char msg[256];
    ctl->st.busy++;
    snprintf(msg, sizeof msg, "busy: %zu bytes of replies wait to be read by other "
             "clients, and this reply may take %zu more (at most %zu are held at "
             "once); try again when they have been read", ctl->held, most,
             (size_t)RP_CONTROL_HELD_MAX);
    reply_error(&ctl->reply, cmd, msg);
    reply_finish(&ctl->reply);
    return 1;
}

/* Answer one request line into ctl->reply, "\n" included. */
static void answer(struct rp_control *ctl, const char *line, size_t len)
{
    struct rp_json *j = &ctl->reply;
    struct rp_ctl_request req;
    char err[512], buf[128];

    if (rp_ctl_parse(line, len, &req, err, sizeof err) != 0) {
        reply_error(j, req.cmd, err);
        reply_finish(j);
        return;
    }
    size_t most = req.cmd == RP_CTL_THREADS ? RP_CONTROL_THREADS_REPLY_MAX
                                            : RP_CONTROL_REPLY_MAX;
    if (busy(ctl, req.cmd, most))
        return;
    reply_head(j, 1, req.cmd);
    rp_json_set_max(j, most);
    err[0] = '\0';
    if (run_command(ctl, &req, err, sizeof err) != 0) {
        if (!err[0])
            snprintf(err, sizeof err, "'%s' failed", rp_ctl_cmd_name(req.cmd));
        reply_error(j, req.cmd, err);
        reply_finish(j);
        return;
    }
    /* The agent's members must leave exactly the reply object open, and the
     * whole line must fit: otherwise the reply is replaced by an error reply
     * (short, so it always fits). */
    if (rp_json_depth(j) != 1 && rp_json_error(j) == RP_JSON_OK) {
        reply_error(j, req.cmd, "internal error: the agent wrote a malformed reply");
    } else if (reply_finish(j) == 0) {
        return;
    } else {
        reply_error(j, req.cmd, reply_problem(j, buf, sizeof buf));
    }
    reply_finish(j);
}

/* ------------------------------------------------------------ connections -- */

/* Free the connection's reply and take it off the memory held. */
static void conn_drop_out(struct rp_control *ctl, struct conn *c)
{
    if (c->out)
        ctl->held -= c->outlen;
    free(c->out);
    c->out = NULL;
    c->outlen = c->outoff = 0;
}

static void conn_close(struct rp_control *ctl, size_t i)
{
    struct conn *c = ctl->conns[i];
    close(c->fd);
    conn_drop_out(ctl, c);
    free(c);
    ctl->conns[i] = ctl->conns[--ctl->nconns];
}

/* Send what can be sent now. @return 0, or -1 if the connection is dead. */
static int conn_send(struct rp_control *ctl, struct conn *c, uint64_t now)
{
    while (c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c->outoff += (size_t)n;
            c->idle_ms = now;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            return -1;
        }
    }
    conn_drop_out(ctl, c);
    return 0;
}

/* Send a short reply once without waiting, for a connection about to be closed:
 * the client reads why instead of a connection closed without a word. */
static void send_last(int fd, const char *text, size_t len)
{
    ssize_t w = send(fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
}

/* The answer when there is no memory for a connection or its reply: built on the
 * stack. The caller closes fd. */
static void send_no_memory(int fd)
{
    char msg[128];
    int n = snprintf(msg, sizeof msg, "{\"protocol\":%u,\"ok\":false,\"error\":"
                     "\"out of memory in the agent; try again\"}\n",
                     (unsigned)RP_CONTROL_PROTOCOL);
    if (n > 0 && (size_t)n < sizeof msg)
        send_last(fd, msg, (size_t)n);
}

/* Queue the reply in ctl->reply and send what fits. A reply larger than the
 * writer keeps for the next one (a thread dump, up to
 * RP_CONTROL_THREADS_REPLY_MAX) is taken from it rather than copied, so the
 * largest reply exists once. @return 0, or -1 if dead. */
static int conn_reply(struct rp_control *ctl, struct conn *c, uint64_t now)
{
    size_t len;
    const char *text = rp_json_text(&ctl->reply, &len);
    if (len > RP_CONTROL_REPLY_MAX) {
        c->out = rp_json_take(&ctl->reply, &len);
    } else if ((c->out = malloc(len))) {
        memcpy(c->out, text, len);
        if (ctl->reply.cap > RP_CONTROL_REPLY_MAX)
            rp_json_free(&ctl->reply);
    }
    if (!c->out) {
        send_no_memory(c->fd);
        return -1;
    }
    c->outlen = len;
    c->outoff = 0;
    c->out_ms = now;
    ctl->held += len;
    return conn_send(ctl, c, now);
}

/* Has the client sent something not answered yet: a request in `in`, or bytes
 * still in the socket, not read? */
static int has_input(const struct conn *c)
{
    int n = 0;
    return c->inlen || (ioctl(c->fd, FIONREAD, &n) == 0 && n > 0);
}

/* The last word to a connection closed for a waiting client while it had
 * requests in hand: they are not answered, and it may send them again. */
static void send_leaving(struct rp_control *ctl, struct conn *c)
{
    char msg[160];
    snprintf(msg, sizeof msg, "not answered: all %d control connections are in use "
             "and another client waits; connect again to send the rest",
             RP_CONTROL_CLIENTS_MAX);
    reply_error(&ctl->reply, RP_CTL_NONE, msg);
    reply_finish(&ctl->reply);
    size_t len;
    const char *text = rp_json_text(&ctl->reply, &len);
    send_last(c->fd, text, len);
}

/* Answer the complete lines in c->in while nothing is pending. @return 0, or -1
 * if the connection should be closed now. */
static int conn_serve(struct rp_control *ctl, struct conn *c, uint64_t now)
{
    if (c->leaving && !c->out) {
        if (has_input(c))
            send_leaving(ctl, c);
        return -1;
    }
    while (!c->out && !c->close_after) {
        char *nl = memchr(c->in, '\n', c->inlen);
        size_t len;
        if (nl) {
            len = (size_t)(nl - c->in);
        } else if (c->inlen == sizeof c->in) {
            char msg[128];
            snprintf(msg, sizeof msg, "request too long (more than %d bytes with the "
                     "newline); closing the connection", RP_CONTROL_REQUEST_MAX);
            reply_error(&ctl->reply, RP_CTL_NONE, msg);
            reply_finish(&ctl->reply);
            c->inlen = 0;
            c->close_after = 1;
            return conn_reply(ctl, c, now);
        } else if (c->eof && c->inlen > 0) {
            len = c->inlen;     /* the last request, cut by the client's shutdown */
            c->close_after = 1;
        } else {
            return c->eof ? -1 : 0;
        }
        answer(ctl, c->in, len);
        c->answered = 1;
        size_t used = nl ? len + 1 : len;
        memmove(c->in, c->in + used, c->inlen - used);
        c->inlen -= used;
        c->req_start_ms = now;
        if (conn_reply(ctl, c, now) != 0)
            return -1;
    }
    if (!c->out && c->close_after)
        return -1;
    return 0;
}

/* Readable: take what there is, then answer. @return 0, or -1 to close. */
static int conn_read(struct rp_control *ctl, struct conn *c, uint64_t now)
{
    while (c->inlen < sizeof c->in) {
        ssize_t n = recv(c->fd, c->in + c->inlen, sizeof c->in - c->inlen, MSG_DONTWAIT);
        if (n > 0) {
            if (c->inlen == 0)
                c->req_start_ms = now;
            c->inlen += (size_t)n;
            c->idle_ms = now;
        } else if (n == 0) {
            c->eof = 1;
            break;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else {
            return -1;
        }
    }
    return conn_serve(ctl, c, now);
}

static void refuse(struct rp_control *ctl, int fd, const struct ucred *cred, uint64_t now)
{
    char msg[256];
    snprintf(msg, sizeof msg, "permission denied: uid %u may not use this control "
             "socket (only uid %u and root may)", (unsigned)cred->uid, (unsigned)ctl->uid);
    reply_error(&ctl->reply, RP_CTL_NONE, msg);
    reply_finish(&ctl->reply);
    size_t len;
    const char *text = rp_json_text(&ctl->reply, &len);
    send_last(fd, text, len);
    close(fd);

    if (ctl->refusal_logged_ms && now - ctl->refusal_logged_ms < REFUSAL_LOG_MS) {
        ctl->refusals_unlogged++;
        return;
    }
    char more[64] = "";
    if (ctl->refusals_unlogged)
        snprintf(more, sizeof more, " (and %" PRIu64 " more since the last report)",
                 ctl->refusals_unlogged);
    logf_(ctl, "refused a control connection from uid %u (pid %ld) on %s: "
          "only uid %u and root are accepted%s", (unsigned)cred->uid, (long)cred->pid,
          ctl->path, (unsigned)ctl->uid, more);
    ctl->refusal_logged_ms = now;
    ctl->refusals_unlogged = 0;
}

static void accept_all(struct rp_control *ctl, uint64_t now)
{
    while (ctl->nconns < RP_CONTROL_CLIENTS_MAX) {
        int fd = accept4(ctl->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                errno == ENOMEM) {
                logf_(ctl, "control socket %s: cannot accept a connection: %s",
                      ctl->path, strerror(errno));
                ctl->accept_after_ms = now + ACCEPT_BACKOFF_MS;
            }
            return;
        }
        struct ucred cred;
        socklen_t clen = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
            logf_(ctl, "control socket %s: cannot read a peer's credentials (%s); "
                  "connection refused", ctl->path, strerror(errno));
            close(fd);
            continue;
        }
        if (cred.uid != ctl->uid && cred.uid != 0) {
            refuse(ctl, fd, &cred, now);
            continue;
        }
        struct conn *c = calloc(1, sizeof *c);
        if (!c) {
            send_no_memory(fd);
            close(fd);
            return;
        }
        c->fd = fd;
        c->uid = cred.uid;
        c->pid = cred.pid;
        c->conn_ms = c->idle_ms = now;
        ctl->conns[ctl->nconns++] = c;
    }
}

/* Why a connection was closed by the server, for log_drop. */
enum drop { DROP_UNREAD, DROP_INCOMPLETE, DROP_SILENT, DROP_EVICTED };
static const char *const drop_why[] = {
    "did not read its reply within", "sent an incomplete request for",
    "sent no request for", NULL,
};

/* When a connection's time is up: its first request must arrive whole within
 * STALL_MS of the connection, a later one within STALL_MS of its first byte, a
 * reply must be read whole within STALL_MS of being made, and a connection with
 * nothing pending after a request may stay IDLE_MS (or until a new client needs
 * its slot: make_room). A reply's bound is on the whole of it, not on progress:
 * a client that reads a little at a time would otherwise hold its reply (and
 * its slot) for as long as it likes. *why is the enum drop of a client that
 * failed to do its part, or -1 for one that only idled after being served. */
static uint64_t conn_deadline(const struct conn *c, int *why)
{
    if (c->out) {
        *why = DROP_UNREAD;
        return c->out_ms + RP_CONTROL_STALL_MS;
    }
    if (!c->answered) {
        *why = c->inlen ? DROP_INCOMPLETE : DROP_SILENT;
        return c->conn_ms + RP_CONTROL_STALL_MS;
    }
    if (c->inlen) {
        *why = DROP_INCOMPLETE;
        return c->req_start_ms + RP_CONTROL_STALL_MS;
    }
    *why = -1;
    return c->idle_ms + RP_CONTROL_IDLE_MS;
}

/* A line about a dropped or evicted client (uid and pid: the one it names, of
 * those it is about): at most one per REFUSAL_LOG_MS for each kind of drop, so
 * a crowd of stuck clients costs a line a second. */
static void log_drop(struct rp_control *ctl, uint64_t now, uid_t uid, pid_t pid,
                     enum drop kind, const char *what)
{
    if (ctl->drops[kind].logged_ms && now - ctl->drops[kind].logged_ms < REFUSAL_LOG_MS) {
        ctl->drops[kind].unlogged++;
        return;
    }
    char more[64] = "";
    if (ctl->drops[kind].unlogged)
        snprintf(more, sizeof more, " (and %" PRIu64 " more since the last report)",
                 ctl->drops[kind].unlogged);
    logf_(ctl, "control socket %s: %s (uid %u, pid %ld)%s", ctl->path, what,
          (unsigned)uid, (long)pid, more);
    ctl->drops[kind].logged_ms = now;
    ctl->drops[kind].unlogged = 0;
}

/* The connection that has waited longest with nothing in progress (served at
 * least once, no request coming in or waiting in its socket, no reply pending),
 * or -1. A connection that has not sent its first request yet is not idle but
 * new: it may be one of many clients that connect at once and then ask, and it
 * has only STALL_MS to send its request anyway. */
static long oldest_idle(const struct rp_control *ctl)
{
    long best = -1;
    for (size_t i = 0; i < ctl->nconns; i++) {
        const struct conn *c = ctl->conns[i];
        if (!c->answered || c->out || c->close_after || c->leaving || has_input(c))
            continue;
        if (best < 0 || c->idle_ms < ctl->conns[best]->idle_ms)
            best = (long)i;
    }
    return best;
}

/* Could make_room free a slot: is some connection served before, and neither
 * leaving nor closing already? */
static int room_to_make(const struct rp_control *ctl)
{
    for (size_t i = 0; i < ctl->nconns; i++) {
        const struct conn *c = ctl->conns[i];
        if (c->answered && !c->leaving && !c->close_after)
            return 1;
    }
    return 0;
}

/* Every slot is taken and a client waits to connect. The connection idle longest
 * after being served is closed for it at once. With none idle, every connection
 * that was served before and is busy again (a reply going out, or its next
 * request coming in) leaves: it is closed once its reply has gone, so within
 * STALL_MS, and what it sent meanwhile is not answered (send_leaving says so).
 * A client that pipelines requests is never idle, and would otherwise keep its
 * slot for as long as it reads. A new connection is never taken: it has STALL_MS
 * for its first request. So no set of clients keeps a new one out for longer
 * than STALL_MS once they have been served, or twice that while they are still
 * sending their first requests. */
static void make_room(struct rp_control *ctl, uint64_t now)
{
    char what[160];
    long i = oldest_idle(ctl);
    if (i >= 0) {
        snprintf(what, sizeof what, "all %d connections in use: closed the one idle "
                 "longest (%" PRIu64 " ms) for a new client", RP_CONTROL_CLIENTS_MAX,
                 now - ctl->conns[i]->idle_ms);
        const struct conn *c = ctl->conns[i];
        log_drop(ctl, now, c->uid, c->pid, DROP_EVICTED, what);
        ctl->st.evicted++;
        conn_close(ctl, (size_t)i);
        return;
    }
    size_t told = 0;
    uid_t uid = 0;
    pid_t pid = 0;
    for (size_t k = ctl->nconns; k-- > 0;) {
        struct conn *c = ctl->conns[k];
        if (!c->answered || c->leaving || c->close_after)
            continue;
        c->leaving = 1;
        told++;
        ctl->st.evicted++;
        uid = c->uid;
        pid = c->pid;
        if (!c->out) {
            if (has_input(c))
                send_leaving(ctl, c);
            conn_close(ctl, k);
        }
    }
    if (!told)
        return;
    snprintf(what, sizeof what, "all %d connections in use, none idle: closing the "
             "%zu served before once their replies in progress have gone, for new "
             "clients", RP_CONTROL_CLIENTS_MAX, told);
    log_drop(ctl, now, uid, pid, DROP_EVICTED, what);
}

/* --------------------------------------------------------------- the loop -- */

static void check_socket(struct rp_control *ctl);

/* Close the connections whose time is up (conn_deadline), and log why. */
static void drop_late(struct rp_control *ctl, uint64_t now)
{
    for (size_t i = ctl->nconns; i-- > 0;) {
        struct conn *c = ctl->conns[i];
        int why;
        if (now < conn_deadline(c, &why))
            continue;
        if (why >= 0) {
            char what[96];
            snprintf(what, sizeof what, "dropped a client that %s %d ms",
                     drop_why[why], RP_CONTROL_STALL_MS);
            log_drop(ctl, now, c->uid, c->pid, (enum drop)why, what);
            ctl->st.dropped++;
        }
        conn_close(ctl, i);
    }
}

static void *serve(void *arg)
{
    struct rp_control *ctl = arg;
    struct pollfd pfd[2 + RP_CONTROL_CLIENTS_MAX];
    pthread_setname_np(pthread_self(), "ringprof-ctl");
    if (ctl->ops.thread_start)
        ctl->ops.thread_start(ctl->ctx);
    ctl->check_ms = rp_mono_ms() + RP_CONTROL_CHECK_MS;

    for (;;) {
        uint64_t now = rp_mono_ms();
        if (now >= ctl->check_ms) {
            check_socket(ctl);
            ctl->check_ms = now + RP_CONTROL_CHECK_MS;
        }
        size_t n = ctl->nconns;
        uint64_t next = ctl->check_ms;
        pfd[0] = (struct pollfd){.fd = ctl->wake[0], .events = POLLIN};
        /* A full table still listens while a slot can be made (make_room). */
        int room = n < RP_CONTROL_CLIENTS_MAX || room_to_make(ctl);
        int accepting = room && now >= ctl->accept_after_ms;
        pfd[1] = (struct pollfd){.fd = accepting ? ctl->lfd : -1, .events = POLLIN};
        if (!accepting && room && ctl->accept_after_ms < next)
            next = ctl->accept_after_ms;
        for (size_t i = 0; i < n; i++) {
            struct conn *c = ctl->conns[i];
            int why;
            uint64_t d = conn_deadline(c, &why);
            if (d < next)
                next = d;
            pfd[2 + i] = (struct pollfd){.fd = c->fd, .events = c->out ? POLLOUT : POLLIN};
        }
        int timeout = next > now ? (int)(next - now) : 0;
        int r = poll(pfd, 2 + n, timeout);
        if (r < 0 && errno != EINTR) {
            logf_(ctl, "control socket %s: poll failed (%s); the server stops",
                  ctl->path, strerror(errno));
            break;
        }
        if (r > 0 && pfd[0].revents)
            break;
        now = rp_mono_ms();

        /* Descending, so closing (which moves the last connection into slot i)
         * never skips one that has not been looked at. */
        for (size_t i = n; r > 0 && i-- > 0;) {
            struct conn *c = ctl->conns[i];
            short ev = pfd[2 + i].revents;
            if (!ev)
                continue;
            int rc = c->out ? conn_send(ctl, c, now) : conn_read(ctl, c, now);
            if (rc == 0 && !c->out)
                rc = conn_serve(ctl, c, now);
            if (rc != 0 || (ev & POLLNVAL))
                conn_close(ctl, i);
        }
        if (r > 0 && pfd[1].revents) {
            if (ctl->nconns == RP_CONTROL_CLIENTS_MAX)
                make_room(ctl, now);
            accept_all(ctl, now);
        }
        drop_late(ctl, now);
    }
    while (ctl->nconns)
        conn_close(ctl, ctl->nconns - 1);
    return NULL;
}

/* ----------------------------------------------------------- start, stop -- */

/* Is there a live server on the socket file at `path`? @return 1 live, 0 stale
 * (connection refused), -1 cannot tell (errno set). */
static int probe_socket(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    int e = errno;
    close(fd);
    if (rc == 0 || e == EAGAIN || e == EINPROGRESS)
        return 1;      /* accepted, or queued behind a full backlog: alive */
    if (e == ECONNREFUSED)
        return 0;
    errno = e;
    return -1;
}

/* Make the socket's name free for bind: absent, or a stale socket that we remove.
 * Looked at and removed through the directory we hold. */
static int clear_path(const struct rp_control *ctl, char *err, size_t errlen)
{
    const char *path = ctl->path;
    struct stat st;
    if (fstatat(ctl->dirfd, ctl->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return 0;
        set_err(err, errlen, "cannot check control socket path %s: %s", path,
                strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        set_err(err, errlen, "control socket path %s exists and is not a socket; "
                "not replacing it", path);
        return -1;
    }
    int live = probe_socket(path);
    if (live == 1) {
        set_err(err, errlen, "control socket %s is in use by a live process; "
                "not taking it over", path);
        return -1;
    }
    if (live < 0 && errno != ENOENT) {
        set_err(err, errlen, "cannot check the existing control socket %s: %s", path,
                strerror(errno));
        return -1;
    }
    if (unlinkat(ctl->dirfd, ctl->name, 0) != 0 && errno != ENOENT) {
        set_err(err, errlen, "cannot remove the stale control socket %s: %s", path,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* Open ctl->dir (resolved: no link in it) and keep it in ctl->dirfd. */
static int hold_dir(struct rp_control *ctl, char *err, size_t errlen)
{
    int fd = open(ctl->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        set_err(err, errlen, "cannot open the control socket's directory %s: %s",
                ctl->dir, strerror(errno));
        return -1;
    }
    if (ctl->dirfd >= 0)
        close(ctl->dirfd);
    ctl->dirfd = fd;
    return 0;
}

/* Where the socket goes. Its directory must be a trusted path for our uid
 * (ringprof/trust.h; sticky directories such as /tmp allowed, since nobody else
 * can remove or rename our socket there): in a directory another user may write,
 * that user could replace the socket with one of theirs and answer our tools in
 * our name. rp_trust_path checks the directory the path resolves to, so the
 * socket is bound, advertised and removed there, never through the path as
 * given: a symlink in it belongs to whoever made it, who may point it elsewhere
 * at any time. Binding through the held descriptor (/proc/self/fd/N/NAME) would work as
 * well, but would name the socket, in /proc/net/unix and getsockname, by a path
 * that means nothing outside this process; the resolved path holds no component
 * that anyone but us or root can change, so it is as safe and it is the name
 * tools can use. Sets ctl->path, ctl->dir, ctl->name and ctl->dirfd. */
static int locate(struct rp_control *ctl, const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX], real[PATH_MAX], why[PATH_MAX + 128];
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
        set_err(err, errlen, "control socket path %s does not end in a file name", path);
        return -1;
    }
    if (!slash)
        strcpy(dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (rp_trust_path(dir, geteuid(), 1, real, why, sizeof why) != 0) {
        if (access(dir, F_OK) != 0)
            set_err(err, errlen, "cannot bind control socket %s: %s", path,
                    strerror(errno));
        else
            set_err(err, errlen, "not creating control socket %s: %s; another user "
                    "could replace the socket with one of theirs", path, why);
        return -1;
    }
    int n = snprintf(ctl->path, sizeof ctl->path, "%s%s%s", real, real[1] ? "/" : "",
                     name);
    if (n < 0 || n > RP_CONTROL_PATH_MAX) {
        set_err(err, errlen, "control socket path is too long once its directory is "
                "resolved (%s%s%s, more than %d bytes: a Unix socket path must fit in "
                "108 bytes): %s", real, real[1] ? "/" : "", name, RP_CONTROL_PATH_MAX,
                path);
        return -1;
    }
    memcpy(ctl->dir, real, strlen(real) + 1);     /* shorter than ctl->path */
    ctl->name = ctl->path + n - strlen(name);
    return hold_dir(ctl, err, errlen);
}

/* Remove the socket file we made after a failure, through the held directory. */
static void unlink_made(const struct rp_control *ctl)
{
    unlinkat(ctl->dirfd, ctl->name, 0);
}

/* socket, bind with mode 0600, listen. The file the bind made must be the one
 * the held directory has under the name, and the path must lead to it: then
 * what we advertise is what we bound. @return the fd, or -1 with err. */
static int bind_socket(struct rp_control *ctl, char *err, size_t errlen)
{
    const char *path = ctl->path;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        set_err(err, errlen, "cannot create control socket: %s", strerror(errno));
        return -1;
    }
    /* Linux creates the file with the socket inode's mode less the umask. Setting
     * it first means the file is never wider than 0600, even for an instant; the
     * chmod after bind covers kernels that ignore it. Nobody can connect before
     * listen() below, so the order bind, chmod, listen has no window either way. */
    (void)fchmod(fd, S_IRUSR | S_IWUSR);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (errno == EADDRINUSE)
            set_err(err, errlen, "control socket %s is in use by a live process; "
                    "not taking it over", path);
        else
            set_err(err, errlen, "cannot bind control socket %s: %s", path,
                    strerror(errno));
        close(fd);
        return -1;
    }
    struct stat st, sp;
    errno = 0;
    if (fchmodat(ctl->dirfd, ctl->name, S_IRUSR | S_IWUSR, 0) != 0 ||
        fstatat(ctl->dirfd, ctl->name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISSOCK(st.st_mode) || (st.st_mode & 0777) != 0600) {
        set_err(err, errlen, "cannot make control socket %s private (mode 0600): %s",
                path, errno ? strerror(errno) : "mode did not change");
        unlink_made(ctl);
        close(fd);
        return -1;
    }
    if (lstat(path, &sp) != 0 || sp.st_dev != st.st_dev || sp.st_ino != st.st_ino) {
        set_err(err, errlen, "control socket %s is not in the directory that was "
                "checked (%s); not using it", path, ctl->dir);
        unlink_made(ctl);
        close(fd);
        return -1;
    }
    ctl->dev = st.st_dev;
    ctl->ino = st.st_ino;
    if (listen(fd, SOMAXCONN) != 0) {
        set_err(err, errlen, "cannot listen on control socket %s: %s", path,
                strerror(errno));
        unlink_made(ctl);
        close(fd);
        return -1;
    }
    return fd;
}

/* Remove the socket file if it is still the one we bound. */
static void unlink_ours(const struct rp_control *ctl)
{
    struct stat st;
    if (fstatat(ctl->dirfd, ctl->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        st.st_dev == ctl->dev && st.st_ino == ctl->ino)
        unlink_made(ctl);
}

/* Is `dir` (resolved) still a trusted path for us that resolves to itself, as
 * the socket's directory was at start? @return 0, or -1 with err. */
static int still_trusted(const char *dir, char *err, size_t errlen)
{
    char real[PATH_MAX], why[PATH_MAX + 128];
    if (rp_trust_path(dir, geteuid(), 1, real, why, sizeof why) != 0) {
        set_err(err, errlen, "not making it again in %s: %s; another user could "
                "replace the socket with one of theirs", dir, why);
        return -1;
    }
    if (strcmp(real, dir) != 0) {
        set_err(err, errlen, "%s now resolves to %s; not following it", dir, real);
        return -1;
    }
    return 0;
}

/* The directory for a new socket, checked as at start and held anew. If it is
 * gone it is made again (mode 0700, as the recording makes its directory), but
 * only in a parent that is itself still trusted: nothing is created where
 * another user could have put the path. */
static int remake_dir(struct rp_control *ctl, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(ctl->dir, &st) != 0 && errno == ENOENT) {
        char parent[sizeof ctl->dir];
        memcpy(parent, ctl->dir, sizeof parent);
        char *slash = strrchr(parent, '/');
        slash[slash == parent] = '\0';           /* "/x" keeps "/" */
        if (still_trusted(parent, err, errlen) != 0)
            return -1;
        if (mkdir(ctl->dir, 0700) != 0 && errno != EEXIST) {
            set_err(err, errlen, "cannot make its directory %s again: %s", ctl->dir,
                    strerror(errno));
            return -1;
        }
    }
    if (still_trusted(ctl->dir, err, errlen) != 0)
        return -1;
    return hold_dir(ctl, err, errlen);
}

/* On the server thread, every CHECK_MS: while the path leads to our socket there
 * is nothing to do. Otherwise (the file, or its directory, was removed) make it
 * again as at start, swap the new listening socket in (the connections of the
 * old one go on), and have the agent advertise it again. A failure is logged
 * once per reason and tried again at the next check. */
static void check_socket(struct rp_control *ctl)
{
    struct stat st;
    if (lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev && st.st_ino == ctl->ino)
        return;
    char err[512];
    int fd = -1;
    if (remake_dir(ctl, err, sizeof err) == 0 && clear_path(ctl, err, sizeof err) == 0)
        fd = bind_socket(ctl, err, sizeof err);
    if (fd < 0) {
        if (strcmp(err, ctl->remake_why) != 0)
            logf_(ctl, "control socket %s is gone and cannot be made again yet (tried "
                  "every %d ms): %s", ctl->path, RP_CONTROL_CHECK_MS, err);
        snprintf(ctl->remake_why, sizeof ctl->remake_why, "%s", err);
        return;
    }
    close(ctl->lfd);
    ctl->lfd = fd;
    ctl->remake_why[0] = '\0';
    ctl->st.remade++;
    logf_(ctl, "control socket %s had been removed; made it again", ctl->path);
    if (ctl->ops.rebound)
        ctl->ops.rebound(ctl->ctx);
}

static void control_free(struct rp_control *ctl)
{
    if (ctl->wake[0] >= 0) {
        close(ctl->wake[0]);
        close(ctl->wake[1]);
    }
    if (ctl->lfd >= 0) {
        unlink_ours(ctl);
        close(ctl->lfd);
    }
    if (ctl->dirfd >= 0)
        close(ctl->dirfd);
    rp_json_free(&ctl->reply);
    free(ctl);
}

struct rp_control *rp_control_start(const char *path, const struct rp_control_ops *ops,
                                    void *ctx, char *err, size_t errlen)
{
    if (!path || !*path || !ops) {
        set_err(err, errlen, "no control socket path or callbacks given");
        return NULL;
    }
    size_t plen = strlen(path);
    if (plen > RP_CONTROL_PATH_MAX) {
        set_err(err, errlen, "control socket path is too long (%zu bytes, at most %d: "
                "a Unix socket path must fit in 108 bytes): %s", plen,
                RP_CONTROL_PATH_MAX, path);
        return NULL;
    }
    struct rp_control *ctl = calloc(1, sizeof *ctl);
    if (!ctl) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    ctl->ops = *ops;
    ctl->ctx = ctx;
    ctl->uid = geteuid();
    ctl->wake[0] = ctl->wake[1] = -1;
    ctl->lfd = ctl->dirfd = -1;
    rp_json_init(&ctl->reply, RP_CONTROL_REPLY_MAX);

    if (locate(ctl, path, err, errlen) != 0 || clear_path(ctl, err, errlen) != 0 ||
        (ctl->lfd = bind_socket(ctl, err, errlen)) < 0)
        goto fail;
    if (pipe2(ctl->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        set_err(err, errlen, "cannot create a pipe for the control server: %s",
                strerror(errno));
        goto fail;
    }
    /* The thread starts with every signal blocked (it inherits our mask). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&ctl->thread, NULL, serve, ctl);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        set_err(err, errlen, "cannot start the control server thread: %s", strerror(rc));
        goto fail;
    }
    ctl->have_cpu_clock = pthread_getcpuclockid(ctl->thread, &ctl->cpu_clock) == 0;
    return ctl;

fail:
    control_free(ctl);
    return NULL;
}

void rp_control_stop(struct rp_control *ctl)
{
    if (!ctl)
        return;
    char b = 1;
    ssize_t w = write(ctl->wake[1], &b, 1);
    (void)w;
    pthread_join(ctl->thread, NULL);
    control_free(ctl);
}

const char *rp_control_path(const struct rp_control *ctl)
{
    return ctl->path;
}

uint64_t rp_control_cpu_ns(const struct rp_control *ctl)
{
    struct timespec ts;
    if (!ctl->have_cpu_clock || clock_gettime(ctl->cpu_clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------- discovery files -- */

/* Create `dir` (mode 0700) or accept it if it is a real directory owned by us; a
 * wider mode on our own directory is narrowed. @return 0 or -1 with err. */
static int private_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) == 0)
        return 0;
    if (errno != EEXIST) {
        set_err(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        set_err(err, errlen, "cannot check %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        set_err(err, errlen, "%s is not a directory owned by uid %u; not using it",
                dir, (unsigned)geteuid());
        return -1;
    }
    if ((st.st_mode & 077) && chmod(dir, 0700) != 0) {
        set_err(err, errlen, "cannot make %s private (mode 0700): %s", dir,
                strerror(errno));
        return -1;
    }
    return 0;
}

static int default_dir(char *buf, size_t cap)
{
    int n = snprintf(buf, cap, RP_DISCOVERY_DIR_FMT, (unsigned)geteuid());
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int rp_control_default_path(char *buf, size_t cap, const char *dir, long pid,
                            char *err, size_t errlen)
{
    int n = dir ? snprintf(buf, cap, "%s/ringprof-%ld.sock", dir, pid) : -1;
    if (n > 0 && (size_t)n < cap && n <= RP_CONTROL_PATH_MAX)
        return 0;
    char ddir[64];
    if (default_dir(ddir, sizeof ddir) != 0 || private_dir(ddir, err, errlen) != 0)
        return -1;
    n = snprintf(buf, cap, "%s/%ld.sock", ddir, pid);
    if (n < 0 || (size_t)n >= cap || n > RP_CONTROL_PATH_MAX) {
        set_err(err, errlen, "no room for a control socket path");
        return -1;
    }
    return 0;
}

/* Atomically replace `path` with `len` bytes of `text`, mode 0600. */
static int write_file(const char *path, const char *text, size_t len,
                      char *err, size_t errlen)
{
    char tmp[4200];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        set_err(err, errlen, "path too long: %s", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        set_err(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            set_err(err, errlen, "cannot write %s: %s", tmp, w < 0 ? strerror(errno)
                    : "short write");
            close(fd);
            unlink(tmp);
            return -1;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        set_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* The command line of this process, arguments joined by spaces, at most cap-1
 * bytes. */
static void self_cmdline(char *buf, size_t cap)
{
    buf[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return;
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
}

/* Field 22 of /proc/self/stat: the start time in clock ticks since boot. With the
 * pid it names this process uniquely for the life of the boot, so a reader can
 * tell our file from one left under a reused pid. */
static uint64_t self_start_ticks(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22 && p; field++)   /* p: the space before field+1 */
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

int rp_discovery_write(const struct rp_discovery *d, const char *dir,
                       char *path, size_t pathlen, char *err, size_t errlen)
{
    char ddir[4096];
    if (dir) {
        if (snprintf(ddir, sizeof ddir, "%s", dir) >= (int)sizeof ddir) {
            set_err(err, errlen, "discovery directory path too long");
            return -1;
        }
    } else if (default_dir(ddir, sizeof ddir) != 0) {
        set_err(err, errlen, "no room for the discovery directory");
        return -1;
    }
    if (private_dir(ddir, err, errlen) != 0)
        return -1;
    long pid = d->pid ? d->pid : (long)getpid();
    int n = snprintf(path, pathlen, "%s/%ld" RP_DISCOVERY_SUFFIX, ddir, pid);
    if (n < 0 || (size_t)n >= pathlen) {
        set_err(err, errlen, "no room for the discovery file's path");
        return -1;
    }

    uint64_t wall = d->start_wall_ns;
    if (!wall) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        wall = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    time_t secs = (time_t)(wall / 1000000000ull);
    struct tm tm;
    char when[32] = "";
    if (gmtime_r(&secs, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char cmdline[1024];
    if (!d->main)
        self_cmdline(cmdline, sizeof cmdline);

    struct rp_json j;
    rp_json_init(&j, 64 * 1024);
    rp_json_object_begin(&j);
    rp_json_kv_i64(&j, "pid", pid);
    rp_json_kv_u64(&j, "uid", geteuid());
    rp_json_kv_string(&j, "socket", d->socket);
    rp_json_kv_string(&j, "main", d->main ? d->main : cmdline);
    rp_json_kv_string(&j, "options", d->options);
    rp_json_kv_string(&j, "start_time", when);
    rp_json_kv_u64(&j, "start_wall_ns", wall);
    rp_json_kv_u64(&j, "proc_start_ticks", self_start_ticks());
    rp_json_kv_string(&j, "ringprof", RINGPROF_VERSION);
    rp_json_kv_u64(&j, "protocol", RP_CONTROL_PROTOCOL);
    rp_json_object_end(&j);
    rp_json_raw(&j, "\n", 1);
    int rc;
    if (rp_json_error(&j)) {
        set_err(err, errlen, "cannot format the discovery file (%s)",
                rp_json_error(&j) == RP_JSON_NOMEM ? "out of memory" : "too long");
        rc = -1;
    } else {
        size_t len;
        const char *text = rp_json_text(&j, &len);
        rc = write_file(path, text, len, err, errlen);
    }
    rp_json_free(&j);
    return rc;
}

void rp_discovery_remove(const char *path)
{
    if (path && *path)
        unlink(path);
}

/* One line for `ringprof attach` in "<discovery dir>/<pid><suffix>", cut at what
 * it reads; the path written to `path` (128 bytes). */
static int attach_line(const char *suffix, const char *message, char *path)
{
    char dir[64], err[256];
    if (default_dir(dir, sizeof dir) != 0 || private_dir(dir, err, sizeof err) != 0)
        return -1;
    snprintf(path, 128, "%s/%ld%s", dir, (long)getpid(), suffix);
    char line[RP_ATTACH_ERROR_MAX];   /* the most `ringprof attach` reads */
    int n = snprintf(line, sizeof line, "%s\n", message ? message : "");
    if (n < 0)
        return -1;
    if ((size_t)n >= sizeof line) {
        n = sizeof line - 1;
        line[n - 1] = '\n';
    }
    return write_file(path, line, (size_t)n, err, sizeof err);
}

int rp_discovery_attach_error(const char *message)
{
    char path[128];
    return attach_line(RP_ATTACH_ERROR_SUFFIX, message, path);
}

/* The attach-dir file written, for its removal at stop ("": none). Written and
 * removed under the agent's lifecycle lock only. */
static char g_attach_dir[128];

int rp_discovery_attach_dir(const char *dir)
{
    if (dir)
        return attach_line(RP_ATTACH_DIR_SUFFIX, dir, g_attach_dir);
    rp_discovery_remove(g_attach_dir);
    g_attach_dir[0] = '\0';
    return 0;
}
