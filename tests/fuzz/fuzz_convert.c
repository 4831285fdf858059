/*
 * tests/fuzz/fuzz_convert.c — the `ringprof` tool on hostile chunk files, in-process.
 *
 * The input is a chunk file. It goes through the subcommands exactly as the
 * command line would call them (tools/commands/commands.h: argv in, exit status out):
 * `convert` in every output format, with the options that switch on the other
 * code paths (per-thread trees, lines and bcis, cutoff, time range, regex
 * filters, the alloc and live kinds with their snapshots, sample counts instead
 * of weights, wall samples by thread state, lock samples, frames grouped by
 * class and package), then `summary`, `leaks`, `locks` (text and JSON) and
 * `diff` (the file against itself, and two windows of it). Output goes to
 * /dev/null (stdout is redirected once, at start-up); --quiet keeps the readers'
 * diagnostics off stderr.
 *
 * The jfr format (tools/outputs/out_jfr.c) writes with `-o` into a memfd ("%"
 * below), which is then read back as a JFR reader would (tools/outputs/jfr.h):
 * when convert exits 0 the file must be one JFR chunk. The header's magic,
 * version 2.0 and size (the file's); events framed end to end from byte 68 to
 * that size, the checkpoint and metadata offsets at event starts of types 1 and
 * 0, the metadata last; then, with the types the metadata event describes, every
 * event's fields read in their declared order, each at its type's width as the
 * JDK writes it (an int a varint of 5 bytes and 32 bits at most, a short or char
 * of 3 and 16, a boolean 0 or 1), end exactly at the event's end,
 * every event's type is described, the checkpoint's pools are not empty (the
 * JDK's reader refuses an empty one) and their entries end at the checkpoint's
 * end, and every constant-pool reference (an id other than 0) names an entry of
 * its type's pool.
 *
 * Besides what ASan and UBSan catch, the tool must answer every input with exit
 * status 0 or 1 (docs: 1 is "nothing could be read" or damage under --strict).
 * The argv here is always valid, so a 2 (usage error) means the tool mistook
 * bad input for bad usage. A tool that exited or aborted on bad input would end
 * the fuzzer's process: libFuzzer reports that as a crash too ("fuzz target
 * exited").
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "../../tools/commands/commands.h"
#include "fuzz_common.h"

#define MAXARGS 16

/* One command line per row; "@" is replaced by the input's path, "%" by the
 * JFR output's (checked after the run). */
static const char *const runs[][MAXARGS] = {
    {"convert", "--quiet", "--format", "tree", "@"},
    {"convert", "--quiet", "--format", "tree", "--per-thread", "--lines", "--cutoff", "1",
     "@"},
    {"convert", "--quiet", "--format", "tree", "--from", "+0.1s", "--to", "-0.1s", "@"},
    {"convert", "--quiet", "--format", "backtrace", "--top", "3", "@"},
    {"convert", "--quiet", "--format", "backtrace", "--method", "a", "--bci", "@"},
    {"convert", "--quiet", "--format", "flat", "@"},
    {"convert", "--quiet", "--format", "flat", "--event", "alloc", "@"},
    {"convert", "--quiet", "--format", "flat", "--event", "live", "--snapshot", "first",
     "@"},
    {"convert", "--quiet", "--format", "histogram", "@"},
    {"convert", "--quiet", "--format", "collapsed", "--value", "samples", "--include",
     "[a-m]", "--exclude", "Z", "--thread", ".", "@"},
    {"convert", "--quiet", "--format", "collapsed", "--event", "live", "@"},
    {"convert", "--quiet", "--format", "pprof", "@"},
    {"convert", "--quiet", "--format", "pprof", "--event", "alloc", "@"},
    {"convert", "--quiet", "--format", "otlp", "--service", "fuzz", "--label", "k=v", "@"},
    {"convert", "--quiet", "--format", "html", "@"},
    {"summary", "--quiet", "--chunks", "--threads", "5", "@"},
    {"leaks", "--quiet", "--all", "@"},
    {"leaks", "--quiet", "--json", "--by", "method", "--from", "+0s", "@"},
    /* issue 9: wall and lock kinds, thread states, the locks report */
    {"convert", "--quiet", "--format", "collapsed", "--state", "blocked,parked",
     "--state-frames", "@"},
    {"convert", "--quiet", "--format", "flat", "--event", "lock", "@"},
    {"locks", "--quiet", "@"},
    {"locks", "--quiet", "--json", "--stacks", "1", "@"},
    {"convert", "--quiet", "--format", "tree", "--group", "package", "--hidden-classes",
     "strip", "@"},
    {"convert", "--quiet", "--format", "collapsed", "--group", "class", "--lines", "@"},
    {"diff", "--quiet", "--json", "--merge-frame-types", "--base-to", "+0.5s", "--from",
     "+0.5s", "@"},
    {"diff", "--quiet", "--format", "collapsed", "--normalize", "--overlap", "@", "@"},
    {"diff", "--quiet", "--format", "html", "--group", "class", "--overlap", "@", "@"},
    /* issue 17: the JFR writer, every kind; and with the filters */
    {"convert", "--quiet", "--format", "jfr", "-o", "%", "@"},
    {"convert", "--quiet", "--format", "jfr", "--from", "+0.1s", "--thread", ".",
     "--exclude", "Z", "-o", "%", "@"},
    /* issue 26: the heatmap page, every kind; one bucket width forced */
    {"convert", "--quiet", "--format", "heatmap", "@"},
    {"convert", "--quiet", "--format", "heatmap", "--resolution", "1s", "--state",
     "running", "@"},
};

static const char *jfr_path;   /* "%": a memfd of its own, /proc/self/fd/N */
static int jfr_fd = -1;

static int run(const char *const *row, const char *path)
{
    char *argv[MAXARGS + 1];
    int argc = 0;
    for (; argc < MAXARGS && row[argc]; argc++)
        argv[argc] = (char *)(!strcmp(row[argc], "@")   ? path
                              : !strcmp(row[argc], "%") ? jfr_path
                                                        : row[argc]);
    argv[argc] = NULL;
    rp_cmd_fn fn = !strcmp(row[0], "convert") ? rp_cmd_convert
                 : !strcmp(row[0], "summary") ? rp_cmd_summary
                 : !strcmp(row[0], "locks") ? rp_cmd_locks
                 : !strcmp(row[0], "diff") ? rp_cmd_diff : rp_cmd_leaks;
    return fn(argc, argv);
}

/* --------------------------------------------------- reading the JFR back -- */

enum prim { P_STRUCT, P_BYTE, P_BOOL, P_SHORT, P_INT, P_LONG, P_FLOAT, P_DOUBLE, P_STRING };
struct jfield { uint64_t type; int cp, array; };
struct jclass { uint64_t id; enum prim prim; size_t first, n; };
struct ref { uint64_t type, id; };

struct jfr_reader {
    const uint8_t *p;
    size_t at, end;             /* the cursor, the end of the current event     */
    const char *bad;            /* the first problem, NULL: none                */
    size_t bad_at;
    char **str;         size_t nstr;
    struct jclass *cls; size_t ncls;
    struct jfield *fld; size_t nfld;
    struct ref *refs;   size_t nrefs;
    struct ref *defs;   size_t ndefs;
};

static void fail(struct jfr_reader *r, const char *why)
{
    if (!r->bad) {
        r->bad = why;
        r->bad_at = r->at;
    }
    r->at = r->end;
}

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static void *grow(void *p, size_t n, size_t size)
{
    p = (n & (n - 1)) ? p : realloc(p, (n ? 2 * n : 1) * size);   /* at powers of 2 */
    FUZZ_CHECK(p, "out of memory");
    return p;
}

/* A varint (the 9th byte whole) within the current event. */
static uint64_t rd(struct jfr_reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 9; i++) {
        if (r->at >= r->end) {
            fail(r, "a value runs past its event's end");
            return 0;
        }
        uint8_t b = r->p[r->at++];
        if (i == 8)
            return v | (uint64_t)b << 56;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            return v;
    }
    return v;
}

/* A varint of an integer type: at most `bytes` bytes and `bits` bits. */
static void rd_width(struct jfr_reader *r, size_t bytes, int bits)
{
    size_t at = r->at;
    uint64_t v = rd(r);
    if (!r->bad && (r->at - at > bytes || (bits < 64 && v >> bits))) {
        r->at = at;
        fail(r, "an integer wider than its type (an int over 5 bytes or 32 bits, ...)");
    }
}

static void skip(struct jfr_reader *r, uint64_t n)
{
    if (n > r->end - r->at)
        fail(r, "a value runs past its event's end");
    else
        r->at += n;
}

/* A string value (encodings: 0 null, 1 empty, 2 pool id, 3 UTF-8, 4 char
 * array, 5 Latin-1); its text when `keep` (UTF-8 and Latin-1 only). */
static char *string(struct jfr_reader *r, int keep)
{
    if (r->at >= r->end) {
        fail(r, "a string runs past its event's end");
        return NULL;
    }
    uint8_t e = r->p[r->at++];
    uint64_t n = e >= 2 ? rd(r) : 0;
    size_t from = r->at;
    if (e == 4)
        for (uint64_t i = 0; i < n && !r->bad; i++)
            rd(r);
    else if (e == 3 || e == 5)
        skip(r, n);
    else if (e > 2)
        fail(r, "a string of an unknown encoding");
    if (!keep || r->bad || (e != 3 && e != 5))
        return NULL;
    char *t = malloc(n + 1);
    FUZZ_CHECK(t, "out of memory");
    memcpy(t, r->p + from, n);
    t[n] = 0;
    return t;
}

static const char *str_at(const struct jfr_reader *r, uint64_t i)
{
    return i < r->nstr && r->str[i] ? r->str[i] : "";
}

static const struct jclass *class_of(const struct jfr_reader *r, uint64_t id)
{
    for (size_t i = 0; i < r->ncls; i++)
        if (r->cls[i].id == id)
            return &r->cls[i];
    return NULL;
}

/* One element of the metadata tree and its children; `cls`: the index of the
 * class element it is in, SIZE_MAX for none. */
static void element(struct jfr_reader *r, size_t cls, int depth)
{
    if (depth > 16) {
        fail(r, "the metadata tree is too deep");
        return;
    }
    const char *name = str_at(r, rd(r)), *a_name = "", *a_id = "", *a_class = "",
               *a_cp = "", *a_dim = "";
    for (uint64_t i = 0, n = rd(r); i < n && !r->bad; i++) {
        const char *k = str_at(r, rd(r)), *v = str_at(r, rd(r));
        const char **slot = !strcmp(k, "name") ? &a_name : !strcmp(k, "id") ? &a_id
                          : !strcmp(k, "class") ? &a_class : !strcmp(k, "constantPool") ? &a_cp
                          : !strcmp(k, "dimension") ? &a_dim : NULL;
        if (slot)
            *slot = v;
    }
    size_t mine = SIZE_MAX;
    if (!strcmp(name, "class")) {
        static const struct { const char *name; enum prim prim; } P[] = {
            {"boolean", P_BOOL}, {"byte", P_BYTE}, {"char", P_SHORT}, {"short", P_SHORT},
            {"int", P_INT}, {"long", P_LONG}, {"float", P_FLOAT}, {"double", P_DOUBLE},
            {"java.lang.String", P_STRING}};
        r->cls = grow(r->cls, r->ncls, sizeof *r->cls);
        struct jclass *c = &r->cls[r->ncls];
        c->id = strtoull(a_id, NULL, 10);
        c->prim = P_STRUCT;
        for (size_t i = 0; i < sizeof P / sizeof P[0]; i++)
            if (!strcmp(a_name, P[i].name))
                c->prim = P[i].prim;
        c->first = r->nfld;
        c->n = 0;
        mine = r->ncls++;
    } else if (!strcmp(name, "field") && cls != SIZE_MAX) {
        r->fld = grow(r->fld, r->nfld, sizeof *r->fld);
        r->fld[r->nfld++] = (struct jfield){strtoull(a_class, NULL, 10), !strcmp(a_cp, "true"),
                                            !strcmp(a_dim, "1")};
        r->cls[cls].n++;
    }
    for (uint64_t i = 0, n = rd(r); i < n && !r->bad; i++)
        element(r, mine, depth + 1);
}

/* A value of type `type` (a pool id if `cp`). */
static void value(struct jfr_reader *r, uint64_t type, int cp, int depth)
{
    if (cp) {
        uint64_t id = rd(r);
        if (id) {
            r->refs = grow(r->refs, r->nrefs, sizeof *r->refs);
            r->refs[r->nrefs++] = (struct ref){type, id};
        }
        return;
    }
    const struct jclass *c = class_of(r, type);
    if (!c || depth > 8) {
        fail(r, c ? "values nest too deep" : "a field of a type the metadata lacks");
        return;
    }
    switch (c->prim) {
    case P_BYTE: skip(r, 1); return;
    case P_BOOL: rd_width(r, 1, 1); return;
    case P_SHORT: rd_width(r, 3, 16); return;
    case P_INT: rd_width(r, 5, 32); return;
    case P_LONG: rd(r); return;
    case P_FLOAT: skip(r, 4); return;
    case P_DOUBLE: skip(r, 8); return;
    case P_STRING: string(r, 0); return;
    case P_STRUCT: break;
    }
    for (size_t i = c->first; i < c->first + c->n && !r->bad; i++) {
        const struct jfield f = r->fld[i];
        for (uint64_t k = 0, n = f.array ? rd(r) : 1; k < n && !r->bad; k++)
            value(r, f.type, f.cp, depth + 1);
    }
}

/* The event at r->at: framed within the chunk; `type`: its type id. @return its
 * end. */
static size_t event_at(struct jfr_reader *r, size_t chunk_end, uint64_t *type)
{
    size_t start = r->at;
    r->end = chunk_end;
    uint64_t n = rd(r);
    if (!r->bad && (n < 2 || n > chunk_end - start)) {
        r->at = start;
        fail(r, "an event's size is under 2 or past the chunk's end");
    }
    r->end = r->bad ? start : start + n;
    *type = rd(r);
    return r->end;
}

static int cmp_ref(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    return x->type != y->type ? (x->type < y->type ? -1 : 1)
                              : x->id < y->id ? -1 : x->id > y->id;
}

/* The JFR file the last row wrote into jfr_fd: see the top. */
static void check_jfr(size_t row)
{
    struct stat st;
    FUZZ_CHECK(fstat(jfr_fd, &st) == 0, "fstat: %s", strerror(errno));
    size_t len = (size_t)st.st_size;
    uint8_t *p = malloc(len ? len : 1);
    FUZZ_CHECK(p && pread(jfr_fd, p, len, 0) == (ssize_t)len, "reading the jfr output");
    FUZZ_CHECK(len >= 68 && !memcmp(p, "FLR", 4) && be(p + 4, 2) == 2 && be(p + 6, 2) == 0,
               "jfr row %zu: %zu bytes, no JFR 2.0 header", row, len);
    uint64_t size = be(p + 8, 8), cp = be(p + 16, 8), meta = be(p + 24, 8);
    FUZZ_CHECK(size == len, "jfr row %zu: header size %llu, file %zu bytes", row,
               (unsigned long long)size, len);

    /* The framing, and where the checkpoint and the metadata are. */
    struct jfr_reader r = {.p = p, .at = 68};
    int seen_cp = 0, seen_meta = 0;
    size_t last = 0;
    while (r.at < len && !r.bad) {
        size_t start = r.at;
        uint64_t type;
        r.at = event_at(&r, len, &type);
        seen_cp |= start == cp && type == 1;
        seen_meta |= start == meta && type == 0;
        last = start;
    }
    FUZZ_CHECK(!r.bad, "jfr row %zu: %s (at %zu)", row, r.bad, r.bad_at);
    FUZZ_CHECK(seen_cp && seen_meta && last == meta,
               "jfr row %zu: checkpoint offset %llu (found: %d), metadata offset %llu "
               "(found: %d, last event at %zu)", row, (unsigned long long)cp, seen_cp,
               (unsigned long long)meta, seen_meta, last);

    /* The metadata: start time, duration, id, the strings, the element tree. */
    uint64_t type;
    r.at = meta;
    event_at(&r, len, &type);
    rd(&r);
    rd(&r);
    rd(&r);
    uint64_t nstr = rd(&r);
    if (nstr > r.end - r.at)
        fail(&r, "more metadata strings than bytes");
    r.str = calloc(nstr ? nstr : 1, sizeof *r.str);
    FUZZ_CHECK(r.str, "out of memory");
    for (r.nstr = 0; r.nstr < nstr && !r.bad; r.nstr++)
        r.str[r.nstr] = string(&r, 1);
    element(&r, SIZE_MAX, 0);
    if (!r.bad && r.at != r.end)
        fail(&r, "the metadata event has bytes after its tree");

    /* Every event by its type; the checkpoint's pools. */
    for (r.at = 68; r.at < meta && !r.bad;) {
        size_t end = event_at(&r, len, &type);
        if (type == 1) {
            for (int i = 0; i < 3; i++)
                rd(&r);                                 /* start, duration, delta */
            skip(&r, 1);                                /* checkpoint type        */
            for (uint64_t i = 0, n = rd(&r); i < n && !r.bad; i++) {
                uint64_t ptype = rd(&r), entries = rd(&r);
                if (!entries)
                    fail(&r, "an empty constant pool");
                if (!class_of(&r, ptype))
                    fail(&r, "a pool of a type the metadata lacks");
                for (uint64_t k = 0; k < entries && !r.bad; k++) {
                    r.defs = grow(r.defs, r.ndefs, sizeof *r.defs);
                    r.defs[r.ndefs++] = (struct ref){ptype, rd(&r)};
                    value(&r, ptype, 0, 0);
                }
            }
        } else if (type && class_of(&r, type)) {
            const struct jclass *c = class_of(&r, type);
            for (size_t i = c->first; i < c->first + c->n && !r.bad; i++)
                for (uint64_t k = 0, n = r.fld[i].array ? rd(&r) : 1; k < n && !r.bad; k++)
                    value(&r, r.fld[i].type, r.fld[i].cp, 1);
        } else {
            fail(&r, "an event of a type the metadata lacks");
        }
        if (!r.bad && r.at != end)
            fail(&r, "an event's fields end before its size says");
        r.at = end;
    }
    FUZZ_CHECK(!r.bad, "jfr row %zu: %s (at %zu)", row, r.bad, r.bad_at);

    qsort(r.defs, r.ndefs, sizeof *r.defs, cmp_ref);
    for (size_t i = 0; i < r.nrefs; i++)
        FUZZ_CHECK(bsearch(&r.refs[i], r.defs, r.ndefs, sizeof *r.defs, cmp_ref),
                   "jfr row %zu: id %llu of type %llu is in no pool", row,
                   (unsigned long long)r.refs[i].id, (unsigned long long)r.refs[i].type);
    for (size_t i = 0; i < r.nstr; i++)
        free(r.str[i]);
    free(r.str);
    free(r.cls);
    free(r.fld);
    free(r.refs);
    free(r.defs);
    free(p);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The profiles are written for real, only not kept. */
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        perror("fuzz_convert: /dev/null");
        exit(1);
    }
    close(fd);
    static char path[64];
    jfr_fd = memfd_create("ringprof-fuzz.jfr", 0);
    if (jfr_fd < 0) {
        perror("fuzz_convert: memfd_create");
        exit(1);
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", jfr_fd);
    jfr_path = path;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    if (!path)
        abort();
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int rc = run(runs[i], path);
        fflush(stdout);
        FUZZ_CHECK(rc == 0 || rc == 1, "'ringprof %s ... %s' exited %d", runs[i][0],
                   runs[i][3] ? runs[i][3] : "", rc);
        if (rc == 0 && !strcmp(runs[i][0], "convert") && !strcmp(runs[i][3], "jfr"))
            check_jfr(i);
    }
    return 0;
}
