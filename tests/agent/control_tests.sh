#!/usr/bin/env bash
# tests/agent/control_tests.sh — the agent's control socket, end to end, against a
# live JVM (docs/control.md). One test per invocation:
#
#   control_tests.sh TEST [ENGINE]
#
# TEST is status, flush, accounting, stop_start, interval, bad_requests,
# other_uid, attach or concurrent. meson passes RP_JAVA, RP_AGENT, RP_JAR, RP_DUMP (as for
# agent_tests.sh) and RP_RINGPROF (the ringprof command). Every test also checks
# that the socket and the discovery file are gone once the JVM has exited.
set -uo pipefail

test_name=${1:?usage: control_tests.sh TEST [ENGINE]}
engine=${2:-async}
. "$(dirname "$0")/../lib.sh"
rp_begin "ctl-$test_name-$engine" "$test_name $engine"
fail_hook() { sed 's/^/  jvm: /' "$work/err" 2>/dev/null | head -20; }
# In an ASan build java runs under sanitized_java.sh (meson sets RP_SAN_CHECK to
# it), which writes ASan/UBSan/LSan reports into $RP_SAN_LOGDIR: fail() shows
# those that count, and san_check, before "ok", fails the test on any
# (docs/sanitizers.md).

samples() { ctl status | json 'r["samples"]["cpu"]'; }
# more_samples N: status counts more than N CPU samples written; for wait_for.
more_samples() { status_is "r['samples']['cpu'] > $1"; }

# start_jvm SECONDS [agent options]: Busy (heavy sampling on four threads and the
# JVM's own) with the agent, recording into $work/rec; waits for the socket. Tests
# end it with SIGTERM (end_jvm), an orderly exit with VMDeath, so SECONDS is only a
# bound: on a loaded machine JVMs start slowly.
start_jvm() {
    java_start -agentpath:"$RP_AGENT=dir=$work/rec,engine=$engine${2:-}" -- Busy "$1"
    wait_socket
}

# The JVM exits (SIGTERM, or on its own with "own"): the socket and the discovery
# file must be gone.
end_jvm() {
    local rc=0
    [ "${1:-}" = own ] || kill -TERM $pid
    wait $pid || rc=$?
    [ $rc = 0 ] || [ $rc = 143 ] || fail "java exited $rc"
    [ ! -e "$sock" ] || fail "the socket $sock is still there after exit"
    [ ! -e "$disc" ] || fail "the discovery file $disc is still there after exit"
    pid=
}

test_status() {
    start_jvm 120
    wait_for -p $pid - status_is 'r["uptime_ns"] > 1e9 and any(t["name"].startswith("busy-") and t["samples"] > 0 for t in r["threads"])' ||
        fail "no busy thread sampled: $(ctl status | head -c 300)"
    ctl status >"$work/status" || fail "status failed"
    note "$(head -c 300 "$work/status")..."
    python3 - "$work/status" <<'EOF' || fail "status reply lacks a field (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["state"] == "running", r
for k in ["options", "effective", "sampling", "interval_ns", "samples", "lost", "walk",
          "threads", "threads_total", "bytes_written", "chunks", "agent", "uptime_ns"]:
    assert k in r, k
assert r["samples"]["cpu"] > 0, r["samples"]
assert set(["ring_full", "nested", "too_big"]) <= set(r["lost"]), r["lost"]
assert r["threads"] and all(set(t) == {"tid", "name", "samples", "cpu_ns"} for t in r["threads"])
assert any(t["name"].startswith("busy-") and t["samples"] > 0 for t in r["threads"]), r["threads"]
assert r["threads_total"] >= len(r["threads"]) and len(r["threads"]) <= 50
assert r["chunks"]["current"].endswith(".rpc.part"), r["chunks"]
assert r["agent"]["cpu_ns"] > 0 and r["effective"]["engine"] in ("async", "jvmti")
assert r["uptime_ns"] > 1e9
if r["effective"]["engine"] == "async":
    t = r["timers"]
    assert r["effective"]["timer"] in ("perf", "perf-user", "posix"), r["effective"]
    assert t["source"] == r["effective"]["timer"], t
    assert t["perf" if t["source"] != "posix" else "posix"] > 0, t
else:
    assert r["effective"]["timer"] == "none" and "timers" not in r, r["effective"]
EOF
    rp list >"$work/list" || fail "ringprof list failed"
    grep -q "^$pid .*running .*Busy 120" "$work/list" || fail "ringprof list: $(cat "$work/list")"
    [ -s "$disc" ] || fail "no discovery file $disc"
    # The start line names the recording directory, absolute.
    grep -qxF "ringprof: recording to $(readlink -f "$work/rec")" "$work/err" ||
        fail "no start line naming $(readlink -f "$work/rec"): $(grep '^ringprof:' "$work/err" | head -3)"
    # The JVM's compiler threads by their names, not the kernel's comm cut to 15
    # bytes: what status and summary say is longer, and the comm is its start.
    python3 - "$work/status" "$pid" <<'EOF' || fail "status does not name the compiler threads in full (above)"
import json, sys
r = json.load(open(sys.argv[1]))
c = [(t["tid"], t["name"]) for t in r["threads"] if t["name"].startswith(("C1 Compiler", "C2 Compiler"))]
comm = {tid: open("/proc/%s/task/%d/comm" % (sys.argv[2], tid)).read().strip() for tid, _ in c}
print("# status: %s; their comm: %s" % (c, comm))
sys.exit(0 if c and all(n in ("C1 CompilerThread0", "C2 CompilerThread0") and comm[tid] == n[:15]
                        for tid, n in c) else 1)
EOF
    end_jvm
    rp summary --threads 100 "$work/rec" >"$work/summary" || fail "summary failed"
    # A compiler thread with samples, by its full name (at once, or as the name
    # it was renamed to): C2's or C1's, whichever the JIT kept busy in the run.
    grep -q -E ' C[12] CompilerThread[0-9]+[ )]' "$work/summary" ||
        fail "summary names no compiler thread in full: $(grep -i compiler "$work/summary")"
}

test_flush() {
    start_jvm 120 ,quiet=on
    wait_for -p $pid - more_samples 0 || fail "no samples"
    local path
    path=$(ctl flush | json 'r["path"]') || fail "flush failed"
    note "flush: $path"
    case "$path" in "$work"/rec/*.rpc) ;; *) fail "flush answered '$path'" ;; esac
    [ -f "$path" ] || fail "$path does not exist"
    rp summary "$path" >"$work/summary" || fail "ringprof summary failed on $path"
    grep -q "samples  *cpu" "$work/summary" || fail "no cpu samples in $path"
    grep -q "segments whole, 0 damaged, 0 cut off" "$work/summary" || fail "damage: $(tail -1 "$work/summary")"
    grep -q "unfinished" "$work/summary" && fail "$path was not closed cleanly"
    # rotate: the same, another file.
    local p2
    p2=$(ctl rotate | json 'r["path"]')
    [ -f "$p2" ] && [ "$p2" != "$path" ] || fail "rotate answered '$p2'"
    end_jvm
    "$RP_DUMP" check "$work/rec" >"$work/check" || fail "damaged recording: $(cat "$work/check")"
    ! grep -q "^ringprof: recording to" "$work/err" || fail "quiet=on printed the start line"
}

# Flushes during heavy sampling lose nothing: with sampling stopped and a last
# flush, the samples in the files equal the agent's own count (status), and the
# files' loss counters equal the status's; nothing stays in a ring or a pending
# segment. (Samples the rings dropped are in lost.*, in both.)
# The sampled kinds (cpu, alloc) are stopped before the last flush, so nothing of
# theirs can be written between the flush and the status; GC pauses go on being
# recorded after it (they are not sampled), so they are left out of the sums.
test_accounting() {
    start_jvm 120 ,interval=1ms
    for _ in 1 2 3 4 5; do sleep 0.5; ctl flush >/dev/null || fail "flush failed"; done
    wait_for -p $pid - more_samples 200 || true     # (the check below says how many)
    ctl stop >/dev/null
    sleep 0.5
    ctl flush >/dev/null
    ctl status >"$work/status"
    local st files
    st=$(json 'r["samples"]["cpu"] + r["samples"]["alloc"]' <"$work/status")
    "$RP_DUMP" check "$work/rec" >"$work/check" || fail "damaged: $(cat "$work/check")"
    files=$("$RP_RINGPROF" summary "$work/rec" |
            awk '$1 == "samples" && ($2 == "cpu" || $2 == "alloc") { n += $3 } END { print n + 0 }')
    "$RP_DUMP" counters "$work/rec" | awk -F'\t' '$1 ~ /^lost\./ { sub(/^lost\./, "", $1); print $1, $2 }' |
        sort >"$work/lost_files"
    json '"\n".join("%s %d" % kv for kv in sorted(r["lost"].items()) if kv[1])' <"$work/status" |
        sed '/^$/d' >"$work/lost_status"
    note "status $st samples, files $files; lost: $(tr '\n' ' ' <"$work/lost_status")"
    [ "$st" -gt 200 ] || fail "only $st samples: the test tests nothing"
    [ "$st" = "$files" ] || fail "status says $st samples, the files hold $files"
    diff "$work/lost_files" "$work/lost_status" >/dev/null || fail "loss counters differ: files $(cat "$work/lost_files") vs status $(cat "$work/lost_status")"
    end_jvm
}

test_stop_start() {
    start_jvm 120
    sleep 1
    ctl stop cpu | json 'r["ok"]' | grep -q True || fail "stop cpu failed"
    [ "$(ctl status | json 'r["state"]')" = stopped ] || fail "state is not 'stopped'"
    sleep 0.5                             # a handler under way ends
    ctl flush >/dev/null || fail "flush failed"   # the last records reach the files
    local a b c
    a=$(samples); sleep 1; b=$(samples)
    note "stopped: $a -> $b"
    [ "$a" = "$b" ] || fail "samples grew from $a to $b while stopped"
    ctl start cpu >/dev/null || fail "start cpu failed"
    wait_for -p $pid - more_samples $((b + 20)) || true
    c=$(samples)
    note "started again: $b -> $c"
    [ "$c" -gt $((b + 20)) ] || fail "samples did not grow after start: $b -> $c"
    [ "$(ctl status | json 'r["state"]')" = running ] || fail "state is not 'running'"
    end_jvm
}

test_interval() {
    start_jvm 120 ,interval=50ms
    # Rates per second of the JVM's CPU (cpu_window), not of the clock, which
    # gives Busy less CPU when other work shares the machine.
    cpu_window 0.5
    local a b c d r1 r2
    a=$(samples); cpu_window 1; b=$(samples)
    ctl set interval=1ms | json 'r["ok"]' | grep -q True || fail "set interval failed"
    [ "$(ctl status | json 'r["interval_ns"]')" = 1000000 ] || fail "status does not show the new interval"
    cpu_window 0.5
    c=$(samples); cpu_window 1; d=$(samples)
    r1=$((b - a)); r2=$((d - c))
    note "samples per CPU second at 50ms: $r1, at 1ms: $r2"
    [ "$r2" -gt $((r1 * 5)) ] || fail "the rate went from $r1/s only to $r2/s"
    # Each set finishes the chunk written under the settings before it, and the
    # next chunks' headers name every setting changed: summary shows the options
    # per run of chunks as the headers (read here, not by the tool) say, and
    # one line per group of counters, with its page of docs/.
    ctl set alloc=256k | json 'r["ok"]' | grep -q True || fail "set alloc failed"
    ctl flush >/dev/null || fail "flush failed"
    end_jvm
    rp summary "$work/rec" >"$work/summary" 2>&1 || fail "summary: $(cat "$work/summary")"
    rp summary --counters "$work/rec" >"$work/counters" 2>&1 || fail "summary --counters failed"
    "$RP_DUMP" counters "$work/rec" >"$work/dump_counters"
    python3 "$(dirname "$0")/summary_check.py" "$work/rec" "$work/summary" \
        "$work/counters" "$work/dump_counters" "$(dirname "$0")/../../docs" ||
        fail "summary's options or counters (above)"
}

# Send stdin to the socket as is; print the first reply line. The server may
# close the connection before it has read everything (an oversized request).
raw() {
    python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
try:
    s.sendall(sys.stdin.buffer.read())
except OSError:
    pass
print(s.makefile().readline().strip())' "$sock"
}

# Allocation sampling switched at run time: off at start, started, its interval
# changed, stopped; the files hold exactly the allocation samples status counted.
test_alloc_switch() {
    start_jvm 120 ,alloc=off
    local a b c d e
    if [ "$engine" = jvmti ]; then
        # engine=jvmti gives threads rings only for allocation samples.
        ctl start alloc >"$work/r" 2>&1 && fail "start alloc succeeded with jvmti, alloc=off"
        grep -q "started with alloc=off" "$work/r" || fail "start alloc: $(cat "$work/r")"
        end_jvm
        return
    fi
    sleep 1
    ctl status | json 'r["alloc"]["on"] is False and r["alloc"]["available"] is True' |
        grep -q True || fail "alloc=off: status $(ctl status)"
    a=$(ctl status | json 'r["samples"]["alloc"]')
    [ "$a" = 0 ] || fail "$a alloc samples with alloc=off"
    ctl start alloc | json 'r["ok"]' | grep -q True || fail "start alloc failed"
    ctl status | json '"alloc" in r["sampling"] and r["alloc"]["on"]' | grep -q True ||
        fail "start alloc: not sampling ($(ctl status | json 'r["sampling"]'))"
    wait_for -p $pid - status_is 'r["samples"]["alloc"] > 20' || true
    b=$(ctl status | json 'r["samples"]["alloc"]')
    note "started: $a -> $b allocation samples"
    [ "$b" -gt 20 ] || fail "only $b allocation samples in ${rp_wait_default} s after start"
    ctl set alloc=64k | json 'r["ok"]' | grep -q True || fail "set alloc=64k failed"
    [ "$(ctl status | json 'r["effective"]["alloc_bytes"]')" = 65536 ] ||
        fail "set alloc=64k: effective $(ctl status | json 'r["effective"]')"
    ctl stop alloc | json 'r["ok"]' | grep -q True || fail "stop alloc failed"
    sleep 0.5                             # a callback past its check pushes its sample
    ctl flush >/dev/null || fail "flush failed"   # what was pushed reaches the files
    c=$(ctl status | json 'r["samples"]["alloc"]'); sleep 1
    d=$(ctl status | json 'r["samples"]["alloc"]')
    note "stopped: $c -> $d"
    [ "$c" = "$d" ] || fail "allocation samples grew from $c to $d while stopped"
    ctl flush >/dev/null || fail "flush failed"
    e=$(ctl status | json 'r["samples"]["alloc"]')
    "$RP_DUMP" check "$work/rec" >/dev/null || fail "damaged recording"
    local files
    files=$("$RP_RINGPROF" summary "$work/rec" | awk '$1 == "samples" && $2 == "alloc" { print $3 }')
    note "status $e allocation samples, files ${files:-none}"
    [ "$files" = "$e" ] || fail "status says $e allocation samples, the files hold ${files:-none}"
    end_jvm
}

test_bad_requests() {
    start_jvm 120
    local r
    r=$(printf 'stat us\n' | raw)
    note "malformed: $r"
    echo "$r" | json 'r["ok"] is False and "unknown command" in r["error"]' | grep -q True || fail "malformed request: $r"
    r=$(head -c 5000 /dev/zero | tr '\0' a | raw)
    note "oversized: $r"
    echo "$r" | json 'r["ok"] is False and "too long" in r["error"]' | grep -q True || fail "oversized request: $r"
    ctl set alloc=2g >"$work/r" 2>&1 && fail "set alloc=2g succeeded"
    grep -q "bad value '2g' for alloc" "$work/r" || fail "set alloc=2g: $(cat "$work/r")"
    ctl version | json 'r["pid"]' | grep -qx "$pid" || fail "the agent does not answer after bad requests"
    end_jvm
}

# The socket is 0600 in a 0700 directory: another uid cannot even connect.
test_other_uid() {
    [ "$(id -u)" = 0 ] || { echo "needs root to switch users: skipped"; exit 77; }
    start_jvm 120
    [ "$(stat -c %a "$sock")" = 600 ] || fail "socket mode $(stat -c %a "$sock")"
    chmod 755 "$work/rec"                 # only the socket's own mode stands in the way
    setpriv --reuid=65534 --regid=65534 --clear-groups "$RP_RINGPROF" ctl "$sock" status \
        >"$work/nobody" 2>&1 && fail "uid 65534 was served: $(cat "$work/nobody")"
    note "as nobody: $(cat "$work/nobody")"
    grep -qi "permission denied" "$work/nobody" || fail "the client's error does not say why"
    ctl status >/dev/null || fail "the owner is no longer served"
    end_jvm
}

# ringprof attach without dir=, into a JVM whose working directory is not ours:
# the reply and the JVM's stderr name where the recording goes, absolute. Then
# flush, then ringprof convert.
test_attach() {
    mkdir -p "$work/jvmcwd"
    pushd "$work/jvmcwd" >/dev/null || fail "cd $work/jvmcwd"
    java_start -- AttachTarget "$work/stop"
    popd >/dev/null || fail "cd back"
    wait_ready
    rp attach --agent "$RP_AGENT" $pid "engine=$engine,interval=1ms" \
        >"$work/attach" 2>&1 || fail "attach failed: $(cat "$work/attach")"
    local rec
    rec=$(readlink -f "$work/jvmcwd")/ringprof-$pid
    grep -qxF "ringprof: recording to $rec" "$work/attach" ||
        fail "attach's reply does not name $rec: $(cat "$work/attach")"
    grep -qxF "ringprof: recording to $rec" "$work/err" ||
        fail "the JVM's stderr does not name $rec: $(grep '^ringprof:' "$work/err" | head -3)"
    [ -d "$rec" ] || fail "$rec is not a directory"
    [ ! -e "/tmp/ringprof-$(id -u)/$pid.attach-dir" ] || fail "attach left the attach-dir file"
    disc="/tmp/ringprof-$(id -u)/$pid.json"
    sock=$(json 'r["socket"]' <"$disc") || fail "no discovery file $disc"
    wait_for -p $pid - more_samples 500 || fail "fewer than 500 samples after the attach"
    local path
    path=$(ctl flush | json 'r["path"]') || fail "flush failed"
    [ -f "$path" ] || fail "flush answered '$path'"
    rp convert --format collapsed -o "$work/out.folded" "$path" || fail "convert failed"
    grep -q "AttachTarget.attachBurn" "$work/out.folded" || fail "attachBurn is not in the converted profile"
    note "converted $path: $(wc -l <"$work/out.folded") stacks"
    touch "$work/stop"
    end_jvm own
}

# 200 clients connect to a live agent at once, each asks for status and closes;
# every one gets a whole JSON reply with samples (64 are served at a time, the
# others wait in the listen backlog: docs/control.md), and sampling goes on.
test_concurrent() {
    start_jvm 120
    wait_for -p $pid - more_samples 0 || fail "no samples"
    local before after
    before=$(samples)
    python3 - "$sock" <<'EOF' || fail "not every concurrent client got its status reply"
import json, socket, sys, threading
path, n = sys.argv[1], 200
socks, ok = [], [0]
lock = threading.Lock()
for _ in range(n):                      # all connected before any asks
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    socks.append(s)
def ask(s):
    s.sendall(b"status\n")
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()                           # the server serves 64 at once; the
    r = json.loads(buf)                 # rest wait in its backlog until one closes
    if r.get("ok") and r["samples"]["cpu"] > 0:
        with lock:
            ok[0] += 1
threads = [threading.Thread(target=ask, args=(s,)) for s in socks]
for t in threads: t.start()
for t in threads: t.join()
print(f"# {ok[0]} of {n} concurrent status replies")
sys.exit(0 if ok[0] == n else 1)
EOF
    wait_for -p $pid - more_samples "$before" || true
    after=$(samples)
    [ "$after" -gt "$before" ] || fail "sampling stalled during the clients ($before -> $after)"
    end_jvm
}

case "$test_name" in
status|flush|accounting|stop_start|interval|alloc_switch|bad_requests|other_uid|attach|concurrent) "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
san_check
echo "ok ($test_name $engine)"
