/*
 * src/core/control_proto.h — the control protocol's requests: one text line in, one
 * command struct out (docs/control.md is the prose twin of this file).
 *
 * A request is one line of printable ASCII: a command word, then its arguments,
 * separated by spaces or tabs:
 *
 *   status | flush | rotate | version | threads | help
 *   start [KIND...]          KIND: cpu, alloc, lock, wall; none means every kind
 *   stop [KIND...]
 *   set KEY=VALUE...         KEY: interval (a duration), alloc (a size),
 *                            lock (a duration: the lock-contention threshold),
 *                            wall (a duration), wallthreads (a count)
 *
 * rp_ctl_parse is a pure function: no I/O, no allocation, no global state, so it
 * can be fuzzed alone. Every refusal comes with one sentence that says what was
 * wrong and what is accepted. Values use the agent options' syntax (ringprof/units.h:
 * rp_parse_duration, rp_parse_size), so `set interval=5ms` means what
 * `interval=5ms` means on the command line.
 *
 * Threads: any. Not async-signal-safe (snprintf).
 */
#ifndef RINGPROF_SRC_CONTROL_PROTO_H
#define RINGPROF_SRC_CONTROL_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "ringprof/control.h"   /* the protocol version and size limits */

/* At most this many KEY=VALUE pairs in one `set` (there are only four keys; a
 * repeated key is refused anyway). */
#define RP_CTL_SET_MAX 8

/* The bounds `set` accepts. interval: the same as the agent option `interval`
 * (docs/options.md): under 100 us the timer signals cost more than they tell,
 * over 10 s a profile of minutes has too few samples. alloc: JVMTI's heap
 * sampling interval is a jint, so at most 1 GiB here (a round bound below 2^31);
 * 0 (every allocation) is refused as a production setting. */
#define RP_CTL_INTERVAL_MIN_NS 100000ull
#define RP_CTL_INTERVAL_MAX_NS 10000000000ull
#define RP_CTL_ALLOC_MIN 1ull
#define RP_CTL_ALLOC_MAX (1ull << 30)
/* lock: the same as the agent option `lock` (0, or 1 us to 10 s). */
#define RP_CTL_LOCK_MIN_NS 1000ull
#define RP_CTL_LOCK_MAX_NS 10000000000ull
/* wall and wallthreads: the agent options' bounds (docs/options.md). */
#define RP_CTL_WALL_MIN_NS 1000000ull
#define RP_CTL_WALL_MAX_NS 10000000000ull
#define RP_CTL_WALLTHREADS_MAX 65536ull

enum rp_ctl_cmd {
    RP_CTL_NONE = 0,
    RP_CTL_STATUS,
    RP_CTL_FLUSH,
    RP_CTL_ROTATE,
    RP_CTL_START,
    RP_CTL_STOP,
    RP_CTL_SET,
    RP_CTL_VERSION,
    RP_CTL_THREADS,
    RP_CTL_HELP
};

/* Event kinds, as bits of rp_ctl_request.kinds. */
#define RP_CTL_KIND_CPU   (1u << 0)
#define RP_CTL_KIND_ALLOC (1u << 1)
#define RP_CTL_KIND_LOCK  (1u << 2)
#define RP_CTL_KIND_WALL  (1u << 3)
#define RP_CTL_KIND_ALL   (RP_CTL_KIND_CPU | RP_CTL_KIND_ALLOC | RP_CTL_KIND_LOCK | \
                           RP_CTL_KIND_WALL)

enum rp_ctl_key {
    RP_CTL_KEY_INTERVAL = 1,   /* CPU sampling period, ns                       */
    RP_CTL_KEY_ALLOC,          /* heap sampling interval, bytes                 */
    RP_CTL_KEY_LOCK,           /* lock-contention threshold, ns                 */
    RP_CTL_KEY_WALL,           /* wall-clock sampling interval, ns              */
    RP_CTL_KEY_WALLTHREADS,    /* threads visited per wall tick                 */
    RP_CTL_KEYS                /* one past the last key                         */
};

struct rp_ctl_setting {
    enum rp_ctl_key key;
    uint64_t value;            /* ns for interval, lock and wall, bytes for
                                  alloc, a count for wallthreads                */
    char text[32];             /* the value as written, e.g. "5ms"              */
};

struct rp_ctl_request {
    enum rp_ctl_cmd cmd;
    unsigned kinds;            /* start, stop: RP_CTL_KIND_* bits, never 0      */
    size_t nsettings;          /* set: 1..RP_CTL_SET_MAX                         */
    struct rp_ctl_setting settings[RP_CTL_SET_MAX];
};

/*
 * rp_ctl_parse: parse one request line. `line` holds `len` bytes without the
 * "\n" (a trailing "\r" is ignored, for clients that send CRLF); it need not be
 * NUL-terminated and may contain any bytes. @return 0 with *req filled, or -1 with
 * one sentence in `err` (errlen bytes; always NUL-terminated if errlen > 0) and
 * req->cmd set to the command if the command word itself was understood (so the
 * error reply can name it), else RP_CTL_NONE.
 */
int rp_ctl_parse(const char *line, size_t len, struct rp_ctl_request *req,
                 char *err, size_t errlen);

/* Names as they appear on the wire: "status", "cpu", "interval". NULL for a value
 * outside the enums. rp_ctl_kind_name takes a single bit. */
const char *rp_ctl_cmd_name(enum rp_ctl_cmd cmd);
const char *rp_ctl_kind_name(unsigned kind_bit);
const char *rp_ctl_key_name(enum rp_ctl_key key);
/* A key's member in the reply to `set`, with its unit: "interval_ns". */
const char *rp_ctl_key_reply_name(enum rp_ctl_key key);

#endif
