#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer (the `fuzz` preset of CMakePresets.json) in build-fuzz (or
# $ADAQP_FUZZ_BUILD_DIR), then runs each target for SECONDS seconds (default 60) starting from its
# seed corpus fuzz/corpus/<target>/. New inputs go to a scratch corpus, never into the
# repository. Exits non-zero if any target crashes (a sanitizer report, an exception other than
# adaqp::Error, a timeout of 10 s on one input, or out of memory); the crashing input is left in
# build-fuzz/crashes/<target>/ and its path printed.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: job_config ogb_loader ogb_binary_loader
# ogb_hetero_loader numpy_loader graphsaint_loader partition_loader checkpoint; default: all). The
# ordinary build replays every target's corpus and seeded mutants under ctest (fuzz/CMakeLists.txt)
# without libFuzzer.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${ADAQP_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SECONDS_EACH=${1:-60}
shift || true
# libFuzzer reads a -max_total_time that is not a number as 0: no limit at all.
[[ $SECONDS_EACH =~ ^[1-9][0-9]*$ ]] ||
  { echo "usage: fuzz.sh [SECONDS] [TARGET...] (SECONDS: a positive integer, got '$SECONDS_EACH')" >&2; exit 2; }
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(job_config ogb_loader ogb_binary_loader ogb_hetero_loader numpy_loader
  graphsaint_loader partition_loader checkpoint)

mkdir -p "$BUILD"
# $ADAQP_PYTHON, when set, replaces the preset's .venv/bin/python.
cmake -S "$ROOT" --preset fuzz -B "$BUILD" ${ADAQP_PYTHON:+"-DADAQP_PYTHON=$ADAQP_PYTHON"} \
  >"$BUILD/configure.log" 2>&1 || { cat "$BUILD/configure.log"; exit 1; }
cmake --build "$BUILD" --target "${TARGETS[@]/#/fuzz_}"

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=()
for t in "${TARGETS[@]}"; do
  seeds="$ROOT/fuzz/corpus/$t"
  work="$BUILD/corpus/$t"
  crashes="$BUILD/crashes/$t"
  mkdir -p "$work" "$crashes"
  echo "fuzz: $t for ${SECONDS_EACH} s (seeds: $seeds)"
  if "$BUILD/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$crashes/" "$work" "$seeds" \
      >"$BUILD/$t.log" 2>&1; then
    echo "fuzz: $t: no crash ($(grep -E '^stat::number_of_executed_units' "$BUILD/$t.log" |
      awk '{print $2}') inputs)"
  else
    tail -n 40 "$BUILD/$t.log"
    echo "fuzz: $t: CRASH, input in $crashes/" >&2
    failed+=("$t")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: crashes in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all targets ran ${SECONDS_EACH} s without a crash"
