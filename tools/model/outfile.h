/*
 * tools/model/outfile.h — creating the files the tool writes (`-o`) so that no path
 * another user can change is followed.
 *
 * ringprof is often run as root, and its outputs often go where other users can
 * reach: /tmp, a shared scratch directory, a directory someone else prepared. A
 * plain fopen(PATH, "w") follows a symlink planted at PATH and truncates whatever
 * it points to, so every file the tool writes goes through this module instead:
 *
 *   - The directory it goes into is opened once and held by descriptor; everything
 *     after is an *at() call on that descriptor. Its path is walked one component
 *     at a time, and a symlink on the way is followed only if nobody but the caller
 *     and root could have put it there: the directory holding it is trusted for the
 *     caller (ringprof/trust.h), or it is sticky, belongs to the caller or root, and
 *     so does the link (the kernel's fs.protected_symlinks rule, kept whatever the
 *     sysctl says). A user's own symlinked directories work; another user's link,
 *     or any link in a directory another user may write, is refused.
 *   - The file is a new temporary in that directory, ".NAME.XXXXXXXX.tmp", created
 *     with O_CREAT|O_EXCL|O_NOFOLLOW, and renamed onto NAME once it is complete, so
 *     whatever was at NAME (a file, a symlink) is replaced, never followed or
 *     truncated. A write that fails leaves NAME as it was and removes the
 *     temporary; so does SIGINT, SIGTERM or SIGHUP while it is being written
 *     (where the signal had its default action). Only SIGKILL leaves it behind.
 *     The new file has mode 0666 less the umask and belongs to the caller; an
 *     earlier file's mode, owner and hard links are not carried over.
 *   - What cannot be replaced is written in place: a character device or FIFO at
 *     NAME (/dev/null, a terminal, a named pipe, whose open waits for a reader as
 *     fopen's would), and an open file of the caller's
 *     own reached through /proc (`/proc/self/fd/N`, `/dev/fd/N`, `/dev/stdout`,
 *     bash's `>(...)`), which the kernel reopens without a path lookup. A
 *     symlink at NAME leads there only if it sits in a trusted directory. A
 *     directory, socket or block device at NAME is refused.
 *
 * For the tool's one thread. A struct rp_outfile stays where it is from its open
 * to its commit or discard (the signal handler finds it there). Errors come back as one phrase in `why` (whylen
 * bytes), for a message of the form "ringprof CMD: PATH: WHY".
 */
#ifndef RINGPROF_TOOLS_OUTFILE_H
#define RINGPROF_TOOLS_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* The longest temporary name: "." + NAME (cut) + "." + 8 hex digits + ".tmp". */
#define RP_OUTFILE_TMP_MAX 256

struct rp_outfile {
    FILE *f;                        /* write the output here                      */
    int dfd;                        /* the held directory; -1 when written in     */
                                    /* place or once done                         */
    char name[256];                 /* the final name in dfd                      */
    char tmp[RP_OUTFILE_TMP_MAX];   /* the temporary's name                       */
};

/*
 * rp_outdir_open: open the directory `path` for creating files in, walking it as
 * above (every component, the last one too, is a directory or a link that may be
 * followed). With `mkmode` not 0 a missing last component is created with that
 * mode (before the umask). @return an O_PATH descriptor (O_CLOEXEC) usable as the
 * dirfd of *at() calls and fstat, or -1 with why, e.g. "/tmp/prof is a symlink
 * (owner uid 65534), and its directory /tmp may be written by every user (mode
 * 1777, owner uid 0): not followed".
 */
int rp_outdir_open(const char *path, mode_t mkmode, char *why, size_t whylen);

/*
 * rp_outfile_open: prepare to write `path` (its directory through rp_outdir_open,
 * its last component as above). @return 0 with o->f open for writing, or -1 with
 * why and o->f NULL (nothing was created). Either way the caller ends with
 * rp_outfile_commit or rp_outfile_discard.
 */
int rp_outfile_open(struct rp_outfile *o, const char *path, char *why, size_t whylen);

/* The same for `name` (one component) in the held directory `dfd`, which the
 * caller keeps. */
int rp_outfile_openat(struct rp_outfile *o, int dfd, const char *name, char *why,
                      size_t whylen);

/*
 * rp_outfile_commit: flush and close o->f and put the file in place (rename the
 * temporary onto its name). @return 0, or -1 with why when a write, the close or
 * the rename failed; the temporary is then removed and the name left as it was.
 */
int rp_outfile_commit(struct rp_outfile *o, char *why, size_t whylen);

/* Give the output up: close o->f and remove the temporary. It does nothing when
 * o->f is NULL (after a commit, after a failed open, on a zeroed struct). */
void rp_outfile_discard(struct rp_outfile *o);

#endif
