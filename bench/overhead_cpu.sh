#!/usr/bin/env bash
# bench/overhead_cpu.sh — what the agent costs a CPU-bound JVM. Prints figures; it
# asserts nothing.
#
#   bench/overhead_cpu.sh [BUILD_DIR [ROUNDS [SECONDS [THREADS]]]]
#
# Runs tests/java/BenchWork (THREADS threads of arithmetic, allocation and hash-map
# work for SECONDS) in a fresh JVM per run, in seven configurations: no agent; the
# async engine at interval=10ms and at interval=1ms with its default CPU timers
# (timer=auto: perf_event task clocks where allowed, the first line says which)
# and with POSIX CPU timers (10ms-posix, 1ms-posix; CPU sampling alone: alloc=off;
# bench/overhead_alloc.sh and bench/overhead measure the defaults with it); JDK
# Flight Recorder with settings=default (execution samples every 20 ms) and
# settings=profile (every 10 ms, the same rate as ringprof's default). The runs are
# interleaved (none, 10ms, 1ms, 10ms-posix, 1ms-posix, jfr-default, jfr-profile,
# none, ...) for ROUNDS rounds, so that drift in the machine's speed hits every
# configuration alike. With POSIX timers, interval=1ms samples every 4 ms (the
# tick at HZ=250); with perf, every 1 ms: four times the samples.
# Defaults: build, 5 rounds, 10 s, as many threads as CPUs.
#
# For each configuration it prints the median over rounds of:
#   ops/s        the workload's throughput, its ratio to "none", and the overhead
#                (1 - ratio, in percent; negative means faster than no agent,
#                i.e. noise)
#   cpu/op       the process's CPU time per operation, as a ratio to "none"
#   handler p50  the median per-flush handler median (gauge agent.handler_ns.p50)
#   handler p99  the median per-flush 99th percentile (agent.handler_ns.p99)
#   agent CPU    (handler time + the agent's own threads' CPU) / the process's CPU
#                (gauges agent.handler_ns.total and agent.cpu_ns.total, last values)
# The handler time is measured from the handler's entry to just before its ring
# push; signal delivery and the push itself are not in it, but they are in ops/s.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
seconds=${3:-10}
threads=${4:-$(nproc)}
agent=$build/src/libringprof.so
jar=$build/tests/agent/agent_programs.jar
dump=$build/tests/agent/rp_agent_dump
for f in "$agent" "$jar" "$dump"; do
    [ -e "$f" ] || { echo "overhead_cpu: $f missing; build first: ninja -C $build" >&2; exit 1; }
done
java=${JAVA:-java}
work=$(mktemp -d "${TMPDIR:-/tmp}/rp-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

configs=(none 10ms 1ms 10ms-posix 1ms-posix jfr-default jfr-profile)
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "overhead_cpu: $rounds rounds x ${seconds}s, $threads threads, $(nproc) CPUs, $("$java" -version 2>&1 | head -1)"
for r in $(seq "$rounds"); do
    for c in "${configs[@]}"; do
        rec=$work/rec-$c-$r
        opt=()
        case "$c" in
        none) ;;
        jfr-*) opt=(-XX:StartFlightRecording=settings=${c#jfr-},filename=$rec.jfr) ;;
        *-posix) opt=(-agentpath:"$agent=dir=$rec,interval=${c%-posix},alloc=off,timer=posix") ;;
        *) opt=(-agentpath:"$agent=dir=$rec,interval=$c,alloc=off") ;;
        esac
        out=$("$java" "${opt[@]}" -cp "$jar" BenchWork "$threads" "$seconds" 2>/dev/null |
              grep '^ops ')
        ops=$(awk '{ print $2 }' <<<"$out")
        cpu=$(awk '{ print $4 }' <<<"$out")
        echo "$ops" >>"$work/ops-$c"
        awk -v o="$ops" -v c="$cpu" 'BEGIN { printf "%.3f\n", o ? c / o : 0 }' >>"$work/cpuop-$c"
        if [ "${c#jfr-}" = "$c" ] && [ "$c" != none ]; then
            "$dump" series "$rec" agent.handler_ns.p50 | median >>"$work/p50-$c"
            "$dump" series "$rec" agent.handler_ns.p99 | median >>"$work/p99-$c"
            h=$("$dump" series "$rec" agent.handler_ns.total | tail -1)
            a=$("$dump" series "$rec" agent.cpu_ns.total | tail -1)
            awk -v h="${h:-0}" -v a="${a:-0}" -v c="$cpu" \
                'BEGIN { printf "%.3f\n", c ? 100 * (h + a) / c : 0 }' >>"$work/share-$c"
        fi
        [ "$r$c" = 110ms ] && echo "  timer=auto uses: $("$dump" meta "$rec" |
            awk -F'\t' '$1 == "agent.timer" { print $2 }')"
        printf "  round %d %-11s %8.0f ops/s\n" "$r" "$c" "$(awk -v o="$ops" -v s="$seconds" 'BEGIN { print o / s }')"
    done
done

median_f() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median <"$work/ops-none")
basecpu=$(median_f <"$work/cpuop-none")
printf "\n%-11s %10s %7s %9s %8s %13s %13s %10s\n" config "ops/s" ratio overhead "cpu/op" \
    "handler p50" "handler p99" "agent CPU"
for c in "${configs[@]}"; do
    ops=$(median <"$work/ops-$c")
    ratio=$(awk -v o="$ops" -v b="$base" 'BEGIN { printf "%.3f", b ? o / b : 0 }')
    over=$(awk -v o="$ops" -v b="$base" 'BEGIN { printf "%+.2f%%", b ? 100 * (1 - o / b) : 0 }')
    cpuop=$(awk -v x="$(median_f <"$work/cpuop-$c")" -v b="$basecpu" 'BEGIN { printf "%.3f", b ? x / b : 0 }')
    rate=$(awk -v o="$ops" -v s="$seconds" 'BEGIN { printf "%.0f", o / s }')
    if [ -f "$work/p50-$c" ]; then
        printf "%-11s %10s %7s %9s %8s %10s ns %10s ns %9s%%\n" "$c" "$rate" "$ratio" "$over" \
            "$cpuop" "$(median <"$work/p50-$c")" "$(median <"$work/p99-$c")" \
            "$(sort -n "$work/share-$c" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
    else
        printf "%-11s %10s %7s %9s %8s %13s %13s %10s\n" "$c" "$rate" "$ratio" "$over" \
            "$cpuop" - - -
    fi
done
