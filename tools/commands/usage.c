/*
 * tools/commands/usage.c — usage errors in two lines (usage.h).
 */
#include "usage.h"

#include <string.h>

#include "ringprof/suggest.h"

int rp_usage_help_line(const char *cmd)
{
    fprintf(stderr, "Try 'ringprof %s --help' for more information.\n", cmd);
    return 2;
}

int rp_usage_verror(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "ringprof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return rp_usage_help_line(cmd);
}

int rp_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rp_usage_verror(cmd, fmt, ap);
    va_end(ap);
    return 2;
}

/* The closest of names[0..n) to word[0..len), or NULL. */
static const char *closest(const char *word, size_t len, const char *const *names, size_t n)
{
    char w[RP_SUGGEST_LEN_MAX + 1];
    if (len > RP_SUGGEST_LEN_MAX)
        return NULL;
    memcpy(w, word, len);
    w[len] = 0;
    struct rp_suggest s;
    rp_suggest_init(&s, w);
    for (size_t i = 0; i < n; i++)
        rp_suggest_try(&s, names[i]);
    return rp_suggest_best(&s);
}

void rp_usage_suggest(FILE *f, const char *word, size_t len, const char *const *names,
                      size_t n)
{
    const char *best = closest(word, len, names, n);
    if (best)
        fprintf(f, " (did you mean '%s'?)", best);
}

int rp_usage_choice(const char *cmd, const char *opt, const char *noun, const char *word,
                    const char *const *names, size_t n)
{
    fprintf(stderr, "ringprof %s: ", cmd);
    if (opt)
        fprintf(stderr, "%s '%s': unknown %s", opt, word, noun);
    else
        fprintf(stderr, "unknown %s '%s'", noun, word);
    rp_usage_suggest(stderr, word, strlen(word), names, n);
    fprintf(stderr, "; the %ss are", noun);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s %s", i ? "," : "", names[i]);
    fputc('\n', stderr);
    return rp_usage_help_line(cmd);
}

/* "--name" of every long option, for suggestions: at most 64. */
static size_t long_names(const struct option *longopts, char names[][RP_SUGGEST_LEN_MAX + 1],
                         const char **ptrs, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; longopts && longopts[i].name && n < cap; i++) {
        if (strlen(longopts[i].name) + 2 > RP_SUGGEST_LEN_MAX)
            continue;
        snprintf(names[n], RP_SUGGEST_LEN_MAX + 1, "--%s", longopts[i].name);
        ptrs[n] = names[n];
        n++;
    }
    return n;
}

int rp_usage_getopt(const char *cmd, int opt, char *const *argv,
                    const struct option *longopts, const char *extra)
{
    /* A long option is the word before optind ("--topp", "--top=3"); a short
     * one is optopt, which may sit inside a cluster ("-xo") that optind has
     * not passed yet. */
    const char *word = argv[optind - 1];
    char shortw[3] = {'-', (char)optopt, 0};
    if ((word[0] != '-' || word[1] != '-') && optopt > ' ' && optopt < 0x7f)
        word = shortw;
    fprintf(stderr, "ringprof %s: ", cmd);
    if (opt == ':') {
        fprintf(stderr, "option '%s' needs a value", word);
    } else {
        size_t len = strcspn(word, "=");   /* "--topp=3": the name is "--topp" */
        fprintf(stderr, "unknown option '%.*s'", (int)len, word);
        char names[64][RP_SUGGEST_LEN_MAX + 1];
        const char *ptrs[64];
        size_t n = long_names(longopts, names, ptrs, 64);
        if (word[0] == '-' && word[1] == '-')
            rp_usage_suggest(stderr, word, len, ptrs, n);
    }
    fprintf(stderr, "%s\n", extra ? extra : "");
    return rp_usage_help_line(cmd);
}
