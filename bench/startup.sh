#!/usr/bin/env bash
# bench/startup.sh — what loading the agent adds to a JVM's start and exit. Prints
# figures; asserts nothing.
#
#   bench/startup.sh [--quick] [BUILD_DIR [ROUNDS]]
#
# Runs `java -version` (the shortest complete JVM life: start, VMInit, VMDeath,
# exit) in four configurations, interleaved (none, ringprof, ringprof-noalloc,
# jfr, none, ...) for ROUNDS rounds (default 15; --quick 5):
#   none             no agent
#   ringprof         -agentpath at the defaults: the agent loads, checks its
#                    options and directory, starts the flusher and the control
#                    socket, samples, and at VMDeath drains, writes and closes
#                    the chunk (its whole life)
#   ringprof-noalloc the same with alloc=off (what allocation sampling's set-up
#                    costs: capabilities, callbacks)
#   jfr              -XX:StartFlightRecording (settings=default), for scale
# Wall time per run is measured around the process (date +%s%N); CPU time (user +
# system, all the JVM's threads) from bash's `times` for finished children, read
# before and after each run. Reports the median wall and CPU per configuration and
# the difference to "none": the agent's start-up (and shut-down) cost.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = --quick ] && { quick=1; shift; }
build=${1:-build}
rounds=${2:-$([ $quick -eq 1 ] && echo 5 || echo 15)}
agent=$build/src/libringprof.so
[ -e "$agent" ] || { echo "startup: $agent missing; build first: ninja -C $build" >&2; exit 1; }
java=${JAVA:-java}
work=$(mktemp -d "${TMPDIR:-/tmp}/rp-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT

configs=(none ringprof ringprof-noalloc jfr)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Children's CPU time so far, in ms, from bash's `times` (second line: "XmY.YYYs
# ZmW.WWWs"). `times` must run in this shell, not in a $(...) subshell, whose
# children are not the JVMs: so it writes to a file first.
child_cpu_ms() {
    times >"$work/times"
    tail -1 "$work/times" | awk '{
        split($1, u, /[ms]/); split($2, s, /[ms]/)
        printf "%.0f\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }'
}

echo "startup: java -version, $rounds rounds, $(nproc) CPUs, $("$java" -version 2>&1 | head -1)"
for r in $(seq "$rounds"); do
    for c in "${configs[@]}"; do
        opt=()
        case "$c" in
        none) ;;
        ringprof) opt=(-agentpath:"$agent=dir=$work/rec-$r") ;;
        ringprof-noalloc) opt=(-agentpath:"$agent=dir=$work/recn-$r,alloc=off") ;;
        jfr) opt=(-XX:StartFlightRecording=filename=$work/$r.jfr) ;;
        esac
        child_cpu_ms >"$work/c0"
        t0=$(date +%s%N)
        "$java" "${opt[@]}" -version >/dev/null 2>&1
        t1=$(date +%s%N)
        child_cpu_ms >"$work/c1"
        c0=$(cat "$work/c0") c1=$(cat "$work/c1")
        echo $(( (t1 - t0) / 1000000 )) >>"$work/wall-$c"
        echo $(( c1 - c0 )) >>"$work/cpu-$c"
    done
done

base_wall=$(median <"$work/wall-none")
base_cpu=$(median <"$work/cpu-none")
printf "\n%-17s %9s %9s %9s %9s\n" config "wall ms" "+wall ms" "cpu ms" "+cpu ms"
for c in "${configs[@]}"; do
    w=$(median <"$work/wall-$c")
    p=$(median <"$work/cpu-$c")
    printf "%-17s %9.0f %+9.0f %9.0f %+9.0f\n" "$c" "$w" "$(awk -v a="$w" -v b="$base_wall" 'BEGIN { print a - b }')" \
        "$p" "$(awk -v a="$p" -v b="$base_cpu" 'BEGIN { print a - b }')"
done
