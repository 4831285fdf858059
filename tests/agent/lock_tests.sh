#!/usr/bin/env bash
# tests/agent/lock_tests.sh — lock contention (lock=, kind `lock`) and telemetry
# (telemetry=, the gauges of include/ringprof/events.h) in real JVMs. One test per
# invocation:
#
#   lock_tests.sh TEST        TEST: billing, telemetry, ctl, threads or threads_big
#
# meson (tests/agent/meson.build) passes the programs in the environment: RP_JAVA,
# RP_AGENT (libringprof.so), RP_JAR (tests/java), RP_DUMP (rp_agent_dump),
# RP_RINGPROF (the ringprof command). The truths come from the programs (their
# own System.nanoTime around synchronized, the MXBeans' GC count), never from the
# agent. RINGPROF_LONG_TESTS=1 makes billing run 20 s instead of 4. The scratch
# directory is kept (and named) when a test fails.
set -uo pipefail

test_name=${1:?usage: lock_tests.sh TEST}
. "$(dirname "$0")/../lib.sh"
rp_begin "lock-$test_name" "$test_name"
# In an ASan build java runs under sanitized_java.sh (meson sets RP_SAN_CHECK to
# it), which writes ASan/UBSan/LSan reports into $RP_SAN_LOGDIR; san_check fails
# the test on any (docs/sanitizers.md, as in agent_tests.sh).

# ------------------------------------------------------------------ billing --

# Six workers post invoices to one Ledger under its monitor (2 ms each), a
# RateTable is locked now and then. With lock=1ms: the Ledger monitor has the
# most lock weight, its weight is within 20% of the waits the program measured
# itself (at or above the same 1 ms), its samples' stacks end in the worker's
# processInvoice, every sample waited at least the threshold, and the owner is
# known, and a worker, for most samples. The summary names the JVM's compiler
# threads in full (C2 CompilerThread0), which the kernel's comm cannot.
test_billing() {
    local secs=4
    [ "${RINGPROF_LONG_TESTS:-0}" = 1 ] && secs=20
    java_run -agentpath:"$RP_AGENT=dir=$work/rec,lock=1ms" -- BillingServer 6 "$secs" 1000 ||
        { rc=$?; show_err; fail "java exited $rc"; }
    no_hs_err
    local truth tcount
    read -r _ truth _ tcount <<<"$(grep '^ledger_wait_ns' "$work/out")"
    [ "${tcount:-0}" -ge 50 ] || fail "the program saw only ${tcount:-0} contended waits: $(cat "$work/out")"
    "$RP_DUMP" locks "$work/rec" >"$work/locks"
    # Per class: weight, samples.
    awk -F'\t' '{ w[$3] += $1; n[$3]++ } END { for (k in w) printf "%.0f\t%d\t%s\n", w[k], n[k], k }' \
        "$work/locks" | sort -rn >"$work/by_class"
    sed 's/^/# /' "$work/by_class"
    local top lw ln
    read -r lw ln top <<<"$(head -1 "$work/by_class")"
    [ "$top" = 'BillingServer$Ledger' ] || fail "the monitor with the most lock weight is '$top', not the Ledger"
    note "Ledger: agent $lw ns in $ln samples; program $truth ns in $tcount waits: $(ratio "$lw" "$truth")"
    within "$(ratio "$lw" "$truth")" 0.8 1.2 || fail "Ledger wait $lw ns vs the program's $truth ns: not within 20%"
    local ledger=$work/ledger
    awk -F'\t' '$3 == "BillingServer$Ledger"' "$work/locks" >"$ledger"
    local bad
    bad=$(awk -F'\t' '$5 !~ /;BillingServer\$Worker\.processInvoice$/' "$ledger" | wc -l)
    [ "$bad" -eq 0 ] || fail "$bad Ledger samples do not end in processInvoice: $(awk -F'\t' '$5 !~ /processInvoice$/' "$ledger" | head -2)"
    bad=$(awk -F'\t' '$1 < $2 || $2 != 1000000' "$work/locks" | wc -l)
    [ "$bad" -eq 0 ] || fail "$bad samples waited less than their threshold, or carry another one than 1ms"
    local owned self
    owned=$(awk -F'\t' '$4 ~ /^worker-[0-9]+$/' "$ledger" | wc -l)
    self=$(awk -F'\t' '{ split($5, s, ";") } $4 == s[1]' "$ledger" | wc -l)
    note "owner a worker in $owned of $ln Ledger samples; the waiter itself in $self; unknown: $("$RP_DUMP" counters "$work/rec" | awk -F'\t' '$1 == "lock.owner_unknown" { print $2 }')"
    within "$(ratio "$owned" "$ln")" 0.8 1 || fail "the owner is a worker in only $owned of $ln Ledger samples"
    [ "$self" -eq 0 ] || fail "$self samples name the waiting thread as the owner"
    # The JVM's compiler threads by their names (VMStructs), not the kernel's
    # comm, which holds 15 bytes: "C2 CompilerThre".
    rp summary --threads 100 "$work/rec" >"$work/summary" || fail "summary failed"
    # A compiler thread with samples, by its full name (at once, or as the name
    # it was renamed to): C2's or C1's, whichever the JIT kept busy in the run.
    grep -q -E ' C[12] CompilerThread[0-9]+[ )]' "$work/summary" ||
        fail "summary names no compiler thread in full: $(grep -i compiler "$work/summary")"
}

# ---------------------------------------------------------------- telemetry --

# Four threads allocate for 3 s in a 64 MB heap with telemetry=200ms: every
# gauge comes in every reading, at about the period, with plausible values.
test_telemetry() {
    java_run -Xmx64m -agentpath:"$RP_AGENT=dir=$work/rec,telemetry=200ms" -- TelemetryLoad 4 3 ||
        { rc=$?; show_err; fail "java exited $rc"; }
    no_hs_err
    local g gauges="proc.cpu_user_ns.total proc.cpu_sys_ns.total proc.rss_bytes heap.used_bytes
        heap.committed_bytes gc.count.total gc.time_ns.total threads.os threads.runnable
        threads.java threads.daemon threads.started.total threads.peak classes.loaded
        agent.cpu_ns.total"
    local n0=
    for g in $gauges; do
        "$RP_DUMP" tseries "$work/rec" "$g" >"$work/$g"
        local n
        n=$(wc -l <"$work/$g")
        [ "$n" -gt 0 ] || fail "gauge $g is missing"
        [ -z "$n0" ] || [ "$n" -eq "$n0" ] || fail "gauge $g has $n readings, the others $n0"
        n0=$n
        case $g in
        *.total)
            awk -F'\t' 'NR > 1 && $2 < last { exit 1 } { last = $2 }' "$work/$g" ||
                fail "cumulative gauge $g decreases: $(tr '\n' ' ' <"$work/$g")" ;;
        esac
    done
    # The rate: readings every 200 ms, so spaced 200 ms apart (median, as a busy
    # machine may delay one), and as many as the span allows.
    local span med
    span=$(awk -F'\t' 'NR == 1 { a = $1 } { b = $1 } END { printf "%.0f", (b - a) / 1e6 }' "$work/threads.os")
    med=$(awk -F'\t' 'NR > 1 { print ($1 - last) / 1e6 } { last = $1 }' "$work/threads.os" | sort -n |
          awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    note "$n0 readings over $span ms, median spacing $med ms"
    # Enough readings to judge the spacing by; how many a 3 s run holds is the
    # scheduler's (9 over 2.6 s once under a load average of 15), so the count
    # is judged against the span the readings cover, below.
    [ "$n0" -ge 5 ] || fail "only $n0 readings in a 3 s run at 200 ms"
    within "$med" 150 300 || fail "readings are $med ms apart (median), not 200"
    [ "$n0" -ge $((span / 200 * 3 / 4)) ] || fail "$n0 readings over $span ms: fewer than 3/4 of one per 200 ms"
    last() { tail -1 "$work/$1" | cut -f2; }
    first() { head -1 "$work/$1" | cut -f2; }
    note "rss $(last proc.rss_bytes), heap $(last heap.used_bytes)/$(last heap.committed_bytes), gcs $(first gc.count.total)..$(last gc.count.total) ($(grep '^gcs' "$work/out")), threads $(last threads.os) ($(last threads.runnable) runnable), classes $(last classes.loaded), cpu $(last proc.cpu_user_ns.total)+$(last proc.cpu_sys_ns.total), agent $(last agent.cpu_ns.total)"
    [ "$(last proc.rss_bytes)" -gt $((10 << 20)) ] || fail "RSS $(last proc.rss_bytes) is under 10 MB"
    paste "$work/heap.used_bytes" "$work/heap.committed_bytes" |
        awk -F'\t' '$2 > $4 || $4 == 0 { exit 1 }' || fail "heap used above committed, or committed 0"
    [ "$(last gc.count.total)" -gt "$(first gc.count.total)" ] || fail "gc.count.total does not rise"
    [ "$(last gc.time_ns.total)" -gt 0 ] || fail "gc.time_ns.total stays 0"
    [ "$(last classes.loaded)" -gt 300 ] || fail "classes.loaded $(last classes.loaded) is 300 or fewer"
    [ "$(last threads.os)" -ge 5 ] || fail "threads.os $(last threads.os): fewer than the program's 5"
    paste "$work/threads.os" "$work/threads.runnable" |
        awk -F'\t' '$4 > $2 { exit 1 }' || fail "more runnable threads than threads"
    # Java threads (ThreadMXBean): the program's main and 4 workers among them;
    # daemons among the live, the live never above the peak or the started.
    awk -F'\t' '$2 >= 5 { found = 1 } END { exit !found }' "$work/threads.java" ||
        fail "threads.java never counts the program's 5 threads: $(cut -f2 "$work/threads.java" | tr '\n' ' ')"
    paste "$work/threads.java" "$work/threads.daemon" "$work/threads.peak" "$work/threads.started.total" |
        awk -F'\t' '$4 > $2 || $2 > $6 || $2 > $8 { exit 1 }' ||
        fail "Java thread gauges out of order (daemon <= live <= peak, started)"
    # The flusher runs while it reads them: never fewer than one runnable.
    awk -F'\t' '$2 < 1 { exit 1 }' "$work/threads.runnable" ||
        fail "a reading found no runnable thread, not even the flusher reading it"
    [ "$(last proc.cpu_user_ns.total)" -gt 100000000 ] || fail "process user CPU under 100 ms"
    [ "$(last agent.cpu_ns.total)" -gt 0 ] || fail "agent.cpu_ns.total stays 0"
    local failed
    failed=$("$RP_DUMP" counters "$work/rec" | awk -F'\t' '$1 == "telemetry.failed" { print $2 }')
    [ -z "$failed" ] || fail "$failed telemetry readings failed"
    # telemetry=off: none of it but the agent's CPU (once per flush).
    java_run -agentpath:"$RP_AGENT=dir=$work/off,telemetry=off" -- TelemetryLoad 1 1 ||
        { rc=$?; show_err; fail "java exited $rc (telemetry=off)"; }
    local extra
    extra=$("$RP_DUMP" gauges "$work/off" | cut -f1 | grep -E '^(proc|heap|gc|threads|classes)\.' || true)
    [ -z "$extra" ] || fail "telemetry=off still wrote $(echo $extra)"
    "$RP_DUMP" gauges "$work/off" >"$work/off.gauges"   # a file: no SIGPIPE under pipefail
    grep -q '^agent.cpu_ns.total' "$work/off.gauges" || fail "telemetry=off lost agent.cpu_ns.total"
}

# --------------------------------------------------------------------- ctl --

# A JVM started with lock=off: `start lock` (default threshold 10 ms), `set
# lock=2ms`, `stop lock` through the control socket, and a bad value refused.
# Samples carry the threshold in force when they were taken, none comes after
# the stop, and status follows each step.
test_ctl() {
    java_start -agentpath:"$RP_AGENT=dir=$work/rec" -- BillingServer 6 7 1000
    # Until the agent answers: a JVM on a busy machine may take many seconds to
    # start; give up only when it has ended, or after wait_for's bound.
    status_to() { ctl status >"$1" 2>/dev/null; }
    wait_for -p $pid - status_to "$work/s0" ||
        { show_err; fail "the agent did not answer status (java ended, or no answer in ${rp_wait_default} s)"; }
    [ "$(json 'r["lock"]["on"], r["lock"]["available"]' <"$work/s0")" = "False True" ] ||
        fail "at start with lock=off: $(json 'r["lock"]' <"$work/s0")"
    ctl start lock >"$work/r1" || fail "start lock: $(cat "$work/r1")"
    [ "$(ctl status | json 'r["lock"]["on"], r["lock"]["threshold_ns"], "lock" in r["sampling"]')" = \
      "True 10000000 True" ] || fail "after start lock: $(ctl status | json 'r["lock"]')"
    sleep 1.5
    ctl set lock=2ms >"$work/r2" || fail "set lock=2ms: $(cat "$work/r2")"
    [ "$(json 'r["settings"]["lock_ns"]' <"$work/r2")" = 2000000 ] || fail "set reply: $(cat "$work/r2")"
    if ctl set lock=5 >"$work/r3" 2>&1; then fail "set lock=5 was accepted"; fi
    grep -q "bad value '5' for lock" "$work/r3" || fail "set lock=5: $(cat "$work/r3")"
    sleep 1.5
    ctl stop lock >/dev/null || fail "stop lock"
    local rec1 rec2
    rec1=$(ctl status | json 'r["lock"]["recorded"], r["lock"]["on"]')
    sleep 1
    rec2=$(ctl status | json 'r["lock"]["recorded"], r["lock"]["on"]')
    note "recorded after stop: $rec1, a second later: $rec2"
    [ "$rec1" = "$rec2" ] && [ "${rec1#* }" = False ] || fail "lock records go on after stop lock: $rec1 then $rec2"
    wait $pid || { rc=$?; pid=; show_err; fail "java exited $rc"; }
    pid=
    no_hs_err
    "$RP_DUMP" locks "$work/rec" >"$work/locks"
    local n10 n2 bad
    n10=$(awk -F'\t' '$2 == 10000000' "$work/locks" | wc -l)
    n2=$(awk -F'\t' '$2 == 2000000' "$work/locks" | wc -l)
    bad=$(awk -F'\t' '$1 < $2' "$work/locks" | wc -l)
    note "samples at 10 ms: $n10, at 2 ms: $n2; below their threshold: $bad"
    [ "$n10" -gt 0 ] && [ "$n2" -gt 0 ] || fail "expected samples at both thresholds: $n10 at 10ms, $n2 at 2ms"
    [ "$n2" -gt "$n10" ] || fail "the lower threshold did not record more: $n10 at 10ms, $n2 at 2ms"
    [ "$bad" -eq 0 ] || fail "$bad samples waited less than their threshold"
}

# ------------------------------------------------------------------ threads --

# Deadlocks: first a monitor wait that ends, written in progress by a flush
# while it lasts (`ctl flush`); then two threads deadlocked on monitors, two on
# ReentrantLocks, one in Object.wait, one live. `ctl threads` (JSON and text)
# reports exactly the two cycles with their threads and locks, the held and
# awaited locks with ids that match across threads, and stack lines equal to
# the ones the program's own Thread.getStackTrace gives; status shows the two
# monitor waits in progress, each at least as old as the time since the program
# saw them stuck; the live thread keeps counting and the JVM exits cleanly. The
# recording then holds the deadlocked waits as unfinished (kind lock.waiting):
# `ringprof locks` lists both with their monitor class and owner, as long as
# the program measured (from just before the synchronized entry to its exit,
# plus the exit) and at least as long as status said; the wait that ended is
# counted once, by its finished record (reported, as long as the program
# measured it), though the files hold it in progress too; `convert --event
# lock --format collapsed` has the same weight per monitor and marks only the
# deadlocked ones [unfinished]. Then an agent attached late (wall=10ms, no
# lock=): both cycles found without the monitor capabilities, and `ringprof
# locks` shows the deadlocked monitor waits from the wall samples in state
# blocked, saying so. The first JVM allows only 128 JNI local references to be
# promised (-XX:MaxJNILocalCapacity; HotSpot's default is 65536): a dump that
# needs one per thread or lock fails there as it would past about 8,000 threads.
test_threads() {
    java_start -XX:MaxJNILocalCapacity=128 -agentpath:"$RP_AGENT=dir=$work/rec,lock=1ms" \
        -- Deadlocks "$work/stop" "$work/gate"
    wait_line -p $pid '^gated blocked' "$work/out" || fail "the gated thread did not block"
    gated_waiting() { status_is '"gated" in [w["thread"] for w in r["lock"]["waiting"]]'; }
    wait_for -p $pid - gated_waiting || fail "status never showed the gated thread's wait"
    ctl flush >"$work/gate.flush" || fail "flush while the gated thread waits: $(cat "$work/gate.flush")"
    touch "$work/gate"
    wait_ready
    local t_ready=$EPOCHREALTIME
    status_to() { ctl status >"$1" 2>/dev/null; }
    wait_for -p $pid - status_to "$work/s0" || { show_err; fail "the agent did not answer status"; }
    ctl threads >"$work/threads.json" || fail "ctl threads: $(head -c 300 "$work/threads.json")"
    rp ctl "$pid" threads >"$work/threads.txt" || fail "ctl threads (text) failed"
    local t_req=$EPOCHREALTIME
    ctl status >"$work/s1" || fail "status after the dumps"
    ctl status >"$work/s2" || fail "status after the dumps"
    python3 - "$work" "$t_ready" "$t_req" <<'PY' || fail "the thread dump or status is wrong (above)"
import json, re, sys
work, t_ready, t_req = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)
truth = {}
for line in open(work + "/out"):
    if line.startswith("truth "):
        _, name, method, ln = line.split()
        truth[name] = (method, int(ln))
r = json.load(open(work + "/threads.json"))
check(r["ok"] and r["unavailable"] == [], "reply: ok %s, unavailable %s" % (r["ok"], r.get("unavailable")))
check("virtual_threads" not in r, "JDK 17 has no virtual threads, the reply %s" % r.get("virtual_threads"))
th = {t["name"]: t for t in r["threads"]}
# The cycles: two, each thread waiting for a lock the next one holds.
cycles = r["deadlocks"]
names = sorted(sorted(e["thread"] for e in c) for c in cycles)
check(names == [["jucl-a", "jucl-b"], ["mon-a", "mon-b"]], "cycles %s" % names)
for c in cycles:
    for i, e in enumerate(c):
        nxt = c[(i + 1) % len(c)]["thread"]
        check(e["waits_for"]["owner"] == nxt, "%s waits for a lock of %s, not %s" % (e["thread"], e["waits_for"]["owner"], nxt))
        want = {"mon-a": "Deadlocks$MonitorB", "mon-b": "Deadlocks$MonitorA"}.get(e["thread"], "java.util.concurrent.locks.ReentrantLock$NonfairSync")
        check(e["waits_for"]["class"] == want, "%s waits for %s" % (e["thread"], e["waits_for"]["class"]))
check(sorted(n for n, t in th.items() if t["deadlocked"]) == ["jucl-a", "jucl-b", "mon-a", "mon-b"],
      "deadlocked threads: %s" % sorted(n for n, t in th.items() if t["deadlocked"]))
# Held and awaited locks, matched by id across threads.
def held(t, cls):
    return [h for h in th[t]["held"] if h["lock"]["class"] == cls]
for me, other, mine, theirs in (("mon-a", "mon-b", "Deadlocks$MonitorA", "Deadlocks$MonitorB"),
                                ("mon-b", "mon-a", "Deadlocks$MonitorB", "Deadlocks$MonitorA")):
    t = th[me]
    check(t["state"] == "BLOCKED" and t["blocked_on"]["class"] == theirs and t["blocked_on"]["owner"] == other,
          "%s: %s on %s" % (me, t["state"], t.get("blocked_on")))
    h = held(me, mine)
    check(len(h) == 1 and h[0]["depth"] == 0, "%s holds %s" % (me, t["held"]))
    check(h and h[0]["lock"]["id"] == th[other]["blocked_on"]["id"], "%s's lock id is not the one %s waits for" % (me, other))
    check(t.get("lock_wait", {}).get("owner") == other and t["lock_wait"]["lock"] == theirs, "%s lock_wait %s" % (me, t.get("lock_wait")))
for me, other in (("jucl-a", "jucl-b"), ("jucl-b", "jucl-a")):
    t = th[me]
    p = t.get("parked_on", {})
    check(t["state"] == "WAITING" and "parked" in t["state_details"] and p.get("owner") == other and p.get("ownable"),
          "%s: %s %s parked on %s" % (me, t["state"], t["state_details"], p))
    check(any(h["lock"]["id"] == th[other]["parked_on"]["id"] and h["depth"] == -1 for h in t["held"]),
          "%s does not hold what %s is parked on" % (me, other))
w = th["waiter"]
check(w["state"] == "WAITING" and w.get("waiting_on", {}).get("class") == "Deadlocks$Mailbox" and not w["deadlocked"],
      "waiter: %s %s" % (w["state"], w.get("waiting_on")))
check("live" in th and not th["live"]["deadlocked"] and not th["main"]["deadlocked"], "live/main")
# Stacks: the topmost Deadlocks frame has the line Java itself gives.
for name, (method, line) in truth.items():
    top = next((f for f in th[name]["frames"] if f["class"] == "Deadlocks"), None)
    check(top and (top["method"], top["line"], top["file"]) == (method, line, "Deadlocks.java"),
          "%s: top Deadlocks frame %s, Java says %s:%d" % (name, top, method, line))
check(len(truth) == 5, "truth lines: %s" % truth)
# The text: the cycles first, named plainly; jstack's lock lines.
txt = open(work + "/threads.txt").read()
L = r'<(0x[0-9a-f]{8})> \(a ([^)]+)\)'
dl = re.findall(r'^Deadlock: "([^"]+)" waits for ' + L + r' held by "([^"]+)", which waits for ' + L + r' held by "([^"]+)"$', txt, re.M)
check(sorted(sorted([d[0], d[3]]) for d in dl) == [["jucl-a", "jucl-b"], ["mon-a", "mon-b"]] and
      all(d[0] == d[6] and d[0] != d[3] for d in dl), "Deadlock lines: %s" % dl)
check(txt.index("Deadlock:") < txt.index('"main"'), "the deadlocks are not printed first")
check("irtual" not in txt, "the text speaks of virtual threads on JDK 17")
check("\tat Deadlocks.%s(Deadlocks.java:%d)\n\t- waiting to lock <%s> (a Deadlocks$MonitorB) held by \"mon-b\"\n\t- locked <%s> (a Deadlocks$MonitorA)\n"
      % (truth["mon-a"][0], truth["mon-a"][1], th["mon-b"]["held"][0]["lock"]["id"], th["mon-a"]["held"][0]["lock"]["id"]) in txt,
      "mon-a's top frame and lock lines in the text")
check(re.search(r'- parking to wait for ' + L + r' held by "jucl-b"', txt), "jucl-a's parking line")
check("\t- waiting on <%s> (a Deadlocks$Mailbox)" % w["waiting_on"]["id"] in txt, "waiter's waiting-on line")
# status: the two monitor waits in progress, as old as the program says at least.
s1, s2 = (json.load(open(work + f)) for f in ("/s1", "/s2"))
w1 = {x["thread"]: x for x in s1["lock"]["waiting"]}
w2 = {x["thread"]: x for x in s2["lock"]["waiting"]}
check(sorted(w1) == ["mon-a", "mon-b"], "status waits: %s" % s1["lock"]["waiting"])
for me, other in (("mon-a", "mon-b"), ("mon-b", "mon-a")):
    a = w1.get(me, {})
    check(a.get("owner") == other and a.get("age_ns", 0) >= (t_req - t_ready) * 1e9 and a["age_ns"] >= s1["lock"]["threshold_ns"],
          "%s: wait %s; stuck for at least %.3f s" % (me, a, t_req - t_ready))
    check(w2.get(me, {}).get("age_ns", 0) > a.get("age_ns", 0), "%s's wait did not age" % me)
    print("# %s: wait in progress %.3f s (stuck at least %.3f s when asked)" % (me, a.get("age_ns", 0) / 1e9, t_req - t_ready))
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY
    # The JVM is unharmed: its live thread goes on counting, it still answers.
    local n1
    n1=$(grep -c '^live ' "$work/out")
    live_past() { [ "$(grep -c '^live ' "$work/out")" -ge "$1" ]; }
    wait_for -p $pid - live_past $((n1 + 3)) || fail "the live thread stopped at $n1"
    status_to "$work/s3" || fail "no status after the dumps"
    local t_stop=$EPOCHREALTIME
    touch "$work/stop"
    wait $pid || { rc=$?; pid=; show_err; fail "java exited $rc"; }
    local t_exit=$EPOCHREALTIME
    pid=
    no_hs_err
    has_line '^done' "$work/out" || fail "the program did not finish"
    "$RP_DUMP" locks "$work/rec" >"$work/locks.fin"
    RP_DUMP_KIND=lock.waiting "$RP_DUMP" locks "$work/rec" >"$work/locks.wait"
    rp locks --json "$work/rec" >"$work/locks.json" || fail "ringprof locks failed"
    rp convert --event lock --format collapsed "$work/rec" >"$work/lock.folded" ||
        fail "convert --event lock failed"
    python3 - "$work" "$t_stop" "$t_exit" <<'PY' || fail "the waits in the recording are wrong (above)"
import collections, json, sys
work, t_stop, t_exit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)
out = open(work + "/out").read().splitlines()
gated_ns = int(next(l.split()[1] for l in out if l.startswith("gated_wait_ns ")))
stuck = {l.split()[1]: (int(l.split()[2]), int(l.split()[3])) for l in out if l.startswith("stuck ")}
def rows(f):
    return [l.rstrip("\n").split("\t") for l in open(work + f) if l.strip()]
# The files: the wait that ended once, reported, and in progress at least once.
fin = [r for r in rows("/locks.fin") if r[2] == "Deadlocks$Gate"]
inp = [r for r in rows("/locks.wait") if r[2] == "Deadlocks$Gate"]
check(len(fin) == 1 and fin[0][4].startswith("gated;") and fin[0][6] == "1",
      "the gated wait: one finished record, reported: %s" % fin)
check(fin and inp and all(r[4].startswith("gated;") and r[5] == fin[0][5] for r in inp),
      "the gated wait in progress: %d records of the same wait %s" % (len(inp), inp[:2]))
w = int(fin[0][0]) if fin else 0
check(0.8 * gated_ns <= w <= gated_ns, "the gated wait: %d ns, the program measured %d" % (w, gated_ns))
print("# gated: finished %.3f s (program %.3f s), written in progress %d times" % (w / 1e9, gated_ns / 1e9, len(inp)))
# ringprof locks: counted once; the deadlocked ones unfinished.
j = json.load(open(work + "/locks.json"))
mons = {m["class"]: m for m in j["monitors"]}
g = mons.get("Deadlocks$Gate", {})
check((g.get("waits"), g.get("unfinished"), g.get("wait_ns")) == (1, 0, w),
      "locks: the gated wait counted once, by its finished record: %s" % g)
un = {u["thread"]: u for u in j["unfinished"]}
check(sorted(un) == ["mon-a", "mon-b"], "locks: unfinished waits %s" % j["unfinished"])
s2 = {x["thread"]: x for x in json.load(open(work + "/s2"))["lock"]["waiting"]}
for me, other, cls in (("mon-a", "mon-b", "Deadlocks$MonitorB"), ("mon-b", "mon-a", "Deadlocks$MonitorA")):
    u, (lo, hi) = un.get(me, {}), stuck[me]
    hi += (t_exit - t_stop) * 1e9
    got = u.get("waited_ns", 0)
    check(u.get("class") == cls and u.get("owner") == other, "locks: %s unfinished %s" % (me, u))
    check(0.9 * lo <= got <= hi and got > s2[me]["age_ns"],
          "locks: %s waited %d ns; the program says %d..%d, status %d before" % (me, got, lo, hi, s2[me]["age_ns"]))
    m = mons.get(cls, {})
    check((m.get("waits"), m.get("unfinished"), m.get("wait_ns")) == (1, 1, got),
          "locks: %s's monitor %s" % (me, m))
    print("# %s: unfinished %.3f s; the program: at least %.3f s, at most %.3f s" % (me, got / 1e9, lo / 1e9, hi / 1e9))
# The collapsed lock profile: the weights of locks, [unfinished] on the deadlocked only.
fold, unf = collections.Counter(), collections.Counter()
for line in open(work + "/lock.folded"):
    stack, n = line.rsplit(" ", 1)
    f = stack.split(";")
    fold[f[-1]] += int(n)
    if len(f) > 1 and f[-2] == "[unfinished]":
        unf[f[-1]] += int(n)
check(fold == {k: m["wait_ns"] for k, m in mons.items()}, "collapsed %s, locks %s" % (dict(fold), {k: m["wait_ns"] for k, m in mons.items()}))
check(unf == {c: mons[c]["wait_ns"] for c in ("Deadlocks$MonitorA", "Deadlocks$MonitorB") if c in mons},
      "collapsed: [unfinished] on %s" % dict(unf))
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY

    # Attached late, the agent has no monitor capabilities (HotSpot grants
    # them at load only): it says so, and still finds both cycles, the
    # monitors' through VMStructs (holders, not the objects).
    java_start -- Deadlocks "$work/stop2"
    wait_ready
    rp attach --agent "$RP_AGENT" $pid "dir=$work/rec2,wall=10ms" >"$work/attach" 2>&1 ||
        fail "attach failed: $(cat "$work/attach")"
    wait_for -p $pid - status_to "$work/s4" || { show_err; fail "the attached agent did not answer status"; }
    ctl threads >"$work/threads2.json" || fail "ctl threads (attached): $(head -c 300 "$work/threads2.json")"
    python3 - "$work/threads2.json" <<'PY' || fail "the attached agent's dump is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
un = r["unavailable"]
if not any("can_get_current_contended_monitor" in u for u in un):
    print("# unavailable: %s (this JVM grants the monitor capabilities late)" % un)
cycles = {tuple(sorted(e["thread"] for e in c)): c for c in r["deadlocks"]}
if sorted(cycles) != [("jucl-a", "jucl-b"), ("mon-a", "mon-b")]:
    bad.append("cycles %s" % sorted(cycles))
for c in cycles.values():
    for i, e in enumerate(c):
        nxt = c[(i + 1) % len(c)]["thread"]
        if e["waits_for"]["owner"] != nxt:
            bad.append("%s waits for a lock of %s, not %s" % (e["thread"], e["waits_for"]["owner"], nxt))
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY
    # Both deadlocked threads sampled blocked more than once, then the exit.
    blocked_twice() {
        ctl flush >/dev/null 2>&1 &&
            [ "$("$RP_DUMP" wall "$work/rec2" | awk -F'\t' '$4 == "blocked" { n[$1]++ } END { print (n["mon-a"] > 1 && n["mon-b"] > 1) }')" = 1 ]
    }
    wait_for -p $pid - blocked_twice || fail "the wall sampler did not see mon-a and mon-b blocked"
    touch "$work/stop2"
    wait $pid || { rc=$?; pid=; show_err; fail "java exited $rc (attached)"; }
    pid=
    no_hs_err
    rp locks "$work/rec2" >"$work/locks2.txt" 2>"$work/locks2.err" || fail "locks (attached) failed: $(cat "$work/locks2.err")"
    rp locks --json "$work/rec2" >"$work/locks2.json" || fail "locks --json (attached) failed"
    grep -q '^no lock samples (lock= was off): the monitor waits below are the wall-clock samples in state blocked' "$work/locks2.txt" ||
        fail "locks without lock= does not say it shows the blocked wall samples: $(head -5 "$work/locks2.txt")"
    python3 - "$work/locks2.json" <<'PY' || fail "locks' blocked sites are wrong (above)"
import json, sys
j = json.load(open(sys.argv[1]))
sites = {b["site"]: b for b in j["blocked"]}
ok = j["lock_samples"] == 0 and all(sites.get(m, {}).get("threads") == 1 for m in ("Deadlocks.monA", "Deadlocks.monB"))
print("# blocked sites: %s" % [(b["site"], b["samples"], b["threads"]) for b in j["blocked"]])
sys.exit(0 if ok else 1)
PY
}

# ------------------------------------------------------------- threads_big --

# A dump larger than the reply limit, the real one (RP_CONTROL_THREADS_REPLY_MAX,
# 16 MiB): 90 threads 1030 calls deep, in a method and class whose long names
# make each thread's 1024 frames take about 200 KB, and one monitor deadlock.
# The reply is cut, not refused: the cycle and its two threads first, then the
# others in the JVM's order, and the count left out is exact: the threads the
# JVM has (as the program counts them, plus the agent's own JVMTI threads) less
# those listed, all of them deep ones. ctl prints the count at the end of the
# text, and on stderr beside --json.
test_threads_big() {
    local deep=90
    java_start -agentpath:"$RP_AGENT=dir=$work/rec" -- DeepThreads $deep 1030
    wait_ready
    wait_socket
    rp ctl --json "$pid" threads >"$work/big.json" 2>"$work/big.err" ||
        fail "ctl threads: $(cat "$work/big.err")"
    rp ctl "$pid" threads >"$work/big.txt" 2>"$work/big.txt.err" ||
        fail "ctl threads (text): $(cat "$work/big.txt.err")"
    python3 - "$work" "$(sed -n 's/^threads //p' "$work/out")" $deep <<'PY' || fail "the cut dump is wrong (above)"
import json, sys
work, java_threads, deep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
LIMIT = 16 << 20                       # RP_CONTROL_THREADS_REPLY_MAX
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)
raw = open(work + "/big.json", "rb").read()
r = json.loads(raw)
ts = r["threads"]
names = [t["name"] for t in ts]
total, left = r["threads_total"], r["threads_omitted"]
agent = [n for n in names if n.startswith("ringprof-")]
listed_deep = [t for t in ts if t["name"].startswith("deep-")]
biggest = max(len(json.dumps(t)) for t in ts)
print("# %d of %d threads in a reply of %d bytes (limit %d), %d left out; a thread takes up to %d bytes"
      % (len(ts), total, len(raw), LIMIT, left, biggest))
check(r["ok"] and len(raw) <= LIMIT, "ok %s, %d bytes" % (r["ok"], len(raw)))
check(len(raw) > LIMIT - 2 * biggest, "the cut left %d bytes unused" % (LIMIT - len(raw)))
check(left > 0 and total == len(ts) + left, "threads_total %d, %d listed, threads_omitted %d" % (total, len(ts), left))
check(total == java_threads + len(agent), "threads_total %d; Java counts %d, the agent runs %s" % (total, java_threads, agent))
check(len(listed_deep) + left == deep, "%d deep threads listed and %d left out, of %d" % (len(listed_deep), left, deep))
check(all(len(t["frames"]) == 1024 and t["frames_total"] > 1024 for t in listed_deep), "deep stacks not at 1024 frames")
check([sorted(e["thread"] for e in c) for c in r["deadlocks"]] == [["dl-a", "dl-b"]], "deadlocks %s" % r["deadlocks"])
check(sorted(names[:2]) == ["dl-a", "dl-b"] and ts[0]["deadlocked"] and ts[1]["deadlocked"],
      "the deadlocked threads do not come first: %s" % names[:3])
want = "%d of %d threads are not in this dump: it stops at the reply limit (%d bytes), the deadlocked threads first" % (left, total, LIMIT)
err = open(work + "/big.err").read()
check(err == "ringprof ctl: note: " + want + "\n", "--json: stderr %r" % err)
txt = open(work + "/big.txt").read()
check(txt.startswith('Deadlock: "dl-'), "the text does not begin with the deadlock: %r" % txt[:100])
check(txt.endswith("\n... " + want + ".\n"), "the text ends %r" % txt[-300:])
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY
    no_hs_err
}

# RP_JDK=25: on the Temurin JDK 25 where it is installed (RP_JDK25), whose
# monitors hold their owner's id, not its JavaThread* (lock.c, owner_id_slot),
# and whose VMStructs lay JavaThread out otherwise (the compiler threads' names,
# vmnames.c); skipped with one line where it is not.
if [ "${RP_JDK:-17}" = 25 ]; then
    jdk=${RP_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
    [ -x "$jdk/bin/java" ] || { echo "JDK 25 not installed ($jdk): skipped"; exit 77; }
    RP_JAVA=$jdk/bin/java
fi

case "$test_name" in
billing|telemetry|ctl|threads|threads_big) "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
san_check
echo "ok ($test_name)"
