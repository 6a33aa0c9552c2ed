#!/usr/bin/env bash
# R-GCN, exchange auto (the default; relation_first here), AdaQP (default objective) against Vanilla
# on the virtual cluster, one rank per host, W=2, at each rate of RATES, 3 alternated rounds, layer
# 0 cached (the default); each run's median epoch (epochs 3-20, slowest rank) into WORK/runs.jsonl.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
root=${ADAQP_ROOT:-/work/main}
bin=${ADAQP_BIN:-$root/build/src/adaqp}
work=${WORK:-/work/bench/rgcn-links}
mkdir -p "$work"
job=(--set dataset.format=synthetic --set dataset.synthetic.num_nodes=100000
  --set dataset.synthetic.heterogeneous=true --set dataset.synthetic.num_classes=16
  --set dataset.synthetic.feat_dim=128 --set dataset.synthetic.avg_degree=10
  --set dataset.synthetic.feature_signal=0.3 --set dataset.add_reverse=true --set model.type=rgcn
  --set model.layers=2 --set model.hidden=64 --set partition.parts=2
  --set "partition.dir=$work/p2" --set training.epochs=20 --set training.eval_every=20
  --set training.threads=1)
for rate in ${RATES:-100mbit 300mbit}; do
  for r in 1 2 3; do
    order="vanilla adaqp"
    ((r % 2)) || order="adaqp vanilla"
    for m in $order; do
      run="$work/$rate-r$r-$m"
      rm -rf "$run"
      "$root/scripts/vcluster.sh" --hosts 2 --bandwidth "$rate" --timeout 600 -- "$bin" train \
        "${job[@]}" --set "communication.mode=$m" --set "output.dir=$run" >"$run.log" 2>&1
      python3 - "$run/metrics.jsonl" "$m" "$r" "$rate" >>"$work/runs.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
summary = [x for x in rows if x.get("event") == "summary"][-1]
ep, sent = {}, {}
for x in rows:
    if "event" not in x and "epoch" in x:
        ep[x["epoch"]] = max(ep.get(x["epoch"], 0), x["epoch_time_s"])
        sent[x["epoch"]] = sent.get(x["epoch"], 0) + x["bytes_sent"]
t = [ep[e] for e in sorted(ep) if e >= 3]
print(json.dumps({"rate": sys.argv[4], "round": int(sys.argv[3]), "mode": sys.argv[2],
                  "exchange": summary["exchange"], "median_epoch_s": statistics.median(t),
                  "bytes_last_epoch": sent[max(sent)], "test_acc_final": summary.get("final_test_acc"),
                  "epoch_times_s": [ep[e] for e in sorted(ep)]}))
PY
      tail -1 "$work/runs.jsonl"
    done
  done
done
echo ALLDONE
