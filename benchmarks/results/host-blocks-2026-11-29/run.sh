#!/bin/bash
# alternated rounds: plain (HEAD behaviour) vs cache; W=1 vanilla and W=2 adaqp over shm
cd /work/prof; mkdir -p hb
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
S="--set dataset.synthetic.num_nodes=200000 --set dataset.synthetic.avg_degree=20 --set dataset.synthetic.feat_dim=128 --set model.hidden=256 --set model.layers=3 --set training.epochs=8 --set training.eval_every=1 --set output.log_level=warn --set training.device=cpu --set training.threads=1"
for r in 1 2 3; do
  for v in plain cache; do
    [ $(( r % 2 )) = 0 ] && v=$([ $v = plain ] && echo cache || echo plain)
    bin=./adaqp-proto; [ $v = cache ] && bin=./adaqp-cache
    /usr/bin/time -f "%e s %M KB" -o hb/w1-$v-$r.time $bin train $S --set communication.mode=vanilla --set partition.parts=1 --set partition.dir=g200-p1 --set output.dir=hb/w1-$v-$r >/dev/null 2>&1
    mpirun --oversubscribe --bind-to none -np 2 $bin train $S --set communication.mode=adaqp --set partition.parts=2 --set partition.dir=g200-p2 --set output.dir=hb/w2-$v-$r >/dev/null 2>&1
  done
done
