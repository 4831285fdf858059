/*
 * tools/model/inputs.c — INPUT expansion and reader diagnostics for every subcommand.
 * See inputs.h for the rules.
 */
#include "inputs.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ringprof/chunk.h"
#include "ringprof/format.h"

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
            in->paths[kept++] = in->paths[i];
            continue;
        }
        if (!out++)
            snprintf(first, cap, "%s (recording %s)", in->paths[i], other);
        free(in->paths[i]);
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

int rp_inputs_expand(struct rp_inputs *in, int argc, char **argv)
{
    int bad = 0;
    for (int i = 0; i < argc; i++)
        if (add_one(in, argv[i]) != 0)
            bad++;
    return bad;
}

void rp_inputs_free(struct rp_inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->paths[i]);
    free(in->paths);
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
