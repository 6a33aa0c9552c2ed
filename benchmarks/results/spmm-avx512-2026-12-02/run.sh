#!/usr/bin/env bash
# The CSR product's AVX-512 path against its AVX2 path: bench_compute_ratio's SpMM (spmm_cpu only,
# so ADAQP_MAX_CPU_ISA picks the row product's path and nothing else) on one thread, 50k rows of 20
# random entries, 128 and 256 columns, ROUNDS rounds with the caps alternated (reversed in even
# rounds), one JSON line a run into OUT/runs.jsonl.
# Usage: run.sh [ROUNDS] (default 5); BENCH (default build/benchmarks/bench_compute_ratio), OUT
# (default runs beside this script).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
bench=${BENCH:-$root/build/benchmarks/bench_compute_ratio}
rounds=${1:-5}
out=${OUT:-$here/runs}
mkdir -p "$out"
args=(--nodes 50000 --edges 1000000 --threads 1 --repeats 5)
python3 "$root/benchmarks/provenance.py" -- "$bench" "${args[@]}" --cols "128|256" \
  >"$out/provenance.json"
: >"$out/runs.jsonl"
for ((r = 1; r <= rounds; r++)); do
  caps=(avx2 avx512)
  ((r % 2 == 0)) && caps=(avx512 avx2)
  for cap in "${caps[@]}"; do
    for cols in 128 256; do
      line=$(ADAQP_MAX_CPU_ISA=$cap OMP_NUM_THREADS=1 "$bench" "${args[@]}" --cols "$cols" |
        grep '^{')
      echo "{\"round\":$r,\"cap\":\"$cap\",${line#\{}" >>"$out/runs.jsonl"
      echo "round $r: $cap, $cols columns"
    done
  done
done
python3 "$here/summarise.py" "$out/runs.jsonl"
