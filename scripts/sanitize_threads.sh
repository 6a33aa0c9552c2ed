#!/usr/bin/env bash
# ThreadSanitizer run (clang): configures the project with the `tsan` preset of CMakePresets.json
# (-fsanitize=thread at -O1) in build-tsan (or $ADAQP_TSAN_BUILD_DIR), builds the library, its
# tests and `adaqp`, then runs every place where threads share memory, every report fatal:
#   - the unit tests (the thread-backed communicator's ranks as threads, the codec and kernels)
#     and the layer tests (halo exchanges of ranks as threads);
#   - the multi-process tests under mpirun at 2 and 3 ranks: the exchanges' progress thread, the
#     width solve on a thread of its own;
#   - `adaqp train` at 2 ranks in each mode, AdaQP with the width solve inline and beside the
#     epoch (`communication.solve_schedule: background`, a solve every epoch), then a resume.
# Twice, because ThreadSanitizer cannot see both kinds of synchronisation at once:
#   1. threads: OpenMP off (OMP_THREAD_LIMIT=1: teams of 1 even where code asks for more, no OMPT
#      tool): the project's own threads against each other. libomp's barriers are invisible to
#      ThreadSanitizer, so a team of 2 would report its loops as races; and LLVM's Archer tool,
#      which makes them visible, also orders accesses of threads that merely run OpenMP regions at
#      different times (it hid a race planted between the background solve and the epoch).
#   2. openmp: teams of 2 (4 where code asks) with Archer (libarcher.so beside the libomp the
#      binaries link): the races inside OpenMP loops.
# libtorch, OpenMPI and libgomp are not instrumented; their own accesses are ignored
# (ignore_noninstrumented_modules). Not part of scripts/test.sh: 7.5 minutes from scratch on the
# 2-core machine, 3 of them the build (docs/building.md).
# Usage: scripts/sanitize_threads.sh [JOBS]   (parallel build jobs; default: number of cores)
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"
BUILD=${ADAQP_TSAN_BUILD_DIR:-$ADAQP_ROOT/build-tsan}
JOBS=$(nproc)
for arg in "$@"; do
  case $arg in
    -h | --help)
      sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      exit 0
      ;;
    *) [[ $arg =~ ^[1-9][0-9]*$ ]] || die "unknown argument '$arg' (usage: [JOBS])"; JOBS=$arg ;;
  esac
done
start=$(date +%s)
sanitizer_setup tsan "$BUILD"
cmake --build "$BUILD" -j "$JOBS" --target adaqp adaqp_unit_tests adaqp_nn_tests adaqp_mpi_tests
built=$(date +%s)
echo "sanitize_threads: build took $((built - start)) s"

libomp=$(ldd "$BUILD/tests/adaqp_unit_tests" | awk '$1 ~ /^libomp\.so/ {print $3; exit}')
[ -n "$libomp" ] || die "$BUILD/tests/adaqp_unit_tests links no libomp: not a clang OpenMP build"
archer=$(dirname "$libomp")/libarcher.so
[ -f "$archer" ] || die "no Archer beside $libomp ($archer): install the libomp package of" \
  "clang $(clang --version | sed -n 's/.*version \([0-9]*\).*/\1/p;q') (Debian: libomp-dev)"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1"

step() {
  echo "sanitize_threads ($pass): $*"
  "$@"
}
mpi=(mpirun --oversubscribe --bind-to none -x TSAN_OPTIONS -x OMP_TOOL -x OMP_TOOL_LIBRARIES
  -x OMP_NUM_THREADS -x OMP_THREAD_LIMIT)
# The paper's objective and no drift threshold: a solve every epoch, whatever the link's speed.
mapfile -t solves < <(set_pairs communication.objective=normalized communication.resolve_drift=0)
train() { step "${mpi[@]}" -np 2 "$ADAQP_BIN" train "${job[@]}" "$@"; }

# run_pass NAME TEAM LIMIT [UNIT_FILTER]: every step above, OpenMP teams of TEAM threads, at most
# LIMIT where code asks for more.
run_pass() {
  pass=$1
  export OMP_NUM_THREADS=$2 OMP_THREAD_LIMIT=$3
  step "$BUILD/tests/adaqp_unit_tests" --gtest_brief=1 "--gtest_filter=${4:-*}"
  step "$BUILD/tests/adaqp_nn_tests" --gtest_brief=1
  step "${mpi[@]}" -np 2 "$BUILD/tests/adaqp_mpi_tests" --gtest_brief=1
  step "${mpi[@]}" -np 3 "$BUILD/tests/adaqp_mpi_tests" --gtest_brief=1
  local out=$tmp/$pass mode
  mapfile -t job < <(synthetic_graph 1500 seed=5; gnn_model 2 16; set_pairs partition.parts=2 \
    "training.threads=$2" training.eval_every=5 output.log_level=warn "partition.dir=$out/parts")
  for mode in vanilla overlap; do
    train --set "communication.mode=$mode" --set training.epochs=12 --set "output.dir=$out/$mode"
  done
  for mode in quant adaqp; do
    train "${solves[@]}" --set "communication.mode=$mode" --set training.epochs=12 \
      --set "output.dir=$out/$mode"
  done
  local background
  mapfile -t background < <(set_pairs communication.mode=adaqp communication.exchange=cover \
    communication.solve_schedule=background training.checkpoint_every=4 "output.dir=$out/bg")
  train "${solves[@]}" "${background[@]}" --set training.epochs=12
  train "${solves[@]}" "${background[@]}" --set training.epochs=16 --resume
}
# The one unit test that needs a team of 4 runs in the second pass.
OMP_TOOL=disabled OMP_TOOL_LIBRARIES='' run_pass threads 1 1 \
  -Spmm.LargeProductUsesThreadsAndStaysExact
OMP_TOOL=enabled OMP_TOOL_LIBRARIES=$archer run_pass openmp 2 4
echo "sanitize_threads: both passes passed, no ThreadSanitizer reports" \
  "($(($(date +%s) - built)) s of tests, $(($(date +%s) - start)) s in all)"
