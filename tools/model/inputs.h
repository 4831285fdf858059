/*
 * tools/model/inputs.h — turning the command line's INPUT... into a list of chunk files,
 * and reporting what the reader finds wrong with them.
 *
 * An INPUT is a chunk file, a directory (its *.rpc and *.rpc.part files, not
 * recursive), or a glob pattern (expanded here too, for shells that pass it through
 * quoted). Files are returned sorted by name, which for ringprof's names is oldest
 * first across processes. A ".part" file is a chunk still being written, or left by
 * a process that died; it is read like any other, up to its last whole segment.
 */
#ifndef RINGPROF_TOOLS_INPUTS_H
#define RINGPROF_TOOLS_INPUTS_H

#include <stddef.h>
#include <stdint.h>

struct rp_inputs {
    char **paths;
    size_t n, cap;
};

/* Expand argv[0..argc) into `in`. Unmatched inputs are reported on stderr and
 * counted. @return the number of inputs that matched nothing or could not be read. */
int rp_inputs_expand(struct rp_inputs *in, int argc, char **argv);
void rp_inputs_free(struct rp_inputs *in);

/* Whether a directory entry's name is one a directory INPUT contributes
 * (*.rpc, *.rpc.part). */
int rp_is_chunk_name(const char *name);

/*
 * rp_chunk_in_recording: whether the chunk file `path` belongs to recording `id`
 * (its header's recording.id). @return 1 if it does; 0 if it belongs to another,
 * whose id (or "none") goes to `other` (cap bytes); -1 when its header cannot be
 * read (nothing is printed: the real pass reports it).
 */
int rp_chunk_in_recording(const char *path, const char *id, char *other, size_t cap);

/*
 * rp_inputs_keep_recording: keep only the files of recording `id` (--recording),
 * and those whose header cannot be read, for the real pass to report. @return how
 * many were left out; the first of them is described in `first` (cap bytes):
 * "PATH (recording OTHER)".
 */
size_t rp_inputs_keep_recording(struct rp_inputs *in, const char *id, char *first,
                                size_t cap);

/* Diagnostics from the reader, printed as "ringprof: FILE: offset N: REASON" (or
 * "ringprof: FILE: REASON" for the file as a whole, RP_READER_NO_OFFSET) and
 * counted. `quiet` suppresses printing (counts still kept). */
struct rp_diag_counts {
    uint64_t warnings, fatal;
    int quiet;
};
void rp_diag_print(void *arg, const char *path, uint64_t offset, const char *reason,
                   int fatal);

/* Progress on stderr, only when stderr is a terminal: "\r[k/n] name". */
void rp_progress(size_t k, size_t n, const char *path);
void rp_progress_done(void);

#endif
