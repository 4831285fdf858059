/*
 * tools/commands/cmd_record.c — `ringprof record [OPTIONS] -- java ARGS...`.
 *
 * Runs a Java program under the agent and, when it exits, turns the recording into
 * the two things people look at first: a self-contained HTML flame graph and a
 * text profile (the call tree followed by the flat table). It is the quickest way
 * from "this program is slow" to a picture, and what the README's Quick start uses.
 *
 * The agent goes in as -agentpath right after the java executable (JVM options
 * must come before the main class or -jar). The child keeps the terminal: Ctrl-C
 * reaches the JVM, which shuts the agent down cleanly, and the conversion still
 * runs. The conversions are this same binary run again ("convert"), so record adds
 * no second implementation of anything. The exit status is the program's own,
 * or 1 where that is 0 but the program wrote no recording ("no JVM was profiled":
 * it was not a java launcher) or the recording could not be converted.
 *
 * The agent options are checked here with the agent's own parser before anything
 * runs, so a typo is one line and exit 2, not a JVM that refuses to start. DIR may
 * exist, but a recording already in it is refused (exit 2) unless --force, which
 * removes its chunk files first: convert reads every chunk in the directory, and an
 * earlier run's samples would silently merge into the new profile.
 *
 * record is often run as root in directories that other users can reach, so it
 * follows no path another user could change (docs/tool.md, "What record trusts"):
 *   - DIR is walked and held by descriptor (model/outfile.h: no other user's
 *     symlink on the way) and must belong to the caller or root and be writable by
 *     nobody else (ringprof/trust.h), or be made here (mode 0755);
 *   - DIR/recording must be a real directory, never a link, made here (0700) or
 *     trusted the same way, and is held too; --force removes only the regular
 *     chunk files in it, by name in the held descriptor;
 *   - the agent gets a fresh random recording id (its option recording=): record
 *     counts, and convert reads (--recording), only the chunks that carry it, and
 *     says in one line that it left any other out;
 *   - flamegraph.html, profile.txt and heatmap.html are temporaries in the held
 *     DIR renamed into place, written by the convert runs as their stdout; those
 *     run in the held DIR and read "recording" there, so they look up no path
 *     another user owns.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "commands.h"
#include "ctl_client.h"
#include "model/outfile.h"
#include "query.h"
#include "ringprof/options.h"
#include "ringprof/trust.h"
#include "usage.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof record [options] -- java [JVM options] MAIN-CLASS|-jar JAR [args]\n"
        "\n"
        "Run a Java program under the ringprof agent; at exit write\n"
        "  DIR/flamegraph.html  an interactive flame graph (open it in a browser)\n"
        "  DIR/profile.txt      the call tree and the flat method table\n"
        "  DIR/heatmap.html     every kind over time: select a window, see its flame\n"
        "                       graph and how it differs from another\n"
        "  DIR/recording/       the chunk files, for `ringprof convert` later\n"
        "\n"
        "  -o, --out DIR      where to write (default ringprof-record): a new\n"
        "                     directory, or one that only you (or root) can change\n"
        "  --force            replace the recording already in DIR/recording\n"
        "  --options OPTS     agent options, e.g. interval=1ms,engine=jvmti (see\n"
        "                     docs/options.md); dir= and recording= are record's\n"
        "  --agent PATH       the agent library (default: libringprof.so next to\n"
        "                     this ringprof, or $RINGPROF_AGENT)\n"
        "  --event KIND       what to convert: cpu (default), alloc, live, wall,\n"
        "                     lock, gc\n"
        "  --no-convert       only record\n");
}

/* What record holds: DIR and DIR/recording by descriptor, and the run's id. */
struct held {
    const char *dir;             /* -o DIR as given, for messages and the agent  */
    int dfd;                     /* DIR (O_PATH)                                 */
    int rfd;                     /* DIR/recording (O_RDONLY, for listing)        */
    char id[48];                 /* the recording id the agent is given          */
};

/* Run argv to completion, its stdout on out_fd and its working directory cwd_fd
 * when those are not -1. @return its exit status, 128+signal, or -1. */
static int run_wait(char **argv, int out_fd, int cwd_fd)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if ((out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0) ||
            (cwd_fd >= 0 && fchdir(cwd_fd) != 0))
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "ringprof record: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int self_exe(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* ringprof convert FORMAT of this run's chunks onto out_fd, in the held DIR.
 * @return convert's exit status. */
/* profile.txt's flat table: the methods that matter, so the file reads on a few
 * screens with the tree's default cutoff (a program's every method is
 * `convert --format flat`). */
#define RECORD_FLAT_TOP "50"

static int convert(const char *self, const struct held *h, const char *event,
                   const char *format, int out_fd)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)self;
    argv[n++] = "convert";
    argv[n++] = "--quiet";
    argv[n++] = "--recording";
    argv[n++] = (char *)h->id;
    /* the heatmap shows every kind; the other files the one asked */
    if (strcmp(format, "heatmap")) {
        argv[n++] = "--event";
        argv[n++] = (char *)event;
    }
    argv[n++] = "--format";
    argv[n++] = (char *)format;
    argv[n++] = "recording";
    if (!strcmp(format, "flat")) {
        argv[n++] = "--top";
        argv[n++] = RECORD_FLAT_TOP;
    }
    argv[n] = NULL;
    return run_wait(argv, out_fd, h->dfd);
}

/* DIR/NAME: the formats converted one after the other, a blank line between, into
 * a temporary put in place only if every one succeeded. @return 0, or convert's
 * status or 1 (printed). */
static int write_file(const char *self, const struct held *h, const char *event,
                      const char *name, const char *const *formats, int n)
{
    struct rp_outfile o;
    char why[512];
    int rc = rp_outfile_openat(&o, h->dfd, name, why, sizeof why) ? 1 : 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        if ((i && fputc('\n', o.f) == EOF) || fflush(o.f) != 0)
            rc = 1, snprintf(why, sizeof why, "%s", strerror(errno));
        else
            rc = convert(self, h, event, formats[i], fileno(o.f));
    }
    if (rc == 0)
        rc = rp_outfile_commit(&o, why, sizeof why) ? 1 : 0;
    else
        rp_outfile_discard(&o);
    if (rc == 1)
        fprintf(stderr, "ringprof record: %s/%s: %s\n", h->dir, name, why);
    return rc;
}

/* A listing of the held DIR/recording, from its start. @return NULL with errno. */
static DIR *list_recording(const struct held *h)
{
    int fd = fcntl(h->rfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    if (d)
        rewinddir(d);   /* the duplicate shares the held descriptor's offset */
    return d;
}

/* Count the chunk files (rp_is_chunk_name) in DIR/recording; with remove, unlink
 * them, regular files only (fstatat without following a link). @return how many
 * there were, -1 with errno, or -2 after printing which entry is no regular file
 * and was left. */
static int chunk_files(const struct held *h, int remove)
{
    DIR *d = list_recording(h);
    if (!d)
        return -1;
    int n = 0, err = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (!rp_is_chunk_name(e->d_name))
            continue;
        n++;
        if (!remove || err)
            continue;
        if (fstatat(h->rfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode)) {
            fprintf(stderr, "ringprof record: %s/recording/%s is not a regular file: not "
                            "removed (--force removes chunk files only); remove it "
                            "yourself\n", h->dir, e->d_name);
            err = -2;
        } else if (unlinkat(h->rfd, e->d_name, 0) != 0) {
            err = errno;
        }
    }
    closedir(d);
    if (err > 0)
        errno = err;
    return err ? (err < 0 ? -2 : -1) : n;
}

/* What the run left in DIR/recording: chunks of its recording id, and others. */
struct census {
    int own, other;
    char first[400];             /* the first other: "NAME (recording ID)"        */
};

/* Each chunk's header read through the held descriptor (/proc/self/fd/N/NAME). */
static void take_census(const struct held *h, struct census *c)
{
    memset(c, 0, sizeof *c);
    DIR *d = list_recording(h);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[320], other[128];
        if (!rp_is_chunk_name(e->d_name))
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", h->rfd, e->d_name);
        int mine = rp_chunk_in_recording(path, h->id, other, sizeof other);
        c->own += mine == 1;
        if (mine == 0 && !c->other++)
            snprintf(c->first, sizeof c->first, "%.250s (recording %.120s)", e->d_name,
                     other);
    }
    closedir(d);
}

static void print_option_line(void *arg, const char *line)
{
    fprintf(arg, "%s\n", line);
}

/* The user's agent options, checked with the agent's parser: @return 0, 2 with
 * one line on stderr, or 3 when they ask for the option table (printed). dir= and
 * recording= are record's own (DIR/recording, and the run's id). */
static int check_agent_options(const char *opts)
{
    struct rp_options o;
    char err[512];
    rp_options_defaults(&o);
    if (rp_options_parse(opts, &o, err, sizeof err) != 0) {
        fprintf(stderr, "ringprof record: --options: %s\n",
                strncmp(err, "ringprof: ", 10) == 0 ? err + 10 : err);
        return 2;
    }
    if (o.help) {
        rp_options_print_help(print_option_line, stdout);
        return 3;
    }
    if (o.dir[0]) {
        fprintf(stderr, "ringprof record: --options may not set dir=: the recording "
                        "goes to DIR/recording, with DIR given by -o DIR\n");
        return 2;
    }
    if (o.recording[0]) {
        fprintf(stderr, "ringprof record: --options may not set recording=: record "
                        "gives each run its own, to convert only the chunks its JVM "
                        "wrote\n");
        return 2;
    }
    return 0;
}

/* Hold DIR (made 0755 if missing): it must be one only the caller or root can
 * change. @return 0, 1 (cannot) or 2 (refused), printed. */
static int hold_dir(struct held *h)
{
    char why[600];
    struct stat st;
    h->dfd = rp_outdir_open(h->dir, 0755, why, sizeof why);
    if (h->dfd < 0) {
        fprintf(stderr, "ringprof record: -o %s: %s\n", h->dir, why);
        return 1;
    }
    if (fstat(h->dfd, &st) != 0 ||
        rp_trust_stat(&st, geteuid(), S_IFDIR, 0, why, sizeof why) != 0) {
        fprintf(stderr, "ringprof record: refusing -o %s: it %s; give a new directory, or "
                        "one that only you (or root) can change\n", h->dir, why);
        return 2;
    }
    return 0;
}

/* Hold DIR/recording (made 0700 if missing): a real directory, never a link, that
 * only the caller or root can change. @return 0, 1 or 2, printed. */
static int hold_recording(struct held *h)
{
    char why[300] = "";
    struct stat st;
    if ((mkdirat(h->dfd, "recording", 0700) != 0 && errno != EEXIST) ||
        fstatat(h->dfd, "recording", &st, AT_SYMLINK_NOFOLLOW) != 0) {
        fprintf(stderr, "ringprof record: %s/recording: %s\n", h->dir, strerror(errno));
        return 1;
    }
    if (S_ISLNK(st.st_mode))
        snprintf(why, sizeof why, "is a symlink (owner uid %u), and record never follows "
                 "one there", (unsigned)st.st_uid);
    else if ((h->rfd = openat(h->dfd, "recording",
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        snprintf(why, sizeof why, "cannot be opened: %s", strerror(errno));
    else if (fstat(h->rfd, &st) != 0)
        snprintf(why, sizeof why, "cannot be checked: %s", strerror(errno));
    else
        rp_trust_stat(&st, geteuid(), S_IFDIR, 0, why, sizeof why);
    if (!why[0])
        return 0;
    fprintf(stderr, "ringprof record: refusing %s/recording: it %s; remove it, or give "
                    "another -o DIR\n", h->dir, why);
    return 2;
}

/* Refuse to mix a new run into an earlier one (or, with force, remove the earlier
 * chunks). @return 0, 1 (cannot read or remove) or 2 (refused). */
static int claim_recording_dir(const struct held *h, int force)
{
    int n = chunk_files(h, 0);
    if (n > 0 && force)
        n = chunk_files(h, 1);
    if (n == -2)
        return 2;
    if (n < 0) {
        fprintf(stderr, "ringprof record: %s/recording: %s\n", h->dir, strerror(errno));
        return 1;
    }
    if (n > 0 && !force) {
        fprintf(stderr, "ringprof record: %s/recording already holds a recording (%d chunk "
                        "file%s); give another -o DIR, or --force to replace it\n",
                h->dir, n, n == 1 ? "" : "s");
        return 2;
    }
    return 0;
}

/* DIR and DIR/recording, held and checked, and a fresh id. @return 0, 1 or 2. */
static int hold(struct held *h, int force)
{
    unsigned char r[16];
    int rc = hold_dir(h);
    if (rc == 0)
        rc = hold_recording(h);
    if (rc == 0)
        rc = claim_recording_dir(h, force);
    if (rc != 0)
        return rc;
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        fprintf(stderr, "ringprof record: no random bytes for the recording id: %s\n",
                strerror(errno));
        return 1;
    }
    /* "rec-" and 128 random bits in four groups: no other run's id, ever */
    int k = snprintf(h->id, sizeof h->id, "rec");
    for (size_t i = 0; i < sizeof r; i++)
        k += snprintf(h->id + k, sizeof h->id - (size_t)k, "%s%02x", i % 4 ? "" : "-", r[i]);
    return 0;
}

/* Whether the option string `opts` gives option `key` (key=value). */
static int names_option(const char *opts, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = opts; *p; p += strcspn(p, ","), p += *p == ',')
        if (!strncmp(p, key, n) && p[n] == '=')
            return 1;
    return 0;
}

/* argv for the JVM: java, -agentpath:..., then the rest as given. */
static char **jvm_argv(int argc, char **argv, const char *agentpath)
{
    char **v = calloc((size_t)argc + 2, sizeof *v);
    if (!v)
        return NULL;
    v[0] = argv[0];
    v[1] = (char *)agentpath;
    for (int i = 1; i < argc; i++)
        v[i + 1] = argv[i];
    return v;
}

/* The recording holds no chunk of this run: the command never loaded the agent,
 * or the agent refused to start (its own line is above). */
static int no_jvm_profiled(const struct held *h, char **prog, int status)
{
    fprintf(stderr, "ringprof record: no JVM was profiled: %s wrote nothing to "
                    "%s/recording (exit status %d); the command must be a java launcher, "
                    "which loads the agent\n", prog[0], h->dir, status);
    return status ? status : 1;
}

/* After the run: what it recorded, and the chunks left out. @return 0 when it
 * recorded something, else no_jvm_profiled's status. */
static int check_census(const struct held *h, char **prog, int status)
{
    struct census c;
    take_census(h, &c);
    if (c.other)
        fprintf(stderr, "ringprof record: left out %d chunk file%s in %s/recording that "
                        "this run's JVM did not write, the first %s\n", c.other,
                c.other == 1 ? "" : "s", h->dir, c.first);
    return c.own ? 0 : no_jvm_profiled(h, prog, status);
}

/* Run the program with the agent into the held recording directory, then write
 * the flame graph and the text profile. @return record's exit status. */
static int run_and_convert(const struct held *h, const char *agent, const char *opts,
                           const char *self, const char *event, int no_convert,
                           char **prog, int nprog)
{
    char agentpath[16384];
    /* This command says where it records (below); the agent's own line would
     * say it again, unless the user's options ask for it. */
    int k = snprintf(agentpath, sizeof agentpath, "-agentpath:%s=dir=%s/recording,"
                     "recording=%s%s%s%s", agent, h->dir, h->id,
                     names_option(opts, "quiet") ? "" : ",quiet=on", *opts ? "," : "", opts);
    if (k < 0 || (size_t)k >= sizeof agentpath) {
        fprintf(stderr, "ringprof record: the agent options are too long\n");
        return 2;
    }
    char **jv = jvm_argv(nprog, prog, agentpath);
    if (!jv)
        return 1;
    fprintf(stderr, "ringprof record: recording to %s/recording/\n", h->dir);
    /* The JVM owns Ctrl-C; we wait for it and convert whatever it recorded. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    int status = run_wait(jv, -1, -1);
    free(jv);
    if (status < 0 || status == 127) {
        fprintf(stderr, "ringprof record: the program could not be started\n");
        return status < 0 ? 1 : 127;
    }
    int rc = check_census(h, prog, status);
    if (rc != 0 || no_convert)
        return rc ? rc : status;
    static const char *const html[] = {"html"}, *const text[] = {"tree", "flat"},
                             *const heat[] = {"heatmap"};
    rc = write_file(self, h, event, "flamegraph.html", html, 1);
    if (rc == 0)
        rc = write_file(self, h, event, "profile.txt", text, 2);
    if (rc != 0) {
        fprintf(stderr, "ringprof record: the recording in %s/recording could not be "
                        "converted (program exit status %d)\n", h->dir, status);
        return status ? status : 1;
    }
    /* The flame graph and the profile are there: a heatmap that cannot be
     * written (its convert said why) leaves them, and says so. */
    int heat_rc = write_file(self, h, event, "heatmap.html", heat, 1);
    fprintf(stderr, "ringprof record: program exit status %d\n"
                    "  flame graph   %s/flamegraph.html\n  text profile  %s/profile.txt\n",
            status, h->dir, h->dir);
    if (heat_rc == 0)
        fprintf(stderr, "  heatmap       %s/heatmap.html\n", h->dir);
    else
        fprintf(stderr, "  heatmap       none: its conversion failed (above)\n");
    fprintf(stderr, "  recording     %s/recording/\n", h->dir);
    return status;
}

int rp_cmd_record(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", 1, 0, 'o'}, {"options", 1, 0, 'O'}, {"agent", 1, 0, 'a'},
        {"event", 1, 0, 'e'}, {"no-convert", 0, 0, 'n'}, {"force", 0, 0, 'f'},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *dir = "ringprof-record", *opts = "", *agent = NULL, *event = "cpu";
    int no_convert = 0, force = 0, ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+:o:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o': dir = optarg; break;
        case 'O': opts = optarg; break;
        case 'a': agent = optarg; break;
        case 'e': event = optarg; break;
        case 'n': no_convert = 1; break;
        case 'f': force = 1; break;
        case 'h': usage(stdout); return 0;
        default: return rp_usage_getopt("record", ch, argv, longopts, NULL);
        }
    }
    int rc = check_agent_options(opts);
    if (rc == 3)
        return 0;
    if (rc == 0 && rp_event_check("record", event, NULL) != 0)
        rc = 2;
    if (rc != 0)
        return rc;
    if (optind >= argc) {
        fprintf(stderr, "ringprof record: no program given; put it after '--', e.g.\n"
                        "  ringprof record -- java -cp app.jar Main\n");
        return 2;
    }
    char lib[4096], self[4096];
    if (!agent) {
        if (rp_agent_default_path(lib, sizeof lib) != 0) {
            fprintf(stderr, "ringprof record: cannot find libringprof.so next to this "
                            "ringprof; give it with --agent PATH\n");
            return 2;
        }
        agent = lib;
    }
    if (access(agent, R_OK) != 0) {
        fprintf(stderr, "ringprof record: %s: %s\n", agent, strerror(errno));
        return 2;
    }
    if (self_exe(self, sizeof self) != 0) {
        fprintf(stderr, "ringprof record: cannot find this program's path\n");
        return 1;
    }
    struct held h = {.dir = dir, .dfd = -1, .rfd = -1};
    rc = hold(&h, force);
    if (rc == 0)
        rc = run_and_convert(&h, agent, opts, self, event, no_convert, argv + optind,
                             argc - optind);
    if (h.rfd >= 0)
        close(h.rfd);
    if (h.dfd >= 0)
        close(h.dfd);
    return rc;
}
