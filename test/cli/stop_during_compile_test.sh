#!/usr/bin/env bash
# SIGTERM while an online compilation runs (ctest cli.stop_during_compile,
# ~20 s): `lull serve --online-compile on` over two latency-replay servers,
# a policy set compiled with a large state space (so that the K-1 policy
# takes seconds), four clients sending queries; one server is stopped, the health
# check marks it down, and SIGTERM is sent while a background compilation
# runs (its start is logged; at this size one takes 9-14 s here, so it has
# not ended: the check below on the abandonment line says it was running). Before, lull exited only when the
# compilation ended (6 of 6 probes, up to 9.5 s). Checks (exit 1 if any fails):
#   - the compilation was abandoned (its log line says so), not finished;
#   - lull exits with status 0, within STOP_BOUND_MS (1000) of SIGTERM (the
#     time is printed; it is polled every 20 ms for at most 4 s);
#   - every query got an HTTP status (200, or 503 from the stop itself): none
#     reset, those still in the kernel's accept queue at the stop included.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
SIZE="${STOP_COMPILE_SIZE:-800}"
WORK="$(mktemp -d /tmp/lull-stop-compile.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, wait_serve_port, replay_servers, stop_within
trap cleanup EXIT
fail() { echo "stop_during_compile: FAIL: $*" >&2; FAILED=1; }
FAILED=0

"$LULL" compile --profiles "$PROFILE" --slo-ms 100 --workers 2 --load-qps 30 --max-queue "$SIZE" \
    --intervals "$SIZE" --out "$WORK/set.pb" 2>"$WORK/compile.log"
replay_servers 2 "$PROFILE"
"$LULL" serve --policies "$WORK/set.pb" --profiles "$PROFILE" --online-compile on \
    --servers "$SERVER_URLS" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_serve_port "$LULL_PID" "$WORK/lull.port" "$WORK/serve.log"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"
TASK="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["task"])' "$PROFILE")"
# Four clients, each a new connection per query, until lull is gone: a
# query is lost when its connection was accepted but no status came back.
"$PY" - "$TARGET/predictions/$TASK" "$WORK/clients.txt" <<'PYEOF' &
import http.client, sys, threading, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
counts, lock = {}, threading.Lock()
def client():
    while True:
        c = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        try:
            c.connect()
        except OSError:
            outcome = "refused"
        else:
            try:
                c.request("POST", url.path, body=b"x" * 64)
                outcome = str(c.getresponse().status)
            except (OSError, http.client.HTTPException):
                outcome = "lost"
        c.close()
        with lock:
            counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == "refused":
            return
threads = [threading.Thread(target=client) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
open(sys.argv[2], "w").write(" ".join("%s=%d" % kv for kv in sorted(counts.items())) + "\n")
PYEOF
CLIENTS=$!
PIDS+=($CLIENTS)
# Bounded poll: the clients' queries are being answered.
for _ in $(seq 1 200); do
  N=$(curl -s -m 2 "$TARGET/metrics" | awk '$1 == "lull_queries_total" {print int($2)}')
  [ "${N:-0}" -gt 5 ] && break
  sleep 0.05
done
kill "${SERVER_PIDS[1]}"
# The compilation starts when the health check marks the server down (logged).
STARTED=0
for _ in $(seq 1 100); do grep -q "worker 1 .* down" "$WORK/serve.log" && { STARTED=1; break; }; sleep 0.1; done
[ "$STARTED" = 1 ] || fail "the stopped server was never marked down"
# Bounded poll for the compilation's start (a log line), then SIGTERM while it runs.
RUNNING=0
for _ in $(seq 1 200); do grep -q "online compilation: started" "$WORK/serve.log" && { RUNNING=1; break; }; sleep 0.05; done
[ "$RUNNING" = 1 ] || fail "no online compilation started"
stop_within "$LULL_PID" stop_during_compile "compile started: $STARTED"
wait "$CLIENTS" || true
echo "stop_during_compile: queries: $(cat "$WORK/clients.txt")"
# "lost" counts a connection reset after connect (before, 1-4 in 3 of 6
# runs: the accept queue's, reset when the listener closed).
LOST=$(grep -o "lost=[0-9]*" "$WORK/clients.txt" | cut -d= -f2 || true)
[ "${LOST:-0}" = 0 ] || fail "$LOST connections reset"
grep -q "online compilation failed: the compilation was abandoned" "$WORK/serve.log" ||
  fail "the compilation was not abandoned (it finished, or the stop waited for it)"
grep -i "compil\|stopping" "$WORK/serve.log" | tail -n 5 >&2 || true
[ "$FAILED" = 0 ] || { tail -n 15 "$WORK/serve.log" >&2; exit 1; }
echo "stop_during_compile: ok"
