/*
 * tools/commands/ctl_threads.h — `ringprof ctl PID threads` as text: a thread
 * dump in jstack's layout, the deadlocks first (docs/control.md, "threads").
 */
#ifndef RINGPROF_TOOLS_CTL_THREADS_H
#define RINGPROF_TOOLS_CTL_THREADS_H

#include <stdio.h>

struct rp_jv;

/* Print the `threads` reply `reply` (an "ok" reply object) to f. Names, classes
 * and files are printed with their control characters escaped. */
void rp_ctl_threads_print(FILE *f, const struct rp_jv *reply);

#endif
