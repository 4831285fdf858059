#!/usr/bin/env python3
"""tests/convert/test_pprof.py RINGPROF RP_TESTWRITER RP_BIGWRITER

`ringprof convert --format pprof` read back by its real consumer, `go tool
pprof`, and compared with the truth in rp_testwriter's manifest:
  - the file is gzip; the sample types, period and time are named right
    (-raw), for cpu and for alloc;
  - -top: every function's flat and cum value and flat% match the truth, and
    the order puts the heaviest function first; alloc: bytes and objects per
    allocated class;
  - -top -lines: file:line for the leaf frames;
  - labels: -tags gives each thread's total, -tagfocus one thread's;
  - merge: two recordings converted together equal the sum of each alone, per
    function, in total and per host label, and equal go tool pprof's own merge
    of the two files; a recording split over two chunks equals the whole;
  - hostile names (quotes, "</script>", bytes that are not UTF-8) and a stack
    3000 frames deep survive the trip;
  - renamed threads (rp_testwriter's rename recording): one name in summary,
    collapsed --per-thread and the pprof thread label (-tags), the name at the
    first sample with the newest after it: "main (renamed DestroyJavaVM)";
  - C++ and Rust symbols (rp_testwriter's cpp recording, recorded mangled):
    -top lists them demangled, -raw shows each Function's system_name as the
    recorded symbol (test_demangle.py checks every format without go).
"""
import gzip
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, Truth, go_env, load_manifest, run, skip_unless, tempdir  # noqa

RINGPROF, WRITER, BIGWRITER = sys.argv[1:4]
GO = skip_unless("go", "golang-go")
T = tempdir()
c = Checks("pprof")

# go tool pprof writes under $HOME/pprof and may look for a toolchain: keep it
# local and offline.
ENV = go_env(T)


def pprof(*args):
    return run([GO, "tool", "pprof"] + list(args), env=ENV)


def convert(out, *inputs, extra=()):
    run([RINGPROF, "convert", "--quiet"] + list(extra) + ["-o", out] + list(inputs))
    return out


# pprof's figures in base units (ns, bytes); -unit=ms prints whole milliseconds,
# so a time read back is within half a millisecond of the truth.
UNITS = {"": 1, "ms": 1e6, "s": 1e9, "B": 1, "kB": 1024, "MB": 1024 ** 2}
MS = 0.5e6


def number(text):
    m = re.match(r"^(-?[\d.]+)([a-zA-Z]*)$", text)
    if not m or m.group(2) not in UNITS:
        raise ValueError("not a pprof figure: %r" % text)
    return float(m.group(1)) * UNITS[m.group(2)]


ROW = re.compile(r"^\s*(\S+)\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+([\d.]+)%\s+(.*)$")


def top(path, *args):
    """-top as {name: (flat, flat%, cum)}, the order of names, and the total."""
    text = pprof("-top", "-nodecount=100000", *args, path)
    rows, order, total, started = {}, [], None, False
    last = None
    for line in text.split("\n"):
        m = re.match(r"^Showing nodes accounting for \S+, [\d.]+% of (\S+) total", line)
        if m:
            total = number(m.group(1))
            continue
        if line.lstrip().startswith("flat  flat%"):
            started = True
            continue
        if not started or not line.strip():
            continue
        m = ROW.match(line)
        if m:
            last = m.group(6)
            rows[last] = (number(m.group(1)), float(m.group(2)), number(m.group(4)))
            order.append(last)
        elif last is not None:
            # a name holding a newline goes on over the next line
            row = rows.pop(last)
            last = last + "\n" + line
            rows[last] = row
            order[-1] = last
    return rows, order, total


def raw(path):
    """-raw: header lines, the sample-type line, and each sample's values."""
    text = pprof("-raw", path)
    lines = text.split("\n")
    head = {}
    for line in lines:
        if ":" in line and not line.startswith(" "):
            k, _, v = line.partition(":")
            head.setdefault(k.strip(), v.strip())
    if "Samples:" not in lines or "Locations" not in lines:
        return head, [], []
    first, end = lines.index("Samples:") + 1, lines.index("Locations")
    types = lines[first].split()
    values = []
    for line in lines[first + 1:end]:
        m = re.match(r"^\s+(\d+(?:\s+\d+)*):", line)
        if m:
            values.append([int(x) for x in m.group(1).split()])
    return head, types, values


def tags(path, key, *args):
    """-tags: {value: total} for one label key."""
    text = pprof("-tags", *args, path)
    out, inside = {}, False
    for line in text.split("\n"):
        if re.match(r"^\s*\S+: Total ", line):
            inside = line.strip().startswith(key + ":")
            continue
        m = re.match(r"^\s*(\S+)\s+\(\s*[\d.]+%\):\s+(.*)$", line)
        if inside and m:
            out[m.group(2)] = number(m.group(1))
    return out


def close(a, b, tol):
    return abs(a - b) <= tol


def compare_top(rows, truth, what, tol_abs):
    """Every function of the truth is in -top with its flat, cum and flat%."""
    for fn in sorted(truth.cum):
        row = rows.get(fn)
        if not c.check(row is not None, "%s: %r in -top" % (what, fn), sorted(rows)):
            continue
        flat, pct, cum = row
        c.check(close(flat, truth.flat[fn], tol_abs), "%s: flat of %r" % (what, fn),
                "%s, expected %s" % (flat, truth.flat[fn]))
        c.check(close(cum, truth.cum[fn], tol_abs), "%s: cum of %r" % (what, fn),
                "%s, expected %s" % (cum, truth.cum[fn]))
        c.check(close(pct, 100.0 * truth.flat[fn] / truth.total, 0.006),
                "%s: flat%% of %r" % (what, fn), pct)
    extra = [fn for fn in rows if fn not in truth.cum]
    c.check(not extra, "%s: no function the truth lacks" % what, extra)


# ---------------------------------------------------------------- inputs --
A, B, SPLIT = (os.path.join(T, n) for n in ("a.rpc", "b.rpc", "split"))
run([WRITER, "main", A, "--manifest", A + ".json"])
run([WRITER, "other", B, "--manifest", B + ".json"])
run([WRITER, "split", SPLIT])
MA, MB = load_manifest(A + ".json"), load_manifest(B + ".json")

# ------------------------------------------------------------------- cpu --
a_pb = convert(os.path.join(T, "a.pb.gz"), A)
with open(a_pb, "rb") as f:
    c.check(f.read(2) == b"\x1f\x8b", "the pprof file is gzip")
with gzip.open(a_pb) as f:
    c.check(len(f.read()) > 100, "it inflates to a profile")

head, types, values = raw(a_pb)
c.check(types == ["samples/count", "cpu/nanoseconds[dflt]"], "cpu sample types", types)
c.check(head.get("PeriodType") == "cpu nanoseconds", "cpu period type", head.get("PeriodType"))
c.check(head.get("Period") == "10000000", "cpu period 10 ms", head.get("Period"))
c.check(head.get("Time", "").startswith("2026-11-21 06:02:03"), "time_nanos",
        head.get("Time"))
c.check(head.get("Duration") == "9.9s", "duration_nanos: first to last cpu sample",
        head.get("Duration"))
cpu = Truth([MA], "cpu")
c.check(sum(v[1] for v in values) == cpu.total, "-raw: cpu ns add up",
        (sum(v[1] for v in values), cpu.total))
c.check(sum(v[0] for v in values) == sum(1 for s in MA["samples"] if s["kind"] == "cpu"),
        "-raw: sample counts add up")

rows, order, total = top(a_pb, "-unit=ms")
c.check(close(total, cpu.total, MS), "-top total", (total, cpu.total))
compare_top(rows, cpu, "cpu -top", MS)
heaviest = max(cpu.flat, key=lambda fn: cpu.flat[fn])
c.check(order and order[0] == heaviest, "-top starts with the heaviest function",
        (order[:3], heaviest))

# file:line of leaf frames (-lines keys functions by "name file:line").
lines, _, _ = top(a_pb, "-unit=ms", "-lines")
leaf_lines = {}
for s in MA["samples"]:
    frames = MA["stacks"][s["stack"]]["frames"]
    if s["kind"] == "cpu" and frames and frames[-1]["line"] and frames[-1]["file"]:
        f = frames[-1]
        key = "%s %s:%d" % (f["class"] + "." + f["name"] if f["class"] else f["name"],
                            f["file"], f["line"])
        leaf_lines[key] = leaf_lines.get(key, 0) + s["weight"]
c.check(len(leaf_lines) >= 3, "the test recording has leaf frames with lines")
for key, w in sorted(leaf_lines.items()):
    row = lines.get(key)
    c.check(row is not None and close(row[0], w, MS), "-lines: %r" % key,
            row and row[0])
c.check("app.Json.parse Json.java:7" in lines and "app.Json.parse Json.java:9" in lines,
        "one method at two lines stays two lines")

# Labels: thread (and host, pid) on every sample.
by_thread = tags(a_pb, "thread", "-unit=ms")
c.check(set(by_thread) == set(cpu.thread), "-tags: the threads", sorted(by_thread))
for name, w in cpu.thread.items():
    c.check(close(by_thread.get(name, -1), w, MS), "-tags: thread %r" % name,
            by_thread.get(name))
c.check(tags(a_pb, "host", "-unit=ms") == {"hostA": cpu.total}, "-tags: host")
c.check(set(tags(a_pb, "pid")) == {"100"}, "-tags: pid")
text = pprof("-top", "-unit=ms", "-tagfocus=thread=worker-2", a_pb)
m = re.search(r"Showing nodes accounting for (\S+),", text)
c.check(m and close(number(m.group(1)), cpu.thread["worker-2"], MS),
        "-tagfocus thread=worker-2 keeps its samples only", m and m.group(1))

# ----------------------------------------------------------------- alloc --
al_pb = convert(os.path.join(T, "alloc.pb.gz"), A, extra=["--event", "alloc"])
head, types, values = raw(al_pb)
c.check(types == ["samples/count", "alloc_objects/count", "alloc_space/bytes[dflt]"],
        "alloc sample types", types)
c.check(head.get("PeriodType") == "alloc_space bytes", "alloc period type",
        head.get("PeriodType"))
c.check(head.get("Period") == "524288", "alloc period", head.get("Period"))
space = Truth([MA], "alloc", "weight")
objects = Truth([MA], "alloc", "objects")
rows, order, _ = top(al_pb, "-unit=B")
compare_top(rows, space, "alloc_space -top", 0.5)
rows, order, _ = top(al_pb, "-sample_index=alloc_objects")
compare_top(rows, objects, "alloc_objects -top", 0.5)
c.check(order and order[0] == "java.lang.String", "most objects: java.lang.String",
        order[:2])

# ----------------------------------------------------------------- merge --
b_pb = convert(os.path.join(T, "b.pb.gz"), B)
ab_pb = convert(os.path.join(T, "ab.pb.gz"), A, B)
ta = sum(v[1] for v in raw(a_pb)[2])
tb = sum(v[1] for v in raw(b_pb)[2])
tab = sum(v[1] for v in raw(ab_pb)[2])
c.check(tab == ta + tb and ta > 0 and tb > 0, "merged total = sum of each alone",
        (tab, ta, tb))
both = Truth([MA, MB], "cpu")
rows_ab, _, _ = top(ab_pb, "-unit=ms")
compare_top(rows_ab, both, "merged -top", MS)
hosts = tags(ab_pb, "host", "-unit=ms")
c.check(hosts == {"hostA": ta, "hostB": tb}, "merged: host labels keep the "
        "recordings apart", hosts)
recs = tags(ab_pb, "recording", "-unit=ms")
c.check(recs == {"rec-A": ta, "rec-B": tb}, "merged: recording labels", recs)
gomerged = os.path.join(T, "gomerged.pb.gz")
with open(gomerged, "wb") as f:
    f.write(run([GO, "tool", "pprof", "-proto", a_pb, b_pb], env=ENV, binary=True))
rows_go, _, _ = top(gomerged, "-unit=ms")
c.check({k: v[0] for k, v in rows_go.items()} == {k: v[0] for k, v in rows_ab.items()},
        "ringprof's merge equals go tool pprof's merge of the two files")

split_pb = convert(os.path.join(T, "split.pb.gz"), SPLIT)
rows_split, _, _ = top(split_pb, "-unit=ms")
rows_a, _, _ = top(a_pb, "-unit=ms")
c.check(rows_split == rows_a, "a recording split over two chunks equals the whole")

# --------------------------------------------------------- hostile names --
N = os.path.join(T, "names.rpc")
run([BIGWRITER, "names", N])
n_pb = convert(os.path.join(T, "names.pb.gz"), N)
rows, _, total = top(n_pb, "-unit=ms")
c.check(close(total, 1e9, MS), "names: total 1 s", total)
c.check(close(rows.get("app.Evil.</script><script>alert(1)</script>", (0,))[0], 400e6, MS),
        "names: '</script>' name intact")
quote = [k for k in rows if k.startswith('app.Evil.say"hi"')]
c.check(len(quote) == 1 and close(rows[quote[0]][0], 300e6, MS), "names: quotes intact",
        quote)
bad = [k for k in rows if k.startswith("bad")]
c.check(len(bad) == 1 and "\ufffd" in bad[0] and close(rows[bad[0]][0], 200e6, MS),
        "names: bytes that are not UTF-8 become U+FFFD", bad)
c.check(close(rows.get("app.Deep.bottom", (0,))[0], 100e6, MS) and
        close(rows.get("app.Root.run", (0, 0, 0))[2], 1e9, MS),
        "names: the 3000-frame stack is whole")
traces = pprof("-traces", n_pb)
c.check(traces.count("app.Deep.recurse") == 2998, "names: -traces shows all 2998 "
        "recursive frames", traces.count("app.Deep.recurse"))

# ------------------------------------------------------- C++ symbols --
X = os.path.join(T, "x.rpc")
run([WRITER, "cpp", X])
x_pb = convert(os.path.join(T, "x.pb.gz"), X)
# -symbolize=none: pprof demangles a Function whose name equals its system_name
# itself; without it, this would pass for a converter that demangled nothing.
rows, _, _ = top(x_pb, "-unit=ms", "-symbolize=none")
c.check("CompileBroker::compiler_thread_loop" in rows and "mycrate::example" in rows and
        not [k for k in rows if "_ZN" in k and k != "app.Gen._ZN3Gen3runEv"],
        "cpp: -top shows C++ and Rust functions demangled", sorted(rows))
c.check(close(rows.get("Compiler::parse", (0,))[0], 100e6, MS),
        "cpp: the two overloads of Compiler::parse are one function (100 ms)",
        rows.get("Compiler::parse"))
text = pprof("-raw", "-symbolize=none", x_pb)
c.check(re.search(r" CompileBroker::compiler_thread_loop .*"
                  r"\(_ZN13CompileBroker20compiler_thread_loopEv\)", text) is not None,
        "cpp: -raw: name demangled, system_name the recorded symbol", text[-1500:])
c.check(re.search(r" mycrate::example .*\(_RNvCs15kBYyAo9fc_7mycrate7example\)", text)
        is not None, "cpp: -raw: a Rust v0 symbol kept as system_name", text[-1500:])

# ------------------------------------------------------- renamed threads --
R = os.path.join(T, "rename.rpc")
run([WRITER, "rename", R])
NAMES = {"main (renamed DestroyJavaVM)": 50e6, "a (renamed b)": 40e6, "worker": 30e6}
for kind in ("cpu", "wall"):
    got = tags(convert(os.path.join(T, "rename-%s.pb.gz" % kind), R, extra=("--event", kind)),
               "thread", "-unit=ms")
    c.check(got.keys() == NAMES.keys() and all(close(got[n], w, MS) for n, w in NAMES.items()),
            "rename, %s: -tags thread labels name renames the one way" % kind, got)
    folded = run([RINGPROF, "convert", "--event", kind, "--format", "collapsed",
                  "--per-thread", R])
    roots = {l.split(";")[0]: int(l.rsplit(" ", 1)[1]) for l in folded.splitlines()}
    c.check(roots == {"[%s]" % n: w for n, w in NAMES.items()},
            "rename, %s: collapsed --per-thread roots" % kind, roots)
summary = run([RINGPROF, "summary", R])
rows = [m.group(1) for m in (re.match(r"^\s+60[123]  (.*?)\s{2,}\d+ ", l)
                             for l in summary.splitlines()) if m]
c.check(sorted(rows) == sorted(NAMES), "rename: summary's thread rows", rows)
timeline = run([RINGPROF, "convert", "--format", "timeline", R])
c.check(re.search(r"^a \(renamed b\) \(tid 603\) +\|", timeline, re.M) and
        re.search(r"^main \(renamed DestroyJava~ \(tid 601\) \|", timeline, re.M) and
        re.search(r"^worker \(tid 602\) +\|", timeline, re.M),
        "rename: the timeline's rows", timeline[:1200])

c.close()
