#!/usr/bin/env bash
# A mixed fleet autoscaled on Kubernetes (the ctest
# serve.fleet_kubernetes, ~20 s, loopback only): `lull serve --policies
# FLEET.pb --fleet-servers S.json --autoscale --worker-pool kubernetes
# --k8s-deployment 'models-{class}-{kind}' --k8s-service 'models-{class}-{kind}'`
# against the fake API server over TLS (test/support/fake_kube_api.py) holding
# two Deployments, one per group: interactive (140 ms, 70% of the load) on
# kind fast, bulk (490 ms, 30%) on kind slow, whose pods run as replay servers
# (slow at 1.5x the latencies); 1..3 workers per kind compiled, each group
# starting at its file count, 1, from 0 replicas. Load 20 QPS, then 120 (each
# group needs two workers for its share of 120 by its capacity table, as in
# serve.fleet_autoscale_e2e). Checks (exit 1 if any fails):
#   - each Deployment's scale PATCHes are its group's: models-interactive-fast
#     and models-bulk-slow each set to 1 first, then to 2 or more, every
#     replica count it was set to one its group's autoscaler logged
#     (--autoscale-log: start at 1, then each scale_out's target), and no
#     other Deployment touched (the fake answers 404 to any other name; every
#     API request answered 2xx);
#   - at the end each Deployment's replicas equal its group's workers up in
#     /metrics (lull_autoscale_workers{class,kind,state="up"});
#   - per class nothing lost: every query sent answered 200, none 5xx.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-fleet-kubernetes.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT
FAILED=0
fail() { echo "fleet_kubernetes: FAIL: $*" >&2; FAILED=1; }

cp "$PROFILE" "$WORK/fast.json"
"$PY" "$ROOT/profiles/scale_latency.py" "$PROFILE" 1.5 "$WORK/slow.json"
cat > "$WORK/fleet.json" <<'JSON'
{"kinds": [{"name": "fast", "profiles": "fast.json", "price_per_s": 1.6},
           {"name": "slow", "profiles": "slow.json", "price_per_s": 1.0}],
 "classes": [
  {"name": "interactive", "slo_ms": 140, "share": 0.7, "workers": {"fast": 1}},
  {"name": "bulk", "slo_ms": 490, "share": 0.3, "workers": {"slow": 1}}]}
JSON
"$LULL" compile --fleet "$WORK/fleet.json" --load-qps 10:300:10 --count-spread 2 --weight-step 0.25 \
    --percentile 100 --max-queue 8 --intervals 50 --out "$WORK/fleet.pb" > /dev/null 2>&1
echo '{}' > "$WORK/servers.json"  # every group's servers: its Deployment's pods
printf 'tok-fleet\n' > "$WORK/token"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$WORK/tls.key" -out "$WORK/ca.crt" 2> /dev/null
SERVER="$PY $ROOT/test/modelserver/lull_modelserver.py --port {port} --host {host} --replay-profile"
"$PY" "$ROOT/test/support/fake_kube_api.py" --token tok-fleet --tls-cert "$WORK/ca.crt" --tls-key "$WORK/tls.key" \
    --namespace lull --replicas 0 --port-file "$WORK/kube.port" --run-log-dir "$WORK" \
    --deployment models-interactive-fast --service models-interactive-fast --run-command "$SERVER $WORK/fast.json" \
    --deployment models-bulk-slow --service models-bulk-slow --run-command "$SERVER $WORK/slow.json" \
    2> "$WORK/kube.log" &
PIDS+=($!)
wait_file "$WORK/kube.port"
KUBE="https://127.0.0.1:$(cat "$WORK/kube.port")"
"$LULL" serve --policies "$WORK/fleet.pb" --fleet-servers "$WORK/servers.json" --autoscale \
    --worker-pool kubernetes --k8s-api-server "$KUBE" --k8s-token-file "$WORK/token" --k8s-ca-file "$WORK/ca.crt" \
    --k8s-namespace lull --k8s-deployment 'models-{class}-{kind}' --k8s-service 'models-{class}-{kind}' \
    --autoscale-forecast window_max:5 --autoscale-lead-s 2 --autoscale-envelope 1:1.5,5:1.2 \
    --autoscale-holdoff-s 60 --autoscale-log "$WORK/scale.log" \
    --listen 127.0.0.1:0 --port-file "$WORK/lull.port" 2> "$WORK/serve.log" &
SERVE=$!
PIDS+=($SERVE)
wait_serve_port "$SERVE" "$WORK/lull.port" "$WORK/serve.log"
BASE="http://127.0.0.1:$(cat "$WORK/lull.port")"
TARGET="$BASE/predictions/image-classification"

# phase NAME FLEET_QPS SECONDS: one loadgen per class at its share, side by side.
phase() {
  local name="$1" qps="$2" secs="$3" pids=() c cls share
  for c in interactive:0.7 bulk:0.3; do
    IFS=: read -r cls share <<< "$c"
    "$LULL" loadgen --target "$TARGET" --header "X-Lull-Class:$cls" --rate "$("$PY" -c "print($qps * $share)")" \
        --duration "${secs}s" --seed $((${#pids[@]} + 1)) --timeout-ms 5000 --json "$WORK/$name-$cls.json" \
        > /dev/null 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
}
phase low 20 4
phase high 120 12
# A scale-out decided at the end has its pod up: each Deployment's replicas are
# its group's workers up (15 s at most; the check below says which differs).
settled() {
  local m r u cls kind
  m=$(curl -s "$BASE/metrics")
  for ck in interactive:fast bulk:slow; do
    IFS=: read -r cls kind <<< "$ck"
    r=$(curl -s --cacert "$WORK/ca.crt" -H "Authorization: Bearer tok-fleet" \
        "$KUBE/apis/apps/v1/namespaces/lull/deployments/models-$cls-$kind/scale" |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin)["spec"]["replicas"])' 2>/dev/null) || return 1
    u=$(awk -v k="lull_autoscale_workers{class=\"$cls\",kind=\"$kind\",state=\"up\"}" '$1 == k {print $2 + 0}' <<< "$m")
    [ "$r" = "$u" ] || return 1
  done
}
for _ in $(seq 1 150); do settled && break; sleep 0.1; done
curl -s "$BASE/metrics" > "$WORK/metrics.txt"
curl -s --cacert "$WORK/ca.crt" "$KUBE/_fake/log" > "$WORK/api.log"
curl -s --cacert "$WORK/ca.crt" "$KUBE/_fake/answers" > "$WORK/answers.txt"
for dep in models-interactive-fast models-bulk-slow; do
  curl -s --cacert "$WORK/ca.crt" -H "Authorization: Bearer tok-fleet" \
      "$KUBE/apis/apps/v1/namespaces/lull/deployments/$dep/scale" > "$WORK/$dep.scale"
done

"$PY" - "$WORK" <<'PYEOF' || FAILED=1
import json, re, sys
work = sys.argv[1]
failed = []
def check(ok, what):
    print("fleet_kubernetes: %s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failed.append(what)
api = open(f"{work}/api.log").read().splitlines()
answers = open(f"{work}/answers.txt").read().splitlines()
scale_log = open(f"{work}/scale.log").read()
metrics = open(f"{work}/metrics.txt").read()
check(answers and all(a[:1] == "2" for a in answers), "every API request answered 2xx (%d)" % len(answers))
patched = {}
for line in api:
    m = re.match(r"PATCH /apis/apps/v1/namespaces/lull/deployments/([^/]+)/scale\|[^|]*\|(.*)$", line)
    if m:
        patched.setdefault(m.group(1), []).append(json.loads(m.group(2))["spec"]["replicas"])
check(sorted(patched) == ["models-bulk-slow", "models-interactive-fast"],
      "scale PATCHes to the groups' Deployments only: %s" % sorted(patched))
for cls, kind in (("interactive", "fast"), ("bulk", "slow")):
    dep, g = f"models-{cls}-{kind}", f"class '{cls}', kind '{kind}'"
    counts = patched.get(dep, [])
    check(counts[:1] == [1] and max(counts, default=0) >= 2, f"{dep} set to 1, then 2 or more: {counts}")
    # A scale-out of +N asks for the pods there are (up, starting, draining, out of rotation) + N.
    logged = {1} | {sum(int(x or 0) for x in m) for m in re.findall(
        re.escape(g) + r": autoscale t=\S+ scale_out \+(\d+) reason=\S+ need=\d+ up=(\d+) starting=(\d+) "
        r"draining=(\d+)(?: out_of_rotation=(\d+))?", scale_log)}
    check(set(counts) <= logged, f"{dep}'s replica counts {sorted(set(counts))} are {g}'s logged ones {sorted(logged)}")
    replicas = json.load(open(f"{work}/{dep}.scale"))["spec"]["replicas"]
    m = re.search(r'lull_autoscale_workers\{class="%s",kind="%s",state="up"\} (\S+)' % (cls, kind), metrics)
    up = float(m.group(1)) if m else -1
    check(replicas == up, f"{dep}: {replicas} replicas, {g}: {up:g} workers up")
    sent = ok = bad = 0
    for phase in ("low", "high"):
        r = json.load(open(f"{work}/{phase}-{cls}.json"))
        sent += r["sent"]; ok += r["ok"]; bad += r["http_5xx"] + r["unanswered"]
    check(sent > 0 and sent == ok and bad == 0, f"{cls}: nothing lost ({ok} of {sent} answered 200)")
sys.exit(1 if failed else 0)
PYEOF
if [ "$FAILED" = 1 ]; then
  echo "--- serve.log"; tail -30 "$WORK/serve.log"; echo "--- scale.log"; cat "$WORK/scale.log"
  echo "--- kube.log"; tail -10 "$WORK/kube.log"
  exit 1
fi
echo "fleet_kubernetes: pass"
