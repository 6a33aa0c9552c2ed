#!/usr/bin/env bash
# Peak resident memory and time of one rank's load of its slice, OGB's binary layout (deflated as
# DatasetSaver writes it, and stored) against the CSV layout of the same graph
# (make_papers_like.py: ogbn-papers100M's shape at NODES nodes, NaN labels outside the split).
# Each rank is a process of its own (bench_loader --slice; W processes side by side, as mpirun
# starts them); W = 1 also gives each layout's dataset fingerprint, which must agree.
# Usage: benchmarks/ogb_binary/run.sh OUT_DIR
# Environment: ADAQP_PYTHON (.venv/bin/python, with NumPy), BENCH_LOADER
# (build/benchmarks/bench_loader), NODES (1000000), WORLDS ("1 2"), DATA (OUT_DIR/data: kept, and
# reused when present).
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
out=${1:?usage: run.sh OUT_DIR}
py=${ADAQP_PYTHON:-$ADAQP_ROOT/.venv/bin/python}
bench=${BENCH_LOADER:-$ADAQP_BUILD_DIR/benchmarks/bench_loader}
data=${DATA:-$out/data}
mkdir -p "$out"
"$py" "$ADAQP_ROOT/benchmarks/provenance.py" -- "$0" "$@" >"$out/provenance.json"
if [[ ! -d $data ]]; then
  "$py" "$ADAQP_ROOT/benchmarks/ogb_binary/make_papers_like.py" "$data.tmp" \
    --nodes "${NODES:-1000000}" | tee "$out/generate.txt"
  mv "$data.tmp" "$data"
fi
du -sb "$data"/*/raw/* >"$out/sizes.txt"
: >"$out/results.jsonl"
for world in ${WORLDS:-1 2}; do
  for layout in csv bin bin-stored; do
    for ((rank = 0; rank < world; ++rank)); do
      /usr/bin/time -f '%M' -o "$out/time-$layout-$world-$rank.txt" \
        "$bench" "$data/$layout" --slice "$rank" --world "$world" >"$out/slice-$layout-$world-$rank.json" &
    done
    wait
    for ((rank = 0; rank < world; ++rank)); do
      # bench_loader's own peak, and GNU time's (KiB) of the whole process
      "$py" - "$out/slice-$layout-$world-$rank.json" "$out/time-$layout-$world-$rank.txt" \
        "$layout" >>"$out/results.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["layout"] = sys.argv[3]
r["gnu_time_max_rss_mib"] = round(int(open(sys.argv[2]).read().split()[-1]) / 1024, 1)
print(json.dumps(r))
PY
    done
  done
done
cat "$out/results.jsonl"
