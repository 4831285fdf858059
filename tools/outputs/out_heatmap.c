/*
 * tools/outputs/out_heatmap.c — `ringprof convert --format heatmap`: the incident
 * view, one self-contained page with a heatmap of every kind over the whole
 * recording, the telemetry above it, and the flame graph (or the differential
 * one) of any window selected on it (how to read it: docs/profiles.md,
 * "heatmap"; the data: the same section, "The page's data").
 *
 * The build runs once over the inputs, every kind at once, threads merged, the
 * wall kind's state as the leaf frame (profile.h); on_sample adds each sample
 * to the heatmap model (model/heatmap.h) under its leaf node, its thread and its
 * time bucket, on_event each telemetry reading. Threads are numbered here, by
 * (recording, os tid, virtual thread), once per chunk and thread id. Then the page is the template
 * (tools/outputs/heatmap.html, compiled in by embed.py) with
 *   - META, a JSON object: the time axis, the kinds, the string, frame and
 *     marker tables, the binned telemetry and where each section lies in BLOB;
 *   - BLOB: the call tree's nodes (parent, frame), each kind's (bucket, leaf,
 *     thread, samples, weight) entries, and each kind's density, the same without
 *     the leaf at buckets as fine as their own budget allows (when the stack
 *     entries had to take coarse buckets, the heatmap still shows minutes) as LEB128 varints, deflated (zlib) and written as
 *     base64, so the page inflates it with DecompressionStream("deflate");
 *   - the flame graph page's renderer (flame.js), which the page reuses.
 * Memory: the profile's nodes and the model's bounded entries; the varint
 * sections are built in memory (a few bytes an entry) and streamed through
 * deflate and base64 to the file.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "formats.h"
#include "legend.h"
#include "model/heatmap.h"
#include "model/idmap.h"
#include "model/strtab.h"
#include "model/timeline.h"
#include "out_common.h"

/* From the build (tools/outputs/embed.py). */
extern const char rp_heatmap_html[];
extern const unsigned long rp_heatmap_html_len;

/* ------------------------------------------------------------ the build -- */

struct hm_thread {
    char *label;               /* "[name]", "[tid N]", "[virtual #ID on CARRIER]"  */
    uint32_t rec;
    uint64_t tid, vthread;     /* os tid; a virtual thread's Java id, 0: none     */
};

struct hm {
    struct rp_heatmap h;       /* per (kind, bucket, leaf, thread)                 */
    struct rp_heatmap d;       /* the density: per (kind, bucket, thread), leaf 0, */
                               /* at finer buckets than h's when h had to coarsen  */
    int *kmap;                 /* the chunk's KIND id -> heatmap kind + 2; 0: unset */
    size_t nkmap;
    struct rp_idmap tcache;    /* the chunk's (THREAD id << 32 | VTHREAD id) ->     */
                               /* index into threads                               */
    struct rp_strtab tkeys;    /* "rec/tid/vthread" -> index into threads           */
    struct hm_thread *threads;
    size_t nthreads, capthreads;
};

static int hm_kind_of(struct hm *x, struct rp_stream *st, uint32_t id)
{
    if (id < x->nkmap && x->kmap[id])
        return x->kmap[id] - 2;
    const struct rp_stream_kind *k = rp_stream_kind(st, id);
    int hk = k->info ? rp_hm_kind(&x->h, k->name, k->unit, k->period) : -1;
    if (hk >= 0)
        rp_hm_kind(&x->d, k->name, k->unit, k->period);   /* the same index */
    if (id < 1u << 16) {
        if (id >= x->nkmap) {
            size_t n = (size_t)id + 16;
            x->kmap = rp_xreallocarray(x->kmap, n, sizeof *x->kmap);
            memset(x->kmap + x->nkmap, 0, (n - x->nkmap) * sizeof *x->kmap);
            x->nkmap = n;
        }
        x->kmap[id] = hk + 2;
    }
    return hk;
}

/* A thread's label, as the profile names its thread nodes (profile.h). */
static char *thread_label(const struct rp_thread_info *t, const struct rp_vthread_info *v)
{
    char buf[600];
    const char *carrier = t && t->name && *t->name ? t->name : NULL;
    if (v && v->name && *v->name)
        snprintf(buf, sizeof buf, "[%s (virtual #%llu) on %s]", v->name,
                 (unsigned long long)v->java_tid, carrier ? carrier : "?");
    else if (v)
        snprintf(buf, sizeof buf, "[virtual #%llu on %s]", (unsigned long long)v->java_tid,
                 carrier ? carrier : "?");
    else if (carrier)
        snprintf(buf, sizeof buf, "[%s]", carrier);
    else if (t)
        snprintf(buf, sizeof buf, "[tid %llu]", (unsigned long long)t->os_tid);
    else
        snprintf(buf, sizeof buf, "[no thread]");
    return rp_xstrdup(buf);
}

/* The index of the sample's thread: the chunk's cache, else by its identity. */
static uint32_t hm_thread_of(struct hm *x, const struct rp_profile *p,
                             const struct rp_stream *st, const struct rp_event *ev)
{
    uint64_t ck = (uint64_t)ev->u.sample.thread << 32 | ev->u.sample.vthread;
    uint32_t i = rp_idmap_get(&x->tcache, ck);
    if (i != RP_IDMAP_NONE)
        return i;
    const struct rp_thread_info *t = rp_prof_chunk_thread(p, ev->u.sample.thread);
    const struct rp_vthread_info *v =
        ev->u.sample.vthread ? rp_prof_chunk_vthread(p, ev->u.sample.vthread) : NULL;
    char key[96];
    snprintf(key, sizeof key, "%u/%llu/%llu/%d", st->rec,
             (unsigned long long)(t ? t->os_tid : 0), (unsigned long long)(v ? v->java_tid : 0),
             t != NULL);
    i = rp_strtab_cstr(&x->tkeys, key);
    if (i == x->nthreads) {
        rp_xgrow((void **)&x->threads, &x->capthreads, x->nthreads, sizeof *x->threads, 64);
        x->threads[x->nthreads++] = (struct hm_thread){
            thread_label(t, v), st->rec, t ? t->os_tid : 0, v ? v->java_tid : 0};
    }
    rp_idmap_put(&x->tcache, ck, i);
    return i;
}

static void on_sample(void *arg, const struct rp_profile *p, uint32_t leaf,
                      const struct rp_event *ev, const struct rp_kind_info *ki)
{
    struct hm *x = arg;
    (void)ki;
    struct rp_stream *st = rp_prof_stream(p);
    int k = hm_kind_of(x, st, ev->u.sample.kind);
    if (k < 0)
        return;
    uint64_t t = rp_clock_time(&st->clock, ev->u.sample.time);
    uint32_t thread = hm_thread_of(x, p, st, ev);
    rp_hm_add(&x->h, k, t, leaf, thread, ev->u.sample.weight);
    rp_hm_add(&x->d, k, t, 0, thread, ev->u.sample.weight);
}

static void on_event(void *arg, const struct rp_profile *p, const struct rp_event *ev)
{
    struct hm *x = arg;
    if (ev->type != RP_EV_GAUGE)
        return;
    struct rp_stream *st = rp_prof_stream(p);
    rp_hm_gauge(&x->h, st->rec, ev->u.gauge.name, rp_clock_time(&st->clock, ev->u.gauge.time),
                ev->u.gauge.value);
}

static void on_chunk(void *arg, const struct rp_profile *p, const struct rp_reader *r, int end)
{
    struct hm *x = arg;
    (void)p;
    (void)r;
    if (end)
        return;
    if (x->nkmap)
        memset(x->kmap, 0, x->nkmap * sizeof *x->kmap);   /* ids are per chunk */
    rp_idmap_free(&x->tcache);
}

/* ----------------------------------------------------------- the blob -- */

struct buf {
    unsigned char *b;
    size_t n, cap;
};

static void put_varint(struct buf *o, uint64_t v)
{
    rp_xgrow((void **)&o->b, &o->cap, o->n + 10, 1, 1 << 16);
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        o->b[o->n++] = c | (v ? 0x80 : 0);
    } while (v);
}

struct section {
    char name[64];
    size_t off, len;
};

struct page {
    const struct rp_profile *p;
    struct rp_heatmap *h;
    const struct hm *x;
    const struct rp_out_options *o;
    struct buf blob;
    struct section *sec;
    size_t nsec;
    struct rp_strtab names;
    struct rp_idmap fmap;      /* (string << 8 | type) -> frame index             */
    uint32_t *frames;          /* string, type pairs                              */
    size_t nframes, capframes;
    struct out_legend legend;
};

static void section_begin(struct page *g, const char *name)
{
    g->sec = rp_xreallocarray(g->sec, g->nsec + 1, sizeof *g->sec);
    struct section *s = &g->sec[g->nsec++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->off = g->blob.n;
}

static void section_end(struct page *g)
{
    g->sec[g->nsec - 1].len = g->blob.n - g->sec[g->nsec - 1].off;
}

static uint32_t frame_of(struct page *g, uint32_t node)
{
    uint32_t s = rp_strtab_cstr(&g->names, rp_prof_node_name(g->p, node));
    int t = out_page_type(g->p, node);
    uint64_t key = (uint64_t)s << 8 | (uint64_t)t;
    uint32_t f = rp_idmap_put(&g->fmap, key, (uint32_t)g->nframes);
    if (f == g->nframes) {
        rp_xgrow((void **)&g->frames, &g->capframes, 2 * g->nframes + 2, sizeof *g->frames, 256);
        g->frames[2 * g->nframes] = s;
        g->frames[2 * g->nframes + 1] = (uint32_t)t;
        g->nframes++;
    }
    return f;
}

/* Node i: (i - parent, frame). Nodes are made root first, so a parent's index is
 * below its children's (the page relies on it). @return -1 if that fails. The
 * tree has no thread level: the threads are the entries'. */
static int write_nodes(struct page *g)
{
    section_begin(g, "nodes");
    rp_strtab_cstr(&g->names, "all");
    for (uint32_t i = 1; i < g->p->nnodes; i++) {
        uint32_t parent = g->p->nodes[i].parent;
        if (parent >= i) {
            fprintf(stderr, "ringprof: heatmap: node %u has parent %u (build bug)\n", i,
                    parent);
            return -1;
        }
        put_varint(&g->blob, i - parent);
        put_varint(&g->blob, frame_of(g, i));
        out_legend_add_node(&g->legend, g->p, i);
    }
    section_end(g);
    return 0;
}

/* Kind k's entries of model h (sorted by kind, bucket, leaf, thread), from entry
 * *at on, as section "PREFIX:NAME". */
static void write_kind(struct page *g, const struct rp_heatmap *h, const char *prefix,
                       uint32_t k, size_t *at)
{
    char name[96];
    snprintf(name, sizeof name, "%s:%s", prefix, h->kinds[k].name);
    section_begin(g, name);
    const struct rp_hm_entry *e = h->e;
    size_t i = *at;
    int64_t prev = h->lo;
    while (i < h->n && e[i].kind == k) {
        size_t j = i;
        while (j < h->n && e[j].kind == k && e[j].bucket == e[i].bucket)
            j++;
        put_varint(&g->blob, (uint64_t)((int64_t)e[i].bucket - prev));
        put_varint(&g->blob, j - i);
        uint32_t leaf = 0;
        for (size_t m = i; m < j; m++) {
            put_varint(&g->blob, e[m].leaf - leaf);
            put_varint(&g->blob, e[m].thread);
            put_varint(&g->blob, e[m].samples);
            put_varint(&g->blob, e[m].weight);
            leaf = e[m].leaf;
        }
        prev = e[i].bucket;
        i = j;
    }
    *at = i;
    section_end(g);
}

/* ------------------------------------------------------------- the meta -- */

static void fmt_utc(uint64_t ns, char *buf, size_t cap)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (!ns || !gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, cap, "?");
}

/* The subtitle: each kind's samples, the time range, where they came from. */
static void write_info(FILE *out, const struct page *g)
{
    char info[1024], a[32], b[32];
    size_t n = 0;
    info[0] = 0;
    for (size_t k = 0; k < g->h->nkinds && n < sizeof info; k++)
        n += (size_t)snprintf(info + n, sizeof info - n, "%s%s %llu sample%s", k ? ", " : "",
                              g->h->kinds[k].name,
                              (unsigned long long)g->h->kinds[k].samples,
                              OUT_S(g->h->kinds[k].samples));
    if (g->p->wall_first && n < sizeof info) {
        fmt_utc(g->p->wall_first, a, sizeof a);
        fmt_utc(g->p->wall_last, b, sizeof b);
        n += (size_t)snprintf(info + n, sizeof info - n, "; %s .. %s UTC", a, b);
    }
    if (g->p->nsources == 1 && n < sizeof info)
        snprintf(info + n, sizeof info - n, "; pid %s on %s",
                 g->p->sources[0].pid[0] ? g->p->sources[0].pid : "?",
                 g->p->sources[0].host[0] ? g->p->sources[0].host : "?");
    else if (g->p->nsources > 1 && n < sizeof info)
        snprintf(info + n, sizeof info - n, "; %zu recordings", g->p->nsources);
    out_json_cstring(out, info);
}

static void write_kinds(FILE *out, const struct page *g)
{
    fputs(",\n\"kinds\":[", out);
    for (size_t k = 0; k < g->h->nkinds; k++) {
        const struct rp_hm_kind *hk = &g->h->kinds[k];
        fputs(k ? ",\n{\"name\":" : "{\"name\":", out);
        out_json_cstring(out, hk->name);
        fputs(",\"unit\":", out);
        out_json_cstring(out, hk->unit);
        /* a count-like unit whose samples stand for a known interval */
        double npu = strcmp(hk->unit, RP_UNIT_NS) && strcmp(hk->unit, RP_UNIT_BYTES) &&
                             hk->skind == RP_SK_CPU ? (double)hk->period : 0.0;
        fprintf(out, ",\"ns_per_unit\":%.17g,\"period_ns\":%llu,\"lane\":%d,"
                     "\"samples\":%llu,\"weight\":%llu,\"section\":",
                npu, (unsigned long long)hk->period, hk->skind == RP_SK_GC,
                (unsigned long long)hk->samples, (unsigned long long)hk->weight);
        char sec[64];
        snprintf(sec, sizeof sec, "kind:%s", hk->name);
        out_json_cstring(out, sec);
        fputc('}', out);
    }
    fputc(']', out);
}

static void json_number(FILE *out, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", out);
    else
        fprintf(out, "%.4g", v);
}

/* ,"key":"value" */
static void field(FILE *out, const char *key, const char *value)
{
    fprintf(out, ",\"%s\":", key);
    out_json_cstring(out, value);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median interval between a series' readings, 0 with fewer than two. */
static uint64_t median_gap(const struct rp_hm_series *s)
{
    if (s->n < 2)
        return 0;
    uint64_t *gap = rp_xmalloc((s->n - 1) * sizeof *gap);
    for (size_t i = 1; i < s->n; i++)
        gap[i - 1] = s->r[i].t - s->r[i - 1].t;
    qsort(gap, s->n - 1, sizeof *gap, cmp_u64);
    uint64_t m = gap[(s->n - 1) / 2];
    free(gap);
    return m;
}

/* A series' bin: the bucket width, or the width of the ladder that holds one
 * reading interval when the readings are sparser (a bin per bucket would be
 * mostly empty), doubled until at most RP_HM_MAX_BINS cover the axis. */
static uint64_t series_bin(const struct rp_heatmap *h, const struct rp_hm_series *s,
                           uint64_t span)
{
    uint64_t bin = h->width, gap = median_gap(s);
    for (size_t i = 0; i < rp_hm_nwidths && bin < gap; i++)
        if (rp_hm_widths[i] > bin)
            bin = rp_hm_widths[i];
    while (span / bin >= RP_HM_MAX_BINS)
        bin *= 2;
    return bin;
}

/* Each (gauge, recording) in its bins (series_bin) from the first bucket's start. */
static void write_telemetry(FILE *out, const struct page *g, uint64_t t0, uint64_t span)
{
    fputs(",\n\"telemetry\":[", out);
    for (size_t i = 0; i < g->h->nseries; i++) {
        const struct rp_hm_series *s = &g->h->series[i];
        const struct rp_tl_gauge_def *d = &rp_tl_gauges[s->gauge];
        uint64_t bin = series_bin(g->h, s, span);
        size_t nbins = (size_t)((span + bin - 1) / bin);
        double *v = rp_xcalloc(nbins + 1, sizeof *v);
        rp_hm_bin(s, t0, bin, nbins, v);
        fputs(i ? ",\n{\"name\":" : "{\"name\":", out);
        out_json_cstring(out, d->name);
        field(out, "label", d->label);
        field(out, "unit", d->unit);
        fprintf(out, ",\"rec\":%u,\"bin_ms\":%llu,\"start_ms\":0,\"v\":[", s->rec,
                (unsigned long long)(bin / 1000000));
        for (size_t b = 0; b < nbins; b++) {
            if (b)
                fputc(',', out);
            json_number(out, v[b]);
        }
        fputs("]}", out);
        free(v);
    }
    fputc(']', out);
}

static void write_threads(FILE *out, const struct hm *x)
{
    fputs(",\n\"threads\":[", out);
    for (size_t i = 0; i < x->nthreads; i++) {
        const struct hm_thread *t = &x->threads[i];
        fputs(i ? ",\n{\"name\":" : "{\"name\":", out);
        out_json_cstring(out, t->label);
        fprintf(out, ",\"rec\":%u,\"tid\":%llu,\"vthread\":%llu}", t->rec,
                (unsigned long long)t->tid, (unsigned long long)t->vthread);
    }
    fputc(']', out);
}

static void write_recordings(FILE *out, const struct rp_profile *p)
{
    fputs(",\n\"recordings\":[", out);
    for (size_t i = 0; i < p->nsources; i++) {
        const struct rp_prof_source *s = &p->sources[i];
        fputs(i ? ",{\"key\":" : "{\"key\":", out);
        out_json_cstring(out, s->recording);
        field(out, "pid", s->pid);
        field(out, "host", s->host);
        field(out, "main", s->main);
        fputc('}', out);
    }
    fputc(']', out);
}

static void write_tables(FILE *out, const struct page *g)
{
    fputs(",\n\"strings\":[", out);
    for (size_t i = 0; i < g->names.n; i++) {
        if (i)
            fputs(",\n", out);
        out_json_string(out, g->names.s[i], g->names.len[i]);
    }
    fputs("],\n\"frames\":[", out);
    for (size_t f = 0; f < g->nframes; f++)
        fprintf(out, "%s%u,%u", f ? (f % 16 ? "," : ",\n") : "", g->frames[2 * f],
                g->frames[2 * f + 1]);
    fputs("],\n\"markers\":", out);
    out_markers_json(out, &g->legend);
    fputs(",\n\"sections\":[", out);
    for (size_t i = 0; i < g->nsec; i++) {
        fputs(i ? ",[" : "[", out);
        out_json_cstring(out, g->sec[i].name);
        fprintf(out, ",%zu,%zu]", g->sec[i].off, g->sec[i].len);
    }
    fputc(']', out);
}

/* The density's axis: its buckets are a divisor of the stack buckets' width. */
static void write_density(FILE *out, const struct rp_heatmap *d)
{
    uint64_t nb = d->n ? (uint64_t)((int64_t)d->hi - d->lo) + 1 : 0;
    uint64_t t0 = (uint64_t)(d->base + d->lo) * d->width;
    fprintf(out, ",\n\"density\":{\"t0_ms\":%llu,\"bucket_ms\":%llu,\"nbuckets\":%llu,"
                 "\"resolution\":", (unsigned long long)(t0 / 1000000),
            (unsigned long long)(d->width / 1000000), (unsigned long long)nb);
    out_json_cstring(out, d->why);
    fputc('}', out);
}

static void meta_slot(FILE *out, void *arg)
{
    const struct page *g = arg;
    const struct rp_heatmap *h = g->h;
    char title[1024];
    uint64_t nb = h->n ? (uint64_t)((int64_t)h->hi - h->lo) + 1 : 0;
    uint64_t t0 = (uint64_t)(h->base + h->lo) * h->width;
    fputs("{\"v\":1,\"title\":", out);
    out_json_cstring(out, out_title(g->p, g->o->title, title, sizeof title));
    fputs(",\"info\":", out);
    write_info(out, g);
    fprintf(out, ",\n\"t0_ms\":%llu,\"bucket_ms\":%llu,\"nbuckets\":%llu,\"resolution\":",
            (unsigned long long)(t0 / 1000000), (unsigned long long)(h->width / 1000000),
            (unsigned long long)nb);
    out_json_cstring(out, h->why);
    fprintf(out, ",\"nnodes\":%zu", g->p->nnodes);
    write_kinds(out, g);
    write_density(out, &g->x->d);
    write_telemetry(out, g, t0, nb * h->width);
    write_threads(out, g->x);
    write_recordings(out, g->p);
    write_tables(out, g);
    fputc('}', out);
}

/* ----------------------------------------------- deflate, then base64 -- */

struct b64 {
    FILE *out;
    unsigned char carry[3];
    size_t ncarry;
};

static void b64_put(struct b64 *b, const unsigned char *s, size_t n)
{
    static const char A[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char line[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        b->carry[b->ncarry++] = s[i];
        if (b->ncarry < 3)
            continue;
        const unsigned char *c = b->carry;
        line[k++] = A[c[0] >> 2];
        line[k++] = A[(c[0] & 3) << 4 | c[1] >> 4];
        line[k++] = A[(c[1] & 15) << 2 | c[2] >> 6];
        line[k++] = A[c[2] & 63];
        b->ncarry = 0;
        if (k + 4 > sizeof line) {
            fwrite(line, 1, k, b->out);
            k = 0;
        }
    }
    fwrite(line, 1, k, b->out);
}

static void b64_end(struct b64 *b)
{
    static const char A[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (!b->ncarry)
        return;
    unsigned char c[3] = {b->carry[0], b->ncarry > 1 ? b->carry[1] : 0, 0};
    char q[4] = {A[c[0] >> 2], A[(c[0] & 3) << 4 | c[1] >> 4],
                 b->ncarry > 1 ? A[(c[1] & 15) << 2] : '=', '='};
    fwrite(q, 1, 4, b->out);
    b->ncarry = 0;
}

static void blob_slot(FILE *out, void *arg)
{
    struct page *g = arg;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit(&z, 6) != Z_OK) {
        fprintf(stderr, "ringprof: heatmap: zlib: cannot start deflate\n");
        exit(1);
    }
    struct b64 b = {.out = out};
    unsigned char chunk[1 << 16];
    z.next_in = g->blob.b;
    z.avail_in = (uInt)g->blob.n;   /* the blob is far below 4 GiB: bounded entries */
    int rc;
    do {
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        rc = deflate(&z, Z_FINISH);
        b64_put(&b, chunk, sizeof chunk - z.avail_out);
    } while (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0));
    b64_end(&b);
    deflateEnd(&z);
}

/* ------------------------------------------------------------ the writer -- */

static int build_blob(struct page *g)
{
    if (write_nodes(g))
        return -1;
    size_t at = 0, dat = 0;
    for (uint32_t k = 0; k < g->h->nkinds; k++) {
        write_kind(g, g->h, "kind", k, &at);
        write_kind(g, &g->x->d, "density", k, &dat);
    }
    return 0;
}

static void page_free(struct page *g)
{
    free(g->blob.b);
    free(g->sec);
    free(g->frames);
    rp_strtab_free(&g->names);
    rp_idmap_free(&g->fmap);
}

int rp_out_heatmap(FILE *out, rp_jfr_build_fn build, void *build_arg,
                   struct rp_prof_options *po, const struct rp_out_options *o,
                   struct rp_profile **built)
{
    struct hm x;
    memset(&x, 0, sizeof x);
    rp_hm_init(&x.h, o->resolution_ns, 0, 0);
    rp_hm_init(&x.d, o->resolution_ns, RP_HM_MAX_DENSITY, 0);
    rp_strtab_init(&x.tkeys);
    po->per_thread = 0;
    po->state_frames = 1;
    po->on_sample = on_sample;
    po->on_event = on_event;
    po->on_chunk = on_chunk;
    po->on_sample_arg = &x;
    struct rp_profile *p = build(build_arg, po);
    *built = p;
    rp_hm_finish(&x.h);
    rp_hm_finish(&x.d);
    int rc = -1;
    if (!x.h.n) {
        fprintf(stderr, "ringprof: convert: heatmap: no sample of a kind it shows "
                        "(cpu, wall, alloc, lock, gc)\n");
        goto done;
    }
    if (!o->quiet)
        fprintf(stderr, "ringprof convert: heatmap: %s; %zu stack counts; the density in "
                        "%s\n", x.h.why, x.h.n, x.d.why);
    struct page g = {.p = p, .h = &x.h, .x = &x, .o = o};
    rp_strtab_init(&g.names);
    out_legend_init(&g.legend);
    if (build_blob(&g) == 0) {
        const struct out_slot slots[] = {
            {"@RINGPROF_META@", meta_slot, &g},
            {"@RINGPROF_BLOB@", blob_slot, &g},
            {"@RINGPROF_FLAME_JS@", out_flame_js_slot, NULL},
        };
        rc = out_page(out, rp_heatmap_html, rp_heatmap_html_len, slots,
                      sizeof slots / sizeof slots[0]);
    }
    page_free(&g);
done:
    free(x.kmap);
    rp_idmap_free(&x.tcache);
    rp_strtab_free(&x.tkeys);
    for (size_t i = 0; i < x.nthreads; i++)
        free(x.threads[i].label);
    free(x.threads);
    rp_hm_free(&x.h);
    rp_hm_free(&x.d);
    return rc;
}
