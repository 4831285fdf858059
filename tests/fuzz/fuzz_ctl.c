/*
 * tests/fuzz/fuzz_ctl.c — the control protocol's request parser (src/core/control_proto.c)
 * and the JSON writer its replies go through (src/core/json.c).
 *
 * The input is one request line, any bytes (the server cuts lines at "\n" and
 * bounds them at RP_CONTROL_REQUEST_MAX; the parser must take anything within
 * that). The parser's promises (control_proto.h) are checked:
 *   - success: a known command; start/stop with kinds, all of them known bits;
 *     set with 1..RP_CTL_SET_MAX settings, each a known key, its value within the
 *     documented bounds, its text NUL-terminated;
 *   - refusal: one sentence in err, NUL-terminated, and req->cmd NONE or known;
 *   - no state: the same line parses the same way twice.
 * Then a reply is built the way src/control/control_reply.c builds one (the error reply with
 * the refusal, which quotes the client's bytes; or the command's members), with
 * the raw request added as a string, and the text must be one line of strict
 * JSON in valid UTF-8 whatever the request held.
 */
#include <string.h>

#include "../../src/core/control_proto.h"
#include "../../src/core/json.h"
#include "fuzz_common.h"

/* ------------------------------------------------- a strict JSON checker -- */

struct jp {
    const unsigned char *p, *e;
};

static int ws(struct jp *j)
{
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\t'))
        j->p++;
    return 1;
}

/* One UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF). */
static int utf8(struct jp *j)
{
    unsigned c = *j->p, n = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
    if (!n || j->e - j->p < n)
        return 0;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (j->p[1] < lo || j->p[1] > hi)
        return 0;
    for (unsigned i = 2; i < n; i++)
        if (j->p[i] < 0x80 || j->p[i] > 0xBF)
            return 0;
    j->p += n;
    return 1;
}

static int string(struct jp *j)
{
    if (j->p >= j->e || *j->p++ != '"')
        return 0;
    while (j->p < j->e && *j->p != '"') {
        unsigned c = *j->p;
        if (c < 0x20)
            return 0;
        if (c >= 0x80) {
            if (!utf8(j))
                return 0;
            continue;
        }
        j->p++;
        if (c != '\\')
            continue;
        if (j->p >= j->e)
            return 0;
        c = *j->p++;
        if (c == 'u') {
            for (int i = 0; i < 4; i++, j->p++)
                if (j->p >= j->e || !strchr("0123456789abcdefABCDEF", *j->p) || !*j->p)
                    return 0;
        } else if (!strchr("\"\\/bfnrt", (int)c) || !c) {
            return 0;
        }
    }
    return j->p < j->e && *j->p++ == '"';
}

static int value(struct jp *j, int depth);

static int members(struct jp *j, int depth, int object)
{
    unsigned char close = object ? '}' : ']';
    j->p++;
    ws(j);
    if (j->p < j->e && *j->p == close) {
        j->p++;
        return 1;
    }
    for (;;) {
        if (object && !(string(j) && ws(j) && j->p < j->e && *j->p++ == ':' && ws(j)))
            return 0;
        if (!value(j, depth + 1))
            return 0;
        ws(j);
        if (j->p >= j->e)
            return 0;
        unsigned char c = *j->p++;
        if (c == close)
            return 1;
        if (c != ',')
            return 0;
        ws(j);
    }
}

static int value(struct jp *j, int depth)
{
    if (j->p >= j->e || depth > 32)
        return 0;
    unsigned char c = *j->p;
    if (c == '{' || c == '[')
        return members(j, depth, c == '{');
    if (c == '"')
        return string(j);
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(j->e - j->p) >= n && !memcmp(j->p, words[i], n)) {
            j->p += n;
            return 1;
        }
    }
    const unsigned char *s = j->p;
    if (*j->p == '-')
        j->p++;
    while (j->p < j->e && *j->p >= '0' && *j->p <= '9')
        j->p++;
    return j->p > s && j->p[-1] != '-';
}

/* ----------------------------------------------------------- the target -- */

static void check_request(const struct rp_ctl_request *q)
{
    FUZZ_CHECK(rp_ctl_cmd_name(q->cmd) && q->cmd != RP_CTL_NONE, "cmd %d", (int)q->cmd);
    if (q->cmd == RP_CTL_START || q->cmd == RP_CTL_STOP)
        FUZZ_CHECK(q->kinds && !(q->kinds & ~RP_CTL_KIND_ALL), "kinds %#x", q->kinds);
    if (q->cmd != RP_CTL_SET)
        return;
    FUZZ_CHECK(q->nsettings >= 1 && q->nsettings <= RP_CTL_SET_MAX, "%zu settings",
               q->nsettings);
    for (size_t i = 0; i < q->nsettings; i++) {
        const struct rp_ctl_setting *s = &q->settings[i];
        FUZZ_CHECK(memchr(s->text, 0, sizeof s->text), "setting text not terminated");
        /* Every key the parser knows, within its bounds (control_proto.h). */
        uint64_t v = s->value, lo = 0, hi = 0;
        switch (s->key) {
        case RP_CTL_KEY_INTERVAL: lo = RP_CTL_INTERVAL_MIN_NS, hi = RP_CTL_INTERVAL_MAX_NS; break;
        case RP_CTL_KEY_ALLOC: lo = RP_CTL_ALLOC_MIN, hi = RP_CTL_ALLOC_MAX; break;
        case RP_CTL_KEY_LOCK: lo = v ? RP_CTL_LOCK_MIN_NS : 0, hi = RP_CTL_LOCK_MAX_NS; break;
        case RP_CTL_KEY_WALL: lo = RP_CTL_WALL_MIN_NS, hi = RP_CTL_WALL_MAX_NS; break;
        case RP_CTL_KEY_WALLTHREADS: lo = 1, hi = RP_CTL_WALLTHREADS_MAX; break;
        default: FUZZ_CHECK(0, "key %d", (int)s->key);
        }
        FUZZ_CHECK(v >= lo && v <= hi, "%s %llu", rp_ctl_key_name(s->key),
                   (unsigned long long)v);
    }
}

static void reply(const struct rp_ctl_request *q, int ok, const char *err,
                  const uint8_t *line, size_t len)
{
    struct rp_json j;
    rp_json_init(&j, 1u << 20);
    rp_json_object_begin(&j);
    rp_json_kv_u64(&j, "protocol", RP_CONTROL_PROTOCOL);
    rp_json_kv_bool(&j, "ok", ok);
    if (q->cmd != RP_CTL_NONE)
        rp_json_kv_string(&j, "command", rp_ctl_cmd_name(q->cmd));
    if (!ok)
        rp_json_kv_string(&j, "error", err);
    if (ok && (q->cmd == RP_CTL_START || q->cmd == RP_CTL_STOP)) {
        rp_json_key(&j, "kinds");
        rp_json_array_begin(&j);
        for (unsigned bit = 1; bit <= RP_CTL_KIND_ALL; bit <<= 1)
            if (q->kinds & bit)
                rp_json_string(&j, rp_ctl_kind_name(bit));
        rp_json_array_end(&j);
    }
    if (ok && q->cmd == RP_CTL_SET) {
        rp_json_key(&j, "settings");
        rp_json_object_begin(&j);
        for (size_t i = 0; i < q->nsettings; i++) {
            rp_json_key(&j, rp_ctl_key_name(q->settings[i].key));
            rp_json_object_begin(&j);
            rp_json_kv_u64(&j, "value", q->settings[i].value);
            rp_json_kv_string(&j, "text", q->settings[i].text);
            rp_json_object_end(&j);
        }
        rp_json_object_end(&j);
    }
    rp_json_key(&j, "request");
    rp_json_string_len(&j, (const char *)line, len);
    rp_json_object_end(&j);
    FUZZ_CHECK(rp_json_error(&j) == RP_JSON_OK && rp_json_depth(&j) == 0,
               "writer error %d, depth %d", (int)rp_json_error(&j), rp_json_depth(&j));
    size_t n = 0;
    const char *text = rp_json_text(&j, &n);
    FUZZ_CHECK(text && strlen(text) == n, "reply text of %zu bytes with a NUL inside", n);
    struct jp p = {(const unsigned char *)text, (const unsigned char *)text + n};
    FUZZ_CHECK(value(&p, 0) && p.p == p.e, "not one line of JSON at byte %zu: %s",
               (size_t)(p.p - (const unsigned char *)text), text);
    rp_json_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > RP_CONTROL_REQUEST_MAX)
        return -1;   /* the server refuses longer lines before parsing: not a corpus input */
    struct rp_ctl_request q, q2;
    char err[512], err2[512];
    memset(&q, 0xA5, sizeof q);   /* nothing may depend on what was there */
    memset(err, 'x', sizeof err);
    int rc = rp_ctl_parse((const char *)data, size, &q, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == 0) {
        check_request(&q);
    } else {
        FUZZ_CHECK(memchr(err, 0, sizeof err) && err[0], "no reason given");
        FUZZ_CHECK(q.cmd == RP_CTL_NONE || rp_ctl_cmd_name(q.cmd), "cmd %d", (int)q.cmd);
    }
    memset(&q2, 0, sizeof q2);
    int rc2 = rp_ctl_parse((const char *)data, size, &q2, err2, sizeof err2);
    int same = rc2 == rc && q2.cmd == q.cmd;
    if (same && rc == 0 && q.cmd == RP_CTL_SET)
        same = q2.nsettings == q.nsettings &&
               !memcmp(q.settings, q2.settings, q.nsettings * sizeof q.settings[0]);
    else if (same && rc == 0 && (q.cmd == RP_CTL_START || q.cmd == RP_CTL_STOP))
        same = q2.kinds == q.kinds;
    else if (same && rc != 0)
        same = !strcmp(err, err2);
    FUZZ_CHECK(same, "a second parse of the same line differs");
    /* A small err buffer is cut, never overrun, and still terminated. */
    char tiny[8];
    if (rp_ctl_parse((const char *)data, size, &q2, tiny, sizeof tiny) != 0)
        FUZZ_CHECK(memchr(tiny, 0, sizeof tiny), "err not terminated in 8 bytes");
    reply(&q, rc == 0, err, data, size);
    return 0;
}
