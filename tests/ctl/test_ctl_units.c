/*
 * tests/ctl/test_ctl_units.c — the control socket's pure parts, alone: the JSON
 * writer (src/core/json.c) and the request parser (src/core/control_proto.c).
 *
 * The writer is checked against exact expected text (escaping, UTF-8 repair,
 * commas, the sticky errors, taking an element back at the reply limit), the parser against every command, every refusal and
 * every byte value at every position of a short line. Also the path rules of
 * src/control/control_discovery.c that need no server: the default socket path and its fallback,
 * and the discovery directory's ownership check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>
#include <sys/stat.h>

#include "../check.h"
#include "../../src/control/control.h"
#include "../../src/core/control_proto.h"
#include "../../src/core/json.h"

static void expect_text(struct rp_json *j, const char *want, const char *what)
{
    size_t len;
    const char *got = rp_json_text(j, &len);
    CHECK(rp_json_error(j) == RP_JSON_OK, "%s: error %d", what, (int)rp_json_error(j));
    CHECK(len == strlen(want) && !strcmp(got, want), "%s:\n  got  %s\n  want %s", what,
          got, want);
}

static void test_json_shapes(void)
{
    struct rp_json j;
    rp_json_init(&j, 4096);
    rp_json_object_begin(&j);
    rp_json_kv_u64(&j, "a", 18446744073709551615ull);
    rp_json_kv_i64(&j, "b", -9223372036854775807ll - 1);
    rp_json_kv_bool(&j, "t", 1);
    rp_json_kv_bool(&j, "f", 0);
    rp_json_key(&j, "n");
    rp_json_null(&j);
    rp_json_kv_double(&j, "d", 0.5);
    rp_json_kv_double(&j, "nan", 0.0 / 0.0);
    rp_json_key(&j, "arr");
    rp_json_array_begin(&j);
    rp_json_u64(&j, 1);
    rp_json_array_begin(&j);
    rp_json_array_end(&j);
    rp_json_object_begin(&j);
    rp_json_object_end(&j);
    rp_json_string(&j, NULL);
    rp_json_array_end(&j);
    rp_json_object_end(&j);
    expect_text(&j, "{\"a\":18446744073709551615,\"b\":-9223372036854775808,\"t\":true,"
                "\"f\":false,\"n\":null,\"d\":0.5,\"nan\":null,\"arr\":[1,[],{},null]}",
                "shapes");
    CHECK(rp_json_depth(&j) == 0, "depth %d", rp_json_depth(&j));

    /* reset keeps the buffer and clears the text and the error */
    rp_json_reset(&j);
    rp_json_u64(&j, 7);
    expect_text(&j, "7", "after reset");
    rp_json_free(&j);
}

static void test_json_escaping(void)
{
    struct rp_json j;
    rp_json_init(&j, 4096);
    /* quote, backslash, every named escape, other controls, DEL passes, and a
     * valid 2-, 3- and 4-byte sequence pass unchanged. */
    const char in[] = "q\"b\\n\nr\rt\tb\bf\f\x01\x1f\x7f" "\xc3\xa9" "\xe2\x82\xac"
                      "\xf0\x9f\x98\x80";
    rp_json_string(&j, in);
    expect_text(&j, "\"q\\\"b\\\\n\\nr\\rt\\tb\\bf\\f\\u0001\\u001f\x7f" "\xc3\xa9"
                "\xe2\x82\xac" "\xf0\x9f\x98\x80\"", "escapes");
    rp_json_free(&j);

    /* Invalid UTF-8: a lone continuation, a truncated sequence at the end, an
     * overlong "/", a surrogate, a value over U+10FFFF, 0xff. Each bad byte is
     * one U+FFFD. */
    static const struct { const char *in; size_t n; const char *want; } bad[] = {
        {"a\x80z", 3, "\"a\xef\xbf\xbdz\""},
        {"a\xe2\x82", 3, "\"a\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xf4\x90\x80\x80", 4,
         "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xff", 1, "\"\xef\xbf\xbd\""},
        {"a\0b", 3, "\"a\\u0000b\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rp_json_init(&j, 4096);
        rp_json_string_len(&j, bad[i].in, bad[i].n);
        char what[32];
        snprintf(what, sizeof what, "bad utf-8 #%zu", i);
        expect_text(&j, bad[i].want, what);
        rp_json_free(&j);
    }

    /* Every single byte value, as a one-byte string: the output is 3..8 bytes,
     * starts and ends with a quote, and contains no raw control byte. */
    for (int c = 0; c < 256; c++) {
        char s = (char)c;
        rp_json_init(&j, 64);
        rp_json_string_len(&j, &s, 1);
        size_t len;
        const char *t = rp_json_text(&j, &len);
        int raw_ctl = 0;
        for (size_t k = 0; k < len; k++)
            raw_ctl |= (unsigned char)t[k] < 0x20;
        CHECK(len >= 3 && t[0] == '"' && t[len - 1] == '"' && !raw_ctl,
              "byte 0x%02x -> %s", c, t);
        rp_json_free(&j);
    }
}

/* rp_json_members: another writer's object spliced into an open object, with
 * the commas right whether members come before, after or not at all; refused
 * where no member may go. */
static void test_json_members(void)
{
    struct rp_json j, part;
    rp_json_init(&j, 4096);
    rp_json_init(&part, 4096);
    rp_json_object_begin(&part);
    rp_json_kv_u64(&part, "a", 1);
    rp_json_key(&part, "b");
    rp_json_array_begin(&part);
    rp_json_array_end(&part);
    rp_json_object_end(&part);
    size_t len;
    const char *text = rp_json_text(&part, &len);
    rp_json_object_begin(&j);
    rp_json_members(&j, text, len);
    rp_json_members(&j, "{}", 2);
    rp_json_kv_bool(&j, "c", 1);
    rp_json_members(&j, text, len);
    rp_json_object_end(&j);
    expect_text(&j, "{\"a\":1,\"b\":[],\"c\":true,\"a\":1,\"b\":[]}", "members");
    rp_json_reset(&j);
    rp_json_array_begin(&j);
    rp_json_members(&j, text, len);
    CHECK(rp_json_error(&j) == RP_JSON_MISUSE, "members into an array: error %d",
          (int)rp_json_error(&j));
    rp_json_reset(&j);
    rp_json_object_begin(&j);
    rp_json_key(&j, "k");
    rp_json_members(&j, text, len);
    CHECK(rp_json_error(&j) == RP_JSON_MISUSE, "members after a key: error %d",
          (int)rp_json_error(&j));
    rp_json_free(&j);
    rp_json_free(&part);
}

/* rp_json_mark and rp_json_rewind, as the thread dump uses them at the real
 * limit (RP_CONTROL_THREADS_REPLY_MAX): elements are added to an array until
 * one passes the writer's max, which is taken back whole, and the text closes
 * as valid JSON with room kept for the members after it; a rewind also drops
 * the nesting an element left open. Then rp_json_take hands the text over. */
static void test_json_rewind(void)
{
    const size_t limit = RP_CONTROL_THREADS_REPLY_MAX, tail = 256, elem = 100000;
    char *big = malloc(elem + 1);
    REQUIRE(big, "no memory");
    memset(big, 'x', elem);
    big[elem] = '\0';
    struct rp_json j;
    rp_json_init(&j, limit - tail);
    rp_json_object_begin(&j);
    rp_json_key(&j, "items");
    rp_json_array_begin(&j);
    size_t n = 0;
    for (;;) {
        struct rp_json_mark m;
        rp_json_mark(&j, &m);
        rp_json_object_begin(&j);           /* left open when the string fails */
        rp_json_kv_string(&j, "s", big);
        rp_json_object_end(&j);
        if (rp_json_error(&j) == RP_JSON_TOO_LONG) {
            rp_json_rewind(&j, &m);
            break;
        }
        n++;
    }
    rp_json_array_end(&j);
    rp_json_set_max(&j, limit);
    rp_json_kv_u64(&j, "omitted", 7);
    rp_json_object_end(&j);
    size_t each = elem + strlen("{\"s\":\"\"},"), head = strlen("{\"items\":[");
    size_t fit = (limit - tail - head + 1) / each;  /* the last element has no comma */
    size_t len;
    const char *text = rp_json_text(&j, &len);
    CHECK(rp_json_error(&j) == RP_JSON_OK && rp_json_depth(&j) == 0,
          "after the rewind: error %d, depth %d", (int)rp_json_error(&j),
          rp_json_depth(&j));
    CHECK(n == fit, "%zu elements of %zu bytes fit in %zu bytes, not %zu", n, each,
          limit - tail, fit);
    CHECK(len <= limit && len > limit - tail - each && strlen(text) == len,
          "text of %zu bytes (limit %zu)", len, limit);
    const char *end = "\"},{\"s\":\"";
    CHECK(len > 20 && !strcmp(text + len - 16, "\"}],\"omitted\":7}") &&
          !strncmp(text, "{\"items\":[{\"s\":\"xx", 16) &&
          strstr(text, end) &&
          (size_t)(strstr(text, end) - text) == head + strlen("{\"s\":\"") + elem,
          "the text's ends: %.20s ... %s", text, len > 30 ? text + len - 30 : text);
    size_t tlen;
    char *taken = rp_json_take(&j, &tlen);
    CHECK(taken && tlen == len && rp_json_text(&j, NULL)[0] == '\0' && j.cap == 0 &&
          rp_json_max(&j) == limit, "take: %zu bytes, writer left with cap %zu",
          tlen, j.cap);
    free(taken);
    CHECK(rp_json_take(&j, &tlen) == NULL && tlen == 0, "take of an empty writer");
    rp_json_free(&j);
    free(big);
}

static void test_json_errors(void)
{
    struct rp_json j;

    /* too long: sticky, and nothing past the limit is written */
    rp_json_init(&j, 10);
    rp_json_array_begin(&j);
    rp_json_string(&j, "0123456789");
    CHECK(rp_json_error(&j) == RP_JSON_TOO_LONG, "error %d", (int)rp_json_error(&j));
    rp_json_array_end(&j);
    CHECK(rp_json_error(&j) == RP_JSON_TOO_LONG, "error is sticky");
    size_t len;
    rp_json_text(&j, &len);
    CHECK(len <= 10, "text of %zu bytes past a max of 10", len);
    rp_json_free(&j);

    /* exactly at the limit is fine */
    rp_json_init(&j, 4);
    rp_json_string(&j, "ab");
    expect_text(&j, "\"ab\"", "exactly max");
    rp_json_free(&j);

    /* misuse: a value without a key, a key in an array, a wrong close, a key
     * without value closed, two top-level values, too deep */
    struct { const char *what; int step; } cases[] = {
        {"value without key", 0}, {"key in array", 1}, {"wrong close", 2},
        {"dangling key", 3}, {"two top values", 4}, {"too deep", 5}, {"close at 0", 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rp_json_init(&j, 4096);
        switch (cases[i].step) {
        case 0: rp_json_object_begin(&j); rp_json_u64(&j, 1); break;
        case 1: rp_json_array_begin(&j); rp_json_key(&j, "k"); break;
        case 2: rp_json_object_begin(&j); rp_json_array_end(&j); break;
        case 3: rp_json_object_begin(&j); rp_json_key(&j, "k"); rp_json_object_end(&j);
                break;
        case 4: rp_json_u64(&j, 1); rp_json_u64(&j, 2); break;
        case 5: for (int d = 0; d <= RP_JSON_DEPTH_MAX; d++) rp_json_array_begin(&j);
                break;
        case 6: rp_json_object_end(&j); break;
        }
        CHECK(rp_json_error(&j) == RP_JSON_MISUSE, "%s: error %d", cases[i].what,
              (int)rp_json_error(&j));
        rp_json_free(&j);
    }
}

/* ------------------------------------------------------------- the parser -- */

static int parse(const char *line, struct rp_ctl_request *req, char *err, size_t errlen)
{
    return rp_ctl_parse(line, strlen(line), req, err, errlen);
}

static void expect_ok(const char *line, enum rp_ctl_cmd cmd, unsigned kinds)
{
    struct rp_ctl_request req;
    char err[512];
    int rc = parse(line, &req, err, sizeof err);
    CHECK(rc == 0 && req.cmd == cmd && req.kinds == kinds,
          "'%s': rc %d cmd %d kinds %u (%s)", line, rc, (int)req.cmd, req.kinds, err);
}

static void expect_err(const char *line, size_t len, enum rp_ctl_cmd cmd,
                       const char *needle)
{
    struct rp_ctl_request req;
    char err[512];
    int rc = rp_ctl_parse(line, len, &req, err, sizeof err);
    CHECK(rc == -1 && req.cmd == cmd && strstr(err, needle),
          "'%.*s': rc %d cmd %d, error '%s' should contain '%s'", (int)len, line, rc,
          (int)req.cmd, err, needle);
}
#define EXPECT_ERR(line, cmd, needle) expect_err(line, strlen(line), cmd, needle)

static void test_parse_commands(void)
{
    expect_ok("status", RP_CTL_STATUS, 0);
    expect_ok("  status\t ", RP_CTL_STATUS, 0);
    expect_ok("status\r", RP_CTL_STATUS, 0);
    expect_ok("flush", RP_CTL_FLUSH, 0);
    expect_ok("rotate", RP_CTL_ROTATE, 0);
    expect_ok("version", RP_CTL_VERSION, 0);
    expect_ok("help", RP_CTL_HELP, 0);
    expect_ok("threads", RP_CTL_THREADS, 0);
    expect_ok("start", RP_CTL_START, RP_CTL_KIND_ALL);
    expect_ok("stop", RP_CTL_STOP, RP_CTL_KIND_ALL);
    expect_ok("start cpu", RP_CTL_START, RP_CTL_KIND_CPU);
    expect_ok("stop alloc", RP_CTL_STOP, RP_CTL_KIND_ALLOC);
    expect_ok("stop alloc cpu", RP_CTL_STOP, RP_CTL_KIND_CPU | RP_CTL_KIND_ALLOC);
    expect_ok("stop alloc cpu lock wall", RP_CTL_STOP, RP_CTL_KIND_ALL);
    expect_ok("stop alloc cpu lock", RP_CTL_STOP,
              RP_CTL_KIND_ALLOC | RP_CTL_KIND_CPU | RP_CTL_KIND_LOCK);
    expect_ok("start lock", RP_CTL_START, RP_CTL_KIND_LOCK);
    expect_ok("start wall", RP_CTL_START, RP_CTL_KIND_WALL);
    expect_ok("start all", RP_CTL_START, RP_CTL_KIND_ALL);
    expect_ok("start cpu cpu", RP_CTL_START, RP_CTL_KIND_CPU);

    struct rp_ctl_request req;
    char err[512];
    CHECK(parse("set interval=5ms", &req, err, sizeof err) == 0 && req.cmd == RP_CTL_SET &&
          req.nsettings == 1 && req.settings[0].key == RP_CTL_KEY_INTERVAL &&
          req.settings[0].value == 5000000 && !strcmp(req.settings[0].text, "5ms"),
          "set interval=5ms: %s", err);
    CHECK(parse("set alloc=512k interval=100us", &req, err, sizeof err) == 0 &&
          req.nsettings == 2 && req.settings[0].key == RP_CTL_KEY_ALLOC &&
          req.settings[0].value == 524288 && req.settings[1].key == RP_CTL_KEY_INTERVAL &&
          req.settings[1].value == 100000, "set alloc interval: %s", err);
    CHECK(parse("set interval=10s alloc=1g", &req, err, sizeof err) == 0 &&
          req.settings[0].value == 10000000000ull && req.settings[1].value == 1u << 30,
          "upper bounds: %s", err);
    CHECK(parse("set lock=2ms", &req, err, sizeof err) == 0 &&
          req.settings[0].key == RP_CTL_KEY_LOCK && req.settings[0].value == 2000000,
          "set lock=2ms: %s", err);
    CHECK(parse("set lock=0ns", &req, err, sizeof err) == 0 && req.settings[0].value == 0,
          "set lock=0ns: %s", err);
    CHECK(parse("set alloc=1", &req, err, sizeof err) == 0 && req.settings[0].value == 1,
          "alloc=1: %s", err);
    CHECK(parse("set wall=50ms wallthreads=200", &req, err, sizeof err) == 0 &&
          req.nsettings == 2 && req.settings[0].key == RP_CTL_KEY_WALL &&
          req.settings[0].value == 50000000 && req.settings[1].key == RP_CTL_KEY_WALLTHREADS &&
          req.settings[1].value == 200, "set wall wallthreads: %s", err);
    CHECK(parse("set wall=1ms wallthreads=65536", &req, err, sizeof err) == 0 &&
          req.settings[0].value == 1000000 && req.settings[1].value == 65536,
          "wall bounds: %s", err);

    CHECK(!strcmp(rp_ctl_cmd_name(RP_CTL_ROTATE), "rotate") &&
          rp_ctl_cmd_name(RP_CTL_NONE) == NULL && rp_ctl_cmd_name((enum rp_ctl_cmd)99) == NULL,
          "command names");
    CHECK(!strcmp(rp_ctl_kind_name(RP_CTL_KIND_ALLOC), "alloc") &&
          rp_ctl_kind_name(RP_CTL_KIND_ALL) == NULL, "kind names");
}

static void test_parse_refusals(void)
{
    EXPECT_ERR("", RP_CTL_NONE, "empty request");
    EXPECT_ERR(" \t ", RP_CTL_NONE, "empty request");
    EXPECT_ERR("\r", RP_CTL_NONE, "empty request");
    EXPECT_ERR("stat", RP_CTL_NONE, "unknown command 'stat': commands are status,");
    EXPECT_ERR("STATUS", RP_CTL_NONE, "unknown command 'STATUS'");
    EXPECT_ERR("status now", RP_CTL_STATUS, "'status' takes no arguments (got 'now')");
    EXPECT_ERR("flush x", RP_CTL_FLUSH, "takes no arguments");
    EXPECT_ERR("version 2", RP_CTL_VERSION, "takes no arguments");
    EXPECT_ERR("threads all", RP_CTL_THREADS, "'threads' takes no arguments");
    EXPECT_ERR("start heap", RP_CTL_START,
               "unknown event kind 'heap': kinds are cpu, alloc, lock, wall");
    EXPECT_ERR("set wall=500us", RP_CTL_SET, "bad value '500us' for wall: accepted values are "
               "a duration from 1ms to 10s");
    EXPECT_ERR("set wall=off", RP_CTL_SET, "to stop wall-clock sampling: stop wall");
    EXPECT_ERR("set wallthreads=0", RP_CTL_SET, "bad value '0' for wallthreads");
    EXPECT_ERR("set wallthreads=65537", RP_CTL_SET, "bad value '65537' for wallthreads");
    EXPECT_ERR("set wallthreads=-1", RP_CTL_SET, "bad value '-1' for wallthreads");
    EXPECT_ERR("set wall=5ms wall=6ms", RP_CTL_SET, "setting 'wall' given twice");
    EXPECT_ERR("stop cpu x", RP_CTL_STOP, "unknown event kind 'x'");
    EXPECT_ERR("set", RP_CTL_SET, "'set' needs KEY=VALUE");
    EXPECT_ERR("set interval", RP_CTL_SET, "bad setting 'interval': expected KEY=VALUE");
    EXPECT_ERR("set =5ms", RP_CTL_SET, "bad setting '=5ms'");
    EXPECT_ERR("set rate=5", RP_CTL_SET, "unknown setting 'rate': settings are interval");
    EXPECT_ERR("set interval=", RP_CTL_SET, "bad value '' for interval");
    EXPECT_ERR("set interval=fast", RP_CTL_SET, "bad value 'fast' for interval");
    EXPECT_ERR("set interval=10", RP_CTL_SET, "bad value '10' for interval");
    EXPECT_ERR("set interval=99us", RP_CTL_SET, "from 100us to 10s");
    EXPECT_ERR("set interval=10001ms", RP_CTL_SET, "bad value '10001ms'");
    EXPECT_ERR("set interval=-5ms", RP_CTL_SET, "bad value '-5ms'");
    EXPECT_ERR("set interval=99999999999999999999s", RP_CTL_SET, "bad value");
    EXPECT_ERR("set alloc=0", RP_CTL_SET, "bad value '0' for alloc");
    EXPECT_ERR("set lock=0", RP_CTL_SET, "bad value '0' for lock");
    EXPECT_ERR("set lock=500ns", RP_CTL_SET, "from 1us to 10s");
    EXPECT_ERR("set lock=11s", RP_CTL_SET, "bad value '11s' for lock");
    EXPECT_ERR("set lock=off", RP_CTL_SET, "stop lock switches it off");
    EXPECT_ERR("set alloc=1025m", RP_CTL_SET, "bad value '1025m' for alloc");
    EXPECT_ERR("set alloc=12q", RP_CTL_SET, "bad value '12q' for alloc");
    EXPECT_ERR("set interval=5ms interval=6ms", RP_CTL_SET, "setting 'interval' given twice");
    EXPECT_ERR("set a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9", RP_CTL_SET,
               "'set' takes at most 8 settings");
    EXPECT_ERR("stop cpu cpu cpu cpu cpu cpu cpu cpu cpu cpu cpu", RP_CTL_STOP,
               "too many arguments for 'stop'");
    EXPECT_ERR("set interval=5ms alloc=0", RP_CTL_SET, "bad value '0' for alloc");
    /* a long word is cut in the message, which stays one readable sentence */
    char longw[300];
    memset(longw, 'x', sizeof longw - 1);
    longw[sizeof longw - 1] = '\0';
    struct rp_ctl_request req;
    char err[512];
    CHECK(parse(longw, &req, err, sizeof err) == -1 && strstr(err, "xxx...'") &&
          strlen(err) < 200, "long word: %s", err);

    /* non-text bytes, anywhere, with the offset named */
    expect_err("stat\0us", 7, RP_CTL_NONE, "non-text byte 0x00 at offset 4");
    expect_err("status\x1b", 7, RP_CTL_NONE, "non-text byte 0x1b at offset 6");
    expect_err("\xff\xfe", 2, RP_CTL_NONE, "non-text byte 0xff at offset 0");
    expect_err("st\ratus", 7, RP_CTL_NONE, "non-text byte 0x0d at offset 2");

    /* length: 4095 bytes is the longest line (the newline makes 4096) */
    char *big = malloc(RP_CONTROL_REQUEST_MAX + 1);
    memset(big, 'a', RP_CONTROL_REQUEST_MAX + 1);
    expect_err(big, RP_CONTROL_REQUEST_MAX - 1, RP_CTL_NONE, "unknown command 'aaaa");
    expect_err(big, RP_CONTROL_REQUEST_MAX, RP_CTL_NONE, "request too long");
    free(big);

    /* errlen 0 and a tiny buffer are safe */
    CHECK(parse("nope", &req, NULL, 0) == -1, "errlen 0");
    char tiny[4];
    CHECK(parse("nope", &req, tiny, sizeof tiny) == -1 && strlen(tiny) == 3, "tiny err");
}

/* Every byte at every position of "set interval=5ms": the parser never crashes,
 * and accepts only what it should (the byte replaced by itself, or by a space or
 * tab where that keeps the words). */
static void test_parse_every_byte(void)
{
    const char base[] = "set interval=5ms";
    size_t n = strlen(base);
    int accepted = 0;
    for (size_t pos = 0; pos < n; pos++) {
        for (int c = 0; c < 256; c++) {
            char line[32];
            memcpy(line, base, n);
            line[pos] = (char)c;
            struct rp_ctl_request req;
            char err[256];
            int rc = rp_ctl_parse(line, n, &req, err, sizeof err);
            if (rc == 0)
                accepted++;
            else
                CHECK(err[0] != '\0', "no message for byte 0x%02x at %zu", c, pos);
        }
    }
    /* Valid: the original byte at each of the 16 positions; a tab for the space
     * after "set"; and the digit 1..9 for the 5, but not 5 (counted) and not 0
     * (0ms is under 100us). Everything else breaks the command, the key, the "=",
     * or makes the value wrong: "5us" and "5ns" are under 100us, "5 s" leaves
     * "interval=5" without a unit, and "5m" (minutes) with anything after it is
     * not a unit or is over 10s. */
    CHECK(accepted == 16 + 1 + 8, "accepted %d variants, expected 25", accepted);
}

static void test_paths(void)
{
    char buf[256], err[512], dir[200];
    long pid = 4242;
    CHECK(rp_control_default_path(buf, sizeof buf, "/var/tmp/rec", pid, err,
                                  sizeof err) == 0 &&
          !strcmp(buf, "/var/tmp/rec/ringprof-4242.sock"), "default path: %s", buf);

    /* a recording directory too deep for sun_path: the private fallback */
    memset(dir, 'd', sizeof dir - 1);
    dir[0] = '/';
    dir[sizeof dir - 1] = '\0';
    char want[64];
    snprintf(want, sizeof want, "/tmp/ringprof-%u/4242.sock", (unsigned)geteuid());
    CHECK(rp_control_default_path(buf, sizeof buf, dir, pid, err, sizeof err) == 0 &&
          !strcmp(buf, want), "fallback path: %s (%s)", buf, err);
    struct stat st;
    *strrchr(want, '/') = '\0';
    CHECK(lstat(want, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700 &&
          st.st_uid == geteuid(), "the fallback directory %s is ours, 0700", want);

    /* the discovery directory must be a real directory of ours */
    char tmpl[] = "/tmp/rp-ctl-units-XXXXXX";
    REQUIRE(mkdtemp(tmpl), "mkdtemp");
    char other[300], link[300], mine[300], path[512];
    snprintf(other, sizeof other, "%s/other", tmpl);
    snprintf(link, sizeof link, "%s/link", tmpl);
    snprintf(mine, sizeof mine, "%s/mine", tmpl);
    struct rp_discovery d = {.socket = "/x/ringprof-1.sock", .main = "Main"};
    if (geteuid() == 0) {
        REQUIRE(mkdir(other, 0700) == 0 && chown(other, 65534, 65534) == 0, "setup");
        CHECK(rp_discovery_write(&d, other, path, sizeof path, err, sizeof err) == -1 &&
              strstr(err, "is not a directory owned by uid 0"),
              "a directory of another uid is refused: %s", err);
    }
    REQUIRE(mkdir(mine, 0755) == 0 && symlink(mine, link) == 0, "setup");
    CHECK(rp_discovery_write(&d, link, path, sizeof path, err, sizeof err) == -1 &&
          strstr(err, "is not a directory owned by uid"),
          "a symlink is refused: %s", err);
    CHECK(rp_discovery_write(&d, mine, path, sizeof path, err, sizeof err) == 0,
          "our own directory is used: %s", err);
    CHECK(lstat(mine, &st) == 0 && (st.st_mode & 0777) == 0700,
          "and narrowed to 0700 (0%o)", (unsigned)(st.st_mode & 0777));
    char want_file[400];
    snprintf(want_file, sizeof want_file, "%s/%ld.json", mine, (long)getpid());
    CHECK(!strcmp(path, want_file) && lstat(path, &st) == 0 &&
          (st.st_mode & 0777) == 0600, "discovery file %s, mode 0600", path);
    rp_discovery_remove(path);
    CHECK(lstat(path, &st) != 0, "rp_discovery_remove removes it");
    rmdir(other);
    unlink(link);
    rmdir(mine);
    rmdir(tmpl);
}

int main(void)
{
    test_json_shapes();
    test_json_escaping();
    test_json_errors();
    test_json_members();
    test_json_rewind();
    test_parse_commands();
    test_parse_refusals();
    test_parse_every_byte();
    test_paths();
    return check_exit("ctl_units");
}
