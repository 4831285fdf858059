#!/usr/bin/env python3
"""tests/convert/test_jfr.py -- `ringprof convert --format jfr`, read back by real consumers.

    test_jfr.py RINGPROF RP_TESTWRITER RP_BIGWRITER SRCDIR JAVA JFRDUMP_JAR APCONVERT_JAR
                JFRVIEWS_JAR [JDK25_DIR [CACHE]]

rp_testwriter's recordings that have manifests (main, heap, waits, timeline, cpp,
rename, views) are converted to .jfr, then read by:
  - the JDK's `jfr summary` and `jfr print --json` (JDK 17, beside JAVA): no error
    output, and summary's per-type counts equal to what the manifest implies under
    the mapping of docs/profiles.md ("jfr") (a ringprof.CPUSample per cpu sample and
    jdk.ExecutionSample events by the CPU rule, three events per GC pause, a
    ResidentSetSize per RSS reading, ...); `jfr metadata` of JDK 17 and 25: every JDK
    type declared with the JDK's fields, types, order and annotations;
  - JfrDump.java (jdk.jfr.consumer.RecordingFile): every event compared exactly
    with the manifest: time, thread, stack (frames leaf first: class, method,
    descriptor, line, bci, frame type), weights, classes, sizes, lock durations and
    monitor classes and owners, wall states, GC ids, pauses and heap, live ages,
    gauges and counters; the ringprof.Recording and jdk.JVMInformation events;
  - JmcDump.java (JDK Mission Control's parser, tests/fetch-maven's jars in
    CACHE/jmc): the same events, counts, threads and stacks (this part alone is
    skipped, saying so, where the jars are missing);
  - on every file written here (one kind a file among them), Grafana Pyroscope's
    parser (tests/convert/jfrparser, CACHE/jfr-parser) and async-profiler's
    converter (ApConvert.java, CACHE/ap-loader): jfr_readers.py's checks against
    ringprof's collapsed stacks of the same input (each skipped with one line
    where it is missing);
  - JDK 25's `jfr view` (JfrViews.java, every view in one JVM), where JDK 25 is
    installed: hot-methods and allocation-by-site list the manifest's top method
    and allocation site first; on the views recording, recording, gc,
    gc-pause-phases, gc-configuration, heap-configuration, thread-count,
    thread-cpu-load and native-methods print the manifest's figures (counts,
    times, GC ids, pauses and heap, Java thread counts, each thread's last CPU
    load, native samples by method with no marker among them) and N/A or "No
    events found" for what ringprof does not record;
rp_bigwriter's hostile names and 3000-frame stack are read back by both parsers, and
its weights recording (0.1 to 25 intervals a sample) is written by the CPU rule
sample by sample; `ringprof summary`'s sample counts per kind and CPU match the
events; and convert's own
side: `-o x.jfr` infers the format, --thread, --from/--to and
--event give the subsets the manifest predicts, usage errors exit 2 with a message.
The truth is computed from the manifests, never from the converter; the JVMs start
once per tool (the dumpers read every file in one run). Exit 77 only without a JDK.
"""
import collections
import concurrent.futures
import glob
import json
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Checks, load_manifest, run, tempdir  # noqa: E402
import jfr_readers  # noqa: E402
import jfr_views  # noqa: E402
from jfr_views import amount, form, hhmmss, near  # noqa: E402

RINGPROF, WRITER, BIGWRITER, SRC, JAVA, JFRDUMP_JAR, APCONVERT_JAR, JFRVIEWS_JAR = sys.argv[1:9]
JDK25 = sys.argv[9] if len(sys.argv) > 9 else "/usr/lib/jvm/temurin-25-jdk-amd64"
CACHE = sys.argv[10] if len(sys.argv) > 10 else "/var/cache/ringprof"
JMC = os.path.join(CACHE, "jmc")
JFR = os.path.join(os.path.dirname(os.path.realpath(JAVA)), "jfr") if JAVA else ""
if not JAVA or not os.access(JAVA, os.X_OK) or not os.access(JFR, os.X_OK):
    print("SKIP: no JDK (java and jfr) found: tools/install-deps installs one")
    sys.exit(77)

c = Checks("jfr")
T = tempdir()
MS = 1000000

# ------------------------------------------------------------ the mapping --
# Frame types of the chunk format (include/ringprof/format.h) as JFR names them.
FRAME_TYPES = ["Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel", "Native"]
JAVA_FRAMES = (0, 1, 2)
# ringprof's thread states (include/ringprof/events.h) as jdk.types.ThreadState.
JFR_STATE = {"running": "STATE_RUNNABLE", "runnable": "STATE_RUNNABLE",
             "native": "STATE_RUNNABLE", "io": "STATE_RUNNABLE",
             "blocked": "STATE_BLOCKED_ON_MONITOR_ENTER", "waiting": "STATE_IN_OBJECT_WAIT",
             "parked": "STATE_PARKED", "sleeping": "STATE_SLEEPING",
             "unknown": "STATE_UNKNOWN"}
TS_NAMES = ["unknown", "running", "runnable", "native", "io", "blocked", "waiting",
            "parked", "sleeping"]
# docs/profiles.md: a frame without a descriptor (native, C++, kernel, markers) gets
# "()V", which readers can parse; rp_testwriter records "()V" for its Java methods.
DESCRIPTOR = "()V"
PRIMITIVE = {"boolean": "Z", "byte": "B", "char": "C", "short": "S", "int": "I",
             "long": "J", "float": "F", "double": "D"}

# What rp_testwriter writes beyond its manifests (its tables, for the variants
# here): recording, pid, host, agent options, chunk files, cpu period, the Java
# thread ids by OS tid (0: not a Java thread), the counters.
RECORDINGS = {
    "main": ("rec-A", 100, "hostA", "interval=10ms,alloc=512k", 1,
             {101: 1, 102: 12, 103: 13, 104: 0}, {"lost.ring_full": 3, "lost.nested": 1}),
    "heap": ("rec-L", 300, "hostL", "interval=10ms,alloc=512k,live=on", 2,
             {101: 1, 102: 12, 103: 13, 104: 0}, {"lost.ring_full": 1, "live.untracked": 2}),
    "waits": ("rec-W", 500, "hostW", "interval=10ms,wall=50ms,lock=10ms", 1,
              {501 + i: 40 + i for i in range(6)}, {"lock.below_threshold": 7}),
    "timeline": ("rec-T", 500, "hostT", "wall=250ms,lock=10ms,telemetry=1s", 1,
                 {501 + i: 10 + i for i in range(5)}, {}),
    "cpp": ("rec-X", 900, "hostX", "interval=10ms,lock=10ms,live=on", 1,
            {901: 0, 902: 1}, {}),
    "rename": ("rec-R", 600, "hostR", "interval=10ms,wall=10ms", 1,
               {601: 1, 602: 2, 603: 3}, {}),
    "views": ("rec-V", 700, "hostV", "interval=10ms,wall=100ms,telemetry=1s", 1,
              {701: 1, 702: 20, 703: 0, 704: 21}, {}),
}
CPU_PERIOD = 10 * MS
VARIANTS = list(RECORDINGS)
HOST_CPUS = {"timeline": 2, "views": 2}       # host.cpus in the header (rp_testwriter)


def jvm_class(name):
    """A class as RecordedClass.getName() gives it: JVM internal form with dots
    (byte[] -> [B, java.lang.String[] -> [Ljava.lang.String;)."""
    dims = 0
    while name.endswith("[]"):
        name, dims = name[:-2], dims + 1
    if not dims:
        return name
    return "[" * dims + (PRIMITIVE.get(name) or "L%s;" % name)


def frame(cls, method, ftype, line, bci):
    return (cls, method, DESCRIPTOR, line if line else -1, bci, FRAME_TYPES[ftype])


# docs/profiles.md ("jfr", Stacks): markers are not frames of the file; these
# leave the stack whole, every other one (a failed walk's) marks it truncated.
WHOLE_MARKERS = re.compile(r"^\[(no stack|no_java_frames|not_java|ringprof(:[^\]]*)?)\]$")
MARKER = 6


def stack_of(st):
    """A manifest stack (rp_testwriter's frames root first) as the file has it:
    (truncated, frames leaf first, markers), markers being the marker frames'
    names leaf first, ';' between them (the ringprof events' `markers`; None:
    none). The converter's "[no stack]" marker stands for an empty stack."""
    if isinstance(st, list):      # waits and rename: display names, all JIT, no line
        frames = [frame(*(n.rsplit(".", 1)), 1, 0, -1) for n in reversed(st)]
        return (False, tuple(frames), None)
    truncated, frames, marks = bool(st["truncated"]), [], []
    for f in reversed(st["frames"]):
        if f["type"] == MARKER:
            marks.append(f["name"])
            truncated = truncated or not WHOLE_MARKERS.match(f["name"])
        else:
            frames.append(frame(f["class"], f["name"], f["type"], f["line"], f["bci"]))
    if not st["frames"]:
        marks = ["[no stack]"]
    return (truncated, tuple(frames), ";".join(marks) or None)


def jstack(st):
    """A stack_of() stack as the stackTrace field: (truncated, frames)."""
    return st[:2]


def canon_value(v):
    return json.dumps(v, sort_keys=True)


def event(etype, start, duration, thread, stack, **fields):
    """An event as from_dump() gives one. stack: a stack_of() stack or None; its
    markers are a field of ringprof's events."""
    if stack is not None:
        if etype.startswith("ringprof."):
            fields["markers"] = stack[2]
        stack = jstack(stack)
    return (etype, start, duration, thread, stack,
            tuple(sorted((k, canon_value(v)) for k, v in fields.items())))


THREAD_KEYS = ("sampledThread", "eventThread")


def from_dump(e):
    """An event of JfrDump's output in the form event() builds."""
    f = dict(e["fields"])
    f.pop("startTime", None)
    f.pop("duration", None)
    thread = None
    for k in THREAD_KEYS:          # a null thread stays a field (GCPhasePause's)
        if f.get(k) is not None:
            thread = jthread_key(f.pop(k))
    if e["type"] == "jdk.GarbageCollection":    # the collector's name and the cause:
        f.pop("name", None)                     # not in the recording (profiles.md)
        f.pop("cause", None)
    stack = f.pop("stackTrace", None)
    if stack is not None:
        stack = (stack["truncated"], tuple(
            (x["class"], x["method"], x["descriptor"], x["line"], x["bci"], x["type"])
            for x in stack["frames"]))
    return (e["type"], e["start"], e["duration"], thread, stack,
            tuple(sorted((k, canon_value(v)) for k, v in f.items())))


def jthread_key(t):
    return (t["osThreadId"], t["osName"], t["javaName"], t["javaThreadId"])


class Threads:
    """A recording's threads as the JFR file names them: one per OS tid, named as
    every ringprof output names it (the name at its first sample, "(renamed X)"
    after it when it was last given another), javaName null and javaThreadId 0
    for a thread that is not a Java thread (as the JVM writes them)."""

    def __init__(self, samples, java_tids, names=None):
        first, newest = {}, {}
        for s in samples:
            if s.get("tid") and s.get("thread") is not None:
                first.setdefault(s["tid"], s["thread"])
                newest[s["tid"]] = s["thread"]
        for n in names or []:
            newest[n["tid"]] = n["name"]
        self.by_tid = {}
        self.by_name = {}
        for tid, name in first.items():
            shown = name if newest[tid] == name else "%s (renamed %s)" % (name, newest[tid])
            jt = java_tids[tid]
            self.by_tid[tid] = (tid, shown, shown if jt else None, jt)
            self.by_name[name] = self.by_tid[tid]

    def json(self, key):
        """The thread as JfrDump prints it (an owner field's value)."""
        if key is None:
            return None
        return {"osThreadId": key[0], "osName": key[1], "javaName": key[2],
                "javaThreadId": key[3]}


# ------------------------------------------------ the expected events --
SAMPLE_TYPES = ("jdk.ExecutionSample", "ringprof.CPUSample", "jdk.ObjectAllocationSample",
                "ringprof.AllocationSample", "jdk.OldObjectSample", "ringprof.LiveObject",
                "jdk.JavaMonitorEnter", "jdk.NativeMethodSample", "ringprof.WallClockSample",
                "jdk.GarbageCollection", "jdk.GCPhasePause", "jdk.GCHeapSummary")


class CpuRule:
    """docs/profiles.md, "Weighted CPU samples": after each cpu sample the
    jdk.ExecutionSample events so far are the weight so far over the interval,
    rounded half up; a sample gets the difference (0 or more)."""

    def __init__(self, period=CPU_PERIOD):
        self.period, self.total = period, 0

    def events(self, w):
        before = (self.total + self.period // 2) // self.period
        self.total += w
        return (self.total + self.period // 2) // self.period - before


def cpu_events(s, m, th, st, threads, rule):
    """n jdk.ExecutionSample events and one ringprof.CPUSample {weight, n}."""
    t, w = s["t"], s["weight"]
    n = rule.events(w)
    return [event("jdk.ExecutionSample", t, 0, th, st, state="STATE_RUNNABLE")] * n + \
        [event("ringprof.CPUSample", t, 0, th, st, weight=w, executionSamples=n)]


def alloc_events(s, m, th, st, threads, rule):
    length = s.get("length", 0)      # array length + 1; main's kind has none
    cls = jvm_class(s["class"])
    return [event("jdk.ObjectAllocationSample", s["t"], 0, th, st, objectClass=cls,
                  weight=s["weight"]),
            event("ringprof.AllocationSample", s["t"], 0, th, st, objectClass=cls,
                  weight=s["weight"], objects=s["objects"], size=s["size"],
                  arrayLength=length - 1 if length else -1)]


def live_events(s, m, th, st, threads, rule):
    t, length = s["t"], s["length"]
    cls = jvm_class(s["class"])
    return [event("jdk.OldObjectSample", t, 0, th, st,
                  allocationTime=t - s["age_ms"] * MS, objectSize=s["size"],
                  objectAge=s["age_ms"] * MS, lastKnownHeapUsage=heap_before(m, t),
                  object={"address": 0, "type": cls, "description": None},
                  arrayElements=length - 1 if length else -2 ** 31, root=None),
            event("ringprof.LiveObject", t, 0, th, st, objectClass=cls,
                  weight=s["weight"], objects=s["objects"], ageGcs=s["age_gcs"])]


def lock_events(s, m, th, st, threads, rule):
    owner = threads.by_name.get(s.get("owner"))
    return [event("jdk.JavaMonitorEnter", s["t"], s["weight"], th, st,
                  monitorClass=s["monitor"], previousOwner=threads.json(owner), address=0)]


def wall_events(s, m, th, st, threads, rule):
    t, w = s["t"], s["weight"]
    state = s["state"] if isinstance(s["state"], str) else TS_NAMES[s["state"]]
    if "cpu_ns" in s:
        cpu, repeat = s["cpu_ns"], bool(s["repeat"])
        blocker, owner = s["blocker"], threads.by_name.get(s["blocker_owner"])
    else:          # timeline: CPU the whole sample when running; a repeat after the
        cpu = w if state == "running" else 0           # thread's first unless running
        repeat = state != "running" and t - w != m["wall0"] + first_ms(s["tid"])
        blocker, owner = None, None
    # The JDK samples a thread in native code only when it has a Java frame.
    native = [event("jdk.NativeMethodSample", t, 0, th, st, state=JFR_STATE[state])]
    return (native if state in ("native", "io") and st[1] else []) + \
        [event("ringprof.WallClockSample", t, 0, th, st,
               state=JFR_STATE[state], weight=w, wallState=state, cpuTime=cpu,
               repeat=repeat, blockerClass=blocker, blockerOwner=threads.json(owner))]


def gc_events(s, m, th, st, threads, rule):
    """The pause, and the heap after it where it was read (heap_used 0: not)."""
    t, w = s["t"], s["weight"]
    heap = [event("jdk.GCHeapSummary", t + w, 0, None, None, gcId=s["id"], when="After GC",
                  heapUsed=s["heap_used"],
                  heapSpace={"start": 0, "committedEnd": 0,
                             "committedSize": s["heap_committed"], "reservedEnd": 0,
                             "reservedSize": 0})]
    return [event("jdk.GarbageCollection", t, w, None, None, gcId=s["id"],
                  sumOfPauses=w, longestPause=w, eventThread=None),
            event("jdk.GCPhasePause", t, w, None, None, gcId=s["id"], name="GC Pause",
                  eventThread=None)] + (heap if s["heap_used"] else [])


KIND_EVENTS = {"cpu": cpu_events, "alloc": alloc_events, "live": live_events,
               "lock": lock_events, "wall": wall_events, "gc": gc_events}


def expected_samples(m, threads, stacks):
    """The sample events (and GC events) the manifest implies, as event() tuples."""
    out, rule = [], CpuRule()
    for s in m["samples"]:
        if "kind" not in s:
            continue                                   # timeline's gauge readings
        th = threads.by_tid.get(s.get("tid"))
        st = stacks[s["stack"]] if "stack" in s else stacks[0]
        out += KIND_EVENTS[s["kind"]](s, m, th, st, threads, rule)
    return out


def first_ms(tid):
    """timeline: the start of thread tid (rp_testwriter's tl_threads)."""
    return 15000 * MS if tid == 503 else 0


def heap_before(m, t):
    """The heap used after the newest GC that ended by t (0: none yet)."""
    used = 0
    for s in m["samples"]:
        if s.get("kind") == "gc" and s["t"] + s["weight"] <= t:
            used = s["heap_used"]
    return used


def gauges_of(v, m):
    """(wall ns, name, value) of every gauge reading the manifest lists (None:
    the manifest does not list them)."""
    if v in ("waits", "views"):
        return [(g["t"], g["name"], g["value"]) for g in m["gauges"]]
    if v == "timeline":
        return [(g["t"], g["gauge"], g["value"]) for g in m["samples"] if "gauge" in g]
    return None


def float32(x):
    """x as a JFR float field holds it (clamped to 0..1 for a load)."""
    return struct.unpack("f", struct.pack("f", min(1.0, max(0.0, x))))[0]


def cpu_loads(v, g):
    """jdk.CPULoad where the process's user and system CPU totals are read at the
    same time: their rates since the previous such reading, as shares of
    host.cpus; machineTotal their sum (docs/profiles.md)."""
    cpus = HOST_CPUS.get(v)
    at = collections.defaultdict(dict)
    for t, name, value in g:
        at[t][name] = value
    out, prev = [], None
    for t in sorted(at):
        now = at[t]
        if "proc.cpu_user_ns.total" not in now or "proc.cpu_sys_ns.total" not in now:
            continue
        pair = (t, now["proc.cpu_user_ns.total"], now["proc.cpu_sys_ns.total"])
        if prev and cpus:
            span = (t - prev[0]) * cpus
            user, system = (pair[1] - prev[1]) / span, (pair[2] - prev[2]) / span
            out.append(event("jdk.CPULoad", t, 0, None, None, jvmUser=float32(user),
                             jvmSystem=float32(system), machineTotal=float32(user + system)))
        prev = pair
    return out


JAVA_THREAD_GAUGES = jfr_views.JAVA_THREAD_GAUGES


def java_thread_statistics(g):
    """jdk.JavaThreadStatistics where the four Java thread gauges are read at
    the same time: activeCount, daemonCount, accumulatedCount, peakCount."""
    at = collections.defaultdict(dict)
    for t, name, value in g:
        at[t][name] = value
    return [event("jdk.JavaThreadStatistics", t, 0, None, None,
                  **dict(zip(("activeCount", "daemonCount", "accumulatedCount", "peakCount"),
                             (at[t][n] for n in JAVA_THREAD_GAUGES))))
            for t in sorted(at) if all(n in at[t] for n in JAVA_THREAD_GAUGES)]


def thread_loads(v, m):
    """jdk.ThreadCPULoad of the manifest's thread CPU readings where the header
    gives host.cpus (jfr_views.thread_loads; system NaN): {tid: [(t, user)]}."""
    out, cpus = collections.defaultdict(list), HOST_CPUS.get(v)
    readings = [(r["tid"], r["t"], r["cpu_ns"]) for r in m.get("thread_cpu", [])]
    for tid, t, user in jfr_views.thread_loads(readings, cpus) if cpus else ():
        out[tid].append((t, float32(user)))
    return out


def expected_telemetry(v, m):
    """Gauge-derived events (docs/profiles.md): ringprof.Gauge each,
    jdk.ResidentSetSize {size, peak so far}, jdk.ClassLoadingStatistics,
    jdk.JavaThreadStatistics, and where the header gives host.cpus jdk.CPULoad
    and (from the thread CPU readings) jdk.ThreadCPULoad."""
    g = gauges_of(v, m)
    if g is None:
        return None
    threads = threads_of(v)
    out, peak = cpu_loads(v, g) + java_thread_statistics(g), 0
    for tid, loads in thread_loads(v, m).items():
        out += [event("jdk.ThreadCPULoad", t, 0, threads.by_tid[tid], None, user=user,
                      system="NaN") for t, user in loads]
    for t, name, value in sorted(g, key=lambda x: x[0]):
        out.append(event("ringprof.Gauge", t, 0, None, None, name=name, value=value))
        if name == "proc.rss_bytes":
            peak = max(peak, value)
            out.append(event("jdk.ResidentSetSize", t, 0, None, None, size=value, peak=peak))
        if name == "classes.loaded":
            out.append(event("jdk.ClassLoadingStatistics", t, 0, None, None,
                             loadedClassCount=value))
    return out


def gauge_count(v, m):
    """How many ringprof.Gauge events: the manifest's readings, else rp_testwriter's
    (main: one rss; heap and cpp: live.objects and live.bytes per snapshot)."""
    g = gauges_of(v, m)
    if g is not None:
        return len(g)
    return {"main": 1, "heap": 2 * len(m.get("snapshots", [])), "cpp": 12, "rename": 0}[v]


# ------------------------------------------------------------ the files --
def convert(out, inputs, *extra, check=True):
    r = subprocess.run([RINGPROF, "convert", *extra, "-o", out, *inputs],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if check and r.returncode != 0:
        raise RuntimeError("convert %s: exit %d: %s" % (out, r.returncode, r.stderr.decode()))
    return r


manifests, inputs, files = {}, {}, {}
for v in VARIANTS:
    inputs[v] = os.path.join(T, v + ".rpc")
    run([WRITER, v, inputs[v], "--manifest", os.path.join(T, v + ".json")])
    manifests[v] = load_manifest(os.path.join(T, v + ".json"))
    files[v] = os.path.join(T, v + ".jfr")
    convert(files[v], [inputs[v]], "--format", "jfr")

# rp_bigwriter's names: markup, quotes, U+2028 and bytes that are not UTF-8 in
# names, a stack 3000 frames deep.
inputs["names"] = os.path.join(T, "names.rpc")
run([BIGWRITER, "names", inputs["names"]])
files["names"] = os.path.join(T, "names.jfr")
convert(files["names"], [inputs["names"]])

# rp_testwriter's overloads: Query.query(String) calling query(String, int),
# Arrays.fill of long[] and of int[]. A JFR method carries its descriptor, as
# the JDK writes it, so the overloads stay apart there (docs/profiles.md).
inputs["overloads"] = os.path.join(T, "overloads.rpc")
run([WRITER, "overloads", inputs["overloads"], "--manifest",
     os.path.join(T, "overloads.json")])
files["overloads"] = os.path.join(T, "overloads.jfr")
convert(files["overloads"], [inputs["overloads"]])

# rp_bigwriter's weights: cpu samples of a tenth of an interval to 25 intervals.
inputs["weights"] = os.path.join(T, "weights.rpc")
run([BIGWRITER, "weights", inputs["weights"]])
files["weights"] = os.path.join(T, "weights.jfr")
convert(files["weights"], [inputs["weights"]])

# The filtered conversions (main): their subsets are checked with the rest.
FILTERS = {
    "thread": ("--thread", "^worker-1$"),
    "window": ("--from", "+2s", "--to", "+5s"),
    "cpu": ("--event", "cpu"),
    "exclude": ("--exclude", "memcpy|^app\\.Math\\."),
}
for name, args in FILTERS.items():
    files["main-" + name] = os.path.join(T, "main-%s.jfr" % name)
    convert(files["main-" + name], [inputs["main"]], "--format", "jfr", *args)
# One kind a file (--event), as the readers that take one profile a file want.
PER_KIND = {"heap": ("alloc", "live", "gc"), "waits": ("wall", "lock"), "cpp": ("cpu",)}
for v, kinds in PER_KIND.items():
    for k in kinds:
        files["%s-%s" % (v, k)] = os.path.join(T, "%s-%s.jfr" % (v, k))
        convert(files["%s-%s" % (v, k)], [inputs[v]], "--format", "jfr", "--event", k)
# -o x.jfr infers the format: the same bytes as --format jfr.
inferred = os.path.join(T, "inferred.jfr")
convert(inferred, [inputs["main"]])
with open(inferred, "rb") as a, open(files["main"], "rb") as b:
    main_bytes = b.read()
    c.check(a.read() == main_bytes, "-o x.jfr infers the format (the same file as --format jfr)")
# To a pipe the events are spooled, then copied: the same bytes.
piped = run([RINGPROF, "convert", "--format", "jfr", inputs["main"]], binary=True)
c.check(piped == main_bytes, "--format jfr to a pipe writes the same file as -o")


# ------------------------------------------------ the consumers, in parallel --
# Short-lived JVMs start faster with C1 only and the serial collector.
JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
JFR_JVM = ["-J" + o for o in JVM]


def tool(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                       env=env)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


# Pyroscope's parser and async-profiler's converter read every file; beside them,
# ringprof's collapsed stacks of the same input and filters (jfr_readers.py).
READERS = jfr_readers.readers(CACHE)
SPECS = {}          # file: (Ringprof, its kinds, every cpu sample whole intervals)
for name in files:
    base, _, rest = name.partition("-")
    args = list(FILTERS.get(rest, ())) if base == "main" else ["--event", rest] if rest else []
    only = None
    if "--event" in args:          # a file of one kind: the readers see only that one
        only = args.pop(args.index("--event") + 1)
        args.remove("--event")
    rp = jfr_readers.Ringprof(RINGPROF, inputs[base], args)
    kinds = {k for k in ("cpu", "alloc", "lock", "wall") if only in (None, k) and
             rp.stacks(k, "samples")}
    SPECS[name] = (rp, kinds, base != "weights")
AP_OUT = {}
if READERS["ap"]:
    lines = []
    os.makedirs(os.path.join(T, "ap"))
    for name in files:
        more, AP_OUT[name] = jfr_readers.ap_lines(name, files[name], os.path.join(T, "ap"),
                                                  SPECS[name][1])
        lines += more
    with open(os.path.join(T, "ap", "list"), "w") as f:
        f.write("\n".join(lines) + "\n")

JMC_JARS = sorted(glob.glob(os.path.join(JMC, "*.jar")))
HAVE_JMC = any(os.path.basename(j).startswith("flightrecorder-") for j in JMC_JARS)
JFR25 = os.path.join(JDK25, "bin", "jfr")
HAVE_25 = os.access(JFR25, os.X_OK)
# JDK 25's views (JfrViews.java runs them in one JVM) and the file each reads.
VIEWS = [("hot-methods", "main"), ("allocation-by-site", "heap")] + \
    [(view, "views") for view in jfr_views.VIEWS]
names = list(files)
jobs = {}
with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
    jobs["dump"] = pool.submit(tool, [JAVA] + JVM + ["-cp", JFRDUMP_JAR, "JfrDump"] +
                               [files[n] for n in names])
    if HAVE_JMC:
        jobs["jmc"] = pool.submit(tool, [JAVA] + JVM + ["-cp", ":".join(JMC_JARS),
                                         os.path.join(SRC, "JmcDump.java")] +
                                  [files[v] for v in VARIANTS + ["names"]])
    jobs["rp-summary", "weights"] = pool.submit(tool, [RINGPROF, "summary", inputs["weights"]])
    for v in VARIANTS:
        jobs["rp-summary", v] = pool.submit(tool, [RINGPROF, "summary", inputs[v]])
        jobs["summary", v] = pool.submit(tool, [JFR] + JFR_JVM + ["summary", files[v]])
        jobs["print", v] = pool.submit(tool, [JFR] + JFR_JVM + ["print", "--json", files[v]])
    if READERS["jfrparser"]:
        for name in files:
            jobs["jfrparser", name] = pool.submit(tool, [READERS["jfrparser"], "-rate", "100",
                                                         files[name]])
    if READERS["ap"]:
        jobs["ap"] = pool.submit(tool, [JAVA] + JVM + ["-cp", READERS["ap"] + ":" + APCONVERT_JAR,
                                                       "ApConvert", os.path.join(T, "ap", "list")])
    for jdk, jfr in (("17", JFR), ("25", JFR25 if HAVE_25 else None)):
        if jfr:
            jobs["meta", jdk] = pool.submit(tool, [jfr] + JFR_JVM + ["metadata"])
            jobs["meta-file", jdk] = pool.submit(tool, [jfr] + JFR_JVM + ["metadata", files["main"]])
        if jfr and READERS["jfrparser"]:
            # A recording the JDK itself makes, for which fields are pool references.
            jobs["jdk-rec", jdk] = pool.submit(tool, [os.path.join(os.path.dirname(jfr), "java")] +
                                               JVM + ["-XX:StartFlightRecording:filename=" +
                                                      os.path.join(T, "jdk%s.jfr" % jdk),
                                                      "-version"])
    if HAVE_25:
        jobs["views"] = pool.submit(tool, jfr_views.command(JDK25, JFRVIEWS_JAR, [
            (view, files[f]) for view, f in VIEWS]))
    results = {k: f.result() for k, f in jobs.items()}


def split_dump(text):
    """JfrDump/JmcDump output: {file: (header, [events])}."""
    out, cur = {}, None
    for line in text.split("\n"):    # not splitlines(): names may hold U+2028
        if not line:
            continue
        e = json.loads(line)
        if "file" in e:
            cur = out.setdefault(e["file"], (e, []))
        else:
            cur[1].append(e)
    return out


rc, out, err = results["dump"]
if not c.check(rc == 0 and not err.strip(), "JfrDump reads every file", err[-2000:]):
    c.close()
dumps = split_dump(out)


def compare(what, got, want, limit=4):
    """Multisets of events equal; else the first differences."""
    g, w = collections.Counter(got), collections.Counter(want)
    missing, extra = list((w - g).elements()), list((g - w).elements())
    c.check(not missing and not extra, what,
            "%d expected events missing, %d unexpected%s%s" % (
                len(missing), len(extra),
                "".join("\n    missing: %s" % (x,) for x in missing[:limit]),
                "".join("\n    unexpected: %s" % (x,) for x in extra[:limit])))


def threads_of(v):
    m = manifests[v]
    return Threads(m["samples"], RECORDINGS[v][5], m.get("names"))


def stacks_of(v):
    m = manifests[v]
    if v == "timeline":       # every timeline sample is on main's stack S1
        return [stack_of(manifests["main"]["stacks"][0])]
    return [stack_of(st) for st in m["stacks"]]


expected = {}
for v in VARIANTS:
    m = manifests[v]
    expected[v] = expected_samples(m, threads_of(v), stacks_of(v))

# ---------------------------------------------- JfrDump against the manifests --
for v in VARIANTS:
    m = manifests[v]
    rec, pid, host, options, nchunks, _, counters = RECORDINGS[v]
    header, events = dumps[files[v]]
    by_type = collections.defaultdict(list)
    for e in events:
        by_type[e["type"]].append(e)
    got = [from_dump(e) for e in events if e["type"] in SAMPLE_TYPES]
    compare("%s: every sample event (time, thread, stack, fields) as the manifest says" % v,
            got, expected[v])
    tel = expected_telemetry(v, m)
    if tel is not None:
        got = [from_dump(e) for e in events
               if e["type"] in ("ringprof.Gauge", "jdk.ResidentSetSize",
                                "jdk.ClassLoadingStatistics", "jdk.CPULoad",
                                "jdk.JavaThreadStatistics", "jdk.ThreadCPULoad")]
        compare("%s: gauges, ResidentSetSize, ClassLoadingStatistics, CPULoad, "
                "JavaThreadStatistics, ThreadCPULoad" % v, got, tel)
    c.check(len(by_type["ringprof.Gauge"]) == gauge_count(v, m),
            "%s: a ringprof.Gauge per gauge reading" % v, len(by_type["ringprof.Gauge"]))
    if v not in HOST_CPUS:
        c.check(not by_type["jdk.CPULoad"], "%s: no jdk.CPULoad without host.cpus" % v)
    got = sorted((e["fields"]["name"], e["fields"]["value"])
                 for e in by_type["ringprof.Counter"])
    c.check(got == sorted(counters.items()), "%s: the counters" % v, got)
    # The recording's metadata: one ringprof.Recording per chunk file.
    recs = sorted(by_type["ringprof.Recording"], key=lambda e: e["fields"]["chunkSeq"])
    ok = len(recs) == nchunks
    for seq, e in enumerate(recs):
        f = e["fields"]
        meta = dict(line.split("=", 1) for line in f["metadata"].splitlines())
        ok = ok and (f["recordingId"], f["chunkSeq"], f["pid"], f["host"], f["jvmName"],
                     f["agentOptions"], f["producer"]) == \
            (rec, seq, pid, host, "TestVM", options, "rp_testwriter") and \
            meta.get("recording.id") == rec and meta.get("pid") == str(pid) and \
            meta.get("chunk.seq") == str(seq) and \
            int(meta.get("start.wall_ns", -1)) == e["start"] and \
            f["segmentsWhole"] > 0 and f["segmentsDamaged"] == 0 and \
            f["segmentsCutOff"] == 0 and os.path.basename(f["file"]).endswith(".rpc")
    c.check(ok, "%s: ringprof.Recording per chunk (id, seq, pid, host, options, "
            "producer, the header's metadata)" % v, [e["fields"] for e in recs])
    info = by_type["jdk.JVMInformation"]
    c.check(len(info) == 1 and info[0]["fields"]["pid"] == pid and
            info[0]["fields"]["jvmName"] == "TestVM" and
            info[0]["fields"]["jvmArguments"] == options and
            info[0]["start"] == recs[0]["start"],
            "%s: one jdk.JVMInformation (pid, JVM, agent options)" % v,
            [e["fields"] for e in info])

# main's thread CPU reading
tc = [e for e in dumps[files["main"]][1] if e["type"] == "ringprof.ThreadCPUTime"]
c.check([(e["fields"]["eventThread"]["osThreadId"], e["fields"]["cpuTime"]) for e in tc] ==
        [(101, 130 * MS)], "main: ringprof.ThreadCPUTime of main, 130 ms",
        [e["fields"] for e in tc])

# ------------------------------------------------ hostile names, deep stacks --
SCRIPT = "</script><script>alert(1)</script>"
QUOTES = "say\"hi\"'<!--&amp;\u2028"


def names_check(what, events):
    """rp_bigwriter names: 40, 30 and 20 samples on the three hostile leaves
    (invalid UTF-8 replaced, the rest of the name kept), 10 on the deep stack,
    all on the thread named </script><b>"thread"."""
    leaves = collections.Counter()
    for e in events:
        if e["type"] != "jdk.ExecutionSample":
            continue
        f = e["fields"]
        t = f.get("sampledThread") or f.get("eventThread")
        frames = f["stackTrace"]["frames"]
        shape = "deep" if len(frames) == 3000 and frames[0]["method"] == "bottom" and \
            all(x["method"] == "recurse" for x in frames[1:-1]) and \
            frames[-1]["method"] == "run" else frames[0]["method"]
        if shape.startswith("bad") and "utf8" in shape:
            shape = "bad-utf8"
        leaves[shape, t["javaName"]] += 1
    thread = '</script><b>"thread"'
    want = {(SCRIPT, thread): 40, (QUOTES, thread): 30, ("bad-utf8", thread): 20,
            ("deep", thread): 10}
    c.check(leaves == want, "%s: hostile names exact, invalid UTF-8 replaced, the 3000-frame "
            "stack whole" % what, dict(leaves))


names_check("rp_bigwriter names (JfrDump)", dumps[files["names"]][1])

# ------------------------------------------------ against ringprof summary --
# Every sample is one event of its kind's type (the ringprof type where the JDK's
# cannot hold all it knows), so the counts are `ringprof summary`'s samples; the
# ringprof.CPUSample weights add up to its cpu weight, and the jdk.ExecutionSample
# events are that weight over the interval, rounded half up.
for v in VARIANTS + ["weights"]:
    rc, out, err = results["rp-summary", v]
    kinds = {mm.group(1): (int(mm.group(2)), round(float(mm.group(3) or 0) * 1e9))
             for mm in re.finditer(
                 r"^\s*samples\s+(\w+)\s+(\d+)\s+(?:weight\s+([\d.]+) s$)?", out, re.M)}
    types = collections.Counter(e["type"] for e in dumps[files[v]][1])
    cpu_w = sum(e["fields"]["weight"] for e in dumps[files[v]][1]
                if e["type"] == "ringprof.CPUSample")
    got = {"cpu": types["ringprof.CPUSample"], "alloc": types["jdk.ObjectAllocationSample"],
           "live": types["jdk.OldObjectSample"], "lock": types["jdk.JavaMonitorEnter"],
           "gc": types["jdk.GarbageCollection"], "wall": types["ringprof.WallClockSample"]}
    want = {k: kinds.get(k, (0, 0))[0] for k in got}
    twins = (types["ringprof.AllocationSample"], types["ringprof.LiveObject"]) == \
        (got["alloc"], got["live"])
    summary_w = kinds.get("cpu", (0, 0))[1]
    c.check(rc == 0 and got == want and twins and abs(cpu_w - summary_w) < 1e6 and
            types["jdk.ExecutionSample"] == (cpu_w + CPU_PERIOD // 2) // CPU_PERIOD,
            "%s: the events per kind are ringprof summary's samples, the CPU its weight "
            "(%d jdk.ExecutionSample = %.3f s / 10 ms)" % (v, types["jdk.ExecutionSample"],
                                                          cpu_w / 1e9),
            "events %s, cpu %d ns; summary %s" % (dict(types), cpu_w, kinds))

# rp_bigwriter weights: weights from a tenth of an interval to 25 intervals; each
# sample's events by the rule, in the order written (its time).
WEIGHTS = [100000 * (1 + k * 7919 % 250) for k in range(1000)]
rule, want = CpuRule(), []
for k, w in enumerate(WEIGHTS):
    want.append((k * MS, w, rule.events(w)))
# The overloads: each its own method, with its descriptor, its samples its own
# (the agent's [ringprof:alloc] is no frame: its caller, query(String), is the leaf).
fills = collections.Counter()
for e in dumps[files["overloads"]][1]:
    if e["type"] == "jdk.ExecutionSample":
        leaf = e["fields"]["stackTrace"]["frames"][0]
        fills[(leaf["class"], leaf["method"], leaf["descriptor"])] += 1
c.check(fills == {("java.util.Arrays", "fill", "([JJ)V"): 30,
                  ("java.util.Arrays", "fill", "([II)V"): 20,
                  ("app.db.Query", "query", "(Ljava/lang/String;)Ljava/util/List;"): 10},
        "overloads: apart in the JFR file, each with its descriptor and samples", fills)

ev = dumps[files["weights"]][1]
t0 = min((e["start"] for e in ev if e["type"] == "ringprof.CPUSample"), default=0)
per_time = collections.Counter(e["start"] - t0 for e in ev if e["type"] == "jdk.ExecutionSample")
got = [(e["start"] - t0, e["fields"]["weight"], e["fields"]["executionSamples"])
       for e in ev if e["type"] == "ringprof.CPUSample"]
c.check(got == want and all(per_time[t] == n for t, _, n in want) and
        sum(per_time.values()) == 1255 and sum(1 for _, _, n in want if n == 0) > 0,
        "weights: each sample's ringprof.CPUSample and its jdk.ExecutionSample events by the "
        "rule (1255 for 12.55 s; the old max(1, round(w / p)) made 1408)",
        "first differences %s" % [(a, b) for a, b in zip(got, want) if a != b][:3])

# ---------------------------------- Pyroscope's parser, async-profiler's converter --
for line in READERS["why"]:
    print(line)
for name in files:
    rp, kinds, exact = SPECS[name]
    jdk = collections.Counter(e["type"] for e in dumps[files[name]][1])
    if READERS["jfrparser"]:
        rc, out, err = results["jfrparser", name]
        jfr_readers.check_jfrparser(c, name, out, rc, rp, kinds, CPU_PERIOD, exact, dict(jdk))
    if READERS["ap"]:
        jfr_readers.check_ap(c, name, AP_OUT[name], rp, kinds, CPU_PERIOD, exact)
if READERS["ap"]:
    rc, out, err = results["ap"]
    c.check(rc == 0, "async-profiler's converter reads every file", (out + err)[-2000:])

# -------------------------------------------- the JDK's own metadata, type by type --
# Every JDK type the file declares has the JDK's fields: JDK 25's exactly (names,
# types, order, annotations but labels and descriptions; the event's category),
# but for the trailing fields ringprof has no value for, and JDK 17's in the same
# order among them (JDK 25 added Thread.virtual, OldObjectSample.objectSize and
# GarbageCollection.eventThread).
LEFT_OUT = {"jdk.types.Package": 2, "jdk.types.OldObject": 1, "jdk.ClassLoadingStatistics": 1}


def jfr_metadata(text):
    """`jfr metadata`: {type: (category, [(field, type, annotations)])}."""
    types, ann, cur = {}, [], None
    for line in text.splitlines():
        mm = re.match(r"^class (\w+)(?: extends [\w.]+)? \{", line)
        if mm:
            name = next((re.match(r'@Name\("(.*)"\)', a).group(1) for a in ann
                         if a.startswith("@Name(")), mm.group(1))
            cat = next((a for a in ann if a.startswith("@Category")), None)
            cur, ann, fann = name, [], []
            types[cur] = (cat, [])
        elif line.startswith("@"):
            ann.append(line)
        elif cur and line.startswith("  @"):
            if not line.strip().startswith(("@Label", "@Description")):
                fann.append(line.strip())
        elif cur and re.match(r"^  [\w.\[\]]+ \w+;$", line):
            ftype, fname = line.strip().rstrip(";").split()
            types[cur][1].append((fname, ftype, tuple(fann)))
            fann = []
        elif line == "}":
            cur = None
    return types


def subsequence(small, big):
    it = iter(big)
    return all(x in it for x in small)


for jdk in ("17", "25"):
    if ("meta", jdk) not in results:
        print("SKIP (part): no JDK %s: its jfr metadata not compared" % jdk)
        continue
    (rc1, out1, err1), (rc2, out2, err2) = results["meta", jdk], results["meta-file", jdk]
    if not c.check(rc1 == 0 and rc2 == 0, "JDK %s jfr metadata reads the file" % jdk,
                   err1[-500:] + err2[-500:]):
        continue
    theirs, ours = jfr_metadata(out1), jfr_metadata(out2)
    bad = []
    for t, (cat, fields) in sorted(ours.items()):
        if t.startswith("ringprof."):
            continue
        if t not in theirs:
            if jdk == "25" or t != "jdk.ResidentSetSize":       # new in JDK 21
                bad.append("%s: not a JDK %s type" % (t, jdk))
            continue
        tcat, tfields = theirs[t]
        want = tfields[:len(tfields) - LEFT_OUT.get(t, 0)]
        ok = fields == want if jdk == "25" else subsequence(want, fields)
        if not ok or cat != tcat:
            bad.append("%s: %s %s, JDK %s: %s %s" % (t, cat, fields, jdk, tcat, tfields))
    c.check(not bad, "JDK %s: every JDK type has the JDK's fields, types, order and "
            "annotations" % jdk, "\n    ".join(bad[:6]))
    # Which fields are constant-pool references and arrays: as in the JDK's own
    # recording, read by jfr-parser (jfr metadata does not print it).
    if not READERS["jfrparser"]:
        continue
    decl, rcs = {}, [results["jdk-rec", jdk][0]]
    for f in ("jdk%s.jfr" % jdk, files["main"]):
        r = subprocess.run([READERS["jfrparser"], "-metadata", os.path.join(T, f)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        rcs.append(r.returncode)
        decl[f] = {tuple(line.split("\t")[1:3]): tuple(line.split("\t")[3:])
                   for line in r.stdout.decode().splitlines() if line.startswith("field\t")}
    theirs, ours = decl["jdk%s.jfr" % jdk], decl[files["main"]]
    bad = ["%s.%s: %s, JDK %s: %s" % (t, n, ours[t, n], jdk, theirs[t, n])
           for t, n in sorted(ours) if (t, n) in theirs and ours[t, n] != theirs[t, n]]
    c.check(rcs == [0, 0, 0] and len(theirs) > 1000 and len(ours) > 100 and not bad,
            "JDK %s: every JDK type's fields are pool references and arrays as in a "
            "recording of the JDK's" % jdk,
            "exits %s, %d and %d fields: %s" % (rcs, len(theirs), len(ours), bad[:6]))

# ------------------------------------------- jfr summary and jfr print --json --
implied = {}     # every event the manifest implies, ringprof.ThreadCPUTime included


def summary_counts(text):
    counts = {}
    for line in text.splitlines():
        mm = re.match(r"^\s*([\w.]+)\s+(\d+)\s+\d+\s*$", line)
        if mm:
            counts[mm.group(1)] = int(mm.group(2))
    return counts


for v in VARIANTS:
    rc, out, err = results["summary", v]
    c.check(rc == 0 and not err.strip(), "%s: jfr summary reads it, no error output" % v,
            err[-1500:])
    counts = summary_counts(out)
    want = collections.Counter(e[0] for e in expected[v])
    tel = expected_telemetry(v, manifests[v])
    if tel is not None:
        want.update(e[0] for e in tel)
    want["ringprof.Gauge"] = gauge_count(v, manifests[v])
    want["ringprof.Recording"] = RECORDINGS[v][4]
    want["jdk.JVMInformation"] = 1
    want["ringprof.Counter"] = len(RECORDINGS[v][6])
    got = {k: n for k, n in counts.items()
           if n and k not in ("jdk.Metadata", "jdk.CheckPoint", "ringprof.ThreadCPUTime")}
    want = {k: n for k, n in want.items() if n}
    implied[v] = sum(want.values()) + len(manifests[v].get("thread_cpu", []))
    c.check(got == want, "%s: jfr summary's counts per event type as the manifest implies" % v,
            "got %s\n    want %s" % (sorted(got.items()), sorted(want.items())))
    rc, out, err = results["print", v]
    ok = rc == 0 and not err.strip()
    if ok:
        try:
            doc = json.loads(out)
            n = len(doc["recording"]["events"])
            ok = n == sum(x for k, x in counts.items()
                          if k not in ("jdk.Metadata", "jdk.CheckPoint"))
        except (ValueError, KeyError) as e:
            ok, err = False, str(e)
    c.check(ok, "%s: jfr print --json reads every event, no error output" % v, err[-1500:])

# ------------------------------------------------------------ the filters --
main_events = expected["main"]
t0 = min(s["t"] for s in manifests["main"]["samples"])
subsets = {
    "thread": [e for e in main_events if e[3] and e[3][1] == "worker-1"],
    "window": [e for e in main_events if t0 + 2000 * MS <= e[1] < t0 + 5000 * MS],
    "cpu": [e for e in main_events if e[0] in ("jdk.ExecutionSample", "ringprof.CPUSample")],
    "exclude": [e for e in main_events
                if not any("memcpy" in f[1] or f[0] == "app.Math" for f in e[4][1])],
}
for name, want in subsets.items():
    events = dumps[files["main-" + name]][1]
    got = [from_dump(e) for e in events if e["type"] in SAMPLE_TYPES]
    what = "main " + " ".join(FILTERS[name])
    compare("%s: the samples the manifest predicts" % what, got, want)
    c.check(any(e["type"] == "ringprof.Recording" for e in events) and
            any(e["type"] == "jdk.JVMInformation" for e in events),
            "%s: the recording's metadata is still written" % what)
    if name == "window":      # the telemetry too is the window's (docs/tool.md)
        outside = [e for e in events if e["type"] not in ("ringprof.Recording",
                                                          "jdk.JVMInformation")
                   and not t0 + 2000 * MS <= e["start"] < t0 + 5000 * MS]
        c.check(not outside, "%s: no event outside the window" % what, outside[:2])
    else:
        got = sorted((e["fields"]["name"], e["fields"]["value"])
                     for e in events if e["type"] == "ringprof.Counter")
        c.check(got == sorted(RECORDINGS["main"][6].items()),
                "%s: the counters are still written" % what, got)

# --------------------------------------------------------- usage errors --
for args, pattern in (
        (("--format", "jfr", "--event", "bogus"), r"bogus"),
        (("--format", "jfr", "--from", "yesterday"), r"yesterday|--from"),
        (("--format", "jfr", "--thread", "("), r"--thread|regex|expression"),
):
    bad = os.path.join(T, "bad%s.jfr" % args[-1].strip("("))
    r = convert(bad, [inputs["main"]], *args, check=False)
    msg = r.stderr.decode("utf-8", "replace")
    c.check(r.returncode == 2 and re.search(pattern, msg) and not os.path.exists(bad),
            "usage error %s: exit 2, a message, no file" % " ".join(args),
            "exit %d: %s" % (r.returncode, msg.strip()))
for args, pattern, rc in ((("--group", "class"), r"--group", 2),
                         (("--event", "wall"), r"no wall samples", 1)):
    bad = os.path.join(T, "bad-%s.jfr" % args[1])
    r = convert(bad, [inputs["main"]], *args, check=False)
    msg = r.stderr.decode("utf-8", "replace")
    c.check(r.returncode == rc and re.search(pattern, msg) and not os.path.exists(bad),
            "%s: exit %d, a message, no file" % (" ".join(args), rc),
            "exit %d: %s" % (r.returncode, msg.strip()))
r = convert(os.path.join(T, "missing.jfr"), [os.path.join(T, "no-such.rpc")], "--format", "jfr",
            check=False)
c.check(r.returncode == 1 and r.stderr.strip() and
        not os.path.exists(os.path.join(T, "missing.jfr")),
        "an unreadable input: exit 1, a message, no file",
        "exit %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace").strip()))

# ------------------------------------------------- JDK Mission Control --
JMC_TYPES = {"JIT Compiled": "JIT compiled", "NATIVE": "Native", "CPP": "C++",
             "KERNEL": "Kernel", "INLINED": "Inlined", "INTERPRETED": "Interpreted",
             "JIT_COMPILED": "JIT compiled"}
# JMC logs, on every file with java.lang.Thread's `virtual` field (JDK 21+'s too),
# that its thread reader has no such field: not a problem of the file.
JMC_NOISE = re.compile(r"ValueReaders\$ReflectiveReader addField|"
                       r"WARNING: Could not find field with name 'virtual'")


def jmc_key(e):
    """What JMC and the JDK must agree on: type, time, thread, stack."""
    f = e["fields"]
    t = f.get("eventThread") or f.get("sampledThread")
    st = f.get("stackTrace")
    return (e["type"], e["start"], t and (t["javaName"] or t.get("osName"), t["javaThreadId"]),
            st and (st["truncated"], tuple((x["class"], x["method"], x["line"], x["bci"],
                                            JMC_TYPES.get(x["type"], x["type"]))
                                           for x in st["frames"])))


if not HAVE_JMC:
    print("SKIP (part): JMC's parser not in %s (tests/fetch-maven fetches it)" % JMC)
else:
    rc, out, err = results["jmc"]
    noise = [line for line in err.splitlines() if line.strip() and not JMC_NOISE.search(line)]
    if c.check(rc == 0 and not noise, "JMC's parser loads every file", "\n".join(noise)[-2000:]):
        jmc = split_dump(out)
        names_check("rp_bigwriter names (JMC)", jmc[files["names"]][1])
        for v in VARIANTS:
            jevents = jmc[files[v]][1]
            got = [jmc_key(e) for e in jevents if e["type"] in SAMPLE_TYPES]
            want = []
            for e in dumps[files[v]][1]:
                if e["type"] in SAMPLE_TYPES:
                    k = jmc_key(e)
                    t = k[2] and (k[2][0], k[2][1])
                    want.append((k[0], k[1], t, k[3]))
            compare("%s: JMC sees the same sample events (type, time, thread, stack)" % v,
                    got, want)
            counts = collections.Counter(e["type"] for e in jevents)
            jdk_counts = collections.Counter(e["type"] for e in dumps[files[v]][1])
            c.check(counts == jdk_counts, "%s: JMC's counts per type equal the JDK's" % v,
                    "JMC %s\n    JDK %s" % (sorted(counts.items()), sorted(jdk_counts.items())))
            # JMC's own accessors: weights and classes as it reads them.
            alloc = [(e["start"], e["fields"].get("weight"), e["fields"].get("objectClass"))
                     for e in jevents if e["type"] == "jdk.ObjectAllocationSample"]
            want = [(s["t"], s["weight"], s["class"]) for s in manifests[v]["samples"]
                    if s.get("kind") == "alloc"]
            c.check(sorted(alloc) == sorted(want),
                    "%s: JMC's allocation weights and classes" % v, sorted(alloc)[:3])
            locks = [(e["start"], e["duration"], e["fields"].get("monitorClass"))
                     for e in jevents if e["type"] == "jdk.JavaMonitorEnter"]
            want = [(s["t"], s["weight"], s["monitor"]) for s in manifests[v]["samples"]
                    if s.get("kind") == "lock"]
            c.check(sorted(locks) == sorted(want),
                    "%s: JMC's lock waits (time, duration, monitor class)" % v, sorted(locks)[:3])

# ------------------------------------------------------- JDK 25's views --
def top(manifest, kind, by):
    """The leaf method (class.name) holding the most of `by` over samples of kind."""
    total = collections.Counter()
    for s in manifest["samples"]:
        if s.get("kind") != kind:
            continue
        frames = manifest["stacks"][s["stack"]]["frames"]
        if frames:
            leaf = frames[-1]
            total[leaf["class"] + "." + leaf["name"]] += by(s)
    return total.most_common(1)[0][0]


def check_views(views):
    """The views recording's views against its manifest."""
    m, v = manifests["views"], "views"
    out = {view: views.get((view, files[v]), (1, "not run")) for view, f in VIEWS if f == v}
    for view, (rc, text) in out.items():
        c.check(rc == 0 and "Can't find" not in text and "Missing event" not in text,
                "views: JDK 25 jfr view %s runs" % view, text[-600:])
    samples = m["samples"]
    gcs = [s for s in samples if s.get("kind") == "gc"]
    times = [s["t"] for s in samples] + [s["t"] + s["weight"] for s in gcs if s["heap_used"]] + \
        [g["t"] for g in m["gauges"]] + [r["t"] for r in m["thread_cpu"]]
    f = form(out["recording"][1])
    c.check(f.get("Event Count", "").replace(",", "") == str(implied[v]) and
            f.get("First Recorded Event") == hhmmss(min(times)) and
            f.get("Last Recorded Event") == hhmmss(max(times)) and
            near(amount(f.get("Length of Recorded Events")), max(times) - min(times)) and
            f.get("Dump Reason") == "N/A",
            "views: jfr view recording: %d events, %s .. %s, no dump reason (jdk.Shutdown "
            "declared, never written)" % (implied[v], hhmmss(min(times)), hhmmss(max(times))), f)
    rows = jfr_views.gc_rows(out["gc"][1])
    ok = len(rows) == len(gcs) and all(rows)
    for r, s in zip(rows, gcs):
        after = s["heap_used"] or None
        ok = ok and r[:3] == (s["id"], "Unknown", None) and near(r[4], s["weight"]) and \
            (r[3] is None if after is None else r[3] is not None and
             abs(r[3] - after) <= 0.05 * 2 ** 20)
    c.check(ok, "views: jfr view gc: one row a pause, its id, type Unknown, heap before N/A, "
            "after as recorded (N/A where not), its pause", rows)
    ph, pauses = jfr_views.phase_row(out["gc-pause-phases"][1]), [s["weight"] for s in gcs]
    c.check(ph and ph[3] == len(pauses) and near(ph[4], sum(pauses)) and
            near(ph[2], max(pauses)) and near(ph[0], sum(pauses) / len(pauses)),
            "views: jfr view gc-pause-phases: one row, GC Pause, %d pauses of %.1f ms in all" %
            (len(pauses), sum(pauses) / 1e6), out["gc-pause-phases"][1][-600:])
    for view, line in jfr_views.NO_EVENTS.items():
        c.check(out[view][1].strip() == line, "views: jfr view %s: %s (not recorded)" %
                (view, line), out[view][1][-300:])
    at = collections.defaultdict(dict)
    for g in m["gauges"]:
        at[g["t"]][g["name"]] = g["value"]
    want = [[hhmmss(t)] + [at[t][n] for n in JAVA_THREAD_GAUGES] for t in sorted(at)]
    got = jfr_views.thread_count_rows(out["thread-count"][1])
    c.check(got == want, "views: jfr view thread-count: the Java thread gauges, reading by "
            "reading", "got %s, want %s" % (got, want))
    names = {tid: t[1] for tid, t in threads_of(v).by_tid.items()}
    want = sorted(((names[tid], "N/A", "%.2f%%" % (loads[-1][1] * 100))
                   for tid, loads in thread_loads(v, m).items()), key=lambda r: -float(r[2][:-1]))
    got = jfr_views.cpu_load_rows(out["thread-cpu-load"][1])
    c.check(got == want and want, "views: jfr view thread-cpu-load: each thread's last load "
            "(CPU readings 1 ms or more apart), system N/A, by load",
            "got %s, want %s" % (got, want))
    native = collections.Counter()
    for s in samples:
        frames = [x for x in m["stacks"][s.get("stack", 0)]["frames"] if x["type"] != MARKER]
        if s.get("kind") == "wall" and s["state"] in ("native", "io") and frames:
            native["%s.%s()" % (frames[-1]["class"], frames[-1]["name"])] += 1   # ()V
    got = jfr_views.native_rows(out["native-methods"][1])
    c.check(got == dict(native), "views: jfr view native-methods: the native and io wall "
            "samples by top method, none without a Java frame, no marker",
            "got %s, want %s" % (got, dict(native)))


if not HAVE_25:
    print("SKIP (part): no JDK 25 in %s: jfr view not checked" % JDK25)
else:
    rc, text, err = results["views"]
    c.check(rc == 0, "JfrViews runs JDK 25's views", err[-1000:])
    views = jfr_views.split_views(text)
    hot = top(manifests["main"], "cpu", lambda s: s["weight"])
    site = top(manifests["heap"], "alloc", lambda s: s["weight"])
    for view, want, what in (("hot-methods", hot, "main"),
                             ("allocation-by-site", site, "heap")):
        vrc, out = views.get((view, files[what]), (1, "not run"))
        row = jfr_views.first_row(out)
        c.check(vrc == 0 and row.startswith(want + "("),
                "JDK 25 jfr view %s (%s) lists %s first" % (view, what, want),
                "exit %d, first row %r %s" % (vrc, row, out[-500:]))
    check_views(views)

c.close()
