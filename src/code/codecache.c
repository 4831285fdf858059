/*
 * src/code/codecache.c — the interpreter and stub ranges reported by JVMTI's
 * DynamicCodeGenerated, published for the signal handler (see codecache.h).
 *
 * The reported ranges may nest (a range and a smaller one inside it) and repeat
 * (GenerateEvents replays ranges already seen). Publishing flattens them into
 * disjoint segments, each carrying the innermost range that covers it, so the
 * handler's lookup is one binary search.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "code/vmstructs.h"

struct code_array {
    size_t n;
    struct code_array *next_retired;
    struct rp_code e[];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under g_lock: what the events reported, unsorted, and the names. */
static struct rp_code *g_added;
static size_t g_nadded, g_capadded;
static char **g_names;
static size_t g_nnames, g_capnames;
static size_t g_published_upto;          /* g_nadded at the last publish          */
static struct code_array *g_retired;     /* replaced, not yet freed               */
static uint64_t g_events;

static _Atomic(struct code_array *) g_array;
static _Atomic long g_readers;
static uint64_t g_low, g_high;

void rp_codecache_set_bounds(uint64_t low, uint64_t high)
{
    g_low = low;
    g_high = high;
}

int rp_codecache_contains(uint64_t pc)
{
    return pc >= g_low && pc < g_high;
}

/* The index of `name` in the name table, added if new; UINT32_MAX if out of
 * memory. Under g_lock. Names repeat ("vtable stub", one per stub), so the
 * table stays small; a linear search from the newest is enough for the few
 * thousand events of a JVM's life. */
static uint32_t name_index(const char *name)
{
    for (size_t i = g_nnames; i-- > 0;)
        if (strcmp(g_names[i], name) == 0)
            return (uint32_t)i;
    if (g_nnames == g_capnames) {
        size_t cap = g_capnames ? 2 * g_capnames : 256;
        char **n = realloc(g_names, cap * sizeof *n);
        if (!n)
            return UINT32_MAX;
        g_names = n;
        g_capnames = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return UINT32_MAX;
    g_names[g_nnames] = copy;
    return (uint32_t)g_nnames++;
}

/* The offset of enter() (push rbp; mov rbp, rsp, in either encoding of the mov:
 * HotSpot emits 48 8b ec, compilers 48 89 e5) near the start of `code`. */
static uint8_t enter_at(const uint8_t *code, int32_t length)
{
    for (int32_t i = 0; i < RP_STUB_ENTER_WITHIN && i + 4 <= length; i++)
        if (code[i] == 0x55 && code[i + 1] == 0x48 &&
            ((code[i + 2] == 0x8b && code[i + 3] == 0xec) ||
             (code[i + 2] == 0x89 && code[i + 3] == 0xe5)))
            return (uint8_t)i;
    return RP_STUB_NO_ENTER;
}

void rp_codecache_add(const char *name, const void *address, int32_t length)
{
    if (!name || !address || length <= 0)
        return;
    pthread_mutex_lock(&g_lock);
    g_events++;
    uint32_t ni = name_index(name);
    if (ni != UINT32_MAX && g_nadded == g_capadded) {
        size_t cap = g_capadded ? 2 * g_capadded : 1024;
        struct rp_code *n = realloc(g_added, cap * sizeof *n);
        if (n) {
            g_added = n;
            g_capadded = cap;
        }
    }
    if (ni != UINT32_MAX && g_nadded < g_capadded) {
        struct rp_code *c = &g_added[g_nadded++];
        c->start = (uint64_t)(uintptr_t)address;
        c->end = c->start + (uint64_t)length;
        c->name = ni;
        c->kind = strcmp(name, "Interpreter") == 0 ? RP_CODE_INTERPRETER : RP_CODE_STUB;
        c->enter_at = enter_at(address, length);
    }
    pthread_mutex_unlock(&g_lock);
}

/* Outer ranges first where two begin at the same address. */
static int by_start(const void *a, const void *b)
{
    const struct rp_code *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

struct flat {
    struct code_array *out;
    size_t cap;
};

static void emit(struct flat *f, uint64_t start, uint64_t end, const struct rp_code *c)
{
    if (start >= end || f->out->n == f->cap)
        return;
    struct rp_code *o = &f->out->e[f->out->n];
    /* A continuation of the previous segment of the same range merges into it. */
    if (f->out->n > 0 && o[-1].end == start && o[-1].name == c->name &&
        o[-1].kind == c->kind && o[-1].enter_at == c->enter_at) {
        o[-1].end = end;
        return;
    }
    *o = *c;
    o->start = start;
    o->end = end;
    f->out->n++;
}

/* Disjoint segments from sorted, possibly nested ranges: each point gets the
 * innermost range that covers it. A range that overlaps another only in part
 * is cut at the outer one's end. `stack` has room for n entries. */
static void flatten(const struct rp_code *in, size_t n, const struct rp_code **stack,
                    struct flat *f)
{
    size_t depth = 0;
    uint64_t cur = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rp_code *e = &in[i];
        while (depth > 0 && stack[depth - 1]->end <= e->start) {
            emit(f, cur, stack[depth - 1]->end, stack[depth - 1]);
            if (cur < stack[depth - 1]->end)
                cur = stack[depth - 1]->end;
            depth--;
        }
        if (depth > 0) {
            const struct rp_code *top = stack[depth - 1];
            if (e->start == top->start && e->end == top->end)
                continue;                           /* reported twice */
            emit(f, cur, e->start, top);
            if (e->end > top->end) {
                cur = e->start;                     /* partial overlap: drop it */
                continue;
            }
        }
        cur = e->start;
        stack[depth++] = e;
    }
    while (depth > 0) {
        emit(f, cur, stack[depth - 1]->end, stack[depth - 1]);
        if (cur < stack[depth - 1]->end)
            cur = stack[depth - 1]->end;
        depth--;
    }
}

/* Frame facts of the stubs that are blobs of their own (codecache.h). */
static void blob_frames(struct rp_code *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct rp_blob b;
        e[i].frame_words = 0;
        e[i].frame_complete = -1;
        if (e[i].kind != RP_CODE_STUB || rp_codecache_blob(e[i].start, &b) != 0 ||
            b.code_begin != e[i].start || b.frame_words <= 0 || b.frame_words > 0xffff)
            continue;
        e[i].frame_words = (uint16_t)b.frame_words;
        e[i].frame_complete = b.frame_complete;
    }
}

int rp_codecache_publish(void)
{
    pthread_mutex_lock(&g_lock);
    int changed = g_nadded != g_published_upto;
    struct code_array *a = NULL;
    if (changed) {
        /* Each range gives at most two segments of its parent besides its own. */
        size_t cap = 3 * g_nadded + 1;
        struct rp_code *sorted = malloc(g_nadded * sizeof *sorted);
        const struct rp_code **stack = malloc(g_nadded * sizeof *stack);
        a = malloc(sizeof *a + cap * sizeof a->e[0]);
        if (sorted && stack && a) {
            memcpy(sorted, g_added, g_nadded * sizeof *sorted);
            qsort(sorted, g_nadded, sizeof *sorted, by_start);
            a->n = 0;
            a->next_retired = NULL;
            struct flat f = {a, cap};
            flatten(sorted, g_nadded, stack, &f);
            blob_frames(a->e, a->n);
            g_published_upto = g_nadded;
        } else {
            free(a);
            a = NULL;
            changed = 0;            /* the old array stays; the next publish retries */
        }
        free(sorted);
        free(stack);
    }
    if (a) {
        struct code_array *old = atomic_exchange(&g_array, a);
        if (old) {
            old->next_retired = g_retired;
            g_retired = old;
        }
    }
    /* After the exchange, a handler that counts itself in loads the new array;
     * one counted in before may hold an old one. At zero, none does. */
    if (g_retired && atomic_load(&g_readers) == 0) {
        while (g_retired) {
            struct code_array *r = g_retired;
            g_retired = r->next_retired;
            free(r);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return a != NULL;
}

void rp_codecache_enter(void)
{
    atomic_fetch_add(&g_readers, 1);
}

void rp_codecache_leave(void)
{
    atomic_fetch_sub(&g_readers, 1);
}

const struct rp_code *rp_codecache_find(uint64_t pc)
{
    const struct code_array *a = atomic_load(&g_array);
    if (!a || a->n == 0)
        return NULL;
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->e[mid].end <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < a->n && a->e[lo].start <= pc)
        return &a->e[lo];
    return NULL;
}

const char *rp_codecache_name(uint64_t pc)
{
    rp_codecache_enter();
    const struct rp_code *c = rp_codecache_find(pc);
    uint32_t ni = c ? c->name : UINT32_MAX;
    rp_codecache_leave();
    if (ni == UINT32_MAX)
        return NULL;
    pthread_mutex_lock(&g_lock);
    const char *name = ni < g_nnames ? g_names[ni] : NULL;
    pthread_mutex_unlock(&g_lock);
    return name;                 /* names are never freed */
}

void rp_codecache_stats(struct rp_codecache_stats *out)
{
    pthread_mutex_lock(&g_lock);
    const struct code_array *a = atomic_load(&g_array);
    out->ranges = g_nadded;
    out->published = a ? a->n : 0;
    out->events = g_events;
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------ code blobs -- */

#define MAX_HEAPS 8
#define SEGMAP_FREE 0xff

/* The code heaps and the layout of what the lookup reads, from VMStructs. */
static struct {
    int ok;
    int nheaps;
    uint64_t heap[MAX_HEAPS];           /* CodeHeap*                                */
    int log2_seg[MAX_HEAPS];
    long mem_low, mem_high;             /* CodeHeap::_memory._low/_high             */
    long segmap_low;                    /* CodeHeap::_segmap._low                   */
    long block_size, used_off;          /* sizeof(HeapBlock), its header's _used   */
    long name_off, size_off, frame_size_off, complete_off;
    int complete_size;                  /* 4 (JDK 17) or 2 (JDK 25)                */
    long code_begin_off;                /* CodeBlob::_code_begin (a pointer), or   */
    long code_offset_off;               /* CodeBlob::_code_offset (from the blob)  */
    long kind_off;                      /* CodeBlob::_kind (JDK 21+), or -1        */
    int kind_nmethod;                   /* CodeBlobKind::Nmethod                   */
    _Atomic(const char *) nmethod_name; /* else: compiled methods' _name           */
    /* Compiled method → jmethodID. */
    long method_off, const_method_off, idnum_off, constants_off, holder_off, ids_off;
} H;

static long field_off(const char *type, const char *field)
{
    struct rp_vm_field f;
    return rp_vmstructs_field(type, field, &f) == 0 ? f.offset : -1;
}

int rp_codecache_init_blobs(void)
{
    struct rp_vm_field heaps, len, data, mem, seg, vlow, vhigh, log2, hdr, used, cc;
    if (rp_vmstructs_field("CodeCache", "_heaps", &heaps) || !heaps.address ||
        rp_vmstructs_field("GrowableArrayBase", "_len", &len) ||
        rp_vmstructs_field("GrowableArray<int>", "_data", &data) ||
        rp_vmstructs_field("CodeHeap", "_memory", &mem) ||
        rp_vmstructs_field("CodeHeap", "_segmap", &seg) ||
        rp_vmstructs_field("VirtualSpace", "_low", &vlow) ||
        rp_vmstructs_field("VirtualSpace", "_high", &vhigh) ||
        rp_vmstructs_field("CodeHeap", "_log2_segment_size", &log2) ||
        rp_vmstructs_field("HeapBlock", "_header", &hdr) ||
        rp_vmstructs_field("HeapBlock::Header", "_used", &used) ||
        rp_vmstructs_field("CodeBlob", "_frame_complete_offset", &cc))
        return -1;
    H.mem_low = mem.offset + vlow.offset;
    H.mem_high = mem.offset + vhigh.offset;
    H.segmap_low = seg.offset + vlow.offset;
    H.used_off = hdr.offset + used.offset;
    H.block_size = rp_vmstructs_type_size("HeapBlock");
    H.name_off = field_off("CodeBlob", "_name");
    H.size_off = field_off("CodeBlob", "_size");
    H.frame_size_off = field_off("CodeBlob", "_frame_size");
    H.complete_off = cc.offset;
    H.complete_size = cc.size;
    H.code_begin_off = field_off("CodeBlob", "_code_begin");
    H.code_offset_off = field_off("CodeBlob", "_code_offset");
    H.kind_off = field_off("CodeBlob", "_kind");
    if (H.kind_off >= 0 && rp_vmstructs_int("CodeBlobKind::Nmethod", &H.kind_nmethod) != 0)
        H.kind_off = -1;
    if (H.block_size <= 0 || H.name_off < 0 || H.size_off < 0 || H.frame_size_off < 0 ||
        (H.complete_size != 2 && H.complete_size != 4) ||
        (H.code_begin_off < 0 && H.code_offset_off < 0))
        return -1;
    H.method_off = field_off("nmethod", "_method");
    if (H.method_off < 0)
        H.method_off = field_off("CompiledMethod", "_method");
    H.const_method_off = field_off("Method", "_constMethod");
    H.idnum_off = field_off("ConstMethod", "_method_idnum");
    H.constants_off = field_off("ConstMethod", "_constants");
    H.holder_off = field_off("ConstantPool", "_pool_holder");
    H.ids_off = field_off("InstanceKlass", "_methods_jmethod_ids");
    /* The heaps: a GrowableArray<CodeHeap*>, set up before any Java code ran. */
    uint64_t ga = *(const uint64_t *)(uintptr_t)heaps.address;
    if (!ga)
        return -1;
    int n = *(const int32_t *)(uintptr_t)(ga + (uint64_t)len.offset);
    const uint64_t *h = *(const uint64_t *const *)(uintptr_t)(ga + (uint64_t)data.offset);
    if (n <= 0 || n > MAX_HEAPS || !h)
        return -1;
    for (int i = 0; i < n; i++) {
        H.heap[i] = h[i];
        H.log2_seg[i] = *(const int32_t *)(uintptr_t)(h[i] + (uint64_t)log2.offset);
        if (H.log2_seg[i] < 4 || H.log2_seg[i] > 16)
            return -1;
    }
    H.nheaps = n;
    /* Check the whole chain on a blob whose name we know: the interpreter's
     * start must lead to a blob called "Interpreter" whose code holds it. */
    const struct code_array *a = atomic_load(&g_array);
    uint64_t interp = 0;
    for (size_t i = 0; a && i < a->n && !interp; i++)
        if (a->e[i].kind == RP_CODE_INTERPRETER)
            interp = a->e[i].start;
    H.ok = 1;
    struct rp_blob b;
    if (!interp || rp_codecache_blob(interp, &b) != 0 || !b.name ||
        strcmp(b.name, "Interpreter") != 0) {
        H.ok = 0;
        return -1;
    }
    /* The stubs published so far get their frame sizes now. */
    pthread_mutex_lock(&g_lock);
    g_published_upto = SIZE_MAX;
    pthread_mutex_unlock(&g_lock);
    rp_codecache_publish();
    return 0;
}

int rp_codecache_blob(uint64_t pc, struct rp_blob *out)
{
    if (!H.ok)
        return -1;
    for (int i = 0; i < H.nheaps; i++) {
        uint64_t h = H.heap[i];
        uint64_t low = *(volatile const uint64_t *)(uintptr_t)(h + (uint64_t)H.mem_low);
        uint64_t high = *(volatile const uint64_t *)(uintptr_t)(h + (uint64_t)H.mem_high);
        if (pc < low || pc >= high)
            continue;
        const uint8_t *segmap =
            *(const uint8_t *const *)(uintptr_t)(h + (uint64_t)H.segmap_low);
        uint64_t idx = (pc - low) >> H.log2_seg[i];
        if (!segmap || segmap[idx] == SEGMAP_FREE)
            return -1;
        /* Each entry says how many segments back the block goes on; bounded, in
         * case the map changes under us. */
        for (int hops = 0; segmap[idx] > 0; hops++) {
            if (hops == 1 << 16 || segmap[idx] > idx)
                return -1;
            idx -= segmap[idx];
        }
        uint64_t block = low + (idx << H.log2_seg[i]);
        if (!*(volatile const uint8_t *)(uintptr_t)(block + (uint64_t)H.used_off))
            return -1;
        uint64_t blob = block + (uint64_t)H.block_size;
        int32_t size = *(const int32_t *)(uintptr_t)(blob + (uint64_t)H.size_off);
        uint64_t code = H.code_begin_off >= 0 ?
            *(const uint64_t *)(uintptr_t)(blob + (uint64_t)H.code_begin_off) :
            blob + (uint64_t)*(const int32_t *)(uintptr_t)(blob + (uint64_t)H.code_offset_off);
        if (size <= 0 || code < blob || pc < code || pc >= blob + (uint64_t)size)
            return -1;
        out->start = blob;
        out->code_begin = code;
        out->end = blob + (uint64_t)size;
        out->frame_words = *(const int32_t *)(uintptr_t)(blob + (uint64_t)H.frame_size_off);
        out->frame_complete = H.complete_size == 2 ?
            *(const int16_t *)(uintptr_t)(blob + (uint64_t)H.complete_off) :
            *(const int32_t *)(uintptr_t)(blob + (uint64_t)H.complete_off);
        out->name = *(const char *const *)(uintptr_t)(blob + (uint64_t)H.name_off);
        if (H.kind_off >= 0)
            out->compiled = *(const uint8_t *)(uintptr_t)(blob + (uint64_t)H.kind_off) ==
                            H.kind_nmethod;
        else
            out->compiled = out->name &&
                (out->name == atomic_load_explicit(&H.nmethod_name, memory_order_relaxed) ||
                 /* A JNI method's wrapper, which no CompiledMethodLoad announces:
                  * its name is another literal, read here (the header checked
                  * out, so the name pointer is HotSpot's). */
                 memcmp(out->name, "native nmethod", 15) == 0);
        return 0;
    }
    return -1;
}

void rp_codecache_learn_compiled(const void *code)
{
    struct rp_blob b;
    if (H.kind_off >= 0 || atomic_load(&H.nmethod_name) ||
        rp_codecache_blob((uint64_t)(uintptr_t)code, &b) != 0 || !b.name)
        return;
    char name[8];
    /* The blob is the event's own compiled method: its name is "nmethod". */
    memcpy(name, b.name, sizeof name);
    if (memcmp(name, "nmethod", 8) == 0)
        atomic_store(&H.nmethod_name, b.name);
}

uint64_t rp_codecache_jmethod(uint64_t m)
{
    if (!H.ok || H.const_method_off < 0 || H.idnum_off < 0 || H.constants_off < 0 ||
        H.holder_off < 0 || H.ids_off < 0 || !m || (m & 7))
        return 0;
    uint64_t cm = *(const uint64_t *)(uintptr_t)(m + (uint64_t)H.const_method_off);
    if (!cm || (cm & 7))
        return 0;
    uint16_t idnum = *(const uint16_t *)(uintptr_t)(cm + (uint64_t)H.idnum_off);
    uint64_t cp = *(const uint64_t *)(uintptr_t)(cm + (uint64_t)H.constants_off);
    if (!cp || (cp & 7))
        return 0;
    uint64_t klass = *(const uint64_t *)(uintptr_t)(cp + (uint64_t)H.holder_off);
    if (!klass || (klass & 7))
        return 0;
    /* The class's jmethodID cache: [0] is its length, then one id per id
     * number. A jmethodID points at a word that holds its Method*: the round
     * trip proves `m` was a Method. */
    const uint64_t *ids = *(const uint64_t *const *)(uintptr_t)(klass + (uint64_t)H.ids_off);
    if (!ids || (uintptr_t)ids & 7 || ids[0] <= idnum)
        return 0;
    uint64_t id = ids[idnum + 1];
    if (!id || (id & 7) || *(const uint64_t *)(uintptr_t)id != m)
        return 0;
    return id;
}

uint64_t rp_codecache_method(const struct rp_blob *b)
{
    if (!b->compiled || !H.ok || H.method_off < 0)
        return 0;
    return rp_codecache_jmethod(*(const uint64_t *)(uintptr_t)(b->start + (uint64_t)H.method_off));
}
