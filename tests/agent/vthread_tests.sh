#!/usr/bin/env bash
# tests/agent/vthread_tests.sh — virtual threads (JDK 21 and later) in real JVMs:
# samples that name the virtual thread they ran on, and the thread dump's
# virtual threads and their deadlocks. One test per invocation:
#
#   vthread_tests.sh TEST        TEST: cpu or dump
#
# RP_JDK picks the JDK: 21 (RP_JDK21, default /var/cache/ringprof/jdk21:
# tests/fetch-jdk21) or 25 (RP_JDK25, default /usr/lib/jvm/temurin-25-jdk-amd64);
# a JDK that is not installed skips the test with one line (exit 77). JDK 17 has
# no virtual threads: agent_lock_threads checks that its dumps say nothing of
# them. The program is tests/java/VThreads.java; its truths are its own: the
# carriers' CPU clocks around each virtual thread's rounds, the bytes it
# allocated, the ids Thread.threadId gives, the threads it made stuck.
set -uo pipefail

test_name=${1:?usage: vthread_tests.sh TEST}
. "$(dirname "$0")/../lib.sh"
rp_begin "vthreads-$test_name-${RP_JDK:-}" "$test_name"

case "${RP_JDK:-}" in
25) jdk=${RP_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64} ;;
21) jdk=${RP_JDK21:-/var/cache/ringprof/jdk21} ;;
*) echo "RP_JDK must be 21 or 25 (virtual threads)"; exit 2 ;;
esac
[ -x "$jdk/bin/java" ] || { echo "JDK ${RP_JDK} not installed ($jdk): skipped"; exit 77; }
RP_JAVA=$jdk/bin/java

# ---------------------------------------------------------------------- cpu --

# Three virtual threads share the carriers 6:3:1 by CPU (tests/java/VThreads.java
# measures each one's rounds on its carrier's CPU clock, 1.5 s in all). At
# interval=1ms and alloc=32k: the CPU weight under VThreads$Worker.round of each
# virtual thread (its samples labelled with its name and id) is its share of
# the truth within 3 points and its own truth within -40%/+25% (vt-one has about
# 150 samples: 8% of noise); at least 95% of that weight is labelled with a
# virtual thread at all, always on a ForkJoinPool carrier; the allocation
# samples under round are labelled too, and each virtual thread's bytes are its
# share of the program's within 5 points; with lock=1ms, six virtual threads
# that take turns on a monitor (unmounted while they wait, on JDK 24+) waited,
# by their lock samples, within 20% of what they measured themselves, every
# lock sample labelled with one of them. JDK 21 has no owner ids in its
# threads: the test runs it with vthreads=mount (docs/agent.md), and then once
# more, shorter, with engine=jvmti: at least 95% of round's CPU under its
# virtual thread's name (the stack the virtual thread's).
test_cpu() {
    local opts="dir=$work/rec,interval=1ms,alloc=32k,lock=1ms"
    [ "$RP_JDK" = 21 ] && opts+=",vthreads=mount"
    java_run -agentpath:"$RP_AGENT=$opts" -- VThreads cpu 1.5 || { rc=$?; show_err; fail "java exited $rc"; }
    no_hs_err
    has_line '^VThreads done' "$work/out" || fail "the program did not finish: $(cat "$work/out")"
    if grep -q 'ringprof:' "$work/err"; then show_err; fail "the agent printed a message"; fi
    rp convert --format collapsed --per-thread -o "$work/cpu.txt" "$work/rec" 2>"$work/conv.err" ||
        fail "convert: $(cat "$work/conv.err")"
    rp convert --event alloc --format collapsed --per-thread -o "$work/alloc.txt" "$work/rec" \
        2>"$work/conv.err" || fail "convert alloc: $(cat "$work/conv.err")"
    rp convert --event lock --format collapsed --per-thread -o "$work/lock.txt" "$work/rec" \
        2>"$work/conv.err" || fail "convert lock: $(cat "$work/conv.err")"
    python3 - "$work" <<'PY' || fail "the virtual threads' samples are wrong (above)"
import collections, re, sys
work = sys.argv[1]
out = {l.split()[0]: dict(kv.split("=") for kv in l.split()[1:])
       for l in open(work + "/out") if "=" in l}
ids = {k: int(v) for k, v in out["id"].items()}
truth = {k: int(v) for k, v in out["truth"].items()}
nbytes = {k: int(v) for k, v in out["bytes"].items()}
bad = []
LABEL = re.compile(r"^\[(.*) \(virtual #(\d+)\) on (.*)\]$")
def read(path):
    """{virtual thread name: weight under round}, the labels, round's weight
    without a virtual thread."""
    by, labels, unlabelled = collections.Counter(), set(), 0
    for line in open(path):
        stack, _, v = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if not any(f.startswith("VThreads$Worker.round") for f in frames):
            continue
        m = LABEL.match(frames[0])
        if not m:
            unlabelled += int(v)
            continue
        labels.add((m.group(1), int(m.group(2)), m.group(3)))
        by[m.group(1)] += int(v)
    return by, labels, unlabelled
cpu, labels, unl = read(work + "/cpu.txt")
total, ttotal = sum(cpu.values()), sum(truth.values())
for name, t in sorted(truth.items()):
    share, tshare = cpu[name] / max(total, 1), t / ttotal
    print("# %-8s CPU in round: %4.0f ms, truth %4.0f ms (%.3f); share %.3f, truth %.3f"
          % (name, cpu[name] / 1e6, t / 1e6, cpu[name] / t, share, tshare))
    if abs(share - tshare) > 0.03:
        bad.append("%s's share %.3f is not within 3 points of %.3f" % (name, share, tshare))
    if not 0.6 <= cpu[name] / t <= 1.25:
        bad.append("%s: %d ns of samples in round against %d ns measured" % (name, cpu[name], t))
print("# round's CPU without a virtual thread: %.0f ms of %.0f" % (unl / 1e6, (unl + total) / 1e6))
if unl > 0.05 * (unl + total):
    bad.append("%d of %d ns in round name no virtual thread" % (unl, unl + total))
for name, vid, carrier in sorted(labels):
    if ids.get(name) != vid:
        bad.append("label %s #%d: the program says #%s" % (name, vid, ids.get(name)))
    if not carrier.startswith("ForkJoinPool-"):
        bad.append("%s on %s, not on a ForkJoinPool carrier" % (name, carrier))
alloc, alabels, aunl = read(work + "/alloc.txt")
atotal, btotal = sum(alloc.values()), sum(nbytes.values())
for name, b in sorted(nbytes.items()):
    print("# %-8s bytes in round: %.2f MB, program %.2f MB" % (name, alloc[name] / 1e6, b / 1e6))
    if abs(alloc[name] / max(atotal, 1) - b / btotal) > 0.05:
        bad.append("%s's allocation share %.3f, the program's %.3f" % (name, alloc[name] / max(atotal, 1), b / btotal))
if aunl > 0.05 * (aunl + atotal) or not atotal:
    bad.append("%d of %d allocated bytes in round name no virtual thread" % (aunl, aunl + atotal))
lock = collections.Counter()
for line in open(work + "/lock.txt"):
    stack, _, v = line.rstrip("\n").rpartition(" ")
    m = LABEL.match(stack.split(";")[0])
    lock[m.group(1) if m else None] += int(v)
ltruth = int(out["lockwait"]["ns"])
lw = sum(v for k, v in lock.items() if k and k.startswith("vt-lock-"))
print("# lock waits of vt-lock-*: %.0f ms, the program's %.0f ms in %s waits; unlabelled %.0f ms"
      % (lw / 1e6, ltruth / 1e6, out["lockwait"]["waits"], lock[None] / 1e6))
if not 0.8 <= lw / max(ltruth, 1) <= 1.2:
    bad.append("the vt-lock threads waited %d ns by their samples, %d by their own measure" % (lw, ltruth))
if lw < 0.95 * sum(lock.values()):
    bad.append("lock samples of other threads: %s" % dict(lock))
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY
    [ "$RP_JDK" = 21 ] || return 0
    # The jvmti engine (on JDK 21 only, to keep the test short): its samples of a
    # carrier take the stack of the virtual thread mounted there, and name it.
    java_run -agentpath:"$RP_AGENT=dir=$work/recj,engine=jvmti,interval=1ms" -- VThreads cpu 0.4 ||
        { rc=$?; show_err; fail "java (engine=jvmti) exited $rc"; }
    rp convert --format collapsed --per-thread -o "$work/cpuj.txt" "$work/recj" 2>"$work/conv.err" ||
        fail "convert: $(cat "$work/conv.err")"
    local named all
    read -r named all <<<"$(awk '{ w = $NF } /VThreads\$Worker\.round/ { all += w; if ($0 ~ /^\[vt-(six|three|one) \(virtual #/) named += w }
        END { printf "%.0f %.0f\n", named, all }' "$work/cpuj.txt")"
    note "engine=jvmti: $((named / 1000000)) of $((all / 1000000)) ms in round under its virtual thread"
    [ "$all" -gt 0 ] && within "$(ratio "$named" "$all")" 0.95 1 ||
        fail "engine=jvmti: only $named of $all ns in round name their virtual thread"
}

# --------------------------------------------------------------------- dump --

# 3000 virtual threads parked on one ReentrantLock held by a platform thread, a
# deadlock of two virtual threads on monitors and one of a virtual and a
# platform thread on ReentrantLocks. ctl threads (JSON and text): the virtual
# threads counted and all read (3003); the parked ones one group of exactly
# 3000 whose ids are the program's parked-0..2999, WAITING (parked) on a
# ReentrantLock owned by "holder", stack through VThreads.parkedBody; exactly
# the two cycles, with the program's ids, each thread waiting for the lock the
# next one holds; JDK 21's pinned monitor waiters name their carriers.
test_dump() {
    local parked=3000
    java_start -agentpath:"$RP_AGENT=dir=$work/rec" -- VThreads dump $parked "$work/stop"
    wait_ready
    local t0=$EPOCHREALTIME
    ctl threads >"$work/threads.json" || fail "ctl threads: $(head -c 300 "$work/threads.json")"
    note "dump of $parked parked virtual threads: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s"
    rp ctl "$pid" threads >"$work/threads.txt" || fail "ctl threads (text) failed"
    python3 - "$work" "$parked" "$RP_JDK" <<'PY' || fail "the thread dump is wrong (above)"
import json, re, sys
work, parked, jdk = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = open(work + "/out").read()
ids = {k: int(v) for k, v in (kv.split("=") for kv in out.split("\n")[0].split()[1:])}
r = json.load(open(work + "/threads.json"))
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)
v = r.get("virtual_threads")
check(v and v["total"] == parked + 3 and v["listed"] == parked + 3,
      "virtual threads: %s" % ({k: v[k] for k in v if k != "groups"} if v else None))
groups = v["groups"] if v else []
big = [g for g in groups if g["count"] == parked]
check(len(big) == 1, "a group of %d: counts %s" % (parked, [g["count"] for g in groups][:10]))
if big:
    g = big[0]
    names = sorted(t["name"] for t in g["threads"])
    check(names == sorted("parked-%d" % i for i in range(parked)), "the group's threads")
    check(len(g["threads"]) == parked and len({t["id"] for t in g["threads"]}) == parked,
          "%d distinct ids" % parked)
    check(g["state"] == "WAITING" and "parked" in g["state_details"], "state %s %s" % (g["state"], g["state_details"]))
    p = g.get("parked_on", {})
    check(p.get("class") == "java.util.concurrent.locks.ReentrantLock$NonfairSync" and p.get("owner") == "holder",
          "parked on %s" % p)
    check(any(f["class"] == "VThreads" and f["method"] == "parkedBody" for f in g["frames"]), "frames: %s" % g["frames"][:3])
    check(not g["deadlocked"], "the parked ones are not deadlocked")
check(sum(g["count"] for g in groups) == parked + 3, "groups add up to %s" % sum(g["count"] for g in groups))
cyc = r["deadlocks"]
names = sorted(sorted(e["thread"] for e in c) for c in cyc)
check(names == [["pt-jucl", "vt-jucl"], ["vt-mon-a", "vt-mon-b"]], "cycles %s" % names)
for c in cyc:
    for i, e in enumerate(c):
        nxt = c[(i + 1) % len(c)]
        check(e["id"] == ids[e["thread"]], "%s's id %s, the program's %s" % (e["thread"], e["id"], ids[e["thread"]]))
        check(e.get("virtual", False) == e["thread"].startswith("vt-"), "%s virtual: %s" % (e["thread"], e.get("virtual")))
        w = e["waits_for"]
        check(w["owner"] == nxt["thread"] and w["owner_id"] == ids[nxt["thread"]],
              "%s waits for a lock of %s, not of %s" % (e["thread"], w["owner"], nxt["thread"]))
        want = {"vt-mon-a": "VThreads$MonitorB", "vt-mon-b": "VThreads$MonitorA"}.get(
            e["thread"], "java.util.concurrent.locks.ReentrantLock$NonfairSync")
        check(w["class"] == want, "%s waits for %s" % (e["thread"], w["class"]))
one = {g["threads"][0]["name"]: g for g in groups if g["count"] == 1}
for me, mine in (("vt-mon-a", "VThreads$MonitorA"), ("vt-mon-b", "VThreads$MonitorB")):
    g = one.get(me, {})
    check(g.get("state") == "BLOCKED" and g.get("deadlocked") and
          [h["lock"]["class"] for h in g.get("held", [])] == [mine], "%s: %s holding %s" % (me, g.get("state"), g.get("held")))
    carrier = g.get("threads", [{}])[0].get("carrier")
    if jdk == "21":      # pinned: blocked on a monitor, a virtual thread keeps its carrier
        check(carrier and carrier.startswith("ForkJoinPool-"), "%s's carrier on JDK 21: %s" % (me, carrier))
plat = {t["name"]: t for t in r["threads"]}
check("pt-jucl" in plat and plat["pt-jucl"]["deadlocked"] and not any(n.startswith("vt-") or n.startswith("parked-") for n in plat),
      "platform threads: %s" % sorted(plat)[:20])
txt = open(work + "/threads.txt").read()
check(re.search(r"^Virtual threads: %d;" % (parked + 3), txt, re.M), "text: the count line")
check(re.search(r"^%d virtual threads WAITING \(parked\)$" % parked, txt, re.M), "text: the group's line")
check(len(re.findall(r"^Deadlock: ", txt, re.M)) == 2 and
      ('"vt-mon-a" (virtual) waits for' in txt or '"vt-mon-b" (virtual) waits for' in txt),
      "text: the deadlock lines")
check("Deadlock:" in txt and "Virtual threads:" in txt and
      txt.index("Deadlock:") < txt.index("Virtual threads:"), "text: the deadlocks first")
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY
    touch "$work/stop"
    wait $pid || { rc=$?; pid=; show_err; fail "java exited $rc"; }
    pid=
    no_hs_err
    if grep -q 'ringprof:' "$work/err"; then show_err; fail "the agent printed a message"; fi
}

case "$test_name" in
cpu|dump) "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
san_check
echo "ok ($test_name, JDK $RP_JDK)"
