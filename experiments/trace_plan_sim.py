#!/usr/bin/python3
"""A trace plan's fleet simulated at full size (docs/user-guide.md, "Large
fleets"): `lull plan --trace` of the Twitter trace scaled to a peak (10-s
windows, --phase-cap 240: experiments/fleet_scale.py's plan_trace), then
each window's (workers, load) compiled with the same cap, joined into one
policy library (`lull policy library`), and `lull simulate --workers-schedule
PLAN.json` over the same trace: the workers change at each window's start as
the plan says, and each window is served by its planned policy.

Expected: each window's planned violation and accuracy, weighted by its
queries (its load x its length). Criteria (issue): simulated violation <=
expected + 0.2 points, accuracy within 1 point. Runs cached under
build/experiments/fleet_scale. Prints a markdown table."""
import argparse
import json
import os
import subprocess
import sys

import fleet_scale as F
import lull_runs as L


def window_policies(plan):
    """One set per planned worker count (its windows' loads), joined into a library."""
    loads = {}
    for w in plan["schedule"]:
        loads.setdefault(w["workers"], set()).add(w["load_qps"])
    lib = os.path.join(F.WORK, f"trace_library_{len(plan['schedule'])}w_{max(loads)}.pb")
    if os.path.exists(lib):
        return lib, None
    sets, user_s, peak_mb = [], 0.0, 0.0
    for K, ls in sorted(loads.items()):
        ls = sorted(ls)
        tag = f"compile_k{K}_cap{F.CAP}_" + "-".join(F.num(x) for x in ls)
        _, t = F.timed(L.compile_args("image", 150, K, ",".join(F.num(x) for x in ls))
                       + ["--phase-cap", str(F.CAP), "--out", os.path.join(F.WORK, tag + ".pb"),
                          "--report", os.path.join(F.WORK, tag + ".json")],
                       os.path.join(F.WORK, tag + ".json"), tag)
        sets.append(os.path.join(F.WORK, tag + ".pb"))
        user_s += t["user_s"]
        peak_mb = max(peak_mb, t["rss_mb"])
    subprocess.run([L.LULL, "policy", "library", "--sets"] + sets + ["--out", lib + ".tmp"], check=True,
                   stdout=subprocess.DEVNULL)
    os.replace(lib + ".tmp", lib)
    return lib, (user_s, peak_mb)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--peak", type=float, default=100000)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    L.check_inputs("image")
    os.makedirs(F.WORK, exist_ok=True)
    plan, plan_t = F.plan_trace(args.peak)
    trace = os.path.join(F.WORK, f"twitter_peak{F.num(args.peak)}.txt")
    lib, compile_cost = window_policies(plan)
    windows = plan["schedule"]
    window_s = plan["window_s"]
    weight = [w["load_qps"] * window_s for w in windows]
    exp_v = sum(w["expected_violation_rate"] * q for w, q in zip(windows, weight)) / sum(weight)
    exp_a = sum(w["expected_accuracy"] * q for w, q in zip(windows, weight)) / sum(weight)
    plan_json = os.path.join(F.WORK, f"plan_trace_peak{F.num(args.peak)}_cap{F.CAP}.json")
    print(f"Plan: {len(windows)} windows of {window_s:g} s, {min(w['workers'] for w in windows):,} to "
          f"{max(w['workers'] for w in windows):,} workers, {plan['policies_compiled']} policies, "
          f"{plan_t['wall_s']:.1f} s wall, {plan_t['user_s']:.1f} s user, {plan_t['rss_mb']:.0f} MB.")
    if compile_cost:
        print(f"Window policies: {len(set(w['workers'] for w in windows))} sets, {compile_cost[0]:.1f} s user in all, "
              f"largest {compile_cost[1]:.0f} MB.")
    print(f"Expected (query-weighted over the windows): violation {exp_v:.4f}, accuracy {exp_a:.4f}.\n")
    print("| seed | queries | simulated violation | simulated accuracy | met | sim wall s | sim user s | sim RSS MB |")
    print("| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for seed in range(1, args.seeds + 1):
        tag = f"sim_trace_peak{F.num(args.peak)}_s{seed}"
        out = os.path.join(F.WORK, tag + ".json")
        cmd = [L.LULL, "simulate", "--policies", lib, "--workers", str(windows[0]["workers"]), "--workers-schedule",
               plan_json, "--trace", "rate-file:" + trace, "--seed", str(seed), "--out", out]
        r, t = F.timed(cmd, out, tag)
        assert r["dropped"] == 0 and r["completed"] + r["not_dispatched_at_end"] == r["queries"], out
        sv, sa = r["violation_rate"], r["accuracy_per_satisfied_query"]
        ok = sv <= exp_v + 0.002 and abs(sa - exp_a) <= 0.01
        print(f"| {seed} | {r['queries']:,} | {sv:.4f} | {sa:.4f} | {'yes' if ok else 'NO'} | {t['wall_s']:.1f} | "
              f"{t['user_s']:.1f} | {t['rss_mb']:.0f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
