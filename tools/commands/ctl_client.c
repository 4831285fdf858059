/*
 * tools/commands/ctl_client.c — one request and its reply over an agent's
 * control socket, and the socket path an operator gives (ctl_client.h, "the
 * control socket"); the agent's side is src/control/.
 *
 * An exchange uses a blocking socket with SO_SNDTIMEO/SO_RCVTIMEO (Linux
 * honours the send timeout in connect, which waits while the server's backlog
 * is full) under one overall deadline, and checks who serves the socket
 * (SO_PEERCRED) before it sends anything. A reply is one line, read up to
 * RP_CONTROL_THREADS_REPLY_MAX. Each way it can fail has its own sentence: no
 * socket, a stale one, permission, the wrong peer, no answer in time. A path
 * given by hand is resolved without following another user's symlinks.
 */
#include "ringprof/errbuf.h"
#include "ringprof/clock.h"
#include "ctl_client.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static void set_timeouts(int fd, int ms)
{
    if (ms < 1)
        ms = 1;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static int connect_error(const char *path, int e, int timeout_ms, char *err, size_t errlen)
{
    struct stat st;
    switch (e) {
    case ENOENT:
        return rp_fail(err, errlen, "no socket at %s", path);
    case ECONNREFUSED:
        return rp_fail(err, errlen, "the socket %s refuses connections (a stale file: its "
                    "agent is gone)", path);
    case EACCES:
    case EPERM:
        if (stat(path, &st) == 0)
            return rp_fail(err, errlen, "permission denied on %s (it belongs to uid %u; run "
                        "ringprof as that user or as root)", path, (unsigned)st.st_uid);
        return rp_fail(err, errlen, "permission denied on %s", path);
    case EAGAIN:
    case ETIMEDOUT:
    case EINPROGRESS:
        return rp_fail(err, errlen, "%s did not accept the connection within %d ms", path,
                    timeout_ms);
    case ENOTSOCK:
        return rp_fail(err, errlen, "%s is not a socket", path);
    default:
        return rp_fail(err, errlen, "cannot connect to %s: %s", path, strerror(e));
    }
}

/* Is the socket `fd` served by the process `expect` names, as its uid? */
static int check_peer(int fd, const char *path, const struct rp_ctl_peer *expect,
                      char *err, size_t errlen)
{
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0)
        return rp_fail(err, errlen, "cannot tell who serves %s (%s); not talking to it",
                    path, strerror(errno));
    if ((long)cr.pid == expect->pid && (long)cr.uid == expect->uid)
        return 0;
    return rp_fail(err, errlen, "%s is served by pid %ld (uid %u), not by pid %ld (uid %ld): "
                "another process put its socket where the agent's should be; not "
                "talking to it", path, (long)cr.pid, (unsigned)cr.uid, expect->pid,
                expect->uid);
}

/* Connect to `path` within timeout_ms and, with `expect`, check who serves it
 * before anything is sent. @return the socket, or -1 with err. */
static int connect_to(const char *path, int timeout_ms, const struct rp_ctl_peer *expect,
                      char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return rp_fail(err, errlen, "socket path too long (at most %zu bytes): %s",
                       sizeof sa.sun_path - 1, path);
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return rp_fail(err, errlen, "cannot create a socket: %s", strerror(errno));
    set_timeouts(fd, timeout_ms);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return connect_error(path, e, timeout_ms, err, errlen);
    }
    if (expect && check_peer(fd, path, expect, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Send `request` and its "\n". @return 0 with *send_errno the error that
 * stopped the send (0: all of it went), or -1 when out of memory. */
static int send_request(int fd, const char *request, int *send_errno)
{
    size_t rlen = strlen(request);
    char *line = malloc(rlen + 2);
    if (!line)
        return -1;
    memcpy(line, request, rlen);
    line[rlen++] = '\n';
    size_t off = 0;
    *send_errno = 0;
    while (off < rlen) {
        ssize_t w = send(fd, line + off, rlen - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            *send_errno = w < 0 ? errno : EIO;
            break;
        }
        off += (size_t)w;
    }
    free(line);
    return 0;
}

/* Double the reply buffer, up to what a reply may be. @return 0, or -1 with
 * err (and *buf freed). */
static int grow_reply(char **buf, size_t *cap, const char *path, char *err,
                      size_t errlen)
{
    if (*cap > (size_t)RP_CONTROL_THREADS_REPLY_MAX) {
        free(*buf);
        return rp_fail(err, errlen, "reply from %s is longer than %zu bytes", path,
                       (size_t)RP_CONTROL_THREADS_REPLY_MAX);
    }
    char *nb = realloc(*buf, *cap * 2);
    if (!nb) {
        free(*buf);
        return rp_fail(err, errlen, "out of memory");
    }
    *buf = nb;
    *cap *= 2;
    return 0;
}

/* Read up to the first "\n" or the end, by `deadline`. @return 0 with the
 * line (without "\n", NUL-terminated, malloc'd) in *out and its length in
 * *outlen, or -1 with err. */
static int read_reply(int fd, const char *path, uint64_t deadline, int timeout_ms,
                      char **out, size_t *outlen, char *err, size_t errlen)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return rp_fail(err, errlen, "out of memory");
    for (;;) {
        uint64_t now = rp_mono_ms();
        if (now >= deadline) {
            free(buf);
            return rp_fail(err, errlen, "no reply from %s within %d ms", path, timeout_ms);
        }
        set_timeouts(fd, (int)(deadline - now));
        if (len == cap && grow_reply(&buf, &cap, path, err, errlen) != 0)
            return -1;
        ssize_t n = recv(fd, buf + len, cap - len, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;      /* the deadline check above ends it */
        if (n < 0) {
            int e = errno;
            free(buf);
            return rp_fail(err, errlen, "cannot read the reply from %s: %s", path,
                           strerror(e));
        }
        char *nl = n > 0 ? memchr(buf + len, '\n', (size_t)n) : NULL;
        len += (size_t)n;
        if (nl)
            len = (size_t)(nl - buf);
        if (nl || n == 0)
            break;
    }
    if (len == cap) {
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            return rp_fail(err, errlen, "out of memory");
        }
        buf = nb;
    }
    buf[len] = '\0';
    *out = buf;
    *outlen = len;
    return 0;
}

int rp_ctl_exchange(const char *socket_path, const char *request, int timeout_ms,
                    const struct rp_ctl_peer *expect, char **reply, char *err,
                    size_t errlen)
{
    *reply = NULL;
    uint64_t deadline = rp_mono_ms() + (uint64_t)timeout_ms;
    int fd = connect_to(socket_path, timeout_ms, expect, err, errlen);
    if (fd < 0)
        return -1;
    int send_errno;
    if (send_request(fd, request, &send_errno) != 0) {
        close(fd);
        return rp_fail(err, errlen, "out of memory");
    }
    if (send_errno == EAGAIN || send_errno == EWOULDBLOCK) {
        close(fd);
        return rp_fail(err, errlen, "%s did not take the request within %d ms",
                       socket_path, timeout_ms);
    }
    /* Other send errors (EPIPE, ECONNRESET): the server may have answered and
     * closed at once (a refused peer gets an error reply); read what it sent. */
    char *buf = NULL;
    size_t len = 0;
    int rc = read_reply(fd, socket_path, deadline, timeout_ms, &buf, &len, err, errlen);
    close(fd);
    if (rc != 0)
        return -1;
    if (len == 0) {
        free(buf);
        if (send_errno)
            return rp_fail(err, errlen, "cannot send to %s: %s", socket_path,
                           strerror(send_errno));
        return rp_fail(err, errlen, "%s closed the connection without a reply", socket_path);
    }
    *reply = buf;
    return 0;
}

/* ---------------------------------------------------- a path given by hand -- */

/* Follow at most this many symlinks in a path, as the kernel does (MAXSYMLINKS). */
#define LINKS_MAX 40

/* Append the component p[0..len) to the resolved path `done` (cap bytes).
 * @return 0, or -1 if it does not fit. */
static int path_push(char *done, size_t cap, const char *p, size_t len)
{
    size_t n = strlen(done);
    if (n + 1 + len >= cap)
        return -1;
    done[n] = '/';
    memcpy(done + n + 1, p, len);
    done[n + 1 + len] = '\0';
    return 0;
}

/* The walk of rp_ctl_socket_path: `todo` is what is left of the path, `done`
 * what has been resolved (no symlink in it; "" is "/"). A symlink of ours or
 * root's is replaced by its target, as the kernel would; one of anybody else's
 * ends the walk with an error. A part that does not exist ends it too, with the
 * rest kept as it is: there is nothing there to connect to. */
static int walk_links(char *todo, size_t todocap, char *done, size_t cap, char *err,
                      size_t errlen)
{
    uid_t me = geteuid();
    int links = 0;
    char *p = todo;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            return 0;
        char *end = strchrnul(p, '/');
        size_t len = (size_t)(end - p);
        if (len == 1 && p[0] == '.') {
            p = end;
            continue;
        }
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            char *up = strrchr(done, '/');
            if (up)
                *up = '\0';
            p = end;
            continue;
        }
        size_t parent = strlen(done);
        if (path_push(done, cap, p, len) != 0)
            return rp_fail(err, errlen, "the path is too long");
        p = end;
        struct stat st;
        if (lstat(done, &st) != 0)
            return *p && path_push(done, cap, p + 1, strlen(p + 1)) != 0
                   ? rp_fail(err, errlen, "the path is too long") : 0;
        if (!S_ISLNK(st.st_mode))
            continue;
        if (st.st_uid != me && st.st_uid != 0)
            return rp_fail(err, errlen, "%s is a symlink of uid %u, who may point it at "
                           "a socket of theirs at any moment (give the socket's own "
                           "path, as `ringprof list` shows it, or the pid)", done,
                           (unsigned)st.st_uid);
        char target[PATH_MAX], rest[2 * PATH_MAX];
        ssize_t n = readlink(done, target, sizeof target - 1);
        if (n < 0)
            return rp_fail(err, errlen, "cannot read the symlink %s: %s", done,
                           strerror(errno));
        target[n] = '\0';
        if (++links > LINKS_MAX)
            return rp_fail(err, errlen, "more than %d symlinks on the way", LINKS_MAX);
        done[target[0] == '/' ? 0 : parent] = '\0';
        if ((size_t)snprintf(rest, sizeof rest, "%s%s", target, p) >= todocap)
            return rp_fail(err, errlen, "the path is too long");
        strcpy(todo, rest);
        p = todo;
    }
}

int rp_ctl_socket_path(const char *given, char *out, size_t cap, char *err,
                       size_t errlen)
{
    char done[PATH_MAX] = "", todo[2 * PATH_MAX], why[PATH_MAX + 256];
    if (given[0] != '/' && !getcwd(done, sizeof done))
        return rp_fail(err, errlen, "%s: cannot resolve a relative path: %s", given,
                       strerror(errno));
    if (!strcmp(done, "/"))
        done[0] = '\0';
    if ((size_t)snprintf(todo, sizeof todo, "%s", given) >= sizeof todo ||
        walk_links(todo, sizeof todo, done, sizeof done, why, sizeof why) != 0)
        return rp_fail(err, errlen, "not connecting to %s: %s", given,
                       strlen(given) >= sizeof todo ? "the path is too long" : why);
    if ((size_t)snprintf(out, cap, "%s", done[0] ? done : "/") >= cap)
        return rp_fail(err, errlen, "not connecting to %s: the path is too long", given);
    return 0;
}
