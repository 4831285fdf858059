#!/usr/bin/env bash
# bench/overhead_alloc.sh — what allocation sampling costs an allocation-heavy JVM.
# Prints figures; it asserts nothing about speed (it exits 1 only if a run failed
# or the workload computed a wrong result).
#
#   bench/overhead_alloc.sh [--quick] [BUILD_DIR [ROUNDS [SECONDS [THREADS]]]]
#
# Runs tests/java/AllocBench (THREADS threads handling requests that build, render,
# parse and sort small documents, about 2 GB/s of allocation on this machine's
# 2 vCPUs, one response in 16 kept in an LRU cache) for SECONDS in a fresh JVM per
# run, in five configurations:
#   none        no agent
#   cpu         ringprof with alloc=off: CPU sampling only, at its default 10 ms
#   alloc       ringprof at its defaults: CPU at 10 ms, alloc=512k and the rate
#               limit off (allocrate is experimental, docs/agent.md)
#   live        the same plus live=on (live-object tracking and snapshots)
#   norate      (only when named in CONFIGS) allocrate=off named explicitly (the
#               same as alloc today)
#   rate-N      (only when named in CONFIGS) the experimental rate limit
#               allocrate=N
#   jfr-profile JDK Flight Recorder, settings=profile: among others
#               jdk.ObjectAllocationSample (throttled to 300/s),
#               jdk.OldObjectSample (JFR's live objects) and execution samples
#               every 10 ms
# The runs are interleaved (none, cpu, alloc, live, jfr-profile, none, ...) for
# ROUNDS rounds, so that drift in the machine's speed hits every configuration
# alike. AllocBench times every batch of requests and prints the median batch
# time after a warm-up (WARMUP = SECONDS / 3 s): "steady state" below.
# Defaults: build, 5 rounds, 12 s, as many threads as CPUs; --quick: 2 rounds of 6 s.
#
# For each configuration it prints the median over rounds of:
#   batch ms     the median steady-state batch time (500 requests a thread)
#   ratio        batch time / the same for "none"; overhead = ratio - 1, in percent
#                (negative: faster than no agent, i.e. noise)
#   cpu/op       the process's CPU time per request, as a ratio to "none"
#   alloc MB/s   what the worker threads allocated, per second of the run
#   alloc samp/s ringprof's alloc samples per second (ringprof summary)
#   agent CPU    (CPU handler time + allocation callback time + the agent's own
#                threads' CPU) / the process's CPU (gauges agent.handler_ns.total,
#                agent.alloc_ns.total and agent.cpu_ns.total, last values); HotSpot's own
#                work for a sample before the callback is not in it, only in
#                batch ms and cpu/op
# Every run's result checksum must equal the no-agent runs'. CONFIGS="none alloc"
# (in the environment) runs a subset, "none" always among them; alloc-SIZE is
# ringprof at alloc=SIZE (CONFIGS="none alloc alloc-4m": about JFR's sample rate).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
args=()
for a in "$@"; do
    case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
    esac
done
build=${args[0]:-build}
if [ $quick -eq 1 ]; then rounds=${args[1]:-2}; seconds=${args[2]:-6}
else rounds=${args[1]:-5}; seconds=${args[2]:-12}; fi
threads=${args[3]:-$(nproc)}
warmup=$((seconds / 3))
agent=$build/src/libringprof.so
jar=$build/tests/agent/agent_programs.jar
dump=$build/tests/agent/rp_agent_dump
tool=$build/tools/ringprof
for f in "$agent" "$jar" "$dump" "$tool"; do
    [ -e "$f" ] || { echo "overhead_alloc: $f missing; build first: ninja -C $build" >&2; exit 1; }
done
java=${JAVA:-java}
work=$(mktemp -d "${TMPDIR:-/tmp}/rp-bench-alloc.XXXXXX")
trap 'rm -rf "$work"' EXIT

read -r -a configs <<<"${CONFIGS:-none cpu alloc live jfr-profile}"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "overhead_alloc: $rounds rounds x ${seconds}s (warm-up ${warmup}s), $threads threads, $(nproc) CPUs, $("$java" -version 2>&1 | head -1)"
for r in $(seq "$rounds"); do
    for c in "${configs[@]}"; do
        rec=$work/rec-$c-$r
        opt=()
        case "$c" in
        none) ;;
        cpu) opt=(-agentpath:"$agent=dir=$rec,alloc=off") ;;
        alloc) opt=(-agentpath:"$agent=dir=$rec") ;;
        live) opt=(-agentpath:"$agent=dir=$rec,live=on") ;;
        norate) opt=(-agentpath:"$agent=dir=$rec,allocrate=off") ;;
        rate-*) opt=(-agentpath:"$agent=dir=$rec,allocrate=${c#rate-}") ;;
        alloc-*) opt=(-agentpath:"$agent=dir=$rec,alloc=${c#alloc-}") ;;
        jfr-profile) opt=(-XX:StartFlightRecording=settings=profile,filename=$rec.jfr) ;;
        esac
        if ! "$java" "${opt[@]}" -cp "$jar" AllocBench "$threads" "$seconds" "$warmup" \
                >"$work/out" 2>"$work/err"; then
            echo "overhead_alloc: round $r $c: java failed:" >&2
            sed 's/^/  /' "$work/err" | head -20 >&2
            exit 1
        fi
        line=$(grep '^iter_ns ' "$work/out")
        read -r _ iter _ _ _ ops _ cpu _ bytes _ check <<<"$line"
        echo "$iter" >>"$work/iter-$c"
        awk -v o="$ops" -v c="$cpu" 'BEGIN { printf "%.1f\n", o ? c / o : 0 }' >>"$work/cpuop-$c"
        awk -v b="$bytes" -v s="$seconds" 'BEGIN { printf "%.1f\n", b / s / 1048576 }' >>"$work/mbs-$c"
        echo "$check" >>"$work/check-$c"
        if [ -d "$rec" ]; then
            "$tool" summary --quiet "$rec" >"$work/summary" 2>/dev/null || true
            awk -v s="$seconds" '$1 == "samples" && $2 == "alloc" { n = $3 } END { printf "%.0f\n", n / s }' \
                "$work/summary" >>"$work/asps-$c"
            h=$("$dump" series "$rec" agent.handler_ns.total | tail -1)
            a=$("$dump" series "$rec" agent.cpu_ns.total | tail -1)
            k=$("$dump" series "$rec" agent.alloc_ns.total | tail -1)
            awk -v h="${h:-0}" -v a="${a:-0}" -v k="${k:-0}" -v c="$cpu" \
                'BEGIN { printf "%.3f\n", c ? 100 * (h + a + k) / c : 0 }' >>"$work/share-$c"
        fi
        printf "  round %d %-11s batch %7.2f ms  %6.0f MB/s allocated\n" "$r" "$c" \
            "$(awk -v i="$iter" 'BEGIN { print i / 1e6 }')" "$(tail -1 "$work/mbs-$c")"
    done
done

# The workload's result must not depend on the profiler.
want=$(sort -u "$work/check-none")
bad=0
for c in "${configs[@]}"; do
    [ "$(sort -u "$work/check-$c")" = "$want" ] ||
        { echo "overhead_alloc: $c computed $(sort -u "$work/check-$c" | tr '\n' ' ')instead of $want" >&2; bad=1; }
done

base=$(median <"$work/iter-none")
basecpu=$(median <"$work/cpuop-none")
printf "\n%-11s %9s %7s %9s %8s %10s %12s %10s\n" config "batch ms" ratio overhead "cpu/op" \
    "alloc MB/s" "alloc samp/s" "agent CPU"
for c in "${configs[@]}"; do
    iter=$(median <"$work/iter-$c")
    ratio=$(awk -v i="$iter" -v b="$base" 'BEGIN { printf "%.3f", b ? i / b : 0 }')
    over=$(awk -v i="$iter" -v b="$base" 'BEGIN { printf "%+.2f%%", b ? 100 * (i / b - 1) : 0 }')
    cpuop=$(awk -v x="$(median <"$work/cpuop-$c")" -v b="$basecpu" 'BEGIN { printf "%.3f", b ? x / b : 0 }')
    ms=$(awk -v i="$iter" 'BEGIN { printf "%.2f", i / 1e6 }')
    mbs=$(median <"$work/mbs-$c")
    if [ -f "$work/asps-$c" ]; then
        printf "%-11s %9s %7s %9s %8s %10.0f %12s %9.3f%%\n" "$c" "$ms" "$ratio" "$over" "$cpuop" \
            "$mbs" "$(median <"$work/asps-$c")" "$(median <"$work/share-$c")"
    else
        printf "%-11s %9s %7s %9s %8s %10.0f %12s %10s\n" "$c" "$ms" "$ratio" "$over" "$cpuop" \
            "$mbs" - -
    fi
done
exit $bad
