/*
 * tests/test_chunk.c — chunk writer and reader: round trip, interning, sizes, a
 * live file, and write failures.
 *
 * Every event the writer is given is also logged here as the event the reader must
 * return, so the round trip compares the reader's stream with the log field by
 * field, in order. Counters are compared as per-segment sums by name.
 *
 * Write failures use RLIMIT_FSIZE with SIGXFSZ ignored: writes past the limit come
 * back short and then fail with EFBIG, as ENOSPC would on a full disk.
 *
 * `test_chunk --example PATH` writes the tiny chunk shown in docs/format.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringprof/chunk.h"
#include "check.h"

#define MS 1000000ull
static const uint64_t START = 5000000000000ull;     /* start.mono_ns of test chunks */

static char dir[64];

static void path_in_dir(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
    unlink(buf);
}

/* ------------------------------------------------------------- diagnostics -- */

struct diags {
    int n, fatal;
    int quiet;
};

static void on_diag(void *arg, const char *path, uint64_t off, const char *reason,
                    int fatal)
{
    struct diags *d = arg;
    d->n++;
    d->fatal += fatal;
    if (!d->quiet)
        fprintf(stderr, "  diag: %s @%llu: %s%s\n", path, (unsigned long long)off, reason,
                fatal ? " (fatal)" : "");
}

static struct rp_chunk_writer *open_writer(const char *path)
{
    char start[32], err[256];
    snprintf(start, sizeof start, "%llu", (unsigned long long)START);
    struct rp_kv meta[] = {
        {RP_META_PID, "4242"},
        {RP_META_PRODUCER, "ringprof test"},
        {RP_META_START_MONO, start},
        {RP_META_START_WALL, "1700000000000000000"},
    };
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, meta, 4, err, sizeof err);
    REQUIRE(w != NULL, "open %s: %s", path, err);
    return w;
}

/* ------------------------------------------------------- the expected log -- */

struct xev {
    struct rp_event ev;
    char name[64];              /* thread name at a THREAD event                   */
};

static struct xev *xlog;
static size_t nx, capx;

static void expect(const struct rp_event *ev, const char *name)
{
    if (nx == capx) {
        capx = capx ? capx * 2 : 256;
        xlog = realloc(xlog, capx * sizeof *xlog);
        REQUIRE(xlog != NULL, "oom");
    }
    memset(&xlog[nx], 0, sizeof xlog[nx]);
    xlog[nx].ev = *ev;
    if (name)
        snprintf(xlog[nx].name, sizeof xlog[nx].name, "%s", name);
    nx++;
}

/* A sample on virtual thread `vthread` (0: none), and its expected event. */
static void w_sample_vt(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                        uint32_t vthread, uint64_t time, uint32_t stack, uint64_t weight,
                        const uint64_t *extra, uint32_t nextra)
{
    CHECK(rp_chunk_sample_vt(w, kind, thread, vthread, time, stack, weight, extra) == 0,
          "sample: %s", strerror(errno));
    struct rp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = RP_EV_SAMPLE;
    ev.u.sample.kind = kind;
    ev.u.sample.thread = thread;
    ev.u.sample.vthread = vthread;
    ev.u.sample.stack = stack;
    ev.u.sample.time = time;
    ev.u.sample.weight = weight;
    ev.u.sample.nextra = nextra;
    for (uint32_t i = 0; i < nextra; i++)
        ev.u.sample.extra[i] = extra[i];
    expect(&ev, NULL);
}

static void w_sample(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                     uint64_t time, uint32_t stack, uint64_t weight, const uint64_t *extra,
                     uint32_t nextra)
{
    w_sample_vt(w, kind, thread, 0, time, stack, weight, extra, nextra);
}

static void x_thread(uint32_t id, const char *name)
{
    struct rp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = RP_EV_THREAD;
    ev.u.thread.id = id;
    expect(&ev, name);
}

static void w_gauge(struct rp_chunk_writer *w, const char *name, uint64_t t, uint64_t v)
{
    CHECK(rp_chunk_gauge(w, name, t, v) == 0, "gauge");
    struct rp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = RP_EV_GAUGE;
    ev.u.gauge.time = t;
    ev.u.gauge.value = v;
    expect(&ev, name);
}

static void w_cpu(struct rp_chunk_writer *w, uint32_t th, uint64_t t, uint64_t cpu)
{
    CHECK(rp_chunk_thread_cpu(w, th, t, cpu) == 0, "thread_cpu");
    struct rp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = RP_EV_THREAD_CPU;
    ev.u.thread_cpu.thread = th;
    ev.u.thread_cpu.time = t;
    ev.u.thread_cpu.cpu_ns = cpu;
    expect(&ev, NULL);
}

static void x_segment(void)
{
    struct rp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = RP_EV_SEGMENT;
    expect(&ev, NULL);
}

/* Counters: per segment, by name. */
struct ctr { char name[32]; uint64_t v; int seg; };
static struct ctr xctr[64], rctr[64];
static int nxctr, nrctr;

static void ctr_add(struct ctr *t, int *n, const char *name, uint64_t v, int seg)
{
    for (int i = 0; i < *n; i++)
        if (t[i].seg == seg && strcmp(t[i].name, name) == 0) {
            t[i].v += v;
            return;
        }
    REQUIRE(*n < 64, "too many counters");
    snprintf(t[*n].name, sizeof t[*n].name, "%s", name);
    t[*n].v = v;
    t[*n].seg = seg;
    (*n)++;
}

static uint64_t ctr_total(const struct ctr *t, int n, const char *name)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            s += t[i].v;
    return s;
}

/* Compare the reader's stream with the log. */
static int events_equal(const struct rp_reader *r, const struct rp_event *a,
                        const struct xev *x)
{
    const struct rp_event *b = &x->ev;
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case RP_EV_SEGMENT:
        return 1;
    case RP_EV_SAMPLE:
        if (a->u.sample.kind != b->u.sample.kind || a->u.sample.thread != b->u.sample.thread ||
            a->u.sample.stack != b->u.sample.stack || a->u.sample.time != b->u.sample.time ||
            a->u.sample.weight != b->u.sample.weight ||
            a->u.sample.nextra != b->u.sample.nextra ||
            a->u.sample.vthread != b->u.sample.vthread)
            return 0;
        for (uint32_t i = 0; i < a->u.sample.nextra; i++)
            if (a->u.sample.extra[i] != b->u.sample.extra[i])
                return 0;
        return 1;
    case RP_EV_THREAD: {
        const struct rp_thread_info *t = rp_reader_thread(r, a->u.thread.id);
        return a->u.thread.id == b->u.thread.id && t && t->name &&
               strcmp(t->name, x->name) == 0;
    }
    case RP_EV_THREAD_CPU:
        return a->u.thread_cpu.thread == b->u.thread_cpu.thread &&
               a->u.thread_cpu.time == b->u.thread_cpu.time &&
               a->u.thread_cpu.cpu_ns == b->u.thread_cpu.cpu_ns;
    case RP_EV_GAUGE:
        return a->u.gauge.name && strcmp(a->u.gauge.name, x->name) == 0 &&
               a->u.gauge.time == b->u.gauge.time && a->u.gauge.value == b->u.gauge.value;
    default:
        return 0;
    }
}

/* Read the whole file, checking events against the log; @return events matched. */
static size_t read_and_compare(struct rp_reader *r, int *segs_out, uint32_t *last_flags)
{
    struct rp_event ev;
    size_t i = 0;
    int seg = -1, mismatches = 0;
    nrctr = 0;
    while (rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_SEGMENT) {
            seg++;
            *last_flags = ev.u.seg.flags;
        }
        if (ev.type == RP_EV_COUNTER) {
            CHECK(ev.u.counter.name != NULL, "counter name unresolved");
            if (ev.u.counter.name)
                ctr_add(rctr, &nrctr, ev.u.counter.name, ev.u.counter.value, seg);
            continue;
        }
        if (i >= nx) {
            CHECK(0, "reader returned more events than written (type %d)", ev.type);
            break;
        }
        if (!events_equal(r, &ev, &xlog[i]) && mismatches++ < 5)
            CHECK(0, "event %zu differs: type %d, expected type %d", i, ev.type,
                  xlog[i].ev.type);
        i++;
    }
    *segs_out = seg + 1;
    return i;
}

/* ------------------------------------------------------------ round trip -- */

static void test_round_trip(void)
{
    char path[128];
    path_in_dir(path, sizeof path, "round.rpc");
    struct rp_chunk_writer *w = open_writer(path);
    nx = 0;
    nxctr = 0;
    x_segment();
    CHECK(rp_chunk_writer_start_mono(w) == START, "start mono from meta");

    static const char nul_str[] = {'a', 0, 'b', 0};
    static const char utf8[] = "Gr\xc3\xbc\xc3\x9f" "e, \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x9a\x80";
    uint32_t s_nul = rp_chunk_string(w, nul_str, 4);
    uint32_t s_utf8 = rp_chunk_cstring(w, utf8);
    uint32_t s_empty = rp_chunk_string(w, "", 0);
    uint32_t c_foo = rp_chunk_class(w, rp_chunk_cstring(w, "com.example.Foo"));
    uint32_t c_lib = rp_chunk_class(w, rp_chunk_cstring(w, "libc.so.6"));
    uint32_t m_run = rp_chunk_method(w, c_foo, rp_chunk_cstring(w, "run"),
                                     rp_chunk_cstring(w, "()V"),
                                     rp_chunk_cstring(w, "Foo.java"), RP_METHOD_SYNTHETIC);
    uint32_t m_odd = rp_chunk_method(w, c_foo, s_nul, s_utf8, s_empty, RP_METHOD_NATIVE);
    uint32_t m_read = rp_chunk_method(w, c_lib, rp_chunk_cstring(w, "read"), 0, 0, 0);
    uint32_t f_jit = rp_chunk_frame(w, m_run, RP_FRAME_JIT, 17, 42);
    uint32_t f_int = rp_chunk_frame(w, m_odd, RP_FRAME_INTERPRETED, -1, 0);
    uint32_t f_inl = rp_chunk_frame(w, m_run, RP_FRAME_INLINED, 0, 1);
    uint32_t f_nat = rp_chunk_frame(w, m_read, RP_FRAME_NATIVE, -1, 0);
    uint32_t f_big = rp_chunk_frame(w, m_run, RP_FRAME_CPP, INT32_MAX, UINT32_MAX);
    CHECK(s_nul && s_utf8 && s_empty && c_foo && c_lib && m_run && m_odd && m_read &&
          f_jit && f_int && f_inl && f_nat && f_big, "interning returned 0");
    uint32_t fr_a[] = {f_nat, f_jit, f_int, f_inl, f_big};
    uint32_t st_a = rp_chunk_stack(w, fr_a, 5, 0);
    uint32_t st_empty = rp_chunk_stack(w, NULL, 0, RP_STACK_ERROR);
    uint32_t st_trunc = rp_chunk_stack(w, fr_a + 1, 2, RP_STACK_TRUNCATED);
    CHECK(st_a && st_empty && st_trunc, "stacks");

    uint32_t th1 = rp_chunk_thread(w, 1, 100, 1, "main", RP_THREAD_JAVA, START - 7);
    x_thread(th1, "main");
    uint32_t th2 = rp_chunk_thread(w, 2, 200, 0, "GC Thread#0", 0, START + 1);
    x_thread(th2, "GC Thread#0");
    const char *alloc_x[] = {"class", "size"};
    uint32_t k_cpu = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t k_alloc = rp_chunk_kind(w, "alloc", "bytes", 0, alloc_x, 2);
    CHECK(k_cpu && k_alloc && k_cpu != k_alloc, "kinds");

    /* A batch with every weight mode, starting before the chunk did. */
    uint64_t t = START - 5 * MS;
    w_sample(w, k_cpu, th1, t, st_a, 10 * MS, NULL, 0);            /* same as unit */
    w_sample(w, k_cpu, th1, t += 10 * MS, st_a, 10 * MS, NULL, 0);
    w_sample(w, k_cpu, th1, t += 21 * MS, st_trunc, 20 * MS, NULL, 0); /* x unit  */
    w_sample(w, k_cpu, th1, t += 3, st_empty, 12345, NULL, 0);      /* literal     */
    w_sample(w, k_cpu, th1, t, st_empty, 0, NULL, 0);               /* dt 0, w 0   */
    w_sample(w, k_cpu, th1, t += 1, 0, UINT64_MAX, NULL, 0);        /* no stack    */
    w_sample(w, k_cpu, th1, t - 100, st_a, 10 * MS, NULL, 0);       /* backwards   */
    uint64_t x1[] = {c_foo, 4096}, x2[] = {0, UINT64_MAX};
    w_sample(w, k_alloc, th2, t + 5, st_a, 4096, x1, 2);
    w_sample(w, k_alloc, th2, t + 6, st_trunc, 1, x2, 2);
    w_sample(w, k_alloc, 0, t + 7, st_trunc, 1, x2, 2);              /* no thread   */
    CHECK(rp_chunk_counter(w, "lost.ring_full", 3) == 0, "counter");
    CHECK(rp_chunk_counter(w, "samples.seen", 10) == 0, "counter");
    CHECK(rp_chunk_counter(w, "lost.ring_full", 2) == 0, "counter");
    CHECK(rp_chunk_counter(w, "never", 0) == 0, "counter 0");
    ctr_add(xctr, &nxctr, "lost.ring_full", 5, 0);
    ctr_add(xctr, &nxctr, "samples.seen", 10, 0);
    w_gauge(w, "rss", t + 8, 123456789);
    w_cpu(w, th1, t + 9, 555);
    w_sample(w, k_cpu, th1, t + 9, st_a, 10 * MS, NULL, 0);   /* its batch is open... */
    uint32_t again = rp_chunk_thread(w, 1, 100, 1, "main-renamed", RP_THREAD_JAVA, t + 10);
    CHECK(again == th1, "a rename keeps the id");   /* ...and is closed before it */
    x_thread(th1, "main-renamed");
    w_sample(w, k_cpu, th1, t + 11, st_a, 10 * MS, NULL, 0);
    CHECK(rp_chunk_flush(w) == 0, "flush 1");
    CHECK(rp_chunk_flush(w) == 0, "an empty flush writes nothing");

    x_segment();
    CHECK(rp_chunk_counter(w, "lost.ring_full", 7) == 0, "counter");
    ctr_add(xctr, &nxctr, "lost.ring_full", 7, 1);
    CHECK(rp_chunk_thread(w, 2, 200, 0, "GC Thread#0", 0, t + 12) == th2,
          "same thread, same attributes");
    CHECK(rp_chunk_thread(w, 2, 200, 0, "GC Thread#0", RP_THREAD_ENDED, t + 13) == th2,
          "same thread, ended");
    x_thread(th2, "GC Thread#0");
    w_sample(w, k_cpu, th2, t + 14, st_a, 30 * MS, NULL, 0);
    w_gauge(w, "rss", t + 15, 0);
    struct rp_chunk_writer_stats ws;
    rp_chunk_writer_stats(w, &ws);
    CHECK(ws.pending_samples == 1, "pending samples %llu",
          (unsigned long long)ws.pending_samples);
    CHECK(ws.segments_written == 1 && ws.samples_written == 12, "stats after one flush");
    CHECK(rp_chunk_close(w) == 0, "close: %s", strerror(errno));

    struct diags d = {0};
    struct rp_reader *r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r != NULL, "reader open");
    CHECK(strcmp(rp_reader_meta(r, RP_META_PID), "4242") == 0, "meta pid");
    CHECK(strcmp(rp_reader_meta(r, RP_META_START_WALL), "1700000000000000000") == 0,
          "meta wall");
    CHECK(rp_reader_meta(r, "nope") == NULL, "absent meta");
    size_t nmeta;
    const struct rp_kv *all = rp_reader_meta_all(r, &nmeta);
    CHECK(nmeta == 4 && strcmp(all[1].key, RP_META_PRODUCER) == 0, "meta order");
    CHECK(rp_reader_format_minor(r) == RP_FORMAT_MINOR, "minor");

    int segs;
    uint32_t last_flags = 0;
    size_t got = read_and_compare(r, &segs, &last_flags);
    CHECK(got == nx, "events: read %zu, wrote %zu", got, nx);
    CHECK(segs == 2, "segments %d", segs);
    CHECK(last_flags & RP_SEG_LAST, "last segment flagged");
    CHECK(nrctr == nxctr, "counter entries %d vs %d", nrctr, nxctr);
    for (int i = 0; i < nxctr; i++) {
        int found = 0;
        for (int j = 0; j < nrctr; j++)
            if (rctr[j].seg == xctr[i].seg && strcmp(rctr[j].name, xctr[i].name) == 0)
                found = rctr[j].v == xctr[i].v;
        CHECK(found, "counter %s in segment %d", xctr[i].name, xctr[i].seg);
    }
    CHECK(ctr_total(rctr, nrctr, "lost.ring_full") == 12, "counter summed over segments");

    /* Pools. */
    size_t len;
    const char *s = rp_reader_string_len(r, s_nul, &len);
    CHECK(s && len == 4 && memcmp(s, nul_str, 4) == 0 && s[4] == 0, "string with NULs");
    s = rp_reader_string_len(r, s_utf8, &len);
    CHECK(s && len == strlen(utf8) && strcmp(s, utf8) == 0, "UTF-8 string");
    s = rp_reader_string_len(r, s_empty, &len);
    CHECK(s && len == 0 && s[0] == 0, "empty string");
    CHECK(rp_reader_string(r, 0) == NULL && rp_reader_string(r, 9999) == NULL,
          "undefined string ids");
    CHECK(rp_reader_class(r, c_foo) && strcmp(rp_reader_class(r, c_foo),
                                              "com.example.Foo") == 0, "class");
    const struct rp_method_info *m = rp_reader_method(r, m_run);
    CHECK(m && strcmp(m->klass, "com.example.Foo") == 0 && strcmp(m->name, "run") == 0 &&
          strcmp(m->signature, "()V") == 0 && strcmp(m->file, "Foo.java") == 0 &&
          m->flags == RP_METHOD_SYNTHETIC, "method run");
    m = rp_reader_method(r, m_odd);
    CHECK(m && m->name == rp_reader_string(r, s_nul) && strcmp(m->signature, utf8) == 0 &&
          strcmp(m->file, "") == 0 && m->flags == RP_METHOD_NATIVE, "method odd");
    m = rp_reader_method(r, m_read);
    CHECK(m && m->signature == NULL && m->file == NULL && strcmp(m->klass, "libc.so.6") == 0,
          "method with no signature or file");
    const struct rp_frame_info *f = rp_reader_frame(r, f_jit);
    CHECK(f && f->method == m_run && f->type == RP_FRAME_JIT && f->bci == 17 &&
          f->line == 42, "frame jit");
    f = rp_reader_frame(r, f_int);
    CHECK(f && f->method == m_odd && f->type == RP_FRAME_INTERPRETED && f->bci == -1 &&
          f->line == 0, "frame without bci");
    f = rp_reader_frame(r, f_inl);
    CHECK(f && f->type == RP_FRAME_INLINED && f->bci == 0 && f->line == 1, "frame bci 0");
    f = rp_reader_frame(r, f_big);
    CHECK(f && f->type == RP_FRAME_CPP && f->bci == INT32_MAX && f->line == UINT32_MAX,
          "frame extremes");
    uint32_t n, flags;
    const uint32_t *fr = rp_reader_stack(r, st_a, &n, &flags);
    CHECK(fr && n == 5 && flags == 0 && memcmp(fr, fr_a, sizeof fr_a) == 0, "stack a");
    fr = rp_reader_stack(r, st_empty, &n, &flags);
    CHECK(fr && n == 0 && flags == RP_STACK_ERROR, "empty stack is defined");
    fr = rp_reader_stack(r, st_trunc, &n, &flags);
    CHECK(fr && n == 2 && flags == RP_STACK_TRUNCATED && fr[0] == f_jit && fr[1] == f_int,
          "truncated stack");
    const struct rp_thread_info *ti = rp_reader_thread(r, th1);
    CHECK(ti && ti->os_tid == 100 && ti->java_tid == 1 && strcmp(ti->name, "main-renamed") == 0
          && ti->flags == RP_THREAD_JAVA && ti->time == t + 10, "thread 1 final state");
    ti = rp_reader_thread(r, th2);
    CHECK(ti && ti->os_tid == 200 && ti->java_tid == 0 && ti->flags == RP_THREAD_ENDED &&
          ti->time == t + 13, "thread 2 final state");
    CHECK(rp_reader_thread_count(r) == 2 && rp_reader_kind_count(r) == 2, "pool counts");
    const struct rp_kind_info *k = rp_reader_kind(r, k_alloc);
    CHECK(k && strcmp(k->name, "alloc") == 0 && strcmp(k->unit, "bytes") == 0 &&
          k->period == 0 && k->nextra == 2 && strcmp(k->extra[0], "class") == 0 &&
          strcmp(k->extra[1], "size") == 0, "kind with extras");
    k = rp_reader_kind(r, k_cpu);
    CHECK(k && strcmp(k->name, "cpu") == 0 && k->period == 10 * MS && k->nextra == 0,
          "kind cpu");

    struct rp_reader_stats rs;
    rp_reader_stats(r, &rs);
    CHECK(rs.segments_ok == 2 && rs.segments_bad == 0 && rs.segments_partial == 0 &&
          rs.records_bad == 0 && rs.unresolved_refs == 0 && rs.samples == 13 &&
          rs.clean_close == 1 && rs.bytes_skipped == 0, "reader stats");
    CHECK(d.n == 0, "no diagnostics on a good file (%d)", d.n);
    rp_reader_close(r);
}

/* ------------------------------------------------------------- interning -- */

static void test_interning(void)
{
    char path[128];
    path_in_dir(path, sizeof path, "intern.rpc");
    struct rp_chunk_writer *w = open_writer(path);
    uint32_t a = rp_chunk_cstring(w, "a");
    CHECK(a == 1, "ids start at 1 (%u)", a);
    CHECK(rp_chunk_string(w, "a", 1) == a, "same string, same id");
    uint32_t a0 = rp_chunk_string(w, "a\0", 2);
    CHECK(a0 && a0 != a, "a NUL byte makes a different string");
    uint32_t b = rp_chunk_cstring(w, "b");
    CHECK(b && b != a && b != a0, "different strings, different ids");
    CHECK(rp_chunk_cstring(w, "a\0ignored") == a, "cstring stops at NUL");

    uint32_t ca = rp_chunk_class(w, a), cb = rp_chunk_class(w, b);
    CHECK(ca && ca == rp_chunk_class(w, a) && cb && cb != ca, "classes");
    errno = 0;
    CHECK(rp_chunk_class(w, 999) == 0 && errno == EINVAL, "class of an unknown string");

    uint32_t m = rp_chunk_method(w, ca, a, b, 0, 0);
    CHECK(m && m == rp_chunk_method(w, ca, a, b, 0, 0), "same method");
    CHECK(rp_chunk_method(w, cb, a, b, 0, 0) != m, "class differs");
    CHECK(rp_chunk_method(w, ca, b, b, 0, 0) != m, "name differs");
    CHECK(rp_chunk_method(w, ca, a, a, 0, 0) != m, "signature differs");
    CHECK(rp_chunk_method(w, ca, a, b, a, 0) != m, "file differs");
    CHECK(rp_chunk_method(w, ca, a, b, 0, 1) != m, "flags differ");
    CHECK(rp_chunk_method(w, 77, a, b, 0, 0) == 0, "unknown class rejected");

    uint32_t f = rp_chunk_frame(w, m, RP_FRAME_JIT, 3, 4);
    CHECK(f && f == rp_chunk_frame(w, m, RP_FRAME_JIT, 3, 4), "same frame");
    CHECK(rp_chunk_frame(w, m, RP_FRAME_INLINED, 3, 4) != f, "type differs");
    CHECK(rp_chunk_frame(w, m, RP_FRAME_JIT, 2, 4) != f, "bci differs");
    CHECK(rp_chunk_frame(w, m, RP_FRAME_JIT, 3, 5) != f, "line differs");
    CHECK(rp_chunk_frame(w, m, RP_FRAME_JIT, -1, 4) == rp_chunk_frame(w, m, RP_FRAME_JIT,
                                                                        -7, 4),
          "every negative bci is 'none'");
    CHECK(rp_chunk_frame(w, m, RP_FRAME_TYPES, 3, 4) == 0, "bad frame type rejected");
    CHECK(rp_chunk_frame(w, 999, RP_FRAME_JIT, 3, 4) == 0, "unknown method rejected");
    uint32_t g = rp_chunk_frame(w, m, RP_FRAME_JIT, 9, 9);

    uint32_t fs[] = {f, g}, sf[] = {g, f}, ff[] = {f, g, f};
    uint32_t s = rp_chunk_stack(w, fs, 2, 0);
    CHECK(s && s == rp_chunk_stack(w, (uint32_t[]){f, g}, 2, 0), "same stack");
    CHECK(rp_chunk_stack(w, sf, 2, 0) != s, "order differs");
    CHECK(rp_chunk_stack(w, fs, 1, 0) != s, "length differs");
    CHECK(rp_chunk_stack(w, ff, 3, 0) != s, "longer");
    CHECK(rp_chunk_stack(w, fs, 2, RP_STACK_TRUNCATED) != s, "flags differ");
    uint32_t e1 = rp_chunk_stack(w, NULL, 0, 0);
    CHECK(e1 && e1 == rp_chunk_stack(w, fs, 0, 0) && e1 != s, "empty stack interned");
    CHECK(rp_chunk_stack(w, (uint32_t[]){f, 12345}, 2, 0) == 0, "unknown frame rejected");
    CHECK(rp_chunk_stack(w, (uint32_t[]){0}, 1, 0) == 0, "frame 0 rejected");

    uint32_t t1 = rp_chunk_thread(w, 10, 1, 0, "x", 0, START);
    CHECK(t1 && t1 == rp_chunk_thread(w, 10, 1, 0, "x", 0, START + 5), "same thread key");
    uint32_t t2 = rp_chunk_thread(w, 11, 1, 0, "x", 0, START);
    CHECK(t2 && t2 != t1, "another key, another id");
    CHECK(rp_chunk_thread(w, 10, 2, 0, NULL, 0, START) == t1, "update keeps the id");

    uint32_t k = rp_chunk_kind(w, "cpu", "ns", 1, NULL, 0);
    CHECK(k && rp_chunk_kind(w, "cpu", "bytes", 7, NULL, 0) == k, "kind by name");
    CHECK(rp_chunk_kind(w, "wall", "ns", 1, NULL, 0) != k, "another kind");
    const char *nine[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
    _Static_assert(RP_MAX_EXTRA < 9, "nine must be more than RP_MAX_EXTRA");
    CHECK(rp_chunk_kind(w, "fat", "x", 0, nine, RP_MAX_EXTRA + 1) == 0,
          "more than RP_MAX_EXTRA");
    const char *two[] = {"a", "b"};
    uint32_t kx = rp_chunk_kind(w, "alloc", "bytes", 0, two, 2);

    errno = 0;
    CHECK(rp_chunk_sample(w, 0, t1, START, s, 1, NULL) < 0 && errno == EINVAL, "kind 0");
    CHECK(rp_chunk_sample(w, 99, t1, START, s, 1, NULL) < 0, "unknown kind");
    CHECK(rp_chunk_sample(w, k, 99, START, s, 1, NULL) < 0, "unknown thread");
    CHECK(rp_chunk_sample(w, k, t1, START, 9999, 1, NULL) < 0, "unknown stack");
    CHECK(rp_chunk_sample(w, kx, t1, START, s, 1, NULL) < 0, "extras missing");
    CHECK(rp_chunk_thread_cpu(w, 99, START, 1) < 0, "cpu of unknown thread");
    char *big = calloc(1, RP_CHUNK_STRING_MAX + 1);
    CHECK(rp_chunk_string(w, big, RP_CHUNK_STRING_MAX + 1) == 0 && errno == EINVAL,
          "string over the limit");
    CHECK(rp_chunk_string(w, big, RP_CHUNK_STRING_MAX) != 0, "string at the limit");
    free(big);
    CHECK(rp_chunk_close(w) == 0, "close");

    /* The reader sees the same ids for the same content. */
    struct diags d = {0};
    struct rp_reader *r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r, "open");
    struct rp_event ev;
    while (rp_reader_next(r, &ev))
        ;
    size_t len;
    CHECK(strcmp(rp_reader_string(r, a), "a") == 0, "a");
    CHECK(rp_reader_string_len(r, a0, &len) && len == 2, "a\\0");
    CHECK(rp_reader_string_len(r, 9999, &len) == NULL && len == 0,
          "undefined id yields NULL and length 0");
    CHECK(strcmp(rp_reader_kind(r, k)->unit, "ns") == 0, "first kind definition wins");
    const struct rp_thread_info *ti = rp_reader_thread(r, t1);
    CHECK(ti && ti->os_tid == 2 && ti->name == NULL, "thread update");
    struct rp_reader_stats rs;
    rp_reader_stats(r, &rs);
    CHECK(rs.unresolved_refs == 0 && rs.records_bad == 0 && d.n == 0, "clean");
    rp_reader_close(r);
}

/* ------------------------------------------------------ segments and size -- */

static uint32_t xr(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 11);
}

/* String number `i` of `n` bytes for the tests of segment sizes: pseudo-random,
 * as LZ4 cannot shrink, so the file is as large as its pools (a string of one
 * repeated byte would be 4 KiB on disk and pass the reader's pool budget:
 * RP_READER_POOL_FACTOR). */
static void big_string(char *s, size_t n, int i)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    for (size_t k = 0; k < n; k += sizeof x) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(s + k, &x, n - k < sizeof x ? n - k : sizeof x);
    }
}

static void test_many_and_large(void)
{
    char path[128];
    path_in_dir(path, sizeof path, "many.rpc");
    struct rp_chunk_writer *w = open_writer(path);
    nx = 0;
    x_segment();
    uint64_t seed = 88172645463325252ull;
    uint32_t k = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t cls = rp_chunk_class(w, rp_chunk_cstring(w, "C"));
    uint32_t th[4];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        th[i] = rp_chunk_thread(w, (uint64_t)i, (uint64_t)i, 0, name, 0, START);
        x_thread(th[i], name);
    }
    /* 400 small segments, each defining new frames and stacks now and then. */
    uint32_t stacks[512];
    int nst = 0, nseg = 0;
    uint64_t t = START;
    for (int seg = 0; seg < 400; seg++) {
        if (seg)
            x_segment();
        nseg++;
        for (int j = 0; j < 3; j++) {
            char name[32];
            snprintf(name, sizeof name, "m%d_%d", seg, j);
            uint32_t m = rp_chunk_method(w, cls, rp_chunk_cstring(w, name), 0, 0, 0);
            uint32_t f = rp_chunk_frame(w, m, RP_FRAME_JIT, j, 0);
            uint32_t fr[2] = {f, f};
            if (nst < 512)
                stacks[nst++] = rp_chunk_stack(w, fr, 1 + (uint32_t)(j & 1), 0);
        }
        for (int i = 0; i < 20; i++) {
            t += 1 + xr(&seed) % (20 * MS);
            w_sample(w, k, th[i % 4], t, stacks[xr(&seed) % (uint32_t)nst],
                     (1 + xr(&seed) % 3) * 10 * MS, NULL, 0);
        }
        CHECK(rp_chunk_flush(w) == 0, "flush %d", seg);
    }
    /* One large segment: 300k samples, batches of RP_CHUNK_BATCH_MAX. */
    x_segment();
    nseg++;
    for (int i = 0; i < 300000; i++) {
        t += xr(&seed) % (30 * MS);
        w_sample(w, k, th[(i / 1000) % 4], t, stacks[xr(&seed) % (uint32_t)nst],
                 (xr(&seed) & 7) ? 10 * MS : xr(&seed), NULL, 0);
    }
    struct rp_chunk_writer_stats ws;
    rp_chunk_writer_stats(w, &ws);
    CHECK(ws.pending_samples == 300000 && ws.pending_raw_bytes > 1000000,
          "pending %llu samples, %llu bytes", (unsigned long long)ws.pending_samples,
          (unsigned long long)ws.pending_raw_bytes);
    CHECK(rp_chunk_close(w) == 0, "close");

    struct diags d = {0};
    struct rp_reader *r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r, "open");
    int segs;
    uint32_t lf;
    size_t got = read_and_compare(r, &segs, &lf);
    CHECK(got == nx && segs == nseg, "events %zu of %zu, segments %d of %d", got, nx, segs,
          nseg);
    struct rp_reader_stats rs;
    rp_reader_stats(r, &rs);
    CHECK(rs.unresolved_refs == 0 && rs.samples == 400 * 20 + 300000 && d.n == 0,
          "many: clean");
    rp_reader_close(r);

    /* A segment the caller never flushes is cut at RP_CHUNK_SEGMENT_SOFT_MAX. */
    path_in_dir(path, sizeof path, "huge.rpc");
    w = open_writer(path);
    const size_t sl = RP_CHUNK_STRING_MAX;
    char *s = malloc(sl);
    REQUIRE(s, "oom");
    int nbig = (int)(RP_CHUNK_SEGMENT_SOFT_MAX / sl) + 8;
    for (int i = 0; i < nbig; i++) {
        big_string(s, sl, i);
        CHECK(rp_chunk_string(w, s, sl) == (uint32_t)i + 1, "big string %d", i);
    }
    rp_chunk_writer_stats(w, &ws);
    CHECK(ws.segments_written >= 1 && ws.pending_raw_bytes < RP_CHUNK_SEGMENT_SOFT_MAX,
          "auto-flushed: %llu segments", (unsigned long long)ws.segments_written);
    CHECK(rp_chunk_close(w) == 0, "close");
    r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r, "open");
    struct rp_event ev;
    int nsegs = 0;
    while (rp_reader_next(r, &ev))
        if (ev.type == RP_EV_SEGMENT) {
            nsegs++;
            CHECK(ev.u.seg.raw_len <= RP_SEG_MAX_RAW, "segment size");
        }
    CHECK(nsegs >= 2, "at least two segments (%d)", nsegs);
    int bad = 0;
    for (int i = 0; i < nbig; i++) {
        size_t len;
        const char *g = rp_reader_string_len(r, (uint32_t)i + 1, &len);
        big_string(s, sl, i);
        bad += !g || len != sl || memcmp(g, s, sl) != 0;
    }
    CHECK(bad == 0, "%d big strings differ", bad);
    CHECK(d.n == 0, "clean");
    rp_reader_close(r);
    free(s);
    unlink(path);
}

/* --------------------------------------------------------- a live file -- */

static void test_live_part(void)
{
    char path[128];
    path_in_dir(path, sizeof path, "live.rpc.part");
    struct rp_chunk_writer *w = open_writer(path);
    uint32_t k = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t th = rp_chunk_thread(w, 1, 1, 0, "t", 0, START);
    uint32_t st = rp_chunk_stack(w, NULL, 0, 0);
    for (int i = 0; i < 50; i++)
        CHECK(rp_chunk_sample(w, k, th, START + (uint64_t)i * 10 * MS, st, 10 * MS, NULL) == 0,
              "sample");
    CHECK(rp_chunk_flush(w) == 0, "flush");
    for (int i = 50; i < 80; i++)   /* pending, not flushed */
        CHECK(rp_chunk_sample(w, k, th, START + (uint64_t)i * 10 * MS, st, 10 * MS, NULL) == 0,
              "sample");

    for (int pass = 0; pass < 2; pass++) {
        struct diags d = {0};
        struct rp_reader *r = rp_reader_open(path, on_diag, &d);
        REQUIRE(r, "open a live chunk");
        struct rp_event ev;
        uint64_t n = 0, last = 0;
        while (rp_reader_next(r, &ev))
            if (ev.type == RP_EV_SAMPLE) {
                CHECK(ev.u.sample.time == START + n * 10 * MS, "sample %llu time",
                      (unsigned long long)n);
                n++;
                last = ev.u.sample.time;
            }
        struct rp_reader_stats rs;
        rp_reader_stats(r, &rs);
        if (pass == 0) {
            CHECK(n == 50, "flushed samples visible: %llu", (unsigned long long)n);
            CHECK(rs.clean_close == 0 && rs.segments_partial == 0 && d.n == 0,
                  "live: not closed, nothing partial");
            CHECK(rp_chunk_close(w) == 0, "close");
        } else {
            CHECK(n == 80 && last == START + 79 * 10 * MS, "all samples after close");
            CHECK(rs.clean_close == 1 && d.n == 0, "closed");
        }
        rp_reader_close(r);
    }
}

/* ------------------------------------------------------- write failures -- */

static uint64_t file_len(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : UINT64_MAX;
}

static int set_fsize(rlim_t lim)
{
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = lim;
    return setrlimit(RLIMIT_FSIZE, &rl);
}

/* A frame chain whose names the reader must resolve: method "fn<i>" in class C. */
static uint32_t named_stack(struct rp_chunk_writer *w, int base, int depth)
{
    uint32_t fr[64];
    uint32_t c = rp_chunk_class(w, rp_chunk_cstring(w, "fail.C"));
    for (int i = 0; i < depth; i++) {
        char name[32];
        snprintf(name, sizeof name, "fn%d", base + i);
        uint32_t m = rp_chunk_method(w, c, rp_chunk_cstring(w, name), 0, 0, 0);
        fr[i] = rp_chunk_frame(w, m, RP_FRAME_JIT, base + i, 0);
    }
    return rp_chunk_stack(w, fr, (uint32_t)depth, 0);
}

/* The reader's view of a stack: "fn<a>;fn<b>;..." */
static void stack_names(struct rp_reader *r, uint32_t id, char *out, size_t cap)
{
    uint32_t n;
    const uint32_t *fr = rp_reader_stack(r, id, &n, NULL);
    out[0] = 0;
    for (uint32_t i = 0; fr && i < n; i++) {
        const struct rp_frame_info *f = rp_reader_frame(r, fr[i]);
        const struct rp_method_info *m = f ? rp_reader_method(r, f->method) : NULL;
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", i ? ";" : "", m && m->name ? m->name : "?");
    }
}

static void test_write_failure(void)
{
    char path[128];
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit saved;
    getrlimit(RLIMIT_FSIZE, &saved);

    /* Not even the header fits: open fails and leaves no file behind. */
    path_in_dir(path, sizeof path, "nohdr.rpc");
    REQUIRE(set_fsize(10) == 0, "setrlimit: %s", strerror(errno));
    char err[256];
    errno = 0;
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, NULL, 0, err, sizeof err);
    int e = errno;
    set_fsize(saved.rlim_cur);
    CHECK(w == NULL && e == EFBIG, "open under a 10-byte limit: %s", strerror(e));
    CHECK(access(path, F_OK) != 0, "no file left behind");
    CHECK(strstr(err, path) != NULL, "error names the path: %s", err);

    path_in_dir(path, sizeof path, "fail.rpc");
    w = open_writer(path);
    uint32_t k = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t th = rp_chunk_thread(w, 1, 1, 0, "worker", 0, START);
    uint32_t sa = named_stack(w, 0, 5);
    uint64_t t = START;
    for (int i = 0; i < 10; i++)
        CHECK(rp_chunk_sample(w, k, th, t += 10 * MS, sa, 10 * MS, NULL) == 0, "sample");
    CHECK(rp_chunk_flush(w) == 0, "flush A");
    struct rp_chunk_writer_stats ws;
    rp_chunk_writer_stats(w, &ws);
    uint64_t good = ws.bytes_written;
    CHECK(good == file_len(path), "bytes_written is the file length");

    /* The limit lets 64 bytes of the next segment through, then EFBIG. */
    REQUIRE(set_fsize((rlim_t)(good + 64)) == 0, "setrlimit");
    uint32_t th2 = rp_chunk_thread(w, 2, 2, 0, "born-in-failure", 0, t);
    uint32_t vt = rp_chunk_vthread(w, 77, "vt-born-in-failure", t);
    uint32_t sb = named_stack(w, 100, 40);     /* new pools, only in the lost segment */
    for (int i = 0; i < 200; i++)
        CHECK(rp_chunk_sample(w, k, i & 1 ? th : th2, t += 10 * MS, sb, 10 * MS, NULL) == 0,
              "sample");
    CHECK(rp_chunk_counter(w, "lost.ring_full", 5) == 0, "counter in a lost segment");
    errno = 0;
    int rc = rp_chunk_flush(w);
    e = errno;
    CHECK(rc == -1 && e == EFBIG, "flush B fails with EFBIG (%d, %s)", rc, strerror(e));
    rp_chunk_writer_stats(w, &ws);
    CHECK(ws.segments_failed == 1 && ws.samples_failed == 200 && ws.last_errno == EFBIG,
          "failure counted: %llu segments, %llu samples",
          (unsigned long long)ws.segments_failed, (unsigned long long)ws.samples_failed);
    CHECK(file_len(path) == good && ws.bytes_written == good,
          "file cut back to %llu (is %llu)", (unsigned long long)good,
          (unsigned long long)file_len(path));

    /* Fail again, with a stack defined in the failed segment and a new one. */
    uint32_t sc = named_stack(w, 200, 3);
    for (int i = 0; i < 30; i++)
        CHECK(rp_chunk_sample(w, k, th2, t += 10 * MS, i & 1 ? sb : sc, 10 * MS, NULL) == 0,
              "sample");
    CHECK(rp_chunk_flush(w) == -1, "flush C fails");
    rp_chunk_writer_stats(w, &ws);
    CHECK(ws.segments_failed == 2 && ws.samples_failed == 230, "second failure counted");
    CHECK(file_len(path) == good, "cut back again");

    /* Space returns: ids defined in failed segments must still resolve. */
    set_fsize(saved.rlim_cur);
    uint64_t t_ok = t;
    CHECK(named_stack(w, 100, 40) == sb && named_stack(w, 200, 3) == sc,
          "interning still knows the lost definitions");
    CHECK(rp_chunk_vthread(w, 77, "vt-born-in-failure", t) == vt,
          "interning still knows the lost virtual thread");
    CHECK(rp_chunk_sample(w, k, th2, t += 10 * MS, sb, 10 * MS, NULL) == 0, "sample");
    CHECK(rp_chunk_sample_vt(w, k, th2, vt, t += 10 * MS, sc, 10 * MS, NULL) == 0, "sample");
    CHECK(rp_chunk_sample(w, k, th, t += 10 * MS, sa, 10 * MS, NULL) == 0, "sample");
    CHECK(rp_chunk_flush(w) == 0, "flush D: %s", strerror(errno));
    CHECK(rp_chunk_sample(w, k, th2, t += 10 * MS, sb, 20 * MS, NULL) == 0, "sample");
    CHECK(rp_chunk_close(w) == 0, "close");

    struct diags d = {0};
    struct rp_reader *r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r, "open");
    struct rp_event ev;
    uint32_t seqs[8];
    int nseg = 0, n = 0, wrong = 0;
    uint64_t lost_write = 0, lost_ring = 0;
    char want_b[1024], want_c[256], got[1024];
    snprintf(want_b, sizeof want_b, "fn100");
    for (int i = 101; i < 140; i++)
        snprintf(want_b + strlen(want_b), sizeof want_b - strlen(want_b), ";fn%d", i);
    snprintf(want_c, sizeof want_c, "fn200;fn201;fn202");
    while (rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_SEGMENT && nseg < 8)
            seqs[nseg++] = ev.u.seg.seq;
        if (ev.type == RP_EV_COUNTER) {
            const char *cn = ev.u.counter.name ? ev.u.counter.name : "(unresolved)";
            if (strcmp(cn, RP_COUNTER_LOST_WRITE) == 0)
                lost_write += ev.u.counter.value;
            if (strcmp(cn, "lost.ring_full") == 0)
                lost_ring += ev.u.counter.value;
        }
        if (ev.type != RP_EV_SAMPLE)
            continue;
        n++;
        if (ev.u.sample.time > t_ok) {
            stack_names(r, ev.u.sample.stack, got, sizeof got);
            const struct rp_thread_info *ti = rp_reader_thread(r, ev.u.sample.thread);
            if (ev.u.sample.stack == sb)
                wrong += strcmp(got, want_b) != 0;
            else if (ev.u.sample.stack == sc)
                wrong += strcmp(got, want_c) != 0;
            if (ev.u.sample.thread == th2)
                wrong += !ti || !ti->name || strcmp(ti->name, "born-in-failure") != 0;
            const struct rp_vthread_info *vi = rp_reader_vthread(r, ev.u.sample.vthread);
            if (ev.u.sample.stack == sc)
                wrong += ev.u.sample.vthread != vt || !vi || vi->java_tid != 77 ||
                         strcmp(vi->name, "vt-born-in-failure") != 0;
            else
                wrong += ev.u.sample.vthread != 0;
        } else {
            CHECK(ev.u.sample.time <= START + 10 * 10 * MS, "a lost sample was delivered");
        }
    }
    CHECK(wrong == 0, "%d samples after the failures resolve wrongly", wrong);
    CHECK(n == 10 + 3 + 1, "samples read: %d", n);
    CHECK(nseg == 3 && seqs[0] == 0 && seqs[1] == 3 && seqs[2] == 4,
          "segments: %d, seq gap where the writes failed", nseg);
    CHECK(lost_write == 230, "lost.write carried into the chunk: %llu",
          (unsigned long long)lost_write);
    CHECK(lost_ring == 5, "the lost segment's counters carried: %llu",
          (unsigned long long)lost_ring);
    struct rp_reader_stats rs;
    rp_reader_stats(r, &rs);
    CHECK(rs.unresolved_refs == 0, "no unresolved refs (%llu): pools re-emitted",
          (unsigned long long)rs.unresolved_refs);
    CHECK(rs.segments_bad == 0 && rs.records_bad == 0 && rs.clean_close && d.n == 0,
          "a clean file despite the failures");
    rp_reader_close(r);

    /* More pool records pile up behind a full disk than one segment may hold: when
     * space returns they go out as several segments, split at record boundaries. */
    path_in_dir(path, sizeof path, "pileup.rpc");
    w = open_writer(path);
    rp_chunk_writer_stats(w, &ws);
    REQUIRE(set_fsize((rlim_t)ws.bytes_written) == 0, "setrlimit");
    const size_t sl = RP_CHUNK_STRING_MAX;
    int nbig = (int)(RP_CHUNK_SEGMENT_SOFT_MAX / sl) + 6;
    char *s = malloc(sl);
    REQUIRE(s != NULL, "oom");
    for (int i = 0; i < nbig; i++) {
        big_string(s, sl, i + 1000);
        CHECK(rp_chunk_string(w, s, sl) == (uint32_t)i + 1, "string %d", i);
    }
    rp_chunk_writer_stats(w, &ws);
    CHECK(ws.segments_failed == 1 && ws.segments_written == 0 &&
          ws.pending_raw_bytes > RP_CHUNK_SEGMENT_SOFT_MAX,
          "one failed auto-flush, no retry storm: %llu failed, %llu pending",
          (unsigned long long)ws.segments_failed,
          (unsigned long long)ws.pending_raw_bytes);
    set_fsize(saved.rlim_cur);
    CHECK(rp_chunk_flush(w) == 0, "flush after space returned: %s", strerror(errno));
    rp_chunk_writer_stats(w, &ws);
    CHECK(ws.segments_written >= 2 && ws.pending_raw_bytes == 0, "written in %llu pieces",
          (unsigned long long)ws.segments_written);
    CHECK(rp_chunk_close(w) == 0, "close");
    memset(&d, 0, sizeof d);
    r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r != NULL, "open");
    int nsegs = 0, wrong_strings = 0;
    while (rp_reader_next(r, &ev))
        if (ev.type == RP_EV_SEGMENT) {
            nsegs++;
            CHECK(ev.u.seg.raw_len <= RP_SEG_MAX_RAW, "segment within the limit");
        }
    for (int i = 0; i < nbig; i++) {
        size_t len;
        const char *g = rp_reader_string_len(r, (uint32_t)i + 1, &len);
        big_string(s, sl, i + 1000);
        wrong_strings += !g || len != sl || memcmp(g, s, sl) != 0;
    }
    CHECK(nsegs >= 3 && wrong_strings == 0 && d.n == 0, "pile-up: %d segments, %d wrong",
          nsegs, wrong_strings);
    rp_reader_close(r);
    free(s);
    unlink(path);
    set_fsize(saved.rlim_cur);
}

/* ------------------------------------------------------- virtual threads -- */

/* Samples of virtual threads on their carriers: every sample's VTHREAD id read
 * back, in records that mix them with the carrier's own samples, across record
 * boundaries (another thread, another kind, time going back, a flush), a rename,
 * an unnamed one; and a record without any carries none (the 1.0 encoding). */
static void test_vthreads(void)
{
    char path[128];
    path_in_dir(path, sizeof path, "vthreads.rpc");
    struct rp_chunk_writer *w = open_writer(path);
    nx = 0;
    uint32_t k_cpu = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    const char *ax[] = {"class", "size"};
    uint32_t k_alloc = rp_chunk_kind(w, "alloc", "bytes", 512 * 1024, ax, 2);
    uint32_t f = rp_chunk_frame(w, rp_chunk_method(w, rp_chunk_class(w, rp_chunk_cstring(w, "V")),
                                                   rp_chunk_cstring(w, "run"), 0, 0, 0),
                                RP_FRAME_JIT, 3, 30);
    uint32_t st = rp_chunk_stack(w, &f, 1, 0);
    x_segment();
    uint32_t carrier = rp_chunk_thread(w, 1, 700, 21, "ForkJoinPool-1-worker-1",
                                       RP_THREAD_JAVA | RP_THREAD_DAEMON, START);
    x_thread(carrier, "ForkJoinPool-1-worker-1");
    uint32_t other = rp_chunk_thread(w, 2, 701, 1, "main", RP_THREAD_JAVA, START);
    x_thread(other, "main");
    uint32_t va = rp_chunk_vthread(w, 35, "vt-a", START);
    uint32_t vb = rp_chunk_vthread(w, 36, NULL, START);
    CHECK(va == 1 && vb == 2, "vthread ids 1, 2: %u %u", va, vb);
    CHECK(rp_chunk_vthread(w, 35, "vt-a", START + 1) == va, "same vthread, same id");
    CHECK(rp_chunk_vthread(w, 35, NULL, START + 1) == va, "a name unknown now is no rename");
    CHECK(rp_chunk_vthread(w, 0, "x", START) == 0 && errno == EINVAL, "java_tid 0 refused");
    CHECK(rp_chunk_sample_vt(w, k_cpu, carrier, 9, START, st, 10 * MS, NULL) == -1 &&
          errno == EINVAL, "an undefined vthread id refused");

    uint64_t t = START;
    uint64_t ex[2] = {3, 1024};
    w_sample(w, k_cpu, carrier, t += 10 * MS, st, 10 * MS, NULL, 0);   /* the carrier's */
    w_sample(w, k_cpu, carrier, t += 10 * MS, st, 10 * MS, NULL, 0);
    w_sample_vt(w, k_cpu, carrier, va, t += 10 * MS, st, 10 * MS, NULL, 0);
    w_sample_vt(w, k_cpu, carrier, vb, t += 10 * MS, st, 20 * MS, NULL, 0);
    w_sample(w, k_cpu, carrier, t += 10 * MS, st, 10 * MS, NULL, 0);
    w_sample(w, k_cpu, other, t += 1 * MS, st, 10 * MS, NULL, 0);     /* another record */
    w_sample_vt(w, k_cpu, carrier, va, t += 1 * MS, st, 10 * MS, NULL, 0);
    w_sample_vt(w, k_alloc, carrier, va, t += 1 * MS, st, 700000, ex, 2);
    w_sample_vt(w, k_cpu, carrier, vb, t -= 5 * MS, st, 10 * MS, NULL, 0); /* time back */
    CHECK(rp_chunk_flush(w) == 0, "flush");
    x_segment();
    w_sample_vt(w, k_cpu, carrier, va, t += 10 * MS, st, 10 * MS, NULL, 0);
    CHECK(rp_chunk_vthread(w, 35, "vt-a-renamed", t + 1) == va, "rename keeps the id");
    w_sample_vt(w, k_cpu, carrier, va, t += 10 * MS, st, 10 * MS, NULL, 0);
    for (int i = 0; i < 300; i++)       /* a long record: ids of more than a byte */
        w_sample_vt(w, k_cpu, carrier, i % 3 == 2 ? 0 : i % 3 ? va : vb, t += 10 * MS, st,
                    10 * MS, NULL, 0);
    w_sample(w, k_cpu, other, t += 10 * MS, st, 10 * MS, NULL, 0);
    CHECK(rp_chunk_close(w) == 0, "close");

    struct diags d = {0};
    struct rp_reader *r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r != NULL, "open");
    CHECK(rp_reader_format_minor(r) == 1, "vthreads are format 1.1");
    int segs;
    uint32_t last;
    size_t got = read_and_compare(r, &segs, &last);
    CHECK(got == nx, "%zu of %zu events as written", got, nx);
    const struct rp_vthread_info *a = rp_reader_vthread(r, va), *b = rp_reader_vthread(r, vb);
    CHECK(a && a->java_tid == 35 && a->name && strcmp(a->name, "vt-a-renamed") == 0,
          "vt-a: %s", a && a->name ? a->name : "(none)");
    CHECK(b && b->java_tid == 36 && b->name && !b->name[0], "the unnamed one reads as \"\"");
    CHECK(rp_reader_vthread_count(r) == 2 && !rp_reader_vthread(r, 3), "two vthreads");
    struct rp_reader_stats rs;
    rp_reader_stats(r, &rs);
    CHECK(rs.records_bad == 0 && rs.records_unknown == 0 && rs.unresolved_refs == 0 &&
          d.n == 0, "clean: %llu bad, %llu unknown", (unsigned long long)rs.records_bad,
          (unsigned long long)rs.records_unknown);
    rp_reader_close(r);
    unlink(path);
}

/* ---------------------------------------------------- the docs' example -- */

/* The tiny chunk docs/format.md dissects byte by byte. Fixed clocks, so the bytes
 * are the same on every run (the LZ4 frame depends on liblz4's version only). */
static int write_example(const char *path)
{
    struct rp_kv meta[] = {
        {RP_META_START_WALL, "1700000000000000000"},
        {RP_META_START_MONO, "1000"},
    };
    char err[256];
    unlink(path);
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, meta, 2, err, sizeof err);
    if (!w) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint32_t c = rp_chunk_class(w, rp_chunk_cstring(w, "A"));
    uint32_t m = rp_chunk_method(w, c, rp_chunk_cstring(w, "run"), 0, 0, 0);
    uint32_t f = rp_chunk_frame(w, m, RP_FRAME_JIT, 7, 12);
    uint32_t s = rp_chunk_stack(w, &f, 1, 0);
    uint32_t th = rp_chunk_thread(w, 1, 42, 1, "main", RP_THREAD_JAVA, 1000);
    uint32_t k = rp_chunk_kind(w, "cpu", "ns", 10000000, NULL, 0);
    rp_chunk_sample(w, k, th, 1000 + 10000000, s, 10000000, NULL);
    rp_chunk_sample(w, k, th, 1000 + 20000000, s, 10000000, NULL);
    rp_chunk_sample(w, k, th, 1000 + 40000000, s, 20000000, NULL);
    rp_chunk_counter(w, "lost.ring_full", 1);
    return rp_chunk_close(w) == 0 ? 0 : 1;
}

/* What docs/format.md says the example holds. */
static void test_example(void)
{
    char path[128];
    path_in_dir(path, sizeof path, "example.rpc");
    REQUIRE(write_example(path) == 0, "example");
    struct diags d = {0};
    struct rp_reader *r = rp_reader_open(path, on_diag, &d);
    REQUIRE(r != NULL, "open");
    struct rp_event ev;
    const uint64_t when[3] = {10001000, 20001000, 40001000};
    const uint64_t weight[3] = {10000000, 10000000, 20000000};
    int n = 0, segs = 0, counters = 0, threads = 0;
    while (rp_reader_next(r, &ev)) {
        if (ev.type == RP_EV_SEGMENT) {
            segs++;
            CHECK(ev.u.seg.offset == 73 && ev.u.seg.raw_len == 119 &&
                  ev.u.seg.comp_len == 146 && ev.u.seg.records == 14 &&
                  ev.u.seg.flags == RP_SEG_LAST && ev.u.seg.t_first == 10001000 &&
                  ev.u.seg.t_last == 40001000, "example segment as documented");
        } else if (ev.type == RP_EV_SAMPLE) {
            CHECK(n < 3 && ev.u.sample.time == when[n] && ev.u.sample.weight == weight[n],
                  "example sample %d", n);
            n++;
        } else if (ev.type == RP_EV_COUNTER) {
            counters++;
            CHECK(strcmp(ev.u.counter.name, "lost.ring_full") == 0 && ev.u.counter.value == 1,
                  "example counter");
        } else if (ev.type == RP_EV_THREAD) {
            threads++;
        }
    }
    CHECK(segs == 1 && n == 3 && counters == 1 && threads == 1 && d.n == 0, "example");
    rp_reader_close(r);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--example") == 0)
        return write_example(argv[2]);
    snprintf(dir, sizeof dir, "/tmp/rp_test_chunk.XXXXXX");
    char *made = mkdtemp(dir);   /* REQUIRE evaluates its condition twice */
    REQUIRE(made != NULL, "mkdtemp: %s", strerror(errno));

    test_round_trip();
    test_interning();
    test_many_and_large();
    test_live_part();
    test_write_failure();
    test_vthreads();
    test_example();

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    free(xlog);
    return check_exit("test_chunk");
}
