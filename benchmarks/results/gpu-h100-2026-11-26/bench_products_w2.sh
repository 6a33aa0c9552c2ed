set -uo pipefail
export ADAQP_BIN=$B/src/adaqp ADAQP_PYTHON=python3 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$SECONDS
DEVICE=cuda NODES=2449029 AVG_DEGREE=50 FEAT=100 CLASSES=47 WARMUP=2 EPOCHS=5 WORKERS=1 THREADS=16 \
  bash benchmarks/pyg_compare/run.sh /tmp/prod
echo "products-scale pyg_compare took $((SECONDS - t0)) s"
cp /tmp/prod/results.jsonl $OUT/products.jsonl
t0=$SECONDS
DEVICE=cuda NODES=1000000 AVG_DEGREE=50 FEAT=100 CLASSES=47 WARMUP=2 EPOCHS=5 WORKERS="1 2" THREADS=16 \
  bash benchmarks/pyg_compare/run.sh /tmp/pyg
echo "1M W=1,2 took $((SECONDS - t0)) s"
cp /tmp/pyg/results.jsonl $OUT/w2.jsonl
