#!/usr/bin/env bash
# tests/agent/alloc_tests.sh — allocation sampling and live objects in real JVMs
# (options alloc= and live=, docs/options.md; kinds alloc, live and gc,
# docs/format.md). One test per invocation:
#
#   alloc_tests.sh TEST [ALLOC]
#
# TEST is volumes, leak, churn, weakrefs, rate or soak; ALLOC (volumes only) is the
# alloc= option, default the agent's default. meson (tests/agent/meson.build)
# passes the programs in the environment: RP_JAVA, RP_AGENT (libringprof.so),
# RP_JAR (tests/java), RP_DUMP (rp_agent_dump), RP_RINGPROF (the ringprof
# command). The truths are measured in the programs (the JVM's own per-thread
# allocated bytes, weak references), never taken from the agent. The scratch
# directory is kept (and named) when a test fails.
set -uo pipefail

test_name=${1:?usage: alloc_tests.sh TEST [ALLOC]}
alloc=${2:-}
. "$(dirname "$0")/../lib.sh"
rp_begin "alloc-$test_name" "$test_name${alloc:+ alloc=$alloc}"
# In an ASan build java runs under sanitized_java.sh (meson sets RP_SAN_CHECK to
# it), which writes ASan/UBSan/LSan reports into $RP_SAN_LOGDIR: fail() shows
# those that count, and san_check, before "ok", fails the test on any
# (docs/sanitizers.md). Sums are printed with %.0f because mawk prints large
# ones as 1.5e+09.

# site_bytes FILE FRAME [CLASS]: the weight, in collapsed output FILE, of the
# stacks that hold a frame named FRAME (with any type suffix, _[j] and the like)
# and, if CLASS is given, end with the allocated class CLASS (the last frame).
site_bytes() {
    awk -v m="$2" -v cls="${3:-}" '{
        w = $NF; s = substr($0, 1, length($0) - length(w) - 1)
        n = split(s, f, ";")
        if (cls != "" && f[n] != cls) next
        for (i = 1; i < n; i++) { g = f[i]; sub(/_\[[a-z0-9]\]$/, "", g); if (g == m) { t += w; break } }
    } END { printf "%.0f\n", t }' "$1"
}
# total_weight FILE: the weight of every line of collapsed output FILE.
total_weight() { awk '{ t += $NF } END { printf "%.0f\n", t }' "$1"; }

# The program's figures: "site NAME CLASS objects N bytes B" -> "N B".
site_truth() { awk -v s="$1" '$1 == "site" && $2 == s { print $5, $7 }' "$work/out"; }

# ---------------------------------------------------------------- volumes --
#
# AllocVolumes allocates 2 GiB as byte[4096] in bytes() and 1 GiB as
# java.lang.Long in longs(); the JVM measures what each allocated. The estimated
# bytes of each site (the alloc samples' weights, collapsed output) must be within
# 10% of the truth, and so must the estimated object counts (the SITES table);
# the class names must be right. At the default 512k that is about 4000 and
# 2000 samples, so 10% is over four standard deviations. (At 128k and below this
# one thread's 20 000 or more samples a second overflow its 64 KiB ring when the
# machine is busy: the losses are counted, but the sites come out short.) Then
# the same program with alloc=off must leave no alloc sample at all.
test_volumes() {
    local opt=
    [ -n "$alloc" ] && opt=",alloc=$alloc"
    # ring=1m: one thread allocating 4 GB/s takes 8 000 or more samples a
    # second (250 bytes each with the stack); the default 64k ring holds 30 ms
    # of them, and a CI machine running tests side by side can keep the flusher
    # off the CPU for longer. The losses would be counted, but this test is
    # about the estimates.
    java_run -Xmx256m -agentpath:"$RP_AGENT=dir=$work/rec,ring=1m,allocrate=off$opt" -- AllocVolumes 2048 1024 ||
        { rc=$?; show_err; fail "java exited $rc"; }
    no_hs_err
    local tb tl nb nl
    read -r nb tb <<<"$(site_truth bytes)"
    read -r nl tl <<<"$(site_truth longs)"
    [ "${tb:-0}" -gt 2000000000 ] && [ "${tl:-0}" -gt 1000000000 ] ||
        fail "the program did not allocate what it should: $(cat "$work/out")"
    rp convert --event alloc --format collapsed -o "$work/alloc.collapsed" "$work/rec" 2>"$work/conv.err" ||
        fail "ringprof convert --event alloc failed: $(cat "$work/conv.err")"
    local eb el ab al all
    eb=$(site_bytes "$work/alloc.collapsed" AllocVolumes.bytes 'byte[]')
    el=$(site_bytes "$work/alloc.collapsed" AllocVolumes.longs java.lang.Long)
    ab=$(site_bytes "$work/alloc.collapsed" AllocVolumes.bytes)
    al=$(site_bytes "$work/alloc.collapsed" AllocVolumes.longs)
    all=$(total_weight "$work/alloc.collapsed")
    note "bytes(): truth $tb bytes in $nb objects, estimated $eb as byte[] ($(ratio "$eb" "$tb")), $ab in all"
    note "longs(): truth $tl bytes in $nl objects, estimated $el as java.lang.Long ($(ratio "$el" "$tl")), $al in all"
    note "the whole profile: $(mib "$all")"
    # Samples a full ring dropped are counted (lost.*), but not by site: the
    # estimate is then short, and the message says why.
    local lost
    lost=$("$RP_DUMP" counters "$work/rec" | awk -F'\t' '$1 ~ /^lost\./ { n += $2 } END { printf "%.0f\n", n }')
    note "records lost: $lost"
    within "$(ratio "$eb" "$tb")" 0.9 1.1 || fail "bytes(): estimated $eb bytes of byte[], truth $tb: not within 10% ($lost records lost)"
    within "$(ratio "$el" "$tl")" 0.9 1.1 || fail "longs(): estimated $el bytes of java.lang.Long, truth $tl: not within 10% ($lost records lost)"
    # The class names: nothing else is allocated there, so nothing else may show.
    [ "$ab" = "$eb" ] || fail "bytes() shows $((ab - eb)) bytes of other classes: $(grep 'AllocVolumes.bytes' "$work/alloc.collapsed" | grep -v ';byte\[\] [0-9]*$' | head -3)"
    [ "$al" = "$el" ] || fail "longs() shows $((al - el)) bytes of other classes: $(grep 'AllocVolumes.longs' "$work/alloc.collapsed" | grep -v ';java.lang.Long [0-9]*$' | head -3)"
    # The two sites are almost all of it (the rest is the JVM's start-up).
    within "$(ratio $((eb + el)) "$all")" 0.95 1 || fail "the two sites are only $(ratio $((eb + el)) "$all") of the profile"
    # SITES: the estimated object counts (the allocated "objs" column, the
    # fourth from the end of a row), summed over the rows of each class: a site
    # may show as two traces (bytes() interpreted, then compiled).
    rp convert --event alloc --format flat "$work/rec" >"$work/sites" 2>"$work/conv.err" ||
        fail "ringprof convert --format flat failed: $(cat "$work/conv.err")"
    awk '/^SITES BEGIN/ { on = 1; next } /^SITES END/ { on = 0 }
         on && $1 ~ /^[0-9]+$/ { n[$NF] += $(NF - 3) }
         END { printf "%.0f %.0f\n", n["byte[]"], n["java.lang.Long"] }' "$work/sites" >"$work/objs"
    local ob ol
    read -r ob ol <"$work/objs"
    note "SITES: $ob byte[] ($(ratio "$ob" "$nb")), $ol java.lang.Long ($(ratio "$ol" "$nl")) estimated"
    within "$(ratio "$ob" "$nb")" 0.9 1.1 || fail "byte[]: estimated $ob objects, truth $nb"
    within "$(ratio "$ol" "$nl")" 0.9 1.1 || fail "java.lang.Long: estimated $ol objects, truth $nl"
    # The class histogram, from the same recording: the byte[] and
    # java.lang.Long rows (bytes and objects, the fourth and third columns from
    # the end, the bytes in binary units ("12.34 MiB", two fields); the JVM's
    # own start-up allocates a few MB of each at most) within 10% of the
    # program's figures, and byte[] ranked first.
    rp convert --event alloc --format histogram "$work/rec" >"$work/histo" 2>"$work/conv.err" ||
        fail "ringprof convert --format histogram failed: $(cat "$work/conv.err")"
    local hb ho lb lo first
    read -r first hb ho lb lo < <(awk '
         function bytes(u) { return $(NF - 4) * (u == "KiB" ? 2^10 : u == "MiB" ? 2^20 : u == "GiB" ? 2^30 : 1) }
         /^CLASS HISTOGRAM BEGIN/ { on = 1; next } /^CLASS HISTOGRAM END/ { on = 0 }
         on && $1 ~ /^[0-9]+$/ { if ($1 == 1) first = $NF; b[$NF] = bytes($(NF - 3)); o[$NF] = $(NF - 2) }
         END { printf "%s %.0f %.0f %.0f %.0f\n", first, b["byte[]"], o["byte[]"], b["java.lang.Long"], o["java.lang.Long"] }' "$work/histo")
    note "histogram: byte[] $hb bytes ($(ratio "$hb" "$tb")), $ho objects ($(ratio "$ho" "$nb")); java.lang.Long $lb bytes ($(ratio "$lb" "$tl")), $lo objects ($(ratio "$lo" "$nl")); first $first"
    [ "$first" = "byte[]" ] || fail "histogram: $first ranked first, not byte[]: $(head -12 "$work/histo")"
    within "$(ratio "$hb" "$tb")" 0.9 1.1 && within "$(ratio "$ho" "$nb")" 0.9 1.1 &&
        within "$(ratio "$lb" "$tl")" 0.9 1.1 && within "$(ratio "$lo" "$nl")" 0.9 1.1 ||
        fail "histogram: a class's bytes or objects not within 10% of the truth (above)"

    # alloc=off: not one alloc sample.
    rm -rf "$work/rec"
    java_run -Xmx256m -agentpath:"$RP_AGENT=dir=$work/rec,alloc=off" -- AllocVolumes 256 128 ||
        { rc=$?; show_err; fail "java exited $rc with alloc=off"; }
    rp summary "$work/rec" >"$work/summary" 2>&1 || fail "ringprof summary failed: $(cat "$work/summary")"
    grep -q "samples .*alloc" "$work/summary" && fail "alloc=off recorded alloc samples: $(grep alloc "$work/summary")"
    grep -q "samples .*cpu" "$work/summary" || fail "alloc=off: no cpu samples either (the run tests nothing)"
    note "alloc=off: no alloc samples"
}

# ------------------------------------------------------------ leak, churn --
#
# LeakGrow leak: "leaker" adds 4 MiB/s of long[126] to a static list in leak(),
# for 16 s, while two threads churn 100 MB/s of short-lived maps; live=on and a
# flush a second give 16 live snapshots. `ringprof leaks` must rank the site
# (LeakGrow.leak, long[]) first. LeakGrow churn: only the churn, for 12 s:
# `ringprof leaks` must say "no growing allocation site".
run_leakgrow() {
    java_run -Xmx1g -agentpath:"$RP_AGENT=dir=$work/rec,live=on,flush=1s" -- LeakGrow "$1" "$2" ||
        { rc=$?; show_err; fail "java exited $rc"; }
    no_hs_err
    grep -q "LeakGrow $1 done" "$work/out" || fail "LeakGrow did not finish"
    rp leaks "$work/rec" >"$work/leaks" 2>"$work/leaks.err" ||
        fail "ringprof leaks failed: $(cat "$work/leaks.err")"
    sed 's/^/#   /' "$work/leaks" | head -30
    local snaps
    snaps=$("$RP_DUMP" series "$work/rec" live.objects | wc -l)
    note "$snaps live snapshots; $(cat "$work/out")"
    [ "$snaps" -ge $(($2 - 3)) ] || fail "only $snaps live snapshots in $2 s at flush=1s"
}

test_leak() {
    run_leakgrow leak 16
    grep -q "no growing allocation site" "$work/leaks" && fail "ringprof leaks found no growing site in a leak"
    # Rank 1's row in the LEAKS table (columns named by its header), and its
    # trace: the leaf frame must be LeakGrow.leak and the class long[]; its last
    # live bytes must be near what the program leaked (1 KiB an object; objects
    # younger than one GC, up to a second's worth, are not counted).
    local leaked
    leaked=$(awk '$1 == "LeakGrow" { print $4 * 1024 }' "$work/out")
    python3 - "$work/leaks" "$leaked" <<'EOF' || fail "the leak is not ranked first, or its figures are wrong (above)"
import re, sys
text, leaked = open(sys.argv[1]).read(), int(sys.argv[2])
table = text.split("LEAKS BEGIN", 1)[1].split("LEAKS END", 1)[0].splitlines()[1:]
head = table[0].split()
rows = [dict(zip(head, l.split())) for l in table[1:] if l.split()]
assert rows and rows[0]["rank"] == "1", "no row ranked 1: %s" % table
first = rows[0]
trace = re.search(r"(?m)^TRACE %s:\n((?:\t.*\n?)+)" % first["trace"], text)
assert trace, "no TRACE %s" % first["trace"]
leaf = trace.group(1).splitlines()[0].strip()
live = int(first["live-last"])
print("# rank 1: class %s, leaf %s, live-last %d bytes; leaked %d bytes" % (first["class"], leaf, live, leaked))
assert first["class"] == "long[]", "class " + first["class"]
assert leaf.startswith("LeakGrow.leak("), "leaf frame " + leaf
assert 0.6 <= live / leaked <= 1.4, "live-last %d bytes for %d bytes leaked" % (live, leaked)
EOF
    # The live headline (summary, convert --event live) counts the sampled objects
    # that survived a GC, near what the program leaked, and shows the churn's young
    # garbage apart.
    live_headline "$leaked" 0.6 1.4 || fail "the live headline is not the leak (above)"
}

# live_headline LEAKED LOW HIGH: summary's and convert --event live's survivors are
# within [LOW, HIGH] x LEAKED bytes (under HIGH bytes when LEAKED is 0).
live_headline() {
    rp summary "$work/rec" >"$work/summary" 2>&1
    rp convert --event live --format flat -o /dev/null "$work/rec" 2>"$work/live.err"
    python3 - "$work/summary" "$work/live.err" "$@" <<'EOF'
import re, sys
summary, note = open(sys.argv[1]).read(), open(sys.argv[2]).read()
leaked, low, high = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
m = re.search(r"^  live .*: ([\d.]+) MiB in (\d+) sampled objects that survived a GC; "
              r"not yet collected, younger than the last GC: ([\d.]+) MiB in (\d+)", summary, re.M)
n = re.search(r"live snapshot .*, (\d+) sampled objects that survived a GC, (\d+) bytes; "
              r"not yet collected, younger than the last GC: (\d+), (\d+) bytes", note)
assert m and n, "no split live headline:\n%s\n%s" % (summary, note)
old_s, old_c = float(m.group(1)) * 2**20, int(n.group(2))
print("# live headline: survived a GC %.1f MiB (summary), %d bytes (convert); younger "
      "%s MiB in %s objects; the program leaked %d bytes" % (old_s / 2**20, old_c, m.group(3),
                                                          m.group(4), leaked))
assert abs(old_s - old_c) <= 0.06 * 2**20, "summary and convert disagree"
if leaked:
    assert low <= old_c / leaked <= high, "survivors %d bytes for %d leaked" % (old_c, leaked)
else:
    assert old_c <= high, "survivors %d bytes in a program that keeps nothing" % old_c
EOF
}

test_churn() {
    run_leakgrow churn 12
    grep -q "^no growing allocation site" "$work/leaks" ||
        fail "ringprof leaks reports a growing site in a program that only churns"
    # It keeps nothing but the map each churn thread is filling (2000 entries,
    # well under 1 MiB): the headline's survivors stay under 8 MiB, however
    # much young garbage the last snapshot caught.
    live_headline 0 0 $((8 << 20)) || fail "the live headline counts churn as kept (above)"
}

# ---------------------------------------------------------------- weakrefs --
#
# WeakRefs allocates 5000 short[512] (1 KiB each) in allocate() with live=on and
# alloc=1k (so about two in three are sampled and tracked), holds them 2.5 s,
# drops them and calls System.gc() until every WeakReference to them has cleared.
# The agent must never keep a sampled object alive: they all clear, after no more
# collections than without the agent. The live snapshots while they were held
# must show them (else the test tests nothing); those taken after they cleared
# must not. About 5000 samples a second reach one thread's ring: ring=4m holds
# several seconds of them, so a flusher that a loaded machine (or ASan) keeps
# waiting drops none (with the default 64k one baseline run under a load average
# of 25 lost 1137, counted as lost.ring_full, and the snapshot showed 66%).
test_weakrefs() {
    java_run -Xmx256m -- WeakRefs 5000 2500 || { rc=$?; show_err; fail "java (no agent) exited $rc"; }
    local base
    base=$(awk '$1 == "cleared" { print $6 }' "$work/out")
    note "no agent: $(grep cleared "$work/out")"
    [ "$(awk '$1 == "cleared" { print $2 }' "$work/out")" = 5000 ] || fail "without the agent the objects did not clear: the test is wrong"
    java_run -Xmx256m -agentpath:"$RP_AGENT=dir=$work/rec,alloc=1k,live=on,flush=1s,ring=4m" -- WeakRefs 5000 2500 ||
        { rc=$?; show_err; fail "java exited $rc"; }
    no_hs_err
    note "live=on:  $(grep cleared "$work/out")"
    local n gcs
    n=$(awk '$1 == "cleared" { print $2 }' "$work/out")
    gcs=$(awk '$1 == "cleared" { print $6 }' "$work/out")
    [ "${n:-0}" = 5000 ] || fail "only ${n:-0} of 5000 weak references cleared after ${gcs:-?} System.gc(): the agent keeps sampled objects alive"
    [ "$gcs" -le "$base" ] || fail "the objects needed $gcs collections to clear with live=on, $base without the agent"
    local held dropped cleared done
    held=$(awk '$1 == "held" { print $2 }' "$work/out")
    dropped=$(awk '$1 == "dropped" { print $2 }' "$work/out")
    cleared=$(awk '$1 == "cleared" { print $NF }' "$work/out")
    done=$(awk '$1 == "done" { print $2 }' "$work/out")
    # While held: the snapshots between "held" and "dropped".
    rp convert --event live --format collapsed --from "$held" --to "$dropped" \
        -o "$work/held.collapsed" "$work/rec" 2>"$work/conv.err" ||
        fail "ringprof convert --event live (held) failed: $(cat "$work/conv.err")"
    local hb
    hb=$(site_bytes "$work/held.collapsed" WeakRefs.allocate 'short[]')
    note "live while held: $(mib "$hb") of short[] from allocate() (allocated: $(mib $((5000 * 1040))))"
    local lost
    lost=$(rp summary "$work/rec" | awk '$1 == "lost" { print $2 }')
    within "$(ratio "$hb" $((5000 * 1040)))" 0.8 1.25 ||
        fail "the live snapshot while the objects were held shows $hb bytes of them, not about $((5000 * 1040)) (records lost: ${lost:-0})"
    # After they cleared: the snapshots from 1.5 s after (one flush and a half) to
    # the end of the run.
    local after
    after=$(python3 -c 'import datetime, sys
t = datetime.datetime.fromisoformat(sys.argv[1].rstrip("Z")[:26])
print((t + datetime.timedelta(seconds=1.5)).isoformat() + "Z")' "$cleared")
    rp convert --event live --format collapsed --from "$after" --to "$done" \
        -o "$work/after.collapsed" "$work/rec" 2>"$work/conv.err" || true
    "$RP_DUMP" series "$work/rec" live.objects >"$work/live_objects"
    local ab
    ab=$(site_bytes "$work/after.collapsed" WeakRefs.allocate 'short[]')
    note "live after they cleared (from $after): $ab bytes of them; live.objects over the run: $(tr '\n' ' ' <"$work/live_objects")"
    [ "$ab" = 0 ] || fail "the live snapshot after the objects were collected still shows $ab bytes of them"
}

# ------------------------------------------------------------------- rate --
#
# The allocation interval at run time changes what is sampled, not only what
# status says (control_tests.sh alloc_switch covers the commands themselves):
# `ringprof ctl set alloc=64k` raises the rate of alloc samples about eightfold
# against the default 512k on the same steady churn, and `stop alloc` stops them
# while CPU samples go on.
test_rate() {
    java_start -agentpath:"$RP_AGENT=dir=$work/rec,interval=10ms,allocrate=off" \
        -Xmx512m -- LeakGrow churn 60
    wait_socket
    asamples() { ctl status | json 'r["samples"]["alloc"]'; }
    csamples() { ctl status | json 'r["samples"]["cpu"]'; }
    # Rates per second of the JVM's CPU (cpu_window), not of the clock: the
    # churn allocates as fast as it gets the CPU, and other work on the machine
    # would change a rate over the clock between the two windows.
    cpu_window 0.5
    local a b c d e f r1 r2
    a=$(asamples); cpu_window 0.5; b=$(asamples)
    r1=$(((b - a) * 2))
    note "alloc samples per CPU second at 512k: $r1"
    [ "$r1" -gt 20 ] || fail "only $r1 alloc samples/s: the test tests nothing"
    ctl set alloc=64k | json 'r["ok"]' | grep -q True || fail "set alloc=64k failed"
    cpu_window 0.25
    a=$(asamples); cpu_window 0.5; b=$(asamples)
    r2=$(((b - a) * 2))
    note "alloc samples per CPU second at 64k: $r2"
    within "$(ratio "$r2" "$r1")" 4 16 || fail "set alloc=64k took the rate from $r1/s to $r2/s, not about 8 times"
    ctl stop alloc | json 'r["ok"]' | grep -q True || fail "stop alloc failed"
    sleep 0.5                             # a callback past its check pushes its sample
    ctl flush >/dev/null || fail "flush failed"   # what was pushed reaches the files
    c=$(asamples); e=$(csamples); cpu_window 1; d=$(asamples); f=$(csamples)
    note "alloc stopped: alloc $c -> $d, cpu $e -> $f"
    [ "$c" = "$d" ] || fail "alloc samples grew from $c to $d while alloc was stopped"
    [ "$f" -gt "$e" ] || fail "cpu samples stopped with alloc ($e -> $f)"
    kill -TERM $pid
    local rc=0
    wait $pid || rc=$?
    pid=
    [ $rc = 0 ] || [ $rc = 143 ] || fail "java exited $rc"
    no_hs_err
}

# ------------------------------------------------------------------- soak --
#
# 12 s (RP_SOAK_SECONDS; tests/soak is the long one) of AllocSoak (three
# threads of mixed allocation and arithmetic, a thread started and ended every
# 20 ms) with alloc=16k, live=on and CPU sampling at
# interval=1ms. When the workers are done the test stops sampling, flushes and
# takes the agent's status, then lets the JVM exit. Asserts:
#   - the JVM exits 0 and leaves no hs_err file; every file reads cleanly
#     (rp_agent_dump check, ringprof summary --strict);
#   - no record is lost unaccounted for: per kind, the samples in the files equal
#     what status says was written, the files' lost.* counters equal status's,
#     and every alloc sample the callbacks pushed was written;
#   - a live snapshot every second;
#   - the alloc samples of the soak threads estimate what they allocated (the
#     JVM's count) within 10% (see below), and their CPU samples weigh their CPU
#     time within 5%, after adding the lost records at the mean weight.
test_soak() {
    local secs=${RP_SOAK_SECONDS:-12}
    java_start -Xmx1g -agentpath:"$RP_AGENT=dir=$work/rec,interval=1ms,alloc=16k,live=on,allocrate=off" \
        -- AllocSoak "$secs" 3 "$work/stop"
    wait_for -p $pid $((secs + rp_wait_default)) has_line "workers done" "$work/out" ||
        { show_err; fail "the workers did not finish"; }
    ctl stop | json 'r["ok"]' | grep -q True || fail "stop failed"
    sleep 0.5
    ctl flush >/dev/null || fail "flush failed"
    ctl status >"$work/status" || fail "status failed"
    touch "$work/stop"
    local rc=0
    wait $pid || rc=$?
    pid=
    [ $rc = 0 ] || { show_err; fail "java exited $rc"; }
    grep -q "AllocSoak done" "$work/out" || fail "AllocSoak did not finish"
    no_hs_err
    note "$(grep 'workers done' "$work/out")"
    { grep '^ringprof:' "$work/err" || true; } | sort | uniq -c | sed 's/^/# agent: /' | head -5
    "$RP_DUMP" check "$work/rec" >"$work/check" || fail "damaged recording: $(cat "$work/check")"
    rp summary --strict "$work/rec" >"$work/summary" 2>&1 ||
        { sed 's/^/  /' "$work/summary" | head -30; fail "ringprof summary --strict failed"; }
    sed -n '/^  samples/,/^  threads/p' "$work/summary" | sed 's/^/#   /'
    # The files against the agent's own totals (tests/accounting.py, shared with
    # tests/soak/run): per kind, lost.* by reason, the callbacks' pushes.
    python3 "$(dirname "$0")/../accounting.py" --min cpu=1000 --min alloc=1000 --require live,gc \
        "$work/status" "$work/summary" || fail "the files and the agent's totals differ (above)"
    # A snapshot is taken at every flush (flush=1s) and a telemetry reading
    # every second, both by the flusher: the snapshots are judged against the
    # readings, so a flusher that a loaded machine kept waiting (6 snapshots
    # and 5 readings in 20 s once, under a load average of 13) is not taken for
    # one that stopped taking snapshots.
    local snaps readings
    snaps=$(awk '$1 == "live" && $3 == "snapshots;" { print $2 }' "$work/summary")
    readings=$("$RP_DUMP" series "$work/rec" agent.cpu_ns.total | wc -l)
    note "${snaps:-no} live snapshots, $readings telemetry readings in $secs s"
    [ "${snaps:-0}" -ge 3 ] && [ "${snaps:-0}" -ge $((readings - 2)) ] ||
        fail "${snaps:-no} live snapshots in $secs s at flush=1s, against $readings telemetry readings"
    # The soak threads' allocation, estimated against the JVM's count.
    rp convert --event alloc --format collapsed --thread '^soak-[0-9]+$' -o "$work/soak.collapsed" \
        "$work/rec" 2>"$work/conv.err" || fail "convert failed: $(cat "$work/conv.err")"
    rp convert --event alloc --format collapsed -o "$work/all.collapsed" "$work/rec" 2>"$work/conv.err" ||
        fail "convert failed: $(cat "$work/conv.err")"
    local truth est all lost n mean
    truth=$(awk '$1 == "workers" { print $4 }' "$work/out")
    est=$(total_weight "$work/soak.collapsed")
    all=$(total_weight "$work/all.collapsed")
    lost=$(json 'sum(r["lost"].values())' <"$work/status")
    n=$(json 'r["samples"]["alloc"]' <"$work/status")
    mean=$(awk -v a="$all" -v n="$n" 'BEGIN { printf "%.0f\n", n ? a / n : 0 }')
    note "soak threads allocated $(mib "$truth"); their alloc samples estimate $(mib "$est") ($(ratio "$est" "$truth")); $lost records lost, of any kind (mean alloc weight $mean bytes)"
    # Sampling error at 16k over gigabytes is below 0.5%. HotSpot's sampler
    # counts a TLAB's unused tail (retired early for a large array) towards the
    # distance to the next sample, so estimates run a few percent low on this mix
    # (0.96 to 1.01 of the truth over runs here; -XX:-UseTLAB gives 1.00): the
    # lower bound allows 10%, and the losses, counted at the mean weight of all
    # threads' samples, may make up more; the upper bound 5%.
    within "$(ratio "$est" "$truth")" 0 1.05 ||
        fail "the soak threads' alloc samples estimate $(ratio "$est" "$truth") of what they allocated"
    within "$(ratio $((est + lost * mean)) "$truth")" 0.90 100 ||
        fail "$(mib $((truth - est))) of the soak threads' allocation is neither sampled nor counted lost ($lost records at $mean bytes)"
    # The same for their CPU time (the JVM's count): CPU samples carry whole
    # intervals, so the sampled time is within an interval a thread of it, less
    # what was lost, counted at the mean CPU sample weight.
    rp convert --event cpu --format collapsed --thread '^soak-[0-9]+$' -o "$work/cpu.collapsed" \
        "$work/rec" 2>"$work/conv.err" || fail "convert failed: $(cat "$work/conv.err")"
    rp convert --event cpu --format collapsed -o "$work/allcpu.collapsed" "$work/rec" 2>"$work/conv.err" ||
        fail "convert failed: $(cat "$work/conv.err")"
    local cpu sampled cmean
    cpu=$(awk '$1 == "workers" { print $6 }' "$work/out")
    sampled=$(total_weight "$work/cpu.collapsed")
    cmean=$(awk -v a="$(total_weight "$work/allcpu.collapsed")" -v n="$(json 'r["samples"]["cpu"]' <"$work/status")" \
        'BEGIN { printf "%.0f\n", n ? a / n : 0 }')
    note "soak threads used $((cpu / 1000000)) ms of CPU; their CPU samples $((sampled / 1000000)) ms ($(ratio "$sampled" "$cpu")), mean weight $((cmean / 1000)) us"
    within "$(ratio "$sampled" "$cpu")" 0 1.05 || fail "the soak threads' CPU samples weigh $(ratio "$sampled" "$cpu") of their CPU time"
    within "$(ratio $((sampled + lost * cmean)) "$cpu")" 0.95 100 ||
        fail "$(((cpu - sampled) / 1000000)) ms of the soak threads' CPU is neither sampled nor counted lost"
}

# ------------------------------------------------------------- ratelimit --
#
# The experimental rate limit (allocrate, off by default) raises the interval
# when one thread allocates 12 GiB at full speed with alloc=256k (about 12 000
# samples a second) and a limit of 2000 a second: the interval must change and
# the samples drop well below the fixed interval's (at least a third: the run
# takes a few seconds, so the limit's first 100 ms to a second, longer when the
# machine is busy and the flusher waits for a CPU, are a small part of it). Its estimates vary more than
# sampling noise explains (docs/agent.md, "The rate limit": 0.88 to 1.05 on this
# run's smaller site over five runs), so the bounds here are 25%, wide enough not
# to flake and narrow enough to catch weights that ignore the interval changes
# (those are off by the ratio of the intervals, 3x or more). ring=2m holds the
# first 100 ms at 16 000 samples a second, before the limit acts, even when the
# flusher is kept off the CPU (a CI run lost 2249 records to full rings with
# the default 64k, and bytes() came out at 0.70); any loss is reported.
test_ratelimit() {
    java_run -Xmx256m -agentpath:"$RP_AGENT=dir=$work/rec,ring=2m,alloc=256k,allocrate=2000" -- \
        AllocVolumes 8192 4096 || { rc=$?; show_err; fail "java exited $rc"; }
    no_hs_err
    local tb tl nb nl eb el changes top samples
    read -r nb tb <<<"$(site_truth bytes)"
    read -r nl tl <<<"$(site_truth longs)"
    rp convert --event alloc --format collapsed -o "$work/alloc.collapsed" "$work/rec" 2>"$work/conv.err" ||
        fail "ringprof convert --event alloc failed: $(cat "$work/conv.err")"
    eb=$(site_bytes "$work/alloc.collapsed" AllocVolumes.bytes 'byte[]')
    el=$(site_bytes "$work/alloc.collapsed" AllocVolumes.longs java.lang.Long)
    changes=$("$RP_DUMP" counters "$work/rec" | awk -F'\t' '$1 == "alloc.interval_changes" { print $2 }')
    samples=$(rp summary "$work/rec" | awk '$1 == "samples" && $2 == "alloc" { print $3 }')
    # At a fixed 256k the run would take (tb + tl) / 256k samples.
    local fixed=$(( (tb + tl) / 262144 ))
    note "interval changed ${changes:-0} times; $samples alloc samples (at a fixed 256k: about $fixed)"
    note "bytes(): estimated $(ratio "$eb" "$tb") of the truth; longs(): $(ratio "$el" "$tl")"
    local lost
    lost=$("$RP_DUMP" counters "$work/rec" | awk -F'\t' '$1 ~ /^lost\./ { n += $2 } END { printf "%.0f\n", n }')
    note "records lost: $lost"
    [ "${changes:-0}" -ge 1 ] || fail "the rate limit never changed the interval"
    [ "${samples:-0}" -lt $((fixed * 2 / 3)) ] || fail "$samples samples: the limit did not reduce them (fixed 256k: $fixed)"
    within "$(ratio "$eb" "$tb")" 0.75 1.25 || fail "bytes(): estimated $eb bytes, truth $tb: not within 25% ($lost records lost)"
    within "$(ratio "$el" "$tl")" 0.75 1.25 || fail "longs(): estimated $el bytes, truth $tl: not within 25% ($lost records lost)"
}

case "$test_name" in
volumes|leak|churn|weakrefs|rate|soak|ratelimit) "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
san_check
echo "ok ($test_name${alloc:+ alloc=$alloc})"
