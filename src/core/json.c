/*
 * src/core/json.c — the JSON writer behind the control socket's replies (see json.h).
 *
 * One buffer grows by doubling up to the writer's max. The writer keeps a small
 * stack of open containers so it can place commas and refuse misuse; an error is
 * sticky, so a reply producer never checks each call. Strings go through the shared
 * escaper (ringprof/json_escape.h): valid UTF-8 passes unchanged, each invalid byte
 * becomes U+FFFD, and control characters are escaped.
 */
#include "core/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/json_escape.h"

void rp_json_init(struct rp_json *j, size_t max)
{
    memset(j, 0, sizeof *j);
    j->max = max;
}

void rp_json_free(struct rp_json *j)
{
    size_t max = j->max;
    free(j->buf);
    rp_json_init(j, max);
}

char *rp_json_take(struct rp_json *j, size_t *len)
{
    char *buf = j->buf;
    *len = buf ? j->len : 0;
    rp_json_init(j, j->max);
    return buf;
}

void rp_json_mark(const struct rp_json *j, struct rp_json_mark *m)
{
    m->state = *j;
}

/* The buffer only grows after a mark, so the text up to the mark is still in it. */
void rp_json_rewind(struct rp_json *j, const struct rp_json_mark *m)
{
    char *buf = j->buf;
    size_t cap = j->cap, max = j->max;
    *j = m->state;
    j->buf = buf;
    j->cap = cap;
    j->max = max;
    if (buf)
        buf[j->len] = '\0';
}

void rp_json_reset(struct rp_json *j)
{
    char *buf = j->buf;
    size_t cap = j->cap, max = j->max;
    memset(j, 0, sizeof *j);
    j->buf = buf;
    j->cap = cap;
    j->max = max;
    if (buf)
        buf[0] = '\0';
}

/* Make room for n more bytes plus the NUL. @return 0, or -1 with the error set. */
static int reserve(struct rp_json *j, size_t n)
{
    if (j->err)
        return -1;
    if (n > j->max || j->len > j->max - n) {
        j->err = RP_JSON_TOO_LONG;
        return -1;
    }
    size_t need = j->len + n + 1;
    if (need <= j->cap)
        return 0;
    size_t cap = j->cap ? j->cap : 256;
    while (cap < need)
        cap *= 2;
    if (cap > j->max + 1)
        cap = j->max + 1;
    char *p = realloc(j->buf, cap);
    if (!p) {
        j->err = RP_JSON_NOMEM;
        return -1;
    }
    j->buf = p;
    j->cap = cap;
    return 0;
}

static void put(struct rp_json *j, const char *s, size_t n)
{
    if (reserve(j, n) != 0)
        return;
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void putc_(struct rp_json *j, char c)
{
    put(j, &c, 1);
}

static void misuse(struct rp_json *j)
{
    if (!j->err)
        j->err = RP_JSON_MISUSE;
}

/* Before any value: the comma, or a check that a key was given. @return 0 to go. */
static int value_begin(struct rp_json *j)
{
    if (j->err)
        return -1;
    if (j->depth == 0) {
        if (j->done) {
            misuse(j);
            return -1;
        }
        return 0;
    }
    int top = j->depth - 1;
    if (j->kind[top] == 'o') {
        if (!j->after_key) {
            misuse(j);
            return -1;
        }
        j->after_key = 0;
    } else {
        if (j->nonempty[top])
            putc_(j, ',');
        j->nonempty[top] = 1;
    }
    return j->err ? -1 : 0;
}

/* After a scalar, or after a container closed: a top-level value is complete. */
static void value_end(struct rp_json *j)
{
    if (j->depth == 0)
        j->done = 1;
}

/* ---------------------------------------------------------------- strings -- */

static void emit_into(void *ctx, const char *bytes, size_t n)
{
    put(ctx, bytes, n);
}

static void put_escaped(struct rp_json *j, const char *str, size_t n)
{
    putc_(j, '"');
    rp_json_escape(str, n, 0, emit_into, j);
    putc_(j, '"');
}

/* ------------------------------------------------------------- containers -- */

static void open_(struct rp_json *j, char kind)
{
    if (value_begin(j) != 0)
        return;
    if (j->depth >= RP_JSON_DEPTH_MAX) {
        misuse(j);
        return;
    }
    putc_(j, kind == 'o' ? '{' : '[');
    j->kind[j->depth] = kind;
    j->nonempty[j->depth] = 0;
    j->depth++;
}

static void close_(struct rp_json *j, char kind)
{
    if (j->err)
        return;
    if (j->depth == 0 || j->kind[j->depth - 1] != kind || j->after_key) {
        misuse(j);
        return;
    }
    putc_(j, kind == 'o' ? '}' : ']');
    j->depth--;
    value_end(j);
}

void rp_json_object_begin(struct rp_json *j) { open_(j, 'o'); }
void rp_json_object_end(struct rp_json *j)   { close_(j, 'o'); }
void rp_json_array_begin(struct rp_json *j)  { open_(j, 'a'); }
void rp_json_array_end(struct rp_json *j)    { close_(j, 'a'); }

void rp_json_key(struct rp_json *j, const char *key)
{
    if (j->err)
        return;
    if (j->depth == 0 || j->kind[j->depth - 1] != 'o' || j->after_key || !key) {
        misuse(j);
        return;
    }
    if (j->nonempty[j->depth - 1])
        putc_(j, ',');
    j->nonempty[j->depth - 1] = 1;
    put_escaped(j, key, strlen(key));
    putc_(j, ':');
    j->after_key = 1;
}

/* ----------------------------------------------------------------- values -- */

static void scalar(struct rp_json *j, const char *text, size_t n)
{
    if (value_begin(j) != 0)
        return;
    put(j, text, n);
    value_end(j);
}

void rp_json_string_len(struct rp_json *j, const char *s, size_t len)
{
    if (!s) {
        rp_json_null(j);
        return;
    }
    if (value_begin(j) != 0)
        return;
    put_escaped(j, s, len);
    value_end(j);
}

void rp_json_string(struct rp_json *j, const char *s)
{
    rp_json_string_len(j, s, s ? strlen(s) : 0);
}

void rp_json_u64(struct rp_json *j, uint64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%" PRIu64, v);
    scalar(j, b, (size_t)n);
}

void rp_json_i64(struct rp_json *j, int64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%" PRId64, v);
    scalar(j, b, (size_t)n);
}

void rp_json_double(struct rp_json *j, double v)
{
    if (!isfinite(v)) {
        rp_json_null(j);
        return;
    }
    char b[40];
    int n = snprintf(b, sizeof b, "%.15g", v);
    /* A locale may print a decimal comma; JSON wants a point. */
    for (int i = 0; i < n; i++)
        if (b[i] == ',')
            b[i] = '.';
    scalar(j, b, (size_t)n);
}

void rp_json_bool(struct rp_json *j, int v)
{
    if (v)
        scalar(j, "true", 4);
    else
        scalar(j, "false", 5);
}

void rp_json_null(struct rp_json *j)
{
    scalar(j, "null", 4);
}

/* A member: its key, then its value written by rp_json_<type>. */
#define KV(type, ctype)                                                         \
    void rp_json_kv_##type(struct rp_json *j, const char *key, ctype v)         \
    {                                                                           \
        rp_json_key(j, key);                                                    \
        rp_json_##type(j, v);                                                   \
    }
KV(string, const char *)
KV(u64, uint64_t)
KV(i64, int64_t)
KV(double, double)
KV(bool, int)
#undef KV

void rp_json_set_max(struct rp_json *j, size_t max)
{
    j->max = max;
}

size_t rp_json_max(const struct rp_json *j)
{
    return j->max;
}

void rp_json_members(struct rp_json *j, const char *obj, size_t len)
{
    if (j->err)
        return;
    if (len < 2 || obj[0] != '{' || obj[len - 1] != '}' || j->depth < 1 ||
        j->kind[j->depth - 1] != 'o' || j->after_key) {
        misuse(j);
        return;
    }
    if (len == 2)
        return;                         /* "{}": no members */
    if (j->nonempty[j->depth - 1])
        putc_(j, ',');
    put(j, obj + 1, len - 2);
    j->nonempty[j->depth - 1] = 1;
}

void rp_json_raw(struct rp_json *j, const char *s, size_t len)
{
    put(j, s, len);
}

enum rp_json_err rp_json_error(const struct rp_json *j)
{
    return j->err;
}

int rp_json_depth(const struct rp_json *j)
{
    return j->depth;
}

const char *rp_json_text(const struct rp_json *j, size_t *len)
{
    if (len)
        *len = j->len;
    return j->buf ? j->buf : "";
}
