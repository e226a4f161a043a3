#!/usr/bin/env python3
"""The compiler's view of the golden configuration: expected accuracy per
satisfied query and expected SLO-violation rate against load, for 60, 70 and
80 workers (image task, 9 Pareto models, SLO 150 ms, FLD D=100, maximal
batching). Compiles with `lull compile --report` and writes
experiments/results/expected_accuracy.{md,png}."""
import json
import os
import subprocess

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lull_runs as lr  # noqa: E402

WORKERS = (60, 70, 80)


def report(workers):
    out = os.path.join(lr.WORK, f"expected_w{workers}.json")
    subprocess.run([lr.LULL, "compile", "--profiles", lr.PROFILES, "--accuracy-percent", lr.ACCURACY, "--slo-ms", "150",
                    "--workers", str(workers), "--load-qps", "200:4000:200", "--models", lr.MODELS, "--device", "cpu",
                    "--out", os.path.join(lr.WORK, f"expected_w{workers}.pb"), "--report", out],
                   check=True, stderr=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def main():
    lr.check_inputs()
    reports = {k: report(k) for k in WORKERS}
    fig, (ax_acc, ax_viol) = plt.subplots(1, 2, figsize=(11, 4))
    lines = ["# Expected accuracy and violation rate (compiler)", "",
             "Image task, 9 Pareto models, SLO 150 ms, FLD D=100, N=32, maximal batching, Poisson load.", "",
             "| load QPS | " + " | ".join(f"{k} w: acc / viol" for k in WORKERS) + " |",
             "|---|" + "---|" * len(WORKERS)]
    loads = [p["load_qps"] for p in reports[WORKERS[0]]["policies"]]
    for k in WORKERS:
        ps = reports[k]["policies"]
        ax_acc.plot([p["load_qps"] for p in ps], [100 * p["expected_accuracy"] for p in ps], marker="o", label=f"{k} workers")
        ax_viol.plot([p["load_qps"] for p in ps], [max(1e-6, 100 * p["expected_violation_rate"]) for p in ps],
                     marker="o", label=f"{k} workers")
    for i, load in enumerate(loads):
        cells = [f"{100 * reports[k]['policies'][i]['expected_accuracy']:.2f} / "
                 f"{100 * reports[k]['policies'][i]['expected_violation_rate']:.3f}%" for k in WORKERS]
        lines.append(f"| {load:g} | " + " | ".join(cells) + " |")
    ax_acc.set(xlabel="load (QPS)", ylabel="expected accuracy per satisfied query (%)")
    ax_viol.set(xlabel="load (QPS)", ylabel="expected SLO violation rate (%, floored at 1e-6)", yscale="log")
    for ax in (ax_acc, ax_viol):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("lull compile: expectations of the compiled policies")
    fig.tight_layout()
    fig.savefig(os.path.join(lr.RESULTS, "expected_accuracy.png"), dpi=100)
    lr.write(os.path.join(lr.RESULTS, "expected_accuracy.md"), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
