#!/usr/bin/python3
"""Paper Fig. 6: constant Poisson load, 60 workers, 400..4000 QPS by 400,
300 s each with the reference's end of run (mdp-spec 8, `--replay reference`);
lull vs Jellyfish+ vs ModelSwitching (reference rules)."""
import argparse

import lull_runs as L

PUBLISHED = {"jellyfish": (3.70, 15.04), "modelswitching": (1.84, 6.71)}
SECONDS = 300


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    L.check_inputs()
    pol = L.policy_set(args.workers)
    loads = list(range(400, 4001, 400))
    rows = [{s: L.simulate(pol, args.workers, f"constant:{q}:{SECONDS}", s, seed=args.seed, tag=f"const{q}",
                         replay="reference") for s in L.SCHEDULERS}
            for q in loads]

    lines = ["# Constant load (paper Fig. 6)", "",
             f"{args.workers} workers, Poisson arrivals, {SECONDS} s per load with the reference's end of run "
             "(queries still queued at the end are not counted), baselines with the reference's rules (mdp-spec 8), "
             f"deterministic p95 latencies, seed {args.seed}.", "",
             "| QPS | lull acc | lull viol | Jellyfish+ acc | Jellyfish+ viol | ModelSwitching acc | ModelSwitching viol |",
             "|---|---|---|---|---|---|---|"]
    for q, r in zip(loads, rows):
        cells = [f"{100 * r[s]['accuracy_per_satisfied_query']:.2f} | {100 * r[s]['violation_rate']:.2f}%" for s in L.SCHEDULERS]
        lines.append(f"| {q} | " + " | ".join(cells) + " |")
    lines += L.increase_lines(rows, PUBLISHED, "loads", "constant load")
    L.write(f"{L.RESULTS}/constant_load.md", "\n".join(lines) + "\n")

    L.plot_schedulers(loads, rows, "load (QPS)", f"Constant load, {args.workers} workers, SLO 150 ms", f"{L.RESULTS}/constant_load.png")


if __name__ == "__main__":
    main()
