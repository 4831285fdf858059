/*
 * tests/chunkbuild.h — chunk files built byte by byte, for the tests that need what
 * the writer refuses to write: references to ids never defined, strings and
 * stacks over the writer's limits, payloads that LZ4 packs a few hundred times.
 *
 * A cb_buf is a growable byte buffer; records and segments are appended to it in
 * the format of docs/format.md. Segments are framed by the writer's own
 * compressor (rp_chunk_segment_compress), so a built segment is one the writer
 * could have written, whatever it holds. Every function aborts with a message
 * when memory runs out: these are test programs. Single-threaded.
 */
#ifndef RINGPROF_TESTS_CHUNKBUILD_H
#define RINGPROF_TESTS_CHUNKBUILD_H

#include <stddef.h>
#include <stdint.h>

struct cb_buf {
    uint8_t *p;
    size_t n, cap;
    uint32_t nrec;        /* records appended, for the segment header           */
};

void cb_free(struct cb_buf *b);
void cb_u8(struct cb_buf *b, uint8_t v);
void cb_v(struct cb_buf *b, uint64_t v);                  /* a varint            */
void cb_raw(struct cb_buf *b, const void *p, size_t n);
void cb_fill(struct cb_buf *b, uint8_t byte, size_t n);   /* n copies of byte    */

/* A record of `type` whose body is `body`'s bytes. */
void cb_record(struct cb_buf *b, uint8_t type, const struct cb_buf *body);
/* A record whose body is the nf varints f[]; CB_REC(b, type, v, ...) for short. */
void cb_rec(struct cb_buf *b, uint8_t type, const uint64_t *f, int nf);
#define CB_REC(b, type, ...)                                                     \
    cb_rec(b, type, (const uint64_t[]){__VA_ARGS__},                             \
           (int)(sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)))
/* A STRING record: id, then `len` bytes of s, or (s NULL) `len` copies of `fill`. */
void cb_string(struct cb_buf *b, uint64_t id, const char *s, size_t len, uint8_t fill);

/* Start file `f` again with a valid file header: start.wall_ns 1.7e18,
 * start.mono_ns 1000, and the recording id `recording` (NULL: none). */
void cb_header(struct cb_buf *f, const char *recording);
/* Append a segment holding `payload` (its records, as counted in payload->nrec),
 * sequence number `seq`, `flags` (RP_SEG_LAST ...). */
void cb_segment(struct cb_buf *f, const struct cb_buf *payload, uint32_t seq,
                uint32_t flags);

/* Write `f` to `path` (created or truncated). @return 0, or -1 with errno. */
int cb_write(const struct cb_buf *f, const char *path);

#endif
