/*
 * src/flush/kind.c — the list of event kinds (see kind.h): set once at load,
 * read by the flusher, the stacks' walk statuses and the control socket; and
 * the load-time questions agent.c asks of every kind (rings, capabilities and
 * the order they are given up in, callbacks, threads), so that the lifecycle
 * names no kind.
 */
#include "flush/kind.h"

static const struct rp_kind *g_kinds[RP_ENGINES_MAX];
static size_t g_n;

void rp_kinds_set(const struct rp_kind *const *k, size_t n)
{
    const struct rp_engine_entry *e[RP_ENGINES_MAX];
    g_n = n < RP_ENGINES_MAX ? n : RP_ENGINES_MAX;
    for (size_t i = 0; i < g_n; i++) {
        g_kinds[i] = k[i];
        e[i] = &k[i]->engine;
    }
    rp_engines_set(e, g_n);
}

const struct rp_kind *const *rp_kinds(size_t *n)
{
    *n = g_n;
    return g_kinds;
}

const struct rp_kind_record *rp_kind_record(uint32_t type, const struct rp_kind **kind,
                                            size_t *index)
{
    for (size_t i = 0; i < g_n; i++)
        for (size_t r = 0; r < RP_KIND_RECORDS_MAX && g_kinds[i]->records[r].type; r++)
            if (g_kinds[i]->records[r].type == type) {
                *kind = g_kinds[i];
                *index = i;
                return &g_kinds[i]->records[r];
            }
    return NULL;
}

int rp_kinds_rings(const struct rp_options *opt)
{
    for (size_t i = 0; i < g_n; i++)
        if (g_kinds[i]->rings_wanted && g_kinds[i]->rings_wanted(opt))
            return 1;
    return 0;
}

/* The kind not yet in `taken` that asks for capabilities and keeps them
 * longest (the earlier in the list on a tie), or g_n: none left. */
static size_t keeps_longest(const int *taken)
{
    size_t best = g_n;
    for (size_t i = 0; i < g_n; i++)
        if (!taken[i] && g_kinds[i]->capabilities &&
            (best == g_n || g_kinds[i]->caps_keep > g_kinds[best]->caps_keep))
            best = i;
    return best;
}

size_t rp_kinds_capabilities(const struct rp_kind_load *ld, const jvmtiCapabilities *pot,
                             const jvmtiCapabilities *base, jvmtiCapabilities *tries)
{
    /* Added in the order they are kept, each set the one before plus one kind's;
     * then reversed, so that the set with all of them comes first. */
    jvmtiCapabilities steps[RP_ENGINES_MAX + 1];
    int taken[RP_ENGINES_MAX] = {0};
    size_t n = 0, i;
    steps[0] = *base;
    while ((i = keeps_longest(taken)) < g_n) {
        taken[i] = 1;
        steps[n + 1] = steps[n];
        g_kinds[i]->capabilities(ld, pot, &steps[n + 1]);
        n++;
    }
    for (size_t t = 0; t <= n; t++)
        tries[t] = steps[n - t];
    return n + 1;
}

void rp_kinds_init(const struct rp_kind_load *ld, const jvmtiCapabilities *got,
                   jvmtiEventCallbacks *cb)
{
    for (size_t i = 0; i < g_n; i++)
        if (g_kinds[i]->init)
            g_kinds[i]->init(ld, got, cb);
}

void rp_kinds_thread_start(struct rp_slot *s, JNIEnv *jni, jobject thread)
{
    for (size_t i = 0; s && i < g_n; i++)
        if (g_kinds[i]->thread_start)
            g_kinds[i]->thread_start(s, jni, thread);
}
