/*
 * src/control/control_reply.c — a request line to its reply (control_server.h).
 *
 * A line is parsed (control_proto.h); a command whose reply could take the
 * replies held past RP_CONTROL_HELD_MAX is answered "busy" without being run;
 * otherwise the head ("protocol", "ok", "command") is written, the agent's
 * callback adds its members, and the server adds its own (the echo of start,
 * stop and set; "control" in status; version and help, which need no callback).
 * Whatever goes wrong on the way (a callback's error, a callback that left the
 * nesting open, a reply over its limit, no memory) becomes an error reply,
 * short enough always to fit. The reply is left, "\n" included, in ctl->reply
 * for the connection to send (control_conn.c).
 */
#include "control/control_server.h"
#include "ringprof/errbuf.h"

#include <stdio.h>
#include <unistd.h>

#ifndef RINGPROF_VERSION
#define RINGPROF_VERSION "unknown"
#endif

static void reply_head(struct rp_json *j, int ok, enum rp_ctl_cmd cmd)
{
    rp_json_reset(j);
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "protocol", RP_CONTROL_PROTOCOL);
    rp_json_kv_bool(j, "ok", ok);
    if (rp_ctl_cmd_name(cmd) && cmd != RP_CTL_NONE)
        rp_json_kv_string(j, "command", rp_ctl_cmd_name(cmd));
}

static void reply_error(struct rp_json *j, enum rp_ctl_cmd cmd, const char *msg)
{
    reply_head(j, 0, cmd);
    rp_json_kv_string(j, "error", msg);
}

static void kinds_array(struct rp_json *j, unsigned kinds)
{
    rp_json_array_begin(j);
    for (unsigned bit = 1; bit <= RP_CTL_KIND_ALL; bit <<= 1)
        if (kinds & bit)
            rp_json_string(j, rp_ctl_kind_name(bit));
    rp_json_array_end(j);
}

static void reply_help(struct rp_json *j)
{
    rp_json_key(j, "commands");
    rp_json_array_begin(j);
    for (int c = RP_CTL_STATUS; c <= RP_CTL_HELP; c++)
        rp_json_string(j, rp_ctl_cmd_name((enum rp_ctl_cmd)c));
    rp_json_array_end(j);
    rp_json_key(j, "kinds");
    kinds_array(j, RP_CTL_KIND_ALL);
    rp_json_key(j, "settings");
    rp_json_array_begin(j);
    for (int k = 1; k < RP_CTL_KEYS; k++)
        rp_json_string(j, rp_ctl_key_name((enum rp_ctl_key)k));
    rp_json_array_end(j);
}

static void reply_settings(struct rp_json *j, const struct rp_ctl_request *req)
{
    rp_json_key(j, "settings");
    rp_json_object_begin(j);
    for (size_t i = 0; i < req->nsettings; i++) {
        const struct rp_ctl_setting *s = &req->settings[i];
        rp_json_kv_u64(j, rp_ctl_key_reply_name(s->key), s->value);
    }
    rp_json_object_end(j);
}

/* The server's own part of status: its connections, the reply memory it holds,
 * and the clients it turned away (docs/control.md, "control"). */
static void status_control(const struct rp_control *ctl, struct rp_json *j)
{
    rp_json_key(j, "control");
    rp_json_object_begin(j);
    rp_json_kv_u64(j, "clients", ctl->nconns);
    rp_json_kv_u64(j, "clients_max", RP_CONTROL_CLIENTS_MAX);
    rp_json_kv_u64(j, "reply_bytes", ctl->held);
    rp_json_kv_u64(j, "reply_bytes_max", RP_CONTROL_HELD_MAX);
    rp_json_kv_u64(j, "busy", ctl->st.busy);
    rp_json_kv_u64(j, "dropped", ctl->st.dropped);
    rp_json_kv_u64(j, "evicted", ctl->st.evicted);
    rp_json_kv_u64(j, "socket_remade", ctl->st.remade);
    rp_json_object_end(j);
}

/* Run the command. @return 0 with the members added to the open reply, or -1
 * with the reason in err. */
static int run_command(struct rp_control *ctl, const struct rp_ctl_request *req,
                       char *err, size_t errlen)
{
    struct rp_json *j = &ctl->reply;
    const struct rp_control_ops *ops = &ctl->ops;
    char path[4096];
    int rc = 0;
    const char *name = rp_ctl_cmd_name(req->cmd);

#define NEED(fn)                                                                 \
    if (!ops->fn) {                                                              \
        rp_fail(err, errlen, "'%s' is not supported by this agent", name);      \
        return -1;                                                               \
    }
    switch (req->cmd) {
    case RP_CTL_STATUS:
        NEED(status);
        rc = ops->status(ctl->ctx, j, err, errlen);
        if (rc == 0 && rp_json_depth(j) == 1)
            status_control(ctl, j);
        return rc;
    case RP_CTL_FLUSH:
    case RP_CTL_ROTATE:
        path[0] = '\0';
        if (req->cmd == RP_CTL_FLUSH) {
            NEED(flush);
            rc = ops->flush(ctl->ctx, path, sizeof path, err, errlen);
        } else {
            NEED(rotate);
            rc = ops->rotate(ctl->ctx, path, sizeof path, err, errlen);
        }
        if (rc == 0) {
            path[sizeof path - 1] = '\0';
            rp_json_kv_string(j, "path", path[0] ? path : NULL);
        }
        return rc;
    case RP_CTL_START:
    case RP_CTL_STOP:
        if (req->cmd == RP_CTL_START) {
            NEED(start);
            rc = ops->start(ctl->ctx, req->kinds, err, errlen);
        } else {
            NEED(stop);
            rc = ops->stop(ctl->ctx, req->kinds, err, errlen);
        }
        if (rc == 0) {
            rp_json_key(j, "kinds");
            kinds_array(j, req->kinds);
        }
        return rc;
    case RP_CTL_SET:
        NEED(set);
        rc = ops->set(ctl->ctx, req->settings, req->nsettings, err, errlen);
        if (rc == 0)
            reply_settings(j, req);
        return rc;
    case RP_CTL_THREADS:
        NEED(threads);
        return ops->threads(ctl->ctx, j, err, errlen);
    case RP_CTL_VERSION:
        rp_json_kv_string(j, "ringprof", RINGPROF_VERSION);
        rp_json_kv_i64(j, "pid", (int64_t)getpid());
        return 0;
    case RP_CTL_HELP:
        reply_help(j);
        return 0;
    default:
        rp_fail(err, errlen, "internal error: command %d has no handler", (int)req->cmd);
        return -1;
    }
#undef NEED
}

/* Close the reply object and end the line. @return 0, or -1 if the writer failed
 * (then the text is not a whole reply). */
static int reply_finish(struct rp_json *j)
{
    rp_json_object_end(j);
    rp_json_raw(j, "\n", 1);
    return rp_json_error(j) == RP_JSON_OK ? 0 : -1;
}

void rp_control_error_reply(struct rp_json *j, enum rp_ctl_cmd cmd, const char *msg)
{
    reply_error(j, cmd, msg);
    reply_finish(j);
}

/* Why a reply that the agent filled could not be sent as it is. */
static const char *reply_problem(const struct rp_json *j, char *buf, size_t cap)
{
    switch (rp_json_error(j)) {
    case RP_JSON_TOO_LONG:
        snprintf(buf, cap, "reply too large (over %zu bytes)", rp_json_max(j));
        return buf;
    case RP_JSON_NOMEM:
        return "out of memory while building the reply";
    default:
        return "internal error: the agent wrote a malformed reply";
    }
}

/* Would a reply of up to `most` bytes take the replies held past
 * RP_CONTROL_HELD_MAX? Then answer "busy" into ctl->reply instead of running the
 * command, and @return 1. A dump must also leave room for one other reply
 * (control.h). */
static int busy(struct rp_control *ctl, enum rp_ctl_cmd cmd, size_t most)
{
    size_t room = cmd == RP_CTL_THREADS ? RP_CONTROL_REPLY_MAX : 0;
    if (ctl->held + most + room <= RP_CONTROL_HELD_MAX)
        return 0;
    char msg[256];
    ctl->st.busy++;
    snprintf(msg, sizeof msg, "busy: %zu bytes of replies wait to be read by other "
             "clients, and this reply may take %zu more (at most %zu are held at "
             "once); try again when they have been read", ctl->held, most,
             (size_t)RP_CONTROL_HELD_MAX);
    rp_control_error_reply(&ctl->reply, cmd, msg);
    return 1;
}

void rp_control_answer(struct rp_control *ctl, const char *line, size_t len)
{
    struct rp_json *j = &ctl->reply;
    struct rp_ctl_request req;
    char err[512], buf[128];

    if (rp_ctl_parse(line, len, &req, err, sizeof err) != 0) {
        rp_control_error_reply(j, req.cmd, err);
        return;
    }
    size_t most = req.cmd == RP_CTL_THREADS ? RP_CONTROL_THREADS_REPLY_MAX
                                            : RP_CONTROL_REPLY_MAX;
    if (busy(ctl, req.cmd, most))
        return;
    reply_head(j, 1, req.cmd);
    rp_json_set_max(j, most);
    err[0] = '\0';
    if (run_command(ctl, &req, err, sizeof err) != 0) {
        if (!err[0])
            snprintf(err, sizeof err, "'%s' failed", rp_ctl_cmd_name(req.cmd));
        rp_control_error_reply(j, req.cmd, err);
        return;
    }
    /* The agent's members must leave exactly the reply object open, and the
     * whole line must fit: otherwise the reply is replaced by an error reply
     * (short, so it always fits). */
    if (rp_json_depth(j) != 1 && rp_json_error(j) == RP_JSON_OK) {
        reply_error(j, req.cmd, "internal error: the agent wrote a malformed reply");
    } else if (reply_finish(j) == 0) {
        return;
    } else {
        reply_error(j, req.cmd, reply_problem(j, buf, sizeof buf));
    }
    reply_finish(j);
}

