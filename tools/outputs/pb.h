/*
 * tools/outputs/pb.h — a minimal protocol-buffers encoder and the gzip stream that a pprof
 * file is written through.
 *
 * Only what profile.proto and OTLP's profiles need: varints, zigzag-free int64
 * (protobuf's "int64" is plain two's complement in a varint), fixed64,
 * length-delimited bytes, UTF-8 strings and sub-messages, and packed repeated
 * varints. A message is built in an rp_pb buffer, then either
 * nested into its parent (rp_pb_msg) or appended to the output as one top-level
 * field. Because a top-level protobuf message has no length prefix and its fields
 * may come in any order, a writer can stream repeated fields (samples) to the
 * output as they are produced and append the tables (locations, functions,
 * strings) at the end: memory stays proportional to the tables, not the samples.
 *
 * Errors are sticky: an allocation failure marks the buffer (rp_pb.oom) and later
 * calls do nothing, so a caller checks once, at the end. A write or deflate error
 * marks the rp_gz stream the same way; rp_gz_finish reports it.
 *
 * Single-threaded; allocates with malloc. Not async-signal-safe.
 */
#ifndef RINGPROF_TOOLS_PB_H
#define RINGPROF_TOOLS_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A growable byte buffer holding one encoded message (or part of one). */
struct rp_pb {
    uint8_t *p;
    size_t len, cap;
    int oom;           /* set when an allocation failed; the content is then junk */
};

void rp_pb_init(struct rp_pb *b);
void rp_pb_free(struct rp_pb *b);
/* Empty the buffer, keeping its storage (and clearing nothing else). */
void rp_pb_reset(struct rp_pb *b);

/* Raw varint (unsigned LEB128, at most 10 bytes). */
void rp_pb_varint(struct rp_pb *b, uint64_t v);
/* Field `field` as a varint (wire type 0). proto3 omits zero values, and so do
 * these two: readers treat a missing field as 0. rp_pb_int64 encodes negative
 * numbers as protobuf does for int64 (ten bytes, two's complement). */
void rp_pb_uint64(struct rp_pb *b, uint32_t field, uint64_t v);
void rp_pb_int64(struct rp_pb *b, uint32_t field, int64_t v);
/* Field `field` as length-delimited bytes (wire type 2), written even if empty:
 * the string table's entry 0 must be "" and must be present. */
void rp_pb_bytes(struct rp_pb *b, uint32_t field, const void *data, size_t len);
/* Field `field` as a protobuf string: the `len` bytes of s, each byte that does
 * not start a valid UTF-8 sequence written as U+FFFD. protobuf's "string" must
 * be UTF-8 and strict decoders (Go's google.golang.org/protobuf, in Pyroscope
 * and the OpenTelemetry Collector) refuse the whole message otherwise; names
 * come from the JVM, native symbols and thread names anyone may set. Written
 * even if empty. */
void rp_pb_string(struct rp_pb *b, uint32_t field, const char *s, size_t len);
/* Field `field` as a fixed64 (wire type 1: eight bytes, little-endian); omitted
 * when 0, as proto3 does. */
void rp_pb_fixed64(struct rp_pb *b, uint32_t field, uint64_t v);
/* Field `field` holding the message in `sub` (which is left unchanged). */
void rp_pb_msg(struct rp_pb *b, uint32_t field, const struct rp_pb *sub);
/* Field `field` as a packed repeated varint: one length-delimited field holding
 * the n values. Nothing is written when n is 0. */
void rp_pb_packed(struct rp_pb *b, uint32_t field, const uint64_t *v, size_t n);

/*
 * A gzip (RFC 1952) stream over a stdio FILE, through zlib's deflate. The file
 * is not closed by rp_gz_finish; the caller owns it.
 */
struct rp_gz;

/* @return the stream, or NULL if memory ran out. `level` is zlib's 0..9. */
struct rp_gz *rp_gz_open(FILE *out, int level);
void rp_gz_write(struct rp_gz *z, const void *data, size_t len);
/* Append a whole buffer (an encoded top-level field, for instance). Marks the
 * stream failed if the buffer had run out of memory. */
void rp_gz_write_pb(struct rp_gz *z, const struct rp_pb *b);
/* Uncompressed bytes written so far. */
uint64_t rp_gz_bytes_in(const struct rp_gz *z);
/* Flush the gzip trailer and free the stream. @return 0, or -1 if any write,
 * deflate or allocation failed along the way (errno from the failed call, or
 * ENOMEM / EIO). NULL is accepted and returns -1. */
int rp_gz_finish(struct rp_gz *z);

#endif
