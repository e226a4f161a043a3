#!/usr/bin/env bash
# `lull bench serve` with --proxy over bounded connections, against the fast
# model-server stand-in (test/bench/serve/fast_model_server.cc), as
# experiments/throughput.sh uses them (the ctest serve.bench_serve, ~5 s,
# loopback only). Checks (exit 1 if one fails):
#   - the stand-in keeps lull's batch contract: a batch of 3 gets 3
#     predictions, a raw body one bare prediction, an unknown model 404, and
#     no answer comes before the model's latency;
#   - bench serve with --direct and --proxy (the same server) answers every
#     counted request of both paths, none in error, with the JSON naming both;
#   - with --connections 1 and requests due faster than one connection
#     answers them, requests wait (late > 0) and still all get answered;
#   - without --lull, --v2 or --proxy it is a usage error (exit 2, naming them).
set -euo pipefail
LULL="${LULL:?LULL: the lull binary}"
FAST="${FAST_SERVER:?FAST_SERVER: the lull_fast_model_server binary}"
WORK="$(mktemp -d /tmp/lull-bench-serve.XXXXXX)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
fail() { echo "bench_serve_test: $*" >&2; exit 1; }

"$FAST" --fake m:20:0 --port-file "$WORK/port" 2> "$WORK/server.log" &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
S="http://127.0.0.1:$(cat "$WORK/port")"

# The contract, and the latency as a lower bound.
out=$(curl -s -w ' %{http_code} %{time_total}' -H 'Content-Type: application/json' -d '{"inputs": ["YQ==", "Yg==", "Yw=="]}' "$S/predictions/m")
[ "$(grep -o '"class"' <<< "$out" | wc -l)" = 3 ] || fail "batch of 3: $out"
awk -v t="${out##* }" 'BEGIN {exit !(t >= 0.020)}' || fail "answered before the model's 20 ms: $out"
out=$(curl -s -w ' %{http_code}' --data-binary raw "$S/predictions/m")
[[ "$out" == '{"class": 3, "score": 1.0} 200' ]] || fail "raw body: $out"
[ "$(curl -s -o /dev/null -w '%{http_code}' -d x "$S/predictions/nope")" = 404 ] || fail "unknown model not 404"

# Both paths over kept-alive connections.
"$LULL" bench serve --direct "$S/predictions/m" --proxy "$S/predictions/m" --rate 100 --duration 2s --warmup 0.5s \
    --connections 8 --json "$WORK/both.json" > "$WORK/both.txt" || fail "bench serve failed: $(cat "$WORK/both.txt")"
/usr/bin/python3 - "$WORK/both.json" <<'EOF' || fail "both paths: $(cat "$WORK/both.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert set(j) >= {"direct", "proxy"}, j
for p in ("direct", "proxy"):
    assert j[p]["errors"] == 0 and j[p]["ok"] > 50, (p, j[p])
    assert j[p]["p50_ms"] >= 20, (p, j[p])
EOF

# One connection per path, requests due every 5 ms on average, answered in
# 20 ms: they wait their turn, are reported late, and none is lost.
"$LULL" bench serve --direct "$S/predictions/m" --proxy "$S/predictions/m" --rate 400 --duration 1s --warmup 0.1s \
    --connections 1 --json "$WORK/one.json" > "$WORK/one.txt" || fail "one connection: $(cat "$WORK/one.txt")"
/usr/bin/python3 - "$WORK/one.json" <<'EOF' || fail "one connection: $(cat "$WORK/one.json")"
import json, sys
j = json.load(open(sys.argv[1]))
for p in ("direct", "proxy"):
    assert j[p]["errors"] == 0 and j[p]["late"] > 0, (p, j[p])
    assert j[p]["p99_ms"] > 100, (p, j[p])  # the queue's wait counts, from each request's due time
EOF
grep -q "waited for one of 1 connections" "$WORK/one.txt" || fail "no line on late requests: $(cat "$WORK/one.txt")"

# Nothing to compare with the direct path.
set +e
"$LULL" bench serve --direct "$S/predictions/m" --rate 10 --duration 1s > "$WORK/usage.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- "--lull, --v2 and --proxy" "$WORK/usage.txt" || fail "no comparison path: exit $rc, $(cat "$WORK/usage.txt")"
echo "bench_serve_test: passed"
