/*
 * recorder/chunk_reader_records.c — decoding a chunk segment's records (format:
 * ringprof/format.h) and delivering events (rp_reader_next, ringprof/chunk.h).
 *
 * A definition (STRING .. KIND, THREAD, VTHREAD) goes into its pool
 * (chunk_reader_pools.c); the other records become events. Every length, count
 * and id is checked against what remains of the record body before it is used,
 * every limit the writer keeps (RP_CHUNK_STRING_MAX, RP_CHUNK_STACK_MAX) is
 * enforced again, and a SAMPLES record is decoded once to validate it before any
 * of its samples is delivered, so a record yields all its samples or none. A bad
 * record is reported and skipped by its own body_len; references to ids the chunk
 * never defined are counted and summed up in one line per segment (the callers'
 * tables must not grow to such an id).
 *
 * One thread uses a reader (chunk_reader.h). Not async-signal-safe.
 */
#include <stdio.h>
#include <string.h>

#include "ringprof/chunk.h"
#include "chunk_reader.h"
#include "varint.h"

/* A hostile segment can hold millions of bad records; the first few per segment
 * are reported one by one, the rest counted in one line at the segment's end. */
#define RD_BAD_RECORDS_SHOWN 8

static void bad_record(struct rp_reader *r, const uint8_t *rec, unsigned type,
                       const char *why)
{
    r->st.records_bad++;
    if (r->seg_bad++ < RD_BAD_RECORDS_SHOWN)
        rp_rd_report(r, r->seg_off, 0, "segment %u: record of type %u at payload "
                     "offset %zu: %s", r->seg_seq, type, (size_t)(rec - r->raw), why);
}

/* A reference to `id` of `pool` that must be defined (a frame of a stack, a
 * sample's kind: 0 is not a valid one): counted if it is not, and the segment's
 * first such reference kept for its summary line. */
static void ref_defined(struct rp_reader *r, int pool, uint32_t id)
{
    if (pool_get(&r->pool[pool], id))
        return;
    r->st.unresolved_refs++;
    if (!r->seg_unresolved++) {
        r->seg_ref_pool = pool;
        r->seg_ref_id = id;
    }
}

/* A reference that may be 0 (none). */
static void ref(struct rp_reader *r, int pool, uint32_t id)
{
    if (id)
        ref_defined(r, pool, id);
}

static const char *ref_str(struct rp_reader *r, uint32_t id)
{
    ref(r, P_STR, id);
    return rp_reader_string(r, id);
}

#define GET(v)   do { if (rp_varint_get(&q, e, &(v)) < 0) goto malformed; } while (0)
#define GET32(v) do { if (rp_varint_get32(&q, e, &(v)) < 0) goto malformed; } while (0)

/* Define a pool entry that will hold `extra` more bytes (its string or frames),
 * or report why not; evaluates to the slot or NULL. */
static void *define(struct rp_reader *r, int pool, uint32_t id, size_t extra,
                    const uint8_t *rec, unsigned type, int *fresh)
{
    const char *why = NULL;
    char msg[224];
    void *slot = rp_rd_pool_def(r, &r->pool[pool], id, extra, fresh, &why);
    if (slot && !*fresh && pool != P_THREAD && pool != P_VTHREAD)
        why = "defined twice (the first definition stands)";
    else if (slot)
        return slot;
    snprintf(msg, sizeof msg, "%s id %u: %s", r->pool[pool].name, id, why);
    bad_record(r, rec, type, msg);
    return NULL;
}

/* Validate a SAMPLES body from its first sample on; @return 0 if sound, with
 * *vt the samples' VTHREAD ids when the body has them after the samples (NULL
 * when it ends there). */
static int check_samples(const uint8_t *q, const uint8_t *e, uint64_t count,
                         uint64_t nextra, uint64_t wunit, const uint8_t **vt,
                         const char **why)
{
    if (count > (uint64_t)(e - q) / 2) {
        *why = "sample count exceeds the record body";
        return -1;
    }
    if (count && nextra > (uint64_t)(e - q)) {
        *why = "extra-field count exceeds the record body";
        return -1;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t head, v, w;
        uint32_t stack;
        if (rp_varint_get(&q, e, &head) < 0)
            goto trunc;
        unsigned mode = head & 3;
        if (mode == 3) {
            *why = "reserved weight mode 3";
            return -1;
        }
        if (mode) {
            if (rp_varint_get(&q, e, &v) < 0)
                goto trunc;
            if (mode == 1 && __builtin_mul_overflow(v, wunit, &w)) {
                *why = "weight overflows 64 bits";
                return -1;
            }
        }
        if (rp_varint_get32(&q, e, &stack) < 0)
            goto trunc;
        for (uint64_t j = 0; j < nextra; j++)
            if (rp_varint_get(&q, e, &v) < 0)
                goto trunc;
    }
    *vt = q < e ? q : NULL;
    for (uint64_t i = 0; *vt && i < count; i++) {
        uint32_t id;
        if (rp_varint_get32(&q, e, &id) < 0) {
            *why = "the samples' virtual-thread ids run past the record body";
            return -1;
        }
    }
    return 0;
trunc:
    *why = "samples run past the record body, or a varint is malformed";
    return -1;
}

/* Decode the record at r->pos. @return 1 if it produced an event in *ev. */
static int decode_record(struct rp_reader *r, struct rp_event *ev)
{
    const uint8_t *rec = r->pos, *q = rec + 1, *e;
    unsigned type = rec[0];
    uint64_t blen;
    if (rp_varint_get(&q, r->end, &blen) < 0 || blen > (uint64_t)(r->end - q)) {
        bad_record(r, rec, type, "body length runs past the end of the segment");
        r->pos = r->end;
        return 0;
    }
    e = q + blen;
    r->pos = e;
    r->recs_seen++;
    int fresh;
    uint32_t id;

    switch (type) {
    case RP_REC_STRING: {
        GET32(id);
        size_t len = (size_t)(e - q);
        if (len > RP_CHUNK_STRING_MAX) {
            bad_record(r, rec, type, "a string longer than RP_CHUNK_STRING_MAX (1 MiB)");
            return 0;
        }
        struct rstr *s = define(r, P_STR, id, len + 1, rec, type, &fresh);
        if (!s)
            return 0;
        s->s = rp_rd_arena_str(r, q, len);
        s->len = len;
        if (!s->s)
            goto nomem;
        return 0;
    }
    case RP_REC_CLASS: {
        uint32_t name;
        GET32(id);
        GET32(name);
        struct rclass *c = define(r, P_CLASS, id, 0, rec, type, &fresh);
        if (c)
            c->name = ref_str(r, name);
        return 0;
    }
    case RP_REC_METHOD: {
        uint32_t klass, name, sig, file, flags;
        GET32(id);
        GET32(klass);
        GET32(name);
        GET32(sig);
        GET32(file);
        GET32(flags);
        struct rp_method_info *m = define(r, P_METHOD, id, 0, rec, type, &fresh);
        if (!m)
            return 0;
        ref(r, P_CLASS, klass);
        m->klass = rp_reader_class(r, klass);
        m->name = ref_str(r, name);
        m->signature = ref_str(r, sig);
        m->file = ref_str(r, file);
        m->flags = flags;
        return 0;
    }
    case RP_REC_FRAME: {
        uint32_t method, ftype, bci1, line;
        GET32(id);
        GET32(method);
        GET32(ftype);
        GET32(bci1);
        GET32(line);
        if (bci1 > (uint32_t)INT32_MAX + 1) {
            bad_record(r, rec, type, "bci out of range");
            return 0;
        }
        struct rp_frame_info *f = define(r, P_FRAME, id, 0, rec, type, &fresh);
        if (!f)
            return 0;
        ref(r, P_METHOD, method);
        f->method = method;
        /* A type from a newer minor is shown as native code (docs/format.md). */
        f->type = ftype < RP_FRAME_TYPES ? (enum rp_frame_type)ftype : RP_FRAME_NATIVE;
        f->bci = bci1 ? (int32_t)(bci1 - 1) : -1;
        f->line = line;
        return 0;
    }
    case RP_REC_STACK: {
        uint32_t flags, n;
        GET32(id);
        GET32(flags);
        GET32(n);
        if (n > RP_CHUNK_STACK_MAX) {
            bad_record(r, rec, type,
                       "a stack deeper than RP_CHUNK_STACK_MAX (1 Mi frames)");
            return 0;
        }
        if (n > (uint64_t)(e - q)) {
            bad_record(r, rec, type, "frame count exceeds the record body");
            return 0;
        }
        /* Validated first, so that nothing is allocated for a record that fails. */
        const uint8_t *first = q;
        for (uint32_t i = 0, f; i < n; i++)
            GET32(f);
        struct rstack *s = define(r, P_STACK, id, (size_t)n * 4 + 4, rec, type, &fresh);
        if (!s)
            return 0;
        uint32_t *frames = rp_rd_pool_alloc(r, (size_t)n * 4 + 4);
        if (!frames)
            goto nomem;
        q = first;
        for (uint32_t i = 0; i < n; i++) {
            (void)rp_varint_get32(&q, e, &frames[i]);
            ref_defined(r, P_FRAME, frames[i]);
        }
        s->frames = frames;
        s->n = n;
        s->flags = flags;
        return 0;
    }
    case RP_REC_THREAD: {
        uint64_t os_tid, java_tid, t;
        uint32_t name, flags;
        GET32(id);
        GET(os_tid);
        GET(java_tid);
        GET32(name);
        GET32(flags);
        GET(t);
        struct rp_thread_info *th = define(r, P_THREAD, id, 0, rec, type, &fresh);
        if (!th)
            return 0;
        th->os_tid = os_tid;
        th->java_tid = java_tid;
        th->name = ref_str(r, name);
        th->flags = flags;
        th->time = r->start_mono + (uint64_t)rp_zigzag_dec(t);
        ev->type = RP_EV_THREAD;
        ev->u.thread.id = id;
        return 1;
    }
    case RP_REC_KIND: {
        uint32_t name, unit, x[RP_MAX_EXTRA];
        uint64_t period, nextra;
        GET32(id);
        GET32(name);
        GET32(unit);
        GET(period);
        GET(nextra);
        if (nextra > (uint64_t)(e - q)) {
            bad_record(r, rec, type, "extra-field count exceeds the record body");
            return 0;
        }
        for (uint64_t i = 0; i < nextra; i++) {
            uint32_t v;
            GET32(v);
            if (i < RP_MAX_EXTRA)
                x[i] = v;
        }
        struct rp_kind_info *k = define(r, P_KIND, id, 0, rec, type, &fresh);
        if (!k)
            return 0;
        k->name = ref_str(r, name);
        k->unit = ref_str(r, unit);
        k->period = period;
        k->nextra = nextra < RP_MAX_EXTRA ? (uint32_t)nextra : RP_MAX_EXTRA;
        for (uint32_t i = 0; i < k->nextra; i++)
            k->extra[i] = ref_str(r, x[i]);
        return 0;
    }
    case RP_REC_SAMPLES: {
        uint32_t kind, thread;
        uint64_t count, t0, wunit, nextra;
        const char *why;
        GET32(kind);
        GET32(thread);
        GET(count);
        GET(t0);
        GET(wunit);
        GET(nextra);
        const uint8_t *vt;
        if (check_samples(q, e, count, nextra, wunit, &vt, &why) < 0) {
            bad_record(r, rec, type, why);
            return 0;
        }
        if (!count)
            return 0;
        ref_defined(r, P_KIND, kind);
        ref(r, P_THREAD, thread);
        r->b.left = count;
        r->b.p = q;
        r->b.vt = vt;
        r->b.end = e;
        r->b.kind = kind;
        r->b.thread = thread;
        r->b.nextra = nextra;
        r->b.wunit = wunit;
        r->b.weight = wunit;
        r->b.time = r->start_mono + (uint64_t)rp_zigzag_dec(t0);
        return 0;
    }
    case RP_REC_COUNTER: {
        uint32_t name;
        uint64_t v;
        GET32(name);
        GET(v);
        ev->type = RP_EV_COUNTER;
        ev->u.counter.name = ref_str(r, name);
        ev->u.counter.value = v;
        return 1;
    }
    case RP_REC_THREAD_CPU: {
        uint32_t thread;
        uint64_t t, cpu;
        GET32(thread);
        GET(t);
        GET(cpu);
        ref(r, P_THREAD, thread);
        ev->type = RP_EV_THREAD_CPU;
        ev->u.thread_cpu.thread = thread;
        ev->u.thread_cpu.time = r->start_mono + (uint64_t)rp_zigzag_dec(t);
        ev->u.thread_cpu.cpu_ns = cpu;
        return 1;
    }
    case RP_REC_GAUGE: {
        uint32_t name;
        uint64_t t, v;
        GET32(name);
        GET(t);
        GET(v);
        ev->type = RP_EV_GAUGE;
        ev->u.gauge.name = ref_str(r, name);
        ev->u.gauge.time = r->start_mono + (uint64_t)rp_zigzag_dec(t);
        ev->u.gauge.value = v;
        return 1;
    }
    case RP_REC_VTHREAD: {
        uint64_t java_tid, t;
        uint32_t name;
        GET32(id);
        GET(java_tid);
        GET32(name);
        GET(t);
        struct rp_vthread_info *vt = define(r, P_VTHREAD, id, 0, rec, type, &fresh);
        if (!vt)
            return 0;
        vt->java_tid = java_tid;
        vt->name = name ? ref_str(r, name) : NULL;
        if (!vt->name)
            vt->name = "";
        vt->time = r->start_mono + (uint64_t)rp_zigzag_dec(t);
        return 0;
    }
    default:
        r->st.records_unknown++;
        return 0;
    }
malformed:
    bad_record(r, rec, type, "a field runs past the record body, or a varint is "
               "malformed");
    return 0;
nomem:
    bad_record(r, rec, type, "out of memory");
    return 0;
}

/* The next sample of the validated SAMPLES record in r->b. */
static void next_sample(struct rp_reader *r, struct rp_event *ev)
{
    const uint8_t *q = r->b.p, *e = r->b.end;
    uint64_t head = 0, v = 0;
    uint32_t stack = 0;
    (void)rp_varint_get(&q, e, &head);
    unsigned mode = head & 3;
    if (mode) {
        (void)rp_varint_get(&q, e, &v);
        r->b.weight = mode == 1 ? v * r->b.wunit : v;
    }
    (void)rp_varint_get32(&q, e, &stack);
    r->b.time += head >> 2;
    ev->type = RP_EV_SAMPLE;
    ev->u.sample.kind = r->b.kind;
    ev->u.sample.thread = r->b.thread;
    ev->u.sample.stack = stack;
    ev->u.sample.time = r->b.time;
    ev->u.sample.weight = r->b.weight;
    ev->u.sample.nextra = r->b.nextra < RP_MAX_EXTRA ? (uint32_t)r->b.nextra
                                                      : RP_MAX_EXTRA;
    for (uint64_t j = 0; j < r->b.nextra; j++) {
        (void)rp_varint_get(&q, e, &v);
        if (j < RP_MAX_EXTRA)
            ev->u.sample.extra[j] = v;
    }
    ref(r, P_STACK, stack);
    ev->u.sample.vthread = 0;
    if (r->b.vt) {
        (void)rp_varint_get32(&r->b.vt, e, &ev->u.sample.vthread);
        ref(r, P_VTHREAD, ev->u.sample.vthread);
    }
    r->b.p = q;
    r->b.left--;
    r->st.samples++;
}

/* The lines a segment's end owes: bad records not shown one by one, references
 * to undefined ids, a record count that differs from the header's. */
static void segment_summary(struct rp_reader *r)
{
    if (r->seg_bad > RD_BAD_RECORDS_SHOWN)
        rp_rd_report(r, r->seg_off, 0, "segment %u: %u more malformed records not shown",
                     r->seg_seq, r->seg_bad - RD_BAD_RECORDS_SHOWN);
    if (r->seg_unresolved)
        rp_rd_report(r, r->seg_off, 0, "segment %u: %llu reference%s to ids the chunk "
                     "never defined (the first: %s id %u); they read as unknown",
                     r->seg_seq, (unsigned long long)r->seg_unresolved,
                     r->seg_unresolved == 1 ? "" : "s",
                     r->pool[r->seg_ref_pool].name, r->seg_ref_id);
    if (r->recs_seen != r->seg_records)
        rp_rd_report(r, r->seg_off, 0, "segment %u: header says %u records, payload "
                     "holds %u", r->seg_seq, r->seg_records, r->recs_seen);
}

int rp_reader_next(struct rp_reader *r, struct rp_event *ev)
{
    for (;;) {
        if (r->b.left) {
            next_sample(r, ev);
            return 1;
        }
        if (r->in_seg) {
            if (r->pos < r->end) {
                if (decode_record(r, ev))
                    return 1;
                continue;
            }
            r->in_seg = 0;
            segment_summary(r);
            continue;
        }
        return rp_rd_next_segment(r, ev);
    }
}
