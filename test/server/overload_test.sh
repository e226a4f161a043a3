#!/usr/bin/env bash
# Overload and connection churn against `lull serve` (the ctest
# serve.overload): two latency-replay stand-in servers
# (test/modelserver/lull_modelserver.py --replay-profile, as e2e.sh's replay
# mode), a policy compiled from the same profile, and `lull serve` with a small
# connection cap, on loopback only. Two phases:
#   1. open-loop Poisson load from `lull loadgen` at OVERLOAD_QPS (default
#      2500, over twice what the two servers answer, ~1000 qps with the
#      fastest model; docs/operators-guide.md) for OVERLOAD_S (20 s);
#   2. OVERLOAD_CHURN_S (15 s) of churn_clients.py: 64 clients connecting,
#      sending part of a request or all of it, pausing and closing.
# Checks (exit 1 if any fails):
#   - lull serve is alive after each phase and answers /ping;
#   - phase 1: every request loadgen sent got 200, 503 or 504 (no transport
#     error, none unanswered), and lull's /metrics counts the same number of
#     each (lull_http_responses_total, less the /metrics fetch itself);
#   - phase 2: every answer the churn clients read is 200 or 503 (a client
#     may also see its connection closed first: it left a request
#     unfinished, or its 2 s wait ran out on this loaded machine), and the
#     cap made the server shed connections;
#   - lull's RSS never exceeds OVERLOAD_RSS_MIB (256; the ctest raises it for
#     sanitizer builds), sampled every 0.5 s.
# loadgen keeps at most OVERLOAD_CONNECTIONS (256) connections open and reuses
# them (more than the cap: the connections lull does not take are answered
# 503 at once, so the schedule holds; a request due while all are busy waits
# and is reported late, docs/operators-guide.md).
# The knobs: OVERLOAD_QPS, OVERLOAD_S, OVERLOAD_CHURN_S, OVERLOAD_CAP (16,
# --max-connections), OVERLOAD_CONNECTIONS, OVERLOAD_SERVE_FLAGS (more lull
# serve flags, e.g. --reject-late), OVERLOAD_RSS_MIB, LULL (the binary), OVERLOAD_OUT (the
# folder for overload.json; default: a scratch folder, removed).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
QPS="${OVERLOAD_QPS:-2500}"; SECS="${OVERLOAD_S:-20}"; CHURN_S="${OVERLOAD_CHURN_S:-15}"
CAP="${OVERLOAD_CAP:-16}"; RSS_MIB="${OVERLOAD_RSS_MIB:-256}"; CONNECTIONS="${OVERLOAD_CONNECTIONS:-256}"
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-overload.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, replay_servers
trap cleanup EXIT
fail() { echo "overload: FAIL: $*" >&2; FAILED=1; }
FAILED=0

replay_servers 2 "$PROFILE"
# A plan up to 100 qps: past it lull serves with the fastest policy and
# refuses what its queue cannot hold (503), which is the point here.
"$LULL" compile --profiles "$PROFILE" --slo-ms 70 --workers 2 --percentile 100 --load-qps 20:100:20 \
    --max-queue 8 --intervals 20 --out "$WORK/set.pb" 2>"$WORK/compile.log"
"$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER_URLS" --listen 127.0.0.1:0 \
    --max-connections "$CAP" ${OVERLOAD_SERVE_FLAGS:-} --port-file "$WORK/lull.port" 2>"$WORK/serve.log" &
LULL_PID=$!
PIDS+=($LULL_PID)
wait_file "$WORK/lull.port"
TARGET="http://127.0.0.1:$(cat "$WORK/lull.port")"
TASK="$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["task"])' "$PROFILE")"

# RSS sampler: the largest VmRSS (KiB) seen, in WORK/rss.max.
( max=0; while kill -0 "$LULL_PID" 2>/dev/null; do
    r=$(awk '/^VmRSS/ {print $2}' "/proc/$LULL_PID/status" 2>/dev/null || echo 0)
    [ "${r:-0}" -gt "$max" ] && { max=$r; echo "$max" > "$WORK/rss.max"; }
    sleep 0.5
  done ) &
PIDS+=($!)

alive() {  # PHASE: lull serve still runs and answers /ping
  if ! kill -0 "$LULL_PID" 2>/dev/null; then fail "$1: lull serve died (log: $(tail -n 3 "$WORK/serve.log"))"; return 1; fi
  curl -sf -m 10 "$TARGET/ping" > /dev/null || fail "$1: /ping did not answer 200"
}

curl -s -m 10 "$TARGET/metrics" > "$WORK/metrics_before.txt"
"$LULL" loadgen --target "$TARGET/predictions/$TASK" --rate "$QPS" --duration "${SECS}s" --timeout-ms 20000 \
    --connections "$CONNECTIONS" --json "$WORK/loadgen.json" > "$WORK/loadgen.txt" 2>&1 || true
alive "overload" || exit 1
curl -s -m 10 "$TARGET/metrics" > "$WORK/metrics_after.txt"
cat "$WORK/loadgen.txt" >&2
grep '^lull_http_connections' "$WORK/metrics_after.txt" | sed 's/^/overload: \/metrics: /' >&2

"$PY" - "$WORK" <<'PYEOF' || FAILED=1
import json, re, sys
work = sys.argv[1]
def codes(path):
    out = {}
    for line in open(path):
        m = re.match(r'lull_http_responses_total\{code="(\d+)"\} (\S+)', line)
        if m: out[int(m.group(1))] = int(float(m.group(2)))
    return out
before, after = codes(f"{work}/metrics_before.txt"), codes(f"{work}/metrics_after.txt")
served = {c: after.get(c, 0) - before.get(c, 0) for c in set(before) | set(after)}
served[200] = served.get(200, 0) - 2  # the /metrics fetch before the load, and the /ping after it
served = {c: n for c, n in served.items() if n}
text = open(f"{work}/loadgen.txt").read()
r = json.load(open(f"{work}/loadgen.json"))
seen = {200: r["ok"]}
for code, n in re.findall(r"^  HTTP (\d+): (\d+)$", text, re.M): seen[int(code)] = int(n)
transport = re.findall(r"^  (?!HTTP \d+:|model )(.+): (\d+)$", text, re.M)
ok = True
def check(cond, what):
    global ok
    if not cond:
        ok = False
        print(f"overload: FAIL: {what}", file=sys.stderr)
# Requests loadgen never sent (all its connections stayed busy until the
# drain ended: a sanitizer build's loadgen is slow) never reached lull.
sent = r["sent"] - r["not_sent"]
check(r["unanswered"] == r["not_sent"], f"{r['unanswered'] - r['not_sent']} requests sent and unanswered")
check(r["max_in_flight"] <= r["connections"], f"{r['max_in_flight']} in flight over {r['connections']} connections")
check(not transport, f"transport errors at the client: {transport}")
check(set(seen) <= {200, 503, 504}, f"statuses other than 200/503/504: {seen}")
check(sum(seen.values()) == sent, f"answers {sum(seen.values())} != sent {sent}")
check(served == {c: n for c, n in seen.items() if n}, f"/metrics counted {served}, the client saw {seen}")
check(seen.get(503, 0) > 0, "no 503 at all: the load did not overload lull (raise OVERLOAD_QPS)")
json.dump(dict(sent=sent, not_sent=r["not_sent"], rate_achieved=r["rate_achieved"], client=seen, metrics=served, late=r["late"],
               max_wait_ms=r["max_wait_ms"], p50_ms=r["p50_ms"], p99_ms=r["p99_ms"]), open(f"{work}/overload.json", "w"))
print(f"overload: sent {sent} of {r['sent']} scheduled (at {r['rate_achieved']:.0f}/s): client {seen}, "
      f"/metrics {served}, late {r['late']} (max wait {r['max_wait_ms']:.0f} ms)", file=sys.stderr)
sys.exit(0 if ok else 1)
PYEOF

"$PY" "$ROOT/test/server/churn_clients.py" "$(cat "$WORK/lull.port")" "$TASK" "$CHURN_S" 64 > "$WORK/churn.json" || FAILED=1
echo "overload: churn: $(cat "$WORK/churn.json")" >&2
alive "churn" || exit 1
"$PY" -c 'import json, sys
c = json.load(open(sys.argv[1]))
bad = {k: v for k, v in c["statuses"].items() if k not in ("200", "503", "none")}
sys.exit(1 if bad or c["connections"] == 0 else 0)' "$WORK/churn.json" || fail "churn: unexpected answers: $(cat "$WORK/churn.json")"
curl -s -m 10 "$TARGET/metrics" > "$WORK/metrics_churn.txt"
grep -q '^lull_http_connections_closed_total{reason="shed"} [1-9]' "$WORK/metrics_churn.txt" || fail "churn: nothing was shed"

RSS_MAX_KIB="$(cat "$WORK/rss.max" 2>/dev/null || echo 0)"
echo "overload: max RSS $((RSS_MAX_KIB / 1024)) MiB (limit $RSS_MIB)" >&2
[ "$RSS_MAX_KIB" -le $((RSS_MIB * 1024)) ] || fail "RSS reached $((RSS_MAX_KIB / 1024)) MiB"
if [ -n "${OVERLOAD_OUT:-}" ]; then
  mkdir -p "$OVERLOAD_OUT"
  "$PY" -c 'import json, sys
o = json.load(open(sys.argv[1])); o["churn"] = json.load(open(sys.argv[2])); o["rss_max_mib"] = int(sys.argv[3]) / 1024
json.dump(o, open(sys.argv[4], "w"), indent=1)' "$WORK/overload.json" "$WORK/churn.json" "$RSS_MAX_KIB" "$OVERLOAD_OUT/overload.json"
fi
[ "$FAILED" = 0 ] && echo "overload: pass" >&2
exit "$FAILED"
