#!/usr/bin/env python3
"""tests/accounting.py — does a recording account for every sample the agent took?

    accounting.py [--docs DIR] [--min KIND=N]... [--require KIND,...] STATUS SUMMARY

STATUS is the agent's `ringprof ctl --raw PID status` reply (JSON), taken after
`ctl stop` (every kind), a pause for the last records to reach the flusher, and
`ctl flush`; SUMMARY is `ringprof summary` of the recording directory, made after
the JVM exited. With sampling stopped before the last flush, nothing of the
sampled kinds can be written after the status, so the recording must hold exactly
what the agent says it wrote (docs/control.md, `samples` and `lost`):

  - per sampled kind (cpu, alloc, lock, wall), the samples in the files equal
    status's count;
  - the files' lost.<reason> counters equal status's `lost`, reason by reason;
  - every alloc sample the callbacks pushed was written (`alloc.sampled`; a
    refused push is in lost.ring_full, a thread without a ring in
    lost.alloc_no_thread, both compared above), and likewise every lock sample
    the monitor callbacks pushed (`lock.recorded`);
  - every wall-clock visit (`wall.visits`) was written or counted lost
    (lost.wall_<reason>);
  - with engine=async, every CPU sample the signal handler took
    (`agent.handler_samples`) was written or counted lost: a sample that vanished
    between the handler and the file, uncounted on both sides, shows here;
  - every loss reason is one the docs (DIR, default the checkout's docs/) list as
    a `lost.<reason>` counter, and none is `bad_record`, which the docs call a bug.

GC pauses and live snapshots are not sampled: they go on being recorded after the
stop (a last snapshot at exit), so for them the files must hold at least what
status counted. --min KIND=N fails a run with fewer than N samples of KIND (a run
that sampled nothing tests nothing); --require KIND,... fails if a kind is absent
from the files. Prints what it compared (lines starting with "# ") and one line
"FAIL: ..." per difference; exits 1 if there was any.

Used by tests/agent/alloc_tests.sh (soak) and tests/soak/run.
"""
import argparse
import glob
import json
import os
import re
import sys

SAMPLED = ("cpu", "alloc", "lock", "wall")
NEVER = {"bad_record"}   # docs/engines.md: "a bug; never expected"


def documented_reasons(docs):
    names = set()
    for path in glob.glob(os.path.join(docs, "*.md")):
        with open(path, encoding="utf-8") as f:
            names.update(re.findall(r"`lost\.([a-z_]+)`", f.read()))
    return names


def parse_summary(text):
    """The files' samples per kind and lost counters per reason, from ringprof summary."""
    files = {m.group(1): int(m.group(2))
             for m in re.finditer(r"(?m)^  samples\s+(\S+)\s+(\d+)\s", text)}
    lost = {}
    parts = re.split(r"(?m)^  lost\s+\d+ records?\n", text, maxsplit=1)
    if len(parts) == 2:
        for line in parts[1].splitlines():
            m = re.match(r"^    (\S+)\s+(\d+)$", line)
            if not m:
                break
            lost[m.group(1)] = int(m.group(2))
    return files, lost


def check(status, summary, docs, minimum, required):
    """The differences between STATUS (dict) and SUMMARY (text), as a list of lines."""
    files, lost_files = parse_summary(summary)
    lost_st = {k: v for k, v in status.get("lost", {}).items() if v}
    samples = status.get("samples", {})
    print("# status: samples %s, lost %s" % (samples, lost_st))
    print("# files:  samples %s, lost %s" % (files, lost_files))
    bad = []
    if status.get("sampling"):
        bad.append("status was taken while %s was still being sampled" % status["sampling"])
    for kind, n in samples.items():
        got = files.get(kind, 0)
        if kind in SAMPLED and got != n:
            bad.append("status says %d %s samples were written, the files hold %d" % (n, kind, got))
        elif kind not in SAMPLED and got < n:
            bad.append("status says %d %s records were written, the files hold only %d" % (n, kind, got))
    if lost_files != lost_st:
        bad.append("lost counters differ: files %s, status %s" % (lost_files, lost_st))
    alloc = status.get("alloc")
    if alloc and alloc.get("available") and alloc.get("sampled") != samples.get("alloc"):
        bad.append("the callbacks pushed %s alloc samples, %s were written"
                   % (alloc.get("sampled"), samples.get("alloc")))
    lock = status.get("lock")
    if lock and lock.get("available") and lock.get("recorded", 0) != samples.get("lock", 0):
        bad.append("the monitor callbacks pushed %s lock samples, %s were written"
                   % (lock.get("recorded"), samples.get("lock", 0)))
    wall = status.get("wall")
    if wall:
        wall_lost = sum(v for k, v in lost_st.items() if k.startswith("wall_"))
        print("# wall: %d visits, %d written, %d lost" % (wall.get("visits", 0),
                                                        samples.get("wall", 0), wall_lost))
        if wall.get("visits", 0) != samples.get("wall", 0) + wall_lost:
            bad.append("the wall sampler took %d samples, but %d are written and %d counted lost"
                       % (wall.get("visits", 0), samples.get("wall", 0), wall_lost))
    # The async engine's handler times every sample it pushes (agent.handler_samples),
    # so there every CPU sample taken is accounted for: written, or lost in a ring
    # (ring_full, nested and too_big count CPU and alloc pushes alike; the alloc
    # ones are alloc.ring_dropped) or by the flusher. Losses before a push
    # (no_slot) and those of other kinds are not in either side.
    agent = status.get("agent", {})
    if status.get("effective", {}).get("engine") == "async" and "handler_samples" in agent:
        # (the wall sampler has a ring of its own, counted above)
        not_pushed = {"no_slot", "alloc_no_thread", "gc_pause", "live_snapshot", "lock_no_thread"}
        refused = (alloc or {}).get("ring_dropped", 0) + (lock or {}).get("ring_dropped", 0)
        taken = agent["handler_samples"] + refused
        kept = samples.get("cpu", 0) + sum(v for k, v in lost_st.items()
                                           if k not in not_pushed and not k.startswith("wall_"))
        print("# async: %d CPU samples taken (+ %d alloc/lock pushes refused), %d written or "
              "counted lost" % (agent["handler_samples"], refused, kept))
        if taken != kept:
            bad.append("the handler took %d CPU samples (+ %d refused alloc/lock pushes), but only "
                       "%d are written or counted lost" % (agent["handler_samples"], refused, kept))
    known = documented_reasons(docs)
    for reason in sorted(set(lost_files) | set(lost_st)):
        if reason not in known:
            bad.append("loss reason '%s' is not documented (a lost.<reason> in %s)" % (reason, docs))
        elif reason in NEVER:
            bad.append("%d records lost as '%s', which is a bug"
                       % (max(lost_files.get(reason, 0), lost_st.get(reason, 0)), reason))
    for kind, n in minimum.items():
        if samples.get(kind, 0) < n:
            bad.append("only %d %s samples (at least %d expected): the run tests nothing"
                       % (samples.get(kind, 0), kind, n))
    for kind in required:
        if kind not in files:
            bad.append("no %s records in the files" % kind)
    return bad


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("status")
    p.add_argument("summary")
    p.add_argument("--docs", default=os.path.join(os.path.dirname(here), "docs"))
    p.add_argument("--min", action="append", default=[], metavar="KIND=N")
    p.add_argument("--require", default="", metavar="KIND,...")
    a = p.parse_args()
    with open(a.status) as f:
        status = json.load(f)
    with open(a.summary) as f:
        summary = f.read()
    minimum = {k: int(v) for k, v in (m.split("=", 1) for m in a.min)}
    bad = check(status, summary, a.docs, minimum, [k for k in a.require.split(",") if k])
    for line in bad:
        print("FAIL: " + line)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
