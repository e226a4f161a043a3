#!/bin/bash
# A mixed fleet served end to end (docs/operators-guide.md "Serving"): two
# SLO classes (interactive 150 ms, bulk 500 ms end to end; 70% / 30% of the
# load) over two worker kinds of stand-in servers that replay
# test/data/replay_profile.json, "fast" as profiled and "slow" at 1.5x its
# latencies (profiles/scale_latency.py): interactive on 1 fast + 2 slow
# servers, bulk on 1 fast + 1 slow. `lull compile --fleet` picks each class's
# split over its kinds by load; one `lull serve --fleet-servers` serves both
# classes; one `lull loadgen` per class drives it at the class's share, naming
# the class with --header X-Lull-Class:NAME. Checks per class: nothing lost
# (every query answered 200), violation at most the compiled expectation + 2
# points, accuracy per satisfied query within 2 points of it, and every kind
# the split gives 10% or more took queries (/metrics). Exits non-zero when a
# check fails. Settings (environment): FE2E_LOAD (the fleet's QPS, default
# 100: 70 interactive, 30 bulk), FE2E_DURATION (10s), FE2E_OUT (where
# fleet-e2e.json goes).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
LOAD="${FE2E_LOAD:-100}"; DURATION="${FE2E_DURATION:-10s}"; OUT="${FE2E_OUT:-$ROOT/experiments/results}"
WORK="$(mktemp -d)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file, accuracy_json
trap cleanup EXIT
mkdir -p "$OUT"
# Servers, lull serve and loadgen at real-time priority where allowed, as
# e2e.sh does and for its reason: the gate measures lull's decisions, not
# how long a thread waking from a sleep waits for a core beside busy neighbours.
RT=()
if [ "${FE2E_RT:-1}" = 1 ] && chrt -f 1 true 2>/dev/null; then RT=(chrt -f 1); fi
two_speed_kinds  # fast.json, slow.json, accuracy.json
# The compiled SLOs keep 10 ms for the client <-> lull hop (as e2e.sh).
cat > "$WORK/fleet.json" <<'JSON'
{"kinds": [{"name": "fast", "profiles": "fast.json", "price_per_s": 1.6},
           {"name": "slow", "profiles": "slow.json", "price_per_s": 1.0}],
 "classes": [
  {"name": "interactive", "slo_ms": 140, "share": 0.7, "workers": {"fast": 1, "slow": 2}},
  {"name": "bulk", "slo_ms": 490, "share": 0.3, "workers": {"fast": 1, "slow": 1}}]}
JSON
"$LULL" compile --fleet "$WORK/fleet.json" --load-qps 10:160:10 --percentile 100 --max-queue 8 --intervals 50 \
    --out "$WORK/fleet.pb" --report "$WORK/report.json" 2>/dev/null >/dev/null

# server NAME KIND: a replay server of that kind, its URL in WORK/NAME.port.
SEED=0
server() {
  SEED=$((SEED + 1))
  "${RT[@]}" "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$WORK/$2.json" --seed "$SEED" \
      --port-file "$WORK/$1.port" 2>"$WORK/$1.log" &
  PIDS+=($!)
}
server i_fast0 fast; server i_slow0 slow; server i_slow1 slow; server b_fast0 fast; server b_slow0 slow
url() { wait_file "$WORK/$1.port"; echo "\"http://127.0.0.1:$(cat "$WORK/$1.port")\""; }
cat > "$WORK/servers.json" <<JSON
{"interactive": {"fast": [$(url i_fast0)], "slow": [$(url i_slow0), $(url i_slow1)]},
 "bulk": {"fast": [$(url b_fast0)], "slow": [$(url b_slow0)]}}
JSON
"${RT[@]}" "$LULL" serve --policies "$WORK/fleet.pb" --fleet-servers "$WORK/servers.json" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
PIDS+=($!)
wait_serve_port "${PIDS[-1]}" "$WORK/lull.port" "$WORK/serve.log"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")/predictions/image-classification"
# Warm-up, not counted: opens the connections, every path runs once.
for c in interactive bulk; do "$LULL" loadgen --target "$TARGET" --header "X-Lull-Class:$c" --rate 5 --duration 1s >/dev/null || true; done

RATE_I=$("$PY" -c "print($LOAD * 0.7)"); RATE_B=$("$PY" -c "print($LOAD * 0.3)")
"${RT[@]}" "$LULL" loadgen --target "$TARGET" --header X-Lull-Class:interactive --rate "$RATE_I" --duration "$DURATION" --seed 1 \
    --slo-ms 150 --accuracy "$WORK/accuracy.json" --json "$WORK/interactive.json" >/dev/null &
LG_I=$!
"${RT[@]}" "$LULL" loadgen --target "$TARGET" --header X-Lull-Class:bulk --rate "$RATE_B" --duration "$DURATION" --seed 2 \
    --slo-ms 500 --accuracy "$WORK/accuracy.json" --json "$WORK/bulk.json" >/dev/null &
LG_B=$!
wait "$LG_I" || true
wait "$LG_B" || true
curl -s "http://127.0.0.1:$(cat "$WORK/lull.port")/metrics" > "$WORK/metrics.txt"

"$PY" - "$WORK" "$OUT" "$LOAD" <<'PYEOF'
import json, re, sys
work, out, load = sys.argv[1], sys.argv[2], float(sys.argv[3])
report = {c["name"]: c for c in json.load(open(f"{work}/report.json"))["classes"]}
metrics = open(f"{work}/metrics.txt").read()
def routed(cls, kind):
    m = re.search(r'^lull_fleet_routed_queries_total\{class="%s",kind="%s"\} (\S+)$' % (cls, kind), metrics, re.M)
    return float(m.group(1)) if m else -1
rows, failed = [], False
for name, share in (("interactive", 0.7), ("bulk", 0.3)):
    c = report[name]
    split = next((s for s in c["splits"] if s["load_qps"] >= load * share - 1e-9), c["splits"][-1])
    got = json.load(open(f"{work}/{name}.json"))
    expected = split["expected"]["violation_rate"]
    lost = got["sent"] - got["ok"]
    checks = {
        "nothing lost": lost == 0 and got["unanswered"] == 0,
        "violation <= expected + 2 points": got["violation_rate"] <= expected + 0.02,
        "accuracy per satisfied query within 2 points": abs(got["accuracy_per_satisfied"] - split["expected"]["accuracy"]) <= 0.02,
        "every kind it splits to took queries": all(routed(name, k) > 0 for k, w in split["weights"].items() if w >= 0.1),
    }
    row = {"class": name, "rate": got["rate_asked"], "sent": got["sent"], "ok": got["ok"], "lost": lost,
           "violation": got["violation_rate"], "expected_violation": expected,
           "accuracy": got.get("accuracy_per_satisfied"), "expected_accuracy": split["expected"]["accuracy"],
           "weights": split["weights"], "routed": {k: routed(name, k) for k in split["weights"]}, "checks": checks}
    rows.append(row)
    print("%-12s %5.1f qps: sent %d, lost %d, violation %.4f (expected %.4f), accuracy %.4f (expected %.4f), routed %s"
          % (name, row["rate"], row["sent"], lost, row["violation"], expected, row["accuracy"] or 0,
             row["expected_accuracy"], row["routed"]))
    for what, ok in checks.items():
        if not ok:
            print("FAILED: %s: %s" % (name, what))
            failed = True
json.dump({"load_qps": load, "classes": rows}, open(f"{out}/fleet-e2e.json", "w"), indent=1)
sys.exit(1 if failed else 0)
PYEOF
