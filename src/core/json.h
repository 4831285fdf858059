/*
 * src/core/json.h — a small JSON writer for the control socket's replies.
 *
 * The writer appends to one growing buffer, in order, and places commas and colons
 * itself: the caller only opens and closes objects and arrays, names keys and
 * writes values. Strings are escaped as RFC 8259 requires (quote, backslash, every
 * control character); bytes that are not valid UTF-8 are replaced by U+FFFD, so
 * the output is always valid JSON in valid UTF-8 whatever a thread name or a path
 * holds. Doubles that JSON cannot express (NaN, infinities) are written as null.
 *
 * Errors are sticky, as with stdio's ferror: a call that would make the text
 * longer than `max`, that runs out of memory, or that breaks the nesting (a value
 * where a key is due, a close that does not match, more than RP_JSON_DEPTH_MAX
 * levels) sets the error and every later call does nothing. So a producer writes
 * all its fields without checking, and the caller checks rp_json_error() once.
 *
 * Threads: a writer belongs to one thread at a time. Not async-signal-safe (it
 * allocates).
 */
#ifndef RINGPROF_SRC_JSON_H
#define RINGPROF_SRC_JSON_H

#include <stddef.h>
#include <stdint.h>

/* Nesting deeper than this is an error. Replies are a few levels deep. */
#define RP_JSON_DEPTH_MAX 32

enum rp_json_err {
    RP_JSON_OK = 0,
    RP_JSON_TOO_LONG,     /* the text would exceed the writer's max            */
    RP_JSON_NOMEM,        /* malloc/realloc failed                             */
    RP_JSON_MISUSE        /* unbalanced close, a value without a key in an
                             object, a key outside one, too deep                */
};

struct rp_json {
    char *buf;
    size_t len, cap, max;
    enum rp_json_err err;
    int depth;
    /* Per open level: 'o' object or 'a' array, and whether it has an element. */
    char kind[RP_JSON_DEPTH_MAX];
    unsigned char nonempty[RP_JSON_DEPTH_MAX];
    int after_key;        /* a key was written; its value is next               */
    int done;             /* a complete top-level value has been written        */
};

/* rp_json_init: an empty writer whose text may grow to `max` bytes (the NUL that
 * rp_json_text adds is not counted). Allocates nothing until the first write. */
void rp_json_init(struct rp_json *j, size_t max);
/* Change the most the text may grow to (takes effect for later writes), and
 * read it. */
void rp_json_set_max(struct rp_json *j, size_t max);
size_t rp_json_max(const struct rp_json *j);
/* Add the members of `obj`, the text of a complete JSON object another writer
 * made (rp_json_text), to the object open in `j`, as if written one by one. */
void rp_json_members(struct rp_json *j, const char *obj, size_t len);
/* Free the buffer and reset to empty (the writer may be used again). */
void rp_json_free(struct rp_json *j);
/* Hand the text over: @return the buffer (NUL-terminated, the caller frees it),
 * its length in *len, and leave the writer empty as rp_json_free does; NULL with
 * *len 0 before any write. */
char *rp_json_take(struct rp_json *j, size_t *len);
/* Drop the text but keep the buffer and max, and clear the error. */
void rp_json_reset(struct rp_json *j);

/* A point in the text to come back to: rp_json_rewind drops everything written
 * after rp_json_mark (the text, the nesting, a sticky error), so a producer can
 * try an element and take it back when it did not fit (RP_JSON_TOO_LONG). */
struct rp_json_mark {
    struct rp_json state;
};
void rp_json_mark(const struct rp_json *j, struct rp_json_mark *m);
void rp_json_rewind(struct rp_json *j, const struct rp_json_mark *m);

void rp_json_object_begin(struct rp_json *j);
void rp_json_object_end(struct rp_json *j);
void rp_json_array_begin(struct rp_json *j);
void rp_json_array_end(struct rp_json *j);

/* The key of the next member; only inside an object, before each value. */
void rp_json_key(struct rp_json *j, const char *key);

/* Values. rp_json_string(j, NULL) writes null. */
void rp_json_string(struct rp_json *j, const char *s);
void rp_json_string_len(struct rp_json *j, const char *s, size_t len);
void rp_json_u64(struct rp_json *j, uint64_t v);
void rp_json_i64(struct rp_json *j, int64_t v);
void rp_json_double(struct rp_json *j, double v);
void rp_json_bool(struct rp_json *j, int v);
void rp_json_null(struct rp_json *j);

/* Key and value in one call, for object members. */
void rp_json_kv_string(struct rp_json *j, const char *key, const char *s);
void rp_json_kv_u64(struct rp_json *j, const char *key, uint64_t v);
void rp_json_kv_i64(struct rp_json *j, const char *key, int64_t v);
void rp_json_kv_double(struct rp_json *j, const char *key, double v);
void rp_json_kv_bool(struct rp_json *j, const char *key, int v);

/* Append text verbatim (used for the line's final "\n"). No checks on content. */
void rp_json_raw(struct rp_json *j, const char *s, size_t len);

/* The sticky error, RP_JSON_OK if none. */
enum rp_json_err rp_json_error(const struct rp_json *j);
/* The current nesting depth: 0 when every object and array is closed. */
int rp_json_depth(const struct rp_json *j);
/* The text so far, NUL-terminated ("" before any write); *len if not NULL. The
 * pointer is valid until the next write or rp_json_free. */
const char *rp_json_text(const struct rp_json *j, size_t *len);

#endif
