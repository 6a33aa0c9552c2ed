#!/usr/bin/env bash
# The OGB CSV reader before and after its fast path for plain decimals (90d2633), on an
# ogbn-arxiv-shaped dataset (169,343 nodes x 128 features written "%.6f", 1,166,243 random edges,
# 40 classes), generated here; bench_loader of each build alternated over 3 rounds.
# Usage: run.sh OLD_BENCH_LOADER NEW_BENCH_LOADER [DIR] [bench_loader options...]   (as run on
# 2026-12-07: both built alike, Release with ADAQP_WITH_CUDA=OFF, from 170fca5 and f83b8f0, with
# `--slice 0 --world 1`: loader_slice_ab.log; loader_ab.log is an earlier pass without options
# against the CUDA build of 506a167)
set -euo pipefail
old=$1 new=$2 dir=${3:-/tmp/arxiv-like}
shift $(($# < 3 ? $# : 3))
opts=("$@")
((${#opts[@]})) || opts=(--repeats 1)
python=${ADAQP_PYTHON:-python3}
[[ -d $dir ]] || "$python" - "$dir" <<'PY'
import gzip, os, sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(1)
n, f, e = 169343, 128, 1166243
def write(name, text):
    path = f"{out}/{name}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt", compresslevel=1) as fh:
        fh.write(text)
x = rng.normal(scale=0.1, size=(n, f))
fmt = ",".join(["%.6f"] * f)
write("raw/node-feat.csv.gz", "\n".join(fmt % tuple(r) for r in x) + "\n")
src = rng.integers(0, n, e); dst = rng.integers(0, n, e)
write("raw/edge.csv.gz", "".join(f"{a},{b}\n" for a, b in zip(src, dst)))
write("raw/node-label.csv.gz", "".join(f"{v}\n" for v in rng.integers(0, 40, n)))
write("raw/num-node-list.csv.gz", f"{n}\n")
write("raw/num-edge-list.csv.gz", f"{e}\n")
perm = rng.permutation(n)
for name, idx in (("train", perm[:90941]), ("valid", perm[90941:120740]), ("test", perm[120740:])):
    write(f"split/time/{name}.csv.gz", "".join(f"{v}\n" for v in np.sort(idx)))
PY
for r in 1 2 3; do
  for b in old new; do
    echo "== round $r $b"
    bin=$old
    [[ $b == new ]] && bin=$new
    "$bin" "$dir" "${opts[@]}" 2>&1 | tail -4
  done
done
