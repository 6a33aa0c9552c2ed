"""Runs of `adaqp`: the job arguments of every run, partitioning once per dataset and W, training
under plain mpirun (shared memory) or on the rate-limited virtual cluster (scripts/vcluster.sh)."""

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path


class RunError(Exception):
    pass


def _mpi_env():
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    return env


def _stop(proc, grace_s):
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _run(cmd, log_path, timeout_s, cwd):
    """Runs cmd with its output in log_path. RunError with the log's tail on failure or timeout
    (the command is then stopped: SIGTERM, which the virtual cluster answers by removing what it
    created)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=_mpi_env(), cwd=cwd, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _stop(proc, 60)
            rc = "timeout after %d s" % timeout_s
        except BaseException:
            # The reproduction itself is being stopped (under a deadline): its own session's run
            # too, quickly enough to leave time for the report.
            _stop(proc, 30)
            raise
    if rc != 0:
        tail = Path(log_path).read_text(errors="replace").splitlines()[-15:]
        raise RunError("%s failed (%s); log %s:\n  %s" % (" ".join(cmd[:6]) + " ...", rc, log_path,
                                                          "\n  ".join(tail)))


def has_summary(run_dir):
    metrics = Path(run_dir) / "metrics.jsonl"
    return metrics.is_file() and '"event":"summary"' in metrics.read_text()


class Jobs:
    """Builds and launches the runs of one reproduction; every run writes under out/."""

    def __init__(self, root, binary, out, shared, generated, resume, timeout_s, device="cpu",
                 num_classes=8):
        self.root = Path(root)
        self.binary = str(binary)
        self.out = Path(out)
        self.shared = Path(shared)
        self.generated = generated
        self.resume = resume
        self.timeout_s = timeout_s
        self.device = device
        self.num_classes = num_classes
        self.graph_dir = None  # the generated graph as files (write_generated)
        self.runs_done = 0

    def synthetic_sets(self):
        g = self.generated
        return ["dataset.format=synthetic", "dataset.synthetic.num_nodes=%d" % g.nodes,
                "dataset.synthetic.avg_degree=%d" % g.degree,
                "dataset.synthetic.feat_dim=%d" % g.feat,
                "dataset.synthetic.num_classes=%d" % self.num_classes,
                "dataset.synthetic.seed=1"]

    def generated_shape(self):
        """The generated graph's shape as a name: another profile's graph or partitions in the same
        --out are not taken for this one's."""
        g = self.generated
        return "n%d-d%d-f%d-c%d" % (g.nodes, g.degree, g.feat, self.num_classes)

    def write_generated(self):
        """Writes the generated graph once in the NumPy layout (`adaqp generate`), so that every
        run, and PyTorch Geometric, reads the same files; returns its directory."""
        self.graph_dir = self.out / ("graph-" + self.generated_shape())
        if not self.graph_dir.exists():
            cmd = [self.binary, "generate", "--out", str(self.graph_dir)]
            for s in self.synthetic_sets():
                cmd += ["--set", s]
            _run(cmd, str(self.graph_dir) + ".log", self.timeout_s, self.root)
        return self.graph_dir

    def dataset_args(self, dataset):
        if dataset == "generated":
            g = self.generated
            if self.graph_dir is not None:
                data = ["--set", "dataset.format=numpy", "--set", "dataset.path=%s" % self.graph_dir,
                        "--set", "dataset.self_loops=true"]
            else:
                data = []
                for s in self.synthetic_sets():
                    data += ["--set", s]
            return data + ["--set", "model.layers=%d" % g.layers,
                           "--set", "model.hidden=%d" % g.hidden]
        config = self.root / "configs" / (dataset + ".yaml")
        return ["--config", str(config), "--set", "dataset.path=%s" % (self.shared / dataset)]

    def partition_dir(self, dataset, workers):
        name = dataset + ("-" + self.generated_shape() if dataset == "generated" else "")
        return self.out / "partitions" / ("%s-w%d" % (name, workers))

    def job_args(self, dataset, workers):
        return self.dataset_args(dataset) + [
            "--set", "partition.parts=%d" % workers,
            "--set", "partition.dir=%s" % self.partition_dir(dataset, workers)]

    def partition(self, dataset, workers):
        """Partitions once (outside any shaped cluster) and returns `adaqp info --covers --json`."""
        pdir = self.partition_dir(dataset, workers)
        args = self.job_args(dataset, workers)
        if not pdir.exists():  # the partition store writes its directory atomically
            pdir.parent.mkdir(parents=True, exist_ok=True)
            _run([self.binary, "partition"] + args, str(pdir) + ".log", self.timeout_s, self.root)
        info = subprocess.run([self.binary, "info"] + args +
                              ["--partition", str(pdir), "--covers", "--json"],
                              capture_output=True, text=True, env=_mpi_env(), cwd=self.root)
        if info.returncode != 0:
            raise RunError("adaqp info on %s failed:\n%s" % (pdir, info.stderr[-2000:]))
        return json.loads(info.stdout)

    def train(self, name, dataset, model, workers, sets, bandwidth_mbit=None):
        """Trains one job; returns its output directory. With bandwidth_mbit, one rank per host of
        a virtual cluster whose links run at that rate; otherwise plain mpirun (on CUDA every rank
        on the one GPU, each with its own NCCL_HOSTID, so that NCCL connects them over
        sockets)."""
        run_dir = self.out / "runs" / name
        if self.resume and has_summary(run_dir):
            return run_dir
        if run_dir.exists():
            shutil.rmtree(run_dir)
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        args = [self.binary, "train"] + self.job_args(dataset, workers) + [
            "--set", "model.type=%s" % model, "--set", "training.threads=1",
            "--set", "output.log_level=warn", "--set", "output.dir=%s" % run_dir,
            "--set", "training.device=%s" % self.device]
        if self.device == "cuda":
            args[args.index("training.threads=1")] = "training.threads=0"
        for s in sets:
            args += ["--set", s]
        if bandwidth_mbit is None and self.device == "cuda":
            cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(workers), "bash",
                   "-c", 'NCCL_HOSTID=adaqp-reproduce-$OMPI_COMM_WORLD_RANK exec "$0" "$@"'] + args
        elif bandwidth_mbit is None:
            cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(workers)] + args
        else:
            cmd = [str(self.root / "scripts" / "vcluster.sh"), "--hosts", str(workers),
                   "--bandwidth", "%dmbit" % bandwidth_mbit, "--timeout", str(self.timeout_s),
                   "--"] + args
        start = time.monotonic()
        _run(cmd, str(run_dir) + ".log", self.timeout_s + 60, self.root)
        if not has_summary(run_dir):
            raise RunError("%s finished without a summary record (log %s.log)" % (name, run_dir))
        self.runs_done += 1
        print("[reproduce]   %s: %.1f s" % (name, time.monotonic() - start), flush=True)
        return run_dir
