#!/usr/bin/env bash
# `lull check` (ctest cli.check): the stand-in replays a profile; a policy set
# compiled from that profile slowed 20 times holds against it (exit 0, no row
# "slower"), one compiled from the profile itself against a server replaying it
# 3 times slower does not (exit 1, the re-profile command named), and bad input
# or a dead server is one line with exit 2. The ratios are far from the
# tolerance either way, so a busy machine (a slower server) cannot flip them.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-check.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT
FAILED=0
fail() { echo "check: FAIL: $*" >&2; FAILED=1; }

"$PY" "$ROOT/profiles/scale_latency.py" "$PROFILE" 20 "$WORK/slow20.json" > /dev/null
"$PY" "$ROOT/profiles/scale_latency.py" "$PROFILE" 3 "$WORK/slow3.json" > /dev/null
"$LULL" compile --profiles "$PROFILE" --slo-ms 100 --workers 1 --load-qps 10:30:10 --max-queue 8 \
    --out "$WORK/fast.pb" > /dev/null 2>> "$WORK/compile.log"
"$LULL" compile --profiles "$WORK/slow20.json" --slo-ms 2000 --workers 1 --load-qps 1:3:1 --max-queue 8 \
    --out "$WORK/slow.pb" > /dev/null 2>> "$WORK/compile.log"
for p in fast:"$PROFILE" slow3:"$WORK/slow3.json"; do
  "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "${p#*:}" --port-file "$WORK/${p%%:*}.port" \
      2>> "$WORK/server.log" &
  PIDS+=($!)
  wait_file "$WORK/${p%%:*}.port"
done
FAST="http://127.0.0.1:$(cat "$WORK/fast.port")"
SLOW3="http://127.0.0.1:$(cat "$WORK/slow3.port")"

rc=0
"$LULL" check --policies "$WORK/slow.pb" --servers "$FAST" --samples 3 --warmup 1 > "$WORK/holds.out" 2> "$WORK/holds.err" || rc=$?
[ "$rc" = 0 ] || fail "a set compiled 20x slower than the server does not hold (exit $rc): $(cat "$WORK/holds.out" "$WORK/holds.err")"
[ "$(grep -c '^  http://' "$WORK/holds.out")" -ge 4 ] || fail "fewer than one row per model: $(cat "$WORK/holds.out")"
! grep -q slower "$WORK/holds.out" || fail "a row is slower: $(cat "$WORK/holds.out")"
grep -q "latencies hold here" "$WORK/holds.err" || fail "no verdict: $(cat "$WORK/holds.err")"

rc=0
"$LULL" check --policies "$WORK/fast.pb" --servers "$SLOW3" --samples 3 --warmup 1 > "$WORK/not.out" 2> "$WORK/not.err" || rc=$?
[ "$rc" = 1 ] || fail "a server 3x slower than the set passed (exit $rc): $(cat "$WORK/not.out" "$WORK/not.err")"
grep -q "latencies do not hold here" "$WORK/not.err" || fail "no verdict: $(cat "$WORK/not.err")"
grep -q "lull profile --worker $SLOW3 --models tiny_net,small_net,medium_net,large_net" "$WORK/not.err" ||
  fail "no re-profile command: $(cat "$WORK/not.err")"

DEAD=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for args in "--servers http://127.0.0.1:$DEAD" "--servers $FAST --batches 0" "--servers $FAST --tolerance 0.5"; do
  rc=0
  # shellcheck disable=SC2086
  "$LULL" check --policies "$WORK/fast.pb" $args --samples 1 --warmup 0 > /dev/null 2> "$WORK/bad.err" || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l < "$WORK/bad.err")" = 1 ] || fail "check $args: exit $rc, $(cat "$WORK/bad.err")"
done

[ "$FAILED" = 0 ] && echo "check: ok"
exit "$FAILED"
