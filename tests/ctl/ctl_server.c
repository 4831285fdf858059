/*
 * tests/ctl/ctl_server.c — the control server (src/control/control.c) with a fake agent
 * behind it, for test_control.py to talk to.
 *
 *   ctl_server SOCKET [--relax-mode] [--log FILE] [--discovery] [--threads N]
 *              [--bare] [--bad-status]
 *
 * Starts rp_control_start on SOCKET and prints "ready <pid>" on stdout, or prints
 * the start error on stderr and exits 3. Runs until SIGTERM or SIGINT, then stops
 * the server (which removes the socket) and exits 0.
 *
 * The fake ops count their calls and keep what start/stop/set changed; status
 * reports all of it, so the driver can tell that a command reached the agent
 * with the right arguments, and that a refused one did not. flush and rotate
 * return made-up chunk paths numbered by call. `set interval=9999ms` is refused
 * by the fake agent (to test an op's error reply).
 *
 *   --relax-mode  chmod the socket to 0666 after start: a test-only way to let
 *                 another uid reach connect(), so SO_PEERCRED is what refuses it
 *   --log FILE    append the server's log lines to FILE
 *   --discovery   write the discovery file (/tmp/ringprof-<uid>/<pid>.json)
 *   --threads N   status lists N fake threads (a large N overflows the reply)
 *   --bare        no ops but log: every command is "not supported"
 *   --bad-status  status leaves an object open (an agent bug the server must catch)
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../../src/control/control.h"

struct fake {
    unsigned kinds;
    uint64_t interval_ns, alloc_bytes;
    unsigned calls_status, calls_flush, calls_rotate, calls_start, calls_stop,
             calls_set, calls_thread_start;
    long nthreads;
    int bad_status;
    FILE *log;
    _Atomic(struct rp_control *) ctl;   /* set by main after start; read by status */
};

static int fake_status(void *ctx, struct rp_json *j, char *err, size_t errlen)
{
    struct fake *f = ctx;
    (void)err; (void)errlen;
    f->calls_status++;
    if (f->bad_status) {
        rp_json_key(j, "unclosed");
        rp_json_object_begin(j);
        return 0;
    }
    rp_json_kv_string(j, "state", f->kinds ? "running" : "stopped");
    rp_json_kv_string(j, "options", "dir=/fake,interval=10ms");
    rp_json_key(j, "sampling");
    rp_json_array_begin(j);
    for (unsigned bit = 1; bit <= RP_CTL_KIND_ALL; bit <<= 1)
        if (f->kinds & bit)
            rp_json_string(j, rp_ctl_kind_name(bit));
    rp_json_array_end(j);
    rp_json_kv_u64(j, "interval_ns", f->interval_ns);
    rp_json_kv_u64(j, "alloc_bytes", f->alloc_bytes);
    rp_json_key(j, "samples");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "cpu", 12345);
    rp_json_kv_u64(j, "alloc", 678);
    rp_json_object_end(j);
    rp_json_key(j, "lost");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "ring_full", 3);
    rp_json_kv_u64(j, "nested", 1);
    rp_json_kv_u64(j, "too_big", 0);
    rp_json_object_end(j);
    rp_json_key(j, "threads");
    rp_json_array_begin(j);
    for (long i = 0; i < f->nthreads; i++) {
        char name[64];
        /* a quote, a backslash and a byte that is not UTF-8, to be escaped */
        snprintf(name, sizeof name, "worker \"%ld\" \\ \xff", i);
        rp_json_object_begin(j);
        rp_json_kv_u64(j, "tid", 1000 + (uint64_t)i);
        rp_json_kv_string(j, "name", name);
        rp_json_kv_u64(j, "samples", 100 + (uint64_t)i);
        rp_json_kv_u64(j, "cpu_ns", 1000000 * (uint64_t)i);
        rp_json_object_end(j);
    }
    rp_json_array_end(j);
    rp_json_kv_u64(j, "bytes_written", 987654);
    rp_json_key(j, "chunks");
    rp_json_object_begin(j);
    rp_json_kv_string(j, "current", "/fake/20260101T000000Z-1-000007.rpc.part");
    rp_json_kv_u64(j, "finished", 6);
    rp_json_object_end(j);
    rp_json_key(j, "agent");
    rp_json_object_begin(j);
    struct rp_control *ctl = atomic_load(&f->ctl);
    rp_json_kv_u64(j, "cpu_ns", ctl ? rp_control_cpu_ns(ctl) : 0);
    rp_json_kv_u64(j, "handler_ns_median", 850);
    rp_json_kv_u64(j, "handler_ns_p99", 4100);
    rp_json_object_end(j);
    rp_json_key(j, "calls");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "status", f->calls_status);
    rp_json_kv_u64(j, "flush", f->calls_flush);
    rp_json_kv_u64(j, "rotate", f->calls_rotate);
    rp_json_kv_u64(j, "start", f->calls_start);
    rp_json_kv_u64(j, "stop", f->calls_stop);
    rp_json_kv_u64(j, "set", f->calls_set);
    rp_json_kv_u64(j, "thread_start", f->calls_thread_start);
    rp_json_object_end(j);
    return 0;
}

static int fake_flush(void *ctx, char *path, size_t pathlen, char *err, size_t errlen)
{
    struct fake *f = ctx;
    (void)err; (void)errlen;
    f->calls_flush++;
    snprintf(path, pathlen, "/fake/rec/20260101T000000Z-%ld-%06u.rpc", (long)getpid(),
             f->calls_flush);
    return 0;
}

static int fake_rotate(void *ctx, char *path, size_t pathlen, char *err, size_t errlen)
{
    struct fake *f = ctx;
    (void)err; (void)errlen;
    f->calls_rotate++;
    /* the first rotate has no chunk to finish: the reply's path is null */
    if (f->calls_rotate == 1)
        path[0] = '\0';
    else
        snprintf(path, pathlen, "/fake/rec/rotated-%u.rpc", f->calls_rotate);
    return 0;
}

static int fake_start(void *ctx, unsigned kinds, char *err, size_t errlen)
{
    struct fake *f = ctx;
    (void)err; (void)errlen;
    f->calls_start++;
    f->kinds |= kinds;
    return 0;
}

static int fake_stop(void *ctx, unsigned kinds, char *err, size_t errlen)
{
    struct fake *f = ctx;
    (void)err; (void)errlen;
    f->calls_stop++;
    f->kinds &= ~kinds;
    return 0;
}

static int fake_set(void *ctx, const struct rp_ctl_setting *s, size_t n, char *err,
                    size_t errlen)
{
    struct fake *f = ctx;
    f->calls_set++;
    for (size_t i = 0; i < n; i++)
        if (s[i].key == RP_CTL_KEY_INTERVAL && s[i].value == 9999000000ull) {
            snprintf(err, errlen, "the fake agent refuses interval=%s", s[i].text);
            return -1;
        }
    for (size_t i = 0; i < n; i++) {
        if (s[i].key == RP_CTL_KEY_INTERVAL)
            f->interval_ns = s[i].value;
        else if (s[i].key == RP_CTL_KEY_ALLOC)
            f->alloc_bytes = s[i].value;
    }
    return 0;
}

static void fake_log(void *ctx, const char *line)
{
    struct fake *f = ctx;
    fprintf(stderr, "ctl_server: %s\n", line);
    if (f->log) {
        fprintf(f->log, "%s\n", line);
        fflush(f->log);
    }
}

static void fake_thread_start(void *ctx)
{
    struct fake *f = ctx;
    f->calls_thread_start++;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ctl_server SOCKET [--relax-mode] [--log FILE] "
                "[--discovery] [--threads N] [--bare] [--bad-status]\n");
        return 2;
    }
    static struct fake f = {.kinds = RP_CTL_KIND_ALL, .interval_ns = 10000000,
                     .alloc_bytes = 524288, .nthreads = 2};
    int relax = 0, discovery = 0, bare = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--relax-mode"))
            relax = 1;
        else if (!strcmp(argv[i], "--discovery"))
            discovery = 1;
        else if (!strcmp(argv[i], "--bare"))
            bare = 1;
        else if (!strcmp(argv[i], "--bad-status"))
            f.bad_status = 1;
        else if (!strcmp(argv[i], "--log") && i + 1 < argc)
            f.log = fopen(argv[++i], "a");
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            f.nthreads = atol(argv[++i]);
        else {
            fprintf(stderr, "ctl_server: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    /* Block the stop signals before the server thread exists, so they are
     * taken only by sigwait below. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    /* A wide umask must not widen the socket's mode. */
    umask(0);

    struct rp_control_ops ops = {
        .status = fake_status, .flush = fake_flush, .rotate = fake_rotate,
        .start = fake_start, .stop = fake_stop, .set = fake_set, .log = fake_log,
        .thread_start = fake_thread_start,
    };
    if (bare)
        ops = (struct rp_control_ops){.log = fake_log};
    char err[1024];
    struct rp_control *ctl = rp_control_start(argv[1], &ops, &f, err, sizeof err);
    atomic_store(&f.ctl, ctl);
    if (!ctl) {
        fprintf(stderr, "%s\n", err);
        return 3;
    }
    if (relax && chmod(argv[1], 0666) != 0) {
        perror("chmod");
        return 1;
    }
    char dpath[4096] = "";
    if (discovery) {
        struct rp_discovery d = {.socket = rp_control_path(ctl),
                                 .main = "org.example.FakeMain --port 8080",
                                 .options = "ctl=test"};
        if (rp_discovery_write(&d, NULL, dpath, sizeof dpath, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    printf("ready %ld\n", (long)getpid());
    fflush(stdout);

    int sig;
    sigwait(&set, &sig);
    rp_control_stop(ctl);
    rp_discovery_remove(dpath);
    if (f.log)
        fclose(f.log);
    printf("stopped\n");
    return 0;
}
