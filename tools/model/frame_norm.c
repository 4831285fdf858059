/*
 * tools/model/frame_norm.c — the string side of frame normalisation (frame_norm.h):
 * hidden-class names without their addresses, and the package of a class. The
 * profile (profile.c) calls these once per distinct method, never per sample.
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
