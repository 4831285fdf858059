#!/usr/bin/env python3
"""tests/convert/test_heap.py RINGPROF RP_TESTWRITER SRCDIR

Allocation, live-object and GC recordings (kinds alloc, live, gc; the contract
is in docs/profiles.md) through `ringprof convert`, `leaks` and `summary`, on
rp_testwriter's `heap` recording (a leaking site among steady, young-garbage and
one-sample sites, 12 snapshots, the first empty, over two chunks) and `churn`
recording (sites that only churn, 20 snapshots), against the truth in their
manifests:
  - goldens for the new outputs (RP_UPDATE_GOLDEN=1 rewrites them);
  - the alloc SITES table's live columns come from the chosen snapshot, joined
    by site, with live-only sites listed, for a matrix of options (expect.py);
  - --event live is ONE snapshot (the last in the range, or --snapshot's) in
    every format, and never the sum of several: the root weight equals the
    chosen snapshot's bytes; tree, collapsed, flat, backtrace via expect.py,
    html's data, and go tool pprof's inuse_* sample types when go is there;
  - leaks ranks the leaking site first, with the slope and p-value an
    independent Mann-Kendall / Theil-Sen here computes from the manifest;
    the age filter, the growth threshold and --by method each change the
    verdict they must; the churn recording has no growing site;
  - summary: allocation rate, GC pauses and missing GC ids, heap after the
    last GC, live snapshots;
  - errors: no snapshot (live=on not set), a bad or out-of-range --snapshot,
    leaks with fewer than 3 snapshots or several recordings, bad options.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, go_env, load_manifest, run, tempdir  # noqa
from expect import fields, fmt_bytes  # noqa

RINGPROF, WRITER, SRC = sys.argv[1:4]
GOLDEN = os.path.join(SRC, "golden")
EXPECT = os.path.join(SRC, "expect.py")
T = tempdir()
c = Checks("heap")
H, C, A = (os.path.join(T, n) for n in ("heap", "churn", "a.rpc"))
run([WRITER, "heap", H, "--manifest", H + ".json"])
run([WRITER, "churn", C, "--manifest", C + ".json"])
run([WRITER, "main", A, "--manifest", A + ".json"])
MH, MC = load_manifest(H + ".json"), load_manifest(C + ".json")
MA = load_manifest(A + ".json")


def rp(*args):
    """(exit status, stdout, stderr) of ringprof ARGS."""
    r = subprocess.run([RINGPROF] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8",
                                                                             "replace")


def expect(check, text, opts, manifest):
    path = os.path.join(T, "expect.out")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([sys.executable, EXPECT, check, path] + opts + ["--", manifest],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return r.returncode == 0, r.stdout.decode()


def wall(ns):
    """A manifest time as the tools print it: 2026-11-21T07:02:15.000Z."""
    s = ns // 10**9
    import datetime
    d = datetime.datetime.fromtimestamp(s, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ns % 10**9 // 10**6)


def snapshot(m, k):
    """(sampled objects, bytes) of snapshot k of manifest m."""
    live = [s for s in m["samples"] if s["kind"] == "live" and s["snap"] == k]
    return len(live), sum(s["weight"] for s in live)


# ---------------------------------------------------------------- goldens --
goldens = [
    ("flat_alloc_live.txt", ["convert", "--format", "flat", "--event", "alloc", H]),
    ("flat_alloc_live_from.txt",
     ["convert", "--format", "flat", "--event", "alloc", "--from", "+6s", H]),
    ("flat_live.txt", ["convert", "--format", "flat", "--event", "live", H]),
    ("histogram_alloc.txt", ["convert", "--format", "histogram", H]),
    ("tree_live.txt", ["convert", "--format", "tree", "--event", "live", H]),
    ("collapsed_live_snapshot3.collapsed",
     ["convert", "--format", "collapsed", "--event", "live", "--snapshot", "3", H]),
    ("leaks.txt", ["leaks", H]),
    ("leaks_all.txt", ["leaks", "--all", H]),
    ("leaks_churn.txt", ["leaks", "--all", C]),
    ("summary_heap.txt", ["summary", H]),
]
for name, args in goldens:
    rc, out, err = rp(*args)
    if not c.check(rc == 0, "golden %s: exit 0" % name, err):
        continue
    path = os.path.join(GOLDEN, name)
    if os.environ.get("RP_UPDATE_GOLDEN") == "1":
        with open(path, "w") as f:
            f.write(out)
    with open(path) as f:
        want = f.read()
    c.check(out == want, "golden %s (ringprof %s)" % (name, " ".join(args[:-1])),
            "\n" + "".join(l for l in __import__("difflib").unified_diff(
                want.splitlines(True), out.splitlines(True), "golden", "now")))

# ------------------------------------------- alloc SITES: the live columns --
for opts in ([], ["--per-thread"], ["--lines"], ["--from", "+6s"], ["--to", "+5s"],
             ["--snapshot", "3"], ["--snapshot", "-4"], ["--thread", "^worker"],
             ["--include", "Cache|Session"]):
    rc, out, err = rp("convert", "--format", "flat", "--event", "alloc", *opts, H)
    ok, why = expect("sites", out, ["--event", "alloc"] + opts, H + ".json")
    c.check(rc == 0 and ok, "alloc SITES with live columns %s" % " ".join(opts), why)

last = len(MH["snapshots"]) - 1
n_last, b_last = snapshot(MH, last)
# The last snapshot split as the tools headline it: the objects that survived a GC
# (what the program keeps), and the younger ones, not yet collected.
OLD = [x for x in MH["samples"] if x["kind"] == "live" and x["snap"] == last and
       x["age_gcs"] >= 1]
n_old, b_old = len(OLD), sum(x["weight"] for x in OLD)
c.check(0 < n_old < n_last, "the last snapshot holds old and young objects", (n_old, n_last))
SPLIT = ("%s, %d sampled objects that survived a GC, %d bytes; not yet collected, younger "
         "than the last GC: %d, %d bytes (the last of 12 in the range)"
         % (wall(MH["snapshots"][last]), n_old, b_old, n_last - n_old, b_last - b_old))
rc, out, err = rp("convert", "--format", "flat", "--event", "alloc", H)
leak_w = [s["weight"] for s in MH["samples"] if s["kind"] == "alloc" and
          s["class"] == "byte[]"]
row = [fields(l, 10) for l in out.splitlines() if l.endswith(" byte[]") and
       re.match(r" +\d+ ", l)]
c.check(len(row) == 1 and row[0][3] == fmt_bytes(sum(leak_w)) == row[0][5],
        "SITES: the leak's objects are all alive: live bytes = allocated bytes, in "
        "binary units", (row, fmt_bytes(sum(leak_w))))
c.check("# live columns: snapshot " + SPLIT in out,
        "SITES names the snapshot of its live columns, the survivors first")
c.check("live columns from snapshot %s" % wall(MH["snapshots"][last]) in err,
        "stderr names the snapshot of the live columns", err)
rc, out, err = rp("convert", "--quiet", "--format", "flat", "--event", "alloc", H)
c.check(rc == 0 and err == "", "--quiet: nothing on stderr", err)
rc, out, err = rp("convert", "--format", "flat", "--event", "alloc", "--from", "+6s", H)
c.check(re.search(r" 0 B +0 +0 +\d+ app\.Session$", out, re.M) and
        "# 1 site with live objects but no allocation sample here" in out,
        "SITES lists a live site allocated before --from, with allocated 0", out)
rc, out, err = rp("convert", "--format", "flat", H)
c.check(rc == 0 and "SITES BEGIN" in out and "# live columns: snapshot" in out,
        "without --event, a recording with no cpu kind gets alloc, with live columns")

# ------------------------------------------- the class histogram (alloc) --
def histogram(text):
    """The rows of a CLASS HISTOGRAM: [(self%, accum%, {figures}, name)]."""
    body = text.split("CLASS HISTOGRAM BEGIN", 1)[1].split("CLASS HISTOGRAM END")[0]
    rows = []
    for line in body.split("\n")[3:]:
        if not line.strip():
            continue
        f = fields(line, 9 if "live columns" in text else 7)
        nums = [None if x == "-" else x for x in f[3:-1]]
        keys = (["lbytes", "lobjs"] if len(nums) == 5 else []) + ["bytes", "objs", "samples"]
        rows.append((f[1], f[2], dict(zip(keys, nums)), f[-1]))
    return rows


def class_truth(samples):
    """{class: {bytes, objs, samples}} of manifest samples."""
    t = {}
    for x in samples:
        r = t.setdefault(x["class"] or "?", {"bytes": 0, "objs": 0, "samples": 0})
        r["bytes"] += x["weight"]
        r["objs"] += x["objects"]
        r["samples"] += 1
    return t


def check_histogram(what, text, alloc, live):
    """The table against the truth: every class once, its figures, ranked by
    bytes (then objects), shares of the total; live columns when `live`."""
    rows = histogram(text)
    total = sum(r["bytes"] for r in alloc.values())
    names = set(alloc) | set(live or {})
    want = sorted(names, key=lambda k: (-alloc.get(k, {}).get("bytes", 0),
                                        -alloc.get(k, {}).get("objs", 0)))
    c.check([r[3] for r in rows] == want, what + ": one row a class, ranked by bytes",
            ([r[3] for r in rows], want))
    accum = 0.0
    for share, acc, fig, name in rows:
        a = alloc.get(name, {"bytes": 0, "objs": 0, "samples": 0})
        exp = {"bytes": fmt_bytes(a["bytes"]), "objs": str(a["objs"]),
               "samples": str(a["samples"])}
        if live is not None:
            lv = live.get(name, {"bytes": 0, "objs": 0})
            exp.update(lbytes=fmt_bytes(lv["bytes"]), lobjs=str(lv["objs"]))
        accum += 100.0 * a["bytes"] / total
        c.check(fig == exp and share == "%.2f%%" % (100.0 * a["bytes"] / total) and
                acc == "%.2f%%" % accum, "%s: %s" % (what, name), (fig, exp, share, acc))


def kind_of(m, kind, snap=None, thread=None):
    return [x for x in m["samples"] if x["kind"] == kind and
            (snap is None or x["snap"] == snap) and
            (thread is None or re.search(thread, x["thread"]))]


for opts, snap, thread in (([], last, None), (["--snapshot", "3"], 2, None),
                           (["--thread", "^worker"], last, "^worker")):
    rc, out, err = rp("convert", "--format", "histogram", *opts, H)
    c.check(rc == 0 and "CLASS HISTOGRAM BEGIN (ordered by allocated bytes" in out,
            "histogram %s: alloc by default, exit 0" % " ".join(opts), (rc, err))
    check_histogram("histogram %s" % " ".join(opts), out,
                    class_truth(kind_of(MH, "alloc", thread=thread)),
                    class_truth(kind_of(MH, "live", snap, thread)))
for opts, snap in (([], last), (["--snapshot", "6"], 5)):
    rc, out, err = rp("convert", "--format", "histogram", "--event", "live", *opts, H)
    check_histogram("histogram --event live %s" % " ".join(opts), out,
                    class_truth(kind_of(MH, "live", snap)), None)
    c.check("ordered by live bytes" in out, "histogram --event live: ranked by live bytes")
rc, out, err = rp("convert", "--quiet", "-o", os.path.join(T, "a.histo"), A)
with open(os.path.join(T, "a.histo")) as f:
    out = f.read()
c.check(rc == 0 and "# live columns: none; no live snapshot" in out,
        "-o x.histo: the histogram of alloc, though the recording has cpu; no live "
        "columns without snapshots", (rc, err))
rows = histogram(out)
c.check([r[2]["lbytes"] for r in rows] == [None] * len(rows) and
        {r[3]: r[2]["bytes"] for r in rows} ==
        {k: fmt_bytes(v["bytes"]) for k, v in class_truth(kind_of(MA, "alloc")).items()},
        "histogram without snapshots: '-' live columns, the allocated bytes", rows)
rc, out, err = rp("convert", "--format", "histogram", "--top", "2", H)
c.check(len(histogram(out)) == 2 and "# 2 more classes not shown (--top 2)" in out,
        "histogram --top 2: two rows, the rest counted", out)
for kind in ("cpu", "wall", "gc"):
    rc, out, err = rp("convert", "--format", "histogram", "--event", kind, H)
    c.check(rc == 2 and "the class histogram counts allocated objects" in err and
            "Try 'ringprof convert --help'" in err, "histogram --event %s: usage error" % kind,
            (rc, err))

# ------------------------------------------------ --event live: one snapshot --
total_live = sum(s["weight"] for s in MH["samples"] if s["kind"] == "live")
rc, out, err = rp("convert", "--format", "tree", "--event", "live", H)
root = re.search(r"^ +(\d+) +\d+ +100\.00% .*\[all\]$", out, re.M)
c.check(root and int(root.group(1)) == b_last,
        "live tree: the root is the last snapshot's bytes", root and root.group(1))
c.check(b_last < total_live, "the recording's snapshots add up to more than the last "
        "(so a sum would show)", (b_last, total_live))
c.check("live snapshot " + SPLIT in err,
        "stderr names the live snapshot used, the survivors apart from the young", err)
c.check("# snapshot %s" % wall(MH["snapshots"][last]) in out,
        "the profile's header names the snapshot")
rc, out, err = rp("convert", "--format", "tree", "--event", "live", "--min-gcs", "1", H)
root = re.search(r"^ +(\d+) +\d+ +100\.00% .*\[all\]$", out, re.M)
c.check(rc == 0 and root and int(root.group(1)) == b_old and
        ", %d younger than --min-gcs" % (n_last - n_old) in out,
        "--min-gcs 1: the live tree holds the survivors only, the rest counted",
        (root and root.group(1), b_old))
for bad in ("-1", "x", "1000001"):
    rc, out, err = rp("convert", "--event", "live", "--min-gcs", bad, H)
    c.check(rc == 2 and "--min-gcs '%s'" % bad in err, "--min-gcs %s: usage error" % bad,
            (rc, err[:200]))
for opts in ([], ["--snapshot", "6"], ["--snapshot", "-3"], ["--snapshot", "first"],
             ["--to", "+5s"], ["--from", "+2s", "--snapshot", "2"], ["--per-thread"],
             ["--lines"], ["--exclude", "Temp"]):
    for fmt, chk in (("collapsed", "collapsed"), ("tree", "tree"), ("flat", "livesites"),
                     ("backtrace", "backtrace")):
        rc, out, err = rp("convert", "--format", fmt, "--event", "live", *opts, H)
        if fmt == "backtrace" and "--snapshot" in opts and "first" in opts:
            continue   # an empty profile has no methods to root a back-trace at
        if fmt == "tree" and "first" in opts:
            c.check(rc == 0 and "holds no sampled objects" in err,
                    "the empty first snapshot: an empty profile, and stderr says so", err)
            continue
        ok, why = expect(chk, out, ["--event", "live"] + opts, H + ".json")
        c.check(rc == 0 and ok, "live %s %s" % (fmt, " ".join(opts)), why)

# html: the page's data holds the chosen snapshot only, and names it.
rc, out, err = rp("convert", "--format", "html", "--event", "live", "--snapshot", "6", H)
data = json.loads(re.search(r'<script id="flame-data" type="application/json">(.*?)'
                            r'</script>', out, re.S).group(1))
n6, b6 = snapshot(MH, 5)
c.check(rc == 0 and data["nodes"][2] == b6, "html: the root weighs snapshot 6's bytes",
        (data["nodes"][2], b6))
c.check("snapshot %s" % wall(MH["snapshots"][5]) in data["info"], "html: the info line "
        "names the snapshot", data["info"])

# pprof: Go's heap-profile sample types, read back by go tool pprof.
go = shutil.which("go")
if go:
    pb = os.path.join(T, "live.pb.gz")
    rp("convert", "--event", "live", "-o", pb, H)
    env = go_env(T)
    raw = run([go, "tool", "pprof", "-raw", pb], env=env)
    lines = raw.split("\n")
    first = lines.index("Samples:") + 1
    types = lines[first].split()
    c.check(types == ["samples/count", "inuse_objects/count", "inuse_space/bytes[dflt]"],
            "pprof: live sample types are inuse_objects and inuse_space", types)
    vals = [int(m.group(3)) for m in (re.match(r"^\s+(\d+)\s+(\d+)\s+(\d+):", l)
                                      for l in lines[first + 1:]) if m]
    c.check(sum(vals) == b_last, "pprof: inuse_space adds up to the last snapshot",
            (sum(vals), b_last))
else:
    print("note: go not found; the pprof checks of the live kind were not run "
          "(tools/install-deps --test installs golang-go)")

# --------------------------------------------------------- live: errors --
rc, out, err = rp("convert", "--event", "live", A)
c.check(rc == 1 and "without live=on" in err, "--event live without snapshots: exit 1, "
        "and says the recording was made without live=on", (rc, err))
rc, out, err = rp("convert", "--event", "live", "--snapshot", "13", H)
c.check(rc == 1 and "holds only 12 live snapshots" in err,
        "--snapshot 13 of 12: exit 1 with the count", (rc, err))
rc, out, err = rp("convert", "--event", "live", "--from", "+1h", H)
c.check(rc == 1 and "no live snapshot in the time range" in err,
        "no snapshot in the range: exit 1", (rc, err))
for bad in ("0", "x", "1.5", "", "--1"):
    rc, out, err = rp("convert", "--event", "live", "--snapshot", bad, H)
    c.check(rc == 2 and "--snapshot" in err, "--snapshot %r: usage error" % bad, (rc, err))
rc, out, err = rp("convert", "--snapshot", "2", A)
c.check(rc == 0 and "--snapshot applies to" in err, "--snapshot with cpu: ignored, said",
        err)

# ------------------------------------------------------------------ leaks --
def mann_kendall(y):
    n = len(y)
    s = sum((y[j] > y[i]) - (y[j] < y[i]) for i in range(n) for j in range(i + 1, n))
    ties = {}
    for v in y:
        ties[v] = ties.get(v, 0) + 1
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5)
                                            for t in ties.values())) / 18
    z = (s - 1) / math.sqrt(var) if s > 0 else (s + 1) / math.sqrt(var) if s < 0 else 0
    return 0.5 * math.erfc(z / math.sqrt(2))


def theil_sen(x, y):
    sl = sorted((y[j] - y[i]) / (x[j] - x[i]) for i in range(len(x))
                for j in range(i + 1, len(x)))
    m = len(sl)
    return sl[m // 2] if m % 2 else (sl[m // 2 - 1] + sl[m // 2]) / 2


def series(m, klass, min_gcs):
    y = [0] * len(m["snapshots"])
    for s in m["samples"]:
        if s["kind"] == "live" and s["class"] == klass and s["age_gcs"] >= min_gcs:
            y[s["snap"]] += s["weight"]
    x = [(t - m["snapshots"][0]) / 1e9 for t in m["snapshots"]]
    return x, y


rc, out, err = rp("leaks", "--json", "--all", H)
j = json.loads(out)
c.check(rc == 0 and j["growing"] == 1 and j["snapshots"] == 12, "leaks: one growing site "
        "of 12 snapshots", (rc, j.get("growing"), j.get("snapshots")))
top = j["sites"][0]
c.check(top["verdict"] == "growing" and top["class"] == "byte[]" and
        top["frames"][0] == "app.Cache.put", "leaks: the leak is ranked first",
        (top["class"], top["frames"][:1]))
leak_stack = [st for st in MH["stacks"] if st["frames"] and
              st["frames"][-1]["name"] == "put"][0]
c.check(top["lines"] == [f["line"] or None for f in reversed(leak_stack["frames"])],
        "leaks --json: each frame's line beside it, leaf first", (top["lines"], leak_stack))
x, y = series(MH, "byte[]", 1)
want_slope = theil_sen(x, y) * 60
c.check(abs(top["bytes_per_min"] - want_slope) <= 1 + 1e-6 * want_slope,
        "leaks: the slope is Theil-Sen's over the snapshots", (top["bytes_per_min"],
                                                               want_slope))
c.check(math.isclose(top["p"], mann_kendall(y), rel_tol=1e-3), "leaks: the p-value is "
        "Mann-Kendall's", (top["p"], mann_kendall(y)))
c.check(top["live_first"] == y[0] and top["live_last"] == y[-1],
        "leaks: live bytes first and last (objects that survived a GC)", (top, y))
verdicts = {s["class"]: s["verdict"] for s in j["sites"]}
c.check(verdicts.get("app.Session") == "too-small" and verdicts.get("char[]") == "no-trend"
        and "java.lang.String" not in verdicts,
        "leaks --all: one new sample is too small, the steady site has no trend, young "
        "garbage is not counted", verdicts)
rc, out, err = rp("leaks", "--json", "--min-gcs", "0", H)
j = json.loads(out)
c.check(j["growing"] == 2 and "java.lang.String" in [s["class"] for s in j["sites"]],
        "leaks --min-gcs 0: the young garbage shows as growing (the age filter is what "
        "hides it)", [s["class"] for s in j["sites"]])
rc, out, err = rp("leaks", "--json", "--min-growth", "256k", H)
j = json.loads(out)
c.check(j["growing"] == 2 and j["sites"][1]["class"] == "app.Session",
        "leaks --min-growth 256k: the one-sample step qualifies (the threshold is what "
        "hides it)", [s["class"] for s in j["sites"]])
rc, out, err = rp("leaks", "--by", "method", H)
c.check(rc == 0 and re.search(r"^ +1 .* - byte\[\] in app\.Cache\.put$", out, re.M),
        "leaks --by method: byte[] in app.Cache.put first", out)
rc, out, err = rp("leaks", H)
c.check(re.search(r"^ +1 .* 300001 byte\[\]$", out, re.M) and
        "TRACE 300001:\n\tapp.Cache.put(Cache.java:31)\n\tapp.Server.handle(Server.java:42)"
        in out and "no growing allocation site" not in out,
        "leaks text: rank 1 and its trace, with the lines", out)
rc, out, err = rp("leaks", C)
c.check(rc == 0 and re.search(r"^no growing allocation site", out, re.M),
        "leaks on a churn-only recording: no growing allocation site, exit 0", (rc, out))
# The churn is made to fool the naive methods, so the check above means something:
# the cache's warm-up grows by over 1 MiB from the first snapshot to the last, and
# the burst near the end gives a least-squares line over 1 MiB of growth.
x, y = series(MC, "byte[]", 1)
c.check(y[-1] - y[0] > 2**20, "churn: first-to-last growth of the cache exceeds 1 MiB",
        y[-1] - y[0])
x, y = series(MC, "app.Session", 1)
mx, my = sum(x) / len(x), sum(y) / len(y)
ls = sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)
c.check(ls * (x[-1] - x[0]) > 2**20, "churn: a least-squares slope through the burst "
        "grows by over 1 MiB", ls * (x[-1] - x[0]))

rc, out, err = rp("leaks", A)
c.check(rc == 1 and "without live=on" in err, "leaks without snapshots: exit 1", (rc, err))
# A file that is not a recording: the reader's reason, as convert and summary say
# it, not a guess about the agent's options.
NOT = os.path.join(T, "not.rpc")
with open(NOT, "w") as f:
    f.write("hello\n")
for args in (["leaks"], ["convert", "--event", "live"], ["summary"]):
    rc, out, err = rp(*(args + [NOT]))
    c.check(rc == 1 and "not a ringprof chunk" in err and "live=on" not in err,
            "%s on a file that is not a recording: exit 1, the reader's reason"
            % args[0], (rc, err))
rc, out, err = rp("leaks", "--to", "+1s", H)
c.check(rc == 1 and "at least 3 live snapshots" in err and "holds 2" in err,
        "leaks with 2 snapshots in the range: exit 1, says so", (rc, err))
rc, out, err = rp("leaks", H, C)
c.check(rc == 1 and "one recording at a time" in err, "leaks on two recordings: exit 1",
        (rc, err))
for bad in (["--alpha", "2"], ["--by", "x"], ["--min-growth", "lots"],
            ["--min-gcs", "-1"], ["--top", "0"], ["--nope"], []):
    rc, out, err = rp("leaks", *bad, *([H] if bad else []))
    c.check(rc == 2 and "Try 'ringprof leaks --help'" in err, "leaks %s: usage error" % bad,
            (rc, err))

# ---------------------------------------------------------------- summary --
rc, out, err = rp("summary", H)
alloc = [s for s in MH["samples"] if s["kind"] == "alloc"]
gcs = [s for s in MH["samples"] if s["kind"] == "gc"]
ts = [s["t"] for s in MH["samples"]]
secs = (max(ts) - min(ts)) / 1e9
mib = sum(s["weight"] for s in alloc) / 2**20
c.check("  allocated   %.1f MiB, %d objects (estimated from %d samples): %.2f MiB/s, "
        "%.0f objects/s over %.3f s" % (mib, sum(s["objects"] for s in alloc), len(alloc),
                                        mib / secs, sum(s["objects"] for s in alloc) / secs,
                                        secs) in out, "summary: allocation rate", out)
c.check("  gc          %d pauses, %.3f ms in all, the longest %.3f ms (ids 1..11: 1 record "
        "missing)" % (len(gcs), sum(s["weight"] for s in gcs) / 1e6,
                      max(s["weight"] for s in gcs) / 1e6) in out,
        "summary: GC pauses and the lost GC record", out)
last_gc = max(gcs, key=lambda s: s["t"])
c.check("  heap        %.1f MiB used after the last GC (the most after any: %.1f MiB), "
        "64.0 MiB committed" % (last_gc["heap_used"] / 2**20,
                                max(s["heap_used"] for s in gcs) / 2**20) in out,
        "summary: heap after the last GC and the most", out)
c.check("  live        12 snapshots; the last, %s UTC: %.1f MiB in %d sampled objects "
        "that survived a GC; not yet collected, younger than the last GC: %.1f MiB in %d "
        "(2 sampled objects not tracked" % (wall(MH["snapshots"][last]).replace("T", " ")
                                            .rstrip("Z"), b_old / 2**20, n_old,
                                            (b_last - b_old) / 2**20, n_last - n_old) in out,
        "summary: live snapshots and the last one's figures, survivors first", out)
c.check(re.search(r"^  samples     live +%d   in 12 snapshots$" %
                  sum(1 for s in MH["samples"] if s["kind"] == "live"), out, re.M),
        "summary: live samples are not summed into a weight", out)
c.check(not re.search(r"^ +0  \?", out, re.M), "summary: GC pauses make no thread row",
        out)

c.close()
