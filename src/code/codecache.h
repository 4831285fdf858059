/*
 * src/code/codecache.h — HotSpot's generated code that is not a Java method: the
 * interpreter and the stubs (StubRoutines such as `libmSin`,
 * `sha256_implCompressMB`, `updateBytesCRC32`, `jint_disjoint_arraycopy`; the
 * C1/C2 runtime stubs; adapters; vtable and itable stubs), as the signal handler
 * needs them to walk out of a stub into the Java method that called it, and as
 * the flusher needs them to name a stub frame.
 *
 * Where the ranges come from. JVMTI's DynamicCodeGenerated event reports every
 * piece of code HotSpot generates outside compiled methods, with its name,
 * address and length; GenerateEvents replays the ones made before the agent
 * started (attach). Nothing here reads HotSpot's memory: the names are the JVM's
 * own, from the event, on JDK 17 and 25 alike. A pc inside HotSpot's code cache
 * (CodeCache::_low_bound .. _high_bound, from VMStructs, vmstructs.h) that is in
 * no reported range is compiled Java code (an nmethod), left to
 * AsyncGetCallTrace.
 *
 * How the handler reads it. The events append to a list under a mutex (they may
 * come on any thread, at VM start-up by the thousand); rp_codecache_publish
 * (agent start, then the flusher, every drain) turns the list into one
 * immutable sorted array behind an atomic pointer, which the handler searches
 * with no lock. An array that was replaced is freed by a later publish once no
 * handler can still hold it: readers count themselves in (rp_codecache_enter /
 * rp_codecache_leave) and a replaced array is freed only after the count was
 * seen at zero (sequentially consistent atomics on both sides). A stub reported
 * after the last publish is unknown to the handler for up to one drain (100 ms).
 *
 * Threads: rp_codecache_add from the JVMTI event (any thread, not a signal
 * handler); rp_codecache_publish and rp_codecache_name from the flusher or the
 * agent's start; rp_codecache_enter/leave/find from the signal handler
 * (async-signal-safe).
 */
#ifndef RINGPROF_SRC_CODECACHE_H
#define RINGPROF_SRC_CODECACHE_H

#include <stdint.h>

/* The "library" a stub frame is written with (its class in the chunk): the
 * stubs live in no loaded object. */
#define RP_STUB_LIB "[vm stub]"

enum rp_code_kind {
    RP_CODE_STUB = 1,           /* a stub: walked out of, shown as a frame          */
    RP_CODE_INTERPRETER,        /* the template interpreter: Java frames            */
};

struct rp_code {
    uint64_t start, end;        /* [start, end)                                     */
    uint32_t name;              /* index into the name table (rp_codecache_name)    */
    uint8_t kind;               /* enum rp_code_kind                                */
    /* A stub that is a code blob of its own (a runtime stub, the safepoint,
     * deoptimization and uncommon-trap blobs): its frame in words and where in
     * its code the frame is complete (-1: HotSpot never says), from the blob's
     * header (rp_codecache_blob). 0 words: not known. */
    uint16_t frame_words;
    int32_t frame_complete;
    /* Where the stub makes its frame, read from its first bytes when it was
     * reported: the offset of `push rbp; mov rbp, rsp` (HotSpot's enter()),
     * RP_STUB_NO_ENTER if it does not begin with one. How the handler steps
     * out of it (stackwalk.c). */
    uint8_t enter_at;
};

/* enter() within this many bytes of a stub's start counts; HotSpot's stubs put
 * at most a few register moves before it (JDK 25's fill stubs: mov r11, rdx). */
#define RP_STUB_ENTER_WITHIN 16
#define RP_STUB_NO_ENTER 0xff

/* Set the code cache's bounds (VMStructs; 0, 0 when unknown). Agent start. */
void rp_codecache_set_bounds(uint64_t low, uint64_t high);

/* Is `pc` inside HotSpot's code cache? Async-signal-safe. */
int rp_codecache_contains(uint64_t pc);

/* A DynamicCodeGenerated event. Copies the name. */
void rp_codecache_add(const char *name, const void *address, int32_t length);

/* Make what was added visible to the handler, and free replaced arrays that no
 * handler can hold any more. @return 1 if a new array was published. */
int rp_codecache_publish(void);

/* The handler's side: bracket every rp_codecache_find between enter and leave. */
void rp_codecache_enter(void);
void rp_codecache_leave(void);
/* The range containing `pc`, or NULL. Async-signal-safe. */
const struct rp_code *rp_codecache_find(uint64_t pc);

/* The name of the stub or interpreter code containing `pc` ("libmSin",
 * "Interpreter"), or NULL if none. Flusher. */
const char *rp_codecache_name(uint64_t pc);

/* ------------------------------------------------------- code blobs -- */

/* The code blob that contains a pc, read from HotSpot's code heaps: each heap's
 * segment map leads from any pc to the start of its block, whose header is
 * followed by the blob (CodeHeap::find_block_for, with offsets and sizes from
 * VMStructs). Compiled methods are blobs too. */
struct rp_blob {
    uint64_t start;             /* the CodeBlob                                     */
    uint64_t code_begin, end;   /* its code; end: start + size                      */
    int32_t frame_words;        /* CodeBlob::_frame_size                            */
    int32_t frame_complete;     /* offset from code_begin, -1: never                */
    const char *name;           /* CodeBlob::_name, HotSpot's string                */
    int compiled;               /* a compiled Java method (an nmethod), by its kind
                                 * (JDK 21+: CodeBlob::_kind) or by its name's
                                 * address (learned: rp_codecache_learn_compiled) */
};

/* Read the code heaps' layout (VMStructs) and check it on a blob whose name is
 * known (the interpreter's): after the first publish. @return 0, or -1 if the
 * lookup is not usable on this JVM (then rp_codecache_blob always fails). */
int rp_codecache_init_blobs(void);

/* The blob containing `pc`. @return 0, or -1 (not in a code heap, a free block,
 * a header that does not hold the pc). Async-signal-safe; reads the JVM's
 * memory directly: run it under the crash guard. */
int rp_codecache_blob(uint64_t pc, struct rp_blob *out);

/* A CompiledMethodLoad event's code: on JVMs whose blobs carry no kind, the
 * address of the name HotSpot gives compiled methods is learned from it. Any
 * thread but a signal handler. */
void rp_codecache_learn_compiled(const void *code);

/* The jmethodID of the Method* `m`, or 0 if `m` is not one whose id is known
 * (the id must point back at `m`). Async-signal-safe, under the crash guard. */
uint64_t rp_codecache_jmethod(uint64_t m);

/* The jmethodID of a compiled method's blob (nmethod::_method, then Method →
 * ConstMethod's id number → its class's jmethodID array), or 0 if unknown.
 * Async-signal-safe, under the crash guard. */
uint64_t rp_codecache_method(const struct rp_blob *b);

/* Ranges known and published, for status and tests. */
struct rp_codecache_stats {
    uint64_t ranges, published, events;
};
void rp_codecache_stats(struct rp_codecache_stats *out);

#endif
