#!/usr/bin/env python3
"""tests/convert/test_stuck.py -- lock waits still in progress (kind lock.waiting).

    test_stuck.py RINGPROF RP_TESTWRITER [JAVA]

rp_testwriter's stuck recording (two chunks: a wait that never ends, written in
progress four times; one written in progress twice that then ends, reported;
one that ends before any flush) read by `ringprof locks` (--json and text),
`convert --event lock` and `--event lock.waiting` (collapsed), `summary` and,
where a JDK is there, `convert --format jfr` read back by the JDK's `jfr print`.
The rule (include/ringprof/events.h): a wait counts once, by its finished record
if the inputs hold one, else by its latest in-progress one, marked unfinished;
whatever the order of the inputs; a wait is filtered by its start as a finished
one is. The truth is write_stuck's table, below. Under a second, and one JVM.
"""
import collections
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, run, tempdir  # noqa: E402

RINGPROF, WRITER = sys.argv[1:3]
JAVA = sys.argv[3] if len(sys.argv) > 3 else ""
T = tempdir()
c = Checks("stuck")
S = os.path.join(T, "stuck")
run([WRITER, "stuck", S])
C0, C1 = os.path.join(S, "0.rpc"), os.path.join(S, "1.rpc")
MS = 1000000
POST = "java.lang.Thread.run;app.Worker.run;app.Ledger.post"
CACHE = "java.lang.Thread.run;app.Worker.run;app.Cache.get"

# write_stuck's waits: (thread, tid, monitor, owner, start ms, stack), and what
# each chunk holds of them: its weight in ms, "w" in progress or "f" finished.
WAITS = {"A": ("worker-1", 501, "app.Ledger", "worker-2", 1000, POST),
         "B": ("worker-2", 502, "app.Cache", None, 1500, CACHE),
         "C": ("locker", 505, "app.Ledger", "worker-1", 1200, POST)}
CHUNKS = {C0: [("A", 1000, "w"), ("B", 500, "w"), ("C", 300, "f"), ("A", 2000, "w"),
               ("B", 1500, "w")],
          C1: [("A", 3000, "w"), ("B", 2200, "f"), ("A", 3500, "w")]}


def truth(inputs, from_ms=0):
    """Per wait: (weight ns, unfinished), by the rule, for these inputs (chunk
    files, or the directory: both)."""
    files = {f for i in inputs for f in ((C0, C1) if i == S else (i,))}
    recs = [r for f in files for r in CHUNKS[f]]
    out = {}
    for k in WAITS:
        if WAITS[k][4] < from_ms:
            continue
        fin = [w for key, w, how in recs if key == k and how == "f"]
        inp = [w for key, w, how in recs if key == k and how == "w"]
        if fin:
            out[k] = (fin[0] * MS, False)
        elif inp:
            out[k] = (max(inp) * MS, True)
    return out


def rp(*args):
    r = subprocess.run([RINGPROF] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def check_locks(inputs, what, *opts, from_ms=0):
    rc, out, err = rp("locks", "--json", *opts, *inputs)
    if not c.check(rc == 0, "%s: locks exits 0" % what, err):
        return
    j = json.loads(out)
    t = truth(inputs, from_ms)
    mons = collections.defaultdict(lambda: [0, 0, 0])
    for k, (ns, unf) in t.items():
        m = mons[WAITS[k][2]]
        m[0] += 1
        m[1] += unf
        m[2] += ns
    got = {m["class"]: [m["waits"], m.get("unfinished"), m["wait_ns"]] for m in j["monitors"]}
    c.check(got == dict(mons), "%s: monitors (waits, unfinished, wait)" % what, (got, dict(mons)))
    c.check(j["lock_samples"] == len(t) and j["lock_wait_ns"] == sum(v[0] for v in t.values()),
            "%s: totals" % what, (j["lock_samples"], j["lock_wait_ns"]))
    want = sorted(((WAITS[k][0], WAITS[k][1], ns, WAITS[k][2], WAITS[k][3])
                   for k, (ns, unf) in t.items() if unf), key=lambda x: (-x[2], x[0]))
    got = [(u["thread"], u["tid"], u["waited_ns"], u["class"], u["owner"])
           for u in j.get("unfinished", [])]
    c.check(got == want and j.get("unfinished_ns") == sum(w[2] for w in want),
            "%s: the unfinished waits, longest first" % what, (got, want))


check_locks([S], "the recording")
check_locks([C1, C0], "its chunks in reverse order")
check_locks([C0], "the first chunk alone (B not ended yet)")
check_locks([C1], "the second chunk alone")
check_locks([S], "--from +150ms (A began before it)", "--from", "+150ms", from_ms=1150)
# The same chunk twice: its waits in progress still once each.
j = json.loads(rp("locks", "--json", C0, C0)[1])
c.check(sorted(u["thread"] for u in j.get("unfinished", [])) == ["worker-1", "worker-2"],
        "a chunk given twice: each unfinished wait once", j.get("unfinished"))

# The text: the count, the monitors' unfinished column, the UNFINISHED section.
rc, text, err = rp("locks", S)
c.check("# 3 contended monitor waits, 6.000 s waited in all; 1 of them unfinished" in text,
        "locks text: the header line", text[:400])
rows = text.split("MONITORS BEGIN")[1].split("MONITORS END")[0].splitlines()[2:]
c.check([(r.split()[-1], r.split()[1], r.split()[2]) for r in rows] ==
        [("app.Ledger", "2", "1"), ("app.Cache", "1", "0")], "locks text: waits, unfinished", rows)
unf = (text.split("UNFINISHED BEGIN") + [""])[1].split("UNFINISHED END")[0].splitlines()
c.check(len(unf) == 3 and unf[2].split() == ["1", "3.500", "s", "worker-1", "(tid", "501)", "on",
                                              "app.Ledger,", "owner", "worker-2", "(tid", "502)"],
        "locks text: the unfinished wait's row", unf)
ledger = text.split("MONITOR 1:")[1].split("MONITOR 2:")[0]
c.check("        [unfinished]\n        app.Ledger.post\n" in ledger,
        "locks text: the unfinished stack's first line is [unfinished]", ledger)


def folded(*args):
    rc, out, err = rp("convert", "--format", "collapsed", *args)
    c.check(rc == 0, "convert %s" % " ".join(args), err)
    got = collections.Counter()
    for line in out.splitlines():
        stack, n = line.rsplit(" ", 1)
        got[stack.replace("_[j]", "")] += int(n)
    return dict(got)


want = {POST + ";[unfinished];app.Ledger": 3500 * MS, POST + ";app.Ledger": 300 * MS,
        CACHE + ";app.Cache": 2200 * MS}
c.check(folded("--event", "lock", S) == want, "collapsed --event lock: each wait once, "
        "the one in progress marked", folded("--event", "lock", S))
c.check(folded("--event", "lock.waiting", S) == {POST + ";[unfinished];app.Ledger": 3500 * MS},
        "collapsed --event lock.waiting: only the wait that never ended, its latest record")

rc, summ, err = rp("summary", S)
c.check("samples     lock.waiting            6   readings of waits in progress" in summ,
        "summary: the in-progress records are readings, not added up", summ[:600])

# JFR: one jdk.JavaMonitorEnter per wait, its duration the weight by the rule.
jfr = os.path.join(os.path.dirname(os.path.realpath(JAVA)), "jfr") if JAVA else ""
if jfr and os.access(jfr, os.X_OK):
    out = os.path.join(T, "s.jfr")
    rc, o, err = rp("convert", "--format", "jfr", "-o", out, S)
    c.check(rc == 0, "convert --format jfr", err)
    ev = json.loads(run([jfr, "print", "--json", "--events",
                         "jdk.JavaMonitorEnter,ringprof.Sample", out]))
    got, marked = [], []
    for e in ev["recording"]["events"]:
        v = e["values"]
        frames = v["stackTrace"]["frames"]
        if e["type"] == "ringprof.Sample":
            marked.append((v["sampledThread"]["osName"], v["kind"], v["markers"], v["weight"],
                           frames[0]["method"]["name"]))
            continue
        got.append((v["eventThread"]["osName"], v["monitorClass"]["name"],
                    frames[0]["method"]["name"], v["duration"]))
    iso = {3500: "PT3.5S", 300: "PT0.3S", 2200: "PT2.2S"}
    # The JDK's event holds the JDK's fields and frames alone (no marker poses as
    # a method); the unfinished wait is marked by a ringprof.Sample beside it.
    want = sorted([("worker-1", "app/Ledger", "post", iso[3500]),
                   ("locker", "app/Ledger", "post", iso[300]),
                   ("worker-2", "app/Cache", "get", iso[2200])])
    c.check(sorted(got) == want, "jfr: one JavaMonitorEnter per wait, no marker among "
            "its frames", sorted(got))
    c.check(marked == [("worker-1", "lock.waiting", "[unfinished]", 3500 * MS, "post")],
            "jfr: the unfinished wait's ringprof.Sample, kind lock.waiting, markers "
            "[unfinished], its wait so far", marked)
else:
    print("note: no JDK's jfr beside java: the jfr output was not read back")
c.close()
