/*
 * tools/commands/usage.h — how every command says its command line is wrong: one
 * line that names the mistake (with "did you mean" where the word is close to one
 * the command knows), then one line that says where the help is, and exit status
 * 2. The usage text itself is printed only when asked for (--help): printed after
 * an error, 13 to 75 lines of it scrolled the error out of sight.
 *
 *   ringprof convert: unknown format 'colapsed' (did you mean 'collapsed'?); the formats are tree, ...
 *   Try 'ringprof convert --help' for more information.
 *
 * Suggestions come from ringprof/suggest.h, the agent options' own. Every
 * function prints on stderr, runs on the tool's one thread, allocates nothing and
 * @return 2, the exit status of a usage error, so a parser can `return
 * rp_usage_error(...)`.
 */
#ifndef RINGPROF_TOOLS_USAGE_H
#define RINGPROF_TOOLS_USAGE_H

#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* "ringprof CMD: " and the message, then the help line. */
int rp_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int rp_usage_verror(const char *cmd, const char *fmt, va_list ap);

/* Only the help line ("Try 'ringprof CMD --help' for more information."), for
 * a message printed by a lower layer (model/filters.h). */
int rp_usage_help_line(const char *cmd);

/*
 * rp_usage_getopt: what getopt_long's '?' or ':' (with ':' first in its
 * optstring, and opterr 0) means: "unknown option '--per-threads' (did you
 * mean '--per-thread'?)" among `longopts`' names, "unknown option '-x'", or
 * "option '--top' needs a value". `argv` and optind as getopt_long left them;
 * `extra` (may be NULL) goes after the message, e.g. " (options stand before
 * '--')".
 */
int rp_usage_getopt(const char *cmd, int opt, char *const *argv,
                    const struct option *longopts, const char *extra);

/*
 * rp_usage_choice: `word` is none of names[0..n): "unknown NOUN 'WORD' (did you
 * mean 'NAME'?); the NOUNs are A, B, C". `opt` (may be NULL), e.g. "--format",
 * goes first: "--format 'colapsed': unknown format ...".
 */
int rp_usage_choice(const char *cmd, const char *opt, const char *noun, const char *word,
                    const char *const *names, size_t n);

/* " (did you mean 'NAME'?)" for the name of names[0..n) closest to `word`
 * (the first `len` bytes of it), or nothing when none is close; for messages
 * that list their choices themselves. */
void rp_usage_suggest(FILE *f, const char *word, size_t len, const char *const *names,
                      size_t n);

#endif
