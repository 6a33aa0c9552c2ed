"""Reading a run's metrics.jsonl (one record per epoch and rank, a summary, the link model) into
the figures of the tables."""

import json
import statistics
from pathlib import Path

BREAKDOWN = ["compute_s", "exposed_comm_s", "reduce_s", "assign_s"]


def _records(run_dir):
    rows = [json.loads(line) for line in (Path(run_dir) / "metrics.jsonl").read_text().splitlines()
            if line.strip()]
    epochs = {}
    for r in rows:
        if "epoch" in r and "event" not in r:
            epochs.setdefault(r["epoch"], []).append(r)
    summary = next(r for r in rows if r.get("event") == "summary")
    return epochs, summary


def steady_stats(run_dir, warmup):
    """Means over the epochs after `warmup` of the slowest rank's record of each epoch (its
    parts add up to its epoch time: compute + exposed communication + reduce + assignment), and
    the bytes all ranks sent per epoch. bits: this run's message widths summed over ranks and
    steady epochs, {"fwd"|"bwd": [[n2, n4, n8] per layer]} (adaptive runs only)."""
    epochs, _ = _records(run_dir)
    use = sorted(epochs)[warmup:] or sorted(epochs)[-1:]
    parts = {k: [] for k in BREAKDOWN + ["epoch_time_s", "comm_s", "quant_s", "bytes"]}
    bits = None
    for e in use:
        recs = epochs[e]
        slow = max(recs, key=lambda r: r["epoch_time_s"])
        assign = slow.get("assign_time_s", 0.0)
        parts["epoch_time_s"].append(slow["epoch_time_s"])
        parts["compute_s"].append(slow["local_agg_time_s"] + slow["halo_agg_time_s"] +
                                  slow["dense_time_s"] - assign)
        parts["exposed_comm_s"].append(slow["exposed_comm_time_s"])
        parts["reduce_s"].append(slow["reduce_time_s"])
        parts["assign_s"].append(assign)
        parts["comm_s"].append(slow["comm_time_s"])
        parts["quant_s"].append(slow["quant_time_s"])
        parts["bytes"].append(sum(r["bytes_sent"] for r in recs))
        if "bits_hist" in recs[0]:
            if bits is None:
                bits = {d: [[0] * len(WIDTHS) for _ in recs[0]["bits_hist"][d]]
                        for d in ("fwd", "bwd")}
            for r in recs:
                for d in ("fwd", "bwd"):
                    for layer, hist in enumerate(r["bits_hist"][d]):
                        for i, n in enumerate(hist):
                            bits[d][layer][i] += n
    out = {k: statistics.fmean(v) for k, v in parts.items()}
    out["epochs_measured"] = len(use)
    out["bits"] = bits
    out["bits_epochs"] = len(use)
    return out


def accuracy(run_dir):
    """(test accuracy at the best validation accuracy, [test accuracy per evaluated epoch])."""
    epochs, summary = _records(run_dir)
    curve = [(e, epochs[e][0]["test_acc"]) for e in sorted(epochs) if "test_acc" in epochs[e][0]]
    return summary["test_acc_at_best_val"], curve


# The widths of metrics.jsonl's bits_hist: 2, 4 and 8 bits, and full precision.
WIDTHS = (2, 4, 8, 32)


def packed_row_bytes(width, bits):
    """Bytes of one quantized row on the wire: packed codes plus float32 min and step."""
    return (width * bits + 7) // 8 + 8


def message_bytes(width, bits):
    """Bytes of one message at `bits` (32: a float32 row, no metadata)."""
    return 4 * width if bits == 32 else packed_row_bytes(width, bits)


def exchange_widths(info, layers, hidden):
    """Width of the rows each layer exchanges (layer 0 is served by the feature cache): layers
    after the first aggregate min(input, output) columns (narrowing layers aggregate after the
    dense product)."""
    classes = info["dataset"]["num_classes"]
    return [min(hidden, classes if layer == layers - 1 else hidden) for layer in range(1, layers)]


def predicted_bytes(info, layers, hidden, bits=None, hist=None, epochs=1):
    """Bytes all ranks send per epoch for the partition in `info` (adaqp info --json): every
    exchanged layer moves each boundary row forward and each halo row backward (both counts
    equal the partition's exchange_rows). bits=None: float32 rows; an int: uniform width; hist:
    the measured per-message widths (sum over `epochs` epochs)."""
    rows = info["partition"]["exchange_rows"]
    widths = exchange_widths(info, layers, hidden)
    if hist is not None:
        total = 0
        for d in ("fwd", "bwd"):
            for layer, w in enumerate(widths, start=1):
                n = hist[d][layer]
                total += sum(c * message_bytes(w, b) for c, b in zip(n, WIDTHS))
        return total / epochs
    if bits is None:
        return sum(2 * rows * 4 * w for w in widths)
    return sum(2 * rows * packed_row_bytes(w, bits) for w in widths)
