/*
 * src/code/methods.h — Java methods: jmethodID creation, resolution to names and lines,
 * and the map of compiled code that tells interpreted, JIT and inlined frames
 * apart.
 *
 * jmethodIDs. AsyncGetCallTrace reports a frame's method by its jmethodID, and a
 * method that never had one created gets NULL. So ids are created up front: for
 * every class when it is prepared (ClassPrepare → GetClassMethods), and for the
 * classes already loaded when the agent starts (GetLoadedClasses). HotSpot never
 * frees a jmethodID, so one taken from a sample stays safe to pass to JVMTI: after
 * its class is unloaded, JVMTI answers JVMTI_ERROR_INVALID_METHODID and the method
 * is reported as "[unloaded]" with RP_METHOD_UNLOADED.
 *
 * Resolution (flusher only). A method's declaring class (dotted: java.util.HashMap),
 * name, signature, source file, modifiers and line-number table are read once
 * and cached for the life of the process, keyed by jmethodID.
 *
 * Frame types. JDK 17's AsyncGetCallTrace does not say how a frame was executing,
 * so the flusher derives it from CompiledMethodLoad events (enabling them also turns
 * HotSpot's DebugNonSafepoints on, so compiled frames carry exact inlining):
 *   - the pair (callee, caller, caller's bci) appears in some compiled method's
 *     inlining records → INLINED;
 *   - else the method has live compiled code → JIT;
 *   - else INTERPRETED.
 * This is a heuristic; docs/engines.md lists where it is wrong (a method with
 * compiled code that is still running an older interpreted activation, OSR, a
 * callee inlined in one compilation and called in another).
 *
 * Threads: the compiled-code map is updated from the compiler threads' events and
 * read by the flusher, under its own mutex. Resolution is the flusher's alone.
 * Nothing here is async-signal-safe.
 */
#ifndef RINGPROF_SRC_METHODS_H
#define RINGPROF_SRC_METHODS_H

#include <stdint.h>
#include <jvmti.h>

#include "ringprof/format.h"

struct rp_method {
    const char *klass;         /* dotted Java name; "" if unknown                  */
    const char *name;
    const char *signature;
    const char *file;          /* source file, "" if absent                        */
    uint32_t flags;            /* RP_METHOD_*                                      */
    jint nlines;
    jvmtiLineNumberEntry *lines;
};

/* Remember the JVMTI environment and which optional capabilities it has. */
void rp_methods_init(jvmtiEnv *jvmti, int have_lines, int have_source);

/* Create the jmethodIDs of one class (ClassPrepare), or of every loaded class
 * (agent start). Any thread that may call JVMTI. */
void rp_methods_prepare_class(jclass klass);
void rp_methods_prepare_loaded(JNIEnv *jni);

/* The resolved method; never NULL. A method whose class was unloaded (JVMTI says
 * INVALID_METHODID or INVALID_CLASS) gets the "[unloaded]" placeholder, cached. A
 * lookup that failed for a passing cause (no memory: methods.no_memory; another
 * JVMTI error such as WRONG_PHASE: unresolved) gets "[unknown java method]" and
 * caches nothing: the next lookup tries again. Flusher only. */
const struct rp_method *rp_methods_get(JNIEnv *jni, jmethodID m);
/* Is m the "[unknown java method]" placeholder? A caller must not cache an id for
 * it either (see rp_methods_get). */
int rp_method_is_unknown(const struct rp_method *m);
/* The source line of `bci` in `m`, 0 if unknown. */
uint32_t rp_method_line(const struct rp_method *m, int32_t bci);

/* CompiledMethodLoad / CompiledMethodUnload (any thread). */
void rp_methods_compiled_load(jmethodID m, const void *code_addr, const void *compile_info);
void rp_methods_compiled_unload(jmethodID m, const void *code_addr);
/* Changes whenever the compiled-code map changes, so that caches of frame types
 * can be dropped. */
uint64_t rp_methods_compiled_epoch(void);
/* The type of a Java frame running `m`, called from `caller` at `caller_bci`
 * (caller NULL for the outermost frame). */
enum rp_frame_type rp_methods_frame_type(jmethodID m, jmethodID caller,
                                         int32_t caller_bci);

/* Statistics: methods resolved, unloaded ones met, compiled blobs live. */
struct rp_methods_stats {
    uint64_t resolved, unloaded, compiled_live, inline_pairs;
    uint64_t no_memory;        /* lookups answered [unknown java method] for want of memory */
    uint64_t unresolved;       /* ... for another passing JVMTI error (WRONG_PHASE) */
};
void rp_methods_stats(struct rp_methods_stats *out);

/* Register methods.no_memory and methods.unresolved (counters.h), group
 * RP_COUNTERS_NOMEM. Agent start, before the flusher runs. */
void rp_methods_counters_register(void);

#endif
