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
 *   overloads       A Java method is its class and name: overloads (Arrays.fill
 *                   of long[] and of int[]) are one method, as C++ overloads are
 *                   one in --demangle short, so no two rows, nodes or frames of
 *                   any format bear the same name, and `diff`, which joins by
 *                   name, agrees with convert. --signatures keeps them apart,
 *                   each named with its parameter list as Java writes it:
 *                   "java.util.Arrays.fill(long[], long)".
 *
 * The profile builder (profile_build.c) applies them while it reads stacks
 * (rp_prof_options.norm); the helpers below are the pure string parts, callable
 * from any thread, allocating nothing.
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

/* How Java overloads are told apart (rp_frame_norm.signatures). */
enum rp_prof_signatures {
    RP_SIG_MERGE = 0,      /* one method per class and name (the default); it  */
                           /* keeps the descriptor of the first overload seen  */
    RP_SIG_SHOW,           /* --signatures: overloads apart, each named with   */
                           /* its parameter list                               */
    RP_SIG_KEEP            /* overloads apart, named without it: for a writer  */
                           /* that carries the descriptor as data (jfr)        */
};

struct rp_frame_norm {
    int hidden_classes;    /* 1: strip hidden-class addresses                   */
    int merge_types;       /* 1: one frame per method whatever its frame type   */
    enum rp_prof_group group;
    enum rp_prof_signatures signatures;
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

/*
 * rp_norm_java_params: the parameter list of JVM method descriptor `desc` as Java
 * writes it, into buf (cap bytes, always terminated): "([JJ)V" -> "(long[],
 * long)", "(Ljava/lang/String;I)V" -> "(java.lang.String, int)", "()V" -> "()".
 * Class names keep their package, so two overloads never read alike. @return
 * the length written, or -1 when `desc` is not a method descriptor (buf then
 * holds ""); a list longer than cap is cut, ending in "...)": "(long, ...)".
 */
int rp_norm_java_params(const char *desc, char *buf, size_t cap);

/* rp_norm_parse_group: "method", "class" or "package". @return 0, or -1 for any
 * other text. */
int rp_norm_parse_group(const char *s, enum rp_prof_group *g);

/* rp_norm_group_noun: what a row names under `g`, for table headings: "method",
 * "class" or "package"; rp_norm_group_nouns its plural, for counts of rows. */
const char *rp_norm_group_noun(enum rp_prof_group g);
const char *rp_norm_group_nouns(enum rp_prof_group g);

#endif
