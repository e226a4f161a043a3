#!/usr/bin/env bash
# Three lull shards behind HAProxy against one lull, on real processes
# (docs/operators-guide.md "Shards"): six latency-replay stand-in servers
# (test/data/replay_profile.json, as the e2e replay gate), one policy set
# compiled for 6 workers, then at the same Poisson load from `lull loadgen`:
#   one:    one `lull serve` over the six servers;
#   shards: `lull serve --shard I/3` (I = 0, 1, 2: servers I and I+3 each)
#           behind HAProxy (experiments/haproxy-shards.cfg, per-request
#           round-robin), the load sent to HAProxy.
# Checks (exit 1 if one fails): no query lost or 5xx in either; the shards'
# violation rate and accuracy per satisfied query within 2 points of the one
# lull's; each shard took a third
# of the queries (within 10%) and labels its /metrics lull_shard_info.
# Writes shards.{md,json} to SHARDS_OUT (default experiments/results).
#   SHARDS_LOAD (default 120 qps: 20 per worker), SHARDS_DURATION (20s), SHARDS_SLO_MS (80),
#   SHARDS_RT=0 (normal priority; default real-time where allowed, as e2e.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
OUT="${SHARDS_OUT:-$ROOT/experiments/results}"
LOAD="${SHARDS_LOAD:-120}"; DURATION="${SHARDS_DURATION:-20s}"
SLO_MS="${SHARDS_SLO_MS:-80}"; HOP_MS=10   # as the e2e replay gate: 10 ms of the SLO kept for the client <-> lull hop
WORK="$(mktemp -d /tmp/lull-shards.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, accuracy_json
source "$ROOT/experiments/shard_support.sh"   # start_replay_servers, start_shard, start_haproxy
trap cleanup EXIT
command -v haproxy > /dev/null || { echo "shards: haproxy not installed (apt-get install haproxy)" >&2; exit 2; }
RT=()
if [ "${SHARDS_RT:-1}" = 1 ] && chrt -f 1 true 2>/dev/null; then RT=(chrt -f 1); fi
mkdir -p "$OUT"

start_replay_servers 6 "${RT[@]}"
accuracy_json "$ROOT/test/data/replay_profile.json" "$WORK/accuracy.json"
"$LULL" compile --profiles "$ROOT/test/data/replay_profile.json" --slo-ms $((SLO_MS - HOP_MS)) --workers 6 \
    --percentile 100 --load-qps 15:300:15 --max-queue 8 --intervals 50 --out "$WORK/set.pb" \
    --report "$WORK/report.json" > /dev/null 2>&1

# load NAME TARGET: warm-up, then the measured load; WORK/NAME.json.
load() {
  "${RT[@]}" "$LULL" loadgen --target "$2/predictions/image-classification" --rate 10 --duration 2s > /dev/null || true
  "${RT[@]}" "$LULL" loadgen --target "$2/predictions/image-classification" --rate "$LOAD" --duration "$DURATION" \
      --seed 7 --slo-ms "$SLO_MS" --accuracy "$WORK/accuracy.json" --json "$WORK/$1.json" > "$WORK/$1.txt" || true
  echo "$1: $(head -1 "$WORK/$1.txt")"
}

# One lull over all six.
"${RT[@]}" "$LULL" serve --policies "$WORK/set.pb" --servers "$SERVER_URLS" --listen 127.0.0.1:0 \
    --port-file "$WORK/one.port" 2> "$WORK/one.log" &
ONE=$!
PIDS+=($ONE)
wait_file "$WORK/one.port"
load one "http://127.0.0.1:$(cat "$WORK/one.port")"
kill "$ONE"; wait "$ONE" || true

# Three shards of two behind HAProxy.
for i in 0 1 2; do start_shard "$i" 3 "$WORK/set.pb" 0 "${RT[@]}"; done
start_haproxy "${RT[@]}"
for i in 0 1 2; do echo "$(metric_sum "http://127.0.0.1:$(cat "$WORK/shard$i.port")" lull_queries_total)" > "$WORK/before$i"; done
load shards "$LB_URL"
for i in 0 1 2; do
  url="http://127.0.0.1:$(cat "$WORK/shard$i.port")"
  echo $(( $(metric_sum "$url" lull_queries_total) - $(cat "$WORK/before$i") )) > "$WORK/queries$i"
  curl -s "$url/metrics" | grep -c "^lull_shard_info{shard=\"$i/3\"} 1" > "$WORK/info$i" || true
done
grep -h "workers (shard" "$WORK"/shard*.log | sed 's/^/  /'

"$PY" - "$WORK" "$OUT" "$LOAD" "$SLO_MS" <<'PYEOF'
import json, os, sys
work, out, load, slo = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
exp = {p["load_qps"]: p for p in json.load(open(f"{work}/report.json"))["policies"]}
e = exp.get(load) or min(exp.values(), key=lambda p: abs(p["load_qps"] - load))
runs = {n: json.load(open(f"{work}/{n}.json")) for n in ("one", "shards")}
queries = [int(open(f"{work}/queries{i}").read()) for i in range(3)]
info = [int(open(f"{work}/info{i}").read() or 0) for i in range(3)]
checks = {
    "no loss or 5xx": all(r["unanswered"] == 0 and r["http_5xx"] == 0 and r["ok"] == r["sent"] for r in runs.values()),
    "violation within 2 points": abs(runs["shards"]["violation_rate"] - runs["one"]["violation_rate"]) <= 0.02,
    "accuracy within 2 points": abs(runs["shards"]["accuracy_per_satisfied"] - runs["one"]["accuracy_per_satisfied"]) <= 0.02,
    "a third to each shard (10%)": all(abs(q - sum(queries) / 3) <= 0.1 * sum(queries) / 3 for q in queries),
    "lull_shard_info on each": info == [1, 1, 1],
}
res = dict(load_qps=load, slo_ms=slo, expected_violation=e["expected_violation_rate"],
           expected_accuracy=e["expected_accuracy"], queries_per_shard=queries, checks=checks,
           rows={n: {k: r[k] for k in ("sent", "ok", "errors", "p50_ms", "p99_ms", "violation_rate", "accuracy_per_satisfied")}
                 for n, r in runs.items()})
json.dump(res, open(f"{out}/shards.json", "w"), indent=1)
with open(f"{out}/shards.md", "w") as f:
    f.write(f"# 3 lull shards x 2 behind HAProxy vs one lull x 6 ({load:g} qps Poisson, SLO {slo:g} ms, {os.cpu_count()} cores)\n\n"
            f"Compiled expectation at {e['load_qps']:g} qps: violation {e['expected_violation_rate']:.3f}, "
            f"accuracy {e['expected_accuracy']:.4f}. Queries per shard: {queries}.\n\n"
            "| run | sent | ok | errors | p50 ms | p99 ms | violation | acc/satisfied |\n|---|---|---|---|---|---|---|---|\n")
    for n, r in res["rows"].items():
        f.write(f"| {n} | {r['sent']} | {r['ok']} | {r['errors']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
                f"{r['violation_rate']:.4f} | {r['accuracy_per_satisfied']:.4f} |\n")
    f.write("\n" + "\n".join(f"- {k}: {'pass' if v else 'FAIL'}" for k, v in checks.items()) + "\n")
print(open(f"{out}/shards.md").read())
sys.exit(0 if all(checks.values()) else 1)
PYEOF
