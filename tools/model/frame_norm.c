/*
 * tools/model/frame_norm.c — the string side of frame normalisation (frame_norm.h):
 * hidden-class names without their addresses, the package of a class, and a
 * method descriptor's parameter list. The profile (profile_build.c) calls these once
 * per distinct method, never per sample.
 */
#include "frame_norm.h"

#include <string.h>

#define LAMBDA "$$Lambda"

size_t rp_norm_hidden_class(const char *klass)
{
    size_t n = strlen(klass);
    /* The address: [/.]0x<hex> at the end, or JDK 8's [/]<decimal hash>. */
    size_t i = n;
    while (i > 0 && strchr("0123456789abcdefABCDEF", klass[i - 1]))
        i--;
    size_t d = n;
    while (d > 0 && klass[d - 1] >= '0' && klass[d - 1] <= '9')
        d--;
    if (i < n && i >= 3 && klass[i - 1] == 'x' && klass[i - 2] == '0' &&
        (klass[i - 3] == '/' || klass[i - 3] == '.'))
        n = i - 3;
    else if (d < n && d >= 2 && klass[d - 1] == '/')
        n = d - 1;
    /* The sequence number: $<digits> right after $$Lambda, at the (new) end. */
    i = n;
    while (i > 0 && klass[i - 1] >= '0' && klass[i - 1] <= '9')
        i--;
    size_t ll = strlen(LAMBDA);
    if (i < n && i >= ll + 1 && klass[i - 1] == '$' &&
        !strncmp(klass + i - 1 - ll, LAMBDA, ll))
        n = i - 1;
    return n;
}

size_t rp_norm_package_len(const char *klass)
{
    size_t n = rp_norm_hidden_class(klass);   /* "a.B.0x1f": the '.' of 0x is no package */
    while (n > 0 && klass[n - 1] != '.')
        n--;
    return n ? n - 1 : 0;
}

/* A bounded writer: what does not fit is dropped and remembered. */
struct pbuf {
    char *buf;
    size_t cap, len;
    int cut;
};

static void put(struct pbuf *b, const char *s, size_t n)
{
    if (b->cut || b->len + n + 5 > b->cap) {   /* room kept for "...)" */
        b->cut = 1;
        return;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
}

/* One field type at *d ("[[I", "Ljava/lang/String;", "J"), Java's way; *d is
 * left after it. @return 0, or -1 when *d holds no field type. */
static int field_type(struct pbuf *b, const char **d)
{
    size_t dims = 0;
    while (**d == '[')
        (*d)++, dims++;
    static const char codes[] = "BCDFIJSZ";
    static const char *const names[] = {"byte", "char", "double", "float", "int", "long",
                                        "short", "boolean"};
    const char *c = **d ? strchr(codes, **d) : NULL;
    if (c) {
        put(b, names[c - codes], strlen(names[c - codes]));
        (*d)++;
    } else if (**d == 'L') {
        const char *end = strchr(*d, ';');
        if (!end || end == *d + 1)
            return -1;
        for (const char *x = *d + 1; x < end; x++)
            put(b, *x == '/' ? "." : x, 1);
        *d = end + 1;
    } else {
        return -1;
    }
    while (dims--)
        put(b, "[]", 2);
    return 0;
}

int rp_norm_java_params(const char *desc, char *buf, size_t cap)
{
    struct pbuf b = {buf, cap, 0, 0};
    if (cap < 6 || !desc || desc[0] != '(') {
        if (cap)
            buf[0] = 0;
        return -1;
    }
    put(&b, "(", 1);
    const char *d = desc + 1;
    for (int first = 1; *d != ')'; first = 0) {
        if (!first)
            put(&b, ", ", 2);
        if (field_type(&b, &d) < 0) {
            buf[0] = 0;
            return -1;
        }
    }
    if (b.cut) {
        memcpy(buf + b.len, "...)", 5);
        return (int)b.len + 4;
    }
    buf[b.len] = ')';
    buf[b.len + 1] = 0;
    return (int)b.len + 1;
}

int rp_norm_parse_group(const char *s, enum rp_prof_group *g)
{
    if (!strcmp(s, "method"))
        *g = RP_GROUP_METHOD;
    else if (!strcmp(s, "class"))
        *g = RP_GROUP_CLASS;
    else if (!strcmp(s, "package"))
        *g = RP_GROUP_PACKAGE;
    else
        return -1;
    return 0;
}

const char *rp_norm_group_noun(enum rp_prof_group g)
{
    return g == RP_GROUP_CLASS ? "class" : g == RP_GROUP_PACKAGE ? "package" : "method";
}

const char *rp_norm_group_nouns(enum rp_prof_group g)
{
    return g == RP_GROUP_CLASS ? "classes" : g == RP_GROUP_PACKAGE ? "packages" : "methods";
}
