#!/usr/bin/env bash
# Peak memory by phase, as `adaqp train` reports it (metrics.jsonl: peak_rss_bytes per epoch and
# rank, the summary's per-rank peaks of partition, load, startup and training), checked against the
# kernel's own accounting read by GNU time: a rank resets its peak at the start of every epoch, so
# the peak GNU time reports for a rank (getrusage, at exit) is the peak of its last epoch and what
# followed it. After the last epoch a rank holds less than during it (the process leaves without
# libraries' destructors, whose pages, faulted in at exit, once added about 110 MiB; the checked
# job's epochs hold about 0.6 GiB), and the two must agree within 3%. And the reported peak
# grows with the job: by at least half of the activations the larger job adds. The host tensor
# bytes (memory.host_tensor_peak_bytes) lie below the resident peak in every phase and, in training,
# hold at least the activations the model keeps. The wall time by phase (seconds_by_phase) fits in
# the process's elapsed time by GNU time.
# shellcheck source=tests/cli/lib/cli_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/adaqp.sh"
py=${ADAQP_PYTHON:-python3}
[[ -x /usr/bin/time ]] || skip_or_fail "GNU time (/usr/bin/time) is not installed (scripts/setup.sh)" 

run() {  # run NAME NODES HIDDEN
  local out="$tmp/$1" job
  mkdir -p "$out"
  mapfile -t job < <(synthetic_graph "$2" feat_dim=64; gnn_model 3 "$3"
    set_pairs partition.parts=2 communication.mode=vanilla training.epochs=3 training.threads=1 \
      training.device=cpu "output.dir=$out" "partition.dir=$tmp/part-$1" output.log_level=info)
  # shellcheck disable=SC2016
  mpirun --oversubscribe -np 2 bash -c \
    'exec /usr/bin/time -f "%M %e" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' "$out" \
    "$ADAQP_BIN" train "${job[@]}" >"$out/log" 2>&1 ||
    { cat "$out/log"; echo "FAIL: $1" >&2; exit 1; }
}
run small 20000 64
run large 100000 512

"$py" - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
def load(name):
    recs = [json.loads(l) for l in open(f"{tmp}/{name}/metrics.jsonl")]
    return [r for r in recs if "epoch" in r and "event" not in r], recs[-1]
training = {}
for name in ("small", "large"):
    epochs, summary = load(name)
    mem = summary["memory"]
    assert mem["phases"] == ["partition", "load", "startup", "training"], mem
    assert mem["per_phase_peaks"] is True, "the kernel did not let the peaks be reset"
    peaks = mem["peak_rss_bytes"]
    assert len(peaks) == 2 and all(len(p) == 4 and min(p) > 0 for p in peaks), peaks
    for rank in (0, 1):
        mine = [r for r in epochs if r["rank"] == rank]
        assert len(mine) == 3 and all(r["peak_rss_bytes"] > 0 for r in mine), mine
        # The training phase's peak is the largest epoch's.
        assert peaks[rank][3] == max(r["peak_rss_bytes"] for r in mine), (peaks[rank], mine)
        kib, elapsed = open(f"{tmp}/{name}/rss.{rank}").read().split()[-2:]
        gnu = int(kib) * 1024
        # The phases' wall times (summary seconds_by_phase) fit in the process's elapsed time by
        # GNU time, and cover most of it (the rest: MPI and libtorch start-up and exit).
        phase_s = summary["seconds_by_phase"][rank]
        assert len(phase_s) == 4 and min(phase_s) > 0, phase_s
        assert sum(phase_s) <= float(elapsed) + 0.01, (phase_s, elapsed)
        if name == "large":
            assert sum(phase_s) >= 0.5 * float(elapsed), (phase_s, elapsed)
        last = mine[-1]["peak_rss_bytes"]
        print(f"{name} rank {rank}: last epoch {last / 2**20:.1f} MiB, GNU time {gnu / 2**20:.1f} MiB, "
              f"phases {[round(p / 2**20) for p in peaks[rank]]} MiB")
        if name == "large":
            assert abs(gnu - last) <= 0.03 * gnu, f"rank {rank}: {last} reported, {gnu} by the kernel"
    training[name] = max(p[3] for p in peaks)
    # Host tensors: a part of the resident set in every phase (a count that missed frees would
    # pass it within an epoch), and in training at least the three n x hidden activations of the
    # two ranks' owned nodes together (n: all the graph's nodes), which the model keeps for
    # backward (a count that missed allocations would fall short).
    tensors = mem["host_tensor_peak_bytes"]
    for rank in (0, 1):
        assert all(0 <= t < r for t, r in zip(tensors[rank], peaks[rank])), (tensors, peaks)
    nodes, hidden = {"small": (20000, 64), "large": (100000, 512)}[name]
    held = sum(t[3] for t in tensors)
    print(f"{name}: host tensors at the training peak {held / 1e6:.1f} MB, both ranks")
    assert held >= 3 * nodes * hidden * 4, held
# At least three n x hidden activations live at once: 3 * (50,000 * 512 - 10,000 * 64) floats more
# per rank in the large job.
assert training["large"] - training["small"] > 0.5 * 3 * (50000 * 512 - 10000 * 64) * 4, training
print("OK")
PY
