/*
 * src/core/engine.h — the engine table: one entry per event kind that can be
 * sampled (cpu, alloc, lock, wall), so that the agent's lifecycle (agent.c) and
 * the control socket (control_ops.c) loop over the kinds instead of naming them.
 *
 * Each kind's entry is part of its descriptor (flush/kind.h, struct rp_kind, one
 * per module of src/kinds/), and its module owns everything behind it: its
 * configuration (read from the options at start), its switch, its `set` keys
 * (a table of settings, applied and put back by rp_engine_apply and
 * rp_engine_restore) and its part of the status reply. The agent's lifecycle
 * builds the table at load (rp_kinds_set, which calls rp_engines_set), with the
 * cpu kind of the engine it resolved; the table's order, cpu alloc lock wall,
 * is the order of the control protocol's kind bits and of the status reply.
 *
 * Engines never call up into the flusher or the lifecycle: what they need of
 * them is in struct rp_engine_env, which the lifecycle sets here before the
 * first start (rp_engines_set_env) and every start gets — a wake-up for the
 * flusher and a way to run a JVMTI call on a thread attached to the JVM, which
 * any engine calls through rp_engine_wake and rp_engine_call.
 *
 * Threads: start and stop from the agent's lifecycle (start and stop never
 * overlap); on, in_all, switch_kind, the settings, period and the status hooks from
 * the control server's thread, one request at a time, and only between start
 * and stop. Nothing here is async-signal-safe.
 */
#ifndef RINGPROF_SRC_ENGINE_H
#define RINGPROF_SRC_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jvmti.h>

#include "core/control_proto.h"
#include "core/json.h"
#include "ringprof/options.h"

/* A function run on a thread attached to the JVM; @return 0, or -1 with one
 * sentence in err. */
typedef int (*rp_engine_jvm_fn)(void *arg, char *err, size_t errlen);

/* What the lifecycle hands every engine at start. The engine may keep the
 * pointer: the agent's copy lives as long as the library. */
struct rp_engine_env {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    JNIEnv *jni;                      /* the starting thread's (start only)        */
    const struct rp_options *opt;     /* the parsed options                        */
    /* Ask the flusher for a pass soon (a ring is filling up, a GC pause is
     * queued). Any thread, any JVMTI callback; never blocks. */
    void (*wake)(void);
    /* Run fn(arg) on a thread attached to the JVM (the control server's is not,
     * and JVMTI refuses most calls from it) and wait a bounded time. @return fn's
     * result, or -1 with a sentence in err (timed out, shutting down). A call that
     * timed out still runs later: `arg` must be a value or static data. */
    int (*call)(rp_engine_jvm_fn fn, void *arg, char *err, size_t errlen);
};

/* When, in the agent's start, an engine starts (and, in reverse, stops). */
enum rp_engine_phase {
    /* Before any thread registers: a signal handler that must be in place before
     * the first timer fires. Its stop makes no JVMTI call (Agent_OnUnload uses
     * it when JVMTI may no longer be called). */
    RP_ENGINE_PHASE_SIGNAL,
    /* Once the loaded classes have their jmethodIDs, before the flusher starts:
     * a sampler thread of its own. Its start may fail, which fails the agent's. */
    RP_ENGINE_PHASE_THREAD,
    /* Once the flusher runs and running threads are adopted: JVMTI events on
     * application threads. Its start cannot fail. */
    RP_ENGINE_PHASE_EVENTS,
    RP_ENGINE_PHASES
};

enum rp_engine_flags {
    /* Switched and set after the others: its switch and set are refused only
     * while the agent shuts down, so a request the others refuse leaves it as
     * it was (the cpu kind). */
    RP_ENGINE_LAST = 1u << 0,
    /* Its switch makes JVMTI calls: rp_engine_switch runs it through
     * rp_engine_call, on a thread attached to the JVM. */
    RP_ENGINE_SWITCH_ATTACHED = 1u << 1
};

/* One `set` key of a kind (control_proto.h parses and bounds its value). */
struct rp_engine_setting {
    enum rp_ctl_key key;           /* 0: no setting                                */
    /* Applied at every `set` of any key, given or not (then with its present
     * value): the cpu kind's timers, which only the agent's shutdown refuses. */
    int always;
    uint64_t (*get)(void);         /* the value in force                           */
    /* Put `value` in force. @return 0, or -1 with one sentence in err and
     * nothing changed. */
    int (*set)(uint64_t value, char *err, size_t errlen);
};
#define RP_ENGINE_SETTINGS_MAX 2
#define RP_ENGINE_SAMPLES_MAX 4

/* What a `set` changed, for rp_engine_restore: the values it replaced, by
 * setting. */
struct rp_engine_saved {
    uint64_t v[RP_ENGINE_SETTINGS_MAX];
    int applied[RP_ENGINE_SETTINGS_MAX];
};

struct rp_engine_entry {
    const char *name;              /* the kind (events.h: RP_KIND_*)               */
    unsigned kind;                 /* its RP_CTL_KIND_* bit                       */
    enum rp_engine_phase phase;
    unsigned flags;                /* enum rp_engine_flags                         */

    /* Agent start: configure from env->opt and start sampling if the options
     * ask for it. @return 0, or -1 with the reason in err (phase THREAD and
     * SIGNAL only). */
    int (*start)(const struct rp_engine_env *env, char *err, size_t errlen);
    /* Agent stop: stop sampling and wait up to wait_ms for work in progress.
     * Safe when start failed or was not called. */
    void (*stop)(unsigned wait_ms);

    /* Whether it samples now. */
    int (*on)(void);
    /* Whether "start"/"stop" of every kind (no kind named, or "all") switches
     * it to `on`: a kind that is unavailable, or was never asked for, is left
     * out rather than refused. NULL: always. */
    int (*in_all)(int on);
    /* `start KIND` / `stop KIND` (through rp_engine_switch). @return 0, or -1
     * with one sentence in err; switching to the state it is in is not an
     * error. */
    int (*switch_kind)(int on, char *err, size_t errlen);
    /* Its `set` keys, in order (key 0 ends them). */
    struct rp_engine_setting settings[RP_ENGINE_SETTINGS_MAX];
    /* The period it samples at now, in its own unit (ns; bytes for alloc). */
    uint64_t (*period)(void);
    /* The chunk kinds whose samples written status counts under "samples"
     * (NULL ends them; none given: its name alone). */
    const char *samples[RP_ENGINE_SAMPLES_MAX];

    /* Its keys in the status reply's "effective" object. */
    void (*effective)(struct rp_json *j);
    /* Its own section of the status reply (a key and an object), or NULL. */
    void (*status)(struct rp_json *j);
    /* Its figures in the status reply's "agent" object, or NULL. */
    void (*status_agent)(struct rp_json *j);
    /* The kernel tid of its own thread (0: none or not yet), or NULL: the
     * agent's CPU figure adds that thread's CPU time. */
    int (*thread_tid)(void);
};

/* Set the table (copied; at most RP_ENGINES_MAX entries). rp_kinds_set sets it
 * at load (flush/kind.h): the cpu kind by the resolved engine (async or jvmti),
 * then alloc, lock, wall. Lifecycle thread, before any other function here. */
#define RP_ENGINES_MAX 8
void rp_engines_set(const struct rp_engine_entry *const *e, size_t n);

/* The table, in order (cpu first); *n gets its length. Before select: empty. */
const struct rp_engine_entry *const *rp_engines(size_t *n);

/* The lifecycle's environment, kept for rp_engine_wake and rp_engine_call (the
 * pointer is kept). Lifecycle thread, before the first start. */
void rp_engines_set_env(const struct rp_engine_env *env);

/* env->wake: ask the flusher for a pass soon. A no-op before the environment is
 * set. Any thread, any JVMTI callback; never blocks. */
void rp_engine_wake(void);

/* env->call: run fn(arg) on a thread attached to the JVM (see struct
 * rp_engine_env). @return fn's result, or -1 with a sentence in err (also when
 * the environment is not set yet). */
int rp_engine_call(rp_engine_jvm_fn fn, void *arg, char *err, size_t errlen);

/* The entry for one RP_CTL_KIND_* bit, or NULL. */
const struct rp_engine_entry *rp_engine_by_kind(unsigned kind);

/* The CPU time (ns) of thread `tid` of this process, or 0 (no such thread, or
 * tid 0), for the engines' own cost in status. Any thread. */
uint64_t rp_engine_thread_cpu_ns(pid_t tid);

/* `start`/`stop` of entry `e`: its switch_kind, through rp_engine_call if it is
 * RP_ENGINE_SWITCH_ATTACHED. @return 0, or -1 with one sentence in err. */
int rp_engine_switch(const struct rp_engine_entry *e, int on, char *err, size_t errlen);

/* `set` for entry `e`: each of its settings given among set[0..n) (and each
 * `always` one), in order, all or none; *saved gets what rp_engine_restore
 * needs. @return 0, or -1 with one sentence in err and nothing changed. */
int rp_engine_apply(const struct rp_engine_entry *e, const struct rp_ctl_setting *set,
                    size_t n, struct rp_engine_saved *saved, char *err, size_t errlen);

/* Put back what a successful rp_engine_apply changed (a later entry refused
 * the same request). */
void rp_engine_restore(const struct rp_engine_entry *e, const struct rp_engine_saved *saved);

#endif
