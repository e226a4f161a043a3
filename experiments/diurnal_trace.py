#!/usr/bin/env python3
"""Writes a synthetic rate trace for the autoscaling experiment: one hour,
one rate per second ("<second> <QPS>" lines, lull's rate-file format), with
a diurnal shape compressed into the hour and bursts on top. Seeded: the same
arguments give the same file. rates() is the shape with plain arguments
(experiments/modulated_arrivals.py's process diurnal:P draws from it).

Shape (all parameters are flags):
  base(t)   = trough + (peak - trough) * (1 - cos(2 pi (t + phase) / period)) / 2
              (a day squeezed into `period` seconds: with phase 0, trough at
              t = 0 and at the end, peak in the middle);
  bursts    = `bursts` bursts at uniformly drawn start times, each lasting
              U(burst_min_s, burst_max_s) seconds and multiplying the rate by
              U(1 + burst_min_gain, 1 + burst_max_gain), with a linear ramp of
              `ramp_s` seconds up and down (a burst arrives within seconds, as
              a flash crowd does, not as a step of the sampling grid);
  noise     = each second multiplied by a lognormal factor with sigma `noise`
              (slow variation on top of the arrival process's own Poisson
              noise, which the simulator adds);
  the result is clipped to [1, cap] QPS.
"""
import argparse
import math
import random


DEFAULTS = {"seconds": 3600, "period": 3600, "trough": 1200, "peak": 3000, "bursts": 8, "burst_min_s": 20,
            "burst_max_s": 120, "burst_min_gain": 0.15, "burst_max_gain": 0.4, "ramp_s": 10, "noise": 0.03,
            "cap": 3900, "phase": 0}


def rates(seed, **shape):
    """One rate per second, the shape above; keyword arguments override
    DEFAULTS (the flags' defaults)."""
    unknown = set(shape) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"rates(): unknown shape parameters {sorted(unknown)}")
    s = {**DEFAULTS, **shape}
    seconds, period, trough, peak, phase = s["seconds"], s["period"], s["trough"], s["peak"], s["phase"]
    bursts, burst_min_s, burst_max_s = s["bursts"], s["burst_min_s"], s["burst_max_s"]
    burst_min_gain, burst_max_gain, ramp_s, noise, cap = (s["burst_min_gain"], s["burst_max_gain"], s["ramp_s"],
                                                          s["noise"], s["cap"])
    rng = random.Random(seed)
    n = int(seconds)
    base = [trough + (peak - trough) * (1 - math.cos(2 * math.pi * (t + phase) / period)) / 2 for t in range(n)]
    gain = [1.0] * n
    for _ in range(bursts):
        start = rng.uniform(0, n)
        length = rng.uniform(burst_min_s, burst_max_s)
        g = rng.uniform(burst_min_gain, burst_max_gain)
        for t in range(int(start), min(n, int(start + length) + 1)):
            # linear ramps of ramp_s at both ends
            up = min(1.0, (t - start) / ramp_s) if ramp_s > 0 else 1.0
            down = min(1.0, (start + length - t) / ramp_s) if ramp_s > 0 else 1.0
            gain[t] = max(gain[t], 1 + g * max(0.0, min(up, down)))
    out = []
    for t in range(n):
        f = math.exp(rng.gauss(0, noise)) if noise > 0 else 1.0
        out.append(max(1.0, min(cap, base[t] * gain[t] * f)))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seconds", type=float, default=DEFAULTS["seconds"])
    p.add_argument("--period", type=float, default=DEFAULTS["period"], help="length of one 'day' in seconds")
    p.add_argument("--trough", type=float, default=DEFAULTS["trough"])
    p.add_argument("--peak", type=float, default=DEFAULTS["peak"])
    p.add_argument("--bursts", type=int, default=DEFAULTS["bursts"])
    p.add_argument("--burst-min-s", type=float, default=DEFAULTS["burst_min_s"])
    p.add_argument("--burst-max-s", type=float, default=DEFAULTS["burst_max_s"])
    p.add_argument("--burst-min-gain", type=float, default=DEFAULTS["burst_min_gain"])
    p.add_argument("--burst-max-gain", type=float, default=DEFAULTS["burst_max_gain"])
    p.add_argument("--ramp-s", type=float, default=DEFAULTS["ramp_s"])
    p.add_argument("--noise", type=float, default=DEFAULTS["noise"])
    p.add_argument("--cap", type=float, default=DEFAULTS["cap"])
    p.add_argument("--phase", type=float, default=DEFAULTS["phase"], help="seconds added to t in the diurnal cosine")
    args = p.parse_args()
    r = rates(**{k: v for k, v in vars(args).items() if k != "out"})
    with open(args.out + ".tmp", "w") as f:
        for t, q in enumerate(r):
            f.write(f"{t} {q:.1f}\n")
    import os
    os.replace(args.out + ".tmp", args.out)
    print(f"{args.out}: {len(r)} s, mean {sum(r) / len(r):.0f} QPS, min {min(r):.0f}, max {max(r):.0f}")


if __name__ == "__main__":
    main()
