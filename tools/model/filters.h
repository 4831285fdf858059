/*
 * tools/model/filters.h — the sample filters that `convert`, `leaks` and `locks`
 * share: --thread, --include, --exclude (and convert's --method), POSIX extended
 * regular expressions compiled once from the command line; and --demangle, how
 * native symbols are named, which is also what --include and --exclude see.
 */
#ifndef RINGPROF_TOOLS_FILTERS_H
#define RINGPROF_TOOLS_FILTERS_H

#include <regex.h>

#include "profile.h"

struct rp_filters {
    regex_t thread, include, exclude, method;
    int have_thread, have_include, have_exclude, have_method;
    enum rp_demangle_style demangle;   /* --demangle; 0: short */
};

/*
 * rp_filters_set: compile `pattern` for option `opt` ("--thread", "--include",
 * "--exclude" or "--method"), or take the style of "--demangle" ("short",
 * "full" or "none"). @return 0, or -1 after printing "ringprof CMD: OPT
 * 'PATTERN': reason" on stderr (a bad expression, a style with "did you mean",
 * a regex option given twice); the caller then prints where its help is and
 * exits 2.
 */
int rp_filters_set(struct rp_filters *f, const char *cmd, const char *opt,
                   const char *pattern);

/* Point the profile options at the compiled filters (thread, include, exclude)
 * and set their demangling style. */
void rp_filters_apply(const struct rp_filters *f, struct rp_prof_options *po);

void rp_filters_free(struct rp_filters *f);

#endif
