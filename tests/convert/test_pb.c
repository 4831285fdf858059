/*
 * tests/convert/test_pb.c — the pprof writer's building blocks, byte for byte:
 * the protobuf encoder (tools/outputs/pb.c) against encodings worked out by hand from the
 * protobuf wire-format rules, the gzip stream against zlib's own inflate (one
 * byte at a time and 3 MiB at once, and a write error), the string table
 * (tools/model/strtab.c), and the UTF-8 check (tools/outputs/utf8.h) the writers sanitise
 * names with. The end-to-end checks with go tool pprof are in test_pprof.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../check.h"
#include "pb.h"
#include "strtab.h"
#include "ringprof/utf8.h"

static int bytes_eq(const struct rp_pb *b, const char *hex)
{
    char got[1024] = "";
    for (size_t i = 0; i < b->len && 2 * i + 2 < sizeof got; i++)
        snprintf(got + 2 * i, 3, "%02x", b->p[i]);
    if (strcmp(got, hex)) {
        fprintf(stderr, "  got      %s\n  expected %s\n", got, hex);
        return 0;
    }
    return 1;
}

static void test_varints(void)
{
    struct rp_pb b;
    rp_pb_init(&b);
    rp_pb_varint(&b, 0);
    rp_pb_varint(&b, 1);
    rp_pb_varint(&b, 127);
    rp_pb_varint(&b, 128);
    rp_pb_varint(&b, 300);
    CHECK(bytes_eq(&b, "00017f8001ac02"), "small varints");
    rp_pb_reset(&b);
    rp_pb_varint(&b, UINT64_MAX);
    CHECK(bytes_eq(&b, "ffffffffffffffffff01"), "largest varint is 10 bytes");
    rp_pb_reset(&b);
    /* int64 -1: two's complement, ten bytes (field 2, key 0x10). */
    rp_pb_int64(&b, 2, -1);
    CHECK(bytes_eq(&b, "10ffffffffffffffffff01"), "negative int64");
    rp_pb_reset(&b);
    rp_pb_uint64(&b, 1, 0);            /* proto3: zero is omitted            */
    rp_pb_uint64(&b, 1, 150);          /* the protobuf docs' example: 08 96 01 */
    rp_pb_uint64(&b, 16, 1);           /* field 16 needs a two-byte key       */
    CHECK(bytes_eq(&b, "089601800101"), "varint fields");
    rp_pb_free(&b);
}

static void test_lengths(void)
{
    struct rp_pb b, sub;
    rp_pb_init(&b);
    rp_pb_init(&sub);
    rp_pb_bytes(&b, 6, "", 0);         /* string_table[0] = "" is written     */
    rp_pb_bytes(&b, 6, "testing", 7);  /* 32 07 74 65 73 74 69 6e 67         */
    CHECK(bytes_eq(&b, "3200320774657374696e67"), "strings");
    rp_pb_reset(&b);
    rp_pb_uint64(&sub, 1, 150);
    rp_pb_msg(&b, 3, &sub);            /* the docs' embedded message example   */
    CHECK(bytes_eq(&b, "1a03089601"), "sub-message");
    rp_pb_reset(&b);
    uint64_t v[] = {3, 270, 86942};    /* the docs' packed example            */
    rp_pb_packed(&b, 4, v, 3);
    rp_pb_packed(&b, 5, v, 0);         /* empty: nothing                      */
    CHECK(bytes_eq(&b, "2206038e029ea705"), "packed");
    rp_pb_reset(&b);
    char big[300];
    memset(big, 'x', sizeof big);
    rp_pb_bytes(&b, 1, big, sizeof big);
    CHECK(b.len == 1 + 2 + 300 && b.p[1] == 0xac && b.p[2] == 0x02,
          "a 300-byte field has a two-byte length");
    CHECK(!b.oom, "no allocation failure");
    rp_pb_free(&b);
    rp_pb_free(&sub);
}

/* Inflate a whole gzip file into a malloc'd buffer; *n its length. */
static unsigned char *gunzip(const unsigned char *in, size_t inlen, size_t *n)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK, "inflateInit2");
    size_t cap = 1 << 16, len = 0;
    unsigned char *out = malloc(cap);
    zs.next_in = (unsigned char *)in;
    zs.avail_in = (uInt)inlen;
    int rc;
    do {
        if (len == cap)
            out = realloc(out, cap *= 2);
        REQUIRE(out, "memory");
        zs.next_out = out + len;
        zs.avail_out = (uInt)(cap - len);
        rc = inflate(&zs, Z_NO_FLUSH);
        len = cap - zs.avail_out;
    } while (rc == Z_OK);
    CHECK(rc == Z_STREAM_END, "gzip stream ends properly (rc %d)", rc);
    CHECK(zs.avail_in == 0, "nothing after the gzip trailer");
    inflateEnd(&zs);
    *n = len;
    return out;
}

static void test_gzip(void)
{
    /* Pseudo-random but compressible input, written in uneven pieces. */
    size_t total = 3u << 20;
    unsigned char *data = malloc(total);
    REQUIRE(data, "memory");
    uint32_t s = 12345;
    for (size_t i = 0; i < total; i++) {
        s = s * 1103515245u + 12345u;
        data[i] = (unsigned char)("abcdefgh"[(s >> 16) & 7]);
    }
    char *buf = NULL;
    size_t buflen = 0;
    FILE *f = open_memstream(&buf, &buflen);
    REQUIRE(f, "open_memstream");
    struct rp_gz *z = rp_gz_open(f, 6);
    REQUIRE(z, "rp_gz_open");
    size_t off = 0;
    for (size_t piece = 1; off < total; piece = piece * 3 + 1) {
        size_t n = piece > total - off ? total - off : piece;
        rp_gz_write(z, data + off, n);
        off += n;
    }
    CHECK(rp_gz_bytes_in(z) == total, "bytes in counted");
    CHECK(rp_gz_finish(z) == 0, "finish");
    fclose(f);
    size_t n;
    unsigned char *back = gunzip((unsigned char *)buf, buflen, &n);
    CHECK(n == total && !memcmp(back, data, total), "round trip of %zu bytes", total);
    CHECK(buflen < total / 2, "compressed (%zu of %zu bytes)", buflen, total);
    free(back);
    free(buf);

    /* An empty stream is still a valid gzip file. */
    f = open_memstream(&buf, &buflen);
    z = rp_gz_open(f, 6);
    CHECK(rp_gz_finish(z) == 0, "finish empty");
    fclose(f);
    back = gunzip((unsigned char *)buf, buflen, &n);
    CHECK(n == 0, "empty round trip");
    free(back);
    free(buf);

    /* A write error is reported by rp_gz_finish, with errno. */
    f = fopen("/dev/full", "w");
    if (f) {
        z = rp_gz_open(f, 6);
        rp_gz_write(z, data, total);
        errno = 0;
        CHECK(rp_gz_finish(z) == -1 && errno == ENOSPC, "ENOSPC reported (errno %d)",
              errno);
        fclose(f);
    }

    /* A buffer that ran out of memory poisons the stream. */
    f = open_memstream(&buf, &buflen);
    z = rp_gz_open(f, 6);
    struct rp_pb bad = {.oom = 1};
    rp_gz_write_pb(z, &bad);
    CHECK(rp_gz_finish(z) == -1 && errno == ENOMEM, "oom buffer reported");
    fclose(f);
    free(buf);
    free(data);
}

static void test_strtab(void)
{
    struct rp_strtab t;
    rp_strtab_init(&t);
    CHECK(rp_strtab_cstr(&t, "") == 0, "first string is 0");
    CHECK(rp_strtab_cstr(&t, NULL) == 0, "NULL is the empty string");
    CHECK(rp_strtab_add(&t, "a\0b", 3) == 1, "strings with NUL");
    CHECK(rp_strtab_add(&t, "a\0c", 3) == 2, "differ after the NUL");
    CHECK(rp_strtab_cstr(&t, "a") == 3, "prefix is a different string");
    char name[32];
    for (int i = 0; i < 10000; i++) {   /* many rehashes */
        snprintf(name, sizeof name, "m%d", i);
        CHECK(rp_strtab_cstr(&t, name) == (uint32_t)(4 + i), "new %s", name);
    }
    for (int i = 0; i < 10000; i += 997) {
        snprintf(name, sizeof name, "m%d", i);
        CHECK(rp_strtab_cstr(&t, name) == (uint32_t)(4 + i), "found again %s", name);
    }
    CHECK(t.n == 10004 && t.len[1] == 3 && !memcmp(t.s[1], "a\0b", 3), "contents");
    rp_strtab_free(&t);
}

static void test_utf8(void)
{
    static const struct {
        const char *s;
        size_t len;         /* expected sequence length, 0: invalid */
        uint32_t cp;
    } cases[] = {
        {"A", 1, 'A'},
        {"\xc3\xa9", 2, 0xe9},
        {"\xe2\x82\xac", 3, 0x20ac},
        {"\xf0\x9f\x94\xa5", 4, 0x1f525},
        {"\x80", 0, 0},                 /* stray continuation             */
        {"\xc0\xaf", 0, 0},             /* overlong '/'                   */
        {"\xed\xa0\x80", 0, 0},         /* surrogate (modified UTF-8's)   */
        {"\xf4\x90\x80\x80", 0, 0},     /* above U+10FFFF                 */
        {"\xe2\x82", 0, 0},             /* truncated                      */
        {"\xff", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t cp = 0;
        const unsigned char *s = (const unsigned char *)cases[i].s;
        size_t n = rp_utf8_seq(s, strlen(cases[i].s), &cp);
        CHECK(n == cases[i].len && (!n || cp == cases[i].cp), "case %zu: len %zu cp %x",
              i, n, (unsigned)cp);
    }
}

/* OTLP's additions: fixed64 times and strings made valid UTF-8. */
static void test_fixed_and_strings(void)
{
    struct rp_pb b;
    rp_pb_init(&b);
    rp_pb_fixed64(&b, 3, 0);                       /* zero is omitted          */
    rp_pb_fixed64(&b, 3, 0x0102030405060708ull);   /* key 3 << 3 | 1 = 0x19    */
    CHECK(bytes_eq(&b, "190807060504030201"), "fixed64 little-endian");
    rp_pb_reset(&b);
    rp_pb_string(&b, 5, "", 0);                    /* present even if empty    */
    rp_pb_string(&b, 5, "h\xc3\xa9", 3);            /* valid: as it is          */
    CHECK(bytes_eq(&b, "2a002a0368c3a9"), "valid strings kept");
    rp_pb_reset(&b);
    /* a stray continuation byte and a truncated sequence: U+FFFD each */
    rp_pb_string(&b, 1, "a\x80" "b\xe2\x82", 5);
    CHECK(bytes_eq(&b, "0a0b61efbfbd62efbfbdefbfbd"), "invalid bytes become U+FFFD");
    rp_pb_free(&b);
}

int main(void)
{
    test_fixed_and_strings();
    test_varints();
    test_lengths();
    test_gzip();
    test_strtab();
    test_utf8();
    return check_exit("pb");
}
