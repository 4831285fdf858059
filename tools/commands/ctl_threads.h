/*
 * tools/commands/ctl_threads.h — `ringprof ctl PID threads` as text: a thread
 * dump in jstack's layout, the deadlocks first (docs/control.md, "threads").
 */
#ifndef RINGPROF_TOOLS_CTL_THREADS_H
#define RINGPROF_TOOLS_CTL_THREADS_H

#include <stddef.h>
#include <stdio.h>

struct rp_jv;

/* Print the `threads` reply `reply` (an "ok" reply object) to f. Names, classes
 * and files are printed with their control characters escaped. A dump the agent
 * cut at its reply limit ends with the count of the threads it left out. */
void rp_ctl_threads_print(FILE *f, const struct rp_jv *reply);

/* The sentence for a dump cut at the reply limit, "N of M threads are not in
 * this dump: ..." (no newline), into buf; "" when none was left out. The text
 * output ends with it, and --json prints it on stderr. @return buf. */
char *rp_ctl_threads_omitted(const struct rp_jv *reply, char *buf, size_t cap);

#endif
