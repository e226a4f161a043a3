#!/usr/bin/python3
"""Mixed fleets (docs/operators-guide.md), in simulation, image task.

Part 1, SLO 150 ms, two worker kinds (the artifact's c5 profile, and the
same profile at 0.6x latency as a faster kind: synthetic) and a budget per
second: at each of 5 loads, every count of the two kinds the budget buys is
compiled (`lull compile --fleet`), the most accurate meeting the violation
target is chosen (as an operator would), and it and the uniform fleets are
simulated at 3 seeds: expected and simulated accuracy and violation, at two
prices of the fast kind.

Part 2: two SLO classes (150 ms and 500 ms, 70/30 of the load) in one lull
against two separate lulls sized by hand (c5 workers only): worker-seconds
and per-class accuracy and violation.

Generated profiles, fleet descriptions and policies go to a temporary folder
(the artifact is read from ../shared); results to experiments/results."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import lull_runs as L

SLO_MS = 150
SPEED = 0.6  # the fast kind's latency, as a fraction of c5's
C5_PRICE = 1.0  # per worker-second
BUDGET = 24.0  # price per second every fleet of part 1 may spend
# The fast kind's price per worker-second: at 1.6 it carries 1/0.6 = 1.67x a c5 worker's load for 1.6x the
# price (ahead on capacity and on accuracy per price); at 2.0 it costs more per unit of capacity than c5 and
# is ahead on accuracy only, so neither kind dominates.
FAST_PRICES = (1.6, 2.0)
LOADS = (400, 600, 800, 1000, 1200)
# Compiled at every 100 QPS around them: the scheduler uses the policy for the lowest compiled load at or above its
# 500 ms estimate, so at a reported load half the time the next one's; with a grid 200 QPS apart that policy is a
# much more careful one (12 fast workers at 1000 QPS: simulated accuracy 2 points below the expectation at 1000).
COMPILED_LOADS = tuple(range(300, 1301, 100))
SEEDS = (1, 2, 3)
SECONDS = 300
MAX_VIOLATION = 0.01
# Part 2: one fleet load split 70/30 over the 150 ms and 500 ms classes.
CLASS_LOAD = 1000
CLASSES = (("interactive", 150, 0.7), ("bulk", 500, 0.3))


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_profiles(tmp):
    """c5: the artifact's profile, its 9 Pareto models; fast: the same with
    every latency times SPEED (profiles/scale_latency.py: marked synthetic)."""
    task = L.TASKS["image"]
    full = os.path.join(tmp, "image-all.json")
    run([L.LULL, "profiles", "import", "--artifact", task.profiles, "--accuracy-percent", task.accuracy, "--out", full])
    with open(full) as f:
        prof = json.load(f)
    keep = set(task.models.split(","))
    prof["models"] = [m for m in prof["models"] if m["name"] in keep]
    paths = {"c5": os.path.join(tmp, "image-c5.json"), "fast": os.path.join(tmp, "image-fast.json")}
    L.write(paths["c5"], json.dumps(prof))
    run([os.path.join(L.ROOT, "profiles", "scale_latency.py"), paths["c5"], str(SPEED), paths["fast"]])
    return paths


def compile_fleet(tmp, name, profiles, classes, loads):
    """classes: [(name, slo_ms, share, {kind: workers})] -> fleet policy path
    (lull compile --fleet chooses the weights at each fleet load; its report
    beside it: .report.json for .pb). Prices do not change what is compiled."""
    kinds = sorted({k for c in classes for k in c[3]})
    desc = {"kinds": [{"name": k, "profiles": profiles[k], "price_per_s": 1.0} for k in kinds],
            "classes": [{"name": n, "slo_ms": slo, "share": share, "max_violation": MAX_VIOLATION, "workers": w}
                        for n, slo, share, w in classes]}
    stem = os.path.join(tmp, name.replace(" ", "_"))
    L.write(stem + ".json", json.dumps(desc, indent=1))
    run([L.LULL, "compile", "--fleet", stem + ".json", "--load-qps", ",".join(str(q) for q in loads),
         "--device", "cpu", "--out", stem + ".pb", "--report", stem + ".report.json"])
    return stem + ".pb"


def simulate_fleet(pb, load, seed):
    out = subprocess.run([L.LULL, "simulate", "--policies", pb, "--load-qps", str(load), "--duration-s", str(SECONDS),
                          "--seed", str(seed), "--out", "-"], check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    f = r["fleet"]
    assert f["dropped"] == 0 and f["completed"] + f["not_dispatched_at_end"] == f["queries"], f"queries lost: {pb}"
    return r


def mean(xs):
    return sum(xs) / len(xs)


def candidates(fast_price):
    """The counts an operator with BUDGET per second can buy: for each fast count 0 .. BUDGET / price, as many c5
    workers as the rest pays for (price at most BUDGET; the uniform fleets are the two ends)."""
    out = []
    for nf in range(int(BUDGET / fast_price + 1e-9) + 1):
        nc = int((BUDGET - fast_price * nf) / C5_PRICE + 1e-9)
        if nc + nf:
            out.append((nc, nf))
    return out


def compiled(tmp, profiles, counts, cache):
    """(policy path, the compiled splits by load) for (c5, fast) counts: `lull compile --fleet` once per counts,
    its report's expectation at each load (the weights it chose; a kind alone when the other has no workers)."""
    if counts not in cache:
        nc, nf = counts
        workers = {k: n for k, n in (("c5", nc), ("fast", nf)) if n}
        pb = compile_fleet(tmp, f"fleet_{nc}_{nf}", profiles, [("image", SLO_MS, 1.0, workers)], COMPILED_LOADS)
        with open(pb[:-3] + ".report.json") as f:
            cache[counts] = (pb, {float(s["load_qps"]): s for s in json.load(f)["classes"][0]["splits"]})
    return cache[counts]


def choose(options):
    """options: [(counts, split)]: the most accurate meeting the violation target in expectation, else the least
    violation (what `lull compile --fleet` does for weights, here for counts)."""
    ok = [o for o in options if o[1]["expected"]["violation_rate"] <= MAX_VIOLATION]
    if ok:
        return max(ok, key=lambda o: o[1]["expected"]["accuracy"])
    return min(options, key=lambda o: o[1]["expected"]["violation_rate"])


def simulated(pb, q):
    runs = [simulate_fleet(pb, q, s)["classes"][0] for s in SEEDS]
    return {"exp_acc": runs[0]["expected_accuracy"], "exp_viol": runs[0]["expected_violation_rate"],
            "acc": [r["accuracy_per_satisfied_query"] for r in runs], "viol": [r["violation_rate"] for r in runs],
            "weights": {k["kind"]: k["weight"] for k in runs[0]["kinds"]}}


def part1(tmp, profiles):
    """rows[price, load]: the search's options, the choice, and the simulated choice and uniform fleets."""
    cache, sims, rows = {}, {}, {}
    for price in FAST_PRICES:
        cands = candidates(price)
        ends = {"uniform c5": (int(BUDGET / C5_PRICE + 1e-9), 0), "uniform fast": (0, int(BUDGET / price + 1e-9))}
        for q in LOADS:
            options = [(c, compiled(tmp, profiles, c, cache)[1][float(q)]) for c in cands]
            chosen = choose(options)
            interior = [o for o in options if o[0][0] and o[0][1]]
            fleets = {"chosen": chosen[0], **ends}
            for counts in fleets.values():
                if (counts, q) not in sims:
                    sims[counts, q] = simulated(compiled(tmp, profiles, counts, cache)[0], q)
            rows[price, q] = {"options": options, "chosen": chosen[0], "best_interior": choose(interior) if interior else None,
                              "fleets": fleets, "sim": {n: sims[c, q] for n, c in fleets.items()}}
    return rows


def fleet_name(counts):
    nc, nf = counts
    return " + ".join(f"{n} {k}" for k, n in (("c5", nc), ("fast", nf)) if n)


def part1_lines(rows):
    lines = ["## Part 1: a budget, and the counts an operator would choose for it", "",
             f"Image task, SLO {SLO_MS} ms, target violation {100 * MAX_VIOLATION:g}%. Kinds: `c5` = the artifact's "
             f"image_cloud_cpu profile (9 Pareto models), `fast` = the same profile with every latency sample x{SPEED} "
             f"(**synthetic**). Budget {BUDGET:g} per second; c5 costs {C5_PRICE:g} per worker-second, fast "
             + " or ".join(f"{p:g}" for p in FAST_PRICES) + " (two price ratios). At each load the search takes every "
             "count the budget buys (for each fast count, as many c5 as the rest pays for: price at most the budget; "
             "the uniform fleets are the two ends), compiles each with `lull compile --fleet` (which chooses the split "
             "weights at each load; compiled at every 100 QPS from 300 to 1300) and picks the most accurate whose expected violation meets the target (none: the "
             "least violation). The choice and both uniform fleets then run in `lull simulate --load-qps` for "
             f"{SECONDS} s of Poisson arrivals per load and seed (seeds {', '.join(map(str, SEEDS))}), deterministic "
             "p95 latencies. Expected: the compiled split's expectation; simulated: mean over the seeds (max |sim - "
             "exp| over the seeds in brackets). Accuracy per satisfied query and violation rate in %."]
    worst = []
    for price in FAST_PRICES:
        lines += ["", f"### fast at {price:g} per worker-second", "",
                  "| load (QPS) | fleet | counts (cost/s) | weights | exp acc | sim acc | exp viol | sim viol |",
                  "|---|---|---|---|---|---|---|---|"]
        for q in LOADS:
            r = rows[price, q]
            for name, counts in r["fleets"].items():
                s = r["sim"][name]
                w = ", ".join(f"{k} {v:.2f}" for k, v in s["weights"].items())
                da = max(abs(a - s["exp_acc"]) for a in s["acc"])
                dv = max(abs(v - s["exp_viol"]) for v in s["viol"])
                cost = C5_PRICE * counts[0] + price * counts[1]
                lines.append(f"| {q} | {name} | {fleet_name(counts)} ({cost:g}) | {w} | {100 * s['exp_acc']:.2f} | "
                             f"{100 * mean(s['acc']):.2f} ({100 * da:.2f}) | {100 * s['exp_viol']:.3f} | "
                             f"{100 * mean(s['viol']):.3f} ({100 * dv:.3f}) |")
                worst.append((price, q, name, 100 * abs(mean(s["acc"]) - s["exp_acc"]),
                              100 * abs(mean(s["viol"]) - s["exp_viol"]), 100 * s["exp_viol"], 100 * mean(s["viol"])))
        # Where an interior mix wins, and by how much; where it does not, how far the best one is behind.
        said = []
        for q in LOADS:
            r = rows[price, q]
            ok_uniform = [o for o in r["options"] if not (o[0][0] and o[0][1])
                          and o[1]["expected"]["violation_rate"] <= MAX_VIOLATION]
            best_u = max((o[1]["expected"]["accuracy"] for o in ok_uniform), default=None)
            bi = r["best_interior"]
            bi_ok = bi is not None and bi[1]["expected"]["violation_rate"] <= MAX_VIOLATION
            n_ok = sum(o[1]["expected"]["violation_rate"] <= MAX_VIOLATION for o in r["options"])
            head = f"{q} QPS ({n_ok} of {len(r['options'])} meet the target): "
            if best_u is None:
                said.append(head + "no uniform fleet meets the target" + (
                    f"; {fleet_name(bi[0])} does, at {100 * bi[1]['expected']['accuracy']:.2f}" if bi_ok else ""))
            elif bi_ok:
                d = 100 * (bi[1]["expected"]["accuracy"] - best_u)
                said.append(head + f"best mix {fleet_name(bi[0])} {d:+.2f} points against the best uniform fleet")
            else:
                said.append(head + "no mix meets the target")
        chosen_mixed = [q for q in LOADS if all(rows[price, q]["chosen"])]
        lines += ["", "Search, expected accuracy of the best mix (both kinds) against the best uniform fleet meeting "
                  "the target: " + "; ".join(said) + ".",
                  "The choice is a mix of both kinds at: " + (", ".join(f"{q} QPS" for q in chosen_mixed) or "no load")
                  + " (elsewhere a uniform fleet). By construction the choice's expected accuracy is at least that of "
                  "the best uniform fleet meeting the target (both are among the options)."]
        sim_ahead = []
        for q in LOADS:
            r = rows[price, q]
            ok_u = [n for n in ("uniform c5", "uniform fast") if r["sim"][n]["exp_viol"] <= MAX_VIOLATION]
            if ok_u and r["sim"]["chosen"]["exp_viol"] <= MAX_VIOLATION:
                best = max(mean(r["sim"][n]["acc"]) for n in ok_u)
                sim_ahead.append(f"{q} QPS {100 * (mean(r['sim']['chosen']['acc']) - best):+.2f}")
        lines += ["Simulated accuracy of the choice minus the best uniform fleet meeting the target (points): "
                  + ", ".join(sim_ahead) + "."]
    chosen_rows = [w for w in worst if w[2] == "chosen"]
    for label, group in (("the chosen fleets", chosen_rows), ("every fleet simulated", worst)):
        wa = max(group, key=lambda w: w[3])
        wv = max(group, key=lambda w: w[4])
        lines += [f"Simulated (mean of the seeds) vs expected, {label}: largest accuracy gap {wa[3]:.2f} points "
                  f"({wa[2]}, fast {wa[0]:g}, {wa[1]} QPS), largest violation gap {wv[4]:.3f} points ({wv[2]}, fast "
                  f"{wv[0]:g}, {wv[1]} QPS). Target (1 / 0.2 points): "
                  + ("met" if wa[3] <= 1 and wv[4] <= 0.2 else "NOT met") + "."]
    far = [w for w in worst if w[4] > 0.2]
    if far:
        lines += ["Violation gaps above 0.2 points: " + ", ".join(
            f"{n} (fast {p:g}) at {q} QPS (expected {e:.3f}%, simulated {v:.3f}%)" for p, q, n, _, _, e, v in far)
            + f". Each is a point whose expected violation is {min(w[5] for w in far):.2f}% or more, where the "
            "simulator's violation is below the compiled expectation for a single policy set too (experiments/results/"
            "fidelity.md: e.g. 60 workers at 2800 QPS, expected 0.682%, simulated 0.143%; the expectation is on the "
            "safe side there); each (class, kind) group is one such single-set run, on an exact Poisson share."]
    return lines


def smallest_workers(profile, slo_ms, load, most=60):
    """The fewest workers whose compiled policy at `load` meets the target:
    compiled once as a library over 1..most workers."""
    out = os.path.join(os.path.dirname(profile), f"size_{slo_ms}_{load}.json")
    run([L.LULL, "compile", "--profiles", profile, "--slo-ms", str(slo_ms), "--workers", f"1:{most}:1", "--load-qps",
         str(load), "--device", "cpu", "--out", out[:-5] + ".pb", "--report", out])
    with open(out) as f:
        sets = json.load(f)["sets"]
    for s in sets:
        if s["policies"][0]["expected_violation_rate"] <= MAX_VIOLATION:
            return s["workers"]
    sys.exit(f"no worker count up to {most} meets the target at {load} QPS, SLO {slo_ms} ms")


def planned_workers(tmp, profiles):
    """lull plan --fleet: each class's cheapest c5 count meeting its target at its load."""
    desc = {"kinds": [{"name": "c5", "profiles": profiles["c5"], "price_per_s": C5_PRICE}],
            "classes": [{"name": n, "slo_ms": slo, "share": share, "max_violation": MAX_VIOLATION}
                        for n, slo, share in CLASSES]}
    path, planned = os.path.join(tmp, "plan_in.json"), os.path.join(tmp, "plan_out.json")
    L.write(path, json.dumps(desc))
    run([L.LULL, "plan", "--fleet", path, "--load-qps", str(CLASS_LOAD), "--device", "cpu", "--fleet-out", planned])
    with open(planned) as f:
        return {c["name"]: c["workers"]["c5"] for c in json.load(f)["classes"]}


def part2(tmp, profiles):
    loads = {n: share * CLASS_LOAD for n, _, share in CLASSES}
    # Sized by hand: the operator measures what one worker carries at the strict
    # SLO and sizes both lulls with it. By class: each class's own SLO.
    k150 = smallest_workers(profiles["c5"], CLASSES[0][1], loads["interactive"])
    per_worker = loads["interactive"] / k150
    hand = {n: math.ceil(loads[n] / per_worker - 1e-9) for n, _, _ in CLASSES}
    own = planned_workers(tmp, profiles)
    results = {}
    setups = (("two lulls, sized by hand", hand), ("one lull, the same counts", hand),
              ("one lull, each class sized for its SLO", own))
    for label, counts in setups:
        if label.startswith("two"):  # one single-class fleet file per lull, each simulated at its own load
            per_class = []
            for n, slo, share in CLASSES:
                pb = compile_fleet(tmp, f"alone_{n}", profiles, [(n, slo, 1.0, {"c5": counts[n]})], [loads[n]])
                per_class.append([simulate_fleet(pb, loads[n], s)["classes"][0] for s in SEEDS])
        else:
            pb = compile_fleet(tmp, "two_classes_" + label.split(",")[1].split()[0], profiles,
                               [(n, slo, share, {"c5": counts[n]}) for n, slo, share in CLASSES], [CLASS_LOAD])
            runs = [simulate_fleet(pb, CLASS_LOAD, s)["classes"] for s in SEEDS]
            per_class = [[r[i] for r in runs] for i in range(len(CLASSES))]
        results[label] = (counts, per_class)
    return loads, k150, results


def part2_lines(loads, k150, results):
    lines = ["", "## Part 2: two SLO classes in one lull against two lulls", "",
             f"Fleet load {CLASS_LOAD} QPS: " + ", ".join(f"{n} (SLO {slo} ms) {share:.0%}" for n, slo, share in CLASSES)
             + f", c5 workers only (price {C5_PRICE:g}). Two lulls sized by hand: what one worker carries at "
             f"{CLASSES[0][1]} ms ({loads['interactive']:g} QPS needs {k150} workers at <= {100 * MAX_VIOLATION:g}% "
             f"violation) applied to both. One lull: each class's own SLO queue and workers, as many as "
             f"`lull plan --fleet` chooses (the cheapest meeting the target at the class's load). "
             f"{SECONDS} s, seeds {', '.join(map(str, SEEDS))}, mean over the seeds.", "",
             "| setup | class | workers | worker-seconds | exp acc | sim acc | exp viol | sim viol |",
             "|---|---|---|---|---|---|---|---|"]
    for label, (counts, per_class) in results.items():
        for (n, _, _), runs in zip(CLASSES, per_class):
            lines.append(f"| {label} | {n} | {counts[n]} | {counts[n] * SECONDS} | "
                         f"{100 * runs[0]['expected_accuracy']:.2f} | "
                         f"{100 * mean([r['accuracy_per_satisfied_query'] for r in runs]):.2f} | "
                         f"{100 * runs[0]['expected_violation_rate']:.3f} | "
                         f"{100 * mean([r['violation_rate'] for r in runs]):.3f} |")
        lines.append(f"| {label} | all | {sum(counts.values())} | {sum(counts.values()) * SECONDS} | | | | |")
    hand, own = (sum(results[label][0].values()) for label in ("two lulls, sized by hand",
                                                               "one lull, each class sized for its SLO"))
    lines += ["", "Classes never share workers, so one lull with the hand counts serves each class as its own lull "
              "does (same numbers, up to the arrival seeds). Sizing each class for its own SLO needs "
              f"{hand - own} fewer workers ({100 * (hand - own) / hand:.0f}% of the worker-seconds): the 500 ms class "
              "meets its target with fewer; the hand-sized bulk lull's extra workers buy accuracy, not a lower "
              "violation."]
    return lines


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(FAST_PRICES), figsize=(11, 7), squeeze=False)
    for col, price in enumerate(FAST_PRICES):
        a1, a2 = axes[0][col], axes[1][col]
        for i, n in enumerate(("chosen", "uniform c5", "uniform fast")):
            c = f"C{i}"
            sims = [rows[price, q]["sim"][n] for q in LOADS]
            a1.plot(LOADS, [100 * s["exp_acc"] for s in sims], "--", color=c)
            a1.plot(LOADS, [100 * mean(s["acc"]) for s in sims], "o", color=c, label=n)
            a2.plot(LOADS, [100 * s["exp_viol"] for s in sims], "--", color=c)
            a2.plot(LOADS, [100 * mean(s["viol"]) for s in sims], "o", color=c, label=n)
        a1.set_title(f"fast at {price:g}/s, budget {BUDGET:g}/s")
        a1.set_ylabel("accuracy per satisfied query (%)"); a1.legend()
        a2.set_xlabel("load (QPS)"); a2.set_ylabel("SLO violation rate (%)"); a2.set_yscale("symlog", linthresh=0.1)
        a2.axhline(100 * MAX_VIOLATION, color="gray", lw=0.8)
    fig.suptitle(f"Equal budget, image, SLO {SLO_MS} ms (dashed: expected, dots: simulated; fast kind synthetic)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    argparse.ArgumentParser(description=__doc__).parse_args()
    L.check_inputs("image")
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="lull_mixed_fleet_") as tmp:
        profiles = make_profiles(tmp)
        rows = part1(tmp, profiles)
        loads, k150, results = part2(tmp, profiles)
    lines = ["# Mixed fleets (docs/operators-guide.md)", ""] + part1_lines(rows) + part2_lines(loads, k150, results)
    lines += ["", f"`python3 experiments/mixed_fleet.py`: {time.time() - t0:.0f} s."]
    out = L.result_name("mixed_fleet", "image")
    L.write(out + ".md", "\n".join(lines) + "\n")
    plot(rows, out + ".png")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
