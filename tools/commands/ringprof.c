/*
 * tools/commands/ringprof.c — the `ringprof` command: git-style subcommands over chunk files.
 *
 * Each subcommand lives in its own cmd_*.c file and has the signature of rp_cmd_fn.
 * This file only dispatches and prints the command list. The tool needs no JVM:
 * everything it reads is in the chunk files (docs/format.md).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ringprof/suggest.h"

static const struct {
    const char *name;
    rp_cmd_fn fn;
    const char *summary;
} commands[] = {
    {"attach", rp_cmd_attach,
     "load the agent into a running JVM (as jcmd JVMTI.agent_load does)"},
    {"convert", rp_cmd_convert,
     "profiles: call tree, back-traces, flat table, collapsed stacks, ..."},
    {"ctl", rp_cmd_ctl,
     "send a command to a running agent: status, flush, start, stop, set, ..."},
    {"diff", rp_cmd_diff,
     "what changed between two profiles: flat table, collapsed, flame graph, pprof"},
    {"leaks", rp_cmd_leaks,
     "allocation sites whose live objects grow across a recording (live=on)"},
    {"locks", rp_cmd_locks,
     "monitors ranked by the time threads waited for them (lock=), j.u.c. waits (wall=)"},
    {"list", rp_cmd_list,
     "the running JVMs that have the agent, with their state and socket"},
    {"push", rp_cmd_push,
     "send finished chunks to an OpenTelemetry or Pyroscope backend (a sidecar)"},
    {"record", rp_cmd_record,
     "run a Java program under the agent; write a flame graph and a text profile"},
    {"summary", rp_cmd_summary,
     "what a recording holds: time range, samples, losses, threads, integrity"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ringprof COMMAND [options] [INPUT...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "version", "print the version");
    fprintf(f, "\n'ringprof COMMAND --help' describes a command. INPUT is a chunk file "
               "(*.rpc), a\nrecording directory, or a glob pattern.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("ringprof %s (chunk format %d.%d)\n", RINGPROF_VERSION, RP_FORMAT_MAJOR,
               RP_FORMAT_MINOR);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    struct rp_suggest sg;
    rp_suggest_init(&sg, cmd);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        rp_suggest_try(&sg, commands[i].name);
    rp_suggest_try(&sg, "version");
    fprintf(stderr, "ringprof: '%s' is not a command", cmd);
    if (rp_suggest_best(&sg))
        fprintf(stderr, " (did you mean '%s'?)", rp_suggest_best(&sg));
    fputs("\nTry 'ringprof --help' for the list of commands.\n", stderr);
    return 2;
}
