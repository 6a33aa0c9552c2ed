# One-off device benchmark (not part of the project): pyg_compare W=1 at 1M nodes, then tf32.
set -uo pipefail
export ADAQP_BIN=$B/src/adaqp ADAQP_PYTHON=python3 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
w=/tmp/pyg
python3 -c 'import torch, torch_geometric; print("torch", torch.__version__, "pyg", torch_geometric.__version__)'
t0=$SECONDS
DEVICE=cuda NODES=1000000 AVG_DEGREE=50 FEAT=100 CLASSES=47 WARMUP=2 EPOCHS=5 WORKERS=1 THREADS=16 \
  bash benchmarks/pyg_compare/run.sh $w
echo "pyg_compare took $((SECONDS - t0)) s"
g=$(ls -d $w/graph-n1000000-d50-f100-c47)
for p in fp32 tf32; do
  $B/src/adaqp train --set dataset.format=numpy --set dataset.path=$g --set dataset.self_loops=true \
    --set dataset.row_normalize=false --set model.type=gcn --set model.layers=3 --set model.hidden=256 \
    --set model.dropout=0.5 --set training.lr=0.01 --set training.weight_decay=5e-4 \
    --set training.epochs=7 --set training.eval_every=7 --set training.device=cuda \
    --set communication.mode=vanilla --set output.log_level=warn --set partition.parts=1 \
    --set partition.dir=$g-p1 --set training.threads=16 --set training.precision=$p --set output.dir=$w/$p
  python3 - $w/$p $p <<'PY'
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl")]
ep = [r for r in rs if r.get("event") != "summary"]
t = [r["epoch_time_s"] for r in ep if r["epoch"] > 2]
print(sys.argv[2], "median epoch s", round(statistics.median(t), 4), "losses", [round(r["loss"], 5) for r in ep],
      {k: v for k, v in ep[-1].items() if "acc" in k})
PY
done
