/*
 * tools/outputs/out_pprof.c — `ringprof convert --format pprof`: a gzipped profile.proto
 * (github.com/google/pprof, proto/profile.proto) for `go tool pprof`, Pyroscope
 * and Grafana.
 *
 * Mapping from the model (tools/model/profile.h):
 *   - every node with samples of its own is one Sample: its path, leaf first, as
 *     location ids, and its self values;
 *   - a frame is a Location (id = frame index + 1, in the one Mapping, named for
 *     the JVM, that says "symbolized") with one Line: the method's
 *     Function and the frame's line; a method is a Function (id = method index
 *     + 1) with its display name, and as system_name its name with signature
 *     (Java; of the first overload seen, unless --signatures keeps them apart)
 *     or its symbol as recorded (native, C++, kernel: the mangled name
 *     that `name` shows demangled), and its source file;
 *   - a thread node (per-thread profiles) is not a location: it becomes the
 *     sample's labels "thread" (name), "tid" (number), for a virtual thread's
 *     samples also "thread_id" (its Java id) and "carrier" (the carrier's name;
 *     "tid" is then the carrier's), "host" and "pid" (of the
 *     recording it came from) and, when several recordings are merged,
 *     "recording"; a merged-thread profile of one recording still gets its host
 *     and pid; then the recording's labels (agent option labels=, --label:
 *     out_each_label), one string label each;
 *   - sample types: "samples"/"count", then for alloc-like kinds with an
 *     "objects" extra "alloc_objects"/"count" ("inuse_objects" for live), then
 *     the weight: the kind's name and "nanoseconds" for time kinds
 *     ("cpu"/"nanoseconds"; count-like units are converted with the profile's
 *     ns_per_unit), "alloc_space"/"bytes" for the alloc kind, "inuse_space"/
 *     "bytes" for one live snapshot (the names of Go's heap profiles, which
 *     pprof's tools know), else the kind's own name and unit. The weight is the
 *     default sample type. Kind wall is "wall"/"nanoseconds"; kind lock has
 *     "contentions"/"count" and "delay"/"nanoseconds" (Go's mutex profile);
 *   - period_type/period from the kind's nominal period, time_nanos/
 *     duration_nanos from the wall-clock span of the kept samples, and the
 *     title, producer and what each marker frame means (legend.h) as comments.
 *
 * The format table asks for the profile per thread and at line granularity
 * (RP_FMT_THREADS | RP_FMT_LINES in formats.c), so labels and lines are there.
 *
 * Streaming: a top-level protobuf message has no length and its fields may come
 * in any order, so each Sample is encoded and deflated as soon as the walk reaches
 * it; Locations, Functions and the string table follow at the end. Memory is a
 * used-bit per frame and method plus the string table, never the samples.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "legend.h"
#include "out_common.h"
#include "model/scan.h"
#include "model/strtab.h"
#include "model/xalloc.h"
#include "pb.h"

/* profile.proto field numbers. */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
    PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
    MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
    FUNCTION_FILENAME = 4
};

/* gzip level: 6 is zlib's default, within a few percent of 9 at a third of the
 * time, which matters for profiles of millions of samples. */
#define PPROF_GZIP_LEVEL 6

/* How each pprof value of a sample is taken from a node. */
enum vsrc { V_SAMPLES, V_OBJECTS, V_WEIGHT };

struct pprof {
    const struct rp_profile *p;
    const struct rp_out_options *o;
    struct rp_gz *gz;
    struct rp_pb field, msg, sub;    /* scratch buffers, reused               */
    struct rp_strtab st;
    uint8_t *frame_used, *method_used;
    uint64_t *ids;                   /* location ids of one sample            */
    size_t ids_cap;
    enum vsrc vsrc[3];
    size_t nv;
    double weight_scale;             /* pprof weight = model weight x this    */
    uint32_t k_thread, k_tid, k_host, k_pid, k_recording, k_state, k_thread_id, k_carrier;
    int state_frames;                /* keep "[state:NAME]" leaves as frames  */
};

static uint32_t str(struct pprof *x, const char *s)
{
    return rp_strtab_cstr(&x->st, s);
}

static int is_count_unit(const char *u)
{
    return !*u || !strcmp(u, "samples") || !strcmp(u, "count");
}

/* Append the sample types (and remember where each value comes from), the
 * period and the default sample type to x->field, as top-level fields. */
static void write_header(struct pprof *x)
{
    const struct rp_profile *p = x->p;
    const char *kind = p->kind[0] ? p->kind : "samples";
    const char *wtype = kind, *wunit = p->unit;
    x->weight_scale = 1.0;
    if (!strcmp(p->unit, RP_UNIT_NS)) {
        wunit = "nanoseconds";
    } else if (is_count_unit(p->unit) && p->ns_per_unit > 0) {
        wunit = "nanoseconds";
        x->weight_scale = p->ns_per_unit;
    } else if (!strcmp(p->unit, RP_UNIT_BYTES)) {
        wtype = !strcmp(kind, RP_KIND_ALLOC) ? "alloc_space"
              : !strcmp(kind, RP_KIND_LIVE) ? "inuse_space" : kind;
    } else if (is_count_unit(p->unit)) {
        wunit = "count";
    }

    /* Lock: Go's names for its mutex/block profiles, which pprof's tools know:
     * contentions (waits), delay (time waited). */
    int lock = !strcmp(kind, RP_KIND_LOCK);
    if (lock)
        wtype = "delay";
    const char *types[3][2];
    x->nv = 0;
    types[x->nv][0] = lock ? "contentions" : "samples", types[x->nv][1] = "count";
    x->vsrc[x->nv++] = V_SAMPLES;
    if (p->nvalues > RP_PV_OBJECTS) {
        types[x->nv][0] = !strcmp(kind, RP_KIND_ALLOC) ? "alloc_objects"
                        : !strcmp(kind, RP_KIND_LIVE) ? "inuse_objects" : "objects";
        types[x->nv][1] = "count";
        x->vsrc[x->nv++] = V_OBJECTS;
    }
    types[x->nv][0] = wtype, types[x->nv][1] = wunit;
    x->vsrc[x->nv++] = V_WEIGHT;

    for (size_t i = 0; i < x->nv; i++) {
        rp_pb_reset(&x->sub);
        rp_pb_int64(&x->sub, VALUETYPE_TYPE, str(x, types[i][0]));
        rp_pb_int64(&x->sub, VALUETYPE_UNIT, str(x, types[i][1]));
        rp_pb_msg(&x->field, PROFILE_SAMPLE_TYPE, &x->sub);
    }
    rp_pb_reset(&x->sub);
    rp_pb_int64(&x->sub, VALUETYPE_TYPE, str(x, wtype));
    rp_pb_int64(&x->sub, VALUETYPE_UNIT, str(x, wunit));
    rp_pb_msg(&x->field, PROFILE_PERIOD_TYPE, &x->sub);
    rp_pb_int64(&x->field, PROFILE_PERIOD, llround((double)p->period * x->weight_scale));
    rp_pb_int64(&x->field, PROFILE_DEFAULT_SAMPLE_TYPE, str(x, wtype));
    rp_pb_int64(&x->field, PROFILE_TIME_NANOS, (int64_t)p->wall_first);
    if (p->wall_last > p->wall_first)
        rp_pb_int64(&x->field, PROFILE_DURATION_NANOS,
                    (int64_t)(p->wall_last - p->wall_first));
}

static void label_str(struct pprof *x, uint32_t key, const char *value)
{
    if (!value || !*value)
        return;
    rp_pb_reset(&x->sub);
    rp_pb_int64(&x->sub, LABEL_KEY, key);
    rp_pb_int64(&x->sub, LABEL_STR, str(x, value));
    rp_pb_msg(&x->msg, SAMPLE_LABEL, &x->sub);
}

static void label_num(struct pprof *x, uint32_t key, int64_t value)
{
    rp_pb_reset(&x->sub);
    rp_pb_int64(&x->sub, LABEL_KEY, key);
    rp_pb_int64(&x->sub, LABEL_NUM, value);
    rp_pb_msg(&x->msg, SAMPLE_LABEL, &x->sub);
}

/* A recording's own label (labels=, --label) on the sample being written. */
static void user_label(const char *key, const char *value, void *arg)
{
    struct pprof *x = arg;
    label_str(x, str(x, key), value);
}

/* The labels of a sample from `src` (a source index, or RP_PROF_NONE) and `thr`
 * (a thread, or NULL). */
static void sample_labels(struct pprof *x, uint32_t src, const struct rp_prof_thread *thr)
{
    const struct rp_profile *p = x->p;
    if (thr) {
        char name[1024];
        if (thr->name[0] || thr->vthread)
            rp_prof_thread_name(name, sizeof name, thr);
        else
            snprintf(name, sizeof name, "tid %llu", (unsigned long long)thr->os_tid);
        label_str(x, x->k_thread, name);
        label_num(x, x->k_tid, (int64_t)thr->os_tid);
        if (thr->vthread) {
            label_num(x, x->k_thread_id, (int64_t)thr->vthread);
            label_str(x, x->k_carrier, thr->carrier);
        }
    }
    if (src == RP_PROF_NONE || src >= p->nsources)
        return;
    const struct rp_prof_source *s = &p->sources[src];
    label_str(x, x->k_host, s->host);
    label_str(x, x->k_pid, s->pid);
    if (p->nsources > 1)
        label_str(x, x->k_recording, s->recording);
    out_each_label(s, x->o, user_label, x);
}

/* The thread state a wall sample's leaf frame "[state:NAME]" stands for
 * (RP_FMT_STATES), into name (cap bytes). @return name, or NULL for any other
 * frame. */
static const char *state_of(const struct rp_prof_frame *f, char *name, size_t cap)
{
    static const char prefix[] = "[state:";
    if (f->type != RP_FRAME_MARKER || strncmp(f->display, prefix, sizeof prefix - 1))
        return NULL;
    snprintf(name, cap, "%s", f->display + sizeof prefix - 1);
    name[strcspn(name, "]")] = '\0';
    return name;
}

static int write_sample(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                        size_t depth, void *arg)
{
    struct pprof *x = arg;
    if (depth > x->ids_cap) {
        x->ids_cap = depth * 2;
        x->ids = rp_xreallocarray(x->ids, x->ids_cap, sizeof *x->ids);
    }
    size_t n = 0;
    const struct rp_prof_thread *thr = NULL;
    const char *state = NULL;
    char state_name[32];
    for (size_t i = depth; i-- > 0;) {             /* leaf first               */
        const struct rp_prof_node *node = &p->nodes[path[i]];
        if (node->kind == RP_PNODE_FRAME && i == depth - 1 &&
            (state = state_of(&p->frames[node->ref], state_name, sizeof state_name)) &&
            !x->state_frames) {
            continue;   /* the state is the label, not a frame */
        } else if (node->kind == RP_PNODE_FRAME) {
            x->ids[n++] = (uint64_t)node->ref + 1;
            x->frame_used[node->ref] = 1;
        } else if (node->kind == RP_PNODE_THREAD && node->ref < p->nthreads) {
            thr = &p->threads[node->ref];
        }
    }
    const struct rp_prof_node *l = &p->nodes[leaf];
    uint64_t v[3];
    for (size_t i = 0; i < x->nv; i++) {
        switch (x->vsrc[i]) {
        case V_SAMPLES: v[i] = l->self[RP_PV_SAMPLES]; break;
        case V_OBJECTS: v[i] = l->self[RP_PV_OBJECTS]; break;
        default:
            v[i] = l->self[RP_PV_WEIGHT];
            if (x->weight_scale != 1.0)
                v[i] = (uint64_t)llround((double)v[i] * x->weight_scale);
        }
    }
    rp_pb_reset(&x->msg);
    rp_pb_packed(&x->msg, SAMPLE_LOCATION_ID, x->ids, n);
    rp_pb_packed(&x->msg, SAMPLE_VALUE, v, x->nv);
    sample_labels(x, thr ? thr->source : (p->nsources == 1 ? 0 : RP_PROF_NONE), thr);
    if (state)
        label_str(x, x->k_state, state);
    rp_pb_reset(&x->field);
    rp_pb_msg(&x->field, PROFILE_SAMPLE, &x->msg);
    rp_gz_write_pb(x->gz, &x->field);
    return 0;
}

/* One Mapping for everything: there are no addresses to map, but consumers
 * expect a main mapping (pprof names it in reports), and its has_* flags tell
 * them the locations are already symbolized, so none tries to. */
static void write_mapping(struct pprof *x)
{
    const struct rp_profile *p = x->p;
    const char *jvm = p->nsources && p->sources[0].jvm[0] ? p->sources[0].jvm : "java";
    rp_pb_reset(&x->msg);
    rp_pb_uint64(&x->msg, MAPPING_ID, 1);
    rp_pb_int64(&x->msg, MAPPING_FILENAME, str(x, jvm));
    rp_pb_uint64(&x->msg, MAPPING_HAS_FUNCTIONS, 1);
    rp_pb_uint64(&x->msg, MAPPING_HAS_FILENAMES, 1);
    rp_pb_uint64(&x->msg, MAPPING_HAS_LINE_NUMBERS, 1);
    rp_pb_reset(&x->field);
    rp_pb_msg(&x->field, PROFILE_MAPPING, &x->msg);
    rp_gz_write_pb(x->gz, &x->field);
}

static void write_locations(struct pprof *x)
{
    const struct rp_profile *p = x->p;
    for (size_t f = 0; f < p->nframes; f++) {
        if (!x->frame_used[f])
            continue;
        const struct rp_prof_frame *fr = &p->frames[f];
        x->method_used[fr->method] = 1;
        rp_pb_reset(&x->sub);
        rp_pb_uint64(&x->sub, LINE_FUNCTION_ID, (uint64_t)fr->method + 1);
        rp_pb_int64(&x->sub, LINE_LINE, fr->line);
        rp_pb_reset(&x->msg);
        rp_pb_uint64(&x->msg, LOCATION_ID, (uint64_t)f + 1);
        rp_pb_uint64(&x->msg, LOCATION_MAPPING_ID, 1);
        rp_pb_msg(&x->msg, LOCATION_LINE, &x->sub);
        rp_pb_reset(&x->field);
        rp_pb_msg(&x->field, PROFILE_LOCATION, &x->msg);
        rp_gz_write_pb(x->gz, &x->field);
    }
}

static void write_functions(struct pprof *x)
{
    const struct rp_profile *p = x->p;
    for (size_t m = 0; m < p->nmethods; m++) {
        if (!x->method_used[m])
            continue;
        const struct rp_prof_method *me = &p->methods[m];
        rp_pb_reset(&x->msg);
        rp_pb_uint64(&x->msg, FUNCTION_ID, (uint64_t)m + 1);
        rp_pb_int64(&x->msg, FUNCTION_NAME, str(x, me->display));
        char *sys = out_system_name(me);
        rp_pb_int64(&x->msg, FUNCTION_SYSTEM_NAME, str(x, sys));
        free(sys);
        rp_pb_int64(&x->msg, FUNCTION_FILENAME, str(x, me->file));
        rp_pb_reset(&x->field);
        rp_pb_msg(&x->field, PROFILE_FUNCTION, &x->msg);
        rp_gz_write_pb(x->gz, &x->field);
    }
}

/* A marker's meaning as a comment (`go tool pprof -comments`): "[truncated]:
 * the stack was ... (docs/profiles.md, \"Frames\")". */
static void legend_comment(const char *label, const char *meaning, const char *doc,
                           const char *match, void *arg)
{
    (void)match;
    struct pprof *x = arg;
    char line[1024];
    snprintf(line, sizeof line, "%s: %s (%s)", label, meaning, doc);
    rp_pb_int64(&x->field, PROFILE_COMMENT, str(x, line));
}

/* The meanings of the markers among the locations written, after the title's
 * comments (a repeated field's entries keep their order wherever they are). */
static void write_legend(struct pprof *x)
{
    struct out_legend legend;
    out_legend_init(&legend);
    for (size_t f = 0; f < x->p->nframes; f++)
        if (x->frame_used[f])
            out_legend_add(&legend, x->p->frames[f].display, x->p->frames[f].type);
    rp_pb_reset(&x->field);
    if (out_legend_each(&legend, legend_comment, x))
        rp_gz_write_pb(x->gz, &x->field);
}

/* The string table, in index order. A string that is not valid UTF-8 keeps its
 * index with U+FFFD for each bad byte (rp_pb_string), so references stay
 * right. */
static void write_strings(struct pprof *x)
{
    for (size_t i = 0; i < x->st.n; i++) {
        rp_pb_reset(&x->field);
        rp_pb_string(&x->field, PROFILE_STRING_TABLE, x->st.s[i], x->st.len[i]);
        rp_gz_write_pb(x->gz, &x->field);
    }
}


int rp_out_pprof(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    struct pprof x = {.p = p, .o = o, .state_frames = o->state_frames};
    x.gz = rp_gz_open(out, PPROF_GZIP_LEVEL);
    if (!x.gz) {
        errno = ENOMEM;
        return -1;
    }
    rp_pb_init(&x.field);
    rp_pb_init(&x.msg);
    rp_pb_init(&x.sub);
    rp_strtab_init(&x.st);
    str(&x, "");                                   /* string_table[0] is ""    */
    x.frame_used = rp_xreallocarray(NULL, p->nframes, 1);
    x.method_used = rp_xreallocarray(NULL, p->nmethods, 1);
    memset(x.frame_used, 0, p->nframes);
    memset(x.method_used, 0, p->nmethods);
    x.k_thread = str(&x, "thread");
    x.k_state = str(&x, "state");
    x.k_tid = str(&x, "tid");
    x.k_host = str(&x, "host");
    x.k_pid = str(&x, "pid");
    x.k_recording = str(&x, "recording");
    x.k_thread_id = str(&x, "thread_id");
    x.k_carrier = str(&x, "carrier");

    write_header(&x);
    char tbuf[1024];
    const char *title = out_title(p, o->title, tbuf, sizeof tbuf);
    if (title && *title)
        rp_pb_int64(&x.field, PROFILE_COMMENT, str(&x, title));
    rp_pb_int64(&x.field, PROFILE_COMMENT, str(&x, "ringprof " RINGPROF_VERSION));
    rp_gz_write_pb(x.gz, &x.field);

    rp_prof_foreach_stack(p, write_sample, &x);
    write_mapping(&x);
    write_locations(&x);
    write_functions(&x);
    write_legend(&x);
    write_strings(&x);
    int rc = rp_gz_finish(x.gz);
    int err = errno;

    rp_pb_free(&x.field);
    rp_pb_free(&x.msg);
    rp_pb_free(&x.sub);
    rp_strtab_free(&x.st);
    free(x.frame_used);
    free(x.method_used);
    free(x.ids);
    errno = err;
    return rc;
}
