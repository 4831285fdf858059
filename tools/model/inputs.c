/*
 * tools/model/inputs.c — INPUT expansion, duplicate chunks and reader diagnostics
 * for every subcommand. See inputs.h for the rules.
 *
 * Duplicates are found after the expansion, in one pass that reads each file's
 * header (the reader reads only the header at open) and interns its identity in
 * a string table, whose numbers index the input kept for each chunk so far; a
 * later copy that is better (inputs.h) takes the place of the one kept.
 */
#include "inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ringprof/chunk.h"
#include "ringprof/format.h"
#include "strtab.h"
#include "xalloc.h"

static int add_path(struct rp_inputs *in, const char *path)
{
    if (in->n == in->cap) {
        size_t cap = in->cap ? in->cap * 2 : 16;
        char **p = realloc(in->paths, cap * sizeof *p);
        if (!p)
            return -1;
        in->paths = p;
        in->cap = cap;
    }
    if (!(in->paths[in->n] = strdup(path)))
        return -1;
    in->n++;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int rp_is_chunk_name(const char *name)
{
    return ends_with(name, ".rpc") || ends_with(name, ".rpc.part");
}

int rp_is_part_name(const char *path)
{
    return ends_with(path, RP_CHUNK_SUFFIX RP_CHUNK_PART_SUFFIX);
}

int rp_chunk_in_recording(const char *path, const char *id, char *other, size_t cap)
{
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    if (!r)
        return -1;
    const char *got = rp_reader_meta(r, RP_META_RECORDING);
    int mine = got && !strcmp(got, id);
    if (!mine)
        snprintf(other, cap, "%s", got ? got : "none");
    rp_reader_close(r);
    return mine;
}

size_t rp_inputs_keep_recording(struct rp_inputs *in, const char *id, char *first,
                                size_t cap)
{
    size_t kept = 0, out = 0;
    for (size_t i = 0; i < in->n; i++) {
        char other[128];
        if (rp_chunk_in_recording(in->paths[i], id, other, sizeof other) != 0) {
            if (in->ids)
                in->ids[kept] = in->ids[i];
            in->paths[kept++] = in->paths[i];
            continue;
        }
        if (!out++)
            snprintf(first, cap, "%s (recording %s)", in->paths[i], other);
        free(in->paths[i]);
        if (in->ids)
            free(in->ids[i]);
    }
    in->n = kept;
    return out;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory contributes its chunk files, sorted. @return how many. */
static int add_dir(struct rp_inputs *in, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "ringprof: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    size_t first = in->n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!rp_is_chunk_name(e->d_name))
            continue;
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            add_path(in, path);
    }
    closedir(d);
    /* Not for an empty directory: paths may still be NULL, and NULL + 0 and
     * qsort(NULL, 0) are undefined (UBSan; the same mistake the fuzzer found in
     * cmd_summary.c). */
    if (in->n > first)
        qsort(in->paths + first, in->n - first, sizeof *in->paths, cmp_str);
    return (int)(in->n - first);
}

static int add_one(struct rp_inputs *in, const char *arg)
{
    struct stat st;
    if (stat(arg, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            int k = add_dir(in, arg);
            if (k == 0)
                fprintf(stderr, "ringprof: %s: no chunk files (*.rpc) in this "
                                "directory\n", arg);
            return k > 0 ? 0 : -1;
        }
        return add_path(in, arg);
    }
    if (strpbrk(arg, "*?[")) {
        glob_t g;
        int rc = glob(arg, 0, NULL, &g);
        if (rc == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++)
                add_one(in, g.gl_pathv[i]);
            globfree(&g);
            return 0;
        }
        globfree(&g);
        fprintf(stderr, "ringprof: %s: no file matches this pattern\n", arg);
        return -1;
    }
    fprintf(stderr, "ringprof: %s: %s\n", arg, strerror(errno));
    return -1;
}

/* ------------------------------------------------------------ duplicates -- */

/* A chunk without recording.id and chunk.seq: its size and FNV-1a hash of its
 * bytes, "b<size>:<hash>", allocated; NULL when it cannot be read. */
static char *content_identity(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = rp_xmalloc(65536);
    uint64_t h = 1469598103934665603ull, size = 0;
    ssize_t got;
    while ((got = read(fd, buf, 65536)) > 0) {
        for (ssize_t i = 0; i < got; i++) {
            h ^= (unsigned char)buf[i];
            h *= 1099511628211ull;
        }
        size += (uint64_t)got;
    }
    free(buf);
    close(fd);
    if (got < 0)
        return NULL;
    char *id = rp_xmalloc(48);
    snprintf(id, 48, "b%llu:%016llx", (unsigned long long)size, (unsigned long long)h);
    return id;
}

/* The identity of the chunk file `path` (inputs.h): "c<len>:<recording.id>:<seq>",
 * or its bytes' (content_identity); allocated. NULL when its header cannot be
 * read (nothing is printed: the real pass reports it), and for what is not a
 * regular file: a FIFO or a device is read once, by the real pass, and cannot
 * be a copy of anything. */
static char *chunk_identity(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    struct rp_reader *r = rp_reader_open(path, NULL, NULL);
    if (!r)
        return NULL;
    const char *rec = rp_reader_meta(r, RP_META_RECORDING);
    const char *seq = rp_reader_meta(r, RP_META_CHUNK_SEQ);
    char *id = NULL;
    if (rec && seq) {
        size_t cap = strlen(rec) + strlen(seq) + 32;
        id = rp_xmalloc(cap);
        snprintf(id, cap, "c%zu:%s:%s", strlen(rec), rec, seq);
    }
    rp_reader_close(r);
    return id ? id : content_identity(path);
}

/* "chunk S of recording R" or "the same bytes" for an identity, into buf. */
static void describe_identity(const char *id, char *buf, size_t cap)
{
    size_t len = 0;
    int at = 0;
    if (id[0] != 'c' || sscanf(id, "c%zu:%n", &len, &at) != 1 || !at ||
        strlen(id + at) <= len) {
        snprintf(buf, cap, "has the same bytes as");
        return;
    }
    snprintf(buf, cap, "is chunk %s of recording %.*s, read from", id + at + len + 1,
             (int)len, id + at);
}

/* A ".part" that is gone when it is read, because its writer finished it while it
 * was being listed: its finished name, allocated, if that is a regular file;
 * else NULL. */
static char *finished_instead(const char *path)
{
    struct stat st;
    if (!rp_is_part_name(path) || access(path, F_OK) == 0 || errno != ENOENT)
        return NULL;
    size_t len = strlen(path) - strlen(RP_CHUNK_PART_SUFFIX);
    char *done = rp_xmalloc(len + 1);
    memcpy(done, path, len);
    done[len] = '\0';
    if (stat(done, &st) == 0 && S_ISREG(st.st_mode))
        return done;
    free(done);
    return NULL;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Whether copy `b` (size bs) is to be read rather than `a` (size as), the one
 * kept so far: the finished name over a ".part", then the longer file. */
static int better_copy(const char *a, uint64_t as, const char *b, uint64_t bs)
{
    int ap = rp_is_part_name(a), bp = rp_is_part_name(b);
    if (ap != bp)
        return ap;
    return bs > as;
}

/* The duplicates line: how many were left out, and the first of them. */
static void say_dups(const struct rp_inputs *in, const char *first, const char *kept,
                     const char *id, const char *renamed)
{
    if (in->quiet)
        return;
    rp_progress_done();
    fprintf(stderr, "ringprof%s%s: left out %zu duplicate input%s (each chunk is read "
            "once): the first, ", in->cmd ? " " : "", in->cmd ? in->cmd : "", in->dups,
            in->dups == 1 ? "" : "s");
    if (renamed)
        fprintf(stderr, "%s, was finished as %s while it was listed\n", renamed, kept);
    else if (!strcmp(first, kept))
        fprintf(stderr, "%s, was given twice\n", first);
    else {
        char what[256];
        describe_identity(id, what, sizeof what);
        fprintf(stderr, "%s, %s %s\n", first, what, kept);
    }
}

/* Drop the copies (inputs.h): fill in->ids, keep the better of each chunk's
 * files where the first of them was, and say what was left out. */
static void drop_duplicates(struct rp_inputs *in)
{
    in->ids = rp_xcalloc(in->n ? in->n : 1, sizeof *in->ids);
    uint64_t *size = rp_xcalloc(in->n ? in->n : 1, sizeof *size);
    size_t *kept = rp_xcalloc(in->n ? in->n : 1, sizeof *kept);   /* by identity */
    char *renamed = NULL, *first = NULL;   /* the first copy left out, as listed */
    size_t first_key = 0;
    struct rp_strtab t;
    rp_strtab_init(&t);
    for (size_t i = 0; i < in->n; i++) {
        char *done = finished_instead(in->paths[i]), *listed = NULL;
        if (done) {
            listed = in->paths[i];
            in->paths[i] = done;
        }
        in->ids[i] = chunk_identity(in->paths[i]);
        size[i] = file_size(in->paths[i]);
        if (!in->ids[i]) {
            free(listed);
            continue;
        }
        size_t before = t.n;
        uint32_t k = rp_strtab_cstr(&t, in->ids[i]);
        if (k == before) {
            kept[k] = i;
            free(listed);
            continue;
        }
        size_t j = kept[k], drop = j;
        if (better_copy(in->paths[j], size[j], in->paths[i], size[i]))
            kept[k] = i;
        else
            drop = i;
        if (!in->dups++) {
            first_key = k;
            first = rp_xstrdup(in->paths[drop]);
            /* The .part listed, finished under the name already kept. */
            if (listed && drop == i && !strcmp(in->paths[j], in->paths[i])) {
                renamed = listed;
                listed = NULL;
            }
        }
        free(listed);
        free(in->paths[drop]);
        in->paths[drop] = NULL;
    }
    size_t out = 0;
    for (size_t i = 0; i < in->n; i++) {
        if (!in->paths[i]) {
            free(in->ids[i]);
            continue;
        }
        if (in->ids[i] && kept[rp_strtab_cstr(&t, in->ids[i])] == i)
            kept[rp_strtab_cstr(&t, in->ids[i])] = out;
        in->paths[out] = in->paths[i];
        in->ids[out++] = in->ids[i];
    }
    in->n = out;
    if (in->dups)
        say_dups(in, first, in->paths[kept[first_key]], t.s[first_key], renamed);
    free(first);
    free(renamed);
    free(kept);
    free(size);
    rp_strtab_free(&t);
}

int rp_inputs_expand(struct rp_inputs *in, int argc, char **argv)
{
    int bad = 0;
    for (int i = 0; i < argc; i++)
        if (add_one(in, argv[i]) != 0)
            bad++;
    drop_duplicates(in);
    return bad;
}

size_t rp_inputs_shared(const struct rp_inputs *a, const struct rp_inputs *b,
                        size_t *first_a, size_t *first_b)
{
    struct rp_strtab t;
    rp_strtab_init(&t);
    size_t *at = rp_xcalloc(b->n ? b->n : 1, sizeof *at);   /* b's index by identity */
    for (size_t i = 0; i < b->n; i++)
        if (b->ids && b->ids[i])
            at[rp_strtab_cstr(&t, b->ids[i])] = i;
    size_t nb = t.n, shared = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (!a->ids || !a->ids[i])
            continue;
        uint32_t k = rp_strtab_cstr(&t, a->ids[i]);
        if (k >= nb)
            continue;
        if (!shared++) {
            *first_a = i;
            *first_b = at[k];
        }
    }
    free(at);
    rp_strtab_free(&t);
    return shared;
}

void rp_inputs_free(struct rp_inputs *in)
{
    for (size_t i = 0; i < in->n; i++) {
        free(in->paths[i]);
        if (in->ids)
            free(in->ids[i]);
    }
    free(in->paths);
    free(in->ids);
    memset(in, 0, sizeof *in);
}

void rp_diag_print(void *arg, const char *path, uint64_t offset, const char *reason,
                   int fatal)
{
    struct rp_diag_counts *c = arg;
    if (fatal)
        c->fatal++;
    else
        c->warnings++;
    if (!c->quiet) {
        rp_progress_done();
        if (offset == RP_READER_NO_OFFSET)
            fprintf(stderr, "ringprof: %s: %s%s\n", path, reason,
                    fatal ? " (file skipped)" : "");
        else
            fprintf(stderr, "ringprof: %s: offset %llu: %s%s\n", path,
                    (unsigned long long)offset, reason, fatal ? " (file skipped)" : "");
    }
}

static int progress_shown;

void rp_progress(size_t k, size_t n, const char *path)
{
    if (!isatty(STDERR_FILENO))
        return;
    const char *base = strrchr(path, '/');
    fprintf(stderr, "\r\033[K[%zu/%zu] %s", k, n, base ? base + 1 : path);
    progress_shown = 1;
}

void rp_progress_done(void)
{
    if (progress_shown) {
        fputs("\r\033[K", stderr);
        progress_shown = 0;
    }
}
