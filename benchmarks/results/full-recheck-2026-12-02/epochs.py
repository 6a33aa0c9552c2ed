"""Each run's epochs on one line, from its metrics.jsonl: `epoch:seconds[V][G]/F`, the slowest
rank's epoch time, V where it ran Vanilla's schedule, G where full precision was given up after
it, and F the percentage of the epoch's messages sent at full precision.
Usage: python3 epochs.py RUN_DIR..."""
import json
import sys

for run in sys.argv[1:]:
    epochs = {}
    for line in open(f"{run}/metrics.jsonl"):
        r = json.loads(line)
        if r.get("event") or "epoch_time_s" not in r:
            continue
        e = epochs.setdefault(r["epoch"], {"s": 0.0, "widths": [0, 0, 0, 0]})
        e["s"] = max(e["s"], r["epoch_time_s"])
        hist = r.get("bits_hist")
        if hist:
            for k in range(4):
                e["widths"][k] += sum(layer[k] for d in ("fwd", "bwd") for layer in hist[d])
        e["vanilla"] = r.get("assign_vanilla_schedule")
        e["given_up"] = r.get("assign_full_precision_given_up")
    cells = []
    for k, e in sorted(epochs.items()):
        full = round(100 * e["widths"][3] / max(1, sum(e["widths"])))
        flags = ("V" if e["vanilla"] else "") + ("G" if e["given_up"] else "")
        cells.append(f"{k}:{e['s']:.2f}{flags}/{full}")
    print(run.rstrip("/").split("/")[-1], " ".join(cells))
