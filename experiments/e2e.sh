#!/usr/bin/env bash
# End to end, for real: model servers running TorchVision models on the CPU
# (the stand-in for TorchServe), `lull profile`, `lull compile`, `lull serve`,
# and Poisson load from `lull loadgen` at three loads. Writes
# experiments/results/e2e.{md,json,png} and exits non-zero if a check fails:
# a query lost or answered 5xx; a measured violation rate above the compiled
# expectation + 2 points; accuracy per satisfied query more than 2 points
# from the expectation. Expectations are the compiled policy's for that load
# (lull compile --report).
#   E2E_QUICK=1   short run for the test suite (fewer profile samples, 8 s per load)
#   E2E_STRICT=0  report the statistical checks without failing on them
#                 (losses and 5xx always fail)
# Choices (docs/serving.md, "The end-to-end run"): 112-px inputs; four
# TorchVision models that form a latency/accuracy Pareto front on one CPU
# thread (6.7 to 33 ms at batch 1); SLO 60 ms, so the most accurate model fits
# a lone query but not a queue; loads 15/35/50 qps on 2 workers, from idle to
# ~65% busy, where the policy moves from mobilenet_v2 alone to a mix.
# resnet18 is left out: at 112 px its batch of 1 takes ~90 ms but a batch of
# 2 ~19 ms (PyTorch picks another convolution path for one image), and the
# profile's monotone pass (mdp-spec 1.1) would then plan with 19 ms.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3   # Debian's interpreter, which has python3-torch
OUT="${E2E_OUT:-$ROOT/experiments/results}"
QUICK="${E2E_QUICK:-0}"; STRICT="${E2E_STRICT:-1}"
SERVERS="${E2E_SERVERS:-2}"
MODELS="${E2E_MODELS:-shufflenet_v2_x0_5,mobilenet_v3_small,shufflenet_v2_x1_0,mobilenet_v2}"
SLO_MS="${E2E_SLO_MS:-60}"; LOADS="${E2E_LOADS:-15 35 50}"; DURATION="${E2E_DURATION:-30s}"
SAMPLES=50; WARMUP=3; PAUSE_MS=200; HOP_MS="${E2E_HOP_MS:-8}"
# Quick: 25 samples still put the p99 at one of the two slowest; 10 s per load
# gives 150-500 queries, enough that 2 points of violation is 3 or more queries.
if [ "$QUICK" = 1 ]; then DURATION=10s; SAMPLES=25; WARMUP=2; PAUSE_MS=100; fi
ACC="$ROOT/runtime/modelserver/accuracy.json"
WORK="$(mktemp -d /tmp/lull-e2e.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$OUT"

wait_file() { for _ in $(seq 1 600); do [ -s "$1" ] && return 0; sleep 0.1; done; echo "e2e: $1 never appeared" >&2; exit 1; }

URLS=()
for i in $(seq 0 $((SERVERS - 1))); do
  "$PY" "$ROOT/runtime/modelserver/lull_modelserver.py" --models "$MODELS" --image-size 112 \
      --port-file "$WORK/port$i" 2>"$WORK/server$i.log" &
  PIDS+=($!)
done
for i in $(seq 0 $((SERVERS - 1))); do wait_file "$WORK/port$i"; URLS+=("http://127.0.0.1:$(cat "$WORK/port$i")"); done
WORKERS="$(IFS=,; echo "${URLS[*]}")"

# Batch sizes 1-4: with a 60 ms SLO no model can serve a batch of 5 in time.
# Every worker is profiled at the same time and the samples are pooled: when
# serving, the model servers share this machine's cores, and a profile taken
# with the others idle underestimates the latency they see then.
PROFILERS=()
for i in $(seq 0 $((SERVERS - 1))); do
  "$LULL" profile --worker "${URLS[$i]}" --models "$MODELS" --max-batch 4 --samples "$SAMPLES" \
      --warmup "$WARMUP" --pause-ms "$PAUSE_MS" --accuracy "$ACC" --out "$WORK/profile$i.json" \
      2> >(tr '\r' '\n' | grep median | sed "s/^/worker $i /" >&2) &
  PROFILERS+=($!)
done
for p in "${PROFILERS[@]}"; do wait "$p"; done
"$PY" - "$WORK" "$SERVERS" <<'PYEOF'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
sets = [json.load(open(f"{work}/profile{i}.json")) for i in range(n)]
merged = sets[0]
for other in sets[1:]:
    for m, o in zip(merged["models"], other["models"]):
        assert m["name"] == o["name"]
        for lat, olat in zip(m["latencies"], o["latencies"]):
            assert lat["batch"] == olat["batch"]
            lat["samples_s"] += olat["samples_s"]
merged["provenance"] += f" (samples of {n} workers profiled at the same time, pooled)"
json.dump(merged, open(f"{work}/profile.json", "w"), indent=1)
PYEOF
# The slowest sample (percentile 100): the policy plans with the worst latency
# seen, not one that one batch in twenty exceeds (the p95 default): a tight plan
# (the accurate model whenever the slack allows it) then rarely runs late.
# The policy gets a server-side budget: the SLO that loadgen checks end to
# end, less HOP_MS (8 ms) kept for the client <-> lull hop, which lull's
# deadlines (stamped when a query reaches lull) cannot see, and for latency
# tails beyond the profile's slowest sample. With 3 ms the 35 qps point failed
# the violation check in about half the runs (2.2-3.7% against 2%): the plan
# is tight by design, so any spike past the profile's maximum is a miss.
"$LULL" compile --profiles "$WORK/profile.json" --slo-ms "$((SLO_MS - HOP_MS))" --workers "$SERVERS" --percentile 100 \
    --load-qps 5:100:5 --max-queue 8 --intervals 50 --out "$WORK/set.pb" --report "$WORK/report.json" 2>/dev/null
"$LULL" serve --policies "$WORK/set.pb" --workers "$WORKERS" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
PIDS+=($!)
wait_file "$WORK/lull.port"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"

# Warm-up, not counted: opens the connections and lets every path run once.
"$LULL" loadgen --target "$TARGET/predictions/image-classification" --rate 10 --duration 2s > /dev/null || true
for load in $LOADS; do
  "$LULL" loadgen --target "$TARGET/predictions/image-classification" --rate "$load" --duration "$DURATION" \
      --seed "$load" --slo-ms "$SLO_MS" --accuracy "$ACC" --json "$WORK/load$load.json" > "$WORK/load$load.txt" || true
  curl -s "$TARGET/metrics" > "$WORK/metrics$load.txt"
  cat "$WORK/load$load.txt"
done

"$PY" - "$WORK" "$OUT" "$STRICT" "$LOADS" "$SLO_MS" "$HOP_MS" <<'PYEOF'
import json, sys, re
work, out, strict, loads, slo = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4].split(), float(sys.argv[5])
hop = int(sys.argv[6])
expected = {p["load_qps"]: p for p in json.load(open(f"{work}/report.json"))["policies"]}
rows, hard_fail, soft_fail = [], False, False
for load in loads:
    r = json.load(open(f"{work}/load{load}.json"))
    exp = expected[float(load)]
    exp_acc, exp_vio = exp["expected_accuracy"], exp["expected_violation_rate"]
    lost = r["unanswered"] > 0 or r["http_5xx"] > 0 or r["ok"] != r["sent"]
    vio_ok = r["violation_rate"] <= exp_vio + 0.02
    acc_ok = abs(r["accuracy_per_satisfied"] - exp_acc) <= 0.02
    hard_fail |= lost
    soft_fail |= not (vio_ok and acc_ok)
    rows.append(dict(load=float(load), achieved=r["rate_achieved"], sent=r["sent"], ok=r["ok"], errors=r["errors"],
                     p50=r["p50_ms"], p99=r["p99_ms"], violation=r["violation_rate"], expected_violation=exp_vio,
                     accuracy=r["accuracy_per_satisfied"], expected_accuracy=exp_acc, models=r["models"],
                     no_loss=not lost, violation_ok=vio_ok, accuracy_ok=acc_ok))
provenance = json.load(open(f"{work}/profile.json"))["provenance"]
json.dump(dict(slo_ms=slo, rows=rows, provenance=provenance), open(f"{out}/e2e.json", "w"), indent=1)
with open(f"{out}/e2e.md", "w") as f:
    f.write(f"# lull end to end (SLO {slo:g} ms)\n\nProfile {provenance}. Expected values: the compiled policy "
            f"for each load (lull compile --report; compiled for the SLO less {hop} ms kept for the client <-> lull hop and jitter). Checks: no loss or 5xx; violation <= expected + 0.02; "
            "|accuracy - expected| <= 0.02.\n\n")
    f.write("| load qps | achieved | sent | ok | errors | p50 ms | p99 ms | violation (exp.) | acc/satisfied (exp.) | checks |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        checks = ",".join(k for k in ("no_loss", "violation_ok", "accuracy_ok") if not r[k]) or "pass"
        f.write(f"| {r['load']:g} | {r['achieved']:.1f} | {r['sent']} | {r['ok']} | {r['errors']} | {r['p50']:.1f} | "
                f"{r['p99']:.1f} | {r['violation']:.3f} ({r['expected_violation']:.3f}) | "
                f"{r['accuracy']:.4f} ({r['expected_accuracy']:.4f}) | {'pass' if checks == 'pass' else 'FAIL: ' + checks} |\n")
try:
    import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    x = [r["load"] for r in rows]
    ax[0].plot(x, [r["violation"] for r in rows], "o-", label="measured"); ax[0].plot(x, [r["expected_violation"] for r in rows], "s--", label="expected")
    ax[0].set_xlabel("load (qps)"); ax[0].set_ylabel("violation rate"); ax[0].legend()
    ax[1].plot(x, [r["accuracy"] for r in rows], "o-", label="measured"); ax[1].plot(x, [r["expected_accuracy"] for r in rows], "s--", label="expected")
    ax[1].set_xlabel("load (qps)"); ax[1].set_ylabel("accuracy per satisfied query"); ax[1].legend()
    fig.tight_layout(); fig.savefig(f"{out}/e2e.png", dpi=100)
except ImportError:
    print("e2e: matplotlib missing, no PNG", file=sys.stderr)
print(open(f"{out}/e2e.md").read())
sys.exit(1 if hard_fail or (strict and soft_fail) else 0)
PYEOF
