#!/bin/bash
# SIGHUP reloads a served fleet (docs/operators-guide.md "Serving"): one class on a
# fast and a slow replay server, the fleet file compiled with its split
# searched; under a steady `lull loadgen`, the file is replaced (mv) by one
# whose weights are fixed at fast 0 / slow 1 and lull serve gets SIGHUP, then
# by a file with another class name and SIGHUP again. Checks, exit non-zero
# when one fails: the first reload is logged and /metrics shows the new split
# (fast's weight 0, no query routed to fast after it); the second is refused
# in one line and the new split stays; every query loadgen sent was answered
# 200 (nothing lost across the swaps). About 20 s.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
WORK="$(mktemp -d /tmp/lull-fleet-sighup.XXXXXX)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT
PROFILE="$ROOT/test/data/replay_profile.json"
cp "$PROFILE" "$WORK/fast.json"
"$PY" "$ROOT/profiles/scale_latency.py" "$PROFILE" 1.5 "$WORK/slow.json"
fleet() {  # fleet OUT CLASS [WEIGHTS]: compiles a one-class fleet of fast x1 + slow x1
  cat > "$WORK/$1.json" <<JSON
{"kinds": [{"name": "fast", "profiles": "fast.json", "price_per_s": 1.6}, {"name": "slow", "profiles": "slow.json", "price_per_s": 1}],
 "classes": [{"name": "$2", "slo_ms": 140, "share": 1, "workers": {"fast": 1, "slow": 1}${3:+, \"weights\": $3}}]}
JSON
  "$LULL" compile --fleet "$WORK/$1.json" --load-qps 10:60:10 --weight-step 0.25 --percentile 100 --max-queue 8 \
      --intervals 50 --out "$WORK/$1.pb" >/dev/null 2>&1
}
fleet searched interactive; fleet fixed interactive '{"fast": 0, "slow": 1}'; fleet other gold
cp "$WORK/searched.pb" "$WORK/served.pb"
for s in fast slow; do
  "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$WORK/$s.json" --port-file "$WORK/$s.port" \
      2>"$WORK/$s.log" &
  PIDS+=($!)
done
wait_file "$WORK/fast.port"; wait_file "$WORK/slow.port"
cat > "$WORK/servers.json" <<JSON
{"interactive": {"fast": ["http://127.0.0.1:$(cat "$WORK/fast.port")"], "slow": ["http://127.0.0.1:$(cat "$WORK/slow.port")"]}}
JSON
"$LULL" serve --policies "$WORK/served.pb" --fleet-servers "$WORK/servers.json" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
SERVE=$!
PIDS+=($SERVE)
wait_serve_port "$SERVE" "$WORK/lull.port" "$WORK/serve.log"
URL="http://127.0.0.1:$(cat "$WORK/lull.port")"
routed() { curl -s "$URL/metrics" | sed -n "s/^lull_fleet_routed_queries_total{class=\"interactive\",kind=\"$1\"} //p"; }
weight() { curl -s "$URL/metrics" | sed -n "s/^lull_fleet_kind_weight{class=\"interactive\",kind=\"$1\"} //p"; }
"$LULL" loadgen --target "$URL/predictions/image-classification" --rate 30 --duration 12s --seed 1 \
    --json "$WORK/load.json" >/dev/null &
LOAD=$!
sleep 3
fast_before=$(routed fast)
weight_before=$(weight fast)
cp "$WORK/fixed.pb" "$WORK/next.pb" && mv "$WORK/next.pb" "$WORK/served.pb"
kill -HUP $SERVE
sleep 0.5
fast_at_reload=$(routed fast)
sleep 3
fast_after=$(routed fast)
weight_after=$(weight fast)
cp "$WORK/other.pb" "$WORK/next.pb" && mv "$WORK/next.pb" "$WORK/served.pb"
kill -HUP $SERVE
wait $LOAD
weight_end=$(weight fast)
kill $SERVE; wait $SERVE || true
"$PY" - "$WORK" "$fast_before" "$weight_before" "$fast_at_reload" "$fast_after" "$weight_after" "$weight_end" <<'PYEOF'
import json, sys
work, fast_before, weight_before, fast_at, fast_after, weight_after, weight_end = sys.argv[1:]
log = open(f"{work}/serve.log").read()
load = json.load(open(f"{work}/load.json"))
checks = {
    "before: the searched split sends queries to fast": float(fast_before) > 0 and float(weight_before) > 0,
    "first SIGHUP: reload logged": "SIGHUP: reloaded the fleet" in log,
    "first SIGHUP: fast's weight now 0 (/metrics)": float(weight_after) == 0,
    "first SIGHUP: no query routed to fast after it": float(fast_after) == float(fast_at),
    "second SIGHUP: refused in one line naming the classes":
        "classes gold (served: interactive)" in log and "still serving the previous fleet" in log,
    "second SIGHUP: the reloaded split still served": float(weight_end) == 0,
    "nothing lost": load["sent"] == load["ok"] and load["http_5xx"] == 0 and load["unanswered"] == 0 and load["sent"] > 0,
}
print("sent %d, ok %d; fast routed %s before, %s at the reload, %s after; fast weight %s -> %s -> %s" %
      (load["sent"], load["ok"], fast_before, fast_at, fast_after, weight_before, weight_after, weight_end))
failed = [k for k, v in checks.items() if not v]
for k in failed:
    print("FAILED:", k)
if failed:
    print(log[-3000:])
sys.exit(1 if failed else 0)
PYEOF
