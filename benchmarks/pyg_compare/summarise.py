"""Summarises benchmarks/pyg_compare's runs.jsonl: per (model, pair, system, W) the median of the
rounds' epoch times with their minimum and maximum, peak memory, and per pair PyG's time over
adaqp's (both medians). Writes summary.json and summary.md beside the runs, prints the table.

Usage: summarise.py RUNS_JSONL OUT_DIR
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

CACHED = "same model and layer 0: A·X computed once, dropout on it"
WHAT_DIFFERS = {  # keyed by (model, pair); what pyg_train.py lists for each
    ("gcn", "cached"): CACHED,
    ("sage", "cached"): CACHED,
    ("gcn", "conv"): "A·X every epoch on both sides; dropout on A·X (adaqp) or on X (PyG); "
                     "GCNConv multiplies by W before aggregating",
    ("sage", "conv"): "A·X every epoch on both sides; dropout on A·X and, with its own mask, on "
                      "the root term's X (adaqp) or on X once for both terms (PyG)",
}


def main():
    runs = [json.loads(line) for line in open(sys.argv[1])]
    out = Path(sys.argv[2])
    groups = defaultdict(list)
    for r in runs:
        groups[(r["model"], r["pair"], r["system"], r["workers"])].append(r)
    rows = []
    for (model, pair, system, w), rs in groups.items():
        t = [r["median_epoch_s"] for r in rs]
        gpu = [r["peak_gpu_mib"] for r in rs if r.get("peak_gpu_mib") is not None]
        rows.append({"model": model, "pair": pair, "system": system, "workers": w,
                     "rounds": len(rs), "median_epoch_s": statistics.median(t),
                     "min_epoch_s": min(t), "max_epoch_s": max(t),
                     "peak_rss_mib": max(r["peak_rss_mib"] or 0 for r in rs),
                     "peak_gpu_mib": max(gpu) if gpu else None,
                     "device": rs[0]["device"], "nodes": rs[0]["nodes"]})
    by_key = {(r["model"], r["pair"], r["system"], r["workers"]): r for r in rows}
    for r in rows:
        base = by_key.get((r["model"], r["pair"], "adaqp", 1))
        r["time_vs_adaqp"] = r["median_epoch_s"] / base["median_epoch_s"] if base else None
    gpu = any(r["peak_gpu_mib"] is not None for r in rows)
    head = ["model", "layer 0 (what differs)", "system", "W", "rounds",
            "epoch s: median (min-max)", "PyG / adaqp", "peak RSS MiB"] + (
        ["peak GPU MiB"] if gpu else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(rows, key=lambda r: (r["model"], r["pair"], r["system"], r["workers"])):
        cells = [r["model"], "%s (%s)" % (r["pair"], WHAT_DIFFERS.get((r["model"], r["pair"]), "")),
                 r["system"], str(r["workers"]), str(r["rounds"]),
                 "%.4f (%.4f-%.4f)" % (r["median_epoch_s"], r["min_epoch_s"], r["max_epoch_s"]),
                 "%.2fx" % r["time_vs_adaqp"] if r["system"] == "pyg" and r["time_vs_adaqp"]
                 else "", "%.0f" % r["peak_rss_mib"]]
        if gpu:
            cells.append("%.0f" % r["peak_gpu_mib"] if r["peak_gpu_mib"] is not None else "")
        lines.append("| " + " | ".join(cells) + " |")
    (out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
