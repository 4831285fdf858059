/*
 * tools/commands/ctl_find.c — finding the agent in a process (ctl_client.h,
 * "discovery files"): its discovery file, read and checked, and failing that
 * the listening ringprof socket the process holds open.
 *
 * A discovery file is believed only as ringprof/trust.h says: in a directory
 * trusted for the process's uid, a regular file of that uid or root, with its
 * own "uid" the same, and its members named as the agent writes them
 * (ringprof/control.h, RP_DISCOVERY_KEY_*). A file left by an earlier process
 * under the same pid is told apart by the process's start time. A JVM in a
 * container is reached through /proc/PID/root, with the pid it has inside.
 * What was passed over on the way is said, found or not.
 */
#include "ringprof/errbuf.h"
#include "ctl_client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

int rp_discovery_read(int dfd, const char *dir, const char *name, unsigned uid,
                      struct rp_discovery_info *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    char why[256];
    int fd = rp_trust_openat(dfd, name, (uid_t)uid, RP_DISCOVERY_FILE_MAX, why, sizeof why);
    if (fd < 0)
        return rp_fail(err, errlen, "%s/%s %s; not reading it", dir, name, why);
    char buf[RP_DISCOVERY_FILE_MAX + 1];
    size_t n = rp_read_fd(fd, buf, sizeof buf);
    close(fd);
    char perr[128];
    struct rp_jv *v = rp_jv_parse(buf, n, perr, sizeof perr);
    if (!v)
        return rp_fail(err, errlen, "%s/%s is not a discovery file: %s", dir, name, perr);
    const char *sock = rp_jv_str(rp_jv_get(v, RP_DISCOVERY_KEY_SOCKET));
    long long pid = rp_jv_int(rp_jv_get(v, RP_DISCOVERY_KEY_PID), -1);
    long long fuid = rp_jv_int(rp_jv_get(v, RP_DISCOVERY_KEY_UID), -1);
    if (!sock || pid <= 0 || pid > INT_MAX) {
        rp_jv_free(v);
        return rp_fail(err, errlen, "%s/%s is not a discovery file: no pid or socket", dir,
                    name);
    }
    if (fuid != (long long)uid) {
        rp_jv_free(v);
        return rp_fail(err, errlen, "%s/%s says uid %lld, but lies in the directory of uid "
                    "%u; not reading it", dir, name, fuid, uid);
    }
    snprintf(d->file, sizeof d->file, "%s/%s", dir, name);
    snprintf(d->socket, sizeof d->socket, "%s", sock);
    d->pid = (long)pid;
    d->uid = uid;
    const char *s = rp_jv_str(rp_jv_get(v, RP_DISCOVERY_KEY_MAIN));
    snprintf(d->main, sizeof d->main, "%s", s ? s : "");
    s = rp_jv_str(rp_jv_get(v, RP_DISCOVERY_KEY_START_TIME));
    snprintf(d->start_time, sizeof d->start_time, "%s", s ? s : "");
    long long t = rp_jv_int(rp_jv_get(v, RP_DISCOVERY_KEY_PROC_START_TICKS), 0);
    d->proc_start_ticks = t > 0 ? (uint64_t)t : 0;
    rp_jv_free(v);
    return 0;
}

int rp_discovery_stale(const struct rp_discovery_info *d, long host_pid)
{
    if (!rp_proc_alive(host_pid))
        return 1;
    uint64_t now = rp_proc_start_ticks(host_pid);
    return d->proc_start_ticks && now && now != d->proc_start_ticks;
}

/* `path` as the process sees it may not exist in our mount namespace; try it
 * under /proc/PID/root. @return 0 with the usable path in out, or -1. */
static int resolve_in_ns(long pid, const char *path, char *out, size_t cap)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        snprintf(out, cap, "%s", path);
        return 0;
    }
    char alt[PATH_MAX + 64];
    snprintf(alt, sizeof alt, "/proc/%ld/root%s", pid, path);
    if (stat(alt, &st) == 0 && strlen(alt) < cap) {
        snprintf(out, cap, "%s", alt);
        return 0;
    }
    snprintf(out, cap, "%s", path);
    return -1;
}

static int cmp_ulong(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

/* The inodes of the sockets `pid` holds open (/proc/PID/fd), sorted.
 * @return how many, with the array (malloc'd) in *out; 0 when none or unread. */
static size_t socket_inodes(long pid, unsigned long **out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", pid);
    *out = NULL;
    DIR *dir = opendir(path);
    if (!dir)
        return 0;
    unsigned long *mine = NULL;
    size_t n = 0, room = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        char fdp[PATH_MAX], target[64];
        snprintf(fdp, sizeof fdp, "%s/%s", path, de->d_name);
        ssize_t len = readlink(fdp, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        unsigned long ino;
        if (sscanf(target, "socket:[%lu]", &ino) != 1)
            continue;
        if (n == room) {
            size_t want = room ? 2 * room : 64;
            unsigned long *grown = realloc(mine, want * sizeof *mine);
            if (!grown)
                break;
            mine = grown;
            room = want;
        }
        mine[n++] = ino;
    }
    closedir(dir);
    if (!n) {
        free(mine);
        return 0;
    }
    qsort(mine, n, sizeof *mine, cmp_ulong);
    *out = mine;
    return n;
}

/* Fallback: a listening Unix socket named "*ringprof*.sock" held by `pid`. The
 * process's socket inodes come from /proc/PID/fd first, then the one listening
 * ringprof socket among them from /proc/PID/net/unix, which lists every socket of
 * the network namespace: a busy host has hundreds of other JVMs' sockets there, so
 * the match must be by inode, never "the first few named like ours".
 * @return 0 with its path in out; 1 with the path it was bound to in out when
 * that file no longer exists (removed: nothing can connect to the socket); -1
 * when there is none. */
static int find_socket_fd(long pid, char *out, size_t cap)
{
    unsigned long *mine;
    size_t n = socket_inodes(pid, &mine);
    if (!n)
        return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/net/unix", pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        free(mine);
        return -1;
    }
    char line[4096];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        unsigned long flags, inode;
        char name[256] = "";
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %255s", &flags, &inode, name) != 3)
            continue;
        size_t len = strlen(name);
        if (!(flags & 0x10000) || len < 6 || strcmp(name + len - 5, ".sock") != 0 ||
            !strstr(name, "ringprof") || !bsearch(&inode, mine, n, sizeof *mine, cmp_ulong))
            continue;
        found = resolve_in_ns(pid, name, out, cap) == 0 ? 0 : 1;
    }
    fclose(f);
    free(mine);
    return found;
}

/* Look for pid's discovery file `name` in the directory `dir`, which must be
 * trusted for `uid`. @return 0 with the socket in sock; 1 if there is no such
 * directory or file (nothing to say); -1 with why. */
static int find_in_dir(long pid, long nspid, long uid, const char *dir, const char *name,
                       char *sock, size_t cap, char *why, size_t whylen)
{
    char trust[256];
    int dfd = rp_trust_opendir(dir, (uid_t)uid, trust, sizeof trust);
    if (dfd < 0) {
        if (errno == ENOENT)
            return 1;
        rp_fail(why, whylen, "the discovery directory %s %s, so its files are not trusted "
             "(remove it; the agent makes it again, mode 0700)", dir, trust);
        return -1;
    }
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        close(dfd);
        return 1;
    }
    struct rp_discovery_info d;
    int rc = rp_discovery_read(dfd, dir, name, (unsigned)uid, &d, why, whylen);
    close(dfd);
    if (rc != 0)
        return -1;
    if (d.pid != pid && d.pid != nspid) {
        snprintf(why, whylen, "%s names pid %ld", d.file, d.pid);
        return -1;
    }
    if (rp_discovery_stale(&d, pid)) {
        snprintf(why, whylen, "%s was left by an earlier process with this pid", d.file);
        return -1;
    }
    if (resolve_in_ns(pid, d.socket, sock, cap) != 0) {
        snprintf(why, whylen, "no socket at %s", d.socket);
        return -1;
    }
    return 0;
}

int rp_ctl_find(long pid, char *sock, size_t cap, struct rp_ctl_peer *peer, char *err,
                size_t errlen)
{
    long uid = rp_proc_uid(pid);
    if (uid < 0 || !rp_proc_alive(pid))
        return rp_fail(err, errlen, "no process with pid %ld", pid);
    peer->pid = pid;
    peer->uid = uid;
    if (errlen)
        err[0] = '\0';
    long nspid = rp_proc_nspid(pid);
    char dirs[2][PATH_MAX], names[2][64];
    snprintf(dirs[0], sizeof dirs[0], RP_DISCOVERY_DIR_FMT, (unsigned)uid);
    snprintf(names[0], sizeof names[0], "%ld" RP_DISCOVERY_SUFFIX, pid);
    snprintf(dirs[1], sizeof dirs[1], "/proc/%ld/root" RP_DISCOVERY_DIR_FMT, pid,
             (unsigned)uid);
    snprintf(names[1], sizeof names[1], "%ld" RP_DISCOVERY_SUFFIX, nspid);
    char why[2 * PATH_MAX + 256] = "";
    for (int i = 0; i < 2; i++) {
        char w[sizeof why];
        int rc = find_in_dir(pid, nspid, uid, dirs[i], names[i], sock, cap, w, sizeof w);
        if (rc == 0)
            return 0;
        if (rc < 0 && !why[0])
            snprintf(why, sizeof why, "%s", w);
    }
    int held = find_socket_fd(pid, sock, cap);
    if (held == 0) {
        /* Found by the process's own descriptors; say what was passed over. */
        if (errlen)
            snprintf(err, errlen, "%s", why);
        return 0;
    }
    if (held == 1)
        return rp_fail(err, errlen, "no ringprof agent reachable in pid %ld: its control "
                       "socket %s has been removed (the process still listens on it, "
                       "but nothing can connect to it until the agent makes it again)",
                       pid, sock);
    if (!why[0])
        snprintf(why, sizeof why, "no discovery file %s/%s, and it holds no ringprof "
                 "control socket", dirs[0], names[0]);
    return rp_fail(err, errlen, "no ringprof agent in pid %ld (%s)", pid, why);
}
