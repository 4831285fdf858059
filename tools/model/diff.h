/*
 * tools/model/diff.h — two finished profiles of one event kind (profile.h), BASE
 * and NEW, joined for `ringprof diff`.
 *
 * Two views, both keyed by the names the profiles show (never by their indexes,
 * which each profile numbers its own way):
 *   - rows: one per method display name (or class, package with --group), its
 *     self and total weight in each profile, total counted once per stack as the
 *     flat format counts it (rp_prof_method_rows). What the flat table ranks.
 *   - a merged calling context tree: a node per call path (frame names and frame
 *     types from the root down) present in either profile, with the self and
 *     total weight of each. What the collapsed and html outputs draw.
 * Index [0] of every pair is BASE, [1] NEW. Weights are the profiles' own, in
 * the kind's unit; `scale` is what a BASE weight is multiplied by to be
 * compared with a NEW one: 1, or with normalisation NEW's total over BASE's, so
 * that equal shares compare equal (rp_diff_base).
 *
 * A model, not a format: the writers (outputs/out_diff.c, out_html.c) draw it.
 *
 * Memory is proportional to the distinct names and call paths of the two
 * profiles. Single-threaded; allocation failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_DIFF_H
#define RINGPROF_TOOLS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "strtab.h"

struct rp_diff_row {
    uint32_t name;               /* into rp_diff.names                          */
    uint64_t self[2], total[2];  /* weight, [0] base, [1] new                   */
};

struct rp_diff_node {
    uint32_t name;               /* into rp_diff.names; the root's is ""        */
    int type;                    /* the profiles' frame type (rp_prof_frame),   */
                                 /* -1 for the root, -2 for a thread node       */
    uint32_t parent;             /* RP_PROF_NONE for the root (node 0)          */
    uint32_t first_child, next_sibling;  /* sorted by NEW's total, then BASE's, */
                                 /* then name: NEW's shape, deterministic       */
    uint64_t self[2], total[2];  /* weight, [0] base, [1] new                   */
};

struct rp_diff {
    const struct rp_profile *p[2];
    double scale;                /* a base weight times scale compares with new  */
    uint64_t whole[2];           /* the profiles' total weights                 */
    struct rp_strtab names;
    struct rp_diff_row *rows;    size_t nrows;    /* indexed by name            */
    struct rp_diff_node *nodes;  size_t nnodes;
    /* private: the (parent, name, type) -> child index */
    uint32_t *kid_slot;          size_t kid_mask;
};

/* rp_diff_build: join `base` and `new` (both finished, of one kind) into d.
 * normalize: scale base weights to new's total (when base's is not 0). */
void rp_diff_build(struct rp_diff *d, const struct rp_profile *base,
                   const struct rp_profile *newp, int normalize);

/* A base weight as compared with new ones: w * d->scale. */
double rp_diff_base(const struct rp_diff *d, uint64_t w);

/* The path of node `n` as rp_prof_path gives it for a profile: node indexes
 * from the root's child down, into path[0..cap). @return its length. */
size_t rp_diff_path(const struct rp_diff *d, uint32_t n, uint32_t *path, size_t cap);

void rp_diff_free(struct rp_diff *d);

#endif
