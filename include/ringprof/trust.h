/*
 * ringprof/trust.h — which files and directories ringprof believes, and the
 * directory names the agent and the tools agree on.
 *
 * ringprof is run by operators, often as root, against JVMs that belong to other
 * users. Everything the tools read about an agent (a discovery file, an attach
 * error) and everything the agent writes into (its recording directory, its
 * control socket's directory) sits in a directory that some user owns. A file
 * tells the truth only if nobody but the user it speaks for could have written it,
 * so the agent and the tools apply one rule, stated here once:
 *
 *   A directory or file is trusted for uid U when it is what it claims (a real
 *   directory or a regular file, never a symlink), it belongs to U or to root, and
 *   neither its group nor others may write it. A file must also have exactly one
 *   link (a hard link to someone else's file would carry that file's owner) and
 *   stay within the size its reader expects.
 *
 *   A path is trusted for U when, in addition, every directory above it belongs to
 *   U or root and is not writable by others, except that a sticky directory (/tmp,
 *   /var/tmp) may be: there nobody can rename or remove what another user owns.
 *
 * The agent records only into a trusted path (a sticky world-writable dir= is
 * replaced by its private subdirectory RP_PRIVATE_SUBDIR_FMT); retention and
 * orphan recovery touch only chunk files that belong to the agent's uid; the
 * control socket's directory must be a trusted path (sticky allowed, since nobody
 * else can replace a socket there). The tools read discovery and attach-error files
 * only through a trusted directory descriptor, open them with O_NOFOLLOW and check
 * them with fstat, and then confirm with SO_PEERCRED that the socket a file names is
 * served by the process the file names, running as that uid. docs/control.md,
 * "Trust", is the user's version of these rules.
 *
 * Pure C, no JVM, no signals. Every function may be called from any thread; none
 * is async-signal-safe (they format messages). `why` gets one phrase that a
 * message can carry after the path, e.g. "belongs to uid 65534 (mode 0777), not
 * to root".
 */
#ifndef RINGPROF_TRUST_H
#define RINGPROF_TRUST_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ringprof/control.h"   /* the discovery directory's names */

#ifdef __cplusplus
extern "C" {
#endif

/* The private subdirectory the agent records into when dir= names a sticky
 * directory that others may write (dir=/tmp): "<dir>/ringprof-<uid>". In /tmp it
 * is the discovery directory itself, which is private to the uid already. */
#define RP_PRIVATE_SUBDIR_FMT   "ringprof-%u"

/*
 * rp_trust_stat: is `st` (from lstat or fstat) trusted for `uid` (the rule above)?
 * `type` is S_IFDIR or S_IFREG; a regular file must also have one link and at most
 * `max` bytes (0: no bound). @return 0, or -1 with the phrase in why.
 */
int rp_trust_stat(const struct stat *st, uid_t uid, mode_t type, off_t max,
                  char *why, size_t whylen);

/*
 * rp_trust_opendir: open the directory `path` (O_DIRECTORY, and O_NOFOLLOW so a
 * symlink as its last component is refused) and check it with rp_trust_stat.
 * @return the descriptor (O_CLOEXEC), or -1 with why ("does not exist" when it
 * does not, errno ENOENT).
 */
int rp_trust_opendir(const char *path, uid_t uid, char *why, size_t whylen);

/*
 * rp_trust_openat: open `name` in the directory `dfd` for reading (O_NOFOLLOW,
 * O_NONBLOCK so a FIFO cannot block) and check it with rp_trust_stat as a regular
 * file of at most `max` bytes. @return the descriptor, or -1 with why.
 */
int rp_trust_openat(int dfd, const char *name, uid_t uid, off_t max, char *why,
                    size_t whylen);

/*
 * rp_trust_path: is the existing directory `dir` a trusted path for `uid`? It is
 * resolved (realpath) and every directory from "/" down to it is checked: each
 * must belong to `uid` or root, and one that others may write must be sticky.
 * `dir` itself must not be writable by others unless `sticky_ok` is 1 and it is
 * sticky. The resolved path is copied to `resolved` (PATH_MAX bytes) if not NULL.
 * @return 0; 1 when `dir` itself is sticky and writable by others and sticky_ok
 * is 0 (everything else is trusted: the caller may use a private subdirectory);
 * or -1 with why, which then names the directory at fault, e.g.
 * "/home/alice belongs to uid 1000 (mode 0755), not to root".
 */
int rp_trust_path(const char *dir, uid_t uid, int sticky_ok, char *resolved,
                  char *why, size_t whylen);

/*
 * rp_trust_escape: copy `src` into `dst` (cap bytes, always terminated) with
 * control characters made visible: bytes below 0x20, 0x7f, and the C1 controls
 * U+0080..U+009F (in UTF-8, 0xc2 0x80..0x9f) become "\xNN" (the C1 ones "\u00NN"),
 * so text from a file or a socket that someone else wrote cannot move the cursor,
 * change colours or set a window title on an operator's terminal. A result cut
 * for want of room ends in "...". @return dst.
 */
char *rp_trust_escape(char *dst, size_t cap, const char *src);

#ifdef __cplusplus
}
#endif
#endif /* RINGPROF_TRUST_H */
