#!/usr/bin/python3
"""Issue 10, "worker-seconds against accuracy, in simulation": the image task
at SLO 150 ms (9 models), a policy library over 20..150 workers by 5 (loads
100:4000:100 QPS each), two traces:
  twitter   the Twitter trace (reference replay: per-second rates, 300 s);
  diurnal   one hour, a day's shape squeezed into the hour with bursts
            (experiments/diurnal_trace.py, seed 1, its default shape).
Fixed provisioning at 60..100 workers (lull's scheduler with the set for
that count) against lull simulate --autoscale over the library, sweeping
the autoscaler's accuracy floor (--min-accuracy) at a 1% violation target,
with provisioning delays of 5 s and 30 s, and a reactive-only variant (the
current rate of the last 5 s, no look-ahead: --autoscale-forecast current:5
--autoscale-lead-s 0; the envelope still trips). For each fixed size: the
fewest worker-seconds of an autoscaler run with at least its accuracy and a
violation rate of at most 1% (and the saving), and the same read off the
autoscaler's curve by linear interpolation between adjacent runs.
Writes experiments/results/autoscale.{md,png}."""
import argparse
import json
import os
import subprocess

import lull_runs as L

LOADS = "100:4000:100"
LIBRARY_WORKERS = list(range(20, 151, 5))
FIXED = (60, 70, 80, 90, 100)
DELAYS = (5, 30)
FLOORS = (0, 0.72, 0.73, 0.74, 0.745, 0.75, 0.755, 0.76, 0.77, 0.78, 0.79, 0.80)
TARGET = 0.01
# The autoscaler's settings for every run (lull's defaults except where named).
FORECAST = ["--autoscale-forecast", "window_max:10", "--autoscale-hysteresis", "0.05", "--autoscale-holdoff-s", "30"]
REACTIVE = ["--autoscale-forecast", "current:5", "--autoscale-lead-s", "0", "--autoscale-hysteresis", "0.05",
            "--autoscale-holdoff-s", "30"]
VARIANTS = {"forecast": FORECAST, "reactive": REACTIVE}


def library():
    out = os.path.join(L.WORK, f"library_image_slo150_{LIBRARY_WORKERS[0]}-{LIBRARY_WORKERS[-1]}-5.pb")
    if not os.path.exists(out):
        sets = [L.policy_set(k, LOADS) for k in LIBRARY_WORKERS]
        subprocess.run([L.LULL, "policy", "library"] + sets + ["--out", out], check=True, stdout=subprocess.DEVNULL)
    return out


def traces(seed):
    diurnal = os.path.join(L.WORK, f"diurnal_1h_seed{seed}.txt")
    if not os.path.exists(diurnal):
        subprocess.run(["/usr/bin/python3", os.path.join(L.ROOT, "experiments", "diurnal_trace.py"), "--seed", str(seed),
                        "--out", diurnal], check=True, stdout=subprocess.DEVNULL)
    return {"twitter": ("rate-file:" + L.TWITTER, "reference"), "diurnal": ("rate-file:" + diurnal, "hold")}


def simulate(tag, policies, workers, trace, replay, extra):
    out = os.path.join(L.WORK, f"autoscale_{tag}.json")
    if not os.path.exists(out):
        cmd = [L.LULL, "simulate", "--policies", policies, "--workers", str(workers), "--trace", trace, "--replay", replay,
               "--out", out] + extra
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        r = json.load(f)
    assert r["dropped"] == 0 and r["completed"] + r["not_dispatched_at_end"] == r["queries"], f"queries lost in {out}"
    return r


def first_rate(trace):
    with open(trace.split(":", 1)[1]) as f:
        return float(f.readline().split()[1])


def initial_workers(lib, floor, rate):
    """The count the trace's first rate needs at this floor (the capacity
    table lull reports), so every run starts provisioned for its load."""
    r = simulate(f"capacity_{floor}", lib, LIBRARY_WORKERS[0], "constant:1:1", "hold",
                 ["--autoscale", "--min-accuracy", str(floor), "--max-violation", str(TARGET)])
    for row in r["autoscale"]["capacity"]:
        if row["capacity_qps"] >= rate:
            return row["workers"]
    return LIBRARY_WORKERS[-1]


def point(r):
    return {"ws": r["worker_seconds"], "acc": r["accuracy_per_satisfied_query"], "viol": r["violation_rate"],
            "events": len(r.get("scale_events", [])), "r": r}


def interpolated_ws(curve, acc):
    """Worker-seconds at accuracy `acc` on the curve (runs with violation <=
    the target, sorted by accuracy), linear between adjacent runs; None
    outside it."""
    ok = sorted((p for p in curve if p["viol"] <= TARGET), key=lambda p: p["acc"])
    for a, b in zip(ok, ok[1:]):
        if a["acc"] <= acc <= b["acc"] and b["acc"] > a["acc"]:
            return a["ws"] + (b["ws"] - a["ws"]) * (acc - a["acc"]) / (b["acc"] - a["acc"])
    if ok and ok[0]["acc"] >= acc:
        return ok[0]["ws"]
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    L.check_inputs()
    lib = library()
    results = {}
    for name, (trace, replay) in traces(args.seed).items():
        fixed = {k: point(simulate(f"{name}_fixed{k}_{args.seed}", L.policy_set(k, LOADS), k, trace, replay,
                                   ["--seed", str(args.seed)])) for k in FIXED}
        curves = {}
        for variant, flags in VARIANTS.items():
            for delay in DELAYS:
                curve = []
                for floor in FLOORS:
                    start = initial_workers(lib, floor, first_rate(trace))
                    tag = f"{name}_{variant}_d{delay}_f{floor}_{args.seed}"
                    r = simulate(tag, lib, start, trace, replay,
                                 ["--seed", str(args.seed), "--autoscale", "--provisioning-delay", f"fixed:{delay}",
                                  "--min-accuracy", str(floor), "--max-violation", str(TARGET)] + flags)
                    curve.append(dict(point(r), floor=floor, start=start))
                    print(f"{name} {variant} delay {delay} s floor {floor}: {curve[-1]['ws']:.0f} worker-s, "
                          f"accuracy {curve[-1]['acc']:.4f}, violation {curve[-1]['viol']:.5f}", flush=True)
                curves[(variant, delay)] = curve
        results[name] = (fixed, curves)
    write_md(results, args.seed)
    plot(results)


def savings_rows(fixed, curve):
    rows = []
    for k, f in fixed.items():
        ok = [p for p in curve if p["viol"] <= TARGET and p["acc"] >= f["acc"]]
        best = min(ok, key=lambda p: p["ws"]) if ok else None
        interp = interpolated_ws(curve, f["acc"])
        rows.append((k, f, best, interp))
    return rows


def write_md(results, seed):
    lines = ["# Autoscaling: worker-seconds against accuracy (simulation)", "",
             "Generated by `experiments/autoscale.py` (seed %d). Image task, SLO 150 ms, 9 models; policy library "
             "20..150 workers by 5, loads %s QPS; autoscaler at a %.0f%% expected-violation target, its accuracy floor "
             "swept over %s; settings `%s` (reactive-only: `%s`). Every run starts with the workers the trace's first "
             "rate needs. Fixed provisioning: lull's scheduler with the set for that count. Violation = violated / "
             "served; no query was lost in any run (checked)." % (seed, LOADS, 100 * TARGET, ", ".join(map(str, FLOORS)),
                                                                 " ".join(FORECAST), " ".join(REACTIVE)), ""]
    lines += ["## Summary", "", "Saving in worker-seconds at each fixed size's accuracy, read off the autoscaler's "
              "curve (interpolated; runs with violation <= 1% only; '-': the curve does not reach that accuracy). "
              "Target: >= 20% at every size.", "",
              "| trace | variant | delay | " + " | ".join(f"{k} workers" for k in FIXED) + " | target met at |",
              "| --- | --- | ---: | " + " | ".join("---:" for _ in FIXED) + " | ---: |"]
    for name, (fixed, curves) in results.items():
        for (variant, delay), curve in curves.items():
            cells, met = [], 0
            for k, f, best, interp in savings_rows(fixed, curve):
                if interp is None:
                    cells.append("-")
                    continue
                saving = 1 - interp / f["ws"]
                met += saving >= 0.2
                cells.append(f"{100 * saving:.1f}%")
            lines.append(f"| {name} | {variant} | {delay} s | " + " | ".join(cells) + f" | {met} of {len(FIXED)} |")
    lines.append("")
    for name, (fixed, curves) in results.items():
        lines += [f"## {name}", "", "Fixed provisioning:", "", "| workers | worker-seconds | accuracy | violation |",
                  "| ---: | ---: | ---: | ---: |"]
        for k, f in fixed.items():
            lines.append(f"| {k} | {f['ws']:.0f} | {f['acc']:.4f} | {f['viol']:.4%} |")
        for (variant, delay), curve in curves.items():
            lines += ["", f"Autoscaler, {variant}, provisioning delay {delay} s:", "",
                      "| accuracy floor | start workers | worker-seconds | accuracy | violation | scale events |",
                      "| ---: | ---: | ---: | ---: | ---: | ---: |"]
            for q in curve:
                lines.append(f"| {q['floor']} | {q['start']} | {q['ws']:.0f} | {q['acc']:.4f} | {q['viol']:.4%} | {q['events']} |")
            lines += ["", "| fixed workers | its accuracy | its worker-s | best autoscaler run at >= that accuracy, "
                      "violation <= 1% | saving | on the curve (interpolated) | saving |", "| ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
            for k, f, best, interp in savings_rows(fixed, curve):
                b = f"floor {best['floor']}: {best['ws']:.0f} worker-s, acc {best['acc']:.4f}" if best else "none reaches it"
                s1 = f"{100 * (1 - best['ws'] / f['ws']):.1f}%" if best else "-"
                s2 = f"{100 * (1 - interp / f['ws']):.1f}%" if interp else "-"
                i = f"{interp:.0f}" if interp else "-"
                lines.append(f"| {k} | {f['acc']:.4f} | {f['ws']:.0f} | {b} | {s1} | {i} | {s2} |")
        lines.append("")
    os.makedirs(L.RESULTS, exist_ok=True)
    path = os.path.join(L.RESULTS, "autoscale.md")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def plot(results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(results)
    fig, axes = plt.subplots(1, len(names) + 1, figsize=(6 * (len(names) + 1), 4.5))
    styles = {("forecast", 5): "C0o-", ("forecast", 30): "C1s-", ("reactive", 5): "C2o--", ("reactive", 30): "C3s--"}
    for ax, name in zip(axes, names):
        fixed, curves = results[name]
        for key, curve in curves.items():
            ok = [q for q in curve if q["viol"] <= TARGET]
            ax.plot([q["ws"] / 1000 for q in ok], [q["acc"] for q in ok], styles[key], label=f"autoscaler, {key[0]}, {key[1]} s")
        ax.plot([f["ws"] / 1000 for f in fixed.values()], [f["acc"] for f in fixed.values()], "k^", label="fixed 60..100")
        for k, f in fixed.items():
            ax.annotate(str(k), (f["ws"] / 1000, f["acc"]), textcoords="offset points", xytext=(4, -10), fontsize=8)
        ax.set_title(f"{name}: worker-seconds vs accuracy (violation <= 1%)")
        ax.set_xlabel("worker-seconds (thousands)")
        ax.set_ylabel("accuracy per satisfied query")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    # Workers over time of one diurnal run against its load.
    ax = axes[-1]
    fixed, curves = results[names[-1]]
    run = next(q for q in curves[("forecast", 5)] if q["floor"] == 0.76)["r"]
    t = [w["t_s"] for w in run["workers_over_time"]]
    ax.step(t, [w["up"] for w in run["workers_over_time"]], where="post", label="workers up (floor 0.76, 5 s)")
    ax.step(t, [w["up"] + w["starting"] for w in run["workers_over_time"]], where="post", alpha=0.6, label="up + starting")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("workers")
    ax2 = ax.twinx()
    trace = run["trace"].split(":", 1)[1]
    with open(trace) as f:
        rate = [tuple(map(float, line.split())) for line in f if line.strip()]
    ax2.plot([r[0] for r in rate], [r[1] for r in rate], "C7", lw=0.5, alpha=0.6)
    ax2.set_ylabel("load (QPS, grey)")
    ax.set_title(f"{names[-1]}: workers over time")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(L.RESULTS, "autoscale.png"), dpi=110)


if __name__ == "__main__":
    main()
