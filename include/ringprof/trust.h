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
 *   A path is trusted for U when, in addition, every component of it as given
 *   (and of the working directory, for a relative path) is trusted: every
 *   directory on the way belongs to U or root and is not writable by others,
 *   except that a sticky directory (/tmp, /var/tmp) may be, since there nobody can
 *   rename or remove what another user owns; and every symlink on the way belongs
 *   to U or root, wherever it sits, and leads through trusted components in turn.
 *   A link of another user's is refused even in a sticky directory: its owner may
 *   remove it and plant another at any time, so it can point anywhere, at any
 *   moment, whatever it points at when it is checked.
 *
 * A trusted path is opened once and then used by descriptor (rp_trust_dir_open):
 * every later file operation is an *at() call on the descriptor with O_NOFOLLOW,
 * so the path is never resolved again and nothing can be swapped in between.
 *
 * The agent records only into a trusted path, held so (a sticky world-writable
 * dir= is replaced by its private subdirectory RP_PRIVATE_SUBDIR_FMT); retention
 * and orphan recovery touch only chunk files that belong to the agent's uid; the
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

/* rp_trust_dir_open's flags. */
#define RP_TRUST_CREATE 1u    /* make missing directories (mode `mode`, less the umask) */
#define RP_TRUST_SHARED 2u    /* the directory itself may be sticky and writable by
                                 others (a socket's directory, or a dir= for which a
                                 private subdirectory is then used)                 */

/* The most symlinks one walk follows, as the kernel's path lookup (MAXSYMLINKS):
 * one more is ELOOP. */
#define RP_TRUST_MAX_LINKS 40

/*
 * rp_trust_dir_open: walk the directory `path` component by component as given
 * and check each one before using it (the rule above), then hold it. A relative
 * path is taken from the working directory, whose components are checked too.
 * Each component is opened with O_PATH|O_NOFOLLOW in the directory held before it;
 * a symlink is checked before it is followed (at most RP_TRUST_MAX_LINKS of them),
 * "." and ".." are resolved on the directories held, and with RP_TRUST_CREATE a
 * missing directory is made with mkdirat in its checked parent and then checked
 * like the others (an existing one keeps its mode). The directory itself must not
 * be writable by others unless RP_TRUST_SHARED is given and it is sticky; the
 * caller tells that case from fstat of the descriptor. Nothing is created unless
 * everything above it was trusted. `resolved` (PATH_MAX bytes, if not NULL) gets
 * the path walked, symlinks replaced by their targets: for messages and status,
 * never to be opened again by path.
 * @return the directory's descriptor (O_RDONLY|O_DIRECTORY|O_CLOEXEC), to use with
 * the *at() calls; or -1 with errno and, in why, a phrase that names the component
 * at fault: EPERM when it is not trusted ("/tmp/nb/rec is a symlink that belongs
 * to uid 65534, not to root", "/srv/x belongs to uid 1000 (mode 0755), not to
 * root", "/srv/y may be written by every user (mode 0777, owner uid 0)"); ENOTDIR
 * for a component that is not a directory ("/srv/f is a regular file"); ELOOP;
 * ENAMETOOLONG; ENOENT without RP_TRUST_CREATE ("/srv/z does not exist"); else the
 * system's errno ("cannot create /srv/ro/a"), which the caller's message adds.
 * Allocates (freed before it returns); any thread; not async-signal-safe.
 */
int rp_trust_dir_open(const char *path, uid_t uid, unsigned flags, mode_t mode,
                      char *resolved, char *why, size_t whylen);

/*
 * rp_trust_path: is the existing directory `dir` a trusted path for `uid`? It is
 * walked as rp_trust_dir_open does (nothing created) and let go. `dir` itself must
 * not be writable by others unless `sticky_ok` is 1 and it is sticky. The resolved
 * path is copied to `resolved` (PATH_MAX bytes) if not NULL. A caller that then
 * uses `dir` by path trusts that nobody but `uid` and root can change what it
 * leads to; one that creates or removes files there should hold the directory
 * with rp_trust_dir_open instead.
 * @return 0; 1 when `dir` itself is sticky and writable by others and sticky_ok
 * is 0 (everything else is trusted: the caller may use a private subdirectory);
 * or -1 with why, which then names the component at fault, e.g.
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
