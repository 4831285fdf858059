/*
 * src/control/control_ops.h — the agent's answers to the control socket: the callbacks
 * behind `ringprof ctl` (status, flush, rotate, start, stop, set), and the start
 * and stop of the server and its discovery file (docs/control.md, docs/agent.md).
 *
 * The server (control.h) owns the socket and the protocol; this module only knows
 * where each figure lives. Recording work (flush, rotate) is posted to the flusher,
 * the only owner of the recording (flusher.h, rp_flusher_request); status reads the
 * totals the flusher publishes, the thread registry and the engines' statistics;
 * start/stop/set change the timers (threads.h) or pause the jvmti sampler.
 *
 * Threads: start and stop from the agent's lifecycle (agent.c); the callbacks run
 * on the control server's thread, one at a time.
 */
#ifndef RINGPROF_SRC_CONTROL_OPS_H
#define RINGPROF_SRC_CONTROL_OPS_H

#include "ringprof/options.h"

struct rp_control_ops_config {
    const struct rp_options *opt;  /* copied                                      */
    const char *rec_dir;           /* the recording directory (default socket dir) */
    const char *main;              /* sun.java.command, or NULL: /proc/self/cmdline */
};

/*
 * rp_control_ops_start: unless ctl=off, bind the control socket (ctl=PATH, or the
 * default path) and write the discovery file, again whenever the server makes its
 * socket again (control.h, "Recovery"). Call once the flusher runs. A socket that
 * cannot be made is not a reason to stop profiling: it logs one line and the
 * agent runs on without one. @return 0 if the socket serves, -1 if not (logged).
 * Not async-signal-safe; allocates; creates the "ringprof-ctl" thread.
 */
int rp_control_ops_start(const struct rp_control_ops_config *cfg);

/*
 * rp_control_ops_stop: stop the server (waiting for a callback in progress), then
 * remove the discovery file. Call before the flusher's final close, so no request
 * races it. Safe to call when start failed or was never called, and twice.
 */
void rp_control_ops_stop(void);

#endif
