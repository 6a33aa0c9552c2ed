#!/usr/bin/env bash
# The adaptive scheme follows the link: the default job (generated graph, 2 workers, mode adaqp,
# 10 epochs) on the virtual cluster (scripts/vcluster.sh) at 50 Mbit/s and at 1 Gbit/s. The link
# probe must see the rates: each sender's fitted slope within a factor 2 of 8 bits / RATE at
# 50 Mbit/s, and at least 5 times the 1 Gbit/s slope (with a 64 KiB shaper burst it fitted 1.4
# ns/byte at 50 Mbit/s). The bytes after epoch 1 (the first epochs are all 8 bits) are printed: the
# slow link's run sent 0.68 of the fast one's here (2026-11-28), where the objective in seconds sends
# some exchanges at full precision; with the paper's objective (relative to the all-8-bit exchange)
# it was 0.87-0.98. The test asserts that the slow run sends no more than 5% above the fast one.
# Needs root (network namespaces): a visible skip without it, a failure under CI=true as root.
set -euo pipefail
: "${ADAQP_BIN:?path of the adaqp binary}" "${ADAQP_SOURCE_DIR:?repository root}"
# shellcheck source=tests/cli/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/skip.sh"
((EUID == 0)) || skip_or_fail "network namespaces need root" root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1

for rate in 50 1000; do
  if ! timeout 300 "$ADAQP_SOURCE_DIR/scripts/vcluster.sh" --hosts 2 --bandwidth "${rate}mbit" \
      --timeout 240 -- "$ADAQP_BIN" train --set "partition.dir=$tmp/part-$rate" \
      --set "output.dir=$tmp/run-$rate" --set training.epochs=10 --set training.threads=1 \
      --set training.device=cpu --set communication.mode=adaqp \
      --set output.log_level=warn >"$tmp/run-$rate.log" 2>&1; then
    cat "$tmp/run-$rate.log"
    echo "FAIL: the run at $rate Mbit/s failed" >&2
    exit 1
  fi
done

python3 - "$tmp" <<'PY'
import json, sys

tmp = sys.argv[1]

def run(rate):
    rows = [json.loads(line) for line in open(f"{tmp}/run-{rate}/metrics.jsonl")]
    link = [r for r in rows if r.get("event") == "link_model"]
    assert len(link) == 1, link
    slopes = [s["beta_s_per_byte"] for s in link[0]["senders"]]
    sent = sum(r["bytes_sent"] for r in rows if r.get("epoch", 0) >= 2 and "event" not in r)
    return slopes, sent

slow, slow_bytes = run(50)
fast, fast_bytes = run(1000)
true_slow = 8 / 50e6
print(f"slopes (ns/byte): 50 Mbit/s {[round(b * 1e9, 1) for b in slow]} (rate: {true_slow * 1e9:.0f}), "
      f"1 Gbit/s {[round(b * 1e9, 2) for b in fast]} (rate: 8)")
print(f"bytes after epoch 1: {slow_bytes} at 50 Mbit/s, {fast_bytes} at 1 Gbit/s "
      f"({slow_bytes / fast_bytes:.3f})")
assert all(true_slow / 2 <= b <= 2 * true_slow for b in slow), "the probe does not see 50 Mbit/s"
assert all(s >= 5 * f for s, f in zip(slow, fast)), "the probe does not tell the rates apart"
assert slow_bytes <= 1.05 * fast_bytes, "the slow link made the scheme send more bytes"
print("adaptive_link: passed")
PY
