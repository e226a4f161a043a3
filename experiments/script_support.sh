# Shell helpers shared by the experiment scripts that start processes
# (e2e.sh, autoscale_e2e.sh, variants_e2e.sh, soak.sh, serve_overhead.sh,
# prometheus_check.sh): source it after setting PIDS (the processes to kill)
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
