/*
 * src/control/control.h — the control socket: a Unix socket server on its own thread that
 * answers `ringprof ctl` (protocol: docs/control.md), and the discovery file that
 * lets `ringprof list` find it.
 *
 * The module knows nothing of the JVM. The agent hands it a table of callbacks
 * (struct rp_control_ops) and an opaque context; the server parses each request
 * (control_proto.h), calls the one callback the command needs, and writes the
 * reply as one JSON object on one line (json.h). Everything else is the server's:
 *
 *   - Access. The socket file has mode 0600 from the moment it exists (the mode
 *     is set on the socket before bind, so the umask cannot widen it). Each peer's
 *     credentials are read with SO_PEERCRED; a peer whose uid is neither ours nor
 *     root gets an error reply and is disconnected, and the refusal is logged.
 *   - Isolation. The server thread blocks every signal, uses poll(2) on
 *     non-blocking sockets, and never calls into the application. A request is at
 *     most RP_CONTROL_REQUEST_MAX bytes; a longer one gets an error reply and the
 *     connection is closed. A connection holds at most one reply at a time (it is
 *     not read again until its reply has gone out), replies are at most
 *     RP_CONTROL_REPLY_MAX bytes, and the replies held for all connections
 *     together at most RP_CONTROL_HELD_MAX: a request whose reply could pass it
 *     gets a "busy" error reply instead. A connection is dropped when its first
 *     request has not arrived whole RP_CONTROL_STALL_MS after it connected, a
 *     later request RP_CONTROL_STALL_MS after its first byte, or a reply has not
 *     been read whole RP_CONTROL_STALL_MS after it was made. At most
 *     RP_CONTROL_CLIENTS_MAX connections are served at once; when all are taken
 *     and a client waits, the one idle longest after being served is closed for
 *     it, or, with none idle, every connection served before is closed once its
 *     reply in progress has gone (pipelined requests are not answered again), so
 *     a slot frees within RP_CONTROL_STALL_MS.
 *   - Path. The socket's directory must be one only our uid (or root) can
 *     change, or sticky (ringprof/trust.h): nobody else may be able to replace
 *     the socket. It is resolved once, checked, and held open; the socket is
 *     bound at the resolved path, whose every directory only we or root can
 *     change, so it is also the path to advertise (rp_control_path), and a link
 *     in the path as given that its owner re-points later leads nowhere of ours.
 *     A socket file left by a dead process (connect is refused) is replaced; a
 *     live one (connect succeeds) is never taken over, and anything that is not
 *     a socket is never removed. At stop the file is removed only if it is still
 *     the one this server bound, in the directory it holds.
 *   - Recovery. Every RP_CONTROL_CHECK_MS the server checks that its socket file
 *     is still there. When it is gone (the recording directory was removed), the
 *     server makes its directory again (mode 0700, if the parent is there),
 *     checks it as at start, binds a new socket at the same resolved path, and
 *     calls ops.rebound so the agent advertises it again; what fails is logged
 *     once and tried again at the next check.
 *
 * The server adds one member of its own to every status reply, "control": its
 * connections, the reply memory it holds and the clients it refused, dropped or
 * closed (docs/control.md).
 *
 * The callbacks run on the server thread, one at a time, never concurrently with
 * each other. A slow callback delays other clients, never the application.
 *
 * The server is control.c (the thread and its loop), control_path.c (Path and
 * Recovery), control_conn.c (Access and Isolation) and control_reply.c (the
 * replies), sharing control_server.h; the discovery files are
 * control_discovery.c, which needs none of the server.
 */
#ifndef RINGPROF_SRC_CONTROL_H
#define RINGPROF_SRC_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ringprof/trust.h"
#include "core/control_proto.h"
#include "core/json.h"

/* The server's own limits (docs/control.md, "Limits and timeouts"); those the
 * tools share are in ringprof/control.h.
 * CLIENTS_MAX: monitoring needs a handful; 64 x (4 KiB in + one reply out) bounds
 *   the server's memory. Clients beyond it wait in the kernel's listen backlog.
 * STALL_MS: a client whose first request has not arrived whole this long after
 *   it connected, whose later request has not this long after its first byte, or
 *   which has not read a whole reply this long after it was made, is dropped.
 *   5 s is far above what any real client needs (a 16 MiB dump is read in tens
 *   of milliseconds) and short enough that a stuck script cannot pin a slot or a
 *   reply's memory for long.
 * IDLE_MS: a connection with nothing pending after a request is closed after a
 *   minute, so a monitoring loop may keep one connection for requests a few
 *   seconds apart; sooner if a new client needs its slot. */
#define RP_CONTROL_CLIENTS_MAX 64
#define RP_CONTROL_STALL_MS    5000
#define RP_CONTROL_IDLE_MS     60000
/* HELD_MAX: the replies held for all connections together, waiting to be read.
 *   Each connection may hold one, and a thread dump's may be 16 MiB, so 64 slow
 *   readers of `threads` could otherwise make the JVM hold 1 GiB. A request is
 *   answered only if what is held plus the most its reply may take
 *   (RP_CONTROL_THREADS_REPLY_MAX for `threads`, else RP_CONTROL_REPLY_MAX) stays
 *   within it, and a dump must also leave room for one other reply: two full
 *   dumps at once, and a `status` is never refused for dumps that wait.
 * CHECK_MS: how often the server looks for its socket file. A removed socket is
 *   back within about this long; the check is one lstat. */
#define RP_CONTROL_HELD_MAX    (2 * RP_CONTROL_THREADS_REPLY_MAX + RP_CONTROL_REPLY_MAX)
#define RP_CONTROL_CHECK_MS    1000

/*
 * The agent's side. Every callback may be NULL: the command is then answered with
 * the error "'CMD' is not supported by this agent". Each gets the `ctx` given to
 * rp_control_start. A callback that fails returns -1 with one sentence in `err`
 * (errlen bytes, at least 256), which becomes the error reply.
 */
struct rp_control_ops {
    /* status: add the agent's members to the reply object `out` (it is open, and
     * "protocol", "ok" and "command" are already in it): rp_json_kv_*, nested
     * objects and arrays. The expected members are in docs/control.md; "state"
     * (a string) is required, `ringprof list` shows it. Must leave the nesting
     * as it found it. Errors of the writer itself need not be checked. */
    int (*status)(void *ctx, struct rp_json *out, char *err, size_t errlen);

    /* flush: write what the rings hold, close the current chunk, and copy the
     * finished file's path into `path` (pathlen bytes, PATH_MAX); "" if there was
     * no chunk. rotate: close the current chunk now without draining the rings
     * first; the path as for flush. */
    int (*flush)(void *ctx, char *path, size_t pathlen, char *err, size_t errlen);
    int (*rotate)(void *ctx, char *path, size_t pathlen, char *err, size_t errlen);

    /* start/stop sampling of the event kinds in `kinds` (RP_CTL_KIND_* bits, never
     * 0). Starting a kind that runs, or stopping one that is stopped, is not an
     * error. */
    int (*start)(void *ctx, unsigned kinds, char *err, size_t errlen);
    int (*stop)(void *ctx, unsigned kinds, char *err, size_t errlen);

    /* set: apply all `n` settings or none (values are already parsed and within
     * the RP_CTL_* bounds). */
    int (*set)(void *ctx, const struct rp_ctl_setting *settings, size_t n,
               char *err, size_t errlen);

    /* threads: add the thread dump's members to the reply object `out` (as for
     * status). The reply may grow to RP_CONTROL_THREADS_REPLY_MAX. */
    int (*threads)(void *ctx, struct rp_json *out, char *err, size_t errlen);

    /* log: one line for the operator, without "ringprof: " and without "\n"
     * (refused peers, dropped connections, server failures). NULL: not logged. */
    void (*log)(void *ctx, const char *line);

    /* thread_start: called once on the server thread before it serves anything,
     * e.g. so the agent can exclude the thread from sampling. May be NULL. */
    void (*thread_start)(void *ctx);

    /* rebound: the socket was made again at rp_control_path (its file or its
     * directory had been removed), on the server thread; the agent writes its
     * discovery file again. May be NULL. */
    void (*rebound)(void *ctx);
};

struct rp_control;

/*
 * rp_control_start: bind `path` (at most RP_CONTROL_PATH_MAX bytes), listen, and
 * start the server thread (named "ringprof-ctl"). `ops` and `ctx` must stay valid
 * until rp_control_stop returns. `ops` is copied.
 * @return the server, or NULL with one line in `err` (errlen bytes) naming the
 * path and the reason, e.g.
 *   "control socket path is too long (131 bytes, at most 107): /very/long/..."
 *   "control socket /x/ringprof-42.sock is in use by a live process; not taking it over"
 *   "cannot bind control socket /x/ringprof-42.sock: Permission denied"
 * Caller: any thread; allocates; creates a thread. Not async-signal-safe.
 */
struct rp_control *rp_control_start(const char *path, const struct rp_control_ops *ops,
                                    void *ctx, char *err, size_t errlen);

/*
 * rp_control_stop: stop the server thread (waiting for a callback in progress to
 * return), close every connection, remove the socket file if it is still ours,
 * and free. NULL is accepted. Caller: any thread except the server thread itself
 * (a callback must not call it).
 */
void rp_control_stop(struct rp_control *ctl);

/* The path the server is bound to: the path given with its directory resolved
 * (no symlink, no "." or ".."), the one to advertise. Constant while it runs. */
const char *rp_control_path(const struct rp_control *ctl);

/* CPU time the server thread has used so far, in ns (for the agent's own-cost
 * figures in status), or 0 if it cannot be read. Any thread. */
uint64_t rp_control_cpu_ns(const struct rp_control *ctl);

/* ------------------------------------------------------------ paths -- */

/*
 * rp_control_default_path: the default socket path, "<dir>/ringprof-<pid>.sock".
 * When that does not fit in sun_path (a deep recording directory), it is
 * "<discovery dir>/<pid>.sock" instead (a directory only our uid can enter,
 * created if needed); also when `dir` is NULL.
 * @return 0, or -1 if neither fits in `cap` or in sun_path (err says why).
 */
int rp_control_default_path(char *buf, size_t cap, const char *dir, long pid,
                            char *err, size_t errlen);

/* ------------------------------------------------------- discovery file -- */

/*
 * Discovery. While the socket serves, the agent keeps a small JSON file,
 * "/tmp/ringprof-<uid>/<pid>.json" (RP_DISCOVERY_DIR_FMT and the members'
 * names, RP_DISCOVERY_KEY_*, in ringprof/control.h, which `ringprof list` and
 * `ringprof ctl PID` read too; format in docs/control.md). The directory is
 * created with mode 0700; if it exists but is not a directory owned by our uid
 * (someone else made it, or a symlink), nothing is written: a directory another
 * user controls could be used to point our tools at a socket of theirs.
 */
struct rp_discovery {
    long pid;                 /* 0: getpid()                                     */
    const char *socket;       /* the control socket's path                       */
    const char *main;         /* main class and arguments (sun.java.command);
                                 NULL: read from /proc/self/cmdline              */
    const char *options;      /* the agent's option string, or NULL              */
    uint64_t start_wall_ns;   /* when the agent started (CLOCK_REALTIME); 0: now */
};

/*
 * rp_discovery_write: write (atomically: a temporary file, then rename) the
 * discovery file for `d`. `dir` NULL means the default, RP_DISCOVERY_DIR_FMT
 * with our euid. The path written is copied to `path` (pathlen bytes) for
 * rp_discovery_remove. @return 0, or -1 with one line in `err`.
 * Caller: any thread; call it after rp_control_start succeeded.
 */
int rp_discovery_write(const struct rp_discovery *d, const char *dir,
                       char *path, size_t pathlen, char *err, size_t errlen);

/* Remove the discovery file written at `path`. NULL or "" is accepted. */
void rp_discovery_remove(const char *path);

/*
 * rp_discovery_attach_error: for Agent_OnAttach when it refuses to start. The
 * JVM's attach protocol carries back only the return code, so the agent leaves its
 * reason in "<discovery dir>/<pid>.attach-error" (one line), where
 * `ringprof attach` reads it, prints it, and removes it. @return 0 or -1.
 * Caller: any thread.
 */
int rp_discovery_attach_error(const char *message);

/*
 * rp_discovery_attach_dir: for Agent_OnAttach when the agent started: the
 * absolute recording directory `dir` in "<discovery dir>/<pid>.attach-dir" (one
 * line), which `ringprof attach` prints in its reply and removes. `dir` NULL
 * removes the file if `ringprof attach` did not (an attach by jcmd), at stop.
 * @return 0 or -1. Caller: the agent's lifecycle (attach, stop), one at a time.
 */
int rp_discovery_attach_dir(const char *dir);

#endif
