#!/usr/bin/env bash
# bench/lock_cost.sh — what the monitor callbacks (lock=, src/kinds/lock.c) cost, for two
# builds side by side: the contended workload of bench/overhead (lock: LockWork,
# six workers on one synchronized ledger) with no agent and with ringprof's lock
# contention on. It prints figures and asserts nothing about speed.
#
#   bench/lock_cost.sh [-r ROUNDS] [-s SECONDS] [-c CONFIG] BUILD_A BUILD_B
#
# CONFIG is rp-lock10 (default: lock=10ms, the waits of 10 ms and more take a
# stack) or rp-lock10s (lock=10s: no wait is that long, so the callbacks run
# their cheap path alone on every contended entry). A round is one `bench/overhead
# --rounds 1 --workloads lock --configs none,CONFIG` per build, the builds
# alternating A B A B ... (each with its own no-agent run, first; bench/overhead's
# header says how a run is measured). Per build it prints the medians over the
# rounds (min–max beside) of: the iteration time ratio and the steady CPU ratio
# (CONFIG to none, the same round and build), the agent's CPU share, the
# callbacks' time per contended entry (agent.lock_ns.total over the lock samples
# + lock.below_threshold) and the contended entries per second; then B's medians
# over A's. Default 6 rounds of 5 s runs: about 3 minutes on 2 vCPUs. Each run's
# output goes to bench/results/<UTC time>-lockcost/{A,B}N/.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=6 seconds=5 config=rp-lock10
while getopts r:s:c:h o; do
    case $o in
    r) rounds=$OPTARG ;;
    s) seconds=$OPTARG ;;
    c) config=$OPTARG ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,20p' "$0"; exit 2; }
a=$1 b=$2
out=bench/results/$(date -u +%Y%m%dT%H%M%SZ)-lockcost
echo "lock_cost: A = $a, B = $b; $config; $rounds rounds of $seconds s; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= rounds; i++)); do
    for side in A B; do
        build=$a; [ $side = B ] && build=$b
        bench/overhead --rounds 1 --seconds "$seconds" --workloads lock \
            --configs "none,$config" --out "$out/$side$i" "$build" |
            grep -E '^  lock ' | sed "s/^/$side$i /"
    done
done
echo "lock_cost: load $(cut -d' ' -f1-3 /proc/loadavg) at the end; runs in $out"
python3 - "$out" "$rounds" "$config" "$a" "$b" <<'PY'
import csv, os, statistics, sys
out, rounds, config = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names = {"A": sys.argv[4], "B": sys.argv[5]}
def rows(side, i):
    with open(os.path.join(out, f"{side}{i}", "runs.tsv")) as f:
        return {r["config"]: r for r in csv.DictReader(f, delimiter="\t") if r["ok"] == "True"}
fig = {"A": [], "B": []}
for side in fig:
    for i in range(1, rounds + 1):
        r = rows(side, i)
        if "none" not in r or config not in r:
            print(f"{side}{i}: a run failed (see {out}/{side}{i}/results.md)")
            continue
        n, p = r["none"], r[config]
        per = float(p["lock_ns"]) / int(p["lock_entries"]) if p["lock_entries"] else None
        fig[side].append(dict(
            iter=float(p["iter_ms"]) / float(n["iter_ms"]),
            cpu=float(p["cpu_iter_ms"]) / float(n["cpu_iter_ms"]),
            share=float(p["agent_share"]) * 100,
            per=per, entries_s=int(p["lock_entries"]) / float(p["wall_s"])))
def med(side, k):
    v = [x[k] for x in fig[side] if x[k] is not None]
    return (statistics.median(v), min(v), max(v)) if v else None
cols = [("iter", "iteration time ratio", "%.3f"), ("cpu", "steady CPU ratio", "%.3f"),
        ("share", "agent CPU %", "%.2f"), ("per", "callback ns per contended entry", "%.0f"),
        ("entries_s", "contended entries per s", "%.0f")]
print()
print("| build | rounds | " + " | ".join(c[1] + " (min–max)" for c in cols) + " |")
print("|---|---|" + "---|" * len(cols))
for side in fig:
    cells = []
    for k, _, f in cols:
        m = med(side, k)
        cells.append("–" if m is None else (f + " (" + f + "–" + f + ")") % m)
    print(f"| {side}: {names[side]} | {len(fig[side])} | " + " | ".join(cells) + " |")
cells = []
for k, _, f in cols:
    ma, mb = med("A", k), med("B", k)
    cells.append("–" if not ma or not mb or not ma[0] else "%.3f" % (mb[0] / ma[0]))
print("| B / A (medians) | | " + " | ".join(cells) + " |")
PY
