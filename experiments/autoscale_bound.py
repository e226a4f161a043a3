#!/usr/bin/python3
"""The perfect-forecast bound of the autoscaler's worker-seconds saving,
computed offline from the policy library's own expectations (issue 10,
"worker-seconds against accuracy"). Why: the online autoscaler saved 0-13%
against fixed provisioning; this says how much any rule of that family could
save, so the gap is split into "the rule" and "the controller".

Every second of the trace is a window with a perfectly known rate L (the
simulator's per-second rates: `reference` replay for Twitter, `hold` for the
diurnal file). For worker count K, acc(K, L) and viol(K, L) are the expected
accuracy and violation rate of K's policies, linear between compiled loads
(clamped at the grid's ends). A window's count is chosen by
  floor rule  the fewest compiled K whose capacity covers L (the capacity
              table's rule: the top of the run of loads, from the bottom of
              the grid, whose policies meet the violation target and the
              accuracy floor); sweeping the floor traces a curve;
  price rule  among the K whose capacity (floor 0) covers L, the K that
              maximizes 100 * L * acc(K, L) - price * K (accuracy points of
              the second's queries minus the price of its worker-seconds);
              sweeping the price traces a curve.
Fixed K: K every second. Accuracy = the satisfied-query-weighted mean of
acc(K_t, L_t); worker-seconds = sum of K_t. The saving at each fixed size is
read off a rule's curve (linear between adjacent points) at that size's
expected accuracy.
Usable as a module (experiments/autoscale.py adds these rows to its
summary) or alone: prints the bound for both traces."""
import argparse
import bisect
import json
import os
import subprocess

import lull_runs as L

TARGET = 0.01
FLOORS = (0, 0.70, 0.72, 0.73, 0.74, 0.745, 0.75, 0.755, 0.76, 0.765, 0.77, 0.775, 0.78, 0.785, 0.79, 0.795, 0.80)
# Fine where the curve moves (the library's accuracy per worker is nearly
# flat above each load's capacity, so the choice jumps between 200 and 300).
PRICES = tuple(range(0, 200, 20)) + tuple(range(200, 320, 2)) + (350, 400, 500, 1000, 1e9)


def library_expectations(lib, counts):
    """{K: ([load], [acc], [viol])} from `lull policy dump --json` of each set."""
    out = {}
    for k in counts:
        j = json.loads(subprocess.run([L.LULL, "policy", "dump", lib, "--workers", str(k), "--json", "-"], check=True,
                                      capture_output=True, text=True).stdout)
        ps = sorted(j["policies"], key=lambda p: p["load_qps"])
        out[k] = ([p["load_qps"] for p in ps], [p["expected_accuracy"] for p in ps],
                  [p["expected_violation_rate"] for p in ps])
    return out


def trace_rates(path, replay, seconds=300):
    """Per-second rates as the simulator replays the rate file."""
    lines = []
    with open(path) as f:
        for line in f:
            if line.strip():
                t, q = line.split()
                lines.append((float(t), float(q)))
    if replay == "reference":  # mdp-spec 8: seconds 0..last, wrapping over 300 s
        last = int(lines[-1][0])
        per = []
        i = 0
        for s in range(last + 1):
            while i + 1 < len(lines) and lines[i + 1][0] <= s:
                i += 1
            per.append(lines[i][1] if lines[i][0] <= s else 0.0)
        return [per[t % (last + 1)] for t in range(seconds)]
    rates = []  # hold: each line until the next (one-second lines here)
    for (t, q), nxt in zip(lines, lines[1:] + [(lines[-1][0] + 1, None)]):
        rates += [q] * int(round(nxt[0] - t))
    return rates


def interp(xs, ys, x):
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_left(xs, x)
    return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1])


def capacities(expect, floor):
    """{K: capacity QPS} as runtime/manager/capacity_table.cc computes it."""
    caps = {}
    for k, (loads, acc, viol) in expect.items():
        c = 0
        for l, a, v in zip(loads, acc, viol):
            if v > TARGET or a < floor:
                break
            c = l
        caps[k] = c
    return caps


def floor_need(caps, load):
    for k in sorted(caps):
        if caps[k] > 0 and caps[k] >= load:
            return k
    return max(caps)


def price_choice(expect, caps, load, price):
    need = floor_need(caps, load)
    best, best_k = None, need
    for k in sorted(expect):
        if k < need:
            continue
        v = 100 * load * interp(expect[k][0], expect[k][1], load) - price * k
        if best is None or v > best:
            best, best_k = v, k
    return best_k


def evaluate(expect, rates, choose):
    """(worker-seconds, expected accuracy per satisfied query, expected violation)."""
    ws = acc_sum = sat = served = viol = 0.0
    for load in rates:
        k = choose(load)
        loads, acc, vio = expect[k]
        v = interp(loads, vio, load)
        ws += k
        served += load
        viol += load * v
        sat += load * (1 - v)
        acc_sum += load * (1 - v) * interp(loads, acc, load)
    return ws, acc_sum / sat, viol / served


def curve_ws_at(curve, acc):
    """Worker-seconds at accuracy `acc` on a curve of (ws, acc, viol), linear
    between adjacent points sorted by accuracy (violation <= target only);
    None when the curve does not reach it."""
    ok = sorted((p for p in curve if p[2] <= TARGET), key=lambda p: p[1])
    for a, b in zip(ok, ok[1:]):
        if a[1] <= acc <= b[1] and b[1] > a[1]:
            return a[0] + (b[0] - a[0]) * (acc - a[1]) / (b[1] - a[1])
    if ok and ok[0][1] >= acc:
        return ok[0][0]
    return None


def bound(expect, rates, fixed_sizes):
    """{'fixed': {K: point}, 'floor': [point], 'price': [point]} with point = (ws, acc, viol, parameter)."""
    fixed = {k: evaluate(expect, rates, lambda l, k=k: k) + (k,) for k in fixed_sizes}
    floor = []
    for f in FLOORS:
        caps = capacities(expect, f)
        floor.append(evaluate(expect, rates, lambda l: floor_need(caps, l)) + (f,))
    caps0 = capacities(expect, 0)
    price = [evaluate(expect, rates, lambda l, p=p: price_choice(expect, caps0, l, p)) + (p,) for p in PRICES]
    return {"fixed": fixed, "floor": floor, "price": price}


def savings(b):
    """{rule: {K: saving fraction or None}} at each fixed size's expected accuracy."""
    out = {}
    for rule in ("floor", "price"):
        out[rule] = {}
        for k, f in b["fixed"].items():
            ws = curve_ws_at(b[rule], f[1])
            out[rule][k] = None if ws is None else 1 - ws / f[0]
    return out


def main():
    import autoscale as A
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--troughs", default="", help="also the diurnal generator's trace with each of these troughs "
                   "(QPS, comma-separated; the rest its defaults): how the bound grows with the peak-to-mean ratio")
    args = p.parse_args()
    L.check_inputs()
    expect = library_expectations(A.library(), A.LIBRARY_WORKERS)
    runs = [(name, trace.split(":", 1)[1], replay) for name, (trace, replay) in A.traces(args.seed).items()]
    for trough in filter(None, args.troughs.split(",")):
        path = os.path.join(L.WORK, f"diurnal_trough{trough}_1h_seed{args.seed}.txt")
        subprocess.run(["/usr/bin/python3", os.path.join(L.ROOT, "experiments", "diurnal_trace.py"), "--seed",
                        str(args.seed), "--trough", trough, "--out", path], check=True, stdout=subprocess.DEVNULL)
        runs.append((f"diurnal, trough {trough} QPS", path, "hold"))
    for name, path, replay in runs:
        rates = trace_rates(path, replay)
        b = bound(expect, rates, A.FIXED)
        s = savings(b)
        print(f"## {name}: {len(rates)} s, mean {sum(rates) / len(rates):.0f} QPS, peak {max(rates):.0f} "
              f"(peak/mean {max(rates) * len(rates) / sum(rates):.2f})")
        for k, f in b["fixed"].items():
            cells = "  ".join(f"{r} {'-' if s[r][k] is None else f'{100 * s[r][k]:.1f}%'}" for r in ("floor", "price"))
            print(f"fixed {k}: {f[0]:.0f} ws, acc {f[1]:.4f}, viol {f[2]:.4f}   saving at its accuracy: {cells}")
        for rule in ("floor", "price"):
            print(f"{rule} rule: " + "; ".join(f"{q[3]:g}: {q[0]:.0f} ws {q[1]:.4f} {100 * q[2]:.2f}%" for q in b[rule]))


if __name__ == "__main__":
    main()
