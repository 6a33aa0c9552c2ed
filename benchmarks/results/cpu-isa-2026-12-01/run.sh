#!/usr/bin/env bash
# bench_quant on one thread under each ADAQP_MAX_CPU_ISA cap (avx512 where the CPU has it, avx2,
# scalar), ROUNDS alternated rounds (the caps' order reversed in even rounds), into OUT/<isa>.roundN.txt.
# Usage: run.sh [ROUNDS] (default 5); BENCH (default build/benchmarks/bench_quant), OUT (default runs
# beside this script; another machine's rounds go into a folder of their own).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
bench=${BENCH:-$root/build/benchmarks/bench_quant}
rounds=${1:-5}
isas=(avx512 avx2 scalar)
# AVX-512 as cpu_isa() means it: x86-64-v4's subsets.
flags=" $(grep -m1 '^flags' /proc/cpuinfo) "
for f in avx512f avx512bw avx512cd avx512dq avx512vl; do
  [[ $flags == *" $f "* ]] || isas=(avx2 scalar)
done
out=${OUT:-$here/runs}
mkdir -p "$out"
python3 "$root/benchmarks/provenance.py" -- "$bench" --rows 262144 --dim 256 --threads 1 \
  --repeats 5 >"$out/provenance.json"
for ((r = 1; r <= rounds; r++)); do
  order=("${isas[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#isas[@]} - 1; i >= 0; i--)); do order+=("${isas[i]}"); done
  fi
  for isa in "${order[@]}"; do
    echo "round $r: $isa"
    ADAQP_MAX_CPU_ISA=$isa OMP_NUM_THREADS=1 "$bench" --rows 262144 --dim 256 --threads 1 \
      --repeats 5 >"$out/$isa.round$r.txt"
  done
done
