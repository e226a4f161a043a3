#!/usr/bin/env bash
# Autoscaling for real, on processes: `lull serve --autoscale` with the
# local-process worker pool over latency-replay stand-in servers (each batch
# sleeps a latency drawn from test/data/replay_profile.json, no model
# computation), under Poisson load from `lull loadgen` that steps 1x -> 3x ->
# 1x. Exits non-zero if a check fails:
#   - the workers scale out (more than the floor up at some point) and back in
#     (the floor again at the end, the removed processes stopped);
#   - no query lost and no 5xx (every query sent answered 200);
#   - the violation rate over the whole run at most the planned target
#     (--max-violation) + 2 points;
#   - every scale event logged: the scale lines in --autoscale-log match the
#     scale events /metrics counts, one line each with its reason.
# The policy library covers 1..4 workers (lull compile --workers 1:4:1) from
# the same replay profile; the autoscaler's capacity table asks for a 1%
# violation target and an expected accuracy of at least 0.77, which makes a
# worker's capacity ~35 QPS: 15 QPS (1x) fits one worker, 45 QPS (3x) needs
# two. Writes autoscale-e2e.{md,json} to AE2E_OUT (default experiments/results).
#
#   AE2E_QUICK=1   the CI version (ctest serve.autoscale_e2e): phases 8/15/20 s
#                  instead of 20/30/40 s
#   AE2E_OUT, AE2E_BASE_QPS (15), AE2E_RT=0 (normal priority; see e2e.sh on why
#   real-time priority where allowed)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
OUT="${AE2E_OUT:-$ROOT/experiments/results}"
QUICK="${AE2E_QUICK:-0}"
BASE="${AE2E_BASE_QPS:-15}"
PROFILE="$ROOT/test/data/replay_profile.json"
SLO_MS=80; HOP_MS=10; TARGET_VIOLATION=0.01; MIN_ACCURACY=0.77
if [ "$QUICK" = 1 ]; then PHASES="1:8 3:15 1:20"; else PHASES="1:20 3:30 1:40"; fi
WORK="$(mktemp -d /tmp/lull-autoscale-e2e.XXXXXX)"
RT=()
if [ "${AE2E_RT:-1}" = 1 ] && chrt -f 1 true 2>/dev/null; then RT=(chrt -f 1); fi
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT
mkdir -p "$OUT"

"$LULL" compile --profiles "$PROFILE" --slo-ms $((SLO_MS - HOP_MS)) --workers 1:4:1 --percentile 100 \
    --load-qps 5:200:5 --max-queue 8 --intervals 50 --out "$WORK/library.pb" 2>/dev/null
accuracy_json "$PROFILE" "$WORK/accuracy.json"

# Scale-out as soon as the 5 s maximum needs it (lead 2 s: a replay server is
# up in about a second); scale-in after 5 s of less, one step at a time; the
# envelope's windows short enough that the 3x phase does not hold scale-in
# back for half a minute after it ends.
WORKER_CMD="${RT[*]} $PY $ROOT/runtime/modelserver/lull_modelserver.py --replay-profile $PROFILE --port {port}"
"${RT[@]}" "$LULL" serve --policies "$WORK/library.pb" --listen 127.0.0.1:0 --port-file "$WORK/lull.port" \
    --autoscale --worker-pool local --worker-command "$WORKER_CMD" --worker-log-dir "$WORK" \
    --max-violation "$TARGET_VIOLATION" --min-accuracy "$MIN_ACCURACY" \
    --autoscale-forecast window_max:5 --autoscale-lead-s 2 --autoscale-envelope 1:1.5,5:1.2 \
    --autoscale-holdoff-s 5 --autoscale-step-interval-s 2 --drain-timeout-s 10 \
    --autoscale-log "$WORK/scale.log" 2>"$WORK/serve.log" &
PIDS+=($!)
wait_file "$WORK/lull.port"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"

# Worker counts once a second, for the table and the scale-out check.
sample_workers "$TARGET" "$WORK/workers.txt" &
PIDS+=($!)

"${RT[@]}" "$LULL" loadgen --target "$TARGET/predictions/image-classification" --rate 5 --duration 1s > /dev/null || true
run_phases "$TARGET" "$PHASES" "$BASE" "$SLO_MS" autoscale_e2e "${RT[@]}"
wait_scaled_in "$TARGET"  # the last scale-in done (drained and stopped)

PYTHONPATH="$ROOT/experiments" "$PY" - "$WORK" "$OUT" "$PHASES" "$BASE" "$TARGET_VIOLATION" "$QUICK" <<'PYEOF'
import json, re, sys
import e2e_phases
work, out, phases, base, target, quick = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6] == "1"
rows = e2e_phases.phase_rows(work, phases, base)
sent = sum(r["sent"] for r in rows)
ok = sum(r["ok"] for r in rows)
violation = sum(r["violation"] * r["ok"] for r in rows) / max(ok, 1)
metrics = open(f"{work}/metrics.txt").read()
def metric(name): return e2e_phases.metric(metrics, name)
events = {r: metric(f'lull_autoscale_scale_events_total{{reason="{r}"}}') or 0 for r in ("forecast", "envelope", "floor", "forecast_lower")}
scale_lines = [l.strip() for l in open(f"{work}/scale.log") if re.search(r"autoscale t=\S+ scale_(out|in) ", l)]
serve_log = open(f"{work}/serve.log").read()
samples = [list(map(float, l.split())) for l in open(f"{work}/workers.txt") if len(l.split()) == 5]
max_up = max((s[3] for s in samples), default=0)
stopped = len(re.findall(r"autoscale: worker \S+ stopped", serve_log))
checks = {
    "scaled_out": max_up >= 2 and any(" scale_out " in l for l in scale_lines),
    "scaled_in": any(" scale_in " in l for l in scale_lines) and metric('lull_autoscale_workers{state="up"}') == 1 and stopped >= 1,
    "no_loss_no_5xx": e2e_phases.no_loss_no_5xx(rows),
    "violation_within_target_plus_2_points": violation <= target + 0.02,
    "every_scale_event_logged": len(scale_lines) == sum(events.values()) and all("reason=" in l for l in scale_lines),
}
result = dict(rows=rows, sent=sent, ok=ok, violation_rate=violation, target=target, max_workers_up=max_up,
              scale_events=events, scale_log=scale_lines, workers_over_time=samples, checks=checks)
name = "autoscale-e2e-quick" if quick else "autoscale-e2e"
json.dump(result, open(f"{out}/{name}.json", "w"), indent=1)
with open(f"{out}/{name}.md", "w") as f:
    f.write(f"# lull serve --autoscale end to end ({'quick' if quick else 'full'})\n\n"
            f"Local-process pool over latency-replay stand-in servers; Poisson load {base} -> {3 * base} -> {base} QPS; "
            f"SLO 80 ms; target violation {target:g}. Checks: {', '.join(k for k in checks)}.\n\n")
    f.write("| phase | load qps | s | sent | ok | 5xx | unanswered | violation | acc/satisfied |\n|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['phase']} | {r['load']} | {r['seconds']} | {r['sent']} | {r['ok']} | {r['http_5xx']} | {r['unanswered']} | "
                f"{r['violation']:.4f} | {r['accuracy']:.4f} |\n")
    f.write(f"\nWhole run: {ok}/{sent} answered 200, violation rate {violation:.4f} (limit {target + 0.02:.2f}); "
            f"most workers up {max_up:g}.\n\nScale events (the log):\n\n")
    for l in scale_lines: f.write(f"    {l}\n")
    f.write("\nWorkers over time (s: desired starting up draining):\n\n")
    for s in samples: f.write("    " + " ".join(f"{v:g}" for v in s) + "\n")
    f.write("\nChecks: " + ", ".join(f"{k} {'pass' if v else 'FAIL'}" for k, v in checks.items()) + "\n")
print(open(f"{out}/{name}.md").read())
sys.exit(0 if all(checks.values()) else 1)
PYEOF
