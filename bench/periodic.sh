#!/usr/bin/env bash
# bench/periodic.sh — how the CPU timers split periodic work. Prints figures; it
# asserts nothing (tests/agent's agent_fixed_split is the test).
#
#   bench/periodic.sh [BUILD_DIR [RUNS [CASES]]]
#   AP=/path/to/libasyncProfiler.so bench/periodic.sh ...    adds async-profiler
#
# Runs tests/java/FixedSplit (one thread, 55/30/15 between large(), medium() and
# small(), the same order every round; it measures its own CPU per method) for
# 10 s of its CPU per run, about 1,000 samples at interval=10ms, under the async
# engine with timer=perf and with timer=posix, and, with AP set, async-profiler's
# ctimer (event=ctimer: POSIX CPU timers too). CASES (default
# "count:2000 count:10000 cpu:40000 wall:40000") are MODE:ROUND_US:
# count is the plain loop (fixed work per method, a round of about ROUND_US),
# wall and cpu keep the round by a clock (FixedSplit.java says how). Runs are
# interleaved (perf, posix, ap, perf, ...) so drift in the machine hits all
# alike. Per case and timer it prints: the mean signed error of each method's
# share against its measured CPU share (points), the mean and the largest of
# each run's largest error, and how many runs were more than 3 points off.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-5}
cases=${3:-count:2000 count:10000 cpu:40000 wall:40000}
agent=$build/src/libringprof.so
jar=$build/tests/agent/agent_programs.jar
dump=$build/tests/agent/rp_agent_dump
for f in "$agent" "$jar" "$dump"; do
    [ -e "$f" ] || { echo "periodic: $f missing; build first: ninja -C $build" >&2; exit 1; }
done
java=${JAVA:-java}
work=$(mktemp -d "${TMPDIR:-/tmp}/rp-periodic.XXXXXX")
trap 'rm -rf "$work"' EXIT
timers=(perf posix)
[ -n "${AP:-}" ] && timers+=(ap)

# errors TRUTH_FILE "W_LARGE W_MEDIUM W_SMALL": the three signed errors, points.
errors() {
    local t
    t=$(sed -n 's/^truth large=\([0-9]*\) medium=\([0-9]*\) small=\([0-9]*\)$/\1 \2 \3/p' "$1")
    awk -v t="$t" -v w="$2" 'BEGIN { split(t, T, " "); split(w, W, " ")
        ts = T[1] + T[2] + T[3]; ws = W[1] + W[2] + W[3]
        for (i = 1; i <= 3; i++) printf "%.2f ", ws ? 100 * (W[i] / ws - T[i] / ts) : 99
        print "" }'
}

echo "periodic: $runs runs per case and timer, $(nproc) CPUs, $("$java" -version 2>&1 | head -1)"
for c in $cases; do
    mode=${c%%:*}
    round=${c#*:}
    for r in $(seq "$runs"); do
        for t in "${timers[@]}"; do
            rm -rf "$work/rec" "$work/ap.txt"
            if [ "$t" = ap ]; then
                "$java" -agentpath:"$AP=start,event=ctimer,interval=10ms,threads,total,collapsed,file=$work/ap.txt" \
                    -cp "$jar" FixedSplit 10 "$round" "$mode" >"$work/out" 2>/dev/null
                w=$(awk '/^\[splitter/ { n = $NF
                        if (index($0, "FixedSplit.large")) a += n
                        else if (index($0, "FixedSplit.medium")) b += n
                        else if (index($0, "FixedSplit.small")) c += n }
                    END { printf "%.0f %.0f %.0f\n", a, b, c }' "$work/ap.txt")
            else
                "$java" -agentpath:"$agent=dir=$work/rec,interval=10ms,alloc=off,timer=$t" \
                    -cp "$jar" FixedSplit 10 "$round" "$mode" >"$work/out" 2>/dev/null
                w=$("$dump" total "$work/rec" | awk -F'\t' '
                        $3 == "FixedSplit.large" { a = $1 } $3 == "FixedSplit.medium" { b = $1 }
                        $3 == "FixedSplit.small" { c = $1 }
                    END { printf "%.0f %.0f %.0f\n", a, b, c }')
            fi
            e=$(errors "$work/out" "$w")
            echo "$e" >>"$work/err-$mode-$round-$t"
            printf "  %-5s %6s us  run %d  %-5s  errors %s\n" "$mode" "$round" "$r" "$t" "$e"
        done
    done
done

printf "\n%-5s %8s %-6s %4s  %24s  %9s %7s %6s\n" mode round timer runs \
    "mean signed error L/M/S" "mean max" "max" ">3 pts"
for c in $cases; do
    mode=${c%%:*}
    round=${c#*:}
    for t in "${timers[@]}"; do
        awk -v m="$mode" -v r="$round" -v t="$t" '
            { for (i = 1; i <= 3; i++) { s[i] += $i; a = $i < 0 ? -$i : $i; if (a > mx) mx = a }
              n++; sum += mx; if (mx > big) big = mx; if (mx > 3) off++; mx = 0 }
            END { printf "%-5s %5s us %-6s %4d  %+7.2f %+7.2f %+7.2f  %9.2f %7.1f %6d\n",
                  m, r, t, n, s[1] / n, s[2] / n, s[3] / n, sum / n, big, off }' \
            "$work/err-$mode-$round-$t"
    done
done
