/*
 * tests/test_recording_faults.c — I/O errors at every phase of a chunk's life
 * (ringprof/recording.h), made deterministic.
 *
 * The program is linked with -Wl,--wrap for the calls the recorder makes on its
 * files (openat64, pwrite64, fsync, renameat, unlinkat, fdopendir, flock,
 * ftruncate64): the __wrap_ functions below forward to the real ones unless a
 * fault is armed for that call, and then fail every matching call with the
 * chosen errno until the fault is cleared. Every file operation of a recording is
 * an *at() call on the directory it holds (ringprof/recording.h); the walk that
 * opens the directory (O_PATH and O_DIRECTORY opens) is not a phase. A phase is
 * reached through the public API as the agent's flusher reaches it:
 *
 *   create     openat64(O_CREAT) of the ".part"   rp_recording_writer
 *   header     pwrite64 at offset 0               rp_recording_writer
 *   lock       flock on the new ".part"           rp_recording_writer
 *   segment    pwrite64 past the header           rp_recording_flush
 *   truncate   ftruncate64 after a failed segment rp_recording_flush (with segment)
 *   fsync      fsync at close                     rp_recording_rotate
 *   rename     renameat of our ".part" -> ".rpc"  rp_recording_rotate
 *   list       fdopendir for retention            rp_recording_enforce
 *   unlink     unlinkat by retention              rp_recording_enforce
 *   recover    renameat of an orphan ".part" (a   rp_recording_enforce
 *              name with another pid than ours)
 *   read       openat64 of a file (no O_CREAT):   rp_recording_enforce
 *              the check of a recovered orphan's
 *              header, and the lock's descriptor
 *
 * For each phase and each of ENOSPC, EIO, EACCES, EROFS, a recording writes a
 * good chunk A, then chunk B with the fault armed, then (fault cleared) chunk C,
 * and closes. Like the agent, the test counts the samples it could not hand to
 * any writer as lost.no_chunk and writes that counter into the next chunk. It
 * checks: no crash (ASan/UBSan/TSan builds run it too); the failure is reported
 * (the call's return value, errno, and last_errno in the stats) and the fault was
 * really hit; chunk C is written and closed cleanly (recovery); no ".part" is left
 * but the one a failed rename leaves, and the reader reads every file in the
 * directory without a damage report; and every sample is either read back or
 * counted in a lost.* counter: read + lost == attempted, exactly.
 */
#include "ringprof/recording.h"
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000ull

/* ----------------------------------------------------------- the seam -- */

enum op { OP_CREATE, OP_HEADER, OP_LOCK, OP_SEGMENT, OP_TRUNCATE, OP_FSYNC, OP_RENAME,
          OP_LIST, OP_UNLINK, OP_RECOVER, OP_READ, OP_COUNT,
          /* Not a phase (one_case does not run it): realloc of fewer than 4096
           * bytes fails with ENOMEM. The writer's byte buffers start at 4096, so
           * this fails only the growth of its pool arrays (strings, counters...):
           * a chunk still opens and writes, but cannot take a new name. */
          OP_ALLOC, OP_ALL };
static const char *const op_name[OP_COUNT] = {
    "create", "header", "lock", "segment", "truncate", "fsync", "rename", "list",
    "unlink", "recover", "read"};

static struct {
    int armed[OP_ALL];         /* errno to fail with, or 0                           */
    int hits[OP_ALL];          /* calls failed since armed                           */
} F;

static int fault(enum op op)
{
    if (!F.armed[op])
        return 0;
    F.hits[op]++;
    errno = F.armed[op];
    return 1;
}

int __real_openat64(int dfd, const char *path, int flags, ...);
int __real_flock(int fd, int op);
ssize_t __real_pwrite64(int fd, const void *p, size_t n, off_t off);
int __real_ftruncate64(int fd, off_t len);
int __real_fsync(int fd);
int __real_renameat(int da, const char *a, int db, const char *b);
int __real_unlinkat(int dfd, const char *name, int flags);
DIR *__real_fdopendir(int fd);
void *__real_realloc(void *p, size_t n);

int __wrap_openat64(int dfd, const char *path, int flags, ...);
int __wrap_flock(int fd, int op);
ssize_t __wrap_pwrite64(int fd, const void *p, size_t n, off_t off);
int __wrap_ftruncate64(int fd, off_t len);
int __wrap_fsync(int fd);
int __wrap_renameat(int da, const char *a, int db, const char *b);
int __wrap_unlinkat(int dfd, const char *name, int flags);
DIR *__wrap_fdopendir(int fd);
void *__wrap_realloc(void *p, size_t n);

int __wrap_openat64(int dfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
        if (fault(OP_CREATE))
            return -1;
    } else if (!(flags & (O_PATH | O_DIRECTORY)) && fault(OP_READ)) {
        return -1;
    }
    return __real_openat64(dfd, path, flags, mode);
}

int __wrap_flock(int fd, int op)
{
    return fault(OP_LOCK) ? -1 : __real_flock(fd, op);
}

ssize_t __wrap_pwrite64(int fd, const void *p, size_t n, off_t off)
{
    if (fault(off == 0 ? OP_HEADER : OP_SEGMENT))
        return -1;
    return __real_pwrite64(fd, p, n, off);
}

int __wrap_ftruncate64(int fd, off_t len)
{
    return fault(OP_TRUNCATE) ? -1 : __real_ftruncate64(fd, len);
}

int __wrap_fsync(int fd)
{
    return fault(OP_FSYNC) ? -1 : __real_fsync(fd);
}

/* Our own chunk's rename at rotation, or an orphan's (another pid's) recovery. */
int __wrap_renameat(int da, const char *a, int db, const char *b)
{
    long pid = 0;
    uint64_t wall;
    uint32_t seq;
    int part;
    rp_recording_parse_name(a, &pid, &wall, &seq, &part);
    return fault(pid == (long)getpid() ? OP_RENAME : OP_RECOVER) ? -1
           : __real_renameat(da, a, db, b);
}

int __wrap_unlinkat(int dfd, const char *name, int flags)
{
    return fault(OP_UNLINK) ? -1 : __real_unlinkat(dfd, name, flags);
}

DIR *__wrap_fdopendir(int fd)
{
    return fault(OP_LIST) ? NULL : __real_fdopendir(fd);
}

void *__wrap_realloc(void *p, size_t n)
{
    return n < 4096 && fault(OP_ALLOC) ? NULL : __real_realloc(p, n);
}

static void arm(enum op op, int err)
{
    F.armed[op] = err;
    F.hits[op] = 0;
}

static void clear(void)
{
    memset(F.armed, 0, sizeof F.armed);
}

/* ------------------------------------------------------------ helpers -- */

static char base[64];

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* Writes n samples (and what they need) with w. @return samples accepted. */
static int put(struct rp_chunk_writer *w, int n)
{
    uint32_t klass = rp_chunk_class(w, rp_chunk_cstring(w, "app.Main"));
    uint32_t m = rp_chunk_method(w, klass, rp_chunk_cstring(w, "run"),
                                 rp_chunk_cstring(w, "()V"), rp_chunk_cstring(w, "Main.java"), 0);
    uint32_t frame = rp_chunk_frame(w, m, RP_FRAME_JIT, 7, 42);
    uint32_t stack = rp_chunk_stack(w, &frame, 1, 0);
    uint32_t kind = rp_chunk_kind(w, "cpu", "ns", 10000000, NULL, 0);
    uint32_t th = rp_chunk_thread(w, 1, 100, 1, "main", RP_THREAD_JAVA, mono_ns());
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += rp_chunk_sample(w, kind, th, mono_ns(), stack, 10000000, NULL) == 0;
    return ok;
}

/* A dead writer's ".part" (pid of a process that has exited), with 5 samples. */
static void make_orphan(const char *dir)
{
    pid_t pid = fork();
    REQUIRE(pid >= 0, "fork");
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    char name[64], path[PATH_MAX], err[256];
    REQUIRE(rp_recording_chunk_name(name, sizeof name, (long)pid,
                                    (uint64_t)time(NULL) * NS - 60 * NS, 0) == 0, "name");
    REQUIRE(snprintf(path, sizeof path, "%s/%s.rpc.part", dir, name) < (int)sizeof path,
            "path fits");
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, NULL, 0, err, sizeof err);
    REQUIRE(w, "orphan %s: %s", path, err);
    REQUIRE(put(w, 5) == 5, "orphan samples");
    REQUIRE(rp_chunk_flush(w) == 0, "orphan flush");
    rp_chunk_abandon(w);
}

struct tally {
    long samples, lost, lost_write;
    int files, parts, unreadable, damaged;
};

static void diag(void *arg, const char *path, uint64_t off, const char *reason, int fatal)
{
    (void)fatal;
    struct tally *t = arg;
    t->damaged++;
    fprintf(stderr, "# reader: %s at %" PRIu64 ": %s\n", path, off, reason);
}

/* Every chunk file in dir through the reader: samples, lost.* counters. */
static struct tally read_dir(const char *dir)
{
    struct tally t = {0};
    DIR *d = opendir(dir);
    REQUIRE(d, "opendir %s", dir);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        long pid;
        uint64_t wall;
        uint32_t seq;
        int part;
        if (rp_recording_parse_name(de->d_name, &pid, &wall, &seq, &part) != 0)
            continue;
        char path[PATH_MAX];
        REQUIRE(snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < (int)sizeof path,
                "path fits");
        t.files++;
        t.parts += part;
        struct rp_reader *r = rp_reader_open(path, diag, &t);
        if (!r) {
            t.unreadable++;
            continue;
        }
        struct rp_event ev;
        while (rp_reader_next(r, &ev) == 1) {
            if (ev.type == RP_EV_SAMPLE)
                t.samples++;
            else if (ev.type == RP_EV_COUNTER && ev.u.counter.name &&
                     !strncmp(ev.u.counter.name, RP_COUNTER_LOST_PREFIX,
                              strlen(RP_COUNTER_LOST_PREFIX))) {
                t.lost += (long)ev.u.counter.value;
                if (!strcmp(ev.u.counter.name, RP_COUNTER_LOST_WRITE))
                    t.lost_write += (long)ev.u.counter.value;
            }
        }
        rp_reader_close(r);
    }
    closedir(d);
    return t;
}

/* ----------------------------------------------------------- the cases -- */

/* The samples that reached no writer, as the agent counts them (lost.no_chunk),
 * handed to the next writer there is. */
struct run {
    struct rp_recording *rec;
    long attempted, no_chunk;
};

static void write_some(struct run *r, int n)
{
    struct rp_chunk_writer *w = rp_recording_writer(r->rec);
    r->attempted += n;
    if (!w) {
        r->no_chunk += n;
        return;
    }
    if (r->no_chunk &&
        rp_chunk_counter(w, RP_COUNTER_LOST_PREFIX "no_chunk", (uint64_t)r->no_chunk) == 0)
        r->no_chunk = 0;
    CHECK(put(w, n) == n, "samples accepted");
}

static void one_case(enum op op, int err)
{
    char dir[PATH_MAX], why[256];
    snprintf(dir, sizeof dir, "%s/%s-%s", base, op_name[op], strerrorname_np(err));
    /* Retention by size keeps about two chunks, so that the unlink phase has a
     * chunk to delete at each rotation. */
    struct rp_recording_limits lim = {op == OP_UNLINK ? 1 : 0, 0, 0, 0};
    struct run r = {0};
    r.rec = rp_recording_open(dir, &lim, NULL, 0, why, sizeof why);
    REQUIRE(r.rec, "open %s: %s", dir, why);
    /* Chunk A: no fault. */
    write_some(&r, 10);
    CHECK(rp_recording_rotate(r.rec, NULL, 0) == 0, "%s: rotate A", dir);
    if (op == OP_RECOVER || op == OP_READ)   /* after A, whose rotation would recover it */
        make_orphan(dir), r.attempted += 5;

    /* Chunk B, with the fault. */
    arm(op, err);
    if (op == OP_TRUNCATE)
        arm(OP_SEGMENT, err);      /* ftruncate runs only after a failed segment */
    int rc_flush = 0, rc_rotate = 0, rc_enforce = 0;
    write_some(&r, 10);
    rc_flush = rp_recording_flush(r.rec, NULL);
    write_some(&r, 10);
    rc_rotate = rp_recording_rotate(r.rec, NULL, 0);
    int e_rotate = errno;
    rc_enforce = rp_recording_enforce(r.rec);
    int hits = F.hits[op];
    clear();
    struct rp_recording_stats st;
    rp_recording_stats(r.rec, &st);

    /* The phase was reached, and its failure was reported. */
    CHECK(hits > 0, "%s: the fault was never hit", dir);
    switch (op) {
    case OP_CREATE: case OP_HEADER:
        CHECK(st.chunks_failed >= 1, "%s: chunks_failed %" PRIu64, dir, st.chunks_failed);
        CHECK(r.no_chunk == 20 || r.attempted - r.no_chunk > 0, "%s: no_chunk counted", dir);
        break;
    case OP_SEGMENT: case OP_TRUNCATE:
        CHECK(rc_flush == -1, "%s: flush rc %d", dir, rc_flush);
        CHECK(st.segments_failed >= 1, "%s: segments_failed %" PRIu64, dir, st.segments_failed);
        break;
    case OP_FSYNC: case OP_RENAME:
        CHECK(rc_rotate == -1 && e_rotate == err, "%s: rotate rc %d errno %d", dir,
              rc_rotate, e_rotate);
        break;
    case OP_LIST:
        CHECK(rc_enforce == -1, "%s: enforce rc %d", dir, rc_enforce);
        break;
    case OP_LOCK: case OP_UNLINK: case OP_RECOVER: case OP_READ:
        break;   /* not failures of the recording: it goes on (see below) */
    default:
        break;
    }
    if (op != OP_LOCK && op != OP_READ)
        CHECK(st.last_errno == err, "%s: last_errno %d (%s)", dir, st.last_errno,
              strerror(st.last_errno));

    /* Chunk C: the fault is gone, writing resumes and closes cleanly. */
    write_some(&r, 10);
    CHECK(r.no_chunk == 0, "%s: a writer after the fault", dir);
    CHECK(rp_recording_flush(r.rec, NULL) == 0, "%s: flush C", dir);
    CHECK(rp_recording_enforce(r.rec) >= 0, "%s: enforce after the fault", dir);
    rp_recording_stats(r.rec, &st);
    CHECK(rp_recording_close(r.rec) == 0, "%s: close", dir);

    /* What is on disk: readable, and every sample read or counted. */
    struct tally t = read_dir(dir);
    /* The recording's samples_failed is what the agent's status reports as
     * lost.write: it must be what the files count (retention may have deleted
     * the chunk that carried it). */
    if (op != OP_UNLINK)
        CHECK(t.lost_write == (long)st.samples_failed, "%s: files lost.write %ld, "
              "stats samples_failed %" PRIu64, dir, t.lost_write, st.samples_failed);
    CHECK(t.unreadable == 0 && t.damaged == 0, "%s: %d unreadable, %d damage reports",
          dir, t.unreadable, t.damaged);
    /* A ".part" left by a failed rename (ours) or a failed recovery is an orphan
     * once its writer let go: the enforce after the fault renames it. */
    CHECK(t.parts == 0, "%s: %d .part files left", dir, t.parts);
    if (op == OP_UNLINK) {
        /* Retention deleted chunks once the fault was gone: what it deleted is
         * neither read nor lost, so only the bound can be checked. */
        CHECK(t.samples + t.lost <= r.attempted && t.samples >= 10, "%s: read %ld + lost %ld"
              " of %ld", dir, t.samples, t.lost, r.attempted);
    } else {
        CHECK(t.samples + t.lost == r.attempted, "%s: read %ld + lost %ld != attempted %ld",
              dir, t.samples, t.lost, r.attempted);
    }
}

/* ------------------------------------------- counters without memory -- */

static struct run open_run(char *dir, size_t cap, const char *name)
{
    char why[256];
    snprintf(dir, cap, "%s/%s", base, name);
    struct run r = {0};
    r.rec = rp_recording_open(dir, NULL, NULL, 0, why, sizeof why);
    REQUIRE(r.rec, "open %s: %s", dir, why);
    return r;
}

static void check_all_counted(const char *dir, const struct run *r)
{
    struct tally t = read_dir(dir);
    CHECK(t.unreadable == 0 && t.damaged == 0, "%s: %d unreadable, %d damage reports",
          dir, t.unreadable, t.damaged);
    CHECK(t.samples + t.lost == r->attempted, "%s: read %ld + lost %ld != attempted %ld",
          dir, t.samples, t.lost, r->attempted);
}

/* A segment write fails while there is no memory for the lost.write counter's
 * slot (the counter table is full at its first size, 64 names, and cannot grow).
 * The segment's samples must still be counted: at the next flush, or at close. */
static void case_lost_write_no_memory(void)
{
    char dir[PATH_MAX];
    struct run r = open_run(dir, sizeof dir, "lost-write-no-memory");
    write_some(&r, 10);
    struct rp_chunk_writer *w = rp_recording_writer(r.rec);
    for (int i = 0; i < 64; i++) {
        char name[32];
        snprintf(name, sizeof name, "test.c%02d", i);
        REQUIRE(rp_chunk_counter(w, name, 1) == 0, "counter %s", name);
    }
    arm(OP_SEGMENT, EIO);
    arm(OP_ALLOC, ENOMEM);
    int rc = rp_recording_flush(r.rec, NULL);
    int seg_hits = F.hits[OP_SEGMENT], alloc_hits = F.hits[OP_ALLOC];
    clear();
    CHECK(rc == -1 && seg_hits > 0, "%s: the write did not fail (rc %d)", dir, rc);
    CHECK(alloc_hits > 0, "%s: lost.write found room: the case tests nothing", dir);
    CHECK(rp_recording_close(r.rec) == 0, "%s: close", dir);
    check_all_counted(dir, &r);
}

/* A chunk's close fails, so its counters are carried; the next chunk cannot take
 * them when it opens (no memory for their names). They must reach that chunk at
 * its next flush, and not vanish when the recording closes. */
static void case_carried_retried(void)
{
    char dir[PATH_MAX];
    struct run r = open_run(dir, sizeof dir, "carried-retried");
    write_some(&r, 10);
    REQUIRE(rp_chunk_counter(rp_recording_writer(r.rec), RP_COUNTER_LOST_PREFIX "test",
                             7) == 0, "counter");
    r.attempted += 7;
    arm(OP_SEGMENT, EIO);
    int rc = rp_recording_rotate(r.rec, NULL, 0);
    clear();
    CHECK(rc == -1, "%s: the close did not fail", dir);
    arm(OP_ALLOC, ENOMEM);
    struct rp_chunk_writer *w = rp_recording_writer(r.rec);
    int alloc_hits = F.hits[OP_ALLOC];
    clear();
    REQUIRE(w != NULL, "%s: no chunk after the failed close", dir);
    CHECK(alloc_hits > 0, "%s: the new chunk took the counters: the case tests nothing",
          dir);
    CHECK(rp_recording_flush(r.rec, NULL) == 0, "%s: flush", dir);
    struct tally t = read_dir(dir);     /* the open .part included */
    CHECK(t.lost == 17, "%s: %ld lost counted after the flush, not 17", dir, t.lost);
    CHECK(rp_recording_close(r.rec) == 0, "%s: close", dir);
    check_all_counted(dir, &r);
}

/* More counters carried than the carry table holds: the losses among them stay
 * counted, and no diagnostic counter is counted as a loss. */
static void case_carry_overflow(void)
{
    char dir[PATH_MAX];
    struct run r = open_run(dir, sizeof dir, "carry-overflow");
    write_some(&r, 10);
    struct rp_chunk_writer *w = rp_recording_writer(r.rec);
    REQUIRE(rp_chunk_counter(w, RP_COUNTER_LOST_PREFIX "test", 7) == 0, "counter");
    r.attempted += 7;
    for (int i = 0; i < 40; i++) {
        char name[32];
        snprintf(name, sizeof name, "diag.c%02d", i);
        REQUIRE(rp_chunk_counter(w, name, 1000) == 0, "counter %s", name);
    }
    arm(OP_SEGMENT, EIO);
    int rc = rp_recording_rotate(r.rec, NULL, 0);
    clear();
    CHECK(rc == -1, "%s: the close did not fail", dir);
    write_some(&r, 10);
    CHECK(rp_recording_close(r.rec) == 0, "%s: close", dir);
    check_all_counted(dir, &r);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb; (void)flag; (void)f;
    return remove(path);
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/rp-recfaults-XXXXXX");
    REQUIRE(mkdtemp(base), "mkdtemp");
    static const int errs[] = {ENOSPC, EIO, EACCES, EROFS};
    for (int op = 0; op < OP_COUNT; op++)
        for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
            one_case((enum op)op, errs[i]);
    case_lost_write_no_memory();
    case_carried_retried();
    case_carry_overflow();
    if (!check_failed)
        nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    else
        fprintf(stderr, "left %s for inspection\n", base);
    return check_exit("test_recording_faults");
}
