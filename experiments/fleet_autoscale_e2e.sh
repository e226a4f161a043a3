#!/bin/bash
# A mixed fleet autoscaled on processes (docs/operators-guide.md "Autoscaling
# a fleet"): `lull serve --fleet-servers S.json --autoscale` with one local
# process pool per (class, kind) group, each kind's own server command (replay
# servers of test/data/replay_profile.json: "fast" as profiled, "slow" at 1.5x
# its latencies). Classes: interactive (150 ms end to end, 70% of the load) on
# fast x1 + slow x1, bulk (500 ms, 30%) on slow x1; `lull compile --fleet
# --count-spread 2` gives every kind 1..3 workers. One `lull loadgen` per
# class (X-Lull-Class), the fleet's load 20 QPS, then 120. By the compiled
# capacity tables every group carries its share of 20 QPS on one worker and
# needs two for its share of 120 (lull simulate --autoscale on the same file
# says so). Checks, exit non-zero when one fails:
#   - bulk's group scales out, and a kind of interactive does: 2 or more of
#     its workers up at some point (/metrics,
#     lull_autoscale_workers{class,kind,state="up"}), its scale_out line in
#     --autoscale-log named by class and kind, its workers from its own pool
#     (local-gI-N logs, I the group);
#   - interactive's split re-searched for the counts up, logged (the load may
#     move onto the kind scaled out, so the other kind need not scale);
#   - per class nothing lost (every query sent answered 200, no 5xx) and the
#     violation rate at most the class's target (1%) + 2 points;
#   - after SIGTERM no worker process of any group is left.
# Settings (environment): FAE2E_LOW (20), FAE2E_HIGH (120), FAE2E_SECONDS
# ("6 15": the two phases), FAE2E_OUT (where fleet-autoscale-e2e.json goes),
# FAE2E_RT=0 (normal priority; see e2e.sh on why real-time where allowed).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
LOW="${FAE2E_LOW:-20}"; HIGH="${FAE2E_HIGH:-120}"; read -r LOW_S HIGH_S <<< "${FAE2E_SECONDS:-6 15}"
OUT="${FAE2E_OUT:-$ROOT/experiments/results}"
WORK="$(mktemp -d /tmp/lull-fleet-autoscale.XXXXXX)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file, accuracy_json
trap cleanup EXIT
mkdir -p "$OUT"
RT=()
if [ "${FAE2E_RT:-1}" = 1 ] && chrt -f 1 true 2>/dev/null; then RT=(chrt -f 1); fi
two_speed_kinds  # fast.json, slow.json, accuracy.json
# The compiled SLOs keep 10 ms for the client <-> lull hop (as e2e.sh).
cat > "$WORK/fleet.json" <<'JSON'
{"kinds": [{"name": "fast", "profiles": "fast.json", "price_per_s": 1.6},
           {"name": "slow", "profiles": "slow.json", "price_per_s": 1.0}],
 "classes": [
  {"name": "interactive", "slo_ms": 140, "share": 0.7, "workers": {"fast": 1, "slow": 1}},
  {"name": "bulk", "slo_ms": 490, "share": 0.3, "workers": {"slow": 1}}]}
JSON
"$LULL" compile --fleet "$WORK/fleet.json" --load-qps 10:300:10 --count-spread 2 --weight-step 0.25 \
    --percentile 100 --max-queue 8 --intervals 50 --out "$WORK/fleet.pb" > /dev/null 2>&1

# Each kind's own server command; the pool fills in {port}.
SERVER="${RT[*]} $PY $ROOT/test/modelserver/lull_modelserver.py --port {port} --replay-profile"
cat > "$WORK/servers.json" <<JSON
{"interactive": {"fast": {"command": "$SERVER $WORK/fast.json"}, "slow": {"command": "$SERVER $WORK/slow.json"}},
 "bulk": {"slow": {"command": "$SERVER $WORK/slow.json"}}}
JSON
"${RT[@]}" "$LULL" serve --policies "$WORK/fleet.pb" --fleet-servers "$WORK/servers.json" --autoscale \
    --worker-log-dir "$WORK" --autoscale-forecast window_max:5 --autoscale-lead-s 2 \
    --autoscale-envelope 1:1.5,5:1.2 --autoscale-holdoff-s 60 --autoscale-log "$WORK/scale.log" \
    --listen 127.0.0.1:0 --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
SERVE=$!
PIDS+=($SERVE)
wait_serve_port "$SERVE" "$WORK/lull.port" "$WORK/serve.log"
BASE="http://127.0.0.1:$(cat "$WORK/lull.port")"
TARGET="$BASE/predictions/image-classification"

# Every group's workers up, once a second, for the scale-out check.
(while sleep 1; do curl -s "$BASE/metrics" | grep '^lull_autoscale_workers{.*state="up"}' >> "$WORK/up.txt" || true; done) &
PIDS+=($!)
# Warm-up, not counted: opens the connections, every path runs once.
for c in interactive bulk; do "$LULL" loadgen --target "$TARGET" --header "X-Lull-Class:$c" --rate 5 --duration 1s >/dev/null || true; done

# phase NAME FLEET_QPS SECONDS: one loadgen per class at its share, side by side.
phase() {
  local name="$1" qps="$2" secs="$3" pids=() c share slo
  for c in interactive:0.7:150 bulk:0.3:500; do
    IFS=: read -r cls share slo <<< "$c"
    "${RT[@]}" "$LULL" loadgen --target "$TARGET" --header "X-Lull-Class:$cls" \
        --rate "$("$PY" -c "print($qps * $share)")" --duration "${secs}s" --seed $((${#pids[@]} + 1)) \
        --slo-ms "$slo" --accuracy "$WORK/accuracy.json" --json "$WORK/$name-$cls.json" > /dev/null &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
}
phase low "$LOW" "$LOW_S"
phase high "$HIGH" "$HIGH_S"
kill $SERVE
for _ in $(seq 1 300); do kill -0 $SERVE 2>/dev/null || break; sleep 0.1; done
left=$(pgrep -f "replay-profile $WORK/" | wc -l || true)

"$PY" - "$WORK" "$OUT" "$left" <<'PYEOF'
import glob, json, os, re, sys
work, out, left = sys.argv[1], sys.argv[2], int(sys.argv[3])
groups = {("interactive", "fast"): 0, ("interactive", "slow"): 1, ("bulk", "slow"): 2}
max_up = {g: 0 for g in groups}
for line in open(f"{work}/up.txt"):
    m = re.match(r'lull_autoscale_workers\{class="(\w+)",kind="(\w+)",state="up"\} (\S+)', line)
    if m and (m.group(1), m.group(2)) in groups:
        g = (m.group(1), m.group(2))
        max_up[g] = max(max_up[g], float(m.group(3)))
scale = open(f"{work}/scale.log").read()
checks, rows = {}, []
serve_log = open(f"{work}/serve.log").read()
scaled = {}
for (cls, kind), i in groups.items():
    scaled[(cls, kind)] = max_up[(cls, kind)] >= 2 and \
        re.search(rf"class '{cls}', kind '{kind}': autoscale t=\S+ scale_out", scale) is not None and \
        len(glob.glob(f"{work}/local-g{i}-*.log")) >= 2
    rows.append({"class": cls, "kind": kind, "max_up": max_up[(cls, kind)]})
# Once a kind of interactive scales out, its split is re-searched for the
# counts up and may move the class's load onto that kind, so the other need
# not scale: the class scales out (some kind, from its own pool, logged),
# with the re-search logged; bulk (one kind) scales out.
checks["interactive: a kind scaled out (2+ up, scale_out logged, its own pool)"] = \
    scaled[("interactive", "fast")] or scaled[("interactive", "slow")]
checks["interactive: split re-searched for the counts up (logged)"] = \
    re.search(r"class 'interactive': workers up .* re-searched for these counts", serve_log) is not None
checks["bulk/slow: scaled out (2+ up, scale_out logged, its own pool)"] = scaled[("bulk", "slow")]
classes = []
for cls in ("interactive", "bulk"):
    sent = ok = http_5xx = unanswered = violated = 0
    for phase in ("low", "high"):
        r = json.load(open(f"{work}/{phase}-{cls}.json"))
        sent += r["sent"]; ok += r["ok"]; http_5xx += r["http_5xx"]; unanswered += r["unanswered"]
        violated += r["violation_rate"] * r["ok"]
    violation = violated / max(ok, 1)
    checks[f"{cls}: nothing lost"] = sent == ok and http_5xx == 0 and unanswered == 0 and sent > 0
    checks[f"{cls}: violation <= 1% + 2 points"] = violation <= 0.03
    classes.append({"class": cls, "sent": sent, "ok": ok, "violation": violation})
    print("%-12s sent %d, ok %d, violation %.4f" % (cls, sent, ok, violation))
checks["no worker process left after SIGTERM"] = left == 0
for r in rows:
    print("%-12s %-5s most workers up %d" % (r["class"], r["kind"], r["max_up"]))
json.dump({"groups": rows, "classes": classes, "checks": checks}, open(f"{out}/fleet-autoscale-e2e.json", "w"), indent=1)
failed = [k for k, v in checks.items() if not v]
for k in failed:
    print("FAILED:", k)
sys.exit(1 if failed else 0)
PYEOF
