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
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "commands.h"
#include "ctl_client.h"
#include "options.h"
#include "query.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof record [options] -- java [JVM options] MAIN-CLASS|-jar JAR [args]\n"
        "\n"
        "Run a Java program under the ringprof agent; at exit write\n"
        "  DIR/flamegraph.html  an interactive flame graph (open it in a browser)\n"
        "  DIR/profile.txt      the call tree and the flat method table\n"
        "  DIR/recording/       the chunk files, for `ringprof convert` later\n"
        "\n"
        "  -o, --out DIR      where to write (default ringprof-record)\n"
        "  --force            replace the recording already in DIR/recording\n"
        "  --options OPTS     agent options, e.g. interval=1ms,engine=jvmti (see\n"
        "                     docs/options.md); dir= is set by -o\n"
        "  --agent PATH       the agent library (default: libringprof.so next to\n"
        "                     this ringprof, or $RINGPROF_AGENT)\n"
        "  --event KIND       what to convert: cpu (default), alloc, live, wall,\n"
        "                     lock, gc\n"
        "  --no-convert       only record\n");
}

/* Run argv to completion; @return its exit status, 128+signal, or -1. */
static int run_wait(char **argv, int quiet_stdout)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (quiet_stdout && !freopen("/dev/null", "w", stdout))
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

/* ringprof convert FORMAT into FILE; @return convert's exit status. */
static int convert(const char *self, const char *event, const char *format,
                   const char *out, const char *recording)
{
    char *argv[] = {(char *)self, "convert", "--quiet", "--event", (char *)event,
                    "--format", (char *)format, "-o", (char *)out, (char *)recording,
                    NULL};
    return run_wait(argv, 0);
}

/* The text profile is the tree, then the flat table, in one file. */
static int write_text_profile(const char *self, const char *event, const char *dir,
                              const char *recording)
{
    char tree[4200], flat[4200], txt[4200];
    snprintf(tree, sizeof tree, "%s/.tree.tmp", dir);
    snprintf(flat, sizeof flat, "%s/.flat.tmp", dir);
    snprintf(txt, sizeof txt, "%s/profile.txt", dir);
    int rc = convert(self, event, "tree", tree, recording);
    if (rc == 0)
        rc = convert(self, event, "flat", flat, recording);
    FILE *out = rc == 0 ? fopen(txt, "w") : NULL;
    const char *parts[] = {tree, flat};
    for (int i = 0; out && i < 2; i++) {
        FILE *in = fopen(parts[i], "r");
        char buf[65536];
        size_t n;
        while (in && (n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, out);
        if (in)
            fclose(in);
        if (i == 0)
            fputc('\n', out);
    }
    if (out && fclose(out) != 0)
        rc = 1;
    else if (!out && rc == 0)
        rc = 1;
    unlink(tree);
    unlink(flat);
    return rc;
}

/* The files convert would read in dir (rp_is_chunk_name); with remove, unlink them.
 * @return how many there were (a missing dir holds none), or -1 with errno. */
static int chunk_files(const char *dir, int remove)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int n = 0, err = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!rp_is_chunk_name(e->d_name))
            continue;
        n++;
        if (remove && unlinkat(dirfd(d), e->d_name, 0) != 0 && !err)
            err = errno;
    }
    closedir(d);
    if (err) {
        errno = err;
        return -1;
    }
    return n;
}

static void print_option_line(void *arg, const char *line)
{
    fprintf(arg, "%s\n", line);
}

/* The user's agent options, checked with the agent's parser: @return 0, 2 with
 * one line on stderr, or 3 when they ask for the option table (printed). dir= is
 * record's own (it is DIR/recording). */
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
    return 0;
}

/* Refuse to mix a new run into an earlier one (or, with force, remove the earlier
 * chunks). @return 0, 1 (cannot read or remove) or 2 (refused). */
static int claim_recording_dir(const char *recording, int force)
{
    int n = chunk_files(recording, 0);
    if (n > 0 && force)
        n = chunk_files(recording, 1);
    if (n < 0) {
        fprintf(stderr, "ringprof record: %s: %s\n", recording, strerror(errno));
        return 1;
    }
    if (n > 0 && !force) {
        fprintf(stderr, "ringprof record: %s already holds a recording (%d chunk file%s); "
                        "give another -o DIR, or --force to replace it\n",
                recording, n, n == 1 ? "" : "s");
        return 2;
    }
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

/* The recording holds no chunk: the command never loaded the agent, or the agent
 * refused to start (its own line is above). */
static int no_jvm_profiled(const char *recording, char **prog, int status)
{
    fprintf(stderr, "ringprof record: no JVM was profiled: %s wrote nothing to %s "
                    "(exit status %d); the command must be a java launcher, which "
                    "loads the agent\n", prog[0], recording, status);
    return status ? status : 1;
}

int rp_cmd_record(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", 1, 0, 'o'}, {"options", 1, 0, 'O'}, {"agent", 1, 0, 'a'},
        {"event", 1, 0, 'e'}, {"no-convert", 0, 0, 'n'}, {"force", 0, 0, 'f'},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *dir = "ringprof-record", *opts = "", *agent = NULL, *event = "cpu";
    int no_convert = 0, force = 0, ch;
    while ((ch = getopt_long(argc, argv, "+o:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o': dir = optarg; break;
        case 'O': opts = optarg; break;
        case 'a': agent = optarg; break;
        case 'e': event = optarg; break;
        case 'n': no_convert = 1; break;
        case 'f': force = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
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
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "ringprof record: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char recording[4200], agentpath[16384];
    snprintf(recording, sizeof recording, "%s/recording", dir);
    if ((rc = claim_recording_dir(recording, force)) != 0)
        return rc;
    /* This command says where it records (below); the agent's own line would
     * say it again, unless the user's options ask for it. */
    int k = snprintf(agentpath, sizeof agentpath, "-agentpath:%s=dir=%s%s%s%s", agent,
                     recording, names_option(opts, "quiet") ? "" : ",quiet=on",
                     *opts ? "," : "", opts);
    if (k < 0 || (size_t)k >= sizeof agentpath) {
        fprintf(stderr, "ringprof record: the agent options are too long\n");
        return 2;
    }
    char **jv = jvm_argv(argc - optind, argv + optind, agentpath);
    if (!jv)
        return 1;
    fprintf(stderr, "ringprof record: recording to %s/\n", recording);
    /* The JVM owns Ctrl-C; we wait for it and convert whatever it recorded. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    int status = run_wait(jv, 0);
    free(jv);
    if (status < 0 || status == 127) {
        fprintf(stderr, "ringprof record: the program could not be started\n");
        return status < 0 ? 1 : 127;
    }
    if (chunk_files(recording, 0) <= 0)
        return no_jvm_profiled(recording, argv + optind, status);
    if (no_convert)
        return status;

    char html[4200];
    snprintf(html, sizeof html, "%s/flamegraph.html", dir);
    rc = convert(self, event, "html", html, recording);
    if (rc == 0)
        rc = write_text_profile(self, event, dir, recording);
    if (rc != 0) {
        fprintf(stderr, "ringprof record: the recording in %s could not be converted "
                        "(program exit status %d)\n", recording, status);
        return status ? status : 1;
    }
    fprintf(stderr, "ringprof record: program exit status %d\n"
                    "  flame graph   %s\n  text profile  %s/profile.txt\n"
                    "  recording     %s/\n", status, html, dir, recording);
    return status;
}
