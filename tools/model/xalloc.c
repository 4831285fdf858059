/*
 * tools/model/xalloc.c — exit-on-out-of-memory allocation (xalloc.h).
 */
#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *checked(void *q)
{
    if (!q) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
    return q;
}

void *rp_xmalloc(size_t n)
{
    return checked(malloc(n ? n : 1));
}

void *rp_xcalloc(size_t n, size_t size)
{
    return checked(calloc(n ? n : 1, size ? size : 1));
}

void *rp_xrealloc(void *q, size_t n)
{
    return checked(realloc(q, n ? n : 1));
}

char *rp_xstrdup(const char *s)
{
    return checked(strdup(s));
}

void *rp_xreallocarray(void *q, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return checked(NULL);
    return rp_xrealloc(q, n * size);
}

void rp_xgrow_past(void **arr, size_t *cap, size_t n, size_t size, size_t first)
{
    size_t c = *cap ? *cap : first;
    while (c <= n)
        c *= 2;
    *arr = rp_xreallocarray(*arr, c, size);
    *cap = c;
}

void rp_xgrow_map(void **arr, size_t *n, size_t id, size_t size, size_t first, int fill)
{
    if (id < *n)
        return;
    size_t cap = *n ? *n : first;
    while (cap <= id)
        cap *= 2;
    *arr = rp_xreallocarray(*arr, cap, size);
    memset((char *)*arr + *n * size, fill, (cap - *n) * size);
    *n = cap;
}
