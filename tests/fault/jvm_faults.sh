#!/usr/bin/env bash
# tests/fault/jvm_faults.sh — faults injected into real JVMs running the agent.
# One test per invocation:
#
#   jvm_faults.sh TEST [ENGINE]
#
#   unloading ENGINE  classes loaded by throwaway loaders and unloaded continuously
#                     while 4 threads run them, sampled at 1 kHz with allocation
#                     sampling and live=on: every frame named or "[unloaded]"
#   thread_churn      12 000 short threads (100 000 with RINGPROF_LONG_TESTS=1), 8 at
#                     a time, at 1 kHz with allocation sampling, without the agent
#                     and with each engine: the agent's memory returns to what it
#                     was after the first 5 000, every sample is accounted for
#   signals           the timer signal shared or taken: setitimer(ITIMER_PROF) by
#                     the application, attach into a JVM whose SIGPROF is taken,
#                     signal=USR1 around a taken SIGPROF
#   exit_flush        System.exit / Runtime.halt while flushes are being written
#                     (both engines, alternately)
#   exit_ctl          the JVM exits while control requests from four clients are
#                     in flight (both engines, alternately)
#   exit_attach       ringprof attach / jcmd JVMTI.agent_load while the JVM exits
#   exit_slow_start   the JVM exits while an attach's start is slowed down (test
#                     build): VMDeath waits for a short start, not for a long one
#   attach_refused    an attach refused (dir= unwritable), then a correct one with
#                     alloc=: allocation samples are recorded
#
# The exit_* tests repeat their race 8 times with random delays (200 with
# RINGPROF_LONG_TESTS=1, or RP_FAULT_RUNS times); each run must end "cleanly": the JVM's exit code is the
# program's, no hs_err file, nothing hangs (every process is bounded by a
# timeout), the recording reads without damage and its last chunk is closed, and
# no socket, discovery or attach-error file is left behind.
#
# meson (tests/fault/meson.build) passes RP_JAVA, RP_JCMD, RP_AGENT, RP_FJAR (the
# programs: tests/java/UnloadStorm, ThreadStorm, ExitRace), RP_DUMP, RP_RINGPROF,
# RP_TAKEN (LD_PRELOAD: SIGPROF handled before start), RP_ITIMER (LD_PRELOAD:
# setitimer(ITIMER_PROF) after start), RP_JAR (tests/agent's programs) and
# RP_TEST_AGENT (the RP_TEST_HOOKS build). The scratch directory is kept when a test
# fails.
set -uo pipefail

test_name=${1:?usage: jvm_faults.sh TEST [ENGINE]}
engine=${2:-async}
. "$(dirname "$0")/../lib.sh"
rp_begin "fault-$test_name-$engine" "$test_name $engine"
fail_hook() { sed 's/^/  jvm: /' "$work/err" 2>/dev/null | head -20; }
long=${RINGPROF_LONG_TESTS:-0}
disc_dir="/tmp/ringprof-$(id -u)"

# A recording in $1 that must be whole: read by rp_agent_dump and ringprof
# summary, nothing damaged, the last chunk closed, no .part file left.
recording_whole() {
    "$RP_DUMP" check "$1" >"$work/check" || fail "damaged recording $1: $(cat "$work/check")"
    grep -q "last_closed 1" "$work/check" || fail "the last chunk in $1 was not closed: $(cat "$work/check")"
    ! ls "$1" | grep -q '\.part$' || fail "a .part file was left in $1: $(ls "$1")"
    rp summary "$1" >"$work/summary" 2>&1 || fail "ringprof summary failed on $1: $(tail -3 "$work/summary")"
    grep -q " 0 damaged, 0 cut off" "$work/summary" || fail "summary reports damage in $1: $(grep -m1 damaged "$work/summary")"
}

# No socket, discovery file or attach-error file of process $1 is left: $2 is
# its recording directory; with $3 = jcmd the attach-error file may stay (the
# agent leaves its reason there for `ringprof attach`, which takes it; jcmd does
# not). A discovery or attach-error file older than $work/started (the run's
# start) is a stale one of an earlier process with the same pid (killed, or
# attached by jcmd), not this run's.
no_leftovers() {
    local p=$1 dir=$2
    [ ! -e "$dir/ringprof-$p.sock" ] || fail "the socket $dir/ringprof-$p.sock was left behind"
    [ ! "$disc_dir/$p.json" -nt "$work/started" ] || fail "the discovery file $disc_dir/$p.json was left behind"
    [ "${3:-}" = jcmd ] || [ ! "$disc_dir/$p.attach-error" -nt "$work/started" ] ||
        fail "$disc_dir/$p.attach-error was left behind"
}

# ------------------------------------------------------------ 1. unloading --

# Frames of classes that are gone: their real name or "[unloaded]", never garbage,
# in both the CPU and the allocation samples, in rp_agent_dump's reading and in
# ringprof convert's profiles (and live=on objects of gone classes in the last
# snapshot). The JVM log counts the unloads, so a run that unloaded nothing fails.
test_unloading() {
    local opts="dir=$work/rec,engine=$engine,interval=1ms,alloc=16k,live=on"
    "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" -Xlog:class+unload=info:file="$work/unload.log" \
        -agentpath:"$RP_AGENT=$opts" -cp "$RP_FJAR" UnloadStorm 8 4 >"$work/out" 2>"$work/err" ||
        { no_hs_err; fail "java exited $?"; }
    no_hs_err
    grep -q "UnloadStorm done" "$work/out" || fail "UnloadStorm did not finish"
    local unloads
    unloads=$(grep -c 'UnloadStorm\$Victim' "$work/unload.log" || true)
    [ "$unloads" -ge 100 ] || fail "the JVM unloaded only $unloads classes: the test tests nothing"
    recording_whole "$work/rec"
    "$RP_DUMP" stacks "$work/rec" >"$work/cpu.stacks"
    RP_DUMP_KIND=alloc "$RP_DUMP" stacks "$work/rec" >"$work/alloc.stacks"
    for k in cpu alloc live; do
        rp convert --strict --event $k --format collapsed -o "$work/$k.folded" "$work/rec" \
            2>"$work/convert.err" || fail "ringprof convert --event $k failed: $(head -3 "$work/convert.err")"
    done
    rp convert --strict --format tree -o "$work/cpu.tree" "$work/rec" 2>"$work/convert.err" ||
        fail "ringprof convert (tree) failed: $(head -3 "$work/convert.err")"
    # Every Java frame (rp_agent_dump marks them _[j], _[i], _[0]) is a Java name
    # (a hidden class, such as a lambda's, ends in .0x<address>) or "[unloaded]";
    # a frame of the
    # victim classes is one of their methods. The collapsed profiles hold only
    # printable text, and the victims' frames there are named the same way.
    python3 - "$work" <<'EOF' || fail "a frame has a bad name (above)"
import re, sys
work = sys.argv[1]
ident = r"[A-Za-z_$][A-Za-z0-9_$]*"
java = re.compile(rf"^(({ident}\.)*{ident}(\.0x[0-9a-f]+)?\.(<init>|<clinit>|{ident})|\[unloaded\])_\[[ji0]\]$")
# (The allocation profiles' leaf is the allocated class: Crumb or Crumb[].)
victim = re.compile(r"^UnloadStorm\$((Victim\.(burn|litter)|Crumb\.<init>)(_\[[ji0]\])?|Crumb(\[\])?)$")
bad, stats = [], {}
for kind in ("cpu", "alloc"):
    named = gone = 0
    for line in open(f"{work}/{kind}.stacks"):
        w, n, stack = line.rstrip("\n").split("\t")
        frames = stack.split(";")[1:]
        for f in frames:
            if re.search(r"_\[[ji0]\]$", f) and not java.match(f):
                bad.append((kind, f))
            if "Victim" in f or "Crumb" in f:
                if not victim.match(f):
                    bad.append((kind, f))
        if any(f.startswith("UnloadStorm$Victim.") for f in frames):
            named += int(w)
        elif any(f.startswith("[unloaded]") for f in frames):
            gone += int(w)
    stats[kind] = (named, gone)
for kind in ("cpu", "alloc", "live"):
    for line in open(f"{work}/{kind}.folded", encoding="utf-8"):
        stack = line.rsplit(" ", 1)[0]
        for f in stack.split(";"):
            if not f.isprintable() or ("Victim" in f or "Crumb" in f) and not victim.match(f):
                bad.append((kind + ".folded", f))
for b in bad[:10]:
    print("  bad frame:", b)
cn, cg = stats["cpu"]
an, ag = stats["alloc"]
print(f"# cpu in victims: {cn/1e6:.0f} ms named, {cg/1e6:.0f} ms [unloaded]; "
      f"alloc in victims: {an/2**20:.0f} MiB named, {ag/2**20:.0f} MiB [unloaded]")
# The last snapshot comes after the final collection, which unloaded every copy
# of the victims: none of their objects can be live (a stale entry would be).
live = sum(1 for l in open(f"{work}/live.folded") if "Crumb" in l)
print(f"# live stacks with victims' objects in the last snapshot: {live}")
if live:
    print("  objects of unloaded classes reported live"); sys.exit(1)
if cn + cg < 300e6:
    print("  too little CPU sampled in the victim classes"); sys.exit(1)
if an + ag == 0:
    print("  no allocation sampled in the victim classes"); sys.exit(1)
sys.exit(1 if bad else 0)
EOF
    note "$unloads victim classes unloaded; $(tail -1 "$work/check")"
}

# --------------------------------------------------------- 2. thread churn --

# One ThreadStorm run with $1 = none, async or jvmti, of $2 threads: writes
# $work/result-$1, "RSS_BASE RSS_END SLOTS_BASE SLOTS_END SLOTS_MAX STATUS_SAMPLES FILE_SAMPLES SECONDS".
# At each pause: (agent) stop sampling at the end, flush, then read VmRSS.
storm_run() {
    local eng=$1 n=$2 rec="$work/rec-$1" sync="$work/sync-$1" ag=()
    mkdir -p "$sync"
    [ "$eng" = none ] || ag=(-agentpath:"$RP_AGENT=dir=$rec,engine=$eng,interval=1ms,alloc=8k")
    # A fixed, pre-touched heap: the heap's own growth is not what is measured.
    "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" -Xms64m -Xmx64m -XX:+AlwaysPreTouch \
        "${ag[@]}" -cp "$RP_FJAR" ThreadStorm "$n" 8 5000 "$sync" \
        >"$work/out-$eng" 2>"$work/err-$eng" &
    local pid=$!
    pids+=($pid)
    storm_wait() {
        wait_for -p $pid 180 has_line "^$1\$" "$work/out-$eng" && return 0
        cp "$work/err-$eng" "$work/err"; fail "$eng: ThreadStorm never printed '$1'"
    }
    rss() { awk '$1 == "VmRSS:" { print $2 }' /proc/$pid/status; }
    last_slots() { "$RP_DUMP" series "$rec" agent.slots | tail -1; }
    local rb re sb=0 se=0 smax=0 st=0 files=0
    storm_wait baseline
    if [ "$eng" != none ]; then
        rp ctl --raw $pid flush >/dev/null || fail "$eng: flush at the baseline failed"
        sb=$(last_slots)
    fi
    rb=$(rss)
    touch "$sync/base"
    storm_wait end
    if [ "$eng" != none ]; then
        rp ctl --raw $pid stop >/dev/null || fail "$eng: stop failed"
        sleep 0.3                         # the last records reach the rings
        rp ctl --raw $pid flush >/dev/null || fail "$eng: flush at the end failed"
        rp ctl --raw $pid status >"$work/status-$eng" || fail "$eng: status failed"
        se=$(last_slots)
        smax=$("$RP_DUMP" gauges "$rec" | awk -F'\t' '$1 == "agent.slots" { print $4 }')
    fi
    re=$(rss)
    touch "$sync/end"
    local rc=0
    wait $pid || rc=$?
    [ $rc = 0 ] || { cp "$work/err-$eng" "$work/err"; no_hs_err; fail "$eng: java exited $rc"; }
    if [ "$eng" != none ]; then
        st=$(json 'r["samples"]["cpu"] + r["samples"]["alloc"]' <"$work/status-$eng")
        recording_whole "$rec"
        files=$(rp summary "$rec" |
                awk '$1 == "samples" && ($2 == "cpu" || $2 == "alloc") { n += $3 } END { print n + 0 }')
        "$RP_DUMP" counters "$rec" | awk -F'\t' '$1 ~ /^lost\./ && $2 > 0 { sub(/^lost\./, "", $1); print $1, $2 }' |
            sort >"$work/lost_files-$eng"
        json '"\n".join("%s %d" % kv for kv in sorted(r["lost"].items()) if kv[1])' \
            <"$work/status-$eng" | sed '/^$/d' >"$work/lost_status-$eng"
        diff "$work/lost_files-$eng" "$work/lost_status-$eng" >/dev/null ||
            fail "$eng: loss counters differ: files $(cat "$work/lost_files-$eng") vs status $(cat "$work/lost_status-$eng")"
        local named
        named=$("$RP_DUMP" threads "$rec" | grep -c -E $'\tst-[0-9]+$' || true)
        [ "$named" -ge $((n / 4)) ] || fail "$eng: only $named of $n threads are in the recording"
    fi
    echo "$rb $re $sb $se ${smax:-0} $st $files $(awk '/ThreadStorm done/ { print $4 }' "$work/out-$eng")" \
        >"$work/result-$eng"
}

# The agent's memory after the churn is what it was at the baseline, within what
# it legitimately keeps: its slots (a ring, frame buffers) are never freed but
# reused, so their number follows the peak of threads live or ended-but-not-yet-
# drained (the flusher releases them every 100 ms), not the number ever started.
# The bound: the RSS growth from baseline to end with the agent, minus the same
# growth without it (the JVM's own: malloc arenas, code cache, ...), may not exceed
# the growth in slots times a slot's size plus 8 MiB (method-name caches, the
# chunk's thread-name pool, allocator slack). A leak of 1 KiB per thread (20 MiB
# over the 20 000 threads after the baseline) fails it. Slots themselves must stay bounded (< 2 000).
test_thread_churn() {
    local n=9000                      # 4000 after the 5000 of the baseline
    [ "$long" = 1 ] && n=100000
    local slot_kb=$(( (65536 + 1024 * 24) / 1024 ))   # ring=64k, depth=1024 pcs + Java frames
    local nb ne nsec
    storm_run none $n
    read -r nb ne _ _ _ _ _ nsec <"$work/result-none"
    note "no agent: RSS ${nb} kB -> ${ne} kB ($(( ne - nb )) kB) over $((n - 5000)) threads in ${nsec} s"
    # The slots are the registry's, whichever engine fills them: the async engine
    # here, both with RINGPROF_LONG_TESTS=1.
    local engines=async
    [ "$long" = 1 ] && engines="async jvmti"
    for eng in $engines; do
        local rb re sb se smax st files secs
        storm_run $eng $n
        read -r rb re sb se smax st files secs <"$work/result-$eng"
        local grow=$(( re - rb )) extra=$(( (re - rb) - (ne - nb) ))
        local allowed=$(( (se > sb ? se - sb : 0) * slot_kb + 8192 ))
        note "$eng: RSS ${rb} kB -> ${re} kB ($grow kB; $extra kB beyond the JVM's own, allowed $allowed kB); slots $sb -> $se (max $smax); samples: status $st, files $files; ${secs} s"
        [ "$st" -gt 1000 ] || fail "$eng: only $st samples: the test tests nothing"
        [ "$st" = "$files" ] || fail "$eng: status says $st samples, the files hold $files"
        [ "$smax" -lt 2000 ] || fail "$eng: slots grew to $smax: not reused"
        [ "$extra" -le "$allowed" ] ||
            fail "$eng: the agent's memory grew by $extra kB over $((n - 5000)) threads (allowed $allowed kB)"
    done
}

# ------------------------------------------------------------- 3. signals --

# What the existing tests cover (tests/agent/agent_tests.sh): a SIGPROF handler
# installed before the agent loads (agent_bad_options: refusal naming the signal,
# signal=VTALRM works), one installed after it (agent_handler_replaced: detected,
# counted once, timers deleted). Here the rest:
test_signals() {
    # (a) The application runs setitimer(ITIMER_PROF) after the agent started: its
    # SIGPROFs reach our handler with no ringprof timer behind them. They are
    # ignored and counted (lost.no_slot), the agent says once what is happening,
    # and the JVM and the sampling go on.
    RP_ITIMER_DELAY_MS=500 LD_PRELOAD="$RP_ITIMER" "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" \
        -agentpath:"$RP_AGENT=dir=$work/rec-itimer,interval=10ms" -cp "$RP_FJAR" ExitRace 2 3000 exit 0 \
        >"$work/out" 2>"$work/err" || { no_hs_err; fail "java exited $? with an ITIMER_PROF running"; }
    no_hs_err
    recording_whole "$work/rec-itimer"
    local stray w cpu
    stray=$("$RP_DUMP" counters "$work/rec-itimer" | awk -F'\t' '$1 == "lost.no_slot" { print $2 }')
    # The racers' sampled weight against the CPU they used (a busy machine may
    # give them little of it): the sampling goes on as before.
    read -r w cpu < <("$RP_DUMP" threads "$work/rec-itimer" |
        awk -F'\t' '$4 ~ /^racer-/ { w += $1; c += $3 } END { printf "%.0f %.0f\n", w, c }')
    note "ITIMER_PROF: ${stray:-0} foreign SIGPROFs counted as lost.no_slot; racers sampled $((w / 1000000)) ms of $((cpu / 1000000)) ms CPU; $(grep -m1 '^ringprof:' "$work/err" || echo 'no message')"
    [ "${stray:-0}" -gt 50 ] || fail "the foreign SIGPROFs were not counted (lost.no_slot ${stray:-0})"
    [ "$cpu" -gt 100000000 ] || fail "the racers ran only $((cpu / 1000000)) ms: the test tests nothing"
    within "$(awk -v w="$w" -v c="$cpu" 'BEGIN { print w / c }')" 0.7 1.3 ||
        fail "sampling did not go on: $((w / 1000000)) ms sampled of $((cpu / 1000000)) ms"
    grep -q "^ringprof: .*SIGPROF.*not from ringprof's timers.*signal=" "$work/err" ||
        fail "no clear message about the foreign SIGPROFs"
    [ "$(grep -c 'not from ringprof' "$work/err")" = 1 ] || fail "the message was not printed once"

    # (b) signal=USR1 around a SIGPROF taken before start-up: it works.
    LD_PRELOAD="$RP_TAKEN" "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" \
        -agentpath:"$RP_AGENT=dir=$work/rec-usr1,interval=1ms,signal=USR1" -cp "$RP_FJAR" ExitRace 2 1500 exit 0 \
        >"$work/out" 2>"$work/err" || { no_hs_err; fail "signal=USR1 did not work around a taken SIGPROF"; }
    cpu=$("$RP_DUMP" threads "$work/rec-usr1" | awk -F'\t' '$4 ~ /^racer-/ { s += $2 } END { print s + 0 }')
    note "signal=USR1 with SIGPROF taken: $cpu samples"
    [ "$cpu" -gt 20 ] || fail "signal=USR1: only $cpu samples"

    # (c) Attach into a JVM whose SIGPROF is taken: refused with the reason and the
    # remedy, nothing left behind; then attach with signal=VTALRM works.
    touch "$work/started"
    fresh "$work/out" "$work/err"
    LD_PRELOAD="$RP_TAKEN" "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" -cp "$RP_FJAR" \
        ExitRace 2 60000 exit 0 >"$work/out" 2>"$work/err" &
    local pid=$!
    pids+=($pid)
    wait_line -p $pid ready "$work/out" || fail "ExitRace did not start"
    rp attach --agent "$RP_AGENT" $pid "dir=$work/rec-attach,interval=1ms" >"$work/attach" 2>&1 &&
        fail "attach succeeded with SIGPROF taken"
    note "attach refused: $(tr '\n' ' ' <"$work/attach")"
    grep -q "SIGPROF already has a handler.*signal=" "$work/attach" ||
        fail "ringprof attach does not say why: $(cat "$work/attach")"
    no_leftovers $pid "$work/rec-attach"
    rp attach --agent "$RP_AGENT" $pid "dir=$work/rec-attach,interval=1ms,signal=VTALRM" \
        >"$work/attach" 2>&1 || fail "attach with signal=VTALRM failed: $(cat "$work/attach")"
    sleep 1
    rp ctl --raw $pid flush >/dev/null || fail "flush after attach failed"
    kill -TERM $pid
    wait $pid || true
    no_hs_err
    recording_whole "$work/rec-attach"
    no_leftovers $pid "$work/rec-attach"
    cpu=$("$RP_DUMP" threads "$work/rec-attach" | awk -F'\t' '$4 ~ /^racer-/ { s += $2 } END { print s + 0 }')
    note "attached with signal=VTALRM: $cpu samples"
    [ "$cpu" -gt 20 ] || fail "attach with signal=VTALRM: only $cpu samples"
}

# ------------------------------------------------------- 4. shutdown races --

# RP_FAULT_RUNS overrides the number of runs (to try a change quickly).
# Runs 1, 2, 5, 6, ... use the async engine, 3, 4, 7, 8, ... the jvmti one.
race_engine() { [ $(( ($1 - 1) % 4 )) -lt 2 ] && echo async || echo jvmti; }
iterations() { [ -n "${RP_FAULT_RUNS:-}" ] && echo "$RP_FAULT_RUNS" && return; [ "$long" = 1 ] && echo 200 || echo 8; }
rand_ms() { echo $(( $1 + RANDOM % ($2 - $1 + 1) )); }

# Kill process $1 if it still runs after 60 s of the clock (a hang: its exit
# status is then 137, which the tests report as one). The watchdog ends when the
# process does.
watchdog() {
    ( ended() { ! kill -0 "$1" 2>/dev/null; }
      wait_for 60 ended "$1" || kill -9 "$1" 2>/dev/null ) &
}
# How many lines of file $2 are exactly $1 (0 if there is no file).
count_of() { awk -v v="$1" '$0 == v { n++ } END { print n + 0 }' "${@:2}" 2>/dev/null || echo 0; }

# Start ExitRace with the agent (options $1; exit after $2 ms with mode $3 and code
# $4) in the background; sets pid and sock, and waits for the socket.
race_start() {
    rm -rf "$work/rec" "$work"/hs_err_*.log
    touch "$work/started"
    fresh "$work/out" "$work/err"
    "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" \
        -agentpath:"$RP_AGENT=dir=$work/rec$1" -cp "$RP_FJAR" ExitRace 6 "$2" "$3" "$4" \
        >"$work/out" 2>"$work/err" &
    pid=$!
    pids+=($pid)
    watchdog $pid
    sock="$work/rec/ringprof-$pid.sock"
    wait_for -p $pid 60 is_socket "$sock" || true   # (the exit may come first)
}

# Wait for the JVM started by race_start; it must exit with code $1, cleanly.
race_end() {
    local rc=0
    wait $pid || rc=$?
    [ $rc != 137 ] || fail "run $i: the JVM hung (killed after 60 s)"
    no_hs_err
    [ $rc = "$1" ] || fail "run $i: java exited $rc, the program's code was $1"
    recording_whole "$work/rec"
    no_leftovers $pid "$work/rec"
    ! grep -q "^ringprof: .*could not be closed" "$work/err" || fail "run $i: $(grep -m1 '^ringprof:' "$work/err")"
}

# Client processes (ringprof ctl) started by ctl_loop; each must end by itself
# with 0 (done) or 1 (a clean error: the agent is shutting down, or gone).
ctl_loop() {
    local out=$1; shift
    (
        while kill -0 $pid 2>/dev/null; do
            rc=0
            timeout -s KILL 20 "$RP_RINGPROF" ctl --raw --timeout 5 "$sock" "$@" >>"$out.replies" 2>>"$out.errors" || rc=$?
            echo "$rc" >>"$out"
            sleep 0.0$((RANDOM % 5))
        done
    ) &
}

# Every client ended with 0 or 1, never killed by the timeout (a hang).
clients_clean() {
    local f bad
    for f in "$@"; do
        [ -f "$f" ] || continue
        bad=$(grep -v -x -E '0|1' "$f" | sort | uniq -c | tr '\n' ' ' || true)
        [ -z "$bad" ] || fail "run $i: a client ended badly (exit codes: $bad; $(tail -2 "$f.errors" | tr '\n' ' '))"
        ! grep -q -v -E '^ringprof: |^ringprof ctl: |^$' "$f.errors" ||
            fail "run $i: a client printed: $(grep -m1 -v -E '^ringprof: |^ringprof ctl: ' "$f.errors")"
    done
}

# (a) The JVM exits (System.exit or Runtime.halt) while a flush is being written:
# 6 threads at depth 40 on 1 ms with 1 MiB rings and 4 KiB allocation sampling
# keep every flush busy; a client asks for flushes back to back.
test_exit_flush() {
    local n i ms mode code flushes=0 racing=0
    n=$(iterations)
    for i in $(seq "$n"); do
        ms=$(rand_ms 600 1600)
        mode=$([ $((i % 2)) = 0 ] && echo halt || echo exit)
        code=$((3 + i % 5))
        race_start ",engine=$(race_engine $i),interval=1ms,ring=1m,alloc=4k,flush=50ms" "$ms" $mode $code
        rm -f "$work/c1"*
        ctl_loop "$work/c1" flush
        race_end $code
        wait
        clients_clean "$work/c1"
        flushes=$((flushes + $(count_of 0 "$work/c1")))
        racing=$((racing + $(cat "$work/c1".* 2>/dev/null | grep -c -E "shutting down|cannot read the reply" || true)))
    done
    note "$n runs (exit and halt, both engines, after 0.6 to 1.6 s): all clean; $flushes flushes answered, $racing cut off in flight by the exit (a clean error)"
    [ "$flushes" -gt "$n" ] || fail "only $flushes flushes were answered: the race was not run"
}

# (b) Control requests from four clients in flight at the exit: status, flush,
# set interval, start/stop alloc.
test_exit_ctl() {
    local n i ms code ok=0 errs=0 racing=0
    n=$(iterations)
    for i in $(seq "$n"); do
        ms=$(rand_ms 600 1600)
        code=$((10 + i % 7))
        race_start ",engine=$(race_engine $i),interval=1ms,alloc=64k" "$ms" exit $code
        rm -f "$work/c"[1-4]*
        ctl_loop "$work/c1" status
        ctl_loop "$work/c2" flush
        ctl_loop "$work/c3" set interval=$((1 + RANDOM % 3))ms
        ctl_loop "$work/c4" $([ $((RANDOM % 2)) = 0 ] && echo start || echo stop) alloc
        race_end $code
        wait
        clients_clean "$work/c1" "$work/c2" "$work/c3" "$work/c4"
        ok=$((ok + $(count_of 0 "$work/c"[1-4])))
        errs=$((errs + $(count_of 1 "$work/c"[1-4])))
        racing=$((racing + $(cat "$work/c"[1-4].* 2>/dev/null | grep -c -E "shutting down|cannot read the reply" || true)))
        cat "$work/c"[1-4].errors >>"$work/all_errors" 2>/dev/null || true
    done
    # What the clients were told, by kind (paths and pids cut off).
    sed -E 's/[0-9]+/N/g; s|/[^ ]*|PATH|g' "$work/all_errors" 2>/dev/null | cut -c1-110 |
        sort | uniq -c | sort -rn | head -5 | sed 's/^/#   /' || true
    note "$n runs (both engines): $ok requests answered, $errs ended with a clean error ($racing of them in flight when the exit came); all exits clean"
    [ "$ok" -gt $((4 * n)) ] || fail "only $ok requests were answered: the race was not run"
}

# (c) Attach while the JVM exits: ringprof attach and jcmd JVMTI.agent_load,
# started at a random moment around the exit.
test_exit_attach() {
    local n i ms code rc loaded=0 refused=0 late=0 tool
    n=$(iterations)
    for i in $(seq "$n"); do
        ms=$(rand_ms 1000 1600)
        code=$((20 + i % 7))
        rm -rf "$work/rec" "$work"/hs_err_*.log
        touch "$work/started"
        fresh "$work/out" "$work/err"
        "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" -cp "$RP_FJAR" \
            ExitRace 4 "$ms" exit $code >"$work/out" 2>"$work/err" &
        pid=$!
        pids+=($pid)
        watchdog $pid
        wait_line -p $pid ready "$work/out" || fail "run $i: ExitRace did not start"
        local t0=$EPOCHREALTIME
        # Start the JVM's attach listener first (a refused load: the agent stays
        # unloaded), so that the real attach reaches Agent_OnAttach within
        # milliseconds; it is sent from 450 to 50 ms before the exit (the agent's
        # start takes about 100 ms, the exit a few), so runs land before, during
        # and after the JVM's VMDeath.
        timeout -s KILL 30 "$RP_RINGPROF" attach --agent "$RP_AGENT" $pid "interval=warm-up" \
            >/dev/null 2>&1 || true
        local at=$(( ms - 450 + RANDOM % 400 ))
        sleep "$(awk -v t0="$t0" -v now="$EPOCHREALTIME" -v at="$at" \
                 'BEGIN { d = at / 1000 - (now - t0); printf "%.3f", (d > 0 ? d : 0) }')"
        tool=ringprof
        [ $((i % 3)) = 0 ] && [ -x "$RP_JCMD" ] && tool=jcmd
        rc=0
        if [ $tool = jcmd ]; then
            timeout -s KILL 30 "$RP_JCMD" $pid JVMTI.agent_load "$RP_AGENT" \
                "\"dir=$work/rec,interval=1ms\"" >"$work/attach" 2>&1 || rc=$?
        else
            timeout -s KILL 30 "$RP_RINGPROF" attach --agent "$RP_AGENT" --timeout 10 $pid \
                "dir=$work/rec,interval=1ms" >"$work/attach" 2>&1 || rc=$?
        fi
        [ $rc != 137 ] || fail "run $i: $tool hung while the JVM exited"
        if [ $tool = ringprof ] && [ $rc = 0 ] || grep -q "return code: 0" "$work/attach"; then
            loaded=$((loaded + 1))
        elif grep -q "shutting down" "$work/attach" "$work/err"; then
            refused=$((refused + 1))
        else
            late=$((late + 1))            # the JVM was gone, or went mid-request
        fi
        local jrc=0
        wait $pid || jrc=$?
        [ $jrc != 137 ] || fail "run $i: the JVM hung (killed after 60 s)"
        no_hs_err
        [ $jrc = $code ] || fail "run $i: java exited $jrc, the program's code was $code ($tool: $(head -c 300 "$work/attach"))"
        [ ! -d "$work/rec" ] || ! ls "$work/rec" | grep -q '\.rpc' || recording_whole "$work/rec"
        no_leftovers $pid "$work/rec" $tool
    done
    note "$n runs: the agent was loaded $loaded times, refused as the JVM was shutting down $refused times, too late $late times; all exits clean"
}

# (d) The JVM exits (SIGTERM) while an attach is starting the agent: the test
# build's RINGPROF_TESTFAULT=slow_start=MS holds the start MS longer, once the
# timer handler is installed. A 3 s start: VMDeath waits for it, then the agent
# is stopped: the recording is whole, no socket or discovery file is left. A
# 60 s start: VMDeath waits a bounded time (5 s), says so, and lets the JVM
# exit long before the start would have ended (without the bound the exit waits
# for the start, and the watchdog or the 30 s limit below fails the test).
test_exit_slow_start() {
    local ms rc t0 secs apid
    for ms in 3000 60000; do
        rm -rf "$work/rec" "$work"/hs_err_*.log
        touch "$work/started"
        fresh "$work/out" "$work/err"
        RINGPROF_TESTFAULT=slow_start=$ms "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" \
            -cp "$RP_FJAR" ExitRace 2 120000 exit 0 >"$work/out" 2>"$work/err" &
        pid=$!
        pids+=($pid)
        wait_line -p $pid ready "$work/out" || fail "$ms ms: ExitRace did not start"
        fresh "$work/attach"
        timeout -s KILL 90 "$RP_RINGPROF" attach --agent "$RP_TEST_AGENT" --timeout 80 $pid \
            "dir=$work/rec,interval=1ms" >"$work/attach" 2>&1 &
        apid=$!
        # The attach (a JVM attach listener to start, then the agent's start up to
        # its timer handler) takes a second or so, tens on a loaded machine.
        wait_line -p $apid "start is slowed down" "$work/err" ||
            fail "$ms ms: the attach never reached the start (attach: $(head -c 300 "$work/attach" | tr '\n' ' '))"
        sleep 0.5
        t0=$EPOCHREALTIME
        watchdog $pid                     # from the exit on: a hang in it
        kill -TERM $pid
        rc=0
        wait $pid || rc=$?
        secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
        wait $apid || true
        no_hs_err
        note "start slowed by $ms ms: the JVM exited $rc after $secs s; attach: $(head -c 200 "$work/attach" | tr '\n' ' ')"
        [ $rc != 137 ] || fail "$ms ms: the JVM hung in its exit (killed after 60 s)"
        [ $rc = 143 ] || fail "$ms ms: java exited $rc, not 143 (SIGTERM)"
        if [ $ms = 3000 ]; then
            [ ! -d "$work/rec" ] || ! ls "$work/rec" | grep -q '\.rpc' || recording_whole "$work/rec"
            ls "$work/rec" | grep -q '\.rpc' || fail "no chunk: the agent never ran"
            ! grep -q "Agent_OnAttach returned 0" "$work/attach" ||
                fail "ringprof attach reported a load that the exit undid as a success"
            # (The attach's reason may stay: the JVM can exit before ringprof
            # attach reads the reply; jcmd's rule.)
            no_leftovers $pid "$work/rec" jcmd
        else
            awk -v s="$secs" 'BEGIN { exit !(s < 30) }' ||
                fail "the exit took $secs s: VMDeath waited for the whole start"
            grep -q "^ringprof: the JVM exits while an attach is still starting" "$work/err" ||
                fail "no line saying VMDeath gave up waiting"
        fi
    done
}

# ------------------------------------------------------ 5. refused attach --

# An attach refused after the agent took its capabilities (dir= unwritable: the
# directory check comes after them) must hand them back: allocation sampling's
# capability is one per JVM, and the refused agent's JVMTI environment outlives
# it. Then a correct attach with alloc= records allocation samples, and says
# nothing about the capability being taken.
test_attach_refused() {
    touch "$work/started"
    # Busy (tests/java, in RP_JAR) allocates in ways that escape, until the
    # test ends it (SIGTERM) once the second agent has samples of both kinds. It
    # prints nothing: its jobs run once the Deflater class is loaded (an attach
    # during the JVM's start-up finds no JVMTI environment).
    fresh "$work/out" "$work/err"
    "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" -Xlog:class+load=info:file="$work/classes" \
        -cp "$RP_JAR" Busy 120 >"$work/out" 2>"$work/err" &
    local pid=$!
    pids+=($pid)
    wait_line -p $pid 'java.util.zip.Deflater ' "$work/classes" || fail "Busy did not start"
    # (Not a read-only directory: the tests may run as root, who writes anyway.)
    local bad=/proc/ringprof-cannot-exist/rec
    rp attach --agent "$RP_AGENT" $pid "dir=$bad,interval=1ms,alloc=64k" \
        >"$work/attach" 2>&1 && fail "attach into an unusable dir= succeeded"
    note "refused: $(tr '\n' ' ' <"$work/attach")"
    grep -q "dir=$bad" "$work/attach" || fail "ringprof attach does not say why: $(cat "$work/attach")"
    rp attach --agent "$RP_AGENT" $pid "dir=$work/rec,interval=1ms,alloc=64k" \
        >"$work/attach" 2>&1 || fail "the attach after a refused one failed: $(cat "$work/attach")"
    wait_for -p $pid - status_is 'r["samples"]["cpu"] > 20 and r["samples"]["alloc"] > 0' || true
    kill -TERM $pid
    local rc=0
    wait $pid || rc=$?
    no_hs_err
    [ $rc = 143 ] || fail "java exited $rc, not 143 (SIGTERM)"
    recording_whole "$work/rec"
    no_leftovers $pid "$work/rec"
    local cpu alloc
    cpu=$("$RP_DUMP" threads "$work/rec" | awk -F'\t' '{ s += $2 } END { print s + 0 }')
    alloc=$(RP_DUMP_KIND=alloc "$RP_DUMP" threads "$work/rec" | awk -F'\t' '{ s += $2 } END { print s + 0 }')
    note "second attach: $cpu CPU samples, $alloc allocation samples"
    [ "$cpu" -gt 20 ] || fail "only $cpu CPU samples: the test tests nothing"
    ! grep -q "allocation sampling is unavailable" "$work/err" ||
        fail "$(grep -m1 'allocation sampling is unavailable' "$work/err")"
    [ "$alloc" -gt 0 ] || fail "no allocation samples after a refused attach"
}

case "$test_name" in
unloading|thread_churn|signals|exit_flush|exit_ctl|exit_attach|exit_slow_start|attach_refused) "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
echo "ok ($test_name $engine)"
