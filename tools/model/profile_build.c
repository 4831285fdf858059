/*
 * tools/model/profile_build.c — reading chunk files into the calling context tree
 * (profile.h): the builder's pass over the events, through the recording stream
 * (stream.h) that says what each kind id is, the chunk's clock and recording.
 *
 * What the profile keeps is interned for its life (profile_intern.c) and the
 * tree is profile_tree.c's. What belongs to one chunk — the mapping of its pool
 * ids to profile indexes — is rebuilt per chunk, lazily, because ids are only
 * valid inside the chunk that issued them:
 *
 *   chunk frame id  -> profile frame       (frame_map)
 *   chunk thread id -> profile thread, and whether it passes --thread (thr_map;
 *                      dropped on a THREAD record, as the name may have changed)
 *   (chunk thread, chunk VTHREAD) -> the same for a virtual thread's samples on
 *                      a carrier (vt_tab; also dropped on a THREAD record, and
 *                      an entry whose virtual thread was renamed since)
 *   chunk kind id   -> selected or not, where its extras are (kind_map)
 *   chunk stack id  -> CCT leaf node       (leaf_arr in merged mode without class
 *                      frames, else leaf_tab keyed by root, stack and class)
 *
 * A sample therefore costs a few array look-ups and RP_PV_MAX additions once its
 * stack has been seen in the chunk. In merged mode the additions go to a dense
 * per-chunk array indexed by stack id (acc), added to the leaves when the chunk
 * ends, so the hot loop stays in cache however large the tree. The first sample of
 * a stack in a chunk maps its frames to profile frames and hands the sequence to
 * prof_path_leaf, which looks it up among every stack seen so far; only a stack
 * new to the profile walks the tree.
 */
#include "profile_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/hash.h"
#include "ringprof/units.h"
#include "xalloc.h"

/*
 * The per-chunk maps are indexed by chunk ids, and grow only for ids the chunk
 * defined: the reader bounds those by what the file holds (format.h,
 * RP_POOL_ID_SLACK), while a reference may name any id. One stack naming frame
 * 4294967295 made the frame map 16 GiB. An undefined id is damage the reader has
 * counted and reported; it reads as the "[unknown ...]" marker, which the build
 * keeps aside (unknown_frame, unknown_method; thr_undefined and kind_undefined for
 * the thread and kind maps) instead of in the map.
 */

/* The profile method for chunk method `id` seen in a plain (native, ...) frame or
 * a Java one, via the per-chunk maps: most frames of a chunk share their methods.
 * A plain frame's name is a symbol, shown demangled (prof_name_shown). */
static uint32_t chunk_method(struct rp_profile *p, uint32_t id, int plain)
{
    struct rp_prof_build *b = p->b;
    uint32_t **map = &b->meth_map[plain];
    size_t *n = &b->n_meth_map[plain];
    if (id < *n && (*map)[id] != RP_PROF_NONE)
        return (*map)[id];
    const struct rp_method_info *mi = rp_reader_method(b->st.r, id);
    if (!mi) {
        if (b->unknown_method == RP_PROF_NONE)
            b->unknown_method =
                prof_method(p, "", "[unknown method]", "", "", 0, 1, NULL);
        return b->unknown_method;
    }
    uint32_t m = prof_method(p, plain ? mi->klass : prof_class_shown(p, mi->klass),
                               plain ? prof_name_shown(p, mi->name) : mi->name, mi->signature,
                               mi->file, mi->flags, plain, mi->name);
    rp_xgrow_map((void **)map, n, id, sizeof **map, 256, 0xff);
    (*map)[id] = m;
    return m;
}

/* The profile frame for chunk frame `id`, via the per-chunk map. */
static uint32_t chunk_frame(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    if (id < b->n_frame_map && b->frame_map[id] != RP_PROF_NONE)
        return b->frame_map[id];
    const struct rp_frame_info *fi = rp_reader_frame(b->st.r, id);
    if (!fi) {
        if (b->unknown_frame == RP_PROF_NONE)
            b->unknown_frame = prof_marker(p, "[unknown frame]");
        return b->unknown_frame;
    }
    /* Native code is named by its bare symbol; a Java method declared native
     * (RP_METHOD_NATIVE, e.g. Deflater.deflateBytesBytes) keeps its class. */
    const struct rp_method_info *mi = rp_reader_method(b->st.r, fi->method);
    int plain = !prof_frame_is_java(fi->type) && !(mi && (mi->flags & RP_METHOD_NATIVE));
    uint32_t m = chunk_method(p, fi->method, plain);
    int type = (int)fi->type < RP_FRAME_TYPES ? (int)fi->type : RP_FRAME_CPP;
    if (prof_frame_is_java(type) && (b->o.norm.merge_types || b->o.norm.group))
        type = RP_FRAME_JIT;
    uint32_t f = prof_frame(p, m, type, fi->bci, fi->line);
    rp_xgrow_map((void **)&b->frame_map, &b->n_frame_map, id, sizeof *b->frame_map, 256, 0xff);
    b->frame_map[id] = f;
    return f;
}

/* --------------------------------------------------------------- sources -- */

/* The chunk's recording (the stream's index) in p->sources, added when new. */
static void source_add(struct rp_profile *p)
{
    struct rp_prof_build *b = p->b;
    const struct rp_reader *r = b->st.r;
    if (prof_source(p) < p->nsources)
        return;
    rp_xgrow((void **)&p->sources, &b->cap_sources, p->nsources, sizeof *p->sources, 64);
    struct rp_prof_source *s = &p->sources[p->nsources++];
    memset(s, 0, sizeof *s);
    s->recording = prof_str(p, rp_stream_recording(&b->st));
    s->pid = prof_str(p, rp_reader_meta(r, RP_META_PID));
    s->host = prof_str(p, rp_reader_meta(r, RP_META_HOST));
    s->jvm = prof_str(p, rp_reader_meta(r, RP_META_JVM_NAME));
    s->service = prof_str(p, rp_reader_meta(r, RP_META_SERVICE));
    s->labels = prof_str(p, rp_reader_meta(r, RP_META_LABELS));
    s->main = prof_str(p, rp_reader_meta(r, RP_META_JVM_MAIN));
}

/* A chunk's thread definition (RP_EV_THREAD) of a thread the profile already has
 * renames it, sampled in this chunk or not: main becomes DestroyJavaVM after its
 * last sample. */
static void thread_redefined(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    const struct rp_thread_info *ti = rp_stream_thread(&b->st, id);
    if (!ti || !b->thrs.slot)
        return;
    uint32_t t = b->thrs.slot[prof_thread_slot(p, ti->os_tid, 0)];
    if (t != RP_PROF_NONE)
        prof_thread_named(p, &p->threads[t], ti->name);
}

/* Resolve chunk thread `id`: its profile thread, and whether it passes --thread. */
static struct thr_state *chunk_thread(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    const struct rp_thread_info *ti = rp_stream_thread(&b->st, id);
    struct thr_state *ts = &b->thr_undefined;   /* the map holds defined ids only */
    if (ti || !id) {
        rp_xgrow_map((void **)&b->thr_map, &b->n_thr_map, id, sizeof *b->thr_map, 64, 0);
        ts = &b->thr_map[id];
    }
    if (ts->thread)
        return ts;
    uint32_t t = prof_thread(p, ti ? ti->os_tid : 0, 0);
    struct rp_prof_thread *th = &p->threads[t];
    if (ti) {
        th->java_tid = ti->java_tid;
        th->flags = ti->flags;
        prof_thread_named(p, th, ti->name);
    } else if (!th->name[0]) {
        th->label = prof_str(p, id ? "[unknown thread]" : "[no thread]");
    }
    ts->thread = t + 1;
    const char *now = ti && ti->name && ti->name[0] ? ti->name : th->name;
    ts->pass = !b->o.thread_re || regexec(b->o.thread_re, now, 0, NULL, 0) == 0;
    return ts;
}

/* Resolve the samples of chunk VTHREAD `vid` on chunk thread `id`: the profile
 * thread of that virtual thread on that carrier, and whether its name or its
 * carrier's passes --thread. */
static struct thr_state *chunk_vthread(struct rp_profile *p, uint32_t id, uint32_t vid)
{
    struct rp_prof_build *b = p->b;
    const struct rp_vthread_info *vi = rp_reader_vthread(b->st.r, vid);
    if (!b->vt_tab || (b->vt_used + 1) * 2 > b->vt_mask) {
        struct vt_entry *old = b->vt_tab;
        size_t n = old ? b->vt_mask + 1 : 0;
        b->vt_mask = n ? n * 2 - 1 : 63;
        b->vt_tab = rp_xcalloc(b->vt_mask + 1, sizeof *b->vt_tab);
        b->vt_used = 0;
        for (size_t i = 0; i < n; i++)
            if (old[i].vthread) {
                size_t j = rp_mix64((uint64_t)old[i].thread << 32 | old[i].vthread) &
                           b->vt_mask;
                while (b->vt_tab[j].vthread)
                    j = (j + 1) & b->vt_mask;
                b->vt_tab[j] = old[i];
                b->vt_used++;
            }
        free(old);
    }
    size_t j = rp_mix64((uint64_t)id << 32 | vid) & b->vt_mask;
    while (b->vt_tab[j].vthread && (b->vt_tab[j].thread != id || b->vt_tab[j].vthread != vid))
        j = (j + 1) & b->vt_mask;
    struct vt_entry *e = &b->vt_tab[j];
    if (e->vthread && (!vi || e->name == vi->name))
        return &e->st;
    if (!e->vthread)
        b->vt_used++;
    const struct rp_thread_info *ci = rp_stream_thread(&b->st, id);
    /* A VTHREAD record lost to damage leaves the id: the samples stay apart. */
    uint64_t java_tid = vi ? vi->java_tid : vid;
    uint32_t t = prof_thread(p, ci ? ci->os_tid : 0, java_tid);
    struct rp_prof_thread *th = &p->threads[t];
    th->java_tid = java_tid;
    th->flags = ci ? ci->flags : 0;
    if (ci && ci->name && !th->carrier[0])
        th->carrier = prof_str(p, ci->name);
    prof_vthread_label(p, th);
    prof_thread_named(p, th, vi ? vi->name : NULL);
    *e = (struct vt_entry){.thread = id, .vthread = vid, .name = vi ? vi->name : NULL,
                           .st = {.thread = t + 1}};
    char id_text[32];
    snprintf(id_text, sizeof id_text, "virtual #%llu", (unsigned long long)java_tid);
    e->st.pass = !b->o.thread_re ||
                 (vi && vi->name[0] && regexec(b->o.thread_re, vi->name, 0, NULL, 0) == 0) ||
                 (ci && ci->name && regexec(b->o.thread_re, ci->name, 0, NULL, 0) == 0) ||
                 regexec(b->o.thread_re, id_text, 0, NULL, 0) == 0;
    return &e->st;
}

/* Chunk stack `stack` (plus the leaf frame `cls` stands for, if not 0) as
 * profile frames, root side first, and its leaf below `root` (prof_path_leaf):
 * @return the leaf, or LEAF_DROPPED. `cls` is a
 * chunk class id (the allocated class, the monitor's class), or with
 * options.state_frames a thread state + 1 (a profile holds one kind, and a kind
 * with a "state" extra has no "class" extra, so the two cannot mix), with
 * CLS_UNFINISHED for a lock wait in progress. */
static uint32_t stack_leaf(struct rp_profile *p, uint32_t root, uint32_t stack,
                           uint32_t cls)
{
    struct rp_prof_build *b = p->b;
    uint32_t n = 0, flags = 0;
    const uint32_t *ids = stack ? rp_reader_stack(b->st.r, stack, &n, &flags) : NULL;
    size_t need = (size_t)n + 3;
    if (need > b->cap_path) {
        b->cap_path = need * 2;
        b->pathbuf = rp_xrealloc(b->pathbuf, b->cap_path * sizeof *b->pathbuf);
    }
    uint32_t *path = b->pathbuf;
    size_t len = 0;
    if (!ids && stack)
        path[len++] = prof_marker(p, "[unknown stack]");
    else if (n == 0)
        path[len++] = prof_marker(p, "[no stack]");
    if (flags & RP_STACK_TRUNCATED)
        path[len++] = prof_marker(p, "[truncated]");
    for (uint32_t i = n; i-- > 0;)
        path[len++] = chunk_frame(p, ids[i]);
    if (cls & CLS_UNFINISHED) {
        path[len++] = prof_marker(p, "[unfinished]");
        cls &= ~CLS_UNFINISHED;
    }
    if (cls && b->o.state_frames && p->has_states) {
        char text[32];
        snprintf(text, sizeof text, "[state:%s]", rp_thread_state_name(cls - 1));
        path[len++] = prof_marker(p, text);
    } else if (cls) {
        const char *name = prof_class_shown(p, rp_reader_class(b->st.r, cls));
        uint32_t m = prof_method(p, "", name ? name : "[unknown class]", "", "", 0, 1,
                                   NULL);
        path[len++] = prof_frame(p, m, RP_PFRAME_CLASS, -1, 0);
    }
    return prof_path_leaf(p, root, path, len);
}

static uint64_t leaf_hash(uint32_t root, uint32_t stack, uint32_t cls)
{
    return rp_mix64((uint64_t)root << 32 | stack) ^ rp_mix64(cls + 0x9e3779b97f4a7c15ull);
}

/*
 * Whether samples of (root 0, stack, class 0) use the arrays indexed by stack id
 * (leaf_arr, acc) rather than the hash table. Only for ids the chunk has defined:
 * the reader bounds those by what the file holds (format.h, RP_POOL_ID_SLACK),
 * while a sample may name any id, and one sample naming stack 4000000000 made
 * the arrays 4 G entries long (found by tests/fuzz: sample-huge-stack-id.rpc).
 */
static int leaf_dense(const struct rp_prof_build *b, uint32_t root, uint32_t stack,
                      uint32_t cls)
{
    uint32_t n, flags;
    return root == 0 && cls == 0 &&
           (stack < b->n_leaf_arr || rp_reader_stack(b->st.r, stack, &n, &flags));
}

/* The leaf for (root, stack, cls) in this chunk, computed on first use. */
static uint32_t leaf_for(struct rp_profile *p, uint32_t root, uint32_t stack,
                         uint32_t cls)
{
    struct rp_prof_build *b = p->b;
    if (leaf_dense(b, root, stack, cls)) {
        if (stack < b->n_leaf_arr && b->leaf_arr[stack] != LEAF_NONE)
            return b->leaf_arr[stack];
        uint32_t leaf = stack_leaf(p, 0, stack, 0);
        if (stack >= b->n_leaf_arr) {
            size_t n = b->n_leaf_arr ? b->n_leaf_arr : 1024;
            while (n <= stack)
                n *= 2;
            b->leaf_arr = rp_xrealloc(b->leaf_arr, n * sizeof *b->leaf_arr);
            memset(b->leaf_arr + b->n_leaf_arr, 0xff,
                   (n - b->n_leaf_arr) * sizeof *b->leaf_arr);
            b->acc = rp_xrealloc(b->acc, n * sizeof *b->acc);
            memset(b->acc + b->n_leaf_arr, 0, (n - b->n_leaf_arr) * sizeof *b->acc);
            b->n_leaf_arr = n;
        }
        b->leaf_arr[stack] = leaf;
        return leaf;
    }
    if (b->leaf_used * 2 >= b->leaf_mask) {
        size_t ncap = b->leaf_tab ? (b->leaf_mask + 1) * 2 : 1024;
        struct leaf_entry *nt = rp_xrealloc(NULL, ncap * sizeof *nt);
        memset(nt, 0xff, ncap * sizeof *nt);
        for (size_t i = 0; b->leaf_tab && i <= b->leaf_mask; i++) {
            struct leaf_entry *e = &b->leaf_tab[i];
            if (e->leaf == LEAF_NONE)
                continue;
            size_t j = leaf_hash(e->root, e->stack, e->cls) & (ncap - 1);
            while (nt[j].leaf != LEAF_NONE)
                j = (j + 1) & (ncap - 1);
            nt[j] = *e;
        }
        free(b->leaf_tab);
        b->leaf_tab = nt;
        b->leaf_mask = ncap - 1;
    }
    size_t j = leaf_hash(root, stack, cls) & b->leaf_mask;
    for (; b->leaf_tab[j].leaf != LEAF_NONE; j = (j + 1) & b->leaf_mask) {
        struct leaf_entry *e = &b->leaf_tab[j];
        if (e->root == root && e->stack == stack && e->cls == cls)
            return e->leaf;
    }
    uint32_t leaf = stack_leaf(p, root, stack, cls);
    /* stack_leaf does not touch leaf_tab, so slot j is still free. */
    b->leaf_tab[j] = (struct leaf_entry){root, stack, cls, leaf};
    b->leaf_used++;
    return leaf;
}

/* ----------------------------------------------------------------- kinds -- */

static double parse_interval(const char *opts)
{
    /* The option `interval=` of the agent's option string, in the agent's own
     * grammar (ringprof/units.h); a bare number is ns, as older agents wrote it. */
    for (const char *s = opts; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
        if (strncmp(s, "interval=", 9))
            continue;
        char val[64];
        size_t n = strcspn(s + 9, ",");
        if (n == 0 || n >= sizeof val)
            return 0;
        memcpy(val, s + 9, n);
        val[n] = 0;
        uint64_t ns;
        char *end;
        if (rp_parse_duration(val, &ns) == 0)
            return (double)ns;
        ns = strtoull(val, &end, 10);
        return val[0] >= '0' && val[0] <= '9' && !*end ? (double)ns : 0;
    }
    return 0;
}

static int unit_is_count(const char *unit)
{
    return !unit[0] || !strcmp(unit, "samples") || !strcmp(unit, "count");
}

/* The entry of p->kinds for a chunk's kind, by name: found through the name's
 * string index (kind_of_str), as a file may define kinds by the hundred thousand. */
static uint32_t kind_seen(struct rp_profile *p, const struct rp_kind_info *ki)
{
    struct rp_prof_build *b = p->b;
    uint32_t sid = prof_str_id(p, ki ? ki->name : "[unknown kind]");
    rp_xgrow_map((void **)&b->kind_of_str, &b->n_kind_of_str, sid, sizeof *b->kind_of_str,
                 64, 0);
    if (b->kind_of_str[sid])
        return b->kind_of_str[sid] - 1;
    const char *name = b->str_list[sid];
    rp_xgrow((void **)&p->kinds, &b->cap_kinds, p->nkinds, sizeof *p->kinds, 64);
    b->kind_of_str[sid] = (uint32_t)p->nkinds + 1;
    struct rp_prof_kind_seen *k = &p->kinds[p->nkinds];
    k->name = name;
    k->unit = prof_str(p, ki ? ki->unit : "");
    k->period = ki ? ki->period : 0;
    k->samples = 0;
    return (uint32_t)p->nkinds++;
}

/* Select the profile's kind from its first matching KIND record (lock.waiting
 * makes the profile's kind lock, whose part it is when `event` is lock). */
static void kind_select(struct rp_profile *p, const struct rp_stream_kind *k)
{
    struct rp_prof_build *b = p->b;
    if (k->x[RP_SX_STATE] >= 0)
        p->has_states = 1;
    if (p->kind[0])
        return;
    p->kind = prof_str(p, b->event && rp_kind_in_event(b->event, k->name) ? b->event
                                                                          : k->name);
    p->unit = prof_str(p, k->unit);
    p->period = k->period;
    if (!b->event)
        b->event = strdup(p->kind);
    p->vtypes[RP_PV_WEIGHT].type = p->kind;
    p->vtypes[RP_PV_WEIGHT].unit = p->unit;
    if (k->x[RP_SX_OBJECTS] >= 0) {
        p->nvalues = 3;
        p->vtypes[RP_PV_OBJECTS].type = prof_str(p, "objects");
        p->vtypes[RP_PV_OBJECTS].unit = prof_str(p, "count");
    }
    if (!strcmp(p->unit, RP_UNIT_NS))
        p->ns_per_unit = 1;
    else if (unit_is_count(p->unit))
        p->ns_per_unit = b->interval_ns;
}

static struct kind_state *chunk_kind(struct rp_profile *p, uint32_t id)
{
    struct rp_prof_build *b = p->b;
    const struct rp_stream_kind *k = rp_stream_kind(&b->st, id);
    const struct rp_kind_info *ki = k->info;
    struct kind_state *ks = &b->kind_undefined;   /* the map holds defined ids only */
    if (ki) {
        rp_xgrow_map((void **)&b->kind_map, &b->n_kind_map, id, sizeof *b->kind_map, 8,
                     0);
        ks = &b->kind_map[id];
    }
    if (ks->state)
        return ks;
    ks->seen = kind_seen(p, ki);
    ks->state = -1;
    ks->class_x = ks->objects_x = ks->state_x = ks->age_x = -1;
    ks->unfinished = k->kind == RP_SK_LOCK_WAITING;
    if (ki && ki->name && (b->o.all_kinds || !b->event || rp_kind_in_event(b->event, ki->name))) {
        kind_select(p, k);
        ks->state = 1;
        ks->class_x = k->x[RP_SX_CLASS];
        ks->objects_x = k->x[RP_SX_OBJECTS];
        ks->state_x = k->x[RP_SX_STATE];
        ks->age_x = k->x[RP_SX_AGE_GCS];
    }
    return ks;
}

/* --------------------------------------------------------------- samples -- */

/* A lock wait's in-progress record: whether it stands for its wait
 * (options.waiting). */
static int keep_waiting(struct rp_profile *p, const struct rp_event *ev)
{
    struct rp_prof_build *b = p->b;
    const struct rp_thread_info *ti = rp_stream_thread(&b->st, ev->u.sample.thread);
    return b->o.waiting &&
           b->o.waiting(b->o.waiting_arg, p->sources[prof_source(p)].recording,
                        ti ? ti->os_tid : 0, ev->u.sample.time, ev->u.sample.weight);
}

static void add_sample(struct rp_profile *p, const struct rp_event *ev)
{
    struct rp_prof_build *b = p->b;
    const uint32_t kind = ev->u.sample.kind;
    struct kind_state *ks = (kind < b->n_kind_map && b->kind_map[kind].state)
                                ? &b->kind_map[kind] : chunk_kind(p, kind);
    p->stats.samples_read++;
    p->kinds[ks->seen].samples++;
    if (ks->state < 0) {
        if (!rp_stream_kind(&b->st, kind)->info)
            p->stats.samples_unresolved++;
        else
            p->stats.samples_other_kind++;
        return;
    }
    if (ks->unfinished && !keep_waiting(p, ev)) {
        p->stats.samples_superseded++;
        return;
    }
    const uint64_t weight = ev->u.sample.weight;
    p->stats.weight_read_kind += weight;

    uint64_t wall = 0;
    if (b->st.clock.ok) {
        wall = rp_stream_wall(&b->st, ev->u.sample.time);
        if ((b->o.from_wall && wall < b->o.from_wall) ||
            (b->o.to_wall && wall >= b->o.to_wall)) {
            p->stats.samples_time_filtered++;
            return;
        }
    }
    if (b->o.instant && (!b->instant_ok || ev->u.sample.time != b->instant_mono)) {
        p->stats.samples_instant_filtered++;
        return;
    }
    if (b->o.min_age_gcs && ks->age_x >= 0 && (uint32_t)ks->age_x < ev->u.sample.nextra &&
        ev->u.sample.extra[ks->age_x] < b->o.min_age_gcs) {
        p->stats.samples_young_filtered++;
        return;
    }
    const uint32_t tid = ev->u.sample.thread;
    struct thr_state *ts = ev->u.sample.vthread ? chunk_vthread(p, tid, ev->u.sample.vthread)
                         : (tid < b->n_thr_map && b->thr_map[tid].thread)
                               ? &b->thr_map[tid] : chunk_thread(p, tid);
    if (!ts->pass) {
        p->stats.samples_thread_filtered++;
        return;
    }
    unsigned state = RP_TS_UNKNOWN;
    if (ks->state_x >= 0) {
        if ((uint32_t)ks->state_x < ev->u.sample.nextra &&
            ev->u.sample.extra[ks->state_x] < RP_TS_COUNT)
            state = (unsigned)ev->u.sample.extra[ks->state_x];
        if (b->o.state_mask && !(b->o.state_mask & (1u << state))) {
            p->stats.samples_state_filtered++;
            return;
        }
    }
    struct rp_prof_thread *th = &p->threads[ts->thread - 1];
    uint32_t root = p->per_thread ? th->node : 0;
    uint32_t cls = 0;
    if (ks->class_x >= 0 && (uint32_t)ks->class_x < ev->u.sample.nextra)
        cls = ev->u.sample.extra[ks->class_x] > CLS_MAX
                  ? CLS_MAX : (uint32_t)ev->u.sample.extra[ks->class_x];
    else if (ks->state_x >= 0 && b->o.state_frames)
        cls = state + 1;
    if (ks->unfinished)
        cls |= CLS_UNFINISHED;
    uint32_t leaf = leaf_for(p, root, ev->u.sample.stack, cls);
    if (leaf == LEAF_DROPPED) {
        p->stats.samples_frame_filtered++;
        return;
    }
    uint64_t *self = leaf_dense(b, root, ev->u.sample.stack, cls)
                         ? b->acc[ev->u.sample.stack].v : p->nodes[leaf].self;
    self[RP_PV_SAMPLES]++;
    self[RP_PV_WEIGHT] += weight;
    if (ks->objects_x >= 0 && (uint32_t)ks->objects_x < ev->u.sample.nextra)
        self[RP_PV_OBJECTS] += ev->u.sample.extra[ks->objects_x];
    th->samples++;
    p->stats.samples_kept++;
    if (ks->state_x >= 0) {
        p->state_samples[state]++;
        p->state_weight[state] += weight;
    }
    if (b->o.on_sample)
        b->o.on_sample(b->o.on_sample_arg, p, leaf, ev, rp_stream_kind(&b->st, kind)->info);
    if (wall) {
        struct rp_prof_source *s = &p->sources[prof_source(p)];
        if (!s->wall_first || wall < s->wall_first)
            s->wall_first = wall;
        if (wall > s->wall_last)
            s->wall_last = wall;
        if (!p->wall_first || wall < p->wall_first)
            p->wall_first = wall;
        if (wall > p->wall_last)
            p->wall_last = wall;
    }
}

/* ------------------------------------------------------------ public API -- */

struct rp_profile *rp_prof_new(const struct rp_prof_options *o)
{
    struct rp_profile *p = rp_xcalloc(1, sizeof *p);
    struct rp_prof_build *b = rp_xcalloc(1, sizeof *b);
    p->b = b;
    b->o = *o;
    b->event = o->event ? strdup(o->event) : NULL;
    b->unknown_frame = b->unknown_method = RP_PROF_NONE;
    prof_tab_init(&b->strs, 1024);
    prof_tab_init(&b->meths, 1024);
    prof_tab_init(&b->frms, 1024);
    prof_tab_init(&b->thrs, 64);
    prof_kids_grow(b);
    prof_stk_grow(b);
    p->granularity = o->granularity;
    p->per_thread = o->per_thread;
    p->group = o->norm.group;
    p->kind = prof_str(p, "");
    p->unit = p->kind;
    p->nvalues = 2;
    p->vtypes[RP_PV_SAMPLES].type = prof_str(p, "samples");
    p->vtypes[RP_PV_SAMPLES].unit = prof_str(p, "count");
    p->vtypes[RP_PV_WEIGHT].type = p->kind;
    p->vtypes[RP_PV_WEIGHT].unit = p->unit;
    prof_node_new(p, RP_PROF_NONE, RP_PNODE_ROOT, 0);
    return p;
}

static void chunk_reset(struct rp_prof_build *b)
{
    if (b->frame_map)
        memset(b->frame_map, 0xff, b->n_frame_map * sizeof *b->frame_map);
    for (int k = 0; k < 2; k++)
        if (b->meth_map[k])
            memset(b->meth_map[k], 0xff, b->n_meth_map[k] * sizeof *b->meth_map[k]);
    if (b->thr_map)
        memset(b->thr_map, 0, b->n_thr_map * sizeof *b->thr_map);
    if (b->vt_tab)
        memset(b->vt_tab, 0, (b->vt_mask + 1) * sizeof *b->vt_tab);
    b->vt_used = 0;
    if (b->kind_map)
        memset(b->kind_map, 0, b->n_kind_map * sizeof *b->kind_map);
    memset(&b->thr_undefined, 0, sizeof b->thr_undefined);
    memset(&b->kind_undefined, 0, sizeof b->kind_undefined);
    if (b->leaf_arr)
        memset(b->leaf_arr, 0xff, b->n_leaf_arr * sizeof *b->leaf_arr);
    free(b->leaf_tab);
    b->leaf_tab = NULL;
    b->leaf_mask = b->leaf_used = 0;
}

static void diag_count(void *arg, const char *path, uint64_t offset, const char *reason,
                       int fatal)
{
    struct rp_profile *p = arg;
    if (!fatal)
        p->stats.diag_warnings++;
    if (p->b->o.diag)
        p->b->o.diag(p->b->o.diag_arg, path, offset, reason, fatal);
}

void rp_prof_add_reader(struct rp_profile *p, struct rp_reader *r)
{
    struct rp_prof_build *b = p->b;
    chunk_reset(b);
    rp_stream_begin(&b->st, r);
    source_add(p);
    b->interval_ns = parse_interval(rp_reader_meta(r, RP_META_OPTIONS));
    if (b->o.instant)
        b->instant_ok = b->o.instant(b->o.instant_arg, p->sources[prof_source(p)].recording,
                                     &b->instant_mono);
    if (p->kind[0] && !p->ns_per_unit && unit_is_count(p->unit))
        p->ns_per_unit = b->interval_ns;

    if (b->o.on_chunk)
        b->o.on_chunk(b->o.on_sample_arg, p, r, 0);
    struct rp_event ev;
    while (rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_SAMPLE)
            add_sample(p, &ev);
        else if (ev.type != RP_EV_THREAD && b->o.on_event)
            b->o.on_event(b->o.on_sample_arg, p, &ev);
        else if (ev.type == RP_EV_THREAD) {
            thread_redefined(p, ev.u.thread.id);
            if (ev.u.thread.id < b->n_thr_map)
                b->thr_map[ev.u.thread.id].thread = 0;   /* re-read flags, re-filter */
            if (b->vt_tab) {                             /* and its virtual threads' */
                memset(b->vt_tab, 0, (b->vt_mask + 1) * sizeof *b->vt_tab);
                b->vt_used = 0;
            }
        }
    }
    for (size_t i = 0; i < b->n_leaf_arr; i++) {   /* the chunk's sums to the leaves */
        if (!b->acc[i].v[RP_PV_SAMPLES])
            continue;
        for (int v = 0; v < RP_PV_MAX; v++)
            p->nodes[b->leaf_arr[i]].self[v] += b->acc[i].v[v];
        memset(&b->acc[i], 0, sizeof b->acc[i]);
    }
    if (b->o.on_chunk)
        b->o.on_chunk(b->o.on_sample_arg, p, r, 1);
    struct rp_reader_stats st;
    rp_reader_stats(r, &st);
    p->stats.segments_ok += st.segments_ok;
    p->stats.segments_bad += st.segments_bad;
    p->stats.segments_partial += st.segments_partial;
    p->stats.records_bad += st.records_bad;
    rp_stream_end(&b->st);
}

struct rp_stream *rp_prof_stream(const struct rp_profile *p)
{
    return p->b && p->b->st.r ? &p->b->st : NULL;
}

const struct rp_vthread_info *rp_prof_chunk_vthread(const struct rp_profile *p,
                                                    uint32_t id)
{
    return p->b && p->b->st.r && id ? rp_reader_vthread(p->b->st.r, id) : NULL;
}

const struct rp_thread_info *rp_prof_chunk_thread(const struct rp_profile *p,
                                                  uint32_t id)
{
    return p->b ? rp_stream_thread(&p->b->st, id) : NULL;
}

const char *rp_prof_chunk_class(const struct rp_profile *p, uint32_t id)
{
    if (!p->b || !p->b->st.r || !id)
        return NULL;
    /* The callback's profile is const to it; a shortened name goes into the
     * arena, as the class frames' names do. */
    return prof_class_shown((struct rp_profile *)p, rp_reader_class(p->b->st.r, id));
}

int rp_prof_add_file(struct rp_profile *p, const char *path)
{
    p->stats.files++;
    struct rp_reader *r = rp_reader_open(path, diag_count, p);
    if (!r) {
        p->stats.files_unreadable++;
        return -1;
    }
    rp_prof_add_reader(p, r);
    rp_reader_close(r);
    return 0;
}

