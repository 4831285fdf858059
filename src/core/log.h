/*
 * src/core/log.h — the agent's messages on stderr.
 *
 * Every line the agent prints starts with "ringprof: " so an operator can grep a
 * JVM's stderr for it, and is written with one write(2) so lines from several
 * threads do not interleave. The agent prints only what an operator must act on:
 * a refused start (bad option, signal taken, directory unusable), a feature that
 * is off because the JVM lacks it, and problems that lose data. Nothing is printed
 * per sample or per flush.
 *
 * Threads: any thread except a signal handler (vsnprintf is not async-signal-safe).
 */
#ifndef RINGPROF_SRC_LOG_H
#define RINGPROF_SRC_LOG_H

/* Print "ringprof: <message>\n" to stderr. A message that already starts with
 * "ringprof: " (the option parser's lines do) is not prefixed twice. */
void rp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* As rp_log, but only the first time `*once` is 0 (then sets it). `once` is a
 * plain int owned by the caller: a racing second print is harmless. */
void rp_log_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
