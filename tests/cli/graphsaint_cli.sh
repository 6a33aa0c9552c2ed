#!/usr/bin/env bash
# End-to-end on the GraphSAINT layout: NumPy writes two small directories (single- and
# multi-label) exactly as GraphSAINT's files are made (adj_full.npz by numpy.savez_compressed,
# which is what scipy.sparse.save_npz calls; feats.npy in float64; class_map.json, role.json).
# Giving only dataset.path (dataset.format defaults to auto) must detect the layout for
# `adaqp info` and for a 2-epoch `mpirun -np 2 adaqp train`; partition.method ptscotch reads the
# directory in slices (every rank streams it) and fingerprints it as the serial loader does;
# format synthetic with a path, and a broken role.json, are one clear error each.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
require_numpy

# shellcheck source=tests/cli/lib/graphsaint_dataset.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/graphsaint_dataset.sh"

for kind in single multi; do
  make_graphsaint_dataset "$tmp/$kind" "$kind"
  "$ADAQP_BIN" info --set "dataset.path=$tmp/$kind" --json >"$tmp/$kind.info.json" \
    2>"$tmp/$kind.info.log" || { cat "$tmp/$kind.info.log"; fail "adaqp info on $kind"; }
  "$PYTHON" - "$tmp/$kind.info.json" "$tmp/$kind.expected.json" "$kind" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["dataset"]
e = json.load(open(sys.argv[2]))
# the default job adds one self-loop per node; the generated graph has none
assert d["nodes"] == e["nodes"] and d["edges"] == e["edges"] + e["nodes"], (d, e)
assert d["self_loops"] == e["nodes"] and d["feat_dim"] == e["feat_dim"], d
assert d["num_classes"] == e["num_classes"] and d["multilabel"] == (sys.argv[3] == "multi"), d
assert (d["train"], d["valid"], d["test"]) == (144, 48, 48), d
PY
  echo "ok: adaqp info detects the $kind-label GraphSAINT directory"

  timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train \
    --set "dataset.path=$tmp/$kind" --set partition.parts=2 --set training.epochs=2 \
    --set training.threads=1 --set "output.dir=$tmp/run-$kind" >"$tmp/train-$kind.log" 2>&1 ||
    { cat "$tmp/train-$kind.log"; fail "adaqp train on the $kind-label directory"; }
  grep -q "loaded $kind (graphsaint)" "$tmp/train-$kind.log" ||
    { cat "$tmp/train-$kind.log"; fail "train did not load the $kind directory as graphsaint"; }
  metric=accuracy
  [[ $kind == multi ]] && metric=f1_micro
  "$PYTHON" - "$tmp/run-$kind/metrics.jsonl" "$metric" <<'PY'
import json, math, sys
records = [json.loads(line) for line in open(sys.argv[1])]
summary = [r for r in records if r.get("event") == "summary"]
assert len(summary) == 1, records
s = summary[0]
assert s["epochs"] == 2 and s["world_size"] == 2 and s["metric"] == sys.argv[2], s
epochs = [r for r in records if "epoch" in r and "loss" in r]
assert len(epochs) == 4 and all(math.isfinite(r["loss"]) for r in epochs), epochs
PY
  echo "ok: mpirun -np 2 adaqp train, 2 epochs on the $kind-label directory ($metric)"

  timeout 300 mpirun --oversubscribe --bind-to none -np 3 "$ADAQP_BIN" partition \
    --set "dataset.path=$tmp/$kind" --set partition.method=ptscotch --set partition.parts=3 \
    -o "$tmp/slices-$kind" >"$tmp/slices-$kind.log" 2>&1 ||
    { cat "$tmp/slices-$kind.log"; fail "ptscotch partition of the $kind directory"; }
  grep -q "loaded $kind (graphsaint) as 3 slices" "$tmp/slices-$kind.log" &&
    ! grep -q "no slice reader" "$tmp/slices-$kind.log" ||
    { cat "$tmp/slices-$kind.log"; fail "the $kind directory was not read in slices"; }
  serial=$(grep "^dataset_fingerprint:" "$tmp/run-$kind/partition/meta.yaml")
  [[ -n $serial ]] && grep -qx "$serial" "$tmp/slices-$kind/meta.yaml" ||
    fail "$kind: the slices' fingerprint differs from the serial loader's ($serial)"
  echo "ok: ptscotch reads the $kind-label directory in 3 slices, same fingerprint"
done

# A path with format synthetic is refused, naming both keys.
rc=0
"$ADAQP_BIN" info --set dataset.format=synthetic --set "dataset.path=$tmp/single" \
  2>"$tmp/synthetic.err" || rc=$?
[[ $rc -eq 1 ]] || fail "format synthetic with a path: exit code $rc, expected 1"
grep -q "dataset.path = '$tmp/single': given with dataset.format = synthetic" "$tmp/synthetic.err" ||
  fail "message: $(cat "$tmp/synthetic.err")"

# Overlapping roles: one line naming the file, the index and the node.
"$PYTHON" - "$tmp/single/role.json" <<'PY'
import json, sys
roles = json.load(open(sys.argv[1]))
roles["te"].append(roles["tr"][0])
json.dump(roles, open(sys.argv[1], "w"))
PY
rc=0
"$ADAQP_BIN" info --dataset "$tmp/single" 2>"$tmp/roles.err" || rc=$?
[[ $rc -eq 1 ]] || fail "overlapping roles: exit code $rc, expected 1"
grep -q "adaqp: error: $tmp/single/role.json: te index 48: node id [0-9]* is also in tr" \
  "$tmp/roles.err" || fail "message: $(cat "$tmp/roles.err")"
echo "graphsaint_cli: ok"
