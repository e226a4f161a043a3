#!/usr/bin/env bash
# What lull adds over calling a model server directly, side by side in one run
# (docs/benchmarks.md, "Serving overhead"). Two identical stand-in model
# servers run one fake model (a fixed sleep, so the model adds no noise of its
# own): one is called directly, the other through `lull serve` (one worker, a
# policy set compiled from a profile `lull profile` measured on it), on its
# TorchServe route and on its v2 route. `lull bench serve` deals one Poisson
# stream in turn to the three.
#   OVERHEAD_RATE (qps, both paths together, default 40), OVERHEAD_DURATION
#   (default 60s), OVERHEAD_MODEL_MS (fake service time, default 5),
#   OVERHEAD_ROUNDS (default 1), OVERHEAD_INPUT_BYTES (default 4096),
#   OVERHEAD_BACKEND=v2 (both servers speak the Open Inference Protocol only:
#   the direct call is its infer request, lull serves with --backend v2)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
RATE="${OVERHEAD_RATE:-40}"; DURATION="${OVERHEAD_DURATION:-60s}"; MODEL_MS="${OVERHEAD_MODEL_MS:-5}"
ROUNDS="${OVERHEAD_ROUNDS:-1}"; BYTES="${OVERHEAD_INPUT_BYTES:-4096}"; BACKEND="${OVERHEAD_BACKEND:-torchserve}"
SERVER_FLAGS=(); DIRECT_PATH=/predictions/m
if [ "$BACKEND" = v2 ]; then SERVER_FLAGS=(--only-v2); DIRECT_PATH=/v2/models/m/infer; fi
WORK="$(mktemp -d /tmp/lull-overhead.XXXXXX)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT

for i in 0 1; do
  "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --fake "m:$MODEL_MS:0.2" --port-file "$WORK/port$i" \
      "${SERVER_FLAGS[@]}" 2>"$WORK/server$i.log" &
  PIDS+=($!)
done
wait_file "$WORK/port0" 300; wait_file "$WORK/port1" 300
DIRECT="http://127.0.0.1:$(cat "$WORK/port0")"; BEHIND="http://127.0.0.1:$(cat "$WORK/port1")"
echo '{"m": 0.5}' > "$WORK/acc.json"
"$LULL" profile --backend "$BACKEND" --worker "$BEHIND" --models m --max-batch 4 --samples 10 --accuracy "$WORK/acc.json" \
    --task overhead --out "$WORK/profile.json" 2>/dev/null
"$LULL" compile --profiles "$WORK/profile.json" --slo-ms 100 --workers 1 --load-qps 5:100:5 \
    --out "$WORK/set.pb" 2>/dev/null
"$LULL" serve --backend "$BACKEND" --policies "$WORK/set.pb" --servers "$BEHIND" --listen 127.0.0.1:0 --port-file "$WORK/lull.port" \
    2>"$WORK/serve.log" &
PIDS+=($!)
wait_file "$WORK/lull.port" 300
echo "serve_overhead: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(date -u +%F)"
for r in $(seq 1 "$ROUNDS"); do
  "$LULL" bench serve --backend "$BACKEND" --direct "$DIRECT$DIRECT_PATH" --lull "http://127.0.0.1:$(cat "$WORK/lull.port")/predictions/overhead" \
      --v2 "http://127.0.0.1:$(cat "$WORK/lull.port")/v2/models/overhead/infer" \
      --rate "$RATE" --duration "$DURATION" --input-bytes "$BYTES" --seed "$r"
done
