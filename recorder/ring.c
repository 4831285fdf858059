/*
 * recorder/ring.c — the per-thread SPSC byte ring (contract in ringprof/ring.h).
 *
 * One application thread pushes, possibly from a signal handler; the flusher pops.
 * The two sides share nothing but the `head` and `tail` counters and the bytes
 * between them, so the push path is a handful of loads, one or two memcpy calls
 * and one release store: no locks, no syscalls, no allocation, which is what makes
 * it safe inside the CPU-timer signal handler. A record is framed as a 4-byte
 * little-endian length and the payload, padded so that the next frame starts on an
 * 8-byte boundary. Because the capacity is a multiple of 8, a frame's length word
 * never straddles the end of the array; only the payload may, and it is then
 * copied in two pieces, so the whole capacity is usable for one record.
 *
 * Reentrancy is handled by the producer-private `busy` flag rather than by making
 * the push itself reentrant: a signal that lands mid-push drops its own record
 * (counted as "nested") and the interrupted record completes untouched.
 */
#include "ringprof/ring.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The handler-side push must not fall back to a lock inside libatomic. long long is
 * 64 bits wherever this compiles, so its lock-freedom is that of head and tail. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");
_Static_assert(sizeof(long long) == sizeof(uint64_t), "long long must be 64 bits");
_Static_assert(RP_RING_MIN_CAPACITY % RP_RING_ALIGN == 0,
               "length words must never straddle the end of the array");
_Static_assert(RP_RING_MAX_CAPACITY <= UINT32_MAX, "lengths fit the 32-bit frame word");

/* Bytes a record of `len` payload bytes occupies in the ring, framing included. */
static inline uint64_t frame_bytes(size_t len)
{
    return ((uint64_t)len + RP_RING_HEADER_BYTES + RP_RING_ALIGN - 1) &
           ~(uint64_t)(RP_RING_ALIGN - 1);
}

/* ---- creation ------------------------------------------------------------- */

struct rp_ring *rp_ring_create(size_t capacity)
{
    if (capacity < RP_RING_MIN_CAPACITY || capacity > RP_RING_MAX_CAPACITY ||
        (capacity & (capacity - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    struct rp_ring *ring = NULL;
    void *data = NULL;
    int err = posix_memalign((void **)&ring, 64, sizeof(*ring));
    if (err == 0)
        err = posix_memalign(&data, 4096, capacity);
    if (err != 0) {
        free(ring);
        errno = err;
        return NULL;
    }
    memset(ring, 0, sizeof(*ring));
    /* Write every page now, so the first push inside a signal handler never takes a
     * first-touch page fault. (posix_memalign, unlike malloc, is not folded with
     * memset into a calloc that would leave the pages untouched.) */
    memset(data, 0, capacity);
    atomic_init(&ring->head, 0);
    atomic_init(&ring->tail, 0);
    ring->capacity = capacity;
    ring->mask = capacity - 1;
    ring->data = data;
    return ring;
}

void rp_ring_destroy(struct rp_ring *ring)
{
    if (ring == NULL)
        return;
    free(ring->data);
    free(ring);
}

size_t rp_ring_max_record(const struct rp_ring *ring)
{
    return (ring->capacity - RP_RING_HEADER_BYTES) & ~(size_t)(RP_RING_ALIGN - 1);
}

/* ---- producer ------------------------------------------------------------- */

static int count_drop(struct rp_ring *ring, enum rp_ring_drop reason, size_t len);

int rp_ring_drop_nested(struct rp_ring *ring, size_t len)
{
    return count_drop(ring, RP_RING_DROP_NESTED, len);
}

/* Count a refused record. A drop can be interrupted by a nested push that drops
 * too (both add to dropped_bytes), so these are read-modify-writes, unlike the
 * pushed counters, which only the push holding `busy` ever writes. Drops are the
 * slow path; the locked add costs nothing that matters there. */
static int count_drop(struct rp_ring *ring, enum rp_ring_drop reason, size_t len)
{
    atomic_fetch_add_explicit(&ring->dropped[reason], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ring->dropped_bytes, len, memory_order_relaxed);
    static const int status[RP_RING_DROP_REASONS] = {
        [RP_RING_DROP_FULL] = RP_RING_FULL,
        [RP_RING_DROP_NESTED] = RP_RING_NESTED,
        [RP_RING_DROP_TOO_BIG] = RP_RING_TOO_BIG,
    };
    return status[reason];
}

/* Copy `n` bytes to ring position `pos`, in two pieces if they straddle the end. */
static inline void copy_in(struct rp_ring *ring, uint64_t pos, const void *src, size_t n)
{
    size_t off = (size_t)(pos & ring->mask);
    size_t room = ring->capacity - off;
    if (n <= room) {
        if (n != 0)   /* src may be NULL for an empty piece; memcpy(NULL) is UB */
            memcpy(ring->data + off, src, n);
        return;
    }
    memcpy(ring->data + off, src, room);
    memcpy(ring->data, (const unsigned char *)src + room, n - room);
}

static inline void put_le32(unsigned char *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 4);
#else
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
#endif
}

/* The push proper; the caller holds `busy`. Writes the frame, then publishes it
 * with the release store of head that the consumer's acquire load pairs with. */
static inline int push_framed(struct rp_ring *ring, const struct iovec *iov, int iovcnt,
                              size_t len)
{
    if (len > rp_ring_max_record(ring))
        return count_drop(ring, RP_RING_DROP_TOO_BIG, len);
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    /* Acquire: the consumer has finished reading every byte below tail. */
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    uint64_t frame = frame_bytes(len);
    if (frame > ring->capacity - (head - tail))
        return count_drop(ring, RP_RING_DROP_FULL, len);

    put_le32(ring->data + (head & ring->mask), (uint32_t)len);
    uint64_t pos = head + RP_RING_HEADER_BYTES;
    for (int i = 0; i < iovcnt; i++) {
        copy_in(ring, pos, iov[i].iov_base, iov[i].iov_len);
        pos += iov[i].iov_len;
    }
    /* Only the busy holder writes these, so a plain load and store suffice. */
    atomic_store_explicit(&ring->pushed,
        atomic_load_explicit(&ring->pushed, memory_order_relaxed) + 1,
        memory_order_relaxed);
    atomic_store_explicit(&ring->pushed_bytes,
        atomic_load_explicit(&ring->pushed_bytes, memory_order_relaxed) + len,
        memory_order_relaxed);
    atomic_store_explicit(&ring->head, head + frame, memory_order_release);
    return RP_RING_OK;
}

/* Take `busy`, push, release `busy`. The check and the set need not be one atomic
 * step: a signal between them runs its whole push before this one reads any ring
 * state. The signal fences keep the compiler from moving ring accesses outside
 * the flagged region, as seen by a handler on this same thread. */
static inline int push_guarded(struct rp_ring *ring, const struct iovec *iov, int iovcnt,
                               size_t len)
{
    if (ring->busy)
        return count_drop(ring, RP_RING_DROP_NESTED, len);
    ring->busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    int rc = push_framed(ring, iov, iovcnt, len);
    atomic_signal_fence(memory_order_seq_cst);
    ring->busy = 0;
    return rc;
}

int rp_ring_push(struct rp_ring *ring, const void *rec, size_t len)
{
    struct iovec one = { .iov_base = (void *)rec, .iov_len = len };
    return push_guarded(ring, &one, 1, len);
}

int rp_ring_pushv(struct rp_ring *ring, const struct iovec *iov, int iovcnt)
{
    /* A negative count, or lengths whose sum overflows, can never fit. Refuse it
     * as too big rather than wrap and copy garbage; there is no true byte count to
     * add to dropped_bytes, so it adds none. */
    size_t len = 0;
    int bad = iovcnt < 0;
    for (int i = 0; i < iovcnt && !bad; i++) {
        bad = iov[i].iov_len > SIZE_MAX - len;
        len += bad ? 0 : iov[i].iov_len;
    }
    if (bad)
        return count_drop(ring, RP_RING_DROP_TOO_BIG, 0);
    return push_guarded(ring, iov, iovcnt, len);
}

/* ---- consumer ------------------------------------------------------------- */

static inline uint32_t get_le32(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
#endif
}

/* Consumer's view: the oldest record's position and the head that bounds it. */
struct span {
    uint64_t tail, head;
};

static inline struct span consumer_span(struct rp_ring *ring)
{
    struct span s;
    s.tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);   /* ours */
    /* Acquire: every byte below head was written before head was published. */
    s.head = atomic_load_explicit(&ring->head, memory_order_acquire);
    return s;
}

/* Length of the record framed at `pos`, or -1 if its frame would run past head,
 * which only a scribbled ring or a broken producer could produce. The length is
 * never trusted further than that: it bounds every copy that follows. */
static inline int64_t record_len(const struct rp_ring *ring, struct span s, uint64_t pos)
{
    uint32_t len = get_le32(ring->data + (pos & ring->mask));
    if (frame_bytes(len) > s.head - pos)
        return -1;
    return len;
}

/* A bad length word: nothing from `pos` to head can be framed again. Drop it all
 * (the producer only ever appends above head, so this loses no later record) and
 * count it. */
static void discard_corrupt(struct rp_ring *ring, struct span s)
{
    atomic_fetch_add_explicit(&ring->corrupt, 1, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, s.head, memory_order_release);
}

/* Copy the `len` payload bytes of the record framed at `pos` into `dst`. */
static void copy_out(const struct rp_ring *ring, uint64_t pos, void *dst, size_t len)
{
    size_t off = (size_t)((pos + RP_RING_HEADER_BYTES) & ring->mask);
    size_t room = ring->capacity - off;
    if (len <= room) {
        if (len != 0)   /* dst may be NULL for an empty record */
            memcpy(dst, ring->data + off, len);
        return;
    }
    memcpy(dst, ring->data + off, room);
    memcpy((unsigned char *)dst + room, ring->data, len - room);
}

/* The payload of the record framed at `pos`: in place when it is contiguous,
 * else reassembled in `scratch`. */
static const void *record_view(const struct rp_ring *ring, uint64_t pos, size_t len,
                               void *scratch)
{
    size_t off = (size_t)((pos + RP_RING_HEADER_BYTES) & ring->mask);
    if (len <= ring->capacity - off)
        return ring->data + off;
    copy_out(ring, pos, scratch, len);
    return scratch;
}

/* Release everything below `tail` to the producer. Release: our reads of those
 * bytes happen before the producer, after its acquire load of tail, reuses them. */
static inline void release_to(struct rp_ring *ring, uint64_t tail)
{
    atomic_store_explicit(&ring->tail, tail, memory_order_release);
}

long rp_ring_peek_len(struct rp_ring *ring)
{
    struct span s = consumer_span(ring);
    if (s.head == s.tail)
        return -1;
    int64_t len = record_len(ring, s, s.tail);
    if (len < 0)
        discard_corrupt(ring, s);
    return (long)len;
}

long rp_ring_pop(struct rp_ring *ring, void *buf, size_t cap)
{
    struct span s = consumer_span(ring);
    if (s.head == s.tail)
        return -1;
    int64_t sl = record_len(ring, s, s.tail);
    if (sl < 0) {
        discard_corrupt(ring, s);
        return -1;
    }
    uint32_t len = (uint32_t)sl;
    if (len > cap)
        return -2;
    copy_out(ring, s.tail, buf, len);
    release_to(ring, s.tail + frame_bytes(len));
    ring->popped++;
    return (long)len;
}

size_t rp_ring_drain(struct rp_ring *ring, rp_ring_fn fn, void *arg, void *scratch)
{
    struct span s = consumer_span(ring);
    uint64_t tail = s.tail;
    size_t n = 0;
    while (tail != s.head) {
        int64_t sl = record_len(ring, s, tail);
        if (sl < 0) {
            /* The records before it were handed over; the rest is lost. */
            atomic_fetch_add_explicit(&ring->corrupt, 1, memory_order_relaxed);
            tail = s.head;
            break;
        }
        uint32_t len = (uint32_t)sl;
        const void *rec = record_view(ring, tail, len, scratch);
        tail += frame_bytes(len);
        n++;
        if (fn(arg, rec, len) != 0)
            break;
    }
    /* One store for the batch: the producer sees the space freed all at once, and
     * the records `fn` was given stay intact until it has returned. */
    if (tail != s.tail) {
        release_to(ring, tail);
        ring->popped += n;
    }
    return n;
}

/* ---- any thread ----------------------------------------------------------- */

void rp_ring_stats(const struct rp_ring *ring, struct rp_ring_stats *out)
{
    /* Tail first, with acquire: the consumer acquired a head at least this tail
     * before storing it, so the head read next is no smaller. It may exceed
     * tail + capacity if the consumer moved in between, hence the clamp. */
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    uint64_t used = head - tail;
    out->used_bytes = used > ring->capacity ? ring->capacity : used;
    out->capacity = ring->capacity;
    out->pushed = atomic_load_explicit(&ring->pushed, memory_order_relaxed);
    out->pushed_bytes = atomic_load_explicit(&ring->pushed_bytes, memory_order_relaxed);
    for (int r = 0; r < RP_RING_DROP_REASONS; r++)
        out->dropped[r] = atomic_load_explicit(&ring->dropped[r], memory_order_relaxed);
    out->dropped_bytes = atomic_load_explicit(&ring->dropped_bytes, memory_order_relaxed);
    out->corrupt = atomic_load_explicit(&ring->corrupt, memory_order_relaxed);
}

const char *rp_ring_drop_name(enum rp_ring_drop reason)
{
    switch (reason) {
    case RP_RING_DROP_FULL:    return "ring_full";
    case RP_RING_DROP_NESTED:  return "nested";
    case RP_RING_DROP_TOO_BIG: return "too_big";
    default:                   return "unknown";
    }
}
