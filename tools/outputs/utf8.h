/*
 * tools/outputs/utf8.h — UTF-8 validation for writers whose formats require valid text
 * (the HTML page's JSON, protobuf "string" fields, which strict decoders reject
 * when they are not UTF-8). Names come from the JVM (modified UTF-8) and from
 * native symbols, so a writer must not assume they are valid.
 */
#ifndef RINGPROF_TOOLS_UTF8_H
#define RINGPROF_TOOLS_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The UTF-8 replacement character U+FFFD, encoded. */
#define RP_UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * rp_utf8_seq: the length (1..4) of the valid UTF-8 sequence at s, which has n > 0
 * bytes left, with its code point in *cp; 0 if the byte at s does not start one
 * (a stray continuation byte, a truncated sequence, an overlong form, a surrogate
 * or a value above U+10FFFF). Pure; safe anywhere.
 */
static inline size_t rp_utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

#endif
