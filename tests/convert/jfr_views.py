#!/usr/bin/env python3
"""tests/convert/jfr_views.py -- the JDK's `jfr view`s of ringprof's JFR, read back.

    jfr_views.py run JDK JFRVIEWS_JAR FILE.jfr OUT VIEW...
    jfr_views.py check WORK FILE.jfr

tests/convert/JfrViews.java prints many views in one JVM (command() is how it is
run); this module reads its output (split_views) and a view's table
(table_rows) or form (form), and the figures the views print (amount, near,
hhmmss). test_jfr.py imports it for rp_testwriter's recordings;
tests/agent/jfr_tests.sh runs it: `run` writes JDK's views of FILE.jfr to OUT
(exit 1 if the JVM failed), `check` checks JDK 25's views (VIEWS) of a real JVM's
recording, FILE.jfr, against ringprof's own figures of the same recording, in
the files of WORK:

  views-25     JfrViews' output of the views below on FILE.jfr
  summary      `ringprof summary`: the GC pauses and heap
  span         `rp_agent_dump span`: the first and last instant of an event
  meta         `rp_agent_dump meta`: host.cpus
  cputime      `rp_agent_dump cputime`: every thread CPU reading
  gc_samples   `RP_DUMP_KIND=gc rp_agent_dump samples`: each pause, in order
  threads.*    `rp_agent_dump tseries` of the Java thread gauges
  native       `ringprof convert --event wall --state native,io --value samples
               --format collapsed`
  x.json       JDK 17's `jfr print --json` of FILE.jfr (the event count)
  out          the program's output: its own "threads peak N started M"

  recording            the event count, the first and last event and the time
                       between them as the recording's, no dump reason (N/A);
  gc                   a row per pause: ids summary's, type Unknown, heap before
                       N/A, the pause's length, the most heap after any;
  gc-pause-phases      one row, GC Pause: summary's count, total and longest;
  gc-configuration, heap-configuration   "No events found" (not recorded);
  thread-count         the Java thread gauges reading by reading; the peak and
                       the threads started at least the program's 11, none above
                       what the program's ThreadMXBean said at its end (and the
                       launcher's DestroyJavaVM, started after it);
  thread-cpu-load      each thread's last load from its CPU readings (1 ms or
                       more apart), system N/A;
  native-methods       the native and io wall samples with a Java frame by top
                       method, no marker and no N/A among them.
Exit 1 if a check failed.
"""
import collections
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks  # noqa: E402
from jfr_readers import MARKER  # noqa: E402

# The views a JVM's recording is checked with (JDK 25).
VIEWS = ("recording", "gc", "gc-pause-phases", "gc-configuration", "heap-configuration",
         "thread-count", "thread-cpu-load", "native-methods")
# The JVM options JfrViews needs (the jfr tool's package) and the times and
# numbers in one form whatever the machine's locale.
JVM = ["--add-exports", "jdk.jfr/jdk.jfr.internal.tool=ALL-UNNAMED", "-Duser.timezone=UTC",
       "-Duser.language=en", "-Duser.country=US"]
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9,
         "bytes": 1, "kB": 2 ** 10, "MB": 2 ** 20, "GB": 2 ** 30}
GC_ROW = re.compile(r"^(\S+)\s+(\d+)\s+(\S+)\s+(N/A|\S+ \S+)\s+(N/A|\S+ \S+)\s+(\S+ \S+)$")
PHASE_ROW = re.compile(r"^GC Phase Pause\s+GC Pause\s+(\S+ \S+)\s+(\S+ \S+)\s+(\S+ \S+)\s+"
                       r"(\d+)\s+(\S+ \S+)$")
NO_EVENTS = {"gc-configuration": "No events found for 'GC Configuration'.",
             "heap-configuration": "No events found for 'Heap Configuration'."}
MIN_LOAD_CPU = 1000000      # ns: the JDK writes no jdk.ThreadCPULoad for less
# The gauges of jdk.JavaThreadStatistics, in its fields' order (events.h).
JAVA_THREAD_GAUGES = ("threads.java", "threads.daemon", "threads.started.total",
                      "threads.peak")


def command(jdk, jar, pairs, width=200):
    """The command that runs JfrViews with JDK (its home) on [(view, file)]."""
    return [os.path.join(jdk, "bin", "java"), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"] + \
        JVM + ["-cp", jar, "JfrViews", str(width)] + [x for pair in pairs for x in pair]


def split_views(text):
    """JfrViews' output: {(view, file): (exit status, text)}."""
    out, key, lines = {}, None, []
    for line in text.split("\n"):
        mm = re.match(r"^### (view (\S+) (.*)|exit (\d+))$", line)
        if mm and mm.group(2):
            key, lines = (mm.group(2), mm.group(3)), []
        elif mm and key:
            out[key] = (int(mm.group(4)), "\n".join(lines))
            key = None
        elif key:
            lines.append(line)
    return out


def table_rows(text):
    """The rows under a `jfr view` table's dashes, stripped."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^-+( -+)+\s*$", line):
            return [row.strip() for row in lines[i + 1:] if row.strip()]
    return []


def first_row(text):
    rows = table_rows(text)
    return rows[0] if rows else ""


def form(text):
    """A `jfr view` form's "Label: value" lines."""
    return dict(mm.groups() for mm in re.finditer(r"^([^:\n]+): (.*)$", text, re.M))


def amount(text):
    """A duration or size as `jfr view` prints it ("12.0 ms", "40.0 MB") in ns or
    bytes; None for N/A."""
    if text is None or text.strip() == "N/A":
        return None
    value, unit = text.split()
    return float(value.replace(",", "")) * UNITS[unit]


def near(shown, want):
    """A figure printed to 3 significant digits is the figure."""
    return shown is not None and want is not None and abs(shown - want) <= 0.006 * want


def hhmmss(ns):
    """A time as the views print it (UTC: JfrViews' JVM runs with it)."""
    return time.strftime("%H:%M:%S", time.gmtime(ns // 10 ** 9))


def integer(text):
    return int(text.replace(",", ""))


def gc_rows(text):
    """gc's rows: (id, type, heap before, heap after, longest pause); None for a
    row of another shape."""
    out = []
    for row in table_rows(text):
        mm = GC_ROW.match(row)
        out.append(mm and (int(mm.group(2)), mm.group(3), amount(mm.group(4)),
                           amount(mm.group(5)), amount(mm.group(6))))
    return out


def phase_row(text):
    """gc-pause-phases' one row, GC Pause: (average, p95, longest, count, total),
    or None."""
    rows = table_rows(text)
    mm = PHASE_ROW.match(rows[0]) if len(rows) == 1 else None
    return mm and (amount(mm.group(1)), amount(mm.group(2)), amount(mm.group(3)),
                   int(mm.group(4)), amount(mm.group(5)))


def thread_count_rows(text):
    """thread-count's rows: [time, active, daemon, accumulated, peak]."""
    rows = [r.split() for r in table_rows(text)]
    return [[r[0]] + [integer(x) for x in r[1:]] for r in rows if len(r) == 5]


def cpu_load_rows(text):
    """thread-cpu-load's rows: (thread, system, user)."""
    return [tuple(r.rsplit(None, 2)) for r in table_rows(text)]


def native_rows(text):
    """native-methods' rows: {method: samples}."""
    return {r.rsplit(None, 1)[0]: integer(r.rsplit(None, 1)[1]) for r in table_rows(text)}


def thread_loads(readings, cpus):
    """The jdk.ThreadCPULoad events (docs/profiles.md) of thread CPU readings
    [(thread, time ns, cpu ns)] in order, as (thread, time, user): per pair of
    consecutive readings of a thread in which it used 1 ms or more, that CPU (at
    most the time between them) over the time times cpus."""
    prev = {}
    for key, t, cpu in readings:
        if key in prev and t > prev[key][0] and cpu - prev[key][1] >= MIN_LOAD_CPU:
            span = t - prev[key][0]
            yield key, t, min(cpu - prev[key][1], span) / (span * cpus)
        if key not in prev or t >= prev[key][0]:
            prev[key] = (t, cpu)


def last_loads(readings, cpus):
    """Each thread's last user value (thread_loads): thread-cpu-load's LAST."""
    return {key: user for key, _, user in thread_loads(readings, cpus)}


# ------------------------------------------------ a real JVM's recording --
def read(work, name):
    with open(os.path.join(work, name), encoding="utf-8", errors="replace") as f:
        return f.read()


def tsv(work, name):
    return [line.split("\t") for line in read(work, name).splitlines() if line]


def summary_figures(text):
    """ringprof summary's GC pauses and heap."""
    gc = re.search(r"^  gc\s+(\d+) pauses, ([\d.]+) ms in all, the longest ([\d.]+) ms "
                   r"\(ids (\d+)\.\.(\d+)", text, re.M)
    heap = re.search(r"the most after any: ([\d.]+) MiB", text)
    return {"pauses": gc and int(gc.group(1)), "pause_total": gc and float(gc.group(2)) * 1e6,
            "longest": gc and float(gc.group(3)) * 1e6,
            "ids": gc and (int(gc.group(4)), int(gc.group(5))),
            "heap_max": heap and float(heap.group(1))}


def check_jvm(c, work, jfr):
    views = split_views(read(work, "views-25"))
    out = {v: views.get((v, jfr), (1, "not run")) for v in VIEWS}
    for v, (rc, text) in out.items():
        c.check(rc == 0 and "Can't find" not in text and "Missing event" not in text,
                "JDK 25 jfr view %s runs" % v, text[-600:])
    s = summary_figures(read(work, "summary"))
    events = len(json.loads(read(work, "x.json"))["recording"]["events"])
    first, last = (int(x) for x in tsv(work, "span")[0])
    f = form(out["recording"][1])
    c.check(f.get("Event Count") and integer(f["Event Count"]) == events and
            f.get("First Recorded Event") == hhmmss(first) and
            f.get("Last Recorded Event") == hhmmss(last) and
            near(amount(f.get("Length of Recorded Events")), last - first) and
            f.get("Dump Reason") == "N/A",
            "jfr view recording: %d events (as jfr print reads them), %s .. %s as the "
            "recording's, no dump reason" % (events, hhmmss(first), hhmmss(last)), f)
    rows = gc_rows(out["gc"][1])
    pauses = [int(x[2]) for x in tsv(work, "gc_samples")]
    ids = [r[0] for r in rows if r]
    after = [r[3] / 2 ** 20 for r in rows if r and r[3] is not None]
    c.check(len(rows) == len(pauses) == s["pauses"] and all(rows) and s["ids"] and
            ids == sorted(set(ids)) and ids[0] == s["ids"][0] and ids[-1] == s["ids"][1] and
            all(r[1:3] == ("Unknown", None) for r in rows) and
            all(near(r[4], p) for r, p in zip(rows, pauses)) and
            (s["heap_max"] is None or (after and abs(max(after) - s["heap_max"]) <= 0.051)),
            "jfr view gc: a row a pause (ids %s), type Unknown, heap before N/A, the most "
            "after any and each pause as ringprof's" % (s["ids"],), out["gc"][1][-1500:])
    ph = phase_row(out["gc-pause-phases"][1])
    c.check(ph and ph[3] == s["pauses"] and near(ph[4], s["pause_total"]) and
            near(ph[2], s["longest"]),
            "jfr view gc-pause-phases: GC Pause, ringprof summary's %s pauses, total and "
            "longest" % s["pauses"], out["gc-pause-phases"][1][-600:])
    for v, line in NO_EVENTS.items():
        c.check(out[v][1].strip() == line, "jfr view %s: %s" % (v, line), out[v][1][-300:])
    gauges = [[int(x[1]) for x in tsv(work, g)] for g in JAVA_THREAD_GAUGES]
    rows = thread_count_rows(out["thread-count"][1])
    # After main returns, the launcher attaches its thread again to destroy the
    # JVM (DestroyJavaVM): one thread started after the program's own figures.
    mm = re.search(r"^threads peak (\d+) started (\d+)$", read(work, "out"), re.M)
    c.check(mm and rows and [r[1:] for r in rows] == [list(x) for x in zip(*gauges)] and
            11 <= max(r[4] for r in rows) <= int(mm.group(1)) and
            11 <= max(r[3] for r in rows) <= int(mm.group(2)) + 1 and
            all(r[2] <= r[1] for r in rows),
            "jfr view thread-count: the Java thread gauges, reading by reading; the peak and "
            "the threads started at least the program's 11, and at most what its own "
            "ThreadMXBean said at its end (started: and DestroyJavaVM)",
            "view %s\n    gauges %s\n    program %s" % (rows[:4], list(zip(*gauges))[:4],
                                                       mm and mm.group(0)))
    cpus = int(dict(tsv(work, "meta"))["host.cpus"])
    readings = [(int(r[1]), int(r[2]), int(r[3])) for r in tsv(work, "cputime")]
    names = collections.defaultdict(set)
    for r in tsv(work, "cputime"):
        names[int(r[1])].add(r[0])
    want = last_loads(readings, cpus)
    got = cpu_load_rows(out["thread-cpu-load"][1])
    bad, left = [], dict(want)
    for name, system, user in got:
        shown = set(re.match(r"^(.*?)(?: \(renamed (.*)\))?$", name).groups()) - {None}
        key = next((k for k in left if names[k] & shown and
                    abs(float(user.rstrip("%")) - 100 * left[k]) <= 0.006), None)
        if system != "N/A" or key is None:
            bad.append((name, system, user))
        else:
            del left[key]
    c.check(got and not bad and not left,
            "jfr view thread-cpu-load: each thread's last CPU load from its readings "
            "(%d threads), system N/A" % len(want),
            "rows not expected %s; threads missing %s" % (bad[:4], [
                (sorted(names[k]), "%.2f%%" % (100 * v)) for k, v in left.items()][:4]))
    native = collections.Counter()
    for line in read(work, "native").splitlines():
        stack, n = line.rsplit(" ", 1)
        frames = [x for x in stack.split(";") if not MARKER.match(x)]
        if frames:
            native[re.sub(r"_\[.\]$", "", frames[-1])] += int(n)
    got = collections.Counter()
    for method, n in native_rows(out["native-methods"][1]).items():
        got[method.split("(", 1)[0]] += n
    c.check(got == native and native,
            "jfr view native-methods: ringprof's native and io wall samples by top method, "
            "none without a Java frame, no marker",
            "got %s\n    want %s" % (sorted(got.items())[:6], sorted(native.items())[:6]))


def main():
    if sys.argv[1:2] == ["run"] and len(sys.argv) > 6:
        jdk, jar, jfr, out = sys.argv[2:6]
        with open(out, "w") as f:
            r = subprocess.run(command(jdk, jar, [(v, jfr) for v in sys.argv[6:]]), stdout=f,
                               stderr=subprocess.STDOUT, timeout=300)
        sys.exit(1 if r.returncode else 0)
    if sys.argv[1:2] != ["check"] or len(sys.argv) != 4:
        sys.exit("usage: jfr_views.py run JDK JFRVIEWS_JAR FILE.jfr OUT VIEW... | "
                 "check WORK FILE.jfr")
    c = Checks("jfr_views")
    check_jvm(c, sys.argv[2], sys.argv[3])
    c.close()


if __name__ == "__main__":
    main()
