/*
 * recorder/trust.c — the one ownership rule that the agent and the tools share
 * (contract and rationale: ringprof/trust.h).
 *
 * Everything is decided from fstat of a descriptor opened without following a
 * symlink, or from lstat of a resolved path, so what was checked is what is used:
 * callers read through the descriptor they got, or use a path whose every
 * directory only the trusted uid (or root) could change.
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
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
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

int rp_trust_path(const char *dir, uid_t uid, int sticky_ok, char *resolved,
                  char *why, size_t whylen)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return say(why, whylen, "%s cannot be resolved: %s", dir, strerror(errno));
    if (resolved)
        memcpy(resolved, real, strlen(real) + 1);
    /* Every prefix of the resolved path: "/", "/a", "/a/b", ..., the directory. */
    char prefix[PATH_MAX];
    size_t len = strlen(real);
    for (size_t p = 0; p <= len; p++) {
        if ((p < len && real[p] != '/') || (p == len && len == 1))
            continue;
        size_t plen = p ? p : 1;
        int last = plen == len;
        memcpy(prefix, real, plen);
        prefix[plen] = '\0';
        struct stat st;
        if (lstat(prefix, &st) != 0)
            return say(why, whylen, "%s cannot be checked: %s", prefix, strerror(errno));
        unsigned mode = (unsigned)(st.st_mode & 07777);
        if (!S_ISDIR(st.st_mode))
            return say(why, whylen, "%s is %s, not a directory", prefix,
                       type_name(st.st_mode));
        char w[48];
        if (!owner_ok(&st, uid))
            return say(why, whylen, "%s belongs to uid %u (mode %04o), not to %s", prefix,
                       (unsigned)st.st_uid, mode, whom(uid, w, sizeof w));
        int open_to_others = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
        int sticky = (st.st_mode & S_ISVTX) != 0;
        if (open_to_others && !sticky)
            return say(why, whylen, "%s may be written by %s (mode %04o, owner uid %u)",
                       prefix, st.st_mode & S_IWOTH ? "every user" : "its group", mode,
                       (unsigned)st.st_uid);
        if (last && open_to_others && !sticky_ok)
            return 1;
    }
    return 0;
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
