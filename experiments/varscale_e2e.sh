#!/usr/bin/env bash
# Model variants together with autoscaling, for real on processes:
# `lull plan variants --workers 1:4:1` over the latency-replay profile with
# made-up memory sizes (as variants_e2e.sh) and a 1100 MiB budget picks the
# model sets on 1 worker and writes each variant as a policy library for 1..4
# workers; `lull serve --autoscale --variant-sets` then runs the local-process
# pool of latency-replay stand-in servers (each started with the first
# variant's models) under Poisson load from `lull loadgen` stepping
# 1x -> 4x -> 1x. The autoscaler's target (expected violation <= 0.0001) makes
# one worker carry about 50 QPS with the full set, so 4x needs a second
# worker; the plan's switch to the smaller set comes at 70 QPS. Exits
# non-zero if a check fails:
#   - the plan wrote libraries (manifest "policies": "library", counts 1..4)
#     with at least two nested variants;
#   - workers scaled out (2 up at some point) and back in (1 at the end),
#     every scale event logged;
#   - the variant switched to the smaller set and back (two switch lines,
#     "now using", lull_variant_switches_total 2), the models only the first
#     variant uses unloaded at the first switch and loaded at the second;
#   - no query lost and no 5xx (every query sent answered 200);
#   - no batch failed or retried (a batch sent to a model a server does not
#     hold gets 404 from the stand-in, fails and is retried: none may be),
#     so no query was answered by, or sent to, a model that was not loaded.
# Writes varscale-e2e.{md,json} to VSE2E_OUT (default experiments/results).
#   VSE2E_QUICK=1: phases 8/15/20 s instead of 15/30/40 s (ctest serve.varscale_e2e)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
OUT="${VSE2E_OUT:-$ROOT/experiments/results}"
QUICK="${VSE2E_QUICK:-0}"
BASE=20
SLO_MS=60
BUDGET_MB=1100
if [ "$QUICK" = 1 ]; then PHASES="1:8 4:15 1:20"; else PHASES="1:15 4:30 1:40"; fi
WORK="$(mktemp -d /tmp/lull-varscale-e2e.XXXXXX)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file, the load phases and samplers
trap cleanup EXIT
mkdir -p "$OUT"

PROFILE="$WORK/profile.json"  # the replay profile with the made-up memory sizes
replay_profile_with_memory "$PROFILE"
"$LULL" plan variants --profiles "$PROFILE" --slo-ms $((SLO_MS - 10)) --workers 1:4:1 --percentile 100 --load-qps 5:120:5 \
    --max-queue 8 --intervals 50 --all-models --max-violation 0.0005 --worker-memory-mb "$BUDGET_MB" \
    --variants-out "$WORK/variants" > "$WORK/plan.txt" 2>"$WORK/plan.log"
FIRST_MODELS="$("$PY" -c 'import json, sys; print(",".join(json.load(open(sys.argv[1]))["variants"][0]["models"]))' \
    "$WORK/variants/variants.json")"
accuracy_json "$PROFILE" "$WORK/accuracy.json"
# Each new worker starts with the first variant's models (the pool's model
# check makes sure), and is trimmed to the variant in use once it is up.
WORKER_CMD="$PY $ROOT/test/modelserver/lull_modelserver.py --replay-profile $PROFILE --models $FIRST_MODELS --port {port}"
"$LULL" serve --policies "$WORK/variants/variant-0.pb" --listen 127.0.0.1:0 --port-file "$WORK/lull.port" \
    --autoscale --worker-pool local --worker-command "$WORKER_CMD" --worker-log-dir "$WORK" --max-violation 0.0001 \
    --autoscale-forecast window_max:5 --autoscale-lead-s 2 --autoscale-envelope 1:1.5,5:1.2 --autoscale-tick-s 2 \
    --autoscale-holdoff-s 5 --autoscale-step-interval-s 2 --drain-timeout-s 10 --autoscale-log "$WORK/scale.log" \
    --variant-sets "$WORK/variants/variants.json" --variant-dwell-s 2 --variant-interval-ms 100 --variant-load current:2 \
    2>"$WORK/serve.log" &
PIDS+=($!)
wait_file "$WORK/lull.port"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"

# Worker counts once a second.
sample_workers "$TARGET" "$WORK/workers.txt" &
PIDS+=($!)
run_phases "$TARGET" "$PHASES" "$BASE" "$SLO_MS" varscale_e2e
wait_scaled_in "$TARGET"  # the last scale-in done (drained and stopped)

PYTHONPATH="$ROOT/experiments" "$PY" - "$WORK" "$OUT" "$PHASES" "$BASE" "$QUICK" <<'PYEOF'
import json, re, sys
import e2e_phases
work, out, phases, base, quick = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4]), sys.argv[5] == "1"
rows = e2e_phases.phase_rows(work, phases, base)
metrics = open(f"{work}/metrics.txt").read()
def metric(name): return e2e_phases.metric(metrics, name)
serve_log = open(f"{work}/serve.log").read()
switch_lines = [l.replace(work, "WORK") for l in serve_log.splitlines() if "variant switch" in l]
trim_lines = [l.replace(work, "WORK") for l in serve_log.splitlines() if "variant: new worker" in l]
scale_lines = [l.strip() for l in open(f"{work}/scale.log") if re.search(r"autoscale t=\S+ scale_(out|in) ", l)]
events = {r: metric(f'lull_autoscale_scale_events_total{{reason="{r}"}}') or 0 for r in ("forecast", "envelope", "floor", "forecast_lower")}
samples = [list(map(float, l.split())) for l in open(f"{work}/workers.txt") if len(l.split()) == 5]
max_up = max((s[3] for s in samples), default=0)
manifest = json.load(open(f"{work}/variants/variants.json"))
variants = manifest["variants"]
first = variants[0]["models"]
second = variants[1]["models"] if len(variants) > 1 else first
dropped = [m for m in first if m not in second]
failed_batches = e2e_phases.failed_batches(metrics)
checks = {
    "plan_wrote_nested_libraries": manifest.get("policies") == "library" and manifest.get("worker_counts") == [1, 2, 3, 4]
        and len(variants) >= 2 and set(second) < set(first),
    "scaled_out_and_in": max_up >= 2 and any(" scale_out " in l for l in scale_lines) and any(" scale_in " in l for l in scale_lines)
        and metric('lull_autoscale_workers{state="up"}') == 1,
    "every_scale_event_logged": len(scale_lines) == sum(events.values()),
    "switched_to_small_and_back": len(switch_lines) == 2 and all("now using" in l for l in switch_lines)
        and f"unloaded {','.join(dropped)})" in switch_lines[0] and f"(loaded {','.join(dropped)}," in switch_lines[1]
        and metric("lull_variant_switches_total") == 2,
    "no_loss_no_5xx": e2e_phases.no_loss_no_5xx(rows),
    "no_failed_or_retried_batch": failed_batches == 0 and metric("lull_retried_total") == 0,
}
result = dict(rows=rows, variants=variants, switch_lines=switch_lines, trim_lines=trim_lines, scale_log=scale_lines,
              scale_events=events, max_workers_up=max_up, workers_over_time=samples, failed_batches=failed_batches, checks=checks)
name = "varscale-e2e-quick" if quick else "varscale-e2e"
json.dump(result, open(f"{out}/{name}.json", "w"), indent=1)
with open(f"{out}/{name}.md", "w") as f:
    f.write(f"# lull serve --autoscale --variant-sets end to end ({'quick' if quick else 'full'})\n\n"
            f"Local-process pool over latency-replay stand-in servers; Poisson load {base} -> {4 * base} -> {base} QPS; SLO 60 ms "
            f"(the plan at 50 ms, expected violation <= 0.0005, sets picked on 1 worker, libraries for 1..4, "
            f"{manifest['worker_memory_mb']:g} MiB per worker); autoscaler target 0.0001.\n\n"
            "| variant | from qps | models | memory MiB |\n|---|---|---|---|\n")
    for i, v in enumerate(variants):
        f.write(f"| {i} | {v['from_qps']:g} | {', '.join(v['models'])} | {v['memory_mb']:g} |\n")
    f.write("\n| phase | load qps | s | sent | ok | 5xx | unanswered | violation | acc/satisfied | answers by model |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['phase']} | {r['load']} | {r['seconds']} | {r['sent']} | {r['ok']} | {r['http_5xx']} | {r['unanswered']} | "
                f"{r['violation']:.4f} | {r['accuracy']:.4f} | {r['models']} |\n")
    f.write("\nScale events (the log):\n\n")
    for l in scale_lines: f.write(f"    {l}\n")
    f.write("\nVariant switches and new workers trimmed (the log):\n\n")
    for l in switch_lines + trim_lines: f.write(f"    {l}\n")
    f.write("\nWorkers over time (s: desired starting up draining):\n\n")
    for s in samples: f.write("    " + " ".join(f"{v:g}" for v in s) + "\n")
    f.write(f"\nFailed batches {failed_batches:g}. Checks: " + ", ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in checks.items()) + "\n")
print(open(f"{out}/{name}.md").read())
sys.exit(0 if all(checks.values()) else 1)
PYEOF
