#!/usr/bin/env bash
# Prepares a GPU run of this project on an offline GPU machine (run here, on a connected machine,
# from the repository root): ../shared/gpu/prepare.sh's Debian packages into .gpu/debs plus the
# ones this project needs beyond them (libzip, nlohmann-json, PT-Scotch), and the small shared
# datasets the GPU checks and benchmarks train on (Cora, CiteSeer, Coauthor Physics) into
# .gpu/datasets. Then, on the GPU machine, with .gpu/ carried beside the sources:
#   bash .gpu/on-device.sh bash scripts/gpu_checks.sh kernels nccl   (then: ... train; see
#   cuda/GPU-CHECKLIST.md)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${ADAQP_SHARED:-$ROOT/../shared}
cd "$ROOT"
bash "$SHARED/gpu/prepare.sh"
(cd .gpu/debs && apt-get download libzip-dev libzip4 nlohmann-json3-dev libptscotch-dev \
  libptscotch-7.0 libscotch-dev libscotch-7.0)
mkdir -p .gpu/datasets
for ds in cora citeseer coauthor-physics; do
  [[ -d "$SHARED/datasets/$ds" ]] && cp -r "$SHARED/datasets/$ds" .gpu/datasets/
done
echo "gpu_prepare: $(du -sh .gpu | cut -f1) in .gpu/ (carry it; ADAQP_SHARED_DATASETS=\$PWD/.gpu/datasets on the GPU machine)"
