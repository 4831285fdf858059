/*
 * tools/commands/push_dir.h — the recording directory `ringprof push --follow`
 * watches: which finished chunks it holds, and who they are.
 *
 * Only regular files with the finished chunk names the recording writes
 * (ringprof/recording.h: "<start>Z-<pid>-<seq>.rpc") are chunks here; a
 * ".rpc.part" is a chunk still being written (counted, never read), and
 * everything else (the state file, symlinks, directories, other names) is
 * ignored. A chunk's identity is read from its header once, when its name
 * first appears (recording.id and chunk.seq: names can be copied or changed,
 * headers say what the agent wrote), and kept while the same file (device and
 * inode) has that name.
 *
 * Changes are seen through inotify (a rename into the directory is how the
 * agent finishes a chunk, and recovers an orphan; events for other names, push's
 * own state file among them, wake nothing), with a full listing at least
 * every rescan period in case events were lost (a queue overflow, a file
 * system that sends none). Where inotify cannot be had, the listing alone does
 * it, at the same period. A directory that is removed and made again (the agent
 * makes it again) is opened again by its path.
 *
 * The tool's one thread; allocation failure exits (model/xalloc.h).
 */
#ifndef RINGPROF_TOOLS_PUSH_DIR_H
#define RINGPROF_TOOLS_PUSH_DIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "push_body.h"

struct rp_push_file {
    char *name;               /* in the directory                                 */
    char *path;               /* directory/name                                   */
    dev_t dev;
    ino_t ino;
    int ident_ok;             /* the header could be read                         */
    struct rp_push_ident id;
    char *ident_err;          /* why not (reported once)                          */
    int reported;             /* ident_err was reported                           */
    int seen;                 /* in the latest listing                            */
};

struct rp_push_dir {
    char *path;
    int dfd;                  /* the directory, -1 while it is missing            */
    int ino_fd, wd;           /* inotify; -1 when not available                   */
    struct rp_push_file *files;
    size_t n, cap;
    size_t parts_open;        /* ".rpc.part" files in the latest listing          */
    int missing_reported;     /* the directory is missing, and that was said      */
};

/* Open `path` and start watching it. @return 0, or -1 with err when it cannot be
 * opened. */
int rp_push_dir_open(struct rp_push_dir *d, const char *path, char *err, size_t errlen);

/* List the directory: add the new chunks (reading their headers), drop the
 * ones that are gone. @return 0, or -1 with err when it cannot be listed (it
 * was removed: the next call opens it again). */
int rp_push_dir_scan(struct rp_push_dir *d, char *err, size_t errlen);

/* Wait at most timeout_ms for a change in the directory (or a signal).
 * @return 1 when something changed (or may have: rescan), 0 on timeout. */
int rp_push_dir_wait(struct rp_push_dir *d, int timeout_ms);

void rp_push_dir_close(struct rp_push_dir *d);

#endif
