#!/usr/bin/env bash
# Two lull shards, each with its own autoscaled local worker pool and online
# compilation (the ctest serve.shard_pool, ~30 s, loopback only):
# `lull serve --shard I/2 --autoscale --worker-pool local --online-compile on`
# over latency-replay servers, their worker logs in one shared directory, the
# policy library compiled for 2, 4 and 6 workers at 5..40 QPS (so a shard
# sees 1, 2 and 3 workers at 2.5..20 QPS). Each shard gets its own Poisson
# load from `lull loadgen`, 10 QPS for 4 s then 45 QPS for 14 s (above the
# grid). Checks (exit 1 if any fails):
#   - each shard scales out from its own load (a scale_out line in its log,
#     more than one worker up at the end);
#   - its workers are its own: named local-I-N, on ports p with p mod 2 = I,
#     one log file each in the shared --worker-log-dir (no two shards' alike);
#   - each shard compiles online above the grid (an "online compilation:
#     policy for" line: its own terms, K workers at its load);
#   - no query lost: every query sent answered 200;
#   - /metrics carries lull_shard_info{shard="I/2"} 1.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-shard-pool.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT
FAILED=0
fail() { echo "shard_pool: FAIL: $*" >&2; FAILED=1; }

"$LULL" compile --profiles "$PROFILE" --slo-ms 70 --workers 2:6:2 --percentile 100 --load-qps 5:40:5 \
    --max-queue 8 --intervals 50 --out "$WORK/library.pb" > /dev/null 2>&1
mkdir "$WORK/workers"
WORKER_CMD="$PY $ROOT/test/modelserver/lull_modelserver.py --replay-profile $PROFILE --port {port}"
for i in 0 1; do
  "$LULL" serve --policies "$WORK/library.pb" --shard "$i/2" --listen 127.0.0.1:0 --port-file "$WORK/shard$i.port" \
      --autoscale --worker-pool local --worker-command "$WORKER_CMD" --worker-log-dir "$WORK/workers" \
      --online-compile on --profiles "$PROFILE" \
      --autoscale-forecast window_max:3 --autoscale-lead-s 1 --autoscale-envelope 1:1.5 \
      --autoscale-holdoff-s 60 --autoscale-log "$WORK/scale$i.log" 2> "$WORK/serve$i.log" &
  PIDS+=($!)
done
for i in 0 1; do wait_file "$WORK/shard$i.port"; done
for i in 0 1; do
  "$LULL" loadgen --target "http://127.0.0.1:$(cat "$WORK/shard$i.port")/predictions/image-classification" \
      --rate 10 --duration 4s --seed "$i" --timeout-ms 5000 --json "$WORK/low$i.json" > /dev/null 2>&1 &&
  "$LULL" loadgen --target "http://127.0.0.1:$(cat "$WORK/shard$i.port")/predictions/image-classification" \
      --rate 45 --duration 14s --seed "$((i + 10))" --timeout-ms 5000 --json "$WORK/high$i.json" > /dev/null 2>&1 &
  LOADGEN[$i]=$!
done
for i in 0 1; do wait "${LOADGEN[$i]}" || fail "shard $i: lull loadgen failed"; done

for i in 0 1; do
  URL="http://127.0.0.1:$(cat "$WORK/shard$i.port")"
  curl -s "$URL/metrics" > "$WORK/metrics$i.txt"
  grep -q "^lull_shard_info{shard=\"$i/2\"} 1$" "$WORK/metrics$i.txt" || fail "shard $i: no lull_shard_info{shard=\"$i/2\"} 1"
  UP=$(awk '$1 == "lull_autoscale_workers{state=\"up\"}" {print $2 + 0}' "$WORK/metrics$i.txt")
  [ "${UP:-0}" -gt 1 ] || fail "shard $i: ${UP:-0} workers up after the load step (no scale-out)"
  grep -q "scale_out" "$WORK/scale$i.log" || fail "shard $i: no scale_out line in its autoscale log"
  grep -q "online compilation: policy for" "$WORK/serve$i.log" || fail "shard $i: no online compilation above the grid"
  # "autoscale: worker local-I-N up at http://127.0.0.1:PORT (slot S)"
  JOINED=0
  while read -r id port; do
    JOINED=$((JOINED + 1))
    [[ "$id" == local-$i-* ]] || fail "shard $i: worker $id is not named local-$i-N"
    [ $((port % 2)) = "$i" ] || fail "shard $i: worker $id on port $port, not $i mod 2"
  done < <(sed -n 's/.*autoscale: worker \(local-[^ ]*\) up at http:\/\/127.0.0.1:\([0-9]*\) .*/\1 \2/p' "$WORK/serve$i.log")
  [ "$JOINED" -gt 1 ] || fail "shard $i: $JOINED workers joined"
  for f in "$WORK"/low$i.json "$WORK"/high$i.json; do
    read -r SENT OK <<<"$("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["sent"], r["ok"])' "$f")"
    [ "$SENT" -gt 30 ] || fail "shard $i: only $SENT queries sent ($f)"
    [ "$SENT" = "$OK" ] || fail "shard $i: $((SENT - OK)) of $SENT queries lost or not 200 ($f)"
  done
  echo "shard_pool: shard $i: $UP workers up, $JOINED joined, $(grep -c 'online compilation: policy for' "$WORK/serve$i.log") online compilations"
done
LOGS=$(ls "$WORK/workers" | sort)
[ -n "$(echo "$LOGS" | grep '^local-0-')" ] && [ -n "$(echo "$LOGS" | grep '^local-1-')" ] ||
  fail "the shared worker log directory lacks one shard's logs: $LOGS"
if [ "$FAILED" = 1 ]; then
  for i in 0 1; do echo "--- serve$i.log"; tail -20 "$WORK/serve$i.log"; echo "--- scale$i.log"; cat "$WORK/scale$i.log"; done
  exit 1
fi
echo "shard_pool: pass"
