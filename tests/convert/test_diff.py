#!/usr/bin/env python3
"""tests/convert/test_diff.py -- `ringprof diff` and the frame normalisation
(--hidden-classes, --merge-frame-types, --group) against rp_testwriter's diff
recordings, whose truth is computed here from the writer's manifests.

usage: test_diff.py RINGPROF RP_TESTWRITER

diff-base and diff-new (rp_testwriter.c, "diff recordings") differ by a known
amount: app.core.Hot.work's self share goes from 40% to 55%, its frames are
split between JIT-compiled and interpreted, a lambda is named with a different
address on each side. diff-one holds both as two time windows. Checked:
  - flat --json: every row (self and total weight of each side, the change,
    the shares) equals what the manifests give, with each normalisation option
    and --normalize; the text table's row for Hot.work;
  - collapsed: the exact set of "stack BASE NEW" lines, --normalize as
    difffolded.pl -n computes it; convert's own collapsed output with the same
    options agrees with the diff's columns, and its flat table by package;
  - one recording with --base-from/--base-to and --from/--to windows gives the
    same diff as the two recordings; for kinds wall, lock, alloc and live (the
    waits and heap recordings) each window's stacks are convert's for it;
  - pprof: go tool pprof -diff_base reads the pair and shows Hot.work's change
    (skipped without go);
  - html: the page's data holds NEW's shape with each frame's base and new
    weights;
  - usage errors exit 2.
"""
import collections
import html
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import JAVA_TYPES, Checks, go_env, load_manifest, tempdir  # noqa: E402

RINGPROF, WRITER = sys.argv[1:3]
T = tempdir()
c = Checks("diff")

M = {}
for v in ("base", "new", "one"):
    subprocess.run([WRITER, "diff-" + v, os.path.join(T, v + ".rpc"), "--manifest",
                    os.path.join(T, v + ".json")], check=True)
    M[v] = load_manifest(os.path.join(T, v + ".json"))
BASE, NEW, ONE = (os.path.join(T, v + ".rpc") for v in ("base", "new", "one"))


def ringprof(*args, code=0):
    r = subprocess.run([RINGPROF] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    out = r.stdout.decode("utf-8", "replace")
    if code is not None and r.returncode != code:
        raise RuntimeError("ringprof %s exited %d, not %d:\n%s%s" % (
            " ".join(args), r.returncode, code, out, r.stderr.decode()))
    return out, r.stderr.decode("utf-8", "replace"), r.returncode


# --------------------------------------------------------------- the truth -- #

HEX = re.compile(r"[/.]0x[0-9a-fA-F]+$")
LAMBDA_SEQ = re.compile(r"(\$\$Lambda)\$\d+$")
SUFFIX = {0: "_[0]", 1: "_[j]", 2: "_[i]", 5: "_[k]"}


def strip_hidden(cls):
    return LAMBDA_SEQ.sub(r"\1", HEX.sub("", cls))


def shown_frames(frames, hidden, merge, group):
    """(name, type) of each frame, root first, as the profile shows it
    (tools/model/frame_norm.h)."""
    out = []
    for f in frames:
        t, java = f["type"], f["type"] in JAVA_TYPES and f["class"]
        if not java:
            out.append((f["name"], t))
            continue
        cls = strip_hidden(f["class"]) if hidden else f["class"]
        if merge or group != "method":
            t = 1
        if group == "method":
            out.append((cls + "." + f["name"], t))
            continue
        if group == "class":
            name = cls
        else:
            bare = strip_hidden(f["class"])
            name = bare[:bare.rfind(".")] if "." in bare else "[default package]"
        if not out or out[-1] != (name, t):
            out.append((name, t))
    return out


class Side:
    """One side's figures: collapsed stacks, per-method self and total."""

    def __init__(self, manifest, window=None, **opts):
        self.stacks = collections.Counter()
        self.self = collections.Counter()
        self.total = collections.Counter()
        self.whole = 0
        t0 = manifest["samples"][0]["t"]
        for s in manifest["samples"]:
            if window and not window[0] <= s["t"] - t0 < window[1]:
                continue
            fr = shown_frames(manifest["stacks"][s["stack"]]["frames"], **opts)
            w = s["weight"]
            self.stacks[";".join(n + SUFFIX.get(t, "") for n, t in fr)] += w
            self.self[fr[-1][0]] += w
            for n in set(n for n, _ in fr):
                self.total[n] += w
            self.whole += w


def truth(normalize=False, hidden=True, merge=False, group="method"):
    opts = dict(hidden=hidden, merge=merge, group=group)
    return Side(M["base"], **opts), Side(M["new"], **opts), normalize


def want_collapsed(b, n, normalize):
    lines = set()
    for k in set(b.stacks) | set(n.stacks):
        bv = b.stacks[k]
        if normalize and b.whole != n.whole:
            bv = bv * n.whole // b.whole       # difffolded.pl -n: int()
        lines.add("%s %d %d" % (k, bv, n.stacks[k]))
    return lines


def want_rows(b, n, normalize):
    scale = n.whole / b.whole if normalize else 1.0
    rows = {}
    for name in set(b.total) | set(n.total):
        r = {}
        for what, bs, ns in (("self", b.self, n.self), ("total", b.total, n.total)):
            r["base_" + what] = bs[name] * scale
            r["new_" + what] = ns[name]
            r["change_" + what] = round(ns[name] - bs[name] * scale)
            r["base_%s_share" % what] = bs[name] / b.whole
            r["new_%s_share" % what] = ns[name] / n.whole
        rows[name] = r
    return rows


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_json(label, args, want):
    out, _, _ = ringprof("diff", "--json", *args)
    got = json.loads(out)
    b, n, normalize = want
    rows = want_rows(b, n, normalize)
    c.check(got["base"]["weight"] == b.whole and got["new"]["weight"] == n.whole,
            label + ": totals", (got["base"], got["new"]))
    grows = {r["name"]: r for r in got["rows"]}
    c.check(set(grows) == set(rows), label + ": the rows' names",
            sorted(set(grows) ^ set(rows)))
    bad = [(k, f, grows[k][f], v) for k, r in rows.items() if k in grows
           for f, v in r.items() if not close(grows[k][f], v)]
    c.check(not bad, label + ": every row's figures", bad[:4])
    ranks = [abs(r["change_self"]) for r in got["rows"]]
    c.check(ranks == sorted(ranks, reverse=True), label + ": ranked by change of self")
    return grows


def check_collapsed(label, args, want):
    out, _, _ = ringprof("diff", "--format", "collapsed", *args)
    got = set(l for l in out.split("\n") if l)
    exp = want_collapsed(*want)
    c.check(got == exp, label + ": collapsed lines", sorted(got ^ exp)[:6])


# ------------------------------------------------------------------ checks -- #

CASES = [
    ("default", [], dict()),
    ("--normalize", ["--normalize"], dict(normalize=True)),
    ("--hidden-classes keep", ["--hidden-classes", "keep"], dict(hidden=False)),
    ("--merge-frame-types", ["--merge-frame-types"], dict(merge=True)),
    ("--group class", ["--group", "class"], dict(group="class")),
    ("--group package --normalize", ["--group", "package", "--normalize"],
     dict(group="package", normalize=True)),
]
for label, args, opts in CASES:
    want = truth(**opts)
    check_json(label, args + [BASE, NEW], want)
    check_collapsed(label, args + [BASE, NEW], want)

# The figures the recordings were made for, stated by hand.
rows = check_json("hand", [BASE, NEW], truth())
hot = rows.get("app.core.Hot.work", {})
c.check(hot.get("base_self") == 400e6 and hot.get("new_self") == 1100e6 and
        close(hot.get("new_self_share", 0) - hot.get("base_self_share", 0), 0.15),
        "Hot.work: 40% -> 55% of self", hot)
c.check("app.core.Loop$$Lambda.apply" in rows, "the lambda's two names are one row",
        sorted(rows))
nrows = check_json("hand --normalize", ["--normalize", BASE, NEW], truth(normalize=True))
c.check(nrows.get("app.core.Hot.work", {}).get("change_self") == 300e6,
        "normalised: Hot.work +300 ms (1100 - 2 x 400)", nrows.get("app.core.Hot.work"))

out, _, _ = ringprof("diff", BASE, NEW)
line = [l for l in out.split("\n") if l.endswith(" app.core.Hot.work")]
# The weights as summary shows them, in time units (the JSON keeps nanoseconds).
c.check(len(line) == 1 and re.split(r"\s{2,}", line[0].strip()) ==
        ["1", "400.000 ms", "1.100 s", "+700.000 ms", "+175.0%", "40.00%", "55.00%",
         "+15.00", "400.000 ms", "1.200 s", "+800.000 ms", "app.core.Hot.work"],
        "flat text: Hot.work's row, the weights in units", line)
c.check(line and out.split("\n").index(line[0]) == 5, "flat text: Hot.work ranked first",
        out[:600])

# convert with the same options writes the same stacks as the diff's NEW column.
for label, args, opts in CASES[2:5]:
    conv, _, _ = ringprof("convert", "--format", "collapsed", "--hidden-classes", "strip",
                          *args, NEW)
    got = collections.Counter()
    for l in conv.split("\n"):
        if l:
            k, v = l.rsplit(" ", 1)
            got[k] += int(v)
    n = truth(**opts)[1]
    c.check(got == n.stacks, "convert " + label + ": collapsed", (got, n.stacks))

# convert's flat table by package: each package's self and total weight.
flat, _, _ = ringprof("convert", "--format", "flat", "--group", "package", NEW)
got = {}
for l in flat.split("\n"):
    f = l.split()
    if len(f) == 8 and f[0].isdigit():
        got[f[7]] = (int(f[4]), int(f[6]))
n = truth(group="package")[1]
c.check(got == {k: (n.self[k], n.total[k]) for k in n.total},
        "convert --group package: the flat table", (got, n.self, n.total))
c.check(any(l.startswith("rank ") and l.split()[-1] == "package" for l in flat.split("\n")),
        "convert --group package: the name column is headed 'package'")
dflat, _, _ = ringprof("diff", "--group", "class", BASE, NEW)
c.check(any(l.startswith("rank ") and l.split()[-1] == "class" for l in dflat.split("\n")),
        "diff --group class: the name column is headed 'class'")

# One recording, two windows: the same diff as two recordings.
two, _, _ = ringprof("diff", "--json", BASE, NEW)
one, _, _ = ringprof("diff", "--json", "--base-to", "+15s", "--from", "+15s", ONE)
c.check(json.loads(one)["rows"] == json.loads(two)["rows"],
        "windows of one recording: the same rows as two recordings")
b1, n1 = Side(M["one"], (0, 15e9), hidden=True, merge=False, group="method"), \
    Side(M["one"], (15e9, 1e12), hidden=True, merge=False, group="method")
c.check(b1.stacks == truth()[0].stacks and n1.stacks == truth()[1].stacks,
        "the manifest's windows are the two recordings")

# Every kind, two windows of one recording: each side's total and its stacks are
# what convert gives for that window (live: the last snapshot in it).
WAITS, HEAP = os.path.join(T, "w.rpc"), os.path.join(T, "heap")
subprocess.run([WRITER, "waits", WAITS], check=True)
subprocess.run([WRITER, "heap", HEAP], check=True)
for kind, rec, split in (("wall", WAITS, "+2s"), ("lock", WAITS, "+2s"),
                         ("alloc", HEAP, "+5s"), ("live", HEAP, "+5s")):
    sides = []
    for window in (["--to", split], ["--from", split]):
        conv, _, _ = ringprof("convert", "--quiet", "--format", "collapsed", "--event", kind,
                              "--hidden-classes", "strip", *window, rec)
        sides.append(dict(l.rsplit(" ", 1) for l in conv.split("\n") if l))
    out, _, _ = ringprof("diff", "--quiet", "--json", "--event", kind, "--base-to", split,
                         "--from", split, rec)
    got = json.loads(out)
    c.check([got["base"]["weight"], got["new"]["weight"]] ==
            [sum(int(v) for v in s.values()) for s in sides] and got["kind"] == kind,
            "--event %s: each side's total is convert's for its window" % kind,
            (got["base"], got["new"]))
    col, _, _ = ringprof("diff", "--quiet", "--format", "collapsed", "--event", kind,
                         "--base-to", split, "--from", split, rec)
    want = set("%s %s %s" % (k, sides[0].get(k, "0"), sides[1].get(k, "0"))
               for k in set(sides[0]) | set(sides[1]))
    c.check(set(l for l in col.split("\n") if l) == want,
            "--event %s: the stacks of both windows" % kind)

# pprof: the pair, read by go tool pprof -diff_base.
go = shutil.which("go")
if go:
    d = os.path.join(T, "pp")
    ringprof("diff", "--format", "pprof", "-o", d, "--quiet", BASE, NEW)
    env = go_env(T)
    # -normalize scales NEW to BASE's total: 1100/2 - 400 = +150 ms.
    for extra, want_ms in (([], 700), (["-normalize"], 150)):
        top = subprocess.run([go, "tool", "pprof", "-top", "-unit=ms"] + extra +
                             ["-diff_base=" + os.path.join(d, "base.pb.gz"),
                              os.path.join(d, "new.pb.gz")], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=120).stdout.decode()
        m = re.search(r"^\s*(-?\d+)ms\s.*\sapp\.core\.Hot\.work$", top, re.M)
        c.check(m and int(m.group(1)) == want_ms,
                "go tool pprof -diff_base %s: Hot.work %+d ms" % (" ".join(extra), want_ms),
                top)
else:
    print("note: go not found; the pprof pair is not read back")

# html: NEW's shape, each frame with base and new weights.
page = os.path.join(T, "d.html")
ringprof("diff", "--format", "html", "-o", page, BASE, NEW)
text = open(page, encoding="utf-8").read()
m = re.search(r'<script id="flame-data" type="application/json">(.*?)</script>', text, re.S)
c.check(m is not None, "html: the page has its data")
if m:
    data = json.loads(m.group(1))
    nodes, base = data["nodes"], data.get("base", [])
    c.check(len(base) == 2 * (len(nodes) // 5), "html: base figures for every node")
    # Rebuild each node's path, and compare self weights with the truth.
    b, n, _ = truth()
    got_new, got_base, stack, i = {}, {}, [], 0
    remaining = []
    while i < len(nodes) // 5:
        name, typ, w, _, kids = nodes[5 * i:5 * i + 5]
        while remaining and remaining[-1] == 0:
            remaining.pop()
            stack.pop()
        if remaining:
            remaining[-1] -= 1
        label = data["strings"][name] + SUFFIX.get(typ, "")
        stack.append(label)
        remaining.append(kids)
        key = ";".join(stack[1:])
        got_new[key] = w
        got_base[key] = base[2 * i + 1]   # base self weight
        i += 1
    want_new = collections.Counter()
    for k, v in n.stacks.items():
        parts = k.split(";")
        for j in range(1, len(parts) + 1):
            want_new[";".join(parts[:j])] += v
    c.check({k: v for k, v in got_new.items() if k} == dict(want_new),
            "html: NEW's shape and total weights", (got_new, want_new))
    c.check(all(got_base.get(k, 0) == b.stacks[k] for k in b.stacks if k in got_new) and
            all(v == b.stacks.get(k, 0) for k, v in got_base.items() if k),
            "html: base self weights", got_base)
    c.check(data.get("diff", {}).get("base_total") == b.whole, "html: base total",
            data.get("diff"))

# The page in a browser: the tooltip's and the search's base, new and change.
chromium = shutil.which("chromium")
if chromium:
    udd = os.path.join(T, "chromium")
    url = "file://" + page + "#selftest=" + "click%3Aapp.core.Hot.work%3Bsearch%3AHot"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          "--no-first-run", "--disable-extensions", "--user-data-dir=" + udd,
                          "--window-size=1400,900", "--dump-dom", url],
                         env=dict(os.environ, HOME=T), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=180).stdout.decode()
    m = re.search(r'<pre id="selftest" data-done="1">(.*?)</pre>', dom, re.S)
    if c.check(m is not None, "html: the page ran its self-test", dom[-1500:]):
        st = [json.loads(l)["state"] for l in html.unescape(m.group(1)).split("\n")]
        # the heaviest Hot.work frame is the JIT-compiled one: 90 and 30 samples
        c.check("self: new 900.00 ms, base 300.00 ms, change +600.00 ms (+200.0%)"
                in st[1].get("zoomText", ""), "html: the tooltip's self change",
                st[1].get("zoomText"))
        c.check(st[0].get("maxChange") == 600e6, "html: the largest change colours",
                st[0].get("maxChange"))
        c.check(st[2].get("matchedText") == "Matched: 60.00% (1.200 s); base 40.00% "
                "(400.00 ms), change +800.00 ms", "html: the search's base and change",
                st[2].get("matchedText"))
else:
    print("note: chromium not found; the page is not run")

# Usage errors.
for args in (["diff"], ["diff", BASE], ["diff", BASE, NEW, ONE],
             ["diff", "--format", "tree", BASE, NEW], ["diff", "--format", "pprof", BASE, NEW],
             ["diff", "--group", "module", BASE, NEW],
             ["diff", "--hidden-classes", "drop", BASE, NEW],
             ["diff", "--json", "--format", "collapsed", BASE, NEW],
             ["diff", "--base-from", "yesterday", ONE],
             ["convert", "--group", "pkg", BASE]):
    _, err, rc = ringprof(*args, code=None)
    c.check(rc == 2 and "Try 'ringprof %s --help'" % args[0] in err,
            "usage error: ringprof " + " ".join(args[:3]),
            (rc, err[:200]))
_, err, rc = ringprof("diff", "--event", "allocs", BASE, NEW, code=None)
c.check(rc == 2 and "unknown event 'allocs' (did you mean 'alloc'?)" in err,
        "an event kind no input has and no agent writes: a usage error", (rc, err))
_, err, rc = ringprof("diff", "--event", "wall", BASE, NEW, code=None)
c.check(rc == 1 and "base: the inputs have no kind 'wall' (they hold: cpu 100)" in err,
        "an agent's event kind the inputs do not have", (rc, err))
_, err, rc = ringprof("diff", "--thread", "nobody", BASE, NEW)
c.check("no sample left after the filters" in err, "a side the filters empty", err)
_, err, rc = ringprof("diff", BASE, os.path.join(T, "absent"), code=None)
c.check(rc == 1 and "new: no input could be read" in err, "a missing NEW", (rc, err))

c.close()
