/*
 * tools/outputs/out_otlp.c — `ringprof convert --format otlp`: OpenTelemetry profiles,
 * an ExportProfilesServiceRequest of opentelemetry-proto's profiles/v1development
 * as the OTLP/HTTP receiver takes it (`POST /v1development/profiles`,
 * `Content-Type: application/x-protobuf`). The field numbers are those of
 * opentelemetry-proto v1.10.0, wire-identical to v1.11.0, which the Collector
 * v0.165.0's pdata (v1.71.0) decodes; docs/profiles.md, "otlp", is the users'
 * version of the mapping below.
 *
 * Model. One pass over the inputs with every kind (rp_prof_options.all_kinds,
 * or --event's alone), per thread, frames at RP_GRAN_FULL (line and bci kept,
 * displayed and filtered by their method, as collapsed does by default). The
 * builder's calling context tree holds the call paths; on_sample adds each
 * sample to an entry per (leaf node, kind, thread state), so memory is the
 * distinct call paths as for every format, never the samples. A live
 * snapshot is a level, not events: each recording keeps the entries of its
 * newest snapshot only (an entry from an older one is emptied when a newer
 * one reaches it), which is what `convert --event live` shows by default.
 *
 * Mapping.
 *   request   one ResourceProfiles per recording (rp_prof_source), one
 *             ScopeProfiles ("ringprof", its version) in each, and the
 *             request-level ProfilesDictionary every index points into.
 *   resource  service.name (rp_out_service_name), host.name, process.pid,
 *             process.runtime.name/version/description (the header's Java
 *             runtime), ringprof.recording.id, then the labels: the header's
 *             (agent option labels=) and --label's, which win.
 *   profiles  one per sample type: cpu -> cpu/nanoseconds; wall ->
 *             wall/nanoseconds; alloc -> alloc_space/bytes and
 *             alloc_objects/count; live -> inuse_space/bytes and
 *             inuse_objects/count; lock -> delay/nanoseconds and
 *             contentions/count; another kind -> KIND/its unit. period_type is
 *             the first sample type with the kind's nominal period, or for a
 *             kind without one (lock, live, gc) its last sample type with
 *             period 1 (contentions/count for lock, as Go's mutex profile):
 *             Grafana Pyroscope names a profile after its period type and
 *             refuses one without; time_unix_nano and duration_nano span the
 *             recording's chunks (their headers' start to their last segment)
 *             and its kept samples, within --from/--to; profile_id is a hash
 *             of (recording, sample type, span), so the same chunks give the
 *             same id; the attribute ringprof.kind names the kind.
 *   samples   one per (stack, thread, state) with one value, no timestamps
 *             (the aggregated shape of the proto's Sample comment); a value of
 *             0 is left out. Attributes: thread.name, thread.id (Java threads:
 *             the Java id), ringprof.thread.tid (the OS id), for a virtual
 *             thread's samples ringprof.thread.carrier (the carrier's name;
 *             the ids are the virtual thread's and its carrier's); wall also
 *             ringprof.thread.state and jvm.thread.state.
 *   frames    one Location per (function, line, frame type), one Line each
 *             (the line, 0 when unknown); attributes profile.frame.type (jvm,
 *             native, kernel) and ringprof.frame.type (interpreted, jit,
 *             inlined, native, cpp, kernel, marker, class); native frames map
 *             to their library (Mapping.filename). One Function per method:
 *             name, system_name (out_system_name) and filename as in pprof.
 *             A Stack per distinct list of locations, leaf first.
 *
 * Writing. A top-level protobuf message has no length and its fields may come
 * in any order, so each ResourceProfiles is encoded in memory and written, and
 * the dictionary follows: the output is streamed, needs no seek and is written
 * whole or reported failed (errno). Strings are made valid UTF-8
 * (rp_pb_string).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "model/stream.h"
#include "model/strtab.h"
#include "model/xalloc.h"
#include "out_common.h"
#include "pb.h"
#include "ringprof/events.h"
#include "ringprof/format.h"
#include "ringprof/hash.h"

/* Field numbers: opentelemetry/proto/{collector/,}profiles/v1development,
 * common/v1 and resource/v1. */
enum {
    REQ_RESOURCE_PROFILES = 1, REQ_DICTIONARY = 2,
    RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2,
    RES_ATTRIBUTES = 1,
    SP_SCOPE = 1, SP_PROFILES = 2,
    SCOPE_NAME = 1, SCOPE_VERSION = 2,
    KV_KEY = 1, KV_VALUE = 2,
    ANY_STRING = 1, ANY_INT = 3,
    PROF_SAMPLE_TYPE = 1, PROF_SAMPLES = 2, PROF_TIME = 3, PROF_DURATION = 4,
    PROF_PERIOD_TYPE = 5, PROF_PERIOD = 6, PROF_ID = 7, PROF_ATTRIBUTES = 11,
    VT_TYPE = 1, VT_UNIT = 2,
    SAMPLE_STACK = 1, SAMPLE_ATTRIBUTES = 2, SAMPLE_VALUES = 4,
    DICT_MAPPINGS = 1, DICT_LOCATIONS = 2, DICT_FUNCTIONS = 3, DICT_LINKS = 4,
    DICT_STRINGS = 5, DICT_ATTRIBUTES = 6, DICT_STACKS = 7,
    MAPPING_FILENAME = 4,
    LOC_MAPPING = 1, LOC_LINES = 3, LOC_ATTRIBUTES = 4,
    LINE_FUNCTION = 1, LINE_LINE = 2,
    FN_NAME = 1, FN_SYSTEM_NAME = 2, FN_FILENAME = 3,
    LINK_TRACE_ID = 1, LINK_SPAN_ID = 2,
    KVU_KEY = 1, KVU_VALUE = 2
};

/* Where a profile's value comes from. */
enum vsrc { V_SAMPLES = 0, V_WEIGHT = 1, V_OBJECTS = 2 };

struct ptype {
    const char *type, *unit;
    enum vsrc src;
};

/* A kind, by name over every chunk, and its profiles. */
struct okind {
    char *name;
    uint64_t period;
    int live;                   /* snapshots: the newest per recording only     */
    struct ptype pt[2];
    int npt;
    char *unit;                 /* the OTLP unit of a kind not in the table     */
};

/* A chunk's kind id: its slot (+1; 0: not looked at yet). */
struct ckind {
    int slot1;
};

/* The figures of one (leaf, kind, state); next chains a leaf's entries. */
struct entry {
    uint32_t leaf, next, src;
    uint16_t slot;
    uint8_t state;              /* thread state + 1; 0: the kind has none       */
    uint64_t stamp;             /* live: the snapshot (monotonic ns) it holds   */
    uint64_t v[3];
};

/* What a recording adds to its resource and its time span. */
struct osrc {
    int seen;
    char *runtime_name, *runtime_version, *description;
    uint64_t t0, t1;            /* wall ns: chunks and samples                  */
    uint64_t live_t;            /* the newest live snapshot (monotonic ns)      */
};

/* A Sample of the output, before it is grouped into its profile. */
struct row {
    uint32_t src, slot, stack, thread;
    uint32_t state;
    uint64_t v[3];
};

struct otlp {
    const struct rp_prof_options *po;
    const struct rp_out_options *o;
    const struct rp_profile *p;

    /* the chunk being read */
    struct rp_stream *st;                      /* the builder's (rp_prof_stream) */
    uint32_t src;                              /* its recording: p->sources     */
    struct ckind *ck;  size_t n_ck;

    struct okind *kinds; size_t nkinds;
    struct entry *e;   size_t ne, cap_e;
    uint32_t *head;    size_t n_head;          /* by leaf node: first entry + 1 */
    struct osrc *srcs; size_t n_srcs;

    /* the dictionary */
    struct rp_strtab strs;                     /* string_table                  */
    struct rp_strtab attr_keys;                /* attribute dedup: encoded      */
    struct rp_pb attrs;                        /* attribute_table, encoded      */
    struct rp_strtab loc_keys, stack_keys, mapping_keys;
    struct rp_pb locs, stacks, mappings;
    uint32_t *frame_loc;                       /* by model frame: location      */
    uint32_t *method_fn;                       /* by model method: function + 1 */
    uint32_t *fn_method;  size_t nfn;          /* by function - 1: its method   */
    uint32_t *thr_attr;                        /* by thread: THREAD_ATTRS, + 1  */

    struct rp_strtab row_keys;
    struct row *rows; size_t cap_rows;

    struct rp_pb a, b, c, d;                   /* scratch                       */
};

/* ------------------------------------------------------------- kinds -- */

static uint32_t kind_slot(struct otlp *x, const struct rp_kind_info *ki, int objects)
{
    for (size_t i = 0; i < x->nkinds; i++)
        if (!strcmp(x->kinds[i].name, ki->name))
            return (uint32_t)i;
    x->kinds = rp_xreallocarray(x->kinds, x->nkinds + 1, sizeof *x->kinds);
    struct okind *k = &x->kinds[x->nkinds];
    memset(k, 0, sizeof *k);
    k->name = rp_xstrdup(ki->name);
    k->period = ki->period;
    enum rp_skind sk = rp_skind_of(ki->name);
    k->live = sk == RP_SK_LIVE;
    const char *unit = ki->unit ? ki->unit : "";
    k->unit = rp_xstrdup(!strcmp(unit, RP_UNIT_NS) ? "nanoseconds"
                         : (!*unit || !strcmp(unit, "samples")) ? "count" : unit);
    int alloc = sk == RP_SK_ALLOC;
    if (sk == RP_SK_LOCK) {
        k->pt[k->npt++] = (struct ptype){"delay", "nanoseconds", V_WEIGHT};
        k->pt[k->npt++] = (struct ptype){"contentions", "count", V_SAMPLES};
    } else if (alloc || k->live) {
        k->pt[k->npt++] = (struct ptype){alloc ? "alloc_space" : "inuse_space", "bytes",
                                         V_WEIGHT};
    } else {
        k->pt[k->npt++] = (struct ptype){k->name, k->unit, V_WEIGHT};
    }
    if (objects && k->npt < 2)
        k->pt[k->npt++] = (struct ptype){alloc ? "alloc_objects" : k->live ? "inuse_objects"
                                         : "objects", "count", V_OBJECTS};
    return (uint32_t)x->nkinds++;
}

static const struct ckind *chunk_kind(struct otlp *x, uint32_t id,
                                      const struct rp_kind_info *ki,
                                      const struct rp_stream_kind *k)
{
    rp_xgrow_map((void **)&x->ck, &x->n_ck, id, sizeof *x->ck, 8, 0);
    struct ckind *c = &x->ck[id];
    if (!c->slot1)
        c->slot1 = (int)kind_slot(x, ki, k->x[RP_SX_OBJECTS] >= 0) + 1;
    return c;
}

/* ----------------------------------------------------------- reading -- */

static struct osrc *src_at(struct otlp *x, uint32_t i)
{
    rp_xgrow_map((void **)&x->srcs, &x->n_srcs, i, sizeof *x->srcs, 4, 0);
    return &x->srcs[i];
}

static void span(struct osrc *s, uint64_t wall)
{
    if (!wall)
        return;
    if (!s->t0 || wall < s->t0)
        s->t0 = wall;
    if (wall > s->t1)
        s->t1 = wall;
}

static char *meta_dup(const struct rp_reader *r, const char *key)
{
    const char *v = rp_reader_meta(r, key);
    return v && *v ? rp_xstrdup(v) : NULL;
}

/* process.runtime.description as OpenTelemetry's Java agent writes it:
 * vendor, VM name and VM version. */
static char *runtime_description(const struct rp_reader *r)
{
    const char *part[3] = {rp_reader_meta(r, RP_META_JVM_VENDOR),
                           rp_reader_meta(r, RP_META_JVM_NAME),
                           rp_reader_meta(r, RP_META_JVM_VERSION)};
    size_t len = 1;
    for (int i = 0; i < 3; i++)
        len += part[i] ? strlen(part[i]) + 1 : 0;
    char *d = rp_xmalloc(len);
    d[0] = '\0';
    for (int i = 0; i < 3; i++)
        if (part[i] && *part[i])
            strcat(strcat(d, *d ? " " : ""), part[i]);
    if (!*d) {
        free(d);
        return NULL;
    }
    return d;
}

static void on_chunk(void *arg, const struct rp_profile *p, const struct rp_reader *r,
                     int end)
{
    struct otlp *x = arg;
    if (end)
        return;
    x->st = rp_prof_stream(p);
    x->src = x->st->rec;
    struct osrc *s = src_at(x, x->src);
    if (!s->seen) {
        s->seen = 1;
        s->runtime_name = meta_dup(r, RP_META_RUNTIME_NAME);
        if (!s->runtime_name)
            s->runtime_name = meta_dup(r, RP_META_JVM_NAME);
        s->runtime_version = meta_dup(r, RP_META_RUNTIME_VERSION);
        if (!s->runtime_version)
            s->runtime_version = meta_dup(r, RP_META_JVM_VERSION);
        s->description = runtime_description(r);
    }
    span(s, x->st->clock.wall0);
    if (x->ck)
        memset(x->ck, 0, x->n_ck * sizeof *x->ck);
}

static uint64_t wall_of(const struct otlp *x, uint64_t mono)
{
    return rp_stream_wall(x->st, mono);
}

static void on_event(void *arg, const struct rp_profile *p, const struct rp_event *ev)
{
    (void)p;
    struct otlp *x = arg;
    if (ev->type == RP_EV_SEGMENT && ev->u.seg.t_last)
        span(src_at(x, x->src), wall_of(x, ev->u.seg.t_last));
}

static struct entry *entry_for(struct otlp *x, uint32_t leaf, uint32_t slot, uint8_t state)
{
    rp_xgrow_map((void **)&x->head, &x->n_head, leaf, sizeof *x->head, 4096, 0);
    for (uint32_t i = x->head[leaf]; i; i = x->e[i - 1].next)
        if (x->e[i - 1].slot == slot && x->e[i - 1].state == state)
            return &x->e[i - 1];
    rp_xgrow((void **)&x->e, &x->cap_e, x->ne, sizeof *x->e, 4096);
    struct entry *e = &x->e[x->ne++];
    memset(e, 0, sizeof *e);
    e->leaf = leaf;
    e->slot = (uint16_t)slot;
    e->state = state;
    e->src = x->src;
    e->next = x->head[leaf];
    x->head[leaf] = (uint32_t)x->ne;
    return e;
}

static void on_sample(void *arg, const struct rp_profile *p, uint32_t leaf,
                      const struct rp_event *ev, const struct rp_kind_info *kind)
{
    (void)p;
    struct otlp *x = arg;
    if (!kind || !kind->name)
        return;
    const struct rp_stream_kind *k = rp_stream_kind(x->st, ev->u.sample.kind);
    const struct ckind *c = chunk_kind(x, ev->u.sample.kind, kind, k);
    uint32_t slot = (uint32_t)c->slot1 - 1;
    struct osrc *s = src_at(x, x->src);
    const uint64_t t = ev->u.sample.time;
    span(s, wall_of(x, t));
    uint8_t state = 0;
    if (k->x[RP_SX_STATE] >= 0)
        state = (uint8_t)(1 + rp_sx_state(k, ev));
    if (x->kinds[slot].live) {
        if (t < s->live_t)
            return;                     /* an older snapshot than one seen */
        s->live_t = t;
    }
    struct entry *e = entry_for(x, leaf, slot, state);
    if (x->kinds[slot].live && e->stamp != t) {
        memset(e->v, 0, sizeof e->v);
        e->stamp = t;
    }
    e->v[V_SAMPLES]++;
    e->v[V_WEIGHT] += ev->u.sample.weight;
    e->v[V_OBJECTS] += rp_sx_value(k, ev, RP_SX_OBJECTS, 0);
}

/* -------------------------------------------------------- dictionary -- */

static uint32_t str(struct otlp *x, const char *s)
{
    return rp_strtab_cstr(&x->strs, s);
}

/* An attribute (key, string value or, when sval is NULL, ival), its index in
 * attribute_table (from 1: entry 0 is the zero value). */
static uint32_t attr(struct otlp *x, const char *key, const char *sval, int64_t ival)
{
    char num[24];
    if (!sval)
        snprintf(num, sizeof num, "%lld", (long long)ival);
    const char *v = sval ? sval : num;
    size_t kl = strlen(key), vl = strlen(v);
    char *k = rp_xmalloc(kl + vl + 2);
    memcpy(k, key, kl);
    k[kl] = sval ? 's' : 'i';
    memcpy(k + kl + 1, v, vl + 1);
    size_t before = x->attr_keys.n;
    uint32_t idx = rp_strtab_add(&x->attr_keys, k, kl + vl + 1) + 1;
    free(k);
    if (x->attr_keys.n == before)
        return idx;
    struct rp_pb val, kvu;             /* its own: callers hold the scratch ones */
    rp_pb_init(&val);
    rp_pb_init(&kvu);
    if (sval)
        rp_pb_string(&val, ANY_STRING, sval, strlen(sval));
    else
        rp_pb_int64(&val, ANY_INT, ival);
    rp_pb_int64(&kvu, KVU_KEY, str(x, key));
    rp_pb_msg(&kvu, KVU_VALUE, &val);
    rp_pb_msg(&x->attrs, DICT_ATTRIBUTES, &kvu);
    rp_pb_free(&val);
    rp_pb_free(&kvu);
    return idx;
}

static const char *const FRAME_TYPES[] = {"interpreted", "jit", "inlined", "native",
                                          "cpp", "kernel", "marker"};

/* The location of model frame f: (function, line, frame type), made once;
 * from 1, as every dictionary index. */
static uint32_t location(struct otlp *x, uint32_t f)
{
    if (x->frame_loc[f])
        return x->frame_loc[f];
    const struct rp_profile *p = x->p;
    const struct rp_prof_frame *fr = &p->frames[f];
    if (!x->method_fn[fr->method]) {
        x->fn_method = rp_xreallocarray(x->fn_method, x->nfn + 1, sizeof *x->fn_method);
        x->fn_method[x->nfn++] = fr->method;
        x->method_fn[fr->method] = (uint32_t)x->nfn;
    }
    uint32_t key[3] = {x->method_fn[fr->method], fr->line, (uint32_t)fr->type};
    size_t before = x->loc_keys.n;
    uint32_t loc = rp_strtab_add(&x->loc_keys, (const char *)key, sizeof key) + 1;
    x->frame_loc[f] = loc;
    if (x->loc_keys.n == before)
        return loc;
    const struct rp_prof_method *me = &p->methods[fr->method];
    uint32_t mapping = 0;
    if (fr->type == RP_FRAME_NATIVE && me->klass[0]) {
        size_t mb = x->mapping_keys.n;
        mapping = rp_strtab_cstr(&x->mapping_keys, me->klass) + 1;
        if (x->mapping_keys.n != mb) {
            rp_pb_reset(&x->c);
            rp_pb_int64(&x->c, MAPPING_FILENAME, str(x, me->klass));
            rp_pb_msg(&x->mappings, DICT_MAPPINGS, &x->c);
        }
    }
    uint64_t a[2];
    size_t na = 0;
    const char *rtype = fr->type == RP_PFRAME_CLASS ? "class"
                        : fr->type >= 0 && fr->type < RP_FRAME_TYPES ? FRAME_TYPES[fr->type]
                        : "native";
    const char *otype = fr->type <= RP_FRAME_INLINED ? "jvm"
                        : fr->type == RP_FRAME_NATIVE || fr->type == RP_FRAME_CPP ? "native"
                        : fr->type == RP_FRAME_KERNEL ? "kernel" : NULL;
    if (otype)
        a[na++] = attr(x, "profile.frame.type", otype, 0);
    a[na++] = attr(x, "ringprof.frame.type", rtype, 0);
    rp_pb_reset(&x->d);
    rp_pb_int64(&x->d, LINE_FUNCTION, x->method_fn[fr->method]);
    rp_pb_int64(&x->d, LINE_LINE, fr->line);
    rp_pb_reset(&x->c);
    rp_pb_int64(&x->c, LOC_MAPPING, mapping);
    rp_pb_msg(&x->c, LOC_LINES, &x->d);
    rp_pb_packed(&x->c, LOC_ATTRIBUTES, a, na);
    rp_pb_msg(&x->locs, DICT_LOCATIONS, &x->c);
    return loc;
}

/* The stack of a path's frame nodes (root-most first, n of them), leaf first. */
static uint32_t stack(struct otlp *x, const uint32_t *path, size_t n, uint32_t **ids,
                      size_t *cap)
{
    if (n > *cap) {
        *cap = n * 2;
        *ids = rp_xreallocarray(*ids, *cap, sizeof **ids);
    }
    size_t k = 0;
    for (size_t i = n; i-- > 0;)
        if (x->p->nodes[path[i]].kind == RP_PNODE_FRAME)
            (*ids)[k++] = location(x, x->p->nodes[path[i]].ref);
    size_t before = x->stack_keys.n;
    uint32_t s = rp_strtab_add(&x->stack_keys, (const char *)*ids, k * sizeof **ids) + 1;
    if (x->stack_keys.n == before)
        return s;
    uint64_t *v = rp_xreallocarray(NULL, k ? k : 1, sizeof *v);
    for (size_t i = 0; i < k; i++)
        v[i] = (*ids)[i];
    rp_pb_reset(&x->c);
    rp_pb_packed(&x->c, 1, v, k);
    rp_pb_msg(&x->stacks, DICT_STACKS, &x->c);
    free(v);
    return s;
}

/* The attributes of thread t: up to THREAD_ATTRS, 0-terminated when fewer. A
 * virtual thread's: its name (or "virtual #ID"), its Java id, its carrier's tid
 * and its carrier's name. */
#define THREAD_ATTRS 4
static const uint32_t *thread_attrs(struct otlp *x, uint32_t t)
{
    uint32_t *a = &x->thr_attr[t * THREAD_ATTRS];
    if (a[0])
        return a;
    const struct rp_prof_thread *th = &x->p->threads[t];
    char name[1024];
    if (th->name[0] || th->vthread)
        rp_prof_thread_name(name, sizeof name, th);
    else
        snprintf(name, sizeof name, "tid %llu", (unsigned long long)th->os_tid);
    size_t n = 0;
    a[n++] = attr(x, "thread.name", name, 0);
    if (((th->flags & RP_THREAD_JAVA) && th->java_tid) || th->vthread)
        a[n++] = attr(x, "thread.id", NULL, (int64_t)th->java_tid);
    a[n++] = attr(x, "ringprof.thread.tid", NULL, (int64_t)th->os_tid);
    if (th->vthread)
        a[n++] = attr(x, "ringprof.thread.carrier", th->carrier, 0);
    if (n < THREAD_ATTRS)
        a[n] = 0;
    return a;
}

/* JDK Thread.State, as OpenTelemetry's jvm.thread.state names it, for a
 * ringprof state; NULL for unknown. */
static const char *jvm_state(unsigned st)
{
    switch (st) {
    case RP_TS_RUNNING: case RP_TS_RUNNABLE: case RP_TS_NATIVE: case RP_TS_IO:
        return "runnable";
    case RP_TS_BLOCKED: return "blocked";
    case RP_TS_WAITING: case RP_TS_PARKED: return "waiting";
    case RP_TS_SLEEPING: return "timed_waiting";
    default: return NULL;
    }
}

/* ------------------------------------------------------------- rows -- */

static int row_cmp(const void *a, const void *b, void *arg)
{
    const struct row *rows = arg;
    const struct row *x = &rows[*(const uint32_t *)a], *y = &rows[*(const uint32_t *)b];
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The entries as rows (one per distinct sample), in order of recording, kind
 * and first appearance. @return the order (x->row_keys.n indexes). */
static uint32_t *make_rows(struct otlp *x)
{
    const struct rp_profile *p = x->p;
    uint32_t *path = NULL, *ids = NULL;
    size_t cap_path = 0, cap_ids = 0;
    for (size_t i = 0; i < x->ne; i++) {
        const struct entry *e = &x->e[i];
        if (!e->v[V_SAMPLES] || (x->kinds[e->slot].live && e->stamp != x->srcs[e->src].live_t))
            continue;
        size_t n;
        while ((n = rp_prof_path(p, e->leaf, path, cap_path)) > cap_path) {
            cap_path = n * 2;
            path = rp_xreallocarray(path, cap_path, sizeof *path);
        }
        uint32_t thread = n && p->nodes[path[0]].kind == RP_PNODE_THREAD
                              ? p->nodes[path[0]].ref : RP_PROF_NONE;
        uint32_t key[5] = {e->src, e->slot, stack(x, path, n, &ids, &cap_ids), thread,
                           e->state};
        size_t before = x->row_keys.n;
        uint32_t r = rp_strtab_add(&x->row_keys, (const char *)key, sizeof key);
        if (x->row_keys.n != before) {
            rp_xgrow_map((void **)&x->rows, &x->cap_rows, r, sizeof *x->rows, 1024, 0);
            x->rows[r] = (struct row){e->src, e->slot, key[2], thread, e->state, {0}};
        }
        for (int v = 0; v < 3; v++)
            x->rows[r].v[v] += e->v[v];
    }
    free(path);
    free(ids);
    uint32_t *order = rp_xreallocarray(NULL, x->row_keys.n + 1, sizeof *order);
    for (size_t i = 0; i < x->row_keys.n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, x->row_keys.n, sizeof *order, row_cmp, x->rows);
    return order;
}

/* ---------------------------------------------------------- messages -- */

static void any_kv(struct rp_pb *res, struct rp_pb *tmp, const char *key, const char *s,
                   int64_t i)
{
    struct rp_pb val, kv;
    rp_pb_init(&val);
    rp_pb_init(&kv);
    if (s)
        rp_pb_string(&val, ANY_STRING, s, strlen(s));
    else
        rp_pb_int64(&val, ANY_INT, i);
    rp_pb_string(&kv, KV_KEY, key, strlen(key));
    rp_pb_msg(&kv, KV_VALUE, &val);
    rp_pb_msg(res, RES_ATTRIBUTES, &kv);
    if (val.oom || kv.oom)
        tmp->oom = 1;
    rp_pb_free(&val);
    rp_pb_free(&kv);
}

static void resource_label(const char *key, const char *value, void *arg)
{
    struct rp_pb *r = arg;
    any_kv(r, r, key, value, 0);
}

/* The Resource of recording i into x->b. */
static void resource(struct otlp *x, uint32_t i)
{
    const struct rp_prof_source *s = &x->p->sources[i];
    const struct osrc *os = src_at(x, i);
    struct rp_pb *r = &x->b;
    rp_pb_reset(r);
    char svc[512];
    any_kv(r, r, "service.name", rp_out_service_name(x->o->service, s, svc, sizeof svc), 0);
    if (s->host[0])
        any_kv(r, r, "host.name", s->host, 0);
    char *end;
    long long pid = strtoll(s->pid, &end, 10);
    if (s->pid[0] && !*end)
        any_kv(r, r, "process.pid", NULL, pid);
    if (os->runtime_name)
        any_kv(r, r, "process.runtime.name", os->runtime_name, 0);
    if (os->runtime_version)
        any_kv(r, r, "process.runtime.version", os->runtime_version, 0);
    if (os->description)
        any_kv(r, r, "process.runtime.description", os->description, 0);
    any_kv(r, r, "ringprof.recording.id", s->recording, 0);
    out_each_label(s, x->o, resource_label, r);
}

/* A profile's id: 16 bytes from the recording, the sample type and the span. */
static void profile_id(uint8_t id[16], const char *rec, const char *type, uint64_t t0,
                       uint64_t t1)
{
    uint64_t h1 = rp_mix64(t0 ^ 0x9e3779b97f4a7c15ull), h2 = rp_mix64(t1 + 0x632be59bd9b4e019ull);
    for (const char *s = rec; *s; s++)
        h1 = rp_mix64(h1 ^ (unsigned char)*s), h2 = rp_mix64(h2 + (unsigned char)*s);
    for (const char *s = type; *s; s++)
        h1 = rp_mix64(h1 + (unsigned char)*s), h2 = rp_mix64(h2 ^ (unsigned char)*s);
    h1 |= 1;                            /* all zeroes is "no id" */
    memcpy(id, &h1, 8);
    memcpy(id + 8, &h2, 8);
}

/* Profile pt of kind slot, from rows order[from..to), into x->c. @return 1, or
 * 0 when no row has a value for it (no profile). */
static int profile(struct otlp *x, uint32_t slot, int pt, const uint32_t *order,
                   size_t from, size_t to)
{
    const struct okind *k = &x->kinds[slot];
    const struct ptype *t = &k->pt[pt];
    const struct row *first = &x->rows[order[from]];
    const struct osrc *os = src_at(x, first->src);
    struct rp_pb *m = &x->c, *s = &x->d;
    rp_pb_reset(m);
    int any = 0;
    for (size_t i = from; i < to; i++) {
        const struct row *r = &x->rows[order[i]];
        if (!r->v[t->src])
            continue;
        uint64_t a[THREAD_ATTRS + 2];
        size_t na = 0;
        if (r->thread != RP_PROF_NONE)
            for (const uint32_t *ta = thread_attrs(x, r->thread); na < THREAD_ATTRS && ta[na];
                 na++)
                a[na] = ta[na];
        if (r->state) {
            a[na++] = attr(x, "ringprof.thread.state", rp_thread_state_name(r->state - 1), 0);
            const char *js = jvm_state(r->state - 1);
            if (js)
                a[na++] = attr(x, "jvm.thread.state", js, 0);
        }
        uint64_t v = r->v[t->src];
        rp_pb_reset(s);
        rp_pb_int64(s, SAMPLE_STACK, r->stack);
        rp_pb_packed(s, SAMPLE_ATTRIBUTES, a, na);
        rp_pb_packed(s, SAMPLE_VALUES, &v, 1);
        rp_pb_msg(m, PROF_SAMPLES, s);
        any = 1;
    }
    if (!any)
        return 0;
    uint64_t t0 = os->t0, t1 = os->t1;
    if (x->po->from_wall && t0 < x->po->from_wall)
        t0 = x->po->from_wall;
    if (x->po->to_wall && t1 > x->po->to_wall)
        t1 = x->po->to_wall;
    if (t1 < t0)
        t1 = t0;
    rp_pb_reset(s);
    rp_pb_int64(s, VT_TYPE, str(x, t->type));
    rp_pb_int64(s, VT_UNIT, str(x, t->unit));
    rp_pb_msg(m, PROF_SAMPLE_TYPE, s);
    rp_pb_fixed64(m, PROF_TIME, t0);
    rp_pb_uint64(m, PROF_DURATION, t1 - t0);
    /* Always a period type: Grafana Pyroscope names an OTLP profile after it
     * (its type string) and refuses one without (an empty name). A kind with no
     * nominal period has one event a sample: period 1 of its count, contentions
     * for lock as in Go's mutex profile. */
    const struct ptype *per = k->period ? &k->pt[0] : &k->pt[k->npt - 1];
    rp_pb_reset(s);
    rp_pb_int64(s, VT_TYPE, str(x, per->type));
    rp_pb_int64(s, VT_UNIT, str(x, per->unit));
    rp_pb_msg(m, PROF_PERIOD_TYPE, s);
    rp_pb_int64(m, PROF_PERIOD, (int64_t)(k->period ? k->period : 1));
    uint8_t id[16];
    profile_id(id, x->p->sources[first->src].recording, t->type, t0, t1);
    rp_pb_bytes(m, PROF_ID, id, sizeof id);
    uint64_t ka = attr(x, "ringprof.kind", k->name, 0);
    rp_pb_packed(m, PROF_ATTRIBUTES, &ka, 1);
    return 1;
}

static int write_pb(FILE *out, const struct rp_pb *b)
{
    if (b->oom) {
        errno = ENOMEM;
        return -1;
    }
    return b->len && fwrite(b->p, 1, b->len, out) != b->len ? -1 : 0;
}

/* One ResourceProfiles per recording, written as each is complete. */
static int write_resources(struct otlp *x, FILE *out, const uint32_t *order, size_t n)
{
    struct rp_pb scope, res;
    rp_pb_init(&scope);
    rp_pb_init(&res);
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t end = i;
        while (end < n && x->rows[order[end]].src == x->rows[order[i]].src)
            end++;
        rp_pb_reset(&scope);
        rp_pb_reset(&x->a);
        rp_pb_string(&x->a, SCOPE_NAME, "ringprof", 8);
        rp_pb_string(&x->a, SCOPE_VERSION, RINGPROF_VERSION, strlen(RINGPROF_VERSION));
        rp_pb_msg(&scope, SP_SCOPE, &x->a);
        for (size_t k = i; k < end;) {
            size_t kend = k;
            while (kend < end && x->rows[order[kend]].slot == x->rows[order[k]].slot)
                kend++;
            uint32_t slot = x->rows[order[k]].slot;
            for (int pt = 0; pt < x->kinds[slot].npt; pt++)
                if (profile(x, slot, pt, order, k, kend))
                    rp_pb_msg(&scope, SP_PROFILES, &x->c);
            k = kend;
        }
        resource(x, x->rows[order[i]].src);
        rp_pb_reset(&res);
        rp_pb_msg(&res, RP_RESOURCE, &x->b);
        rp_pb_msg(&res, RP_SCOPE_PROFILES, &scope);
        rp_pb_reset(&x->a);
        rp_pb_msg(&x->a, REQ_RESOURCE_PROFILES, &res);
        rc = write_pb(out, &x->a);
        i = end;
    }
    rp_pb_free(&scope);
    rp_pb_free(&res);
    return rc;
}

/* The function table after its zero entry (which init put there). */
static void write_functions(struct otlp *x, struct rp_pb *fns)
{
    for (size_t i = 0; i < x->nfn; i++) {
        const struct rp_prof_method *me = &x->p->methods[x->fn_method[i]];
        char *sys = out_system_name(me);
        rp_pb_reset(&x->c);
        rp_pb_int64(&x->c, FN_NAME, str(x, me->display));
        rp_pb_int64(&x->c, FN_SYSTEM_NAME, str(x, sys));
        rp_pb_int64(&x->c, FN_FILENAME, str(x, me->file));
        rp_pb_msg(fns, DICT_FUNCTIONS, &x->c);
        free(sys);
    }
}

/* The ProfilesDictionary: its tables are encoded as its fields already (each
 * starting with its zero entry), so the message is their concatenation, after
 * a length that is their sum. The strings come last: every other table names
 * some. */
static int write_dictionary(struct otlp *x, FILE *out)
{
    struct rp_pb fns, links, strs, head;
    rp_pb_init(&fns);
    rp_pb_init(&links);
    rp_pb_init(&strs);
    rp_pb_init(&head);
    rp_pb_reset(&x->c);
    rp_pb_msg(&fns, DICT_FUNCTIONS, &x->c);
    write_functions(x, &fns);
    /* link_table[0]: the proto asks for 16 and 8 zero bytes over empty ids. */
    static const uint8_t zero[16];
    rp_pb_reset(&x->c);
    rp_pb_bytes(&x->c, LINK_TRACE_ID, zero, 16);
    rp_pb_bytes(&x->c, LINK_SPAN_ID, zero, 8);
    rp_pb_msg(&links, DICT_LINKS, &x->c);
    for (size_t i = 0; i < x->strs.n; i++)
        rp_pb_string(&strs, DICT_STRINGS, x->strs.s[i], x->strs.len[i]);
    const struct rp_pb *part[] = {&x->mappings, &x->locs, &fns, &links, &strs, &x->attrs,
                                  &x->stacks};
    size_t n = sizeof part / sizeof part[0], len = 0;
    int oom = 0;
    for (size_t i = 0; i < n; i++) {
        len += part[i]->len;
        oom |= part[i]->oom;
    }
    rp_pb_varint(&head, (uint64_t)REQ_DICTIONARY << 3 | 2);
    rp_pb_varint(&head, len);
    int rc = oom ? (errno = ENOMEM, -1) : write_pb(out, &head);
    for (size_t i = 0; i < n && !rc; i++)
        rc = write_pb(out, part[i]);
    rp_pb_free(&fns);
    rp_pb_free(&links);
    rp_pb_free(&strs);
    rp_pb_free(&head);
    return rc;
}

/* ------------------------------------------------------------- write -- */

const char *rp_out_service_name(const char *given, const struct rp_prof_source *s,
                                char *buf, size_t cap)
{
    const char *m = s ? s->main : "";
    if (given)
        snprintf(buf, cap, "%s", given);
    else if (s && s->service[0])
        snprintf(buf, cap, "%s", s->service);
    else if (m[0]) {
        size_t n = strlen(m);
        const char *base = strrchr(m, '/') ? strrchr(m, '/') + 1 : m;
        if (n > 4 && !strcmp(m + n - 4, ".jar"))
            snprintf(buf, cap, "%.*s", (int)(strlen(base) - 4), base);
        else
            snprintf(buf, cap, "%s", m);
    } else
        snprintf(buf, cap, "unknown_service:java");
    return buf;
}

static void otlp_init(struct otlp *x, const struct rp_prof_options *po,
                      const struct rp_out_options *o)
{
    memset(x, 0, sizeof *x);
    x->po = po;
    x->o = o;
    struct rp_strtab *tabs[] = {&x->strs, &x->attr_keys, &x->loc_keys, &x->stack_keys,
                                &x->mapping_keys, &x->row_keys};
    for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++)
        rp_strtab_init(tabs[i]);
    struct rp_pb *bufs[] = {&x->attrs, &x->locs, &x->stacks, &x->mappings, &x->a, &x->b,
                            &x->c, &x->d};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        rp_pb_init(bufs[i]);
    str(x, "");                                    /* string_table[0] is ""     */
    /* Entry 0 of each table is its zero value, present. */
    rp_pb_msg(&x->attrs, DICT_ATTRIBUTES, &x->c);
    rp_pb_msg(&x->locs, DICT_LOCATIONS, &x->c);
    rp_pb_msg(&x->stacks, DICT_STACKS, &x->c);
    rp_pb_msg(&x->mappings, DICT_MAPPINGS, &x->c);
}

static void otlp_free(struct otlp *x)
{
    struct rp_strtab *tabs[] = {&x->strs, &x->attr_keys, &x->loc_keys, &x->stack_keys,
                                &x->mapping_keys, &x->row_keys};
    for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++)
        rp_strtab_free(tabs[i]);
    struct rp_pb *bufs[] = {&x->attrs, &x->locs, &x->stacks, &x->mappings, &x->a, &x->b,
                            &x->c, &x->d};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        rp_pb_free(bufs[i]);
    for (size_t i = 0; i < x->nkinds; i++) {
        free(x->kinds[i].name);
        free(x->kinds[i].unit);
    }
    for (size_t i = 0; i < x->n_srcs; i++) {
        free(x->srcs[i].runtime_name);
        free(x->srcs[i].runtime_version);
        free(x->srcs[i].description);
    }
    free(x->kinds);
    free(x->srcs);
    free(x->ck);
    free(x->e);
    free(x->head);
    free(x->frame_loc);
    free(x->method_fn);
    free(x->fn_method);
    free(x->thr_attr);
    free(x->rows);
}

int rp_out_otlp(FILE *out, rp_jfr_build_fn build, void *build_arg,
                struct rp_prof_options *po, const struct rp_out_options *o,
                struct rp_profile **built)
{
    struct otlp x;
    otlp_init(&x, po, o);
    /* Lines and bcis kept, frames shown (and filtered) by their method, as
     * collapsed shows them; threads apart, for their attributes; the state
     * is an attribute, never a frame. */
    out_events_hooks(po, &x, on_sample, on_event, on_chunk);
    po->per_thread = 1;
    struct rp_profile *p = build(build_arg, po);
    *built = p;
    x.p = p;
    x.frame_loc = rp_xcalloc(p->nframes + 1, sizeof *x.frame_loc);
    x.method_fn = rp_xcalloc(p->nmethods + 1, sizeof *x.method_fn);
    x.thr_attr = rp_xcalloc(p->nthreads * THREAD_ATTRS + 1, sizeof *x.thr_attr);
    src_at(&x, p->nsources);
    uint32_t *order = make_rows(&x);
    int rc = write_resources(&x, out, order, x.row_keys.n);
    if (!rc)
        rc = write_dictionary(&x, out);
    int err = errno;
    free(order);
    otlp_free(&x);
    errno = err;
    return rc;
}
