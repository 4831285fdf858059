#!/usr/bin/env bash
# tests/test_tool_summary.sh RINGPROF RP_SYNTH — `ringprof summary` end to end.
#
# rp_synth drives the real recorder pipeline (CPU-timer signals, rings, flusher,
# chunk files); these checks read its recordings back through the tool and compare
# what the summary says with what must be true:
#   - each thread's sampled weight matches its CPU time (both come from the same
#     per-thread CPU clock, so only the partial last interval differs; the weight
#     includes timer overruns, which matter because the kernel fires CPU-clock
#     timers on its scheduler tick, so a 1 ms timer often fires every 4 ms);
#   - when the rings overflow, samples + lost == the signals the handlers took,
#     exactly: nothing is lost silently;
#   - damaged and missing inputs are reported, and --strict turns them into exit 1;
#   - two recordings on one command line stay two recordings.
set -u
RINGPROF=$1 SYNTH=$2
. "$(dirname "$0")/checks.sh"
contains() { grep -q -- "$2" "$1"; }

# Thread rows: "tid name cpu sampled s cpu s" (one kind, one column of samples);
# prints "name sampled_s cpu_s".
thread_rows() { awk '/^  threads/{t=1;next} t && /billing-/{print $2, $4, $6}' "$1"; }

# 1. A clean recording: 2 threads at 1 ms for 2 s, flushed every 200 ms.
"$SYNTH" --dir "$tmp/a" --threads 2 --seconds 2 --interval-us 1000 --flush-ms 200 \
    >"$tmp/synth.out" 2>&1
check "rp_synth ran" test $? -eq 0
"$RINGPROF" summary --chunks "$tmp/a" >"$tmp/a.txt" 2>"$tmp/a.err"
check "summary exits 0 on a clean recording" test $? -eq 0
check "summary names the cpu kind" contains "$tmp/a.txt" "samples     cpu"
check "summary lists billing-1" contains "$tmp/a.txt" "billing-1"
check "summary lists billing-2" contains "$tmp/a.txt" "billing-2"
check "no losses in a clean run" contains "$tmp/a.txt" "lost        0 records"
check "every chunk closed" bash -c "! grep -q unfinished '$tmp/a.txt'"
check "no problems reported" test ! -s "$tmp/a.err"
rows=$(thread_rows "$tmp/a.txt")
check "two thread rows" test "$(echo "$rows" | wc -l)" -eq 2
while read -r name sampled cpu; do
    # Within 3% plus two 4 ms ticks (the partial last interval).
    check "$name: sampled weight ($sampled s) matches cpu time ($cpu s)" \
        awk -v s="$sampled" -v c="$cpu" 'BEGIN{d=s-c; if(d<0)d=-d; exit !(c>0.2 && d<=c*0.03+0.008)}'
done <<<"$rows"

# 2. Forced loss: a 4 KiB ring (~100 records) drained only at the end overflows
#    once a thread has had 0.4 s of CPU (one sample per 4 ms tick; on a busy machine
#    rp_synth runs past --seconds until a ring has dropped). Every signal the
#    handlers took (rp_synth counts them) is either a sample in the file or a counted
#    loss: samples + lost == signals, exactly.
"$SYNTH" --dir "$tmp/b" --threads 2 --seconds 3 --interval-us 1000 --flush-ms 300 \
    --ring-bytes 4096 --slow-flusher >"$tmp/b.synth" 2>&1
signals=$(sed -n 's/.* \([0-9]*\) signals,.*/\1/p' "$tmp/b.synth")
"$RINGPROF" summary "$tmp/b" >"$tmp/b.txt" 2>&1
lost=$(awk '/^    ring_full/{print $2}' "$tmp/b.txt")
check "ring_full losses are reported" test "${lost:-0}" -gt 0
samples=$(awk '/^  samples     cpu/{print $3}' "$tmp/b.txt")
check "samples ($samples) + lost ($lost) == signals taken ($signals)" \
    test "$((samples + ${lost:-0}))" -eq "${signals:--1}"

# 3. Damage: a chunk cut in the middle is read up to its last whole segment.
first=$(ls "$tmp/a"/*.rpc | head -1)
size=$(stat -c %s "$first")
mkdir "$tmp/c"
head -c $((size * 2 / 3)) "$first" >"$tmp/c/$(basename "$first")"
"$RINGPROF" summary "$tmp/c" >"$tmp/c.txt" 2>"$tmp/c.err"
check "a cut chunk still exits 0" test $? -eq 0
check "the cut is reported with an offset" contains "$tmp/c.err" "offset"
check "the chunk shows as unfinished" contains "$tmp/c.txt" "unfinished"
"$RINGPROF" summary --strict "$tmp/c" >/dev/null 2>&1
check "--strict exits 1 on damage" test $? -eq 1
printf 'not a chunk at all' >"$tmp/c/garbage.rpc"
"$RINGPROF" summary "$tmp/c/garbage.rpc" >/dev/null 2>"$tmp/g.err"
check "nothing readable exits 1" test $? -eq 1
check "a bad header names the file" contains "$tmp/g.err" "garbage.rpc"

# 4. Bad invocations.
"$RINGPROF" summary "$tmp/does-not-exist" >/dev/null 2>"$tmp/n.err"
check "a missing input exits 1" test $? -eq 1
check "a missing input is named" contains "$tmp/n.err" "does-not-exist"
"$RINGPROF" summary --no-such-option "$tmp/a" >/dev/null 2>&1
check "an unknown option exits 2" test $? -eq 2
"$RINGPROF" frobnicate >/dev/null 2>"$tmp/f.err"
check "an unknown command exits 2" test $? -eq 2
check "an unknown command is named" contains "$tmp/f.err" "frobnicate"

# 5. Two recordings on one command line stay apart; a glob works too.
"$RINGPROF" summary "$tmp/a" "$tmp/b/*.rpc" >"$tmp/m.txt" 2>/dev/null
check "two recordings are listed" test "$(grep -c '^recording ' "$tmp/m.txt")" -eq 2

echo "tool_summary: $checks checks, $fails failed"
[ $fails -eq 0 ]
