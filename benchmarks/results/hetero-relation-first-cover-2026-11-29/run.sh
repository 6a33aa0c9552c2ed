#!/usr/bin/env bash
# The exact commands of this run (kept as run; paths are the dev machine's). Relation-first before (one row per destination, bbfdd92) and after (a minimum cover, 0788735):
# the 1M mag-shaped graph, R-GCN 2x128, Vanilla, layer 0 cached, virtual cluster 1 Gbit/s, one rank
# per host, 3 alternated rounds.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
src=/work/bench/hetero-run
out=/work/bench/cover-1gbit
for round in 1 2 3; do
  order="dest cover"
  [[ $round != 2 ]] || order="cover dest"
  for w in 2 4; do
    for v in $order; do
      run=$out/r$round-$v-w$w
      rm -rf "$run"
      echo "$(date +%T) round $round W=$w $v"
      /usr/bin/time -f "%e %M" -o "$run.time" /work/main/scripts/vcluster.sh --hosts "$w" --bandwidth 1gbit --timeout 1800 -- \
        "/work/bench/bin/adaqp-$v" train --set "dataset.path=$src/mag-1000000" --set dataset.add_reverse=true \
        --set dataset.self_loops=false --set model.type=rgcn --set communication.exchange=relation_first \
        --set communication.feature_cache=true --set model.layers=2 --set model.hidden=128 \
        --set training.epochs=5 --set training.threads=1 --set communication.mode=vanilla \
        --set "partition.parts=$w" --set "partition.dir=$src/parts-w$w-loops-false" --set "output.dir=$run" >"$run.log" 2>&1
      python3 - "$run/metrics.jsonl" "$v" "$w" "$round" >>"$out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
s = [r for r in rows if r.get("event") == "summary"][-1]
last = max(r["epoch"] for r in rows if r.get("event") != "summary")
sent = sum(r["bytes_sent"] for r in rows if r.get("event") != "summary" and r["epoch"] == last)
peak = [p[-1] / 2**30 for p in s["memory"]["peak_rss_bytes"]]
print(json.dumps({"variant": sys.argv[2], "workers": int(sys.argv[3]), "round": int(sys.argv[4]),
  "epoch_s": s["mean_epoch_time_s"], "bytes_per_epoch": sent, "rows_per_exchange": s["rows_per_exchange"],
  "time_breakdown_s": s["time_breakdown_s"], "training_peak_rss_gib_per_rank": peak}))
PY
      tail -1 "$out/results.jsonl"
    done
  done
done
echo ALLDONE
