#!/usr/bin/env bash
# bench/jfr_size.sh — how big a recording is, as ringprof's chunk files, as the
# .jfr `ringprof convert --format jfr` makes of them, and as the .jfr JDK Flight
# Recorder itself writes for the same run. Prints figures; it asserts nothing.
#
#   bench/jfr_size.sh [BUILD_DIR [ROUNDS [SECONDS [THREADS]]]]
#
# Runs tests/java/BenchWork (THREADS threads of arithmetic, small allocations and
# hash-map work for SECONDS) in a fresh JVM per run, twice a round, interleaved
# (ringprof, jfr, ringprof, jfr, ...):
#   ringprof  the agent at its defaults for CPU and allocations (interval=10ms,
#             alloc=512k; gc pauses, telemetry and thread CPU are on by default
#             and are in the files too), its chunk files then converted with
#             `ringprof convert --format jfr`;
#   jfr       -XX:StartFlightRecording with a settings file that enables only
#             jdk.ExecutionSample (period 10 ms) and jdk.ObjectAllocationSample
#             (with stacks), throttled to the allocation samples per second
#             that the first ringprof run took (JFR samples allocations by rate,
#             ringprof by bytes: this makes the counts comparable).
# For each file it prints the median over rounds of its size and, from the JDK's
# `jfr summary`, the count and bytes of each event type: jdk.ExecutionSample,
# jdk.ObjectAllocationSample, the metadata event (the type descriptions), the
# checkpoints (constant pools: stacks, methods, classes, symbols, threads) and
# the rest; for the chunk files the counts of `ringprof summary`.
# Defaults: build, 3 rounds, 20 s, 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
seconds=${3:-20}
threads=${4:-2}
agent=$build/src/libringprof.so
jar=$build/tests/agent/agent_programs.jar
ringprof=$build/tools/ringprof
for f in "$agent" "$jar" "$ringprof"; do
    [ -e "$f" ] || { echo "jfr_size: $f missing; build first: ninja -C $build" >&2; exit 1; }
done
java=${JAVA:-java}
jfr=$(dirname "$(readlink -f "$(command -v "$java")")")/jfr
[ -x "$jfr" ] || { echo "jfr_size: no jfr tool next to $java" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/rp-jfrsize.XXXXXX")
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# `jfr summary FILE` into NAME count bytes lines for the columns below.
jfr_counts() {
    "$jfr" summary "$1" | awk '
        NF == 3 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {
            k = "other"
            if ($1 == "jdk.ExecutionSample") k = "cpu"
            if ($1 == "jdk.ObjectAllocationSample") k = "alloc"
            if ($1 == "jdk.Metadata") k = "meta"
            if ($1 == "jdk.CheckPoint") k = "cp"
            n[k] += $2; b[k] += $3 }
        END { for (k in n) print k, n[k], b[k] }'
}

# The settings file: the two events alone; the throttle is filled in per run.
jfc() {
    cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="cpu and allocation samples">
  <event name="jdk.ExecutionSample">
    <setting name="enabled">true</setting>
    <setting name="period">10 ms</setting>
  </event>
  <event name="jdk.ObjectAllocationSample">
    <setting name="enabled">true</setting>
    <setting name="throttle">$1/s</setting>
    <setting name="stackTrace">true</setting>
  </event>
</configuration>
EOF
}

rate=
echo "jfr_size: $rounds rounds x ${seconds}s, BenchWork $threads threads, $(nproc) CPUs," \
     "load $(cut -d' ' -f1 /proc/loadavg), $("$java" -version 2>&1 | head -1)"
for r in $(seq "$rounds"); do
    rec=$work/rec-$r
    "$java" -agentpath:"$agent=dir=$rec,interval=10ms,alloc=512k" -cp "$jar" BenchWork \
        "$threads" "$seconds" >/dev/null 2>&1
    du -b -c "$rec"/*.rpc | tail -1 | awk '{ print $1 }' >>"$work/size-rpc"
    "$ringprof" summary "$rec" >"$work/summary"
    awk '$1 == "samples" && $2 == "cpu" { print $3 }' "$work/summary" >>"$work/n-rpc-cpu"
    awk '$1 == "samples" && $2 == "alloc" { print $3 }' "$work/summary" >>"$work/n-rpc-alloc"
    "$ringprof" convert --quiet --format jfr -o "$rec.jfr" "$rec" 2>/dev/null
    stat -c %s "$rec.jfr" >>"$work/size-conv"
    jfr_counts "$rec.jfr" | while read -r k n b; do
        echo "$n" >>"$work/n-conv-$k"; echo "$b" >>"$work/b-conv-$k"; done
    if [ -z "$rate" ]; then
        # The first run's allocation samples per second (rounded up, at least 1).
        rate=$(awk -v s="$seconds" '$1 == "samples" && $2 == "alloc" {
            r = $3 / s; printf "%d\n", r == int(r) ? (r < 1 ? 1 : r) : int(r) + 1 }' \
            "$work/summary")
        rate=${rate:-1}
        jfc "$rate" >"$work/cpu-alloc.jfc"
    fi

    "$java" -XX:StartFlightRecording=settings="$work/cpu-alloc.jfc",filename="$rec-own.jfr" \
        -cp "$jar" BenchWork "$threads" "$seconds" >/dev/null 2>&1
    stat -c %s "$rec-own.jfr" >>"$work/size-own"
    jfr_counts "$rec-own.jfr" | while read -r k n b; do
        echo "$n" >>"$work/n-own-$k"; echo "$b" >>"$work/b-own-$k"; done
    printf "  round %d: .rpc %s bytes, converted .jfr %s bytes, JFR's .jfr %s bytes\n" "$r" \
        "$(tail -1 "$work/size-rpc")" "$(tail -1 "$work/size-conv")" "$(tail -1 "$work/size-own")"
    rm -rf "$rec" "$rec.jfr" "$rec-own.jfr"
done

m() { [ -f "$work/$1" ] && median <"$work/$1" || echo 0; }
cell() { printf "%s / %s" "$(m "n-$1-$2")" "$(m "b-$1-$2")"; }
echo
echo "medians of $rounds rounds; JFR's allocation throttle: $rate/s; cells: events / bytes"
printf "%-22s %10s %22s %22s %10s %12s %18s\n" file bytes "jdk.ExecutionSample" \
    "jdk.ObjectAllocSample" metadata checkpoints "other events"
printf "%-22s %10s %22s %22s %10s %12s %18s\n" "ringprof .rpc" "$(m size-rpc)" \
    "$(m n-rpc-cpu) samples" "$(m n-rpc-alloc) samples" - - -
for f in conv own; do
    label="ringprof convert .jfr"
    [ $f = own ] && label="JFR's own .jfr"
    printf "%-22s %10s %22s %22s %10s %12s %18s\n" "$label" "$(m size-$f)" "$(cell $f cpu)" \
        "$(cell $f alloc)" "$(m b-$f-meta)" "$(m b-$f-cp)" "$(cell $f other)"
done
