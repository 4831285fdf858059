/*
 * tools/commands/push_state.h — what `ringprof push --follow` remembers between
 * runs: per recording, how far its chunks have been delivered.
 *
 * A recording's chunks are finished in the order of their seq (one flusher
 * writes them), and push sends them in that order, one request at a time. So
 * one watermark per recording says everything: every chunk whose seq is below
 * `next` is done (delivered, rejected, or counted missing), and of chunk `next`
 * the first `parts` requests were answered (a chunk is one request per kind and
 * --period window: push_body.h). A restart resumes exactly there: nothing
 * acknowledged is sent again and nothing is skipped. Recordings are keyed by
 * the recording.id in the chunk headers, never by file names; a chunk of a done
 * seq that was opened after the newest one answered (`last_start`) is a later
 * JVM's under the same id (the agent's recording= option), whose count starts
 * again at 0: the caller sends it as a new run of the recording, from `since`
 * on (chunks opened before it are the earlier JVMs', done).
 *
 * The file. Text, one record a line, replaced as a whole after every answered
 * request: a temporary file made in the held directory with
 * O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600), written, fsynced, renamed over the
 * state file with renameat and the directory fsynced; a crash leaves the old
 * state or the new one, never a mixture, and at worst the request in flight is
 * sent again. The directory is opened once and every later call goes through
 * its descriptor. It must not be writable by its group or others (unless
 * sticky, where nobody can replace our file), and the state file must be a
 * regular file of ours (or root's) with one link (ringprof/trust.h): a file
 * someone else could change would decide what push skips. A state file that
 * does not parse is an error, never a fresh start (that would send everything
 * again). One process at a time: the state's lock file "<state>.lock" is held
 * (flock) while it runs.
 *
 * Size: one line per recording. Recordings none of whose files remain are
 * dropped, oldest first, once there are more than RP_PUSH_STATE_RECS.
 *
 * The tool's one thread; allocation failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_PUSH_STATE_H
#define RINGPROF_TOOLS_PUSH_STATE_H

#include <stddef.h>
#include <stdint.h>

/* The state file's default name, in the followed directory. */
#define RP_PUSH_STATE_NAME ".ringprof-push.state"
/* Recordings kept before the ones with no file left are dropped. */
#define RP_PUSH_STATE_RECS 4096
/* The longest recording.id push accepts (the agent's are about 50 bytes). */
#define RP_PUSH_ID_MAX 128

struct rp_push_rec {
    char *id;                 /* recording.id                                     */
    uint32_t next;            /* chunks with seq < next are done                  */
    uint32_t parts;           /* requests of chunk `next` already answered        */
    int part_rejected;        /* one of those was rejected                        */
    uint64_t sent, rejected, missing;  /* chunks, over the state's life          */
    uint64_t seen;            /* wall seconds: a file of it was last seen then    */
    uint64_t last_start;      /* start.wall_ns of the newest chunk answered        */
    uint64_t since;           /* start.wall_ns of the current JVM's first chunk    */
                              /* under this id; 0: the only JVM seen              */
    int present;              /* scratch for the caller: a file of it is in DIR   */
};

struct rp_push_state {
    char *target;             /* the backend the state was written for           */
    char *plan;               /* what shapes a chunk's requests (protocol,       */
                              /* format, period, kinds)                           */
    struct rp_push_rec *recs;
    size_t n, cap;
    int dfd;                  /* the held directory; -1 for a state in memory     */
    int lockfd;
    char name[256];           /* the state file's name in dfd                     */
    char shown[4096];         /* its path as given, for messages                  */
};

/*
 * rp_push_state_open: take the state at `path` (a file whose directory is
 * opened once and kept), lock it and read it if it exists; an absent file is
 * an empty state. path NULL: a state in memory only (nothing is written).
 * @return 0, or -1 with a reason in err that names the file: its directory
 * cannot be opened or may be written by others, another push holds it, it is
 * not a file of ours, or line N does not parse.
 */
int rp_push_state_open(struct rp_push_state *s, const char *path, char *err,
                       size_t errlen);

/* The record of recording `id`, made (next 0) when `create` and absent;
 * NULL when absent and not `create`. Pointers are valid until the next call
 * that creates or prunes. */
struct rp_push_rec *rp_push_state_rec(struct rp_push_state *s, const char *id,
                                      int create);

/* Set the target and plan (copied). */
void rp_push_state_set(struct rp_push_state *s, const char *target, const char *plan);

/* Drop recordings without a file in DIR (present 0), oldest seen first, while
 * there are more than `keep`. */
void rp_push_state_prune(struct rp_push_state *s, size_t keep);

/* Write the state (see The file above). A state in memory does nothing.
 * @return 0, or -1 with a reason in err (the old state is then intact). */
int rp_push_state_save(struct rp_push_state *s, char *err, size_t errlen);

/* Release the lock, close and free. */
void rp_push_state_close(struct rp_push_state *s);

/* Whether `id` can be a key: 1 to RP_PUSH_ID_MAX printable ASCII bytes, no
 * space. */
int rp_push_id_ok(const char *id);

#endif
