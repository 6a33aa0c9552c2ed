#!/usr/bin/env bash
# Partition invariance end to end (docs/design.md, section 8): `adaqp train` with dropout on, the same
# seed, on W = 1, 2, 3, 4 workers gives the same per-epoch losses (1e-4 relative) and the same
# final parameters (1e-4) as W = 1, on a generated graph (GCN, SAGE and GAT with 2 heads and
# attention dropout: its masks, keyed by global edge ends, must not depend on W), on the generated
# ogbn-mag-shaped graph (R-GCN with 3 bases, randomly partitioned, and with learned embeddings of
# the featureless types, whose rows each rank keeps to itself: within 1e-5), and on
# Cora when the shared datasets are present (required when CI=true). With
# communication.exchange=cover (GCN on both graphs) the W-worker runs must also match the same W
# with the rows layout at 1e-5: only the order in which a cut edge's term joins its sum differs
# (issue 26).
# Runs differ only in float summation order. A ReLU network can amplify such a 1e-7 difference when
# a pre-activation crosses zero in one run and not in the other; with LayerNorm on the generated
# graph that happens after about 25 epochs (parameters then differ by about 5e-4), so the 30-epoch
# runs here use models without LayerNorm. tests/train/test_dist_training_mpi.cpp checks LayerNorm models
# step by step at 1e-5. One compute thread per worker keeps the summation order independent of the
# machine's core count.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

# run NAME W ARGS...: trains on W workers into $tmp/NAME/w$W.
run() {
  local name=$1 w=$2
  shift 2
  if ! timeout 300 mpirun --oversubscribe -np "$w" "$ADAQP_BIN" train "$@" \
      --set "partition.parts=$w" --set "output.dir=$tmp/$name/w$w" \
      --set training.epochs=30 --set training.seed=11 --set model.dropout=0.5 \
      --set training.threads=1 --set output.log_level=warn >"$tmp/$name-w$w.log" 2>&1; then
    cat "$tmp/$name-w$w.log"
    echo "FAIL: $name on $w workers" >&2
    exit 1
  fi
}

# compare NAME W [REF TOL]: the W-worker run against REF's run (default: NAME's 1-worker run), at
# relative tolerance TOL (default 1e-4).
compare() {
  python3 - "${3:-$tmp/$1/w1}" "$tmp/$1/w$2" "$1" "$2" "${4:-1e-4}" <<'PY'
import json, math, sys
from array import array

ref_dir, run_dir, name, w, tol = sys.argv[1:]
tol = float(tol)

def losses(d):
    out = {}
    with open(d + "/metrics.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r.get("event") == "summary":
                assert r["world_size"] == int(d.rsplit("w", 1)[1]), r
                continue
            out.setdefault(r["epoch"], set()).add(r["loss"])
    for e, ls in out.items():
        assert len(ls) == 1, f"{d}: ranks disagree on the loss of epoch {e}: {ls}"
    return {e: ls.pop() for e, ls in out.items()}

def params(d):
    a = array("f")
    with open(d + "/params.bin", "rb") as f:
        a.frombytes(f.read())
    return a

lr, lw = losses(ref_dir), losses(run_dir)
assert sorted(lr) == list(range(1, 31)) and sorted(lw) == sorted(lr), (sorted(lr), sorted(lw))
worst = max(abs(lw[e] - lr[e]) / max(abs(lr[e]), 1e-12) for e in lr)
assert worst <= tol, f"{name} W={w}: loss differs by {worst:.3g} (relative) from {ref_dir}"
pr, pw = params(ref_dir), params(run_dir)
assert len(pr) == len(pw) > 0, (len(pr), len(pw))
# max() skips a NaN that is not first: every value must be finite before it is compared.
bad = sum(1 for v in list(pr) + list(pw) if not math.isfinite(v))
assert not bad, f"{name} W={w}: {bad} parameters that are not finite ({ref_dir}, {run_dir})"
worst_p = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(pr, pw))
assert worst_p <= tol, f"{name} W={w}: parameters differ by {worst_p:.3g} from {ref_dir}"
assert lr[30] < lr[1], f"{name}: the loss did not decrease ({lr[1]} -> {lr[30]})"
print(f"ok: {name} W={w} against {ref_dir.split('/')[-2]}/{ref_dir.split('/')[-1]}: {len(lr)} "
      f"epochs, max loss rel diff {worst:.2e}, max param diff {worst_p:.2e} over {len(pr)} "
      f"parameters")
PY
}

mapfile -t synthetic < <(synthetic_graph 1500 seed=5; gnn_model 2 16
  set_pairs dataset.self_loops=true communication.mode=vanilla training.device=cpu)
mapfile -t typed < <(synthetic_graph 1500 seed=5 heterogeneous=true feature_signal=0.5
  gnn_model 2 16 type=rgcn num_bases=3
  set_pairs dataset.add_reverse=true communication.mode=vanilla training.device=cpu)
cases=(gcn sage gat rgcn rgcn-embedding rgcn-first rgcn-first-embedding)
for w in 1 2 3 4; do
  run gcn "$w" "${synthetic[@]}" --set model.type=gcn
  run sage "$w" "${synthetic[@]}" --set model.type=sage --set partition.method=random
  run gat "$w" "${synthetic[@]}" --set model.type=gat --set model.heads=2 \
    --set model.attention_dropout=0.5
  ((w == 1)) || run gcn-cover "$w" "${synthetic[@]}" --set model.type=gcn \
    --set communication.exchange=cover
  run rgcn "$w" "${typed[@]}" --set partition.method=random --set communication.exchange=rows
  run rgcn-embedding "$w" "${typed[@]}" --set model.featureless=embedding \
    --set communication.exchange=rows
  run rgcn-first "$w" "${typed[@]}" --set partition.method=random \
    --set communication.exchange=relation_first
  run rgcn-first-embedding "$w" "${typed[@]}" --set model.featureless=embedding \
    --set communication.exchange=relation_first
done

cora="${ADAQP_SHARED_DATASETS:-}/cora"
if [[ -d "$cora/raw" ]]; then
  cases+=(cora)
  for w in 1 2 3 4; do
    run cora "$w" --config "$ADAQP_SOURCE_DIR/configs/cora.yaml" --set "dataset.path=$cora" \
      --set communication.mode=vanilla --set training.device=cpu
    ((w == 1)) || run cora-cover "$w" --config "$ADAQP_SOURCE_DIR/configs/cora.yaml" \
      --set "dataset.path=$cora" --set communication.mode=vanilla --set training.device=cpu \
      --set communication.exchange=cover
  done
fi

for name in "${cases[@]}"; do
  for w in 2 3 4; do
    # GAT has a second kink (LeakyReLU on the attention scores) where a 1e-7 difference can flip a
    # side: its runs stay within 2e-4, so 1e-3 (the GPU comparisons' tolerance; a run that loses
    # its halo rows differs by 0.25, tests/cli/device_tolerance.sh).
    tol=1e-4
    [[ $name == gat ]] && tol=1e-3
    [[ $name == rgcn* ]] && tol=1e-5
    compare "$name" "$w" "$tmp/$name/w1" "$tol"
    if [[ -d "$tmp/$name-cover" ]]; then
      compare "$name-cover" "$w" "$tmp/$name/w1"
      compare "$name-cover" "$w" "$tmp/$name/w$w" 1e-5
    fi
  done
done
# Without Cora the generated half has passed and the Cora half is a visible skip (a failure under
# CI=true).
[[ -d "$cora/raw" ]] || skip_or_fail "shared dataset cora missing at '$cora': its half did not run"
echo "train_invariance: all passed"
