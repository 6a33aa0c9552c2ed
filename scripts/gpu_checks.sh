#!/usr/bin/env bash
# The checks that need a GPU, on a machine with one and a CUDA build of the project in $B (for
# example through ../shared/gpu/on-device.sh, which builds it and exports B):
#   1. the CUDA kernels against the CPU ones (quantizer, block codec, dropout, gather/scatter,
#      SpMM) and libtorch on the device;
#   2. the NCCL communicator at 1, 2 and 4 ranks on the GPU(s) (a distinct NCCL_HOSTID per rank,
#      so that ranks may share a GPU);
#   3. training on the GPU against the CPU (tests/cli/gpu_train.sh).
# Every step runs even when an earlier one fails; the exit status says whether all passed. Logs
# go to $OUT (default /tmp/adaqp-gpu-checks).
set -uo pipefail
: "${B:?the CUDA build directory}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-/tmp/adaqp-gpu-checks}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failed=()
step() {
  local name=$1
  shift
  local t0=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then
    echo "pass: $name ($((SECONDS - t0)) s)"
  else
    echo "FAIL: $name ($((SECONDS - t0)) s): tail of $out/$name.log"
    tail -25 "$out/$name.log"
    failed+=("$name")
  fi
}
nvidia-smi -L
step kernels "$B/tests/adaqp_unit_tests" --gtest_filter='*Cuda*'
step nn_kernels "$B/tests/adaqp_nn_tests" --gtest_filter='*Cuda*:BlockCodec*:ScatterAdd*'
for np in 1 2 4; do
  # shellcheck disable=SC2016
  step "nccl_np$np" timeout 300 mpirun --oversubscribe --bind-to none -np "$np" bash -c \
    'NCCL_HOSTID=adaqp-check-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$B/tests/adaqp_mpi_tests" \
    --gtest_filter='Nccl*'
done
datasets=${ADAQP_SHARED_DATASETS:-}
[[ -n $datasets || ! -d $ROOT/.gpu/datasets ]] || datasets=$ROOT/.gpu/datasets
step gpu_train env ADAQP_BIN="$B/src/adaqp" ADAQP_SOURCE_DIR="$ROOT" \
  ADAQP_SHARED_DATASETS="$datasets" ADAQP_PYTHON="${ADAQP_PYTHON:-python3}" \
  bash "$ROOT/tests/cli/gpu_train.sh"
if ((${#failed[@]})); then
  echo "gpu checks: ${#failed[@]} failed: ${failed[*]}"
  exit 1
fi
echo "gpu checks: all passed"
