#!/usr/bin/env bash
# tests/convert/standin_java.sh — a stand-in for java, for `ringprof record`'s tests
# without a JVM: run as `standin_java.sh -agentpath:LIB=dir=D[,recording=ID][,...]
# MAIN...`, as record runs java, it writes rp_testwriter's split recording into D
# with recording id ID, as the agent would. From the environment:
#   RP_TESTWRITER        the rp_testwriter program (required)
#   RP_STANDIN_LOG       a file its arguments are appended to, one line a run
#   RP_STANDIN_PLANT     a chunk file copied into D first: another recording's
#                        chunk dropped in while the JVM starts
set -u
opts=${1#-agentpath:*=}
[ -n "${RP_STANDIN_LOG:-}" ] && echo "$@" >>"$RP_STANDIN_LOG"
dir= id=
IFS=, read -ra kv <<<"$opts"
for x in "${kv[@]}"; do
    case $x in
    dir=*) dir=${x#dir=} ;;
    recording=*) id=${x#recording=} ;;
    esac
done
[ -n "$dir" ] || { echo "standin_java.sh: no dir= in $1" >&2; exit 1; }
# The agent makes its directory if missing; the plant goes in after that.
[ -n "${RP_STANDIN_PLANT:-}" ] && { mkdir -p "$dir" && cp -p "$RP_STANDIN_PLANT" "$dir/" || exit 1; }
RP_TESTWRITER_RECORDING=$id exec "$RP_TESTWRITER" split "$dir" >/dev/null
