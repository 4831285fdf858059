/*
 * tools/commands/push_http.c — `ringprof push`'s HTTP client over libcurl, and
 * the secrets (push_http.h).
 */
#include "push_http.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "model/xalloc.h"
#include "ringprof/errbuf.h"

struct rp_http {
    CURL *curl;
    struct rp_http_options o;
    char *bearer, *user, *password;   /* owned copies, wiped at close            */
    char *basic64;                    /* base64 of user:password, as sent        */
    char *body;                       /* the reply being read                    */
    size_t body_len;
    uint64_t sent;                    /* upload bytes of the request in flight   */
    char errbuf[CURL_ERROR_SIZE];
};

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct rp_http *h = arg;
    size_t len = size * n;
    if (h->body_len < RP_HTTP_BODY_MAX) {
        size_t keep = RP_HTTP_BODY_MAX - h->body_len;
        keep = keep < len ? keep : len;
        memcpy(h->body + h->body_len, data, keep);
        h->body_len += keep;
        h->body[h->body_len] = '\0';
    }
    return len;   /* the rest is read and dropped, not an error */
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal;
    struct rp_http *h = arg;
    h->sent = (uint64_t)ulnow;
    return h->o.stop && h->o.stop(h->o.stop_arg) ? 1 : 0;
}

/* The options every request has; the secrets as curl's authentication. */
static int setup(struct rp_http *h, char *err, size_t errlen)
{
    CURL *c = h->curl;
    int bad = 0;
    bad |= curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->o.connect_ms) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->o.total_ms) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_USERAGENT, "ringprof/" RINGPROF_VERSION) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_WRITEDATA, h) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress) != CURLE_OK;
    bad |= curl_easy_setopt(c, CURLOPT_XFERINFODATA, h) != CURLE_OK;
    if (h->o.cacert)
        bad |= curl_easy_setopt(c, CURLOPT_CAINFO, h->o.cacert) != CURLE_OK;
    if (h->bearer) {
        bad |= curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER) != CURLE_OK;
        bad |= curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, h->bearer) != CURLE_OK;
    } else if (h->user) {
        bad |= curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) != CURLE_OK;
        bad |= curl_easy_setopt(c, CURLOPT_USERNAME, h->user) != CURLE_OK;
        bad |= curl_easy_setopt(c, CURLOPT_PASSWORD, h->password) != CURLE_OK;
    }
    if (bad)
        return rp_fail(err, errlen, "libcurl %s lacks a feature push needs (http, https, "
                       "bearer authentication)", curl_version_info(CURLVERSION_NOW)->version);
    return 0;
}

/* RFC 4648 base64 of s, as the Authorization header carries user:password. */
static char *base64(const char *a, const char *b)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t na = strlen(a), n = na + 1 + strlen(b);
    unsigned char *in = rp_xmalloc(n + 1);
    snprintf((char *)in, n + 1, "%s:%s", a, b);
    char *out = rp_xmalloc(4 * ((n + 2) / 3) + 1), *o = out;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = '\0';
    explicit_bzero(in, n);
    free(in);
    return out;
}

/* A server may quote the request back ("invalid token abc..."): every copy of a
 * secret in what it said becomes '*' before anyone can print it. */
static void scrub(char *text, size_t len, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    if (n < 4)
        return;   /* a user name of three letters is no secret, and would hit words */
    for (char *p = text; (p = memmem(p, len - (size_t)(p - text), secret, n)) != NULL; p += n)
        memset(p, '*', n);
}

static void scrub_all(struct rp_http *h, char *text, size_t len)
{
    scrub(text, len, h->bearer);
    scrub(text, len, h->password);
    scrub(text, len, h->basic64);
}

struct rp_http *rp_http_open(const struct rp_http_options *o, char *err, size_t errlen)
{
    static int inited;
    if (!inited && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        rp_fail(err, errlen, "libcurl could not be initialised");
        return NULL;
    }
    inited = 1;
    if (o->cacert && access(o->cacert, R_OK) != 0) {
        rp_fail(err, errlen, "--cacert %s: %s", o->cacert, strerror(errno));
        return NULL;
    }
    struct rp_http *h = rp_xcalloc(1, sizeof *h);
    h->o = *o;
    h->o.bearer = h->o.basic = NULL;
    if (o->bearer)
        h->bearer = rp_xstrdup(o->bearer);
    if (o->basic) {
        const char *colon = strchr(o->basic, ':');
        size_t ulen = colon ? (size_t)(colon - o->basic) : strlen(o->basic);
        h->user = rp_xmalloc(ulen + 1);
        memcpy(h->user, o->basic, ulen);
        h->user[ulen] = '\0';
        h->password = rp_xstrdup(colon ? colon + 1 : "");
        h->basic64 = base64(h->user, h->password);
    }
    h->body = rp_xmalloc(RP_HTTP_BODY_MAX + 1);
    h->curl = curl_easy_init();
    if (!h->curl || setup(h, err, errlen) < 0) {
        if (!h->curl)
            rp_fail(err, errlen, "libcurl could not make a handle");
        rp_http_close(h);
        return NULL;
    }
    return h;
}

/* Copy curl's reason for a failed transfer, without its trailing newline. */
static void transport_error(struct rp_http *h, CURLcode rc, struct rp_http_reply *r)
{
    const char *why = h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc);
    snprintf(r->error, sizeof r->error, "%s", why);
    r->error[strcspn(r->error, "\r\n")] = '\0';
    r->aborted = rc == CURLE_ABORTED_BY_CALLBACK;
    if (r->aborted)
        snprintf(r->error, sizeof r->error, "stopped");
}

int rp_http_post(struct rp_http *h, const char *url, const char *const *headers,
                 size_t n, const void *body, size_t len, struct rp_http_reply *r)
{
    memset(r, 0, sizeof *r);
    h->body_len = 0;
    h->body[0] = '\0';
    h->errbuf[0] = '\0';
    h->sent = 0;
    struct curl_slist *list = NULL;
    /* No "Expect: 100-continue" round trip before a large body. */
    list = curl_slist_append(list, "Expect:");
    for (size_t i = 0; i < n && list; i++)
        list = curl_slist_append(list, headers[i]);
    if (!list) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
    CURL *c = h->curl;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(list);
    scrub_all(h, h->body, h->body_len);
    scrub_all(h, h->errbuf, strlen(h->errbuf));
    r->body = h->body;
    r->body_len = h->body_len;
    r->bytes_sent = h->sent;
    if (rc != CURLE_OK) {
        transport_error(h, rc, r);
        return -1;
    }
    r->bytes_sent = len;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    char *ct = NULL;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        snprintf(r->content_type, sizeof r->content_type, "%s", ct);
    curl_off_t after = 0;
    if (curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &after) == CURLE_OK && after > 0)
        r->retry_after_s = (uint64_t)after;
    return 0;
}

void rp_http_close(struct rp_http *h)
{
    if (!h)
        return;
    if (h->curl)
        curl_easy_cleanup(h->curl);
    wipe_free(h->bearer);
    wipe_free(h->user);
    wipe_free(h->password);
    wipe_free(h->basic64);
    free(h->body);
    free(h);
}

char *rp_http_query_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    if (!e) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
    char *copy = rp_xstrdup(e);
    curl_free(e);
    return copy;
}

/* ----------------------------------------------------------- secrets -- */

/* The file's content, one trailing newline dropped. @return 0 or -1. */
static int read_secret_file(const char *file, char *out, size_t cap, char *err,
                            size_t errlen)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return rp_fail(err, errlen, "%s: %s", file, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return rp_fail(err, errlen, "%s: not a regular file", file);
    }
    if (st.st_size >= (off_t)cap || st.st_size > RP_HTTP_SECRET_MAX) {
        close(fd);
        return rp_fail(err, errlen, "%s: longer than %u bytes", file, RP_HTTP_SECRET_MAX);
    }
    size_t got = 0;
    ssize_t k = 0;
    while (got + 1 < cap && (k = read(fd, out + got, cap - 1 - got)) > 0)
        got += (size_t)k;
    int rerr = k < 0 ? errno : 0;
    close(fd);
    if (rerr)
        return rp_fail(err, errlen, "%s: %s", file, strerror(rerr));
    out[got] = '\0';
    if (got && out[got - 1] == '\n')
        out[--got] = '\0';
    if (got && out[got - 1] == '\r')
        out[--got] = '\0';
    return 0;
}

/* Whether the secret is well formed. @return 0, or -1 with what is wrong. */
static int check_secret(const char *s, int basic, const char *where, char *err,
                        size_t errlen)
{
    if (!*s)
        return rp_fail(err, errlen, "%s is empty", where);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return rp_fail(err, errlen, "%s holds a control character (a line break "
                           "in the middle?)", where);
        if (*p == ' ' && !basic)
            return rp_fail(err, errlen, "%s holds a space: a bearer token has none",
                           where);
    }
    const char *colon = strchr(s, ':');
    if (basic && (!colon || colon == s))
        return rp_fail(err, errlen, "%s is not user:password", where);
    return 0;
}

int rp_http_secret_load(const char *file, const char *env, int basic, char *out,
                        size_t cap, char *err, size_t errlen)
{
    char where[1024];
    if (file) {
        if (read_secret_file(file, out, cap, err, errlen) < 0)
            return -1;
        snprintf(where, sizeof where, "%s", file);
    } else {
        const char *v = env ? getenv(env) : NULL;
        if (!v || !*v)
            return 0;
        if (strlen(v) >= cap || strlen(v) > RP_HTTP_SECRET_MAX)
            return rp_fail(err, errlen, "$%s: longer than %u bytes", env,
                           RP_HTTP_SECRET_MAX);
        snprintf(out, cap, "%s", v);
        snprintf(where, sizeof where, "$%s", env);
        unsetenv(env);
    }
    if (check_secret(out, basic, where, err, errlen) < 0) {
        explicit_bzero(out, cap);
        return -1;
    }
    return 1;
}

int rp_http_url_private(const char *url)
{
    if (!strncasecmp(url, "https://", 8))
        return 1;
    if (strncasecmp(url, "http://", 7))
        return 0;
    const char *host = url + 7;
    size_t n = strcspn(host, ":/?#");
    static const char *const local[] = {"localhost", "[::1]"};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (n == strlen(local[i]) && !strncasecmp(host, local[i], n))
            return 1;
    return n > 4 && !strncmp(host, "127.", 4);
}
