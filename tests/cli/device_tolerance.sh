#!/usr/bin/env bash
# The tolerance tests/cli/gpu_train.sh compares the CPU and CUDA runs with (DEVICE_TOL,
# tests/cli/lib/device_job.sh), checked on the CPU for margin on both sides, with the same job:
# - runs that differ only in float summation order (W=1 against W=2 and W=4: other partitions
#   sum each row's terms in other orders) agree within DEVICE_TOL / 100 (losses of every epoch and
#   the final parameters), so a correct device whose arithmetic differs more than the CPU's from
#   itself still passes;
# - a run that loses every halo row (adaqp_zero_halo: the halo messages zeroed on arrival) differs
#   by more than 10 x DEVICE_TOL in both, so a broken exchange cannot pass;
# - the epoch records' times are consistent (compare_runs.py sanity, which gpu_train.sh also runs).
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
: "${ADAQP_SOURCE_DIR:?repository root}"
: "${ADAQP_ZERO_HALO_BIN:?path of the negative control adaqp_zero_halo}"
# shellcheck source=tests/cli/lib/device_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/device_job.sh"
compare=(python3 "$ADAQP_SOURCE_DIR/tests/cli/lib/compare_runs.py")

# run BIN NAME W: the job on W workers into $tmp/NAME (partition shared by W).
run() {
  timeout 300 mpirun --oversubscribe -np "$3" "$1" train "${device_job[@]}" "${device_training[@]}" \
    --set training.device=cpu --set training.threads=1 --set "partition.parts=$3" \
    --set "partition.dir=$tmp/partition-w$3" --set "output.dir=$tmp/$2" \
    --set output.log_level=warn >"$tmp/$2.log" 2>&1 || { cat "$tmp/$2.log"; exit 1; }
}

run "$ADAQP_BIN" w1 1
tight=$(python3 -c "print($DEVICE_TOL / 100)")
for w in 2 4; do
  run "$ADAQP_BIN" "w$w" "$w"
  "${compare[@]}" losses "$tmp/w1" "$tmp/w$w" "$tight" --first 0 --params "$tight"
  "${compare[@]}" sanity "$tmp/w$w"
done
run "$ADAQP_ZERO_HALO_BIN" zero 2
loose=$(python3 -c "print($DEVICE_TOL * 10)")
if "${compare[@]}" losses "$tmp/w1" "$tmp/zero" "$loose" --first 0 >"$tmp/zero-losses.txt" 2>&1; then
  cat "$tmp/zero-losses.txt"
  echo "FAIL: losses without halo rows stay within 10 x DEVICE_TOL of the full run" >&2
  exit 1
fi
# ... and it failed on the comparison itself, not for another reason (a missing file, a crash).
grep -q "loss differs by" "$tmp/zero-losses.txt" ||
  { cat "$tmp/zero-losses.txt"; echo "FAIL: the negative control failed for another reason" >&2; exit 1; }
if "${compare[@]}" losses "$tmp/w1" "$tmp/zero" 1 --first 0 --params "$loose" \
    >"$tmp/zero-params.txt" 2>&1; then
  cat "$tmp/zero-params.txt"
  echo "FAIL: parameters without halo rows stay within 10 x DEVICE_TOL of the full run" >&2
  exit 1
fi
grep -q "parameters differ by" "$tmp/zero-params.txt" || { cat "$tmp/zero-params.txt"; exit 1; }
echo "device_tolerance: summation-order runs within $tight, a run without halo rows beyond $loose"
