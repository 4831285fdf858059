#!/usr/bin/env bash
# tests/convert/test_record.sh RINGPROF RP_TESTWRITER STANDIN — `ringprof record`'s
# own checks, without a JVM: the "java" it runs is STANDIN (standin_java.sh), which
# writes rp_testwriter's split recording where -agentpath's dir= points, with the
# recording id record gave it, as the agent would.
#   - "recording to DIR/recording/" is printed when the program starts;
#   - the heatmap (every kind) is written beside them, and named;
#   - a second run into the same DIR is refused (exit 2) and leaves the first alone;
#     --force replaces it, and the profile then holds one run, not two;
#   - a command that loads no agent: "no JVM was profiled", exit 1;
#   - --options: dir= and recording= refused plainly, a bad option is one line;
#     --event checked; all exit 2 before anything runs; --options help prints the
#     option table;
#   - what record trusts in DIR (the attacks by another user are in
#     tests/agent/security_tests.sh, sec_record_*): a chunk of another recording
#     dropped in while the JVM starts is left out with one line and converted
#     nowhere; symlinks at flamegraph.html and profile.txt are replaced, their
#     targets untouched, and no temporary is left; DIR/recording as a symlink and a
#     DIR others may write are refused; --force removes no symlink; DIR through
#     one's own symlinked directory works.
set -u
RINGPROF=$1 WRITER=$2 STANDIN=$3
. "$(dirname "$0")/../checks.sh"
lines() { wc -l <"$1"; }
export RP_TESTWRITER=$WRITER RP_STANDIN_LOG=$tmp/java.args
java=$STANDIN
record() { "$RINGPROF" record --agent "$WRITER" "$@"; }
weight() { "$RINGPROF" convert --format collapsed "$1" | awk '{s += $NF} END {print s + 0}'; }

"$WRITER" split one >/dev/null
whole=$(weight one)

record -o out -- "$java" Main >/dev/null 2>r1.err
check "first run: exit 0" test $? -eq 0
check "first run: says where it records, first" \
    test "$(head -1 r1.err)" = "ringprof record: recording to out/recording/"
check "first run: the flame graph and the text profile" test -s out/flamegraph.html -a -s out/profile.txt
check "first run: the text profile is the tree, then the flat table" \
    bash -c "grep -q '^# ringprof tree' out/profile.txt && grep -q '^# ringprof flat' out/profile.txt"
check "first run: the profile holds the one run" test "$(weight out/recording)" = "$whole"
check "first run: the heatmap of every kind, and record names it" \
    bash -c "grep -q '\"section\":\"kind:cpu\"' out/heatmap.html && grep -q '\"section\":\"kind:alloc\"' out/heatmap.html && grep -q '  heatmap       out/heatmap.html' r1.err"
check "the agent options are dir=DIR/recording,recording=ID,quiet=on (record says where itself)" \
    grep -Eq "=dir=out/recording,recording=rec(-[0-9a-f]{8}){4},quiet=on Main" java.args
check "DIR holds the outputs and the recording, no temporary" \
    test "$(ls -A out | tr '\n' ' ')" = "flamegraph.html heatmap.html profile.txt recording "

record -o out -- "$java" Main >/dev/null 2>r2.err
check "second run into the same DIR: exit 2" test $? -eq 2
check "second run: one line that says why and what to do" \
    bash -c "[ $(lines r2.err) -eq 1 ] && grep -q 'out/recording already holds a recording (2 chunk files); give another -o DIR, or --force' r2.err"
check "second run: the program did not run" test "$(lines java.args)" -eq 1

record --force -o out -- "$java" Main >/dev/null 2>r3.err
check "--force: exit 0" test $? -eq 0
check "--force: the profile holds one run, not two" test "$(weight out/recording)" = "$whole"
check "each run has its own recording id" \
    test "$(grep -Eo 'recording=rec[-0-9a-f]*' java.args | sort -u | wc -l)" -eq 2

record -o none -- /bin/true >/dev/null 2>n.err
check "a command without the agent: exit 1" test $? -eq 1
check "a command without the agent: 'no JVM was profiled'" grep -q "no JVM was profiled: /bin/true" n.err
check "a command without the agent: nothing about conversion" bash -c "! grep -q convert n.err"

record -o bad --options dir=/tmp/x -- "$java" Main >/dev/null 2>d.err
check "--options dir=: exit 2" test $? -eq 2
check "--options dir=: says -o sets it, once" \
    bash -c "[ $(lines d.err) -eq 1 ] && grep -q 'may not set dir=.*-o DIR' d.err"
record -o bad --options recording=mine -- "$java" Main >/dev/null 2>i.err
rc=$?
check "--options recording=: exit 2, one line" \
    bash -c "[ \$0 -eq 2 ] && [ $(lines i.err) -eq 1 ] && grep -q 'may not set recording=' i.err" "$rc"
record -o bad --options intervl=1ms -- "$java" Main >/dev/null 2>o.err
check "--options typo: exit 2" test $? -eq 2
check "--options typo: one line, the parser's" \
    bash -c "[ $(lines o.err) -eq 1 ] && grep -q \"unknown option 'intervl' (did you mean 'interval'?)\" o.err"
record -o bad --event allocs -- "$java" Main >/dev/null 2>e.err
check "--event allocs: exit 2" test $? -eq 2
check "--event allocs: names the valid kinds" grep -q "unknown event 'allocs' (did you mean 'alloc'?); the valid names are cpu," e.err
record -o bad --options interval=1ms,help -- "$java" Main >h.out 2>&1
check "--options help: exit 0, the agent's option table" \
    bash -c "[ $? -eq 0 ] && grep -q '^  interval ' h.out && grep -q '^  recording ' h.out"
check "usage errors ran nothing" test "$(lines java.args)" -eq 2 -a ! -e bad

# ---- what record trusts in DIR ----

# Another recording's chunk, dropped into DIR/recording while the JVM starts.
"$WRITER" other other.rpc >/dev/null
RP_STANDIN_PLANT=$tmp/other.rpc record -o planted -- "$java" Main >/dev/null 2>p.err
check "a chunk dropped in: exit 0" test $? -eq 0
check "a chunk dropped in: left out, one line naming it" \
    bash -c "[ \$(grep -c 'left out' p.err) -eq 1 ] && grep -q 'left out 1 chunk file in planted/recording that this run.s JVM did not write, the first other.rpc (recording rec-B)' p.err"
check "a chunk dropped in: the flame graph and the profile hold the run alone" \
    bash -c "! grep -q rec-B planted/flamegraph.html planted/profile.txt && grep -q 'recording rec-' planted/profile.txt && [ \"\$(grep -c '^# recording' planted/profile.txt)\" -eq 2 ]"
id=$(grep -Eo 'recording=rec[-0-9a-f]*' java.args | tail -1)
"$RINGPROF" convert --recording "${id#recording=}" --format collapsed planted/recording >rec.collapsed 2>rec.err
check "convert --recording: the run alone, the other left out with one line" \
    bash -c "[ \"\$(awk '{s += \$NF} END {print s + 0}' rec.collapsed)\" = $whole ] && grep -q 'left out 1 chunk file of other recordings, the first planted/recording/other.rpc (recording rec-B)' rec.err"

# Symlinks at the output names, in a DIR of one's own: replaced, not followed.
mkdir links
echo keep1 >target1
echo keep2 >target2
ln -s "$tmp/target1" links/profile.txt
ln -s "$tmp/target2" links/flamegraph.html
record -o links -- "$java" Main >/dev/null 2>l.err
check "symlinks at the outputs: exit 0" test $? -eq 0
check "symlinks at the outputs: their targets are untouched" \
    test "$(cat target1 target2)" = "$(printf 'keep1\nkeep2')"
check "symlinks at the outputs: replaced by the outputs" \
    bash -c "[ -f links/profile.txt ] && [ ! -L links/profile.txt ] && [ ! -L links/flamegraph.html ] && grep -q '^# ringprof tree' links/profile.txt"
check "symlinks at the outputs: no temporary left" \
    test "$(ls -A links | tr '\n' ' ')" = "flamegraph.html heatmap.html profile.txt recording "

# DIR/recording a symlink (to a recording of one's own): refused, nothing touched.
mkdir -p linked elsewhere
cp one/*.rpc elsewhere/
ln -s "$tmp/elsewhere" linked/recording
n0=$(lines java.args)
for force in "" --force; do
    record -o linked $force -- "$java" Main >/dev/null 2>s.err
    rc=$?
    check "DIR/recording a symlink $force: exit 2, one line" \
        bash -c "[ \$0 -eq 2 ] && [ $(lines s.err) -eq 1 ] && grep -q 'refusing linked/recording: it is a symlink (owner uid [0-9]*), and record never follows one there' s.err" "$rc"
done
check "DIR/recording a symlink: the program did not run" test "$(lines java.args)" -eq "$n0"
check "DIR/recording a symlink: the chunks it points to are all there" test "$(ls elsewhere | wc -l)" -eq 2

# --force with a symlink among the chunk names: not removed, its target kept.
mkdir -p forced/recording
cp one/*.rpc forced/recording/
ln -s "$tmp/elsewhere/$(ls elsewhere | head -1)" forced/recording/20261121T000000Z-1-000000.rpc
record -o forced --force -- "$java" Main >/dev/null 2>f.err
rc=$?
check "--force and a symlink: exit 2, names it" \
    bash -c "[ \$0 -eq 2 ] && grep -q 'forced/recording/20261121T000000Z-1-000000.rpc is not a regular file: not removed' f.err" "$rc"
check "--force and a symlink: the link and its target are there" \
    test -L forced/recording/20261121T000000Z-1-000000.rpc -a "$(ls elsewhere | wc -l)" -eq 2

# A DIR that others may write, and one reached through one's own symlink.
mkdir open
chmod 0777 open
record -o open -- "$java" Main >/dev/null 2>w.err
rc=$?
check "DIR mode 0777: exit 2, one line naming DIR, owner and mode" \
    bash -c "[ \$0 -eq 2 ] && [ $(lines w.err) -eq 1 ] && grep -q 'refusing -o open: it may be written by every user (mode 0777, owner uid [0-9]*)' w.err" "$rc"
check "DIR mode 0777: nothing made in it" test -z "$(ls -A open)"
mkdir real
ln -s real via
record -o via/run -- "$java" Main >/dev/null 2>v.err
rc=$?
check "DIR through one's own symlinked directory: exit 0, written there" \
    bash -c "[ \$0 -eq 0 ] && [ -s real/run/flamegraph.html ]" "$rc"

checks_done
