/*
 * tools/commands/cmd_list.c — `ringprof list`: the running JVMs that have the agent.
 *
 * Every agent keeps a discovery file in /tmp/ringprof-<uid>/ (docs/control.md).
 * list reads ours (as root: every user's), removes the files whose process is gone
 * or whose pid now belongs to a later process, and asks each remaining agent for
 * its `status` with a short timeout, so one hung JVM delays the list by at most
 * that. An agent that does not answer is listed as unreachable, with the reason.
 *
 * Nothing in /tmp is believed for its name alone (ringprof/trust.h): a directory
 * /tmp/ringprof-<uid> is read only if it belongs to that uid (or root) and nobody
 * else may write it, a file in it only if it is a regular file of that uid, the
 * process it names must run as that uid, and the socket it names must be served
 * by that process (SO_PEERCRED) before `status` is sent. What is shown from the
 * files and the replies has its control characters escaped.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "ctl_client.h"
#include "usage.h"
#include "ringprof/json_escape.h"

struct row {
    struct rp_discovery_info d;
    char state[64];
    char error[1024];
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof list [--json] [--timeout SEC]\n"
        "\n"
        "List the running JVMs that have the ringprof agent: pid, state, start time,\n"
        "main class and control socket. Discovery files of processes that are gone\n"
        "are removed. Run as root to see every user's JVMs.\n"
        "\n"
        "options:\n"
        "  --json         one JSON array, for scripts\n"
        "  --timeout SEC  how long to wait for each agent's status (default 1)\n");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Query one agent's state. */
static void query(struct row *r, int timeout_ms)
{
    char *reply, err[1024];
    struct rp_ctl_peer peer = {r->d.pid, (long)r->d.uid};
    if (rp_ctl_exchange(r->d.socket, "status", timeout_ms, &peer, &reply, err,
                        sizeof err) != 0) {
        snprintf(r->state, sizeof r->state, "unreachable");
        snprintf(r->error, sizeof r->error, "%s", err);
        return;
    }
    char perr[128];
    struct rp_jv *v = rp_jv_parse(reply, strlen(reply), perr, sizeof perr);
    const struct rp_jv *ok = rp_jv_get(v, "ok");
    const char *state = rp_jv_str(rp_jv_get(v, "state"));
    if (!v) {
        snprintf(r->state, sizeof r->state, "unreachable");
        snprintf(r->error, sizeof r->error, "the reply is not JSON (%s)", perr);
    } else if (!ok || ok->type != RP_JV_BOOL || !ok->b) {
        const char *e = rp_jv_str(rp_jv_get(v, "error"));
        snprintf(r->state, sizeof r->state, "error");
        snprintf(r->error, sizeof r->error, "%s", e ? e : "error reply");
    } else {
        snprintf(r->state, sizeof r->state, "%s", state ? state : "?");
    }
    rp_jv_free(v);
    free(reply);
}

static int cmp_row(const void *a, const void *b)
{
    long x = ((const struct row *)a)->d.pid, y = ((const struct row *)b)->d.pid;
    return (x > y) - (x < y);
}

/* Read the discovery files of the directory `dir`, which must be trusted for
 * `uid`, into rows, pruning stale ones. Untrusted directories and files are
 * skipped with one line each on stderr. */
static void scan_dir(const char *dir, unsigned uid, struct row **rows, size_t *n,
                     size_t *cap, int *pruned)
{
    char why[256];
    int dfd = rp_trust_opendir(dir, (uid_t)uid, why, sizeof why);
    if (dfd < 0) {
        if (errno != ENOENT)
            fprintf(stderr, "ringprof list: skipping %s: it %s\n", dir, why);
        return;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || !ends_with(de->d_name, RP_DISCOVERY_SUFFIX))
            continue;
        char err[PATH_MAX + 512];
        struct rp_discovery_info info;
        if (rp_discovery_read(dfd, dir, de->d_name, uid, &info, err, sizeof err) != 0) {
            fputs("ringprof list: ", stderr);
            rp_print_untrusted(stderr, err, 0);
            fputc('\n', stderr);
            continue;
        }
        if (rp_discovery_stale(&info, info.pid)) {
            if (unlinkat(dfd, de->d_name, 0) == 0)
                (*pruned)++;
            continue;
        }
        long owner = rp_proc_uid(info.pid);
        if (owner >= 0 && owner != (long)uid) {
            fprintf(stderr, "ringprof list: skipping %s: it names pid %ld, which runs as "
                    "uid %ld, not %u\n", info.file, info.pid, owner, uid);
            continue;
        }
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 16;
            struct row *nr = realloc(*rows, *cap * sizeof *nr);
            if (!nr)
                break;
            *rows = nr;
        }
        memset(&(*rows)[*n], 0, sizeof **rows);
        (*rows)[(*n)++].d = info;
    }
    closedir(d);
}

/* The uid in a discovery directory's name "/tmp/ringprof-<uid>", canonical digits
 * only. @return 0 or -1. */
static int dir_uid(const char *path, unsigned *uid)
{
    const char *p = path + strlen(RP_DISCOVERY_DIR_PREFIX);
    if (strncmp(path, RP_DISCOVERY_DIR_PREFIX, strlen(RP_DISCOVERY_DIR_PREFIX)) != 0 ||
        !isdigit((unsigned char)*p) || (*p == '0' && p[1]) || strlen(p) > 10)
        return -1;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q))
            return -1;
    unsigned long v = strtoul(p, NULL, 10);
    if (v > 0xffffffffu)
        return -1;
    *uid = (unsigned)v;
    return 0;
}

static void emit_stdout(void *ctx, const char *bytes, size_t n)
{
    (void)ctx;
    fwrite(bytes, 1, n, stdout);
}

/* A JSON string for the listing: controls escaped (a main class or a thread name
 * is anyone's to choose, and the listing goes to terminals). */
static void json_str(const char *s)
{
    putchar('"');
    rp_json_escape(s, strlen(s), RP_JSON_ESC_CONTROLS, emit_stdout, NULL);
    putchar('"');
}

static void print_json(const struct row *rows, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        printf("%s\n  {\"pid\": %ld, \"uid\": %u, \"state\": ", i ? "," : "", r->d.pid,
               r->d.uid);
        json_str(r->state);
        printf(", \"start_time\": ");
        json_str(r->d.start_time);
        printf(", \"main\": ");
        json_str(r->d.main);
        printf(", \"socket\": ");
        json_str(r->d.socket);
        if (r->error[0]) {
            printf(", \"error\": ");
            json_str(r->error);
        }
        printf("}");
    }
    printf("%s]\n", n ? "\n" : "");
}

static void print_table(const struct row *rows, size_t n)
{
    printf("%-8s %-12s %-20s %-32s %s\n", "PID", "STATE", "STARTED", "MAIN", "SOCKET");
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        char main_[40], state[64], started[64], sock[PATH_MAX];
        rp_trust_escape(main_, 33, r->d.main);
        rp_trust_escape(state, sizeof state, r->state);
        rp_trust_escape(started, sizeof started, r->d.start_time[0] ? r->d.start_time : "-");
        rp_trust_escape(sock, sizeof sock, r->d.socket);
        printf("%-8ld %-12s %-20s %-32s %s\n", r->d.pid, state, started, main_, sock);
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i].error[0]) {
            fprintf(stderr, "ringprof list: pid %ld: ", rows[i].d.pid);
            rp_print_untrusted(stderr, rows[i].error, 0);
            fputc('\n', stderr);
        }
}

int rp_cmd_list(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0, c;
    double timeout_s = 1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 't': {
            char *end;
            timeout_s = strtod(optarg, &end);
            if (*end || !(timeout_s > 0) || timeout_s > 60)
                return rp_usage_error("list", "bad --timeout '%s': seconds, more than 0 "
                                      "and at most 60", optarg);
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return rp_usage_getopt("list", c, argv, longopts, NULL);
        }
    }
    if (optind < argc)
        return rp_usage_error("list", "unexpected argument '%s'", argv[optind]);

    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    int pruned = 0;
    if (geteuid() == 0) {
        glob_t g;
        if (glob(RP_DISCOVERY_DIR_PREFIX "*", 0, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++) {
                unsigned uid;
                if (dir_uid(g.gl_pathv[i], &uid) == 0)
                    scan_dir(g.gl_pathv[i], uid, &rows, &n, &cap, &pruned);
            }
            globfree(&g);
        }
    } else {
        char dir[64];
        snprintf(dir, sizeof dir, RP_DISCOVERY_DIR_FMT, (unsigned)geteuid());
        scan_dir(dir, (unsigned)geteuid(), &rows, &n, &cap, &pruned);
    }
    if (n)
        qsort(rows, n, sizeof *rows, cmp_row);
    for (size_t i = 0; i < n; i++)
        query(&rows[i], (int)(timeout_s * 1000));

    if (json)
        print_json(rows, n);
    else if (n)
        print_table(rows, n);
    else
        fprintf(stderr, "ringprof list: no running JVM with the ringprof agent found\n");
    if (pruned)
        fprintf(stderr, "ringprof list: removed %d discovery file%s of processes that "
                "are gone\n", pruned, pruned == 1 ? "" : "s");
    free(rows);
    return 0;
}
