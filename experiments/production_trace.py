#!/usr/bin/python3
"""Paper Fig. 5 / artifact A.4.2: the Twitter trace (5 minutes), image task,
9 Pareto models, SLO 150 ms, policies for 200:4000:200 QPS; lull vs Jellyfish+
vs ModelSwitching at 60, 70, 80 workers (--all: 20..100 by 10)."""
import argparse
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import lull_runs as L

PUBLISHED = {"jellyfish": (5.70, 8.07), "modelswitching": (3.48, 4.63)}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--all", action="store_true", help="20..100 workers by 10")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    L.check_inputs()
    workers = list(range(20, 101, 10)) if args.all else [60, 70, 80]
    rows = []
    for k in workers:
        pol = L.policy_set(k)
        rows.append({s: L.simulate(pol, k, "rate-file:" + L.TWITTER, s, seed=args.seed, tag="prod") for s in L.SCHEDULERS})

    lines = ["# Production trace (paper Fig. 5)", "",
             f"Twitter trace ({rows[0]['lull']['queries']} queries over {min(r['lull']['simulated_s'] for r in rows):.0f} s), "
             "image task, SLO 150 ms, deterministic p95 latencies, seed " + str(args.seed) + ".", "",
             "| workers | lull acc | lull viol | Jellyfish+ acc | Jellyfish+ viol | ModelSwitching acc | ModelSwitching viol | lull sim s |",
             "|---|---|---|---|---|---|---|---|"]
    for k, r in zip(workers, rows):
        cells = [f"{100 * r[s]['accuracy_per_satisfied_query']:.2f} | {100 * r[s]['violation_rate']:.2f}%" for s in L.SCHEDULERS]
        lines.append(f"| {k} | " + " | ".join(cells) + f" | {r['lull']['wall_s']:.3f} |")
    lines += ["", "Accuracy increase of lull (points), over workers where every method violates < 5%:", "",
              "| vs | average | highest | points | published average | published highest |", "|---|---|---|---|---|---|"]
    for b in ("jellyfish", "modelswitching"):
        avg, hi, n = L.increases(rows, b)
        lines.append(f"| {b} | {avg:.2f} | {hi:.2f} | {n} | {PUBLISHED[b][0]:.2f} | {PUBLISHED[b][1]:.2f} |")
        print(f"production trace: lull vs {b}: average +{avg:.2f}, highest +{hi:.2f} points "
              f"(published {PUBLISHED[b][0]:.2f} / {PUBLISHED[b][1]:.2f})")
    lines += ["", L.dominance_line(rows)]
    print(lines[-1])
    L.write(f"{L.RESULTS}/production_trace.md", "\n".join(lines) + "\n")

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for s, label in zip(L.SCHEDULERS, ("lull", "Jellyfish+", "ModelSwitching")):
        a1.plot(workers, [100 * r[s]["accuracy_per_satisfied_query"] for r in rows], "o-", label=label)
        a2.plot(workers, [100 * r[s]["violation_rate"] for r in rows], "o-", label=label)
    a1.set_xlabel("workers"); a1.set_ylabel("accuracy per satisfied query (%)"); a1.legend()
    a2.set_xlabel("workers"); a2.set_ylabel("SLO violation rate (%)"); a2.set_yscale("symlog", linthresh=0.1)
    fig.suptitle("Production (Twitter) trace, SLO 150 ms")
    fig.tight_layout()
    fig.savefig(f"{L.RESULTS}/production_trace.png", dpi=110)


if __name__ == "__main__":
    main()
