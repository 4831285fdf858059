/*
 * ringprof/control.h — what the agent's control socket and the tools agree on:
 * the protocol's version and size limits, where an agent announces itself and
 * what its discovery file holds.
 *
 * The protocol itself (commands, replies, errors) is docs/control.md; the agent
 * parses requests in src/core/control_proto.c and serves them in src/control/
 * (control.h), the tools speak it in tools/commands/ (ctl_client.h). Both sides
 * include this header, so a limit or a name changed here changes on both. Plain
 * constants; nothing to link.
 */
#ifndef RINGPROF_CONTROL_H
#define RINGPROF_CONTROL_H

/* The protocol version, sent in every reply. Adding a command, a reply field or
 * an accepted value keeps it; removing or changing the meaning of anything raises
 * it (docs/control.md, "Versioning"). */
#define RP_CONTROL_PROTOCOL 1

/* The longest request line, its "\n" included. Requests are a few words; 4 KiB
 * leaves room for any future argument while bounding what a client can make the
 * server hold (one such buffer per connection). */
#define RP_CONTROL_REQUEST_MAX 4096

/* The longest reply, its "\n" included. A status reply lists per-thread figures;
 * 1 MiB holds several thousand threads. The agent turns a larger reply into an
 * error reply ("reply too large"); a tool refuses to read past the larger
 * RP_CONTROL_THREADS_REPLY_MAX, the one reply allowed to exceed this. */
#define RP_CONTROL_REPLY_MAX (1u << 20)

/* The longest reply to `threads` (a thread dump). Every thread's whole stack
 * is in it, at a few hundred bytes a frame: 16 MiB holds a thousand threads of
 * a hundred frames with room to spare. A larger dump is cut: the threads in a
 * deadlock first, then the others while they fit, and the reply says how many
 * it left out ("threads_omitted"); a tool accepts replies up to this size. */
#define RP_CONTROL_THREADS_REPLY_MAX (16u << 20)

/* sun_path holds 108 bytes with the NUL, so a socket path has at most 107. */
#define RP_CONTROL_PATH_MAX 107

/* The discovery directory of uid U: the agent's "<pid>.json", "<pid>.attach-error",
 * "<pid>.attach-dir" and, when the recording directory's path is too long,
 * "<pid>.sock". The agent
 * creates it with mode 0700 and writes nothing into it unless it is trusted for
 * its own uid (ringprof/trust.h); the tools read it only when it is trusted for U. */
#define RP_DISCOVERY_DIR_FMT    "/tmp/ringprof-%u"
#define RP_DISCOVERY_DIR_PREFIX "/tmp/ringprof-"
#define RP_DISCOVERY_SUFFIX     ".json"
#define RP_ATTACH_ERROR_SUFFIX  ".attach-error"
#define RP_ATTACH_DIR_SUFFIX    ".attach-dir"

/* What a tool reads of the files in it, at most. A discovery file is one line of
 * JSON with the option string (at most 2047 bytes) and the main class and
 * arguments (at most 1023) in it: 64 KiB is ample. An attach error is one line
 * the agent cuts at 1023 bytes. A larger file is not ours and is not read. */
#define RP_DISCOVERY_FILE_MAX   (64 * 1024)
#define RP_ATTACH_ERROR_MAX     1024

/* The members of a discovery file, one JSON object on one line (docs/control.md,
 * "Discovery files"), in the order the agent writes them
 * (src/control/control_discovery.c); the tools read them in
 * tools/commands/ctl_find.c. Adding a member keeps RP_CONTROL_PROTOCOL;
 * renaming or removing one raises it. */
#define RP_DISCOVERY_KEY_PID        "pid"         /* the pid as the agent sees it  */
#define RP_DISCOVERY_KEY_UID        "uid"         /* its effective uid             */
#define RP_DISCOVERY_KEY_SOCKET     "socket"      /* the control socket's path     */
#define RP_DISCOVERY_KEY_MAIN       "main"        /* main class and arguments      */
#define RP_DISCOVERY_KEY_OPTIONS    "options"     /* the option string, or null    */
#define RP_DISCOVERY_KEY_START_TIME "start_time"  /* UTC, "2026-11-21T06:02:02Z"   */
#define RP_DISCOVERY_KEY_START_WALL_NS "start_wall_ns"       /* CLOCK_REALTIME  */
/* Field 22 of /proc/<pid>/stat: with the pid, it tells the agent's process from
 * a later one that reuses the pid. */
#define RP_DISCOVERY_KEY_PROC_START_TICKS "proc_start_ticks"
#define RP_DISCOVERY_KEY_VERSION    "ringprof"    /* the agent's version           */
#define RP_DISCOVERY_KEY_PROTOCOL   "protocol"    /* RP_CONTROL_PROTOCOL           */

#endif
