#!/usr/bin/env bash
# bench/overhead_wall.sh — what issue 9's wall-clock sampling and lock profiling
# cost, against no agent and against JDK Flight Recorder, side by side in one run.
# It prints figures (bench/overhead's tables) and asserts nothing about speed.
#
#   bench/overhead_wall.sh [--quick] [BUILD_DIR]
#
# Two bench/overhead runs (its header says how it measures: fresh JVMs,
# configurations interleaved A B C ... for each round, medians of per-round ratios
# to "none"):
#   1. workloads threads200 and threads2000 (ThreadsWork with 196 and 1996 mostly
#      idle threads besides 4 hot ones) x none, rp-default, rp-wall50 (wall=50ms),
#      jfr-default, jfr-wall50 (JFR's execution and native-method samples every
#      50 ms: its nearest to a wall-clock sampler)
#   2. workload lock (LockWork: 6 workers contending on one synchronized ledger)
#      x none, rp-default, rp-lock10 (lock=10ms), jfr-default, jfr-lock10
#      (jdk.JavaMonitorEnter at 10 ms)
# Default: 3 rounds of 5 s runs (about 6 minutes on 2 vCPUs); --quick: 2 rounds of
# 3 s (about 3 minutes). Results also go to bench/results/<UTC time>-wall and -lock.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build rounds=(--rounds 3 --seconds 5)
for a in "$@"; do
    case "$a" in
    --quick) rounds=(--rounds 2 --seconds 3) ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) build=$a ;;
    esac
done
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rc=0
bench/overhead "${rounds[@]}" --workloads threads200,threads2000 \
    --configs none,rp-default,rp-wall50,jfr-default,jfr-wall50 \
    --out "bench/results/$stamp-wall" "$build" || rc=1
echo
bench/overhead "${rounds[@]}" --workloads lock \
    --configs none,rp-default,rp-lock10,jfr-default,jfr-lock10 \
    --out "bench/results/$stamp-lock" "$build" || rc=1
exit $rc
