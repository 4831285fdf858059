/*
 * recorder/trust.c — the one ownership rule that the agent and the tools share
 * (contract and rationale: ringprof/trust.h).
 *
 * Everything is decided from fstat of a descriptor opened without following a
 * symlink, so what was checked is what is used: callers read and write through
 * the descriptor they got. A directory path is walked the way the kernel resolves
 * it, one component at a time from "/", but by hand: each component is opened
 * with O_PATH|O_NOFOLLOW in the directory already held and checked, a directory
 * is checked before it is entered, a symlink is checked (its owner) before its
 * target is read and walked in turn, ".." goes back to the directory held before,
 * and a missing directory is made with mkdirat in the parent just checked and then
 * checked like any other. No path is ever resolved a second time, so nothing can
 * be swapped between a check and the use (systemd-tmpfiles' chase() and
 * logrotate's fixes for their symlink CVEs work the same way).
 */
#include "ringprof/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((format(printf, 3, 4)))
static int say(char *why, size_t whylen, const char *fmt, ...)
{
    int e = errno;              /* callers set errno first: keep it */
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    errno = e;
    return -1;
}

static const char *type_name(mode_t m)
{
    return S_ISLNK(m) ? "a symlink" : S_ISDIR(m) ? "a directory" : S_ISREG(m) ?
           "a regular file" : S_ISSOCK(m) ? "a socket" : S_ISFIFO(m) ? "a FIFO" :
           "a device or special file";
}

/* "uid 1000 or root", or "root" for root. */
static const char *whom(uid_t uid, char *buf, size_t cap)
{
    if (uid == 0)
        return "root";
    snprintf(buf, cap, "uid %u or root", (unsigned)uid);
    return buf;
}

static int owner_ok(const struct stat *st, uid_t uid)
{
    return st->st_uid == uid || st->st_uid == 0;
}

int rp_trust_stat(const struct stat *st, uid_t uid, mode_t type, off_t max,
                  char *why, size_t whylen)
{
    unsigned mode = (unsigned)(st->st_mode & 07777);
    if ((st->st_mode & S_IFMT) != type)
        return say(why, whylen, "is %s, not %s", type_name(st->st_mode),
                   type == S_IFDIR ? "a directory" : "a regular file");
    char w[48];
    if (!owner_ok(st, uid))
        return say(why, whylen, "belongs to uid %u (mode %04o), not to %s",
                   (unsigned)st->st_uid, mode, whom(uid, w, sizeof w));
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return say(why, whylen, "may be written by %s (mode %04o, owner uid %u)",
                   st->st_mode & S_IWOTH ? "every user" : "its group", mode,
                   (unsigned)st->st_uid);
    if (type == S_IFREG && st->st_nlink != 1)
        return say(why, whylen, "has %lu hard links (a file of ours has one)",
                   (unsigned long)st->st_nlink);
    if (type == S_IFREG && max > 0 && st->st_size > max)
        return say(why, whylen, "is %lld bytes, more than the %lld expected",
                   (long long)st->st_size, (long long)max);
    return 0;
}

int rp_trust_opendir(const char *path, uid_t uid, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ENOENT)
            say(why, whylen, "does not exist");
        else if ((e == ELOOP || e == ENOTDIR) && lstat(path, &st) == 0)
            say(why, whylen, "is %s (owner uid %u), not a directory",
                type_name(st.st_mode), (unsigned)st.st_uid);
        else
            say(why, whylen, "cannot be opened: %s", strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || rp_trust_stat(&st, uid, S_IFDIR, 0, why, whylen) != 0) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

int rp_trust_openat(int dfd, const char *name, uid_t uid, off_t max, char *why,
                    size_t whylen)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ENOENT)
            say(why, whylen, "does not exist");
        else if (e == ELOOP && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            say(why, whylen, "is a symlink (owner uid %u), not a regular file",
                (unsigned)st.st_uid);
        else
            say(why, whylen, "cannot be opened: %s", strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || rp_trust_stat(&st, uid, S_IFREG, max, why, whylen) != 0) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* ------------------------------------------------------------ the walk -- */

/* One walk: the directories entered so far, each held by an O_PATH descriptor
 * (fd[0] is "/"), the resolved path to each (len[i] bytes of res), and the part of
 * the path still to walk (todo, from `at`), into which a symlink's target is
 * spliced. */
struct walk {
    int *fd;
    size_t *len;
    size_t n, cap;
    char res[PATH_MAX];
    char todo[PATH_MAX];
    size_t at;
    int links;
    uid_t uid;
    char *why;
    size_t whylen;
};

/* `name` in the directory on top, as a path for a message. */
static const char *child_path(const struct walk *w, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", w->res, name);
    return buf;
}

static const char *top_path(const struct walk *w)
{
    return w->res[0] ? w->res : "/";
}

/* A directory on the way is trusted when it belongs to the uid or root and nobody
 * else may write it, or only a sticky bit's way (see the rule in trust.h). */
static int dir_ok(const struct walk *w, const struct stat *st, const char *path)
{
    unsigned mode = (unsigned)(st->st_mode & 07777);
    char u[48];
    if (!owner_ok(st, w->uid))
        return say(w->why, w->whylen, "%s belongs to uid %u (mode %04o), not to %s", path,
                   (unsigned)st->st_uid, mode, whom(w->uid, u, sizeof u));
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
        return say(w->why, w->whylen, "%s may be written by %s (mode %04o, owner uid %u)",
                   path, st->st_mode & S_IWOTH ? "every user" : "its group", mode,
                   (unsigned)st->st_uid);
    return 0;
}

static int push(struct walk *w, int fd, const char *name)
{
    size_t base = w->n ? w->len[w->n - 1] : 0, nl = name ? strlen(name) : 0;
    if (name && base + 1 + nl >= sizeof w->res) {
        close(fd);
        return errno = ENAMETOOLONG,
               say(w->why, w->whylen, "%s/%s is longer than %d bytes", w->res, name,
                   PATH_MAX - 1);
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        int *fd2 = realloc(w->fd, cap * sizeof *fd2);
        if (fd2)
            w->fd = fd2;
        size_t *len2 = fd2 ? realloc(w->len, cap * sizeof *len2) : NULL;
        if (!len2) {
            close(fd);
            return errno = ENOMEM, say(w->why, w->whylen, "out of memory");
        }
        w->len = len2;
        w->cap = cap;
    }
    if (name) {
        w->res[base] = '/';
        memcpy(w->res + base + 1, name, nl + 1);
        base += 1 + nl;
    }
    w->fd[w->n] = fd;
    w->len[w->n++] = base;
    return 0;
}

static void pop(struct walk *w)
{
    if (w->n <= 1)
        return;                       /* "/.." is "/" */
    close(w->fd[--w->n]);
    w->res[w->len[w->n - 1]] = '\0';
}

/* The link `lfd` (O_PATH, its stat in st) named `name` on top: check its owner,
 * read it and put its target before the rest of the path. An absolute target
 * starts again from "/". The directory the link sits in is trusted already, so
 * only the link's owner (or root) could have made it or could change it. */
static int follow(struct walk *w, int lfd, const struct stat *st, const char *name)
{
    char path[PATH_MAX + NAME_MAX + 2], target[PATH_MAX], u[48];
    if (!owner_ok(st, w->uid))
        return errno = EPERM,
               say(w->why, w->whylen, "%s is a symlink that belongs to uid %u, not to %s",
                   child_path(w, name, path, sizeof path), (unsigned)st->st_uid,
                   whom(w->uid, u, sizeof u));
    if (++w->links > RP_TRUST_MAX_LINKS)
        return errno = ELOOP,
               say(w->why, w->whylen, "more than %d symlinks on the way to %s",
                   RP_TRUST_MAX_LINKS, child_path(w, name, path, sizeof path));
    ssize_t n = readlinkat(lfd, "", target, sizeof target);
    if (n <= 0 || (size_t)n >= sizeof target)
        return errno = n < 0 ? errno : ENAMETOOLONG,
               say(w->why, w->whylen, "the symlink %s cannot be read",
                   child_path(w, name, path, sizeof path));
    target[n] = '\0';
    size_t rest = strlen(w->todo + w->at);
    if ((size_t)n + 1 + rest >= sizeof w->todo)
        return errno = ENAMETOOLONG,
               say(w->why, w->whylen, "the path through the symlink %s is longer than %d "
                   "bytes", child_path(w, name, path, sizeof path), PATH_MAX - 1);
    memmove(w->todo + n + 1, w->todo + w->at, rest + 1);
    memcpy(w->todo, target, (size_t)n);
    w->todo[n] = '/';
    w->at = 0;
    if (target[0] == '/')
        while (w->n > 1)
            pop(w);
    return 0;
}

/* Enter `name` in the directory on top: a directory is checked and pushed, a
 * symlink checked and followed, a missing entry made first when asked. */
static int step(struct walk *w, const char *name, unsigned flags, mode_t mode)
{
    char path[PATH_MAX + NAME_MAX + 2];
    int top = w->fd[w->n - 1];
    child_path(w, name, path, sizeof path);
    for (int tries = 0; ; tries++) {
        int fd = openat(top, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && (flags & RP_TRUST_CREATE) && tries < 3) {
            if (mkdirat(top, name, mode) != 0 && errno != EEXIST)
                return say(w->why, w->whylen, "cannot create %s", path);
            continue;                 /* and check it like any other */
        }
        if (fd < 0)
            return say(w->why, w->whylen, errno == ENOENT ? "%s does not exist" :
                       "cannot open %s", path);
        struct stat st;
        if (fstat(fd, &st) != 0) {
            int e = errno;
            close(fd);
            return errno = e, say(w->why, w->whylen, "cannot check %s", path);
        }
        if (S_ISDIR(st.st_mode)) {
            if (dir_ok(w, &st, path) != 0) {
                close(fd);
                return errno = EPERM, -1;
            }
            return push(w, fd, name);
        }
        int rc = S_ISLNK(st.st_mode) ? follow(w, fd, &st, name)
                 : (errno = ENOTDIR, say(w->why, w->whylen, "%s is %s", path,
                                         type_name(st.st_mode)));
        int e = errno;
        close(fd);
        errno = e;
        return rc;
    }
}

/* The next component of the path still to walk into `name`. @return 1, 0 at the
 * end of the path, or -1 for a name longer than NAME_MAX. */
static int next_name(struct walk *w, char *name)
{
    const char *p = w->todo + w->at;
    while (*p == '/')
        p++;
    if (!*p)
        return 0;
    size_t n = strcspn(p, "/");
    if (n > NAME_MAX)
        return errno = ENAMETOOLONG,
               say(w->why, w->whylen, "%.*s... in %s is longer than %d bytes", 16, p,
                   top_path(w), NAME_MAX);
    memcpy(name, p, n);
    name[n] = '\0';
    w->at = (size_t)(p + n - w->todo);
    return 1;
}

static int walk_start(struct walk *w, const char *path)
{
    size_t len = strlen(path);
    if (!len)
        return errno = ENOENT, say(w->why, w->whylen, "the path is empty");
    if (path[0] == '/') {
        if (len >= sizeof w->todo)
            return errno = ENAMETOOLONG, say(w->why, w->whylen, "the path is longer "
                                             "than %d bytes", PATH_MAX - 1);
        memcpy(w->todo, path, len + 1);
    } else {
        /* Relative: from the working directory, whose every directory up to "/" is
         * checked too (getcwd's answer holds no symlink). */
        if (!getcwd(w->todo, sizeof w->todo))
            return say(w->why, w->whylen, "the working directory cannot be found");
        size_t cl = strlen(w->todo);
        if (cl + 1 + len >= sizeof w->todo)
            return errno = ENAMETOOLONG, say(w->why, w->whylen, "the path is longer "
                                             "than %d bytes", PATH_MAX - 1);
        w->todo[cl] = '/';
        memcpy(w->todo + cl + 1, path, len + 1);
    }
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return errno = e, say(w->why, w->whylen, "cannot open /");
    }
    if (dir_ok(w, &st, "/") != 0) {
        close(fd);
        return errno = EPERM, -1;
    }
    return push(w, fd, NULL);
}

/* The directory on top, opened for reading: the descriptor the caller keeps. A
 * directory that others may write must be sticky to get here (dir_ok); without
 * RP_TRUST_SHARED it is still refused. */
static int walk_finish(struct walk *w, unsigned flags)
{
    int top = w->fd[w->n - 1];
    struct stat st;
    if (fstat(top, &st) != 0)
        return say(w->why, w->whylen, "cannot check %s", top_path(w));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(flags & RP_TRUST_SHARED))
        return errno = EPERM,
               say(w->why, w->whylen, "%s may be written by %s (mode %04o, owner uid %u)",
                   top_path(w), st.st_mode & S_IWOTH ? "every user" : "its group",
                   (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
    int fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return say(w->why, w->whylen, "cannot open %s", top_path(w));
    return fd;
}

int rp_trust_dir_open(const char *path, uid_t uid, unsigned flags, mode_t mode,
                      char *resolved, char *why, size_t whylen)
{
    struct walk *w = calloc(1, sizeof *w);
    if (!w)
        return errno = ENOMEM, say(why, whylen, "out of memory");
    w->uid = uid;
    w->why = why;
    w->whylen = whylen;
    int rc = walk_start(w, path), more;
    char name[NAME_MAX + 1];
    while (rc == 0 && (more = next_name(w, name)) != 0) {
        if (more < 0)
            rc = -1;
        else if (strcmp(name, "..") == 0)
            pop(w);
        else if (strcmp(name, ".") != 0)
            rc = step(w, name, flags, mode);
    }
    if (rc == 0)
        rc = walk_finish(w, flags);
    int e = errno;
    if (rc >= 0 && resolved)
        memcpy(resolved, top_path(w), strlen(top_path(w)) + 1);
    while (w->n)
        close(w->fd[--w->n]);
    free(w->fd);
    free(w->len);
    free(w);
    errno = e;
    return rc;
}

int rp_trust_path(const char *dir, uid_t uid, int sticky_ok, char *resolved,
                  char *why, size_t whylen)
{
    int fd = rp_trust_dir_open(dir, uid, RP_TRUST_SHARED, 0, resolved, why, whylen);
    if (fd < 0)
        return -1;
    struct stat st;
    int shared = fstat(fd, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH));
    close(fd);
    return shared && !sticky_ok ? 1 : 0;
}

char *rp_trust_escape(char *dst, size_t cap, const char *src)
{
    if (!cap)
        return dst;
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)src;
    for (; *s; s++) {
        char tmp[8];
        size_t n;
        if (*s < 0x20 || *s == 0x7f)
            n = (size_t)snprintf(tmp, sizeof tmp, "\\x%02x", *s);
        else if (*s == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
            n = (size_t)snprintf(tmp, sizeof tmp, "\\u%04x", *++s);
        else
            tmp[0] = (char)*s, n = 1;
        if (o + n > cap - 1) {
            size_t dots = cap - 1 < 3 ? cap - 1 : 3;
            if (o > cap - 1 - dots)
                o = cap - 1 - dots;
            memcpy(dst + o, "...", dots);
            o += dots;
            break;
        }
        memcpy(dst + o, tmp, n);
        o += n;
    }
    dst[o] = '\0';
    return dst;
}
