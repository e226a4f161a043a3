#!/bin/bash
# Two SLO classes on real processes (docs/operators-guide.md): one lull
# serving both classes against two lulls sized by hand, on the same replay
# servers at the same loads. Classes: interactive (150 ms end to end, 70% of
# the load) and bulk (500 ms, 30%); kinds: "fast" (test/data/replay_profile.json
# as profiled, price 1.6/s) and "slow" (1.5x its latencies, 1.0/s).
# - one lull: `lull plan --fleet` chooses each class's cheapest kinds and
#   counts at the fleet load; `lull compile --fleet` compiles them; one
#   `lull serve --fleet-servers` serves both classes.
# - one lull with the hand counts below (the same servers as the two lulls).
# - two lulls, sized by hand: each class on its own `lull serve` (a one-class
#   fleet file), with the counts fleet_e2e.sh uses (interactive 1 fast + 2
#   slow, bulk 1 fast + 1 slow: the strict class's mix, and bulk with one of
#   each so that neither kind alone must carry it).
# Each set-up runs for FLEET2_DURATION with one `lull loadgen` per class
# (--header X-Lull-Class:NAME), and is simulated (`lull simulate`, 300 s,
# the same policy files and loads). Writes two_classes_e2e.{md,json} to
# FLEET2_OUT (default experiments/results): per set-up and class the
# expected, simulated and observed accuracy per satisfied query and
# violation, queries lost, workers, worker-seconds and cost. Checks (exit 1
# when one fails): per class nothing lost, observed violation at most
# expected + 2 points. Settings: FLEET2_LOAD (fleet QPS, default 100),
# FLEET2_DURATION (default 30s), FLEET2_RT (1: real-time priority where allowed).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
LOAD="${FLEET2_LOAD:-100}"; DURATION="${FLEET2_DURATION:-30s}"; OUT="${FLEET2_OUT:-$ROOT/experiments/results}"
WORK="$(mktemp -d)"
PIDS=()
source "$(dirname "$0")/script_support.sh"  # cleanup, wait_file, accuracy_json
trap cleanup EXIT
mkdir -p "$OUT"
# Real-time priority where allowed, as e2e.sh and fleet_e2e.sh, for their reason.
RT=()
if [ "${FLEET2_RT:-1}" = 1 ] && chrt -f 1 true 2>/dev/null; then RT=(chrt -f 1); fi
two_speed_kinds  # fast.json, slow.json, accuracy.json
# The compiled SLOs keep 10 ms for the client <-> lull hop (as e2e.sh).
COMPILE=(--percentile 100 --max-queue 8 --intervals 50)
KINDS='[{"name": "fast", "profiles": "fast.json", "price_per_s": 1.6},
         {"name": "slow", "profiles": "slow.json", "price_per_s": 1.0}]'
cat > "$WORK/plan_in.json" <<JSON
{"kinds": $KINDS, "classes": [
  {"name": "interactive", "slo_ms": 140, "share": 0.7},
  {"name": "bulk", "slo_ms": 490, "share": 0.3}]}
JSON
"$LULL" plan --fleet "$WORK/plan_in.json" --load-qps "$LOAD" "${COMPILE[@]}" --fleet-out "$WORK/one.json" \
    > "$WORK/plan.txt" 2>/dev/null
# Fleet loads 0.1x to 1.6x LOAD in 16 steps; a one-class lull compiles its class's share of them.
GRID="$("$PY" -c "print(','.join(str(round($LOAD * i / 10, 3)) for i in range(1, 17)))")"
scaled() { "$PY" -c "print(','.join(str(round(float(x) * $1, 3)) for x in '$GRID'.split(',')))"; }
"$LULL" compile --fleet "$WORK/one.json" --load-qps "$GRID" "${COMPILE[@]}" --out "$WORK/one.pb" \
    --report "$WORK/one_report.json" >/dev/null 2>&1
hand_class() {  # NAME SLO_MS WORKERS_JSON: a one-class fleet file, compiled at the class's share of the grid
  cat > "$WORK/$1.json" <<JSON
{"kinds": $KINDS, "classes": [{"name": "$1", "slo_ms": $2, "share": 1.0, "workers": $3}]}
JSON
  "$LULL" compile --fleet "$WORK/$1.json" --load-qps "$(scaled "$4")" "${COMPILE[@]}" --out "$WORK/$1.pb" \
      --report "$WORK/$1_report.json" >/dev/null 2>&1
}
hand_class interactive 140 '{"fast": 1, "slow": 2}' 0.7
hand_class bulk 490 '{"fast": 1, "slow": 1}' 0.3
# The hand counts in one lull: classes never share workers, so this serves each class as its own lull does.
cat > "$WORK/same.json" <<JSON
{"kinds": $KINDS, "classes": [
  {"name": "interactive", "slo_ms": 140, "share": 0.7, "workers": {"fast": 1, "slow": 2}},
  {"name": "bulk", "slo_ms": 490, "share": 0.3, "workers": {"fast": 1, "slow": 1}}]}
JSON
"$LULL" compile --fleet "$WORK/same.json" --load-qps "$GRID" "${COMPILE[@]}" --out "$WORK/same.pb" \
    --report "$WORK/same_report.json" >/dev/null 2>&1

# Simulation of each set-up at the same loads (300 s, seed 1).
for f in one same; do
  "$LULL" simulate --policies "$WORK/$f.pb" --load-qps "$LOAD" --duration-s 300 --latency p100 --seed 1 \
      --out "$WORK/${f}_sim.json" >/dev/null
done
"$LULL" simulate --policies "$WORK/interactive.pb" --load-qps "$("$PY" -c "print($LOAD * 0.7)")" --duration-s 300 --latency p100 \
    --seed 1 --out "$WORK/interactive_sim.json" >/dev/null
"$LULL" simulate --policies "$WORK/bulk.pb" --load-qps "$("$PY" -c "print($LOAD * 0.3)")" --duration-s 300 --latency p100 \
    --seed 1 --out "$WORK/bulk_sim.json" >/dev/null

# Replay servers: as many of each kind as the larger set-up needs, shared by both set-ups.
SEED=0
server() {  # NAME KIND
  SEED=$((SEED + 1))
  "${RT[@]}" "$PY" "$ROOT/test/modelserver/lull_modelserver.py" --replay-profile "$WORK/$2.json" --seed "$SEED" \
      --port-file "$WORK/$1.port" 2>"$WORK/$1.log" &
  PIDS+=($!)
}
for i in 0 1 2; do server "fast$i" fast; server "slow$i" slow; done
url() { wait_file "$WORK/$1.port"; echo "\"http://127.0.0.1:$(cat "$WORK/$1.port")\""; }
# servers_json CLASS FAST SLOW FIRST_FAST FIRST_SLOW: the class's servers, by kind, from the shared pool.
servers_json() {
  local out="" k n first list i
  for k in fast slow; do
    if [ "$k" = fast ]; then n=$2; first=$4; else n=$3; first=$5; fi
    [ "$n" -gt 0 ] || continue
    list=""
    for i in $(seq "$first" $((first + n - 1))); do list="$list${list:+, }$(url "$k$i")"; done
    out="$out${out:+, }\"$k\": [$list]"
  done
  echo "\"$1\": {$out}"
}
count() { "$PY" -c "import json; print(next(c for c in json.load(open('$WORK/one.json'))['classes'] if c['name'] == '$1')['workers'].get('$2', 0))"; }
IF=$(count interactive fast); IS=$(count interactive slow); BF=$(count bulk fast); BS=$(count bulk slow)
[ $((IF + BF)) -le 3 ] && [ $((IS + BS)) -le 3 ] || { echo "two_classes_e2e: the plan needs more than 3 servers of a kind" >&2; exit 1; }
echo "{$(servers_json interactive "$IF" "$IS" 0 0), $(servers_json bulk "$BF" "$BS" "$IF" "$IS")}" > "$WORK/one_servers.json"
echo "{$(servers_json interactive 1 2 0 0), $(servers_json bulk 1 1 1 2)}" > "$WORK/same_servers.json"
echo "{$(servers_json interactive 1 2 0 0)}" > "$WORK/interactive_servers.json"
echo "{$(servers_json bulk 1 1 1 2)}" > "$WORK/bulk_servers.json"

# serve NAME: `lull serve` of WORK/NAME.pb over WORK/NAME_servers.json; its port in WORK/NAME.lport.
serve() {
  "${RT[@]}" "$LULL" serve --policies "$WORK/$1.pb" --fleet-servers "$WORK/$1_servers.json" --listen 127.0.0.1:0 \
      --port-file "$WORK/$1.lport" 2>"$WORK/$1_serve.log" &
  PIDS+=($!)
  local pid=$!
  wait_serve_port "$pid" "$WORK/$1.lport" "$WORK/$1_serve.log"
  echo "$pid" > "$WORK/$1.pid"
}
# drive SETUP LULL_I LULL_B: one loadgen per class, in parallel, against those lulls.
drive() {
  local ti="http://127.0.0.1:$(cat "$WORK/$2.lport")/predictions/image-classification"
  local tb="http://127.0.0.1:$(cat "$WORK/$3.lport")/predictions/image-classification"
  for c in interactive bulk; do  # warm-up, not counted
    local t="$ti"; [ "$c" = bulk ] && t="$tb"
    "$LULL" loadgen --target "$t" --header "X-Lull-Class:$c" --rate 5 --duration 1s >/dev/null || true
  done
  "${RT[@]}" "$LULL" loadgen --target "$ti" --header X-Lull-Class:interactive --rate "$("$PY" -c "print($LOAD * 0.7)")" \
      --duration "$DURATION" --seed 1 --slo-ms 150 --accuracy "$WORK/accuracy.json" --json "$WORK/$1_interactive.json" >/dev/null &
  local a=$!
  "${RT[@]}" "$LULL" loadgen --target "$tb" --header X-Lull-Class:bulk --rate "$("$PY" -c "print($LOAD * 0.3)")" \
      --duration "$DURATION" --seed 2 --slo-ms 500 --accuracy "$WORK/accuracy.json" --json "$WORK/$1_bulk.json" >/dev/null &
  local b=$!
  wait "$a" || true
  wait "$b" || true
  curl -s "http://127.0.0.1:$(cat "$WORK/$2.lport")/metrics" > "$WORK/$1_metrics_interactive.txt"
  curl -s "http://127.0.0.1:$(cat "$WORK/$3.lport")/metrics" > "$WORK/$1_metrics_bulk.txt"
}
stop() { kill "$(cat "$WORK/$1.pid")"; wait "$(cat "$WORK/$1.pid")" 2>/dev/null || true; }
serve one
drive one one one
stop one
serve same
drive same same same
stop same
serve interactive; serve bulk
drive two interactive bulk
stop interactive; stop bulk

"$PY" - "$WORK" "$OUT" "$LOAD" "$DURATION" "${#RT[@]}" <<'PYEOF'
import json, re, sys
work, out, load, duration, rt = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5] != "0"
SHARES = {"interactive": 0.7, "bulk": 0.3}
PRICES = {"fast": 1.6, "slow": 1.0}
def routed(setup, cls, kind):
    text = open(f"{work}/{setup}_metrics_{cls}.txt").read()
    m = re.search(r'^lull_fleet_routed_queries_total\{class="%s",kind="%s"\} (\S+)$' % (cls, kind), text, re.M)
    return int(float(m.group(1))) if m else 0
setups = {"one lull, planned": ("one", {c: "one" for c in SHARES}),
          "one lull, the hand counts": ("same", {c: "same" for c in SHARES}),
          "two lulls, sized by hand": ("two", {c: c for c in SHARES})}
rows, failed = [], False
for label, (tag, files) in setups.items():
    for cls, share in SHARES.items():
        report = {c["name"]: c for c in json.load(open(f"{work}/{files[cls]}_report.json"))["classes"]}[cls]
        fleet = json.load(open(f"{work}/{files[cls]}.json"))
        workers = next(c for c in fleet["classes"] if c["name"] == cls)["workers"]
        split = next((s for s in report["splits"] if s["load_qps"] >= load * share - 1e-9), report["splits"][-1])
        sim = next(c for c in json.load(open(f"{work}/{files[cls]}_sim.json"))["classes"] if c["name"] == cls)
        got = json.load(open(f"{work}/{tag}_{cls}.json"))
        lost = got["sent"] - got["ok"]  # errors and unanswered queries alike
        row = {"setup": label, "class": cls, "workers": workers, "rate_qps": got["rate_asked"], "sent": got["sent"],
               "lost": lost, "weights": split["weights"], "routed": {k: routed(tag, cls, k) for k in workers},
               "expected_accuracy": split["expected"]["accuracy"], "expected_violation": split["expected"]["violation_rate"],
               "simulated_accuracy": sim["accuracy_per_satisfied_query"], "simulated_violation": sim["violation_rate"],
               "accuracy": got.get("accuracy_per_satisfied"), "violation": got["violation_rate"],
               "cost_per_s": sum(PRICES[k] * n for k, n in workers.items())}
        row["checks"] = {"nothing lost": lost == 0 and got["unanswered"] == 0,
                         "violation <= expected + 2 points": row["violation"] <= row["expected_violation"] + 0.02}
        for what, ok in row["checks"].items():
            if not ok:
                print(f"FAILED: {label}, {cls}: {what}")
                failed = True
        rows.append(row)
seconds = float(re.match(r"([\d.]+)s$", duration).group(1)) if re.match(r"([\d.]+)s$", duration) else None
lines = ["# Two SLO classes on real processes: one lull against two lulls sized by hand", "",
         f"`experiments/two_classes_e2e.sh` (FLEET2_LOAD={load:g}, FLEET2_DURATION={duration}). Replay servers "
         "(test/modelserver, test/data/replay_profile.json): kind `fast` as profiled (price 1.6/s), `slow` at 1.5x "
         "its latencies (1.0/s; synthetic). Classes: interactive, SLO 150 ms end to end, 70% of the load; bulk, "
         "500 ms, 30% (compiled at 140 / 490 ms: 10 ms kept for the client hop). One lull: `lull plan --fleet` "
         "chose each class's kinds and counts at the fleet load, one `lull serve` for both classes. Two lulls: each "
         "class on its own `lull serve`, counts by hand (interactive 1 fast + 2 slow, bulk 1 fast + 1 slow); and one "
         "lull with those counts. The "
         "same servers and loads for every set-up; one `lull loadgen` per class (Poisson, seeds 1 and 2). Expected: the "
         "compiled split at the class load; simulated: `lull simulate`, 300 s, seed 1, the same policy files. "
         "Accuracy per satisfied query and violation in %; routed: queries each kind got, a 1 s warm-up at 5 qps "
         "included. Servers, lull and loadgen at real-time priority: " + ("yes" if rt else "no (not allowed here)")
         + ".", "",
         "| set-up | class | workers | cost/s | worker-s | weights | routed | sent | lost | exp acc | sim acc | "
         "obs acc | exp viol | sim viol | obs viol |", "|" + "---|" * 15]
for r in rows:
    n = sum(r["workers"].values())
    ws = f"{n * seconds:g}" if seconds else "-"
    lines.append(f"| {r['setup']} | {r['class']} | " + " + ".join(f"{v} {k}" for k, v in r["workers"].items())
                 + f" | {r['cost_per_s']:.1f} | {ws} | " + ", ".join(f"{k} {w:.2f}" for k, w in r["weights"].items())
                 + " | " + ", ".join(f"{k} {v}" for k, v in r["routed"].items())
                 + f" | {r['sent']} | {r['lost']} | {100 * r['expected_accuracy']:.2f} | "
                 f"{100 * r['simulated_accuracy']:.2f} | {100 * (r['accuracy'] or 0):.2f} | "
                 f"{100 * r['expected_violation']:.3f} | {100 * r['simulated_violation']:.3f} | {100 * r['violation']:.3f} |")
for label in setups:
    mine = [r for r in rows if r["setup"] == label]
    n = sum(sum(r["workers"].values()) for r in mine)
    lines.append(f"| {label} | all | {n} | {sum(r['cost_per_s'] for r in mine):.1f} | "
                 f"{n * seconds:g} |" + " |" * 10 if seconds else f"| {label} | all | {n} | |" + " |" * 11)
def total(label, what):
    return sum(r[what] for r in rows if r["setup"] == label)
plan, hand = "one lull, planned", "two lulls, sized by hand"
n_plan = sum(sum(r["workers"].values()) for r in rows if r["setup"] == plan)
n_hand = sum(sum(r["workers"].values()) for r in rows if r["setup"] == hand)
by = {(r["setup"], r["class"]): r for r in rows}
same_gap = max(abs((by["one lull, the hand counts", c]["accuracy"] or 0) - (by[hand, c]["accuracy"] or 0)) for c in SHARES)
lines += ["", f"One lull with the hand counts serves each class as the two lulls do (observed accuracy within "
          f"{100 * same_gap:.2f} points; classes never share workers). `lull plan --fleet` sizes each class for its "
          f"own SLO over both kinds: {n_plan} workers against {n_hand} ({100 * (n_hand - n_plan) / n_hand:.0f}% fewer "
          f"worker-seconds), {total(plan, 'cost_per_s'):.1f}/s against {total(hand, 'cost_per_s'):.1f}/s. It "
          "minimizes cost under the violation target, so it spends no more on accuracy: expected accuracy "
          + ", ".join(f"{c} {100 * by[plan, c]['expected_accuracy']:.2f} against {100 * by[hand, c]['expected_accuracy']:.2f}"
                      for c in SHARES)
          + " (a class's `min_accuracy` in the fleet file holds it)."]
lines += ["", "Checks per class (nothing lost; observed violation at most expected + 2 points): "
          + ("all met." if not failed else "NOT all met (see FAILED lines).")]
open(f"{out}/two_classes_e2e.md", "w").write("\n".join(lines) + "\n")
json.dump({"load_qps": load, "duration": duration, "rows": rows}, open(f"{out}/two_classes_e2e.json", "w"), indent=1)
print("\n".join(lines))
sys.exit(1 if failed else 0)
PYEOF
