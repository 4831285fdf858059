#!/usr/bin/env python3
"""tests/convert/test_reading.py RINGPROF RP_TESTWRITER

Profiles that read right (issue 29, items 6, 9 and 11), on rp_testwriter's
recordings, the truth computed here from their manifests:

  - overloads: rp_testwriter's "overloads" recording has Query.query(String)
    calling Query.query(String, int) and Arrays.fill of long[] and of int[].
    By default every format and `diff` name a method by class and name, so
    each overload pair is one row, one node, one function, with the samples of
    both (tree, backtrace, flat, collapsed, pprof, otlp, html, diff flat and
    collapsed); with --signatures each overload is apart and named with its
    parameter list, written here from the JVM descriptors the manifest holds;
  - legends: each text output ends with "# markers:" and one line for each
    marker frame it shows, and none when it shows none (tree, backtrace, flat,
    SITES, diff, leaks); pprof carries them as comments, the HTML page as data;
  - the tree's default cutoff (1%): every node at or over it shown, the others
    summed per parent (expect.py checks the figures of the matrix's trees);
    --cutoff 0 shows every call path;
  - the small ones: --group package says "package" in the headers and counts,
    SITES traces have lines by default and --lines does not print a line twice,
    "1 sample", an empty file or directory named without "offset 0" or "not
    found".
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
A, MA = write("main", "a.rpc")
DB, _ = write("diff-base", "db.rpc")


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


# ------------------------------------------------------------ legends --
MARKER = re.compile(r"\[(?:ringprof(?::\w+)?|agct:\w+|walk:crashed|no_agct|jvmti:error|"
                    r"not_java|no_java_frames|truncated|no stack|unloaded|state:\w+)\]")


def legend_of(text):
    """(the labels of the legend, the markers in the output's other lines)."""
    labels, body, inside = [], set(), False
    for line in text.splitlines():
        if line == "# markers:":
            inside = True
        elif inside and line.startswith("#   "):
            labels.append(line[4:].split("  ")[0])
        else:
            inside = False
            if not line.startswith("#"):
                body |= set(MARKER.findall(line))
    return labels, body


CASES = [
    ("tree", ["convert", "--format", "tree", A], {"[agct:gc_active]", "[truncated]"}),
    ("tree --cutoff 0", ["convert", "--format", "tree", "--cutoff", "0", A],
     {"[agct:gc_active]", "[truncated]", "[no stack]"}),
    ("tree --cutoff 5", ["convert", "--format", "tree", "--cutoff", "5", A], set()),
    ("backtrace", ["convert", "--format", "backtrace", A],
     {"[agct:gc_active]", "[truncated]", "[no stack]"}),
    ("flat", ["convert", "--format", "flat", A], {"[agct:gc_active]", "[truncated]",
                                                  "[no stack]"}),
    ("flat --top 2", ["convert", "--format", "flat", "--top", "2", A], set()),
    ("SITES", ["convert", "--format", "flat", "--event", "alloc", A], set()),
    ("flat, the agent's marker", ["convert", "--format", "flat", O], {"[ringprof:alloc]"}),
    ("diff", ["diff", O, ON], {"[ringprof:alloc]"}),
    ("diff, no marker", ["diff", "--overlap", DB, DB], set()),
]
for what, args, want in CASES:
    out, _ = rp(*args)
    labels, body = legend_of(out)
    c.check(set(labels) == want == body and len(labels) == len(want) and
            (("# markers:" in out) == bool(want)),
            "legend of %s: exactly the markers shown %s" % (what, sorted(want)),
            (labels, sorted(body), out[-800:]))
out, _ = rp("convert", "--format", "flat", O)
c.check("#   [ringprof:alloc]  CPU the agent spent sampling an allocation (alloc=), shown "
        "under the Java code that allocated (docs/engines.md, \"The agent's own work\")"
        in out, "legend: what [ringprof:alloc] is, and where the docs say more", out)
pp = os.path.join(T, "a.pb.gz")
rp("convert", "--quiet", "-o", pp, A)
prof = list(pb_fields(gzip.open(pp).read()))
strs = [v.decode("utf-8", "replace") for f, v in prof if f == 6]
comments = [strs[i] for f, v in prof if f == 13 for i in packed(v)]
c.check([x.split("]:")[0] + "]" for x in comments if x.startswith("[")] ==
        ["[agct:gc_active]", "[truncated]", "[no stack]"],
        "pprof: a comment for each marker written", comments)
page = os.path.join(T, "a.html")
rp("convert", "--quiet", "-o", page, A)
data = page_data(page)
c.check([m[0] for m in data.get("markers", [])] == ["[agct:gc_active]", "[truncated]", "[no stack]"]
        and all(m[1] and m[2].startswith("docs/") for m in data["markers"]),
        "html: the markers' meanings in the page's data", data.get("markers"))

# --------------------------------------------------------- tree cutoff --
out, _ = rp("convert", "--format", "tree", A)
c.check("# frames method, threads merged, cutoff 1.00%" in out and
        "[1 more below 1.00% hidden]" in out and
        "# cutoff 1.00%: 1 branch hidden, weight 10000000 (0.99%); --cutoff 0 shows every "
        "node" in out, "tree: the default cutoff, said in the header and the footer", out)
out, _ = rp("convert", "--format", "tree", "--cutoff", "0", A)
nodes = [l for l in out.splitlines() if not l.startswith("#") and "call tree" not in l]
paths = set()
for s in MA["samples"]:
    if s["kind"] != "cpu":
        continue
    st = MA["stacks"][s["stack"]]
    p = (["[truncated]"] if st["truncated"] else []) + \
        [name_of(f, False) + str(f["type"]) for f in st["frames"]] or ["[no stack]"]
    paths |= {tuple(p[:k]) for k in range(1, len(p) + 1)}
c.check(len(nodes) == len(paths) + 1 and "hidden" not in out and "cutoff" not in out,
        "tree --cutoff 0: every call path (%d), no cutoff said" % len(paths), out)

# --------------------------------------------------------- small items --
out, _ = rp("convert", "--format", "flat", "--group", "package", "--top", "1", A)
c.check("# frames package, threads merged" in out and
        re.search(r"^# \d+ more packages not shown \(--top 1\)$", out, re.M) and
        "method" not in out.split("CPU SAMPLES BEGIN")[0].split("\n", 4)[3],
        "--group package: the headers say package", out)
out, _ = rp("convert", "--format", "backtrace", "--group", "class", "--top", "2", A)
c.check("# 2 classes: the top ones by self weight. Under each class" in out,
        "--group class: the backtrace says classes", out[:600])
out, _ = rp("convert", "--format", "flat", "--event", "alloc", A)
c.check("\tapp.Json.parse(Json.java:7)\n\tapp.Server.handle(Server.java:42)" in out,
        "SITES traces have their lines by default", out)
out, _ = rp("convert", "--format", "flat", "--event", "alloc", "--lines", A)
c.check("\tapp.Json.parse(Json.java:7)" in out and not re.search(r":\d+\(", out),
        "SITES --lines: each line once, in the parenthesis", out)
out, _ = rp("convert", "--format", "flat", "--include", r"\[no stack\]", A)
c.check("1 sample, weight" in out and "(total = 1 sample," in out and "1 samples" not in out,
        "one sample is '1 sample'", out[:400])
empty = os.path.join(T, "empty.rpc")
open(empty, "w").close()
_, err = rp("convert", empty, rc=1)
c.check("ringprof: %s: empty file: not a ringprof chunk (file skipped)" % empty in err and
        "offset" not in err, "an empty file: said without an offset", err)
os.mkdir(os.path.join(T, "none"))
_, err = rp("summary", os.path.join(T, "none"), rc=1)
c.check("no chunk files (*.rpc) in this directory" in err and "not found" not in err and
        "1 input with no chunk file" in err, "summary of an empty directory: not 'not found'",
        err)
c.close()
