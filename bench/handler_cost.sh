#!/usr/bin/env bash
# bench/handler_cost.sh — what the CPU-timer signal handler costs per sample, and
# how deep the stacks it takes are, on three kinds of program; one or more builds
# side by side. Prints figures; it asserts nothing.
#
#   bench/handler_cost.sh [-r ROUNDS] [-s SECONDS] [-i INTERVAL] BUILD_DIR [BUILD_DIR ...]
#
# A BUILD_DIR may carry agent options after a '+': `build+timer=posix` runs that
# build's agent with them added (to compare settings of one build side by side).
#
# The workloads, each run in a fresh JVM with the async engine at INTERVAL (default
# 10ms, the agent's default: cold caches at every sample), alloc=off, flush=200ms:
#   jit     javac compiling the project's Java programs (tests/java/*.java and
#           bench/workloads' own), from a cold start: most of the CPU goes to the
#           JIT compiler threads, whose stacks are deep in libjvm's C++
#   cpu     bench/workloads' CpuWork for SECONDS: compiled Java loops; the native
#           walk ends at once and AsyncGetCallTrace does the rest
#   native  tests/java DeflateWork for SECONDS: java.util.zip.Deflater, nearly all
#           of its time in libz under a JNI call
# Runs are interleaved (each round: every workload, each build in turn), so drift
# in the machine's speed hits every build alike. Each build runs its own
# libringprof.so; the Java programs and the recording reader come from the first.
# Defaults: 3 rounds, 8 s.
#
# Per workload and build it prints the median over the rounds of:
#   samples       CPU samples in the recording
#   p50, p99      the handler's cost per sample, entry to just before the ring push
#                 (the agent's own histogram): the median over the run's flushes of
#                 each flush's median and 99th percentile (gauges
#                 agent.handler_ns.p50 and .p99; the histogram's buckets are 1/8 of
#                 a power of two wide, so figures are bucket bounds)
#   frames        frames per sample, all of them
#   native        native frames per sample (libjvm's, suffix _[c] in
#                 rp_agent_dump's names, and those with no suffix)
# and the load average before the first run and after the last.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
seconds=8
interval=10ms
while getopts r:s:i: o; do
    case "$o" in
    r) rounds=$OPTARG ;;
    s) seconds=$OPTARG ;;
    i) interval=$OPTARG ;;
    *) echo "usage: bench/handler_cost.sh [-r ROUNDS] [-s SECONDS] [-i INTERVAL] BUILD_DIR..." >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || set -- build
builds=("$@")
# BUILD_DIR+OPTIONS: that build with agent options added (build+timer=posix).
dir_of() { echo "${1%%+*}"; }
opts_of() { case "$1" in *+*) echo ",${1#*+}" ;; esac; }
first=$(dir_of "${builds[0]}")
jar=$first/tests/agent/agent_programs.jar
wjar=$first/bench/workloads/bench_workloads.jar
dump=$first/tests/agent/rp_agent_dump
for f in "$jar" "$wjar" "$dump"; do
    [ -e "$f" ] || { echo "handler_cost: $f missing; build first: ninja -C $first" >&2; exit 1; }
done
for b in "${builds[@]}"; do
    b=$(dir_of "$b")
    [ -e "$b/src/libringprof.so" ] ||
        { echo "handler_cost: $b/src/libringprof.so missing; ninja -C $b" >&2; exit 1; }
done
java=${JAVA:-java}
javac=${JAVAC:-javac}
work=$(mktemp -d "${TMPDIR:-/tmp}/rp-handler.XXXXXX")
trap 'rm -rf "$work"' EXIT
sources=(tests/java/*.java bench/workloads/{Harness,CpuWork,AllocWork,ThreadsWork,DeepWork,JniWork,LockWork}.java)
workloads=(jit cpu native)

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run() {     # run WORKLOAD BUILD_INDEX ROUND
    local w=$1 bi=$2 r=$3
    local rec=$work/rec-$w-$bi-$r
    local agent
    agent=$(readlink -f "$(dir_of "${builds[$bi]}")/src/libringprof.so")
    local opt="$agent=dir=$rec,interval=$interval,alloc=off,flush=200ms$(opts_of "${builds[$bi]}")"
    case "$w" in
    jit) rm -rf "$work/classes"
         "$javac" -J-agentpath:"$opt" -d "$work/classes" "${sources[@]}" >/dev/null 2>&1 ;;
    cpu) "$java" -agentpath:"$opt" -cp "$wjar" CpuWork "$seconds" >/dev/null 2>&1 ;;
    native) "$java" -agentpath:"$opt" -cp "$jar" DeflateWork "$seconds" >/dev/null 2>&1 ;;
    esac
    local key=$work/$w-$bi
    "$dump" series "$rec" agent.handler_ns.p50 | median >>"$key.p50"
    "$dump" series "$rec" agent.handler_ns.p99 | median >>"$key.p99"
    "$dump" stacks "$rec" | awk -F'\t' '
        { n = split($3, f, ";"); nat = 0
          for (i = 2; i <= n; i++) if (f[i] !~ /_\[[ji0m]\]$/) nat++
          s += $2; all += $2 * (n - 1); native += $2 * nat }
        END { printf "%d %.1f %.1f\n", s, s ? all / s : 0, s ? native / s : 0 }' >"$key.tmp"
    read -r s fr nat <"$key.tmp"
    echo "$s" >>"$key.samples"
    echo "$fr" >>"$key.frames"
    echo "$nat" >>"$key.native"
    printf "  round %d %-6s %-28s %6d samples, p50 %6s ns, p99 %6s ns\n" "$r" "$w" \
        "${builds[$bi]}" "$s" "$(tail -1 "$key.p50")" "$(tail -1 "$key.p99")"
    rm -rf "$rec"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "handler_cost: $rounds rounds, ${seconds}s, interval=$interval, $(nproc) CPUs, load $load0, $("$java" -version 2>&1 | head -1), $(date -u '+%Y-%m-%d %H:%M UTC')"
for r in $(seq "$rounds"); do
    for w in "${workloads[@]}"; do
        for bi in "${!builds[@]}"; do
            run "$w" "$bi" "$r"
        done
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

printf "\n%-7s %-30s %8s %9s %9s %7s %7s\n" workload build samples "p50 ns" "p99 ns" frames native
for w in "${workloads[@]}"; do
    for bi in "${!builds[@]}"; do
        key=$work/$w-$bi
        printf "%-7s %-30s %8.0f %9.0f %9.0f %7.1f %7.1f\n" "$w" "${builds[$bi]}" \
            "$(median <"$key.samples")" "$(median <"$key.p50")" "$(median <"$key.p99")" \
            "$(median <"$key.frames")" "$(median <"$key.native")"
    done
done
echo "load average: $load0 at the start, $load1 at the end"
