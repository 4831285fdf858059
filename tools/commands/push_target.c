/*
 * tools/commands/push_target.c — backends and requests of `ringprof push`
 * (push_target.h).
 */
#include "push_target.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "model/xalloc.h"
#include "outputs/pb.h"
#include "ringprof/errbuf.h"
#include "ringprof/labels.h"
#include "ringprof/trust.h"

/* gzip level of the bodies: zlib's default, as for pprof files. */
#define PUSH_GZIP_LEVEL 6

/* What Pyroscope's Java agent sends as its spy (Config.DEFAULT_SPY_NAME):
 * Grafana shows such profiles as Java's. */
#define PYROSCOPE_SPY "javaspy"

/* Pyroscope's default sample-type mapping (pkg/og/storage/tree/pprof.go)
 * without its "samples" entry, whose display name "cpu" would make every
 * profile that starts with a "samples" type a CPU profile. The lock kind's
 * types keep the names that make it a mutex profile. */
#define PYROSCOPE_SAMPLE_TYPES                                                      \
    "{\"contentions\":{\"display-name\":\"mutex_count\",\"units\":\"lock_samples\","  \
    "\"cumulative\":true},\"delay\":{\"display-name\":\"mutex_duration\","            \
    "\"units\":\"lock_nanoseconds\",\"cumulative\":true}}"

const char *rp_push_proto_name(enum rp_push_proto p)
{
    return p == RP_PUSH_OTLP ? "otlp" : "pyroscope";
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* The port the URL names, 0 when none. */
static long url_port(const char *url)
{
    const char *host = strstr(url, "://") + 3;
    size_t n = strcspn(host, "/?#");
    const char *colon = NULL;
    for (const char *p = host; p < host + n; p++)
        if (*p == ':')
            colon = p;
    if (!colon || (host[0] == '[' && memchr(colon, ']', (size_t)(host + n - colon))))
        return 0;
    return strtol(colon + 1, NULL, 10);
}

/* Check the URL and choose the protocol. @return 0 or -1. */
static int parse_url(struct rp_push_target *t, const char *url, const char *proto,
                     char *err, size_t errlen)
{
    if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8))
        return rp_fail(err, errlen, "URL '%s': push speaks http:// and https:// only", url);
    const char *auth = strstr(url, "://") + 3;
    size_t alen = strcspn(auth, "/?#");
    if (alen == 0)
        return rp_fail(err, errlen, "URL '%s' names no host", url);
    if (memchr(auth, '@', alen))
        return rp_fail(err, errlen, "URL: a user or password in the URL would be on the "
                       "command line and in every message; give --basic-auth-file or "
                       "$" RP_PUSH_ENV_BASIC_AUTH " instead");
    if (strchr(url, '?') || strchr(url, '#'))
        return rp_fail(err, errlen, "URL '%s': no query or fragment (push adds its "
                       "own)", url);
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return rp_fail(err, errlen, "URL: a space or control character in it");
    char *u = rp_xstrdup(url);
    while (strlen(u) > (size_t)(auth - url) + alen && u[strlen(u) - 1] == '/')
        u[strlen(u) - 1] = '\0';
    if (proto && !strcmp(proto, "otlp"))
        t->proto = RP_PUSH_OTLP;
    else if (proto && !strcmp(proto, "pyroscope"))
        t->proto = RP_PUSH_PYROSCOPE;
    else if (proto) {
        free(u);
        return rp_fail(err, errlen, "--protocol '%s': otlp or pyroscope", proto);
    } else if (ends_with(u, RP_PUSH_OTLP_PATH) || url_port(u) == 4318)
        t->proto = RP_PUSH_OTLP;
    else if (ends_with(u, RP_PUSH_PYROSCOPE_PATH) || url_port(u) == 4040)
        t->proto = RP_PUSH_PYROSCOPE;
    else {
        free(u);
        return rp_fail(err, errlen, "URL '%s': cannot tell the protocol from its path or "
                       "port; give --protocol otlp or --protocol pyroscope", url);
    }
    const char *path = t->proto == RP_PUSH_OTLP ? RP_PUSH_OTLP_PATH : RP_PUSH_PYROSCOPE_PATH;
    size_t len = strlen(u) + strlen(path) + 1;
    t->endpoint = rp_xmalloc(len);
    snprintf(t->endpoint, len, "%s%s", u, ends_with(u, path) ? "" : path);
    free(u);
    return 0;
}

int rp_push_target_parse(struct rp_push_target *t, const char *url, const char *proto,
                         const char *format, char *err, size_t errlen)
{
    if (parse_url(t, url, proto, err, errlen) < 0)
        return -1;
    const char *name = format ? format : t->proto == RP_PUSH_OTLP ? "otlp" : "pprof";
    if (t->proto == RP_PUSH_OTLP && format)
        return rp_fail(err, errlen, "--format applies to Pyroscope (pprof or jfr); an "
                       "OTLP body is always OTLP protobuf");
    if (t->proto == RP_PUSH_PYROSCOPE && strcmp(name, "pprof") && strcmp(name, "jfr"))
        return rp_fail(err, errlen, "--format '%s': pprof or jfr (what Pyroscope's "
                       "/ingest reads)", name);
    t->fmt = rp_format_by_name(name);
    if (!t->fmt)
        return rp_fail(err, errlen, "this ringprof has no %s writer", name);
    return 0;
}

/* --------------------------------------------------- labels, headers -- */

int rp_push_target_label(struct rp_push_target *t, const char *kv, char *err,
                         size_t errlen)
{
    const char *eq = strchr(kv, '=');
    size_t klen = eq ? (size_t)(eq - kv) : 0;
    if (!eq || !rp_label_key_ok(kv, klen) || !rp_label_value_ok(eq + 1, strlen(eq + 1)))
        return rp_fail(err, errlen, "--label '%s': KEY=VALUE, KEY 1 to 64 of A-Z a-z 0-9 "
                       "_ . - starting with a letter or _, VALUE 1 to 256 printable "
                       "characters but ',' and ';' (ringprof/labels.h)", kv);
    if (!strncmp(kv, "__", 2) || (klen == 12 && !strncmp(kv, "service_name", 12)) ||
        (klen == 12 && !strncmp(kv, "service.name", 12)))
        return rp_fail(err, errlen, "--label '%s': that key is the backend's own (give "
                       "the service with --service)", kv);
    for (size_t i = 0; i < t->nlabels; i++)
        if (strlen(t->labels[i].key) == klen && !strncmp(t->labels[i].key, kv, klen))
            return rp_fail(err, errlen, "--label '%s': that key is given twice", kv);
    if (t->nlabels == RP_LABELS_MAX)
        return rp_fail(err, errlen, "--label '%s': at most %d labels", kv, RP_LABELS_MAX);
    t->labels = rp_xreallocarray(t->labels, t->nlabels + 1, sizeof *t->labels);
    struct rp_push_label *l = &t->labels[t->nlabels++];
    l->key = rp_xstrdup(kv);
    l->key[klen] = '\0';
    l->value = rp_xstrdup(eq + 1);
    l->arg = kv;
    return 0;
}

/* Headers push writes itself, or that carry secrets: never from argv. */
static const char *const own_headers[] = {
    "authorization", "proxy-authorization", "content-type", "content-encoding",
    "content-length", "transfer-encoding", "host", "expect"};

int rp_push_target_header(struct rp_push_target *t, const char *line, char *err,
                          size_t errlen)
{
    const char *colon = strchr(line, ':');
    size_t n = colon ? (size_t)(colon - line) : 0;
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)line[i]) || strchr("()<>@,;:\\\"/[]?={}", line[i]))
            n = 0;
    if (!n)
        return rp_fail(err, errlen, "--header '%s': 'Name: value'", line);
    for (const unsigned char *p = (const unsigned char *)colon + 1; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return rp_fail(err, errlen, "--header: a control character in the value");
    for (size_t i = 0; i < sizeof own_headers / sizeof own_headers[0]; i++)
        if (strlen(own_headers[i]) == n && !strncasecmp(line, own_headers[i], n))
            return rp_fail(err, errlen, i < 2
                           ? "--header %.*s: credentials never go on the command line; "
                             "give --token-file or --basic-auth-file (docs/fleet.md)"
                           : "--header %.*s: push sets that header itself", (int)n, line);
    t->headers = rp_xreallocarray(t->headers, t->nheaders + 1, sizeof *t->headers);
    t->headers[t->nheaders++] = rp_xstrdup(line);
    return 0;
}

void rp_push_target_free(struct rp_push_target *t)
{
    free(t->endpoint);
    free(t->service);
    for (size_t i = 0; i < t->nlabels; i++) {
        free(t->labels[i].key);
        free(t->labels[i].value);
    }
    free(t->labels);
    for (size_t i = 0; i < t->nheaders; i++)
        free(t->headers[i]);
    free(t->headers);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ requests -- */

static void add_header(struct rp_push_request *rq, const char *fmt, const char *v)
{
    size_t len = strlen(fmt) + strlen(v) + 1;
    char *h = rp_xmalloc(len);
    snprintf(h, len, fmt, v);
    rq->headers = rp_xreallocarray(rq->headers, rq->nheaders + 1, sizeof *rq->headers);
    rq->headers[rq->nheaders++] = h;
}

static FILE *memfile(char **buf, size_t *len)
{
    FILE *m = open_memstream(buf, len);
    if (!m) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
    return m;
}

/* gzip `len` bytes of `data` (through pb.h's stream, as pprof files are). */
static void gzip_into(FILE *m, const void *data, size_t len)
{
    struct rp_gz *z = rp_gz_open(m, PUSH_GZIP_LEVEL);
    if (!z) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
    rp_gz_write(z, data, len);
    if (rp_gz_finish(z) != 0) {
        fputs("ringprof: out of memory\n", stderr);
        exit(1);
    }
}

/* A boundary that the body does not hold. */
static void make_boundary(char *b, size_t cap, const void *body, size_t len)
{
    do {
        uint64_t r[2] = {0, 0};
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            r[0] = (uint64_t)(uintptr_t)b ^ len, r[1] = r[0] * 0x9e3779b97f4a7c15ull;
        snprintf(b, cap, "ringprof-%016" PRIx64 "%016" PRIx64, r[0], r[1]);
    } while (memmem(body, len, b, strlen(b)));
}

/* One file field of a multipart/form-data body (RFC 7578). */
static void form_file(FILE *m, const char *boundary, const char *field, const char *file,
                      const char *type, const void *data, size_t len, int gzip)
{
    fprintf(m, "--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
               "Content-Type: %s\r\n\r\n", boundary, field, file, type);
    if (gzip)
        gzip_into(m, data, len);
    else
        fwrite(data, 1, len, m);
    fputs("\r\n", m);
}

/* What a piece of Pyroscope's name is. */
enum pyro_text { PYRO_KEY, PYRO_VALUE, PYRO_SERVICE };

/* Text as Pyroscope's name grammar has it (api/model/labelset): what a label
 * name, a value or a service name may not hold becomes '_'. */
static void put_pyroscope(FILE *m, const char *s, size_t n, enum pyro_text what)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = what == PYRO_VALUE ? !strchr(",{}", c) && (unsigned char)c >= 0x20
               : (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                 (what == PYRO_SERVICE && (c == '-' || c == '/'));
        fputc(ok ? c : '_', m);
    }
}

static int given(const struct rp_push_target *t, const char *key, size_t klen)
{
    for (size_t i = 0; i < t->nlabels; i++)
        if (strlen(t->labels[i].key) == klen && !strncmp(t->labels[i].key, key, klen))
            return 1;
    return 0;
}

/* "SERVICE{host=...,k=v,...}", escaped for the query: the service as the OTLP
 * writer names it (rp_out_service_name), the agent's labels, --label's (which
 * win), and the host unless a label names one. */
static char *pyroscope_name(const struct rp_push_target *t, const struct rp_push_chunk *c)
{
    struct rp_prof_source src;
    rp_push_ident_source(&c->id, &src);
    char svc[512], *name = NULL;
    rp_out_service_name(t->service, &src, svc, sizeof svc);
    size_t len = 0;
    FILE *m = memfile(&name, &len);
    put_pyroscope(m, svc, strlen(svc), PYRO_SERVICE);
    fputc('{', m);
    const char *sep = "";
    if (c->id.host[0] && !given(t, "host", 4)) {
        fputs("host=", m);
        put_pyroscope(m, c->id.host, strlen(c->id.host), PYRO_VALUE);
        sep = ",";
    }
    struct rp_label l;
    for (size_t pos = 0; rp_labels_next(c->id.labels, &pos, &l);) {
        if (given(t, l.key, l.klen) || (l.klen == 4 && !strncmp(l.key, "host", 4)))
            continue;
        fputs(sep, m);
        put_pyroscope(m, l.key, l.klen, PYRO_KEY);
        fputc('=', m);
        put_pyroscope(m, l.value, l.vlen, PYRO_VALUE);
        sep = ",";
    }
    for (size_t i = 0; i < t->nlabels; i++, sep = ",") {
        fputs(sep, m);
        put_pyroscope(m, t->labels[i].key, strlen(t->labels[i].key), PYRO_KEY);
        fputc('=', m);
        put_pyroscope(m, t->labels[i].value, strlen(t->labels[i].value), PYRO_VALUE);
    }
    fputc('}', m);
    fclose(m);
    char *q = rp_http_query_escape(name);
    free(name);
    return q;
}

static void pyroscope_request(const struct rp_push_target *t, const struct rp_push_chunk *c,
                              const struct rp_push_part *p, struct rp_push_request *rq)
{
    char *name = pyroscope_name(t, c);
    int jfr = t->fmt->model == RP_MODEL_EVENTS;
    char rate[64] = "";
    if (jfr && c->id.interval_ns)
        snprintf(rate, sizeof rate, "&sampleRate=%" PRIu64,
                 (uint64_t)((1000000000ull + c->id.interval_ns / 2) / c->id.interval_ns));
    size_t ulen = strlen(t->endpoint) + strlen(name) + 256;
    rq->url = rp_xmalloc(ulen);
    snprintf(rq->url, ulen, "%s?name=%s&from=%" PRIu64 "&until=%" PRIu64 "&spyName="
             PYROSCOPE_SPY "%s%s", t->endpoint, name, p->from, p->until,
             jfr ? "&format=jfr&units=samples&aggregationType=sum" : "", rate);
    free(name);

    char boundary[64];
    make_boundary(boundary, sizeof boundary, p->body, p->len);
    FILE *m = memfile(&rq->body, &rq->len);
    if (jfr) {
        form_file(m, boundary, "jfr", "jfr", "application/octet-stream", p->body, p->len, 1);
    } else {
        /* The pprof writer's output is gzipped already. */
        form_file(m, boundary, "profile", "profile.pprof", "application/octet-stream",
                  p->body, p->len, 0);
        form_file(m, boundary, "sample_type_config", "sample_type_config.json",
                  "application/json", PYROSCOPE_SAMPLE_TYPES,
                  sizeof PYROSCOPE_SAMPLE_TYPES - 1, 0);
    }
    fprintf(m, "--%s--\r\n", boundary);
    fclose(m);
    add_header(rq, "Content-Type: multipart/form-data; boundary=%s", boundary);
}

void rp_push_request_make(const struct rp_push_target *t, const struct rp_push_chunk *c,
                          const struct rp_push_part *p, struct rp_push_request *rq)
{
    memset(rq, 0, sizeof *rq);
    if (t->proto == RP_PUSH_PYROSCOPE) {
        pyroscope_request(t, c, p, rq);
    } else {
        rq->url = rp_xstrdup(t->endpoint);
        FILE *m = memfile(&rq->body, &rq->len);
        gzip_into(m, p->body, p->len);
        fclose(m);
        add_header(rq, "Content-Type: %s", "application/x-protobuf");
        add_header(rq, "Content-Encoding: %s", "gzip");
    }
    for (size_t i = 0; i < t->nheaders; i++)
        add_header(rq, "%s", t->headers[i]);
}

void rp_push_request_free(struct rp_push_request *rq)
{
    free(rq->url);
    for (size_t i = 0; i < rq->nheaders; i++)
        free(rq->headers[i]);
    free(rq->headers);
    free(rq->body);
    memset(rq, 0, sizeof *rq);
}

/* ------------------------------------------------------------- answers -- */

/* The protobuf field `field` of `buf`: a varint into *v, or a length-delimited
 * value into *sub and *sublen. @return 1 when found, 0 when not (or malformed). */
static int pb_find(const uint8_t *buf, size_t len, uint32_t field, uint64_t *v,
                   const uint8_t **sub, size_t *sublen)
{
    size_t i = 0;
    while (i < len) {
        uint64_t key = 0, x = 0;
        for (int s = 0; i < len && s < 64; s += 7) {
            key |= (uint64_t)(buf[i] & 0x7f) << s;
            if (!(buf[i++] & 0x80))
                break;
        }
        unsigned wt = key & 7;
        if (wt == 0 || wt == 2) {
            for (int s = 0; i < len && s < 64; s += 7) {
                x |= (uint64_t)(buf[i] & 0x7f) << s;
                if (!(buf[i++] & 0x80))
                    break;
            }
        }
        if (wt == 2 && x > len - i)
            return 0;
        if ((key >> 3) == field) {
            if (wt == 0 && v)
                *v = x;
            if (wt == 2 && sub)
                *sub = buf + i, *sublen = (size_t)x;
            return (wt == 0 && v) || (wt == 2 && sub);
        }
        if (wt == 2)
            i += (size_t)x;
        else if (wt == 1)
            i += 8;
        else if (wt == 5)
            i += 4;
        else if (wt != 0)
            return 0;
    }
    return 0;
}

static int is_protobuf(const struct rp_http_reply *r)
{
    return !strncasecmp(r->content_type, "application/x-protobuf", 22);
}

/* The server's words: an OTLP Status's message, else the body's first line;
 * escaped. */
static void server_words(const struct rp_http_reply *r, char *out, size_t cap)
{
    char text[1024];
    const uint8_t *msg;
    size_t mlen;
    if (is_protobuf(r) &&
        pb_find((const uint8_t *)r->body, r->body_len, 2, NULL, &msg, &mlen)) {
        snprintf(text, sizeof text, "%.*s", (int)mlen, (const char *)msg);
    } else {
        size_t n = strcspn(r->body, "\r\n");
        snprintf(text, sizeof text, "%.*s", (int)n, r->body);
    }
    rp_trust_escape(out, cap, text[0] ? text : "(no text)");
}

/* An OTLP 200 that refuses profiles: ExportProfilesServiceResponse field 1,
 * partial_success { rejected_profiles = 1; error_message = 2 }. @return 1 with
 * why, else 0. */
static int partial_refusal(const struct rp_http_reply *r, char *why, size_t whylen)
{
    const uint8_t *ps, *msg = NULL;
    size_t pslen, mlen = 0;
    uint64_t rejected = 0;
    if (!is_protobuf(r) ||
        !pb_find((const uint8_t *)r->body, r->body_len, 1, NULL, &ps, &pslen))
        return 0;
    pb_find(ps, pslen, 1, &rejected, NULL, NULL);
    pb_find(ps, pslen, 2, NULL, &msg, &mlen);
    if (!rejected)
        return 0;
    char text[1024], esc[1024];
    snprintf(text, sizeof text, "%.*s", (int)mlen, msg ? (const char *)msg : "");
    rp_trust_escape(esc, sizeof esc, text[0] ? text : "(no text)");
    snprintf(why, whylen, "HTTP %ld, but %" PRIu64 " profile%s rejected: %s", r->status,
             rejected, rejected == 1 ? "" : "s", esc);
    return 1;
}

enum rp_push_verdict rp_push_verdict(const struct rp_push_target *t, int rc,
                                     const struct rp_http_reply *r, char *why,
                                     size_t whylen)
{
    if (rc != 0) {
        char esc[600];
        rp_trust_escape(esc, sizeof esc, r->error);
        snprintf(why, whylen, "no answer: %s", esc);
        return RP_PUSH_RETRY;
    }
    if (r->status >= 200 && r->status < 300) {
        if (t->proto == RP_PUSH_OTLP && partial_refusal(r, why, whylen))
            return RP_PUSH_REJECTED;
        snprintf(why, whylen, "HTTP %ld", r->status);
        return RP_PUSH_DELIVERED;
    }
    char words[600];
    server_words(r, words, sizeof words);
    snprintf(why, whylen, "HTTP %ld: %s%s", r->status, words,
             r->status >= 300 && r->status < 400
                 ? " (push follows no redirect: give the URL it names)" : "");
    return r->status == 408 || r->status == 429 || r->status >= 500 ? RP_PUSH_RETRY
                                                                    : RP_PUSH_REJECTED;
}
