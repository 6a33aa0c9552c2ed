"""The figures of this folder's README section, from a `--profile gpu` run folder that timed out
before writing its report: python3 summarise.py RUNS_DIR (RUNS_DIR: reproduce/runs)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reproduce"))
import metrics  # noqa: E402

runs = Path(sys.argv[1])
print("throughput: slowest rank's epoch, mean of the epochs after 2 warm-up epochs")
for w in (2, 4):
    vanilla = None
    for mode in ("vanilla", "adaqp-q", "adaqp-p", "adaqp"):
        s = metrics.steady_stats(runs / ("tp-generated-gcn-w%d-0mbit-%s" % (w, mode)), 2)
        vanilla = vanilla or s["epoch_time_s"]
        print("W=%d %-8s epoch %.4f s  %.2fx Vanilla  compute %.4f  exposed comm %.4f  "
              "quant %.4f  bytes/epoch %.0f  epochs %d" % (
                  w, mode, s["epoch_time_s"], vanilla / s["epoch_time_s"], s["compute_s"],
                  s["exposed_comm_s"], s["quant_s"], s["bytes"], s["epochs_measured"]))
s = metrics.steady_stats(runs / "pyg-adaqp-w1", 2)
print("W=1 adaqp (beside PyG) epoch %.4f s" % s["epoch_time_s"])
print("accuracy: best-validation epoch's test accuracy, 200 epochs")
for run in sorted(p for p in runs.glob("acc-*") if p.is_dir()):
    try:
        best, curve = metrics.accuracy(run)
        print("%s %.4f (%d epochs)" % (run.name, best, len(curve)))
    except Exception as e:  # a run the timeout cut short has no final record
        print("%s unfinished (%s)" % (run.name, type(e).__name__))
