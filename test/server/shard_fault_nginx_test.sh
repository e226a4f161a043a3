#!/usr/bin/env bash
# One shard killed under load behind nginx (the ctest
# serve.shard_fault_nginx, ~15 s, loopback only): serve.shard_fault's run
# with experiments/nginx-shards.conf instead of HAProxy. Three latency-replay
# servers, `lull serve --shard I/3` over them (one each), nginx in front, and
# `lull loadgen` at 60 qps for 10 s through it. At 3 s shard 1 gets kill -9;
# at 5 s it is started again on its port. Checks (exit 1 if any fails):
#   - queries lost (unanswered or not 200) are at most shard 1's in flight
#     when it died (the most its /metrics showed received and not yet
#     answered in the 300 ms before): nginx passes what the dead shard refused or
#     dropped on to the next one (proxy_next_upstream error timeout
#     non_idempotent), so usually 0;
#   - the restarted shard is sent queries again while the load runs (nginx
#     has no active health checks: it tries a failed shard again after
#     fail_timeout, 1 s, with a live request).
# Skipped (77) without nginx, unless LULL_REQUIRE_TOOLS=1, where that fails.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
if ! command -v nginx > /dev/null && [ ! -x /usr/sbin/nginx ]; then
  if [ "${LULL_REQUIRE_TOOLS:-0}" = 1 ]; then echo "shard_fault_nginx: FAIL: nginx not installed (LULL_REQUIRE_TOOLS=1)" >&2; exit 1; fi
  echo "shard_fault_nginx: SKIPPED: nginx not installed (apt-get install nginx-light)" >&2
  exit 77
fi
PATH="$PATH:/usr/sbin"
WORK="$(mktemp -d /tmp/lull-shard-fault-nginx.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file
source "$ROOT/experiments/shard_support.sh"   # start_replay_servers, start_shard, start_nginx, metric_sum, wait_metric_positive
trap cleanup EXIT
FAILED=0
fail() { echo "shard_fault_nginx: FAIL: $*" >&2; FAILED=1; }
# The queries shard 1 holds now: received, not yet answered (nor failed or refused).
shard1_open() { curl -s --max-time 1 "http://127.0.0.1:$PORT1/metrics" | awk '
  $1 == "lull_queries_total" {q += $2}
  $1 ~ /^lull_answered_total/ || $1 == "lull_failed_total" || $1 == "lull_rejected_total" {a += $2}
  END {printf "%d\n", q - a}'; }

start_replay_servers 3
"$LULL" compile --profiles "$ROOT/test/data/replay_profile.json" --slo-ms 70 --workers 3 --load-qps 10:120:10 \
    --max-queue 8 --intervals 50 --out "$WORK/set.pb" > /dev/null 2>&1
for i in 0 1 2; do start_shard "$i" 3 "$WORK/set.pb" 0; done
PORT1=$(cat "$WORK/shard1.port")
start_nginx
"$LULL" loadgen --target "$LB_URL/predictions/image-classification" --rate 60 --duration 10s --seed 3 \
    --timeout-ms 5000 --json "$WORK/load.json" > "$WORK/load.txt" 2>&1 &
LOADGEN=$!

sleep 2.7
IN_FLIGHT=0
for _ in 1 2 3 4 5 6; do n=$(shard1_open); [ "${n:-0}" -gt "$IN_FLIGHT" ] && IN_FLIGHT=$n; sleep 0.05; done
BEFORE=$(metric_sum "http://127.0.0.1:$PORT1" lull_queries_total)
kill -9 "${SHARD_PIDS[1]}"
wait "${SHARD_PIDS[1]}" 2> /dev/null || true
sleep 2
start_shard 1 3 "$WORK/set.pb" "$PORT1"
REJOINED=$(wait_metric_positive "http://127.0.0.1:$PORT1" lull_queries_total "$LOADGEN")
[ "$REJOINED" -gt 0 ] || fail "the restarted shard 1 got no queries while the load ran"
wait "$LOADGEN" || true

read -r SENT OK LOST <<<"$("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["sent"], r["ok"], r["sent"] - r["ok"])' "$WORK/load.json")"
echo "shard_fault_nginx: sent $SENT, ok $OK, lost $LOST (shard 1 had $IN_FLIGHT in flight, $BEFORE answered" \
     "before the kill); $REJOINED queries after its restart"
[ "$BEFORE" -gt 0 ] || fail "shard 1 got no queries before the kill (not round-robin?)"
[ "$SENT" -gt 500 ] || fail "only $SENT queries sent"
[ "$LOST" -le "$IN_FLIGHT" ] || fail "$LOST queries lost, more than the $IN_FLIGHT shard 1 had in flight: $(cat "$WORK/load.txt")"
if [ "$FAILED" = 1 ]; then
  echo "--- nginx.log"; cat "$WORK/nginx.log"; echo "--- shard1.log"; tail -5 "$WORK/shard1.log"
  exit 1
fi
echo "shard_fault_nginx: pass"
