/*
 * recorder/suggest.c — the closest name to a word (ringprof/suggest.h). Names are
 * short, so a full Levenshtein matrix on the stack is all it takes.
 */
#include "ringprof/suggest.h"

#include <string.h>

size_t rp_suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t d[RP_SUGGEST_LEN_MAX + 1][RP_SUGGEST_LEN_MAX + 1];
    if (la > RP_SUGGEST_LEN_MAX || lb > RP_SUGGEST_LEN_MAX)
        return (size_t)-1;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

void rp_suggest_init(struct rp_suggest *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->best_edits = (size_t)-1;
}

void rp_suggest_try(struct rp_suggest *s, const char *name)
{
    if (!name || !s->word)
        return;
    size_t d = rp_suggest_distance(s->word, name);
    if (d == 0 || d > RP_SUGGEST_MAX_EDITS || 2 * d >= strlen(s->word) ||
        d >= s->best_edits)
        return;
    s->best = name;
    s->best_edits = d;
}

const char *rp_suggest_best(const struct rp_suggest *s)
{
    return s->best;
}
