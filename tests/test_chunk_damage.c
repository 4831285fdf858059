/*
 * tests/test_chunk_damage.c — the chunk reader against damaged and hostile files.
 *
 * (a) A varied chunk is truncated at every byte offset. The reader must refuse a cut
 *     file header (fatal diagnostic), and otherwise deliver exactly the samples of
 *     the segments that are whole, identical to what was written, and count the cut
 *     one as partial, not as damage.
 * (b) Seeded random byte flips, 1 to 8 per trial. Checksums cover the headers and
 *     the decoded content of every segment, so a changed file either draws a
 *     diagnostic or reads exactly as written (a change inside an LZ4 block can
 *     leave the decoded bytes as they were); every diagnostic points inside the
 *     file; every sample delivered (from a segment that passed its header crc and
 *     LZ4 content checksum) is identical to the one written.
 * (c) Hand-made files with valid checksums and hostile contents: huge lengths,
 *     bodies running past their segment, overlong varints, huge ids and counts.
 *     Each must be rejected with a diagnostic and without harm to what follows.
 * (d) The limits the reader keeps whatever the file says (chunk.h, "Reader
 *     limits"): a string and a stack at the writer's limits are read, one byte or
 *     frame more is refused; segments of 1 MiB strings that LZ4 packs 250 to one
 *     fill the pools to their budget, never past it; a segment header claiming
 *     more than 256 times its frame is refused before anything is allocated; and
 *     references to ids the chunk never defined are summed up once per segment.
 *
 * RP_DAMAGE_TRIALS overrides the number of flip trials (default 3000).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"
#include "../recorder/crc32c.h"
#include "../recorder/varint.h"
#include "check.h"
#include "chunkbuild.h"

#define MS 1000000ull

static char dir[64];

/* ---------------------------------------------------------- ground truth -- */

struct gsample {
    uint32_t kind, thread, stack, vthread;
    uint64_t time, weight;
    uint32_t nextra;
    uint64_t extra[RP_MAX_EXTRA];
};

#define NSEG 7
static struct gsample *truth[NSEG];
static int ntruth[NSEG];
static uint32_t stack_frames[256][8], stack_n[256];
static uint64_t seg_end[NSEG];      /* file offset just after each segment          */
static uint64_t hdr_len;
static uint8_t *orig;
static size_t orig_len;

static uint32_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

static void add_truth(int seg, const struct gsample *g)
{
    truth[seg] = realloc(truth[seg], (size_t)(ntruth[seg] + 1) * sizeof *g);
    REQUIRE(truth[seg] != NULL, "oom");
    truth[seg][ntruth[seg]++] = *g;
}

/* Several segments with every record type; new pool entries in each. */
static void build_chunk(const char *path)
{
    char err[256];
    struct rp_kv meta[] = {{RP_META_START_MONO, "1000000000"}, {"note", "damage"}};
    struct rp_chunk_writer *w = rp_chunk_writer_open(path, meta, 2, err, sizeof err);
    REQUIRE(w != NULL, "%s", err);
    uint64_t seed = 0x9e3779b97f4a7c15ull, t = 1000000000ull;
    const char *xn[] = {"class", "size"};
    uint32_t k_cpu = rp_chunk_kind(w, "cpu", "ns", 10 * MS, NULL, 0);
    uint32_t k_alloc = rp_chunk_kind(w, "alloc", "bytes", 0, xn, 2);
    uint32_t th[3], nst = 0;
    uint32_t frames[64];
    int nfr = 0;
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "worker-%d", i);
        th[i] = rp_chunk_thread(w, (uint64_t)i, 100u + (uint64_t)i, (uint64_t)i, name,
                                RP_THREAD_JAVA, t);
    }
    for (int seg = 0; seg < NSEG; seg++) {
        char name[32];
        snprintf(name, sizeof name, "pkg.Class%d", seg);
        uint32_t c = rp_chunk_class(w, rp_chunk_cstring(w, name));
        for (int j = 0; j < 4 && nfr < 64; j++) {
            snprintf(name, sizeof name, "method_%d_%d", seg, j);
            uint32_t m = rp_chunk_method(w, c, rp_chunk_cstring(w, name),
                                         rp_chunk_cstring(w, "()V"),
                                         rp_chunk_cstring(w, "F.java"), 0);
            frames[nfr++] = rp_chunk_frame(w, m, (enum rp_frame_type)(j % RP_FRAME_TYPES),
                                           j - 1, (uint32_t)(seg * 10 + j));
        }
        for (int j = 0; j < 4; j++) {
            uint32_t n = 1 + rnd(&seed) % 8, fr[8];
            for (uint32_t i = 0; i < n; i++)
                fr[i] = frames[rnd(&seed) % (uint32_t)nfr];
            uint32_t id = rp_chunk_stack(w, fr, n, j == 3 ? RP_STACK_TRUNCATED : 0);
            if (id > nst) {
                REQUIRE(id < 256, "stack ids");
                memcpy(stack_frames[id], fr, n * 4);
                stack_n[id] = n;
                nst = id;
            }
        }
        if (seg == 3)
            rp_chunk_thread(w, 1, 101, 1, "worker-1-renamed", RP_THREAD_JAVA, t);
        /* A virtual thread per segment, on worker-2's samples every third. */
        snprintf(name, sizeof name, "vt-%d", seg);
        uint32_t vt = rp_chunk_vthread(w, 1000u + (uint64_t)seg, seg % 2 ? name : NULL, t);
        for (int i = 0; i < 24; i++) {
            struct gsample g = {0};
            int alloc = i % 5 == 4;
            g.kind = alloc ? k_alloc : k_cpu;
            g.thread = th[(i / 4) % 3];
            g.stack = 1 + rnd(&seed) % nst;
            g.time = t += 1 + rnd(&seed) % (12 * MS);
            g.weight = alloc ? rnd(&seed) : (1 + (i % 7 == 0)) * 10 * MS;
            g.vthread = g.thread == th[2] && i % 3 ? vt : 0;
            if (alloc) {
                g.nextra = 2;
                g.extra[0] = c;
                g.extra[1] = rnd(&seed);
            }
            REQUIRE(rp_chunk_sample_vt(w, g.kind, g.thread, g.vthread, g.time, g.stack,
                                       g.weight, g.nextra ? g.extra : NULL) == 0, "sample");
            add_truth(seg, &g);
        }
        rp_chunk_counter(w, "lost.ring_full", (uint64_t)seg);
        rp_chunk_gauge(w, "rss", t, 1000u + (uint64_t)seg);
        rp_chunk_thread_cpu(w, th[seg % 3], t, (uint64_t)seg * MS);
        if (seg < NSEG - 1)
            REQUIRE(rp_chunk_flush(w) == 0, "flush");
    }
    REQUIRE(rp_chunk_close(w) == 0, "close");
}

static int sample_equal(const struct rp_event *ev, const struct gsample *g)
{
    if (ev->u.sample.kind != g->kind || ev->u.sample.thread != g->thread ||
        ev->u.sample.stack != g->stack || ev->u.sample.time != g->time ||
        ev->u.sample.weight != g->weight || ev->u.sample.nextra != g->nextra ||
        ev->u.sample.vthread != g->vthread)
        return 0;
    for (uint32_t i = 0; i < g->nextra; i++)
        if (ev->u.sample.extra[i] != g->extra[i])
            return 0;
    return 1;
}

/* ------------------------------------------------------- one reader run -- */

struct run {
    int opened;
    int ndiag, nfatal;
    uint64_t max_off;
    int segs_seen;
    int seg_samples[NSEG];          /* samples delivered per segment seq          */
    int wrong;                      /* samples that differ from the truth         */
    int wrong_stacks;               /* resolved stacks whose frames differ        */
    int foreign;                    /* samples outside any known segment          */
    uint64_t events;
    struct rp_reader_stats st;
    char first[200];
};

static void run_diag(void *arg, const char *path, uint64_t off, const char *reason,
                     int fatal)
{
    struct run *r = arg;
    (void)path;
    if (!r->ndiag++)
        snprintf(r->first, sizeof r->first, "@%llu %s", (unsigned long long)off, reason);
    r->nfatal += fatal;
    if (off != RP_READER_NO_OFFSET && off > r->max_off)   /* the file as a whole */
        r->max_off = off;
}

static void read_file(const char *path, struct run *out)
{
    memset(out, 0, sizeof *out);
    struct rp_reader *r = rp_reader_open(path, run_diag, out);
    if (!r)
        return;
    out->opened = 1;
    struct rp_event ev;
    int seq = -1, idx = 0;
    while (rp_reader_next(r, &ev)) {
        if (++out->events > 100000) {
            CHECK(0, "reader does not stop");
            break;
        }
        if (ev.type == RP_EV_SEGMENT) {
            out->segs_seen++;
            seq = ev.u.seg.seq < NSEG ? (int)ev.u.seg.seq : -1;
            idx = 0;
            continue;
        }
        if (ev.type != RP_EV_SAMPLE)
            continue;
        if (seq < 0 || idx >= ntruth[seq]) {
            out->foreign++;
            continue;
        }
        out->wrong += !sample_equal(&ev, &truth[seq][idx]);
        out->seg_samples[seq]++;
        idx++;
        uint32_t n, flags;
        const uint32_t *fr = rp_reader_stack(r, ev.u.sample.stack, &n, &flags);
        if (fr && (n != stack_n[ev.u.sample.stack] ||
                   memcmp(fr, stack_frames[ev.u.sample.stack], n * 4) != 0))
            out->wrong_stacks++;
    }
    rp_reader_stats(r, &out->st);
    rp_reader_close(r);
}

static void write_file(const char *path, const uint8_t *p, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0, "open %s", path);
    REQUIRE(write(fd, p, len) == (ssize_t)len, "write");
    close(fd);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    struct stat sb;
    REQUIRE(stat(path, &sb) == 0, "stat");
    uint8_t *p = malloc((size_t)sb.st_size + 1);
    int fd = open(path, O_RDONLY);
    REQUIRE(p && fd >= 0 && read(fd, p, (size_t)sb.st_size) == sb.st_size, "read");
    close(fd);
    *len = (size_t)sb.st_size;
    return p;
}

/* ------------------------------------------------------------ (a) and (b) -- */

static void test_intact(const char *path)
{
    struct run r;
    read_file(path, &r);
    CHECK(r.opened && r.ndiag == 0 && r.wrong == 0 && r.foreign == 0 &&
          r.wrong_stacks == 0, "intact file reads cleanly (%s)", r.first);
    for (int s = 0; s < NSEG; s++)
        CHECK(r.seg_samples[s] == ntruth[s], "segment %d: %d of %d samples", s,
              r.seg_samples[s], ntruth[s]);
    CHECK(r.st.clean_close && r.st.unresolved_refs == 0 && r.segs_seen == NSEG, "intact");

    /* Where the segments end, for the truncation test. */
    struct rp_reader *rd = rp_reader_open(path, NULL, NULL);
    REQUIRE(rd != NULL, "open");
    struct rp_event ev;
    int i = 0;
    while (rp_reader_next(rd, &ev))
        if (ev.type == RP_EV_SEGMENT) {
            if (i == 0)
                hdr_len = ev.u.seg.offset;
            seg_end[i++] = ev.u.seg.offset + RP_SEG_HEADER_LEN + ev.u.seg.comp_len;
        }
    rp_reader_close(rd);
    CHECK(i == NSEG && seg_end[NSEG - 1] == orig_len, "segments span the file");
}

static void test_truncation(const char *scratch)
{
    write_file(scratch, orig, orig_len);
    int fd = open(scratch, O_WRONLY);
    REQUIRE(fd >= 0, "open");
    int failures = 0;
    for (size_t t = orig_len + 1; t-- > 0;) {
        REQUIRE(ftruncate(fd, (off_t)t) == 0, "ftruncate");
        struct run r;
        read_file(scratch, &r);
        int before = check_failed;
        if (t < hdr_len) {
            CHECK(!r.opened && r.nfatal >= 1, "cut at %zu in the file header: refused", t);
        } else {
            int whole = 0, boundary = t == hdr_len;
            for (int s = 0; s < NSEG; s++) {
                whole += seg_end[s] <= t;
                boundary |= seg_end[s] == t;
            }
            CHECK(r.opened && r.nfatal == 0, "cut at %zu: opens", t);
            CHECK(r.st.segments_ok == (uint64_t)whole && r.st.segments_bad == 0 &&
                  r.st.bytes_skipped == 0 && r.st.records_bad == 0,
                  "cut at %zu: %d whole segments, ok=%llu bad=%llu", t, whole,
                  (unsigned long long)r.st.segments_ok, (unsigned long long)r.st.segments_bad);
            CHECK(r.st.segments_partial == (uint64_t)!boundary && r.ndiag == !boundary,
                  "cut at %zu: partial=%llu diags=%d", t,
                  (unsigned long long)r.st.segments_partial, r.ndiag);
            CHECK(r.st.clean_close == (t == orig_len), "cut at %zu: clean_close", t);
            CHECK(r.wrong == 0 && r.foreign == 0 && r.wrong_stacks == 0 &&
                  r.st.unresolved_refs == 0, "cut at %zu: samples as written", t);
            for (int s = 0; s < NSEG; s++)
                CHECK(r.seg_samples[s] == (s < whole ? ntruth[s] : 0),
                      "cut at %zu: segment %d delivered %d samples", t, s, r.seg_samples[s]);
            CHECK(r.ndiag == 0 || r.max_off < t, "cut at %zu: diag offset %llu", t,
                  (unsigned long long)r.max_off);
        }
        if (check_failed > before && ++failures > 5)
            break;
    }
    close(fd);
}

static void test_flips(const char *scratch, int trials)
{
    uint64_t seed = 0x2545f4914f6cdd1dull;
    uint8_t *buf = malloc(orig_len);
    REQUIRE(buf, "oom");
    int failures = 0, changed = 0, some_ok = 0, silent = 0;
    uint64_t delivered = 0;
    for (int trial = 0; trial < trials; trial++) {
        memcpy(buf, orig, orig_len);
        int flips = 1 + (int)(rnd(&seed) % 8);
        for (int i = 0; i < flips; i++)
            buf[rnd(&seed) % orig_len] ^= (uint8_t)(1 + rnd(&seed) % 255);
        int differs = memcmp(buf, orig, orig_len) != 0;
        changed += differs;
        write_file(scratch, buf, orig_len);
        struct run r;
        read_file(scratch, &r);
        int before = check_failed;
        /* Silence is allowed only if everything came through as written: a change
         * inside an LZ4 block can leave the decoded content as it was (a match
         * offset into a run of equal bytes), and the checksums cover content. */
        int everything = r.st.clean_close && r.segs_seen == NSEG;
        for (int s = 0; s < NSEG; s++)
            everything &= r.seg_samples[s] == ntruth[s];
        if (differs && r.ndiag == 0 && !everything) {
            size_t at = 0;
            while (buf[at] == orig[at])
                at++;
            CHECK(0, "trial %d: a changed file lost data without a diagnostic (first "
                  "change at %zu: %02x -> %02x)", trial, at, orig[at], buf[at]);
        }
        silent += differs && r.ndiag == 0;
        CHECK(r.ndiag == 0 || r.max_off < orig_len, "trial %d: diag offset %llu outside "
              "(%s)", trial, (unsigned long long)r.max_off, r.first);
        CHECK(r.wrong == 0 && r.foreign == 0 && r.wrong_stacks == 0,
              "trial %d: delivered samples differ from the truth (%d, %d, %d)", trial,
              r.wrong, r.foreign, r.wrong_stacks);
        /* A segment that passed its checks yields all its samples or none. */
        for (int s = 0; s < NSEG; s++)
            CHECK(r.seg_samples[s] == 0 || r.seg_samples[s] == ntruth[s],
                  "trial %d: segment %d partly delivered", trial, s);
        for (int s = 0; s < NSEG; s++)
            delivered += (uint64_t)r.seg_samples[s];
        some_ok += r.st.segments_ok > 0;
        if (check_failed > before && ++failures > 5)
            break;
    }
    /* The trials must have exercised both outcomes to mean anything. */
    CHECK(changed > trials * 9 / 10 && some_ok > trials / 10 && delivered > 0,
          "flip trials: %d changed, %d with good segments", changed, some_ok);
    printf("flips: %d trials, %d changed the file, %d of those harmlessly (same "
           "content)\n", trials, changed, silent);
    free(buf);
}

/* ------------------------------------------------------- (c) hand-made -- */

struct bb {
    uint8_t p[1 << 16];
    size_t n;
    uint32_t nrec;      /* records appended (payloads), for the segment header */
};

static void bb_u8(struct bb *b, uint8_t v) { b->p[b->n++] = v; }
static void bb_v(struct bb *b, uint64_t v) { b->n += rp_varint_put(b->p + b->n, v); }
static void bb_raw(struct bb *b, const void *p, size_t n)
{
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

/* A record whose body is the given varints; `rec_v(b, type, n, ...)`. */
static void rec(struct bb *b, uint8_t type, const uint64_t *f, int nf)
{
    uint8_t body[512];
    size_t bl = 0;
    for (int i = 0; i < nf; i++)
        bl += rp_varint_put(body + bl, f[i]);
    bb_u8(b, type);
    bb_v(b, bl);
    bb_raw(b, body, bl);
    b->nrec++;
}
#define REC(b, type, ...)                                                        \
    rec(b, type, (const uint64_t[]){__VA_ARGS__},                                \
        (int)(sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)))

static void rec_string(struct bb *b, uint64_t id, const char *s)
{
    uint8_t body[256];
    size_t bl = rp_varint_put(body, id);
    memcpy(body + bl, s, strlen(s));
    bl += strlen(s);
    bb_u8(b, RP_REC_STRING);
    bb_v(b, bl);
    bb_raw(b, body, bl);
    b->nrec++;
}

/* The basics a sample needs: string 1 "cpu", kind 1, thread 1. */
static void basics(struct bb *b)
{
    rec_string(b, 1, "cpu");
    REC(b, RP_REC_KIND, 1, 1, 0, 10, 0);
    REC(b, RP_REC_THREAD, 1, 7, 0, 1, 0, 0);
}

/* Two good samples of kind 1, thread 1: times start+5, start+8; weights 10, 30. */
static void two_samples(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 1, 1, 2, rp_zigzag_enc(5), 10, 0, 0 << 2 | 0, 0,
        3 << 2 | 1, 3, 0);
}

struct segopt {
    int no_checksum, no_size, trailing;
    uint32_t raw_len, comp_len, flags, records;
    int set_raw, set_comp;
};

/* Append a segment holding `payload` to file buffer `f`. */
static void add_segment(struct bb *f, const struct bb *payload, uint32_t seq,
                        const struct segopt *o)
{
    static const struct segopt none = {0};
    if (!o)
        o = &none;
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.contentChecksumFlag = o->no_checksum ? LZ4F_noContentChecksum
                                                         : LZ4F_contentChecksumEnabled;
    prefs.frameInfo.contentSize = o->no_size ? 0 : payload->n;
    uint8_t *h = f->p + f->n;
    size_t c = LZ4F_compressFrame(h + RP_SEG_HEADER_LEN, sizeof f->p - f->n - 64,
                                  payload->p, payload->n, &prefs);
    REQUIRE(!LZ4F_isError(c), "compress");
    if (o->trailing) {
        memcpy(h + RP_SEG_HEADER_LEN + c, "junk", 4);
        c += 4;
    }
    memcpy(h, RP_SEG_MAGIC, 4);
    rp_put_le32(h + 4, o->flags);
    rp_put_le32(h + 8, seq);
    rp_put_le32(h + 12, o->set_raw ? o->raw_len : (uint32_t)payload->n);
    rp_put_le32(h + 16, o->set_comp ? o->comp_len : (uint32_t)c);
    rp_put_le32(h + 20, o->records ? o->records : payload->nrec);
    memset(h + 24, 0, 20);
    rp_put_le32(h + 44, rp_crc32c(0, h, 44));
    f->n += RP_SEG_HEADER_LEN + c;
}

/* A valid file header with start.mono_ns = 1000 and no other metadata. */
static void add_header(struct bb *f)
{
    f->n = 0;
    bb_raw(f, RP_FILE_MAGIC, 8);
    bb_u8(f, RP_FORMAT_MAJOR);
    bb_u8(f, 0);
    bb_u8(f, RP_FORMAT_MINOR);
    bb_u8(f, 0);
    size_t lenpos = f->n;
    f->n += 4;
    bb_v(f, strlen(RP_META_START_MONO));
    bb_raw(f, RP_META_START_MONO, strlen(RP_META_START_MONO));
    bb_v(f, 4);
    bb_raw(f, "1000", 4);
    rp_put_le32(f->p + lenpos, (uint32_t)f->n + 4);
    uint32_t crc = rp_crc32c(0, f->p, f->n);
    rp_put_le32(f->p + f->n, crc);
    f->n += 4;
}

static struct run hostile(const char *name, const struct bb *f)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.rpc", dir, name);
    write_file(path, f->p, f->n);
    struct run r;
    read_file(path, &r);
    CHECK(r.ndiag == 0 || r.max_off < f->n || (f->n == 0 && r.max_off == 0),
          "%s: diag offset %llu beyond %zu", name, (unsigned long long)r.max_off, f->n);
    unlink(path);
    return r;
}

/* Read a file and count what came out; used for (c). */
struct got {
    struct run r;
    uint64_t samples;
    uint64_t first_time, first_weight;
};

static struct got hostile_samples(const char *name, const struct bb *f)
{
    struct got g = {0};
    char path[128];
    snprintf(path, sizeof path, "%s/%s.rpc", dir, name);
    write_file(path, f->p, f->n);
    struct rp_reader *r = rp_reader_open(path, run_diag, &g.r);
    if (r) {
        g.r.opened = 1;
        struct rp_event ev;
        uint64_t events = 0;
        while (rp_reader_next(r, &ev)) {
            if (++events > 100000) {
                CHECK(0, "%s: reader does not stop", name);
                break;
            }
            if (ev.type == RP_EV_SAMPLE && g.samples++ == 0) {
                g.first_time = ev.u.sample.time;
                g.first_weight = ev.u.sample.weight;
            }
        }
        rp_reader_stats(r, &g.r.st);
        rp_reader_close(r);
    }
    CHECK(g.r.ndiag == 0 || g.r.max_off < f->n, "%s: diag offset %llu beyond %zu", name,
          (unsigned long long)g.r.max_off, f->n);
    unlink(path);
    return g;
}

static struct bb F, P;

static void test_headers(void)
{
    add_header(&F);
    struct run r = hostile("hdr-ok", &F);
    CHECK(r.opened && r.ndiag == 0, "a bare header is a valid empty chunk (%s)", r.first);

    struct bb g = F;
    g.p[0] = 'x';
    r = hostile("hdr-magic", &g);
    CHECK(!r.opened && r.nfatal == 1 && strstr(r.first, "magic"), "bad magic: %s", r.first);
    g = F;
    g.p[8] = 2;
    r = hostile("hdr-major", &g);
    CHECK(!r.opened && r.nfatal == 1 && strstr(r.first, "major"), "major 2: %s", r.first);
    g = F;
    g.p[10] = 99;   /* minor 99, crc made good: a reader of this major reads it */
    rp_put_le32(g.p + g.n - 4, rp_crc32c(0, g.p, g.n - 4));
    r = hostile("hdr-minor", &g);
    CHECK(r.opened && r.ndiag == 0, "a newer minor is read");
    g = F;
    rp_put_le32(g.p + 12, 5);
    r = hostile("hdr-len-small", &g);
    CHECK(!r.opened && r.nfatal == 1, "header length 5: %s", r.first);
    g = F;
    rp_put_le32(g.p + 12, 0xffffffffu);
    r = hostile("hdr-len-huge", &g);
    CHECK(!r.opened && r.nfatal == 1, "header length 4 GiB: %s", r.first);
    g = F;
    rp_put_le32(g.p + 12, (uint32_t)g.n + 100);
    r = hostile("hdr-len-past-eof", &g);
    CHECK(!r.opened && r.nfatal == 1, "header longer than the file: %s", r.first);
    g = F;
    g.p[g.n - 1] ^= 1;
    r = hostile("hdr-crc", &g);
    CHECK(!r.opened && r.nfatal == 1 && strstr(r.first, "checksum"), "crc: %s", r.first);
    g = F;
    g.p[16] = 0x7f;   /* key length beyond the header, crc recomputed */
    rp_put_le32(g.p + g.n - 4, rp_crc32c(0, g.p, g.n - 4));
    r = hostile("hdr-meta", &g);
    CHECK(!r.opened && r.nfatal == 1 && strstr(r.first, "metadata"), "meta: %s", r.first);
    g.n = 0;
    r = hostile("hdr-empty", &g);
    CHECK(!r.opened && r.nfatal == 1, "empty file: %s", r.first);
    memset(&r, 0, sizeof r);
    struct rp_reader *rd = rp_reader_open(dir, run_diag, &r);   /* a directory */
    CHECK(!rd && r.nfatal == 1, "a directory is refused: %s", r.first);
    rd = rp_reader_open("/nonexistent/x.rpc", run_diag, &r);
    CHECK(!rd && r.nfatal == 2, "a missing file is refused");
}

static void test_segments(void)
{
    struct got g;

    /* Baseline: the hand-made records are right. */
    add_header(&F);
    P.n = 0;
    P.nrec = 0;
    basics(&P);
    two_samples(&P);
    add_segment(&F, &P, 0, NULL);
    g = hostile_samples("base", &F);
    CHECK(g.samples == 2 && g.first_time == 1005 && g.first_weight == 10 &&
          g.r.ndiag == 0 && g.r.st.unresolved_refs == 0, "baseline: %s", g.r.first);

    /* Huge raw_len (with a valid header crc), then a good segment. */
    struct {
        const char *name;
        struct segopt o;
    } lens[] = {
        {"raw-4g", {.set_raw = 1, .raw_len = 0xffffffffu}},
        {"raw-max+1", {.set_raw = 1, .raw_len = RP_SEG_MAX_RAW + 1}},
        {"comp-4g", {.set_comp = 1, .comp_len = 0xffffffffu}},
        {"raw-short", {.set_raw = 1, .raw_len = 3}},
        {"raw-long", {.set_raw = 1, .raw_len = 1000}},
        {"no-checksum", {.no_checksum = 1}},
        {"no-size", {.no_size = 1}},
        {"trailing", {.trailing = 1}},
    };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        add_header(&F);
        add_segment(&F, &P, 0, &lens[i].o);
        add_segment(&F, &P, 1, NULL);
        g = hostile_samples(lens[i].name, &F);
        CHECK(g.r.opened && g.r.st.segments_bad == 1 && g.r.st.segments_ok == 1 &&
              g.samples == 2 && g.r.ndiag >= 1,
              "%s: bad=%llu ok=%llu samples=%llu (%s)", lens[i].name,
              (unsigned long long)g.r.st.segments_bad, (unsigned long long)g.r.st.segments_ok,
              (unsigned long long)g.samples, g.r.first);
    }

    /* comp_len past the end of the file (but plausible): a partial segment. */
    add_header(&F);
    add_segment(&F, &P, 0, NULL);
    F.n -= 5;
    g = hostile_samples("comp-past-eof", &F);
    CHECK(g.r.st.segments_partial == 1 && g.r.st.segments_bad == 0 && g.samples == 0,
          "cut payload is partial");

    /* Garbage, a fake "RSEG" with a bad crc, then a good segment. */
    add_header(&F);
    memset(F.p + F.n, '.', 64);
    memcpy(F.p + F.n + 8, "RSEG", 4);
    F.n += 64;
    add_segment(&F, &P, 0, NULL);
    g = hostile_samples("resync", &F);
    CHECK(g.samples == 2 && g.r.st.segments_bad == 1 && g.r.st.bytes_skipped == 64,
          "resync over garbage: skipped %llu", (unsigned long long)g.r.st.bytes_skipped);

    /* Data after the last segment. */
    add_header(&F);
    add_segment(&F, &P, 0, &(struct segopt){.flags = RP_SEG_LAST});
    add_segment(&F, &P, 1, NULL);
    g = hostile_samples("after-last", &F);
    CHECK(g.samples == 2 && g.r.st.clean_close && g.r.ndiag == 1 &&
          g.r.st.bytes_skipped > 0, "data after the last segment ignored");
}

/* One payload after `basics`, in its own file; @return what the reader made of it. */
static struct got payload_case(const char *name, void (*build)(struct bb *))
{
    add_header(&F);
    P.n = 0;
    P.nrec = 0;
    basics(&P);
    build(&P);
    two_samples(&P);      /* a good record after the bad one still counts */
    add_segment(&F, &P, 0, NULL);
    return hostile_samples(name, &F);
}

static void b_body_past(struct bb *b)
{
    bb_u8(b, RP_REC_STRING);
    bb_v(b, 1000);
    bb_raw(b, "ab", 2);
}
static void b_len_overlong(struct bb *b)
{
    bb_u8(b, RP_REC_STRING);
    for (int i = 0; i < 10; i++)
        bb_u8(b, 0x80);
    bb_u8(b, 0x01);
}
static void b_varint11(struct bb *b)
{
    bb_u8(b, RP_REC_STRING);
    bb_v(b, 12);
    for (int i = 0; i < 10; i++)
        bb_u8(b, 0xff);
    bb_u8(b, 0x01);
    bb_u8(b, 'x');
    b->nrec++;
}
static void b_varint_bit64(struct bb *b)
{
    bb_u8(b, RP_REC_COUNTER);
    bb_v(b, 11);
    bb_u8(b, 1);
    for (int i = 0; i < 9; i++)
        bb_u8(b, 0xff);
    bb_u8(b, 0x02);   /* tenth byte > 1: bit 64 */
    b->nrec++;
}
static void b_id_huge(struct bb *b) { rec_string(b, 4000000000u, "x"); }
static void b_id_64(struct bb *b) { rec_string(b, 1ull << 40, "x"); }
static void b_id_slack(struct bb *b)
{
    rec_string(b, 2 * 1 + RP_POOL_ID_SLACK, "ok");        /* 1 string defined so far */
    rec_string(b, 2 * 2 + RP_POOL_ID_SLACK + 1, "no");    /* now 2 defined           */
}
static void b_dup(struct bb *b) { rec_string(b, 1, "other"); }
static void b_stack_n(struct bb *b) { REC(b, RP_REC_STACK, 1, 0, 1000, 1, 1); }
static void b_stack_n4g(struct bb *b) { REC(b, RP_REC_STACK, 1, 0, 0xffffffffu, 1); }
static void b_samples_count(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 1, 1, 1000, 0, 10, 0, 0, 0, 0, 0);
}
static void b_samples_count64(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 1, 1, 1ull << 62, 0, 10, 0, 0, 0);
}
static void b_samples_short(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 1, 1, 3, 0, 10, 0, 0, 0, 0, 0, 0);   /* third is cut */
}
static void b_samples_mode3(struct bb *b) { REC(b, RP_REC_SAMPLES, 1, 1, 1, 0, 10, 0, 3, 0); }
static void b_samples_ovf(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 1, 1, 1, 0, 1ull << 40, 0, 1, 1ull << 40, 0);
}
static void b_samples_nextra(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 1, 1, 1, 0, 10, 1ull << 60, 0, 0, 1, 2);
}
static void b_kind_nextra(struct bb *b) { REC(b, RP_REC_KIND, 2, 1, 0, 10, 1ull << 60, 1); }
static void b_unknown(struct bb *b)
{
    REC(b, 200, 1, 2, 3);
    REC(b, 0, 9);
}
static void b_trailing_fields(struct bb *b)
{
    REC(b, RP_REC_COUNTER, 1, 5, 77, 88);   /* a field from a newer minor */
}
static void b_unresolved(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 9, 9, 1, 0, 10, 0, 0, 9);   /* kind, thread, stack unknown */
}
static void b_frame_type(struct bb *b)
{
    REC(b, RP_REC_FRAME, 1, 0, 250, 0, 0);
}
/* Virtual threads (format 1.1): a VTHREAD and a sample on it; a rename; ids
 * that stop short of the samples; an id never defined; an id past the slack. */
static void b_vt_ok(struct bb *b)
{
    REC(b, RP_REC_VTHREAD, 1, 35, 1, 0);
    REC(b, RP_REC_VTHREAD, 1, 35, 0, 0);      /* a rename, not a duplicate */
    REC(b, RP_REC_SAMPLES, 1, 1, 2, 0, 10, 0, 0, 0, 0, 0, 1, 0);
}
static void b_vt_cut(struct bb *b)
{
    REC(b, RP_REC_VTHREAD, 1, 35, 1, 0);
    REC(b, RP_REC_SAMPLES, 1, 1, 2, 0, 10, 0, 0, 0, 0, 0, 1);
}
static void b_vt_unresolved(struct bb *b)
{
    REC(b, RP_REC_SAMPLES, 1, 1, 1, 0, 10, 0, 0, 0, 9);
}
static void b_vt_id_huge(struct bb *b) { REC(b, RP_REC_VTHREAD, 1ull << 40, 35, 1, 0); }

static void test_records(void)
{
    struct {
        const char *name;
        void (*build)(struct bb *);
        uint64_t bad, unknown, unresolved;
        uint64_t samples;
    } cases[] = {
        {"body-past-segment", b_body_past, 1, 0, 0, 0},  /* eats the rest */
        {"len-varint-11", b_len_overlong, 1, 0, 0, 0},
        {"varint-11", b_varint11, 1, 0, 0, 2},
        {"varint-bit64", b_varint_bit64, 1, 0, 0, 2},
        {"id-4e9", b_id_huge, 1, 0, 0, 2},
        {"id-2^40", b_id_64, 1, 0, 0, 2},
        {"id-slack", b_id_slack, 1, 0, 0, 2},
        {"id-duplicate", b_dup, 1, 0, 0, 2},
        {"stack-n-past-body", b_stack_n, 1, 0, 0, 2},
        {"stack-n-4g", b_stack_n4g, 1, 0, 0, 2},
        {"samples-count-past-body", b_samples_count, 1, 0, 0, 2},
        {"samples-count-2^62", b_samples_count64, 1, 0, 0, 2},
        {"samples-cut", b_samples_short, 1, 0, 0, 2},
        {"samples-mode-3", b_samples_mode3, 1, 0, 0, 2},
        {"samples-weight-overflow", b_samples_ovf, 1, 0, 0, 2},
        {"samples-nextra-huge", b_samples_nextra, 1, 0, 0, 2},
        {"kind-nextra-huge", b_kind_nextra, 1, 0, 0, 2},
        {"unknown-types", b_unknown, 0, 2, 0, 2},
        {"trailing-fields", b_trailing_fields, 0, 0, 0, 2},
        {"unresolved", b_unresolved, 0, 0, 3, 3},
        {"frame-type-new", b_frame_type, 0, 0, 0, 2},
        {"vthread-samples", b_vt_ok, 0, 0, 0, 4},
        {"vthread-ids-cut", b_vt_cut, 1, 0, 0, 2},
        {"vthread-unresolved", b_vt_unresolved, 0, 0, 1, 3},
        {"vthread-id-2^40", b_vt_id_huge, 1, 0, 0, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct got g = payload_case(cases[i].name, cases[i].build);
        CHECK(g.r.opened && g.r.st.segments_ok == 1 &&
              g.r.st.records_bad == cases[i].bad &&
              g.r.st.records_unknown == cases[i].unknown &&
              g.r.st.unresolved_refs == cases[i].unresolved &&
              g.samples == cases[i].samples && g.r.ndiag >= (int)(cases[i].bad > 0),
              "%s: bad=%llu unknown=%llu unresolved=%llu samples=%llu (%s)",
              cases[i].name, (unsigned long long)g.r.st.records_bad,
              (unsigned long long)g.r.st.records_unknown,
              (unsigned long long)g.r.st.unresolved_refs, (unsigned long long)g.samples,
              g.r.first);
    }

    /* Many bad records in one segment: a few reported, the rest summed in one line. */
    add_header(&F);
    P.n = 0;
    P.nrec = 0;
    basics(&P);
    for (int i = 0; i < 20; i++)
        b_dup(&P);
    add_segment(&F, &P, 0, NULL);
    struct got many = hostile_samples("many-bad", &F);
    CHECK(many.r.st.records_bad == 20 && many.r.ndiag == 9,
          "20 bad records: %llu counted, %d diagnostics",
          (unsigned long long)many.r.st.records_bad, many.r.ndiag);

    /* The slack rule: the id at the limit is defined, the one past it is not; a
     * string whose definition was refused stays undefined, the first of a
     * duplicate stands, and an unknown frame type reads as native. */
    add_header(&F);
    P.n = 0;
    P.nrec = 0;
    basics(&P);
    b_id_slack(&P);
    b_dup(&P);
    b_frame_type(&P);
    add_segment(&F, &P, 0, NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/slack.rpc", dir);
    write_file(path, F.p, F.n);
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    REQUIRE(r != NULL, "open");
    struct rp_event ev;
    while (rp_reader_next(r, &ev))
        ;
    CHECK(rp_reader_string(r, 2 + RP_POOL_ID_SLACK) &&
          strcmp(rp_reader_string(r, 2 + RP_POOL_ID_SLACK), "ok") == 0, "id at the limit");
    CHECK(rp_reader_string(r, 5 + RP_POOL_ID_SLACK) == NULL, "id past the limit");
    CHECK(strcmp(rp_reader_string(r, 1), "cpu") == 0, "first definition stands");
    const struct rp_frame_info *fi = rp_reader_frame(r, 1);
    CHECK(fi && fi->type == RP_FRAME_NATIVE, "unknown frame type reads as native");
    rp_reader_close(r);
    unlink(path);
}

/*
 * Hostile payloads behind valid checksums: a payload with every record type is
 * mutated (random bytes set, inserted or deleted) and framed as a sound segment,
 * followed by an intact one. Whatever the first holds, the reader must neither
 * crash nor stall, must point its diagnostics inside the file, and must still
 * deliver the second segment's samples exactly.
 */
static void test_payload_fuzz(int trials)
{
    struct bb base = {0};
    basics(&base);
    rec_string(&base, 2, "lost.ring_full");
    REC(&base, RP_REC_CLASS, 1, 1);
    REC(&base, RP_REC_METHOD, 1, 1, 1, 2, 0, 0);
    REC(&base, RP_REC_FRAME, 1, 1, 1, 8, 42);
    REC(&base, RP_REC_STACK, 1, 0, 3, 1, 1, 1);
    REC(&base, RP_REC_KIND, 2, 2, 1, 0, 2, 1, 2);
    REC(&base, RP_REC_SAMPLES, 2, 1, 2, rp_zigzag_enc(-5), 0, 2, 2, 7, 1, 3, 4,
        5 << 2 | 2, 9, 1, 0, 0);
    two_samples(&base);
    REC(&base, RP_REC_COUNTER, 2, 3);
    REC(&base, RP_REC_THREAD_CPU, 1, 4, 5);
    REC(&base, RP_REC_GAUGE, 2, 6, 7);
    struct bb good = {0};
    two_samples(&good);

    /* Unmutated, the payload is sound: 2 + 2 samples, nothing to report. */
    add_header(&F);
    add_segment(&F, &base, 0, NULL);
    struct got g0 = hostile_samples("fuzz-base", &F);
    CHECK(g0.samples == 4 && g0.r.ndiag == 0 && g0.r.st.unresolved_refs == 0,
          "fuzz base: %llu samples (%s)", (unsigned long long)g0.samples, g0.r.first);

    uint64_t seed = 0x1234567887654321ull;
    char path[128];
    snprintf(path, sizeof path, "%s/fuzz.rpc", dir);
    int failures = 0;
    for (int trial = 0; trial < trials; trial++) {
        struct bb *m = &P;
        *m = base;
        int muts = 1 + (int)(rnd(&seed) % 4);
        for (int i = 0; i < muts; i++) {
            size_t at = rnd(&seed) % m->n;
            uint8_t v = (uint8_t)rnd(&seed);
            switch (rnd(&seed) % 4) {
            case 0:
            case 1:
                m->p[at] = v;
                break;
            case 2:
                memmove(m->p + at + 1, m->p + at, m->n - at);
                m->p[at] = v;
                m->n++;
                break;
            default:
                memmove(m->p + at, m->p + at + 1, m->n - at - 1);
                m->n--;
                break;
            }
        }
        add_header(&F);
        add_segment(&F, m, 0, NULL);
        add_segment(&F, &good, 1, NULL);
        write_file(path, F.p, F.n);

        struct run r;
        memset(&r, 0, sizeof r);
        struct rp_reader *rd = rp_reader_open(path, run_diag, &r);
        REQUIRE(rd != NULL, "open");
        struct rp_event ev;
        uint64_t events = 0, last[2] = {0, 0}, lastw[2] = {0, 0};
        int seg = -1, in_good = 0;
        while (rp_reader_next(rd, &ev) && ++events < 100000) {
            if (ev.type == RP_EV_SEGMENT)
                seg = (int)ev.u.seg.seq;
            if (ev.type == RP_EV_SAMPLE && seg == 1 && in_good < 2) {
                last[in_good] = ev.u.sample.time;
                lastw[in_good++] = ev.u.sample.weight;
            }
        }
        rp_reader_stats(rd, &r.st);
        rp_reader_close(rd);
        int before = check_failed;
        CHECK(events < 100000, "fuzz %d: the reader does not stop", trial);
        CHECK(r.ndiag == 0 || r.max_off < F.n, "fuzz %d: diag offset %llu", trial,
              (unsigned long long)r.max_off);
        CHECK(r.st.segments_ok == 2 && in_good == 2 && last[0] == 1005 && last[1] == 1008 &&
              lastw[0] == 10 && lastw[1] == 30, "fuzz %d: the intact segment suffered",
              trial);
        if (check_failed > before && ++failures > 5)
            break;
    }
    unlink(path);
}

/* The codecs under everything: CRC-32C's check value, varints at their edges. */
static void test_primitives(void)
{
    CHECK(rp_crc32c(0, "123456789", 9) == 0xE3069283u, "crc32c check value");
    CHECK(rp_crc32c(rp_crc32c(0, "1234", 4), "56789", 5) == 0xE3069283u, "incremental");
    CHECK(rp_crc32c(0, "", 0) == 0, "empty");

    const uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, (1ull << 35) - 1,
                             1ull << 35, (1ull << 56) - 1, 1ull << 56, 1ull << 63,
                             UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint8_t a[16], b[16];
        memset(a, 0xee, sizeof a);
        memset(b, 0xee, sizeof b);
        size_t la = rp_varint_put(a, vals[i]), lb = rp_varint_put_fast(b, vals[i]);
        CHECK(la == lb && la == rp_varint_len(vals[i]) && memcmp(a, b, la) == 0,
              "fast and plain encoders agree on %llu", (unsigned long long)vals[i]);
        CHECK(la <= RP_VARINT_MAX && a[la] == 0xee, "plain writes only its bytes");
        const uint8_t *q = a;
        uint64_t v;
        CHECK(rp_varint_get(&q, a + la, &v) == 0 && v == vals[i] && q == a + la,
              "round trip %llu", (unsigned long long)vals[i]);
        q = a;
        CHECK(la == 1 || rp_varint_get(&q, a + la - 1, &v) < 0, "a cut varint fails");
        CHECK(q == a, "a failed decode leaves the cursor");
        int64_t sv = (int64_t)vals[i];
        int64_t neg = sv == INT64_MIN ? INT64_MAX : -sv;
        CHECK(rp_zigzag_dec(rp_zigzag_enc(sv)) == sv &&
              rp_zigzag_dec(rp_zigzag_enc(neg)) == neg, "zigzag %lld", (long long)sv);
    }
    CHECK(rp_zigzag_enc(-1) == 1 && rp_zigzag_enc(1) == 2 && rp_zigzag_enc(INT64_MIN) ==
          UINT64_MAX, "zigzag mapping");
    uint8_t over[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    const uint8_t *q = over;
    uint64_t v;
    CHECK(rp_varint_get(&q, over + 11, &v) < 0, "11-byte varint rejected");
    uint8_t bit64[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    q = bit64;
    CHECK(rp_varint_get(&q, bit64 + 10, &v) < 0, "bit 64 rejected");
    uint8_t big32[5] = {0x80, 0x80, 0x80, 0x80, 0x10};
    uint32_t v32;
    q = big32;
    CHECK(rp_varint_get32(&q, big32 + 5, &v32) < 0 && q == big32, "2^32 is not 32-bit");
    uint8_t nonmin[2] = {0x80, 0x00};
    q = nonmin;
    CHECK(rp_varint_get(&q, nonmin + 2, &v) == 0 && v == 0, "non-minimal accepted");
    uint8_t room[3];
    CHECK(rp_varint_put_checked(room, room + 3, 1u << 21) == 0 &&
          rp_varint_put_checked(room, room + 3, (1u << 21) - 1) == 3, "bounded encoder");
}

/* ------------------------------------------------------- (d) the limits -- */

struct ldiag {
    const char *want;        /* a reason to count                              */
    int n, matched;
    char first[200];
};

static void limits_diag(void *arg, const char *path, uint64_t off, const char *reason,
                        int fatal)
{
    struct ldiag *d = arg;
    (void)path;
    (void)off;
    (void)fatal;
    if (!d->n++)
        snprintf(d->first, sizeof d->first, "%s", reason);
    d->matched += d->want && strstr(reason, d->want) != NULL;
}

/* Write `f`, read it through; the reader is returned open (its pools are kept)
 * with its diagnostics in *d. */
static struct rp_reader *read_built(const char *name, const struct cb_buf *f,
                                    struct ldiag *d, struct rp_reader_stats *st)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.rpc", dir, name);
    REQUIRE(cb_write(f, path) == 0, "%s: %s", path, strerror(errno));
    struct rp_reader *r = rp_reader_open(path, limits_diag, d);
    REQUIRE(r != NULL, "%s: %s", name, d->first);
    struct rp_event ev;
    while (rp_reader_next(r, &ev))
        ;
    rp_reader_stats(r, st);
    unlink(path);
    return r;
}

static void test_limits(void)
{
    struct cb_buf f = {0}, p = {0};
    struct rp_reader_stats st;

    /* A string at RP_CHUNK_STRING_MAX is read; one byte more is refused. */
    cb_header(&f, NULL);
    cb_string(&p, 1, "cpu", 3, 0);
    cb_string(&p, 2, NULL, RP_CHUNK_STRING_MAX, 'x');
    cb_string(&p, 3, NULL, RP_CHUNK_STRING_MAX + 1, 'y');
    cb_segment(&f, &p, 0, RP_SEG_LAST);
    struct ldiag d = {"RP_CHUNK_STRING_MAX"};
    struct rp_reader *r = read_built("string-max", &f, &d, &st);
    size_t len = 0;
    CHECK(rp_reader_string_len(r, 2, &len) && len == RP_CHUNK_STRING_MAX &&
          !rp_reader_string(r, 3) && st.records_bad == 1 && d.matched == 1,
          "string limit: 1 MiB read (%zu), 1 MiB + 1 refused (%s, %llu bad)", len,
          d.first, (unsigned long long)st.records_bad);
    rp_reader_close(r);

    /* A stack of RP_CHUNK_STACK_MAX frames is read; one frame more is refused. */
    p.n = p.nrec = 0;
    CB_REC(&p, RP_REC_FRAME, 1, 0, RP_FRAME_JIT, 0, 0);
    for (uint32_t id = 1; id <= 2; id++) {
        struct cb_buf body = {0};
        uint32_t n = RP_CHUNK_STACK_MAX + id - 1;
        cb_v(&body, id);
        cb_v(&body, 0);
        cb_v(&body, n);
        cb_fill(&body, 1, n);   /* n times frame 1 */
        cb_record(&p, RP_REC_STACK, &body);
        cb_free(&body);
    }
    cb_header(&f, NULL);
    cb_segment(&f, &p, 0, RP_SEG_LAST);
    d = (struct ldiag){"RP_CHUNK_STACK_MAX"};
    r = read_built("stack-max", &f, &d, &st);
    uint32_t n = 0, flags;
    const uint32_t *fr = rp_reader_stack(r, 1, &n, &flags);
    CHECK(fr && n == RP_CHUNK_STACK_MAX && fr[n - 1] == 1 &&
          !rp_reader_stack(r, 2, NULL, NULL) && st.records_bad == 1 && d.matched == 1 &&
          st.unresolved_refs == 0,
          "stack limit: 1 Mi frames read (%u), one more refused (%s)", n, d.first);
    rp_reader_close(r);

    /* Five segments of 60 strings of 1 MiB, 250 KB each in the file: the pools
     * fill to their budget at each segment, and never pass it. */
    cb_header(&f, NULL);
    uint64_t id = 1;
    for (uint32_t seg = 0; seg < 5; seg++) {
        p.n = p.nrec = 0;
        for (int i = 0; i < 60; i++)
            cb_string(&p, id++, NULL, RP_CHUNK_STRING_MAX, (uint8_t)('a' + seg));
        cb_segment(&f, &p, seg, seg == 4 ? RP_SEG_LAST : 0);
    }
    d = (struct ldiag){"memory budget"};
    r = read_built("budget", &f, &d, &st);
    uint64_t kept = 0;
    uint64_t budget = RP_READER_POOL_FACTOR * (uint64_t)f.n + RP_READER_POOL_SLACK;
    for (uint64_t i = 1; i < id; i++)
        kept += rp_reader_string_len(r, (uint32_t)i, &len) ? len : 0;
    CHECK(kept <= budget && kept + 2 * RP_CHUNK_STRING_MAX >= budget &&
          st.records_bad == (id - 1) - kept / RP_CHUNK_STRING_MAX && d.matched >= 5 &&
          d.matched <= 5 * 8,
          "budget: %llu bytes of strings kept from a %zu-byte file, budget %llu; %llu "
          "refused, %d reported (%s)", (unsigned long long)kept, f.n,
          (unsigned long long)budget, (unsigned long long)st.records_bad, d.matched,
          d.first);
    rp_reader_close(r);

    /* raw_len over 256 times comp_len: refused as forged, and the good segment
     * after it is read. */
    p.n = p.nrec = 0;
    cb_string(&p, 1, "cpu", 3, 0);
    cb_header(&f, NULL);
    size_t at = f.n;
    cb_segment(&f, &p, 0, 0);
    uint8_t *h = f.p + at;
    rp_put_le32(h + 12, 256 * rp_get_le32(h + 16) + 1);
    rp_put_le32(h + 44, rp_crc32c(0, h, 44));
    cb_segment(&f, &p, 1, RP_SEG_LAST);
    d = (struct ldiag){"raw_len too large for its comp_len"};
    r = read_built("lz4-ratio", &f, &d, &st);
    CHECK(st.segments_bad == 1 && st.segments_ok == 1 && d.matched == 1 &&
          rp_reader_string(r, 1), "raw_len of 256 x comp_len + 1 refused (%s)", d.first);
    rp_reader_close(r);

    /* References to undefined ids: counted each, reported once per segment. */
    cb_header(&f, NULL);
    for (uint32_t seg = 0; seg < 2; seg++) {
        p.n = p.nrec = 0;
        if (!seg) {
            cb_string(&p, 1, "cpu", 3, 0);
            CB_REC(&p, RP_REC_KIND, 1, 1, 0, 10, 0);
        }
        /* kind 1, thread 7, 3 (then 2) samples of stack 9, and nothing after
         * them: bytes left would be read as the samples' VTHREAD ids */
        if (!seg)
            CB_REC(&p, RP_REC_SAMPLES, 1, 7, 3, 0, 10, 0, 0, 9, 0, 9, 0, 9);
        else
            CB_REC(&p, RP_REC_SAMPLES, 1, 7, 2, 0, 10, 0, 0, 9, 0, 9);
        cb_segment(&f, &p, seg, seg ? RP_SEG_LAST : 0);
    }
    d = (struct ldiag){"never defined"};
    r = read_built("unresolved", &f, &d, &st);
    CHECK(st.unresolved_refs == 3 + 1 + 2 + 1 && d.matched == 2 && st.samples == 5,
          "undefined ids: %llu references, %d lines (%s)",
          (unsigned long long)st.unresolved_refs, d.matched, d.first);
    rp_reader_close(r);
    cb_free(&f);
    cb_free(&p);
}

int main(void)
{
    /* Thousands of small files are written and read: tmpfs keeps that off the disk. */
    snprintf(dir, sizeof dir, "%s/rp_test_damage.XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    char *made = mkdtemp(dir);
    REQUIRE(made != NULL, "mkdtemp: %s", strerror(errno));
    char path[128], scratch[128];
    snprintf(path, sizeof path, "%s/orig.rpc", dir);
    snprintf(scratch, sizeof scratch, "%s/scratch.rpc", dir);
    test_primitives();
    build_chunk(path);
    orig = slurp(path, &orig_len);
    printf("chunk: %zu bytes, %d segments\n", orig_len, NSEG);

    test_intact(path);
    test_truncation(scratch);
    const char *env = getenv("RP_DAMAGE_TRIALS");
    test_flips(scratch, env ? atoi(env) : 3000);
    test_headers();
    test_segments();
    test_records();
    test_payload_fuzz(env ? atoi(env) : 3000);
    test_limits();

    if (!getenv("RP_DAMAGE_KEEP")) unlink(path);
    if (!getenv("RP_DAMAGE_KEEP")) unlink(scratch);
    if (!getenv("RP_DAMAGE_KEEP")) rmdir(dir);
    for (int s = 0; s < NSEG; s++)
        free(truth[s]);
    free(orig);
    return check_exit("test_chunk_damage");
}
