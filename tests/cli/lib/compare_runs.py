"""Compares the outputs (metrics.jsonl, params.bin) of two `adaqp train` runs.

Used by the CLI tests (not a test itself):
  compare_runs.py losses REF RUN TOL [--first E] [--params TOL]
      every rank of a run reports the same loss per epoch; the runs' losses agree within TOL
      (relative) from epoch E on; with --params, the final parameters agree within TOL
      (relative to max(1, |value|)).
  compare_runs.py bytes REF RUN
      each rank sent exactly the same bytes per epoch and per layer in both runs (same world size).
  compare_runs.py widths RUN
      the adaptive scheme chose more than one bit-width over the run.
  compare_runs.py sanity RUN [--device]
      every epoch record's times are consistent (epoch time > 0; compute, communication, exposed
      and all-reduce times >= 0; exposed and all-reduce time within the epoch); with --device, the
      summary names a CUDA device and each rank's device allocator peak stays within 2% of its
      second epoch's from then on (no memory growing across epochs; epochs that evaluate apart).
"""
import json
import math
import sys
from array import array


def records(d):
    out = []
    with open(d + "/metrics.jsonl") as f:
        for line in f:
            out.append(json.loads(line))
    return out


def losses(d):
    by_epoch = {}
    for r in records(d):
        if "epoch" in r and "loss" in r:
            by_epoch.setdefault(r["epoch"], set()).add(r["loss"])
    for e, ls in by_epoch.items():
        assert len(ls) == 1, f"{d}: ranks disagree on the loss of epoch {e}: {ls}"
    return {e: ls.pop() for e, ls in by_epoch.items()}


def params(d):
    a = array("f")
    with open(d + "/params.bin", "rb") as f:
        a.frombytes(f.read())
    return a


def cmd_losses(ref, run, tol, args):
    first = int(args[args.index("--first") + 1]) if "--first" in args else 1
    lr, lw = losses(ref), losses(run)
    epochs = sorted(e for e in lr if e >= first)
    assert epochs and sorted(e for e in lw if e >= first) == epochs, (sorted(lr), sorted(lw))
    # max() never takes a NaN after the first value: every value must be finite first.
    bad = [e for e in epochs if not (math.isfinite(lr[e]) and math.isfinite(lw[e]))]
    assert not bad, f"{run} vs {ref}: a loss that is not finite in epochs {bad}"
    worst = max(abs(lw[e] - lr[e]) / max(abs(lr[e]), 1e-12) for e in epochs)
    assert worst <= tol, f"{run} vs {ref}: loss differs by {worst:.3g} (relative) > {tol}"
    text = f"{len(epochs)} epochs, max loss rel diff {worst:.2e}"
    if "--params" in args:
        ptol = float(args[args.index("--params") + 1])
        pr, pw = params(ref), params(run)
        assert len(pr) == len(pw) > 0, (len(pr), len(pw))
        bad = sum(1 for v in pr + pw if not math.isfinite(v))
        assert not bad, f"{run} vs {ref}: {bad} parameters that are not finite"
        worst_p = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(pr, pw))
        assert worst_p <= ptol, f"{run} vs {ref}: parameters differ by {worst_p:.3g} > {ptol}"
        text += f", max param diff {worst_p:.2e}"
    print(f"ok: {run} vs {ref}: {text}")


def sent(d):
    out = {}
    for r in records(d):
        if "bytes_sent" in r:
            out[(r["epoch"], r["rank"])] = (r["bytes_sent"], r["bytes_sent_by_layer"])
    return out


def cmd_bytes(ref, run):
    a, b = sent(ref), sent(run)
    assert a and sorted(a) == sorted(b), (sorted(a)[:4], sorted(b)[:4])
    for key in a:
        assert a[key] == b[key], f"epoch {key[0]} rank {key[1]}: {a[key]} vs {b[key]}"
    total = sum(v[0] for v in a.values())
    print(f"ok: {run} vs {ref}: identical bytes in {len(a)} (epoch, rank) records, {total} in all")


def cmd_widths(run):
    seen = [0, 0, 0]
    for r in records(run):
        for d in ("fwd", "bwd"):
            for layer in r.get("bits_hist", {}).get(d, []):
                for k in range(3):
                    seen[k] += layer[k]
    assert sum(1 for s in seen if s > 0) >= 2, f"{run}: one width only: {seen}"
    print(f"ok: {run}: messages at 2/4/8 bits: {seen}")


def cmd_sanity(run, device):
    recs = records(run)
    epochs = [r for r in recs if "epoch" in r and "epoch_time_s" in r and "event" not in r]
    assert epochs, f"{run}: no epoch records"
    for r in epochs:
        where = f"{run}: epoch {r['epoch']} rank {r['rank']}"
        t = r["epoch_time_s"]
        assert t > 0, f"{where}: epoch_time_s {t}"
        for key in ("compute_time_s", "comm_time_s", "exposed_comm_time_s", "reduce_time_s"):
            assert r[key] >= 0, f"{where}: {key} {r[key]}"
        assert r["exposed_comm_time_s"] + r["reduce_time_s"] <= t * 1.001 + 1e-6, (
            f"{where}: exposed {r['exposed_comm_time_s']} + all-reduce {r['reduce_time_s']} "
            f"exceed the epoch's {t}")
        # The codecs' set-up runs on the epoch's thread: on the CPU inside the caller's blocked
        # time (the exchange's start); on a GPU it is host time, which may overlap the device's
        # stalls counted as exposed, but never the all-reduce.
        setup = r["codec_setup_time_s"]
        within = t - r["reduce_time_s"] if device else r["exposed_comm_time_s"]
        assert 0 <= setup <= within * 1.001 + 1e-6, (
            f"{where}: codec_setup_time_s {setup} outside 0..{within} "
            f"({'epoch_time_s - reduce_time_s' if device else 'exposed_comm_time_s'})")
    # Every exchange readies a codec first: a run that exchanged rows measured some set-up.
    if any(r["bytes_sent"] > 0 for r in epochs):
        assert sum(r["codec_setup_time_s"] for r in epochs) > 0, f"{run}: no codec set-up time"
    text = f"{len(epochs)} epoch records with consistent times"
    if device:
        summary = [r for r in recs if r.get("event") == "summary"][0]
        assert str(summary["device"]).startswith("cuda"), f"{run}: trained on {summary['device']}"
        # Per rank, and apart for epochs that evaluate (their peak includes the evaluation).
        groups = {}
        for r in epochs:
            key = (r["rank"], "val_acc" in r)
            groups.setdefault(key, {})[r["epoch"]] = r["device_peak_bytes"]
        for (rank, evaluates), peaks in groups.items():
            later = sorted(peaks)[1:]
            if not later:
                continue
            first, worst = peaks[later[0]], max(peaks[e] for e in later)
            assert worst <= first * 1.02, (
                f"{run}: rank {rank}'s device peak grows from {first} to {worst} bytes "
                f"(epochs {'with' if evaluates else 'without'} evaluation)")
        text += ", device peaks flat after epoch 2"
    print(f"ok: {run}: {text}")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "losses":
        cmd_losses(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:])
    elif what == "bytes":
        cmd_bytes(sys.argv[2], sys.argv[3])
    elif what == "widths":
        cmd_widths(sys.argv[2])
    elif what == "sanity":
        cmd_sanity(sys.argv[2], "--device" in sys.argv[3:])
    else:
        sys.exit(f"unknown comparison {what}")
