/*
 * tools/model/inputs.h — turning the command line's INPUT... into a list of chunk files,
 * and reporting what the reader finds wrong with them.
 *
 * An INPUT is a chunk file, a directory (its *.rpc and *.rpc.part files, not
 * recursive), or a glob pattern (expanded here too, for shells that pass it through
 * quoted). Files are returned sorted by name, which for ringprof's names is oldest
 * first across processes. A ".part" file is a chunk still being written, or left by
 * a process that died; it is read like any other, up to its last whole segment.
 *
 * Each chunk is read once. A chunk is identified by its header's recording.id and
 * chunk.seq (ringprof/format.h): two files with the same pair hold the same chunk
 * (one file given twice, a directory and a glob over it, a copy, a ".part" the
 * writer finished while it was being listed), and only one of them is kept: the
 * finished name over a ".part", then the longer file (a copy cut short holds
 * less), then the first given. A chunk without those keys (another writer's, or
 * an older one's) is identified by its bytes, its size and a 64-bit hash of them:
 * identical copies are read once, while a copy cut short differs and is read as
 * well. A file whose header cannot be read is kept, for the reader to report. A
 * ".part" that is gone by the time its header is read, because its writer
 * finished it meanwhile, is read under its finished name. Every command reads its
 * inputs through rp_inputs_expand, so every command keeps this rule, and says in
 * one line what it left out.
 */
#ifndef RINGPROF_TOOLS_INPUTS_H
#define RINGPROF_TOOLS_INPUTS_H

#include <stddef.h>
#include <stdint.h>

struct rp_inputs {
    char **paths;
    size_t n, cap;
    /* Set by the caller before rp_inputs_expand, for the duplicates line: what
     * follows "ringprof " in it ("convert", "diff: base"; NULL: nothing), and
     * whether it is left out (--quiet). */
    const char *cmd;
    int quiet;
    /* Filled by rp_inputs_expand: paths[i]'s chunk identity (above), NULL when its
     * header could not be read; and how many inputs were left out as copies. */
    char **ids;
    size_t dups;
};

/* Expand argv[0..argc) into `in` and leave out the copies of a chunk kept
 * (above), saying so on stderr in one line unless in->quiet: "ringprof CMD: left
 * out 3 duplicate inputs (each chunk is read once): the first, B, is chunk 0 of
 * recording R, read from A". Unmatched inputs are reported on stderr and counted.
 * Call it once per struct. @return the number of inputs that matched nothing or
 * could not be read. */
int rp_inputs_expand(struct rp_inputs *in, int argc, char **argv);
void rp_inputs_free(struct rp_inputs *in);

/*
 * rp_inputs_shared: how many chunks both `a` and `b` hold (by identity, after
 * each was expanded): what `ringprof diff` checks its two sides for. The first
 * of them in a's order is a->paths[*first_a] and b->paths[*first_b] (not set
 * when there is none).
 */
size_t rp_inputs_shared(const struct rp_inputs *a, const struct rp_inputs *b,
                        size_t *first_a, size_t *first_b);

/* Whether `path` names a ".part" chunk (a name ending in ".rpc.part"). */
int rp_is_part_name(const char *path);

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
 * and those whose header cannot be read, for the real pass to report (their ids
 * move with them). @return how many were left out; the first of them is
 * described in `first` (cap bytes): "PATH (recording OTHER)".
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
