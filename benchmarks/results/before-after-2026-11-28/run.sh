#!/usr/bin/env bash
# Old (ce2f6c2) and new (HEAD) adaqp alternated, 3 rounds: 200k-node generated graph, GCN 3x256,
# W=2 over shared memory, mode quant, uniform 4 bits (every message through the codec), 8 epochs,
# one thread a rank. The two binaries, built alike (no CUDA), in worktrees:
#   git worktree add /tmp/old ce2f6c2; git worktree add /tmp/newb 4d2931c; for each DIR:
#   cmake -S DIR -B DIR/build -G Ninja -DCMAKE_BUILD_TYPE=Release \
#     -DADAQP_PYTHON=$PWD/.venv/bin/python -DADAQP_WITH_CUDA=OFF && cmake --build DIR/build -t adaqp
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${1:-runs/before-after}
mkdir -p "$out"
for round in 1 2 3; do
  for side in old new; do
    bin=/tmp/newb/build/src/adaqp; [[ $side == old ]] && bin=/tmp/old/build/src/adaqp
    mpirun --bind-to none -np 2 "$bin" train --set dataset.synthetic.num_nodes=200000 \
      --set model.hidden=256 --set model.layers=3 --set training.epochs=8 --set training.threads=1 \
      --set communication.mode=quant --set communication.scheme=uniform --set communication.bits=4 --set partition.parts=2 \
      --set partition.dir="$out/partition-$side" --set output.dir="$out/r$round-$side" \
      --set output.log_level=warn > "$out/r$round-$side.log" 2>&1
    echo "round $round $side done"
  done
done
