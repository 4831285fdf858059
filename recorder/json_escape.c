/*
 * recorder/json_escape.c — JSON string bodies (ringprof/json_escape.h).
 */
#include "ringprof/json_escape.h"

#include <stdint.h>

#include "ringprof/utf8.h"

/* Does the code point `cp` (of a valid sequence) need a \u escape under `flags`? */
static int needs_u_escape(uint32_t cp, unsigned flags)
{
    if (cp < 0x20)
        return 1;
    if ((flags & RP_JSON_ESC_CONTROLS) && (cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)))
        return 1;
    if ((flags & RP_JSON_ESC_HTML) &&
        (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029))
        return 1;
    return 0;
}

void rp_json_escape(const char *str, size_t n, unsigned flags, rp_json_emit_fn emit,
                    void *ctx)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;   /* s[run..i) is copied as it is, in one emit */
    while (i < n) {
        uint32_t cp;
        size_t len = rp_utf8_seq(s + i, n - i, &cp);
        if (len && cp != '"' && cp != '\\' && !needs_u_escape(cp, flags)) {
            i += len;
            continue;
        }
        if (i > run)
            emit(ctx, str + run, i - run);
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t elen = 2;
        if (!len) {
            emit(ctx, RP_UTF8_REPLACEMENT, sizeof RP_UTF8_REPLACEMENT - 1);
            elen = 0;
            len = 1;
        } else if (cp == '"' || cp == '\\') {
            esc[1] = (char)cp;
        } else if (cp == '\b') {
            esc[1] = 'b';
        } else if (cp == '\f') {
            esc[1] = 'f';
        } else if (cp == '\n') {
            esc[1] = 'n';
        } else if (cp == '\r') {
            esc[1] = 'r';
        } else if (cp == '\t') {
            esc[1] = 't';
        } else {
            esc[1] = 'u';
            esc[2] = hex[(cp >> 12) & 15];
            esc[3] = hex[(cp >> 8) & 15];
            esc[4] = hex[(cp >> 4) & 15];
            esc[5] = hex[cp & 15];
            elen = 6;
        }
        if (elen)
            emit(ctx, esc, elen);
        i += len;
        run = i;
    }
    if (i > run)
        emit(ctx, str + run, i - run);
}
