/*
 * ringprof/recording.h — a recording directory: chunk naming, rotation, retention.
 *
 * A recording is a sequence of chunks written by one process into one directory.
 * Several processes may share the directory: chunk names begin with the UTC start
 * time and carry the pid and a sequence number ("20261121T060102Z-12345-000003.rpc"),
 * so they do not clash, and a plain sort is oldest first to the second. Within a
 * second it is not (pids are not zero-padded, and a seq past 999999 outgrows its six
 * digits), so ringprof orders chunks by (start, pid, seq) parsed from the name.
 *
 * Atomicity. The chunk being written is named "<name>.rpc.part". It is renamed to
 * "<name>.rpc" by rename(2) when it is closed, so a finished name always refers to a
 * finished file. A ".part" file is still readable at every instant (its segments are
 * independent). While it is open its writer holds a flock(2) on it.
 *
 * Recovery. If a writer died (kill -9), the next retention pass in that directory, by
 * any process, renames its ".part" to the finished name ("recovers" it). A ".part" is
 * an orphan when nobody holds its lock and the pid in its name is dead (kill(pid, 0)
 * fails with ESRCH) or is the caller's own pid (a previous process that had our pid:
 * a JVM that is pid 1 in its container gets pid 1 again after every restart). A
 * locked ".part" is never touched, whatever its pid says, so processes in different
 * pid namespaces can share a directory safely.
 *
 * Retention. At open, after every rotation and at close (and whenever
 * rp_recording_enforce is called), the finished chunks in the directory (any pid's)
 * are listed oldest first. The oldest are deleted while the total exceeds max_size
 * or while they are older than max_age (by their start time in the name). Only
 * regular files of our uid whose names are chunk names count: other files, subdirectories and
 * symlinks are never counted, followed or deleted. Neither the chunk being written
 * nor another live process's ".part" is ever deleted. The chunk this recording
 * finished last is kept too, so the path rp_recording_rotate returned stays valid
 * until the next rotation even when one chunk alone exceeds max_size. So the
 * directory holds at most max(max_size, one chunk) plus one open chunk per writing
 * process. Processes that share a directory should share limits: each enforces its
 * own, so the smallest wins.
 *
 * The directory. rp_recording_open walks `dir` as given, one component at a time,
 * and holds the directory by descriptor (ringprof/trust.h, rp_trust_dir_open):
 * nothing is created until everything above it is trusted, and every later file
 * operation of the recording (chunk create, the lock's descriptor, rename,
 * listing, the header check of an orphan, unlink) is an *at() call on that
 * descriptor with O_NOFOLLOW. A symlink that someone makes or changes on the way
 * after open therefore changes nothing. When the directory is removed (it has no
 * link left, or a create finds it gone), the next rp_recording_writer walks its
 * resolved path again the same way, creating it, and holds the new directory; if
 * that walk is refused or now ends elsewhere (a symlink made on the way since),
 * the chunk is not created (EPERM, counted in chunks_failed), and each later call
 * tries again. Paths (rp_recording_dir, rp_chunk_writer_path, what
 * rp_recording_rotate returns) are for messages and status: the recording never
 * opens them.
 *
 * Rotation. rp_recording_flush closes the current chunk when it has reached
 * chunk_size bytes or chunk_duration of age; the next rp_recording_writer call
 * starts the next one.
 *
 * Threads. One thread (the flusher) owns a recording. Not async-signal-safe.
 */
#ifndef RINGPROF_RECORDING_H
#define RINGPROF_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include "ringprof/chunk.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rp_recording_limits {
    uint64_t max_size;        /* bytes of finished chunks kept; 0: no limit        */
    uint64_t max_age_ns;      /* finished chunks older than this go; 0: no limit    */
    uint64_t chunk_size;      /* rotate at this many bytes; 0: never by size        */
    uint64_t chunk_duration_ns; /* rotate at this age; 0: never by age               */
};

/* Defaults (docs/recording.md explains them): keep 1 GiB or 7 days, whichever is hit
 * first; rotate at 16 MiB or 1 hour, so a flush request yields a file promptly and
 * retention deletes in steps of at most 16 MiB. */
#define RP_DEFAULT_MAX_SIZE        ((uint64_t)1 << 30)
#define RP_DEFAULT_MAX_AGE_NS      (7ull * 24 * 3600 * 1000000000ull)
#define RP_DEFAULT_CHUNK_SIZE      ((uint64_t)16 << 20)
#define RP_DEFAULT_CHUNK_DURATION_NS (3600ull * 1000000000ull)

struct rp_recording;

struct rp_recording_stats {
    uint64_t chunks_opened;
    uint64_t chunks_finished;      /* closed and renamed                            */
    uint64_t chunks_failed;        /* writer calls that could not create a chunk    */
    uint64_t chunks_recovered;     /* orphaned .part files of dead writers renamed  */
    uint64_t chunks_discarded;     /* orphans with no header (killed between
                                      creating the file and writing its header:
                                      shorter than the header): deleted, they held
                                      no samples                                  */
    uint64_t chunks_deleted;       /* by retention                                  */
    uint64_t bytes_deleted;
    uint64_t segments_failed;      /* sum over chunks of lost segments (a failed
                                      close counts its last segment as lost)       */
    uint64_t samples_failed;       /* samples in those segments: what the files
                                      count as lost.write (live and gc records
                                      included)                                   */
    uint64_t bytes_written;        /* sum over chunks                               */
    uint64_t dir_bytes;            /* finished chunks in the directory, last scan   */
    int last_errno;                /* latest failure of any kind, or 0              */
};

/*
 * rp_recording_open: walk `dir` as given (see The directory above), creating what
 * is missing (mode 0700, parents too) only below components already checked, check
 * that nobody but our uid and root can change it or anything on the way to it
 * (ringprof/trust.h: a directory or a symlink another user owns, or a directory
 * that others may write, is refused with EPERM and a line that names the
 * component at fault, its owner and mode; a sticky directory that others may
 * write, such as /tmp, is replaced by our private subdirectory
 * "<dir>/ringprof-<uid>", walked the same way), hold it, check that we can list
 * and write it, recover orphaned ".part" files, and apply retention.
 * rp_recording_dir() is then the directory used, resolved. `limits` NULL means the
 * RP_DEFAULT_* values. `meta` (n entries, copied)
 * goes into every chunk's header; the recording adds RP_META_PID, RP_META_HOST
 * (unless given), RP_META_CHUNK_SEQ, RP_META_RECORDING, RP_META_START_WALL and
 * RP_META_START_MONO, and drops the caller's entries with those keys but HOST.
 * The recording id is "<pid>-<start>-<64 random bits>", unless the caller gives a
 * non-empty RP_META_RECORDING (at most 111 bytes): then that one, so that whoever
 * started the process can tell its chunks from any other (`ringprof record`).
 * The first chunk is created lazily, by the first rp_recording_writer call.
 * @return the recording, or NULL with a one-line reason in `err` (naming the
 * directory and the system error) and errno set.
 */
struct rp_recording *rp_recording_open(const char *dir,
                                       const struct rp_recording_limits *limits,
                                       const struct rp_kv *meta, size_t n,
                                       char *err, size_t errlen);

/*
 * rp_recording_set_meta: from the next chunk created on, its header holds `key`
 * with `value` (copied), in place of the entry the caller gave at open or set
 * before; a NULL or empty value removes the key. The chunk open now keeps the
 * header it was created with. The keys the recording sets itself (see
 * rp_recording_open) cannot be set: EINVAL. @return 0, or -1 with errno (EINVAL,
 * ENOMEM: nothing changed).
 */
int rp_recording_set_meta(struct rp_recording *rec, const char *key, const char *value);

/*
 * rp_recording_writer: the current chunk's writer, creating the chunk if there is
 * none. @return NULL if the chunk cannot be created (counted in chunks_failed, errno
 * in last_errno; the next call tries again, so writing resumes when space returns:
 * call it once per flush interval, not per event). A name that is already taken
 * moves the chunk to the next seq (so chunk.seq may skip one); a directory that
 * was deleted is made again through the trusted walk (see The directory above).
 * The returned pointer changes on rotation: callers that cache chunk ids must
 * compare rp_recording_generation() and drop their caches when it changes.
 */
struct rp_chunk_writer *rp_recording_writer(struct rp_recording *rec);
uint64_t rp_recording_generation(const struct rp_recording *rec);

/*
 * rp_recording_flush: write the current segment; rotate if the chunk reached its
 * size or duration; apply retention after a rotation. If `rotated` is not NULL,
 * *rotated is set to 1 when the chunk was closed (even if closing or renaming it
 * failed): the writer returned by rp_recording_writer is then gone and must not be
 * used again; else 0. @return 0, or -1 if a write failed (counted; the recording
 * stays usable).
 */
int rp_recording_flush(struct rp_recording *rec, int *rotated);

/*
 * rp_recording_rotate: close the current chunk now (even if young) and rename it,
 * then apply retention. If `path` is not NULL, the finished file's path is copied
 * there (`pathlen` bytes, PATH_MAX always fits; empty string if there was no chunk).
 * @return 0, or -1 with errno if the close or the rename failed (the recording
 * stays usable) or if the path does not fit (ERANGE; the chunk is finished anyway).
 */
int rp_recording_rotate(struct rp_recording *rec, char *path, size_t pathlen);

/* Recover orphans and apply retention now (also done by open, rotate and close).
 * @return files deleted, or -1 if the directory could not be listed. */
int rp_recording_enforce(struct rp_recording *rec);

/* Close the current chunk, rename it, apply retention, free. NULL is accepted.
 * @return 0, or -1 if the close or the rename failed. */
int rp_recording_close(struct rp_recording *rec);

void rp_recording_stats(const struct rp_recording *rec,
                        struct rp_recording_stats *out);
/* The directory in use: dir= resolved, or its private subdirectory. For messages
 * and status: the recording holds the directory itself by descriptor. Constant
 * from open to close (a directory made again must resolve to it). */
const char *rp_recording_dir(const struct rp_recording *rec);
/* Why the last rp_recording_writer call could not create a chunk when the reason
 * was the directory: it had been removed, and making it again was refused or
 * failed (a phrase naming the component at fault, as in "it was removed, and
 * making it again was refused: /srv/rec is a symlink that belongs to uid 65534,
 * not to root"). NULL when that call succeeded or failed for another reason
 * (last_errno says which). Valid until the next rp_recording_writer call; the
 * owning thread only. */
const char *rp_recording_dir_error(const struct rp_recording *rec);
/* 1 if dir= was sticky and writable by others and the recording went into its
 * private subdirectory (rp_recording_dir), else 0. */
int rp_recording_in_subdir(const struct rp_recording *rec);

/* Build a chunk's file name (no directory, no suffix) for pid, UTC start time (wall
 * ns) and sequence number. @return 0, or -1 if pid < 1 or it does not fit in `cap`
 * (64 bytes always fit, suffixes included). */
int rp_recording_chunk_name(char *buf, size_t cap, long pid, uint64_t wall_ns,
                            uint32_t seq);

/* Parse a chunk file name (basename, with ".rpc" or ".rpc.part"). Only the names
 * rp_recording_chunk_name builds are accepted (no leading zeros in the pid, a seq of
 * at least six digits, a real date). @return 0 and the fields, or -1 if it is not a
 * chunk name. */
int rp_recording_parse_name(const char *name, long *pid, uint64_t *wall_s,
                            uint32_t *seq, int *is_part);

#ifdef __cplusplus
}
#endif
#endif /* RINGPROF_RECORDING_H */
