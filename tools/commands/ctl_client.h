/*
 * tools/commands/ctl_client.h — what `ringprof ctl`, `list` and `attach` share: a small JSON
 * reader and pretty-printer, one request/reply exchange over an agent's control
 * socket, the discovery files, and a few facts about a process read from /proc.
 *
 * The protocol and the discovery files are described in docs/control.md; the
 * agent side is src/control/ (control.h). What the tools believe of a discovery
 * or attach file and of a socket follows ringprof/trust.h, shared with the
 * agent. Nothing here needs a JVM.
 *
 * One file for each job: ctl_json.c reads JSON, ctl_print.c prints it and
 * untrusted text (rp_jv_print, rp_print_untrusted), ctl_client.c makes an
 * exchange over the control socket, ctl_find.c finds an agent by pid (its
 * discovery file, or the socket the process holds), ctl_proc.c reads /proc and
 * finds the agent library.
 */
#ifndef RINGPROF_TOOLS_CTL_CLIENT_H
#define RINGPROF_TOOLS_CTL_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ringprof/control.h"
#include "ringprof/trust.h"

/* ------------------------------------------------------------------ JSON -- */

enum rp_jv_type { RP_JV_NULL, RP_JV_BOOL, RP_JV_NUM, RP_JV_STR, RP_JV_ARR, RP_JV_OBJ };

/* A parsed JSON value. Strings are decoded (escapes resolved, UTF-8) and
 * NUL-terminated; numbers keep their text. Arrays and objects have n children in
 * `items`; an object's keys are in `keys`, in document order. */
struct rp_jv {
    enum rp_jv_type type;
    int b;                   /* RP_JV_BOOL                                      */
    char *str;               /* RP_JV_STR: the string; RP_JV_NUM: its text      */
    size_t len;              /* bytes in str (a string may hold "\u0000")        */
    size_t n;
    struct rp_jv *items;
    char **keys;
};

/* Parse exactly one JSON value (surrounding whitespace allowed). Nesting deeper
 * than 64 is refused. @return the value (free with rp_jv_free), or NULL with the
 * reason and offset in err. */
struct rp_jv *rp_jv_parse(const char *text, size_t len, char *err, size_t errlen);
void rp_jv_free(struct rp_jv *v);

/* The member `key` of an object, or NULL (also when v is not an object). */
const struct rp_jv *rp_jv_get(const struct rp_jv *v, const char *key);
/* The string, or NULL if v is NULL or not a string. */
const char *rp_jv_str(const struct rp_jv *v);
/* The number as a signed integer; `def` if v is not an integer number. */
long long rp_jv_int(const struct rp_jv *v, long long def);

/* Print v indented by 2 spaces per level (arrays of scalars on one line), and a
 * newline. */
void rp_jv_print(FILE *f, const struct rp_jv *v);

/* ---------------------------------------------------- the control socket -- */

/* Who must be serving a socket: the process a discovery file names and the uid
 * it runs as. rp_ctl_exchange checks them with SO_PEERCRED (the credentials of
 * the process that called listen) before it sends anything. */
struct rp_ctl_peer {
    long pid;                /* in our pid namespace                            */
    long uid;
};

/*
 * rp_ctl_exchange: connect to `socket_path`, send `request` (one line, without
 * "\n"), read one reply line. Every step is bounded by `timeout_ms` in total.
 * With `expect` not NULL, a socket served by another process or uid is refused
 * before the request is sent: root's tools never speak to a socket another user
 * put in the agent's place.
 * @return 0 with the reply in *reply (malloc'd, without "\n"), or -1 with a
 * sentence in err that says why the agent could not be reached: no socket, a
 * stale socket, permission, the wrong peer, no answer in time.
 */
int rp_ctl_exchange(const char *socket_path, const char *request, int timeout_ms,
                    const struct rp_ctl_peer *expect, char **reply, char *err,
                    size_t errlen);

/*
 * rp_ctl_socket_path: the socket path an operator gave (`ringprof ctl SOCKET`),
 * resolved without following a symlink that belongs to anyone but the caller or
 * root: its owner could point it at a socket of theirs at any moment, between
 * one look and the next. The caller's and root's symlinks are followed as the
 * kernel would; "." and ".." are resolved. A part that does not exist ends the
 * walk (the exchange then says there is no socket). @return 0 with the path, free
 * of symlinks, in out (cap bytes), or -1 with err naming the link and its owner.
 */
int rp_ctl_socket_path(const char *given, char *out, size_t cap, char *err,
                       size_t errlen);

/* -------------------------------------------------------- discovery files -- */

struct rp_discovery_info {
    char file[4096];         /* the discovery file                              */
    long pid;                /* as written: the pid in the agent's namespace    */
    unsigned uid;
    char socket[4096];
    char main[1024];
    char start_time[64];
    uint64_t proc_start_ticks;
};

/*
 * rp_discovery_read: read and check the discovery file `name` in the directory
 * `dfd` (opened by rp_trust_opendir for `uid`; `dir` is its path, for messages).
 * The file must be trusted for `uid` (ringprof/trust.h: a regular file, not a
 * symlink, owned by uid or root, one link, not writable by others, at most
 * RP_DISCOVERY_FILE_MAX bytes) and its "uid" member must be `uid`.
 * @return 0, or -1 with err.
 */
int rp_discovery_read(int dfd, const char *dir, const char *name, unsigned uid,
                      struct rp_discovery_info *d, char *err, size_t errlen);

/*
 * rp_discovery_stale: is the agent that wrote `d` gone? 1 when pid `host_pid` is
 * dead, or is a later process that reuses the pid (its start time differs from
 * the file's); 0 when it is the same process or that cannot be told.
 */
int rp_discovery_stale(const struct rp_discovery_info *d, long host_pid);

/*
 * rp_ctl_find: the control socket of the agent in process `pid`. Looks for its
 * discovery file (in /tmp/ringprof-<uid of pid>/, then in the process's own /tmp
 * through /proc/PID/root for a container), then, if there is none (a /tmp
 * cleaner may have removed it), for a listening socket named "*ringprof*.sock"
 * that the process holds open. A socket path that does not exist here is tried
 * under /proc/PID/root. A discovery directory or file that is not trusted for the
 * process's uid (ringprof/trust.h) is not read; if nothing else is found, err
 * says which and why. `peer` is set to what rp_ctl_exchange must then check: the
 * process and its uid.
 * @return 0 with the path in sock (cap bytes) and in err "" or a note (what was
 * passed over: an untrusted discovery file, when the socket was then found
 * through /proc), or -1 with err: "no process with pid N", "no ringprof agent in
 * pid N (...)".
 */
int rp_ctl_find(long pid, char *sock, size_t cap, struct rp_ctl_peer *peer, char *err,
                size_t errlen);

/*
 * rp_print_untrusted: print `s` to f with control characters escaped
 * (rp_trust_escape), for text that came from a file or a socket another user may
 * have written. `json` 1: `s` is a JSON text, so only the C1 controls need
 * escaping (as \u00NN, which keeps it valid JSON); others are then already
 * escaped. No newline is added.
 */
void rp_print_untrusted(FILE *f, const char *s, int json);

/* ------------------------------------------------------------------ /proc -- */

/* 1 if the process exists (kill(pid, 0) does not fail with ESRCH), else 0. */
int rp_proc_alive(long pid);
/* The real uid owning /proc/PID, or -1 if there is no such process. */
long rp_proc_uid(long pid);
/* The pid as the process itself sees it (the last NSpid entry), or pid. */
long rp_proc_nspid(long pid);
/* Field 22 of /proc/PID/stat (start time in clock ticks since boot), or 0. */
uint64_t rp_proc_start_ticks(long pid);

/* Read `fd` to its end or until cap-1 bytes, and terminate. @return the length. */
size_t rp_read_fd(int fd, char *buf, size_t cap);

/* Parse a whole decimal pid (> 0). @return 0 or -1. */
int rp_parse_pid(const char *s, long *pid);

/* The agent library: $RINGPROF_AGENT if set, else libringprof.so next to this
 * binary (build tree: ../src/; installed: ../lib/, ../lib64/, ../lib/<triplet>/).
 * @return 0 with the path in `out`, or -1. */
int rp_agent_default_path(char *out, size_t cap);

#endif
