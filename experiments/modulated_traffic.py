#!/usr/bin/env python3
"""Expected against simulated accuracy and SLO violation on traffic whose
rate moves, and on renewal traffic (docs/user-guide.md, "Traffic whose rate
moves"). Image task, 9 Pareto models, SLO 150 ms, K = 8, 20, 60.

For each (process, K, load) point, FILES independent arrival files
(experiments/modulated_arrivals.py, a new draw each, not seeds of one
replay), and for each file:
  tracked  `lull compile --arrivals tracked:FILE` over a load grid covering
           the file's load estimates; expected = the report's on_trace
           mixture; `lull simulate --trace arrivals:FILE` on the library
  fit      `lull compile --arrivals fit:FILE` at the file's mean load (one
           policy; today's method), expected = its compiled expectation
Loads: LOAD_FRACTIONS of the planned capacity of K under the process (the
highest mean load whose tracked mixture meets 1%, from a reference file).
Targets per point (the mean over files): simulated violation <= expected +
0.2 points, expected violation <= simulated + 1 point, accuracy within 1
point. Standard errors are over the files.

Then the planner: `lull plan --arrivals tracked:FILE --load-qps PLAN_QPS`
per modulated process, its count and the fewest counts that meet the target
in simulation on the same file.

Writes experiments/results/modulated_traffic.{md,png}. Full run:
  nice /usr/bin/python3 experiments/modulated_traffic.py
Reduced: --workers 8 --fractions 0.5 --files 1 --skip-plan."""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lull_runs as lr  # noqa: E402
import modulated_arrivals as ma  # noqa: E402

MODULATED = ("mmpp:4:1", "mmpp:4:10", "mmpp:10:1", "mmpp:10:10", "sin:60", "sin:600", "diurnal:3600")
RENEWAL = ("lognormal:3", "lomax:2.5", "pareto:3", "gsum:5:4")
LOAD_FRACTIONS = (0.33, 0.67, 1.0)
RENEWAL_FRACTIONS = (0.3, 0.65, 1.0)
# Grid step per K (QPS) and the highest grid load: about 1.3% of the Poisson
# capacity apart, up to twice it.
GRID = {8: 5, 20: 15, 60: 50}
PER_WORKER_CAP = 50
TARGET = 0.01
VIOLATION_SLACK = 0.002
PESSIMISM_SLACK = 0.01
ACCURACY_SLACK = 0.01
PLAN_QPS = 2000
PLAN_PROCESSES = ("sin:60", "mmpp:4:1", "mmpp:4:10")
WINDOW_S = 0.5
# --expect-late: the tracked compiles also count only a missing batch's late queries (lull compile --expect-late on).
EXPECT_LATE = []
# --lag-mode: the --expect-lag value of the tracked compiles with --expect-lag (on, or transient).
LAG_MODE = ["on"]
LAG_TEXT = {"on": "each served policy evaluated at the rate around its queries (centred 500 ms window)",
            "transient": "one worker's queue followed through the file decision by decision (compiler/"
                         "transient_expectation.h)"}


def seconds_for(process):
    if process.startswith("diurnal:"):
        return 3600  # the hour diurnal_trace.py's shape squeezes a day into
    return 1200 if process == "sin:600" else 300


def lengths_text(processes):
    """The files' lengths, e.g. "300 s arrival files (sin:600: 1200 s)"."""
    common = max(set(map(seconds_for, processes)), key=[seconds_for(p) for p in processes].count)
    others = [f"{p}: {seconds_for(p)} s" for p in processes if seconds_for(p) != common]
    return f"{common} s arrival files" + (f" ({', '.join(others)})" if others else "")


def arrival_file(process, qps, seed):
    path = os.path.join(lr.WORK, "modulated", f"{process.replace(':', '_')}_{qps:g}_{seed}.txt")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        ma.write(process, qps, seconds_for(process), seed, path)
    return path


def read_times(path):
    return np.fromfile(path, sep="\n")


def load_estimates(times, scale=1.0):
    """Per arrival, the arrivals in the trailing load window per second (compiler::served_load_shares)."""
    reach = WINDOW_S * scale
    first = np.searchsorted(times, times - reach, side="right")
    return (np.arange(len(times)) - first + 1) / WINDOW_S


def mixture(estimates, grid):
    """compiler::served_mixture over per-arrival estimates; grid: sorted [(load, acc, viol)]."""
    loads = np.array([g[0] for g in grid])
    idx = np.minimum(np.searchsorted(loads, estimates - 1e-9, side="left"), len(grid) - 1)
    acc = np.array([g[1] for g in grid])[idx]
    viol = np.array([g[2] for g in grid])[idx]
    sat = 1 - viol
    return float((sat * acc).sum() / max(sat.sum(), 1e-12)), float(viol.mean())


def compile_tracked(path, workers, loads, tag, lag=False):
    mode = LAG_MODE[0] if lag else ""
    out = os.path.join(lr.WORK, "modulated", f"tr{'lag' if lag else ''}{'transient' if mode == 'transient' else ''}"
                       f"{'late' if lag and EXPECT_LATE else ''}_{tag}_w{workers}")
    if not os.path.exists(out + ".json"):
        r = subprocess.run(lr.compile_args("image", 150, workers, loads) +
                           ["--arrivals", f"tracked:{path}", "--out", out + ".pb", "--report", out + ".json"] +
                           (["--expect-lag", mode] + EXPECT_LATE if lag else []),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode:
            sys.exit(r.stderr)
        with open(out + ".fit", "w") as f:
            f.write(r.stderr.splitlines()[0] + "\n")
    with open(out + ".json") as f:
        rep = json.load(f)
    return out + ".pb", rep


def compile_fit(path, workers, load, tag):
    out = os.path.join(lr.WORK, "modulated", f"fit_{tag}_w{workers}")
    if not os.path.exists(out + ".json"):
        subprocess.run(lr.compile_args("image", 150, workers, f"{load:g}") +
                       ["--arrivals", f"fit:{path}", "--out", out + ".pb", "--report", out + ".json"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out + ".json") as f:
        p = json.load(f)["policies"][0]
    return out + ".pb", p["expected_accuracy"], p["expected_violation_rate"]


def simulate(policy, workers, path):
    out = policy[:-3] + "_sim.json"
    if not os.path.exists(out):
        subprocess.run([lr.LULL, "simulate", "--policies", policy, "--workers", str(workers), "--trace",
                        f"arrivals:{path}", "--out", out], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    with open(out) as f:
        r = json.load(f)
    assert r["dropped"] == 0, f"queries lost in {out}"
    return r["accuracy_per_satisfied_query"], r["violation_rate"]


def grid_loads(estimates, workers):
    step = GRID[workers]
    lo = max(step, math.floor(estimates.min() / step) * step)
    hi = max(lo, math.ceil(estimates.max() / step) * step)
    return f"{lo:g}:{hi:g}:{step:g}"


def capacity(process, workers):
    """The highest mean load whose tracked mixture over a reference file meets TARGET (K workers)."""
    nominal = 0.7 * PER_WORKER_CAP * workers
    path = arrival_file(process, nominal, 999)
    times = read_times(path)
    step = GRID[workers]
    _, rep = compile_tracked(path, workers, f"{step}:{2 * PER_WORKER_CAP * workers}:{step}", f"ref_{process}_{workers}")
    grid = sorted((p["load_qps"], p["expected_accuracy"], p["expected_violation_rate"]) for p in rep["policies"])
    mean = len(times) / (times[-1] - times[0])
    lo, hi = 0.05 * nominal, 2.5 * nominal
    for _ in range(30):
        mid = (lo + hi) / 2
        _, v = mixture(load_estimates(times, mid / mean), grid)
        lo, hi = (mid, hi) if v <= TARGET else (lo, mid)
    return round(lo)


def one_file(process, workers, load, seed, lag=False, skip_fit=False):
    path = arrival_file(process, load, seed)
    times = read_times(path)
    tag = f"{process.replace(':', '_')}_{load:g}_{seed}"
    pb, rep = compile_tracked(path, workers, grid_loads(load_estimates(times), workers), tag, lag)
    s = rep["on_trace"]["sets"][0]
    sim_a, sim_v = simulate(pb, workers, path)
    if lag:  # the same compile's mixture without the lag, in place of fit:FILE's columns
        return {"expected": (s["expected_accuracy"], s["expected_violation_rate"]), "simulated": (sim_a, sim_v),
                "short_range": rep["on_trace"]["short_range"], "modulated": rep["on_trace"]["modulated"],
                "whole_fit": rep["on_trace"]["whole_fit"],
                "fit_expected": (s["estimate_only_accuracy"], s["estimate_only_violation_rate"]),
                "fit_simulated": (sim_a, sim_v)}
    fpb, fa, fv = compile_fit(path, workers, load, tag)
    fsim_a, fsim_v = simulate(fpb, workers, path)
    return {"expected": (s["expected_accuracy"], s["expected_violation_rate"]), "simulated": (sim_a, sim_v),
            "short_range": rep["on_trace"]["short_range"], "modulated": rep["on_trace"]["modulated"],
            "whole_fit": rep["on_trace"]["whole_fit"], "fit_expected": (fa, fv), "fit_simulated": (fsim_a, fsim_v)}


def se(xs):
    return float(np.std(xs, ddof=1) / math.sqrt(len(xs))) if len(xs) > 1 else float("nan")


def judge(exp, sim):
    (ea, ev), (sa, sv) = exp, sim
    return {"violation": sv <= ev + VIOLATION_SLACK, "pessimism": ev <= sv + PESSIMISM_SLACK,
            "accuracy": abs(sa - ea) <= ACCURACY_SLACK}


def summarize(files, key_exp, key_sim):
    ea = float(np.mean([f[key_exp][0] for f in files]))
    ev = float(np.mean([f[key_exp][1] for f in files]))
    sa = float(np.mean([f[key_sim][0] for f in files]))
    sv = float(np.mean([f[key_sim][1] for f in files]))
    se_v = se([f[key_sim][1] - f[key_exp][1] for f in files])
    se_a = se([f[key_sim][0] - f[key_exp][0] for f in files])
    return {"exp": (ea, ev), "sim": (sa, sv), "se_v": se_v, "se_a": se_a, **judge((ea, ev), (sa, sv))}


def plan_check(process, workers_hint):
    path = arrival_file(process, PLAN_QPS, 4242)
    out = os.path.join(lr.WORK, "modulated", f"plan_{process.replace(':', '_')}.json")
    if not os.path.exists(out):
        t = lr.TASKS["image"]
        subprocess.run([lr.LULL, "plan", "--profiles", t.profiles, "--accuracy-percent", t.accuracy, "--slo-ms", "150",
                        "--models", t.models, "--device", "cpu", "--max-violation", str(TARGET), "--load-qps",
                        str(PLAN_QPS), "--arrivals", f"tracked:{path}", "--out", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        plan = json.load(f)
    planned = plan["workers"]
    times = read_times(path)
    loads = grid_loads(load_estimates(times), 60)
    sims = {}

    def sim_at(k):
        if k not in sims:
            pb, rep = compile_tracked(path, k, loads, f"plan_{process.replace(':', '_')}")
            sims[k] = simulate(pb, k, path) + (rep["on_trace"]["sets"][0]["expected_violation_rate"],)
        return sims[k]

    # The fewest counts that meet the target in simulation: walk down from the plan.
    k = planned
    while k > 1 and sim_at(k - 1)[1] <= TARGET:
        k -= 1
    sim_at(planned)
    if sims[planned][1] > TARGET:  # the plan misses: walk up to the fewest that meets
        k = planned
        while sim_at(k)[1] > TARGET and k < 2 * planned:
            k += 1
    return {"process": process, "planned": planned, "fewest_sim": k, "sims": sims,
            "quantile": plan["capacity_quantile"], "capacity_qps": plan["capacity_qps"],
            "expected_violation": plan["expected_violation_rate"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default="8,20,60")
    ap.add_argument("--fractions", default=None)
    ap.add_argument("--files", type=int, default=3)
    ap.add_argument("--skip-plan", action="store_true")
    ap.add_argument("--skip-renewal", action="store_true")
    ap.add_argument("--expect-lag", action="store_true",
                    help="compile with --expect-lag on; the second method is the same compile's mixture without "
                         "the lag (no fit:FILE)")
    ap.add_argument("--expect-late", action="store_true",
                    help="with --expect-lag: compile with --expect-late on too (a missing batch counts its late queries)")
    ap.add_argument("--lag-mode", choices=("on", "transient"), default="on",
                    help="with --expect-lag: the value passed to lull compile --expect-lag")
    ap.add_argument("--processes", default=",".join(MODULATED), help="modulated processes to run")
    ap.add_argument("--stem", default="modulated_traffic", help="results file name under experiments/results")
    args = ap.parse_args()
    lr.check_inputs()
    if args.expect_late:
        EXPECT_LATE[:] = ["--expect-late", "on"]
    LAG_MODE[0] = args.lag_mode
    os.makedirs(os.path.join(lr.WORK, "modulated"), exist_ok=True)
    started = time.time()
    workers = [int(w) for w in args.workers.split(",")]
    fracs = tuple(float(x) for x in args.fractions.split(",")) if args.fractions else None
    jobs = []
    caps = {}
    cases = [(p, "modulated", fracs or LOAD_FRACTIONS) for p in args.processes.split(",") if p]
    if not args.skip_renewal:
        cases += [(p, "renewal", fracs or RENEWAL_FRACTIONS) for p in RENEWAL]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        cap_futures = {(p, k): ex.submit(capacity, p, k) for p, _, _ in cases for k in workers}
        for key, fut in cap_futures.items():
            caps[key] = fut.result()
        for p, kind, fr in cases:
            for k in workers:
                for x in fr:
                    load = max(1, round(caps[(p, k)] * x))
                    for i in range(args.files):
                        seed = 1000 * k + 100 * int(round(x * 10)) + i
                        jobs.append(((p, kind, k, load), ex.submit(one_file, p, k, load, seed, args.expect_lag)))
        points = {}
        for key, fut in jobs:
            points.setdefault(key, []).append(fut.result())
    rows = []
    for (p, kind, k, load), files in points.items():
        rows.append({"process": p, "kind": kind, "workers": k, "load": load, "capacity": caps[(p, k)],
                     "tracked": summarize(files, "expected", "simulated"),
                     "fit": summarize(files, "fit_expected", "fit_simulated"),
                     "short_range": sorted({f["short_range"] for f in files}),
                     "whole_fit": sorted({f["whole_fit"] for f in files}),
                     "modulated": sorted({f["modulated"] for f in files})})
    plans = [] if args.skip_plan else [plan_check(p, 60) for p in PLAN_PROCESSES]
    write(rows, plans, args, time.time() - started)


def count(rows, method, kind):
    sel = [r[method] for r in rows if r["kind"] == kind]
    both = sum(r["violation"] and r["accuracy"] for r in sel)
    alls = sum(r["violation"] and r["accuracy"] and r["pessimism"] for r in sel)
    return (f"{sum(r['violation'] for r in sel)}/{len(sel)}", f"{sum(r['pessimism'] for r in sel)}/{len(sel)}",
            f"{sum(r['accuracy'] for r in sel)}/{len(sel)}", f"{both}/{len(sel)}", f"{alls}/{len(sel)}")


def write(rows, plans, args, wall):
    stem = os.path.join(lr.RESULTS, args.stem)
    second = "no lag" if args.expect_lag else "fit"
    first = "lag" if args.expect_lag else "tracked"
    lines = [f"# Modulated and renewal traffic: expected against simulated ({time.strftime('%Y-%m-%d')})", "",
             "`nice /usr/bin/python3 experiments/modulated_traffic.py " + " ".join(sys.argv[1:]) +
             f"`: {wall / 60:.1f} min wall on the shared 2-core machine (load average "
             f"{os.getloadavg()[0]:.1f} at the end). Image task, 9 Pareto models, SLO 150 ms, "
             f"{args.files} independent {lengths_text(sorted({r['process'] for r in rows}))} per point. Loads: "
             "fractions of the "
             "planned capacity of K under the process (`capacity`: the highest mean load whose tracked "
             "mixture meets 1%).", "",
             "- **tracked**: `lull compile --arrivals tracked:FILE` over a load grid (the runtime switches by "
             "its 500 ms load estimate), expected = the report's `on_trace` mixture.",
             "- **fit**: `lull compile --arrivals fit:FILE` at the mean load (one policy), today's method." if
             not args.expect_lag else f"- **lag**: the same compile with `--expect-lag {LAG_MODE[0]}"
             f"{' --expect-late on' if EXPECT_LATE else ''}`: {LAG_TEXT[LAG_MODE[0]]}; **no lag**: the same report's "
             "mixture at the compiled loads (`estimate_only_*`, what `--expect-lag off` reports). One simulation "
             "per file serves both.", "",
             "Targets (mean over files): violation: simulated <= expected + 0.2 points; pessimism: expected <= "
             "simulated + 1 point; accuracy within 1 point.", "",
             "| method | traffic | violation | pessimism | accuracy | violation and accuracy | all three |",
             "|---|---|---|---|---|---|---|"]
    for method in ("tracked", "fit"):
        for kind in ("modulated", "renewal"):
            if any(r["kind"] == kind for r in rows):
                name = first if method == "tracked" else second
                lines.append(f"| {name} | {kind} | " + " | ".join(count(rows, method, kind)) + " |")
    lines += ["", f"## Every point ({first}; {second} in the last columns)", "",
              "| process | K | load QPS (cap.) | short range | exp. acc. | sim. acc. (se) | exp. viol. | "
              f"sim. viol. (se) | ok | {second}: exp. viol. | {second}: sim. viol. | {second} ok |", "|" + "---|" * 12]
    for r in sorted(rows, key=lambda r: (r["kind"], r["process"], r["workers"], r["load"])):
        t, f = r["tracked"], r["fit"]
        mark = lambda d: "".join(c for c, k in (("v", "violation"), ("p", "pessimism"), ("a", "accuracy"))
                                 if not d[k]) or "yes"
        lines.append(f"| {r['process']} | {r['workers']} | {r['load']} ({r['capacity']}) | "
                     f"{','.join(r['short_range'])} | {t['exp'][0]:.4f} | {t['sim'][0]:.4f} ({t['se_a']:.4f}) | "
                     f"{100 * t['exp'][1]:.2f}% | {100 * t['sim'][1]:.2f}% ({100 * t['se_v']:.2f}) | {mark(t)} | "
                     f"{100 * f['exp'][1]:.2f}% | {100 * f['sim'][1]:.2f}% | {mark(f)} |")
    lines += ["", "ok: yes, or the targets missed (v: violation above expected + 0.2 points, p: expected more than "
              "1 point above simulated, a: accuracy more than 1 point off). se: standard error over the files of "
              "simulated minus expected (points of violation, fraction of accuracy)."]
    if plans:
        lines += ["", f"## `lull plan --arrivals tracked:FILE --load-qps {PLAN_QPS} --max-violation {TARGET}`", "",
                  "| process | planned | expected viol. | count set by (QPS, quantile) | fewest meeting 1% in "
                  "simulation | simulated viol. per count |", "|---|---|---|---|---|---|"]
        for p in plans:
            per = ", ".join(f"{k}: {100 * v[1]:.2f}%" for k, v in sorted(p["sims"].items()))
            lines.append(f"| {p['process']} | {p['planned']} | {100 * p['expected_violation']:.2f}% | "
                         f"{p['capacity_qps']:g}, {100 * p['quantile']:.1f}% | {p['fewest_sim']} | {per} |")
    with open(stem + ".md.tmp", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(stem + ".md.tmp", stem + ".md")
    rows_path = os.path.join(lr.WORK, "modulated", f"rows_{os.path.basename(stem)}.json")
    with open(rows_path + ".tmp", "w") as fh:
        json.dump({"rows": rows, "plans": [{k: v for k, v in p.items() if k != "sims"} for p in plans]}, fh)
    os.replace(rows_path + ".tmp", rows_path)

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, method in zip(axes, ("tracked", "fit")):
        for kind, marker in (("modulated", "o"), ("renewal", "s")):
            sel = [r for r in rows if r["kind"] == kind]
            ax.scatter([100 * r[method]["exp"][1] for r in sel], [100 * r[method]["sim"][1] for r in sel],
                       marker=marker, s=18, label=kind, alpha=0.7)
        m = max(1.0, max(100 * max(r[method]["exp"][1], r[method]["sim"][1]) for r in rows))
        ax.plot([0, m], [0.2, m + 0.2], "k--", lw=0.8, label="expected + 0.2 points")
        ax.plot([0, m], [-1, m - 1], "k:", lw=0.8, label="expected - 1 point")
        ax.set_xscale("symlog", linthresh=1)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel("expected violation (%)")
        ax.set_ylabel("simulated violation (%)")
        ax.set_title((first if method == "tracked" else second) + ": " +
                     ("--arrivals tracked:FILE, library over loads" if method == "tracked" or args.expect_lag
                      else "--arrivals fit:FILE at the mean load"))
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(stem + ".png.tmp.png", dpi=110)
    os.replace(stem + ".png.tmp.png", stem + ".png")
    print(stem + ".md")


if __name__ == "__main__":
    main()
