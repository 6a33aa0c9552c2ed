"""The time-to-accuracy benchmark's bookkeeping (benchmarks/tta/run.sh calls each subcommand).

  epochs RUN_DIR BUDGET            epochs of an adaqp run that fill BUDGET training seconds, from a
                                   short calibration run (its fastest epoch after the first)
  adaqp-run RUN_DIR DS SYSTEM PHASE LR SEED BUDGET LAUNCH   one runs.jsonl line from adaqp's
                                   metrics.jsonl and log (LAUNCH: epoch seconds at the launch)
  dgl-run RUN_JSONL DS PHASE CONFIG SEED BUDGET       one runs.jsonl line from dgl_sage.py's output
  choose RUNS DS SYSTEM            the tuned configuration: highest validation accuracy within
                                   the budget over the seed-0 grid; ties go to the sooner one
  report RUNS OUT                  summary.json, summary.md (printed) and curves-<DS>.png

A curve is a list of [train_s, val_acc, test_acc] points, train_s the training seconds (adaqp:
the slowest rank's epoch times summed; validation excluded) at which that validation ran. Wall
seconds are start-up + train_s, start-up the time from the launch to the first step (adaqp: to
rank 0's last log line before epoch 1's, whose clock is the machine's local time of day in
milliseconds; at W=2 this includes setting up the virtual cluster's namespaces). Targets are 90/95/99% of the
highest median best validation accuracy any system reaches on the dataset; a run's time to a
target is its first point at or above it; medians over seeds count a run that never reaches it as
infinitely slow.
"""
import datetime
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

FRACTIONS = (0.90, 0.95, 0.99)
ORDER = ("adaqp-w1", "dgl", "adaqp-w2", "vanilla-w2")
TITLES = {"adaqp-w1": "adaqp full-graph W=1", "dgl": "DGL mini-batch",
          "adaqp-w2": "adaqp AdaQP W=2", "vanilla-w2": "adaqp Vanilla W=2"}


def adaqp_records(run):
    recs = [json.loads(line) for line in open(f"{run}/metrics.jsonl")]
    epochs = [r for r in recs if "epoch_time_s" in r and not r.get("event")]
    summary = next(r for r in recs if r.get("event") == "summary")
    return epochs, summary


def slowest_epochs(epochs):
    slowest = {}
    for r in epochs:
        slowest[r["epoch"]] = max(slowest.get(r["epoch"], 0.0), r["epoch_time_s"])
    return slowest


def cmd_epochs(run, budget):
    # The fastest epoch after the first: a run's first epochs can be slower than its later ones
    # (the adaptive scheme's probes and trials, a neighbour process still exiting), and a run
    # that stops short of the budget is worse than one that runs a little past it.
    times = [t for e, t in sorted(slowest_epochs(adaqp_records(run)[0]).items()) if e > 1]
    print(math.ceil(1.1 * float(budget) / min(times)) + 2)


def first_step(log, launch):
    """Seconds from LAUNCH (epoch seconds) to the last log line before epoch 1's."""
    stamp = None
    for line in open(log):
        m = re.match(r"\[(\d+):(\d+):(\d+\.\d+)\] \[rank 0\] \[info\] (.*)", line)
        if not m:
            continue
        if re.match(r"epoch +1/", m.group(4)):
            break
        stamp = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    if stamp is None:
        sys.exit(f"summarise: no log line before epoch 1 in {log} (log_level must be info)")
    t = datetime.datetime.fromtimestamp(float(launch))
    since_midnight = t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6
    return (stamp - since_midnight) % 86400


def cmd_adaqp_run(run, ds, system, phase, lr, seed, budget, launch):
    epochs = adaqp_records(run)[0]
    slowest = slowest_epochs(epochs)
    scores = {r["epoch"]: (r["val_acc"], r["test_acc"]) for r in epochs if "val_acc" in r}
    curve, t = [], 0.0
    for e in sorted(slowest):
        t += slowest[e]
        if e in scores:
            curve.append([t] + list(scores[e]))
    startup = first_step(f"{run}.log", launch)
    print(json.dumps({"dataset": ds, "system": system, "phase": phase, "config": lr,
                      "seed": int(seed), "budget_s": float(budget), "startup_s": startup,
                      "epochs": len(slowest),
                      "curve": curve, "run_dir": run}))


def cmd_dgl_run(path, ds, phase, config, seed, budget):
    lines = [json.loads(line) for line in open(path)]
    summary = next(r for r in lines if r.get("event") == "summary")
    curve = [[r["train_s"], r["val_acc"], r["test_acc"]] for r in lines if r.get("event") == "eval"]
    print(json.dumps({"dataset": ds, "system": "dgl", "phase": phase, "config": config,
                      "seed": int(seed), "budget_s": float(budget),
                      "startup_s": summary["startup_s"],
                      "preprocess_s": summary["preprocess_s"], "steps": summary["steps"],
                      "epochs": summary["epochs"], "edges": summary["edges"],
                      "dgl": summary["dgl"], "torch": summary["torch"], "curve": curve,
                      "run_dir": path}))


def budgets(runs):
    """Per dataset, the training seconds every run was given."""
    return {r["dataset"]: r["budget_s"] for r in runs}


def within(run, budget):
    return [p for p in run["curve"] if p[0] <= budget * 1.01]


def best(run, budget):
    pts = within(run, budget)
    if not pts:
        return 0.0, 0.0, math.inf
    b = max(pts, key=lambda p: (p[1], -p[0]))
    return b[1], b[2], b[0]


def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def cmd_choose(path, ds, system):
    runs = load(path)
    budget = budgets(runs).get(ds, math.inf)
    grid = [r for r in runs if r["dataset"] == ds and r["system"] == system and r["phase"] == "grid"]
    if not grid:
        sys.exit(f"summarise: no grid runs of {system} on {ds} in {path}")
    chosen = max(grid, key=lambda r: (best(r, budget)[0], -best(r, budget)[2]))
    print(chosen["config"])


def reach(run, target, budget):
    return next((p[0] for p in within(run, budget) if p[1] >= target), math.inf)


def spread(values):
    """median, min, max (inf stays inf: never reached)."""
    return [statistics.median(values), min(values), max(values)]


def fmt(m, digits=1):
    lo_hi = "" if m[1] == m[2] else " [%s-%s]" % (fmt1(m[1], digits), fmt1(m[2], digits))
    return fmt1(m[0], digits) + lo_hi


def fmt1(v, digits):
    return "never" if math.isinf(v) else "%.*f" % (digits, v)


def cmd_report(path, out):
    runs = load(path)
    out = Path(out)
    budget = budgets(runs)
    summary = {"fractions": FRACTIONS, "datasets": {}}
    lines = ["| dataset | system | configuration | runs | best val acc (median [min-max]) | "
             "test acc at best val | start-up s | " +
             " | ".join("to %d%%: train s | wall s" % round(100 * f) for f in FRACTIONS) + " |",
             "|---" * (7 + 2 * len(FRACTIONS)) + "|"]
    checks = []
    for ds in dict.fromkeys(r["dataset"] for r in runs):
        chosen = {}
        for system in ORDER:
            grid = [r for r in runs if r["dataset"] == ds and r["system"] == system
                    and r["phase"] == "grid"]
            seeded = [r for r in runs if r["dataset"] == ds and r["system"] == system
                      and r["phase"] == "seed"]
            if grid:
                cfg = max(grid, key=lambda r: (best(r, budget[ds])[0], -best(r, budget[ds])[2]))
                seeded = [r for r in grid if r["config"] == cfg["config"]] + [
                    r for r in seeded if r["config"] == cfg["config"]]
            if seeded:
                chosen[system] = seeded
        if not chosen:
            continue
        top = max(statistics.median(best(r, budget[ds])[0] for r in rs) for rs in chosen.values())
        targets = [f * top for f in FRACTIONS]
        entry = {"budget_s": budget[ds], "best_median_val_acc": top, "targets": targets,
                 "systems": {}}
        for system, rs in chosen.items():
            bests = [best(r, budget[ds]) for r in rs]
            row = {"configuration": rs[0]["config"], "seeds": [r["seed"] for r in rs],
                   "best_val_acc": spread([b[0] for b in bests]),
                   "test_acc_at_best_val": spread([b[1] for b in bests]),
                   "startup_s": spread([r["startup_s"] for r in rs]),
                   "to_target_train_s": [spread([reach(r, t, budget[ds]) for r in rs])
                                         for t in targets],
                   "to_target_wall_s": [spread([r["startup_s"] + reach(r, t, budget[ds])
                                                for r in rs]) for t in targets]}
            entry["systems"][system] = row
            lines.append("| %s | %s | %s | %d | %s | %s | %s | %s |" % (
                ds, TITLES[system], rs[0]["config"], len(rs),
                fmt(row["best_val_acc"], 3), fmt(row["test_acc_at_best_val"], 3),
                fmt(row["startup_s"]), " | ".join(
                    "%s | %s" % (fmt(a), fmt(b))
                    for a, b in zip(row["to_target_train_s"], row["to_target_wall_s"]))))
        if ds in ("photo", "physics") and {"adaqp-w1", "dgl"} <= chosen.keys():
            gap = (entry["systems"]["dgl"]["best_val_acc"][0] -
                   entry["systems"]["adaqp-w1"]["best_val_acc"][0])
            checks.append({"dataset": ds, "dgl_minus_adaqp_val_acc": gap, "within_1_point":
                           abs(gap) <= 0.01})
        summary["datasets"][ds] = entry
        plot(out, ds, chosen, budget[ds])
    summary["same_model_check"] = checks
    # A run that stopped short of its budget (an adaqp epoch count calibrated too low) is named.
    short = ["%s %s %s seed %d: %.1f of %.0f s" % (r["dataset"], r["system"], r["config"], r["seed"],
                                                 r["curve"][-1][0] if r["curve"] else 0.0,
                                                 r["budget_s"])
             for r in runs if not r["curve"] or r["curve"][-1][0] < 0.97 * r["budget_s"]]
    summary["short_runs"] = short
    (out / "summary.json").write_text(json.dumps(summary, indent=1,
                                                 default=lambda v: None) + "\n")
    text = "\n".join(lines) + "\n"
    for c in checks:
        text += ("\nsame-model check, %s: DGL's median best validation accuracy %+.2f points from "
                 "adaqp's (%s)\n" % (c["dataset"], 100 * c["dgl_minus_adaqp_val_acc"],
                                     "within 1 point" if c["within_1_point"] else "NOT within 1 point"))
    for line in short:
        text += "\nshort run (stopped before its budget): %s" % line
    (out / "summary.md").write_text(text)
    print(text)


def plot(out, ds, chosen, budget):
    if shutil.which("gnuplot") is None:
        return
    blocks, titles, wall_blocks = [], [], []
    for system, rs in chosen.items():
        for r in rs:
            pts = within(r, budget)
            blocks.append("\n".join("%g %g" % (p[0], p[1]) for p in pts))
            wall_blocks.append("\n".join("%g %g" % (r["startup_s"] + p[0], p[1]) for p in pts))
            titles.append((system, r["seed"]))
    data, wall = out / f"curves-{ds}.dat", out / f"curves-{ds}-wall.dat"
    data.write_text("\n\n\n".join(blocks) + "\n")
    wall.write_text("\n\n\n".join(wall_blocks) + "\n")
    colours = {s: i + 1 for i, s in enumerate(ORDER)}

    def curves(f):
        return ", ".join("'%s' index %d with lines lc %d title \"%s\"" % (
            f, i, colours[s], TITLES[s] if seed == min(x[1] for x in titles if x[0] == s) else "")
            for i, (s, seed) in enumerate(titles))

    script = ("set terminal pngcairo size 1200,480\nset output '%s'\nset multiplot layout 1,2 "
              "title '%s: validation accuracy (each seed a line)'\nset grid\nset key bottom right\n"
              "set ylabel 'validation accuracy'\nset xlabel 'training seconds'\nplot %s\n"
              "set xlabel 'wall seconds (start-up + training)'\nplot %s\nunset multiplot\n" % (
                  out / f"curves-{ds}.png", ds, curves(data), curves(wall)))
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


COMMANDS = {"epochs": cmd_epochs, "adaqp-run": cmd_adaqp_run, "dgl-run": cmd_dgl_run,
            "choose": cmd_choose, "report": cmd_report}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit("usage: summarise.py {%s} ARGS..." % ",".join(COMMANDS))
    COMMANDS[sys.argv[1]](*sys.argv[2:])
