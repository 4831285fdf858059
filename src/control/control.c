/*
 * src/control/control.c — the control socket server's thread: start, the loop,
 * stop (control.h).
 *
 * One thread serves every client with poll(2): a wake-up pipe for
 * rp_control_stop, the listening socket, and up to RP_CONTROL_CLIENTS_MAX
 * connections. Each turn it looks at the socket file when a check is due
 * (control_path.c), waits until something is ready or a connection's time is
 * up, lets the ready connections read, answer and send (control_conn.c,
 * control_reply.c), accepts the clients that wait (making room for them when
 * every slot is taken), and drops the connections that are late. The thread
 * blocks every signal: the agent's timer signals and the JVM's own never land
 * here. The server's state is struct rp_control (control_server.h), touched by
 * this thread only between rp_control_start and rp_control_stop.
 */
#include "ringprof/clock.h"
#include "ringprof/errbuf.h"
#include "control/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void rp_control_logf(struct rp_control *ctl, const char *fmt, ...)
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

/* --------------------------------------------------------------- the loop -- */

/* Fill pfd for one poll: the wake-up pipe, the listening socket while a client
 * can be taken (a full table still listens while a slot can be made), each
 * connection for its next step. @return poll's timeout: until the first thing
 * due (the socket check, the end of an accept back-off, a deadline). */
static int poll_set(struct rp_control *ctl, struct pollfd *pfd, uint64_t now)
{
    uint64_t next = ctl->check_ms;
    pfd[0] = (struct pollfd){.fd = ctl->wake[0], .events = POLLIN};
    int room = ctl->nconns < RP_CONTROL_CLIENTS_MAX || rp_control_room_to_make(ctl);
    int accepting = room && now >= ctl->accept_after_ms;
    pfd[1] = (struct pollfd){.fd = accepting ? ctl->lfd : -1, .events = POLLIN};
    if (!accepting && room && ctl->accept_after_ms < next)
        next = ctl->accept_after_ms;
    for (size_t i = 0; i < ctl->nconns; i++) {
        const struct rp_control_conn *c = ctl->conns[i];
        uint64_t d = rp_control_conn_due(c);
        if (d < next)
            next = d;
        pfd[2 + i] = (struct pollfd){.fd = c->fd, .events = c->out ? POLLOUT : POLLIN};
    }
    return next > now ? (int)(next - now) : 0;
}

/* What poll found ready among the first n connections, then the clients that
 * wait to connect. Descending, so closing (which moves the last connection
 * into slot i) never skips one that has not been looked at. */
static void serve_ready(struct rp_control *ctl, const struct pollfd *pfd, size_t n,
                        uint64_t now)
{
    for (size_t i = n; i-- > 0;) {
        short ev = pfd[2 + i].revents;
        if (!ev)
            continue;
        if (rp_control_conn_ready(ctl, ctl->conns[i], now) != 0 || (ev & POLLNVAL))
            rp_control_conn_close(ctl, i);
    }
    if (pfd[1].revents) {
        if (ctl->nconns == RP_CONTROL_CLIENTS_MAX)
            rp_control_make_room(ctl, now);
        rp_control_accept(ctl, now);
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
            rp_control_check_socket(ctl);
            ctl->check_ms = now + RP_CONTROL_CHECK_MS;
        }
        size_t n = ctl->nconns;
        int r = poll(pfd, 2 + n, poll_set(ctl, pfd, now));
        if (r < 0 && errno != EINTR) {
            rp_control_logf(ctl, "control socket %s: poll failed (%s); the server stops",
                            ctl->path, strerror(errno));
            break;
        }
        if (r > 0 && pfd[0].revents)
            break;
        now = rp_mono_ms();
        if (r > 0)
            serve_ready(ctl, pfd, n, now);
        rp_control_drop_late(ctl, now);
    }
    while (ctl->nconns)
        rp_control_conn_close(ctl, ctl->nconns - 1);
    return NULL;
}

/* ----------------------------------------------------------- start, stop -- */

static void control_free(struct rp_control *ctl)
{
    if (ctl->wake[0] >= 0) {
        close(ctl->wake[0]);
        close(ctl->wake[1]);
    }
    if (ctl->lfd >= 0) {
        rp_control_unlink_ours(ctl);
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
        rp_fail(err, errlen, "no control socket path or callbacks given");
        return NULL;
    }
    size_t plen = strlen(path);
    if (plen > RP_CONTROL_PATH_MAX) {
        rp_fail(err, errlen, "control socket path is too long (%zu bytes, at most %d: "
                "a Unix socket path must fit in 108 bytes): %s", plen,
                RP_CONTROL_PATH_MAX, path);
        return NULL;
    }
    struct rp_control *ctl = calloc(1, sizeof *ctl);
    if (!ctl) {
        rp_fail(err, errlen, "out of memory");
        return NULL;
    }
    ctl->ops = *ops;
    ctl->ctx = ctx;
    ctl->uid = geteuid();
    ctl->wake[0] = ctl->wake[1] = -1;
    ctl->lfd = ctl->dirfd = -1;
    rp_json_init(&ctl->reply, RP_CONTROL_REPLY_MAX);

    if (rp_control_bind(ctl, path, err, errlen) != 0)
        goto fail;
    if (pipe2(ctl->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        rp_fail(err, errlen, "cannot create a pipe for the control server: %s",
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
        rp_fail(err, errlen, "cannot start the control server thread: %s", strerror(rc));
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
