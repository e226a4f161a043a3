#!/usr/bin/python3
"""--autoscale-rule capacity against envelope (the planner's rule for tracked
traffic, schema/count_rule.h) in simulation: the image task at SLO 150 ms
(9 models), a library over 1..10 workers (loads 10:500:10), modulated traces
around 160 QPS, provisioning 5 s, a 1% target; per setting and rule the mean
violation, accuracy and worker-seconds over --seeds seeds with their standard
errors, and the paired difference envelope - capacity (same seed: same
trace) with its standard error. Usage: autoscale_rule.py LULL WORKDIR [--seeds N]; prints a markdown table."""
import argparse
import json
import os
import statistics
import subprocess

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "ramsis-artifact")
MODELS = ("shufflenet_v2_x0_5,mobilenet_v3_large,efficientnet_b0,efficientnet_b2,efficientnet_b3,efficientnet_b4,"
          "efficientnet_v2_s,efficientnet_v2_m,efficientnet_v2_l")
TRACES = ["mmpp:160:4:10:600", "mmpp:160:4:60:600", "sinusoid:160:0.5:60:600"]
SETTINGS = {"default": [], "reactive": ["--autoscale-forecast", "current:5", "--autoscale-holdoff-s", "10"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lull")
    ap.add_argument("work")
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    lib = os.path.join(a.work, "lib.pb")
    if not os.path.exists(lib):
        subprocess.run([a.lull, "compile", "--profiles", os.path.join(SHARED, "profiles", "image_cloud_cpu"),
                        "--accuracy-percent", os.path.join(SHARED, "image_accuracy.json"), "--models", MODELS,
                        "--slo-ms", "150", "--device", "cpu", "--workers", "1:10:1", "--load-qps", "10:500:10",
                        "--out", lib], check=True, capture_output=True)
    print("| trace | setting | rule | violation | accuracy | worker-seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    diffs = []
    for trace in TRACES:
        for setting, extra in SETTINGS.items():
            by_rule = {}
            for rule in ["capacity", "envelope"]:
                rows = by_rule[rule] = []
                for seed in range(1, a.seeds + 1):
                    out = os.path.join(a.work, f"sim-{trace.replace(':', '_')}-{setting}-{rule}-{seed}.json")
                    subprocess.run([a.lull, "simulate", "--policies", lib, "--workers", "4", "--trace", trace,
                                    "--autoscale", "--provisioning-delay", "fixed:5", "--max-violation", "0.01",
                                    "--autoscale-rule", rule, "--seed", str(seed), "--out", out] + extra,
                                   check=True, capture_output=True)
                    d = json.load(open(out))
                    rows.append((d["violation_rate"], d["accuracy_per_satisfied_query"], d["worker_seconds"]))

                def cell(i, fmt):
                    xs = [r[i] for r in rows]
                    se = statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0
                    return f"{fmt.format(statistics.mean(xs))} ± {fmt.replace('+', '').format(se)}"
                print(f"| {trace} | {setting} | {rule} | {cell(0, '{:.4f}')} | {cell(1, '{:.4f}')} | "
                      f"{cell(2, '{:.0f}')} |")
            diffs.append((trace, setting, [[e[i] - c[i] for c, e in zip(by_rule["capacity"], by_rule["envelope"])]
                                           for i in range(3)]))
    print("\n| trace | setting | violation (envelope - capacity) | accuracy | worker-seconds |")
    print("| --- | --- | --- | --- | --- |")
    for trace, setting, cols in diffs:
        def d(xs, fmt):
            se = statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0
            return f"{fmt.format(statistics.mean(xs))} ± {fmt.replace('+', '').format(se)}"
        print(f"| {trace} | {setting} | {d(cols[0], '{:+.4f}')} | {d(cols[1], '{:+.4f}')} | {d(cols[2], '{:+.0f}')} |")


if __name__ == "__main__":
    main()
