/*
 * tools/model/profile_impl.h — the profile builder's state (struct rp_prof_build),
 * shared by the three files the builder is made of, and nothing else's business:
 *
 *   profile_intern.c  what the profile keeps, interned by content in tables that
 *                     live as long as the profile: strings (one arena),
 *                     methods, frames, threads, and stacks (a frame sequence
 *                     from a root to its leaf node, by 128-bit hash)
 *   profile_tree.c    the calling context tree: nodes and their child links
 *                     (parent, frame) -> node, the totals and sibling order of
 *                     rp_prof_finish, walks, and freeing
 *   profile_build.c   reading chunks into the profile through the recording
 *                     stream (stream.h): the per-chunk maps from chunk ids to
 *                     profile entries, the kinds, the filters, the samples
 *
 * The comment at the top of profile_build.c says how a sample goes through
 * them. Functions here are prefixed prof_; all take the profile being built
 * (p->b not finished).
 */
#ifndef RINGPROF_TOOLS_PROFILE_IMPL_H
#define RINGPROF_TOOLS_PROFILE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "stream.h"

/* A block of the string arena. */
struct sblock {
    struct sblock *next;
    size_t used, cap;
    char data[];
};

/* An open-addressing set of uint32 indexes (RP_PROF_NONE = empty); the caller
 * hashes and compares, so one structure serves every table. */
struct idx_table {
    uint32_t *slot;
    size_t mask, used;
};

struct frame_filter {      /* per profile frame: lazily evaluated regex results */
    uint8_t inc_done : 1, inc : 1, exc_done : 1, exc : 1;
};

struct kind_state {
    int8_t state;          /* 0: not looked at yet, 1: selected, -1: not        */
    int8_t class_x, objects_x;   /* extra indexes, -1: absent                   */
    int8_t state_x, age_x;
    int8_t unfinished;     /* lock.waiting: its records go through options.waiting */
    uint32_t seen;         /* index into p->kinds                               */
};

/* The leaf key's bit that marks a lock wait still in progress: stack_leaf adds
 * "[unfinished]" above its class frame. Class ids from extras are clamped below
 * it (no chunk defines that many: the density rule of docs/format.md). */
#define CLS_UNFINISHED 0x80000000u
#define CLS_MAX (CLS_UNFINISHED - 1)

struct thr_state {
    uint32_t thread;       /* profile thread + 1; 0: not resolved yet           */
    int8_t pass;
};

/* A virtual thread on a carrier, in the chunk being read. */
struct vt_entry {
    uint32_t thread, vthread;  /* chunk ids; vthread 0: empty slot             */
    const char *name;          /* the VTHREAD's name when resolved              */
    struct thr_state st;
};

struct kid_entry {
    uint32_t parent;       /* RP_PROF_NONE: empty slot                          */
    uint32_t ref;          /* frame index, or thread index | KID_THREAD         */
    uint32_t node;
};
#define KID_THREAD 0x80000000u

/* A distinct (root, frame sequence) seen before, in any chunk: its leaf. Keyed by
 * two independent 64-bit hashes of the sequence and not verified frame by frame:
 * a false match needs a 128-bit collision (odds about n^2 / 2^129 for n distinct
 * stacks: 1e-20 at a billion), and saves walking the tree, one cache miss per
 * frame, for every distinct stack of every chunk. */
struct stk_entry {
    uint64_t h1, h2;
    uint32_t leaf;         /* LEAF_NONE: empty slot; LEAF_DROPPED: filtered     */
    uint32_t pad;
};

struct leaf_entry {
    uint32_t root, stack, cls, leaf;
};

#define LEAF_NONE    RP_PROF_NONE         /* not computed                        */
#define LEAF_DROPPED (RP_PROF_NONE - 1)   /* filtered out by --include/--exclude */

struct rp_prof_build {
    int finished;
    struct rp_prof_options o;
    char *event;

    struct sblock *arena;
    struct idx_table strs;      /* -> index into str_list                       */
    const char **str_list;      size_t nstr, cap_str;
    const char **shown;         /* per string index: its demangled form (NULL:  */
    size_t cap_shown;           /* not asked yet), so each name is demangled once */

    struct idx_table meths, frms, thrs;
    struct stk_entry *stk;      size_t stk_mask, stk_used;
    struct kid_entry *kids;     /* (parent, ref) -> child, keys inline: one    */
    size_t kids_mask, kids_used;/* cache line per look-up, not two            */
    size_t cap_nodes, cap_frames, cap_methods, cap_threads, cap_sources, cap_kinds;
    struct frame_filter *ffilt; size_t cap_ffilt;

    /* per chunk */
    struct rp_stream st;        /* the chunk's reader, clock, recording, kinds  */
    int instant_ok;             /* options.instant: this chunk's instant, if any */
    uint64_t instant_mono;
    double interval_ns;         /* from agent.options, 0: unknown               */
    uint32_t *frame_map;        size_t n_frame_map;
    uint32_t *meth_map[2];      size_t n_meth_map[2];   /* [plain]: chunk method */
    struct thr_state *thr_map;  size_t n_thr_map;
    struct vt_entry *vt_tab;    size_t vt_mask, vt_used;
    struct kind_state *kind_map; size_t n_kind_map;
    struct thr_state thr_undefined;   /* what undefined chunk ids resolve to    */
    struct kind_state kind_undefined;
    uint32_t *leaf_arr;         size_t n_leaf_arr;
    struct acc { uint64_t v[RP_PV_MAX]; } *acc;   /* per chunk stack id, as      */
                                /* leaf_arr: sums added to the leaves at the end */
                                /* of the chunk; a small dense array keeps the   */
                                /* per-sample add in cache                       */
    struct leaf_entry *leaf_tab; size_t leaf_mask, leaf_used;
    uint32_t *pathbuf;          size_t cap_path;
    uint32_t *kind_of_str;      size_t n_kind_of_str;   /* string index -> kinds + 1 */
    uint32_t unknown_frame;     /* the markers of undefined chunk ids, once made */
    uint32_t unknown_method;    /* (RP_PROF_NONE until then)                     */
};

/* The recording (p->sources index) of the chunk being read. */
static inline uint32_t prof_source(const struct rp_profile *p)
{
    return p->b->st.rec;
}

static inline int prof_frame_is_java(int type)
{
    return type == RP_FRAME_INTERPRETED || type == RP_FRAME_JIT ||
           type == RP_FRAME_INLINED;
}

/* ------------------------------------------------ profile_intern.c -- */

/* An empty index table of `cap` slots (a power of two). */
void prof_tab_init(struct idx_table *t, size_t cap);

/* The index of `s` (NULL: "") in the string table, interning it. */
uint32_t prof_str_id(struct rp_profile *p, const char *s);
/* `s` interned: equal strings are one pointer for the profile's life. */
const char *prof_str(struct rp_profile *p, const char *s);
/* printf into the string table. */
const char *prof_strf(struct rp_profile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A native symbol as the profile shows it (options.demangle), interned. */
const char *prof_name_shown(struct rp_profile *p, const char *name);
/* A Java class name without a hidden class's address when options.norm asks. */
const char *prof_class_shown(struct rp_profile *p, const char *klass);

/* The method (klass, name, sig, file); `plain`: a native, C++, kernel, marker
 * or class frame, shown by name only; `raw`: the name as recorded when `name`
 * is its demangled form (NULL: `name`). */
uint32_t prof_method(struct rp_profile *p, const char *klass, const char *name,
                     const char *sig, const char *file, uint32_t flags, int plain,
                     const char *raw);
/* The frame (method, type, bci, line), bci and line kept as the granularity
 * asks. */
uint32_t prof_frame(struct rp_profile *p, uint32_t method, int type, int32_t bci,
                    uint32_t line);
/* A converter-made frame: "[truncated]", "[no stack]", ... */
uint32_t prof_marker(struct rp_profile *p, const char *text);

/* The thread (current recording, tid, vthread; 0: its own), created with its
 * root node in per-thread mode. */
uint32_t prof_thread(struct rp_profile *p, uint64_t tid, uint64_t vthread);
/* Where that thread is in b->thrs: j with b->thrs.slot[j] its index, or
 * RP_PROF_NONE (the free slot it would take). */
size_t prof_thread_slot(const struct rp_profile *p, uint64_t tid, uint64_t vthread);
/* Thread t was (re)named `name` (rp_thread_rename); its label follows. */
void prof_thread_named(struct rp_profile *p, struct rp_prof_thread *t, const char *name);
/* A virtual thread's label from its names and carrier. */
void prof_vthread_label(struct rp_profile *p, struct rp_prof_thread *t);

/* Make room for one more stack in b->stk. */
void prof_stk_grow(struct rp_prof_build *b);
/* The leaf of frame sequence path[0..len) (root side first) below `root`:
 * filtered (--include, --exclude: LEAF_DROPPED), grouped (--group), and
 * remembered by hash, so a sequence seen before costs no walk. May rewrite
 * path. */
uint32_t prof_path_leaf(struct rp_profile *p, uint32_t root, uint32_t *path, size_t len);

/* -------------------------------------------------- profile_tree.c -- */

/* Make room for one more child link. */
void prof_kids_grow(struct rp_prof_build *b);
/* A new node below `parent` (RP_PROF_NONE: the root). Exits past 4 billion. */
uint32_t prof_node_new(struct rp_profile *p, uint32_t parent, uint16_t kind, uint32_t ref);
/* The child of `parent` for `frame`, created on first use. */
uint32_t prof_node_child(struct rp_profile *p, uint32_t parent, uint32_t frame);

#endif
