/*
 * tools/model/frame_norm.h — how a profile names and merges frames before they enter
 * its tree: the one place where a stack as recorded becomes a stack as shown when
 * the user asks for a coarser view (docs/tool.md, "Frame normalisation").
 *
 *   hidden classes  A lambda or other hidden class is named with its address,
 *                   which differs from run to run: "Foo$$Lambda$14/0x0000000800c03000"
 *                   (JDK 17), "Foo$$Lambda/0x..." and "Foo$$Lambda.0x..." (JDK 21+,
 *                   and the form JVMTI's class signatures give). Stripped, every one
 *                   of them is "Foo$$Lambda", so two runs of one program compare
 *                   equal. Other hidden classes lose their "/0x..." or ".0x..."
 *                   suffix the same way (java.lang.invoke.LambdaForm$MH).
 *   frame types     A method's interpreted, JIT-compiled and inlined frames become
 *                   one frame (shown as a JIT-compiled one: no tag, "_[j]" when
 *                   collapsed), so warm-up does not split a method in two.
 *   groups          Java frames collapse to their class or their package, and
 *                   consecutive frames that become equal merge into one. Native,
 *                   C++, kernel and marker frames and allocated classes stay as
 *                   they are. Grouping implies merging frame types.
 *
 * profile.c applies them while it reads stacks (rp_prof_options.norm); the
 * helpers below are the pure string parts, callable from any thread, allocating
 * nothing.
 */
#ifndef RINGPROF_TOOLS_FRAME_NORM_H
#define RINGPROF_TOOLS_FRAME_NORM_H

#include <stddef.h>

enum rp_prof_group {
    RP_GROUP_METHOD = 0,   /* frames are methods (the default)                  */
    RP_GROUP_CLASS,        /* a Java frame is its class: "app.Server"           */
    RP_GROUP_PACKAGE       /* a Java frame is its package: "app"; a class       */
                           /* without one is "[default package]"                */
};

struct rp_frame_norm {
    int hidden_classes;    /* 1: strip hidden-class addresses                   */
    int merge_types;       /* 1: one frame per method whatever its frame type   */
    enum rp_prof_group group;
};

/*
 * rp_norm_hidden_class: the length of `klass` without a hidden class's address
 * and a lambda's sequence number: "Foo$$Lambda$14/0x7f00" -> 11 ("Foo$$Lambda"),
 * "a.B/0x1f" -> 3. The address is a '/' or '.' followed by "0x" and hex digits
 * to the end of the name, or (JDK 8: "Foo$$Lambda$3/1831932724") a '/' and
 * decimal digits; the sequence number is "$" and digits right after "$$Lambda".
 * A name with neither gives strlen(klass).
 */
size_t rp_norm_hidden_class(const char *klass);

/* rp_norm_package_len: the length of `klass`'s package ("app.net" of
 * "app.net.Server$1"): up to its last '.', a hidden class's address left out;
 * 0 when it has none. */
size_t rp_norm_package_len(const char *klass);

/* rp_norm_parse_group: "method", "class" or "package". @return 0, or -1 for any
 * other text. */
int rp_norm_parse_group(const char *s, enum rp_prof_group *g);

/* rp_norm_group_noun: what a row names under `g`, for table headings: "method",
 * "class" or "package". */
const char *rp_norm_group_noun(enum rp_prof_group g);

#endif
