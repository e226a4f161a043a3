#!/usr/bin/env bash
# A lull shard autoscaling on Kubernetes (the ctest
# serve.shard_kubernetes, ~10 s, loopback only): `lull serve --shard 1/2
# --autoscale --worker-pool kubernetes --k8s-deployment 'models-{shard}'
# --k8s-service 'models-{shard}'` against the fake API server over TLS
# (test/support/fake_kube_api.py), whose Deployment and Service are shard 1's,
# models-1, and whose pods run as latency-replay servers. Checks (exit 1 if
# any fails):
#   - the shard scales models-1 (a PATCH of its scale subresource) and serves
#     through its pod: 20 queries, all answered 200;
#   - every API request it sent was answered 2xx (the fake answers 404 to any
#     other Deployment or Service, so {shard} was replaced by 1);
#   - /metrics carries lull_shard_info{shard="1/2"} 1.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
PROFILE="$ROOT/test/data/replay_profile.json"
WORK="$(mktemp -d /tmp/lull-shard-kubernetes.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup, wait_file
trap cleanup EXIT
FAILED=0
fail() { echo "shard_kubernetes: FAIL: $*" >&2; FAILED=1; }

"$LULL" compile --profiles "$PROFILE" --slo-ms 70 --workers 2:4:2 --percentile 100 --load-qps 10:100:10 \
    --max-queue 8 --intervals 50 --out "$WORK/library.pb" > /dev/null 2>&1
printf 'tok-shard\n' > "$WORK/token"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$WORK/tls.key" -out "$WORK/ca.crt" 2> /dev/null
"$PY" "$ROOT/test/support/fake_kube_api.py" --token tok-shard --tls-cert "$WORK/ca.crt" --tls-key "$WORK/tls.key" \
    --namespace lull --deployment models-1 --service models-1 --replicas 0 --port-file "$WORK/kube.port" \
    --run-command "$PY $ROOT/test/modelserver/lull_modelserver.py --replay-profile $PROFILE --port {port} --host {host}" \
    --run-log-dir "$WORK" 2> "$WORK/kube.log" &
PIDS+=($!)
wait_file "$WORK/kube.port"
KUBE="https://127.0.0.1:$(cat "$WORK/kube.port")"
"$LULL" serve --policies "$WORK/library.pb" --shard 1/2 --listen 127.0.0.1:0 --port-file "$WORK/lull.port" \
    --autoscale --worker-pool kubernetes --k8s-api-server "$KUBE" --k8s-token-file "$WORK/token" \
    --k8s-ca-file "$WORK/ca.crt" --k8s-namespace lull --k8s-deployment 'models-{shard}' \
    --k8s-service 'models-{shard}' 2> "$WORK/serve.log" &
PIDS+=($!)
wait_file "$WORK/lull.port"
URL="http://127.0.0.1:$(cat "$WORK/lull.port")"
"$LULL" loadgen --target "$URL/predictions/image-classification" --rate 10 --duration 2s --seed 1 \
    --timeout-ms 5000 --json "$WORK/load.json" > /dev/null 2>&1 || fail "lull loadgen failed"
read -r SENT OK <<<"$("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["sent"], r["ok"])' "$WORK/load.json")"
[ "$SENT" -ge 15 ] && [ "$SENT" = "$OK" ] || fail "$OK of $SENT queries answered 200"
curl -s "$URL/metrics" > "$WORK/metrics.txt"  # whole: grep -q would end curl early (pipefail)
grep -q '^lull_shard_info{shard="1/2"} 1$' "$WORK/metrics.txt" || fail 'no lull_shard_info{shard="1/2"} 1'
curl -s --cacert "$WORK/ca.crt" "$KUBE/_fake/answers" > "$WORK/answers.txt"
grep -q "^2[0-9][0-9] PATCH /apis/apps/v1/namespaces/lull/deployments/models-1/scale" "$WORK/answers.txt" ||
  fail "no PATCH of Deployment models-1's scale"
NOT_2XX=$(grep -v '^2[0-9][0-9] ' "$WORK/answers.txt" || true)
[ -z "$NOT_2XX" ] || fail "API requests not answered 2xx: $NOT_2XX"
echo "shard_kubernetes: $OK of $SENT answered; $(wc -l < "$WORK/answers.txt") API requests, all 2xx"
if [ "$FAILED" = 1 ]; then
  echo "--- serve.log"; tail -20 "$WORK/serve.log"; echo "--- answers"; head -20 "$WORK/answers.txt"
  exit 1
fi
echo "shard_kubernetes: pass"
