/*
 * tools/commands/ctl_json.c — the JSON reader of the control client
 * (ctl_client.h, "JSON"): replies and discovery files into struct rp_jv.
 *
 * A plain recursive-descent parser over RFC 8259 with a depth limit
 * (JV_DEPTH_MAX); what it reads is small (a reply, a discovery file) and
 * untrusted. Strings are decoded into UTF-8 (a lone surrogate becomes U+FFFD),
 * numbers keep their text, and every failure names what was wrong and at which
 * offset. Children grow at powers of two; a value and all it holds are freed
 * with rp_jv_free.
 */
#include "ringprof/errbuf.h"
#include "ctl_client.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Nesting deeper than this is refused: a reply is a few levels deep, and the
 * parser recurses once per level. */
#define JV_DEPTH_MAX 64

struct jp {
    const char *s;
    size_t len, pos;
    int depth;
    char *err;
    size_t errlen;
};

static int jp_fail(struct jp *p, const char *what)
{
    return rp_fail(p->err, p->errlen, "%s at offset %zu", what, p->pos);
}

static void jp_ws(struct jp *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static int jp_lit(struct jp *p, const char *lit)
{
    size_t n = strlen(lit);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n) != 0)
        return jp_fail(p, "invalid literal");
    p->pos += n;
    return 0;
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = (unsigned char)s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        *v = *v * 16 + (unsigned)d;
    }
    return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3F)); return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A string at p->pos (the opening quote). The decoded text is never longer than
 * the escaped one, so one allocation of the source length suffices. */
static int jp_string(struct jp *p, char **out, size_t *outlen)
{
    p->pos++;
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] != '"') {
        if (p->s[p->pos] == '\\')
            p->pos++;
        p->pos++;
    }
    if (p->pos >= p->len)
        return jp_fail(p, "unterminated string");
    size_t end = p->pos;
    char *o = malloc(end - start + 1);
    if (!o)
        return jp_fail(p, "out of memory");
    size_t n = 0;
    for (size_t i = start; i < end; i++) {
        unsigned char c = (unsigned char)p->s[i];
        if (c < 0x20) {
            free(o);
            p->pos = i;
            return jp_fail(p, "control character in string");
        }
        if (c != '\\') {
            o[n++] = (char)c;
            continue;
        }
        char e = p->s[++i];
        switch (e) {
        case '"': case '\\': case '/': o[n++] = e; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (end - i < 5 || hex4(p->s + i + 1, &cp) != 0) {
                free(o);
                p->pos = i;
                return jp_fail(p, "bad \\u escape");
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && end - i >= 7 && p->s[i + 1] == '\\' &&
                p->s[i + 2] == 'u' && hex4(p->s + i + 3, &lo) == 0 &&
                lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD;     /* a lone surrogate */
            }
            n += utf8_put(o + n, cp);
            break;
        }
        default:
            free(o);
            p->pos = i;
            return jp_fail(p, "bad escape in string");
        }
    }
    o[n] = '\0';
    p->pos = end + 1;
    *out = o;
    *outlen = n;
    return 0;
}

static int jp_number(struct jp *p, struct rp_jv *v)
{
    size_t start = p->pos;
    const char *s = p->s;
    size_t i = p->pos;
    if (i < p->len && s[i] == '-')
        i++;
    if (i < p->len && s[i] == '0')
        i++;
    else if (i < p->len && s[i] >= '1' && s[i] <= '9')
        while (i < p->len && isdigit((unsigned char)s[i]))
            i++;
    else
        return jp_fail(p, "invalid number");
    if (i < p->len && s[i] == '.') {
        i++;
        if (i >= p->len || !isdigit((unsigned char)s[i]))
            return jp_fail(p, "invalid number");
        while (i < p->len && isdigit((unsigned char)s[i]))
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->len || !isdigit((unsigned char)s[i]))
            return jp_fail(p, "invalid number");
        while (i < p->len && isdigit((unsigned char)s[i]))
            i++;
    }
    v->type = RP_JV_NUM;
    v->len = i - start;
    if (!(v->str = strndup(s + start, v->len)))
        return jp_fail(p, "out of memory");
    p->pos = i;
    return 0;
}

static void jv_clear(struct rp_jv *v);
static int jp_value(struct jp *p, struct rp_jv *v);

/* Append a zeroed child (and for objects, its key). @return it, or NULL. */
static struct rp_jv *jv_push(struct rp_jv *v, char *key)
{
    size_t n = v->n + 1;
    if ((n & (n - 1)) == 0 || v->n == 0) {      /* grow at powers of two */
        size_t cap = n < 4 ? 4 : n * 2;
        struct rp_jv *items = realloc(v->items, cap * sizeof *items);
        if (!items)
            return NULL;
        v->items = items;
        if (v->type == RP_JV_OBJ) {
            char **keys = realloc(v->keys, cap * sizeof *keys);
            if (!keys)
                return NULL;
            v->keys = keys;
        }
    }
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    if (v->type == RP_JV_OBJ)
        v->keys[v->n] = key;
    return &v->items[v->n++];
}

static int jp_container(struct jp *p, struct rp_jv *v, char close)
{
    if (++p->depth > JV_DEPTH_MAX)
        return jp_fail(p, "nested too deeply");
    p->pos++;
    jp_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        p->depth--;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        if (v->type == RP_JV_OBJ) {
            size_t klen;
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return jp_fail(p, "expected a key");
            if (jp_string(p, &key, &klen) != 0)
                return -1;
            jp_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(key);
                return jp_fail(p, "expected ':'");
            }
            p->pos++;
        }
        struct rp_jv *child = jv_push(v, key);
        if (!child) {
            free(key);
            return jp_fail(p, "out of memory");
        }
        if (jp_value(p, child) != 0)
            return -1;
        jp_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            jp_ws(p);
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            p->depth--;
            return 0;
        }
        return jp_fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int jp_value(struct jp *p, struct rp_jv *v)
{
    jp_ws(p);
    if (p->pos >= p->len)
        return jp_fail(p, "unexpected end");
    switch (p->s[p->pos]) {
    case '{': v->type = RP_JV_OBJ; return jp_container(p, v, '}');
    case '[': v->type = RP_JV_ARR; return jp_container(p, v, ']');
    case '"': v->type = RP_JV_STR; return jp_string(p, &v->str, &v->len);
    case 't': v->type = RP_JV_BOOL; v->b = 1; return jp_lit(p, "true");
    case 'f': v->type = RP_JV_BOOL; v->b = 0; return jp_lit(p, "false");
    case 'n': v->type = RP_JV_NULL; return jp_lit(p, "null");
    default: return jp_number(p, v);
    }
}

static void jv_clear(struct rp_jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jv_clear(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void rp_jv_free(struct rp_jv *v)
{
    if (!v)
        return;
    jv_clear(v);
    free(v);
}

struct rp_jv *rp_jv_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct jp p = {.s = text, .len = len, .err = err, .errlen = errlen};
    struct rp_jv *v = calloc(1, sizeof *v);
    if (!v) {
        rp_fail(err, errlen, "out of memory");
        return NULL;
    }
    if (jp_value(&p, v) != 0) {
        rp_jv_free(v);
        return NULL;
    }
    jp_ws(&p);
    if (p.pos != p.len) {
        jp_fail(&p, "text after the value");
        rp_jv_free(v);
        return NULL;
    }
    return v;
}

const struct rp_jv *rp_jv_get(const struct rp_jv *v, const char *key)
{
    if (!v || v->type != RP_JV_OBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return &v->items[i];
    return NULL;
}

const char *rp_jv_str(const struct rp_jv *v)
{
    return v && v->type == RP_JV_STR ? v->str : NULL;
}

long long rp_jv_int(const struct rp_jv *v, long long def)
{
    if (!v || v->type != RP_JV_NUM)
        return def;
    errno = 0;
    char *end;
    long long x = strtoll(v->str, &end, 10);
    return errno || *end ? def : x;
}
