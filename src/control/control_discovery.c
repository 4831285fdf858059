/*
 * src/control/control_discovery.c — the files an agent leaves in its
 * discovery directory, "/tmp/ringprof-<uid>/" (control.h): "<pid>.json" for
 * `ringprof list` and `ringprof ctl PID`, "<pid>.attach-error" and
 * "<pid>.attach-dir" for `ringprof attach`, and the socket path that falls back
 * into the directory when the recording directory's is too long for sun_path.
 *
 * The directory is made with mode 0700, or taken only if it is a real
 * directory owned by our euid (then narrowed to 0700). Every file is written
 * whole, mode 0600: a temporary file next to it, then rename. The discovery
 * file is one line of JSON whose members are named in ringprof/control.h
 * (RP_DISCOVERY_KEY_*), which the tools read with the same names. Nothing here
 * needs the server: tests/ctl's trivial agent links this file for
 * rp_discovery_attach_error alone.
 */
#include "control/control.h"
#include "ringprof/errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#ifndef RINGPROF_VERSION
#define RINGPROF_VERSION "unknown"
#endif

/* Create `dir` (mode 0700) or accept it if it is a real directory owned by us; a
 * wider mode on our own directory is narrowed. @return 0 or -1 with err. */
static int private_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) == 0)
        return 0;
    if (errno != EEXIST) {
        rp_fail(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        rp_fail(err, errlen, "cannot check %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        rp_fail(err, errlen, "%s is not a directory owned by uid %u; not using it",
                dir, (unsigned)geteuid());
        return -1;
    }
    if ((st.st_mode & 077) && chmod(dir, 0700) != 0) {
        rp_fail(err, errlen, "cannot make %s private (mode 0700): %s", dir,
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
        rp_fail(err, errlen, "no room for a control socket path");
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
        rp_fail(err, errlen, "path too long: %s", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rp_fail(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rp_fail(err, errlen, "cannot write %s: %s", tmp, w < 0 ? strerror(errno)
                    : "short write");
            close(fd);
            unlink(tmp);
            return -1;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        rp_fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
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

/* The discovery file's path for `pid` in `dir` (NULL: the default), made
 * private. @return 0, or -1 with err. */
static int discovery_path(const char *dir, long pid, char *path, size_t pathlen,
                          char *err, size_t errlen)
{
    char ddir[4096];
    if (dir) {
        if (snprintf(ddir, sizeof ddir, "%s", dir) >= (int)sizeof ddir)
            return rp_fail(err, errlen, "discovery directory path too long");
    } else if (default_dir(ddir, sizeof ddir) != 0) {
        return rp_fail(err, errlen, "no room for the discovery directory");
    }
    if (private_dir(ddir, err, errlen) != 0)
        return -1;
    int n = snprintf(path, pathlen, "%s/%ld" RP_DISCOVERY_SUFFIX, ddir, pid);
    if (n < 0 || (size_t)n >= pathlen)
        return rp_fail(err, errlen, "no room for the discovery file's path");
    return 0;
}

/* The discovery file's line for `d` (members: ringprof/control.h), into j. */
static void discovery_json(struct rp_json *j, const struct rp_discovery *d, long pid)
{
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

    rp_json_object_begin(j);
    rp_json_kv_i64(j, RP_DISCOVERY_KEY_PID, pid);
    rp_json_kv_u64(j, RP_DISCOVERY_KEY_UID, geteuid());
    rp_json_kv_string(j, RP_DISCOVERY_KEY_SOCKET, d->socket);
    rp_json_kv_string(j, RP_DISCOVERY_KEY_MAIN, d->main ? d->main : cmdline);
    rp_json_kv_string(j, RP_DISCOVERY_KEY_OPTIONS, d->options);
    rp_json_kv_string(j, RP_DISCOVERY_KEY_START_TIME, when);
    rp_json_kv_u64(j, RP_DISCOVERY_KEY_START_WALL_NS, wall);
    rp_json_kv_u64(j, RP_DISCOVERY_KEY_PROC_START_TICKS, self_start_ticks());
    rp_json_kv_string(j, RP_DISCOVERY_KEY_VERSION, RINGPROF_VERSION);
    rp_json_kv_u64(j, RP_DISCOVERY_KEY_PROTOCOL, RP_CONTROL_PROTOCOL);
    rp_json_object_end(j);
    rp_json_raw(j, "\n", 1);
}

int rp_discovery_write(const struct rp_discovery *d, const char *dir,
                       char *path, size_t pathlen, char *err, size_t errlen)
{
    long pid = d->pid ? d->pid : (long)getpid();
    if (discovery_path(dir, pid, path, pathlen, err, errlen) != 0)
        return -1;
    struct rp_json j;
    rp_json_init(&j, RP_DISCOVERY_FILE_MAX);
    discovery_json(&j, d, pid);
    int rc;
    if (rp_json_error(&j)) {
        rc = rp_fail(err, errlen, "cannot format the discovery file (%s)",
                     rp_json_error(&j) == RP_JSON_NOMEM ? "out of memory" : "too long");
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
