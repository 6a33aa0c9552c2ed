#!/usr/bin/env python3
"""Reproduces the reference's tables (docs/design.md, section 9) with `adaqp train`:

1. bandwidth: for each W, the link rate at which Vanilla (GCN, generated graph) spends the
   profile's target share f of its epoch communicating, found by measuring on the virtual cluster;
2. throughput of Vanilla, AdaQP-q, AdaQP-p and AdaQP for each model, W, dataset and bandwidth
   (that rate and multiples of it), one rank per host of scripts/vcluster.sh, with the time
   breakdown and the bytes sent (checked against the partition's predicted exchange volume);
3. accuracy (mean and std over seeds) of the same modes and of uniform/random/adaptive widths,
   under plain mpirun (the link's speed does not change what is computed).
Writes CSV files, results.md and PNG plots (gnuplot) into the output directory; the runs' own
directories and logs are kept under runs/. Run through benchmarks/reproduce.sh."""

import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import metrics  # noqa: E402
import provenance  # noqa: E402
import plots  # noqa: E402
import pyg  # noqa: E402
import report  # noqa: E402
from jobs import Jobs, RunError  # noqa: E402
from profiles import MODES, PROFILES, SCHEMES  # noqa: E402

PROBE_MBIT = 1000  # first guess of the calibration


def log(msg):
    print("[reproduce] " + msg, flush=True)


def model_shape(run_dir):
    """(layers, hidden) of a run, from the effective configuration adaqp wrote beside it."""
    text = (Path(run_dir) / "config.yaml").read_text()
    model = text[text.index("\nmodel:"):]
    return (int(re.search(r"\n  layers: (\d+)", model).group(1)),
            int(re.search(r"\n  hidden: (\d+)", model).group(1)))


def calibrate(jobs, prof, workers):
    """Bandwidth (Mbit/s, integer) at which Vanilla spends prof.target_comm_share of its epoch
    communicating. Communication time scales with 1/bandwidth, the rest does not, so each
    measurement gives the next guess; up to three measurements. Returns (bandwidth, history)."""
    target = prof.target_comm_share
    bw, history = PROBE_MBIT, []
    for attempt in range(3):
        run = jobs.train("calibrate-w%d-%d-%dmbit" % (workers, attempt, bw), "generated", "gcn",
                         workers, MODES["vanilla"] + ["training.epochs=%d" % (prof.warmup + 3),
                                                      "training.eval_every=1000"], bw)
        s = metrics.steady_stats(run, prof.warmup)
        share = s["exposed_comm_s"] / s["epoch_time_s"]
        history.append({"workers": workers, "bandwidth_mbit": bw, "comm_share": share})
        log("calibration W=%d: %d Mbit/s -> Vanilla communicates %.1f%% of its epoch" %
            (workers, bw, 100 * share))
        if abs(share - target) <= 0.02:
            return bw, history
        wanted = (s["epoch_time_s"] - s["exposed_comm_s"]) * target / (1 - target)
        bw = max(1, round(bw * s["exposed_comm_s"] / wanted))
    return bw, history


def present(prof, shared, names):
    out = []
    for name in names:
        if (shared / name / "raw").is_dir():
            out.append(name)
        else:
            log("skipping dataset %s: not found in %s" % (name, shared))
    return out


class Stopped(Exception):
    """SIGTERM (a time limit's `timeout`) or Ctrl-C: the report is written from the runs done."""


def stop(signum, frame):
    # `timeout` signals this process and then its group, and Ctrl-C may come twice: one is enough,
    # and a second must not cut the stop of the run under way or the report short.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Stopped(signal.Signals(signum).name)


def throughput(jobs, prof, datasets, bandwidths, rows, infos):
    """Appends each (dataset, W, bandwidth, model) group's rows to `rows` once all its modes ran."""
    for dataset in ["generated"] + datasets:
        real = dataset != "generated" and prof.real_epochs > 0
        epochs = prof.real_epochs if real else prof.epochs
        warmup = prof.real_warmup if real else prof.warmup
        for w in prof.workers:
            infos[(dataset, w)] = info = jobs.partition(dataset, w)
            for bw in bandwidths[w]:
                for model in prof.models:
                    # The modes run in turn, prof.repeats rounds, in reversed order every other
                    # round (no mode always first); a mode's figure is its median run, reported
                    # with the others' spread.
                    by_mode = {}
                    for rep in range(prof.repeats):
                        order = list(MODES.items())
                        for mode, sets in order[::-1] if rep % 2 else order:
                            name = "tp-%s-%s-w%d-%dmbit-%s" % (dataset, model, w, bw, mode)
                            # bandwidth 0: the device's own link (NCCL), not a shaped cluster
                            run = jobs.train(
                                name + ("-r%d" % rep if rep else ""), dataset, model, w,
                                sets + ["training.epochs=%d" % epochs,
                                        "training.eval_every=%d" % epochs], bw or None)
                            stats = metrics.steady_stats(run, warmup)
                            by_mode.setdefault(mode, []).append((run, stats))
                    rows += throughput_rows(dataset, model, w, bw, info, by_mode)


def median_run(runs):
    """The (run, stats) of median epoch time among `runs` (the lower one of an even count)."""
    ordered = sorted(runs, key=lambda r: r[1]["epoch_time_s"])
    return ordered[(len(ordered) - 1) // 2]


def throughput_rows(dataset, model, w, bw, info, by_mode):
    """One row per mode from its runs (each (run, stats)): the median run's figures, the spread."""
    times = {mode: [s["epoch_time_s"] for _, s in runs] for mode, runs in by_mode.items()}
    by_mode = {mode: median_run(runs) for mode, runs in by_mode.items()}
    vanilla = by_mode["vanilla"][1]
    share = vanilla["exposed_comm_s"] / vanilla["epoch_time_s"]
    bound = 1 / (1 - share)
    rows = []
    for mode, (run, s) in by_mode.items():
        layers, hidden = model_shape(run)
        if s["bits"] is None:
            predicted = metrics.predicted_bytes(info, layers, hidden)
            counts_ok = True
        else:
            predicted = metrics.predicted_bytes(info, layers, hidden, hist=s["bits"],
                                                epochs=s["bits_epochs"])
            rows_per_layer = info["partition"]["exchange_rows"] * s["bits_epochs"]
            counts_ok = all(sum(s["bits"][d][layer]) == rows_per_layer
                            for d in ("fwd", "bwd") for layer in range(1, layers))
        speedup = vanilla["epoch_time_s"] / s["epoch_time_s"]
        covers = info["boundary_covers"]
        rows.append({
            "dataset": dataset, "model": model, "workers": w, "bandwidth_mbit": bw, "mode": mode,
            "epochs_per_s": 1 / s["epoch_time_s"], "epoch_time_s": s["epoch_time_s"],
            "epoch_time_min_s": min(times[mode]), "epoch_time_max_s": max(times[mode]),
            "epoch_times_s": times[mode],
            "speedup": speedup, "vanilla_comm_share": share, "bound": bound,
            "fraction_of_bound": speedup / bound,
            "compute_s": s["compute_s"], "exposed_comm_s": s["exposed_comm_s"],
            "reduce_s": s["reduce_s"], "assign_s": s["assign_s"], "comm_s": s["comm_s"],
            "quant_s": s["quant_s"], "bytes_per_epoch": s["bytes"],
            "bytes_predicted": predicted,
            "bytes_match": counts_ok and abs(s["bytes"] - predicted) <= 1e-6 * max(1, predicted),
            # Rows per exchange of the run (rows layout) and of the cover layout on the same
            # partition (communication.exchange: cover; adaqp info --covers).
            "exchange_rows": info["partition"]["exchange_rows"],
            "cover_rows": covers["cover_sources"] + covers["cover_partials"],
            "bits": s["bits"], "epochs_measured": s["epochs_measured"]})
    return rows


def accuracy(jobs, prof, datasets, rows, curves):
    """Appends the per-seed test accuracy of every mode (all models) and, where the profile asks,
    scheme (GCN) to `rows`, and the GCN curves to `curves`, run by run."""
    w = prof.acc_workers
    variants = [(model, mode, sets) for model in prof.models for mode, sets in MODES.items()]
    if prof.acc_schemes:
        variants += [("gcn", scheme, sets) for scheme, sets in SCHEMES.items()
                     if scheme != "adaptive"]
    for dataset in datasets:
        jobs.partition(dataset, w)
        for model, variant, sets in variants:
            for seed in range(prof.acc_seeds):
                run = jobs.train("acc-%s-%s-w%d-%s-s%d" % (dataset, model, w, variant, seed),
                                 dataset, model, w,
                                 sets + ["training.seed=%d" % seed,
                                         "training.epochs=%d" % prof.acc_epochs,
                                         "training.eval_every=1"])
                best, curve = metrics.accuracy(run)
                rows.append({"dataset": dataset, "model": model, "variant": variant,
                             "seed": seed, "test_acc": best})
                if model == "gcn" and variant in MODES:
                    curves.setdefault((dataset, variant), []).append(curve)
                if model == "gcn" and variant == "adaqp":  # the adaptive scheme's row
                    rows.append({"dataset": dataset, "model": model, "variant": "adaptive",
                                 "seed": seed, "test_acc": best})


# What report.write and report.write_markdown write into --out.
REPORT_FILES = ["results.md", "meta.json", "throughput.csv", "accuracy.csv",
                "accuracy_summary.csv", "accuracy_curves.csv", "bits.csv", "calibration.csv",
                "pyg.csv"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    ap.add_argument("--out", help="output directory (default runs/reproduce-PROFILE)")
    ap.add_argument("--bin", help="the adaqp binary (required)")
    ap.add_argument("--shared", help="the shared datasets directory (required)")
    ap.add_argument("--resume", action="store_true",
                    help="keep runs that already finished in --out (same profile)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per run")
    ap.add_argument("--device", choices=["cpu", "cuda"],
                    help="override the profile's device (e.g. run a gpu profile's flow on the CPU)")
    ap.add_argument("--phases", default="throughput,pyg,accuracy",
                    help="which phases to run, comma-separated (default: all three), e.g. "
                    "accuracy alone while a timed benchmark does not run beside it")
    ap.add_argument("--python", help="Python with torch_geometric for the PyG rows (default: "
                    ".venv/bin/python, else this interpreter)")
    ap.add_argument("--check-options", action="store_true",
                    help="check the other options and exit (benchmarks/reproduce.sh, before it "
                    "installs and builds)")
    args = ap.parse_args()
    phases = set(args.phases.split(","))
    if not phases or phases - {"throughput", "pyg", "accuracy"}:
        ap.error("--phases takes throughput, pyg and accuracy, comma-separated; got %r" %
                 args.phases)
    if args.timeout <= 0:
        ap.error("--timeout takes a positive number of seconds; got %d" % args.timeout)
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        ap.error("--out %s: not a directory" % args.out)
    if args.check_options:
        return
    for name in ("bin", "shared"):
        if getattr(args, name) is None:
            ap.error("the following arguments are required: --" + name)
    if not os.access(args.bin, os.X_OK):
        ap.error("--bin %s: no adaqp binary there (build it with scripts/setup.sh)" % args.bin)
    prof = PROFILES[args.profile]
    if args.device:
        prof.device = args.device
    root = Path(__file__).resolve().parents[2]
    out = Path(args.out or root / "runs" / ("reproduce-" + prof.name)).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not args.resume:
        # A run afresh replaces the runs an earlier report cites: that report goes now, so that a
        # run that fails midway leaves none claiming results (the plots stay until redrawn).
        for name in REPORT_FILES:
            (out / name).unlink(missing_ok=True)
    jobs = Jobs(root, Path(args.bin).resolve(), out, Path(args.shared).resolve(), prof.generated,
                args.resume, args.timeout, prof.device, prof.num_classes)
    started = time.monotonic()
    commit = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    shared = Path(args.shared)
    datasets = present(prof, shared, prof.datasets)
    acc_datasets = [d for d in prof.acc_datasets if d == "generated"] + present(
        prof, shared, [d for d in prof.acc_datasets if d != "generated"])

    log("profile %s -> %s (device %s, link %s)" % (prof.name, out, prof.device, prof.link))
    calibration, calibrated, bandwidths = [], {}, {}
    tp_rows, infos, pyg_rows, acc_rows, curves = [], {}, [], [], {}
    stopped = None
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        if prof.pyg and phases & {"throughput", "pyg"}:
            log("the generated graph as files: %s" % jobs.write_generated())
        if "throughput" not in phases:
            log("phases 1-2: not asked for")
        elif prof.link == "vcluster":
            log("phase 1/3: bandwidth at which Vanilla communicates %.0f%% of its epoch" %
                (100 * prof.target_comm_share))
            for w in prof.workers:
                jobs.partition("generated", w)
                bw, history = calibrate(jobs, prof, w)
                calibration += history
                calibrated[w] = bw
                bandwidths[w] = sorted({max(1, round(bw * f)) for f in prof.bandwidth_factors})
                log("W=%d: bandwidths %s Mbit/s" % (w, bandwidths[w]))
        else:
            log("phase 1/3: no calibration: the ranks share one GPU and talk over NCCL's sockets")
            calibrated = {w: 0 for w in prof.workers}
            bandwidths = {w: [0] for w in prof.workers}
        if "throughput" in phases:
            log("phase 2/3: throughput (%s)" % ("virtual cluster" if prof.link == "vcluster" else
                                                "NCCL on one GPU"))
            throughput(jobs, prof, datasets, bandwidths, tp_rows, infos)
        if prof.pyg and "pyg" in phases:
            log("phase 2b: adaqp against PyTorch Geometric, W=1, same graph and device")
            pyg_rows = pyg.compare(jobs, prof, args.python or pyg.default_python(root), log)
        if "accuracy" in phases:
            log("phase 3/3: accuracy over %d seeds" % prof.acc_seeds)
            accuracy(jobs, prof, acc_datasets, acc_rows, curves)
    except Stopped as e:
        stopped = "%s after %d runs" % (e, jobs.runs_done)
        log("stopped by %s: the report holds the runs finished before" % stopped)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    where = provenance.collect(" ".join([sys.argv[0]] + sys.argv[1:]), str(args.bin))
    (out / "provenance.json").write_text(json.dumps(where, indent=1) + "\n")
    gpus = ", ".join("%s, %s, driver %s" % (g["name"], g["memory"], g["driver"])
                     for g in where["gpus"])
    meta = {
        "profile": prof.name, "date": datetime.date.today().isoformat(),
        "machine": where["machine"],
        "command": "benchmarks/reproduce.sh --profile %s" % prof.name,
        "commit": commit,
        "wall_s": time.monotonic() - started, "runs": jobs.runs_done,
        "calibration": calibration, "calibrated_mbit": calibrated, "bandwidths": bandwidths,
        "profile_settings": repr(prof),
        "acc_workers": prof.acc_workers, "acc_seeds": prof.acc_seeds, "repeats": prof.repeats,
        "bandwidth_factors": prof.bandwidth_factors, "device": prof.device, "link": prof.link,
        "gpu": (gpus or "unknown GPU") if prof.device == "cuda" else None, "stopped": stopped}
    tables = report.write(out, meta, tp_rows, acc_rows, curves, pyg_rows)
    report.write_markdown(out, tables["markdown"], plots.draw(out, tables))
    bad = [r for r in tp_rows if not r["bytes_match"]]
    for r in bad:
        log("bytes mismatch: %s %s W=%d %s: measured %.0f, predicted %.0f" % (
            r["dataset"], r["model"], r["workers"], r["mode"], r["bytes_per_epoch"],
            r["bytes_predicted"]))
    pyg_failed = any(r.get("pyg_failed") for r in pyg_rows)
    if pyg_failed:
        log("PyTorch Geometric's run failed (its error is above): results.md has no PyG row")
    log("%s in %.1f min (%d runs): %s" % ("stopped" if stopped else "done",
                                         (time.monotonic() - started) / 60, jobs.runs_done,
                                         out / "results.md"))
    return 1 if bad or stopped or pyg_failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RunError as e:
        log("error: %s" % e)
        sys.exit(1)
