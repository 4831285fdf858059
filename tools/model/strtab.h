/*
 * tools/model/strtab.h — a string table: interns byte strings and numbers them 0, 1, 2,
 * ... in first-seen order. The pprof writer uses it for profile.proto's
 * string_table (entry 0 must be ""), the HTML writer for the page's name table.
 *
 * The table keeps one copy of each distinct string and an open-addressing hash
 * index over them, so memory is proportional to the distinct strings. Allocation
 * failure is fatal (prints "ringprof: out of memory" and exits 1, model/xalloc.h),
 * as everywhere in the tool. Single-threaded; not async-signal-safe.
 */
#ifndef RINGPROF_TOOLS_STRTAB_H
#define RINGPROF_TOOLS_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct rp_strtab {
    char **s;            /* s[i]: the i-th string, NUL-terminated copy           */
    size_t *len;         /* its length (strings may contain NUL bytes)           */
    size_t n, cap;
    uint32_t *slot;      /* hash index: string number + 1, 0 for an empty slot   */
    size_t nslots;       /* a power of two, kept at least twice n                */
};

void rp_strtab_init(struct rp_strtab *t);
void rp_strtab_free(struct rp_strtab *t);
/* The number of `s` (len bytes), adding it if new. */
uint32_t rp_strtab_add(struct rp_strtab *t, const char *s, size_t len);
/* The same for a NUL-terminated string; NULL is taken as "". */
uint32_t rp_strtab_cstr(struct rp_strtab *t, const char *s);

#endif
