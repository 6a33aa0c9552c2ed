"""The reproduction's tables: CSV files, results.md and meta.json, each written to a temporary
name first and renamed, so an interrupted run leaves no half-written table."""

import csv
import io
import json
import statistics
from pathlib import Path

from profiles import MODES, SCHEMES

MODE_TITLES = {"vanilla": "Vanilla", "adaqp-q": "AdaQP-q", "adaqp-p": "AdaQP-p", "adaqp": "AdaQP"}
TP_COLUMNS = ["dataset", "model", "workers", "bandwidth_mbit", "mode", "epochs_per_s",
              "epoch_time_s", "epoch_time_min_s", "epoch_time_max_s", "epoch_times_s", "speedup", "vanilla_comm_share", "bound", "fraction_of_bound",
              "compute_s", "exposed_comm_s", "reduce_s", "assign_s", "comm_s", "quant_s",
              "bytes_per_epoch", "bytes_predicted", "bytes_match", "exchange_rows", "cover_rows",
              "epochs_measured"]


def _atomic_write(path, text):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _csv(path, columns, rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (round(v, 6) if isinstance(v, float) else
                        " ".join("%.6g" % x for x in v) if isinstance(v, list) else v)
                    for k, v in r.items() if k in columns})
    _atomic_write(path, buf.getvalue())


def _mean_std(values):
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def accuracy_summary(acc_rows):
    groups = {}
    for r in acc_rows:
        groups.setdefault((r["dataset"], r["model"], r["variant"]), []).append(100 * r["test_acc"])
    out = []
    for (dataset, model, variant), values in groups.items():
        mean, std = _mean_std(values)
        out.append({"dataset": dataset, "model": model, "variant": variant, "seeds": len(values),
                    "mean": mean, "std": std})
    return out


def curve_rows(curves, tp_rows, workers, bandwidths):
    """Mean test accuracy per epoch over seeds, against wall-clock time = epoch x the mode's
    measured epoch time (GCN, W = `workers`, the calibrated bandwidth) on the virtual cluster."""
    rows = []
    for (dataset, mode), runs in sorted(curves.items()):
        tp = [r for r in tp_rows if r["dataset"] == dataset and r["model"] == "gcn" and
              r["workers"] == workers and r["mode"] == mode and
              r["bandwidth_mbit"] == bandwidths[workers]]
        if not tp:
            continue
        for i, (epoch, _) in enumerate(runs[0]):
            acc = statistics.fmean(run[i][1] for run in runs)
            rows.append({"dataset": dataset, "mode": mode, "epoch": epoch,
                         "time_s": epoch * tp[0]["epoch_time_s"], "test_acc": 100 * acc})
    return rows


def bits_rows(tp_rows):
    rows = []
    for r in tp_rows:
        if r["bits"] is None:
            continue
        for d in ("fwd", "bwd"):
            for layer, hist in enumerate(r["bits"][d]):
                total = sum(hist)
                if total == 0:
                    continue
                rows.append({"dataset": r["dataset"], "model": r["model"], "workers": r["workers"],
                             "bandwidth_mbit": r["bandwidth_mbit"], "mode": r["mode"],
                             "layer": layer, "direction": d, "messages": total,
                             "share_2": hist[0] / total, "share_4": hist[1] / total,
                             "share_8": hist[2] / total, "share_32": hist[3] / total})
    return rows


def markdown(meta, tp_rows, summary, bits, pyg_rows):
    cal = meta["calibrated_mbit"]
    gpu = meta.get("device") == "cuda"

    def link(bandwidth_mbit):
        """A row's link: a virtual cluster's rate; 0: NCCL between ranks on one GPU (or shared
        memory when a gpu profile's flow runs on the CPU)."""
        return "%d" % bandwidth_mbit if bandwidth_mbit else ("NCCL" if gpu else "shm")

    lines = ["# AdaQP reproduction: profile `%s`" % meta["profile"], "",
             "- Date: %s; commit %s; machine: %s%s." % (
                 meta["date"], meta["commit"], meta["machine"],
                 "; GPU: %s" % meta["gpu"] if meta.get("gpu") else ""),
             "- Command: `%s` (%.1f min, %d runs)." % (meta["command"], meta["wall_s"] / 60,
                                                      meta["runs"]),
             "- Throughput: %s, every figure the mean over the measured epochs of the slowest "
             "rank's epoch%s; accuracy: plain mpirun, W=%d, test accuracy at the best validation "
             "accuracy, %d seeds." % (
                 "every rank on the one GPU (training.device=cuda), NCCL between them over its "
                 "socket transport (a distinct NCCL_HOSTID per rank)" if gpu else
                 "one rank per host of the virtual cluster (scripts/vcluster.sh)"
                 if meta.get("link", "vcluster") == "vcluster" else
                 "plain mpirun on the CPU over shared memory (a gpu profile's flow, --device cpu)",
                 ", of the median of %d runs per mode taken in turn (each row's "
                 "epoch_times_s in throughput.csv holds them all)" % meta["repeats"]
                 if meta.get("repeats", 1) > 1 else "",
                 meta["acc_workers"], meta["acc_seeds"])]
    if meta.get("stopped"):
        lines.append("- **Unfinished**: stopped by %s; the tables hold the runs finished before "
                     "(`--resume` goes on from them)." % meta["stopped"])
    lines.append("")
    if meta["calibration"]:
        lines += ["## Bandwidth", "",
                  "Calibrated so that Vanilla (GCN, generated graph) communicates about the target "
                  "share of its epoch; then also measured at %s times that rate." %
                  " and ".join(str(f) for f in meta["bandwidth_factors"] if f != 1.0), "",
                  "| W | measured Mbit/s | Vanilla comm share |", "|---|---|---|"]
        lines += ["| %d | %d | %.1f%% |" % (c["workers"], c["bandwidth_mbit"],
                                             100 * c["comm_share"])
                  for c in meta["calibration"]]
        lines += ["", "Calibrated: " +
                  ", ".join("W=%s: %s Mbit/s" % (w, b) for w, b in cal.items()), ""]
    if pyg_rows:
        lines += ["## adaqp against PyTorch Geometric (W=1, same graph, device, threads and run)",
                  "", "Median of %d rounds alternating which side runs first (min-max)." %
                  pyg_rows[0]["rounds"], "",
                  "| system | device | threads | epoch s (median) | time / adaqp "
                  "| peak GPU MiB in use | PyG allocator peak MiB |",
                  "|---|---|---|---|---|---|---|"]
        for r in pyg_rows:
            lines.append("| %s | %s | %d | %.4f (%.4f-%.4f) | %.2fx | %s | %s |" % (
                r["system"], r["device"], r["threads"], r["median_epoch_s"], r["min_epoch_s"],
                r["max_epoch_s"], r["time_vs_adaqp"],
                "-" if r["peak_gpu_mib"] is None else "%.0f" % r["peak_gpu_mib"],
                "-" if r["peak_allocated_gpu_mib"] is None else
                "%.0f" % r["peak_allocated_gpu_mib"]))
        lines.append("")

    lines += ["## Throughput (epochs/s; speed-up over Vanilla)", "",
              "f = Vanilla's communication share; no overlap can beat 1/(1-f).", "",
              "| dataset | model | W | Mbit/s | f | 1/(1-f) | " +
              " | ".join(MODE_TITLES[m] for m in MODES) + " | AdaQP / bound |",
              "|" + "---|" * (7 + len(MODES))]
    keys = []
    for r in tp_rows:
        k = (r["dataset"], r["model"], r["workers"], r["bandwidth_mbit"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        by = {r["mode"]: r for r in tp_rows
              if (r["dataset"], r["model"], r["workers"], r["bandwidth_mbit"]) == k}
        v = by["vanilla"]
        cells = ["%.2f (%.2fx)" % (by[m]["epochs_per_s"], by[m]["speedup"]) for m in MODES]
        lines.append("| %s | %s | %d | %s | %.2f | %.2f | %s | %.0f%% |" % (
            k[0], k[1], k[2], link(k[3]), v["vanilla_comm_share"], v["bound"], " | ".join(cells),
            100 * by["adaqp"]["fraction_of_bound"]))

    lines += ["", "## Goal: AdaQP >= 3x Vanilla where Vanilla communicates 70-75% of its epoch",
              ""]
    goal = [r for r in tp_rows if r["mode"] == "adaqp" and r["dataset"] == "generated" and
            r["bandwidth_mbit"] == cal[r["workers"]]]
    for r in goal:
        in_window = 0.70 <= r["vanilla_comm_share"] <= 0.75
        verdict = "met" if r["speedup"] >= 3 else "not met"
        lines.append("- %s W=%d at %s Mbit/s: f = %.2f%s, AdaQP %.2fx Vanilla = %.0f%% of the bound "
                     "%.2fx: %s." % (r["model"], r["workers"], link(r["bandwidth_mbit"]),
                                     r["vanilla_comm_share"],
                                     "" if in_window else " (outside 0.70-0.75 in this run)",
                                     r["speedup"], 100 * r["fraction_of_bound"], r["bound"],
                                     verdict))

    lines += ["", "## Time breakdown (seconds per epoch, slowest rank)", "",
              "epoch: the median run's (min-max over the runs); "
              "compute + exposed communication (with (de)quantization on the compute thread) + "
              "reduce + assignment = epoch; `comm` is every exchange start to end, hidden or not; "
              "`quant` is (de)quantization on any thread. Bytes: all ranks, per epoch; predicted "
              "from the partition (adaqp info: exchange rows, layer widths) and, for adaptive "
              "widths, the measured width histogram. Rows: per exchange, all ranks, as run (the "
              "rows layout) and with `communication.exchange: cover` on the same partition.", "",
              "| dataset | model | W | Mbit/s | mode | epoch | compute | exposed | reduce | assign "
              "| comm | quant | MB/epoch | = predicted | rows | cover rows |", "|" + "---|" * 16]
    def epoch_cell(r):
        """The median run's epoch, with the spread over the runs when there were several."""
        times = r.get("epoch_times_s", [])
        if len(times) < 2:
            return "%.3f" % r["epoch_time_s"]
        return "%.3f (%.3f-%.3f)" % (r["epoch_time_s"], min(times), max(times))

    for r in tp_rows:
        lines.append("| %s | %s | %d | %s | %s | %s | %.3f | %.3f | %.3f | %.4f | %.3f | %.3f |"
                     " %.2f | %s | %d | %d (%.2f) |" % (
                         r["dataset"], r["model"], r["workers"], link(r["bandwidth_mbit"]),
                         MODE_TITLES[r["mode"]], epoch_cell(r), r["compute_s"],
                         r["exposed_comm_s"], r["reduce_s"], r["assign_s"], r["comm_s"],
                         r["quant_s"], r["bytes_per_epoch"] / 1e6,
                         "yes" if r["bytes_match"] else "NO (%.2f)" % (r["bytes_predicted"] / 1e6),
                         r["exchange_rows"], r["cover_rows"],
                         r["cover_rows"] / max(1, r["exchange_rows"])))

    def acc_cell(dataset, model, variant):
        s = [x for x in summary if (x["dataset"], x["model"], x["variant"]) ==
             (dataset, model, variant)]
        return "%.2f ± %.2f" % (s[0]["mean"], s[0]["std"]) if s else "-"

    def acc_gap(dataset, model):
        """AdaQP's mean less Vanilla's; "-" until both ran (a stopped reproduction)."""
        means = {x["variant"]: x["mean"] for x in summary
                 if (x["dataset"], x["model"]) == (dataset, model)}
        if "adaqp" not in means or "vanilla" not in means:
            return "-"
        return "%+.2f" % (means["adaqp"] - means["vanilla"])

    pairs = []
    for x in summary:
        if (x["dataset"], x["model"]) not in pairs and x["variant"] in MODES:
            pairs.append((x["dataset"], x["model"]))
    lines += ["", "## Accuracy (%%, mean ± std over %d seeds, W=%d)" % (meta["acc_seeds"],
                                                                        meta["acc_workers"]), "",
              "| dataset | model | " + " | ".join(MODE_TITLES[m] for m in MODES) +
              " | AdaQP - Vanilla |", "|" + "---|" * (3 + len(MODES))]
    for d, m in pairs:
        lines.append("| %s | %s | %s | %s |" % (
            d, m, " | ".join(acc_cell(d, m, v) for v in MODES), acc_gap(d, m)))
    if any(x["variant"] in SCHEMES and x["variant"] != "adaptive" for x in summary):
        lines += ["", "Bit-width schemes (GCN, mode adaqp: quantized and overlapped):", "",
                  "| dataset | Vanilla | " + " | ".join(SCHEMES) + " |", "|" + "---|" *
                  (2 + len(SCHEMES))]
        for d in sorted({d for d, m in pairs if m == "gcn"}):
            lines.append("| %s | %s | %s |" % (
                d, acc_cell(d, "gcn", "vanilla"),
                " | ".join(acc_cell(d, "gcn", s) for s in SCHEMES)))

    lines += ["", "## Bit-width histograms (adaptive; share of messages at 2 / 4 / 8 bits and at "
              "full precision)", "",
              "| dataset | model | W | Mbit/s | mode | layer | direction | messages | 2 | 4 | 8 | "
              "full |", "|" + "---|" * 12]
    for b in bits:
        lines.append("| %s | %s | %d | %s | %s | %d | %s | %d | %.2f | %.2f | %.2f | %.2f |" % (
            b["dataset"], b["model"], b["workers"], link(b["bandwidth_mbit"]),
            MODE_TITLES[b["mode"]],
            b["layer"], b["direction"], b["messages"], b["share_2"], b["share_4"],
            b["share_8"], b["share_32"]))
    return lines


def write_markdown(out, lines, pngs):
    """results.md: the tables, then the plots."""
    lines = lines + ["", "## Plots", ""] + ["![%s](%s)" % (p.stem, p.name) for p in pngs]
    _atomic_write(Path(out) / "results.md", "\n".join(lines) + "\n")


def write(out, meta, tp_rows, acc_rows, curves, pyg_rows=()):
    """Writes every table; returns what the plots need."""
    out = Path(out)
    summary = accuracy_summary(acc_rows)
    cal = {w: b for w, b in meta["calibrated_mbit"].items()}
    curves_out = curve_rows(curves, tp_rows, meta["acc_workers"], cal)
    bits = bits_rows(tp_rows)
    _csv(out / "throughput.csv", TP_COLUMNS, tp_rows)
    _csv(out / "accuracy.csv", ["dataset", "model", "variant", "seed", "test_acc"], acc_rows)
    _csv(out / "accuracy_summary.csv", ["dataset", "model", "variant", "seeds", "mean", "std"],
         summary)
    _csv(out / "accuracy_curves.csv", ["dataset", "mode", "epoch", "time_s", "test_acc"],
         curves_out)
    _csv(out / "bits.csv", ["dataset", "model", "workers", "bandwidth_mbit", "mode", "layer",
                            "direction", "messages", "share_2", "share_4", "share_8", "share_32"],
         bits)
    _csv(out / "calibration.csv", ["workers", "bandwidth_mbit", "comm_share"], meta["calibration"])
    if pyg_rows:
        _csv(out / "pyg.csv", ["system", "device", "workers", "nodes", "threads", "rounds",
                               "median_epoch_s", "min_epoch_s", "max_epoch_s", "round_epoch_s",
                               "mean_epoch_s", "time_vs_adaqp", "peak_gpu_mib",
                               "peak_allocated_gpu_mib"], pyg_rows)
    _atomic_write(out / "meta.json", json.dumps(meta, indent=1, default=str) + "\n")
    tables = {"tp": tp_rows, "curves": curves_out, "bits": bits, "calibrated": cal,
              "markdown": markdown(meta, tp_rows, summary, bits, list(pyg_rows))}
    return tables
