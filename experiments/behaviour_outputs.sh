#!/usr/bin/env bash
# behaviour_outputs.sh LULL OUTDIR: the files `lull compile`, `plan`, `plan
# variants` and `simulate` (fixed seeds, --autoscale, --variant-sets) write
# for the worked examples of docs/user-guide.md, with the wall-clock fields
# (wall_s, *_wall_s, the compile report's timings) dropped, so that two
# builds can be compared file by file with cmp: a refactoring that claims
# "behaviour unchanged" runs it with the old and the new binary and
# `experiments/behaviour_compare.sh OLD_DIR NEW_DIR`.
# Needs python3 (the replay profile with memory sizes, the step trace).
set -euo pipefail
LULL="$(realpath "$1")"
OUT="$2"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY=python3
source "$ROOT/experiments/script_support.sh"
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$OUT"

# Drops the keys that measure wall-clock time from a JSON file, in place.
no_wall_times() {
  "$PY" -c 'import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not (k.endswith("wall_s") or k.endswith("_seconds_wall") or k in ("timings", "seconds", "compile_s"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
p = json.load(open(sys.argv[1]))
json.dump(strip(p), open(sys.argv[1], "w"), indent=1, sort_keys=True)' "$1"
}

q() { "$LULL" "$@" >/dev/null 2>&1 || { echo "behaviour_outputs.sh: failed: lull $*" >&2; exit 1; }; }

# lull compile: the user guide's first example, and a library over 1..4 workers.
q compile --profiles "$ROOT/profiles/example-synthetic.json" --slo-ms 100 --workers 4 --load-qps 20:200:20 \
  --out compile-synthetic.pb
q compile --profiles "$ROOT/test/data/replay_profile.json" --slo-ms 70 --workers 1:4:1 --percentile 100 \
  --load-qps 5:200:5 --max-queue 8 --intervals 50 --out compile-replay-lib.pb

# lull plan: for a load, and its capacity table.
q plan --profiles "$ROOT/profiles/example-synthetic.json" --slo-ms 100 --max-violation 0.01 --load-qps 150 \
  --out plan-synthetic.json
no_wall_times plan-synthetic.json

# lull plan variants: the user guide's two examples (2 workers; 1..4 workers).
replay_profile_with_memory replay_mem.json
q plan variants --profiles replay_mem.json --all-models --percentile 100 --max-queue 8 --intervals 50 \
  --slo-ms 50 --workers 2 --load-qps 5:60:5 --max-violation 0.001 --worker-memory-mb 1100 --variants-out v2
q plan variants --profiles replay_mem.json --all-models --percentile 100 --max-queue 8 --intervals 50 \
  --slo-ms 50 --workers 1:4:1 --load-qps 5:120:5 --max-violation 0.001 --worker-memory-mb 1100 --variants-out v
for f in v2/variants.json v/variants.json; do no_wall_times "$f"; done

# lull simulate: fixed seeds; plain, failures, autoscaled, autoscaled with variants.
q simulate --policies "$ROOT/policies/example-synthetic.pb" --workers 4 --trace constant:120:30 --seed 1 \
  --out sim-constant.json
q simulate --policies "$ROOT/policies/example-synthetic.pb" --workers 4 --trace constant:150:60 --fail 3@20:20 \
  --seed 2 --out sim-fail.json
"$PY" -c 'for s in range(300): print(s, 150 if 60 <= s < 120 else 30)' > step.txt
q simulate --policies compile-replay-lib.pb --workers 1 --trace rate-file:step.txt --latency p100 --autoscale \
  --provisioning-delay fixed:5 --max-violation 0.001 --seed 3 --out sim-autoscale.json
q simulate --policies compile-replay-lib.pb --workers 2 --trace rate-file:step.txt --latency p100 --autoscale \
  --autoscale-objective price --autoscale-worker-price 40 --provisioning-delay uniform:2:8 --seed 4 \
  --out sim-autoscale-price.json
q simulate --policies v/variant-0.pb --workers 1 --trace rate-file:step.txt --latency p100 --autoscale \
  --provisioning-delay fixed:5 --max-violation 0.001 --variant-sets v/variants.json --variant-load-delay-ms 3000 \
  --seed 5 --out sim-variants.json
for f in sim-*.json; do no_wall_times "$f"; done
rm -f replay_mem.json step.txt
ls -1 | wc -l >/dev/null
