# Shell helpers shared by the experiment scripts that start processes
# (e2e.sh, autoscale_e2e.sh, variants_e2e.sh, varscale_e2e.sh, soak.sh, serve_overhead.sh, the fleet scripts,
# prometheus_check.sh) and the serving test scripts under test/: source it after setting PIDS (the processes to kill)
# and WORK (the scratch folder to remove), then `trap cleanup EXIT`.

# Kills every process in PIDS, reaps them, removes WORK.
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }

# wait_file FILE [TRIES]: waits until FILE exists and is not empty, polling
# every 0.1 s, TRIES times (default 600: 60 s); exits the script otherwise.
wait_file() {
  for _ in $(seq 1 "${2:-600}"); do [ -s "$1" ] && return 0; sleep 0.1; done
  echo "$(basename "$0" .sh): $1 never appeared" >&2
  exit 1
}

# wait_serve_port PID PORT_FILE LOG: waits (60 s at most) until the lull
# serve of PID has written PORT_FILE; if it exits first or never writes it,
# prints LOG and exits the script.
wait_serve_port() {
  for _ in $(seq 1 600); do [ -s "$2" ] || ! kill -0 "$1" 2>/dev/null && break; sleep 0.1; done
  [ -s "$2" ] && return 0
  echo "$(basename "$0" .sh): lull serve did not start:" >&2
  cat "$3" >&2
  exit 1
}

# replay_servers N PROFILE: starts N latency-replay stand-in servers of
# PROFILE (seeds 0..N-1; logs WORK/serverI.log), adds them to PIDS, waits for
# each port and sets URLS (their base URLs), SERVER_URLS (joined by commas, as
# lull serve --servers takes them) and SERVER_PIDS. Reads ROOT and PY.
replay_servers() {
  local i
  URLS=()
  SERVER_PIDS=()
  for ((i = 0; i < $1; i++)); do
    "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$2" --seed "$i" \
        --port-file "$WORK/port$i" 2>"$WORK/server$i.log" &
    SERVER_PIDS+=($!)
    PIDS+=($!)
  done
  for ((i = 0; i < $1; i++)); do wait_file "$WORK/port$i"; URLS+=("http://127.0.0.1:$(cat "$WORK/port$i")"); done
  SERVER_URLS=$(IFS=,; echo "${URLS[*]}")
}

# compile_replay_set OUT INTERVALS: a one-worker policy set of PROFILE
# (10-60 qps, queue 8, SLO 100 ms) solved with --intervals INTERVALS, to
# OUT; compile errors go to WORK/compile.log (the SIGHUP tests swap two of
# them, differing in their expectations). Reads LULL and PROFILE.
compile_replay_set() {
  "$LULL" compile --profiles "$PROFILE" --slo-ms 100 --workers 1 --load-qps 10:60:10 --max-queue 8 \
      --intervals "$2" --out "$1" > /dev/null 2>> "$WORK/compile.log"
}

# stop_within PID TAG NOTE: SIGTERM to PID (a child of this shell), a bounded
# poll (4 s) for its exit, the time taken printed as "TAG: exited N ms after
# SIGTERM (NOTE)"; calls the script's fail unless it exited 0 within
# STOP_BOUND_MS (default 1000).
stop_within() {
  local pid=$1 tag=$2 note=$3 start_ns ms stopped=0 code=0
  start_ns=$(date +%s%N)
  kill -TERM "$pid"
  for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || { stopped=1; break; }; sleep 0.02; done
  ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
  echo "$tag: exited $ms ms after SIGTERM ($note)"
  if [ "$stopped" = 1 ]; then
    wait "$pid" || code=$?
    [ "$code" = 0 ] || fail "lull exited $code"
    [ "$ms" -le "${STOP_BOUND_MS:-1000}" ] || fail "exit took $ms ms (over ${STOP_BOUND_MS:-1000} ms)"
  else
    fail "lull did not exit within 4 s of SIGTERM"
  fi
}

# CPU accounting for the end-to-end runs, in clock ticks (USER_HZ): how much
# the machine's cores did, and how much of it the given processes did, so a
# run can say how busy its neighbours kept the cores it was measured on.
# cpu_busy_ticks: busy ticks of all cores together since boot (/proc/stat).
cpu_busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
# cpu_ticks_of PID...: user + system ticks of those processes (all threads).
cpu_ticks_of() {
  local sum=0 p
  for p in "$@"; do
    # Fields 14 and 15 after the command name, which may hold spaces.
    if [ -r "/proc/$p/stat" ]; then sum=$((sum + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12+$13}'))); fi
  done
  echo "$sum"
}

# The helpers below are shared by the scaling end-to-end scripts
# (autoscale_e2e.sh, variants_e2e.sh, varscale_e2e.sh); they read ROOT and PY.

# replay_profile_with_memory OUT: test/data/replay_profile.json with made-up
# memory sizes (tiny_net 100, small_net 200, medium_net 400, large_net 800
# MiB), for the plans that need a memory budget.
replay_profile_with_memory() {
  "$PY" -c 'import json, sys
p = json.load(open(sys.argv[1]))
for m in p["models"]: m["memory_mb"] = {"tiny_net": 100, "small_net": 200, "medium_net": 400, "large_net": 800}[m["name"]]
p["provenance"] += " memory_mb: made up for the scaling end-to-end scripts."
json.dump(p, open(sys.argv[2], "w"))' "$ROOT/test/data/replay_profile.json" "$1"
}

# accuracy_json PROFILE OUT: each model's accuracy, as lull loadgen --accuracy reads it.
accuracy_json() {
  "$PY" -c 'import json, sys; json.dump({m["name"]: m["accuracy"] for m in json.load(open(sys.argv[1]))["models"]}, open(sys.argv[2], "w"))' \
      "$1" "$2"
}

# two_speed_kinds: the fleet scripts' two kinds of replay server, in WORK:
# fast.json (test/data/replay_profile.json as profiled), slow.json (1.5x its
# latencies; synthetic) and accuracy.json (for lull loadgen --accuracy).
two_speed_kinds() {
  cp "$ROOT/test/data/replay_profile.json" "$WORK/fast.json"
  "$PY" "$ROOT/profiles/scale_latency.py" "$WORK/fast.json" 1.5 "$WORK/slow.json"
  accuracy_json "$WORK/fast.json" "$WORK/accuracy.json"
}

# run_phases TARGET "MULT:SECONDS ..." BASE_QPS SLO_MS NAME [CMD_PREFIX...]:
# lull loadgen's Poisson load, one phase after another, each phase's report
# in WORK/phaseI.json (accuracies from WORK/accuracy.json).
run_phases() {
  local target="$1" phases="$2" base="$3" slo="$4" name="$5" i=0 phase mult secs rate
  shift 5
  for phase in $phases; do
    mult="${phase%%:*}"; secs="${phase##*:}"; rate=$((base * mult))
    "$@" "$LULL" loadgen --target "$target/predictions/image-classification" --rate "$rate" --duration "${secs}s" \
        --seed $((i + 1)) --slo-ms "$slo" --accuracy "$WORK/accuracy.json" --json "$WORK/phase$i.json" > /dev/null || true
    echo "$name: phase $i: ${rate} qps for ${secs} s done" >&2
    i=$((i + 1))
  done
}

# sample_workers TARGET FILE: once a second, "t desired starting up draining"
# from lull serve --autoscale's /metrics (run it in the background).
sample_workers() {
  local t=0
  while sleep 1; do t=$((t + 1))
    curl -s "$1/metrics" | awk -v t="$t" '/^lull_autoscale_workers\{/ { split($1, a, "\""); v[a[2]] = $2 }
      END { print t, v["desired"], v["starting"], v["up"], v["draining"] }' >> "$2" || true
  done
}

# wait_scaled_in TARGET: waits (at most 30 s) until one worker is up and none
# drains, then leaves /metrics in WORK/metrics.txt.
wait_scaled_in() {
  for _ in $(seq 1 150); do
    curl -s "$1/metrics" > "$WORK/metrics.txt"
    if grep -q '^lull_autoscale_workers{state="up"} 1$' "$WORK/metrics.txt" &&
       grep -q '^lull_autoscale_workers{state="draining"} 0$' "$WORK/metrics.txt"; then return 0; fi
    sleep 0.2
  done
}
