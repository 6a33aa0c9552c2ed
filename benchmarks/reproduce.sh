#!/usr/bin/env bash
# One command for the reference's throughput, breakdown and accuracy tables and their plots
# (benchmarks/reproduce/reproduce.py says what is measured and how):
#
#   benchmarks/reproduce.sh [--profile smoke|quick|full|gpu|gpu-smoke] [--out DIR] [--resume]
#                           [--timeout S]
#
# Set-up and build first (scripts/setup.sh), then the runs: CPU profiles run one rank per host of
# the rate-limited virtual cluster (scripts/vcluster.sh, so they need root) for throughput; gpu
# profiles run every rank on the machine's GPU, NCCL between them (no root needed), plus PyTorch
# Geometric on the same graph; accuracy runs under plain mpirun. On an offline GPU machine, skip
# the set-up: bash .gpu/on-device.sh python3 benchmarks/reproduce/reproduce.py --profile gpu
# --bin "$B/src/adaqp" --shared <datasets> --python python3 (cuda/GPU-CHECKLIST.md). Real datasets come from $ADAQP_SHARED_DATASETS (default ../shared/datasets beside the
# repository); missing ones are skipped with a message. Output (default runs/reproduce-PROFILE):
# throughput.csv, accuracy.csv, accuracy_summary.csv, accuracy_curves.csv, bits.csv,
# calibration.csv, meta.json, results.md and PNG plots; every run's directory and log under runs/.
# Profiles: smoke about 1 minute, quick about 15, full about 40 on a 2-core machine.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/adaqp.sh"
# The options before anything is installed or built.
[[ " $* " != *" -h "* && " $* " != *" --help "* ]] ||
  exec python3 "$ADAQP_ROOT/benchmarks/reproduce/reproduce.py" --help
if ((EUID != 0)) && [[ " $* " != *" --profile gpu"* && " $* " != *" --profile=gpu"* ]]; then
  echo "error: benchmarks/reproduce.sh needs root for the virtual cluster's network namespaces" >&2
  exit 2
fi
python3 "$ADAQP_ROOT/benchmarks/reproduce/reproduce.py" --check-options "$@"
"$ADAQP_ROOT/scripts/setup.sh"
# The binary setup.sh has just built, whatever ADAQP_BIN says.
exec python3 "$ADAQP_ROOT/benchmarks/reproduce/reproduce.py" --bin "$ADAQP_BUILD_DIR/src/adaqp" \
  --shared "${ADAQP_SHARED_DATASETS:-$ADAQP_ROOT/../shared/datasets}" "$@"
