#!/usr/bin/env bash
# `lull compile` as the user waits for it: the whole process under
# /usr/bin/time, an old build and a new build side by side in one run
# (alternating, best of N), on the golden case (9 Pareto image models, SLO
# 150 ms, 60 workers, 2000 QPS) read from lull's profile JSON and from the
# RAMSIS artifact folder, and on a 20-load sweep (200:4000:200 QPS).
# The new build's last line gives its phases. Numbers: docs/benchmarks.md.
#   usage: experiments/compile_wall_time.sh OLD_LULL NEW_LULL [ROUNDS (3)]
#   the artifact is read from ../shared/ramsis-artifact (ARTIFACT=... overrides)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OLD="${1:?usage: $0 OLD_LULL NEW_LULL [ROUNDS]}"; NEW="${2:?usage: $0 OLD_LULL NEW_LULL [ROUNDS]}"
ROUNDS="${3:-3}"
ART="${ARTIFACT:-$ROOT/../shared/ramsis-artifact}"
WORK="$(mktemp -d /tmp/lull-compile-wall.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# The artifact's percent table is --accuracy-percent now (older
# builds call it --accuracy); each binary gets the spelling it knows.
acc_flag() { if "$1" compile -h 2>/dev/null | grep -q -- --accuracy-percent; then echo --accuracy-percent; else echo --accuracy; fi; }
"$NEW" profiles import --artifact "$ART/profiles/image_cloud_cpu" "$(acc_flag "$NEW")" "$ART/image_accuracy.json" \
    --task image --out "$WORK/image.json" 2>/dev/null
GOLDEN="--slo-ms 150 --workers 60"
declare -A CASES=(
  [1-golden-json]="--profiles $WORK/image.json $GOLDEN --load-qps 2000"
  [2-golden-artifact]="--profiles $ART/profiles/image_cloud_cpu ACCURACY_FLAG $ART/image_accuracy.json $GOLDEN --load-qps 2000"
  [3-sweep20-json]="--profiles $WORK/image.json $GOLDEN --load-qps 200:4000:200"
)

# Prints the wall seconds of one run; the run's stderr goes to $WORK/last.err.
wall() {
  /usr/bin/time -f "%e" -o "$WORK/time" "$1" compile ${2//ACCURACY_FLAG/$(acc_flag "$1")} --out "$WORK/out.pb" 2>"$WORK/last.err" >/dev/null
  cat "$WORK/time"
}

echo "compile_wall_time: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| case | old s (best of $ROUNDS) | new s (best of $ROUNDS) | new build's phases (best run) |"
echo "|---|---:|---:|---|"
for name in $(printf '%s\n' "${!CASES[@]}" | sort); do
  args="${CASES[$name]}"
  best_old=999; best_new=999; phases=""
  for _ in $(seq 1 "$ROUNDS"); do
    t=$(wall "$OLD" "$args"); best_old=$(echo "$t $best_old" | awk '{print ($1 < $2) ? $1 : $2}')
    t=$(wall "$NEW" "$args")
    if awk "BEGIN{exit !($t < $best_new)}"; then
      best_new=$t; phases=$(grep -o 'in [0-9.]* s (.*)' "$WORK/last.err" || true)
    fi
  done
  echo "| ${name#*-} | $best_old | $best_new | $phases |"
done
