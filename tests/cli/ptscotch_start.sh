#!/usr/bin/env bash
# partition.method ptscotch (partition/partition_in_slices.h), 3 ranks on a generated graph in
# the NumPy layout:
# - adaqp train partitions it with every rank on its slice, writes a complete partition directory
#   and trains; rank 0 never loads the whole graph (no "loaded ... nodes" line of the serial loader);
# - adaqp partition under mpirun writes the same directory, byte for byte (deterministic);
# - a rerun on that partition reads it back and reproduces the losses and parameters exactly;
# - the partition's dataset fingerprint is the serial loader's (adaqp partition with METIS);
# - a world size unlike partition.parts, the METIS-only balance constraints, a dataset without
#   training nodes and ranks reading different copies of the dataset are one clear error, before
#   anything is partitioned;
# - partition.sample_degree partitions a smaller symmetric sample (logged, recorded in meta.yaml,
#   shown by adaqp info), the same one with METIS on one process;
# - a dataset in the OGB layout (Cora) is read in slices as well.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
LIB="$(dirname "${BASH_SOURCE[0]}")/lib"

mapfile -t graph < <(synthetic_graph 4000 seed=9)
"$ADAQP_BIN" generate "${graph[@]}" -o "$tmp/data" >/dev/null
mapfile -t job < <(gnn_model 2 16
  set_pairs "dataset.path=$tmp/data" partition.method=ptscotch partition.parts=3 training.epochs=4 \
    training.threads=1 training.device=cpu communication.mode=quant communication.scheme=uniform \
    communication.bits=8 communication.timeout_s=30)
run() {  # run LOG NP ARGS...
  local log=$1 np=$2
  shift 2
  timeout 300 mpirun --oversubscribe -np "$np" "$ADAQP_BIN" "$@" >"$log" 2>&1
}

run "$tmp/first.log" 3 train "${job[@]}" --set "output.dir=$tmp/first" ||
  { cat "$tmp/first.log"; fail "ptscotch training"; }
{ grep -q "ptscotch into 3 parts on 3 ranks" "$tmp/first.log" &&
  grep -q "as 3 slices" "$tmp/first.log" &&
  (($(grep -c "part built from the graph's slices" "$tmp/first.log") == 3)); } ||
  { cat "$tmp/first.log"; fail "the ranks did not partition their slices"; }
! grep -q "loaded .* (numpy): " "$tmp/first.log" || fail "a rank loaded the whole graph"
for r in 0 1 2; do
  [[ -f $tmp/first/partition/part-$r/part.bin ]] || fail "part $r missing from the partition"
done
grep -q "^method: ptscotch" "$tmp/first/partition/meta.yaml" || fail "meta.yaml: method"
# Every rank wrote meta.yaml with rank 0's record of the dataset's files (the NumPy arrays).
grep -qE "^  - \[feat.npy, [0-9]+, [0-9a-f]{8}\]$" "$tmp/first/partition/meta.yaml" ||
  { cat "$tmp/first/partition/meta.yaml"; fail "meta.yaml: dataset_files"; }

run "$tmp/partition.log" 3 partition "${job[@]}" -o "$tmp/made" ||
  { cat "$tmp/partition.log"; fail "adaqp partition with ptscotch"; }
for f in meta.yaml part-0/part.bin part-1/part.bin part-2/part.bin; do
  cmp "$tmp/first/partition/$f" "$tmp/made/$f" || fail "$f differs between train and partition"
done

run "$tmp/sample.log" 3 partition "${job[@]}" --set partition.sample_degree=4 -o "$tmp/sample" ||
  { cat "$tmp/sample.log"; fail "adaqp partition with sample_degree"; }
read -r kept whole < <(sed -n 's/.*a sample of \([0-9]*\) of the \([0-9]*\) symmetric edges (sample_degree 4).*/\1 \2/p' \
  "$tmp/sample.log")
{ [[ -n ${kept:-} ]] && ((kept >= 4000 && kept < whole * 3 / 4)); } ||
  { cat "$tmp/sample.log"; fail "sample of ${kept:-?} of ${whole:-?} edges"; }
grep -q "^sample_degree: 4" "$tmp/sample/meta.yaml" || fail "meta.yaml: sample_degree"
! grep -q "^sample_degree" "$tmp/made/meta.yaml" || fail "meta.yaml of the whole graph: sample_degree"

run "$tmp/again.log" 3 train "${job[@]}" --set "output.dir=$tmp/again" \
  --set "partition.dir=$tmp/first/partition" || { cat "$tmp/again.log"; fail "rerun"; }
grep -q "3 of 3 ranks read their part where they are" "$tmp/again.log" ||
  { cat "$tmp/again.log"; fail "the rerun did not read the partition"; }
python3 "$LIB/compare_runs.py" losses "$tmp/first" "$tmp/again" 0 --params 0 ||
  fail "the rerun differs from the partitioning run"

"$ADAQP_BIN" partition "${job[@]}" --set partition.method=metis -o "$tmp/metis" >/dev/null 2>&1 ||
  fail "serial METIS partition"
serial=$(grep "^dataset_fingerprint:" "$tmp/metis/meta.yaml")
{ [[ -n $serial ]] && grep -qx "$serial" "$tmp/first/partition/meta.yaml"; } ||
  fail "dataset fingerprint differs from the serial loader's ($serial)"
# METIS on one process partitions the same sample (partition/edge_sample.h).
"$ADAQP_BIN" partition "${job[@]}" --set partition.method=metis --set partition.sample_degree=4 \
  -o "$tmp/metis-sample" >"$tmp/metis-sample.log" 2>&1 || fail "serial METIS partition of a sample"
grep -q "a sample of $kept of the $whole symmetric edges (sample_degree 4)" "$tmp/metis-sample.log" ||
  { cat "$tmp/metis-sample.log"; fail "METIS's sample is not PT-Scotch's ($kept of $whole edges)"; }
grep -q "^sample_degree: 4" "$tmp/metis-sample/meta.yaml" || fail "METIS meta.yaml: sample_degree"
"$ADAQP_BIN" info --partition "$tmp/metis-sample" | grep -q "on a sample of degree 4" ||
  fail "adaqp info does not name the sample"

rc=0
run "$tmp/world.log" 2 train "${job[@]}" --set "output.dir=$tmp/world" || rc=$?
{ ((rc != 0 && rc != 124)) &&
  grep -q "partition.parts is 3 but the job started 2 workers" "$tmp/world.log"; } ||
  { cat "$tmp/world.log"; fail "world size unlike partition.parts"; }
# A PT-Scotch partition of 3 parts started on 2 workers: the advice is not --repartition, which
# cannot replace a partition written part by part.
rc=0
run "$tmp/world-made.log" 2 train "${job[@]}" --set "output.dir=$tmp/first" || rc=$?
{ ((rc != 0 && rc != 124)) &&
  grep -q "has 3 parts but the job started 2 workers: start it with mpirun -np 3 (or srun -n 3), or partition the dataset again for 2 (partition.parts=2 with another partition.dir, or remove $tmp/first/partition)" "$tmp/world-made.log"; } ||
  { cat "$tmp/world-made.log"; fail "world size unlike a PT-Scotch partition's"; }
rc=0
run "$tmp/balance.log" 3 train "${job[@]}" --set "output.dir=$tmp/balance" \
  --set partition.balance_train=true || rc=$?
{ ((rc != 0 && rc != 124)) &&
  (($(grep -c "partition.balance_train = true: has no effect with partition.method = ptscotch" \
    "$tmp/balance.log") == 1)); } ||
  { cat "$tmp/balance.log"; fail "balance_train with ptscotch"; }
[[ ! -e $tmp/balance/partition ]] || fail "a failed partitioning left $tmp/balance/partition"
# A dataset without training nodes stops before its slices are partitioned, in one message.
# shellcheck source=tests/cli/lib/numpy_dataset.sh
source "$LIB/numpy_dataset.sh"
without_training_nodes "$tmp/data" "$tmp/no_train"
rc=0
run "$tmp/no_train.log" 3 train "${job[@]}" --set "dataset.path=$tmp/no_train" \
  --set "output.dir=$tmp/no_train_out" || rc=$?
{ ((rc != 0 && rc != 124)) &&
  (($(grep -c "$tmp/no_train: training split: has no nodes" "$tmp/no_train.log") == 1)) &&
  ! grep -q "ptscotch into" "$tmp/no_train.log"; } ||
  { cat "$tmp/no_train.log"; fail "a dataset without training nodes (exit $rc)"; }
[[ ! -e $tmp/no_train_out ]] || fail "a dataset without training nodes left $tmp/no_train_out"
# A stale copy on one host: every rank reads the dataset itself, from its own working directory
# here, and ranks 1 and 2 hold another graph of the same shape (another seed) than rank 0: one
# error naming the rank and the file, every rank non-zero, nothing partitioned. (The ranks used to
# train on slices of two graphs, hang or crash.)
mkdir -p "$tmp/host-a" "$tmp/host-b"
cp -r "$tmp/data" "$tmp/host-a/data"
mapfile -t other < <(synthetic_graph 4000 seed=10)
"$ADAQP_BIN" generate "${other[@]}" -o "$tmp/host-b/data" >/dev/null
copies_job=("${job[@]//"dataset.path=$tmp/data"/dataset.path=data}" --set "output.dir=$tmp/copies")
: >"$tmp/copies.codes"
# shellcheck disable=SC2016
rank_cmd='"$0" train "${@:2}"; echo "$OMPI_COMM_WORLD_RANK $?" >>"$1"'
timeout 120 mpirun --oversubscribe -np 1 -wdir "$tmp/host-a" \
  bash -c "$rank_cmd" "$ADAQP_BIN" "$tmp/copies.codes" "${copies_job[@]}" : \
  -np 2 -wdir "$tmp/host-b" bash -c "$rank_cmd" "$ADAQP_BIN" "$tmp/copies.codes" \
  "${copies_job[@]}" >"$tmp/copies.log" 2>&1 || true
{ (($(wc -l <"$tmp/copies.codes") == 3)) && (($(awk '$2 != 0' "$tmp/copies.codes" | wc -l) == 3)) &&
  (($(grep -c "adaqp: error" "$tmp/copies.log") == 1)) &&
  grep "adaqp: error" "$tmp/copies.log" |
  grep -q "dataset.path: rank 1's copy of the dataset differs from rank 0's: edge_index.npy"; } ||
  { cat "$tmp/copies.log" "$tmp/copies.codes"; fail "ranks reading different copies of the dataset"; }
[[ ! -e $tmp/copies/partition ]] || fail "ranks reading different copies left a partition"
echo "ok: different copies: $(grep "adaqp: error" "$tmp/copies.log")"
# adaqp partition likewise.
: >"$tmp/copies.codes"
# shellcheck disable=SC2016
rank_cmd='"$0" partition "${@:2}"; echo "$OMPI_COMM_WORLD_RANK $?" >>"$1"'
timeout 120 mpirun --oversubscribe -np 1 -wdir "$tmp/host-a" \
  bash -c "$rank_cmd" "$ADAQP_BIN" "$tmp/copies.codes" "${copies_job[@]}" -o "$tmp/copies-made" : \
  -np 2 -wdir "$tmp/host-b" bash -c "$rank_cmd" "$ADAQP_BIN" "$tmp/copies.codes" \
  "${copies_job[@]}" -o "$tmp/copies-made" >"$tmp/copies-partition.log" 2>&1 || true
{ (($(awk '$2 != 0' "$tmp/copies.codes" | wc -l) == 3)) &&
  grep "adaqp: error" "$tmp/copies-partition.log" | grep -q "rank 1's copy of the dataset differs"; } ||
  { cat "$tmp/copies-partition.log" "$tmp/copies.codes"; fail "adaqp partition of different copies"; }
[[ ! -e $tmp/copies-made ]] || fail "adaqp partition of different copies left $tmp/copies-made"
# The OGB layout (Cora) is read in slices too: every rank streams it and keeps its own nodes.
# shellcheck source=tests/cli/lib/shared_datasets.sh
source "$LIB/shared_datasets.sh"
require_shared_datasets cora
run "$tmp/cora.log" 3 train "${job[@]}" --set dataset.path="$ADAQP_SHARED_DATASETS/cora" \
  --set "output.dir=$tmp/cora" --set training.epochs=2 || { cat "$tmp/cora.log"; fail "Cora"; }
{ grep -q "loaded cora (ogb) as 3 slices" "$tmp/cora.log" &&
  ! grep -q "no slice reader" "$tmp/cora.log"; } ||
  { cat "$tmp/cora.log"; fail "Cora was not read in slices"; }
echo "ptscotch_start: all passed"
