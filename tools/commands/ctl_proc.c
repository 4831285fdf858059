/*
 * tools/commands/ctl_proc.c — what the control commands read of a process and
 * of this tool's installation (ctl_client.h, "/proc"): whether a pid lives,
 * its uid, its pid inside its namespace, its start time; a pid as typed; and
 * where the agent library is, for `ringprof attach` and `ringprof record`.
 *
 * Everything is read from /proc at the moment of asking: a process may exit or
 * its pid be reused between two calls, which the callers allow for (the start
 * time tells a reused pid).
 */
#include "ctl_client.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

int rp_parse_pid(const char *s, long *pid)
{
    if (!s || !*s)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno || v <= 0 || v > INT_MAX)
        return -1;
    *pid = v;
    return 0;
}

int rp_proc_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

long rp_proc_uid(long pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%ld", pid);
    return stat(path, &st) == 0 ? (long)st.st_uid : -1;
}

size_t rp_read_fd(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len < cap - 1) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return len;
}

/* Read a small /proc file into buf. @return bytes read, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = rp_read_fd(fd, buf, cap);
    close(fd);
    return (ssize_t)len;
}

long rp_proc_nspid(long pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    if (read_small(path, buf, sizeof buf) < 0)
        return pid;
    char *p = strstr(buf, "\nNSpid:");
    if (!p)
        return pid;
    p += 7;
    char *eol = strchr(p, '\n');
    if (eol)
        *eol = '\0';
    long last = pid;
    char *tok, *save;
    for (tok = strtok_r(p, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
        last = strtol(tok, NULL, 10);
    return last > 0 ? last : pid;
}

uint64_t rp_proc_start_ticks(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (read_small(path, buf, sizeof buf) <= 0)
        return 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* ------------------------------------------------------- the agent library -- */

int rp_agent_default_path(char *out, size_t cap)
{
    const char *env = getenv("RINGPROF_AGENT");
    if (env && *env) {
        if (strlen(env) >= cap)
            return -1;
        strcpy(out, env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    static const char *const rel[] = {
        "/../src/libringprof.so",      /* build tree: build/tools/ringprof      */
        "/../lib/libringprof.so",      /* installed: PREFIX/bin/ringprof        */
        "/../lib64/libringprof.so",
        "/libringprof.so",
    };
    char cand[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
        if (access(cand, R_OK) == 0 && realpath(cand, out) && strlen(out) < cap)
            return 0;
    }
    /* Debian-style multiarch: PREFIX/lib/<triplet>/libringprof.so */
    snprintf(cand, sizeof cand, "%s/../lib/*/libringprof.so", exe);
    glob_t g;
    int rc = -1;
    if (glob(cand, 0, NULL, &g) == 0) {
        if (g.gl_pathc && realpath(g.gl_pathv[0], out) && strlen(out) < cap)
            rc = 0;
        globfree(&g);
    }
    return rc;
}

