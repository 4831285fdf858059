/*
 * tests/agent/test_kinds.c — the kinds' list at load (src/flush/kind.c) alone,
 * with fake kinds: which capability sets load tries and in what order when the
 * JVM refuses (the kind that keeps its capabilities least gives them up first;
 * on a tie the later in the list; a capability two kinds ask for stays while
 * either is kept), that each kind's capabilities hook is asked once, whether the
 * threads get rings, the init hooks in list order, the record look-up by type,
 * and the engine table the list sets. Suite unit.
 */
#include <string.h>

#include "../check.h"
#include "flush/kind.h"
#include "ringprof/options.h"

static int g_asked[4];
static char g_init_order[8];
static size_t g_ninit;

/* Kind "a": allocation events and tags, kept least. Kind "b": monitor events and
 * tags, kept longest. Kind "c": no capabilities, its own rings when lock= is on. */
static void caps_a(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                   jvmtiCapabilities *want)
{
    (void)ld, (void)pot;
    g_asked[0]++;
    want->can_generate_sampled_object_alloc_events = 1;
    want->can_tag_objects = 1;
}

static void caps_b(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                   jvmtiCapabilities *want)
{
    (void)ld, (void)pot;
    g_asked[1]++;
    want->can_generate_monitor_events = 1;
    want->can_tag_objects = 1;
}

static void caps_d(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                   jvmtiCapabilities *want)
{
    (void)ld, (void)pot;
    g_asked[3]++;
    want->can_get_thread_cpu_time = 1;
}

static void init_a(const struct rp_kind_load *ld, const jvmtiCapabilities *got,
                   jvmtiEventCallbacks *cb)
{
    (void)ld, (void)got, (void)cb;
    g_init_order[g_ninit++] = 'a';
}

static void init_c(const struct rp_kind_load *ld, const jvmtiCapabilities *got,
                   jvmtiEventCallbacks *cb)
{
    (void)ld, (void)got, (void)cb;
    g_init_order[g_ninit++] = 'c';
}

static int rings_c(const struct rp_options *opt)
{
    return opt->lock;
}

static const struct rp_kind KIND_C = {
    .engine = {.name = "c"},
    .records = {{.type = 3, .tail = 24}},
    .rings_wanted = rings_c,
    .init = init_c,
};
static const struct rp_kind KIND_A = {
    .engine = {.name = "a"},
    .records = {{.type = 1}, {.type = 2, .tail = 8}},
    .capabilities = caps_a, .caps_keep = 1,
    .init = init_a,
};
static const struct rp_kind KIND_B = {
    .engine = {.name = "b"},
    .capabilities = caps_b, .caps_keep = 2,
};
/* Keeps as long as "a": a tie, broken by the list's order. */
static const struct rp_kind KIND_D = {
    .engine = {.name = "d"},
    .capabilities = caps_d, .caps_keep = 1,
};

static int same(const jvmtiCapabilities *x, const jvmtiCapabilities *y)
{
    return !memcmp(x, y, sizeof *x);
}

static void test_refusal_order(void)
{
    const struct rp_kind *const list[] = {&KIND_C, &KIND_A, &KIND_B};
    rp_kinds_set(list, 3);
    jvmtiCapabilities base = {.can_get_source_file_name = 1}, pot = {0};
    jvmtiCapabilities tries[RP_ENGINES_MAX + 1];
    struct rp_kind_load ld = {0};
    memset(g_asked, 0, sizeof g_asked);
    size_t n = rp_kinds_capabilities(&ld, &pot, &base, tries);
    REQUIRE(n == 3, "two kinds ask for capabilities: all, without a's, base (%zu sets)", n);
    CHECK(g_asked[0] == 1 && g_asked[1] == 1, "each hook asked once (%d, %d)",
          g_asked[0], g_asked[1]);

    jvmtiCapabilities all = base, b_only = base;
    all.can_generate_sampled_object_alloc_events = 1;
    all.can_generate_monitor_events = 1;
    all.can_tag_objects = 1;
    b_only.can_generate_monitor_events = 1;
    b_only.can_tag_objects = 1;      /* b asks for it too: it stays with b */
    CHECK(same(&tries[0], &all), "first try: everything");
    CHECK(same(&tries[1], &b_only), "second: a (kept least) gives its own up, not the tags b shares");
    CHECK(same(&tries[2], &base), "last: the agent's own alone");
}

static void test_tie(void)
{
    const struct rp_kind *const list[] = {&KIND_A, &KIND_D};
    rp_kinds_set(list, 2);
    jvmtiCapabilities base = {0}, pot = {0};
    jvmtiCapabilities tries[RP_ENGINES_MAX + 1];
    struct rp_kind_load ld = {0};
    size_t n = rp_kinds_capabilities(&ld, &pot, &base, tries);
    REQUIRE(n == 3, "two kinds, three sets (%zu)", n);
    CHECK(tries[1].can_generate_sampled_object_alloc_events && !tries[1].can_get_thread_cpu_time,
          "on a tie the later in the list (d) gives up first");
}

static void test_rings_init_records(void)
{
    const struct rp_kind *const list[] = {&KIND_C, &KIND_A, &KIND_B};
    rp_kinds_set(list, 3);
    struct rp_options opt;
    rp_options_defaults(&opt);
    CHECK(!rp_kinds_rings(&opt), "no kind wants rings with lock= off");
    opt.lock = 1;
    CHECK(rp_kinds_rings(&opt), "c wants rings with lock= on");

    g_ninit = 0;
    struct rp_kind_load ld = {.opt = &opt};
    jvmtiCapabilities got = {0};
    jvmtiEventCallbacks cb = {0};
    rp_kinds_init(&ld, &got, &cb);
    CHECK(g_ninit == 2 && g_init_order[0] == 'c' && g_init_order[1] == 'a',
          "init hooks in list order (%.*s)", (int)g_ninit, g_init_order);

    const struct rp_kind *k = NULL;
    size_t index = 99;
    const struct rp_kind_record *r = rp_kind_record(2, &k, &index);
    CHECK(r && k == &KIND_A && index == 1 && r->tail == 8, "record type 2 is a's second");
    CHECK(r && rp_kind_record_size(r, 1, 2) == rp_sample_size(1, 2) + 8,
          "its size carries its tail");
    CHECK(!rp_kind_record(7, &k, &index), "an unknown record type has no entry");

    size_t ne;
    const struct rp_engine_entry *const *e = rp_engines(&ne);
    CHECK(ne == 3 && e[0] == &KIND_C.engine && e[2] == &KIND_B.engine,
          "the engine table is the list's engines, in order");
    rp_kinds_thread_start(NULL, NULL, NULL);      /* no slot: nothing is called */
}

int main(void)
{
    test_refusal_order();
    test_tie();
    test_rings_init_records();
    return check_exit("test_kinds");
}
