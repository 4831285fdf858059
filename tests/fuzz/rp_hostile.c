/*
 * tests/fuzz/rp_hostile.c — hostile chunk files, for tests/fuzz/test_hostile.py and
 * tests/fuzz/regressions/convert/ (docs/fuzzing.md, docs/reliability.md).
 *
 *   rp_hostile clean OUT          nothing wrong: the pools below and one sample (a
 *                                 tool's memory on a file that asks for nothing)
 *   rp_hostile frame-id OUT       a stack names frame 4294967295, never defined
 *   rp_hostile method-id OUT      a frame names method 4294967294, never defined
 *   rp_hostile thread-id OUT      cpu and wall samples name thread 4294967295
 *   rp_hostile kind-id OUT        a sample names kind 4294967295
 *   rp_hostile stack-id OUT       a sample names stack 4294967295, never defined
 *   rp_hostile kind-no-name OUT   a KIND record whose name (and unit) string id
 *                                 was never defined, and a sample of it
 *   rp_hostile damaged OUT        the clean file with its only segment's body
 *                                 damaged (its checksum fails): no THREAD, no
 *                                 sample is read
 *   rp_hostile string-bomb OUT N  N segments of 60 strings of 1 MiB of one byte
 *                                 (RP_CHUNK_STRING_MAX) and one 1 byte longer: LZ4
 *                                 packs each segment into about 250 KB
 *   rp_hostile deep-stack OUT [N] a stack of N (default RP_CHUNK_STACK_MAX, 1 Mi)
 *                                 frames of two mutually recursive methods under a
 *                                 leaf, and one a frame deeper than the limit: about
 *                                 8 KB
 *   rp_hostile threads OUT N      N threads, each with a name, a kind and a counter
 *                                 name of its own and one sample (of its kind): the
 *                                 look-ups of `summary` and `convert` by thread,
 *                                 kind and name
 *   rp_hostile many OUT N         the same, and each thread waits for a monitor of
 *                                 its own class and for app.Deep, owned by the
 *                                 thread before it, parks at a site of its own
 *                                 (LockSupport.park under its own method), and
 *                                 parks with a stack that has no site, on an
 *                                 object of its class, owned by the thread before
 *                                 it: the look-ups of `locks` too
 *
 * Every file is well-formed but for what its name says: the damage is that one
 * thing, so a test can tell what the tool made of it. The first seven are the
 * size of the 287-byte file of issue 28 (under 400 bytes) and are kept in
 * regressions/convert/; the others are written at test time. Exits 0, or 1
 * after a message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"
#include "../../recorder/varint.h"
#include "../chunkbuild.h"

#define MS 1000000ull
#define UNDEFINED 4294967295u

/* String ids of the basics. */
enum { S_CPU = 1, S_NS, S_MAIN, S_CLASS, S_EVEN, S_ODD, S_LEAF, S_SIG, S_FILE, S_WALL,
       S_STATE, S_LOCK, S_CLASSX, S_OWNER, S_THRESHOLD, S_BLOCKER_CLASS, S_BLOCKER_OWNER,
       S_LOCKSUPPORT, S_PARK, S_COUNT };

/* Kind 1 cpu; 2 wall (state, blocker_class, blocker_owner); 3 lock (class, owner,
 * threshold_ns); thread 1 "main"; class 1 app.Deep; methods 1 even, 2 odd, 3 leaf,
 * 4 LockSupport.park; frames 1..4 of them (JIT); stack 1 = leaf, odd, even. */
static void basics(struct cb_buf *p)
{
    static const char *const s[S_COUNT] = {
        [S_CPU] = "cpu", [S_NS] = "ns", [S_MAIN] = "main", [S_CLASS] = "app.Deep",
        [S_EVEN] = "even", [S_ODD] = "odd", [S_LEAF] = "leaf", [S_SIG] = "()V",
        [S_FILE] = "Deep.java", [S_WALL] = RP_KIND_WALL, [S_STATE] = "state",
        [S_LOCK] = RP_KIND_LOCK, [S_CLASSX] = "class", [S_OWNER] = "owner",
        [S_THRESHOLD] = "threshold_ns", [S_BLOCKER_CLASS] = "blocker_class",
        [S_BLOCKER_OWNER] = "blocker_owner",
        [S_LOCKSUPPORT] = "java.util.concurrent.locks.LockSupport", [S_PARK] = "park"};
    for (int i = 1; i < S_COUNT; i++)
        cb_string(p, (uint64_t)i, s[i], strlen(s[i]), 0);
    CB_REC(p, RP_REC_KIND, 1, S_CPU, S_NS, 10 * MS, 0);
    CB_REC(p, RP_REC_KIND, 2, S_WALL, S_NS, 10 * MS, 3, S_STATE, S_BLOCKER_CLASS,
           S_BLOCKER_OWNER);
    CB_REC(p, RP_REC_KIND, 3, S_LOCK, S_NS, 0, 3, S_CLASSX, S_OWNER, S_THRESHOLD);
    CB_REC(p, RP_REC_THREAD, 1, 42, 1, S_MAIN, RP_THREAD_JAVA, 0);
    CB_REC(p, RP_REC_CLASS, 1, S_CLASS);
    CB_REC(p, RP_REC_CLASS, 2, S_LOCKSUPPORT);
    CB_REC(p, RP_REC_METHOD, 1, 1, S_EVEN, S_SIG, S_FILE, 0);
    CB_REC(p, RP_REC_METHOD, 2, 1, S_ODD, S_SIG, S_FILE, 0);
    CB_REC(p, RP_REC_METHOD, 3, 1, S_LEAF, S_SIG, S_FILE, 0);
    CB_REC(p, RP_REC_METHOD, 4, 2, S_PARK, S_SIG, 0, 0);
    for (uint64_t f = 1; f <= 4; f++)
        CB_REC(p, RP_REC_FRAME, f, f, RP_FRAME_JIT, 0, 10 * f);
    CB_REC(p, RP_REC_STACK, 1, 0, 3, 3, 2, 1);
}

/* One sample of `kind` on `thread` and `stack`, 10 ms after the chunk's start,
 * with `nextra` extras. */
static void sample(struct cb_buf *p, uint64_t kind, uint64_t thread, uint64_t stack,
                   int nextra, const uint64_t *extra)
{
    struct cb_buf body = {0};
    cb_v(&body, kind);
    cb_v(&body, thread);
    cb_v(&body, 1);
    cb_v(&body, rp_zigzag_enc((int64_t)(10 * MS)));
    cb_v(&body, 10 * MS);
    cb_v(&body, (uint64_t)nextra);
    cb_v(&body, 0);            /* head: dt 0, the weight wunit */
    cb_v(&body, stack);
    for (int i = 0; i < nextra; i++)
        cb_v(&body, extra[i]);
    cb_record(p, RP_REC_SAMPLES, &body);
    cb_free(&body);
}

static void one_segment(struct cb_buf *f, struct cb_buf *p)
{
    cb_header(f, "hostile");
    cb_segment(f, p, 0, RP_SEG_LAST);
}

static void clean(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    sample(p, 1, 1, 1, 0, NULL);
    one_segment(f, p);
}

static void frame_id(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    CB_REC(p, RP_REC_STACK, 2, 0, 3, 3, UNDEFINED, 1);
    sample(p, 1, 1, 2, 0, NULL);
    one_segment(f, p);
}

static void method_id(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    CB_REC(p, RP_REC_FRAME, 5, UNDEFINED - 1, RP_FRAME_JIT, 0, 7);
    CB_REC(p, RP_REC_STACK, 2, 0, 2, 5, 1);
    sample(p, 1, 1, 2, 0, NULL);
    one_segment(f, p);
}

static void thread_id(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    sample(p, 1, UNDEFINED, 1, 0, NULL);
    sample(p, 2, UNDEFINED, 1, 3, (const uint64_t[]){RP_TS_SLEEPING, 0, 0});
    sample(p, 3, 1, 1, 3, (const uint64_t[]){1, UNDEFINED, 0});
    one_segment(f, p);
}

static void kind_id(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    sample(p, UNDEFINED, 1, 1, 0, NULL);
    sample(p, 1, 1, 1, 0, NULL);
    one_segment(f, p);
}

static void stack_id(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    sample(p, 1, 1, UNDEFINED, 0, NULL);
    sample(p, 1, 1, 1, 0, NULL);
    one_segment(f, p);
}

static void kind_no_name(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    CB_REC(p, RP_REC_KIND, 4, UNDEFINED - 1, UNDEFINED - 2, 10 * MS, 0);
    sample(p, 4, 1, 1, 0, NULL);
    one_segment(f, p);
}

/* Extras naming class 2^32 + 2 and thread 2^32 + 1: ids are 32 bits, so these
 * name no class and no thread, never class 2 (LockSupport, used by no stack
 * here) or thread 1 that their low halves would alias. */
static void wide_id(struct cb_buf *f, struct cb_buf *p)
{
    basics(p);
    const uint64_t cls = (1ull << 32) + 2, owner = (1ull << 32) + 1;
    sample(p, 2, 1, 1, 3, (const uint64_t[]){RP_TS_BLOCKED, cls, owner});
    sample(p, 3, 1, 1, 3, (const uint64_t[]){cls, owner, 0});
    one_segment(f, p);
}

/* The clean file, then one byte of its segment's compressed body flipped. */
static void damaged(struct cb_buf *f, struct cb_buf *p)
{
    clean(f, p);
    f->p[f->n - 8] ^= 0x5a;
}

static void string_bomb(struct cb_buf *f, struct cb_buf *p, long nseg)
{
    cb_header(f, "hostile");
    uint64_t id = S_COUNT;
    for (long s = 0; s < nseg; s++) {
        p->n = p->nrec = 0;
        if (s == 0) {
            basics(p);
            sample(p, 1, 1, 1, 0, NULL);
        }
        for (int i = 0; i < 60; i++)
            cb_string(p, id++, NULL, RP_CHUNK_STRING_MAX, (uint8_t)('a' + s % 26));
        cb_string(p, id++, NULL, RP_CHUNK_STRING_MAX + 1, 'z');
        cb_segment(f, p, (uint32_t)s, s + 1 == nseg ? RP_SEG_LAST : 0);
    }
}

/* A stack record of `n` frames: the leaf (3), then odd and even in turn. */
static void deep(struct cb_buf *p, uint64_t id, uint32_t n)
{
    struct cb_buf body = {0};
    cb_v(&body, id);
    cb_v(&body, 0);
    cb_v(&body, n);
    cb_v(&body, 3);
    for (uint32_t i = 1; i < n; i++)
        cb_v(&body, i % 2 ? 2 : 1);
    cb_record(p, RP_REC_STACK, &body);
    cb_free(&body);
}

static void deep_stack(struct cb_buf *f, struct cb_buf *p, long n)
{
    basics(p);
    deep(p, 2, n ? (uint32_t)n : RP_CHUNK_STACK_MAX);
    deep(p, 3, RP_CHUNK_STACK_MAX + 1);
    sample(p, 1, 1, 2, 0, NULL);
    sample(p, 1, 1, 2, 0, NULL);
    sample(p, 1, 1, 3, 0, NULL);
    one_segment(f, p);
}

/* Thread, string, kind (and for `waits`: class, method, frame, stack) i + base of
 * each pool, so that one loop defines them all; a segment every 50 000 threads. */
static void threads(struct cb_buf *f, struct cb_buf *p, long n, int waits)
{
    cb_header(f, "hostile");
    basics(p);
    uint32_t seq = 0;
    for (long i = 0; i < n; i++) {
        char name[32];
        int len = snprintf(name, sizeof name, "app.C%ld", i);
        uint64_t str = S_COUNT + 2 * (uint64_t)i, kstr = str + 1;
        uint64_t thr = 2 + (uint64_t)i, kind = 4 + (uint64_t)i;
        cb_string(p, str, name, (size_t)len, 0);
        len = snprintf(name, sizeof name, "k%ld", i);
        cb_string(p, kstr, name, (size_t)len, 0);
        CB_REC(p, RP_REC_THREAD, thr, 1000 + (uint64_t)i, 0, str, 0, 0);
        CB_REC(p, RP_REC_KIND, kind, kstr, S_NS, 0, 0);
        sample(p, kind, thr, 1, 0, NULL);
        CB_REC(p, RP_REC_COUNTER, str, 1);
        if (waits) {
            uint64_t cls = 3 + (uint64_t)i, meth = 5 + (uint64_t)i, stk = 2 + (uint64_t)i;
            uint64_t before = i ? thr - 1 : 1;
            CB_REC(p, RP_REC_CLASS, cls, str);
            CB_REC(p, RP_REC_METHOD, meth, cls, S_EVEN, S_SIG, S_FILE, 0);
            CB_REC(p, RP_REC_FRAME, meth, meth, RP_FRAME_JIT, 0, 1);
            CB_REC(p, RP_REC_STACK, stk, 0, 2, 4, meth);
            sample(p, 3, thr, 1, 3, (const uint64_t[]){cls, 1, 0});
            sample(p, 3, thr, 1, 3, (const uint64_t[]){1, before, 0});
            sample(p, 2, thr, stk, 3, (const uint64_t[]){RP_TS_PARKED, 1, 1});
            sample(p, 2, thr, 1, 3, (const uint64_t[]){RP_TS_PARKED, cls, before});
        }
        if ((i + 1) % 50000 == 0 && i + 1 < n) {
            cb_segment(f, p, seq++, 0);
            p->n = p->nrec = 0;
        }
    }
    cb_segment(f, p, seq, RP_SEG_LAST);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rp_hostile clean|frame-id|method-id|thread-id|kind-id|"
                        "stack-id|kind-no-name|wide-id|damaged|string-bomb|deep-stack|threads|"
                        "many OUT [N]\n");
        return 1;
    }
    const char *what = argv[1], *out = argv[2];
    long n = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    struct cb_buf f = {0}, p = {0};
    if (!strcmp(what, "clean"))
        clean(&f, &p);
    else if (!strcmp(what, "frame-id"))
        frame_id(&f, &p);
    else if (!strcmp(what, "method-id"))
        method_id(&f, &p);
    else if (!strcmp(what, "thread-id"))
        thread_id(&f, &p);
    else if (!strcmp(what, "kind-id"))
        kind_id(&f, &p);
    else if (!strcmp(what, "stack-id"))
        stack_id(&f, &p);
    else if (!strcmp(what, "kind-no-name"))
        kind_no_name(&f, &p);
    else if (!strcmp(what, "wide-id"))
        wide_id(&f, &p);
    else if (!strcmp(what, "damaged"))
        damaged(&f, &p);
    else if (!strcmp(what, "string-bomb") && n > 0)
        string_bomb(&f, &p, n);
    else if (!strcmp(what, "deep-stack"))
        deep_stack(&f, &p, n);
    else if ((!strcmp(what, "threads") || !strcmp(what, "many")) && n > 0)
        threads(&f, &p, n, !strcmp(what, "many"));
    else {
        fprintf(stderr, "rp_hostile: unknown file '%s' (or no count)\n", what);
        return 1;
    }
    if (cb_write(&f, out) < 0) {
        fprintf(stderr, "rp_hostile: %s: %s\n", out, strerror(errno));
        return 1;
    }
    cb_free(&f);
    cb_free(&p);
    return 0;
}
