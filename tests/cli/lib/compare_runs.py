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
"""
import json
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
    worst = max(abs(lw[e] - lr[e]) / max(abs(lr[e]), 1e-12) for e in epochs)
    assert worst <= tol, f"{run} vs {ref}: loss differs by {worst:.3g} (relative) > {tol}"
    text = f"{len(epochs)} epochs, max loss rel diff {worst:.2e}"
    if "--params" in args:
        ptol = float(args[args.index("--params") + 1])
        pr, pw = params(ref), params(run)
        assert len(pr) == len(pw) > 0, (len(pr), len(pw))
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


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "losses":
        cmd_losses(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:])
    elif what == "bytes":
        cmd_bytes(sys.argv[2], sys.argv[3])
    elif what == "widths":
        cmd_widths(sys.argv[2])
    else:
        sys.exit(f"unknown comparison {what}")
