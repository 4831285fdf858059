/*
 * tools/outputs/out_jfr.c — `ringprof convert --format jfr`: a JDK Flight Recorder
 * file (tools/outputs/jfr.h) that JDK Mission Control, IntelliJ IDEA, the JDK's
 * `jfr` tool, the jdk.jfr.consumer API, Pyroscope's parser (grafana/jfr-parser)
 * and async-profiler's converter open as they are.
 *
 * Streaming. JFR events carry their own time, thread and stack, so every sample
 * is a few events (below), written as the profile builder reads it
 * (rp_prof_options.on_sample, with all_kinds): the writer keeps no samples.
 * Stacks are the builder's calling context tree: a JFR stack trace id is the id
 * of the CCT node of the sample's leaf frame, so memory is the distinct call
 * paths, frames and methods (as for every other format), the threads and the
 * symbols. After the last sample the checkpoint (the pools of threads, stack
 * traces, methods, classes, packages, symbols and the fixed ones) and the
 * metadata are written, and the header is patched with their offsets; the
 * output must therefore be seekable, or the events are spooled to a temporary
 * file and copied (a pipe).
 *
 * Mapping (docs/profiles.md, "jfr", is the users' version). The JDK's event
 * types have the JDK's fields only (jfr.h); each sample is also one event of a
 * ringprof type with what ringprof knows beyond them:
 *   cpu    jdk.ExecutionSample: viewers count the events, one an interval of
 *          CPU, so after each sample the events written are the CPU read so far
 *          over the period, rounded (cpu_events): a sample of weight w is n
 *          events at its time, n near w / period (0 or more, at most MAX_SPLIT);
 *          and ringprof.CPUSample {weight w, executionSamples n}.
 *   wall   ringprof.WallClockSample with the JDK thread state, ringprof's state
 *          name, weight, CPU time, repeat, the parked-on class and its owner;
 *          in states native and io also jdk.NativeMethodSample, if a frame is
 *          left of the stack (the JDK samples no thread without a Java frame).
 *   alloc  jdk.ObjectAllocationSample {objectClass, weight} and
 *          ringprof.AllocationSample {..., objects, size, arrayLength}.
 *   live   jdk.OldObjectSample at the snapshot's time, allocationTime = snapshot -
 *          age_ms; ringprof.LiveObject {..., weight, objects, ageGcs}.
 *   lock   jdk.JavaMonitorEnter {duration, monitorClass, previousOwner}; a wait
 *          still in progress (kind lock.waiting, the one record that stands for
 *          it) the same, its duration its age then, and beside it a
 *          ringprof.Sample of kind lock.waiting whose markers say
 *          "[unfinished]" (the builder's frame, which no JDK event can carry).
 *   gc     jdk.GarbageCollection and jdk.GCPhasePause (the pause), and
 *          jdk.GCHeapSummary "After GC" when the heap was read.
 *   other  ringprof.Sample {kind, weight, unit}.
 *   gauges ringprof.Gauge each; also jdk.CPULoad (process CPU rates over the
 *          header's host.cpus), jdk.ResidentSetSize, jdk.ClassLoadingStatistics,
 *          jdk.JavaThreadStatistics (the four Java thread gauges of an instant).
 *   thread CPU readings ringprof.ThreadCPUTime, and jdk.ThreadCPULoad from two
 *          consecutive ones (thread_cpu_load); counters ringprof.Counter at
 *          their segment's last time; every chunk ringprof.Recording; every
 *          recording jdk.JVMInformation.
 * The JDK types that views read and ringprof has no data for (jdk.Shutdown, the
 * young and old collections, ...) are declared (jfr.c) and never written.
 * Frames: the builder's, at RP_GRAN_FULL (line and bci both, filters see methods),
 * overloads apart (RP_SIG_KEEP: each method with its own descriptor), but its
 * markers, which every reader would take for methods (struct stack_note):
 * "[truncated]" and the markers of missing frames become the stack's truncated
 * flag, a stack of markers alone has no frames, and the ringprof events name
 * them in `markers`; alloc and live samples' class leaf is the event's class
 * field, not a frame.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "jfr.h"
#include "model/scan.h"
#include "model/strtab.h"
#include "model/xalloc.h"
#include "ringprof/events.h"

#define FLUSH_AT (1u << 20)    /* write pending events out at this many bytes */
/* The most events one CPU sample becomes: 1000 intervals is 10 s of CPU at the
 * default 10 ms that no timer signal interrupted; only a damaged chunk weighs
 * more, and it would otherwise write gigabytes (its weight still adds up; the
 * CPU beyond 1000 intervals is not carried to the next samples). */
#define MAX_SPLIT 1000u

/* How a kind's samples are written. */
enum handler { H_UNSET = 0, H_CPU, H_WALL, H_ALLOC, H_LIVE, H_LOCK, H_GC, H_OTHER };

/* The extra fields the writer reads, by name (docs/format.md). */
enum {
    X_CLASS, X_SIZE, X_OBJECTS, X_LENGTH, X_AGE_GCS, X_AGE_MS, X_STATE, X_CPU_NS,
    X_REPEAT, X_BLOCKER_CLASS, X_BLOCKER_OWNER, X_OWNER, X_HEAP_USED, X_HEAP_COMMITTED,
    X_ID, X_COUNT
};
static const char *const X_NAMES[X_COUNT] = {
    "class", "size", "objects", "length", RP_X_AGE_GCS, "age_ms", "state", "cpu_ns",
    "repeat", "blocker_class", "blocker_owner", "owner", "heap_used", "heap_committed",
    "id"};

struct kmap {
    enum handler h;
    int8_t x[X_COUNT];          /* index of each extra, -1: the kind has none  */
    uint64_t period;
    const char *name, *unit;
};

/* A chunk's THREAD id: its output thread (0: not yet) and the time of the
 * record it was last refreshed from (the reader's rp_thread_info.time), so the
 * name is compared again only after a new record. */
struct thr_map {
    uint32_t out;
    uint64_t seen;
};

/* A thread of the output: (recording, os_tid), or a virtual thread:
 * (recording, its Java id), whatever carriers it ran on (JFR has no carrier). */
struct jthread {
    uint64_t os_tid, java_tid;
    uint32_t src;               /* its recording: index in source_keys           */
    char *name, *renamed;       /* first name seen; newest different one or NULL */
    int java;
    int virtual;
    uint64_t cpu, cpu_t;        /* its newest CPU reading and when (wall ns)     */
};

/* The Java thread gauges jdk.JavaThreadStatistics is made of, in its order. */
static const char *const JAVA_THREAD_GAUGES[] = {
    RP_GAUGE_THREADS_JAVA, RP_GAUGE_THREADS_DAEMON, RP_GAUGE_THREADS_STARTED,
    RP_GAUGE_THREADS_PEAK};
#define N_JAVA_THREAD_GAUGES (sizeof JAVA_THREAD_GAUGES / sizeof JAVA_THREAD_GAUGES[0])

/* Per recording: what the gauge-derived events need. */
struct source {
    int cpus;                   /* host.cpus, 0: unknown                         */
    uint64_t rss_peak, heap_used;
    uint64_t user, sys, user_t, sys_t;     /* newest readings (wall ns)           */
    uint64_t p_user, p_sys, p_t;           /* the previous complete pair          */
    uint64_t jt[N_JAVA_THREAD_GAUGES], jt_t[N_JAVA_THREAD_GAUGES];
};

/* What the file keeps of the stack that ends at a CCT node (pool_stacks): the
 * profile's marker frames are not frames of the file, as every reader takes a
 * frame for a method. Whether a frame is left, and the markers by name for
 * ringprof's events. */
struct stack_note {
    uint32_t markers;           /* 1 + index in jfr.marks; 0: none               */
    uint8_t used, known, frames;
};

struct jfr {
    FILE *out, *body;           /* body: out, or the spool file                 */
    uint64_t body_start;        /* out's offset of the chunk header             */
    struct rp_jfr_buf ev, buf;  /* one event's body; pending output             */
    uint64_t written;           /* bytes of the chunk written to body           */
    int failed;                 /* a write failed (errno kept in err)           */
    int err;

    const struct rp_prof_options *po;
    uint64_t base;              /* wall ns of tick 0                             */
    int have_base;
    uint64_t tmin, tmax;        /* wall span of the events                       */

    /* the chunk being read */
    uint32_t src;
    int clock_ok;
    uint64_t wall0, mono0, seg_wall;
    struct thr_map *thr_map; size_t n_thr_map;
    struct kmap *km;     size_t n_km;

    /* pools */
    struct rp_strtab thread_keys;        /* "src:tid" -> index                     */
    struct jthread *threads; size_t cap_threads;
    struct rp_strtab source_keys;
    struct source *sources;  size_t cap_sources;
    struct rp_strtab sym, cls, pkg;       /* id = index + 1                         */
    uint32_t *cls_pkg;       size_t cap_cls_pkg;   /* package id, 0: none          */
    struct stack_note *notes; size_t n_notes;      /* by CCT node                  */
    struct rp_strtab marks;               /* stack_note.markers                     */
    uint8_t *old_used;       size_t n_old_used;    /* classes of live objects     */

    /* CPU read minus CPU the jdk.ExecutionSample events stand for, in ns of
     * carry_period: in [-period/2, period - period/2) (cpu_events). */
    int64_t carry;
    uint64_t carry_period;

    uint64_t counts[JFR_EVENT_MAX];
};

/* ---------------------------------------------------------------- output -- */

static void put(struct jfr *j, const void *p, size_t n)
{
    if (j->failed || !n)
        return;
    if (fwrite(p, 1, n, j->body) != n) {
        j->failed = 1;
        j->err = errno ? errno : EIO;
    }
    j->written += n;
}

static void drain(struct jfr *j)
{
    put(j, j->buf.p, j->buf.n);
    j->buf.n = 0;
}

static int64_t ticks(const struct jfr *j, uint64_t wall)
{
    return (int64_t)(wall - j->base);
}

/* Begin an event of `type` at `wall`: its type id and start time. */
static void ev_begin(struct jfr *j, int type, uint64_t wall)
{
    j->ev.n = 0;
    rp_jfr_varint(&j->ev, (uint64_t)type);
    rp_jfr_long(&j->ev, ticks(j, wall));
    if (wall && (!j->tmin || wall < j->tmin))
        j->tmin = wall;
    if (wall > j->tmax)
        j->tmax = wall;
}

static void ev_end(struct jfr *j, int type)
{
    rp_jfr_event(&j->buf, &j->ev);
    j->counts[type]++;
    if (j->buf.n >= FLUSH_AT)
        drain(j);
}

/* ------------------------------------------------------------- the pools -- */

static uint32_t symbol(struct jfr *j, const char *s)
{
    return rp_strtab_cstr(&j->sym, s) + 1;
}

/* A Java type name as the profile shows it ("java.lang.String", "byte[]",
 * "app.Json$Node[][]") in the JVM's internal form, which JFR files hold
 * ("java/lang/String", "[B", "[[Lapp/Json$Node;"). Written to buf (cap bytes). */
static const char *internal_name(const char *name, char *buf, size_t cap)
{
    size_t len = strlen(name), dims = 0;
    while (len >= 2 && name[len - 2] == '[' && name[len - 1] == ']') {
        len -= 2;
        dims++;
    }
    static const char *const prim[][2] = {
        {"byte", "B"}, {"char", "C"}, {"double", "D"}, {"float", "F"}, {"int", "I"},
        {"long", "J"}, {"short", "S"}, {"boolean", "Z"}};
    size_t o = 0;
    for (size_t d = 0; d < dims && o + 1 < cap; d++)
        buf[o++] = '[';
    if (dims) {
        for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
            if (strlen(prim[i][0]) == len && !memcmp(name, prim[i][0], len)) {
                snprintf(buf + o, cap - o, "%s", prim[i][1]);
                return buf;
            }
        if (o + 1 < cap)
            buf[o++] = 'L';
    }
    for (size_t i = 0; i < len && o + 2 < cap; i++)
        buf[o++] = name[i] == '.' ? '/' : name[i];
    if (dims && o + 1 < cap)
        buf[o++] = ';';
    buf[o] = '\0';
    return buf;
}

/* The class named `iname` (internal form, or a library for native frames):
 * its pool id. The package is what precedes the last '/' of a plain class. */
static uint32_t class_id(struct jfr *j, const char *iname, int java)
{
    size_t before = j->cls.n;
    uint32_t idx = rp_strtab_cstr(&j->cls, iname);
    if (j->cls.n != before) {
        rp_xgrow_map((void **)&j->cls_pkg, &j->cap_cls_pkg, idx, sizeof *j->cls_pkg, 256, 0);
        const char *slash = java && iname[0] != '[' ? strrchr(iname, '/') : NULL;
        j->cls_pkg[idx] = slash ? rp_strtab_add(&j->pkg, iname, (size_t)(slash - iname)) + 1
                                : 0;
    }
    return idx + 1;
}

/* A class as the profile names it (rp_prof_chunk_class): its pool id, 0 for
 * none. */
static uint32_t java_class(struct jfr *j, const char *shown)
{
    if (!shown || !*shown)
        return 0;
    char buf[1024];
    return class_id(j, internal_name(shown, buf, sizeof buf), 1);
}

static struct source *source_at(struct jfr *j, uint32_t i)
{
    rp_xgrow_map((void **)&j->sources, &j->cap_sources, i, sizeof *j->sources, 8, 0);
    return &j->sources[i];
}

/* The output thread of the chunk's THREAD record `id`; 0 for none. A name that
 * differs from the first one seen is kept as the newest (shown as "renamed"). */
static uint32_t thread_id(struct jfr *j, const struct rp_profile *p, uint32_t id)
{
    const struct rp_thread_info *ti = id ? rp_prof_chunk_thread(p, id) : NULL;
    if (!ti)
        return 0;
    if (id < j->n_thr_map && j->thr_map[id].out && j->thr_map[id].seen == ti->time)
        return j->thr_map[id].out;
    uint32_t out = id < j->n_thr_map ? j->thr_map[id].out : 0;
    if (!out) {
        char key[48];
        snprintf(key, sizeof key, "%u:%llu", j->src, (unsigned long long)ti->os_tid);
        size_t before = j->thread_keys.n;
        uint32_t idx = rp_strtab_cstr(&j->thread_keys, key);
        if (j->thread_keys.n != before) {
            rp_xgrow_map((void **)&j->threads, &j->cap_threads, idx, sizeof *j->threads,
                         64, 0);
            struct jthread *t = &j->threads[idx];
            memset(t, 0, sizeof *t);
            t->os_tid = ti->os_tid;
            t->src = j->src;
            t->name = rp_xstrdup(ti->name ? ti->name : "");
        }
        out = idx + 1;
        rp_xgrow_map((void **)&j->thr_map, &j->n_thr_map, id, sizeof *j->thr_map, 64, 0);
        j->thr_map[id].out = out;
    }
    j->thr_map[id].seen = ti->time;
    struct jthread *t = &j->threads[out - 1];
    if (ti->java_tid)
        t->java_tid = ti->java_tid;
    if (ti->flags & RP_THREAD_JAVA)
        t->java = 1;
    const char *name = ti->name ? ti->name : "";
    if (strcmp(name, t->renamed ? t->renamed : t->name)) {
        free(t->renamed);
        t->renamed = strcmp(name, t->name) ? rp_xstrdup(name) : NULL;
    }
    return out;
}

/* The output thread of the chunk's VTHREAD record `id`: the virtual thread,
 * marked virtual as the JDK's own recordings mark it; 0 for none. */
static uint32_t vthread_id(struct jfr *j, const struct rp_profile *p, uint32_t id)
{
    const struct rp_vthread_info *vi = rp_prof_chunk_vthread(p, id);
    if (!vi)
        return 0;
    char key[48];
    snprintf(key, sizeof key, "%u:v%llu", j->src, (unsigned long long)vi->java_tid);
    size_t before = j->thread_keys.n;
    uint32_t idx = rp_strtab_cstr(&j->thread_keys, key);
    rp_xgrow_map((void **)&j->threads, &j->cap_threads, idx, sizeof *j->threads, 64, 0);
    struct jthread *t = &j->threads[idx];
    if (j->thread_keys.n != before) {
        memset(t, 0, sizeof *t);
        t->java_tid = vi->java_tid;
        t->src = j->src;
        t->java = t->virtual = 1;
        t->name = rp_xstrdup(vi->name);
    } else if (vi->name[0] && strcmp(vi->name, t->renamed ? t->renamed : t->name)) {
        free(t->renamed);
        t->renamed = strcmp(vi->name, t->name) && t->name[0] ? rp_xstrdup(vi->name) : NULL;
        if (!t->name[0]) {
            free(t->name);
            t->name = rp_xstrdup(vi->name);
        }
    }
    return idx + 1;
}

/* The stack trace id of a sample whose CCT leaf is `leaf`: the node of its
 * leaf frame (an alloc or live sample's class leaf is not a frame). 0: none. */
static uint32_t stack_id(struct jfr *j, const struct rp_profile *p, uint32_t leaf)
{
    const struct rp_prof_node *n = &p->nodes[leaf];
    if (n->kind == RP_PNODE_FRAME && p->frames[n->ref].type == RP_PFRAME_CLASS)
        leaf = n->parent;
    if (!leaf || leaf == RP_PROF_NONE)
        return 0;
    rp_xgrow_map((void **)&j->notes, &j->n_notes, leaf, sizeof *j->notes, 4096, 0);
    j->notes[leaf].used = 1;
    return leaf;
}

/* The note of stack trace `stack` (stack_id; 0: none), made on first use from
 * the path to the root: ringprof's markers leaf first, ';' between them, but
 * "[truncated]" (the stack's flag). */
static struct stack_note stack_note(struct jfr *j, const struct rp_profile *p, uint32_t stack)
{
    struct stack_note none = {0};
    if (!stack)
        return none;
    struct stack_note *n = &j->notes[stack];
    if (n->known)
        return *n;
    char buf[512];
    size_t len = 0;
    for (uint32_t k = stack; k && k != RP_PROF_NONE; k = p->nodes[k].parent) {
        const struct rp_prof_node *nd = &p->nodes[k];
        if (nd->kind != RP_PNODE_FRAME)
            continue;
        const struct rp_prof_frame *f = &p->frames[nd->ref];
        const char *name = p->methods[f->method].name;
        if (f->type != RP_FRAME_MARKER)
            n->frames = 1;
        else if (strcmp(name, "[truncated]") && len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? ";" : "", name);
    }
    n->known = 1;
    if (len)
        n->markers = rp_strtab_cstr(&j->marks, buf) + 1;
    return *n;
}

/* The markers of a note as a String field's value (NULL: none). */
static const char *markers_of(const struct jfr *j, struct stack_note n)
{
    return n.markers ? j->marks.s[n.markers - 1] : NULL;
}

/* A live object of class `cls` (0: unknown): its jdk.types.OldObject pool id,
 * the class's own (pool_old_objects), 0 for none. */
static uint32_t old_object(struct jfr *j, uint32_t cls)
{
    if (!cls)
        return 0;
    rp_xgrow_map((void **)&j->old_used, &j->n_old_used, cls, 1, 256, 0);
    j->old_used[cls] = 1;
    return cls;
}

/* --------------------------------------------------------------- samples -- */

static uint64_t wall_of(const struct jfr *j, uint64_t mono)
{
    return j->clock_ok ? j->wall0 + (mono - j->mono0) : mono;
}

static int in_range(const struct jfr *j, uint64_t wall)
{
    return (!j->po->from_wall || wall >= j->po->from_wall) &&
           (!j->po->to_wall || wall < j->po->to_wall);
}

static struct kmap *kind_map(struct jfr *j, uint32_t id, const struct rp_kind_info *ki)
{
    rp_xgrow_map((void **)&j->km, &j->n_km, id, sizeof *j->km, 8, 0);
    struct kmap *k = &j->km[id];
    if (k->h != H_UNSET)
        return k;
    memset(k->x, -1, sizeof k->x);
    k->name = ki && ki->name ? ki->name : "";
    k->unit = ki && ki->unit ? ki->unit : "";
    k->period = ki ? ki->period : 0;
    for (uint32_t i = 0; ki && i < ki->nextra && i < RP_MAX_EXTRA; i++)
        for (int x = 0; x < X_COUNT; x++)
            if (ki->extra[i] && !strcmp(ki->extra[i], X_NAMES[x]))
                k->x[x] = (int8_t)i;
    static const struct { const char *name; enum handler h; } H[] = {
        {"cpu", H_CPU}, {RP_KIND_WALL, H_WALL}, {"alloc", H_ALLOC},
        {RP_KIND_LIVE, H_LIVE}, {RP_KIND_LOCK, H_LOCK}, {RP_KIND_LOCK_WAITING, H_LOCK},
        {"gc", H_GC}};
    k->h = H_OTHER;
    for (size_t i = 0; i < sizeof H / sizeof H[0]; i++)
        if (!strcmp(k->name, H[i].name))
            k->h = H[i].h;
    return k;
}

static uint64_t xval(const struct kmap *k, const struct rp_event *ev, int x, uint64_t dflt)
{
    int i = k->x[x];
    return i >= 0 && (uint32_t)i < ev->u.sample.nextra ? ev->u.sample.extra[i] : dflt;
}

/* An extra that names a chunk id (class, thread): ids are 32 bits, so a value
 * above that names nothing (0), never the id its low half would alias. */
static uint32_t xid(const struct kmap *k, const struct rp_event *ev, int x)
{
    uint64_t v = xval(k, ev, x, 0);
    return v <= UINT32_MAX ? (uint32_t)v : 0;
}

static int has_x(const struct kmap *k, const struct rp_event *ev, int x)
{
    return k->x[x] >= 0 && (uint32_t)k->x[x] < ev->u.sample.nextra;
}

/* JFR's name of a ringprof thread state (jfr.h: JFR_STATE_*). */
static uint64_t jdk_state(unsigned st)
{
    switch (st) {
    case RP_TS_RUNNING: case RP_TS_RUNNABLE: case RP_TS_NATIVE: case RP_TS_IO:
        return JFR_STATE_RUNNABLE;
    case RP_TS_BLOCKED: return JFR_STATE_BLOCKED_ON_MONITOR_ENTER;
    case RP_TS_WAITING: return JFR_STATE_IN_OBJECT_WAIT;
    case RP_TS_PARKED: return JFR_STATE_PARKED;
    case RP_TS_SLEEPING: return JFR_STATE_SLEEPING;
    default: return JFR_STATE_UNKNOWN;
    }
}

/* How many jdk.ExecutionSample events the next CPU sample (weight w) is, so that
 * the events written stay round(CPU read / period): with the carry c in [-h,
 * p - h) (h = p/2), the sample adds w = q p + r, and n = q + (c + r + h >= p)
 * leaves c' = c + r - (n - q) p in the same range. Exact integer arithmetic for
 * any w; a sample of more than MAX_SPLIT periods (damaged) resets the carry. A
 * kind without a period is one event a sample. */
static uint64_t cpu_events(struct jfr *j, uint64_t p, uint64_t w)
{
    if (!p || p > (uint64_t)INT64_MAX / 4)
        return 1;
    int64_t h = (int64_t)(p / 2);
    if (p != j->carry_period) {      /* another recording's interval: rescale */
        double c = j->carry_period ? (double)j->carry * (double)p / (double)j->carry_period : 0;
        j->carry = c < (double)-h ? -h : c >= (double)((int64_t)p - h) ? (int64_t)p - h - 1
                                                                      : (int64_t)c;
        j->carry_period = p;
    }
    uint64_t q = w / p;
    if (q >= MAX_SPLIT) {
        j->carry = 0;
        return MAX_SPLIT;
    }
    int64_t y = j->carry + (int64_t)(w % p) + h;     /* in [0, 2p - 1) */
    int up = y >= (int64_t)p;
    j->carry = y - h - (up ? (int64_t)p : 0);
    return q + (uint64_t)up;
}

static void write_cpu(struct jfr *j, uint64_t wall, uint32_t thr, uint32_t stack,
                      const char *markers, const struct kmap *k, uint64_t w)
{
    uint64_t n = cpu_events(j, k->period, w);
    for (uint64_t i = 0; i < n; i++) {
        ev_begin(j, JFR_EXECUTION_SAMPLE, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        rp_jfr_varint(&j->ev, JFR_STATE_RUNNABLE);
        ev_end(j, JFR_EXECUTION_SAMPLE);
    }
    ev_begin(j, JFR_RP_CPU_SAMPLE, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, w);
    rp_jfr_varint(&j->ev, n);
    rp_jfr_string(&j->ev, markers);
    ev_end(j, JFR_RP_CPU_SAMPLE);
}

/* A wall sample: ringprof.WallClockSample, and in states native and io a
 * jdk.NativeMethodSample when a frame is left of its stack: the JDK samples a
 * thread in native code only when it has a Java frame. */
static void write_wall(struct jfr *j, const struct rp_profile *p, uint64_t wall,
                       uint32_t thr, uint32_t stack, struct stack_note note,
                       const struct kmap *k, const struct rp_event *ev)
{
    unsigned st = (unsigned)xval(k, ev, X_STATE, RP_TS_UNKNOWN);
    if (st >= RP_TS_COUNT)
        st = RP_TS_UNKNOWN;
    uint32_t blocker = java_class(j, rp_prof_chunk_class(p, xid(k, ev, X_BLOCKER_CLASS)));
    uint32_t owner = thread_id(j, p, xid(k, ev, X_BLOCKER_OWNER));
    if ((st == RP_TS_NATIVE || st == RP_TS_IO) && note.frames) {
        ev_begin(j, JFR_NATIVE_METHOD_SAMPLE, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        rp_jfr_varint(&j->ev, jdk_state(st));
        ev_end(j, JFR_NATIVE_METHOD_SAMPLE);
    }
    ev_begin(j, JFR_RP_WALL_SAMPLE, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, jdk_state(st));
    rp_jfr_varint(&j->ev, ev->u.sample.weight);
    rp_jfr_string(&j->ev, rp_thread_state_name(st));
    rp_jfr_varint(&j->ev, xval(k, ev, X_CPU_NS, 0));
    rp_jfr_bool(&j->ev, xval(k, ev, X_REPEAT, 0) != 0);
    rp_jfr_varint(&j->ev, blocker);
    rp_jfr_varint(&j->ev, owner);
    rp_jfr_string(&j->ev, markers_of(j, note));
    ev_end(j, JFR_RP_WALL_SAMPLE);
}

/* An alloc sample: jdk.ObjectAllocationSample and ringprof.AllocationSample; a
 * live one: jdk.OldObjectSample and ringprof.LiveObject. */
static void write_alloc(struct jfr *j, const struct rp_profile *p, uint64_t wall,
                        uint32_t thr, uint32_t stack, const char *markers,
                        const struct kmap *k, const struct rp_event *ev)
{
    uint32_t cls = java_class(j, rp_prof_chunk_class(p, xid(k, ev, X_CLASS)));
    uint64_t length = xval(k, ev, X_LENGTH, 0), weight = ev->u.sample.weight;
    int live = k->h == H_LIVE;
    if (live) {
        ev_begin(j, JFR_OLD_OBJECT_SAMPLE, wall);
        rp_jfr_varint(&j->ev, 0);                               /* duration      */
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        uint64_t age = xval(k, ev, X_AGE_MS, 0) * 1000000u;
        rp_jfr_long(&j->ev, ticks(j, wall - age));              /* allocationTime */
        rp_jfr_varint(&j->ev, xval(k, ev, X_SIZE, 0));          /* objectSize    */
        rp_jfr_varint(&j->ev, age);                             /* objectAge     */
        rp_jfr_varint(&j->ev, source_at(j, j->src)->heap_used); /* last heap     */
        rp_jfr_varint(&j->ev, old_object(j, cls));              /* object        */
        rp_jfr_int(&j->ev, length ? (int32_t)(length - 1) : INT32_MIN); /* arrayElements */
        rp_jfr_varint(&j->ev, 0);                               /* root: unknown */
        ev_end(j, JFR_OLD_OBJECT_SAMPLE);
    } else {
        ev_begin(j, JFR_ALLOCATION_SAMPLE, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, stack);
        rp_jfr_varint(&j->ev, cls);
        rp_jfr_varint(&j->ev, weight);
        ev_end(j, JFR_ALLOCATION_SAMPLE);
    }
    int type = live ? JFR_RP_LIVE_OBJECT : JFR_RP_ALLOCATION_SAMPLE;
    ev_begin(j, type, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, cls);
    rp_jfr_varint(&j->ev, weight);
    rp_jfr_varint(&j->ev, xval(k, ev, X_OBJECTS, 1));
    if (live) {
        rp_jfr_varint(&j->ev, xval(k, ev, X_AGE_GCS, 0));
    } else {
        rp_jfr_varint(&j->ev, xval(k, ev, X_SIZE, 0));
        rp_jfr_long(&j->ev, has_x(k, ev, X_LENGTH) ? (int64_t)length - 1 : -1);
    }
    rp_jfr_string(&j->ev, markers);
    ev_end(j, type);
}

/* ringprof.Sample: a kind without a JFR type, or what a JDK event of the sample
 * cannot say (its markers). */
static void write_sample(struct jfr *j, uint64_t wall, uint32_t thr, uint32_t stack,
                         const char *markers, const struct kmap *k,
                         const struct rp_event *ev)
{
    ev_begin(j, JFR_RP_SAMPLE, wall);
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_string(&j->ev, k->name);
    rp_jfr_varint(&j->ev, ev->u.sample.weight);
    rp_jfr_string(&j->ev, k->unit);
    rp_jfr_string(&j->ev, markers);
    ev_end(j, JFR_RP_SAMPLE);
}

static void write_lock(struct jfr *j, const struct rp_profile *p, uint64_t wall,
                       uint32_t thr, uint32_t stack, const struct kmap *k,
                       const struct rp_event *ev)
{
    uint32_t cls = java_class(j, rp_prof_chunk_class(p, xid(k, ev, X_CLASS)));
    uint32_t owner = thread_id(j, p, xid(k, ev, X_OWNER));
    ev_begin(j, JFR_MONITOR_ENTER, wall);
    rp_jfr_varint(&j->ev, ev->u.sample.weight);                 /* duration      */
    rp_jfr_varint(&j->ev, thr);
    rp_jfr_varint(&j->ev, stack);
    rp_jfr_varint(&j->ev, cls);
    rp_jfr_varint(&j->ev, owner);
    rp_jfr_varint(&j->ev, 0);                                   /* address       */
    ev_end(j, JFR_MONITOR_ENTER);
}

static void write_gc(struct jfr *j, uint64_t wall, const struct kmap *k,
                     const struct rp_event *ev)
{
    uint64_t d = ev->u.sample.weight, id = xval(k, ev, X_ID, 0);
    ev_begin(j, JFR_GARBAGE_COLLECTION, wall);
    rp_jfr_varint(&j->ev, d);
    rp_jfr_varint(&j->ev, 0);                                   /* eventThread   */
    rp_jfr_int(&j->ev, (int32_t)id);
    rp_jfr_varint(&j->ev, 0);                                   /* name: unknown */
    rp_jfr_varint(&j->ev, 0);                                   /* cause         */
    rp_jfr_varint(&j->ev, d);                                   /* sumOfPauses   */
    rp_jfr_varint(&j->ev, d);                                   /* longestPause  */
    ev_end(j, JFR_GARBAGE_COLLECTION);

    ev_begin(j, JFR_GC_PHASE_PAUSE, wall);
    rp_jfr_varint(&j->ev, d);
    rp_jfr_varint(&j->ev, 0);                                   /* eventThread   */
    rp_jfr_int(&j->ev, (int32_t)id);
    rp_jfr_string(&j->ev, "GC Pause");
    ev_end(j, JFR_GC_PHASE_PAUSE);

    uint64_t used = xval(k, ev, X_HEAP_USED, 0);
    if (!used)
        return;
    source_at(j, j->src)->heap_used = used;
    ev_begin(j, JFR_GC_HEAP_SUMMARY, wall + d);
    rp_jfr_int(&j->ev, (int32_t)id);
    rp_jfr_varint(&j->ev, JFR_GC_WHEN_AFTER);
    rp_jfr_varint(&j->ev, 0);                                   /* start         */
    rp_jfr_varint(&j->ev, 0);                                   /* committedEnd  */
    rp_jfr_varint(&j->ev, xval(k, ev, X_HEAP_COMMITTED, 0));
    rp_jfr_varint(&j->ev, 0);                                   /* reservedEnd   */
    rp_jfr_varint(&j->ev, 0);                                   /* reservedSize  */
    rp_jfr_varint(&j->ev, used);
    ev_end(j, JFR_GC_HEAP_SUMMARY);
}

static void on_sample(void *arg, const struct rp_profile *p, uint32_t leaf,
                      const struct rp_event *ev, const struct rp_kind_info *ki)
{
    struct jfr *j = arg;
    struct kmap *k = kind_map(j, ev->u.sample.kind, ki);
    uint64_t wall = wall_of(j, ev->u.sample.time);
    uint32_t thr = ev->u.sample.vthread ? vthread_id(j, p, ev->u.sample.vthread)
                                        : thread_id(j, p, ev->u.sample.thread);
    uint32_t stack = k->h == H_GC ? 0 : stack_id(j, p, leaf);
    struct stack_note note = stack_note(j, p, stack);
    const char *markers = markers_of(j, note);
    switch (k->h) {
    case H_CPU: write_cpu(j, wall, thr, stack, markers, k, ev->u.sample.weight); break;
    case H_WALL: write_wall(j, p, wall, thr, stack, note, k, ev); break;
    case H_ALLOC: case H_LIVE: write_alloc(j, p, wall, thr, stack, markers, k, ev); break;
    case H_LOCK:
        write_lock(j, p, wall, thr, stack, k, ev);
        /* The JDK's event has no field for ringprof's markers: a wait still in
         * progress ("[unfinished]") is said by a ringprof.Sample beside it. */
        if (markers)
            write_sample(j, wall, thr, stack, markers, k, ev);
        break;
    case H_GC: write_gc(j, wall, k, ev); break;
    default: write_sample(j, wall, thr, stack, markers, k, ev);
    }
}

/* ------------------------------------------------- gauges, counters, ... -- */

static void write_float(struct jfr *j, double v)
{
    rp_jfr_float(&j->ev, (float)(v < 0 ? 0 : v > 1 ? 1 : v));
}

/* jdk.CPULoad from the process's cumulative user and system CPU: once both
 * gauges have a reading at the same instant, the rates since the previous such
 * pair, as shares of the host's CPUs. */
static void cpu_load(struct jfr *j, struct source *s, uint64_t wall)
{
    if (s->user_t != wall || s->sys_t != wall || !s->cpus)
        return;
    if (s->p_t && wall > s->p_t && s->user >= s->p_user && s->sys >= s->p_sys) {
        double span = (double)(wall - s->p_t) * s->cpus;
        double user = (double)(s->user - s->p_user) / span;
        double sys = (double)(s->sys - s->p_sys) / span;
        ev_begin(j, JFR_CPU_LOAD, wall);
        write_float(j, user);
        write_float(j, sys);
        write_float(j, user + sys);
        ev_end(j, JFR_CPU_LOAD);
    }
    s->p_user = s->user;
    s->p_sys = s->sys;
    s->p_t = wall;
}

/* jdk.JavaThreadStatistics once the four Java thread gauges have a reading at
 * the same instant (the agent reads them together). */
static void java_threads(struct jfr *j, struct source *s, uint64_t wall)
{
    for (size_t i = 0; i < N_JAVA_THREAD_GAUGES; i++)
        if (s->jt_t[i] != wall)
            return;
    ev_begin(j, JFR_JAVA_THREAD_STATISTICS, wall);
    for (size_t i = 0; i < N_JAVA_THREAD_GAUGES; i++)
        rp_jfr_varint(&j->ev, s->jt[i]);
    ev_end(j, JFR_JAVA_THREAD_STATISTICS);
    memset(s->jt_t, 0, sizeof s->jt_t);
}

/* jdk.ThreadCPULoad from a thread's consecutive CPU readings, as the JDK writes
 * it: when the thread used 1 ms or more since its previous reading, that CPU
 * (at most the time between them) over the time between them times the host's
 * CPUs. It goes in `user`; `system` is NaN, unknown, as the thread's CPU clock
 * does not split user from system time. */
#define LOAD_MIN_CPU_NS 1000000u
static void thread_cpu_load(struct jfr *j, uint32_t thr, uint64_t wall, uint64_t cpu)
{
    struct jthread *t = &j->threads[thr - 1];
    int cpus = source_at(j, t->src)->cpus;
    if (t->cpu_t && wall > t->cpu_t && cpu >= t->cpu + LOAD_MIN_CPU_NS && cpus > 0) {
        uint64_t span = wall - t->cpu_t, used = cpu - t->cpu;
        ev_begin(j, JFR_THREAD_CPU_LOAD, wall);
        rp_jfr_varint(&j->ev, thr);
        write_float(j, (double)(used < span ? used : span) / ((double)span * cpus));
        rp_jfr_float(&j->ev, NAN);
        ev_end(j, JFR_THREAD_CPU_LOAD);
    }
    if (wall >= t->cpu_t) {
        t->cpu = cpu;
        t->cpu_t = wall;
    }
}

/* The index of a Java thread gauge in JAVA_THREAD_GAUGES, or -1. */
static int java_thread_gauge(const char *name)
{
    for (size_t i = 0; i < N_JAVA_THREAD_GAUGES; i++)
        if (!strcmp(name, JAVA_THREAD_GAUGES[i]))
            return (int)i;
    return -1;
}

static void on_gauge(struct jfr *j, const char *name, uint64_t wall, uint64_t value)
{
    struct source *s = source_at(j, j->src);
    int jt = java_thread_gauge(name);
    ev_begin(j, JFR_RP_GAUGE, wall);
    rp_jfr_string(&j->ev, name);
    rp_jfr_varint(&j->ev, value);
    ev_end(j, JFR_RP_GAUGE);
    if (!strcmp(name, RP_GAUGE_RSS)) {
        if (value > s->rss_peak)
            s->rss_peak = value;
        ev_begin(j, JFR_RESIDENT_SET_SIZE, wall);
        rp_jfr_varint(&j->ev, value);
        rp_jfr_varint(&j->ev, s->rss_peak);
        ev_end(j, JFR_RESIDENT_SET_SIZE);
    } else if (!strcmp(name, RP_GAUGE_CLASSES)) {
        ev_begin(j, JFR_CLASS_LOADING_STATISTICS, wall);
        rp_jfr_varint(&j->ev, value);
        ev_end(j, JFR_CLASS_LOADING_STATISTICS);
    } else if (!strcmp(name, RP_GAUGE_HEAP_USED)) {
        s->heap_used = value;
    } else if (!strcmp(name, RP_GAUGE_CPU_USER)) {
        s->user = value, s->user_t = wall;
        cpu_load(j, s, wall);
    } else if (!strcmp(name, RP_GAUGE_CPU_SYS)) {
        s->sys = value, s->sys_t = wall;
        cpu_load(j, s, wall);
    } else if (jt >= 0) {
        s->jt[jt] = value, s->jt_t[jt] = wall;
        java_threads(j, s, wall);
    }
}

static void on_event(void *arg, const struct rp_profile *p, const struct rp_event *ev)
{
    struct jfr *j = arg;
    switch (ev->type) {
    case RP_EV_SEGMENT:
        if (ev->u.seg.t_last)
            j->seg_wall = wall_of(j, ev->u.seg.t_last);
        break;
    case RP_EV_GAUGE: {
        uint64_t wall = wall_of(j, ev->u.gauge.time);
        if (ev->u.gauge.name && in_range(j, wall))
            on_gauge(j, ev->u.gauge.name, wall, ev->u.gauge.value);
        break;
    }
    case RP_EV_COUNTER:
        if (!ev->u.counter.name || !in_range(j, j->seg_wall))
            break;
        ev_begin(j, JFR_RP_COUNTER, j->seg_wall);
        rp_jfr_string(&j->ev, ev->u.counter.name);
        rp_jfr_varint(&j->ev, ev->u.counter.value);
        ev_end(j, JFR_RP_COUNTER);
        break;
    case RP_EV_THREAD_CPU: {
        uint64_t wall = wall_of(j, ev->u.thread_cpu.time);
        uint32_t thr = thread_id(j, p, ev->u.thread_cpu.thread);
        if (!thr || !in_range(j, wall))
            break;
        ev_begin(j, JFR_RP_THREAD_CPU, wall);
        rp_jfr_varint(&j->ev, thr);
        rp_jfr_varint(&j->ev, ev->u.thread_cpu.cpu_ns);
        ev_end(j, JFR_RP_THREAD_CPU);
        thread_cpu_load(j, thr, wall, ev->u.thread_cpu.cpu_ns);
        break;
    }
    default:
        break;
    }
}

static const char *meta_or(const struct rp_reader *r, const char *key, const char *dflt)
{
    const char *v = rp_reader_meta(r, key);
    return v ? v : dflt;
}

static uint64_t meta_num(const struct rp_reader *r, const char *key)
{
    const char *v = rp_reader_meta(r, key);
    return v ? strtoull(v, NULL, 10) : 0;
}

/* A chunk begins: its clock and recording; the recording's first chunk writes
 * jdk.JVMInformation. A chunk ends: ringprof.Recording with its header and
 * what reading it found. */
static void on_chunk(void *arg, const struct rp_profile *p, const struct rp_reader *r,
                     int end)
{
    struct jfr *j = arg;
    (void)p;
    if (end) {
        struct rp_reader_stats st;
        rp_reader_stats(r, &st);
        size_t n;
        const struct rp_kv *kv = rp_reader_meta_all(r, &n);
        struct rp_jfr_buf all = {0};
        for (size_t i = 0; i < n; i++) {
            rp_jfr_bytes(&all, kv[i].key, strlen(kv[i].key));
            rp_jfr_u8(&all, '=');
            rp_jfr_bytes(&all, kv[i].value, strlen(kv[i].value));
            rp_jfr_u8(&all, '\n');
        }
        rp_jfr_u8(&all, '\0');
        ev_begin(j, JFR_RP_RECORDING, j->wall0);
        rp_jfr_string(&j->ev, meta_or(r, RP_META_RECORDING, NULL));
        rp_jfr_varint(&j->ev, meta_num(r, RP_META_CHUNK_SEQ));
        rp_jfr_varint(&j->ev, meta_num(r, RP_META_PID));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_HOST, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_NAME, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_VERSION, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_OPTIONS, NULL));
        rp_jfr_string(&j->ev, meta_or(r, RP_META_PRODUCER, NULL));
        rp_jfr_string(&j->ev, rp_reader_path(r));
        rp_jfr_string(&j->ev, (const char *)all.p);
        rp_jfr_varint(&j->ev, st.segments_ok);
        rp_jfr_varint(&j->ev, st.segments_bad);
        rp_jfr_varint(&j->ev, st.segments_partial);
        ev_end(j, JFR_RP_RECORDING);
        rp_jfr_buf_free(&all);
        return;
    }
    const char *w = rp_reader_meta(r, RP_META_START_WALL);
    const char *m = rp_reader_meta(r, RP_META_START_MONO);
    j->clock_ok = w && m;
    j->wall0 = meta_num(r, RP_META_START_WALL);
    j->mono0 = meta_num(r, RP_META_START_MONO);
    j->seg_wall = j->wall0;
    if (!j->have_base) {
        j->base = j->wall0;
        j->have_base = 1;
    }
    if (j->thr_map)
        memset(j->thr_map, 0, j->n_thr_map * sizeof *j->thr_map);
    if (j->km)
        memset(j->km, 0, j->n_km * sizeof *j->km);

    char key[512];
    size_t before = j->source_keys.n;
    j->src = rp_strtab_cstr(&j->source_keys, rp_recording_key(r, key, sizeof key));
    struct source *s = source_at(j, j->src);
    if (!s->cpus)
        s->cpus = (int)meta_num(r, RP_META_HOST_CPUS);
    if (j->source_keys.n == before)
        return;
    ev_begin(j, JFR_JVM_INFORMATION, j->wall0);
    rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_NAME, NULL));
    rp_jfr_string(&j->ev, meta_or(r, RP_META_JVM_VERSION, NULL));
    rp_jfr_string(&j->ev, meta_or(r, RP_META_OPTIONS, NULL));
    rp_jfr_string(&j->ev, "");
    rp_jfr_string(&j->ev, "");
    rp_jfr_varint(&j->ev, j->wall0 / 1000000u);   /* the chunk's start, in ms    */
    rp_jfr_varint(&j->ev, meta_num(r, RP_META_PID));
    ev_end(j, JFR_JVM_INFORMATION);
}

/* ------------------------------------------------------------ checkpoint -- */

/* A pool of simple values, ids first, first + 1, ... */
static void pool_fixed(struct rp_jfr_buf *b, int type, uint64_t first,
                       const char *const *names, size_t n)
{
    rp_jfr_varint(b, (uint64_t)type);
    rp_jfr_varint(b, n);
    for (size_t i = 0; i < n; i++) {
        rp_jfr_varint(b, first + i);
        rp_jfr_string(b, names[i]);
    }
}

/* Pools are written through j->buf like events: drained now and then, so a
 * pool of any size takes bounded memory. */
static void maybe_drain(struct jfr *j)
{
    if (j->buf.n >= FLUSH_AT)
        drain(j);
}

/* Threads are named as every other format names them: by the profile's thread
 * of the same recording and tid, whose name has seen every thread record of
 * the inputs, also those that come after the thread's last event (main is
 * renamed DestroyJavaVM after its last sample). The writer's own names, from
 * the records its events saw, are for threads the profile does not have (one
 * with thread CPU readings only). */
/* Each pool_* function below writes its pool(s) unless empty (the JDK's reader
 * refuses a pool of no entries: "Pool java.lang.Thread must contain at least
 * one element"); @return the pools written. */
static int pool_threads(struct jfr *j, const struct rp_profile *p)
{
    if (!j->thread_keys.n)
        return 0;
    struct rp_strtab prof_keys;                        /* "recording tid" -> index */
    rp_strtab_init(&prof_keys);
    char key[640];
    for (size_t k = 0; k < p->nthreads; k++) {         /* one key per thread */
        const struct rp_prof_thread *pt = &p->threads[k];
        snprintf(key, sizeof key, "%s %llu %llu", p->sources[pt->source].recording,
                 (unsigned long long)pt->os_tid, (unsigned long long)pt->vthread);
        rp_strtab_cstr(&prof_keys, key);
    }
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_THREAD);
    rp_jfr_varint(b, j->thread_keys.n);
    for (size_t i = 0; i < j->thread_keys.n; i++) {
        const struct jthread *t = &j->threads[i];
        if (t->virtual) {
            char name[1024];
            rp_thread_display(name, sizeof name, t->name, t->renamed);
            rp_jfr_varint(b, i + 1);
            rp_jfr_string(b, NULL);                    /* osName: none          */
            rp_jfr_varint(b, 0);                       /* osThreadId            */
            rp_jfr_string(b, name);                    /* javaName ("" unnamed) */
            rp_jfr_varint(b, t->java_tid);
            rp_jfr_varint(b, 0);                       /* group                 */
            rp_jfr_bool(b, 1);                         /* virtual               */
            maybe_drain(j);
            continue;
        }
        snprintf(key, sizeof key, "%s %llu 0", j->source_keys.s[t->src],
                 (unsigned long long)t->os_tid);
        uint32_t k = rp_strtab_cstr(&prof_keys, key);
        const char *first = t->name, *renamed = t->renamed;
        if (k < p->nthreads && p->threads[k].name[0]) {
            first = p->threads[k].name;
            renamed = p->threads[k].renamed;
        }
        char name[1024];
        if (first[0])
            rp_thread_display(name, sizeof name, first, renamed);
        else
            snprintf(name, sizeof name, "[tid %llu]", (unsigned long long)t->os_tid);
        rp_jfr_varint(b, i + 1);
        rp_jfr_string(b, name);                        /* osName                */
        rp_jfr_varint(b, t->os_tid);
        rp_jfr_string(b, t->java ? name : NULL);       /* javaName              */
        rp_jfr_varint(b, t->java ? t->java_tid : 0);
        rp_jfr_varint(b, 0);                           /* group                 */
        rp_jfr_bool(b, 0);                             /* virtual               */
        maybe_drain(j);
    }
    rp_strtab_free(&prof_keys);
    return 1;
}

/* Whether the stack stays whole when marker `name` is left out of it: a
 * sample without frames ("[no stack]"), a thread with no Java frames
 * ("[no_java_frames]") or none the native walk found ("[not_java]"), the
 * agent's own work above its Java caller ("[ringprof:alloc]"). Every other
 * marker ("[truncated]", a failed walk's "[agct:gc_active]", a damaged file's
 * "[unknown frame]") stands for frames that are missing: the stack's
 * `truncated` flag says so, as JFR says it of a stack cut at its depth. */
static int marker_keeps_whole(const char *name)
{
    return !strcmp(name, "[no stack]") || !strcmp(name, "[no_java_frames]") ||
           !strcmp(name, "[not_java]") || !strncmp(name, "[ringprof", 9);
}

/* Every stack trace used: the path from its node to the root, leaf first,
 * without the profile's markers (struct stack_note). */
static int pool_stacks(struct jfr *j, const struct rp_profile *p, uint8_t *method_used)
{
    struct rp_jfr_buf *b = &j->buf;
    size_t n = 0;
    for (size_t i = 0; i < j->n_notes; i++)
        n += j->notes[i].used;
    if (!n)
        return 0;
    rp_jfr_varint(b, JFR_STACK_TRACE);
    rp_jfr_varint(b, n);
    struct rp_jfr_buf frames = {0};
    for (size_t i = 0; i < j->n_notes; i++) {
        if (!j->notes[i].used)
            continue;
        frames.n = 0;
        int truncated = 0;
        uint64_t nframes = 0;
        for (uint32_t k = (uint32_t)i; k && k != RP_PROF_NONE; k = p->nodes[k].parent) {
            const struct rp_prof_node *nd = &p->nodes[k];
            if (nd->kind != RP_PNODE_FRAME)
                continue;
            const struct rp_prof_frame *f = &p->frames[nd->ref];
            if (f->type == RP_FRAME_MARKER) {
                truncated |= !marker_keeps_whole(p->methods[f->method].name);
                continue;
            }
            method_used[f->method] = 1;
            int type = f->type < RP_FRAME_MARKER ? f->type : RP_FRAME_NATIVE;
            rp_jfr_varint(&frames, (uint64_t)f->method + 1);
            rp_jfr_int(&frames, f->line && f->line <= INT32_MAX ? (int32_t)f->line : -1);
            rp_jfr_int(&frames, f->bci);
            rp_jfr_varint(&frames, (uint64_t)type);
            nframes++;
        }
        rp_jfr_varint(b, i);
        rp_jfr_bool(b, truncated);
        rp_jfr_varint(b, nframes);
        rp_jfr_bytes(b, frames.p, frames.n);
        maybe_drain(j);
    }
    rp_jfr_buf_free(&frames);
    return 1;
}

/* The "class" of a native, C++ or kernel frame: its library as recorded, but
 * never with a leading '[' ("[vm stub]" is "vm stub"): readers take a class
 * name that starts so for an array's descriptor, and JMC's parser throws on
 * "[vm stub]". */
static const char *plain_class(const char *lib, char *buf, size_t cap)
{
    if (lib[0] != '[')
        return lib;
    size_t len = strlen(lib + 1);
    if (len && lib[len] == ']')
        len--;
    snprintf(buf, cap, "%.*s", (int)len, lib + 1);
    return buf;
}

/* Every method a stack names. A Java method's class is its JVM name; a native,
 * C++ or kernel frame's is its library (plain_class); a marker's is "". */
static int pool_methods(struct jfr *j, const struct rp_profile *p,
                        const uint8_t *method_used)
{
    struct rp_jfr_buf *b = &j->buf;
    size_t n = 0;
    for (size_t m = 0; m < p->nmethods; m++)
        n += method_used[m];
    if (!n)
        return 0;
    rp_jfr_varint(b, JFR_METHOD);
    rp_jfr_varint(b, n);
    char buf[1024];
    for (size_t m = 0; m < p->nmethods; m++) {
        if (!method_used[m])
            continue;
        const struct rp_prof_method *me = &p->methods[m];
        uint32_t cls = me->plain ? class_id(j, plain_class(me->klass, buf, sizeof buf), 0)
                                 : class_id(j, internal_name(me->klass, buf, sizeof buf), 1);
        rp_jfr_varint(b, m + 1);
        rp_jfr_varint(b, cls);
        rp_jfr_varint(b, symbol(j, me->name));
        /* Readers parse the descriptor ("(" params ")" return): a frame with
         * none (native, C++, kernel, markers) gets an empty one, "()V". */
        rp_jfr_varint(b, symbol(j, me->signature[0] == '(' ? me->signature : "()V"));
        rp_jfr_int(b, 0);                              /* modifiers             */
        rp_jfr_bool(b, 0);                             /* hidden                */
        maybe_drain(j);
    }
    return 1;
}

/* The live objects' pool: one entry a class, address and description unknown
 * (the JDK's OldObjectSample refers to its object through the pool). */
static int pool_old_objects(struct jfr *j)
{
    size_t n = 0;
    for (size_t i = 0; i < j->n_old_used; i++)
        n += j->old_used[i];
    if (!n)
        return 0;
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_OLD_OBJECT);
    rp_jfr_varint(b, n);
    for (size_t i = 0; i < j->n_old_used; i++) {
        if (!j->old_used[i])
            continue;
        rp_jfr_varint(b, i);                           /* id: the class's       */
        rp_jfr_varint(b, 0);                           /* address               */
        rp_jfr_varint(b, i);                           /* type                  */
        rp_jfr_string(b, NULL);                        /* description           */
        maybe_drain(j);
    }
    return 1;
}

static int pool_classes(struct jfr *j)
{
    if (!j->cls.n)
        return 0;   /* no class, no package */
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_CLASS);
    rp_jfr_varint(b, j->cls.n);
    for (size_t i = 0; i < j->cls.n; i++) {
        rp_jfr_varint(b, i + 1);
        rp_jfr_varint(b, 0);                           /* classLoader           */
        rp_jfr_varint(b, symbol(j, j->cls.s[i]));
        rp_jfr_varint(b, j->cls_pkg[i]);
        rp_jfr_int(b, 0);                              /* modifiers             */
        rp_jfr_bool(b, 0);                             /* hidden                */
        maybe_drain(j);
    }
    if (!j->pkg.n)
        return 1;
    rp_jfr_varint(b, JFR_PACKAGE);
    rp_jfr_varint(b, j->pkg.n);
    for (size_t i = 0; i < j->pkg.n; i++) {
        rp_jfr_varint(b, i + 1);
        rp_jfr_varint(b, symbol(j, j->pkg.s[i]));
        maybe_drain(j);
    }
    return 2;
}

static int pool_symbols(struct jfr *j)
{
    if (!j->sym.n)
        return 0;
    struct rp_jfr_buf *b = &j->buf;
    rp_jfr_varint(b, JFR_SYMBOL);
    rp_jfr_varint(b, j->sym.n);
    for (size_t i = 0; i < j->sym.n; i++) {
        rp_jfr_varint(b, i + 1);
        rp_jfr_utf8(b, j->sym.s[i]);
        maybe_drain(j);
    }
    return 1;
}

/* Overwrite body bytes [at, at+n) (the checkpoint's size, the header). */
static void patch(struct jfr *j, uint64_t at, const void *p, size_t n)
{
    drain(j);
    if (j->failed)
        return;
    if (fflush(j->body) || fseeko(j->body, (off_t)(j->body_start + at), SEEK_SET) ||
        fwrite(p, 1, n, j->body) != n || fflush(j->body) ||
        fseeko(j->body, 0, SEEK_END)) {
        j->failed = 1;
        j->err = errno ? errno : EIO;
    }
}

/* The checkpoint event: every pool. Its size comes first but the pools are
 * streamed, so it is a 5-byte varint (padded with continuation bits, which
 * readers accept) patched at the end: checkpoints up to 32 GiB. So is the
 * number of pools (one byte: at most 10), as empty ones are left out. @return
 * its offset in the chunk. */
#define SIZE_PAD 5
static uint64_t write_checkpoint(struct jfr *j, const struct rp_profile *p)
{
    drain(j);
    uint64_t start = j->written;
    uint8_t size[SIZE_PAD] = {0x80, 0x80, 0x80, 0x80, 0};
    rp_jfr_bytes(&j->buf, size, sizeof size);
    rp_jfr_varint(&j->buf, JFR_CHECKPOINT);
    rp_jfr_long(&j->buf, ticks(j, j->tmax));
    rp_jfr_varint(&j->buf, 0);                         /* duration              */
    rp_jfr_varint(&j->buf, 0);                         /* delta to previous: none */
    rp_jfr_u8(&j->buf, 1);                             /* type: flush           */
    uint64_t pools_at = start + j->buf.n;
    rp_jfr_u8(&j->buf, 0);                             /* pools, below          */

    static const char *const frame_types[RP_FRAME_MARKER] = {
        "Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel"};
    pool_fixed(&j->buf, JFR_FRAME_TYPE, 0, frame_types, RP_FRAME_MARKER);
    static const char *const states[JFR_STATE_COUNT] = {
        "STATE_RUNNABLE", "STATE_SLEEPING", "STATE_IN_OBJECT_WAIT", "STATE_PARKED",
        "STATE_BLOCKED_ON_MONITOR_ENTER", "STATE_UNKNOWN"};
    pool_fixed(&j->buf, JFR_THREAD_STATE, 1, states, JFR_STATE_COUNT);
    static const char *const when[] = {"After GC"};
    pool_fixed(&j->buf, JFR_GC_WHEN, JFR_GC_WHEN_AFTER, when, 1);
    uint8_t pools = 3 + (uint8_t)pool_threads(j, p);
    /* Stacks name methods, methods classes, classes packages, and all of them
     * symbols: written in that order, each pool is complete when written. */
    uint8_t *method_used = rp_xcalloc(p->nmethods ? p->nmethods : 1, 1);
    pools += (uint8_t)pool_stacks(j, p, method_used);
    pools += (uint8_t)pool_methods(j, p, method_used);
    free(method_used);
    pools += (uint8_t)pool_old_objects(j);
    pools += (uint8_t)pool_classes(j);
    pools += (uint8_t)pool_symbols(j);
    drain(j);
    patch(j, pools_at, &pools, 1);

    uint64_t n = j->written - start;
    for (int i = 0; i < SIZE_PAD; i++)
        size[i] = (uint8_t)(((n >> (7 * i)) & 0x7f) | (i < SIZE_PAD - 1 ? 0x80 : 0));
    patch(j, start, size, sizeof size);
    return start;
}

/* --------------------------------------------------------------- writer -- */

/* Where the chunk goes: straight to `out` when it can seek (a file), else to a
 * temporary file copied to `out` at the end (a pipe). */
static int open_body(struct jfr *j)
{
    off_t at = ftello(j->out);
    if (at >= 0 && fseeko(j->out, at, SEEK_SET) == 0) {
        j->body = j->out;
        j->body_start = (uint64_t)at;
        return 0;
    }
    j->body = tmpfile();
    if (!j->body)
        return -1;
    return 0;
}

static int copy_spool(struct jfr *j)
{
    char chunk[1 << 16];
    size_t n;
    if (fflush(j->body) || fseeko(j->body, 0, SEEK_SET))
        return -1;
    while ((n = fread(chunk, 1, sizeof chunk, j->body)) > 0)
        if (fwrite(chunk, 1, n, j->out) != n)
            return -1;
    return ferror(j->body) ? -1 : 0;
}

/* What was written, on stderr: the events per type. */
static void report(const struct jfr *j)
{
    static const struct { int type; const char *name; } T[] = {
        {JFR_EXECUTION_SAMPLE, "jdk.ExecutionSample"},
        {JFR_RP_CPU_SAMPLE, "ringprof.CPUSample"},
        {JFR_NATIVE_METHOD_SAMPLE, "jdk.NativeMethodSample"},
        {JFR_RP_WALL_SAMPLE, "ringprof.WallClockSample"},
        {JFR_ALLOCATION_SAMPLE, "jdk.ObjectAllocationSample"},
        {JFR_OLD_OBJECT_SAMPLE, "jdk.OldObjectSample"},
        {JFR_MONITOR_ENTER, "jdk.JavaMonitorEnter"},
        {JFR_GARBAGE_COLLECTION, "jdk.GarbageCollection"},
        {JFR_RP_SAMPLE, "ringprof.Sample"}};
    fprintf(stderr, "ringprof convert: jfr:");
    const char *sep = " ";
    uint64_t other = 0;
    for (int t = 0; t < JFR_EVENT_MAX; t++)
        other += j->counts[t];
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        other -= j->counts[T[i].type];
        if (j->counts[T[i].type]) {
            fprintf(stderr, "%s%llu %s", sep, (unsigned long long)j->counts[T[i].type],
                    T[i].name);
            sep = ", ";
        }
    }
    fprintf(stderr, "%s%llu other events (telemetry, GC details, recording metadata)\n",
            sep, (unsigned long long)other);
}

int rp_out_jfr(FILE *out, rp_jfr_build_fn build, void *build_arg,
               struct rp_prof_options *po, const struct rp_out_options *o,
               struct rp_profile **built)
{
    struct jfr j;
    memset(&j, 0, sizeof j);
    j.out = out;
    j.po = po;
    rp_strtab_init(&j.thread_keys);
    rp_strtab_init(&j.source_keys);
    rp_strtab_init(&j.sym);
    rp_strtab_init(&j.cls);
    rp_strtab_init(&j.pkg);
    rp_strtab_init(&j.marks);
    int rc = open_body(&j);
    if (rc == 0) {
        uint8_t header[RP_JFR_HEADER_SIZE] = {0};
        put(&j, header, sizeof header);                /* patched at the end    */

        /* Frames carry both the line and the bci; --include/--exclude see
         * methods, as by default in the other formats. A method carries its
         * descriptor, as the JDK writes it, so overloads stay apart (their
         * readers show the parameter lists). */
        po->granularity = RP_GRAN_FULL;
        if (po->norm.signatures == RP_SIG_MERGE)
            po->norm.signatures = RP_SIG_KEEP;
        po->per_thread = 0;
        po->state_frames = 0;
        po->on_sample = on_sample;
        po->on_event = on_event;
        po->on_chunk = on_chunk;
        po->on_sample_arg = &j;
        struct rp_profile *p = build(build_arg, po);
        *built = p;
        drain(&j);

        uint64_t cp = write_checkpoint(&j, p);
        uint64_t meta = j.written;
        rp_jfr_metadata(&j.buf, ticks(&j, j.tmax));
        drain(&j);
        if (!j.tmin)
            j.tmin = j.tmax = j.base;
        struct rp_jfr_header h = {
            .size = j.written, .cp_offset = cp, .meta_offset = meta,
            .start_nanos = j.tmin, .duration_nanos = j.tmax - j.tmin,
            .start_ticks = (uint64_t)ticks(&j, j.tmin), .ticks_per_second = 1000000000u};
        rp_jfr_header(header, &h);
        patch(&j, 0, header, sizeof header);
        if (!j.failed && j.body != j.out && copy_spool(&j)) {
            j.failed = 1;
            j.err = errno ? errno : EIO;
        }
        rc = j.failed ? -1 : 0;
        if (!j.failed && !o->quiet)
            report(&j);
    }
    int err = j.failed ? j.err : errno;
    if (j.body && j.body != j.out)
        fclose(j.body);
    rp_jfr_buf_free(&j.ev);
    rp_jfr_buf_free(&j.buf);
    for (size_t i = 0; i < j.thread_keys.n; i++) {
        free(j.threads[i].name);
        free(j.threads[i].renamed);
    }
    free(j.threads);
    free(j.sources);
    free(j.cls_pkg);
    free(j.notes);
    rp_strtab_free(&j.marks);
    free(j.old_used);
    free(j.thr_map);
    free(j.km);
    rp_strtab_free(&j.thread_keys);
    rp_strtab_free(&j.source_keys);
    rp_strtab_free(&j.sym);
    rp_strtab_free(&j.cls);
    rp_strtab_free(&j.pkg);
    errno = err;
    return rc;
}
