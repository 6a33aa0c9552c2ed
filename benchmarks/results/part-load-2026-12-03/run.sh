#!/usr/bin/env bash
# A worker's load phase on dense features: one partition (W=1) of a generated graph of 500k nodes
# with 128 features (256 MB), then 1 epoch of `adaqp train` on it by BEFORE's binary and AFTER's,
# alternated over 3 rounds; each run's seconds and peak RSS by phase from its metrics summary.
# Usage: run.sh BEFORE_BIN AFTER_BIN RUNS_JSONL   (from the repository root)
set -euo pipefail
before=$1 after=$2 out=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=(--config configs/default.yaml --set dataset.synthetic.num_nodes=500000
     --set dataset.synthetic.feat_dim=128 --set partition.method=contiguous
     --set partition.parts=1 --set partition.dir="$work/part")
"$after" partition "${job[@]}" >/dev/null 2>&1
: >"$out"
for round in 1 2 3; do
  for side in before after; do
    bin=$before
    [[ $side == after ]] && bin=$after
    rm -rf "$work/out"
    mpirun --oversubscribe --bind-to none -np 1 "$bin" train "${job[@]}" \
      --set output.dir="$work/out" --set training.epochs=1 >/dev/null 2>&1
    python3 - "$work/out/metrics.jsonl" "$round" "$side" >>"$out" <<'PY'
import json, sys
s = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "summary"][-1]
print(json.dumps({"round": int(sys.argv[2]), "side": sys.argv[3],
                  "seconds_by_phase": s["seconds_by_phase"],
                  "peak_rss_bytes_by_phase": s["memory"]["peak_rss_bytes"]}))
PY
    tail -1 "$out" >&2
  done
done
