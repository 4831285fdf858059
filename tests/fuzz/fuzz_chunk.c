/*
 * tests/fuzz/fuzz_chunk.c — the chunk reader (recorder/chunk_reader.c) on hostile
 * files, used the way the tools use it.
 *
 * The input is a chunk file. It is opened, its metadata read, and every event
 * taken; each sample's kind, thread and stack are looked up, the stack's frames,
 * their methods and all the strings those name are read to their end, as a
 * converter would; counters, gauges and thread records likewise. After the last
 * event every pool is walked over its first ids (threads and kinds: all of them),
 * and ids that cannot be defined must look up as nothing. ASan and UBSan catch what goes wrong
 * inside; FUZZ_CHECK catches the reader breaking its header's promises:
 *   - every diagnostic has a reason and an offset inside the file, and a fatal one
 *     comes only from rp_reader_open (nothing after a successful open is fatal);
 *   - a stack's frame array is there for every frame it claims;
 *   - the samples counted in rp_reader_stats are the samples delivered.
 * Strings are walked with strlen, so a missing NUL shows up as an ASan read
 * overflow.
 */
#include <string.h>

#include "ringprof/chunk.h"
#include "fuzz_common.h"

struct diag_state {
    uint64_t size;      /* of the input file */
    int opened;         /* rp_reader_open has returned a reader */
    unsigned fatal;
};

static void on_diag(void *arg, const char *path, uint64_t offset, const char *reason,
                    int fatal)
{
    struct diag_state *d = arg;
    FUZZ_CHECK(path && reason && reason[0], "a diagnostic without a reason");
    FUZZ_CHECK(offset <= d->size || offset == RP_READER_NO_OFFSET,
               "diagnostic offset %llu beyond the file (%llu): %s",
               (unsigned long long)offset, (unsigned long long)d->size, reason);
    FUZZ_CHECK(!(fatal && d->opened), "fatal diagnostic after open: %s", reason);
    d->fatal += fatal != 0;
}

/* Touch every byte of a string: ASan reports a missing terminator. */
static size_t walk(const char *s)
{
    return s ? strlen(s) : 0;
}

/* The reader counts only threads and kinds; the other pools are walked over the
 * first ids (the seeds define a few hundred), besides every id the events use. */
#define WALK_IDS 4096u

static size_t walk_method(const struct rp_reader *r, uint32_t id)
{
    const struct rp_method_info *m = rp_reader_method(r, id);
    if (!m)
        return 0;
    return walk(m->klass) + walk(m->name) + walk(m->signature) + walk(m->file);
}

static size_t walk_frame(const struct rp_reader *r, uint32_t id)
{
    const struct rp_frame_info *f = rp_reader_frame(r, id);
    return f ? walk_method(r, f->method) + (size_t)f->type : 0;
}

static size_t walk_stack(const struct rp_reader *r, uint32_t id)
{
    uint32_t n = 0, flags = 0;
    const uint32_t *fr = rp_reader_stack(r, id, &n, &flags);
    FUZZ_CHECK(fr || n == 0, "stack %u: %u frames but no frame array", id, n);
    size_t sum = flags;
    for (uint32_t i = 0; fr && i < n; i++)
        sum += walk_frame(r, fr[i]);
    return sum;
}

static size_t walk_thread(const struct rp_reader *r, uint32_t id)
{
    const struct rp_thread_info *t = rp_reader_thread(r, id);
    return t ? walk(t->name) + (size_t)t->flags : 0;
}

static size_t walk_kind(const struct rp_reader *r, uint32_t id)
{
    const struct rp_kind_info *k = rp_reader_kind(r, id);
    if (!k)
        return 0;
    FUZZ_CHECK(k->nextra <= RP_MAX_EXTRA, "kind %u: %u extra fields", id, k->nextra);
    size_t sum = walk(k->name) + walk(k->unit);
    for (uint32_t i = 0; i < k->nextra; i++)
        sum += walk(k->extra[i]);
    return sum;
}

static size_t walk_event(const struct rp_reader *r, const struct rp_event *ev)
{
    switch (ev->type) {
    case RP_EV_SAMPLE:
        FUZZ_CHECK(ev->u.sample.nextra <= RP_MAX_EXTRA, "a sample with %u extras",
                   ev->u.sample.nextra);
        return walk_kind(r, ev->u.sample.kind) + walk_thread(r, ev->u.sample.thread) +
               walk_stack(r, ev->u.sample.stack);
    case RP_EV_COUNTER:
        return walk(ev->u.counter.name);
    case RP_EV_THREAD:
        return walk_thread(r, ev->u.thread.id);
    case RP_EV_THREAD_CPU:
        return walk_thread(r, ev->u.thread_cpu.thread);
    case RP_EV_GAUGE:
        return walk(ev->u.gauge.name);
    case RP_EV_SEGMENT:
        return 0;
    }
    FUZZ_CHECK(0, "unknown event type %d", (int)ev->type);
    return 0;
}

/* Every id of every pool up to the highest seen, and a few never defined. */
static size_t walk_pools(const struct rp_reader *r)
{
    static const uint32_t odd[] = {0, 0x7fffffffu, 0xfffffffeu, 0xffffffffu};
    size_t sum = 0;
    for (uint32_t id = 0; id <= rp_reader_thread_count(r) + 1; id++)
        sum += walk_thread(r, id);
    for (uint32_t id = 0; id <= rp_reader_kind_count(r) + 1; id++)
        sum += walk_kind(r, id);
    for (uint32_t id = 0; id <= WALK_IDS; id++)
        sum += walk_stack(r, id);
    for (uint32_t id = 0; id <= WALK_IDS; id++)
        sum += walk_frame(r, id);
    for (uint32_t id = 0; id <= WALK_IDS; id++) {
        sum += walk_method(r, id);
        sum += walk(rp_reader_class(r, id));
    }
    for (uint32_t id = 0; id <= WALK_IDS; id++) {
        size_t len = 0;
        const char *s = rp_reader_string_len(r, id, &len);
        FUZZ_CHECK(!s || s[len] == '\0', "string %u is not terminated", id);
        sum += walk(rp_reader_string(r, id)) + len;
    }
    /* Undefined ids (0 is "none"; the density rule keeps the others out of reach
     * of any file under terabytes) look up as nothing. */
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        uint32_t n = 0, flags = 0, id = odd[i];
        FUZZ_CHECK(!rp_reader_thread(r, id) && !rp_reader_kind(r, id) &&
                   !rp_reader_class(r, id) && !rp_reader_stack(r, id, &n, &flags) &&
                   !rp_reader_method(r, id) && !rp_reader_frame(r, id) &&
                   !rp_reader_string(r, id), "id %#x is defined", id);
    }
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    if (!path)
        abort();
    struct diag_state d = {size, 0, 0};
    struct rp_reader *r = rp_reader_open(path, on_diag, &d);
    if (!r) {
        FUZZ_CHECK(d.fatal == 1, "open failed with %u fatal diagnostics", d.fatal);
        return 0;
    }
    d.opened = 1;
    size_t n = 0, sum = 0;
    const struct rp_kv *kv = rp_reader_meta_all(r, &n);
    for (size_t i = 0; i < n; i++) {
        sum += walk(kv[i].key) + walk(kv[i].value);
        FUZZ_CHECK(rp_reader_meta(r, kv[i].key) != NULL, "meta '%s' not found", kv[i].key);
    }
    sum += rp_reader_format_minor(r) + walk(rp_reader_path(r));
    struct rp_event ev;
    uint64_t samples = 0;
    while (rp_reader_next(r, &ev)) {
        samples += ev.type == RP_EV_SAMPLE;
        sum += walk_event(r, &ev);
    }
    sum += walk_pools(r);
    struct rp_reader_stats st;
    rp_reader_stats(r, &st);
    FUZZ_CHECK(st.samples == samples, "stats say %llu samples, %llu were delivered",
               (unsigned long long)st.samples, (unsigned long long)samples);
    FUZZ_CHECK(!rp_reader_next(r, &ev), "an event after the end");
    rp_reader_close(r);
    /* Keep the walks from being optimised away. */
    __asm__ volatile("" : : "r"(sum));
    return 0;
}
