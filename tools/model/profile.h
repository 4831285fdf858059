/*
 * tools/model/profile.h — the aggregated profile that every `ringprof convert` format is
 * written from: a calling context tree (CCT) of one event kind, built by streaming
 * chunk files once.
 *
 * Model. A profile holds the samples of ONE event kind (cpu, alloc, ...), after the
 * filters in rp_prof_options. Every distinct call path is one node of the CCT; a
 * sample adds its values to the `self` of the node of its leaf frame. Node 0 is the
 * synthetic root (kind lock also takes its waits still in progress, kind
 * lock.waiting, as options.waiting says). Below it come:
 *   - merged mode: the root-most frames of the stacks directly;
 *   - per-thread mode: one RP_PNODE_THREAD node per thread (rp_prof_thread), and
 *     the frames below those.
 * A stack flagged RP_STACK_TRUNCATED gets the marker frame "[truncated]" between
 * its root parent (root or thread node) and its root-most recorded frame; an empty
 * stack becomes the single marker "[no stack]"; a failed walk's marker frames
 * (RP_FRAME_MARKER, e.g. "[agct:gc_active]") are ordinary frames. For a kind with
 * a "class" extra field (the alloc kind), the allocated class is appended as a leaf
 * frame of type RP_PFRAME_CLASS, so each (stack, class) allocation site is a node.
 *
 * Frames and methods are interned across all chunks by content (never by chunk
 * ids), so the same method from two JVMs is one rp_prof_method. A frame is
 * (method, type, line, bci) with line and bci kept only as far as the granularity
 * asks: RP_GRAN_METHOD keeps neither (line 0, bci -1), RP_GRAN_LINE keeps the line,
 * RP_GRAN_BCI keeps the bci and its line (a bci has one line, so the identity is
 * the bci's; the display shows the bci), RP_GRAN_FULL the same with the method's
 * display, RP_GRAN_SITE the line with the method's display. The frame type is
 * part of the identity, so a
 * method seen both JIT-compiled and interpreted is two sibling nodes (as the
 * flame-graph tools show it), unless options.norm merges frame types. With
 * options.norm.group a Java frame is its class or package: a frame of type
 * RP_FRAME_JIT whose method is plain (named by the group alone).
 *
 * Values. Each node carries nvalues figures, described by vtypes[] (pprof-style
 * type and unit): [RP_PV_SAMPLES] the number of samples ("samples", "count"),
 * [RP_PV_WEIGHT] the summed weight in the kind's unit (e.g. "cpu", "ns";
 * "alloc", "bytes"), and, when the kind has an "objects" extra field,
 * [RP_PV_OBJECTS] the summed estimated object count ("objects", "count").
 * self[v] is what samples ending exactly at the node add; total[v] is self plus
 * the totals of the children (inclusive). Totals are valid after rp_prof_finish.
 *
 * Memory is proportional to distinct call paths, frames and methods, never to the
 * number of samples: per chunk, a table maps the chunk's stack id to its CCT leaf,
 * filled lazily, so each sample costs one array look-up and a few additions.
 *
 * Threads. Nothing here is thread-safe; one thread builds and reads a profile.
 * Everything allocates; allocation failure is fatal (the tool prints "out of memory"
 * and exits 1), so no function below reports ENOMEM.
 *
 * Reading a finished profile. All arrays below are read-only for callers and stay
 * valid until rp_prof_free. Index 0 of nodes is the root; index 0 of frames,
 * methods, threads and sources is a valid entry (there is no "none" slot), and
 * RP_PROF_NONE marks "no index" in links.
 */
#ifndef RINGPROF_TOOLS_PROFILE_H
#define RINGPROF_TOOLS_PROFILE_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "ringprof/chunk.h"
#include "ringprof/events.h"

#include "demangle.h"
#include "frame_norm.h"
#include "stream.h"

#define RP_PROF_NONE UINT32_MAX

/* Value slots of rp_prof_node.self / .total. */
enum {
    RP_PV_SAMPLES = 0,   /* number of samples                                     */
    RP_PV_WEIGHT  = 1,   /* summed weight, in the kind's unit                     */
    RP_PV_OBJECTS = 2,   /* summed "objects" extra (alloc kinds only)             */
    RP_PV_MAX     = 3
};

struct rp_prof_value_type {
    const char *type;    /* "samples", the kind's name ("cpu", "alloc"), "objects" */
    const char *unit;    /* "count", the kind's unit ("ns", "bytes"), "count"      */
};

/* Frame granularity (--lines, --bci). */
enum rp_prof_granularity {
    RP_GRAN_METHOD = 0,
    RP_GRAN_LINE,
    RP_GRAN_BCI,
    /* Frames keep both line and bci, and are displayed (and filtered) by their
     * method alone: for a writer that carries lines and bcis as data (jfr). */
    RP_GRAN_FULL,
    /* Frames keep the line, and are displayed (and filtered) by their method
     * alone: allocation sites whose traces show their lines, HPROF's way
     * (flat's SITES, `ringprof leaks`), as a stack at line granularity. */
    RP_GRAN_SITE
};

/* Frame types: the chunk format's rp_frame_type values, plus the converter's own. */
enum {
    RP_PFRAME_CLASS = 16   /* the allocated class, as the leaf of an alloc sample   */
};

/* A method, interned by (class, name): Java overloads are one method, which
 * keeps the signature, file and flags of the first one seen, unless
 * options.norm.signatures keeps them apart (frame_norm.h); a native, C++,
 * kernel, marker or class frame's by (library, name, signature, file), its name
 * being what options.demangle made of it. Strings are never NULL:
 * unknown parts are "". For native frames `klass` is the library (or ""), for
 * markers `name` is the whole marker text, e.g. "[agct:gc_active]". A native,
 * C++ or kernel frame's `name` is its symbol demangled in the profile's style
 * (options.demangle), so C++ overloads that demangle alike are one method in
 * the short style; `raw` is the symbol as recorded (of the first such overload
 * seen), the same string as `name` when nothing was demangled. */
struct rp_prof_method {
    const char *klass, *name, *signature, *file;
    const char *raw;
    const char *display;   /* "klass.name" ("klass.name(params)" with           */
                           /* RP_SIG_SHOW); just "name" when klass is "" and for  */
                           /* native, C++, kernel, marker and class frames (a     */
                           /* method seen in such frames is interned apart from   */
                           /* a Java one of the same name)                        */
    uint32_t flags;        /* RP_METHOD_*                                         */
    int plain;             /* 1: from native, C++, kernel, marker or class frames */
};

struct rp_prof_frame {
    uint32_t method;       /* index into rp_profile.methods                      */
    int type;              /* enum rp_frame_type, or RP_PFRAME_CLASS              */
    int32_t bci;           /* -1: none (always -1 but at RP_GRAN_BCI and _FULL)   */
    uint32_t line;         /* 0: unknown (always 0 at RP_GRAN_METHOD)             */
    const char *display;   /* method display plus ":line" / "@bci" as the         */
                           /* granularity asks, for Java frames only (":?" / "@?" */
                           /* when unknown); never                                */
                           /* NULL; may contain any byte a name had, writers      */
                           /* escape what their format cannot carry              */
};

/* Where samples came from: one per recording (chunks sharing recording.id; without
 * an id, one per pid+host). These are the labels kept when recordings merge. */
struct rp_prof_source {
    const char *recording, *pid, *host, *jvm;   /* "" when the header lacks them */
    const char *service, *labels, *main;        /* RP_META_SERVICE, _LABELS,      */
                                                /* _JVM_MAIN; "" when absent      */
    uint64_t wall_first, wall_last;  /* CLOCK_REALTIME ns of its kept samples;    */
                                     /* 0 when none                               */
};

/* A thread: (source, os_tid), or, for samples that ran on a virtual thread,
 * (source, os_tid of its carrier, the virtual thread's Java id): one entry per
 * virtual thread and carrier it ran on. `name` is its name at its first sample
 * of the profile's kind; `renamed` the newest name the recording gave it after
 * that, when it differs (rp_thread_display). */
struct rp_prof_thread {
    uint32_t source;
    uint64_t os_tid, java_tid;
    uint64_t vthread;      /* a virtual thread's Java id (java_tid too); 0: the   */
                           /* entry is an OS thread's own                         */
    const char *carrier;   /* a virtual thread's: its carrier's name, "" unnamed  */
    const char *name;      /* "" if never named                                   */
    const char *renamed;   /* "" if not renamed since                             */
    const char *label;     /* "[name]", "[name (renamed NEW)]", or "[tid N]" when */
                           /* unnamed; a virtual thread's "[name (virtual #ID) on */
                           /* CARRIER]", "[virtual #ID on CARRIER]" unnamed: the  */
                           /* text of its thread node and collapsed root frame    */
    uint32_t flags;        /* RP_THREAD_*                                         */
    uint32_t node;         /* its RP_PNODE_THREAD node, RP_PROF_NONE if merged    */
    uint64_t samples;      /* kept samples of the profile's kind                  */
};

enum rp_prof_node_kind {
    RP_PNODE_ROOT = 0,
    RP_PNODE_THREAD,       /* per-thread mode: `ref` is a thread index            */
    RP_PNODE_FRAME         /* `ref` is a frame index                              */
};

struct rp_prof_node {
    uint32_t parent;       /* RP_PROF_NONE for the root                           */
    uint32_t first_child;  /* children linked by next_sibling; after              */
    uint32_t next_sibling; /* rp_prof_finish sorted by total weight, descending,  */
                           /* ties by display name (deterministic output)         */
    uint32_t ref;          /* frame or thread index (see kind)                    */
    uint16_t kind;         /* enum rp_prof_node_kind                              */
    uint16_t depth;        /* root 0; saturates at UINT16_MAX                     */
    uint64_t self[RP_PV_MAX];
    uint64_t total[RP_PV_MAX];
};

/* Counts of what building saw; the tool prints them on stderr and in headers. */
struct rp_prof_stats {
    uint64_t files, files_unreadable;
    uint64_t segments_ok, segments_bad, segments_partial, records_bad;
    uint64_t diag_warnings;          /* problems the reader reported              */
    uint64_t samples_read;           /* every sample of every kind                */
    uint64_t samples_kept;           /* in the profile                            */
    uint64_t samples_other_kind;     /* of kinds not selected                     */
    uint64_t samples_thread_filtered, samples_time_filtered, samples_frame_filtered;
    uint64_t samples_unresolved;     /* kind id unknown (its KIND record was lost)  */
    uint64_t samples_instant_filtered; /* not at the instant kept (options.instant):  */
                                     /* other live snapshots                        */
    uint64_t weight_read_kind;       /* summed weight of the selected kind, before  */
                                     /* any filter                                  */
    uint64_t samples_state_filtered; /* wall samples not in options.state_mask     */
    uint64_t samples_young_filtered; /* live samples under options.min_age_gcs     */
    uint64_t samples_superseded;     /* in-progress lock waits that another record  */
                                     /* of the same wait stands for (options.waiting) */
};

/* A kind seen in the inputs, with its counts (so the tool can say what else there
 * was). */
struct rp_prof_kind_seen {
    const char *name, *unit;
    uint64_t period;
    uint64_t samples;
};

struct rp_profile;

/* The callbacks of a build (struct rp_prof_options: on_sample, on_chunk,
 * on_event, which say when each is called). */
typedef void rp_prof_sample_fn(void *arg, const struct rp_profile *p, uint32_t leaf,
                               const struct rp_event *ev, const struct rp_kind_info *kind);
typedef void rp_prof_chunk_fn(void *arg, const struct rp_profile *p,
                              const struct rp_reader *r, int end);
typedef void rp_prof_event_fn(void *arg, const struct rp_profile *p,
                              const struct rp_event *ev);

struct rp_prof_options {
    /* The kind to aggregate, by name. NULL: the first kind that has a sample. */
    const char *event;
    enum rp_prof_granularity granularity;
    int per_thread;
    /* POSIX ERE filters, compiled by the caller (REG_EXTENDED|REG_NOSUB), or NULL.
     * thread_re: keep samples whose thread's name (at the sample) matches; a
     * virtual thread's sample, when its name (as known at the sample), its
     * carrier's, or "virtual #ID" matches.
     * include_re: keep stacks with at least one frame whose display matches.
     * exclude_re: drop stacks with any frame whose display matches.
     * Frame filters see frame display names at the profile's granularity, and the
     * synthetic "[truncated]" / class frames too. */
    const regex_t *thread_re, *include_re, *exclude_re;
    /* Keep samples with from_wall <= wall time < to_wall (CLOCK_REALTIME ns);
     * 0 means unbounded on that side. A chunk without a clock mapping in its header
     * is kept whole. */
    uint64_t from_wall, to_wall;
    /* Reader diagnostics (file, offset, reason). NULL: counted only. */
    rp_reader_diag_fn diag;
    void *diag_arg;
    /* Keep only the samples at one instant per recording (a live snapshot, whose
     * samples all carry the snapshot's time). Called once per chunk with the
     * chunk's recording key (rp_prof_source.recording): @return 1 and *mono, the
     * monotonic time to keep, or 0 to keep none of the chunk's samples. NULL: no
     * such filter. Applies after the time filter, before the thread filter. */
    int (*instant)(void *arg, const char *recording, uint64_t *mono);
    void *instant_arg;
    /* Called for every sample kept, after it was added, with its leaf node and
     * its kind as the chunk defines it (to find extra fields by name; NULL when
     * the KIND record was lost). For figures the tree cannot hold (ages, series
     * over time). NULL: none. */
    rp_prof_sample_fn *on_sample;
    void *on_sample_arg;
    /* With on_sample_arg, for a writer that streams every event (the JFR
     * writer): on_chunk is called when a chunk's reading begins (end 0, before
     * its first event) and ends (end 1, its reader's stats complete); on_event
     * for every event that is not a sample or a THREAD record (segments,
     * counters, gauges, thread CPU readings), unfiltered. NULL: none. */
    rp_prof_chunk_fn *on_chunk;
    rp_prof_event_fn *on_event;
    /* Keep the samples of every kind, not only `event`'s (the profile's kind and
     * values are then the first kind's; only on_sample can tell them apart). */
    int all_kinds;
    /* Thread states (kind wall, its "state" extra; include/ringprof/events.h).
     * state_mask: keep only samples whose state's bit (1u << state) is set; a
     * sample without the extra, or with a state this build does not know, counts
     * as RP_TS_UNKNOWN; 0: no filter. Applies after the thread filter.
     * state_frames: add the state as the leaf frame "[state:NAME]" (a marker
     * frame, so --include/--exclude see it), below the sample's own leaf. Both
     * apply only to a kind with a "state" extra. */
    uint32_t state_mask;
    int state_frames;
    /* Live objects (kind live, its "age_gcs" extra): keep only those that
     * survived at least this many GCs; 0: all. A kind without the extra is not
     * filtered. */
    uint32_t min_age_gcs;
    /* Lock waits still in progress (kind lock.waiting, include/ringprof/events.h),
     * which `event` "lock" selects along with the finished ones: called for each
     * such record with its chunk's recording key (rp_prof_source.recording), its
     * thread's os_tid, its time (the wait's start) and weight (its age);
     * @return 1 to keep it (it stands for its wait: rp_scan_wait_keep), 0 to drop
     * it (counted in samples_superseded). NULL: none kept. A kept one gets the
     * marker frame "[unfinished]" between its stack and its monitor's class
     * frame. Called before every other filter. */
    int (*waiting)(void *arg, const char *recording, uint64_t os_tid, uint64_t start,
                   uint64_t weight);
    void *waiting_arg;
    /* How native, C++ and kernel symbols are named (tools/model/demangle.h): short
     * (0, the default), full or none. The frame filters see the names so. */
    enum rp_demangle_style demangle;
    /* Frame normalisation (frame_norm.h): hidden-class names without their
     * addresses, one frame per method whatever its frame type, frames grouped
     * by class or package. The names change as methods are read, so the frame
     * filters see the stripped hidden-class names; grouping comes after the
     * filters, which see the methods. All off when zeroed. */
    struct rp_frame_norm norm;
};

struct rp_prof_build;   /* private building state */

struct rp_profile {
    /* The kind (valid once a sample was kept or `event` was named; "" otherwise). */
    const char *kind, *unit;
    uint64_t period;                 /* the kind's nominal weight of one sample   */
    /* Estimated time of one weight unit in ns: 1 for unit "ns"; the sampling
     * interval (from the agent.options "interval=" setting) for count-like units
     * ("samples", "count", ""); 0 when the unit is not time (e.g. bytes): formats
     * then show no time column. */
    double ns_per_unit;
    enum rp_prof_granularity granularity;
    int per_thread;
    enum rp_prof_group group;        /* what a Java frame names (options.norm.group) */

    size_t nvalues;                  /* 2, or 3 with RP_PV_OBJECTS                */
    struct rp_prof_value_type vtypes[RP_PV_MAX];

    struct rp_prof_node *nodes;      size_t nnodes;
    struct rp_prof_frame *frames;    size_t nframes;
    struct rp_prof_method *methods;  size_t nmethods;
    struct rp_prof_thread *threads;  size_t nthreads;
    struct rp_prof_source *sources;  size_t nsources;
    struct rp_prof_kind_seen *kinds; size_t nkinds;

    uint64_t wall_first, wall_last;  /* over kept samples; 0 when none            */
    /* For a kind with a "state" extra (wall): the kept samples and their weight
     * per thread state; has_states says the kind has the extra. */
    int has_states;
    uint64_t state_samples[RP_TS_COUNT], state_weight[RP_TS_COUNT];
    struct rp_prof_stats stats;

    struct rp_prof_build *b;         /* private                                   */
};

/* rp_prof_new: an empty profile. `o` is copied (the regexes are borrowed and must
 * outlive the profile's building). */
struct rp_profile *rp_prof_new(const struct rp_prof_options *o);

/*
 * rp_prof_add_file: stream one chunk file into the profile. Problems are reported
 * through o->diag, skipped and counted (stats). @return 0 if the file could be
 * opened as a chunk (even if damaged), -1 if not (reported through diag as fatal).
 */
int rp_prof_add_file(struct rp_profile *p, const char *path);

/* Inside an on_sample callback only: the THREAD record `id` of the chunk being
 * read, for extras that name a thread (kind lock's "owner"); NULL when the
 * chunk has no such thread or no chunk is being read. */
const struct rp_thread_info *rp_prof_chunk_thread(const struct rp_profile *p,
                                                  uint32_t id);

/* Inside an on_sample callback only: the VTHREAD record `id` of the chunk being
 * read (a sample's vthread); NULL when the chunk has none such. */
const struct rp_vthread_info *rp_prof_chunk_vthread(const struct rp_profile *p,
                                                    uint32_t id);

/* Inside an on_sample callback only: the name of the chunk's CLASS record `id`
 * as the profile shows class names (options.norm), for extras that name a class
 * (kind wall's "blocker_class"); NULL when the chunk has no such class or no
 * chunk is being read. Valid for the profile's life. */
const char *rp_prof_chunk_class(const struct rp_profile *p, uint32_t id);

/* rp_prof_add_reader: the same from an open reader (it is read to its end, not
 * closed). For callers that opened the file themselves. */
void rp_prof_add_reader(struct rp_profile *p, struct rp_reader *r);

/*
 * rp_prof_finish: compute totals and sort children. Call once, after the last add
 * and before reading nodes' totals or links; it frees the building state.
 */
void rp_prof_finish(struct rp_profile *p);

void rp_prof_free(struct rp_profile *p);

/* ------------------------------------------------ reading a finished profile -- */

/* The display text of a node: frame display, thread label "[name]" (or
 * "[tid N]" when unnamed), or "" for the root. */
const char *rp_prof_node_name(const struct rp_profile *p, uint32_t node);

/* The frame of a frame node, or NULL for root and thread nodes. */
const struct rp_prof_frame *rp_prof_node_frame(const struct rp_profile *p,
                                               uint32_t node);

/*
 * rp_prof_path: the node indexes from the root's child down to `node` (the root
 * itself excluded), root-most first, into path[0..cap). @return the path length
 * (node depth); if larger than cap, only the first cap entries were written.
 */
size_t rp_prof_path(const struct rp_profile *p, uint32_t node, uint32_t *path,
                    size_t cap);

/*
 * rp_prof_walk: visit the subtree of `start` in pre-order (children in sorted
 * order), calling fn(p, node, depth-below-start, arg). If fn returns 1 the node's
 * children are skipped; any other non-zero value stops the walk and is returned.
 * Iterative: deep trees cannot overflow the C stack. @return 0 or fn's stop value.
 */
typedef int (*rp_prof_visit_fn)(const struct rp_profile *p, uint32_t node,
                                size_t depth, void *arg);
int rp_prof_walk(const struct rp_profile *p, uint32_t start, rp_prof_visit_fn fn,
                 void *arg);

/*
 * rp_prof_foreach_stack: every node with samples of its own (self[RP_PV_SAMPLES]
 * > 0) — that is, every distinct stack as recorded, after the converter's frames
 * are added — in walk order, with its path (as rp_prof_path gives it: in
 * per-thread mode path[0] is the thread node; valid until fn returns).
 * @return 0 or fn's non-zero value, which stops the iteration.
 */
typedef int (*rp_prof_stack_fn)(const struct rp_profile *p, uint32_t leaf,
                                const uint32_t *path, size_t depth, void *arg);
int rp_prof_foreach_stack(const struct rp_profile *p, rp_prof_stack_fn fn, void *arg);

/* Format an estimated time (weight × ns_per_unit) as "1.234 s" / "12.3 ms" /
 * "456 us" / "789 ns" into buf. Returns buf. "" when ns_per_unit is 0. */
const char *rp_prof_fmt_time(const struct rp_profile *p, uint64_t weight, char *buf,
                             size_t cap);

/* Map a frame type to the collapsed-stack suffix flame-graph tools colour by:
 * "_[j]" JIT, "_[i]" inlined, "_[0]" interpreted, "_[k]" kernel, "" otherwise
 * (native, C++, markers, classes). */
const char *rp_prof_frame_suffix(int type);

/* Per-method figures over the whole profile. self[v]: samples whose leaf frame is
 * the method (for an allocation, the frame above the allocated class's).
 * total[v]: samples with the method anywhere on the stack, each sample counted
 * once however often the method recurs in it. */
struct rp_prof_method_row {
    uint32_t method;
    uint64_t self[RP_PV_MAX], total[RP_PV_MAX];
};
/* @return an array of p->nmethods rows, indexed by method. Caller frees. */
struct rp_prof_method_row *rp_prof_method_rows(const struct rp_profile *p);
/* The same with methods merged into rows by key[method] (< nkeys): a sample is
 * in a row's total once however many of its methods are on the stack (two
 * native symbols of one name in two libraries, a C++ overload). @return nkeys
 * rows indexed by key, .method being the key. Caller frees. */
struct rp_prof_method_row *rp_prof_method_rows_keyed(const struct rp_profile *p,
                                             const uint32_t *key, size_t nkeys);

/* Depth-first walk of the subtree of `start`: enter(node) in pre-order, leave(node)
 * after its subtree. No recursion. */
typedef void (*rp_prof_node_fn)(const struct rp_profile *p, uint32_t node, void *arg);
void rp_prof_walk2(const struct rp_profile *p, uint32_t start, rp_prof_node_fn enter,
               rp_prof_node_fn leave, void *arg);

/* The method of a frame node, RP_PROF_NONE for root and thread nodes. */
uint32_t rp_prof_node_method(const struct rp_profile *p, uint32_t node);

/* The recording stream of the chunk being read (stream.h): for the options'
 * callbacks (on_sample, on_event, on_chunk), which read the chunk's clock,
 * recording and kinds from it rather than derive them again. NULL outside a
 * chunk. */
struct rp_stream *rp_prof_stream(const struct rp_profile *p);

/* The name thread `t` is shown by (rp_thread_display), or for a virtual thread
 * that has none, "virtual #ID"; "" for an unnamed OS thread. */
void rp_prof_thread_name(char *buf, size_t cap, const struct rp_prof_thread *t);

#endif
