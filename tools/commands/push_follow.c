/*
 * tools/commands/push_follow.c — `ringprof push --follow DIR`: the sidecar loop.
 *
 * The directory is listed at start, at least every --rescan and whenever it
 * changes (push_dir.h); each pass sends the next chunk in the order the agents
 * finished them (their start time, recording id and seq), and the state file
 * (push_state.h) records each answer at once, so a restart neither sends a chunk
 * again nor skips one. A seq missing below the next chunk (retention deleted it
 * first, or it was never finished) is counted missing and said; a recording id a
 * later JVM reuses (the agent's recording=) starts that recording again; a state
 * written for another target is not followed, one written with other options has
 * its half-sent chunks sent whole. At the first signal the chunks finished by
 * then are sent for at most --drain.
 *
 * The tool's one thread; allocation failure exits (model/xalloc.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "push_cmd.h"

static uint64_t now_wall_s(void)
{
    return (uint64_t)time(NULL);
}

static void save_state(struct push *x)
{
    char err[1024];
    if (rp_push_state_save(&x->st, err, sizeof err) < 0)
        rp_push_say(x, "%s", err);
}

static void rescan(struct push *x)
{
    char err[1024];
    if (rp_push_dir_scan(&x->dir, err, sizeof err) < 0) {
        if (!x->dir.missing_reported)
            rp_push_say(x, "%s; waiting for it", err);
        x->dir.missing_reported = 1;
        return;
    }
    if (x->dir.missing_reported)
        rp_push_say(x, "%s is back", x->dir.path);
    x->dir.missing_reported = 0;
    x->n.writing = x->dir.parts_open;
    uint64_t now = now_wall_s();
    for (size_t i = 0; i < x->st.n; i++)
        x->st.recs[i].present = 0;
    for (size_t i = 0; i < x->dir.n; i++) {
        struct rp_push_file *f = &x->dir.files[i];
        if (!f->ident_ok) {
            if (!f->reported) {
                rp_push_say(x, "%s; not sent", f->ident_err);
                x->n.unreadable++;
            }
            f->reported = 1;
            continue;
        }
        struct rp_push_rec *r = rp_push_state_rec(&x->st, f->id.recording, 1);
        r->present = 1;
        r->seen = now;
    }
    rp_push_state_prune(&x->st, RP_PUSH_STATE_RECS);
}

static void rescan_cb(struct push *x)
{
    rescan(x);
    rp_push_status_show(x);
}

/* Whether a comes before b: the order the agents finished them. */
static int before(const struct rp_push_file *a, const struct rp_push_file *b)
{
    if (a->id.start_wall != b->id.start_wall)
        return a->id.start_wall < b->id.start_wall;
    int c = strcmp(a->id.recording, b->id.recording);
    return c ? c < 0 : a->id.seq < b->id.seq;
}

/* Whether chunk f, of a seq that r says is done, is a later JVM's under the same
 * recording id (the agent's recording=), which counts its chunks from 0 again:
 * it was opened after the newest chunk answered. */
static int reused(const struct rp_push_rec *r, const struct rp_push_file *f)
{
    return f->id.seq < r->next && r->last_start && f->id.start_wall > r->last_start;
}

/* Whether chunk f is done: an earlier JVM's under a reused id, or of a seq
 * below the watermark and not a later JVM's. */
static int done_chunk(const struct rp_push_rec *r, const struct rp_push_file *f)
{
    return (r->since && f->id.start_wall < r->since) || (f->id.seq < r->next && !reused(r, f));
}

/* The next chunk to send, and the pending count; a gap before it in its
 * recording is counted missing (and the state moved past it). NULL: none. */
static struct rp_push_file *next_chunk(struct push *x)
{
    struct rp_push_file *best = NULL;
    x->n.pending = 0;
    for (size_t i = 0; i < x->dir.n; i++) {
        struct rp_push_file *f = &x->dir.files[i];
        if (!f->ident_ok)
            continue;
        struct rp_push_rec *r = rp_push_state_rec(&x->st, f->id.recording, 1);
        if (done_chunk(r, f))
            continue;
        x->n.pending++;
        if (!best || before(f, best))
            best = f;
    }
    if (!best)
        return NULL;
    struct rp_push_rec *r = rp_push_state_rec(&x->st, best->id.recording, 1);
    if (reused(r, best)) {
        rp_push_say(x, "recording %s: chunk %" PRIu32 " was opened after the last one "
                    "sent (chunk %" PRIu32 "): a later JVM with the same recording id; its "
                    "chunks are sent from %" PRIu32 " on", best->id.recording, best->id.seq,
                    r->next - 1, best->id.seq);
        r->next = best->id.seq;
        r->since = best->id.start_wall;
        r->parts = 0;
        r->part_rejected = 0;
        save_state(x);
    }
    if (best->id.seq > r->next) {
        uint32_t gap = best->id.seq - r->next;
        rp_push_say(x, "recording %s: chunk%s %" PRIu32 "%s%.0" PRIu32 " %s not in %s "
                    "when push came to %s: deleted before %s sent (retention), or never "
                    "finished; counted missing", best->id.recording, gap == 1 ? "" : "s", r->next,
                    gap == 1 ? "" : " to ", gap == 1 ? 0 : best->id.seq - 1,
                    gap == 1 ? "was" : "were", x->dir.path,
                    r->next == 0 && !r->sent && !r->rejected ? "the recording" : "them",
                    r->next == 0 && !r->sent && !r->rejected ? "push" : "they were");
        r->missing += gap;
        x->n.missing += gap;
        r->next = best->id.seq;
        r->parts = 0;
        r->part_rejected = 0;
        save_state(x);
    }
    return best;
}

/* After each answered request of the current chunk. */
static void part_answered(struct push *x)
{
    struct rp_push_rec *r = rp_push_state_rec(&x->st, x->cur.id.recording, 1);
    r->parts++;
    save_state(x);
}

/* Send chunk f (its parts not yet answered); @return 0, 1 (stopped) or
 * EXIT_GAVE_UP. */
static int follow_one(struct push *x, struct rp_push_file *f)
{
    char recording[RP_PUSH_ID_MAX + 1];
    snprintf(recording, sizeof recording, "%s", f->id.recording);
    uint32_t seq = f->id.seq;
    char err[1024];
    if (rp_push_cur_load(x, f->path, err, sizeof err) < 0) {
        if (access(f->path, F_OK) != 0) {   /* gone meanwhile: the gap counts it */
            rescan(x);
            return 0;
        }
        rp_push_say(x, "%s; not sent", err);
        x->n.unreadable++;
        f->ident_ok = 0;
        f->reported = 1;
        return 0;
    }
    if (strcmp(x->cur.id.recording, recording) || x->cur.id.seq != seq) {
        rescan(x);                          /* another file took the name */
        return 0;
    }
    struct rp_push_rec *r = rp_push_state_rec(&x->st, recording, 1);
    uint32_t done = r->parts;
    int rejected = r->part_rejected;
    if (done > x->cur.nparts)
        done = (uint32_t)x->cur.nparts;
    int rc = rp_push_cur_deliver(x, &done, &rejected, part_answered, rescan_cb);
    r = rp_push_state_rec(&x->st, recording, 1);
    r->part_rejected = rejected;
    if (rc)
        return rc;
    rp_push_cur_done(x, rejected);
    if (rejected)
        r->rejected++;
    else
        r->sent++;
    if (x->cur.id.start_wall > r->last_start)
        r->last_start = x->cur.id.start_wall;
    r->next = seq + 1;
    r->parts = 0;
    r->part_rejected = 0;
    save_state(x);
    rp_push_chunk_free(&x->cur);
    return 0;
}

/* The plan: what shapes a chunk's parts; a state written with another plan has
 * its half-sent chunks sent whole again. */
static void make_plan(const struct push *x, char *buf, size_t cap)
{
    int k = snprintf(buf, cap, "%s %s period=%" PRIu64 " threads=%d events=",
                     rp_push_proto_name(x->t.proto), x->t.fmt->name, x->period,
                     !x->bo.merge_threads);
    for (size_t i = 0; i < x->bo.nevents && k > 0 && (size_t)k < cap; i++)
        k += snprintf(buf + k, cap - (size_t)k, "%s%s", i ? "," : "", x->bo.events[i]);
}

/* Compare the state with this run's target and plan; adopt them. */
static void adopt_state(struct push *x)
{
    char target[4200], plan[1024];
    snprintf(target, sizeof target, "%s %s", rp_push_proto_name(x->t.proto), x->t.endpoint);
    make_plan(x, plan, sizeof plan);
    if (x->st.target && strcmp(x->st.target, target))
        rp_push_say(x, "state file %s was written for %s: what was delivered there is "
                    "not sent to %s (give a new --state to send it)", x->st.shown,
                    x->st.target, target);
    if (x->st.plan && strcmp(x->st.plan, plan))
        for (size_t i = 0; i < x->st.n; i++)
            if (x->st.recs[i].parts) {
                rp_push_say(x, "recording %s: chunk %" PRIu32 " was half sent with other "
                            "options (%s); it is sent whole", x->st.recs[i].id,
                            x->st.recs[i].next, x->st.plan);
                x->st.recs[i].parts = 0;
                x->st.recs[i].part_rejected = 0;
            }
    rp_push_state_set(&x->st, target, plan);
}

int rp_push_follow(struct push *x)
{
    char err[1024], state_path[4200];
    if (rp_push_dir_open(&x->dir, x->follow, err, sizeof err) < 0) {
        fprintf(stderr, "ringprof push: --follow %s\n", err);
        return 1;
    }
    const char *sp = x->state_path;
    if (!sp) {
        snprintf(state_path, sizeof state_path, "%s/%s", x->dir.path, RP_PUSH_STATE_NAME);
        sp = state_path;
    }
    if (rp_push_state_open(&x->st, x->dry_run ? NULL : sp, err, sizeof err) < 0) {
        fprintf(stderr, "ringprof push: %s\n", err);
        return 1;
    }
    adopt_state(x);
    uint64_t next_scan = 0;
    while (!rp_push_stopping(x)) {
        if (rp_push_signals() && !x->drain_said) {
            x->drain_said = 1;
            next_scan = 0;
            rp_push_say(x, "stopping: the chunks finished by now are sent first, for at "
                        "most %.0f s (--drain); a second signal stops at once",
                        (double)x->drain / 1e9);
        }
        if (rp_push_now() >= next_scan) {
            rescan(x);
            next_scan = rp_push_now() + x->rescan;
        }
        struct rp_push_file *f = next_chunk(x);
        rp_push_status_show(x);
        if (f) {
            int rc = follow_one(x, f);
            if (rc)
                return rc == 1 && !x->once ? 0 : EXIT_GAVE_UP;
            continue;
        }
        if (x->once || rp_push_signals())
            break;                          /* nothing (left) to drain */
        uint64_t now = rp_push_now();
        uint64_t left = next_scan > now ? (next_scan - now) / 1000000 + 1 : 0;
        if (rp_push_dir_wait(&x->dir, left > 60000 ? 60000 : (int)left))
            next_scan = 0;
    }
    return rp_push_signals() && x->once && x->n.pending ? EXIT_GAVE_UP : 0;
}
