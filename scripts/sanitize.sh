#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run (clang): configures the project with the
# `sanitize` preset of CMakePresets.json (-fsanitize=address,undefined at -O0) in build-sanitize (or
# $ADAQP_ASAN_BUILD_DIR), builds what the scope needs, then runs it with every report fatal
# (halt_on_error, -fno-sanitize-recover=all). clang, not gcc: at -O0 with the sanitizers it builds
# the core's scope in about half the time (70 against 130 s on the 2-core machine) and its tests
# run as fast (81 against 77 s).
#   --core (what scripts/test.sh, and so CI, runs): the library without libtorch (adaqp_core): the
#     unit tests (loaders, partition store, quantizer and block codec, kernels, the thread-backed
#     communicator's ranks as threads, solver) and the replays of the fuzz targets that need no
#     libtorch, each on its corpus and mutants and with its expected-error list (ctest fuzz_*);
#   full (default): also the layer/trainer tests (adaqp_nn_tests, the halo exchanger on ranks as
#     threads), the multi-process tests at 2 ranks (adaqp_mpi_tests under mpirun -np 2), the
#     checkpoint fuzz replay, and a 2-rank `adaqp train` with checkpoints, then a --resume of it.
# Exits non-zero on the first failing test or sanitizer report.
# Leak detection is off (detect_leaks=0): OpenMPI and libtorch keep process-lifetime allocations
# that LeakSanitizer reports as leaks, and neither can be instrumented here. The CUDA kernels and
# the benchmarks are not built (no instrumentation reaches device code; benchmarks add no coverage).
# Usage: scripts/sanitize.sh [--core] [JOBS]   (parallel build jobs; default: number of cores)
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"
BUILD=${ADAQP_ASAN_BUILD_DIR:-$ADAQP_ROOT/build-sanitize}
scope=full
JOBS=$(nproc)
for arg in "$@"; do
  case $arg in
    --core) scope=core ;;
    -h | --help)
      sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      exit 0
      ;;
    *) [[ $arg =~ ^[1-9][0-9]*$ ]] || die "unknown argument '$arg' (usage: [--core] [JOBS])"; JOBS=$arg ;;
  esac
done
core_fuzz=(job_config ogb_loader ogb_binary_loader ogb_hetero_loader numpy_loader graphsaint_loader
  partition_loader)
start=$(date +%s)

# A directory configured by another compiler (gcc, the preset's before) starts afresh: CMake would
# drop its cache mid-configure, and with it the command line's variables.
if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++$' "$BUILD/CMakeCache.txt"; then
  rm -rf "$BUILD"
fi
# The flags are the preset's (-O0: sanitized code compiles in half the time it takes at -O1, which
# keeps the CI's run short; the tests run slower, and a few seconds matter less than the build).
sanitizer_setup sanitize "$BUILD"
targets=(adaqp_unit_tests "${core_fuzz[@]/#/fuzz_replay_}")
fuzz_tests="^fuzz_($(IFS='|'; echo "${core_fuzz[*]}"))\$"
if [ "$scope" = full ]; then
  targets+=(adaqp adaqp_nn_tests adaqp_mpi_tests fuzz_replay_checkpoint)
  fuzz_tests="^fuzz_"
fi
cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}"
built=$(date +%s)
echo "sanitize ($scope): build took $((built - start)) s"

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=0:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export OMP_NUM_THREADS=1

step() {
  echo "sanitize: $*"
  "$@"
}
fuzz=(ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -R "$fuzz_tests")
if [ "$scope" = core ]; then
  # The unit tests beside the fuzz replays, these on every core too (they outlast the unit tests:
  # 65-70 s of tests against 81-93 s one replay at a time, alternated on the 2-core machine).
  # Loading Coauthor Physics's 500,000 CSV lines takes 30 s at -O0 under ASan and adds nothing the
  # other datasets' loads do not cover; the NumPy round trip of several read blocks (4.3M edges,
  # 10 s here) runs the small loads' code at other offsets, whose values the Release run checks
  # exactly.
  step "$BUILD/tests/adaqp_unit_tests" --gtest_brief=1 \
    --gtest_filter=-SharedDatasets.CoauthorPhysics:NumpyLoader.ArraysOfSeveralBlocks* &
  unit=$!
  # A failed replay ends the script: the unit tests beside it go with it.
  step "${fuzz[@]}" --parallel "$JOBS" || {
    rc=$?
    kill "$unit" 2>/dev/null
    wait "$unit" 2>/dev/null
    exit "$rc"
  }
  wait "$unit"
  echo "sanitize (core): all passed, no sanitizer reports ($(($(date +%s) - built)) s of tests," \
    "$(($(date +%s) - start)) s in all)"
  exit 0
fi
step "$BUILD/tests/adaqp_unit_tests" --gtest_brief=1
step "${fuzz[@]}" --parallel "$JOBS"
step "$BUILD/tests/adaqp_nn_tests" --gtest_brief=1
step mpirun --oversubscribe -np 2 "$BUILD/tests/adaqp_mpi_tests" --gtest_brief=1
mapfile -t job < <(synthetic_graph 1000; set_pairs partition.parts=2 training.threads=1 \
  training.checkpoint_every=3 "output.dir=$tmp/run" output.log_level=warn)
step mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=4
step mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=8 --resume
echo "sanitize (full): all passed, no sanitizer reports ($(($(date +%s) - built)) s of tests," \
  "$(($(date +%s) - start)) s in all)"
