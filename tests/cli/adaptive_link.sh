#!/usr/bin/env bash
# The adaptive scheme follows the link: the default job (generated graph, 2 workers, mode adaqp, 10
# epochs) on the virtual cluster (scripts/vcluster.sh) at 50 Mbit/s, and over shared memory. The
# link probe must see the rate: each sender's fitted slope between a third and twice 8 bits / RATE
# at 50 Mbit/s, and at least 5 times the shared-memory slope (with a 64 KiB shaper burst it fitted
# 1.4 ns/byte at 50 Mbit/s). Against the rate's 160 ns/byte, 14 runs here gave 146-266; one
# fresh-clone CI run (2026-11-30, the test alone as always) fitted 76 for one sender, the other 149,
# and the bytes still fell to 0.24 of shared memory's. The bytes after epoch 1 (the first epochs are
# all 8 bits) are printed and the slow link's run must send at most half of the shared-memory one's
# (0.20 here, 2026-11-28; a scheme blind to the link sends the same on both): the objective in
# seconds leaves exchanges at full precision where quantizing saves less time than the codec costs.
# With the faster codec (2026-11-28) quantizing pays even at 1 Gbit/s (both runs then sent about the
# same, 0.95-1.05), so the fast side is shared memory. Needs root (network namespaces): a visible
# skip without it, a failure under CI=true.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
((EUID == 0)) || skip_or_fail "network namespaces need root"
export OMP_NUM_THREADS=1

job=(train --set training.epochs=10 --set training.threads=1 --set training.device=cpu
     --set communication.mode=adaqp --set output.log_level=warn)
if ! timeout 300 "$ADAQP_SOURCE_DIR/scripts/vcluster.sh" --hosts 2 --bandwidth 50mbit \
    --timeout 240 -- "$ADAQP_BIN" "${job[@]}" --set "partition.dir=$tmp/part-slow" \
    --set "output.dir=$tmp/run-slow" >"$tmp/run-slow.log" 2>&1; then
  cat "$tmp/run-slow.log"
  echo "FAIL: the run at 50 Mbit/s failed" >&2
  exit 1
fi
if ! timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$ADAQP_BIN" "${job[@]}" \
    --set "partition.dir=$tmp/part-shm" --set "output.dir=$tmp/run-shm" \
    >"$tmp/run-shm.log" 2>&1; then
  cat "$tmp/run-shm.log"
  echo "FAIL: the run over shared memory failed" >&2
  exit 1
fi

python3 - "$tmp" <<'PY'
import json, sys

tmp = sys.argv[1]

def run(name):
    rows = [json.loads(line) for line in open(f"{tmp}/run-{name}/metrics.jsonl")]
    link = [r for r in rows if r.get("event") == "link_model"]
    assert len(link) == 1, link
    senders = link[0]["senders"]
    # all() over an empty list holds: both ranks must be fitted.
    assert sorted(s["sender"] for s in senders) == [0, 1], senders
    slopes = [s["beta_s_per_byte"] for s in senders]
    sent = sum(r["bytes_sent"] for r in rows if r.get("epoch", 0) >= 2 and "event" not in r)
    return slopes, sent

slow, slow_bytes = run("slow")
fast, fast_bytes = run("shm")
true_slow = 8 / 50e6
print(f"slopes (ns/byte): 50 Mbit/s {[round(b * 1e9, 1) for b in slow]} (rate: {true_slow * 1e9:.0f}), "
      f"shared memory {[round(b * 1e9, 3) for b in fast]}")
print(f"bytes after epoch 1: {slow_bytes} at 50 Mbit/s, {fast_bytes} over shared memory "
      f"({slow_bytes / fast_bytes:.3f})")
assert all(true_slow / 3 <= b <= 2 * true_slow for b in slow), "the probe does not see 50 Mbit/s"
assert all(s >= 5 * f for s, f in zip(slow, fast)), "the probe does not tell the links apart"
assert slow_bytes <= 0.5 * fast_bytes, "the slow link did not make the scheme send fewer bytes"
print("adaptive_link: passed")
PY
