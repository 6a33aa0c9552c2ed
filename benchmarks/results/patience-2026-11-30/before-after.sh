#!/usr/bin/env bash
set -euo pipefail
source /work/main/scripts/lib/adaqp.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
OUT=/tmp/ba; rm -rf $OUT; mkdir -p $OUT
mapfile -t job < <(synthetic_graph 100000 avg_degree=20 feat_dim=128 seed=1; gnn_model 3 128 type=gcn
  set_pairs dataset.self_loops=true partition.parts=2 training.threads=1 training.device=cpu \
    communication.mode=vanilla output.log_level=warn training.epochs=12 training.eval_every=1)
run() { # NAME BIN PARTDIR ARGS
  local name=$1 bin=$2 part=$3; shift 3
  mpirun --oversubscribe --bind-to none -np 2 "$bin" train "${job[@]}" --set "partition.dir=$part" \
    --set "output.dir=$OUT/$name" "$@" > "$OUT/$name.log" 2>&1
  python3 - "$OUT/$name/metrics.jsonl" "$name" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
s = [r for r in rows if r.get("event") == "summary"][-1]
train_wall = max(p[3] for p in s["seconds_by_phase"])
rss = max(p[3] for p in s["memory"]["peak_rss_bytes"])
print(f"{sys.argv[2]}: mean epoch {s['mean_epoch_time_s']:.4f} s, training phase {train_wall:.2f} s (12 epochs + 12 evaluations), training peak RSS {rss/2**30:.3f} GiB")
PY
}
run warm-old /tmp/old-wt/build/src/adaqp $OUT/part-old --set training.epochs=1 > /dev/null
run warm-new /work/main/build/src/adaqp $OUT/part-new --set training.epochs=1 > /dev/null
for round in 1 2 3; do
  run "old-r$round" /tmp/old-wt/build/src/adaqp $OUT/part-old
  run "new-r$round" /work/main/build/src/adaqp $OUT/part-new
  run "new-best-r$round" /work/main/build/src/adaqp $OUT/part-new --set training.restore_best=true
done
