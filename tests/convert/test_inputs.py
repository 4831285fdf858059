#!/usr/bin/env python3
"""tests/convert/test_inputs.py RINGPROF RP_TESTWRITER DOCS

The inputs every command reads (tools/model/inputs.h, docs/tool.md), on
rp_testwriter's recordings, against their manifests:
  - duplicates: the same chunk given twice (one file twice, a directory and a
    glob over it, a copy, a finished chunk and its ".part", a chunk without
    recording.id and chunk.seq and its byte-for-byte copy) is read once by
    convert, summary, leaks, locks and each side of diff, whose figures are the
    manifest's, and one line says which input was left out and which was read;
    diff refuses two sides that share a chunk unless --overlap;
  - summary's thread table: a column of samples per kind, each thread's the
    manifest's count (live: its objects in the last snapshot);
  - a chunk cut before its first whole segment: every format exits 1 with one
    line and writes nothing; the reader says whether a writer holds it (a
    ".part" locked here as the recording locks it), its writer died (a ".part"
    nobody holds) or it is a finished name;
  - summary's counters: one line per group with a heading of DOCS, each counter
    only with --counters.
About a second.
"""
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, load_manifest, run, tempdir  # noqa

RINGPROF, WRITER, DOCS = sys.argv[1:4]
T = tempdir()
c = Checks("inputs")
A, S, H, W = (os.path.join(T, n) for n in ("a.rpc", "split", "heap", "w.rpc"))
for variant, path in (("main", A), ("split", S), ("heap", H), ("waits", W)):
    run([WRITER, variant, path, "--manifest", path + ".json"])
MA, MS, MH, MW = (load_manifest(p + ".json") for p in (A, S, H, W))
S0, S1 = (os.path.join(S, n) for n in sorted(os.listdir(S)))


def rp(*args):
    """(exit status, stdout, stderr) of ringprof ARGS."""
    r = subprocess.run([RINGPROF] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return (r.returncode, r.stdout.decode("utf-8", "replace"),
            r.stderr.decode("utf-8", "replace"))


def dup_line(cmd, n, first, what):
    return ("ringprof %s: left out %d duplicate input%s (each chunk is read once): the "
            "first, %s, %s" % (cmd, n, "" if n == 1 else "s", first, what))


def copy_to(src, *names):
    for dst in names:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)


def cpu_header(m):
    cpu = [s for s in m["samples"] if s["kind"] == "cpu"]
    return "# ringprof flat: kind cpu (unit ns), %d samples, weight %d " % (
        len(cpu), sum(s["weight"] for s in cpu))


# ---------------------------------------------------------- duplicates --
# convert: each way of giving a chunk twice reads it once, as the manifest says.
rc, alone, err = rp("convert", "--format", "flat", A)
c.check(rc == 0 and alone.startswith(cpu_header(MA)) and not err,
        "convert A: the manifest's figures", alone[:200])
COPY = os.path.join(T, "copies", "copy.rpc")
copy_to(A, COPY)
for args, line in (
        ([A, A], dup_line("convert", 1, A, "was given twice")),
        ([A, os.path.dirname(COPY)],
         dup_line("convert", 1, COPY, "is chunk 0 of recording rec-A, read from " + A)),
        ([COPY, A], dup_line("convert", 1, A,
                             "is chunk 0 of recording rec-A, read from " + COPY))):
    rc, out, err = rp("convert", "--format", "flat", *args)
    c.check(rc == 0 and out == alone, "convert %s: A's figures, once" % args, out[:200])
    c.check(err == line + "\n", "convert %s: one line names the duplicate" % args,
            (err, line))
rc, split, _ = rp("convert", "--format", "flat", S)
c.check(split.startswith(cpu_header(MS)), "convert split: the manifest's figures",
        split[:200])
rc, out, err = rp("convert", "--format", "flat", S, os.path.join(S, "*.rpc"))
c.check(rc == 0 and out == split and err == dup_line("convert", 2, S0, "was given twice")
        + "\n", "convert DIR DIR/*.rpc: each chunk once, one line", (out[:200], err))
# A finished chunk and its .part (the writer renamed it while it was listed): the
# finished one is read, whatever the order.
TWIN = os.path.join(T, "twin")
copy_to(S0, os.path.join(TWIN, os.path.basename(S0)),
        os.path.join(TWIN, os.path.basename(S0) + ".part"))
copy_to(S1, os.path.join(TWIN, os.path.basename(S1)))
rc, out, err = rp("convert", "--format", "flat", TWIN)
c.check(rc == 0 and out == split, "convert: a chunk and its .part read once", out[:200])
part = os.path.join(TWIN, os.path.basename(S0) + ".part")
c.check(err == dup_line("convert", 1, part, "is chunk 0 of recording rec-A, read from "
                        + part[:-len(".part")]) + "\n",
        "convert: the .part is left out, the finished chunk read", err)
c.check(rp("convert", "--quiet", "--format", "flat", A, A)[2] == "",
        "convert --quiet: no duplicates line")

# Chunks without recording.id and chunk.seq: identical bytes are one chunk; a copy
# cut short differs, and is read as well.
OLD = os.path.join(T, "old.rpc")
run([WRITER, "main", OLD], env=dict(os.environ, RP_TESTWRITER_NO_IDS="1"))
OLDCOPY = os.path.join(T, "oldcopy", "old.rpc")
copy_to(OLD, OLDCOPY)
rc, old_alone, _ = rp("convert", "--format", "flat", OLD)
c.check(old_alone.startswith(cpu_header(MA)), "no ids: the manifest's figures")
rc, out, err = rp("convert", "--format", "flat", OLD, OLDCOPY)
c.check(rc == 0 and out == old_alone and err == dup_line(
    "convert", 1, OLDCOPY, "has the same bytes as " + OLD) + "\n",
    "no ids: a byte-for-byte copy is read once, said so", (out[:200], err))
with open(OLD, "rb") as f:
    data = f.read()
with open(OLDCOPY, "wb") as f:
    f.write(data[:-1])
rc, out, err = rp("convert", "--format", "flat", OLD, OLDCOPY)
n = re.match(r"# ringprof flat: kind cpu \(unit ns\), (\d+) samples", out)
c.check(rc == 0 and "left out" not in err and n and int(n.group(1)) > 100,
        "no ids: a copy cut short is another file, read as well", (out[:100], err))

# summary, leaks, locks: the same figures as from one copy, one line.
for cmd, inp, extra in (("summary", H, []), ("leaks", H, []), ("locks", W, []),
                        ("summary", A, [COPY])):
    rc, want, _ = rp(cmd, inp)
    rc, out, err = rp(cmd, inp, *(extra or [inp]))
    first = COPY if extra else (os.path.join(inp, sorted(os.listdir(inp))[0])
                                if os.path.isdir(inp) else inp)
    n = 1 if extra or not os.path.isdir(inp) else len(os.listdir(inp))
    what = ("is chunk 0 of recording rec-A, read from " + A) if extra else "was given twice"
    c.check(rc == 0 and out == want, "%s %s twice: its figures once" % (cmd, inp), out[:300])
    c.check(err == dup_line(cmd, n, first, what) + "\n", "%s: one line" % cmd, err)
rc, out, _ = rp("summary", H, H)
c.check(re.search(r"(?m)^  samples     alloc +%d " % sum(
    1 for s in MH["samples"] if s["kind"] == "alloc"), out), "summary H H: the manifest's "
    "allocation samples", out)
lock = [s for s in MW["samples"] if s["kind"] == "lock"]
rc, out, _ = rp("locks", W, W)
c.check("# %d contended monitor waits, %.3f s waited in all" % (
    len(lock), sum(s["weight"] for s in lock) / 1e9) in out, "locks W W: the manifest's waits",
    out[:300])

# diff: each side reads each chunk once; the sides may share chunks only when asked.
BASE, NEW = os.path.join(T, "base.rpc"), os.path.join(T, "new.rpc")
run([WRITER, "diff-base", BASE, "--manifest", BASE + ".json"])
run([WRITER, "diff-new", NEW])
rc, want, _ = rp("diff", "--json", BASE, NEW)
rc, out, err = rp("diff", "--json", BASE[:-1] + "?", NEW)
c.check(rc == 0 and out == want and not err, "diff: a glob side", err)
copy_to(BASE, os.path.join(T, "bases", "b1.rpc"), os.path.join(T, "bases", "b2.rpc"))
rc, out, err = rp("diff", "--json", os.path.join(T, "bases"), NEW)
c.check(rc == 0 and out == want, "diff: BASE's copies read once", out[:200])
c.check(err == dup_line("diff: base", 1, os.path.join(T, "bases", "b2.rpc"),
                        "is chunk 0 of recording rec-DB, read from "
                        + os.path.join(T, "bases", "b1.rpc")) + "\n",
        "diff: one line names BASE's duplicate", err)
rc, out, err = rp("diff", "--quiet", BASE, os.path.join(T, "bases"))
c.check(rc == 2 and err.startswith(
    "ringprof diff: BASE and NEW share 1 chunk, the first %s (in BASE) and %s (in NEW): "
    % (BASE, os.path.join(T, "bases", "b1.rpc"))) and "--overlap" in err.splitlines()[0],
    "diff: sides that share a chunk are refused, naming it and --overlap", err[:400])
rc, out, err = rp("diff", "--json", "--overlap", BASE, os.path.join(T, "bases"))
j = json.loads(out) if rc == 0 else {}
c.check(rc == 0 and j["base"]["samples"] == j["new"]["samples"] == len(load_manifest(
    BASE + ".json")["samples"]) and all(r["change_self"] == 0 for r in j["rows"]),
    "diff --overlap: allowed, each side once, no change", (rc, err))

# ----------------------------------------------------- per-kind columns --


def thread_table(text):
    """{tid: {column: value}} of summary's thread table, and its columns."""
    lines = text.split("\n  threads ", 1)[1].splitlines()
    cols = lines[1].split()
    rows = {}
    for line in lines[2:]:
        m = re.match(r"^ +(\d+)  .{28}((?: +\d+)+) +[\d.]+ s +[\d.]+ s", line)
        if not m:
            break
        rows[int(m.group(1))] = dict(zip(cols[2:], map(int, m.group(2).split())))
    return cols[2:-3], rows


def want_columns(m):
    """Per thread, its samples per kind, live ones of the last snapshot only."""
    want = {}
    last = max((s["snap"] for s in m["samples"] if s["kind"] == "live"), default=None)
    for s in m["samples"]:
        if s["kind"] == "gc" or (s["kind"] == "live" and s["snap"] != last):
            continue
        row = want.setdefault(s["tid"], {})
        row[s["kind"]] = row.get(s["kind"], 0) + 1
    return want


for name, path, m, kinds in (("main", A, MA, ["cpu", "alloc"]),
                             ("heap", H, MH, ["alloc", "live"]),
                             ("waits", W, MW, ["cpu", "wall", "lock"])):
    rc, out, _ = rp("summary", path)
    cols, rows = thread_table(out)
    want = want_columns(m)
    c.check(cols == kinds, "summary %s: a column per kind, in order" % name, cols)
    got = {tid: {k: v for k, v in r.items() if v} for tid, r in rows.items()}
    c.check(got == want, "summary %s: each thread's samples per kind" % name, (got, want))
    order = [sum(([r.get(k, 0)] for k in kinds), []) for r in rows.values()]
    c.check(order == sorted(order, reverse=True), "summary %s: ranked by the columns in "
            "order" % name, order)

# ------------------------------------------ a chunk cut before its first segment --
with open(A, "rb") as f:
    data = f.read()
second = data.index(b"RSEG", data.index(b"RSEG") + 4)
CUT = os.path.join(T, "cut", "20261121T060203Z-100-000000.rpc")
os.makedirs(os.path.dirname(CUT))
with open(CUT, "wb") as f:
    f.write(data[:second - 10])
NOSAMPLE = ("ringprof convert: no input holds a sample (1 chunk file read: 0 segments "
            "whole, 1 cut off, 0 damaged); nothing written")
OUT = os.path.join(T, "cutout")
for fmt in ("tree", "backtrace", "flat", "histogram", "collapsed", "pprof", "html", "jfr",
            "otlp"):
    rc, out, err = rp("convert", "--quiet", "--format", fmt, "-o", OUT + "." + fmt, CUT)
    c.check(rc == 1 and err == NOSAMPLE + "\n" and not os.path.exists(OUT + "." + fmt),
            "cut before its first segment: %s exits 1, one line, no file" % fmt, (rc, err))
rc, out, err = rp("convert", "--format", "flat", CUT)
lines = err.splitlines()
c.check(rc == 1 and out == "" and len(lines) == 2 and lines[1] == NOSAMPLE,
        "cut: nothing on stdout; the reader's line, then one line", (rc, out[:100], err))
c.check(re.match(r"ringprof: %s: offset \d+: segment cut short by the end of the file "
                 r"\(\d+ of \d+ bytes\): no writer is writing it \(its writer was killed, "
                 r"or the file was cut short after it was written\)$" % re.escape(CUT),
                 lines[0]), "cut, a finished name: the reader says no writer holds it",
        lines[0])
PART = CUT + ".part"
os.rename(CUT, PART)
rc, out, err = rp("convert", "--format", "flat", PART)
c.check(rc == 1 and "its writer stopped before finishing it (no process holds its lock"
        in err, "cut .part nobody holds: its writer stopped", err)
rc, out, _ = rp("summary", "--chunks", PART)
c.check("unfinished: its writer stopped before closing it" in out,
        "summary: a .part nobody holds is unfinished, its writer stopped", out)
with open(PART, "rb") as held:      # as the recording holds the chunk it writes
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    rc, out, err = rp("convert", "--format", "flat", PART)
    c.check(rc == 1 and re.search(r"bytes\): a writer is still writing it\n", err),
            "cut .part held by its writer: a writer is still writing it", err)
    rc, out, _ = rp("summary", "--chunks", PART)
    c.check("being written (its writer holds it)" in out, "summary: a held .part is being "
            "written", out)

# ------------------------------------------------------------ counters --


def anchors(page):
    with open(os.path.join(DOCS, page)) as f:
        heads = re.findall(r"(?m)^#+ (.*)$", f.read())
    return {re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-") for h in heads}


for path, group, counter in ((W, "lock", "lock.below_threshold"),
                             (H, "alloc", "live.untracked")):
    rc, out, _ = rp("summary", path)
    g = re.findall(r"(?m)^    (\S+) +(\d+) counters? +.* \((docs/[a-z]+\.md)#([a-z0-9-]+)\)$",
                   out)
    c.check(len(g) == 1 and g[0][:2] == (group, "1") and g[0][3] in anchors(g[0][2][5:]),
            "summary %s: one counter group, %s, with a heading of docs/" % (path, group), g)
    c.check(counter not in out and "(--counters lists each with its total)" in out,
            "summary: the counter itself only with --counters", out)
    rc, out, _ = rp("summary", "--counters", path)
    c.check(re.search(r"(?m)^      %s +\d+$" % re.escape(counter), out),
            "summary --counters: %s listed under its group" % counter, out)
c.close()
