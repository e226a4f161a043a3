#!/usr/bin/env python3
"""Writes a synthetic rate trace for the autoscaling experiment: one hour,
one rate per second ("<second> <QPS>" lines, lull's rate-file format), with
a diurnal shape compressed into the hour and bursts on top. Seeded: the same
arguments give the same file.

Shape (all parameters are flags):
  base(t)   = trough + (peak - trough) * (1 - cos(2 pi t / period)) / 2
              (a day squeezed into `period` seconds: trough at t = 0 and at the
              end, peak in the middle);
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


def rates(args):
    rng = random.Random(args.seed)
    n = int(args.seconds)
    base = [args.trough + (args.peak - args.trough) * (1 - math.cos(2 * math.pi * t / args.period)) / 2 for t in range(n)]
    gain = [1.0] * n
    for _ in range(args.bursts):
        start = rng.uniform(0, n)
        length = rng.uniform(args.burst_min_s, args.burst_max_s)
        g = rng.uniform(args.burst_min_gain, args.burst_max_gain)
        for t in range(int(start), min(n, int(start + length) + 1)):
            # linear ramps of ramp_s at both ends
            up = min(1.0, (t - start) / args.ramp_s) if args.ramp_s > 0 else 1.0
            down = min(1.0, (start + length - t) / args.ramp_s) if args.ramp_s > 0 else 1.0
            gain[t] = max(gain[t], 1 + g * max(0.0, min(up, down)))
    out = []
    for t in range(n):
        noise = math.exp(rng.gauss(0, args.noise)) if args.noise > 0 else 1.0
        out.append(max(1.0, min(args.cap, base[t] * gain[t] * noise)))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seconds", type=float, default=3600)
    p.add_argument("--period", type=float, default=3600, help="length of one 'day' in seconds")
    p.add_argument("--trough", type=float, default=1200)
    p.add_argument("--peak", type=float, default=3000)
    p.add_argument("--bursts", type=int, default=8)
    p.add_argument("--burst-min-s", type=float, default=20)
    p.add_argument("--burst-max-s", type=float, default=120)
    p.add_argument("--burst-min-gain", type=float, default=0.15)
    p.add_argument("--burst-max-gain", type=float, default=0.4)
    p.add_argument("--ramp-s", type=float, default=10)
    p.add_argument("--noise", type=float, default=0.03)
    p.add_argument("--cap", type=float, default=3900)
    args = p.parse_args()
    r = rates(args)
    with open(args.out + ".tmp", "w") as f:
        for t, q in enumerate(r):
            f.write(f"{t} {q:.1f}\n")
    import os
    os.replace(args.out + ".tmp", args.out)
    print(f"{args.out}: {len(r)} s, mean {sum(r) / len(r):.0f} QPS, min {min(r):.0f}, max {max(r):.0f}")


if __name__ == "__main__":
    main()
