/*
 * src/control/control_path.c — where the control socket lives: its path
 * resolved and trusted, the directory held open, the bind, and the check that
 * makes it again when it is removed (control_server.h; the rules are control.h's
 * "Path" and "Recovery").
 *
 * The socket's directory is resolved and checked once (ringprof/trust.h) and
 * held open (dirfd); the socket is bound at the resolved path, and looked at,
 * made private and removed through dirfd. A live socket at the name is never
 * taken over, a stale one is replaced, anything else is left alone. Once a
 * second the server thread looks for the socket file and, when it has gone,
 * makes its directory and the socket again as at start.
 */
#include "control/control_server.h"
#include "ringprof/errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

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
        rp_fail(err, errlen, "cannot check control socket path %s: %s", path,
                strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        rp_fail(err, errlen, "control socket path %s exists and is not a socket; "
                "not replacing it", path);
        return -1;
    }
    int live = probe_socket(path);
    if (live == 1) {
        rp_fail(err, errlen, "control socket %s is in use by a live process; "
                "not taking it over", path);
        return -1;
    }
    if (live < 0 && errno != ENOENT) {
        rp_fail(err, errlen, "cannot check the existing control socket %s: %s", path,
                strerror(errno));
        return -1;
    }
    if (unlinkat(ctl->dirfd, ctl->name, 0) != 0 && errno != ENOENT) {
        rp_fail(err, errlen, "cannot remove the stale control socket %s: %s", path,
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
        rp_fail(err, errlen, "cannot open the control socket's directory %s: %s",
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
        rp_fail(err, errlen, "control socket path %s does not end in a file name", path);
        return -1;
    }
    if (!slash)
        strcpy(dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (rp_trust_path(dir, geteuid(), 1, real, why, sizeof why) != 0) {
        if (access(dir, F_OK) != 0)
            rp_fail(err, errlen, "cannot bind control socket %s: %s", path,
                    strerror(errno));
        else
            rp_fail(err, errlen, "not creating control socket %s: %s; another user "
                    "could replace the socket with one of theirs", path, why);
        return -1;
    }
    int n = snprintf(ctl->path, sizeof ctl->path, "%s%s%s", real, real[1] ? "/" : "",
                     name);
    if (n < 0 || n > RP_CONTROL_PATH_MAX) {
        rp_fail(err, errlen, "control socket path is too long once its directory is "
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
        rp_fail(err, errlen, "cannot create control socket: %s", strerror(errno));
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
            rp_fail(err, errlen, "control socket %s is in use by a live process; "
                    "not taking it over", path);
        else
            rp_fail(err, errlen, "cannot bind control socket %s: %s", path,
                    strerror(errno));
        close(fd);
        return -1;
    }
    struct stat st, sp;
    errno = 0;
    if (fchmodat(ctl->dirfd, ctl->name, S_IRUSR | S_IWUSR, 0) != 0 ||
        fstatat(ctl->dirfd, ctl->name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISSOCK(st.st_mode) || (st.st_mode & 0777) != 0600) {
        rp_fail(err, errlen, "cannot make control socket %s private (mode 0600): %s",
                path, errno ? strerror(errno) : "mode did not change");
        unlink_made(ctl);
        close(fd);
        return -1;
    }
    if (lstat(path, &sp) != 0 || sp.st_dev != st.st_dev || sp.st_ino != st.st_ino) {
        rp_fail(err, errlen, "control socket %s is not in the directory that was "
                "checked (%s); not using it", path, ctl->dir);
        unlink_made(ctl);
        close(fd);
        return -1;
    }
    ctl->dev = st.st_dev;
    ctl->ino = st.st_ino;
    if (listen(fd, SOMAXCONN) != 0) {
        rp_fail(err, errlen, "cannot listen on control socket %s: %s", path,
                strerror(errno));
        unlink_made(ctl);
        close(fd);
        return -1;
    }
    return fd;
}

void rp_control_unlink_ours(const struct rp_control *ctl)
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
        rp_fail(err, errlen, "not making it again in %s: %s; another user could "
                "replace the socket with one of theirs", dir, why);
        return -1;
    }
    if (strcmp(real, dir) != 0) {
        rp_fail(err, errlen, "%s now resolves to %s; not following it", dir, real);
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
            rp_fail(err, errlen, "cannot make its directory %s again: %s", ctl->dir,
                    strerror(errno));
            return -1;
        }
    }
    if (still_trusted(ctl->dir, err, errlen) != 0)
        return -1;
    return hold_dir(ctl, err, errlen);
}

/* While the path leads to our socket there is nothing to do. Otherwise (the
 * file, or its directory, was removed) make it again as at start, swap the new
 * listening socket in (the connections of the old one go on), and have the
 * agent advertise it again. A failure is logged once per reason and tried
 * again at the next check. */
void rp_control_check_socket(struct rp_control *ctl)
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
            rp_control_logf(ctl, "control socket %s is gone and cannot be made again "
                            "yet (tried every %d ms): %s", ctl->path,
                            RP_CONTROL_CHECK_MS, err);
        snprintf(ctl->remake_why, sizeof ctl->remake_why, "%s", err);
        return;
    }
    close(ctl->lfd);
    ctl->lfd = fd;
    ctl->remake_why[0] = '\0';
    ctl->st.remade++;
    rp_control_logf(ctl, "control socket %s had been removed; made it again", ctl->path);
    if (ctl->ops.rebound)
        ctl->ops.rebound(ctl->ctx);
}

int rp_control_bind(struct rp_control *ctl, const char *path, char *err, size_t errlen)
{
    if (locate(ctl, path, err, errlen) != 0 || clear_path(ctl, err, errlen) != 0)
        return -1;
    ctl->lfd = bind_socket(ctl, err, errlen);
    return ctl->lfd < 0 ? -1 : 0;
}
