/*
 * tests/agent/agent_dump.c — rp_agent_dump: what the agent tests read from a
 * recording, through the reader API only (so the tests do not depend on the
 * converter).
 *
 *   rp_agent_dump stacks DIR    one line per distinct (thread, stack):
 *                               "WEIGHT_NS<TAB>SAMPLES<TAB>THREAD;ROOT;...;LEAF",
 *                               frames named Class.method with the converter's
 *                               suffixes: _[j] JIT, _[i] inlined, _[0] interpreted,
 *                               _[c] JVM C++, _[m] marker, none for native
 *   rp_agent_dump self DIR      per Java method, the weight of samples whose
 *                               innermost Java frame it is: "WEIGHT<TAB>SAMPLES<TAB>M"
 *   rp_agent_dump total DIR     per method, the weight of samples it is on (once
 *                               per sample): "WEIGHT<TAB>SAMPLES<TAB>M"
 *   rp_agent_dump threads DIR   per thread name: "WEIGHT<TAB>SAMPLES<TAB>CPU_NS<TAB>NAME"
 *   rp_agent_dump counters DIR  "NAME<TAB>TOTAL" for every counter
 *   rp_agent_dump gauges DIR    "NAME<TAB>LAST<TAB>MIN<TAB>MAX" for every gauge
 *   rp_agent_dump series DIR NAME  every value of gauge NAME, one a line, in order
 *   rp_agent_dump tseries DIR NAME "TIME_NS<TAB>VALUE" for every reading of gauge
 *                               NAME, in order (monotonic time)
 *   rp_agent_dump locks DIR     one line per lock sample (kind "lock", or the
 *                               kind RP_DUMP_KIND names: lock.waiting):
 *                               "WEIGHT_NS<TAB>THRESHOLD_NS<TAB>CLASS<TAB>OWNER<TAB>
 *                               THREAD;ROOT;...;LEAF<TAB>START_NS<TAB>REPORTED",
 *                               OWNER the owner thread's name ("-" unknown),
 *                               frames named Class.method without suffixes,
 *                               START_NS the sample's (monotonic) time, REPORTED
 *                               its fourth extra ("-" if it has none); in
 *                               recording order
 *   rp_agent_dump wall DIR      every sample of kind "wall", in recording order (not
 *                               sorted): "THREAD<TAB>TIME_NS<TAB>WEIGHT_NS<TAB>STATE
 *                               <TAB>REPEAT<TAB>CPU_NS<TAB>JVMTI_STATE<TAB>OS_STATE
 *                               <TAB>ROOT;...;LEAF", STATE by name (events.h),
 *                               OS_STATE the /proc letter or "-"
 *   rp_agent_dump samples DIR   every sample of kind "cpu" (or $RP_DUMP_KIND), in
 *                               recording order (not sorted): "THREAD<TAB>TIME_NS
 *                               <TAB>WEIGHT_NS<TAB>ROOT;...;LEAF", frames as in
 *                               stacks (with suffixes)
 *   rp_agent_dump cputime DIR   every thread CPU reading, in recording order:
 *                               "THREAD<TAB>OS_TID<TAB>TIME_NS<TAB>CPU_NS"
 *   rp_agent_dump span DIR      "FIRST<TAB>LAST", wall-clock ns: the first and last
 *                               instant an event of the recording stands at, as
 *                               convert --format jfr times them (each chunk's
 *                               start, samples, the end of a pause whose heap was
 *                               read, gauges, thread CPU readings)
 *   rp_agent_dump meta DIR      the first chunk's header metadata: "KEY<TAB>VALUE",
 *                               in file order
 *   rp_agent_dump check DIR     "files N chunks_closed N last_closed 0|1 samples N
 *                               damaged N" and exit 1 if anything was damaged
 *
 * stacks, self, total, threads and samples read samples of kind "cpu" only, or of the kind
 * named by $RP_DUMP_KIND; check counts samples of every kind.
 *
 * DIR's *.rpc and *.rpc.part files are read in name order (oldest first). Every
 * line of output but wall's, samples' and cputime's is sorted, so tests can compare and grep it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/events.h"
#include "ringprof/recorder.h"

struct agg {
    char *key;
    uint64_t weight, samples, min, max;
};

static struct agg *aggs;
static size_t naggs, capaggs;

static struct agg *find(const char *key)
{
    for (size_t i = 0; i < naggs; i++)
        if (!strcmp(aggs[i].key, key))
            return &aggs[i];
    if (naggs == capaggs) {
        capaggs = capaggs ? capaggs * 2 : 256;
        aggs = realloc(aggs, capaggs * sizeof *aggs);
        if (!aggs)
            exit(3);
    }
    struct agg *a = &aggs[naggs++];
    memset(a, 0, sizeof *a);
    a->key = strdup(key);
    a->min = UINT64_MAX;
    return a;
}

static int cmp_agg(const void *x, const void *y)
{
    return strcmp(((const struct agg *)x)->key, ((const struct agg *)y)->key);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static const char *suffix(enum rp_frame_type t)
{
    switch (t) {
    case RP_FRAME_JIT: return "_[j]";
    case RP_FRAME_INLINED: return "_[i]";
    case RP_FRAME_INTERPRETED: return "_[0]";
    case RP_FRAME_CPP: return "_[c]";
    case RP_FRAME_MARKER: return "_[m]";
    case RP_FRAME_KERNEL: return "_[k]";
    default: return "";
    }
}

static int is_java(const struct rp_frame_info *fi, const struct rp_method_info *mi)
{
    return fi->type == RP_FRAME_INTERPRETED || fi->type == RP_FRAME_JIT ||
           fi->type == RP_FRAME_INLINED ||
           (fi->type == RP_FRAME_NATIVE && (mi->flags & RP_METHOD_NATIVE));
}

static void frame_name(struct rp_reader *r, uint32_t fid, char *out, size_t cap,
                       int with_suffix)
{
    const struct rp_frame_info *fi = rp_reader_frame(r, fid);
    const struct rp_method_info *mi = fi ? rp_reader_method(r, fi->method) : NULL;
    if (!mi) {
        snprintf(out, cap, "[bad frame %u]", fid);
        return;
    }
    const char *k = mi->klass ? mi->klass : "";
    snprintf(out, cap, "%s%s%s%s", k, *k ? "." : "", mi->name ? mi->name : "?",
             with_suffix ? suffix(fi->type) : "");
}

enum mode { STACKS, SELF, TOTAL, THREADS, COUNTERS, GAUGES, CHECK, SERIES, LOCKS, TSERIES,
            WALL, SAMPLES, META, CPUTIME, SPAN };

static const char *series_name;
/* The event kind whose samples stacks/self/total/threads aggregate: "cpu", or
 * $RP_DUMP_KIND ("alloc", "live", ...); check counts every kind. */
static const char *dump_kind = "cpu";
static const char *lock_kind = "lock";   /* mode locks: RP_DUMP_KIND, else lock */

static uint64_t files, closed, last_closed, samples, damaged;
static uint64_t span_first = UINT64_MAX, span_last;

/* span mode: the instant `mono` of a chunk whose clock is (wall0, mono0). */
static void span_at(uint64_t wall0, uint64_t mono0, uint64_t mono)
{
    uint64_t wall = wall0 + (mono - mono0);
    if (wall < span_first)
        span_first = wall;
    if (wall > span_last)
        span_last = wall;
}

/* One lock sample: weight, the monitor's class, the owner thread's name, the
 * waiting thread and its stack, root first, its time and reported flag; printed
 * in recording order. */
static void lock_line(struct rp_reader *r, const struct rp_event *ev)
{
    static char line[65536];
    char name[1024];
    const struct rp_thread_info *ti = rp_reader_thread(r, ev->u.sample.thread);
    const struct rp_thread_info *oi = ev->u.sample.nextra > 1 && ev->u.sample.extra[1]
                                    ? rp_reader_thread(r, (uint32_t)ev->u.sample.extra[1]) : NULL;
    const char *klass = ev->u.sample.nextra > 0
                      ? rp_reader_class(r, (uint32_t)ev->u.sample.extra[0]) : NULL;
    size_t off = (size_t)snprintf(line, sizeof line, "%llu\t%llu\t%s\t%s\t%s",
                                  (unsigned long long)ev->u.sample.weight,
                                  (unsigned long long)(ev->u.sample.nextra > 2
                                                       ? ev->u.sample.extra[2] : 0),
                                  klass ? klass : "?", oi && oi->name ? oi->name : "-",
                                  ti && ti->name ? ti->name : "[no thread]");
    uint32_t n = 0, flags = 0;
    const uint32_t *fr = rp_reader_stack(r, ev->u.sample.stack, &n, &flags);
    for (uint32_t i = n; i-- > 0 && off < sizeof line - 1;) {
        frame_name(r, fr[i], name, sizeof name, 0);
        off += (size_t)snprintf(line + off, sizeof line - off, ";%s", name);
    }
    if (off < sizeof line - 1) {
        char rep[24] = "-";
        if (ev->u.sample.nextra > 3)
            snprintf(rep, sizeof rep, "%llu", (unsigned long long)ev->u.sample.extra[3]);
        snprintf(line + off, sizeof line - off, "\t%llu\t%s",
                 (unsigned long long)ev->u.sample.time, rep);
    }
    printf("%s\n", line);
}

/* The value of the extra named `name` of a sample of kind `ki`, or 0. */
static uint64_t extra_of(const struct rp_kind_info *ki, const struct rp_event *ev,
                         const char *name)
{
    for (uint32_t i = 0; i < ki->nextra && i < ev->u.sample.nextra; i++)
        if (ki->extra[i] && !strcmp(ki->extra[i], name))
            return ev->u.sample.extra[i];
    return 0;
}

/* One line of `wall` mode. */
static void print_wall(struct rp_reader *r, const struct rp_kind_info *ki,
                       const struct rp_event *ev, const char *tname)
{
    static char line[65536];
    char name[1024];
    uint32_t n = 0, flags = 0;
    const uint32_t *fr = rp_reader_stack(r, ev->u.sample.stack, &n, &flags);
    char os = (char)extra_of(ki, ev, "os_state");
    size_t off = (size_t)snprintf(line, sizeof line, "%s\t%llu\t%llu\t%s\t%llu\t%llu\t%#llx\t%c\t",
        tname, (unsigned long long)ev->u.sample.time, (unsigned long long)ev->u.sample.weight,
        rp_thread_state_name((unsigned)extra_of(ki, ev, "state")),
        (unsigned long long)extra_of(ki, ev, "repeat"),
        (unsigned long long)extra_of(ki, ev, "cpu_ns"),
        (unsigned long long)extra_of(ki, ev, "jvmti_state"), os ? os : '-');
    for (uint32_t i = n; i-- > 0 && off < sizeof line - 1;) {
        frame_name(r, fr[i], name, sizeof name, 0);
        off += (size_t)snprintf(line + off, sizeof line - off, "%s%s", name, i ? ";" : "");
    }
    printf("%s\n", line);
}

static void read_file(const char *path, enum mode m)
{
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    if (!r) {
        damaged++;
        return;
    }
    files++;
    if (m == META) {
        size_t n = 0;
        const struct rp_kv *kv = rp_reader_meta_all(r, &n);
        for (size_t i = 0; files == 1 && i < n; i++)
            printf("%s\t%s\n", kv[i].key, kv[i].value);
        rp_reader_close(r);
        return;
    }
    struct rp_event ev;
    char line[65536], name[1024];
    const char *w0 = rp_reader_meta(r, RP_META_START_WALL), *m0 = rp_reader_meta(r, RP_META_START_MONO);
    uint64_t wall0 = w0 ? strtoull(w0, NULL, 10) : 0, mono0 = m0 ? strtoull(m0, NULL, 10) : 0;
    if (m == SPAN)
        span_at(wall0, mono0, mono0);
    while (rp_reader_next(r, &ev)) {
        if (m == SPAN) {
            const struct rp_kind_info *ki = ev.type == RP_EV_SAMPLE
                                          ? rp_reader_kind(r, ev.u.sample.kind) : NULL;
            if (ev.type == RP_EV_SAMPLE)
                span_at(wall0, mono0, ev.u.sample.time);
            if (ki && ki->name && !strcmp(ki->name, "gc") && extra_of(ki, &ev, "heap_used"))
                span_at(wall0, mono0, ev.u.sample.time + ev.u.sample.weight);
            if (ev.type == RP_EV_GAUGE)
                span_at(wall0, mono0, ev.u.gauge.time);
            if (ev.type == RP_EV_THREAD_CPU)
                span_at(wall0, mono0, ev.u.thread_cpu.time);
            continue;
        }
        if (ev.type == RP_EV_COUNTER && m == COUNTERS && ev.u.counter.name) {
            find(ev.u.counter.name)->weight += ev.u.counter.value;
        } else if (ev.type == RP_EV_GAUGE && (m == SERIES || m == TSERIES) &&
                   ev.u.gauge.name && !strcmp(ev.u.gauge.name, series_name)) {
            if (m == TSERIES)
                printf("%llu\t", (unsigned long long)ev.u.gauge.time);
            printf("%llu\n", (unsigned long long)ev.u.gauge.value);
        } else if (ev.type == RP_EV_GAUGE && m == GAUGES && ev.u.gauge.name) {
            struct agg *a = find(ev.u.gauge.name);
            a->weight = ev.u.gauge.value;
            if (ev.u.gauge.value < a->min) a->min = ev.u.gauge.value;
            if (ev.u.gauge.value > a->max) a->max = ev.u.gauge.value;
        } else if (ev.type == RP_EV_THREAD_CPU && m == CPUTIME) {
            const struct rp_thread_info *ti = rp_reader_thread(r, ev.u.thread_cpu.thread);
            printf("%s\t%llu\t%llu\t%llu\n", ti && ti->name ? ti->name : "[no thread]",
                   (unsigned long long)(ti ? ti->os_tid : 0),
                   (unsigned long long)ev.u.thread_cpu.time,
                   (unsigned long long)ev.u.thread_cpu.cpu_ns);
        } else if (ev.type == RP_EV_THREAD_CPU && m == THREADS) {
            const struct rp_thread_info *ti = rp_reader_thread(r, ev.u.thread_cpu.thread);
            if (ti && ti->name) {
                struct agg *a = find(ti->name);
                a->max = ev.u.thread_cpu.cpu_ns;
            }
        } else if (ev.type == RP_EV_SAMPLE) {
            samples++;
            const struct rp_kind_info *ki = rp_reader_kind(r, ev.u.sample.kind);
            if (m == LOCKS) {
                if (ki && ki->name && !strcmp(ki->name, lock_kind))
                    lock_line(r, &ev);
                continue;
            }
            if (m != CHECK && (!ki || !ki->name ||
                               strcmp(ki->name, m == WALL ? RP_KIND_WALL : dump_kind) != 0))
                continue;
            uint32_t n = 0, flags = 0;
            const uint32_t *fr = rp_reader_stack(r, ev.u.sample.stack, &n, &flags);
            const struct rp_thread_info *ti = rp_reader_thread(r, ev.u.sample.thread);
            const char *tname = ti && ti->name ? ti->name : "[no thread]";
            if (m == WALL) {
                print_wall(r, ki, &ev, tname);
            } else if (m == SAMPLES) {
                size_t off = (size_t)snprintf(line, sizeof line, "%s\t%llu\t%llu\t", tname,
                                              (unsigned long long)ev.u.sample.time,
                                              (unsigned long long)ev.u.sample.weight);
                for (uint32_t i = n; i-- > 0 && off < sizeof line - 1;) {
                    frame_name(r, fr[i], name, sizeof name, 1);
                    off += (size_t)snprintf(line + off, sizeof line - off, "%s%s", name,
                                            i ? ";" : "");
                }
                printf("%s\n", line);
            } else if (m == THREADS) {
                struct agg *a = find(tname);
                a->weight += ev.u.sample.weight;
                a->samples++;
            } else if (m == STACKS) {
                size_t off = (size_t)snprintf(line, sizeof line, "%s", tname);
                for (uint32_t i = n; i-- > 0 && off < sizeof line - 1;) {
                    frame_name(r, fr[i], name, sizeof name, 1);
                    off += (size_t)snprintf(line + off, sizeof line - off, ";%s", name);
                }
                if (flags & RP_STACK_TRUNCATED && off < sizeof line - 1)
                    snprintf(line + off, sizeof line - off, ";[truncated]");
                struct agg *a = find(line);
                a->weight += ev.u.sample.weight;
                a->samples++;
            } else if (m == SELF) {
                for (uint32_t i = 0; i < n; i++) {
                    const struct rp_frame_info *fi = rp_reader_frame(r, fr[i]);
                    const struct rp_method_info *mi = fi ? rp_reader_method(r, fi->method) : NULL;
                    if (fi && mi && is_java(fi, mi)) {
                        frame_name(r, fr[i], name, sizeof name, 0);
                        struct agg *a = find(name);
                        a->weight += ev.u.sample.weight;
                        a->samples++;
                        break;
                    }
                }
            } else if (m == TOTAL) {
                /* Each method once per sample. */
                char *seen[512];
                uint32_t nseen = 0;
                for (uint32_t i = 0; i < n && nseen < 512; i++) {
                    frame_name(r, fr[i], name, sizeof name, 0);
                    int dup = 0;
                    for (uint32_t j = 0; j < nseen && !dup; j++)
                        dup = !strcmp(seen[j], name);
                    if (dup)
                        continue;
                    struct agg *a = find(name);
                    a->weight += ev.u.sample.weight;
                    a->samples++;
                    seen[nseen++] = a->key;
                }
            }
        }
    }
    struct rp_reader_stats st;
    rp_reader_stats(r, &st);
    closed += st.clean_close ? 1 : 0;
    last_closed = st.clean_close ? 1 : 0;
    damaged += st.segments_bad + st.records_bad + st.unresolved_refs;
    rp_reader_close(r);
}

static int is_chunk(const char *n)
{
    size_t l = strlen(n);
    return (l > 4 && !strcmp(n + l - 4, ".rpc")) || (l > 9 && !strcmp(n + l - 9, ".rpc.part"));
}

int main(int argc, char **argv)
{
    static const char *modes[] = {"stacks", "self", "total", "threads", "counters",
                                  "gauges", "check", "series", "locks", "tseries", "wall",
                                  "samples", "meta", "cputime", "span"};
    int m = -1;
    for (int i = 0; i < (int)(sizeof modes / sizeof modes[0]); i++)
        if (argc > 1 && !strcmp(argv[1], modes[i]))
            m = i;
    if (argc != (m == SERIES || m == TSERIES ? 4 : 3)) {
        fprintf(stderr, "usage: rp_agent_dump stacks|self|total|threads|counters|gauges|check|locks|\n"
                        "                     wall|samples|meta|cputime|span DIR\n"
                        "       rp_agent_dump series|tseries DIR GAUGE\n");
        return 2;
    }
    series_name = m == SERIES || m == TSERIES ? argv[3] : NULL;
    if (getenv("RP_DUMP_KIND") && *getenv("RP_DUMP_KIND"))
        dump_kind = lock_kind = getenv("RP_DUMP_KIND");
    if (m < 0) {
        fprintf(stderr, "rp_agent_dump: unknown mode '%s'\n", argv[1]);
        return 2;
    }
    DIR *d = opendir(argv[2]);
    if (!d) {
        perror(argv[2]);
        return 2;
    }
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_chunk(e->d_name))
            continue;
        names = realloc(names, (nn + 1) * sizeof *names);
        names[nn] = malloc(strlen(argv[2]) + strlen(e->d_name) + 2);
        sprintf(names[nn++], "%s/%s", argv[2], e->d_name);
    }
    closedir(d);
    if (nn)         /* qsort's array may not be NULL, even for 0 elements (UBSan) */
        qsort(names, nn, sizeof *names, cmp_str);
    for (size_t i = 0; i < nn; i++) {
        read_file(names[i], (enum mode)m);
        free(names[i]);
    }
    free(names);        /* before the early returns below: LSan in ASan builds */
    if (m == CHECK) {
        printf("files %llu chunks_closed %llu last_closed %llu samples %llu damaged %llu\n",
               (unsigned long long)files, (unsigned long long)closed,
               (unsigned long long)last_closed, (unsigned long long)samples,
               (unsigned long long)damaged);
        return damaged ? 1 : 0;
    }
    if (m == SPAN && span_first != UINT64_MAX)
        printf("%llu\t%llu\n", (unsigned long long)span_first, (unsigned long long)span_last);
    if (m == WALL || m == SAMPLES || m == META || m == CPUTIME || m == SPAN || m == LOCKS)
        return 0;
    if (naggs)
        qsort(aggs, naggs, sizeof *aggs, cmp_agg);
    for (size_t i = 0; i < naggs; i++) {
        struct agg *a = &aggs[i];
        if (m == COUNTERS)
            printf("%s\t%llu\n", a->key, (unsigned long long)a->weight);
        else if (m == GAUGES)
            printf("%s\t%llu\t%llu\t%llu\n", a->key, (unsigned long long)a->weight,
                   (unsigned long long)a->min, (unsigned long long)a->max);
        else if (m == THREADS)
            printf("%llu\t%llu\t%llu\t%s\n", (unsigned long long)a->weight,
                   (unsigned long long)a->samples, (unsigned long long)a->max, a->key);
        else
            printf("%llu\t%llu\t%s\n", (unsigned long long)a->weight,
                   (unsigned long long)a->samples, a->key);
    }
    return 0;
}
