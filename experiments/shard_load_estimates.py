#!/usr/bin/python3
"""A shard's load estimate against one lull's, on one Poisson stream: the
fleet's arrivals dealt round-robin to G shards, each estimating in a sliding
window as runtime/core/load_monitor.h does (this re-states its two rules in
Python: "count", G times the shard's arrivals in the window, the rule before
2026-11-29; "shard", G times k - 1 plus the part of the gap the window starts
in), and one lull counting all arrivals. At every arrival: the estimate in
fleet QPS (mean and spread, bias against one lull's) and the compiled load
picked on the grid 2000:4000:100 (the lowest at or above the estimate),
after the windows have filled (from the longer window plus 0.5 s).
Prints a markdown table: mean over seeds, with the standard error of the
paired (per seed) differences."""
import argparse
import math
import random
import statistics


def poisson_stream(qps, seconds, seed):
    rng, t, out = random.Random(seed), 0.0, []
    while True:
        t += rng.expovariate(qps)
        if t > seconds:
            return out
        out.append(t)


def estimates(arrivals, shards, window_s, rule):
    """The fleet-QPS estimate each arrival's shard makes at that arrival."""
    out = [0.0] * len(arrivals)
    for i in range(shards):
        mine, oldest = arrivals[i::shards], 0
        for j, t in enumerate(mine):
            while mine[oldest] <= t - window_s:
                oldest += 1
            k = j - oldest + 1
            if rule == "count" or shards == 1:
                count = k
            else:
                part = 0.5 if oldest == 0 else (mine[oldest] - (t - window_s)) / (mine[oldest] - mine[oldest - 1])
                count = k - 1 + part
            out[i + shards * j] = shards * count / window_s
    return out


def pick(qps, lo=2000, hi=4000, step=100):
    return max(lo, min(hi, lo + math.ceil((qps - lo) / step - 1e-9) * step))


def mean_se(values):
    return statistics.mean(values), statistics.stdev(values) / len(values) ** 0.5


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--load", type=float, default=3300)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--window-ms", type=float, default=500, help="the shards' window (one lull's is 500 ms)")
    args = ap.parse_args()
    rows = {}
    for seed in range(1, args.seeds + 1):
        stream = poisson_stream(args.load, args.seconds, seed)
        skip = next(i for i, t in enumerate(stream) if t > max(0.5, args.window_ms / 1e3) + 0.5)
        one = estimates(stream, 1, 0.5, "count")[skip:]
        one_pick = [pick(e) for e in one]
        for g in (2, 4, 8):
            for rule in ("count", "shard"):
                est = estimates(stream, g, args.window_ms / 1e3, rule)[skip:]
                p = [pick(e) for e in est]
                rows.setdefault((g, rule), []).append((
                    statistics.mean(est) - statistics.mean(one), statistics.pstdev(est), statistics.pstdev(one),
                    statistics.mean(p) - statistics.mean(one_pick),
                    sum(a == b for a, b in zip(p, one_pick)) / len(p),
                    {x: p.count(x) / len(p) for x in set(p)}, {x: one_pick.count(x) / len(p) for x in set(one_pick)}))
    print(f"Poisson {args.load:g} QPS, {args.seconds:g} s, seeds 1-{args.seeds}, shard window {args.window_ms:g} ms "
          "(one lull 500 ms); estimates and picks at every arrival, fleet QPS\n")
    print("| G | rule | estimate bias | sd (one lull's) | mean pick diff | same pick | picks (seed 1) | one lull's |")
    print("|---|---|---|---|---|---|---|---|")
    share = lambda d: " ".join(f"{k}:{v:.2f}" for k, v in sorted(d.items()) if v >= 0.01)
    for (g, rule), v in rows.items():
        bias, pick_diff = mean_se([x[0] for x in v]), mean_se([x[3] for x in v])
        print(f"| {g} | {rule} | {bias[0]:+.2f} +- {bias[1]:.2f} | {statistics.mean(x[1] for x in v):.1f} "
              f"({statistics.mean(x[2] for x in v):.1f}) | {pick_diff[0]:+.2f} +- {pick_diff[1]:.2f} | "
              f"{statistics.mean(x[4] for x in v):.3f} | {share(v[0][5])} | {share(v[0][6])} |")


if __name__ == "__main__":
    main()
