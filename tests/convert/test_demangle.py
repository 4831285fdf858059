#!/usr/bin/env python3
"""tests/convert/test_demangle.py RINGPROF RP_TESTWRITER

C++ and Rust symbols, recorded mangled as the agent records them, in every
output that prints frame names, on rp_testwriter's `cpp` recording:
  - by default (--demangle short) no output holds a symbol that demangles:
    convert's tree, backtrace, flat, collapsed, html (its data), pprof
    (Function.name), locks and leaks (text and --json); the short names are
    there, and the two overloads of Compiler::parse are one frame (10 samples);
  - --demangle full: parameter lists, and the overloads apart (6 and 4);
  - --demangle none: the symbols as recorded, in every format;
  - pprof keeps the recorded symbol as Function.system_name in every style;
  - never demangled: a Java method whose name looks like a C++ symbol, a C
    name, and a name the demangler cannot read (printed as recorded);
  - --include matches the names as shown; a bad --demangle is a usage error
    naming the styles; the main recording's C++ frame, recorded mangled,
    prints as JavaCalls::call_helper.
No JVM and no consumer needed (pprof is decoded here); a second or two.
"""
import gzip
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, pb_fields, run, tempdir  # noqa

RINGPROF, WRITER = sys.argv[1:3]
T = tempdir()
c = Checks("demangle")
X, A = os.path.join(T, "x.rpc"), os.path.join(T, "a.rpc")
run([WRITER, "cpp", X])
run([WRITER, "main", A])

# The symbols the cpp recording holds that demangle: (short, full).
NAMES = {
    "_ZL19thread_native_entryP6Thread": ("thread_native_entry", "thread_native_entry(Thread*)"),
    "_ZN10JavaThread17thread_main_innerEv": ("JavaThread::thread_main_inner",
                                             "JavaThread::thread_main_inner()"),
    "_ZN13CompileBroker20compiler_thread_loopEv": ("CompileBroker::compiler_thread_loop",
                                                   "CompileBroker::compiler_thread_loop()"),
    "_ZN13CompileBroker25invoke_compiler_on_methodEP11CompileTask": (
        "CompileBroker::invoke_compiler_on_method",
        "CompileBroker::invoke_compiler_on_method(CompileTask*)"),
    "_ZN8Compiler5parseEi": ("Compiler::parse", "Compiler::parse(int)"),
    "_ZN8Compiler5parseEl": ("Compiler::parse", "Compiler::parse(long)"),
    "_ZNSt6vectorIiSaIiEE9push_backERKi": (
        "std::vector<int, std::allocator<int> >::push_back",
        "std::vector<int, std::allocator<int> >::push_back(int const&)"),
    "_ZN4core3ptr13drop_in_place17h1234567890abcdefE": ("core::ptr::drop_in_place",
                                                        "core::ptr::drop_in_place"),
    "_RNvCs15kBYyAo9fc_7mycrate7example": ("mycrate::example", "mycrate::example"),
}
# Shown as recorded in every style: a C function, a Java method, a name that
# only looks mangled.
KEPT = ["start_thread", "app.Gen._ZN3Gen3runEv", "_Z_not_a_mangled_name"]
# What may look like a symbol in the default outputs: the two names above.
MANGLED = re.compile(r"(?<![A-Za-z0-9_])_[ZR][A-Za-z0-9_]+")
LOOKALIKES = {"_ZN3Gen3runEv", "_Z_not_a_mangled_name"}


def out(*args, expect=0):
    r = subprocess.run([RINGPROF] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    c.check(r.returncode == expect, "ringprof %s exits %d" % (" ".join(args), expect),
            "%d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace")[:300]))
    return r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def html_strings(style):
    path = os.path.join(T, "x-%s.html" % style)
    out("convert", "--quiet", "--demangle", style, "-o", path, X)
    page = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="flame-data" type="application/json">(.*?)</script>',
                  page, re.S)
    return json.loads(m.group(1))["strings"] if m else []


def pprof_functions(style):
    """[(name, system_name)] of the pprof file's Functions."""
    path = os.path.join(T, "x-%s.pb.gz" % style)
    out("convert", "--quiet", "--demangle", style, "-o", path, X)
    strs, funcs = [], []
    for f, v in pb_fields(gzip.open(path).read()):
        if f == 6:
            strs.append(v.decode())
        elif f == 5:
            d = dict(pb_fields(v))
            funcs.append((d.get(2, 0), d.get(3, 0)))
    return [(strs[n], strs[s]) for n, s in funcs]


def outputs(style):
    """Every output that prints frame names, as {what: text}."""
    o = {}
    for fmt in ("tree", "backtrace", "flat", "collapsed"):
        o[fmt] = out("convert", "--quiet", "--demangle", style, "--format", fmt, X)[0]
    o["html"] = "\n".join(html_strings(style))
    o["pprof"] = "\n".join(n for n, _ in pprof_functions(style))
    o["locks"] = out("locks", "--demangle", style, X)[0]
    o["locks --json"] = out("locks", "--demangle", style, "--json", X)[0]
    for extra in ((), ("--json",)):
        o[" ".join(("leaks",) + extra)] = out("leaks", "--demangle", style, "--min-growth",
                                              "1", *extra, X)[0]
    return o


def demangled_everywhere(style, outs):
    """No symbol that demangles in any output; every name in the style in the
    formats that print every frame, and the names that stay as recorded."""
    k = 0 if style == "short" else 1
    for what, text in outs.items():
        leftover = set(t.rstrip("_") for t in MANGLED.findall(text)) - LOOKALIKES
        c.check(not leftover, "%s: %s prints no mangled symbol" % (style, what),
                sorted(leftover))
    for what in ("tree", "collapsed", "html", "pprof", "flat"):
        missing = [n[k] for n in NAMES.values() if n[k] not in outs[what]]
        c.check(not missing, "%s: %s shows the names in the style" % (style, what), missing)
        missing = [n for n in KEPT if n not in outs[what]]
        c.check(not missing, "%s: %s keeps C, Java and unreadable names as recorded"
                % (style, what), missing)


# ------------------------------------------------------------- short -- #
short = outputs("short")
demangled_everywhere("short", short)
c.check("std::vector<int, std::allocator<int> >::push_back [native]" in short["locks"],
        "short: locks' waiting stack is demangled", short["locks"][-600:])
c.check("CompileBroker::invoke_compiler_on_method" in short["leaks"],
        "short: leaks' trace is demangled", short["leaks"][-600:])
lines = [l for l in short["collapsed"].splitlines() if l.split(";")[-1].startswith("Compiler::")]
c.check(len(lines) == 1 and lines[0].endswith(";Compiler::parse 100000000"),
        "short: the overloads (int) and (long) are one frame with 6 + 4 samples", lines)
tree_parse = [l for l in short["tree"].splitlines() if l.rstrip().endswith("Compiler::parse [c++]")]
c.check(len(tree_parse) == 1 and tree_parse[0].split()[4] == "10",
        "short: one tree node for both overloads, 10 samples", tree_parse)

# -------------------------------------------------------------- full -- #
full = outputs("full")
demangled_everywhere("full", full)
c.check(";Compiler::parse(int) 60000000" in full["collapsed"] and
        ";Compiler::parse(long) 40000000" in full["collapsed"],
        "full: the overloads apart", full["collapsed"])

# -------------------------------------------------------------- none -- #
none = outputs("none")
for what in ("tree", "collapsed", "html", "pprof", "flat", "backtrace"):
    missing = [m for m in NAMES if m not in none[what]] + [k for k in KEPT if k not in none[what]]
    c.check(not missing, "none: %s prints the symbols as recorded" % what, missing)
c.check("_ZNSt6vectorIiSaIiEE9push_backERKi [native]" in none["locks"],
        "none: locks prints the recorded symbol", none["locks"][-600:])

# ------------------------------------------------- pprof system_name -- #
for style in ("short", "full", "none"):
    funcs = pprof_functions(style)
    native = [(n, s) for n, s in funcs if s in NAMES]
    c.check(len(native) == (8 if style == "short" else 9),
            "pprof %s: a Function per native symbol (overloads merged in short)" % style,
            funcs)
    wrong = [(n, s) for n, s in native
             if n != {"short": NAMES[s][0], "full": NAMES[s][1], "none": s}[style]]
    c.check(not wrong, "pprof %s: Function.name in the style, system_name the recorded "
            "symbol" % style, wrong)
    kept = dict(funcs)
    c.check(all(kept.get(k) == k for k in KEPT),
            "pprof %s: C, Java and unreadable names keep name == system_name" % style,
            [(k, kept.get(k)) for k in KEPT])

# ------------------------------------------------- filters and errors -- #
got = out("convert", "--quiet", "--format", "collapsed", "--include", "CompileBroker::", X)[0]
c.check(sum(int(l.rsplit(" ", 1)[1]) for l in got.splitlines()) == 100000000,
        "--include sees the demangled names", got)
got = out("convert", "--quiet", "--format", "collapsed", "--demangle", "none", "--include",
          "_ZN13CompileBroker", X)[0]
c.check(sum(int(l.rsplit(" ", 1)[1]) for l in got.splitlines()) == 100000000,
        "--include with --demangle none sees the symbols", got)
for cmd in ("convert", "locks", "leaks"):
    _, err = out(cmd, "--demangle", "fancy", X, expect=2)
    c.check("--demangle 'fancy'" in err and all(w in err for w in ("short", "full", "none")),
            "%s: a bad --demangle names the styles" % cmd, err[:300])
helptext = out("convert", "--help")[0]
c.check("--demangle STYLE" in helptext and "full" in helptext, "convert --help has --demangle")

# The main recording records libjvm's JavaCalls::call_helper mangled.
got = out("convert", "--quiet", "--format", "collapsed", A)[0]
c.check("JavaCalls::call_helper;" in got and "_ZN9JavaCalls" not in got,
        "main recording: the C++ frame is demangled", got)
got = out("convert", "--quiet", "--format", "collapsed", "--demangle", "none", A)[0]
c.check("_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread;"
        in got, "main recording, none: the recorded symbol", got)

c.close()
