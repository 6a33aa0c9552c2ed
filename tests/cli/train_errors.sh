#!/usr/bin/env bash
# Start-up errors of `adaqp train` under mpirun: every rank exits non-zero, exactly one clear
# message names the problem, and nothing hangs (lib/expect_failure.sh).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

# shellcheck source=tests/cli/lib/expect_failure.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/expect_failure.sh"

mapfile -t small < <(synthetic_graph 400; set_pairs training.epochs=2 output.log_level=warn)

# Configuration problems, found by every rank.
expect_failure unknown_set_key 2 "unknown key 'model.hiddn'" "${small[@]}" --set model.hiddn=8
# A mistyped option is parsed before MPI starts: reported by the first rank only.
expect_failure mistyped_option 2 "The following arguments were not expected" "${small[@]}" \
  --sett model.hidden=8
cat >"$tmp/job.yaml" <<'YAML'
model:
  type: gcn
  dropuot: 0.5
YAML
expect_failure unknown_file_key 3 "model.dropuot" --config "$tmp/job.yaml"
expect_failure bad_lr 2 "training.lr = -1: must be in [1.1755e-38, 3.4e37]" "${small[@]}" --set training.lr=-1
touch "$tmp/a_file"
expect_failure checkpoint_dir 2 \
  "training.checkpoint_dir = $tmp/a_file/checkpoints: cannot create directory" "${small[@]}" \
  --set training.checkpoint_every=1 --set "training.checkpoint_dir=$tmp/a_file/checkpoints"
# --repartition replaces the partition directory whole: what the run keeps may not lie in it.
expect_failure checkpoint_dir_in_partition 2 \
  "training.checkpoint_dir = $tmp/parts/checkpoints lies inside partition.dir = $tmp/parts" \
  "${small[@]}" --set "partition.dir=$tmp/parts" --set training.checkpoint_every=1 \
  --set "training.checkpoint_dir=$tmp/parts/checkpoints"
[[ ! -e $tmp/parts ]] || { echo "FAIL: checkpoint_dir_in_partition partitioned first" >&2; exit 1; }
expect_failure output_in_partition 2 "output.dir = $tmp/parts/run lies inside partition.dir" \
  "${small[@]}" --set "partition.dir=$tmp/parts" --set "output.dir=$tmp/parts/run"
# Permissions do not tell: root passes access(W_OK) in /proc, where no directory can be made.
expect_failure checkpoint_dir_proc 2 \
  "training.checkpoint_dir = /proc/adaqp-checkpoints: cannot create directory: /proc: " \
  "${small[@]}" --set training.checkpoint_every=1 \
  --set training.checkpoint_dir=/proc/adaqp-checkpoints
expect_failure too_many_threads 2 "training.threads = 10000: this host has" "${small[@]}" \
  --set training.threads=10000
expect_failure bad_model 2 "model.type = 'gin': must be one of gcn, sage, gat, rgcn" "${small[@]}" --set model.type=gin
expect_failure gat_cover 2 "communication.exchange = cover: must be auto or rows with model.type gat" \
  "${small[@]}" --set model.type=gat --set communication.exchange=cover
expect_failure bad_dropout 2 "model.dropout = 1.5: must be in [0, 1)" "${small[@]}" --set model.dropout=1.5
expect_failure zero_epochs 2 "training.epochs = 0: must be >= 1" "${small[@]}" \
  --set training.epochs=0
expect_failure split_without_ogb 2 \
  "dataset.split = 'nope': only the OGB layout has named splits" "${small[@]}" \
  --set dataset.split=nope --set "output.dir=$tmp/split"
expect_failure balance_types_untyped 2 \
  "partition.balance_types = true: has no effect on the generated graph without dataset.synthetic.heterogeneous = true" \
  "${small[@]}" --set partition.balance_types=true --set "output.dir=$tmp/balance-types"
expect_failure rgcn_untyped 2 "model.type = rgcn aggregates each relation on its own, and the dataset has no node types" \
  "${small[@]}" --set model.type=rgcn --set "output.dir=$tmp/rgcn"
# Found before the dataset is partitioned: the job leaves nothing behind.
[[ ! -e $tmp/rgcn ]] || fail "rgcn_untyped: left $(find "$tmp/rgcn" | head -3 | tr '\n' ' ')"
expect_failure missing_config 2 "no-such-job.yaml" --config "$tmp/no-such-job.yaml"
# An empty path (an unset variable) is not the option's absence: not the embedded default job.
expect_failure empty_config 2 "--config: an empty path" --config ""

# Device and transport: NCCL needs a GPU run; a GPU run needs a GPU of its own per rank (or
# distinct NCCL_HOSTIDs); without a visible GPU, training.device=cuda is refused.
expect_failure nccl_on_cpu 2 "communication.backend = nccl" "${small[@]}" \
  --set training.device=cpu --set communication.backend=nccl --set "output.dir=$tmp/nccl"
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect_failure cuda_without_gpu 2 "training.device = cuda" "${small[@]}" \
    --set training.device=cuda --set "output.dir=$tmp/cuda"
fi
# The environment's cap on the CPU kernels' vector paths (read before MPI starts, as the command
# line: reported by the first rank only).
ADAQP_MAX_CPU_ISA=avx3 expect_failure bad_cpu_isa 2 \
  "environment variable ADAQP_MAX_CPU_ISA = 'avx3': not one of scalar, avx2, avx512" \
  "${small[@]}" --set "output.dir=$tmp/isa"
for d in nccl cuda isa; do
  [ ! -e "$tmp/$d" ] || { echo "FAIL: a refused job left $tmp/$d behind" >&2; exit 1; }
done

# A problem only rank 0 meets: the dataset it must partition does not exist.
expect_failure missing_dataset 3 "$tmp/no-such-dataset: dataset.path: directory not found" --set dataset.format=ogb \
  --set "dataset.path=$tmp/no-such-dataset" --set partition.parts=3 \
  --set "output.dir=$tmp/missing"

# Partition and world size disagree.
expect_failure parts_mismatch 3 "partition.parts is 2 but the job started 3 workers" \
  "${small[@]}" --set "output.dir=$tmp/fresh"
timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${small[@]}" \
  --set "output.dir=$tmp/two" >"$tmp/two.log" 2>&1 || { cat "$tmp/two.log"; exit 1; }
! grep -q "holds an earlier run's outputs" "$tmp/two.log" || fail "a first run warned of an earlier one"
# A second run into the same output.dir replaces the first's outputs, and says so once.
timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${small[@]}" \
  --set "output.dir=$tmp/two" >"$tmp/two-again.log" 2>&1 || { cat "$tmp/two-again.log"; exit 1; }
(($(grep -c "output.dir $tmp/two holds an earlier run's outputs: this run replaces" \
  "$tmp/two-again.log") == 1)) || { cat "$tmp/two-again.log"; fail "no warning of the replaced run"; }
expect_failure world_mismatch 3 \
  "partition $tmp/two/partition was made with partition.parts = 2, the job asks for 3" \
  "${small[@]}" --set "output.dir=$tmp/two" --set partition.parts=3
expect_failure world_mismatch_one 1 \
  "has 2 parts but the job started 1 worker: start it with mpirun -np 2 (or srun -n 2), or partition the dataset again for 1" \
  "${small[@]}" --set "output.dir=$tmp/two"
expect_failure parts_without_mpirun 1 \
  "partition.parts is 2 but the job started 1 worker (partition $tmp/one/partition does not exist yet): start it with mpirun -np 2 (it ran without mpirun?), or set partition.parts=1" \
  "${small[@]}" --set "output.dir=$tmp/one"

# A problem only rank 1 meets: its part of a copied partition is corrupted. Rank 0 loads its own
# part and then learns of the failure: it exits non-zero without a line of its own.
cp -r "$tmp/two" "$tmp/rank1"
part1="$tmp/rank1/partition/part-1/part.bin"  # garbage in the middle: an array's data, not its header
printf 'garbage' | dd of="$part1" bs=1 seek=$(($(stat -c %s "$part1") / 2)) conv=notrunc 2>/dev/null
expect_failure rank1_part 2 "on rank 1 (host $(hostname)): $tmp/rank1/partition/part-1/part.bin: " \
  "${small[@]}" --set "output.dir=$tmp/rank1"
grep -q "part.bin: array '[a-z_]*': checksum mismatch (corrupted file)" "$tmp/rank1_part.log" ||
  fail "rank1_part: the error does not name the checksum: $(grep "adaqp: error" "$tmp/rank1_part.log")"

# Parts of two partitionings of the same graph into parts of equal sizes, each sound and
# consistent with meta.yaml (part 1 and its counts line of a random partitioning swapped in from a
# contiguous one): their send lists and halo blocks disagree, which no single part shows; the
# exchange's receives would be smaller than what arrives.
for method in random contiguous; do
  timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${small[@]}" \
    --set "partition.method=$method" --set "output.dir=$tmp/$method" >"$tmp/$method.log" 2>&1 ||
    { cat "$tmp/$method.log"; exit 1; }
done
cp -r "$tmp/random" "$tmp/two-partitionings"
cp "$tmp/contiguous/partition/part-1/part.bin" "$tmp/two-partitionings/partition/part-1/part.bin"
python3 - "$tmp/two-partitionings/partition/meta.yaml" "$tmp/contiguous/partition/meta.yaml" <<'PY'
import re, sys
mixed, other = (open(path).read().split("\n") for path in sys.argv[1:])
at = mixed.index("counts:") + 2
mixed[at] = other[other.index("counts:") + 2]
count = lambda key: sum(int(re.search(key + r": (\d+)", line).group(1)) for line in mixed[at - 1:at + 1])
edges, cut = count("in_edges"), count("in_edges") - count("local_in_edges")
mixed = [f"num_edges: {edges}" if line.startswith("num_edges:") else
         f"edge_cut: {cut}" if line.startswith("edge_cut:") else line for line in mixed]
open(sys.argv[1], "w").write("\n".join(mixed))
PY
expect_failure mixed_partitionings 2 "whose $tmp/two-partitionings/partition/part-1/part.bin expects" \
  "${small[@]}" --set "output.dir=$tmp/two-partitionings" --set partition.method=random
# adaqp info --verify makes the same check on one process (it passed such parts: each is sound).
if "$ADAQP_BIN" info --partition "$tmp/two-partitionings/partition" --verify >"$tmp/mixed-info.log" 2>&1 ||
    ! grep -q "whose $tmp/two-partitionings/partition/part-1/part.bin expects" "$tmp/mixed-info.log"; then
  cat "$tmp/mixed-info.log"
  echo "FAIL: info --verify of parts from two partitionings" >&2
  exit 1
fi
echo "ok: info --verify of mixed parts: $(grep "adaqp: error" "$tmp/mixed-info.log")"

# A key with no effect on this dataset (known once the partition is): recompute without a layer
# that aggregates first (2 GraphSAGE layers, more hidden units than the generated graph's classes).
expect_failure recompute_no_effect 2 \
  "training.recompute = aggregations has no effect with model.type = sage, model.layers = 2" \
  "${small[@]}" --set "output.dir=$tmp/two" --set model.type=sage --set model.layers=2 \
  --set model.hidden=64 --set training.recompute=aggregations
# The same on a job that must partition first: found before, nothing left behind.
expect_failure recompute_no_effect_fresh 2 \
  "training.recompute = aggregations has no effect with model.type = sage, model.layers = 2" \
  "${small[@]}" --set "output.dir=$tmp/recompute" --set model.type=sage --set model.layers=2 \
  --set model.hidden=64 --set training.recompute=aggregations
[[ ! -e $tmp/recompute ]] || fail "recompute_no_effect_fresh: left $(find "$tmp/recompute" | head -3 | tr '\n' ' ')"
# And where the ranks partition together (PT-Scotch): found in the slices, before partitioning.
expect_failure recompute_no_effect_ptscotch 2 \
  "training.recompute = aggregations has no effect with model.type = sage, model.layers = 2" \
  "${small[@]}" --set "output.dir=$tmp/recompute-ptscotch" --set model.type=sage \
  --set model.layers=2 --set model.hidden=64 --set training.recompute=aggregations \
  --set partition.method=ptscotch
[[ ! -e $tmp/recompute-ptscotch ]] ||
  fail "recompute_no_effect_ptscotch: left $(find "$tmp/recompute-ptscotch" | head -3 | tr '\n' ' ')"
expect_failure rgcn_untyped_ptscotch 2 \
  "model.type = rgcn aggregates each relation on its own, and the dataset has no node types" \
  "${small[@]}" --set model.type=rgcn --set partition.method=ptscotch \
  --set "output.dir=$tmp/rgcn-ptscotch"
[[ ! -e $tmp/rgcn-ptscotch ]] ||
  fail "rgcn_untyped_ptscotch: left $(find "$tmp/rgcn-ptscotch" | head -3 | tr '\n' ' ')"

# Early stopping, or keeping the best epoch, without validation nodes: every epoch would score 0
# and the first would be kept. Refused before partitioning, with METIS and with PT-Scotch: no
# output.dir (its partition was left there, found by a bad-input hunt on 2026-12-07).
no_valid="has no validation nodes"
expect_failure patience_without_validation 2 \
  "training.patience = 5: chooses an epoch by its validation score, and the dataset (split: 240 train, 0 validation, 160 test nodes) $no_valid" \
  "${small[@]}" --set "output.dir=$tmp/no-valid" --set dataset.synthetic.valid_fraction=0 \
  --set training.patience=5
expect_failure restore_best_without_validation 2 "training.restore_best = true: chooses an epoch" \
  "${small[@]}" --set "output.dir=$tmp/no-valid" --set dataset.synthetic.valid_fraction=0 \
  --set training.restore_best=true
[[ ! -e $tmp/no-valid ]] ||
  fail "a job refused for want of validation nodes left $(find "$tmp/no-valid" | head -3 | tr '\n' ' ')"
expect_failure patience_without_validation_ptscotch 2 \
  "training.patience = 5: chooses an epoch by its validation score, and the dataset (split: 240 train, 0 validation, 160 test nodes) $no_valid" \
  "${small[@]}" --set "output.dir=$tmp/no-valid" --set dataset.synthetic.valid_fraction=0 \
  --set training.patience=5 --set partition.method=ptscotch
[[ ! -e $tmp/no-valid ]] ||
  fail "a job refused for want of validation nodes left $(find "$tmp/no-valid" | head -3 | tr '\n' ' ')"
# Without them, training runs and says so once.
timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${small[@]}" \
  --set "output.dir=$tmp/no-valid" --set dataset.synthetic.valid_fraction=0 >"$tmp/no-valid.log" 2>&1 ||
  { cat "$tmp/no-valid.log"; echo "FAIL: training without validation nodes" >&2; exit 1; }
(($(grep -c "warn.*$no_valid: the validation score reads 0" "$tmp/no-valid.log") == 1)) ||
  { cat "$tmp/no-valid.log"; echo "FAIL: no single warning of the empty validation split" >&2; exit 1; }
echo "ok: training without validation nodes warns once"

# An existing partition made with other partition.* keys is never reused silently.
way_out="choose another partition.dir, or pass --repartition to adaqp train to replace it"
expect_failure partition_method 2 \
  "partition $tmp/two/partition was made with partition.method = metis, the job asks for random: $way_out" \
  "${small[@]}" --set "output.dir=$tmp/two" --set partition.method=random
expect_failure partition_seed 2 "partition.seed = 0, the job asks for 5" \
  "${small[@]}" --set "output.dir=$tmp/two" --set partition.seed=5
expect_failure partition_balance 2 "partition.balance_train = false, the job asks for true" \
  "${small[@]}" --set "output.dir=$tmp/two" --set partition.balance_train=true
expect_failure partition_sample 2 "partition.sample_degree = 0, the job asks for 4" \
  "${small[@]}" --set "output.dir=$tmp/two" --set partition.sample_degree=4
expect_failure partition_dataset 2 \
  "was made with dataset.synthetic.num_nodes = '400', the job asks for '500': $way_out" \
  "${small[@]}" --set "output.dir=$tmp/two" --set dataset.synthetic.num_nodes=500
# ... nor after its dataset changed in place: same keys, one byte of the labels flipped.
"$ADAQP_BIN" generate "${small[@]}" --out "$tmp/numpy" >"$tmp/generate.log" 2>&1 ||
  { cat "$tmp/generate.log"; echo "FAIL: generate" >&2; exit 1; }
mapfile -t from_files < <(set_pairs dataset.format=numpy "dataset.path=$tmp/numpy" \
  training.epochs=2 output.log_level=warn "output.dir=$tmp/files")
timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${from_files[@]}" >"$tmp/files.log" 2>&1 ||
  { cat "$tmp/files.log"; echo "FAIL: training from the generated files" >&2; exit 1; }
python3 - "$tmp/numpy/label.npy" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(200)
    b = f.read(1)
    f.seek(200)
    f.write(bytes([b[0] ^ 1]))
PY
expect_failure partition_dataset_files 2 \
  "partition $tmp/files/partition was made from other dataset files: label.npy had" \
  "${from_files[@]}"
# A dataset without training nodes stops before anything is partitioned.
# shellcheck source=tests/cli/lib/numpy_dataset.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/numpy_dataset.sh"
without_training_nodes "$tmp/numpy" "$tmp/no_train"
expect_failure no_training_nodes 2 "$tmp/no_train: training split: has no nodes" \
  "${from_files[@]}" --set "dataset.path=$tmp/no_train" --set "output.dir=$tmp/no_train_out"
[[ ! -e $tmp/no_train_out ]] ||
  { ls -R "$tmp/no_train_out"; echo "FAIL: a dataset without training nodes left files" >&2; exit 1; }
# Nodes without feature columns: refused before anything is partitioned, naming the dataset (the
# model's check would otherwise stop the job after the partition was written).
without_features "$tmp/numpy" "$tmp/no_feat" 400
expect_failure no_features 2 "$tmp/no_feat: features: have 0 columns" \
  "${from_files[@]}" --set "dataset.path=$tmp/no_feat" --set "output.dir=$tmp/no_feat_out"
[[ ! -e $tmp/no_feat_out ]] ||
  { ls -R "$tmp/no_feat_out"; echo "FAIL: a dataset without features left files" >&2; exit 1; }
# Labels of one class: every split would score 1.0 with nothing learnt. Refused before anything
# is partitioned, and from a partition directory made of such a dataset by adaqp partition.
with_one_class "$tmp/numpy" "$tmp/one_class" 400
expect_failure one_class 2 "$tmp/one_class: labels: 1 class (every label is 0)" \
  "${from_files[@]}" --set "dataset.path=$tmp/one_class" --set "output.dir=$tmp/one_class_out"
[[ ! -e $tmp/one_class_out ]] ||
  { ls -R "$tmp/one_class_out"; echo "FAIL: a dataset of one class left files" >&2; exit 1; }
"$ADAQP_BIN" partition "${from_files[@]}" --set "dataset.path=$tmp/one_class" \
  --out "$tmp/one_class_parts" >/dev/null 2>&1 || { echo "FAIL: partition of one class" >&2; exit 1; }
expect_failure one_class_partition 2 "$tmp/one_class_parts/meta.yaml: num_classes: 1 class" \
  "${from_files[@]}" --set "dataset.path=$tmp/one_class" --set "partition.dir=$tmp/one_class_parts" \
  --set "output.dir=$tmp/one_class_out"
# Ranks started with different jobs (a configuration file that differs between hosts): one error
# naming the key and both values, every rank non-zero, nothing written. Paths may differ.
rc=0
: >"$tmp/mixed.codes"
# shellcheck disable=SC2016  # the ranks' shells expand them
rank_cmd=('"$0" train "${@:2}"; echo "$OMPI_COMM_WORLD_RANK $?" >>"$1"' "$ADAQP_BIN" "$tmp/mixed.codes")
timeout 60 mpirun --oversubscribe -np 1 bash -c "${rank_cmd[@]}" "${small[@]}" \
  --set "output.dir=$tmp/mixed" : -np 1 bash -c "${rank_cmd[@]}" "${small[@]}" \
  --set "output.dir=$tmp/mixed-host2" --set training.seed=7 >"$tmp/mixed.log" 2>&1 || rc=$?
if ((rc == 124)) || [[ $(awk '$2 != 0' "$tmp/mixed.codes" | wc -l) != 2 ]] ||
  [[ $(grep -c "adaqp: error" "$tmp/mixed.log") != 1 ]] ||
  ! grep -q "adaqp: error on rank 1 (host $(hostname)): started with another job than rank 0: training.seed is 7 here and 0 on rank 0" "$tmp/mixed.log" ||
  [[ -e $tmp/mixed ]]; then
  cat "$tmp/mixed.log" "$tmp/mixed.codes"
  echo "FAIL: ranks with different jobs: exit $rc" >&2
  exit 1
fi
echo "ok: mixed_jobs: $(grep "adaqp: error" "$tmp/mixed.log")"
# The same for the command line: --resume on one rank only (rank 0's decided, the other's was
# ignored).
rc=0
: >"$tmp/mixed-resume.codes"
rank_cmd[2]=$tmp/mixed-resume.codes
timeout 60 mpirun --oversubscribe -np 1 bash -c "${rank_cmd[@]}" "${small[@]}" \
  --set "output.dir=$tmp/mixed-resume" : -np 1 bash -c "${rank_cmd[@]}" "${small[@]}" \
  --set "output.dir=$tmp/mixed-resume" --resume=auto >"$tmp/mixed-resume.log" 2>&1 || rc=$?
if ((rc == 124)) || [[ $(awk '$2 != 0' "$tmp/mixed-resume.codes" | wc -l) != 2 ]] ||
  [[ $(grep -c "adaqp: error" "$tmp/mixed-resume.log") != 1 ]] ||
  ! grep -q "adaqp: error on rank 1 (host $(hostname)): started with another job than rank 0: --resume is auto here and not given on rank 0" "$tmp/mixed-resume.log" ||
  [[ -e $tmp/mixed-resume ]]; then
  cat "$tmp/mixed-resume.log" "$tmp/mixed-resume.codes"
  fail "ranks with different --resume: exit $rc"
fi
echo "ok: mixed_resume: $(grep "adaqp: error" "$tmp/mixed-resume.log")"
# A partitioning that fails once the dataset is read (files without node types) leaves no
# output.dir, which was made to hold the partition.
expect_failure balance_types_files 2 \
  "partition.balance_types = true: the dataset 'numpy' has no node types" \
  "${from_files[@]}" --set partition.balance_types=true --set "output.dir=$tmp/types_out/run"
[[ ! -e $tmp/types_out ]] ||
  { ls -R "$tmp/types_out"; echo "FAIL: a failed partitioning left $tmp/types_out" >&2; exit 1; }
# A failure after start-up (here the model's weights cannot be allocated) ends the job with
# MPI_Abort. Memory runs out on every rank alike: one line for the job, naming the keys that size
# it, without libtorch's message and backtrace.
rc=0
# The first weight, 40000 x 2e9 floats, is larger than any address space: refused on any host.
timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${small[@]}" --set "output.dir=$tmp/huge" \
  --set training.device=cpu --set dataset.synthetic.feat_dim=40000 --set model.hidden=2000000000 \
  >"$tmp/huge.log" 2>&1 || rc=$?
if ((rc == 0 || rc == 124)) || (($(grep -c "adaqp: error" "$tmp/huge.log") != 1)) ||
    ! grep -q "adaqp: error on rank .*: out of memory: .*model.hidden" "$tmp/huge.log" ||
    grep -q "frame #0\|alloc_cpu" "$tmp/huge.log" || [[ -e $tmp/huge/config.yaml ]]; then
  cat "$tmp/huge.log"
  echo "FAIL: an unallocatable model (exit $rc): expected one line, no backtrace, no config.yaml" >&2
  exit 1
fi
echo "ok: unallocatable model: $(grep -m1 "adaqp: error on rank" "$tmp/huge.log")"
expect_failure repartition_ptscotch 2 "--repartition with partition.method = ptscotch" \
  "${small[@]}" --set "output.dir=$tmp/two" --set partition.method=ptscotch --repartition
# --repartition replaces it: the job trains on a random partition, which meta.yaml then records,
# and no temporary directory is left beside it.
timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${small[@]}" --set "output.dir=$tmp/two" \
  --set partition.method=random --repartition >"$tmp/repartition.log" 2>&1 ||
  { cat "$tmp/repartition.log"; echo "FAIL: --repartition" >&2; exit 1; }
grep -q "^method: random$" "$tmp/two/partition/meta.yaml" ||
  { cat "$tmp/two/partition/meta.yaml"; echo "FAIL: --repartition left the old partition" >&2; exit 1; }
leftover=$(find "$tmp/two" -maxdepth 1 -name 'partition.*')
[[ -z $leftover ]] || { echo "FAIL: --repartition left $leftover" >&2; exit 1; }
echo "ok: --repartition replaced $tmp/two/partition (method random)"
echo "train_errors: all passed"
