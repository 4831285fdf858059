/*
 * src/flush/requests.c — control requests to the flusher thread, its wake-ups
 * and its stop (see requests.h and flusher.h).
 *
 * One lock (g_lock) and three condition variables on CLOCK_MONOTONIC: g_wake
 * (the flusher's wait), g_req_cond (a request's answer, and room for the next),
 * g_done_cond (the last close). A request that timed out may still be in
 * progress: the next one waits for it first.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "flush/flusher.h"
#include "flush/requests.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake, g_done_cond, g_req_cond;
static int g_stop, g_done, g_close_ok = -1;
/* rp_flusher_wake's request: a signal sent while the flusher is busy in a pass
 * (not waiting) would be lost without it; checked before each wait. */
static _Atomic int g_wake_pending;

/* The request, under g_lock: one at a time. */
static int g_req_pending, g_req_done, g_req_rc, g_req_errno;
static char g_req_path[PATH_MAX];
/* A call request (rp_flusher_call) instead of a flush: the function, its
 * argument and its error sentence. */
static rp_flusher_fn g_req_fn;
static void *g_req_arg;
static char g_req_err[512];
/* A flush that also changes the next chunks' header (rp_flusher_rotate_meta):
 * the key ("" for none) and its value. */
static char g_req_meta_key[64], g_req_meta_value[RP_FLUSHER_META_MAX];
static char g_dir[PATH_MAX];

/* The recording's state for status (rp_flusher_recording), under g_rec_lock. */
static pthread_mutex_t g_rec_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rp_flusher_recording g_rec;

/* The condition variables wait on CLOCK_MONOTONIC deadlines, so they need their
 * attribute; initialised once, by whichever comes first (stop and a control
 * request can come before the flusher started). */
static pthread_once_t g_conds_once = PTHREAD_ONCE_INIT;

static void init_conds(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_wake, &ca);
    pthread_cond_init(&g_done_cond, &ca);
    pthread_cond_init(&g_req_cond, &ca);
    pthread_condattr_destroy(&ca);
}

/* CLOCK_MONOTONIC `ns` from now, for the timed waits. */
static struct timespec deadline_in(uint64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    ns += (uint64_t)t.tv_nsec;
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec = (long)(ns % 1000000000u);
    return t;
}

/* ------------------------------------------------------ the flusher's side -- */

void rp_req_set_dir(const char *dir)
{
    pthread_once(&g_conds_once, init_conds);
    snprintf(g_dir, sizeof g_dir, "%s", dir ? dir : "");
}

enum rp_req_next rp_req_wait(uint64_t ns)
{
    pthread_mutex_lock(&g_lock);
    if (!g_stop) {
        struct timespec until = deadline_in(ns);
        if (!g_req_pending && !atomic_exchange(&g_wake_pending, 0))
            pthread_cond_timedwait(&g_wake, &g_lock, &until);
        atomic_store(&g_wake_pending, 0);
    }
    enum rp_req_next next = g_stop ? RP_REQ_STOP
                          : !g_req_pending ? RP_REQ_PASS
                          : g_req_fn ? RP_REQ_CALL : RP_REQ_FLUSH;
    pthread_mutex_unlock(&g_lock);
    return next;
}

/* The answer is in: the poster may return. g_lock held. */
static void answered(void)
{
    g_req_pending = 0;
    g_req_done = 1;
    pthread_cond_broadcast(&g_req_cond);
}

void rp_req_serve_call(void)
{
    g_req_err[0] = '\0';
    int rc = g_req_fn(g_req_arg, g_req_err, sizeof g_req_err);
    pthread_mutex_lock(&g_lock);
    g_req_rc = rc;
    g_req_errno = 0;
    g_req_path[0] = '\0';
    answered();
    pthread_mutex_unlock(&g_lock);
}

void rp_req_meta(const char **key, const char **value)
{
    *key = g_req_meta_key;
    *value = g_req_meta_value;
}

void rp_req_answer(int rc, int e, const char *path)
{
    pthread_mutex_lock(&g_lock);
    g_req_rc = rc;
    g_req_errno = e;
    snprintf(g_req_path, sizeof g_req_path, "%s", path);
    answered();
    pthread_mutex_unlock(&g_lock);
}

void rp_req_publish(const struct rp_recording_stats *rs, const char *current)
{
    pthread_mutex_lock(&g_rec_lock);
    g_rec.rec = *rs;
    snprintf(g_rec.current, sizeof g_rec.current, "%s", current);
    pthread_mutex_unlock(&g_rec_lock);
}

void rp_req_closed(int ok)
{
    pthread_mutex_lock(&g_lock);
    g_close_ok = ok;
    g_done = 1;
    pthread_cond_broadcast(&g_done_cond);
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------- the posters' side -- */

int rp_flusher_stop(unsigned wait_ms)
{
    pthread_once(&g_conds_once, init_conds);
    struct timespec until = deadline_in((uint64_t)wait_ms * 1000000u);
    pthread_mutex_lock(&g_lock);
    g_stop = 1;
    pthread_cond_broadcast(&g_wake);
    pthread_cond_broadcast(&g_req_cond);
    while (!g_done) {
        if (pthread_cond_timedwait(&g_done_cond, &g_lock, &until) == ETIMEDOUT)
            break;
    }
    int ok = g_done ? g_close_ok : -1;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

static int post(rp_flusher_fn fn, void *arg, const char *key, const char *value,
                char *path, size_t pathlen, unsigned wait_ms, char *err, size_t errlen);

int rp_flusher_request(char *path, size_t pathlen, unsigned wait_ms, char *err,
                       size_t errlen)
{
    return post(NULL, NULL, NULL, NULL, path, pathlen, wait_ms, err, errlen);
}

int rp_flusher_rotate_meta(const char *key, const char *value, char *path,
                           size_t pathlen, unsigned wait_ms, char *err, size_t errlen)
{
    return post(NULL, NULL, key, value, path, pathlen, wait_ms, err, errlen);
}

int rp_flusher_call(rp_flusher_fn fn, void *arg, unsigned wait_ms, char *err,
                    size_t errlen)
{
    char path[8];
    return post(fn, arg, NULL, NULL, path, sizeof path, wait_ms, err, errlen);
}

static const char SHUTTING_DOWN[] = "the agent is shutting down; its last chunk is being "
                                    "closed";

/* The answer of a request that came (g_req_done). g_lock held. */
static int answer(rp_flusher_fn fn, char *path, size_t pathlen, char *err, size_t errlen)
{
    g_req_done = 0;
    if (g_req_rc == 0) {
        snprintf(path, pathlen, "%s", g_req_path);
        return 0;
    }
    if (fn)
        snprintf(err, errlen, "%s", g_req_err);
    else
        snprintf(err, errlen, "the chunk could not be finished in %s: %s", g_dir,
                 strerror(g_req_errno));
    return -1;
}

/* Post a request (a flush if fn is NULL, with a header change if key is not)
 * and wait for its answer. */
static int post(rp_flusher_fn fn, void *arg, const char *key, const char *value,
                char *path, size_t pathlen, unsigned wait_ms, char *err, size_t errlen)
{
    pthread_once(&g_conds_once, init_conds);
    struct timespec until = deadline_in((uint64_t)wait_ms * 1000000u);
    int rc = -1, timed_out = 0;
    pthread_mutex_lock(&g_lock);
    /* A request that timed out earlier may still be in progress: wait for it. */
    while (g_req_pending && !g_stop && !timed_out)
        timed_out = pthread_cond_timedwait(&g_req_cond, &g_lock, &until) == ETIMEDOUT;
    if (g_stop || g_done) {
        snprintf(err, errlen, "%s", SHUTTING_DOWN);
    } else if (!timed_out) {
        g_req_fn = fn;
        g_req_arg = arg;
        snprintf(g_req_meta_key, sizeof g_req_meta_key, "%s", key ? key : "");
        snprintf(g_req_meta_value, sizeof g_req_meta_value, "%s", value ? value : "");
        g_req_pending = 1;
        g_req_done = 0;
        pthread_cond_broadcast(&g_wake);
        while (!g_req_done && !g_stop && !timed_out)
            timed_out = pthread_cond_timedwait(&g_req_cond, &g_lock, &until) == ETIMEDOUT;
        if (g_req_done)
            rc = answer(fn, path, pathlen, err, errlen);
        else if (g_stop)
            snprintf(err, errlen, "%s", SHUTTING_DOWN);
    }
    if (rc != 0 && timed_out && fn)
        snprintf(err, errlen, "the flusher did not get to the request within %u ms (a "
                 "slow disk?); it will still carry it out when it can", wait_ms);
    else if (rc != 0 && timed_out)
        snprintf(err, errlen, "the flusher did not finish the chunk within %u ms (a "
                 "slow disk?); it will when it can, and a later flush will wait for it",
                 wait_ms);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void rp_flusher_recording(struct rp_flusher_recording *out)
{
    pthread_mutex_lock(&g_rec_lock);
    *out = g_rec;
    pthread_mutex_unlock(&g_rec_lock);
}

void rp_flusher_wake(void)
{
    atomic_store_explicit(&g_wake_pending, 1, memory_order_release);
    pthread_cond_signal(&g_wake);
}
