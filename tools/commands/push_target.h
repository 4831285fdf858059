/*
 * tools/commands/push_target.h — the backends `ringprof push` speaks to and the
 * shape of their requests: OTLP/HTTP and Grafana Pyroscope's /ingest.
 *
 * OTLP (opentelemetry-proto, profiles/v1development): POST
 * {URL}/v1development/profiles, the body the otlp writer makes (an
 * ExportProfilesServiceRequest) gzipped, Content-Type application/x-protobuf,
 * Content-Encoding gzip. A 200 answer may still refuse profiles: its
 * ExportProfilesServiceResponse's partial_success (rejected_profiles,
 * error_message) is read, and a refusal counts as a rejection.
 *
 * Pyroscope /ingest, as its server reads it (pkg/ingester/pyroscope/
 * ingest_handler.go and pkg/og/convert/{pprof,jfr} in grafana/pyroscope):
 *   - name=SERVICE{k=v,...}: the service becomes service_name, the labels
 *     series labels (the service as the OTLP writer names it, the agent's
 *     labels= and --label, the chunk's host); from and until are the window's range in ns (19 digits:
 *     Pyroscope's attime reads them as ns);
 *   - pprof: a multipart/form-data body with the gzipped profile as the file
 *     field "profile" and a "sample_type_config" that maps Pyroscope's profile
 *     name from the sample types. Without it, the server's default mapping
 *     names any profile whose first sample type is "samples" process_cpu,
 *     which would file allocation and live-heap profiles as CPU. No format=
 *     parameter: with format=pprof the server takes the body for a bare
 *     profile and never reads a form;
 *   - jfr: format=jfr, a multipart/form-data body with the gzipped JFR file as
 *     the file field "jfr", and what Pyroscope's Java agent adds (its
 *     PyroscopeExporter): spyName=javaspy, units=samples, aggregationType=sum,
 *     and sampleRate, the CPU samples per second, from which the server makes
 *     CPU time (events x 1e9 / sampleRate).
 * Both take X-Scope-OrgID (--tenant) for multi-tenant servers.
 *
 * Answers: 2xx is delivered; no answer, 408, 429 and 5xx are worth retrying;
 * every other status (3xx: push follows no redirect; 4xx) is a rejection,
 * told with the server's own words: the message of an OTLP google.rpc.Status,
 * else the first line of the body, control characters escaped
 * (rp_trust_escape).
 *
 * The tool's one thread; allocation failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_PUSH_TARGET_H
#define RINGPROF_TOOLS_PUSH_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "outputs/formats.h"
#include "push_body.h"
#include "push_http.h"

enum rp_push_proto { RP_PUSH_OTLP, RP_PUSH_PYROSCOPE };

/* Pyroscope's path and OTLP's, appended to a URL that does not end in them. */
#define RP_PUSH_OTLP_PATH      "/v1development/profiles"
#define RP_PUSH_PYROSCOPE_PATH "/ingest"

struct rp_push_label {
    char *key, *value;
    const char *arg;          /* "KEY=VALUE" as given (the writers' form)           */
};

struct rp_push_target {
    enum rp_push_proto proto;
    const struct rp_format *fmt;   /* the writer of the bodies                      */
    char *endpoint;                /* the URL requests go to (without a query)       */
    char *service;                 /* --service, or NULL                             */
    struct rp_push_label *labels;  /* --label, in order                              */
    size_t nlabels;
    char **headers;                /* "Name: value": --tenant, --header              */
    size_t nheaders;
};

/*
 * rp_push_target_parse: the target for `url` (http or https, no user:password
 * in it), `proto` ("otlp", "pyroscope", or NULL: told by the URL's path, else
 * its port, 4318 for OTLP and 4040 for Pyroscope) and `format` (Pyroscope:
 * "pprof", the default, or "jfr"; OTLP takes none), into a zeroed target or
 * one that has its labels and headers already. @return 0, or -1 with a usage
 * error in err.
 */
int rp_push_target_parse(struct rp_push_target *t, const char *url, const char *proto,
                         const char *format, char *err, size_t errlen);

/* --label K=V: checked by the labels' grammar (ringprof/labels.h), the keys
 * the backends keep for themselves (service.name, service_name, __*) refused;
 * Pyroscope's stricter name grammar is met when the name is made ('-' in a key,
 * '{' or '}' in a value become '_').
 * --header 'Name: value' (--tenant ID is "X-Scope-OrgID: ID"): a header name and
 * a value without control characters; Authorization and the headers push sets
 * itself are refused. @return 0, or -1 with err. */
int rp_push_target_label(struct rp_push_target *t, const char *kv, char *err,
                         size_t errlen);
int rp_push_target_header(struct rp_push_target *t, const char *line, char *err,
                          size_t errlen);

void rp_push_target_free(struct rp_push_target *t);

/* "otlp http://host:4318/v1development/profiles": how the state and the status
 * name the backend. */
const char *rp_push_proto_name(enum rp_push_proto p);

/* One HTTP request: the URL with its query, the headers, the wire body. */
struct rp_push_request {
    char *url;
    char **headers;
    size_t nheaders;
    char *body;
    size_t len;
};

/* rp_push_request_make: the request that delivers part `p` of chunk `c`. */
void rp_push_request_make(const struct rp_push_target *t, const struct rp_push_chunk *c,
                          const struct rp_push_part *p, struct rp_push_request *rq);
void rp_push_request_free(struct rp_push_request *rq);

enum rp_push_verdict {
    RP_PUSH_DELIVERED,
    RP_PUSH_RETRY,
    RP_PUSH_REJECTED
};

/* What an answer means (see Answers above), with a sentence in why: "HTTP 400:
 * the server's words", "no answer: curl's words". `rc` is rp_http_post's. */
enum rp_push_verdict rp_push_verdict(const struct rp_push_target *t, int rc,
                                     const struct rp_http_reply *r, char *why,
                                     size_t whylen);

#endif
