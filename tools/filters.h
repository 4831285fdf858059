/*
 * tools/filters.h — the sample filters that `convert` and `leaks` share:
 * --thread, --include, --exclude (and convert's --method), POSIX extended
 * regular expressions compiled once from the command line.
 */
#ifndef RINGPROF_TOOLS_FILTERS_H
#define RINGPROF_TOOLS_FILTERS_H

#include <regex.h>

#include "profile.h"

struct rp_filters {
    regex_t thread, include, exclude, method;
    int have_thread, have_include, have_exclude, have_method;
};

/*
 * rp_filters_set: compile `pattern` for option `opt` ("--thread", "--include",
 * "--exclude" or "--method"). @return 0, or -1 after printing "ringprof CMD:
 * OPT 'PATTERN': reason" on stderr (a bad expression, or the option given
 * twice); the caller then prints its usage and exits 2.
 */
int rp_filters_set(struct rp_filters *f, const char *cmd, const char *opt,
                   const char *pattern);

/* Point the profile options at the compiled filters (thread, include, exclude). */
void rp_filters_apply(const struct rp_filters *f, struct rp_prof_options *po);

void rp_filters_free(struct rp_filters *f);

#endif
