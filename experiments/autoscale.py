#!/usr/bin/python3
"""Issue 10, "worker-seconds against accuracy, in simulation": the image task
at SLO 150 ms (9 models), a policy library over 20..150 workers by 5 (loads
100:4000:100 QPS each), three traces:
  twitter       the Twitter trace (reference replay: per-second rates, 300 s);
  diurnal       one hour, a day's shape squeezed into the hour with bursts
                (experiments/diurnal_trace.py, seed 1, its default shape);
  diurnal-deep  the same with a deeper night (--trough 300): how the saving
                grows with the peak-to-mean ratio.
Fixed provisioning at 60..100 workers (lull's scheduler with the set for
that count) against lull simulate --autoscale over the library, sweeping
the autoscaler's accuracy floor (--min-accuracy) at a 1% violation target,
with provisioning delays of 5 s and 30 s, and a reactive-only variant (the
current rate of the last 5 s, no look-ahead: --autoscale-forecast current:5
--autoscale-lead-s 0; the envelope still trips). For each fixed size: the
fewest worker-seconds of an autoscaler run with at least its accuracy and a
violation rate of at most 1% (and the saving), and the same read off the
autoscaler's curve by linear interpolation between adjacent runs.
Each setting runs twice: the fewest-workers rule (--autoscale-objective
floor, the accuracy floor swept) and the price rule (--autoscale-objective
price, the worker price swept, no accuracy floor). Beside them, the
perfect-forecast bound of both rules from the library's expectations
(experiments/autoscale_bound.py).
Writes experiments/results/autoscale.{md,png}."""
import argparse
import json
import os
import subprocess

import autoscale_bound as B
import lull_runs as L

LOADS = "100:4000:100"
LIBRARY_WORKERS = list(range(20, 151, 5))
FIXED = (60, 70, 80, 90, 100)
DELAYS = (5, 30)
FLOORS = (0, 0.72, 0.73, 0.74, 0.745, 0.75, 0.755, 0.76, 0.77, 0.78, 0.79, 0.80)
# Worker prices (accuracy points per worker-second) for the price rule: the
# span where its perfect-forecast curve crosses the fixed sizes' accuracies
# (autoscale_bound.py: about 215..280 on both traces).
PRICES = (200, 215, 220, 225, 230, 240, 250, 260, 280, 320)
TARGET = B.TARGET
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


# The diurnal generator's shapes: its defaults (trough 1200, peak 3000 QPS,
# the trace) and a deeper night (trough 300: a 10:1 day/night swing),
# which shows how the saving grows with the trace's peak-to-mean ratio.
DIURNAL = {"diurnal": [], "diurnal-deep": ["--trough", "300"]}


def traces(seed):
    out = {"twitter": ("rate-file:" + L.TWITTER, "reference")}
    for name, flags in DIURNAL.items():
        path = os.path.join(L.WORK, f"{name.replace('-', '_')}_1h_seed{seed}.txt")
        if not os.path.exists(path):
            subprocess.run(["/usr/bin/python3", os.path.join(L.ROOT, "experiments", "diurnal_trace.py"), "--seed",
                            str(seed), "--out", path] + flags, check=True, stdout=subprocess.DEVNULL)
        out[name] = ("rate-file:" + path, "hold")
    return out


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


def price_start(expect, caps0, price, rate):
    """The count the price rule picks for the trace's first rate."""
    return B.price_choice(expect, caps0, rate, price)


def point(r):
    return {"ws": r["worker_seconds"], "acc": r["accuracy_per_satisfied_query"], "viol": r["violation_rate"],
            "events": len(r.get("scale_events", [])), "r": r}


def interpolated_ws(curve, acc):
    """Worker-seconds at accuracy `acc` on the curve (runs with violation <=
    the target), as autoscale_bound reads its curves."""
    return B.curve_ws_at([(p["ws"], p["acc"], p["viol"]) for p in curve], acc)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    L.check_inputs()
    lib = library()
    expect = B.library_expectations(lib, LIBRARY_WORKERS)
    caps0 = B.capacities(expect, 0)
    results = {}
    for name, (trace, replay) in traces(args.seed).items():
        fixed = {k: point(simulate(f"{name}_fixed{k}_{args.seed}", L.policy_set(k, LOADS), k, trace, replay,
                                   ["--seed", str(args.seed)])) for k in FIXED}
        rate0 = first_rate(trace)
        # rule -> [(parameter, start workers, its flags)]
        sweeps = {"floor": [(f, initial_workers(lib, f, rate0), ["--min-accuracy", str(f)]) for f in FLOORS],
                  "price": [(p, price_start(expect, caps0, p, rate0),
                             ["--autoscale-objective", "price", "--autoscale-worker-price", str(p)]) for p in PRICES]}
        curves = {}
        for variant, flags in VARIANTS.items():
            for delay in DELAYS:
                for rule, runs in sweeps.items():
                    curve = []
                    for param, start, rule_flags in runs:
                        tag = f"{name}_{variant}_d{delay}_{rule[0]}{param}_{args.seed}"
                        r = simulate(tag, lib, start, trace, replay,
                                     ["--seed", str(args.seed), "--autoscale", "--provisioning-delay", f"fixed:{delay}",
                                      "--max-violation", str(TARGET)] + rule_flags + flags)
                        curve.append(dict(point(r), param=param, start=start))
                        print(f"{name} {variant} delay {delay} s {rule} {param}: {curve[-1]['ws']:.0f} worker-s, "
                              f"accuracy {curve[-1]['acc']:.4f}, violation {curve[-1]['viol']:.5f}", flush=True)
                    curves[(variant, delay, rule)] = curve
        bound = B.bound(expect, B.trace_rates(trace.split(":", 1)[1], replay), FIXED)
        results[name] = (fixed, curves, bound)
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


def saving_cells(pairs):
    """pairs: [(fixed worker-seconds, worker-seconds on a curve or None)] ->
    (cells, how many save >= 20%)."""
    cells, met = [], 0
    for fixed_ws, ws in pairs:
        if ws is None:
            cells.append("-")
            continue
        saving = 1 - ws / fixed_ws
        met += saving >= 0.2
        cells.append(f"{100 * saving:.1f}%")
    return cells, met


RULE_PARAM = {"floor": "accuracy floor", "price": "worker price"}


def write_md(results, seed):
    lines = ["# Autoscaling: worker-seconds against accuracy (simulation)", "",
             "Generated by `experiments/autoscale.py` (seed %d). Traces: `twitter` (the artifact's, reference "
             "replay, 300 s), `diurnal` (`experiments/diurnal_trace.py` defaults: one hour, trough 1200, peak 3000 QPS, "
             "bursts; the issue's trace) and `diurnal-deep` (the same with `--trough 300`, a 10:1 day/night swing, "
             "to show how the saving grows with the peak-to-mean ratio). Image task, SLO 150 ms, 9 models; policy library "
             "20..150 workers by 5, loads %s QPS; autoscaler at a %.0f%% expected-violation target. Two rules for the "
             "workers a load needs: **floor** (`--autoscale-objective floor`, the default: the fewest workers meeting "
             "the target and the accuracy floor), its floor swept over %s; **price** (`--autoscale-objective price`: "
             "among the counts meeting the target, the one maximizing 100 x load x expected accuracy - price x "
             "workers), its `--autoscale-worker-price` swept over %s accuracy points per worker-second, no floor. "
             "Settings `%s` (reactive-only: `%s`). Every run starts with the workers its rule picks for the trace's "
             "first rate. Fixed provisioning: lull's scheduler with the set for that count. Violation = violated / "
             "served; no query was lost in any run (checked)."
             % (seed, LOADS, 100 * TARGET, ", ".join(map(str, FLOORS)), ", ".join(map(str, PRICES)),
                " ".join(FORECAST), " ".join(REACTIVE)), ""]
    lines += ["## Summary", "", "Saving in worker-seconds at each fixed size's accuracy, read off the autoscaler's "
              "curve (interpolated; runs with violation <= 1% only; '-': the curve does not reach that accuracy). "
              "Target: >= 20% at every size. The *perfect-forecast bound* rows are `experiments/autoscale_bound.py`: "
              "each second's rate known exactly, no hysteresis, hold-off or delay, accuracy and violation the "
              "library's expectations (linear between compiled loads), against the fixed sizes' expectations on "
              "the same trace; the price rule's bound is the best any choice of compiled worker counts per second "
              "can do with this library (up to mixing between its points).", "",
              "| trace | variant | delay | rule | " + " | ".join(f"{k} workers" for k in FIXED) + " | target met at |",
              "| --- | --- | ---: | --- | " + " | ".join("---:" for _ in FIXED) + " | ---: |"]
    for name, (fixed, curves, bound) in results.items():
        for rule in ("floor", "price"):
            cells, met = saving_cells([(bound["fixed"][k][0], B.curve_ws_at(bound[rule], bound["fixed"][k][1]))
                                       for k in FIXED])
            lines.append(f"| {name} | perfect-forecast bound | - | {rule} | " + " | ".join(cells)
                         + f" | {met} of {len(FIXED)} |")
        for (variant, delay, rule), curve in curves.items():
            cells, met = saving_cells([(f["ws"], interp) for k, f, best, interp in savings_rows(fixed, curve)])
            lines.append(f"| {name} | {variant} | {delay} s | {rule} | " + " | ".join(cells)
                         + f" | {met} of {len(FIXED)} |")
    lines.append("")
    for name, (fixed, curves, bound) in results.items():
        lines += [f"## {name}", "", "Fixed provisioning (simulated; the bound's expectation beside it):", "",
                  "| workers | worker-seconds | accuracy | violation | expected accuracy | expected violation |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: |"]
        for k, f in fixed.items():
            e = bound["fixed"][k]
            lines.append(f"| {k} | {f['ws']:.0f} | {f['acc']:.4f} | {f['viol']:.4%} | {e[1]:.4f} | {e[2]:.4%} |")
        for rule in ("floor", "price"):
            lines += ["", f"Perfect-forecast bound, {rule} rule ({RULE_PARAM[rule]}: worker-seconds, expected "
                      "accuracy, expected violation): " + "; ".join(
                          f"{q[3]:g}: {q[0]:.0f}, {q[1]:.4f}, {q[2]:.3%}" for q in bound[rule] if q[3] < 1e8)]
        for (variant, delay, rule), curve in curves.items():
            lines += ["", f"Autoscaler, {variant}, provisioning delay {delay} s, {rule} rule:", "",
                      f"| {RULE_PARAM[rule]} | start workers | worker-seconds | accuracy | violation | scale events |",
                      "| ---: | ---: | ---: | ---: | ---: | ---: |"]
            for q in curve:
                lines.append(f"| {q['param']} | {q['start']} | {q['ws']:.0f} | {q['acc']:.4f} | {q['viol']:.4%} | {q['events']} |")
            lines += ["", "| fixed workers | its accuracy | its worker-s | best autoscaler run at >= that accuracy, "
                      "violation <= 1% | saving | on the curve (interpolated) | saving |", "| ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
            for k, f, best, interp in savings_rows(fixed, curve):
                b = (f"{rule} {best['param']}: {best['ws']:.0f} worker-s, acc {best['acc']:.4f}" if best
                     else "none reaches it")
                s1 = f"{100 * (1 - best['ws'] / f['ws']):.1f}%" if best else "-"
                s2 = f"{100 * (1 - interp / f['ws']):.1f}%" if interp else "-"
                i = f"{interp:.0f}" if interp else "-"
                lines.append(f"| {k} | {f['acc']:.4f} | {f['ws']:.0f} | {b} | {s1} | {i} | {s2} |")
        lines.append("")
    os.makedirs(L.RESULTS, exist_ok=True)
    L.write(os.path.join(L.RESULTS, "autoscale.md"), "\n".join(lines) + "\n")


def plot(results):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(results)
    fig, grid = plt.subplots(2, 2, figsize=(14, 10))
    axes = list(grid.flat)
    colors = {("forecast", 5): "C0", ("forecast", 30): "C1", ("reactive", 5): "C2", ("reactive", 30): "C3"}
    for ax, name in zip(axes, names):
        fixed, curves, bound = results[name]
        for (variant, delay, rule), curve in curves.items():
            ok = sorted((q for q in curve if q["viol"] <= TARGET), key=lambda q: q["acc"])
            ax.plot([q["ws"] / 1000 for q in ok], [q["acc"] for q in ok], color=colors[(variant, delay)],
                    marker="o" if rule == "floor" else "s", ls="-" if rule == "floor" else "--", ms=4,
                    label=f"{variant}, {delay} s, {rule} rule")
        for rule, style in (("floor", "k:"), ("price", "k-.")):
            ok = sorted((q for q in bound[rule] if q[2] <= TARGET), key=lambda q: q[1])
            ax.plot([q[0] / 1000 for q in ok], [q[1] for q in ok], style, lw=1,
                    label=f"perfect-forecast bound, {rule} (expected accuracy)")
        ax.plot([f["ws"] / 1000 for f in fixed.values()], [f["acc"] for f in fixed.values()], "k^", label="fixed 60..100")
        for k, f in fixed.items():
            ax.annotate(str(k), (f["ws"] / 1000, f["acc"]), textcoords="offset points", xytext=(4, -10), fontsize=8)
        ax.set_xlim(0.8 * min(q[0] for q in bound["floor"]) / 1000, 1.15 * max(f["ws"] for f in fixed.values()) / 1000)
        ax.set_title(f"{name}: worker-seconds vs accuracy (violation <= 1%)")
        ax.set_xlabel("worker-seconds (thousands)")
        ax.set_ylabel("accuracy per satisfied query")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    # Workers over time of two runs on the diurnal trace (one per rule) against the load.
    ax = axes[-1]
    fixed, curves, bound = results["diurnal"]
    for rule, param in (("floor", 0.76), ("price", 225)):
        run = next(q for q in curves[("forecast", 5, rule)] if q["param"] == param)["r"]
        ax.step([w["t_s"] for w in run["workers_over_time"]], [w["up"] for w in run["workers_over_time"]], where="post",
                label=f"workers up, {rule} {param}, forecast, 5 s")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("workers")
    ax2 = ax.twinx()
    with open(run["trace"].split(":", 1)[1]) as f:
        rate = [tuple(map(float, line.split())) for line in f if line.strip()]
    ax2.plot([r[0] for r in rate], [r[1] for r in rate], "C7", lw=0.5, alpha=0.6)
    ax2.set_ylabel("load (QPS, grey)")
    ax.set_title("diurnal: workers over time")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(L.RESULTS, "autoscale.png"), dpi=110)


if __name__ == "__main__":
    main()
