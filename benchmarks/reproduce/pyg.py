"""adaqp against PyTorch Geometric in the same reproduction run: W=1 on the generated graph, the
same model (GCN, the profile's layers and hidden width, dropout 0.5, Adam) with the same layer 0
on both sides (adaqp's feature cache; PyG with A·X computed once: pyg_train.py --layer0 cached),
on the profile's device. benchmarks/pyg_compare also compares both without the cache. Epoch time is the median over the measured epochs; on a GPU, the peak device memory in use
while each system ran is sampled with nvidia-smi (CUDA context included), and PyG's allocator peak
is reported beside it."""

import json
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


def compare(jobs, prof, python, log):
    """Rows for pyg.csv: adaqp (Vanilla, W=1) and PyG (torch.sparse CSR adjacency, cached A·X)."""
    g = prof.generated
    total = prof.warmup + prof.epochs
    jobs.partition("generated", 1)
    with GpuMemory(prof.device) as mem:
        run = jobs.train("pyg-adaqp-w1", "generated", "gcn", 1,
                         ["communication.mode=vanilla", "training.epochs=%d" % total,
                          "training.eval_every=%d" % total])
    s = metrics.steady_stats(run, prof.warmup)
    epochs, _ = metrics._records(run)
    times = [max(r["epoch_time_s"] for r in epochs[e]) for e in sorted(epochs)[prof.warmup:]]
    rows = [{"system": "adaqp", "device": prof.device, "workers": 1, "nodes": g.nodes,
             "median_epoch_s": statistics.median(times), "mean_epoch_s": s["epoch_time_s"],
             "peak_gpu_mib": mem.peak_mib(), "peak_allocated_gpu_mib": None}]
    script = Path(__file__).resolve().parents[1] / "pyg_compare" / "pyg_train.py"
    out = jobs.out / "runs" / "pyg-csr.json"
    cmd = [python, "-W", "ignore", str(script), "--data", str(jobs.graph_dir),
           "--layers", str(g.layers), "--hidden", str(g.hidden), "--dropout", "0.5",
           "--lr", "0.01", "--weight-decay", "5e-4", "--warmup", str(prof.warmup),
           "--epochs", str(prof.epochs), "--model", "gcn", "--layer0", "cached", "--adj", "csr",
           "--device", prof.device]
    log("PyG: " + " ".join(cmd[3:]))
    with GpuMemory(prof.device) as mem:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        log("PyG failed (%d): %s" % (proc.returncode, proc.stderr[-1500:]))
        rows[0]["time_vs_adaqp"] = 1.0
        rows[0]["pyg_failed"] = True  # the reproduction then ends non-zero (reproduce.py)
        return rows
    out.write_text(proc.stdout)
    pyg = json.loads(proc.stdout.strip().splitlines()[-1])
    rows.append({"system": "pyg-csr-cached", "device": prof.device, "workers": 1, "nodes": g.nodes,
                 "median_epoch_s": pyg["median_epoch_s"], "mean_epoch_s": None,
                 "peak_gpu_mib": mem.peak_mib(),
                 "peak_allocated_gpu_mib": pyg.get("peak_allocated_gpu_mib")})
    base = rows[0]["median_epoch_s"]
    for r in rows:
        r["time_vs_adaqp"] = r["median_epoch_s"] / base
    return rows


def default_python(root):
    venv = Path(root) / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable
