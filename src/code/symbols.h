/*
 * src/code/symbols.h — native pc → function name and library, for the flusher.
 *
 * dladdr alone is not enough: it sees only a library's exported symbols (.dynsym),
 * and for a pc in a static function it names the nearest exported one, which is
 * wrong. libjvm.so exports a few hundred symbols but its .symtab (shipped
 * unstripped by Debian) names every C++ function, and a GC or JIT thread's stack
 * is meaningless without them; libc.so.6 is stripped, and its static functions
 * (start_thread, clone3) are named only in its separate debug file (libc6-dbg).
 * So: the code map (codemap.h) finds the object (its path and load address) and
 * keeps the function symbols src/code/elfsyms.c reads from the object's file once
 * (its .symtab; else its debug file's .symtab, by build id or .gnu_debuglink,
 * with its .dynsym; else its .dynsym), bounded in size; a pc inside no symbol's extent is named after its
 * object ("[libz.so.1]": one name per object, so stacks through stripped static
 * functions still aggregate) rather than given the nearest preceding symbol's
 * name, which would be a wrong one; a pc in no object is "[unknown]". Objects
 * with no file (the vDSO) fall back to dladdr with its size check. Names are not
 * demangled here (C++ names stay in their _ZN... form; the tool demangles).
 * Results are cached per pc; no file stays open or mapped. A pc is named after
 * the objects loaded when it is first named (the map is refreshed then), and
 * that name is kept.
 *
 * Threads: the flusher only. Not async-signal-safe.
 */
#ifndef RINGPROF_SRC_SYMBOLS_H
#define RINGPROF_SRC_SYMBOLS_H

#include <stdint.h>

struct rp_native_sym {
    const char *lib;           /* basename of the object, e.g. "libz.so.1"        */
    const char *name;          /* function name, "[<lib>]", or "[unknown]"        */
    int is_jvm;                /* the object is libjvm.so                          */
};

/* Resolve `pc` (a pc inside the function: see rp_unwind_walk). Never fails; the
 * strings live as long as the process. */
void rp_symbols_resolve(uint64_t pc, struct rp_native_sym *out);

/* The run-time address of symbol `name` (any type, local ones included: .symtab,
 * then .dynsym, then the debug file's .symtab) in the loaded object whose file's
 * basename is `lib`, or 0 if the object is not loaded or has no such symbol.
 * Reads the files; any thread but a signal handler (it is not limited to the
 * flusher: it keeps no state). */
uint64_t rp_symbols_find(const char *lib, const char *name);

#endif
