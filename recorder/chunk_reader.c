/*
 * recorder/chunk_reader.c — streams one chunk file (format: ringprof/format.h).
 *
 * The reader holds one segment at a time: it reads the 48-byte header with pread,
 * checks its crc and bounds, then feeds the LZ4 frame through a 64 KiB window into
 * a raw buffer of exactly raw_len bytes (<= RP_SEG_MAX_RAW), and decodes records
 * from it as the caller asks for events. Pools are kept for the whole file (an
 * arena of NUL-terminated copies and per-pool arrays indexed by id); samples are
 * not. Memory is therefore the pools plus one segment, whatever the file says,
 * and the pools are held to a budget in proportion to the bytes read so far
 * (chunk.h, RP_READER_POOL_FACTOR): LZ4 packs up to 255 bytes into one, so a
 * file's definitions alone could otherwise ask for hundreds of times its size.
 *
 * Every length, count and id read from the file is checked against what remains of
 * the enclosing header, record or body before it is used, every limit the writer
 * keeps (RP_CHUNK_STRING_MAX, RP_CHUNK_STACK_MAX) is enforced again, and a SAMPLES
 * record is decoded once to validate it before any of its samples is delivered, so
 * a record yields all its samples or none. Damage is reported through the
 * diagnostic callback with the file offset and skipped: a bad segment header by
 * scanning on for the next "RSEG" whose crc holds, a bad payload by jumping over it
 * (its header is trustworthy), a bad record by its own body_len; references to ids
 * the chunk never defined are counted, and summed up in one line per segment (the
 * callers' tables must not grow to such an id). Reading uses pread at offsets
 * and asks for the file size as it goes, so a chunk that is still being written
 * reads as far as it has been written; a segment cut short by the end of the file
 * counts as partial, not as damage, and its report says which of the three it
 * is: a ".part" a live writer holds (its flock, ringprof/recording.h), a ".part"
 * nobody holds (its writer died), or a finished name (an orphan recovered after
 * its writer was killed, or a file cut short after it was written).
 *
 * Not thread-safe; one thread uses a reader. Not async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include "ringprof/chunk.h"
#include "crc32c.h"
#include "varint.h"
#include "metanum.h"

#define RD_IO_SIZE (64u * 1024)   /* read window: decompression and resync scans */

/* -------------------------------------------------------------- the arena -- */

struct ablock {
    struct ablock *next;
    size_t used, cap;
    max_align_t data[];
};

#define RD_ARENA_BLOCK 65536u   /* what small allocations are carved from */

/* n bytes from the arena at *head; every block it allocates is added to *bytes. */
static void *arena_alloc(struct ablock **head, size_t n, uint64_t *bytes)
{
    n = (n + 7) & ~(size_t)7;
    struct ablock *b = *head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 16384 ? n : RD_ARENA_BLOCK;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        *bytes += sizeof *b + cap;
        b->used = 0;
        b->cap = cap;
        if (n > 16384 && *head) {   /* a big one: keep filling the current block */
            b->next = (*head)->next;
            (*head)->next = b;
        } else {
            b->next = *head;
            *head = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

/* --------------------------------------------------------------- the pools -- */

/* A table of pointers indexed by id (slot 0 unused, NULL: undefined) to entries in
 * the arena. Pointers rather than the entries themselves, so that the id slack a
 * hostile file may claim costs 8 bytes a slot, not the size of an entry. */
struct pool {
    void **slot;
    uint32_t cap;     /* slots allocated                                         */
    uint32_t hi;      /* highest id defined                                      */
    uint32_t ndef;    /* ids defined                                             */
    size_t esz;
    const char *name;
};

struct rstr   { const char *s; size_t len; };
struct rclass { const char *name; };
struct rstack { const uint32_t *frames; uint32_t n, flags; };

enum { P_STR, P_CLASS, P_METHOD, P_FRAME, P_STACK, P_THREAD, P_KIND, P_VTHREAD, P_COUNT };

static const void *pool_get(const struct pool *p, uint32_t id)
{
    return id < p->cap ? p->slot[id] : NULL;
}

struct rp_reader {
    int fd;
    char *path;
    rp_reader_diag_fn diag;
    void *arg;
    char msg[320];
    char why[160];            /* a reason pool_def formats                      */

    uint32_t minor;
    struct rp_kv *meta;
    size_t nmeta;
    uint64_t start_mono;

    uint64_t off;             /* where the next segment header should be         */
    int done, after_last;
    LZ4F_dctx *dctx;
    uint8_t *io;
    uint8_t *raw;
    size_t rawcap;

    int in_seg;               /* decoding a segment's records                   */
    const uint8_t *pos, *end;
    uint64_t seg_off;
    uint32_t seg_seq, seg_records, recs_seen, seg_bad;
    uint64_t seg_unresolved;  /* references to undefined ids in this segment    */
    int seg_ref_pool;         /* the first of them                              */
    uint32_t seg_ref_id;

    struct {                  /* the SAMPLES record being delivered             */
        uint64_t left;
        const uint8_t *p, *end;
        const uint8_t *vt;    /* its samples' VTHREAD ids, NULL: none           */
        uint32_t kind, thread;
        uint64_t nextra, wunit, time, weight;
    } b;

    struct ablock *arena;
    uint64_t pool_bytes;      /* the arena's blocks and the id tables: the budget */
    struct pool pool[P_COUNT];
    struct rp_reader_stats st;
};

static void report(struct rp_reader *r, uint64_t off, int fatal, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(struct rp_reader *r, uint64_t off, int fatal, const char *fmt, ...)
{
    if (!r->diag)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->diag(r->arg, r->path, off, r->msg, fatal);
}

/* Arena memory for the pools, counted against their budget. */
static void *pool_alloc(struct rp_reader *r, size_t n)
{
    return arena_alloc(&r->arena, n, &r->pool_bytes);
}

/* What the pools may hold now: chunk.h, RP_READER_POOL_FACTOR. r->off is the end
 * of the segment being decoded (0 while the header is read). */
static uint64_t pool_budget(const struct rp_reader *r)
{
    return RP_READER_POOL_FACTOR * r->off + RP_READER_POOL_SLACK;
}

/*
 * Make room for a definition of `id` in pool `p` and return its slot, or NULL with
 * *why set: id 0, an id beyond the density rule (format.h, RP_POOL_ID_SLACK), a
 * new entry whose table growth, entry and `extra` bytes (its string or frames,
 * which the caller allocates next) would take the pools past their budget, or no
 * memory. `*fresh` says whether the id was undefined until now.
 */
static void *pool_def(struct rp_reader *r, struct pool *p, uint64_t id, size_t extra,
                      int *fresh, const char **why)
{
    if (id == 0) {
        *why = "id 0 is reserved";
        return NULL;
    }
    if (id > 2 * (uint64_t)p->ndef + RP_POOL_ID_SLACK) {
        *why = "id too far beyond the ids defined so far";
        return NULL;
    }
    *fresh = id >= p->cap || p->slot[id] == NULL;
    if (!*fresh)
        return p->slot[id];
    uint64_t ncap = p->cap ? p->cap : 256;
    while (ncap <= id)
        ncap *= 2;
    /* The arena may start a block for the entry, which counts in full, and one
     * of its own for a large `extra`: room for both is kept, so the pools never
     * pass the budget. */
    uint64_t cost = (ncap - p->cap) * sizeof *p->slot + p->esz + extra + 2 * 8 +
                    RD_ARENA_BLOCK + 2 * sizeof(struct ablock);
    if (r->pool_bytes + cost > pool_budget(r)) {
        snprintf(r->why, sizeof r->why, "the pools would pass their memory budget of "
                 "%llu bytes (%u x the %llu bytes read so far + %u MiB)",
                 (unsigned long long)pool_budget(r), RP_READER_POOL_FACTOR,
                 (unsigned long long)r->off, RP_READER_POOL_SLACK >> 20);
        *why = r->why;
        return NULL;
    }
    if (id >= p->cap) {
        void **ns = realloc(p->slot, (size_t)ncap * sizeof *ns);
        if (!ns) {
            *why = "out of memory";
            return NULL;
        }
        memset(ns + p->cap, 0, (size_t)(ncap - p->cap) * sizeof *ns);
        r->pool_bytes += (ncap - p->cap) * sizeof *ns;
        p->slot = ns;
        p->cap = (uint32_t)ncap;
    }
    void *e = pool_alloc(r, p->esz);
    if (!e) {
        *why = "out of memory";
        return NULL;
    }
    memset(e, 0, p->esz);
    p->slot[id] = e;
    p->ndef++;
    if (id > p->hi)
        p->hi = (uint32_t)id;
    return e;
}

/* ------------------------------------------------------------ file access -- */

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return got ? (ssize_t)got : -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static uint64_t file_size(struct rp_reader *r)
{
    struct stat sb;
    if (fstat(r->fd, &sb) < 0)
        return 0;
    return (uint64_t)sb.st_size;
}

/* ------------------------------------------------------------ the header -- */

/* Copy n bytes as a NUL-terminated string into the arena. */
static char *arena_str(struct rp_reader *r, const uint8_t *s, size_t n)
{
    char *c = pool_alloc(r, n + 1);
    if (c) {
        if (n)
            memcpy(c, s, n);
        c[n] = 0;
    }
    return c;
}

static int read_file_header(struct rp_reader *r)
{
    uint8_t fixed[RP_FILE_HEADER_FIXED];
    ssize_t n = pread_full(r->fd, fixed, sizeof fixed, 0);
    if (n < 0) {
        report(r, RP_READER_NO_OFFSET, 1, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (n == 0) {
        report(r, RP_READER_NO_OFFSET, 1, "empty file: not a ringprof chunk");
        return -1;
    }
    if (memcmp(fixed, RP_FILE_MAGIC, (size_t)n < RP_FILE_MAGIC_LEN ? (size_t)n
                                                                 : RP_FILE_MAGIC_LEN)) {
        report(r, 0, 1, "not a ringprof chunk (bad magic)");
        return -1;
    }
    if ((size_t)n < sizeof fixed) {
        report(r, 0, 1, "file header cut short: %zd of at least %u bytes", n,
               RP_FILE_HEADER_FIXED + 4);
        return -1;
    }
    uint16_t major = rp_get_le16(fixed + 8);
    r->minor = rp_get_le16(fixed + 10);
    uint32_t len = rp_get_le32(fixed + 12);
    if (major != RP_FORMAT_MAJOR) {
        report(r, 8, 1, "format major %u not supported (this reader reads %u)", major,
               RP_FORMAT_MAJOR);
        return -1;
    }
    if (len < RP_FILE_HEADER_FIXED + 4 || len > RP_FILE_HEADER_MAX) {
        report(r, 12, 1, "file header length %u out of range [%u, %u]", len,
               RP_FILE_HEADER_FIXED + 4, RP_FILE_HEADER_MAX);
        return -1;
    }
    uint8_t *h = malloc(len);
    if (!h) {
        report(r, RP_READER_NO_OFFSET, 1, "out of memory");
        return -1;
    }
    n = pread_full(r->fd, h, len, 0);
    if (n < (ssize_t)len) {
        report(r, 12, 1, "file header cut short: its length field says %u bytes, "
               "the file has %zd", len, n);
        free(h);
        return -1;
    }
    if (rp_crc32c(0, h, len - 4) != rp_get_le32(h + len - 4)) {
        report(r, len - 4, 1, "file header checksum mismatch");
        free(h);
        return -1;
    }
    /* Metadata: count, then copy. */
    const uint8_t *p = h + RP_FILE_HEADER_FIXED, *end = h + len - 4;
    size_t cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        p = h + RP_FILE_HEADER_FIXED;
        size_t i = 0;
        while (p < end) {
            const uint8_t *kv[2];
            uint32_t l[2];
            for (int j = 0; j < 2; j++) {
                if (rp_varint_get32(&p, end, &l[j]) < 0 || l[j] > (size_t)(end - p)) {
                    report(r, (uint64_t)(p - h), 1, "file header metadata malformed");
                    free(h);
                    return -1;
                }
                kv[j] = p;
                p += l[j];
            }
            if (pass) {
                r->meta[i].key = arena_str(r, kv[0], l[0]);
                r->meta[i].value = arena_str(r, kv[1], l[1]);
                if (!r->meta[i].key || !r->meta[i].value) {
                    report(r, RP_READER_NO_OFFSET, 1, "out of memory");
                    free(h);
                    return -1;
                }
            }
            i++;
        }
        if (!pass) {
            cap = i;
            r->meta = calloc(cap ? cap : 1, sizeof *r->meta);
            if (!r->meta) {
                report(r, RP_READER_NO_OFFSET, 1, "out of memory");
                free(h);
                return -1;
            }
        }
    }
    r->nmeta = cap;
    r->off = len;
    free(h);
    const char *mono = rp_reader_meta(r, RP_META_START_MONO);
    if (rp_meta_parse_u64(mono, &r->start_mono) < 0) {
        r->start_mono = 0;
        report(r, RP_FILE_HEADER_FIXED, 0,
               "file header has no valid %s: times are relative to the chunk start",
               RP_META_START_MONO);
    }
    return 0;
}

struct rp_reader *rp_reader_open(const char *path, rp_reader_diag_fn diag, void *arg)
{
    struct rp_reader *r = calloc(1, sizeof *r);
    if (!r) {
        if (diag)
            diag(arg, path, RP_READER_NO_OFFSET, "out of memory", 1);
        return NULL;
    }
    r->fd = -1;
    r->diag = diag;
    r->arg = arg;
    static const size_t esz[P_COUNT] = {
        sizeof(struct rstr), sizeof(struct rclass), sizeof(struct rp_method_info),
        sizeof(struct rp_frame_info), sizeof(struct rstack),
        sizeof(struct rp_thread_info), sizeof(struct rp_kind_info),
        sizeof(struct rp_vthread_info)};
    static const char *const pname[P_COUNT] = {"string", "class", "method", "frame",
                                               "stack", "thread", "kind", "vthread"};
    for (int i = 0; i < P_COUNT; i++) {
        r->pool[i].esz = esz[i];
        r->pool[i].name = pname[i];
    }
    r->path = strdup(path ? path : "");
    if (!r->path) {
        if (diag)
            diag(arg, path, 0, "out of memory", 1);
        free(r);
        return NULL;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        report(r, RP_READER_NO_OFFSET, 1, "cannot open: %s", strerror(errno));
        rp_reader_close(r);
        return NULL;
    }
    if (read_file_header(r) < 0) {
        rp_reader_close(r);
        return NULL;
    }
    r->io = malloc(RD_IO_SIZE);
    if (!r->io || LZ4F_isError(LZ4F_createDecompressionContext(&r->dctx, LZ4F_VERSION))) {
        report(r, RP_READER_NO_OFFSET, 1, "out of memory");
        rp_reader_close(r);
        return NULL;
    }
    return r;
}

void rp_reader_close(struct rp_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    if (r->dctx)
        LZ4F_freeDecompressionContext(r->dctx);
    free(r->io);
    free(r->raw);
    free(r->meta);
    for (int i = 0; i < P_COUNT; i++) {
        free(r->pool[i].slot);
    }
    while (r->arena) {
        struct ablock *n = r->arena->next;
        free(r->arena);
        r->arena = n;
    }
    free(r->path);
    free(r);
}

/* ------------------------------------------------------------- segments -- */

struct seghdr {
    uint32_t flags, seq, raw_len, comp_len, records;
    uint64_t t_first, t_last;
};

/* The largest LZ4 frame a genuine payload of raw_len bytes can need: LZ4 expands
 * incompressible input by under 0.5%, plus block and frame headers. */
static uint64_t comp_bound(uint32_t raw_len)
{
    return (uint64_t)raw_len + raw_len / 16 + 4096;
}

/* The other way: one byte of an LZ4 sequence lengthens a match by at most 255
 * bytes, so no frame decodes to more than 256 times its size (headers aside, which
 * only make it less). A header claiming more was forged, and the reader does not
 * allocate its raw_len. */
#define RD_LZ4_MAX_RATIO 256u

/* @return NULL if `h` is a sound segment header (fields in *s), else the reason. */
static const char *check_header(const uint8_t *h, struct seghdr *s)
{
    if (memcmp(h, RP_SEG_MAGIC, 4))
        return "no segment header here (bad magic)";
    if (rp_crc32c(0, h, 44) != rp_get_le32(h + 44))
        return "segment header checksum mismatch";
    s->flags = rp_get_le32(h + 4);
    s->seq = rp_get_le32(h + 8);
    s->raw_len = rp_get_le32(h + 12);
    s->comp_len = rp_get_le32(h + 16);
    s->records = rp_get_le32(h + 20);
    s->t_first = rp_get_le64(h + 24);
    s->t_last = rp_get_le64(h + 32);
    if (s->raw_len > RP_SEG_MAX_RAW)
        return "segment raw_len exceeds RP_SEG_MAX_RAW";
    if (s->comp_len > comp_bound(s->raw_len))
        return "segment comp_len too large for its raw_len";
    if (s->raw_len > (uint64_t)RD_LZ4_MAX_RATIO * s->comp_len)
        return "segment raw_len too large for its comp_len (LZ4 decodes to at most 256 "
               "times its size)";
    return NULL;
}

/*
 * Scan forward from `from` for the next sound segment header. Bytes from `bad` (the
 * damaged spot) to what is found are counted as skipped. Sets r->off, or r->done at
 * the end of the file.
 */
static void resync(struct rp_reader *r, uint64_t bad, uint64_t from)
{
    uint64_t size = file_size(r), pos = from;
    while (pos + RP_SEG_HEADER_LEN <= size) {
        size_t want = size - pos < RD_IO_SIZE ? (size_t)(size - pos) : RD_IO_SIZE;
        ssize_t n = pread_full(r->fd, r->io, want, pos);
        if (n < RP_SEG_HEADER_LEN)
            break;
        const uint8_t *p = r->io, *last = r->io + n - RP_SEG_HEADER_LEN;
        while (p <= last && (p = memchr(p, 'R', (size_t)(last - p) + 1)) != NULL) {
            struct seghdr s;
            if (!check_header(p, &s)) {
                uint64_t at = pos + (uint64_t)(p - r->io);
                r->st.bytes_skipped += at - bad;
                report(r, at, 0, "found the next segment header after skipping %llu "
                       "damaged bytes", (unsigned long long)(at - bad));
                r->off = at;
                return;
            }
            p++;
        }
        pos += (uint64_t)n - (RP_SEG_HEADER_LEN - 1);
    }
    if (size > bad) {
        r->st.bytes_skipped += size - bad;
        report(r, bad, 0, "no segment header follows: %llu bytes skipped to the end "
               "of the file", (unsigned long long)(size - bad));
    }
    r->done = 1;
}

enum { DZ_OK = 0, DZ_BAD = -1, DZ_SHORT = -2 };

/* Decompress the frame at `at` (comp_len bytes) into r->raw (exactly raw_len). */
static int decompress(struct rp_reader *r, uint64_t at, const struct seghdr *s,
                      const char **why)
{
    size_t need = s->raw_len ? s->raw_len : 1;
    if (need > r->rawcap) {
        uint8_t *p = realloc(r->raw, need);
        if (!p) {
            *why = "out of memory for the segment payload";
            return DZ_BAD;
        }
        r->raw = p;
        r->rawcap = need;
    }
    LZ4F_resetDecompressionContext(r->dctx);
    LZ4F_decompressOptions_t opt;
    memset(&opt, 0, sizeof opt);
    opt.stableDst = 1;
    uint64_t left = s->comp_len;
    size_t out = 0, ret = 1;
    int started = 0;
    while (left > 0 && ret != 0) {
        size_t want = left < RD_IO_SIZE ? (size_t)left : RD_IO_SIZE;
        ssize_t n = pread_full(r->fd, r->io, want, at);
        if (n < (ssize_t)want)
            return DZ_SHORT;
        const uint8_t *src = r->io;
        size_t srcleft = want;
        if (!started) {
            LZ4F_frameInfo_t fi;
            size_t hs = srcleft;
            ret = LZ4F_getFrameInfo(r->dctx, &fi, src, &hs);
            if (LZ4F_isError(ret)) {
                *why = "bad LZ4 frame header";
                return DZ_BAD;
            }
            if (fi.contentChecksumFlag != LZ4F_contentChecksumEnabled) {
                *why = "LZ4 frame has no content checksum";
                return DZ_BAD;
            }
            if (fi.contentSize != s->raw_len || fi.dictID != 0) {
                *why = "LZ4 frame content size differs from raw_len";
                return DZ_BAD;
            }
            src += hs;
            srcleft -= hs;
            started = 1;
        }
        while (srcleft > 0 && ret != 0) {
            size_t dsz = s->raw_len - out, ssz = srcleft;
            ret = LZ4F_decompress(r->dctx, r->raw + out, &dsz, src, &ssz, &opt);
            if (LZ4F_isError(ret)) {
                *why = LZ4F_getErrorName(ret);   /* "ERROR_contentChecksum_invalid" */
                return DZ_BAD;
            }
            if (ssz == 0 && dsz == 0) {
                *why = "LZ4 frame holds more than raw_len bytes";
                return DZ_BAD;
            }
            out += dsz;
            src += ssz;
            srcleft -= ssz;
        }
        at += want;
        left -= want;
        if (ret == 0 && (srcleft || left)) {
            *why = "bytes after the end of the LZ4 frame";
            return DZ_BAD;
        }
    }
    if (ret != 0) {
        *why = "LZ4 frame ends early";
        return DZ_BAD;
    }
    if (out != s->raw_len) {
        *why = "LZ4 frame content size differs from raw_len";
        return DZ_BAD;
    }
    return DZ_OK;
}

static int is_part(const char *path)
{
    static const char suffix[] = RP_CHUNK_SUFFIX RP_CHUNK_PART_SUFFIX;
    size_t n = strlen(path), k = sizeof suffix - 1;
    return n >= k && !strcmp(path + n - k, suffix);
}

int rp_reader_being_written(const struct rp_reader *r)
{
    if (!is_part(r->path))
        return 0;
    if (flock(r->fd, LOCK_SH | LOCK_NB) == 0) {
        flock(r->fd, LOCK_UN);
        return 0;
    }
    return errno == EWOULDBLOCK;
}

/* Why the file ends inside a segment, for the report. */
static const char *cut_reason(const struct rp_reader *r)
{
    if (rp_reader_being_written(r))
        return "a writer is still writing it";
    if (is_part(r->path))
        return "its writer stopped before finishing it (no process holds its lock: "
               "killed, or it crashed)";
    return "no writer is writing it (its writer was killed, or the file was cut short "
           "after it was written)";
}

static void partial(struct rp_reader *r, const char *what, uint64_t have, uint64_t need)
{
    r->st.segments_partial++;
    report(r, r->off, 0, "%s cut short by the end of the file (%llu of %llu bytes): %s",
           what, (unsigned long long)have, (unsigned long long)need, cut_reason(r));
    r->done = 1;
}

/* Find and load the next good segment. @return 1 with a SEGMENT event, 0 at end. */
static int next_segment(struct rp_reader *r, struct rp_event *ev)
{
    while (!r->done) {
        uint64_t size = file_size(r);
        if (r->after_last) {
            if (size > r->off) {
                r->st.bytes_skipped += size - r->off;
                report(r, r->off, 0, "%llu bytes after the last segment ignored",
                       (unsigned long long)(size - r->off));
            }
            r->done = 1;
            break;
        }
        if (r->off >= size) {
            r->done = 1;
            break;
        }
        uint8_t h[RP_SEG_HEADER_LEN];
        ssize_t n = pread_full(r->fd, h, sizeof h, r->off);
        if (n < (ssize_t)sizeof h) {
            partial(r, "segment header", n < 0 ? 0 : (uint64_t)n, RP_SEG_HEADER_LEN);
            break;
        }
        struct seghdr s;
        const char *why = check_header(h, &s);
        if (why) {
            r->st.segments_bad++;
            report(r, r->off, 0, "%s", why);
            resync(r, r->off, r->off + 1);
            continue;
        }
        uint64_t total = RP_SEG_HEADER_LEN + (uint64_t)s.comp_len;
        if (r->off + total > size) {
            partial(r, "segment", size - r->off, total);
            break;
        }
        int rc = decompress(r, r->off + RP_SEG_HEADER_LEN, &s, &why);
        if (rc == DZ_SHORT) {
            partial(r, "segment", file_size(r) - r->off, total);
            break;
        }
        if (rc == DZ_BAD) {
            r->st.segments_bad++;
            r->st.bytes_skipped += total;
            report(r, r->off, 0, "segment %u payload damaged: %s%s", s.seq,
                   strncmp(why, "ERROR_", 6) ? "" : "LZ4 ", why);
            r->off += total;
            continue;
        }
        r->st.segments_ok++;
        r->in_seg = 1;
        r->pos = r->raw;
        r->end = r->raw + s.raw_len;
        r->seg_off = r->off;
        r->seg_seq = s.seq;
        r->seg_records = s.records;
        r->recs_seen = 0;
        r->seg_bad = 0;
        r->seg_unresolved = 0;
        r->off += total;
        if (s.flags & RP_SEG_LAST) {
            r->st.clean_close = 1;
            r->after_last = 1;
        }
        ev->type = RP_EV_SEGMENT;
        ev->u.seg.offset = r->seg_off;
        ev->u.seg.seq = s.seq;
        ev->u.seg.flags = s.flags;
        ev->u.seg.raw_len = s.raw_len;
        ev->u.seg.comp_len = s.comp_len;
        ev->u.seg.records = s.records;
        ev->u.seg.t_first = s.t_first;
        ev->u.seg.t_last = s.t_last;
        return 1;
    }
    return 0;
}

/* -------------------------------------------------------------- records -- */

/* A hostile segment can hold millions of bad records; the first few per segment
 * are reported one by one, the rest counted in one line at the segment's end. */
#define RD_BAD_RECORDS_SHOWN 8

static void bad_record(struct rp_reader *r, const uint8_t *rec, unsigned type,
                       const char *why)
{
    r->st.records_bad++;
    if (r->seg_bad++ < RD_BAD_RECORDS_SHOWN)
        report(r, r->seg_off, 0, "segment %u: record of type %u at payload offset %zu: "
               "%s", r->seg_seq, type, (size_t)(rec - r->raw), why);
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
    void *slot = pool_def(r, &r->pool[pool], id, extra, fresh, &why);
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
        s->s = arena_str(r, q, len);
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
        uint32_t *frames = pool_alloc(r, (size_t)n * 4 + 4);
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
            if (r->seg_bad > RD_BAD_RECORDS_SHOWN)
                report(r, r->seg_off, 0, "segment %u: %u more malformed records not "
                       "shown", r->seg_seq, r->seg_bad - RD_BAD_RECORDS_SHOWN);
            if (r->seg_unresolved)
                report(r, r->seg_off, 0, "segment %u: %llu reference%s to ids the chunk "
                       "never defined (the first: %s id %u); they read as unknown",
                       r->seg_seq, (unsigned long long)r->seg_unresolved,
                       r->seg_unresolved == 1 ? "" : "s",
                       r->pool[r->seg_ref_pool].name, r->seg_ref_id);
            if (r->recs_seen != r->seg_records)
                report(r, r->seg_off, 0, "segment %u: header says %u records, payload "
                       "holds %u", r->seg_seq, r->seg_records, r->recs_seen);
            continue;
        }
        return next_segment(r, ev);
    }
}

/* -------------------------------------------------------------- look-ups -- */

const char *rp_reader_meta(const struct rp_reader *r, const char *key)
{
    for (size_t i = 0; i < r->nmeta; i++)
        if (strcmp(r->meta[i].key, key) == 0)
            return r->meta[i].value;
    return NULL;
}

const struct rp_kv *rp_reader_meta_all(const struct rp_reader *r, size_t *n)
{
    *n = r->nmeta;
    return r->meta;
}

uint32_t rp_reader_format_minor(const struct rp_reader *r)
{
    return r->minor;
}

const char *rp_reader_string(const struct rp_reader *r, uint32_t id)
{
    const struct rstr *s = pool_get(&r->pool[P_STR], id);
    return s ? s->s : NULL;
}

const char *rp_reader_string_len(const struct rp_reader *r, uint32_t id, size_t *len)
{
    const struct rstr *s = pool_get(&r->pool[P_STR], id);
    if (len)
        *len = s ? s->len : 0;
    return s ? s->s : NULL;
}

const char *rp_reader_class(const struct rp_reader *r, uint32_t id)
{
    const struct rclass *c = pool_get(&r->pool[P_CLASS], id);
    return c ? c->name : NULL;
}

const struct rp_method_info *rp_reader_method(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_METHOD], id);
}

const struct rp_frame_info *rp_reader_frame(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_FRAME], id);
}

const uint32_t *rp_reader_stack(const struct rp_reader *r, uint32_t id, uint32_t *n,
                                uint32_t *flags)
{
    const struct rstack *s = pool_get(&r->pool[P_STACK], id);
    if (n)
        *n = s ? s->n : 0;
    if (flags)
        *flags = s ? s->flags : 0;
    return s ? s->frames : NULL;
}

const struct rp_thread_info *rp_reader_thread(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_THREAD], id);
}

const struct rp_kind_info *rp_reader_kind(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_KIND], id);
}

uint32_t rp_reader_thread_count(const struct rp_reader *r)
{
    return r->pool[P_THREAD].hi;
}

const struct rp_vthread_info *rp_reader_vthread(const struct rp_reader *r, uint32_t id)
{
    return pool_get(&r->pool[P_VTHREAD], id);
}

uint32_t rp_reader_vthread_count(const struct rp_reader *r)
{
    return r->pool[P_VTHREAD].hi;
}

uint32_t rp_reader_kind_count(const struct rp_reader *r)
{
    return r->pool[P_KIND].hi;
}

void rp_reader_stats(const struct rp_reader *r, struct rp_reader_stats *out)
{
    *out = r->st;
    out->pool_bytes = r->pool_bytes;
}

const char *rp_reader_path(const struct rp_reader *r)
{
    return r->path;
}
