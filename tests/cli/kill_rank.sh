#!/usr/bin/env bash
# A worker killed mid-training: rank 1 of a 3-worker run gets SIGKILL after the run has written
# checkpoints. The whole job must end non-zero within the communication timeout (5 s; mpirun itself
# ends it in about a second) with a message naming the failed rank (mpirun's, or a CommError's on a
# surviving rank);
# the newest checkpoint must be intact (the resume loads it without skipping any), and resuming it
# must reproduce an uninterrupted run bitwise (per-epoch losses and scores, final parameters).
# ADAQP_KILL_RANK_DEVICE=cuda runs it all on the GPU (scripts/gpu_checks.sh; the ranks share it
# with a distinct NCCL_HOSTID each); default cpu.
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
# shellcheck source=tests/cli/lib/rank_pid.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rank_pid.sh"
# Ranks may share a GPU only with distinct NCCL_HOSTIDs; without a GPU the variable is unused.
# shellcheck disable=SC2016
launch=(bash -c 'NCCL_HOSTID=adaqp-kill-$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$ADAQP_BIN")
tmp=$(mktemp -d)
runner=""
trap '[[ -n "$runner" ]] && kill "$runner" 2>/dev/null; rm -rf "$tmp"' EXIT
timeout_s=5

mapfile -t job < <(synthetic_graph 3000 seed=3; gnn_model 2 16
  set_pairs communication.mode=vanilla "training.device=${ADAQP_KILL_RANK_DEVICE:-cpu}" \
    partition.parts=3 training.seed=4 training.threads=1 training.checkpoint_every=5 \
    "communication.timeout_s=$timeout_s" output.log_level=info)

# The run to kill: far more epochs than it will get through. It is killed once it has written two
# checkpoints (epochs 5 and 10; only the newest 2 are kept, so later ones replace them).
timeout 600 mpirun --oversubscribe -np 3 "${launch[@]}" train "${job[@]}" \
  --set "output.dir=$tmp/killed" --set training.epochs=100000 >"$tmp/killed.log" 2>&1 &
runner=$!
checkpoints() { compgen -G "$tmp/killed/checkpoints/ckpt-*.bin" | wc -l; }
for _ in $(seq 6000); do
  (($(checkpoints) >= 2)) && break
  kill -0 "$runner" 2>/dev/null || { cat "$tmp/killed.log"; echo "FAIL: run ended early" >&2; exit 1; }
  sleep 0.1
done
(($(checkpoints) >= 2)) ||
  { cat "$tmp/killed.log"; echo "FAIL: not 2 checkpoints after 600 s" >&2; exit 1; }

victim=$(rank_pid "$tmp/killed" 1)
[[ -n "$victim" ]] || { cat "$tmp/killed.log"; echo "FAIL: rank 1's process not found" >&2; exit 1; }
killed_at=$(date +%s)
kill -KILL "$victim"
rc=0
wait "$runner" || rc=$?
runner=""
elapsed=$(($(date +%s) - killed_at))
# mpirun ends the job as soon as a rank dies (about a second); a surviving rank's CommError would
# come within the communication timeout. Either way, no longer than that.
if ((rc == 0 || rc == 124 || elapsed > timeout_s)); then
  cat "$tmp/killed.log"
  echo "FAIL: after killing rank 1 the job exited $rc after $elapsed s" >&2
  exit 1
fi
grep -Eq "process rank 1 |peer 1|\[1\]" "$tmp/killed.log" ||
  { cat "$tmp/killed.log"; echo "FAIL: no message names rank 1" >&2; exit 1; }
echo "ok: killing rank 1 ended the job in $elapsed s (exit $rc): $(grep -Em1 "rank 1 |peer 1|\[1\]" \
  "$tmp/killed.log")"

# Resume from the newest checkpoint and run 6 epochs past it; compare with an uninterrupted run.
latest=""
for f in "$tmp"/killed/checkpoints/ckpt-*.bin; do latest=$(basename "$f"); done  # sorted glob
epoch=$((10#$(echo "$latest" | tr -dc '0-9')))
end=$((epoch + 6))
timeout 300 mpirun --oversubscribe -np 3 "${launch[@]}" train "${job[@]}" \
  --set "output.dir=$tmp/killed" --set "training.epochs=$end" --resume >"$tmp/resume.log" 2>&1 ||
  { cat "$tmp/resume.log"; echo "FAIL: resume" >&2; exit 1; }
if grep -q "skipping unreadable checkpoint" "$tmp/resume.log" ||
    ! grep -q "resuming from $tmp/killed/checkpoints/$latest (epoch $epoch)" "$tmp/resume.log"; then
  cat "$tmp/resume.log"
  echo "FAIL: the newest checkpoint $latest was not resumed intact" >&2
  exit 1
fi
timeout 300 mpirun --oversubscribe -np 3 "${launch[@]}" train "${job[@]}" \
  --set "output.dir=$tmp/ref" --set "training.epochs=$end" >"$tmp/ref.log" 2>&1 ||
  { cat "$tmp/ref.log"; echo "FAIL: reference run" >&2; exit 1; }

python3 - "$tmp/ref" "$tmp/killed" "$end" <<'PY'
import json, sys

def load(d):
    recs, summaries = {}, []
    for line in open(d + "/metrics.jsonl"):
        r = json.loads(line)
        if r.get("event") == "summary":
            summaries.append(r)
        elif "event" not in r:
            key = (r["epoch"], r["rank"])
            # The killed run wrote epochs past its newest checkpoint: the resume must drop them.
            assert key not in recs, f"{d}: epoch {key[0]} of rank {key[1]} recorded twice"
            recs[key] = [r.get(k) for k in ("loss", "train_acc", "val_acc", "test_acc")]
    assert len(summaries) == 1, f"{d}: {len(summaries)} summaries"
    return recs, summaries[0], open(d + "/params.bin", "rb").read()

ref, run = load(sys.argv[1]), load(sys.argv[2])
end = int(sys.argv[3])
assert sorted(ref[0]) == sorted(run[0]) == [(e, r) for e in range(1, end + 1) for r in range(3)]
for k in ref[0]:
    assert ref[0][k] == run[0][k], f"epoch {k}: {ref[0][k]} != {run[0][k]}"
for k in ("best_val_acc", "test_acc_at_best_val", "final_test_acc"):
    assert ref[1][k] == run[1][k], (k, ref[1][k], run[1][k])
assert ref[2] == run[2] and len(ref[2]) > 0, "final parameters differ"
print(f"ok: resumed run equals the uninterrupted one over {end} epochs "
      f"(final loss {ref[0][(end, 0)][0]}, final test {ref[1]['final_test_acc']})")
PY
echo "kill_rank: all passed"
