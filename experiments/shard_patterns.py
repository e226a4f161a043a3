#!/usr/bin/python3
"""`lull simulate --shards G` against one lull: a policy library compiled for
several arrival patterns of one family (gamma:1,2,4 or batch:1,2,4; family
poisson: over loads only), traffic of that family's most bursty pattern or
Poisson, the fleet as G = 1 (one lull), 2, 4, 8 shards. A shard sees every G-th arrival and reads
its burstiness back to the fleet's stream (runtime/core/burstiness_estimator.h,
set_thinning); the pattern each policy served is in policies_used.

Image task, 9 Pareto models, SLO 150 ms, 64 workers, loads 2000:4000:100,
constant load, deterministic p95 latencies. Per seed the runs share one
arrival stream, so the sharded minus one-lull difference is paired by seed;
reported as its mean and standard error over the seeds, with the compiled
load of the policies served (weighted by queries; --window-ms and
--base-window-ms set the load windows). Prints a markdown
table; runs cached under build/experiments/shard_patterns (delete after
changing lull). LULL=path picks the binary (a cache per binary name)."""
import argparse
import json
import os
import statistics
import subprocess
import sys

import lull_runs as L

WORKERS = 64
LOADS = "2000:4000:100"
TASK = L.TASKS["image"]
WORK = os.path.join(L.WORK, "shard_patterns")


def library(family):
    """family "poisson": a library over loads only (no --arrivals)."""
    out = os.path.join(WORK, f"lib_{family}_w{WORKERS}.pb")
    if not os.path.exists(out):
        print("compiling", out, "...", file=sys.stderr, flush=True)
        patterns = [] if family == "poisson" else ["--arrivals", f"{family}:1,2,4"]
        subprocess.run(L.compile_args("image", 150, WORKERS, LOADS) + patterns + ["--out", out + ".tmp"],
                       check=True, stdout=subprocess.DEVNULL)
        os.replace(out + ".tmp", out)
    return out


def simulate(family, traffic, load, seconds, shards, seed, window_ms=500):
    tag = os.path.basename(L.LULL) + ("" if window_ms == 500 else f"_w{window_ms:g}")
    out = os.path.join(WORK, f"{tag}_{family}_{traffic}_{load}_{seconds:g}_g{shards}_s{seed}.json")
    if not os.path.exists(out):
        cmd = [L.LULL, "simulate", "--policies", library(family), "--workers", str(WORKERS), "--trace",
               f"constant:{load}:{seconds}", "--arrivals", traffic, "--seed", str(seed), "--load-window-ms", f"{window_ms:g}", "--out", out + ".tmp"]
        if shards > 1:
            cmd += ["--shards", str(shards)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.replace(out + ".tmp", out)
    with open(out) as f:
        r = json.load(f)
    assert r["dropped"] == 0 and r["completed"] + r["not_dispatched_at_end"] == r["queries"], out
    return r


def pattern_share(r):
    """Queries per served pattern, as fractions (policies_used's arrivals)."""
    by = {}
    for p in r["policies_used"]:
        by[p.get("arrivals", "?")] = by.get(p.get("arrivals", "?"), 0) + p["queries"]
    total = sum(by.values()) or 1
    return " ".join(f"{k} {v / total:.2f}" for k, v in sorted(by.items()))


def mean_pick(r):
    """The served policies' mean compiled load (fleet QPS), weighted by queries."""
    used = r["policies_used"]
    return sum(p["load_qps"] * p["queries"] for p in used) / (sum(p["queries"] for p in used) or 1)


def mean_se(values):
    m = statistics.mean(values)
    se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return m, se


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--load", type=float, default=3300)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--shards", default="1,2,4,8")
    ap.add_argument("--window-ms", type=float, default=500, help="the sharded runs' load window")
    ap.add_argument("--base-window-ms", type=float, default=500, help="one lull's load window")
    ap.add_argument("--cases", default="gamma/gamma:4,batch/batch:4,gamma/gamma:2,batch/batch:2,gamma/poisson",
                    help="LIBRARY_FAMILY/TRAFFIC, comma-separated (family poisson: a library over loads only)")
    args = ap.parse_args()
    L.check_inputs("image")
    os.makedirs(WORK, exist_ok=True)
    seeds = range(1, args.seeds + 1)
    shard_counts = [int(g) for g in args.shards.split(",")]
    load = f"{args.load:g}"
    print(f"{os.path.basename(L.LULL)}: {WORKERS} workers, {load} QPS, {args.seconds:g} s, seeds 1-{args.seeds}; "
          "diff = sharded - one lull (paired by seed), mean +- standard error, in points\n")
    print("| library | traffic | G | violation % | accuracy % | violation diff | accuracy diff | "
          "mean policy load diff (QPS) | patterns served (seed 1, share of queries) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for family, traffic in (c.split("/") for c in args.cases.split(",")):
        base = {s: simulate(family, traffic, load, args.seconds, 1, s, args.base_window_ms) for s in seeds}
        for g in shard_counts:
            window = args.base_window_ms if g == 1 else args.window_ms
            runs = {s: simulate(family, traffic, load, args.seconds, g, s, window) for s in seeds}
            viol = mean_se([100 * runs[s]["violation_rate"] for s in seeds])
            acc = mean_se([100 * runs[s]["accuracy_per_satisfied_query"] for s in seeds])
            dv = mean_se([100 * (runs[s]["violation_rate"] - base[s]["violation_rate"]) for s in seeds])
            da = mean_se([100 * (runs[s]["accuracy_per_satisfied_query"] - base[s]["accuracy_per_satisfied_query"])
                          for s in seeds])
            dl = mean_se([mean_pick(runs[s]) - mean_pick(base[s]) for s in seeds])
            same = g == 1 and args.base_window_ms == args.window_ms
            diff = "" if same else "{:+.3f} +- {:.3f}"
            print(f"| {'loads only' if family == 'poisson' else family + ':1,2,4'} | {traffic} | {g} | {viol[0]:.3f} | {acc[0]:.3f} | "
                  f"{diff.format(*dv)} | {diff.format(*da)} | {'' if same else '{:+.1f} +- {:.1f}'.format(*dl)} | "
                  f"{pattern_share(runs[1])} |")


if __name__ == "__main__":
    main()
