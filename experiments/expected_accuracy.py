#!/usr/bin/env python3
"""The compiler's view of the golden configuration: expected accuracy per
satisfied query and expected SLO-violation rate against load, for 60, 70 and
80 workers (image task, 9 Pareto models, SLO 150 ms, FLD D=100, maximal
batching; --task text: the 5 BERT models, SLO 100 ms, 10, 20 and 30 workers).
Compiles with `lull compile --report` and writes
experiments/results/expected_accuracy{,_text}.{md,png}."""
import argparse
import json
import os
import subprocess

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lull_runs as lr  # noqa: E402

WORKERS_BY_TASK = {"image": (60, 70, 80), "text": (10, 20, 30)}


def report(task, workers):
    name = f"expected_w{workers}" if task == "image" else f"expected_{task}_w{workers}"
    out = os.path.join(lr.WORK, name + ".json")
    subprocess.run(lr.compile_args(task, lr.TASKS[task].slos[0], workers, "200:4000:200") +
                   ["--out", os.path.join(lr.WORK, name + ".pb"), "--report", out],
                   check=True, stderr=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    lr.add_task_argument(ap)
    args = ap.parse_args()
    lr.check_inputs(args.task)
    workers = WORKERS_BY_TASK[args.task]
    reports = {k: report(args.task, k) for k in workers}
    fig, (ax_acc, ax_viol) = plt.subplots(1, 2, figsize=(11, 4))
    lines = ["# Expected accuracy and violation rate (compiler)", "",
             f"{args.task} task ({lr.TASKS[args.task].models}), SLO {lr.TASKS[args.task].slos[0]} ms, FLD D=100, N=32, maximal batching, Poisson load.", "",
             "| load QPS | " + " | ".join(f"{k} w: acc / viol" for k in workers) + " |",
             "|---|" + "---|" * len(workers)]
    loads = [p["load_qps"] for p in reports[workers[0]]["policies"]]
    for k in workers:
        ps = reports[k]["policies"]
        ax_acc.plot([p["load_qps"] for p in ps], [100 * p["expected_accuracy"] for p in ps], marker="o", label=f"{k} workers")
        ax_viol.plot([p["load_qps"] for p in ps], [max(1e-6, 100 * p["expected_violation_rate"]) for p in ps],
                     marker="o", label=f"{k} workers")
    for i, load in enumerate(loads):
        cells = [f"{100 * reports[k]['policies'][i]['expected_accuracy']:.2f} / "
                 f"{100 * reports[k]['policies'][i]['expected_violation_rate']:.3f}%" for k in workers]
        lines.append(f"| {load:g} | " + " | ".join(cells) + " |")
    ax_acc.set(xlabel="load (QPS)", ylabel="expected accuracy per satisfied query (%)")
    ax_viol.set(xlabel="load (QPS)", ylabel="expected SLO violation rate (%, floored at 1e-6)", yscale="log")
    for ax in (ax_acc, ax_viol):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("lull compile: expectations of the compiled policies")
    fig.tight_layout()
    out = lr.result_name("expected_accuracy", args.task)
    fig.savefig(out + ".png", dpi=100)
    lr.write(out + ".md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
