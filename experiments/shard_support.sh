# Shell helpers for lull shards behind HAProxy (experiments/shards.sh and the
# ctest serve.shard_fault, test/server/shard_fault_test.sh): source after
# script_support.sh; they read ROOT, LULL, PY, WORK and append to PIDS.

# free_port: a TCP port free on loopback now (HAProxy cannot bind port 0).
free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_replay_servers N [CMD_PREFIX...]: N latency-replay stand-in servers of
# test/data/replay_profile.json (seeds 0..N-1); their URLs, comma-separated,
# in SERVER_URLS.
start_replay_servers() {
  local n=$1 i urls=()
  shift
  for i in $(seq 0 $((n - 1))); do
    "$@" "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$ROOT/test/data/replay_profile.json" \
        --seed "$i" --port-file "$WORK/server$i.port" 2> "$WORK/server$i.log" &
    PIDS+=($!)
  done
  for i in $(seq 0 $((n - 1))); do wait_file "$WORK/server$i.port"; urls+=("http://127.0.0.1:$(cat "$WORK/server$i.port")"); done
  SERVER_URLS="$(IFS=,; echo "${urls[*]}")"
}

# start_shard I G POLICIES PORT [CMD_PREFIX...]: `lull serve --shard I/G` over
# SERVER_URLS on 127.0.0.1:PORT (0: any; then read WORK/shardI.port); its
# pid in SHARD_PIDS[I]. Returns once it listens.
declare -a SHARD_PIDS
start_shard() {
  local i=$1 g=$2 policies=$3 port=$4
  shift 4
  rm -f "$WORK/shard$i.port"
  "$@" "$LULL" serve --policies "$policies" --servers "$SERVER_URLS" --shard "$i/$g" --listen "127.0.0.1:$port" \
      --port-file "$WORK/shard$i.port" 2>> "$WORK/shard$i.log" &
  SHARD_PIDS[$i]=$!
  PIDS+=($!)
  wait_file "$WORK/shard$i.port"
}

# start_haproxy [CMD_PREFIX...]: HAProxy with experiments/haproxy-shards.cfg in
# front of shards 0..2 (WORK/shardI.port); LB_URL and LB_STATS_URL are its
# front end and its stats page. Returns once every shard is up in its checks.
start_haproxy() {
  local lb stats i
  lb=$(free_port); stats=$(free_port)
  LB_BIND="127.0.0.1:$lb" LB_STATS="127.0.0.1:$stats" SHARD0="127.0.0.1:$(cat "$WORK/shard0.port")" \
      SHARD1="127.0.0.1:$(cat "$WORK/shard1.port")" SHARD2="127.0.0.1:$(cat "$WORK/shard2.port")" \
      "$@" haproxy -db -f "$ROOT/experiments/haproxy-shards.cfg" > "$WORK/haproxy.log" 2>&1 &
  PIDS+=($!)
  LB_URL="http://127.0.0.1:$lb"; LB_STATS_URL="http://127.0.0.1:$stats/stats;csv"
  for _ in $(seq 1 100); do
    [ "$(shards_up)" = 3 ] && return 0
    sleep 0.1
  done
  echo "$(basename "$0" .sh): HAProxy never saw 3 shards up ($(cat "$WORK/haproxy.log"))" >&2
  exit 1
}

# shards_up: how many of the backend's servers HAProxy's checks hold UP.
shards_up() {
  curl -s --max-time 2 "$LB_STATS_URL" | awk -F, '$1 == "shards" && $2 ~ /^shard/ && $18 ~ /^UP/ {n++} END {print n + 0}'
}

# metric_sum URL NAME: the sum of a metric's samples in a /metrics page.
metric_sum() {
  curl -s --max-time 2 "$1/metrics" | awk -v m="$2" '$1 == m || index($1, m "{") == 1 {s += $2} END {printf "%d\n", s}'
}

# wait_metric_positive URL NAME PID: polls (every 0.1 s, 10 s at most, and
# no longer than process PID, the load, runs) until metric_sum URL NAME is
# above 0; prints the last sum.
wait_metric_positive() {
  local n=0
  for _ in $(seq 1 100); do
    n=$(metric_sum "$1" "$2")
    [ "$n" -gt 0 ] || ! kill -0 "$3" 2>/dev/null && break
    sleep 0.1
  done
  echo "$n"
}

# start_nginx: nginx with experiments/nginx-shards.conf (its placeholders
# filled in) in front of shards 0..2 (WORK/shardI.port); LB_URL is its front
# end. Returns once it answers a /ping through to a shard.
start_nginx() {
  local lb
  lb=$(free_port)
  mkdir -p "$WORK/nginx/tmp"
  sed -e "s/LB_BIND/127.0.0.1:$lb/" -e "s/SHARD0/127.0.0.1:$(cat "$WORK/shard0.port")/" \
      -e "s/SHARD1/127.0.0.1:$(cat "$WORK/shard1.port")/" -e "s/SHARD2/127.0.0.1:$(cat "$WORK/shard2.port")/" \
      "$ROOT/experiments/nginx-shards.conf" > "$WORK/nginx/lb.conf"
  nginx -e stderr -p "$WORK/nginx" -c "$WORK/nginx/lb.conf" > "$WORK/nginx.log" 2>&1 &
  PIDS+=($!)
  LB_URL="http://127.0.0.1:$lb"
  for _ in $(seq 1 100); do
    curl -sf --max-time 1 "$LB_URL/ping" > /dev/null && return 0
    sleep 0.1
  done
  echo "$(basename "$0" .sh): nginx never answered /ping ($(cat "$WORK/nginx.log"))" >&2
  exit 1
}
