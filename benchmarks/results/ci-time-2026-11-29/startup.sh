#!/usr/bin/env bash
# Process start-up before and after libtorch_cuda left the link (82fe61b), alternated in ROUNDS
# rounds: `adaqp --version` ten times (mean wall per call), and a 2-rank CPU training of a tiny
# generated graph (2 epochs) under mpirun, with and without OMPI_MCA_pml=ob1 (wall, and the
# CPU time of mpirun and its ranks from GNU time).
# Usage: startup.sh BEFORE_BIN AFTER_BIN OUT_DIR [ROUNDS]
set -euo pipefail
before=$1 after=$2 out=$3 rounds=${4:-5}
mkdir -p "$out"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/adaqp.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mapfile -t job < <(synthetic_graph 600 seed=3; gnn_model 2 8 type=gcn)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
raw=$out/startup.jsonl
: >"$raw"
for round in $(seq "$rounds"); do
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    s=$(date +%s.%N)
    for _ in $(seq 10); do "$bin" --version >/dev/null; done
    e=$(date +%s.%N)
    version_s=$(python3 -c "print(($e - $s) / 10)")
    for pml in default ob1; do
      envs=()
      [ "$pml" = ob1 ] && envs=(OMPI_MCA_pml=ob1)
      rm -rf "$tmp/run"
      env "${envs[@]}" /usr/bin/time -f '%e %U %S' -o "$tmp/time" mpirun --oversubscribe --bind-to none -np 2 \
        "$bin" train "${job[@]}" --set partition.parts=2 --set "partition.dir=$tmp/part-$side" \
        --set "output.dir=$tmp/run" --set training.epochs=2 --set training.threads=1 \
        --set training.device=cpu --set output.log_level=warn >"$tmp/log" 2>&1 ||
        { cat "$tmp/log"; exit 1; }
      read -r wall user sys <"$tmp/time"
      printf '{"round": %d, "side": "%s", "pml": "%s", "version_s": %s, "train_wall_s": %s, "train_cpu_s": %s}\n' \
        "$round" "$side" "$pml" "$version_s" "$wall" "$(python3 -c "print($user + $sys)")" >>"$raw"
    done
  done
done
python3 - "$raw" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(side, pml, key):
    v = [r[key] for r in rows if r["side"] == side and r["pml"] == pml]
    return f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})"
print("| | before | after |")
print("|---|---|---|")
print(f"| `adaqp --version`, s a call | {med('before', 'default', 'version_s')} | {med('after', 'default', 'version_s')} |")
for pml in ("default", "ob1"):
    print(f"| 2-rank training ({pml} pml), wall s | {med('before', pml, 'train_wall_s')} | {med('after', pml, 'train_wall_s')} |")
    print(f"| 2-rank training ({pml} pml), CPU s | {med('before', pml, 'train_cpu_s')} | {med('after', pml, 'train_cpu_s')} |")
PY
