/*
 * recorder/recording.c — a recording directory: chunk names, rotation, retention,
 * atomic finish and recovery of orphans (contract: ringprof/recording.h).
 *
 * A recording owns at most one open chunk writer, created lazily by
 * rp_recording_writer and closed by a rotation. The chunk is written under
 * "<name>.rpc.part" and renamed to "<name>.rpc" once rp_chunk_close has written its
 * last segment and fsynced it, so a finished name never refers to a file that is
 * still growing. The directory is not fsynced after the rename: if a crash loses the
 * rename, the file is a ".part" again and the next recovery pass renames it.
 *
 * Liveness. While a chunk is open the recording holds a flock on it through a second
 * descriptor. The lock dies with the process however it dies, and it means the same
 * thing in every pid namespace, so it is the first test of whether a ".part" is an
 * orphan: a locked file is never touched. An unlocked one is an orphan if the pid in
 * its name is dead (kill(pid, 0) fails with ESRCH) or is our own pid (a previous
 * incarnation: a JVM that is pid 1 in its container gets the same pid after every
 * restart, and would otherwise never recover its kill -9 leftovers). A process-wide
 * mutex spans "create the file, take its lock" so that another recording of this
 * process cannot see our fresh ".part" unlocked.
 *
 * The directory is held by descriptor from open to close (ringprof/trust.h): it
 * is walked and checked once, component by component, and every later file
 * operation (create, lock, rename, listing, the header check of an orphan,
 * unlink) is an *at() call on that descriptor with O_NOFOLLOW, so no symlink made
 * or changed later can send one of them elsewhere. Only when the directory is
 * removed (no link left, or a create that finds it gone) is its path walked
 * again, the same way, and the new directory held instead.
 *
 * Retention lists the directory afresh each time (no state kept between passes, so
 * other processes' files and an operator's deletions are simply seen), considers only
 * regular files of our uid whose names parse as chunk names, sorts them by (start time, pid,
 * seq) parsed from the name, and deletes from the oldest. Foreign files,
 * subdirectories and symlinks are never counted, followed or deleted.
 */
#include "ringprof/clock.h"
#include "ringprof/recording.h"
#include "ringprof/trust.h"
#include "varint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

/* A chunk's basename with its ".rpc.part" suffix: 16 characters of time, a pid of
 * at most 19 digits, a seq of at most 10, two dashes and 9 of suffix: 56. */
#define NAME_CAP 64

/* Metadata the recording adds to each chunk: pid, host, seq, id, wall, mono. */
#define OWN_META 6

struct rp_recording {
    char *dir;                       /* as given until open; then the resolved path
                                        of the directory in use, for messages      */
    int dfd;                         /* the directory in use, held (trust.h), or -1 */
    struct rp_recording_limits lim;
    struct rp_kv *meta;              /* the caller's entries (copied), then ours     */
    size_t nmeta;                    /* the caller's entries kept                    */
    char num[3][24];                 /* text of our numeric entries                  */
    int host_given;
    char host[256];
    char pid_s[24];
    char id[112];                    /* RP_META_RECORDING                            */
    long pid;
    uint32_t next_seq;
    uint64_t generation;
    struct rp_chunk_writer *w;       /* the open chunk, or NULL                      */
    int lock_fd;                     /* holds the flock on w's file, or -1            */
    char part[PATH_MAX];             /* w's path, for messages and status            */
    char part_name[NAME_CAP];        /* w's name in dfd                              */
    int in_subdir;                   /* dir= was sticky and open to all: rec->dir is
                                        its private subdirectory                   */
    char dir_error[2 * PATH_MAX + 96]; /* why the removed directory could not be
                                        made again, or ""                          */
    char last_finished[NAME_CAP];    /* newest chunk this recording finished         */
    struct rp_recording_stats st;    /* closed chunks only; stats() adds the open one */
    /* Counters a closed chunk could not write (its disk was full): they go into
     * the next chunk, so a loss is never dropped with the chunk that saw it. The
     * last slot is kept for lost.carried (see carry_add). */
    struct { char name[64]; uint64_t value; } carry[32];
    unsigned ncarry;
};

/* A chunk file found by a directory scan. */
struct chunk_ent {
    uint64_t wall_s;
    long pid;
    uint32_t seq;
    int part;                        /* a ".part" still (not an orphan)               */
    uint64_t size;
    char name[NAME_CAP];
};

struct chunk_list {
    struct chunk_ent *v;
    size_t n, cap;
};

static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------- names -- */

int rp_recording_chunk_name(char *buf, size_t cap, long pid, uint64_t wall_ns,
                            uint32_t seq)
{
    time_t t = (time_t)(wall_ns / NS_PER_S);
    struct tm tm;

    if (pid < 1 || !gmtime_r(&t, &tm))   /* (uint64 ns end in 2554: 4-digit years) */
        return -1;
    int n = snprintf(buf, cap, "%04d%02d%02dT%02d%02d%02dZ-%ld-%06" PRIu32,
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, pid, seq);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Read `width` digits at *p (or, with width 0, 1 to 19 of them) and advance. */
static int read_digits(const char **p, int width, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int n = 0;

    while (s[n] >= '0' && s[n] <= '9' && n < (width ? width : 19))
        v = v * 10 + (uint64_t)(s[n++] - '0');
    if (n == 0 || (width && n != width))
        return -1;
    *p = s + n;
    *out = v;
    return 0;
}

static int expect(const char **p, char c)
{
    return **p == c ? (++*p, 0) : -1;
}

/* Parse "YYYYmmddTHHMMSSZ" at *p into seconds since the epoch (not yet checked for
 * range: the caller rebuilds the name and compares). */
static int read_stamp(const char **p, uint64_t *wall_s)
{
    uint64_t ymd, hms;
    struct tm tm = {0};

    if (read_digits(p, 8, &ymd) || expect(p, 'T') || read_digits(p, 6, &hms) ||
        expect(p, 'Z'))
        return -1;
    tm.tm_year = (int)(ymd / 10000) - 1900;
    tm.tm_mon = (int)(ymd / 100 % 100) - 1;
    tm.tm_mday = (int)(ymd % 100);
    tm.tm_hour = (int)(hms / 10000);
    tm.tm_min = (int)(hms / 100 % 100);
    tm.tm_sec = (int)(hms % 100);
    time_t t = timegm(&tm);
    if (t < 0)
        return -1;
    *wall_s = (uint64_t)t;
    return 0;
}

/* Only canonical names are accepted: the fields are parsed, the name is rebuilt
 * from them and must match byte for byte. That rejects leading zeros in the pid, a
 * short seq, "20261131" (timegm would quietly make it December 1st) and the like. */
int rp_recording_parse_name(const char *name, long *pid, uint64_t *wall_s,
                            uint32_t *seq, int *is_part)
{
    const char *p = name;
    uint64_t t, v_pid, v_seq;
    char canon[NAME_CAP];

    if (read_stamp(&p, &t) || expect(&p, '-') || read_digits(&p, 0, &v_pid) ||
        expect(&p, '-') || read_digits(&p, 0, &v_seq))
        return -1;
    if (v_pid > LONG_MAX || v_seq > UINT32_MAX || t > UINT64_MAX / NS_PER_S)
        return -1;
    int part = strcmp(p, RP_CHUNK_SUFFIX RP_CHUNK_PART_SUFFIX) == 0;
    if (!part && strcmp(p, RP_CHUNK_SUFFIX) != 0)
        return -1;
    if (rp_recording_chunk_name(canon, sizeof canon, (long)v_pid, t * NS_PER_S,
                                (uint32_t)v_seq) != 0 ||
        strlen(canon) != (size_t)(p - name) || memcmp(canon, name, (size_t)(p - name)))
        return -1;
    *pid = (long)v_pid;
    *wall_s = t;
    *seq = (uint32_t)v_seq;
    *is_part = part;
    return 0;
}

/* --------------------------------------------------------------- directory -- */

static void set_err(char *err, size_t errlen, const char *what, const char *dir, int e)
{
    if (err && errlen)
        snprintf(err, errlen, "%s recording directory %s: %s", what, dir, strerror(e));
    errno = e;
}

/* The message for a directory the walk refused (why names the component) or
 * could not make or open. */
static void dir_err(char *err, size_t errlen, const char *dir, const char *why, int e)
{
    uid_t me = geteuid();
    if (err && errlen && e == EPERM)
        snprintf(err, errlen, "refusing recording directory %s: %s; another user could "
                 "replace or delete the files in it (use a directory that only %s%s can "
                 "write)", dir, why, me ? "this uid and " : "", "root");
    else if (err && errlen)
        snprintf(err, errlen, "cannot use recording directory %s: %s: %s", dir, why,
                 strerror(e));
    errno = e;
}

/* Walk `dir` as given, creating what is missing (mode 0700: the chunks say what
 * the application runs), and hold it if only we (or root) can change it or
 * anything on the way to it (ringprof/trust.h). A sticky directory that others
 * may write (dir=/tmp) is replaced by our private subdirectory in it. Another
 * user who could change the directory or a symlink on the way could replace the
 * control socket in it, plant chunk-named files for retention to count, or point
 * our creates, renames and unlinks into a directory of their choice. rec->dir
 * becomes the resolved path. */
static int prepare_dir(struct rp_recording *rec, char *err, size_t errlen)
{
    char real[PATH_MAX], why[2 * PATH_MAX];
    struct stat sb;
    uid_t me = geteuid();

    int fd = rp_trust_dir_open(rec->dir, me, RP_TRUST_CREATE | RP_TRUST_SHARED, 0700,
                               real, why, sizeof why);
    if (fd < 0)
        return dir_err(err, errlen, rec->dir, why, errno), -1;
    if (fstat(fd, &sb) == 0 && (sb.st_mode & (S_IWGRP | S_IWOTH))) {
        close(fd);
        size_t n = strlen(real);
        if (snprintf(real + n, sizeof real - n, "%s" RP_PRIVATE_SUBDIR_FMT,
                     n > 1 ? "/" : "", (unsigned)me) >= (int)(sizeof real - n))
            return set_err(err, errlen, "cannot use", rec->dir, ENAMETOOLONG), -1;
        char sub[PATH_MAX];
        memcpy(sub, real, strlen(real) + 1);
        fd = rp_trust_dir_open(sub, me, RP_TRUST_CREATE, 0700, real, why, sizeof why);
        if (fd < 0 && errno == EPERM) {
            if (err && errlen)
                snprintf(err, errlen, "refusing recording directory %s: it may be written "
                         "by every user, and its private subdirectory %s", rec->dir, why);
            return errno = EPERM, -1;
        }
        if (fd < 0)
            return dir_err(err, errlen, sub, why, errno), -1;
        rec->in_subdir = 1;
    }
    rec->dfd = fd;
    if (strlen(real) + NAME_CAP + 2 > PATH_MAX)
        return set_err(err, errlen, "cannot use", real, ENAMETOOLONG), -1;
    char *dir = strdup(real);
    if (!dir)
        return set_err(err, errlen, "cannot open", rec->dir, ENOMEM), -1;
    free(rec->dir);
    rec->dir = dir;
    if (faccessat(fd, ".", R_OK | W_OK | X_OK, AT_EACCESS) != 0)
        return set_err(err, errlen, "cannot write to", dir, errno), -1;
    return 0;
}

/* Has the directory we hold been removed (its last link is gone)? */
static int dir_gone(const struct rp_recording *rec)
{
    struct stat sb;
    return fstat(rec->dfd, &sb) == 0 && sb.st_nlink == 0;
}

/* Make the directory again after someone removed it, by the same walk as at open,
 * and hold the new one. It must be where it was: if the walk now leads elsewhere
 * (a symlink on the way was made or changed since), it is not ours to use, and
 * rec->dir would name the wrong place. @return 0, or -1 with errno (EPERM: not
 * trusted, or elsewhere). */
static int remake_dir(struct rp_recording *rec)
{
    char real[PATH_MAX], why[2 * PATH_MAX];
    int fd = rp_trust_dir_open(rec->dir, geteuid(), RP_TRUST_CREATE, 0700, real, why,
                               sizeof why);
    int e = errno;
    if (fd < 0) {
        if (e == EPERM)
            snprintf(rec->dir_error, sizeof rec->dir_error, "it was removed, and making "
                     "it again was refused: %s", why);
        else
            snprintf(rec->dir_error, sizeof rec->dir_error, "it was removed, and it "
                     "cannot be made again: %s: %s", why, strerror(e));
        return errno = e, -1;
    }
    if (strcmp(real, rec->dir) != 0) {
        close(fd);
        snprintf(rec->dir_error, sizeof rec->dir_error, "it was removed, and its path "
                 "now leads to %s: not using it", real);
        return errno = EPERM, -1;
    }
    close(rec->dfd);
    rec->dfd = fd;
    return 0;
}

static int list_add(struct chunk_list *l, const struct chunk_ent *e)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct chunk_ent *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *e;
    return 0;
}

/* Is the writer of this ".part" gone? If so, rename it to its finished name (still
 * holding the lock, so a writer cannot take it in between). @return 1 if renamed.
 * A rename that fails (but for ENOENT: another process recovered it first) is
 * reported in last_errno; the file stays readable, and the next pass retries. */
static int recover_part(struct rp_recording *rec, int dfd, const char *name, long pid)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    int orphan = 0;

    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        orphan = pid == (long)getpid();
    else if (fd >= 0 && errno == EWOULDBLOCK) {
        close(fd);
        return 0;   /* a live writer holds it, in whatever pid namespace */
    }
    /* Unlocked, or locks do not work here: fall back to the pid. EPERM means the
     * process exists under another uid, so only ESRCH counts as dead. */
    if (!orphan && pid != (long)getpid() && pid <= INT_MAX)
        orphan = kill((pid_t)pid, 0) != 0 && errno == ESRCH;

    char done[NAME_CAP];
    size_t len = strlen(name) - strlen(RP_CHUNK_PART_SUFFIX);
    memcpy(done, name, len);
    done[len] = '\0';
    int renamed = orphan && renameat(dfd, name, dfd, done) == 0;
    if (orphan && !renamed && errno != ENOENT)
        rec->st.last_errno = errno;
    if (fd >= 0)
        close(fd);
    return renamed;
}

/* Note one directory entry if it is a chunk: a regular file (not a symlink, not a
 * directory) with a chunk name, owned by our uid. Everything else is left alone:
 * a file someone else wrote is never counted, recovered or deleted, whatever its
 * name (a sparse "chunk" of theirs would otherwise push ours out by size). */
static int scan_entry(int dfd, const char *name, struct chunk_list *l)
{
    struct chunk_ent e = {0};
    struct stat sb;

    if (strlen(name) >= NAME_CAP ||
        rp_recording_parse_name(name, &e.pid, &e.wall_s, &e.seq, &e.part) != 0)
        return 0;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
        sb.st_uid != geteuid())
        return 0;
    strcpy(e.name, name);
    e.size = (uint64_t)sb.st_size;
    return list_add(l, &e);
}

/* Does `name` certainly hold no file header, and so no samples? Only what the
 * bytes show counts: the file is shorter than the fixed header part (empty
 * included: the header was never written, or only its start), or it starts with
 * our magic and major and is shorter than its own header length field says (the
 * header's one write was cut short; segments can only follow a whole header).
 * @return 0 for anything else: a header of another major (a newer ringprof's
 * orphan in a shared directory), a damaged header or checksum, foreign bytes, or a
 * file that cannot be opened or read now. Such a file is kept: it may hold
 * samples, and the reader reports what is wrong with it. */
static int header_missing(int dfd, const char *name)
{
    uint8_t fixed[RP_FILE_HEADER_FIXED];
    struct stat sb;
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0;
    int missing = 0;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        if (sb.st_size < (off_t)sizeof fixed)
            missing = 1;
        else if (pread(fd, fixed, sizeof fixed, 0) == (ssize_t)sizeof fixed &&
                 memcmp(fixed, RP_FILE_MAGIC, RP_FILE_MAGIC_LEN) == 0 &&
                 rp_get_le16(fixed + 8) == RP_FORMAT_MAJOR &&
                 rp_get_le32(fixed + 12) <= RP_FILE_HEADER_MAX &&
                 (uint64_t)sb.st_size < rp_get_le32(fixed + 12))
            missing = 1;
    }
    close(fd);
    return missing;
}

/* A writer killed between creating its file and writing the header leaves a file
 * with no header: it holds no samples, and as a finished chunk it would be
 * unreadable. @return 1 if `name` (just recovered) is such a file and was removed.
 * Deletion needs positive evidence (header_missing); whatever else is wrong with a
 * recovered file is the reader's to report. */
static int discard_headless(int dfd, const char *name)
{
    return header_missing(dfd, name) && unlinkat(dfd, name, 0) == 0;
}

/* Recover the orphans among the listed ".part" files, after the listing is complete
 * (a file renamed during readdir may or may not be returned again). */
static void recover_parts(struct rp_recording *rec, int dfd, struct chunk_list *l)
{
    const char *mine = rec->w ? rec->part_name : "";

    for (size_t i = 0; i < l->n; i++) {
        struct chunk_ent *e = &l->v[i];
        if (!e->part || strcmp(e->name, mine) == 0 || !recover_part(rec, dfd, e->name, e->pid))
            continue;
        e->name[strlen(e->name) - strlen(RP_CHUNK_PART_SUFFIX)] = '\0';
        e->part = 0;
        if (discard_headless(dfd, e->name)) {
            e->part = 1;   /* gone: retention skips it, as it skips .part files */
            e->size = 0;
            rec->st.chunks_discarded++;
        } else {
            rec->st.chunks_recovered++;
        }
    }
}

/* List the directory's chunks, finished ones and recovered orphans with part == 0.
 * Holds create_mu throughout: see the file comment. */
static int list_chunks(struct rp_recording *rec, DIR *d, struct chunk_list *l)
{
    struct dirent *de;
    int rc = 0;

    pthread_mutex_lock(&create_mu);
    for (errno = 0; (de = readdir(d)) != NULL; errno = 0)
        if ((rc = scan_entry(dirfd(d), de->d_name, l)) != 0)
            break;
    if (rc == 0 && errno != 0)
        rc = -1;
    int e = errno;
    if (rc == 0)
        recover_parts(rec, dirfd(d), l);
    pthread_mutex_unlock(&create_mu);
    return rc ? (errno = e, -1) : 0;
}

/* Oldest first: start time, then pid, then seq. strcmp on the names would be wrong
 * once a seq outgrows its six digits, and says nothing useful about pids. */
static int chunk_cmp(const void *a, const void *b)
{
    const struct chunk_ent *x = a, *y = b;

    if (x->wall_s != y->wall_s)
        return x->wall_s < y->wall_s ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int too_old(const struct rp_recording *rec, const struct chunk_ent *e,
                   uint64_t now)
{
    uint64_t max = rec->lim.max_age_ns;
    return max && now > max && e->wall_s < (now - max) / NS_PER_S;
}

/* Delete from the oldest while over max_size or older than max_age. The chunk this
 * recording finished last is spared, so the path rotate returned stays valid until
 * the next rotation even when one chunk alone exceeds max_size. */
static int apply_retention(struct rp_recording *rec, int dfd, struct chunk_list *l)
{
    uint64_t total = 0, now = rp_clock_ns(CLOCK_REALTIME);
    int deleted = 0;

    for (size_t i = 0; i < l->n; i++)
        total += l->v[i].part ? 0 : l->v[i].size;
    for (size_t i = 0; i < l->n; i++) {
        const struct chunk_ent *e = &l->v[i];
        int big = rec->lim.max_size && total > rec->lim.max_size;
        if (e->part || (!big && !too_old(rec, e, now)) ||
            strcmp(e->name, rec->last_finished) == 0)
            continue;
        if (unlinkat(dfd, e->name, 0) == 0) {
            deleted++;
            rec->st.chunks_deleted++;
            rec->st.bytes_deleted += e->size;
        } else if (errno != ENOENT) {   /* ENOENT: another process deleted it */
            rec->st.last_errno = errno;
            continue;
        }
        total -= e->size;
    }
    rec->st.dir_bytes = total;
    return deleted;
}

int rp_recording_enforce(struct rp_recording *rec)
{
    struct chunk_list l = {0};
    /* A descriptor of its own (its own offset) on the directory we hold. */
    int lfd = openat(rec->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    int deleted = -1;

    if (!d) {
        rec->st.last_errno = errno;
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    if (list_chunks(rec, d, &l) == 0) {
        if (l.n)   /* qsort's array may not be NULL, even when empty */
            qsort(l.v, l.n, sizeof *l.v, chunk_cmp);
        deleted = apply_retention(rec, dirfd(d), &l);
    } else {
        rec->st.last_errno = errno;
    }
    free(l.v);
    closedir(d);
    return deleted;
}

/* ------------------------------------------------------------------ chunks -- */

/* The header metadata of chunk `seq`, started at `wall`/`mono`: the caller's
 * entries, then ours, written after them into the same array (sized at open).
 * @return the number of entries. */
static size_t chunk_meta(struct rp_recording *rec, uint32_t seq, uint64_t wall,
                         uint64_t mono)
{
    struct rp_kv *out = rec->meta;
    size_t n = rec->nmeta;

    snprintf(rec->num[0], sizeof rec->num[0], "%" PRIu32, seq);
    snprintf(rec->num[1], sizeof rec->num[1], "%" PRIu64, wall);
    snprintf(rec->num[2], sizeof rec->num[2], "%" PRIu64, mono);
    out[n++] = (struct rp_kv){ RP_META_PID, rec->pid_s };
    if (!rec->host_given)
        out[n++] = (struct rp_kv){ RP_META_HOST, rec->host };
    out[n++] = (struct rp_kv){ RP_META_CHUNK_SEQ, rec->num[0] };
    out[n++] = (struct rp_kv){ RP_META_RECORDING, rec->id };
    out[n++] = (struct rp_kv){ RP_META_START_WALL, rec->num[1] };
    out[n++] = (struct rp_kv){ RP_META_START_MONO, rec->num[2] };
    return n;
}

/* One attempt at creating chunk next_seq. The clocks are read here and passed to
 * the writer, so the name, start.wall_ns and start.mono_ns agree exactly. */
static int try_open_chunk(struct rp_recording *rec)
{
    uint64_t wall = rp_clock_ns(CLOCK_REALTIME), mono = rp_clock_ns(CLOCK_MONOTONIC);
    char name[NAME_CAP];

    if (rp_recording_chunk_name(name, sizeof name, rec->pid, wall, rec->next_seq) != 0)
        return errno = ERANGE, -1;
    int nl = snprintf(rec->part_name, sizeof rec->part_name, "%s%s%s", name,
                      RP_CHUNK_SUFFIX, RP_CHUNK_PART_SUFFIX);
    int len = snprintf(rec->part, sizeof rec->part, "%s/%s", rec->dir, rec->part_name);
    if (nl < 0 || (size_t)nl >= sizeof rec->part_name || len < 0 ||
        (size_t)len >= sizeof rec->part)
        return errno = ENAMETOOLONG, -1;
    size_t n = chunk_meta(rec, rec->next_seq, wall, mono);

    pthread_mutex_lock(&create_mu);
    rec->w = rp_chunk_writer_openat(rec->dfd, rec->part_name, rec->part, rec->meta, n,
                                    NULL, 0);
    int e = errno;
    if (rec->w) {   /* (a writer that fails after creating its file removes it) */
        rec->lock_fd = openat(rec->dfd, rec->part_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (rec->lock_fd >= 0)
            flock(rec->lock_fd, LOCK_EX | LOCK_NB);   /* failing: the pid rule */
    }
    pthread_mutex_unlock(&create_mu);
    return rec->w ? 0 : (errno = e, -1);
}

/* Keep a counter the closing chunk could not write. The table is bounded: when
 * only its last slot is free, a lost.* counter with no slot of its own is added to
 * lost.carried in that slot (the loss stays a loss, under a general name), and
 * any other counter (a diagnostic such as walk.* or *.no_memory) is dropped rather
 * than counted as a loss it is not. */
static void carry_add(void *arg, const char *name, uint64_t value)
{
    static const char carried[] = RP_COUNTER_LOST_PREFIX "carried";
    struct rp_recording *rec = arg;
    const unsigned cap = sizeof rec->carry / sizeof rec->carry[0];
    int loss = !strncmp(name, RP_COUNTER_LOST_PREFIX, strlen(RP_COUNTER_LOST_PREFIX));

    for (;;) {
        unsigned i = 0;
        while (i < rec->ncarry && strcmp(rec->carry[i].name, name) != 0)
            i++;
        if (i < rec->ncarry || rec->ncarry < cap - 1 ||
            (rec->ncarry < cap && !strcmp(name, carried))) {
            if (i == rec->ncarry) {
                snprintf(rec->carry[i].name, sizeof rec->carry[i].name, "%s", name);
                rec->carry[i].value = 0;
                rec->ncarry++;
            }
            rec->carry[i].value += value;
            return;
        }
        if (!loss || !strcmp(name, carried))
            return;     /* a diagnostic counter with no room (see above) */
        name = carried;
    }
}

/* A new chunk starts with what the last one could not write. A counter the new
 * chunk cannot take (no memory for its name) stays carried, and is tried again at
 * every flush and before the chunk closes (rp_recording_flush, finish_chunk). */
static void carry_into(struct rp_recording *rec)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < rec->ncarry; i++)
        if (rp_chunk_counter(rec->w, rec->carry[i].name, rec->carry[i].value) != 0)
            rec->carry[kept++] = rec->carry[i];
    rec->ncarry = kept;
}

/* Create the next chunk. A taken name (a previous process with our pid started in
 * the same second, or a twin in another pid namespace) skips to the next seq; a
 * vanished directory (removed: no link left, or a create that finds it gone) is
 * made again once, through the trusted walk. */
static int open_chunk(struct rp_recording *rec)
{
    int remade = 0;
    if (dir_gone(rec)) {
        if (remake_dir(rec) != 0)
            return -1;
        remade = 1;
    }
    for (int attempt = 0; attempt < 16; attempt++) {
        if (try_open_chunk(rec) == 0) {
            carry_into(rec);
            rec->next_seq++;
            rec->generation++;
            rec->st.chunks_opened++;
            return 0;
        }
        if (errno == EEXIST && rec->next_seq < UINT32_MAX)
            rec->next_seq++;
        else if (errno != ENOENT || remade++ || remake_dir(rec) != 0)
            return -1;
    }
    return -1;
}

struct rp_chunk_writer *rp_recording_writer(struct rp_recording *rec)
{
    if (!rec->w)
        rec->dir_error[0] = '\0';
    if (!rec->w && open_chunk(rec) != 0) {
        rec->st.chunks_failed++;
        rec->st.last_errno = errno;
    }
    return rec->w;
}

uint64_t rp_recording_generation(const struct rp_recording *rec)
{
    return rec->generation;
}

/* Copy `s` into path (if any); ERANGE if it does not fit (a cut path is worse than
 * none). */
static int give_path(char *path, size_t pathlen, const char *s)
{
    if (!path || !pathlen)
        return 0;
    if (strlen(s) >= pathlen) {
        path[0] = '\0';
        return errno = ERANGE, -1;
    }
    strcpy(path, s);
    return 0;
}

/* Close the open chunk and rename it. It is renamed even if its last write
 * failed: its good segments are readable, and no writer will touch it again. */
static int finish_chunk(struct rp_recording *rec, char *path, size_t pathlen)
{
    struct rp_chunk_writer_stats ws;
    char done[NAME_CAP];
    struct stat sb;

    if (rec->ncarry)
        carry_into(rec);   /* the last chance in this chunk; else carried again */
    rp_chunk_writer_stats(rec->w, &ws);
    struct rp_chunk_writer_stats fin;
    int rc = rp_chunk_close_stats(rec->w, carry_add, rec, &fin);
    int e = errno;
    rec->w = NULL;
    rec->st.segments_failed += ws.segments_failed + (rc != 0);
    rec->st.samples_failed += fin.samples_failed;
    size_t len = strlen(rec->part_name) - strlen(RP_CHUNK_PART_SUFFIX);
    memcpy(done, rec->part_name, len);
    done[len] = '\0';
    if (renameat(rec->dfd, rec->part_name, rec->dfd, done) != 0) {
        rc = -1;
        e = errno;
        rec->st.bytes_written += ws.bytes_written;
    } else {
        rec->st.chunks_finished++;
        rec->st.bytes_written += fstatat(rec->dfd, done, &sb, AT_SYMLINK_NOFOLLOW) == 0
                                 ? (uint64_t)sb.st_size : ws.bytes_written;
        snprintf(rec->last_finished, sizeof rec->last_finished, "%s", done);
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", rec->dir, done);   /* fits: see open */
        if (give_path(path, pathlen, full) != 0)
            rc = -1, e = ERANGE;
    }
    if (rec->lock_fd >= 0)
        close(rec->lock_fd);   /* after the rename: see recover_part */
    rec->lock_fd = -1;
    if (rc != 0)
        rec->st.last_errno = e;
    return rc ? (errno = e, -1) : 0;
}

int rp_recording_rotate(struct rp_recording *rec, char *path, size_t pathlen)
{
    if (path && pathlen)
        path[0] = '\0';
    if (!rec->w)
        return 0;
    int rc = finish_chunk(rec, path, pathlen);
    int e = errno;
    rp_recording_enforce(rec);   /* its failure is in last_errno; the chunk is done */
    errno = e;
    return rc;
}

static int chunk_due(const struct rp_recording *rec)
{
    struct rp_chunk_writer_stats ws;
    uint64_t dur = rec->lim.chunk_duration_ns;

    rp_chunk_writer_stats(rec->w, &ws);
    if (rec->lim.chunk_size && ws.bytes_written >= rec->lim.chunk_size)
        return 1;
    return dur && rp_clock_ns(CLOCK_MONOTONIC) - rp_chunk_writer_start_mono(rec->w) >= dur;
}

int rp_recording_flush(struct rp_recording *rec, int *rotated)
{
    if (rotated)
        *rotated = 0;
    if (!rec->w)
        return 0;
    if (rec->ncarry)
        carry_into(rec);   /* a counter the chunk could not take when it opened */
    int rc = rp_chunk_flush(rec->w);
    if (rc != 0)
        rec->st.last_errno = errno;
    if (chunk_due(rec)) {
        if (rotated)
            *rotated = 1;   /* closed even if the rename fails: the writer is gone */
        if (rp_recording_rotate(rec, NULL, 0) != 0)
            rc = -1;
    }
    return rc;
}

/* ------------------------------------------------------------ open, close -- */

/* Keys the recording sets itself; the caller's entries with these keys are
 * dropped (RP_META_HOST is the caller's to override). */
static int own_key(const char *key)
{
    static const char *const own[] = { RP_META_PID, RP_META_CHUNK_SEQ, RP_META_RECORDING,
                                       RP_META_START_WALL, RP_META_START_MONO };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(key, own[i]) == 0)
            return 1;
    return 0;
}

static int copy_meta(struct rp_recording *rec, const struct rp_kv *meta, size_t n)
{
    rec->meta = calloc(n + OWN_META, sizeof *rec->meta);
    if (!rec->meta)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!meta[i].key || !meta[i].value)
            continue;
        if (strcmp(meta[i].key, RP_META_RECORDING) == 0 && meta[i].value[0])
            snprintf(rec->id, sizeof rec->id, "%s", meta[i].value);   /* the caller's */
        if (own_key(meta[i].key))
            continue;
        struct rp_kv *kv = &rec->meta[rec->nmeta++];
        kv->key = strdup(meta[i].key);
        kv->value = strdup(meta[i].value);
        if (!kv->key || !kv->value)
            return -1;
        rec->host_given |= strcmp(kv->key, RP_META_HOST) == 0;
    }
    return 0;
}

int rp_recording_set_meta(struct rp_recording *rec, const char *key, const char *value)
{
    if (!key || own_key(key))
        return errno = EINVAL, -1;
    size_t i = 0;
    while (i < rec->nmeta && strcmp(rec->meta[i].key, key) != 0)
        i++;
    if (!value || !value[0]) {   /* an empty value is no value */
        if (i == rec->nmeta)
            return 0;
        free((char *)rec->meta[i].key);
        free((char *)rec->meta[i].value);
        memmove(&rec->meta[i], &rec->meta[i + 1], (rec->nmeta - i - 1) * sizeof *rec->meta);
        rec->nmeta--;
        rec->host_given &= strcmp(key, RP_META_HOST) != 0;
        return 0;
    }
    char *v = strdup(value);
    if (!v)
        return -1;
    if (i < rec->nmeta) {
        free((char *)rec->meta[i].value);
        rec->meta[i].value = v;
        return 0;
    }
    /* One more of the caller's, and room after them for ours (chunk_meta). */
    struct rp_kv *m = realloc(rec->meta, (rec->nmeta + 1 + OWN_META) * sizeof *m);
    char *k = strdup(key);
    if (m)
        rec->meta = m;
    if (!m || !k) {
        free(v);
        free(k);
        return errno = ENOMEM, -1;
    }
    rec->meta[rec->nmeta++] = (struct rp_kv){k, v};
    rec->host_given |= strcmp(key, RP_META_HOST) == 0;
    return 0;
}

/* "<pid>-<start, as in chunk names>-<64 random bits>": unique without coordination,
 * and readable enough to tell recordings apart in a listing. */
static void make_id(struct rp_recording *rec)
{
    uint64_t wall = rp_clock_ns(CLOCK_REALTIME), r;
    char stamp[NAME_CAP] = "";

    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        r = wall ^ rp_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)rec->pid << 32);
        r ^= r >> 31, r *= 0x9e3779b97f4a7c15ull, r ^= r >> 29;   /* mix the bits */
    }
    if (rp_recording_chunk_name(stamp, sizeof stamp, rec->pid, wall, 0) == 0)
        *strchr(stamp, '-') = '\0';
    snprintf(rec->id, sizeof rec->id, "%ld-%s-%016" PRIx64, rec->pid, stamp, r);
}

/* The directory as given, without trailing slashes ("/" stays "/"). */
static char *copy_dir(const char *dir)
{
    size_t len = strlen(dir);

    while (len > 1 && dir[len - 1] == '/')
        len--;
    return strndup(dir, len);
}

static struct rp_recording *new_recording(const char *dir,
                                          const struct rp_recording_limits *limits,
                                          const struct rp_kv *meta, size_t n)
{
    static const struct rp_recording_limits defaults = {
        RP_DEFAULT_MAX_SIZE, RP_DEFAULT_MAX_AGE_NS, RP_DEFAULT_CHUNK_SIZE,
        RP_DEFAULT_CHUNK_DURATION_NS
    };
    struct rp_recording *rec = calloc(1, sizeof *rec);

    if (!rec)
        return NULL;
    rec->lock_fd = -1;
    rec->dfd = -1;
    rec->lim = limits ? *limits : defaults;
    rec->pid = (long)getpid();
    snprintf(rec->pid_s, sizeof rec->pid_s, "%ld", rec->pid);
    if (gethostname(rec->host, sizeof rec->host - 1) != 0)
        snprintf(rec->host, sizeof rec->host, "unknown");
    make_id(rec);
    rec->dir = copy_dir(dir);
    if (!rec->dir || copy_meta(rec, meta, n) != 0) {
        rp_recording_close(rec);
        return errno = ENOMEM, NULL;
    }
    return rec;
}

struct rp_recording *rp_recording_open(const char *dir,
                                       const struct rp_recording_limits *limits,
                                       const struct rp_kv *meta, size_t n,
                                       char *err, size_t errlen)
{
    if (!dir || !*dir || strlen(dir) + NAME_CAP + 2 > PATH_MAX)
        return set_err(err, errlen, "cannot use", dir ? dir : "(null)",
                       dir && *dir ? ENAMETOOLONG : EINVAL), NULL;
    struct rp_recording *rec = new_recording(dir, limits, meta, n);
    if (!rec)
        return set_err(err, errlen, "cannot open", dir, ENOMEM), NULL;
    if (prepare_dir(rec, err, errlen) != 0) {
        int e = errno;
        rp_recording_close(rec);
        return errno = e, NULL;
    }
    if (rp_recording_enforce(rec) < 0) {
        int e = rec->st.last_errno;
        rp_recording_close(rec);
        return set_err(err, errlen, "cannot read", dir, e), NULL;
    }
    return rec;
}

int rp_recording_close(struct rp_recording *rec)
{
    int rc = 0;

    if (!rec)
        return 0;
    if (rec->w) {
        rc = finish_chunk(rec, NULL, 0);
        rp_recording_enforce(rec);
    }
    for (size_t i = 0; i < rec->nmeta; i++) {
        free((char *)rec->meta[i].key);
        free((char *)rec->meta[i].value);
    }
    free(rec->meta);
    free(rec->dir);
    if (rec->dfd >= 0)
        close(rec->dfd);
    free(rec);
    return rc;
}

void rp_recording_stats(const struct rp_recording *rec, struct rp_recording_stats *out)
{
    *out = rec->st;
    if (rec->w) {
        struct rp_chunk_writer_stats ws;
        rp_chunk_writer_stats(rec->w, &ws);
        out->segments_failed += ws.segments_failed;
        out->samples_failed += ws.samples_failed;
        out->bytes_written += ws.bytes_written;
    }
}

const char *rp_recording_dir(const struct rp_recording *rec)
{
    return rec->dir;
}

const char *rp_recording_dir_error(const struct rp_recording *rec)
{
    return rec->dir_error[0] ? rec->dir_error : NULL;
}

int rp_recording_in_subdir(const struct rp_recording *rec)
{
    return rec->in_subdir;
}
