#!/usr/bin/env bash
# tests/convert/test_record.sh RINGPROF RP_TESTWRITER — `ringprof record`'s own
# checks, without a JVM: the "java" it runs is a script that writes rp_testwriter's
# split recording where -agentpath's dir= points, as the agent would.
#   - "recording to DIR/recording/" is printed when the program starts;
#   - a second run into the same DIR is refused (exit 2) and leaves the first alone;
#     --force replaces it, and the profile then holds one run, not two;
#   - a command that loads no agent: "no JVM was profiled", exit 1;
#   - --options: dir= refused plainly, a bad option is one line; --event checked;
#     all exit 2 before anything runs; --options help prints the option table.
set -u
RINGPROF=$1 WRITER=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1; shift
    checks=$((checks + 1))
    if ! "$@"; then echo "FAIL: $what"; fails=$((fails + 1)); fi
}
lines() { wc -l <"$1"; }
cd "$tmp" || exit 1

# The stand-in for java: -agentpath:LIB=dir=D[,opts] first, as record passes it.
cat >java <<EOS
#!/usr/bin/env bash
a=\${1#-agentpath:*=dir=}
echo "\$@" >>"$tmp/java.args"
exec "$WRITER" split "\${a%%,*}"
EOS
chmod +x java
record() { "$RINGPROF" record --agent "$tmp/java" "$@"; }
weight() { "$RINGPROF" convert --format collapsed "$1" | awk '{s += $NF} END {print s + 0}'; }

"$WRITER" split one >/dev/null
whole=$(weight one)

record -o out -- ./java Main >/dev/null 2>r1.err
check "first run: exit 0" test $? -eq 0
check "first run: says where it records, first" \
    test "$(head -1 r1.err)" = "ringprof record: recording to out/recording/"
check "first run: the flame graph and the text profile" test -s out/flamegraph.html -a -s out/profile.txt
check "first run: the profile holds the one run" test "$(weight out/recording)" = "$whole"
check "the agent options start with dir=DIR/recording, quiet=on (record says where itself)" \
    grep -q "=dir=out/recording,quiet=on Main" java.args

record -o out -- ./java Main >/dev/null 2>r2.err
check "second run into the same DIR: exit 2" test $? -eq 2
check "second run: one line that says why and what to do" \
    bash -c "[ $(lines r2.err) -eq 1 ] && grep -q 'out/recording already holds a recording (2 chunk files); give another -o DIR, or --force' r2.err"
check "second run: the program did not run" test "$(lines java.args)" -eq 1

record --force -o out -- ./java Main >/dev/null 2>r3.err
check "--force: exit 0" test $? -eq 0
check "--force: the profile holds one run, not two" test "$(weight out/recording)" = "$whole"

record -o none -- /bin/true >/dev/null 2>n.err
check "a command without the agent: exit 1" test $? -eq 1
check "a command without the agent: 'no JVM was profiled'" grep -q "no JVM was profiled: /bin/true" n.err
check "a command without the agent: nothing about conversion" bash -c "! grep -q convert n.err"

record -o bad --options dir=/tmp/x -- ./java Main >/dev/null 2>d.err
check "--options dir=: exit 2" test $? -eq 2
check "--options dir=: says -o sets it, once" \
    bash -c "[ $(lines d.err) -eq 1 ] && grep -q 'may not set dir=.*-o DIR' d.err"
record -o bad --options intervl=1ms -- ./java Main >/dev/null 2>o.err
check "--options typo: exit 2" test $? -eq 2
check "--options typo: one line, the parser's" \
    bash -c "[ $(lines o.err) -eq 1 ] && grep -q \"unknown option 'intervl' (did you mean 'interval'?)\" o.err"
record -o bad --event allocs -- ./java Main >/dev/null 2>e.err
check "--event allocs: exit 2" test $? -eq 2
check "--event allocs: names the valid kinds" grep -q "unknown event 'allocs': the valid names are cpu," e.err
record -o bad --options interval=1ms,help -- ./java Main >h.out 2>&1
check "--options help: exit 0, the agent's option table" \
    bash -c "[ $? -eq 0 ] && grep -q '^  interval ' h.out"
check "usage errors ran nothing" test "$(lines java.args)" -eq 2 -a ! -e bad/recording

echo "$((checks - fails)) of $checks checks passed"
[ $fails -eq 0 ]
