#!/usr/bin/env bash
# tests/agent/security_tests.sh — the attacks of issue 14, each run as an attacker
# would: the unprivileged user nobody (uid 65534) against root's tools and root's
# JVM, and root against nobody's JVM. One test per invocation:
#
#   security_tests.sh TEST
#
#   dir_removed     the recording directory is removed while the JVM runs; at exit
#                   the agent names it (it printed freed memory: a use-after-free
#                   that the ASan build, agent_asan_dir_removed, reports)
#   ctl_planted     nobody creates /tmp/ringprof-0 (mode 0777) before root's JVM
#                   starts and plants a discovery file naming its own socket:
#                   root's `ringprof ctl PID` must answer from the real agent
#   ctl_peer        nobody's own discovery file names a socket that another of
#                   nobody's processes serves: root's ctl must refuse it (SO_PEERCRED)
#   list_planted    discovery files planted for `ringprof list`: another uid's
#                   directory, a file naming root's JVM, a file naming root's 0600
#                   socket, and terminal escapes in what is shown
#   attach_symlink  nobody keeps a symlink from its JVM's attach-error file to a
#                   file only root may read while root attaches: the file is never
#                   read and the attach is reported as the success it is
#   idle_lockout    64 connections that send nothing, or that idle after a request,
#                   must not keep a fresh `ringprof ctl PID status` out
#   dir_foreign     dir= owned by nobody, mode 0777, sticky 1777 (a private
#                   subdirectory), its subdirectory planted by nobody; a ctl= socket
#                   in nobody's directory
#   retention       chunk-named sparse files of another uid in the recording
#                   directory: never counted, never deleted, and the agent's own
#                   chunks are not deleted on their account
#   dir_too_long    dir= of 1024 bytes or more: one line naming dir and the limit
#   dir_symlink     (issue 28) dir= through nobody's symlink to a root-only
#                   directory, in nobody's directory or in sticky /tmp, with or
#                   without missing components after it, and root's own link into
#                   nobody's directory: refused, and nothing created anywhere
#   dir_repointed   (issue 28) the recording directory removed while root's JVM
#                   runs, and a link of nobody's planted at its path, first to
#                   another root recording's directory, then to nobody's own: no
#                   file of that recording is deleted, no chunk lands in either
#
# The attacks of issue 28 on root's `ringprof record`, `convert` and `diff` need no
# JVM: record runs tests/convert/standin_java.sh, which writes rp_testwriter's
# recording where the agent would, with the recording id record gave it.
#   record_planted  nobody makes /tmp/prof (0755) with symlinks recording -> a
#                   root-only directory, profile.txt and flamegraph.html -> root's
#                   secrets; and /tmp/prof2 whose recording directory gets nobody's
#                   chunk while the JVM starts: root's record refuses both, with
#                   and without --force, and changes nothing anywhere
#   record_race     root's own DIR with what a race would leave there (planted by
#                   root, handed to nobody): symlinks at the output names are
#                   replaced, not followed; a recording symlink is refused and
#                   --force through it deletes nothing; nobody's chunk dropped into
#                   the recording while the JVM starts is left out
#   convert_symlink root's convert and diff -o into nobody's directory onto
#                   nobody's symlinks (replaced, not followed), through nobody's
#                   symlink in sticky /tmp (refused), and through root's own one
#                   there (followed)
#
# and those of issue 28 on the control socket:
#
#   ctl_link        ctl= through nobody's symlink to root's directory (in nobody's
#                   directory, in sticky /tmp): refused, no socket, the JVM runs;
#                   through root's own link re-pointed after start: root's ctl and
#                   list reach the agent, and at exit the agent removes its own
#                   socket and nothing else; `ctl SOCKET` through nobody's link is
#                   refused
#   slow_pipeline   64 clients that pipeline requests and read slowly: a fresh
#                   `ctl PID status` is answered within the documented bound
#   threads_readers 64 slow readers of `threads` (8 MB dumps): the JVM's RSS
#                   grows by at most the held-reply bound, the rest are told busy
#   dir_socket      the recording directory removed and nobody's directory in
#                   its parent's place: no socket there, one true line from ctl;
#                   the parent root's again: the socket and discovery file back
#
# Each test re-runs itself in a private mount namespace with a fresh tmpfs on
# /tmp (unshare -m), so it never touches the machine's /tmp/ringprof-* and sees
# no other test's files. It needs root, the nobody user, unshare and setpriv; it
# is skipped (77) without them. Waits are bounded generously (a busy CI machine
# starts a JVM in seconds); the bounds that are the point of a test: how long a
# fresh client waits behind idle or pipelining ones, 15 s (RP_CONTROL_STALL_MS is
# 5 s; before the fixes it was 60 s or for as long as they went on); how soon a
# removed socket is back, 30 s (RP_CONTROL_CHECK_MS is 1 s; before, never); how
# much 64 slow readers of `threads` may grow the JVM, 128 MiB (the replies held,
# RP_CONTROL_HELD_MAX, are at most 33 MiB, and a dump is built in two buffers of
# at most 16 MiB; before, 557 MB).
#
# meson passes RP_JAVA, RP_AGENT, RP_JAR (tests/java's programs), RP_RINGPROF,
# RP_TESTWRITER (tests/convert's rp_testwriter) and, in the ASan build,
# RP_SAN_CHECK (as for control_tests.sh).
set -uo pipefail

test_name=${1:?usage: security_tests.sh TEST}
NOBODY=65534

if [ -z "${RP_SEC_INSIDE:-}" ]; then
    [ "$(id -u)" = 0 ] || { echo "needs root (to act as nobody and to unshare): skipped"; exit 77; }
    getent passwd $NOBODY >/dev/null || { echo "no user $NOBODY: skipped"; exit 77; }
    command -v unshare >/dev/null && command -v setpriv >/dev/null ||
        { echo "needs unshare and setpriv: skipped"; exit 77; }
    RP_SEC_INSIDE=1 exec unshare -m --propagation private "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
# The build tree may itself be under /tmp (a checkout in /tmp): the machine's
# /tmp stays reachable at /mnt in this namespace, and the paths into it move.
mount --bind /tmp /mnt ||
    { echo "cannot bind /tmp to /mnt in a private namespace: skipped"; exit 77; }
mount -t tmpfs -o mode=1777,size=256m tmpfs /tmp ||
    { echo "cannot mount a private /tmp: skipped"; exit 77; }
for v in RP_AGENT RP_JAR RP_RINGPROF RP_DUMP RP_SAN_CHECK RP_JAVA RP_TESTWRITER LD_LIBRARY_PATH; do
    [ -n "${!v:-}" ] && export "$v=$(sed -E 's#(^|:)/tmp/#\1/mnt/#g' <<<"${!v}")"
done
[[ $here == /tmp/* ]] && here=/mnt/${here#/tmp/}
cd / || exit 1          # meson's working directory (the build tree) may be gone

. "$here/../lib.sh"
TMPDIR=/tmp rp_begin "sec-$test_name" "$test_name"
keep_scratch() {
    # The namespace's /tmp goes with it: keep the evidence outside.
    local out="${RP_SEC_KEEP:-/var/tmp}/rp-sec-$test_name.$$"
    cp -a "$work" "$out" 2>/dev/null && echo "scratch kept: $out"
}
fail_hook() {
    local f
    for f in "$work"/*.err; do [ -f "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" | head -10; done
    return 0
}
mkdir -p "$RP_SAN_LOGDIR"
chmod 777 "$RP_SAN_LOGDIR"

# What nobody runs must be readable by nobody wherever the build tree is.
bin="$work/bin"
mkdir -p "$bin"
cp "$RP_AGENT" "$bin/libringprof.so"
cp "$RP_JAR" "$bin/programs.jar"
cp "$here/fake_agent.py" "$bin/"
chmod -R a+rX "$bin"
agent="$bin/libringprof.so"

as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }
# A python3 that nobody may run (root's PATH may lead to one in root's home).
py=/usr/bin/python3
as_nobody "$py" -c '' 2>/dev/null || py=$(as_nobody bash -c 'command -v python3') ||
    { echo "no python3 that uid $NOBODY can run: skipped"; exit 77; }
rp() { "$RP_RINGPROF" "$@"; }
json() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
# Terminal control bytes (ESC, BEL, CSI) in a file: the tools must escape them.
has_controls() { LC_ALL=C grep -q $'[\x1b\x07\x9b]' "$1"; }
ESCAPES=$'\e]0;pwned\a\e[2J\e[31m'

# start_java USER NAME OPTIONS [CLASS ARGS...]: CLASS (Sleeper for 120 s) with the
# agent (OPTIONS, or none when empty) as USER (root or nobody); sets $jpid. Its
# output is in $work/NAME.*.
start_java() {
    local who=$1 name=$2 opts=$3 pre=() main=("${@:4}")
    [ ${#main[@]} = 0 ] && main=(Sleeper 120)
    [ "$who" = nobody ] && pre=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
    local ap=()
    [ -n "$opts" ] && ap=(-agentpath:"$agent=$opts")
    "${pre[@]}" "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" "${ap[@]}" \
        -cp "$bin/programs.jar" "${main[@]}" >"$work/$name.out" 2>"$work/$name.err" &
    jpid=$!
    pids+=("$jpid")
}

wait_file() {   # wait_file TEST-OP PATH: the test becomes true (wait_for's bound)
    wait_for - test "$1" "$2"
}

# start_fake USER NAME SOCKET STATE [fake_agent.py options]: sets $fpid.
start_fake() {
    local who=$1 name=$2; shift 2
    local pre=()
    [ "$who" = nobody ] && pre=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
    "${pre[@]}" "$py" "$bin/fake_agent.py" "$@" >"$work/$name.out" 2>"$work/$name.err" &
    fpid=$!
    pids+=("$fpid")
    wait_line -p "$fpid" ready "$work/$name.out" || fail "the fake agent $name did not start"
}

end_java() {   # end_java PID: SIGTERM, an orderly exit with VMDeath
    kill -TERM "$1" 2>/dev/null || true
    local rc=0
    wait "$1" || rc=$?
    [ $rc = 0 ] || [ $rc = 143 ] || fail "java exited $rc"
}

# ---------------------------------------------------------------- 1 --------

test_dir_removed() {
    start_java root jvm "dir=$work/rec,flush=100ms"
    wait_file -S "$work/rec/ringprof-$jpid.sock" || fail "the agent did not start"
    sleep 0.5
    rm -rf "$work/rec"
    end_java $jpid
    san_check                  # before the ASan build's report is lost in the ERR trap
    note "agent: $(grep '^ringprof:' "$work/jvm.err" | tr '\n' ' ' || true)"
    grep -q "^ringprof: the last chunk in $work/rec could not be closed cleanly$" "$work/jvm.err" ||
        fail "the message does not name the directory: $(grep 'last chunk' "$work/jvm.err" | cat -v || true)"
}

# ---------------------------------------------------------------- 2 --------

test_ctl_planted() {
    # Before root's JVM starts, nobody takes /tmp/ringprof-0.
    as_nobody mkdir -m 0777 /tmp/ringprof-0
    as_nobody chmod 0777 /tmp/ringprof-0
    start_java root jvm "dir=$work/rec"
    wait_file -S "$work/rec/ringprof-$jpid.sock" || fail "the agent did not start"
    grep -q "no discovery file" "$work/jvm.err" ||
        fail "the agent wrote into nobody's /tmp/ringprof-0: $(cat "$work/jvm.err")"
    # ... and plants a discovery file for it naming a socket of its own.
    start_fake nobody fake /tmp/ringprof-0/evil.sock planted \
        --disc /tmp/ringprof-0/$jpid.json --disc-pid $jpid --disc-uid 0
    local cmd rc
    for cmd in status flush; do
        rc=0
        rp ctl "$jpid" $cmd >"$work/ctl.out" 2>"$work/ctl.err" || rc=$?
        note "ctl $cmd: rc $rc; $(head -c 200 "$work/ctl.err")"
        grep -q FAKE "$work/ctl.out" && fail "root's ctl $cmd showed nobody's answer: $(cat "$work/ctl.out")"
        [ $rc = 0 ] || fail "root's ctl $cmd failed: $(cat "$work/ctl.err")"
        grep -q "/tmp/ringprof-0 belongs to uid $NOBODY (mode 0777)" "$work/ctl.err" ||
            fail "ctl does not say why it passed the discovery file over: $(cat "$work/ctl.err")"
    done
    # Into a file, not a pipe: under pipefail `grep -q` may end the pipe before
    # ctl has written its reply, and ctl's SIGPIPE would fail the check.
    rp ctl "$jpid" status >"$work/status.out" 2>&1
    grep -q '"samples"' "$work/status.out" ||
        fail "the real agent did not answer: $(head -c 400 "$work/status.out")"
    end_java $jpid
}

test_ctl_peer() {
    # nobody's own JVM and agent, as root would find them ...
    mkdir -p "$work/nobody"
    chown $NOBODY:$NOBODY "$work/nobody"
    start_java nobody jvm "dir=$work/nobody/rec"
    local jvm=$jpid disc=/tmp/ringprof-$NOBODY/$jpid.json
    wait_file -s "$disc" || fail "nobody's agent wrote no discovery file"
    rp ctl "$jvm" version >/dev/null || fail "root cannot reach nobody's agent"
    # ... then its discovery file names a socket that another process serves.
    start_fake nobody fake "$work/nobody/evil.sock" peer \
        --disc "$disc" --disc-pid "$jvm" --disc-uid $NOBODY
    local rc=0
    rp ctl "$jvm" status >"$work/ctl.out" 2>"$work/ctl.err" || rc=$?
    note "ctl: rc $rc; $(cat "$work/ctl.err")"
    grep -q FAKE "$work/ctl.out" && fail "root's ctl showed another process's answer"
    [ $rc = 1 ] || fail "root's ctl exited $rc"
    grep -q "is served by pid $fpid (uid $NOBODY), not by pid $jvm (uid $NOBODY)" "$work/ctl.err" ||
        fail "the refusal does not say why: $(cat "$work/ctl.err")"
    kill "$fpid"
    kill -TERM "$jvm"
    wait "$jvm" || true
}

test_list_planted() {
    start_java root jvm "dir=$work/rec"
    local root_jvm=$jpid root_sock="$work/rec/ringprof-$jpid.sock"
    wait_file -S "$root_sock" || fail "the agent did not start"
    wait_file -s "/tmp/ringprof-0/$root_jvm.json" || fail "no discovery file"
    as_nobody mkdir -m 0700 /tmp/ringprof-$NOBODY
    mkdir -p "$work/nobody"
    chown $NOBODY:$NOBODY "$work/nobody"
    # A directory named for uid 4242, made by nobody, naming root's 0600 socket.
    as_nobody mkdir -m 0700 /tmp/ringprof-4242
    as_nobody "$py" -c 'import json,sys; json.dump({"pid":1,"uid":4242,"socket":sys.argv[1],"main":"M"},open("/tmp/ringprof-4242/1.json","w"))' "$root_sock"
    # nobody's own directory: a file naming root's JVM, and one of its own
    # processes (the fake) naming root's socket.
    start_fake nobody fake1 "$work/nobody/fake1.sock" "$ESCAPES" \
        --disc "/tmp/ringprof-$NOBODY/$root_jvm.json" --disc-pid "$root_jvm" --disc-socket "$root_sock"
    start_fake nobody fake2 "$work/nobody/fake2.sock" "x" \
        --disc "/tmp/ringprof-$NOBODY/x.json" --disc-socket "$root_sock"
    local f2=$fpid
    as_nobody mv "/tmp/ringprof-$NOBODY/x.json" "/tmp/ringprof-$NOBODY/$f2.json"
    # A well-formed agent of nobody's whose main and state are terminal escapes.
    start_fake nobody fake3 "$work/nobody/fake3.sock" "$ESCAPES" \
        --disc "/tmp/ringprof-$NOBODY/y.json" --disc-main "Main$ESCAPES"
    local f3=$fpid
    as_nobody mv "/tmp/ringprof-$NOBODY/y.json" "/tmp/ringprof-$NOBODY/$f3.json"
    rp list >"$work/list.out" 2>"$work/list.err" || fail "ringprof list failed"
    note "list: $(cat -v "$work/list.out" "$work/list.err" | tr '\n' '|')"
    ! has_controls "$work/list.out" && ! has_controls "$work/list.err" ||
        fail "list printed raw terminal escapes: $(cat -v "$work/list.out" "$work/list.err")"
    grep -q "^1 " "$work/list.out" && fail "list shows the file planted in /tmp/ringprof-4242"
    grep -q "skipping /tmp/ringprof-4242: it belongs to uid $NOBODY (mode 0700), not to uid 4242 or root" \
        "$work/list.err" || fail "list does not say why it skipped /tmp/ringprof-4242"
    grep -q "it names pid $root_jvm, which runs as uid 0, not $NOBODY" "$work/list.err" ||
        fail "list does not say why it skipped the file naming root's JVM"
    grep -q "pid $f2: $root_sock is served by pid $root_jvm (uid 0), not by pid $f2" "$work/list.err" ||
        fail "list does not refuse the socket nobody's file names"
    grep -q "^$root_jvm  *running .*Sleeper" "$work/list.out" || fail "root's own JVM is not listed"
    grep "^$f3 " "$work/list.out" | grep -qF 'Main\x1b]0;pwned\x07' ||
        fail "nobody's agent is not shown with its escapes made visible"
    rp list --json >"$work/list.json" 2>/dev/null
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/list.json" ||
        fail "list --json is not JSON"
    ! has_controls "$work/list.json" || fail "list --json printed raw escapes"
    end_java $root_jvm
}

# ---------------------------------------------------------------- 3 --------

test_attach_symlink() {
    echo "TOPSECRET root's own" >"$work/secret"
    chmod 600 "$work/secret"
    mkdir -p "$work/nobody"
    chown $NOBODY:$NOBODY "$work/nobody"
    fresh "$work/jvm.out" "$work/jvm.err"
    setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
        "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" -cp "$bin/programs.jar" \
        AttachTarget "$work/nobody/stop" >"$work/jvm.out" 2>"$work/jvm.err" &
    local jvm=$!
    pids+=("$jvm")
    wait_line -p "$jvm" ready "$work/jvm.out" || fail "nobody's JVM did not start"
    as_nobody mkdir -p -m 0700 /tmp/ringprof-$NOBODY
    # While root attaches, nobody keeps the reason file a link to root's secret.
    setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
        bash -c 'while :; do ln -sfn "$1" "$2.x" && mv -fT "$2.x" "$2"; done' _ \
        "$work/secret" "/tmp/ringprof-$NOBODY/$jvm.attach-error" &
    pids+=($!)
    local rc=0
    rp attach --agent "$agent" "$jvm" "dir=$work/nobody/rec" >"$work/attach.out" 2>"$work/attach.err" || rc=$?
    kill "${pids[-1]}"
    note "attach: rc $rc; $(cat "$work/attach.out" "$work/attach.err" | tr '\n' '|')"
    grep -q TOPSECRET "$work/attach.out" "$work/attach.err" && fail "root's attach printed a root-only file"
    [ $rc = 0 ] && grep -q "loaded $agent into pid $jvm" "$work/attach.out" ||
        fail "a successful attach was reported as failed: rc $rc"
    wait_file -S "$work/nobody/rec/ringprof-$jvm.sock" || fail "the agent is not running"
    as_nobody touch "$work/nobody/stop"
    wait "$jvm" || true
}

# ---------------------------------------------------------------- 4 --------

test_idle_lockout() {
    start_java root jvm "dir=$work/rec"
    local sock="$work/rec/ringprof-$jpid.sock"
    wait_file -S "$sock" || fail "the agent did not start"
    local mode t0 t1
    for mode in silent served; do
        fresh "$work/hold.out"     # not the last holder's "holding" (lib.sh, fresh)
        python3 - "$sock" "$mode" >"$work/hold.out" 2>&1 <<'EOF' &
import socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
held = []
for _ in range(64):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    if mode == "served":          # one request, then idle (a request every 59 s)
        s.sendall(b"version\n")
        s.recv(4096)
    held.append(s)
print("holding", flush=True)
time.sleep(120)
EOF
        local holder=$!
        pids+=($holder)
        wait_file -s "$work/hold.out" && grep -q holding "$work/hold.out" ||
            fail "the clients did not connect: $(cat "$work/hold.out")"
        t0=$(date +%s%N)
        rp ctl --timeout 30 "$jpid" status >"$work/ctl.out" 2>"$work/ctl.err" ||
            fail "ctl status behind 64 $mode connections failed: $(cat "$work/ctl.err")"
        t1=$(date +%s%N)
        note "behind 64 $mode connections: status in $(( (t1 - t0) / 1000000 )) ms"
        [ $(( (t1 - t0) / 1000000 )) -le 15000 ] ||
            fail "status waited $(( (t1 - t0) / 1000000 )) ms behind 64 $mode connections"
        kill $holder
        wait $holder 2>/dev/null || true
    done
    grep -q "dropped a client that sent no request" "$work/jvm.err" ||
        fail "the silent clients' drop was not logged"
    grep -q "closed the one idle longest" "$work/jvm.err" || fail "the eviction was not logged"
    [ "$(grep -c "control socket" "$work/jvm.err")" -le 6 ] ||
        fail "the drops were not rate-limited: $(grep -c "control socket" "$work/jvm.err") lines"
    end_java $jpid
}

# ---------------------------------------------------------------- 5 --------

refused() {   # refused NAME DIR-OPTION WANT: the JVM refuses to start, one line
    start_java root "$1" "$2"
    local rc=0
    jvm_ended() { ! kill -0 $jpid 2>/dev/null; }
    wait_for 30 jvm_ended || true        # a refusal ends it at once
    kill -0 $jpid 2>/dev/null && { kill -9 $jpid; fail "$2 was accepted (the JVM runs)"; }
    wait $jpid || rc=$?
    note "$1: exit $rc: $(cat "$work/$1.err")"
    [ $rc != 0 ] || fail "$2 was accepted"
    grep -q "$3" "$work/$1.err" || fail "$2: the refusal does not say '$3': $(cat "$work/$1.err")"
    [ "$(grep -c '^ringprof:' "$work/$1.err")" = 1 ] || fail "$2: not one line"
}

test_dir_foreign() {
    mkdir -p "$work/theirs" "$work/open" "$work/sticky" "$work/sticky2"
    chown $NOBODY:$NOBODY "$work/theirs"
    chmod 0755 "$work/theirs"
    chmod 0777 "$work/open"
    chmod 1777 "$work/sticky" "$work/sticky2"
    refused theirs "dir=$work/theirs" "refusing recording directory $work/theirs: $work/theirs belongs to uid $NOBODY (mode 0755)"
    refused nested "dir=$work/theirs/rec" "$work/theirs belongs to uid $NOBODY (mode 0755)"
    refused open "dir=$work/open" "$work/open may be written by every user (mode 0777"
    # sticky and open to all: a private subdirectory, said once.
    start_java root sticky "dir=$work/sticky"
    wait_file -S "$work/sticky/ringprof-0/ringprof-$jpid.sock" || fail "no socket in the private subdirectory"
    grep -q "recording into its private subdirectory $work/sticky/ringprof-0 instead" "$work/sticky.err" ||
        fail "the subdirectory was not announced: $(cat "$work/sticky.err")"
    [ "$(stat -c '%u %a' "$work/sticky/ringprof-0")" = "0 700" ] || fail "the subdirectory is not private"
    rp ctl "$jpid" flush | grep -q "$work/sticky/ringprof-0/.*\.rpc" || fail "flush did not write into it"
    end_java $jpid
    # ... unless nobody made that subdirectory first.
    as_nobody mkdir -m 0777 "$work/sticky2/ringprof-0"
    as_nobody chmod 0777 "$work/sticky2/ringprof-0"
    refused sticky2 "dir=$work/sticky2" "its private subdirectory $work/sticky2/ringprof-0 belongs to uid $NOBODY"
    # A control socket in nobody's directory: no socket, the JVM runs on.
    start_java root ctl "dir=$work/rec,ctl=$work/theirs/x.sock"
    wait_file -s "$work/ctl.err" || true
    wait_file -d "$work/rec" || fail "the agent did not start"
    wait_line -p $jpid "control socket" "$work/ctl.err" || true
    grep -q "not creating control socket $work/theirs/x.sock: $work/theirs belongs to uid $NOBODY" "$work/ctl.err" ||
        fail "the socket in nobody's directory was not refused: $(cat "$work/ctl.err")"
    [ ! -e "$work/theirs/x.sock" ] || fail "a socket was created in nobody's directory"
    end_java $jpid
}

test_retention() {
    mkdir -p -m 0700 "$work/rec"
    # Foreign chunk-named files, as if left by another uid (nobody cannot write
    # here: root makes them and hands them over): one older than anything, one
    # "newer" and sparse 2 GiB, which counted by size would make retention delete
    # every chunk of the agent's.
    local old=20200101T000000Z-99999-000001.rpc new=20990101T000000Z-99999-000001.rpc
    echo junk >"$work/rec/$old"
    truncate -s 2G "$work/rec/$new"
    chown $NOBODY:$NOBODY "$work/rec/$old" "$work/rec/$new"
    start_java root jvm "dir=$work/rec,maxsize=1m,chunksize=64k"
    wait_file -S "$work/rec/ringprof-$jpid.sock" || fail "the agent did not start"
    sleep 1
    local p1 p2
    p1=$(rp ctl --raw "$jpid" flush | json 'r["path"]')
    sleep 1
    p2=$(rp ctl --raw "$jpid" flush | json 'r["path"]')
    note "flushed $p1 and $p2; directory: $(ls "$work/rec" | tr '\n' ' ')"
    [ -f "$p1" ] || fail "retention deleted the agent's chunk $p1 on account of a foreign file"
    [ -f "$p2" ] || fail "the agent's latest chunk $p2 is gone"
    [ -f "$work/rec/$old" ] && [ -f "$work/rec/$new" ] || fail "retention deleted a file it did not write"
    end_java $jpid
}

# ---------------------------------------------------------------- 6 --------

test_dir_too_long() {
    local long
    long="$work/$(head -c 1100 /dev/zero | tr '\0' d)"
    start_java root jvm "dir=$long"
    local rc=0
    wait $jpid || rc=$?
    note "exit $rc: $(head -c 300 "$work/jvm.err")"
    [ $rc != 0 ] || fail "a dir= of ${#long} bytes was accepted"
    grep -q "^ringprof: dir is too long (${#long} bytes, at most 1023): $work/d" "$work/jvm.err" ||
        fail "the error does not name dir and the limit: $(head -c 300 "$work/jvm.err")"
    [ "$(grep -c '^ringprof:' "$work/jvm.err")" = 1 ] || fail "not one line"
}

# ---------------------------------------------------------------- 7 --------

# nothing_in DIR: DIR holds no file but those listed after it.
nothing_in() {
    local dir=$1; shift
    local got
    got=$(cd "$dir" && ls -A | { grep -vxF -f <(printf '%s\n' "$@" '') || true; })
    [ -z "$got" ] || fail "$dir holds $(tr '\n' ' ' <<<"$got")"
}

test_dir_symlink() {
    mkdir -m 0700 /tmp/rootonly
    as_nobody mkdir -m 0755 /tmp/nbhome
    as_nobody ln -s /tmp/rootonly /tmp/nbhome/rec
    as_nobody ln -s /tmp/rootonly /tmp/rec           # in sticky /tmp
    ln -s /tmp/nbhome /tmp/rootlink                   # root's own, into nobody's tree
    refused nbhome "dir=/tmp/nbhome/rec" \
        "refusing recording directory /tmp/nbhome/rec: /tmp/nbhome belongs to uid $NOBODY (mode 0755), not to root"
    refused nbnew "dir=/tmp/nbhome/rec/new/sub" "/tmp/nbhome belongs to uid $NOBODY (mode 0755)"
    refused sticky "dir=/tmp/rec/new" "/tmp/rec is a symlink that belongs to uid $NOBODY, not to root"
    nothing_in /tmp/rootonly
    refused rootlink "dir=/tmp/rootlink/new/sub" "/tmp/nbhome belongs to uid $NOBODY (mode 0755)"
    nothing_in /tmp/nbhome rec
}

test_dir_repointed() {
    # The kernel's fs.protected_symlinks (global, not the namespace's to change)
    # would stop root following nobody's link in sticky /tmp; in a directory that
    # is not sticky it does not apply. So the link goes into a directory of root's
    # (mode 0755, trusted) and root hands it to nobody: the same attack as nobody's
    # own link in /tmp where protected_symlinks=0.
    mkdir -m 0755 /tmp/r
    mkdir -m 0700 /tmp/victim /tmp/ctl
    as_nobody mkdir -m 0777 /tmp/nbdir
    as_nobody chmod 0777 /tmp/nbdir
    # Another root recording's finished chunks, old enough for retention by age.
    local v1=20200101T000000Z-99999-000001.rpc v2=20200101T000000Z-99999-000002.rpc
    echo chunk >/tmp/victim/$v1
    echo chunk >/tmp/victim/$v2
    start_java root jvm "dir=/tmp/r/rec,ctl=/tmp/ctl/s.sock,flush=100ms"
    wait_file -S /tmp/ctl/s.sock || fail "the agent did not start"
    rp ctl "$jpid" flush >/dev/null || fail "flush: $(cat "$work/jvm.err")"
    # A chunk is open (the agent touches the path only when it makes one) ...
    has_part() { compgen -G "/tmp/r/rec/*-$jpid-*.rpc.part" >/dev/null; }
    wait_for - has_part || fail "no chunk was opened after the flush"
    # ... when the directory goes and nobody's link takes its place.
    rm -rf /tmp/r/rec
    ln -s /tmp/victim /tmp/r/rec
    chown -h $NOBODY:$NOBODY /tmp/r/rec
    failed() {   # status' chunks.failed (the only "failed" key), without python's start
        rp ctl --raw "$jpid" status >"$work/status.json" &&
            grep -o '"failed":[0-9]*' "$work/status.json" | cut -d: -f2
    }
    tried() {   # the agent tried to make a chunk since: refused, or written there
        [ "$(failed)" -gt "$1" ] || compgen -G "$2/*-$jpid-*" >/dev/null
    }
    local f0
    f0=$(failed)
    rp ctl "$jpid" flush >"$work/flush1.out" 2>&1 || true   # the open chunk's dir is gone
    wait_for - tried "$f0" /tmp/victim || fail "the agent never made another chunk"
    note "after the link to /tmp/victim: $(ls /tmp/victim | tr '\n' ' ')"
    [ -f /tmp/victim/$v1 ] && [ -f /tmp/victim/$v2 ] ||
        fail "retention deleted another recording's chunks through nobody's link"
    nothing_in /tmp/victim $v1 $v2
    # Re-pointed at nobody's own directory.
    ln -sfn /tmp/nbdir /tmp/r/rec
    chown -h $NOBODY:$NOBODY /tmp/r/rec
    f0=$(failed)
    rp ctl "$jpid" flush >"$work/flush2.out" 2>&1 || true
    wait_for - tried "$f0" /tmp/nbdir || fail "the agent never made another chunk"
    nothing_in /tmp/nbdir
    nothing_in /tmp/victim $v1 $v2
    grep -q "^ringprof: cannot open a chunk in /tmp/r/rec: it was removed, and making it again was refused: /tmp/r/rec is a symlink that belongs to uid $NOBODY, not to root; samples are dropped" "$work/jvm.err" ||
        fail "the agent does not say why it records no more: $(grep '^ringprof:' "$work/jvm.err")"
    end_java $jpid
}


# Issue 28: root's record, convert and diff in places nobody can reach.

standin="$here/../convert/standin_java.sh"
export RP_STANDIN_LOG="$work/java.args"
: >"$RP_STANDIN_LOG"

# record_as_root NAME ARGS...: root's `ringprof record ARGS -- standin Main`;
# sets $rc, its stderr in $work/NAME.err.
record_as_root() {
    local name=$1; shift
    rc=0
    rp record --agent "$agent" "$@" -- "$standin" Main >/dev/null 2>"$work/$name.err" || rc=$?
    note "record $*: rc $rc: $(tr '\n' '|' <"$work/$name.err")"
}
# Root's secrets, a root-only directory with another root recording in it.
secrets() {
    echo "TOPSECRET 1" >/tmp/secret1
    echo "TOPSECRET 2" >/tmp/secret2
    chmod 600 /tmp/secret1 /tmp/secret2
    mkdir -m 0700 /tmp/rootonly
}
secrets_kept() {   # secrets_kept WHAT: the secrets as they were
    [ "$(cat /tmp/secret1 /tmp/secret2)" = "$(printf 'TOPSECRET 1\nTOPSECRET 2')" ] ||
        fail "$1: root's secret files were written: $(head -c 200 /tmp/secret1 /tmp/secret2)"
}
fingerprint() {   # fingerprint DIR: its files' inodes, sizes and contents
    (cd "$1" && stat -c '%i %s %n' -- * && cat -- *) | md5sum
}
nobody_chunk() {   # /tmp/nb-chunk.rpc: a chunk of nobody's (recording rec-B)
    "$RP_TESTWRITER" other /tmp/nb-chunk.rpc >/dev/null
    chown $NOBODY:$NOBODY /tmp/nb-chunk.rpc
}
refused_line() {   # refused_line NAME WANT: exit 2 and one line that says WANT
    [ $rc = 2 ] || fail "$1: record exited $rc, not 2 (refused)"
    [ "$(wc -l <"$work/$1.err")" = 1 ] || fail "$1: not one line: $(cat "$work/$1.err")"
    grep -q "$2" "$work/$1.err" || fail "$1: the refusal does not say '$2': $(cat "$work/$1.err")"
}

test_record_planted() {
    secrets
    as_nobody mkdir -m 0755 /tmp/prof
    as_nobody ln -s /tmp/rootonly /tmp/prof/recording
    as_nobody ln -s /tmp/secret1 /tmp/prof/profile.txt
    as_nobody ln -s /tmp/secret2 /tmp/prof/flamegraph.html
    record_as_root planted -o /tmp/prof
    refused_line planted "refusing -o /tmp/prof: it belongs to uid $NOBODY (mode 0755), not to root"
    secrets_kept "nobody's symlinks"
    [ -z "$(ls -A /tmp/rootonly)" ] || fail "root wrote into /tmp/rootonly: $(ls -A /tmp/rootonly)"
    # --force through the link, with another root recording behind it.
    "$RP_TESTWRITER" split /tmp/rootonly >/dev/null
    local before
    before=$(fingerprint /tmp/rootonly)
    record_as_root forced --force -o /tmp/prof
    refused_line forced "refusing -o /tmp/prof: it belongs to uid $NOBODY"
    [ "$(fingerprint /tmp/rootonly)" = "$before" ] ||
        fail "--force through nobody's recording link changed /tmp/rootonly: $(ls -A /tmp/rootonly)"
    # No recording link: nobody's recording directory, and nobody's chunk dropped
    # into it while the JVM starts.
    as_nobody mkdir -m 0755 /tmp/prof2 /tmp/prof2/recording
    nobody_chunk
    RP_STANDIN_PLANT=/tmp/nb-chunk.rpc record_as_root planted2 -o /tmp/prof2
    refused_line planted2 "refusing -o /tmp/prof2: it belongs to uid $NOBODY (mode 0755)"
    [ ! -e /tmp/prof2/profile.txt ] || fail "root converted nobody's chunk into /tmp/prof2/profile.txt"
    [ ! -s "$RP_STANDIN_LOG" ] || fail "the program ran: $(cat "$RP_STANDIN_LOG")"
}

test_record_race() {
    secrets
    # What a race could leave in root's DIR: nobody's symlinks at the outputs.
    mkdir -m 0755 /tmp/rprof
    ln -s /tmp/secret1 /tmp/rprof/profile.txt
    ln -s /tmp/secret2 /tmp/rprof/flamegraph.html
    chown -h $NOBODY:$NOBODY /tmp/rprof/profile.txt /tmp/rprof/flamegraph.html
    record_as_root race -o /tmp/rprof
    [ $rc = 0 ] || fail "record into root's DIR exited $rc"
    secrets_kept "symlinks at the outputs"
    [ -f /tmp/rprof/profile.txt ] && [ ! -L /tmp/rprof/profile.txt ] &&
        [ -f /tmp/rprof/flamegraph.html ] && [ ! -L /tmp/rprof/flamegraph.html ] ||
        fail "the symlinks at the outputs were not replaced: $(ls -l /tmp/rprof)"
    grep -q '^# ringprof tree' /tmp/rprof/profile.txt || fail "profile.txt is not the profile"
    # A recording symlink (to another root recording), with and without --force.
    "$RP_TESTWRITER" split /tmp/rootonly >/dev/null
    local before
    before=$(fingerprint /tmp/rootonly)
    mkdir -m 0755 /tmp/rprof2
    ln -s /tmp/rootonly /tmp/rprof2/recording
    chown -h $NOBODY:$NOBODY /tmp/rprof2/recording
    record_as_root link -o /tmp/rprof2
    refused_line link "refusing /tmp/rprof2/recording: it is a symlink (owner uid $NOBODY), and record never follows one there"
    record_as_root linkforce --force -o /tmp/rprof2
    refused_line linkforce "refusing /tmp/rprof2/recording: it is a symlink"
    [ "$(fingerprint /tmp/rootonly)" = "$before" ] ||
        fail "--force through a recording link changed /tmp/rootonly: $(ls -A /tmp/rootonly)"
    # nobody's chunk, dropped into the recording while the JVM starts.
    nobody_chunk
    RP_STANDIN_PLANT=/tmp/nb-chunk.rpc record_as_root chunk -o /tmp/rprof3
    [ $rc = 0 ] || fail "record with a planted chunk exited $rc"
    grep -q "left out 1 chunk file in /tmp/rprof3/recording that this run's JVM did not write, the first nb-chunk.rpc (recording rec-B)" \
        "$work/chunk.err" || fail "the planted chunk was not reported: $(cat "$work/chunk.err")"
    ! grep -q rec-B /tmp/rprof3/profile.txt /tmp/rprof3/flamegraph.html ||
        fail "nobody's chunk was converted: $(grep -m1 rec-B /tmp/rprof3/profile.txt)"
    grep -q '^# recording rec-' /tmp/rprof3/profile.txt || fail "the run's own chunks are not in the profile"
}

test_convert_symlink() {
    secrets
    mkdir -m 0755 /tmp/rootdir
    "$RP_TESTWRITER" split "$work/rec" >/dev/null
    "$RP_TESTWRITER" diff-base "$work/base.rpc" >/dev/null
    "$RP_TESTWRITER" diff-new "$work/new.rpc" >/dev/null
    as_nobody mkdir -m 0755 /tmp/nb
    as_nobody ln -s /tmp/secret1 /tmp/nb/out.html
    as_nobody ln -s /tmp/secret2 /tmp/nb/d.txt
    as_nobody ln -s /tmp/rootdir /tmp/nb/cmp
    as_nobody ln -s /tmp/rootdir /tmp/nblink
    rp convert -o /tmp/nb/out.html "$work/rec" 2>"$work/c1.err" || fail "convert -o onto nobody's link: $(cat "$work/c1.err")"
    rp diff -o /tmp/nb/d.txt "$work/base.rpc" "$work/new.rpc" 2>"$work/d1.err" ||
        fail "diff -o onto nobody's link: $(cat "$work/d1.err")"
    secrets_kept "convert and diff onto nobody's symlinks"
    [ ! -L /tmp/nb/out.html ] && [ ! -L /tmp/nb/d.txt ] || fail "nobody's symlinks were not replaced"
    local rc=0
    rp convert -o /tmp/nblink/x.html "$work/rec" 2>"$work/c2.err" || rc=$?
    note "through nobody's link in /tmp: rc $rc: $(cat "$work/c2.err")"
    [ $rc = 1 ] && grep -q "^ringprof convert: /tmp/nblink/x.html: /tmp/nblink is a symlink (owner uid $NOBODY), and its directory /tmp may be written by every user (mode 1777, owner uid 0): not followed$" \
        "$work/c2.err" || fail "convert through nobody's link in sticky /tmp: rc $rc, $(cat "$work/c2.err")"
    rc=0
    rp diff --format pprof -o /tmp/nb/cmp "$work/base.rpc" "$work/new.rpc" 2>"$work/d2.err" || rc=$?
    [ $rc = 1 ] && grep -q "/tmp/nb/cmp is a symlink (owner uid $NOBODY), and its directory /tmp/nb belongs to uid $NOBODY (mode 0755), not to root: not followed" \
        "$work/d2.err" || fail "diff's pprof directory through nobody's link: rc $rc, $(cat "$work/d2.err")"
    [ -z "$(ls -A /tmp/rootdir)" ] || fail "root wrote into /tmp/rootdir: $(ls -A /tmp/rootdir)"
    # root's own link in sticky /tmp is followed.
    ln -s /tmp/rootdir /tmp/rootlink
    rp convert -o /tmp/rootlink/y.txt "$work/rec" 2>"$work/c3.err" || fail "root's own link: $(cat "$work/c3.err")"
    [ -s /tmp/rootdir/y.txt ] || fail "convert through root's own link wrote nothing there"
}

# ---------------------------------------------------- issue 28: the socket --

# A program that only waits (DeepThreads with no deep threads): these tests need
# no CPU burnt beside them.
IDLE_PROG=(DeepThreads 0 0)

test_ctl_link() {
    mkdir -m 0700 /tmp/rootsock /tmp/rootother
    as_nobody mkdir -m 0755 /tmp/nbhome /tmp/nbhome/evil
    as_nobody ln -s /tmp/rootsock /tmp/nbhome/link
    as_nobody ln -s /tmp/rootsock /tmp/nblink                 # in sticky /tmp
    # nobody's links, in nobody's directory and in sticky /tmp: each component of
    # the path is checked as given, so no socket is made and the JVM runs on.
    local via
    for via in /tmp/nbhome/link /tmp/nblink; do
        start_java root nbl "dir=$work/rec,ctl=$via/x.sock" "${IDLE_PROG[@]}"
        wait_line -p $jpid "control socket" "$work/nbl.err" || fail "ctl=$via/x.sock: nothing said"
        grep -q "^ringprof: no control socket (profiling goes on without one): not creating control socket $via/x.sock: " "$work/nbl.err" ||
            fail "ctl=$via/x.sock through nobody's link was not refused: $(cat "$work/nbl.err")"
        kill -0 $jpid 2>/dev/null || fail "the JVM did not run on without its socket"
        [ ! -e /tmp/rootsock/x.sock ] || fail "a socket was made through nobody's link $via"
        end_java $jpid
    done
    # root's own link: the socket is bound, advertised and removed at the
    # resolved path. root re-points the link after start at a directory with a
    # fake's socket of the same name: tools reach the agent through the
    # discovery file, and at exit the agent removes its own socket, not the fake's.
    ln -s /tmp/rootsock /tmp/rootlink
    start_java root jvm "dir=$work/rec,ctl=/tmp/rootlink/x.sock" "${IDLE_PROG[@]}"
    wait_file -S /tmp/rootsock/x.sock || fail "no socket where the link led"
    local disc=/tmp/ringprof-0/$jpid.json
    wait_file -s "$disc" || fail "no discovery file"
    start_fake root fake /tmp/rootother/x.sock linked
    ln -sfn /tmp/rootother /tmp/rootlink
    rp ctl "$jpid" status >"$work/ctl.out" 2>"$work/ctl.err" ||
        fail "ctl PID no longer reaches the agent after the link moved: $(cat "$work/ctl.err")"
    ! grep -q FAKE "$work/ctl.out" && grep -q '"samples"' "$work/ctl.out" ||
        fail "ctl PID did not get the agent's answer: $(head -c 300 "$work/ctl.out")"
    rp list >"$work/list.out" 2>"$work/list.err" || fail "ringprof list failed"
    grep -q "^$jpid  *running" "$work/list.out" ||
        fail "list does not show the agent running: $(cat "$work/list.out" "$work/list.err")"
    grep -q '"socket":"/tmp/rootsock/x.sock"' "$disc" ||
        fail "the discovery file does not name the resolved path: $(cat "$disc")"
    # The tool refuses a link of nobody's on the way to a socket it is given.
    local rc=0
    rp ctl /tmp/nbhome/link/x.sock status >"$work/link.out" 2>"$work/link.err" || rc=$?
    note "ctl through nobody's link: rc $rc; $(cat "$work/link.err")"
    grep -q '"samples"' "$work/link.out" && fail "root's ctl SOCKET followed nobody's link"
    [ $rc = 1 ] && grep -q "/tmp/nbhome/link is a symlink of uid $NOBODY" "$work/link.err" ||
        fail "ctl through nobody's link was not refused with the reason"
    end_java $jpid
    [ ! -e /tmp/rootsock/x.sock ] || fail "the agent left its socket behind"
    [ -S /tmp/rootother/x.sock ] || fail "the agent removed the other socket at the link's new target"
}

test_slow_pipeline() {
    start_java root jvm "dir=$work/rec" "${IDLE_PROG[@]}"
    local sock="$work/rec/ringprof-$jpid.sock"
    wait_file -S "$sock" || fail "the agent did not start"
    # Each client keeps thousands of requests queued and reads 2 KB every 0.1 s:
    # never idle, and always some of its reply read within 5 s. One the server
    # closes connects again at once and goes on.
    python3 - "$sock" >"$work/hold.out" 2>&1 <<'PY' &
import socket, sys, time
path = sys.argv[1]
def client():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.setblocking(False)
    return s
def feed(s):
    try:
        s.send(b"help\n" * 4096)
    except OSError:
        pass
socks = [client() for _ in range(64)]
for s in socks:
    feed(s)
time.sleep(0.5)
print("holding", flush=True)
end = time.monotonic() + 60
while time.monotonic() < end:
    for i, s in enumerate(socks):
        try:
            data = s.recv(2048)
        except BlockingIOError:
            data = None
        except OSError:
            data = b""
        if data == b"":
            s.close()
            socks[i] = s = client()
        feed(s)
    time.sleep(0.1)
PY
    local holder=$! t0 t1
    pids+=($holder)
    wait_line -p $holder holding "$work/hold.out" || fail "the clients did not start: $(cat "$work/hold.out")"
    t0=$(date +%s%N)
    rp ctl --timeout 30 "$jpid" status >"$work/ctl.out" 2>"$work/ctl.err" ||
        fail "ctl status behind 64 pipelining clients failed: $(cat "$work/ctl.err")"
    t1=$(date +%s%N)
    kill $holder
    note "behind 64 pipelining slow readers: status in $(( (t1 - t0) / 1000000 )) ms"
    [ $(( (t1 - t0) / 1000000 )) -le 15000 ] ||
        fail "status waited $(( (t1 - t0) / 1000000 )) ms behind 64 pipelining clients"
    [ "$(json 'r["control"]["evicted"] >= 1' <"$work/ctl.out" 2>/dev/null)" = True ] ||
        fail "status does not count the evicted clients: $(head -c 300 "$work/ctl.out")"
    grep -q "none idle: closing the .* served before once their replies" "$work/jvm.err" ||
        fail "the eviction of busy clients was not logged: $(grep 'control socket' "$work/jvm.err" | head -3)"
    end_java $jpid
}

test_threads_readers() {
    start_java root jvm "dir=$work/rec" DeepThreads 40 1100
    wait_line -p $jpid ready "$work/jvm.out" || fail "the program did not start"
    local sock="$work/rec/ringprof-$jpid.sock"
    wait_file -S "$sock" || fail "the agent did not start"
    # One dump first, so its buffers and the method cache count in the base.
    rp ctl --raw "$jpid" threads >"$work/one.json" 2>"$work/one.err" ||
        fail "ctl threads failed: $(cat "$work/one.err")"
    python3 - "$sock" "$jpid" "$work/one.json" <<'PY' || fail "64 slow readers of threads (above)"
import json, os, select, socket, sys, time
path, pid, one = sys.argv[1], sys.argv[2], sys.argv[3]
BOUND = 128 << 20
def rss():
    for line in open("/proc/%s/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
base = peak = rss()
socks = []
for _ in range(64):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b"threads\n")
    socks.append(s)
# Each reads the start of its reply and no more.
answers, errors, pending = {"dump": 0, "busy": 0}, [], set(socks)
end = time.monotonic() + 120
while pending and time.monotonic() < end and peak - base <= BOUND:
    for s in select.select(list(pending), [], [], 0.2)[0]:
        head = s.recv(512)
        pending.discard(s)
        if head.startswith(b'{"protocol":1,"ok":true,"command":"threads"'):
            answers["dump"] += 1
        elif b'"ok":false' in head and b'"error":"busy: ' in head:
            answers["busy"] += 1
        else:
            errors.append(head[:200])
    peak = max(peak, rss())
print("# a dump of %.1f MiB; 64 slow readers: %s; RSS %.0f MiB, at most %.0f MiB with them (bound: +%d MiB)"
      % (os.path.getsize(one) / 1048576, answers, base / 1048576, peak / 1048576, BOUND >> 20))
bad = []
if peak - base > BOUND:
    bad.append("the JVM grew by %.0f MiB" % ((peak - base) / 1048576))
if pending:
    bad.append("%d readers got no answer" % len(pending))
if errors or not answers["dump"] or not answers["busy"]:
    bad.append("answers %s, others %s" % (answers, errors[:3]))
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b"status\n")
r = json.loads(s.makefile("rb").readline())
c = r.get("control", {})
if not r.get("ok") or c.get("busy") != answers["busy"] or not 0 <= c.get("reply_bytes", -1) <= c.get("reply_bytes_max", 0):
    bad.append("status: ok %s, control %s" % (r.get("ok"), c))
for b in bad:
    print("wrong:", b)
sys.exit(1 if bad else 0)
PY
    end_java $jpid
}

test_dir_socket() {
    mkdir "$work/a"
    start_java root jvm "dir=$work/a/rec" "${IDLE_PROG[@]}"
    local sock="$work/a/rec/ringprof-$jpid.sock" disc=/tmp/ringprof-0/$jpid.json
    wait_file -S "$sock" || fail "the agent did not start"
    wait_file -s "$disc" || fail "no discovery file"
    # Its first chunk open, so that only the control socket looks for the
    # directory while it is away (the recording's own handling of a directory
    # that goes is sec_dir_removed's).
    has_part() { compgen -G "$work/a/rec/*.rpc.part" >/dev/null; }
    wait_for -p $jpid - has_part || fail "the agent opened no chunk"
    # The directory goes, and at once (a mount: no moment between) nobody's
    # directory stands where its parent was: the agent must not make its socket
    # there. A second view of $work reaches what the mount hides. A /tmp cleaner
    # takes the discovery file.
    mkdir /tmp/under && mount --bind "$work" /tmp/under || fail "cannot bind $work"
    mount -t tmpfs -o uid=$NOBODY,gid=$NOBODY,mode=0755,size=1m tmpfs "$work/a" ||
        fail "cannot mount nobody's directory over $work/a"
    rm -f "$disc"
    local rc=0
    rp ctl "$jpid" status >"$work/ctl.out" 2>"$work/ctl.err" || rc=$?
    note "ctl while the socket is gone: rc $rc: $(cat "$work/ctl.err")"
    [ $rc = 1 ] && [ "$(wc -l <"$work/ctl.err")" = 1 ] &&
        grep -q "^ringprof ctl: no ringprof agent reachable in pid $jpid: its control socket $sock has been removed" "$work/ctl.err" ||
        fail "ctl did not say in one line that the socket was removed"
    wait_line -p $jpid "control socket $sock is gone and cannot be made again yet .*$work/a belongs to uid $NOBODY" "$work/jvm.err" ||
        fail "the agent did not say why it cannot make its socket again"
    [ ! -e "$sock" ] || fail "a socket was made in nobody's directory"
    # Then the directory is gone for good, and its parent is root's again.
    rm -rf /tmp/under/a/rec
    umount -l "$work/a"
    wait_for -p $jpid 30 test -S "$sock" || fail "the socket was not made again within 30 s"
    [ "$(stat -c '%u %a' "$sock") $(stat -c '%u %a' "$work/a/rec")" = "0 600 0 700" ] ||
        fail "socket and directory made again as $(stat -c '%u %a' "$sock" "$work/a/rec" | tr '\n' ' ')"
    wait_file -s "$disc" || fail "the discovery file was not written again"
    grep -q "\"socket\":\"$sock\"" "$disc" || fail "the discovery file names $(cat "$disc")"
    rp ctl "$jpid" status >"$work/ctl.out" 2>"$work/ctl.err" ||
        fail "ctl after the socket was made again: $(cat "$work/ctl.err")"
    [ ! -s "$work/ctl.err" ] || fail "ctl printed: $(cat "$work/ctl.err")"
    [ "$(json 'r["control"]["socket_remade"]' <"$work/ctl.out")" = 1 ] || fail "status does not count it"
    [ "$(grep -c "is gone and cannot be made again yet" "$work/jvm.err")" = 1 ] ||
        fail "the failure to make the socket again was not logged once"
    grep -q "control socket $sock had been removed; made it again" "$work/jvm.err" ||
        fail "the socket made again was not logged"
    end_java $jpid
    [ ! -e "$sock" ] && [ ! -e "$disc" ] || fail "the socket or discovery file was left behind"
}

case "$test_name" in
dir_removed|ctl_planted|ctl_peer|list_planted|attach_symlink|idle_lockout|dir_foreign|retention|dir_too_long|\
dir_symlink|dir_repointed|record_planted|record_race|convert_symlink|\
ctl_link|slow_pipeline|threads_readers|dir_socket)
    "test_$test_name" ;;
*) echo "unknown test '$test_name'"; exit 2 ;;
esac
san_check
echo "ok ($test_name)"
