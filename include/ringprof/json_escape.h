/*
 * ringprof/json_escape.h — the one JSON string escaper, shared by the agent's
 * control replies (src/core/json.c) and the tool's JSON, HTML and listing outputs.
 *
 * rp_json_escape writes the body of a JSON string (without the quotes) for the
 * bytes s[0..n), in runs, through `emit`:
 *   - valid UTF-8 is copied; each byte that does not start a valid sequence
 *     (ringprof/utf8.h) becomes U+FFFD, so the result is always valid UTF-8;
 *   - '"' and '\\' are escaped; C0 controls as \b \f \n \r \t or \u00XX;
 *   - with RP_JSON_ESC_CONTROLS also DEL and the C1 controls U+0080..U+009F, for
 *     text that may reach a terminal (a thread name is anyone's to choose);
 *   - with RP_JSON_ESC_HTML also < > & and U+2028/U+2029, so the string is safe
 *     inside an HTML <script> element.
 * Pure apart from `emit`: no allocation, no global state.
 */
#ifndef RINGPROF_JSON_ESCAPE_H
#define RINGPROF_JSON_ESCAPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rp_json_escape_flags {
    RP_JSON_ESC_CONTROLS = 1u << 0,
    RP_JSON_ESC_HTML = 1u << 1,
};

typedef void (*rp_json_emit_fn)(void *ctx, const char *bytes, size_t n);

void rp_json_escape(const char *s, size_t n, unsigned flags, rp_json_emit_fn emit,
                    void *ctx);

#ifdef __cplusplus
}
#endif

#endif
