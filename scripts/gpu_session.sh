#!/usr/bin/env bash
# A GPU session's work (15 minutes of device time in all), in the device tool's calls of at most
# 10 minutes: `checks` runs every group of scripts/gpu_checks.sh; `bench` the `gpu` reproduction
# profile (the four modes at W=2 and 4 on the one GPU, PyG beside them, Cora accuracy), then TF32
# against FP32 on Cora (benchmarks/precision/run.sh); `all` (the default) both, each started only
# if the time left allows it. Run on the GPU machine through the shared on-device script, which
# builds the project (first call on a machine) and exports B, with the call's deadline:
#   export ADAQP_DEADLINE=$(($(date +%s) + 570)); bash .gpu/on-device.sh bash scripts/gpu_session.sh
# and, when `all` left the benchmarks unfinished, a second call with `bench` at once, while the
# machine keeps the build and the reproduction's finished runs (it resumes them). Without
# ADAQP_DEADLINE the script allows itself 500 s.
# Results come back through $OUT (at most 7 files; the device tool brings back 8): checks.txt (the
# checks' summary), checks-logs.tgz (every check's log, packed however the script ends),
# reproduce.log (the reproduction's output as it runs), reproduce.md and reproduce.tgz (its report,
# CSV files, plots and runs, without the graph, partitions and parameter files), precision.txt.
# Exit status: the checks' (0 when they did not run).
set -uo pipefail
: "${B:?the CUDA build directory}" "${OUT:?the folder that comes back from the device machine}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
part=${1:-all}
[[ $part == all || $part == checks || $part == bench ]] ||
  { echo "usage: gpu_session.sh [all|checks|bench]" >&2; exit 2; }
deadline=${ADAQP_DEADLINE:-$(($(date +%s) + 500))}
left() { echo $((deadline - $(date +%s))); }
work=/tmp/adaqp-gpu-session
mkdir -p "$work"
export ADAQP_SHARED_DATASETS=${ADAQP_SHARED_DATASETS:-$ROOT/.gpu/datasets}
checks=0
if [[ $part != bench ]]; then
  rm -rf "$work/checks"
  mkdir -p "$work/checks"
  trap 'tar -czf "$OUT/checks-logs.tgz" -C "$work" checks' EXIT
  # A hung step must leave time for the rest: each NCCL step and training run is bounded, and the
  # checks together by the deadline less a minute.
  OUT="$work/checks" ADAQP_NCCL_TIMEOUT=${ADAQP_NCCL_TIMEOUT:-90} \
    ADAQP_RUN_TIMEOUT=${ADAQP_RUN_TIMEOUT:-90} timeout "$(($(left) - 60))" \
    bash "$ROOT/scripts/gpu_checks.sh" kernels nccl train 2>&1 | tee "$OUT/checks.txt"
  checks=${PIPESTATUS[0]}
fi
[[ $part == checks ]] && exit "$checks"
# The gpu profile takes about 6 minutes on an H200 machine; its finished runs are kept, so a
# start with less time still makes progress for the next call.
if (($(left) < 120)); then
  echo "gpu_session: $(left) s left; the benchmarks need more (run: gpu_session.sh bench)" |
    tee -a "$OUT/checks.txt"
  exit "$checks"
fi
echo "gpu_session: the gpu reproduction profile, at most $(($(left) - 30)) s"
timeout "$(($(left) - 30))" python3 "$ROOT/benchmarks/reproduce/reproduce.py" --profile gpu \
  --bin "$B/src/adaqp" --shared "$ADAQP_SHARED_DATASETS" --python python3 --resume \
  --timeout 240 --out "$work/reproduce" >"$OUT/reproduce.log" 2>&1
echo "gpu_session: reproduction exit $?" | tee -a "$OUT/reproduce.log"
[[ -f "$work/reproduce/results.md" ]] && cp "$work/reproduce/results.md" "$OUT/reproduce.md"
tar -czf "$OUT/reproduce.tgz" -C "$work" --exclude=reproduce/graph --exclude=reproduce/partitions \
  --exclude="*.bin" reproduce
if (($(left) >= 70)); then
  timeout "$(($(left) - 10))" env ADAQP_BIN="$B/src/adaqp" DATASETS=cora SEEDS=3 \
    bash "$ROOT/benchmarks/precision/run.sh" "$work/precision" >"$OUT/precision.txt" 2>&1
  echo "gpu_session: precision exit $?" >>"$OUT/precision.txt"
fi
exit "$checks"
