/*
 * tests/test_options.c — the agent's option parser, table-driven.
 *
 * Good strings must set exactly the fields they name; every bad string must be
 * refused with one line that names the offending option (or value) and says what
 * is accepted. argv[1], if given, is docs/options.md: every option of the table
 * must be documented there.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "ringprof/labels.h"
#include "ringprof/options.h"
#include "ringprof/units.h"

static void test_defaults(void)
{
    struct rp_options o;
    char err[256];
    CHECK(rp_options_parse(NULL, &o, err, sizeof err) == 0, "NULL is all defaults");
    CHECK(o.interval_ns == 10000000 && o.depth == 1024 && o.native == 1 &&
          o.flush_ns == 1000000000ull && o.engine == RP_ENGINE_AUTO &&
          o.ring_bytes == 65536 && o.signal == SIGPROF && o.dir[0] == '\0' &&
          o.alloc_bytes == 524288 && o.live == 0 && o.live_max == 65536 &&
          o.alloc_rate == 0 && o.timer == RP_TIMER_AUTO && o.vthreads == RP_VTHREADS_ON,
          "defaults as documented");
    CHECK(rp_options_parse("", &o, err, sizeof err) == 0, "empty is all defaults");
}

static void test_good(void)
{
    struct rp_options o;
    char err[256];
    int rc = rp_options_parse("interval=1ms,engine=jvmti,depth=64,native=off,flush=250ms,"
                              "dir=/tmp/x y,maxsize=5m,maxage=2h,chunksize=1m,"
                              "chunktime=30s,ring=16k,signal=SIGVTALRM", &o, err, sizeof err);
    CHECK(rc == 0, "all options at once: %s", err);
    CHECK(o.interval_ns == 1000000, "interval %llu", (unsigned long long)o.interval_ns);
    CHECK(o.engine == RP_ENGINE_JVMTI, "engine");
    CHECK(o.depth == 64, "depth");
    CHECK(o.native == 0, "native");
    CHECK(o.flush_ns == 250000000, "flush");
    CHECK(!strcmp(o.dir, "/tmp/x y"), "dir '%s'", o.dir);
    CHECK(o.maxsize == 5u << 20, "maxsize");
    CHECK(o.maxage_ns == 7200ull * 1000000000ull, "maxage");
    CHECK(o.chunksize == 1u << 20, "chunksize");
    CHECK(o.chunktime_ns == 30ull * 1000000000ull, "chunktime");
    CHECK(o.ring_bytes == 16384, "ring");
    CHECK(o.signal == SIGVTALRM, "signal");
    CHECK(!strcmp(o.raw, "interval=1ms,engine=jvmti,depth=64,native=off,flush=250ms,"
                         "dir=/tmp/x y,maxsize=5m,maxage=2h,chunksize=1m,chunktime=30s,"
                         "ring=16k,signal=SIGVTALRM"), "raw kept");

    static const struct { const char *s; uint64_t ns; } durs[] = {
        {"interval=500us", 500000}, {"interval=100us", 100000}, {"interval=10s", 10000000000ull},
        {"interval=2500000ns", 2500000}, {"flush=1m", 60000000000ull}, {"flush=1min", 60000000000ull},
    };
    for (size_t i = 0; i < sizeof durs / sizeof durs[0]; i++) {
        CHECK(rp_options_parse(durs[i].s, &o, err, sizeof err) == 0, "%s: %s", durs[i].s, err);
        uint64_t got = !strncmp(durs[i].s, "flush", 5) ? o.flush_ns : o.interval_ns;
        CHECK(got == durs[i].ns, "%s gave %llu", durs[i].s, (unsigned long long)got);
    }
    CHECK(rp_options_parse("maxsize=off,maxage=off", &o, err, sizeof err) == 0 &&
          o.maxsize == 0 && o.maxage_ns == 0, "off disables retention limits: %s", err);
    CHECK(rp_options_parse("signal=RTMIN+3", &o, err, sizeof err) == 0 &&
          o.signal == SIGRTMIN + 3, "real-time signal: %s", err);
    CHECK(rp_options_parse("timer=perf", &o, err, sizeof err) == 0 &&
          o.timer == RP_TIMER_PERF, "timer=perf: %s", err);
    CHECK(rp_options_parse("timer=posix", &o, err, sizeof err) == 0 &&
          o.timer == RP_TIMER_POSIX, "timer=posix: %s", err);
    CHECK(rp_options_parse("timer=auto", &o, err, sizeof err) == 0 &&
          o.timer == RP_TIMER_AUTO, "timer=auto: %s", err);
    CHECK(rp_options_parse("vthreads=mount", &o, err, sizeof err) == 0 &&
          o.vthreads == RP_VTHREADS_MOUNT, "vthreads=mount: %s", err);
    CHECK(rp_options_parse("vthreads=off", &o, err, sizeof err) == 0 &&
          o.vthreads == RP_VTHREADS_OFF, "vthreads=off: %s", err);
    CHECK(rp_options_parse("vthreads=on", &o, err, sizeof err) == 0 &&
          o.vthreads == RP_VTHREADS_ON, "vthreads=on: %s", err);
    CHECK(rp_options_parse("signal=27", &o, err, sizeof err) == 0 && o.signal == 27,
          "numeric SIGPROF: %s", err);
    CHECK(rp_options_parse("help", &o, err, sizeof err) == 0 && o.help == 1, "help");
    CHECK(rp_options_parse("ctl=/run/rp.sock", &o, err, sizeof err) == 0 &&
          !strcmp(o.ctl, "/run/rp.sock") && !o.ctl_off, "ctl path: %s", err);
    CHECK(rp_options_parse("ctl=off", &o, err, sizeof err) == 0 && o.ctl_off == 1 &&
          o.ctl[0] == '\0', "ctl=off: %s", err);
    CHECK(rp_options_parse("recording=rec-0f3A.b_c", &o, err, sizeof err) == 0 &&
          !strcmp(o.recording, "rec-0f3A.b_c"), "recording id: %s", err);
    CHECK(rp_options_parse("recording=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                           &o, err, sizeof err) == 0 && strlen(o.recording) == 64,
          "a recording id of 64 characters: %s", err);
    CHECK(rp_options_parse("interval=1ms", &o, err, sizeof err) == 0 && !o.recording[0],
          "no recording id by default");
    CHECK(rp_options_parse("depth=2048,ring=64k", &o, err, sizeof err) == 0,
          "depth 2048 fits a 64k ring: %s", err);
    CHECK(rp_options_parse("alloc=64k,live=on,livemax=1000", &o, err, sizeof err) == 0 &&
          o.alloc_bytes == 65536 && o.live == 1 && o.live_max == 1000,
          "alloc, live, livemax: %s", err);
    CHECK(rp_options_parse("alloc=off", &o, err, sizeof err) == 0 && o.alloc_bytes == 0,
          "alloc=off: %s", err);
    CHECK(rp_options_parse("allocrate=off", &o, err, sizeof err) == 0 && o.alloc_rate == 0,
          "allocrate=off: %s", err);
    CHECK(rp_options_parse("allocrate=50", &o, err, sizeof err) == 0 && o.alloc_rate == 50,
          "allocrate=50: %s", err);
    CHECK(rp_options_parse("alloc=1g,livemax=16777216", &o, err, sizeof err) == 0 &&
          o.alloc_bytes == 1u << 30 && o.live_max == 1u << 24, "upper bounds: %s", err);
    /* service= and labels= (ringprof/labels.h): kept as given for the chunk header;
     * a label's value may hold ':' (only the first splits), '=' and spaces. */
    CHECK(rp_options_parse("service=checkout api,labels=env:prod;team:pay-1;url:http://x=1",
                           &o, err, sizeof err) == 0 &&
          !strcmp(o.service, "checkout api") &&
          !strcmp(o.labels, "env:prod;team:pay-1;url:http://x=1"), "service, labels: %s", err);
    CHECK(rp_options_parse("", &o, err, sizeof err) == 0 && !o.service[0] && !o.labels[0],
          "no service, no labels by default");
    size_t pos = 0;
    struct rp_label l;
    int n = 0;
    const char *want[][2] = {{"env", "prod"}, {"team", "pay-1"}, {"url", "http://x=1"}};
    rp_options_parse("labels=env:prod;team:pay-1;url:http://x=1", &o, err, sizeof err);
    while (rp_labels_next(o.labels, &pos, &l)) {
        CHECK(n < 3 && l.klen == strlen(want[n][0]) && !memcmp(l.key, want[n][0], l.klen) &&
              l.vlen == strlen(want[n][1]) && !memcmp(l.value, want[n][1], l.vlen),
              "label %d read back as the tool reads it", n);
        n++;
    }
    CHECK(n == 3, "three labels read back, not %d", n);
    pos = 0, n = 0;
    while (rp_labels_next("bad;k:v;:x;9a:b;ok.key:v2;z:", &pos, &l))
        n++;
    CHECK(n == 2, "a header's labels that do not parse are skipped (%d read)", n);
}

/* Each bad string, and a word its error must contain. */
static const struct { const char *s, *must, *must2; } bad[] = {
    {"intervl=1ms", "intervl", "did you mean 'interval'"},
    {"frobnicate=1", "frobnicate", "help"},
    {"interval=10", "interval", "accepted"},
    {"interval=fast", "fast", "accepted"},
    {"interval=50us", "interval", "100us"},
    {"interval=11s", "interval", "10s"},
    {"interval=-1ms", "interval", "accepted"},
    {"interval=", "interval", "needs a value"},
    {"interval", "interval", "needs a value"},
    {"engine=perf", "perf", "async, jvmti"},
    {"depth=0", "depth", "1 to 8192"},
    {"depth=9000", "depth", "1 to 8192"},
    {"depth=12x", "depth", "accepted"},
    {"native=maybe", "native", "on, off"},
    {"flush=1ms", "flush", "10ms"},
    {"flush=2h", "flush", "1h"},
    {"maxsize=10", "maxsize", "at least 1m"},
    {"maxsize=5q", "maxsize", "accepted"},
    {"maxage=10s", "maxage", "1min"},
    {"chunksize=1k", "chunksize", "64k"},
    {"chunktime=500ms", "chunktime", "1s"},
    {"ring=3000", "ring", "power of two"},
    {"ring=1k", "ring", "power of two"},
    {"ring=128m", "ring", "power of two"},
    {"ctl=", "ctl", "needs a value"},
    {"ctl=/tmp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock", "ctl", "108"},
    {"signal=SEGV", "signal", "PROF"},
    {"signal=SIGQUIT", "signal", "PROF"},
    {"signal=USR2", "signal", "PROF"},
    {"signal=9", "signal", "PROF"},
    {"signal=RTMIN+999", "signal", "PROF"},
    {"timer=hrtimer", "timer", "auto, perf, posix"},
    {"vthreads=yes", "vthreads", "on, mount, off"},
    {"timer=", "timer", "needs a value"},
    {"interval=1ms,interval=2ms", "interval", "twice"},
    {"interval=1ms,,depth=3", "empty option", "commas"},
    {",interval=1ms", "empty option", "commas"},
    {"interval=1ms,", "empty option", "commas"},
    {"dir=", "dir", "needs a value"},
    {"recording=", "recording", "needs a value"},
    {"recording=a b", "recording", "letters, digits"},
    {"recording=a/b", "recording", "letters, digits"},
    {"recording=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "recording",
     "1 to 64"},
    {"depth=8192,ring=64k", "depth=8192", "ring"},
    {"chunksize=64m,maxsize=16m", "chunksize", "maxsize"},
    {"alloc=512", "alloc", "1k"},
    {"alloc=2g", "alloc", "1g"},
    {"alloc=fast", "alloc", "off"},
    {"live=maybe", "live", "on, off"},
    {"livemax=0", "livemax", "16777216"},
    {"livemax=99999999", "livemax", "16777216"},
    {"livemax=1k", "livemax", "number"},
    {"allocrate=5", "allocrate", "10 to 1000000"},
    {"allocrate=fast", "allocrate", "off"},
    {"service=", "service", "needs a value"},
    {"service=a\tb", "service", "control characters"},
    {"labels=env", "labels", "KEY:VALUE"},
    {"labels=env:prod;env:dev", "labels", "no key twice"},
    {"labels=9env:prod", "labels", "starting with a letter"},
    {"labels=env:", "labels", "KEY:VALUE"},
    {"labels=env:prod;", "labels", "KEY:VALUE"},
    {"labels=env:a\x01b", "labels", "printable"},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct rp_options o;
        char err[256];
        int rc = rp_options_parse(bad[i].s, &o, err, sizeof err);
        CHECK(rc == -1, "'%s' must be refused", bad[i].s);
        CHECK(strstr(err, bad[i].must) != NULL, "'%s': error '%s' lacks '%s'", bad[i].s,
              err, bad[i].must);
        CHECK(strstr(err, bad[i].must2) != NULL, "'%s': error '%s' lacks '%s'", bad[i].s,
              err, bad[i].must2);
        CHECK(!strncmp(err, "ringprof: ", 10) && !strchr(err, '\n'),
              "'%s': one line starting 'ringprof: ': '%s'", bad[i].s, err);
    }
    char longopt[5000];
    memset(longopt, 'a', sizeof longopt - 1);
    longopt[sizeof longopt - 1] = '\0';
    struct rp_options o;
    char err[256];
    CHECK(rp_options_parse(longopt, &o, err, sizeof err) == -1 &&
          strstr(err, "too long (4999 bytes, at most 2047)"),
          "an overlong string is refused: %s", err);
    /* A path at and over its limit (docs/options.md): the error names the option
     * and the limit, and fits the agent's 1024-byte buffer whole. */
    char opt[1200], big[1024];
    for (size_t len = 1022; len <= 1100; len += 1) {
        memcpy(opt, "dir=/", 5);
        memset(opt + 5, 'd', len - 1);
        opt[4 + len] = '\0';
        int rc = rp_options_parse(opt, &o, big, sizeof big);
        if (len <= 1023)
            CHECK(rc == 0 && strlen(o.dir) == len, "dir of %zu bytes is accepted: %s",
                  len, big);
        else
            CHECK(rc == -1 && strstr(big, "dir is too long") &&
                  strstr(big, "at most 1023") && strlen(big) < sizeof big - 1,
                  "dir of %zu bytes: '%.120s'", len, big);
    }
    CHECK(rp_options_parse("ctl=/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &o, big, sizeof big) == -1 &&
          strstr(big, "ctl is too long") && strstr(big, "at most 107"), "ctl: %s", big);
    char tiny[8];
    CHECK(rp_options_parse("bogus=1", &o, tiny, sizeof tiny) == -1 && strlen(tiny) < 8,
          "a small error buffer is respected");
}

static void test_units(void)
{
    uint64_t v;
    CHECK(rp_parse_size("64KB", &v) == 0 && v == 65536, "64KB");
    CHECK(rp_parse_size("1g", &v) == 0 && v == 1u << 30, "1g");
    CHECK(rp_parse_size("99999999999999999999", &v) == -1, "overflow");
    CHECK(rp_parse_size("20000000000g", &v) == -1, "multiplied overflow");
    CHECK(rp_parse_duration("18446744073709551615d", &v) == -1, "duration overflow");
    CHECK(rp_parse_duration("7d", &v) == 0 && v == 7ull * 86400 * 1000000000ull, "7d");
    CHECK(rp_parse_duration(" 1s", &v) == -1, "leading space refused");
    /* One grammar for agent, ctl and tool (ringprof/units.h): a fraction is
     * read exactly and accepted when it names whole ns or bytes, else refused,
     * never rounded or truncated. */
    CHECK(rp_parse_duration("1.5s", &v) == 0 && v == 1500000000ull, "1.5s");
    CHECK(rp_parse_duration("0.1s", &v) == 0 && v == 100000000ull, "0.1s exactly");
    CHECK(rp_parse_duration("2min", &v) == 0 && v == 120000000000ull, "2min");
    CHECK(rp_parse_duration("2m", &v) == 0 && v == 120000000000ull, "m is minutes");
    CHECK(rp_parse_duration("1.5ns", &v) == -1, "a fraction of a ns is refused");
    CHECK(rp_parse_duration("1.000000000000000000001s", &v) == -1, "a tiny fraction too");
    CHECK(rp_parse_duration("1.000000000000000000000s", &v) == 0 && v == 1000000000ull,
          "trailing zeros are whole");
    CHECK(rp_parse_duration("10", &v) == -1, "a bare number is refused");
    CHECK(rp_parse_duration("-1s", &v) == -1 && rp_parse_duration("+1s", &v) == -1,
          "signs refused");
    CHECK(rp_parse_duration("1e3ms", &v) == -1 && rp_parse_duration(".5s", &v) == -1 &&
          rp_parse_duration("1.s", &v) == -1 && rp_parse_duration("1..5s", &v) == -1,
          "exponents and bare points refused");
    CHECK(rp_parse_duration("18446744073709551615ns", &v) == 0 && v == UINT64_MAX, "max");
    CHECK(rp_parse_duration("18446744073709551616ns", &v) == -1, "max + 1");
    CHECK(rp_parse_size("1.5M", &v) == 0 && v == 1572864, "1.5M");
    CHECK(rp_parse_size("512KiB", &v) == 0 && v == 524288, "512KiB");
    CHECK(rp_parse_size("4096bytes", &v) == 0 && v == 4096, "4096bytes");
    CHECK(rp_parse_size("1t", &v) == 0 && v == 1ull << 40, "1t");
    CHECK(rp_parse_size("0.3k", &v) == -1, "a fraction of a byte is refused");
    CHECK(rp_parse_size("1.5", &v) == -1, "1.5 bytes refused");
    CHECK(rp_parse_size("4096", &v) == 0 && v == 4096, "bare bytes");
    CHECK(rp_parse_size("5x", &v) == -1 && rp_parse_size("", &v) == -1 &&
          rp_parse_size("k", &v) == -1 && rp_parse_size("4i", &v) == -1, "garbage refused");
}

struct help_ctx { char text[8192]; size_t n; };
static void collect(void *arg, const char *line)
{
    struct help_ctx *h = arg;
    int k = snprintf(h->text + h->n, sizeof h->text - h->n, "%s\n", line);
    if (k > 0 && h->n + (size_t)k < sizeof h->text)
        h->n += (size_t)k;
}

static void test_help_and_docs(const char *docs)
{
    static const char *keys[] = {"dir", "interval", "engine", "depth", "native", "flush",
                                 "maxsize", "maxage", "chunksize", "chunktime", "ring",
                                 "ctl", "signal", "service", "labels", "recording", "vthreads",
                                 "help"};
    struct help_ctx h = {{0}, 0};
    rp_options_print_help(collect, &h);
    char *doc = NULL;
    if (docs) {
        FILE *f = fopen(docs, "r");
        REQUIRE(f != NULL, "cannot open %s", docs);
        static char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        doc = buf;
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "  %s ", keys[i]);
        CHECK(strstr(h.text, want) != NULL, "help lists '%s'", keys[i]);
        snprintf(want, sizeof want, "`%s", keys[i]);
        if (doc)
            CHECK(strstr(doc, want) != NULL, "docs/options.md documents '%s'", keys[i]);
    }
}

int main(int argc, char **argv)
{
    test_defaults();
    test_good();
    test_bad();
    test_units();
    test_help_and_docs(argc > 1 ? argv[1] : NULL);
    return check_exit("options");
}
