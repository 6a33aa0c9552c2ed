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

# cora_vanilla_run SEED: prints the directory of the Vanilla run of SEED that the fixture
# accuracy_cora_baseline.sh trained (same configuration as run_cora_w4 ... --set
# communication.mode=vanilla); fails when the fixture did not produce it.
cora_vanilla_run() {
  local run="${ADAQP_ACCURACY_RUNS:?directory of the shared Vanilla runs}/vanilla-s$1"
  if [[ ! -f "$run/metrics.jsonl" ]]; then
    echo "FAIL: no Vanilla run $run (ctest runs accuracy_cora_baseline first)" >&2
    return 1
  fi
  echo "$run"
}

# link_cora_vanilla SEED: makes that run visible as $tmp/vanilla-sSEED.
link_cora_vanilla() {
  local run
  run=$(cora_vanilla_run "$1")
  ln -s "$run" "$tmp/vanilla-s$1"
}
