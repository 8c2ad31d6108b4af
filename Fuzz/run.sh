#!/bin/bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs each for
# a while (docs/fuzzing.md).
#
#   Fuzz/run.sh [--seconds N] [--jobs N] [--build-only] [--replay] [TARGET...]
#
#   TARGET        json flow pattern session config dbus-args (default: all)
#   --seconds N   how long each target runs (default: $FUZZ_SECONDS, else 600)
#   --build-only  build, do not run
#   --replay      no fuzzing build: run the seed corpus (and regression inputs)
#                 through the usual debug build's targets, seconds in all
#
# Each target starts from its corpus in Fuzz/corpus/<target>/ (seeds and kept
# regression inputs, read-only here) and a working corpus in
# .build/fuzz/work/<target>/ that grows across runs. A crash, a leak, a
# timeout (10 s for one input) or a broken invariant stops the target; its
# input is written to .build/fuzz/crashes/<target>/ and the script exits 1
# after the other targets ran. Keep such an input as
# Fuzz/corpus/<target>/regression-<what> once it is fixed.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
ALL="json flow pattern session config dbus-args"
SECONDS_EACH=${FUZZ_SECONDS:-600}
BUILD_ONLY=0
REPLAY=0
TARGETS=()
SWIFT=${SWIFT:-swift}
BUILD=$ROOT/.build/fuzz

while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) SECONDS_EACH=${2:?--seconds needs a number}; shift ;;
        --build-only) BUILD_ONLY=1 ;;
        --replay) REPLAY=1 ;;
        -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 64 ;;
        *) TARGETS+=("$1") ;;
    esac
    shift
done
[ ${#TARGETS[@]} -gt 0 ] || read -r -a TARGETS <<<"$ALL"
cd "$ROOT"

# The Swift runtime's crash report would otherwise stop each crash for
# seconds; libFuzzer prints its own.
export SWIFT_BACKTRACE=enable=no

if [ "$REPLAY" -eq 1 ]; then
    bin=$("$SWIFT" build --show-bin-path)
    for t in "${TARGETS[@]}"; do
        [ -x "$bin/fuzz-$t" ] || { echo "fuzz: $bin/fuzz-$t is missing: swift build first" >&2; exit 1; }
        "$bin/fuzz-$t" "Fuzz/corpus/$t" || { echo "fuzz: $t: an input of Fuzz/corpus/$t fails" >&2; exit 1; }
    done
    exit 0
fi

products=()
for t in "${TARGETS[@]}"; do products+=(--product "fuzz-$t"); done
echo "fuzz: building ${TARGETS[*]} (release, libFuzzer, AddressSanitizer) in $BUILD"
start=$(date +%s)
# --sanitize fuzzer makes SwiftPM link libFuzzer's main; -sanitize=fuzzer,address
# in one flag instruments for coverage and ASan; FUZZING drops the targets'
# replay main; -enable-testing lets them reach the engine's internal parser.
for p in "${products[@]}"; do
    [ "$p" = --product ] && continue
    "$SWIFT" build --build-path "$BUILD" -c release --sanitize fuzzer \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -enable-testing --product "$p" 2>&1 |
        grep -v -e 'Cannot export local symbol' -e '^\[' || true
    [ -x "$BUILD/release/$p" ] || { echo "fuzz: building $p failed" >&2; exit 1; }
done
echo "fuzz: built in $(( $(date +%s) - start )) s"
[ "$BUILD_ONLY" -eq 0 ] || exit 0

failed=()
for t in "${TARGETS[@]}"; do
    work=$BUILD/work/$t crashes=$BUILD/crashes/$t
    mkdir -p "$work" "$crashes"
    echo "fuzz: $t for ${SECONDS_EACH} s"
    log=$BUILD/$t.log
    "$BUILD/release/fuzz-$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$crashes/" "$work" "Fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|^stat::peak_rss_mb|INITED' "$log" | sed "s/^/fuzz: $t: /"
    if [ "$rc" -ne 0 ]; then
        failed+=("$t")
        echo "fuzz: $t FAILED (exit $rc); the end of its log ($log):"
        grep -v -e '^    #' "$log" | tail -n 25 | sed 's/^/    /'
        ls "$crashes" | sed "s|^|    input: $crashes/|"
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}"
    exit 1
fi
echo "fuzz: every target ran ${SECONDS_EACH} s without a finding"
