/*
 * src/core/control_proto.c — parsing one control request line (see control_proto.h).
 *
 * The line is first checked byte by byte (printable ASCII, spaces and tabs only),
 * then split into at most MAX_WORDS words in a local copy, then dispatched on the
 * first word. Each command checks its own arguments. Nothing here touches the
 * agent: the parser only says what was asked, and the server decides what to do.
 */
#include "ringprof/errbuf.h"
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
static const char kinds_list[] = "cpu, alloc, lock, wall";
static const char keys_list[] =
    "interval (a duration from 100us to 10s, e.g. 10ms), "
    "alloc (a size from 1 to 1g bytes, e.g. 512k), "
    "lock (a duration from 1us to 10s, or 0ns, e.g. 10ms), "
    "wall (a duration from 1ms to 10s, e.g. 50ms), "
    "wallthreads (a number from 1 to 65536)";

const char *rp_ctl_cmd_name(enum rp_ctl_cmd cmd)
{
    return (unsigned)cmd < NCMDS ? cmd_names[cmd] : NULL;
}

const char *rp_ctl_kind_name(unsigned kind_bit)
{
    switch (kind_bit) {
    case RP_CTL_KIND_CPU: return "cpu";
    case RP_CTL_KIND_ALLOC: return "alloc";
    case RP_CTL_KIND_LOCK: return "lock";
    case RP_CTL_KIND_WALL: return "wall";
    default: return NULL;
    }
}

const char *rp_ctl_key_name(enum rp_ctl_key key)
{
    switch (key) {
    case RP_CTL_KEY_INTERVAL: return "interval";
    case RP_CTL_KEY_ALLOC: return "alloc";
    case RP_CTL_KEY_LOCK: return "lock";
    case RP_CTL_KEY_WALL: return "wall";
    case RP_CTL_KEY_WALLTHREADS: return "wallthreads";
    default: return NULL;
    }
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
        if (!strcmp(words[i], "cpu"))
            req->kinds |= RP_CTL_KIND_CPU;
        else if (!strcmp(words[i], "alloc"))
            req->kinds |= RP_CTL_KIND_ALLOC;
        else if (!strcmp(words[i], "lock"))
            req->kinds |= RP_CTL_KIND_LOCK;
        else if (!strcmp(words[i], "wall"))
            req->kinds |= RP_CTL_KIND_WALL;
        else if (!strcmp(words[i], "all"))
            req->kinds |= RP_CTL_KIND_ALL;
        else
            return rp_fail(err, errlen, "unknown event kind '%.*s%s': kinds are %s "
                        "(or none, or 'all', for every kind)", Q(words[i]), kinds_list);
    }
    return 0;
}

static int parse_setting(char *word, struct rp_ctl_setting *s, char *err, size_t errlen)
{
    char *eq = strchr(word, '=');
    if (!eq || eq == word)
        return rp_fail(err, errlen, "bad setting '%.*s%s': expected KEY=VALUE, "
                    "e.g. interval=10ms; keys are %s", Q(word), keys_list);
    *eq = '\0';
    const char *key = word, *val = eq + 1;
    if (!strcmp(key, "interval")) {
        s->key = RP_CTL_KEY_INTERVAL;
        if (rp_parse_duration(val, &s->value) != 0 || s->value < RP_CTL_INTERVAL_MIN_NS ||
            s->value > RP_CTL_INTERVAL_MAX_NS)
            return rp_fail(err, errlen, "bad value '%.*s%s' for interval: accepted values "
                        "are a duration from 100us to 10s with a unit (ns, us, ms, s), "
                        "e.g. 10ms, 500us", Q(val));
    } else if (!strcmp(key, "alloc")) {
        s->key = RP_CTL_KEY_ALLOC;
        if (rp_parse_size(val, &s->value) != 0 || s->value < RP_CTL_ALLOC_MIN ||
            s->value > RP_CTL_ALLOC_MAX)
            return rp_fail(err, errlen, "bad value '%.*s%s' for alloc: accepted values "
                        "are a size from 1 to 1g bytes (k, m, g binary), e.g. 512k, "
                        "1m", Q(val));
    } else if (!strcmp(key, "lock")) {
        s->key = RP_CTL_KEY_LOCK;
        if (rp_parse_duration(val, &s->value) != 0 ||
            (s->value && s->value < RP_CTL_LOCK_MIN_NS) || s->value > RP_CTL_LOCK_MAX_NS)
            return rp_fail(err, errlen, "bad value '%.*s%s' for lock: accepted values are a "
                        "duration from 1us to 10s with a unit (ns, us, ms, s), e.g. 10ms, "
                        "or 0ns for every contended entry (stop lock switches it off)",
                        Q(val));
    } else if (!strcmp(key, "wall")) {
        s->key = RP_CTL_KEY_WALL;
        if (rp_parse_duration(val, &s->value) != 0 || s->value < RP_CTL_WALL_MIN_NS ||
            s->value > RP_CTL_WALL_MAX_NS)
            return rp_fail(err, errlen, "bad value '%.*s%s' for wall: accepted values are "
                        "a duration from 1ms to 10s with a unit (ns, us, ms, s), e.g. "
                        "10ms, 50ms (to stop wall-clock sampling: stop wall)", Q(val));
    } else if (!strcmp(key, "wallthreads")) {
        s->key = RP_CTL_KEY_WALLTHREADS;
        char *end;
        unsigned long long v = strtoull(val, &end, 10);
        if (*val < '0' || *val > '9' || *end || v < 1 || v > RP_CTL_WALLTHREADS_MAX)
            return rp_fail(err, errlen, "bad value '%.*s%s' for wallthreads: accepted "
                        "values are a number from 1 to 65536", Q(val));
        s->value = v;
    } else {
        return rp_fail(err, errlen, "unknown setting '%.*s%s': settings are %s", Q(key),
                    keys_list);
    }
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
