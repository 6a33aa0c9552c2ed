#!/usr/bin/env bash
# Serial `adaqp partition` (rank 0's start-up: load the whole graph, METIS, write the parts) on a
# generated graph in the NumPy layout, on the whole graph and on its samples
# (partition.sample_degree), under GNU time: wall time, peak resident memory, load and METIS time
# (from the log) and the edge cut of every edge. With BASE_BIN, another adaqp binary (an earlier
# commit) runs the whole-graph rows in the same run, alternated with this one.
#
# Usage: benchmarks/startup/serial_partition.sh [WORK_DIR]   (default runs/serial-partition)
# Environment [defaults]: ADAQP_BIN [build/src/adaqp], BASE_BIN [none], NODES [2449029, ogbn-products'
# node count], DEGREE [50], FEAT [100], CLASSES [47], PARTS ["1 2 4"], SAMPLES ["0 12 16"].
# Output: WORK_DIR/serial_partition.csv and a table on stdout.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
WORK=${1:-$ADAQP_ROOT/runs/serial-partition}
NODES=${NODES:-2449029}
DEGREE=${DEGREE:-50}
FEAT=${FEAT:-100}
CLASSES=${CLASSES:-47}
read -r -a parts <<<"${PARTS:-1 2 4}"
read -r -a samples <<<"${SAMPLES:-0 12 16}"
[[ -x /usr/bin/time ]] || { echo "serial_partition: GNU time (/usr/bin/time) is needed" >&2; exit 1; }
require_adaqp
mkdir -p "$WORK"
graph=$WORK/graph-n$NODES-d$DEGREE-f$FEAT-c$CLASSES
if [[ ! -d $graph ]]; then
  echo "[serial_partition] generating $NODES nodes, average in-degree $DEGREE, $FEAT features"
  mapfile -t gen < <(synthetic_graph "$NODES" "avg_degree=$DEGREE" "feat_dim=$FEAT" \
    "num_classes=$CLASSES")
  "$ADAQP_BIN" generate "${gen[@]}" --out "$graph"
fi
csv=$WORK/serial_partition.csv
echo "binary,parts,sample_degree,wall_s,peak_gib,load_s,partition_s,sample_edges,whole_edges,edge_cut,edges" >"$csv"

run() {  # run LABEL BINARY PARTS SAMPLE
  local label=$1 bin=$2 w=$3 k=$4 log=$WORK/run.log
  rm -rf "$WORK/partition"
  /usr/bin/time -f "TIME %e %M" "$bin" partition --set dataset.format=numpy \
    --set "dataset.path=$graph" --set dataset.self_loops=true --set "partition.parts=$w" \
    --set "partition.sample_degree=$k" --out "$WORK/partition" >"$log" 2>&1 ||
    { cat "$log"; exit 1; }
  local wall peak load part cut edges sample whole
  read -r wall peak < <(sed -n 's/^TIME \([0-9.]*\) \([0-9]*\)$/\1 \2/p' "$log") || true
  load=$(sed -n 's/.*loaded .* in \([0-9.]*\) s$/\1/p' "$log")
  read -r part cut edges < <(sed -n 's/.*metis into [0-9]* parts in \([0-9.]*\) s, edge cut \([0-9]*\) of \([0-9]*\) edges.*/\1 \2 \3/p' "$log") || true
  read -r sample whole < <(sed -n 's/.*a sample of \([0-9]*\) of the \([0-9]*\) symmetric edges.*/\1 \2/p' "$log") || true
  if [[ -z ${cut:-} ]]; then  # one part: no METIS
    part=0
    read -r cut edges < <(sed -n 's/^edge cut *\([0-9]*\) of \([0-9]*\) edges.*/\1 \2/p' "$log") || true
  fi
  echo "$label,$w,$k,$wall,$(awk -v k="$peak" 'BEGIN { printf "%.2f", k / 1048576 }'),$load,$part,${sample:-},${whole:-},$cut,$edges" >>"$csv"
  echo "[serial_partition] $label W=$w sample_degree=$k: ${wall} s, peak ${peak} KiB, edge cut $cut"
}

for w in "${parts[@]}"; do
  for k in "${samples[@]}"; do
    ((w == 1 && k != 0)) && continue
    if [[ -n ${BASE_BIN:-} && $k == 0 ]]; then run base "$BASE_BIN" "$w" 0; fi
    run this "$ADAQP_BIN" "$w" "$k"
  done
done
rm -rf "$WORK/partition"
echo
echo "| binary | W | sample_degree | wall s | peak GiB | load s | METIS s | sample / whole symmetric edges | edge cut |"
echo "|---|---|---|---|---|---|---|---|---|"
tail -n +2 "$csv" | while IFS=, read -r label w k wall peak load part sample whole cut edges; do
  share=-
  [[ -n $sample ]] && share="$sample / $whole"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s (%.2f%%) |\n' "$label" "$w" "$k" "$wall" \
    "$peak" "$load" "$part" "$share" "$cut" "$(awk -v c="$cut" -v e="$edges" 'BEGIN { print 100 * c / e }')"
done
