/*
 * src/flush/requests.h — the flusher thread's side of the control requests
 * (flusher.h: rp_flusher_request, rp_flusher_rotate_meta, rp_flusher_call,
 * rp_flusher_wake, rp_flusher_stop, rp_flusher_recording, all in requests.c).
 *
 * The posting threads and the flusher meet under one lock: a request is posted
 * (one at a time), the flusher wakes, serves it and answers; a stop wakes it
 * for its last pass. The recording's state for status is published here after
 * each pass. flusher.c only calls the functions below.
 *
 * Threads: the flusher thread only (the posting side is flusher.h's).
 */
#ifndef RINGPROF_SRC_REQUESTS_H
#define RINGPROF_SRC_REQUESTS_H

#include <stdint.h>

#include "ringprof/recording.h"

/* What the flusher is to do after a wait. */
enum rp_req_next {
    RP_REQ_PASS,                /* the drain interval passed, or a wake-up        */
    RP_REQ_FLUSH,               /* a flush request: serve it, then rp_req_answer   */
    RP_REQ_CALL,                /* a call request: rp_req_serve_call               */
    RP_REQ_STOP                 /* rp_flusher_stop: the last pass, then closed     */
};

/* Wait up to `ns` for a wake-up, a request or the stop. */
enum rp_req_next rp_req_wait(uint64_t ns);

/* Run the pending call and answer it. */
void rp_req_serve_call(void);

/* The pending flush request's change of the next chunks' header: its key ("":
 * none) and value, valid until rp_req_answer. */
void rp_req_meta(const char **key, const char **value);

/* Answer the pending flush request: rc 0 with the finished file's `path` ("":
 * none), or -1 with errno `e`. */
void rp_req_answer(int rc, int e, const char *path);

/* The recording as of this pass, for rp_flusher_recording: its figures and the
 * chunk being written ("" if none). */
void rp_req_publish(const struct rp_recording_stats *rs, const char *current);

/* The last chunk is closed (`ok` 0), or not (-1): rp_flusher_stop returns. */
void rp_req_closed(int ok);

/* The recording directory, for the requests' error sentences. Flusher start. */
void rp_req_set_dir(const char *dir);

#endif
