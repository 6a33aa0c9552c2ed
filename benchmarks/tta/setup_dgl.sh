#!/usr/bin/env bash
# The DGL side of the time-to-accuracy benchmark, in a virtual environment of its own (about 5 GB):
# DGL 2.1.0 from PyPI loads only with PyTorch 2.0.0-2.2.1 (its graphbolt library) and numpy below 2,
# its data loader needs torchdata 0.7.1, dgl.graphbolt imports pyyaml and pydantic; the project's own environment (.venv, PyTorch Geometric)
# stays as it is. Idempotent: an environment that already imports dgl is left alone.
#
# Usage: benchmarks/tta/setup_dgl.sh [VENV]   (default .venv-dgl at the repository root)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:-$root/.venv-dgl}
check() { DGLBACKEND=pytorch "$venv/bin/python" -c 'import dgl, scipy, pandas; print(dgl.__version__)' 2>/dev/null; }
if [[ -x $venv/bin/python ]] && check >/dev/null; then
  echo "setup_dgl: $venv has DGL $(check)"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet "torch==2.2.1" "dgl==2.1.0" "torchdata==0.7.1" "numpy<2" scipy \
  pandas pyyaml pydantic
echo "setup_dgl: $venv has DGL $(check)"
