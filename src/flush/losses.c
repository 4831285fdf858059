/*
 * src/flush/losses.c — what the flusher could not write (see losses.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ringprof/format.h"
#include "core/log.h"
#include "flush/losses.h"
#include "threads/slottab.h"

static const char *const LOSS_NAMES[RP_LOSSES] = {"thread_gone", "no_chunk", "no_memory"};

/* Pending counts: [0] the shared ones, [1 + i] kind i's if it counts apart. */
static uint64_t g_lost[1 + RP_ENGINES_MAX][RP_LOSSES];
static uint64_t g_bad;

struct ring_seen {
    uint64_t dropped[RP_RING_DROP_REASONS];
};
static struct rp_slottab g_ring_seen = RP_SLOTTAB(struct ring_seen);

void rp_losses_record(const struct rp_kind *k, size_t index, enum rp_loss why)
{
    g_lost[(k->flags & RP_KIND_LOST_APART) ? 1 + index : 0][why]++;
}

void rp_losses_bad(uint64_t n)
{
    g_bad += n;
}

void rp_losses_ring(const struct rp_ring *ring, uint64_t *seen, rp_counters_emit_fn emit,
                    void *ctx)
{
    struct rp_ring_stats st;
    rp_ring_stats(ring, &st);
    for (int r = 0; r < RP_RING_DROP_REASONS; r++) {
        uint64_t d = st.dropped[r] - seen[r];
        if (d) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", RP_COUNTER_LOST_PREFIX,
                     rp_ring_drop_name((enum rp_ring_drop)r));
            if (emit(ctx, name, d) == 0)
                seen[r] = st.dropped[r];
        }
    }
}

void rp_losses_slot(struct rp_slot *s, rp_counters_emit_fn emit, void *ctx)
{
    struct ring_seen *seen = s->ring ? rp_slottab_get(&g_ring_seen, s->index, 1) : NULL;
    if (seen)
        rp_losses_ring(s->ring, seen->dropped, emit, ctx);
}

/* A pending count into the chunk; what it took is no longer pending. */
static void pending(const char *name, uint64_t *value, rp_counters_emit_fn emit, void *ctx)
{
    if (*value && emit(ctx, name, *value) == 0)
        *value = 0;
}

void rp_losses_write(rp_counters_emit_fn emit, void *ctx)
{
    size_t n;
    const struct rp_kind *const *k = rp_kinds(&n);
    char name[64];
    for (int l = 0; l < RP_LOSSES; l++) {
        snprintf(name, sizeof name, "%s%s", RP_COUNTER_LOST_PREFIX, LOSS_NAMES[l]);
        pending(name, &g_lost[0][l], emit, ctx);
    }
    for (size_t i = 0; i < n; i++)
        for (int l = 0; l < RP_LOSSES && (k[i]->flags & RP_KIND_LOST_APART); l++) {
            snprintf(name, sizeof name, "%s%s_%s", RP_COUNTER_LOST_PREFIX, k[i]->engine.name,
                     LOSS_NAMES[l]);
            pending(name, &g_lost[1 + i][l], emit, ctx);
        }
    pending(RP_COUNTER_LOST_PREFIX "bad_record", &g_bad, emit, ctx);
}

/* ------------------------------------------------- segments not written -- */

#define SEGFAIL_LOG_NS (60 * 1000000000ull)

static uint64_t g_segfail_logged_ns;    /* the last report                          */
static uint64_t g_segfail_unlogged;     /* failures since, not yet reported         */

void rp_losses_segment(const char *dir, int ok, int e, uint64_t now)
{
    if (ok) {
        if (g_segfail_unlogged)
            rp_log("writing to %s works again; %" PRIu64 " more segment%s could not be "
                   "written since the last report (counted in lost.write)", dir,
                   g_segfail_unlogged, g_segfail_unlogged == 1 ? "" : "s");
        g_segfail_unlogged = 0;
        g_segfail_logged_ns = 0;
        return;
    }
    if (g_segfail_logged_ns && now - g_segfail_logged_ns < SEGFAIL_LOG_NS) {
        g_segfail_unlogged++;
        return;
    }
    if (g_segfail_unlogged)
        rp_log("a segment could not be written to %s: %s, and %" PRIu64 " more since "
               "the last report (counted in lost.write; writing goes on)", dir,
               strerror(e), g_segfail_unlogged);
    else
        rp_log("a segment could not be written to %s: %s (counted in lost.write; "
               "writing goes on; further failures are reported at most once a minute)",
               dir, strerror(e));
    g_segfail_logged_ns = now ? now : 1;
    g_segfail_unlogged = 0;
}
