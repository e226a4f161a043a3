#!/usr/bin/env bash
# `lull serve --wait-for-servers-s` started before its model servers (ctest serve.wait_for_servers):
#   1. lull listens at once and is not ready: /ping 500, /v2/health/ready 503, /v2/health/live 200;
#   2. the two model servers start DELAY s later (LULL_WAIT_DELAY_S, default 20): lull is ready within
#      2 s of the last one listening, in the same process (no restart);
#   3. nothing a client sent is lost: a client sending a query every 50 ms from before lull listens
#      until after it is ready gets an answer to each, 503 with Retry-After while not ready, 200 after;
#   4. a wait that ends with no server: exit 2, one line naming the flag, the port file removed;
#   5. SIGTERM while waiting: exit 0 at once.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
DELAY="${LULL_WAIT_DELAY_S:-20}"
WORK="$(mktemp -d /tmp/lull-wait.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, wait_serve_port
trap cleanup EXIT
FAILED=0
fail() { echo "wait_for_servers: FAIL: $*" >&2; FAILED=1; }
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1" || true; }

"$LULL" compile --profiles "$PROFILE" --slo-ms 100 --workers 2 --load-qps 10:60:10 --max-queue 8 \
    --out "$WORK/set.pb" > /dev/null 2> "$WORK/compile.log"
P1=$(free_port)
P2=$(free_port)
"$LULL" serve --policies "$WORK/set.pb" --servers "http://127.0.0.1:$P1,http://127.0.0.1:$P2" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" --wait-for-servers-s $((DELAY + 30)) 2> "$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_serve_port $LULL_PID "$WORK/lull.port" "$WORK/serve.log"
URL="http://127.0.0.1:$(cat "$WORK/lull.port")"

# 1. Listening, not ready.
[ "$(code "$URL/ping")" = 500 ] || fail "/ping while waiting: $(code "$URL/ping"), not 500"
[ "$(code "$URL/v2/health/ready")" = 503 ] || fail "/v2/health/ready while waiting: not 503"
[ "$(code "$URL/v2/health/live")" = 200 ] || fail "/v2/health/live while waiting: not 200"

# 2 and 3. The client runs from now on; the servers start DELAY s after it does.
"$PY" - "$URL" "$WORK" "$DELAY" > "$WORK/client.txt" 2> "$WORK/client.err" <<'EOF' &
import http.client, json, os, sys, time, urllib.parse
url, work, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
u = urllib.parse.urlparse(url)
def call(method, path, body=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        c.request(method, path, body=body)
        r = c.getresponse()
        r.read()
        return r.status, r.getheader("Retry-After")
    except Exception as e:  # a lost query: no answer at all
        return "lost: %s" % e, None
    finally:
        c.close()
start = time.monotonic()
open(os.path.join(work, "go"), "w").write("go\n")
answers, ready_at, up_at = [], None, None
while time.monotonic() - start < delay + 40:
    now = time.monotonic() - start
    if up_at is None and all(os.path.exists(os.path.join(work, f)) and os.path.getsize(os.path.join(work, f))
                             for f in ("s1.port", "s2.port")):
        up_at = now
    answers.append((now, *call("POST", "/predictions/image-classification", b"x")))
    if ready_at is None and call("GET", "/v2/health/ready")[0] == 200:
        ready_at = time.monotonic() - start
    if ready_at is not None and time.monotonic() - start > ready_at + 2:
        break
    time.sleep(0.05)
json.dump({"up_at": up_at, "ready_at": ready_at, "answers": answers}, sys.stdout)
EOF
CLIENT=$!
PIDS+=($CLIENT)
wait_file "$WORK/go" 300
sleep "$DELAY"
for i in 1 2; do
  port=$([ $i = 1 ] && echo "$P1" || echo "$P2")
  "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$PROFILE" --port "$port" \
      --port-file "$WORK/s$i.port" 2> "$WORK/server$i.log" &
  PIDS+=($!)
done
rc=0; wait $CLIENT || rc=$?
[ "$rc" = 0 ] || fail "the client exited $rc: $(cat "$WORK/client.err")"
kill -0 $LULL_PID 2>/dev/null || fail "lull serve exited while it waited: $(cat "$WORK/serve.log")"
"$PY" - "$WORK/client.txt" <<'EOF' || FAILED=1
import json, sys
r = json.load(open(sys.argv[1]))
up, ready, answers = r["up_at"], r["ready_at"], r["answers"]
problems = []
if up is None or ready is None:
    problems.append("servers up at %s, lull ready at %s" % (up, ready))
else:
    if ready - up > 2.0:
        problems.append("ready %.2f s after the servers were up (over 2 s)" % (ready - up))
lost = [a for a in answers if not isinstance(a[1], int)]
wrong = [a for a in answers if isinstance(a[1], int) and not (a[1] == 200 or (a[1] == 503 and a[2] == "1"))]
late_503 = [a for a in answers if ready is not None and a[0] > ready and a[1] != 200]
ok = sum(1 for a in answers if a[1] == 200)
waiting = sum(1 for a in answers if a[1] == 503)
problems += ["%d queries lost (%s)" % (len(lost), lost[:2])] if lost else []
problems += ["%d answers neither 200 nor 503 with Retry-After (%s)" % (len(wrong), wrong[:2])] if wrong else []
problems += ["%d queries sent after ready not answered 200" % len(late_503)] if late_503 else []
if ok == 0 or waiting == 0:
    problems.append("%d answered 200, %d answered 503: both expected" % (ok, waiting))
print("wait_for_servers: servers up at %.2f s, lull ready at %.2f s (%.2f s later); %d queries: %d 503 (not ready), "
      "%d 200, %d lost" % (up or -1, ready or -1, (ready or 0) - (up or 0), len(answers), waiting, ok, len(lost)))
for p in problems:
    print("wait_for_servers: FAIL: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
[ "$(code "$URL/ping")" = 200 ] || fail "/ping after ready: not 200"
grep -q "ready after" "$WORK/serve.log" || fail "no 'ready after' line: $(cat "$WORK/serve.log")"
kill -TERM $LULL_PID
rc=0; wait $LULL_PID || rc=$?
[ "$rc" = 0 ] || fail "lull serve exited $rc on SIGTERM"

# 4. The wait ends with no server.
DEAD=$(free_port)
rc=0
"$LULL" serve --policies "$WORK/set.pb" --servers "http://127.0.0.1:$DEAD,http://127.0.0.1:$DEAD" \
    --listen 127.0.0.1:0 --port-file "$WORK/dead.port" --wait-for-servers-s 1 2> "$WORK/dead.log" || rc=$?
[ "$rc" = 2 ] || fail "a wait with no server exited $rc, not 2"
last=$(tail -n 1 "$WORK/dead.log")
[[ "$last" == *"were not ready within 1 s (--wait-for-servers-s)"* ]] || fail "the last line: '$last'"
[ ! -e "$WORK/dead.port" ] || fail "the port file is still there after the wait failed"

# 5. SIGTERM while waiting.
"$LULL" serve --policies "$WORK/set.pb" --servers "http://127.0.0.1:$DEAD,http://127.0.0.1:$DEAD" \
    --listen 127.0.0.1:0 --port-file "$WORK/term.port" --wait-for-servers-s 600 2> "$WORK/term.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_serve_port $LULL_PID "$WORK/term.port" "$WORK/term.log"
kill -TERM $LULL_PID
rc=0
for _ in $(seq 1 100); do kill -0 $LULL_PID 2>/dev/null || break; sleep 0.1; done
kill -0 $LULL_PID 2>/dev/null && fail "lull serve still waits 10 s after SIGTERM"
wait $LULL_PID || rc=$?
[ "$rc" = 0 ] || fail "SIGTERM while waiting: exit $rc, not 0 ($(cat "$WORK/term.log"))"

[ "$FAILED" = 0 ] && echo "wait_for_servers: ok"
exit "$FAILED"
