#!/usr/bin/python3
"""Paper Fig. 5 / artifact A.4.2: the Twitter trace replayed as the reference
simulator does (mdp-spec 8: per-second rates, 300 s, wrap-around), policies for
200:4000:200 QPS; lull vs Jellyfish+ vs ModelSwitching (reference rules) at 60,
70, 80 workers (--all: 20..100 by 10). Image task (9 Pareto models, SLO 150 ms)
by default; --task text: the 5 BERT models at SLO 100 ms."""
import argparse

import lull_runs as L

PUBLISHED = {"image": {"jellyfish": (5.70, 8.07), "modelswitching": (3.48, 4.63)}, "text": {}}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--all", action="store_true", help="20..100 workers by 10")
    ap.add_argument("--seed", type=int, default=1)
    L.add_task_argument(ap)
    args = ap.parse_args()
    L.check_inputs(args.task)
    slo = L.TASKS[args.task].slos[0]
    workers = list(range(20, 101, 10)) if args.all else [60, 70, 80]
    rows = []
    for k in workers:
        pol = L.policy_set(k, task=args.task)
        rows.append({s: L.simulate(pol, k, "rate-file:" + L.TWITTER, s, seed=args.seed, tag="prod", replay="reference")
                     for s in L.SCHEDULERS})

    lines = ["# Production trace (paper Fig. 5)", "",
             f"Twitter trace, reference replay (`--replay reference`: per-second rates, 300 s, wrap-around; "
             f"{rows[0]['lull']['queries']} queries), {args.task} task, SLO {slo} ms, deterministic p95 latencies, seed "
             + str(args.seed) + ". Baselines with the reference's rules (mdp-spec 8). "
             "'left' = queries still queued at the end (not counted, as in the reference).", "",
             "| workers | lull acc | lull viol | Jellyfish+ acc | Jellyfish+ viol | ModelSwitching acc | ModelSwitching viol "
             "| left (lull / J+ / MS) | lull sim s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for k, r in zip(workers, rows):
        cells = [f"{100 * r[s]['accuracy_per_satisfied_query']:.2f} | {100 * r[s]['violation_rate']:.2f}%" for s in L.SCHEDULERS]
        left = " / ".join(str(r[s]["not_dispatched_at_end"]) for s in L.SCHEDULERS)
        lines.append(f"| {k} | " + " | ".join(cells) + f" | {left} | {r['lull']['wall_s']:.3f} |")
    lines += L.increase_lines(rows, PUBLISHED[args.task], "workers", "production trace")
    out = L.result_name("production_trace", args.task)
    L.write(out + ".md", "\n".join(lines) + "\n")

    L.plot_schedulers(workers, rows, "workers", f"Production (Twitter) trace, {args.task}, SLO {slo} ms", out + ".png")


if __name__ == "__main__":
    main()
