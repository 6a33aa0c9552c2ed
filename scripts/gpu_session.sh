#!/usr/bin/env bash
# One device call's worth of GPU work, for a session lent a GPU (15 minutes of device time in all):
# every group of scripts/gpu_checks.sh, then the `gpu` reproduction profile (the four modes at W=2
# and 4 on the one GPU, PyG beside them, Cora accuracy), then TF32 against FP32 on Cora
# (benchmarks/precision/run.sh), each in the time left. Run on the GPU machine
# through the shared on-device script, which builds the project and exports B:
#   bash .gpu/on-device.sh bash scripts/gpu_session.sh [SECONDS]
# SECONDS: what this script may take (default 500: a 600-second call, the build included). The
# results come back through $OUT as at most 6 files, the device tool's limit being 8:
# checks.txt (the checks' summary), checks-logs.tgz (every check's log), reproduce.txt (the tail of
# the reproduction's output), reproduce.md and reproduce.tgz (its report, CSV files, plots and
# runs, without the graph, partitions and parameter files), precision.txt. Exit status: the
# checks'.
set -uo pipefail
: "${B:?the CUDA build directory}" "${OUT:?the folder that comes back from the device machine}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
budget=${1:-500}
work=/tmp/adaqp-gpu-session
rm -rf "$work"
mkdir -p "$work/checks"
export ADAQP_SHARED_DATASETS=${ADAQP_SHARED_DATASETS:-$ROOT/.gpu/datasets}
OUT="$work/checks" bash "$ROOT/scripts/gpu_checks.sh" kernels nccl train 2>&1 | tee "$OUT/checks.txt"
checks=${PIPESTATUS[0]}
tar -czf "$OUT/checks-logs.tgz" -C "$work" checks
# What is left, less half a minute to pack the results.
left=$((budget - SECONDS - 30))
if ((left < 120)); then
  echo "gpu_session: ${left} s left after the checks; the reproduction needs more" |
    tee "$OUT/reproduce.txt"
  exit "$checks"
fi
echo "gpu_session: the gpu reproduction profile, at most ${left} s"
timeout "$left" python3 "$ROOT/benchmarks/reproduce/reproduce.py" --profile gpu \
  --bin "$B/src/adaqp" --shared "$ADAQP_SHARED_DATASETS" --python python3 \
  --out "$work/reproduce" >"$work/reproduce.log" 2>&1
echo "gpu_session: reproduction exit $?" >>"$work/reproduce.log"
tail -60 "$work/reproduce.log" | tee "$OUT/reproduce.txt"
[[ -f "$work/reproduce/results.md" ]] && cp "$work/reproduce/results.md" "$OUT/reproduce.md"
tar -czf "$OUT/reproduce.tgz" -C "$work" --exclude=reproduce/graph --exclude=reproduce/partitions \
  --exclude="*.bin" reproduce reproduce.log
left=$((budget - SECONDS - 10))
if ((left >= 60)); then
  timeout "$left" env ADAQP_BIN="$B/src/adaqp" DATASETS=cora SEEDS=3 \
    bash "$ROOT/benchmarks/precision/run.sh" "$work/precision" >"$OUT/precision.txt" 2>&1
  echo "gpu_session: precision exit $?" >>"$OUT/precision.txt"
fi
exit "$checks"
