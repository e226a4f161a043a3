#!/usr/bin/env bash
# SIGHUP with a policy path that is a FIFO, then /dev/zero, while lull serve
# answers 50 qps (ctest cli.sighup_hostile_files, ~12 s). Before the bounded
# reader a FIFO wedged the reload (later SIGHUPs ignored, SIGTERM no longer
# stopped lull) and /dev/zero grew it to gigabytes. Checks (exit 1 if any fails):
#   - each is refused in one log line naming the path, "still serving the previous policies";
#   - a later SIGHUP with a good file is reloaded (generation 1);
#   - every query is answered 200, none lost;
#   - SIGTERM then stops lull, exit 0 (a wedged reload never would; 30 s is a hang guard, no verdict on the time);
#   - lull's resident memory stays under 1 GiB.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-sighup-hostile.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, wait_serve_port, replay_servers, compile_replay_set
trap cleanup EXIT
fail() { echo "sighup_hostile: FAIL: $*" >&2; FAILED=1; }
FAILED=0

compile_replay_set "$WORK/a.pb" 100
compile_replay_set "$WORK/b.pb" 50
cp "$WORK/a.pb" "$WORK/set.pb"
mkfifo "$WORK/fifo"
replay_servers 1 "$PROFILE"
"$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER_URLS" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2> "$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_serve_port "$LULL_PID" "$WORK/lull.port" "$WORK/serve.log"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"
TASK="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["task"])' "$PROFILE")"
metric() { curl -s -m 10 "$TARGET/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
# refusals N: waits (up to 10 s) until the log holds N refusal lines.
refusals() {
  for _ in $(seq 1 100); do
    [ "$(grep -c "still serving the previous policies" "$WORK/serve.log" || true)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

"$LULL" loadgen --target "$TARGET/predictions/$TASK" --rate 50 --duration 8s --json "$WORK/loadgen.json" \
    > "$WORK/loadgen.txt" 2>&1 &
LOADGEN=$!
# Serving (a first query answered, 10 s at most) before the first hostile reload.
for _ in $(seq 1 100); do [ "$(metric lull_queries_total)" -gt 0 ] 2>/dev/null && break; sleep 0.1; done
ln -sfn "$WORK/fifo" "$WORK/set.pb.tmp" && mv -T "$WORK/set.pb.tmp" "$WORK/set.pb"
kill -HUP "$LULL_PID"
refusals 1 || fail "the FIFO was not refused in time"
grep -q "set.pb: a FIFO (named pipe), not a regular file" "$WORK/serve.log" || fail "the FIFO refusal does not say what it is"
ln -sfn /dev/zero "$WORK/set.pb.tmp" && mv -T "$WORK/set.pb.tmp" "$WORK/set.pb"
kill -HUP "$LULL_PID"
refusals 2 || fail "/dev/zero was not refused in time"
grep -q "set.pb: a character device, not a regular file" "$WORK/serve.log" || fail "the /dev/zero refusal does not say what it is"
[ "$(metric lull_drift_recompilations_total)" = "0" ] || fail "a refused file changed the policies"
cp "$WORK/b.pb" "$WORK/set.pb.tmp" && mv -T "$WORK/set.pb.tmp" "$WORK/set.pb"
kill -HUP "$LULL_PID"
for _ in $(seq 1 100); do [ "$(metric lull_drift_recompilations_total)" = "1" ] && break; sleep 0.1; done
[ "$(metric lull_drift_recompilations_total)" = "1" ] || fail "a later SIGHUP with a good file was not reloaded"
RSS_KB="$(awk '/^VmRSS/ {print $2}' "/proc/$LULL_PID/status")"
[ "$RSS_KB" -lt 1048576 ] || fail "lull's resident memory is $RSS_KB kB"
wait "$LOADGEN" || true
"$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print("sighup_hostile: sent %d, ok %d" % (s["sent"], s["ok"]))
sys.exit(0 if s["sent"] > 0 and s["ok"] == s["sent"] else 1)' "$WORK/loadgen.json" \
  || fail "not every query was answered 200: $(head -n 2 "$WORK/loadgen.txt")"
kill -TERM "$LULL_PID"
STOPPED=0
for _ in $(seq 1 300); do kill -0 "$LULL_PID" 2>/dev/null || { STOPPED=1; break; }; sleep 0.1; done
[ "$STOPPED" = 1 ] || fail "SIGTERM did not stop lull (still running at the 30 s hang guard)"
if [ "$STOPPED" = 1 ]; then
  CODE=0
  wait "$LULL_PID" || CODE=$?
  [ "$CODE" = 0 ] || fail "lull exited $CODE after SIGTERM"
fi
grep "SIGHUP" "$WORK/serve.log" >&2 || true
[ "$FAILED" = 0 ] || { tail -n 20 "$WORK/serve.log" >&2; exit 1; }
echo "sighup_hostile: ok"
