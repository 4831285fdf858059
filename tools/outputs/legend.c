/*
 * tools/outputs/legend.c — the markers' meanings (legend.h). The table follows the
 * names the agent writes (docs/engines.md: "The agent's own work", "Failed walks:
 * markers and counters", "Names") and those the converter adds (profile.h); an
 * entry whose name does not end in ']' is a family, matched by prefix.
 */
#include "legend.h"

#include <string.h>

#define ENGINES_OWN   "docs/engines.md, \"The agent's own work\""
#define ENGINES_WALKS "docs/engines.md, \"Failed walks: markers and counters\""
#define ENGINES_NAMES "docs/engines.md, \"Names\""
#define PROFILES      "docs/profiles.md, \"Frames\""

static const struct marker {
    const char *name;
    const char *meaning;
    const char *doc;
} markers[] = {
    {"[ringprof:alloc]", "CPU the agent spent sampling an allocation (alloc=), shown "
                         "under the Java code that allocated", ENGINES_OWN},
    {"[ringprof:lock]", "CPU the agent spent recording a contended monitor (lock=), "
                        "shown under the Java code that waited", ENGINES_OWN},
    {"[ringprof:class]", "CPU the agent spent preparing a new class's methods, shown "
                         "under the code that loaded it", ENGINES_OWN},
    {"[ringprof:thread]", "CPU the agent spent registering a starting or ending thread",
     ENGINES_OWN},
    {"[ringprof]", "CPU in the agent's own code, outside the callbacks that name "
                   "themselves", ENGINES_OWN},
    {"[agct:gc_active]", "the stack could not be walked: the heap was being collected",
     ENGINES_WALKS},
    {"[agct:no_class_load]", "the stack could not be walked: class-load events off",
     ENGINES_WALKS},
    {"[agct:unknown_not_java]", "the stack could not be walked: in VM or native code, "
                                "its top frame not found", ENGINES_WALKS},
    {"[agct:not_walkable_not_java]", "the stack could not be walked: in VM or native "
                                     "code, the stack not walkable", ENGINES_WALKS},
    {"[agct:unknown_java]", "the stack could not be walked: in Java code, its top frame "
                            "not found (a stub or a prologue)", ENGINES_WALKS},
    {"[agct:not_walkable_java]", "the stack could not be walked: in Java code, the "
                                 "stack not walkable", ENGINES_WALKS},
    {"[agct:unknown_state]", "the stack could not be walked: the thread's state was "
                             "unknown", ENGINES_WALKS},
    {"[agct:thread_exit]", "the stack could not be walked: the thread was exiting",
     ENGINES_WALKS},
    {"[agct:deopt]", "the stack could not be walked: in the deoptimisation handler",
     ENGINES_WALKS},
    {"[agct:safepoint]", "the stack could not be walked: at a safepoint", ENGINES_WALKS},
    {"[agct:error_", "the stack could not be walked: AsyncGetCallTrace returned this "
                     "undocumented status", ENGINES_WALKS},
    {"[walk:crashed]", "a fault in the stack walk was contained; the sample kept the "
                       "frames found before it", ENGINES_WALKS},
    {"[no_agct]", "the JVM has no AsyncGetCallTrace: no Java frames", ENGINES_WALKS},
    {"[jvmti:error]", "JVMTI GetStackTrace failed for this sample", ENGINES_WALKS},
    {"[not_java]", "a thread that never runs Java (GC, JIT, native) whose native "
                   "frames could not be walked either", ENGINES_WALKS},
    {"[no_java_frames]", "a Java thread with no Java frame on its stack (starting or "
                         "exiting)", ENGINES_WALKS},
    {"[unloaded]", "a method whose class was unloaded before the agent named it",
     ENGINES_NAMES},
    {"[unknown java method]", "a Java method the JVM could not name", ENGINES_NAMES},
    {"[truncated]", "the stack was deeper than the agent's limit: its root-most "
                    "frames are missing", PROFILES},
    {"[no stack]", "a sample recorded without frames", PROFILES},
    {"[unfinished]", "a monitor wait still in progress when the recording ended, weighing "
                     "its wait so far", "docs/profiles.md, \"Lock profiles\""},
    {"[unknown frame]", "an id the file never defined (a damaged chunk)", PROFILES},
    {"[unknown stack]", "an id the file never defined (a damaged chunk)", PROFILES},
    {"[unknown method]", "an id the file never defined (a damaged chunk)", PROFILES},
    {"[unknown class]", "an id the file never defined (a damaged chunk)", PROFILES},
    {"[state:", "the thread's state at the sample (--state-frames)",
     "docs/profiles.md, \"Wall-clock profiles and thread states\""},
    {"[unknown]", "native code at an address no loaded library holds", ENGINES_NAMES},
};
#define NMARKERS (sizeof markers / sizeof markers[0])

/* The last entry: native code named after its library ("[libz.so.1]"). */
#define LIB_ENTRY NMARKERS
_Static_assert(NMARKERS < 64, "one bit an entry, and one for LIB_ENTRY");

static const char lib_meaning[] = "native code at an address no symbol of that library "
                                  "covers (a stripped library without its debug file)";

void out_legend_init(struct out_legend *l)
{
    memset(l, 0, sizeof *l);
}

static int is_native(int type)
{
    return type == RP_FRAME_NATIVE || type == RP_FRAME_CPP || type == RP_FRAME_KERNEL;
}

void out_legend_add(struct out_legend *l, const char *name, int type)
{
    if (!name || name[0] != '[')
        return;
    size_t n = strlen(name);
    for (size_t i = 0; i < NMARKERS; i++) {
        size_t k = strlen(markers[i].name);
        int family = markers[i].name[k - 1] != ']';
        if (family ? !strncmp(name, markers[i].name, k) && name[n - 1] == ']'
                   : !strcmp(name, markers[i].name)) {
            l->seen |= 1ull << i;
            return;
        }
    }
    if (!is_native(type) || name[n - 1] != ']')
        return;
    for (size_t i = 0; i < l->nlibs && i < OUT_LEGEND_LIBS; i++)
        if (!strcmp(l->libs[i], name))
            return;
    if (l->nlibs < OUT_LEGEND_LIBS)
        l->libs[l->nlibs] = name;
    l->nlibs++;
    l->seen |= 1ull << LIB_ENTRY;
}

void out_legend_add_node(struct out_legend *l, const struct rp_profile *p, uint32_t node)
{
    const struct rp_prof_frame *f = rp_prof_node_frame(p, node);
    if (f)
        out_legend_add(l, f->display, f->type);
}

void out_legend_add_method(struct out_legend *l, const struct rp_profile *p, uint32_t m)
{
    const char *name = p->methods[m].display;
    if (name[0] != '[')   /* no marker: the frames need not be looked at */
        return;
    for (size_t f = 0; f < p->nframes; f++)
        if (p->frames[f].method == m) {
            out_legend_add(l, name, p->frames[f].type);
            return;
        }
}

size_t out_legend_each(const struct out_legend *l, out_legend_fn fn, void *arg)
{
    size_t n = 0;
    for (size_t i = 0; i < NMARKERS; i++)
        if (l->seen & (1ull << i)) {
            /* A family's label is its pattern: "[agct:error_N]", "[state:NAME]". */
            const char *name = markers[i].name;
            char label[64];
            size_t k = strlen(name);
            snprintf(label, sizeof label, "%s%s", name,
                     name[k - 1] == ']' ? "" : !strcmp(name, "[state:") ? "NAME]" : "N]");
            fn(label, markers[i].meaning, markers[i].doc, name, arg);
            n++;
        }
    if (l->seen & (1ull << LIB_ENTRY)) {
        char label[512];
        size_t len = 0;
        for (size_t i = 0; i < l->nlibs && i < OUT_LEGEND_LIBS; i++)
            len += (size_t)snprintf(label + len, sizeof label - len, "%s%.100s", i ? ", " : "",
                                    l->libs[i]);
        if (l->nlibs > OUT_LEGEND_LIBS)
            snprintf(label + len, sizeof label - len, " and %zu more",
                     l->nlibs - OUT_LEGEND_LIBS);
        for (char *c = label; *c; c++)   /* a library's name is the file's */
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
        fn(label, lib_meaning, ENGINES_NAMES, "", arg);
        n++;
    }
    return n;
}

struct print_arg {
    FILE *out;
    const char *prefix;
    int first;
};

static void print_one(const char *label, const char *meaning, const char *doc,
                      const char *match, void *arg)
{
    (void)match;
    struct print_arg *a = arg;
    if (a->first)
        fprintf(a->out, "%smarkers:\n", a->prefix);
    a->first = 0;
    fprintf(a->out, "%s  %s  %s (%s)\n", a->prefix, label, meaning, doc);
}

void out_legend_print(FILE *out, const struct out_legend *l, const char *prefix)
{
    struct print_arg a = {out, prefix, 1};
    out_legend_each(l, print_one, &a);
}
