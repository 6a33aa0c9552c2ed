#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run (gcc): configures the project with the
# `sanitize` preset of CMakePresets.json (-fsanitize=address,undefined at -O1) in build-sanitize (or
# $ADAQP_ASAN_BUILD_DIR), builds it, then runs, with every report fatal (halt_on_error,
# -fno-sanitize-recover=all):
#   - the unit tests (adaqp_unit_tests) and the layer/trainer tests (adaqp_nn_tests);
#   - the multi-process tests at 2 ranks (adaqp_mpi_tests under mpirun -np 2);
#   - a 2-rank `adaqp train` with checkpoints, then a 2-rank --resume of it.
# Exits non-zero on the first failing test or sanitizer report.
# Leak detection is off (detect_leaks=0): OpenMPI and libtorch keep process-lifetime allocations
# that LeakSanitizer reports as leaks, and neither can be instrumented here. The CUDA kernels and
# the benchmarks are not built (no instrumentation reaches device code; benchmarks add no coverage).
# Usage: scripts/sanitize.sh [JOBS]   (parallel build jobs; default: number of cores)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${ADAQP_ASAN_BUILD_DIR:-$ROOT/build-sanitize}
JOBS=${1:-$(nproc)}
start=$(date +%s)

mkdir -p "$BUILD"
# The flags are the preset's (-O1: sanitized code then compiles in about 2x the time of the normal
# -O3 build; at -O3, 4x). $ADAQP_PYTHON, when set, replaces the preset's .venv/bin/python.
cmake -S "$ROOT" --preset sanitize -B "$BUILD" ${ADAQP_PYTHON:+"-DADAQP_PYTHON=$ADAQP_PYTHON"} \
  >"$BUILD/configure.log" 2>&1 || { cat "$BUILD/configure.log"; exit 1; }
cmake --build "$BUILD" -j "$JOBS" --target adaqp adaqp_unit_tests adaqp_nn_tests adaqp_mpi_tests
built=$(date +%s)
echo "sanitize: build took $((built - start)) s"

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=0:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export ADAQP_SOURCE_DIR="$ROOT" ADAQP_BIN="$BUILD/src/adaqp"
export ADAQP_SHARED_DATASETS=${ADAQP_SHARED_DATASETS:-$ROOT/../shared/datasets}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step() {
  echo "sanitize: $*"
  "$@"
}
step "$BUILD/tests/adaqp_unit_tests" --gtest_brief=1
step "$BUILD/tests/adaqp_nn_tests" --gtest_brief=1
step mpirun --oversubscribe -np 2 "$BUILD/tests/adaqp_mpi_tests" --gtest_brief=1
job=(--set dataset.format=synthetic --set dataset.synthetic.num_nodes=1000 --set
     partition.parts=2 --set training.threads=1 --set training.checkpoint_every=3 --set
     "output.dir=$tmp/run" --set output.log_level=warn)
step mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=4
step mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=8 --resume
echo "sanitize: all passed, no sanitizer reports ($(($(date +%s) - built)) s of tests," \
  "$(($(date +%s) - start)) s in all)"
