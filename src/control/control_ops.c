/*
 * src/control/control_ops.c — what the agent answers on its control socket (see
 * control_ops.h; the protocol is docs/control.md).
 *
 * Every callback runs on the server thread. None of them touches the recording:
 * flush and rotate post a request to the flusher and wait for its answer (at most
 * FLUSH_WAIT_MS), and status reads the totals of what reached the chunks (the
 * counter registry's, counters.h) and the recording's state the flusher
 * publishes after each pass. So the only new shared state is those (a mutex
 * each, taken by the flusher once per counter written and once per pass) and a
 * per-slot sample count (one relaxed atomic add per sample written).
 *
 * start, stop, set and the kinds' parts of status go through the engine table
 * (engine.h; each entry is part of its kind's descriptor, flush/kind.h): each
 * kind switches itself (rp_engine_switch), has its `set` keys applied and put
 * back through its settings table (rp_engine_apply, rp_engine_restore), and
 * writes its own status section; "samples" counts what each wrote, by chunk
 * kind. A kind whose JVMTI calls need a thread attached to the JVM, which this
 * server's thread is not, makes them through the call the agent gave it at start
 * (the flusher's, rp_flusher_call). "start"/"stop" without a
 * kind, "all", and every kind named are the same request: every kind the agent
 * can sample. A `set` that succeeded finishes the current chunk and
 * names every setting changed since start in the next chunks' headers
 * (RP_META_OPTIONS_SET), so each chunk tells the settings it was written under.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringprof/clock.h"
#include "ringprof/format.h"
#include "control/control.h"
#include "control/control_ops.h"
#include "core/counters.h"
#include "core/engine.h"
#include "flush/kind.h"
#include "flush/flusher.h"
#include "core/log.h"
#include "control/threaddump.h"
#include "threads/threads.h"

/* A flush waits this long for the flusher: a pass takes milliseconds, an fsync
 * on a sick disk may take seconds; beyond this the client gets a clear error. */
#define FLUSH_WAIT_MS 10000
/* Threads listed in status, by samples; "threads_total" counts them all. */
#define STATUS_THREADS_MAX 50

/* The keys `set` takes, by enum rp_ctl_key (1 ... RP_CTL_KEYS - 1). */
#define SET_KEYS (RP_CTL_KEYS - 1)

static struct {
    struct rp_control *ctl;
    struct rp_options opt;
    uint64_t start_mono_ns;
    uint64_t start_wall_ns;
    char main[1024];                /* sun.java.command, or "": /proc/self/cmdline */
    char discovery[PATH_MAX];       /* the file written, or ""                     */
    /* Each key's latest value as `set` wrote it, "" if never set: the server's
     * thread only. */
    char set_text[SET_KEYS + 1][sizeof ((struct rp_ctl_setting *)0)->text];
} C;

/* ------------------------------------------------------------------ status -- */

/* The options as given, and in force now: the shared ones, then each kind's. */
static void status_options(struct rp_json *j)
{
    const struct rp_options *o = &C.opt;
    size_t n;
    const struct rp_engine_entry *const *e = rp_engines(&n);
    rp_json_kv_string(j, "options", o->raw);
    rp_json_key(j, "effective");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "depth", o->depth);
    rp_json_kv_u64(j, "flush_ns", o->flush_ns);
    for (size_t i = 0; i < n; i++)
        e[i]->effective(j);
    rp_json_object_end(j);
}

/* "lost" (lost.<reason>: the ring's three reasons always, others once seen,
 * write among them) and
 * "walk" (every other counter: agct.*, walk.*, jvmti.*), totals since start. */
static void status_counters(struct rp_json *j, const struct rp_counter_totals *t,
                            const struct rp_flusher_recording *rec)
{
    static const char *const ring[] = {"ring_full", "nested", "too_big"};
    const size_t plen = strlen(RP_COUNTER_LOST_PREFIX);
    rp_json_key(j, "lost");
    rp_json_object_begin(j);
    for (size_t r = 0; r < sizeof ring / sizeof ring[0]; r++) {
        uint64_t v = 0;
        for (uint32_t i = 0; i < t->n; i++)
            if (!strncmp(t->counters[i].name, RP_COUNTER_LOST_PREFIX, plen) &&
                !strcmp(t->counters[i].name + plen, ring[r]))
                v = t->counters[i].total;
        rp_json_kv_u64(j, ring[r], v);
    }
    for (uint32_t i = 0; i < t->n; i++) {
        const char *n = t->counters[i].name;
        if (strncmp(n, RP_COUNTER_LOST_PREFIX, plen) != 0 || !strcmp(n + plen, "ring_full") ||
            !strcmp(n + plen, "nested") || !strcmp(n + plen, "too_big"))
            continue;
        rp_json_kv_u64(j, n + plen, t->counters[i].total);
    }
    /* The chunk writer's own loss: samples handed to it whose segment could not be
     * written. The files count them as lost.write, so status does too. */
    if (rec->rec.samples_failed)
        rp_json_kv_u64(j, "write", rec->rec.samples_failed);
    rp_json_object_end(j);
    rp_json_key(j, "walk");
    rp_json_object_begin(j);
    for (uint32_t i = 0; i < t->n; i++)
        if (strncmp(t->counters[i].name, RP_COUNTER_LOST_PREFIX, plen) != 0)
            rp_json_kv_u64(j, t->counters[i].name, t->counters[i].total);
    rp_json_object_end(j);
}

struct thread_row {
    uint64_t samples;
    uint32_t index;
};

static int by_samples_desc(const void *a, const void *b)
{
    const struct thread_row *x = a, *y = b;
    return x->samples < y->samples ? 1 : x->samples > y->samples ? -1
         : (x->index > y->index) - (x->index < y->index);
}

/* The samples written for slot `s`'s occupant by the kinds that count them per
 * thread (the cpu kind's). */
static uint64_t thread_samples(const struct rp_slot *s)
{
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (k[i]->thread_samples)
            total += k[i]->thread_samples(s);
    return total;
}

/* The live threads with the most samples written, and how many live threads. */
static void status_threads(struct rp_json *j)
{
    uint32_t n = rp_threads_count(), live = 0;
    struct thread_row *rows = n ? malloc(n * sizeof *rows) : NULL;
    for (uint32_t i = 0; i < n && rows; i++) {
        struct rp_slot *s = rp_threads_slot(i);
        if (s && atomic_load(&s->state) == RP_SLOT_LIVE)
            rows[live++] = (struct thread_row){thread_samples(s), i};
    }
    if (rows)
        qsort(rows, live, sizeof *rows, by_samples_desc);
    rp_json_key(j, "threads");
    rp_json_array_begin(j);
    for (uint32_t k = 0; k < live && k < STATUS_THREADS_MAX; k++) {
        struct rp_slot *s = rp_threads_slot(rows[k].index);
        struct rp_slot_meta m;
        rp_threads_meta(s, &m);
        rp_json_object_begin(j);
        rp_json_kv_u64(j, "tid", m.tid > 0 ? (uint64_t)m.tid : 0);
        rp_json_kv_string(j, "name", m.name[0] ? m.name : "[unnamed]");
        rp_json_kv_u64(j, "samples", rows[k].samples);
        rp_json_kv_u64(j, "cpu_ns", rp_engine_thread_cpu_ns(m.tid));
        rp_json_object_end(j);
    }
    rp_json_array_end(j);
    rp_json_kv_u64(j, "threads_total", live);
    free(rows);
}

/* The agent's own cost: its threads' CPU (flusher, the kinds' samplers, this
 * one) and what each kind adds (the async handler's time per sample). */
static void status_agent(struct rp_json *j)
{
    size_t n;
    const struct rp_engine_entry *const *e = rp_engines(&n);
    uint64_t cpu = rp_engine_thread_cpu_ns(rp_flusher_tid()) + rp_control_cpu_ns(C.ctl);
    for (size_t i = 0; i < n; i++)
        if (e[i]->thread_tid)
            cpu += rp_engine_thread_cpu_ns(e[i]->thread_tid());
    rp_json_key(j, "agent");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "cpu_ns", cpu);
    for (size_t i = 0; i < n; i++)
        if (e[i]->status_agent)
            e[i]->status_agent(j);
    rp_json_object_end(j);
}

/* "samples": what each kind wrote, by chunk kind, in the table's order. */
static void status_samples(struct rp_json *j, const struct rp_counter_totals *t)
{
    size_t n;
    const struct rp_engine_entry *const *e = rp_engines(&n);
    rp_json_key(j, "samples");
    rp_json_object_begin(j);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < RP_ENGINE_SAMPLES_MAX; k++) {
            const char *kind = k == 0 && !e[i]->samples[0] ? e[i]->name : e[i]->samples[k];
            if (!kind)
                break;
            rp_json_kv_u64(j, kind, rp_counter_totals_written(t, kind));
        }
    rp_json_object_end(j);
}

static int op_status(void *ctx, struct rp_json *j, char *err, size_t errlen)
{
    (void)ctx; (void)err; (void)errlen;
    static struct rp_counter_totals t;        /* large; callbacks never overlap */
    static struct rp_flusher_recording r;
    rp_flusher_recording(&r);
    rp_counters_totals(&t);
    size_t n;
    const struct rp_engine_entry *const *e = rp_engines(&n);
    const struct rp_engine_entry *cpu = rp_engine_by_kind(RP_CTL_KIND_CPU);
    rp_json_kv_string(j, "state", cpu->on() ? "running" : "stopped");
    status_options(j);
    rp_json_key(j, "sampling");
    rp_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        if (e[i]->on())
            rp_json_string(j, e[i]->name);
    rp_json_array_end(j);
    rp_json_kv_u64(j, "interval_ns", cpu->period());
    status_samples(j, &t);
    for (size_t i = 0; i < n; i++)
        if (e[i]->status)
            e[i]->status(j);
    status_counters(j, &t, &r);
    status_threads(j);
    rp_json_kv_u64(j, "bytes_written", r.rec.bytes_written);
    rp_json_key(j, "chunks");
    rp_json_object_begin(j);
    if (r.current[0])
        rp_json_kv_string(j, "current", r.current);
    else
        rp_json_kv_string(j, "current", NULL);
    rp_json_kv_u64(j, "finished", r.rec.chunks_finished);
    rp_json_kv_u64(j, "failed", r.rec.chunks_failed);
    rp_json_kv_u64(j, "segments_failed", r.rec.segments_failed);
    rp_json_kv_u64(j, "deleted", r.rec.chunks_deleted);
    rp_json_object_end(j);
    status_agent(j);
    rp_json_kv_u64(j, "uptime_ns", rp_mono_ns() - C.start_mono_ns);
    return 0;
}

/* ------------------------------------------------------------ flush, rotate -- */

/* Both drain every ring first: draining costs one pass, and it means the file
 * holds every sample taken before the request (docs/control.md). */
static int op_flush(void *ctx, char *path, size_t pathlen, char *err, size_t errlen)
{
    (void)ctx;
    return rp_flusher_request(path, pathlen, FLUSH_WAIT_MS, err, errlen);
}

/* ----------------------------------------------------------- start, stop, set -- */

/* The engines in the order start, stop and set visit them: the table's order,
 * those marked RP_ENGINE_LAST (refused only at shutdown) after the others, so
 * that a request one kind refuses leaves them as they were. @return n. */
static size_t request_order(const struct rp_engine_entry **out)
{
    size_t n, k = 0;
    const struct rp_engine_entry *const *e = rp_engines(&n);
    for (int last = 0; last <= 1; last++)
        for (size_t i = 0; i < n; i++)
            if (!(e[i]->flags & RP_ENGINE_LAST) == !last)
                out[k++] = e[i];
    return k;
}

/* "all" (or no kind) means every kind; each kind says whether "all" includes
 * it (engine.h, in_all). Naming a kind that is unavailable is an error. */
static int switch_kinds(unsigned kinds, int on, char *err, size_t errlen)
{
    const struct rp_engine_entry *e[RP_ENGINES_MAX];
    size_t n = request_order(e);
    if (kinds == 0)
        kinds = RP_CTL_KIND_ALL;
    for (size_t i = 0; i < n; i++)
        if ((kinds & e[i]->kind) &&
            (kinds != RP_CTL_KIND_ALL || !e[i]->in_all || e[i]->in_all(on)) &&
            rp_engine_switch(e[i], on, err, errlen) != 0)
            return -1;
    return 0;
}

static int op_start(void *ctx, unsigned kinds, char *err, size_t errlen)
{
    (void)ctx;
    return switch_kinds(kinds, 1, err, errlen);
}

static int op_stop(void *ctx, unsigned kinds, char *err, size_t errlen)
{
    (void)ctx;
    return switch_kinds(kinds, 0, err, errlen);
}

/* After a set: every setting changed since start ("interval=5ms,alloc=256k") into
 * the headers of the chunks after the current one, which the flusher finishes
 * now. The settings are in force whatever becomes of the chunk: a flush that
 * fails or times out is logged, and the set still succeeds. */
static void settings_changed(const struct rp_ctl_setting *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i].key >= 1 && set[i].key <= SET_KEYS)
            snprintf(C.set_text[set[i].key], sizeof C.set_text[0], "%s", set[i].text);
    char all[RP_FLUSHER_META_MAX] = "", path[PATH_MAX], err[512];
    size_t len = 0;
    for (int k = 1; k <= SET_KEYS; k++)
        if (C.set_text[k][0] && len < sizeof all)
            len += (size_t)snprintf(all + len, sizeof all - len, "%s%s=%s", len ? "," : "",
                                    rp_ctl_key_name((enum rp_ctl_key)k), C.set_text[k]);
    if (rp_flusher_rotate_meta(RP_META_OPTIONS_SET, all, path, sizeof path, FLUSH_WAIT_MS,
                               err, sizeof err) != 0)
        rp_log("set: the chunk written under the earlier settings was not finished: %s",
               err);
}

/* All or none: each kind applies its keys; when one refuses, those before it
 * put theirs back. */
static int op_set(void *ctx, const struct rp_ctl_setting *set, size_t n, char *err,
                  size_t errlen)
{
    (void)ctx;
    const struct rp_engine_entry *e[RP_ENGINES_MAX];
    struct rp_engine_saved saved[RP_ENGINES_MAX];
    size_t ne = request_order(e);
    for (size_t i = 0; i < ne; i++) {
        if (rp_engine_apply(e[i], set, n, &saved[i], err, errlen) == 0)
            continue;
        while (i-- > 0)
            rp_engine_restore(e[i], &saved[i]);
        return -1;
    }
    settings_changed(set, n);
    return 0;
}

/* ----------------------------------------------------------------- threads -- */

static int op_threads(void *ctx, struct rp_json *j, char *err, size_t errlen)
{
    (void)ctx;
    return rp_threaddump_reply(j, err, errlen);
}

/* ------------------------------------------------------- server housekeeping -- */

static void op_log(void *ctx, const char *line)
{
    (void)ctx;
    rp_log("%s", line);
}

/* The server thread is not a Java thread, so only the /proc scan could find it:
 * mark it as the agent's first, then retire a slot a scan may have made for it
 * in the moment between its creation and this call. */
static void op_thread_start(void *ctx)
{
    (void)ctx;
    rp_threads_add_agent(rp_gettid());
    rp_threads_detach_current();
}

/* Write the discovery file for the socket rp_control_path names. Both the
 * thread that starts the server and the server's own (op_rebound) may, so the
 * file's name is kept under a lock. */
static int advertise(char *err, size_t errlen)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    struct rp_discovery d = {0, rp_control_path(C.ctl), C.main[0] ? C.main : NULL,
                             C.opt.raw, C.start_wall_ns};
    pthread_mutex_lock(&lock);
    int rc = rp_discovery_write(&d, NULL, C.discovery, sizeof C.discovery, err, errlen);
    if (rc != 0)
        C.discovery[0] = '\0';
    pthread_mutex_unlock(&lock);
    return rc;
}

/* The socket was made again (its directory had been removed): so was, perhaps,
 * the discovery file, and `ringprof list` must find the socket again. */
static void op_rebound(void *ctx)
{
    (void)ctx;
    char err[1024];
    if (advertise(err, sizeof err) != 0)
        rp_log("no discovery file for the control socket made again at %s: %s",
               rp_control_path(C.ctl), err);
}

static const struct rp_control_ops OPS = {
    .status = op_status,
    .flush = op_flush,
    .rotate = op_flush,
    .start = op_start,
    .stop = op_stop,
    .set = op_set,
    .threads = op_threads,
    .log = op_log,
    .thread_start = op_thread_start,
    .rebound = op_rebound,
};

/* The socket's path: ctl=PATH (made absolute, so the discovery file is usable
 * from anywhere), or the default in the recording directory. */
static int socket_path(const struct rp_control_ops_config *cfg, char *buf, size_t cap,
                       char *err, size_t errlen)
{
    char cwd[PATH_MAX];
    if (cfg->opt->ctl[0]) {
        if (cfg->opt->ctl[0] == '/' || !getcwd(cwd, sizeof cwd))
            snprintf(buf, cap, "%s", cfg->opt->ctl);
        else if ((size_t)snprintf(buf, cap, "%s/%s", cwd, cfg->opt->ctl) >= cap)
            snprintf(buf, cap, "%s", cfg->opt->ctl);
        return 0;
    }
    char dir[PATH_MAX];
    const char *d = cfg->rec_dir && realpath(cfg->rec_dir, dir) ? dir : cfg->rec_dir;
    return rp_control_default_path(buf, cap, d, (long)getpid(), err, errlen);
}

int rp_control_ops_start(const struct rp_control_ops_config *cfg)
{
    if (cfg->opt->ctl_off || C.ctl)
        return -1;
    C.opt = *cfg->opt;
    C.start_mono_ns = rp_mono_ns();
    C.start_wall_ns = rp_wall_ns();
    snprintf(C.main, sizeof C.main, "%s", cfg->main ? cfg->main : "");
    char path[PATH_MAX], err[1024];
    if (socket_path(cfg, path, sizeof path, err, sizeof err) != 0 ||
        !(C.ctl = rp_control_start(path, &OPS, NULL, err, sizeof err))) {
        rp_log("no control socket (profiling goes on without one): %s", err);
        return -1;
    }
    if (advertise(err, sizeof err) != 0)
        rp_log("no discovery file, so `ringprof list` will not show this JVM (the "
               "control socket %s works): %s", rp_control_path(C.ctl), err);
    return 0;
}

/* The server first: until it has stopped it may write the discovery file again
 * (op_rebound). */
void rp_control_ops_stop(void)
{
    rp_control_stop(C.ctl);
    C.ctl = NULL;
    rp_discovery_remove(C.discovery);
    C.discovery[0] = '\0';
}
