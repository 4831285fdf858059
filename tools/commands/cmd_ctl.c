/*
 * tools/commands/cmd_ctl.c — `ringprof ctl PID|SOCKET COMMAND...`: one request to a running
 * agent's control socket, and its reply.
 *
 * The words after the target are joined with spaces into one request line
 * (docs/control.md has the commands). The reply, one JSON object, is printed
 * indented, or as received with --raw (or --json) for scripts; a `threads` reply
 * is printed as a jstack-like thread dump (ctl_threads.c). The exit status says whether
 * the agent did it: 0 for an "ok": true reply, 1 for an error reply or an agent
 * that cannot be reached (the reason on stderr), 2 for a usage error.
 *
 * The tool's options may stand anywhere before `--` (`ctl PID status --raw`): an
 * unknown one is a usage error here, never a word sent to the agent. The words
 * after `--` go to the agent as they are.
 *
 * By pid, the socket comes from a discovery file that must be trusted
 * (ringprof/trust.h) and must be served by that pid as its uid (SO_PEERCRED), so
 * root's ctl never takes another user's answer for the agent's. A socket path
 * given is never followed through another user's symlink (rp_ctl_socket_path).
 * Whatever comes back is printed with its control characters escaped.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "ctl_client.h"
#include "ctl_threads.h"
#include "usage.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ringprof ctl [--raw|--json] [--timeout SEC] PID|SOCKET COMMAND [ARG...]\n"
        "       (the options may follow the target or the command; words after\n"
        "       '--' are sent as they are)\n"
        "\n"
        "Send one command to the ringprof agent in a running JVM and print its reply.\n"
        "PID finds the agent's socket through its discovery file; SOCKET is the path\n"
        "(never followed through a symlink of another user than you or root).\n"
        "\n"
        "commands:\n"
        "  status                      state, options, samples, losses, threads, costs\n"
        "  flush                       write what is pending, finish the chunk: its path\n"
        "  rotate                      finish the current chunk now: its path\n"
        "  start [cpu|alloc|lock|wall...]  start sampling these kinds (none: all)\n"
        "  stop [cpu|alloc|lock|wall...]   stop sampling these kinds (none: all)\n"
        "  set interval=DUR alloc=SIZE lock=DUR wall=DUR wallthreads=N\n"
        "                              change the CPU period, the allocation interval,\n"
        "                              the lock-contention threshold, the wall-clock\n"
        "                              interval or the threads it visits per tick\n"
        "  threads                     every Java thread: state, stack, locks held and\n"
        "                              awaited; the deadlocks first (jstack-like text)\n"
        "  version                     the agent's version and protocol\n"
        "  help                        the commands the agent knows\n"
        "\n"
        "options:\n"
        "  --raw, --json  print the reply as received (one JSON line)\n"
        "  --timeout SEC  give up after SEC seconds (default 10)\n"
        "\n"
        "Exit status: 0 the agent did it; 1 an error reply, or no agent reachable;\n"
        "2 usage error.\n");
}

int rp_cmd_ctl(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"raw", no_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'r'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int raw = 0;
    double timeout_s = 10;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': raw = 1; break;
        case 't': {
            char *end;
            timeout_s = strtod(optarg, &end);
            if (*end || !(timeout_s > 0) || timeout_s > 3600)
                return rp_usage_error("ctl", "bad --timeout '%s': seconds, more than 0 "
                                      "and at most 3600", optarg);
            break;
        }
        case 'h': usage(stdout); return 0;
        default:
            return rp_usage_getopt("ctl", c, argv, longopts, "; the tool's options may "
                                   "stand anywhere before '--'");
        }
    }
    if (argc - optind < 2)
        return rp_usage_error("ctl", "%s", argc - optind < 1 ? "no target given"
                              : "no command given");
    const char *target = argv[optind++];
    int threads = strcmp(argv[optind], "threads") == 0;

    /* The request: the remaining words, space-separated, on one line. */
    size_t len = 0;
    for (int i = optind; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *req = malloc(len + 1);
    if (!req) {
        fprintf(stderr, "ringprof ctl: out of memory\n");
        return 1;
    }
    req[0] = '\0';
    for (int i = optind; i < argc; i++) {
        if (strchr(argv[i], '\n')) {
            fprintf(stderr, "ringprof ctl: a command word may not contain a newline\n");
            free(req);
            return 2;
        }
        if (i > optind)
            strcat(req, " ");
        strcat(req, argv[i]);
    }

    char sock[4096], err[8192];
    long pid = 0;
    struct rp_ctl_peer peer;
    if (rp_parse_pid(target, &pid) == 0) {
        if (rp_ctl_find(pid, sock, sizeof sock, &peer, err, sizeof err) != 0) {
            fputs("ringprof ctl: ", stderr);
            rp_print_untrusted(stderr, err, 0);
            fputc('\n', stderr);
            free(req);
            return 1;
        }
        if (err[0]) {
            fputs("ringprof ctl: note: ", stderr);
            rp_print_untrusted(stderr, err, 0);
            fputs("; the socket was found through /proc instead\n", stderr);
        }
    } else if (rp_ctl_socket_path(target, sock, sizeof sock, err, sizeof err) != 0) {
        fputs("ringprof ctl: ", stderr);
        rp_print_untrusted(stderr, err, 0);
        fputc('\n', stderr);
        free(req);
        return 1;
    }

    char *reply;
    int rc = rp_ctl_exchange(sock, req, (int)(timeout_s * 1000), pid ? &peer : NULL,
                             &reply, err, sizeof err);
    free(req);
    if (rc != 0) {
        if (pid)
            fprintf(stderr, "ringprof ctl: no ringprof agent in pid %ld (", pid);
        else
            fputs("ringprof ctl: ", stderr);
        rp_print_untrusted(stderr, err, 0);
        fputs(pid ? ")\n" : "\n", stderr);
        return 1;
    }
    char perr[256];
    struct rp_jv *v = rp_jv_parse(reply, strlen(reply), perr, sizeof perr);
    const struct rp_jv *ok_ = v ? rp_jv_get(v, "ok") : NULL;
    char omitted[256] = "";
    if (threads && v)
        rp_ctl_threads_omitted(v, omitted, sizeof omitted);
    if (raw || !v) {
        rp_print_untrusted(stdout, reply, v != NULL);
        putchar('\n');
        if (omitted[0])
            fprintf(stderr, "ringprof ctl: note: %s\n", omitted);
    } else if (threads && ok_ && ok_->type == RP_JV_BOOL && ok_->b) {
        rp_ctl_threads_print(stdout, v);
    } else {
        rp_jv_print(stdout, v);
    }
    fflush(stdout);
    int status;
    if (!v) {
        fputs("ringprof ctl: the reply is not JSON (", stderr);
        rp_print_untrusted(stderr, perr, 0);
        fputs(")\n", stderr);
        status = 1;
    } else {
        const struct rp_jv *ok = rp_jv_get(v, "ok");
        status = ok && ok->type == RP_JV_BOOL && ok->b ? 0 : 1;
        if (status) {
            const char *e = rp_jv_str(rp_jv_get(v, "error"));
            fputs("ringprof ctl: the agent answered with an error: ", stderr);
            rp_print_untrusted(stderr, e ? e : "(no message)", 0);
            fputc('\n', stderr);
        }
    }
    rp_jv_free(v);
    free(reply);
    return status;
}
