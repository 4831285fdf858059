#!/usr/bin/env bash
# bench/wall_idle.sh — what the agent costs a JVM of many idle threads with
# wall-clock sampling on (docs/engines.md, "Cost"): tests/java/WallIdle (THREADS
# threads, half parked, half sleeping) for SECONDS under each BUILD's agent at
# wall=10ms, the builds interleaved in each round (A B A B ...). It prints, per
# build, the agent's own CPU (its gauge agent.cpu_ns.total: every agent thread,
# the flusher's work for all the threads included) as ms over the run and as a
# share of one core: the median over the rounds and every round's figure, and
# each build's median against the first's. It asserts nothing (wall_idle_2000 in
# tests/agent is the guard). WallIdle and the chunk reader come from the last
# BUILD, so an older build needs only its agent (ninja -C OLD src/libringprof.so).
#
#   bench/wall_idle.sh [-r ROUNDS] [-n THREADS] [-s SECONDS] BUILD...
#
# Default: 5 rounds of 2000 threads for 10 s; about 15 s a run.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=5 threads=2000 seconds=10
while getopts r:n:s:h o; do
    case $o in
    r) rounds=$OPTARG ;;
    n) threads=$OPTARG ;;
    s) seconds=$OPTARG ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,15p' "$0"; exit 2; }
builds=("$@")
last=${builds[$((${#builds[@]} - 1))]}   # the program and the reader: the last BUILD's
jar=$last/tests/agent/agent_programs.jar
dump=$last/tests/agent/rp_agent_dump
for b in "${builds[@]}"; do
    [ -f "$b/src/libringprof.so" ] || { echo "no agent at $b/src/libringprof.so"; exit 2; }
done
[ -f "$jar" ] && [ -x "$dump" ] || { echo "no $jar or $dump: ninja -C $last"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "wall_idle: WallIdle $threads $seconds at wall=10ms, $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A runs=()
for ((i = 1; i <= rounds; i++)); do
    for b in "${builds[@]}"; do
        rm -rf "$tmp/rec"
        java -Xss256k -agentpath:"$(realpath "$b")/src/libringprof.so=dir=$tmp/rec,wall=10ms" \
            -cp "$jar" WallIdle "$threads" "$seconds" >/dev/null 2>"$tmp/err" ||
            { echo "$b: java exited $?: $(tail -3 "$tmp/err")"; exit 1; }
        ms=$("$dump" gauges "$tmp/rec" |
             awk -F'\t' '$1 == "agent.cpu_ns.total" && $2 > m { m = $2 } END { printf "%.0f", m / 1e6 }')
        runs[$b]+=" $ms"
    done
done
first=
for b in "${builds[@]}"; do
    med=$(tr ' ' '\n' <<<"${runs[$b]}" | grep . | sort -n | awk '{ v[NR] = $1 }
          END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    first=${first:-$med}
    printf '%-28s median %6.0f ms = %5.2f%% of a core, %.2fx the first  (ms:%s )\n' "$b" "$med" \
        "$(awk -v m="$med" -v s="$seconds" 'BEGIN { print m / s / 10 }')" \
        "$(awk -v m="$med" -v f="$first" 'BEGIN { print (f > 0 ? m / f : 0) }')" "${runs[$b]}"
done
