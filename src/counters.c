/*
 * src/counters.c — the counter registry (see counters.h): a fixed table of
 * registered sets, each with the baseline of its counters.
 */
#include "counters.h"

struct set {
    enum rp_counter_group group;
    const char *const *names;
    size_t n;
    rp_counters_read_fn read;
    uint64_t *seen;                 /* n baselines in g_seen                        */
};

static struct set g_sets[RP_COUNTERS_MAX];
static size_t g_nsets;
static uint64_t g_seen[RP_COUNTERS_MAX];
static size_t g_nseen;

int rp_counters_register(enum rp_counter_group group, const char *const *names, size_t n,
                         rp_counters_read_fn read)
{
    for (size_t i = 0; i < g_nsets; i++)
        if (g_sets[i].names == names)
            return 0;
    if (g_nsets == RP_COUNTERS_MAX || n > RP_COUNTERS_MAX - g_nseen)
        return -1;
    g_sets[g_nsets++] = (struct set){group, names, n, read, &g_seen[g_nseen]};
    g_nseen += n;
    return 0;
}

void rp_counters_write(enum rp_counter_group group, rp_counters_emit_fn emit, void *ctx)
{
    uint64_t now[RP_COUNTERS_MAX];
    for (size_t i = 0; i < g_nsets; i++) {
        struct set *s = &g_sets[i];
        if (s->group != group)
            continue;
        s->read(now);
        for (size_t c = 0; c < s->n; c++) {
            uint64_t d = now[c] - s->seen[c];
            if (d && emit(ctx, s->names[c], d) == 0)
                s->seen[c] = now[c];
        }
    }
}
