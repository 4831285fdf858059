#!/usr/bin/env bash
# bench/vthread_cost.sh — what the JVM's virtual-thread mounts cost with ringprof
# loaded (docs/agent.md, "Virtual threads"): bench/vthreads/YieldLoop.java, 200
# virtual threads each doing a little work (100 loop iterations) and yielding,
# so that nearly all its CPU goes to unmounting and mounting, without an agent
# and with BUILD's agent at vthreads=off, on and mount. It prints, per JDK and
# configuration, the CPU ns per yield (one unmount and one mount): the median
# over the rounds and every round's figure. It asserts nothing.
#
#   bench/vthread_cost.sh [-r ROUNDS] [-s CPU_SECONDS] [-j JAVA_HOME]... BUILD
#
# Default: 5 rounds of 2 CPU seconds, the configurations interleaved in each
# round, on JDK 21 (tests/fetch-jdk21) and the Temurin JDK 25 where they are
# installed; about 4 minutes on 2 vCPUs. A JDK that is not there is skipped with
# one line.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=5 seconds=2 jdks=()
while getopts r:s:j:h o; do
    case $o in
    r) rounds=$OPTARG ;;
    s) seconds=$OPTARG ;;
    j) jdks+=("$OPTARG") ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { sed -n '2,15p' "$0"; exit 2; }
agent=$(realpath "$1")/src/libringprof.so
[ -f "$agent" ] || { echo "no agent at $agent"; exit 2; }
[ ${#jdks[@]} -gt 0 ] || jdks=(/var/cache/ringprof/jdk21 /usr/lib/jvm/temurin-25-jdk-amd64)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
javac -d "$tmp/classes" bench/vthreads/YieldLoop.java
echo "vthread_cost: $agent; $rounds rounds of $seconds CPU s; load $(cut -d' ' -f1-3 /proc/loadavg)"
for jdk in "${jdks[@]}"; do
    [ -x "$jdk/bin/java" ] || { echo "$jdk: not installed, skipped"; continue; }
    declare -A runs=()
    for ((i = 1; i <= rounds; i++)); do
        for c in none off on mount; do
            opt=()
            [ $c = none ] || opt=(-agentpath:"$agent=dir=$tmp/rec-$c-$i,vthreads=$c")
            r=$("$jdk/bin/java" "${opt[@]}" -cp "$tmp/classes" YieldLoop 200 100 "$seconds" |
                awk '{ print $4 }')
            runs[$c]+=" $r"
            rm -rf "$tmp/rec-$c-$i"
        done
    done
    echo "$("$jdk/bin/java" -version 2>&1 | head -1): CPU ns per yield (an unmount and a mount)"
    for c in none off on mount; do
        med=$(tr ' ' '\n' <<<"${runs[$c]}" | grep . | sort -n | awk '{ v[NR] = $1 }
              END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
        printf '  %-6s median %7.1f  (%s )\n' "$c" "$med" "${runs[$c]}"
    done
    unset runs
done
