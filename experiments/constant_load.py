#!/usr/bin/python3
"""Paper Fig. 6: constant Poisson load, 400..4000 QPS by 400, 300 s each with
the reference's end of run (mdp-spec 8, `--replay reference`); lull vs
Jellyfish+ vs ModelSwitching (reference rules). Image task: 60 workers, SLO
150 ms; --task text: 20 workers (the paper's), SLO 100 ms."""
import argparse

import lull_runs as L

PUBLISHED = {"image": {"jellyfish": (3.70, 15.04), "modelswitching": (1.84, 6.71)}, "text": {}}
SECONDS = 300


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, help="default: the paper's for the task (image 60, text 20)")
    ap.add_argument("--seed", type=int, default=1)
    L.add_task_argument(ap)
    args = ap.parse_args()
    L.check_inputs(args.task)
    workers = args.workers or L.TASKS[args.task].workers
    slo = L.TASKS[args.task].slos[0]
    pol = L.policy_set(workers, task=args.task)
    loads = list(range(400, 4001, 400))
    rows = [{s: L.simulate(pol, workers, f"constant:{q}:{SECONDS}", s, seed=args.seed, tag=f"const{q}",
                         replay="reference") for s in L.SCHEDULERS}
            for q in loads]

    lines = ["# Constant load (paper Fig. 6)", "",
             f"{workers} workers, {args.task} task, SLO {slo} ms, Poisson arrivals, {SECONDS} s per load with the "
             "reference's end of run (queries still queued at the end are not counted), baselines with the reference's "
             f"rules (mdp-spec 8), deterministic p95 latencies, seed {args.seed}.", "",
             "| QPS | lull acc | lull viol | Jellyfish+ acc | Jellyfish+ viol | ModelSwitching acc | ModelSwitching viol |",
             "|---|---|---|---|---|---|---|"]
    for q, r in zip(loads, rows):
        cells = [f"{100 * r[s]['accuracy_per_satisfied_query']:.2f} | {100 * r[s]['violation_rate']:.2f}%" for s in L.SCHEDULERS]
        lines.append(f"| {q} | " + " | ".join(cells) + " |")
    lines += L.increase_lines(rows, PUBLISHED[args.task], "loads", "constant load")
    out = L.result_name("constant_load", args.task)
    L.write(out + ".md", "\n".join(lines) + "\n")

    L.plot_schedulers(loads, rows, "load (QPS)", f"Constant load, {workers} workers, {args.task}, SLO {slo} ms", out + ".png")


if __name__ == "__main__":
    main()
