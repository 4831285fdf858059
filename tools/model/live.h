/*
 * tools/model/live.h — what the formats are told about live objects (kind `live`,
 * docs/profiles.md "Live objects"), and the identity of an allocation site
 * across two profiles.
 *
 * A live profile is always ONE snapshot per recording (cmd_convert selects it,
 * profile.h's `instant` filter keeps it): snapshots are levels, not events, and
 * adding two of them would count every surviving object twice. The flat format
 * prints ages, which the calling context tree cannot carry (they are not
 * additive), so they come beside the profile as one entry per live sample.
 *
 * The same site in two profiles (an alloc profile and the live profile of the
 * same recordings) is the same path of frames, compared by display name and
 * frame type, under the same thread when profiles are per thread: the node
 * indexes differ, as every profile interns on its own. rp_path_index finds the
 * node of one profile that matches a node of another.
 *
 * Not thread-safe; allocation failure exits.
 */
#ifndef RINGPROF_TOOLS_LIVE_H
#define RINGPROF_TOOLS_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* The age of one live sample (the "age_gcs" and "age_ms" extra fields). */
struct rp_live_age {
    uint32_t leaf;            /* its node in the live profile                   */
    uint32_t gcs;             /* GCs it survived                                */
    uint64_t ms;              /* ms since it was allocated                      */
};

struct rp_live_view {
    /* Which snapshot the live figures are from ("2026-11-21T06:02:14.000Z, 12
     * objects sampled, 6291456 bytes"; per recording when several merge), or
     * why there are none ("no live snapshot in the inputs: ..."). Never NULL. */
    const char *note;
    /* An alloc profile's flat table: the live profile to join its sites with
     * (the same recordings, filters, granularity and threads mode), or NULL
     * when there is no snapshot: the live columns then print "-". */
    const struct rp_profile *live;
    /* A live profile's flat table: the age of each sample kept, NULL when the
     * kind has no age fields. */
    const struct rp_live_age *ages;
    size_t nages;
};

/* An index of nodes of profile `p` by their path (see above). */
struct rp_path_index;

struct rp_path_index *rp_path_index_new(const struct rp_profile *p, const uint32_t *nodes,
                                        size_t n);
/* The indexed node of the same path as node `node` of profile `q`, or
 * RP_PROF_NONE. */
uint32_t rp_path_index_find(const struct rp_path_index *x, const struct rp_profile *q,
                            uint32_t node);
void rp_path_index_free(struct rp_path_index *x);

#endif
