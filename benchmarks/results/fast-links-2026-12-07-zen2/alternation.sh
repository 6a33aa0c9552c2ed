#!/usr/bin/env bash
# Runs a job over shared memory at W=2, N times per mode (Vanilla, AdaQP alternated), and samples
# each rank's resident and huge-page memory mid-run (smaps_rollup). Usage: CONFIG=<a links run's
# config.yaml> BIN=<adaqp> N=4 alternation.sh OUTDIR
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
BIN=${BIN:?adaqp binary}
CONFIG=${CONFIG:?a config.yaml}
out=${1:?}; mkdir -p $out
for i in $(seq 1 ${N:-4}); do
  for mode in vanilla adaqp; do
    run=$out/$i-$mode; rm -rf $run
    mpirun --oversubscribe --bind-to none -np 2 $BIN train --config $CONFIG \
      --set output.dir=$run --set communication.mode=$mode ${EXTRA:-} > $run.log 2>&1 &
    sleep ${SAMPLE_AT:-2.5}
    for p in $(pgrep -f "output.dir=$run" | grep -v $$); do
      [ "$(cat /proc/$p/comm 2>/dev/null)" = adaqp ] || continue
      echo "$p $(grep -E 'AnonHugePages|Rss:' /proc/$p/smaps_rollup | tr -s ' ' | tr '\n' ' ')" >> $run.thp
    done
    wait
  done
done
