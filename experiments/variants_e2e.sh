#!/usr/bin/env bash
# Model variants for real, built through the plan: `lull plan variants` over
# the latency-replay profile (test/data/replay_profile.json: tiny_net,
# small_net, medium_net, large_net) with made-up memory sizes (100, 200, 400,
# 800 MiB, written into a copy here) and a per-worker budget of 1100 MiB on 2
# workers picks the model set per load: the budget rules out holding all
# four, so the servers start with the most accurate set that fits at low load
# ({tiny_net, small_net, large_net}: medium_net is never loaded); from the
# load where that set's expected violation passes the target, the plan picks
# {tiny_net, small_net}. `lull serve --variant-sets variants.json` over two
# latency-replay stand-in servers then switches under Poisson load from
# `lull loadgen` stepping 1x -> 3x -> 1x: large_net is unloaded from both
# servers through the management API at high load and registered again when
# the load falls. Exits non-zero if a check fails:
#   - the plan made two variants, the second a strict subset of the first;
#   - two switches logged (first -> second, second -> first) and counted in /metrics;
#   - the servers' GET /models (sampled every 0.2 s) lacked the models only
#     the first variant uses at some point, and holds them all at the end;
#     a model outside the first variant (over the budget) was never loaded;
#   - no query lost and no 5xx (every query sent answered 200);
#   - no batch failed or retried (a batch sent to an unregistered model gets
#     404 from the stand-in, fails and is retried: none may be), so no query
#     was answered by a model that was not loaded.
# Writes variants-e2e.{md,json} to VE2E_OUT (default experiments/results).
#   VE2E_QUICK=1: phases 8/12/12 s instead of 15/25/25 s
#   VE2E_BACKEND=v2: over the Open Inference Protocol (lull serve --backend v2;
#     the servers speak v2 only, models load and unload through the
#     repository extension, and are sampled from POST /v2/repository/index)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
OUT="${VE2E_OUT:-$ROOT/experiments/results}"
QUICK="${VE2E_QUICK:-0}"
BACKEND="${VE2E_BACKEND:-torchserve}"
BASE=15
SLO_MS=60
BUDGET_MB=1100
if [ "$QUICK" = 1 ]; then PHASES="1:8 3:12 1:12"; else PHASES="1:15 3:25 1:25"; fi
WORK="$(mktemp -d /tmp/lull-variants-e2e.XXXXXX)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file, the load phases
trap cleanup EXIT
mkdir -p "$OUT"

PROFILE="$WORK/profile.json"  # the replay profile with the made-up memory sizes
replay_profile_with_memory "$PROFILE"
"$LULL" plan variants --profiles "$PROFILE" --slo-ms $((SLO_MS - 10)) --workers 2 --percentile 100 --load-qps 5:60:5 \
    --max-queue 8 --intervals 50 --all-models --max-violation 0.001 --worker-memory-mb "$BUDGET_MB" \
    --variants-out "$WORK/variants" > "$WORK/plan.txt" 2>"$WORK/plan.log"
# The servers hold the first variant's models (what fits the budget at low load).
FIRST_MODELS="$("$PY" -c 'import json, sys; print(",".join(json.load(open(sys.argv[1]))["variants"][0]["models"]))' \
    "$WORK/variants/variants.json")"
accuracy_json "$PROFILE" "$WORK/accuracy.json"
SERVER_FLAGS=(); MODELS_PATH=/models; MODELS_CALL=(curl -s)
if [ "$BACKEND" = v2 ]; then
  SERVER_FLAGS=(--only-v2); MODELS_PATH=/v2/repository/index; MODELS_CALL=(curl -s -X POST -d '{"ready":true}')
fi
models_of() { "${MODELS_CALL[@]}" "$1$MODELS_PATH" | tr -d ' \n'; }
for s in 0 1; do
  "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$PROFILE" --models "$FIRST_MODELS" --port 0 --port-file "$WORK/s$s.port" \
      "${SERVER_FLAGS[@]}" 2>"$WORK/s$s.log" &
  PIDS+=($!)
done
wait_file "$WORK/s0.port"; wait_file "$WORK/s1.port"
S0="http://127.0.0.1:$(cat "$WORK/s0.port")"; S1="http://127.0.0.1:$(cat "$WORK/s1.port")"
"$LULL" serve --policies "$WORK/variants/variant-0.pb" --servers "$S0,$S1" --listen 127.0.0.1:0 --port-file "$WORK/lull.port" \
    --backend "$BACKEND" --variant-sets "$WORK/variants/variants.json" --variant-dwell-s 2 --variant-interval-ms 100 2>"$WORK/serve.log" &
PIDS+=($!)
wait_file "$WORK/lull.port"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"
# The models each server holds, every 0.2 s.
( while sleep 0.2; do
    echo "$(models_of "$S0") $(models_of "$S1")" >> "$WORK/models.txt" || true
  done ) &
PIDS+=($!)

run_phases "$TARGET" "$PHASES" "$BASE" "$SLO_MS" variants_e2e
curl -s "$TARGET/metrics" > "$WORK/metrics.txt"
models_of "$S0" > "$WORK/final0.txt"; models_of "$S1" > "$WORK/final1.txt"

PYTHONPATH="$ROOT/experiments" "$PY" - "$WORK" "$OUT" "$PHASES" "$BASE" "$QUICK" "$BACKEND" <<'PYEOF'
import json, re, sys
import e2e_phases
work, out, phases, base, quick = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4]), sys.argv[5] == "1"
backend = sys.argv[6]
rows = e2e_phases.phase_rows(work, phases, base)
metrics = open(f"{work}/metrics.txt").read()
def metric(name): return e2e_phases.metric(metrics, name)
serve_log = open(f"{work}/serve.log").read()
switch_lines = [l.replace(work, "WORK") for l in serve_log.splitlines() if "variant switch" in l]
manifest = json.load(open(f"{work}/variants/variants.json"))
variants = manifest["variants"]
first = variants[0]["models"]
second = variants[1]["models"] if len(variants) > 1 else first
big = [m for m in first if m not in second]                    # unloaded at high load
profile_models = [m["name"] for m in json.load(open(f"{work}/profile.json"))["models"]]
over_budget = [m for m in profile_models if m not in first]     # never loaded
samples = [l.strip() for l in open(f"{work}/models.txt")]
def has(sample, m): return ('"name":"' if backend == "v2" else '"modelName":"') + m + '"' in sample
without_big = sum(1 for s in samples if big and not any(has(s, b) for b in big))
with_over_budget = sum(1 for s in samples if any(has(s, m) for m in over_budget))
finals = [open(f"{work}/final{s}.txt").read() for s in (0, 1)]
failed_batches = e2e_phases.failed_batches(metrics)
checks = {
    "plan_made_two_nested_variants": len(variants) == 2 and set(second) < set(first) and len(over_budget) > 0,
    "switched_to_small_and_back": len(switch_lines) == 2 and "now using" in switch_lines[0] and "now using" in switch_lines[1]
        and metric("lull_variant_switches_total") == 2,
    "big_models_unloaded_then_loaded": without_big > 0 and all(all(has(f, b) for b in big) for f in finals),
    "over_budget_model_never_loaded": with_over_budget == 0 and not any(has(f, m) for f in finals for m in over_budget),
    "no_loss_no_5xx": e2e_phases.no_loss_no_5xx(rows),
    "no_failed_or_retried_batch": failed_batches == 0 and metric("lull_retried_total") == 0,
}
result = dict(rows=rows, variants=variants, plan_loads=manifest["loads"], switch_lines=switch_lines,
              samples_without_big_models=without_big, samples_with_over_budget_models=with_over_budget, samples=len(samples),
              failed_batches=failed_batches, checks=checks)
name = ("variants-e2e-quick" if quick else "variants-e2e") + ("-v2" if backend == "v2" else "")
json.dump(result, open(f"{out}/{name}.json", "w"), indent=1)
with open(f"{out}/{name}.md", "w") as f:
    f.write(f"# lull plan variants + lull serve --variant-sets end to end ({'quick' if quick else 'full'}, {backend} API)\n\n"
            f"Two latency-replay stand-in servers; Poisson load {base} -> {3 * base} -> {base} QPS; SLO 60 ms (the plan at 50 ms, "
            f"expected violation <= 0.001, 2 workers, {manifest['worker_memory_mb']:g} MiB per worker).\n\n"
            "The plan's variants (variants.json):\n\n| variant | from qps | models | memory MiB |\n|---|---|---|---|\n")
    for i, v in enumerate(variants):
        f.write(f"| {i} | {v['from_qps']:g} | {', '.join(v['models'])} | {v['memory_mb']:g} |\n")
    f.write(f"\nNever loaded (over the budget): {', '.join(over_budget)}.\n\n")
    f.write("| phase | load qps | s | sent | ok | 5xx | unanswered | violation | acc/satisfied | answers by model |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['phase']} | {r['load']} | {r['seconds']} | {r['sent']} | {r['ok']} | {r['http_5xx']} | {r['unanswered']} | "
                f"{r['violation']:.4f} | {r['accuracy']:.4f} | {r['models']} |\n")
    f.write(f"\nSwitches (the log):\n\n")
    for l in switch_lines: f.write(f"    {l}\n")
    f.write(f"\nGET /models samples without {', '.join(big)} on either server: {without_big} of {len(samples)}; "
            f"with {', '.join(over_budget)}: {with_over_budget}; failed batches {failed_batches:g}.\n\nChecks: " + ", ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in checks.items()) + "\n")
print(open(f"{out}/{name}.md").read())
sys.exit(0 if all(checks.values()) else 1)
PYEOF
