/*
 * tests/fuzz/fuzz_options.c — the agent's option parser (recorder/options.c).
 *
 * The input is the option string after "-agentpath:libringprof.so=" (any bytes;
 * the JVM hands the agent a C string, so the input is cut at its first NUL). The
 * parser must accept it into values that docs/options.md allows, or refuse it
 * with one message that starts "ringprof: ", fits the buffer and is terminated.
 * An accepted string must parse the same way again (no hidden state), and a
 * refusal must fit in a buffer of any size without overrunning it.
 */
#include <string.h>

#include "ringprof/options.h"
#include "fuzz_common.h"

#define MS 1000000ull
#define S  1000000000ull

static int pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* The "accepts" column of docs/options.md. */
static void check_values(const struct rp_options *o)
{
    FUZZ_CHECK(memchr(o->dir, 0, sizeof o->dir) && memchr(o->ctl, 0, sizeof o->ctl) &&
               memchr(o->raw, 0, sizeof o->raw), "a path or raw not terminated");
    FUZZ_CHECK(o->interval_ns >= 100000 && o->interval_ns <= 10 * S, "interval %llu",
               (unsigned long long)o->interval_ns);
    FUZZ_CHECK(o->engine == RP_ENGINE_AUTO || o->engine == RP_ENGINE_ASYNC ||
               o->engine == RP_ENGINE_JVMTI, "engine %d", (int)o->engine);
    FUZZ_CHECK(o->depth >= 1 && o->depth <= 8192, "depth %u", o->depth);
    FUZZ_CHECK(o->native == 0 || o->native == 1, "native %d", o->native);
    FUZZ_CHECK(o->flush_ns >= 10 * MS && o->flush_ns <= 3600 * S, "flush %llu",
               (unsigned long long)o->flush_ns);
    FUZZ_CHECK(o->maxsize == 0 || o->maxsize >= (1u << 20), "maxsize %llu",
               (unsigned long long)o->maxsize);
    FUZZ_CHECK(o->maxage_ns == 0 || o->maxage_ns >= 60 * S, "maxage %llu",
               (unsigned long long)o->maxage_ns);
    FUZZ_CHECK(o->chunksize >= (64u << 10) && o->chunksize <= (1u << 30) &&
               (o->maxsize == 0 || o->chunksize <= o->maxsize), "chunksize %llu",
               (unsigned long long)o->chunksize);
    FUZZ_CHECK(o->chunktime_ns >= S && o->chunktime_ns <= 7 * 86400 * S, "chunktime %llu",
               (unsigned long long)o->chunktime_ns);
    FUZZ_CHECK(pow2(o->ring_bytes) && o->ring_bytes >= (4u << 10) &&
               o->ring_bytes <= (64u << 20), "ring %llu",
               (unsigned long long)o->ring_bytes);
    FUZZ_CHECK(o->signal >= 1 && o->signal < 65, "signal %d", o->signal);
    FUZZ_CHECK(o->alloc_bytes == 0 || (o->alloc_bytes >= 1024 && o->alloc_bytes <= (1u << 30)),
               "alloc %llu", (unsigned long long)o->alloc_bytes);
    FUZZ_CHECK(o->live == 0 || o->live == 1, "live %d", o->live);
    FUZZ_CHECK(o->live_max >= 1 && o->live_max <= (1u << 24), "livemax %llu",
               (unsigned long long)o->live_max);
    FUZZ_CHECK(o->alloc_rate == 0 || (o->alloc_rate >= 10 && o->alloc_rate <= 1000000),
               "allocrate %llu", (unsigned long long)o->alloc_rate);
    FUZZ_CHECK(o->ctl_off == 0 || o->ctl_off == 1, "ctl_off %d", o->ctl_off);
    size_t rn = strnlen(o->recording, sizeof o->recording);
    FUZZ_CHECK(rn < sizeof o->recording &&
               strspn(o->recording, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789._-") == rn, "recording '%.80s'", o->recording);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rp_options o, o2;
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    char err[512], err2[512];
    memset(err, 'x', sizeof err);
    int rc = rp_options_parse(s, &o, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == 0) {
        check_values(&o);
        FUZZ_CHECK(rp_options_parse(s, &o2, err2, sizeof err2) == 0 &&
                   !memcmp(&o, &o2, sizeof o), "a second parse differs");
    } else {
        FUZZ_CHECK(memchr(err, 0, sizeof err), "err not terminated");
        FUZZ_CHECK(!strncmp(err, "ringprof: ", 10) && err[10], "err '%s'", err);
        /* Cut short, and still terminated: shorter than the prefix, just after
         * it, and mid-sentence. */
        static const size_t cuts[] = {1, 2, 11, 40};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            size_t n = cuts[i];
            char small[41];
            memset(small, 'x', sizeof small);
            rp_options_parse(s, &o2, small, n);
            FUZZ_CHECK(memchr(small, 0, n) && small[n] == 'x', "err of %zu bytes", n);
        }
    }
    free(s);
    return 0;
}
