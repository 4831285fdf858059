#!/usr/bin/env bash
# tests/agent/durability_tests.sh — the agent against the things that happen to a
# profiler left on for weeks: kill -9, a full disk, an unusable directory, and a
# small retention limit under load. One test per invocation:
#
#   durability_tests.sh kill9|header_kill|disk_full|disk_fsize|bad_dir|retention
#
# meson (tests/agent/meson.build) passes the programs in the environment, as for
# agent_tests.sh: RP_JAVA, RP_AGENT, RP_DUR_JAR (tests/java/Endure.java), RP_DUMP
# (rp_agent_dump), RP_TOOL (ringprof), RP_KILLHDR (the killhdr LD_PRELOAD library).
# RINGPROF_LONG_TESTS=1 makes kill9 and retention run long (docs/testing.md).
# The scratch directory is kept (and named) when a test fails.
set -uo pipefail

test_name=${1:?usage: durability_tests.sh TEST}
long=${RINGPROF_LONG_TESTS:-0}
. "$(dirname "$0")/../lib.sh"
rp_begin "dur-$test_name" "$test_name"
mnt=""
cleanup_hook() { [ -z "$mnt" ] || umount "$mnt" 2>/dev/null || true; }

java_cmd() { echo "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" -XX:-UsePerfData; }

# Total sampled weight (ns) of the threads named endure-* in recording $1.
endure_weight() {
    "$RP_DUMP" threads "$1" | awk -F'\t' '$4 ~ /^endure-/ { w += $1 } END { printf "%.0f\n", w }'
}
# CPU time (ns) that the kernel has charged to the endure-* threads of process $1:
# the first field of /proc/PID/task/TID/schedstat (sum_exec_runtime, exact to the
# ns). HotSpot gives each Java thread its name as the native thread name.
endure_cpu() { thread_cpu_ns "$1" 'endure-*'; }
# A counter's total in recording $1.
counter_of() {
    "$RP_DUMP" counters "$1" | awk -F'\t' -v k="$2" '$1 == k { v += $2 } END { printf "%.0f\n", v }'
}
# Every counted loss in the recording $1: the sum of its lost.* counters.
lost_total() {
    "$RP_DUMP" counters "$1" | awk -F'\t' '$1 ~ /^lost\./ { v += $2 } END { printf "%.0f\n", v }'
}
# Bytes of the chunk files (*.rpc, *.rpc.part) in $1, each inode counted once (a
# file renamed while find reads the directory may be listed under both names).
chunk_bytes() {
    find "$1" -maxdepth 1 -type f \( -name '*.rpc' -o -name '*.rpc.part' \) \
        -printf '%i %s\n' 2>/dev/null | sort -u -k1,1 |
        awk '{ s += $2 } END { printf "%.0f\n", s }' || true
}
# Waits up to $2 seconds for "started" in file $1.
# wait_started FILE PID: Endure (PID) printed "started" in FILE.
wait_started() { wait_line -p "$2" started "$1"; }

# ---------------------------------------------------------------- kill -9 --
#
# A JVM with the agent at interval=1ms, flush=200ms runs two CPU-bound threads and
# is killed with SIGKILL at a random instant 0.3 s to 2 s after it was started
# (even trials) or 0.5 s to 2.1 s after its threads run (odd trials: these test
# the loss bound however slowly the JVM starts) (12 trials; 200 with
# RINGPROF_LONG_TESTS=1). Each trial checks:
#
# 1. Every file left behind is readable: rp_agent_dump check (every file's header
#    valid, no damaged segment, no bad record, no dangling reference) and
#    `ringprof summary --strict`. A segment cut off by the end of the file is not
#    damage (the reader counts it as partial); the writer appends one segment per
#    pwrite, so at most the last one can be cut. At most one .part per process.
#
# 2. What is lost is at most the last flush interval. The bound: the flusher
#    wakes every DRAIN = 100 ms (src/flush/flusher.c DRAIN_NS) and writes a segment at
#    the first wake-up at or after FLUSH = 200 ms since the previous one; that
#    segment holds every sample pushed to a ring before its drain. So at any
#    instant the samples on disk cover at least everything the threads' CPU timers
#    reported up to (now - FLUSH - DRAIN - WRITE), where WRITE is the time to drain,
#    compress and pwrite one segment (plus scheduling delay on a loaded machine);
#    we allow SLACK = 100 ms for it. The test reads the endure-* threads' CPU time
#    C0 from /proc (schedstat, ns) at least W = FLUSH + DRAIN + SLACK = 400 ms
#    before the kill, and C1 just before it. Then
#        recorded weight of endure-*  >=  C0 - TOL
#    where TOL = threads x (interval + one scheduler tick (<= 10 ms) + 10 ms) +
#    1% of C0: a thread's CPU since its timer last expired is not yet in any
#    sample (expiry is checked on the tick), and weights are whole intervals.
#    Rather than a rate times a window, this measures the CPU actually spent
#    before the window, so it holds however the machine schedules the threads.
#    Loss reported = C1 - recorded; its bound is C1 - C0 + TOL.
#
# 3. After all trials, their files are put in one directory and a JVM with the
#    agent starts there: every .part must have become a .rpc with the same name
#    (docs/recording.md, recovery of orphaned .part files), still readable.
test_kill9() {
    local trials=6 flush_ms=200 drain_ms=100 slack_ms=100 nthreads=2
    [ "$long" = 1 ] && trials=200
    local w_ms=$((flush_ms + drain_ms + slack_ms))
    local all="$work/all"
    mkdir -p "$all"
    local i worst_ratio=0 max_loss=0 sum_loss=0 nparts=0 nfiles_total=0 checked=0
    for i in $(seq "$trials"); do
        local d="$work/t$i" delay_ms pid c0=0 c1=0 t0
        mkdir -p "$d"
        delay_ms=$((300 + RANDOM % 1701))
        t0=$(date +%s%N)
        $(java_cmd) -agentpath:"$RP_AGENT=dir=$d/rec,interval=1ms,flush=${flush_ms}ms" \
            -cp "$RP_DUR_JAR" Endure $nthreads 0 1 >"$d/out" 2>"$d/err" &
        pid=$!
        # Odd trials count the delay from the program's start (its threads
        # run), even ones from the JVM's: kills during the start-up stay, and a
        # loaded machine, where the start-up takes longer than 2 s, still gives
        # the loss bound trials to check.
        if [ $((i % 2)) = 1 ]; then
            wait_started "$d/out" $pid || { show_err "$d/err"; fail "trial $i: Endure did not start"; }
            t0=$(date +%s%N)
            delay_ms=$((w_ms + 100 + RANDOM % 1601))
        fi
        # C0 at kill time - W (if the JVM is that old yet), C1 at the kill.
        local pre_ms=$((delay_ms - w_ms))
        if [ $pre_ms -gt 0 ]; then
            sleep "$(awk -v m=$pre_ms 'BEGIN { printf "%.3f", m / 1000 }')"
            c0=$(endure_cpu $pid)
        fi
        local now_ms=$((($(date +%s%N) - t0) / 1000000))
        local rest_ms=$((delay_ms - now_ms))
        [ $rest_ms -lt $w_ms ] && [ $pre_ms -gt 0 ] && rest_ms=$w_ms
        [ $rest_ms -gt 0 ] && sleep "$(awk -v m=$rest_ms 'BEGIN { printf "%.3f", m / 1000 }')"
        c1=$(endure_cpu $pid)
        kill -KILL $pid 2>/dev/null || true
        local at_ms=$((($(date +%s%N) - t0) / 1000000))
        wait $pid 2>/dev/null || true
        [ -z "$(complaints "$d/err")" ] || { show_err "$d/err"; fail "trial $i: the agent complained"; }
        # 1. Readable.
        local nfiles=0 nparts_here=0
        if [ -d "$d/rec" ]; then
            nfiles=$(find "$d/rec" -maxdepth 1 -type f \( -name '*.rpc' -o -name '*.rpc.part' \) | wc -l)
            nparts_here=$(find "$d/rec" -maxdepth 1 -type f -name '*.rpc.part' | wc -l)
        fi
        [ "$nparts_here" -le 1 ] || fail "trial $i: $nparts_here .part files from one process"
        local rec=0
        if [ "$nfiles" -gt 0 ]; then
            "$RP_DUMP" check "$d/rec" >"$d/check" ||
                fail "trial $i (killed at ${at_ms} ms): damaged files: $(cat "$d/check")"
            "$RP_TOOL" summary --strict --quiet "$d/rec" >"$d/summary" 2>&1 ||
                { sed 's/^/  /' "$d/summary" | head -20; fail "trial $i: ringprof summary --strict failed"; }
            local f
            for f in "$d"/rec/*.rpc "$d"/rec/*.rpc.part; do
                [ -f "$f" ] || continue
                [ -s "$f" ] || fail "trial $i: empty chunk file $(basename "$f") (torn header)"
            done
            rec=$(endure_weight "$d/rec")
        fi
        # 2. Loss within the bound.
        local tol=$((nthreads * 21000000 + c0 / 100))
        local loss=$((c1 - rec)) allowed=$((c1 - c0 + tol))
        note "trial $i: killed at ${at_ms} ms (planned ${delay_ms}), $nfiles files ($nparts_here .part); CPU $((c0 / 1000000)) ms at kill-${w_ms}ms, $((c1 / 1000000)) ms at kill; recorded $((rec / 1000000)) ms; lost $((loss / 1000000)) ms (bound $((allowed / 1000000)) ms)"
        [ "$rec" -ge $((c0 - tol)) ] ||
            fail "trial $i: only $((rec / 1000000)) ms recorded, but $((c0 / 1000000)) ms of CPU was spent more than ${w_ms} ms before the kill (tolerance $((tol / 1000000)) ms): more than one flush interval was lost"
        if [ "$c0" -gt 0 ]; then
            checked=$((checked + 1))
            [ $loss -gt $max_loss ] && max_loss=$loss
            sum_loss=$((sum_loss + loss))
        fi
        nparts=$((nparts + nparts_here)); nfiles_total=$((nfiles_total + nfiles))
        [ -d "$d/rec" ] && find "$d/rec" -maxdepth 1 -type f \( -name '*.rpc' -o -name '*.rpc.part' \) \
            -exec mv {} "$all"/ \;
        rm -rf "$d"
    done
    [ "$checked" -ge $((trials / 2)) ] ||
        fail "only $checked of $trials trials ran long enough to test the loss bound"
    note "$checked trials measured: largest loss $((max_loss / 1000000)) ms, mean $((sum_loss / checked / 1000000)) ms; flush ${flush_ms} ms"
    # 3. Recovery.
    [ "$nparts" -ge 1 ] || fail "no trial left a .part file: nothing to recover"
    find "$all" -name '*.rpc.part' -printf '%f\n' | sed 's/\.part$//' | sort >"$work/parts"
    local before
    before=$("$RP_DUMP" check "$all" | awk '{ print $8 }')
    $(java_cmd) -agentpath:"$RP_AGENT=dir=$all" -version >"$work/out" 2>"$work/err" ||
        { show_err "$work/err"; fail "the JVM in the recovery directory exited $?"; }
    local left
    left=$(find "$all" -name '*.rpc.part' | wc -l)
    [ "$left" -eq 0 ] || fail "$left .part files were not recovered: $(ls "$all" | grep part | head -3)"
    local missing
    missing=$(comm -23 "$work/parts" <(find "$all" -name '*.rpc' -printf '%f\n' | sort) | wc -l)
    [ "$missing" -eq 0 ] || fail "$missing .part files were not renamed to their .rpc name"
    "$RP_DUMP" check "$all" >"$work/check" || fail "recovered files are damaged: $(cat "$work/check")"
    local after
    after=$(awk '{ print $8 }' "$work/check")
    [ "$after" -ge "$before" ] || fail "samples went from $before to $after after recovery"
    note "$nfiles_total files from $trials kills, $nparts .part recovered as .rpc; $after samples readable"
}

# ---------------------------------------------------- kill in the header --
#
# The one instant the random kills almost never hit: between creating a chunk
# file (open O_CREAT|O_EXCL) and writing its header (pwrite at offset 0). The
# killhdr LD_PRELOAD library sends SIGKILL to the process at its first pwrite at
# offset 0 to a file whose name ends in ".rpc.part". Invariant 5 says a process
# killed at any instant leaves files the reader handles; an empty file with a
# chunk name is not a readable chunk. The test asserts that after the next
# agent start in that directory (recovery), every chunk file reads cleanly.
test_header_kill() {
    [ -n "${RP_KILLHDR:-}" ] || { echo "RP_KILLHDR not set: skipped"; exit 77; }
    local rc=0
    RP_KILLHDR_ARM=1 LD_PRELOAD="$RP_KILLHDR" $(java_cmd) \
        -agentpath:"$RP_AGENT=dir=$work/rec,interval=1ms" -cp "$RP_DUR_JAR" Endure 1 3 1 \
        >"$work/out" 2>"$work/err" || rc=$?
    [ $rc -eq 137 ] || { show_err "$work/err"; fail "the JVM was not killed at the header write (exit $rc)"; }
    note "killed at the header write: $(ls -l "$work/rec" | grep rpc | awk '{ print $5, $9 }' | tr '\n' ' ')"
    $(java_cmd) -agentpath:"$RP_AGENT=dir=$work/rec" -version >"$work/out" 2>"$work/err" ||
        { show_err "$work/err"; fail "the next JVM in the directory exited $?"; }
    ls -l "$work/rec" | grep rpc | sed 's/^/#   /'
    "$RP_DUMP" check "$work/rec" >"$work/check" ||
        fail "KNOWN AGENT BUG (recorder/chunk_writer.c rp_chunk_writer_open: the file is created before its header is written): a kill between the two leaves an empty chunk file that recovery renames to .rpc and that no reader can open: $(cat "$work/check")"
    note "$(cat "$work/check")"
}

# -------------------------------------------------------------- disk full --
#
# The recording directory is on a 2 MiB tmpfs. Once the agent writes, the test
# fills the file system (a filler file, dd until ENOSPC), waits 2 s, deletes the
# filler and creates the phase file, which moves the program's leaf from phaseA()
# to phaseB(), where each thread spends 1 s of its own CPU time before the program
# ends (however long the clock takes on a loaded machine). With chunksize=64k both failures happen: segment writes (ENOSPC →
# lost.write) and chunk creation (→ lost.no_chunk). Asserts: the JVM keeps
# running and exits 0; the losses are counted in the files and logged, the failed
# segments in one line (rate-limited); after space returns new samples (phaseB)
# are written; nothing read is damaged.
test_disk_full() {
    mnt="$work/mnt"
    mkdir -p "$mnt"
    if ! mount -t tmpfs -o size=2m tmpfs "$mnt" 2>/dev/null; then
        mnt=""
        echo "cannot mount a tmpfs (not root?): skipped"
        exit 77
    fi
    local pid rc=0
    fresh "$work/out" "$work/err"
    $(java_cmd) -agentpath:"$RP_AGENT=dir=$mnt/rec,interval=1ms,flush=100ms,chunksize=64k,chunktime=1s,ctl=off" \
        -cp "$RP_DUR_JAR" Endure 2 1 1 "$work/phaseB" >"$work/out" 2>"$work/err" &
    pid=$!
    pids+=("$pid")      # (this pid is local: the exit trap kills what is in pids)
    wait_started "$work/out" $pid || { kill -KILL $pid; show_err "$work/err"; fail "the program did not start"; }
    # phaseA gets a second of the endure threads' CPU (ten times what is
    # asserted below) before the disk fills; a second of the clock may be less
    # on a loaded machine.
    wait_for -p $pid - cpu_at_least 1000000000 $pid 'endure-*' ||
        fail "the endure threads did not get 1 s of CPU"
    local before
    before=$(chunk_bytes "$mnt/rec")
    dd if=/dev/zero of="$mnt/filler" bs=4k >/dev/null 2>&1 || true
    note "recording ${before} bytes; filler $(stat -c %s "$mnt/filler") bytes; free now $(df --output=avail -B1 "$mnt" | tail -1) bytes"
    # Full until the agent has failed to create a chunk (chunktime=1s: within
    # about a second, later on a loaded machine), and at least 2 s.
    sleep 2
    wait_line -p $pid '^ringprof: cannot open a chunk' "$work/err" || true
    kill -0 $pid 2>/dev/null || fail "the JVM died while the disk was full"
    rm -f "$mnt/filler"
    touch "$work/phaseB"
    note "space returned"
    wait $pid || rc=$?
    [ $rc -eq 0 ] || { show_err "$work/err"; fail "java exited $rc"; }
    grep -q "Endure done" "$work/out" || fail "the program did not finish"
    local logged
    logged=$(grep -c -E '^ringprof: (a segment could not be written|cannot open a chunk)' "$work/err" || true)
    note "agent log: $(grep '^ringprof:' "$work/err" | sort | uniq -c | head -5 | tr -s ' ' | tr '\n' ';')"
    [ "$logged" -ge 1 ] || { show_err "$work/err"; fail "the write failures were not logged"; }
    # One line for the first failed segment; the rest of a 2 s outage (about 20
    # at flush=100ms) are counted and reported once writing works again.
    local seglines
    seglines=$(grep -c '^ringprof: a segment could not be written' "$work/err" || true)
    [ "$seglines" -le 1 ] || fail "$seglines lines for the failed segments of a 2 s outage: not rate-limited"
    "$RP_DUMP" check "$mnt/rec" >"$work/check" || fail "damaged recording: $(cat "$work/check")"
    local lw lnc pa pb
    lw=$(counter_of "$mnt/rec" lost.write)
    lnc=$(counter_of "$mnt/rec" lost.no_chunk)
    "$RP_DUMP" total "$mnt/rec" >"$work/total"
    pa=$(awk -F'\t' '$3 == "Endure.phaseA" { w += $1 } END { printf "%.0f\n", w }' "$work/total")
    pb=$(awk -F'\t' '$3 == "Endure.phaseB" { w += $1 } END { printf "%.0f\n", w }' "$work/total")
    note "lost.write $lw, lost.no_chunk $lnc; phaseA $((pa / 1000000)) ms before/while full, phaseB $((pb / 1000000)) ms after; $(cat "$work/check")"
    # Which counter a full disk shows depends on where it strikes: a write into the
    # open chunk fails (lost.write), unless the chunk still has slack in its last
    # page until it rotates (chunktime=1s), in which case only the next chunk's
    # creation fails (lost.no_chunk). Both are counted losses; at least one must be.
    [ $((lw + lnc)) -gt 0 ] || fail "no loss counted (lost.write, lost.no_chunk) while the disk was full"
    [ "$lnc" -gt 0 ] || fail "no lost.no_chunk counted while chunks could not be created (chunktime=1s)"
    grep -q '^ringprof: cannot open a chunk' "$work/err" || fail "the failed chunk creation was not logged"
    # No silent loss: what the endure threads spent (their last THREAD_CPU record)
    # and is not in a sample must be covered by the counted losses, at the mean
    # sample weight. The counters count every thread's samples, so this bound is
    # generous for the endure threads, never too tight.
    local acct
    acct=$("$RP_DUMP" threads "$mnt/rec" | awk -F'\t' -v lost="$(lost_total "$mnt/rec")" '
        $4 ~ /^endure-/ { w += $1; n += $2; cpu += $3 }
        END { mw = n ? w / n : 0; printf "%.0f %.0f %.0f\n", cpu, w, cpu - w - lost * mw }')
    local cpu wt silent
    read -r cpu wt silent <<<"$acct"
    note "endure threads: CPU $((cpu / 1000000)) ms, sampled $((wt / 1000000)) ms, not accounted for by the loss counters $((silent / 1000000)) ms"
    [ "$silent" -le $((cpu / 20 + 100000000)) ] ||
        fail "$((silent / 1000000)) ms of CPU is neither sampled nor counted as lost"
    [ "$pa" -gt 100000000 ] || fail "only $((pa / 1000000)) ms of phaseA recorded"
    [ "$pb" -gt 300000000 ] || fail "writing did not resume after space returned: phaseB only $((pb / 1000000)) ms"
    grep -q "last chunk in .* could not be closed" "$work/err" &&
        fail "the last chunk was not closed although space had returned"
    return 0
}

# ------------------------------------------- file-size limit (EFBIG) --
#
# The same without a mount: RLIMIT_FSIZE (prlimit --fsize=24k) on the JVM, with
# chunksize=64k and chunktime=1s. Every chunk stops growing at 40 KiB (writes fail
# with EFBIG, and the kernel sends SIGXFSZ, which must not kill the JVM: HotSpot
# ignores it, and the agent must not undo that); each rotation by age starts a
# fresh chunk that takes samples again. Asserts: the JVM exits 0, lost.write is
# counted, no chunk exceeds the limit, several chunks hold samples, and the CPU
# not sampled is covered by the loss counters.
test_disk_fsize() {
    command -v prlimit >/dev/null || { echo "no prlimit: skipped"; exit 77; }
    local rc=0 limit=$((24 << 10))
    prlimit --fsize=$limit $(java_cmd) \
        -agentpath:"$RP_AGENT=dir=$work/rec,interval=1ms,flush=100ms,chunksize=64k,chunktime=1s,ctl=off" \
        -cp "$RP_DUR_JAR" Endure 2 6 800 >"$work/out" 2>"$work/err" || rc=$?
    [ $rc -eq 0 ] || { show_err "$work/err"; fail "java exited $rc under RLIMIT_FSIZE (SIGXFSZ not ignored?)"; }
    grep -q "Endure done" "$work/out" || fail "the program did not finish"
    "$RP_DUMP" check "$work/rec" >"$work/check" || fail "damaged recording: $(cat "$work/check")"
    local lw big nch
    lw=$(counter_of "$work/rec" lost.write)
    big=$(find "$work/rec" -name '*.rpc' -printf '%s\n' | sort -n | tail -1)
    nch=$(find "$work/rec" -name '*.rpc' | wc -l)
    note "lost.write $lw; $nch chunks, biggest $big bytes (limit $limit); $(cat "$work/check"); log: $(grep -c '^ringprof: a segment could not' "$work/err" || true) write failures"
    [ "$big" -le $limit ] || fail "a chunk of $big bytes exceeds the file size limit"
    [ "$nch" -ge 3 ] || fail "only $nch chunks: rotation did not go on after the failures"
    grep -q '^ringprof: a segment could not be written' "$work/err" ||
        { show_err "$work/err"; fail "the file size limit was never hit (or its failures not logged)"; }
    local acct cpu wt silent lost
    lost=$(lost_total "$work/rec")
    acct=$("$RP_DUMP" threads "$work/rec" | awk -F'\t' -v lost="$lost" '
        $4 ~ /^endure-/ { w += $1; n += $2; cpu += $3 }
        END { mw = n ? w / n : 0; printf "%.0f %.0f %.0f\n", cpu, w, cpu - w - lost * mw }')
    read -r cpu wt silent <<<"$acct"
    note "endure threads: CPU $((cpu / 1000000)) ms, sampled $((wt / 1000000)) ms, lost records $lost, not accounted for $((silent / 1000000)) ms"
    # No silent loss: what the threads spent and is not in a sample is covered by
    # the counted losses (every lost.* counter: write failures, and ring_full while
    # the flusher was busy with them), at the mean sample weight. This held only
    # once a chunk closed while its writes were failing hands its counters on to
    # the next chunk (rp_chunk_close_carry); before that they were dropped with it.
    [ "$silent" -le $((cpu / 20 + 100000000)) ] ||
        fail "$((silent / 1000000)) ms of CPU is neither sampled nor counted as lost (lost.* $lost, lost.write $lw)"
    [ "$lw" -gt 0 ] || fail "the limit was never hit or lost.write was not counted"
}

# ------------------------------------------------- unusable directory --
#
# A recording directory that cannot be created or written stops the JVM at
# Agent_OnLoad with one line naming the directory and the reason.
test_bad_dir() {
    local rc
    # Under a regular file: ENOTDIR.
    : >"$work/file"
    rc=0
    $(java_cmd) -agentpath:"$RP_AGENT=dir=$work/file/rec" -cp "$RP_DUR_JAR" Endure 1 1 1 \
        >"$work/out" 2>"$work/err" || rc=$?
    note "under a file: exit $rc: $(grep -m1 '^ringprof:' "$work/err")"
    [ $rc -ne 0 ] || fail "the JVM ran with dir under a regular file"
    grep -q "Endure done" "$work/out" && fail "the program ran although the agent could not record"
    [ "$(grep -c '^ringprof:' "$work/err")" -eq 1 ] || { show_err "$work/err"; fail "not exactly one ringprof line"; }
    grep -q "^ringprof: .*$work/file/rec.*Not a directory" "$work/err" ||
        { show_err "$work/err"; fail "the line does not name the directory and 'Not a directory'"; }
    # The directory is a regular file.
    rc=0
    $(java_cmd) -agentpath:"$RP_AGENT=dir=$work/file" -cp "$RP_DUR_JAR" Endure 1 1 1 \
        >"$work/out" 2>"$work/err" || rc=$?
    note "a file as dir: exit $rc: $(grep -m1 '^ringprof:' "$work/err")"
    [ $rc -ne 0 ] || fail "the JVM ran with dir= a regular file"
    grep -q "^ringprof: .*$work/file" "$work/err" || { show_err "$work/err"; fail "no line naming the file"; }
    # Not writable for the JVM's user: a root-owned 0755 directory, JVM run as nobody.
    if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
        note "not root or no setpriv: the unwritable-directory cases are skipped"
        return 0
    fi
    mkdir -m 755 "$work/ro"
    local as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env)
    "${as_nobody[@]}" test -r "$RP_AGENT" -a -r "$RP_DUR_JAR" ||
        { note "nobody cannot read the build tree: the unwritable-directory cases are skipped"; return 0; }
    local sub
    for sub in "" /rec; do
        rc=0
        "${as_nobody[@]}" "$RP_JAVA" -XX:-UsePerfData -agentpath:"$RP_AGENT=dir=$work/ro$sub" \
            -cp "$RP_DUR_JAR" Endure 1 1 1 >"$work/out" 2>"$work/err" || rc=$?
        note "nobody, dir=ro$sub: exit $rc: $(grep -m1 '^ringprof:' "$work/err")"
        [ $rc -ne 0 ] || { ls -la "$work/ro" | sed 's/^/#   /'; fail "KNOWN AGENT BUG? the JVM ran as nobody with the unwritable dir=$work/ro$sub"; }
        grep -q "Endure done" "$work/out" && fail "the program ran although the agent could not record"
        [ "$(grep -c '^ringprof:' "$work/err")" -eq 1 ] || { show_err "$work/err"; fail "not exactly one ringprof line"; }
        grep -q "^ringprof: .*$work/ro$sub.*Permission denied" "$work/err" ||
            { show_err "$work/err"; fail "the line does not name $work/ro$sub and 'Permission denied'"; }
    done
    [ -z "$(ls -A "$work/ro")" ] || fail "something was left in the unwritable directory"
}

# -------------------------------------------------------------- retention --
#
# maxsize=1m, chunksize=64k, flush=100ms at interval=1ms with four busy threads
# whose stacks are mostly new (deep random recursion), 20 s (10 min at maxsize=5m
# with RINGPROF_LONG_TESTS=1). The chunk files' total size, sampled every 0.5 s
# (1 s), must never exceed maxsize + chunksize + one segment (docs/recording.md:
# at most max_size of finished chunks, plus the open chunk, which is at most
# chunk_size plus one segment); a segment is allowed SEG = 64 KiB, and every
# finished chunk seen must itself be at most chunksize + SEG. Old chunks must
# really be deleted: more chunk names seen over the run than are left at the end.
test_retention() {
    local secs=20 maxsize=$((1 << 20)) maxopt=1m period=0.5
    [ "$long" = 1 ] && { secs=600; maxsize=$((5 << 20)); maxopt=5m; period=1; }
    local chunk=$((64 << 10)) seg=$((64 << 10))
    local bound=$((maxsize + chunk + seg))
    local pid rc=0 rec="$work/rec"
    fresh "$work/out" "$work/err"
    $(java_cmd) -agentpath:"$RP_AGENT=dir=$rec,interval=1ms,maxsize=$maxopt,chunksize=64k,flush=100ms" \
        -cp "$RP_DUR_JAR" Endure 4 "$secs" 800 >"$work/out" 2>"$work/err" &
    pid=$!
    local max=0 n=0 over=0 b biggest=0
    : >"$work/names"
    while kill -0 $pid 2>/dev/null; do
        b=$(chunk_bytes "$rec")
        n=$((n + 1))
        [ "$b" -gt $max ] && max=$b
        [ "$b" -gt $bound ] && { over=$((over + 1)); note "over the bound: $b bytes: $(ls -l "$rec" | awk '{ print $5, $9 }' | tr '\n' ' ')"; }
        find "$rec" -maxdepth 1 -type f -name '*.rpc' -printf '%s %f\n' 2>/dev/null >>"$work/names" || true
        sleep $period
    done
    wait $pid || rc=$?
    [ $rc -eq 0 ] || { show_err "$work/err"; fail "java exited $rc"; }
    [ -z "$(complaints "$work/err")" ] || { show_err "$work/err"; fail "the agent complained"; }
    biggest=$(awk '$1 > m { m = $1 } END { printf "%.0f\n", m }' "$work/names")
    local seen left
    seen=$(awk '{ print $2 }' "$work/names" | sort -u | wc -l)
    left=$(find "$rec" -maxdepth 1 -name '*.rpc' | wc -l)
    note "$n samples of the directory over ${secs} s: max $max bytes (bound $bound = maxsize $maxsize + chunksize $chunk + segment $seg); biggest finished chunk $biggest; $seen chunk names seen, $left left, final size $(chunk_bytes "$rec")"
    [ $n -ge $((secs / 2)) ] || fail "only $n samples of the directory"
    [ $over -eq 0 ] || fail "the directory exceeded maxsize + one chunk $over times (max $max > $bound)"
    [ "$biggest" -le $((chunk + seg)) ] || fail "a finished chunk of $biggest bytes exceeds chunksize + one segment"
    [ "$seen" -gt "$left" ] || fail "no chunk was deleted ($seen seen, $left left)"
    [ "$max" -gt $((maxsize / 2)) ] || fail "the recording reached only $max bytes: retention was not exercised"
    [ "$(chunk_bytes "$rec")" -le $((maxsize + chunk + seg)) ] || fail "final size over the bound"
    "$RP_DUMP" check "$rec" >"$work/check" || fail "damaged recording: $(cat "$work/check")"
    note "$(cat "$work/check")"
}

case "$test_name" in
kill9|disk_full|disk_fsize|bad_dir|retention|header_kill) "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
echo "ok ($test_name)"
