#!/usr/bin/env python3
"""tests/convert/test_reading.py RINGPROF RP_TESTWRITER

Profiles that read right (issue 29), on rp_testwriter's recordings, the truth
computed here from their manifests:

  - overloads: rp_testwriter's "overloads" recording has Query.query(String)
    calling Query.query(String, int) and Arrays.fill of long[] and of int[].
    By default every format and `diff` name a method by class and name, so
    each overload pair is one row, one node, one function, with the samples of
    both (tree, backtrace, flat, collapsed, pprof, otlp, html, diff flat and
    collapsed); with --signatures each overload is apart and named with its
    parameter list, written here from the JVM descriptors the manifest holds.
"""
import gzip
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, load_manifest, pb_fields, packed, run, tempdir  # noqa
import otlp_read  # noqa

RINGPROF, WRITER = sys.argv[1:3]
T = tempdir()
c = Checks("reading")
PRIM = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long",
        "S": "short", "Z": "boolean"}
JAVA = (0, 1, 2)


def rp(*args, rc=0):
    r = subprocess.run([RINGPROF] + list(args), capture_output=True)
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    c.check(r.returncode == rc, "ringprof %s: exit %d" % (" ".join(args), rc),
            (r.returncode, err[-500:]))
    return out, err


def page_data(path):
    """The JSON data of an HTML page; {} when it has none."""
    m = re.search(r'<script id="flame-data" type="application/json">(.*?)</script>',
                  open(path, encoding="utf-8").read() if os.path.exists(path) else "", re.S)
    return json.loads(m.group(1)) if m else {}


def write(variant, name):
    path = os.path.join(T, name)
    run([WRITER, variant, path, "--manifest", path + ".json"])
    return path, load_manifest(path + ".json")


O, MO = write("overloads", "o.rpc")
ON, MON = write("overloads-new", "on.rpc")


# ----------------------------------------------------------- the truth --
def params(desc):
    """A JVM method descriptor's parameters as Java writes them."""
    out, i = [], 1
    while desc[i] != ")":
        dims = 0
        while desc[i] == "[":
            dims, i = dims + 1, i + 1
        if desc[i] == "L":
            end = desc.index(";", i)
            name, i = desc[i + 1:end].replace("/", "."), end + 1
        else:
            name, i = PRIM[desc[i]], i + 1
        out.append(name + "[]" * dims)
    return "(" + ", ".join(out) + ")"


def name_of(f, signatures):
    if f["type"] not in JAVA:
        return f["name"]
    n = f["class"] + "." + f["name"]
    return n + params(f.get("signature", "()V")) if signatures else n


def stacks(m, signatures):
    """[(frames root first, weight)] of the cpu samples."""
    out = []
    for s in m["samples"]:
        if s["kind"] == "cpu":
            out.append(([(name_of(f, signatures), f["type"])
                         for f in m["stacks"][s["stack"]]["frames"]], s["weight"]))
    return out


def flat_truth(m, signatures):
    """{method: (self, total)}, total counting each sample once."""
    t = {}
    for frames, w in stacks(m, signatures):
        for n in set(n for n, _ in frames):
            t.setdefault(n, [0, 0])[1] += w
        t[frames[-1][0]][0] += w
    return {k: tuple(v) for k, v in t.items()}


SUFFIX = {0: "_[0]", 1: "_[j]", 2: "_[i]", 5: "_[k]"}


def folded_truth(m, signatures):
    t = {}
    for frames, w in stacks(m, signatures):
        k = ";".join(n + SUFFIX.get(ty, "") for n, ty in frames)
        t[k] = t.get(k, 0) + w
    return t


def folded(text):
    t = {}
    for line in text.splitlines():
        k, v = line.rsplit(" ", 1)
        t[k] = t.get(k, 0) + int(v)
    return t


def flat_rows(text, title="CPU SAMPLES"):
    if title + " BEGIN" not in text:
        return {}
    body = text.split(title + " BEGIN", 1)[1].split(title + " END")[0]
    rows = {}
    for line in body.splitlines()[2:]:
        f = line.split(None, 7)
        c.check(f[7] not in rows, "flat: one row per name (%s)" % f[7])
        rows[f[7]] = (int(f[4]), int(f[6]))
    return rows


OVERLOADED = ("app.db.Query.query", "java.util.Arrays.fill")
for sig in (False, True):
    what = "--signatures" if sig else "overloads merged"
    opt = ["--signatures"] if sig else []
    want = flat_truth(MO, sig)
    n_methods = len(want)
    c.check(n_methods == (6 if sig else 4), "%s: the truth has %d methods" % (what, n_methods),
            sorted(want))
    out, _ = rp("convert", "--format", "flat", *opt, O)
    c.check(flat_rows(out) == want, what + ": flat, one row per method",
            (flat_rows(out), want))
    out, _ = rp("convert", "--format", "collapsed", *opt, O)
    c.check(folded(out) == folded_truth(MO, sig), what + ": collapsed stacks",
            (folded(out), folded_truth(MO, sig)))
    out, _ = rp("convert", "--format", "tree", "--cutoff", "0", *opt, O)
    lines = [l for l in out.splitlines() if not l.startswith("#") and "call tree" not in l]
    paths = {tuple(n for n, _ in fr[:k]) for fr, _ in stacks(MO, sig)
             for k in range(1, len(fr) + 1)}
    c.check(len(lines) == len(paths) + 1, "%s: tree, a node per call path (%d)"
            % (what, len(paths)), out)
    if not sig:   # an overload calling the other is one method calling itself
        c.check(re.search(r"^ .*   app\.db\.Query\.query\n.*     app\.db\.Query\.query$", out,
                          re.M), "merged: the tree shows query under query", out)
    out, _ = rp("convert", "--format", "backtrace", "--method", "fill", *opt, O)
    roots = re.findall(r"^--- \d+: (.*)$", out, re.M)
    c.check(roots == sorted((n for n in want if ".fill" in n), key=lambda n: -want[n][1]),
            what + ": backtrace roots", roots)
    # pprof: one Function per method, its name as the tables show it
    pp = os.path.join(T, "o%d.pb.gz" % sig)
    rp("convert", "--quiet", "-o", pp, *opt, O)
    prof = list(pb_fields(gzip.open(pp).read())) if os.path.exists(pp) else []
    strs = [v.decode() for f, v in prof if f == 6]
    fnames = [strs[dict(pb_fields(v))[2]] for f, v in prof if f == 5]
    c.check(sorted(fnames) == sorted(n for n in want), what + ": pprof functions",
            sorted(fnames))
    systems = [strs[dict(pb_fields(v)).get(3, 0)] for f, v in prof if f == 5]
    c.check(all(s.endswith(")V") or ")L" in s or "[" in s for s in systems
                if s.startswith(("app.", "java."))),
            what + ": pprof system names are class, name and descriptor", systems)
    # OTLP: the same functions, the samples' stacks as collapsed has them
    ot = os.path.join(T, "o%d.otlp" % sig)
    rp("convert", "--quiet", "--event", "cpu", "-o", ot, *opt, O)
    req = otlp_read.decode(open(ot, "rb").read()) if os.path.exists(ot) else None
    cpu = [p for r in req["resources"] for p in r["profiles"]
           if otlp_read.type_of(req, p)[0] == "cpu"] if req else []
    got = {}
    for frames, _, v in otlp_read.stacks_of(req, cpu[0]) if cpu else []:
        got[tuple(f[0] for f in frames)] = got.get(tuple(f[0] for f in frames), 0) + v
    exp = {}
    for frames, w in stacks(MO, sig):
        exp[tuple(n for n, _ in frames)] = exp.get(tuple(n for n, _ in frames), 0) + w
    c.check(got == exp, what + ": otlp stacks", (got, exp))
    # html: the page's names and root weight
    page = os.path.join(T, "o%d.html" % sig)
    rp("convert", "--quiet", "-o", page, *opt, O)
    names = set(page_data(page).get("strings", [])) - {""}
    c.check(names == set(want), what + ": html, one name per method", sorted(names))
    # diff: the rows joined by the same names as convert's
    out, _ = rp("diff", "--json", *opt, O, ON)
    rows = {r["name"]: (r["base_self"], r["new_self"])
            for r in (json.loads(out)["rows"] if out else [])}
    new = flat_truth(MON, sig)
    c.check(rows == {k: (want[k][0], new[k][0]) for k in want},
            what + ": diff --json, the rows of both sides by the same names", rows)
    out, _ = rp("diff", "--format", "collapsed", *opt, O, ON)
    got = {l.rsplit(" ", 2)[0]: tuple(map(int, l.rsplit(" ", 2)[1:]))
           for l in out.splitlines() if l.count(" ") >= 2}
    fb, fn = folded_truth(MO, sig), folded_truth(MON, sig)
    c.check(got == {k: (fb.get(k, 0), fn.get(k, 0)) for k in set(fb) | set(fn)},
            what + ": diff collapsed", got)
    if sig:
        c.check("java.util.Arrays.fill(long[], long)" in want and
                "app.db.Query.query(java.lang.String, int)" in want,
                "--signatures: the names the test expects", sorted(want))
    else:
        c.check(all(n in want for n in OVERLOADED), "merged: the names", sorted(want))


c.close()
