#!/usr/bin/env bash
# bench/threaddump.sh — what a thread dump costs (`ringprof ctl PID threads`,
# src/control/threaddump.c, docs/control.md "Thread dump and deadlocks"): its wall time
# and reply size with many threads, and what the JVM did meanwhile. It prints
# figures and asserts nothing about speed.
#
#   bench/threaddump.sh [-k K] [-n N,N,...] [BUILD_DIR]
#
# For each N (default 200,2000,8000,10000) one JVM with ringprof at its defaults runs
# WallIdle (tests/java) with N idle threads, half parked and half sleeping, none
# waking (ACTIVE 0); once they have started, `ringprof ctl PID threads --json` is
# asked once (the first dump of a JVM also asks for capabilities and resolves
# every method and class for the first time), then K more times (default 9), one
# after the other. Per N it prints:
#   threads      Java threads in the reply (N, main and the JVM's own)
#   first ms     the first dump's wall time, as the client sees it (connect,
#                request, the dump on the agent's flusher thread, reply)
#   median/min/max ms  the K dumps after it; `ctl PID version`, the same round
#                trip without a dump, is the "round trip ms" beside (median of K)
#   reply bytes  the --json reply's size (median), and per thread
#   handshakes   in one more dump, taken with the handshake log switched on
#                (jcmd VM.log; off for the timed dumps, whose time it would add
#                to): HotSpot handshakes (each a stop of one thread, not of the
#                JVM), how many the target thread had to execute itself (it was
#                running Java code; otherwise the dumping thread does it while
#                the target stays blocked), and their total time
#   safepoints   global safepoints (-Xlog:safepoint) during the K+1 timed dumps,
#                and their total time: what stopped every thread
# About 20 s on 2 vCPUs with the default Ns (8000 and 10000 threads take most of it).
# A dump that fails ends that N's dumps: its row gives the reason. The JVM logs
# and replies stay in a directory under /tmp (named) if the script fails.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
K=9 ns=200,2000,8000,10000
while getopts k:n:h o; do
    case $o in
    k) K=$OPTARG ;;
    n) ns=$OPTARG ;;
    *) sed -n '2,31p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
build=$(cd "${1:-$here/build}" && pwd)
agent=$build/src/libringprof.so jar=$build/tests/agent/agent_programs.jar
rp=$build/tools/ringprof java=${JAVA:-java}
for f in "$agent" "$jar" "$rp"; do
    [ -e "$f" ] || { echo "threaddump: $f missing; build first: ninja -C $build" >&2; exit 1; }
done
work=$(mktemp -d /tmp/rp-threaddump.XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    if [ "${keep:-0}" = 1 ]; then echo "threaddump: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
keep=1

ms_since() { echo "$1 $EPOCHREALTIME" | awk '{printf "%.3f\n", ($2 - $1) * 1000}'; }

echo "threaddump: $(nproc) CPUs, $("$java" -version 2>&1 | sed -n 2p), load $(cut -d' ' -f1-3 /proc/loadavg); K=$K"
for n in ${ns//,/ }; do
    d=$work/n$n
    mkdir -p "$d"
    t_start=$EPOCHREALTIME
    "$java" -Xlog:safepoint=info:file="$d/jvm.log"::filecount=0 \
        -agentpath:"$agent=dir=$d/rec" -cp "$jar" WallIdle "$n" 3600 0 \
        >"$d/out" 2>"$d/err" &
    pid=$!
    for ((i = 0; i < 1200; i++)); do
        grep -q "^started $n" "$d/out" 2>/dev/null && "$rp" ctl "$pid" version >/dev/null 2>&1 && break
        kill -0 "$pid" 2>/dev/null || { echo "threaddump: the JVM ended: $(tail -3 "$d/err")" >&2; exit 1; }
        sleep 0.1
    done
    grep -q "^started $n" "$d/out" || { echo "threaddump: WallIdle $n did not start in 120 s" >&2; exit 1; }
    echo "  N=$n: started in $(ms_since "$t_start") ms"
    sleep 1
    l0=$(wc -l <"$d/jvm.log")
    : >"$d/times"
    for ((i = 0; i <= K; i++)); do
        t=$EPOCHREALTIME
        if ! "$rp" ctl --timeout 120 "$pid" threads --json >"$d/reply$i" 2>"$d/stderr"; then
            cat "$d/stderr" "$d/reply$i" >"$d/failed"
            echo "  N=$n: dump $i failed: $(head -c 300 "$d/failed")"
            break
        fi
        echo "dump $(ms_since "$t") $(wc -c <"$d/reply$i")" >>"$d/times"
    done
    l1=$(wc -l <"$d/jvm.log")
    # One more dump with the handshake log on (off for the timed ones: a line
    # per handshake, thousands a dump, would be part of what they measure).
    if [ ! -e "$d/failed" ]; then
        jcmd "$pid" VM.log output="file=$d/handshake.log" what=handshake=info \
            output_options=filecount=0 >/dev/null
        "$rp" ctl --timeout 120 "$pid" threads --json >/dev/null
        jcmd "$pid" VM.log disable >/dev/null
    fi
    for ((i = 0; i < K; i++)); do
        t=$EPOCHREALTIME
        "$rp" ctl "$pid" version >/dev/null
        echo "version $(ms_since "$t")" >>"$d/times"
    done
    sed -n "$((l0 + 1)),${l1}p" "$d/jvm.log" >"$d/during.log"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    rm -rf "$d/rec"
    for ((i = 1; i < K; i++)); do rm -f "$d/reply$i"; done
done
python3 - "$work" "$K" ${ns//,/ } <<'PY'
import json, os, re, statistics, sys
work, K, ns = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print()
print("| N idle | threads | first ms | median ms | min ms | max ms | round trip ms "
      "| reply bytes | bytes/thread | handshakes | by target | handshake ms "
      "| safepoints (ms) |")
print("|---|" + "---|" * 12)
for n in ns:
    d = os.path.join(work, "n" + n)
    if os.path.exists(os.path.join(d, "failed")):
        text = open(os.path.join(d, "failed")).read()
        m = re.search(r'"error":"([^"]*)"', text)
        why = m[1] if m else text.strip().splitlines()[0]
        print(f"| {n} | failed: {why} |" + " |" * 11)
        continue
    dumps, rtt = [], []
    for line in open(os.path.join(d, "times")):
        w = line.split()
        (dumps if w[0] == "dump" else rtt).append([float(x) for x in w[1:]])
    first, rest = dumps[0], dumps[1:]
    ms = [x[0] for x in rest]
    size = statistics.median(x[1] for x in rest)
    r = json.load(open(os.path.join(d, "reply0")))
    nth = len(r["threads"])
    hs = by_target = 0
    hs_ns = sp = sp_ns = 0
    for line in open(os.path.join(d, "handshake.log")).readlines() + \
            open(os.path.join(d, "during.log")).readlines():
        m = re.search(r'Handshake "[^"]*", Targeted threads: (\d+), Executed by requesting '
                      r'thread: (\d+), Total completion time: (\d+) ns', line)
        if m:
            hs += int(m[1])
            by_target += int(m[1]) - int(m[2])
            hs_ns += int(m[3])
        m = re.search(r'Safepoint "[^"]*".*Total: (\d+) ns', line)
        if m:
            sp += 1
            sp_ns += int(m[1])
    print(f"| {n} | {nth} | {first[0]:.1f} | {statistics.median(ms):.1f} | {min(ms):.1f} "
          f"| {max(ms):.1f} | {statistics.median(x[0] for x in rtt):.1f} | {size:.0f} "
          f"| {size / nth:.0f} | {hs} | {by_target} | {hs_ns / 1e6:.1f} | {sp} ({sp_ns / 1e6:.2f}) |")
PY
keep=0
