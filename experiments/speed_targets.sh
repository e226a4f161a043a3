#!/usr/bin/env bash
# The compiler's two speed targets, an old build and a new build alternated in
# one run (the machine's load changes by the minute, so only runs side by
# side compare):
#  1. the golden case from the RAMSIS artifact folder (9 Pareto models named,
#     SLO 150 ms, 60 workers, 2000 QPS) as a whole `lull compile` process,
#     target <= 60 ms: wall and CPU (user + sys) per process. The new build
#     runs with its profile cache warm (a private XDG_CACHE_HOME, filled by
#     one run first: the state after a user's first compile), and once cold
#     (--profile-cache off). The policy files are compared byte for byte.
#  2. `lull bench online`, 16 online compilations (K 65-100), target <= 50 ms
#     median wall.
#   usage: experiments/speed_targets.sh OLD_LULL NEW_LULL [ROUNDS (10)]
#   the artifact is read from ../shared/ramsis-artifact (ARTIFACT=... overrides)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OLD="${1:?usage: $0 OLD_LULL NEW_LULL [ROUNDS]}"; NEW="${2:?usage: $0 OLD_LULL NEW_LULL [ROUNDS]}"
ROUNDS="${3:-10}"
ART="${ARTIFACT:-$ROOT/../shared/ramsis-artifact}"
WORK="$(mktemp -d /tmp/lull-speed-targets.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
export XDG_CACHE_HOME="$WORK/cache"
M=shufflenet_v2_x0_5,mobilenet_v3_large,efficientnet_b0,efficientnet_b2,efficientnet_b3,efficientnet_b4,efficientnet_v2_s,efficientnet_v2_m,efficientnet_v2_l
GOLDEN=(--profiles "$ART/profiles/image_cloud_cpu" --accuracy-percent "$ART/image_accuracy.json" --models "$M"
        --slo-ms 150 --workers 60 --load-qps 2000)

# Appends "wall cpu" of one compile to $WORK/$1.times (bash's time: 1 ms
# resolution, where /usr/bin/time has 10 ms); the policy goes to $WORK/$1.pb.
run() {
  local tag=$1 bin=$2 TIMEFORMAT='%3R %3U %3S'; shift 2
  { time "$bin" compile "${GOLDEN[@]}" --out "$WORK/$tag.pb" "$@" >/dev/null 2>&1; } 2> "$WORK/time"
  awk '{printf "%s %.3f\n", $1, $2 + $3}' "$WORK/time" >> "$WORK/$tag.times"
}
# "median / best" of column $2 of $WORK/$1.times.
stats() {
  sort -n -k"$2" "$WORK/$1.times" | awk -v c="$2" '{v[NR]=$c} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.3f / %.3f", m, v[1]}'
}

echo "speed_targets: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(date -u '+%F %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$NEW" compile "${GOLDEN[@]}" --out "$WORK/warm.pb" >/dev/null 2>&1  # fills the cache
for _ in $(seq 1 "$ROUNDS"); do
  run old "$OLD"
  run new "$NEW"
  run cold "$NEW" --profile-cache off
done
cmp "$WORK/old.pb" "$WORK/new.pb" && cmp "$WORK/old.pb" "$WORK/cold.pb" && same="identical" || same="DIFFERENT"
echo
echo "golden case, whole process, $ROUNDS alternated runs each (policy files: $same)"
echo
echo "| build | wall s, median / best | CPU s, median / best |"
echo "|---|---:|---:|"
echo "| old | $(stats old 1) | $(stats old 2) |"
echo "| new, cache warm | $(stats new 1) | $(stats new 2) |"
echo "| new, --profile-cache off | $(stats cold 1) | $(stats cold 2) |"

"$NEW" compile --profiles "$ART/profiles/image_cloud_cpu" --accuracy-percent "$ART/image_accuracy.json" --slo-ms 150 \
  --workers 80 --load-qps 200:4000:200 --out "$WORK/w80.pb" >/dev/null 2>&1
echo
echo "online compilation (lull bench online, 16 policies, K 65-100), alternated; load at start $(cut -d' ' -f1 /proc/loadavg)"
for _ in 1 2; do
  for b in "$OLD" "$NEW"; do
    line=$("$b" bench online --policies "$WORK/w80.pb" --profiles "$ART/profiles/image_cloud_cpu" \
      --accuracy-percent "$ART/image_accuracy.json" --workers 65,70,75,100 --load-qps 2600,3000,3400,5200 | tail -1)
    echo "  $([ "$b" = "$OLD" ] && echo old || echo new): $line"
  done
done
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
