/*
 * src/flush/kind.c — the list of event kinds (see kind.h): set once at load,
 * read by the flusher, the stacks' walk statuses and the control socket.
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
