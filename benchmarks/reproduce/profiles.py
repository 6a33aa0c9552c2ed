"""Sizes of the reproduction runs: `smoke` (about a minute, what the test runs), `quick` (about
ten minutes) and `full` (about forty minutes on a 2-core machine) on the CPU over the virtual
cluster; `gpu` (one GPU, NCCL between ranks, plus PyG; about 6 minutes on an H200 machine, so that
it fits a GPU session's two device calls beside the GPU checks) and `gpu-smoke` (its flow on a
small graph)."""

from dataclasses import dataclass, field
from typing import List

# The reference's objective (docs/design.md, section 6), solved at every epoch: the reproduction runs
# the paper's method; the default objective (seconds) is compared with it in benchmarks/links.
PAPER = ["communication.scheme=adaptive", "communication.objective=normalized",
         "communication.resolve_drift=0"]

# The reference's four systems (docs/design.md, section 9) as `adaqp train` settings.
MODES = {
    "vanilla": ["communication.mode=vanilla"],
    "adaqp-q": ["communication.mode=quant"] + PAPER,
    "adaqp-p": ["communication.mode=overlap"],
    "adaqp": ["communication.mode=adaqp"] + PAPER,
}

# Bit-width schemes compared at equal schedule (mode adaqp: quantized and overlapped).
SCHEMES = {
    "uniform-2": ["communication.mode=adaqp", "communication.scheme=uniform", "communication.bits=2"],
    "uniform-4": ["communication.mode=adaqp", "communication.scheme=uniform", "communication.bits=4"],
    "uniform-8": ["communication.mode=adaqp", "communication.scheme=uniform", "communication.bits=8"],
    "random": ["communication.mode=adaqp", "communication.scheme=random"],
    "adaptive": ["communication.mode=adaqp"] + PAPER,
}


@dataclass
class Generated:
    """The generated benchmark graph and the model trained on it."""

    nodes: int
    degree: int
    feat: int
    layers: int
    hidden: int


@dataclass
class Profile:
    name: str
    generated: Generated
    datasets: List[str]  # real datasets (../shared/datasets) in both tables, if present
    models: List[str]
    workers: List[int]
    epochs: int  # per throughput run; the first `warmup` are left out of the means
    warmup: int
    target_comm_share: float  # Vanilla's communication share at the calibrated bandwidth
    bandwidth_factors: List[float]  # bandwidths measured, as multiples of the calibrated one
    acc_workers: int  # W of the accuracy runs (one of `workers`)
    acc_seeds: int
    acc_epochs: int  # per accuracy run on the generated graph (real datasets: their config's)
    acc_datasets: List[str] = field(default_factory=list)  # "generated" and/or real datasets
    acc_schemes: bool = True  # also the fixed-width and random schemes (GCN), not only the modes
    # Where the runs train and how ranks talk: "cpu" over the rate-limited virtual cluster (link
    # "vcluster", calibrated bandwidth), or "cuda": every rank on the one GPU (a distinct
    # NCCL_HOSTID each), NCCL over sockets (link "nccl", no calibration).
    device: str = "cpu"
    link: str = "vcluster"
    num_classes: int = 8  # of the generated graph
    pyg: bool = False  # also PyTorch Geometric against adaqp W=1 on the generated graph
    repeats: int = 1  # throughput runs per mode, taken in turn; each mode's median is reported
    # Throughput runs on the real datasets (epochs of milliseconds): this many epochs, the first
    # `real_warmup` left out, so that the adaptive scheme has settled (its traced epochs, its
    # checks, its trial of Vanilla's schedule: about 12 epochs) before the measurement; 0: as the
    # generated graph's.
    real_epochs: int = 0
    real_warmup: int = 0


PROFILES = {
    "smoke": Profile(
        name="smoke",
        generated=Generated(nodes=4000, degree=10, feat=32, layers=3, hidden=64),
        datasets=[],
        models=["gcn"],
        workers=[2],
        epochs=4,
        warmup=2,
        target_comm_share=0.73,
        bandwidth_factors=[1.0, 4.0],
        acc_workers=2,
        acc_seeds=2,
        acc_epochs=10,
        acc_datasets=["generated"],
    ),
    "quick": Profile(
        name="quick",
        generated=Generated(nodes=50000, degree=20, feat=128, layers=3, hidden=128),
        datasets=["cora"],
        models=["gcn", "sage"],
        workers=[2, 4],
        epochs=10,  # 8 measured, 3 runs per mode: this VM's epochs vary by 10-20%
        warmup=2,
        repeats=3,
        real_epochs=32,
        real_warmup=16,
        target_comm_share=0.73,
        bandwidth_factors=[1.0, 4.0],
        acc_workers=4,
        acc_seeds=3,
        acc_epochs=100,
        acc_datasets=["cora"],
    ),
    "full": Profile(
        name="full",
        generated=Generated(nodes=100000, degree=20, feat=128, layers=3, hidden=128),
        datasets=["cora", "citeseer", "amazon-photo"],
        models=["gcn", "sage"],
        workers=[2, 4],
        epochs=8,
        warmup=2,
        repeats=3,
        target_comm_share=0.73,
        bandwidth_factors=[1.0, 4.0],
        acc_workers=4,
        acc_seeds=5,
        acc_epochs=200,
        acc_datasets=["cora", "citeseer", "amazon-photo"],
    ),
    "gpu": Profile(
        name="gpu",
        # ogbn-products' shape (degree 50, 100 features, 47 classes) at 1M nodes and 51M edges,
        # the reference's model (3 layers, hidden 256). At ogbn-products' 2.45M nodes, METIS at
        # W=2 and 4 and the 8 runs would not fit one 10-minute device call; the W=1 comparison with
        # PyG at that scale is benchmarks/pyg_compare (cuda/GPU-CHECKLIST.md, section 3).
        generated=Generated(nodes=1000000, degree=50, feat=100, layers=3, hidden=256),
        datasets=[],
        models=["gcn"],
        workers=[2, 4],
        epochs=7,
        warmup=2,
        target_comm_share=0.0,
        bandwidth_factors=[1.0],
        acc_workers=2,
        acc_seeds=2,
        acc_epochs=200,
        acc_datasets=["cora"],
        acc_schemes=False,  # the modes answer whether the GPU trains as well; schemes: CPU profiles
        device="cuda",
        link="nccl",
        num_classes=47,
        pyg=True,
    ),
    "gpu-smoke": Profile(
        name="gpu-smoke",
        generated=Generated(nodes=20000, degree=20, feat=64, layers=3, hidden=64),
        datasets=[],
        models=["gcn"],
        workers=[2],
        epochs=4,
        warmup=2,
        target_comm_share=0.0,
        bandwidth_factors=[1.0],
        acc_workers=2,
        acc_seeds=1,
        acc_epochs=20,
        acc_datasets=["generated"],
        device="cuda",
        link="nccl",
        num_classes=16,
        pyg=True,
    ),
}
