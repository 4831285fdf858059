/*
 * ringprof/ring.h — the per-thread, single-producer single-consumer byte ring.
 *
 * Each application thread owns one ring. The thread itself is the only producer,
 * possibly from inside a signal handler (the CPU-timer sample) and possibly from a
 * JVMTI callback that such a signal interrupts (an allocation sample). The flusher
 * thread is the only consumer. Records are variable-length byte strings; the ring
 * does not look inside them.
 *
 * Layout. `head` and `tail` are 64-bit byte counters that only grow (they never wrap
 * in practice: 2^64 bytes at 10 GB/s is 58 years). The byte at counter value `c`
 * lives at data[c & mask]. Every record is stored as a 4-byte little-endian length
 * followed by that many payload bytes, padded to a multiple of 8 bytes. A record may
 * straddle the end of the data array: it is copied in two pieces. So any record up
 * to rp_ring_max_record() fits into an empty ring.
 *
 * Memory ordering (C11), in the manner of perf_event_mmap_page:
 *
 *   head — written only by the producer.
 *     producer: writes the record bytes, then
 *               atomic_store_explicit(&head, new_head, memory_order_release).
 *     consumer: atomic_load_explicit(&head, memory_order_acquire), then reads the
 *               bytes below that head. The release/acquire pair makes the record
 *               bytes visible before the head that covers them.
 *
 *   tail — written only by the consumer.
 *     consumer: reads the record bytes, then
 *               atomic_store_explicit(&tail, new_tail, memory_order_release).
 *     producer: atomic_load_explicit(&tail, memory_order_acquire), then overwrites
 *               only bytes below tail + capacity. The pair makes the consumer's reads
 *               of old bytes complete before the producer overwrites them.
 *
 *   Counters are written only on the producer's thread and read by anyone with
 *   relaxed loads: they are statistics, and a reader may see them a little late,
 *   never torn. pushed and pushed_bytes are written with relaxed stores by the push
 *   that holds `busy`, which nothing on the thread can interrupt with another such
 *   write. dropped[] and dropped_bytes are updated with relaxed fetch_add, because
 *   a nested push (which never holds `busy`) can interrupt another drop midway
 *   through its update of the same counter; a load-then-store would lose a count.
 *
 * Reentrancy. A push can be interrupted by a signal whose handler pushes to the same
 * ring (an allocation record interrupted by the CPU-timer sample). The ring keeps a
 * producer-private `busy` flag, fenced with atomic_signal_fence. A push that finds
 * the flag set is a nested push: it writes nothing, counts the drop under
 * RP_RING_DROP_NESTED, and returns RP_RING_NESTED. The interrupted push then finishes
 * normally. The nested writer never waits, and the outer record is never torn.
 *
 * Threads. rp_ring_create and rp_ring_destroy may malloc and are not signal-safe:
 * call them before a thread's timer is armed and after it is disarmed. The push
 * functions are async-signal-safe: no malloc, no locks, no syscalls, no TLS. The pop
 * functions belong to the one consumer thread.
 */
#ifndef RINGPROF_RING_H
#define RINGPROF_RING_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Smallest and largest capacity rp_ring_create accepts. 4 KiB is one page; 1 GiB is
 * far beyond any sane per-thread buffer and keeps every offset inside 32 bits. */
#define RP_RING_MIN_CAPACITY ((size_t)4096)
#define RP_RING_MAX_CAPACITY ((size_t)1 << 30)

/* Bytes of framing per record: the 4-byte length, and up to 7 bytes of padding to
 * keep every record header 8-byte aligned. */
#define RP_RING_HEADER_BYTES 4u
#define RP_RING_ALIGN        8u

/* Why a push was refused. Each reason has its own counter. */
enum rp_ring_drop {
    RP_RING_DROP_FULL = 0,   /* not enough free space: the consumer is behind   */
    RP_RING_DROP_NESTED,     /* a signal interrupted a push on the same ring     */
    RP_RING_DROP_TOO_BIG,    /* the record exceeds rp_ring_max_record()          */
    RP_RING_DROP_REASONS
};

/* Return codes of the push functions. */
enum rp_ring_status {
    RP_RING_OK = 0,
    RP_RING_FULL = -1,
    RP_RING_NESTED = -2,
    RP_RING_TOO_BIG = -3
};

struct rp_ring {
    /* Producer cache line. */
    _Alignas(64) _Atomic uint64_t head;
    volatile int busy;                 /* producer-private reentrancy flag       */
    _Atomic uint64_t pushed;           /* records accepted                       */
    _Atomic uint64_t pushed_bytes;     /* payload bytes accepted                 */
    _Atomic uint64_t dropped[RP_RING_DROP_REASONS];
    _Atomic uint64_t dropped_bytes;    /* payload bytes refused, all reasons     */

    /* Consumer cache line. */
    _Alignas(64) _Atomic uint64_t tail;
    uint64_t popped;                   /* consumer-private                       */
    _Atomic uint64_t corrupt;          /* bad length words found (consumer writes,
                                        * relaxed; each discarded the ring's rest) */

    /* Immutable after creation. */
    _Alignas(64) size_t capacity;      /* power of two                           */
    size_t mask;                       /* capacity - 1                           */
    unsigned char *data;
};

/*
 * rp_ring_create: allocate a ring of `capacity` bytes of storage.
 * @capacity must be a power of two in [RP_RING_MIN_CAPACITY, RP_RING_MAX_CAPACITY].
 * @return the ring, or NULL with errno set (EINVAL for a bad capacity, ENOMEM).
 * Allocates; not async-signal-safe. The storage is touched once so that the first
 * push inside a signal handler does not take a page fault.
 */
struct rp_ring *rp_ring_create(size_t capacity);

/* rp_ring_destroy: free the ring. No producer or consumer may use it any more.
 * Not async-signal-safe. NULL is accepted. */
void rp_ring_destroy(struct rp_ring *ring);

/* rp_ring_max_record: the largest payload a push can ever accept, in bytes:
 * capacity minus one record header, rounded down to RP_RING_ALIGN. */
size_t rp_ring_max_record(const struct rp_ring *ring);

/*
 * rp_ring_push: append one record of `len` payload bytes, copied from `rec`.
 * @return RP_RING_OK, or RP_RING_FULL / RP_RING_NESTED / RP_RING_TOO_BIG after
 * counting the drop. Never blocks, never allocates. Async-signal-safe.
 * Caller: the ring's owning thread only (or a signal handler running on it).
 * A zero-length record is legal.
 */
int rp_ring_push(struct rp_ring *ring, const void *rec, size_t len);

/*
 * rp_ring_pushv: as rp_ring_push, but the payload is the concatenation of `iovcnt`
 * pieces (for example a fixed header followed by a frame array), so the caller need
 * not assemble it in a scratch buffer first. Async-signal-safe. `iovcnt` 0 pushes
 * an empty record. A negative `iovcnt`, or lengths whose sum overflows size_t, can
 * never fit: RP_RING_TOO_BIG, counted with 0 dropped bytes since no size is real.
 */
int rp_ring_pushv(struct rp_ring *ring, const struct iovec *iov, int iovcnt);

/*
 * rp_ring_drop_nested: count a record of `len` bytes that its producer could not
 * even assemble because an interrupted push of its own thread was using what it
 * needed (a nested push in all but name). @return RP_RING_NESTED.
 * Async-signal-safe; the ring's owning thread (or its signal handler) only.
 */
int rp_ring_drop_nested(struct rp_ring *ring, size_t len);

/* rp_ring_fill: bytes in use (records and their headers) at this instant: a
 * snapshot that may be stale as soon as it is read. Any thread; async-signal-safe.
 * A producer that is not a signal handler uses it to wake its consumer early. */
static inline size_t rp_ring_fill(const struct rp_ring *ring)
{
    return (size_t)(atomic_load_explicit(&ring->head, memory_order_relaxed) -
                    atomic_load_explicit(&ring->tail, memory_order_relaxed));
}

/*
 * rp_ring_pop: copy the oldest record into `buf` (capacity `cap`) and release it.
 * @return the record's payload length (0 is a valid empty record), -1 if the ring is
 * empty, or -2 if `cap` is too small (the record stays; rp_ring_peek_len tells the
 * size). Caller: the consumer thread only.
 * A length word that cannot be right (its frame would run past head: a scribbled
 * ring) is never trusted: everything up to head is discarded (tail = head), the
 * ring's `corrupt` counter goes up by one, and the ring reads as empty (-1).
 */
long rp_ring_pop(struct rp_ring *ring, void *buf, size_t cap);

/* rp_ring_peek_len: payload length of the oldest record, or -1 if the ring is empty
 * (or its length word was bad: discarded as in rp_ring_pop).
 * Caller: the consumer thread only. */
long rp_ring_peek_len(struct rp_ring *ring);

/*
 * rp_ring_drain: hand every record present now to `fn`, oldest first, then release
 * them all with one tail store. `fn` gets a pointer to a contiguous copy of the
 * payload (in `scratch`, which must hold rp_ring_max_record() bytes) or, when the
 * record does not straddle the end of the array, directly into the ring. `fn` must
 * not keep the pointer. Stops early if `fn` returns non-zero; the records handed over
 * so far are released. @return the number of records handed to `fn`.
 * A bad length word is handled as in rp_ring_pop: the records before it are
 * handed over, the rest up to head is discarded and counted in `corrupt`; it
 * never aborts and never copies out of bounds. Caller: the consumer thread only.
 */
typedef int (*rp_ring_fn)(void *arg, const void *rec, size_t len);
size_t rp_ring_drain(struct rp_ring *ring, rp_ring_fn fn, void *arg, void *scratch);

/* Snapshot of the counters, for status and for the chunk's loss record.
 * Any thread; values may be slightly stale but are never torn. */
struct rp_ring_stats {
    uint64_t pushed, pushed_bytes;
    uint64_t dropped[RP_RING_DROP_REASONS];
    uint64_t dropped_bytes;
    uint64_t used_bytes;     /* head - tail at the time of the snapshot */
    uint64_t capacity;
    uint64_t corrupt;        /* times pop/drain found a bad length word      */
};
void rp_ring_stats(const struct rp_ring *ring, struct rp_ring_stats *out);

/* Name of a drop reason as it appears in chunk counters and in status output:
 * "ring_full", "nested", "too_big". */
const char *rp_ring_drop_name(enum rp_ring_drop reason);

#ifdef __cplusplus
}
#endif
#endif /* RINGPROF_RING_H */
