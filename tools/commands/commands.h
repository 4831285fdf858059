/*
 * tools/commands/commands.h — the subcommands of `ringprof`. Each gets argv with argv[0] set
 * to its own name and returns the process exit status: 0 success, 1 nothing could be
 * done (no readable input, or --strict and problems were found), 2 usage error.
 */
#ifndef RINGPROF_TOOLS_COMMANDS_H
#define RINGPROF_TOOLS_COMMANDS_H

#include "ringprof/recorder.h"

typedef int (*rp_cmd_fn)(int argc, char **argv);

int rp_cmd_summary(int argc, char **argv);
/* The control client (docs/control.md): ctl_client.c holds what they share. */
int rp_cmd_ctl(int argc, char **argv);
int rp_cmd_list(int argc, char **argv);
int rp_cmd_attach(int argc, char **argv);
int rp_cmd_convert(int argc, char **argv);
int rp_cmd_diff(int argc, char **argv);
int rp_cmd_leaks(int argc, char **argv);
int rp_cmd_locks(int argc, char **argv);
int rp_cmd_record(int argc, char **argv);
/* Chunks to an OTLP or Pyroscope backend (docs/fleet.md): push_*.h. */
int rp_cmd_push(int argc, char **argv);

#endif
