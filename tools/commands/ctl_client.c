/*
 * tools/commands/ctl_client.c — the client half of the control protocol (ctl_client.h).
 *
 * The JSON reader is a plain recursive-descent parser over RFC 8259 with a depth
 * limit; it is used for replies and discovery files, both small. Exchanges use a
 * blocking socket with SO_SNDTIMEO/SO_RCVTIMEO (Linux honours the send timeout in
 * connect, which waits while the server's backlog is full) and an overall deadline.
 */
#include "ringprof/errbuf.h"
#include "ringprof/clock.h"
#include "ctl_client.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define JV_DEPTH_MAX 64

/* ================================================================== JSON == */

struct jp {
    const char *s;
    size_t len, pos;
    int depth;
    char *err;
    size_t errlen;
};

static int jp_fail(struct jp *p, const char *what)
{
    return rp_fail(p->err, p->errlen, "%s at offset %zu", what, p->pos);
}

static void jp_ws(struct jp *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static int jp_lit(struct jp *p, const char *lit)
{
    size_t n = strlen(lit);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n) != 0)
        return jp_fail(p, "invalid literal");
    p->pos += n;
    return 0;
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = (unsigned char)s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        *v = *v * 16 + (unsigned)d;
    }
    return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3F)); return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A string at p->pos (the opening quote). The decoded text is never longer than
 * the escaped one, so one allocation of the source length suffices. */
static int jp_string(struct jp *p, char **out, size_t *outlen)
{
    p->pos++;
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] != '"') {
        if (p->s[p->pos] == '\\')
            p->pos++;
        p->pos++;
    }
    if (p->pos >= p->len)
        return jp_fail(p, "unterminated string");
    size_t end = p->pos;
    char *o = malloc(end - start + 1);
    if (!o)
        return jp_fail(p, "out of memory");
    size_t n = 0;
    for (size_t i = start; i < end; i++) {
        unsigned char c = (unsigned char)p->s[i];
        if (c < 0x20) {
            free(o);
            p->pos = i;
            return jp_fail(p, "control character in string");
        }
        if (c != '\\') {
            o[n++] = (char)c;
            continue;
        }
        char e = p->s[++i];
        switch (e) {
        case '"': case '\\': case '/': o[n++] = e; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (end - i < 5 || hex4(p->s + i + 1, &cp) != 0) {
                free(o);
                p->pos = i;
                return jp_fail(p, "bad \\u escape");
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && end - i >= 7 && p->s[i + 1] == '\\' &&
                p->s[i + 2] == 'u' && hex4(p->s + i + 3, &lo) == 0 &&
                lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD;     /* a lone surrogate */
            }
            n += utf8_put(o + n, cp);
            break;
        }
        default:
            free(o);
            p->pos = i;
            return jp_fail(p, "bad escape in string");
        }
    }
    o[n] = '\0';
    p->pos = end + 1;
    *out = o;
    *outlen = n;
    return 0;
}

static int jp_number(struct jp *p, struct rp_jv *v)
{
    size_t start = p->pos;
    const char *s = p->s;
    size_t i = p->pos;
    if (i < p->len && s[i] == '-')
        i++;
    if (i < p->len && s[i] == '0')
        i++;
    else if (i < p->len && s[i] >= '1' && s[i] <= '9')
        while (i < p->len && isdigit((unsigned char)s[i]))
            i++;
    else
        return jp_fail(p, "invalid number");
    if (i < p->len && s[i] == '.') {
        i++;
        if (i >= p->len || !isdigit((unsigned char)s[i]))
            return jp_fail(p, "invalid number");
        while (i < p->len && isdigit((unsigned char)s[i]))
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->len || !isdigit((unsigned char)s[i]))
            return jp_fail(p, "invalid number");
        while (i < p->len && isdigit((unsigned char)s[i]))
            i++;
    }
    v->type = RP_JV_NUM;
    v->len = i - start;
    if (!(v->str = strndup(s + start, v->len)))
        return jp_fail(p, "out of memory");
    p->pos = i;
    return 0;
}

static void jv_clear(struct rp_jv *v);
static int jp_value(struct jp *p, struct rp_jv *v);

/* Append a zeroed child (and for objects, its key). @return it, or NULL. */
static struct rp_jv *jv_push(struct rp_jv *v, char *key)
{
    size_t n = v->n + 1;
    if ((n & (n - 1)) == 0 || v->n == 0) {      /* grow at powers of two */
        size_t cap = n < 4 ? 4 : n * 2;
        struct rp_jv *items = realloc(v->items, cap * sizeof *items);
        if (!items)
            return NULL;
        v->items = items;
        if (v->type == RP_JV_OBJ) {
            char **keys = realloc(v->keys, cap * sizeof *keys);
            if (!keys)
                return NULL;
            v->keys = keys;
        }
    }
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    if (v->type == RP_JV_OBJ)
        v->keys[v->n] = key;
    return &v->items[v->n++];
}

static int jp_container(struct jp *p, struct rp_jv *v, char close)
{
    if (++p->depth > JV_DEPTH_MAX)
        return jp_fail(p, "nested too deeply");
    p->pos++;
    jp_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        p->depth--;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        if (v->type == RP_JV_OBJ) {
            size_t klen;
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return jp_fail(p, "expected a key");
            if (jp_string(p, &key, &klen) != 0)
                return -1;
            jp_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(key);
                return jp_fail(p, "expected ':'");
            }
            p->pos++;
        }
        struct rp_jv *child = jv_push(v, key);
        if (!child) {
            free(key);
            return jp_fail(p, "out of memory");
        }
        if (jp_value(p, child) != 0)
            return -1;
        jp_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            jp_ws(p);
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            p->depth--;
            return 0;
        }
        return jp_fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int jp_value(struct jp *p, struct rp_jv *v)
{
    jp_ws(p);
    if (p->pos >= p->len)
        return jp_fail(p, "unexpected end");
    switch (p->s[p->pos]) {
    case '{': v->type = RP_JV_OBJ; return jp_container(p, v, '}');
    case '[': v->type = RP_JV_ARR; return jp_container(p, v, ']');
    case '"': v->type = RP_JV_STR; return jp_string(p, &v->str, &v->len);
    case 't': v->type = RP_JV_BOOL; v->b = 1; return jp_lit(p, "true");
    case 'f': v->type = RP_JV_BOOL; v->b = 0; return jp_lit(p, "false");
    case 'n': v->type = RP_JV_NULL; return jp_lit(p, "null");
    default: return jp_number(p, v);
    }
}

static void jv_clear(struct rp_jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jv_clear(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void rp_jv_free(struct rp_jv *v)
{
    if (!v)
        return;
    jv_clear(v);
    free(v);
}

struct rp_jv *rp_jv_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct jp p = {.s = text, .len = len, .err = err, .errlen = errlen};
    struct rp_jv *v = calloc(1, sizeof *v);
    if (!v) {
        rp_fail(err, errlen, "out of memory");
        return NULL;
    }
    if (jp_value(&p, v) != 0) {
        rp_jv_free(v);
        return NULL;
    }
    jp_ws(&p);
    if (p.pos != p.len) {
        jp_fail(&p, "text after the value");
        rp_jv_free(v);
        return NULL;
    }
    return v;
}

const struct rp_jv *rp_jv_get(const struct rp_jv *v, const char *key)
{
    if (!v || v->type != RP_JV_OBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return &v->items[i];
    return NULL;
}

const char *rp_jv_str(const struct rp_jv *v)
{
    return v && v->type == RP_JV_STR ? v->str : NULL;
}

long long rp_jv_int(const struct rp_jv *v, long long def)
{
    if (!v || v->type != RP_JV_NUM)
        return def;
    errno = 0;
    char *end;
    long long x = strtoll(v->str, &end, 10);
    return errno || *end ? def : x;
}

static void print_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(f, "\\u%04x", c);
            else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                     (unsigned char)s[i + 1] <= 0x9f)
                fprintf(f, "\\u%04x", (unsigned char)s[++i]);   /* C1 control */
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}

void rp_print_untrusted(FILE *f, const char *s, int json)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
            fprintf(f, "\\u%04x", *++p);
        else if (*p == 0x7f)
            fputs(json ? "\\u007f" : "\\x7f", f);
        else if (*p < 0x20 && json)
            fputc(*p == '\t' ? '\t' : ' ', f);   /* JSON whitespace, or invalid */
        else if (*p < 0x20)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

static int is_scalar(const struct rp_jv *v)
{
    return v->type != RP_JV_ARR && v->type != RP_JV_OBJ;
}

static void print_value(FILE *f, const struct rp_jv *v, int level)
{
    switch (v->type) {
    case RP_JV_NULL: fputs("null", f); return;
    case RP_JV_BOOL: fputs(v->b ? "true" : "false", f); return;
    case RP_JV_NUM: fputs(v->str, f); return;
    case RP_JV_STR: print_string(f, v->str, v->len); return;
    default: break;
    }
    int obj = v->type == RP_JV_OBJ;
    if (v->n == 0) {
        fputs(obj ? "{}" : "[]", f);
        return;
    }
    int inline_ = !obj;
    for (size_t i = 0; inline_ && i < v->n; i++)
        inline_ = is_scalar(&v->items[i]);
    fputc(obj ? '{' : '[', f);
    for (size_t i = 0; i < v->n; i++) {
        if (i)
            fputs(inline_ ? ", " : ",", f);
        if (!inline_)
            fprintf(f, "\n%*s", 2 * (level + 1), "");
        if (obj) {
            print_string(f, v->keys[i], strlen(v->keys[i]));
            fputs(": ", f);
        }
        print_value(f, &v->items[i], level + 1);
    }
    if (!inline_)
        fprintf(f, "\n%*s", 2 * level, "");
    fputc(obj ? '}' : ']', f);
}

void rp_jv_print(FILE *f, const struct rp_jv *v)
{
    print_value(f, v, 0);
    fputc('\n', f);
}

/* ========================================================= the exchange == */

static void set_timeouts(int fd, int ms)
{
    if (ms < 1)
        ms = 1;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static int connect_error(const char *path, int e, int timeout_ms, char *err, size_t errlen)
{
    struct stat st;
    switch (e) {
    case ENOENT:
        return rp_fail(err, errlen, "no socket at %s", path);
    case ECONNREFUSED:
        return rp_fail(err, errlen, "the socket %s refuses connections (a stale file: its "
                    "agent is gone)", path);
    case EACCES:
    case EPERM:
        if (stat(path, &st) == 0)
            return rp_fail(err, errlen, "permission denied on %s (it belongs to uid %u; run "
                        "ringprof as that user or as root)", path, (unsigned)st.st_uid);
        return rp_fail(err, errlen, "permission denied on %s", path);
    case EAGAIN:
    case ETIMEDOUT:
    case EINPROGRESS:
        return rp_fail(err, errlen, "%s did not accept the connection within %d ms", path,
                    timeout_ms);
    case ENOTSOCK:
        return rp_fail(err, errlen, "%s is not a socket", path);
    default:
        return rp_fail(err, errlen, "cannot connect to %s: %s", path, strerror(e));
    }
}

/* Is the socket `fd` served by the process `expect` names, as its uid? */
static int check_peer(int fd, const char *path, const struct rp_ctl_peer *expect,
                      char *err, size_t errlen)
{
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0)
        return rp_fail(err, errlen, "cannot tell who serves %s (%s); not talking to it",
                    path, strerror(errno));
    if ((long)cr.pid == expect->pid && (long)cr.uid == expect->uid)
        return 0;
    return rp_fail(err, errlen, "%s is served by pid %ld (uid %u), not by pid %ld (uid %ld): "
                "another process put its socket where the agent's should be; not "
                "talking to it", path, (long)cr.pid, (unsigned)cr.uid, expect->pid,
                expect->uid);
}

int rp_ctl_exchange(const char *socket_path, const char *request, int timeout_ms,
                    const struct rp_ctl_peer *expect, char **reply, char *err,
                    size_t errlen)
{
    *reply = NULL;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof sa.sun_path)
        return rp_fail(err, errlen, "socket path too long (at most %zu bytes): %s",
                    sizeof sa.sun_path - 1, socket_path);
    strcpy(sa.sun_path, socket_path);
    uint64_t deadline = rp_mono_ms() + (uint64_t)timeout_ms;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return rp_fail(err, errlen, "cannot create a socket: %s", strerror(errno));
    set_timeouts(fd, timeout_ms);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return connect_error(socket_path, e, timeout_ms, err, errlen);
    }
    if (expect && check_peer(fd, socket_path, expect, err, errlen) != 0) {
        close(fd);
        return -1;
    }

    size_t rlen = strlen(request);
    char *line = malloc(rlen + 2);
    if (!line) {
        close(fd);
        return rp_fail(err, errlen, "out of memory");
    }
    memcpy(line, request, rlen);
    line[rlen++] = '\n';
    size_t off = 0;
    int send_errno = 0;
    while (off < rlen) {
        ssize_t w = send(fd, line + off, rlen - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            send_errno = w < 0 ? errno : EIO;
            break;
        }
        off += (size_t)w;
    }
    free(line);
    if (send_errno == EAGAIN || send_errno == EWOULDBLOCK) {
        close(fd);
        return rp_fail(err, errlen, "%s did not take the request within %d ms",
                    socket_path, timeout_ms);
    }
    /* Other send errors (EPIPE, ECONNRESET): the server may have answered and
     * closed at once (a refused peer gets an error reply); read what it sent. */

    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return rp_fail(err, errlen, "out of memory");
    }
    for (;;) {
        uint64_t now = rp_mono_ms();
        if (now >= deadline) {
            free(buf);
            close(fd);
            return rp_fail(err, errlen, "no reply from %s within %d ms", socket_path,
                        timeout_ms);
        }
        set_timeouts(fd, (int)(deadline - now));
        if (len == cap) {
            if (cap > (size_t)RP_CONTROL_THREADS_REPLY_MAX) {
                free(buf);
                close(fd);
                return rp_fail(err, errlen, "reply from %s is longer than %zu bytes",
                            socket_path, (size_t)RP_CONTROL_THREADS_REPLY_MAX);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                return rp_fail(err, errlen, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = recv(fd, buf + len, cap - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            continue;      /* the deadline check above ends it */
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return rp_fail(err, errlen, "cannot read the reply from %s: %s", socket_path,
                        strerror(e));
        }
        char *nl = n > 0 ? memchr(buf + len, '\n', (size_t)n) : NULL;
        len += (size_t)n;
        if (nl || n == 0) {
            if (nl)
                len = (size_t)(nl - buf);
            break;
        }
    }
    close(fd);
    if (len == 0) {
        free(buf);
        if (send_errno)
            return rp_fail(err, errlen, "cannot send to %s: %s", socket_path,
                        strerror(send_errno));
        return rp_fail(err, errlen, "%s closed the connection without a reply", socket_path);
    }
    if (len == cap) {
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            return rp_fail(err, errlen, "out of memory");
        }
        buf = nb;
    }
    buf[len] = '\0';
    *reply = buf;
    return 0;
}

/* Follow at most this many symlinks in a path, as the kernel does (MAXSYMLINKS). */
#define LINKS_MAX 40

/* Append the component p[0..len) to the resolved path `done` (cap bytes).
 * @return 0, or -1 if it does not fit. */
static int path_push(char *done, size_t cap, const char *p, size_t len)
{
    size_t n = strlen(done);
    if (n + 1 + len >= cap)
        return -1;
    done[n] = '/';
    memcpy(done + n + 1, p, len);
    done[n + 1 + len] = '\0';
    return 0;
}

/* The walk of rp_ctl_socket_path: `todo` is what is left of the path, `done`
 * what has been resolved (no symlink in it; "" is "/"). A symlink of ours or
 * root's is replaced by its target, as the kernel would; one of anybody else's
 * ends the walk with an error. A part that does not exist ends it too, with the
 * rest kept as it is: there is nothing there to connect to. */
static int walk_links(char *todo, size_t todocap, char *done, size_t cap, char *err,
                      size_t errlen)
{
    uid_t me = geteuid();
    int links = 0;
    char *p = todo;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            return 0;
        char *end = strchrnul(p, '/');
        size_t len = (size_t)(end - p);
        if (len == 1 && p[0] == '.') {
            p = end;
            continue;
        }
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            char *up = strrchr(done, '/');
            if (up)
                *up = '\0';
            p = end;
            continue;
        }
        size_t parent = strlen(done);
        if (path_push(done, cap, p, len) != 0)
            return rp_fail(err, errlen, "the path is too long");
        p = end;
        struct stat st;
        if (lstat(done, &st) != 0)
            return *p && path_push(done, cap, p + 1, strlen(p + 1)) != 0
                   ? rp_fail(err, errlen, "the path is too long") : 0;
        if (!S_ISLNK(st.st_mode))
            continue;
        if (st.st_uid != me && st.st_uid != 0)
            return rp_fail(err, errlen, "%s is a symlink of uid %u, who may point it at "
                           "a socket of theirs at any moment (give the socket's own "
                           "path, as `ringprof list` shows it, or the pid)", done,
                           (unsigned)st.st_uid);
        char target[PATH_MAX], rest[2 * PATH_MAX];
        ssize_t n = readlink(done, target, sizeof target - 1);
        if (n < 0)
            return rp_fail(err, errlen, "cannot read the symlink %s: %s", done,
                           strerror(errno));
        target[n] = '\0';
        if (++links > LINKS_MAX)
            return rp_fail(err, errlen, "more than %d symlinks on the way", LINKS_MAX);
        done[target[0] == '/' ? 0 : parent] = '\0';
        if ((size_t)snprintf(rest, sizeof rest, "%s%s", target, p) >= todocap)
            return rp_fail(err, errlen, "the path is too long");
        strcpy(todo, rest);
        p = todo;
    }
}

int rp_ctl_socket_path(const char *given, char *out, size_t cap, char *err,
                       size_t errlen)
{
    char done[PATH_MAX] = "", todo[2 * PATH_MAX], why[PATH_MAX + 256];
    if (given[0] != '/' && !getcwd(done, sizeof done))
        return rp_fail(err, errlen, "%s: cannot resolve a relative path: %s", given,
                       strerror(errno));
    if (!strcmp(done, "/"))
        done[0] = '\0';
    if ((size_t)snprintf(todo, sizeof todo, "%s", given) >= sizeof todo ||
        walk_links(todo, sizeof todo, done, sizeof done, why, sizeof why) != 0)
        return rp_fail(err, errlen, "not connecting to %s: %s", given,
                       strlen(given) >= sizeof todo ? "the path is too long" : why);
    if ((size_t)snprintf(out, cap, "%s", done[0] ? done : "/") >= cap)
        return rp_fail(err, errlen, "not connecting to %s: the path is too long", given);
    return 0;
}

/* ================================================================= /proc == */

int rp_parse_pid(const char *s, long *pid)
{
    if (!s || !*s)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno || v <= 0 || v > INT_MAX)
        return -1;
    *pid = v;
    return 0;
}

int rp_proc_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

long rp_proc_uid(long pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%ld", pid);
    return stat(path, &st) == 0 ? (long)st.st_uid : -1;
}

/* Read a small /proc file into buf. @return bytes read, or -1. */
size_t rp_read_fd(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len < cap - 1) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return len;
}

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = rp_read_fd(fd, buf, cap);
    close(fd);
    return (ssize_t)len;
}

long rp_proc_nspid(long pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    if (read_small(path, buf, sizeof buf) < 0)
        return pid;
    char *p = strstr(buf, "\nNSpid:");
    if (!p)
        return pid;
    p += 7;
    char *eol = strchr(p, '\n');
    if (eol)
        *eol = '\0';
    long last = pid;
    char *tok, *save;
    for (tok = strtok_r(p, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
        last = strtol(tok, NULL, 10);
    return last > 0 ? last : pid;
}

uint64_t rp_proc_start_ticks(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (read_small(path, buf, sizeof buf) <= 0)
        return 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* ====================================================== discovery files == */

int rp_discovery_read(int dfd, const char *dir, const char *name, unsigned uid,
                      struct rp_discovery_info *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    char why[256];
    int fd = rp_trust_openat(dfd, name, (uid_t)uid, RP_DISCOVERY_FILE_MAX, why, sizeof why);
    if (fd < 0)
        return rp_fail(err, errlen, "%s/%s %s; not reading it", dir, name, why);
    char buf[RP_DISCOVERY_FILE_MAX + 1];
    size_t n = rp_read_fd(fd, buf, sizeof buf);
    close(fd);
    char perr[128];
    struct rp_jv *v = rp_jv_parse(buf, n, perr, sizeof perr);
    if (!v)
        return rp_fail(err, errlen, "%s/%s is not a discovery file: %s", dir, name, perr);
    const char *sock = rp_jv_str(rp_jv_get(v, "socket"));
    long long pid = rp_jv_int(rp_jv_get(v, "pid"), -1);
    long long fuid = rp_jv_int(rp_jv_get(v, "uid"), -1);
    if (!sock || pid <= 0 || pid > INT_MAX) {
        rp_jv_free(v);
        return rp_fail(err, errlen, "%s/%s is not a discovery file: no pid or socket", dir,
                    name);
    }
    if (fuid != (long long)uid) {
        rp_jv_free(v);
        return rp_fail(err, errlen, "%s/%s says uid %lld, but lies in the directory of uid "
                    "%u; not reading it", dir, name, fuid, uid);
    }
    snprintf(d->file, sizeof d->file, "%s/%s", dir, name);
    snprintf(d->socket, sizeof d->socket, "%s", sock);
    d->pid = (long)pid;
    d->uid = uid;
    const char *s = rp_jv_str(rp_jv_get(v, "main"));
    snprintf(d->main, sizeof d->main, "%s", s ? s : "");
    s = rp_jv_str(rp_jv_get(v, "start_time"));
    snprintf(d->start_time, sizeof d->start_time, "%s", s ? s : "");
    long long t = rp_jv_int(rp_jv_get(v, "proc_start_ticks"), 0);
    d->proc_start_ticks = t > 0 ? (uint64_t)t : 0;
    rp_jv_free(v);
    return 0;
}

int rp_discovery_stale(const struct rp_discovery_info *d, long host_pid)
{
    if (!rp_proc_alive(host_pid))
        return 1;
    uint64_t now = rp_proc_start_ticks(host_pid);
    return d->proc_start_ticks && now && now != d->proc_start_ticks;
}

/* `path` as the process sees it may not exist in our mount namespace; try it
 * under /proc/PID/root. @return 0 with the usable path in out, or -1. */
static int resolve_in_ns(long pid, const char *path, char *out, size_t cap)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        snprintf(out, cap, "%s", path);
        return 0;
    }
    char alt[PATH_MAX + 64];
    snprintf(alt, sizeof alt, "/proc/%ld/root%s", pid, path);
    if (stat(alt, &st) == 0 && strlen(alt) < cap) {
        snprintf(out, cap, "%s", alt);
        return 0;
    }
    snprintf(out, cap, "%s", path);
    return -1;
}

static int cmp_ulong(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

/* Fallback: a listening Unix socket named "*ringprof*.sock" held by `pid`. The
 * process's socket inodes come from /proc/PID/fd first, then the one listening
 * ringprof socket among them from /proc/PID/net/unix, which lists every socket of
 * the network namespace: a busy host has hundreds of other JVMs' sockets there, so
 * the match must be by inode, never "the first few named like ours".
 * @return 0 with its path in out; 1 with the path it was bound to in out when
 * that file no longer exists (removed: nothing can connect to the socket); -1
 * when there is none. */
static int find_socket_fd(long pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    unsigned long *mine = NULL;
    size_t n = 0, room = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        char fdp[PATH_MAX], target[64];
        snprintf(fdp, sizeof fdp, "%s/%s", path, de->d_name);
        ssize_t len = readlink(fdp, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        unsigned long ino;
        if (sscanf(target, "socket:[%lu]", &ino) != 1)
            continue;
        if (n == room) {
            size_t want = room ? 2 * room : 64;
            unsigned long *grown = realloc(mine, want * sizeof *mine);
            if (!grown)
                break;
            mine = grown;
            room = want;
        }
        mine[n++] = ino;
    }
    closedir(dir);
    if (!n) {
        free(mine);
        return -1;
    }
    qsort(mine, n, sizeof *mine, cmp_ulong);

    snprintf(path, sizeof path, "/proc/%ld/net/unix", pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        free(mine);
        return -1;
    }
    char line[4096];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        unsigned long flags, inode;
        char name[256] = "";
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %255s", &flags, &inode, name) != 3)
            continue;
        size_t len = strlen(name);
        if (!(flags & 0x10000) || len < 6 || strcmp(name + len - 5, ".sock") != 0 ||
            !strstr(name, "ringprof") || !bsearch(&inode, mine, n, sizeof *mine, cmp_ulong))
            continue;
        found = resolve_in_ns(pid, name, out, cap) == 0 ? 0 : 1;
    }
    fclose(f);
    free(mine);
    return found;
}

/* Look for pid's discovery file `name` in the directory `dir`, which must be
 * trusted for `uid`. @return 0 with the socket in sock; 1 if there is no such
 * directory or file (nothing to say); -1 with why. */
static int find_in_dir(long pid, long nspid, long uid, const char *dir, const char *name,
                       char *sock, size_t cap, char *why, size_t whylen)
{
    char trust[256];
    int dfd = rp_trust_opendir(dir, (uid_t)uid, trust, sizeof trust);
    if (dfd < 0) {
        if (errno == ENOENT)
            return 1;
        rp_fail(why, whylen, "the discovery directory %s %s, so its files are not trusted "
             "(remove it; the agent makes it again, mode 0700)", dir, trust);
        return -1;
    }
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        close(dfd);
        return 1;
    }
    struct rp_discovery_info d;
    int rc = rp_discovery_read(dfd, dir, name, (unsigned)uid, &d, why, whylen);
    close(dfd);
    if (rc != 0)
        return -1;
    if (d.pid != pid && d.pid != nspid) {
        snprintf(why, whylen, "%s names pid %ld", d.file, d.pid);
        return -1;
    }
    if (rp_discovery_stale(&d, pid)) {
        snprintf(why, whylen, "%s was left by an earlier process with this pid", d.file);
        return -1;
    }
    if (resolve_in_ns(pid, d.socket, sock, cap) != 0) {
        snprintf(why, whylen, "no socket at %s", d.socket);
        return -1;
    }
    return 0;
}

int rp_ctl_find(long pid, char *sock, size_t cap, struct rp_ctl_peer *peer, char *err,
                size_t errlen)
{
    long uid = rp_proc_uid(pid);
    if (uid < 0 || !rp_proc_alive(pid))
        return rp_fail(err, errlen, "no process with pid %ld", pid);
    peer->pid = pid;
    peer->uid = uid;
    if (errlen)
        err[0] = '\0';
    long nspid = rp_proc_nspid(pid);
    char dirs[2][PATH_MAX], names[2][64];
    snprintf(dirs[0], sizeof dirs[0], RP_DISCOVERY_DIR_FMT, (unsigned)uid);
    snprintf(names[0], sizeof names[0], "%ld" RP_DISCOVERY_SUFFIX, pid);
    snprintf(dirs[1], sizeof dirs[1], "/proc/%ld/root" RP_DISCOVERY_DIR_FMT, pid,
             (unsigned)uid);
    snprintf(names[1], sizeof names[1], "%ld" RP_DISCOVERY_SUFFIX, nspid);
    char why[2 * PATH_MAX + 256] = "";
    for (int i = 0; i < 2; i++) {
        char w[sizeof why];
        int rc = find_in_dir(pid, nspid, uid, dirs[i], names[i], sock, cap, w, sizeof w);
        if (rc == 0)
            return 0;
        if (rc < 0 && !why[0])
            snprintf(why, sizeof why, "%s", w);
    }
    int held = find_socket_fd(pid, sock, cap);
    if (held == 0) {
        /* Found by the process's own descriptors; say what was passed over. */
        if (errlen)
            snprintf(err, errlen, "%s", why);
        return 0;
    }
    if (held == 1)
        return rp_fail(err, errlen, "no ringprof agent reachable in pid %ld: its control "
                       "socket %s has been removed (the process still listens on it, "
                       "but nothing can connect to it until the agent makes it again)",
                       pid, sock);
    if (!why[0])
        snprintf(why, sizeof why, "no discovery file %s/%s, and it holds no ringprof "
                 "control socket", dirs[0], names[0]);
    return rp_fail(err, errlen, "no ringprof agent in pid %ld (%s)", pid, why);
}

/* ------------------------------------------------------- the agent library -- */

int rp_agent_default_path(char *out, size_t cap)
{
    const char *env = getenv("RINGPROF_AGENT");
    if (env && *env) {
        if (strlen(env) >= cap)
            return -1;
        strcpy(out, env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    static const char *const rel[] = {
        "/../src/libringprof.so",      /* build tree: build/tools/ringprof      */
        "/../lib/libringprof.so",      /* installed: PREFIX/bin/ringprof        */
        "/../lib64/libringprof.so",
        "/libringprof.so",
    };
    char cand[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
        if (access(cand, R_OK) == 0 && realpath(cand, out) && strlen(out) < cap)
            return 0;
    }
    /* Debian-style multiarch: PREFIX/lib/<triplet>/libringprof.so */
    snprintf(cand, sizeof cand, "%s/../lib/*/libringprof.so", exe);
    glob_t g;
    int rc = -1;
    if (glob(cand, 0, NULL, &g) == 0) {
        if (g.gl_pathc && realpath(g.gl_pathv[0], out) && strlen(out) < cap)
            rc = 0;
        globfree(&g);
    }
    return rc;
}
