#!/usr/bin/env python3
"""Arrival-time files for traffic whose rate moves, and for renewal traffic
(docs/user-guide.md, "Traffic whose rate moves"): one arrival time in seconds
per line, what `lull compile --arrivals fit:FILE` / `tracked:FILE` and
`lull simulate --trace arrivals:FILE` read.

  mmpp:R:T      2-state Markov-modulated Poisson process: rates high:low = R:1,
                exponential state times of mean T s in each state, mean rate
                the requested one
  sin:P         Poisson with rate m (1 + 0.5 sin(2 pi t / P + phase)), random phase
  lognormal:C   renewal, lognormal gaps of CV^2 C
  lomax:A       renewal, Lomax (Pareto II) gaps of shape A
  pareto:A      renewal, Pareto (type I) gaps of shape A
  gsum:N:C      the superposition of N independent gamma:C renewal streams

Usage: modulated_arrivals.py PROCESS QPS SECONDS SEED OUT
Each (process, rate, seed) gives an independent file (a new draw, not a
replay)."""
import math
import sys

import numpy as np


def poisson_times(rng, rate_fn_max, rate_fn, seconds):
    """Inhomogeneous Poisson arrivals by thinning."""
    n = rng.poisson(rate_fn_max * seconds)
    t = np.sort(rng.uniform(0, seconds, n))
    keep = rng.uniform(0, 1, n) * rate_fn_max < rate_fn(t)
    return t[keep]


def mmpp(rng, qps, seconds, ratio, state_s):
    low = 2 * qps / (ratio + 1)
    high = ratio * low
    out = []
    t = 0.0
    state = rng.integers(2)
    while t < seconds:
        d = min(rng.exponential(state_s), seconds - t)
        rate = high if state else low
        n = rng.poisson(rate * d)
        out.append(t + np.sort(rng.uniform(0, d, n)))
        t += d
        state = 1 - state
    return np.concatenate(out)


def renewal(rng, gaps_fn, qps, seconds):
    n = int(qps * seconds * 1.2) + 1000
    g = gaps_fn(n)
    g = g / g.mean() / qps  # mean gap 1/qps over the draw
    t = np.cumsum(g)
    while t[-1] < seconds:
        more = gaps_fn(n)
        t = np.concatenate([t, t[-1] + np.cumsum(more / more.mean() / qps)])
    return t[t < seconds]


def generate(process, qps, seconds, seed):
    rng = np.random.default_rng(seed)
    kind, *args = process.split(":")
    args = [float(a) for a in args]
    if kind == "mmpp":
        return mmpp(rng, qps, seconds, args[0], args[1])
    if kind == "sin":
        phase = rng.uniform(0, 2 * math.pi)
        period = args[0]
        return poisson_times(rng, 1.5 * qps, lambda t: qps * (1 + 0.5 * np.sin(2 * math.pi * t / period + phase)),
                             seconds)
    if kind == "lognormal":
        s2 = math.log(1 + args[0])
        return renewal(rng, lambda n: rng.lognormal(0, math.sqrt(s2), n), qps, seconds)
    if kind == "lomax":
        a = args[0]
        return renewal(rng, lambda n: rng.pareto(a, n), qps, seconds)
    if kind == "pareto":
        a = args[0]
        return renewal(rng, lambda n: rng.pareto(a, n) + 1, qps, seconds)
    if kind == "gsum":
        streams, c = int(args[0]), args[1]
        parts = [renewal(np.random.default_rng([seed, i]), lambda n, r=np.random.default_rng([seed, i, 1]):
                         r.gamma(1 / c, c, n), qps / streams, seconds) for i in range(streams)]
        return np.sort(np.concatenate(parts))
    raise SystemExit(f"unknown process {process}")


def write(process, qps, seconds, seed, out):
    t = generate(process, qps, seconds, seed)
    tmp = out + ".tmp"
    np.savetxt(tmp, t, fmt="%.6f")
    import os
    os.replace(tmp, out)
    return len(t)


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    n = write(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    print(f"{sys.argv[5]}: {n} arrivals", file=sys.stderr)
