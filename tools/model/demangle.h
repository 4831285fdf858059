/*
 * tools/model/demangle.h — C++ and Rust symbol names as people read them.
 *
 * The agent records native symbols as the libraries' symbol tables hold them:
 * `_ZN13CompileBroker20compiler_thread_loopEv`. Every output of the tool shows
 * them demangled, by default without the parameter list, as perf and
 * async-profiler do: `CompileBroker::compiler_thread_loop`. The demangler is
 * libiberty's cplus_demangle (binutils' and gdb's; Debian package libiberty-dev,
 * a static library): it reads the Itanium C++ ABI (`_Z`) and Rust's legacy
 * (`_ZN...17h<hash>E`, printed without the hash) and v0 (`_R`) manglings, and
 * leaves out the parameters on request, which __cxa_demangle cannot.
 *
 * profile_intern.c calls rp_demangle once per distinct name (it caches the
 * result per interned string), for native, C++ and kernel frames only: a Java
 * method's name is never a mangled symbol, even when it looks like one.
 *
 * Threads: any (libiberty's demangler keeps no state), one call at a time per
 * name. Allocates; never prints.
 */
#ifndef RINGPROF_TOOLS_DEMANGLE_H
#define RINGPROF_TOOLS_DEMANGLE_H

/* How native symbols are shown (--demangle). */
enum rp_demangle_style {
    RP_DEMANGLE_SHORT = 0,   /* CompileBroker::compiler_thread_loop (the default):   */
                             /* overloads share one name, so their frames merge      */
    RP_DEMANGLE_FULL,        /* JavaCalls::call_helper(JavaValue*, methodHandle      */
                             /* const&, JavaCallArguments*, JavaThread*)             */
    RP_DEMANGLE_NONE         /* as recorded: _ZN13CompileBroker20compiler_thread_loopEv */
};

/* Names longer than this are shown as recorded. libiberty's demangler keeps
 * about 72 bytes of stack per byte of the name (two components and a
 * substitution slot per byte, in variable-length arrays): 16 KiB of name is
 * 1.2 MiB of the main thread's 8 MiB stack. The longest symbol in libjvm.so and
 * libstdc++ is under 1 KiB. */
#define RP_DEMANGLE_MAX 16384

/* Parse a --demangle argument: "short", "full" or "none". @return 0, or -1. */
int rp_demangle_parse(const char *arg, enum rp_demangle_style *style);

/*
 * rp_demangle: `name` demangled in `style`, as a malloc'd string the caller
 * frees; NULL when it is to be shown as it is: style none, a name that does not
 * start with "_Z" or "_R" (no C++ or Rust mangling does), one over
 * RP_DEMANGLE_MAX bytes, or one the demangler cannot read (printed as
 * recorded, like a C name).
 */
char *rp_demangle(const char *name, enum rp_demangle_style style);

#endif
