#!/usr/bin/env bash
# `lull serve --port-file` is a file a script can trust (ctest cli.serve_port_file):
#   1. a stale file (a previous run's port) is gone when a start fails (no
#      model server answers): a script never reads a dead port from it;
#   2. a stale file holds the new port once lull listens, as one write (digits
#      and a newline), and lull answers /ping there;
#   3. SIGTERM: lull exits 0 and the file is removed;
#   4. a file another process rewrote meanwhile is left alone at exit;
#   5. '-' prints the port on stdout and leaves no file named '-'.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-portfile.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT
FAILED=0
fail() { echo "port_file: FAIL: $*" >&2; FAILED=1; }

"$LULL" compile --profiles "$PROFILE" --slo-ms 100 --workers 1 --load-qps 10:60:10 --max-queue 8 \
    --out "$WORK/set.pb" > /dev/null 2> "$WORK/compile.log"
"$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$PROFILE" --port-file "$WORK/server.port" \
    2> "$WORK/server.log" &
PIDS+=($!)
wait_file "$WORK/server.port"
SERVER="http://127.0.0.1:$(cat "$WORK/server.port")"

# 1. A failed start: a port nothing listens on (the model server's, once it is gone, is not known: take
# a port that refuses by binding and closing one).
DEAD=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo 1 > "$WORK/lull.port"
rc=0
"$LULL" serve --policies "$WORK/set.pb" --servers "http://127.0.0.1:$DEAD" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2> "$WORK/failed.log" || rc=$?
[ "$rc" = 2 ] || fail "a start with no model server exited $rc, not 2"
[ ! -e "$WORK/lull.port" ] || fail "a failed start left the port file ($(cat "$WORK/lull.port"))"

# 2. A stale file, then a start.
echo 1 > "$WORK/lull.port"
"$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER" --listen 127.0.0.1:0 --port-file "$WORK/lull.port" \
    2> "$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
for _ in $(seq 1 600); do [ "$(cat "$WORK/lull.port" 2>/dev/null)" != 1 ] && [ -s "$WORK/lull.port" ] && break; \
  kill -0 $LULL_PID 2>/dev/null || break; sleep 0.1; done
PORT=$(cat "$WORK/lull.port" 2>/dev/null || true)
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" = 1 ] || [ "$(wc -l < "$WORK/lull.port")" != 1 ]; then
  fail "the port file holds '$PORT' after the start: $(cat "$WORK/serve.log")"
else
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/ping")" = 200 ] || fail "no /ping on port $PORT"
fi

# 3. A stop removes it.
kill -TERM $LULL_PID
rc=0; wait $LULL_PID || rc=$?
[ "$rc" = 0 ] || fail "lull serve exited $rc on SIGTERM"
[ ! -e "$WORK/lull.port" ] || fail "the port file is still there after lull exited"

# 4. Someone else's content stays.
"$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER" --listen 127.0.0.1:0 --port-file "$WORK/lull.port" \
    2> "$WORK/serve2.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_serve_port $LULL_PID "$WORK/lull.port" "$WORK/serve2.log"
echo 9 > "$WORK/other" && mv "$WORK/other" "$WORK/lull.port"
kill -TERM $LULL_PID
wait $LULL_PID || true
[ "$(cat "$WORK/lull.port" 2>/dev/null)" = 9 ] || fail "lull removed a port file another process had written"

# 5. '-': the port on stdout.
(cd "$WORK" && exec "$LULL" serve --policies set.pb --servers "$SERVER" --listen 127.0.0.1:0 --port-file - \
    > "$WORK/stdout.txt" 2> "$WORK/serve3.log") &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_file "$WORK/stdout.txt" 300
kill -TERM $LULL_PID
wait $LULL_PID || true
grep -qE '^[0-9]+$' "$WORK/stdout.txt" || fail "--port-file - printed '$(cat "$WORK/stdout.txt")'"
[ ! -e "$WORK/-" ] || fail "--port-file - made a file named '-'"

[ "$FAILED" = 0 ] && echo "port_file: ok"
exit "$FAILED"
