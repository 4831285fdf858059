/*
 * tools/commands/cmd_attach.c — `ringprof attach PID [OPTIONS]`: load the agent into a
 * running HotSpot JVM, as `jcmd PID JVMTI.agent_load` does, without a JDK.
 *
 * HotSpot's attach mechanism on Linux (src/hotspot/os/linux/attachListener_linux.cpp
 * and jdk.attach's VirtualMachineImpl), followed step by step:
 *
 *  1. The trigger: a file ".attach_pid<pid>" in the JVM's working directory (or
 *     its /tmp), owned by the JVM's euid or root, then SIGQUIT. The JVM's signal
 *     thread sees the file and starts the Attach Listener, which binds
 *     "/tmp/.java_pid<pid>" (mode 0600). Without the file, SIGQUIT only prints a
 *     thread dump; a process that does not catch SIGQUIT at all would be killed,
 *     so it is checked first. <pid> is the pid inside the JVM's pid namespace, and
 *     both files are reached through /proc/PID/cwd and /proc/PID/root, so a JVM in
 *     a container works from the host.
 *  2. The request, protocol 1: "1\0" "load\0" then three arguments, each
 *     NUL-terminated: the library, "true" (the library is an absolute path; with
 *     "false" the JVM would look the name up in its own lib directory), and the
 *     option string. Each argument may be at most 1024 bytes.
 *  3. The reply, read to EOF: the completion code in decimal and "\n", then text.
 *     Code 0 with "return code: N" means Agent_OnAttach ran and returned N (0 is
 *     success). A non-zero code (JDK 17: -1 with "<lib> was not loaded.\n<dlerror>")
 *     or code 0 without "return code:" (JDK 21 reports load failures that way)
 *     means the library was not loaded; the text says why.
 *
 * The JVM accepts only peers with its own euid and egid (or root), so ringprof
 * refuses early, with a clear message, when those do not match. An agent that
 * refuses to start can explain why only through its own stderr; the ringprof
 * agent also leaves the reason in /tmp/ringprof-<uid>/<pid>.attach-error, which is
 * printed here and removed. It leaves one too when it returns 0 but is not
 * profiling (refused once its code may run on other threads, when the JVM would
 * unload a library that returned an error): that is a failure here as well. An
 * agent that started leaves its recording directory, absolute, in
 * <pid>.attach-dir instead, which the reply names (without dir= it is relative
 * to the JVM's working directory, which the user may not know).
 *
 * Those files lie in a directory the JVM's user owns, and ringprof attach often
 * runs as root: they are read only through the directory opened and checked for
 * that uid, with O_NOFOLLOW and fstat (a regular file of that uid, one link, at
 * most RP_ATTACH_ERROR_MAX bytes; ringprof/trust.h), so a symlink or hard link to
 * a file only root may read is never followed. Both are removed before the
 * request; after it, the reason is read when Agent_OnAttach failed, and, when it
 * returned 0, only if it was written during this attach (an inert agent's
 * reason), as is the directory. Their text is printed with control characters
 * escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "commands.h"
#include "ctl_client.h"
#include "usage.h"

/* HotSpot's AttachOperation::arg_length_max. */
#define ATTACH_ARG_MAX 1024
/* The completion code HotSpot sends for a protocol version it does not speak. */
#define ATTACH_ERROR_BADVERSION 101

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof attach [--agent PATH] [--timeout SEC] PID [OPTIONS]\n"
        "\n"
        "Load the ringprof agent into the running HotSpot JVM PID, through the JVM's\n"
        "attach mechanism (as jcmd PID JVMTI.agent_load does). OPTIONS is the agent's\n"
        "option string, e.g. interval=5ms,dir=/var/tmp/ringprof (docs/options.md).\n"
        "The JVM must run as the same user as ringprof (or ringprof as root).\n"
        "\n"
        "options:\n"
        "  --agent PATH   the agent library (default: libringprof.so next to this\n"
        "                 ringprof: build/src/ in a build tree, else ../lib)\n"
        "  --timeout SEC  how long to wait for the JVM at each step (default 30)\n");
}

static void msleep(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A line "Key:\tv1\tv2..." of /proc/PID/status: field `idx` (0-based). */
static int status_field(long pid, const char *key, int idx, unsigned long long *v,
                        int hex)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t klen = strlen(key);
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 || line[klen] != ':')
            continue;
        char *p = line + klen + 1, *end;
        for (int i = 0; i <= idx; i++) {
            *v = strtoull(p, &end, hex ? 16 : 10);
            if (end == p)
                break;
            if (i == idx)
                rc = 0;
            p = end;
        }
        break;
    }
    fclose(f);
    return rc;
}

/* Does the process map libjvm.so? @return 1, 0, or -1 if unreadable. */
static int maps_libjvm(long pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%ld/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "/libjvm.so") != NULL;
    fclose(f);
    return found;
}

/* Everything that can be known about the target before signalling it. */
static int check_target(long pid, char *err, size_t errlen)
{
    long uid = rp_proc_uid(pid);
    if (uid < 0 || !rp_proc_alive(pid))
        return snprintf(err, errlen, "no process with pid %ld", pid), -1;
    uid_t me = geteuid();
    if (me != 0 && (uid_t)uid != me)
        return snprintf(err, errlen, "pid %ld runs as uid %ld, and ringprof as uid %u: "
                        "the JVM accepts only its own user (or root); run ringprof attach "
                        "as that user", pid, uid, (unsigned)me), -1;
    unsigned long long euid, egid;
    if (me != 0 && status_field(pid, "Uid", 1, &euid, 0) == 0 && euid != me)
        return snprintf(err, errlen, "pid %ld runs with effective uid %llu, ringprof with "
                        "%u: the JVM would refuse the connection", pid, euid,
                        (unsigned)me), -1;
    if (me != 0 && status_field(pid, "Gid", 1, &egid, 0) == 0 && egid != getegid())
        return snprintf(err, errlen, "pid %ld runs with effective gid %llu, ringprof with "
                        "%u: the JVM accepts only peers with its own uid and gid (or "
                        "root); run ringprof attach with that group (sg, newgrp)", pid,
                        egid, (unsigned)getegid()), -1;
    int jvm = maps_libjvm(pid);
    if (jvm == 0)
        return snprintf(err, errlen, "pid %ld is not a HotSpot JVM (libjvm.so is not in "
                        "its memory map)", pid), -1;
    if (jvm < 0)
        return snprintf(err, errlen, "cannot read /proc/%ld/maps: %s", pid,
                        strerror(errno)), -1;
    return 0;
}

/* Make sure the JVM's attach socket exists: trigger the Attach Listener if not. */
static int start_listener(long pid, long nspid, const char *sock, int timeout_ms,
                          char *err, size_t errlen)
{
    if (exists(sock))
        return 0;
    unsigned long long caught;
    if (status_field(pid, "SigCgt", 0, &caught, 1) != 0 ||
        !(caught & (1ull << (SIGQUIT - 1))))
        return snprintf(err, errlen, "pid %ld does not handle SIGQUIT, so it cannot be "
                        "asked to start its attach listener (a signal would kill it)",
                        pid), -1;
    /* The trigger goes into a directory the JVM's owner chose (its working
     * directory), perhaps while we run as root: it is created and later removed
     * through one descriptor of that directory, so a chdir or a swapped path in
     * between cannot make us remove a file of that name elsewhere. */
    char trigger[PATH_MAX], name[64];
    snprintf(name, sizeof name, ".attach_pid%ld", nspid);
    snprintf(trigger, sizeof trigger, "/proc/%ld/cwd", pid);
    int dfd = open(trigger, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dfd < 0 ? -1 : openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC |
                                   O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) {
        if (dfd >= 0)
            close(dfd);
        snprintf(trigger, sizeof trigger, "/proc/%ld/root/tmp", pid);
        dfd = open(trigger, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fd = dfd < 0 ? -1 : openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC |
                                   O_NOFOLLOW | O_NONBLOCK, 0600);
    }
    if (fd < 0) {
        int e = errno;
        if (dfd >= 0)
            close(dfd);
        return snprintf(err, errlen, "cannot create the attach trigger file in the "
                        "JVM's working directory or in its /tmp (%s/%s): %s", trigger,
                        name, strerror(e)), -1;
    }
    close(fd);

    int rc = -1;
    if (kill((pid_t)pid, SIGQUIT) != 0) {
        snprintf(err, errlen, "cannot signal pid %ld: %s", pid, strerror(errno));
        goto out;
    }
    /* The JVM needs a few ms (more if it is busy at a safepoint). Poll, slowly
     * lengthening the step, and signal once more halfway, as jdk.attach does. */
    long waited = 0, step = 10;
    int resent = 0;
    while (waited < timeout_ms) {
        msleep(step);
        waited += step;
        if (exists(sock)) {
            rc = 0;
            goto out;
        }
        if (!rp_proc_alive(pid)) {
            snprintf(err, errlen, "pid %ld exited while starting its attach listener", pid);
            goto out;
        }
        if (!resent && waited > timeout_ms / 2) {
            kill((pid_t)pid, SIGQUIT);
            resent = 1;
        }
        if (step < 200)
            step += 10;
    }
    snprintf(err, errlen, "pid %ld did not start its attach listener within %d ms (no "
             "%s): the JVM may run with -XX:+DisableAttachMechanism, or be hung", pid,
             timeout_ms, sock);
out:
    unlinkat(dfd, name, 0);
    close(dfd);
    return rc;
}

/* The JVM's attach socket must be its own, private file, as jdk.attach checks. */
static int check_socket_file(const char *sock, long uid, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(sock, &st) != 0)
        return snprintf(err, errlen, "cannot check %s: %s", sock, strerror(errno)), -1;
    if (!S_ISSOCK(st.st_mode))
        return snprintf(err, errlen, "%s is not a socket", sock), -1;
    if ((long)st.st_uid != uid)
        return snprintf(err, errlen, "%s belongs to uid %u, not to the JVM's uid %ld; not "
                        "using it", sock, (unsigned)st.st_uid, uid), -1;
    if (st.st_mode & 077)
        return snprintf(err, errlen, "%s has mode 0%03o; the JVM makes it 0600, so it is "
                        "not using it", sock, (unsigned)(st.st_mode & 0777)), -1;
    return 0;
}

/* Connect, send the load request, read the reply to EOF. @return 0 with the
 * malloc'd text in *out, or -1. */
static int load_request(const char *sock, const char *agent, const char *options,
                        int timeout_ms, char **out, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof sa.sun_path)
        return snprintf(err, errlen, "attach socket path too long: %s", sock), -1;
    strcpy(sa.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return snprintf(err, errlen, "socket: %s", strerror(errno)), -1;
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "cannot connect to the JVM's attach socket %s: %s", sock,
                 strerror(errno));
        close(fd);
        return -1;
    }
    /* "1\0load\0<agent>\0true\0<options>\0" */
    const char *parts[] = {"1", "load", agent, "true", options};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t len = strlen(parts[i]) + 1, off = 0;
        while (off < len) {
            ssize_t w = send(fd, parts[i] + off, len - off, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                snprintf(err, errlen, "cannot send the request to %s: %s", sock,
                         w < 0 ? strerror(errno) : "short write");
                close(fd);
                return -1;
            }
            off += (size_t)w;
        }
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            close(fd);
            return snprintf(err, errlen, "out of memory"), -1;
        }
        if (len + 1 >= cap) {
            if (cap >= (1u << 20))
                break;            /* more than any load reply; keep what we have */
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
            continue;
        }
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            if (e == EAGAIN || e == EWOULDBLOCK)
                return snprintf(err, errlen, "the JVM did not answer within %d ms (the "
                                "agent's Agent_OnAttach may still be running)",
                                timeout_ms), -1;
            return snprintf(err, errlen, "cannot read the JVM's reply: %s",
                            strerror(e)), -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    *out = buf;
    return 0;
}

/* The JVM's discovery directory, opened and checked for its uid, or -1. Through
 * /proc/PID/root (a JVM in a container has its own /tmp); once the JVM has
 * ended or is ending (an attach that raced with its exit) that is gone, and a
 * JVM of our own PID namespace (nspid == pid) has it at the path itself, in all
 * likelihood (the ownership checks hold there too). */
static int attach_error_dir(long pid, long nspid, long uid, char *dir, size_t cap)
{
    char why[256];
    snprintf(dir, cap, "/proc/%ld/root" RP_DISCOVERY_DIR_FMT, pid, (unsigned)uid);
    int dfd = rp_trust_opendir(dir, (uid_t)uid, why, sizeof why);
    if (dfd < 0 && nspid == pid) {
        snprintf(dir, cap, RP_DISCOVERY_DIR_FMT, (unsigned)uid);
        dfd = rp_trust_opendir(dir, (uid_t)uid, why, sizeof why);
    }
    return dfd;
}

/* Remove the files an earlier try left (the agent's reason, its directory),
 * before the request. */
static void attach_files_clear(long pid, long nspid, long uid)
{
    char dir[PATH_MAX], name[64];
    int dfd = attach_error_dir(pid, nspid, uid, dir, sizeof dir);
    if (dfd < 0)
        return;
    snprintf(name, sizeof name, "%ld" RP_ATTACH_ERROR_SUFFIX, nspid);
    unlinkat(dfd, name, 0);
    snprintf(name, sizeof name, "%ld" RP_ATTACH_DIR_SUFFIX, nspid);
    unlinkat(dfd, name, 0);
    close(dfd);
}

/* The agent's file "<nspid><suffix>" (control.h: rp_discovery_attach_error,
 * rp_discovery_attach_dir) into buf, then removed. `since` > 0: only a file
 * changed at or after that time (written during this attach; the second before
 * it allows for the file system's coarse clock) counts. @return 1 if it was read
 * (buf may be empty), 0 if not (buf empty). */
static int attach_file_take(long pid, long nspid, long uid, time_t since,
                            const char *suffix, char *buf, size_t cap)
{
    char dir[PATH_MAX], name[64], why[256];
    buf[0] = '\0';
    int dfd = attach_error_dir(pid, nspid, uid, dir, sizeof dir);
    if (dfd < 0)
        return 0;
    snprintf(name, sizeof name, "%ld%s", nspid, suffix);
    int fd = rp_trust_openat(dfd, name, (uid_t)uid, RP_ATTACH_ERROR_MAX, why, sizeof why);
    if (fd < 0) {
        if (errno != ENOENT)
            fprintf(stderr, "ringprof attach: not reading %s/%s: it %s\n", dir, name, why);
        close(dfd);
        return 0;
    }
    struct stat st;
    int taken = fstat(fd, &st) == 0 && (since <= 0 || st.st_ctime >= since - 1);
    if (taken)
        rp_read_fd(fd, buf, cap);
    close(fd);
    unlinkat(dfd, name, 0);
    close(dfd);
    return taken;
}

/* The agent's own reason (control.h: rp_discovery_attach_error): print it and
 * remove it; `since` as for attach_file_take. @return the number of lines
 * printed. */
static int attach_error_take(long pid, long nspid, long uid, time_t since)
{
    char buf[RP_ATTACH_ERROR_MAX + 1];
    attach_file_take(pid, nspid, uid, since, RP_ATTACH_ERROR_SUFFIX, buf, sizeof buf);
    int n = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!line[0])
            continue;
        fputs("ringprof attach: the agent says: ", stderr);
        rp_print_untrusted(stderr, line, 0);
        fputc('\n', stderr);
        n++;
    }
    return n;
}

/* Print the JVM's text, each line prefixed, for the operator. */
static void print_text(const char *text)
{
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\n");
        if (n) {
            char line[2048];
            snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
            fputs("ringprof attach: the JVM says: ", stderr);
            rp_print_untrusted(stderr, line, 0);
            fputc('\n', stderr);
        }
        p += n;
        if (*p)
            p++;
    }
}

/* Interpret the reply (see step 3 at the top). @return the exit status. */
static int report(long pid, long nspid, long uid, const char *agent, const char *reply,
                  time_t sent)
{
    char *end;
    long code = strtol(reply, &end, 10);
    if (end == reply || (*end != '\n' && *end != '\0')) {
        fprintf(stderr, "ringprof attach: pid %ld sent a reply that is not HotSpot's "
                "attach protocol\n", pid);
        print_text(reply);
        attach_error_take(pid, nspid, uid, sent);   /* the JVM may have ended mid-reply */
        return 1;
    }
    const char *text = *end ? end + 1 : end;
    if (code == ATTACH_ERROR_BADVERSION) {
        fprintf(stderr, "ringprof attach: pid %ld does not speak attach protocol 1\n", pid);
        return 1;
    }
    const char *rc_line = strstr(text, "return code: ");
    if (code != 0 || !rc_line) {
        fprintf(stderr, "ringprof attach: pid %ld could not load %s (attach status %ld)\n",
                pid, agent, code);
        print_text(text);
        attach_error_take(pid, nspid, uid, sent);
        return 1;
    }
    long rc = strtol(rc_line + strlen("return code: "), NULL, 10);
    if (rc != 0) {
        fprintf(stderr, "ringprof attach: the agent refused to start in pid %ld: "
                "Agent_OnAttach returned %ld\n", pid, rc);
        attach_error_take(pid, nspid, uid, 0);
        fprintf(stderr, "ringprof attach: (the JVM's stderr may say more)\n");
        return 1;
    }
    /* Returned 0 but left a reason during this attach: the agent stays loaded (it
     * must, once its code may run on other threads) but is not profiling. */
    if (attach_error_take(pid, nspid, uid, sent) > 0) {
        fprintf(stderr, "ringprof attach: %s stays loaded in pid %ld but is not "
                "profiling (the JVM's stderr may say more)\n", agent, pid);
        return 1;
    }
    printf("ringprof: loaded %s into pid %ld (Agent_OnAttach returned 0)\n", agent, pid);
    /* Where the recording goes: relative to the JVM's working directory without
     * dir=, so the agent names it, absolute. */
    char dir[RP_ATTACH_ERROR_MAX + 1];
    if (attach_file_take(pid, nspid, uid, sent, RP_ATTACH_DIR_SUFFIX, dir, sizeof dir) &&
        dir[0]) {
        dir[strcspn(dir, "\n")] = '\0';
        fputs("ringprof: recording to ", stdout);
        rp_print_untrusted(stdout, dir, 0);
        fputc('\n', stdout);
    } else {
        printf("ringprof: the agent did not say where it records (see the JVM's stderr, "
               "or ringprof ctl %ld status)\n", pid);
    }
    return 0;
}

int rp_cmd_attach(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"agent", required_argument, NULL, 'a'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *agent_arg = NULL;
    double timeout_s = 30;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': agent_arg = optarg; break;
        case 't': {
            char *end;
            timeout_s = strtod(optarg, &end);
            if (*end || !(timeout_s > 0) || timeout_s > 3600)
                return rp_usage_error("attach", "bad --timeout '%s': seconds, more than "
                                      "0 and at most 3600", optarg);
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return rp_usage_getopt("attach", c, argv, longopts, NULL);
        }
    }
    long pid;
    if (optind >= argc || rp_parse_pid(argv[optind], &pid) != 0)
        return rp_usage_error("attach", "%s", optind >= argc ? "no pid given"
                              : "the first argument must be a pid");
    optind++;
    /* OPTIONS: the rest, joined with commas (so "a=1 b=2" works too). */
    char options[ATTACH_ARG_MAX + 2] = "";
    size_t olen = 0;
    for (int i = optind; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (olen + n + 1 > ATTACH_ARG_MAX) {
            fprintf(stderr, "ringprof attach: the option string is longer than the %d "
                    "bytes the JVM's attach protocol carries\n", ATTACH_ARG_MAX);
            return 2;
        }
        if (olen)
            options[olen++] = ',';
        memcpy(options + olen, argv[i], n + 1);
        olen += n;
    }

    char agent[PATH_MAX];
    if (agent_arg) {
        if (!realpath(agent_arg, agent)) {
            fprintf(stderr, "ringprof attach: cannot use agent %s: %s\n", agent_arg,
                    strerror(errno));
            return 1;
        }
    } else if (rp_agent_default_path(agent, sizeof agent) != 0) {
        fprintf(stderr, "ringprof attach: cannot find libringprof.so next to this ringprof "
                "(in ../src/, ../lib/, ../lib64/, ../lib/*/ or ./); give --agent PATH\n");
        return 1;
    }
    if (strlen(agent) > ATTACH_ARG_MAX) {
        fprintf(stderr, "ringprof attach: the agent path is longer than the %d bytes the "
                "JVM's attach protocol carries: %s\n", ATTACH_ARG_MAX, agent);
        return 1;
    }
    if (access(agent, R_OK) != 0) {
        fprintf(stderr, "ringprof attach: cannot read agent %s: %s\n", agent,
                strerror(errno));
        return 1;
    }

    char err[PATH_MAX + 1024];
    int timeout_ms = (int)(timeout_s * 1000);
    if (check_target(pid, err, sizeof err) != 0) {
        fprintf(stderr, "ringprof attach: %s\n", err);
        return 1;
    }
    long uid = rp_proc_uid(pid), nspid = rp_proc_nspid(pid);
    char sock[PATH_MAX];
    snprintf(sock, sizeof sock, "/proc/%ld/root/tmp/.java_pid%ld", pid, nspid);
    if (start_listener(pid, nspid, sock, timeout_ms, err, sizeof err) != 0 ||
        check_socket_file(sock, uid, err, sizeof err) != 0) {
        fprintf(stderr, "ringprof attach: %s\n", err);
        return 1;
    }
    attach_files_clear(pid, nspid, uid);     /* what an earlier try left */
    char *reply;
    time_t sent = time(NULL);
    if (load_request(sock, agent, options, timeout_ms, &reply, err, sizeof err) != 0) {
        fprintf(stderr, "ringprof attach: %s\n", err);
        attach_error_take(pid, nspid, uid, sent);   /* the agent's reason, if it left one */
        return 1;
    }
    int status = report(pid, nspid, uid, agent, reply, sent);
    free(reply);
    return status;
}
