/*
 * ringprof/chunk.h — writing and reading one chunk file (format: ringprof/format.h).
 *
 * Writer. One thread (the flusher) owns a writer. It interns pool entries (strings,
 * classes, methods, frames, stacks, threads, event kinds) and appends events; the
 * writer encodes them into the current segment's buffer at once, pool records before
 * the events that use them. rp_chunk_flush compresses that buffer into one segment
 * and writes it with a single write; rp_chunk_close writes the last segment with
 * RP_SEG_LAST. Ids are valid only inside the chunk that issued them: a new writer
 * starts again from 1, so callers that cache ids key the cache by writer.
 *
 * Failures. Interning fails (returns 0 with errno set) only for memory (ENOMEM), or
 * for arguments out of range (EINVAL: an id this chunk never issued, a string over
 * RP_CHUNK_STRING_MAX bytes, a stack over RP_CHUNK_STACK_MAX frames); the event that
 * would have used it should be dropped and counted by the caller. A write error
 * (ENOSPC, EFBIG, EIO, ...) loses that segment only: the file is cut back to its
 * last good length, the loss is counted (rp_chunk_writer_stats.segments_failed) and
 * later segments are written as usual. Pool records in a lost segment are re-emitted, with
 * the same ids, at the start of the next segment, so the chunk stays
 * self-consistent and ids the caller cached stay valid. The lost segment's counters
 * are carried into the next one, together with RP_COUNTER_LOST_WRITE (its samples),
 * so the chunk's loss totals still add up.
 *
 * A process that lowers RLIMIT_FSIZE must ignore SIGXFSZ (the agent does), or the
 * write that crosses the limit kills it instead of failing with EFBIG.
 *
 * Segment size. A segment whose records reach RP_CHUNK_SEGMENT_SOFT_MAX bytes is
 * flushed by the call that crossed the mark, so no segment exceeds RP_SEG_MAX_RAW
 * however rarely the caller flushes. (If write failures piled up more pool records
 * than that, the flush writes them as several segments, split between records.
 * After a failed flush, the next automatic one waits for another soft maximum.) A
 * SAMPLES record is closed at RP_CHUNK_BATCH_MAX bytes and the next sample opens
 * another.
 *
 * Reader. Streams a chunk: header metadata first, then events in file order. Pools
 * are kept in memory (they are small); samples are not. Every problem is reported to
 * a diagnostic callback with the file, the byte offset and the reason (malformed
 * records beyond the 8th in one segment in a single summary line), and reading
 * resumes at the next segment it can find. Nothing in a damaged file can make the
 * reader crash, loop, or allocate more than one segment's payload (at most
 * RP_SEG_MAX_RAW, and at most 256 times the segment's size in the file) plus the
 * pools (and liblz4's decompression buffers, a few MiB at most). The pools grow only
 * with definitions actually present (format.h: RP_POOL_ID_SLACK), each within the
 * writer's limits below, and only within their budget (RP_READER_POOL_FACTOR).
 *
 * Neither side is async-signal-safe; both allocate.
 */
#ifndef RINGPROF_CHUNK_H
#define RINGPROF_CHUNK_H

#include <stddef.h>
#include <stdint.h>
#include "ringprof/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A metadata entry. */
struct rp_kv {
    const char *key;
    const char *value;
};

/* Maximum event-kind extra fields (alloc: class, size, objects, length; live:
 * those and two ages; wall: state; ...). A reader keeps the first RP_MAX_EXTRA
 * of a kind that has more (a newer writer's) and skips the rest. */
#define RP_MAX_EXTRA 8

/* Writer limits (see Failures and Segment size above). A string record can be at
 * most 1 MiB and a stack record at most 5 MiB (1 Mi frames of <= 5 bytes), so with
 * the soft maximum at 48 MiB no segment reaches RP_SEG_MAX_RAW (64 MiB). */
#define RP_CHUNK_STRING_MAX       (1u << 20)
#define RP_CHUNK_STACK_MAX        (1u << 20)
#define RP_CHUNK_SEGMENT_SOFT_MAX (48u << 20)
#define RP_CHUNK_BATCH_MAX        (256u << 10)

/* Reader limits. A reader refuses a STRING over RP_CHUNK_STRING_MAX bytes and a
 * STACK over RP_CHUNK_STACK_MAX frames, as the writer does. And the pools it keeps
 * (entries, their strings and frames, the id tables) stay within
 * RP_READER_POOL_FACTOR times the bytes of the file read so far, plus
 * RP_READER_POOL_SLACK: LZ4 packs up to 255 bytes into one, so without the budget
 * 240 KB of file could define 60 MiB of strings, a segment at a time. A definition
 * past the budget is refused and reported like any malformed record (its id then
 * reads as undefined). The slack holds the largest entry the format allows (a
 * stack of RP_CHUNK_STACK_MAX frames takes 4 MiB) twice over, in a file of any
 * size. The agent's recordings stay far below the factor: their pools take at
 * most about 5 times the file on the workloads measured (docs/format.md,
 * "Reading", and `ringprof summary --chunks`); a file the writer accepts can still pass it (a thousand 1 MiB
 * strings of one repeated byte). */
#define RP_READER_POOL_FACTOR     16u
#define RP_READER_POOL_SLACK      (8u << 20)

/* ------------------------------------------------------------------ writer -- */

struct rp_chunk_writer;

struct rp_chunk_writer_stats {
    uint64_t segments_written;
    uint64_t segments_failed;      /* lost to write errors                        */
    uint64_t bytes_written;        /* file length: header plus good segments      */
    uint64_t raw_bytes;            /* payload bytes before compression, written   */
    uint64_t samples_written;      /* samples in segments that reached the file   */
    uint64_t samples_failed;       /* samples in segments lost to write errors    */
    uint64_t pending_samples;      /* in the open segment buffer                  */
    uint64_t pending_raw_bytes;
    int last_errno;                /* errno of the latest write failure, or 0     */
};

/*
 * rp_chunk_writer_open: create `path` (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600) and
 * write the file header with `meta` (n entries). RP_META_START_WALL and
 * RP_META_START_MONO are added by the writer (read from the clocks at open) unless
 * `meta` has them.
 * @return the writer, or NULL with errno set; `err` (if not NULL, `errlen` bytes)
 * receives a one-line reason naming the path.
 */
struct rp_chunk_writer *rp_chunk_writer_open(const char *path,
                                             const struct rp_kv *meta, size_t n,
                                             char *err, size_t errlen);

/*
 * rp_chunk_writer_openat: rp_chunk_writer_open, but the file is created as `name`
 * in the directory `dfd` (openat with O_CREAT|O_EXCL|O_NOFOLLOW; AT_FDCWD as in
 * openat), so a caller that holds a checked directory (ringprof/trust.h) never
 * resolves its path again. `path` is what rp_chunk_writer_path and `err` call the
 * file (usually the directory's path and `name`); it is never opened. The writer
 * keeps no reference to `dfd`: the caller may close it at any time. A header
 * that cannot be written removes `name` from `dfd`.
 */
struct rp_chunk_writer *rp_chunk_writer_openat(int dfd, const char *name,
                                               const char *path,
                                               const struct rp_kv *meta, size_t n,
                                               char *err, size_t errlen);

/* Interning. Each returns the id (>= 1), the same id for the same content within
 * this chunk, or 0 if memory ran out. Strings may contain any bytes. */
uint32_t rp_chunk_string(struct rp_chunk_writer *w, const char *s, size_t len);
uint32_t rp_chunk_cstring(struct rp_chunk_writer *w, const char *s);
uint32_t rp_chunk_class(struct rp_chunk_writer *w, uint32_t name);
uint32_t rp_chunk_method(struct rp_chunk_writer *w, uint32_t klass, uint32_t name,
                         uint32_t signature, uint32_t file, uint32_t flags);
/* bci < 0: none; line 0: unknown. */
uint32_t rp_chunk_frame(struct rp_chunk_writer *w, uint32_t method,
                        enum rp_frame_type type, int32_t bci, uint32_t line);
/* frames[0] is the leaf. n may be 0 (an empty stack, e.g. a failed walk). */
uint32_t rp_chunk_stack(struct rp_chunk_writer *w, const uint32_t *frames,
                        uint32_t n, uint32_t flags);
/* An event kind: name ("cpu"), unit ("ns"), nominal weight of one sample, and the
 * names of the extra fields its samples carry (at most RP_MAX_EXTRA). Interned by
 * name: the first definition of a name wins. */
uint32_t rp_chunk_kind(struct rp_chunk_writer *w, const char *name, const char *unit,
                       uint64_t period, const char *const *extra_names,
                       uint32_t nextra);

/*
 * rp_chunk_thread: the chunk's id for the caller's thread `key` (any stable 64-bit
 * value, e.g. an agent slot number). The first call for a key, and any call whose
 * os_tid, java_tid, name or flags differ from the last one written, emits a THREAD
 * record stamped `time` (monotonic ns). @return the id, or 0 if memory ran out.
 */
uint32_t rp_chunk_thread(struct rp_chunk_writer *w, uint64_t key, uint64_t os_tid,
                         uint64_t java_tid, const char *name, uint32_t flags,
                         uint64_t time);

/*
 * rp_chunk_vthread: the chunk's VTHREAD id for the virtual thread whose
 * java.lang.Thread id is `java_tid` (not 0). The first call for an id, and a call
 * whose name differs from the last one written, emits a VTHREAD record stamped
 * `time`. `name` may be NULL (not known). @return the id, or 0 if memory ran out
 * (or java_tid is 0).
 */
uint32_t rp_chunk_vthread(struct rp_chunk_writer *w, uint64_t java_tid, const char *name,
                          uint64_t time);

/*
 * rp_chunk_sample: append one sample. `time` is monotonic ns; `extra` holds the
 * kind's nextra values (NULL if it has none). `thread` and `stack` may be 0 (none);
 * `kind` may not. Consecutive samples of the same kind and thread, in time order,
 * share one SAMPLES record. @return 0, or -1 (ENOMEM, or EINVAL for an id this
 * chunk never issued, or extra NULL for a kind that has extra fields).
 */
int rp_chunk_sample(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                    uint64_t time, uint32_t stack, uint64_t weight,
                    const uint64_t *extra);

/* rp_chunk_sample of a sample that ran on virtual thread `vthread` (an id of
 * rp_chunk_vthread; 0: none, which is rp_chunk_sample) carried by `thread`. A
 * SAMPLES record that holds one such sample carries every sample's vthread id
 * (format.h), so a carrier costs one byte a sample more while it carries. */
int rp_chunk_sample_vt(struct rp_chunk_writer *w, uint32_t kind, uint32_t thread,
                       uint32_t vthread, uint64_t time, uint32_t stack, uint64_t weight,
                       const uint64_t *extra);

/* Add `delta` to the named counter for this segment (emitted at flush if nonzero).
 * These three return 0, or -1 with errno (ENOMEM; EINVAL for a thread id this chunk
 * never issued). A thread of 0 is accepted (none). */
int rp_chunk_counter(struct rp_chunk_writer *w, const char *name, uint64_t delta);
/* A thread's cumulative CPU time, read at `time`. */
int rp_chunk_thread_cpu(struct rp_chunk_writer *w, uint32_t thread, uint64_t time,
                        uint64_t cpu_ns);
/* A named level at an instant. */
int rp_chunk_gauge(struct rp_chunk_writer *w, const char *name, uint64_t time,
                   uint64_t value);

/*
 * rp_chunk_flush: end the current segment: compress and write it. An empty segment
 * (no records) writes nothing. @return 0, or -1 with errno from the failed write;
 * the writer stays usable either way (see Failures above).
 */
int rp_chunk_flush(struct rp_chunk_writer *w);

/*
 * rp_chunk_close: flush what is pending as the last segment (RP_SEG_LAST, written
 * even if empty), fsync, close and free. @return 0, or -1 if the final write, fsync
 * or close failed (the writer is freed regardless). NULL is accepted.
 */
int rp_chunk_close(struct rp_chunk_writer *w);

/*
 * rp_chunk_close_carry: rp_chunk_close, but when the last segment cannot be written
 * (the disk is still full), every counter it would have carried — the losses of this
 * and earlier failed segments, and RP_COUNTER_LOST_WRITE for their samples — is
 * handed to `fn` (name, value) before the writer is freed, so the caller can add
 * them to its next chunk and no loss goes uncounted. `fn` is not called when the
 * close wrote everything. Names longer than 255 bytes are cut.
 */
typedef void (*rp_chunk_counter_fn)(void *arg, const char *name, uint64_t value);
int rp_chunk_close_carry(struct rp_chunk_writer *w, rp_chunk_counter_fn fn, void *arg);

/*
 * rp_chunk_close_stats: rp_chunk_close_carry, and the writer's final figures in
 * *out (NULL: not wanted), taken after the last write: samples_failed then counts
 * every sample this chunk lost to write errors, the last segment's included, which
 * is what RP_COUNTER_LOST_WRITE adds up to in the files.
 */
int rp_chunk_close_stats(struct rp_chunk_writer *w, rp_chunk_counter_fn fn, void *arg,
                         struct rp_chunk_writer_stats *out);

/* Abandon: close the file descriptor and free, writing nothing more (used when the
 * process must not block, or after the file was deleted underneath). */
void rp_chunk_abandon(struct rp_chunk_writer *w);

void rp_chunk_writer_stats(const struct rp_chunk_writer *w,
                           struct rp_chunk_writer_stats *out);
const char *rp_chunk_writer_path(const struct rp_chunk_writer *w);
/* Monotonic ns at which the writer was opened (its RP_META_START_MONO). */
uint64_t rp_chunk_writer_start_mono(const struct rp_chunk_writer *w);

/*
 * A segment's payload as the writer compresses it: one LZ4 frame of 256 KiB
 * linked blocks with its content size and content checksum (format.h).
 * rp_chunk_segment_bound is the most rp_chunk_segment_compress can write for
 * `len` bytes; rp_chunk_segment_compress returns the frame's size, or 0 when
 * `cap` is too small. The writer uses these, and so does the fuzzers' mutator
 * (tests/fuzz/chunk_mutator.c), so a re-compressed segment is one the writer
 * could have written. Pure; any thread.
 */
size_t rp_chunk_segment_bound(size_t len);
size_t rp_chunk_segment_compress(void *dst, size_t cap, const void *src, size_t len);

/* ------------------------------------------------------------------ reader -- */

struct rp_reader;

/* Called for every problem found: `offset` is the byte offset in the file where it
 * was found, or RP_READER_NO_OFFSET for the file as a whole (it cannot be opened),
 * `reason` a short sentence. `fatal` is 1 when nothing more can be read from this
 * file. The callback must not call back into the reader. */
typedef void (*rp_reader_diag_fn)(void *arg, const char *path, uint64_t offset,
                                  const char *reason, int fatal);
#define RP_READER_NO_OFFSET UINT64_MAX

enum rp_event_type {
    RP_EV_SEGMENT = 1,   /* a segment begins: rp_event.seg                          */
    RP_EV_SAMPLE,        /* rp_event.sample                                        */
    RP_EV_COUNTER,       /* rp_event.counter                                       */
    RP_EV_THREAD,        /* a THREAD record was read: rp_event.thread.id           */
    RP_EV_THREAD_CPU,    /* rp_event.thread_cpu                                    */
    RP_EV_GAUGE          /* rp_event.gauge                                         */
};

enum rp_seg_status {
    RP_SEGST_OK = 0
};

struct rp_event {
    enum rp_event_type type;
    union {
        struct {
            uint64_t offset;       /* of the segment header in the file            */
            uint32_t seq, flags, raw_len, comp_len, records;
            uint64_t t_first, t_last;
        } seg;
        struct {
            uint32_t kind, thread, stack;
            uint32_t vthread;      /* the VTHREAD it ran on (thread: its carrier), */
                                   /* 0: none                                      */
            uint64_t time;         /* monotonic ns                                */
            uint64_t weight;
            uint32_t nextra;
            uint64_t extra[RP_MAX_EXTRA];
        } sample;
        /* name is NULL if its string was never defined (unresolved_refs). */
        struct { const char *name; uint64_t value; } counter;
        struct { uint32_t id; } thread;
        struct { uint32_t thread; uint64_t time, cpu_ns; } thread_cpu;
        struct { const char *name; uint64_t time, value; } gauge;
    } u;
};

/* What the reader knows of a pool entry. Strings are NUL-terminated copies owned by
 * the reader (valid until rp_reader_close); an unknown id yields NULL. */
struct rp_method_info {
    const char *klass, *name, *signature, *file;
    uint32_t flags;
};
struct rp_frame_info {
    uint32_t method;
    enum rp_frame_type type;
    int32_t bci;       /* -1: none */
    uint32_t line;     /* 0: unknown */
};
struct rp_thread_info {
    uint64_t os_tid, java_tid;
    const char *name;
    uint32_t flags;
    uint64_t time;     /* of the newest THREAD record, monotonic ns */
};
/* A virtual thread (VTHREAD record). */
struct rp_vthread_info {
    uint64_t java_tid;
    const char *name;  /* "" when the writer did not know it */
    uint64_t time;     /* of the newest VTHREAD record, monotonic ns */
};
struct rp_kind_info {
    const char *name, *unit;
    uint64_t period;
    uint32_t nextra;
    const char *extra[RP_MAX_EXTRA];
};

struct rp_reader_stats {
    uint64_t segments_ok;
    uint64_t segments_bad;       /* header or payload damaged, skipped             */
    uint64_t segments_partial;   /* cut off by the end of the file (a live writer, */
                                 /* or a kill mid-write): not damage               */
    uint64_t bytes_skipped;      /* bytes not decoded because of damage (not the   */
                                 /* tail of a partial segment)                     */
    uint64_t records_bad;        /* malformed records skipped                      */
    uint64_t records_unknown;    /* records of a type this reader does not know    */
    uint64_t unresolved_refs;    /* references to ids never defined                */
    uint64_t samples;
    uint64_t pool_bytes;         /* memory the pools hold: at most                 */
                                 /* RP_READER_POOL_FACTOR x bytes read + SLACK     */
    int clean_close;             /* a RP_SEG_LAST segment was read                 */
};

/*
 * rp_reader_open: open a chunk and read its header. @return the reader, or NULL when
 * the file cannot be opened or its header is not a valid ringprof header (the reason
 * goes to `diag` as fatal). `diag` may be NULL (problems are then only counted).
 */
struct rp_reader *rp_reader_open(const char *path, rp_reader_diag_fn diag, void *arg);
void rp_reader_close(struct rp_reader *r);

/* Header metadata: the value for `key`, or NULL. */
const char *rp_reader_meta(const struct rp_reader *r, const char *key);
/* All metadata entries, in file order. */
const struct rp_kv *rp_reader_meta_all(const struct rp_reader *r, size_t *n);
uint32_t rp_reader_format_minor(const struct rp_reader *r);

/*
 * rp_reader_next: the next event. @return 1 with *ev filled, 0 at the end of the
 * file. Damage is reported through diag and skipped, never returned. Pointers inside
 * *ev are valid until the next call.
 */
int rp_reader_next(struct rp_reader *r, struct rp_event *ev);

/* Pool look-ups: NULL (or 0) for an id not (yet) defined. */
const char *rp_reader_string(const struct rp_reader *r, uint32_t id);
/* The same string with its length, for strings that may contain NUL bytes. */
const char *rp_reader_string_len(const struct rp_reader *r, uint32_t id, size_t *len);
const char *rp_reader_class(const struct rp_reader *r, uint32_t id);
const struct rp_method_info *rp_reader_method(const struct rp_reader *r, uint32_t id);
const struct rp_frame_info *rp_reader_frame(const struct rp_reader *r, uint32_t id);
/* The frames of a stack, leaf first; *n and *flags are set. */
const uint32_t *rp_reader_stack(const struct rp_reader *r, uint32_t id, uint32_t *n,
                                uint32_t *flags);
const struct rp_thread_info *rp_reader_thread(const struct rp_reader *r, uint32_t id);
const struct rp_kind_info *rp_reader_kind(const struct rp_reader *r, uint32_t id);
const struct rp_vthread_info *rp_reader_vthread(const struct rp_reader *r, uint32_t id);
/* The highest id defined so far in a pool (ids run 1..count; after damage some in
 * between may be undefined, and look up as NULL). */
uint32_t rp_reader_thread_count(const struct rp_reader *r);
uint32_t rp_reader_kind_count(const struct rp_reader *r);
uint32_t rp_reader_vthread_count(const struct rp_reader *r);

void rp_reader_stats(const struct rp_reader *r, struct rp_reader_stats *out);
const char *rp_reader_path(const struct rp_reader *r);

/*
 * rp_reader_being_written: whether a writer is writing the chunk now: its name
 * ends in ".rpc.part" and a live process holds the flock a recording keeps on
 * the chunk it writes (ringprof/recording.h). @return 1 if so (also in the
 * instant another process's recovery pass holds an orphan's lock); 0 for a
 * finished name, or a ".part" nobody holds (its writer died). The probe takes a
 * shared lock and drops it at once: a recovery pass that meets it leaves the
 * orphan to its next pass, and a writer takes its lock before its first segment,
 * which a reader cannot have found cut short yet.
 */
int rp_reader_being_written(const struct rp_reader *r);

#ifdef __cplusplus
}
#endif
#endif /* RINGPROF_CHUNK_H */
