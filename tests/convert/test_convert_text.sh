#!/usr/bin/env bash
# tests/convert/test_convert_text.sh RINGPROF RP_TESTWRITER SRCDIR
#
# `ringprof convert` into its text formats (tree, backtrace, flat, collapsed), end to
# end, on the deterministic recordings of rp_testwriter:
#   1. goldens: exact outputs for every format and filter, compared with diff
#      (RP_UPDATE_GOLDEN=1 rewrites them; read the diff before committing one);
#   2. independent figures: expect.py recomputes every number from the list of
#      samples the writer wrote (its manifest), for a matrix of options;
#   3. every collapsed output passes the strict folded-format checker;
#   4. merges: two recordings converted together equal the sum of each alone,
#      --recording picks one of them, and a recording split over chunks and
#      segments converts exactly like the whole;
#   5. bad input and bad usage: warnings, skips, --strict, exit codes.
set -u
RINGPROF=$1 WRITER=$2 SRC=$3
GOLDEN=$SRC/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() {   # check DESCRIPTION COMMAND...
    local what=$1; shift
    checks=$((checks + 1))
    if ! "$@"; then fail "$what"; fi
}
convert() { "$RINGPROF" convert "$@"; }

"$WRITER" main "$tmp/a.rpc" --manifest "$tmp/a.json" || { echo "rp_testwriter failed"; exit 1; }
"$WRITER" other "$tmp/b.rpc" --manifest "$tmp/b.json" || exit 1
"$WRITER" split "$tmp/split" --manifest "$tmp/split.json" || exit 1
A=$tmp/a.rpc B=$tmp/b.rpc

# ------------------------------------------------------------------ 1. goldens --
# name | convert arguments (the inputs are substituted for A and B)
cases='
tree.txt                     | --format tree A
tree_per_thread.txt          | --format tree --per-thread A
tree_cutoff.txt              | --format tree --cutoff 5 A
tree_lines.txt               | --format tree --lines A
tree_bci.txt                 | --format tree --bci A
tree_merged_recordings.txt   | --format tree --per-thread A B
backtrace.txt                | --format backtrace A
backtrace_method.txt         | --format backtrace --method fib|handle A
backtrace_per_thread_top.txt | --format backtrace --per-thread --top 2 A
backtrace_alloc.txt          | --format backtrace --event alloc --top 3 A
flat_cpu.txt                 | --format flat A
flat_top.txt                 | --format flat --top 3 A
flat_alloc.txt               | --format flat --event alloc A
flat_alloc_per_thread.txt    | --format flat --event alloc --per-thread A
collapsed.collapsed          | --format collapsed A
collapsed_per_thread.collapsed | --format collapsed --per-thread A
collapsed_samples.collapsed  | --format collapsed --value samples A
collapsed_alloc.collapsed    | --format collapsed --event alloc A
collapsed_thread.collapsed   | --format collapsed --thread ^worker-2$ A
collapsed_include.collapsed  | --format collapsed --include Json A
collapsed_exclude.collapsed  | --format collapsed --exclude Json|fib A
collapsed_from_to.collapsed  | --format collapsed --from +3s --to -2.5s A
collapsed_from_abs.collapsed | --format collapsed --from 2026-11-21T06:02:08Z --to 2026-11-21T06:02:10.5Z A
collapsed_lines.collapsed    | --format collapsed --lines A
collapsed_bci.collapsed      | --format collapsed --bci A
collapsed_merged.collapsed   | --format collapsed A B
'
folded=()   # the collapsed outputs, for one run of the strict checker
while IFS='|' read -r name args; do
    name=$(echo "$name" | xargs)
    [ -z "$name" ] && continue
    argv=()
    for a in $args; do
        case $a in A) argv+=("$A") ;; B) argv+=("$B") ;; *) argv+=("$a") ;; esac
    done
    out=$tmp/golden.$name
    convert "${argv[@]}" >"$out" 2>"$out.err"
    rc=$?
    checks=$((checks + 1))
    if [ $rc -ne 0 ]; then
        fail "golden $name: convert exited $rc: $(cat "$out.err")"
        continue
    fi
    if [ "${RP_UPDATE_GOLDEN:-}" = 1 ]; then
        cp "$out" "$GOLDEN/$name"
    elif ! diff -u "$GOLDEN/$name" "$out" >"$out.diff"; then
        fail "golden $name differs (ringprof convert $args):"
        cat "$out.diff"
    fi
    case $name in *.collapsed) folded+=("$out") ;; esac
done <<<"$cases"
check "every collapsed golden is strict folded format" python3 "$SRC/check_folded.py" "${folded[@]}"

# ------------------------------------------------------ 2. independent figures --
# expect.py CHECK gets the same options as convert; alloc flat output is SITES.
# Each output is kept and its check is a line of $tmp/figures, which expect.py
# --batch runs in one process (a python start per check cost more than the checks).
: >"$tmp/figures"
folded=()
n=0
matrix=(
    ""
    "--per-thread"
    "--lines"
    "--bci --per-thread"
    "--thread ^worker"
    "--include Json"
    "--exclude fib|Crypto"
    "--from +3s --to +6s"
    "--from 2026-11-21T06:02:05Z"
    "--value samples"
    "--event alloc"
    "--event alloc --per-thread --lines"
)
for opts in "${matrix[@]}"; do
    for inputs in "A" "A B"; do
        ins=() mans=()
        for i in $inputs; do
            [ "$i" = A ] && ins+=("$A") mans+=("$tmp/a.json")
            [ "$i" = B ] && ins+=("$B") mans+=("$tmp/b.json")
        done
        for fmt in collapsed tree flat backtrace; do
            n=$((n + 1))
            out=$tmp/m.$n.out
            # shellcheck disable=SC2086
            convert --format $fmt $opts "${ins[@]}" >"$out" 2>/dev/null
            chk=$fmt
            [ $fmt = flat ] && case "$opts" in *alloc*) chk=sites ;; esac
            [ $fmt = tree ] && case "$opts" in *"value samples"*) continue ;; esac
            # shellcheck disable=SC2206
            line=("figures: $fmt $opts ($inputs)" "$chk" "$out" $opts -- "${mans[@]}")
            (IFS=$'\t'; echo "${line[*]}") >>"$tmp/figures"
            [ $fmt = collapsed ] && folded+=("$out")
        done
    done
done
python3 "$SRC/expect.py" --batch "$tmp/figures"
nf=$?
checks=$((checks + $(wc -l <"$tmp/figures"))) fails=$((fails + nf))
check "every collapsed output of the matrix is strict folded format" \
    python3 "$SRC/check_folded.py" "${folded[@]}"

# Hand-derived figures for the key facts, independent of expect.py too:
# rec-A's cpu samples: 100, weighing 99 x 10 ms + 1 x 20 ms; alloc: 8 MiB in 16.
convert --format flat "$A" >"$tmp/f.txt"
check "flat header: 100 samples, weight 1010000000 ns" \
    grep -q "^CPU SAMPLES BEGIN (total = 100 samples, weight = 1010000000 ns)" "$tmp/f.txt"
# fib recurses three deep in 8 samples of 10 ms: total 80 ms, not 240 ms.
check "recursion counted once per stack (flat)" \
    grep -Eq "^ +[0-9]+ +7\.92% +[0-9.]+% +8 +80000000 +7\.92% +80000000 app\.Math\.fib$" "$tmp/f.txt"
convert --format collapsed "$A" | awk '{s += $NF} END {exit s == 1010000000 ? 0 : 1}'
check "collapsed values add up to the weight written" test $? -eq 0
convert --format collapsed --value samples "$A" | awk '{s += $NF} END {exit s == 100 ? 0 : 1}'
check "collapsed --value samples adds up to the samples written" test $? -eq 0
convert --format collapsed --event alloc "$A" | awk '{s += $NF} END {exit s == 8388608 ? 0 : 1}'
check "alloc collapsed adds up to 8 MiB" test $? -eq 0
convert --format collapsed "$A" >"$tmp/c.txt"
check "truncated stack gets a [truncated] root frame" \
    grep -qx "\[truncated\];app.Server.handle_\[j\];app.Json.parse_\[j\] 20000000" "$tmp/c.txt"
check "failed walk's marker frame is shown" grep -qx "\[agct:gc_active\] 20000000" "$tmp/c.txt"
check "';' and newline in a name are replaced" grep -q ";app.Odd.weird:name?x_\[0\] 40000000$" "$tmp/c.txt"
check "native frame plain, kernel _[k], inlined _[i]" \
    grep -q "__memcpy_avx_unaligned 210000000$" "$tmp/c.txt"
convert --format tree "$A" >"$tmp/t.txt"
check "tree marks [truncated] in the tree" grep -q "  \[truncated\]$" "$tmp/t.txt"
for f in tree flat backtrace; do
    convert --format $f "$A" >"$tmp/m.txt"
    check "$f shows the marker frame" grep -q "\[agct:gc_active\]" "$tmp/m.txt"
    check "$f shows [truncated]" grep -q "\[truncated\]" "$tmp/m.txt"
done
# The SITES table: byte[] from two traces, 3 MiB and 2 MiB; objects as written.
convert --format flat --event alloc "$A" >"$tmp/s.txt"
check "SITES: byte[] 3 MiB (3145728 bytes), 3072 objects, 6 samples, no live figures" \
    grep -Eq "^ +1 +37\.50% +37\.50% +- +- +3\.00 MiB +3072 +6 +300001 byte\[\]$" "$tmp/s.txt"
check "SITES says why its live columns are '-'" \
    grep -q "^# live columns: none; .*without live=on" "$tmp/s.txt"
check "SITES lists TRACE 300001 with its frames" grep -q "^TRACE 300001:$" "$tmp/s.txt"

# --------------------------------------------------------------- 4. merges --
convert --format collapsed "$A" >"$tmp/ca"
convert --format collapsed "$B" >"$tmp/cb"
convert --format collapsed "$A" "$B" >"$tmp/cab"
sum_lines() { awk '{v = $NF; $NF = ""; sub(/ $/, ""); s[$0] += v} END {for (k in s) print k, s[k]}' "$@" | sort; }
check "merge outputs are strict folded format" \
    python3 "$SRC/check_folded.py" "$tmp/ca" "$tmp/cb" "$tmp/cab"
check "merge: collapsed A+B = collapsed A + collapsed B, line by line" \
    diff <(sum_lines "$tmp/ca" "$tmp/cb") <(sum_lines "$tmp/cab")
total_of() { grep -o "weight = [0-9]*" "$1" | head -1 | grep -o "[0-9]*$"; }
convert --format flat "$A" >"$tmp/fa"
convert --format flat "$B" >"$tmp/fb"
convert --format flat "$A" "$B" >"$tmp/fab"
check "merge: flat total A+B = A + B" \
    test "$(total_of "$tmp/fab")" -eq $(( $(total_of "$tmp/fa") + $(total_of "$tmp/fb") ))
method_total() { awk -v m="$2" '$NF == m {print $7}' "$1"; }
check "merge: flat total of app.Worker.run adds up" \
    test "$(method_total "$tmp/fab" app.Worker.run)" -eq \
         $(( $(method_total "$tmp/fa" app.Worker.run) + $(method_total "$tmp/fb" app.Worker.run) ))
check "merge keeps both recordings' labels" \
    grep -q "recording rec-B: pid 200 on hostB" <(convert --format tree "$A" "$B")
# --recording: one recording out of a merge, the other left out with one line.
convert --recording rec-B --format collapsed "$A" "$B" >"$tmp/crb" 2>"$tmp/crb.err"
check "--recording rec-B of A and B: B alone" diff "$tmp/cb" "$tmp/crb"
check "--recording rec-B: one line names what it left out" \
    test "$(cat "$tmp/crb.err")" = "ringprof convert: --recording rec-B: left out 1 chunk file of other recordings, the first $A (recording rec-A)"
convert --recording rec-Z "$A" "$B" >/dev/null 2>"$tmp/crz.err"
check "--recording of none of them: exit 1, says so" \
    bash -c '[ $0 -eq 1 ] && grep -q "no input could be read: no chunk is of recording rec-Z" "$1"' $? "$tmp/crz.err"
for f in tree flat collapsed backtrace; do
    convert --format $f --per-thread "$A" >"$tmp/whole"
    convert --format $f --per-thread "$tmp/split" >"$tmp/parts"
    check "split into 2 chunks and 15 segments: $f is identical" diff "$tmp/whole" "$tmp/parts"
done
convert --format collapsed "$tmp/split/*.rpc" >"$tmp/glob"
check "a quoted glob INPUT expands" diff "$tmp/ca" "$tmp/glob"

# ----------------------------------------------- 5. bad input, bad usage --
size=$(stat -c %s "$A")
head -c $((size - 40)) "$A" >"$tmp/cut.rpc"
convert --format collapsed "$tmp/cut.rpc" >"$tmp/cut.out" 2>"$tmp/cut.err"
check "truncated chunk: exit 0" test $? -eq 0
check "truncated chunk: warning names file and offset" \
    grep -q "cut.rpc: offset [0-9]*: " "$tmp/cut.err"
check "truncated chunk: the segments before the cut are converted" test -s "$tmp/cut.out"
check "truncated chunk: output still strict folded" python3 "$SRC/check_folded.py" "$tmp/cut.out"
convert --strict --format collapsed "$tmp/cut.rpc" >/dev/null 2>&1
check "truncated chunk with --strict: exit 1" test $? -eq 1

# Damage in the middle: flip a byte in the second segment's payload.
cp "$A" "$tmp/flip.rpc"
off=$(grep -abo RSEG "$A" | sed -n 2p | cut -d: -f1)
printf '\xff\xff\xff\xff' | dd of="$tmp/flip.rpc" bs=1 seek=$((off + 60)) conv=notrunc 2>/dev/null
convert --format collapsed "$tmp/flip.rpc" >"$tmp/flip.out" 2>"$tmp/flip.err"
check "corrupt segment: exit 0" test $? -eq 0
check "corrupt segment: reported with offset and reason" \
    grep -q "flip.rpc: offset [0-9]*: .*" "$tmp/flip.err"
check "corrupt segment: the ids it defined are reported where later segments name them" \
    grep -q "flip.rpc: offset [0-9]*: segment [0-9]*: [0-9]* references* to ids the chunk never defined" \
    "$tmp/flip.err"
check "corrupt segment: counted in the summary line, with the references it left" \
    grep -q "2 problems" "$tmp/flip.err"
n_flip=$(awk '{s += $NF} END {print s}' "$tmp/flip.out")
check "corrupt segment: the other segments still convert (0 < weight < whole)" \
    test "$n_flip" -gt 0 -a "$n_flip" -lt 1010000000
convert --strict "$tmp/flip.rpc" >/dev/null 2>&1
check "corrupt segment with --strict: exit 1" test $? -eq 1

# Truncation at every 11th byte: never a crash (exit 0, or 1 when the header is
# gone), always well-formed folded output, never more weight than was written.
mkdir "$tmp/cuts"
bad_exit=0 too_much=0
for ((i = 0; i < size; i += 11)); do
    head -c $i "$A" >"$tmp/cuts/t.rpc"
    convert --format collapsed --per-thread "$tmp/cuts/t.rpc" >"$tmp/cuts/$i.out" 2>/dev/null
    rc=$?
    [ $rc -gt 1 ] && { bad_exit=$((bad_exit + 1)); echo "cut at $i: exit $rc"; }
    w=$(awk '{s += $NF} END {print s + 0}' "$tmp/cuts/$i.out")
    [ "$w" -gt 1010000000 ] && too_much=$((too_much + 1))
done
check "truncation at every 11th byte: exit 0 or 1" test $bad_exit -eq 0
check "truncation: never more weight than written" test $too_much -eq 0
check "truncation: every output strict folded" python3 "$SRC/check_folded.py" "$tmp"/cuts/*.out

echo "not a chunk" >"$tmp/junk.rpc"
convert "$tmp/junk.rpc" >/dev/null 2>"$tmp/junk.err"
check "nothing readable: exit 1" test $? -eq 1
check "nothing readable: says so" grep -q "no input could be read" "$tmp/junk.err"
convert "$tmp/does-not-exist.rpc" >/dev/null 2>&1
check "missing input only: exit 1" test $? -eq 1
convert --format collapsed "$A" "$tmp/does-not-exist.rpc" >/dev/null 2>&1
check "missing input beside a good one: exit 0" test $? -eq 0
convert --strict --format collapsed "$A" "$tmp/does-not-exist.rpc" >/dev/null 2>&1
check "missing input with --strict: exit 1" test $? -eq 1
convert --format nosuch "$A" >/dev/null 2>"$tmp/u.err"
check "unknown format: exit 2" test $? -eq 2
check "unknown format: names it and the formats, in one line" \
    grep -q "unknown format 'nosuch'; the formats are tree, backtrace, flat," "$tmp/u.err"
convert --no-such-option "$A" >/dev/null 2>"$tmp/u.err"
check "unknown option: exit 2" test $? -eq 2
check "unknown option: where the help is" grep -q "Try 'ringprof convert --help'" "$tmp/u.err"
convert --top 0 "$A" >/dev/null 2>&1;            check "--top 0: exit 2" test $? -eq 2
convert --cutoff x "$A" >/dev/null 2>&1;         check "--cutoff x: exit 2" test $? -eq 2
convert --from yesterday "$A" >/dev/null 2>&1;   check "--from yesterday: exit 2" test $? -eq 2
convert --thread '(' "$A" >/dev/null 2>&1;       check "bad regex: exit 2" test $? -eq 2
convert --value bytes "$A" >/dev/null 2>&1;      check "--value bytes: exit 2" test $? -eq 2
convert >/dev/null 2>&1;                         check "no INPUT: exit 2" test $? -eq 2
convert --event allocs -o "$tmp/k.html" "$A" 2>"$tmp/k.err"
check "--event allocs (a typo): exit 2" test $? -eq 2
check "--event allocs: no output written" test ! -e "$tmp/k.html"
check "--event allocs: one line naming the valid kinds" \
    grep -qx "ringprof convert: unknown event 'allocs' (did you mean 'alloc'?); the valid names are cpu, alloc, live, gc, wall, lock, lock.waiting" "$tmp/k.err"
convert --event gc "$A" >/dev/null 2>"$tmp/k.err"
check "--event gc (an agent kind the input lacks): not a usage error" test $? -eq 0
check "--event gc absent: says which kinds there are" grep -q "cpu 100, alloc 16" "$tmp/k.err"

# -o: the format follows the extension; progress never goes to a file or pipe.
convert -o "$tmp/x.collapsed" "$A" 2>"$tmp/o.err"
check "-o .collapsed writes collapsed" diff "$tmp/ca" "$tmp/x.collapsed"
check "no progress or noise on a redirected stderr" test ! -s "$tmp/o.err"
convert -o "$tmp/x.folded" "$A";  check "-o .folded writes collapsed" diff "$tmp/ca" "$tmp/x.folded"
convert -o "$tmp/x.txt" "$A";     check "-o .txt writes the tree" grep -q "call tree" "$tmp/x.txt"
convert --format flat -o "$tmp/x.collapsed" "$A"
check "--format wins over the -o extension" grep -q "CPU SAMPLES BEGIN" "$tmp/x.collapsed"
convert "$A" --format collapsed >"$tmp/late"
check "options after INPUT are accepted" diff "$tmp/ca" "$tmp/late"
convert --format collapsed -o /nonexistent-dir/x "$A" 2>/dev/null
check "unwritable -o: exit 1" test $? -eq 1

echo "$((checks - fails)) of $checks checks passed"
[ $fails -eq 0 ]
