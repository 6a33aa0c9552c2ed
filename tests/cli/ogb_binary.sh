#!/usr/bin/env bash
# End-to-end on OGB's binary raw layout as the `ogb` package itself writes it: ogb.io.DatasetSaver
# (pip-installed into a venv layered on $ADAQP_PYTHON's, which has PyTorch and NumPy) saves a
# small node-property graph (raw/data.npz, raw/node-label.npz with NaN labels for unlabelled nodes
# outside the split, split/random/split_dict.pt); the same data is also written in the CSV layout
# (unlabelled nodes as class 0, the class the binary loader gives them).
# - with only split_dict.pt (a torch pickle adaqp does not read) the error names it and asks for
#   the CSV split files; the test then writes them beside it;
# - `mpirun -np 2 adaqp train` on both directories: the same dataset fingerprint, the same loss in
#   every epoch and the same final parameters (vanilla exchanges: the adaptive bit-widths of the
#   default mode follow measured times, which differ between runs);
# - partition.method ptscotch reads the binary directory in 2 slices, same fingerprint.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?set ADAQP_SOURCE_DIR to the source tree}"
if ! "$PYTHON" -c 'import numpy, torch' 2>/dev/null; then
  skip_or_fail "$PYTHON has no NumPy or PyTorch (set ADAQP_PYTHON to the venv of scripts/setup.sh)"
fi

# The venv with ogb, kept in $ADAQP_TEST_CACHE (the build's test-cache) between runs: it sees
# $PYTHON's packages through a .pth file, so pip adds only ogb and what ogb.io imports (pandas, six,
# tqdm): not its other dependencies (scikit-learn and SciPy, half the install's 22 s; `outdated`,
# which would ask PyPI for a newer ogb at every import).
venv=${ADAQP_TEST_CACHE:-$tmp}/ogb-venv
if ! "$venv/bin/python" -c 'import ogb.io' 2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$PYTHON" -m venv "$venv" || skip_or_fail "cannot create a venv from $PYTHON"
  base=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$base" >"$site/adaqp_base_venv.pth"
  { timeout 600 "$venv/bin/python" -m pip install -q --no-input --no-deps ogb &&
    timeout 600 "$venv/bin/python" -m pip install -q --no-input pandas six tqdm; } >"$tmp/pip.log" 2>&1 ||
    { cat "$tmp/pip.log"; skip_or_fail "pip install ogb failed"; }
fi

bin=$tmp/submission_ogbn_adaqptest/adaqptest
csv=$tmp/csv
(cd "$tmp" && timeout 300 "$venv/bin/python" - "$tmp/submission" "$csv") >"$tmp/saver.log" 2>&1 <<'PY' ||
import os, sys
import numpy as np
import pandas as pd
from ogb.io import DatasetSaver

root, csv = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(3)
n, f, c = 400, 16, 4
y = rng.integers(0, c, n)
edges = set()
for v in range(n):
    for u in list(rng.choice(np.flatnonzero(y == y[v]), 4)) + [rng.integers(n)]:
        if u != v:
            edges.update({(v, int(u)), (int(u), v)})
edge_index = np.array(sorted(edges), dtype=np.int64).T.copy()  # C order, as adaqp needs
node_feat = (rng.normal(0, 2, (c, f))[y] + rng.normal(0, 1, (n, f))).astype(np.float32)
labels = y.astype(np.float64).reshape(n, 1)
perm = rng.permutation(n)
unlabelled = perm[360:]  # in no split, as ogbn-papers100M's unlabelled papers
labels[unlabelled] = np.nan
split = {"train": np.sort(perm[:240]), "valid": np.sort(perm[240:300]), "test": np.sort(perm[300:360])}

saver = DatasetSaver("ogbn-adaqptest", is_hetero=False, version=1, root=root)
saver.save_graph_list([{"edge_index": edge_index, "node_feat": node_feat, "num_nodes": n}])
saver.save_target_labels(labels)
saver.save_split(split, "random")

def gz(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pd.DataFrame(rows).to_csv(path, header=False, index=False, compression="gzip")

gz(f"{csv}/raw/edge.csv.gz", edge_index.T)
gz(f"{csv}/raw/node-feat.csv.gz", node_feat.astype(np.float64))  # exact decimal of each float32
gz(f"{csv}/raw/node-label.csv.gz", np.nan_to_num(labels, nan=0).astype(np.int64))
gz(f"{csv}/raw/num-node-list.csv.gz", [[n]])
gz(f"{csv}/raw/num-edge-list.csv.gz", [[edge_index.shape[1]]])
for k, ids in split.items():
    gz(f"{csv}/split/random/{k}.csv.gz", ids.reshape(-1, 1))
print("wrote", n, "nodes,", edge_index.shape[1], "edges")
PY
  { cat "$tmp/saver.log"; fail "ogb.io.DatasetSaver"; }
[[ -f $bin/raw/data.npz && -f $bin/raw/node-label.npz && -f $bin/split/random/split_dict.pt ]] ||
  fail "DatasetSaver did not write raw/data.npz, raw/node-label.npz, split/random/split_dict.pt"
[[ ! -e $bin/raw/edge.csv.gz ]] || fail "DatasetSaver wrote the CSV layout"
echo "ok: ogb.io.DatasetSaver wrote $bin"

# Only split_dict.pt in the split folder: one clear error.
rc=0
"$ADAQP_BIN" info --set "dataset.path=$bin" 2>"$tmp/pt.err" || rc=$?
[[ $rc -eq 1 ]] || fail "split_dict.pt alone: exit code $rc, expected 1"
grep -q "adaqp: error: $bin/split/random/split_dict.pt: is a torch pickle (ogb.io.DatasetSaver.save_split), which adaqp does not read: write the split beside it as train.csv.gz, valid.csv.gz and test.csv.gz" \
  "$tmp/pt.err" || fail "message: $(cat "$tmp/pt.err")"
cp "$csv"/split/random/*.csv.gz "$bin/split/random/"
echo "ok: split_dict.pt alone is one clear error; the CSV split files written beside it"

for layout in bin csv; do
  dir=$bin
  [[ $layout == csv ]] && dir=$csv
  timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train \
    --set "dataset.path=$dir" --set partition.parts=2 --set training.epochs=3 \
    --set training.threads=1 --set communication.mode=vanilla --set training.device=cpu \
    --set "output.dir=$tmp/run-$layout" >"$tmp/train-$layout.log" 2>&1 ||
    { cat "$tmp/train-$layout.log"; fail "adaqp train on the $layout directory"; }
  grep -q "loaded $(basename "$dir") (ogb): 400 nodes" "$tmp/train-$layout.log" ||
    { cat "$tmp/train-$layout.log"; fail "train did not load the $layout directory as ogb"; }
done
fp_bin=$(grep "^dataset_fingerprint:" "$tmp/run-bin/partition/meta.yaml")
fp_csv=$(grep "^dataset_fingerprint:" "$tmp/run-csv/partition/meta.yaml")
[[ -n $fp_bin && $fp_bin == "$fp_csv" ]] ||
  fail "fingerprints differ: binary '$fp_bin', CSV '$fp_csv'"
"$PYTHON" "$ADAQP_SOURCE_DIR/tests/cli/lib/compare_runs.py" losses "$tmp/run-csv" "$tmp/run-bin" 0 \
  --params 0 || fail "the binary layout's run differs from the CSV layout's"
echo "ok: mpirun -np 2 adaqp train: same fingerprint ($fp_bin), same losses and parameters"

timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" partition \
  --set "dataset.path=$bin" --set partition.method=ptscotch --set partition.parts=2 \
  -o "$tmp/slices" >"$tmp/slices.log" 2>&1 || { cat "$tmp/slices.log"; fail "ptscotch partition"; }
grep -q "loaded adaqptest (ogb) as 2 slices" "$tmp/slices.log" ||
  { cat "$tmp/slices.log"; fail "the binary directory was not read in slices"; }
grep -qx "$fp_bin" "$tmp/slices/meta.yaml" || fail "the slices' fingerprint differs ($fp_bin)"
echo "ogb_binary: ok"
