/*
 * tests/test_ring_stress.c — producers, their signal handlers and one consumer, all
 * at once, with every record accounted for.
 *
 * NPROD producer threads each own a ring and push a numbered stream of records of
 * 16..600 bytes with rp_ring_pushv. A 10 kHz timer aimed at each producer thread
 * (timer_create, SIGEV_THREAD_ID) runs a handler that pushes a second numbered
 * stream into the same ring with rp_ring_push, as the CPU-timer sample does in the
 * agent; when it lands inside the thread's own push it must be refused as nested.
 * One consumer thread drains all rings and checks every record byte for byte:
 * length and payload are functions of (stream, seq), and seq must strictly grow.
 *
 * Accounting is exact. Each stream's producer counts attempts and outcomes from the
 * push return codes; at the end, for every stream, received + dropped == produced,
 * and the ring's own counters equal the sums of both streams. The run has three
 * phases: consumer keeping up, consumer deliberately slow (so the full path runs
 * under real concurrency), keeping up again. The test fails unless nested drops,
 * handler records and slow-phase full drops all occurred.
 *
 * Runtime: RINGPROF_STRESS_SECONDS (or argv[1]) seconds, default 6, split in thirds.
 * The phases are timed, so sanitizer builds take the same wall time.
 */
#include "ringprof/ring.h"
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NPROD       4
#define NSTREAMS    (2 * NPROD)        /* stream 2p: thread p; 2p+1: its handler   */
#define RING_BYTES  ((size_t)64 << 10)
#define MIN_LEN     16                 /* a record starts with struct rec_head      */
#define MAX_LEN     600
#define POOL_BYTES  ((size_t)1 << 20)
#define TICK_NS     100000L            /* 10 kHz                                    */
#define BURST       64                 /* pushes between producer pauses            */
#define PAUSE_NS    60000L

enum phase { PHASE_KEEP_UP, PHASE_SLOW, PHASE_KEEP_UP_AGAIN, PHASE_STOP };
static _Atomic int phase;
static _Atomic int producers_done;

struct rec_head {
    uint64_t seq;
    uint32_t stream;
    uint32_t len;
};

/* Payloads are slices of one random pool, so a producer spends its time in the
 * push rather than in making bytes, and the consumer can still check each one. */
static unsigned char pool[POOL_BYTES + MAX_LEN];

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static size_t rec_len(uint32_t stream, uint64_t seq)
{
    return MIN_LEN + mix((uint64_t)stream << 48 ^ seq) % (MAX_LEN - MIN_LEN + 1);
}

static const unsigned char *rec_body(uint32_t stream, uint64_t seq)
{
    return pool + mix(seq * 31 + stream + 0x1234) % POOL_BYTES;
}

/* What one stream's producer saw, from the push return codes. */
struct tally {
    uint64_t produced, ok, ok_bytes, dropped_bytes;
    uint64_t dropped[RP_RING_DROP_REASONS];
};

static int count(struct tally *t, int rc, size_t len)
{
    t->produced++;
    switch (rc) {
    case RP_RING_OK:      t->ok++; t->ok_bytes += len; return rc;
    case RP_RING_FULL:    t->dropped[RP_RING_DROP_FULL]++; break;
    case RP_RING_NESTED:  t->dropped[RP_RING_DROP_NESTED]++; break;
    case RP_RING_TOO_BIG: t->dropped[RP_RING_DROP_TOO_BIG]++; break;
    default:              abort();
    }
    t->dropped_bytes += len;
    return rc;
}

struct producer {
    int id;
    struct rp_ring *ring;
    pthread_t thread;
    struct tally main;        /* written by the thread outside its handler only */
    struct tally sig;         /* written by the handler only                    */
    uint64_t ticks;           /* handler runs                                   */
    uint64_t full_in_slow;    /* main-stream full drops while the consumer slept */
    int setup_failed;
};

static struct producer prod[NPROD];

/* The handler's stream: built on the stack, pushed with rp_ring_push. */
static void on_tick(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    int saved = errno;
    struct producer *p = si->si_value.sival_ptr;
    if (p != NULL) {
        uint32_t stream = 2 * (uint32_t)p->id + 1;
        uint64_t seq = p->sig.produced;
        struct rec_head h = { seq, stream, (uint32_t)rec_len(stream, seq) };
        unsigned char rec[MAX_LEN];
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), rec_body(stream, seq), h.len - sizeof(h));
        count(&p->sig, rp_ring_push(p->ring, rec, h.len), h.len);
        p->ticks++;
    }
    errno = saved;
}

/* The thread's own stream: header and payload as two pieces with rp_ring_pushv. */
static int push_main(struct producer *p)
{
    uint32_t stream = 2 * (uint32_t)p->id;
    uint64_t seq = p->main.produced;
    struct rec_head h = { seq, stream, (uint32_t)rec_len(stream, seq) };
    struct iovec v[2] = { { &h, sizeof(h) },
                          { (void *)rec_body(stream, seq), h.len - sizeof(h) } };
    return count(&p->main, rp_ring_pushv(p->ring, v, 2), h.len);
}

static int arm_timer(struct producer *p, timer_t *timer)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = p;
    sev._sigev_un._tid = gettid();
    if (timer_create(CLOCK_MONOTONIC, &sev, timer) != 0)
        return -1;
    struct itimerspec its = { { 0, TICK_NS }, { 0, TICK_NS } };
    return timer_settime(*timer, 0, &its, NULL);
}

static void *producer_main(void *arg)
{
    struct producer *p = arg;
    timer_t timer;
    if (arm_timer(p, &timer) != 0) {
        p->setup_failed = errno;
        return NULL;
    }
    struct timespec pause = { 0, PAUSE_NS };
    int ph;
    while ((ph = atomic_load(&phase)) != PHASE_STOP) {
        for (int k = 0; k < BURST; k++)
            if (push_main(p) == RP_RING_FULL && ph == PHASE_SLOW)
                p->full_in_slow++;
        nanosleep(&pause, NULL);   /* EINTR from a tick only shortens the pause */
    }
    /* Block first, so no tick runs once the timer is gone; one still pending is
     * discarded with the thread. Tallies are read only after pthread_join. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    timer_delete(timer);
    return NULL;
}

/* ---- consumer ------------------------------------------------------------ */

struct consumer {
    uint64_t received[NSTREAMS], received_bytes[NSTREAMS], last_seq[NSTREAMS];
    uint64_t errors, records, drains, pops;
    unsigned char buf[MAX_LEN];
    unsigned char scratch[RING_BYTES];
};

static void complain(struct consumer *c, const char *what, uint32_t stream, uint64_t seq,
                     size_t len)
{
    if (c->errors++ < 10)
        fprintf(stderr, "consumer: %s (stream %u seq %llu len %zu)\n", what, stream,
                (unsigned long long)seq, len);
}

/* Check one record against what (stream, seq) says it must be, and its order. */
static int verify(void *arg, const void *rec, size_t len)
{
    struct consumer *c = arg;
    struct rec_head h = { 0, 0, 0 };
    if (len < sizeof(h)) {
        complain(c, "short record", 0, 0, len);
        return 0;
    }
    memcpy(&h, rec, sizeof(h));
    if (h.stream >= NSTREAMS) {
        complain(c, "bad stream", h.stream, h.seq, len);
        return 0;
    }
    if (h.len != len || len != rec_len(h.stream, h.seq) ||
        memcmp((const unsigned char *)rec + sizeof(h), rec_body(h.stream, h.seq),
               len - sizeof(h)) != 0)
        complain(c, "record damaged", h.stream, h.seq, len);
    /* last_seq holds seq + 1 of the last record seen, 0 before the first. */
    if (h.seq + 1 <= c->last_seq[h.stream])
        complain(c, "out of order or duplicate", h.stream, h.seq, len);
    c->last_seq[h.stream] = h.seq + 1;
    c->received[h.stream]++;
    c->received_bytes[h.stream] += len;
    c->records++;
    return 0;
}

/* The slow phase pops a few records at a time, checking peek against pop. */
static void pop_some(struct consumer *c, struct rp_ring *ring, int max)
{
    for (int i = 0; i < max; i++) {
        long peek = rp_ring_peek_len(ring);
        long n = rp_ring_pop(ring, c->buf, sizeof(c->buf));
        if (n < 0 && peek < 0)
            return;
        /* A ring that peek found empty may get a record before pop: the
         * producers run meanwhile. A record peek saw must be the one popped. */
        if (n < 0 || (peek >= 0 && n != peek))
            complain(c, "peek and pop disagree", 0, (uint64_t)peek, (size_t)n);
        else
            verify(c, c->buf, (size_t)n);
        c->pops++;
    }
}

static size_t drain_all(struct consumer *c)
{
    size_t n = 0;
    for (int p = 0; p < NPROD; p++)
        n += rp_ring_drain(prod[p].ring, verify, c, c->scratch);
    c->drains++;
    return n;
}

static void sleep_ns(long ns)
{
    struct timespec t = { ns / 1000000000L, ns % 1000000000L };
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static void *consumer_main(void *arg)
{
    struct consumer *c = arg;
    while (!atomic_load(&producers_done)) {
        if (atomic_load(&phase) == PHASE_SLOW) {
            for (int p = 0; p < NPROD; p++)
                pop_some(c, prod[p].ring, 8);
            sleep_ns(5000000);
        } else if (drain_all(c) == 0) {
            sleep_ns(20000);
        }
    }
    drain_all(c);   /* producers are joined: this takes everything that is left */
    return NULL;
}

/* ---- checks --------------------------------------------------------------- */

static void check_stream(const struct consumer *c, uint32_t s, const struct tally *t)
{
    uint64_t dropped = 0;
    for (int r = 0; r < RP_RING_DROP_REASONS; r++)
        dropped += t->dropped[r];
    CHECK(c->received[s] + dropped == t->produced,
          "stream %u: received %llu + dropped %llu != produced %llu", s,
          (unsigned long long)c->received[s], (unsigned long long)dropped,
          (unsigned long long)t->produced);
    CHECK(c->received[s] == t->ok && c->received_bytes[s] == t->ok_bytes,
          "stream %u: received %llu records %llu bytes, pushed %llu / %llu", s,
          (unsigned long long)c->received[s], (unsigned long long)c->received_bytes[s],
          (unsigned long long)t->ok, (unsigned long long)t->ok_bytes);
    CHECK(t->dropped[RP_RING_DROP_TOO_BIG] == 0, "stream %u: too_big drops", s);
}

static void check_ring(const struct producer *p)
{
    struct rp_ring_stats st;
    rp_ring_stats(p->ring, &st);
    const struct tally *a = &p->main, *b = &p->sig;
    CHECK(st.pushed == a->ok + b->ok && st.pushed_bytes == a->ok_bytes + b->ok_bytes,
          "ring %d: pushed %llu/%llu bytes, streams say %llu/%llu", p->id,
          (unsigned long long)st.pushed, (unsigned long long)st.pushed_bytes,
          (unsigned long long)(a->ok + b->ok), (unsigned long long)(a->ok_bytes + b->ok_bytes));
    for (int r = 0; r < RP_RING_DROP_REASONS; r++)
        CHECK(st.dropped[r] == a->dropped[r] + b->dropped[r],
              "ring %d: %s %llu, streams say %llu", p->id,
              rp_ring_drop_name((enum rp_ring_drop)r), (unsigned long long)st.dropped[r],
              (unsigned long long)(a->dropped[r] + b->dropped[r]));
    CHECK(st.dropped_bytes == a->dropped_bytes + b->dropped_bytes,
          "ring %d: dropped_bytes %llu, streams say %llu", p->id,
          (unsigned long long)st.dropped_bytes,
          (unsigned long long)(a->dropped_bytes + b->dropped_bytes));
    CHECK(st.used_bytes == 0, "ring %d: %llu bytes left after the final drain", p->id,
          (unsigned long long)st.used_bytes);
    /* The thread's own pushes are never the nested ones: only a handler interrupts. */
    CHECK(a->dropped[RP_RING_DROP_NESTED] == 0, "ring %d: outer push refused as nested",
          p->id);
    CHECK(p->ticks > 0, "ring %d: the timer never fired", p->id);
}

static double seconds_from_env(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : getenv("RINGPROF_STRESS_SECONDS");
    double v = s ? strtod(s, NULL) : 6.0;
    return v > 0 ? v : 6.0;
}

int main(int argc, char **argv)
{
    double secs = seconds_from_env(argc, argv);
    for (size_t i = 0; i < sizeof(pool); i++)
        pool[i] = (unsigned char)(mix(i) >> 56);

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int rc = sigaction(SIGPROF, &sa, NULL);
    REQUIRE(rc == 0, "sigaction: %s", strerror(errno));

    static struct consumer cons;
    for (int p = 0; p < NPROD; p++) {
        prod[p].id = p;
        prod[p].ring = rp_ring_create(RING_BYTES);
        REQUIRE(prod[p].ring != NULL, "rp_ring_create: %s", strerror(errno));
    }
    pthread_t consumer;
    rc = pthread_create(&consumer, NULL, consumer_main, &cons);
    REQUIRE(rc == 0, "pthread_create");
    for (int p = 0; p < NPROD; p++) {
        rc = pthread_create(&prod[p].thread, NULL, producer_main, &prod[p]);
        REQUIRE(rc == 0, "pthread_create");
    }
    long third = (long)(secs / 3 * 1e9);
    sleep_ns(third);
    atomic_store(&phase, PHASE_SLOW);
    sleep_ns(third);
    atomic_store(&phase, PHASE_KEEP_UP_AGAIN);
    sleep_ns(third);
    atomic_store(&phase, PHASE_STOP);
    for (int p = 0; p < NPROD; p++)
        pthread_join(prod[p].thread, NULL);
    atomic_store(&producers_done, 1);
    pthread_join(consumer, NULL);

    uint64_t nested = 0, sig_ok = 0, full_slow = 0, main_ok = 0, produced = 0;
    for (int p = 0; p < NPROD; p++) {
        struct producer *pr = &prod[p];
        REQUIRE(pr->setup_failed == 0, "timer for producer %d: %s", p,
                strerror(pr->setup_failed));
        check_stream(&cons, 2 * (uint32_t)p, &pr->main);
        check_stream(&cons, 2 * (uint32_t)p + 1, &pr->sig);
        check_ring(pr);
        nested += pr->sig.dropped[RP_RING_DROP_NESTED];
        sig_ok += pr->sig.ok;
        main_ok += pr->main.ok;
        full_slow += pr->full_in_slow;
        produced += pr->main.produced + pr->sig.produced;
        printf("ring %d: main %llu pushed %llu ok %llu full | handler %llu ticks %llu ok "
               "%llu full %llu nested\n", p, (unsigned long long)pr->main.produced,
               (unsigned long long)pr->main.ok,
               (unsigned long long)pr->main.dropped[RP_RING_DROP_FULL],
               (unsigned long long)pr->ticks, (unsigned long long)pr->sig.ok,
               (unsigned long long)pr->sig.dropped[RP_RING_DROP_FULL],
               (unsigned long long)pr->sig.dropped[RP_RING_DROP_NESTED]);
    }
    printf("%.1f s: %llu records produced, %llu verified (%llu drains, %llu pops), "
           "%llu nested, %llu full while slow\n", secs, (unsigned long long)produced,
           (unsigned long long)cons.records, (unsigned long long)cons.drains,
           (unsigned long long)cons.pops, (unsigned long long)nested,
           (unsigned long long)full_slow);

    CHECK(cons.errors == 0, "%llu records failed verification",
          (unsigned long long)cons.errors);
    CHECK(main_ok > 0 && sig_ok > 0, "no records got through (main %llu, handler %llu)",
          (unsigned long long)main_ok, (unsigned long long)sig_ok);
    CHECK(full_slow > 0, "the slow phase never filled a ring");
    /* This holds under TSan too, which defers asynchronous signals to its own safe
     * points: the push's memcpy is intercepted, so deferred ticks land inside it. */
    CHECK(nested > 0, "no handler push ever landed inside a push");
    for (int p = 0; p < NPROD; p++)
        rp_ring_destroy(prod[p].ring);
    return check_exit("test_ring_stress");
}
