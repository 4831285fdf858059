#!/bin/sh
# tests/agent/split_debug.sh OUTDIR LIB_WITH_BUILD_ID LIB_WITHOUT_BUILD_ID
#
# Makes the stripped libraries and separate debug files test_symbols reads, the
# way distributions ship them (objcopy --only-keep-debug, then --strip-all with a
# .gnu_debuglink):
#   libsymtest_bid.so + libsymtest_bid.debug      matched by build id
#   libsymtest_crc.so + libsymtest_crc.debug      no build id: matched by CRC32
#   libsymtest_badcrc.so + libsymtest_badcrc.debug  the link's CRC is another
#                                                 file's: the debug file next to
#                                                 it must be refused
set -eu
out=$1 bid=$2 nobid=$3
objcopy --only-keep-debug "$bid" "$out/libsymtest_bid.debug"
objcopy --strip-all --add-gnu-debuglink="$out/libsymtest_bid.debug" "$bid" \
    "$out/libsymtest_bid.so"
objcopy --only-keep-debug "$nobid" "$out/libsymtest_crc.debug"
objcopy --strip-all --add-gnu-debuglink="$out/libsymtest_crc.debug" "$nobid" \
    "$out/libsymtest_crc.so"
mkdir -p "$out/symtest_other"
printf 'not the debug file\n' >"$out/symtest_other/libsymtest_badcrc.debug"
objcopy --strip-all --add-gnu-debuglink="$out/symtest_other/libsymtest_badcrc.debug" \
    "$nobid" "$out/libsymtest_badcrc.so"
cp "$out/libsymtest_crc.debug" "$out/libsymtest_badcrc.debug"
