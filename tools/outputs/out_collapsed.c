/*
 * tools/outputs/out_collapsed.c — the `collapsed` format: Brendan Gregg's folded stacks.
 *
 * One line per distinct stack, "root;caller;...;leaf VALUE", for flamegraph.pl,
 * inferno and speedscope. Java frames carry the suffix those tools colour by
 * (_[j] JIT-compiled, _[i] inlined, _[0] interpreted); kernel frames _[k]; native,
 * C++, marker and allocated-class frames are plain. In per-thread mode the thread
 * label "[name]" is the root frame. VALUE is the stack's weight in the kind's unit
 * (--value samples: its sample count); a stack whose value is 0 is left out, so
 * every VALUE is a positive integer. Frame names never contain ';' (written ':'),
 * newlines or other control characters (written '?'), and an empty name is "?".
 * Because of that rewriting, and because two threads may share a name, two stacks
 * can print alike: such lines are merged (summed), so each stack line is unique.
 * Lines come in the tree's order: heaviest root first, depth first.
 */
#include <stdlib.h>
#include <string.h>

#include "out_common.h"
#include "ringprof/hash.h"

/* Equal lines are found by a 64-bit hash of their text (two passes: sum, then print
 * each at its first stack), so memory is 16 bytes per distinct stack rather than
 * its text. */
struct dup {
    uint64_t hash, value;
    uint32_t first;
};

struct fold {
    FILE *out;
    int value_samples, printing;
    struct dup *tab;
    size_t mask, used;
    char *buf;
    size_t len, bcap;
};

static void put(struct fold *f, const char *s, size_t n)
{
    if (f->len + n + 1 > f->bcap) {
        f->bcap = (f->len + n + 1) * 2;
        f->buf = rp_xrealloc(f->buf, f->bcap);
    }
    memcpy(f->buf + f->len, s, n);
    f->len += n;
    f->buf[f->len] = 0;
}

static void put_name(struct fold *f, const char *s)
{
    if (!*s) {
        put(f, "?", 1);
        return;
    }
    size_t start = f->len;
    put(f, s, strlen(s));
    for (char *c = f->buf + start; *c; c++) {
        if (*c == ';')
            *c = ':';
        else if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    }
}

void rp_out_folded_name(FILE *out, const char *s)
{
    if (!*s)
        fputc('?', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : c, out);
    }
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return rp_mix64(h);
}

static struct dup *dup_find(struct fold *f, uint64_t h)
{
    size_t j = h & f->mask;
    while (f->tab[j].value && f->tab[j].hash != h)
        j = (j + 1) & f->mask;
    return &f->tab[j];
}

static void dup_grow(struct fold *f)
{
    if (f->tab && (f->used + 1) * 2 <= f->mask)
        return;
    struct dup *old = f->tab;
    size_t ocap = old ? f->mask + 1 : 0, cap = ocap ? ocap * 2 : 1024;
    f->tab = rp_xmalloc(cap * sizeof *f->tab);
    memset(f->tab, 0, cap * sizeof *f->tab);
    f->mask = cap - 1;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].value)
            *dup_find(f, old[i].hash) = old[i];
    free(old);
}

static int add_stack(const struct rp_profile *p, uint32_t leaf, const uint32_t *path,
                     size_t depth, void *arg)
{
    struct fold *f = arg;
    uint64_t v = p->nodes[leaf].self[f->value_samples ? RP_PV_SAMPLES : RP_PV_WEIGHT];
    if (!v)
        return 0;
    f->len = 0;
    for (size_t i = 0; i < depth; i++) {
        if (i)
            put(f, ";", 1);
        put_name(f, rp_prof_node_name(p, path[i]));
        const struct rp_prof_frame *fr = rp_prof_node_frame(p, path[i]);
        if (fr) {
            const char *sfx = rp_prof_frame_suffix(fr->type);
            put(f, sfx, strlen(sfx));
        }
    }
    uint64_t h = hash_bytes(f->buf, f->len);
    if (f->printing) {
        struct dup *d = dup_find(f, h);
        if (d->first == leaf)
            fprintf(f->out, "%s %llu\n", f->buf, (unsigned long long)d->value);
        return 0;
    }
    dup_grow(f);
    struct dup *d = dup_find(f, h);
    if (!d->value) {
        d->hash = h;
        d->first = leaf;
        f->used++;
    }
    d->value += v;
    return 0;
}

int rp_out_collapsed(FILE *out, const struct rp_profile *p, const struct rp_out_options *o)
{
    struct fold f = {0};
    f.out = out;
    f.value_samples = o->value_samples;
    dup_grow(&f);
    rp_prof_foreach_stack(p, add_stack, &f);
    f.printing = 1;
    rp_prof_foreach_stack(p, add_stack, &f);
    free(f.tab);
    free(f.buf);
    return ferror(out) ? -1 : 0;
}
