#!/usr/bin/env python3
"""Arrival-time files for traffic whose rate moves, and for renewal traffic
(docs/user-guide.md, "Traffic whose rate moves"): one arrival time in seconds
per line, what `lull compile --arrivals fit:FILE` / `tracked:FILE` and
`lull simulate --trace arrivals:FILE` read.

  mmpp:R:T      2-state Markov-modulated Poisson process: rates high:low = R:1,
                exponential state times of mean T s in each state, mean rate
                the requested one
  sin:P         Poisson with rate m (1 + 0.5 sin(2 pi t / P + phase)), random phase
  diurnal:P     Poisson whose rate is experiments/diurnal_trace.py's shape with its
                defaults, a day squeezed into P s (diurnal:3600: one day an hour):
                trough:peak 1200:3000 (2.5:1, a day's swing), 8 bursts an hour of
                20-120 s each, +15-40% with 10 s linear ramps (flash crowds last
                minutes, so they keep their length when the day is squeezed),
                lognormal noise of sigma 0.03 per second, clipped at 1.3 x the
                peak; the per-second rates joined linearly and scaled to mean m;
                random phase, burst times and noise per seed
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

import diurnal_trace


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


def diurnal(rng, qps, seconds, period):
    n = int(math.ceil(seconds)) + 1
    bursts = max(1, round(diurnal_trace.DEFAULTS["bursts"] * seconds / 3600))
    r = np.array(diurnal_trace.rates(int(rng.integers(2**31)), seconds=n, period=period, bursts=bursts,
                                     phase=rng.uniform(0, period)))
    r *= qps / r[:-1].mean()  # mean m over [0, seconds) (the per-second values; the joins keep it within noise)
    grid = np.arange(n, dtype=float)
    return poisson_times(rng, r.max(), lambda t: np.interp(t, grid, r), seconds)


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
    if kind == "diurnal":
        return diurnal(rng, qps, seconds, args[0])
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
