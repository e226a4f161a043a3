#!/usr/bin/env bash
# One shard killed under load (the ctest serve.shard_fault, ~20 s,
# loopback only): three latency-replay servers, `lull serve --shard I/3` over
# them (one each), HAProxy in front (experiments/haproxy-shards.cfg), and
# `lull loadgen` at 60 qps for 10 s through HAProxy. At 3 s shard 1 gets
# kill -9; at 5 s it is started again on its port. Checks (exit 1 if any fails):
#   - HAProxy's checks mark it down (inter 200 ms, fall 2: about 0.4 s; the
#     time is printed, the wait bounded at 10 s);
#   - queries lost (unanswered or not 200) are at most shard 1's in flight
#     when it died (the most HAProxy held open to it in the 300 ms before);
#     with HAProxy's retries on a refused or empty connection, usually 0;
#   - the restarted shard is marked up (bounded at 15 s) and is sent queries
#     again while the load runs;
#   - its /metrics carries lull_shard_info{shard="1/3"} 1 (and passes
#     promtool check metrics where promtool is installed).
# Skipped (77) without haproxy, unless LULL_REQUIRE_TOOLS=1 (CI: .ci/run),
# where that fails.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
if ! command -v haproxy > /dev/null; then
  if [ "${LULL_REQUIRE_TOOLS:-0}" = 1 ]; then echo "shard_fault: FAIL: haproxy not installed (LULL_REQUIRE_TOOLS=1)" >&2; exit 1; fi
  echo "shard_fault: SKIPPED: haproxy not installed (.ci/install-deps installs it)" >&2
  exit 77
fi
WORK="$(mktemp -d /tmp/lull-shard-fault.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file
source "$ROOT/experiments/shard_support.sh"   # start_replay_servers, start_shard, start_haproxy, shards_up, metric_sum, wait_metric_positive
trap cleanup EXIT
FAILED=0
fail() { echo "shard_fault: FAIL: $*" >&2; FAILED=1; }
now_ms() { date +%s%3N; }
# The requests HAProxy holds open to shard 1 now (its stats' scur).
shard1_open() { curl -s --max-time 1 "$LB_STATS_URL" | awk -F, '$1 == "shards" && $2 == "shard1" {print $5 + 0}'; }

start_replay_servers 3
"$LULL" compile --profiles "$ROOT/test/data/replay_profile.json" --slo-ms 70 --workers 3 --load-qps 10:120:10 \
    --max-queue 8 --intervals 50 --out "$WORK/set.pb" > /dev/null 2>&1
for i in 0 1 2; do start_shard "$i" 3 "$WORK/set.pb" 0; done
PORT1=$(cat "$WORK/shard1.port")
start_haproxy
"$LULL" loadgen --target "$LB_URL/predictions/image-classification" --rate 60 --duration 10s --seed 3 \
    --timeout-ms 5000 --json "$WORK/load.json" > "$WORK/load.txt" 2>&1 &
LOADGEN=$!

# Until the kill, the most requests open to shard 1 in any 300 ms.
sleep 2.7
IN_FLIGHT=0
for _ in 1 2 3 4 5 6; do n=$(shard1_open); [ "${n:-0}" -gt "$IN_FLIGHT" ] && IN_FLIGHT=$n; sleep 0.05; done
kill -9 "${SHARD_PIDS[1]}"
wait "${SHARD_PIDS[1]}" 2> /dev/null || true
KILLED=$(now_ms)
DOWN_MS=-1
while [ $(( $(now_ms) - KILLED )) -lt 10000 ]; do
  if [ "$(shards_up)" = 2 ]; then DOWN_MS=$(( $(now_ms) - KILLED )); break; fi
  sleep 0.05
done
[ "$DOWN_MS" -ge 0 ] || fail "HAProxy never marked the killed shard down (10 s)"

sleep $(awk -v d="$DOWN_MS" 'BEGIN {s = 2 - (d < 0 ? 3 : d / 1000); print (s > 0 ? s : 0)}')
start_shard 1 3 "$WORK/set.pb" "$PORT1"
STARTED=$(now_ms)
UP_MS=-1
while [ $(( $(now_ms) - STARTED )) -lt 15000 ]; do
  if [ "$(shards_up)" = 3 ]; then UP_MS=$(( $(now_ms) - STARTED )); break; fi
  sleep 0.05
done
[ "$UP_MS" -ge 0 ] || fail "HAProxy never marked the restarted shard 1 up (15 s)"
REJOINED=$(wait_metric_positive "http://127.0.0.1:$PORT1" lull_queries_total "$LOADGEN")
[ "$REJOINED" -gt 0 ] || fail "the restarted shard 1 got no queries while the load ran"
curl -s "http://127.0.0.1:$PORT1/metrics" > "$WORK/metrics1.txt"
grep -q '^lull_shard_info{shard="1/3"} 1$' "$WORK/metrics1.txt" || fail "no lull_shard_info{shard=\"1/3\"} 1 in shard 1's /metrics"
if command -v promtool > /dev/null && ! promtool check metrics < "$WORK/metrics1.txt" > "$WORK/promtool.txt" 2>&1; then
  fail "promtool check metrics: $(cat "$WORK/promtool.txt")"
fi
wait "$LOADGEN" || true

read -r SENT OK LOST <<<"$("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["sent"], r["ok"], r["sent"] - r["ok"])' "$WORK/load.json")"
echo "shard_fault: sent $SENT, ok $OK, lost $LOST (shard 1 had $IN_FLIGHT in flight); down after $DOWN_MS ms;" \
     "up again $UP_MS ms after its restart, then $REJOINED queries"
[ "$SENT" -gt 500 ] || fail "only $SENT queries sent"
[ "$LOST" -le "$IN_FLIGHT" ] || fail "$LOST queries lost, more than the $IN_FLIGHT shard 1 had in flight: $(cat "$WORK/load.txt")"
if [ "$FAILED" = 1 ]; then
  echo "--- haproxy.log"; cat "$WORK/haproxy.log"; echo "--- shard1.log"; tail -5 "$WORK/shard1.log"
  exit 1
fi
echo "shard_fault: pass"
