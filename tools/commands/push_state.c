/*
 * tools/commands/push_state.c — `ringprof push`'s state file (push_state.h).
 *
 *   ringprof-push-state 1
 *   target pyroscope http://127.0.0.1:4040/ingest
 *   plan pyroscope pprof period=0 events=cpu,alloc,live,wall,lock
 *   rec 12345-20261121T060102Z-5f3a... NEXT PARTS REJ SENT REJECTED MISSING SEEN LAST
 *       SINCE
 *
 * Every field is one token; target and plan are the rest of their line.
 */
#include "push_state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "model/xalloc.h"
#include "ringprof/errbuf.h"
#include "ringprof/trust.h"

#define STATE_MAGIC "ringprof-push-state 1"
/* A state of RP_PUSH_STATE_RECS recordings is about 600 KB. */
#define STATE_MAX_BYTES (16u << 20)

int rp_push_id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > RP_PUSH_ID_MAX)
        return 0;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return 0;
    return 1;
}

struct rp_push_rec *rp_push_state_rec(struct rp_push_state *s, const char *id,
                                      int create)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->recs[i].id, id))
            return &s->recs[i];
    if (!create)
        return NULL;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->recs = rp_xreallocarray(s->recs, s->cap, sizeof *s->recs);
    }
    struct rp_push_rec *r = &s->recs[s->n++];
    memset(r, 0, sizeof *r);
    r->id = rp_xstrdup(id);
    return r;
}

void rp_push_state_set(struct rp_push_state *s, const char *target, const char *plan)
{
    free(s->target);
    free(s->plan);
    s->target = rp_xstrdup(target);
    s->plan = rp_xstrdup(plan);
}

static int by_seen(const void *a, const void *b)
{
    const struct rp_push_rec *x = a, *y = b;
    if (x->present != y->present)
        return x->present - y->present;          /* file-less ones first */
    return x->seen < y->seen ? -1 : x->seen > y->seen;
}

void rp_push_state_prune(struct rp_push_state *s, size_t keep)
{
    if (s->n <= keep)
        return;
    qsort(s->recs, s->n, sizeof *s->recs, by_seen);
    size_t drop = 0;
    while (s->n - drop > keep && !s->recs[drop].present)
        free(s->recs[drop++].id);
    memmove(s->recs, s->recs + drop, (s->n - drop) * sizeof *s->recs);
    s->n -= drop;
}

/* ----------------------------------------------------------- reading -- */

/* One "rec" line's fields after the word. @return 0 or -1. */
static int parse_rec(struct rp_push_state *s, char *line)
{
    char id[RP_PUSH_ID_MAX + 2];
    unsigned long long next, parts, rej, sent, rejected, missing, seen, last, since;
    int used = 0;
    if (sscanf(line, "%129s %llu %llu %llu %llu %llu %llu %llu %llu %llu%n", id, &next,
               &parts, &rej, &sent, &rejected, &missing, &seen, &last, &since,
               &used) != 10 || line[used] ||
        !rp_push_id_ok(id) || next > UINT32_MAX || parts > UINT32_MAX || rej > 1 ||
        rp_push_state_rec(s, id, 0))
        return -1;
    struct rp_push_rec *r = rp_push_state_rec(s, id, 1);
    r->next = (uint32_t)next;
    r->parts = (uint32_t)parts;
    r->part_rejected = (int)rej;
    r->sent = sent, r->rejected = rejected, r->missing = missing, r->seen = seen;
    r->last_start = last;
    r->since = since;
    return 0;
}

/* Parse the file's text (NUL-terminated). @return 0, or the 1-based number of
 * the first line that does not parse. */
static size_t parse(struct rp_push_state *s, char *text)
{
    size_t lineno = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (lineno == 1) {
            if (strcmp(line, STATE_MAGIC))
                return 1;
        } else if (!strncmp(line, "target ", 7)) {
            free(s->target);
            s->target = rp_xstrdup(line + 7);
        } else if (!strncmp(line, "plan ", 5)) {
            free(s->plan);
            s->plan = rp_xstrdup(line + 5);
        } else if (strncmp(line, "rec ", 4) || parse_rec(s, line + 4) < 0) {
            return lineno;
        }
    }
    return lineno == 0 ? 1 : 0;
}

/* Read the state file if it exists. @return 0 or -1. */
static int load(struct rp_push_state *s, char *err, size_t errlen)
{
    char why[512];
    int fd = rp_trust_openat(s->dfd, s->name, geteuid(), STATE_MAX_BYTES, why, sizeof why);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0)
        return rp_fail(err, errlen, "state file %s %s", s->shown, why);
    char *text = rp_xmalloc(STATE_MAX_BYTES + 1);
    size_t got = 0;
    ssize_t k = 0;
    while (got < STATE_MAX_BYTES && (k = read(fd, text + got, STATE_MAX_BYTES - got)) > 0)
        got += (size_t)k;
    int rerr = k < 0 ? errno : 0;
    close(fd);
    text[got] = '\0';
    size_t bad = rerr ? 0 : memchr(text, '\0', got) ? 1 : parse(s, text);
    free(text);
    if (rerr)
        return rp_fail(err, errlen, "state file %s: %s", s->shown, strerror(rerr));
    if (bad)
        return rp_fail(err, errlen, "state file %s: line %zu is not what ringprof push "
                       "writes; remove the file to send every chunk in the directory "
                       "again", s->shown, bad);
    return 0;
}

/* Remove temporaries a killed push left (we hold the lock: none is live). */
static void remove_temporaries(struct rp_push_state *s)
{
    int fd = dup(s->dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s.tmp.", s->name);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            unlinkat(s->dfd, e->d_name, 0);
    closedir(d);
}

/* Open the directory of `path` once and check it; s->name is the base name. */
static int open_dir(struct rp_push_state *s, const char *path, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!*base || strlen(base) + 32 > sizeof s->name || !strcmp(base, ".") ||
        !strcmp(base, ".."))
        return rp_fail(err, errlen, "state file %s: not a file name", path);
    snprintf(s->name, sizeof s->name, "%s", base);
    s->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dfd < 0)
        return rp_fail(err, errlen, "state file %s: directory %s: %s", path, dir,
                       strerror(errno));
    struct stat st;
    if (fstat(s->dfd, &st) != 0)
        return rp_fail(err, errlen, "state file %s: %s", path, strerror(errno));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return rp_fail(err, errlen, "state file %s: its directory %s may be written by "
                       "%s (mode %04o), who could then choose what push skips; give "
                       "--state FILE in a directory of yours", path, dir,
                       st.st_mode & S_IWOTH ? "every user" : "its group",
                       (unsigned)(st.st_mode & 07777));
    return 0;
}

/* Take "<name>.lock" with flock. @return 0 or -1. */
static int take_lock(struct rp_push_state *s, char *err, size_t errlen)
{
    char lock[300];
    snprintf(lock, sizeof lock, "%s.lock", s->name);
    s->lockfd = openat(s->dfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (s->lockfd < 0)
        return rp_fail(err, errlen, "state file %s: its lock %s: %s", s->shown, lock,
                       strerror(errno));
    if (fstat(s->lockfd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (st.st_uid != geteuid() && st.st_uid != 0))
        return rp_fail(err, errlen, "state file %s: its lock %s is not a file of ours",
                       s->shown, lock);
    if (flock(s->lockfd, LOCK_EX | LOCK_NB) != 0)
        return rp_fail(err, errlen, errno == EWOULDBLOCK
                       ? "state file %s is in use by another ringprof push; give each "
                         "push its own --state"
                       : "state file %s: cannot lock it", s->shown);
    return 0;
}

int rp_push_state_open(struct rp_push_state *s, const char *path, char *err,
                       size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->dfd = s->lockfd = -1;
    if (!path)
        return 0;
    snprintf(s->shown, sizeof s->shown, "%s", path);
    if (open_dir(s, path, err, errlen) < 0 || take_lock(s, err, errlen) < 0)
        return -1;
    remove_temporaries(s);
    return load(s, err, errlen);
}

/* ----------------------------------------------------------- writing -- */

static void put_text(FILE *f, const struct rp_push_state *s)
{
    fprintf(f, "%s\n", STATE_MAGIC);
    if (s->target)
        fprintf(f, "target %s\n", s->target);
    if (s->plan)
        fprintf(f, "plan %s\n", s->plan);
    for (size_t i = 0; i < s->n; i++) {
        const struct rp_push_rec *r = &s->recs[i];
        fprintf(f, "rec %s %" PRIu32 " %" PRIu32 " %d %" PRIu64 " %" PRIu64 " %" PRIu64
                " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", r->id, r->next, r->parts,
                r->part_rejected, r->sent, r->rejected, r->missing, r->seen, r->last_start,
                r->since);
    }
}

/* Write all of buf to fd. @return 0 or -1 (errno). */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t k = write(fd, buf, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        buf += k;
        len -= (size_t)k;
    }
    return 0;
}

int rp_push_state_save(struct rp_push_state *s, char *err, size_t errlen)
{
    if (s->dfd < 0)
        return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
    put_text(mem, s);
    fclose(mem);
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint64_t)getpid() ^ ((uint64_t)(uintptr_t)text << 16);
    char tmp[320];
    snprintf(tmp, sizeof tmp, "%s.tmp.%016" PRIx64, s->name, rnd);
    int fd = openat(s->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
    int rc = fd < 0 || write_all(fd, text, len) < 0 || fsync(fd) < 0 ? -1 : 0;
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = -1, e = errno;
    if (rc == 0 && renameat(s->dfd, tmp, s->dfd, s->name) != 0)
        rc = -1, e = errno;
    free(text);
    if (rc != 0) {
        if (fd >= 0)
            unlinkat(s->dfd, tmp, 0);
        return rp_fail(err, errlen, "state file %s: cannot write it: %s", s->shown,
                       strerror(e));
    }
    fsync(s->dfd);   /* the rename itself: without it a crash could bring back the old one */
    return 0;
}

void rp_push_state_close(struct rp_push_state *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->recs[i].id);
    free(s->recs);
    free(s->target);
    free(s->plan);
    if (s->lockfd >= 0)
        close(s->lockfd);
    if (s->dfd >= 0)
        close(s->dfd);
    memset(s, 0, sizeof *s);
    s->dfd = s->lockfd = -1;
}
