#!/usr/bin/env python3
"""tests/convert/test_vthreads.py RINGPROF RP_TESTWRITER [JAVA]

Samples of virtual threads (format 1.1: VTHREAD records, each sample's VTHREAD
id after a SAMPLES record's samples) through `ringprof convert`, on
rp_testwriter's `vthreads` recording (vt-a on two carriers, an unnamed one, one
named only at its second sample, the carriers' own samples, main's, an
allocation on vt-a), against its manifest:
  - collapsed --per-thread: every sample under its virtual thread and carrier,
    "[vt-a (virtual #31) on ForkJoinPool-1-worker-1]", "[virtual #32 on ...]",
    or its own thread; a name learned late names every sample of that virtual
    thread on that carrier; exact lines and weights; --event alloc the same;
  - --thread: a virtual thread's name keeps its samples on every carrier, a
    carrier's name keeps its own samples and those of the virtual threads it
    carried, "virtual #ID" a virtual thread's whatever its name;
  - pprof (decoded here): labels thread, tid (the carrier's), thread_id and
    carrier on a virtual thread's samples, none of the last two elsewhere;
  - otlp (otlp_read.decode): thread.name, thread.id (the virtual thread's),
    ringprof.thread.tid (the carrier's) and ringprof.thread.carrier;
  - jfr (JDK 17's `jfr print --json`, where JAVA is given): the virtual threads'
    samples on a thread marked virtual with their Java id and name, the
    carriers' own on theirs, not virtual.
Runs in about a second; no JVM but `jfr`.
"""
import collections
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, load_manifest, packed, pb_fields, run, tempdir  # noqa: E402
from expect import SUFFIX, display, fold_name  # noqa: E402
from otlp_read import decode, stacks_of, type_of  # noqa: E402

RINGPROF, WRITER = sys.argv[1:3]
JAVA = sys.argv[3] if len(sys.argv) > 3 else ""
T = tempdir()
c = Checks("vthreads")
V = os.path.join(T, "v.rpc")
run([WRITER, "vthreads", V, "--manifest", V + ".json"])
M = load_manifest(V + ".json")


def out(*args):
    r = subprocess.run([RINGPROF] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if r.returncode != 0:
        raise SystemExit("ringprof %s exited %d: %s" % (" ".join(args), r.returncode,
                                                         r.stderr.decode()))
    return r.stdout.decode("utf-8", "replace")


def label(s):
    if not s["vthread"]:
        return "[%s]" % s["thread"]
    if s["vname"]:
        return "[%s (virtual #%d) on %s]" % (s["vname"], s["vthread"], s["thread"])
    return "[virtual #%d on %s]" % (s["vthread"], s["thread"])


def frames(s):
    st = M["stacks"][s["stack"]]
    names = [fold_name(display(f, "method")) + SUFFIX.get(f["type"], "") for f in st["frames"]]
    if s["class"]:
        names.append(s["class"])
    return names


def collapsed(text):
    got = collections.Counter()
    for ln in text.splitlines():
        stack, _, v = ln.rpartition(" ")
        got[stack] += int(v)
    return dict(got)


def expected(kind, keep=lambda s: True, per_thread=True):
    exp = collections.Counter()
    for s in M["samples"]:
        if s["kind"] == kind and keep(s):
            exp[";".join(([label(s)] if per_thread else []) + frames(s))] += s["weight"]
    return dict(exp)


# ------------------------------------------------------------ collapsed -- #

for kind in ("cpu", "alloc"):
    got = collapsed(out("convert", "--format", "collapsed", "--per-thread", "--event", kind, V))
    c.check(got == expected(kind), "%s collapsed --per-thread: every sample under its virtual "
            "thread and carrier" % kind, (got, expected(kind)))
got = collapsed(out("convert", "--format", "collapsed", V))
c.check(got == expected("cpu", per_thread=False), "collapsed: the stacks as without labels")

# --thread: a virtual thread's name, a carrier's name.
for regex, keep in (("^vt-a$", lambda s: s["vname"] == "vt-a"),
                    ("worker-1", lambda s: s["thread"] == "ForkJoinPool-1-worker-1"),
                    ("^virtual #33$", lambda s: s["vthread"] == 33),
                    ("^main$", lambda s: s["thread"] == "main")):
    got = collapsed(out("convert", "--format", "collapsed", "--per-thread", "--thread", regex, V))
    c.check(got == expected("cpu", keep), "--thread %s" % regex, got)

# --------------------------------------------------------------- pprof -- #

def pprof_labels(path):
    """{(thread, tid, thread_id, carrier): weight} over the samples."""
    buf = gzip.open(path).read()
    strs, samples = [], []
    for f, v in pb_fields(buf):
        if f == 6:
            strs.append(v.decode())
        elif f == 2:
            vals, labels = [], []
            for g, x in pb_fields(v):
                if g == 2:
                    vals += packed(x)
                elif g == 3:
                    labels.append(dict(pb_fields(x)))
            samples.append((vals, labels))
    agg = collections.Counter()
    for vals, labels in samples:
        lab = {strs[lb[1]]: strs[lb[2]] if 2 in lb else lb.get(3) for lb in labels}
        agg[(lab.get("thread"), lab.get("tid"), lab.get("thread_id"), lab.get("carrier"))] += vals[-1]
    return dict(agg)


tids = {s["thread"]: s["tid"] for s in M["samples"]}
exp = collections.Counter()
for s in M["samples"]:
    if s["kind"] == "cpu":
        name = s["vname"] or ("virtual #%d" % s["vthread"] if s["vthread"] else s["thread"])
        exp[(name, s["tid"], s["vthread"] or None, s["thread"] if s["vthread"] else None)] += \
            s["weight"]
path = os.path.join(T, "v.pb.gz")
out("convert", "-o", path, V)
got = pprof_labels(path)
c.check(got == dict(exp), "pprof: labels thread, tid, thread_id and carrier per sample",
        (got, dict(exp)))

# ---------------------------------------------------------------- otlp -- #

path = os.path.join(T, "v.otlp")
out("convert", "--format", "otlp", "-o", path, V)
req = decode(open(path, "rb").read())
got = collections.Counter()
for r in req["resources"]:
    for p in r["profiles"]:
        if type_of(req, p) != ("cpu", "nanoseconds"):
            continue
        for _, a, v in stacks_of(req, p):
            got[(a.get("thread.name"), a.get("thread.id"), a.get("ringprof.thread.tid"),
                 a.get("ringprof.thread.carrier"))] += v
exp = collections.Counter()
java_ids = {"main": 1, "ForkJoinPool-1-worker-1": 21, "ForkJoinPool-1-worker-2": 22}
for s in M["samples"]:
    if s["kind"] == "cpu":
        name = s["vname"] or ("virtual #%d" % s["vthread"] if s["vthread"] else s["thread"])
        exp[(name, s["vthread"] or java_ids[s["thread"]], s["tid"],
             s["thread"] if s["vthread"] else None)] += s["weight"]
c.check(dict(got) == dict(exp), "otlp: thread.name, thread.id, ringprof.thread.tid and "
        "ringprof.thread.carrier per sample", (dict(got), dict(exp)))

# ----------------------------------------------------------------- jfr -- #

JFR = os.path.join(os.path.dirname(JAVA), "jfr") if JAVA else ""
if JFR and os.access(JFR, os.X_OK):
    path = os.path.join(T, "v.jfr")
    out("convert", "--format", "jfr", "-o", path, V)
    r = subprocess.run([JFR, "print", "--json", "--events", "jdk.ExecutionSample", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    c.check(r.returncode == 0 and not r.stderr, "jfr print reads it", r.stderr[:300])
    events = json.loads(r.stdout)["recording"]["events"] if r.returncode == 0 else []
    got = collections.Counter()
    for e in events:
        t = e["values"]["sampledThread"]
        got[(t.get("javaName"), t.get("javaThreadId"), bool(t.get("virtual")))] += 1
    exp = collections.Counter()
    for s in M["samples"]:
        if s["kind"] == "cpu":     # one ExecutionSample per 10 ms period of weight
            key = ((s["vname"] or "", s["vthread"], True) if s["vthread"]
                   else (s["thread"], java_ids[s["thread"]], False))
            exp[key] += s["weight"] // 10**7
    c.check(dict(got) == dict(exp), "jfr: sampledThread of each ExecutionSample, virtual "
            "threads marked virtual with their Java id", (dict(got), dict(exp)))
else:
    print("note: no jfr next to java (%r): the JFR part is not checked" % JAVA)

c.close()
