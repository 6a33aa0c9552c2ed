#!/usr/bin/env bash
# A process that trains on the CPU never loads libtorch's CUDA backend (libtorch_cuda), even in a
# CUDA build: it costs about 0.15 s of CPU at every start (include/adaqp/tensor/torch_cuda_backend.h).
# - the binary does not name it among its needed libraries (readelf -d);
# - the dynamic loader's own trace (LD_DEBUG=files) of a 2-worker CPU training run never opens it,
#   and the same trace of the venv's `import torch`, which does load it, shows it: the probe can
#   see a load when one happens (skips that control where the venv's torch has no CUDA backend).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

if readelf -d "$ADAQP_BIN" | grep -E 'NEEDED.*libtorch_cuda' >"$tmp/needed.txt"; then
  cat "$tmp/needed.txt"
  fail "$ADAQP_BIN names libtorch_cuda as a needed library"
fi

mapfile -t job < <(synthetic_graph 600 seed=3; gnn_model 2 8 type=gcn)
if ! LD_DEBUG=files timeout 120 mpirun --oversubscribe -np 2 "$ADAQP_BIN" train "${job[@]}" \
    --set partition.parts=2 --set "partition.dir=$tmp/part" --set "output.dir=$tmp/out" \
    --set training.epochs=2 --set training.threads=1 --set training.device=cpu \
    --set output.log_level=warn >"$tmp/train.log" 2>&1; then
  grep -v '^ *[0-9]*:' "$tmp/train.log" || true
  fail "the CPU training run failed"
fi
grep -q 'file=.*libtorch_cpu' "$tmp/train.log" || fail "LD_DEBUG=files traced no library load"
[ "$(grep -c '^{.*"epoch"' "$tmp/out/metrics.jsonl")" -ge 2 ] || fail "no epoch records"
if grep 'file=.*libtorch_cuda' "$tmp/train.log" >"$tmp/loads.txt"; then
  head -3 "$tmp/loads.txt"
  fail "a CPU training run loaded libtorch's CUDA backend"
fi

python=${ADAQP_PYTHON:-python3}
torch_lib=$("$python" -c 'import importlib.util as u, os; s = u.find_spec("torch"); print(os.path.join(s.submodule_search_locations[0], "lib") if s else "")')
if [ -z "$torch_lib" ] || ! ls "$torch_lib"/libtorch_cuda.so >/dev/null 2>&1; then
  skip_or_fail "no libtorch_cuda beside $python's torch: the probe's control cannot run"
fi
LD_DEBUG=files "$python" -c 'import torch' >"$tmp/import.log" 2>&1 || {
  tail -5 "$tmp/import.log"
  fail "import torch failed"
}
grep -q 'file=.*libtorch_cuda' "$tmp/import.log" ||
  fail "LD_DEBUG=files did not show import torch loading libtorch_cuda: the probe sees nothing"
echo "PASS: a CPU training run starts without libtorch's CUDA backend"
