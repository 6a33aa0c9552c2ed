# shellcheck shell=bash
# Sourced by the Cora accuracy tests (not a test itself: ctest runs tests/cli/*.sh only). Expects
# ADAQP_BIN, ADAQP_SOURCE_DIR, $cora (the shared dataset) and $tmp (the test's scratch directory).

# run_cora_w4 NAME SEED ARGS...: trains configs/cora.yaml on 4 workers for 200 epochs into
# $tmp/NAME-sSEED (the partition is shared by all runs); ends the test on failure with the log.
# shellcheck disable=SC2154  # cora and tmp are set by the sourcing test
run_cora_w4() {
  local name=$1 seed=$2
  shift 2
  if ! timeout 300 mpirun --oversubscribe -np 4 "$ADAQP_BIN" train \
      --config "$ADAQP_SOURCE_DIR/configs/cora.yaml" --set "dataset.path=$cora" \
      --set partition.parts=4 --set "partition.dir=$tmp/partition" \
      --set "output.dir=$tmp/$name-s$seed" --set "training.seed=$seed" --set training.epochs=200 \
      --set training.threads=1 --set training.device=cpu --set output.log_level=warn "$@" >"$tmp/$name-s$seed.log" 2>&1; then
    cat "$tmp/$name-s$seed.log"
    echo "FAIL: $name seed $seed" >&2
    exit 1
  fi
}
