#!/usr/bin/env python3
"""`lull compile --arrivals fit:FILE` at both time scales (`--fit-scale trace`
and `runtime`) against the runtime's online estimate, on the reference files
of experiments/modulated_traffic.py (seed 999, 0.7 x 50 QPS per worker; 300 s,
sin:600 1200 s; the files experiments/modulated_estimator.py reads, so its
table's online column is this file's online reading).
  nice /usr/bin/python3 experiments/fit_scale.py [OUT.md]
Writes a markdown table (default experiments/results/fit_scale.md)."""
import os
import re
import subprocess
import sys
import time

import lull_runs as lr  # noqa: E402
import modulated_traffic as mt  # noqa: E402

QPS = {8: 280, 20: 700, 60: 2100}


def fit(path, scale):
    t = lr.TASKS["image"]
    r = subprocess.run([lr.LULL, "compile", "--profiles", t.profiles, "--accuracy-percent", t.accuracy, "--models",
                        t.models, "--slo-ms", "150", "--device", "cpu", "--workers", "1", "--load-qps", "1",
                        "--arrivals", f"fit:{path}", "--fit-scale", scale, "--out", os.devnull],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = next((x for x in r.stderr.splitlines() if "--arrivals fit:" in x), r.stderr.strip())
    m = re.search(r"-> (\S+): gap CV\^2 ([\d.]+), count dispersion ([\d.]+)", line)
    rate = re.search(r"rate CV\^2 ([\d.]+)", line)
    return (m.groups() if m else (line[-80:], "", "")) + ((rate.group(1),) if rate else ())


def online_column(path):
    """(process, K) -> online label from experiments/results/modulated_estimator.md."""
    out = {}
    with open(path) as f:
        for row in f:
            cells = [c.strip() for c in row.split("|")[1:-1]]
            if len(cells) >= 9 and cells[1].isdigit():
                out[(cells[0], int(cells[1]))] = (cells[5], cells[6], cells[7])
    return out


def main():
    lr.check_inputs()
    stem = sys.argv[1] if len(sys.argv) > 1 else os.path.join(lr.RESULTS, "fit_scale.md")
    online = online_column(os.path.join(lr.RESULTS, "modulated_estimator.md"))
    lines = ["| process | K | QPS | fit (trace): pattern, gap CV^2, dispersion | fit (runtime): pattern, gap CV^2, "
             "dispersion, rate CV^2 | online (share), gap CV^2, dispersion |", "|---|---|---|---|---|---|"]
    started = time.time()
    for process in mt.MODULATED + mt.RENEWAL:
        for k in (8, 60):
            path = mt.arrival_file(process, QPS[k], 999)
            a, b = fit(path, "trace"), fit(path, "runtime")
            o = online.get((process, k), ("?", "", ""))
            lines.append(f"| {process} | {k} | {QPS[k]} | {', '.join(a)} | {', '.join(b)} | {', '.join(o)} |")
            print(lines[-1], flush=True)
    lines += ["", f"{(time.time() - started) / 60:.1f} min wall, load average {os.getloadavg()[0]:.1f} at the end."]
    with open(stem + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(stem + ".tmp", stem)


if __name__ == "__main__":
    main()
