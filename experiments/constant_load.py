#!/usr/bin/python3
"""Paper Fig. 6: constant Poisson load, 60 workers, 400..4000 QPS by 400,
30 s each; lull vs Jellyfish+ vs ModelSwitching."""
import argparse
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import lull_runs as L

PUBLISHED = {"jellyfish": (3.70, 15.04), "modelswitching": (1.84, 6.71)}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    L.check_inputs()
    pol = L.policy_set(args.workers)
    loads = list(range(400, 4001, 400))
    rows = [{s: L.simulate(pol, args.workers, f"constant:{q}:30", s, seed=args.seed, tag=f"const{q}") for s in L.SCHEDULERS}
            for q in loads]

    lines = ["# Constant load (paper Fig. 6)", "",
             f"{args.workers} workers, Poisson arrivals, 30 s per load, deterministic p95 latencies, seed {args.seed}.", "",
             "| QPS | lull acc | lull viol | Jellyfish+ acc | Jellyfish+ viol | ModelSwitching acc | ModelSwitching viol |",
             "|---|---|---|---|---|---|---|"]
    for q, r in zip(loads, rows):
        cells = [f"{100 * r[s]['accuracy_per_satisfied_query']:.2f} | {100 * r[s]['violation_rate']:.2f}%" for s in L.SCHEDULERS]
        lines.append(f"| {q} | " + " | ".join(cells) + " |")
    lines += ["", "Accuracy increase of lull (points), over loads where every method violates < 5%:", "",
              "| vs | average | highest | points | published average | published highest |", "|---|---|---|---|---|---|"]
    for b in ("jellyfish", "modelswitching"):
        avg, hi, n = L.increases(rows, b)
        lines.append(f"| {b} | {avg:.2f} | {hi:.2f} | {n} | {PUBLISHED[b][0]:.2f} | {PUBLISHED[b][1]:.2f} |")
        print(f"constant load: lull vs {b}: average +{avg:.2f}, highest +{hi:.2f} points "
              f"(published {PUBLISHED[b][0]:.2f} / {PUBLISHED[b][1]:.2f})")
    lines += ["", L.dominance_line(rows)]
    print(lines[-1])
    L.write(f"{L.RESULTS}/constant_load.md", "\n".join(lines) + "\n")

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for s, label in zip(L.SCHEDULERS, ("lull", "Jellyfish+", "ModelSwitching")):
        a1.plot(loads, [100 * r[s]["accuracy_per_satisfied_query"] for r in rows], "o-", label=label)
        a2.plot(loads, [100 * r[s]["violation_rate"] for r in rows], "o-", label=label)
    a1.set_xlabel("load (QPS)"); a1.set_ylabel("accuracy per satisfied query (%)"); a1.legend()
    a2.set_xlabel("load (QPS)"); a2.set_ylabel("SLO violation rate (%)"); a2.set_yscale("symlog", linthresh=0.1)
    fig.suptitle(f"Constant load, {args.workers} workers, SLO 150 ms")
    fig.tight_layout()
    fig.savefig(f"{L.RESULTS}/constant_load.png", dpi=110)


if __name__ == "__main__":
    main()
