/*
 * src/control/control_conn.c — the server's connections: accepting, reading,
 * answering, sending, and the limits that keep clients from holding the server
 * (control_server.h; the limits are control.h's "Isolation").
 *
 * A connection has a fixed request buffer (RP_CONTROL_REQUEST_MAX) and at most
 * one pending reply. A complete line is answered (control_reply.c) and the
 * reply sent at once; what the socket does not take is kept and sent as the
 * client reads, and the connection is not read again until it has gone. So a
 * client that never reads costs one reply of memory and is dropped
 * RP_CONTROL_STALL_MS after the reply was made, and one that sends half a line
 * costs its 4 KiB buffer for as long. The replies held for all connections are
 * counted in ctl->held. A client that pipelines requests is never idle, so when
 * every slot is taken and a client waits, connections that were served are
 * closed after their reply in progress (make_room). Peers other than our uid
 * and root are refused with one error reply. What is dropped, evicted or
 * refused is logged at most once per REFUSAL_LOG_MS for each kind.
 */
#include "control/control_server.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* After accept fails for want of file descriptors, wait this long before the next
 * try, rather than spin on a listening socket that stays readable. */
#define ACCEPT_BACKOFF_MS 100
/* At most one refusal, and one dropped or evicted client, is logged per this many
 * ms; the others are counted and reported with the next line. */
#define REFUSAL_LOG_MS 1000

static void conn_drop_out(struct rp_control *ctl, struct rp_control_conn *c)
{
    if (c->out)
        ctl->held -= c->outlen;
    free(c->out);
    c->out = NULL;
    c->outlen = c->outoff = 0;
}

void rp_control_conn_close(struct rp_control *ctl, size_t i)
{
    struct rp_control_conn *c = ctl->conns[i];
    close(c->fd);
    conn_drop_out(ctl, c);
    free(c);
    ctl->conns[i] = ctl->conns[--ctl->nconns];
}

/* Send what can be sent now. @return 0, or -1 if the connection is dead. */
static int conn_send(struct rp_control *ctl, struct rp_control_conn *c, uint64_t now)
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
static int conn_reply(struct rp_control *ctl, struct rp_control_conn *c, uint64_t now)
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
static int has_input(const struct rp_control_conn *c)
{
    int n = 0;
    return c->inlen || (ioctl(c->fd, FIONREAD, &n) == 0 && n > 0);
}

/* The last word to a connection closed for a waiting client while it had
 * requests in hand: they are not answered, and it may send them again. */
static void send_leaving(struct rp_control *ctl, struct rp_control_conn *c)
{
    char msg[160];
    snprintf(msg, sizeof msg, "not answered: all %d control connections are in use "
             "and another client waits; connect again to send the rest",
             RP_CONTROL_CLIENTS_MAX);
    rp_control_error_reply(&ctl->reply, RP_CTL_NONE, msg);
    size_t len;
    const char *text = rp_json_text(&ctl->reply, &len);
    send_last(c->fd, text, len);
}

/* Answer the complete lines in c->in while nothing is pending. @return 0, or -1
 * if the connection should be closed now. */
static int conn_serve(struct rp_control *ctl, struct rp_control_conn *c, uint64_t now)
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
            rp_control_error_reply(&ctl->reply, RP_CTL_NONE, msg);
            c->inlen = 0;
            c->close_after = 1;
            return conn_reply(ctl, c, now);
        } else if (c->eof && c->inlen > 0) {
            len = c->inlen;     /* the last request, cut by the client's shutdown */
            c->close_after = 1;
        } else {
            return c->eof ? -1 : 0;
        }
        rp_control_answer(ctl, c->in, len);
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
static int conn_read(struct rp_control *ctl, struct rp_control_conn *c, uint64_t now)
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

int rp_control_conn_ready(struct rp_control *ctl, struct rp_control_conn *c,
                          uint64_t now)
{
    int rc = c->out ? conn_send(ctl, c, now) : conn_read(ctl, c, now);
    if (rc == 0 && !c->out)
        rc = conn_serve(ctl, c, now);
    return rc;
}

/* Log `line` unless a line of the same kind went out less than REFUSAL_LOG_MS
 * ago: then it is counted, and the count goes out with the next line. So a
 * crowd of stuck or refused clients costs a line a second. */
static void log_limited(struct rp_control *ctl, enum rp_control_drop kind, uint64_t now,
                        const char *line)
{
    struct rp_control_rate *r = &ctl->drops[kind];
    if (r->logged_ms && now - r->logged_ms < REFUSAL_LOG_MS) {
        r->unlogged++;
        return;
    }
    char more[64] = "";
    if (r->unlogged)
        snprintf(more, sizeof more, " (and %" PRIu64 " more since the last report)",
                 r->unlogged);
    rp_control_logf(ctl, "%s%s", line, more);
    r->logged_ms = now;
    r->unlogged = 0;
}

static void refuse(struct rp_control *ctl, int fd, const struct ucred *cred, uint64_t now)
{
    char msg[256];
    snprintf(msg, sizeof msg, "permission denied: uid %u may not use this control "
             "socket (only uid %u and root may)", (unsigned)cred->uid, (unsigned)ctl->uid);
    rp_control_error_reply(&ctl->reply, RP_CTL_NONE, msg);
    size_t len;
    const char *text = rp_json_text(&ctl->reply, &len);
    send_last(fd, text, len);
    close(fd);
    char line[512];
    snprintf(line, sizeof line, "refused a control connection from uid %u (pid %ld) on "
             "%s: only uid %u and root are accepted", (unsigned)cred->uid,
             (long)cred->pid, ctl->path, (unsigned)ctl->uid);
    log_limited(ctl, RP_CONTROL_DROP_REFUSED, now, line);
}

void rp_control_accept(struct rp_control *ctl, uint64_t now)
{
    while (ctl->nconns < RP_CONTROL_CLIENTS_MAX) {
        int fd = accept4(ctl->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                errno == ENOMEM) {
                rp_control_logf(ctl, "control socket %s: cannot accept a connection: "
                                "%s", ctl->path, strerror(errno));
                ctl->accept_after_ms = now + ACCEPT_BACKOFF_MS;
            }
            return;
        }
        struct ucred cred;
        socklen_t clen = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
            rp_control_logf(ctl, "control socket %s: cannot read a peer's credentials "
                            "(%s); connection refused", ctl->path, strerror(errno));
            close(fd);
            continue;
        }
        if (cred.uid != ctl->uid && cred.uid != 0) {
            refuse(ctl, fd, &cred, now);
            continue;
        }
        struct rp_control_conn *c = calloc(1, sizeof *c);
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

/* What a dropped client did not do, by enum rp_control_drop (log_drop). */
static const char *const drop_why[] = {
    "did not read its reply within", "sent an incomplete request for",
    "sent no request for", NULL, NULL,
};

/* When a connection's time is up: its first request must arrive whole within
 * STALL_MS of the connection, a later one within STALL_MS of its first byte, a
 * reply must be read whole within STALL_MS of being made, and a connection with
 * nothing pending after a request may stay IDLE_MS (or until a new client needs
 * its slot: rp_control_make_room). A reply's bound is on the whole of it, not on
 * progress: a client that reads a little at a time would otherwise hold its
 * reply (and its slot) for as long as it likes. *why is the enum rp_control_drop
 * of a client that failed to do its part, or -1 for one that only idled after
 * being served. */
static uint64_t conn_deadline(const struct rp_control_conn *c, int *why)
{
    if (c->out) {
        *why = RP_CONTROL_DROP_UNREAD;
        return c->out_ms + RP_CONTROL_STALL_MS;
    }
    if (!c->answered) {
        *why = c->inlen ? RP_CONTROL_DROP_INCOMPLETE : RP_CONTROL_DROP_SILENT;
        return c->conn_ms + RP_CONTROL_STALL_MS;
    }
    if (c->inlen) {
        *why = RP_CONTROL_DROP_INCOMPLETE;
        return c->req_start_ms + RP_CONTROL_STALL_MS;
    }
    *why = -1;
    return c->idle_ms + RP_CONTROL_IDLE_MS;
}

uint64_t rp_control_conn_due(const struct rp_control_conn *c)
{
    int why;
    return conn_deadline(c, &why);
}

/* A line about a dropped or evicted client (uid and pid: the one it names, of
 * those it is about). */
static void log_drop(struct rp_control *ctl, uint64_t now, uid_t uid, pid_t pid,
                     enum rp_control_drop kind, const char *what)
{
    char line[512];
    snprintf(line, sizeof line, "control socket %s: %s (uid %u, pid %ld)", ctl->path,
             what, (unsigned)uid, (long)pid);
    log_limited(ctl, kind, now, line);
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
        const struct rp_control_conn *c = ctl->conns[i];
        if (!c->answered || c->out || c->close_after || c->leaving || has_input(c))
            continue;
        if (best < 0 || c->idle_ms < ctl->conns[best]->idle_ms)
            best = (long)i;
    }
    return best;
}

/* Could rp_control_make_room free a slot: is some connection served before,
 * and neither leaving nor closing already? */
int rp_control_room_to_make(const struct rp_control *ctl)
{
    for (size_t i = 0; i < ctl->nconns; i++) {
        const struct rp_control_conn *c = ctl->conns[i];
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
void rp_control_make_room(struct rp_control *ctl, uint64_t now)
{
    char what[160];
    long i = oldest_idle(ctl);
    if (i >= 0) {
        snprintf(what, sizeof what, "all %d connections in use: closed the one idle "
                 "longest (%" PRIu64 " ms) for a new client", RP_CONTROL_CLIENTS_MAX,
                 now - ctl->conns[i]->idle_ms);
        const struct rp_control_conn *c = ctl->conns[i];
        log_drop(ctl, now, c->uid, c->pid, RP_CONTROL_DROP_EVICTED, what);
        ctl->st.evicted++;
        rp_control_conn_close(ctl, (size_t)i);
        return;
    }
    size_t told = 0;
    uid_t uid = 0;
    pid_t pid = 0;
    for (size_t k = ctl->nconns; k-- > 0;) {
        struct rp_control_conn *c = ctl->conns[k];
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
            rp_control_conn_close(ctl, k);
        }
    }
    if (!told)
        return;
    snprintf(what, sizeof what, "all %d connections in use, none idle: closing the "
             "%zu served before once their replies in progress have gone, for new "
             "clients", RP_CONTROL_CLIENTS_MAX, told);
    log_drop(ctl, now, uid, pid, RP_CONTROL_DROP_EVICTED, what);
}


/* Close the connections whose time is up (conn_deadline), and log why. */
void rp_control_drop_late(struct rp_control *ctl, uint64_t now)
{
    for (size_t i = ctl->nconns; i-- > 0;) {
        struct rp_control_conn *c = ctl->conns[i];
        int why;
        if (now < conn_deadline(c, &why))
            continue;
        if (why >= 0) {
            char what[96];
            snprintf(what, sizeof what, "dropped a client that %s %d ms",
                     drop_why[why], RP_CONTROL_STALL_MS);
            log_drop(ctl, now, c->uid, c->pid, (enum rp_control_drop)why, what);
            ctl->st.dropped++;
        }
        rp_control_conn_close(ctl, i);
    }
}
