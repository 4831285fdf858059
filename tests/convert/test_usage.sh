#!/usr/bin/env bash
# tests/convert/test_usage.sh RINGPROF RP_TESTWRITER — usage errors of every command
# (tools/commands/usage.h): exit 2 and exactly two lines on stderr, the mistake
# (with "did you mean" where a known word is close) and "Try 'ringprof CMD
# --help' for more information.", nothing on stdout; --help still prints the
# usage, on stdout, exit 0. No JVM, no agent: every case fails before anything
# is read or sent.
set -u
RINGPROF=$1 WRITER=$2
. "$(dirname "$0")/../checks.sh"
"$WRITER" main a.rpc >/dev/null

# usage_error CMD EXPECTED_FIRST_LINE ARGS...: the two lines, exit 2.
usage_error() {
    local cmd=$1 want=$2; shift 2
    "$RINGPROF" "$cmd" "$@" >out 2>err
    local rc=$? help="Try 'ringprof $cmd --help' for more information."
    checks=$((checks + 1))
    if [ $rc -ne 2 ] || [ -s out ] || [ "$(wc -l <err)" -ne 2 ] ||
       [ "$(head -1 err)" != "$want" ] || [ "$(tail -1 err)" != "$help" ]; then
        echo "FAIL: ringprof $cmd $*: exit $rc (want 2), stderr:"; cat err
        echo "  wanted: $want"; echo "  then:   $help"
        fails=$((fails + 1))
    fi
}

# The words of the issue: formats, events, states, groups, with a suggestion.
usage_error convert "ringprof convert: unknown format 'colapsed' (did you mean 'collapsed'?); the formats are tree, backtrace, flat, histogram, collapsed, pprof, heatmap, html, jfr, otlp, timeline" \
    --format colapsed a.rpc
usage_error convert "ringprof convert: unknown format 'svg'; the formats are tree, backtrace, flat, histogram, collapsed, pprof, heatmap, html, jfr, otlp, timeline" \
    --format svg a.rpc
usage_error convert "ringprof convert: unknown event 'allocs' (did you mean 'alloc'?); the valid names are cpu, alloc, live, gc, wall, lock, lock.waiting" \
    --event allocs a.rpc
usage_error convert "ringprof convert: --state 'running,blokced': unknown state 'blokced' (did you mean 'blocked'?); the states are unknown, running, runnable, native, io, blocked, waiting, parked, sleeping" \
    --state running,blokced a.rpc
usage_error convert "ringprof convert: --group 'packge': unknown group (did you mean 'package'?); the groups are method, class, package" \
    --group packge a.rpc
usage_error diff "ringprof diff: --group 'clas': unknown group (did you mean 'class'?); the groups are method, class, package" \
    --group clas a.rpc a.rpc
usage_error diff "ringprof diff: unknown event 'lok' (did you mean 'lock'?); the valid names are cpu, alloc, live, gc, wall, lock, lock.waiting" \
    --event lok --overlap a.rpc a.rpc
usage_error diff "ringprof diff: --format 'flt': unknown format (did you mean 'flat'?); the formats are flat, collapsed, html, pprof" \
    --format flt a.rpc a.rpc
usage_error record "ringprof record: unknown event 'cpux' (did you mean 'cpu'?); the valid names are cpu, alloc, live, gc, wall, lock, lock.waiting" \
    --event cpux -- java -version
# Options, their values and arguments, in every command.
usage_error convert "ringprof convert: unknown option '--per-threads' (did you mean '--per-thread'?)" \
    --per-threads a.rpc
usage_error convert "ringprof convert: option '--top' needs a value" a.rpc --top
usage_error convert "ringprof convert: --sort 'bsy': unknown order (did you mean 'busy'?); the orders are name, busy, start" \
    --sort bsy a.rpc
usage_error convert "ringprof convert: --demangle 'ful': unknown style (did you mean 'full'?); the styles are short (names without parameters, the default), full and none (as recorded)" \
    --demangle ful a.rpc
usage_error convert "ringprof convert: --cutoff 'x': a percentage from 0 to 100" --cutoff x a.rpc
usage_error convert "ringprof convert: no INPUT given"
usage_error diff "ringprof diff: unknown option '--normalise' (did you mean '--normalize'?)" \
    --normalise a.rpc a.rpc
usage_error leaks "ringprof leaks: --by 'sit': unknown choice (did you mean 'site'?); the choices are site, method" \
    --by sit a.rpc
usage_error locks "ringprof locks: --top 'x': a positive integer" --top x a.rpc
usage_error summary "ringprof summary: --threads 'x': a number of threads" --threads x a.rpc
usage_error summary "ringprof summary: unknown option '--chuncks' (did you mean '--chunks'?)" \
    --chuncks a.rpc
usage_error ctl "ringprof ctl: unknown option '--raww' (did you mean '--raw'?); the tool's options may stand anywhere before '--'" \
    --raww 1 status
usage_error ctl "ringprof ctl: no command given" 1
usage_error list "ringprof list: unknown option '-x'" -x
usage_error list "ringprof list: unexpected argument 'extra'" extra
usage_error attach "ringprof attach: option '--timeout' needs a value" --timeout
usage_error attach "ringprof attach: the first argument must be a pid" notapid
usage_error record "ringprof record: unknown option '--evnt' (did you mean '--event'?)" \
    --evnt cpu -- java -version
usage_error push "ringprof push: unknown option '--follw' (did you mean '--follow'?)" \
    --follw d http://127.0.0.1:1
usage_error push "ringprof push: no URL given"

# A command that is none: its own line and where the list is.
"$RINGPROF" conver a.rpc >out 2>err
check "unknown command: exit 2, two lines with the suggestion" \
    bash -c '[ $0 -eq 2 ] && [ "$(cat err)" = "ringprof: '"'conver'"' is not a command (did you mean '"'convert'"'?)
Try '"'ringprof --help'"' for the list of commands." ]' $?
# --help still gives the whole text, on stdout.
for cmd in convert diff leaks locks summary ctl list attach record push; do
    "$RINGPROF" $cmd --help >out 2>err
    check "$cmd --help: exit 0, the usage on stdout, nothing on stderr" \
        bash -c '[ $0 -eq 0 ] && grep -q "^usage: ringprof '$cmd'" out && [ ! -s err ]' $?
done
checks_done
