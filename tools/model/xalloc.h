/*
 * tools/model/xalloc.h — the tool's allocators: they return the memory asked for
 * or do not return. On failure each prints "ringprof: out of memory" on stderr
 * and exits with status 1, so callers never check for NULL. A request of 0 bytes
 * gets a valid, freeable pointer (1 byte). Memory is released with free().
 *
 * For the `ringprof` command only: it is single-threaded, and exiting is the
 * right answer to out of memory for a command-line converter. The agent and the
 * recorder never use these (they must not exit a JVM).
 */
#ifndef RINGPROF_TOOLS_XALLOC_H
#define RINGPROF_TOOLS_XALLOC_H

#include <stddef.h>

/* malloc(n): uninitialised memory. */
void *rp_xmalloc(size_t n);

/* calloc(n, size): n zeroed elements; n * size overflowing counts as out of memory. */
void *rp_xcalloc(size_t n, size_t size);

/* realloc(q, n): q is NULL or from this family; its contents are kept up to n. */
void *rp_xrealloc(void *q, size_t n);

/* strdup(s): s is a C string. */
char *rp_xstrdup(const char *s);

/* realloc(q, n * size): the same for an array; n * size overflowing counts as
 * out of memory. */
void *rp_xreallocarray(void *q, size_t n, size_t size);

/* An array *arr (capacity *cap elements of `size` bytes, n of them used) made
 * large enough to hold n + 1: its capacity doubles, from `first`. Nothing is
 * done if n < *cap, which is checked inline: appends call this per element.
 * The one way the tool grows an array it appends to. */
void rp_xgrow_past(void **arr, size_t *cap, size_t n, size_t size, size_t first);
static inline void rp_xgrow(void **arr, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n >= *cap)
        rp_xgrow_past(arr, cap, n, size, first);
}

/* A map indexed by id (*arr, *n elements of `size` bytes) made large enough to
 * hold index `id`: doubled from *n (or `first`) until it does, new bytes set to
 * `fill`. Nothing is done if id < *n. */
void rp_xgrow_map(void **arr, size_t *n, size_t id, size_t size, size_t first, int fill);

#endif
