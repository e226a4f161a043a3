#!/usr/bin/env bash
# The Examples section of `lull help CMD` for compile, simulate, plan and serve runs as written from
# the repository root (ctest cli.help_examples), with its files in a scratch folder instead of /tmp
# and free ports instead of 8080 (the model server) and 8070 (lull): each command exits 0, a
# background one (lull serve, the stand-in) is stopped at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LULL="${LULL:-$ROOT/build/lull}"
PY=/usr/bin/python3
WORK="$(mktemp -d /tmp/lull-help-examples.XXXXXX)"
PIDS=()
source "$ROOT/experiments/script_support.sh"  # cleanup
trap cleanup EXIT
mkdir "$WORK/bin"
ln -s "$LULL" "$WORK/bin/lull"
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
FAILED=0
COUNT=0
for cmd in compile simulate plan serve; do
  "$LULL" help $cmd > "$WORK/$cmd.help"
  examples=$(awk '/^Examples/{on=1; next} on && /^$/{exit} on {sub(/^  /, ""); print}' "$WORK/$cmd.help")
  n=$(grep -cv '^#' <<<"$examples" || true)
  if [ "$n" = 0 ]; then echo "help_examples: FAIL: lull help $cmd has no Examples section" >&2; FAILED=1; continue; fi
  COUNT=$((COUNT + n))
  # lull serve listens on 8070 by default: it gets --listen with the free port the example's URLs name.
  ms=$(free_port)
  lp=$(free_port)
  script=$(sed -E -e "s|/tmp/|$WORK/|g" -e "s|\b8080\b|$ms|g" -e "s|\b8070\b|$lp|g" \
      -e "s|^(lull serve .*)( &)$|\1 --listen 127.0.0.1:$lp\2|" <<<"$examples")
  rc=0
  (cd "$ROOT" && PATH="$WORK/bin:$PATH" timeout 120 bash -euo pipefail -c "$script"$'\nkill $(jobs -p) 2>/dev/null || true; wait') \
      > "$WORK/$cmd.out" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    echo "help_examples: FAIL: lull help $cmd: the examples exited $rc:" >&2
    cat "$WORK/$cmd.out" >&2
    FAILED=1
  fi
done
grep -q '"class"' "$WORK/serve.out" 2>/dev/null || { echo "help_examples: FAIL: serve's example answered no prediction" >&2; FAILED=1; }
[ "$FAILED" = 0 ] && echo "help_examples: ok ($COUNT example commands in compile, simulate, plan, serve)"
exit "$FAILED"
