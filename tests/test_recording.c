/*
 * tests/test_recording.c — the recording directory (ringprof/recording.h).
 *
 * Every test works in its own subdirectory of a fresh temporary directory and looks
 * at the result the way an operator would: by listing the directory and reading the
 * files back with the chunk reader. Chunks that another process or an earlier day
 * would have left are made with the real chunk writer under crafted names (old start
 * times, other pids, ".part" suffixes), so retention and recovery meet real files.
 * Failures that need privileges or limits (permissions, a full disk) run in forked
 * children: as root, permission bits stop nothing, so the child drops to nobody.
 */
#include "ringprof/recording.h"
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000ull
#define KiB 1024u
#define DAY (24 * 3600ull)

/* check.h's REQUIRE evaluates its condition twice; MUST is for conditions with side
 * effects (mkdir, fopen, read, ...). */
#define MUST(cond, ...)                                                          \
    do {                                                                         \
        if (!(cond))                                                             \
            REQUIRE(0 && #cond, __VA_ARGS__);                                     \
    } while (0)

static char base[64];

/* ---------------------------------------------------------------- helpers -- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return rng_state = x;
}

static uint64_t now_wall_s(void)
{
    return (uint64_t)time(NULL);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* snprintf that stops the test rather than cut a path. */
__attribute__((format(printf, 3, 4)))
static void fmt(char *out, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(out, cap, f, ap);
    va_end(ap);
    REQUIRE(n >= 0 && (size_t)n < cap, "does not fit: %s", f);
}

static void sub(char *out, size_t cap, const char *name)
{
    fmt(out, cap, "%s/%s", base, name);
}

/* Write `bytes` of incompressible pool data (a random string) and `nsamples`
 * samples: each call grows the chunk by about `bytes`. @return samples written. */
static int put_data(struct rp_chunk_writer *w, size_t bytes, int nsamples)
{
    char blob[4 * KiB];
    uint32_t str = 0;
    for (size_t done = 0, len; done < bytes; done += len) {
        len = bytes - done < sizeof blob ? bytes - done : sizeof blob;
        for (size_t i = 0; i < len; i++)
            blob[i] = (char)rnd();
        str = rp_chunk_string(w, blob, len);
    }
    uint32_t klass = rp_chunk_class(w, rp_chunk_cstring(w, "app.Main"));
    uint32_t m = rp_chunk_method(w, klass, rp_chunk_cstring(w, "run"),
                                 rp_chunk_cstring(w, "()V"), str, 0);
    uint32_t frame = rp_chunk_frame(w, m, RP_FRAME_JIT, 7, 42);
    uint32_t stack = rp_chunk_stack(w, &frame, 1, 0);
    uint32_t kind = rp_chunk_kind(w, "cpu", "ns", 10000000, NULL, 0);
    uint32_t th = rp_chunk_thread(w, 1, 100, 1, "main", RP_THREAD_JAVA, mono_ns());
    int n = 0;
    for (int i = 0; i < nsamples; i++)
        n += rp_chunk_sample(w, kind, th, mono_ns(), stack, 10000000, NULL) == 0;
    return n;
}

/* Make a chunk file in `dir` as process `pid` would have at `wall_s`: finished
 * (closed, ".rpc") or orphaned (abandoned mid-way, ".rpc.part"). */
static void craft(const char *dir, long pid, uint64_t wall_s, uint32_t seq,
                  size_t bytes, int part)
{
    char name[64], path[PATH_MAX], err[256];
    MUST(rp_recording_chunk_name(name, sizeof name, pid, wall_s * NS, seq) == 0,
            "name for %ld", pid);
    fmt(path, sizeof path, "%s/%s.rpc%s", dir, name, part ? ".part" : "");
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, NULL, 0, err, sizeof err);
    REQUIRE(w, "craft %s: %s", path, err);
    put_data(w, bytes, 3);
    if (part) {
        rp_chunk_flush(w);
        rp_chunk_abandon(w);
    } else {
        MUST(rp_chunk_close(w) == 0, "close %s", path);
    }
}

static void craft_path(char *out, size_t cap, const char *dir, long pid,
                       uint64_t wall_s, uint32_t seq, const char *suffix)
{
    char name[64];
    rp_recording_chunk_name(name, sizeof name, pid, wall_s * NS, seq);
    fmt(out, cap, "%s/%s%s", dir, name, suffix);
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static off_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* Finished chunks (".rpc") and ".part" files in dir, and their total size. */
struct dir_info {
    int finished, parts;
    uint64_t finished_bytes, part_bytes;
};

static struct dir_info scan(const char *dir)
{
    struct dir_info di = {0};
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[PATH_MAX];
    long pid;
    uint64_t t;
    uint32_t seq;
    int part;

    REQUIRE(d, "opendir %s", dir);
    while ((de = readdir(d)) != NULL) {
        if (rp_recording_parse_name(de->d_name, &pid, &t, &seq, &part) != 0)
            continue;
        fmt(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (part)
            di.parts++, di.part_bytes += (uint64_t)sb.st_size;
        else
            di.finished++, di.finished_bytes += (uint64_t)sb.st_size;
    }
    closedir(d);
    return di;
}

/* Read a chunk to the end. @return samples read, -1 if it cannot be opened. */
static long read_chunk(const char *path, int *clean, struct rp_reader **keep)
{
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    struct rp_reader_stats rs;
    struct rp_event ev;
    long samples = 0;

    if (!r)
        return -1;
    while (rp_reader_next(r, &ev) == 1)
        samples += ev.type == RP_EV_SAMPLE;
    rp_reader_stats(r, &rs);
    if (clean)
        *clean = rs.clean_close;
    if (keep)
        *keep = r;
    else
        rp_reader_close(r);
    return samples;
}

/* Run fn in a forked child; its CHECK failures make it exit 1. @return its status. */
static int in_child(void (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0, "fork");
    if (pid == 0) {
        check_count = check_failed = 0;   /* report the child's own checks only */
        fn(arg);
        fflush(NULL);
        _exit(check_failed ? 1 : 0);
    }
    int st;
    waitpid(pid, &st, 0);
    return st;
}

/* A pid that certainly belonged to a process that is now gone. */
static long dead_pid(void)
{
    pid_t pid = fork();
    REQUIRE(pid >= 0, "fork");
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return (long)pid;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb, (void)flag, (void)f;
    chmod(path, 0700);
    return remove(path);
}

/* ------------------------------------------------------------------ names -- */

static void test_names(void)
{
    char name[64];
    long pid;
    uint64_t t;
    uint32_t seq;
    int part;

    /* 2026-11-21 06:01:02 UTC */
    uint64_t wall = 1795240862ull * NS + 123456789;
    CHECK(rp_recording_chunk_name(name, sizeof name, 12345, wall, 3) == 0, "build");
    CHECK(strcmp(name, "20261121T060102Z-12345-000003") == 0, "got %s", name);
    CHECK(rp_recording_chunk_name(name, 29, 12345, wall, 3) == -1, "one byte short");
    CHECK(rp_recording_chunk_name(name, 30, 12345, wall, 3) == 0, "exact fit");
    CHECK(rp_recording_chunk_name(name, sizeof name, 0, wall, 3) == -1, "pid 0");

    CHECK(rp_recording_parse_name("20261121T060102Z-12345-000003.rpc", &pid, &t, &seq,
                                  &part) == 0, "parse finished");
    CHECK(pid == 12345 && t == 1795240862ull && seq == 3 && part == 0,
          "fields %ld %" PRIu64 " %u %d", pid, t, seq, part);
    CHECK(rp_recording_parse_name("20261121T060102Z-7-1000000.rpc.part", &pid, &t, &seq,
                                  &part) == 0, "parse part, 7-digit seq");
    CHECK(pid == 7 && seq == 1000000 && part == 1, "fields %ld %u %d", pid, seq, part);

    /* Round trip over awkward values: every field survives build then parse. */
    /* The last: UINT64_MAX ns is in 2554, the end of what wall_ns can say. */
    const uint64_t walls[] = { 0, 951782400ull * NS /* 2000-02-29 */, wall,
                               UINT64_MAX / NS * NS };
    const uint32_t seqs[] = { 0, 999999, 1000000, UINT32_MAX };
    for (size_t i = 0; i < 4; i++) {
        for (size_t j = 0; j < 4; j++) {
            char file[80];
            rp_recording_chunk_name(name, sizeof name, 4194304, walls[i], seqs[j]);
            fmt(file, sizeof file, "%s.rpc", name);
            int rc = rp_recording_parse_name(file, &pid, &t, &seq, &part);
            CHECK(rc == 0 && pid == 4194304 && t == walls[i] / NS && seq == seqs[j],
                  "round trip %s", file);
        }
    }

    static const char *const bad[] = {
        "", ".rpc", "notes.txt", "20261121T060102Z-12345-000003",
        "20261121T060102Z-12345-000003.rpc.tmp", "20261121T060102Z-12345-000003.rpcx",
        "20261121T060102Z-12345-000003.rpc.part.part", "20261121T060102Z-12345-000003.part",
        "20261121T060102Z-012345-000003.rpc",     /* leading zero in pid */
        "20261121T060102Z-12345-00003.rpc",       /* seq too short */
        "20261121T060102Z-12345-0000003.rpc",     /* seq padded too far */
        "20261121T060102Z-0-000003.rpc",          /* pid 0 */
        "20261121T060102Z--1-000003.rpc", "20261121T060102Z-+1-000003.rpc",
        "20261131T060102Z-12345-000003.rpc",      /* November 31st */
        "20261121T250102Z-12345-000003.rpc",      /* hour 25 */
        "20261121T060160Z-12345-000003.rpc",      /* second 60 */
        "20261121t060102Z-12345-000003.rpc", "20261121T060102-12345-000003.rpc",
        "2026112T060102Z-12345-000003.rpc", "20261121T060102Z_12345_000003.rpc",
        "20261121T060102Z-12345-4294967296.rpc",  /* seq beyond 32 bits */
        "20261121T060102Z-12345-000003.RPC", " 20261121T060102Z-12345-000003.rpc",
        "30000101T000000Z-1-000000.rpc",          /* beyond wall_ns (2554) */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(rp_recording_parse_name(bad[i], &pid, &t, &seq, &part) == -1,
              "accepted '%s'", bad[i]);
}

/* --------------------------------------------------------------- rotation -- */

#define PER_FLUSH (4 * KiB)
/* One segment's worth of slack: the flush's data, LZ4's worst case on random bytes,
 * the segment header and the records around the blob. */
#define SEG_SLACK (PER_FLUSH + PER_FLUSH / 64 + 1024)

static void test_rotation_by_size(void)
{
    char dir[PATH_MAX], err[256];
    sub(dir, sizeof dir, "size");
    struct rp_recording_limits lim = { 0, 0, 64 * KiB, 0 };
    struct rp_kv meta[] = { { "jvm.name", "TestVM" }, { RP_META_PID, "1" } };
    struct rp_recording *rec = rp_recording_open(dir, &lim, meta, 2, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    CHECK(rp_recording_generation(rec) == 0, "no chunk before the first writer call");
    CHECK(scan(dir).parts == 0, "the first chunk is created lazily");

    uint64_t gens = 0, last_gen = 0, rotations = 0;
    long samples = 0;
    for (int i = 0; i < 100; i++) {
        struct rp_chunk_writer *w = rp_recording_writer(rec);
        REQUIRE(w, "writer %d", i);
        gens += rp_recording_generation(rec) != last_gen;
        last_gen = rp_recording_generation(rec);
        samples += put_data(w, PER_FLUSH, 5);
        int rotated = -1;
        CHECK(rp_recording_flush(rec, &rotated) == 0, "flush %d", i);
        CHECK(rotated == 0 || rotated == 1, "flush %d says whether it rotated", i);
        rotations += rotated == 1;
        CHECK(scan(dir).parts == (rotated ? 0 : 1), "flush %d: a rotation leaves no "
              ".part, else the chunk stays open", i);
    }
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    CHECK(rotations == st.chunks_finished, "rotated %" PRIu64 " times for %" PRIu64
          " finished chunks", rotations, st.chunks_finished);
    CHECK(rp_recording_close(rec) == 0, "close");

    /* ~400 KiB in 64 KiB chunks: 6 rotations and the last, shorter chunk. */
    CHECK(st.chunks_opened >= 6 && st.chunks_opened <= 8, "opened %" PRIu64,
          st.chunks_opened);
    CHECK(gens == st.chunks_opened, "generation moved %" PRIu64 " times for %" PRIu64
          " chunks", gens, st.chunks_opened);
    struct dir_info di = scan(dir);
    CHECK(di.parts == 0, "close renamed the last chunk");
    CHECK((uint64_t)di.finished == st.chunks_opened, "%d files, %" PRIu64 " chunks",
          di.finished, st.chunks_opened);

    long got = 0;
    char first_id[128] = "";
    for (uint32_t seq = 0; seq < st.chunks_opened; seq++) {
        char path[PATH_MAX], want[16];
        struct rp_reader *r = NULL;
        DIR *d = opendir(dir);
        struct dirent *de;
        long pid;
        uint64_t t = 0, ts;
        uint32_t s;
        int part;
        path[0] = '\0';
        /* t is the start time in the name of the chunk with this seq (not of
         * whichever entry readdir returns last: chunks can straddle a second). */
        while ((de = readdir(d)) != NULL)
            if (rp_recording_parse_name(de->d_name, &pid, &ts, &s, &part) == 0 && s == seq) {
                fmt(path, sizeof path, "%s/%s", dir, de->d_name);
                t = ts;
            }
        closedir(d);
        REQUIRE(path[0], "no chunk with seq %u", seq);
        off_t size = file_size(path);
        CHECK(size > 0 && (uint64_t)size <= lim.chunk_size + SEG_SLACK,
              "%s is %lld bytes", path, (long long)size);
        if (seq + 1 < st.chunks_opened)
            CHECK((uint64_t)size >= lim.chunk_size, "rotated early: %lld",
                  (long long)size);
        int clean = 0;
        long n = read_chunk(path, &clean, &r);
        REQUIRE(n >= 0 && r, "read %s", path);
        got += n;
        CHECK(clean == 1, "%s closed cleanly", path);
        fmt(want, sizeof want, "%u", seq);
        const char *v = rp_reader_meta(r, RP_META_CHUNK_SEQ);
        CHECK(v && strcmp(v, want) == 0, "chunk.seq %s, want %s", v ? v : "-", want);
        v = rp_reader_meta(r, RP_META_PID);
        CHECK(v && atol(v) == (long)getpid(), "pid %s (the caller's '1' is dropped)",
              v ? v : "-");
        v = rp_reader_meta(r, "jvm.name");
        CHECK(v && strcmp(v, "TestVM") == 0, "caller's metadata kept");
        v = rp_reader_meta(r, RP_META_HOST);
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        CHECK(v && strcmp(v, host) == 0, "host %s", v ? v : "-");
        v = rp_reader_meta(r, RP_META_START_WALL);
        CHECK(v && strtoull(v, NULL, 10) / NS == t, "start.wall_ns agrees with the name");
        v = rp_reader_meta(r, RP_META_RECORDING);
        CHECK(v && strlen(v) > 0, "recording id");
        if (seq == 0 && v)
            fmt(first_id, sizeof first_id, "%s", v);
        CHECK(v && strcmp(v, first_id) == 0, "one recording id: %s vs %s", v, first_id);
        rp_reader_close(r);
    }
    CHECK(got == samples, "read %ld samples of %ld", got, samples);
    /* Taken before close, so the last chunk's final segment is not in it yet. */
    CHECK(st.bytes_written <= di.finished_bytes &&
          st.bytes_written + SEG_SLACK >= di.finished_bytes,
          "bytes_written %" PRIu64 " (before the last close) vs %" PRIu64 " on disk",
          st.bytes_written, di.finished_bytes);
}

/* A recording that never rotates except on request, and one that rotates by age;
 * the first is the control that shows the rotations come from the duration. */
static void test_rotation_by_duration(void)
{
    char dir[PATH_MAX], err[256];
    const uint64_t dur = 40 * 1000000ull;   /* 40 ms */
    sub(dir, sizeof dir, "duration");

    for (int timed = 0; timed < 2; timed++) {
        struct rp_recording_limits lim = { 0, 0, 0, timed ? dur : 0 };
        struct rp_recording *rec = rp_recording_open(dir, &lim, NULL, 0, err, sizeof err);
        REQUIRE(rec, "open: %s", err);
        uint64_t t0 = mono_ns();
        for (int i = 0; i < 25; i++) {   /* ~250 ms */
            put_data(rp_recording_writer(rec), 64, 2);
            CHECK(rp_recording_flush(rec, NULL) == 0, "flush");
            usleep(10000);
        }
        uint64_t elapsed = mono_ns() - t0;
        struct rp_recording_stats st;
        rp_recording_stats(rec, &st);
        rp_recording_close(rec);
        if (!timed) {
            CHECK(st.chunks_finished == 0 && st.chunks_opened == 1,
                  "no limits, no rotation: %" PRIu64 " finished", st.chunks_finished);
            continue;
        }
        /* Each chunk lives at least `dur`, so there are at most elapsed/dur of them
         * finished; with 250 ms of 40 ms chunks there must have been several. */
        CHECK(st.chunks_finished >= 3, "finished %" PRIu64, st.chunks_finished);
        CHECK(st.chunks_finished <= elapsed / dur, "finished %" PRIu64 " in %" PRIu64
              " ms", st.chunks_finished, elapsed / 1000000);
    }
    CHECK(scan(dir).parts == 0, "all renamed");
}

static void test_rotate_path(void)
{
    char dir[PATH_MAX], err[256], path[PATH_MAX] = "junk";
    sub(dir, sizeof dir, "rotate");
    struct rp_recording *rec = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);

    CHECK(rp_recording_rotate(rec, path, sizeof path) == 0 && path[0] == '\0',
          "no chunk: empty path, got '%s'", path);
    int n = put_data(rp_recording_writer(rec), 1000, 50);
    CHECK(rp_recording_flush(rec, NULL) == 0, "flush");
    n += put_data(rp_recording_writer(rec), 1000, 50);   /* pending: the last segment */
    CHECK(rp_recording_rotate(rec, path, sizeof path) == 0, "rotate");
    size_t len = strlen(path);
    CHECK(len > 4 && strcmp(path + len - 4, ".rpc") == 0, "finished name: %s", path);
    CHECK(strncmp(path, dir, strlen(dir)) == 0, "path is in the directory: %s", path);
    int clean = 0;
    long got = read_chunk(path, &clean, NULL);
    CHECK(got == n, "read %ld samples of %d", got, n);
    CHECK(clean == 1, "clean close");
    char part[PATH_MAX + 8];
    fmt(part, sizeof part, "%s.part", path);
    CHECK(!exists(part), "the .part is gone");

    /* A path buffer too small: the chunk is still finished, the path is not cut. */
    put_data(rp_recording_writer(rec), 10, 1);
    char small[8] = "junk";
    errno = 0;
    CHECK(rp_recording_rotate(rec, small, sizeof small) == -1 && errno == ERANGE,
          "short buffer: ERANGE");
    CHECK(small[0] == '\0', "no cut path: '%s'", small);
    CHECK(scan(dir).finished == 2 && scan(dir).parts == 0, "second chunk finished");
    CHECK(strcmp(rp_recording_dir(rec), dir) == 0, "dir %s", rp_recording_dir(rec));

    /* Someone deletes the open chunk: the rename fails and says so; the recording
     * carries on with a new chunk. */
    struct rp_chunk_writer *w = rp_recording_writer(rec);
    REQUIRE(w, "writer");
    put_data(w, 10, 1);
    unlink(rp_chunk_writer_path(w));
    errno = 0;
    CHECK(rp_recording_rotate(rec, path, sizeof path) == -1 && errno == ENOENT,
          "rotate of a deleted chunk fails with ENOENT");
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    CHECK(st.last_errno == ENOENT, "last_errno %d", st.last_errno);
    CHECK(rp_recording_writer(rec) != NULL, "a new chunk after the loss");
    rp_recording_close(rec);
    CHECK(scan(dir).finished == 3 && scan(dir).parts == 0, "close finished the third");
}

/* A recording id the caller gives is every chunk's, in place of the generated one
 * (ringprof record tells its own chunks by it); an empty one is not taken. */
static void test_given_id(void)
{
    static const char *const ids[] = {"rec-given.1_x", ""};
    for (int i = 0; i < 2; i++) {
        char dir[PATH_MAX], err[256], path[2][PATH_MAX];
        sub(dir, sizeof dir, ids[i][0] ? "given-id" : "empty-id");
        const struct rp_kv meta[] = {{RP_META_RECORDING, ids[i]}, {"jvm.name", "TestVM"}};
        struct rp_recording *rec = rp_recording_open(dir, NULL, meta, 2, err, sizeof err);
        REQUIRE(rec, "open: %s", err);
        for (int k = 0; k < 2; k++) {
            put_data(rp_recording_writer(rec), 10, 1);
            CHECK(rp_recording_rotate(rec, path[k], sizeof path[k]) == 0, "rotate %d", k);
        }
        rp_recording_close(rec);
        for (int k = 0; k < 2; k++) {
            struct rp_reader *r = NULL;
            int clean = 0;
            REQUIRE(read_chunk(path[k], &clean, &r) >= 0 && r, "read %s", path[k]);
            const char *v = rp_reader_meta(r, RP_META_RECORDING);
            size_t n = 0;
            const struct rp_kv *all = rp_reader_meta_all(r, &n);
            int count = 0;
            for (size_t j = 0; j < n; j++)
                count += strcmp(all[j].key, RP_META_RECORDING) == 0;
            if (ids[i][0])
                CHECK(v && strcmp(v, ids[i]) == 0, "chunk %d: the given id, got %s", k,
                      v ? v : "-");
            else
                CHECK(v && strchr(v, '-') && atol(v) == (long)getpid(),
                      "chunk %d: an empty id is not taken: %s", k, v ? v : "-");
            CHECK(count == 1, "chunk %d: one recording.id entry, not %d", k, count);
            rp_reader_close(r);
        }
    }
}

/* rp_recording_set_meta changes the header of the chunks opened after it, never
 * the one open: ctl set names what it changed in the chunks written under it. */
static void test_set_meta(void)
{
    char dir[PATH_MAX], err[256], path[4][PATH_MAX];
    sub(dir, sizeof dir, "set-meta");
    const struct rp_kv meta[] = {{RP_META_OPTIONS, "interval=10ms"}, {"jvm.name", "TestVM"}};
    struct rp_recording *rec = rp_recording_open(dir, NULL, meta, 2, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    /* chunk 0: as opened; 1: the key added while 0 was open; 2: changed; 3: removed */
    static const char *const want[4] = {NULL, "interval=5ms", "interval=5ms,alloc=1k", NULL};
    for (int k = 0; k < 4; k++) {
        put_data(rp_recording_writer(rec), 10, 1);
        if (k < 3)
            CHECK(rp_recording_set_meta(rec, RP_META_OPTIONS_SET, want[k + 1]) == 0,
                  "set %d", k);
        CHECK(rp_recording_rotate(rec, path[k], sizeof path[k]) == 0, "rotate %d", k);
    }
    errno = 0;
    CHECK(rp_recording_set_meta(rec, RP_META_CHUNK_SEQ, "7") == -1 && errno == EINVAL,
          "a key the recording sets itself: EINVAL");
    CHECK(rp_recording_set_meta(rec, "jvm.name", "OtherVM") == 0, "replace a given key");
    put_data(rp_recording_writer(rec), 10, 1);
    char last[PATH_MAX];
    CHECK(rp_recording_rotate(rec, last, sizeof last) == 0, "rotate the last");
    rp_recording_close(rec);
    for (int k = 0; k < 5; k++) {
        struct rp_reader *r = NULL;
        int clean = 0;
        REQUIRE(read_chunk(k < 4 ? path[k] : last, &clean, &r) >= 0 && r, "read %d", k);
        const char *v = rp_reader_meta(r, RP_META_OPTIONS_SET);
        const char *w = k < 4 ? want[k] : NULL;
        CHECK(w ? v && !strcmp(v, w) : !v, "chunk %d: %s, got %s", k, w ? w : "no key",
              v ? v : "none");
        CHECK(!strcmp(rp_reader_meta(r, RP_META_OPTIONS), "interval=10ms"),
              "chunk %d: the given options kept", k);
        const char *jvm = rp_reader_meta(r, "jvm.name"), *seq = rp_reader_meta(r,
                                                                             RP_META_CHUNK_SEQ);
        CHECK(jvm && !strcmp(jvm, k < 4 ? "TestVM" : "OtherVM"), "chunk %d: jvm.name %s", k,
              jvm ? jvm : "-");
        CHECK(seq && atoi(seq) == k, "chunk %d: its own chunk.seq, %s", k, seq ? seq : "-");
        rp_reader_close(r);
    }
}

/* -------------------------------------------------------------- retention -- */

/* Foreign things that retention must neither count nor delete nor follow. */
static void add_foreign(const char *dir, char *target, size_t cap)
{
    char path[PATH_MAX];
    FILE *f;

    fmt(path, sizeof path, "%s/notes.txt", dir);   /* big: would swamp max_size */
    MUST((f = fopen(path, "w")), "notes");
    for (int i = 0; i < 512; i++)
        fputs("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", f);
    fclose(f);
    fmt(path, sizeof path, "%s/20000101T000000Z-1-000000.rpc.bak", dir);
    MUST((f = fopen(path, "w")), "bak");
    fclose(f);
    /* Names of very old chunks, so retention would take them first. */
    fmt(path, sizeof path, "%s/20000101T000000Z-2-000000.rpc", dir);
    MUST(mkdir(path, 0700) == 0, "subdir");
    fmt(path, sizeof path, "%s/20000101T000000Z-2-000000.rpc/x", dir);
    MUST((f = fopen(path, "w")), "file in subdir");
    fclose(f);
    fmt(target, cap, "%s/precious", base);
    MUST((f = fopen(target, "w")), "precious");
    fputs("keep me\n", f);
    fclose(f);
    fmt(path, sizeof path, "%s/20000101T000000Z-3-000000.rpc", dir);
    MUST(symlink(target, path) == 0, "symlink");
}

static void check_foreign(const char *dir, const char *target)
{
    char path[PATH_MAX];
    struct stat sb;

    fmt(path, sizeof path, "%s/notes.txt", dir);
    CHECK(file_size(path) == 512 * 64, "notes.txt intact");
    fmt(path, sizeof path, "%s/20000101T000000Z-1-000000.rpc.bak", dir);
    CHECK(exists(path), ".bak kept");
    fmt(path, sizeof path, "%s/20000101T000000Z-2-000000.rpc/x", dir);
    CHECK(exists(path), "subdirectory and its file kept");
    fmt(path, sizeof path, "%s/20000101T000000Z-3-000000.rpc", dir);
    CHECK(lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode), "symlink kept");
    CHECK(file_size(target) == 8, "symlink target intact");
}

/* Chunks are deleted oldest first: the files still present are always a suffix of
 * all chunks ever made, in (start, pid, seq) order. `all` is that order. */
struct ledger {
    char names[64][64];
    uint64_t key[64][3];
    int n;
};

static void ledger_sync(struct ledger *lg, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    long pid;
    uint64_t t;
    uint32_t seq;
    int part;

    while ((de = readdir(d)) != NULL) {
        char path[PATH_MAX];
        struct stat sb;
        if (rp_recording_parse_name(de->d_name, &pid, &t, &seq, &part) != 0 || part)
            continue;
        fmt(path, sizeof path, "%s/%s", dir, de->d_name);
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;   /* the foreign subdirectory and symlink */
        int known = 0;
        for (int i = 0; i < lg->n; i++)
            known |= strcmp(lg->names[i], de->d_name) == 0;
        if (known || lg->n == 64)
            continue;
        /* insert in (t, pid, seq) order */
        int at = lg->n;
        while (at > 0 && (lg->key[at - 1][0] > t ||
                          (lg->key[at - 1][0] == t && (lg->key[at - 1][1] > (uint64_t)pid ||
                           (lg->key[at - 1][1] == (uint64_t)pid &&
                            lg->key[at - 1][2] > seq))))) {
            memcpy(lg->names[at], lg->names[at - 1], sizeof lg->names[0]);
            memcpy(lg->key[at], lg->key[at - 1], sizeof lg->key[0]);
            at--;
        }
        fmt(lg->names[at], sizeof lg->names[at], "%s", de->d_name);
        lg->key[at][0] = t, lg->key[at][1] = (uint64_t)pid, lg->key[at][2] = seq;
        lg->n++;
    }
    closedir(d);
}

/* @return how many of the ledger's chunks are gone; CHECKs they are the oldest. */
static int ledger_gone(const struct ledger *lg, const char *dir)
{
    char path[PATH_MAX];
    int gone = 0, seen_present = 0;

    for (int i = 0; i < lg->n; i++) {
        fmt(path, sizeof path, "%s/%s", dir, lg->names[i]);
        if (exists(path)) {
            seen_present = 1;
        } else {
            CHECK(!seen_present, "%s deleted while an older chunk is kept", lg->names[i]);
            gone++;
        }
    }
    return gone;
}

static void test_retention_by_size(void)
{
    char dir[PATH_MAX], err[256], target[PATH_MAX], path[PATH_MAX];
    const uint64_t chunk = 64 * KiB, max = 200 * KiB;
    sub(dir, sizeof dir, "retsize");
    MUST(mkdir(dir, 0700) == 0, "mkdir");
    add_foreign(dir, target, sizeof target);

    /* Another JVM's older chunks, and a pair from one second whose seqs straddle
     * six digits: strcmp would sort -1000000 before -999999. */
    uint64_t now = now_wall_s();
    craft(dir, 4194000, now - 300, 0, 40 * KiB, 0);
    craft(dir, 4194000, now - 200, 1, 40 * KiB, 0);
    craft(dir, 4194001, now - 100, 999999, 40 * KiB, 0);
    craft(dir, 4194001, now - 100, 1000000, 40 * KiB, 0);
    struct ledger lg = { .n = 0 };
    ledger_sync(&lg, dir);
    REQUIRE(lg.n == 4, "ledger %d", lg.n);

    struct rp_recording_limits lim = { max, 0, chunk, 0 };
    struct rp_recording *rec = rp_recording_open(dir, &lim, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    /* 160 KiB of old chunks fit in 200 KiB: nothing goes yet (notes.txt, 32 KiB,
     * and the symlink's target would push it over if they were counted). */
    CHECK(ledger_gone(&lg, dir) == 0, "nothing deleted at open");
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    CHECK(st.dir_bytes == scan(dir).finished_bytes, "dir_bytes %" PRIu64 " counts the "
          "four chunks only, not %" PRIu64, st.dir_bytes, scan(dir).finished_bytes);

    int rotations = 0, first_deletion = -1;
    uint64_t finished = 0;
    for (int i = 0; i < 150; i++) {
        put_data(rp_recording_writer(rec), PER_FLUSH, 2);
        rp_recording_flush(rec, NULL);
        rp_recording_stats(rec, &st);
        if (st.chunks_finished == finished)
            continue;
        finished = st.chunks_finished;
        rotations++;
        ledger_sync(&lg, dir);
        struct dir_info di = scan(dir);
        CHECK(di.finished_bytes <= max, "after rotation %d: %" PRIu64 " finished bytes",
              rotations, di.finished_bytes);
        CHECK(di.finished_bytes + di.part_bytes <= max + chunk + SEG_SLACK,
              "with the open chunk: %" PRIu64, di.finished_bytes + di.part_bytes);
        CHECK(st.dir_bytes == di.finished_bytes, "dir_bytes %" PRIu64 " vs %" PRIu64,
              st.dir_bytes, di.finished_bytes);
        int gone = ledger_gone(&lg, dir);
        CHECK((uint64_t)gone == st.chunks_deleted, "%d gone, %" PRIu64 " deleted", gone,
              st.chunks_deleted);
        if (gone && first_deletion < 0) {
            first_deletion = rotations;
            /* the other pid's oldest went first */
            fmt(path, sizeof path, "%s/%s", dir, lg.names[0]);
            CHECK(!exists(path) && strstr(lg.names[0], "-4194000-000000"),
                  "first deleted: %s", lg.names[0]);
        }
    }
    rp_recording_close(rec);
    CHECK(rotations >= 8, "rotations %d", rotations);
    CHECK(first_deletion == 1, "the first rotation went over the limit: %d",
          first_deletion);
    for (int i = 0; i < 4; i++) {
        fmt(path, sizeof path, "%s/%s", dir, lg.names[i]);
        CHECK(!exists(path), "other pid's old chunk %s deleted", lg.names[i]);
    }
    CHECK(strstr(lg.names[2], "-999999") && strstr(lg.names[3], "-1000000"),
          "seq order in the ledger");
    check_foreign(dir, target);
}

static void test_retention_by_age(void)
{
    char dir[PATH_MAX], err[256], target[PATH_MAX], path[PATH_MAX];
    sub(dir, sizeof dir, "retage");
    MUST(mkdir(dir, 0700) == 0, "mkdir");
    add_foreign(dir, target, sizeof target);

    uint64_t now = now_wall_s();
    long other = 4194002;
    craft(dir, other, now - 10 * DAY, 0, 100, 0);          /* old: goes */
    craft(dir, other, now - 3 * DAY - 60, 1, 100, 0);      /* old: goes */
    craft(dir, other, now - 1 * DAY, 2, 100, 0);           /* recent: stays */
    craft(dir, other, now + 1 * DAY, 3, 100, 0);           /* clock skew: stays */
    craft(dir, dead_pid(), now - 10 * DAY, 0, 100, 1);     /* orphan: recovered, old */
    long parent = (long)getppid();
    craft(dir, parent, now - 10 * DAY, 0, 8 * KiB, 1);     /* live writer's: untouched */

    struct rp_recording_limits lim = { 0, 3 * DAY * NS, 0, 0 };
    struct rp_recording *rec = rp_recording_open(dir, &lim, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_deleted == 3, "deleted %" PRIu64 " at open", st.chunks_deleted);
    CHECK(st.chunks_recovered == 1, "recovered %" PRIu64, st.chunks_recovered);
    craft_path(path, sizeof path, dir, other, now - 10 * DAY, 0, ".rpc");
    CHECK(!exists(path), "10 days old: deleted");
    craft_path(path, sizeof path, dir, other, now - 3 * DAY - 60, 1, ".rpc");
    CHECK(!exists(path), "3 days and a minute: deleted");
    craft_path(path, sizeof path, dir, other, now - 1 * DAY, 2, ".rpc");
    CHECK(exists(path), "1 day old: kept");
    craft_path(path, sizeof path, dir, other, now + 1 * DAY, 3, ".rpc");
    CHECK(exists(path), "future: kept");
    struct dir_info di = scan(dir);
    CHECK(di.finished == 2 && di.parts == 1, "two left and the live .part");
    craft_path(path, sizeof path, dir, parent, now - 10 * DAY, 0, ".rpc.part");
    CHECK(exists(path), "a live writer's old .part is not retention's to delete");
    CHECK(st.dir_bytes == di.finished_bytes, "dir_bytes %" PRIu64 " counts finished "
          "chunks only (%" PRIu64 ")", st.dir_bytes, di.finished_bytes);

    /* An old chunk that appears while the recording runs goes at the next rotation,
     * not before; our own fresh chunk stays. */
    craft(dir, other, now - 4 * DAY, 4, 100, 0);
    put_data(rp_recording_writer(rec), 100, 1);
    CHECK(rp_recording_flush(rec, NULL) == 0, "flush");
    craft_path(path, sizeof path, dir, other, now - 4 * DAY, 4, ".rpc");
    CHECK(exists(path), "no retention pass without a rotation");
    char mine[PATH_MAX];
    CHECK(rp_recording_rotate(rec, mine, sizeof mine) == 0, "rotate");
    CHECK(!exists(path), "4 days old: deleted at rotation");
    CHECK(exists(mine), "ours kept: %s", mine);
    CHECK(rp_recording_enforce(rec) == 0, "nothing more to delete");
    craft(dir, other, now - 5 * DAY, 5, 100, 0);
    CHECK(rp_recording_enforce(rec) == 1, "enforce deletes the newcomer");
    rp_recording_close(rec);
    check_foreign(dir, target);
    craft_path(path, sizeof path, dir, parent, now - 10 * DAY, 0, ".rpc.part");
    CHECK(exists(path), "live .part still there after close");
    unlink(path);
}

/* One chunk larger than max_size: the chunk rotate just returned survives until the
 * next rotation, and the older one does not. */
static void test_retention_keeps_newest(void)
{
    char dir[PATH_MAX], err[256], p1[PATH_MAX], p2[PATH_MAX];
    sub(dir, sizeof dir, "newest");
    struct rp_recording_limits lim = { 1 * KiB, 0, 0, 0 };
    struct rp_recording *rec = rp_recording_open(dir, &lim, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    put_data(rp_recording_writer(rec), 8 * KiB, 1);
    CHECK(rp_recording_rotate(rec, p1, sizeof p1) == 0 && exists(p1), "first kept");
    put_data(rp_recording_writer(rec), 8 * KiB, 1);
    CHECK(rp_recording_rotate(rec, p2, sizeof p2) == 0 && exists(p2), "second kept");
    CHECK(!exists(p1), "first deleted once a newer one is finished");
    rp_recording_close(rec);
}

/* ---------------------------------------------------------------- orphans -- */

struct holder {
    int ready[2], release[2];
    char path[PATH_MAX];
};

/* A live writer in another process: it holds the lock on its .part, as a running
 * recording does, until told to go. */
static void hold_part(void *arg)
{
    struct holder *h = arg;
    int fd = open(h->path, O_RDONLY);
    char c = 0;
    if (fd < 0 || flock(fd, LOCK_EX) != 0)
        _exit(2);
    (void)!write(h->ready[1], &c, 1);
    (void)!read(h->release[0], &c, 1);
    _exit(0);
}

static void test_orphans(void)
{
    char dir[PATH_MAX], err[256], path[PATH_MAX];
    sub(dir, sizeof dir, "orphans");
    MUST(mkdir(dir, 0700) == 0, "mkdir");
    uint64_t now = now_wall_s() - 60;
    long dead = dead_pid(), dead2 = dead_pid(), parent = (long)getppid();
    long self = (long)getpid();

    craft(dir, dead, now, 0, 2000, 1);     /* writer killed: recover */
    craft(dir, parent, now, 0, 2000, 1);   /* live pid, not ours: leave */
    craft(dir, self, now, 7, 2000, 1);     /* our pid, unlocked: an earlier us */
    craft(dir, dead2, now, 0, 2000, 1);    /* pid looks dead, but a writer holds it */

    struct holder h;
    MUST(pipe(h.ready) == 0 && pipe(h.release) == 0, "pipes");
    craft_path(h.path, sizeof h.path, dir, dead2, now, 0, ".rpc.part");
    fflush(NULL);
    pid_t child = fork();
    REQUIRE(child >= 0, "fork");
    if (child == 0)
        hold_part(&h);
    char c;
    MUST(read(h.ready[0], &c, 1) == 1, "holder ready");

    struct rp_recording *rec = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_recovered == 2, "recovered %" PRIu64, st.chunks_recovered);
    craft_path(path, sizeof path, dir, dead, now, 0, ".rpc");
    int clean = 1;
    CHECK(read_chunk(path, &clean, NULL) == 3 && clean == 0,
          "dead writer's chunk recovered, readable, not cleanly closed");
    craft_path(path, sizeof path, dir, self, now, 7, ".rpc");
    CHECK(exists(path), "our pid's leftover recovered");
    craft_path(path, sizeof path, dir, parent, now, 0, ".rpc.part");
    CHECK(exists(path), "live pid's .part left alone");
    CHECK(exists(h.path), "locked .part left alone");

    /* A second recording of this process in the same directory must not take the
     * first one's open chunk for an earlier incarnation's. */
    put_data(rp_recording_writer(rec), 100, 1);
    struct rp_recording *rec2 = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    REQUIRE(rec2, "open 2: %s", err);
    rp_recording_stats(rec2, &st);
    CHECK(st.chunks_recovered == 0, "second open recovered %" PRIu64, st.chunks_recovered);
    char done[PATH_MAX];
    CHECK(rp_recording_rotate(rec, done, sizeof done) == 0, "first still renames");
    CHECK(read_chunk(done, &clean, NULL) == 1 && clean == 1, "and its chunk is whole");
    rp_recording_close(rec2);

    /* The holder goes away: the next pass recovers its file. */
    MUST(write(h.release[1], &c, 1) == 1, "release");
    int status;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "holder status %d", status);
    CHECK(rp_recording_enforce(rec) == 0, "enforce");
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_recovered == 3, "recovered %" PRIu64, st.chunks_recovered);
    CHECK(!exists(h.path), "released .part recovered");
    craft_path(path, sizeof path, dir, parent, now, 0, ".rpc.part");
    CHECK(exists(path), "live pid's .part still left alone");
    rp_recording_close(rec);
    unlink(path);
}

/* Orphans with no header are deleted, on positive evidence only: shorter than the
 * fixed header part, or cut short of their own header length. An orphan whose
 * header this reader cannot use (a newer major, a damaged checksum, foreign bytes)
 * may hold samples: it is recovered, and left for the reader to report. */
static void patch(const char *path, off_t off, uint8_t byte)
{
    int fd = open(path, O_WRONLY);
    MUST(fd >= 0 && pwrite(fd, &byte, 1, off) == 1, "patch %s", path);
    close(fd);
}

static void test_headless_orphans(void)
{
    char dir[PATH_MAX], err[256], path[PATH_MAX];
    sub(dir, sizeof dir, "headless");
    MUST(mkdir(dir, 0700) == 0, "mkdir");
    uint64_t now = now_wall_s() - 60;
    long dead = dead_pid();
    enum { EMPTY, SHORT, CUT, MAJOR, CHECKSUM, FOREIGN, NCASES };
    static const int kept[NCASES] = {0, 0, 0, 1, 1, 1};

    for (uint32_t seq = 0; seq < NCASES; seq++)
        craft(dir, dead, now, seq, 100, 1);
    craft_path(path, sizeof path, dir, dead, now, EMPTY, ".rpc.part");
    MUST(truncate(path, 0) == 0, "truncate");
    craft_path(path, sizeof path, dir, dead, now, SHORT, ".rpc.part");
    MUST(truncate(path, RP_FILE_HEADER_FIXED - 1) == 0, "truncate");
    craft_path(path, sizeof path, dir, dead, now, CUT, ".rpc.part");
    uint8_t fixed[RP_FILE_HEADER_FIXED];
    int fd = open(path, O_RDONLY);
    MUST(fd >= 0 && pread(fd, fixed, sizeof fixed, 0) == (ssize_t)sizeof fixed, "read");
    close(fd);
    uint32_t hlen = (uint32_t)fixed[12] | (uint32_t)fixed[13] << 8 |
                    (uint32_t)fixed[14] << 16 | (uint32_t)fixed[15] << 24;
    MUST(hlen > RP_FILE_HEADER_FIXED + 1, "header length %u", hlen);
    MUST(truncate(path, hlen - 1) == 0, "truncate");
    craft_path(path, sizeof path, dir, dead, now, MAJOR, ".rpc.part");
    patch(path, 8, RP_FORMAT_MAJOR + 1);
    craft_path(path, sizeof path, dir, dead, now, CHECKSUM, ".rpc.part");
    patch(path, RP_FILE_HEADER_FIXED + 1, 'X');
    craft_path(path, sizeof path, dir, dead, now, FOREIGN, ".rpc.part");
    patch(path, 0, 'x');

    struct rp_recording *rec = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_discarded == 3 && st.chunks_recovered == 3,
          "discarded %" PRIu64 ", recovered %" PRIu64 " (want 3 and 3)",
          st.chunks_discarded, st.chunks_recovered);
    for (uint32_t seq = 0; seq < NCASES; seq++) {
        craft_path(path, sizeof path, dir, dead, now, seq, ".rpc");
        CHECK(exists(path) == kept[seq], "orphan %u: %s", seq,
              kept[seq] ? "deleted, but it may hold samples" : "headless, but kept");
        if (kept[seq])
            CHECK(read_chunk(path, NULL, NULL) == -1, "orphan %u: the reader opens it", seq);
        craft_path(path, sizeof path, dir, dead, now, seq, ".rpc.part");
        CHECK(!exists(path), "orphan %u left as .part", seq);
    }
    rp_recording_close(rec);
}

/* A name already taken (an earlier process with our pid, in the same second) moves
 * the chunk to the next seq; a directory deleted under a running recording is made
 * again. Neither is a failure. */
static void test_taken_name_and_lost_dir(void)
{
    char dir[PATH_MAX], err[256];
    sub(dir, sizeof dir, "taken");
    struct rp_recording *rec = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);
    uint64_t now = now_wall_s();
    for (uint64_t t = now - 1; t <= now + 3; t++)   /* seq 0 of the next few seconds */
        craft(dir, (long)getpid(), t, 0, 10, 1);
    struct rp_chunk_writer *w = rp_recording_writer(rec);
    CHECK(w != NULL, "writer despite the taken name");
    long pid;
    uint64_t t;
    uint32_t seq = 99;
    int part;
    const char *slash = w ? strrchr(rp_chunk_writer_path(w), '/') : NULL;
    CHECK(slash && rp_recording_parse_name(slash + 1, &pid, &t, &seq, &part) == 0 &&
          seq == 1 && part == 1, "moved to seq 1: %u", seq);
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_failed == 0 && st.chunks_opened == 1, "failed %" PRIu64,
          st.chunks_failed);
    char path[PATH_MAX];
    CHECK(rp_recording_rotate(rec, path, sizeof path) == 0, "rotate");
    CHECK(read_chunk(path, NULL, NULL) == 0, "our chunk, not a blocker (3 samples)");

    /* The blockers were unlocked leftovers of our pid: that rotation recovered them. */
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_recovered == 5, "recovered %" PRIu64, st.chunks_recovered);

    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    CHECK(!exists(dir), "directory gone");
    CHECK(rp_recording_writer(rec) != NULL, "directory made again");
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_failed == 0, "failed %" PRIu64, st.chunks_failed);
    rp_recording_close(rec);
    CHECK(scan(dir).finished == 1, "and the chunk finished in it");
}

/* ----------------------------------------------------------------- errors -- */

static void expect_open_error(const char *dir, int want_errno, const char *what)
{
    char err[512] = "";
    errno = 0;
    struct rp_recording *rec = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    int e = errno;
    CHECK(!rec, "%s: opened", what);
    CHECK(e == want_errno, "%s: errno %d (%s), want %d", what, e, strerror(e), want_errno);
    CHECK(strstr(err, dir) && strstr(err, strerror(want_errno)) && !strchr(err, '\n'),
          "%s: message '%s'", what, err);
    rp_recording_close(rec);
}

static void unprivileged_opens(void *arg)
{
    const char *ro = arg;
    char path[PATH_MAX];
    if (geteuid() == 0)
        MUST(setgid(65534) == 0 && setuid(65534) == 0, "drop to nobody");
    expect_open_error(ro, EACCES, "read-only directory");
    fmt(path, sizeof path, "%s/a/b", ro);
    expect_open_error(path, EACCES, "cannot create under a read-only directory");
}

static void test_errors(void)
{
    char file[PATH_MAX], path[PATH_MAX], ro[PATH_MAX];
    sub(file, sizeof file, "a-file");
    FILE *f = fopen(file, "w");
    REQUIRE(f, "a-file");
    fclose(f);
    expect_open_error(file, ENOTDIR, "directory is a file");
    fmt(path, sizeof path, "%s/sub/dir", file);
    expect_open_error(path, ENOTDIR, "directory under a file");
    expect_open_error("", EINVAL, "empty");

    /* New directories are private, parents too; trailing slashes are fine. */
    char deep[PATH_MAX], err[256];
    struct stat sb;
    sub(deep, sizeof deep, "p1/p2/p3//");
    struct rp_recording *rec = rp_recording_open(deep, NULL, NULL, 0, err, sizeof err);
    CHECK(rec, "deep open: %s", err);
    rp_recording_close(rec);
    const char *parts[] = { "p1", "p1/p2", "p1/p2/p3" };
    for (int i = 0; i < 3; i++) {
        sub(path, sizeof path, parts[i]);
        CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0700, "%s mode %o",
              parts[i], sb.st_mode & 07777);
    }

    sub(ro, sizeof ro, "ro");
    MUST(mkdir(ro, 0555) == 0 && chmod(ro, 0555) == 0 && chmod(base, 0755) == 0,
            "ro dir");
    int st = in_child(unprivileged_opens, ro);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unprivileged child status %d", st);
    chmod(base, 0700);
}

/* -------------------------------------------------------------- disk full -- */

static void set_fsize(rlim_t soft)
{
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = soft;
    MUST(setrlimit(RLIMIT_FSIZE, &rl) == 0, "RLIMIT_FSIZE %llu",
            (unsigned long long)soft);
}

static void disk_full(void *arg)
{
    const char *dir = arg;
    char err[256];
    struct rp_recording_stats st;
    signal(SIGXFSZ, SIG_IGN);   /* writes past the limit fail with EFBIG instead */

    struct rp_recording_limits lim = { 0, 0, 1024 * KiB, 0 };
    struct rp_recording *rec = rp_recording_open(dir, &lim, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open: %s", err);

    /* Files may grow to 48 KiB: the chunk fills, then its segments fail. */
    set_fsize(48 * KiB);
    int failed_flushes = 0;
    for (int i = 0; i < 30; i++) {
        put_data(rp_recording_writer(rec), PER_FLUSH, 2);
        failed_flushes += rp_recording_flush(rec, NULL) != 0;
    }
    rp_recording_stats(rec, &st);
    CHECK(failed_flushes > 0, "flushes failed past the limit");
    CHECK(st.segments_failed >= (uint64_t)failed_flushes, "segments_failed %" PRIu64
          " for %d failed flushes", st.segments_failed, failed_flushes);
    CHECK(st.last_errno == EFBIG, "last_errno %d", st.last_errno);

    /* No room even for a header: chunks cannot be created, and each call retries. */
    uint64_t seg_failed = st.segments_failed;
    rp_recording_rotate(rec, NULL, 0);
    set_fsize(16);
    rp_recording_stats(rec, &st);
    CHECK(st.segments_failed >= seg_failed, "lost segments stay counted after rotation: "
          "%" PRIu64 " < %" PRIu64, st.segments_failed, seg_failed);
    CHECK(rp_recording_writer(rec) == NULL, "no writer without room");
    CHECK(rp_recording_writer(rec) == NULL, "still none");
    rp_recording_stats(rec, &st);
    CHECK(st.chunks_failed == 2, "chunks_failed %" PRIu64, st.chunks_failed);
    CHECK(st.last_errno == EFBIG, "last_errno %d (%s)", st.last_errno,
          strerror(st.last_errno));
    CHECK(rp_recording_flush(rec, NULL) == 0, "flush without a chunk is harmless");
    CHECK(scan(dir).parts == 0, "failed attempts leave no .part behind");

    /* Space returns: writing resumes with the next call. */
    set_fsize(RLIM_INFINITY);
    struct rp_chunk_writer *w = rp_recording_writer(rec);
    CHECK(w != NULL, "writer again");
    if (w)
        put_data(w, 100, 5);
    CHECK(rp_recording_close(rec) == 0, "close");

    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0, readable = 0, clean_files = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        int clean = 0;
        fmt(path, sizeof path, "%s/%s", dir, de->d_name);
        files++;
        long n = read_chunk(path, &clean, NULL);
        readable += n > 0;
        clean_files += clean;
        CHECK(file_size(path) <= (off_t)(48 * KiB), "%s within the limit", path);
    }
    closedir(d);
    /* The first chunk's last segment may not have fitted under the limit. */
    CHECK(files == 2 && readable == 2, "%d files, %d readable", files, readable);
    CHECK(clean_files >= 1, "the chunk written after space returned closed cleanly");
}

static void test_disk_full(void)
{
    char dir[PATH_MAX];
    sub(dir, sizeof dir, "full");
    int st = in_child(disk_full, dir);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "disk-full child status %d", st);
}

int main(void)
{
    fmt(base, sizeof base, "/tmp/rp-recording-XXXXXX");
    MUST(mkdtemp(base), "mkdtemp");

    test_names();
    test_rotation_by_size();
    test_rotation_by_duration();
    test_rotate_path();
    test_given_id();
    test_set_meta();
    test_retention_by_size();
    test_retention_by_age();
    test_retention_keeps_newest();
    test_orphans();
    test_headless_orphans();
    test_taken_name_and_lost_dir();
    test_errors();
    test_disk_full();

    if (!check_failed)
        nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    else
        fprintf(stderr, "left %s for inspection\n", base);
    return check_exit("test_recording");
}
