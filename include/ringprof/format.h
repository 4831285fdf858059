/*
 * ringprof/format.h — the chunk file format (*.rpc), version 1.
 *
 * docs/format.md is the prose specification; this header is its machine form. Both
 * change together, and any change that an old reader would misread bumps
 * RP_FORMAT_MAJOR.
 *
 *   chunk   := file_header segment*
 *   segment := segment_header lz4_frame          (one per flush interval)
 *
 * All fixed-width integers are little-endian. "varint" is unsigned LEB128 (7 bits a
 * byte, low group first, at most 10 bytes); "svarint" is a zigzag-encoded signed
 * value in a varint.
 *
 * File header (written once, when the chunk is opened):
 *    0  8  magic      "\x89RPC\r\n\x1a\n" (PNG's trick: catches text-mode mangling,
 *                     7-bit transfers and truncation at the first byte)
 *    8  2  major      RP_FORMAT_MAJOR; a reader refuses other majors
 *   10  2  minor      RP_FORMAT_MINOR; a reader accepts any minor of its major
 *   12  4  length     total header bytes, magic and crc included
 *   16  .  metadata   repeated { varint klen, key bytes, varint vlen, value bytes }
 *                     UTF-8 text; numbers are written in decimal. Keys: RP_META_*.
 *  L-4  4  crc32c     over bytes [0, L-4)
 *
 * Segment header (48 bytes, then comp_len bytes of one LZ4 frame):
 *    0  4  magic      "RSEG"
 *    4  4  flags      RP_SEG_LAST: written by a clean close; nothing follows
 *    8  4  seq        0, 1, 2, ... within the chunk, one per segment the writer
 *                     tried to write: a segment lost to a write error leaves a gap
 *   12  4  raw_len    payload bytes after decompression
 *   16  4  comp_len   bytes of the LZ4 frame that follows
 *   20  4  records    number of records in the payload
 *   24  8  t_first    earliest event time in the segment, monotonic ns (0 if none)
 *   32  8  t_last     latest event time, monotonic ns (0 if none)
 *   40  4  reserved   zero
 *   44  4  crc32c     over header bytes [0, 44)
 * The LZ4 frame (liblz4 frame format) carries its own content checksum and content
 * size (a reader rejects a frame without both, or whose size is not raw_len), so a
 * damaged payload is detected by the decompressor. A damaged header is detected by
 * its crc; the reader then scans forward for the next "RSEG" magic whose header crc
 * is valid.
 *
 * Payload: a sequence of records, each
 *    u8 type, varint body_len, body[body_len]
 * A reader skips a record of a type it does not know, and ignores bytes at the end
 * of a body after the fields it knows (so a minor version may add record types and
 * append fields). Pool records define an id that later records in the same chunk
 * refer to; ids start at 1 per pool and are issued densely, and 0 means "none". A
 * record refers only to ids defined earlier in the same chunk (usually in the same
 * segment, or an earlier one). A reader ignores a definition whose id exceeds
 * 2 x (ids defined so far in that pool) + RP_POOL_ID_SLACK, so that no damaged or
 * hostile file can make it allocate a huge table. Every time in a body is an
 * svarint: ns relative to the chunk's RP_META_START_MONO (negative for events that
 * happened before the chunk was opened). Bodies are:
 *
 *  STRING     varint id, bytes (the rest of the body, UTF-8, no terminator)
 *  CLASS      varint id, varint name (string id; JVM internal form is converted
 *             to the dotted Java form by the writer's caller)
 *  METHOD     varint id, varint class, varint name, varint signature, varint file,
 *             varint flags (RP_METHOD_*)
 *  FRAME      varint id, varint method, varint type (RP_FRAME_*), varint bci+1
 *             (0: no bci), varint line (0: unknown)
 *  STACK      varint id, varint flags (RP_STACK_*), varint n, n x varint frame
 *             (leaf first, root last)
 *  THREAD     varint id, varint os_tid, varint java_tid (0: not a Java thread),
 *             varint name (string id), varint flags (RP_THREAD_*), svarint time.
 *             A THREAD record for an id seen before is a rename or an update: the
 *             newest record wins from its time on.
 *  KIND       varint id, varint name (string), varint unit (string),
 *             varint period (nominal weight of one sample, 0: none),
 *             varint nextra, nextra x varint extra-field name (string)
 *  SAMPLES    varint kind, varint thread, varint count, svarint t0, varint wunit,
 *             varint nextra, then count x
 *               { varint head, [varint wval], varint stack, nextra x varint extra }
 *             and, only in a record where some sample ran on a virtual thread
 *             (format 1.1), count x varint vthread: each sample's VTHREAD id, 0
 *             for one that ran on no virtual thread; `thread` is then the
 *             carrier, the OS thread the virtual thread ran on. A 1.0 reader
 *             ignores these trailing ids, and sees the samples on the carriers.
 *             Samples of one kind and one thread, in time order. head is
 *             dt << 2 | wmode: dt is ns since the previous sample of the record
 *             (the first: since t0). wmode says where the weight (in the kind's
 *             unit) comes from:
 *               0  the previous sample's weight in this record (the first: wunit)
 *               1  wval x wunit           2  wval itself
 *               3  reserved: the record is malformed
 *             The writer sets wunit to the kind's period, so the common sample,
 *             one period after the previous one and weighing one period, costs a
 *             head (4 bytes at 10 ms) and a stack id, and nothing else. The record
 *             names its own nextra and wunit, so it can be decoded (ids
 *             unresolved) even when the KIND record was lost to damage.
 *  COUNTER    varint name (string), varint value. Counts that happened during this
 *             segment (a delta); the chunk's total is the sum over its segments.
 *             Losses are counters named "lost.<reason>" (RP_COUNTER_LOST_PREFIX).
 *  THREAD_CPU varint thread, svarint time, varint cpu_ns (the thread's cumulative
 *             CPU time at that instant)
 *  GAUGE      varint name (string), svarint time, varint value: a sampled level
 *             (RSS, heap used, ...) at an instant.
 *  VTHREAD    varint id, varint java_tid, varint name (string id, 0: none),
 *             svarint time (format 1.1): a virtual thread that samples name, in
 *             a pool of its own (ids 1, 2, ... apart from THREAD's). A VTHREAD
 *             record for an id seen before renames it, as THREAD does. A 1.0
 *             reader skips the record type.
 */
#ifndef RINGPROF_FORMAT_H
#define RINGPROF_FORMAT_H

#include <stdint.h>

#define RP_FORMAT_MAJOR 1
#define RP_FORMAT_MINOR 1

#define RP_FILE_MAGIC      "\x89RPC\r\n\x1a\n"
#define RP_FILE_MAGIC_LEN  8
#define RP_FILE_HEADER_FIXED 16          /* magic, major, minor, length          */
#define RP_FILE_HEADER_MAX (64u * 1024)  /* a reader refuses larger headers       */

#define RP_SEG_MAGIC       "RSEG"
#define RP_SEG_HEADER_LEN  48
/* A segment's payload is bounded so a corrupt length cannot make a reader allocate
 * gigabytes: 64 MiB of raw records is hours of samples from hundreds of threads. */
#define RP_SEG_MAX_RAW     (64u * 1024 * 1024)

enum rp_seg_flags {
    RP_SEG_LAST = 1u << 0
};

/* Chunk file names: "<YYYYmmddTHHMMSS>Z-<pid>-<seq>.rpc", UTC start time first so
 * that a plain sort is oldest first across JVMs sharing a directory. The chunk being
 * written carries RP_CHUNK_PART_SUFFIX after the name and is renamed (atomically)
 * when it is closed. */
#define RP_CHUNK_SUFFIX       ".rpc"
#define RP_CHUNK_PART_SUFFIX  ".part"

enum rp_record_type {
    RP_REC_STRING     = 1,
    RP_REC_CLASS      = 2,
    RP_REC_METHOD     = 3,
    RP_REC_FRAME      = 4,
    RP_REC_STACK      = 5,
    RP_REC_THREAD     = 6,
    RP_REC_KIND       = 7,
    RP_REC_SAMPLES    = 8,
    RP_REC_COUNTER    = 9,
    RP_REC_THREAD_CPU = 10,
    RP_REC_GAUGE      = 11,
    RP_REC_VTHREAD    = 12
};

/* How a frame was executing when sampled. Converters annotate frames with these the
 * way flame-graph tools colour them (_[j], _[i], _[0], plain native). A reader shows
 * a type it does not know (from a newer minor) as RP_FRAME_NATIVE. */
enum rp_frame_type {
    RP_FRAME_INTERPRETED = 0,
    RP_FRAME_JIT         = 1,   /* compiled Java                                  */
    RP_FRAME_INLINED     = 2,   /* compiled Java, inlined into its caller         */
    RP_FRAME_NATIVE      = 3,   /* native code: method = symbol, class = library  */
    RP_FRAME_CPP         = 4,   /* JVM internals (C++)                            */
    RP_FRAME_KERNEL      = 5,
    RP_FRAME_MARKER      = 6,   /* synthetic: an error or truncation marker       */
    RP_FRAME_TYPES
};

enum rp_stack_flags {
    RP_STACK_TRUNCATED = 1u << 0,   /* the walk stopped at the depth limit        */
    RP_STACK_ERROR     = 1u << 1    /* the walk failed; the frames say why        */
};

enum rp_method_flags {
    RP_METHOD_NATIVE    = 1u << 0,  /* a Java method declared native              */
    RP_METHOD_UNLOADED  = 1u << 1,  /* its class was unloaded before resolution   */
    RP_METHOD_SYNTHETIC = 1u << 2
};

enum rp_thread_flags {
    RP_THREAD_JAVA   = 1u << 0,
    RP_THREAD_DAEMON = 1u << 1,
    RP_THREAD_ENDED  = 1u << 2
};

/* Metadata keys in the file header. Values are text. */
#define RP_META_PID          "pid"
#define RP_META_HOST         "host"
#define RP_META_START_WALL   "start.wall_ns"   /* CLOCK_REALTIME at chunk open      */
#define RP_META_START_MONO   "start.mono_ns"   /* CLOCK_MONOTONIC at the same moment */
#define RP_META_CHUNK_SEQ    "chunk.seq"       /* 0, 1, ... within one recording     */
#define RP_META_RECORDING    "recording.id"    /* shared by a recording's chunks     */
#define RP_META_JVM_NAME     "jvm.name"
#define RP_META_JVM_VERSION  "jvm.version"
#define RP_META_OPTIONS      "agent.options"
/* The settings `ringprof ctl set` changed since the agent started, in force when
 * the chunk opened: "KEY=VALUE,..." (interval, alloc, lock, wall, wallthreads,
 * in that order, each with the latest value as the request wrote it). Absent
 * until a set; a set also finishes the chunk, so a chunk is written under the
 * settings its header names. */
#define RP_META_OPTIONS_SET  "agent.options.set"
#define RP_META_PRODUCER     "producer"        /* "ringprof <version>"               */
#define RP_META_HOST_CPUS    "host.cpus"       /* CPUs online when the agent started */
/* What a backend files the recording under (OTLP's resource, Pyroscope's series):
 * the agent options service= and labels= (the labels' grammar is
 * ringprof/labels.h), and the main class or jar the JVM runs, the first word of
 * sun.java.command, which the tool names the service by when service= was not
 * given. Absent when not set or not known. */
#define RP_META_SERVICE      "service.name"
#define RP_META_LABELS       "labels"
#define RP_META_JVM_MAIN     "jvm.main"
/* The Java runtime, as java.runtime.name, java.runtime.version and java.vm.vendor
 * say (OTLP's process.runtime.*). */
#define RP_META_RUNTIME_NAME    "jvm.runtime.name"
#define RP_META_RUNTIME_VERSION "jvm.runtime.version"
#define RP_META_JVM_VENDOR      "jvm.vendor"

#define RP_COUNTER_LOST_PREFIX "lost."
/* Samples in segments the writer could not write (ENOSPC, EFBIG, EIO): counted by
 * the writer itself into the next segment it writes. */
#define RP_COUNTER_LOST_WRITE  "lost.write"

/* How far beyond the pools' defined entries a new id may lie (see Payload above).
 * Ids are dense in a file as written; gaps appear only where a damaged segment's
 * definitions were lost, and 64 Ki covers far more than one segment defines. */
#define RP_POOL_ID_SLACK   65536u

#endif /* RINGPROF_FORMAT_H */
