#!/usr/bin/env bash
# SIGTERM while a variant switch loads a model that takes 30 s to load
# (ctest cli.stop_during_model_load, ~15 s): `lull serve --variant-sets`
# over a stand-in model server whose loads take LOAD_DELAY_MS (30000). Under
# load lull switches from the full set {fast, slow} to the small one {fast}
# and unloads slow; once the queries stop, it switches back, and the
# management API's POST /models for slow waits out the load delay. SIGTERM
# is sent while that call is under way (the stand-in logs the request).
# Before, the stop waited for the load to end (15 s in the probe). Checks
# (exit 1 if any fails):
#   - every query sent was answered 200;
#   - lull exits with status 0 within STOP_BOUND_MS (1000) of SIGTERM (the
#     time is printed; polled every 20 ms for at most 4 s);
#   - the switch back failed as cancelled (its log line), so nothing waited for the load.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/tiny_profile.json"
WORK="$(mktemp -d /tmp/lull-stop-load.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, wait_serve_port, stop_within
trap cleanup EXIT
fail() { echo "stop_during_model_load: FAIL: $*" >&2; FAILED=1; }
FAILED=0

COMPILE=(compile --profiles "$PROFILE" --slo-ms 300 --workers 1 --load-qps 5,10 --max-queue 4 --intervals 10 --device cpu)
"$LULL" "${COMPILE[@]}" --all-models --out "$WORK/full.pb" 2>"$WORK/compile.log"
"$LULL" "${COMPILE[@]}" --models fast --out "$WORK/small.pb" 2>>"$WORK/compile.log"
"$PY" "$ROOT/test/modelserver/lull_modelserver.py" --fake fast:5:1 --fake slow:10:1 \
    --load-delay-ms "${LOAD_DELAY_MS:-30000}" --log-requests "$WORK/requests.log" \
    --port 0 --port-file "$WORK/port" 2>"$WORK/server.log" &
PIDS+=($!)
wait_file "$WORK/port"
"$LULL" serve --policies "$WORK/full.pb" --servers "http://127.0.0.1:$(cat "$WORK/port")" \
    --variant-sets "$WORK/small.pb@0.5" --variant-dwell-s 0 --variant-interval-ms 50 --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_serve_port "$LULL_PID" "$WORK/lull.port" "$WORK/serve.log"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"
# One query at a time until the switch to the small set (bounded: 3000 queries).
"$PY" - "$TARGET/predictions/tiny" "$WORK/serve.log" > "$WORK/queries.txt" <<'PYEOF'
import http.client, sys, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
codes = {}
for i in range(3000):
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    c.request("POST", url.path, body=b"input-%d" % i)
    s = str(c.getresponse().status)
    c.close()
    codes[s] = codes.get(s, 0) + 1
    if "-> " in open(sys.argv[2]).read().split("variant switch", 1)[-1]:
        break
print(" ".join("%s=%d" % kv for kv in sorted(codes.items())))
PYEOF
echo "stop_during_model_load: queries: $(cat "$WORK/queries.txt")"
grep -q "variant switch .*full.pb -> .*small.pb" "$WORK/serve.log" || fail "no switch to the small set"
[ "$(cat "$WORK/queries.txt")" = "200=$(grep -o '200=[0-9]*' "$WORK/queries.txt" | cut -d= -f2)" ] ||
  fail "not every query answered 200: $(cat "$WORK/queries.txt")"
# No more queries: the load falls under 0.5 qps and lull loads slow again (bounded poll, 30 s).
LOADING=0
for _ in $(seq 1 600); do grep -q "^/models?url=slow" "$WORK/requests.log" 2>/dev/null && { LOADING=1; break; }; sleep 0.05; done
[ "$LOADING" = 1 ] || fail "lull never asked to load slow again"
stop_within "$LULL_PID" stop_during_model_load "the load was under way: $LOADING"
grep "variant switch" "$WORK/serve.log" | tail -n 2 >&2 || true
grep -q "variant switch .*small.pb -> .*full.pb.*failed.*cancelled" "$WORK/serve.log" ||
  fail "the switch back was not cancelled"
[ "$FAILED" = 0 ] || { tail -n 15 "$WORK/serve.log" >&2; exit 1; }
echo "stop_during_model_load: ok"
