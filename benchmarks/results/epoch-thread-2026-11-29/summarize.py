"""The epoch thread's share of the adaptive scheme per epoch (plan + finish_epoch), before and after.

before: plan = assign_time_s (metrics.jsonl), finish = the binary's "TMP finish_epoch" log line;
after: assign_time_s holds both. Per epoch the slower rank; per run the mean over epochs 4-5 (both
launch a solve beside the epoch, 5 also adopts one) and epoch 2 (no solve); median over rounds."""
import json, re, statistics, sys, pathlib

here = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
rows = {}
for which in ("before", "after"):
    for run in sorted(here.glob(f"r*-{which}")):
        recs = [json.loads(l) for l in open(run / "metrics.jsonl")]
        epochs = [r for r in recs if "epoch" in r and "epoch_time_s" in r and "event" not in r]
        per = {}  # (epoch, rank) -> seconds on the epoch thread
        for r in epochs:
            per[(r["epoch"], r["rank"])] = r["assign_time_s"]
        if which == "before":
            seen = {}
            for line in open(f"{run}.log"):
                m = re.search(r"\[rank (\d+)\] \[warning\] TMP finish_epoch ([0-9.]+) s", line)
                if m:
                    rank = int(m.group(1))
                    seen[rank] = seen.get(rank, 0) + 1
                    per[(seen[rank], rank)] += float(m.group(2))
        def slowest(e):
            return max(v for (ep, _), v in per.items() if ep == e)
        rows.setdefault(which, []).append({
            "run": run.name,
            "epoch2_s": slowest(2),
            "epochs45_s": (slowest(4) + slowest(5)) / 2,
            "per_epoch_s": {f"{ep}/{rk}": v for (ep, rk), v in sorted(per.items())},
        })
out = {}
for which, runs in rows.items():
    for key in ("epoch2_s", "epochs45_s"):
        vals = [r[key] for r in runs]
        out[f"{which}_{key}"] = {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}
print(json.dumps({"summary": out, "runs": rows}, indent=1))
