/*
 * ringprof/labels.h — the grammar of a recording's labels: the agent option
 * `labels=` and the chunk header key RP_META_LABELS (format.h) hold the same
 * text, "KEY:VALUE;KEY:VALUE", which the tool turns into OTLP resource
 * attributes and pprof sample labels (docs/options.md, docs/format.md).
 *
 * The agent's options are separated by commas and are key=value, so a label
 * uses neither: ':' between key and value, ';' between labels. A KEY is 1 to
 * RP_LABEL_KEY_MAX bytes of [A-Za-z0-9_.-] starting with a letter or '_' (what
 * OpenTelemetry attribute names and Prometheus-style label names have in
 * common, dots aside); a VALUE is 1 to RP_LABEL_VALUE_MAX printable ASCII bytes
 * other than ',' and ';' (a ':' in the value is its own: only the first splits).
 * At most RP_LABELS_MAX labels, no key twice.
 *
 * Both sides include this header so that the grammar cannot drift: the agent
 * refuses a bad option with the reason rp_labels_check gives, and the tool
 * reads a header with rp_labels_next, which skips what does not parse (a chunk
 * is input, whoever wrote it). Header-only and pure: no allocation, safe on
 * any thread.
 */
#ifndef RINGPROF_LABELS_H
#define RINGPROF_LABELS_H

#include <stddef.h>
#include <string.h>

#define RP_LABEL_KEY_MAX   64
#define RP_LABEL_VALUE_MAX 256
#define RP_LABELS_MAX      32

/* One label of a labels string: pointers into that string, not terminated. */
struct rp_label {
    const char *key, *value;
    size_t klen, vlen;
};

static inline int rp_label_key_ok(const char *k, size_t n)
{
    if (n < 1 || n > RP_LABEL_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && (i == 0 || !((c >= '0' && c <= '9') || c == '.' || c == '-')))
            return 0;
    }
    return 1;
}

static inline int rp_label_value_ok(const char *v, size_t n)
{
    if (n < 1 || n > RP_LABEL_VALUE_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == ';')
            return 0;
    return 1;
}

/*
 * rp_labels_next: the label at *pos in `s` (NUL-terminated) into *l, and *pos
 * moved past it and its ';'. A label that does not parse is skipped. @return 1,
 * or 0 when no label is left.
 */
static inline int rp_labels_next(const char *s, size_t *pos, struct rp_label *l)
{
    while (s[*pos]) {
        const char *item = s + *pos;
        size_t n = strcspn(item, ";");
        *pos += n + (item[n] == ';');
        const char *colon = memchr(item, ':', n);
        if (!colon)
            continue;
        l->key = item;
        l->klen = (size_t)(colon - item);
        l->value = colon + 1;
        l->vlen = n - l->klen - 1;
        if (rp_label_key_ok(l->key, l->klen) && rp_label_value_ok(l->value, l->vlen))
            return 1;
    }
    return 0;
}

/*
 * rp_labels_check: whether `s` is a labels string by the grammar above, every
 * label parsing and no key twice. @return NULL, or a static text saying what is
 * wrong (for the agent's one-line refusal).
 */
static inline const char *rp_labels_check(const char *s)
{
    size_t count = 0;
    const char *item = s;
    if (!*s)
        return "no label";
    for (;;) {
        size_t n = strcspn(item, ";");
        const char *colon = memchr(item, ':', n);
        if (!colon)
            return "a label without ':' between its key and value";
        size_t klen = (size_t)(colon - item);
        if (!rp_label_key_ok(item, klen))
            return "a key must be 1 to 64 of A-Z a-z 0-9 _ . - starting with a letter or _";
        if (!rp_label_value_ok(colon + 1, n - klen - 1))
            return "a value must be 1 to 256 printable ASCII characters other than , and ;";
        for (const char *prev = s; prev < item;) {
            size_t pn = strcspn(prev, ";");
            const char *pc = memchr(prev, ':', pn);
            if ((size_t)(pc - prev) == klen && !memcmp(prev, item, klen))
                return "a key is given twice";
            prev += pn + 1;
        }
        if (++count > RP_LABELS_MAX)
            return "more than 32 labels";
        if (!item[n])
            return NULL;
        item += n + 1;
    }
}

#endif /* RINGPROF_LABELS_H */
