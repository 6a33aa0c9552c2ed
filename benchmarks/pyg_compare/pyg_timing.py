"""The timed training loop of the PyG sides of the benchmarks (pyg_train.py, and
benchmarks/hetero/pyg_rgcn.py): every epoch is zero_grad, forward and loss, backward and the
optimiser's step, timed on the host; on a GPU each epoch starts and ends with a synchronisation, so
its time is the device's."""
import resource
import statistics
import time

import torch


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def train_epochs(opt, loss_fn, warmup, epochs, device):
    """Runs warmup + epochs epochs of `loss_fn` (the epoch's loss) under `opt`; returns every
    epoch's seconds and the last loss."""
    times = []
    loss = None
    for _ in range(warmup + epochs):
        sync(device)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        sync(device)
        times.append(time.perf_counter() - t0)
    return times, loss.item()


def timing_fields(times, warmup, setup_s, final_loss, device):
    """The result row's timing and memory fields: the median and minimum of the epochs after the
    warm-up, every epoch's time, the set-up time, the peak resident memory and, on a GPU, the
    allocator's peak device memory."""
    measured = times[warmup:]
    row = {"epochs_measured": len(measured), "epoch_times_s": times,
           "median_epoch_s": statistics.median(measured), "min_epoch_s": min(measured),
           "setup_s": setup_s,
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "final_loss": final_loss}
    if device.type == "cuda":
        row["peak_allocated_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
        row["peak_reserved_gpu_mib"] = torch.cuda.max_memory_reserved() / 2**20
    return row
