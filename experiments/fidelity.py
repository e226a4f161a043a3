#!/usr/bin/python3
"""Paper Fig. 7: expected (from the policies) vs simulated accuracy and
violation rate, with deterministic p95 and sampled latencies, at 40, 60 and 80
workers (image, SLO 150 ms; --task text: 10, 20 and 30 workers, SLO 100 ms),
constant Poisson loads 400..4000 by 400, 30 s each. The expectation of a run
is the query-weighted expectation of the policies it used."""
import argparse

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import lull_runs as L


WORKERS = {"image": (40, 60, 80), "text": (10, 20, 30)}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    L.add_task_argument(ap)
    args = ap.parse_args()
    L.check_inputs(args.task)
    loads = list(range(400, 4001, 400))
    lines = ["# Fidelity (paper Fig. 7)", "",
             f"{args.task} task, SLO {L.TASKS[args.task].slos[0]} ms. Expected values are those of the policies each run used, weighted by the queries they served.", "",
             "| workers | QPS | expected acc | sim acc (p95) | sim acc (sampled) | expected viol | sim viol (p95) | sim viol (sampled) |",
             "|---|---|---|---|---|---|---|---|"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, k in zip(axes, WORKERS[args.task]):
        pol = L.policy_set(k, task=args.task)
        exp, det, smp = [], [], []
        for q in loads:
            d = L.simulate(pol, k, f"constant:{q}:30", "lull", "p95", tag=f"fid{q}")
            s = L.simulate(pol, k, f"constant:{q}:30", "lull", "sampled", tag=f"fid{q}", task=args.task)
            exp.append(d["expected_accuracy"]); det.append(d["accuracy_per_satisfied_query"]); smp.append(s["accuracy_per_satisfied_query"])
            lines.append(f"| {k} | {q} | {100 * d['expected_accuracy']:.2f} | {100 * det[-1]:.2f} | {100 * smp[-1]:.2f} | "
                         f"{100 * d['expected_violation_rate']:.3f}% | {100 * d['violation_rate']:.3f}% | {100 * s['violation_rate']:.3f}% |")
        ax.plot(loads, [100 * v for v in exp], "k--", label="expected")
        ax.plot(loads, [100 * v for v in det], "o-", label="simulated, p95")
        ax.plot(loads, [100 * v for v in smp], "s-", label="simulated, sampled")
        ax.set_title(f"{k} workers"); ax.set_xlabel("load (QPS)")
    axes[0].set_ylabel("accuracy per satisfied query (%)"); axes[0].legend()
    fig.tight_layout()
    out = L.result_name("fidelity", args.task)
    fig.savefig(out + ".png", dpi=110)
    L.write(out + ".md", "\n".join(lines) + "\n")
    print(f"fidelity: wrote {out}.md")


if __name__ == "__main__":
    main()
