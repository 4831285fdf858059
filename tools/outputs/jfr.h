/*
 * tools/outputs/jfr.h — the JDK Flight Recorder file format, as far as
 * `ringprof convert --format jfr` writes it: the chunk header, the self-describing
 * metadata event (the types below), the checkpoint event that holds the constant
 * pools, and the encoding of values.
 *
 * The format (JDK 11+, version 2.0, the one JMC, IntelliJ IDEA, the JDK's `jfr`
 * tool and the streaming API read): a file is one or more chunks; a chunk is a
 * 68-byte header, then events, each "varint size (of the whole event, itself
 * included), varint type id, fields". Type 0 is the metadata event: a string
 * table and an element tree ("root" > "metadata" > "class" > "field" and
 * "annotation") that names every type, its fields in order and their
 * annotations, so a reader needs no other knowledge of them. Type 1 is a
 * checkpoint: constant pools, "varint type id, varint count, entries", each entry
 * "varint id, fields". A field marked constantPool holds an id into its type's
 * pool (0: null when the pool has no entry 0). With the header's compressed-integers
 * flag every integer of 16 bits or more is a varint (7 bits a byte, low first, the
 * 9th byte whole) of the value at its declared width, as the JDK writes it: a long
 * is its 64 bits (-1: 9 bytes), an int its 32 bits unsigned (-1: 0xffffffff, 5
 * bytes), a short or char its 16 (3 bytes at most). Readers hold an int to 5 bytes
 * (async-profiler's converter and jfr-parser, Pyroscope's, fail on more). byte and
 * boolean are one byte, float 4 bytes big-endian (the writer has no double, short
 * or char field); strings are "byte encoding" (0 null, 1 empty, 3 UTF-8 with varint
 * length).
 *
 * Times are ticks; the writer makes a tick one nanosecond of CLOCK_REALTIME
 * (ticksPerSecond 1e9), so a reader's time is startNanos + (ticks - startTicks).
 *
 * The types are the JDK's own where the JDK has one (jdk.ExecutionSample,
 * java.lang.Thread, jdk.types.StackTrace, ...), with the JDK's fields, names,
 * types, order and annotations (JDK 25's, which has JDK 17's), so viewers treat
 * the events as the JVM's; a JDK type has no field the JDK does not declare, as
 * readers such as async-profiler's converter read some field by field. What
 * ringprof adds is in types named ringprof.*, one event per sample beside the
 * JDK's. A few JDK event types are declared and never written, for the JDK's
 * views that read them (JFR_SHUTDOWN ...). docs/profiles.md, "jfr", lists them
 * for users.
 */
#ifndef RINGPROF_TOOLS_JFR_H
#define RINGPROF_TOOLS_JFR_H

#include <stddef.h>
#include <stdint.h>

/* Type ids of this writer's metadata. Any numbering works (readers take it from
 * the metadata); events and annotations are grouped for legibility. */
enum rp_jfr_type {
    JFR_METADATA = 0, JFR_CHECKPOINT = 1,
    JFR_BOOLEAN = 4, JFR_CHAR = 5, JFR_FLOAT = 6, JFR_DOUBLE = 7, JFR_BYTE = 8,
    JFR_SHORT = 9, JFR_INT = 10, JFR_LONG = 11, JFR_STRING = 20,

    /* constant pools (and inline structs: StackFrame, VirtualSpace) */
    JFR_CLASS = 21, JFR_THREAD, JFR_CLASS_LOADER, JFR_FRAME_TYPE, JFR_THREAD_STATE,
    JFR_STACK_TRACE, JFR_STACK_FRAME, JFR_METHOD, JFR_PACKAGE, JFR_SYMBOL,
    JFR_THREAD_GROUP, JFR_GC_NAME, JFR_GC_CAUSE, JFR_GC_WHEN, JFR_VIRTUAL_SPACE,
    JFR_OLD_OBJECT, JFR_GC_ROOT, JFR_ROOT_SYSTEM, JFR_ROOT_TYPE, JFR_NARROW_OOP_MODE,

    /* events: the JDK's */
    JFR_EXECUTION_SAMPLE = 101, JFR_NATIVE_METHOD_SAMPLE, JFR_ALLOCATION_SAMPLE,
    JFR_OLD_OBJECT_SAMPLE, JFR_MONITOR_ENTER, JFR_GARBAGE_COLLECTION,
    JFR_GC_PHASE_PAUSE, JFR_GC_HEAP_SUMMARY, JFR_CPU_LOAD, JFR_RESIDENT_SET_SIZE,
    JFR_CLASS_LOADING_STATISTICS, JFR_JVM_INFORMATION, JFR_THREAD_CPU_LOAD,
    JFR_JAVA_THREAD_STATISTICS,
    /* events: the JDK's that ringprof declares and does not write, so that views
     * built on them run (docs/profiles.md, "jfr") */
    JFR_SHUTDOWN, JFR_YOUNG_GARBAGE_COLLECTION, JFR_OLD_GARBAGE_COLLECTION,
    JFR_GC_PHASE_PAUSE_LEVEL1, JFR_GC_PHASE_PAUSE_LEVEL2, JFR_GC_PHASE_PAUSE_LEVEL3,
    JFR_GC_PHASE_PAUSE_LEVEL4, JFR_GC_CONFIGURATION, JFR_GC_HEAP_CONFIGURATION,
    /* events: ringprof's */
    JFR_RP_WALL_SAMPLE = 130, JFR_RP_SAMPLE, JFR_RP_GAUGE, JFR_RP_THREAD_CPU,
    JFR_RP_COUNTER, JFR_RP_RECORDING, JFR_RP_CPU_SAMPLE, JFR_RP_ALLOCATION_SAMPLE,
    JFR_RP_LIVE_OBJECT,
    JFR_EVENT_MAX,

    /* annotations */
    JFR_A_LABEL = 201, JFR_A_DESCRIPTION, JFR_A_CATEGORY, JFR_A_CONTENT_TYPE,
    JFR_A_TIMESTAMP, JFR_A_TIMESPAN, JFR_A_DATA_AMOUNT, JFR_A_MEMORY_ADDRESS,
    JFR_A_UNSIGNED, JFR_A_PERCENTAGE, JFR_A_RELATIONAL, JFR_A_GC_ID, JFR_A_MONITOR_ADDRESS
};

/* Constant pool entries the writer fixes (the other pools are filled as
 * samples arrive). Frame types are the chunk format's rp_frame_type, 0 to 5:
 * the JDK's own ids for Interpreted, JIT compiled, Inlined and Native, and
 * async-profiler's for all six (its converter takes the id for the type, not
 * the pool's name); a marker frame is Native. */
enum {
    JFR_STATE_RUNNABLE = 1, JFR_STATE_SLEEPING, JFR_STATE_IN_OBJECT_WAIT,
    JFR_STATE_PARKED, JFR_STATE_BLOCKED_ON_MONITOR_ENTER, JFR_STATE_UNKNOWN,
    JFR_STATE_COUNT = JFR_STATE_UNKNOWN
};
#define JFR_GC_WHEN_AFTER 1

/* A growing byte buffer. Allocation failure exits (model/xalloc.h). */
struct rp_jfr_buf {
    uint8_t *p;
    size_t n, cap;
};

void rp_jfr_buf_free(struct rp_jfr_buf *b);
void rp_jfr_u8(struct rp_jfr_buf *b, uint8_t v);
void rp_jfr_bytes(struct rp_jfr_buf *b, const void *p, size_t n);
/* A long field, a pool id, a count or a size: a varint of all 64 bits. */
void rp_jfr_varint(struct rp_jfr_buf *b, uint64_t v);
static inline void rp_jfr_long(struct rp_jfr_buf *b, int64_t v)
{
    rp_jfr_varint(b, (uint64_t)v);
}
/* An int field: a varint of its 32 bits (at most 5 bytes, -1 as 0xffffffff). */
static inline void rp_jfr_int(struct rp_jfr_buf *b, int32_t v)
{
    rp_jfr_varint(b, (uint32_t)v);
}
void rp_jfr_bool(struct rp_jfr_buf *b, int v);
void rp_jfr_float(struct rp_jfr_buf *b, float v);
/* A String field: NULL is null; the bytes are written as they are, UTF-8 as
 * ringprof records names (a reader replaces bad sequences). */
void rp_jfr_string(struct rp_jfr_buf *b, const char *s);
/* A string in UTF-8 encoding (3, length, bytes) even when empty: the symbol
 * pool's entries, which async-profiler's converter reads only so. */
void rp_jfr_utf8(struct rp_jfr_buf *b, const char *s);
/* The number of bytes varint v takes. */
size_t rp_jfr_varint_len(uint64_t v);

/* The 68-byte chunk header (big-endian). `size` is the whole chunk's, the offsets
 * are from the chunk's first byte. */
struct rp_jfr_header {
    uint64_t size, cp_offset, meta_offset;
    uint64_t start_nanos, duration_nanos, start_ticks, ticks_per_second;
};
#define RP_JFR_HEADER_SIZE 68
void rp_jfr_header(uint8_t out[RP_JFR_HEADER_SIZE], const struct rp_jfr_header *h);

/* Append the whole metadata event (size, type 0, fields, the element tree of
 * every type this writer uses) to `b`, stamped `ticks`. */
void rp_jfr_metadata(struct rp_jfr_buf *b, int64_t ticks);

/* Close an event whose body (type id and fields) is body[0..n): write "varint
 * size, body" to out. The size counts itself. */
void rp_jfr_event(struct rp_jfr_buf *out, const struct rp_jfr_buf *body);

#endif
