/*
 * tools/outputs/out_locks.c — `ringprof locks`' text and JSON (out_locks.h), from
 * the model (model/locks.h), ranked already.
 *
 * The text: a header (recordings, time, samples left out by the filters), the
 * MONITORS table and the UNFINISHED waits, then each monitor shown with its
 * waiting stacks (leaf first, from the monitor's caller) and owners; then the
 * BLOCKED sites when there were no lock samples, and the PARKED sites of
 * java.util.concurrent, each shown with its blocker classes and their owners.
 * --top bounds the tables, --stacks the stacks, owners and classes shown per
 * row. The JSON holds the same figures with the same bounds, in ns.
 */
#include "out_locks.h"

#include <string.h>

#include "out_common.h"
#include "model/duration.h"
#include "model/timespec.h"

static const char *method_name(const struct rp_profile *p, uint32_t m, const char *none)
{
    return m != RP_PROF_NONE ? p->methods[m].display : none;
}

static const char *fmt_ns(uint64_t ns, char *buf, size_t cap)
{
    return rp_fmt_duration((double)ns, buf, cap);
}

static const char *monitor_name(const struct rp_locks *l, const struct rp_lock_monitor *m)
{
    return method_name(l->p, m->method, "[no class recorded]");
}

static void print_header(FILE *out, const struct rp_locks *l)
{
    const struct rp_profile *p = l->p;
    fputs("# ringprof locks", out);
    for (size_t i = 0; i < p->nsources; i++) {
        fputs(i ? "; " : ": recording ", out);
        if (i)
            fputs("recording ", out);
        out_text(out, p->sources[i].recording);
        fputs(": pid ", out);
        out_text(out, p->sources[i].pid[0] ? p->sources[i].pid : "?");
        fputs(" on ", out);
        out_text(out, p->sources[i].host[0] ? p->sources[i].host : "?");
    }
    fputc('\n', out);
    const struct rp_profile *t = p->wall_first ? p : l->w;
    if (t && t->wall_first) {
        char a[48], b[48];
        rp_fmt_wall(a, sizeof a, t->wall_first);
        rp_fmt_wall(b, sizeof b, t->wall_last);
        fprintf(out, "# time %s .. %s\n", a, b);
    }
    const struct rp_prof_stats *st = &p->stats;
    if (st->samples_thread_filtered || st->samples_time_filtered ||
        st->samples_frame_filtered)
        fprintf(out, "# lock samples left out: %llu by --thread, %llu by --from/--to, "
                     "%llu by --include/--exclude\n",
                (unsigned long long)st->samples_thread_filtered,
                (unsigned long long)st->samples_time_filtered,
                (unsigned long long)st->samples_frame_filtered);
}

/* The owners that made others wait (`all`: the wait they are a share of; `what`:
 * what their count counts), --stacks of them. */
static void print_owners(FILE *out, const struct out_locks_options *o,
                         const struct rp_lock_owner *owners, size_t n, uint64_t all,
                         const char *what)
{
    char a[32];
    size_t no = o->nstacks < n ? o->nstacks : n;
    fprintf(out, "  owners (%zu, by the wait they caused):\n", n);
    for (size_t k = 0; k < no; k++) {
        const struct rp_lock_owner *w = &owners[k];
        fprintf(out, "  %7llu %s %14s %6.2f%%  ", (unsigned long long)w->waits, what,
                fmt_ns(w->wait_ns, a, sizeof a), out_pct(w->wait_ns, all));
        if (w->name) {
            out_text(out, w->name[0] ? w->name : "?");
            fprintf(out, " (tid %llu)\n", (unsigned long long)w->os_tid);
        } else {
            fputs("unknown\n", out);
        }
    }
    if (no < n)
        fprintf(out, "    # %zu more owners (--stacks %zu)\n", n - no, o->nstacks);
}

/* The waits still in progress when the recording ends, the longest first. */
static void print_stuck(FILE *out, const struct rp_locks *l,
                        const struct out_locks_options *o)
{
    char a[32];
    if (!l->nstuck)
        return;
    size_t shown = o->top < l->nstuck ? o->top : l->nstuck;
    fprintf(out, "UNFINISHED BEGIN (%zu wait%s still in progress when the recording ends, "
                 "%s so far, longest first)\n", l->nstuck, l->nstuck == 1 ? "" : "s",
            fmt_ns(l->stuck_ns, a, sizeof a));
    fprintf(out, "%4s %14s  %s\n", "rank", "waited so far", "thread, monitor class, owner");
    for (size_t i = 0; i < shown; i++) {
        const struct rp_lock_stuck *st = &l->stuck[i];
        fprintf(out, "%4zu %14s  ", i + 1, fmt_ns(st->waited_ns, a, sizeof a));
        out_text(out, st->thread[0] ? st->thread : "?");
        fprintf(out, " (tid %llu) on ", (unsigned long long)st->tid);
        out_text(out, method_name(l->p, st->method, "[no class recorded]"));
        fputs(", owner ", out);
        if (st->owner) {
            out_text(out, st->owner[0] ? st->owner : "?");
            fprintf(out, " (tid %llu)\n", (unsigned long long)st->owner_tid);
        } else {
            fputs("unknown\n", out);
        }
    }
    fputs("UNFINISHED END\n", out);
    if (shown < l->nstuck)
        fprintf(out, "# %zu more not shown (--top %zu)\n", l->nstuck - shown, o->top);
}

/* Why there is no monitor table: no lock samples, with or without blocked wall
 * samples instead. */
static void print_no_monitors(FILE *out, const struct rp_locks *l)
{
    if (l->blocked.samples)
        fputs("no lock samples (lock= was off): the monitor waits below are the "
              "wall-clock samples in state blocked, by the code that blocked; lock="
              "DURATION records each wait with its monitor's class and owner\n", out);
    else
        fputs("no lock samples: the inputs hold no contended monitor waits; the agent "
              "records them with lock=DURATION (e.g. lock=10ms: waits to enter a "
              "synchronized block or method longer than 10 ms)\n", out);
}

/* Monitor i (0-based): its waiting stacks, leaf first, and its owners. */
static void print_monitor(FILE *out, const struct rp_locks *l,
                          const struct out_locks_options *o, size_t i)
{
    const struct rp_lock_monitor *m = &l->mons[i];
    char a[32];
    fprintf(out, "\nMONITOR %zu: ", i + 1);
    out_text(out, monitor_name(l, m));
    fprintf(out, ", %llu waits, %s\n", (unsigned long long)m->waits,
            fmt_ns(m->wait_ns, a, sizeof a));
    size_t ns = o->nstacks < m->nstacks ? o->nstacks : m->nstacks;
    fprintf(out, "  waiting stacks (%zu, by wait time; leaf first):\n", m->nstacks);
    for (size_t k = 0; k < ns; k++) {
        const struct rp_prof_node *n = &l->p->nodes[m->stacks[k]];
        fprintf(out, "    - %llu waits, %s (%.2f%%):\n",
                (unsigned long long)n->self[RP_PV_SAMPLES],
                fmt_ns(n->self[RP_PV_WEIGHT], a, sizeof a),
                out_pct(n->self[RP_PV_WEIGHT], m->wait_ns));
        /* The leaf is the class frame (the monitor): start at its caller. */
        uint32_t x = m->method != RP_PROF_NONE ? n->parent : m->stacks[k];
        for (; x != 0 && x != RP_PROF_NONE; x = l->p->nodes[x].parent) {
            fputs("        ", out);
            out_node_text(out, l->p, x);
            fputc('\n', out);
        }
    }
    if (ns < m->nstacks)
        fprintf(out, "    # %zu more stacks (--stacks %zu)\n", m->nstacks - ns, o->nstacks);
    print_owners(out, o, m->owners, m->nowners, m->wait_ns, "waits");
}

/* The monitor table, the waits in progress, then each monitor shown. */
static void print_monitors(FILE *out, const struct rp_locks *l,
                           const struct out_locks_options *o)
{
    const struct rp_prof_node *root = &l->p->nodes[0];
    uint64_t all = root->total[RP_PV_WEIGHT];
    char a[32], b[32], c[32];
    if (!rp_locks_have_locks(l)) {
        print_no_monitors(out, l);
        return;
    }
    fprintf(out, "# %llu contended monitor waits, %s waited in all",
            (unsigned long long)root->total[RP_PV_SAMPLES], fmt_ns(all, a, sizeof a));
    if (l->nstuck)
        fprintf(out, "; %zu of them unfinished (still waiting when the recording ends)",
                l->nstuck);
    fputc('\n', out);
    size_t shown = o->top < l->nmons ? o->top : l->nmons;
    fprintf(out, "MONITORS BEGIN (%zu monitor class%s, by total wait)\n", l->nmons,
            l->nmons == 1 ? "" : "es");
    fprintf(out, "%4s %7s %10s %14s %14s %14s %7s  %s\n", "rank", "waits", "unfinished",
            "total", "mean", "longest", "share", "monitor class");
    for (size_t i = 0; i < shown; i++) {
        const struct rp_lock_monitor *m = &l->mons[i];
        fprintf(out, "%4zu %7llu %10llu %14s %14s %14s %6.2f%%  ", i + 1,
                (unsigned long long)m->waits, (unsigned long long)m->unfinished,
                fmt_ns(m->wait_ns, a, sizeof a),
                fmt_ns(m->waits ? m->wait_ns / m->waits : 0, b, sizeof b),
                fmt_ns(m->max_ns, c, sizeof c), out_pct(m->wait_ns, all));
        out_text(out, monitor_name(l, m));
        fputc('\n', out);
    }
    fputs("MONITORS END\n", out);
    if (shown < l->nmons)
        fprintf(out, "# %zu more not shown (--top %zu)\n", l->nmons - shown, o->top);
    print_stuck(out, l, o);
    for (size_t i = 0; i < shown; i++)
        print_monitor(out, l, o, i);
}

/* A site's method, and the method it waited through ("via"). */
static void print_site_name(FILE *out, const struct rp_lock_sites *t,
                            const struct rp_lock_site *s)
{
    out_text(out, method_name(t->p, s->site, t->blocked ? "[no frame]"
                                                        : "[no LockSupport.park frame]"));
    if (s->via != RP_PROF_NONE) {
        fputs(" (via ", out);
        out_text(out, t->p->methods[s->via].display);
        fputc(')', out);
    }
}

/* A parked site's blocker classes and the owners of its blockers. */
static void print_site(FILE *out, const struct rp_locks *l,
                       const struct out_locks_options *o, const struct rp_lock_site *s,
                       size_t rank)
{
    char a[32];
    fprintf(out, "\nPARKED %zu: ", rank);
    print_site_name(out, &l->parked, s);
    fprintf(out, ", %llu samples, %s\n", (unsigned long long)s->samples,
            fmt_ns(s->wall_ns, a, sizeof a));
    size_t nb = o->nstacks < s->nblockers ? o->nstacks : s->nblockers;
    fprintf(out, "  blocker classes (%zu, by wall time):\n", s->nblockers);
    for (size_t k = 0; k < nb; k++) {
        const struct rp_lock_owner *b = &s->blockers[k];
        fprintf(out, "  %7llu samples %14s %6.2f%%  ", (unsigned long long)b->waits,
                fmt_ns(b->wait_ns, a, sizeof a), out_pct(b->wait_ns, s->wall_ns));
        out_text(out, b->name ? b->name : "[none recorded]");
        fputc('\n', out);
    }
    if (nb < s->nblockers)
        fprintf(out, "    # %zu more classes (--stacks %zu)\n", s->nblockers - nb,
                o->nstacks);
    print_owners(out, o, s->owners, s->nowners, s->wall_ns, "samples");
}

/* The sites table of t: PARKED or BLOCKED, introduced by `what`. */
static void print_sites(FILE *out, const struct out_locks_options *o,
                        const struct rp_lock_sites *t, const char *name, const char *what)
{
    char a[32];
    size_t shown = o->top < t->n ? o->top : t->n;
    fprintf(out, "%s BEGIN (%s, %llu samples, %s, by the code that %s)\n", name, what,
            (unsigned long long)t->samples, fmt_ns(t->ns, a, sizeof a),
            t->blocked ? "blocked" : "parked");
    fprintf(out, "%4s %14s %7s %8s %7s  %s\n", "rank", "wall", "share", "samples",
            "threads", t->blocked ? "site" : "site (via)");
    for (size_t i = 0; i < shown; i++) {
        const struct rp_lock_site *s = &t->s[i];
        fprintf(out, "%4zu %14s %6.2f%% %8llu %7llu  ", i + 1,
                fmt_ns(s->wall_ns, a, sizeof a), out_pct(s->wall_ns, t->ns),
                (unsigned long long)s->samples, (unsigned long long)s->threads);
        print_site_name(out, t, s);
        fputc('\n', out);
    }
    fprintf(out, "%s END\n", name);
    if (shown < t->n)
        fprintf(out, "# %zu more not shown (--top %zu)\n", t->n - shown, o->top);
}

/* The blocked sites (without lock samples), then the parked ones, each shown. */
static void print_parked(FILE *out, const struct rp_locks *l,
                         const struct out_locks_options *o)
{
    if (l->blocked.samples)
        print_sites(out, o, &l->blocked, "BLOCKED",
                    "monitor waits: wall samples in state blocked, lock= was off");
    fputs("\n", out);
    if (!l->wall_samples) {
        fputs("java.util.concurrent waits: not shown: the inputs have no wall-clock "
              "samples, where they appear (as state parked); the agent records them "
              "with wall=INTERVAL (e.g. wall=50ms)\n", out);
        return;
    }
    if (!l->parked.samples) {
        fputs("java.util.concurrent waits: no wall-clock sample in state parked\n", out);
        return;
    }
    print_sites(out, o, &l->parked, "PARKED",
                "java.util.concurrent waits: wall samples in state parked");
    size_t shown = o->top < l->parked.n ? o->top : l->parked.n;
    for (size_t i = 0; i < shown; i++)
        print_site(out, l, o, &l->parked.s[i], i + 1);
}

/* A string, or null. */
static void json_cstring_or_null(FILE *out, const char *s)
{
    if (s)
        out_json_cstring(out, s);
    else
        fputs("null", out);
}

/* ,"owners":[...]: --stacks of them; "waits" counts what the owners' list
 * counts (waits, or parked samples). */
static void json_owners(FILE *out, const struct out_locks_options *o,
                        const struct rp_lock_owner *owners, size_t n)
{
    fputs(",\"owners\":[", out);
    size_t no = o->nstacks < n ? o->nstacks : n;
    for (size_t k = 0; k < no; k++) {
        const struct rp_lock_owner *w = &owners[k];
        fputs(k ? ",{\"thread\":" : "{\"thread\":", out);
        json_cstring_or_null(out, w->name);
        fprintf(out, ",\"tid\":%llu,\"waits\":%llu,\"wait_ns\":%llu}",
                (unsigned long long)w->os_tid, (unsigned long long)w->waits,
                (unsigned long long)w->wait_ns);
    }
    fputc(']', out);
}

static void json_blockers(FILE *out, const struct out_locks_options *o,
                          const struct rp_lock_site *s)
{
    fputs(",\"blockers\":[", out);
    size_t nb = o->nstacks < s->nblockers ? o->nstacks : s->nblockers;
    for (size_t k = 0; k < nb; k++) {
        const struct rp_lock_owner *b = &s->blockers[k];
        fputs(k ? ",{\"class\":" : "{\"class\":", out);
        json_cstring_or_null(out, b->name);
        fprintf(out, ",\"samples\":%llu,\"wall_ns\":%llu}", (unsigned long long)b->waits,
                (unsigned long long)b->wait_ns);
    }
    fputc(']', out);
}

static void json_monitor(FILE *out, const struct rp_locks *l,
                         const struct out_locks_options *o, const struct rp_lock_monitor *m,
                         uint64_t all)
{
    fputs("{\"class\":", out);
    json_cstring_or_null(out, m->method != RP_PROF_NONE ? monitor_name(l, m) : NULL);
    fprintf(out, ",\"waits\":%llu,\"unfinished\":%llu,\"wait_ns\":%llu,\"mean_ns\":%llu,"
                 "\"max_ns\":%llu,\"share\":%.4f,\"stacks\":[",
            (unsigned long long)m->waits, (unsigned long long)m->unfinished,
            (unsigned long long)m->wait_ns,
            (unsigned long long)(m->waits ? m->wait_ns / m->waits : 0),
            (unsigned long long)m->max_ns, out_pct(m->wait_ns, all) / 100);
    size_t ns = o->nstacks < m->nstacks ? o->nstacks : m->nstacks;
    for (size_t k = 0; k < ns; k++) {
        const struct rp_prof_node *n = &l->p->nodes[m->stacks[k]];
        fprintf(out, "%s{\"waits\":%llu,\"wait_ns\":%llu,\"frames\":[", k ? "," : "",
                (unsigned long long)n->self[RP_PV_SAMPLES],
                (unsigned long long)n->self[RP_PV_WEIGHT]);
        uint32_t x = m->method != RP_PROF_NONE ? n->parent : m->stacks[k];
        for (int first = 1; x != 0 && x != RP_PROF_NONE; x = l->p->nodes[x].parent) {
            if (!first)
                fputc(',', out);
            first = 0;
            out_json_cstring(out, rp_prof_node_name(l->p, x));
        }
        fputs("]}", out);
    }
    fputc(']', out);
    json_owners(out, o, m->owners, m->nowners);
    fputc('}', out);
}

/* ,"NAME":[...]: the sites of t, --top of them. */
static void json_sites(FILE *out, const struct out_locks_options *o,
                       const struct rp_lock_sites *t, const char *name)
{
    fprintf(out, ",\n\"%s\":[", name);
    size_t shown = o->top < t->n ? o->top : t->n;
    for (size_t i = 0; i < shown; i++) {
        const struct rp_lock_site *s = &t->s[i];
        fputs(i ? ",\n  {\"site\":" : "\n  {\"site\":", out);
        json_cstring_or_null(out, s->site != RP_PROF_NONE ? t->p->methods[s->site].display
                                                         : NULL);
        fputs(",\"via\":", out);
        json_cstring_or_null(out, s->via != RP_PROF_NONE ? t->p->methods[s->via].display
                                                        : NULL);
        fprintf(out, ",\"wall_ns\":%llu,\"samples\":%llu,\"threads\":%llu",
                (unsigned long long)s->wall_ns, (unsigned long long)s->samples,
                (unsigned long long)s->threads);
        json_blockers(out, o, s);
        json_owners(out, o, s->owners, s->nowners);
        fputc('}', out);
    }
    fputc(']', out);
}

/* ,"unfinished":[...]: the waits still in progress, longest first. */
static void json_stuck(FILE *out, const struct rp_locks *l)
{
    fprintf(out, ",\n\"unfinished_ns\":%llu,\"unfinished\":[",
            (unsigned long long)l->stuck_ns);
    for (size_t i = 0; i < l->nstuck; i++) {
        const struct rp_lock_stuck *st = &l->stuck[i];
        fputs(i ? ",\n  {\"thread\":" : "\n  {\"thread\":", out);
        out_json_cstring(out, st->thread);
        fprintf(out, ",\"tid\":%llu,\"waited_ns\":%llu,\"class\":",
                (unsigned long long)st->tid, (unsigned long long)st->waited_ns);
        json_cstring_or_null(out, st->method != RP_PROF_NONE
                                      ? l->p->methods[st->method].display : NULL);
        fputs(",\"owner\":", out);
        json_cstring_or_null(out, st->owner);
        fprintf(out, ",\"owner_tid\":%llu}", (unsigned long long)st->owner_tid);
    }
    fputc(']', out);
}

void out_locks_json(FILE *out, const struct rp_locks *l, const struct out_locks_options *o)
{
    const struct rp_profile *p = l->p;
    uint64_t all = p->nodes[0].total[RP_PV_WEIGHT];
    fputs("{\"recordings\":[", out);
    for (size_t i = 0; i < p->nsources; i++) {
        if (i)
            fputc(',', out);
        out_json_cstring(out, p->sources[i].recording);
    }
    fprintf(out, "],\"lock_samples\":%llu,\"lock_wait_ns\":%llu,\"monitors\":[",
            (unsigned long long)p->nodes[0].total[RP_PV_SAMPLES], (unsigned long long)all);
    size_t shown = o->top < l->nmons ? o->top : l->nmons;
    for (size_t i = 0; i < shown; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        json_monitor(out, l, o, &l->mons[i], all);
    }
    fputc(']', out);
    json_stuck(out, l);
    fprintf(out, ",\n\"wall_samples\":%llu,\"parked_samples\":%llu,\"parked_ns\":%llu",
            (unsigned long long)l->wall_samples, (unsigned long long)l->parked.samples,
            (unsigned long long)l->parked.ns);
    json_sites(out, o, &l->parked, "parked");
    fprintf(out, ",\n\"blocked_samples\":%llu,\"blocked_ns\":%llu",
            (unsigned long long)l->blocked.samples, (unsigned long long)l->blocked.ns);
    json_sites(out, o, &l->blocked, "blocked");
    fputs("}\n", out);
}
void out_locks_text(FILE *out, const struct rp_locks *l, const struct out_locks_options *o)
{
    print_header(out, l);
    print_monitors(out, l, o);
    print_parked(out, l, o);
}
