"""adaqp against PyTorch Geometric in the same reproduction run: W=1 on the generated graph, the
same model (GCN, the profile's layers and hidden width, dropout 0.5, Adam) with the same layer 0
on both sides (adaqp's feature cache; PyG with A·X computed once: pyg_train.py --layer0 cached),
on the profile's device and threads, in 3 rounds alternating which runs first.
benchmarks/pyg_compare also compares both without the cache. Epoch time is the median over the
measured epochs of a run, reported as the median of the rounds' with their spread; on a GPU, the peak device memory in use
while each system ran is sampled with nvidia-smi (CUDA context included), and PyG's allocator peak
is reported beside it."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import metrics


class GpuMemory:
    """Peak GPU memory in use (MiB) over a block, above what was in use when it began."""

    def __init__(self, device):
        self.active = device == "cuda" and shutil.which("nvidia-smi") is not None
        self.samples = []

    def _sample(self):
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True).stdout.split()
        return max(float(v) for v in out) if out else 0.0

    def __enter__(self):
        if self.active:
            self.base = self._sample()
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()
        return self

    def _loop(self):
        while not self.stop.is_set():
            self.samples.append(self._sample())
            time.sleep(0.1)

    def __exit__(self, *exc):
        if self.active:
            self.stop.set()
            self.thread.join()

    def peak_mib(self):
        return max(self.samples) - self.base if self.active and self.samples else None


# Rounds of the pair, alternating which side runs first (the project's rule for a peer).
ROUNDS = 3


def _threads(device):
    """Compute threads of both sides: one on the CPU (the reproduction's setting for adaqp), every
    core the process may use on CUDA (adaqp's training.threads 0 there, jobs.train)."""
    return 1 if device == "cpu" else len(os.sched_getaffinity(0))


def compare(jobs, prof, python, log):
    """Rows for pyg.csv: adaqp (Vanilla, W=1) and PyG (torch.sparse CSR adjacency, cached A·X) on
    the same threads, ROUNDS rounds alternating which runs first: per system the median of the
    rounds' median epochs, their spread, and every round's."""
    g = prof.generated
    total = prof.warmup + prof.epochs
    threads = _threads(prof.device)
    jobs.partition("generated", 1)
    script = Path(__file__).resolve().parents[1] / "pyg_compare" / "pyg_train.py"
    cmd = [python, "-W", "ignore", str(script), "--data", str(jobs.graph_dir),
           "--layers", str(g.layers), "--hidden", str(g.hidden), "--dropout", "0.5",
           "--lr", "0.01", "--weight-decay", "5e-4", "--warmup", str(prof.warmup),
           "--epochs", str(prof.epochs), "--model", "gcn", "--layer0", "cached", "--adj", "csr",
           "--device", prof.device, "--threads", str(threads)]
    log("PyG: " + " ".join(cmd[3:]))
    sides = {"adaqp": {"medians": [], "means": [], "peak": [], "allocated": []},
             "pyg-csr-cached": {"medians": [], "means": [], "peak": [], "allocated": []}}

    def run_adaqp(r):
        with GpuMemory(prof.device) as mem:
            run = jobs.train("pyg-adaqp-w1-r%d" % r, "generated", "gcn", 1,
                             ["communication.mode=vanilla", "training.epochs=%d" % total,
                              "training.eval_every=%d" % total])
        epochs, _ = metrics._records(run)
        times = [max(x["epoch_time_s"] for x in epochs[e]) for e in sorted(epochs)[prof.warmup:]]
        side = sides["adaqp"]
        side["medians"].append(statistics.median(times))
        side["means"].append(metrics.steady_stats(run, prof.warmup)["epoch_time_s"])
        side["peak"].append(mem.peak_mib())

    def run_pyg(r):
        with GpuMemory(prof.device) as mem:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            log("PyG failed (%d): %s" % (proc.returncode, proc.stderr[-1500:]))
            return False
        (jobs.out / "runs" / ("pyg-csr-r%d.json" % r)).write_text(proc.stdout)
        pyg = json.loads(proc.stdout.strip().splitlines()[-1])
        side = sides["pyg-csr-cached"]
        side["medians"].append(pyg["median_epoch_s"])
        side["peak"].append(mem.peak_mib())
        side["allocated"].append(pyg.get("peak_allocated_gpu_mib"))
        return True

    pyg_ok = True
    for r in range(ROUNDS):
        for side in (("adaqp", "pyg") if r % 2 == 0 else ("pyg", "adaqp")):
            if side == "adaqp":
                run_adaqp(r)
            elif pyg_ok:  # a failed PyG ends the comparison's PyG side
                pyg_ok = run_pyg(r)

    def peak(values):
        values = [v for v in values if v is not None]
        return max(values) if values else None

    rows = []
    for system, side in sides.items():
        if not side["medians"]:
            continue
        rows.append({"system": system, "device": prof.device, "workers": 1, "nodes": g.nodes,
                     "threads": threads, "rounds": len(side["medians"]),
                     "median_epoch_s": statistics.median(side["medians"]),
                     "min_epoch_s": min(side["medians"]), "max_epoch_s": max(side["medians"]),
                     "round_epoch_s": side["medians"],
                     "mean_epoch_s": statistics.fmean(side["means"]) if side["means"] else None,
                     "peak_gpu_mib": peak(side["peak"]),
                     "peak_allocated_gpu_mib": peak(side["allocated"])})
    if not pyg_ok:
        rows[0]["pyg_failed"] = True  # the reproduction then ends non-zero (reproduce.py)
    base = rows[0]["median_epoch_s"]
    for r in rows:
        r["time_vs_adaqp"] = r["median_epoch_s"] / base
    return rows


def default_python(root):
    venv = Path(root) / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable
