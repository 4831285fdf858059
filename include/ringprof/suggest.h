/*
 * ringprof/suggest.h — "did you mean": the closest of a set of names to a word
 * that matched none, by edit distance. The agent's option parser (unknown option
 * 'intervl' (did you mean 'interval'?)) and the tool's usage errors (formats,
 * events, thread states, groups, commands, long options) share it, so the two
 * sides suggest alike.
 *
 *   struct rp_suggest s;
 *   rp_suggest_init(&s, word);
 *   for (each name) rp_suggest_try(&s, name);
 *   const char *best = rp_suggest_best(&s);      NULL: nothing close enough
 *
 * A name is close enough when its Levenshtein distance from the word is at most
 * RP_SUGGEST_MAX_EDITS and less than half the word's length (so a one-letter
 * word suggests nothing); the first of equally close names wins, so the
 * caller's order breaks ties. Names and words over RP_SUGGEST_LEN_MAX bytes
 * are never suggested.
 *
 * Pure functions on the caller's memory: no allocation, no global state, no
 * locale; about 9 KiB of stack per call of rp_suggest_try. Any thread.
 */
#ifndef RINGPROF_SUGGEST_H
#define RINGPROF_SUGGEST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Two edits: "intervl" -> "interval", "colapsed" -> "collapsed", "packge" ->
 * "package"; three would offer "tree" for "free". */
#define RP_SUGGEST_MAX_EDITS 2
#define RP_SUGGEST_LEN_MAX 32

struct rp_suggest {
    const char *word;      /* borrowed: must outlive the search */
    const char *best;      /* borrowed from the caller's names  */
    size_t best_edits;
};

void rp_suggest_init(struct rp_suggest *s, const char *word);

/* Consider `name` (NULL is ignored); it must outlive the search. */
void rp_suggest_try(struct rp_suggest *s, const char *name);

/* The closest name tried, or NULL when none was close enough. */
const char *rp_suggest_best(const struct rp_suggest *s);

/* The edit distance of a and b (insertions, deletions, substitutions), or
 * (size_t)-1 when either is longer than RP_SUGGEST_LEN_MAX. */
size_t rp_suggest_distance(const char *a, const char *b);

#ifdef __cplusplus
}
#endif

#endif
