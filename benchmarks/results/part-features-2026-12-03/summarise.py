"""Medians (min-max) over the rounds of runs.jsonl, per dataset, worker count and side: partition
wall seconds and peak RSS, the partition's bytes, train wall seconds, the load and startup phases'
seconds (slowest rank) and the load, startup and training phases' peak RSS (largest rank), and
whether both sides ended on the same loss. Usage: summarise.py RUNS."""
import json
import statistics
import sys

runs = [json.loads(line) for line in open(sys.argv[1])]
keys = sorted({(r["dataset"], r["workers"]) for r in runs}, key=lambda k: (k[0], k[1]))


def cell(values, fmt):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


print("| dataset | W | side | partition s | partition peak GiB | partition MB | train s | load s | startup s | load peak GiB | startup peak GiB | training peak GiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for ds, w in keys:
    losses = {}
    for side in ("before", "after"):
        rs = [r for r in runs if r["dataset"] == ds and r["workers"] == w and r["side"] == side]
        losses[side] = {r["final_loss"] for r in rs}
        print(f"| {ds} | {w} | {side} | {cell([r['partition_wall_s'] for r in rs], '{:.2f}')} | "
              f"{cell([r['partition_peak_rss_kib'] / 2**20 for r in rs], '{:.2f}')} | "
              f"{cell([r['partition_bytes'] / 1e6 for r in rs], '{:.1f}')} | "
              f"{cell([r['train_wall_s'] for r in rs], '{:.2f}')} | "
              + " | ".join(cell([max(p[k] for p in r["seconds_by_phase"]) for r in rs], "{:.2f}")
                           for k in (1, 2)) + " | "
              + " | ".join(cell([max(p[k] for p in r["peak_rss_bytes_by_phase"]) / 2**30 for r in rs],
                                "{:.2f}") for k in (1, 2, 3)) + " |")
    same = losses["before"] == losses["after"] and len(losses["before"]) == 1
    print(f"<!-- {ds} W={w}: final losses {'identical' if same else 'DIFFER'}: {sorted(losses['before'])} / {sorted(losses['after'])} -->")
