#!/usr/bin/env bash
# Divergence: with a learning rate of 1e30 the first Adam step blows the weights up to ~1e30 and
# the second epoch's loss overflows. Training stops there on every rank with one error naming the
# epoch and the last good checkpoint (epoch 1), and nothing of epoch 2 is checkpointed. That
# checkpoint is intact: resuming it loads it and diverges again at epoch 2, with the same error.
# (Its weights, finite but ~1e30, are beyond rescue by a smaller learning rate.) In a quantized
# mode the codec meets the divergence first, with the same advice and checkpoint, in one message
# however many ranks meet it. Features too large for float32 overflow before any step: that error
# names the input instead.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

mapfile -t job < <(synthetic_graph 800; gnn_model 2 16
  set_pairs partition.parts=2 communication.mode=vanilla training.device=cpu training.threads=1 \
    training.checkpoint_every=1 output.log_level=info "output.dir=$tmp/run")
rc=0
timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=5 \
  --set training.lr=1e30 >"$tmp/diverge.log" 2>&1 || rc=$?
expected="adaqp: error: training diverged at epoch 2: the loss is nan; lower training.lr; last good checkpoint: $tmp/run/checkpoints/ckpt-000001.bin"
if ((rc == 0 || rc == 124)) || [[ "$(grep "adaqp: error" "$tmp/diverge.log")" != "$expected" ]]; then
  cat "$tmp/diverge.log"
  echo "FAIL: exit $rc; expected exactly one line: $expected" >&2
  exit 1
fi
[[ "$(ls "$tmp/run/checkpoints")" == "ckpt-000001.bin" ]] ||
  { ls "$tmp/run/checkpoints"; echo "FAIL: expected only the epoch-1 checkpoint" >&2; exit 1; }
echo "ok: diverged run stopped: $expected"

rc=0
timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=5 \
  --set training.lr=1e30 --resume >"$tmp/resume.log" 2>&1 || rc=$?
if ((rc == 0 || rc == 124)) || [[ "$(grep "adaqp: error" "$tmp/resume.log")" != "$expected" ]] ||
    ! grep -q "resuming from $tmp/run/checkpoints/ckpt-000001.bin (epoch 1)" "$tmp/resume.log"; then
  cat "$tmp/resume.log"
  echo "FAIL: exit $rc; expected the resume from epoch 1 to fail with: $expected" >&2
  exit 1
fi
[[ "$(grep -c '"epoch":' "$tmp/run/metrics.jsonl")" == 2 ]] ||
  { cat "$tmp/run/metrics.jsonl"; echo "FAIL: expected the epoch-1 records of 2 ranks" >&2; exit 1; }
echo "ok: the last good checkpoint resumes and diverges the same way"

# In a quantized mode the first non-finite value meets the codec, in the exchange of epoch 2,
# before any loss: the ranks that meet it stop the job (not a collective check) with one message,
# the codec's error with the same advice and last good checkpoint (rank 0's where it meets it too;
# the others report only if the job still runs 10 s later); the exchanges its unwinding cancels
# are that error's consequence, not warnings of their own.
rc=0
timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=5 \
  --set training.lr=1e30 --set communication.mode=adaqp --set "output.dir=$tmp/run-q" \
  >"$tmp/diverge-q.log" 2>&1 || rc=$?
codec="^adaqp: error on rank [01] \(host [^)]*\): cannot quantize the layer [0-9]+ (forward|backward) "
codec+="message of node [0-9]+ \(epoch 2\): .*; the training has diverged; lower training.lr; "
codec+="last good checkpoint: $tmp/run-q/checkpoints/ckpt-000001.bin\$"
errors=$(grep -c "adaqp: error" "$tmp/diverge-q.log" || true)
if ((rc == 0 || rc == 124 || errors != 1)) || ! grep -Eq "$codec" "$tmp/diverge-q.log" ||
    grep -q "destroyed before completion" "$tmp/diverge-q.log"; then
  cat "$tmp/diverge-q.log"
  echo "FAIL: exit $rc; expected one error line, matching $codec, and no warning of the" \
    "exchanges it cancelled" >&2
  exit 1
fi
echo "ok: a quantized run diverging in the codec: $(grep -Em1 "$codec" "$tmp/diverge-q.log")"

# Features finite but near float32's maximum overflow in the first epoch's forward pass, before any
# optimizer step: the error points at the input, not the learning rate (found by a review,
# 2026-12-06: it advised lowering training.lr).
require_numpy
"$ADAQP_BIN" generate "${job[@]}" --out "$tmp/huge" >"$tmp/generate.log" 2>&1 ||
  { cat "$tmp/generate.log"; fail "generate"; }
"$PYTHON" -c 'import numpy as np, sys
f = sys.argv[1] + "/feat.npy"; a = np.load(f); a[:] = 3e38; np.save(f, a)' "$tmp/huge"
rc=0
timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=3 \
  --set dataset.format=numpy --set "dataset.path=$tmp/huge" --set "output.dir=$tmp/run-huge" \
  >"$tmp/huge.log" 2>&1 || rc=$?
input="^adaqp: error: training diverged at epoch 1: .*; computed from the initial parameters, "
input+="before any optimizer step: the input features are likely too large for float32 "
input+="arithmetic \(scale them down\); no checkpoint was written\$"
if ((rc == 0 || rc == 124)) || [[ "$(grep -c "adaqp: error" "$tmp/huge.log")" != 1 ]] ||
    ! grep -Eq "$input" "$tmp/huge.log"; then
  cat "$tmp/huge.log"
  fail "exit $rc; expected one error line matching $input"
fi
echo "ok: features too large for float32: $(grep "adaqp: error" "$tmp/huge.log")"
# ... and the codec, meeting them first in a quantized mode, gives the same advice.
rc=0
timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=3 \
  --set dataset.format=numpy --set "dataset.path=$tmp/huge" --set "output.dir=$tmp/run-huge-q" \
  --set communication.mode=quant --set communication.scheme=uniform >"$tmp/huge-q.log" 2>&1 ||
  rc=$?
codec="^adaqp: error on rank [01] \(host [^)]*\): cannot quantize the layer [0-9]+ (forward|backward) "
codec+="message of node [0-9]+ \(epoch 1\): .*; the training has diverged; computed from the "
codec+="initial parameters, before any optimizer step: the input features are likely too large "
codec+="for float32 arithmetic \(scale them down\); no checkpoint was written\$"
errors=$(grep -c "adaqp: error" "$tmp/huge-q.log" || true)
if ((rc == 0 || rc == 124 || errors != 1)) || ! grep -Eq "$codec" "$tmp/huge-q.log"; then
  cat "$tmp/huge-q.log"
  fail "exit $rc; expected one error line, matching $codec"
fi
echo "ok: the codec meets them first: $(grep -Em1 "$codec" "$tmp/huge-q.log")"
# One node's features too large: only the rank that sends its messages meets them, while the
# other waits for them. One message all the same, the codec's: at once from rank 0, from another
# rank after half of communication.timeout_s (4 s here; else 10 s), before the waiting rank times
# out. In this partition node 3's messages are rank 0's, node 0's rank 1's.
codec="^adaqp: error on rank [01] \(host [^)]*\): cannot quantize the layer [0-9]+ (forward|backward) "
codec+="message of node [0-9]+ \(epoch [0-9]+\): .*; the training has diverged; "
named=()
for node in 3 0; do
  "$ADAQP_BIN" generate "${job[@]}" --out "$tmp/one-$node" >"$tmp/generate.log" 2>&1 ||
    { cat "$tmp/generate.log"; fail "generate"; }
  "$PYTHON" -c 'import numpy as np, sys
f = sys.argv[1] + "/feat.npy"; a = np.load(f); a[int(sys.argv[2])] = 3.3e38; np.save(f, a)' \
    "$tmp/one-$node" "$node"
  rc=0
  timeout 60 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" --set training.epochs=3 \
    --set dataset.format=numpy --set "dataset.path=$tmp/one-$node" \
    --set "output.dir=$tmp/run-one-$node" --set communication.mode=quant \
    --set communication.scheme=uniform --set communication.timeout_s=4 >"$tmp/one-$node.log" 2>&1 ||
    rc=$?
  errors=$(grep -c "adaqp: error" "$tmp/one-$node.log" || true)
  if ((rc == 0 || rc == 124 || errors != 1)) || ! grep -Eq "$codec" "$tmp/one-$node.log"; then
    cat "$tmp/one-$node.log"
    fail "node $node: exit $rc; expected one error line, matching $codec"
  fi
  named+=("$(grep -Eo "^adaqp: error on rank [0-9]+" "$tmp/one-$node.log" | grep -Eo "[0-9]+$")")
done
[[ "${named[*]}" == "0 1" ]] ||
  fail "expected the errors of node 3 and node 0 from ranks 0 and 1, got ${named[*]} (if the" \
    "partition changed, pick a node of each part)"
echo "ok: one node's features, met by one rank: $(grep "adaqp: error" "$tmp/one-0.log" | cut -c1-90)..."
echo "divergence: all passed"
