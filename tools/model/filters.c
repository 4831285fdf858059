/*
 * tools/model/filters.c — compiling the commands' regular-expression options, and
 * their --demangle (filters.h).
 */
#include "filters.h"

#include <stdio.h>
#include <string.h>

#include "ringprof/suggest.h"

int rp_filters_set(struct rp_filters *f, const char *cmd, const char *opt,
                   const char *pattern)
{
    if (!strcmp(opt, "--demangle")) {
        if (rp_demangle_parse(pattern, &f->demangle) == 0)
            return 0;
        struct rp_suggest s;
        rp_suggest_init(&s, pattern);
        rp_suggest_try(&s, "short");
        rp_suggest_try(&s, "full");
        rp_suggest_try(&s, "none");
        fprintf(stderr, "ringprof %s: --demangle '%s': unknown style", cmd, pattern);
        if (rp_suggest_best(&s))
            fprintf(stderr, " (did you mean '%s'?)", rp_suggest_best(&s));
        fprintf(stderr, "; the styles are short (names without parameters, the "
                        "default), full and none (as recorded)\n");
        return -1;
    }
    regex_t *re = !strcmp(opt, "--thread") ? &f->thread
                : !strcmp(opt, "--include") ? &f->include
                : !strcmp(opt, "--exclude") ? &f->exclude : &f->method;
    int *have = re == &f->thread ? &f->have_thread
              : re == &f->include ? &f->have_include
              : re == &f->exclude ? &f->have_exclude : &f->have_method;
    if (*have) {
        fprintf(stderr, "ringprof %s: %s given twice\n", cmd, opt);
        return -1;
    }
    int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char msg[256];
        regerror(rc, re, msg, sizeof msg);
        fprintf(stderr, "ringprof %s: %s '%s': %s\n", cmd, opt, pattern, msg);
        return -1;
    }
    *have = 1;
    return 0;
}

void rp_filters_apply(const struct rp_filters *f, struct rp_prof_options *po)
{
    po->demangle = f->demangle;
    po->thread_re = f->have_thread ? &f->thread : NULL;
    po->include_re = f->have_include ? &f->include : NULL;
    po->exclude_re = f->have_exclude ? &f->exclude : NULL;
}

void rp_filters_free(struct rp_filters *f)
{
    if (f->have_thread)
        regfree(&f->thread);
    if (f->have_include)
        regfree(&f->include);
    if (f->have_exclude)
        regfree(&f->exclude);
    if (f->have_method)
        regfree(&f->method);
    memset(f, 0, sizeof *f);
}
