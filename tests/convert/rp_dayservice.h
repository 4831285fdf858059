/*
 * tests/convert/rp_dayservice.h — the service that rp_daywriter records: its
 * frames, its allocation sites, its stacks (each in a pool, drawn Zipf(1.1)
 * within it) and its threads, and the one seeded random stream everything is
 * drawn from. rp_dayservice.c makes them once (day_service_make); the writer,
 * rp_daywriter.c, reads them and owns every time and chunk. rp_daywriter.c's
 * opening comment says what the service is. Single-threaded; allocation
 * failure exits (day_die).
 */
#ifndef RP_DAYSERVICE_H
#define RP_DAYSERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/format.h"

#define DAY_PID             4242
#define DAY_ALLOC_INTERVAL  524288.0        /* alloc=512k                          */
#define DAY_MAXDEPTH        64
#define DAY_IDLE            16              /* idle pool threads                   */
/* The method every incident stack holds and no other stack does. */
#define DAY_INCIDENT_FRAME  "com.example.shop.pricing.PromotionRules.matchCoupon"

/* Print "rp_daywriter: WHAT: errno's reason" and exit 1. */
void day_die(const char *what);
/* calloc, or day_die. */
void *day_calloc(size_t n, size_t size);

/* xorshift64, seeded (not 0) by the writer before day_service_make. */
extern uint64_t day_rng;

static inline uint64_t day_rnd(void)
{
    day_rng ^= day_rng << 13;
    day_rng ^= day_rng >> 7;
    day_rng ^= day_rng << 17;
    return day_rng;
}

/* Uniform in [0, 1). */
static inline double day_unit(void)
{
    return (double)(day_rnd() >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, n). */
static inline uint32_t day_below(uint32_t n)
{
    return (uint32_t)(((day_rnd() >> 32) * n) >> 32);
}

struct day_frame {
    char *klass, *name;               /* a native frame's class: its library */
    enum rp_frame_type type;
    uint32_t line;                    /* Java frames                          */
};
extern struct day_frame *day_frames;
extern uint32_t day_nframes;

/* An allocation class: a non-array's size (elem 0), or an array's header and
 * element size with four lengths a sample picks from. */
struct day_class {
    const char *name;
    uint32_t elem, base;
    uint32_t len[4];
};
#define DAY_NCLASSES 14
extern const struct day_class day_classes[DAY_NCLASSES];

/* What an allocation sample of a class at one of its lengths records. */
struct day_site {
    uint64_t size, weight, length1;   /* length1: array length + 1, 0: not an array */
    uint32_t objects;                 /* 1/p rounded down                           */
    double frac;                      /* its fraction, rounded up at that rate      */
};
extern struct day_site day_sites[DAY_NCLASSES][4];

struct day_stack {
    uint8_t n;                        /* frames, root first            */
    uint8_t klass;                    /* its allocation class           */
    uint32_t f[DAY_MAXDEPTH];
};
/* What a sample needs of its stack, apart from the frames (cache lines). */
struct day_stack_info {
    uint32_t java;                    /* the stack its allocations use  */
    uint8_t klass;
    uint8_t native;                   /* its leaf is a native frame     */
};
extern struct day_stack *day_stacks;
extern struct day_stack_info *day_info;
extern uint32_t day_nstacks;

/* A pool's stacks and its Zipf(1.1) draw (Vose's alias table). The incident's
 * pools are the http threads' CPU and allocation stacks in its window. */
enum { P_HTTP, P_KAFKA, P_BATCH, P_JIT, P_GC, P_INCIDENT, P_ALLOC_INCIDENT, P_COUNT };
struct day_pool {
    uint32_t first, n;                /* stacks [first, first + n)     */
    uint32_t *alias, *cut;            /* cut: probability, 2^32 scale  */
};
extern struct day_pool day_pools[P_COUNT];

/* A stack of pool p, Zipf-distributed over its stacks. */
static inline uint32_t day_draw(const struct day_pool *p)
{
    uint64_t r = day_rnd();
    uint32_t i = (uint32_t)(((r >> 32) * p->n) >> 32);
    return p->first + ((uint32_t)r <= p->cut[i] ? i : p->alias[i]);
}

struct day_thread {
    char name[48];
    uint64_t tid, jtid;
    uint32_t flags;                   /* RP_THREAD_*                      */
    int pool;                         /* P_*, or -1: idle                 */
    uint64_t cpu_ns;                  /* its samples' weights, and a start */
    uint64_t cpu_samples;
    uint32_t id;                      /* in the writer's chunk; 0: none    */
};
extern struct day_thread *day_threads;
extern uint32_t day_nthreads;

/* Make the frames, sites, about `stacks` stacks and the threads (`busy` of them
 * busy: http the rest, kafka busy/4, scheduling busy/4). Once. */
void day_service_make(uint32_t stacks, uint32_t busy);

#endif
