#!/usr/bin/env bash
# The checks that need a GPU, on a machine with one and a CUDA build of the project in $B (for
# example through ../shared/gpu/on-device.sh, which builds it and exports B):
#   1. the CUDA kernels against the CPU ones (quantizer, block codec, dropout, gather/scatter,
#      SpMM) and libtorch on the device;
#   2. the NCCL communicator at 1, 2 and 4 ranks on the GPU(s) (a distinct NCCL_HOSTID per rank,
#      so that ranks may share a GPU);
#   3. training on the GPU against the CPU (tests/cli/gpu_train.sh), and a rank killed during GPU
#      training (tests/cli/kill_rank.sh on cuda).
# Usage: gpu_checks.sh [kernels] [nccl] [train] (default: all three), so that each fits in one
# call of the device tool (at most 10 minutes). Every step runs even when an earlier one fails;
# the exit status says whether all passed. A GPU step that skips a test fails: on the GPU machine
# nothing may skip (but the NCCL tests that need 2 ranks, at 1 rank). Logs go to $OUT (default
# /tmp/adaqp-gpu-checks). ADAQP_NCCL_TIMEOUT (default 300 s) bounds each NCCL step, so that a hang
# leaves device time for the rest.
set -uo pipefail
: "${B:?the CUDA build directory}"
groups=("$@")
((${#groups[@]})) || groups=(kernels nccl train)
for g in "${groups[@]}"; do
  [[ $g == kernels || $g == nccl || $g == train ]] || {
    echo "gpu_checks: unknown step group '$g' (kernels, nccl, train)" >&2
    exit 2
  }
done
wanted() { [[ " ${groups[*]} " == *" $1 "* ]]; }
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"
out=${OUT:-/tmp/adaqp-gpu-checks}
mkdir -p "$out"
failed=()
# step NAME SKIPS_ALLOWED COMMAND...: runs COMMAND, logging to $OUT/NAME.log.
step() {
  local name=$1 skips_allowed=$2
  shift 2
  local t0=$SECONDS status=pass
  "$@" >"$out/$name.log" 2>&1 || status=FAIL
  if [[ $status == pass && $skips_allowed == no ]] && grep -q '\[  SKIPPED \]' "$out/$name.log"; then
    status="FAIL (tests skipped)"
  fi
  if [[ $status == pass ]]; then
    echo "pass: $name ($((SECONDS - t0)) s)"
  else
    echo "$status: $name ($((SECONDS - t0)) s): tail of $out/$name.log"
    tail -25 "$out/$name.log"
    failed+=("$name")
  fi
}
nvidia-smi -L
if wanted kernels; then
  # The CPU codec's suites too: BlockCodecCuda compares the GPU with the CPU codec, whose vector
  # paths on the device machine's host (AVX-512 there) are then checked against their formulas.
  step kernels no "$B/tests/adaqp_unit_tests" --gtest_filter='*Cuda*:Quant*:Philox*'
  step nn_kernels no "$B/tests/adaqp_nn_tests" --gtest_filter='*Cuda*:BlockCodec*:ScatterAdd*'
  # On the H200 of 2026-12-04 three Quant tests failed there (a subnormal step computed as 0) and
  # passed on every development machine, AVX-512 ones included: the same suites in a process of
  # their own (no CUDA test before them) and on the narrower vector paths, and the compilers and
  # flags of the build, tell the process's state, the AVX-512 paths and the build apart.
  step quant_alone no "$B/tests/adaqp_unit_tests" --gtest_filter='Quant*'
  for isa in avx2 scalar; do
    step "quant_$isa" no env ADAQP_MAX_CPU_ISA="$isa" "$B/tests/adaqp_unit_tests" \
      --gtest_filter='Quant*'
  done
  {
    c++ --version | head -1
    grep -E '^CMAKE_(CXX|CUDA)_(COMPILER|FLAGS)[A-Z_]*:' "$B/CMakeCache.txt"
    env | grep -E '^(CXX|C|CPP|LD|NVCC_)?FLAGS=|^(CXX|C|LD)FLAGS=' || true
  } >"$out/compiler.log" 2>&1
fi
if wanted nccl; then
  for np in 1 2 4; do
    skips=no
    ((np > 1)) || skips=yes
    # shellcheck disable=SC2016
    step "nccl_np$np" "$skips" timeout "${ADAQP_NCCL_TIMEOUT:-300}" \
      mpirun --oversubscribe --bind-to none -np "$np" \
      bash -c 'NCCL_HOSTID=adaqp-check-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' \
      "$B/tests/adaqp_mpi_tests" --gtest_filter='Nccl*'
  done
fi
if wanted train; then
  datasets=${ADAQP_SHARED_DATASETS:-}
  [[ -n $datasets || ! -d $ADAQP_ROOT/.gpu/datasets ]] || datasets=$ADAQP_ROOT/.gpu/datasets
  # One run may take at most ADAQP_RUN_TIMEOUT seconds (default here 120: a hung run must not
  # use up the device call).
  step gpu_train yes env ADAQP_BIN="$B/src/adaqp" ADAQP_SOURCE_DIR="$ADAQP_ROOT" \
    ADAQP_SHARED_DATASETS="$datasets" ADAQP_PYTHON="${ADAQP_PYTHON:-python3}" \
    ADAQP_RUN_TIMEOUT="${ADAQP_RUN_TIMEOUT:-120}" bash "$ADAQP_ROOT/tests/cli/gpu_train.sh"
  step kill_rank_cuda no env ADAQP_BIN="$B/src/adaqp" ADAQP_KILL_RANK_DEVICE=cuda \
    timeout 300 bash "$ADAQP_ROOT/tests/cli/kill_rank.sh"
fi
if ((${#failed[@]})); then
  echo "gpu checks: ${#failed[@]} failed: ${failed[*]}"
  exit 1
fi
echo "gpu checks: all passed"
