/*
 * tools/commands/push_dir.c — the followed recording directory of `ringprof
 * push` (push_dir.h).
 */
#include "push_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "model/xalloc.h"
#include "ringprof/errbuf.h"
#include "push_state.h"
#include "ringprof/recording.h"

/* What the agent does to a directory that matters here: finish a chunk (a
 * rename in), delete one (retention), and the directory itself going away. */
#define WATCH_MASK (IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | \
                    IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

static void watch(struct rp_push_dir *d)
{
    if (d->ino_fd < 0)
        d->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (d->ino_fd >= 0)
        d->wd = inotify_add_watch(d->ino_fd, d->path, WATCH_MASK);
}

/* (Re)open the directory by its path. @return 0 or -1. */
static int reopen(struct rp_push_dir *d, char *err, size_t errlen)
{
    if (d->dfd >= 0)
        close(d->dfd);
    d->dfd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->dfd < 0)
        return rp_fail(err, errlen, "%s: %s", d->path, strerror(errno));
    watch(d);
    return 0;
}

int rp_push_dir_open(struct rp_push_dir *d, const char *path, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->dfd = d->ino_fd = d->wd = -1;
    d->path = rp_xstrdup(path);
    size_t n = strlen(d->path);
    while (n > 1 && d->path[n - 1] == '/')
        d->path[--n] = '\0';
    return reopen(d, err, errlen);
}

static struct rp_push_file *find(struct rp_push_dir *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->files[i].name, name))
            return &d->files[i];
    return NULL;
}

static void file_free(struct rp_push_file *f)
{
    free(f->name);
    free(f->path);
    free(f->ident_err);
    rp_push_ident_free(&f->id);
}

/* A new chunk file, its header read. */
static void add_file(struct rp_push_dir *d, const char *name, const struct stat *st)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 32;
        d->files = rp_xreallocarray(d->files, d->cap, sizeof *d->files);
    }
    struct rp_push_file *f = &d->files[d->n++];
    memset(f, 0, sizeof *f);
    f->name = rp_xstrdup(name);
    size_t len = strlen(d->path) + strlen(name) + 2;
    f->path = rp_xmalloc(len);
    snprintf(f->path, len, "%s/%s", d->path, name);
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->seen = 1;
    char why[1024];
    f->ident_ok = rp_push_ident_read(f->path, &f->id, why, sizeof why) == 0;
    if (f->ident_ok && (!rp_push_id_ok(f->id.recording) || !f->id.has_seq)) {
        f->ident_ok = 0;
        snprintf(why, sizeof why, "%s: its header has no recording.id (of at most %d "
                 "printable characters, no space) or no chunk.seq", f->path, RP_PUSH_ID_MAX);
    }
    if (!f->ident_ok)
        f->ident_err = rp_xstrdup(why);
}

/* One directory entry. */
static void entry(struct rp_push_dir *d, const char *name)
{
    long pid;
    uint64_t start;
    uint32_t seq;
    int part;
    if (rp_recording_parse_name(name, &pid, &start, &seq, &part) != 0)
        return;
    struct stat st;
    if (fstatat(d->dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return;
    if (part) {
        d->parts_open++;
        return;
    }
    struct rp_push_file *f = find(d, name);
    if (f && (f->dev != st.st_dev || f->ino != st.st_ino)) {
        file_free(f);                      /* another file took the name */
        *f = d->files[--d->n];
        f = NULL;
    }
    if (f)
        f->seen = 1;
    else
        add_file(d, name, &st);
}

int rp_push_dir_scan(struct rp_push_dir *d, char *err, size_t errlen)
{
    struct stat st;
    if (d->dfd < 0 || fstat(d->dfd, &st) != 0 || st.st_nlink == 0) {
        if (reopen(d, err, errlen) < 0)
            return -1;
    }
    int fd = dup(d->dfd);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return rp_fail(err, errlen, "%s: %s", d->path, strerror(errno));
    }
    rewinddir(dir);
    for (size_t i = 0; i < d->n; i++)
        d->files[i].seen = 0;
    d->parts_open = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        entry(d, e->d_name);
    closedir(dir);
    for (size_t i = 0; i < d->n;) {
        if (d->files[i].seen) {
            i++;
            continue;
        }
        file_free(&d->files[i]);
        d->files[i] = d->files[--d->n];
    }
    return 0;
}

int rp_push_dir_wait(struct rp_push_dir *d, int timeout_ms)
{
    if (d->ino_fd < 0 || d->wd < 0) {
        struct pollfd none;
        poll(&none, 0, timeout_ms);
        return 0;
    }
    struct pollfd p = {.fd = d->ino_fd, .events = POLLIN};
    int rc = poll(&p, 1, timeout_ms);
    if (rc <= 0)
        return 0;
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t len;
    int changed = 0;
    while ((len = read(d->ino_fd, buf, sizeof buf)) > 0) {
        for (char *p2 = buf; p2 < buf + len;) {
            const struct inotify_event *ev = (const struct inotify_event *)p2;
            long pid;
            uint64_t start;
            uint32_t seq;
            int part;
            if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
                inotify_rm_watch(d->ino_fd, d->wd);
                d->wd = -1;       /* the next scan opens it again */
                close(d->dfd);
                d->dfd = -1;
                changed = 1;
            } else if ((ev->mask & IN_Q_OVERFLOW) || !ev->len ||
                       rp_recording_parse_name(ev->name, &pid, &start, &seq, &part) == 0) {
                changed = 1;      /* not for push's own state file, nor others */
            }
            p2 += sizeof *ev + ev->len;
        }
    }
    return changed;
}

void rp_push_dir_close(struct rp_push_dir *d)
{
    for (size_t i = 0; i < d->n; i++)
        file_free(&d->files[i]);
    free(d->files);
    free(d->path);
    if (d->dfd >= 0)
        close(d->dfd);
    if (d->ino_fd >= 0)
        close(d->ino_fd);
    memset(d, 0, sizeof *d);
    d->dfd = d->ino_fd = d->wd = -1;
}
