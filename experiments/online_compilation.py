#!/usr/bin/python3
"""Issue 9, "online compilation pays": the image task at SLO 150 ms (9 models,
policies for 200:4000:200 QPS, reference replay of the Twitter trace), lull
with online compilation on and off (the stale policy) in two situations:
  (a) 100 workers, the trace scaled by 1.3 (peak ~5,100 QPS), past the grid's top;
  (b) 80 workers, 15 of them down for 60 s in the middle of the trace (120-180 s).
Online compilation is modelled in virtual time (--compile-delay-ms, default
300 ms, the measured upper bound of one compilation), so runs are
deterministic. Writes experiments/results/online_compilation.{md,png}."""
import argparse
import csv
import json
import os
import subprocess

import lull_runs as L

SITUATIONS = {
    "a": {"title": "(a) 100 workers, Twitter x1.3", "workers": 100, "args": ["--trace-scale", "1.3"]},
    "b": {"title": "(b) 80 workers, 15 down at 120-180 s", "workers": 80,
          "args": [a for w in range(15) for a in ("--fail", f"{w}@120:60")]},
}


def run(situation, online, seed, delay_ms, task):
    s = SITUATIONS[situation]
    pol = L.policy_set(s["workers"], task=task)
    tag = f"online_{task}_{situation}_{online}_{seed}_{delay_ms:g}"
    out = os.path.join(L.WORK, tag + ".json")
    timeline = os.path.join(L.WORK, tag + ".csv")
    cmd = [L.LULL, "simulate", "--policies", pol, "--workers", str(s["workers"]), "--trace", "rate-file:" + L.TWITTER,
           "--replay", "reference", "--seed", str(seed), "--online-compile", online, "--profiles", L.TASKS[task].profiles,
           "--accuracy-percent", L.TASKS[task].accuracy, "--compile-delay-ms", str(delay_ms), "--out", out,
           "--timeline", timeline] + s["args"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        r = json.load(f)
    assert r["dropped"] == 0 and r["completed"] + r["not_dispatched_at_end"] == r["queries"], f"queries lost in {out}"
    with open(timeline) as f:
        r["timeline"] = list(csv.DictReader(f))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--compile-delay-ms", type=float, default=300)
    L.add_task_argument(ap)
    args = ap.parse_args()
    seeds = list(range(1, args.seeds + 1))
    L.check_inputs(args.task)
    res = {(sit, on, seed): run(sit, on, seed, args.compile_delay_ms, args.task)
           for sit in SITUATIONS for on in ("off", "on") for seed in seeds}

    lines = ["# Online compilation pays (issue 9)", "",
             f"Task {args.task}, SLO {L.TASKS[args.task].slos[0]} ms, the models of `lull_runs.TASKS`, policies compiled for 200:4000:200 QPS, "
             "Twitter trace under reference replay (300 s), deterministic p95 latencies. `off`: the library only "
             "(the stale policy: the top policy above the grid; the policy for all workers while some are down). "
             f"`on`: `--online-compile on`, each compilation modelled as {args.compile_delay_ms:g} ms of virtual "
             "time; until it arrives the most conservative policy held serves. 'left' = queries still queued at "
             "the reference's end of run (not counted, as in the reference); lost = queries - completed - left "
             "(must be 0).", "",
             "| situation | seed | online | accuracy (%) | violation rate (%) | compilations | lost | left | worker-seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for sit, s in SITUATIONS.items():
        for seed in seeds:
            for on in ("off", "on"):
                r = res[(sit, on, seed)]
                lost = r["queries"] - r["completed"] - r["not_dispatched_at_end"]
                lines.append(f"| {s['title']} | {seed} | {on} | {100 * r['accuracy_per_satisfied_query']:.2f} | "
                             f"{100 * r['violation_rate']:.3f} | {r['compilations']} | {lost} | "
                             f"{r['not_dispatched_at_end']} | {r['worker_seconds']:.0f} |")
            off, on_ = res[(sit, "off", seed)], res[(sit, "on", seed)]
            lower = on_["violation_rate"] < off["violation_rate"]
            within = abs(on_["accuracy_per_satisfied_query"] - off["accuracy_per_satisfied_query"]) <= 0.01
            verdicts.append((sit, seed, lower, within))
    lines += ["", "Verdicts (issue 9: violation lower with online compilation, accuracy within 1 point, no query lost):", ""]
    for sit, seed, lower, within in verdicts:
        lines.append(f"- {SITUATIONS[sit]['title']}, seed {seed}: violation lower: {'yes' if lower else 'NO'}; "
                     f"accuracy within 1 point: {'yes' if within else 'NO'}")
    comp = [r["compile_wall_s"] / r["compilations"] for (sit, on, seed), r in res.items() if on == "on" and r["compilations"]]
    lines += ["", f"Host time per online compilation inside these runs (9 models, N = 32, FLD 100): mean "
              f"{sum(comp) / len(comp):.3f} s over {len(comp)} runs (busy 2-core machine shared with other jobs; "
              "not part of the simulated outcome)."]
    L.write(L.result_name("online_compilation", args.task) + ".md", "\n".join(lines) + "\n")
    print("\n".join(lines))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    for col, sit in enumerate(SITUATIONS):
        for on, style in (("off", "-"), ("on", "-")):
            t = res[(sit, on, seeds[0])]["timeline"]
            xs = [int(row["second"]) for row in t]
            viol = [100 * int(row["violated"]) / max(1, int(row["completed"])) for row in t]
            axes[0][col].plot(xs, viol, style, label=f"online {on}", lw=1)
            axes[1][col].plot(xs, [float(row["load_estimate_qps"]) for row in t], style, lw=1, label=f"estimate ({on})")
            axes[1][col].plot(xs, [float(row["policy_load_qps"]) for row in t], "--", lw=1, label=f"policy load ({on})")
        axes[0][col].set_title(SITUATIONS[sit]["title"])
        axes[0][col].set_ylabel("violations per second (%)")
        axes[0][col].legend()
        axes[1][col].set_ylabel("QPS")
        axes[1][col].set_xlabel("second")
        axes[1][col].legend(fontsize=7)
    fig.suptitle(f"Online compilation on/off, seed {seeds[0]}")
    fig.tight_layout()
    fig.savefig(L.result_name("online_compilation", args.task) + ".png", dpi=110)


if __name__ == "__main__":
    main()
