#!/usr/bin/env bash
# ADAQP_MAX_CPU_ISA (include/adaqp/common/cpu_features.h) end to end:
# - the run's summary reports the CPU's widest path (read here from /proc/cpuinfo's flags) without
#   the variable and `scalar` with ADAQP_MAX_CPU_ISA=scalar;
# - the scalar paths train exactly as the vector ones: a 2-worker run with quantized messages
#   (2 bits, rows of 64 values: the codec's rounding, packing and unpacking), dropout and the CSR
#   product gives the same loss, accuracy and bytes in every epoch of every rank, and the same
#   parameters, bit for bit.
# (A value that names no path: train_errors.sh.)
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"

# The caller's cap would make the first run's path narrower than the CPU's.
unset ADAQP_MAX_CPU_ISA
# The widest path the kernel's flags allow (AVX-512: x86-64-v4's subsets).
flags=" $(grep -m1 '^flags' /proc/cpuinfo) "
has() {
  local f
  for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done
}
widest=scalar
if has avx512f avx512bw avx512cd avx512dq avx512vl; then
  widest=avx512
elif has avx2; then
  widest=avx2
fi

mapfile -t job < <(synthetic_graph 1200 seed=5 feat_dim=40 avg_degree=8 num_classes=8
  gnn_model 3 64 type=gcn dropout=0.5
  set_pairs partition.parts=2 "partition.dir=$tmp/part" communication.mode=quant
  set_pairs communication.scheme=uniform communication.bits=2 training.epochs=6 training.threads=1 output.log_level=warn)

# train NAME [ENV...]: the job into $tmp/NAME, each ENV (NAME=VALUE) exported to the ranks.
train() {
  local name=$1 exports=() kv
  shift
  for kv in "$@"; do exports+=(-x "$kv"); done
  env "$@" timeout 300 mpirun --oversubscribe -np 2 "${exports[@]}" "$ADAQP_BIN" train "${job[@]}" \
    --set "output.dir=$tmp/$name" >"$tmp/$name.log" 2>&1
}

train widest || {
  cat "$tmp/widest.log"
  fail "the run without ADAQP_MAX_CPU_ISA failed"
}
train scalar ADAQP_MAX_CPU_ISA=scalar || {
  cat "$tmp/scalar.log"
  fail "the run with ADAQP_MAX_CPU_ISA=scalar failed"
}
"$ADAQP_BIN" info --partition "$tmp/part" --json >"$tmp/info.json" || fail "adaqp info of the partition"
"$PYTHON" - "$tmp" "$widest" <<'PY' || fail "the scalar paths did not train as the vector ones"
import json, sys
tmp, widest = sys.argv[1], sys.argv[2]
def records(name):
    rows = [json.loads(l) for l in open(f"{tmp}/{name}/metrics.jsonl")]
    epochs = {(r["epoch"], r["rank"]): r for r in rows if "rank" in r}
    summary = [r for r in rows if r.get("event") == "summary"][0]
    return epochs, summary
wide, wide_summary = records("widest")
scalar, scalar_summary = records("scalar")
assert wide_summary["cpu_isa"] == widest, (wide_summary["cpu_isa"], widest)
assert scalar_summary["cpu_isa"] == "scalar", scalar_summary["cpu_isa"]
assert len(wide) == 12 and wide.keys() == scalar.keys(), sorted(wide)
for key, r in sorted(wide.items()):
    for field in ("loss", "train_acc", "bytes_sent"):
        assert r[field] == scalar[key][field], (key, field, r[field], scalar[key][field])
# The wire format at 2 bits, from the partition's halo rows: every epoch each halo row crosses
# once per direction in layer 1 (rows of 64 values, the vector paths' width, aggregated before
# the transform) and layer 2 (the 8 classes' values, transformed first); 8 bytes of metadata and
# ceil(d b / 8) of codes a row. 4 bits would send 40 + 12 bytes a row, not 24 + 10.
rows = json.load(open(f"{tmp}/info.json"))["partition"]["exchange_rows"]
wire = lambda d, b: 8 + (d * b + 7) // 8
for epoch in range(1, 7):
    sent = sum(wide[(epoch, rank)]["bytes_sent"] for rank in (0, 1))
    assert sent == 2 * rows * (wire(64, 2) + wire(8, 2)), (epoch, sent, rows)
PY
cmp "$tmp/widest/params.bin" "$tmp/scalar/params.bin" ||
  fail "the parameters after the scalar paths differ from the $widest paths'"

echo "PASS: the $widest and scalar paths train alike"
