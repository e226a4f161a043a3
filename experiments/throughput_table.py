#!/usr/bin/python3
"""The tables of experiments/throughput.sh: one row per bench run, and each
proxy's limit and answers per CPU-second (docs/operators-guide.md says how).

  throughput_table.py --runs WORK/runs --out DIR --machine TEXT --model-ms M --duration 8s [--max-overhead-ms 1]
  throughput_table.py --rows DIR/throughput.json --out DIR      (recomputes the summary of a finished run)

A run sustains its rate when the proxy's p99 is within --max-overhead-ms of the
direct path's, it answered at least 95% of the rate, and nothing failed. The
machine is shared and a run can catch a neighbour's burst, so a rate counts as
sustained when any round sustained it (best of N, as docs/benchmarks.md); a
proxy's limit is the highest rate below which every rate of the ladder was
sustained. A run whose direct path was itself slow (p99 over 2 ms, or late
requests) measured the generator: the limit is then "at least" that, as it
is when the ladder's top rate was sustained.
"""
import argparse
import glob
import json
import os
import statistics


def rows_from_runs(runs_dir, duration, max_over):
    counted_s = float(duration.rstrip("s")) - 2  # the warm-up is not counted
    rows = []
    for meta in sorted(glob.glob(os.path.join(runs_dir, "*.meta"))):
        m = json.load(open(meta))
        if m["round"] == 0:  # warm-up
            continue
        try:
            b = json.load(open(meta[:-5] + ".json"))
        except (OSError, ValueError):
            b = None
        row = dict(m)
        if b:
            p = b["proxy" if m["name"] == "haproxy" else "lull"]
            row.update(p99_ms=p["p99_ms"], direct_p99_ms=b["direct"]["p99_ms"],
                       overhead_p99_ms=p["p99_ms"] - b["direct"]["p99_ms"], errors=p["errors"] + b["direct"]["errors"],
                       late=p["late"], direct_late=b["direct"]["late"], ok=p["ok"], achieved=p["ok"] / counted_s)
            row["sustained"] = (row["errors"] == 0 and row["overhead_p99_ms"] <= max_over
                                and row["achieved"] >= 0.95 * m["rate"])
        else:
            row["sustained"] = False
        row["cpu_cores"] = m["cpu_s"] / m["wall_s"]
        # What the proxy would answer on a whole core at this cost per answer.
        row["per_cpu_second"] = row.get("achieved", 0) / row["cpu_cores"] if row["cpu_cores"] > 0 else None
        rows.append(row)
    rows.sort(key=lambda r: (r["name"], r["round"], r["rate"]))
    return rows


def generator_bound(r):
    return r.get("direct_p99_ms", 0) > 2 or r.get("direct_late", 0) > 0


def summarize(rows):
    summary = {}
    for name in sorted({r["name"] for r in rows}):
        mine = [r for r in rows if r["name"] == name]
        limit, at_least = 0, True  # the ladder's top sustained: at least that
        for rate in sorted({r["rate"] for r in mine}):
            runs = [r for r in mine if r["rate"] == rate]
            if any(r["sustained"] and not generator_bound(r) for r in runs):
                limit = rate
            else:
                at_least = all(generator_bound(r) for r in runs)
                break
        at_limit = [r["per_cpu_second"] for r in mine if r["rate"] == limit and r["sustained"] and r["per_cpu_second"]]
        summary[name] = {"limit_qps": limit, "at_least": at_least,
                         "answers_per_cpu_second_at_limit": round(statistics.median(at_limit)) if at_limit else None,
                         "cpu_cores_at_limit": [round(r["cpu_cores"], 3) for r in mine if r["rate"] == limit],
                         "rounds": sorted({r["round"] for r in mine})}
    return summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs")
    ap.add_argument("--rows")
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine", default="")
    ap.add_argument("--model-ms", default="")
    ap.add_argument("--duration", default="8s")
    ap.add_argument("--max-overhead-ms", type=float, default=1.0)
    a = ap.parse_args()
    if a.rows:
        old = json.load(open(a.rows))
        rows, a.machine, a.model_ms, a.duration = old["rows"], old["machine"], old["model_ms"], old["duration"]
        a.max_overhead_ms = old["max_overhead_ms"]
    else:
        rows = rows_from_runs(a.runs, a.duration, a.max_overhead_ms)
    summary = summarize(rows)
    json.dump({"machine": a.machine, "model_ms": a.model_ms, "duration": a.duration,
               "max_overhead_ms": a.max_overhead_ms, "rows": rows, "summary": summary},
              open(os.path.join(a.out, "throughput.json"), "w"), indent=1)
    lines = [f"Machine: {a.machine}; model {a.model_ms} ms; {a.duration} per run (2 s warm-up); criterion p99 "
             f"overhead <= {a.max_overhead_ms} ms, >= 95% answered, no error.", "",
             "| proxy | round | rate /s | answered /s | late | p99 ms | direct p99 ms | overhead ms | errors | "
             "proxy CPU (cores) | answers per CPU-second | load avg |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "p99_ms" in r:
            lines.append(f"| {r['name']} | {r['round']} | {r['rate']} | {r['achieved']:.0f} | {r['late']} | "
                         f"{r['p99_ms']:.2f} | {r['direct_p99_ms']:.2f} | {r['overhead_p99_ms']:+.2f} | {r['errors']} | "
                         f"{r['cpu_cores']:.2f} | {r['per_cpu_second'] or 0:.0f} | {r['load']} |")
        else:
            lines.append(f"| {r['name']} | {r['round']} | {r['rate']} | - | - | - | - | - | failed | "
                         f"{r['cpu_cores']:.2f} | - | {r['load']} |")
    lines.append("")
    for name, s in summary.items():
        lines.append(f"- {name}: highest rate sustained (best of rounds {s['rounds']}): "
                     f"{'at least ' if s['at_least'] else ''}{s['limit_qps']}/s, using {s['cpu_cores_at_limit']} "
                     f"cores; answers per CPU-second there (median): {s['answers_per_cpu_second_at_limit']}")
    open(os.path.join(a.out, "throughput.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines[-len(summary):]))


if __name__ == "__main__":
    main()
