#!/usr/bin/env bash
# Checks the PromQL that docs/operators-guide.md gives operators against a real
# Prometheus scraping `lull serve`: stand-in servers replaying
# test/data/replay_profile.json (as experiments/e2e.sh E2E_REPLAY=1 does),
# `lull compile`, `lull serve`, `lull loadgen` for a bit over a minute, and
# Prometheus (Debian's prometheus package) scraping lull every second into a
# temporary storage dir. At the end of the load it queries /api/v1/query for
# p99 latency, violation rate, accuracy per satisfied query and queries per
# second by model over the last minute, and prints them next to loadgen's
# numbers for the whole run. lull's own SLO is the compiled one (SLO less the
# hop kept for the client), so its violations count against that tighter
# budget. An experiment (about 2 minutes), not a CI test.
#
#   PC_LOAD (qps, default 40), PC_DURATION (default 70s), PC_SLO_MS (80),
#   PC_HOP_MS (10), PC_SERVERS (2), LULL (default build/lull)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
LOAD="${PC_LOAD:-40}"; DURATION="${PC_DURATION:-70s}"; SLO_MS="${PC_SLO_MS:-80}"; HOP_MS="${PC_HOP_MS:-10}"
SERVERS="${PC_SERVERS:-2}"
command -v prometheus >/dev/null || { echo "prometheus_check: needs prometheus (apt-get install prometheus)" >&2; exit 2; }
WORK="$(mktemp -d /tmp/lull-prom.XXXXXX)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file, replay_servers
trap cleanup EXIT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

replay_servers "$SERVERS" "$PROFILE"
"$PY" -c 'import json, sys; json.dump({m["name"]: m["accuracy"] for m in json.load(open(sys.argv[1]))["models"]}, open(sys.argv[2], "w"))' \
    "$PROFILE" "$WORK/accuracy.json"
"$LULL" compile --profiles "$PROFILE" --slo-ms "$((SLO_MS - HOP_MS))" --workers "$SERVERS" --percentile 100 \
    --load-qps 5:100:5 --max-queue 8 --intervals 50 --out "$WORK/set.pb" 2>/dev/null
"$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER_URLS" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
PIDS+=($!)
wait_file "$WORK/lull.port"
LULL_ADDR="127.0.0.1:$(cat "$WORK/lull.port")"

PROM_ADDR="127.0.0.1:$(free_port)"
cat > "$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: lull
    static_configs:
      - targets: ['$LULL_ADDR']
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="$PROM_ADDR" 2>"$WORK/prometheus.log" &
PIDS+=($!)
for _ in $(seq 1 100); do curl -sf "http://$PROM_ADDR/-/ready" >/dev/null && break; sleep 0.2; done
# Wait for a first scrape, so rate() has a sample from before the load.
for _ in $(seq 1 100); do
  curl -s "http://$PROM_ADDR/api/v1/query" --data-urlencode 'query=up{job="lull"}' | grep -q '"1"\]' && break; sleep 0.2
done
sleep 2

"$LULL" loadgen --target "http://$LULL_ADDR/predictions/image-classification" --rate "$LOAD" --duration "$DURATION" \
    --seed 1 --slo-ms "$SLO_MS" --accuracy "$WORK/accuracy.json" --json "$WORK/load.json" > "$WORK/load.txt" || true
END="$(date +%s.%N)"  # queries are evaluated at the end of the load
# Two refusals, so the by-code counts show more than 200.
curl -s -o /dev/null -X POST "http://$LULL_ADDR/predictions/other-task" --data-binary x
curl -s -o /dev/null -X POST "http://$LULL_ADDR/predictions/image-classification"
sleep 3  # a few more scrapes
"$PY" - "$PROM_ADDR" "$WORK/load.json" "$DURATION" "$END" <<'PYEOF'
import json, sys, time, urllib.parse, urllib.request
prom, load, duration, end = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
def q(expr, at=end):
    url = f"http://{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": at})
    r = json.load(urllib.request.urlopen(url))
    assert r["status"] == "success", r
    return [(s["metric"], float(s["value"][1])) for s in r["data"]["result"]]
exprs = {
    "p99": "histogram_quantile(0.99, sum by (le) (rate(lull_request_duration_seconds_bucket[1m])))",
    "violation": "sum(rate(lull_violations_total[1m])) / sum(rate(lull_answered_total[1m]))",
    "accuracy": "sum(rate(lull_satisfied_accuracy_total[1m])) / sum(rate(lull_satisfied_total[1m]))",
    "qps_by_model": "sum by (model) (rate(lull_answered_total[1m]))",
    "http_by_code": "sum by (code) (increase(lull_http_responses_total[2m]))",
}
res = {k: q(e) for k, e in exprs.items() if k != "http_by_code"}
res["http_by_code"] = q(exprs["http_by_code"], at=str(time.time()))
one = lambda k: res[k][0][1] if res[k] else float("nan")
secs = float(duration.rstrip("s"))
print(f"load {load['rate_asked']:g} qps for {duration}; Prometheus over the last minute (server side) | loadgen over the run (client side)")
print(f"p99 latency          {one('p99') * 1e3:8.1f} ms | {load['p99_ms']:8.1f} ms   {exprs['p99']}")
print(f"violation rate       {one('violation'):8.4f}    | {load['violation_rate']:8.4f}      {exprs['violation']}")
print(f"accuracy/satisfied   {one('accuracy'):8.4f}    | {load['accuracy_per_satisfied']:8.4f}      {exprs['accuracy']}")
print(f"queries/s by model                           {exprs['qps_by_model']}")
for m, v in sorted((s['model'], v) for s, v in res["qps_by_model"]):
    print(f"  {m:22s} {v:8.2f}    | {load['models'].get(m, 0) / secs:8.2f}")
print(f"HTTP responses by code (last 2 min, now; 200 includes /metrics scrapes) {exprs['http_by_code']}")
for c, v in sorted((s['code'], v) for s, v in res["http_by_code"]):
    print(f"  {c:22s} {v:8.0f}")
PYEOF
