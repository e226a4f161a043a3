#!/usr/bin/env bash
# SIGHUP reloads lull serve's policy file while it serves (the
# ctest serve.sighup_reload): a latency-replay stand-in server, `lull serve`
# over a policy set, and `lull loadgen` at 50 qps for 12 s. Meanwhile the set
# file is replaced by another compile (other --intervals, so other
# expectations) and SIGHUP sent; then it is replaced by a truncated file and
# SIGHUP sent again. Checks (exit 1 if any fails):
#   - every query is answered 200 (none lost, none refused), lull still runs;
#   - after the good file the catalog generation (lull_drift_recompilations_total,
#     every swap counts) is 1 and the expected accuracy of the policy in use
#     is one of the new set's; after the truncated file the generation stays 1;
#   - one log line for each: "SIGHUP: reloaded" and "still serving the previous policies".
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-sighup.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, replay_servers, compile_replay_set
trap cleanup EXIT
fail() { echo "sighup: FAIL: $*" >&2; FAILED=1; }
FAILED=0

compile_replay_set "$WORK/a.pb" 100
compile_replay_set "$WORK/b.pb" 50
cp "$WORK/a.pb" "$WORK/set.pb"
replay_servers 1 "$PROFILE"
"$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER_URLS" --listen 127.0.0.1:0 \
    --port-file "$WORK/lull.port" 2> "$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_file "$WORK/lull.port"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"
TASK="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["task"])' "$PROFILE")"

metric() { curl -s -m 10 "$TARGET/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
# until_generation N: waits (up to 10 s) for the catalog generation to reach N.
until_generation() {
  for _ in $(seq 1 100); do [ "$(metric lull_drift_recompilations_total)" = "$1" ] && return 0; sleep 0.1; done
  return 1
}

"$LULL" loadgen --target "$TARGET/predictions/$TASK" --rate 50 --duration 12s --json "$WORK/loadgen.json" \
    > "$WORK/loadgen.txt" 2>&1 &
LOADGEN=$!
# Serving under the first set (a second of queries, 10 s at most) before the reload.
for _ in $(seq 1 100); do [ "$(metric lull_queries_total)" -ge 50 ] 2>/dev/null && break; sleep 0.1; done
[ "$(metric lull_queries_total)" -ge 50 ] || fail "fewer than 50 queries served in 10 s before the reload"
[ "$(metric lull_drift_recompilations_total)" = "0" ] || fail "generation before any reload is not 0"
cp "$WORK/b.pb" "$WORK/set.pb.tmp" && mv "$WORK/set.pb.tmp" "$WORK/set.pb"
kill -HUP "$LULL_PID"
until_generation 1 || fail "the good file was not swapped in (generation $(metric lull_drift_recompilations_total))"
# The expected accuracies of the reloaded set's policies, one a line.
"$LULL" policy dump "$WORK/b.pb" --json - | "$PY" -c '
import json, sys
for p in json.load(sys.stdin)["policies"]: print(repr(p["expected_accuracy"]))' > "$WORK/b.acc"
in_new_set() { "$PY" -c '
import sys
acc = float(sys.argv[1])
sys.exit(0 if any(abs(float(a) - acc) < 1e-12 for a in open(sys.argv[2])) else 1)' "$1" "$WORK/b.acc"; }
# The session takes one of them at its next policy choice (10 s at most).
for _ in $(seq 1 100); do ACC="$(metric lull_policy_expected_accuracy_ratio)"; in_new_set "$ACC" && break; sleep 0.1; done
in_new_set "$ACC" || fail "the policy in use ($ACC) is not one of the reloaded set's"
head -c 100 "$WORK/b.pb" > "$WORK/set.pb.tmp" && mv "$WORK/set.pb.tmp" "$WORK/set.pb"
kill -HUP "$LULL_PID"
for _ in $(seq 1 100); do grep -q "still serving the previous policies" "$WORK/serve.log" && break; sleep 0.1; done
[ "$(metric lull_drift_recompilations_total)" = "1" ] || fail "the truncated file changed the policies"
wait "$LOADGEN" || true
kill -0 "$LULL_PID" 2>/dev/null || fail "lull serve died"
"$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print("sighup: sent %d, ok %d" % (s["sent"], s["ok"]))
sys.exit(0 if s["sent"] > 0 and s["ok"] == s["sent"] else 1)' "$WORK/loadgen.json" \
  || fail "not every query was answered 200: $(head -n 2 "$WORK/loadgen.txt")"
[ "$(grep -c "SIGHUP: reloaded" "$WORK/serve.log")" = "1" ] || fail "not one 'reloaded' line"
[ "$(grep -c "still serving the previous policies" "$WORK/serve.log")" = "1" ] || fail "not one refusal line"
grep "SIGHUP" "$WORK/serve.log" >&2 || true
[ "$FAILED" = 0 ] || { tail -n 20 "$WORK/serve.log" >&2; exit 1; }
echo "sighup: ok"
