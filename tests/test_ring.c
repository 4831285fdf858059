/*
 * tests/test_ring.c — single-threaded checks of the ring contract (ringprof/ring.h).
 *
 * Each test drives one property to its edge: capacity validation, empty and full
 * rings, every record size from 0 to rp_ring_max_record() at start offsets that
 * make it straddle the end of the array, push and pushv framing byte for byte,
 * drain's zero-copy and scratch paths, early stop, and the reentrancy guard, both
 * by setting `busy` and by a real signal that lands in the middle of a push's copy.
 * Concurrency is test_ring_stress.c's job.
 */
#include "ringprof/ring.h"
#include "check.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SMALL 4096u

/* Payload byte `i` of the record numbered `seq`: differs between neighbours and
 * across offsets, so a misplaced or stale byte shows. */
static unsigned char pattern(uint32_t seq, size_t i)
{
    uint32_t x = seq * 2654435761u + (uint32_t)i * 40503u;
    return (unsigned char)(x ^ (x >> 13) ^ (x >> 24));
}

static void fill(unsigned char *buf, uint32_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(seq, i);
}

static int matches(const unsigned char *buf, uint32_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern(seq, i))
            return 0;
    return 1;
}

static uint64_t head_of(struct rp_ring *r)
{
    return atomic_load(&r->head);
}

/* Move an empty ring's head (and tail) to `off` modulo the capacity, through the
 * public API: push one filler record of the right frame size and pop it. */
static void move_to(struct rp_ring *r, size_t off, unsigned char *tmp)
{
    size_t delta = (off - (size_t)(head_of(r) & r->mask)) & r->mask;
    if (delta == 0)
        return;
    REQUIRE(delta % RP_RING_ALIGN == 0, "offset %zu not aligned", off);
    /* (check.h's REQUIRE evaluates its condition twice: no side effects in it.) */
    int rc = rp_ring_push(r, tmp, delta - RP_RING_HEADER_BYTES);
    long n = rp_ring_pop(r, tmp, SMALL);
    REQUIRE(rc == RP_RING_OK && n == (long)(delta - RP_RING_HEADER_BYTES), "filler");
}

static void test_create(void)
{
    static const size_t bad[] = { 0, 1, 8, 2048, 3000, 4095, 4097, 6000, 65535,
                                  RP_RING_MAX_CAPACITY + 1, RP_RING_MAX_CAPACITY * 2,
                                  SIZE_MAX };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        errno = 0;
        struct rp_ring *r = rp_ring_create(bad[i]);
        CHECK(r == NULL && errno == EINVAL, "capacity %zu: ring %p errno %d", bad[i],
              (void *)r, errno);
        rp_ring_destroy(r);
    }
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create(4096): %s", strerror(errno));
    CHECK(rp_ring_max_record(r) == SMALL - 8, "max_record %zu", rp_ring_max_record(r));
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.capacity == SMALL && st.used_bytes == 0 && st.pushed == 0, "fresh stats");
    rp_ring_destroy(r);
    rp_ring_destroy(NULL);

    /* The storage must be resident already, so a handler's first push cannot fault. */
    size_t cap = (size_t)1 << 22;
    r = rp_ring_create(cap);
    REQUIRE(r != NULL, "create(4 MiB)");
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = cap / (size_t)page;
    unsigned char vec[(1 << 22) / 4096];
    REQUIRE(pages <= sizeof(vec), "page size %ld", page);
    int rc = mincore(r->data, cap, vec);
    REQUIRE(rc == 0, "mincore: %s", strerror(errno));
    size_t resident = 0;
    for (size_t i = 0; i < pages; i++)
        resident += vec[i] & 1;
    CHECK(resident == pages, "%zu of %zu storage pages resident after create", resident,
          pages);
    rp_ring_destroy(r);
}

static int count_calls(void *arg, const void *rec, size_t len)
{
    (void)rec, (void)len;
    ++*(int *)arg;
    return 0;
}

static void test_empty(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char buf[16], scratch[SMALL];
    int calls = 0;
    CHECK(rp_ring_pop(r, buf, sizeof(buf)) == -1, "pop on empty");
    CHECK(rp_ring_peek_len(r) == -1, "peek on empty");
    CHECK(rp_ring_drain(r, count_calls, &calls, scratch) == 0 && calls == 0,
          "drain on empty: %d calls", calls);
    /* A zero-length record is a record, not emptiness. */
    CHECK(rp_ring_push(r, NULL, 0) == RP_RING_OK, "push empty record");
    CHECK(rp_ring_peek_len(r) == 0, "peek empty record");
    CHECK(rp_ring_pop(r, NULL, 0) == 0, "pop empty record");
    CHECK(rp_ring_pop(r, buf, sizeof(buf)) == -1, "empty again");
    rp_ring_destroy(r);
}

/* Many laps with records of drifting sizes, popped in small batches, so head and
 * tail cross the end of the array at every alignment. */
static void test_wrap(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char in[1024], out[1024];
    uint32_t pushed = 0, popped = 0;
    uint64_t bytes_in = 0, bytes_out = 0;
    int bad = 0;
    while (head_of(r) < 200 * (uint64_t)SMALL) {
        for (int k = 0; k < 5; k++, pushed++) {
            size_t len = (pushed * 37u) % 700;
            fill(in, pushed, len);
            if (rp_ring_push(r, in, len) != RP_RING_OK)
                break;
            bytes_in += len;
        }
        for (long n; popped < pushed && (n = rp_ring_pop(r, out, sizeof(out))) >= 0;) {
            bad += (size_t)n != (popped * 37u) % 700 || !matches(out, popped, (size_t)n);
            bytes_out += (size_t)n;
            popped++;
        }
    }
    CHECK(bad == 0, "%d records came back wrong", bad);
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.pushed == popped && st.pushed_bytes == bytes_out && bytes_in == bytes_out,
          "pushed %llu/%llu bytes, popped %u/%llu", (unsigned long long)st.pushed,
          (unsigned long long)st.pushed_bytes, popped, (unsigned long long)bytes_out);
    CHECK(st.dropped[RP_RING_DROP_FULL] == 0 && st.used_bytes == 0, "no drops, empty");
    CHECK(r->popped == popped, "consumer count %llu", (unsigned long long)r->popped);
    rp_ring_destroy(r);
}

static void test_full(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char rec[100], out[100];
    int ok = 0;
    for (uint32_t i = 0; i < 100; i++) {
        fill(rec, i, sizeof(rec));
        if (rp_ring_push(r, rec, sizeof(rec)) != RP_RING_OK)
            break;
        ok++;
    }
    /* 100 bytes + 4 framing = 104 bytes a frame: 39 frames take 4056 of 4096. */
    CHECK(ok == 39, "%d records fit, expected 39", ok);
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.pushed == 39 && st.pushed_bytes == 3900 && st.used_bytes == 4056,
          "pushed %llu used %llu", (unsigned long long)st.pushed,
          (unsigned long long)st.used_bytes);
    CHECK(st.dropped[RP_RING_DROP_FULL] == 1 && st.dropped_bytes == 100, "one drop counted");
    /* A record that still fits the 40 free bytes goes in; a bigger one does not. */
    CHECK(rp_ring_push(r, rec, 36) == RP_RING_OK, "36 bytes fit the last 40");
    CHECK(rp_ring_push(r, NULL, 0) == RP_RING_FULL, "nothing fits a full ring");
    rp_ring_stats(r, &st);
    CHECK(st.dropped[RP_RING_DROP_FULL] == 2 && st.dropped_bytes == 100, "zero-byte drop");
    /* Popping one frame frees exactly one frame. */
    CHECK(rp_ring_pop(r, out, sizeof(out)) == 100 && matches(out, 0, 100), "oldest first");
    CHECK(rp_ring_push(r, rec, 100) == RP_RING_OK, "room again after a pop");
    CHECK(rp_ring_push(r, rec, 100) == RP_RING_FULL, "and full again");
    rp_ring_stats(r, &st);
    CHECK(st.dropped[RP_RING_DROP_FULL] == 3 && st.dropped_bytes == 200 &&
          st.dropped[RP_RING_DROP_NESTED] == 0 && st.dropped[RP_RING_DROP_TOO_BIG] == 0,
          "drops by reason");
    for (uint32_t i = 1; i < 39; i++)
        CHECK(rp_ring_pop(r, out, sizeof(out)) == 100 && matches(out, i, 100),
              "record %u intact after drops", i);
    rp_ring_destroy(r);
}

struct seen {
    const unsigned char *ptr;
    size_t len;
    int calls;
    uint32_t seq;
    int bad;
};

static int remember(void *arg, const void *rec, size_t len)
{
    struct seen *s = arg;
    s->ptr = rec;
    s->len = len;
    s->calls++;
    s->bad += !matches(rec, s->seq, len);
    return 0;
}

/* Every size from 0 to max_record, at offsets that put the payload before, across
 * and right after the end of the array, through pop, drain and pushv. */
static void test_every_size(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    static unsigned char in[SMALL], out[SMALL], scratch[SMALL], tmp[SMALL];
    size_t max = rp_ring_max_record(r);
    int bad_pop = 0, bad_drain = 0, bad_path = 0, bad_v = 0, refused = 0;
    size_t straddled = 0;   /* sizes that straddled the end at least once */
    for (size_t len = 0; len <= max; len++) {
        int straddles_once = 0;
        size_t offs[] = { 0, SMALL - 8, SMALL - 16, SMALL / 2, (len * 104729u) % SMALL & ~7u };
        for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
            uint32_t seq = (uint32_t)(len * 8 + k);
            fill(in, seq, len);
            move_to(r, offs[k], tmp);
            refused += rp_ring_push(r, in, len) != RP_RING_OK;
            bad_pop += rp_ring_pop(r, out, len) != (long)len || !matches(out, seq, len);

            move_to(r, offs[k], tmp);
            size_t start = (offs[k] + RP_RING_HEADER_BYTES) & r->mask;
            int straddles = len > SMALL - start;
            straddles_once |= straddles;
            refused += rp_ring_push(r, in, len) != RP_RING_OK;
            struct seen s = { .seq = seq };
            bad_drain += rp_ring_drain(r, remember, &s, scratch) != 1 || s.len != len ||
                         s.bad;
            /* Zero-copy exactly when the payload is contiguous in the ring. */
            bad_path += straddles ? s.ptr != scratch : s.ptr != r->data + start;

            move_to(r, offs[k], tmp);
            size_t a = len / 3, b = len / 2 - len / 3;
            struct iovec v[4] = { { in, a }, { NULL, 0 }, { in + a, b },
                                  { in + a + b, len - a - b } };
            refused += rp_ring_pushv(r, v, 4) != RP_RING_OK;
            bad_v += rp_ring_pop(r, out, len) != (long)len || !matches(out, seq, len);
        }
        straddled += straddles_once;
    }
    CHECK(refused == 0, "%d pushes refused on an empty ring", refused);
    CHECK(bad_pop == 0, "%d sizes/offsets wrong through pop", bad_pop);
    CHECK(bad_drain == 0, "%d sizes/offsets wrong through drain", bad_drain);
    CHECK(bad_path == 0, "%d drains used the wrong copy path", bad_path);
    CHECK(bad_v == 0, "%d sizes/offsets wrong through pushv", bad_v);
    /* At offset capacity - 8 the payload starts 4 bytes before the end. */
    CHECK(straddled == max - 4, "only %zu sizes straddled the end", straddled);
    rp_ring_destroy(r);
}

static void test_too_big(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    static unsigned char in[SMALL];
    size_t max = rp_ring_max_record(r);
    CHECK(rp_ring_push(r, in, max + 1) == RP_RING_TOO_BIG, "max + 1");
    CHECK(rp_ring_push(r, in, SMALL) == RP_RING_TOO_BIG, "capacity");
    struct iovec huge[2] = { { in, SIZE_MAX - 10 }, { in, 20 } };
    CHECK(rp_ring_pushv(r, huge, 2) == RP_RING_TOO_BIG, "pushv length overflow");
    CHECK(rp_ring_pushv(r, huge, -1) == RP_RING_TOO_BIG, "negative iovcnt");
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.dropped[RP_RING_DROP_TOO_BIG] == 4, "too_big %llu",
          (unsigned long long)st.dropped[RP_RING_DROP_TOO_BIG]);
    CHECK(st.dropped_bytes == (max + 1) + SMALL, "dropped_bytes %llu",
          (unsigned long long)st.dropped_bytes);
    CHECK(st.used_bytes == 0 && st.pushed == 0 && st.dropped[RP_RING_DROP_FULL] == 0,
          "refusals leave the ring alone");
    CHECK(rp_ring_push(r, in, max) == RP_RING_OK, "max still fits");
    rp_ring_destroy(r);
}

static void test_small_buffer(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char in[100], out[100];
    fill(in, 7, sizeof(in));
    int rc = rp_ring_push(r, in, 100);
    REQUIRE(rc == RP_RING_OK, "push");
    CHECK(rp_ring_pop(r, out, 99) == -2, "pop into 99 bytes");
    CHECK(rp_ring_pop(r, out, 0) == -2, "pop into 0 bytes");
    CHECK(rp_ring_peek_len(r) == 100, "record still there");
    CHECK(rp_ring_pop(r, out, 100) == 100 && matches(out, 7, 100), "then pops whole");
    CHECK(rp_ring_pop(r, out, 100) == -1, "and only once");
    rp_ring_destroy(r);
}

/* push and pushv of the same bytes must leave identical rings. */
static void test_pushv_equals_push(void)
{
    struct rp_ring *a = rp_ring_create(SMALL), *b = rp_ring_create(SMALL);
    REQUIRE(a && b, "create");
    unsigned char in[SMALL];
    for (uint32_t i = 0, len = 0; i < 60; i++, len = (len * 7 + 13) % 300) {
        fill(in, i, len);
        struct iovec v[3] = { { in, len / 4 }, { in + len / 4, 0 }, { in + len / 4, len - len / 4 } };
        int ra = rp_ring_push(a, in, len), rb = rp_ring_pushv(b, v, 3);
        CHECK(ra == rb, "record %u: push %d pushv %d", i, ra, rb);
    }
    CHECK(rp_ring_pushv(b, NULL, 0) == rp_ring_push(a, NULL, 0), "empty pushv");
    CHECK(head_of(a) == head_of(b), "heads %llu %llu", (unsigned long long)head_of(a),
          (unsigned long long)head_of(b));
    /* Padding bytes are never written, and both rings start zeroed: all equal. */
    CHECK(memcmp(a->data, b->data, SMALL) == 0, "ring bytes differ");
    struct rp_ring_stats sa, sb;
    rp_ring_stats(a, &sa);
    rp_ring_stats(b, &sb);
    CHECK(memcmp(&sa, &sb, sizeof(sa)) == 0, "stats differ");
    rp_ring_destroy(a);
    rp_ring_destroy(b);
}

struct stopper {
    struct rp_ring *ring;
    int calls, stop_at, push_late, bad;
};

/* Checks that records arrive in order, stops after the stop_at-th call, and when
 * asked pushes a new record on each call, to show that drain hands over only the
 * records that were there when it started. */
static int stop_early(void *arg, const void *rec, size_t len)
{
    struct stopper *s = arg;
    s->bad += len != 8 || !matches(rec, (uint32_t)s->calls, 8);
    s->calls++;
    if (s->push_late) {
        unsigned char late[8];
        fill(late, 1000 + (uint32_t)s->calls, 8);
        s->bad += rp_ring_push(s->ring, late, 8) != RP_RING_OK;
    }
    return s->calls == s->stop_at;
}

static void test_drain(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char in[8], out[8], scratch[SMALL];
    for (uint32_t i = 0; i < 10; i++) {
        fill(in, i, 8);
        int rc = rp_ring_push(r, in, 8);
        REQUIRE(rc == RP_RING_OK, "push");
    }
    struct stopper s = { .ring = r, .stop_at = 3 };
    CHECK(rp_ring_drain(r, stop_early, &s, scratch) == 3 && s.calls == 3, "stopped at 3");
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.used_bytes == 7 * 16, "the three handed over are released: used %llu",
          (unsigned long long)st.used_bytes);
    CHECK(rp_ring_pop(r, out, 8) == 8 && matches(out, 3, 8), "record 3 is next");

    s = (struct stopper){ .ring = r, .stop_at = -1, .calls = 4, .push_late = 1 };
    CHECK(rp_ring_drain(r, stop_early, &s, scratch) == 6, "the other six, not the late ones");
    CHECK(s.bad == 0, "%d records wrong or late pushes refused", s.bad);
    for (uint32_t i = 5; i <= 10; i++)
        CHECK(rp_ring_pop(r, out, 8) == 8 && matches(out, 1000 + i, 8), "late %u", i);
    CHECK(rp_ring_pop(r, out, 8) == -1, "empty at the end");
    CHECK(r->popped == 16, "consumer count %llu", (unsigned long long)r->popped);
    rp_ring_destroy(r);
}

/* Counts records handed over by drain. */
static int count_rec(void *arg, const void *rec, size_t len)
{
    (void)rec;
    (void)len;
    ++*(int *)arg;
    return 0;
}

/* A scribbled length word (huge, or one running past head) must not abort, copy out
 * of bounds or spin: the records before it are delivered, the rest is discarded and
 * counted in `corrupt`, and the ring works normally afterwards. */
static void test_corrupt_length(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char in[8], out[8], scratch[SMALL];
    static const uint32_t bad[] = {0xffffffffu, 0x7fffffffu, SMALL, 3 * 16};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        for (uint32_t i = 0; i < 4; i++) {
            fill(in, i, 8);
            int rc = rp_ring_push(r, in, 8);
            REQUIRE(rc == RP_RING_OK, "push");
        }
        /* Records are 16 bytes apart; corrupt the third one's length word. */
        uint64_t tail = atomic_load(&r->tail);
        memcpy(r->data + ((tail + 2 * 16) & r->mask), &bad[k], 4);
        int n = 0;
        CHECK(rp_ring_drain(r, count_rec, &n, scratch) == 2 && n == 2,
              "len %#x: the two records before the bad one, got %d", bad[k], n);
        struct rp_ring_stats st;
        rp_ring_stats(r, &st);
        CHECK(st.corrupt == k + 1, "len %#x: corrupt %llu", bad[k],
              (unsigned long long)st.corrupt);
        CHECK(st.used_bytes == 0, "len %#x: the rest discarded", bad[k]);
        fill(in, 99, 8);
        CHECK(rp_ring_push(r, in, 8) == RP_RING_OK && rp_ring_pop(r, out, 8) == 8 &&
              matches(out, 99, 8), "len %#x: the ring works afterwards", bad[k]);
    }
    /* pop and peek_len: report empty, count it, discard. */
    fill(in, 1, 8);
    int rc = rp_ring_push(r, in, 8);
    REQUIRE(rc == RP_RING_OK, "push");
    uint32_t huge = 0xfffffff0u;
    memcpy(r->data + (atomic_load(&r->tail) & r->mask), &huge, 4);
    CHECK(rp_ring_pop(r, out, 8) == -1, "pop of a bad record reads as empty");
    rc = rp_ring_push(r, in, 8);
    REQUIRE(rc == RP_RING_OK, "push");
    memcpy(r->data + (atomic_load(&r->tail) & r->mask), &huge, 4);
    CHECK(rp_ring_peek_len(r) == -1, "peek of a bad record reads as empty");
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.corrupt == 6 && st.used_bytes == 0, "pop and peek counted: %llu",
          (unsigned long long)st.corrupt);
    rp_ring_destroy(r);
}

static void test_nested_flag(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char in[40];
    struct iovec v = { in, 40 };
    r->busy = 1;   /* as if a push were in progress when a handler pushed */
    CHECK(rp_ring_push(r, in, 40) == RP_RING_NESTED, "push while busy");
    CHECK(rp_ring_pushv(r, &v, 1) == RP_RING_NESTED, "pushv while busy");
    CHECK(r->busy == 1, "a nested push must not clear the outer push's flag");
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.dropped[RP_RING_DROP_NESTED] == 2 && st.dropped_bytes == 80 &&
          st.used_bytes == 0 && st.pushed == 0, "nested drops counted, nothing written");
    r->busy = 0;
    CHECK(rp_ring_push(r, in, 40) == RP_RING_OK && r->busy == 0, "push after");
    CHECK(rp_ring_drop_name(RP_RING_DROP_FULL) && !strcmp(rp_ring_drop_name(RP_RING_DROP_FULL), "ring_full"), "name");
    CHECK(!strcmp(rp_ring_drop_name(RP_RING_DROP_NESTED), "nested"), "name");
    CHECK(!strcmp(rp_ring_drop_name(RP_RING_DROP_TOO_BIG), "too_big"), "name");
    CHECK(!strcmp(rp_ring_drop_name(RP_RING_DROP_REASONS), "unknown"), "name");
    rp_ring_destroy(r);
}

/* A real signal in the middle of a push: the record's source runs into a page
 * that is PROT_NONE, so the push's own memcpy faults. The SIGSEGV handler pushes
 * to the same ring, as a CPU-timer sample would, then opens the page; the copy
 * then resumes. The handler's push must be refused as nested, and the
 * interrupted record must arrive whole. A SIGUSR1 raised between pushes shows
 * that a handler's push is accepted when nothing is in progress. */
static struct rp_ring *sig_ring;
static unsigned char *sig_page;
static volatile sig_atomic_t sig_calls, sig_rc;

static void push_from_handler(int sig)
{
    int saved = errno;
    unsigned char rec[24];
    fill(rec, 555, sizeof(rec));
    sig_rc = rp_ring_push(sig_ring, rec, sizeof(rec));
    sig_calls++;
    if (sig == SIGSEGV && mprotect(sig_page, 4096, PROT_READ) != 0)
        _exit(3);
    errno = saved;
}

static void test_nested_signal(void)
{
    struct rp_ring *r = rp_ring_create(SMALL);
    REQUIRE(r != NULL, "create");
    unsigned char *src = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(src != MAP_FAILED, "mmap");
    fill(src, 9, 8192);
    int rc = mprotect(src + 4096, 4096, PROT_NONE);
    REQUIRE(rc == 0, "mprotect");
    sig_ring = r;
    sig_page = src + 4096;
    struct sigaction sa = { .sa_handler = push_from_handler }, old_segv, old_usr1;
    sigemptyset(&sa.sa_mask);
    rc = sigaction(SIGSEGV, &sa, &old_segv) | sigaction(SIGUSR1, &sa, &old_usr1);
    REQUIRE(rc == 0, "sigaction");

    raise(SIGUSR1);
    CHECK(sig_calls == 1 && sig_rc == RP_RING_OK, "idle handler push: %d calls rc %d",
          (int)sig_calls, (int)sig_rc);
    rc = rp_ring_push(r, src + 2048, 3000);   /* faults 2048 bytes in */
    CHECK(sig_calls == 2, "the push's copy did not fault (%d calls)", (int)sig_calls);
    CHECK(sig_rc == RP_RING_NESTED, "handler push inside a push returned %d", (int)sig_rc);
    CHECK(rc == RP_RING_OK, "interrupted push returned %d", rc);

    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGUSR1, &old_usr1, NULL);
    unsigned char out[3000];
    CHECK(rp_ring_pop(r, out, sizeof(out)) == 24 && matches(out, 555, 24), "handler record");
    CHECK(rp_ring_pop(r, out, sizeof(out)) == 3000 && memcmp(out, src + 2048, 3000) == 0,
          "interrupted record torn");
    CHECK(rp_ring_pop(r, out, sizeof(out)) == -1, "and nothing else");
    struct rp_ring_stats st;
    rp_ring_stats(r, &st);
    CHECK(st.pushed == 2 && st.dropped[RP_RING_DROP_NESTED] == 1 && st.dropped_bytes == 24,
          "counters: pushed %llu nested %llu", (unsigned long long)st.pushed,
          (unsigned long long)st.dropped[RP_RING_DROP_NESTED]);
    munmap(src, 8192);
    rp_ring_destroy(r);
}

int main(void)
{
    test_create();
    test_empty();
    test_wrap();
    test_full();
    test_every_size();
    test_too_big();
    test_small_buffer();
    test_pushv_equals_push();
    test_drain();
    test_corrupt_length();
    test_nested_flag();
    test_nested_signal();
    return check_exit("test_ring");
}
