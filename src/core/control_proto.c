/*
 * src/core/control_proto.c — parsing one control request line (see control_proto.h).
 *
 * The line is first checked byte by byte (printable ASCII, spaces and tabs only),
 * then split into at most MAX_WORDS words in a local copy, then dispatched on the
 * first word. Each command checks its own arguments. Nothing here touches the
 * agent: the parser only says what was asked, and the server decides what to do.
 */
#include "ringprof/errbuf.h"
#include "ringprof/events.h"
#include "core/control_proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringprof/options.h"
#include "ringprof/units.h"

/* More words than any valid request has: "set" plus RP_CTL_SET_MAX pairs. */
#define MAX_WORDS (RP_CTL_SET_MAX + 2)

static const char *const cmd_names[] = {
    [RP_CTL_STATUS] = "status", [RP_CTL_FLUSH] = "flush",   [RP_CTL_ROTATE] = "rotate",
    [RP_CTL_START] = "start",   [RP_CTL_STOP] = "stop",     [RP_CTL_SET] = "set",
    [RP_CTL_VERSION] = "version", [RP_CTL_THREADS] = "threads", [RP_CTL_HELP] = "help",
};
#define NCMDS (sizeof cmd_names / sizeof cmd_names[0])

static const char commands_list[] =
    "status, flush, rotate, start, stop, set, version, threads, help";
/* The kinds `start` and `stop` name (events.h), by control bit. */
static const struct {
    const char *name;
    unsigned bit;
} KINDS[] = {
    {RP_KIND_CPU, RP_CTL_KIND_CPU},
    {RP_KIND_ALLOC, RP_CTL_KIND_ALLOC},
    {RP_KIND_LOCK, RP_CTL_KIND_LOCK},
    {RP_KIND_WALL, RP_CTL_KIND_WALL},
};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])
static const char kinds_list[] = RP_KIND_CPU ", " RP_KIND_ALLOC ", " RP_KIND_LOCK ", "
                                 RP_KIND_WALL;

/* The keys `set` takes: a kind's name for its period or threshold, by enum
 * rp_ctl_key, with their values' syntax and bounds (control_proto.h). */
enum value_syntax { V_DURATION, V_SIZE, V_COUNT };
static const struct setting_rule {
    const char *name;
    const char *reply;               /* its member in the reply to `set`          */
    enum value_syntax syntax;
    uint64_t min, max;
    int zero_too;                    /* 0 is accepted besides min..max            */
    const char *accepted;            /* "accepted values are ..."                 */
} SETTINGS[RP_CTL_KEYS] = {
    [RP_CTL_KEY_INTERVAL] = {"interval", "interval_ns", V_DURATION,
        RP_CTL_INTERVAL_MIN_NS, RP_CTL_INTERVAL_MAX_NS, 0,
        "a duration from 100us to 10s with a unit (ns, us, ms, s), e.g. 10ms, 500us"},
    [RP_CTL_KEY_ALLOC] = {RP_KIND_ALLOC, RP_KIND_ALLOC "_bytes", V_SIZE,
        RP_CTL_ALLOC_MIN, RP_CTL_ALLOC_MAX, 0,
        "a size from 1 to 1g bytes (k, m, g binary), e.g. 512k, 1m"},
    [RP_CTL_KEY_LOCK] = {RP_KIND_LOCK, RP_KIND_LOCK "_ns", V_DURATION,
        RP_CTL_LOCK_MIN_NS, RP_CTL_LOCK_MAX_NS, 1,
        "a duration from 1us to 10s with a unit (ns, us, ms, s), e.g. 10ms, or 0ns for "
        "every contended entry (stop " RP_KIND_LOCK " switches it off)"},
    [RP_CTL_KEY_WALL] = {RP_KIND_WALL, RP_KIND_WALL "_ns", V_DURATION,
        RP_CTL_WALL_MIN_NS, RP_CTL_WALL_MAX_NS, 0,
        "a duration from 1ms to 10s with a unit (ns, us, ms, s), e.g. 10ms, 50ms (to stop "
        "wall-clock sampling: stop " RP_KIND_WALL ")"},
    [RP_CTL_KEY_WALLTHREADS] = {RP_KIND_WALL "threads", RP_KIND_WALL "threads", V_COUNT,
        1, RP_CTL_WALLTHREADS_MAX, 0,
        "a number from 1 to 65536"},
};
#define NSETTINGS (sizeof SETTINGS / sizeof SETTINGS[0])
static const char keys_list[] =
    "interval (a duration from 100us to 10s, e.g. 10ms), "
    RP_KIND_ALLOC " (a size from 1 to 1g bytes, e.g. 512k), "
    RP_KIND_LOCK " (a duration from 1us to 10s, or 0ns, e.g. 10ms), "
    RP_KIND_WALL " (a duration from 1ms to 10s, e.g. 50ms), "
    RP_KIND_WALL "threads (a number from 1 to 65536)";

const char *rp_ctl_cmd_name(enum rp_ctl_cmd cmd)
{
    return (unsigned)cmd < NCMDS ? cmd_names[cmd] : NULL;
}

const char *rp_ctl_kind_name(unsigned kind_bit)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (KINDS[i].bit == kind_bit)
            return KINDS[i].name;
    return NULL;
}

const char *rp_ctl_key_name(enum rp_ctl_key key)
{
    return key > 0 && (size_t)key < NSETTINGS ? SETTINGS[key].name : NULL;
}

const char *rp_ctl_key_reply_name(enum rp_ctl_key key)
{
    return key > 0 && (size_t)key < NSETTINGS ? SETTINGS[key].reply : NULL;
}

/* Words are quoted in messages; a long one is cut so the sentence stays readable. */
#define Q(w) (int)(strlen(w) > 40 ? 40 : strlen(w)), (w), (strlen(w) > 40 ? "..." : "")

static int parse_kinds(char **words, int n, struct rp_ctl_request *req,
                       char *err, size_t errlen)
{
    if (n == 0) {
        req->kinds = RP_CTL_KIND_ALL;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        unsigned bit = !strcmp(words[i], "all") ? RP_CTL_KIND_ALL : 0;
        for (size_t k = 0; k < NKINDS && !bit; k++)
            if (!strcmp(words[i], KINDS[k].name))
                bit = KINDS[k].bit;
        if (!bit)
            return rp_fail(err, errlen, "unknown event kind '%.*s%s': kinds are %s "
                        "(or none, or 'all', for every kind)", Q(words[i]), kinds_list);
        req->kinds |= bit;
    }
    return 0;
}

/* The value `val` by the rule's syntax into *v. @return 0 if it is one and
 * within the rule's bounds. */
static int parse_value(const struct setting_rule *r, const char *val, uint64_t *v)
{
    if (r->syntax == V_COUNT) {
        char *end;
        *v = strtoull(val, &end, 10);
        if (*val < '0' || *val > '9' || *end)
            return -1;
    } else if ((r->syntax == V_SIZE ? rp_parse_size(val, v) : rp_parse_duration(val, v)) != 0) {
        return -1;
    }
    return (*v >= r->min && *v <= r->max) || (r->zero_too && *v == 0) ? 0 : -1;
}

static int parse_setting(char *word, struct rp_ctl_setting *s, char *err, size_t errlen)
{
    char *eq = strchr(word, '=');
    if (!eq || eq == word)
        return rp_fail(err, errlen, "bad setting '%.*s%s': expected KEY=VALUE, "
                    "e.g. interval=10ms; keys are %s", Q(word), keys_list);
    *eq = '\0';
    const char *key = word, *val = eq + 1;
    size_t k = 1;
    while (k < NSETTINGS && (!SETTINGS[k].name || strcmp(key, SETTINGS[k].name) != 0))
        k++;
    if (k == NSETTINGS)
        return rp_fail(err, errlen, "unknown setting '%.*s%s': settings are %s", Q(key),
                    keys_list);
    s->key = (enum rp_ctl_key)k;
    if (parse_value(&SETTINGS[k], val, &s->value) != 0)
        return rp_fail(err, errlen, "bad value '%.*s%s' for %s: accepted values are %s",
                    Q(val), key, SETTINGS[k].accepted);
    /* Checked above: both parsers accept only digits and a short unit, and the
     * words came from a line of at most RP_CONTROL_REQUEST_MAX bytes. */
    if (strlen(val) >= sizeof s->text)
        return rp_fail(err, errlen, "bad value '%.*s%s' for %s: too long", Q(val), key);
    strcpy(s->text, val);
    return 0;
}

static int parse_set(char **words, int n, struct rp_ctl_request *req,
                     char *err, size_t errlen)
{
    if (n == 0)
        return rp_fail(err, errlen, "'set' needs KEY=VALUE, e.g. set interval=10ms; "
                    "settings are %s", keys_list);
    if (n > RP_CTL_SET_MAX)
        return rp_fail(err, errlen, "'set' takes at most %d settings", RP_CTL_SET_MAX);
    for (int i = 0; i < n; i++) {
        struct rp_ctl_setting *s = &req->settings[i];
        if (parse_setting(words[i], s, err, errlen) != 0)
            return -1;
        for (int k = 0; k < i; k++)
            if (req->settings[k].key == s->key)
                return rp_fail(err, errlen, "setting '%s' given twice",
                            rp_ctl_key_name(s->key));
    }
    req->nsettings = (size_t)n;
    return 0;
}

/* Split `buf` in place at spaces and tabs. @return the word count, or -1 if
 * there are more than `max`. */
static int split(char *buf, char **words, int max)
{
    int n = 0;
    char *p = buf;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return n;
        if (n == max)
            return -1;
        words[n++] = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
    }
}

int rp_ctl_parse(const char *line, size_t len, struct rp_ctl_request *req,
                 char *err, size_t errlen)
{
    memset(req, 0, sizeof *req);
    if (errlen)
        err[0] = '\0';
    if (len && line[len - 1] == '\r')
        len--;
    if (len >= RP_CONTROL_REQUEST_MAX)
        return rp_fail(err, errlen, "request too long (%zu bytes; at most %d with the "
                    "newline)", len, RP_CONTROL_REQUEST_MAX);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if ((c < 0x20 && c != '\t') || c > 0x7e)
            return rp_fail(err, errlen, "request has a non-text byte 0x%02x at offset %zu: "
                        "a request is one line of printable ASCII", c, i);
    }
    char buf[RP_CONTROL_REQUEST_MAX];
    memcpy(buf, line, len);
    buf[len] = '\0';

    char *words[MAX_WORDS];
    int n = split(buf, words, MAX_WORDS);
    if (n == 0)
        return rp_fail(err, errlen, "empty request: send a command, e.g. 'status'; "
                    "commands are %s", commands_list);
    enum rp_ctl_cmd cmd = RP_CTL_NONE;
    for (size_t i = 1; i < NCMDS; i++)
        if (!strcmp(words[0], cmd_names[i]))
            cmd = (enum rp_ctl_cmd)i;
    if (cmd == RP_CTL_NONE)
        return rp_fail(err, errlen, "unknown command '%.*s%s': commands are %s",
                    Q(words[0]), commands_list);
    req->cmd = cmd;
    if (n < 0)
        return rp_fail(err, errlen, "too many arguments for '%s'", cmd_names[cmd]);

    switch (cmd) {
    case RP_CTL_START:
    case RP_CTL_STOP:
        return parse_kinds(words + 1, n - 1, req, err, errlen);
    case RP_CTL_SET:
        return parse_set(words + 1, n - 1, req, err, errlen);
    default:
        if (n > 1)
            return rp_fail(err, errlen, "'%s' takes no arguments (got '%.*s%s')",
                        cmd_names[cmd], Q(words[1]));
        return 0;
    }
}
