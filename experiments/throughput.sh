#!/usr/bin/env bash
# One lull shard's throughput limit beside HAProxy's (docs/operators-guide.md
# "Throughput of one shard", numbers in docs/benchmarks.md).
# Three fast stand-in model servers (build/test/bench/serve/lull_fast_model_server:
# epoll, every request answered concurrently after a fixed latency, so they are
# never the bottleneck), then for each rate of a ladder, in alternation:
#   lull:    `lull bench serve --direct S0 --lull LULL`: one Poisson stream dealt
#            in turn to a model server directly and to one `lull serve` over the
#            three servers;
#   haproxy: `lull bench serve --direct S0 --proxy HAPROXY`: the same, with
#            HAProxy (experiments/haproxy-shards.cfg: HTTP mode, per-request
#            round-robin, health checks) in front of the same three servers.
# Each rate is a proxy's own rate (the direct path gets as much again). The
# proxy under test is pinned to one core (PROXY_CPU, default 1) and everything
# else (generator, model servers, the idle proxy) to the other (GEN_CPU, 0),
# so "QPS per core" is the proxy's: the highest rate at which its p99 stays
# within THROUGHPUT_MAX_OVERHEAD_MS (1) of the direct path's, with no error,
# and, at every rate, answers per CPU-second the proxy used (/proc/PID/stat).
#   THROUGHPUT_RATES (default "500 1000 2000 3000 4000 6000 8000"),
#   THROUGHPUT_ROUNDS (2), THROUGHPUT_DURATION (10s, 2 s of warm-up not counted),
#   THROUGHPUT_MODEL_MS (model latency BASE:PER_ITEM ms, default 0:0: what is measured is the proxy),
#   LULL_BEFORE (another lull binary, measured beside as "lull-before"),
#   THROUGHPUT_CONNECTIONS (per path, default 64), THROUGHPUT_SLO_MS (policy SLO, 20),
#   THROUGHPUT_PROXIES ("lull haproxy"), THROUGHPUT_SHARDS="1 2 3" (then also: G
#   `lull serve --shard I/G` over six servers behind HAProxy, all on the proxy core,
#   "fleet-G", measured at THROUGHPUT_SHARD_RATE, default 3000/s, in each round), THROUGHPUT_RT=0 (normal priority; default
#   real-time FIFO 1 where allowed), THROUGHPUT_OUT (experiments/results).
# Writes throughput.{md,json} to THROUGHPUT_OUT. The machine is shared: the load
# average of each run is kept beside its numbers.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
FAST="${FAST_SERVER:-$ROOT/build/test/bench/serve/lull_fast_model_server}"
PY=/usr/bin/python3
OUT="${THROUGHPUT_OUT:-$ROOT/experiments/results}"
RATES="${THROUGHPUT_RATES:-500 1000 2000 3000 4000 6000 8000}"
ROUNDS="${THROUGHPUT_ROUNDS:-2}"; DURATION="${THROUGHPUT_DURATION:-10s}"
MODEL_MS="${THROUGHPUT_MODEL_MS:-0:0}"; CONNECTIONS="${THROUGHPUT_CONNECTIONS:-64}"
SLO_MS="${THROUGHPUT_SLO_MS:-20}"; MAX_OVERHEAD_MS="${THROUGHPUT_MAX_OVERHEAD_MS:-1}"
PROXIES="${THROUGHPUT_PROXIES:-lull haproxy}"
SHARDS="${THROUGHPUT_SHARDS:-}"; SHARD_RATE="${THROUGHPUT_SHARD_RATE:-3000}"
GEN_CPU="${GEN_CPU:-0}"; PROXY_CPU="${PROXY_CPU:-1}"
WORK="$(mktemp -d /tmp/lull-throughput.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file, cpu_ticks_of
source "$ROOT/experiments/shard_support.sh"   # free_port
trap cleanup EXIT
command -v haproxy > /dev/null || { echo "throughput: haproxy not installed (apt-get install haproxy)" >&2; exit 2; }
[ -x "$FAST" ] || { echo "throughput: $FAST not built (cmake --build build --target lull_fast_model_server)" >&2; exit 2; }
mkdir -p "$OUT"
# Real-time priority where allowed (THROUGHPUT_RT=0: normal), as e2e.sh: the
# machine's other work (builds) then cannot hold a proxy's core while a query
# waits, which otherwise dominates every p99 on a busy machine.
RT=()
if [ "${THROUGHPUT_RT:-1}" = 1 ] && chrt -f 1 true 2>/dev/null; then RT=(chrt -f 1); fi
GEN=(taskset -c "$GEN_CPU" "${RT[@]}"); PIN=(taskset -c "$PROXY_CPU" "${RT[@]}")

urls=()
NSERVERS=3
if [ -n "$SHARDS" ]; then NSERVERS=6; fi  # G = 1, 2, 3 shards of 6 servers
for i in $(seq 0 $((NSERVERS - 1))); do
  "${GEN[@]}" "$FAST" --fake "m:${MODEL_MS}" --port-file "$WORK/server$i.port" 2> "$WORK/server$i.log" &
  PIDS+=($!)
done
for i in $(seq 0 $((NSERVERS - 1))); do wait_file "$WORK/server$i.port"; urls+=("127.0.0.1:$(cat "$WORK/server$i.port")"); done
SERVERS="http://${urls[0]},http://${urls[1]},http://${urls[2]}"  # the first three
DIRECT="http://${urls[0]}/predictions/m"

# lull: a policy set for 3 workers measured on the stand-in, over the ladder's loads.
echo '{"m": 0.5}' > "$WORK/acc.json"
"$LULL" profile --worker "http://${urls[0]}" --models m --max-batch 16 --samples 20 --accuracy "$WORK/acc.json" \
    --task tput --out "$WORK/profile.json" 2> /dev/null
TOP=$(for r in $RATES; do echo "$r"; done | sort -n | tail -1)
STEP=$(( (TOP + 2 * TOP / 10) / 40 + 1 ))
"$LULL" compile --profiles "$WORK/profile.json" --slo-ms "$SLO_MS" --workers 3 --load-qps "$STEP:$((STEP * 40)):$STEP" \
    --out "$WORK/set.pb" 2> "$WORK/compile.log" > /dev/null
if [ -n "$SHARDS" ]; then  # the fleet's: 6 workers in all, at the global load
  SERVERS6="$(printf 'http://%s,' "${urls[@]}")"; SERVERS6="${SERVERS6%,}"
  "$LULL" compile --profiles "$WORK/profile.json" --slo-ms "$SLO_MS" --workers 6 --load-qps "$STEP:$((STEP * 40)):$STEP" \
      --out "$WORK/set6.pb" 2>> "$WORK/compile.log" > /dev/null
fi
# The proxies measured: NAME -> "URL_FLAG URL PID..." (the CPU counted is those PIDs').
declare -A PROXY
start_lull() {  # start_lull NAME BINARY
  "${PIN[@]}" "$2" serve --policies "$WORK/set.pb" --servers "$SERVERS" --listen 127.0.0.1:0 \
      --port-file "$WORK/$1.port" 2> "$WORK/$1.log" &
  PIDS+=($!)
  wait_file "$WORK/$1.port"
  PROXY[$1]="--lull http://127.0.0.1:$(cat "$WORK/$1.port")/predictions/tput $!"
}
start_lull lull "$LULL"
# LULL_BEFORE=BINARY: an older build measured beside it, in the same run ("lull-before").
if [ -n "${LULL_BEFORE:-}" ]; then start_lull lull-before "$LULL_BEFORE"; PROXIES="lull-before $PROXIES"; fi

# HAProxy: the shards' config, its three backends the model servers themselves.
lb=$(free_port); stats=$(free_port)
LB_BIND="127.0.0.1:$lb" LB_STATS="127.0.0.1:$stats" SHARD0="${urls[0]}" SHARD1="${urls[1]}" SHARD2="${urls[2]}" \
    "${PIN[@]}" haproxy -db -f "$ROOT/experiments/haproxy-shards.cfg" > "$WORK/haproxy.log" 2>&1 &
PIDS+=($!)
PROXY[haproxy]="--proxy http://127.0.0.1:$lb/predictions/m $!"
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$lb/ping" && break; sleep 0.1; done

MACHINE="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "throughput: $MACHINE, $(date -u '+%F %H:%M'), lull $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "throughput: model ${MODEL_MS} ms, 3 servers on cpu $GEN_CPU with the generator; proxy on cpu $PROXY_CPU; ${RT[*]:-normal priority}"

# measure NAME RATE ROUND: one bench run, WORK/runs/NAME-RATE-ROUND.json with its CPU.
mkdir -p "$WORK/runs"
measure() {
  local name=$1 rate=$2 round=$3 pids flag url before after t0 t1 f
  read -r flag url pids <<< "${PROXY[$name]}"
  f="$WORK/runs/$name-$rate-$round"
  # shellcheck disable=SC2086
  before=$(cpu_ticks_of $pids); t0=$(date +%s.%N)
  "${GEN[@]}" "$LULL" bench serve --direct "$DIRECT" "$flag" "$url" --rate $((2 * rate)) --duration "$DURATION" \
      --warmup 2s --seed "$round" --connections "$CONNECTIONS" --timeout-ms 5000 --json "$f.json" > "$f.txt" 2>&1 || true
  # shellcheck disable=SC2086
  t1=$(date +%s.%N); after=$(cpu_ticks_of $pids)
  awk -v n="$name" -v r="$rate" -v k="$round" -v cpu="$((after - before))" -v hz="$(getconf CLK_TCK)" -v t0="$t0" \
      -v t1="$t1" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
      'BEGIN {printf "{\"name\": \"%s\", \"rate\": %d, \"round\": %d, \"cpu_s\": %.3f, \"wall_s\": %.3f, \"load\": \"%s\"}\n", n, r, k, cpu / hz, t1 - t0, load}' \
      > "$f.meta"
}
report() {  # report NAME RATE ROUND: one line on a run
  "$PY" - "$WORK/runs/$1-$2-$3" "$1" <<'PYEOF'
import json, sys
f, name = sys.argv[1], sys.argv[2]
m = json.load(open(f + ".meta"))
try:
    b = json.load(open(f + ".json"))
except (OSError, ValueError):
    print(f"  {name} {m['rate']}/s: no result ({open(f + '.txt').read().strip()[-200:]})"); sys.exit()
p = b["proxy" if name == "haproxy" else "lull"]
print(f"  round {m['round']} {name:8s} {m['rate']:6d}/s: p99 {p['p99_ms']:.2f} ms (direct {b['direct']['p99_ms']:.2f}, "
      f"overhead {p['p99_ms'] - b['direct']['p99_ms']:+.2f}), errors {p['errors']}, late {p['late']}, "
      f"cpu {m['cpu_s'] / m['wall_s']:.2f} core, load {m['load']}")
PYEOF
}
# start_fleet G: G shards over the six servers, HAProxy in front, all on the
# proxy core; PROXY[fleet-G]. stop_fleet ends them.
start_fleet() {
  local g=$1 i cfg="$WORK/haproxy-g$1.cfg" pids=""
  FLEET=()
  for i in $(seq 0 $((g - 1))); do
    rm -f "$WORK/g$g-shard$i.port"  # an earlier round's would name a dead shard
    "${PIN[@]}" "$LULL" serve --policies "$WORK/set6.pb" --servers "$SERVERS6" --shard "$i/$g" --listen 127.0.0.1:0 \
        --port-file "$WORK/g$g-shard$i.port" 2> "$WORK/g$g-shard$i.log" &
    FLEET+=($!)
  done
  # The shards' config with G server lines.
  grep -v '^    server shard' "$ROOT/experiments/haproxy-shards.cfg" > "$cfg"
  for i in $(seq 0 $((g - 1))); do
    wait_file "$WORK/g$g-shard$i.port"
    echo "    server shard$i 127.0.0.1:$(cat "$WORK/g$g-shard$i.port") check" >> "$cfg"
  done
  local flb fstats
  flb=$(free_port); fstats=$(free_port)
  LB_BIND="127.0.0.1:$flb" LB_STATS="127.0.0.1:$fstats" "${PIN[@]}" haproxy -db -f "$cfg" > "$WORK/haproxy-g$g.log" 2>&1 &
  FLEET+=($!)
  for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$flb/ping" && break; sleep 0.1; done
  PROXY[fleet-$g]="--lull http://127.0.0.1:$flb/predictions/tput ${FLEET[*]}"
}
stop_fleet() {
  local p
  for p in "${FLEET[@]}"; do kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; done
}
# Warm-up: connections open, lull's load monitor past its first window.
for n in $PROXIES; do measure "$n" 200 0; done
for round in $(seq 1 "$ROUNDS"); do
  for rate in $RATES; do
    for n in $PROXIES; do
      measure "$n" "$rate" "$round"
      report "$n" "$rate" "$round"
    done
  done
  for g in $SHARDS; do
    start_fleet "$g"
    measure "fleet-$g" 200 0
    measure "fleet-$g" "$SHARD_RATE" "$round"
    report "fleet-$g" "$SHARD_RATE" "$round"
    stop_fleet
  done
done


"$PY" "$ROOT/experiments/throughput_table.py" --runs "$WORK/runs" --out "$OUT" --machine "$MACHINE" \
    --model-ms "$MODEL_MS" --duration "$DURATION" --max-overhead-ms "$MAX_OVERHEAD_MS"
