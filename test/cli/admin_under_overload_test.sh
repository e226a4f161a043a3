#!/usr/bin/env bash
# /metrics and /ping under 5x overload (ctest cli.admin_under_overload,
# ~15 s): two latency-replay stand-in servers (~1000 qps with the fastest
# model), `lull serve` with a connection cap of 16, and `lull loadgen` at
# ADMIN_QPS (5000, 5x) over 256 connections for ADMIN_S (8 s). Meanwhile a
# scraper opens a new connection every 0.1 s for GET /metrics, then one
# for GET /ping. Before the reserved slots these shared the cap with the
# queries: 140 of 224 scrapes got 503 in a 60 s run at 5x. Checks (exit 1
# if any fails):
#   - every scrape and every /ping is answered 200 within 5 s (their p99 and
#     largest times printed; on a quiet machine both are under 50 ms);
#   - lull counts the scrapes it served in a reserved slot (so the cap was reached);
#   - lull serve is alive afterwards.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
QPS="${ADMIN_QPS:-5000}"; SECS="${ADMIN_S:-8}"
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-admin.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, wait_serve_port, replay_servers
trap cleanup EXIT
fail() { echo "admin_under_overload: FAIL: $*" >&2; FAILED=1; }
FAILED=0

replay_servers 2 "$PROFILE"
"$LULL" compile --profiles "$PROFILE" --slo-ms 70 --workers 2 --percentile 100 --load-qps 20:100:20 \
    --max-queue 8 --intervals 20 --out "$WORK/set.pb" 2>"$WORK/compile.log"
"$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER_URLS" --listen 127.0.0.1:0 \
    --max-connections 16 --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_serve_port "$LULL_PID" "$WORK/lull.port" "$WORK/serve.log"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"
TASK="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["task"])' "$PROFILE")"

"$LULL" loadgen --target "$TARGET/predictions/$TASK" --rate "$QPS" --duration "${SECS}s" --timeout-ms 20000 \
    --connections 256 --json "$WORK/loadgen.json" > "$WORK/loadgen.txt" 2>&1 &
LOADGEN=$!
PIDS+=($LOADGEN)
refused() { curl -s -m 10 "$TARGET/metrics" | awk '$1 == "lull_http_connections_closed_total{reason=\"refused\"}" {print int($2)}'; }
# The scrapes start once the cap is reached (a query refused; 5 s at most).
for _ in $(seq 1 50); do [ "$(refused)" -gt 0 ] 2>/dev/null || ! kill -0 "$LOADGEN" 2>/dev/null && break; sleep 0.1; done
# One new connection per request (curl), as a Prometheus scrape or a probe.
N=$(( (SECS - 2) * 10 ))
for _ in $(seq 1 "$N"); do
  curl -s -o /dev/null -m 5 -w "metrics %{http_code} %{time_total}\n" "$TARGET/metrics" >> "$WORK/scrapes.txt" || echo "metrics 000 5" >> "$WORK/scrapes.txt"
  curl -s -o /dev/null -m 5 -w "ping %{http_code} %{time_total}\n" "$TARGET/ping" >> "$WORK/scrapes.txt" || echo "ping 000 5" >> "$WORK/scrapes.txt"
  sleep 0.1
done
wait "$LOADGEN" || true
kill -0 "$LULL_PID" 2>/dev/null || fail "lull serve died"
"$PY" - "$WORK/scrapes.txt" <<'PYEOF' || FAILED=1
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
bad = 0
for kind in ("metrics", "ping"):
    got = [(c, float(t)) for k, c, t in rows if k == kind]
    codes = {}
    for c, _ in got:
        codes[c] = codes.get(c, 0) + 1
    times = sorted(t for _, t in got)
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    print("admin_under_overload: %s: %d requests, status %s, p99 %.3f s, max %.3f s" % (kind, len(got), codes, p99, times[-1]))
    if codes.get("200", 0) != len(got):
        print("admin_under_overload: FAIL: not every %s answered 200 (within curl's 5 s)" % kind, file=sys.stderr)
        bad = 1
sys.exit(bad)
PYEOF
RESERVED="$(curl -s -m 10 "$TARGET/metrics" | awk '$1 == "lull_http_reserved_requests_total" {print $2}')"
REFUSED="$(curl -s -m 10 "$TARGET/metrics" | awk '$1 == "lull_http_connections_closed_total{reason=\"refused\"}" {print $2}')"
echo "admin_under_overload: served in a reserved slot: ${RESERVED:-none}; queries refused at the cap: ${REFUSED:-none}"
head -n 3 "$WORK/loadgen.txt"
[ "$FAILED" = 0 ] || { tail -n 10 "$WORK/serve.log" >&2; exit 1; }
echo "admin_under_overload: ok"
