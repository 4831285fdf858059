/*
 * tests/test_dir_trust.c — the trusted walk of a directory path
 * (rp_trust_dir_open, ringprof/trust.h) and the recording directory that holds
 * its result (ringprof/recording.h), against hostile layouts.
 *
 * Each layout is built as root in a fresh directory under /tmp, with the links
 * and directories that another user would own chowned to uid 65534, the way a
 * local attacker would leave them for root's JVM: a symlink of theirs, a
 * directory of theirs on the way, a symlink in a sticky directory that every user
 * may write, a dir= whose missing components would make root create directories
 * under their tree, and a recording directory removed or moved after the open
 * with a link planted at its path. What must hold is looked at on disk: nothing
 * created where the walk refused, no chunk written outside the directory that was
 * checked, no file of another recording deleted. The walk's own rules (".." and
 * relative paths, link targets, the link bound, the refusal messages) are checked
 * directly. Without root, the layouts that need another user's files are skipped
 * and the test exits 77 after the rest.
 */
#include "ringprof/recording.h"
#include "ringprof/trust.h"
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
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOBODY 65534
#define NS 1000000000ull

/* check.h's REQUIRE evaluates its condition twice; MUST is for conditions with side
 * effects (mkdir, symlink, ...). */
#define MUST(cond, ...)                                                          \
    do {                                                                         \
        if (!(cond))                                                             \
            REQUIRE(0 && #cond, __VA_ARGS__);                                     \
    } while (0)

static char base[64];
static int as_root;

/* ---------------------------------------------------------------- helpers -- */

/* base/name, formatted; the test stops rather than cut a path. */
__attribute__((format(printf, 1, 2)))
static const char *at(const char *f, ...)
{
    static char bufs[8][PATH_MAX];
    static int next;
    char rel[PATH_MAX];
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(rel, sizeof rel, f, ap);
    va_end(ap);
    REQUIRE(n >= 0 && (size_t)n < sizeof rel, "does not fit: %s", f);
    char *out = bufs[next++ % 8];
    n = snprintf(out, PATH_MAX, "%s/%s", base, rel);
    REQUIRE(n >= 0 && n < PATH_MAX, "does not fit: %s", rel);
    return out;
}

/* A directory or a symlink of `uid`'s (only root can give one to another uid). */
static void dir_of(const char *path, mode_t mode, uid_t uid)
{
    MUST(mkdir(path, mode) == 0 && chmod(path, mode) == 0 &&
         (uid == geteuid() || chown(path, uid, uid) == 0), "mkdir %s", path);
}

static void link_of(const char *target, const char *path, uid_t uid)
{
    MUST(symlink(target, path) == 0 && (uid == geteuid() || lchown(path, uid, uid) == 0),
         "symlink %s", path);
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb, (void)flag, (void)f;
    return remove(path);
}

/* Files in dir (not "." or ".."), -1 if it cannot be listed. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    return n;
}

/* Does `fd` hold the directory at `path`? */
static int same_dir(int fd, const char *path)
{
    struct stat a, b;
    return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

struct walked {
    int fd, err;
    char resolved[PATH_MAX];
    char why[2 * PATH_MAX];
};

static struct walked walk(const char *path, unsigned flags)
{
    struct walked w = {0};
    errno = 0;
    w.fd = rp_trust_dir_open(path, geteuid(), flags, 0700, w.resolved, w.why, sizeof w.why);
    w.err = errno;
    return w;
}

static void done(struct walked *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

/* The walk of `path` is refused with errno `e` and a why that holds `want`. */
static void refused(const char *path, unsigned flags, int e, const char *want)
{
    struct walked w = walk(path, flags);
    CHECK(w.fd < 0, "%s: accepted (resolved %s)", path, w.resolved);
    CHECK(w.err == e, "%s: errno %d (%s), want %s", path, w.err, strerror(w.err),
          strerror(e));
    CHECK(strstr(w.why, want) != NULL, "%s: why '%s', want '%s'", path, w.why, want);
    done(&w);
}

/* Make a finished chunk in dir, as another recording of root's wrote it on `day`
 * (seconds): retention by age would delete it if it ever listed dir. */
static void old_chunk(const char *dir, uint64_t day, uint32_t seq)
{
    char name[64], err[256];
    MUST(rp_recording_chunk_name(name, sizeof name, 99999, day * NS, seq) == 0, "name");
    const char *path = at("%s/%s.rpc", dir + strlen(base) + 1, name);
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, NULL, 0, err, sizeof err);
    REQUIRE(w, "chunk %s: %s", path, err);
    MUST(rp_chunk_close(w) == 0, "close %s", path);
}

/* rp_recording_open(dir) is refused with EPERM and a message holding `want`. */
static void open_refused(const char *dir, const char *want)
{
    char err[2 * PATH_MAX] = "";
    errno = 0;
    struct rp_recording *rec = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    int e = errno;
    CHECK(!rec, "%s: opened (into %s)", dir, rec ? rp_recording_dir(rec) : "");
    CHECK(e == EPERM, "%s: errno %d (%s)", dir, e, strerror(e));
    CHECK(strstr(err, want) && !strchr(err, '\n'), "%s: message '%s', want '%s'", dir,
          err, want);
    rp_recording_close(rec);
}

/* ------------------------------------------------------- the walk's rules -- */

static void test_walk_rules(void)
{
    dir_of(at("a"), 0700, geteuid());
    dir_of(at("a/b"), 0700, geteuid());

    /* As given, through "." and "..", relative to the working directory. */
    const char *as_given[] = { "a/b", "a/./b/", "a/b/../b", "a/b/../../a/b" };
    for (size_t i = 0; i < sizeof as_given / sizeof as_given[0]; i++) {
        struct walked w = walk(at("%s", as_given[i]), 0);
        CHECK(same_dir(w.fd, at("a/b")) && strcmp(w.resolved, at("a/b")) == 0,
              "%s: fd %d resolved %s (%s)", as_given[i], w.fd, w.resolved, w.why);
        done(&w);
    }
    char cwd[PATH_MAX];
    MUST(getcwd(cwd, sizeof cwd) && chdir(base) == 0, "chdir");
    struct walked w = walk("a/b", 0);
    CHECK(same_dir(w.fd, at("a/b")) && strcmp(w.resolved, at("a/b")) == 0,
          "relative: resolved %s (%s)", w.resolved, w.why);
    done(&w);
    MUST(chdir(cwd) == 0, "chdir back");
    /* ".." after a missing name does not make the name exist. */
    refused(at("x/../a/b"), 0, ENOENT, "does not exist");

    /* Symlinks of ours: relative and absolute targets, a chain, "..". */
    link_of("a/b", at("rel"), geteuid());
    link_of(at("a"), at("abs"), geteuid());
    link_of("../../a", at("a/b/up"), geteuid());
    const char *linked[] = { "rel", "abs/b", "a/b/up/b", "rel/up/b/../b" };
    for (size_t i = 0; i < sizeof linked / sizeof linked[0]; i++) {
        w = walk(at("%s", linked[i]), 0);
        CHECK(same_dir(w.fd, at("a/b")) && strcmp(w.resolved, at("a/b")) == 0,
              "%s: fd %d resolved %s (%s)", linked[i], w.fd, w.resolved, w.why);
        done(&w);
    }

    /* A chain of exactly RP_TRUST_MAX_LINKS links is followed; one more is ELOOP,
     * and so is a loop. */
    dir_of(at("chain"), 0700, geteuid());
    for (int i = 0; i <= RP_TRUST_MAX_LINKS; i++) {
        char target[32];
        snprintf(target, sizeof target, i ? "l%d" : "../a", i - 1);
        link_of(target, at("chain/l%d", i), geteuid());
    }
    w = walk(at("chain/l%d", RP_TRUST_MAX_LINKS - 1), 0);
    CHECK(same_dir(w.fd, at("a")), "%d links: %s", RP_TRUST_MAX_LINKS, w.why);
    done(&w);
    refused(at("chain/l%d", RP_TRUST_MAX_LINKS), 0, ELOOP, "more than 40 symlinks");
    link_of("loop", at("loop"), geteuid());
    refused(at("loop"), RP_TRUST_CREATE, ELOOP, "symlinks on the way to");

    /* Not a directory; missing without RP_TRUST_CREATE; too long. */
    FILE *f = fopen(at("file"), "w");
    REQUIRE(f, "file");
    fclose(f);
    refused(at("file"), 0, ENOTDIR, "/file is a regular file");
    refused(at("file/sub"), RP_TRUST_CREATE, ENOTDIR, "/file is a regular file");
    refused(at("missing/sub"), 0, ENOENT, "/missing does not exist");
    CHECK(!exists(at("missing")), "a walk without RP_TRUST_CREATE made a directory");
    char longname[NAME_MAX + 8];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    refused(at("%s", longname), RP_TRUST_CREATE, ENAMETOOLONG, "is longer than");

    /* RP_TRUST_CREATE makes each missing directory, 0700, through our own link. */
    w = walk(at("rel/new/sub"), RP_TRUST_CREATE);
    struct stat sb;
    CHECK(same_dir(w.fd, at("a/b/new/sub")) && strcmp(w.resolved, at("a/b/new/sub")) == 0,
          "created: %s (%s)", w.resolved, w.why);
    CHECK(stat(at("a/b/new"), &sb) == 0 && (sb.st_mode & 07777) == 0700, "mode %o",
          sb.st_mode & 07777);
    done(&w);

    /* Open to others: refused unless sticky, and sticky only with SHARED. */
    dir_of(at("open"), 0777, geteuid());
    dir_of(at("sticky"), 01777, geteuid());
    refused(at("open"), RP_TRUST_SHARED, EPERM, "/open may be written by every user (mode 0777");
    refused(at("open/sub"), RP_TRUST_CREATE, EPERM, "/open may be written by every user");
    CHECK(!exists(at("open/sub")), "created under a directory every user may write");
    refused(at("sticky"), 0, EPERM, "/sticky may be written by every user (mode 1777");
    w = walk(at("sticky"), RP_TRUST_SHARED);
    CHECK(same_dir(w.fd, at("sticky")), "sticky with SHARED: %s", w.why);
    done(&w);
    w = walk(at("sticky/mine"), RP_TRUST_CREATE);
    CHECK(same_dir(w.fd, at("sticky/mine")), "under a sticky directory: %s", w.why);
    done(&w);
    /* The same through rp_trust_path, whose answer the control socket uses. */
    char why[PATH_MAX];
    CHECK(rp_trust_path(at("sticky"), geteuid(), 0, NULL, why, sizeof why) == 1 &&
          rp_trust_path(at("sticky"), geteuid(), 1, NULL, why, sizeof why) == 0 &&
          rp_trust_path(at("open"), geteuid(), 1, NULL, why, sizeof why) == -1,
          "rp_trust_path: %s", why);
}

/* ---------------------------------------------------- another user's files -- */

static void test_walk_hostile(void)
{
    dir_of(at("rootonly"), 0700, 0);
    dir_of(at("nbhome"), 0755, NOBODY);
    dir_of(at("theirs"), 0777, NOBODY);
    dir_of(at("tmp"), 01777, 0);
    dir_of(at("gw"), 0775, 0);

    /* nobody's link to a root-only directory, in nobody's directory and in a sticky
     * one: its owner can point it anywhere at any time. */
    link_of(at("rootonly"), at("nbhome/rec"), NOBODY);
    link_of(at("rootonly"), at("tmp/rec"), NOBODY);
    refused(at("nbhome/rec"), 0, EPERM, "/nbhome belongs to uid 65534 (mode 0755), not to root");
    refused(at("tmp/rec"), RP_TRUST_CREATE, EPERM,
            "/tmp/rec is a symlink that belongs to uid 65534, not to root");
    refused(at("tmp/rec/new/sub"), RP_TRUST_CREATE, EPERM, "/tmp/rec is a symlink");
    CHECK(entries(at("rootonly")) == 0, "created in the root-only directory");

    /* Root's own link in the sticky directory is root's to change: followed. */
    link_of(at("rootonly"), at("tmp/mine"), 0);
    struct walked w = walk(at("tmp/mine"), 0);
    CHECK(same_dir(w.fd, at("rootonly")), "root's link in a sticky directory: %s", w.why);
    done(&w);
    /* ... but one that leads into nobody's tree stops there, before creating. */
    link_of(at("theirs"), at("tmp/into"), 0);
    refused(at("tmp/into/new/sub"), RP_TRUST_CREATE, EPERM,
            "/theirs belongs to uid 65534 (mode 0777), not to root");
    CHECK(entries(at("theirs")) == 0, "root created directories in nobody's directory");
    /* A link of root's in a directory its group may write: the group may swap it. */
    link_of(at("rootonly"), at("gw/rec"), 0);
    refused(at("gw/rec"), 0, EPERM, "/gw may be written by its group (mode 0775");
    /* For nobody, nobody's own link and directory are trusted, root's too. */
    char why[PATH_MAX];
    int fd = rp_trust_dir_open(at("nbhome/rec"), NOBODY, 0, 0, NULL, why, sizeof why);
    CHECK(fd >= 0, "nobody's own link for nobody: %s", why);
    if (fd >= 0)
        close(fd);
}

/* ------------------------------------------------ the recording directory -- */

/* dir= through nobody's links and directories: refused, and nothing created
 * anywhere. */
static void test_recording_refuses(void)
{
    dir_of(at("r-rootonly"), 0700, 0);
    dir_of(at("r-nbhome"), 0755, NOBODY);
    dir_of(at("r-theirs"), 0755, NOBODY);
    dir_of(at("r-tmp"), 01777, 0);
    link_of(at("r-rootonly"), at("r-nbhome/rec"), NOBODY);
    link_of(at("r-rootonly"), at("r-tmp/rec"), NOBODY);
    link_of(at("r-theirs"), at("r-tmp/mine"), 0);

    open_refused(at("r-nbhome/rec"), "r-nbhome belongs to uid 65534 (mode 0755), not to root");
    open_refused(at("r-nbhome/rec/new/sub"), "r-nbhome belongs to uid 65534");
    open_refused(at("r-tmp/rec"), "r-tmp/rec is a symlink that belongs to uid 65534");
    open_refused(at("r-tmp/rec/new/sub"), "r-tmp/rec is a symlink that belongs to uid 65534");
    CHECK(entries(at("r-rootonly")) == 0, "the recording created %d entries in the "
          "root-only directory", entries(at("r-rootonly")));
    /* Root's own link into nobody's tree: root must not make directories there. */
    open_refused(at("r-tmp/mine/new/sub"), "r-theirs belongs to uid 65534 (mode 0755)");
    CHECK(entries(at("r-theirs")) == 0, "the recording created %d entries in nobody's "
          "directory", entries(at("r-theirs")));

    /* A sticky dir= whose private subdirectory nobody planted as a link. */
    link_of(at("r-rootonly"), at("r-tmp/ringprof-0"), NOBODY);
    open_refused(at("r-tmp"), "its private subdirectory");
    CHECK(entries(at("r-rootonly")) == 0, "wrote through the planted subdirectory");
}

/* The recording directory is replaced by a link after the open: removed (the
 * recording makes it again, through the walk) or moved away (the recording keeps
 * the directory it holds). Either way no chunk is written into the directory the
 * link leads to, and retention deletes nothing there. */
static void replaced(const char *name, int remove_it, uid_t link_owner)
{
    const char *dir = at("%s", name), *victim = at("%s-victim", name);
    const char *moved = at("%s-moved", name);
    char err[2 * PATH_MAX];
    dir_of(victim, 0700, 0);
    uint64_t long_ago = (uint64_t)time(NULL) - 30 * 24 * 3600;
    old_chunk(victim, long_ago, 1);
    old_chunk(victim, long_ago, 2);

    struct rp_recording *rec = rp_recording_open(dir, NULL, NULL, 0, err, sizeof err);
    REQUIRE(rec, "open %s: %s", dir, err);
    CHECK(rp_recording_writer(rec) != NULL, "%s: first chunk", name);
    char path[PATH_MAX];
    CHECK(rp_recording_rotate(rec, path, sizeof path) == 0, "%s: rotate", name);
    CHECK(rp_recording_writer(rec) != NULL, "%s: second chunk", name);

    if (remove_it) {
        unlink(path);
        char part[PATH_MAX];
        snprintf(part, sizeof part, "%s", rp_chunk_writer_path(rp_recording_writer(rec)));
        unlink(part);
        MUST(rmdir(dir) == 0, "rmdir %s", dir);
    } else {
        MUST(rename(dir, moved) == 0, "move %s", dir);
    }
    link_of(victim, dir, link_owner);

    /* The open chunk's rotation, retention, the next chunk. */
    rp_recording_rotate(rec, NULL, 0);
    struct rp_chunk_writer *w = rp_recording_writer(rec);
    rp_recording_enforce(rec);
    struct rp_recording_stats st;
    rp_recording_stats(rec, &st);
    if (remove_it) {
        const char *why = rp_recording_dir_error(rec);
        const char *want = link_owner ? "is a symlink that belongs to uid 65534"
                                      : "its path now leads to";
        CHECK(w == NULL && st.chunks_failed >= 1 && st.last_errno == EPERM,
              "%s: a chunk was opened after the directory became a link (failed %" PRIu64
              ", errno %d)", name, st.chunks_failed, st.last_errno);
        CHECK(why && strstr(why, want), "%s: the reason is '%s', want '%s'", name,
              why ? why : "(none)", want);
    } else {
        CHECK(w != NULL && strcmp(rp_recording_dir(rec), dir) == 0, "%s: the moved "
              "directory is still written (dir %s)", name, rp_recording_dir(rec));
    }
    CHECK(rp_recording_close(rec) == 0, "%s: close", name);
    CHECK(entries(victim) == 2, "%s: the link's directory holds %d files, not its 2 "
          "chunks (retention deleted there, or chunks were written there)", name,
          entries(victim));
    if (!remove_it)
        CHECK(entries(moved) == 3, "%s: the moved directory holds %d chunks, not 3", name,
              entries(moved));
}

static void test_recording_replaced(void)
{
    replaced("gone-nobody", 1, NOBODY);
    replaced("gone-root", 1, 0);        /* trusted, but it leads elsewhere */
    replaced("moved-nobody", 0, NOBODY);
}

/* A removed directory is made again where it was, and the private subdirectory of
 * a sticky dir= too. */
static void test_recording_remade(void)
{
    char err[2 * PATH_MAX];
    dir_of(at("shared"), 01777, geteuid());
    struct rp_recording *rec = rp_recording_open(at("shared"), NULL, NULL, 0, err,
                                                 sizeof err);
    REQUIRE(rec, "open: %s", err);
    const char *sub = at("shared/ringprof-%u", (unsigned)geteuid());
    CHECK(rp_recording_in_subdir(rec) && strcmp(rp_recording_dir(rec), sub) == 0,
          "subdirectory %s", rp_recording_dir(rec));
    CHECK(rp_recording_writer(rec) != NULL, "first chunk");
    MUST(rp_recording_rotate(rec, NULL, 0) == 0, "rotate");
    MUST(nftw(sub, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 && !exists(sub), "rm -r %s",
         sub);
    CHECK(rp_recording_writer(rec) != NULL, "made again");
    struct stat sb;
    CHECK(stat(sub, &sb) == 0 && (sb.st_mode & 07777) == 0700 && sb.st_uid == geteuid(),
          "the private subdirectory is made again, 0700");
    CHECK(rp_recording_close(rec) == 0, "close");
    CHECK(entries(sub) == 1, "%d chunks in the new subdirectory", entries(sub));
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/rp-dirtrust-XXXXXX");
    MUST(mkdtemp(base), "mkdtemp");
    as_root = geteuid() == 0;

    test_walk_rules();
    test_recording_remade();
    if (as_root) {
        test_walk_hostile();
        test_recording_refuses();
        test_recording_replaced();
    }

    if (!check_failed)
        nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    else
        fprintf(stderr, "left %s for inspection\n", base);
    int rc = check_exit("test_dir_trust");
    if (rc == 0 && !as_root) {
        printf("not root: the layouts with another user's links and directories are "
               "skipped\n");
        return 77;
    }
    return rc;
}
