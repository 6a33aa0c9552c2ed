#!/usr/bin/env bash
# Part distribution (partition.distribute auto, private folders) before and after ec785f8 (each
# part sent after the last one's receiver said it arrived): OLD_BIN built from ec785f8^'s
# obtain_part.cpp, NEW_BIN from ec785f8; 3 alternated rounds on the virtual cluster (root:
# network namespaces). RATE, HOSTS, NODES: the link, the hosts (one rank each, one part each) and
# the generated graph's nodes. Logs into OUT (default: beside this script).
set -euo pipefail
: "${OLD_BIN:?the adaqp binary before}" "${NEW_BIN:?the adaqp binary after}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
out=${OUT:-$(dirname "${BASH_SOURCE[0]}")}
rate=${RATE:-1gbit} hosts=${HOSTS:-4} nodes=${NODES:-200000}
for round in 1 2 3; do
  for which in old new; do
    bin=$NEW_BIN
    [[ $which == old ]] && bin=$OLD_BIN
    t=$(mktemp -d)
    mkdir -p "$t/private"
    log="$out/$rate-h$hosts-$which-$round.log"
    bash "$root/scripts/vcluster.sh" --hosts "$hosts" --bandwidth "$rate" --timeout 300 \
      --private-dir "$t/private" --private-store "$t/store" -- "$bin" train \
      --set dataset.format=synthetic --set dataset.synthetic.num_nodes="$nodes" \
      --set dataset.synthetic.seed=7 --set model.layers=2 --set model.hidden=16 \
      --set partition.parts="$hosts" --set training.epochs=1 --set training.threads=1 \
      --set training.device=cpu --set "partition.dir=$t/private/p" \
      --set "partition.local_dir=$t/private/c" --set "output.dir=$t/private/o" >"$log" 2>&1
    echo "$rate h$hosts round $round $which: $(grep -o 'start-up of the slowest rank: .*' "$log")"
    rm -rf "$t"
  done
done
