#!/usr/bin/env bash
# tests/agent/push_tests.sh — `ringprof push` delivering a real JVM's recording to
# a real OpenTelemetry Collector (docs/fleet.md, "What is checked").
#
#   push_tests.sh otlp
#
# The Collector v0.165.0 that tests/fetch-otelcol builds (RP_FETCH_OTELCOL; one
# SKIP line and exit 77 where it is not built), with two OTLP/HTTP receivers on
# 127.0.0.1 — one as a backend is configured, one with a body limit of 1000
# bytes — and its file exporter. A JVM (AttachTarget, burning CPU until told)
# records with chunktime=1s while `ringprof push --follow` sends each chunk:
#   - the Collector is stopped after the first chunk arrived and started again
#     once push has retried a later one: every chunk of the recording arrives
#     exactly once (tests/push/check_collector.py);
#   - what the exporter wrote, against `ringprof convert --format collapsed` of
#     the same chunks: every stack and its weight, the totals, the sample types
#     and units, service.name and the labels (the agent's and push's);
#   - a chunk sent to the small receiver is refused with 400: push says so with
#     the Collector's own words, and exits 1.
# Environment: RP_JAVA, RP_JAR, RP_AGENT, RP_RINGPROF (tests/agent/meson.build),
# RP_FETCH_OTELCOL, RP_CHECK_COLLECTOR.
set -uo pipefail
test_name=${1:?usage: push_tests.sh TEST}
. "$(dirname "$0")/../lib.sh"

collector=$("$RP_FETCH_OTELCOL" --path 2>/dev/null) || {
    echo "SKIP: no OpenTelemetry Collector in /var/cache/ringprof/otelcol" \
         "(tools/install-deps --test builds it: tests/fetch-otelcol)"
    exit 77
}
rp_begin "push-$test_name" "$test_name"

col=
cleanup_hook() { if [ -n "$col" ] && ours "$col"; then kill -9 "$col" 2>/dev/null; fi; }
fail_hook() {
    show_err "$work/push.err"
    sed 's/^/  collector: /' "$work"/otelcol-*.log 2>/dev/null | grep -iv "^ *collector: *$" | tail -20
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_collector N: the Collector, its exporter writing $work/exported-N.json.
start_collector() {
    cat >"$work/otelcol-$1.yaml" <<EOF
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$port
  otlp/small:
    protocols:
      http:
        endpoint: 127.0.0.1:$small
        max_request_body_size: 1000
exporters:
  file:
    path: $work/exported-$1.json
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp, otlp/small]
      exporters: [file]
EOF
    fresh "$work/otelcol-$1.log"
    "$collector" --config="$work/otelcol-$1.yaml" --feature-gates=service.profilesSupport \
        >"$work/otelcol-$1.log" 2>&1 &
    col=$!
    wait_line -p "$col" "Everything is ready" "$work/otelcol-$1.log" ||
        fail "the collector did not start (otelcol-$1.log)"
}

stop_collector() {
    kill -TERM "$col"
    wait "$col" 2>/dev/null || true
    col=
}

lines() { [ -s "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
# exported N: both exporter files hold N lines together (one per request).
exported() { [ "$(cat "$work"/exported-*.json 2>/dev/null | wc -l)" -ge "$1" ]; }

# All finished chunks of the recording are answered: the state's watermark is
# their number (push_state.h's "rec ID NEXT ...").
all_sent() {
    local n
    n=$(find "$work/rec" -maxdepth 1 -name '*.rpc' | wc -l)
    [ "$n" -gt 0 ] && awk -v n="$n" '$1 == "rec" && $3 == n { ok = 1 } END { exit !ok }' \
        "$work/rec/.ringprof-push.state" 2>/dev/null
}

test_otlp() {
    port=$(free_port)
    small=$(free_port)
    start_collector 1
    # The agent names its service and a label; push's --service wins, its --label
    # adds one.
    local agent="dir=$work/rec,chunktime=1s,interval=5ms,wall=100ms,service=push-agent"
    agent+=",labels=team:perf"
    java_start "-agentpath:$RP_AGENT=$agent" -- AttachTarget "$work/stop"
    wait_ready
    fresh "$work/push.out" "$work/push.err"
    "$RP_RINGPROF" push --follow "$work/rec" --protocol otlp --service push-test --label env=ci \
        --backoff-min 100ms --backoff-max 500ms "http://127.0.0.1:$port" \
        >"$work/push.out" 2>"$work/push.err" &
    local pusher=$!
    pids+=("$pusher")
    wait_for -p "$pusher" - lines "$work/exported-1.json" 1 ||
        fail "no chunk reached the collector"
    stop_collector
    wait_line -p "$pusher" "no answer" "$work/push.err" ||
        fail "push did not retry while the collector was down"
    start_collector 2
    wait_line -p "$pusher" "delivered after" "$work/push.err" ||
        fail "push did not deliver once the collector was back"
    touch "$work/stop"
    wait "$pid" || fail "the JVM exited $?"
    no_hs_err
    wait_for -p "$pusher" - all_sent || fail "push did not send every chunk"
    kill -TERM "$pusher"
    local rc=0
    wait "$pusher" || rc=$?
    [ "$rc" -eq 0 ] || fail "push --follow exited $rc after SIGTERM"
    # A file exporter writes a line per request: wait for the second's last.
    local n
    n=$(find "$work/rec" -maxdepth 1 -name '*.rpc' | wc -l)
    wait_for - exported "$n" || fail "the exporter wrote fewer lines than there are chunks"
    python3 "$RP_CHECK_COLLECTOR" "$RP_RINGPROF" "$work/rec" push-test env=ci,team=perf \
        "$work/exported-1.json" "$work/exported-2.json" || fail "what the collector got"

    # The small receiver refuses a chunk's body with 400.
    local chunk
    chunk=$(ls -S "$work/rec"/*.rpc | head -1)
    rc=0
    "$RP_RINGPROF" push --protocol otlp "http://127.0.0.1:$small" "$chunk" \
        >"$work/push.out" 2>"$work/push.err" || rc=$?
    [ "$rc" -eq 1 ] || fail "a refused chunk: exit $rc, not 1"
    has_line "rejected: HTTP 400: http: request body too large" "$work/push.err" ||
        fail "the refusal without the collector's words"
    has_line "$(basename "$chunk")" "$work/push.err" || fail "the refusal names no chunk"
    stop_collector
    note "$n chunks, each delivered once across a collector restart; a 400 told"
}

case "$test_name" in
otlp) test_otlp ;;
*) fail "unknown test $test_name" ;;
esac
