/*
 * tools/commands/push_http.h — the HTTP client of `ringprof push`: one POST at a
 * time over libcurl, and the secrets its requests carry.
 *
 * HTTP and TLS are libcurl's (README.md, Dependencies, says why): TLS verifies
 * the server against the system's CA store (curl's default, Debian's
 * /etc/ssl/certs/ca-certificates.crt) or the file given; redirects are not
 * followed (a POST that is redirected would be sent where nobody configured it,
 * with its credentials); only http and https URLs are accepted. curl reads the
 * usual proxy variables (https_proxy, no_proxy). The connection is kept between
 * requests.
 *
 * Every request is bounded twice: the connection (connect_ms) and the whole
 * request, answer included (total_ms), so a backend that stalls holds up the
 * push process for at most that and never anything else. A request in flight is
 * abandoned as soon as stop(stop_arg) says so (it is asked while curl waits:
 * several times a second).
 *
 * Secrets. A bearer token or a basic-auth "user:password" comes from a file or
 * an environment variable (rp_http_secret_load), never from the command line.
 * It goes to curl, which sends it as the Authorization header; nothing here
 * prints it, curl's error texts (transport failures) never hold a header, and a
 * reply that quotes it back has every copy (the token, the password, their
 * base64 form) overwritten with '*' before the caller sees it.
 * The caller's copy is wiped when the client is closed.
 *
 * The tool's one thread; not async-signal-safe. Allocation failure exits
 * (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_PUSH_HTTP_H
#define RINGPROF_TOOLS_PUSH_HTTP_H

#include <stddef.h>
#include <stdint.h>

/* The most of a reply's body kept for the caller (an error's text, an OTLP
 * partial-success message): enough for any sentence a server writes. */
#define RP_HTTP_BODY_MAX (64u << 10)

/* The longest secret accepted: a JWT of a few kilobytes fits. */
#define RP_HTTP_SECRET_MAX 8192

/* The environment variables that may hold the secrets (docs/fleet.md). */
#define RP_PUSH_ENV_TOKEN      "RINGPROF_PUSH_TOKEN"
#define RP_PUSH_ENV_BASIC_AUTH "RINGPROF_PUSH_BASIC_AUTH"

struct rp_http_options {
    long connect_ms;          /* the connection, TLS handshake included            */
    long total_ms;            /* the whole request                                 */
    const char *cacert;       /* PEM file of CA certificates; NULL: the system's   */
    const char *bearer;       /* token, or NULL (secret)                           */
    const char *basic;        /* "user:password", or NULL (secret)                 */
    int (*stop)(void *arg);   /* non-zero: the request in flight is abandoned;     */
    void *stop_arg;           /* NULL: never                                       */
};

/* What came back. */
struct rp_http_reply {
    long status;              /* the HTTP status; 0 when there was no answer      */
    char error[512];          /* status 0: why (curl's words: "Failed to connect  */
                              /* to 127.0.0.1 port 4318 ...", "Operation timed    */
                              /* out after 60000 milliseconds ...")               */
    int aborted;              /* status 0 because stop() said so                  */
    char *body;               /* the reply's first RP_HTTP_BODY_MAX bytes, NUL-   */
    size_t body_len;          /* terminated (owned by the client: valid until the */
                              /* next request)                                    */
    char content_type[128];   /* of the reply, "" when none                       */
    uint64_t retry_after_s;   /* Retry-After, in seconds; 0: none                 */
    uint64_t bytes_sent;      /* request body bytes that were sent                */
};

struct rp_http;

/* rp_http_open: a client for the options (copied; the secrets too). @return it,
 * or NULL with the reason in err (curl could not be set up, the CA file cannot
 * be read). */
struct rp_http *rp_http_open(const struct rp_http_options *o, char *err, size_t errlen);

/*
 * rp_http_post: POST `len` bytes of `body` to `url` with the headers (n lines
 * "Name: value") and wait for the answer. @return 0 with the status and body in
 * *r (any status: the caller decides what a 4xx means), or -1 with r->error when
 * no answer came (refused, reset, timed out, TLS failure, aborted).
 */
int rp_http_post(struct rp_http *h, const char *url, const char *const *headers,
                 size_t n, const void *body, size_t len, struct rp_http_reply *r);

/* Close the connection, wipe the secrets, free. NULL is accepted. */
void rp_http_close(struct rp_http *h);

/* `s` escaped for a URL's query (curl_easy_escape: everything but letters,
 * digits and -._~ as %XX). @return a string the caller frees. */
char *rp_http_query_escape(const char *s);

/*
 * rp_http_secret_load: the secret in `file` (if not NULL), else in the
 * environment variable `env` (if set and not empty), into out (cap bytes);
 * `basic` asks for "user:password". A file may end in one newline; it must be a
 * regular file (symlinks are followed: Kubernetes mounts secrets through them)
 * of at most RP_HTTP_SECRET_MAX bytes. A secret may hold no control character,
 * a token no space, and a basic one needs its ':' after a non-empty user. The
 * variable is removed from the environment once read. @return 1 with the
 * secret, 0 when neither gave one, or -1 with a reason in err that names the
 * file or variable, never the secret.
 */
int rp_http_secret_load(const char *file, const char *env, int basic, char *out,
                        size_t cap, char *err, size_t errlen);

/* Whether `url` is https, or http to this machine (localhost, 127.0.0.0/8,
 * [::1]): where a secret is not sent in clear over a network. */
int rp_http_url_private(const char *url);

#endif
