#!/usr/bin/env bash
# tests/agent/sanitized_java.sh — java with gcc's ASan runtime preloaded, for the
# agent's JVM tests in an ASan+UBSan build (suite 'agent_asan'; the recipe and the
# reason for each option are in docs/sanitizers.md).
#
#   sanitized_java.sh [java arguments...]   exec java under the runtime
#   sanitized_java.sh --check DIR           print the reports in DIR that count;
#                                           exit 1 if there is one
#
# tests/agent/meson.build points the test scripts' RP_JAVA here (and RP_SAN_CHECK,
# for --check), with RP_REAL_JAVA (the java binary) and RP_ASAN_RUNTIME (gcc's
# libasan.so). The scripts run java as they do in the plain build. The wrapper
# execs java, so the pid the scripts see is the JVM's (the control socket is
# named after it, and they signal it).
#
# Reports go to files, $RP_SAN_LOGDIR/report.PID (log_path), not to the JVM's
# stderr: the scripts check them before they print "ok", whatever java's exit
# status was and wherever its stderr went. What counts: any ASan or UBSan error,
# any LeakSanitizer failure, and every leaked block that the agent allocated (the
# first frame of its allocation stack outside the C and sanitizer runtimes is in
# libringprof). HotSpot's own blocks look leaked to LSan (it does not scan the
# JVM's mmap'ed metaspace and heaps) and are not the agent's: they do not count.
# Without RP_SAN_LOGDIR reports go to stderr (a run by hand).
#
# LD_PRELOAD and ASAN_OPTIONS/UBSAN_OPTIONS/LSAN_OPTIONS from the environment are
# kept: the runtime goes first in LD_PRELOAD, and the options here come last, so
# they win.
set -u

# check_file FILE: print what counts in one report file; exit 1 if anything does.
check_file() {
    awk -v file="$1" '
        function module(line,   m) {
            # The last "(path+0xoffset)" on a frame line (stack_trace_format below).
            if (match(line, /\([^() ]+\+0x[0-9a-f]+\)$/))
                return substr(line, RSTART + 1, RLENGTH - 2)
            return ""
        }
        function flush_block() {
            if (block != "" && owner ~ /libringprof/) { print block; counted++ }
            block = ""; owner = ""; decided = 0
        }
        /ERROR: LeakSanitizer: detected memory leaks/ { leaks = 1; next }
        /ERROR: |runtime error:|LeakSanitizer has encountered a fatal error/ {
            other = 1
        }
        other { print; next }
        /^(Direct|Indirect) leak of / { flush_block(); block = $0; next }
        block != "" && /^ +#[0-9]+ / {
            block = block "\n" $0
            if (!decided) {
                m = module($0)
                if (m !~ /\/(libasan|libc|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so/) {
                    owner = m; decided = 1
                }
            }
            next
        }
        /^$/ { flush_block() }
        END {
            flush_block()
            if (counted) print "(" counted " of the leaks above were allocated by the agent)"
            exit (other || counted) ? 1 : 0
        }' "$1"
}

if [ "${1:-}" = --check ]; then
    shopt -s nullglob
    rc=0
    for r in "${2:?usage: sanitized_java.sh --check DIR}"/report*; do
        out=$(check_file "$r") && continue
        rc=1
        echo "--- sanitizer report $r:"
        printf '%s\n' "$out" | sed -n '1,80p'
    done
    exit $rc
fi

: "${RP_REAL_JAVA:?RP_REAL_JAVA is not set (tests/agent/meson.build sets it)}"
: "${RP_ASAN_RUNTIME:?RP_ASAN_RUNTIME is not set (tests/agent/meson.build sets it)}"

common="halt_on_error=1:abort_on_error=0:exitcode=86:print_stacktrace=1"
if [ -n "${RP_SAN_LOGDIR:-}" ]; then
    mkdir -p "$RP_SAN_LOGDIR" || exit 1
    common="$common:log_path=$RP_SAN_LOGDIR/report"
fi
# What HotSpot needs from ASan (docs/sanitizers.md has the reason for each). Every
# frame names its module, for the leak ownership test in check_file.
jvm="handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allow_user_segv_handler=1"
jvm="$jvm:use_sigaltstack=0:detect_leaks=1:malloc_context_size=5"
jvm="$jvm:stack_trace_format=\"    #%n %p %F %L (%m+%o)\""
# LSan: no TLS scan (its DTLS walk faults inside the JVM), and leaks alone do not
# change java's exit status (the tests check it; check_file judges the leaks).
# exitcode is shared with ASan, so an ASan error exits 0 too: the report file,
# not the status, is what fails the test.
lsan="use_tls=0:exitcode=0"

export LD_PRELOAD="$RP_ASAN_RUNTIME${LD_PRELOAD:+:$LD_PRELOAD}"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$jvm:$common"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}$common"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}$lsan"
exec "$RP_REAL_JAVA" "$@"
