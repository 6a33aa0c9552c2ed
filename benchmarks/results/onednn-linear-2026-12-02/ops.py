"""libtorch's fp32 products on one CPU thread: MKL (what at::addmm / at::mm run) against oneDNN's
mkldnn::_linear_pointwise, at the quick profile's per-rank shapes (25k rows, 128 wide; 8 classes)
and at 256 wide. Median of REPEATS calls after two warm-up calls, ROUNDS rounds alternating which
library goes first; the largest absolute error of each against a float64 product."""
import statistics
import sys
import time

import torch

torch.set_num_threads(1)
lp = torch.ops.mkldnn._linear_pointwise
REPEATS, ROUNDS = 9, 3


def timed(f):
    for _ in range(2):
        f()
    t = []
    for _ in range(REPEATS):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return statistics.median(t)


def onednn(a, w, b=None):
    return lp(a, w, b, "none", [], "")


print("torch", torch.__version__, "mkldnn", torch.backends.mkldnn.is_available(), file=sys.stderr)
print("| product | shape | MKL s | oneDNN s | MKL / oneDNN | max error MKL / oneDNN |")
print("|---|---|---|---|---|---|")
g = torch.Generator().manual_seed(0)
for n, k, m in [(25000, 128, 128), (25000, 128, 8), (25000, 256, 256)]:
    x = torch.randn(n, k, generator=g)
    w = torch.randn(m, k, generator=g)
    b = torch.randn(m, generator=g)
    dy = torch.randn(n, m, generator=g)
    wt = w.t().contiguous()
    cases = [
        ("x W^T + b", (lambda: torch.nn.functional.linear(x, w, b)), (lambda: onednn(x, w, b)),
         x.double() @ w.double().t() + b.double()),
        ("dy W", (lambda: dy @ w), (lambda: onednn(dy, wt)), dy.double() @ w.double()),
        ("dy^T x", (lambda: dy.t() @ x), (lambda: onednn(dy.t(), x.t().contiguous())),
         dy.double().t() @ x.double()),
    ]
    for name, mkl, dnn, ref in cases:
        tm, td = [], []
        for r in range(ROUNDS):
            order = [(mkl, tm), (dnn, td)] if r % 2 == 0 else [(dnn, td), (mkl, tm)]
            for f, out in order:
                out.append(timed(f))
        em = (mkl() - ref).abs().max().item()
        ed = (dnn() - ref).abs().max().item()
        a, c = statistics.median(tm), statistics.median(td)
        print(f"| {name} | {n}x{k}, {m} | {a:.4f} | {c:.4f} | {a / c:.2f} | {em:.1e} / {ed:.1e} |")
