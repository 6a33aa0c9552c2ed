#!/bin/bash
# Before (e9ebcc6) and after (a824fef: the CSR product on AVX2 and the vectorised dropout backward),
# alternated in every round: W=1 Vanilla, W=2 Vanilla and W=2 AdaQP over shared memory, on the
# issue 43 200k-node graph (degree 20, 128 features), GCN 3x256, one thread a rank, 8 epochs with
# evaluation every epoch. BEFORE and AFTER are the two binaries; P1, P2 their METIS partitions.
set -euo pipefail
out=${1:?output dir}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
S="--set dataset.synthetic.num_nodes=200000 --set dataset.synthetic.avg_degree=20
   --set dataset.synthetic.feat_dim=128 --set model.hidden=256 --set model.layers=3
   --set training.epochs=8 --set training.eval_every=1 --set output.log_level=warn
   --set training.device=cpu --set training.threads=1"
for r in 1 2 3; do
  order="before after"
  ((r % 2 == 0)) && order="after before"
  for v in $order; do
    bin=$BEFORE
    [[ $v == after ]] && bin=$AFTER
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e s %M KB" -o "$out/w1-vanilla-$v-$r.time" "$bin" train $S \
      --set communication.mode=vanilla --set partition.parts=1 --set partition.dir="$P1" \
      --set output.dir="$out/w1-vanilla-$v-$r" >/dev/null 2>&1
    for m in vanilla adaqp; do
      # shellcheck disable=SC2086
      mpirun --oversubscribe --bind-to none -np 2 "$bin" train $S --set communication.mode=$m \
        --set partition.parts=2 --set partition.dir="$P2" \
        --set output.dir="$out/w2-$m-$v-$r" >/dev/null 2>&1
    done
  done
done
