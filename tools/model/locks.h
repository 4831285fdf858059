/*
 * tools/model/locks.h — the model of `ringprof locks`: where threads wait for
 * locks, from two sources, with no output in it (outputs/out_locks.h prints it).
 *
 *   - monitors (synchronized): the lock samples (kind lock, the agent's lock=
 *     option; include/ringprof/events.h). Each is one contended entry that
 *     waited at least the threshold, weighing the ns waited, with the monitor's
 *     class and the owner thread when the wait began; a wait that never ended
 *     (a deadlock, a hang) is its latest in-progress record (kind lock.waiting,
 *     one per wait by the rule of waits.h), weighing its wait so far, and is
 *     also kept on its own ("stuck"). Monitors are grouped by class (the agent
 *     records the class, not the object) and ranked by total wait; each has its
 *     waiting stacks and the owners that made others wait, by the wait they
 *     caused (unknown when the agent could not tell).
 *   - sites of wall-clock samples (kind wall) in one thread state: parked, for
 *     java.util.concurrent locks and conditions (the JVM reports no contention
 *     event for them, but a thread waiting for one is parked in
 *     LockSupport.park); and blocked, for monitor waits when the inputs have no
 *     lock samples. A parked stack's site is the code that asked to wait: going
 *     from LockSupport.park* towards the root, the first frame whose class is
 *     not in java.util.concurrent.locks, with the last skipped frame it called
 *     ("via"), so app.Billing.charge via ReentrantLock.lock is one site. A
 *     blocked stack's site is its leaf frame. Sites are ranked by wall time;
 *     each has the classes of the objects parked on and, where those are
 *     AbstractOwnableSynchronizers, their owners (the wall kind's blocker_class
 *     and blocker_owner extras; a recording without them has none, unknown).
 *
 * Every pass is a profile (profile.h) with the command's filters, so stacks are
 * interned once and memory is proportional to distinct stacks, monitors, sites
 * and owners, never to samples: the lock profile's leaves are (stack, monitor
 * class) pairs already, and only the owners, the longest wait and the sites'
 * blockers need the per-sample callbacks this model sets in the options. The
 * callbacks read a sample's kind, extras and threads from the builder's
 * recording stream (rp_prof_stream, stream.h).
 *
 * The passes, in order: rp_locks_lock_pass sets the lock pass's options and the
 * caller builds l->p with them; rp_locks_rank; then for each wall pass,
 * rp_locks_sites_pass and, with the profile built, rp_locks_sites_rank.
 * Single-threaded; allocation failure exits (xalloc.h).
 */
#ifndef RINGPROF_TOOLS_LOCKS_H
#define RINGPROF_TOOLS_LOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "profile.h"
#include "scan.h"
#include "strtab.h"

/* An owner and the waits it caused; also, for a site, a blocker class (name:
 * the class, NULL: none recorded; os_tid 0; waits: samples). */
struct rp_lock_owner {
    uint64_t os_tid;             /* 0 with name NULL: unknown                    */
    char *name;
    uint64_t waits, wait_ns;
};

struct rp_lock_monitor {
    uint32_t method;             /* the class frame's method; RP_PROF_NONE: the  */
                                 /* sample had no class                          */
    uint64_t waits, wait_ns, max_ns;
    uint64_t unfinished;         /* of the waits, those still in progress        */
    struct rp_lock_owner *owners;   /* ranked by the wait they caused            */
    size_t nowners, cap_owners;
    uint32_t *stacks;            /* leaf nodes (stack + class), by wait time     */
    size_t nstacks, cap_stacks;
};

struct rp_lock_site {
    uint32_t site, via;          /* methods; RP_PROF_NONE: none                  */
    uint64_t samples, wall_ns, threads;
    uint32_t last_thread;        /* to count threads once each                   */
    struct rp_lock_owner *owners;   /* the blockers' owners, by sample: waits    */
    size_t nowners, cap_owners;     /* are samples, wait_ns their wall time       */
    struct rp_lock_owner *blockers; /* the blockers' classes, by sample           */
    size_t nblockers, cap_blockers;
};

/* The sites of the wall samples of one state: parked (java.util.concurrent
 * waits), or blocked (monitor waits, when the inputs have no lock samples). */
struct rp_lock_sites {
    int blocked;                 /* 1: a site is the blocked stack's leaf frame  */
    const struct rp_profile *p;  /* the wall profile it was made from            */
    struct rp_lock_site *s;      /* ranked by wall time                          */
    size_t n, cap;
    uint32_t *leaf_site;         /* wall profile leaf → site index + 1, 0: none  */
    size_t cap_leaf;
    uint64_t ns, samples;        /* all of the state's samples                   */
    /* Sites are found by (site << 32 | via); their owners and blocker classes by
     * (site's index << 32 | number): owners by the owner's number in the locks'
     * tid numbering, blockers by the class name's number in blocker_names. */
    struct rp_idmap by_methods, owner_of, blocker_of;
    struct rp_strtab blocker_names;
    struct rp_idmap *tids;       /* the locks' tid numbering                     */
    uint32_t *path;              /* the per-sample callback's, during the pass   */
    size_t cap_path;
};

/* A wait still in progress when the recording ends (kind lock.waiting). */
struct rp_lock_stuck {
    char *thread, *owner;        /* owner NULL: unknown                           */
    uint64_t tid, owner_tid, waited_ns;
    uint32_t method;             /* its monitor's class frame, RP_PROF_NONE      */
};

/* A zeroed struct is an empty model. */
struct rp_locks {
    /* lock samples */
    struct rp_profile *p;        /* the lock profile (the caller builds it)       */
    struct rp_lock_monitor *mons;   /* ranked by total wait                      */
    size_t nmons, cap_mons;
    struct rp_idmap mon_of;      /* class frame's method -> monitor index        */
    struct rp_idmap tid_number;  /* owners' os tids, numbered                    */
    struct rp_idmap mon_owner_of; /* monitor index << 32 | owner number -> owner */
    struct rp_lock_stuck *stuck; /* the longest wait first                       */
    size_t nstuck, cap_stuck;
    uint64_t stuck_ns;
    /* wall samples: parked; blocked when there is no lock sample */
    struct rp_profile *w, *b;    /* the profiles of parked and blocked           */
    uint64_t wall_samples;       /* of kind wall in the inputs, before filters    */
    struct rp_lock_sites parked, blocked;
};

/* The lock pass: `po` (with the command's filters and time range) becomes the
 * options of the lock profile: kind lock, its waits in progress kept by the
 * look-ahead `sc`'s rule (RP_SCAN_WAITS), l's callback on each sample. */
void rp_locks_lock_pass(struct rp_locks *l, struct rp_prof_options *po, struct rp_scan *sc);

/* After the lock profile l->p is built: each monitor's stacks, and monitors,
 * owners, stacks and stuck waits ranked. */
void rp_locks_rank(struct rp_locks *l);

/* A wall pass for the samples in thread state `state` (RP_TS_PARKED or
 * RP_TS_BLOCKED): `po` (a copy of the lock pass's options) becomes the options
 * of a per-thread wall profile of that state, with l's callback; the reader's
 * problems are not reported again (the lock pass did). */
void rp_locks_sites_pass(struct rp_locks *l, struct rp_prof_options *po, unsigned state);

/* After the wall profile `w` of state `state` is built (l keeps it): its sites
 * collected and ranked, with their blockers and owners; after the parked
 * pass, l->wall_samples. */
void rp_locks_sites_rank(struct rp_locks *l, unsigned state, struct rp_profile *w);

/* Whether the inputs hold lock samples: waits that ended, or in progress. */
int rp_locks_have_locks(const struct rp_locks *l);

/* Release everything l holds, the profiles included. */
void rp_locks_free(struct rp_locks *l);

#endif
