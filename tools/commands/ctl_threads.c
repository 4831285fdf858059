/*
 * tools/commands/ctl_threads.c — the text of a `threads` reply (docs/control.md):
 * the deadlocks first, one sentence each, then every thread as jstack prints it,
 * with the lock lines under the frames that locked or wait, then the virtual
 * threads, a group of alike ones as one stack with its count and its threads'
 * ids. Everything the agent sent is printed with its control characters
 * escaped.
 */
#include <stdio.h>
#include <string.h>

#include "ctl_client.h"
#include "ctl_threads.h"

static void put(FILE *f, const char *s)
{
    rp_print_untrusted(f, s ? s : "?", 0);
}

/* <0x1b6d3586> (a java.lang.Object); a monitor known only by its holder (an
 * attached agent: docs/control.md) has no id, and maybe no class. */
static void lock_text(FILE *f, const struct rp_jv *lock)
{
    const char *id = rp_jv_str(rp_jv_get(lock, "id")),
               *cls = rp_jv_str(rp_jv_get(lock, "class"));
    fputc('<', f);
    put(f, id ? id : "a monitor");
    fputc('>', f);
    if (cls) {
        fputs(" (a ", f);
        put(f, cls);
        fputc(')', f);
    }
}

static void owner_text(FILE *f, const struct rp_jv *lock)
{
    const char *owner = rp_jv_str(rp_jv_get(lock, "owner"));
    if (owner) {
        fputs(" held by \"", f);
        put(f, owner);
        fputc('"', f);
    }
}

static void deadlocks_text(FILE *f, const struct rp_jv *cycles)
{
    for (size_t c = 0; cycles && c < cycles->n; c++) {
        const struct rp_jv *cy = &cycles->items[c];
        fputs("Deadlock: ", f);
        for (size_t i = 0; i < cy->n; i++) {
            const struct rp_jv *w = rp_jv_get(&cy->items[i], "waits_for");
            const struct rp_jv *virt = rp_jv_get(&cy->items[i], "virtual");
            fputs(i ? ", which waits for " : "\"", f);
            if (!i) {
                put(f, rp_jv_str(rp_jv_get(&cy->items[i], "thread")));
                fputs(virt && virt->b ? "\" (virtual) waits for " : "\" waits for ", f);
            }
            lock_text(f, w);
            owner_text(f, w);
        }
        fputs("\n", f);
    }
    if (cycles && cycles->n)
        fputs("\n", f);
}

/* The lines under frame `depth`: what the thread waits for (top frame), then
 * the monitors that frame locked. */
static void frame_locks(FILE *f, const struct rp_jv *t, long long depth)
{
    static const struct { const char *key, *text; } waits[] = {
        {"blocked_on", "waiting to lock"},
        {"waiting_on", "waiting on"},
        {"parked_on", "parking to wait for"},
    };
    for (size_t k = 0; depth == 0 && k < sizeof waits / sizeof waits[0]; k++) {
        const struct rp_jv *l = rp_jv_get(t, waits[k].key);
        if (!l)
            continue;
        fprintf(f, "\t- %s ", waits[k].text);
        lock_text(f, l);
        owner_text(f, l);
        fputc('\n', f);
    }
    const struct rp_jv *held = rp_jv_get(t, "held");
    for (size_t h = 0; held && h < held->n; h++) {
        const struct rp_jv *l = rp_jv_get(&held->items[h], "lock");
        if (rp_jv_int(rp_jv_get(&held->items[h], "depth"), -1) != depth)
            continue;
        fputs("\t- locked ", f);
        lock_text(f, l);
        fputc('\n', f);
    }
}

static void frame_text(FILE *f, const struct rp_jv *fr)
{
    const char *file = rp_jv_str(rp_jv_get(fr, "file"));
    long long line = rp_jv_int(rp_jv_get(fr, "line"), 0);
    const struct rp_jv *native = rp_jv_get(fr, "native");
    fputs("\tat ", f);
    put(f, rp_jv_str(rp_jv_get(fr, "class")));
    fputc('.', f);
    put(f, rp_jv_str(rp_jv_get(fr, "method")));
    fputc('(', f);
    if (native && native->b) {
        fputs("Native Method", f);
    } else {
        put(f, file ? file : "Unknown Source");
        if (file && line > 0)
            fprintf(f, ":%lld", line);
    }
    fputs(")\n", f);
}

/* "STATE (details)[ DEADLOCKED]" and the end of the line. */
static void state_text(FILE *f, const struct rp_jv *t)
{
    const struct rp_jv *details = rp_jv_get(t, "state_details"), *dl = rp_jv_get(t, "deadlocked");
    put(f, rp_jv_str(rp_jv_get(t, "state")));
    for (size_t i = 0; details && i < details->n; i++) {
        fputs(i ? ", " : " (", f);
        put(f, rp_jv_str(&details->items[i]));
    }
    fputs(details && details->n ? ")" : "", f);
    fputs(dl && dl->b ? " DEADLOCKED\n" : "\n", f);
}

static void thread_head(FILE *f, const struct rp_jv *t)
{
    const struct rp_jv *daemon = rp_jv_get(t, "daemon");
    fputc('"', f);
    put(f, rp_jv_str(rp_jv_get(t, "name")));
    fprintf(f, "\" #%lld%s prio=%lld ", rp_jv_int(rp_jv_get(t, "id"), 0),
            daemon && daemon->b ? " daemon" : "", rp_jv_int(rp_jv_get(t, "priority"), 0));
    state_text(f, t);
    const struct rp_jv *w = rp_jv_get(t, "lock_wait");
    if (w) {
        fprintf(f, "   contended monitor wait in progress for %.3f s on ",
                (double)rp_jv_int(rp_jv_get(w, "age_ns"), 0) / 1e9);
        put(f, rp_jv_str(rp_jv_get(w, "lock")));
        owner_text(f, w);
        fputc('\n', f);
    }
}

/* A thread's frames with their lock lines, and what it holds not by a frame. */
static void thread_body_text(FILE *f, const struct rp_jv *t)
{
    const struct rp_jv *frames = rp_jv_get(t, "frames");
    size_t n = frames ? frames->n : 0;
    for (size_t i = 0; i < n; i++) {
        frame_text(f, &frames->items[i]);
        frame_locks(f, t, (long long)i);
    }
    if (!n)
        frame_locks(f, t, 0);
    long long total = rp_jv_int(rp_jv_get(t, "frames_total"), (long long)n);
    if (total > (long long)n)
        fprintf(f, "\t... %lld more frames not shown\n", total - (long long)n);
    /* Held but not by a frame: ownable synchronizers, as jstack -l lists them,
     * and monitors entered through JNI. */
    const struct rp_jv *held = rp_jv_get(t, "held");
    int title = 0;
    for (size_t h = 0; held && h < held->n; h++) {
        const struct rp_jv *l = rp_jv_get(&held->items[h], "lock"),
                           *ownable = rp_jv_get(l, "ownable");
        if (rp_jv_int(rp_jv_get(&held->items[h], "depth"), -1) >= 0)
            continue;
        if (ownable && ownable->b && !title++)
            fputs("   Locked ownable synchronizers:\n", f);
        fputs("\t- ", f);
        lock_text(f, l);
        fputs(ownable && ownable->b ? "\n" : " locked, not by a frame (JNI)\n", f);
    }
    fputc('\n', f);
}

static void thread_text(FILE *f, const struct rp_jv *t)
{
    thread_head(f, t);
    thread_body_text(f, t);
}

/* The ids a group of virtual threads lists in text; --json has them all. */
#define GROUP_IDS_SHOWN 16

/* #24 "parked-0" on "ForkJoinPool-1-worker-1" */
static void vthread_id_text(FILE *f, const struct rp_jv *t)
{
    const char *carrier = rp_jv_str(rp_jv_get(t, "carrier"));
    fprintf(f, "#%lld \"", rp_jv_int(rp_jv_get(t, "id"), 0));
    put(f, rp_jv_str(rp_jv_get(t, "name")));
    fputc('"', f);
    if (carrier) {
        fputs(" on \"", f);
        put(f, carrier);
        fputc('"', f);
    }
}

/* One group: "N virtual threads STATE (details)" and their ids, or, for one,
 * the thread as jstack heads it ("NAME" #ID virtual STATE) and its carrier,
 * then the stack. */
static void vgroup_text(FILE *f, const struct rp_jv *g)
{
    const struct rp_jv *threads = rp_jv_get(g, "threads");
    long long count = rp_jv_int(rp_jv_get(g, "count"), 0);
    const char *carrier = NULL;
    if (count == 1 && threads && threads->n == 1) {
        const struct rp_jv *t = &threads->items[0];
        fputc('"', f);
        put(f, rp_jv_str(rp_jv_get(t, "name")));
        fprintf(f, "\" #%lld virtual ", rp_jv_int(rp_jv_get(t, "id"), 0));
        carrier = rp_jv_str(rp_jv_get(t, "carrier"));
    } else {
        fprintf(f, "%lld virtual threads ", count);
    }
    state_text(f, g);
    if (carrier) {
        fputs("   mounted on \"", f);
        put(f, carrier);
        fputs("\"\n", f);
    }
    if (count > 1 && threads) {
        fputs("   ", f);
        for (size_t i = 0; i < threads->n && i < GROUP_IDS_SHOWN; i++) {
            fputs(i ? ", " : "", f);
            vthread_id_text(f, &threads->items[i]);
        }
        if (threads->n > GROUP_IDS_SHOWN)
            fprintf(f, " and %zu more", threads->n - GROUP_IDS_SHOWN);
        fputc('\n', f);
    }
    thread_body_text(f, g);
}

/* "Virtual threads: 2003" (or "N, the first M read") and the groups. */
static void vthreads_text(FILE *f, const struct rp_jv *v)
{
    const struct rp_jv *groups = rp_jv_get(v, "groups"), *inc = rp_jv_get(v, "incomplete");
    long long total = rp_jv_int(rp_jv_get(v, "total"), 0),
              listed = rp_jv_int(rp_jv_get(v, "listed"), 0);
    const struct rp_jv *omitted = rp_jv_get(v, "omitted");
    fprintf(f, "Virtual threads: %lld", total);
    if (omitted && omitted->b)
        fputs(", none listed: the platform threads filled the reply limit", f);
    else if (listed < total)
        fprintf(f, ", the first %lld listed, %lld counted but not read (at most %lld "
                "are read)", listed, total - listed, rp_jv_int(rp_jv_get(v, "max"), 0));
    if (inc && inc->b)
        fputs(" (the walk of the JVM's thread containers failed part way)", f);
    fputs(groups && groups->n ? "; alike ones together\n\n" : "\n\n", f);
    for (size_t i = 0; groups && i < groups->n; i++)
        vgroup_text(f, &groups->items[i]);
}

char *rp_ctl_threads_omitted(const struct rp_jv *reply, char *buf, size_t cap)
{
    long long left = rp_jv_int(rp_jv_get(reply, "threads_omitted"), 0),
              total = rp_jv_int(rp_jv_get(reply, "threads_total"), 0);
    buf[0] = '\0';
    if (left > 0)
        snprintf(buf, cap, "%lld of %lld threads are not in this dump: it stops at the "
                 "reply limit (%u bytes), the deadlocked threads first", left, total,
                 (unsigned)RP_CONTROL_THREADS_REPLY_MAX);
    return buf;
}

void rp_ctl_threads_print(FILE *f, const struct rp_jv *reply)
{
    const struct rp_jv *un = rp_jv_get(reply, "unavailable");
    for (size_t i = 0; un && i < un->n; i++) {
        fputs("note: unavailable: ", f);
        put(f, rp_jv_str(&un->items[i]));
        fputc('\n', f);
    }
    const struct rp_jv *cycles = rp_jv_get(reply, "deadlocks");
    if (!cycles || !cycles->n)
        fputs("No deadlock found.\n\n", f);
    deadlocks_text(f, cycles);
    const struct rp_jv *threads = rp_jv_get(reply, "threads");
    for (size_t i = 0; threads && i < threads->n; i++)
        thread_text(f, &threads->items[i]);
    char omitted[256];
    if (rp_ctl_threads_omitted(reply, omitted, sizeof omitted)[0])
        fprintf(f, "... %s.\n\n", omitted);
    const struct rp_jv *v = rp_jv_get(reply, "virtual_threads");
    if (v)
        vthreads_text(f, v);
}
