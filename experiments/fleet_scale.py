#!/usr/bin/python3
"""Fleets of any size (docs/user-guide.md, "Large fleets"): the cost of one
policy and of a whole `lull plan` against the worker count K, exact (the MDP
with K round-robin phases, mdp-spec 4) and with the phase cap (K phases cut
to --phase-cap, at the same load per worker), the cap's error against the
exact MDP where both run, and each capped plan's fleet simulated at full size.

Image task, 9 Pareto models, SLO 150 ms, Poisson, 1% target. Every command
is timed with /usr/bin/time -v (wall, user CPU, peak RSS); the machine is
shared, so user CPU is the figure to read and the load average is recorded.
Runs are cached under build/experiments/fleet_scale (delete it after changing
lull). Writes experiments/results/fleet_scale.{md,png}."""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

import lull_runs as L

CAP = 240
TASK = L.TASKS["image"]
WORK = os.path.join(L.WORK, "fleet_scale")
COST_K = (60, 120, 240, 480, 960, 1800, 5000, 18000)  # 18,000 x 55 QPS: lull's largest load, 1e6
COST_RHO = 55.0  # QPS per worker of the cost rows (the table)
ERROR_RHO = (50.0, 53.0, 55.0, 56.0, 56.5, 57.0)


def num(x):
    """A number as lull's flags and the cache's file names take it (1000000, not 1e+06)."""
    return f"{x:.10g}"


def model_args():
    return ["--profiles", TASK.profiles, "--accuracy-percent", TASK.accuracy, "--models", TASK.models,
            "--slo-ms", "150"]


def timed(cmd, out_json, tag):
    """Runs cmd under /usr/bin/time -v once (cached with out_json); returns
    (the JSON it wrote, {wall_s, user_s, rss_mb})."""
    timing = os.path.join(WORK, tag + ".time")
    if not (os.path.exists(out_json) and os.path.exists(timing)):
        print("running", tag, "...", file=sys.stderr, flush=True)
        r = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"{tag} failed:\n{r.stderr[-2000:]}")
        with open(timing + ".tmp", "w") as f:
            f.write(r.stderr)
        os.replace(timing + ".tmp", timing)
    text = open(timing).read()

    def field(name):
        return re.search(re.escape(name) + r":\s*(\S+)", text).group(1)

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    t = {"wall_s": wall_s, "user_s": float(field("User time (seconds)")),
         "rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024}
    with open(out_json) as f:
        return json.load(f), t


def compile_points(K, loads, cap):
    tag = f"compile_k{K}_cap{cap}_" + "-".join(f"{num(l)}" for l in loads)
    out = os.path.join(WORK, tag + ".json")
    cmd = [L.LULL, "compile"] + model_args() + ["--workers", str(K), "--load-qps", ",".join(f"{num(l)}" for l in loads),
                                              "--phase-cap", str(cap), "--device", "cpu",
                                              "--out", os.path.join(WORK, tag + ".pb"), "--report", out]
    report, t = timed(cmd, out, tag)
    return report["policies"], t


def plan(load, cap):
    tag = f"plan_{num(load)}_cap{cap}"
    out = os.path.join(WORK, tag + ".json")
    cmd = [L.LULL, "plan"] + model_args() + ["--max-violation", "0.01", "--load-qps", f"{num(load)}",
                                           "--phase-cap", str(cap), "--out", out]
    if cap == 0:
        cmd += ["--max-workers", "1000"]
    return timed(cmd, out, tag)


def plan_trace(peak):
    """The Twitter trace scaled to a `peak` QPS, planned in 10-s windows with the cap."""
    path = os.path.join(WORK, f"twitter_peak{num(peak)}.txt")
    with open(L.TWITTER) as f:
        rows = [line.split() for line in f if line.strip()]
    top = max(float(r[1]) for r in rows)
    with open(path + ".tmp", "w") as f:
        f.writelines(f"{r[0]} {float(r[1]) * peak / top:.1f}\n" for r in rows)
    os.replace(path + ".tmp", path)
    tag = f"plan_trace_peak{num(peak)}_cap{CAP}"
    out = os.path.join(WORK, tag + ".json")
    cmd = [L.LULL, "plan"] + model_args() + ["--max-violation", "0.01", "--trace", "rate-file:" + path,
                                           "--window-s", "10", "--phase-cap", str(CAP), "--out", out]
    return timed(cmd, out, tag)


def simulate(load, workers, seed):
    pols, _ = compile_points(workers, [load], CAP)
    pb = os.path.join(WORK, f"compile_k{workers}_cap{CAP}_{num(load)}.pb")
    tag = f"sim_{num(load)}_{workers}_s{seed}"
    out = os.path.join(WORK, tag + ".json")
    cmd = [L.LULL, "simulate", "--policies", pb, "--workers", str(workers), "--trace", f"constant:{num(load)}:300",
           "--seed", str(seed), "--out", out]
    r, t = timed(cmd, out, tag)
    assert r["dropped"] == 0 and r["completed"] + r["not_dispatched_at_end"] == r["queries"], f"queries lost in {out}"
    return r, t, pols[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--exact-max", type=int, default=1800, help="largest K compiled exactly (cost rows)")
    ap.add_argument("--error-k", default="480,960", help="exact counts the cap is compared with")
    ap.add_argument("--exact-plans", default="27000", help="loads planned exactly too (--phase-cap 0)")
    ap.add_argument("--plans", default="27000,100000,1000000", help="loads planned with the cap")
    ap.add_argument("--simulate", default="100000,1000000", help="planned loads simulated at full size")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--trace-peak", type=float, default=100000, help="plan the Twitter trace scaled to this peak")
    args = ap.parse_args()
    L.check_inputs("image")
    os.makedirs(WORK, exist_ok=True)
    load_avg = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    # 1. One policy's cost against K at 55 QPS per worker.
    cost = []
    for K in COST_K:
        row = {"K": K}
        for cap in ([0] if K <= args.exact_max else []) + [CAP]:
            p, t = compile_points(K, [K * COST_RHO], cap)
            row[cap] = (p[0], t)
        cost.append(row)

    # 2. The cap's error at the same load per worker: exact K against capped (= exact at CAP).
    error_k = [int(k) for k in args.error_k.split(",") if k]
    capped, _ = compile_points(CAP, [CAP * r for r in ERROR_RHO], 0)
    exact = {K: compile_points(K, [K * r for r in ERROR_RHO], 0)[0] for K in error_k}

    # 3. Whole plans.
    plans = []
    for load in [float(x) for x in args.plans.split(",") if x]:
        j, t = plan(load, CAP)
        row = {"load": load, "capped": (j, t)}
        if f"{num(load)}" in args.exact_plans.split(","):
            row["exact"] = plan(load, 0)
        plans.append(row)

    trace_plan = plan_trace(args.trace_peak) if args.trace_peak > 0 else None

    # 4. Each planned fleet at full size.
    sims = []
    for row in plans:
        if f"{num(row['load'])}" not in args.simulate.split(","):
            continue
        workers = int(row["capped"][0]["workers"])
        runs = [simulate(row["load"], workers, s) for s in range(1, args.seeds + 1)]
        sims.append((row["load"], workers, runs))

    md = ["# Fleets of any size: the phase cap against the exact MDP", "",
          f"Written {started} from the runs cached in build/experiments/fleet_scale (each timed when first made; "
          f"load average when written {load_avg[0]:.1f}; the 2-core machine is shared: read user CPU). "
          f"Image task, 9 Pareto models, SLO 150 ms, Poisson, 1% target; cap {CAP} (`--phase-cap {CAP}`, lull "
          "plan's default). `python3 experiments/fleet_scale.py`.", "",
          f"## One policy at {COST_RHO:g} QPS per worker", "",
          "| K | load QPS | exact user s | exact wall s | exact RSS MB | exact violation | exact accuracy | capped user s"
          " | capped RSS MB | capped violation | capped accuracy |",
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in cost:
        K = row["K"]
        cells = [f"{K:,}", f"{K * COST_RHO:,.0f}"]
        if 0 in row:
            p, t = row[0]
            cells += [f"{t['user_s']:.2f}", f"{t['wall_s']:.2f}", f"{t['rss_mb']:.0f}",
                      f"{p['expected_violation_rate']:.5f}", f"{p['expected_accuracy']:.4f}"]
        else:
            cells += ["-"] * 5
        p, t = row[CAP]
        cells += [f"{t['user_s']:.2f}", f"{t['rss_mb']:.0f}", f"{p['expected_violation_rate']:.5f}",
                  f"{p['expected_accuracy']:.4f}"]
        md.append("| " + " | ".join(cells) + " |")
    md += ["", f"At K <= {CAP} the capped compile is the exact one. Above it, its cost is that of {CAP} workers "
           "whatever K (the process is one policy, so user CPU includes start-up).", "",
           "## The cap's error at the same load per worker", "",
           f"Expected violation / accuracy of the exact MDP at K workers and of the capped one ({CAP} phases, the "
           "same for every K above the cap), at each load per worker.", "",
           "| QPS per worker | capped | " + " | ".join(f"exact K = {K}" for K in error_k) +
           " | capped - exact (violation points) | capped - exact (accuracy points) |",
           "| ---: | ---: | " + " | ".join("---:" for _ in error_k) + " | ---: | ---: |"]
    worst_v = worst_a = 0.0
    for i, rho in enumerate(ERROR_RHO):
        c = capped[i]
        cells = [f"{rho:g}", f"{c['expected_violation_rate']:.5f} / {c['expected_accuracy']:.4f}"]
        dv, da = [], []
        for K in error_k:
            e = exact[K][i]
            cells.append(f"{e['expected_violation_rate']:.5f} / {e['expected_accuracy']:.4f}")
            dv.append(100 * (c["expected_violation_rate"] - e["expected_violation_rate"]))
            da.append(100 * (c["expected_accuracy"] - e["expected_accuracy"]))
        worst_v = max(worst_v, max(abs(x) for x in dv))
        worst_a = max(worst_a, max(abs(x) for x in da))
        cells += [" / ".join(f"{x:+.2f}" for x in dv), " / ".join(f"{x:+.2f}" for x in da)]
        md.append("| " + " | ".join(cells) + " |")
    md += ["", f"Largest difference: {worst_v:.2f} points of violation, {worst_a:.2f} points of accuracy.", "",
           "## Whole plans (`lull plan --load-qps L`, one command)", "",
           "| load QPS | method | workers | expected violation | expected accuracy | policies compiled | wall s | "
           "user s | peak RSS MB |", "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in plans:
        for name in ("capped", "exact"):
            if name not in row:
                continue
            j, t = row[name]
            md.append(f"| {row['load']:,.0f} | {name if name == 'exact' else f'cap {CAP}'} | {j['workers']:,} | "
                      f"{j['expected_violation_rate']:.4f} | {j['expected_accuracy']:.4f} | "
                      f"{j['policies_compiled']:.0f} | {t['wall_s']:.1f} | {t['user_s']:.1f} | {t['rss_mb']:.0f} |")
    if trace_plan:
        j, t = trace_plan
        peak = max(w["workers"] for w in j["schedule"])
        md.append(f"| Twitter, peak {args.trace_peak:,.0f} (10-s windows) | cap {CAP} | {peak:,} at the peak | - | - | "
                  f"{j['policies_compiled']:.0f} | {t['wall_s']:.1f} | {t['user_s']:.1f} | {t['rss_mb']:.0f} |")
    md += ["", "## Each capped plan's fleet simulated at full size", "",
           f"`lull compile --workers K --load-qps L --phase-cap {CAP}` (the plan's policy), then `lull simulate "
           "--trace constant:L:300 --seed S`. Criteria (issue): simulated violation <= expected + 0.2 points, "
           "accuracy within 1 point.", "",
           "| load QPS | workers | seed | queries | expected violation | simulated violation | expected accuracy | "
           "simulated accuracy | met | sim wall s | sim user s | sim RSS MB |",
           "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for load, workers, runs in sims:
        for seed, (r, t, pol) in enumerate(runs, 1):
            ev, ea = pol["expected_violation_rate"], pol["expected_accuracy"]
            sv, sa = r["violation_rate"], r["accuracy_per_satisfied_query"]
            ok = sv <= ev + 0.002 and abs(sa - ea) <= 0.01
            md.append(f"| {load:,.0f} | {workers:,} | {seed} | {r['queries']:,} | {ev:.4f} | {sv:.4f} | {ea:.4f} | "
                      f"{sa:.4f} | {'yes' if ok else 'NO'} | {t['wall_s']:.1f} | {t['user_s']:.1f} | "
                      f"{t['rss_mb']:.0f} |")
    with open(L.result_name("fleet_scale", "image") + ".md", "w") as f:
        f.write("\n".join(md) + "\n")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    ks = [r["K"] for r in cost if 0 in r]
    a.loglog(ks, [r[0][1]["user_s"] for r in cost if 0 in r], "o-", label="exact")
    a.loglog([r["K"] for r in cost], [r[CAP][1]["user_s"] for r in cost], "s-", label=f"phase cap {CAP}")
    a.set_xlabel("workers K")
    a.set_ylabel("user CPU s, one policy (whole process)")
    a.set_title(f"compile cost at {COST_RHO:g} QPS per worker")
    a.legend()
    for K in error_k:
        b.plot(ERROR_RHO, [100 * e["expected_violation_rate"] for e in exact[K]], "o-", label=f"exact K = {K}")
    b.plot(ERROR_RHO, [100 * c["expected_violation_rate"] for c in capped], "s--", label=f"capped ({CAP} phases)")
    b.axhline(1.0, color="grey", lw=0.8)
    b.set_xlabel("QPS per worker")
    b.set_ylabel("expected violation %")
    b.set_title("the cap's error at the same load per worker")
    b.legend()
    fig.tight_layout()
    fig.savefig(L.result_name("fleet_scale", "image") + ".png", dpi=110)
    print(open(L.result_name("fleet_scale", "image") + ".md").read())


if __name__ == "__main__":
    main()
