/*
 * tools/cmd_list.c — `ringprof list`: the running JVMs that have the agent.
 *
 * Every agent keeps a discovery file in /tmp/ringprof-<uid>/ (docs/control.md).
 * list reads ours (as root: every user's), removes the files whose process is gone
 * or whose pid now belongs to a later process, and asks each remaining agent for
 * its `status` with a short timeout, so one hung JVM delays the list by at most
 * that. An agent that does not answer is listed as unreachable, with the reason.
 */
#include <dirent.h>
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "ctl_client.h"

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
    if (rp_ctl_exchange(r->d.socket, "status", timeout_ms, &reply, err, sizeof err) != 0) {
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

/* Read the discovery files of one directory into rows, pruning stale ones. */
static void scan_dir(const char *dir, struct row **rows, size_t *n, size_t *cap,
                     int *pruned)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || !ends_with(de->d_name, ".json"))
            continue;
        char file[4096], err[512];
        snprintf(file, sizeof file, "%s/%s", dir, de->d_name);
        struct rp_discovery_info info;
        if (rp_discovery_read(file, &info, err, sizeof err) != 0) {
            fprintf(stderr, "ringprof list: %s\n", err);
            continue;
        }
        if (rp_discovery_stale(&info, info.pid)) {
            if (unlink(file) == 0)
                (*pruned)++;
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

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
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
        char main_[40];
        if (strlen(r->d.main) > 32)
            snprintf(main_, sizeof main_, "%.29s...", r->d.main);
        else
            snprintf(main_, sizeof main_, "%s", r->d.main);
        printf("%-8ld %-12s %-20s %-32s %s\n", r->d.pid, r->state,
               r->d.start_time[0] ? r->d.start_time : "-", main_, r->d.socket);
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i].error[0])
            fprintf(stderr, "ringprof list: pid %ld: %s\n", rows[i].d.pid, rows[i].error);
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
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 't': {
            char *end;
            timeout_s = strtod(optarg, &end);
            if (*end || !(timeout_s > 0) || timeout_s > 60) {
                fprintf(stderr, "ringprof list: bad --timeout '%s': seconds, more than 0 "
                        "and at most 60\n", optarg);
                return 2;
            }
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ringprof list: unexpected argument '%s'\n\n", argv[optind]);
        usage(stderr);
        return 2;
    }

    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    int pruned = 0;
    if (geteuid() == 0) {
        glob_t g;
        if (glob("/tmp/ringprof-*", GLOB_ONLYDIR, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++)
                scan_dir(g.gl_pathv[i], &rows, &n, &cap, &pruned);
            globfree(&g);
        }
    } else {
        char dir[64];
        snprintf(dir, sizeof dir, RP_CTL_DISCOVERY_FMT, (unsigned)geteuid());
        scan_dir(dir, &rows, &n, &cap, &pruned);
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
