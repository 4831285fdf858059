# tests/lib.sh — the shell library of the JVM test scripts (tests/agent/*_tests.sh,
# tests/fault/*.sh). Sourced, never run:
#
#   . "$(dirname "$0")/../lib.sh"
#   rp_begin PREFIX LABEL
#
# rp_begin makes the scratch directory $work (mktemp under $TMPDIR, mode 755, named
# rp-PREFIX.XXXXXX), sets keep=0, pid= and pids=(), removes core limits, points
# the sanitizer logs at $work/sanitizer (RP_SAN_LOGDIR) and installs two traps:
#   EXIT  kills $pid and every pid in pids (kill -9), runs the script's
#         cleanup_hook if it defines one, then removes $work, or, when a test
#         failed (keep=1), keeps it and names it (keep_scratch, which a script
#         may redefine);
#   ERR   (with set -E, in functions too) fails the test naming the line.
# fail prints "FAIL (LABEL): message", then the script's fail_hook if it defines
# one (to show the JVM's stderr, say), the sanitizer reports, and exits 1.
#
# Waiting: a test waits for an event (a file, a line, a status field), never for
# a fixed time; wait_for's bound only catches a hang, so it is generous
# (RP_WAIT_SECONDS, default 120 s, measured on the clock, not counted in polls,
# so a loaded machine gets the same bound as an idle one).
#
# The programs come from meson in the environment: RP_JAVA, RP_JAR, RP_RINGPROF,
# RP_DUMP, RP_SAN_CHECK (ASan builds) and the others each script names.

rp_wait_default=${RP_WAIT_SECONDS:-120}

rp_begin() {   # rp_begin PREFIX LABEL
    work=$(mktemp -d "${TMPDIR:-/tmp}/rp-$1.XXXXXX")
    chmod 755 "$work"
    rp_label=$2
    keep=0
    pid=
    pids=()
    trap rp_cleanup EXIT
    ulimit -c 0
    export RP_SAN_LOGDIR="$work/sanitizer"
    set -E
    trap 'fail "shell error at line $LINENO"' ERR
}

# ours PID: PID is still a child of this shell. A child that ended and was
# waited for gives its number back, and a JVM storming threads cycles through
# all 32768 of them in seconds: a cleanup that killed every number it had
# once started could kill another test's process that got one of them.
ours() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }                   # after "PID (COMM) ": STATE PPID ...
    set -- $stat
    [ "${2:-}" = "$$" ]
}

rp_cleanup() {
    local p
    trap - ERR
    for p in $pid "${pids[@]}"; do
        if ours "$p"; then kill -9 "$p" 2>/dev/null || true; fi
    done
    if declare -F cleanup_hook >/dev/null; then cleanup_hook; fi
    if [ "$keep" -eq 1 ]; then keep_scratch; else rm -rf "$work"; fi
}
# keep_scratch: what a failed test does with $work; a script may redefine it.
keep_scratch() { echo "scratch kept: $work"; }

fail() {
    trap - ERR
    echo "FAIL ($rp_label): $*"
    if declare -F fail_hook >/dev/null; then fail_hook; fi
    san_reports
    keep=1
    exit 1
}

note() { echo "# $*"; }

# The sanitizer reports of an ASan build's JVMs (sanitized_java.sh): san_reports
# prints them, san_check fails the test if there is one.
san_reports() { [ -z "${RP_SAN_CHECK:-}" ] || "$RP_SAN_CHECK" --check "$RP_SAN_LOGDIR" || true; }
san_check() {
    [ -z "${RP_SAN_CHECK:-}" ] || "$RP_SAN_CHECK" --check "$RP_SAN_LOGDIR" >/dev/null ||
        fail "sanitizer report"
}

# wait_for [-p PID] SECONDS CMD...: run CMD every 50 ms until it succeeds (0),
# SECONDS pass (1) or, with -p, process PID ends first (2; CMD is tried once
# more then). SECONDS "-" is the default bound (RP_WAIT_SECONDS).
wait_for() {
    local watch=
    if [ "$1" = -p ]; then watch=$2; shift 2; fi
    local secs=$1; shift
    [ "$secs" = - ] && secs=$rp_wait_default
    local end
    end=$(awk -v t="$EPOCHREALTIME" -v s="$secs" 'BEGIN { printf "%.3f", t + s }')
    while :; do
        "$@" && return 0
        if [ -n "$watch" ] && ! kill -0 "$watch" 2>/dev/null; then
            "$@" && return 0
            return 2
        fi
        awk -v t="$EPOCHREALTIME" -v e="$end" 'BEGIN { exit !(t < e) }' || return 1
        sleep 0.05
    done
}
# Conditions for wait_for.
has_line() { grep -aq -- "$1" "$2" 2>/dev/null; }        # has_line REGEX FILE
is_socket() { [ -S "$1" ]; }
# fresh FILE...: empty each FILE now. Before starting a program in the
# background whose output a wait_line then reads: its own redirection truncates
# the file only when the child gets to run, and a wait_line that looks first
# (a busy machine) would find the previous program's lines.
fresh() {
    local f
    for f; do : >"$f"; done
}

# wait_line [-p PID] REGEX FILE: wait_for (default bound) the line in FILE.
wait_line() {
    local p=()
    if [ "$1" = -p ]; then p=(-p "$2"); shift 2; fi
    wait_for "${p[@]}" - has_line "$1" "$2"
}

# java_run JAVA-OPTIONS... -- CLASS ARGS...: the JVM in the foreground, with the
# test programs (RP_JAR) on the class path, stdout in $work/out, stderr in
# $work/err, a crash log in $work; returns java's exit status.
java_run() {
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" "${opts[@]}" -cp "$RP_JAR" "$@" \
        >"$work/out" 2>"$work/err"
}
# java_start: java_run in the background; sets pid, java's own (for the control
# socket, attach and /proc), killed at exit.
java_start() {
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    fresh "$work/out" "$work/err"
    "$RP_JAVA" -XX:ErrorFile="$work/hs_err_%p.log" "${opts[@]}" -cp "$RP_JAR" "$@" \
        >"$work/out" 2>"$work/err" &
    pid=$!
}
# wait_ready [FILE]: the program (started by java_start) printed "ready" in FILE
# ($work/out); fails the test if the JVM ended or the bound passed first.
wait_ready() {
    local f=${1:-$work/out}
    wait_line -p "$pid" ready "$f" || fail "the program did not start (no 'ready' in $f)"
}
# wait_socket: the agent's control socket in $work/rec appeared; sets sock and
# disc (the discovery file).
wait_socket() {
    sock="$work/rec/ringprof-$pid.sock"
    disc="/tmp/ringprof-$(id -u)/$pid.json"
    wait_for -p "$pid" - is_socket "$sock" || fail "no control socket at $sock"
}

show_err() { sed 's/^/  stderr: /' "${1:-$work/err}" | head -20; }
# complaints FILE: the agent's lines in a JVM's stderr but its start line
# ("ringprof: recording to DIR", docs/agent.md), which says nothing is wrong.
complaints() { { grep -a '^ringprof:' "$1" || true; } | { grep -av '^ringprof: recording to ' || true; }; }

# no_hs_err [DIR]: fail if a JVM left a crash log in DIR ($work).
no_hs_err() {
    local f
    for f in "${1:-$work}"/hs_err_*.log; do
        [ -e "$f" ] && fail "the JVM crashed: $(basename "$f"): $({ grep -m3 -E -A2 'SIGSEGV|SIGBUS|SIGABRT|Internal Error|^#  (SIG|Internal|Problematic)|^C  \[' "$f" || true; } | head -6 | tr '\n' ' ')"
    done
    return 0
}

rp() { "$RP_RINGPROF" "$@"; }
ctl() { "$RP_RINGPROF" ctl --raw "$pid" "$@"; }
# json EXPR: EXPR evaluated with r = the JSON document on stdin, printed.
json() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
# status_is EXPR: the agent's status (ctl status) makes EXPR true; for wait_for.
status_is() { [ "$(ctl status 2>/dev/null | json "bool($1)" 2>/dev/null)" = True ]; }

within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b ? a / b : 0 }'; }
pct() { awk -v a="$1" -v t="$2" 'BEGIN { printf "%.1f", t ? 100 * a / t : 0 }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
# cpu_ns PID: the CPU time (user + system) process PID has used, in ns.
cpu_ns() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' "/proc/$1/stat"
}
# thread_cpu_ns PID GLOB: the CPU time the threads of PID named GLOB (their comm)
# have used, in ns (0 once PID has ended).
thread_cpu_ns() {
    local t s=0 c
    for t in /proc/"$1"/task/*; do
        c=$(cat "$t/comm" 2>/dev/null) || continue
        # shellcheck disable=SC2254
        case "$c" in $2) ;; *) continue ;; esac
        read -r c _ <"$t/schedstat" 2>/dev/null || continue
        s=$((s + c))
    done
    echo $s
}
# cpu_at_least NS PID GLOB: those threads have used NS ns of CPU; for wait_for.
cpu_at_least() { [ "$(thread_cpu_ns "$2" "$3")" -ge "$1" ]; }
# cpu_window SECONDS: wait until the JVM $pid has used SECONDS more of CPU (all
# its threads): a window for rates that stays the same on a loaded machine,
# where a window of the clock gives the program less CPU.
cpu_window() {
    local end
    end=$(( $(cpu_ns "$pid") + $(awk -v s="$1" 'BEGIN { printf "%.0f", s * 1e9 }') ))
    wait_for -p "$pid" - cpu_ns_at_least "$end" || fail "the JVM did not use $1 s of CPU"
}
cpu_ns_at_least() { [ "$(cpu_ns "$pid" 2>/dev/null || echo 0)" -ge "$1" ]; }
