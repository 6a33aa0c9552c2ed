#!/usr/bin/env bash
# Elastic resume (docs/running.md, "On another number of workers"): a checkpoint written on W
# workers continues on any W'. Vanilla training (dropout on) checkpointed at epoch 6 of 12 on 4
# workers and resumed on 2 and on 1, and checkpointed on 1 and resumed on 3, gives every epoch's
# loss and final parameter within 1e-5 (relative; compare_runs.py) of the uninterrupted run, on a
# generated graph and on Cora (required when CI=true). The 4 -> 2 resume on the generated graph
# keeps the default partition directory: refused without --repartition (the partition is for 4),
# replaced with it. Negative control: the same resume from a checkpoint stripped of its Adam state
# must fail the comparison. R-GCN with learned featureless rows (each rank's rows beside the
# checkpoint) resumes alike; a checkpoint missing one rank's rows is refused. Adaptive quantization
# (mode adaqp) resumed from 4 workers on 2 ends within 0.5 points of test accuracy of the
# uninterrupted run.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

# run NAME W ARGS...: `adaqp train` on W workers into $tmp/NAME (log appended to $tmp/NAME.log).
run() {
  local name=$1 w=$2
  shift 2
  if ! timeout 300 mpirun --oversubscribe --bind-to none -np "$w" "$ADAQP_BIN" train "$@" \
      --set "partition.parts=$w" --set "output.dir=$tmp/$name" --set training.seed=11 \
      --set training.threads=1 --set training.checkpoint_every=6 --set output.log_level=info \
      >>"$tmp/$name.log" 2>&1; then
    cat "$tmp/$name.log"
    echo "FAIL: $name on $w workers" >&2
    exit 1
  fi
}

# resume CUT NAME W ARGS...: copies run CUT (its checkpoints, metrics and partition) to NAME and
# resumes it on W workers to epoch 12.
resume() {
  local cut=$1 name=$2 w=$3
  shift 3
  cp -r "$tmp/$cut" "$tmp/$name"
  run "$name" "$w" "$@" --set training.epochs=12 --resume
  grep -q "the checkpoint was written on .* workers and training continues on $w" \
    "$tmp/$name.log" || { cat "$tmp/$name.log"; echo "FAIL: $name: no elastic resume" >&2; exit 1; }
}

# compare REF RUN: every epoch's loss (relative) and every final parameter within 1e-5.
compare() {
  "${ADAQP_PYTHON:-python3}" "$ADAQP_SOURCE_DIR/tests/cli/lib/compare_runs.py" losses \
    "$tmp/$1" "$tmp/$2" 1e-5 --params 1e-5
}

# expect_differ REF RUN WHAT: the comparison fails, and because the runs differ (a failure of the
# script itself, or a missing file, is not the negative control working).
expect_differ() {
  local out
  if out=$(compare "$1" "$2" 2>&1); then
    echo "FAIL: $3 passed the comparison" >&2
    exit 1
  fi
  if ! grep -qE "differs? by" <<<"$out"; then
    echo "FAIL: $3: the comparison failed for another reason:" >&2
    echo "$out" >&2
    exit 1
  fi
}

# strip_adam FILE [PATTERN]: rewrites the array file (common/array_file.h) without the arrays whose
# name matches the regular expression PATTERN (default: a checkpoint's adam/* arrays).
strip_adam() {
  python3 - "$1" "${2:-adam/}" <<'PY'
import re, struct, sys

path, pattern = sys.argv[1], re.compile(sys.argv[2])
data = open(path, "rb").read()
assert data[:8] == b"ADQPARR1", "not an array file"
(count,) = struct.unpack_from("<I", data, 8)
pos, kept = 12, []
for _ in range(count):
    (name_len,) = struct.unpack_from("<I", data, pos)
    name = data[pos + 4:pos + 4 + name_len].decode()
    dtype, n, _crc = struct.unpack_from("<BQI", data, pos + 4 + name_len)
    size = {1: 4, 2: 8, 3: 1, 4: 4, 5: 8}[dtype]
    end = pos + 4 + name_len + 13 + n * size
    if not pattern.match(name):
        kept.append(data[pos:end])
    pos = end
assert pos == len(data) and len(kept) < count, (pos, len(data), len(kept), count)
open(path, "wb").write(b"ADQPARR1" + struct.pack("<I", len(kept)) + b"".join(kept))
PY
}

# elastic NAME ARGS...: the vanilla cases on one graph.
elastic() {
  local name=$1
  shift
  local job=("$@" --set communication.mode=vanilla --set training.device=cpu)
  run "$name-ref4" 4 "${job[@]}" --set training.epochs=12
  run "$name-cut4" 4 "${job[@]}" --set training.epochs=6
  resume "$name-cut4" "$name-4to1" 1 "${job[@]}" --set "partition.dir=$tmp/$name-part1"
  compare "$name-ref4" "$name-4to1"
  run "$name-ref1" 1 "${job[@]}" --set training.epochs=12
  run "$name-cut1" 1 "${job[@]}" --set training.epochs=6
  resume "$name-cut1" "$name-1to3" 3 "${job[@]}" --set "partition.dir=$tmp/$name-part3"
  compare "$name-ref1" "$name-1to3"
}

mapfile -t generated < <(synthetic_graph 1500 seed=5; gnn_model 2 16 type=gcn dropout=0.5)
elastic gen "${generated[@]}"

# 4 -> 2 in the run's own directory: its partition (for 4) is refused, then replaced.
vanilla=("${generated[@]}" --set communication.mode=vanilla --set training.device=cpu)
cp -r "$tmp/gen-cut4" "$tmp/gen-4to2"
rc=0
timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${vanilla[@]}" \
  --set partition.parts=2 --set "output.dir=$tmp/gen-4to2" --set training.seed=11 \
  --set training.checkpoint_every=6 --set training.epochs=12 --resume \
  >"$tmp/refused.log" 2>&1 || rc=$?
if ((rc == 0 || rc == 124)) ||
    ! grep -q "was made with partition.parts = 4, the job asks for 2.*--repartition" \
      "$tmp/refused.log"; then
  cat "$tmp/refused.log"
  echo "FAIL: resuming on 2 workers over the partition for 4 was not refused (exit $rc)" >&2
  exit 1
fi
rm -rf "$tmp/gen-4to2"
resume gen-cut4 gen-4to2 2 "${vanilla[@]}" --repartition
# The adaptive scheme's start afresh is news only where it runs.
! grep -q "adaptive scheme" "$tmp/gen-4to2.log" ||
  { grep "adaptive scheme" "$tmp/gen-4to2.log"; echo "FAIL: Vanilla's resume names the adaptive scheme" >&2; exit 1; }
compare gen-ref4 gen-4to2

# Negative control: without the optimizer state the resumed run leaves the reference.
cp -r "$tmp/gen-cut4" "$tmp/gen-no-adam"
strip_adam "$tmp/gen-no-adam/checkpoints/ckpt-000006.bin"
rm -rf "$tmp/gen-no-adam-run"
resume gen-no-adam gen-no-adam-run 2 "${vanilla[@]}" --repartition
expect_differ gen-ref4 gen-no-adam-run "a resume without the optimizer state"
echo "ok: the negative control (no optimizer state) fails the comparison"

# R-GCN with learned featureless rows: each rank writes its rows beside the checkpoint, and a job
# on another number of workers takes each node's row (and its Adam state) from them. Without one of
# those files the checkpoint is not intact: the resume is refused with one error.
mapfile -t typed < <(synthetic_graph 1500 seed=5 heterogeneous=true; gnn_model 2 16 type=rgcn
  set_pairs dataset.add_reverse=true model.featureless=embedding)
elastic rgcn "${typed[@]}"
for r in 0 1 2 3; do
  [[ -f "$tmp/rgcn-cut4/checkpoints/ckpt-000006.emb-000$r.bin" ]] ||
    { ls "$tmp/rgcn-cut4/checkpoints"; echo "FAIL: rank $r's embedding rows missing" >&2; exit 1; }
done
cp -r "$tmp/rgcn-cut4" "$tmp/rgcn-lost"
rm "$tmp/rgcn-lost/checkpoints/ckpt-000006.emb-0002.bin"
rc=0
timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" train "${typed[@]}" \
  --set communication.mode=vanilla --set training.device=cpu --set partition.parts=2 \
  --set "partition.dir=$tmp/rgcn-lost-part2" --set "output.dir=$tmp/rgcn-lost" \
  --set training.seed=11 --set training.checkpoint_every=6 --set training.epochs=12 --resume \
  >"$tmp/rgcn-lost.log" 2>&1 || rc=$?
if ((rc == 0 || rc == 124)) || ! grep -q "ckpt-000006.emb-0002.bin" "$tmp/rgcn-lost.log" ||
    ! grep -q "no intact checkpoint" "$tmp/rgcn-lost.log"; then
  cat "$tmp/rgcn-lost.log"
  echo "FAIL: a checkpoint without one rank's embedding rows was not refused (exit $rc)" >&2
  exit 1
fi
# Negative control: the rows' Adam state stripped from every rank's file, the resumed run leaves
# the reference.
cp -r "$tmp/rgcn-cut4" "$tmp/rgcn-no-adam"
for r in 0 1 2 3; do
  strip_adam "$tmp/rgcn-no-adam/checkpoints/ckpt-000006.emb-000$r.bin" "embedding/(adam_step|exp_avg)"
done
resume rgcn-no-adam rgcn-no-adam-run 1 "${typed[@]}" --set communication.mode=vanilla \
  --set training.device=cpu --set "partition.dir=$tmp/rgcn-part1"
expect_differ rgcn-ref4 rgcn-no-adam-run "a resume without the learned rows' optimizer state"
echo "ok: R-GCN's learned rows resume on 1 and 3 workers; a lost rows file is refused; without"
echo "    their Adam state the resumed run leaves the reference"

# Adaptive quantization: resumed on 2 workers, within 0.5 points of the uninterrupted run.
mapfile -t adaqp < <(synthetic_graph 20000 seed=5; gnn_model 2 32 type=gcn
  set_pairs communication.mode=adaqp training.device=cpu)
run adaqp-ref4 4 "${adaqp[@]}" --set training.epochs=12
run adaqp-cut4 4 "${adaqp[@]}" --set training.epochs=6
resume adaqp-cut4 adaqp-4to2 2 "${adaqp[@]}" --set "partition.dir=$tmp/adaqp-part2"
grep -q "the adaptive scheme probes and traces afresh" "$tmp/adaqp-4to2.log" ||
  { cat "$tmp/adaqp-4to2.log"; echo "FAIL: adaqp's elastic resume does not say the scheme starts afresh" >&2; exit 1; }
python3 - "$tmp/adaqp-ref4" "$tmp/adaqp-4to2" <<'PY'
import json, sys

def final(d):
    summary = [json.loads(l) for l in open(d + "/metrics.jsonl") if '"summary"' in l]
    assert len(summary) == 1, d
    return summary[0]["final_test_acc"], summary[0]["world_size"]

(ref, w_ref), (run, w_run) = final(sys.argv[1]), final(sys.argv[2])
print(f"adaqp: final test accuracy {ref:.4f} uninterrupted on {w_ref}, {run:.4f} resumed on {w_run}")
assert (w_ref, w_run) == (4, 2), (w_ref, w_run)
assert abs(run - ref) <= 0.005, f"resumed adaqp run ends {abs(run - ref) * 100:.2f} points away"
PY

cora="${ADAQP_SHARED_DATASETS:-}/cora"
[[ -d "$cora/raw" ]] || skip_or_fail "shared dataset cora missing at '$cora': its half did not run"
elastic cora --config "$ADAQP_SOURCE_DIR/configs/cora.yaml" --set "dataset.path=$cora"
echo "checkpoint_elastic: all passed"
