#!/usr/bin/env bash
# tests/convert/test_outfile.sh RINGPROF RP_TESTWRITER — how `convert -o` and
# `diff -o` create their files (tools/model/outfile.h), as the user who runs them
# (the attacks by another user are in tests/agent/security_tests.sh):
#   - a symlink at the output name is replaced by the output, its target untouched;
#   - a conversion that fails leaves the earlier file at that name as it was and no
#     temporary; SIGTERM while the file is written removes the temporary too;
#   - diff's pprof directory through one's own symlink is followed, and made when
#     missing; a symlink at base.pb.gz is replaced;
#   - what cannot be replaced is written in place: /dev/null, /dev/stdout, bash's
#     >(...) (/dev/fd/N), a FIFO; a directory at the name is refused, one line.
set -u
RINGPROF=$1 WRITER=$2
. "$(dirname "$0")/../checks.sh"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
rp() { "$RINGPROF" "$@"; }
only() { test "$(ls -A "$1" | tr '\n' ' ')" = "$2"; }   # only DIR "NAMES ": nothing else

"$WRITER" split rec >/dev/null
"$WRITER" diff-base base.rpc >/dev/null
"$WRITER" diff-new new.rpc >/dev/null
rp convert --format collapsed rec >want.collapsed

mkdir out
echo secret >secret
ln -s "$tmp/secret" out/cpu.collapsed
rp convert -o out/cpu.collapsed rec 2>c.err
check "convert -o onto a symlink: exit 0" test $? -eq 0
check "convert -o onto a symlink: its target untouched" test "$(cat secret)" = secret
check "convert -o onto a symlink: replaced by the output" \
    bash -c '[ ! -L out/cpu.collapsed ] && cmp -s out/cpu.collapsed want.collapsed'
check "convert -o: no temporary left" only out "cpu.collapsed "

# A failed conversion keeps what was there (a usage error found after reading,
# an --event of which the inputs have nothing).
cp out/cpu.collapsed before
rp convert --event wall -o out/cpu.collapsed rec 2>w.err
check "convert with nothing to write: exit 1" test $? -eq 1
check "convert with nothing to write: the earlier file as it was, no temporary" \
    bash -c 'cmp -s out/cpu.collapsed before && [ "$(ls -A out)" = cpu.collapsed ]'
rp convert --format jfr --event wall -o out/x.jfr rec 2>j.err
check "jfr with nothing to write: exit 1, no file, no temporary" \
    bash -c '[ $0 -eq 1 ] && [ "$(ls -A out)" = cpu.collapsed ]' $?

# SIGTERM while jfr (which writes as it reads) waits on its input, a FIFO that
# no one writes (open blocks). --event cpu: one kind, so no look-ahead opens the
# input before the output (all kinds would look ahead for lock waits).
mkfifo in.rpc
"$RINGPROF" convert --format jfr --event cpu -o out/t.jfr in.rpc 2>t.err &
pid=$!
for _ in $(seq 600); do ls -A out | grep -q '^\.t\.jfr\..*\.tmp$' && break; sleep 0.05; done
check "jfr: its temporary exists while it writes" bash -c 'ls -A out | grep -q "^\.t\.jfr\..*\.tmp$"'
kill -TERM $pid
wait $pid
rc=$?
pid=
check "SIGTERM: convert dies of it, its temporary removed" \
    bash -c '[ $0 -eq 143 ] && [ "$(ls -A out)" = cpu.collapsed ]' "$rc"

# diff: a file onto a symlink; the pprof directory.
ln -s "$tmp/secret" out/d.txt
rp diff -o out/d.txt base.rpc new.rpc 2>d.err
check "diff -o onto a symlink: exit 0, its target untouched, replaced" \
    bash -c '[ $0 -eq 0 ] && [ "$(cat secret)" = secret ] && [ ! -L out/d.txt ] && grep -q "^# ringprof diff" out/d.txt' $?
mkdir cmp
ln -s cmp cmplink
ln -s "$tmp/secret" cmp/base.pb.gz
rp diff --quiet --format pprof -o cmplink base.rpc new.rpc 2>p.err
check "diff pprof -o through one's own symlink: exit 0, both files there" \
    bash -c '[ $0 -eq 0 ] && [ -s cmp/base.pb.gz ] && [ -s cmp/new.pb.gz ]' $?
check "diff pprof: the symlink at base.pb.gz replaced, its target untouched" \
    bash -c '[ ! -L cmp/base.pb.gz ] && [ "$(cat secret)" = secret ]'
check "diff pprof: no temporary left" only cmp "base.pb.gz new.pb.gz "
rp diff --quiet --format pprof -o newdir base.rpc new.rpc 2>/dev/null
check "diff pprof: a missing directory is made" test -s newdir/new.pb.gz

# Written in place: devices, /dev/stdout, bash's >(...), a FIFO.
rp convert --format collapsed -o /dev/null rec
check "-o /dev/null: exit 0, /dev/null still a device" bash -c '[ $0 -eq 0 ] && [ -c /dev/null ]' $?
rp convert --format collapsed -o /dev/stdout rec >stdout.collapsed
check "-o /dev/stdout: the output on stdout" cmp -s stdout.collapsed want.collapsed
rp convert --format collapsed -o >(cat >procsub.collapsed) rec
wait $!
check "-o >(...): the output through the pipe" cmp -s procsub.collapsed want.collapsed
mkfifo out.fifo
cat out.fifo >fifo.collapsed &
rp convert --format collapsed -o out.fifo rec
wait $!
check "-o FIFO: the output through it, the FIFO kept" \
    bash -c 'cmp -s fifo.collapsed want.collapsed && [ -p out.fifo ]'

rp convert -o out rec 2>dir.err
check "-o a directory: exit 1, one line" \
    bash -c '[ $0 -eq 1 ] && [ "$(cat dir.err)" = "ringprof convert: out: is a directory: not written" ]' $?
rp convert -o nosuch/x.txt rec 2>nodir.err
check "-o into a missing directory: one line naming it" \
    test "$(cat nodir.err)" = "ringprof convert: nosuch/x.txt: nosuch does not exist"

checks_done
