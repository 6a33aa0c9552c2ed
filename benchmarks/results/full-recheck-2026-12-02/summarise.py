"""The stall experiment's table from a runs.jsonl of run.sh: per model and side, the median over
rounds of each run's mean epoch (epochs 3 on, the slowest rank's), with the rounds' range, the
ratio to Vanilla's median, and in how many runs full precision was given up, checked again, and
Vanilla's schedule ran after epoch 10."""
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
by = {}
for r in rows:
    eps = r["epochs"]
    mean = statistics.fmean(e["s"] for e in eps if e["epoch"] >= 3)
    given_up = [e["epoch"] for e in eps if e["given_up"]]
    # Checked again: given up at some epoch, and an epoch after it reported not given up.
    again = bool(given_up) and any(e["epoch"] > given_up[0] and not e["given_up"] for e in eps)
    late_vanilla = sum(e["vanilla"] for e in eps if e["epoch"] > 10)
    by.setdefault((r["model"], r["side"]), []).append((mean, bool(given_up), again, late_vanilla))
print("| model | side | mean epoch s, median (range) | / Vanilla | runs given up | checked again "
      "| epochs 11-60 on Vanilla's schedule, per run |")
print("|---|---|---|---|---|---|---|")
for (model, side), runs in sorted(by.items()):
    med = statistics.median(m for m, *_ in runs)
    van = statistics.median(m for m, *_ in by[(model, "vanilla")])
    lo, hi = min(m for m, *_ in runs), max(m for m, *_ in runs)
    print(f"| {model} | {side} | {med:.3f} ({lo:.3f}-{hi:.3f}) | {med / van:.2f} | "
          f"{sum(g for _, g, _, _ in runs)} of {len(runs)} | {sum(a for *_, a, _ in runs)} | "
          f"{', '.join(str(v) for *_, v in runs)} |")
