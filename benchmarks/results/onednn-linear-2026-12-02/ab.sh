#!/usr/bin/env bash
# Whole epochs of two adaqp binaries, alternated (reversed in even rounds): the job of job.yaml
# (its dataset: the links sweep's generated graph, benchmarks/links/run.sh) over shared memory,
# W=2, one thread a rank. Prints per run the binary, the mean of the slowest rank's epochs 3-40,
# the ranks' mean aggregation (local + halo) and dense times, and the largest rank's peak RSS.
# Usage: ab.sh CONFIG ROUNDS BIN_A BIN_B
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
cfg=$1
rounds=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
  bins=("$@")
  ((r % 2 == 0)) && bins=("$2" "$1")
  for b in "${bins[@]}"; do
    rm -rf "$out/run"
    mpirun --oversubscribe --bind-to none -np 2 "$b" train --config "$cfg" \
      --set output.dir="$out/run" >/dev/null 2>&1
    python3 - "$b" "$out/run" <<'P'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[2] + "/metrics.jsonl")]
ep = {}
for r in rows:
    if "epoch" in r and r["epoch"] > 2:
        ep.setdefault(r["epoch"], []).append(r)
e = statistics.mean(max(x["epoch_time_s"] for x in v) for v in ep.values())
agg = statistics.mean(statistics.mean(x["local_agg_time_s"] + x["halo_agg_time_s"] for x in v)
                      for v in ep.values())
dense = statistics.mean(statistics.mean(x["dense_time_s"] for x in v) for v in ep.values())
rss = max(r.get("peak_rss_bytes", 0) for r in rows) / 2**20
print(sys.argv[1].split("/")[-1], "epoch %.4f agg %.4f dense %.4f rss %.0f" % (e, agg, dense, rss))
P
  done
done
