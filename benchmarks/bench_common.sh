# shellcheck shell=bash
# Shared by the benchmark scripts that drive `adaqp train` (sourced, not run). bench_setup expects
# BIN and THREADS to be set by the caller; gcn_job_args (a generated graph) also DEGREE, FEAT,
# LAYERS, HIDDEN and EPOCHS.

# Checks the binary, makes OUT (a temporary directory removed on exit unless OUT is given) and
# exports what mpirun and the workers need.
bench_setup() {
  [[ -x $BIN ]] || {
    echo "error: $BIN not found (build the adaqp target or set ADAQP_BUILD_DIR)" >&2
    exit 2
  }
  if [[ -n ${OUT:-} ]]; then
    mkdir -p "$OUT"
  else
    OUT=$(mktemp -d)
    trap 'rm -rf "$OUT"' EXIT
  fi
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=$THREADS
}

# gcn_job_args NODES W: the job of every run (a GCN on the generated graph of NODES nodes, split in
# W parts, partitioned once per size and W), at full precision with the uniform scheme for the
# quantized modes; callers append their own --set overrides (later ones win).
gcn_job_args() {
  echo --set dataset.format=synthetic --set "dataset.synthetic.num_nodes=$1" \
    --set "dataset.synthetic.avg_degree=$DEGREE" --set "dataset.synthetic.feat_dim=$FEAT" \
    --set dataset.synthetic.seed=1 --set dataset.self_loops=true \
    --set "partition.parts=$2" --set "partition.dir=$OUT/partition-$1-w$2" \
    --set model.type=gcn --set "model.layers=$LAYERS" --set "model.hidden=$HIDDEN" \
    --set model.dropout=0.5 --set "training.epochs=$EPOCHS" --set "training.eval_every=$EPOCHS" \
    --set "training.threads=$THREADS" --set output.log_level=warn \
    --set communication.mode=vanilla --set communication.scheme=uniform
}
