# tests/checks.sh — sourced by the tool's shell tests (tests/test_tool_summary.sh,
# tests/convert/test_record.sh, test_outfile.sh). It makes a scratch directory $tmp, removed at exit, and makes
# it the working directory; `check DESCRIPTION COMMAND...` runs COMMAND and counts
# it, printing "FAIL: DESCRIPTION" when it fails; `checks_done`, last, prints
# "N of M checks passed" and is the script's exit status.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checks=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1; shift
    checks=$((checks + 1))
    if ! "$@"; then echo "FAIL: $what"; fails=$((fails + 1)); fi
}
checks_done() {
    echo "$((checks - fails)) of $checks checks passed"
    [ $fails -eq 0 ]
}
cd "$tmp" || exit 1
