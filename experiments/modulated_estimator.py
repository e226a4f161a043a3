#!/usr/bin/env python3
"""The runtime's online arrival estimate against the offline fits, on the
same files (docs/user-guide.md, "Traffic whose rate moves"): for each process
of experiments/modulated_traffic.py and K, its reference file (70% of 50
QPS per worker), read three ways:
  fit       `lull compile --arrivals fit:FILE` (one stationary process)
  tracked   `lull compile --arrivals tracked:FILE`'s short-range pattern
  online    `lull simulate --timeline` on that file: the load monitor's
            burstiness estimate per second (runtime/burstiness_estimator),
            its most frequent family (poisson, gamma, batch; a parameter
            <= 1.25 counts as poisson) with the share of seconds, and the
            median gap CV^2 and count dispersion once ready
Run after modulated_traffic.py (it reads that run's cached reference
libraries): nice /usr/bin/python3 experiments/modulated_estimator.py
Writes experiments/results/modulated_estimator.md."""
import collections
import csv
import json
import os
import statistics
import subprocess
import sys
import time

import lull_runs as lr  # noqa: E402
import modulated_traffic as mt  # noqa: E402


def online(pb, workers, path):
    out = pb[:-3] + "_timeline.csv"
    if not os.path.exists(out):
        subprocess.run([lr.LULL, "simulate", "--policies", pb, "--workers", str(workers), "--trace",
                        f"arrivals:{path}", "--timeline", out, "--out", os.devnull], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        rows = [r for r in csv.DictReader(f) if r["arrivals_estimate"]]
    if not rows:
        return "not ready", float("nan"), float("nan"), 0
    fam = collections.Counter(family(r["arrivals_estimate"]) for r in rows)
    top, n = fam.most_common(1)[0]
    label = statistics.median_low([r["arrivals_estimate"] for r in rows if family(r["arrivals_estimate"]) == top]
                                  if top == "poisson" else
                                  [r["arrivals_estimate"] for r in rows if family(r["arrivals_estimate"]) == top])
    return (label, statistics.median(float(r["gap_cv2"]) for r in rows),
            statistics.median(float(r["count_dispersion"]) for r in rows), n / len(rows))


def family(spec):
    """poisson, gamma or batch; a parameter within the pattern choice's 25% of 1 counts as poisson."""
    name, _, value = spec.partition(":")
    return "poisson" if name == "poisson" or (value and float(value) <= 1.25) else name


def shown(spec):
    name, _, value = spec.partition(":")
    return f"{name}:{float(value):.3g}" if value else name


def main():
    lines = [f"# Online estimate against the offline fits ({time.strftime('%Y-%m-%d')})", "",
             "`nice /usr/bin/python3 experiments/modulated_estimator.py`. Each process's reference file of "
             "experiments/modulated_traffic.py (0.7 x 50 QPS per worker, 300 s; sin:600 1200 s). online: the "
             "load monitor's classification per second (8000 arrivals, bins of 20): its most frequent family "
             "(share of seconds; a label of that family) and the medians once ready.", "",
             "| process | K | QPS | fit:FILE | tracked:FILE short range | online (share) | online gap CV^2 | "
             "online dispersion | tracked = online family |", "|---|---|---|---|---|---|---|---|---|"]
    agree = total = 0
    for process in mt.MODULATED + mt.RENEWAL:
        for k in (8, 20, 60):
            nominal = 0.7 * mt.PER_WORKER_CAP * k
            path = mt.arrival_file(process, nominal, 999)
            tag = f"ref_{process}_{k}"
            pb = os.path.join(lr.WORK, "modulated", f"tr_{tag}_w{k}.pb")
            if not os.path.exists(pb):
                continue
            with open(pb[:-3] + ".json") as f:
                rep = json.load(f)["on_trace"]
            label, cv2, disp, share = online(pb, k, path)
            same = family(label) == family(rep["short_range"])
            agree += same
            total += 1
            lines.append(f"| {process} | {k} | {nominal:g} | {rep['whole_fit']} | {rep['short_range']} | "
                         f"{shown(label)} ({100 * share:.0f}%) | {cv2:.2f} | {disp:.2f} | {'yes' if same else 'no'} |")
    lines += ["", f"Same family (poisson, gamma, batch; a parameter <= 1.25 counts as poisson) online and in the tracked fit: {agree}/{total}."]
    stem = os.path.join(lr.RESULTS, "modulated_estimator.md")
    with open(stem + ".tmp", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(stem + ".tmp", stem)
    print(stem)


if __name__ == "__main__":
    sys.exit(main())
