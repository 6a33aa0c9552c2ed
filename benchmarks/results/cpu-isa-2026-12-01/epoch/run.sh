#!/usr/bin/env bash
# Epoch time and peak RSS, 57714d6 (target_clones) against 6c2694f (cpu_isa dispatch), both CPU-only
# Release builds, alternated rounds: 200k-node generated graph, GCN 3x256, dropout 0.5, W=2 over
# shared memory, one thread a rank, uniform 4-bit quantized exchanges, 10 epochs.
# The builds: worktrees of the two commits at $AB_ROOT/ab-base and $AB_ROOT/ab-head (default /work),
# each `cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DADAQP_WITH_CUDA=OFF -DADAQP_BUILD_TESTS=OFF` and
# `ninja -C build adaqp`. Run from an empty directory: it writes rN-SIDE/ and their logs there.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
job=(--set dataset.format=synthetic --set dataset.synthetic.num_nodes=200000
  --set dataset.synthetic.avg_degree=20 --set dataset.synthetic.feat_dim=128 --set dataset.synthetic.seed=1
  --set model.type=gcn --set model.layers=3 --set model.hidden=256 --set model.dropout=0.5
  --set partition.parts=2 --set training.epochs=10 --set training.eval_every=10 --set training.threads=1
  --set communication.mode=quant --set communication.scheme=uniform --set communication.bits=4
  --set output.log_level=warn)
for r in 1 2 3; do
  order=(base head); ((r % 2 == 0)) && order=(head base)
  for side in "${order[@]}"; do
    mpirun --oversubscribe --bind-to none -np 2 ${AB_ROOT:-/work}/ab-$side/build/src/adaqp train "${job[@]}" \
      --set "partition.dir=./part-$side" --set "output.dir=./r$r-$side" > r$r-$side.log 2>&1
    python3 - r$r-$side <<'PY'
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(d + "/metrics.jsonl")]
ep = {}
for r in rows:
    if "rank" in r and r["epoch"] >= 3:
        ep.setdefault(r["epoch"], []).append(r["epoch_time_s"])
s = [r for r in rows if r.get("event") == "summary"][0]
print(d, round(sum(max(v) for v in ep.values()) / len(ep), 4), "peak MiB",
      max(max(x) for x in s["memory"]["peak_rss_bytes"]) >> 20)
PY
  done
done
