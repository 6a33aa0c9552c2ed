#!/usr/bin/env bash
# R-GCN, AdaQP (default objective) against Vanilla over shared memory, W=2, 3 alternated rounds.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=/work/main/build/src/adaqp; W=/work/bench/rgcn-speed; mkdir -p $W
job=(--set dataset.format=synthetic --set dataset.synthetic.num_nodes=100000 --set dataset.synthetic.heterogeneous=true
  --set dataset.synthetic.num_classes=16 --set dataset.synthetic.feat_dim=128 --set dataset.synthetic.avg_degree=10
  --set dataset.synthetic.feature_signal=0.3 --set dataset.add_reverse=true --set model.type=rgcn --set model.layers=2
  --set model.hidden=64 --set partition.parts=2 --set partition.dir=$W/p2 --set training.epochs=20
  --set training.eval_every=20 --set training.threads=1 --set output.log_level=warn)
for r in 1 2 3; do
  order="vanilla adaqp"; ((r % 2)) || order="adaqp vanilla"
  for m in $order; do
    mpirun --oversubscribe --bind-to none -np 2 $B train "${job[@]}" --set communication.mode=$m --set output.dir=$W/r$r-$m >$W/r$r-$m.log 2>&1
    python3 - $W/r$r-$m/metrics.jsonl $m $r <<'PY' >>$W/runs.jsonl
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ep = {}
for x in rows:
    if "event" not in x and "epoch" in x: ep[x["epoch"]] = max(ep.get(x["epoch"], 0), x["epoch_time_s"])
t = [ep[e] for e in sorted(ep) if e >= 3]
print(json.dumps({"round": int(sys.argv[3]), "mode": sys.argv[2], "median_epoch_s": statistics.median(t), "epoch_times_s": [ep[e] for e in sorted(ep)]}))
PY
  done
done
cat $W/runs.jsonl
