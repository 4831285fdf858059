#!/usr/bin/env bash
# tests/agent/jfr_tests.sh — `ringprof convert --format jfr` end to end: a real
# JVM recorded with every kind on, converted to .jfr, and the file read by the
# JDK's own consumers, never by ringprof (docs/tool.md, "JFR"):
#
#   jfr_tests.sh convert
#
# One recording of tests/java/JfrWorkload.java (a CPU-hot method, a bulk
# allocation site, a contended monitor, idle threads in every wall state, kept
# objects and System.gc(), telemetry) with cpu, alloc, live, wall, lock and
# telemetry on. The expectations come from ringprof's own outputs of the same
# recording (summary, collapsed stacks, locks --json) and from rp_agent_dump
# (the cpu samples' weights and times, through the reader alone). Then:
#   - JDK 17's `jfr summary` and `jfr print --json` read the file, and their
#     per-type event counts are the expected ones (and each other's);
#   - tests/java/JfrCheck.java (jdk.jfr.consumer.RecordingFile, on JDK 17)
#     checks stacks, lines, weights, classes, monitors, owners, threads, wall
#     states, GC ids and durations, the live snapshot, a gauge and the CPU
#     load (its header lists them);
#   - JDK Mission Control's parser (tests/convert/JmcDump.java, the jars of
#     tests/fetch-maven in RP_JMC, default /var/cache/ringprof/jmc): the same events
#     as the JDK's jfr, type by type;
#   - the Temurin JDK 25 (RP_JDK25, default /usr/lib/jvm/temurin-25-jdk-amd64)
#     and the JDK 21 of tests/fetch-jdk21 (RP_JDK21, default
#     /var/cache/ringprof/jdk21), where present (else one line says so): their
#     `jfr view hot-methods` and `jfr view allocation-by-site` list the hot
#     method and the allocation site first; JDK 25's recording, gc,
#     gc-pause-phases, gc-configuration, heap-configuration, thread-count,
#     thread-cpu-load and native-methods print ringprof's own figures of the
#     recording (tests/convert/jfr_views.py says which); every view of a JDK
#     runs in one JVM (tests/convert/JfrViews.java, RP_JFRVIEWS);
#   - Pyroscope's parser and async-profiler's converter (tests/convert/jfr_readers.py,
#     readers in RP_CACHE, default /var/cache/ringprof): every event decoded at the
#     JDK's field widths, and their CPU, allocation and lock profiles stack by
#     stack against ringprof's collapsed stacks (CPU: events x interval within
#     half an interval of the recording's CPU).
#
# meson passes RP_JAVA (JDK 17's java; its jfr is beside it), RP_AGENT, RP_JAR,
# RP_DUMP (rp_agent_dump), RP_RINGPROF, RP_APCONVERT (tests/convert/ApConvert.java)
# and RP_JFRVIEWS. The scratch directory is kept (and named) when the test fails.
set -uo pipefail

test_name=${1:?usage: jfr_tests.sh TEST}
. "$(dirname "$0")/../lib.sh"
rp_begin "jfr-$test_name" "jfr $test_name"
fail_hook() { sed 's/^/  jvm: /' "$work/err" 2>/dev/null | head -20; }

CONVERT=$(dirname "$0")/../convert

# The known code of JfrWorkload, by the names the collapsed stacks give.
HOT=JfrWorkload.hot
SITE=JfrWorkload.allocate
SITE_CLASS='JfrWorkload$Payload'
MONITOR='JfrWorkload$Ledger'
KEPT='JfrWorkload$Kept'

# expectations: from ringprof's outputs of $work/rec, the lines JfrCheck reads
# ($work/expect) and the event counts (the "count" lines among them).
expectations() {
    local k
    rp summary "$work/rec" >"$work/summary" || fail "ringprof summary failed"
    "$RP_DUMP" meta "$work/rec" >"$work/meta"
    "$RP_DUMP" samples "$work/rec" >"$work/cpu_samples"
    "$RP_DUMP" cputime "$work/rec" >"$work/cputime"
    "$RP_DUMP" span "$work/rec" >"$work/span"
    RP_DUMP_KIND=gc "$RP_DUMP" samples "$work/rec" >"$work/gc_samples"
    for k in proc.rss_bytes proc.cpu_user_ns.total proc.cpu_sys_ns.total threads.java \
             threads.daemon threads.started.total threads.peak; do
        "$RP_DUMP" tseries "$work/rec" "$k" >"$work/$k"
    done
    conv() { local out=$1; shift; rp convert --quiet --format collapsed "$@" "$work/rec" >"$work/$out" ||
                 fail "ringprof convert $* failed"; }
    conv cpu_lines --event cpu --lines
    conv cpu_threads --event cpu --per-thread
    conv wall_states --event wall --per-thread --state-frames --value samples
    conv alloc --event alloc
    conv live --event live
    conv gc --event gc
    conv native --event wall --state native,io --value samples
    rp locks --json --top 1000 --stacks 1000 "$work/rec" >"$work/locks.json" || fail "ringprof locks failed"
    python3 - "$work" "$HOT" "$SITE" "$SITE_CLASS" "$MONITOR" "$KEPT" "$CONVERT" >"$work/expect" <<'PY' ||
import json, re, sys
from collections import defaultdict
work, hot, site, site_class, monitor, kept, convert = sys.argv[1:]
sys.path.insert(0, convert)
from jfr_readers import MARKER          # markers are not frames of the JFR file
from jfr_views import thread_loads
def collapsed(name, markers=False):
    """(frames, value) per line of a collapsed file: frames root first, without
    ringprof's markers unless asked."""
    for line in open("%s/%s" % (work, name)):
        stack, value = line.rstrip("\n").rsplit(" ", 1)
        yield [f for f in stack.split(";") if markers or not MARKER.match(f)], int(value)
def thread(frame):              # [main (renamed DestroyJavaVM)] -> main (JfrCheck.thread)
    return re.sub(r" \(renamed .*\)$", "", frame[1:-1])
def bare(frame):                # JfrWorkload.hot:43_[j] -> JfrWorkload.hot:43
    return re.sub(r"_\[.\]$", "", frame)
def fail(msg):
    sys.stderr.write("expectations: %s\n" % msg)
    sys.exit(1)
summary = open(work + "/summary").read()
def samples(kind):
    m = re.search(r"^  samples\s+%s\s+(\d+)" % kind, summary, re.M)
    return int(m.group(1)) if m else 0
meta = dict(l.rstrip("\n").split("\t", 1) for l in open(work + "/meta"))
period = int(meta["agent.interval_ns"])
# cpu: a ringprof.CPUSample each, and jdk.ExecutionSample events as many as the
# weight is intervals, rounded half up (docs/profiles.md, "Weighted CPU samples");
# times from the chunk header's clock pair (one chunk here).
cpu = [l.rstrip("\n").split("\t") for l in open(work + "/cpu_samples")]
if len(cpu) != samples("cpu"):
    fail("rp_agent_dump has %d cpu samples, ringprof summary %d" % (len(cpu), samples("cpu")))
weight = sum(int(s[2]) for s in cpu)
events = (weight + period // 2) // period
sys.stderr.write("# cpu: %d samples of %d ns, %d jdk.ExecutionSample (%d by max(1, round(w / p)))\n" % (
    len(cpu), weight, events, sum(max(1, (int(s[2]) + period // 2) // period) for s in cpu)))
to_wall = lambda t: int(t) - int(meta["start.mono_ns"]) + int(meta["start.wall_ns"])
print("cpu_times\t%d\t%d" % (to_wall(min(int(s[1]) for s in cpu)), to_wall(max(int(s[1]) for s in cpu))))
print("cpu_split")
count = {"jdk.ExecutionSample": events, "ringprof.CPUSample": samples("cpu"),
         "jdk.ObjectAllocationSample": samples("alloc"), "ringprof.AllocationSample": samples("alloc"),
         "jdk.OldObjectSample": samples("live"), "ringprof.LiveObject": samples("live"),
         "jdk.JavaMonitorEnter": samples("lock"),
         "jdk.GarbageCollection": samples("gc"), "jdk.GCPhasePause": samples("gc")}
# The hot method: the leaf of the most cpu samples; its lines; its heaviest stack.
leaf_w, line_w, stack_w = defaultdict(int), defaultdict(int), defaultdict(int)
for frames, w in collapsed("cpu_lines"):
    if not frames:
        continue
    leaf = bare(frames[-1])
    leaf_w[leaf.split(":")[0]] += w
    if leaf.startswith(hot + ":"):
        line_w[leaf] += w
        stack_w[";".join(frames)] += w
top = max(leaf_w, key=leaf_w.get)
if top != hot:
    fail("the recording's hottest method is %s, not %s" % (top, hot))
print("cpu_top\t%s" % hot)
for leaf, w in sorted(line_w.items()):
    m, line = leaf.rsplit(":", 1)
    print("cpu_line\t%s\t%s\t%d" % (m, "-1" if line == "?" else line, w))
heavy = max(stack_w, key=stack_w.get)
print("cpu_stack\t%d\t%s" % (stack_w[heavy], heavy))
thread_w = defaultdict(int)
for frames, w in collapsed("cpu_threads"):
    thread_w[thread(frames[0])] += w
for name, w in sorted(thread_w.items()):
    print("cpu_thread\t%s\t%d" % (name, w))
# wall: per thread and state; native and io are also jdk.NativeMethodSample
# where they have a Java frame.
state_n, native = defaultdict(int), 0
for frames, n in collapsed("wall_states", markers=True):
    state = frames[-1][len("[state:"):-1]
    state_n[(thread(frames[0]), state)] += n
    if state in ("native", "io") and any(not MARKER.match(f) for f in frames[1:-1]):
        native += n
for (name, state), n in sorted(state_n.items()):
    print("wall\t%s\t%s\t%d" % (name, state, n))
print("wall_types")
count["jdk.NativeMethodSample"] = native
count["ringprof.WallClockSample"] = samples("wall")
if sum(state_n.values()) != samples("wall"):
    fail("the wall states add up to %d samples, summary says %d" % (sum(state_n.values()), samples("wall")))
# alloc: per site (top frame, class) of 1% of the bytes or more.
site_w = defaultdict(int)
for frames, w in collapsed("alloc"):
    site_w[(bare(frames[-2]) if len(frames) > 1 else "-", frames[-1])] += w
total = sum(site_w.values())
if max(site_w, key=site_w.get) != (site, site_class):
    fail("the heaviest allocation site is %s, not %s of %s" % (max(site_w, key=site_w.get), site, site_class))
for (m, cls), w in sorted(site_w.items()):
    if w >= total / 100:
        print("alloc\t%s\t%s\t%d" % (m, cls, w))
# live: the last snapshot, per class.
live_w = defaultdict(int)
for frames, w in collapsed("live"):
    live_w[frames[-1]] += w
if not live_w.get(kept):
    fail("no %s in the last live snapshot: %s" % (kept, dict(live_w)))
print("live_top\t%s" % max(live_w, key=live_w.get))
for cls, w in sorted(live_w.items()):
    print("live\t%s\t%d" % (cls, w))
# lock: per monitor class, and per owner.
locks = json.load(open(work + "/locks.json"))
if not locks["monitors"] or locks["monitors"][0]["class"] != monitor:
    fail("the most waited-for monitor is not %s: %s" % (monitor, [m["class"] for m in locks["monitors"]]))
for m in locks["monitors"]:
    print("lock\t%s\t%d\t%d" % (m["class"], m["waits"], m["wait_ns"]))
    tops = defaultdict(int)
    for st in m["stacks"]:
        tops[st["frames"][0] if st["frames"] else "-"] += st["waits"]
    for top, n in sorted(tops.items()):
        print("lock_top\t%s\t%s\t%d" % (m["class"], top, n))
    for o in m["owners"]:
        owner = thread("[%s]" % o["thread"]) if o["thread"] else "-"
        print("lock_owner\t%s\t%s\t%d\t%d" % (m["class"], owner, o["waits"], o["wait_ns"]))
# gc: the ids and the pauses' total.
m = re.search(r"^  gc\s+(\d+) pauses.*\(ids (\d+)\.\.(\d+)\)", summary, re.M)
if not m or int(m.group(1)) != samples("gc"):
    fail("no gc line in the summary, or one that does not count the gc samples")
print("gc\t%s\t%s\t%d" % (m.group(2), m.group(3), sum(w for _, w in collapsed("gc"))))
# telemetry: one jdk.ResidentSetSize and jdk.ClassLoadingStatistics a reading.
m = re.search(r"^  telemetry\s+(\d+) readings", summary, re.M)
rss = [l.split("\t") for l in open(work + "/proc.rss_bytes")]
if not m or int(m.group(1)) != len(rss):
    fail("summary's telemetry readings (%s) are not the %d proc.rss_bytes readings" % (m and m.group(1), len(rss)))
count["jdk.ResidentSetSize"] = count["jdk.ClassLoadingStatistics"] = len(rss)
count["jdk.JavaThreadStatistics"] = len(open(work + "/threads.java").readlines())
readings = [l.rstrip("\n").split("\t") for l in open(work + "/cputime")]
count["jdk.ThreadCPULoad"] = sum(1 for _ in thread_loads(
    [(int(r[1]), int(r[2]), int(r[3])) for r in readings], int(meta["host.cpus"])))
print("gauge\tproc.rss_bytes\t%d\t%s" % (len(rss), rss[-1][1].strip()))
# jdk.CPULoad: the process's CPU rates between consecutive readings, over the
# host's CPUs.
cpus = int(meta["host.cpus"])
user, sys_ = ([[int(x) for x in l.split("\t")] for l in open("%s/proc.cpu_%s_ns.total" % (work, k))]
              for k in ("user", "sys"))
if [t for t, _ in user] != [t for t, _ in sys_]:
    fail("the user and system CPU gauges are not read together")
for (t0, u0), (t1, u1), (_, s0), (_, s1) in zip(user, user[1:], sys_, sys_[1:]):
    span = (t1 - t0) * cpus
    print("cpuload\t%d\t%.9f\t%.9f" % (to_wall(t1), (u1 - u0) / span, (s1 - s0) / span))
count["jdk.CPULoad"] = len(user) - 1
m = re.search(r"^  chunks\s+(\d+)", summary, re.M)
count["ringprof.Recording"] = int(m.group(1))
count["jdk.JVMInformation"] = len(re.findall(r"^recording ", summary, re.M))
for t, n in sorted(count.items()):
    print("count\t%s\t%d" % (t, n))
PY
        fail "the recording does not have what the test needs (above)"
    note "expected: $(awk -F'\t' '$1 == "count" { printf "%s %s, ", $2, $3 }' "$work/expect")"
}

# summary_counts FILE: "TYPE<TAB>N" for every event type in `jfr summary`'s table.
summary_counts() {
    awk '/^=+$/ { on = 1; next } on && NF >= 3 { print $1 "\t" $2 }' "$1" | sort
}

# views JDK NAME VIEW...: that JDK's `jfr view`s of x.jfr, in one JVM
# (tests/convert/JfrViews.java), into $work/views-NAME, and hot-methods and
# allocation-by-site (the first two) list the hot method and the allocation
# site first. 1, with one line, where the JDK is not installed.
views() {
    local jdk=$1 name=$2 v want first
    shift 2
    if [ ! -x "$jdk/bin/java" ]; then
        echo "# JDK $name not installed ($jdk): its jfr view not checked"
        return 1
    fi
    python3 "$CONVERT/jfr_views.py" run "$jdk" "$RP_JFRVIEWS" "$work/x.jfr" "$work/views-$name" "$@" ||
        fail "JDK $name: JfrViews failed: $(tail -5 "$work/views-$name")"
    for v in hot-methods allocation-by-site; do
        case $v in hot-methods) want=$HOT ;; *) want=$SITE ;; esac
        first=$(awk -v h="### view $v $work/x.jfr" '$0 == h { on = 1; next } on && /^### / { exit }
                on && /^-+ / { getline; print; exit }' "$work/views-$name")
        note "JDK $name jfr view $v, first row: $(echo $first)"
        case "$first" in
        "$want("*) ;;
        *) fail "JDK $name jfr view $v: first row '$first', not $want: $(grep -A12 "^### view $v " "$work/views-$name")" ;;
        esac
    done
}

test_convert() {
    java_run -agentpath:"$RP_AGENT=dir=$work/rec,alloc=128k,live=on,wall=10ms,lock=1ms,telemetry=200ms,ring=256k" \
        -- JfrWorkload 1000 256 || { rc=$?; fail "java exited $rc"; }
    no_hs_err
    has_line '^done' "$work/out" || fail "JfrWorkload did not finish: $(cat "$work/out")"
    rp convert -o "$work/x.jfr" "$work/rec" 2>"$work/convert.err" ||
        fail "ringprof convert -o x.jfr failed: $(cat "$work/convert.err")"
    note "$(tail -1 "$work/convert.err"); $(stat -c %s "$work/x.jfr") bytes"
    expectations

    # JDK 17's jfr: summary and print --json read it all, with the expected counts.
    local jfr17
    jfr17=$(dirname "$(readlink -f "$RP_JAVA")")/jfr
    "$jfr17" summary "$work/x.jfr" >"$work/jfr-summary" 2>&1 ||
        fail "jfr summary failed: $(head -5 "$work/jfr-summary")"
    "$jfr17" print --json "$work/x.jfr" >"$work/x.json" 2>"$work/print.err" ||
        fail "jfr print --json failed: $(head -5 "$work/print.err")"
    summary_counts "$work/jfr-summary" >"$work/summary-counts"
    python3 - "$work" <<'PY' || fail "the jfr tool's counts are wrong (above)"
import json, sys
from collections import Counter
work = sys.argv[1]
doc = json.load(open(work + "/x.json"))
printed = Counter(e["type"] for e in doc["recording"]["events"])
summary = {t: int(n) for t, n in (l.split("\t") for l in open(work + "/summary-counts"))}
expect = {f[1]: int(f[2]) for f in (l.rstrip("\n").split("\t") for l in open(work + "/expect")) if f[0] == "count"}
bad = []
for t, n in sorted(expect.items()):
    if summary.get(t, 0) != n or printed.get(t, 0) != n:
        bad.append("%s: jfr summary %d, jfr print --json %d, expected %d" % (t, summary.get(t, 0), printed.get(t, 0), n))
for t in sorted(set(summary) | set(printed)):
    if t not in ("jdk.Metadata", "jdk.CheckPoint") and summary.get(t, 0) != printed.get(t, 0):
        bad.append("%s: jfr summary %d, jfr print --json %d" % (t, summary.get(t, 0), printed.get(t, 0)))
print("# jfr print --json: %d events of %d types" % (sum(printed.values()), len(printed)))
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY

    # The JDK's parser, checked against ringprof's own figures.
    "$RP_JAVA" -cp "$RP_JAR" JfrCheck "$work/x.jfr" "$work/expect" >"$work/check" 2>&1 ||
        { grep -v '^ok' "$work/check" | head -30; fail "JfrCheck found the file wrong"; }
    note "$(tail -1 "$work/check") ($(grep -c '^ok' "$work/check") checks)"

    # JDK Mission Control's parser (tests/fetch-maven's jars): the same events, type
    # by type, as the JDK's jfr counted.
    local jmc=${RP_JMC:-/var/cache/ringprof/jmc}
    if ls "$jmc"/flightrecorder-*.jar >/dev/null 2>&1; then
        "$RP_JAVA" -cp "$(ls "$jmc"/*.jar | tr '\n' ':')" \
            "$(dirname "$0")/../convert/JmcDump.java" "$work/x.jfr" >"$work/jmc" 2>"$work/jmc.err" ||
            fail "JMC's parser could not load the file: $(tail -5 "$work/jmc.err")"
        python3 - "$work" <<'PY' || fail "JMC's parser sees other events than the JDK's jfr (above)"
import json, sys
from collections import Counter
work = sys.argv[1]
lines = [json.loads(l) for l in open(work + "/jmc") if l.strip()]
jmc = Counter(e["type"] for e in lines if "type" in e and "file" not in e)
summary = {t: int(n) for t, n in (l.split("\t") for l in open(work + "/summary-counts"))}
summary = {t: n for t, n in summary.items() if n and t not in ("jdk.Metadata", "jdk.CheckPoint")}
bad = ["%s: JMC %d, jfr summary %d" % (t, jmc.get(t, 0), summary.get(t, 0))
       for t in sorted(set(jmc) | set(summary)) if jmc.get(t, 0) != summary.get(t, 0)]
print("# JMC's parser: %d events of %d types, as jfr summary counts them" % (sum(jmc.values()), len(jmc)))
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY
    else
        echo "SKIP (part): JMC's parser not in $jmc (tests/fetch-maven fetches it)"
    fi

    # JDK 25's views of what ringprof records besides samples, against its own
    # figures (tests/convert/jfr_views.py).
    if views "${RP_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}" 25 hot-methods allocation-by-site \
        recording gc gc-pause-phases gc-configuration heap-configuration thread-count \
        thread-cpu-load native-methods; then
        python3 "$CONVERT/jfr_views.py" check "$work" "$work/x.jfr" >"$work/views-check" 2>&1 ||
            { cat "$work/views-check"; fail "JDK 25's jfr views print other figures than ringprof's (above)"; }
        note "$(tail -1 "$work/views-check")"
    fi
    views "${RP_JDK21:-/var/cache/ringprof/jdk21}" 21 hot-methods allocation-by-site || true

    # Pyroscope's parser and async-profiler's converter (tests/convert/jfr_readers.py,
    # each skipped with one line where RP_CACHE lacks it): every event at the JDK's
    # widths, and their CPU, allocation and lock profiles stack by stack against
    # ringprof's collapsed stacks of the recording.
    local period
    period=$(awk -F'\t' '$1 == "agent.interval_ns" { print $2 }' "$work/meta")
    python3 "$(dirname "$0")/../convert/jfr_readers.py" "$RP_RINGPROF" "$RP_JAVA" "$RP_APCONVERT" \
        "${RP_CACHE:-/var/cache/ringprof}" "$period" "$work/rec" "$work/x.jfr" >"$work/readers" 2>&1 ||
        { grep -v '^ok' "$work/readers" | head -30; fail "a JFR reader found the file wrong"; }
    note "$(grep -v '^FAIL' "$work/readers" | tail -3 | tr '\n' ' ')"
}

case "$test_name" in
convert) "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
san_check
echo "ok ($test_name)"
