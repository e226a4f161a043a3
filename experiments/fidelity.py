#!/usr/bin/python3
"""Paper Fig. 7: expected (from the policies) vs simulated accuracy and
violation rate, with deterministic p95 and sampled latencies, at 40, 60 and 80
workers, constant Poisson loads 400..4000 by 400, 30 s each. The expectation
of a run is the query-weighted expectation of the policies it used."""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import lull_runs as L


def main():
    L.check_inputs()
    loads = list(range(400, 4001, 400))
    lines = ["# Fidelity (paper Fig. 7)", "",
             "Expected values are those of the policies each run used, weighted by the queries they served.", "",
             "| workers | QPS | expected acc | sim acc (p95) | sim acc (sampled) | expected viol | sim viol (p95) | sim viol (sampled) |",
             "|---|---|---|---|---|---|---|---|"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, k in zip(axes, (40, 60, 80)):
        pol = L.policy_set(k)
        exp, det, smp = [], [], []
        for q in loads:
            d = L.simulate(pol, k, f"constant:{q}:30", "lull", "p95", tag=f"fid{q}")
            s = L.simulate(pol, k, f"constant:{q}:30", "lull", "sampled", tag=f"fid{q}")
            exp.append(d["expected_accuracy"]); det.append(d["accuracy_per_satisfied_query"]); smp.append(s["accuracy_per_satisfied_query"])
            lines.append(f"| {k} | {q} | {100 * d['expected_accuracy']:.2f} | {100 * det[-1]:.2f} | {100 * smp[-1]:.2f} | "
                         f"{100 * d['expected_violation_rate']:.3f}% | {100 * d['violation_rate']:.3f}% | {100 * s['violation_rate']:.3f}% |")
        ax.plot(loads, [100 * v for v in exp], "k--", label="expected")
        ax.plot(loads, [100 * v for v in det], "o-", label="simulated, p95")
        ax.plot(loads, [100 * v for v in smp], "s-", label="simulated, sampled")
        ax.set_title(f"{k} workers"); ax.set_xlabel("load (QPS)")
    axes[0].set_ylabel("accuracy per satisfied query (%)"); axes[0].legend()
    fig.tight_layout()
    fig.savefig(f"{L.RESULTS}/fidelity.png", dpi=110)
    L.write(f"{L.RESULTS}/fidelity.md", "\n".join(lines) + "\n")
    print(f"fidelity: wrote {L.RESULTS}/fidelity.md")


if __name__ == "__main__":
    main()
