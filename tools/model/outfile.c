/*
 * tools/model/outfile.c — the tool's output files: a held directory, a temporary,
 * a rename (contract and rules: outfile.h).
 *
 * The walk opens each directory with O_PATH|O_NOFOLLOW|O_DIRECTORY, so what it
 * holds is never reached through a link it did not decide to follow; a link is
 * looked at only when that open fails, and followed by reading it and walking its
 * target from the directory that holds it, as the kernel would.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "ringprof/trust.h"

#define MAX_LINKS        40        /* links per walk: the kernel's own limit    */
#define PROC_SUPER_MAGIC 0x9fa0    /* statfs f_type of /proc (linux/magic.h)    */
#define PENDING_MAX      4         /* temporaries removed on a fatal signal     */

/* One phrase into why (whylen bytes; NULL and 0 for none, as snprintf allows),
 * and -1: every function here that fails says why this way. */
#define SAY(...) (snprintf(why, whylen, __VA_ARGS__), -1)

/* ------------------------------------------------------------------ walk -- */

/* Whether the symlink `lnk` in the directory `dir` may be followed by `uid`: only
 * the uid and root could have put it there or can replace it. If not, the
 * directory's fault in why. */
static int link_trusted(const struct stat *dir, const struct stat *lnk, uid_t uid,
                        char *why, size_t whylen)
{
    if (rp_trust_stat(dir, uid, S_IFDIR, 0, why, whylen) == 0)
        return 1;
    int ours = dir->st_uid == uid || dir->st_uid == 0;
    int link_ours = lnk->st_uid == uid || lnk->st_uid == 0;
    return (dir->st_mode & S_ISVTX) && ours && link_ours;
}

/* What goes between the path walked so far and the next component. */
static const char *sep(const char *shown)
{
    size_t n = strlen(shown);
    return n && shown[n - 1] != '/' ? "/" : "";
}

/* The path walked so far ("" at the working directory, "/" at the root), plus comp. */
static void shown_add(char *shown, size_t cap, const char *comp)
{
    size_t n = strlen(shown);
    snprintf(shown + n, cap - n, "%s%s", sep(shown), comp);
}

/* Replace the link `comp` (in fd, reached as `shown`, PATH_MAX bytes) by its
 * target in front of `rest` (PATH_MAX bytes). @return the directory to go on
 * from (fd itself, or "/" for an absolute target, with shown "/"), or -1 with
 * why. */
static int follow_link(int fd, const char *comp, char *shown, char *rest, char *why,
                       size_t whylen)
{
    struct stat ds, ls;
    char dwhy[256];
    if (fstat(fd, &ds) != 0 || fstatat(fd, comp, &ls, AT_SYMLINK_NOFOLLOW) != 0)
        return SAY("%s%s%s cannot be checked: %s", shown, sep(shown), comp,
                   strerror(errno));
    if (!link_trusted(&ds, &ls, geteuid(), dwhy, sizeof dwhy))
        return SAY("%s%s%s is a symlink (owner uid %u), and its directory "
                   "%s %s: not followed", shown, sep(shown), comp, (unsigned)ls.st_uid,
                   *shown ? shown : ".", dwhy);
    char target[PATH_MAX];
    ssize_t k = readlinkat(fd, comp, target, sizeof target - 1);
    if (k <= 0)
        return SAY("%s%s%s cannot be read: %s", shown, sep(shown), comp,
                   k < 0 ? strerror(errno) : "an empty symlink");
    target[k] = '\0';
    size_t rlen = strlen(rest);
    if ((size_t)k == sizeof target - 1 || (size_t)k + 1 + rlen >= PATH_MAX)
        return SAY("%s%s%s: %s", shown, sep(shown), comp,
                   strerror(ENAMETOOLONG));
    memmove(rest + k + 1, rest, rlen + 1);
    memcpy(rest, target, (size_t)k);
    rest[k] = '/';
    if (target[0] != '/')
        return fd;
    snprintf(shown, PATH_MAX, "/");
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    return root >= 0 ? root : SAY("cannot open /: %s", strerror(errno));
}

/* Take the next component of `rest` into comp (NAME_MAX + 1 bytes). @return 1, 0
 * when none is left, -1 when it is too long. *last: no component after it. */
static int next_component(char *rest, char *comp, int *last)
{
    char *p = rest + strspn(rest, "/");
    size_t n = strcspn(p, "/");
    if (!n)
        return 0;
    if (n > NAME_MAX)
        return -1;
    memcpy(comp, p, n);
    comp[n] = '\0';
    memmove(rest, p + n, strlen(p + n) + 1);
    *last = rest[strspn(rest, "/")] == '\0';
    return 1;
}

/* Walk `path` from the directory `start` (AT_FDCWD: the working directory), as
 * outfile.h says. @return an O_PATH descriptor or -1 with why. */
static int walk(int start, const char *path, mode_t mkmode, char *why, size_t whylen)
{
    char rest[PATH_MAX], shown[PATH_MAX], comp[NAME_MAX + 1];
    if (!*path)
        return SAY("an empty path");
    if (strlen(path) >= sizeof rest)
        return SAY("%s", strerror(ENAMETOOLONG));
    snprintf(rest, sizeof rest, "%s", path);
    snprintf(shown, sizeof shown, "%s", path[0] == '/' ? "/" : "");
    int fd = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                            : openat(start, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return SAY("cannot open %s: %s", *shown ? "/" : ".", strerror(errno));
    int links = 0, last, more;
    while ((more = next_component(rest, comp, &last)) > 0) {
        if (!strcmp(comp, "."))
            continue;
        int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0 && errno == ENOENT && last && mkmode &&
            (mkdirat(fd, comp, mkmode) == 0 || errno == EEXIST))
            nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        struct stat ls;
        if (nfd < 0 && (e == ENOTDIR || e == ELOOP) &&
            fstatat(fd, comp, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode)) {
            if (++links > MAX_LINKS) {
                close(fd);
                return SAY("%s: %s", path, strerror(ELOOP));
            }
            nfd = follow_link(fd, comp, shown, rest, why, whylen);
            if (nfd == fd)
                continue;
        } else if (nfd >= 0) {
            shown_add(shown, sizeof shown, comp);
        } else {
            shown_add(shown, sizeof shown, comp);
            close(fd);
            int plain = e == ENOENT || e == ENOTDIR;
            return SAY("%s%s%s", shown, e == ENOENT ? " does not exist"
                       : e == ENOTDIR ? " is not a directory" : ": ",
                       plain ? "" : strerror(e));
        }
        close(fd);
        if ((fd = nfd) < 0)
            return -1;
    }
    if (more < 0) {
        close(fd);
        return SAY("%s: a component is longer than %d bytes", path, NAME_MAX);
    }
    return fd;
}

int rp_outdir_open(const char *path, mode_t mkmode, char *why, size_t whylen)
{
    return walk(AT_FDCWD, path, mkmode, why, whylen);
}

/* -------------------------------------------------- temporaries, signals -- */

static struct rp_outfile *volatile pending[PENDING_MAX];

/* SIGINT, SIGTERM, SIGHUP: remove the temporaries, then die of the signal (the
 * handler was reset on entry: SA_RESETHAND). Async-signal-safe: unlinkat only. */
static void on_fatal_signal(int sig)
{
    int e = errno;
    for (int i = 0; i < PENDING_MAX; i++) {
        struct rp_outfile *o = pending[i];
        if (o)
            unlinkat(o->dfd, o->tmp, 0);
    }
    errno = e;
    raise(sig);
}

/* Catch the fatal signals that still have their default action, once. */
static void catch_signals(void)
{
    static int done;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    if (done++)
        return;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(sigs[i], &sa, NULL);
    }
}

static void track(struct rp_outfile *o, int on)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (on ? !pending[i] : pending[i] == o) {
            pending[i] = on ? o : NULL;
            return;
        }
}

/* o->tmp: a new file in o->dfd. @return its descriptor, or -1 with why. */
static int create_temp(struct rp_outfile *o, char *why, size_t whylen)
{
    for (unsigned i = 0; i < 100; i++) {
        uint32_t r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (uint32_t)getpid() * 2654435761u + i;
        snprintf(o->tmp, sizeof o->tmp, ".%.200s.%08x.tmp", o->name, (unsigned)r);
        int fd = openat(o->dfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
    }
    return SAY("cannot create a file in its directory: %s", strerror(errno));
}

/* Write `name` by a temporary renamed onto it. */
static int open_replacing(struct rp_outfile *o, int dfd, char *why, size_t whylen)
{
    if ((o->dfd = fcntl(dfd, F_DUPFD_CLOEXEC, 0)) < 0)
        return SAY("%s", strerror(errno));
    catch_signals();
    int fd = create_temp(o, why, whylen);
    if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        unlinkat(o->dfd, o->tmp, 0);
    }
    if (!o->f) {
        close(o->dfd);
        o->dfd = -1;
        return -1;
    }
    track(o, 1);
    return 0;
}

/* Write `name` in dfd where it is: a device or FIFO (follow 0: not through a
 * link), or an open file reached through /proc (follow 1). A FIFO's open waits
 * for its reader, as fopen's would. */
static int open_in_place(struct rp_outfile *o, int dfd, const char *name, int follow,
                         char *why, size_t whylen)
{
    int fd = openat(dfd, name, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC |
                    (follow ? 0 : O_NOFOLLOW));
    if (fd < 0)
        return SAY("%s", strerror(errno));
    struct stat st;
    if (!follow && (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))) {
        close(fd);
        return SAY("changed while it was opened: not written");
    }
    if (!(o->f = fdopen(fd, "w"))) {
        close(fd);
        return SAY("%s", strerror(errno));
    }
    return 0;
}

static int on_procfs(int fd)
{
    struct statfs s;
    return fstatfs(fd, &s) == 0 && s.f_type == PROC_SUPER_MAGIC;
}

/* The symlink `name` in dfd, if it sits in a trusted directory and leads to an
 * entry of a /proc/PID/fd directory (/dev/stdout, /dev/fd/N): that directory, with
 * the entry's name in base (NAME_MAX + 1 bytes). @return -1 otherwise. */
static int link_into_proc(int dfd, const char *name, char *base)
{
    struct stat ds, ls;
    char target[PATH_MAX];
    if (fstat(dfd, &ds) != 0 || fstatat(dfd, name, &ls, AT_SYMLINK_NOFOLLOW) != 0 ||
        !link_trusted(&ds, &ls, geteuid(), NULL, 0))
        return -1;
    ssize_t k = readlinkat(dfd, name, target, sizeof target - 1);
    if (k <= 0)
        return -1;
    target[k] = '\0';
    char *slash = strrchr(target, '/');
    if (!slash || strlen(slash + 1) > NAME_MAX || !slash[1])
        return -1;
    snprintf(base, NAME_MAX + 1, "%s", slash + 1);
    *slash = '\0';
    int fd = walk(dfd, target[0] ? target : "/", 0, NULL, 0);
    if (fd >= 0 && !on_procfs(fd)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* ------------------------------------------------------------ the file -- */

int rp_outfile_openat(struct rp_outfile *o, int dfd, const char *name, char *why,
                      size_t whylen)
{
    memset(o, 0, sizeof *o);
    o->dfd = -1;
    if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return SAY("names a directory, not a file");
    size_t n = strlen(name);
    if (n >= sizeof o->name)
        return SAY("%s", strerror(ENAMETOOLONG));
    memcpy(o->name, name, n + 1);
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? open_replacing(o, dfd, why, whylen)
                               : SAY("cannot be checked: %s", strerror(errno));
    if (S_ISREG(st.st_mode))
        return open_replacing(o, dfd, why, whylen);
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return open_in_place(o, dfd, name, 0, why, whylen);
    if (S_ISLNK(st.st_mode)) {
        if (on_procfs(dfd))
            return open_in_place(o, dfd, name, 1, why, whylen);
        char base[NAME_MAX + 1];
        int pfd = link_into_proc(dfd, name, base);
        if (pfd < 0)
            return open_replacing(o, dfd, why, whylen);
        int rc = open_in_place(o, pfd, base, 1, why, whylen);
        close(pfd);
        return rc;
    }
    return SAY("is %s: not written", S_ISDIR(st.st_mode) ? "a directory"
                            : S_ISSOCK(st.st_mode) ? "a socket" : "a block device");
}

int rp_outfile_open(struct rp_outfile *o, const char *path, char *why, size_t whylen)
{
    memset(o, 0, sizeof *o);
    o->dfd = -1;
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    char dir[PATH_MAX] = ".";
    size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir)
        return SAY("%s", strerror(ENAMETOOLONG));
    if (n) {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int dfd = rp_outdir_open(dir, 0, why, whylen);
    if (dfd < 0)
        return -1;
    int rc = rp_outfile_openat(o, dfd, name, why, whylen);
    close(dfd);
    return rc;
}

/* Close the held directory; on failure remove the temporary. */
static void finish(struct rp_outfile *o, int failed)
{
    if (o->dfd < 0)
        return;
    track(o, 0);
    if (failed)
        unlinkat(o->dfd, o->tmp, 0);
    close(o->dfd);
    o->dfd = -1;
}

int rp_outfile_commit(struct rp_outfile *o, char *why, size_t whylen)
{
    if (!o->f)
        return SAY("not open");
    int e = fflush(o->f) != 0 || ferror(o->f) ? (errno ? errno : EIO) : 0;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && o->dfd >= 0 && renameat(o->dfd, o->tmp, o->dfd, o->name) != 0)
        e = errno;
    finish(o, e != 0);
    return e ? SAY("%s", strerror(e)) : 0;
}

void rp_outfile_discard(struct rp_outfile *o)
{
    if (!o->f)
        return;
    fclose(o->f);
    o->f = NULL;
    finish(o, 1);
}
